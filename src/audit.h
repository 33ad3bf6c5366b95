/* SPDX-License-Identifier: Apache-2.0 */
/* Conditions that leave a valid policy weaker than it looks. Each finding
 * says what is weak, why, and what to do; commands print them as
 * "ralon: warning: SUBJECT DETAIL" and put them in --json. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "enforce/plan.h"
#include "matcher.h"
#include "policy.h"
#include "scan.h"

typedef enum {
  AUDIT_UNMATCHED_LITERAL,
  AUDIT_UNMATCHED_GLOB,
  AUDIT_SYMLINK,
  AUDIT_HARD_LINKS,
  AUDIT_GIT_HOOKS,
  AUDIT_GIT_CONFIG,
  AUDIT_UNREADABLE,
  AUDIT_ROOT,
  AUDIT_SECOND_MOUNT,
  /* The filesystem a protected path lies on (audit_mounts). */
  AUDIT_BIND_MOUNT,
  AUDIT_OVERLAY,
  AUDIT_FUSE,
  AUDIT_NETWORK_FS,
  /* A symbolic link inside a protected directory to something that is not
   * protected; also the summary line once too many were found. */
  AUDIT_SYMLINK_OUTSIDE,
  /* .git/config: core.hooksPath, core.fsmonitor. */
  AUDIT_GIT_HOOKS_PATH,
  AUDIT_GIT_FSMONITOR_UNPROTECTED,
  AUDIT_GIT_FSMONITOR, /* a note: runs code, but nothing the policy leaves open */
  /* The Landlock backend (audit_landlock). */
  AUDIT_LANDLOCK_METADATA,
  AUDIT_LANDLOCK_TRUNCATE,
  AUDIT_LANDLOCK_NO_NEW_ENTRIES, /* a note: stricter, not weaker */
  AUDIT_INHERITED_FD,
  AUDIT_CASE_INSENSITIVE,
  /* A file beside the way to a protected path that Landlock leaves
   * without a rule, since another name may reach it: a note. */
  AUDIT_LANDLOCK_LINKED_FILE,
  /* A directory on the way that this user cannot list: Landlock grants
   * nothing in it. A note. */
  AUDIT_LANDLOCK_UNLISTED,
  /* An agent.lock further up: only the nearest applies, so what that one
   * protects here is not protected (and this one may have been planted). */
  AUDIT_ENCLOSING_POLICY,
  /* .git is a file (a worktree, a submodule): the hooks and configuration
   * git runs are in a directory outside the project. */
  AUDIT_GIT_DIR_OUTSIDE,
  /* A linked worktree's .git/worktrees/NAME/commondir, which names the
   * repository whose hooks and configuration git runs there. */
  AUDIT_GIT_COMMONDIR_UNPROTECTED,
  /* A commondir file in a git directory where git makes none (.git, a
   * submodule's): git takes hooks and configuration from where it says. */
  AUDIT_GIT_COMMONDIR,
  /* Git, beyond the project's own .git (gitscan.c): a repository inside
   * the project, a directory that looks like a bare one, a configuration
   * file git reads (include.path, includeIf) that the policy leaves
   * writable, a setting in such a file that runs a command, an exec line
   * in sequencer state; and, a note, the search for nested repositories
   * cut short in a very large tree. */
  AUDIT_GIT_NESTED_REPO,
  AUDIT_GIT_BARE_REPO,
  AUDIT_GIT_INCLUDE,
  AUDIT_GIT_COMMAND,
  AUDIT_GIT_SEQUENCER_EXEC,
  AUDIT_GIT_WALK_LIMIT,
  _AUDIT_KIND_MAX,
  _AUDIT_KIND_INVALID = -EINVAL,
} AuditKind;

/* Whether the project's .git is a file, not a directory. */
bool audit_git_is_file(const char *root);

/* Whether the project's .git/config sets extensions.worktreeConfig, so
 * that git also reads .git/config.worktree (and each linked worktree's). */
bool audit_git_worktree_config(const char *root);

typedef struct {
  AuditKind kind;
  char *subject; /* the path or pattern concerned, as the user wrote it */
  char *detail;  /* translated: what is weak, why, and what to do */
  char *pattern; /* unmatched-path and unmatched-glob: the pattern itself */
} AuditFinding;

typedef struct {
  AuditFinding *items;
  size_t n;
  size_t cap;
} AuditFindings;

/* A target the plan found missing that no finding names yet (it was
 * there when the audit looked, and gone by the time the plan did: moved
 * while ralon started) is reported as unmatched-path too, so that what is
 * left unprotected is always said. `root` is the policy's. */
void audit_plan_missing(const Plan *plan, const char *root, AuditFindings *out);

/* Looks at the policy and what the scan found, and at the filesystem
 * around it: the mounts and case-sensitivity of the directories holding
 * protected paths, symbolic links inside protected directories, and
 * .git/config. Never fails: a condition it cannot check is not reported.
 * What depends on the backend or on the caller's descriptors is not here:
 * see audit_landlock() and audit_inherited_fds(). */
void audit_run(const Policy *policy, const Matcher *m, const ScanResult *scan, AuditFindings *out);

/* The other places the directory `root` (canonical) is mounted, from the
 * text of /proc/self/mountinfo: another mount of the same filesystem whose
 * root covers the project is a second path to the same files, and one of
 * part of the project is a second path to the protected `paths` (canonical
 * absolute) in that part; writes through either are restricted by neither
 * backend. Pure: tests hand it text. */
void audit_second_mounts(const char *mountinfo, const char *root, const char *const *paths,
                         size_t n_paths, AuditFindings *out);

/* The mounts holding the protected `paths` (canonical absolute paths), from
 * the text of /proc/self/mountinfo: a bind mount of a directory (another
 * path reaches the same files), an overlay, FUSE, or a network filesystem
 * (writers the sandbox does not contain). Once per mount, named by the
 * first protected path on it, relative to `root` (canonical) when inside
 * it. A bind of a directory onto its own path (what `ralon run` itself
 * makes) and a btrfs subvolume are not bind mounts here. Pure. */
void audit_mounts(const char *mountinfo, const char *root, const char *const *paths, size_t n,
                  AuditFindings *out);

/* Whether `dir` (an absolute path) matches names without regard to case:
 * a short name for why ("casefold", "vfat", "exfat", "ntfs", "hfsplus"), or
 * NULL when it does not or cannot be told. */
typedef const char *(*AuditCaseProbe)(void *userdata, const char *dir);

/* The real probe: FS_IOC_GETFLAGS for the casefold attribute (ext4, f2fs,
 * tmpfs), then statfs(2) for filesystems that are case-insensitive as a
 * whole. */
const char *audit_case_probe(void *userdata, const char *dir);

/* Whether a filesystem of type `fstype` (as /proc/self/mountinfo names
 * it; NULL when unknown) may match names without regard to case as a
 * whole, so that the probe must ask statfs(2): false only for types that
 * match exactly unless a directory carries the casefold attribute (ext4,
 * f2fs, tmpfs, btrfs, bcachefs). Pure. */
bool audit_fs_may_ignore_case(const char *fstype);

/* The case-insensitive directories on the way to the project `root` (from
 * `/`) and from there to each of the protected `paths` (all canonical):
 * the topmost one of each chain, once. */
void audit_case_insensitive(const char *root, const char *const *paths, size_t n,
                            AuditCaseProbe probe, void *userdata, AuditFindings *out);

/* What the Landlock backend leaves open or adds when it enforces `plan`
 * on a kernel with Landlock ABI `abi`: metadata is not governed, before ABI
 * 3 neither is truncation, and the directories on the way to a protected
 * path accept no new entries. Nothing unless plan->backend is Landlock;
 * `abi` below 1 (no Landlock here, in a dry run) says nothing of
 * truncation.
 * `root` (canonical, or NULL) lets paths inside the project be shown
 * relative to it. Pure. */
void audit_landlock(const Plan *plan, int abi, const char *root, AuditFindings *out);

/* An open descriptor, as audit_inherited_fds() looks at it. */
typedef struct {
  int fd;
  char *path; /* what /proc/self/fd/N names; NULL for pipes, sockets, character
               * devices and anonymous inodes, which have no name a policy protects */
  dev_t dev;
  ino_t ino;
  mode_t mode;
  int flags; /* fcntl(F_GETFL): O_ACCMODE and the rest */
} AuditFd;

/* The descriptors open in this process, in increasing order, from
 * /proc/self/fd; with `names`, each one's path (else all are NULL, and
 * audit_fd_path() reads the name of one that needs it). Returns 0 or
 * -errno. */
int audit_list_fds(bool names, AuditFd **ret, size_t *ret_n);
/* What /proc/self/fd/`fd` names, for a descriptor of the kinds a path can
 * reach (`mode`, from fstat): a regular file, directory, block device or
 * symbolic link. NULL for the others, or when the name cannot be read. */
char *audit_fd_path(int fd, mode_t mode);
void audit_fds_free(AuditFd *fds, size_t n);

/* Descriptors in `fds` open for writing on a protected file: the same
 * device and inode as a protected path the scan found, or a path the
 * policy protects. Whatever the backend, a command that inherits one can
 * write through it. Pure but for canonicalising policy->root. */
void audit_inherited_fds(const Policy *policy, const Matcher *m, const ScanResult *scan,
                         const AuditFd *fds, size_t n, AuditFindings *out);

/* Whether a finding leaves protection weaker (`run --strict` refuses
 * those), as opposed to noting something harmless. */
bool audit_weakens(AuditKind k);

/* A stable identifier for --json, e.g. "hard-links". */
const char *audit_kind_to_string(AuditKind k);

void audit_findings_clear(AuditFindings *f);
