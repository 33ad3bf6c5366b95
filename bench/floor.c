/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's share of each backend: what `ralon run` could not avoid
 * paying even with no policy to read, no scan, no audit and no checks.
 * bench/run times it beside ralon, so the difference is ralon's own work.
 *
 *   floor mount    PATH... -- CMD [ARGS...]
 *   floor guarded  PATH... -- CMD [ARGS...]
 *   floor watched  PATH... -- CMD [ARGS...]
 *   floor landlock PATH... -- CMD [ARGS...]
 *
 * mount: a user and mount namespace (uid/gid maps), / made private, each
 * PATH bound onto itself and remounted read-only (keeping the flags the
 * kernel locks), a second user and mount namespace (the same maps) to
 * lock the mounts, then CMD. No pinning of ancestors, no verification.
 *
 * guarded: the same binds in the shape of the mount backend's guard: a PID
 * namespace whose PID 1 lives until this process lets it go, CMD as this
 * process's second child (PID 2 there, started as ralon starts it, in this
 * process's memory until its execve; PID 1 shares it too, as ralon's
 * does) with a /proc of that namespace and
 * the mounts locked, and this process waiting for CMD, then ending PID 1
 * and reaping it. Three processes and one execve, as ralon and
 * `bwrap --unshare-pid` have; no watches, no checks, no socket.
 *
 * watched: guarded, and the least of what issue 29 makes the guard do
 * beside the command, so that a change made outside cannot go unseen:
 * every directory on the way from below / to each PATH bound onto itself
 * first (pinned: a mount point cannot be moved away); before the command
 * starts, a listening socket (for `ralon pause`) and SIGCHLD through a
 * signalfd, so that one poll(2) waits for the command, the socket, the
 * watches and the sandbox's mount table; once the command runs, an
 * inotify instance watching each directory holding a pin or a PATH (its
 * entries made, removed, moved) and each PATH itself, each identity then
 * compared with the one taken before the binds, and the sandbox's mount
 * table, which the command's process opened and sent before its execve
 * (having resolved its working directory again past the binds), open for
 * poll(2); when the command ends, a last look (the queued
 * events read, the table polled), the watches removed and the instance
 * closed, the table closed (the last hold on the sandbox's namespace),
 * then PID 1 ended and reaped. Nothing is acted on: a change (an event
 * on an object, an identity not the one before the binds, the table
 * changed) is only counted, "floor: N changed" on standard error, and no
 * pause is answered.
 *
 * landlock: a ruleset handling ralon's write rights (ABI 3), one rule on
 * every entry of every directory from / to each PATH except the
 * directories on the way and the PATHs themselves, then CMD. No identity
 * checks, no symbolic link care.
 *
 * Both then harden the process as ralon must: every capability dropped
 * (with CAP_SETPCAP, the bounding set too, one prctl each as the kernel
 * requires), no_new_privs, and a seccomp filter refusing TIOCSTI and
 * TIOCLINUX (loading it JIT-compiles a program, which on a VM is a large
 * share of the cost).
 *
 * Built with -DFLOOR_LIBS (and libyaml), every mode first loads the
 * libraries ralon is specified with, as ralon loads them: libyaml linked,
 * libcap opened with dlopen(3) and its symbols looked up. Two more modes
 * then measure what libraries alone cost a hook and a policy:
 *
 *   floor hook < PAYLOAD    json-c opened as ralon opens it, PAYLOAD read
 *                           from standard input and parsed; libcap is not
 *                           loaded (hook check does not load it)
 *   floor yaml FILE         FILE read and parsed by libyaml into events,
 *                           none of them kept
 *
 * and the backends' modes take `--policy FILE` before their PATHs: FILE
 * parsed so first, as any `run` must read the policy before it can know
 * what to protect (the listing of the directories on the way to each
 * PATH, which stands for a scan of the project, the modes make anyway).
 *
 * PATHs must be absolute and canonical. Not a sandbox: a measuring stick. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef FLOOR_LIBS
#include <dlfcn.h>
#include <yaml.h>
#endif

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

struct dirent64_raw {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void die(const char *what) {
  fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void write_file(const char *path, const char *s) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
    die(path);
  }
  close(fd);
}

/* A user and mount namespace in which this process keeps its own uid
 * and gid (a command that saw itself as the overflow uid would find no
 * home directory, and every file owned by someone else). */
static void enter_namespaces(void) {
  char map[64];
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
    die("unshare");
  }
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
  write_file("/proc/self/gid_map", map);
}

static unsigned long locked_flags(const char *path) {
  struct statvfs sv;
  unsigned long fl = 0;
  if (statvfs(path, &sv) == 0) {
    fl |= sv.f_flag & ST_NOSUID ? MS_NOSUID : 0;
    fl |= sv.f_flag & ST_NODEV ? MS_NODEV : 0;
    fl |= sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0;
    fl |= sv.f_flag & ST_NOATIME ? MS_NOATIME : 0;
    fl |= sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0;
    fl |= sv.f_flag & ST_RELATIME ? MS_RELATIME : 0;
  }
  return fl;
}

/* The pins (none where NULL) are bound before the paths, each directory
 * before those below it. */
static void floor_binds(char **pins, size_t n_pins, char **paths, int n) {
  enter_namespaces();
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    die("make / private");
  }
  for (size_t i = 0; i < n_pins; i++) {
    if (mount(pins[i], pins[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
      die(pins[i]);
    }
  }
  for (int i = 0; i < n; i++) {
    if (mount(paths[i], paths[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
      die(paths[i]);
    }
    unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(paths[i]);
    if (mount(NULL, paths[i], NULL, fl, NULL) < 0) {
      die(paths[i]);
    }
  }
}

/* The copy that locks the mounts is a user namespace too, with the same
 * maps, as ralon's (and bwrap --unshare-user's) must be. */
static void floor_lock(void) {
  enter_namespaces();
}

static void floor_mount(char **paths, int n) {
  floor_binds(NULL, 0, paths, n);
  floor_lock();
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void floor_landlock(char **paths, int n) {
  uint64_t handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM |
                     LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
  struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
  if (rs < 0) {
    die("landlock_create_ruleset");
  }
  /* The directories on the way, each listed once, and never granted;
   * nor are the paths (sorted together, for a binary search). */
  size_t cap = 64, nd = 0, nn = 0;
  char **dirs = malloc(cap * sizeof(char *));
  for (int i = 0; i < n; i++) {
    for (const char *s = paths[i]; s != NULL; s = strchr(s + 1, '/')) {
      char *d = strndup(paths[i], s == paths[i] ? 1 : (size_t)(s - paths[i]));
      int seen = 0;
      for (size_t k = 0; k < nd && !seen; k++) {
        seen = strcmp(dirs[k], d) == 0;
      }
      if (seen) {
        free(d);
        continue;
      }
      if (nd == cap) {
        dirs = realloc(dirs, (cap *= 2) * sizeof(char *));
      }
      dirs[nd++] = d;
    }
  }
  char **named = malloc((nd + (size_t)n) * sizeof(char *));
  memcpy(named, dirs, nd * sizeof(char *));
  for (int i = 0; i < n; i++) {
    named[nd + nn++] = paths[i];
  }
  nn += nd;
  qsort(named, nn, sizeof(char *), compare_strings);
  static char buf[64 * 1024];
  char child[4096];
  for (size_t k = 0; k < nd; k++) {
    int dfd = open(dirs[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
      die(dirs[k]);
    }
    ssize_t got;
    while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
      for (ssize_t off = 0; off < got;) {
        struct dirent64_raw *de = (void *)(buf + off);
        off += de->d_reclen;
        const char *name = de->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
          continue;
        }
        snprintf(child, sizeof(child), "%s/%s", strcmp(dirs[k], "/") == 0 ? "" : dirs[k], name);
        const char *key = child;
        if (de->d_type == DT_LNK || bsearch(&key, named, nn, sizeof(char *), compare_strings)) {
          continue;
        }
        int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          continue;
        }
        struct landlock_path_beneath_attr pb = {
            .allowed_access = de->d_type == DT_DIR
                                  ? handled
                                  : (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE),
            .parent_fd = fd,
        };
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
          die(child);
        }
        close(fd);
      }
    }
    close(dfd);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
    die("landlock_restrict_self");
  }
  close(rs);
}

static void harden(void) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
  if (syscall(SYS_capget, &hdr, data) < 0) {
    die("capget");
  }
  if (data[0].effective & (1u << CAP_SETPCAP)) {
    for (unsigned long c = 0; c < 64; c++) {
      if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
        break;
      }
    }
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  memset(data, 0, sizeof(data));
  if (syscall(SYS_capset, &hdr, data) < 0) {
    die("capset");
  }
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
    die("seccomp");
  }
}

/* Set by `watched`: the signals it reads from a descriptor unblocked,
 * the working directory resolved again past the binds, and the sandbox's
 * mount table sent on report[1] before the execve. */
static bool unblock_before_exec;
static char *report_cwd;
static int report[2] = {-1, -1};

/* /proc is mounted before the lock, while this namespace's owner still
 * may. */
static int command(void *arg) {
  char **cmd = arg;
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
    die("mount /proc");
  }
  floor_lock();
  if (report[1] >= 0) {
    int mi = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (chdir(report_cwd) < 0 || mi < 0) {
      die("the sandbox's table");
    }
    char c = 'L';
    struct iovec iov = {.iov_base = &c, .iov_len = 1};
    union {
      struct cmsghdr h;
      char b[CMSG_SPACE(sizeof(int))];
    } u = {0};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &mi, sizeof(int));
    if (sendmsg(report[1], &m, MSG_NOSIGNAL) != 1) {
      die("sendmsg");
    }
  }
  harden();
  if (unblock_before_exec) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
  }
  execvp(cmd[0], cmd);
  /* No exit(3) in the parent's memory: stderr is unbuffered. */
  fprintf(stderr, "floor: %s: %s\n", cmd[0], strerror(errno));
  _exit(127);
}

/* PID 1 ends when its end of the lifeline is closed. It shares the
 * caller's memory, so it calls the kernel directly (errno is the
 * caller's) and ends with the raw exit, never exit(3). */
static int init_main(void *arg) {
  const int *fds = arg;
  char c;
  syscall(SYS_close, fds[1]);
  /* No handler is set, so nothing interrupts it: it returns at the
   * hang-up. */
  (void)syscall(SYS_read, fds[0], &c, 1);
  syscall(SYS_exit, 0);
  return 0;
}

/* PID 1 of a new PID namespace (unshare(CLONE_NEWPID) done), then CMD
 * as the second child; *lifeline is the end whose close ends PID 1. */
static pid_t start_sandbox(char **cmd, pid_t *init, int *lifeline) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    die("pipe");
  }
  /* In this process's memory, as ralon's guard starts its PID 1
   * (src/enforce/linux/pid1.c): nothing this process writes later is
   * copied for it. */
  static char init_stack[64 * 1024];
  static int init_fds[2];
  init_fds[0] = fds[0];
  init_fds[1] = fds[1];
  *init = clone(init_main, init_stack + sizeof(init_stack), CLONE_VM | SIGCHLD, init_fds);
  if (*init < 0) {
    die("clone (pid 1)");
  }
  close(fds[0]);
  *lifeline = fds[1];
  /* Started as ralon starts it, sharing this process's memory until its
   * execve (clone(CLONE_VM | CLONE_VFORK), as posix_spawn(3) does). */
  static char stack[256 * 1024];
  pid_t child = clone(command, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, cmd);
  if (child < 0) {
    die("clone");
  }
  return child;
}

static int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int floor_guarded(char **paths, int n, char **cmd) {
  floor_binds(NULL, 0, paths, n);
  if (unshare(CLONE_NEWPID) < 0) {
    die("unshare (pid)");
  }
  pid_t init;
  int lifeline;
  pid_t child = start_sandbox(cmd, &init, &lifeline);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  close(lifeline);
  while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {
  }
  return exit_status(status);
}

/* What `watched` watches: each pin (a directory on the way to a PATH)
 * and each PATH, once, with its identity before the binds. */
typedef struct {
  char *path;
  bool pin, target;
  dev_t dev;
  ino_t ino;
} Obj;

static int compare_objs(const void *a, const void *b) {
  return strcmp(((const Obj *)a)->path, ((const Obj *)b)->path);
}

/* The objects sorted by path, so each directory comes before what is
 * below it; *ret_n set. */
static void push_obj(Obj **o, size_t *n, size_t *cap, Obj x) {
  if (*n == *cap) {
    *o = realloc(*o, (*cap *= 2) * sizeof(Obj));
  }
  (*o)[(*n)++] = x;
}

static Obj *watched_objects(char **paths, int n, size_t *ret_n) {
  size_t cap = 16, no = 0;
  Obj *o = malloc(cap * sizeof(Obj));
  for (int i = 0; i < n; i++) {
    /* Each directory below / on the way, then the path. */
    for (const char *s = strchr(paths[i] + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
      push_obj(&o, &no, &cap, (Obj){strndup(paths[i], (size_t)(s - paths[i])), true, false, 0, 0});
    }
    push_obj(&o, &no, &cap, (Obj){paths[i], false, true, 0, 0});
  }
  qsort(o, no, sizeof(Obj), compare_objs);
  size_t k = 0;
  for (size_t i = 0; i < no; i++) {
    if (k > 0 && strcmp(o[k - 1].path, o[i].path) == 0) {
      o[k - 1].pin |= o[i].pin;
      o[k - 1].target |= o[i].target;
      continue;
    }
    o[k++] = o[i];
  }
  for (size_t i = 0; i < k; i++) {
    struct stat st;
    if (lstat(o[i].path, &st) < 0) {
      die(o[i].path);
    }
    o[i].dev = st.st_dev;
    o[i].ino = st.st_ino;
  }
  *ret_n = k;
  return o;
}

/* A watch: on a directory holding objects (dir), or on a PATH (NULL). */
typedef struct {
  int wd;
  char *dir;
} Watch;

/* Each directory holding an object, and each PATH; *ret_n set. */
static Watch *watch_objects(int ino, const Obj *o, size_t no, size_t *ret_n) {
  char **dirs = malloc((no + 1) * sizeof(char *));
  size_t nd = 0;
  for (size_t i = 0; i < no; i++) {
    const char *slash = strrchr(o[i].path, '/');
    dirs[nd++] = strndup(o[i].path, slash == o[i].path ? 1 : (size_t)(slash - o[i].path));
  }
  qsort(dirs, nd, sizeof(char *), compare_strings);
  Watch *w = malloc((2 * no + 1) * sizeof(Watch));
  size_t nw = 0;
  const uint32_t dir_mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
                            IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
  for (size_t i = 0; i < nd; i++) {
    if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0) {
      free(dirs[i]);
      continue;
    }
    w[nw] = (Watch){inotify_add_watch(ino, dirs[i], dir_mask), dirs[i]};
    if (w[nw++].wd < 0) {
      die(dirs[i]);
    }
  }
  for (size_t i = 0; i < no; i++) {
    if (!o[i].target) {
      continue;
    }
    w[nw] = (Watch){inotify_add_watch(ino, o[i].path,
                                      IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_DONT_FOLLOW),
                    NULL};
    if (w[nw++].wd < 0) {
      die(o[i].path);
    }
  }
  free(dirs);
  *ret_n = nw;
  return w;
}

/* The events queued, each that concerns an object counted as a change
 * (a directory's entry of another name does not). */
static size_t drain_events(int ino, const Watch *w, size_t nw, const Obj *o, size_t no) {
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  char path[4096];
  size_t n = 0;
  ssize_t got;
  while ((got = read(ino, buf, sizeof(buf))) > 0) {
    for (ssize_t off = 0; off < got;) {
      const struct inotify_event *ev = (const void *)(buf + off);
      off += (ssize_t)(sizeof(*ev) + ev->len);
      const Watch *on = NULL;
      for (size_t i = 0; i < nw && on == NULL; i++) {
        on = w[i].wd == ev->wd ? &w[i] : NULL;
      }
      if (on == NULL || (ev->mask & IN_IGNORED)) {
        continue;
      }
      if (on->dir != NULL && ev->len > 0) {
        snprintf(path, sizeof(path), "%s/%s", strcmp(on->dir, "/") == 0 ? "" : on->dir,
                 ev->name);
        Obj key = {.path = path};
        if (bsearch(&key, o, no, sizeof(Obj), compare_objs) == NULL) {
          continue;
        }
      }
      n++;
    }
  }
  return n;
}

static int floor_watched(char **paths, int n, char **cmd) {
  size_t no;
  Obj *o = watched_objects(paths, n, &no);
  char **pins = malloc((no + 1) * sizeof(char *));
  size_t np = 0;
  for (size_t i = 0; i < no; i++) {
    if (o[i].pin) {
      pins[np++] = o[i].path;
    }
  }
  report_cwd = getcwd(NULL, 0);
  if (report_cwd == NULL || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) < 0) {
    die("the command's report");
  }
  floor_binds(pins, np, paths, n);
  if (unshare(CLONE_NEWPID) < 0) {
    die("unshare (pid)");
  }
  /* SIGCHLD, the socket and the watches for one poll(2). */
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  int lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "ralon-floor/%d", (int)getpid());
  if (sfd < 0 || ino < 0 || lsock < 0 ||
      bind(lsock, (struct sockaddr *)&sa,
           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) < 0 ||
      listen(lsock, 16) < 0) {
    die("the guard's descriptors");
  }
  unblock_before_exec = true;
  pid_t init;
  int lifeline;
  pid_t child = start_sandbox(cmd, &init, &lifeline);
  /* The command runs (or its execve failed): the watches, then each
   * identity once more, so that a change before them counts too. */
  size_t nw;
  Watch *w = watch_objects(ino, o, no, &nw);
  size_t changed = 0;
  for (size_t i = 0; i < no; i++) {
    struct stat st;
    if (lstat(o[i].path, &st) < 0 || st.st_dev != o[i].dev || st.st_ino != o[i].ino) {
      changed++;
    }
  }
  /* The sandbox's mount table, held from the command's process (sent
   * before its execve): it stays readable after the command ends. */
  close(report[1]);
  int mi = -1;
  char c;
  struct iovec iov = {.iov_base = &c, .iov_len = 1};
  union {
    struct cmsghdr h;
    char b[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
  if (recvmsg(report[0], &m, MSG_CMSG_CLOEXEC) == 1 && CMSG_FIRSTHDR(&m) != NULL) {
    memcpy(&mi, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
  }
  close(report[0]);
  if (mi < 0) {
    fprintf(stderr, "floor: the command's process sent no mount table\n");
    exit(2);
  }
  struct pollfd pf[] = {{.fd = sfd, .events = POLLIN},
                        {.fd = ino, .events = POLLIN},
                        {.fd = lsock, .events = POLLIN},
                        {.fd = mi, .events = POLLPRI}};
  char buf[4096];
  int status = 0;
  for (bool done = false; !done;) {
    if (poll(pf, sizeof(pf) / sizeof(pf[0]), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      die("poll");
    }
    if (pf[0].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) > 0) {
      }
      done = waitpid(child, &status, WNOHANG) == child;
    }
    if (pf[1].revents) {
      changed += drain_events(ino, w, nw, o, no);
    }
    if (pf[2].revents) {
      int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0) {
        close(c);
      }
    }
    if (pf[3].revents) {
      changed++;
      lseek(mi, 0, SEEK_SET);
      while (read(mi, buf, sizeof(buf)) > 0) {
      }
    }
  }
  /* The last look, then the end: PID 1 first, so that its exit runs
   * beside the close of the table (the namespace's last hold); the
   * instance once PID 1 has ended, as ralon's guard closes it. */
  changed += drain_events(ino, w, nw, o, no);
  struct pollfd last = {.fd = mi, .events = POLLPRI};
  if (poll(&last, 1, 0) == 1) {
    changed++;
  }
  for (size_t i = 0; i < nw; i++) {
    inotify_rm_watch(ino, w[i].wd);
  }
  close(lifeline);
  close(mi);
  close(lsock);
  close(sfd);
  while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {
  }
  close(ino);
  if (changed > 0) {
    fprintf(stderr, "floor: %zu changed\n", changed);
  }
  return exit_status(status);
}

#ifdef FLOOR_LIBS
static void *open_library(const char *soname, const char *const *names, size_t n) {
  void *h = dlopen(soname, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "floor: %s\n", dlerror());
    exit(2);
  }
  for (size_t i = 0; i < n; i++) {
    if (dlsym(h, names[i]) == NULL) {
      fprintf(stderr, "floor: %s has no %s\n", soname, names[i]);
      exit(2);
    }
  }
  return h;
}

static void load_libcap(void) {
  static const char *const names[] = {"cap_clear", "cap_drop_bound", "cap_free",
                                      "cap_get_flag", "cap_get_proc", "cap_max_bits",
                                      "cap_set_proc", "cap_set_secbits", "cap_to_name"};
  open_library("libcap.so.2", names, sizeof(names) / sizeof(names[0]));
}

static int floor_hook(void) {
  static const char *const names[] = {"json_tokener_parse", "json_object_put",
                                      "json_object_object_get_ex", "json_object_get_string",
                                      "json_object_get_type"};
  void *h = open_library("libjson-c.so.5", names, sizeof(names) / sizeof(names[0]));
  void *(*parse)(const char *) = (void *(*)(const char *))dlsym(h, "json_tokener_parse");
  int (*put)(void *) = (int (*)(void *))dlsym(h, "json_object_put");
  static char buf[1 << 20];
  size_t len = 0;
  ssize_t got;
  while (len < sizeof(buf) - 1 && (got = read(0, buf + len, sizeof(buf) - 1 - len)) != 0) {
    if (got < 0 && errno != EINTR) {
      die("stdin");
    }
    len += got > 0 ? (size_t)got : 0;
  }
  buf[len] = '\0';
  void *o = parse(buf);
  if (o == NULL) {
    fprintf(stderr, "floor: the payload is not JSON\n");
    return 2;
  }
  put(o);
  return 0;
}

static int floor_yaml(const char *file) {
  FILE *f = fopen(file, "rb");
  if (f == NULL) {
    die(file);
  }
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  for (;;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&p, &e)) {
      fprintf(stderr, "floor: %s: %s\n", file, p.problem != NULL ? p.problem : "?");
      return 2;
    }
    bool end = e.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&e);
    if (end) {
      break;
    }
  }
  yaml_parser_delete(&p);
  fclose(f);
  return 0;
}
#endif

int main(int argc, char **argv) {
#ifdef FLOOR_LIBS
  /* Keeps libyaml a dependency of the program, as it is of ralon's. */
  yaml_parser_t probe;
  yaml_parser_initialize(&probe);
  yaml_parser_delete(&probe);
  if (argc == 2 && strcmp(argv[1], "hook") == 0) {
    return floor_hook();
  }
  if (argc == 3 && strcmp(argv[1], "yaml") == 0) {
    return floor_yaml(argv[2]);
  }
  load_libcap();
  if (argc > 3 && strcmp(argv[2], "--policy") == 0) {
    if (floor_yaml(argv[3]) != 0) {
      return 2;
    }
    memmove(argv + 2, argv + 4, (size_t)(argc - 4 + 1) * sizeof(char *));
    argc -= 2;
  }
#endif
  int sep = 2;
  while (sep < argc && strcmp(argv[sep], "--") != 0) {
    sep++;
  }
  if (argc < 3 || sep >= argc - 1) {
    fprintf(stderr, "usage: floor mount|guarded|watched|landlock PATH... -- CMD [ARGS...]\n");
    return 2;
  }
  char **paths = argv + 2;
  int n = sep - 2;
  if (strcmp(argv[1], "guarded") == 0) {
    return floor_guarded(paths, n, argv + sep + 1);
  }
  if (strcmp(argv[1], "watched") == 0) {
    return floor_watched(paths, n, argv + sep + 1);
  }
  if (strcmp(argv[1], "mount") == 0) {
    floor_mount(paths, n);
  } else if (strcmp(argv[1], "landlock") == 0) {
    floor_landlock(paths, n);
  } else {
    fprintf(stderr, "floor: unknown backend %s\n", argv[1]);
    return 2;
  }
  harden();
  execvp(argv[sep + 1], argv + sep + 1);
  die(argv[sep + 1]);
}
