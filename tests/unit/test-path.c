/* SPDX-License-Identifier: Apache-2.0 */
/* path.h (lexical helpers and path_resolve on a real tree) and the two file
 * helpers of util.h: write_file_atomic and read_fd_limited, and its
 * directory and descriptor helpers, DirReader and close_fds. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "util.h"
#include "tmptree.h"

/* One scratch directory per test case, made and removed by the runner
 * process (an unchecked fixture), so a failing test leaves nothing behind. */




/* A fresh, empty directory for one test, below the scratch directory. */




static char *slurp(const char *dir, const char *rel) {
  _cleanup_free_ char *p = path_join(dir, rel);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  ck_assert_msg(fd >= 0, "open %s: %s", p, strerror(errno));
  char *buf = NULL;
  size_t len = 0;
  ck_assert_int_eq(read_fd_limited(fd, 1 << 20, &buf, &len), 0);
  close(fd);
  ck_assert_uint_eq(strlen(buf), len);
  return buf;
}

/* The names in `dir`, sorted and joined with '|' ("" when empty). */
static char *list_dir(const char *dir) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort);
  ck_assert_int_ge(n, 0);
  char *out = xstrdup("");
  for (int i = 0; i < n; i++) {
    if (!streq(names[i]->d_name, ".") && !streq(names[i]->d_name, "..")) {
      char *next = xasprintf("%s%s%s", out, out[0] ? "|" : "", names[i]->d_name);
      free(out);
      out = next;
    }
    free(names[i]);
  }
  free(names);
  return out;
}

/* ---- path_join ---------------------------------------------------------- */

static const struct {
  const char *a, *b, *want;
} join_table[] = {
    {"a", "b", "a/b"},
    {"a/", "b", "a/b"},
    {"/a/b", "c/d", "/a/b/c/d"},
    {"/", "b", "/b"},
    {"a", "/b", "/b"},
    {"/x/y", "/b/c", "/b/c"},
    {"", "b", "b"},
    {"", "/b", "/b"},
    {"a b", "c\nd", "a b/c\nd"},
};

/* ---- path_unescape_mountinfo --------------------------------------------- */

static const struct {
  const char *in, *want;
} unescape_table[] = {
    {"/plain", "/plain"},
    {"/my\\040view", "/my view"},
    {"/a\\011b\\012c", "/a\tb\nc"},
    {"/back\\134slash", "/back\\slash"},
    {"\\040\\040", "  "},
    /* Not an escape: kept as written. */
    {"/x\\4", "/x\\4"},
    {"/x\\400", "/x\\400"},
    {"/x\\08", "/x\\08"},
    {"/trailing\\", "/trailing\\"},
    {"", ""},
};

START_TEST(test_path_unescape_mountinfo) {
  _cleanup_free_ char *got = path_unescape_mountinfo(unescape_table[_i].in);
  ck_assert_str_eq(got, unescape_table[_i].want);
  _cleanup_free_ char *copy = xstrdup(unescape_table[_i].in);
  ck_assert_ptr_eq(path_unescape_mountinfo_in_place(copy), copy);
  ck_assert_str_eq(copy, unescape_table[_i].want);
}
END_TEST

/* How names and messages are shown: quoted like git where anything in
 * them could drive a terminal or forge a line, untouched otherwise. */
static const struct {
  const char *in, *path, *text;
} display_table[] = {
    {"src/main.c", "src/main.c", "src/main.c"},
    {"a b/c d", "a b/c d", "a b/c d"},
    {"", "", ""},
    /* Printable UTF-8 is shown as it is: ä, 日本, and an emoji. */
    {"d\xC3\xA4t/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x94\x92", "d\xC3\xA4t/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x94\x92",
     "d\xC3\xA4t/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x94\x92"},
    {"new\nline", "\"new\\nline\"", "new\\nline"},
    {"tab\there\r", "\"tab\\there\\r\"", "tab\\there\\r"},
    {"\a\b\v\f", "\"\\a\\b\\v\\f\"", "\\a\\b\\v\\f"},
    {"esc\x1b[31mred", "\"esc\\033[31mred\"", "esc\\033[31mred"},
    {"del\x7f", "\"del\\177\"", "del\\177"},
    {"\x01x\x1f", "\"\\001x\\037\"", "\\001x\\037"},
    /* C1 controls (U+0080..U+009F; U+009B is a CSI of its own), but not
     * U+00A0 just after them. */
    {"c1\xC2\x9B" "2J\xC2\xA0", "\"c1\\302\\2332J\xC2\xA0\"", "c1\\302\\2332J\xC2\xA0"},
    {"c1\xC2\x80", "\"c1\\302\\200\"", "c1\\302\\200"},
    /* Bytes that are not UTF-8: a stray byte, a cut sequence, an overlong
     * form, a surrogate, beyond U+10FFFF. */
    {"bad\xFF" "byte", "\"bad\\377byte\"", "bad\\377byte"},
    {"cut\xE6\x97", "\"cut\\346\\227\"", "cut\\346\\227"},
    {"over\xC0\xAF", "\"over\\300\\257\"", "over\\300\\257"},
    {"sur\xED\xA0\x80", "\"sur\\355\\240\\200\"", "sur\\355\\240\\200"},
    {"big\xF4\x90\x80\x80", "\"big\\364\\220\\200\\200\"", "big\\364\\220\\200\\200"},
    /* The quote and the backslash make a name quoted (so that a quoted name
     * cannot be mistaken for a plain one), but a message keeps them. */
    {"back\\slash", "\"back\\\\slash\"", "back\\slash"},
    {"\"quoted\"", "\"\\\"quoted\\\"\"", "\"quoted\""},
};

/* Columns on a terminal: what wrapping the dry run's lists counts. */
START_TEST(test_text_columns) {
  ck_assert_uint_eq(text_columns(""), 0);
  ck_assert_uint_eq(text_columns("abc def"), 7);
  ck_assert_uint_eq(text_columns("a\xff" "b"), 3); /* a byte that is not UTF-8: 1 */
  ck_assert_ptr_nonnull(utf8_locale());
  /* The widths are C.UTF-8's in any locale: ralon keeps the C locale
   * where LANG is C.UTF-8, and there wcwidth(3) knows nothing past ASCII. */
  const char *locales[] = {"C", "C.UTF-8"};
  for (size_t i = 0; i < ELEMENTSOF(locales); i++) {
    ck_assert_ptr_nonnull(setlocale(LC_CTYPE, locales[i]));
    ck_assert_uint_eq(text_columns("K\xC3\xA4se"), 4);                   /* Käse */
    ck_assert_uint_eq(text_columns("\xE4\xB8\xAD\xE6\x96\x87"), 4);       /* 中文: wide */
    ck_assert_uint_eq(text_columns("e\xCC\x81"), 1);                    /* e + U+0301 */
    ck_assert_uint_eq(text_columns("\xF0\x9F\x94\x92 x"), 4);            /* 🔒 x */
  }
  setlocale(LC_CTYPE, "C");
  /* The thread's locale is the caller's again afterwards. */
  ck_assert_uint_eq(text_columns("\xE4\xB8\xAD"), 2);
  ck_assert_uint_eq(MB_CUR_MAX, 1);
}
END_TEST

START_TEST(test_display) {
  _cleanup_free_ char *path = path_display(display_table[_i].in);
  ck_assert_str_eq(path, display_table[_i].path);
  _cleanup_free_ char *text = text_display(display_table[_i].in);
  ck_assert_str_eq(text, display_table[_i].text);
  /* What is shown is valid UTF-8 without a control character. */
  size_t len = strlen(path);
  ck_assert_uint_eq(utf8_invalid_offset(path, len), len);
  for (size_t i = 0; i < len; i++) {
    ck_assert((unsigned char)path[i] >= 0x20 && path[i] != 0x7f);
  }
}
END_TEST

/* A message for the terminal keeps its lines and tabs; in UTF-8 it
 * escapes what text_display does, and in a character set of single bytes
 * (this test runs in the C locale, where MB_CUR_MAX is 1) only the C0 and
 * C1 controls and DEL, leaving that set's letters (0xE4 is ä in ISO
 * 8859-1) alone. */
START_TEST(test_text_display_terminal) {
  static const struct {
    const char *in, *utf8, *bytes;
  } table[] = {
      {"line one\n\tline two", "line one\n\tline two", "line one\n\tline two"},
      {"esc\x1b[2J\r", "esc\\033[2J\\r", "esc\\033[2J\\r"},
      {"d\xC3\xA4t", "d\xC3\xA4t", "d\xC3\xA4t"},
      {"d\xE4t", "d\\344t", "d\xE4t"},
      {"c1\xC2\x9B" "2J", "c1\\302\\2332J", "c1\xC2\\2332J"},
      {"csi\x9B" "2J", "csi\\2332J", "csi\\2332J"},
      {"del\x7f back\\slash \"q\"", "del\\177 back\\slash \"q\"", "del\\177 back\\slash \"q\""},
  };
  ck_assert_uint_eq(MB_CUR_MAX, 1);
  /* On one line: the newline and the tab escaped too, the set's letters
   * kept. */
  _cleanup_free_ char *one = text_display_terminal("a\nb\tc \xE4", false, false);
  ck_assert_str_eq(one, "a\\nb\\tc \xE4");
  for (size_t i = 0; i < ELEMENTSOF(table); i++) {
    _cleanup_free_ char *u = text_display_terminal(table[i].in, true, true);
    ck_assert_str_eq(u, table[i].utf8);
    _cleanup_free_ char *b = text_display_terminal(table[i].in, false, true);
    ck_assert_str_eq(b, table[i].bytes);
  }
}
END_TEST

START_TEST(test_utf8_char_length) {
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"a", 1), 1);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xC3\xA4", 2), 2);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xC3\xA4", 1), 0);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xE6\x97\xA5", 3), 3);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xF0\x9F\x94\x92", 4), 4);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xF0\x9F\x94", 3), 0);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\x80", 1), 0);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xC1\xBF", 2), 0);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xE0\x9F\xBF", 3), 0);
  ck_assert_uint_eq(utf8_char_length((const unsigned char *)"\xF4\x8F\xBF\xBF", 4), 4);
  ck_assert_uint_eq(utf8_invalid_offset("ok\xC3\xA4 \xFF", 7), 5);
  ck_assert_uint_eq(utf8_invalid_offset("ok", 2), 2);
}
END_TEST

START_TEST(test_path_join) {
  _cleanup_free_ char *got = path_join(join_table[_i].a, join_table[_i].b);
  ck_assert_msg(streq(got, join_table[_i].want), "path_join(\"%s\", \"%s\") = \"%s\", want \"%s\"",
                join_table[_i].a, join_table[_i].b, got, join_table[_i].want);
}
END_TEST

/* ---- path_normalize ----------------------------------------------------- */

static const struct {
  const char *in, *want;
} normalize_table[] = {
    {"a/./b", "a/b"},
    {"a//b", "a/b"},
    {"a///b/", "a/b"},
    {"/..", "/"},
    {"/../a", "/a"},
    {"../a", "../a"},
    {"../..", "../.."},
    {"../a/..", ".."},
    {"a/../..", ".."},
    {"a/../../b", "../b"},
    {"a/b/../../../c", "../c"},
    {"a/..", "."},
    {"", "."},
    {".", "."},
    {"./", "."},
    {"./a", "a"},
    {"a/b/", "a/b"},
    {"a/b//", "a/b"},
    {"/", "/"},
    {"//", "/"},
    {"///a//", "/a"},
    {"/a/b/../../..", "/"},
    {"/a/b/../../../c", "/c"},
    {"/a/./b/../c/", "/a/c"},
    {"a/b/../../c", "c"},
    {"...", "..."},
    {".a/..b/b..", ".a/..b/b.."},
    {"a/.../..", "a"},
    {"x y/ z ", "x y/ z "},
};

START_TEST(test_path_normalize) {
  _cleanup_free_ char *got = path_normalize(normalize_table[_i].in);
  ck_assert_msg(streq(got, normalize_table[_i].want),
                "path_normalize(\"%s\") = \"%s\", want \"%s\"", normalize_table[_i].in, got,
                normalize_table[_i].want);
}
END_TEST

/* ---- path_absolute ------------------------------------------------------ */

static const struct {
  const char *base, *p, *want;
} absolute_table[] = {
    {"/base", "x", "/base/x"},
    {"/base", "x/./y/", "/base/x/y"},
    {"/base", "x/../y", "/base/y"},
    {"/base/", "x", "/base/x"},
    {"/base", "..", "/"},
    {"/base/sub", "../../..", "/"},
    {"/base", ".", "/base"},
    {"/base", "", "/base"},
    {"/base", "/abs/./p/", "/abs/p"},
    {"/", "a", "/a"},
    {"/b//c/", "d", "/b/c/d"},
    {NULL, "/abs//p/..", "/abs"},
};

START_TEST(test_path_absolute) {
  _cleanup_free_ char *got = path_absolute(absolute_table[_i].base, absolute_table[_i].p);
  ck_assert_ptr_nonnull(got);
  ck_assert_msg(streq(got, absolute_table[_i].want),
                "path_absolute(\"%s\", \"%s\") = \"%s\", want \"%s\"",
                absolute_table[_i].base ? absolute_table[_i].base : "(null)", absolute_table[_i].p,
                got, absolute_table[_i].want);
}
END_TEST

/* Restores the working directory even when the test is not forked. */
static void restore_cwd(int *fd) {
  if (*fd >= 0) {
    (void)!fchdir(*fd);
    close(*fd);
  }
}

START_TEST(test_path_absolute_cwd) {
  __attribute__((cleanup(restore_cwd))) int saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(saved, 0);
  _cleanup_free_ char *dir = make_tmpdir();
  ck_assert_int_eq(chdir(dir), 0);

  _cleanup_free_ char *a = path_absolute(NULL, "x/./y/");
  _cleanup_free_ char *want_a = xasprintf("%s/x/y", dir);
  ck_assert_str_eq(a, want_a);

  _cleanup_free_ char *b = path_absolute(NULL, ".");
  ck_assert_str_eq(b, dir);

  _cleanup_free_ char *c = path_absolute(NULL, "..");
  ck_assert_str_eq(c, scratch);

  /* A relative base is taken relative to the working directory. */
  _cleanup_free_ char *d = path_absolute("rel/", "../p");
  _cleanup_free_ char *want_d = xasprintf("%s/p", dir);
  ck_assert_str_eq(d, want_d);

  _cleanup_free_ char *e = path_absolute(NULL, "");
  ck_assert_str_eq(e, dir);
}
END_TEST

START_TEST(test_path_absolute_deleted_cwd) {
  __attribute__((cleanup(restore_cwd))) int saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(saved, 0);
  _cleanup_free_ char *dir = make_tmpdir();
  ck_assert_int_eq(chdir(dir), 0);
  ck_assert_int_eq(rmdir(dir), 0);

  errno = 0;
  char *got = path_absolute(NULL, "x");
  ck_assert_ptr_null(got);
  ck_assert_int_eq(errno, ENOENT);

  /* An absolute path needs no working directory. */
  _cleanup_free_ char *abs = path_absolute(NULL, "/a/../b");
  ck_assert_str_eq(abs, "/b");
}
END_TEST

/* ---- path_relative ------------------------------------------------------ */

static const struct {
  const char *root, *path, *want; /* want NULL: outside */
} relative_table[] = {
    {"/", "/a/b", "a/b"},
    {"/", "/", ""},
    {"/a", "/a", ""},
    {"/a", "/a/b", "b"},
    {"/a", "/a/b/c", "b/c"},
    {"/a", "/ab", NULL},
    {"/a", "/ab/c", NULL},
    {"/a", "/b", NULL},
    {"/a", "/", NULL},
    {"/a/b", "/a", NULL},
    {"/a/b", "/a/bc", NULL},
    {"/a/b", "/a/b/c/d", "c/d"},
    {"/a", "/b/a", NULL},
};

START_TEST(test_path_relative) {
  const char *root = relative_table[_i].root, *path = relative_table[_i].path;
  const char *want = relative_table[_i].want;
  const char *got = path_relative(root, path);
  if (want == NULL) {
    ck_assert_msg(got == NULL, "path_relative(\"%s\", \"%s\") = \"%s\", want NULL", root, path,
                  got);
    return;
  }
  ck_assert_msg(got != NULL, "path_relative(\"%s\", \"%s\") = NULL, want \"%s\"", root, path, want);
  ck_assert_str_eq(got, want);
  /* A pointer into `path`, not a copy. */
  ck_assert_ptr_eq(got, path + strlen(path) - strlen(want));
}
END_TEST

/* ---- path_basename / path_dirname --------------------------------------- */

static const struct {
  const char *in, *base, *dir;
} name_table[] = {
    {"/a/b", "b", "/a"},
    {"/a", "a", "/"},
    {"a", "a", "."},
    {"a/b", "b", "a"},
    {"a/b/c", "c", "a/b"},
    {"/", "/", "/"},
    {".", ".", "."},
    {"/x y/a\nb", "a\nb", "/x y"},
};

START_TEST(test_path_basename_dirname) {
  const char *in = name_table[_i].in;
  const char *base = path_basename(in);
  ck_assert_str_eq(base, name_table[_i].base);
  ck_assert_ptr_eq(base, in + strlen(in) - strlen(name_table[_i].base));
  _cleanup_free_ char *dir = path_dirname(in);
  ck_assert_str_eq(dir, name_table[_i].dir);
}
END_TEST

/* ---- path_resolve ------------------------------------------------------- */

/* T/real/sub/, T/real/file, T/link -> real/sub, T/abslink -> T/real,
 * T/loop1 <-> T/loop2, T/self -> self, T/dangling -> real/newfile,
 * T/real/sub/up -> ../newthing, T/chain -> link/newdir/f. */
static char *resolve_tree(void) {
  char *t = make_tmpdir();
  make_dir(t, "real");
  make_dir(t, "real/sub");
  make_file(t, "real/file", "x");
  make_file(t, "real/sub/inner", "y");
  make_symlink(t, "link", "real/sub");
  _cleanup_free_ char *real = path_join(t, "real");
  make_symlink(t, "abslink", real);
  make_symlink(t, "loop1", "loop2");
  make_symlink(t, "loop2", "loop1");
  make_symlink(t, "self", "self");
  make_symlink(t, "dangling", "real/newfile");
  make_symlink(t, "real/sub/up", "../newthing");
  make_symlink(t, "chain", "link/newdir/f");
  return t;
}

static void assert_resolves(const char *t, const char *in_rel, const char *want_rel) {
  _cleanup_free_ char *in = xasprintf("%s/%s", t, in_rel);
  _cleanup_free_ char *want = want_rel[0] ? xasprintf("%s/%s", t, want_rel) : xstrdup(t);
  errno = 0;
  _cleanup_free_ char *got = path_resolve(in);
  ck_assert_msg(got != NULL, "path_resolve(\"%s\") = NULL (%s), want \"%s\"", in, strerror(errno),
                want);
  ck_assert_msg(streq(got, want), "path_resolve(\"%s\") = \"%s\", want \"%s\"", in, got, want);
}

static void assert_resolve_fails(const char *t, const char *in_rel, int want_errno) {
  _cleanup_free_ char *in = xasprintf("%s/%s", t, in_rel);
  errno = 0;
  char *got = path_resolve(in);
  ck_assert_msg(got == NULL, "path_resolve(\"%s\") = \"%s\", want NULL", in, got);
  ck_assert_msg(errno == want_errno, "path_resolve(\"%s\"): errno %s, want %s", in, strerror(errno),
                strerror(want_errno));
}

START_TEST(test_path_resolve_existing) {
  _cleanup_free_ char *t = resolve_tree();
  assert_resolves(t, "real/sub/inner", "real/sub/inner");
  assert_resolves(t, "link", "real/sub");
  assert_resolves(t, "link/inner", "real/sub/inner");
  assert_resolves(t, "link/", "real/sub");
  assert_resolves(t, "abslink/sub", "real/sub");
  assert_resolves(t, "./real//sub/./inner", "real/sub/inner");
  /* ".." after a symbolic link is the target's parent, as the kernel sees
   * it, not the link's. */
  assert_resolves(t, "link/../file", "real/file");
  assert_resolves(t, "link/..", "real");
  _cleanup_free_ char *root = path_resolve("/");
  ck_assert_str_eq(root, "/");
}
END_TEST

START_TEST(test_path_resolve_missing_tail) {
  _cleanup_free_ char *t = resolve_tree();
  assert_resolves(t, "new", "new");
  assert_resolves(t, "link/new", "real/sub/new");
  assert_resolves(t, "link/new/file", "real/sub/new/file");
  assert_resolves(t, "link/new/file/", "real/sub/new/file");
  assert_resolves(t, "abslink/sub/a/b/c", "real/sub/a/b/c");
  /* The existing part keeps kernel semantics for "..". */
  assert_resolves(t, "link/../x", "real/x");
  assert_resolves(t, "link/../x/y", "real/x/y");
  assert_resolves(t, "link/../sub/new", "real/sub/new");
  /* Like `realpath -m`: below a file is as missing as anywhere else. */
  assert_resolves(t, "real/file/x", "real/file/x");
  assert_resolves(t, "real/file/x/y", "real/file/x/y");
  assert_resolves(t, "real/file/../x", "real/x");
}
END_TEST

START_TEST(test_path_resolve_relative) {
  __attribute__((cleanup(restore_cwd))) int saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(saved, 0);
  _cleanup_free_ char *t = resolve_tree();
  ck_assert_int_eq(chdir(t), 0);

  _cleanup_free_ char *a = path_resolve("link/new");
  _cleanup_free_ char *want_a = xasprintf("%s/real/sub/new", t);
  ck_assert_str_eq(a, want_a);

  _cleanup_free_ char *b = path_resolve("new");
  _cleanup_free_ char *want_b = xasprintf("%s/new", t);
  ck_assert_str_eq(b, want_b);

  _cleanup_free_ char *c = path_resolve("link");
  _cleanup_free_ char *want_c = xasprintf("%s/real/sub", t);
  ck_assert_str_eq(c, want_c);
}
END_TEST

START_TEST(test_path_resolve_errors) {
  _cleanup_free_ char *t = resolve_tree();
  assert_resolve_fails(t, "loop1", ELOOP);
  assert_resolve_fails(t, "loop1/new", ELOOP);
  assert_resolve_fails(t, "loop1/new/deeper", ELOOP);
  assert_resolve_fails(t, "self", ELOOP);
  assert_resolve_fails(t, "link/../../loop2/x", ELOOP);
}
END_TEST

/* A dangling symbolic link is still a symbolic link: creating a file
 * through it creates the target, so that is the resolved name. */
START_TEST(test_path_resolve_dangling_symlink) {
  _cleanup_free_ char *t = resolve_tree();
  assert_resolves(t, "dangling", "real/newfile");
  assert_resolves(t, "dangling/x", "real/newfile/x");
  /* A relative target is relative to the link's own directory. */
  assert_resolves(t, "real/sub/up", "real/newthing");
  assert_resolves(t, "link/up", "real/newthing");
  /* The target's own path is resolved in turn. */
  assert_resolves(t, "chain", "real/sub/newdir/f");
}
END_TEST

/* A missing component cancelled by ".." must not leave the links after it
 * unresolved: `missing/../link/x` names the same file as `link/x`. */
START_TEST(test_path_resolve_missing_then_dotdot) {
  _cleanup_free_ char *t = resolve_tree();
  assert_resolves(t, "missing/../link/x", "real/sub/x");
}
END_TEST

/* ---- write_file_atomic -------------------------------------------------- */

START_TEST(test_write_atomic_creates) {
  _cleanup_free_ char *t = make_tmpdir();
  static const struct {
    mode_t umask, want;
  } modes[] = {{022, 0644}, {027, 0640}, {077, 0600}, {0, 0666}};
  for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
    _cleanup_free_ char *name = xasprintf("f%zu", i);
    mode_t old = umask(modes[i].umask);
    int r = write_file_atomic(t, name, "hello\n", 6, false);
    umask(old);
    ck_assert_int_eq(r, 0);
    _cleanup_free_ char *got = slurp(t, name);
    ck_assert_str_eq(got, "hello\n");
    _cleanup_free_ char *p = path_join(t, name);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_msg((st.st_mode & 07777) == modes[i].want, "umask %03o: mode %04o, want %04o",
                  (unsigned)modes[i].umask, (unsigned)(st.st_mode & 07777),
                  (unsigned)modes[i].want);
  }
  _cleanup_free_ char *names = list_dir(t);
  ck_assert_str_eq(names, "f0|f1|f2|f3");
}
END_TEST

START_TEST(test_write_atomic_binary_and_empty) {
  _cleanup_free_ char *t = make_tmpdir();
  static const char data[] = {'a', '\0', 'b', '\n', '\xff'};
  ck_assert_int_eq(write_file_atomic(t, "bin", data, sizeof(data), false), 0);
  ck_assert_int_eq(write_file_atomic(t, "empty", "", 0, false), 0);

  _cleanup_free_ char *p = path_join(t, "bin");
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  ck_assert_int_eq(read_fd_limited(fd, 100, &buf, &len), 0);
  close(fd);
  ck_assert_uint_eq(len, sizeof(data));
  ck_assert_mem_eq(buf, data, sizeof(data));

  _cleanup_free_ char *e = path_join(t, "empty");
  struct stat st;
  ck_assert_int_eq(stat(e, &st), 0);
  ck_assert_int_eq(st.st_size, 0);
  _cleanup_free_ char *names = list_dir(t);
  ck_assert_str_eq(names, "bin|empty");
}
END_TEST

START_TEST(test_write_atomic_no_replace) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "agent.lock", "old content\n");
  _cleanup_free_ char *p = path_join(t, "agent.lock");
  struct stat before, after;
  ck_assert_int_eq(lstat(p, &before), 0);

  ck_assert_int_eq(write_file_atomic(t, "agent.lock", "new\n", 4, false), -EEXIST);

  _cleanup_free_ char *got = slurp(t, "agent.lock");
  ck_assert_str_eq(got, "old content\n");
  ck_assert_int_eq(lstat(p, &after), 0);
  ck_assert_uint_eq(after.st_ino, before.st_ino);
  ck_assert_uint_eq(after.st_mode, before.st_mode);
  _cleanup_free_ char *names = list_dir(t);
  ck_assert_str_eq(names, "agent.lock");

  /* A dangling symbolic link is an existing name, too: it is neither
   * followed nor replaced. */
  make_symlink(t, "dangling", "nowhere");
  ck_assert_int_eq(write_file_atomic(t, "dangling", "x", 1, false), -EEXIST);
  _cleanup_free_ char *d = path_join(t, "dangling");
  ck_assert_int_eq(lstat(d, &after), 0);
  ck_assert(S_ISLNK(after.st_mode));
  _cleanup_free_ char *names2 = list_dir(t);
  ck_assert_str_eq(names2, "agent.lock|dangling");
}
END_TEST

START_TEST(test_write_atomic_replace) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "f", "old content that is longer\n");
  _cleanup_free_ char *p = path_join(t, "f");
  struct stat before, after;
  ck_assert_int_eq(lstat(p, &before), 0);

  mode_t old = umask(022);
  int r = write_file_atomic(t, "f", "new\n", 4, true);
  umask(old);
  ck_assert_int_eq(r, 0);

  _cleanup_free_ char *got = slurp(t, "f");
  ck_assert_str_eq(got, "new\n");
  ck_assert_int_eq(lstat(p, &after), 0);
  /* Renamed into place: a new inode, not the old one rewritten. */
  ck_assert_uint_ne(after.st_ino, before.st_ino);
  ck_assert_uint_eq(after.st_mode & 07777, 0644);
  _cleanup_free_ char *names = list_dir(t);
  ck_assert_str_eq(names, "f");

  /* Replacing a name that does not exist creates it. */
  ck_assert_int_eq(write_file_atomic(t, "g", "g\n", 2, true), 0);
  _cleanup_free_ char *g = slurp(t, "g");
  ck_assert_str_eq(g, "g\n");
  _cleanup_free_ char *names2 = list_dir(t);
  ck_assert_str_eq(names2, "f|g");
}
END_TEST

START_TEST(test_write_atomic_errors) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *missing = path_join(t, "missing");
  ck_assert_int_eq(write_file_atomic(missing, "f", "x", 1, false), -ENOENT);
  ck_assert_int_eq(write_file_atomic(missing, "f", "x", 1, true), -ENOENT);

  /* Replacing a directory fails and leaves no temporary file behind. */
  make_dir(t, "d");
  int r = write_file_atomic(t, "d", "x", 1, true);
  ck_assert_int_eq(r, -EISDIR);
  _cleanup_free_ char *names = list_dir(t);
  ck_assert_str_eq(names, "d");
}
END_TEST

/* ---- read_fd_limited ---------------------------------------------------- */

static int open_file_with(const char *t, const char *name, const char *data, size_t len) {
  ck_assert_int_eq(write_file_atomic(t, name, data, len, true), 0);
  _cleanup_free_ char *p = path_join(t, name);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  return fd;
}

START_TEST(test_read_limited_regular) {
  _cleanup_free_ char *t = make_tmpdir();
  char *buf = NULL;
  size_t len = 99;

  int fd = open_file_with(t, "a", "abc", 3);
  ck_assert_int_eq(read_fd_limited(fd, 3, &buf, &len), 0);
  close(fd);
  ck_assert_uint_eq(len, 3);
  ck_assert_str_eq(buf, "abc");
  ck_assert_int_eq(buf[3], '\0');
  free(buf);
  buf = NULL;

  fd = open_file_with(t, "b", "abcd", 4);
  ck_assert_int_eq(read_fd_limited(fd, 3, &buf, &len), -EFBIG);
  close(fd);

  fd = open_file_with(t, "empty", "", 0);
  len = 99;
  ck_assert_int_eq(read_fd_limited(fd, 3, &buf, &len), 0);
  close(fd);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(len, 0);
  ck_assert_str_eq(buf, "");
  free(buf);
  buf = NULL;

  /* Larger than the first buffer. */
  size_t big_len = 3 * 4096 + 17;
  _cleanup_free_ char *big = xmalloc(big_len);
  for (size_t i = 0; i < big_len; i++) {
    big[i] = (char)('a' + i % 26);
  }
  fd = open_file_with(t, "big", big, big_len);
  ck_assert_int_eq(read_fd_limited(fd, big_len, &buf, &len), 0);
  ck_assert_uint_eq(len, big_len);
  ck_assert_mem_eq(buf, big, big_len);
  ck_assert_int_eq(buf[big_len], '\0');
  free(buf);
  buf = NULL;
  ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
  ck_assert_int_eq(read_fd_limited(fd, big_len - 1, &buf, &len), -EFBIG);
  close(fd);
}
END_TEST

/* A pipe has no size to look at first: the limit is enforced while
 * reading. */
static int pipe_with(size_t n) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  char *data = xmalloc(n ? n : 1);
  memset(data, 'p', n);
  ck_assert_int_eq(write(p[1], data, n), (ssize_t)n);
  free(data);
  close(p[1]);
  return p[0];
}

/* close_fds closes exactly the listed descriptors, in any order, one run
 * of consecutive numbers at a time: a descriptor between two runs that is
 * not listed (someone else's) stays open. */
START_TEST(test_close_fds_runs) {
  enum { BASE = 700, N = 9 };
  int src = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(src, 0);
  for (int i = 0; i < N; i++) {
    ck_assert_msg(fcntl(BASE + i, F_GETFD) < 0 && errno == EBADF, "fd %d already in use", BASE + i);
    ck_assert_int_eq(dup2(src, BASE + i), BASE + i);
  }
  /* Runs 700-702 and 704-705, a single 707, unsorted; 703, 706 and 708
   * are not ours. */
  int mine[] = {BASE + 5, BASE + 0, BASE + 7, BASE + 2, BASE + 4, BASE + 1};
  close_fds(mine, ELEMENTSOF(mine));
  static const bool closed[N] = {true, true, true, false, true, true, false, true, false};
  for (int i = 0; i < N; i++) {
    errno = 0;
    bool open_now = fcntl(BASE + i, F_GETFD) >= 0;
    ck_assert_msg(open_now != closed[i], "fd %d: %s, want %s", BASE + i,
                  open_now ? "open" : strerror(errno), closed[i] ? "closed" : "open");
  }
  for (int i = 0; i < N; i++) {
    if (!closed[i]) {
      close(BASE + i);
    }
  }
  int none[1] = {-1};
  close_fds(none, 0); /* nothing listed, nothing closed */
  ck_assert_int_ge(fcntl(src, F_GETFD), 0);
  close(src);
}
END_TEST

/* A DirReader (over read_dir) gives every entry once, "." and ".."
 * included, across reads with a buffer too small for all of them, and
 * ends with errno 0; on a file it ends at once with ENOTDIR. */
START_TEST(test_read_dir_lists_all) {
  _cleanup_free_ char *dir = make_tmpdir();
  enum { FILES = 300 };
  for (int i = 0; i < FILES; i++) {
    char name[32];
    snprintf(name, sizeof(name), "entry-%03d-with-a-longer-name", i);
    make_file(dir, name, "");
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  bool seen[FILES] = {false};
  int dots = 0;
  char buf[1024];
  DirReader dr = {.fd = fd, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  errno = EBADMSG;
  ssize_t last = SSIZE_MAX;
  int reads = 0;
  while ((de = dir_reader_next(&dr)) != NULL) {
    if (dr.off <= last) {
      reads++; /* the buffer was refilled: the offset started again */
    }
    last = dr.off;
    int k;
    if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
      dots++;
    } else {
      ck_assert_msg(sscanf(de->d_name, "entry-%d-", &k) == 1 && k >= 0 && k < FILES,
                    "unexpected entry %s", de->d_name);
      ck_assert_msg(!seen[k], "%s listed twice", de->d_name);
      seen[k] = true;
    }
  }
  ck_assert_int_eq(errno, 0);
  ck_assert_int_gt(reads, 1);
  ck_assert_int_eq(dots, 2);
  for (int i = 0; i < FILES; i++) {
    ck_assert_msg(seen[i], "entry %d not listed", i);
  }
  close(fd);
  _cleanup_free_ char *file = path_join(dir, "entry-000-with-a-longer-name");
  fd = open(file, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  DirReader fr = {.fd = fd, .buf = buf, .size = sizeof(buf)};
  errno = 0;
  ck_assert_ptr_null(dir_reader_next(&fr));
  ck_assert_int_eq(errno, ENOTDIR);
  close(fd);
}
END_TEST

START_TEST(test_read_limited_pipe) {
  static const struct {
    size_t n, max;
    int want;
  } cases[] = {
      {10, 10, 0},        {11, 10, -EFBIG},     {0, 0, 0},          {1, 0, -EFBIG},
      {4096, 4096, 0},    {4096, 4095, -EFBIG}, {4097, 4096, -EFBIG}, {10000, 10000, 0},
      {10000, 9999, -EFBIG}, {10000, 50000, 0},
  };
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    int fd = pipe_with(cases[i].n);
    char *buf = NULL;
    size_t len = 12345;
    int r = read_fd_limited(fd, cases[i].max, &buf, &len);
    close(fd);
    ck_assert_msg(r == cases[i].want, "%zu bytes, max %zu: %d, want %d", cases[i].n, cases[i].max,
                  r, cases[i].want);
    if (r == 0) {
      ck_assert_uint_eq(len, cases[i].n);
      ck_assert_uint_eq(strlen(buf), cases[i].n);
      for (size_t k = 0; k < len; k++) {
        ck_assert_int_eq(buf[k], 'p');
      }
      free(buf);
    }
  }
}
END_TEST

START_TEST(test_find_program) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "a");
  make_dir(t, "b");
  make_file(t, "a/tool", "#!/bin/sh\n");     /* not executable */
  make_file(t, "b/tool", "#!/bin/sh\n");
  make_dir(t, "a/subdir");
  _cleanup_free_ char *a = path_join(t, "a"), *b = path_join(t, "b");
  _cleanup_free_ char *bt = path_join(t, "b/tool");
  ck_assert_int_eq(chmod(bt, 0755), 0);
  /* The first executable regular file along the path. */
  _cleanup_free_ char *env = xasprintf("%s:%s", a, b);
  _cleanup_free_ char *got = path_find_program(env, "tool");
  ck_assert_str_eq(got, bt);
  /* A directory of that name is not a program. */
  ck_assert_ptr_null(path_find_program(env, "subdir"));
  ck_assert_ptr_null(path_find_program(a, "tool"));
  /* An empty entry is the working directory. */
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  ck_assert_int_eq(chdir(b), 0);
  _cleanup_free_ char *here = path_find_program("/nonexistent::/also-not", "tool");
  ck_assert_int_eq(chdir(cwd), 0);
  ck_assert_str_eq(here, "./tool");
  /* With a slash: that file, no search. */
  _cleanup_free_ char *direct = path_find_program("/nonexistent", bt);
  ck_assert_str_eq(direct, bt);
  _cleanup_free_ char *at = path_join(t, "a/tool");
  ck_assert_ptr_null(path_find_program(env, at));
  /* No PATH: the system's default, which has sh. */
  _cleanup_free_ char *sh = path_find_program(NULL, "sh");
  ck_assert_ptr_nonnull(sh);
  /* Why none was found, as execvp(3) fails: EACCES where a file (or a
   * directory) of that name is there but cannot be executed, ENOENT where
   * there is none at all; found, 0. (Root executes a file with any
   * execute bit, and a/tool has none.) */
  int e = -1;
  ck_assert_ptr_null(path_search_program(a, "tool", &e));
  ck_assert_int_eq(e, EACCES);
  ck_assert_ptr_null(path_search_program(env, "subdir", &e));
  ck_assert_int_eq(e, EACCES);
  ck_assert_ptr_null(path_search_program(env, "no-such-tool", &e));
  ck_assert_int_eq(e, ENOENT);
  _cleanup_free_ char *found = path_search_program(env, "tool", &e);
  ck_assert_str_eq(found, bt);
  ck_assert_int_eq(e, 0);
  ck_assert_ptr_null(path_search_program(NULL, at, &e));
  ck_assert_int_eq(e, EACCES);
  _cleanup_free_ char *missing = path_join(t, "a/none");
  ck_assert_ptr_null(path_search_program(NULL, missing, &e));
  ck_assert_int_eq(e, ENOENT);
}
END_TEST

static Suite *path_suite(void) {
  Suite *s = suite_create("path");

  TCase *tc = tcase_create("lexical");
  tcase_add_loop_test(tc, test_path_join, 0, (int)ELEMENTSOF(join_table));
  tcase_add_loop_test(tc, test_path_unescape_mountinfo, 0, (int)ELEMENTSOF(unescape_table));
  tcase_add_loop_test(tc, test_display, 0, (int)ELEMENTSOF(display_table));
  tcase_add_test(tc, test_text_columns);
  tcase_add_test(tc, test_utf8_char_length);
  tcase_add_test(tc, test_text_display_terminal);
  tcase_add_loop_test(tc, test_path_normalize, 0, (int)ELEMENTSOF(normalize_table));
  tcase_add_loop_test(tc, test_path_absolute, 0, (int)ELEMENTSOF(absolute_table));
  tcase_add_loop_test(tc, test_path_relative, 0, (int)ELEMENTSOF(relative_table));
  tcase_add_loop_test(tc, test_path_basename_dirname, 0, (int)ELEMENTSOF(name_table));
  suite_add_tcase(s, tc);

  tc = tcase_create("filesystem");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_path_absolute_cwd);
  tcase_add_test(tc, test_path_absolute_deleted_cwd);
  tcase_add_test(tc, test_path_resolve_existing);
  tcase_add_test(tc, test_path_resolve_missing_tail);
  tcase_add_test(tc, test_path_resolve_relative);
  tcase_add_test(tc, test_path_resolve_errors);
  tcase_add_test(tc, test_path_resolve_dangling_symlink);
  tcase_add_test(tc, test_path_resolve_missing_then_dotdot);
  suite_add_tcase(s, tc);

  tc = tcase_create("files");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_write_atomic_creates);
  tcase_add_test(tc, test_write_atomic_binary_and_empty);
  tcase_add_test(tc, test_write_atomic_no_replace);
  tcase_add_test(tc, test_write_atomic_replace);
  tcase_add_test(tc, test_write_atomic_errors);
  tcase_add_test(tc, test_read_limited_regular);
  tcase_add_test(tc, test_read_limited_pipe);
  tcase_add_test(tc, test_close_fds_runs);
  tcase_add_test(tc, test_read_dir_lists_all);
  tcase_add_test(tc, test_find_program);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(path_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
