/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/decision.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

const char *verdict_to_string(Verdict v) {
  static const char *const names[_VERDICT_MAX] = {
      [VERDICT_WRITABLE] = "writable",
      [VERDICT_LOCKED] = "locked",
      [VERDICT_OUTSIDE] = "outside",
  };
  return v < _VERDICT_MAX ? names[v] : NULL;
}

int decider_from_policy(Policy *policy, Decider *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  int r = policy_matcher(policy, 0, &ret->matcher, err);
  ret->policy = policy;
  if (r < 0) {
    decider_clear(ret);
    return -1;
  }
  ret->canon_root = policy_canonical_root(policy);
  return 0;
}

int decider_open(const char *start, Decider *ret, Error *err) {
  Policy *p = NULL;
  memset(ret, 0, sizeof(*ret));
  int r = policy_discover_flags(start, 0, &p, err);
  if (r < 0) {
    return r;
  }
  return decider_from_policy(p, ret, err);
}

void decider_clear(Decider *d) {
  matcher_free(d->matcher);
  policy_free(d->policy);
  free(d->canon_root);
  memset(d, 0, sizeof(*d));
}

void path_decision_clear(PathDecision *p) {
  free(p->relative);
  free(p->via);
  free(p->resolved);
  memset(p, 0, sizeof(*p));
}

static bool overlong_component(const char *p) {
  for (const char *c = p; *c != '\0';) {
    size_t len = strcspn(c, "/");
    if (len > NAME_MAX) {
      return true;
    }
    c += len + (c[len] == '/');
  }
  return false;
}

/* `joined` with symbolic links resolved, all of them or (`entry`) all but
 * the last component's. */
static char *resolve(const char *joined, bool entry) {
  if (!entry) {
    return path_resolve(joined);
  }
  _cleanup_free_ char *dir = path_dirname(joined);
  _cleanup_free_ char *rdir = path_resolve(dir);
  return rdir != NULL ? path_join(rdir, path_basename(joined)) : NULL;
}

static int decide(const Decider *d, const char *base, const char *arg, bool entry,
                  const char *known, PathDecision *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  ret->pattern = -1;
  _cleanup_free_ char *abs = path_absolute(base, arg);
  if (abs == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  const char *lex = path_relative(d->policy->root, abs);
  long lex_idx = lex ? matcher_match(d->matcher, lex) : -1;

  _cleanup_free_ char *resolved = NULL;
  const char *res = NULL;
  long res_idx = -1;
  if (lex_idx < 0) {
    /* Only needed when the name as written is not protected. */
    _cleanup_free_ char *joined = arg[0] == '/' ? xstrdup(arg) : path_join(base, arg);
    resolved = known != NULL ? xstrdup(known) : resolve(joined, entry);
    if (resolved == NULL && !(errno == ENAMETOOLONG && overlong_component(joined))) {
      return error_set(err, errno, _("cannot resolve %s: %m"), arg);
    }
    /* A component longer than NAME_MAX names no file (a string under a
     * path key that is really code): the name as written is all there is. */
    res = d->canon_root && resolved ? path_relative(d->canon_root, resolved) : NULL;
    /* The same name as written (no link on the way, as mostly) has had
     * its answer: a lookup compares with every pattern until the matcher
     * has its index. */
    res_idx = res == NULL || (lex != NULL && streq(res, lex)) ? -1 : matcher_match(d->matcher, res);
  }

  if (lex_idx >= 0) {
    ret->verdict = VERDICT_LOCKED;
    ret->relative = xstrdup(lex);
    ret->pattern = lex_idx;
  } else if (res_idx >= 0) {
    /* Inside the project by name: that name, and where it leads. From
     * outside: the name inside the project it resolves to. */
    ret->verdict = VERDICT_LOCKED;
    ret->relative = xstrdup(lex ? lex : res);
    ret->via = lex ? xstrdup(res[0] ? res : ".") : NULL;
    ret->pattern = res_idx;
  } else if (lex != NULL || res != NULL) {
    ret->verdict = VERDICT_WRITABLE;
    ret->relative = xstrdup(lex ? lex : res);
  } else {
    ret->verdict = VERDICT_OUTSIDE;
  }
  if (res != NULL) {
    ret->resolved = xstrdup(res);
  }
  return 0;
}

int decide_path(const Decider *d, const char *base, const char *arg, PathDecision *ret,
                Error *err) {
  return decide(d, base, arg, false, NULL, ret, err);
}

int decide_known(const Decider *d, const char *base, const char *arg, bool entry,
                 const char *resolved, PathDecision *ret, Error *err) {
  return decide(d, base, arg, entry, resolved, ret, err);
}

bool decide_suffix(const Decider *d, const char *rel, long *ret_pattern) {
  _cleanup_free_ char *norm = path_normalize(rel);
  if (norm[0] == '/' || startswith(norm, "..")) {
    return false;
  }
  long idx = matcher_match_suffix(d->matcher, norm);
  if (idx >= 0 && ret_pattern != NULL) {
    *ret_pattern = idx;
  }
  return idx >= 0;
}

bool decide_somewhere(const Decider *d, const char *rel, bool tree, long *ret_pattern) {
  _cleanup_free_ char *norm = path_normalize(rel);
  const char *r = norm;
  while (r[0] == '.' && r[1] == '.' && (r[2] == '/' || r[2] == '\0')) {
    r += r[2] == '/' ? 3 : 2;
  }
  if (r[0] == '/') {
    return false; /* not relative */
  }
  long idx;
  if (r[0] == '\0' || streq(r, ".")) {
    idx = tree ? 0 : -1;
  } else {
    idx = matcher_match_named_suffix(d->matcher, r, tree);
  }
  if (idx >= 0 && ret_pattern != NULL) {
    *ret_pattern = idx;
  }
  return idx >= 0;
}

/* The next component of the path at *p (none left: false), skipping `/`. */
static bool next_component(const char **p, const char **ret, size_t *ret_len) {
  while (**p == '/') {
    (*p)++;
  }
  if (**p == '\0') {
    return false;
  }
  *ret = *p;
  *p = strchrnul(*p, '/');
  *ret_len = (size_t)(*p - *ret);
  return true;
}

static size_t depth(const char *rel) {
  size_t n = 0;
  const char *c;
  size_t len;
  while (next_component(&rel, &c, &len)) {
    n++;
  }
  return n;
}

/* Whether what literal pattern `idx` names cannot hold anything a longer
 * glob could name: an entry that is not a directory, or none at all (a
 * glob names only what exists when the shell expands it). One stat(2). */
static bool holds_nothing(const Decider *d, size_t idx) {
  _cleanup_free_ char *p = path_join(d->policy->root, d->policy->patterns[idx].pattern);
  struct stat st;
  if (stat(p, &st) == 0) {
    return !S_ISDIR(st.st_mode);
  }
  return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
}

/* decide_glob for a glob relative to the root. */
static long glob_inside(const Decider *d, const char *rel, bool tree) {
  size_t n = depth(rel);
  for (size_t i = 0; i < d->policy->n_patterns; i++) {
    if (!matcher_match_glob_one(d->matcher, i, rel, tree)) {
      continue;
    }
    /* A `*` in the glob's first component could name agent.lock, with
     * the glob going on below it; but nothing lies below a file. A literal
     * pattern names one path, which can be looked at. */
    if (matcher_is_literal(d->matcher, i) && depth(d->policy->patterns[i].pattern) < n &&
        holds_nothing(d, i)) {
      continue;
    }
    return (long)i;
  }
  return -1;
}

static bool has_wildcard(const char *s, size_t len) {
  return memchr(s, '*', len) != NULL || memchr(s, '?', len) != NULL ||
         memchr(s, '[', len) != NULL;
}

long decide_glob(const Decider *d, const char *root, const char *glob, bool tree,
                 const char **ret_rest) {
  *ret_rest = NULL;
  const char *g = glob, *r = root;
  for (;;) {
    const char *rc, *gc;
    size_t rlen, glen;
    if (!next_component(&r, &rc, &rlen)) {
      /* Down to the root: the rest is inside. */
      while (*g == '/') {
        g++;
      }
      *ret_rest = g;
      return glob_inside(d, g, tree);
    }
    if (!next_component(&g, &gc, &glen)) {
      /* The glob may name the root's parent or one above: removed or
       * moved, it takes agent.lock (pattern zero) with it. */
      return tree ? 0 : -1;
    }
    bool same;
    if (has_wildcard(gc, glen)) {
      _cleanup_free_ char *pat = xstrndup(gc, glen);
      _cleanup_free_ char *name = xstrndup(rc, rlen);
      same = matcher_glob_may_name(d->matcher, pat, name);
    } else {
      same = glen == rlen && memcmp(gc, rc, glen) == 0;
    }
    if (!same) {
      return -1;
    }
  }
}
