/* SPDX-License-Identifier: Apache-2.0 */
/* The one decision `ralon check PATH` and every agent hook share: is this
 * path protected, and by which pattern? From the policy alone, in
 * O(patterns): no scan of the tree. */
#pragma once

#include <stdbool.h>

#include "matcher.h"
#include "policy.h"
#include "util.h"

typedef enum {
  VERDICT_WRITABLE,
  VERDICT_LOCKED,
  VERDICT_OUTSIDE,
  _VERDICT_MAX,
} Verdict;

const char *verdict_to_string(Verdict v);

/* A policy ready for decisions. */
typedef struct {
  Policy *policy;
  Matcher *matcher;
  char *canon_root; /* the root with symbolic links resolved, or NULL */
} Decider;

/* Loads the policy found from `start` upwards (policy_discover). */
int decider_open(const char *start, Decider *ret, Error *err);
/* Takes over an already loaded policy. */
int decider_from_policy(Policy *policy, Decider *ret, Error *err);
void decider_clear(Decider *d);

typedef struct {
  Verdict verdict;
  char *relative; /* the name inside the project; NULL when outside */
  char *via;      /* locked through the resolved name: that name, else NULL */
  /* Unless the name as written is locked: the name inside the project
   * with symbolic links resolved, or NULL when that lies outside. */
  char *resolved;
  long pattern; /* index of the matching pattern, or -1 */
} PathDecision;

/* Decides `arg` (relative to `base`, an absolute directory). Both the name
 * as written, with `..` resolved lexically, and the name with symbolic
 * links resolved count; a path that does not exist yet can be locked. */
int decide_path(const Decider *d, const char *base, const char *arg, PathDecision *ret,
                Error *err);
/* The same, and with `entry` for the entry `arg` names, its last
 * component not followed: for a name removed or renamed as it is (a
 * symbolic link goes itself). `resolved`: what the path resolves to, so,
 * already known (NULL: resolved here), for a caller deciding one path
 * against several policies, each resolution being a system call per
 * component. */
int decide_known(const Decider *d, const char *base, const char *arg, bool entry,
                 const char *resolved, PathDecision *ret, Error *err);
void path_decision_clear(PathDecision *p);

/* Whether some protected path could end with the relative path `rel`:
 * for agents that "correct" a relative path to any file whose name ends
 * with it (Gemini CLI's replace tool). */
bool decide_suffix(const Decider *d, const char *rel, long *ret_pattern);

/* Whether the relative name `rel`, written in a directory the caller
 * cannot know, may be protected: a pattern names a path that may end with
 * it by more than `**` (matcher_match_named_suffix), or with `tree`
 * something below such a path. Leading `..` climb from an unknown place
 * to another: they are dropped; with nothing left, a tree may hold
 * anything (pattern 0, agent.lock). */
bool decide_somewhere(const Decider *d, const char *rel, bool tree, long *ret_pattern);

/* For a shell glob (`rm tests/x*.txt`), absolute and normalised: the first
 * pattern that could protect something it names (with `tree`, something
 * named or below it), or -1. Decided from the patterns alone, never by
 * listing directories, and component by component against `root` (the
 * policy's root or its canonical name), so that a glob starting above the
 * root (`rm -rf ../proj*`) counts too. *ret_rest is the part of the glob
 * below the root ("" for the root itself), or NULL when the glob names
 * something above it: then only `tree` can reach a protected path. */
long decide_glob(const Decider *d, const char *root, const char *glob, bool tree,
                 const char **ret_rest);
