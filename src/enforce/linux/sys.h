/* SPDX-License-Identifier: Apache-2.0 */
/* The Linux system interfaces the backends need, with the constants older
 * distribution headers lack (Debian 12's linux/landlock.h stops at ABI 2),
 * and the probes `status` and `run` report. */
#pragma once

#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "audit.h"
#include "enforce/plan.h"
#include "scan.h"
#include "util.h"

/* Set by `ralon run` for the command: the project root it protects. */
#define RALON_ACTIVE_ROOT "RALON_ACTIVE_ROOT"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else /* before Linux 5.6 */
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#endif
/* <linux/stat.h> from Linux 5.8. */
#define RALON_STATX_ATTR_MOUNT_ROOT 0x00002000ULL

/* Whether what statx(2) looked at is the root of a mount: 1 or 0, or -1
 * when the kernel does not say (before Linux 5.8), which each caller
 * decides for itself. */
static inline int statx_mount_root(const struct statx *stx) {
  if (!(stx->stx_attributes_mask & RALON_STATX_ATTR_MOUNT_ROOT)) {
    return -1;
  }
  return (stx->stx_attributes & RALON_STATX_ATTR_MOUNT_ROOT) != 0;
}

/* <linux/stat.h> from Linux 6.8: the mount's id, never reused while the
 * system runs (stx_mnt_id then holds it). */
#define RALON_STATX_MNT_ID_UNIQUE 0x00004000U

/* The id of the mount statx(2) looked at, which the kernel never gives
 * another mount while the system runs, or 0 when it does not say (before
 * Linux 6.8). */
static inline uint64_t statx_mount_id(const struct statx *stx) {
  return (stx->stx_mask & RALON_STATX_MNT_ID_UNIQUE) ? stx->stx_mnt_id : 0;
}

/* The id of the mount namespace `ns_fd` (an open /proc/PID/ns/mnt), or 0
 * when the kernel does not say (NS_GET_MNTNS_ID, Linux 6.11). */
uint64_t sys_mount_ns_id(int ns_fd);

/* Asks the scheduler for the shortest time slice (0.1 ms) for the calling
 * thread, keeping its policy and nice value: with EEVDF (Linux 6.12) a
 * waking thread with a shorter slice preempts a running one with a longer
 * slice, so a process that sleeps until something must be done at once
 * runs at once. 0, or -errno; older kernels accept and ignore it, and
 * real-time and SCHED_IDLE threads are left alone. Inherited by children
 * forked afterwards. */
int sys_prefer_short_slice(void);

/* Whether the mount with unique id `mnt_id` (statx_mount_id()) is in the
 * mount namespace with id `ns_id` (sys_mount_ns_id()): 1 or 0, asked of
 * the kernel directly (statmount(2), Linux 6.11) rather than read from a
 * mount table; -errno when it cannot say (ENOSYS before Linux 6.8). A
 * mount detached, as the kernel detaches one whose mount point is
 * renamed over or removed, is in no namespace. The kernel also answers
 * 0 for a namespace the caller has no CAP_SYS_ADMIN over: a caller
 * first asks about a mount it knows is there. */
int sys_mount_in_ns(uint64_t mnt_id, uint64_t ns_id);

/* struct landlock_ruleset_attr as of ABI 6; the kernel accepts a shorter
 * size from older callers, and we pass only what the running ABI knows. */
struct ralon_landlock_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

int sys_landlock_create_ruleset(const struct ralon_landlock_ruleset_attr *attr, size_t size,
                                uint32_t flags);
int sys_landlock_add_path_rule(int ruleset_fd, int parent_fd, uint64_t allowed);
int sys_landlock_restrict_self(int ruleset_fd);

/* Landlock ABI version of the running kernel, or -errno (ENOSYS: not built
 * in; EOPNOTSUPP: built in but disabled at boot). */
int sys_landlock_abi(void);

/* The mount backend's availability, found by doing it: a child process
 * performs the real sequence on a directory that exists (unshare, map
 * ids, private propagation, bind, read-only, unshare again) and reports the
 * step and errno that failed. An unshare that succeeds is not proof:
 * AppArmor-restricted user namespaces allow it and refuse the mount. */
typedef enum {
  MOUNT_STEP_NONE,
  MOUNT_STEP_FORK,
  MOUNT_STEP_UNSHARE,
  MOUNT_STEP_SETGROUPS,
  MOUNT_STEP_UID_MAP,
  MOUNT_STEP_GID_MAP,
  MOUNT_STEP_PRIVATE,
  MOUNT_STEP_BIND,
  MOUNT_STEP_READ_ONLY,
  MOUNT_STEP_LOCK,
  _MOUNT_STEP_MAX,
} MountStep;

typedef struct {
  MountStep step; /* MOUNT_STEP_NONE when available */
  int errnum;
} MountProbe;

void sys_mount_probe(const char *path, MountProbe *ret);
const char *mount_step_to_string(MountStep s);

/* Whether the probe failed for want of resources (the user namespace or
 * mount namespace quota, the nesting limit, memory, processes) rather than
 * by the system's configuration: something can use them up (a process an
 * agent left behind), so `auto` must not take that as a reason to fall
 * back to a weaker backend. A quota set to 0 is configuration. Reads the
 * quotas in /proc/sys/user; mount_probe_exhausted takes them (-1: not
 * known). */
bool sys_mount_probe_exhausted(const MountProbe *p);
bool mount_probe_exhausted(const MountProbe *p, long max_user_namespaces,
                           long max_mnt_namespaces);
/* Appended to a mount backend failure: "" outside `ralon run`; inside one
 * (RALON_ACTIVE_ROOT set: a hint, not a proof, since anything can set
 * it), that the enclosing run's restrictions hold here. */
const char *sys_nested_hint(MountStep step);

/* A DirLister on the real filesystem: opens `dir` with O_NOFOLLOW, names
 * the directory itself as "." (see DirLister), takes the identity of
 * symbolic links, and of directories where getdents(2) gives it exactly,
 * from getdents, and statx()es the rest (a directory may be a mount point,
 * a file may have other names: DirEntry.aliased). */
int sys_stat_aliased(int fd, const char *name, struct stat *st, bool *aliased);
/* An O_PATH descriptor of the absolute `path`, reached without following
 * any symbolic link on the way (openat2 RESOLVE_NO_SYMLINKS, or a walk one
 * component at a time where that is missing). -1 with errno: ELOOP for a
 * link on the way. */
int sys_open_no_symlinks(const char *path);
int sys_list_dir(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n);

/* A directory sys_list_dir_scanned() listed and kept open. */
typedef struct {
  char *path;
  OpenDir dir;
} KeptDir;

/* sys_list_dir() that takes the entries of a directory inside the project
 * from the scan (SCAN_KEEP_LISTINGS) when it is still the directory the
 * scan listed (same device and inode), instead of reading it again. */
typedef struct {
  const char *root; /* the project root, canonical, as the plan's paths are */
  const ScanResult *scan;
  /* `run` with nothing to read which files get no rule (no audit, no dry
   * run): a file's identity is what getdents says (DirEntry.exact false)
   * and it is not stat'ed for its link count, since landlock_apply looks
   * at every file it opens for a rule anyway and gives none to a file
   * with another name. */
  bool files_unchecked;
  /* The type of the file system last listed (list_dir). */
  bool fs_known;
  dev_t fs_dev;
  uint32_t fs_magic;
  /* Keep each directory listed open, for sys_give_kept_dirs(). */
  bool keep_dirs;
  KeptDir *kept;
  size_t n_kept;
  size_t cap_kept;
} ScannedDirs;
int sys_list_dir_scanned(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n);
/* Hands the plan (Plan.restricted_open) the descriptor of each restricted
 * directory the lister kept, and closes the others. */
void sys_give_kept_dirs(ScannedDirs *s, Plan *plan);
/* Closes what sys_list_dir_scanned() kept and nobody took. */
void sys_scanned_dirs_clear(ScannedDirs *s);

/* Enters a new user and mount namespace in which the current uid and gid
 * map onto themselves. */
int sys_enter_namespaces(MountStep *ret_step);

/* The namespace the mount backend makes its mounts in: a new mount
 * namespace alone when this process may mount (CAP_SYS_ADMIN), else
 * sys_enter_namespaces(). */
int sys_enter_mount_namespace(MountStep *ret_step);

/* Makes `path` and every mount below it read-only: mount_setattr(2) with
 * AT_RECURSIVE where the kernel has it (5.12+), else a remount of each
 * mount, repeating the flags a user namespace locks (nosuid, nodev, noexec,
 * atime) so the kernel does not refuse it with EPERM. Returns 0 or -errno. */
int sys_make_read_only(const char *path);

/* MS_NOSUID, MS_NODEV, MS_NOEXEC and the atime flags `path` is mounted
 * with: what a remount in a user namespace must repeat. */
unsigned long sys_locked_mount_flags(const char *path);
unsigned long sys_locked_mount_flags_of(unsigned long f_flag);

/* prctl(PR_SET_NO_NEW_PRIVS), made once. */
int sys_set_no_new_privs(Error *err);

/* Drops every capability (effective, permitted, inheritable, ambient and
 * the bounding set), locks the securebits that would give root new ones,
 * sets no_new_privs and loads a seccomp filter refusing the TIOCSTI and
 * TIOCLINUX ioctls. The last thing before execve. */
int sys_drop_privileges(Error *err);

/* The descriptors this process has open, read once from /proc/self/fd
 * (audit_list_fds()) for every check `run` makes of them: those inherited
 * (sys_check_inherited_fds()), and how many more the limit of open files
 * leaves room for (enforce_check_descriptors()). Read before ralon opens
 * any of its own to keep, so that every one listed is inherited. */
typedef struct {
  AuditFd *fds;
  size_t n;
  int error;                /* -errno when /proc/self/fd could not be read (then n is 0) */
  unsigned long long limit; /* the soft RLIMIT_NOFILE; 0: unlimited, or unknown */
} OpenFds;
/* With `names`, each descriptor's path is read too (audit_list_fds()). */
void sys_open_fds(bool names, OpenFds *ret);
void sys_open_fds_clear(OpenFds *f);

/* Refuses to go on when an inherited descriptor in `open` could write
 * what the `targets` protect: open for writing on a protected file or one
 * inside a protected directory, or (mount backend) any directory
 * descriptor, through which lookups would bypass the new mounts; and when
 * `open` could not be read. Reads the names it needs into `open`. */
int sys_check_inherited_fds(Backend backend, const PlanTarget *targets, size_t n_targets,
                            OpenFds *open, Error *err);
