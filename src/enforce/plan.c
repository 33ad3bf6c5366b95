/* SPDX-License-Identifier: Apache-2.0 */
/* Pure planning: no system calls here, only what the caller hands in (and
 * plan_clear() closes the descriptors it was given). */
#include "enforce/plan.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

static const char *const backend_names[_BACKEND_MAX] = {
    [BACKEND_AUTO] = "auto",
    [BACKEND_MOUNT] = "mount",
    [BACKEND_LANDLOCK] = "landlock",
};

const char *backend_to_string(Backend b) {
  if (b < 0 || b >= _BACKEND_MAX) {
    return NULL;
  }
  return backend_names[b];
}

Backend backend_from_string(const char *s) {
  for (int b = 0; b < _BACKEND_MAX; b++) {
    if (streq(backend_names[b], s)) {
      return (Backend)b;
    }
  }
  return _BACKEND_INVALID;
}

/* Sorts and removes duplicates; strcmp order puts every parent before its
 * children, because a parent is a prefix of them. */
void plan_sort_unique(char **v, size_t *n) {
  if (*n == 0) {
    return;
  }
  qsort(v, *n, sizeof(char *), strings_compare);
  size_t o = 1;
  for (size_t i = 1; i < *n; i++) {
    if (streq(v[i], v[o - 1])) {
      free(v[i]);
    } else {
      v[o++] = v[i];
    }
  }
  *n = o;
}

void plan_dirs_init(PlanDirs *d, const PlanTarget *t, size_t n) {
  *d = (PlanDirs){0};
  for (size_t i = 0; i < n; i++) {
    if (!t[i].missing && S_ISDIR(t[i].mode)) {
      plan_dirs_add(d, t[i].path);
    }
  }
}

void plan_dirs_add(PlanDirs *d, const char *path) {
  d->root |= streq(path, "/");
  strset_add(&d->set, path);
}

bool plan_dirs_hold(const PlanDirs *d, const char *path) {
  if (d->set.n == 0) {
    return false;
  }
  /* path_relative(dir, path): `path` is the directory or lies below it,
   * and everything absolute lies below `/`. */
  if (path[0] == '/' && d->root) {
    return true;
  }
  /* `path` itself and each of its ancestors, by its first `j` bytes. */
  for (size_t j = 0;; j++) {
    if ((path[j] == '/' || path[j] == '\0') && strset_has(&d->set, path, j)) {
      return true;
    }
    if (path[j] == '\0') {
      return false;
    }
  }
}

void plan_dirs_clear(PlanDirs *d) {
  strset_clear(&d->set);
  d->root = false;
}

/* Appends every proper ancestor of `path` below `/` that is not also an
 * ancestor of `prev` (NULL: none is) to *v. Fed paths in sorted order, as
 * the targets are, each directory is added about once instead of once per
 * path below it. */
void plan_add_ancestors(const char *path, const char *prev, char ***v, size_t *n, size_t *cap) {
  bool shared = prev != NULL;
  for (const char *s = strchr(path + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
    size_t len = (size_t)(s - path);
    /* Ancestors grow one component at a time: once one is not shared,
     * no longer one is. */
    shared = shared && strncmp(prev, path, len) == 0 && prev[len] == '/';
    if (shared) {
      continue;
    }
    char **slot = grow_array(v, n, cap, sizeof(char *));
    *slot = xstrndup(path, len);
  }
}

int plan_pinned(const PlanTarget *targets, size_t n, char ***ret, size_t *ret_n) {
  char **v = NULL;
  size_t nv = 0, cap = 0;
  const char *prev = NULL;
  for (size_t i = 0; i < n; i++) {
    if (targets[i].missing) {
      continue;
    }
    plan_add_ancestors(targets[i].path, prev, &v, &nv, &cap);
    prev = targets[i].path;
  }
  plan_sort_unique(v, &nv);
  size_t o = 0;
  PlanDirs dirs;
  plan_dirs_init(&dirs, targets, n);
  for (size_t i = 0; i < nv; i++) {
    /* An ancestor inside a protected directory is read-only already. */
    if (plan_dirs_hold(&dirs, v[i])) {
      free(v[i]);
    } else {
      v[o++] = v[i];
    }
  }
  plan_dirs_clear(&dirs);
  *ret = v;
  *ret_n = o;
  return 0;
}

int plan_build(Backend backend, PlanTarget *targets, size_t n, DirLister lister, void *userdata,
               Plan *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  ret->backend = backend;
  ret->targets = targets;
  ret->n_targets = n;
  if (backend == BACKEND_MOUNT) {
    return plan_pinned(targets, n, &ret->pinned, &ret->n_pinned);
  }
  if (backend == BACKEND_LANDLOCK) {
    return carve_plan(targets, n, lister, userdata, &ret->carve, err);
  }
  return 0;
}

int plan_check_descriptors(size_t dirs, size_t grants, size_t open, unsigned long long limit,
                           Error *err) {
  size_t need = dirs + (grants < PLAN_RULE_BATCH ? grants : PLAN_RULE_BATCH) + PLAN_FD_SLACK;
  if (limit == 0 || (unsigned long long)open + need <= limit) {
    return 0;
  }
  return error_set(err, EMFILE,
                   _("the plan needs %zu open directories (those on the way to protected paths, "
                     "held open while the Landlock rules are made), more than the limit of %llu "
                     "open files (ulimit -n) leaves room for; raise it with `ulimit -n`"),
                   dirs, limit);
}

void plan_targets_free(PlanTarget *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(t[i].path_owned);
    free(t[i].link);
  }
  free(t);
}

void plan_clear(Plan *p) {
  for (size_t i = 0; i < p->n_pinned; i++) {
    free(p->pinned[i]);
  }
  free(p->pinned);
  if (p->restricted_open != NULL) {
    int *fds = xcalloc(p->carve.n_restricted + 1, sizeof(int));
    size_t n = 0;
    for (size_t i = 0; i < p->carve.n_restricted; i++) {
      if (p->restricted_open[i].fd >= 0) {
        fds[n++] = p->restricted_open[i].fd;
      }
    }
    close_fds(fds, n);
    free(fds);
    free(p->restricted_open);
  }
  carve_clear(&p->carve);
  plan_targets_free(p->targets, p->n_targets);
  memset(p, 0, sizeof(*p));
}

unsigned plan_gaps(Backend backend, int landlock_abi) {
  if (backend != BACKEND_LANDLOCK) {
    return 0;
  }
  unsigned gaps = PLAN_GAP_METADATA;
  if (landlock_abi >= 1 && landlock_abi < 3) {
    gaps |= PLAN_GAP_TRUNCATE;
  }
  return gaps;
}

/* Whether the project-relative `rel` is `dir` or lies below it (a
 * target's relative name is "." for the root). */
static bool relative_within(const char *dir, const char *rel) {
  if (streq(dir, ".")) {
    return true;
  }
  size_t n = strlen(dir);
  return strncmp(rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* The leading segments of `pattern` that hold no wildcard (the matcher's:
 * `*`, `?`, `[` and `{` alternatives): what every match begins with. */
static char *literal_prefix(const char *pattern) {
  size_t end = 0;
  for (const char *s = pattern;;) {
    size_t len = strcspn(s, "/");
    size_t plain = strcspn(s, "*?[{");
    if (plain < len) {
      break;
    }
    end = (size_t)(s - pattern) + len;
    if (s[len] == '\0') {
      break;
    }
    s += len + 1;
  }
  return xstrndup(pattern, end);
}

bool plan_stops_new_names(const Plan *plan, const Matcher *m, size_t idx, const char *pattern,
                          const char *canon_root) {
  if (plan->backend == BACKEND_MOUNT) {
    bool literal = matcher_is_literal(m, idx);
    _cleanup_free_ char *prefix = literal ? xstrdup(pattern) : literal_prefix(pattern);
    for (size_t i = 0; i < plan->n_targets; i++) {
      const PlanTarget *t = &plan->targets[i];
      if (t->missing || t->relative == NULL) {
        continue;
      }
      if ((literal && streq(t->relative, pattern)) ||
          (S_ISDIR(t->mode) && relative_within(t->relative, prefix))) {
        return true;
      }
    }
    return false;
  }
  if (plan->backend == BACKEND_LANDLOCK) {
    if (canon_root == NULL) {
      return false;
    }
    for (size_t i = 0; i < plan->carve.n_grants; i++) {
      const CarveGrant *g = &plan->carve.grants[i];
      const char *rel = g->is_dir ? path_relative(canon_root, g->path) : NULL;
      /* A file holds no new names; a directory outside the project holds
       * nothing a pattern names (the root itself is never granted). */
      if (rel != NULL && rel[0] != '\0' && matcher_may_match_below_one(m, idx, rel)) {
        return false;
      }
    }
    return true;
  }
  return false;
}

/* Whether some directory in `dirs` holds the project-relative `rel`, as
 * relative_within() says: "." or `rel` itself or one of its leading
 * paths. */
static bool within_some(const StrSet *dirs, const char *rel) {
  if (dirs->n == 0) {
    return false;
  }
  if (strset_has(dirs, ".", 1)) {
    return true;
  }
  for (size_t j = 0;; j++) {
    if ((rel[j] == '/' || rel[j] == '\0') && strset_has(dirs, rel, j)) {
      return true;
    }
    if (rel[j] == '\0') {
      return false;
    }
  }
}

static void stops_nothing_below(size_t pattern, void *data) {
  ((bool *)data)[pattern] = false;
}

void plan_new_names_stopped(const Plan *plan, const Matcher *m, const char *const *patterns,
                            size_t n, const char *canon_root, bool *stops) {
  if (plan->backend == BACKEND_MOUNT) {
    /* The names of the protected objects, and of the protected
     * directories, in sets: a lookup per pattern (and per component of
     * it), not a sort of every target. */
    StrSet names = {0}, dirs = {0};
    for (size_t i = 0; i < plan->n_targets; i++) {
      const PlanTarget *t = &plan->targets[i];
      if (t->missing || t->relative == NULL) {
        continue;
      }
      strset_add(&names, t->relative);
      if (S_ISDIR(t->mode)) {
        strset_add(&dirs, t->relative);
      }
    }
    for (size_t i = 0; i < n; i++) {
      bool literal = matcher_is_literal(m, i);
      if (literal && strset_has(&names, patterns[i], strlen(patterns[i]))) {
        stops[i] = true;
        continue;
      }
      _cleanup_free_ char *prefix = literal ? NULL : literal_prefix(patterns[i]);
      stops[i] = within_some(&dirs, literal ? patterns[i] : prefix);
    }
    strset_clear(&names);
    strset_clear(&dirs);
    return;
  }
  bool landlock = plan->backend == BACKEND_LANDLOCK && canon_root != NULL;
  for (size_t i = 0; i < n; i++) {
    stops[i] = landlock;
  }
  if (!landlock) {
    return;
  }
  for (size_t i = 0; i < plan->carve.n_grants; i++) {
    const CarveGrant *g = &plan->carve.grants[i];
    const char *rel = g->is_dir ? path_relative(canon_root, g->path) : NULL;
    if (rel != NULL && rel[0] != '\0') {
      matcher_each_match(m, rel, true, stops_nothing_below, stops);
    }
  }
}

bool carve_restricts_entries(const char *path) {
  struct stat st;
  if (lstat(path, &st) < 0) {
    return errno != ENOENT && errno != ENOTDIR;
  }
  return S_ISDIR(st.st_mode);
}
