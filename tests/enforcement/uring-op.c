/* SPDX-License-Identifier: Apache-2.0 */
/* uring-op OP PATH [PATH2]: one file operation submitted through io_uring
 * instead of its system call, for the attack table (ATTACKS.md #8):
 *
 *   write PATH        IORING_OP_OPENAT (O_WRONLY|O_APPEND), then "forged\n"
 *   unlink PATH       IORING_OP_UNLINKAT
 *   rmdir PATH        IORING_OP_UNLINKAT with AT_REMOVEDIR
 *   rename OLD NEW    IORING_OP_RENAMEAT
 *
 * Prints "uring_OP: OK" or "uring_OP: ERRNO-NAME" and exits 0 or 1; 2 when
 * io_uring itself cannot be used here (then the row proves nothing, and
 * the suite checks for that before relying on it). Raw system calls and
 * the kernel's UAPI header only: no liburing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
  int fd;
  unsigned *sq_tail, *sq_mask, *sq_array;
  unsigned *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
} Ring;

static const char *errno_name(int e) {
  switch (e) {
  case EACCES:
    return "EACCES";
  case EPERM:
    return "EPERM";
  case EROFS:
    return "EROFS";
  case EBUSY:
    return "EBUSY";
  case ENOENT:
    return "ENOENT";
  case EXDEV:
    return "EXDEV";
  case EINVAL:
    return "EINVAL";
  case ENOSYS:
    return "ENOSYS";
  default:
    return strerror(e);
  }
}

static int ring_setup(Ring *r) {
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
  if (r->fd < 0) {
    return -errno;
  }
  size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  bool single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single && cq_size > sq_size) {
    sq_size = cq_size;
  }
  uint8_t *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                     IORING_OFF_SQ_RING);
  if (sq == MAP_FAILED) {
    return -errno;
  }
  uint8_t *cq = sq;
  if (!single) {
    cq = mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
              IORING_OFF_CQ_RING);
    if (cq == MAP_FAILED) {
      return -errno;
    }
  }
  r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  if (r->sqes == MAP_FAILED) {
    return -errno;
  }
  r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
  r->sq_array = (unsigned *)(sq + p.sq_off.array);
  r->cq_head = (unsigned *)(cq + p.cq_off.head);
  r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
  return 0;
}

/* Submits `sqe` and waits for its completion: its result (a negative
 * errno on failure), or a negative errno when io_uring_enter fails. */
static int ring_run(Ring *r, const struct io_uring_sqe *sqe) {
  unsigned tail = *r->sq_tail;
  unsigned idx = tail & *r->sq_mask;
  r->sqes[idx] = *sqe;
  r->sq_array[idx] = idx;
  __atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
  if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
    return -errno;
  }
  unsigned head = *r->cq_head;
  if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
    return -EAGAIN;
  }
  int res = r->cqes[head & *r->cq_mask].res;
  __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
  return res;
}

static int report(const char *op, int res) {
  if (res < 0) {
    printf("uring_%s: %s\n", op, errno_name(-res));
    return 1;
  }
  printf("uring_%s: OK\n", op);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "rename") == 0 && argc < 4)) {
    fprintf(stderr, "usage: %s write|unlink|rmdir PATH | rename OLD NEW\n", argv[0]);
    return 2;
  }
  const char *op = argv[1];
  Ring r;
  int e = ring_setup(&r);
  if (e < 0) {
    printf("uring_setup: %s\n", errno_name(-e));
    return 2;
  }
  struct io_uring_sqe sqe;
  memset(&sqe, 0, sizeof(sqe));
  sqe.fd = AT_FDCWD;
  sqe.addr = (uint64_t)(uintptr_t)argv[2];
  if (strcmp(op, "write") == 0) {
    sqe.opcode = IORING_OP_OPENAT;
    sqe.open_flags = O_WRONLY | O_APPEND | O_CLOEXEC;
    int fd = ring_run(&r, &sqe);
    if (fd < 0) {
      return report(op, fd);
    }
    static const char forged[] = "forged\n";
    return report(op, write(fd, forged, sizeof(forged) - 1) < 0 ? -errno : 0);
  }
  if (strcmp(op, "unlink") == 0 || strcmp(op, "rmdir") == 0) {
    sqe.opcode = IORING_OP_UNLINKAT;
    sqe.unlink_flags = strcmp(op, "rmdir") == 0 ? AT_REMOVEDIR : 0;
    return report(op, ring_run(&r, &sqe));
  }
  if (strcmp(op, "rename") == 0) {
    sqe.opcode = IORING_OP_RENAMEAT;
    sqe.len = (uint32_t)AT_FDCWD;
    sqe.addr2 = (uint64_t)(uintptr_t)argv[3];
    return report(op, ring_run(&r, &sqe));
  }
  fprintf(stderr, "uring-op: unknown operation %s\n", op);
  return 2;
}
