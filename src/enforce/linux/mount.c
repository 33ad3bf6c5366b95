/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/mount.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce/linux/sys.h"

static int fail_step(Error *err, MountStep step, int r) {
  errno = -r;
  return error_set(err, -r, _("the mount backend failed at %s: %m"), mount_step_to_string(step));
}

/* After the second unshare every mount copied from the first namespace is
 * locked: prove it for each protected mount before trusting it. */
static int verify_locked(const PlanTarget *t, Error *err) {
  /* Keep every other locked flag, so read-only is the only thing the
   * remount asks to change. */
  unsigned long fl = MS_REMOUNT | MS_BIND | sys_locked_mount_flags(t->path);
  if (mount(NULL, t->path, NULL, fl, NULL) == 0) {
    return error_set(err, EPERM,
                     _("the read-only mount of %s could be made writable again; refusing to run"),
                     t->path);
  }
  if (umount2(t->path, MNT_DETACH) == 0) {
    return error_set(err, EPERM, _("the read-only mount of %s could be removed; refusing to run"),
                     t->path);
  }
  struct stat st;
  if (stat(t->path, &st) < 0) {
    return error_set(err, errno, _("cannot check %s after mounting: %m"), t->path);
  }
  if (st.st_dev != t->dev || st.st_ino != t->ino) {
    return error_set(err, ESTALE,
                     _("%s is no longer the object that was planned (replaced while ralon "
                       "started?); refusing to run"),
                     t->path);
  }
  return 0;
}

int mount_apply(const Plan *plan, Error *err) {
  MountStep step = MOUNT_STEP_NONE;
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  if (cwd == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }

  int r = sys_enter_mount_namespace(&step);
  if (r < 0) {
    return fail_step(err, step, r);
  }
  /* Nothing done here may propagate back to the caller's namespace. */
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
  /* The working directory is a (mount, dentry) pair taken before the
   * binds: re-resolve it, or relative paths would walk past them. */
  if (chdir(cwd) < 0) {
    return error_set(err, errno, _("failed to re-enter %s after mounting: %m"), cwd);
  }
  /* Copying the mounts into a less privileged namespace locks them: they
   * can no longer be unmounted, made writable or looked under. */
  r = sys_enter_namespaces(&step);
  if (r < 0) {
    return fail_step(err, MOUNT_STEP_LOCK, r);
  }
  for (size_t i = 0; i < plan->n_targets; i++) {
    if (!plan->targets[i].missing && verify_locked(&plan->targets[i], err) < 0) {
      return -1;
    }
  }
  if (chdir(cwd) < 0) {
    return error_set(err, errno, _("failed to re-enter %s after mounting: %m"), cwd);
  }
  return 0;
}
