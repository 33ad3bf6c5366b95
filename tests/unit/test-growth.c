/* SPDX-License-Identifier: Apache-2.0 */
/* Many-pattern policies cost linearly (issue 31): the matching work for N
 * literal patterns, counted by the matcher (segments compared, index slots
 * probed), at two sizes. Never a time: a count is the same on a busy
 * machine. Also that the index answers what matching each pattern on its
 * own answers. */
#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "enforce/enforce.h"
#include "matcher.h"
#include "path.h"
#include "policy.h"
#include "scan.h"
#include "strset.h"
#include "tmptree.h"
#include "util.h"

#define PATS(...) ((const char *const[]){__VA_ARGS__, NULL})

static Matcher *compile_n(const char *const *patterns, size_t n, unsigned flags) {
  Matcher *m = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_msg(matcher_new(patterns, n, flags, &m, &err) == 0, "matcher_new: %s",
                err.message ? err.message : "(no message)");
  return m;
}

/* ---- the index agrees with each pattern on its own --------------------- */

/* Literals that nest, repeat, share prefixes with globs and braces. */
static const char *const mixed[] = {
    "agent.lock", "src/a",          "src/a/b/c.txt", "src/*.c",        "src/y.c",
    "src/y.c/z",  "{docs/x,docs/2.md}", "docs/{x/1.md,zz}", "docs/x/1.md", "missing/file",
    "lib/?/config.yml", "lib/l/config.yml", "**/*.md", "a/{b,c}/d", "a/b/d",
    "a/b",        "deep/1/2/3/4",   "deep/1/2",      "deep/**/4",      "{x,x/y}",
};

static const char *const probes[] = {
    "",           "src",         "src/a",   "src/a/b",   "src/a/b/c.txt", "src/a/q",
    "src/y.c",    "src/y.c/z",   "src/y.c/z/w", "src/q.c", "src/q.h",     "docs",
    "docs/x",     "docs/x/1.md", "docs/2.md", "docs/zz", "docs/3.md",     "missing",
    "missing/file", "lib",       "lib/l",    "lib/l/config.yml", "lib/ll/config.yml", "a",
    "a/b",        "a/b/d",       "a/c/d",    "a/c",      "deep/1",        "deep/1/2/3",
    "deep/1/2/3/4", "deep/9/4",  "x",        "x/y",      "x/y/z",         "agent.lock",
    "agent.lock/x", "srcx",      "src//a",   "README.md", "nothing/at/all",
};

typedef struct {
  bool *seen;
} Seen;

static void note(size_t pattern, void *data) {
  ((Seen *)data)->seen[pattern] = true;
}

START_TEST(test_index_agrees) {
  unsigned flags = _i ? MATCHER_CASEFOLD : 0;
  size_t n = ELEMENTSOF(mixed);
  Matcher *m = compile_n(mixed, n, flags);
  bool seen[ELEMENTSOF(mixed)];
  for (size_t p = 0; p < ELEMENTSOF(probes); p++) {
    const char *rel = probes[p];
    long first = -1;
    bool below_any = false;
    for (size_t i = 0; i < n; i++) {
      if (first < 0 && matcher_match_one(m, i, rel)) {
        first = (long)i;
      }
      below_any |= matcher_may_match_below_one(m, i, rel);
    }
    ck_assert_msg(matcher_match(m, rel) == first, "`%s`: %ld, each on its own: %ld", rel,
                  matcher_match(m, rel), first);
    ck_assert_msg(matcher_may_match_below(m, rel) == below_any, "below `%s`", rel);
    for (int below = 0; below <= 1; below++) {
      memset(seen, 0, sizeof(seen));
      Seen s = {.seen = seen};
      matcher_each_match(m, rel, below, note, &s);
      for (size_t i = 0; i < n; i++) {
        bool want = below ? matcher_may_match_below_one(m, i, rel) : matcher_match_one(m, i, rel);
        ck_assert_msg(seen[i] == want, "`%s` (below: %d), pattern `%s`: %d, on its own %d", rel,
                      below, mixed[i], seen[i], want);
      }
    }
  }
  matcher_free(m);
}
END_TEST

/* A lookup before the trie is built (the first TRIE_AFTER compare with
 * each literal alternative) answers what one through the trie answers:
 * a fresh matcher for each probe, against one whose trie a walk built. */
START_TEST(test_lookup_before_index_agrees) {
  unsigned flags = _i ? MATCHER_CASEFOLD : 0;
  size_t n = ELEMENTSOF(mixed);
  Matcher *built = compile_n(mixed, n, flags);
  MatcherState *st = xmalloc(matcher_state_size(built));
  matcher_state_init(built, st); /* a walk: the trie from the start */
  free(st);
  for (size_t p = 0; p < ELEMENTSOF(probes); p++) {
    const char *rel = probes[p];
    for (int below = 0; below <= 1; below++) {
      Matcher *fresh = compile_n(mixed, n, flags);
      if (below) {
        ck_assert_msg(matcher_may_match_below(fresh, rel) == matcher_may_match_below(built, rel),
                      "below `%s`", rel);
      } else {
        ck_assert_msg(matcher_match(fresh, rel) == matcher_match(built, rel), "`%s`: %ld, %ld",
                      rel, matcher_match(fresh, rel), matcher_match(built, rel));
      }
      matcher_free(fresh);
    }
  }
  matcher_free(built);
}
END_TEST

/* Braces around one alternative (`{brace}`) expand to a literal path
 * that is not the pattern's own text: matched as expanded, with and
 * without the trie. */
START_TEST(test_lone_brace) {
  const char *const pats[] = {"agent.lock", "lone/{brace}.c", "x/{y}"};
  for (int built = 0; built <= 1; built++) {
    Matcher *m = compile_n(pats, ELEMENTSOF(pats), 0);
    if (built) {
      MatcherState *st = xmalloc(matcher_state_size(m));
      matcher_state_init(m, st);
      free(st);
    }
    ck_assert(matcher_is_literal(m, 1));
    ck_assert_int_eq(matcher_match(m, "lone/brace.c"), 1);
    ck_assert_int_eq(matcher_match(m, "lone/{brace}.c"), -1);
    ck_assert_int_eq(matcher_match(m, "x/y/z"), 2);
    ck_assert(matcher_may_match_below(m, "x"));
    ck_assert(!matcher_may_match_below(m, "lone/{brace}.c"));
    ck_assert(matcher_match_one(m, 1, "lone/brace.c"));
    ck_assert_int_eq(matcher_match_suffix(m, "brace.c"), 1);
    matcher_free(m);
  }
}
END_TEST

/* ---- growth ---------------------------------------------------------- */


/* N literal patterns `src/fI.c`, beside them `lib/dI/x.h`. */
static char **literals(size_t n) {
  char **v = xcalloc(2 * n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    v[2 * i] = xasprintf("src/f%zu.c", i);
    v[2 * i + 1] = xasprintf("lib/d%zu/x.h", i);
  }
  return v;
}

/* The matching work of what the commands do with N literals: the scan's
 * walk of every protected file, matching each whole path, attributing each
 * to its patterns, and each pattern against its own path. */
static uint64_t work(size_t n) {
  char **pats = literals(n);
  Matcher *m = compile_n((const char *const *)pats, 2 * n, 0);
  uint64_t before = matcher_operations(m);
  size_t size = matcher_state_size(m);
  MatcherState *root = xmalloc(size), *src = xmalloc(size), *leaf = xmalloc(size);
  matcher_state_init(m, root);
  bool alive = false;
  ck_assert_int_eq(matcher_state_step(m, root, "src", src, &alive), -1);
  ck_assert(alive);
  size_t count = 0;
  Seen s = {.seen = xcalloc(2 * n, sizeof(bool))};
  for (size_t i = 0; i < 2 * n; i++) {
    _cleanup_free_ char *name = xasprintf("f%zu.c", i / 2);
    if (i % 2 == 0) {
      ck_assert_int_eq(matcher_state_step(m, src, name, leaf, &alive), (long)i);
    }
    ck_assert_int_eq(matcher_match(m, pats[i]), (long)i);
    ck_assert(matcher_match_one(m, i, pats[i]));
    matcher_each_match(m, pats[i], false, note, &s);
  }
  for (size_t i = 0; i < 2 * n; i++) {
    count += s.seen[i];
  }
  ck_assert_uint_eq(count, 2 * n);
  uint64_t ops = matcher_operations(m) - before;
  free(s.seen);
  free(root);
  free(src);
  free(leaf);
  matcher_free(m);
  strings_free(pats, 2 * n);
  return ops;
}

/* Eight times the input, at most `slack` times eight the operations:
 * linear growth passes, a pass over the input per item (64 times) fails. */
static void assert_linear(uint64_t small, uint64_t large, double slack, size_t n) {
  ck_assert_uint_gt(small, 0);
  ck_assert_msg((double)large <= (double)small * 8 * slack,
                "%zu items: %llu operations, %zu: %llu", n, (unsigned long long)small, n * 8,
                (unsigned long long)large);
}

START_TEST(test_literal_growth) {
  /* Eight times the patterns: eight times the work, give or take the
   * hash table's load (at most 1.5 times that). Quadratic would be 64. */
  uint64_t small = work(300), large = work(2400);
  assert_linear(small, large, 1.5, 300);
}
END_TEST

/* Lookups alone (what `check PATH` and `hook check` ask), one a pattern:
 * the first few compare with every literal pattern, then the trie is
 * built and each costs a hash a component. Compared with each pattern
 * every time, 2n lookups would grow with the square. */
static uint64_t lookups(size_t n) {
  char **pats = literals(n);
  Matcher *m = compile_n((const char *const *)pats, 2 * n, 0);
  uint64_t before = matcher_operations(m);
  for (size_t i = 0; i < 2 * n; i++) {
    ck_assert_int_eq(matcher_match(m, pats[i]), (long)i);
    ck_assert(matcher_may_match_below(m, pats[i]));
  }
  ck_assert_int_eq(matcher_match(m, "src/nothing.c"), -1);
  uint64_t ops = matcher_operations(m) - before;
  matcher_free(m);
  strings_free(pats, 2 * n);
  return ops;
}

/* One lookup compares with each literal pattern once, at most: the
 * first answers without the trie, in a pass. */
START_TEST(test_first_lookup_is_one_pass) {
  size_t n = 1000;
  char **pats = literals(n);
  Matcher *m = compile_n((const char *const *)pats, 2 * n, 0);
  uint64_t before = matcher_operations(m);
  ck_assert_int_eq(matcher_match(m, "lib/d999/x.h"), 1999);
  ck_assert_uint_eq(matcher_operations(m) - before, 2000);
  before = matcher_operations(m);
  ck_assert_int_eq(matcher_match(m, "src/f0.c"), 0);
  ck_assert_uint_eq(matcher_operations(m) - before, 1);
  matcher_free(m);
  strings_free(pats, 2 * n);
}
END_TEST

START_TEST(test_lookup_growth) {
  uint64_t small = lookups(300), large = lookups(2400);
  assert_linear(small, large, 1.5, 300);
}
END_TEST

/* scan_pattern_matches(): one pass over the protected paths, whatever the
 * number of patterns; the counts are each pattern's own. */
static uint64_t attribute(size_t n, bool check) {
  char **pats = literals(n);
  Matcher *m = compile_n((const char *const *)pats, 2 * n, 0);
  ScanResult *r = xcalloc(1, sizeof(ScanResult));
  r->n_patterns = 2 * n;
  r->hits = xcalloc(2 * n, sizeof(uint32_t));
  /* What the scan finds: the file each pattern names. */
  r->paths = xcalloc(2 * n, sizeof(ProtectedPath));
  for (size_t i = 0; i < 2 * n; i++) {
    ProtectedPath *p = &r->paths[r->n_paths++];
    p->absolute = xasprintf("/p/%s", pats[i]);
    p->relative = p->absolute + 3;
    p->mode = S_IFREG;
    p->pattern = i;
  }
  uint64_t before = matcher_operations(m);
  uint32_t *counts = xcalloc(2 * n, sizeof(uint32_t));
  bool *inside = xcalloc(2 * n, sizeof(bool));
  scan_pattern_matches(r, m, counts, inside);
  uint64_t ops = matcher_operations(m) - before;
  for (size_t i = 0; check && i < 2 * n; i++) {
    ck_assert_uint_eq(counts[i], 1);
    ck_assert(!inside[i]);
  }
  free(counts);
  free(inside);
  scan_result_free(r);
  matcher_free(m);
  strings_free(pats, 2 * n);
  return ops;
}

START_TEST(test_attribution_growth) {
  uint64_t small = attribute(300, true), large = attribute(2400, false);
  assert_linear(small, large, 1.5, 300);
}
END_TEST

/* A protected directory: the literals inside it count as "inside", and
 * each path is counted once for a pattern with two alternatives matching
 * it. */
START_TEST(test_attribution_inside) {
  const char *const pats[] = {"agent.lock", "a", "a/b/c", "{a,a/x}", "a/*/d", "b/c", "q"};
  size_t n = ELEMENTSOF(pats);
  Matcher *m = compile_n(pats, n, 0);
  ScanResult *r = xcalloc(1, sizeof(ScanResult));
  r->n_patterns = n;
  r->hits = xcalloc(n, sizeof(uint32_t));
  r->paths = xcalloc(3, sizeof(ProtectedPath));
  const char *rels[] = {"a", "agent.lock", "b"};
  mode_t modes[] = {S_IFDIR, S_IFREG, S_IFDIR};
  for (size_t i = 0; i < 3; i++) {
    ProtectedPath *p = &r->paths[r->n_paths++];
    p->absolute = xasprintf("/p/%s", rels[i]);
    p->relative = p->absolute + 3;
    p->mode = modes[i];
  }
  uint32_t counts[ELEMENTSOF(pats)];
  bool inside[ELEMENTSOF(pats)];
  scan_pattern_matches(r, m, counts, inside);
  const size_t want_counts[] = {1, 1, 0, 1, 0, 0, 0};
  const bool want_inside[] = {false, true, true, true, true, true, false};
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(counts[i] == want_counts[i], "`%s`: %u paths", pats[i], counts[i]);
    ck_assert_msg(inside[i] == want_inside[i], "`%s`: inside %d", pats[i], inside[i]);
  }
  scan_result_free(r);
  matcher_free(m);
}
END_TEST

/* Reading a policy of N literals: the duplicate check looks each pattern
 * up in an index of those kept (one probe or two), never compares it with
 * the others; the first of equal patterns is kept, whatever form it was
 * written in. */
static uint64_t parse_work(size_t n) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  fputs("version: 1\nprotect:\n", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "  - src/f%zu.c\n", i);
    if (i % 10 == 0) {
      /* The same again, once as written and once in another form. */
      fprintf(f, "  - ./src/f%zu.c\n  - src/f%zu.c\n", i, i);
    }
  }
  fputs("  - agent.lock\n", f);
  ck_assert_int_eq(fclose(f), 0);
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_msg(policy_parse("/p/agent.lock", text, len, &p, &err) == 0, "%s", err.message);
  ck_assert_uint_eq(p->n_patterns, n + 1);
  ck_assert_str_eq(p->patterns[0].pattern, "agent.lock");
  unsigned line = 3;
  for (size_t i = 0; i < n; i++) {
    _cleanup_free_ char *want = xasprintf("src/f%zu.c", i);
    const PolicyPattern *pp = &p->patterns[i + 1];
    const PolicyPosition *pos = &p->positions[i + 1];
    ck_assert_str_eq(pp->pattern, want);
    ck_assert_str_eq(pos->declared, want);
    ck_assert_uint_eq(pos->line, line); /* the first of the three */
    line += i % 10 == 0 ? 3 : 1;
  }
  uint64_t ops = p->operations;
  policy_free(p);
  free(text);
  return ops;
}

START_TEST(test_parse_growth) {
  uint64_t small = parse_work(300), large = parse_work(2400);
  assert_linear(small, large, 1.5, 300);
}
END_TEST

/* enforce_targets() with N protected directories and N literals naming
 * nothing yet: whether each missing literal lies in a protected directory
 * is a lookup per component in an index of the directories (which takes
 * each added target that is one), not a pass over every target. Returns
 * the index's probes. */
static uint64_t targets_work(size_t n) {
  _cleanup_free_ char *dir = make_tmpdir();
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  fputs("version: 1\nprotect:\n", f);
  for (size_t i = 0; i < n; i++) {
    _cleanup_free_ char *d = xasprintf("d%zu", i);
    make_dir(dir, d);
    fprintf(f, "  - d%zu\n  - m%zu/x\n", i, i);
  }
  ck_assert_int_eq(fclose(f), 0);
  make_file(dir, "agent.lock", text);
  _cleanup_free_ char *file = path_join(dir, "agent.lock");
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_msg(policy_load(file, &p, &err) == 0, "%s", err.message);
  const char **pats = xcalloc(p->n_patterns, sizeof(char *));
  for (size_t i = 0; i < p->n_patterns; i++) {
    pats[i] = p->patterns[i].pattern;
  }
  Matcher *m = compile_n(pats, p->n_patterns, 0);
  ScanResult *r = NULL;
  ck_assert_msg(scan_project(p, m, &r, &err) == 0, "%s", err.message);
  PlanTarget *v = NULL;
  size_t nv = 0;
  uint64_t before = strset_probes;
  ck_assert_msg(enforce_targets(p, m, r, &v, &nv, &err) == 0, "%s", err.message);
  uint64_t ops = strset_probes - before;
  /* agent.lock, the directories, and each missing literal. */
  ck_assert_uint_eq(nv, 1 + 2 * n);
  size_t missing = 0;
  for (size_t i = 0; i < nv; i++) {
    missing += v[i].missing;
  }
  ck_assert_uint_eq(missing, n);
  plan_targets_free(v, nv);
  scan_result_free(r);
  matcher_free(m);
  free(pats);
  policy_free(p);
  free(text);
  return ops;
}

START_TEST(test_targets_growth) {
  uint64_t small = targets_work(150), large = targets_work(1200);
  /* 8 times the targets: linear is about 8 times the probes, a pass over
   * every target 64 times. Twice 8, not 1.5 times: how full the doubling
   * table happens to be at each size (a quarter to a half), and the
   * temporary directory's name in every path, move the count by up to
   * 60 % between runs (ratios of 9.8 to 13.2 measured in 60 runs). */
  assert_linear(small, large, 2, 150);
}
END_TEST

/* audit_plan_missing() with N missing targets against the N findings
 * that name them already, then against none: a lookup per target in an
 * index of what the findings name, not a pass over every finding. The
 * first of two targets of one name is reported, and once. */
static uint64_t missing_work(size_t n, bool check) {
  Plan plan = {0};
  plan.targets = xcalloc(n + 1, sizeof(PlanTarget));
  char **rel = xcalloc(n, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    rel[i] = xasprintf("m%zu/x", i);
    plan.targets[plan.n_targets++] = (PlanTarget){.path = rel[i], .relative = rel[i], .missing = true};
  }
  /* The same name again. */
  plan.targets[plan.n_targets++] = (PlanTarget){.path = rel[0], .relative = rel[0], .missing = true};
  AuditFindings out = {0};
  audit_plan_missing(&plan, "/p", &out);
  ck_assert_uint_eq(out.n, n);
  for (size_t i = 0; check && i < n; i++) {
    ck_assert_str_eq(out.items[i].pattern, rel[i]);
  }
  /* Told already: nothing more. */
  uint64_t before = strset_probes;
  audit_plan_missing(&plan, "/p", &out);
  uint64_t ops = strset_probes - before;
  ck_assert_uint_eq(out.n, n);
  audit_findings_clear(&out);
  strings_free(rel, n);
  free(plan.targets);
  return ops;
}

START_TEST(test_missing_growth) {
  uint64_t small = missing_work(300, true), large = missing_work(2400, false);
  assert_linear(small, large, 1.5, 300);
}
END_TEST

static Suite *growth_suite(void) {
  Suite *s = suite_create("growth");
  TCase *tc = tcase_create("index");
  tcase_add_loop_test(tc, test_index_agrees, 0, 2);
  tcase_add_loop_test(tc, test_lookup_before_index_agrees, 0, 2);
  tcase_add_test(tc, test_first_lookup_is_one_pass);
  tcase_add_test(tc, test_lone_brace);
  tcase_add_test(tc, test_attribution_inside);
  suite_add_tcase(s, tc);
  tc = tcase_create("growth");
  tcase_add_test(tc, test_literal_growth);
  tcase_add_test(tc, test_lookup_growth);
  tcase_add_test(tc, test_attribution_growth);
  tcase_add_test(tc, test_parse_growth);
  tcase_add_test(tc, test_missing_growth);
  suite_add_tcase(s, tc);
  /* With a project on disk. */
  tc = tcase_create("targets");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_targets_growth);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  if (setlocale(LC_ALL, "C") == NULL) {
    return EXIT_FAILURE;
  }
  SRunner *sr = srunner_create(growth_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
