/* SPDX-License-Identifier: Apache-2.0 */
/* PID 1 of the mount backend's sandbox (pid1.h).
 *
 * It reaps what is orphaned in the sandbox, and ends (and with it every
 * process of the namespace) when the guard does. While the sandbox is
 * frozen it also watches it: a process there woken by the kernel (a
 * timer, a file notification sending SIGCONT) would run while the user
 * changes protected files, or while a stopped guard watches nothing, so
 * PID 1 then ends, and the kernel ends the namespace with it. Nothing
 * inside can stop or kill PID 1: the kernel drops a signal sent from the
 * namespace to its init whose action there is the default
 * (SIGNAL_UNKILLABLE), as SIGKILL's and SIGSTOP's always are, and PID 1
 * sets no handler; every other signal it also blocks (SIGCHLD read from a
 * signalfd), so none acts on it.
 *
 * The guard talks to it on its socket:
 *   "P" + the sandbox's /proc and mount namespace: held (so that the
 *       guard's exit does not free them), /proc read while watching;
 *   "W" + the frozen state (pid1_snapshot()): watch it, every
 *       INIT_WATCH_MS;
 *   "U": stop watching, answered "u" (before the guard thaws it);
 *   "K": the command has ended, and so does everything it left behind,
 *       as the kernel would end it with PID 1 (kill(-1) from PID 1 reaches
 *       every other process of the namespace, and what is orphaned is
 *       reparented here until none is left); answered "k", then it waits
 *       for the guard to hang up, holding what "P" handed it. Its exit
 *       frees the namespaces (a mount namespace's end waits for an RCU
 *       grace period) while the guard closes its own descriptors; the
 *       guard then waits for it, so that nothing of the session outlives
 *       `ralon run`;
 *   "E": nothing but PID 1 is left: it waits, as after "k", for the
 *       guard to hang up.
 * It ends when the guard hangs up.
 *
 * Where it shares the guard's memory (pid1_start()), everything it runs
 * is in this file, compiled without sanitizers (their run-time state is
 * the guard's thread's) and, where the compiler can leave it out (GCC 11,
 * clang 11), without the stack protector (whose canary is read from the
 * guard's thread-local storage, and whose failure calls the C library),
 * and calls the kernel directly: a C library call could write errno,
 * which is the guard's, while the guard reads it. (Where the stack
 * protector stays, PID 1 reads the guard's canary, which is harmless,
 * and a smashed stack of its would end in __stack_chk_fail(3).) */
#include "enforce/linux/pid1.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* How often PID 1 looks at a frozen sandbox. */
#define INIT_WATCH_MS 5
/* PID 1's own stack. */
#define PID1_STACK (64u * 1024u)

/* Valgrind's header, where it was there at build time (pid1_under_valgrind()). */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define PID1_UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef PID1_UNDER_VALGRIND
#define PID1_UNDER_VALGRIND() false
#endif

bool pid1_under_valgrind(void) {
  return PID1_UNDER_VALGRIND();
}

/* Code that PID 1 runs: never instrumented (a sanitizer's state is per
 * thread, and PID 1 would share the guard's), and kept out of line so
 * that none of it is inlined into code that is. */
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define P1_NO_STACK_PROTECTOR __attribute__((no_stack_protector))
#endif
#endif
#ifndef P1_NO_STACK_PROTECTOR
#define P1_NO_STACK_PROTECTOR
#endif
#define P1 __attribute__((no_sanitize("address", "undefined"), noinline)) P1_NO_STACK_PROTECTOR static

/* ---- the kernel, called directly ---------------------------------------
 * Each returns what the system call does, -errno on failure; none writes
 * errno where PID 1 shares the guard's memory. */

#ifdef PID1_SHARES_MEMORY
P1 long p1_syscall(long n, long a, long b, long c, long d, long e) {
#if defined(__x86_64__)
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
#else /* __aarch64__ */
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
#endif
}
#define SYS5(n, a, b, c, d, e) \
  p1_syscall((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))
#else
/* A process of its own (fork(2)): the C library's errno is its own. */
static long p1_result(long r) {
  return r < 0 ? -errno : r;
}
#define SYS5(n, a, b, c, d, e) \
  p1_result(syscall((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e)))
#endif

P1 int p1_openat(int dir, const char *path, int flags) {
  return (int)SYS5(SYS_openat, dir, path, flags | O_CLOEXEC, 0, 0);
}

P1 void p1_close(int fd) {
  (void)SYS5(SYS_close, fd, 0, 0, 0, 0);
}

P1 long p1_read(int fd, void *buf, size_t size) {
  return SYS5(SYS_read, fd, buf, size, 0, 0);
}

P1 long p1_getdents(int fd, void *buf, size_t size) {
  return SYS5(SYS_getdents64, fd, buf, size, 0, 0);
}

ATTR_NORETURN P1 void p1_exit(int status) {
#ifdef PID1_SHARES_MEMORY
  for (;;) {
    (void)SYS5(SYS_exit_group, status, 0, 0, 0, 0);
  }
#else
  _exit(status);
#endif
}

/* poll(2) for `ms` milliseconds, or for ever (-1). */
P1 int p1_poll(struct pollfd *pf, nfds_t n, int ms) {
#ifdef PID1_SHARES_MEMORY
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  /* The kernel's and this ABI's timespec agree on both architectures. */
  return (int)SYS5(SYS_ppoll, pf, n, ms < 0 ? NULL : &ts, NULL, 0);
#else
  int r = poll(pf, n, ms);
  return r < 0 ? -errno : r;
#endif
}

/* Every signal blocked; a descriptor that reads SIGCHLD, or -errno. */
P1 int p1_signals(void) {
#ifdef PID1_SHARES_MEMORY
  /* The kernel's sigset_t on both architectures: 64 bits. */
  unsigned long all = ~0UL, chld = 1UL << (SIGCHLD - 1);
  (void)SYS5(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof(all), 0);
  return (int)SYS5(SYS_signalfd4, -1, &chld, sizeof(chld), SFD_CLOEXEC | SFD_NONBLOCK, 0);
#else
  sigset_t all, chld;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  return fd < 0 ? -errno : fd;
#endif
}

/* Reaps one child: its pid, 0 when none has ended (with WNOHANG), or
 * -errno (-ECHILD: there is none). */
P1 long p1_reap(int options) {
  siginfo_t si;
  si.si_pid = 0;
#ifdef PID1_SHARES_MEMORY
  long r = SYS5(SYS_waitid, P_ALL, 0, &si, WEXITED | __WALL | options, NULL);
#else
  long r = waitid(P_ALL, 0, &si, WEXITED | __WALL | options) < 0 ? -errno : 0;
#endif
  return r < 0 ? r : si.si_pid;
}

P1 long p1_send(int sock, const char *msg, size_t len) {
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  long r;
  do {
    r = SYS5(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL, 0, 0);
  } while (r == -EINTR);
  return r;
}

/* Receives one message into buf (NUL-terminated, `size` with the NUL)
 * and up to `max_fds` descriptors (more are closed; *n_fds says how many
 * were kept). Its length, 0 at the end, or -errno. */
P1 long p1_recv(int sock, char *buf, size_t size, int *fds, size_t max_fds, size_t *n_fds) {
  struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                      .msg_controllen = sizeof(ctl.buf)};
  long n;
  do {
    n = SYS5(SYS_recvmsg, sock, &mh, MSG_CMSG_CLOEXEC, 0, 0);
  } while (n == -EINTR);
  *n_fds = 0;
  if (n < 0) {
    return n;
  }
  buf[n] = '\0';
  /* CMSG_NXTHDR may be a call into the C library: walked by hand. */
  size_t off = 0;
  while (off + sizeof(struct cmsghdr) <= mh.msg_controllen) {
    struct cmsghdr *cm = (struct cmsghdr *)(void *)(ctl.buf + off);
    if (cm->cmsg_len < CMSG_LEN(0) || off + cm->cmsg_len > mh.msg_controllen) {
      break;
    }
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const int *got = (const int *)(void *)CMSG_DATA(cm);
      for (size_t i = 0; i < k; i++) {
        if (*n_fds < max_fds) {
          fds[(*n_fds)++] = got[i];
        } else {
          p1_close(got[i]);
        }
      }
    }
    off += CMSG_ALIGN(cm->cmsg_len);
  }
  return n;
}

/* ---- the frozen sandbox's state ---------------------------------------- */

/* What getdents64(2) writes: records aligned for their 64-bit fields,
 * read in place, so the buffers start aligned for them too. */
struct p1_dirent {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

typedef struct {
  _Alignas(struct p1_dirent) char procs[8192];
  _Alignas(struct p1_dirent) char tasks[4096];
  char status[4096];
} SnapshotScratch;

/* One line of the state; false stops the walk. */
typedef bool (*LineFn)(const char *line, size_t len, void *userdata);

P1 bool p1_is_number(const char *s) {
  if (*s == '\0') {
    return false;
  }
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') {
      return false;
    }
  }
  return true;
}

/* Appends s (at most max bytes of it) at out + *len. */
P1 void p1_append(char *out, size_t *len, const char *s, size_t max) {
  for (size_t i = 0; s[i] != '\0' && i < max; i++) {
    out[(*len)++] = s[i];
  }
}

P1 void p1_append_number(char *out, size_t *len, unsigned long v) {
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) {
    out[(*len)++] = digits[--n];
  }
}

/* Where `needle` starts in `hay`, or NULL. */
P1 const char *p1_find(const char *hay, const char *needle) {
  for (; *hay != '\0'; hay++) {
    size_t i = 0;
    while (needle[i] != '\0' && hay[i] == needle[i]) {
      i++;
    }
    if (needle[i] == '\0') {
      return hay;
    }
  }
  return NULL;
}

/* The number after `field` in a status file's text, as strtoul(3) reads
 * it (blanks skipped), or 0 where the field is not. */
P1 unsigned long p1_field_number(const char *status, const char *field) {
  const char *p = p1_find(status, field);
  if (p == NULL) {
    return 0;
  }
  while (*p != '\0' && *p != ':') {
    p++;
  }
  if (*p == ':') {
    p++;
  }
  while (*p == ' ' || *p == '\t') {
    p++;
  }
  unsigned long v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (unsigned long)(*p - '0');
  }
  return v;
}

/* The line of thread `tid` of process `pid` (its task directory `tasks`). */
P1 size_t p1_task_line(int tasks, const char *pid, const char *tid, char *status, size_t size,
                       char *line) {
  char path[64];
  size_t plen = 0;
  p1_append(path, &plen, tid, 32);
  p1_append(path, &plen, "/status", 8);
  path[plen] = '\0';
  int fd = p1_openat(tasks, path, O_RDONLY);
  long n = fd < 0 ? -1 : p1_read(fd, status, size - 1);
  if (fd >= 0) {
    p1_close(fd);
  }
  size_t len = 0;
  p1_append(line, &len, pid, 32);
  line[len++] = '/';
  p1_append(line, &len, tid, 32);
  if (n <= 0) {
    p1_append(line, &len, " gone\n", 8);
    return len;
  }
  status[n] = '\0';
  const char *state = p1_find(status, "\nState:\t");
  line[len++] = ' ';
  line[len++] = state != NULL ? state[8] : '?';
  line[len++] = ' ';
  p1_append_number(line, &len, p1_field_number(status, "\nvoluntary_ctxt_switches:"));
  line[len++] = ' ';
  p1_append_number(line, &len, p1_field_number(status, "\nnonvoluntary_ctxt_switches:"));
  line[len++] = '\n';
  return len;
}

/* Calls fn with each line of the state: 0 when every line was seen, 1
 * when fn stopped the walk, -1 when the /proc cannot be listed. */
P1 int p1_snapshot_walk(int proc_fd, SnapshotScratch *s, LineFn fn, void *userdata) {
  int dir = p1_openat(proc_fd, ".", O_RDONLY | O_DIRECTORY);
  if (dir < 0) {
    return -1;
  }
  int r = 0;
  for (;;) {
    long got = p1_getdents(dir, s->procs, sizeof(s->procs));
    if (got <= 0) {
      r = got < 0 ? -1 : 0;
      break;
    }
    for (long off = 0; off < got && r == 0;) {
      const struct p1_dirent *de = (const void *)(s->procs + off);
      off += de->d_reclen;
      const char *pid = de->d_name;
      if (!p1_is_number(pid) || (pid[0] == '1' && pid[1] == '\0')) {
        continue;
      }
      int pfd = p1_openat(dir, pid, O_RDONLY | O_DIRECTORY);
      if (pfd < 0) {
        continue; /* gone */
      }
      int tasks = p1_openat(pfd, "task", O_RDONLY | O_DIRECTORY);
      p1_close(pfd);
      if (tasks < 0) {
        continue;
      }
      long tgot;
      while (r == 0 && (tgot = p1_getdents(tasks, s->tasks, sizeof(s->tasks))) > 0) {
        for (long toff = 0; toff < tgot && r == 0;) {
          const struct p1_dirent *te = (const void *)(s->tasks + toff);
          toff += te->d_reclen;
          if (!p1_is_number(te->d_name)) {
            continue;
          }
          char line[128];
          size_t len = p1_task_line(tasks, pid, te->d_name, s->status, sizeof(s->status), line);
          if (!fn(line, len, userdata)) {
            r = 1;
          }
        }
      }
      p1_close(tasks);
    }
  }
  p1_close(dir);
  return r;
}

typedef struct {
  const char *before;
  size_t at;
} Compare;

P1 bool p1_compare_line(const char *line, size_t len, void *userdata) {
  Compare *c = userdata;
  for (size_t i = 0; i < len; i++) {
    /* The NUL that ends `before` differs from every byte of a line. */
    if (c->before[c->at + i] != line[i]) {
      return false;
    }
  }
  c->at += len;
  return true;
}

P1 bool p1_snapshot_same(int proc_fd, SnapshotScratch *s, const char *before) {
  Compare c = {before, 0};
  return p1_snapshot_walk(proc_fd, s, p1_compare_line, &c) == 0 && before[c.at] == '\0';
}

static bool write_line(const char *line, size_t len, void *userdata) {
  return fwrite(line, 1, len, userdata) == len;
}

int pid1_snapshot(int proc_fd, FILE *out) {
  _cleanup_free_ SnapshotScratch *s = xmalloc(sizeof(*s));
  return p1_snapshot_walk(proc_fd, s, write_line, out) < 0 ? -1 : 0;
}

bool pid1_snapshot_unchanged(int proc_fd, const char *before) {
  _cleanup_free_ SnapshotScratch *s = xmalloc(sizeof(*s));
  return before != NULL && p1_snapshot_same(proc_fd, s, before);
}

/* ---- PID 1 ------------------------------------------------------------- */

/* What pid1_start() maps for PID 1, above its stack. */
typedef struct {
  int sock;
  SnapshotScratch scratch;
  char msgs[2][PID1_MSG_MAX];
} Pid1Memory;

/* The getdents64(2) buffers, wherever the scratch is (mapped for PID 1
 * after an int, or allocated), start where a record may be read. */
_Static_assert(offsetof(Pid1Memory, scratch.procs) % _Alignof(struct p1_dirent) == 0,
               "PID 1's getdents buffer for /proc is misaligned");
_Static_assert(offsetof(Pid1Memory, scratch.tasks) % _Alignof(struct p1_dirent) == 0,
               "PID 1's getdents buffer for tasks is misaligned");
_Static_assert(offsetof(SnapshotScratch, tasks) % _Alignof(struct p1_dirent) == 0,
               "the getdents buffer for tasks is misaligned");
_Static_assert(_Alignof(SnapshotScratch) >= _Alignof(struct p1_dirent),
               "the snapshot's scratch is not aligned for getdents records");

ATTR_NORETURN P1 void p1_end(int sock, char *buf) {
  (void)SYS5(SYS_kill, -1, SIGKILL, 0, 0, 0);
  long r;
  while ((r = p1_reap(0)) >= 0 || r == -EINTR) {
  }
  if (r != -ECHILD || p1_send(sock, "k", 1) < 0) {
    p1_exit(1);
  }
  int fds[2];
  size_t n_fds;
  while (p1_recv(sock, buf, PID1_MSG_MAX, fds, 0, &n_fds) > 0) {
  }
  p1_exit(0);
}

ATTR_NORETURN P1 void p1_main(Pid1Memory *m) {
  int sock = m->sock;
  (void)SYS5(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Only its socket, and what the guard hands it. */
  if (sock > 0) {
    (void)SYS5(SYS_close_range, 0, sock - 1, 0, 0, 0);
  }
  (void)SYS5(SYS_close_range, sock + 1, ~0U, 0, 0, 0);
  int sfd = p1_signals();
  int proc_fd = -1;
  /* One buffer receives; the other holds the state being watched. */
  char *buf = m->msgs[0];
  const char *watching = NULL;
  for (;;) {
    struct pollfd pf[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    int r = p1_poll(pf, sfd >= 0 ? 2 : 1, watching != NULL ? INIT_WATCH_MS : sfd >= 0 ? -1 : 1000);
    if (r < 0 && r != -EINTR) {
      p1_exit(1);
    }
    if (r > 0 && pf[0].revents != 0) {
      int fds[2];
      size_t n_fds = 0;
      long n = p1_recv(sock, buf, PID1_MSG_MAX, fds, ELEMENTSOF(fds), &n_fds);
      if (n <= 0) {
        p1_exit(0); /* the guard is gone */
      }
      if (buf[0] == 'P' && n_fds == ELEMENTSOF(fds)) {
        /* The sandbox's /proc, and its mount namespace, held so that the
         * guard's exit does not free it. */
        proc_fd = fds[0];
      } else if (buf[0] == 'K') {
        p1_end(sock, buf);
      } else if (buf[0] == 'E') {
        /* Nothing to do but wait for the guard to hang up. */
      } else if (buf[0] == 'W') {
        watching = buf + 1;
        buf = buf == m->msgs[0] ? m->msgs[1] : m->msgs[0];
      } else if (buf[0] == 'U') {
        watching = NULL;
        (void)p1_send(sock, "u", 1);
      }
    }
    if (watching != NULL && (proc_fd < 0 || !p1_snapshot_same(proc_fd, &m->scratch, watching))) {
      p1_exit(3); /* something ran: the namespace ends with its PID 1 */
    }
    struct signalfd_siginfo si;
    while (sfd >= 0 && p1_read(sfd, &si, sizeof(si)) > 0) {
    }
    while (p1_reap(WNOHANG) > 0) {
    }
  }
}

#ifdef PID1_SHARES_MEMORY
P1 int p1_clone_main(void *arg) {
  p1_main(arg);
}
#endif

pid_t pid1_start(int sock) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t size = page + PID1_STACK + (sizeof(Pid1Memory) + page - 1) / page * page;
  /* Pages never touched cost nothing: PID 1 touches a few of its stack's,
   * and the rest only while a sandbox is paused. Below the stack, a page
   * that faults rather than reach other memory. */
  char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (map == MAP_FAILED) {
    return -1;
  }
  if (mprotect(map, page, PROT_NONE) < 0) {
    int saved = errno;
    (void)munmap(map, size);
    errno = saved;
    return -1;
  }
  Pid1Memory *m = (Pid1Memory *)(void *)(map + page + PID1_STACK);
  m->sock = sock;
#ifdef PID1_SHARES_MEMORY
  if (!pid1_under_valgrind()) {
    /* Never unmapped: PID 1 runs on it until it ends (guard_clear()
     * waits for that), and this process's exit unmaps it. */
    pid_t pid = clone(p1_clone_main, map + page + PID1_STACK, CLONE_VM | SIGCHLD, m);
    if (pid < 0) {
      int saved = errno;
      (void)munmap(map, size);
      errno = saved;
    }
    return pid;
  }
#endif
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    p1_main(m);
  }
  int saved = errno;
  (void)munmap(map, size);
  errno = saved;
  return pid;
}
