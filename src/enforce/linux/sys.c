/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce/linux/dl.h"
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

/* Mount flags to repeat on a remount: those a less privileged namespace
 * may not clear. */
unsigned long sys_locked_mount_flags(const char *path) {
  struct statvfs sv;
  unsigned long fl = 0;
  if (statvfs(path, &sv) < 0) {
    return 0;
  }
  if (sv.f_flag & ST_NOSUID) {
    fl |= MS_NOSUID;
  }
  if (sv.f_flag & ST_NODEV) {
    fl |= MS_NODEV;
  }
  if (sv.f_flag & ST_NOEXEC) {
    fl |= MS_NOEXEC;
  }
  if (sv.f_flag & ST_NOATIME) {
    fl |= MS_NOATIME;
  }
  if (sv.f_flag & ST_NODIRATIME) {
    fl |= MS_NODIRATIME;
  }
  if (sv.f_flag & ST_RELATIME) {
    fl |= MS_RELATIME;
  }
  return fl;
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

const char *mount_step_to_string(MountStep s) {
  if (s >= _MOUNT_STEP_MAX) {
    return "?";
  }
  return mount_step_names[s];
}

void sys_mount_probe(const char *path, MountProbe *ret) {
  int fds[2];
  memset(ret, 0, sizeof(*ret));
  if (pipe2(fds, O_CLOEXEC) < 0) {
    ret->step = MOUNT_STEP_FORK;
    ret->errnum = errno;
    return;
  }
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
    int r = sys_enter_namespaces(&res.step);
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
  if (n != (ssize_t)sizeof(res)) {
    ret->step = MOUNT_STEP_FORK;
    ret->errnum = ECHILD;
    return;
  }
  *ret = res;
}

int sys_list_dir(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n) {
  (void)userdata;
  *ret = NULL;
  *ret_n = 0;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return -errno;
  }
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int r = -errno;
    close(fd);
    return r;
  }
  DirEntry *v = NULL;
  size_t n = 0, cap = 0;
  int r = 0;
  struct stat self;
  if (fstat(dirfd(d), &self) < 0) {
    r = -errno;
    closedir(d);
    return r;
  }
  for (;;) {
    errno = 0;
    struct dirent *de = readdir(d);
    if (de == NULL) {
      r = errno ? -errno : 0;
      break;
    }
    if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
      continue;
    }
    struct stat st;
    if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) {
      /* Not a directory, so not a mount point of a directory: its inode
       * is the one readdir names, on this directory's device. A file bind
       * mounted here would hide another inode, but landlock_apply checks
       * every grant's identity again when it opens it, and refuses. */
      st.st_dev = self.st_dev;
      st.st_ino = de->d_ino;
      st.st_mode = (mode_t)(DTTOIF(de->d_type));
    } else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno == ENOENT) {
        continue; /* gone meanwhile */
      }
      r = -errno;
      break;
    }
    DirEntry *e = grow_array(&v, &n, &cap, sizeof(DirEntry));
    e->name = xstrdup(de->d_name);
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    e->mode = st.st_mode;
  }
  closedir(d);
  if (r < 0) {
    dir_entries_free(v, n);
    return r;
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

static int drop_capabilities(Error *err) {
  cap_t cur = sym_cap_get_proc();
  if (cur == NULL) {
    return error_set(err, errno, _("cannot read the capabilities of this process: %m"));
  }
  cap_flag_value_t setpcap = CAP_CLEAR;
  sym_cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
  sym_cap_free(cur);

  if (setpcap == CAP_SET) {
    /* Root in its namespace would get the bounding set back at execve;
     * without CAP_SETPCAP there is nothing to drop (no_new_privs keeps
     * setuid programs from adding any). */
    /* One prctl per capability (dropping one already gone is not an
     * error): asking first would double them. */
    for (cap_value_t c = 0; c < (cap_value_t)sym_cap_max_bits(); c++) {
      if (sym_cap_drop_bound(c) < 0 && errno != EINVAL) {
        return error_set(err, errno, _("cannot drop capability %d from the bounding set: %m"), c);
      }
    }
    unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (sym_cap_set_secbits(bits) < 0) {
      return error_set(err, errno, _("cannot lock the securebits: %m"));
    }
  }
  if (sym_cap_reset_ambient() < 0 && errno != EINVAL) {
    return error_set(err, errno, _("cannot clear the ambient capabilities: %m"));
  }
  cap_t none = sym_cap_init();
  if (none == NULL) {
    oom();
  }
  int r = sym_cap_set_proc(none);
  int saved = errno;
  sym_cap_free(none);
  if (r < 0) {
    errno = saved;
    return error_set(err, saved, _("cannot drop capabilities: %m"));
  }
  return 0;
}

static int load_seccomp(Error *err) {
  scmp_filter_ctx ctx = sym_seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) {
    return error_set(err, ENOMEM, _("cannot set up the seccomp filter"));
  }
  int r = 0;
  /* A 32-bit process must not slip past a filter written for the native
   * architecture: cover the compatible ones too. */
#if defined(__x86_64__)
  static const uint32_t extra[] = {SCMP_ARCH_X86, SCMP_ARCH_X32};
#elif defined(__aarch64__)
  static const uint32_t extra[] = {SCMP_ARCH_ARM};
#else
  static const uint32_t extra[] = {0};
#endif
  for (size_t i = 0; i < ELEMENTSOF(extra) && r == 0; i++) {
    if (extra[i] != 0) {
      r = sym_seccomp_arch_add(ctx, extra[i]);
      if (r == -EEXIST) {
        r = 0;
      }
    }
  }
  /* The kernel compares the ioctl number as an int: mask the upper half so
   * TIOCSTI with high bits set is caught as well (CVE-2019-10063). */
  static const unsigned long cmds[] = {TIOCSTI, TIOCLINUX};
  for (size_t i = 0; i < ELEMENTSOF(cmds) && r == 0; i++) {
    const struct scmp_arg_cmp cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (scmp_datum_t)cmds[i]);
    r = sym_seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, &cmp);
  }
  if (r == 0) {
    r = sym_seccomp_load(ctx);
  }
  sym_seccomp_release(ctx);
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot load the seccomp filter against TIOCSTI: %m"));
  }
  return 0;
}

int sys_drop_privileges(Error *err) {
  if (dl_load_hardening(err) < 0 || drop_capabilities(err) < 0) {
    return -1;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    return error_set(err, errno, _("cannot set no_new_privs: %m"));
  }
  return load_seccomp(err);
}

/* Access mode of descriptor `fd` from /proc/self/fdinfo (O_PATH included). */
static int fd_flags(int fd, int *ret) {
  char p[64];
  snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
  FILE *f = fopen(p, "re");
  if (f == NULL) {
    return -errno;
  }
  char line[256];
  int r = -ENOENT;
  while (fgets(line, sizeof(line), f) != NULL) {
    unsigned flags;
    if (sscanf(line, "flags: %o", &flags) == 1) {
      *ret = (int)flags;
      r = 0;
      break;
    }
  }
  fclose(f);
  return r;
}

int sys_check_inherited_fds(const Plan *plan, Error *err) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) {
    return error_set(err, errno, _("cannot list the open descriptors in /proc/self/fd: %m"));
  }
  int self = dirfd(d);
  int r = 0;
  struct dirent *de;
  while (r == 0 && (de = readdir(d)) != NULL) {
    char *end;
    long fd = strtol(de->d_name, &end, 10);
    if (*end != '\0' || end == de->d_name || fd == self) {
      continue;
    }
    struct stat st;
    int flags = 0;
    if (fstat((int)fd, &st) < 0 || fd_flags((int)fd, &flags) < 0) {
      continue;
    }
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n < 0) {
      continue;
    }
    target[n] = '\0';
    if (target[0] != '/') {
      continue; /* pipes, sockets, anonymous inodes */
    }
    bool writable = (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR;
    bool protected_obj = false, on_the_way = false;
    for (size_t i = 0; i < plan->n_targets; i++) {
      const PlanTarget *t = &plan->targets[i];
      if (t->missing) {
        continue;
      }
      if ((t->dev == st.st_dev && t->ino == st.st_ino) ||
          (S_ISDIR(t->mode) && path_relative(t->path, target) != NULL)) {
        protected_obj = true;
      } else if (S_ISDIR(st.st_mode) && path_relative(target, t->path) != NULL) {
        on_the_way = true;
      }
    }
    if (protected_obj && writable) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld is open for writing on the protected %s; it was inherited "
                      "from the program that started ralon and would let the command write it "
                      "(close it first, e.g. `exec %ld>&-` in a shell)"),
                    fd, target, fd);
    } else if (plan->backend == BACKEND_MOUNT && (protected_obj || on_the_way)) {
      r = error_set(err, EBUSY,
                    _("descriptor %ld refers to %s, which holds or leads to protected paths; "
                      "lookups through a descriptor opened before the sandbox bypass its "
                      "read-only mounts (close it first, e.g. `exec %ld>&-` in a shell)"),
                    fd, target, fd);
    }
  }
  closedir(d);
  return r;
}
