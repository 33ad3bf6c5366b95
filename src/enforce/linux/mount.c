/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/mount.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "enforce/linux/sys.h"

static int fail_step(Error *err, MountStep step, int r) {
  errno = -r;
  return error_set(err, -r, _("the mount backend failed at %s: %m%s"), mount_step_to_string(step),
                   sys_nested_hint(step));
}

/* `path`, opened without following a symbolic link: its identity, whether
 * it is the root of a mount, and (with `vfs`) the flags of that mount. */
static int open_checked(const char *path, struct stat *st, bool *mount_root, struct statvfs *vfs,
                        Error *err) {
  _cleanup_close_ int fd = sys_open_no_symlinks(path);
  if (fd < 0) {
    if (errno == ELOOP) {
      return error_set(err, ESTALE,
                       _("a symbolic link appeared on the way to %s while ralon started; "
                         "refusing to run"),
                       path);
    }
    return error_set(err, errno, _("cannot check %s after mounting: %m"), path);
  }
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &stx) < 0) {
    return error_set(err, errno, _("cannot check %s after mounting: %m"), path);
  }
  memset(st, 0, sizeof(*st));
  st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st->st_ino = (ino_t)stx.stx_ino;
  st->st_mode = stx.stx_mode;
  /* Before Linux 5.8 the kernel does not say: the remount and umount
   * checks stand alone then. */
  *mount_root = statx_mount_root(&stx) != 0;
  if (vfs != NULL && fstatvfs(fd, vfs) < 0) {
    return error_set(err, errno, _("cannot check %s after mounting: %m"), path);
  }
  return 0;
}

/* After the second unshare every mount copied from the first namespace is
 * locked: prove it for each protected mount before trusting it. */
static int verify_locked(const PlanTarget *t, Error *err) {
  /* By its canonical path, which has no symbolic link on it: one found
   * now was put there while ralon started, and every mount above went
   * somewhere else. What the path reaches must be the planned object, at
   * the root of a read-only mount. */
  struct stat st;
  struct statvfs vfs;
  bool mount_root;
  if (open_checked(t->path, &st, &mount_root, &vfs, err) < 0) {
    return -1;
  }
  if (st.st_dev != t->dev || st.st_ino != t->ino || !mount_root || !(vfs.f_flag & ST_RDONLY)) {
    return error_set(err, ESTALE,
                     _("%s is no longer the object that was planned (replaced while ralon "
                       "started?); refusing to run"),
                     t->path);
  }
  /* Keep every other locked flag, so read-only is the only thing the
   * remount asks to change. */
  unsigned long fl = MS_REMOUNT | MS_BIND | sys_locked_mount_flags_of(vfs.f_flag);
  if (mount(NULL, t->path, NULL, fl, NULL) == 0) {
    return error_set(err, EPERM,
                     _("the read-only mount of %s could be made writable again; refusing to run"),
                     t->path);
  }
  /* Never through a link put at the name since it was checked: what it
   * leads to is not the mount being tested, and could be removed. */
  if (umount2(t->path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0) {
    return error_set(err, EPERM, _("the read-only mount of %s could be removed; refusing to run"),
                     t->path);
  }
  return 0;
}

/* A pinned directory after locking: reached without a symbolic link, and
 * a mount point (so it cannot be renamed or removed). */
static int verify_pinned(const char *path, Error *err) {
  struct stat st;
  bool mount_root;
  if (open_checked(path, &st, &mount_root, NULL, err) < 0) {
    return -1;
  }
  if (!S_ISDIR(st.st_mode) || !mount_root) {
    return error_set(err, ESTALE,
                     _("%s is no longer the directory that was pinned (replaced while ralon "
                       "started?); refusing to run"),
                     path);
  }
  return 0;
}

int mount_prepare(const Plan *plan, Error *err) {
  MountStep step = MOUNT_STEP_NONE;
  int r = sys_enter_mount_namespace(&step);
  if (r < 0) {
    return fail_step(err, step, r);
  }
  /* Nothing done here may propagate back to the caller's namespace, and
   * nothing mounted there later reaches the sandbox (a bind mount made
   * outside over a protected file would land on top of the read-only
   * one). */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    return fail_step(err, MOUNT_STEP_PRIVATE, -errno);
  }
  /* A mount point cannot be renamed or removed: pin every directory on
   * the way, from below `/` down, so neither the project nor anything
   * above it can be moved away from the path the policy names. Recursive,
   * so mounts already inside stay visible. */
  for (size_t i = 0; i < plan->n_pinned; i++) {
    if (mount(plan->pinned[i], plan->pinned[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
      return error_set(err, errno, _("failed to pin %s: %m"), plan->pinned[i]);
    }
  }
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    if (t->missing) {
      continue;
    }
    if (mount(t->path, t->path, NULL, MS_BIND | MS_REC, NULL) < 0) {
      return error_set(err, errno, _("failed to bind mount %s: %m"), t->path);
    }
    r = sys_make_read_only(t->path);
    if (r < 0) {
      errno = -r;
      return error_set(err, -r, _("failed to remount %s read-only: %m"), t->path);
    }
  }
  return 0;
}

/* --seal: no user namespace can be made below this one, and so no mount
 * namespace either (that takes CAP_SYS_ADMIN, which nothing inside has
 * outside a user namespace of its own). A nested pair would give the
 * command every capability over a copy of the mount tree, where it can
 * cover a protected path with a view of its own (the file on disk stays
 * as it is, but the tests it runs would lie). max_mnt_namespaces stays:
 * the guard's re-protection clones mounts in this namespace, and a clone
 * counts as a mount namespace of its owner. */
static int forbid_nested_namespaces(Error *err) {
  const char *limit = "/proc/sys/user/max_user_namespaces";
  _cleanup_close_ int fd = open(limit, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "0\n", 2) != 2) {
    return error_set(err, errno, _("--seal: cannot set %s to 0: %m"), limit);
  }
  return 0;
}

int mount_lock(const Plan *plan, const char *cwd, bool seal, Error *err) {
  MountStep step = MOUNT_STEP_NONE;
  /* The working directory is a (mount, dentry) pair taken before the
   * binds: re-resolve it, or relative paths would walk past them. */
  if (chdir(cwd) < 0) {
    return error_set(err, errno, _("failed to re-enter %s after mounting: %m"), cwd);
  }
  /* Copying the mounts into a less privileged namespace locks them: they
   * can no longer be unmounted, made writable or looked under. */
  int r = sys_enter_namespaces(&step);
  if (r < 0) {
    return fail_step(err, MOUNT_STEP_LOCK, r);
  }
  if (seal && forbid_nested_namespaces(err) < 0) {
    return -1;
  }
  for (size_t i = 0; i < plan->n_targets; i++) {
    if (!plan->targets[i].missing && verify_locked(&plan->targets[i], err) < 0) {
      return -1;
    }
  }
  for (size_t i = 0; i < plan->n_pinned; i++) {
    if (verify_pinned(plan->pinned[i], err) < 0) {
      return -1;
    }
  }
  if (chdir(cwd) < 0) {
    return error_set(err, errno, _("failed to re-enter %s after mounting: %m"), cwd);
  }
  return 0;
}
