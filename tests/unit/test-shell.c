/* SPDX-License-Identifier: Apache-2.0 */
/* The shell reader on its own (hook/shell.h, hook_shell_targets): the
 * table of writer commands, and what commands are read to write, from a
 * request's directory that need not exist (nothing on disk is consulted
 * for these names). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "hook/hook.h"
#include "hook/shell.h"
#include "util.h"

static bool has(char **v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++) {
    if (streq(v[i], s)) {
      return true;
    }
  }
  return false;
}

/* Reads `command` from /nonexistent-ralon-test: every name it writes,
 * paths and entries together, in `req`. */
static void read_command(const char *command, HookRequest *req) {
  memset(req, 0, sizeof(*req));
  req->cwd = xstrdup("/nonexistent-ralon-test");
  hook_shell_targets(command, req);
}

/* What the lexer gave the parser to run, for test_lexer. */
static char substituted[256];

static const char *record_substitution(void *ctx, const char *p) {
  (void)ctx;
  const char *e = p[0] == '`' ? strchr(p + 1, '`') : shell_subst_end(p + 2);
  size_t len = (size_t)(e - p) + 1;
  ck_assert_uint_lt(strlen(substituted) + len, sizeof(substituted));
  strncat(substituted, p, len);
  return e + 1;
}

static size_t charged;

static bool count_charge(void *ctx, size_t units) {
  (void)ctx;
  charged += units;
  return true;
}

START_TEST(test_lexer) {
  static const struct {
    const char *text;
    const char *words[4]; /* as shell_literal_text gives them */
    const char *substituted;
  } cases[] = {
      {"a 'b c' \"d e\"", {"a", "b c", "d e"}, ""},
      {"x\\ y z", {"x y", "z"}, ""},
      {"$'a\\tb' $'\\x41'", {"a\tb", "A"}, ""},
      {"~/f NAME=~/g '~'/h", {"/home/t/f", "NAME=/home/t/g", "~/h"}, ""},
      {"'$HOME' \"$HOME\" $HOME", {"$HOME", "$HOME", "$HOME"}, ""},
      {"echo $(rm a) `rm b`", {"echo", "$(rm a)", "`rm b`"}, "$(rm a)`rm b`"},
      {"\"in $(rm c) quotes\"", {"in $(rm c) quotes"}, "$(rm c)"},
      {"$((1 << 2))", {"$((1 << 2))"}, ""},
      {"~+/a ~- '~+'/b", {"$PWD/a", "$OLDPWD", "~+/b"}, ""},
  };
  shell_lex_init();
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const char *text = cases[i].text;
    ShellLexer lx = {.scratch = xmalloc(strlen(text) + 2 * strlen("/home/t") + 8 + 1),
                     .home = "/home/t",
                     .substitution = record_substitution,
                     .charge = count_charge};
    Words w = {0};
    substituted[0] = '\0';
    charged = 0;
    for (const char *p = text; *p != '\0';) {
      if (!shell_read_word(&lx, &p, &w)) {
        p++;
      }
    }
    size_t n = 0;
    while (n < ELEMENTSOF(cases[i].words) && cases[i].words[n] != NULL) {
      n++;
    }
    ck_assert_msg(w.n == n, "%s: %zu words", text, w.n);
    for (size_t k = 0; k < n; k++) {
      _cleanup_free_ char *t = shell_literal_text(w.v[k]);
      ck_assert_str_eq(t, cases[i].words[k]);
    }
    ck_assert_str_eq(substituted, cases[i].substituted);
    ck_assert_uint_ge(charged, strlen(text) - n); /* every byte read is paid for */
    shell_words_clear(&w);
    free(lx.scratch);
  }
}
END_TEST

/* The parser's events, written out as one line each, for test_parser. */
static char events_seen[1024];

static void seen(const char *a) {
  ck_assert_uint_lt(strlen(events_seen) + strlen(a), sizeof(events_seen));
  strcat(events_seen, a);
}

static void ev_command(void *ctx, char **argv, size_t argc, bool after_or) {
  (void)ctx;
  seen(after_or ? "||" : "");
  for (size_t i = 0; i < argc; i++) {
    _cleanup_free_ char *t = shell_literal_text(argv[i]);
    seen(i ? " " : "");
    seen(t);
  }
  seen(";");
}

static void ev_redirect(void *ctx, const char *word) {
  (void)ctx;
  seen(">");
  seen(word);
  seen(";");
}

static char *ev_save_dir(void *ctx) {
  (void)ctx;
  seen("(;");
  return xstrdup("dir");
}

static void ev_restore_dir(void *ctx, char *saved) {
  (void)ctx;
  seen(")");
  seen(saved);
  seen(";");
  free(saved);
}

static void ev_heredoc_body(void *ctx, const char *body, size_t len, const char *dir) {
  (void)ctx;
  _cleanup_free_ char *b = xstrndup(body, len);
  seen("<<");
  seen(b);
  seen("@");
  seen(dir);
  seen(";");
}

static bool ev_stopped(void *ctx) {
  (void)ctx;
  return false;
}

static const char *no_substitution(void *ctx, const char *p) {
  (void)ctx;
  const char *end;
  free(shell_substitution_text(p, &end));
  return end;
}

START_TEST(test_parser) {
  static const struct {
    const char *text;
    const char *events;
  } cases[] = {
      {"a b; c | d && e", "a b;c;d;e;"},
      {"false || cd x; y", "false;||cd x;y;"},
      {"echo x > f 2>&1 >> g &> h 3>&-", ">f;>g;echo x;>h;"},
      {"cat < in <<< word; 2> err", "cat;>err;"},
      {"(cd d; rm x) && y", "(;cd d;rm x;)dir;y;"},
      {"(( 1 << 2 )) && z", "z;"},
      {"cat <<EOF > out\nbody\nEOF\nnext", "(;>out;cat;<<body\n@dir;next;"},
      {"# comment > no\nls", "ls;"},
  };
  shell_lex_init();
  static const ShellParseEvents ev = {ev_command, ev_redirect,     ev_save_dir,
                                      ev_restore_dir, ev_heredoc_body, ev_stopped};
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    ShellLexer lx = {.substitution = no_substitution, .charge = count_charge};
    events_seen[0] = '\0';
    shell_parse(&lx, &ev, NULL, cases[i].text);
    ck_assert_msg(streq(events_seen, cases[i].events), "%s: %s", cases[i].text, events_seen);
  }
}
END_TEST

START_TEST(test_writer_table) {
  static const struct {
    const char *name;
    ShellWriteKind kind;
    unsigned flags;
  } known[] = {
      {"rm", SHELL_WRITES_OPERANDS, SHELL_WRITER_TREE | SHELL_WRITER_ENTRIES},
      {"unlink", SHELL_WRITES_OPERANDS, SHELL_WRITER_ENTRIES},
      {"mv", SHELL_WRITES_COPY, SHELL_WRITER_MOVES},
      {"ln", SHELL_WRITES_COPY, SHELL_WRITER_LINKS},
      {"link", SHELL_WRITES_COPY, SHELL_WRITER_NO_TARGET_DIR},
      {"chmod", SHELL_WRITES_OPERANDS, SHELL_WRITER_SKIP_FIRST | SHELL_WRITER_RECURSIVE_R},
      {"sed", SHELL_WRITES_IN_PLACE, 0},
      {"dd", SHELL_WRITES_DD, 0},
      {"tee", SHELL_WRITES_OPERANDS, 0},
  };
  for (size_t i = 0; i < ELEMENTSOF(known); i++) {
    const ShellWriter *w = shell_writer_find(known[i].name);
    ck_assert_msg(w != NULL, "%s", known[i].name);
    ck_assert_str_eq(w->name, known[i].name);
    ck_assert_int_eq(w->kind, known[i].kind);
    ck_assert_msg((w->flags & known[i].flags) == known[i].flags, "%s flags %#x", known[i].name,
                  w->flags);
    ck_assert_ptr_nonnull(w->value_opts);
    ck_assert_ptr_nonnull(w->value_longs);
  }
  ck_assert_uint_eq(shell_writer_find("unlink")->flags & SHELL_WRITER_TREE, 0);
  for (const char *const *c = (const char *const[]){"cat", "echo", "ls", "grep", "rmx", "", NULL};
       *c != NULL; c++) {
    ck_assert_msg(shell_writer_find(*c) == NULL, "%s", *c);
  }
}
END_TEST

START_TEST(test_targets) {
  static const struct {
    const char *command;
    const char *path; /* among paths, trees, somewhere, entries or entry trees */
  } cases[] = {
      {"echo x > out.txt", "out.txt"},
      {"cd sub && rm -f a.txt", "sub/a.txt"},
      {"sed -i s/a/b/ f.c", "f.c"},
      {"sed s/a/b/ f.c > g.c", "g.c"},
      {"dd if=/dev/zero of=disk.img", "disk.img"},
      {"cp a.c b.c", "b.c"},
      {"mv a.c b.c", "a.c"},
      {"chmod -R 644 dir", "dir"},
      {"bash -c 'touch \"made here\"'", "made here"},
      {"x=$'a\\tb'; echo > $'q\\x41'", "qA"},
      /* A heredoc's envelope lands where the command runs. */
      {"cd tests && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: golden/a.txt\n"
       "@@\n-a\n+b\n*** End Patch\nEOF\n",
       "tests/golden/a.txt"},
      /* git writes the working tree's files it is given. */
      {"git rm tests/a.txt", "tests/a.txt"},
      {"git rm -rf --quiet -- old", "old"},
      {"git -C sub rm a.txt", "sub/a.txt"},
      {"git --no-pager -c core.x=y rm a.txt", "a.txt"},
      {"git mv a.txt b.txt", "a.txt"},
      {"git mv a.txt b.txt", "b.txt"},
      {"git checkout -- a.txt", "a.txt"},
      {"git checkout HEAD~1 -- a.txt", "a.txt"},
      {"git checkout main a.txt", "a.txt"},
      {"git restore a.txt", "a.txt"},
      {"git restore --source=HEAD~2 --worktree --staged a.txt", "a.txt"},
      {"git clean -fd build", "build"},
      {"git reset --hard", "."},
      /* What the command sets itself, and where it is. */
      {"f=tests/a.txt; echo x > \"$f\"", "tests/a.txt"},
      {"f=a.txt; cd sub && rm \"$f\"", "sub/a.txt"},
      {"echo x > \"$PWD/a.txt\"", "/nonexistent-ralon-test/a.txt"},
      {"cd sub && echo x > ${PWD}/a.txt", "/nonexistent-ralon-test/sub/a.txt"},
      {"cd sub && echo x > ~+/a.txt", "/nonexistent-ralon-test/sub/a.txt"},
      {"cd \"$X\" && echo x >> \"$PWD/a.txt\"", "./a.txt"},
      /* Brace expansion: each word, and the word as written. */
      {"echo x > secret.{txt,y}", "secret.txt"},
      {"echo x > secret.{txt,y}", "secret.y"},
      {"echo x > secret.{txt,y}", "secret.{txt,y}"},
      {"rm {a,b/{c,d}}.txt", "b/d.txt"},
      {"touch f{1..3}", "f*"},
  };
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    HookRequest req;
    read_command(cases[i].command, &req);
    ck_assert_msg(has(req.paths, req.n_paths, cases[i].path) ||
                      has(req.trees, req.n_trees, cases[i].path) ||
                      has(req.somewhere, req.n_somewhere, cases[i].path) ||
                      has(req.entries, req.n_entries, cases[i].path) ||
                      has(req.entry_trees, req.n_entry_trees, cases[i].path),
                  "%s: %s not found", cases[i].command, cases[i].path);
    ck_assert(!req.over_budget);
    hook_request_clear(&req);
  }
}
END_TEST

/* Whether `path` is among any of what `req` says is written. */
static bool written(const HookRequest *req, const char *path) {
  return has(req->paths, req->n_paths, path) || has(req->trees, req->n_trees, path) ||
         has(req->somewhere, req->n_somewhere, path) ||
         has(req->somewhere_trees, req->n_somewhere_trees, path) ||
         has(req->entries, req->n_entries, path) ||
         has(req->entry_trees, req->n_entry_trees, path);
}

START_TEST(test_scopes) {
  /* What a part of the command is read with ends with that part: the
   * directory of a subshell, a substitution, sh -c, find -exec's command,
   * env -C and git -C; whether a command runs after `||`. eval's `cd`
   * stays, as the shell's does. */
  static const struct {
    const char *command;
    const char *written;
    const char *not_written;
  } cases[] = {
      {"(cd sub); rm a.txt", "a.txt", "sub/a.txt"},
      {"(cd sub; rm b.txt); rm a.txt", "sub/b.txt", "sub/a.txt"},
      {"echo \"$(cd sub)\"; rm a.txt", "a.txt", "sub/a.txt"},
      {"sh -c 'cd sub'; rm a.txt", "a.txt", "sub/a.txt"},
      {"env -C sub rm b.txt; rm a.txt", "sub/b.txt", "sub/a.txt"},
      {"env -C sub cd other; rm a.txt", "a.txt", "sub/other/a.txt"},
      {"git -C sub rm b.txt; rm a.txt", "sub/b.txt", "sub/a.txt"},
      {"find d -exec cd sub \\; ; rm a.txt", "a.txt", "sub/a.txt"},
      {"find d -execdir rm x \\; ; rm a.txt", "d/x", "d/a.txt"},
      {"eval 'cd sub'; rm a.txt", "sub/a.txt", "a.txt"},
      {"false || cd sub; rm a.txt", "a.txt", "sub/a.txt"},
      {"false || true; cd sub; rm a.txt", "sub/a.txt", "a.txt"},
      {"xargs -I{} sh -c 'cd sub' < list; rm a.txt", "a.txt", "sub/a.txt"},
  };
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    HookRequest req;
    read_command(cases[i].command, &req);
    ck_assert_msg(written(&req, cases[i].written), "%s: %s not found", cases[i].command,
                  cases[i].written);
    ck_assert_msg(!written(&req, cases[i].not_written), "%s: %s found", cases[i].command,
                  cases[i].not_written);
    hook_request_clear(&req);
  }
}
END_TEST

START_TEST(test_reads_nothing_written) {
  static const char *const commands[] = {
      "cat a.txt", "ls -la", "grep -r x .", "sed s/a/b/ f.c", "echo '> no.txt'",
      "cat <<EOF\nrm gone.txt\nEOF\n",
      "cd src && apply_patch <<'EOF'\n*** Update File: x.c\nEOF\n",
      "git rm --cached f.c", "git rm -n f.c", "git status f.c", "git checkout -b f.c",
      "git checkout no-such-branch", "git restore --staged f.c", "git clean -n f.c",
      "git mv -n x.c f.c", "git reset HEAD f.c", "git diff > /dev/null",
  };
  for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
    HookRequest req;
    read_command(commands[i], &req);
    /* The last one writes src/x.c, and nothing relative to where it started. */
    ck_assert_msg(!has(req.paths, req.n_paths, "gone.txt") &&
                      !has(req.paths, req.n_paths, "no.txt") &&
                      !has(req.paths, req.n_paths, "x.c") && !has(req.paths, req.n_paths, "f.c"),
                  "%s", commands[i]);
    hook_request_clear(&req);
  }
}
END_TEST

START_TEST(test_budget) {
  /* Past the budget the reading stops and says so: never half a reading
   * passed off as whole. */
  size_t len = HOOK_MAX_WORK + 1024;
  char *big = xmalloc(len + 1);
  for (size_t i = 0; i < len; i++) {
    big[i] = i % 8 == 7 ? ' ' : 'a';
  }
  big[len] = '\0';
  HookRequest req;
  read_command(big, &req);
  ck_assert(req.over_budget);
  hook_request_clear(&req);
  /* Half of it is read whole. */
  big[len / 2] = '\0';
  read_command(big, &req);
  ck_assert(!req.over_budget);
  hook_request_clear(&req);
  free(big);
}
END_TEST

static Suite *shell_suite(void) {
  Suite *s = suite_create("shell");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_lexer);
  tcase_add_test(tc, test_parser);
  tcase_add_test(tc, test_writer_table);
  tcase_add_test(tc, test_targets);
  tcase_add_test(tc, test_scopes);
  tcase_add_test(tc, test_reads_nothing_written);
  tcase_add_test(tc, test_budget);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(shell_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
