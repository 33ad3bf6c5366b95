/* SPDX-License-Identifier: Apache-2.0 */
#include "matcher.h"

#include <fnmatch.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>

typedef enum {
  SEG_LITERAL,
  SEG_GLOB,
  SEG_GLOBSTAR,
} SegKind;

/* Shapes of a glob segment that need no fnmatch(3). */
typedef enum {
  FAST_NONE,
  FAST_ANY,    /* "*" */
  FAST_SUFFIX, /* "*lit" */
  FAST_PREFIX, /* "lit*" */
} FastKind;

typedef struct {
  SegKind kind;
  FastKind fast;
  char *text;
  size_t len;
  bool ascii; /* no byte above 0x7f */
} Segment;

typedef struct {
  size_t pattern; /* index into the caller's pattern list */
  Segment *segs;
  size_t n_segs;
} Alternative;

struct Matcher {
  Alternative *alts;
  size_t n_alts;
  bool *literal; /* per pattern */
  size_t n_patterns;
  unsigned flags;
  locale_t ascii;
  size_t *state_offset; /* per alternative, into a MatcherState */
  size_t state_size;
};

/* End of the `[...]` class starting at s[i] == '[', as fnmatch(3) reads it,
 * or 0 when it is not closed within the segment. */
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
      char kind = s[j + 1];
      const char *close = NULL;
      for (size_t k = j + 2; s[k] != '\0' && s[k] != '/'; k++) {
        if (s[k] == kind && s[k + 1] == ']') {
          close = s + k;
          break;
        }
      }
      if (close == NULL) {
        return 0;
      }
      j = (size_t)(close - s) + 2;
      continue;
    }
    if (s[j] == ']') {
      return j;
    }
    j++;
  }
  return 0;
}

/* Brace expansion. Appends every alternative of `s` to *out, refusing
 * nesting, unbalanced braces and more than MATCHER_MAX_ALTERNATIVES. */
static int expand_braces(const char *orig, const char *s, char ***out, size_t *n, size_t *cap,
                         char **why) {
  size_t open = SIZE_MAX;
  for (size_t i = 0; s[i] != '\0'; i++) {
    if (s[i] == '[') {
      size_t e = class_end(s, i);
      if (e == 0) {
        *why = xasprintf(_("unclosed `[` in `%s` (to match a literal `[`, write `[[]`)"), orig);
        return -1;
      }
      i = e;
    } else if (s[i] == '}') {
      *why = xasprintf(_("`}` without a matching `{` in `%s`"), orig);
      return -1;
    } else if (s[i] == '{') {
      open = i;
      break;
    }
  }
  if (open == SIZE_MAX) {
    if (*n >= MATCHER_MAX_ALTERNATIVES) {
      *why = xasprintf(_("`%s` expands to more than %d alternatives"), orig, MATCHER_MAX_ALTERNATIVES);
      return -1;
    }
    char **slot = grow_array(out, n, cap, sizeof(char *));
    *slot = xstrdup(s);
    return 0;
  }
  /* Find the closing brace and the commas at this level. */
  size_t close = SIZE_MAX;
  for (size_t i = open + 1; s[i] != '\0'; i++) {
    if (s[i] == '[') {
      size_t e = class_end(s, i);
      if (e == 0) {
        *why = xasprintf(_("unclosed `[` in `%s` (to match a literal `[`, write `[[]`)"), orig);
        return -1;
      }
      i = e;
    } else if (s[i] == '{') {
      *why = xasprintf(_("nested `{` is not supported in `%s`"), orig);
      return -1;
    } else if (s[i] == '}') {
      close = i;
      break;
    }
  }
  if (close == SIZE_MAX) {
    *why = xasprintf(_("unclosed `{` in `%s`"), orig);
    return -1;
  }
  size_t start = open + 1;
  for (size_t i = open + 1; i <= close; i++) {
    if (s[i] == '[') {
      i = class_end(s, i);
      continue;
    }
    if (s[i] != ',' && i != close) {
      continue;
    }
    _cleanup_free_ char *alt =
        xasprintf("%.*s%.*s%s", (int)open, s, (int)(i - start), s + start, s + close + 1);
    if (expand_braces(orig, alt, out, n, cap, why) < 0) {
      return -1;
    }
    start = i + 1;
  }
  return 0;
}

static void free_strv(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i]);
  }
  free(v);
}

/* Splits one expanded alternative into segments, or explains why not. */
static int split_segments(const char *orig, const char *alt, Segment **ret, size_t *ret_n,
                          char **why) {
  Segment *segs = NULL;
  size_t n = 0, cap = 0;
  if (alt[0] == '/') {
    /* `{/etc,x}`: an alternative may not turn absolute either. */
    *why = xasprintf(_("absolute paths are not allowed, patterns are relative to agent.lock: `%s`"),
                     orig);
    goto fail;
  }
  for (const char *s = alt; *s != '\0';) {
    const char *e = strchrnul(s, '/');
    size_t len = (size_t)(e - s);
    if (len == 0 || (len == 1 && s[0] == '.')) {
      /* Alternatives like "a/{,b}/c" leave empty or "." segments. */
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      *why = xasprintf(_("`..` may not be used to escape the project root: `%s`"), orig);
      goto fail;
    } else {
      bool star2 = memmem(s, len, "**", 2) != NULL;
      if (star2 && !(len == 2)) {
        *why = xasprintf(_("`**` must be a whole path component (like `a/**/b`), in `%s`"), orig);
        goto fail;
      }
      SegKind kind = star2 ? SEG_GLOBSTAR
                     : (memchr(s, '*', len) || memchr(s, '?', len) || memchr(s, '[', len))
                         ? SEG_GLOB
                         : SEG_LITERAL;
      /* Consecutive `**` mean the same as one. */
      if (!(kind == SEG_GLOBSTAR && n > 0 && segs[n - 1].kind == SEG_GLOBSTAR)) {
        if (n >= MATCHER_MAX_SEGMENTS) {
          *why = xasprintf(_("`%s` has more than %d path components"), orig, MATCHER_MAX_SEGMENTS);
          goto fail;
        }
        Segment *sg = grow_array(&segs, &n, &cap, sizeof(Segment));
        sg->kind = kind;
        sg->text = xstrndup(s, len);
        sg->len = len;
        sg->ascii = true;
        for (size_t k = 0; k < len; k++) {
          sg->ascii &= (unsigned char)s[k] < 0x80;
        }
        if (kind == SEG_GLOB) {
          size_t stars = 0, others = 0;
          for (size_t k = 0; k < len; k++) {
            stars += s[k] == '*';
            others += s[k] == '?' || s[k] == '[';
          }
          if (others == 0 && stars == 1) {
            sg->fast = len == 1 ? FAST_ANY : s[0] == '*' ? FAST_SUFFIX
                                           : s[len - 1] == '*' ? FAST_PREFIX
                                                               : FAST_NONE;
          }
        }
      }
    }
    s = *e ? e + 1 : e;
  }
  if (n == 0) {
    *why = xasprintf(_("`%s` does not name anything inside the project"), orig);
    goto fail;
  }
  *ret = segs;
  *ret_n = n;
  return 0;
fail:
  for (size_t i = 0; i < n; i++) {
    free(segs[i].text);
  }
  free(segs);
  return -1;
}

int matcher_check_pattern(const char *pattern, char **ret_reason) {
  char **alts = NULL;
  size_t n = 0, cap = 0;
  *ret_reason = NULL;
  int r = expand_braces(pattern, pattern, &alts, &n, &cap, ret_reason);
  for (size_t i = 0; r == 0 && i < n; i++) {
    Segment *segs = NULL;
    size_t ns = 0;
    r = split_segments(pattern, alts[i], &segs, &ns, ret_reason);
    for (size_t k = 0; k < ns; k++) {
      free(segs[k].text);
    }
    free(segs);
  }
  free_strv(alts, n);
  return r;
}

void matcher_free(Matcher *m) {
  if (m == NULL) {
    return;
  }
  for (size_t i = 0; i < m->n_alts; i++) {
    for (size_t k = 0; k < m->alts[i].n_segs; k++) {
      free(m->alts[i].segs[k].text);
    }
    free(m->alts[i].segs);
  }
  free(m->alts);
  free(m->literal);
  free(m->state_offset);
  if (m->ascii != (locale_t)0) {
    freelocale(m->ascii);
  }
  free(m);
}

int matcher_new(const char *const *patterns, size_t n, unsigned flags, Matcher **ret, Error *err) {
  _cleanup_matcher_ Matcher *m = xcalloc(1, sizeof(Matcher));
  size_t cap = 0;
  m->flags = flags;
  m->n_patterns = n;
  m->literal = xcalloc(n, sizeof(bool));
  for (size_t i = 0; i < n; i++) {
    char **alts = NULL;
    size_t na = 0, acap = 0;
    _cleanup_free_ char *why = NULL;
    if (expand_braces(patterns[i], patterns[i], &alts, &na, &acap, &why) < 0) {
      free_strv(alts, na);
      return error_set(err, EINVAL, _("invalid pattern: %s"), why);
    }
    m->literal[i] = na == 1;
    for (size_t k = 0; k < na; k++) {
      Alternative *a = grow_array(&m->alts, &m->n_alts, &cap, sizeof(Alternative));
      a->pattern = i;
      if (split_segments(patterns[i], alts[k], &a->segs, &a->n_segs, &why) < 0) {
        m->n_alts--;
        free_strv(alts, na);
        return error_set(err, EINVAL, _("invalid pattern: %s"), why);
      }
      for (size_t s = 0; s < a->n_segs; s++) {
        if (a->segs[s].kind != SEG_LITERAL) {
          m->literal[i] = false;
        }
      }
    }
    free_strv(alts, na);
  }
  /* fnmatch(3) reads multibyte characters in the thread's locale: pin it
   * to UTF-8 so `?` means one character whatever LANG says, and to C where
   * pattern and name are ASCII, which means the same and costs less. */
  m->ascii = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  m->state_offset = xcalloc(m->n_alts, sizeof(size_t));
  for (size_t i = 0; i < m->n_alts; i++) {
    m->state_offset[i] = m->state_size;
    m->state_size += m->alts[i].n_segs + 1;
  }
  *ret = steal_pointer(&m);
  return 0;
}

bool matcher_is_literal(const Matcher *m, size_t idx) {
  return idx < m->n_patterns && m->literal[idx];
}

static bool segment_matches(const Matcher *m, const Segment *sg, const char *comp, size_t len) {
  bool fold = m->flags & MATCHER_CASEFOLD;
  if (sg->kind == SEG_LITERAL && !fold) {
    return sg->len == len && memcmp(sg->text, comp, len) == 0;
  }
  if (!fold) {
    switch (sg->fast) {
    case FAST_ANY:
      return true;
    case FAST_SUFFIX:
      return len >= sg->len - 1 && memcmp(comp + len - (sg->len - 1), sg->text + 1, sg->len - 1) == 0;
    case FAST_PREFIX:
      return len >= sg->len - 1 && memcmp(comp, sg->text, sg->len - 1) == 0;
    case FAST_NONE:
      break;
    }
  }
  char buf[PATH_MAX];
  if (len >= sizeof(buf)) {
    return false;
  }
  bool ascii = sg->ascii;
  for (size_t k = 0; k < len && ascii; k++) {
    ascii = (unsigned char)comp[k] < 0x80;
  }
  memcpy(buf, comp, len);
  buf[len] = '\0';
  locale_t want = ascii ? m->ascii : utf8_locale();
  locale_t old = want != (locale_t)0 ? uselocale(want) : (locale_t)0;
  int r = fnmatch(sg->text, buf, FNM_NOESCAPE | (fold ? FNM_CASEFOLD : 0));
  if (old != (locale_t)0) {
    uselocale(old);
  }
  return r == 0;
}

/* Runs the segments of `a` over the components of `rel` as a small NFA, in
 * O(segments × components) whatever the pattern. Returns 1 when the pattern
 * matches `rel` or one of its ancestors, 0 when it cannot, and -1 (only
 * with `below`) when it could still match something deeper. */
enum {
  RUN_SUFFIX = 1 << 0, /* `rel` may be preceded by any components */
  RUN_GLOB = 1 << 1,   /* components of `rel` may be shell globs */
  /* A match (or, with `below`, a way on) counts only once a component of
   * `rel` has matched a segment that is not `**`: the pattern names it by
   * more than "anything below". */
  RUN_NAMED = 1 << 2,
};

/* Whether the single-star globs `*a` and `*b` (or `a*` and `b*`, with
 * `suffix` false) can name the same thing: when one's fixed part ends (or
 * starts) the other's. `a` and `b` are the parts without the star. */
static bool fixed_parts_agree(const char *a, size_t alen, const char *b, size_t blen,
                              bool suffix) {
  size_t n = alen < blen ? alen : blen;
  return suffix ? memcmp(a + alen - n, b + blen - n, n) == 0 : memcmp(a, b, n) == 0;
}

/* Whether the shell glob `comp` could name something segment `sg`
 * matches: against a literal segment, exactly; against a glob segment,
 * assumed (two globs overlap more often than not, and refusing is safe),
 * except for the common `*.o` against `*.md`, which never meet. */
static bool glob_overlaps(const Matcher *m, const Segment *sg, const char *comp, size_t len) {
  if (sg->kind != SEG_LITERAL) {
    bool one_star = len > 1 && memchr(comp, '?', len) == NULL && memchr(comp, '[', len) == NULL &&
                    memchr(comp + 1, '*', len - 2) == NULL;
    if (sg->kind == SEG_GLOB && !(m->flags & MATCHER_CASEFOLD) && one_star) {
      if (sg->fast == FAST_SUFFIX && comp[0] == '*' && comp[len - 1] != '*') {
        return fixed_parts_agree(sg->text + 1, sg->len - 1, comp + 1, len - 1, true);
      }
      if (sg->fast == FAST_PREFIX && comp[len - 1] == '*' && comp[0] != '*') {
        return fixed_parts_agree(sg->text, sg->len - 1, comp, len - 1, false);
      }
    }
    return true;
  }
  char buf[PATH_MAX];
  if (len >= sizeof(buf)) {
    return true;
  }
  memcpy(buf, comp, len);
  buf[len] = '\0';
  int fl = FNM_NOESCAPE | ((m->flags & MATCHER_CASEFOLD) ? FNM_CASEFOLD : 0);
  locale_t old = utf8_locale() != (locale_t)0 ? uselocale(utf8_locale()) : (locale_t)0;
  int r = fnmatch(buf, sg->text, fl);
  if (old != (locale_t)0) {
    uselocale(old);
  }
  return r == 0;
}

static int run_alternative(const Matcher *m, const Alternative *a, const char *rel, bool below,
                           unsigned mode) {
  bool suffix = mode & RUN_SUFFIX, named = mode & RUN_NAMED;
  bool cur[MATCHER_MAX_SEGMENTS + 1], nxt[MATCHER_MAX_SEGMENTS + 1];
  /* With RUN_NAMED: whether the state was reached through a segment that
   * is not `**` (cur[s] holds too). */
  bool lcur[MATCHER_MAX_SEGMENTS + 1], lnxt[MATCHER_MAX_SEGMENTS + 1];
  size_t n = a->n_segs;

  memset(cur, 0, (n + 1) * sizeof(bool));
  memset(lcur, 0, (n + 1) * sizeof(bool));
  cur[0] = true;
  /* As a suffix, any number of leading segments may already have been
   * matched by components we do not see. */
  for (size_t s = 1; suffix && s < n; s++) {
    cur[s] = true;
  }
  for (size_t s = 0; s < n && cur[s] && a->segs[s].kind == SEG_GLOBSTAR; s++) {
    cur[s + 1] = true;
  }
  if (cur[n] && !named) {
    /* Only `**` patterns: everything below the root, and the root. */
    return 1;
  }
  for (const char *c = rel; *c != '\0';) {
    const char *e = strchrnul(c, '/');
    size_t len = (size_t)(e - c);
    bool any = false;
    memset(nxt, 0, (n + 1) * sizeof(bool));
    memset(lnxt, 0, (n + 1) * sizeof(bool));
    for (size_t s = 0; s < n; s++) {
      if (!cur[s]) {
        continue;
      }
      if (a->segs[s].kind == SEG_GLOBSTAR) {
        nxt[s] = true;
        lnxt[s] |= lcur[s];
        any = true;
      } else if ((mode & RUN_GLOB) && memchr(c, '*', len) == NULL && memchr(c, '?', len) == NULL &&
                 memchr(c, '[', len) == NULL ? segment_matches(m, &a->segs[s], c, len)
                 : (mode & RUN_GLOB)        ? glob_overlaps(m, &a->segs[s], c, len)
                                            : segment_matches(m, &a->segs[s], c, len)) {
        nxt[s + 1] = true;
        /* A bare `*` names any component, as `**` does. */
        lnxt[s + 1] |= a->segs[s].kind == SEG_GLOB && a->segs[s].fast == FAST_ANY ? lcur[s] : true;
        any = true;
      }
    }
    for (size_t s = 0; s < n; s++) {
      if (nxt[s] && a->segs[s].kind == SEG_GLOBSTAR) {
        nxt[s + 1] = true;
        lnxt[s + 1] |= lnxt[s];
      }
    }
    if (nxt[n] && (!named || lnxt[n])) {
      return 1;
    }
    if (!any) {
      return 0;
    }
    memcpy(cur, nxt, (n + 1) * sizeof(bool));
    memcpy(lcur, lnxt, (n + 1) * sizeof(bool));
    c = *e ? e + 1 : e;
  }
  if (below && named) {
    for (size_t s = 0; s < n; s++) {
      if (cur[s] && lcur[s]) {
        return -1;
      }
    }
    return 0;
  }
  return below ? -1 : 0;
}

long matcher_match(const Matcher *m, const char *rel) {
  long found = -1;
  for (size_t i = 0; i < m->n_alts; i++) {
    /* Alternatives are stored in pattern order: the first hit is the
     * lowest pattern index. */
    if (run_alternative(m, &m->alts[i], rel, false, 0) == 1) {
      found = (long)m->alts[i].pattern;
      break;
    }
  }
  return found;
}

bool matcher_may_match_below(const Matcher *m, const char *rel) {
  bool found = false;
  for (size_t i = 0; i < m->n_alts && !found; i++) {
    found = run_alternative(m, &m->alts[i], rel, true, 0) != 0;
  }
  return found;
}

/* Runs the alternatives of pattern `idx` until one answers. */
static int run_one(const Matcher *m, size_t idx, const char *rel, bool below, unsigned mode) {
  int found = 0;
  for (size_t i = 0; i < m->n_alts && found == 0; i++) {
    if (m->alts[i].pattern == idx) {
      found = run_alternative(m, &m->alts[i], rel, below, mode);
    }
  }
  return found;
}

bool matcher_match_one(const Matcher *m, size_t idx, const char *rel) {
  return run_one(m, idx, rel, false, 0) == 1;
}

bool matcher_may_match_below_one(const Matcher *m, size_t idx, const char *rel) {
  return run_one(m, idx, rel, true, 0) != 0;
}

long matcher_match_suffix(const Matcher *m, const char *rel) {
  long found = -1;
  for (size_t i = 0; i < m->n_alts; i++) {
    if (run_alternative(m, &m->alts[i], rel, false, RUN_SUFFIX) == 1) {
      found = (long)m->alts[i].pattern;
      break;
    }
  }
  return found;
}

long matcher_match_named_suffix(const Matcher *m, const char *rel, bool below) {
  for (size_t i = 0; i < m->n_alts; i++) {
    if (run_alternative(m, &m->alts[i], rel, below, RUN_SUFFIX | RUN_NAMED | RUN_GLOB) != 0) {
      return (long)m->alts[i].pattern;
    }
  }
  return -1;
}

size_t matcher_state_size(const Matcher *m) {
  return m->state_size;
}

void matcher_state_init(const Matcher *m, MatcherState *st) {
  memset(st, 0, m->state_size);
  for (size_t i = 0; i < m->n_alts; i++) {
    const Alternative *a = &m->alts[i];
    uint8_t *cur = st + m->state_offset[i];
    cur[0] = 1;
    for (size_t s = 0; s < a->n_segs && cur[s] && a->segs[s].kind == SEG_GLOBSTAR; s++) {
      cur[s + 1] = 1;
    }
  }
}

long matcher_state_step(const Matcher *m, const MatcherState *from, const char *name,
                        MatcherState *to, bool *ret_alive) {
  size_t len = strlen(name);
  long found = -1;
  bool alive = false;
  for (size_t i = 0; i < m->n_alts; i++) {
    const Alternative *a = &m->alts[i];
    size_t n = a->n_segs;
    const uint8_t *cur = from + m->state_offset[i];
    uint8_t *nxt = to + m->state_offset[i];
    memset(nxt, 0, n + 1);
    for (size_t s = 0; s < n; s++) {
      if (!cur[s]) {
        continue;
      }
      if (a->segs[s].kind == SEG_GLOBSTAR) {
        nxt[s] = 1;
      } else if (segment_matches(m, &a->segs[s], name, len)) {
        nxt[s + 1] = 1;
      }
    }
    for (size_t s = 0; s < n; s++) {
      if (nxt[s] && a->segs[s].kind == SEG_GLOBSTAR) {
        nxt[s + 1] = 1;
      }
    }
    if (nxt[n] && found < 0) {
      found = (long)a->pattern;
    }
    for (size_t s = 0; s < n && !alive; s++) {
      alive = nxt[s];
    }
  }
  *ret_alive = alive;
  return found;
}

long matcher_match_glob(const Matcher *m, const char *rel, bool below) {
  for (size_t i = 0; i < m->n_alts; i++) {
    int r = run_alternative(m, &m->alts[i], rel, below, RUN_GLOB);
    if (r == 1 || (below && r != 0)) {
      return (long)m->alts[i].pattern;
    }
  }
  return -1;
}

bool matcher_match_glob_one(const Matcher *m, size_t idx, const char *rel, bool below) {
  return run_one(m, idx, rel, below, RUN_GLOB) != 0;
}

bool matcher_glob_may_name(const Matcher *m, const char *glob, const char *name) {
  Segment sg = {.kind = SEG_LITERAL, .text = (char *)name, .len = strlen(name)};
  return glob_overlaps(m, &sg, glob, strlen(glob));
}
