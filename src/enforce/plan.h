/* SPDX-License-Identifier: Apache-2.0 */
/* The Plan: what a backend will do, built by pure code from the scan so
 * `run --dry-run` can print it on any machine (ARCHITECTURE.md §4). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "matcher.h"
#include "strset.h"
#include "util.h"

typedef enum {
  BACKEND_AUTO,
  BACKEND_MOUNT,
  BACKEND_LANDLOCK,
  _BACKEND_MAX,
  _BACKEND_INVALID = -EINVAL,
} Backend;

const char *backend_to_string(Backend b);
Backend backend_from_string(const char *s);

/* One object to protect, by canonical path and identity. */
typedef struct {
  const char *path; /* canonical absolute path (symbolic links resolved) */
  char *path_owned; /* `path` when the plan owns it (freed with it); NULL when
                     * it is the scan's, which outlives the plan */
  const char *relative; /* as the scan named it, relative to the project root:
                         * borrowed from the scan or the policy, which
                         * outlive the plan (not freed with it) */
  dev_t dev;
  ino_t ino;
  mode_t mode;
  bool missing;     /* a literal pattern naming nothing yet (ino unknown) */
  char *link;       /* when the policy named a symbolic link: its own path */
} PlanTarget;

/* One entry of a directory, as the Landlock carve-out sees it. */
typedef struct {
  char *name;
  dev_t dev;
  ino_t ino;
  mode_t mode;
  /* dev and ino are what stat(2) of the entry gave, or what getdents(2)
   * gave on a filesystem where that is the same thing. false: only a
   * guess, to be checked again when the entry is opened. */
  bool exact;
  /* Not a directory, and another name may reach the same file: it has
   * more than one hard link, or something is mounted on it. A Landlock
   * rule attaches to the file, not to the name, so a rule here would
   * also open it where it is protected (a hard link to a file inside a
   * protected directory). */
  bool aliased;
} DirEntry;

/* Lists the entries of `dir` (no ".."), without following symbolic links.
 * An entry named "." may carry the identity of `dir` itself: the carve-out
 * then never grants another name of it (for `/`, the one directory no
 * listing of a parent names). Production code reads the filesystem; unit
 * tests pass a fake tree. Returns 0 or -errno. */
typedef int (*DirLister)(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n);

/* A directory kept open: its descriptor (-1: none) and the device and
 * inode it had when it was opened. */
typedef struct {
  int fd;
  dev_t dev;
  ino_t ino;
  /* Its ctime when it was opened, before it was listed: any entry made,
   * removed or renamed in it since changes it (landlock_apply). */
  struct timespec ctime;
} OpenDir;

typedef struct {
  char *path;
  bool is_dir;
  /* The identity the plan checked (the lister's DirEntry.dev and .ino):
   * landlock_apply puts the rule only on this object, whatever the name
   * leads to by then. */
  dev_t dev;
  ino_t ino;
  /* That identity is the entry's own (DirEntry.exact): opened without
   * crossing a mount point, the object must have it. */
  bool exact;
} CarveGrant;

typedef struct {
  /* Full write access below each of these (siblings of the chain). */
  CarveGrant *grants;
  size_t n_grants;
  /* Directories on the way to a protected path: they get no rights, so
   * they accept no new entries and lose none. Sorted, parents first. */
  char **restricted;
  size_t n_restricted;
  /* Files in those directories that get no rule because another name
   * may reach them (DirEntry.aliased): read-only while the agent runs. */
  char **withheld;
  size_t n_withheld;
  /* Directories of the chain this user may search but not list (mode
   * 0711): nothing in them is granted, so all of it is read-only. */
  char **unlisted;
  size_t n_unlisted;
} Carve;

typedef struct {
  Backend backend;
  PlanTarget *targets; /* sorted by path; one object may have several names */
  size_t n_targets;
  /* Mount backend: every ancestor of a target from the first component
   * below `/` down, parents first; each becomes a mount point so it cannot
   * be renamed or removed. */
  char **pinned;
  size_t n_pinned;
  Carve carve; /* Landlock backend */
  /* Landlock backend, when the lister kept them (sys_give_kept_dirs()):
   * for each carve.restricted[i], the directory its listing was read
   * through. The rules are opened through it: the directory the plan
   * listed, with no second open and stat. Closed by plan_clear() (and at
   * execve: O_CLOEXEC). */
  OpenDir *restricted_open;
} Plan;

/* The ancestors of every (existing) target, from below `/` down, parents
 * first, skipping anything inside a protected directory. */
int plan_pinned(const PlanTarget *targets, size_t n, char ***ret, size_t *ret_n);

/* The Landlock carve-out for `targets` (docs/ARCHITECTURE.md §4, "Landlock
 * backend"): every directory on the way from `/` to a target is restricted,
 * every other entry of those directories is granted. Everything is compared
 * by device and inode, never by name, so a hard link or bind alias of a
 * protected object or chain directory is never granted. */
int carve_plan(const PlanTarget *targets, size_t n, DirLister lister, void *userdata, Carve *ret,
               Error *err);

/* How many directories carve_plan() lists for `targets`: each is held
 * open from its listing until the Landlock rules are made where the
 * lister keeps them (sys_list_dir_scanned(), ScannedDirs.keep_dirs). */
size_t carve_dirs_listed(const PlanTarget *targets, size_t n);

/* How many descriptors landlock_apply() opens for rules before it closes
 * them together. */
#define PLAN_RULE_BATCH 64
/* Descriptors the run opens besides, while the chain is held: the
 * ruleset, a file read while planning (the mount table), the journal's
 * socket. */
#define PLAN_FD_SLACK 4

/* Whether the landlock backend's descriptors fit under `limit` (the soft
 * RLIMIT_NOFILE; 0: none) with `open` open already: `dirs` directories on
 * the way to protected paths, held open from their listing until the
 * rules are made, and, once the plan is built, a batch of its `grants`
 * (0 before). Fails with EMFILE and a message that names the numbers, so
 * that the dry run, asking with the same numbers, says what the run says
 * instead of the run failing half-way with a bare "Too many open files". */
int plan_check_descriptors(size_t dirs, size_t grants, size_t open, unsigned long long limit,
                           Error *err);

int plan_build(Backend backend, PlanTarget *targets, size_t n, DirLister lister, void *userdata,
               Plan *ret, Error *err);

/* Moves to c->withheld every directory grant on which a bind mount of
 * something inside a protected directory sits (`mountinfo`: the text of
 * /proc/self/mountinfo): a rule there lands on an inode inside the
 * protected directory, and Landlock would let it be written under its
 * protected name too. Pure: the mount table is handed in. */
void carve_withhold_mounted(Carve *c, const PlanTarget *targets, size_t n,
                            const char *mountinfo);
void dir_entries_free(DirEntry *e, size_t n);
void carve_clear(Carve *c);
void plan_targets_free(PlanTarget *t, size_t n);
void plan_clear(Plan *p);

/* What a plan leaves unprotected whatever the policy (`run --dry-run`'s
 * "not covered"): Landlock never governs metadata, and below ABI 3 not
 * truncation either. abi < 1: a dry run where there is no Landlock, whose
 * ABI is unknown. */
typedef enum {
  PLAN_GAP_METADATA = 1 << 0, /* chmod, chown, utimes, xattrs */
  PLAN_GAP_TRUNCATE = 1 << 1, /* truncate(2), open(O_TRUNC) */
} PlanGap;
unsigned plan_gaps(Backend backend, int landlock_abi);

/* Whether `plan` keeps a new name that matches pattern `idx` (`pattern`,
 * as the policy normalised it) from being made while the command runs: a
 * name that does not exist when it starts, such as
 * `migrations/002_new.sql` where the policy protects every `.sql` file in
 * `migrations`.
 *
 * The mount backend binds read-only what exists at the start: it stops a
 * new name only inside a protected directory, so a pattern is covered
 * when it is a literal naming a protected object, or when everything it
 * can match lies inside a protected directory (its leading segments
 * without a wildcard name one, or a path below one). A literal naming
 * nothing yet is not (`missing`, as the plan says).
 *
 * The landlock backend refuses every new entry in the directories on the
 * way to a protected path and inside a protected directory, and allows
 * any below a directory it grants: a pattern is covered unless it could
 * match something below a granted directory (`**` over the project, or a
 * glob that matches nothing yet in a directory off the chain).
 * `canon_root` is the project root as the plan's paths have it (NULL:
 * unknown, and nothing counts as covered). */
bool plan_stops_new_names(const Plan *plan, const Matcher *m, size_t idx, const char *pattern,
                          const char *canon_root);

/* plan_stops_new_names() for every pattern at once (`patterns`, `n` of
 * them, as the policy normalised them): stops[i] for pattern i. One pass
 * over the targets (sorted, then looked up) or the grants (each
 * attributed to the patterns that could match below it), not one per
 * pattern: with thousands of literal patterns, the difference between
 * linear and quadratic. */
void plan_new_names_stopped(const Plan *plan, const Matcher *m, const char *const *patterns,
                            size_t n, const char *canon_root, bool *stops);

/* Whether the restricted `path` is a directory whose entries the
 * restriction holds: the carve-out restricts everything on the way to each
 * target, and that way may pass through names that do not exist (to a
 * literal naming nothing, or a dangling link's target) or a file (a
 * worktree's .git), which have no entries to refuse (the directory above
 * them refuses their creation). One that cannot be looked at counts. */
bool carve_restricts_entries(const char *path);

/* Shared by plan.c and carve.c. */
void plan_sort_unique(char **v, size_t *n);
void plan_add_ancestors(const char *path, const char *prev, char ***v, size_t *n, size_t *cap);

/* The protected directories among some targets (neither missing nor
 * anything but a directory), in a hash set: whether a path is one of them
 * or lies below one (path_relative()), at a lookup per component of the
 * path instead of a pass over every target; more can be added as targets
 * are. It borrows their paths, which must outlive it. */
typedef struct {
  StrSet set;
  bool root; /* `/` is one of them */
} PlanDirs;
void plan_dirs_init(PlanDirs *d, const PlanTarget *t, size_t n);
void plan_dirs_add(PlanDirs *d, const char *path);
bool plan_dirs_hold(const PlanDirs *d, const char *path);
void plan_dirs_clear(PlanDirs *d);
