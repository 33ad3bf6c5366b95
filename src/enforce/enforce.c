/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/enforce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce/linux/landlock.h"
#include "enforce/linux/sys.h"
#include "path.h"

void enforce_availability(const char *probe_path, Availability *ret) {
  memset(ret, 0, sizeof(*ret));
  ret->landlock_abi = sys_landlock_abi();
  sys_mount_probe(probe_path ? probe_path : "/", &ret->mount);
}

void enforce_availability_for(Backend requested, bool dry_run, const char *probe_path,
                              Availability *ret) {
  if (dry_run || requested == BACKEND_AUTO) {
    enforce_availability(probe_path, ret);
    return;
  }
  memset(ret, 0, sizeof(*ret));
  ret->landlock_abi = sys_landlock_abi();
  if (requested == BACKEND_LANDLOCK) {
    /* Not probed, and not wanted. */
    ret->mount.step = MOUNT_STEP_NONE;
  }
}

bool enforce_backend_available(const Availability *a, Backend b) {
  switch (b) {
  case BACKEND_MOUNT:
    return a->mount.step == MOUNT_STEP_NONE;
  case BACKEND_LANDLOCK:
    return a->landlock_abi > 0;
  case BACKEND_AUTO:
    return a->mount.step == MOUNT_STEP_NONE || a->landlock_abi > 0;
  case _BACKEND_MAX:
  case _BACKEND_INVALID:
    break;
  }
  return false;
}

char *enforce_describe(const Availability *a, Backend b) {
  if (b == BACKEND_MOUNT) {
    if (a->mount.step == MOUNT_STEP_NONE) {
      return xstrdup(_("available (read-only bind mounts in a locked namespace)"));
    }
    return xasprintf(_("unavailable — %s failed: %s%s"), mount_step_to_string(a->mount.step),
                     strerror(a->mount.errnum), sys_nested_hint(a->mount.step));
  }
  if (a->landlock_abi >= 3) {
    return xasprintf(_("available (kernel ABI v%d)"), a->landlock_abi);
  }
  if (a->landlock_abi == 2) {
    return xstrdup(_("available (kernel ABI v2: truncation is not controlled)"));
  }
  if (a->landlock_abi == 1) {
    return xstrdup(_("available (kernel ABI v1: truncation is not controlled, no cross-directory "
                     "renames)"));
  }
  if (a->landlock_abi == -EOPNOTSUPP) {
    return xstrdup(_("unavailable — Landlock is built into this kernel but not enabled (add "
                     "landlock to the lsm= kernel parameter)"));
  }
  return xstrdup(_("unavailable — the kernel reports no Landlock support (needs Linux 5.13+ with "
                   "Landlock enabled)"));
}

int enforce_select(Backend requested, const Availability *a, Backend *ret, char **ret_why,
                   Error *err) {
  if (requested == BACKEND_MOUNT || requested == BACKEND_LANDLOCK) {
    if (!enforce_backend_available(a, requested)) {
      _cleanup_free_ char *d = enforce_describe(a, requested);
      return error_set(err, ENOTSUP, _("the %s backend is %s"), backend_to_string(requested), d);
    }
    *ret = requested;
    *ret_why = xstrdup(_("requested with --backend"));
    return 0;
  }
  if (enforce_backend_available(a, BACKEND_MOUNT)) {
    *ret = BACKEND_MOUNT;
    *ret_why = xstrdup(_("user namespaces work here; it protects exactly what the policy names"));
    return 0;
  }
  _cleanup_free_ char *md = enforce_describe(a, BACKEND_MOUNT);
  if (sys_mount_probe_exhausted(&a->mount)) {
    if (!enforce_backend_available(a, BACKEND_LANDLOCK)) {
      return error_set(err, a->mount.errnum,
                       _("the mount backend is %s: the kernel ran out of resources (end what "
                         "holds them, such as processes an earlier session left behind)"),
                       md);
    }
    return error_set(err, a->mount.errnum,
                     _("the mount backend is %s: the kernel ran out of resources, which "
                       "something can use up on purpose, so auto does not fall back to the "
                       "weaker landlock backend for it (end what holds them, such as processes "
                       "an earlier session left behind, or choose --backend landlock)"),
                     md);
  }
  if (enforce_backend_available(a, BACKEND_LANDLOCK)) {
    *ret = BACKEND_LANDLOCK;
    *ret_why = xasprintf(_("the mount backend is %s"), md);
    return 0;
  }
  _cleanup_free_ char *ld = enforce_describe(a, BACKEND_LANDLOCK);
  return error_set(err, ENOTSUP,
                   _("no enforcement backend is available:\n  mount     %s\n  landlock  %s\n\n"
                     "Nothing here can stop an agent from writing to the protected paths."),
                   md, ld);
}

static int compare_targets(const void *a, const void *b) {
  return strcmp(((const PlanTarget *)a)->path, ((const PlanTarget *)b)->path);
}

/* The agent.lock the scan found must be the file whose policy is being
 * applied: one moved or replaced between the reading and the scan would
 * leave the policy itself unprotected, or protect another file in its
 * name. */
static int check_policy_file(const Policy *policy, const ScanResult *scan, Error *err) {
  if (policy->file_ino == 0) {
    return 0; /* not read from a file */
  }
  const ProtectedPath *self = NULL;
  for (size_t i = 0; i < scan->n_paths && self == NULL; i++) {
    if (scan->paths[i].pattern == 0 && streq(scan->paths[i].relative, POLICY_FILE_NAME)) {
      self = &scan->paths[i];
    }
  }
  /* A link named agent.lock (allowed) was read through: its target. */
  struct stat st = {0};
  bool found = self != NULL;
  if (found && S_ISLNK(self->mode)) {
    found = stat(self->absolute, &st) == 0;
  } else if (found) {
    st.st_dev = self->dev;
    st.st_ino = self->ino;
  }
  if (!found || st.st_dev != policy->file_dev || st.st_ino != policy->file_ino) {
    return error_set(err, ESTALE,
                     _("%s is not the file ralon read moments ago (moved or replaced while ralon "
                       "started); refusing to run"),
                     policy->file);
  }
  return 0;
}

int enforce_targets(const Policy *policy, const Matcher *m, const ScanResult *scan,
                    PlanTarget **ret, size_t *ret_n, Error *err) {
  PlanTarget *v = NULL;
  size_t n = 0, cap = 0;
  if (check_policy_file(policy, scan, err) < 0) {
    return -1;
  }

  /* Every entry the scan found that is neither a link itself nor found
   * through one is the canonical root plus its relative path, with the
   * identity the scan took. Only the root (once), protected links and
   * what the scan reached through a link (each) need resolving. */
  const char *canon_root = scan->canon_root;
  for (size_t i = 0; i < scan->n_paths; i++) {
    const ProtectedPath *p = &scan->paths[i];
    PlanTarget *t;
    if (!S_ISLNK(p->mode) && !p->via_link && canon_root != NULL) {
      t = grow_array(&v, &n, &cap, sizeof(PlanTarget));
      if (scan->absolute_canonical) {
        /* Not built again (at a thousand paths, a thousand strings and
         * nine page faults). */
        t->path = p->absolute;
      } else {
        t->path = t->path_owned = path_join(canon_root, p->relative);
      }
      t->dev = p->dev;
      t->ino = p->ino;
      t->mode = p->mode;
    } else {
      _cleanup_free_ char *canon = realpath(p->absolute, NULL);
      struct stat st;
      if (canon == NULL || stat(canon, &st) < 0) {
        if (!S_ISLNK(p->mode) || (canon = path_resolve(p->absolute)) == NULL) {
          continue; /* gone since the scan: nothing to protect */
        }
        /* A dangling link: its target is missing, like a literal
         * pattern naming nothing yet (Landlock keeps it from being
         * created, and the link from being replaced; the mount backend
         * can bind nothing, and says so). */
        t = grow_array(&v, &n, &cap, sizeof(PlanTarget));
        t->path = t->path_owned = steal_pointer(&canon);
        t->missing = true;
      } else {
        t = grow_array(&v, &n, &cap, sizeof(PlanTarget));
        t->path = t->path_owned = steal_pointer(&canon);
        t->dev = st.st_dev;
        t->ino = st.st_ino;
        t->mode = st.st_mode;
      }
      if (S_ISLNK(p->mode)) {
        _cleanup_free_ char *dir = path_dirname(p->absolute);
        _cleanup_free_ char *cdir = realpath(dir, NULL);
        if (cdir != NULL) {
          t->link = path_join(cdir, path_basename(p->absolute));
        }
      }
    }
    t->relative = p->relative; /* the scan's: it outlives the plan */
  }
  /* The protected directories so far, which hold what lies below them:
   * an index each target added is entered into, so that each unreadable
   * directory and each missing literal below costs a lookup per
   * component, not a pass over every target. */
  PlanDirs dirs;
  plan_dirs_init(&dirs, v, n);
  /* A directory that could hold protected entries but could not be read
   * (no permission, or names too long to reach) is protected as a whole:
   * what it holds is unknown. Left alone, an agent that made a directory
   * unreadable in one session (neither backend governs the mode of what
   * is not protected) would find its protected files unbound, or granted,
   * in the next. */
  for (size_t i = 0; i < scan->n_unreadable && canon_root != NULL; i++) {
    const char *rel = scan->unreadable[i];
    _cleanup_free_ char *joined = path_join(canon_root, rel);
    /* Reached through a link, perhaps: bound or carved by its own path. */
    _cleanup_free_ char *path = realpath(joined, NULL);
    struct stat st;
    if (path == NULL || lstat(path, &st) < 0) {
      if (errno == ENOENT) {
        continue; /* gone since the scan, and what it held with it */
      }
      int e = errno;
      plan_dirs_clear(&dirs);
      plan_targets_free(v, n);
      errno = e;
      return error_set(err, e, _("cannot protect %s, which could not be read: %m"), joined);
    }
    if (plan_dirs_hold(&dirs, path)) {
      continue;
    }
    PlanTarget *t = grow_array(&v, &n, &cap, sizeof(PlanTarget));
    t->path = t->path_owned = steal_pointer(&path);
    t->relative = rel[0] == '\0' ? "." : rel; /* the scan's: it outlives the plan */
    t->dev = st.st_dev;
    t->ino = st.st_ino;
    t->mode = st.st_mode;
    if (S_ISDIR(st.st_mode)) {
      plan_dirs_add(&dirs, t->path);
    }
  }
  /* Every name the policy protects is a target of its own, also where
   * two name one object (hard links, a bind mount inside the project, two
   * protected links to one file): each name is bound, or kept on the
   * chain, or the other could be renamed, replaced or written. */
  for (size_t i = 1; i < policy->n_patterns; i++) {
    if (scan->hits[i] > 0 || !matcher_is_literal(m, i)) {
      continue;
    }
    _cleanup_free_ char *abs = path_join(policy->root, policy->patterns[i].pattern);
    char *resolved = path_resolve(abs);
    /* A literal the scan did not find may still name something: through
     * a symbolic link on the way (the scan follows none), which is bound
     * or carved out like any target (the audit says the link can be
     * replaced). Inside a directory protected as a whole, the directory
     * holds it already: no target of its own (one that cannot be resolved,
     * below a directory that cannot be searched, by the canonical root's
     * name). */
    _cleanup_free_ char *lexical =
        resolved == NULL && canon_root != NULL
            ? path_join(canon_root, policy->patterns[i].pattern)
            : NULL;
    const char *where = resolved != NULL ? resolved : lexical != NULL ? lexical : abs;
    if (plan_dirs_hold(&dirs, where)) {
      free(resolved);
      continue;
    }
    struct stat st;
    bool found = resolved != NULL && stat(resolved, &st) == 0;
    PlanTarget *t = grow_array(&v, &n, &cap, sizeof(PlanTarget));
    t->path = t->path_owned = resolved ? resolved : xstrdup(abs);
    t->relative = policy->patterns[i].pattern; /* the policy's: it outlives the plan */
    t->missing = !found;
    if (found) {
      t->dev = st.st_dev;
      t->ino = st.st_ino;
      t->mode = st.st_mode;
      if (S_ISDIR(st.st_mode)) {
        plan_dirs_add(&dirs, t->path);
      }
    }
  }
  plan_dirs_clear(&dirs);
  /* Usually sorted already: the scan's order, under one root. */
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; i++) {
    sorted = compare_targets(&v[i - 1], &v[i]) <= 0;
  }
  if (!sorted) {
    qsort(v, n, sizeof(PlanTarget), compare_targets);
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

void enforce_withhold_mounted(Plan *plan) {
  if (plan->backend != BACKEND_LANDLOCK) {
    return;
  }
  /* Only a protected directory can have something of it bound
   * elsewhere, and only a directory grant can be a mount point. */
  bool dir_target = false, dir_grant = false;
  for (size_t i = 0; i < plan->n_targets && !dir_target; i++) {
    dir_target = !plan->targets[i].missing && S_ISDIR(plan->targets[i].mode);
  }
  for (size_t i = 0; i < plan->carve.n_grants && !dir_grant; i++) {
    dir_grant = plan->carve.grants[i].is_dir;
  }
  if (!dir_target || !dir_grant) {
    return;
  }
  _cleanup_free_ char *mountinfo = read_text_file("/proc/self/mountinfo", 16u * 1024u * 1024u);
  if (mountinfo != NULL) {
    carve_withhold_mounted(&plan->carve, plan->targets, plan->n_targets, mountinfo);
  }
}

int enforce_seal_check(Backend backend, int abi, bool *ret_scoped, Error *err) {
  *ret_scoped = landlock_seal_scopes(abi) != 0;
  if (abi < 1) {
    return error_set(err, ENOTSUP, _("--seal needs Landlock, which this kernel does not offer"));
  }
  if (backend == BACKEND_MOUNT && abi < 2) {
    return error_set(err, ENOTSUP,
                     _("--seal needs Landlock ABI 2 or later; this kernel has ABI %d"), abi);
  }
  return 0;
}

int enforce_verify_missing(const Plan *plan, Error *err) {
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    struct stat st;
    if (t->missing && lstat(t->path, &st) == 0) {
      return error_set(err, ESTALE,
                       _("%s appeared while ralon started, after it was found missing, so it "
                         "could not be protected; refusing to run"),
                       t->path);
    }
  }
  return 0;
}

int enforce_check_descriptors(Backend backend, const PlanTarget *targets, size_t n,
                              const Plan *plan, const OpenFds *open, Error *err) {
  if (backend != BACKEND_LANDLOCK) {
    return 0; /* the mount backend holds one descriptor at a time */
  }
  if (open->error < 0) {
    return 0; /* no /proc: nothing to count by, and the run says what fails */
  }
  if (plan == NULL) {
    return plan_check_descriptors(carve_dirs_listed(targets, n), 0, open->n, open->limit, err);
  }
  /* Counted as if none of the plan's were open yet (`open` was read
   * before the lister kept any), as in the dry run, which keeps none. */
  return plan_check_descriptors(plan->carve.n_restricted, plan->carve.n_grants, open->n,
                                open->limit, err);
}

int enforce_check_command(char *const argv[], Error *err) {
  int e = 0;
  _cleanup_free_ char *program = path_search_program(getenv("PATH"), argv[0], &e);
  if (program == NULL) {
    return error_exec(err, e, argv[0]);
  }
  return 0;
}

int enforce_exec(const Plan *plan, const Availability *a, bool seal, char *const argv[],
                 EnforceReady ready, void *userdata, Error *err) {
  if (plan->backend == BACKEND_LANDLOCK) {
    if (landlock_apply(plan, a->landlock_abi, seal, err) < 0) {
      return -1;
    }
  } else {
    /* The mount backend runs the command under its guard (guard_run()). */
    return error_set(err, EINVAL, _("no backend was chosen"));
  }
  if (sys_drop_privileges(err) < 0) {
    return -1;
  }
  /* Without capabilities: what the command will see (inside the mount
   * backend's user namespace, CAP_DAC_READ_SEARCH would find paths the
   * user cannot look up, which the plan could not either). */
  if (enforce_verify_missing(plan, err) < 0) {
    return -1;
  }
  /* A command that cannot be found fails here, before ready() says the
   * paths are locked and starts the journal's record of the run. What
   * only execve(2) finds (a missing #! interpreter, E2BIG, ETXTBSY) fails
   * after it: the paths were locked, and the caller's failure record
   * follows the first one with the error. */
  if (enforce_check_command(argv, err) < 0) {
    return -1;
  }
  if (ready != NULL) {
    ready(userdata);
  }
  fflush(stdout);
  fflush(stderr);
  execvp(argv[0], argv);
  return error_exec(err, errno, argv[0]);
}
