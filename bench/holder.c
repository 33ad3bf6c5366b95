/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark 6's load for `ralon pause`: a process of the sandbox holding
 * FDS open descriptors and THREADS threads (itself included), which marks
 * itself ready by creating READY, then sleeps until killed.
 *
 *   holder FDS THREADS READY
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sleeper(void *arg) {
  (void)arg;
  for (;;) {
    pause();
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: holder FDS THREADS READY\n");
    return 2;
  }
  long fds = atol(argv[1]), threads = atol(argv[2]);
  for (long i = 0; i < fds; i++) {
    if (open("/dev/null", O_RDONLY) < 0) {
      perror("holder: open");
      return 1;
    }
  }
  for (long i = 1; i < threads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) != 0) {
      fprintf(stderr, "holder: cannot start a thread\n");
      return 1;
    }
  }
  int fd = open(argv[3], O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    perror("holder: ready");
    return 1;
  }
  close(fd);
  for (;;) {
    pause();
  }
}
