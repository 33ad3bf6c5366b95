/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the glob matcher (matcher.h).
 *
 * Input: lines, after any leading comment lines starting with `#` (the
 * seeds' SPDX line). The first line is a project-relative path, normalised
 * here the way ralon hands paths to the matcher (no empty, "." or ".."
 * components); every further line is a candidate pattern, which goes
 * through policy_normalize_pattern() first, as agent.lock items do.
 *
 * Nothing may crash or leak, and with and without MATCHER_CASEFOLD:
 *   - a pattern that policy_normalize_pattern() accepts compiles;
 *   - a pattern protects everything below what it matches:
 *       matcher_match(P) >= 0  =>  matcher_match(P + "/x") >= 0;
 *   - the scan may skip a directory only when nothing below can match:
 *       matcher_match(P) < 0 && matcher_match(P + "/C") >= 0
 *         =>  matcher_may_match_below(P);
 *   - the whole list reports the lowest matching index, and agrees with
 *     the patterns compiled one by one and with matcher_match_one() and
 *     matcher_may_match_below_one().
 * A violation abort()s, so libFuzzer records the input. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matcher.h"
#include "policy.h"

#define MAX_PATTERNS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz-matcher: invariant violated: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* `p` (len bytes, may hold NULs) as ralon would hand it to the matcher:
 * "/"-separated, no empty, "." or ".." components, "" for the root. */
static char *normalise_path(const char *p, size_t len) {
  char *out = xmalloc(len + 1);
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && p[j] != '/' && p[j] != '\0') {
      j++;
    }
    size_t n = j - i;
    bool skip = n == 0 || (n == 1 && p[i] == '.') || (n == 2 && p[i] == '.' && p[i + 1] == '.');
    if (!skip) {
      if (o > 0) {
        out[o++] = '/';
      }
      memcpy(out + o, p + i, n);
      o += n;
    }
    i = j + 1;
  }
  out[o] = '\0';
  return out;
}

static char *child_of(const char *parent, const char *name) {
  return xasprintf("%s%s%s", parent, parent[0] ? "/" : "", name);
}

static void check_path(const Matcher *m, size_t n, const char *path, const char *const *children,
                       size_t n_children, const char *what) {
  long idx = matcher_match(m, path);
  bool below = matcher_may_match_below(m, path);
  /* The per-pattern questions agree with the whole-list ones. */
  long first = -1;
  bool any_below = false;
  for (size_t i = 0; i < n; i++) {
    if (first < 0 && matcher_match_one(m, i, path)) {
      first = (long)i;
    }
    any_below |= matcher_may_match_below_one(m, i, path);
  }
  if (first != idx || any_below != below) {
    fail("%s: `%s`: matcher_match %ld / may_match_below %d, but per pattern %ld / %d", what, path,
         idx, below, first, any_below);
  }
  for (size_t c = 0; c < n_children; c++) {
    char *sub = child_of(path, children[c]);
    long sidx = matcher_match(m, sub);
    if (idx >= 0 && sidx < 0) {
      fail("%s: `%s` is protected (pattern %ld) but `%s` below it is not", what, path, idx, sub);
    }
    if (idx < 0 && sidx >= 0 && !below) {
      fail("%s: `%s` is protected (pattern %ld) but matcher_may_match_below(`%s`) is false, so a "
           "scan would miss it",
           what, sub, sidx, path);
    }
    free(sub);
  }
}

static void run(const char *const *pats, size_t n, const char *path, const char *const *children,
                size_t n_children, unsigned flags) {
  Matcher *all = NULL;
  Error err = {0};
  if (matcher_new(pats, n, flags, &all, &err) < 0) {
    fail("matcher_new(flags=%u) refused normalised patterns: %s", flags,
         err.message ? err.message : "(no message)");
  }
  const char *what = flags & MATCHER_CASEFOLD ? "casefold" : "exact";
  check_path(all, n, path, children, n_children, what);
  /* Every ancestor of the path, the root included. */
  char *copy = xstrdup(path);
  for (char *slash = strrchr(copy, '/'); slash != NULL; slash = strrchr(copy, '/')) {
    *slash = '\0';
    check_path(all, n, copy, children, n_children, what);
  }
  check_path(all, n, "", children, n_children, what);
  free(copy);

  /* The list reports the first pattern that matches on its own. */
  long idx = matcher_match(all, path);
  long first = -1;
  for (size_t i = 0; i < n; i++) {
    Matcher *one = NULL;
    if (matcher_new(&pats[i], 1, flags, &one, &err) < 0) {
      fail("matcher_new(flags=%u) refused `%s` alone: %s", flags, pats[i],
           err.message ? err.message : "(no message)");
    }
    long r = matcher_match(one, path);
    if (r != -1 && r != 0) {
      fail("a one-pattern matcher returned %ld", r);
    }
    if (r == 0 && first < 0) {
      first = (long)i;
    }
    matcher_free(one);
  }
  if (idx != first) {
    fail("%s: `%s` matches pattern %ld in the list, but pattern %ld is the first alone", what, path,
         idx, first);
  }
  matcher_free(all);
  error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  const char *end = text + size;
  /* Leading lines starting with `#` are comments (the seeds' SPDX line). */
  while (text < end && text[0] == '#') {
    const char *nl0 = memchr(text, '\n', (size_t)(end - text));
    text = nl0 ? nl0 + 1 : end;
  }
  size = (size_t)(end - text);
  const char *nl = memchr(text, '\n', size);
  const char *line_end = nl ? nl : end;
  char *path = normalise_path(text, (size_t)(line_end - text));

  char *pats[MAX_PATTERNS];
  size_t n = 0;
  for (const char *s = nl ? nl + 1 : end; s < end && n < MAX_PATTERNS;) {
    const char *e = memchr(s, '\n', (size_t)(end - s));
    if (e == NULL) {
      e = end;
    }
    char *norm = NULL, *why = NULL;
    if (policy_normalize_pattern(s, (size_t)(e - s), &norm, &why) == 0) {
      if (why != NULL) {
        fail("policy_normalize_pattern accepted `%s` but set a reason", norm);
      }
      char *check = NULL;
      if (matcher_check_pattern(norm, &check) < 0) {
        fail("normalised `%s` fails matcher_check_pattern: %s", norm, check ? check : "");
      }
      free(check);
      pats[n++] = norm;
    } else {
      if (why == NULL) {
        fail("policy_normalize_pattern refused a pattern without a reason");
      }
      free(why);
    }
    s = e + 1;
  }

  /* Children: a plain name, and the last component of each pattern, so
   * that literal tails below the path get exercised. */
  const char *children[MAX_PATTERNS + 2];
  size_t n_children = 0;
  children[n_children++] = "x";
  children[n_children++] = "X";
  for (size_t i = 0; i < n; i++) {
    const char *slash = strrchr(pats[i], '/');
    children[n_children++] = slash ? slash + 1 : pats[i];
  }

  if (n > 0) {
    run((const char *const *)pats, n, path, children, n_children, 0);
    run((const char *const *)pats, n, path, children, n_children, MATCHER_CASEFOLD);
  }

  for (size_t i = 0; i < n; i++) {
    free(pats[i]);
  }
  free(path);
  return 0;
}
