/* SPDX-License-Identifier: Apache-2.0 */
/* Patterns → compiled globs, and the question every command asks: which
 * pattern, if any, protects this project-relative path?
 *
 * Rules (ARCHITECTURE.md §2): `*` and `?` never match `/`; `[...]` classes; `**`
 * is a whole segment matching zero or more segments; `{a,b}` alternatives
 * (one level, as the Rust ralon's globset reads them). A pattern `p`
 * protects `p` and everything below it. Segments are matched with glibc's
 * fnmatch(3) in a UTF-8 locale, so `?` matches one character on every
 * machine (glibc also lets a run of `?` match the bytes of one multibyte
 * character: more protected, never less). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef struct Matcher Matcher;

enum {
  MATCHER_CASEFOLD = 1 << 0, /* what macOS and Windows need */
};

/* Limits that keep a hostile policy from costing more than a benign one. */
#define MATCHER_MAX_SEGMENTS 256
#define MATCHER_MAX_ALTERNATIVES 256

/* 0 when `pattern` (already normalised) is a valid glob; otherwise -1 and a
 * translated reason in *ret_reason, which the caller frees. */
int matcher_check_pattern(const char *pattern, char **ret_reason);

/* Compiles normalised patterns; their order is kept, so the lowest index
 * that matches is the one reported. The matcher borrows the patterns'
 * strings (a literal path is matched against its own text, not a copy):
 * they must outlive it. The array holding them, it copies. */
int matcher_new(const char *const *patterns, size_t n, unsigned flags, Matcher **ret, Error *err);
/* The same for patterns kept in an array of structures, `stride` bytes
 * apart (pattern i is the `const char *` at `first` + i × stride bytes,
 * such as &policy->patterns[0].pattern and sizeof(PolicyPattern)),
 * borrowing the array too: no copy of a pointer a pattern. `plain`, when
 * not NULL, has bit i set where pattern i is known to be a literal path
 * in its normal form (Policy.plain): valid, and not read again here. */
int matcher_new_strided(const char *const *first, size_t stride, size_t n, const uint64_t *plain,
                        unsigned flags, Matcher **ret, Error *err);
void matcher_free(Matcher *m);
static inline void matcher_freep(Matcher **m) {
  matcher_free(*m);
}
#define _cleanup_matcher_ _cleanup_(matcher_freep)

/* Index of the first pattern protecting `rel` (a normalised relative path,
 * "" being the project root itself), or -1. The first few lookups (this
 * and matcher_may_match_below) compare `rel` with each literal pattern,
 * which costs no index; after them, or once a walk or matcher_each_match
 * has built the index of literal patterns, a lookup costs a hash probe or
 * two a component for all of them together. Patterns with wildcards are
 * run one by one either way. */
long matcher_match(const Matcher *m, const char *rel);

/* Whether some pattern could protect an entry strictly below directory
 * `rel` ("" = the root); false lets a scan skip the whole subtree. */
bool matcher_may_match_below(const Matcher *m, const char *rel);

/* The same two questions for pattern `idx` alone, whatever the others say:
 * whether it matches `rel` (or an ancestor), and whether it could match
 * something below directory `rel`. */
bool matcher_match_one(const Matcher *m, size_t idx, const char *rel);
bool matcher_may_match_below_one(const Matcher *m, size_t idx, const char *rel);

/* Calls fn(pattern, data) for every pattern that matcher_match_one()
 * answers true for at `rel` (with `below`: matcher_may_match_below_one()),
 * once per alternative of it that does, in no particular order. Costs a
 * hash lookup per component of `rel` for all the literal patterns
 * together (and, with `below`, one step per pattern reported), plus a run
 * of each pattern with a wildcard: what lets a caller attribute every
 * protected path to its patterns in one pass. */
void matcher_each_match(const Matcher *m, const char *rel, bool below,
                        void (*fn)(size_t pattern, void *data), void *data);

/* Index of the first pattern that could protect some path ending with the
 * components of `rel` (`x/.../rel`), or -1. An over-approximation: used to
 * refuse where an agent may pick any file whose name ends with `rel`. */
long matcher_match_suffix(const Matcher *m, const char *rel);
/* The same, counting only patterns that name such a path by more than
 * `**` or a bare `*` do (everything below tests/golden names
 * `golden/a.txt`, not `a.txt`), and with `below` also those that could
 * protect something below it; the components of `rel` may be shell globs
 * (`*.lock`). For a name written where a `cd` the hook cannot follow
 * leads. Index or -1. */
long matcher_match_named_suffix(const Matcher *m, const char *rel, bool below);

/* Walking a tree component by component, as the scan does, without
 * matching every path from the root again: a state per directory. */
typedef uint8_t MatcherState;
size_t matcher_state_size(const Matcher *m);
/* The state of the project root (nothing matched yet). */
void matcher_state_init(const Matcher *m, MatcherState *st);
/* The state of entry `name` of the directory in state `from`: the index of
 * the first pattern protecting it (or -1) and, in *ret_alive, whether some
 * pattern could still protect something below it. */
long matcher_state_step(const Matcher *m, const MatcherState *from, const char *name,
                        MatcherState *to, bool *ret_alive);

/* For a path whose components may be shell globs (`rm tests/x*.txt`): the
 * first pattern that could protect something the glob names (with
 * `below`, or something below it), decided from the patterns alone, never
 * by listing directories. Errs towards a match. */
long matcher_match_glob(const Matcher *m, const char *rel, bool below);
/* The same for pattern `idx` alone: whether it could protect something the
 * glob names (with `below`, or something below it). */
bool matcher_match_glob_one(const Matcher *m, size_t idx, const char *rel, bool below);

/* Whether the shell glob component `glob` could name the file `name` (one
 * component each, no `/`): what a glob that starts above a project root
 * has to be checked against, component by component, on the way down. */
bool matcher_glob_may_name(const Matcher *m, const char *glob, const char *name);

/* How many patterns `m` was compiled from. */
size_t matcher_n_patterns(const Matcher *m);

/* How much matching work `m` has done so far (segments compared, index
 * slots probed): what the tests hold the growth of, never a time. */
uint64_t matcher_operations(const Matcher *m);

/* Whether pattern `idx` has no wildcard at all (a literal path). */
bool matcher_is_literal(const Matcher *m, size_t idx);
