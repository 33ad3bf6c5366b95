/* SPDX-License-Identifier: Apache-2.0 */
/* The mount backend's guard. Three processes, as bubblewrap has its
 * monitor, its PID 1 and the command:
 *
 *   guard   ralon itself: the caller's PID namespace and process group, in
 *           the first user and mount namespace (where the binds are made;
 *           mount_prepare()). It watches the protected paths and the pins
 *           with inotify and the sandbox's mount table, answers `ralon
 *           pause` and `ralon resume` on an abstract socket, relays job
 *           control and signals, and reports the command's status.
 *   init    PID 1 of a new PID namespace (pid1.c): reaps orphans; it dies
 *           with the guard (PR_SET_PDEATHSIG and a lifeline socket), and
 *           with it the kernel kills everything in the namespace. It runs
 *           in the guard's memory (CLONE_VM), on a stack of its own, and
 *           calls nothing but the kernel.
 *   command PID 2, the guard's child, in a process group of its own (so
 *           that kill(0, SIGSTOP) from inside cannot stop the guard), in
 *           the locked copy of the mount namespace (mount_lock()), with
 *           the namespace's /proc it mounted before the copy; it becomes
 *           the agent. Until its execve it runs in the guard's memory, the
 *           guard waiting (command_spawn()), and makes the guard's last
 *           checks itself.
 *
 * The agent cannot reach the guard: the guard is outside its PID namespace
 * (no pid names it), in a parent user namespace (ptrace and /proc/PID are
 * refused), not dumpable, and never blocked on the terminal (it keeps
 * SIGTTOU blocked, and writes only once the sandbox is gone). */
#include "enforce/linux/guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GUARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_ASAN 1
#endif
#endif
#ifdef GUARD_ASAN
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include "enforce/enforce.h"
#include "enforce/linux/caps.h"
#include "enforce/linux/landlock.h"
#include "enforce/linux/mount.h"
#include "enforce/linux/pid1.h"
#include "enforce/linux/sys.h"
#include "mounts.h"
#include "path.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif

/* How long a pause may take to stop every process of a sandbox (one in an
 * uninterruptible system call stops only when it returns). */
#define FREEZE_MS 5000
/* A path renamed over is briefly missing for a lookup (the old mount is
 * detached before the rename completes): how long resume keeps looking. */
#define MISSING_RETRY_MS 100
#define MAX_CLIENTS 16
/* How long `ralon pause` waits for room in a guard's queue. */
#define CONNECT_WAIT_S 10
#define MSG_MAX 65536

/* ---- small helpers --------------------------------------------------- */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

static void sleep_ms(long ms) {
  sleep_us(ms * 1000);
}

static int pidfd_signal(int pidfd, int sig) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Sends `len` bytes and, when n_fds > 0, the descriptors with them. */
static int send_msg(int sock, const void *buf, size_t len, const int *fds, size_t n_fds) {
  struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } ctl;
  if (n_fds > 0) {
    memset(&ctl, 0, sizeof(ctl));
    mh.msg_control = ctl.buf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
  }
  ssize_t w;
  do {
    w = sendmsg(sock, &mh, MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
  return w < 0 ? -errno : 0;
}

/* Receives one message (NUL-terminated in buf, which has room for size)
 * and up to `max_fds` descriptors (the rest of *ret_n_fds set to -1).
 * Returns its length, 0 at the end, or -errno. */
static ssize_t recv_msg(int sock, char *buf, size_t size, int *fds, size_t max_fds,
                        size_t *ret_n_fds) {
  struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                      .msg_controllen = sizeof(ctl.buf)};
  ssize_t n;
  do {
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (ret_n_fds != NULL) {
    *ret_n_fds = 0;
  }
  if (n < 0) {
    return -errno;
  }
  buf[n] = '\0';
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
      continue;
    }
    size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int *got = (int *)(void *)CMSG_DATA(cm);
    for (size_t i = 0; i < k; i++) {
      if (fds != NULL && ret_n_fds != NULL && *ret_n_fds < max_fds) {
        fds[(*ret_n_fds)++] = got[i];
      } else {
        close(got[i]);
      }
    }
  }
  return n;
}

/* The /proc of this process's own PID namespace, as a directory: in the
 * guard, /proc is the sandbox's once the command's process has mounted
 * it there (command_prepare()), and the guard's peers are not in it.
 * -1: "/proc". */
static int own_proc_fd = -1;

/* How many PID namespaces deep the process is, as /proc shows it (the
 * NSpid line). 0: not known. */
static size_t pid_depth(const char *pid) {
  _cleanup_free_ char *path = own_proc_fd >= 0 ? xasprintf("%s/status", pid)
                                               : xasprintf("/proc/%s/status", pid);
  _cleanup_free_ char *text = read_text_file_at(own_proc_fd >= 0 ? own_proc_fd : AT_FDCWD, path,
                                                64u * 1024u);
  if (text == NULL) {
    return 0;
  }
  const char *l = strstr(text, "\nNSpid:");
  if (l == NULL) {
    return 1; /* before Linux 4.1: no PID namespaces to tell apart */
  }
  l += strlen("\nNSpid:");
  size_t n = 0;
  while (*l != '\0' && *l != '\n') {
    while (*l == ' ' || *l == '\t') {
      l++;
    }
    if (*l >= '0' && *l <= '9') {
      n++;
      while (*l >= '0' && *l <= '9') {
        l++;
      }
    } else if (*l != '\n' && *l != '\0') {
      l++;
    }
  }
  return n;
}

/* A peer on a guard's socket is trusted when it is this user, in this PID
 * namespace: a process inside a sandbox is a PID namespace deeper, and
 * may neither pause a guard nor pose as one. */
static bool peer_trusted(int fd, pid_t *ret_pid) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0 ||
      cred.uid != geteuid()) {
    return false;
  }
  char pid[32];
  snprintf(pid, sizeof(pid), "%d", (int)cred.pid);
  size_t mine = pid_depth("self"), theirs = pid_depth(pid);
  if (mine == 0 || theirs != mine) {
    return false;
  }
  if (ret_pid != NULL) {
    *ret_pid = cred.pid;
  }
  return true;
}

/* FNV-1a: names a project's guards in a socket name of bounded length. */
static uint64_t hash_text(const char *s) {
  uint64_t h = 14695981039346656037ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ULL;
  }
  return h;
}

char *guard_socket_prefix(uid_t uid, const char *root) {
  return xasprintf("ralon-guard/%u/%016llx/", (unsigned)uid,
                   (unsigned long long)hash_text(root));
}

static socklen_t abstract_address(struct sockaddr_un *sa, const char *name) {
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t len = strlen(name);
  if (len > sizeof(sa->sun_path) - 1) {
    len = sizeof(sa->sun_path) - 1;
  }
  memcpy(sa->sun_path + 1, name, len);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

/* ---- what the guard watches ------------------------------------------- */

typedef struct {
  char *path;
  dev_t dev;
  ino_t ino;
  nlink_t nlink; /* a file's links: one made outside is a way around the mount */
  bool target;   /* a protected path (read-only); else a pinned directory */
  /* Its mount in the sandbox (statx_mount_id()), as the command's process
   * found it before its execve, or as a resume put it; 0: not known. */
  uint64_t mnt_id;
  /* A protected path that did not exist at a resume: watched by its name
   * in its directory, so that whatever makes it again, outside without a
   * pause or inside, stops the sandbox; the next resume protects it. */
  bool missing;
} Obj;

typedef struct {
  char *dir;
  char **names; /* sorted: the entries whose change matters */
  size_t n_names;
  size_t cap_names;
} DirWatch;

/* What an inotify watch descriptor stands for. */
typedef struct {
  int dir;   /* index into dirs, or -1 */
  int obj;   /* index into objs, or -1 */
} WatchSlot;

typedef struct {
  const GuardConfig *c;
  pid_t init_pid;
  int init_sock; /* to PID 1 (pid1.c) */
  pid_t cmd_pid;
  int cmd_sock;
  int sigfd;
  int ino_fd;
  int mountinfo_fd;
  int proc_fd;
  int mntns_fd;
  struct stat mntns_st;
  /* The sandbox's mount namespace's id, when the guard can ask the kernel
   * about mounts in it by id (check_mounts()); 0: it reads the table. */
  uint64_t mntns_id;
  int listen_fd;
  int clients[MAX_CLIENTS];
  size_t n_clients;
  Obj *objs;
  size_t n_objs;
  DirWatch *dirs;
  size_t n_dirs;
  WatchSlot *slots;
  size_t n_slots;
  sigset_t orig_mask;
  int tty;
  bool cmd_fg; /* the command's group holds the terminal's foreground */
  bool start_changed; /* a path changed between the binds and the execve */
  bool cmd_stopped;
  bool cmd_done;
  int cmd_status;
  int exec_failure; /* its execve failed: the exit status that says so, or 0 */
  /* Paused by `ralon pause`: */
  bool paused;
  int64_t pause_deadline; /* 0: none */
  int hold_fd;            /* resume when this client goes */
  int *frozen;            /* pidfds of the processes the pause stopped */
  pid_t *held;            /* the threads held by ptrace while frozen */
  size_t n_held;
  size_t cap_held;
  int pidns_fd;           /* the sandbox's PID namespace, or -1 */
  char *frozen_state;     /* Snapshot.text once frozen */
  bool watching;          /* PID 1 watches the frozen sandbox */
  size_t n_frozen;
  size_t cap_frozen;
  GuardResult *res;
} Guard;

static void dir_watches_clear(Guard *g) {
  for (size_t i = 0; i < g->n_dirs; i++) {
    free(g->dirs[i].dir);
    free(g->dirs[i].names);
  }
  free(g->dirs);
  g->dirs = NULL;
  g->n_dirs = 0;
  free(g->slots);
  g->slots = NULL;
  g->n_slots = 0;
}

static WatchSlot *slot_for(Guard *g, int wd) {
  if (wd < 0) {
    return NULL;
  }
  if ((size_t)wd >= g->n_slots) {
    size_t n = (size_t)wd + 64;
    g->slots = xreallocarray(g->slots, n, sizeof(WatchSlot));
    for (size_t i = g->n_slots; i < n; i++) {
      g->slots[i] = (WatchSlot){-1, -1};
    }
    g->n_slots = n;
  }
  return &g->slots[wd];
}

typedef struct {
  const char *dir;
  size_t dir_len;
  const char *name;
} Entry;

static int compare_entries(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  size_t n = x->dir_len < y->dir_len ? x->dir_len : y->dir_len;
  int r = memcmp(x->dir, y->dir, n);
  if (r == 0 && x->dir_len != y->dir_len) {
    r = x->dir_len < y->dir_len ? -1 : 1;
  }
  return r != 0 ? r : strcmp(x->name, y->name);
}

/* A watch that could not be set on `path`: ENOSPC is the limit of
 * watches a user may have (inotify_add_watch(2)), said as such. */
static int watch_failed(Error *err, const char *path) {
  if (errno == ENOSPC) {
    return error_set(err, ENOSPC,
                     _("the guard cannot watch %s: the limit of inotify watches "
                       "(fs.inotify.max_user_watches) is reached"),
                     path);
  }
  return error_set(err, errno, _("the guard cannot watch %s: %m"), path);
}

/* Watches each directory holding a pin or a protected path for the
 * entries that matter (created, deleted, moved in or out: a rename over a
 * protected file, RENAME_EXCHANGE, a pinned directory moved away), and
 * each protected object itself. inotify follows inodes, whichever path the
 * change came through. Any failure (the watch limit) fails: a path left
 * unwatched could change unseen. */
static int watch_add_all(Guard *g, Error *err) {
  _cleanup_free_ Entry *e = xcalloc(g->n_objs > 0 ? g->n_objs : 1, sizeof(Entry));
  for (size_t i = 0; i < g->n_objs; i++) {
    const char *p = g->objs[i].path;
    const char *slash = strrchr(p, '/');
    e[i] = (Entry){p, slash == p ? 1 : (size_t)(slash - p), slash + 1};
  }
  qsort(e, g->n_objs, sizeof(Entry), compare_entries);
  const uint32_t dir_mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                            IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
  size_t cap = 0;
  for (size_t i = 0; i < g->n_objs; i++) {
    if (i == 0 || compare_entries(&(Entry){e[i].dir, e[i].dir_len, ""},
                                  &(Entry){e[i - 1].dir, e[i - 1].dir_len, ""}) != 0) {
      DirWatch *d = grow_array(&g->dirs, &g->n_dirs, &cap, sizeof(DirWatch));
      d->dir = xstrndup(e[i].dir, e[i].dir_len);
      int wd = inotify_add_watch(g->ino_fd, d->dir, dir_mask);
      if (wd < 0) {
        return watch_failed(err, d->dir);
      }
      slot_for(g, wd)->dir = (int)(g->n_dirs - 1);
    }
    DirWatch *d = &g->dirs[g->n_dirs - 1];
    *(const char **)grow_array(&d->names, &d->n_names, &d->cap_names, sizeof(char *)) =
        e[i].name;
  }
  for (size_t i = 0; i < g->n_objs; i++) {
    if (!g->objs[i].target || g->objs[i].missing) {
      continue;
    }
    int wd = inotify_add_watch(g->ino_fd, g->objs[i].path,
                               IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_DONT_FOLLOW);
    if (wd < 0) {
      return watch_failed(err, g->objs[i].path);
    }
    slot_for(g, wd)->obj = (int)i;
  }
  return 0;
}

static int watch_init(Guard *g, Error *err) {
  g->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (g->ino_fd < 0) {
    return error_set(err, errno, _("the guard cannot watch the protected paths: %m"));
  }
  return 0;
}

/* The watches' end, once no event of theirs will be read: the session
 * has ended and had its last look (end_through_init()), or the sandbox
 * is stopped, or a resume sets new ones (watch_all()). Each watch is
 * removed here; the instance is closed once PID 1 has ended
 * (guard_clear()). The kernel frees a removed watch's parts after an
 * SRCU grace period, in two works begun together, and the last close of
 * an instance waits for the one that frees its watches
 * (fsnotify_destroy_group()). Of two such waits begun together, the
 * later is a normal grace period instead of an expedited one: 12-28 ms
 * here, where an expedited one takes 0.05-0.1 ms. Closed with its
 * watches on, the instance paid that in half the runs or more (and every
 * resume that replaced its instance paid 6-14 ms); with the watches
 * removed before PID 1 ends, in 3 to 16 runs in 100, by how busy the
 * processors are. */
static void watches_end(Guard *g) {
  for (size_t i = 0; i < g->n_slots && g->ino_fd >= 0; i++) {
    if (g->slots[i].dir >= 0 || g->slots[i].obj >= 0) {
      (void)inotify_rm_watch(g->ino_fd, (int)i);
      g->slots[i] = (WatchSlot){-1, -1};
    }
  }
}

/* The watches again, in the same instance: a second one, even for a
 * moment, could meet the user's limit of instances
 * (fs.inotify.max_user_instances, which the user's editors share), and
 * closing the old one would wait for a grace period (watches_end()).
 * What the old watches queued, their removal's IN_IGNORED too, is read
 * and dropped: the caller checks every identity once the new ones are
 * set. New watches get new descriptors (the kernel hands them out in
 * turn), so an old one's event, if any came, finds no slot. */
static int watch_all(Guard *g, Error *err) {
  if (g->ino_fd < 0) {
    return watch_init(g, err) < 0 ? -1 : watch_add_all(g, err);
  }
  watches_end(g);
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  while (read(g->ino_fd, buf, sizeof(buf)) > 0) {
  }
  dir_watches_clear(g);
  return watch_add_all(g, err);
}

/* Whether an inotify event concerns a pin or a protected path. */
static bool event_matters(Guard *g, const struct inotify_event *ev) {
  if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED)) {
    return true;
  }
  WatchSlot *s = slot_for(g, ev->wd);
  if (s == NULL) {
    return true;
  }
  if (s->obj >= 0) {
    return true;
  }
  if (s->dir < 0) {
    return false;
  }
  if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
    return true;
  }
  if (ev->len == 0) {
    return false;
  }
  const DirWatch *d = &g->dirs[s->dir];
  const char *name = ev->name;
  return bsearch(&name, d->names, d->n_names, sizeof(char *), strings_compare) != NULL;
}

static void add_changed(Guard *g, const char *path) {
  GuardResult *r = g->res;
  for (size_t i = 0; i < r->n_changed; i++) {
    if (streq(r->changed[i], path)) {
      return;
    }
  }
  r->changed = xreallocarray(r->changed, r->n_changed + 1, sizeof(char *));
  r->changed[r->n_changed++] = xstrdup(path);
}

/* Whether what a path reaches now is still the object `o` was: the same
 * device and inode, and (not a directory) no more links than it had: a
 * link made outside is a name no mount covers. */
static bool obj_unchanged(const Obj *o, dev_t dev, ino_t ino, mode_t mode, nlink_t nlink) {
  return dev == o->dev && ino == o->ino && (S_ISDIR(mode) || nlink <= o->nlink);
}

/* Every pin and protected path must still be the object it was: one
 * replaced, moved away or removed outside has lost its mount. */
static size_t check_identities(Guard *g) {
  size_t bad = 0;
  for (size_t i = 0; i < g->n_objs; i++) {
    struct stat st;
    const Obj *o = &g->objs[i];
    if (o->missing) {
      /* Made again: nothing protects it. */
      if (fstatat(AT_FDCWD, o->path, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
        add_changed(g, o->path);
        bad++;
      }
      continue;
    }
    if (fstatat(AT_FDCWD, o->path, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        !obj_unchanged(o, st.st_dev, st.st_ino, st.st_mode, st.st_nlink)) {
      add_changed(g, o->path);
      bad++;
    }
  }
  return bad;
}

/* And each must still be a mount point in the sandbox (whose mount table
 * `fd` reads): the kernel detaches the mount before a rename over it has
 * completed. */
static size_t check_mounts_in(Guard *g, int fd) {
  char *text = NULL;
  size_t len = 0;
  if (lseek(fd, 0, SEEK_SET) < 0 || read_fd_limited(fd, 64u * 1024u * 1024u, &text, &len) < 0) {
    add_changed(g, "/proc/self/mountinfo");
    return 1;
  }
  MountTable t = {0};
  mounts_parse(text, &t);
  free(text);
  const char **points = xcalloc(t.n > 0 ? t.n : 1, sizeof(char *));
  for (size_t i = 0; i < t.n; i++) {
    points[i] = t.v[i].point;
  }
  qsort(points, t.n, sizeof(char *), strings_compare);
  size_t bad = 0;
  for (size_t i = 0; i < g->n_objs; i++) {
    const char *p = g->objs[i].path;
    if (!g->objs[i].missing && bsearch(&p, points, t.n, sizeof(char *), strings_compare) == NULL) {
      add_changed(g, p);
      bad++;
    }
  }
  free(points);
  mounts_clear(&t);
  return bad;
}

/* Whether every pin's and protected path's mount is still in the sandbox.
 * Asked of the kernel by the mounts' ids where it can say (Linux 6.11;
 * about 1.4 µs a mount here); else read from the sandbox's mount table,
 * which the kernel writes out as text, a line for every mount of the
 * namespace, ours included (0.1-0.2 ms at one path here): that is the
 * guard's reaction time to a protected file replaced outside, whose mount
 * the kernel detaches first. */
static size_t check_mounts(Guard *g) {
  bool by_id = g->mntns_id != 0;
  for (size_t i = 0; i < g->n_objs && by_id; i++) {
    by_id = g->objs[i].missing || g->objs[i].mnt_id != 0;
  }
  size_t bad = 0;
  for (size_t i = 0; i < g->n_objs && by_id; i++) {
    if (g->objs[i].missing) {
      continue;
    }
    int r = sys_mount_in_ns(g->objs[i].mnt_id, g->mntns_id);
    if (r == 0) {
      add_changed(g, g->objs[i].path);
      bad++;
    } else if (r < 0) {
      by_id = false;
      g->mntns_id = 0; /* and the table from now on */
    }
  }
  return by_id ? bad : bad + check_mounts_in(g, g->mountinfo_fd);
}

/* Both, in the sandbox, before its command starts: one statx(2) a path,
 * which says whether the object the path reaches is the root of a mount
 * (Linux 5.8), rather than a read of the whole mount table (2.6 KB on a
 * small machine, parsed and sorted: a quarter of a millisecond here). A
 * path whose mount was detached reaches whatever is under it now, which
 * is not. The table is read only where the kernel does not say. */
static size_t check_at_start(Guard *g, int mountinfo_fd) {
  size_t bad = 0;
  bool table = false;
  for (size_t i = 0; i < g->n_objs; i++) {
    Obj *o = &g->objs[i];
    struct statx stx;
    int root = 0;
    if (statx(AT_FDCWD, o->path, AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_INO | STATX_NLINK | RALON_STATX_MNT_ID_UNIQUE, &stx) < 0 ||
        !obj_unchanged(o, makedev(stx.stx_dev_major, stx.stx_dev_minor), (ino_t)stx.stx_ino,
                       stx.stx_mode, (nlink_t)stx.stx_nlink) ||
        (root = statx_mount_root(&stx)) == 0) {
      add_changed(g, o->path);
      bad++;
    } else if (root < 0) {
      table = true;
    }
    /* The mount the path reaches in the sandbox: for the guard's later
     * checks (check_mounts()). This process runs in the guard's memory. */
    o->mnt_id = root > 0 ? statx_mount_id(&stx) : 0;
  }
  return bad + (table ? check_mounts_in(g, mountinfo_fd) : 0);
}

/* ---- the sandbox's processes ------------------------------------------ */

/* Reads file `name` of thread `tid` in the task directory `tasks` into
 * buf (NUL-terminated); its length, or -1. */
static ssize_t read_task_file(int tasks, const char *tid, const char *name, char *buf,
                              size_t size) {
  char path[300];
  snprintf(path, sizeof(path), "%s/%s", tid, name);
  _cleanup_close_ int fd = openat(tasks, path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);
  if (n >= 0) {
    buf[n] = '\0';
  }
  return n;
}

/* Whether thread `tid` (of the task directory `tasks`) waits in vfork(2)
 * for its child: it runs nothing until the child executes or ends, and a
 * shell (dash) does this for every command it starts. A freeze that
 * stopped the child would otherwise wait for the parent for ever. */
static bool in_vfork(int tasks, const char *tid) {
  char wchan[64];
  if (read_task_file(tasks, tid, "wchan", wchan, sizeof(wchan)) <= 0) {
    return false;
  }
  return streq(wchan, "kernel_clone") || strstr(wchan, "vfork") != NULL;
}

/* Calls fn for each thread of the process at /proc/N (dirfd), with the
 * task directory and the thread's id, until fn returns false. -1: the
 * process is gone; 1: fn stopped it; 0: every thread was seen. */
typedef bool (*TaskFn)(int tasks, const char *tid, void *userdata);
static int each_task(int pfd, TaskFn fn, void *userdata) {
  _cleanup_close_ int tasks = openat(pfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tasks < 0) {
    return -1;
  }
  char buf[4096];
  DirReader r = {.fd = tasks, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  while ((de = dir_reader_next(&r)) != NULL) {
    if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !fn(tasks, de->d_name, userdata)) {
      return 1;
    }
  }
  return 0;
}

/* Whether the thread is stopped, dead or a zombie (or waits in vfork). */
static bool task_stopped(int tasks, const char *tid, void *userdata) {
  (void)userdata;
  char stat[512];
  if (read_task_file(tasks, tid, "stat", stat, sizeof(stat)) <= 0) {
    return true; /* gone */
  }
  const char *close_paren = strrchr(stat, ')');
  if (close_paren == NULL || close_paren[1] != ' ') {
    return true;
  }
  char state = close_paren[2];
  return (state == 'D' && in_vfork(tasks, tid)) || state == 'T' || state == 't' ||
         state == 'Z' || state == 'X' || state == 'x';
}

/* Whether every thread of the process at /proc/N (dirfd) is. */
static bool process_stopped(int pfd) {
  return each_task(pfd, task_stopped, NULL) != 1;
}

typedef bool (*ProcessFn)(Guard *g, const char *pid, int pfd, void *userdata);
static int each_process_in(int proc_fd, Guard *g, ProcessFn fn, void *userdata);
static int each_process(Guard *g, ProcessFn fn, void *userdata) {
  return each_process_in(g->proc_fd, g, fn, userdata);
}

/* Calls fn for each process of the sandbox but its PID 1, with a pidfd
 * (the /proc/N directory) of it. */
static int each_process_in(int proc_fd, Guard *g, ProcessFn fn, void *userdata) {
  _cleanup_close_ int dir = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    return -errno;
  }
  char buf[8192];
  DirReader r = {.fd = dir, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  while ((de = dir_reader_next(&r)) != NULL) {
    if (de->d_name[0] < '0' || de->d_name[0] > '9' || streq(de->d_name, "1")) {
      continue;
    }
    int pfd = openat(dir, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0) {
      continue; /* gone */
    }
    if (!fn(g, de->d_name, pfd, userdata)) {
      close(pfd);
    }
  }
  return errno != 0 ? -errno : 0;
}

/* Why the sandbox was stopped when something in it ran while frozen. */
static const char *frozen_breach(void) {
  return _("a process of the sandbox ran while it was frozen (woken by a timer or a file "
           "notification?), so what changed meanwhile may have been written");
}

/* What the frozen sandbox looks like (pid1_snapshot()). */
typedef struct {
  char *text;
} Snapshot;

static int snapshot_take(int proc_fd, Snapshot *ret) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (f == NULL) {
    oom();
  }
  int r = pid1_snapshot(proc_fd, f);
  if (fclose(f) != 0) {
    oom();
  }
  ret->text = text;
  return r;
}

static void snapshot_clear(Snapshot *s) {
  free(s->text);
  s->text = NULL;
}

typedef struct {
  bool running;
  /* sandbox pids of the frozen, parallel to g->frozen */
  int *pids;
} FreezePass;

static bool freeze_one(Guard *g, const char *pid, int pfd, void *userdata) {
  FreezePass *p = userdata;
  if (process_stopped(pfd)) {
    return false;
  }
  p->running = true;
  (void)pidfd_signal(pfd, SIGSTOP);
  int n = atoi(pid);
  for (size_t i = 0; i < g->n_frozen; i++) {
    if (p->pids[i] == n) {
      return false; /* stopped before, continued since by another */
    }
  }
  size_t cap = g->cap_frozen;
  *(int *)grow_array(&g->frozen, &g->n_frozen, &g->cap_frozen, sizeof(int)) = pfd;
  if (g->cap_frozen != cap) {
    p->pids = xreallocarray(p->pids, g->cap_frozen, sizeof(int));
  }
  p->pids[g->n_frozen - 1] = n;
  return true;
}

/* The pid, in this process's PID namespace, of the sandbox's `pid`
 * (NS_GET_PID_FROM_PIDNS, Linux 6.11), or -1. */
#ifndef NS_GET_PID_FROM_PIDNS
#define NS_GET_PID_FROM_PIDNS _IOR(0xb7, 0x6, int)
#endif
static pid_t pid_outside(const Guard *g, const char *pid) {
  if (g->pidns_fd < 0) {
    return -1;
  }
  int r = ioctl(g->pidns_fd, NS_GET_PID_FROM_PIDNS, (unsigned long)atoi(pid));
  return r > 0 ? (pid_t)r : -1;
}

static bool hold_task(int tasks, const char *tid, void *userdata) {
  (void)tasks;
  Guard *g = userdata;
  pid_t t = pid_outside(g, tid);
  /* A stopped thread, seized, moves to a ptrace stop, which SIGCONT does
   * not end (with PTRACE_SEIZE it is only told of it): it runs again
   * when released. One traced already (a debugger inside) cannot be
   * held: PID 1 still watches it. */
  if (t > 0 && ptrace(PTRACE_SEIZE, t, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL) == 0) {
    *(pid_t *)grow_array(&g->held, &g->n_held, &g->cap_held, sizeof(pid_t)) = t;
  }
  return true;
}

static bool hold_one(Guard *g, const char *pid, int pfd, void *userdata) {
  (void)pid;
  (void)userdata;
  (void)each_task(pfd, hold_task, g);
  return false;
}

/* SIGSTOP is no lock: the kernel itself continues a stopped process on
 * a signal it was asked to send (a POSIX timer, F_SETSIG). Every thread
 * of the frozen sandbox is also held with ptrace, which nothing but the
 * guard ends. */
static void hold_frozen(Guard *g) {
  (void)each_process(g, hold_one, NULL);
}

static void release_held(Guard *g) {
  for (size_t i = 0; i < g->n_held; i++) {
    if (ptrace(PTRACE_DETACH, g->held[i], NULL, NULL) < 0 && g->held[i] != g->cmd_pid) {
      /* Killed meanwhile: what the tracer must collect. */
      (void)waitpid(g->held[i], NULL, WNOHANG | __WALL);
    }
  }
  free(g->held);
  g->held = NULL;
  g->n_held = g->cap_held = 0;
}

/* From now on PID 1 ends the sandbox if anything in it runs. */
static int watch_frozen(Guard *g) {
  size_t len = strlen(g->frozen_state);
  _cleanup_free_ char *msg = xmalloc(len + 2);
  msg[0] = 'W';
  memcpy(msg + 1, g->frozen_state, len + 1);
  int r = send_msg(g->init_sock, msg, len + 2, NULL, 0);
  g->watching = r == 0;
  return r;
}

/* PID 1 stops watching (before anything in the sandbox is let run).
 * false: it is gone, for it found something running. */
static bool unwatch_frozen(Guard *g) {
  if (!g->watching) {
    return true;
  }
  g->watching = false;
  if (send_msg(g->init_sock, "U", 1, NULL, 0) < 0) {
    return false;
  }
  struct pollfd pf = {.fd = g->init_sock, .events = POLLIN};
  char buf[8];
  return poll(&pf, 1, 5000) == 1 && recv_msg(g->init_sock, buf, sizeof(buf), NULL, 0, NULL) == 1 &&
         buf[0] == 'u';
}

static void thaw(Guard *g) {
  (void)unwatch_frozen(g);
  release_held(g);
  for (size_t i = 0; i < g->n_frozen; i++) {
    (void)pidfd_signal(g->frozen[i], SIGCONT);
    close(g->frozen[i]);
  }
  free(g->frozen);
  g->frozen = NULL;
  g->n_frozen = g->cap_frozen = 0;
  free(g->frozen_state);
  g->frozen_state = NULL;
}

/* Stops every process of the sandbox (those stopped already stay so, and
 * are not continued by thaw()), until a pass over /proc finds none
 * running: one forked during a pass is found by the next. */
static int freeze(Guard *g, Error *err) {
  FreezePass p = {0};
  int64_t deadline = now_ms() + FREEZE_MS;
  long wait_us = 50;
  for (;;) {
    p.running = false;
    int r = each_process(g, freeze_one, &p);
    if (r < 0) {
      free(p.pids);
      thaw(g);
      errno = -r;
      return error_set(err, -r, _("cannot list the sandbox's processes: %m"));
    }
    if (!p.running) {
      break;
    }
    if (now_ms() > deadline) {
      free(p.pids);
      thaw(g);
      return error_set(err, EBUSY,
                       _("a process of the sandbox did not stop within %d seconds (in an "
                         "uninterruptible system call?)"),
                       FREEZE_MS / 1000);
    }
    /* A process stops within microseconds of SIGSTOP, unless it is in
     * an uninterruptible call: the first passes come soon after. */
    sleep_us(wait_us);
    wait_us = wait_us < 1000 ? wait_us * 2 : 1000;
  }
  free(p.pids);
  hold_frozen(g);
  Snapshot snap = {0};
  if (snapshot_take(g->proc_fd, &snap) < 0) {
    snapshot_clear(&snap);
    thaw(g);
    return error_set(err, EIO, _("cannot list the sandbox's processes: %m"));
  }
  free(g->frozen_state);
  g->frozen_state = steal_pointer(&snap.text);
  if (watch_frozen(g) < 0) {
    thaw(g);
    return error_set(err, EIO, _("cannot freeze the sandbox: %m"));
  }
  return 0;
}

/* Mount ids, sorted: those a descriptor of a sandbox's process may be on
 * (see foreign_descriptor()). */
typedef struct {
  uint64_t *v;
  size_t n;
  size_t cap;
} MountIds;

static int u64_compare(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void mount_ids_add(MountIds *m, uint64_t id) {
  *(uint64_t *)grow_array(&m->v, &m->n, &m->cap, sizeof(uint64_t)) = id;
}

static void mount_ids_sort(MountIds *m) {
  qsort(m->v, m->n, sizeof(uint64_t), u64_compare);
}

static bool mount_ids_have(const MountIds *m, uint64_t id) {
  return m->n > 0 && bsearch(&id, m->v, m->n, sizeof(uint64_t), u64_compare) != NULL;
}

static void mount_ids_clear(MountIds *m) {
  free(m->v);
  *m = (MountIds){0};
}

/* The mount id of `name` (fd/N, cwd, root) of the process at /proc/N
 * (pfd): the mount the directory it names is reached through. 0: not
 * known. */
static uint64_t descriptor_mount(int pfd, const char *name) {
  struct statx stx;
  if (statx(pfd, name, AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID)) {
    return 0;
  }
  return stx.stx_mnt_id;
}

/* The protected paths that exist, sorted (strings_compare()). */
typedef struct {
  const char **v;
  size_t n;
} TargetIndex;

typedef struct {
  const Guard *g;
  const MountIds *allowed; /* the sandbox's mounts */
  const TargetIndex *targets;
  bool foreign;
} ForeignCheck;

/* Whether `dev` holds a protected path or a pin. */
static bool on_protected_fs(const Guard *g, dev_t dev) {
  for (size_t i = 0; i < g->n_objs; i++) {
    if (g->objs[i].dev == dev) {
      return true;
    }
  }
  return false;
}

/* Whether `path` is a protected path (one that exists), or below one:
 * it and each directory above it looked up, a binary search each. */
static bool at_or_below_target(const TargetIndex *t, const char *path) {
  char buf[PATH_MAX];
  size_t len = strlen(path);
  if (t->n == 0 || len >= sizeof(buf)) {
    return t->n > 0;
  }
  memcpy(buf, path, len + 1);
  for (;;) {
    const char *key = buf;
    if (bsearch(&key, t->v, t->n, sizeof(char *), strings_compare) != NULL) {
      return true;
    }
    char *slash = strrchr(buf, '/');
    if (slash == NULL || slash == buf) {
      return false;
    }
    *slash = '\0';
  }
}

/* Whether `path` still leads, for the guard, to the object `st`. */
static bool path_leads_to(const char *path, const struct stat *st) {
  struct stat now;
  return path[0] == '/' && fstatat(AT_FDCWD, path, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
         now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

/* Whether the mount `name` (a magic link of a thread's /proc directory
 * `tfd`) is reached through is read-only. Unreadable: false. */
static bool mount_read_only(int tfd, const char *name) {
  _cleanup_close_ int fd = openat(tfd, name, O_PATH | O_CLOEXEC);
  struct statvfs sv;
  return fd >= 0 && fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Whether `name` (cwd, root or fd/N of a thread's /proc directory `tfd`)
 * leads around the new mounts: a directory on a filesystem that holds a
 * protected path or a pin, reached through a mount the sandbox does not
 * have (a path walked from it bypasses them); a directory or file there
 * that is, or is below, a protected path, reached through a writable
 * mount (a handle taken before the user moved it into protection under a
 * pause: the agent's working directory in what became tests/golden, a
 * descriptor of a file in it, which writes once reopened through
 * /proc/self/fd even if it was opened only to read); or a mount namespace
 * other than the sandbox's, which setns(2) would enter. Gone: false;
 * unreadable: true. */
static bool foreign_descriptor(const ForeignCheck *c, int tfd, const char *name) {
  const Guard *g = c->g;
  struct stat st;
  if (fstatat(tfd, name, &st, 0) < 0) {
    return errno != ENOENT && errno != ESRCH;
  }
  if (st.st_dev == g->mntns_st.st_dev) { /* nsfs: a namespace */
    char link[64];
    ssize_t n = readlinkat(tfd, name, link, sizeof(link) - 1);
    return n < 0 || (n > 4 && memcmp(link, "mnt:", 4) == 0 && st.st_ino != g->mntns_st.st_ino);
  }
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
    return false;
  }
  if (!on_protected_fs(g, st.st_dev)) {
    return false;
  }
  char path[PATH_MAX];
  ssize_t n = readlinkat(tfd, name, path, sizeof(path) - 1);
  if (n < 0) {
    return errno != ENOENT && errno != ESRCH;
  }
  path[n] = '\0';
  /* On a mount the sandbox does not have: a directory is a way around
   * (none is passed in, sys_check_inherited_fds()); a file is one too
   * where that mount is writable and the file's path no longer leads to
   * it: one opened through a bind mount of a nested namespace since ended
   * has a path that says nothing of where it is. (A file the command
   * inherited, opened outside, has a path that leads to it; one opened
   * through the read-only mount of a protected file since replaced stays
   * read-only.) */
  uint64_t id = descriptor_mount(tfd, name);
  if (id != 0 && !mount_ids_have(c->allowed, id) &&
      (S_ISDIR(st.st_mode) || (!path_leads_to(path, &st) && !mount_read_only(tfd, name)))) {
    return true;
  }
  return at_or_below_target(c->targets, path) && !mount_read_only(tfd, name);
}

/* Whether thread `tid` (of the task directory `tasks`) is in a mount
 * namespace of its own, or holds a way around the new mounts as its
 * working or root directory or a descriptor. Each thread, since a thread
 * can have a mount namespace, a working directory and a descriptor table
 * of its own (unshare(2) of CLONE_NEWNS, CLONE_FS, CLONE_FILES in it).
 * What cannot be read counts against it. Sets c->foreign and stops. */
static bool task_foreign(int tasks, const char *tid, void *userdata) {
  ForeignCheck *c = userdata;
  _cleanup_close_ int tfd = openat(tasks, tid, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (tfd < 0 || (fstatat(tfd, "ns/mnt", &st, 0) < 0 && errno == ENOENT)) {
    return true; /* gone, or a thread that has left its namespaces */
  }
  if (fstatat(tfd, "ns/mnt", &st, 0) < 0 || st.st_dev != c->g->mntns_st.st_dev ||
      st.st_ino != c->g->mntns_st.st_ino || foreign_descriptor(c, tfd, "cwd") ||
      foreign_descriptor(c, tfd, "root")) {
    c->foreign = true;
    return false;
  }
  _cleanup_close_ int dir = openat(tfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    c->foreign = errno != ENOENT;
    return !c->foreign;
  }
  char buf[4096];
  DirReader r = {.fd = dir, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  char name[300];
  while ((de = dir_reader_next(&r)) != NULL) {
    if (de->d_name[0] < '0' || de->d_name[0] > '9') {
      continue;
    }
    snprintf(name, sizeof(name), "fd/%s", de->d_name);
    if (foreign_descriptor(c, tfd, name)) {
      c->foreign = true;
      return false;
    }
  }
  return true;
}

/* The whole of /proc/N/`name` (pfd: /proc/N), NUL-terminated, or NULL. */
static char *read_proc_text(int pfd, const char *name) {
  _cleanup_close_ int fd = openat(pfd, name, O_RDONLY | O_CLOEXEC);
  char *text = NULL;
  size_t len = 0;
  if (fd < 0 || read_fd_limited(fd, 256u * 1024u * 1024u, &text, &len) < 0) {
    return NULL;
  }
  return text;
}

/* Whether the shared mapping at `range` ("start-end") of the process at
 * /proc/N (pfd) may be made writable (VmFlags "mw" in its smaps): shared
 * and opened for writing, though mapped read-only for now. Unreadable:
 * true. */
static bool mapping_may_write(int pfd, const char *range) {
  _cleanup_free_ char *text = read_proc_text(pfd, "smaps");
  if (text == NULL) {
    return true;
  }
  /* The mapping's own lines start at its range, its VmFlags line ends
   * them. */
  size_t rlen = strlen(range);
  const char *at = text;
  while (strncmp(at, range, rlen) != 0 || at[rlen] != ' ') {
    at = strchr(at, '\n');
    if (at == NULL) {
      return true;
    }
    at++;
  }
  const char *flags = strstr(at, "\nVmFlags:");
  if (flags == NULL) {
    return true;
  }
  const char *eol = strchrnul(flags + 1, '\n');
  return memmem(flags, (size_t)(eol - flags), " mw", 3) != NULL;
}

/* Whether the process at /proc/N (pfd) has a shared file mapping that can
 * write (mapped writable, or opened for writing and so able to become
 * so) of a file on a filesystem that holds a protected path, where that
 * file is, or is below, a protected path, or its path no longer leads to
 * it (mapped through a mount since detached): a mapping writes through
 * whatever mount the file was opened through, and is no descriptor.
 * Unreadable: true. */
static bool maps_bypass(const ForeignCheck *c, int pfd) {
  const Guard *g = c->g;
  _cleanup_free_ char *text = read_proc_text(pfd, "maps");
  if (text == NULL) {
    return errno != ENOENT && errno != ESRCH;
  }
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char range[64], perms[8];
    unsigned maj, min;
    unsigned long long ino;
    int path_at = 0;
    if (sscanf(line, "%63s %7s %*s %x:%x %llu %n", range, perms, &maj, &min, &ino,
               &path_at) < 5 ||
        perms[3] != 's' || line[path_at] != '/') {
      continue;
    }
    if (!on_protected_fs(g, makedev(maj, min))) {
      continue;
    }
    const char *path = line + path_at;
    struct stat st = {.st_dev = makedev(maj, min), .st_ino = (ino_t)ino};
    if ((!path_leads_to(path, &st) || at_or_below_target(c->targets, path)) &&
        (perms[1] == 'w' || mapping_may_write(pfd, range))) {
      return true;
    }
  }
  return false;
}

typedef struct {
  MountIds allowed; /* the sandbox's mounts */
  size_t killed;
  TargetIndex targets;
} NestedPass;

/* A process in a mount namespace of its own (nested user and mount
 * namespaces made by the agent, in any of its threads) would not get the
 * new read-only mounts, or could unmount them: stopped for good. So is
 * one that holds such a namespace (a descriptor of it, to enter later),
 * or a directory on a mount of one (a descriptor handed to it before the
 * pause, or its working directory: a path walked from there reaches the
 * new file through a mount that never gets its read-only copy), or on
 * any mount the sandbox no longer has (a protected directory replaced
 * meanwhile: mount ids are reused, so one gone cannot be told from one of
 * a nested namespace). */
static bool kill_nested_one(Guard *g, const char *pid, int pfd, void *userdata) {
  (void)pid;
  NestedPass *p = userdata;
  /* Every thread, the first one's end not taken for the process's: its
   * other threads run on (pthread_exit(3) in main()). A thread that has
   * left its namespaces is past running. */
  ForeignCheck c = {g, &p->allowed, &p->targets, false};
  if (each_task(pfd, task_foreign, &c) < 0 || (!c.foreign && maps_bypass(&c, pfd))) {
    c.foreign = true;
  }
  if (c.foreign && pidfd_signal(pfd, SIGKILL) == 0) {
    p->killed++;
  }
  return false;
}

/* What kill_nested_one() lets a directory be on: a mount of the sandbox's
 * namespace as it is now. (The command starts with none other: ralon
 * refuses to pass it a directory opened outside, sys_check_inherited_fds().) */
static int nested_pass_init(Guard *g, NestedPass *p) {
  *p = (NestedPass){0};
  char *text = NULL;
  size_t len = 0;
  if (lseek(g->mountinfo_fd, 0, SEEK_SET) < 0 ||
      read_fd_limited(g->mountinfo_fd, 64u * 1024u * 1024u, &text, &len) < 0) {
    mount_ids_clear(&p->allowed);
    return -errno;
  }
  MountTable t = {0};
  mounts_parse(text, &t);
  free(text);
  for (size_t i = 0; i < t.n; i++) {
    mount_ids_add(&p->allowed, strtoull(t.v[i].id, NULL, 10));
  }
  mounts_clear(&t);
  mount_ids_sort(&p->allowed);
  p->targets.v = xcalloc(g->n_objs > 0 ? g->n_objs : 1, sizeof(char *));
  for (size_t i = 0; i < g->n_objs; i++) {
    if (g->objs[i].target && !g->objs[i].missing) {
      p->targets.v[p->targets.n++] = g->objs[i].path;
    }
  }
  qsort(p->targets.v, p->targets.n, sizeof(char *), strings_compare);
  return 0;
}

/* ---- re-protection (resume) ------------------------------------------- */

typedef struct {
  int32_t status; /* 0 unchanged, 1 mounted again, -errno */
  uint64_t dev;
  uint64_t ino;
  uint64_t nlink;
  uint64_t mnt_id; /* its mount (statx_mount_id()), 0: not known */
} Reprotected;

static int identity_of(int fd, struct stat *st, bool *mount_root, bool *read_only,
                       uint64_t *mnt_id) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
            STATX_TYPE | STATX_INO | RALON_STATX_MNT_ID_UNIQUE, &stx) < 0) {
    return -errno;
  }
  memset(st, 0, sizeof(*st));
  st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st->st_ino = (ino_t)stx.stx_ino;
  st->st_mode = stx.stx_mode;
  *mount_root = statx_mount_root(&stx) != 0;
  *mnt_id = statx_mount_root(&stx) > 0 ? statx_mount_id(&stx) : 0;
  struct statvfs vfs;
  if (fstatvfs(fd, &vfs) < 0) {
    return -errno;
  }
  *read_only = (vfs.f_flag & ST_RDONLY) != 0;
  return 0;
}

/* Puts a mount (read-only for a target) on whatever stands at o->path
 * now, by descriptor: resolved once without following symbolic links,
 * cloned, and moved onto the very object that was cloned. */
static Reprotected reprotect_one(const Obj *o, int64_t deadline) {
  Reprotected res = {0};
  _cleanup_close_ int fd = -1;
  while ((fd = sys_open_no_symlinks(o->path)) < 0 && errno == ENOENT && now_ms() < deadline) {
    sleep_ms(5);
  }
  if (fd < 0) {
    res.status = -errno;
    return res;
  }
  struct stat st;
  bool root, ro;
  int r = identity_of(fd, &st, &root, &ro, &res.mnt_id);
  if (r < 0) {
    res.status = r;
    return res;
  }
  res.dev = st.st_dev;
  res.ino = st.st_ino;
  struct stat lst;
  res.nlink = fstat(fd, &lst) == 0 ? lst.st_nlink : 1;
  if (root && (ro || !o->target) && st.st_dev == o->dev && st.st_ino == o->ino) {
    return res; /* the same object, still mounted as it was */
  }
  _cleanup_close_ int tree = (int)syscall(SYS_open_tree, fd, "",
                                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                              AT_RECURSIVE);
  if (tree < 0) {
    res.status = -errno;
    return res;
  }
  if (o->target) {
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                sizeof(attr)) < 0) {
      res.status = -errno;
      return res;
    }
  }
  if (syscall(SYS_move_mount, tree, "", fd, "",
              MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
    res.status = -errno;
    return res;
  }
  /* What the path reaches now must be that object, at the root of the
   * new mount. */
  _cleanup_close_ int again = sys_open_no_symlinks(o->path);
  struct stat st2;
  if (again < 0 || identity_of(again, &st2, &root, &ro, &res.mnt_id) < 0 || !root ||
      (o->target && !ro) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
    res.status = -ESTALE;
    return res;
  }
  res.status = 1;
  return res;
}

/* In a child that joins the sandbox's mount namespace (from the guard's
 * user namespace, the parent of the sandbox's, where it holds every
 * capability): each pin (parents first) and each protected path, a record
 * each on `out`. */
ATTR_NORETURN static void reprotect_child(Guard *g, int out) {
  if (setns(g->mntns_fd, CLONE_NEWNS) < 0 || chdir("/") < 0) {
    Reprotected fail = {.status = -errno};
    for (size_t i = 0; i < g->n_objs; i++) {
      (void)!write(out, &fail, sizeof(fail));
    }
    _exit(1);
  }
  /* One budget for the whole pass: many paths removed must not make it
   * wait for each. */
  int64_t deadline = now_ms() + MISSING_RETRY_MS;
  for (size_t i = 0; i < g->n_objs; i++) {
    Reprotected res = reprotect_one(&g->objs[i], deadline);
    if (write(out, &res, sizeof(res)) != (ssize_t)sizeof(res)) {
      _exit(1);
    }
  }
  _exit(0);
}

/* ---- the command's process -------------------------------------------- */

/* "E<errnum> <exit status>", NUL, the message: read by error_received(). */
static void child_fail(int sock, const Error *err) {
  _cleanup_free_ char *msg = xasprintf("E%d %d%c%s", err->errnum, err->exit_status, '\0',
                                       err->message ? err->message : "?");
  size_t len = strlen(msg) + 1 + strlen(msg + strlen(msg) + 1);
  (void)send_msg(sock, msg, len, NULL, 0);
}

/* What child_fail() sent: sets `err` (when not NULL) to it, and returns
 * the exit status it asks for (0: EXIT_ERROR). */
static int error_received(const char *buf, Error *err) {
  char *end = NULL;
  int errnum = (int)strtol(buf + 1, &end, 10);
  int status = (int)strtol(end, NULL, 10);
  status = status == EXIT_NOT_FOUND || status == EXIT_CANNOT_EXECUTE ? status : 0;
  if (err != NULL && err->message == NULL) {
    error_set(err, errnum, "%s", buf + strlen(buf) + 1);
    err->exit_status = status;
  }
  return status;
}

/* Everything the command's process does before it executes the command:
 * 0 when it may, -1 with `err` (to tell the guard), or 1 when a protected
 * path changed on the way (g->start_changed, and which in g->res).
 *
 * It runs in the guard's memory (command_start()), with the guard waiting
 * for it: what it writes there, the guard reads once it has gone on; its
 * descriptors, working directory, namespaces and credentials are its own. */
static int command_prepare(Guard *g, const GuardConfig *c, int sock, const char *cwd,
                           Error *err) {
  /* Dumpable while the second unshare writes its maps (the kernel makes
   * /proc/self of one that is not root's). The flag is the memory's, so
   * the guard's too: taken back once the namespace is locked and checked
   * (nothing of the sandbox runs before the execve; a tracer of the
   * user's own, as the tests' strace, can still read this process up to
   * there). */
  (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  /* A group of its own: kill(0, ...) from inside reaches no further. */
  (void)setpgid(0, 0);
  /* The sandbox's own /proc, of the PID namespace this process was born
   * in, where the command will find it: mounted here, in the guard's
   * mount namespace, before this process copies and locks it. No copy of
   * the namespace is made for it, and none dropped (each drop waits for
   * an RCU grace period), and nothing waits for another process. */
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
    return error_set(err, errno, _("cannot mount /proc for the sandbox's PID namespace: %m"));
  }
  if (mount_lock(c->plan, cwd, c->seal, err) < 0) {
    return -1;
  }
  /* What the guard needs of the sandbox: its mount namespace (to
   * re-protect on resume), its mount table (to notice a mount detached)
   * and its /proc (to freeze and thaw it). */
  static const char *const names[] = {"/proc/self/ns/mnt", "/proc/self/mountinfo", "/proc"};
  int fds[ELEMENTSOF(names)];
  for (size_t i = 0; i < ELEMENTSOF(names); i++) {
    fds[i] = open(names[i], O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) {
      error_set(err, errno, _("cannot open %s in the sandbox: %m"), names[i]);
      close_fds(fds, i);
      return -1;
    }
  }
  /* A pin or protected path changed since the binds is no longer the
   * object that was bound, or no longer a mount point in the locked
   * namespace: refuse to run. (A change after this check is the guard's
   * to find: it looks once more when its watches are set, once the
   * command runs.) Checked before the privileges go, as the guard would
   * see them. */
  if (check_at_start(g, fds[1]) > 0) {
    close_fds(fds, ELEMENTSOF(fds));
    g->start_changed = true;
    return 1;
  }
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if ((c->seal && landlock_seal(c->landlock_abi, err) < 0) || sys_drop_privileges(err) < 0 ||
      enforce_verify_missing(c->plan, err) < 0 || enforce_check_command(c->argv, err) < 0) {
    close_fds(fds, ELEMENTSOF(fds));
    return -1;
  }
  int r = send_msg(sock, "L", 1, fds, ELEMENTSOF(fds));
  close_fds(fds, ELEMENTSOF(fds));
  if (r < 0) {
    return error_set(err, -r, _("cannot start the sandbox: %m"));
  }
  /* The terminal's foreground, as a shell gives it to a job: taken here,
   * where the group exists (SIGTTOU is blocked still). */
  if (g->tty >= 0 && tcsetpgrp(g->tty, getpgrp()) == 0) {
    g->cmd_fg = true;
  }
  return 0;
}

typedef struct {
  Guard *g;
  int sock; /* this process's end of its socket to the guard */
  int peer; /* the guard's end */
  const char *cwd;
} CommandStart;

/* The command's process: clone(2)d with CLONE_VM | CLONE_VFORK, as
 * posix_spawn(3) starts a process, so that nothing of the guard's memory
 * is copied for the few steps before the execve, and the guard waits
 * meanwhile (the two never run on that memory at once). */
static int command_start(void *arg) {
#ifdef GUARD_ASAN
  /* AddressSanitizer's view of this thread's stack is the guard's (they
   * share its thread data): this one is the stack command_spawn() made. */
  __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
  const CommandStart *s = arg;
  Guard *g = s->g;
  const GuardConfig *c = g->c;
  /* This process has a copy of the descriptor table: closing the guard's
   * here closes nothing of the guard's. */
  close(s->peer);
  close(own_proc_fd);
  close(g->pidns_fd);
  Error err = {0};
  int r = command_prepare(g, c, s->sock, s->cwd, &err);
  if (r > 0) {
    _exit(127); /* a protected path changed: the guard refuses */
  }
  if (r == 0) {
    if (c->ready != NULL) {
      c->ready(c->userdata);
    }
    fflush(stdout);
    fflush(stderr);
    sigprocmask(SIG_SETMASK, &g->orig_mask, NULL);
    execvp(c->argv[0], c->argv);
    error_exec(&err, errno, c->argv[0]);
  }
  child_fail(s->sock, &err);
  error_clear(&err);
  _exit(127);
}

#if defined(PID1_SHARES_MEMORY) && !defined(GUARD_ASAN)
/* The gap between this process's frames in use and the top of the stack
 * the command's process starts on (command_spawn_here()). */
#define CMD_STACK_GAP (64u * 1024u)

/* Starts command_start() on this process's own stack, CMD_STACK_GAP below
 * this function's frame; returns when it has executed the command or
 * exited: its pid, or -1.
 *
 * Out of line, and with no locals, so that its frame is the lowest one in
 * use: every frame of the guard's (guard_run()'s alone is about 10 KB) is
 * above it. Below it only clone(3)'s own frame is written while the child
 * runs; the gap (64 KiB, where a few hundred bytes are used) leaves room
 * for that and for the frames of this function and clone() to grow in
 * later builds, without the child's stack ever reaching the live Guard or
 * clone()'s return address. Only where the stack grows down (x86-64 and
 * arm64, PID1_SHARES_MEMORY). */
__attribute__((noinline)) static pid_t command_spawn_here(CommandStart *s) {
  uintptr_t top = ((uintptr_t)__builtin_frame_address(0) - CMD_STACK_GAP) & ~(uintptr_t)63u;
  return clone(command_start, (void *)top, CLONE_VM | CLONE_VFORK | SIGCHLD, s);
}
#endif

/* Starts command_start(); returns when it has executed the command or
 * exited: its pid, or -1.
 *
 * The child runs in this process's memory until its execve, while this
 * process waits (CLONE_VFORK); so does PID 1, concurrently, where it
 * shares that memory (pid1.c), which is harmless: PID 1 touches no heap,
 * stdio or errno of this process's. A process that shares it and dies
 * half-way through a step (a fault, SIGKILL by its pid from outside) may
 * leave the guard's heap in any state; before Linux 5.16 a core-dumping
 * signal there kills the guard too, and PID 1 and the namespace with it. */
__attribute__((noinline)) static pid_t command_spawn(CommandStart *s) {
#if defined(PID1_SHARES_MEMORY) && !defined(GUARD_ASAN)
  if (!pid1_under_valgrind()) {
    /* On this process's own stack, well below the frames in use: it is
     * suspended until the child has gone, and the kernel grows the stack
     * for the child as for itself, with the gap below it that faults
     * rather than reach other memory (execvp(3) puts argc + 2 pointers on
     * it for a file without "#!": fewer bytes than the kernel put there
     * for the same arguments at this process's own start). No mapping is
     * made, none unmapped (which, with PID 1 on another processor in the
     * same memory, flushes its TLB too), and pages this process touched
     * before cost no fault. */
    return command_spawn_here(s);
  }
#endif
  /* A stack of its own where AddressSanitizer (which must see a stack
   * switch, and whose poisoned frames the child never leaves) or Valgrind
   * watches. execvp(3) puts argc + 2 pointers on it for a file without
   * "#!" (as posix_spawn(3) sizes its stack for them); pages never
   * touched cost nothing. Below it, a page that faults rather than reach
   * the guard's memory. */
  size_t argc = 0;
  while (s->g->c->argv[argc] != NULL) {
    argc++;
  }
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t size = 1024u * 1024u + (argc + 2) * sizeof(char *);
  size = (size + page - 1) / page * page;
  char *map = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) {
    return -1;
  }
  if (mprotect(map, page, PROT_NONE) < 0) {
    int saved = errno;
    (void)munmap(map, size + page);
    errno = saved;
    return -1;
  }
  char *stack = map + page;
#ifdef GUARD_ASAN
  pthread_attr_t attr;
  void *own = NULL;
  size_t own_size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    (void)pthread_attr_getstack(&attr, &own, &own_size);
    pthread_attr_destroy(&attr);
  }
  void *fake = NULL;
  __sanitizer_start_switch_fiber(&fake, stack, size);
#endif
  pid_t pid = clone(command_start, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, s);
  int saved = errno;
#ifdef GUARD_ASAN
  if (pid < 0) {
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL); /* the switch no child made */
  }
  /* Back on this stack, with its fake frames; and nothing of the child's
   * frames stays poisoned where a later mapping may land. */
  __sanitizer_start_switch_fiber(NULL, own, own_size);
  __sanitizer_finish_switch_fiber(fake, NULL, NULL);
  ASAN_UNPOISON_MEMORY_REGION(stack, size);
#endif
  (void)munmap(map, size + page);
  errno = saved;
  return pid;
}

/* ---- the guard -------------------------------------------------------- */

static void stop_sandbox(Guard *g) {
  /* The command's group first, directly: PID 1's death takes the rest of
   * the namespace with it, but only once PID 1 gets to run. */
  if (g->cmd_pid > 0 && !g->cmd_done) {
    (void)kill(-g->cmd_pid, SIGKILL);
  }
  if (g->init_pid > 0) {
    (void)kill(g->init_pid, SIGKILL);
  }
  /* A frozen sandbox is stopped where a protected path may be left
   * unprotected (a resume that failed): what was frozen is killed where
   * it stands, not continued until PID 1's end reaches it (a process in
   * a group of its own would run meanwhile). SIGKILL ends a process held
   * by ptrace too. */
  for (size_t i = 0; i < g->n_frozen; i++) {
    (void)pidfd_signal(g->frozen[i], SIGKILL);
  }
  thaw(g);
}

/* Waits for the command and PID 1 (which the kernel ends with all else in
 * the namespace), collecting every other child on the way: a thread the
 * guard held by ptrace that died before it let go is the guard's to
 * collect (release_held() could not), and PID 1's end waits for it. */
static void reap_all(Guard *g) {
  while (g->init_pid > 0 || (!g->cmd_done && g->cmd_pid > 0)) {
    int st;
    pid_t pid = waitpid(-1, &st, __WALL);
    if (pid < 0) {
      if (errno == EINTR) {
        continue;
      }
      break; /* ECHILD: none left */
    }
    if (pid == g->cmd_pid && !g->cmd_done && (WIFEXITED(st) || WIFSIGNALED(st))) {
      g->cmd_done = true;
      g->cmd_status = st;
    }
    if (pid == g->init_pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
      g->init_pid = 0;
    }
  }
  if (!g->cmd_done && g->cmd_pid > 0) {
    g->cmd_done = true;
    g->cmd_status = W_EXITCODE(0, SIGKILL);
  }
  g->init_pid = 0;
}

static bool count_one(Guard *g, const char *pid, int pfd, void *userdata) {
  (void)g;
  (void)pid;
  (void)pfd;
  (*(size_t *)userdata)++;
  return false;
}

static void handle_inotify(Guard *g);

/* The last look, once nothing is left in the sandbox to write: a change
 * made outside while the command, or what it left behind, still ran, and
 * whose report the loop had not read when the command ended, stops the
 * sandbox as any does (the agent may have written it meanwhile). */
static void last_look(Guard *g) {
  handle_inotify(g);
  struct pollfd pf = {.fd = g->mountinfo_fd, .events = POLLPRI};
  if (!g->res->stopped && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLPRI | POLLERR)) &&
      check_mounts(g) > 0) {
    g->res->stopped = true;
  }
}

/* The end of a session whose command has ended: PID 1 ends what is left
 * in the namespace, and says so ("K", pid1.c), then the guard has its
 * last look and removes its watches. false when PID 1 did not answer (it
 * had ended): then the kernel has ended the namespace with it. */
static bool end_through_init(Guard *g) {
  char b[8];
  /* Nothing but PID 1 left (the common end: the command's process
   * reaped, none other there, and only a process there could make one):
   * PID 1 has nothing to end; it ends when its socket closes, and
   * guard_clear() waits for it then. A zombie not yet reaped is still
   * listed, and goes the long way. */
  size_t others = 0;
  if (each_process(g, count_one, &others) == 0 && others == 0) {
    last_look(g);
    watches_end(g);
    return send_msg(g->init_sock, "E", 1, NULL, 0) >= 0;
  }
  if (send_msg(g->init_sock, "K", 1, NULL, 0) < 0) {
    return false;
  }
  ssize_t n;
  while ((n = recv_msg(g->init_sock, b, sizeof(b), NULL, 0, NULL)) == -EINTR) {
  }
  if (n != 1 || b[0] != 'k') {
    return false;
  }
  /* Nothing but PID 1 is left, and it ends when its socket closes
   * (guard_clear()). */
  last_look(g);
  watches_end(g);
  return true;
}

static void terminal_take_back(Guard *g) {
  if (g->tty >= 0 && g->cmd_fg && tcgetpgrp(g->tty) == g->cmd_pid) {
    (void)tcsetpgrp(g->tty, getpgrp());
  }
  /* Output the agent suspended (tcflow(TCOOFF)) must not keep the guard
   * from saying why it stopped it. */
  if (g->tty >= 0) {
    (void)tcflow(g->tty, TCOON);
  }
}

/* Stops this process with `sig`, as the command was stopped, so the shell
 * sees its job stop; once continued, gives the command the terminal again
 * if the shell gave it to this process. */
static void relay_stop(Guard *g, int sig) {
  bool had_fg = g->tty >= 0 && tcgetpgrp(g->tty) == g->cmd_pid;
  if (had_fg) {
    (void)tcsetpgrp(g->tty, getpgrp());
  }
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  if (sig == SIGSTOP) {
    (void)kill(getpid(), SIGSTOP);
  } else {
    (void)kill(getpid(), sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    sigprocmask(SIG_BLOCK, &one, NULL);
  }
  /* Continued. */
  g->cmd_fg = g->tty >= 0 && tcgetpgrp(g->tty) == getpgrp();
  if (g->cmd_fg) {
    (void)tcsetpgrp(g->tty, g->cmd_pid);
  }
}

static int resume(Guard *g, size_t *ret_reprotected, size_t *ret_killed, char ***ret_missing,
                  size_t *ret_n_missing, Error *err);
static void fail_closed(Guard *g, const Error *e);

/* The command stopped for job control (Ctrl-Z, a read in the
 * background): this process stops too. A stopped guard watches nothing,
 * so first everything in the sandbox is frozen (a process the agent
 * started in another group would run on, and kill(0, SIGSTOP) must not be
 * a way to stop the guard); once continued, what changed meanwhile was
 * changed with nothing running inside, and is re-protected as on `ralon
 * resume`. */
static void job_stop(Guard *g, int sig) {
  Error e = {0};
  if (freeze(g, &e) < 0) {
    /* Better the job not stopping than a guard asleep. */
    error_clear(&e);
    (void)kill(-g->cmd_pid, SIGCONT);
    return;
  }
  g->paused = true;
  relay_stop(g, sig);
  size_t before = g->res->n_changed;
  bool changed = check_identities(g) > 0 || check_mounts(g) > 0;
  if (!unwatch_frozen(g) || (changed && !pid1_snapshot_unchanged(g->proc_fd, g->frozen_state))) {
    /* Something inside ran while a protected path changed outside. */
    error_set(&e, EBUSY, "%s", frozen_breach());
    fail_closed(g, &e);
    error_clear(&e);
    return;
  }
  if (changed) {
    size_t reprotected, killed, n_missing;
    char **missing;
    if (resume(g, &reprotected, &killed, &missing, &n_missing, &e) < 0) {
      fail_closed(g, &e);
      error_clear(&e);
      return;
    }
    strings_free(missing, n_missing);
    for (size_t i = before; i < g->res->n_changed; i++) {
      free(g->res->changed[i]);
    }
    g->res->n_changed = before;
  } else {
    thaw(g);
    g->paused = false;
  }
  (void)kill(-g->cmd_pid, SIGCONT);
}

static void handle_child_exit(Guard *g) {
  int st;
  pid_t pid;
  /* __WALL: the threads held while frozen report to the guard too. */
  while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED | WCONTINUED | __WALL)) > 0) {
    if (pid == g->cmd_pid && WIFSTOPPED(st) && (st >> 16) != 0) {
      continue; /* a ptrace stop of the held command (hold_frozen()) */
    }
    if (pid == g->cmd_pid) {
      if (WIFSTOPPED(st)) {
        g->cmd_stopped = true;
        /* Only a stop for job control, where there is a terminal to give
         * back, stops the guard too (the shell then sees its job stop).
         * The command stopping itself (kill(0, SIGSTOP)) does not: a
         * stopped guard could answer no `ralon pause`. */
        int sig = WSTOPSIG(st);
        if (!g->paused && g->tty >= 0 &&
            (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)) {
          job_stop(g, sig);
        }
      } else if (WIFCONTINUED(st)) {
        g->cmd_stopped = false;
      } else {
        g->cmd_done = true;
        g->cmd_status = st;
      }
    } else if (pid == g->init_pid) {
      g->init_pid = 0;
      if (g->paused && g->res->failure == NULL) {
        /* It watched the frozen sandbox, and found something running. */
        (void)check_identities(g);
        g->res->failure =
            xstrdup(frozen_breach());
        g->res->stopped = true;
      }
      if (!g->cmd_done) {
        /* Nothing in the namespace outlives its PID 1. */
        while (waitpid(g->cmd_pid, &st, 0) < 0 && errno == EINTR) {
        }
        g->cmd_done = true;
        g->cmd_status = st;
      }
    }
  }
}

static void handle_signal(Guard *g, int sig) {
  switch (sig) {
  case SIGCHLD:
    handle_child_exit(g);
    break;
  case SIGCONT:
    if (g->cmd_stopped && !g->paused) {
      (void)kill(-g->cmd_pid, SIGCONT);
    }
    break;
  case SIGTTIN:
  case SIGTTOU:
  case SIGWINCH:
  case SIGPIPE:
    break;
  default:
    /* Sent to ralon (by `kill`, `timeout`, a shell ending its jobs): meant
     * for the command, as if it had been started directly. */
    if (!g->cmd_done) {
      (void)kill(g->cmd_pid, sig);
    }
    break;
  }
}

static void reply(int fd, const char *const *fields, size_t n) {
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    len += strlen(fields[i]) + 1;
  }
  _cleanup_free_ char *buf = xmalloc(len > 0 ? len : 1);
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(fields[i]) + 1;
    memcpy(buf + off, fields[i], l);
    off += l;
  }
  if (len > MSG_MAX) {
    len = MSG_MAX;
  }
  (void)send_msg(fd, buf, len, NULL, 0);
}

static void drop_client(Guard *g, size_t i) {
  close(g->clients[i]);
  g->clients[i] = g->clients[--g->n_clients];
}

/* resume() failed: nothing can be trusted any more. */
static void fail_closed(Guard *g, const Error *e) {
  free(g->res->failure);
  g->res->failure = xstrdup(e->message ? e->message : "?");
  g->res->stopped = true;
  stop_sandbox(g);
}

static void do_resume(Guard *g, int fd) {
  size_t reprotected = 0, killed = 0, n_missing = 0;
  char **missing = NULL;
  Error e = {0};
  if (!g->paused) {
    if (fd >= 0) {
      reply(fd, (const char *[]){"not-paused"}, 1);
    }
    return;
  }
  if (resume(g, &reprotected, &killed, &missing, &n_missing, &e) < 0) {
    if (fd >= 0) {
      reply(fd, (const char *[]){"error", e.message ? e.message : "?"}, 2);
    }
    fail_closed(g, &e);
    error_clear(&e);
    return;
  }
  if (fd >= 0) {
    const char **f = xcalloc(3 + n_missing, sizeof(char *));
    char a[32], b[32];
    snprintf(a, sizeof(a), "%zu", reprotected);
    snprintf(b, sizeof(b), "%zu", killed);
    f[0] = "ok";
    f[1] = a;
    f[2] = b;
    for (size_t i = 0; i < n_missing; i++) {
      f[3 + i] = missing[i];
    }
    reply(fd, f, 3 + n_missing);
    free(f);
  }
  strings_free(missing, n_missing);
}

static void handle_request(Guard *g, size_t i) {
  int fd = g->clients[i];
  char buf[256];
  ssize_t n = recv_msg(fd, buf, sizeof(buf), NULL, 0, NULL);
  if (n <= 0) {
    bool hold = fd == g->hold_fd;
    if (hold) {
      g->hold_fd = -1;
    }
    drop_client(g, i);
    if (hold && g->paused) {
      do_resume(g, -1); /* `ralon pause -- CMD` went without resuming */
    }
    return;
  }
  unsigned seconds = 0;
  int hold = 0;
  if (sscanf(buf, "pause %u %d", &seconds, &hold) == 2) {
    if (!g->paused) {
      Error e = {0};
      if (freeze(g, &e) < 0) {
        reply(fd, (const char *[]){"error", e.message}, 2);
        error_clear(&e);
        return;
      }
      g->paused = true;
    }
    g->pause_deadline = seconds > 0 ? now_ms() + (int64_t)seconds * 1000 : 0;
    if (hold) {
      g->hold_fd = fd;
    }
    reply(fd, (const char *[]){"ok"}, 1);
  } else if (streq(buf, "resume")) {
    if (g->hold_fd == fd) {
      g->hold_fd = -1;
    }
    do_resume(g, fd);
  } else {
    reply(fd, (const char *[]){"error", "unknown request"}, 2);
  }
}

static void handle_inotify(Guard *g) {
  char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
  bool matters = false;
  ssize_t n;
  while ((n = read(g->ino_fd, buf, sizeof(buf))) > 0) {
    for (char *p = buf; p < buf + n;) {
      const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
      matters = matters || event_matters(g, ev);
      p += sizeof(*ev) + ev->len;
    }
  }
  if (matters && !g->paused && check_identities(g) > 0) {
    g->res->stopped = true;
  }
}

static int resume(Guard *g, size_t *ret_reprotected, size_t *ret_killed, char ***ret_missing,
                  size_t *ret_n_missing, Error *err) {
  size_t killed = 0;
  if (!unwatch_frozen(g) || !pid1_snapshot_unchanged(g->proc_fd, g->frozen_state)) {
    /* What changed meanwhile may have been written: name it. */
    (void)check_identities(g);
    return error_set(err, EBUSY, "%s", frozen_breach());
  }
  NestedPass nested;
  int r0 = nested_pass_init(g, &nested);
  if (r0 < 0) {
    errno = -r0;
    return error_set(err, errno, _("cannot read the sandbox's mount table: %m"));
  }
  r0 = each_process(g, kill_nested_one, &nested);
  killed = nested.killed;
  mount_ids_clear(&nested.allowed);
  free(nested.targets.v);
  if (r0 < 0) {
    errno = -r0;
    return error_set(err, errno, _("cannot list the sandbox's processes: %m"));
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    return error_set(err, errno, _("cannot re-protect the sandbox: %m"));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return error_set(err, errno, _("cannot re-protect the sandbox: %m"));
  }
  if (pid == 0) {
    close(p[0]);
    reprotect_child(g, p[1]);
  }
  close(p[1]);
  Reprotected *res = xcalloc(g->n_objs > 0 ? g->n_objs : 1, sizeof(Reprotected));
  size_t got = 0;
  while (got < g->n_objs) {
    ssize_t n = read(p[0], (char *)res + got * sizeof(Reprotected),
                     (g->n_objs - got) * sizeof(Reprotected));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    got += (size_t)n / sizeof(Reprotected);
  }
  close(p[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  size_t reprotected = 0;
  char **missing = NULL;
  size_t n_missing = 0;
  int r = 0;
  /* Nothing can be bound at a name that does not exist: a protected path
   * missing now is watched by its name until a resume finds it again. */
  size_t keep = 0;
  for (size_t i = 0; i < g->n_objs && r == 0; i++) {
    Obj *o = &g->objs[i];
    if (i >= got) {
      r = error_set(err, EIO, _("cannot re-protect %s: the helper ended early"), o->path);
    } else if (res[i].status == -ENOENT && o->target) {
      missing = xreallocarray(missing, n_missing + 1, sizeof(char *));
      missing[n_missing++] = xstrdup(o->path);
      *o = (Obj){.path = o->path, .target = true, .missing = true};
    } else if (res[i].status < 0) {
      errno = -res[i].status;
      r = error_set(err, errno, _("cannot re-protect %s: %m"), o->path);
    } else {
      reprotected += res[i].status == 1;
      o->missing = false;
      o->dev = (dev_t)res[i].dev;
      o->ino = (ino_t)res[i].ino;
      o->nlink = (nlink_t)res[i].nlink;
      o->mnt_id = res[i].mnt_id;
    }
    g->objs[keep++] = *o;
  }
  free(res);
  if (r < 0) {
    for (size_t i = keep; i < g->n_objs; i++) {
      free(g->objs[i].path);
    }
    g->n_objs = keep;
    strings_free(missing, n_missing);
    return -1;
  }
  g->n_objs = keep;
  /* Watch what stands there now, then look once more: a change made
   * after the helper's check but before the watch would go unseen. */
  if (watch_all(g, err) < 0) {
    strings_free(missing, n_missing);
    return -1;
  }
  size_t before = g->res->n_changed;
  if (check_identities(g) > 0 || check_mounts(g) > 0) {
    _cleanup_free_ char *what = xstrdup(g->res->changed[before]);
    strings_free(missing, n_missing);
    return error_set(err, ESTALE, _("%s changed again while it was being re-protected"), what);
  }
  thaw(g);
  g->paused = false;
  g->pause_deadline = 0;
  *ret_reprotected = reprotected;
  *ret_killed = killed;
  *ret_missing = missing;
  *ret_n_missing = n_missing;
  return 0;
}

static int guard_listen(Guard *g) {
  _cleanup_free_ char *prefix = guard_socket_prefix(geteuid(), g->c->root);
  g->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (g->listen_fd < 0) {
    return -errno;
  }
  /* The pid makes the name unique; a name taken already (something
   * squatting it) gets a counter. */
  for (unsigned k = 0; k < 64; k++) {
    _cleanup_free_ char *name = xasprintf("%s%d.%u", prefix, (int)getpid(), k);
    struct sockaddr_un sa;
    socklen_t len = abstract_address(&sa, name);
    if (bind(g->listen_fd, (struct sockaddr *)&sa, len) == 0) {
      return listen(g->listen_fd, MAX_CLIENTS) < 0 ? -errno : 0;
    }
    if (errno != EADDRINUSE) {
      break;
    }
  }
  return -errno;
}

static void accept_client(Guard *g) {
  int fd;
  /* A few a round: the name can be reached from inside too, and a flood
   * of connections must not keep the guard from its watches. */
  for (int k = 0; k < 4 && (fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0; k++) {
    if (!peer_trusted(fd, NULL) || g->n_clients >= MAX_CLIENTS) {
      close(fd);
      continue;
    }
    g->clients[g->n_clients++] = fd;
  }
}

static void guard_loop(Guard *g) {
  while (!g->cmd_done && !g->res->stopped) {
    struct pollfd pf[5 + MAX_CLIENTS];
    size_t n = 0;
    pf[n++] = (struct pollfd){.fd = g->sigfd, .events = POLLIN};
    pf[n++] = (struct pollfd){.fd = g->ino_fd, .events = POLLIN};
    pf[n++] = (struct pollfd){.fd = g->mountinfo_fd, .events = POLLPRI};
    pf[n++] = (struct pollfd){.fd = g->listen_fd, .events = POLLIN};
    pf[n++] = (struct pollfd){.fd = g->cmd_sock, .events = POLLIN};
    for (size_t i = 0; i < g->n_clients; i++) {
      pf[n++] = (struct pollfd){.fd = g->clients[i], .events = POLLIN};
    }
    int timeout = -1;
    if (g->paused && g->pause_deadline > 0) {
      int64_t left = g->pause_deadline - now_ms();
      timeout = left > 0 ? (int)(left < INT_MAX ? left : INT_MAX) : 0;
    }
    int r = poll(pf, n, timeout);
    if (r < 0 && errno != EINTR) {
      g->res->failure = xasprintf(_("the guard cannot wait for events: %s"), strerror(errno));
      g->res->stopped = true;
      break;
    }
    if (g->paused && g->pause_deadline > 0 && now_ms() >= g->pause_deadline) {
      do_resume(g, -1);
      continue;
    }
    if (r <= 0) {
      continue;
    }
    if (pf[0].revents) {
      struct signalfd_siginfo si;
      while (read(g->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        handle_signal(g, (int)si.ssi_signo);
      }
    }
    if (pf[1].revents) {
      handle_inotify(g);
    }
    if ((pf[2].revents & (POLLPRI | POLLERR)) && !g->paused && check_mounts(g) > 0) {
      g->res->stopped = true;
    }
    if (pf[3].revents) {
      accept_client(g);
    }
    if (pf[4].revents) {
      /* The command failed after the guard let it go (execve). */
      char buf[4096];
      ssize_t m = recv_msg(g->cmd_sock, buf, sizeof(buf), NULL, 0, NULL);
      if (m > 1 && buf[0] == 'E' && g->res->failure == NULL) {
        g->res->failure = xstrdup(buf + strlen(buf) + 1);
        g->exec_failure = error_received(buf, NULL);
      }
      if (m <= 0) {
        close(g->cmd_sock);
        g->cmd_sock = -1;
      }
    }
    /* Clients last, from the end: handling one may drop it. */
    for (size_t i = g->n_clients; i-- > 0;) {
      if (pf[5 + i].revents) {
        handle_request(g, i);
      }
    }
  }
}

static int wait_locked(Guard *g, Error *err) {
  char buf[4096];
  int fds[3];
  size_t n_fds = 0;
  ssize_t n = recv_msg(g->cmd_sock, buf, sizeof(buf), fds, ELEMENTSOF(fds), &n_fds);
  if (n > 1 && buf[0] == 'E') {
    for (size_t i = 0; i < n_fds; i++) {
      close(fds[i]);
    }
    (void)error_received(buf, err);
    return -1;
  }
  if (n != 1 || buf[0] != 'L' || n_fds != ELEMENTSOF(fds)) {
    for (size_t i = 0; i < n_fds; i++) {
      close(fds[i]);
    }
    return error_set(err, EIO, _("the sandbox ended while it was being set up"));
  }
  g->mntns_fd = fds[0];
  g->mountinfo_fd = fds[1];
  g->proc_fd = fds[2];
  if (fstat(g->mntns_fd, &g->mntns_st) < 0) {
    return error_set(err, errno, _("cannot look at the sandbox's namespace: %m"));
  }
  /* Its mounts are asked about by id (check_mounts()) once the kernel has
   * said of each that it is there: it also says "not there" of every
   * mount of a namespace this process may not ask about. One gone
   * already leaves it to the table, which finds it missing too. */
  uint64_t id = sys_mount_ns_id(g->mntns_fd);
  bool by_id = id != 0;
  for (size_t i = 0; i < g->n_objs && by_id; i++) {
    by_id = g->objs[i].mnt_id != 0 && sys_mount_in_ns(g->objs[i].mnt_id, id) == 1;
  }
  g->mntns_id = by_id ? id : 0;
  return 0;
}

static void guard_clear(Guard *g) {
  /* The socket to PID 1 last: PID 1 ends when it closes, and until then
   * holds its own references to the sandbox's namespaces and /proc, so
   * that none of these closes is the last one, which would wait for a
   * grace period (pid1.c, "K"). The inotify instance once PID 1 has
   * ended (watches_end()). */
  int *fds[] = {&g->cmd_sock, &g->sigfd,     &g->mountinfo_fd, &g->proc_fd, &g->mntns_fd,
                &g->listen_fd, &g->pidns_fd, &g->tty,          &g->init_sock};
  for (size_t i = 0; i < g->n_clients; i++) {
    close(g->clients[i]);
  }
  g->n_clients = 0;
  if (own_proc_fd >= 0) {
    close(own_proc_fd);
    own_proc_fd = -1;
  }
  for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
  }
  /* PID 1 ends on that close; nothing of the session outlives `ralon
   * run`, so it is waited for (its exit closes the last references to
   * the sandbox's namespaces: the grace periods those take are the
   * caller's time, as they must be). */
  if (g->init_pid > 0) {
    int st;
    while (waitpid(g->init_pid, &st, __WALL) < 0 && errno == EINTR) {
    }
    g->init_pid = 0;
  }
  if (g->ino_fd >= 0) {
    close(g->ino_fd);
    g->ino_fd = -1;
  }
  thaw(g);
  for (size_t i = 0; i < g->n_objs; i++) {
    free(g->objs[i].path);
  }
  free(g->objs);
  g->objs = NULL;
  g->n_objs = 0;
  dir_watches_clear(g);
}

/* The terminal to give the command, or -1: the one this process is in
 * the foreground of, when it reads from it (a command a script starts in
 * the background, with job control off, shares the script's group but
 * has /dev/null for input) or leads a job of its own. */
static int foreground_terminal(void) {
  if (isatty(0) && tcgetpgrp(0) == getpgrp()) {
    return fcntl(0, F_DUPFD_CLOEXEC, 3);
  }
  for (int fd = 1; fd <= 2 && getpgrp() == getpid(); fd++) {
    if (isatty(fd) && tcgetpgrp(fd) == getpgrp()) {
      return fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
  }
  return -1;
}

static bool forks_into_sandbox;

bool guard_forks_into_sandbox(void) {
  return forks_into_sandbox;
}

int guard_run(const GuardConfig *c, GuardResult *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  Guard g = {.c = c, .cmd_sock = -1, .init_sock = -1, .sigfd = -1, .ino_fd = -1,
             .mountinfo_fd = -1, .proc_fd = -1, .mntns_fd = -1, .listen_fd = -1, .tty = -1,
             .hold_fd = -1, .pidns_fd = -1, .res = ret};
  int r = -1;
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  if (cwd == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  /* libcap, with which the command's process drops its capabilities,
   * loaded once here, before the forks (bench/README.md). */
  if (caps_load(err) < 0 || mount_prepare(c->plan, err) < 0) {
    return -1;
  }
  /* Nothing in the sandbox may read this process's memory or attach to
   * it (set once its maps are written: a process that is not dumpable
   * has a /proc/self only root may write). */
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* What is watched: every pin and every protected object, as they are in
   * the namespace just made (the same inodes as outside). */
  g.objs = xcalloc(c->plan->n_pinned + c->plan->n_targets + 1, sizeof(Obj));
  for (size_t i = 0; i < c->plan->n_pinned; i++) {
    struct stat st;
    if (lstat(c->plan->pinned[i], &st) < 0) {
      error_set(err, errno, _("cannot check %s after mounting: %m"), c->plan->pinned[i]);
      goto out;
    }
    g.objs[g.n_objs++] =
        (Obj){xstrdup(c->plan->pinned[i]), st.st_dev, st.st_ino, 0, false, 0, false};
  }
  for (size_t i = 0; i < c->plan->n_targets; i++) {
    const PlanTarget *t = &c->plan->targets[i];
    struct stat st;
    if (!t->missing) {
      /* Links made before the start are the audit's to report. */
      nlink_t links = lstat(t->path, &st) == 0 ? st.st_nlink : 1;
      g.objs[g.n_objs++] = (Obj){xstrdup(t->path), t->dev, t->ino, links, true, 0, false};
    }
  }
  /* The watches are set once the command runs (below); the inotify
   * instance now, so that a limit of instances reached refuses to start. */
  if (watch_init(&g, err) < 0) {
    goto out;
  }
  /* Signals for the command, and the command's own reports, come through
   * a descriptor; SIGTTOU and SIGTTIN stay blocked, so the terminal never
   * stops this process. */
  /* Every signal that can be caught and is not a fault of this process's
   * own: sent to ralon, it is meant for the command. */
  sigset_t mask;
  sigfillset(&mask);
  const int own[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
  for (size_t i = 0; i < ELEMENTSOF(own); i++) {
    sigdelset(&mask, own[i]);
  }
  sigprocmask(SIG_BLOCK, &mask, &g.orig_mask);
  g.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (g.sigfd < 0) {
    error_set(err, errno, _("the guard cannot receive signals: %m"));
    goto restore;
  }
  if (unshare(CLONE_NEWPID) < 0) {
    error_set(err, errno, _("the mount backend failed at %s: %m"), "unshare(CLONE_NEWPID)");
    goto restore;
  }
  forks_into_sandbox = true;
  /* This PID namespace's /proc, for the peers of guard_listen(), before
   * the command's process mounts the sandbox's over it. */
  own_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (own_proc_fd < 0) {
    error_set(err, errno, _("cannot open %s: %m"), "/proc");
    goto restore;
  }
  int lifeline[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, lifeline) < 0) {
    error_set(err, errno, _("cannot start the sandbox: %m"));
    goto restore;
  }
  g.init_pid = pid1_start(lifeline[0]);
  if (g.init_pid < 0) {
    error_set(err, errno, _("cannot start the sandbox: %m"));
    close(lifeline[0]);
    close(lifeline[1]);
    goto restore;
  }
  close(lifeline[0]);
  /* To hold the frozen sandbox's threads by their pids here (a kernel
   * without NS_GET_PID_FROM_PIDNS only stops them). */
  g.pidns_fd = openat(own_proc_fd, "self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
  /* The guard's end stays open (close-on-exec) for as long as the guard
   * lives: init sees it hang up when the guard is gone. */
  g.init_sock = lifeline[1];
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
    error_set(err, errno, _("cannot start the sandbox: %m"));
    goto kill;
  }
  g.tty = foreground_terminal();
  /* The socket for `ralon pause` is there before the command runs: one
   * it runs itself finds it. */
  if (guard_listen(&g) < 0) {
    error_set(err, errno, _("the guard cannot listen for `ralon pause`: %m"));
    close(sp[0]);
    close(sp[1]);
    goto kill;
  }
  CommandStart start = {.g = &g, .sock = sp[1], .peer = sp[0], .cwd = cwd};
  g.cmd_pid = command_spawn(&start);
  /* Not dumpable again (command_prepare() made the shared memory so). */
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  close(sp[1]);
  g.cmd_sock = sp[0];
  if (g.cmd_pid < 0) {
    error_set(err, errno, _("cannot start the sandbox: %m"));
    goto kill;
  }
  if (g.start_changed) {
    error_set(err, ESTALE,
              _("%s changed while ralon started, after it was protected; refusing to run"),
              ret->changed[0]);
    goto kill;
  }
  if (wait_locked(&g, err) < 0) {
    goto kill;
  }
  /* The watches, now that the command runs: set before it, they would
   * delay its start, and the guard could not read them before its
   * execve anyway. Its process checked every pin and protected path just
   * before that; the guard looks once more once they are set, so that a
   * change made in between stops the sandbox, as a change the watches
   * see does (and as the events of one made before them, queued until
   * now, did). A watch that cannot be set (the limit of watches) stops
   * it too: a path left unwatched could change unseen. */
  Error we = {0};
  if (watch_add_all(&g, &we) < 0) {
    ret->failure = xstrdup(we.message);
    ret->watch_limit = we.errnum == ENOSPC;
    ret->stopped = true;
    error_clear(&we);
  } else if (check_identities(&g) > 0 || check_mounts(&g) > 0) {
    ret->stopped = true;
  }
  int held[] = {g.proc_fd, g.mntns_fd};
  if (send_msg(g.init_sock, "P", 1, held, ELEMENTSOF(held)) < 0) {
    error_set(err, errno, _("cannot start the sandbox: %m"));
    goto kill;
  }
  /* The command runs, unless its execve failed (its "E" is queued then,
   * for guard_loop()). */
  char next;
  if (c->started != NULL &&
      !(recv(g.cmd_sock, &next, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && next == 'E')) {
    c->started(c->userdata);
  }
  /* The guard sleeps until something changes, and must then act before
   * an agent writing in a loop gets in: a short slice lets it preempt an
   * agent on its processor as it wakes (bench/guard.py: after a backup by
   * rename the agent's write landed 2-5 times in 100 tries where it
   * landed 10-20). Asked here, after PID 1 and the command began, so
   * that they do not inherit it. Nothing depends on it. */
  (void)sys_prefer_short_slice();
  guard_loop(&g);
  /* The command has ended, or the guard stops it: so does everything it
   * left behind. */
  if (ret->stopped || g.paused || !g.cmd_done || !end_through_init(&g)) {
    stop_sandbox(&g);
    /* Once the kill is sent, not before: it must not wait. */
    watches_end(&g);
    reap_all(&g);
  }
  if (g.paused && !ret->stopped) {
    /* A frozen command does not end: PID 1 ended the sandbox, having
     * found something in it running (pid1.c). */
    (void)check_identities(&g);
    ret->failure =
        xstrdup(frozen_breach());
    ret->stopped = true;
  }
  terminal_take_back(&g);
  if (ret->failure != NULL && !ret->stopped) {
    /* The command could not be executed after all. */
    error_set(err, ENOEXEC, "%s", ret->failure);
    err->exit_status = g.exec_failure;
    goto restore;
  }
  ret->wstatus = g.cmd_status;
  r = 0;
  goto restore;

kill:
  stop_sandbox(&g);
  reap_all(&g);
  terminal_take_back(&g);
restore:
  /* Signals stay blocked: the caller reports, then reproduces the status
   * (guard_exit_status() unblocks what it raises). Nothing of the sandbox
   * is left to read this process: dumpable again, as any process that
   * exits (a leak checker at exit traces itself). */
  (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
out:
  guard_clear(&g);
  if (r < 0) {
    guard_result_clear(ret);
  }
  return r;
}

void guard_result_clear(GuardResult *r) {
  strings_free(r->changed, r->n_changed);
  free(r->failure);
  memset(r, 0, sizeof(*r));
}

int guard_exit_status(int wstatus) {
  if (WIFEXITED(wstatus)) {
    return WEXITSTATUS(wstatus);
  }
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    fflush(stdout);
    fflush(stderr);
    /* The command's core (if any) was its own: none of this process. */
    struct rlimit none = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    (void)kill(getpid(), sig);
    return 128 + sig;
  }
  return EXIT_ERROR;
}

/* ---- the client side -------------------------------------------------- */

/* Connects to the abstract socket `name`: a connected descriptor, or
 * -EAGAIN when its queue stayed full for CONNECT_WAIT_S, or another
 * -errno (ECONNREFUSED: gone meanwhile). A guard accepts and checks each
 * connection at once, so a full queue is one something keeps filling:
 * this waits for room as the guard makes it, rather than give up at the
 * first try. */
static int connect_guard(const char *name) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -errno;
  }
  struct timeval tv = {CONNECT_WAIT_S, 0};
  struct sockaddr_un sa;
  socklen_t len = abstract_address(&sa, name);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  int r;
  while ((r = connect(fd, (struct sockaddr *)&sa, len)) < 0 && errno == EINTR) {
  }
  if (r < 0) {
    int e = errno == EINPROGRESS || errno == ETIMEDOUT ? EAGAIN : errno;
    close(fd);
    return -e;
  }
  tv.tv_sec = 0;
  (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

static void peer_clear(GuardPeer *p) {
  if (p->fd >= 0) {
    close(p->fd);
  }
  strings_free(p->missing, p->n_missing);
  free(p->error);
  memset(p, 0, sizeof(*p));
  p->fd = -1;
}

void guard_peers_clear(GuardPeers *p) {
  for (size_t i = 0; i < p->n; i++) {
    peer_clear(&p->v[i]);
  }
  free(p->v);
  p->v = NULL;
  p->n = 0;
}

int guard_connect_all(const char *root, GuardPeers *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  _cleanup_free_ char *prefix = guard_socket_prefix(geteuid(), root);
  _cleanup_free_ char *table = read_text_file("/proc/net/unix", 256u * 1024u * 1024u);
  if (table == NULL) {
    return error_set(err, errno, _("cannot read %s: %m"), "/proc/net/unix");
  }
  size_t cap = 0;
  char **seen = NULL;
  size_t n_seen = 0;
  for (char *save = NULL, *line = strtok_r(table, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char *at = strstr(line, " @");
    if (at == NULL || !startswith(at + 2, prefix)) {
      continue;
    }
    const char *name = at + 2;
    bool dup = false;
    for (size_t i = 0; i < n_seen && !dup; i++) {
      dup = streq(seen[i], name);
    }
    if (dup) {
      continue;
    }
    seen = xreallocarray(seen, n_seen + 1, sizeof(char *));
    seen[n_seen++] = xstrdup(name);
    int fd = connect_guard(name);
    pid_t pid = 0;
    if (fd == -EAGAIN) {
      /* A name whose queue stayed full: a guard that a process (inside
       * a sandbox, say) keeps flooding with connections, or a name
       * squatted by one that accepts none. Either way it cannot be told
       * from a guard, so it is not skipped as if no sandbox ran. */
      GuardPeer *p = grow_array(&ret->v, &ret->n, &cap, sizeof(GuardPeer));
      p->fd = -1;
      p->error = xasprintf(_("the socket @%s did not accept a connection in %d s (a process "
                             "may be filling its queue), so a sandbox may not be frozen"),
                           name, CONNECT_WAIT_S);
      continue;
    }
    if (fd < 0 || !peer_trusted(fd, &pid)) {
      if (fd >= 0) {
        close(fd);
      }
      continue;
    }
    GuardPeer *p = grow_array(&ret->v, &ret->n, &cap, sizeof(GuardPeer));
    p->fd = fd;
    p->pid = pid;
  }
  strings_free(seen, n_seen);
  return 0;
}

/* Sends `req` and reads the NUL-separated answer into fields. */
static int ask(GuardPeer *p, const char *req, char **ret_buf, size_t *ret_len) {
  if (p->fd < 0) {
    return -ENOTCONN;
  }
  /* A pause answers within its freezing time; a resume may take as long
   * as re-protecting every path does. */
  struct timeval tv = {startswith(req, "pause") ? 30 : 0, 0};
  (void)setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int r = send_msg(p->fd, req, strlen(req) + 1, NULL, 0);
  if (r < 0) {
    return r;
  }
  char *buf = xmalloc(MSG_MAX + 1);
  ssize_t n = recv_msg(p->fd, buf, MSG_MAX + 1, NULL, 0, NULL);
  if (n <= 0) {
    free(buf);
    return n == 0 ? -ECONNRESET : (int)n;
  }
  *ret_buf = buf;
  *ret_len = (size_t)n;
  return 0;
}

static void peer_error(GuardPeer *p, int r, const char *buf) {
  free(p->error);
  if (buf != NULL) {
    p->error = xstrdup(buf);
  } else {
    p->error = xstrdup(strerror(-r));
  }
}

void guard_pause_all(GuardPeers *peers, unsigned seconds, bool hold) {
  _cleanup_free_ char *req = xasprintf("pause %u %d", seconds, hold ? 1 : 0);
  for (size_t i = 0; i < peers->n; i++) {
    GuardPeer *p = &peers->v[i];
    char *buf = NULL;
    size_t len = 0;
    if (p->fd < 0) {
      continue; /* never connected: its error says why */
    }
    int r = ask(p, req, &buf, &len);
    if (r < 0) {
      peer_error(p, r, NULL);
    } else if (streq(buf, "ok")) {
      p->paused = true;
    } else {
      peer_error(p, 0, streq(buf, "error") && strlen(buf) + 1 < len ? buf + 6 : buf);
    }
    free(buf);
  }
}

void guard_resume_all(GuardPeers *peers) {
  for (size_t i = 0; i < peers->n; i++) {
    GuardPeer *p = &peers->v[i];
    char *buf = NULL;
    size_t len = 0;
    if (p->fd < 0 && p->error != NULL) {
      continue; /* never connected: its error says why */
    }
    int r = ask(p, "resume", &buf, &len);
    if (r < 0) {
      peer_error(p, r, NULL);
      continue;
    }
    /* Fields: "ok", reprotected, killed, missing paths... */
    const char *f[3] = {NULL, NULL, NULL};
    size_t off = 0, k = 0;
    while (off < len && k < 3) {
      f[k++] = buf + off;
      off += strlen(buf + off) + 1;
    }
    if (f[0] != NULL && streq(f[0], "ok") && k == 3) {
      p->paused = false;
      p->n_reprotected = strtoul(f[1], NULL, 10);
      p->n_killed = strtoul(f[2], NULL, 10);
      while (off < len) {
        p->missing = xreallocarray(p->missing, p->n_missing + 1, sizeof(char *));
        p->missing[p->n_missing++] = xstrdup(buf + off);
        off += strlen(buf + off) + 1;
      }
    } else if (f[0] != NULL && streq(f[0], "not-paused")) {
      p->paused = false;
    } else {
      peer_error(p, 0, f[0] != NULL && streq(f[0], "error") && f[1] != NULL ? f[1] : buf);
    }
    free(buf);
  }
}
