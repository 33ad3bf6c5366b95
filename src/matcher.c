/* SPDX-License-Identifier: Apache-2.0 */
#include "matcher.h"

#include "arena.h"

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
  Segment *segs; /* in the matcher's arena, with their texts */
  size_t n_segs;
  bool in_trie;      /* every segment literal: matched through the trie */
  uint32_t next_end; /* the next alternative ending at the same trie node */
} Alternative;

/* The alternatives without a wildcard (literal paths, by far the most
 * common, and a policy may list thousands) are not run one by one: they
 * share a trie of their components, so a component costs one hash lookup
 * whatever their number. A node is the set of literal alternatives that
 * agree on the components so far: the walk of a literal path is
 * deterministic. */
#define TRIE_NONE UINT32_MAX
#define TRIE_ROOT 0u

typedef struct {
  const char *name; /* a segment's text (owned by the alternative) */
  size_t len;
  uint32_t parent;
  uint32_t first_child, next_sibling;
  uint32_t first_end; /* alternatives ending here, through next_end */
  long first;         /* the lowest pattern ending here, or -1 */
} TrieNode;

struct Matcher {
  Arena arena; /* the alternatives' segments and texts */
  Alternative *alts;
  size_t n_alts;
  bool *literal; /* per pattern */
  size_t n_patterns;
  size_t *pattern_alts; /* per pattern and one more: its first alternative */
  unsigned flags;
  locale_t ascii;
  /* The alternatives not in the trie, in pattern order. */
  size_t *general;
  size_t n_general;
  TrieNode *nodes;
  size_t n_nodes, cap_nodes;
  uint32_t *table; /* open addressing over (parent, name) → node */
  size_t table_size;
  size_t *state_offset; /* per alternative not in the trie, into a MatcherState */
  size_t state_size;
  /* Matching work done, for the tests' guard on its growth (never on
   * time): segments compared, trie slots probed. Behind a pointer, so a
   * const Matcher can count. */
  uint64_t *ops;
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

/* The bytes a segment's reading stops at: its end, and wildcards. */
static const bool seg_special[256] = {
    ['\0'] = true, ['/'] = true, ['*'] = true, ['?'] = true, ['['] = true,
};

/* Splits one expanded alternative into segments, or explains why not.
 * The segments and their texts (a copy of `alt`) are cut from `arena`;
 * with `ret` NULL, the alternative is only checked, and nothing is
 * allocated. */
static int split_segments(const char *orig, const char *alt, Arena *arena, Segment **ret,
                          size_t *ret_n, char **why) {
  Segment *segs = NULL;
  size_t n = 0;
  SegKind last = SEG_LITERAL;
  char *buf = NULL;
  if (alt[0] == '/') {
    /* `{/etc,x}`: an alternative may not turn absolute either. */
    *why = xasprintf(_("absolute paths are not allowed, patterns are relative to agent.lock: `%s`"),
                     orig);
    return -1;
  }
  /* Most patterns have a few components: the rest, up to
   * MATCHER_MAX_SEGMENTS, on the heap. All of them on the stack (8 KiB)
   * put what this calls two pages of stack further down, each a page
   * fault at every start that reads a policy. */
  Segment local[32];
  _cleanup_free_ Segment *spill = NULL;
  if (ret != NULL) {
    buf = arena_strndup(arena, alt, strlen(alt));
    segs = local;
  }
  for (const char *s = alt; *s != '\0';) {
    /* One look at each byte: where the segment ends, and what is in it. */
    size_t len = 0, stars = 0, others = 0;
    bool star2 = false;
    unsigned char bits = 0; /* every plain byte or'ed: 0x80 when one is not ASCII */
    for (;; len++) {
      unsigned char c = (unsigned char)s[len];
      if (!seg_special[c]) {
        bits |= c;
      } else if (c == '\0' || c == '/') {
        break;
      } else if (c == '*') {
        star2 |= stars > 0 && s[len - 1] == '*';
        stars++;
      } else {
        others++; /* `?` or `[` */
      }
    }
    bool ascii = bits < 0x80;
    const char *e = s + len;
    if (len == 0 || (len == 1 && s[0] == '.')) {
      /* Alternatives like "a/{,b}/c" leave empty or "." segments. */
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      *why = xasprintf(_("`..` may not be used to escape the project root: `%s`"), orig);
      return -1;
    } else {
      if (star2 && !(len == 2)) {
        *why = xasprintf(_("`**` must be a whole path component (like `a/**/b`), in `%s`"), orig);
        return -1;
      }
      SegKind kind = star2 ? SEG_GLOBSTAR : (stars > 0 || others > 0) ? SEG_GLOB : SEG_LITERAL;
      /* Consecutive `**` mean the same as one. */
      if (!(kind == SEG_GLOBSTAR && n > 0 && last == SEG_GLOBSTAR)) {
        if (n >= MATCHER_MAX_SEGMENTS) {
          *why = xasprintf(_("`%s` has more than %d path components"), orig, MATCHER_MAX_SEGMENTS);
          return -1;
        }
        last = kind;
        if (ret != NULL && segs == local && n == ELEMENTSOF(local)) {
          spill = xreallocarray(NULL, MATCHER_MAX_SEGMENTS, sizeof(Segment));
          memcpy(spill, local, sizeof(local));
          segs = spill;
        }
        if (ret != NULL) {
          Segment *sg = &segs[n];
          *sg = (Segment){.kind = kind, .fast = FAST_NONE, .len = len, .ascii = ascii};
          sg->text = buf + (s - alt);
          sg->text[len] = '\0';
          if (kind == SEG_GLOB && others == 0 && stars == 1) {
            sg->fast = len == 1 ? FAST_ANY : s[0] == '*' ? FAST_SUFFIX
                                           : s[len - 1] == '*' ? FAST_PREFIX
                                                               : FAST_NONE;
          }
        }
        n++;
      }
    }
    s = *e ? e + 1 : e;
  }
  if (n == 0) {
    *why = xasprintf(_("`%s` does not name anything inside the project"), orig);
    return -1;
  }
  if (ret != NULL) {
    *ret = arena_alloc(arena, n * sizeof(Segment));
    memcpy(*ret, segs, n * sizeof(Segment));
    *ret_n = n;
  }
  return 0;
}

/* Whether `pattern` has no braces (and no class, whose `]` could hide a
 * brace): its only alternative is itself, with no expansion to make. */
static bool single_alternative(const char *pattern) {
  return strpbrk(pattern, "{}[") == NULL;
}

int matcher_check_pattern(const char *pattern, char **ret_reason) {
  *ret_reason = NULL;
  if (single_alternative(pattern)) {
    return split_segments(pattern, pattern, NULL, NULL, NULL, ret_reason);
  }
  char **alts = NULL;
  size_t n = 0, cap = 0;
  int r = expand_braces(pattern, pattern, &alts, &n, &cap, ret_reason);
  for (size_t i = 0; r == 0 && i < n; i++) {
    r = split_segments(pattern, alts[i], NULL, NULL, NULL, ret_reason);
  }
  free_strv(alts, n);
  return r;
}

void matcher_free(Matcher *m) {
  if (m == NULL) {
    return;
  }
  arena_free(&m->arena);
  free(m->alts);
  free(m->literal);
  free(m->pattern_alts);
  free(m->general);
  free(m->nodes);
  free(m->table);
  free(m->ops);
  free(m->state_offset);
  if (m->ascii != (locale_t)0) {
    freelocale(m->ascii);
  }
  free(m);
}

static size_t trie_hash(uint32_t parent, const char *name, size_t len) {
  uint64_t h = 1469598103934665603ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
  for (size_t i = 0; i < len; i++) {
    h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
  }
  return (size_t)(h ^ (h >> 29));
}

/* The child `name` of node `parent`, or TRIE_NONE. */
static uint32_t trie_child(const Matcher *m, uint32_t parent, const char *name, size_t len) {
  if (m->table_size == 0) {
    return TRIE_NONE;
  }
  size_t mask = m->table_size - 1;
  for (size_t i = trie_hash(parent, name, len) & mask;; i = (i + 1) & mask) {
    uint32_t k = m->table[i];
    (*m->ops)++;
    if (k == TRIE_NONE) {
      return TRIE_NONE;
    }
    const TrieNode *nd = &m->nodes[k];
    if (nd->parent == parent && nd->len == len && memcmp(nd->name, name, len) == 0) {
      return k;
    }
  }
}

static void trie_insert_slot(Matcher *m, uint32_t k) {
  const TrieNode *nd = &m->nodes[k];
  size_t mask = m->table_size - 1;
  size_t i = trie_hash(nd->parent, nd->name, nd->len) & mask;
  while (m->table[i] != TRIE_NONE) {
    i = (i + 1) & mask;
  }
  m->table[i] = k;
}

static uint32_t trie_add_child(Matcher *m, uint32_t parent, const char *name, size_t len) {
  /* One hash for the lookup and, when the child is new, its slot. */
  size_t i = 0, mask = m->table_size - 1;
  if (m->table_size != 0) {
    for (i = trie_hash(parent, name, len) & mask;; i = (i + 1) & mask) {
      uint32_t k = m->table[i];
      if (k == TRIE_NONE) {
        break;
      }
      const TrieNode *nd = &m->nodes[k];
      if (nd->parent == parent && nd->len == len && memcmp(nd->name, name, len) == 0) {
        return k;
      }
    }
  }
  uint32_t k = (uint32_t)m->n_nodes;
  TrieNode *nd = grow_array(&m->nodes, &m->n_nodes, &m->cap_nodes, sizeof(TrieNode));
  *nd = (TrieNode){.name = name,
                   .len = len,
                   .parent = parent,
                   .first_child = TRIE_NONE,
                   .next_sibling = m->nodes[parent].first_child,
                   .first_end = TRIE_NONE,
                   .first = -1};
  m->nodes[parent].first_child = k;
  /* At most half full: a lookup probes about two slots. */
  if (m->n_nodes * 2 > m->table_size) {
    free(m->table);
    m->table_size = m->table_size ? m->table_size * 2 : 64;
    m->table = xreallocarray(NULL, m->table_size, sizeof(uint32_t));
    memset(m->table, 0xff, m->table_size * sizeof(uint32_t));
    for (uint32_t j = 1; j < m->n_nodes; j++) {
      trie_insert_slot(m, j);
    }
  } else {
    m->table[i] = k;
  }
  return k;
}

static void trie_build(Matcher *m) {
  /* Sized once for the most nodes the literal alternatives can make (one
   * per segment), so neither the nodes nor the table grow on the way. */
  size_t most = 1;
  for (size_t i = 0; i < m->n_alts; i++) {
    Alternative *a = &m->alts[i];
    /* Case folding compares through fnmatch(3): no trie for that. */
    a->in_trie = !(m->flags & MATCHER_CASEFOLD) && m->n_alts < TRIE_NONE;
    for (size_t s = 0; s < a->n_segs && a->in_trie; s++) {
      a->in_trie = a->segs[s].kind == SEG_LITERAL;
    }
    most += a->in_trie ? a->n_segs : 0;
  }
  if (most < TRIE_NONE / 4) {
    m->table_size = 64;
    while (m->table_size < 2 * most) {
      m->table_size *= 2;
    }
    m->table = xreallocarray(NULL, m->table_size, sizeof(uint32_t));
    memset(m->table, 0xff, m->table_size * sizeof(uint32_t));
  } else {
    most = 1;
  }
  m->nodes = xreallocarray(NULL, most, sizeof(TrieNode));
  m->cap_nodes = most;
  m->n_nodes = 1;
  m->nodes[TRIE_ROOT] = (TrieNode){.parent = TRIE_NONE,
                                   .first_child = TRIE_NONE,
                                   .next_sibling = TRIE_NONE,
                                   .first_end = TRIE_NONE,
                                   .first = -1};
  size_t cap_general = 0;
  for (size_t i = 0; i < m->n_alts; i++) {
    Alternative *a = &m->alts[i];
    if (!a->in_trie) {
      size_t *slot = grow_array(&m->general, &m->n_general, &cap_general, sizeof(size_t));
      *slot = i;
      continue;
    }
    uint32_t k = TRIE_ROOT;
    for (size_t s = 0; s < a->n_segs; s++) {
      k = trie_add_child(m, k, a->segs[s].text, a->segs[s].len);
    }
    TrieNode *nd = &m->nodes[k];
    a->next_end = nd->first_end;
    nd->first_end = (uint32_t)i;
    if (nd->first < 0) {
      nd->first = (long)a->pattern; /* alternatives come in pattern order */
    }
  }
}

int matcher_new(const char *const *patterns, size_t n, unsigned flags, Matcher **ret, Error *err) {
  _cleanup_matcher_ Matcher *m = xcalloc(1, sizeof(Matcher));
  /* At least one alternative a pattern. */
  size_t cap = n;
  m->alts = xreallocarray(NULL, n ? n : 1, sizeof(Alternative));
  m->flags = flags;
  m->n_patterns = n;
  m->literal = xcalloc(n, sizeof(bool));
  m->pattern_alts = xcalloc(n + 1, sizeof(size_t));
  m->ops = xcalloc(1, sizeof(uint64_t));
  for (size_t i = 0; i < n; i++) {
    m->pattern_alts[i] = m->n_alts;
    char **alts = NULL;
    size_t na = 0, acap = 0;
    _cleanup_free_ char *why = NULL;
    const char *const *list = &patterns[i];
    if (single_alternative(patterns[i])) {
      na = 1; /* no expansion to make: the pattern itself */
    } else if (expand_braces(patterns[i], patterns[i], &alts, &na, &acap, &why) < 0) {
      free_strv(alts, na);
      return error_set(err, EINVAL, _("invalid pattern: %s"), why);
    } else {
      list = (const char *const *)alts;
    }
    m->literal[i] = na == 1;
    for (size_t k = 0; k < na; k++) {
      Alternative *a = grow_array(&m->alts, &m->n_alts, &cap, sizeof(Alternative));
      a->pattern = i;
      if (split_segments(patterns[i], list[k], &m->arena, &a->segs, &a->n_segs, &why) < 0) {
        m->n_alts--;
        free_strv(alts, alts != NULL ? na : 0);
        return error_set(err, EINVAL, _("invalid pattern: %s"), why);
      }
      for (size_t s = 0; s < a->n_segs; s++) {
        if (a->segs[s].kind != SEG_LITERAL) {
          m->literal[i] = false;
        }
      }
    }
    free_strv(alts, alts != NULL ? na : 0);
  }
  m->pattern_alts[n] = m->n_alts;
  trie_build(m);
  /* fnmatch(3) reads multibyte characters in the thread's locale: pin it
   * to UTF-8 so `?` means one character whatever LANG says, and to C where
   * pattern and name are ASCII, which means the same and costs less. */
  m->ascii = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  /* A state: the trie node, then each other alternative's positions. */
  m->state_offset = xcalloc(m->n_alts + 1, sizeof(size_t));
  m->state_size = sizeof(uint32_t);
  for (size_t g = 0; g < m->n_general; g++) {
    size_t i = m->general[g];
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
  (*m->ops)++;
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
  (*m->ops)++;
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

/* Walks the trie along the components of `rel`: the lowest pattern whose
 * literal alternative names `rel` or an ancestor (or -1), and in *ret_end
 * the node `rel` itself leads to (TRIE_NONE when no literal alternative
 * continues that far). With `fn`, every alternative ending on the way is
 * reported too. */
static long trie_walk(const Matcher *m, const char *rel, uint32_t *ret_end,
                      void (*fn)(size_t pattern, void *data), void *data) {
  long best = -1;
  uint32_t k = TRIE_ROOT;
  for (const char *c = rel; *c != '\0' && k != TRIE_NONE;) {
    const char *e = strchrnul(c, '/');
    k = trie_child(m, k, c, (size_t)(e - c));
    if (k != TRIE_NONE && m->nodes[k].first >= 0) {
      if (best < 0 || m->nodes[k].first < best) {
        best = m->nodes[k].first;
      }
      for (uint32_t a = m->nodes[k].first_end; fn != NULL && a != TRIE_NONE;
           a = m->alts[a].next_end) {
        fn(m->alts[a].pattern, data);
      }
    }
    c = *e ? e + 1 : e;
  }
  *ret_end = k;
  return best;
}

long matcher_match(const Matcher *m, const char *rel) {
  uint32_t end;
  long found = trie_walk(m, rel, &end, NULL, NULL);
  for (size_t g = 0; g < m->n_general; g++) {
    const Alternative *a = &m->alts[m->general[g]];
    /* Stored in pattern order: the first hit is the lowest pattern index
     * among them, and none after one above the trie's can beat it. */
    if (found >= 0 && a->pattern >= (size_t)found) {
      break;
    }
    if (run_alternative(m, a, rel, false, 0) == 1) {
      found = (long)a->pattern;
      break;
    }
  }
  return found;
}

bool matcher_may_match_below(const Matcher *m, const char *rel) {
  uint32_t end;
  /* A literal alternative matches `rel` or an ancestor, or continues
   * below the node `rel` leads to. */
  if (trie_walk(m, rel, &end, NULL, NULL) >= 0 ||
      (end != TRIE_NONE && m->nodes[end].first_child != TRIE_NONE)) {
    return true;
  }
  bool found = false;
  for (size_t g = 0; g < m->n_general && !found; g++) {
    found = run_alternative(m, &m->alts[m->general[g]], rel, true, 0) != 0;
  }
  return found;
}

void matcher_each_match(const Matcher *m, const char *rel, bool below,
                        void (*fn)(size_t pattern, void *data), void *data) {
  uint32_t end;
  trie_walk(m, rel, &end, fn, data);
  if (below && end != TRIE_NONE) {
    /* Everything ending strictly below `end`: a walk of its subtree
     * (first child, next sibling, back up through the parents). */
    uint32_t k = m->nodes[end].first_child;
    while (k != TRIE_NONE) {
      for (uint32_t a = m->nodes[k].first_end; a != TRIE_NONE; a = m->alts[a].next_end) {
        fn(m->alts[a].pattern, data);
      }
      if (m->nodes[k].first_child != TRIE_NONE) {
        k = m->nodes[k].first_child;
        continue;
      }
      while (k != end && m->nodes[k].next_sibling == TRIE_NONE) {
        k = m->nodes[k].parent;
      }
      k = k == end ? TRIE_NONE : m->nodes[k].next_sibling;
    }
  }
  for (size_t g = 0; g < m->n_general; g++) {
    const Alternative *a = &m->alts[m->general[g]];
    int r = run_alternative(m, a, rel, below, 0);
    if (r == 1 || (below && r != 0)) {
      fn(a->pattern, data);
    }
  }
}

/* Runs the alternatives of pattern `idx` until one answers. */
static int run_one(const Matcher *m, size_t idx, const char *rel, bool below, unsigned mode) {
  int found = 0;
  if (idx >= m->n_patterns) {
    return 0;
  }
  for (size_t i = m->pattern_alts[idx]; i < m->pattern_alts[idx + 1] && found == 0; i++) {
    found = run_alternative(m, &m->alts[i], rel, below, mode);
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
  uint32_t root = TRIE_ROOT;
  memcpy(st, &root, sizeof(root));
  for (size_t g = 0; g < m->n_general; g++) {
    size_t i = m->general[g];
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
  uint32_t node;
  memcpy(&node, from, sizeof(node));
  node = node != TRIE_NONE ? trie_child(m, node, name, len) : TRIE_NONE;
  memcpy(to, &node, sizeof(node));
  long found = node != TRIE_NONE ? m->nodes[node].first : -1;
  bool alive = node != TRIE_NONE && m->nodes[node].first_child != TRIE_NONE;
  bool general_found = false;
  for (size_t g = 0; g < m->n_general; g++) {
    size_t i = m->general[g];
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
    /* In pattern order: the first of them is their lowest. */
    if (nxt[n] && !general_found) {
      general_found = true;
      if (found < 0 || (long)a->pattern < found) {
        found = (long)a->pattern;
      }
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

uint64_t matcher_operations(const Matcher *m) {
  return *m->ops;
}

size_t matcher_n_patterns(const Matcher *m) {
  return m->n_patterns;
}
