/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c: the strict agent.lock reader (ARCHITECTURE.md §2), pattern
 * normalisation, discovery on real directories and the starter policy. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "matcher.h"
#include "path.h"
#include "policy.h"
#include "util.h"

#define FILE_NAME "/proj/agent.lock"
#define EXAMPLE "    protect:\n      - src/auth.c\n      - tests/golden/**"
#define EMPTY_MESSAGE \
  "the file is empty, so it protects nothing. Add the paths to protect:\n\n" EXAMPLE
#define TOO_BIG_MESSAGE "the file is larger than 1048576 bytes; a policy is a short list"

/* ---- helpers ------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)type;
  (void)ftw;
  return remove(path);
}

static void rm_rf(const char *dir) {
  ck_assert_int_eq(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Every test directory lives in one made by main() and removed after the
 * run, so a failing test (whose process exits early) leaves nothing. */
static char base_dir[] = "/tmp/ralon-test-policy-XXXXXX";

static char *make_tmpdir(void) {
  char *d = xasprintf("%s/XXXXXX", base_dir);
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void write_file(const char *path, const char *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(fd, 0);
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    ck_assert_int_gt(w, 0);
    off += (size_t)w;
  }
  ck_assert_int_eq(close(fd), 0);
}

static void write_text(const char *dir, const char *name, const char *text) {
  _cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
  write_file(p, text, strlen(text));
}

static void make_dir(const char *dir, const char *name) {
  _cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
  ck_assert_int_eq(mkdir(p, 0755), 0);
}

/* Asserts the pattern list of `p`: agent.lock first, then `expect`
 * (NULL-terminated). */
static bool plain_bit(const Policy *p, size_t i) {
  return (p->plain[i / 64] >> (i % 64)) & 1;
}

static void assert_patterns_only(const char *row, const Policy *p, const char *const *expect) {
  size_t n = 0;
  while (expect[n] != NULL) {
    n++;
  }
  ck_assert_msg(p->n_patterns == n + 1, "%s: %zu patterns, expected %zu", row, p->n_patterns,
                n + 1);
  ck_assert_uint_eq(p->n_declared, n);
  ck_assert_str_eq(p->patterns[0].pattern, "agent.lock");
  for (size_t i = 0; i < n; i++) {
    const PolicyPattern *pp = &p->patterns[i + 1];
    ck_assert_msg(streq(pp->pattern, expect[i]), "%s: pattern %zu is `%s`, expected `%s`", row,
                  i + 1, pp->pattern, expect[i]);
  }
}

/* The patterns, and where each was written. */
static void assert_patterns(const char *row, const Policy *p, const char *const *expect) {
  assert_patterns_only(row, p, expect);
  ck_assert_ptr_nonnull(p->positions);
  ck_assert_str_eq(p->positions[0].declared, "agent.lock");
  ck_assert_uint_eq(p->positions[0].line, 0);
  ck_assert_uint_eq(p->positions[0].column, 0);
  for (size_t i = 1; i < p->n_patterns; i++) {
    const PolicyPosition *pos = &p->positions[i];
    ck_assert_msg(pos->line > 0 && pos->column > 0, "%s: pattern %zu has no position", row, i);
    ck_assert_ptr_nonnull(pos->declared);
  }
}

/* ---- malformed policies -------------------------------------------------- */

static char *gen_too_big(size_t *len) {
  /* One byte over the limit; valid YAML otherwise. */
  size_t n = POLICY_MAX_SIZE + 1;
  char *s = xmalloc(n + 1);
  memset(s, '#', n);
  memcpy(s, "protect: [a]\n", 13);
  s[n - 1] = '\n';
  s[n] = '\0';
  *len = n;
  return s;
}

static char *gen_too_many_segments(size_t *len) {
  /* 257 components: one more than MATCHER_MAX_SEGMENTS. */
  size_t cap = 64 + 2 * (MATCHER_MAX_SEGMENTS + 1);
  char *s = xmalloc(cap);
  size_t n = (size_t)sprintf(s, "protect:\n  - ");
  for (int i = 0; i <= MATCHER_MAX_SEGMENTS; i++) {
    n += (size_t)sprintf(s + n, i == 0 ? "a" : "/a");
  }
  s[n++] = '\n';
  s[n] = '\0';
  *len = n;
  return s;
}

static char *gen_too_long(size_t *len) {
  /* PATH_MAX bytes in one component-free pattern. */
  char *s = xmalloc(PATH_MAX + 64);
  size_t n = (size_t)sprintf(s, "protect:\n  - ");
  memset(s + n, 'x', PATH_MAX);
  n += PATH_MAX;
  s[n++] = '\n';
  s[n] = '\0';
  *len = n;
  return s;
}

static char *gen_too_many_alternatives(size_t *len) {
  /* 2^9 = 512 alternatives. */
  char *s = xstrdup("protect:\n  - '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}'\n");
  *len = strlen(s);
  return s;
}

typedef struct {
  const char *name;
  const char *text;
  size_t len;
  char *(*gen)(size_t *len);
  unsigned line, column;
  int errnum;
  /* In bad_rows, a distinctive substring of what follows "FILE:LINE:COL: ";
   * in exact_rows, all of it. */
  const char *message;
} BadRow;

#define TEXT(s) (s), sizeof(s) - 1, NULL
#define GEN(f) NULL, 0, (f)

static const BadRow bad_rows[] = {
    /* Structure. */
    {"unknown key", TEXT("protects:\n  - a\n"), 1, 1, EINVAL,
     "unknown key `protects`; expected `protect` or `version`"},
    {"unknown key after protect", TEXT("protect: [a]\nextra: 1\n"), 2, 1, EINVAL,
     "unknown key `extra`"},
    {"duplicate protect", TEXT("protect:\n  - a\nprotect: [b]\n"), 3, 1, EINVAL,
     "duplicate key `protect`"},
    {"duplicate version", TEXT("version: 1\nversion: 1\nprotect: [b]\n"), 2, 1, EINVAL,
     "duplicate key `version`"},
    {"duplicate key in flow mapping", TEXT("{protect: [a], protect: [b]}\n"), 1, 16, EINVAL,
     "duplicate key `protect`"},
    {"key that is a list", TEXT("? [a]\n: b\n"), 1, 3, EINVAL,
     "expected a key (`protect` or `version`), found a list"},
    {"alias as value", TEXT("protect: *a\n"), 1, 10, EINVAL,
     "aliases (`*name`) are not allowed in agent.lock"},
    {"alias as item", TEXT("protect:\n  - a\n  - *x\n"), 3, 5, EINVAL, "aliases (`*name`)"},
    {"anchor on list", TEXT("protect: &a [x]\n"), 1, 10, EINVAL,
     "anchors (`&a`) are not allowed in agent.lock"},
    {"anchor on item", TEXT("protect:\n  - a\n  - &x b\n"), 3, 5, EINVAL, "anchors (`&x`)"},
    {"tag !!str", TEXT("protect: [!!str a]\n"), 1, 11, EINVAL, "tags (`"},
    {"tag !!int on version", TEXT("version: !!int 1\nprotect: [a]\n"), 1, 10, EINVAL, "tags (`"},
    {"tag !custom", TEXT("protect: !custom [a]\n"), 1, 10, EINVAL,
     "tags (`!custom`) are not allowed in agent.lock"},
    {"tag on a key", TEXT("!k protect: [a]\n"), 1, 1, EINVAL, "tags (`!k`)"},
    {"unquoted !negation is a tag", TEXT("protect:\n  - !a\n"), 2, 5, EINVAL, "tags (`!a`)"},
    {"%TAG directive", TEXT("%TAG ! tag:example.com,2000:\n---\nprotect: [a]\n"), 1, 1, EINVAL,
     "%TAG directives are not allowed in agent.lock"},
    {"second document", TEXT("protect: [a]\n---\nprotect: [b]\n"), 2, 1, EINVAL,
     "a second YAML document is not allowed in agent.lock (remove the `---`)"},
    {"--- twice", TEXT("---\nprotect: [a]\n---\nprotect: [b]\n"), 3, 1, EINVAL,
     "a second YAML document is not allowed"},
    {"empty second document", TEXT("---\nprotect: [a]\n...\n---\n"), 4, 1, EINVAL,
     "a second YAML document is not allowed"},
    {"bare list at top", TEXT("- a\n- b\n"), 1, 1, EINVAL,
     "expected a mapping with the key `protect:` (and optionally `version: 1`), found a list"},
    {"scalar at top", TEXT("src/auth.c\n"), 1, 1, EINVAL,
     "expected a mapping with the key `protect:` (and optionally `version: 1`), found a value"},
    {"protect as a string", TEXT("protect: src\n"), 1, 10, EINVAL,
     "expected a list of paths after `protect:`, found the string `src`; write one path per "
     "line:\n\n" EXAMPLE},
    {"protect as a mapping", TEXT("protect:\n  a: b\n"), 2, 3, EINVAL,
     "expected a list of paths after `protect:`, found a mapping"},
    {"protect: ~", TEXT("protect: ~\n"), 1, 10, EINVAL,
     "`protect:` is empty; list the paths to protect below it, one per line:\n\n" EXAMPLE},
    {"protect: null", TEXT("protect: null\n"), 1, 10, EINVAL, "`protect:` is empty"},
    {"protect: with nothing", TEXT("version: 1\nprotect:\n"), 2, 9, EINVAL, "`protect:` is empty"},
    {"nested list item", TEXT("protect:\n  - a\n  - [b, c]\n"), 3, 5, EINVAL,
     "expected a path (a string) in the `protect` list, found a list"},
    {"nested flow list", TEXT("protect: [a, [b]]\n"), 1, 14, EINVAL,
     "in the `protect` list, found a list"},
    {"mapping item", TEXT("protect:\n  - a: b\n"), 2, 5, EINVAL,
     "expected a path (a string) in the `protect` list, found a mapping"},
    {"flow mapping item", TEXT("protect: [{a}]\n"), 1, 11, EINVAL,
     "in the `protect` list, found a mapping"},

    /* version */
    {"version 2", TEXT("version: 2\nprotect: [a]\n"), 1, 10, EINVAL,
     "unsupported version 2 (this build understands version 1)"},
    {"version 0", TEXT("version: 0\nprotect: [a]\n"), 1, 10, EINVAL, "unsupported version 0"},
    {"version too large", TEXT("version: 99999999999999999999999\nprotect: [a]\n"), 1, 10, EINVAL,
     "unsupported version 99999999999999999999999"},
    {"version quoted", TEXT("version: \"1\"\nprotect: [a]\n"), 1, 10, EINVAL,
     "expected the number 1 after `version:`"},
    {"version single-quoted", TEXT("version: '1'\nprotect: [a]\n"), 1, 10, EINVAL,
     "expected the number 1 after `version:`"},
    {"version abc", TEXT("version: abc\nprotect: [a]\n"), 1, 10, EINVAL,
     "expected the number 1 after `version:`, found `abc`"},
    {"version 1.0", TEXT("version: 1.0\nprotect: [a]\n"), 1, 10, EINVAL, "found `1.0`"},
    {"version -1", TEXT("version: -1\nprotect: [a]\n"), 1, 10, EINVAL, "after `version:`"},
    {"version as list", TEXT("version: [1]\nprotect: [a]\n"), 1, 10, EINVAL,
     "expected the number 1 after `version:`, found a list"},
    {"version empty", TEXT("version:\nprotect: [a]\n"), 1, 9, EINVAL,
     "expected the number 1 after `version:`"},

    /* Patterns. */
    {"empty pattern", TEXT("protect:\n  - ''\n"), 2, 5, EINVAL, "invalid pattern: empty pattern"},
    {"empty item", TEXT("protect:\n  -\n"), 2, 4, EINVAL, "invalid pattern: empty pattern"},
    {"whitespace pattern", TEXT("protect:\n  - ' \t '\n"), 2, 5, EINVAL,
     "invalid pattern: empty pattern"},
    {"negation", TEXT("protect:\n  - '!a'\n"), 2, 5, EINVAL,
     "invalid pattern: negation is not supported in version 1: `!a`"},
    {"tilde", TEXT("protect: [~/x]\n"), 1, 11, EINVAL,
     "invalid pattern: `~` is not expanded: `~/x`; patterns are relative to agent.lock"},
    {"absolute", TEXT("protect: [/etc/passwd]\n"), 1, 11, EINVAL,
     "invalid pattern: absolute paths are not allowed, patterns are relative to agent.lock: "
     "`/etc/passwd`"},
    {"backslash absolute", TEXT("protect: ['\\abs']\n"), 1, 11, EINVAL,
     "absolute paths are not allowed, patterns are relative to agent.lock: `/abs`"},
    {"UNC path", TEXT("protect: ['\\\\server\\share']\n"), 1, 11, EINVAL,
     "absolute paths are not allowed, patterns are relative to agent.lock: `//server/share`"},
    {"drive letter", TEXT("protect: ['C:\\x']\n"), 1, 11, EINVAL,
     "invalid pattern: `:` is not allowed (drive letters and URLs are not project paths): `C:/x`"},
    {"URL", TEXT("protect: ['http://x']\n"), 1, 11, EINVAL,
     "`:` is not allowed (drive letters and URLs are not project paths): `http://x`"},
    {"dotdot", TEXT("protect: [..]\n"), 1, 11, EINVAL,
     "invalid pattern: `..` may not be used to escape the project root: `..`"},
    {"dotdot inside", TEXT("protect: [a/../b]\n"), 1, 11, EINVAL,
     "`..` may not be used to escape the project root: `a/../b`"},
    {"dotdot at end", TEXT("protect: [a/..]\n"), 1, 11, EINVAL,
     "`..` may not be used to escape the project root: `a/..`"},
    {"dotdot in braces", TEXT("protect: ['{a,..}']\n"), 1, 11, EINVAL, "`..` may not be used"},
    {"dot", TEXT("protect: [.]\n"), 1, 11, EINVAL,
     "invalid pattern: `.` does not name anything inside the project (to protect everything, "
     "write `**`)"},
    {"dot slash", TEXT("protect: [./]\n"), 1, 11, EINVAL,
     "`./` does not name anything inside the project"},
    {"NUL escape", TEXT("protect: [\"a\\0b\"]\n"), 1, 11, EINVAL,
     "invalid pattern: a pattern may not contain a NUL character"},
    {"NUL unicode escape", TEXT("protect:\n  - \"x\\u0000\"\n"), 2, 5, EINVAL,
     "a pattern may not contain a NUL character"},
    {"unclosed [", TEXT("protect: ['[ab']\n"), 1, 11, EINVAL,
     "invalid pattern: unclosed `[` in `[ab` (to match a literal `[`, write `[[]`)"},
    {"[ closed after /", TEXT("protect: ['a[/]b']\n"), 1, 11, EINVAL, "unclosed `[` in `a[/]b`"},
    {"unclosed {", TEXT("protect: ['{a,b']\n"), 1, 11, EINVAL,
     "invalid pattern: unclosed `{` in `{a,b`"},
    {"nested {", TEXT("protect: ['{a,{b}}']\n"), 1, 11, EINVAL,
     "invalid pattern: nested `{` is not supported in `{a,{b}}`"},
    {"stray }", TEXT("protect: ['a}']\n"), 1, 11, EINVAL,
     "invalid pattern: `}` without a matching `{` in `a}`"},
    {"a**", TEXT("protect: ['a**']\n"), 1, 11, EINVAL,
     "invalid pattern: `**` must be a whole path component (like `a/**/b`), in `a**`"},
    {"**b", TEXT("protect: ['**b']\n"), 1, 11, EINVAL,
     "`**` must be a whole path component (like `a/**/b`), in `**b`"},
    {"a/**b", TEXT("protect: ['a/**b']\n"), 1, 11, EINVAL,
     "`**` must be a whole path component (like `a/**/b`), in `a/**b`"},
    {"***", TEXT("protect: ['***']\n"), 1, 11, EINVAL, "`**` must be a whole path component"},
    {"error after a multibyte item", TEXT("protect: [\xC3\xA9, ../x]\n"), 1, 14, EINVAL,
     "`..` may not be used to escape the project root: `../x`"},
    {"error on a CRLF line", TEXT("protect:\r\n  - a\r\n  - ../x\r\n"), 3, 5, EINVAL,
     "`..` may not be used"},
    {"too many components", GEN(gen_too_many_segments), 2, 5, EINVAL,
     "has more than 256 path components"},
    {"pattern longer than PATH_MAX", GEN(gen_too_long), 2, 5, EINVAL,
     "invalid pattern: a pattern may not be longer than 4095 bytes"},
    {"too many alternatives", GEN(gen_too_many_alternatives), 2, 5, EINVAL,
     "expands to more than 256 alternatives"},

    /* YAML syntax. */
    {"bad indentation", TEXT("protect:\n  - a\n - b\n"), 3, 2, EINVAL,
     "invalid YAML: did not find expected key while parsing a block mapping"},
    /* Reported where the quote opens, not at the end of the file. */
    {"unterminated quote", TEXT("protect:\n  - \"abc\n"), 2, 5, EINVAL,
     "invalid YAML: found unexpected end of stream while scanning a quoted scalar"},
    {"tab indentation", TEXT("protect:\n\t- a\n"), 2, 1, EINVAL,
     "a tab character: YAML indents with spaces only; replace the tab with spaces"},
    {"tab before a later item", TEXT("protect:\n  - a\n\t- b\n"), 3, 1, EINVAL,
     "a tab character: YAML indents with spaces only"},
    {"unquoted **/ pattern", TEXT("protect:\n  - **/*.pem\n"), 2, 5, EINVAL,
     "a pattern that starts with `*` must be quoted, or YAML reads it as an alias: write "
     "\"**/*.pem\""},
    {"unquoted * pattern after a multibyte item", TEXT("protect: [\xC3\xA9, *.k]\n"), 1, 14,
     EINVAL, "must be quoted, or YAML reads it as an alias: write \"*.k\""},
    {"unquoted & pattern", TEXT("protect:\n  - &*x\n"), 2, 5, EINVAL,
     "a pattern that starts with `&` must be quoted, or YAML reads it as an anchor: write "
     "\"&*x\""},
    {"unquoted @ pattern", TEXT("protect:\n  - '@a'\n  - @b # c\n"), 3, 5, EINVAL,
     "a pattern that starts with `@` must be quoted (YAML reserves the character): write "
     "\"@b\""},
    {"unclosed flow list", TEXT("protect: [a\n"), 2, 1, EINVAL,
     "invalid YAML: did not find expected ',' or ']' while parsing a flow sequence"},
    {"item outside the list", TEXT("protect:\n  - a\n  b: c\n"), 3, 3, EINVAL,
     "invalid YAML: did not find expected '-' indicator"},
    {"surrogate escape", TEXT("protect:\n  - \"\\uD800\"\n"), 2, 8, EINVAL,
     "invalid YAML: found invalid Unicode character escape code"},

    /* Bytes. */
    {"NUL byte", TEXT("protect:\n  - a\0b\n"), 2, 6, EINVAL,
     "a NUL byte; agent.lock must be UTF-8 text"},
    {"NUL byte after a multibyte character", TEXT("protect:\n  - \xC3\xA9\0\n"), 2, 6, EINVAL,
     "a NUL byte; agent.lock must be UTF-8 text"},
    {"invalid byte", TEXT("protect:\n  - \xFF\n"), 2, 5, EILSEQ,
     "not valid UTF-8; agent.lock must be UTF-8 text"},
    {"lone continuation byte", TEXT("protect:\n  - \xC3\xA9\x80\n"), 2, 6, EILSEQ,
     "not valid UTF-8"},
    {"overlong 2-byte encoding", TEXT("protect:\n  - \xC0\xAF\n"), 2, 5, EILSEQ, "not valid UTF-8"},
    {"overlong 3-byte encoding", TEXT("protect:\n  - \xE0\x80\xAF\n"), 2, 5, EILSEQ,
     "not valid UTF-8"},
    {"overlong 4-byte encoding", TEXT("protect:\n  - \xF0\x80\x80\xAF\n"), 2, 5, EILSEQ,
     "not valid UTF-8"},
    {"UTF-16 surrogate in UTF-8", TEXT("protect:\n  - \xED\xA0\x80\n"), 2, 5, EILSEQ,
     "not valid UTF-8"},
    {"above U+10FFFF", TEXT("protect:\n  - \xF4\x90\x80\x80\n"), 2, 5, EILSEQ,
     "not valid UTF-8"},
    /* A byte order mark is not a column, for libyaml nor here. */
    {"invalid byte after a BOM", TEXT("\xEF\xBB\xBFprotect: [a, \xFF]\n"), 1, 14, EILSEQ,
     "not valid UTF-8"},
    {"NUL byte after a BOM", TEXT("\xEF\xBB\xBFprotect: [a, \0]\n"), 1, 14, EINVAL, "a NUL byte"},
    {"YAML error after a BOM", TEXT("\xEF\xBB\xBFprotect: [a, ../x]\n"), 1, 14, EINVAL,
     "`..` may not be used"},
    {"truncated sequence at the end", TEXT("protect: [a]\n#\xE2\x82"), 2, 2, EILSEQ,
     "not valid UTF-8"},
};

/* Rejections whose whole message is asserted. */
static const BadRow exact_rows[] = {
    /* The position is that of the first byte past the limit. */
    {"over 1 MiB", GEN(gen_too_big), 2, POLICY_MAX_SIZE - 13 + 1, EFBIG, TOO_BIG_MESSAGE},

    /* Nothing in it. */
    {"empty file", TEXT(""), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"whitespace only", TEXT(" \n\n   \n"), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"whitespace only, with a tab", TEXT(" \t \n\n"), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"comments only", TEXT("# just a comment\n  # another one\n"), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"--- alone", TEXT("---\n"), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"--- and ... with a comment", TEXT("--- # nothing\n...\n"), 1, 1, EINVAL, EMPTY_MESSAGE},
    {"--- ~", TEXT("--- ~\n"), 1, 1, EINVAL, EMPTY_MESSAGE},
};

static void check_bad(const BadRow *row, bool exact) {
  _cleanup_free_ char *generated = NULL;
  const char *text = row->text;
  size_t len = row->len;
  if (row->gen != NULL) {
    generated = row->gen(&len);
    text = generated;
  }
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  int r = policy_parse(FILE_NAME, text, len, &p, &err);
  ck_assert_msg(r == -1, "%s: policy_parse returned %d", row->name, r);
  ck_assert_msg(p == NULL, "%s: a policy was returned", row->name);
  ck_assert_msg(err.message != NULL, "%s: no message", row->name);
  ck_assert_msg(err.errnum == row->errnum, "%s: errnum %d, expected %d", row->name, err.errnum,
                row->errnum);
  _cleanup_free_ char *prefix = xasprintf(FILE_NAME ":%u:%u: ", row->line, row->column);
  ck_assert_msg(startswith(err.message, prefix), "%s: message `%s` does not start with `%s`",
                row->name, err.message, prefix);
  const char *rest = err.message + strlen(prefix);
  if (exact) {
    ck_assert_msg(streq(rest, row->message), "%s: message\n%s\nexpected\n%s", row->name, rest,
                  row->message);
  } else {
    ck_assert_msg(strstr(rest, row->message) != NULL, "%s: message `%s` does not contain `%s`",
                  row->name, err.message, row->message);
  }
}

START_TEST(test_parse_bad) {
  check_bad(&bad_rows[_i], false);
}
END_TEST

START_TEST(test_parse_bad_exact) {
  check_bad(&exact_rows[_i], true);
}
END_TEST

/* ---- valid policies ------------------------------------------------------ */

typedef struct {
  const char *name;
  const char *text;
  size_t len;
  const char *const *patterns; /* after agent.lock, NULL-terminated */
} GoodRow;

#define TXT(s) (s), sizeof(s) - 1
#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static const GoodRow good_rows[] = {
    {"block list", TXT("protect:\n  - a\n  - b/c\n"), LIST("a", "b/c")},
    {"with version", TXT("version: 1\nprotect:\n  - a\n"), LIST("a")},
    {"version after protect", TXT("protect: [a]\nversion: 1\n"), LIST("a")},
    {"version 0x1", TXT("version: 0x1\nprotect: [a]\n"), LIST("a")},
    {"version 0x01", TXT("version: 0x01\nprotect: [a]\n"), LIST("a")},
    {"version 0o1", TXT("version: 0o1\nprotect: [a]\n"), LIST("a")},
    {"version +1", TXT("version: +1\nprotect: [a]\n"), LIST("a")},
    /* The Rust ralon (serde_yaml_ng) reads 0b… as a binary integer. */
    {"version 0b1", TXT("version: 0b1\nprotect: [a]\n"), LIST("a")},
    {"version alone", TXT("version: 1\n"), NONE},
    {"./a", TXT("protect:\n  - ./a\n"), LIST("a")},
    {"a/", TXT("protect:\n  - a/\n"), LIST("a")},
    {"a//b", TXT("protect:\n  - a//b\n"), LIST("a/b")},
    {"a/./b and .//a/", TXT("protect:\n  - a/./b\n  - .//c/\n"), LIST("a/b", "c")},
    {"backslash (plain)", TXT("protect:\n  - a\\b\n"), LIST("a/b")},
    {"backslash (double-quoted escape)", TXT("protect: [\"a\\\\b\\\\c\"]\n"), LIST("a/b/c")},
    {"trailing backslash", TXT("protect: ['dir\\']\n"), LIST("dir")},
    {"dedupe", TXT("protect:\n  - a\n  - ./a\n  - a/\n  - b\n  - a\\\n  - b\n"), LIST("a", "b")},
    {"./agent.lock collapses", TXT("protect:\n  - ./agent.lock\n  - x\n  - agent.lock/\n"),
     LIST("x")},
    {"agent.lock listed", TXT("protect:\n  - agent.lock\n"), NONE},
    {"flow style", TXT("protect: [a, b]\n"), LIST("a", "b")},
    {"flow style over lines", TXT("protect: [\n  a,\n  b,\n]\n"), LIST("a", "b")},
    {"quoted items", TXT("protect:\n  - 'a b'\n  - \"c\"\n  - 'it''s'\n"),
     LIST("a b", "c", "it's")},
    {"plain scalars that YAML reads as other types",
     TXT("protect:\n  - 123\n  - true\n  - null\n  - 1.5\n  - yes\n  - 0x10\n"),
     LIST("123", "true", "null", "1.5", "yes", "0x10")},
    {"trimmed", TXT("protect:\n  - ' a\t'\n"), LIST("a")},
    {"UTF-8 BOM", TXT("\xEF\xBB\xBFprotect: [a, b]\n"), LIST("a", "b")},
    {"UTF-8 BOM before version", TXT("\xEF\xBB\xBFversion: 1\nprotect:\n  - a\n"), LIST("a")},
    {"CRLF", TXT("version: 1\r\nprotect:\r\n  - a\r\n  - b\r\n"), LIST("a", "b")},
    {"comments", TXT("# header\nprotect: # inline\n  - a # trailing\n  # - b\n  - c\n"),
     LIST("a", "c")},
    {"protect: []", TXT("protect: []\n"), NONE},
    {"document markers", TXT("---\nprotect: [a]\n...\n"), LIST("a")},
    {"%YAML directive", TXT("%YAML 1.1\n---\nprotect: [a]\n"), LIST("a")},
    {"quoted key", TXT("\"protect\": [a]\n"), LIST("a")},
    {"indented mapping", TXT("  protect:\n    - a\n"), LIST("a")},
    {"unindented list", TXT("protect:\n- a\n- b\n"), LIST("a", "b")},
    {"block scalar item", TXT("protect:\n  - |-\n    a/b\n"), LIST("a/b")},
    {"globs kept", TXT("protect:\n  - tests/golden/**\n  - '*.pem'\n  - '{a,b}/c'\n  - '[abc]x'\n  "
                       "- '**'\n  - a?c\n"),
     LIST("tests/golden/**", "*.pem", "{a,b}/c", "[abc]x", "**", "a?c")},
    {"non-ASCII", TXT("protect: [\xC3\xA9t\xC3\xA9/\xC3\xBC, \xE2\x82\xAC]\n"),
     LIST("\xC3\xA9t\xC3\xA9/\xC3\xBC", "\xE2\x82\xAC")},
    {"256 components", TXT("protect: ['a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a']\n"),
     LIST("a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a")},
    {"no trailing newline", TXT("protect: [a]"), LIST("a")},
};

START_TEST(test_parse_good) {
  const GoodRow *row = &good_rows[_i];
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  int r = policy_parse(FILE_NAME, row->text, row->len, &p, &err);
  ck_assert_msg(r == 0, "%s: rejected: %s", row->name, err.message ? err.message : "(no message)");
  ck_assert_ptr_null(err.message);
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->file, FILE_NAME);
  ck_assert_str_eq(p->root, "/proj");
  ck_assert_uint_eq(p->version, 1);
  assert_patterns(row->name, p, row->patterns);
}
END_TEST

START_TEST(test_parse_positions) {
  /* A duplicate keeps the position of its first occurrence. */
  static const char block[] = "version: 1\n"
                              "protect:\n"
                              "  - ./a\n"
                              "  -   b/\n"
                              "  - a\n"
                              "  - \"\xC3\xA9\"\n"
                              "  - 'c\\d'\n";
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_parse(FILE_NAME, block, sizeof(block) - 1, &p, &err), 0);
  assert_patterns("block", p, LIST("a", "b", "\xC3\xA9", "c/d"));
  static const struct {
    const char *declared;
    unsigned line, column;
  } want[] = {{"./a", 3, 5}, {"b/", 4, 7}, {"\xC3\xA9", 6, 5}, {"c\\d", 7, 5}};
  for (size_t i = 0; i < ELEMENTSOF(want); i++) {
    ck_assert_str_eq(p->positions[i + 1].declared, want[i].declared);
    ck_assert_uint_eq(p->positions[i + 1].line, want[i].line);
    ck_assert_uint_eq(p->positions[i + 1].column, want[i].column);
  }

  /* Columns count characters, not bytes. */
  static const char flow[] = "protect: [x, \xC3\xA9\xC3\xA9, z]\n";
  _cleanup_policy_ Policy *q = NULL;
  ck_assert_int_eq(policy_parse(FILE_NAME, flow, sizeof(flow) - 1, &q, &err), 0);
  assert_patterns("flow", q, LIST("x", "\xC3\xA9\xC3\xA9", "z"));
  ck_assert_uint_eq(q->positions[1].line, 1);
  ck_assert_uint_eq(q->positions[1].column, 11);
  ck_assert_uint_eq(q->positions[2].column, 14);
  ck_assert_uint_eq(q->positions[3].column, 18);

  /* A byte order mark takes no column. */
  static const char bom[] = "\xEF\xBB\xBFprotect: [a, b]\n";
  _cleanup_policy_ Policy *b = NULL;
  ck_assert_int_eq(policy_parse(FILE_NAME, bom, sizeof(bom) - 1, &b, &err), 0);
  assert_patterns("bom", b, LIST("a", "b"));
  ck_assert_uint_eq(b->positions[1].line, 1);
  ck_assert_uint_eq(b->positions[1].column, 11);
  ck_assert_uint_eq(b->positions[2].column, 14);

  /* CRLF counts one line per CRLF. */
  static const char crlf[] = "protect:\r\n  - a\r\n\r\n  - b\r\n";
  _cleanup_policy_ Policy *c = NULL;
  ck_assert_int_eq(policy_parse(FILE_NAME, crlf, sizeof(crlf) - 1, &c, &err), 0);
  assert_patterns("crlf", c, LIST("a", "b"));
  ck_assert_uint_eq(c->positions[1].line, 2);
  ck_assert_uint_eq(c->positions[2].line, 4);
  ck_assert_uint_eq(c->positions[2].column, 5);

  /* Without POLICY_POSITIONS: the same patterns, and no positions kept
   * (what every command but `status --json` reads). */
  _cleanup_policy_ Policy *d = NULL;
  ck_assert_int_eq(policy_parse_flags(FILE_NAME, block, sizeof(block) - 1, 0, &d, &err), 0);
  assert_patterns_only("no positions", d, LIST("a", "b", "\xC3\xA9", "c/d"));
  ck_assert_ptr_null(d->positions);
}
END_TEST

START_TEST(test_parse_root) {
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  static const char text[] = "protect: [a]\n";
  ck_assert_int_eq(policy_parse("/a/b/c/agent.lock", text, sizeof(text) - 1, &p, &err), 0);
  ck_assert_str_eq(p->file, "/a/b/c/agent.lock");
  ck_assert_str_eq(p->root, "/a/b/c");
  _cleanup_policy_ Policy *q = NULL;
  ck_assert_int_eq(policy_parse("/agent.lock", text, sizeof(text) - 1, &q, &err), 0);
  ck_assert_str_eq(q->root, "/");
}
END_TEST

/* The length argument is honoured: nothing past it is read. */
START_TEST(test_parse_length) {
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  static const char text[] = "protect: [a]\n\xFF garbage \0 more";
  ck_assert_int_eq(policy_parse(FILE_NAME, text, 13, &p, &err), 0);
  assert_patterns("prefix", p, LIST("a"));

  /* Exactly POLICY_MAX_SIZE bytes is still allowed. */
  _cleanup_free_ char *big = xmalloc(POLICY_MAX_SIZE + 1);
  memset(big, '#', POLICY_MAX_SIZE);
  memcpy(big, "protect: [a]\n", 13);
  big[POLICY_MAX_SIZE - 1] = '\n';
  big[POLICY_MAX_SIZE] = '\0';
  _cleanup_policy_ Policy *q = NULL;
  ck_assert_int_eq(policy_parse(FILE_NAME, big, POLICY_MAX_SIZE, &q, &err), 0);
  assert_patterns("1 MiB", q, LIST("a"));
}
END_TEST

/* ---- hostile input ------------------------------------------------------- */

START_TEST(test_billion_laughs) {
  static const char text[] =
      "version: 1\n"
      "protect: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
      "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
      "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
      "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
      "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_parse(FILE_NAME, text, sizeof(text) - 1, &p, &err), -1);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(err.message, FILE_NAME ":2:10: anchors (`&a`) are not allowed in agent.lock");

  /* The classic form fails even earlier, on its first key. */
  static const char classic[] = "a: &a [\"lol\",\"lol\"]\nb: &b [*a,*a]\n";
  _cleanup_error_ Error err2 = {0};
  ck_assert_int_eq(policy_parse(FILE_NAME, classic, sizeof(classic) - 1, &p, &err2), -1);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(err2.message,
                   FILE_NAME ":1:1: unknown key `a`; expected `protect` or `version`");
}
END_TEST

static void assert_deep(const char *prefix, char open, const char *expect) {
  size_t np = strlen(prefix), depth = 100000;
  _cleanup_free_ char *text = xmalloc(np + depth + 1);
  memcpy(text, prefix, np);
  memset(text + np, open, depth);
  text[np + depth] = '\0';
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_parse(FILE_NAME, text, np + depth, &p, &err), -1);
  ck_assert_ptr_null(p);
  ck_assert_msg(startswith(err.message, expect), "message `%.200s`, expected `%s…`", err.message,
                expect);
}

START_TEST(test_deep_nesting) {
  assert_deep("protect: ", '[',
              FILE_NAME ":1:11: expected a path (a string) in the `protect` list, found a list");
  assert_deep("protect:\n  - ", '[',
              FILE_NAME ":2:5: expected a path (a string) in the `protect` list, found a list");
  assert_deep("", '[',
              FILE_NAME ":1:1: expected a mapping with the key `protect:` (and optionally "
                        "`version: 1`), found a list");
  assert_deep("", '{', FILE_NAME ":1:2: expected a key (`protect` or `version`), found a mapping");
  assert_deep("protect: ", '{',
              FILE_NAME ":1:10: expected a list of paths after `protect:`, found a mapping");
}
END_TEST

/* A policy of distinct patterns just under the size limit parses, and in
 * time proportional to its size (this test case has a short timeout). */
START_TEST(test_one_mib_of_patterns) {
  _cleanup_free_ char *text = xmalloc(POLICY_MAX_SIZE + 1);
  size_t n = (size_t)sprintf(text, "protect:\n");
  size_t count = 0;
  while (n + 10 <= POLICY_MAX_SIZE) {
    n += (size_t)sprintf(text + n, "- p%06zx\n", count);
    count++;
  }
  ck_assert_uint_le(n, POLICY_MAX_SIZE);
  ck_assert_uint_gt(n, POLICY_MAX_SIZE - 10);
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_msg(policy_parse(FILE_NAME, text, n, &p, &err) == 0, "rejected: %s", err.message);
  ck_assert_uint_eq(p->n_patterns, count + 1);
  ck_assert_uint_eq(p->n_declared, count);
  _cleanup_free_ char *last = xasprintf("p%06zx", count - 1);
  ck_assert_str_eq(p->patterns[count].pattern, last);
  ck_assert_uint_eq(p->positions[count].line, count + 1);
  ck_assert_uint_eq(p->positions[count].column, 3);
}
END_TEST

/* ---- policy_normalize_pattern ------------------------------------------- */

typedef struct {
  const char *in;
  const char *out;    /* NULL: rejected */
  const char *reason; /* substring of the reason when rejected */
} NormRow;

static const NormRow norm_rows[] = {
    {"a", "a", NULL},
    {"./a", "a", NULL},
    {"a/", "a", NULL},
    {"a//b", "a/b", NULL},
    {"a\\b", "a/b", NULL},
    {"a\\\\b\\", "a/b", NULL},
    {".\\a", "a", NULL},
    {"././a/./b/.", "a/b", NULL},
    {"  a/b \t\r\n", "a/b", NULL},
    {"src/*.c", "src/*.c", NULL},
    {"a/**", "a/**", NULL},
    {"**", "**", NULL},
    {"a/{,b}/c", "a/{,b}/c", NULL},
    {"[]]", "[]]", NULL},
    {"[[:digit:]]*.txt", "[[:digit:]]*.txt", NULL},
    {"[:]x", "[:]x", NULL},
    {"[[:alpha:]]:b", NULL, "`:` is not allowed"},
    {"...", "...", NULL},
    {"a/..b/c..", "a/..b/c..", NULL},
    {".env", ".env", NULL},
    {"a b", "a b", NULL},
    {"", NULL, "empty pattern"},
    {" \t ", NULL, "empty pattern"},
    {"!a", NULL, "negation is not supported in version 1: `!a`"},
    {" !a", NULL, "negation is not supported in version 1: `!a`"},
    {"~", NULL, "`~` is not expanded: `~`"},
    {"~/x", NULL, "`~` is not expanded: `~/x`"},
    {"/a", NULL, "absolute paths are not allowed, patterns are relative to agent.lock: `/a`"},
    {"\\a", NULL, "absolute paths are not allowed, patterns are relative to agent.lock: `/a`"},
    {"//", NULL, "absolute paths are not allowed"},
    {"C:\\x", NULL, "`:` is not allowed (drive letters and URLs are not project paths): `C:/x`"},
    {"c:x", NULL, "`:` is not allowed"},
    {"http://x", NULL, "`:` is not allowed"},
    {"a:b", NULL, "`:` is not allowed"},
    {"..", NULL, "`..` may not be used to escape the project root: `..`"},
    {"a/../b", NULL, "`..` may not be used to escape the project root: `a/../b`"},
    {"a/..", NULL, "`..` may not be used to escape the project root: `a/..`"},
    {"a\\..\\b", NULL, "`..` may not be used to escape the project root: `a\\..\\b`"},
    {"./..", NULL, "`..` may not be used"},
    {".", NULL,
     "`.` does not name anything inside the project (to protect everything, write `**`)"},
    {"./", NULL, "`./` does not name anything inside the project"},
    {"./.", NULL, "`./.` does not name anything inside the project"},
    {"[ab", NULL, "unclosed `[` in `[ab`"},
    {"[!]", NULL, "unclosed `[`"},
    {"{a,b", NULL, "unclosed `{` in `{a,b`"},
    {"{a,{b}}", NULL, "nested `{` is not supported in `{a,{b}}`"},
    {"a}", NULL, "`}` without a matching `{` in `a}`"},
    {"a**", NULL, "`**` must be a whole path component (like `a/**/b`), in `a**`"},
    {"**b", NULL, "`**` must be a whole path component"},
    {"a/**b", NULL, "`**` must be a whole path component"},
    {"{,}", NULL, "does not name anything inside the project"},
};

START_TEST(test_normalize) {
  const NormRow *row = &norm_rows[_i];
  char *out = NULL, *why = NULL;
  int r = policy_normalize_pattern(row->in, strlen(row->in), &out, &why);
  if (row->out != NULL) {
    ck_assert_msg(r == 0, "`%s` rejected: %s", row->in, why ? why : "(no reason)");
    ck_assert_ptr_null(why);
    ck_assert_msg(streq(out, row->out), "`%s` → `%s`, expected `%s`", row->in, out, row->out);
  } else {
    ck_assert_msg(r == -1, "`%s` accepted as `%s`", row->in, r == 0 ? out : "?");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, row->reason) != NULL, "`%s`: reason `%s` lacks `%s`", row->in, why,
                  row->reason);
  }
  free(out);
  free(why);
}
END_TEST

START_TEST(test_normalize_length) {
  /* Only `len` bytes are read, and an embedded NUL is refused. */
  char *out = NULL, *why = NULL;
  ck_assert_int_eq(policy_normalize_pattern("abc/", 2, &out, &why), 0);
  ck_assert_str_eq(out, "ab");
  ck_assert_ptr_null(why);
  free(out);
  out = NULL;
  ck_assert_int_eq(policy_normalize_pattern("a\0b", 3, &out, &why), -1);
  ck_assert_str_eq(why, "a pattern may not contain a NUL character");
  ck_assert_ptr_null(out);
  free(why);
  why = NULL;

  /* PATH_MAX - 1 bytes is the longest pattern. */
  _cleanup_free_ char *longest = xmalloc(PATH_MAX + 1);
  memset(longest, 'x', PATH_MAX);
  longest[PATH_MAX] = '\0';
  ck_assert_int_eq(policy_normalize_pattern(longest, PATH_MAX - 1, &out, &why), 0);
  ck_assert_uint_eq(strlen(out), PATH_MAX - 1);
  free(out);
  out = NULL;
  ck_assert_int_eq(policy_normalize_pattern(longest, PATH_MAX, &out, &why), -1);
  ck_assert_str_eq(why, "a pattern may not be longer than 4095 bytes");
  free(why);
}
END_TEST

/* ---- load, find, discover ------------------------------------------------ */

START_TEST(test_load) {
  _cleanup_free_ char *dir = make_tmpdir();
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  write_text(dir, "agent.lock", "version: 1\nprotect:\n  - src\n");
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_load(file, &p, &err), 0);
  ck_assert_str_eq(p->file, file);
  ck_assert_str_eq(p->root, dir);
  assert_patterns("load", p, LIST("src"));

  /* Errors name the file as given. */
  write_text(dir, "agent.lock", "protect:\n  - ../x\n");
  Policy *q = NULL;
  _cleanup_error_ Error err2 = {0};
  ck_assert_int_eq(policy_load(file, &q, &err2), -1);
  ck_assert_ptr_null(q);
  _cleanup_free_ char *want =
      xasprintf("%s:2:5: invalid pattern: `..` may not be used to escape the project root: `../x`",
                file);
  ck_assert_str_eq(err2.message, want);

  rm_rf(dir);
}
END_TEST

/* policy_load reads the file as libyaml parses it, never whole (unless
 * it refuses it, to quote it). Whatever the text, what it reads
 * (patterns, positions, or the message of a refusal, which quotes the
 * text) is what policy_parse reads from the same bytes. */
static void assert_load_agrees(const char *dir, const char *name, const char *text, size_t len) {
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  write_file(file, text, len);
  Policy *loaded = NULL, *parsed = NULL;
  _cleanup_error_ Error e1 = {0};
  _cleanup_error_ Error e2 = {0};
  int r1 = policy_load(file, &loaded, &e1), r2 = policy_parse(file, text, len, &parsed, &e2);
  ck_assert_msg(r1 == r2, "%s: load %d, parse %d", name, r1, r2);
  if (r1 < 0) {
    ck_assert_msg(streq(e1.message, e2.message), "%s: load says `%s`, parse `%s`", name,
                  e1.message, e2.message);
    return;
  }
  ck_assert_uint_eq(loaded->n_patterns, parsed->n_patterns);
  for (size_t i = 0; i < loaded->n_patterns; i++) {
    ck_assert_str_eq(loaded->patterns[i].pattern, parsed->patterns[i].pattern);
    ck_assert_str_eq(loaded->positions[i].declared, parsed->positions[i].declared);
    ck_assert_uint_eq(loaded->positions[i].line, parsed->positions[i].line);
    ck_assert_uint_eq(loaded->positions[i].column, parsed->positions[i].column);
  }
  for (size_t i = 0; i < loaded->n_patterns; i++) {
    ck_assert_int_eq(plain_bit(loaded, i), plain_bit(parsed, i));
  }
  /* Read as libyaml parsed it, not whole a second time. */
  ck_assert_msg(!loaded->read_whole, "%s: read whole", name);
  ck_assert(!parsed->read_whole);
  policy_free(loaded);
  policy_free(parsed);
}

START_TEST(test_load_agrees_with_parse) {
  _cleanup_free_ char *dir = make_tmpdir();
  for (size_t i = 0; i < ELEMENTSOF(good_rows); i++) {
    assert_load_agrees(dir, good_rows[i].name, good_rows[i].text, good_rows[i].len);
  }
  for (size_t i = 0; i < ELEMENTSOF(bad_rows); i++) {
    if (bad_rows[i].text != NULL) {
      assert_load_agrees(dir, bad_rows[i].name, bad_rows[i].text, bad_rows[i].len);
    }
  }
  /* Refusals after patterns that took their newline as their end: the
   * friendly messages quote the text where libyaml stopped. */
  static const char *const late[] = {
      "protect:\n  - a\n  - b\n  - *c\n",
      "protect:\n  - a\n  - b\n\t- c\n",
      "protect:\n  - a\n  - b\n  - @x y\n",
      "protect:\n  - a\n  - b\n  - &x y\n",
      "protect:\n  - a\n  - b\n  - ../c\n",
      "protect:\n  - a\n  - b\n  - 'c\n",
      "protect:\n  - a\n  - b\nprotect: [c]\n",
      "protect:\n  - a\n  - a\n  - b # c\n  - ./d\n  - e\n",
  };
  for (size_t i = 0; i < ELEMENTSOF(late); i++) {
    assert_load_agrees(dir, late[i], late[i], strlen(late[i]));
  }
  rm_rf(dir);
}
END_TEST

/* Patterns written in their normal form (as most are) are copied one
 * after the other into the policy's `text`, each with its NUL; the others
 * (normalised, or written as they are not) into its arena. */
START_TEST(test_load_copies_plain_patterns) {
  _cleanup_free_ char *dir = make_tmpdir();
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  static const char text[] = "protect:\n  - src/a.c\n  - 'src/b.c'\n  - src/c.c # c\n  - ./src/d.c\n"
                             "  - src/e.c\r\n  - src/g.c";
  write_file(file, text, sizeof(text) - 1);
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_load(file, &p, &err), 0);
  assert_patterns("copied", p, LIST("src/a.c", "src/b.c", "src/c.c", "src/d.c", "src/e.c",
                                    "src/g.c"));
  ck_assert_ptr_nonnull(p->text);
  const bool inside[] = {false, true, true, true, false, true, true};
  const char *next = p->text;
  for (size_t i = 0; i < p->n_patterns; i++) {
    const char *s = p->patterns[i].pattern;
    bool in = s >= p->text && s < p->text + sizeof(text);
    ck_assert_msg(in == inside[i], "`%s`: in the text %d", s, in);
    if (in) {
      ck_assert_ptr_eq(s, next);
      next = s + strlen(s) + 1;
    }
  }
  rm_rf(dir);
}
END_TEST

/* Read as libyaml parses it, in its buffer of 16 KiB: a policy of many
 * buffers' worth reads as its whole text does, a byte order mark left out
 * (the positions count from the character after it), and what the whole
 * text's reading refuses anywhere in it, past the first buffer too, is
 * refused with the same message. */
START_TEST(test_load_streams) {
  _cleanup_free_ char *dir = make_tmpdir();
  size_t n = 5000, cap = 32 * n + 64, len = 0;
  _cleanup_free_ char *text = xmalloc(cap);
  len += (size_t)snprintf(text + len, cap - len, "\xEF\xBB\xBFversion: 1\nprotect:\n");
  for (size_t i = 0; i < n; i++) {
    len += (size_t)snprintf(text + len, cap - len,
                            i % 7 == 3 ? "  - './src/f%zu.c'\n" : "  - src/f%zu.c\n", i);
  }
  ck_assert_uint_gt(len, 4 * 16384);
  assert_load_agrees(dir, "many", text, len);
  assert_load_agrees(dir, "many, no mark", text + 3, len - 3);
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  Policy *p = NULL;
  _cleanup_error_ Error e = {0};
  ck_assert_int_eq(policy_load(file, &p, &e), 0);
  ck_assert_uint_eq(p->n_patterns, n + 1);
  ck_assert_str_eq(p->patterns[n].pattern, "src/f4999.c");
  ck_assert_uint_eq(p->positions[1].line, 3);
  ck_assert_uint_eq(p->positions[1].column, 5);
  policy_free(p);
  static const char mark[] = "\xEF\xBB\xBFprotect: [src/a.c, b]\n";
  assert_load_agrees(dir, "mark", mark, sizeof(mark) - 1);
  /* Escapes that make a pattern longer than its text (`\L`, U+2028: two
   * characters, three bytes), more than the whole file: to the arena, not
   * past the copies' buffer (which AddressSanitizer would see). */
  size_t nl = 1300, elen = 0;
  _cleanup_free_ char *escaped = xmalloc(2 * nl + 32);
  elen += (size_t)snprintf(escaped, 32, "protect: [\"");
  for (size_t i = 0; i < nl; i++) {
    escaped[elen++] = '\\';
    escaped[elen++] = i % 2 ? 'L' : 'P';
  }
  memcpy(escaped + elen, "\", a]\n", 6);
  elen += 6;
  assert_load_agrees(dir, "escapes", escaped, elen);
  /* UTF-16, which libyaml would read by its byte order mark: not here. */
  char utf16[64];
  static const char u[] = "protect: [a]\n";
  utf16[0] = '\xFF';
  utf16[1] = '\xFE';
  for (size_t i = 0; i < sizeof(u) - 1; i++) {
    utf16[2 + 2 * i] = u[i];
    utf16[3 + 2 * i] = '\0';
  }
  assert_load_agrees(dir, "UTF-16", utf16, 2 * sizeof(u));
  /* Refused far into the file: by libyaml's reader (not UTF-8, a control
   * character, NUL among them) or by ralon (a pattern, a second key). */
  static const char *const late[] = {"  - \xC3\n", "  - a\x01b\n", "  - a\x00b\n", "  - ../x\n",
                                     "  - \xED\xA0\x80\n", "version: 1\n", "  - *x\n"};
  for (size_t i = 0; i < ELEMENTSOF(late); i++) {
    size_t extra = i == 2 ? 8 : strlen(late[i]);
    memcpy(text + len, late[i], extra);
    assert_load_agrees(dir, late[i], text, len + extra);
  }
  rm_rf(dir);
}
END_TEST

/* An editor that writes agent.lock in place (the same file, truncated and
 * written again) while policy_load reads it: this program's read(2), in
 * front of the C library's, rewrites the file once `swap.after` of its
 * reads of that file have returned. */
static struct {
  int after; /* -1: nothing to do */
  ino_t ino;
  const char *file;
  const char *text;
  size_t len;
} swap = {.after = -1};

ssize_t read(int fd, void *buf, size_t count) {
  struct stat st;
  if (swap.after >= 0 && fstat(fd, &st) == 0 && st.st_ino == swap.ino && swap.after-- == 0) {
    int w = open(swap.file, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (w >= 0) {
      (void)!write(w, swap.text, swap.len);
      close(w);
    }
  }
  return syscall(SYS_read, fd, buf, count);
}

/* What policy_load reads of a file changed while it read it is one whole
 * version, the one on disk when it looked again: never the start of the
 * old one with the rest of the new, nor the start alone. */
static void assert_load_after_swap(const char *dir, const char *name, const char *old, size_t old_len,
                                   const char *text, size_t len) {
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  write_file(file, old, old_len);
  struct stat st;
  ck_assert_int_eq(stat(file, &st), 0);
  swap.after = 1;
  swap.ino = st.st_ino;
  swap.file = file;
  swap.text = text;
  swap.len = len;
  Policy *loaded = NULL, *parsed = NULL;
  _cleanup_error_ Error e1 = {0};
  _cleanup_error_ Error e2 = {0};
  int r1 = policy_load(file, &loaded, &e1);
  ck_assert_msg(swap.after < 0, "%s: the file was not changed while it was read", name);
  swap.after = -1;
  int r2 = policy_parse(file, text, len, &parsed, &e2);
  ck_assert_msg(r1 == r2, "%s: load %d, parse of the new text %d", name, r1, r2);
  if (r1 < 0) {
    ck_assert_str_eq(e1.message, e2.message);
    return;
  }
  ck_assert_msg(loaded->read_whole, "%s: the changed file was taken as streamed", name);
  ck_assert_uint_eq(loaded->n_patterns, parsed->n_patterns);
  for (size_t i = 0; i < loaded->n_patterns; i++) {
    ck_assert_str_eq(loaded->patterns[i].pattern, parsed->patterns[i].pattern);
    ck_assert_uint_eq(loaded->positions[i].line, parsed->positions[i].line);
  }
  policy_free(loaded);
  policy_free(parsed);
}

START_TEST(test_load_changed_while_read) {
  _cleanup_free_ char *dir = make_tmpdir();
  /* Three of libyaml's 16 KiB reads: comment lines, then the patterns. */
  size_t n = 3000, cap = 40000 + 24 * n, len = 0;
  _cleanup_free_ char *old = xmalloc(cap);
  len += (size_t)snprintf(old + len, cap - len, "protect:\n");
  while (len < 20000) {
    len += (size_t)snprintf(old + len, cap - len, "  # %s\n",
                            "a comment of the kind a policy may begin with, at some length");
  }
  size_t comments = len;
  for (size_t i = 0; i < n; i++) {
    len += (size_t)snprintf(old + len, cap - len, "  - src/f%04zu.c\n", i);
  }
  /* The same patterns without the comments. Read on from the old file's
   * offset, the new one's last patterns would be taken for the policy. */
  _cleanup_free_ char *shorter = xasprintf("protect:\n%s", old + comments);
  assert_load_after_swap(dir, "shorter", old, len, shorter, strlen(shorter));
  /* Emptied: what the first read found would be a policy by itself. */
  assert_load_after_swap(dir, "emptied", shorter, strlen(shorter), "", 0);
  /* Grown: read on, it would give the new one's patterns, but from a
   * file that was not what it was when its size was taken. */
  _cleanup_free_ char *longer = xasprintf("%s  - more.c\n", old);
  assert_load_after_swap(dir, "longer", old, len, longer, strlen(longer));
  rm_rf(dir);
}
END_TEST

START_TEST(test_load_size_limit) {
  _cleanup_free_ char *dir = make_tmpdir();
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  _cleanup_free_ char *text = xmalloc(POLICY_MAX_SIZE + 2);
  memset(text, '#', POLICY_MAX_SIZE + 1);
  memcpy(text, "protect: [a]\n", 13);

  /* Exactly the limit: read and parsed. */
  write_file(file, text, POLICY_MAX_SIZE);
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_load(file, &p, &err), 0);
  assert_patterns("limit", p, LIST("a"));

  /* One byte more: refused before parsing. */
  write_file(file, text, POLICY_MAX_SIZE + 1);
  Policy *q = NULL;
  _cleanup_error_ Error err2 = {0};
  ck_assert_int_eq(policy_load(file, &q, &err2), -1);
  ck_assert_ptr_null(q);
  ck_assert_int_eq(err2.errnum, EFBIG);
  /* Not read past the limit: no finer position than the start. */
  _cleanup_free_ char *want = xasprintf("%s:1:1: " TOO_BIG_MESSAGE, file);
  ck_assert_str_eq(err2.message, want);

  rm_rf(dir);
}
END_TEST

START_TEST(test_load_not_a_file) {
  _cleanup_free_ char *dir = make_tmpdir();
  Policy *p = NULL;

  _cleanup_free_ char *missing = xasprintf("%s/agent.lock", dir);
  _cleanup_error_ Error e1 = {0};
  ck_assert_int_eq(policy_load(missing, &p, &e1), -1);
  ck_assert_int_eq(e1.errnum, ENOENT);
  _cleanup_free_ char *w1 = xasprintf("cannot open %s: %s", missing, strerror(ENOENT));
  ck_assert_str_eq(e1.message, w1);

  make_dir(dir, "agent.lock");
  _cleanup_error_ Error e2 = {0};
  ck_assert_int_eq(policy_load(missing, &p, &e2), -1);
  _cleanup_free_ char *w2 = xasprintf("%s is not a regular file", missing);
  ck_assert_str_eq(e2.message, w2);

  /* A FIFO must not block the reader. */
  _cleanup_free_ char *fifo = xasprintf("%s/fifo.lock", dir);
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  _cleanup_error_ Error e3 = {0};
  ck_assert_int_eq(policy_load(fifo, &p, &e3), -1);
  _cleanup_free_ char *w3 = xasprintf("%s is not a regular file", fifo);
  ck_assert_str_eq(e3.message, w3);

  ck_assert_ptr_null(p);
  rm_rf(dir);
}
END_TEST

START_TEST(test_find_walks_up) {
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, "a");
  make_dir(dir, "a/b");
  make_dir(dir, "a/b/c");
  write_text(dir, "a/agent.lock", "protect: [x]\n");
  _cleanup_free_ char *start = xasprintf("%s/a/b/c", dir);
  _cleanup_free_ char *want = xasprintf("%s/a/agent.lock", dir);
  _cleanup_error_ Error err = {0};

  char *found = NULL;
  ck_assert_int_eq(policy_find(start, &found, &err), 0);
  ck_assert_str_eq(found, want);
  free(found);
  found = NULL;

  /* The start directory itself counts. */
  _cleanup_free_ char *a = xasprintf("%s/a", dir);
  ck_assert_int_eq(policy_find(a, &found, &err), 0);
  ck_assert_str_eq(found, want);
  free(found);
  found = NULL;

  /* A nearer one wins. */
  write_text(dir, "a/b/c/agent.lock", "protect: [y]\n");
  _cleanup_free_ char *nearer = xasprintf("%s/a/b/c/agent.lock", dir);
  ck_assert_int_eq(policy_find(start, &found, &err), 0);
  ck_assert_str_eq(found, nearer);
  free(found);
  found = NULL;

  /* Relative start directories are made absolute (and normalised). */
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  ck_assert_ptr_nonnull(cwd);
  ck_assert_int_eq(chdir(dir), 0);
  ck_assert_int_eq(policy_find("a/b/../b/", &found, &err), 0);
  ck_assert_str_eq(found, want);
  free(found);
  found = NULL;
  _cleanup_free_ char *cwd_a = xasprintf("%s/a", dir);
  ck_assert_int_eq(chdir(cwd_a), 0);
  ck_assert_int_eq(policy_find(NULL, &found, &err), 0); /* the working directory */
  ck_assert_str_eq(found, want);
  free(found);
  found = NULL;
  ck_assert_int_eq(chdir(cwd), 0);

  ck_assert_ptr_null(err.message);
  rm_rf(dir);
}
END_TEST

START_TEST(test_find_symlink) {
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, "p");
  make_dir(dir, "p/q");
  write_text(dir, "real.lock", "protect: [x]\n");
  _cleanup_free_ char *target = xasprintf("%s/real.lock", dir);
  _cleanup_free_ char *outer = xasprintf("%s/agent.lock", dir);
  write_text(dir, "agent.lock", "protect: [outer]\n");

  /* A dangling symlink is no policy, and the walk does not pass it by
   * for the one above (test_find_not_a_file). */
  _cleanup_free_ char *link = xasprintf("%s/p/agent.lock", dir);
  ck_assert_int_eq(symlink("/nonexistent/ralon-test", link), 0);
  _cleanup_free_ char *start = xasprintf("%s/p/q", dir);
  char *found = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_find(start, &found, &err), -EINVAL);
  ck_assert_ptr_null(found);
  error_clear(&err);
  /* Without it, the walk goes on upwards. */
  ck_assert_int_eq(unlink(link), 0);
  ck_assert_int_eq(policy_find(start, &found, &err), 0);
  ck_assert_str_eq(found, outer);
  free(found);
  found = NULL;

  /* A symlink to a regular file is one (like the Rust ralon's is_file()). */
  ck_assert_int_eq(symlink(target, link), 0);
  ck_assert_int_eq(policy_find(start, &found, &err), 0);
  ck_assert_str_eq(found, link);
  free(found);

  rm_rf(dir);
}
END_TEST

/* How each kind of non-regular agent.lock is made in `dir`, and what the
 * message calls it. */
static const struct {
  const char *name;
  const char *kind;
} not_a_file_rows[] = {
    {"directory", "a directory"},
    {"fifo", "a FIFO"},
    {"socket", "a socket"},
    {"device", "a device"},
    {"dangling", "a symbolic link that leads nowhere (to gone/x)"},
    {"through a file", "a symbolic link that leads nowhere (to file/x)"},
    {"loop", "a symbolic link that leads nowhere (to agent.lock, through too many links)"},
    {"link to a directory", "a symbolic link to sub, a directory"},
    {"link to a fifo", "a symbolic link to fifo, a FIFO"},
};

static void make_symlink(const char *dir, const char *rel, const char *target) {
  _cleanup_free_ char *path = xasprintf("%s/%s", dir, rel);
  ck_assert_int_eq(symlink(target, path), 0);
}

static void make_not_a_file(const char *dir, const char *name) {
  _cleanup_free_ char *lock = xasprintf("%s/agent.lock", dir);
  if (streq(name, "directory")) {
    make_dir(dir, "agent.lock");
  } else if (streq(name, "fifo")) {
    ck_assert_int_eq(mkfifo(lock, 0644), 0);
  } else if (streq(name, "socket")) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    ck_assert_int_ge(fd, 0);
    ck_assert_uint_lt(strlen(lock), sizeof(sa.sun_path));
    strcpy(sa.sun_path, lock);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
  } else if (streq(name, "device")) {
    make_symlink(dir, "agent.lock", "/dev/null"); /* mknod needs privileges */
  } else if (streq(name, "dangling")) {
    make_symlink(dir, "agent.lock", "gone/x");
  } else if (streq(name, "through a file")) {
    write_text(dir, "file", "x");
    make_symlink(dir, "agent.lock", "file/x");
  } else if (streq(name, "loop")) {
    make_symlink(dir, "agent.lock", "agent.lock");
  } else if (streq(name, "link to a directory")) {
    make_symlink(dir, "agent.lock", "sub");
  } else if (streq(name, "link to a fifo")) {
    _cleanup_free_ char *fifo = xasprintf("%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    make_symlink(dir, "agent.lock", "fifo");
  }
}

START_TEST(test_find_not_a_file) {
  /* Each kind, with a valid policy above it that the walk must not reach:
   * an error naming the file and what it is (never "none", which would
   * let `run --if-policy` start the agent unprotected), for finding,
   * discovering and policy_check_file alike. Nothing is opened, so the
   * FIFO cannot block. */
  const char *name = not_a_file_rows[_i].name;
  _cleanup_free_ char *dir = make_tmpdir();
  write_text(dir, "agent.lock", "protect: [x]\n");
  make_dir(dir, "p");
  make_dir(dir, "p/sub");
  _cleanup_free_ char *p = xasprintf("%s/p", dir);
  make_not_a_file(p, name);
  _cleanup_free_ char *lock = xasprintf("%s/p/agent.lock", dir);
  const char *kind = not_a_file_rows[_i].kind;
  if (streq(name, "device")) {
    kind = "a symbolic link to /dev/null, a device";
  }
  _cleanup_free_ char *want = xasprintf(
      "%s is %s; a policy must be a regular file. Which paths are protected here is unknown, "
      "so ralon refuses to go on (make it the policy it should be, or remove it and run "
      "`ralon init`)",
      lock, kind);

  _cleanup_error_ Error e1 = {0};
  ck_assert_int_eq(policy_check_file(lock, &e1), -EINVAL);
  ck_assert_int_eq(e1.errnum, EINVAL);
  ck_assert_str_eq(e1.message, want);

  _cleanup_free_ char *start = xasprintf("%s/p/sub", dir);
  char *found = NULL;
  _cleanup_error_ Error e2 = {0};
  ck_assert_int_eq(policy_find(start, &found, &e2), -EINVAL);
  ck_assert_ptr_null(found);
  ck_assert_str_eq(e2.message, want);

  Policy *pol = NULL;
  _cleanup_error_ Error e3 = {0};
  ck_assert_int_eq(policy_discover(start, &pol, &e3), -EINVAL);
  ck_assert_ptr_null(pol);
  ck_assert_str_eq(e3.message, want);

  rm_rf(dir);
}
END_TEST

START_TEST(test_check_file) {
  _cleanup_free_ char *dir = make_tmpdir();
  _cleanup_free_ char *lock = xasprintf("%s/agent.lock", dir);
  _cleanup_error_ Error err = {0};
  /* Nothing there: -ENOENT, err untouched. */
  ck_assert_int_eq(policy_check_file(lock, &err), -ENOENT);
  ck_assert_ptr_null(err.message);
  /* A regular file, and a link to one. */
  write_text(dir, "agent.lock", "protect: [x]\n");
  ck_assert_int_eq(policy_check_file(lock, &err), 0);
  _cleanup_free_ char *real = xasprintf("%s/real.lock", dir);
  ck_assert_int_eq(rename(lock, real), 0);
  make_symlink(dir, "agent.lock", "real.lock");
  ck_assert_int_eq(policy_check_file(lock, &err), 0);
  ck_assert_ptr_null(err.message);
  rm_rf(dir);
}
END_TEST

START_TEST(test_find_errors) {
  _cleanup_free_ char *dir = make_tmpdir();
  write_text(dir, "file", "x");
  char *found = NULL;

  _cleanup_free_ char *file = xasprintf("%s/file", dir);
  _cleanup_error_ Error e1 = {0};
  ck_assert_int_lt(policy_find(file, &found, &e1), 0);
  ck_assert_int_eq(e1.errnum, ENOTDIR);
  _cleanup_free_ char *w1 = xasprintf("cannot use %s: %s", file, strerror(ENOTDIR));
  ck_assert_str_eq(e1.message, w1);

  _cleanup_free_ char *missing = xasprintf("%s/missing", dir);
  _cleanup_error_ Error e2 = {0};
  int r = policy_find(missing, &found, &e2);
  ck_assert_int_lt(r, 0);
  ck_assert_int_ne(r, -ENOENT); /* a bad start is an error, not "no policy" */
  ck_assert_int_eq(e2.errnum, ENOENT);
  _cleanup_free_ char *w2 = xasprintf("cannot use %s: %s", missing, strerror(ENOENT));
  ck_assert_str_eq(e2.message, w2);

  ck_assert_ptr_null(found);
  rm_rf(dir);
}
END_TEST

START_TEST(test_find_none) {
  /* Needs a /tmp without agent.lock above it. */
  ck_assert_msg(access("/tmp/agent.lock", F_OK) != 0 && access("/agent.lock", F_OK) != 0,
                "an agent.lock in /tmp or / makes this test meaningless");
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, "sub");
  _cleanup_free_ char *start = xasprintf("%s/sub", dir);
  char *found = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_find(start, &found, &err), -ENOENT);
  ck_assert_ptr_null(found);
  ck_assert_int_eq(err.errnum, ENOENT);
  _cleanup_free_ char *want = xasprintf(
      "no agent.lock found in %s or any parent directory (run `ralon init`)", start);
  ck_assert_str_eq(err.message, want);

  Policy *p = NULL;
  _cleanup_error_ Error err2 = {0};
  ck_assert_int_eq(policy_discover(start, &p, &err2), -ENOENT);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(err2.message, want);
  rm_rf(dir);
}
END_TEST

START_TEST(test_discover) {
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, "proj");
  make_dir(dir, "proj/src");
  make_dir(dir, "proj/src/deep");
  write_text(dir, "proj/agent.lock", "protect:\n  - src/auth.c\n  - '*.pem'\n");
  _cleanup_free_ char *start = xasprintf("%s/proj/src/deep", dir);
  _cleanup_free_ char *root = xasprintf("%s/proj", dir);
  _cleanup_free_ char *file = xasprintf("%s/proj/agent.lock", dir);

  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_discover(start, &p, &err), 0);
  ck_assert_str_eq(p->file, file);
  ck_assert_str_eq(p->root, root);
  assert_patterns("discover", p, LIST("src/auth.c", "*.pem"));
  /* A start directory may name the root through a link: not canonical. */
  ck_assert(!p->root_canonical);

  /* From the working directory, entered through a symbolic link: the
   * root is getcwd(3)'s name, canonical, and says so. */
  _cleanup_free_ char *link = xasprintf("%s/link", dir);
  ck_assert_int_eq(symlink("proj/src", link), 0);
  _cleanup_free_ char *canon_root = realpath(root, NULL);
  ck_assert_ptr_nonnull(canon_root);
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  ck_assert_ptr_nonnull(cwd);
  ck_assert_int_eq(chdir(link), 0);
  _cleanup_policy_ Policy *c = NULL;
  int rc = policy_discover(NULL, &c, &err);
  ck_assert_int_eq(chdir(cwd), 0);
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(c->root, canon_root);
  ck_assert(c->root_canonical);
  _cleanup_free_ char *c_canon = policy_canonical_root(c);
  ck_assert_str_eq(c_canon, canon_root);

  /* Through a start directory that is a link: resolved. */
  _cleanup_free_ char *via = xasprintf("%s/proj-link/src", dir);
  _cleanup_free_ char *proj_link = xasprintf("%s/proj-link", dir);
  ck_assert_int_eq(symlink("proj", proj_link), 0);
  _cleanup_policy_ Policy *l = NULL;
  ck_assert_int_eq(policy_discover(via, &l, &err), 0);
  ck_assert_str_eq(l->root, proj_link);
  ck_assert(!l->root_canonical);
  _cleanup_free_ char *l_canon = policy_canonical_root(l);
  ck_assert_str_eq(l_canon, canon_root);

  /* The nearest policy is used even when it is invalid: no fallback. */
  write_text(dir, "proj/src/agent.lock", "protects: [x]\n");
  Policy *q = NULL;
  _cleanup_error_ Error err2 = {0};
  int r = policy_discover(start, &q, &err2);
  ck_assert_int_lt(r, 0);
  ck_assert_int_ne(r, -ENOENT);
  ck_assert_ptr_null(q);
  _cleanup_free_ char *want = xasprintf(
      "%s/proj/src/agent.lock:1:1: unknown key `protects`; expected `protect` or `version`", dir);
  ck_assert_str_eq(err2.message, want);

  rm_rf(dir);
}
END_TEST

/* ---- policy_starter_text ------------------------------------------------- */

static Policy *parse_starter(const char *dir, char **ret_text) {
  char *text = policy_starter_text(dir);
  ck_assert_ptr_nonnull(text);
  _cleanup_free_ char *file = xasprintf("%s/agent.lock", dir);
  Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_msg(policy_parse(file, text, strlen(text), &p, &err) == 0,
                "starter policy rejected: %s\n%s", err.message, text);
  *ret_text = text;
  return p;
}

START_TEST(test_starter_empty_dir) {
  _cleanup_free_ char *dir = make_tmpdir();
  _cleanup_free_ char *text = NULL;
  _cleanup_policy_ Policy *p = parse_starter(dir, &text);
  assert_patterns("empty dir", p, NONE);
  ck_assert_ptr_null(strstr(text, ".git/"));
  ck_assert_ptr_null(strstr(text, "Cargo.lock"));
  ck_assert(startswith(text, "# "));
  ck_assert_ptr_nonnull(strstr(text, "version: 1\nprotect:\n"));
  /* Suggestions stay commented out. */
  ck_assert_ptr_nonnull(strstr(text, "  # - tests/golden/**\n"));

  /* A .git file (a worktree or submodule) is not a .git directory: the
   * file itself is protected, so it keeps pointing where it does. */
  write_text(dir, ".git", "gitdir: /elsewhere\n");
  _cleanup_free_ char *text2 = NULL;
  _cleanup_policy_ Policy *q = parse_starter(dir, &text2);
  static const char *const GIT_FILE[] = {".git", NULL};
  assert_patterns(".git file", q, GIT_FILE);
  ck_assert_ptr_null(strstr(text2, ".git/hooks"));
  rm_rf(dir);
}
END_TEST

START_TEST(test_starter_git) {
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, ".git");
  _cleanup_free_ char *text = NULL;
  _cleanup_policy_ Policy *p = parse_starter(dir, &text);
  assert_patterns("git", p, LIST(".git/hooks", ".git/config"));
  rm_rf(dir);
}
END_TEST

START_TEST(test_starter_lock_files) {
  _cleanup_free_ char *dir = make_tmpdir();
  make_dir(dir, ".git");
  make_dir(dir, ".github");
  make_dir(dir, ".github/workflows");
  write_text(dir, "Cargo.lock", "");
  write_text(dir, "package-lock.json", "{}");
  write_text(dir, "go.sum", "");
  write_text(dir, "Cargo.toml", ""); /* not a lock file */
  _cleanup_free_ char *text = NULL;
  _cleanup_policy_ Policy *p = parse_starter(dir, &text);
  assert_patterns("lock files", p,
                  LIST(".git/hooks", ".git/config", ".github/workflows", "Cargo.lock",
                       "package-lock.json", "go.sum"));
  ck_assert_ptr_null(strstr(text, "Cargo.toml"));
  ck_assert_ptr_null(strstr(text, "yarn.lock"));
  rm_rf(dir);
}
END_TEST

START_TEST(test_starter_no_git) {
  _cleanup_free_ char *dir = make_tmpdir();
  write_text(dir, "yarn.lock", "");
  write_text(dir, "Gemfile.lock", "");
  _cleanup_free_ char *text = NULL;
  _cleanup_policy_ Policy *p = parse_starter(dir, &text);
  assert_patterns("no git", p, LIST("yarn.lock", "Gemfile.lock"));
  ck_assert_ptr_null(strstr(text, ".git/"));
  rm_rf(dir);
}
END_TEST

/* ---- what the matcher is told of the patterns ------------------------------ */

/* The matcher's answers for pattern set `p`, with the policy's word on
 * which patterns are plain literal paths and without it, agree for paths
 * around each pattern. */
/* With matcher flags `mflags` (case folded too: there the plain marks
 * must not put a pattern where only exact bytes match). */
static void assert_hint_changes_nothing_flags(const char *row, const Policy *p, unsigned mflags) {
  _cleanup_matcher_ Matcher *hinted = NULL, *read = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_matcher(p, mflags, &hinted, &err), 0);
  ck_assert_int_eq(matcher_new_strided((const char *const *)&p->patterns[0].pattern,
                                       sizeof(PolicyPattern), p->n_patterns, NULL, mflags, &read, &err),
                   0);
  for (size_t i = 0; i < p->n_patterns; i++) {
    const char *pat = p->patterns[i].pattern;
    ck_assert_msg(matcher_is_literal(hinted, i) == matcher_is_literal(read, i), "%s: `%s` literal",
                  row, pat);
    _cleanup_free_ char *below = xasprintf("%s/x", pat), *above = xasprintf("x/%s", pat),
                        *longer = xasprintf("%sx", pat), *parent = path_dirname(pat),
                        *slash = xasprintf("%s/", pat), *parent_slash = xasprintf("%s/", parent),
                        *dot = xasprintf("./%s", pat), *twice = xasprintf("%s//x", pat),
                        *shorter = xstrndup(pat, strlen(pat) - 1), *upper = xstrdup(pat);
    for (char *c = upper; *c != '\0'; c++) {
      *c = (char)toupper((unsigned char)*c);
    }
    const char *probes[] = {pat,     below, above, longer, parent,       slash,  parent_slash, dot,
                            twice,   shorter, upper, "",    "/",         "a",    "agent.lock",
                            "zz/y"};
    for (size_t k = 0; k < ELEMENTSOF(probes); k++) {
      ck_assert_msg(matcher_match(hinted, probes[k]) == matcher_match(read, probes[k]),
                    "%s: `%s` against `%s`", row, probes[k], pat);
      ck_assert_msg(matcher_may_match_below(hinted, probes[k]) ==
                        matcher_may_match_below(read, probes[k]),
                    "%s: below `%s` against `%s`", row, probes[k], pat);
      /* The first lookups compare with each pattern (no index yet): a
       * fresh pair of matchers for each. */
      _cleanup_matcher_ Matcher *h1 = NULL, *r1 = NULL;
      ck_assert_int_eq(policy_matcher(p, mflags, &h1, &err), 0);
      ck_assert_int_eq(matcher_new_strided((const char *const *)&p->patterns[0].pattern,
                                           sizeof(PolicyPattern), p->n_patterns, NULL, mflags, &r1,
                                           &err),
                       0);
      ck_assert_msg(matcher_match(h1, probes[k]) == matcher_match(r1, probes[k]),
                    "%s: first lookup of `%s` against `%s`", row, probes[k], pat);
      ck_assert_msg(matcher_may_match_below(h1, probes[k]) == matcher_may_match_below(r1, probes[k]),
                    "%s: first lookup below `%s` against `%s`", row, probes[k], pat);
    }
    if (plain_bit(p, i)) {
      /* Only a path as written: nothing the matcher would read as a
       * wildcard, a brace, an escape, or change. */
      ck_assert_msg(strpbrk(pat, "*?[]{}\\:") == NULL, "%s: `%s` marked plain", row, pat);
      _cleanup_free_ char *norm = NULL, *why = NULL;
      ck_assert_int_eq(policy_normalize_pattern(pat, strlen(pat), &norm, &why), 0);
      ck_assert_str_eq(norm, pat);
      ck_assert_int_eq(matcher_check_pattern(pat, &why), 0);
    }
  }
}

static void assert_hint_changes_nothing(const char *row, const Policy *p) {
  assert_hint_changes_nothing_flags(row, p, 0);
  assert_hint_changes_nothing_flags(row, p, MATCHER_CASEFOLD);
}

/* Whole words of plain patterns (the matcher records 64 at once), some
 * literal patterns not in their normal form among them, then braces (after
 * which patterns are alternatives no more one for one) and another word of
 * plain ones. */
START_TEST(test_plain_hint_many) {
  size_t cap = 64 * 1024, len = 0;
  _cleanup_free_ char *text = xmalloc(cap);
  len += (size_t)snprintf(text + len, cap - len, "protect:\n");
  for (size_t i = 1; i < 300; i++) {
    const char *before = i == 131 ? "./" : "", *mid = i == 140 ? "/" : "";
    const char *after = i == 150 ? "/" : "";
    if (i == 190) {
      len += (size_t)snprintf(text + len, cap - len, "  - d/{f%zu,g}.c\n", i);
    } else {
      len += (size_t)snprintf(text + len, cap - len, "  - %sd/%sf%zu.c%s\n", before, mid, i, after);
    }
  }
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_parse_flags(FILE_NAME, text, len, POLICY_DUPLICATES, &p, &err), 0);
  ck_assert_uint_eq(p->n_patterns, 300);
  ck_assert_uint_eq(p->plain[0], UINT64_MAX);
  ck_assert_uint_eq(p->plain[1], UINT64_MAX);
  ck_assert(!plain_bit(p, 131));
  ck_assert(plain_bit(p, 132));
  assert_hint_changes_nothing("many", p);
}
END_TEST

START_TEST(test_plain_hint_good_rows) {
  const GoodRow *row = &good_rows[_i];
  for (unsigned flags = 0; flags <= POLICY_DUPLICATES; flags += POLICY_DUPLICATES) {
    _cleanup_policy_ Policy *p = NULL;
    _cleanup_error_ Error err = {0};
    ck_assert_int_eq(policy_parse_flags(FILE_NAME, row->text, row->len, flags, &p, &err), 0);
    ck_assert_ptr_nonnull(p->plain);
    ck_assert_msg(plain_bit(p, 0), "%s: agent.lock is a plain path", row->name);
    assert_hint_changes_nothing(row->name, p);
  }
}
END_TEST

/* Which patterns are marked, after duplicates are removed (their marks
 * move with them) and when they are kept. */
START_TEST(test_plain_marks_and_duplicates) {
  static const char text[] = "protect: [a, a, 'x*', ./b, c/d, '{e,f}', 'x*', g]\n";
  const struct {
    unsigned flags;
    const char *const *patterns;
    const bool *plain;
    size_t declared;
  } rows[] = {
      {0, LIST("a", "x*", "b", "c/d", "{e,f}", "g"),
       (const bool[]){true, true, false, false, true, false, true}, 6},
      {POLICY_DUPLICATES, LIST("a", "a", "x*", "b", "c/d", "{e,f}", "x*", "g"),
       (const bool[]){true, true, true, false, false, true, false, false, true}, 8},
  };
  for (size_t r = 0; r < ELEMENTSOF(rows); r++) {
    _cleanup_policy_ Policy *p = NULL;
    _cleanup_error_ Error err = {0};
    ck_assert_int_eq(policy_parse_flags(FILE_NAME, text, sizeof(text) - 1, rows[r].flags, &p, &err),
                     0);
    assert_patterns_only("marks", p, rows[r].patterns);
    ck_assert_uint_eq(p->n_declared, rows[r].declared);
    for (size_t i = 0; i < p->n_patterns; i++) {
      ck_assert_msg(plain_bit(p, i) == rows[r].plain[i], "flags %u: `%s` plain %d", rows[r].flags,
                    p->patterns[i].pattern, plain_bit(p, i));
    }
    /* The glob after the duplicate that moved onto its mark is a glob. */
    _cleanup_matcher_ Matcher *m = NULL;
    ck_assert_int_eq(policy_matcher(p, 0, &m, &err), 0);
    long glob = rows[r].flags ? 3 : 2;
    ck_assert_int_eq(matcher_match(m, "xy"), glob);
    ck_assert_int_eq(matcher_match(m, "a/b"), 1);
    ck_assert_int_eq(matcher_match(m, "e"), glob + 3);
    ck_assert_int_eq(matcher_match(m, "b"), glob + 1);
    assert_hint_changes_nothing("marks", p);
  }
}
END_TEST

/* The matcher takes the word of the caller: a pattern marked plain is
 * compared as the path it is written as, never read as a glob. */
START_TEST(test_plain_hint_is_taken) {
  static const char *const pats[] = {"agent.lock", "x*", "y"};
  const uint64_t marks = 1u | 2u | 4u; /* "x*" marked too, wrongly */
  _cleanup_matcher_ Matcher *m = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(matcher_new_strided(pats, sizeof(char *), 3, &marks, 0, &m, &err), 0);
  ck_assert(matcher_is_literal(m, 1));
  ck_assert_int_eq(matcher_match(m, "xy"), -1);
  ck_assert_int_eq(matcher_match(m, "x*"), 1);
  ck_assert_int_eq(matcher_match(m, "x*/z"), 1);
  ck_assert_int_eq(matcher_match(m, "y"), 2);
  /* Unmarked, the same pattern is the glob it is. */
  const uint64_t honest = 1u | 4u;
  _cleanup_matcher_ Matcher *g = NULL;
  ck_assert_int_eq(matcher_new_strided(pats, sizeof(char *), 3, &honest, 0, &g, &err), 0);
  ck_assert(!matcher_is_literal(g, 1));
  ck_assert_int_eq(matcher_match(g, "xy"), 1);
}
END_TEST

/* Five thousand patterns: the arrays are mapped in ahead several times
 * as they fill (prefault_ahead), the marks' words many; patterns, marks
 * and positions stay in step, globs among plain paths. */
START_TEST(test_plain_marks_many) {
  size_t n = 5000;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  /* One item in three a glob, which the matcher reads itself. */
  fputs("protect:\n", f);
  for (size_t i = 0; i < n; i++) {
    if (i % 3 == 2) {
      fprintf(f, "  - 'd-%zu/*.c'\n", i);
    } else {
      fprintf(f, "  - d-%zu/f-%zu.c\n", i, i);
    }
  }
  fclose(f);
  _cleanup_policy_ Policy *p = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(policy_parse_flags(FILE_NAME, text, len, POLICY_POSITIONS, &p, &err), 0);
  ck_assert_uint_eq(p->n_patterns, n + 1);
  for (size_t i = 1; i <= n; i++) {
    ck_assert_int_eq(plain_bit(p, i), (i - 1) % 3 != 2);
    ck_assert_uint_eq(p->positions[i].line, i + 1);
  }
  _cleanup_matcher_ Matcher *m = NULL;
  ck_assert_int_eq(policy_matcher(p, 0, &m, &err), 0);
  ck_assert_int_eq(matcher_match(m, "d-4999/f-4999.c"), 5000);
  ck_assert_int_eq(matcher_match(m, "d-4997/x.c"), 4998);
  ck_assert_int_eq(matcher_match(m, "d-4997/x.h"), -1);
  free(text);
}
END_TEST

/* ---- the suite ----------------------------------------------------------- */

static Suite *policy_suite(void) {
  Suite *s = suite_create("policy");

  TCase *tc = tcase_create("parse");
  tcase_add_loop_test(tc, test_parse_bad, 0, (int)ELEMENTSOF(bad_rows));
  tcase_add_loop_test(tc, test_parse_bad_exact, 0, (int)ELEMENTSOF(exact_rows));
  tcase_add_loop_test(tc, test_parse_good, 0, (int)ELEMENTSOF(good_rows));
  tcase_add_test(tc, test_parse_positions);
  tcase_add_test(tc, test_parse_root);
  tcase_add_test(tc, test_parse_length);
  tcase_add_test(tc, test_plain_hint_many);
  tcase_add_loop_test(tc, test_plain_hint_good_rows, 0, (int)ELEMENTSOF(good_rows));
  tcase_add_test(tc, test_plain_marks_and_duplicates);
  tcase_add_test(tc, test_plain_marks_many);
  tcase_add_test(tc, test_plain_hint_is_taken);
  suite_add_tcase(s, tc);

  tc = tcase_create("hostile");
  /* Each of these is a few milliseconds when the parser is linear. */
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, test_billion_laughs);
  tcase_add_test(tc, test_deep_nesting);
  tcase_add_test(tc, test_one_mib_of_patterns);
  suite_add_tcase(s, tc);

  tc = tcase_create("normalize");
  tcase_add_loop_test(tc, test_normalize, 0, (int)ELEMENTSOF(norm_rows));
  tcase_add_test(tc, test_normalize_length);
  suite_add_tcase(s, tc);

  tc = tcase_create("files");
  tcase_add_test(tc, test_load);
  tcase_add_test(tc, test_load_agrees_with_parse);
  tcase_add_test(tc, test_load_copies_plain_patterns);
  tcase_add_test(tc, test_load_streams);
  tcase_add_test(tc, test_load_changed_while_read);
  tcase_add_test(tc, test_load_size_limit);
  tcase_add_test(tc, test_load_not_a_file);
  tcase_add_test(tc, test_find_walks_up);
  tcase_add_test(tc, test_find_symlink);
  tcase_add_loop_test(tc, test_find_not_a_file, 0, (int)ELEMENTSOF(not_a_file_rows));
  tcase_add_test(tc, test_check_file);
  tcase_add_test(tc, test_find_errors);
  tcase_add_test(tc, test_find_none);
  tcase_add_test(tc, test_discover);
  suite_add_tcase(s, tc);

  tc = tcase_create("starter");
  tcase_add_test(tc, test_starter_empty_dir);
  tcase_add_test(tc, test_starter_git);
  tcase_add_test(tc, test_starter_lock_files);
  tcase_add_test(tc, test_starter_no_git);
  suite_add_tcase(s, tc);

  return s;
}

int main(void) {
  if (mkdtemp(base_dir) == NULL) {
    perror(base_dir);
    return EXIT_FAILURE;
  }
  SRunner *sr = srunner_create(policy_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  (void)nftw(base_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
