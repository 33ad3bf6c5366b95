/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/decision.h"

#include <errno.h>
#include <string.h>

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
  const char **pats = xcalloc(policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < policy->n_patterns; i++) {
    pats[i] = policy->patterns[i].pattern;
  }
  int r = matcher_new(pats, policy->n_patterns, 0, &ret->matcher, err);
  free(pats);
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
  int r = policy_discover(start, &p, err);
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
  memset(p, 0, sizeof(*p));
}

int decide_path(const Decider *d, const char *base, const char *arg, PathDecision *ret,
                Error *err) {
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
    resolved = path_resolve(joined);
    if (resolved == NULL) {
      return error_set(err, errno, _("cannot resolve %s: %m"), arg);
    }
    res = d->canon_root ? path_relative(d->canon_root, resolved) : NULL;
    res_idx = res ? matcher_match(d->matcher, res) : -1;
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
  return 0;
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
