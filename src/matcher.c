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
  uint8_t kind; /* SegKind */
  uint8_t fast; /* FastKind */
  bool ascii;   /* no byte above 0x7f */
  uint32_t len;
  /* A general alternative's: a NUL-terminated copy in the matcher's arena.
   * A literal alternative's (segments_of): `len` bytes of the pattern. */
  const char *text;
} Segment;

/* What a policy of ten thousand literal paths costs is mostly memory: a
 * page fault a few kilobytes the first time it is touched. So a literal
 * alternative (no wildcard, matched through the trie) keeps no segments
 * and no copy of its text: only its pattern and where its text is. The
 * others, few in any policy, are run segment by segment (a GeneralAlt). */
#define ALT_GENERAL 0x80000000u /* ref: an index into `general` */
#define ALT_OWN 0x7fffffffu     /* ref: the text is the pattern's own string */
/* Any other ref: an index into `brace_texts`, a brace alternative's text. */

typedef struct {
  Segment *segs; /* in the matcher's arena, with their texts */
  uint32_t n_segs;
  uint32_t pattern;
  size_t state_offset; /* into a MatcherState */
} GeneralAlt;

/* The alternatives without a wildcard (literal paths, by far the most
 * common, and a policy may list thousands) are not run one by one: they
 * share a trie of their components, so a component costs one hash lookup
 * whatever their number. A node is the set of literal alternatives that
 * agree on the components so far: the walk of a literal path is
 * deterministic. The trie is built at the first question that needs it
 * (a scan, an attribution, the TRIE_AFTER-th lookup): until then a lookup
 * compares with each literal alternative, which answers `check PATH` and
 * a hook's few lookups without the trie's memory. */
#define TRIE_NONE UINT32_MAX
#define TRIE_ROOT 0u
#define TRIE_AFTER 8u

/* 20 bytes a node, about one a literal pattern. Its name is not stored:
 * it is `len` bytes at `off` in the text of alternative `alt`, one that
 * passes through it. Once one ends here, `alt` is the lowest that does
 * (NODE_ENDS), and the others that do follow it through next_end. */
#define NODE_ENDS 0x8000u
/* An alternative longer than this is run segment by segment instead. */
#define TRIE_MAX_TEXT 0x7fffu
_Static_assert(PATH_MAX <= TRIE_MAX_TEXT, "a known literal (shorter than PATH_MAX) fits the trie");

typedef struct {
  uint32_t alt;
  uint16_t off;
  uint16_t len; /* the name's length, | NODE_ENDS */
  uint32_t parent;
  uint32_t first_child, next_sibling;
} TrieNode;
_Static_assert(sizeof(TrieNode) == 20, "TrieNode grew");

/* What matching changes in a const Matcher: behind a pointer. */
typedef struct {
  /* Matching work done, for the tests' guard on its growth (never on
   * time): segments compared, trie slots probed. */
  uint64_t ops;
  unsigned lookups; /* before the trie: lookups answered without it */
  bool built;
  TrieNode *nodes;
  size_t n_nodes, cap_nodes;
  uint32_t *table; /* open addressing over (parent, name) → node; 0: empty */
  size_t table_size;
  /* Per alternative, 1 + the next ending at the same node (0: none), or
   * NULL while no node has two (only braces or duplicates make them). */
  uint32_t *next_end;
} Trie;

struct Matcher {
  Arena arena; /* the general alternatives' segments and texts, brace alternatives' texts */
  /* The caller's patterns: pattern i at `pats` + i × `stride` bytes. */
  const char *pats;
  size_t stride;
  const char **owned_pats; /* matcher_new's copy of the array, or NULL */
  /* The caller's word on which patterns are literal paths in their
   * normal form (matcher_new_strided's `plain`), borrowed, or NULL. */
  const uint64_t *plain;
  size_t n_patterns;
  size_t n_alts;
  uint32_t *alt_pattern; /* per alternative; NULL when alternative i is pattern i */
  /* Per alternative: ALT_GENERAL | g, ALT_OWN, or a brace text; NULL
   * while every one is ALT_OWN (a policy of literal paths). */
  uint32_t *alt_ref;
  uint32_t *pattern_alts; /* per pattern and one more: its first alternative; NULL as alt_pattern */
  uint64_t *literal;      /* a bit per pattern */
  const char **brace_texts;
  size_t n_brace_texts, cap_brace_texts;
  size_t n_literal_alts; /* in the trie (once built) */
  unsigned flags;
  locale_t ascii;
  /* The alternatives not in the trie, in pattern order. */
  GeneralAlt *general;
  size_t n_general;
  size_t state_size;
  Trie *trie;
};

static const char *pattern_text(const Matcher *m, size_t i) {
  const char *p;
  memcpy(&p, m->pats + i * m->stride, sizeof(p));
  return p;
}

static uint32_t alt_ref(const Matcher *m, size_t a) {
  return m->alt_ref != NULL ? m->alt_ref[a] : ALT_OWN;
}

static uint32_t alt_pattern(const Matcher *m, size_t a) {
  return m->alt_pattern != NULL ? m->alt_pattern[a] : (uint32_t)a;
}

static size_t first_alt(const Matcher *m, size_t idx) {
  return m->pattern_alts != NULL ? m->pattern_alts[idx] : idx;
}

/* The text of literal alternative `a`. */
static const char *alt_text(const Matcher *m, size_t a) {
  uint32_t ref = alt_ref(m, a);
  return ref == ALT_OWN ? pattern_text(m, alt_pattern(m, a)) : m->brace_texts[ref];
}

static bool alt_in_trie(const Matcher *m, size_t a) {
  return !(alt_ref(m, a) & ALT_GENERAL);
}

/* The next component of a literal alternative's text at *s (empty and `.`
 * ones, which brace expansion can leave, skipped): its length, or 0 at
 * the end. */
static size_t next_component(const char **s) {
  for (;;) {
    const char *c = *s;
    if (*c == '\0') {
      return 0;
    }
    const char *e = strchrnul(c, '/');
    size_t len = (size_t)(e - c);
    *s = *e ? e + 1 : e;
    if (len != 0 && !(len == 1 && c[0] == '.')) {
      *s = c; /* the caller steps past it */
      return len;
    }
  }
}

/* The segments of literal alternative `a` in `segs` (room for
 * MATCHER_MAX_SEGMENTS), pointing into its text; their number. */
static size_t segments_of(const Matcher *m, size_t a, Segment *segs) {
  size_t n = 0;
  for (const char *s = alt_text(m, a);;) {
    size_t len = next_component(&s);
    if (len == 0) {
      break;
    }
    segs[n++] = (Segment){.kind = SEG_LITERAL, .fast = FAST_NONE, .len = (uint32_t)len, .text = s};
    s += len;
  }
  return n;
}

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
 * allocated. *ret_literal (when given) says whether every segment is
 * literal. */
static int split_segments(const char *orig, const char *alt, Arena *arena, Segment **ret,
                          size_t *ret_n, bool *ret_literal, char **why) {
  Segment *segs = NULL;
  size_t n = 0;
  SegKind last = SEG_LITERAL;
  bool literal = true;
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
        literal &= kind == SEG_LITERAL;
        if (ret != NULL && segs == local && n == ELEMENTSOF(local)) {
          spill = xreallocarray(NULL, MATCHER_MAX_SEGMENTS, sizeof(Segment));
          memcpy(spill, local, sizeof(local));
          segs = spill;
        }
        if (ret != NULL) {
          Segment *sg = &segs[n];
          *sg = (Segment){
              .kind = (uint8_t)kind, .fast = FAST_NONE, .len = (uint32_t)len, .ascii = ascii};
          char *text = buf + (s - alt);
          text[len] = '\0';
          sg->text = text;
          if (kind == SEG_GLOB && others == 0 && stars == 1) {
            sg->fast = (uint8_t)(len == 1 ? FAST_ANY : s[0] == '*' ? FAST_SUFFIX
                                           : s[len - 1] == '*' ? FAST_PREFIX
                                                               : FAST_NONE);
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
  if (ret_literal != NULL) {
    *ret_literal = literal;
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
    return split_segments(pattern, pattern, NULL, NULL, NULL, NULL, ret_reason);
  }
  char **alts = NULL;
  size_t n = 0, cap = 0;
  int r = expand_braces(pattern, pattern, &alts, &n, &cap, ret_reason);
  for (size_t i = 0; r == 0 && i < n; i++) {
    r = split_segments(pattern, alts[i], NULL, NULL, NULL, NULL, ret_reason);
  }
  free_strv(alts, n);
  return r;
}

static void trie_free(Trie *t) {
  if (t == NULL) {
    return;
  }
  free(t->nodes);
  free(t->table);
  free(t->next_end);
  free(t);
}

void matcher_free(Matcher *m) {
  if (m == NULL) {
    return;
  }
  arena_free(&m->arena);
  free(m->alt_pattern);
  free(m->alt_ref);
  free(m->pattern_alts);
  free(m->literal);
  free(m->brace_texts);
  free(m->general);
  free(m->owned_pats);
  trie_free(m->trie);
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

static const char *node_name(const Matcher *m, const TrieNode *nd) {
  return alt_text(m, nd->alt) + nd->off;
}

static size_t node_len(const TrieNode *nd) {
  return nd->len & ~NODE_ENDS;
}

static bool node_is(const Matcher *m, const TrieNode *nd, uint32_t parent, const char *name,
                    size_t len) {
  return nd->parent == parent && node_len(nd) == len && memcmp(node_name(m, nd), name, len) == 0;
}

/* The lowest alternative ending at `nd`, or TRIE_NONE; the next after `a`. */
static uint32_t ends_first(const TrieNode *nd) {
  return (nd->len & NODE_ENDS) ? nd->alt : TRIE_NONE;
}

static uint32_t ends_next(const Trie *t, uint32_t a) {
  return t->next_end != NULL ? t->next_end[a] - 1 : TRIE_NONE;
}

/* The child `name` of node `parent`, or TRIE_NONE. */
static uint32_t trie_child(const Matcher *m, Trie *t, uint32_t parent, const char *name,
                           size_t len) {
  size_t mask = t->table_size - 1;
  for (size_t i = trie_hash(parent, name, len) & mask;; i = (i + 1) & mask) {
    uint32_t k = t->table[i];
    t->ops++; /* a Trie is never const: the Matcher holds a pointer to it */
    if (k == 0) {
      return TRIE_NONE;
    }
    if (node_is(m, &t->nodes[k], parent, name, len)) {
      return k;
    }
  }
}

/* A table of `size` slots (a power of two) holding nodes 1.. */
static void trie_table(const Matcher *m, Trie *t, size_t size) {
  free(t->table);
  t->table_size = size;
  /* calloc: past malloc's mapping threshold, fresh zero pages, each
   * touched only when a node lands on it. */
  t->table = xcalloc(size, sizeof(uint32_t));
  size_t mask = size - 1;
  for (uint32_t k = 1; k < t->n_nodes; k++) {
    const TrieNode *nd = &t->nodes[k];
    size_t i = trie_hash(nd->parent, node_name(m, nd), node_len(nd)) & mask;
    while (t->table[i] != 0) {
      i = (i + 1) & mask;
    }
    t->table[i] = k;
  }
}

/* The child of `parent` named by `len` bytes at `off` in the text of
 * alternative `a`, made if there is none. */
static uint32_t trie_add_child(const Matcher *m, Trie *t, uint32_t parent, uint32_t a, size_t off,
                               size_t len) {
  const char *name = alt_text(m, a) + off;
  /* One hash for the lookup and, when the child is new, its slot. */
  size_t mask = t->table_size - 1, i;
  for (i = trie_hash(parent, name, len) & mask; t->table[i] != 0; i = (i + 1) & mask) {
    if (node_is(m, &t->nodes[t->table[i]], parent, name, len)) {
      return t->table[i];
    }
  }
  uint32_t k = (uint32_t)t->n_nodes;
  if (t->n_nodes == t->cap_nodes) {
    t->cap_nodes *= 2;
    t->nodes = xreallocarray(t->nodes, t->cap_nodes, sizeof(TrieNode));
  }
  t->nodes[t->n_nodes++] = (TrieNode){.alt = a,
                                      .off = (uint16_t)off,
                                      .len = (uint16_t)len,
                                      .parent = parent,
                                      .first_child = TRIE_NONE,
                                      .next_sibling = t->nodes[parent].first_child};
  t->nodes[parent].first_child = k;
  /* At most two thirds full: a lookup probes about two slots. */
  if (3 * t->n_nodes > 2 * t->table_size) {
    trie_table(m, t, 2 * t->table_size);
  } else {
    t->table[i] = k;
  }
  return k;
}

/* Builds the trie of the literal alternatives, once. */
static Trie *trie_of(const Matcher *m) {
  Trie *t = m->trie;
  if (t->built) {
    return t;
  }
  t->built = true;
  /* A node per distinct literal alternative at least (and one per
   * directory above them, fewer): sized for those, so that the nodes
   * grow (and the table doubles) only where directories are many. */
  size_t most = 1 + m->n_literal_alts + m->n_literal_alts / 8;
  t->nodes = xreallocarray(NULL, most, sizeof(TrieNode));
  t->cap_nodes = most;
  t->n_nodes = 1;
  t->nodes[TRIE_ROOT] = (TrieNode){.parent = TRIE_NONE,
                                   .first_child = TRIE_NONE,
                                   .next_sibling = TRIE_NONE};
  size_t size = 64;
  while (2 * size < 3 * most) {
    size *= 2;
  }
  trie_table(m, t, size);
  for (size_t a = 0; a < m->n_alts; a++) {
    if (!alt_in_trie(m, a)) {
      continue;
    }
    uint32_t k = TRIE_ROOT;
    const char *text = alt_text(m, a);
    size_t off = 0;
    for (const char *s = text;;) {
      size_t len = next_component(&s);
      if (len == 0) {
        break;
      }
      off = (size_t)(s - text);
      k = trie_add_child(m, t, k, (uint32_t)a, off, len);
      s += len;
    }
    /* They come in order: the first to end here is the lowest. */
    TrieNode *nd = &t->nodes[k];
    if (!(nd->len & NODE_ENDS)) {
      nd->alt = (uint32_t)a; /* its name: the same bytes of this one's text */
      nd->off = (uint16_t)off;
      nd->len |= NODE_ENDS;
    } else {
      if (t->next_end == NULL) {
        t->next_end = xcalloc(m->n_alts, sizeof(uint32_t));
      }
      t->next_end[a] = t->next_end[nd->alt];
      t->next_end[nd->alt] = (uint32_t)a + 1;
    }
  }
  return t;
}

/* The lowest pattern ending at node `k`, or -1. */
static long node_first(const Matcher *m, const Trie *t, uint32_t k) {
  uint32_t a = ends_first(&t->nodes[k]);
  return a == TRIE_NONE ? -1 : (long)alt_pattern(m, a);
}

/* Alternative `a`'s ref, in an array of `cap` made at the first that is
 * not ALT_OWN. */
static void set_ref(Matcher *m, size_t a, uint32_t ref, size_t cap) {
  if (m->alt_ref == NULL && ref == ALT_OWN) {
    return;
  }
  if (m->alt_ref == NULL) {
    m->alt_ref = xreallocarray(NULL, cap, sizeof(uint32_t));
    for (size_t k = 0; k < a; k++) {
      m->alt_ref[k] = ALT_OWN;
    }
  }
  m->alt_ref[a] = ref;
}

int matcher_new(const char *const *patterns, size_t n, unsigned flags, Matcher **ret, Error *err) {
  /* A copy of the array (the caller's may be gone before the matcher):
   * the strings stay borrowed. */
  const char **copy = xreallocarray(NULL, n ? n : 1, sizeof(char *));
  if (n > 0) {
    memcpy(copy, patterns, n * sizeof(char *));
  }
  int r = matcher_new_strided(copy, sizeof(char *), n, NULL, flags, ret, err);
  if (r < 0) {
    free(copy);
  } else {
    (*ret)->owned_pats = copy;
  }
  return r;
}

int matcher_new_strided(const char *const *first, size_t stride, size_t n, const uint64_t *plain,
                        unsigned flags, Matcher **ret, Error *err) {
  _cleanup_matcher_ Matcher *m = xcalloc(1, sizeof(Matcher));
  m->pats = (const char *)first;
  m->plain = plain;
  m->stride = stride;
  m->flags = flags;
  m->n_patterns = n;
  m->trie = xcalloc(1, sizeof(Trie));
  if (n >= ALT_OWN) {
    oom(); /* more pointers than memory holds */
  }
  /* At least one alternative a pattern: sized for one each, which most
   * policies have. */
  size_t cap = n ? n : 1;
  m->literal = xcalloc((n + 63) / 64 + 1, sizeof(uint64_t));
  size_t cap_general = 0;
  for (size_t i = 0; i < n; i++) {
    if (i % 64 == 0 && i + 64 <= n && plain != NULL && plain[i / 64] == UINT64_MAX &&
        m->alt_pattern == NULL && m->alt_ref == NULL && !(flags & MATCHER_CASEFOLD)) {
      /* 64 literal paths in their normal form, each its own one
       * alternative, after patterns that were too: what the loop below
       * would record for them, without reading their texts (a policy of
       * ten thousand paths is mostly such words). */
      m->literal[i / 64] = UINT64_MAX;
      m->n_alts += 64;
      m->n_literal_alts += 64;
      i += 63;
      continue;
    }
    const char *pat = pattern_text(m, i);
    if (m->pattern_alts != NULL) {
      m->pattern_alts[i] = (uint32_t)m->n_alts;
    }
    char **alts = NULL;
    size_t na = 0, acap = 0;
    _cleanup_free_ char *why = NULL;
    const char *const *list = &pat;
    /* A literal path in its normal form (no brace, no wildcard, no empty,
     * `.` or `..` component, shorter than a path): valid, and literal. */
    bool known = plain != NULL && (plain[i / 64] >> (i % 64)) & 1;
    if (known || single_alternative(pat)) {
      na = 1; /* no expansion to make: the pattern itself */
    } else if (expand_braces(pat, pat, &alts, &na, &acap, &why) < 0) {
      free_strv(alts, na);
      return error_set(err, EINVAL, _("invalid pattern: %s"), why);
    } else {
      list = (const char *const *)alts;
    }
    if (na != 1 && m->alt_pattern == NULL) {
      /* Alternative i is pattern i no more: say which is which. */
      m->alt_pattern = xreallocarray(NULL, cap, sizeof(uint32_t));
      m->pattern_alts = xreallocarray(NULL, n + 1, sizeof(uint32_t));
      for (size_t k = 0; k <= i; k++) {
        m->pattern_alts[k] = (uint32_t)k;
        if (k < i) {
          m->alt_pattern[k] = (uint32_t)k;
        }
      }
    }
    bool literal = na == 1;
    for (size_t k = 0; k < na; k++) {
      bool lit = known;
      if (!known && split_segments(pat, list[k], NULL, NULL, NULL, &lit, &why) < 0) {
        free_strv(alts, alts != NULL ? na : 0);
        return error_set(err, EINVAL, _("invalid pattern: %s"), why);
      }
      literal &= lit;
      if (m->n_alts >= ALT_OWN) {
        oom(); /* 2^31 alternatives: more than a policy's megabyte makes */
      }
      if (m->n_alts == cap) {
        cap *= 2;
        if (m->alt_ref != NULL) {
          m->alt_ref = xreallocarray(m->alt_ref, cap, sizeof(uint32_t));
        }
        if (m->alt_pattern != NULL) {
          m->alt_pattern = xreallocarray(m->alt_pattern, cap, sizeof(uint32_t));
        }
      }
      size_t a = m->n_alts++;
      if (m->alt_pattern != NULL) {
        m->alt_pattern[a] = (uint32_t)i;
      }
      /* Case folding compares through fnmatch(3): no trie for that. */
      if (lit && !(flags & MATCHER_CASEFOLD) && (known || strlen(list[k]) <= TRIE_MAX_TEXT)) {
        if (alts == NULL) {
          set_ref(m, a, ALT_OWN, cap); /* no braces: the pattern is its text */
        } else {
          const char **slot = grow_array(&m->brace_texts, &m->n_brace_texts,
                                         &m->cap_brace_texts, sizeof(char *));
          *slot = arena_strndup(&m->arena, list[k], strlen(list[k]));
          set_ref(m, a, (uint32_t)(m->n_brace_texts - 1), cap);
        }
        m->n_literal_alts++;
        continue;
      }
      GeneralAlt *g = grow_array(&m->general, &m->n_general, &cap_general, sizeof(GeneralAlt));
      size_t ns = 0;
      (void)split_segments(pat, list[k], &m->arena, &g->segs, &ns, NULL, &why);
      g->n_segs = (uint32_t)ns;
      g->pattern = (uint32_t)i;
      set_ref(m, a, ALT_GENERAL | (uint32_t)(m->n_general - 1), cap);
    }
    if (literal) {
      m->literal[i / 64] |= UINT64_C(1) << (i % 64);
    }
    free_strv(alts, alts != NULL ? na : 0);
  }
  if (m->pattern_alts != NULL) {
    m->pattern_alts[n] = (uint32_t)m->n_alts;
  }
  /* fnmatch(3) reads multibyte characters in the thread's locale: pin it
   * to UTF-8 so `?` means one character whatever LANG says, and to C where
   * pattern and name are ASCII, which means the same and costs less. */
  m->ascii = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  /* A state: the trie node, then each general alternative's positions. */
  m->state_size = sizeof(uint32_t);
  for (size_t g = 0; g < m->n_general; g++) {
    m->general[g].state_offset = m->state_size;
    m->state_size += m->general[g].n_segs + 1;
  }
  *ret = steal_pointer(&m);
  return 0;
}

bool matcher_is_literal(const Matcher *m, size_t idx) {
  return idx < m->n_patterns && (m->literal[idx / 64] >> (idx % 64)) & 1;
}

static bool segment_matches(const Matcher *m, const Segment *sg, const char *comp, size_t len) {
  m->trie->ops++;
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
  m->trie->ops++;
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
  /* The glob, then the name (a literal alternative's segment is not
   * NUL-terminated), each NUL-terminated. */
  char buf[PATH_MAX];
  if (len + sg->len + 2 > sizeof(buf)) {
    return true;
  }
  memcpy(buf, comp, len);
  buf[len] = '\0';
  char *name = buf + len + 1;
  memcpy(name, sg->text, sg->len);
  name[sg->len] = '\0';
  int fl = FNM_NOESCAPE | ((m->flags & MATCHER_CASEFOLD) ? FNM_CASEFOLD : 0);
  locale_t old = utf8_locale() != (locale_t)0 ? uselocale(utf8_locale()) : (locale_t)0;
  int r = fnmatch(buf, name, fl);
  if (old != (locale_t)0) {
    uselocale(old);
  }
  return r == 0;
}

static int run_segments(const Matcher *m, const Segment *segs, size_t n, const char *rel,
                        bool below, unsigned mode) {
  bool suffix = mode & RUN_SUFFIX, named = mode & RUN_NAMED;
  bool cur[MATCHER_MAX_SEGMENTS + 1], nxt[MATCHER_MAX_SEGMENTS + 1];
  /* With RUN_NAMED: whether the state was reached through a segment that
   * is not `**` (cur[s] holds too). */
  bool lcur[MATCHER_MAX_SEGMENTS + 1], lnxt[MATCHER_MAX_SEGMENTS + 1];

  memset(cur, 0, (n + 1) * sizeof(bool));
  memset(lcur, 0, (n + 1) * sizeof(bool));
  cur[0] = true;
  /* As a suffix, any number of leading segments may already have been
   * matched by components we do not see. */
  for (size_t s = 1; suffix && s < n; s++) {
    cur[s] = true;
  }
  for (size_t s = 0; s < n && cur[s] && segs[s].kind == SEG_GLOBSTAR; s++) {
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
      if (segs[s].kind == SEG_GLOBSTAR) {
        nxt[s] = true;
        lnxt[s] |= lcur[s];
        any = true;
      } else if ((mode & RUN_GLOB) && memchr(c, '*', len) == NULL && memchr(c, '?', len) == NULL &&
                 memchr(c, '[', len) == NULL ? segment_matches(m, &segs[s], c, len)
                 : (mode & RUN_GLOB)        ? glob_overlaps(m, &segs[s], c, len)
                                            : segment_matches(m, &segs[s], c, len)) {
        nxt[s + 1] = true;
        /* A bare `*` names any component, as `**` does. */
        lnxt[s + 1] |= segs[s].kind == SEG_GLOB && segs[s].fast == FAST_ANY ? lcur[s] : true;
        any = true;
      }
    }
    for (size_t s = 0; s < n; s++) {
      if (nxt[s] && segs[s].kind == SEG_GLOBSTAR) {
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

/* Runs alternative `a`, whichever kind it is. */
static int run_alternative(const Matcher *m, size_t a, const char *rel, bool below,
                           unsigned mode) {
  uint32_t ref = alt_ref(m, a);
  if (ref & ALT_GENERAL) {
    const GeneralAlt *g = &m->general[ref & ~ALT_GENERAL];
    return run_segments(m, g->segs, g->n_segs, rel, below, mode);
  }
  Segment segs[MATCHER_MAX_SEGMENTS];
  size_t n = segments_of(m, a, segs);
  return run_segments(m, segs, n, rel, below, mode);
}

/* literal_compare() of a plain pattern's text `s` (a literal path in its
 * normal form: no empty or `.` component to skip), byte by byte, which is
 * the same as component by component. A policy of ten thousand paths is
 * compared with each one when a path is protected by none. */
static inline int plain_compare(const char *s, const char *c) {
  size_t k = 0;
  while (s[k] != '\0' && s[k] == c[k]) {
    k++;
  }
  if (s[k] == '\0') {
    return c[k] == '\0' || c[k] == '/' ? 1 : 0;
  }
  /* `rel` ends where a component of the pattern starts. */
  return c[k] == '\0' && (k == 0 || s[k] == '/' || c[k - 1] == '/') ? -1 : 0;
}

/* Literal alternative `a` against `rel`, component by component, without
 * the trie: 1 when it names `rel` or an ancestor, -1 when it names
 * something strictly below `rel`, else 0. */
static int literal_compare(const Matcher *m, size_t a, const char *rel) {
  m->trie->ops++;
  const char *s = alt_text(m, a), *c = rel;
  size_t i = alt_pattern(m, a);
  if (m->plain != NULL && (m->plain[i / 64] >> (i % 64)) & 1) {
    return plain_compare(s, c);
  }
  for (;;) {
    size_t len = next_component(&s);
    if (len == 0) {
      return 1;
    }
    if (*c == '\0') {
      return -1;
    }
    const char *e = strchrnul(c, '/');
    if ((size_t)(e - c) != len || memcmp(c, s, len) != 0) {
      return 0;
    }
    s += len;
    c = *e ? e + 1 : e;
  }
}

/* Whether a lookup is to go through the trie: after TRIE_AFTER without
 * it (each of which compares with every literal alternative), so that
 * many lookups cost a hash each and a few cost no trie. */
static bool use_trie(const Matcher *m) {
  Trie *t = m->trie;
  if (!t->built && t->lookups < TRIE_AFTER) {
    t->lookups++;
    return false;
  }
  trie_of(m);
  return true;
}

/* Walks the trie along the components of `rel`: the lowest pattern whose
 * literal alternative names `rel` or an ancestor (or -1), and in *ret_end
 * the node `rel` itself leads to (TRIE_NONE when no literal alternative
 * continues that far). With `fn`, every alternative ending on the way is
 * reported too. */
static long trie_walk(const Matcher *m, const char *rel, uint32_t *ret_end,
                      void (*fn)(size_t pattern, void *data), void *data) {
  Trie *t = trie_of(m);
  long best = -1;
  uint32_t k = TRIE_ROOT;
  for (const char *c = rel; *c != '\0' && k != TRIE_NONE;) {
    const char *e = strchrnul(c, '/');
    k = trie_child(m, t, k, c, (size_t)(e - c));
    long first = k != TRIE_NONE ? node_first(m, t, k) : -1;
    if (first >= 0) {
      if (best < 0 || first < best) {
        best = first;
      }
      for (uint32_t a = ends_first(&t->nodes[k]); fn != NULL && a != TRIE_NONE;
           a = ends_next(t, a)) {
        fn(alt_pattern(m, a), data);
      }
    }
    c = *e ? e + 1 : e;
  }
  *ret_end = k;
  return best;
}

long matcher_match(const Matcher *m, const char *rel) {
  long found = -1;
  if (use_trie(m)) {
    uint32_t end;
    found = trie_walk(m, rel, &end, NULL, NULL);
  } else if (m->alt_ref == NULL && m->alt_pattern == NULL && m->plain != NULL) {
    /* Every alternative is its pattern's own text (no braces, every one
     * a literal): what literal_compare() does, with nothing to look up
     * for the plain ones, which are most. */
    uint64_t plain_compared = 0;
    for (size_t a = 0; a < m->n_alts && found < 0; a++) {
      int r;
      if ((m->plain[a / 64] >> (a % 64)) & 1) {
        plain_compared++;
        r = plain_compare(pattern_text(m, a), rel);
      } else {
        r = literal_compare(m, a, rel);
      }
      if (r == 1) {
        found = (long)a;
      }
    }
    m->trie->ops += plain_compared;
  } else {
    /* In order: the first that matches is the lowest. */
    for (size_t a = 0; a < m->n_alts && found < 0; a++) {
      if (alt_in_trie(m, a) && literal_compare(m, a, rel) == 1) {
        found = (long)alt_pattern(m, a);
      }
    }
  }
  for (size_t g = 0; g < m->n_general; g++) {
    const GeneralAlt *a = &m->general[g];
    /* Stored in pattern order: the first hit is the lowest pattern index
     * among them, and none after one above the trie's can beat it. */
    if (found >= 0 && a->pattern >= (size_t)found) {
      break;
    }
    if (run_segments(m, a->segs, a->n_segs, rel, false, 0) == 1) {
      found = (long)a->pattern;
      break;
    }
  }
  return found;
}

bool matcher_may_match_below(const Matcher *m, const char *rel) {
  if (use_trie(m)) {
    uint32_t end;
    /* A literal alternative matches `rel` or an ancestor, or continues
     * below the node `rel` leads to. */
    if (trie_walk(m, rel, &end, NULL, NULL) >= 0 ||
        (end != TRIE_NONE && m->trie->nodes[end].first_child != TRIE_NONE)) {
      return true;
    }
  } else {
    for (size_t a = 0; a < m->n_alts; a++) {
      if (alt_in_trie(m, a) && literal_compare(m, a, rel) != 0) {
        return true;
      }
    }
  }
  bool found = false;
  for (size_t g = 0; g < m->n_general && !found; g++) {
    const GeneralAlt *a = &m->general[g];
    found = run_segments(m, a->segs, a->n_segs, rel, true, 0) != 0;
  }
  return found;
}

void matcher_each_match(const Matcher *m, const char *rel, bool below,
                        void (*fn)(size_t pattern, void *data), void *data) {
  uint32_t end;
  trie_walk(m, rel, &end, fn, data);
  const Trie *t = m->trie;
  if (below && end != TRIE_NONE) {
    /* Everything ending strictly below `end`: a walk of its subtree
     * (first child, next sibling, back up through the parents). */
    uint32_t k = t->nodes[end].first_child;
    while (k != TRIE_NONE) {
      for (uint32_t a = ends_first(&t->nodes[k]); a != TRIE_NONE; a = ends_next(t, a)) {
        fn(alt_pattern(m, a), data);
      }
      if (t->nodes[k].first_child != TRIE_NONE) {
        k = t->nodes[k].first_child;
        continue;
      }
      while (k != end && t->nodes[k].next_sibling == TRIE_NONE) {
        k = t->nodes[k].parent;
      }
      k = k == end ? TRIE_NONE : t->nodes[k].next_sibling;
    }
  }
  for (size_t g = 0; g < m->n_general; g++) {
    const GeneralAlt *a = &m->general[g];
    int r = run_segments(m, a->segs, a->n_segs, rel, below, 0);
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
  for (size_t a = first_alt(m, idx); a < first_alt(m, idx + 1) && found == 0; a++) {
    found = run_alternative(m, a, rel, below, mode);
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
  for (size_t a = 0; a < m->n_alts; a++) {
    if (run_alternative(m, a, rel, false, RUN_SUFFIX) == 1) {
      return (long)alt_pattern(m, a);
    }
  }
  return -1;
}

long matcher_match_named_suffix(const Matcher *m, const char *rel, bool below) {
  for (size_t a = 0; a < m->n_alts; a++) {
    if (run_alternative(m, a, rel, below, RUN_SUFFIX | RUN_NAMED | RUN_GLOB) != 0) {
      return (long)alt_pattern(m, a);
    }
  }
  return -1;
}

size_t matcher_state_size(const Matcher *m) {
  return m->state_size;
}

void matcher_state_init(const Matcher *m, MatcherState *st) {
  /* A walk visits every entry: the trie pays from the first. */
  trie_of(m);
  memset(st, 0, m->state_size);
  uint32_t root = TRIE_ROOT;
  memcpy(st, &root, sizeof(root));
  for (size_t g = 0; g < m->n_general; g++) {
    const GeneralAlt *a = &m->general[g];
    uint8_t *cur = st + a->state_offset;
    cur[0] = 1;
    for (size_t s = 0; s < a->n_segs && cur[s] && a->segs[s].kind == SEG_GLOBSTAR; s++) {
      cur[s + 1] = 1;
    }
  }
}

long matcher_state_step(const Matcher *m, const MatcherState *from, const char *name,
                        MatcherState *to, bool *ret_alive) {
  Trie *t = trie_of(m);
  size_t len = strlen(name);
  uint32_t node;
  memcpy(&node, from, sizeof(node));
  node = node != TRIE_NONE ? trie_child(m, t, node, name, len) : TRIE_NONE;
  memcpy(to, &node, sizeof(node));
  long found = node != TRIE_NONE ? node_first(m, t, node) : -1;
  bool alive = node != TRIE_NONE && t->nodes[node].first_child != TRIE_NONE;
  bool general_found = false;
  for (size_t g = 0; g < m->n_general; g++) {
    const GeneralAlt *a = &m->general[g];
    size_t n = a->n_segs;
    const uint8_t *cur = from + a->state_offset;
    uint8_t *nxt = to + a->state_offset;
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
  for (size_t a = 0; a < m->n_alts; a++) {
    int r = run_alternative(m, a, rel, below, RUN_GLOB);
    if (r == 1 || (below && r != 0)) {
      return (long)alt_pattern(m, a);
    }
  }
  return -1;
}

bool matcher_match_glob_one(const Matcher *m, size_t idx, const char *rel, bool below) {
  return run_one(m, idx, rel, below, RUN_GLOB) != 0;
}

bool matcher_glob_may_name(const Matcher *m, const char *glob, const char *name) {
  Segment sg = {.kind = SEG_LITERAL, .text = name, .len = (uint32_t)strlen(name)};
  return glob_overlaps(m, &sg, glob, strlen(glob));
}

uint64_t matcher_operations(const Matcher *m) {
  return m->trie->ops;
}

size_t matcher_n_patterns(const Matcher *m) {
  return m->n_patterns;
}
