/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the agent.lock parser (ARCHITECTURE.md §2).
 *
 * Whatever the bytes, policy_parse() must return without crashing, leaking
 * or reading out of bounds. When it rejects the input, the message must be
 * set and name the file; when it accepts it, the result must hold the
 * invariants the rest of ralon relies on:
 *   - pattern zero is the implicit "agent.lock", and it wins for agent.lock;
 *   - every pattern is normalised (no empty, "." or ".." component, no
 *     leading or trailing "/", no backslash, no ":" outside a bracket
 *     expression) and unique;
 *   - every pattern passes matcher_check_pattern() and the whole list
 *     compiles with matcher_new(), with and without MATCHER_CASEFOLD;
 *   - a literal pattern matches its own path (at its index or lower) and
 *     everything below it; matching derived paths does not crash;
 *   - a pattern the policy marks plain (Policy.plain) is one the matcher
 *     finds literal itself, and the matcher told of the marks
 *     (policy_matcher) answers every question as the one not told;
 *   - parsed keeping duplicates (POLICY_DUPLICATES), the policy is the same
 *     list with the duplicates in place, and the first pattern to match a
 *     path is the same string.
 * RALON_FUZZ_STRICT=1 adds checks for known, non-crashing quirks of the
 * normaliser (README.md beside this file). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matcher.h"
#include "policy.h"

#define FUZZ_FILE "/fuzz/agent.lock"
#define FUZZ_ROOT "/fuzz"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool strict;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *e = getenv("RALON_FUZZ_STRICT");
  strict = e != NULL && strcmp(e, "1") == 0;
  return 0;
}

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz-policy: invariant violated: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* End of the bracket expression at s[i] == '[' as the matcher (and
 * fnmatch(3)) reads it: `]` first is literal, `[:name:]`, `[.x.]`, `[=x=]`
 * nest, nothing spans a `/`. 0 when it is not closed. */
static size_t class_end(const char *s, size_t i) {
  size_t j = i + 1;
  if (s[j] == '!' || s[j] == '^') {
    j++;
  }
  if (s[j] == ']') {
    j++;
  }
  while (s[j] != '\0' && s[j] != '/') {
    if (s[j] == '[' && (s[j + 1] == ':' || s[j + 1] == '.' || s[j + 1] == '=')) {
      size_t k = j + 2;
      while (s[k] != '\0' && s[k] != '/' && !(s[k] == s[j + 1] && s[k + 1] == ']')) {
        k++;
      }
      if (s[k] != s[j + 1]) {
        return 0;
      }
      j = k + 2;
      continue;
    }
    if (s[j] == ']') {
      return j;
    }
    j++;
  }
  return 0;
}

/* `:` is refused (drive letters, URLs) except inside a bracket expression
 * such as `[[:digit:]]`, where it names a class. */
static bool colon_outside_class(const char *s) {
  for (size_t i = 0; s[i] != '\0'; i++) {
    if (s[i] == '[') {
      size_t e = class_end(s, i);
      if (e != 0) {
        i = e;
      }
    } else if (s[i] == ':') {
      return true;
    }
  }
  return false;
}

static void check_normalised(const char *pat, size_t idx) {
  size_t len = strlen(pat);
  if (len == 0) {
    fail("pattern %zu is empty", idx);
  }
  if (pat[0] == '/' || pat[len - 1] == '/' || strstr(pat, "//") != NULL) {
    fail("pattern %zu `%s` has a stray `/`", idx, pat);
  }
  if (strchr(pat, '\\') != NULL) {
    fail("pattern %zu `%s` kept a backslash", idx, pat);
  }
  if (colon_outside_class(pat)) {
    fail("pattern %zu `%s` has a `:` that the matcher reads as a literal", idx, pat);
  }
  /* `./!x` and `./~x` are accepted today as `!x` and `~x` (which are
   * refused when written so): only reported with RALON_FUZZ_STRICT=1. */
  if (strict && (pat[0] == '!' || pat[0] == '~')) {
    fail("pattern %zu `%s` starts with `!` or `~`", idx, pat);
  }
  for (const char *s = pat; *s != '\0';) {
    const char *e = strchrnul(s, '/');
    size_t n = (size_t)(e - s);
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
      fail("pattern %zu `%s` has a `.` or `..` component", idx, pat);
    }
    s = *e ? e + 1 : e;
  }
}

/* Matches `rel`; when it is protected, everything below must be too. */
static long match_checked(const Matcher *m, const char *rel) {
  long idx = matcher_match(m, rel);
  (void)matcher_may_match_below(m, rel);
  if (idx >= 0) {
    char *below = xasprintf("%s%sx", rel, rel[0] ? "/" : "");
    long sub = matcher_match(m, below);
    if (sub < 0) {
      fail("`%s` is protected (pattern %ld) but `%s` is not", rel, idx, below);
    }
    free(below);
  }
  return idx;
}

/* The path a literal pattern names. "Literal" includes braces with a
 * single alternative (`src/{auth}.c`, `a/{}/b`): drop the braces, then the
 * empty and "." components the matcher drops too. */
static char *literal_path(const char *pat) {
  char *out = xmalloc(strlen(pat) + 1);
  size_t o = 0;
  for (const char *s = pat; *s != '\0'; s++) {
    if (*s != '{' && *s != '}') {
      out[o++] = *s;
    }
  }
  out[o] = '\0';
  size_t w = 0;
  for (char *c = out; *c != '\0';) {
    char *e = strchrnul(c, '/');
    size_t n = (size_t)(e - c);
    bool last = *e == '\0';
    if (!(n == 0 || (n == 1 && c[0] == '.'))) {
      if (w > 0) {
        out[w++] = '/';
      }
      memmove(out + w, c, n);
      w += n;
    }
    if (last) {
      break;
    }
    c = e + 1;
  }
  out[w] = '\0';
  return out;
}

static void check_matcher(const Policy *p, const char *const *pats, unsigned flags) {
  Matcher *m = NULL;
  Error err = {0};
  if (matcher_new(pats, p->n_patterns, flags, &m, &err) < 0) {
    fail("matcher_new(flags=%u) refused a parsed policy: %s", flags,
         err.message ? err.message : "(no message)");
  }
  if (matcher_match(m, POLICY_FILE_NAME) != 0) {
    fail("agent.lock is not protected by pattern zero (flags=%u)", flags);
  }
  match_checked(m, "");
  for (size_t i = 0; i < p->n_patterns; i++) {
    const char *pat = pats[i];
    match_checked(m, pat);
    if (matcher_is_literal(m, i)) {
      char *lit = literal_path(pat);
      long idx = match_checked(m, lit);
      if (idx < 0 || (size_t)idx > i) {
        fail("literal pattern %zu `%s` does not protect its own path `%s` (got %ld, flags=%u)", i,
             pat, lit, idx, flags);
      }
      free(lit);
    }
    /* Every ancestor of the pattern, as a path. */
    char *copy = xstrdup(pat);
    for (char *slash = strrchr(copy, '/'); slash != NULL; slash = strrchr(copy, '/')) {
      *slash = '\0';
      match_checked(m, copy);
    }
    free(copy);
  }
  matcher_free(m);
  error_clear(&err);
}

/* The paths the answers of two matchers are compared on, for pattern
 * `pat`: itself, its path as a literal, below it, and its ancestors. */
static void compare_on(const Matcher *a, const Matcher *b, const Policy *pa, const Policy *pb,
                       const char *pat, const char *what) {
  char *lit = literal_path(pat);
  char *below = xasprintf("%s/x", lit);
  char *slashed = xasprintf("%s/", lit);
  char *copy = xstrdup(lit);
  const char *probes[] = {pat, lit, below, "", slashed, copy};
  size_t last = sizeof(probes) / sizeof(probes[0]) - 1;
  for (size_t k = 0; k <= last; k++) {
    for (char *slash = NULL;; *slash = '\0') {
      long x = matcher_match(a, probes[k]), y = matcher_match(b, probes[k]);
      if ((x < 0) != (y < 0) ||
          (x >= 0 && strcmp(pa->patterns[x].pattern, pb->patterns[y].pattern) != 0)) {
        fail("%s: `%s` matches %ld and %ld", what, probes[k], x, y);
      }
      if (matcher_may_match_below(a, probes[k]) != matcher_may_match_below(b, probes[k])) {
        fail("%s: below `%s` differs", what, probes[k]);
      }
      /* The last probe: the path, then each of its ancestors. */
      if (k != last || (slash = strrchr(copy, '/')) == NULL) {
        break;
      }
    }
  }
  free(copy);
  free(slashed);
  free(below);
  free(lit);
}

static void check_plain_and_duplicates(const Policy *p, const char *const *pats,
                                       const char *text, size_t size) {
  Matcher *told = NULL, *read = NULL;
  Error err = {0};
  if (policy_matcher(p, 0, &told, &err) < 0 || matcher_new(pats, p->n_patterns, 0, &read, &err) < 0) {
    fail("a matcher refused a parsed policy: %s", err.message ? err.message : "(no message)");
  }
  for (size_t i = 0; i < p->n_patterns; i++) {
    if ((p->plain[i / 64] >> (i % 64)) & 1 && !matcher_is_literal(read, i)) {
      fail("pattern %zu `%s` is marked plain and is no literal", i, pats[i]);
    }
    compare_on(told, read, p, p, pats[i], "marks");
    if (i < 16) {
      /* Before an index is built, a lookup compares with each literal
       * pattern: fresh matchers, for those comparisons. */
      Matcher *t1 = NULL, *r1 = NULL;
      if (policy_matcher(p, 0, &t1, &err) < 0 || matcher_new(pats, p->n_patterns, 0, &r1, &err) < 0) {
        fail("a matcher refused a parsed policy: %s", err.message ? err.message : "(no message)");
      }
      compare_on(t1, r1, p, p, pats[i], "first lookups");
      matcher_free(t1);
      matcher_free(r1);
    }
  }
  Policy *d = NULL;
  if (policy_parse_flags(FUZZ_FILE, text, size, POLICY_DUPLICATES, &d, &err) < 0) {
    fail("refused keeping duplicates: %s", err.message ? err.message : "(no message)");
  }
  /* The unique list is the duplicates' list with every later copy out. */
  size_t u = 0;
  for (size_t i = 0; i < d->n_patterns; i++) {
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) {
      seen = strcmp(d->patterns[k].pattern, d->patterns[i].pattern) == 0;
    }
    if (!seen && (u >= p->n_patterns || strcmp(p->patterns[u++].pattern, d->patterns[i].pattern) != 0)) {
      fail("keeping duplicates, pattern %zu `%s` is out of place", i, d->patterns[i].pattern);
    }
  }
  if (u != p->n_patterns) {
    fail("keeping duplicates: %zu unique of %zu", u, p->n_patterns);
  }
  Matcher *dm = NULL;
  if (policy_matcher(d, 0, &dm, &err) < 0) {
    fail("the matcher refused the policy with duplicates: %s", err.message);
  }
  for (size_t i = 0; i < d->n_patterns; i++) {
    compare_on(told, dm, p, d, d->patterns[i].pattern, "duplicates");
  }
  matcher_free(dm);
  policy_free(d);
  matcher_free(told);
  matcher_free(read);
  error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Policy *p = NULL;
  Error err = {0};
  /* An exact-size copy, so that ASan catches a read past the end. */
  char *text = malloc(size ? size : 1);
  if (text == NULL) {
    return 0;
  }
  memcpy(text, data, size);

  int r = policy_parse(FUZZ_FILE, text, size, &p, &err);
  if (r < 0) {
    if (p != NULL) {
      fail("policy_parse failed but returned a policy");
    }
    if (err.message == NULL || strncmp(err.message, FUZZ_FILE, strlen(FUZZ_FILE)) != 0) {
      fail("a rejection must name the file: `%s`", err.message ? err.message : "(none)");
    }
    error_clear(&err);
    free(text);
    return 0;
  }
  if (r != 0 || p == NULL || err.message != NULL) {
    fail("policy_parse succeeded inconsistently (r=%d, policy=%p, message=%s)", r, (void *)p,
         err.message ? err.message : "(none)");
  }
  if (strcmp(p->file, FUZZ_FILE) != 0 || strcmp(p->root, FUZZ_ROOT) != 0) {
    fail("file/root are `%s`/`%s`", p->file, p->root);
  }
  if (p->version != POLICY_VERSION) {
    fail("version %u", p->version);
  }
  if (p->n_patterns < 1 || strcmp(p->patterns[0].pattern, POLICY_FILE_NAME) != 0 ||
      p->positions == NULL || p->positions[0].line != 0) {
    fail("pattern zero is not the implicit agent.lock");
  }
  if (p->n_declared != p->n_patterns - 1) {
    fail("n_declared %zu with %zu patterns", p->n_declared, p->n_patterns);
  }

  const char **pats = xcalloc(p->n_patterns, sizeof(char *));
  for (size_t i = 0; i < p->n_patterns; i++) {
    const PolicyPattern *pp = &p->patterns[i];
    const PolicyPosition *pos = &p->positions[i];
    if (pp->pattern == NULL || pos->declared == NULL) {
      fail("pattern %zu has a NULL string", i);
    }
    if (i > 0 && (pos->line == 0 || pos->column == 0)) {
      fail("declared pattern %zu has no position", i);
    }
    check_normalised(pp->pattern, i);
    for (size_t k = 0; k < i; k++) {
      if (strcmp(pats[k], pp->pattern) == 0) {
        fail("pattern `%s` listed twice (%zu and %zu)", pp->pattern, k, i);
      }
    }
    char *why = NULL;
    if (matcher_check_pattern(pp->pattern, &why) < 0) {
      fail("pattern %zu `%s` fails matcher_check_pattern: %s", i, pp->pattern,
           why ? why : "(no reason)");
    }
    free(why);
    /* Normalising a normalised pattern should change nothing. It does not
     * hold today (see README.md in this directory: `./!x` is accepted as
     * `!x`, which is refused; `c /` becomes `c `, which becomes `c`), so it
     * is checked only with RALON_FUZZ_STRICT=1. */
    if (strict) {
      char *again = NULL;
      if (policy_normalize_pattern(pp->pattern, strlen(pp->pattern), &again, &why) < 0) {
        fail("pattern %zu `%s` is refused when normalised again: %s", i, pp->pattern,
             why ? why : "(no reason)");
      }
      if (strcmp(again, pp->pattern) != 0) {
        fail("normalising `%s` again gives `%s`", pp->pattern, again);
      }
      free(again);
    }
    pats[i] = pp->pattern;
  }
  check_matcher(p, pats, 0);
  check_matcher(p, pats, MATCHER_CASEFOLD);
  check_plain_and_duplicates(p, pats, text, size);

  free(pats);
  policy_free(p);
  free(text);
  return 0;
}
