/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "enforce/linux/caps.h"
#include "path.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

int sys_landlock_create_ruleset(const struct ralon_landlock_ruleset_attr *attr, size_t size,
                                uint32_t flags) {
  return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int sys_landlock_add_path_rule(int ruleset_fd, int parent_fd, uint64_t allowed) {
  struct landlock_path_beneath_attr pb = {
      .allowed_access = allowed,
      .parent_fd = parent_fd,
  };
  return (int)syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

int sys_landlock_restrict_self(int ruleset_fd) {
  return (int)syscall(SYS_landlock_restrict_self, ruleset_fd, 0);
}

/* statmount(2) (Linux 6.8), by its number where the C library's headers
 * do not have it yet: 457 on every architecture that numbers its system
 * calls from the common table (x86-64, arm64, riscv, ...). */
#if defined(SYS_statmount)
#define RALON_NR_statmount SYS_statmount
#elif defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || defined(__loongarch__)
#define RALON_NR_statmount 457
#endif
/* NS_GET_MNTNS_ID, <linux/nsfs.h> from Linux 6.11. */
#define RALON_NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)

/* struct mnt_id_req as of Linux 6.11 (MNT_ID_REQ_SIZE_VER1), which names
 * the namespace to look in. */
struct ralon_mnt_id_req {
  uint32_t size;
  uint32_t spare;
  uint64_t mnt_id;
  uint64_t param;
  uint64_t mnt_ns_id;
};

uint64_t sys_mount_ns_id(int ns_fd) {
  uint64_t id = 0;
  return ioctl(ns_fd, RALON_NS_GET_MNTNS_ID, &id) == 0 ? id : 0;
}

/* struct sched_attr as the kernel reads it (SCHED_ATTR_SIZE_VER0); glibc
 * 2.41 declares its own in <sched.h>, older headers only in
 * <linux/sched/types.h>, which conflicts with it. */
typedef struct {
  uint32_t size;
  uint32_t policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime;
  uint64_t deadline;
  uint64_t period;
} SchedAttr;
#define RALON_SCHED_FLAG_RESET_ON_FORK 0x01ULL

int sys_prefer_short_slice(void) {
  SchedAttr attr = {0};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) < 0) {
    return -errno;
  }
  if (attr.policy != SCHED_OTHER && attr.policy != SCHED_BATCH) {
    return 0;
  }
  /* The kernel clamps the slice to 0.1-100 ms; the policy, nice value and
   * reset-on-fork flag are the thread's own (a nice value lowered by the
   * user stays, one it cannot raise is not asked for). */
  attr.size = sizeof(attr);
  attr.flags &= RALON_SCHED_FLAG_RESET_ON_FORK;
  attr.runtime = 100 * 1000;
  attr.deadline = attr.period = 0;
  return syscall(SYS_sched_setattr, 0, &attr, 0) < 0 ? -errno : 0;
}

int sys_mount_in_ns(uint64_t mnt_id, uint64_t ns_id) {
#ifdef RALON_NR_statmount
  struct ralon_mnt_id_req req = {
      .size = sizeof(req), .mnt_id = mnt_id, .param = 0, .mnt_ns_id = ns_id};
  /* Nothing asked (param 0): only whether the mount is there. The buffer
   * is larger than struct statmount (512 bytes in Linux 6.18). */
  uint64_t buf[128];
  if (syscall(RALON_NR_statmount, &req, buf, sizeof(buf), 0) == 0) {
    return 1;
  }
  return errno == ENOENT ? 0 : -errno;
#else
  (void)mnt_id;
  (void)ns_id;
  return -ENOSYS;
#endif
}

int sys_landlock_abi(void) {
  int abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : abi;
}

static int write_file(const char *path, const char *text) {
  _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return -errno;
  }
  size_t len = strlen(text);
  ssize_t w = write(fd, text, len);
  if (w < 0) {
    return -errno;
  }
  return (size_t)w == len ? 0 : -EIO;
}

int sys_enter_namespaces(MountStep *ret_step) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  char map[64];
  int r;

  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
    *ret_step = MOUNT_STEP_UNSHARE;
    return -errno;
  }
  /* Required before an unprivileged gid_map; absent on very old kernels. */
  r = write_file("/proc/self/setgroups", "deny");
  if (r < 0 && r != -ENOENT) {
    *ret_step = MOUNT_STEP_SETGROUPS;
    return r;
  }
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  r = write_file("/proc/self/uid_map", map);
  if (r < 0) {
    *ret_step = MOUNT_STEP_UID_MAP;
    return r;
  }
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  r = write_file("/proc/self/gid_map", map);
  if (r < 0) {
    *ret_step = MOUNT_STEP_GID_MAP;
    return r;
  }
  return 0;
}

int sys_enter_mount_namespace(MountStep *ret_step) {
  /* Root (CAP_SYS_ADMIN) may mount in a mount namespace of its own and
   * needs no user namespace for it; the locking step makes one anyway,
   * and it is the change of owner between the two mount namespaces that
   * locks the mounts. A user namespace costs about as much as the mount
   * namespace again. The kernel decides: without CAP_SYS_ADMIN the
   * unshare fails (EPERM) and changes nothing, one system call as asking
   * for the capabilities would be. Refused (so, or a mount namespace owned
   * by a user namespace this process is not privileged in): the
   * unprivileged way, whose failure is the one to report. */
  if (unshare(CLONE_NEWNS) == 0) {
    return 0;
  }
  return sys_enter_namespaces(ret_step);
}

/* Mount flags to repeat on a remount of a mount with statvfs(3) flags
 * `f_flag`: those a less privileged namespace may not clear. */
unsigned long sys_locked_mount_flags_of(unsigned long f_flag) {
  unsigned long fl = 0;
  if (f_flag & ST_NOSUID) {
    fl |= MS_NOSUID;
  }
  if (f_flag & ST_NODEV) {
    fl |= MS_NODEV;
  }
  if (f_flag & ST_NOEXEC) {
    fl |= MS_NOEXEC;
  }
  if (f_flag & ST_NOATIME) {
    fl |= MS_NOATIME;
  }
  if (f_flag & ST_NODIRATIME) {
    fl |= MS_NODIRATIME;
  }
  if (f_flag & ST_RELATIME) {
    fl |= MS_RELATIME;
  }
  return fl;
}

unsigned long sys_locked_mount_flags(const char *path) {
  struct statvfs sv;
  return statvfs(path, &sv) < 0 ? 0 : sys_locked_mount_flags_of(sv.f_flag);
}

static int remount_read_only_tree(const char *path) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) {
    return -errno;
  }
  char *line = NULL;
  size_t cap = 0;
  int r = 0;
  /* mountinfo lists parents before children, which is the order needed. */
  while (getline(&line, &cap, f) > 0) {
    char mp[PATH_MAX + 1];
    if (sscanf(line, "%*s %*s %*s %*s %4096s", mp) != 1) {
      continue;
    }
    _cleanup_free_ char *point = path_unescape_mountinfo(mp);
    if (path_relative(path, point) == NULL) {
      continue;
    }
    unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | sys_locked_mount_flags(point);
    if (mount(NULL, point, NULL, fl, NULL) < 0) {
      r = -errno;
      break;
    }
  }
  free(line);
  fclose(f);
  return r;
}

int sys_make_read_only(const char *path) {
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
  if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) == 0) {
    return 0;
  }
  if (errno != ENOSYS) {
    return -errno;
  }
  return remount_read_only_tree(path);
}

static const char *const mount_step_names[_MOUNT_STEP_MAX] = {
    [MOUNT_STEP_NONE] = "none",
    [MOUNT_STEP_FORK] = "fork",
    [MOUNT_STEP_UNSHARE] = "unshare(CLONE_NEWUSER|CLONE_NEWNS)",
    [MOUNT_STEP_SETGROUPS] = "write /proc/self/setgroups",
    [MOUNT_STEP_UID_MAP] = "write /proc/self/uid_map",
    [MOUNT_STEP_GID_MAP] = "write /proc/self/gid_map",
    [MOUNT_STEP_PRIVATE] = "mount(MS_REC|MS_PRIVATE)",
    [MOUNT_STEP_BIND] = "mount(MS_BIND|MS_REC)",
    [MOUNT_STEP_READ_ONLY] = "mount_setattr(MOUNT_ATTR_RDONLY)",
    [MOUNT_STEP_LOCK] = "second unshare(CLONE_NEWUSER|CLONE_NEWNS)",
};

const char *sys_nested_hint(MountStep step) {
  if (getenv(RALON_ACTIVE_ROOT) == NULL) {
    return "";
  }
  if (step == MOUNT_STEP_UNSHARE) {
    /* TRANSLATORS: appended to a mount backend failure; keep the space. */
    return _(" (this runs inside another `ralon run`, whose restrictions stay in force here; "
             "under its mount backend's --seal, no user namespace can be made)");
  }
  if (step == MOUNT_STEP_PRIVATE || step == MOUNT_STEP_BIND || step == MOUNT_STEP_READ_ONLY) {
    /* TRANSLATORS: appended to a mount backend failure; keep the space. */
    return _(" (this runs inside another `ralon run`, whose restrictions stay in force here; "
             "under its landlock backend or --seal, nothing can be mounted)");
  }
  /* TRANSLATORS: appended to a mount backend failure; keep the space. */
  return _(" (this runs inside another `ralon run`, whose restrictions stay in force here)");
}

const char *mount_step_to_string(MountStep s) {
  if (s >= _MOUNT_STEP_MAX) {
    return "?";
  }
  return mount_step_names[s];
}

/* A /proc/sys/user/... quota: -1 when it cannot be read. */
static long namespace_quota(const char *name) {
  char file[64];
  snprintf(file, sizeof(file), "/proc/sys/user/%s", name);
  _cleanup_free_ char *text = read_text_file(file, 64);
  if (text == NULL) {
    return -1;
  }
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  return errno == 0 && end != text ? v : -1;
}

bool mount_probe_exhausted(const MountProbe *p, long max_user_namespaces,
                           long max_mnt_namespaces) {
  switch (p->errnum) {
  case ENOSPC:
    /* unshare(2): a quota of namespaces reached, or 32 nested user
     * namespaces; mount(2): the mount count limit. A quota of 0 is how
     * some systems turn user or mount namespaces off. */
    if (p->step == MOUNT_STEP_UNSHARE || p->step == MOUNT_STEP_LOCK) {
      return max_user_namespaces != 0 && max_mnt_namespaces != 0;
    }
    return true;
  case EUSERS: /* the nesting limit, before Linux 4.9 */
  case ENOMEM:
  case EAGAIN: /* fork(2): RLIMIT_NPROC */
  case EMFILE: /* pipe2(2) */
  case ENFILE:
    return true;
  default:
    return false;
  }
}

bool sys_mount_probe_exhausted(const MountProbe *p) {
  if (p->errnum == 0) {
    return false;
  }
  return mount_probe_exhausted(p, namespace_quota("max_user_namespaces"),
                               namespace_quota("max_mnt_namespaces"));
}

void sys_mount_probe(const char *path, MountProbe *ret) {
  int fds[2];
  memset(ret, 0, sizeof(*ret));
  if (pipe2(fds, O_CLOEXEC) < 0) {
    ret->step = MOUNT_STEP_FORK;
    ret->errnum = errno;
    return;
  }
  /* Where the caller blocks SIGCHLD, the child's would stay pending, and
   * pending signals survive execve: the command would start with one it
   * never caused. Whether one is pending already is noted, so that only
   * the probe's own is taken back. (A raw clone(2) without an exit signal
   * would avoid it, but its return values differ by architecture.) */
  sigset_t blocked, pending;
  bool take_back = sigprocmask(SIG_BLOCK, NULL, &blocked) == 0 &&
                   sigismember(&blocked, SIGCHLD) == 1 && sigpending(&pending) == 0 &&
                   sigismember(&pending, SIGCHLD) == 0;
  pid_t pid = fork();
  if (pid < 0) {
    ret->step = MOUNT_STEP_FORK;
    ret->errnum = errno;
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    MountProbe res = {MOUNT_STEP_NONE, 0};
    int r = sys_enter_mount_namespace(&res.step);
    if (r == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
      res.step = MOUNT_STEP_PRIVATE;
      r = -errno;
    }
    if (r == 0 && mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
      res.step = MOUNT_STEP_BIND;
      r = -errno;
    }
    if (r == 0 && (r = sys_make_read_only(path)) < 0) {
      res.step = MOUNT_STEP_READ_ONLY;
    }
    if (r == 0) {
      MountStep step;
      r = sys_enter_namespaces(&step);
      if (r < 0) {
        res.step = MOUNT_STEP_LOCK;
      }
    }
    res.errnum = -r;
    (void)!write(fds[1], &res, sizeof(res));
    _exit(0);
  }
  close(fds[1]);
  MountProbe res;
  ssize_t n;
  do {
    n = read(fds[0], &res, sizeof(res));
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (take_back) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    const struct timespec now = {0, 0};
    while (sigtimedwait(&chld, NULL, &now) < 0 && errno == EINTR) {
    }
  }
  if (n != (ssize_t)sizeof(res)) {
    ret->step = MOUNT_STEP_FORK;
    ret->errnum = ECHILD;
    return;
  }
  *ret = res;
}

int sys_open_no_symlinks(const char *path) {
#if defined(SYS_openat2)
  /* Without O_NOFOLLOW, so that a link as the last component is refused
   * too (with it, openat2 would open the link itself). */
  struct open_how how = {
      .flags = O_PATH | O_CLOEXEC,
      .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG)) {
    return fd;
  }
#endif
  /* Before Linux 5.6 (or under a seccomp filter that does not know
   * openat2): one component at a time, never following a link. */
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  int fd_dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  const char *p = path;
  while (fd_dir >= 0) {
    while (*p == '/') {
      p++;
    }
    if (*p == '\0') {
      return fd_dir;
    }
    size_t len = strcspn(p, "/");
    char name[NAME_MAX + 1];
    if (len > NAME_MAX) {
      close(fd_dir);
      errno = ENAMETOOLONG;
      return -1;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    p += len;
    int next = openat(fd_dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    close(fd_dir);
    struct stat st;
    if (next >= 0 && fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
      close(next);
      errno = ELOOP;
      return -1;
    }
    errno = saved;
    fd_dir = next;
  }
  return -1;
}

/* statx(2) of `name` in `fd` (or of `fd` itself, name ""), without
 * following a symbolic link: its identity and type, and whether another
 * name may reach it (see DirEntry.aliased). 0, or -1 with errno. */
int sys_stat_aliased(int fd, const char *name, struct stat *st, bool *aliased) {
  struct statx stx;
  int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (name[0] == '\0' ? AT_EMPTY_PATH : 0);
  if (statx(fd, name, flags, STATX_TYPE | STATX_INO | STATX_NLINK, &stx) < 0) {
    return -1;
  }
  memset(st, 0, sizeof(*st));
  st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st->st_ino = (ino_t)stx.stx_ino;
  st->st_mode = stx.stx_mode;
  st->st_nlink = (nlink_t)stx.stx_nlink;
  /* A kernel older than 5.8 does not say what is a mount point: a
   * mounted file then has only its link count to tell. */
  bool mount_root = statx_mount_root(&stx) > 0;
  *aliased = !S_ISDIR(stx.stx_mode) && (stx.stx_nlink > 1 || mount_root);
  return 0;
}

/* Adds the entry `name` (getdents' inode number and type) of the
 * directory open at `fd` to `v`. 0, or -errno; an entry gone meanwhile is
 * skipped. */
static int add_dir_entry(int fd, const struct stat *self, bool d_ino_exact, bool files_unchecked,
                         const char *name, ino_t d_ino, unsigned char d_type, DirEntry **v,
                         size_t *n, size_t *cap) {
  if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
    return 0;
  }
  struct stat st;
  bool exact = true, aliased = false;
  if (d_type == DT_DIR ? d_ino_exact : d_type == DT_LNK) {
    /* Its inode is the one getdents names, on this directory's device,
     * unless something is mounted on it: then getdents names the inode
     * underneath. landlock_apply opens every exact grant without crossing
     * a mount point (and checks the identity of whatever it opens the
     * other way), so a mount point is never granted by the identity it
     * hides. A directory has no other name but a mount, so on a file
     * system whose inode numbers getdents reports exactly, this is the
     * identity stat(2) would give; elsewhere a directory is stat'ed, being
     * where another file system may be mounted. */
    st.st_dev = self->st_dev;
    st.st_ino = d_ino;
    st.st_mode = (mode_t)(DTTOIF(d_type));
    exact = d_ino_exact;
  } else if (d_type == DT_REG && d_ino_exact && files_unchecked) {
    /* Its identity, as for a directory; whether it has other names is
     * left to landlock_apply, which asks when it opens it for a rule
     * (ScannedDirs.files_unchecked). */
    st.st_dev = self->st_dev;
    st.st_ino = d_ino;
    st.st_mode = S_IFREG;
    exact = false;
  } else if (sys_stat_aliased(fd, name, &st, &aliased) < 0) {
    /* Every file is looked at: getdents tells neither its link count
     * nor whether something is mounted on it. */
    return errno == ENOENT ? 0 : -errno; /* ENOENT: gone meanwhile */
  }
  DirEntry *e = grow_array(v, n, cap, sizeof(DirEntry));
  e->name = xstrdup(name);
  e->dev = st.st_dev;
  e->ino = st.st_ino;
  e->mode = st.st_mode;
  e->exact = exact;
  e->aliased = aliased;
  return 0;
}

/* The scan's entry for `name` in the directory `rel` (relative to the
 * root) when it found it protected, with the inode getdents gives it.
 * The two are joined on the stack: no allocation for each of a thousand
 * entries. */
static const ProtectedPath *scanned_protected(const ScanResult *scan, const char *rel,
                                              const char *name, ino_t d_ino) {
  char buf[PATH_MAX];
  size_t rel_len = strlen(rel), name_len = strlen(name);
  size_t sep = rel_len > 0 ? 1 : 0;
  if (rel_len + sep + name_len >= sizeof(buf)) {
    return NULL;
  }
  memcpy(buf, rel, rel_len);
  buf[rel_len] = '/';
  memcpy(buf + rel_len + sep, name, name_len + 1);
  const ProtectedPath *p = scan_find(scan, buf);
  return p != NULL && p->ino == d_ino && !S_ISDIR(p->mode) ? p : NULL;
}

/* Lists `dir`: from `listing` when it is the scan's listing of the very
 * directory opened now, else with getdents64(2). */
static int list_dir(const char *dir, ScannedDirs *kept, const ScanResult *scan, const char *rel,
                    const ScanListing *listing, DirEntry **ret, size_t *ret_n) {
  *ret = NULL;
  *ret_n = 0;
  _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return -errno;
  }
  struct stat self;
  if (fstat(fd, &self) < 0) {
    return -errno;
  }
  /* Where getdents' inode number is the one stat(2) reports, for every
   * entry that is not a mount point (overlayfs, FUSE or network
   * filesystems promise no such thing). The type of the file system is
   * asked once per device (a directory's st_dev names its superblock,
   * overlayfs and btrfs subvolumes included): the directories on the way
   * to a project are mostly on one. */
  uint32_t magic;
  if (kept != NULL && kept->fs_known && kept->fs_dev == self.st_dev) {
    magic = kept->fs_magic;
  } else {
    struct statfs fs;
    if (fstatfs(fd, &fs) < 0) {
      return -errno;
    }
    magic = (uint32_t)fs.f_type;
    if (kept != NULL) {
      kept->fs_known = true;
      kept->fs_dev = self.st_dev;
      kept->fs_magic = magic;
    }
  }
  bool d_ino_exact = magic == EXT4_SUPER_MAGIC || magic == XFS_SUPER_MAGIC ||
                     magic == BTRFS_SUPER_MAGIC || magic == TMPFS_MAGIC;
  bool unchecked = kept != NULL && kept->files_unchecked;
  DirEntry *v = NULL;
  size_t n = 0, cap = 0;
  int r = 0;
  /* The directory itself, as "." (see DirLister). */
  DirEntry *dot = grow_array(&v, &n, &cap, sizeof(DirEntry));
  dot->name = xstrdup(".");
  dot->dev = self.st_dev;
  dot->ino = self.st_ino;
  dot->mode = self.st_mode;
  dot->exact = true;
  /* The entries are from when the ctime was looked at: the scan's, for a
   * directory it listed (OpenDir.ctime). */
  struct timespec ctime = self.st_ctim;
  if (listing != NULL && listing->dev == self.st_dev && listing->ino == self.st_ino) {
    ctime = listing->ctime;
    for (size_t i = 0; i < listing->n_entries && r == 0; i++) {
      const ScanEntry *se = &listing->entries[i];
      const char *name = listing->names + se->name;
      /* A file the scan found protected, under the same inode, is left
       * out: carve_plan grants no protected path (by name, and by the
       * identity enforce_targets gave it), and a file is no directory of
       * the chain. No statx, and no entry, for each of a thousand. */
      if (se->type != DT_DIR && scanned_protected(scan, rel, name, se->ino) != NULL) {
        continue;
      }
      r = add_dir_entry(fd, &self, d_ino_exact, unchecked, name, se->ino, se->type, &v, &n,
                        &cap);
    }
  } else {
    /* getdents64(2) directly: readdir(3) would add an fstat and two fcntl
     * calls per directory. On the stack (nothing here recurses): only the
     * part getdents writes is ever touched, and no heap page is faulted in
     * behind it (see walk() in scan.c). */
    enum { LIST_BUFFER = 8 * 1024 };
    char buf[LIST_BUFFER];
    DirReader dr = {.fd = fd, .buf = buf, .size = LIST_BUFFER};
    const struct dirent64 *de;
    while (r == 0 && (de = dir_reader_next(&dr)) != NULL) {
      r = add_dir_entry(fd, &self, d_ino_exact, unchecked, de->d_name, de->d_ino, de->d_type,
                        &v, &n, &cap);
    }
    if (r == 0 && errno != 0) {
      r = -errno;
    }
  }
  if (r < 0) {
    dir_entries_free(v, n);
    return r;
  }
  if (kept != NULL && kept->keep_dirs) {
    KeptDir *k = grow_array(&kept->kept, &kept->n_kept, &kept->cap_kept, sizeof(KeptDir));
    k->path = xstrdup(dir);
    k->dir = (OpenDir){steal_fd(&fd), self.st_dev, self.st_ino, ctime};
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

int sys_list_dir(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n) {
  (void)userdata;
  return list_dir(dir, NULL, NULL, NULL, NULL, ret, ret_n);
}

int sys_list_dir_scanned(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n) {
  ScannedDirs *s = userdata;
  const char *rel = s->root != NULL && s->scan != NULL ? path_relative(s->root, dir) : NULL;
  const ScanListing *listing = rel != NULL ? scan_listing(s->scan, rel) : NULL;
  return list_dir(dir, s, s->scan, rel, listing, ret, ret_n);
}

void sys_give_kept_dirs(ScannedDirs *s, Plan *plan) {
  const Carve *c = &plan->carve;
  if (s->n_kept > 0 && plan->backend == BACKEND_LANDLOCK && plan->restricted_open == NULL) {
    plan->restricted_open = xcalloc(c->n_restricted + 1, sizeof(OpenDir));
    /* Both in the order of the chain, parents first: one pass. */
    size_t k = 0;
    for (size_t i = 0; i < c->n_restricted; i++) {
      plan->restricted_open[i].fd = -1;
      for (size_t tried = 0; tried < s->n_kept; tried++, k = (k + 1) % s->n_kept) {
        KeptDir *d = &s->kept[k];
        if (d->dir.fd >= 0 && streq(d->path, c->restricted[i])) {
          plan->restricted_open[i] = d->dir;
          d->dir.fd = -1;
          break;
        }
      }
    }
  }
  sys_scanned_dirs_clear(s);
}

void sys_scanned_dirs_clear(ScannedDirs *s) {
  size_t n = 0;
  int *fds = xcalloc(s->n_kept + 1, sizeof(int));
  for (size_t i = 0; i < s->n_kept; i++) {
    if (s->kept[i].dir.fd >= 0) {
      fds[n++] = s->kept[i].dir.fd;
    }
    free(s->kept[i].path);
  }
  close_fds(fds, n);
  free(fds);
  free(s->kept);
  s->kept = NULL;
  s->n_kept = s->cap_kept = 0;
}

/* Capabilities are dropped with libcap (caps.c), loaded by `run` alone.
 * The seccomp filter is loaded with a plain system call: libseccomp would
 * cost a dlopen(3) and its probing of the kernel's seccomp features, for
 * a 17-instruction filter. */

int sys_set_no_new_privs(Error *err) {
  /* Asked of the kernel each time (Landlock's restrict_self, then the last
   * step): a flag of the thread, which a process sharing this one's memory
   * until its execve (the guard's command) must not remember for it. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    return error_set(err, errno, _("cannot set no_new_privs: %m"));
  }
  return 0;
}

/* The ioctl(2) system call of each ABI a process on this machine may use,
 * by the audit architecture seccomp reports. A system call from any other
 * architecture kills the thread, as libseccomp's default does: a filter
 * that does not know an ABI's numbers cannot judge its calls. */
typedef struct {
  uint32_t arch;
  uint32_t nr[2];
  size_t n_nr;
} IoctlAbi;

#ifndef AUDIT_ARCH_LOONGARCH64
#define AUDIT_ARCH_LOONGARCH64 (0x102u | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE)
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_LE 1
#else
#define NATIVE_LE 0
#endif

static const IoctlAbi ioctl_abis[] = {
#if defined(__x86_64__)
    /* x86-64 and x32 share an audit architecture; x32 numbers have bit
     * 30 set, and its ioctl is 512 + 2. The 32-bit x86 ABI is another. */
    {AUDIT_ARCH_X86_64, {16, 0x40000000u | 514}, 2},
    {AUDIT_ARCH_I386, {54}, 1},
#elif defined(__i386__)
    {AUDIT_ARCH_I386, {__NR_ioctl}, 1},
#elif defined(__aarch64__)
    {AUDIT_ARCH_AARCH64, {__NR_ioctl}, 1},
    {AUDIT_ARCH_ARM, {54}, 1}, /* 32-bit compat (EABI) */
#elif defined(__arm__)
    {NATIVE_LE ? AUDIT_ARCH_ARM : AUDIT_ARCH_ARMEB, {__NR_ioctl}, 1},
#elif defined(__riscv) && __riscv_xlen == 64
    {AUDIT_ARCH_RISCV64, {__NR_ioctl}, 1},
#elif defined(__riscv)
    {AUDIT_ARCH_RISCV32, {__NR_ioctl}, 1},
#elif defined(__powerpc64__)
    {NATIVE_LE ? AUDIT_ARCH_PPC64LE : AUDIT_ARCH_PPC64, {__NR_ioctl}, 1},
#elif defined(__powerpc__)
    {AUDIT_ARCH_PPC, {__NR_ioctl}, 1},
#elif defined(__s390x__)
    {AUDIT_ARCH_S390X, {__NR_ioctl}, 1},
#elif defined(__s390__)
    {AUDIT_ARCH_S390, {__NR_ioctl}, 1},
#elif defined(__loongarch__) && __loongarch_grlen == 64
    {AUDIT_ARCH_LOONGARCH64, {__NR_ioctl}, 1},
#elif defined(__mips__) && _MIPS_SIM == _ABIO32
    {NATIVE_LE ? AUDIT_ARCH_MIPSEL : AUDIT_ARCH_MIPS, {__NR_ioctl}, 1},
#elif defined(__mips__) && _MIPS_SIM == _ABIN32
    {NATIVE_LE ? AUDIT_ARCH_MIPSEL64N32 : AUDIT_ARCH_MIPS64N32, {__NR_ioctl}, 1},
#elif defined(__mips__)
    {NATIVE_LE ? AUDIT_ARCH_MIPSEL64 : AUDIT_ARCH_MIPS64, {__NR_ioctl}, 1},
#elif defined(__sparc__) && defined(__arch64__)
    {AUDIT_ARCH_SPARC64, {__NR_ioctl}, 1},
#elif defined(__sparc__)
    {AUDIT_ARCH_SPARC, {__NR_ioctl}, 1},
#elif defined(__hppa__) && defined(__LP64__)
    {AUDIT_ARCH_PARISC64, {__NR_ioctl}, 1},
#elif defined(__hppa__)
    {AUDIT_ARCH_PARISC, {__NR_ioctl}, 1},
#elif defined(__alpha__)
    {AUDIT_ARCH_ALPHA, {__NR_ioctl}, 1},
#elif defined(__m68k__)
    {AUDIT_ARCH_M68K, {__NR_ioctl}, 1},
#elif defined(__sh__)
    {NATIVE_LE ? AUDIT_ARCH_SHEL : AUDIT_ARCH_SH, {__NR_ioctl}, 1},
#elif defined(__ia64__)
    {AUDIT_ARCH_IA64, {__NR_ioctl}, 1},
#else
#error "the seccomp filter needs this architecture's AUDIT_ARCH_* value in ioctl_abis[]"
#endif
};

/* Low 32 bits of system call argument `i`: the kernel reads an ioctl
 * number as an unsigned int, so the upper half must not matter, or TIOCSTI
 * with high bits set slips through (CVE-2019-10063). */
#define ARG_LOW(i) (offsetof(struct seccomp_data, args[i]) + (NATIVE_LE ? 0 : 4))

/* Builds the filter into f (room for FILTER_MAX instructions); returns its
 * length. Layout: for each ABI, "arch matches → is it ioctl? → check,
 * else allow"; unknown architecture → kill; check: TIOCSTI or TIOCLINUX →
 * EPERM, else allow. */
#define FILTER_MAX (1 + ELEMENTSOF(ioctl_abis) * 5 + 1 + 5)
static size_t build_filter(struct sock_filter *f) {
  size_t n = 0, check = 1 + 1;
  for (size_t a = 0; a < ELEMENTSOF(ioctl_abis); a++) {
    check += 3 + ioctl_abis[a].n_nr;
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, arch));
  for (size_t a = 0; a < ELEMENTSOF(ioctl_abis); a++) {
    const IoctlAbi *abi = &ioctl_abis[a];
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abi->arch, 0,
                                        (uint8_t)(abi->n_nr + 2));
    n++;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, nr));
    for (size_t k = 0; k < abi->n_nr; k++) {
      f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abi->nr[k],
                                          (uint8_t)(check - (n + 1)), 0);
      n++;
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL);
  /* n == check */
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(1));
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)TIOCSTI, 2, 0);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)TIOCLINUX, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                        SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  return n;
}

static int load_seccomp(Error *err) {
  struct sock_filter f[FILTER_MAX];
  struct sock_fprog prog = {.len = (unsigned short)build_filter(f), .filter = f};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
    return error_set(err, errno, _("cannot load the seccomp filter against TIOCSTI: %m"));
  }
  return 0;
}

int sys_drop_privileges(Error *err) {
  if (caps_drop_all(err) < 0) {
    return -1;
  }
  if (sys_set_no_new_privs(err) < 0) {
    return -1;
  }
  return load_seccomp(err);
}

void sys_open_fds(bool names, OpenFds *ret) {
  memset(ret, 0, sizeof(*ret));
  ret->error = audit_list_fds(names, &ret->fds, &ret->n);
  if (ret->error < 0) {
    return;
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    ret->limit = (unsigned long long)rl.rlim_cur;
  }
}

void sys_open_fds_clear(OpenFds *f) {
  audit_fds_free(f->fds, f->n);
  memset(f, 0, sizeof(*f));
}

int sys_check_inherited_fds(Backend backend, const PlanTarget *targets, size_t n_targets,
                            OpenFds *open, Error *err) {
  /* The same listing `status` audits (audit_list_fds), judged here
   * against the plan. For the mount backend every inherited directory
   * is refused, not only those leading to a protected path: a lookup
   * through it (`/proc/self/fd/N/..`, openat) walks the caller's mount
   * namespace, where nothing is read-only, and `..` reaches the whole
   * tree from any directory in it. */
  if (open->error < 0) {
    errno = -open->error;
    return error_set(err, -open->error,
                     _("cannot list the open descriptors in /proc/self/fd: %m"));
  }
  AuditFd *fds = open->fds;
  size_t n_fds = open->n;
  int r = 0;
  bool dir_target = false;
  for (size_t i = 0; i < n_targets && !dir_target; i++) {
    dir_target = !targets[i].missing && S_ISDIR(targets[i].mode);
  }
  for (size_t k = 0; k < n_fds && r == 0; k++) {
    long fd = fds[k].fd;
    int flags = fds[k].flags;
    bool writable = (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
    bool refused_dir = backend == BACKEND_MOUNT && S_ISDIR(fds[k].mode);
    bool nameless = false;
    /* Names are read only where they decide something (below a protected
     * directory) or are shown: a readlink of /proc/self/fd/N each, unless
     * the listing has it already (the dry run's, which `status` reads
     * too). Where they decide nothing, they are not looked at, so that
     * the run and the dry run decide and say the same. */
    const char *path = NULL;
    if ((dir_target && (writable || backend == BACKEND_MOUNT)) || refused_dir) {
      if (fds[k].path == NULL) {
        fds[k].path = audit_fd_path(fds[k].fd, fds[k].mode);
      }
      path = fds[k].path;
      /* A file whose name cannot be read (longer than PATH_MAX): it may
       * lie below a protected directory on the same file system. */
      nameless = path == NULL && (S_ISREG(fds[k].mode) || S_ISDIR(fds[k].mode));
    }
    /* A socket's "socket:[…]" names nothing. */
    const char *target = path != NULL && path[0] == '/' ? path : NULL;
    bool protected_obj = false;
    const PlanTarget *same_fs = NULL;
    for (size_t i = 0; i < n_targets; i++) {
      const PlanTarget *t = &targets[i];
      if (t->missing) {
        continue;
      }
      if (t->dev == fds[k].dev && t->ino == fds[k].ino) {
        protected_obj = true;
        target = target != NULL ? target : t->path;
      } else if (target != NULL && S_ISDIR(t->mode) && path_relative(t->path, target) != NULL) {
        protected_obj = true;
      } else if (nameless && S_ISDIR(t->mode) && t->dev == fds[k].dev && same_fs == NULL) {
        same_fs = t;
      }
    }
    if (!protected_obj && same_fs != NULL && writable) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld is open for writing on a file whose name cannot be read, on "
                      "the file system of the protected %s, below which it may lie; it was "
                      "inherited from the program that started ralon (close it first, e.g. "
                      "`exec %ld>&-` in a shell)"),
                    fd, same_fs->path, fd);
      break;
    }
    if (protected_obj && writable) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld is open for writing on the protected %s; it was inherited "
                      "from the program that started ralon and would let the command write it "
                      "(close it first, e.g. `exec %ld>&-` in a shell)"),
                    fd, target, fd);
    } else if (refused_dir) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld refers to the directory %s; lookups through a directory "
                      "opened before the sandbox walk the caller's mounts, where protected paths "
                      "are writable (close it first, e.g. `exec %ld>&-` in a shell)"),
                    fd, target != NULL ? target : path != NULL ? path : "?", fd);
    } else if (backend == BACKEND_MOUNT && protected_obj) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld refers to the protected %s; reopened through "
                      "/proc/self/fd it would bypass the sandbox's read-only mounts "
                      "(close it first, e.g. `exec %ld>&-` in a shell)"),
                    fd, target, fd);
    }
  }
  return r;
}
