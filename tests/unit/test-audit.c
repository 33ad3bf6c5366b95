/* SPDX-License-Identifier: Apache-2.0 */
/* audit_run() on real temporary trees: every finding appears when its
 * condition holds, and only then. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "enforce/enforce.h"
#include "gitscan.h"
#include "matcher.h"
#include "path.h"
#include "policy.h"
#include "scan.h"
#include "util.h"
#include "tmptree.h"

/* ---- temporary trees (tmptree.c) ---------------------------------------- */

/* A directory .git with hooks/ and config, as `git init` leaves it. */
static void make_git_dir(const char *dir) {
  make_dir(dir, ".git");
  make_dir(dir, ".git/hooks");
  make_file(dir, ".git/config", "[core]\n");
  make_file(dir, ".git/HEAD", "ref: refs/heads/main\n");
}

/* ---- policy → scan → audit ---------------------------------------------- */

typedef struct {
  Policy *policy;
  Matcher *m;
} Loaded;

static void loaded_clear(Loaded *l) {
  matcher_free(l->m);
  policy_free(l->policy);
  *l = (Loaded){0};
}

/* Writes `yaml` as root/agent.lock, parses it and compiles its patterns. */
static void load(Loaded *l, const char *root, const char *yaml) {
  _cleanup_free_ char *file = path_join(root, POLICY_FILE_NAME);
  _cleanup_error_ Error err = {0};
  make_file(root, POLICY_FILE_NAME, yaml);
  *l = (Loaded){0};
  ck_assert_msg(policy_parse(file, yaml, strlen(yaml), &l->policy, &err) == 0, "policy: %s",
                err.message);
  _cleanup_free_ const char **pats = xcalloc(l->policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < l->policy->n_patterns; i++) {
    pats[i] = l->policy->patterns[i].pattern;
  }
  ck_assert_msg(matcher_new(pats, l->policy->n_patterns, 0, &l->m, &err) == 0, "matcher: %s",
                err.message);
}

static void audit(const char *root, const char *yaml, AuditFindings *out) {
  Loaded l;
  load(&l, root, yaml);
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_msg(scan_project(l.policy, l.m, &r, &err) == 0, "scan: %s", err.message);
  *out = (AuditFindings){0};
  audit_run(l.policy, l.m, r, out);
  loaded_clear(&l);
}

/* Findings that depend on where the tests run rather than on the tree:
 * whether they run as root, and what the scratch directory is mounted on
 * (an overlay in a container, a bind mount, a case-insensitive file
 * system). The trees below leave them out; each has tests of its own. */
static bool depends_on_machine(AuditKind k) {
  switch (k) {
  case AUDIT_ROOT:
  case AUDIT_SECOND_MOUNT:
  case AUDIT_BIND_MOUNT:
  case AUDIT_OVERLAY:
  case AUDIT_FUSE:
  case AUDIT_NETWORK_FS:
  case AUDIT_CASE_INSENSITIVE:
    return true;
  case AUDIT_UNMATCHED_LITERAL:
  case AUDIT_UNMATCHED_GLOB:
  case AUDIT_SYMLINK:
  case AUDIT_HARD_LINKS:
  case AUDIT_GIT_HOOKS:
  case AUDIT_GIT_CONFIG:
  case AUDIT_UNREADABLE:
  case AUDIT_SYMLINK_OUTSIDE:
  case AUDIT_GIT_HOOKS_PATH:
  case AUDIT_GIT_FSMONITOR_UNPROTECTED:
  case AUDIT_GIT_FSMONITOR:
  case AUDIT_LANDLOCK_METADATA:
  case AUDIT_LANDLOCK_TRUNCATE:
  case AUDIT_LANDLOCK_NO_NEW_ENTRIES:
  case AUDIT_LANDLOCK_LINKED_FILE:
  case AUDIT_LANDLOCK_UNLISTED:
  case AUDIT_INHERITED_FD:
  case AUDIT_ENCLOSING_POLICY:
  case AUDIT_GIT_DIR_OUTSIDE:
  case AUDIT_GIT_COMMONDIR_UNPROTECTED:
  case AUDIT_GIT_COMMONDIR:
  case AUDIT_GIT_NESTED_REPO:
  case AUDIT_GIT_BARE_REPO:
  case AUDIT_GIT_INCLUDE:
  case AUDIT_GIT_COMMAND:
  case AUDIT_GIT_SEQUENCER_EXEC:
  case AUDIT_GIT_WALK_LIMIT:
  case _AUDIT_KIND_MAX:
  case _AUDIT_KIND_INVALID:
  default:
    return false;
  }
}

/* The findings as "kind subject" lines in the order given, but for those
 * that depend on the machine. */
static char *summary(const AuditFindings *f) {
  char *out = xstrdup("");
  for (size_t i = 0; i < f->n; i++) {
    if (depends_on_machine(f->items[i].kind)) {
      continue;
    }
    const char *kind = audit_kind_to_string(f->items[i].kind);
    ck_assert_ptr_nonnull(kind);
    ck_assert_ptr_nonnull(f->items[i].subject);
    ck_assert_ptr_nonnull(f->items[i].detail);
    ck_assert_msg(f->items[i].detail[0] != '\0', "empty detail for %s", f->items[i].subject);
    char *next = xasprintf("%s%s %s\n", out, kind, f->items[i].subject);
    free(out);
    out = next;
  }
  return out;
}

static const AuditFinding *find(const AuditFindings *f, AuditKind kind, const char *subject) {
  for (size_t i = 0; i < f->n; i++) {
    if (f->items[i].kind == kind && streq(f->items[i].subject, subject)) {
      return &f->items[i];
    }
  }
  return NULL;
}

/* The finding, which must be there. */
__attribute__((returns_nonnull)) static const AuditFinding *get(const AuditFindings *f,
                                                                AuditKind kind,
                                                                const char *subject) {
  const AuditFinding *a = find(f, kind, subject);
  if (a == NULL) {
    ck_abort_msg("no %s finding for %s", audit_kind_to_string(kind), subject);
    abort();
  }
  return a;
}

static void assert_summary(const char *root, const char *yaml, const char *want) {
  AuditFindings f;
  audit(root, yaml, &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_msg(streq(got, want), "policy:\n%s\nfindings:\n%s\nwant:\n%s", yaml, got, want);
  audit_findings_clear(&f);
}

/* ---- second mounts (injected mountinfo) ---------------------------------- */

/* The subjects of the second-mount findings, one per line. */
static char *second_mounts_of(const char *mountinfo, const char *root, const char *const *paths,
                              size_t n_paths) {
  AuditFindings f = {0};
  audit_second_mounts(mountinfo, root, paths, n_paths, &f);
  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  ck_assert_ptr_nonnull(m);
  for (size_t i = 0; i < f.n; i++) {
    ck_assert_int_eq(f.items[i].kind, AUDIT_SECOND_MOUNT);
    ck_assert_ptr_nonnull(strstr(f.items[i].detail, n_paths == 0 ? "second path to this project"
                                                                  : "second path to"));
    fprintf(m, "%s\n", f.items[i].subject);
  }
  fclose(m);
  audit_findings_clear(&f);
  return buf;
}

static char *second_mounts(const char *mountinfo, const char *root) {
  return second_mounts_of(mountinfo, root, NULL, 0);
}

#define MI_ROOT "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"

START_TEST(test_second_mount_found) {
  /* /home bound again at /mnt/h: the project is also /mnt/h/dev/proj. */
  _cleanup_free_ char *got = second_mounts(MI_ROOT "40 26 254:0 /home /mnt/h rw - ext4 /dev/vda rw\n",
                                           "/home/dev/proj");
  ck_assert_str_eq(got, "/mnt/h/dev/proj\n");
}
END_TEST

START_TEST(test_second_mount_of_a_subdirectory_filesystem) {
  /* The project's filesystem is mounted at /srv with root /data; a second
   * mount of /data/dev shows the project at /view/proj. Spaces escaped. */
  _cleanup_free_ char *got = second_mounts(
      MI_ROOT "50 26 8:1 /data /srv rw - ext4 /dev/sdb1 rw\n"
              "51 26 8:1 /data/dev /my\\040view rw - ext4 /dev/sdb1 rw\n",
      "/srv/dev/proj");
  ck_assert_str_eq(got, "/my view/proj\n");
}
END_TEST

START_TEST(test_second_mount_not_reported) {
  /* Another device; a mount of something inside the project only (its
   * root does not cover the project); the project's own pins, bound on
   * themselves, as inside `ralon run`. */
  _cleanup_free_ char *got = second_mounts(
      MI_ROOT "60 26 0:50 / /tmp rw - tmpfs tmpfs rw\n"
              "61 26 254:0 /home/dev/proj/tests /mnt/t rw - ext4 /dev/vda rw\n"
              "62 26 254:0 /home /home rw - ext4 /dev/vda rw\n"
              "63 62 254:0 /home/dev/proj /home/dev/proj rw - ext4 /dev/vda rw\n",
      "/home/dev/proj");
  ck_assert_str_eq(got, "");
}
END_TEST

START_TEST(test_second_mount_of_part_of_the_project) {
  /* tests/ bound at /mnt/t holds the protected tests/golden: /mnt/t/golden
   * is a second path to it; a bind of a directory inside golden is one
   * too; src/ bound elsewhere holds nothing protected; golden bound on
   * itself (as inside `ralon run`) is no second path. */
  static const char *const paths[] = {"/home/dev/proj/Cargo.lock",
                                      "/home/dev/proj/tests/golden"};
  _cleanup_free_ char *got = second_mounts_of(
      MI_ROOT "61 26 254:0 /home/dev/proj/tests /mnt/t rw - ext4 /dev/vda rw\n"
              "62 26 254:0 /home/dev/proj/tests/golden/x /srv/x rw - ext4 /dev/vda rw\n"
              "63 26 254:0 /home/dev/proj/src /mnt/s rw - ext4 /dev/vda rw\n"
              "64 26 254:0 /home/dev/proj/tests/golden /home/dev/proj/tests/golden ro - ext4 "
              "/dev/vda rw\n"
              "65 26 0:50 /home/dev/proj/tests /mnt/other rw - tmpfs tmpfs rw\n",
      "/home/dev/proj", paths, ELEMENTSOF(paths));
  ck_assert_str_eq(got, "/mnt/t/golden\n/srv/x\n");
  /* Inside a `ralon run` whose policy protects golden and, through a link,
   * a file in it: that file bound on itself is no second path either. */
  _cleanup_free_ char *nested = second_mounts_of(
      MI_ROOT "64 26 254:0 /home/dev/proj/tests/golden /home/dev/proj/tests/golden ro - ext4 "
              "/dev/vda rw\n"
              "66 64 254:0 /home/dev/proj/tests/golden/a /home/dev/proj/tests/golden/a ro - "
              "ext4 /dev/vda rw\n",
      "/home/dev/proj", paths, ELEMENTSOF(paths));
  ck_assert_str_eq(nested, "");
}
END_TEST

START_TEST(test_second_mount_garbage) {
  _cleanup_free_ char *a = second_mounts("", "/home/dev/proj");
  ck_assert_str_eq(a, "");
  _cleanup_free_ char *b = second_mounts("1 2\n\n  \nx y z\n", "/home/dev/proj");
  ck_assert_str_eq(b, "");
}
END_TEST

/* ---- audit_kind_to_string ----------------------------------------------- */

START_TEST(test_kind_names) {
  static const struct {
    AuditKind kind;
    const char *name;
  } table[] = {
      {AUDIT_UNMATCHED_LITERAL, "unmatched-path"},
      {AUDIT_UNMATCHED_GLOB, "unmatched-glob"},
      {AUDIT_SYMLINK, "symlink"},
      {AUDIT_HARD_LINKS, "hard-links"},
      {AUDIT_GIT_HOOKS, "git-hooks-unprotected"},
      {AUDIT_GIT_CONFIG, "git-config-unprotected"},
      {AUDIT_UNREADABLE, "unreadable-directory"},
      {AUDIT_ROOT, "root"},
      {AUDIT_SECOND_MOUNT, "second-mount"},
      {AUDIT_BIND_MOUNT, "bind-mount"},
      {AUDIT_OVERLAY, "overlay-filesystem"},
      {AUDIT_FUSE, "fuse-filesystem"},
      {AUDIT_NETWORK_FS, "network-filesystem"},
      {AUDIT_SYMLINK_OUTSIDE, "symlink-to-unprotected"},
      {AUDIT_GIT_HOOKS_PATH, "git-hooks-path-unprotected"},
      {AUDIT_GIT_FSMONITOR_UNPROTECTED, "git-fsmonitor-unprotected"},
      {AUDIT_GIT_FSMONITOR, "git-fsmonitor"},
      {AUDIT_LANDLOCK_METADATA, "landlock-metadata"},
      {AUDIT_LANDLOCK_TRUNCATE, "landlock-truncate"},
      {AUDIT_LANDLOCK_NO_NEW_ENTRIES, "landlock-no-new-entries"},
      {AUDIT_INHERITED_FD, "inherited-write-descriptor"},
      {AUDIT_CASE_INSENSITIVE, "case-insensitive-directory"},
      {AUDIT_LANDLOCK_LINKED_FILE, "landlock-linked-file"},
      {AUDIT_LANDLOCK_UNLISTED, "landlock-unlisted-directory"},
      {AUDIT_ENCLOSING_POLICY, "enclosing-policy"},
      {AUDIT_GIT_DIR_OUTSIDE, "git-dir-outside-project"},
      {AUDIT_GIT_COMMONDIR_UNPROTECTED, "git-commondir-unprotected"},
      {AUDIT_GIT_COMMONDIR, "git-commondir"},
      {AUDIT_GIT_NESTED_REPO, "git-nested-repository"},
      {AUDIT_GIT_BARE_REPO, "git-bare-repository"},
      {AUDIT_GIT_INCLUDE, "git-include-unprotected"},
      {AUDIT_GIT_COMMAND, "git-command-unprotected"},
      {AUDIT_GIT_SEQUENCER_EXEC, "git-sequencer-exec"},
      {AUDIT_GIT_WALK_LIMIT, "git-search-limit"},
  };
  /* Every kind has a name here: a new kind must be added to this table. */
  ck_assert_int_eq(ELEMENTSOF(table), _AUDIT_KIND_MAX);
  for (size_t i = 0; i < ELEMENTSOF(table); i++) {
    const char *got = audit_kind_to_string(table[i].kind);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, table[i].name);
  }
  ck_assert_ptr_null(audit_kind_to_string(_AUDIT_KIND_MAX));
  ck_assert_ptr_null(audit_kind_to_string(_AUDIT_KIND_INVALID));
  ck_assert_ptr_null(audit_kind_to_string((AuditKind)-1));
  ck_assert_ptr_null(audit_kind_to_string((AuditKind)1000));
}
END_TEST

/* The settings whose value git runs as a command, and those it does not. */
START_TEST(test_git_key_runs) {
  static const struct {
    const char *key, *value;
    bool runs;
  } table[] = {
      {"core.fsmonitor", "./watch", true},
      {"core.fsmonitor", "true", false}, /* git's own daemon: a note elsewhere */
      {"core.fsmonitor", "false", false},
      {"core.hookspath", "hooks", true},
      {"core.sshcommand", "ssh -i k", true},
      {"core.editor", "vi", true},
      {"core.pager", "less", true},
      {"sequence.editor", "vi", true},
      {"diff.external", "x", true},
      {"diff.pdf.textconv", "pdftotext", true},
      {"diff.textconv", "x", false}, /* no driver name: not a setting git reads */
      {"filter.lfs.smudge", "git-lfs smudge", true},
      {"filter.lfs.process", "git-lfs filter-process", true},
      {"filter.lfs.required", "true", false},
      {"merge.ours.driver", "true", true},
      {"credential.helper", "store", true},
      {"credential.https://example.org.helper", "store", true},
      {"credential.helper", "", false}, /* empty: resets the list */
      {"alias.st", "status", false},
      {"alias.up", "!sh -c x", true},
      {"pager.log", "less -S", true},
      {"pager.log", "false", false},
      {"submodule.x.update", "!sh", true},
      {"submodule.x.update", "rebase", false},
      {"user.name", "x", false},
      {"include.path", "x", false},
      {"core.fsmonitor", NULL, false},
      {"gpg.ssh.defaultkeycommand", "ssh-add -L", true},
      {"tar.tgz.command", "gzip -cn", true},
      {"trailer.sign.command", "echo x", true},
      {"trailer.sign.cmd", "echo x", true},
      {"trailer.sign.key", "Signed-off-by", false},
      {"sendemail.sendmailcmd", "msmtp", true},
      {"sendemail.smtpserver", "/usr/bin/msmtp", true},
      {"sendemail.smtpserver", "smtp.example.org", false},
      {"help.browser", "firefox", true},
      {"instaweb.httpd", "lighttpd", true},
      {"guitool.run.cmd", "make", true},
      {"hook.lint.command", "./lint", true},
      {"protocol.ext.allow", "always", true},
      {"protocol.ext.allow", "never", false},
      {"protocol.https.allow", "always", false},
      {"url.ext::sh -c touch% /tmp/x.insteadof", "origin", true},
      {"url.https://example.org/.insteadof", "gh:", false},
      /* Found in review: each runs a command. */
      {"sendemail.headercmd", "./hdr", true},
      {"sendemail.work.tocmd", "./to", true},
      {"sendemail.work.cccmd", "./cc", true},
      {"sendemail.work.sendmailcmd", "./send", true},
      {"sendemail.work.headercmd", "./hdr", true},
      {"sendemail.work.smtpserver", "/tmp/x", true},
      {"sendemail.work.smtpserver", "smtp.example.org", false},
      {"sendemail.work.from", "me", false},
      {"imap.tunnel", "ssh host imapd", true},
      {"svn.authorsprog", "./authors", true},
      {"protocol.allow", "always", true},
      {"protocol.allow", "user", false},
      {"remote.origin.url", "ext::sh -c evil", true},
      {"remote.origin.pushurl", "ext::sh -c evil", true},
      {"remote.origin.url", "https://example.org/x.git", false},
      {"lfs.customtransfer.x.path", "./agent", true},
      {"lfs.customtransfer.x.args", "a", false},
      {"lfs.extension.x.clean", "./c %f", true},
      {"lfs.extension.x.smudge", "./s %f", true},
      {"lfs.extension.x.priority", "0", false},
      {"lfs.url", "https://example.org/lfs", false},
  };
  for (size_t i = 0; i < ELEMENTSOF(table); i++) {
    ck_assert_msg(gitscan_key_runs(table[i].key, table[i].value) == table[i].runs, "%s = %s",
                  table[i].key, table[i].value ? table[i].value : "(none)");
  }
}
END_TEST

START_TEST(test_git_exec_lines) {
  size_t n = 0;
  char **v = gitscan_exec_lines("pick 1234 a\n  exec make test\r\nx   ./run\nexecute no\n"
                                "# exec not\nexec\nbreak\n",
                                &n);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(v[0], "make test");
  ck_assert_str_eq(v[1], "./run");
  strings_free(v, n);
  v = gitscan_exec_lines("pick 1 a\n", &n);
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_null(v);
}
END_TEST

/* gitscan_config_parse against git itself: for each text, the same keys
 * and values as `git config --file F --list -z`, and a refusal where git
 * refuses the file. Without git, nothing to compare with. */
static void config_collect(void *userdata, const char *key, const char *value) {
  FILE *f = userdata;
  fputs(key, f);
  if (value != NULL) {
    fprintf(f, "\n%s", value);
  }
  fputc('\0', f);
}

START_TEST(test_git_config_parse_as_git) {
  static const char *const texts[] = {
      "[core]\n\tfsmonitor = ./x\n",
      "[CORE]\r\n\tFsMonitor=\"a b\"  ; c\r\n",
      "[core] pager = less\n[alias]\n\tst = \"!\"sh -c 'x'\n",
      "[diff \"X\\\"y\\\\z\"]\n\ttextconv = cat\n",
      "[diff \"a\\qb\"]\n\ttextconv = cat\n",
      "[Url.EXT::foo]\n\tinsteadOf = a\n",
      "\xef\xbb\xbf[core]\n\teditor = vi\n",
      "[core]\n\tpager = \\\n  less -R\n",
      "[core]\n\tflag\n\tother = 1\n",
      "[core]\n\tflag   \n",
      "[core]\n\tx = \"unterminated\n",
      "[core]\n\tbad_key = 1\n",
      "[sec \"sub\"]x=1\n",
      "[a]\n\tk = v\\tw\\nx\\by\n",
      "[a]\n\tk = \" lead\" trail  \n",
      "[a]\n\tk = x # c \"q\n",
      "[a \"s\"\n]\n",
      "[a]\n\tk\t=\tv\n",
      "[a]\n\tk = v\r\n",
      "[a]\n\tk = a\rb\n",
      "[a.B \"C\"]\n\tk = v\n",
      "[]\n",
      "[a]\n\t1k = v\n",
      "[a-b.c-d]\n\tk-1 = v\n",
      "[a]\n\tk = \"\\q\"\n",
      "[a]\n\tk # comment\n",
      "[a]\n\tk = v\n[b]",
      "[a]\n\tk = v\\",
      "# only a comment",
      "",
      "[a]k=1[b]j=2\n",
      "[a] ; c\n\tk = 1\n",
      "[a \"x\" ]\n\tk = 1\n",
      "[a\t\"x\"]\n\tk = 1\n",
      "[a]\n\tk = \"a\"\"b\"\n",
      "[a]\n\tk=\n",
      "[a]\n\tk = \\\n",
      "k = 1\n[a]\nj = 2\n",
  };
  if (system("git --version >/dev/null 2>&1") != 0) {
    return;
  }
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *file = path_join(t, "config");
  for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
    FILE *w = fopen(file, "w");
    ck_assert_ptr_nonnull(w);
    fputs(texts[i], w);
    fclose(w);
    char *mine = NULL;
    size_t mine_len = 0;
    FILE *m = open_memstream(&mine, &mine_len);
    bool ok = gitscan_config_parse(texts[i], strlen(texts[i]), config_collect, m);
    fclose(m);
    _cleanup_free_ char *cmd =
        xasprintf("GIT_CONFIG_NOSYSTEM=1 git config --file '%s' --list -z 2>/dev/null", file);
    FILE *g = popen(cmd, "r");
    ck_assert_ptr_nonnull(g);
    char buf[4096];
    size_t got = fread(buf, 1, sizeof(buf), g);
    int st = pclose(g);
    bool git_ok = st == 0;
    ck_assert_msg(ok == git_ok, "text %zu: parsed %d, git %d", i, ok, git_ok);
    if (ok) {
      ck_assert_msg(got == mine_len && memcmp(buf, mine, got) == 0,
                    "text %zu: %zu bytes from git, %zu parsed", i, got, mine_len);
    }
    free(mine);
  }
}
END_TEST

START_TEST(test_kind_weakens) {
  for (int k = 0; k < _AUDIT_KIND_MAX; k++) {
    /* A glob that matches nothing yet (say `*.pem` in a fresh clone), an
     * fsmonitor whose program the agent cannot change, and directories
     * Landlock closes to new entries (stricter, not weaker) are notes;
     * every other finding leaves protection weaker. */
    bool note = k == AUDIT_UNMATCHED_GLOB || k == AUDIT_GIT_FSMONITOR ||
                k == AUDIT_LANDLOCK_NO_NEW_ENTRIES || k == AUDIT_LANDLOCK_LINKED_FILE ||
                k == AUDIT_LANDLOCK_UNLISTED || k == AUDIT_GIT_WALK_LIMIT;
    ck_assert_msg(audit_weakens((AuditKind)k) == !note, "kind %s",
                  audit_kind_to_string((AuditKind)k));
  }
  ck_assert(!audit_weakens(_AUDIT_KIND_MAX));
  ck_assert(!audit_weakens(_AUDIT_KIND_INVALID));
  ck_assert(!audit_weakens((AuditKind)-1));
}
END_TEST

/* ---- unmatched patterns ------------------------------------------------- */

START_TEST(test_unmatched_literal_and_glob) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "present.txt", "p");
  make_dir(t, "docs");
  make_file(t, "docs/a.md", "a");
  make_dir(t, "src");

  AuditFindings f;
  audit(t,
        "protect:\n"
        "  - present.txt\n"
        "  - missing.txt\n"
        "  - docs\n"
        "  - src/missing/deeper\n"
        "  - '*.nothing'\n"
        "  - 'src/**/*.gen'\n"
        "  - '{a,b}.txt'\n"
        "  - '*.md'\n",
        &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "unmatched-path `missing.txt`\n"
                        "unmatched-path `src/missing/deeper`\n"
                        "unmatched-glob `*.nothing`\n"
                        "unmatched-glob `src/**/*.gen`\n"
                        "unmatched-glob `{a,b}.txt`\n"
                        "unmatched-glob `*.md`\n");
  const AuditFinding *lit = get(&f, AUDIT_UNMATCHED_LITERAL, "`missing.txt`");
  ck_assert_ptr_nonnull(strstr(lit->detail, "matches nothing on disk"));
  ck_assert_ptr_nonnull(strstr(lit->detail, "create it, or remove the line"));
  const AuditFinding *glob = get(&f, AUDIT_UNMATCHED_GLOB, "`*.nothing`");
  ck_assert_str_eq(glob->detail, "matches nothing on disk, so there is nothing to lock");
  audit_findings_clear(&f);
  ck_assert_uint_eq(f.n, 0);
  ck_assert_ptr_null(f.items);
}
END_TEST

START_TEST(test_everything_matched_is_quiet) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "present.txt", "p");
  make_dir(t, "docs");
  make_file(t, "docs/a.md", "a");
  make_file(t, "x.gen", "g");
  /* Every pattern the first to match something, regular files only, no
   * .git: nothing to say. agent.lock (pattern zero) is never reported. */
  assert_summary(t, "protect:\n  - present.txt\n  - docs\n  - '*.gen'\n", "");

  /* Not even when agent.lock is not on disk, listed or not: it is
   * implicit, and the user did not write it. */
  for (int listed = 0; listed < 2; listed++) {
    Loaded l;
    load(&l, t, listed ? "protect:\n  - agent.lock\n  - docs\n" : "protect:\n  - docs\n");
    _cleanup_free_ char *lock = path_join(t, POLICY_FILE_NAME);
    ck_assert_int_eq(unlink(lock), 0);
    _cleanup_error_ Error err = {0};
    _cleanup_scan_result_ ScanResult *r = NULL;
    ck_assert_int_eq(scan_project(l.policy, l.m, &r, &err), 0);
    ck_assert_uint_eq(r->hits[0], 0);
    AuditFindings f = {0};
    audit_run(l.policy, l.m, r, &f);
    _cleanup_free_ char *got = summary(&f);
    ck_assert_str_eq(got, "");
    audit_findings_clear(&f);
    loaded_clear(&l);
  }
}
END_TEST

/* A pattern that names something on disk is not "unmatched" merely
 * because an earlier pattern claimed that entry first, or because it lies
 * inside a directory an earlier pattern protects. */
START_TEST(test_shadowed_pattern_is_not_unmatched) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "present.txt", "p");
  make_dir(t, "docs");
  make_file(t, "docs/api.md", "a");
  assert_summary(t, "protect:\n  - '*.txt'\n  - present.txt\n", "");
  assert_summary(t, "protect:\n  - docs\n  - docs/api.md\n", "");
  assert_summary(t, "protect:\n  - docs\n  - 'docs/*.md'\n", "");
}
END_TEST

/* ---- symbolic links ------------------------------------------------------ */

START_TEST(test_symlink) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "target.txt", "t");
  make_symlink(t, "link.txt", "target.txt");
  make_dir(t, "dir");
  make_symlink(t, "dirlink", "dir");
  make_symlink(t, "dangling", "nowhere");
  make_dir(t, "prot");
  make_symlink(t, "prot/inner", "../target.txt");

  /* Only the protected entries themselves count, whatever they point at. */
  assert_summary(t, "protect:\n  - link.txt\n  - dirlink\n  - dangling\n",
                 "symlink dangling\n"
                 "symlink dirlink\n"
                 "symlink link.txt\n");
  AuditFindings f;
  audit(t, "protect:\n  - '*.txt'\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "symlink link.txt\n");
  ck_assert_ptr_nonnull(strstr(f.items[0].detail, "symbolic link"));
  audit_findings_clear(&f);

  /* Not reported: the targets themselves, and a link inside a protected
   * directory (it cannot be replaced). */
  assert_summary(t, "protect:\n  - target.txt\n  - dir\n  - prot\n", "");
}
END_TEST

/* ---- hard links ---------------------------------------------------------- */

START_TEST(test_hard_links) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "two", "2");
  make_hardlink(t, "two", "two-b");
  make_file(t, "three", "3");
  make_hardlink(t, "three", "three-b");
  make_hardlink(t, "three", "three-c");
  make_file(t, "one", "1");
  /* A directory always has several links: "." and its subdirectories'
   * "..". */
  make_dir(t, "dir");
  make_dir(t, "dir/sub");

  AuditFindings f;
  audit(t, "protect:\n  - two\n  - three\n  - one\n  - dir\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "hard-links three\n"
                        "hard-links two\n");
  const AuditFinding *two = get(&f, AUDIT_HARD_LINKS, "two");
  const AuditFinding *three = get(&f, AUDIT_HARD_LINKS, "three");
  ck_assert_str_eq(two->detail, "has 2 hard links; the other names are not protected and writing "
                                "one changes this file");
  ck_assert_str_eq(three->detail, "has 3 hard links; the other names are not protected and "
                                  "writing one changes this file");
  audit_findings_clear(&f);

  /* Not when every name is protected too: two and two-b both listed,
   * three's third name missing. */
  assert_summary(t, "protect:\n  - two\n  - two-b\n  - three\n  - three-b\n",
                 "hard-links three\n"
                 "hard-links three-b\n");
  assert_summary(t, "protect:\n  - 'two*'\n  - 'three*'\n", "");

  /* Gone when the other names are. */
  _cleanup_free_ char *b = path_join(t, "two-b");
  ck_assert_int_eq(unlink(b), 0);
  assert_summary(t, "protect:\n  - two\n", "");
}
END_TEST

START_TEST(test_literal_through_a_link) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "real");
  make_file(t, "real/key.pem", "k");
  make_symlink(t, "lnk", "real");
  make_dir(t, "conf");
  make_file(t, "conf/secret.yml", "s");

  /* There, through the link, which the scan follows because the policy
   * could protect something below it: the file is protected at its own
   * path, the link can be replaced. */
  AuditFindings f;
  audit(t, "protect:\n  - lnk/key.pem\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "symlink lnk\n");
  ck_assert_str_eq(f.items[0].detail,
                   "is a symbolic link the policy reaches through: what is found through it "
                   "is protected at its own path, and the link itself can be replaced (name "
                   "that path in the policy instead)");
  ck_assert(audit_weakens(f.items[0].kind));
  audit_findings_clear(&f);
  /* The same for a glob. */
  assert_summary(t, "protect:\n  - 'lnk/*.pem'\n", "symlink lnk\n");
  /* A link out of the project is not entered: a glob through it protects
   * nothing, and the audit says so (a literal is resolved by `run`). */
  _cleanup_free_ char *out = make_tmpdir();
  make_file(out, "o.pem", "o");
  make_symlink(t, "outlnk", out);
  audit(t, "protect:\n  - 'outlnk/*.pem'\n", &f);
  _cleanup_free_ char *got_out = summary(&f);
  ck_assert_str_eq(got_out, "unmatched-glob `outlnk/*.pem`\nsymlink outlnk\n");
  ck_assert_str_eq(f.items[1].detail,
                   "is a symbolic link to a directory outside the project, which the scan does "
                   "not enter: what the patterns would match through it is not protected (name "
                   "those paths in the policy one by one, or move them into the project)");
  ck_assert(audit_weakens(f.items[1].kind));
  audit_findings_clear(&f);
  _cleanup_free_ char *outlnk = path_join(t, "outlnk");
  ck_assert_int_eq(unlink(outlnk), 0);

  /* Not through a link: inside a protected directory it is protected as
   * it is; missing, nothing is locked. */
  assert_summary(t, "protect:\n  - conf\n  - conf/secret.yml\n", "");
  assert_summary(t, "protect:\n  - lnk/none.pem\n", "unmatched-path `lnk/none.pem`\n");
}
END_TEST

START_TEST(test_enclosing_policy) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "solo");
  make_dir(t, "inner");
  make_dir(t, "inner/deeper");
  make_file(t, "solo/x", "x");
  _cleanup_free_ char *solo = path_join(t, "solo");
  _cleanup_free_ char *inner = path_join(t, "inner");
  _cleanup_free_ char *deeper = path_join(t, "inner/deeper");
  /* None above (audit() writes the project's own): nothing to say. */
  assert_summary(solo, "protect:\n  - x\n", "");
  /* One two levels up (a directory without one between): named. */
  make_file(t, "agent.lock", "protect: [inner/x]\n");
  _cleanup_free_ char *outer = path_join(t, "agent.lock");
  _cleanup_free_ char *want = xasprintf("enclosing-policy %s\n", outer);
  make_file(deeper, "y", "y");
  assert_summary(deeper, "protect:\n  - y\n", want);
  AuditFindings f;
  audit(deeper, "protect:\n  - y\n", &f);
  ck_assert(audit_weakens(f.items[0].kind));
  audit_findings_clear(&f);
  /* Only the nearest is named. */
  make_file(inner, "agent.lock", "protect: [x]\n");
  _cleanup_free_ char *middle = path_join(inner, "agent.lock");
  _cleanup_free_ char *want2 = xasprintf("enclosing-policy %s\n", middle);
  assert_summary(deeper, "protect:\n  - y\n", want2);
}
END_TEST

START_TEST(test_hard_links_inside_protected_dirs) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "golden");
  make_dir(t, "golden/deep");
  make_file(t, "golden/deep/a.txt", "a");
  make_hardlink(t, "golden/deep/a.txt", "outside.txt");
  make_file(t, "golden/b.txt", "b");
  make_hardlink(t, "golden/b.txt", "golden/b2.txt"); /* both inside */
  make_file(t, "golden/c.txt", "c");
  make_hardlink(t, "golden/c.txt", "c-listed.txt"); /* the other is listed */
  make_file(t, "golden/one.txt", "1");

  AuditFindings f;
  audit(t, "protect:\n  - golden\n  - c-listed.txt\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "hard-links golden/deep/a.txt\n");
  ck_assert_str_eq(get(&f, AUDIT_HARD_LINKS, "golden/deep/a.txt")->detail,
                   "has 2 hard links; the other names are not protected and writing one "
                   "changes this file");
  audit_findings_clear(&f);

  /* Past LINK_REPORT_MAX (20), one line for the rest. */
  make_dir(t, "many");
  for (int i = 0; i < 23; i++) {
    char in[32], out[32];
    snprintf(in, sizeof(in), "many/f%02d", i);
    snprintf(out, sizeof(out), "o%02d", i);
    make_file(t, in, "x");
    make_hardlink(t, in, out);
  }
  audit(t, "protect:\n  - many\n", &f);
  size_t named = 0;
  for (size_t i = 0; i < f.n; i++) {
    named += f.items[i].kind == AUDIT_HARD_LINKS && strncmp(f.items[i].subject, "many/", 5) == 0;
  }
  ck_assert_uint_eq(named, 20);
  const AuditFinding *rest = get(&f, AUDIT_HARD_LINKS, "3 more files");
  ck_assert_str_eq(rest->detail, "in protected directories have other names that are not "
                                 "protected, like those above");
  audit_findings_clear(&f);
}
END_TEST

/* ---- .git ---------------------------------------------------------------- */

START_TEST(test_git_unprotected) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);

  AuditFindings f;
  audit(t, "protect:\n  - README\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "git-hooks-unprotected .git/hooks\n"
                        "git-config-unprotected .git/config\n");
  ck_assert_ptr_nonnull(strstr(get(&f, AUDIT_GIT_HOOKS, ".git/hooks")->detail, ".git/hooks"));
  ck_assert_ptr_nonnull(strstr(get(&f, AUDIT_GIT_CONFIG, ".git/config")->detail, ".git/config"));
  audit_findings_clear(&f);

  /* Half covered: only the other half is reported. */
  assert_summary(t, "protect:\n  - README\n  - .git/hooks\n",
                 "git-config-unprotected .git/config\n");
  assert_summary(t, "protect:\n  - README\n  - .git/config\n",
                 "git-hooks-unprotected .git/hooks\n");
}
END_TEST

START_TEST(test_git_submodules) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);
  /* Submodule git directories, one nested; and a directory in modules
   * that is not one (no HEAD). */
  make_dir(t, ".git/modules");
  make_dir(t, ".git/modules/lib");
  make_file(t, ".git/modules/lib/HEAD", "ref: refs/heads/main\n");
  make_dir(t, ".git/modules/lib/hooks");
  make_file(t, ".git/modules/lib/config", "[core]\n");
  make_dir(t, ".git/modules/lib/modules");
  make_dir(t, ".git/modules/lib/modules/inner");
  make_file(t, ".git/modules/lib/modules/inner/HEAD", "ref: refs/heads/main\n");
  make_dir(t, ".git/modules/stray");
  /* A submodule in a subdirectory (`git submodule add URL libs/foo`). */
  make_dir(t, ".git/modules/libs");
  make_dir(t, ".git/modules/libs/foo");
  make_file(t, ".git/modules/libs/foo/HEAD", "ref: refs/heads/main\n");
  const char *top = "protect:\n  - README\n  - .git/hooks\n  - .git/config\n";
  assert_summary(t, top,
                 "git-hooks-unprotected .git/modules/lib/hooks\n"
                 "git-config-unprotected .git/modules/lib/config\n"
                 "git-hooks-unprotected .git/modules/lib/modules/inner/hooks\n"
                 "git-config-unprotected .git/modules/lib/modules/inner/config\n"
                 "git-hooks-unprotected .git/modules/libs/foo/hooks\n"
                 "git-config-unprotected .git/modules/libs/foo/config\n");
  AuditFindings f;
  audit(t, top, &f);
  ck_assert_ptr_nonnull(strstr(get(&f, AUDIT_GIT_HOOKS, ".git/modules/lib/hooks")->detail,
                               "`.git/modules/**/hooks`"));
  audit_findings_clear(&f);
  /* What `ralon init` writes covers them all. */
  assert_summary(t,
                 "protect:\n  - README\n  - .git/hooks\n  - .git/config\n"
                 "  - .git/modules/**/hooks\n  - .git/modules/**/config\n",
                 "");
}
END_TEST

START_TEST(test_git_worktrees) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);
  /* Two linked worktrees' git directories, and one without commondir. */
  make_dir(t, ".git/worktrees");
  make_dir(t, ".git/worktrees/wt");
  make_file(t, ".git/worktrees/wt/commondir", "../..\n");
  make_dir(t, ".git/worktrees/b");
  make_file(t, ".git/worktrees/b/commondir", "../..\n");
  make_dir(t, ".git/worktrees/empty");
  const char *top = "protect:\n  - README\n  - .git/hooks\n  - .git/config\n";
  assert_summary(t, top,
                 "git-commondir-unprotected .git/worktrees/b/commondir\n"
                 "git-commondir-unprotected .git/worktrees/wt/commondir\n");
  AuditFindings f;
  audit(t, top, &f);
  ck_assert_ptr_nonnull(
      strstr(get(&f, AUDIT_GIT_COMMONDIR_UNPROTECTED, ".git/worktrees/wt/commondir")->detail,
             "`.git/worktrees/*/commondir`"));
  ck_assert(audit_weakens(AUDIT_GIT_COMMONDIR_UNPROTECTED));
  audit_findings_clear(&f);
  /* What `ralon init` writes covers them; so does one named. */
  assert_summary(t,
                 "protect:\n  - README\n  - .git/hooks\n  - .git/config\n"
                 "  - .git/worktrees/*/commondir\n",
                 "");
  assert_summary(t,
                 "protect:\n  - README\n  - .git/hooks\n  - .git/config\n"
                 "  - .git/worktrees/wt/commondir\n",
                 "git-commondir-unprotected .git/worktrees/b/commondir\n");
}
END_TEST

START_TEST(test_git_worktree_config) {
  /* extensions.worktreeConfig (`git sparse-checkout` sets it): git also
   * reads .git/config.worktree and each linked worktree's. */
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);
  make_file(t, ".git/config", "[core]\n\tbare = false\n[extensions]\n\tworktreeConfig = true\n");
  make_file(t, ".git/config.worktree", "[core]\n\tsparseCheckout = true\n");
  make_dir(t, ".git/worktrees");
  make_dir(t, ".git/worktrees/wt");
  make_file(t, ".git/worktrees/wt/commondir", "../..\n");
  ck_assert(audit_git_worktree_config(t));
  const char *top = "protect:\n  - README\n  - .git/hooks\n  - .git/config\n";
  assert_summary(t, top,
                 "git-config-unprotected .git/config.worktree\n"
                 "git-commondir-unprotected .git/worktrees/wt/commondir\n"
                 "git-config-unprotected .git/worktrees/wt/config.worktree\n");
  /* What `ralon init` writes here covers them. */
  assert_summary(t,
                 "protect:\n  - README\n  - .git/hooks\n  - .git/config\n"
                 "  - .git/config.worktree\n  - .git/worktrees/*/commondir\n"
                 "  - .git/worktrees/*/config.worktree\n",
                 "unmatched-glob `.git/worktrees/*/config.worktree`\n");
  _cleanup_free_ char *text = policy_starter_text(t);
  ck_assert_ptr_nonnull(strstr(text, "  - .git/config.worktree\n"));
  ck_assert_ptr_nonnull(strstr(text, "  - .git/worktrees/*/config.worktree\n"));
  /* Bare key: true. Off: git reads neither, nothing to report. */
  make_file(t, ".git/config", "[extensions]\n\tworktreeConfig\n");
  ck_assert(audit_git_worktree_config(t));
  make_file(t, ".git/config", "[extensions]\n\tworktreeConfig = false\n");
  ck_assert(!audit_git_worktree_config(t));
  assert_summary(t, top, "git-commondir-unprotected .git/worktrees/wt/commondir\n");
  _cleanup_free_ char *off = policy_starter_text(t);
  ck_assert_ptr_null(strstr(off, "config.worktree"));
}
END_TEST

START_TEST(test_git_planted_commondir) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *elsewhere = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);
  const char *top = "protect:\n  - README\n  - .git/hooks\n  - .git/config\n";
  assert_summary(t, top, "");
  /* git makes no commondir in .git: one there sends git elsewhere for
   * hooks and configuration, whatever the policy protects. */
  _cleanup_free_ char *line = xasprintf("%s\n", elsewhere);
  make_file(t, ".git/commondir", line);
  assert_summary(t, top, "git-commondir .git/commondir\n");
  assert_summary(t, "protect:\n  - README\n  - .git\n", "git-commondir .git/commondir\n");
  AuditFindings f;
  audit(t, top, &f);
  _cleanup_free_ char *canon = realpath(elsewhere, NULL);
  ck_assert_ptr_nonnull(canon);
  const char *detail = get(&f, AUDIT_GIT_COMMONDIR, ".git/commondir")->detail;
  ck_assert_msg(strstr(detail, canon) != NULL, "%s does not name %s", detail, canon);
  ck_assert(audit_weakens(AUDIT_GIT_COMMONDIR));
  audit_findings_clear(&f);

  /* The same in a submodule's git directory. */
  _cleanup_free_ char *u = make_tmpdir();
  make_file(u, "README", "r");
  make_git_dir(u);
  make_dir(u, ".git/modules");
  make_dir(u, ".git/modules/lib");
  make_file(u, ".git/modules/lib/HEAD", "ref: refs/heads/main\n");
  make_dir(u, ".git/modules/lib/hooks");
  make_file(u, ".git/modules/lib/config", "[core]\n");
  make_file(u, ".git/modules/lib/commondir", "../../..\n");
  assert_summary(u,
                 "protect:\n  - README\n  - .git/hooks\n  - .git/config\n"
                 "  - .git/modules/**/hooks\n  - .git/modules/**/config\n",
                 "git-commondir .git/modules/lib/commondir\n");
}
END_TEST

START_TEST(test_git_protected) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_git_dir(t);
  assert_summary(t, "protect:\n  - README\n  - .git/hooks\n  - .git/config\n", "");
  assert_summary(t, "protect:\n  - README\n  - .git\n", "");
  assert_summary(t, "protect:\n  - README\n  - '.git/**'\n", "");
  assert_summary(t, "protect:\n  - README\n  - '.git/{hooks,config}'\n", "");
}
END_TEST

START_TEST(test_git_not_a_directory) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  /* No .git at all. */
  assert_summary(t, "protect:\n  - README\n", "");

  /* A worktree: .git is a file naming its git directory, whose commondir
   * names the repository's, where the hooks and the configuration are:
   * outside the project, beyond anything agent.lock can protect. */
  _cleanup_free_ char *main_repo = make_tmpdir();
  make_git_dir(main_repo);
  make_dir(main_repo, ".git/worktrees");
  make_dir(main_repo, ".git/worktrees/wt");
  make_file(main_repo, ".git/worktrees/wt/commondir", "../..\n");
  _cleanup_free_ char *gitdir = path_join(main_repo, ".git/worktrees/wt");
  _cleanup_free_ char *line = xasprintf("gitdir: %s\n", gitdir);
  make_file(t, ".git", line);
  _cleanup_free_ char *common = path_join(main_repo, ".git");
  _cleanup_free_ char *canon = realpath(common, NULL);
  ck_assert_ptr_nonnull(canon);

  AuditFindings f;
  /* `.git/hooks` and `.git/config` name nothing here: not "create it",
   * but where they are. */
  audit(t, "protect:\n  - README\n  - .git/hooks\n  - .git/config\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "git-dir-outside-project .git\n");
  const char *detail = get(&f, AUDIT_GIT_DIR_OUTSIDE, ".git")->detail;
  ck_assert_msg(strstr(detail, canon) != NULL, "%s does not name %s", detail, canon);
  ck_assert_ptr_nonnull(strstr(detail, "add `.git` to agent.lock"));
  ck_assert(audit_weakens(AUDIT_GIT_DIR_OUTSIDE));
  audit_findings_clear(&f);

  /* With .git itself protected, the common directory is still outside. */
  audit(t, "protect:\n  - README\n  - .git\n", &f);
  detail = get(&f, AUDIT_GIT_DIR_OUTSIDE, ".git")->detail;
  ck_assert(strstr(detail, canon) != NULL);
  ck_assert_ptr_null(strstr(detail, "add `.git`"));
  audit_findings_clear(&f);

  /* A submodule (or --separate-git-dir): no commondir, the git directory
   * is the common one; a relative gitdir is the project's. */
  make_dir(t, "modules");
  make_dir(t, "modules/sub");
  make_file(t, ".git", "gitdir: modules/sub\n");
  _cleanup_free_ char *sub = path_join(t, "modules/sub");
  _cleanup_free_ char *sub_canon = realpath(sub, NULL);
  audit(t, "protect:\n  - README\n", &f);
  ck_assert(strstr(get(&f, AUDIT_GIT_DIR_OUTSIDE, ".git")->detail, sub_canon) != NULL);
  audit_findings_clear(&f);

  /* A .git file that names nothing still sends git nowhere it can check. */
  make_file(t, ".git", "not a gitdir line\n");
  assert_summary(t, "protect:\n  - README\n", "git-dir-outside-project .git\n");
}
END_TEST

/* ---- the policy file between reading and scanning ------------------------ */

/* Loads root/agent.lock from disk (policy_load: its identity is kept). */
static void load_file(Loaded *l, const char *root) {
  _cleanup_free_ char *file = path_join(root, POLICY_FILE_NAME);
  _cleanup_error_ Error err = {0};
  *l = (Loaded){0};
  ck_assert_msg(policy_load(file, &l->policy, &err) == 0, "policy: %s", err.message);
  _cleanup_free_ const char **pats = xcalloc(l->policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < l->policy->n_patterns; i++) {
    pats[i] = l->policy->patterns[i].pattern;
  }
  ck_assert_msg(matcher_new(pats, l->policy->n_patterns, 0, &l->m, &err) == 0, "matcher: %s",
                err.message);
}

/* enforce_targets on a fresh scan: 0, or -1 with the message in *msg. */
static int targets(const Loaded *l, char **msg) {
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_msg(scan_project(l->policy, l->m, &r, &err) == 0, "scan: %s", err.message);
  PlanTarget *v = NULL;
  size_t n = 0;
  int ret = enforce_targets(l->policy, l->m, r, &v, &n, &err);
  if (ret == 0) {
    plan_targets_free(v, n);
  }
  *msg = err.message != NULL ? xstrdup(err.message) : NULL;
  return ret;
}

START_TEST(test_policy_file_replaced_before_the_scan) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  make_file(t, POLICY_FILE_NAME, "protect: [README]\n");
  _cleanup_free_ char *file = path_join(t, POLICY_FILE_NAME);
  _cleanup_free_ char *aside = path_join(t, ".agent.lock.tmp");
  Loaded l;
  load_file(&l, t);
  char *msg = NULL;
  ck_assert_int_eq(targets(&l, &msg), 0);
  ck_assert_ptr_null(msg);

  /* Replaced (an editor's save, or a race) between reading and scanning:
   * the scan's agent.lock is another file. */
  make_file(t, ".agent.lock.new", "protect: []\n");
  _cleanup_free_ char *fresh = path_join(t, ".agent.lock.new");
  ck_assert_int_eq(rename(fresh, file), 0);
  ck_assert_int_eq(targets(&l, &msg), -1);
  ck_assert_ptr_nonnull(strstr(msg, "is not the file ralon read moments ago"));
  free(msg);
  loaded_clear(&l);

  /* Moved away: the scan finds none. */
  load_file(&l, t);
  ck_assert_int_eq(rename(file, aside), 0);
  ck_assert_int_eq(targets(&l, &msg), -1);
  ck_assert_ptr_nonnull(strstr(msg, "is not the file ralon read moments ago"));
  free(msg);
  ck_assert_int_eq(rename(aside, file), 0);
  ck_assert_int_eq(targets(&l, &msg), 0);
  loaded_clear(&l);

  /* A link named agent.lock is read through: its target is the file. */
  ck_assert_int_eq(rename(file, aside), 0);
  ck_assert_int_eq(symlink(".agent.lock.tmp", file), 0);
  load_file(&l, t);
  ck_assert_int_eq(targets(&l, &msg), 0);
  ck_assert_ptr_null(msg);
  loaded_clear(&l);
}
END_TEST

START_TEST(test_plan_missing_reported_once) {
  _cleanup_free_ char *t = make_tmpdir();
  PlanTarget targets[] = {
      {.path = "x", .relative = "gone.txt", .missing = true},
      {.path = "z", .relative = "here.txt", .missing = false},
      {.path = "w", .relative = ".git/config", .missing = true},
  };
  Plan plan = {.targets = targets, .n_targets = ELEMENTSOF(targets)};
  AuditFindings f = {0};
  audit_plan_missing(&plan, t, &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "unmatched-path `gone.txt`\nunmatched-path `.git/config`\n");
  ck_assert_str_eq(get(&f, AUDIT_UNMATCHED_LITERAL, "`gone.txt`")->pattern, "gone.txt");
  /* What a finding names already is not said again. */
  audit_plan_missing(&plan, t, &f);
  ck_assert_uint_eq(f.n, 2);
  audit_findings_clear(&f);
  /* Where .git is a file (a worktree), git-dir-outside-project says
   * where `.git/...` is: not "create it". */
  make_file(t, ".git", "gitdir: /nonexistent\n");
  audit_plan_missing(&plan, t, &f);
  _cleanup_free_ char *got2 = summary(&f);
  ck_assert_str_eq(got2, "unmatched-path `gone.txt`\n");
  audit_findings_clear(&f);
}
END_TEST

START_TEST(test_missing_target_that_appears) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *late = path_join(t, "late.txt");
  PlanTarget target = {.path = late, .relative = "late.txt", .missing = true};
  Plan plan = {.targets = &target, .n_targets = 1};
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(enforce_verify_missing(&plan, &err), 0);
  make_file(t, "late.txt", "x");
  ck_assert_int_eq(enforce_verify_missing(&plan, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, late));
  ck_assert_ptr_nonnull(strstr(err.message, "appeared while ralon started"));
  /* Present and planned as present: not this check's business. */
  target.missing = false;
  error_clear(&err);
  ck_assert_int_eq(enforce_verify_missing(&plan, &err), 0);
}
END_TEST

/* ---- unreadable directories --------------------------------------------- */

/* Runs the whole policy → scan → audit chain as a user the permission bits
 * apply to (run_unprivileged). Returns "kind subject" lines for every
 * finding that does not depend on the machine, the root one included, or
 * NULL after printing why this system cannot make `probe_rel` (when not
 * NULL) unreadable. */
static void audit_child(FILE *out, void *userdata) {
  const Loaded *l = userdata;
  ScanResult *r = NULL;
  Error err = {0};
  if (scan_project(l->policy, l->m, &r, &err) < 0) {
    fprintf(out, "ERROR %s\n", err.message);
    error_clear(&err);
    return;
  }
  AuditFindings f = {0};
  audit_run(l->policy, l->m, r, &f);
  for (size_t i = 0; i < f.n; i++) {
    if (f.items[i].kind == AUDIT_ROOT || !depends_on_machine(f.items[i].kind)) {
      const char *kind = audit_kind_to_string(f.items[i].kind);
      fprintf(out, "%s %s\n", kind ? kind : "(null)", f.items[i].subject);
    }
  }
  audit_findings_clear(&f);
  scan_result_free(r);
}

static char *audit_unprivileged(const char *test, const char *root, const char *yaml,
                                const char *probe_rel) {
  Loaded l;
  load(&l, root, yaml);
  _cleanup_free_ char *probe = probe_rel ? path_join(root, probe_rel) : NULL;
  char *out = run_unprivileged(test, probe, audit_child, &l);
  loaded_clear(&l);
  return out;
}

START_TEST(test_unreadable) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "top.pem", "t");
  make_dir(t, "locked");
  make_file(t, "locked/secret.pem", "s");
  make_dir(t, "open");
  make_file(t, "open/k.pem", "k");
  _cleanup_free_ char *locked = path_join(t, "locked");
  ck_assert_int_eq(chmod(locked, 0), 0);

  _cleanup_free_ char *got =
      audit_unprivileged(__func__, t, "protect:\n  - '**/*.pem'\n", "locked");
  if (got == NULL) {
    return;
  }
  ck_assert_str_eq(got, "unreadable-directory locked\n");

  /* Not reported when no pattern could protect anything inside it. */
  _cleanup_free_ char *got2 = audit_unprivileged(__func__, t, "protect:\n  - open\n", "locked");
  ck_assert_ptr_nonnull(got2);
  ck_assert_str_eq(got2, "");
}
END_TEST

START_TEST(test_unreadable_detail) {
  /* The text for a directory the scan could not read, without needing the
   * filesystem to refuse anything. */
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "a.pem", "a");
  Loaded l;
  load(&l, t, "protect:\n  - '**/*.pem'\n");
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_int_eq(scan_project(l.policy, l.m, &r, &err), 0);
  ck_assert_uint_eq(r->n_unreadable, 0);
  r->unreadable = xcalloc(1, sizeof(char *));
  r->unreadable[0] = xstrdup("some/dir");
  r->n_unreadable = 1;
  AuditFindings f = {0};
  audit_run(l.policy, l.m, r, &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "unreadable-directory some/dir\n");
  ck_assert_ptr_nonnull(strstr(f.items[0].detail, "could not be read in full"));
  ck_assert_ptr_nonnull(strstr(f.items[0].detail, "names too long"));
  audit_findings_clear(&f);
  loaded_clear(&l);
}
END_TEST

/* ---- root --------------------------------------------------------------- */

START_TEST(test_root) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "a", "a");
  AuditFindings f;
  audit(t, "protect:\n  - a\n", &f);
  _cleanup_free_ char *rest = summary(&f);
  ck_assert_str_eq(rest, "");
  if (geteuid() == 0) {
    /* Reported once, last, whatever the tree. */
    ck_assert_uint_ge(f.n, 1);
    ck_assert_int_eq(f.items[f.n - 1].kind, AUDIT_ROOT);
    ck_assert_ptr_nonnull(strstr(f.items[f.n - 1].detail, "root"));
    for (size_t i = 0; i + 1 < f.n; i++) {
      ck_assert_int_ne(f.items[i].kind, AUDIT_ROOT);
    }
    audit_findings_clear(&f);

    /* And not for anybody else. */
    _cleanup_free_ char *got = audit_unprivileged(__func__, t, "protect:\n  - a\n", NULL);
    if (got != NULL) {
      ck_assert_str_eq(got, "");
    }
  } else {
    for (size_t i = 0; i < f.n; i++) {
      ck_assert_int_ne(f.items[i].kind, AUDIT_ROOT);
    }
    audit_findings_clear(&f);
    fprintf(stderr, "SKIPPED %s: not root, cannot see the root finding produced\n", __func__);
  }
}
END_TEST

/* ---- everything at once -------------------------------------------------- */

START_TEST(test_order_and_accumulation) {
  _cleanup_free_ char *t = make_tmpdir();
  make_git_dir(t);
  make_file(t, "a", "a");
  make_hardlink(t, "a", "a2");
  make_symlink(t, "l", "a");

  /* Findings are appended to what `out` already holds. */
  AuditFindings f = {0};
  Loaded l;
  load(&l, t, "protect:\n  - missing\n  - l\n  - a\n  - '*.x'\n");
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_int_eq(scan_project(l.policy, l.m, &r, &err), 0);
  audit_run(l.policy, l.m, r, &f);
  size_t first = f.n;
  audit_run(l.policy, l.m, r, &f);
  ck_assert_uint_eq(f.n, 2 * first);
  _cleanup_free_ char *got = summary(&f);
  static const char once[] = "unmatched-path `missing`\n"
                             "unmatched-glob `*.x`\n"
                             "hard-links a\n"
                             "symlink l\n"
                             "git-hooks-unprotected .git/hooks\n"
                             "git-config-unprotected .git/config\n";
  _cleanup_free_ char *want = xasprintf("%s%s", once, once);
  ck_assert_str_eq(got, want);
  audit_findings_clear(&f);
  loaded_clear(&l);
}
END_TEST

/* ---- helpers for the findings that depend on more than the tree ---------- */

/* Every finding as a "kind subject" line, whatever its kind, checking that
 * each has a subject and a detail. */
static char *all_lines(const AuditFindings *f) {
  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  ck_assert_ptr_nonnull(m);
  for (size_t i = 0; i < f->n; i++) {
    const char *kind = audit_kind_to_string(f->items[i].kind);
    ck_assert_ptr_nonnull(kind);
    ck_assert_ptr_nonnull(f->items[i].subject);
    ck_assert_ptr_nonnull(f->items[i].detail);
    ck_assert_msg(f->items[i].detail[0] != '\0', "empty detail for %s", f->items[i].subject);
    fprintf(m, "%s %s\n", kind, f->items[i].subject);
  }
  fclose(m);
  return buf;
}

static void assert_contains(const char *haystack, const char *needle) {
  ck_assert_msg(strstr(haystack, needle) != NULL, "`%s` not in: %s", needle, haystack);
}

/* ---- the file systems holding protected paths (injected mountinfo) ------- */

#define MI_PROJ "/home/dev/proj"

/* audit_mounts() for the project /home/dev/proj and the protected paths
 * `rel` (relative to it unless absolute; NULL-terminated). */
static char *mount_kinds(const char *mountinfo, const char *const *rel, AuditFindings *keep) {
  char *abs[32] = {0};
  size_t n = 0;
  for (; rel[n] != NULL; n++) {
    ck_assert_uint_lt(n, ELEMENTSOF(abs));
    abs[n] = path_join(MI_PROJ, rel[n]);
  }
  AuditFindings f = {0};
  audit_mounts(mountinfo, MI_PROJ, (const char *const *)abs, n, &f);
  for (size_t i = 0; i < n; i++) {
    free(abs[i]);
  }
  char *out = all_lines(&f);
  if (keep != NULL) {
    *keep = f;
  } else {
    audit_findings_clear(&f);
  }
  return out;
}

START_TEST(test_mounts_bind) {
  /* The project is a bind mount of /srv/data (a container's volume, say),
   * with optional fields before the "-". Reported once for the mount. */
  AuditFindings f;
  _cleanup_free_ char *got =
      mount_kinds(MI_ROOT "40 26 254:0 /srv/data /home/dev/proj rw,relatime shared:5 master:1 - "
                          "ext4 /dev/vda rw\n",
                  (const char *[]){"agent.lock", "tests/golden/a.json", NULL}, &f);
  ck_assert_str_eq(got, "bind-mount agent.lock\n");
  const char *d = f.items[0].detail;
  assert_contains(d, "bind mount");
  assert_contains(d, "directory /srv/data of the file system on /dev/vda");
  assert_contains(d, "mounted at /home/dev/proj");
  assert_contains(d, "restricted by neither backend");
  audit_findings_clear(&f);
}
END_TEST

START_TEST(test_mounts_bind_under_self_binds) {
  /* Inside `ralon run`: a protected directory and file bound onto their
   * own paths add no other path; the bind below them is still seen, and
   * named once, by the first protected path. */
  AuditFindings f;
  _cleanup_free_ char *got = mount_kinds(
      MI_ROOT "40 26 254:0 /srv/data /home/dev/proj rw - ext4 /dev/vda rw\n"
              "41 40 254:0 /srv/data/tests /home/dev/proj/tests rw - ext4 /dev/vda rw\n"
              "42 41 254:0 /srv/data/tests/golden/a.json /home/dev/proj/tests/golden/a.json ro "
              "- ext4 /dev/vda rw\n",
      (const char *[]){"tests/golden/a.json", "agent.lock", "tests/b", NULL}, &f);
  ck_assert_str_eq(got, "bind-mount tests/golden/a.json\n");
  assert_contains(f.items[0].detail, "directory /srv/data of");
  assert_contains(f.items[0].detail, "mounted at /home/dev/proj)");
  audit_findings_clear(&f);
}
END_TEST

START_TEST(test_mounts_file_bind_among_siblings) {
  /* Many protected files in one directory, looked up once; the one a file
   * from elsewhere is bound onto is still found, wherever it sorts, and
   * named by its own path; the directory's own mount says nothing. */
  AuditFindings f;
  _cleanup_free_ char *got = mount_kinds(
      MI_ROOT "70 26 254:0 /srv/keys/c.pem /home/dev/proj/keys/c.pem rw - ext4 /dev/vda rw\n"
              "71 26 0:70 / /home/dev/proj/keys/e.pem rw - fuse.sshfs me@host:/e rw\n",
      (const char *[]){"keys/a.pem", "keys/b.pem", "keys/c.pem", "keys/d.pem", "keys/e.pem",
                       "keys/f.pem", NULL},
      &f);
  ck_assert_str_eq(got, "bind-mount keys/c.pem\n"
                        "network-filesystem keys/e.pem\n");
  assert_contains(f.items[0].detail, "directory /srv/keys/c.pem of");
  audit_findings_clear(&f);
}
END_TEST

START_TEST(test_mounts_kinds) {
  AuditFindings f;
  _cleanup_free_ char *got = mount_kinds(
      MI_ROOT
      "50 26 0:60 / /home/dev/proj/ovl rw - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
      "51 26 0:61 / /home/dev/proj/fz rw,nosuid - fuse.bindfs bindfs rw,user_id=0\n"
      "52 26 0:62 / /home/dev/proj/blk rw - fuseblk /dev/sdb1 rw\n"
      "53 26 0:63 / /home/dev/proj/nfs rw - nfs4 srv:/export rw,vers=4.2\n"
      "54 26 0:64 / /home/dev/proj/smb rw - cifs //srv/share rw\n"
      "55 26 0:65 / /home/dev/proj/ssh rw - fuse.sshfs me@host:/x rw\n"
      "56 26 0:66 / /home/dev/proj/wsl rw - 9p drvfs rw\n"
      /* A network file system is that first, whatever part of it is
       * mounted. */
      "57 26 0:67 /vol/sub /home/dev/proj/ceph rw - ceph 10.0.0.1:/ rw\n"
      "58 26 0:68 / /elsewhere rw - nfs srv:/e rw\n",
      (const char *[]){"ovl/a", "ovl/b", "fz/a", "blk/a", "nfs/a", "smb/a", "ssh/a", "wsl/a",
                       "ceph/a", "/elsewhere/x", NULL},
      &f);
  ck_assert_str_eq(got, "overlay-filesystem ovl/a\n"
                        "fuse-filesystem fz/a\n"
                        "fuse-filesystem blk/a\n"
                        "network-filesystem nfs/a\n"
                        "network-filesystem smb/a\n"
                        "network-filesystem ssh/a\n"
                        "network-filesystem wsl/a\n"
                        "network-filesystem ceph/a\n"
                        "network-filesystem /elsewhere/x\n");
  assert_contains(f.items[0].detail, "overlay file system (mounted at /home/dev/proj/ovl)");
  assert_contains(f.items[1].detail, "FUSE file system (fuse.bindfs, mounted at "
                                     "/home/dev/proj/fz)");
  assert_contains(f.items[3].detail, "network file system (nfs4, mounted at /home/dev/proj/nfs)");
  assert_contains(f.items[5].detail, "(fuse.sshfs,");
  audit_findings_clear(&f);
}
END_TEST

START_TEST(test_mounts_not_reported) {
  /* A whole file system (root "/"), tmpfs, and a btrfs subvolume, seen
   * directly or through binds onto their own paths: nothing to say. */
  _cleanup_free_ char *a = mount_kinds(
      MI_ROOT "60 26 0:50 / /tmp rw - tmpfs tmpfs rw\n"
              "61 26 0:51 /@home /home rw,relatime - btrfs /dev/sda2 "
              "rw,ssd,subvolid=257,subvol=/@home\n"
              "62 61 0:51 /@home /home rw - btrfs /dev/sda2 rw,subvolid=257,subvol=/@home\n"
              "63 62 0:51 /@home/dev/proj /home/dev/proj rw - btrfs /dev/sda2 "
              "rw,subvolid=257,subvol=/@home\n",
      (const char *[]){"agent.lock", "tests/x", "/tmp/y", "/usr/z", NULL}, NULL);
  ck_assert_str_eq(a, "");

  /* But a directory inside a subvolume, mounted elsewhere, is a bind; an
   * option that merely ends in "subvol" is no subvolume. */
  _cleanup_free_ char *b = mount_kinds(
      MI_ROOT "61 26 0:51 /@home /home rw - btrfs /dev/sda2 rw,subvol=/@home\n"
              "70 26 0:51 /@home/dev /mnt/dev rw - btrfs /dev/sda2 rw,subvol=/@home\n"
              "71 26 0:52 /@x /mnt/x rw - btrfs /dev/sdb rw,notsubvol=/@x\n",
      (const char *[]){"agent.lock", "/mnt/dev/proj/x", "/mnt/x/y", NULL}, NULL);
  ck_assert_str_eq(b, "bind-mount /mnt/dev/proj/x\n"
                      "bind-mount /mnt/x/y\n");

  /* No mount holds the path (relative mount points, garbage). */
  _cleanup_free_ char *c = mount_kinds("", (const char *[]){"agent.lock", NULL}, NULL);
  ck_assert_str_eq(c, "");
  _cleanup_free_ char *d =
      mount_kinds("1 2\n\n  \nx y z\n1 2 3 /x rel\n", (const char *[]){"agent.lock", NULL}, NULL);
  ck_assert_str_eq(d, "");
  /* A line without the " - " part has no file system type: only its root
   * says anything. */
  _cleanup_free_ char *e =
      mount_kinds("1 0 8:1 / /\n2 1 8:1 /x /home/dev\n", (const char *[]){"agent.lock", NULL},
                  NULL);
  ck_assert_str_eq(e, "bind-mount agent.lock\n");
}
END_TEST

/* On real mounts, in a mount namespace of a child's own: a tmpfs (nothing
 * to say), a bind mount of a project, an overlay. */
typedef struct {
  const char *t;
} MountChild;

static bool child_write(FILE *out, const char *dir, const char *rel, const char *content) {
  _cleanup_free_ char *p = path_join(dir, rel);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  size_t len = strlen(content);
  if (fd < 0 || write(fd, content, len) != (ssize_t)len || close(fd) < 0) {
    fprintf(out, "ERROR write %s: %s\n", p, strerror(errno));
    return false;
  }
  return true;
}

static bool child_mkdir(FILE *out, const char *dir, const char *rel) {
  _cleanup_free_ char *p = path_join(dir, rel);
  if (mkdir(p, 0755) < 0) {
    fprintf(out, "ERROR mkdir %s: %s\n", p, strerror(errno));
    return false;
  }
  return true;
}

/* The chain in a child, "kind subject" per finding but the root one, with
 * the scratch tree `t` written as T. */
static void child_audit(FILE *out, const char *label, const char *t, const char *root) {
  fprintf(out, "== %s\n", label);
  _cleanup_free_ char *file = path_join(root, POLICY_FILE_NAME);
  Policy *pol = NULL;
  Matcher *m = NULL;
  ScanResult *r = NULL;
  Error err = {0};
  const char **pats = NULL;
  if (policy_load(file, &pol, &err) < 0) {
    goto fail;
  }
  pats = xcalloc(pol->n_patterns, sizeof(char *));
  for (size_t i = 0; i < pol->n_patterns; i++) {
    pats[i] = pol->patterns[i].pattern;
  }
  if (matcher_new(pats, pol->n_patterns, 0, &m, &err) < 0 ||
      scan_project(pol, m, &r, &err) < 0) {
    goto fail;
  }
  AuditFindings f = {0};
  audit_run(pol, m, r, &f);
  size_t tl = strlen(t);
  for (size_t i = 0; i < f.n; i++) {
    const char *s = f.items[i].subject;
    if (f.items[i].kind == AUDIT_ROOT) {
      continue;
    }
    bool in_t = strncmp(s, t, tl) == 0;
    fprintf(out, "%s %s%s\n", audit_kind_to_string(f.items[i].kind), in_t ? "T" : "",
            in_t ? s + tl : s);
  }
  audit_findings_clear(&f);
  goto done;
fail:
  fprintf(out, "ERROR %s\n", err.message);
done:
  free(pats);
  scan_result_free(r);
  matcher_free(m);
  policy_free(pol);
  error_clear(&err);
}

static void mounts_child(FILE *out, void *userdata) {
  const MountChild *c = userdata;
  if (!child_enter_mount_namespace(out)) {
    return;
  }
  _cleanup_free_ char *mnt = path_join(c->t, "mnt");
  _cleanup_free_ char *view = path_join(c->t, "view");
  _cleanup_free_ char *proj = path_join(mnt, "proj");
  _cleanup_free_ char *merged = path_join(mnt, "merged");
  if (mount("tmpfs", mnt, "tmpfs", 0, "mode=0755") < 0) {
    fprintf(out, "SKIP cannot mount a tmpfs: %s\n", strerror(errno));
    return;
  }
  static const char yaml[] = "protect:\n  - data\n";
  if (!child_mkdir(out, mnt, "proj") || !child_write(out, proj, POLICY_FILE_NAME, yaml) ||
      !child_write(out, proj, "data", "d")) {
    return;
  }
  child_audit(out, "tmpfs", c->t, proj);

  if (mount(proj, view, NULL, MS_BIND, NULL) < 0) {
    fprintf(out, "ERROR bind: %s\n", strerror(errno));
    return;
  }
  child_audit(out, "bind", c->t, view);

  if (!child_mkdir(out, mnt, "lower") || !child_mkdir(out, mnt, "upper") ||
      !child_mkdir(out, mnt, "work") || !child_mkdir(out, mnt, "merged") ||
      !child_write(out, mnt, "lower/" POLICY_FILE_NAME, yaml) ||
      !child_write(out, mnt, "lower/data", "d")) {
    return;
  }
  _cleanup_free_ char *opts =
      xasprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", mnt, mnt, mnt);
  if (mount("overlay", merged, "overlay", 0, opts) < 0) {
    fprintf(out, "== overlay\nunavailable: %s\n", strerror(errno));
    return;
  }
  child_audit(out, "overlay", c->t, merged);
}

START_TEST(test_mounts_real) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "mnt");
  make_dir(t, "view");
  MountChild c = {.t = t};
  _cleanup_free_ char *got = run_in_child(__func__, mounts_child, &c);
  if (got == NULL) {
    return;
  }
  static const char head[] = "== tmpfs\n"
                             "== bind\n"
                             "second-mount T/mnt/proj\n"
                             "bind-mount agent.lock\n"
                             "== overlay\n";
  if (strstr(got, "unavailable: ") != NULL) {
    ck_assert_msg(startswith(got, head), "got:\n%s", got);
    fprintf(stderr, "SKIPPED %s (overlay row): %s", __func__, got + strlen(head));
    return;
  }
  _cleanup_free_ char *want = xasprintf("%soverlay-filesystem agent.lock\n", head);
  ck_assert_str_eq(got, want);
}
END_TEST

/* ---- symbolic links inside protected directories ------------------------- */

START_TEST(test_links_out_of_protected_dirs) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *outside = make_tmpdir(); /* beside the project */
  make_file(outside, "o.txt", "o");
  make_file(t, "free.txt", "f");
  make_file(t, "locked.txt", "l");
  make_dir(t, "freedir");
  make_dir(t, "prot");
  make_dir(t, "prot/sub");
  make_file(t, "prot/sibling", "s");
  make_symlink(t, "prot/inner-ok", "sibling");          /* inside: fine */
  make_symlink(t, "prot/to-protected", "../locked.txt"); /* protected too */
  make_symlink(t, "prot/out-rel", "../free.txt");
  make_symlink(t, "prot/out-dir", "../freedir");
  make_symlink(t, "prot/dangling-out", "../not-yet"); /* O_CREAT follows it */
  make_symlink(t, "prot/devnull", "/dev/null");       /* nothing to protect there */
  make_symlink(t, "prot/loop", "loop");
  make_symlink(t, "prot/sub/deep", "../../free.txt");
  _cleanup_free_ char *o = path_join(outside, "o.txt");
  make_symlink(t, "prot/out-abs", o);

  AuditFindings f;
  audit(t, "protect:\n  - prot\n  - locked.txt\n", &f);
  _cleanup_free_ char *got = summary(&f);
  ck_assert_str_eq(got, "symlink-to-unprotected prot/dangling-out\n"
                        "symlink-to-unprotected prot/out-abs\n"
                        "symlink-to-unprotected prot/out-dir\n"
                        "symlink-to-unprotected prot/out-rel\n"
                        "symlink-to-unprotected prot/sub/deep\n");
  const char *rel = get(&f, AUDIT_SYMLINK_OUTSIDE, "prot/out-rel")->detail;
  assert_contains(rel, "symbolic link in a protected directory to free.txt, which is not "
                       "protected");
  assert_contains(rel, "protect free.txt as well");
  assert_contains(get(&f, AUDIT_SYMLINK_OUTSIDE, "prot/out-abs")->detail, o);
  assert_contains(get(&f, AUDIT_SYMLINK_OUTSIDE, "prot/dangling-out")->detail, "to not-yet,");
  audit_findings_clear(&f);

  /* Protect what they point at (inside the project) and only the link
   * leaving it is left. */
  assert_summary(t, "protect:\n  - prot\n  - locked.txt\n  - free.txt\n  - freedir\n  - not-yet\n",
                 "unmatched-path `not-yet`\n"
                 "symlink-to-unprotected prot/out-abs\n");
  /* Not walked when the directory is not protected as a whole. */
  assert_summary(t, "protect:\n  - prot/sibling\n  - locked.txt\n", "");
}
END_TEST

/* The last finding of kind `k`. */
static const AuditFinding *last_of(const AuditFindings *f, AuditKind k) {
  for (size_t i = f->n; i > 0; i--) {
    if (f->items[i - 1].kind == k) {
      return &f->items[i - 1];
    }
  }
  ck_abort_msg("no %s finding", audit_kind_to_string(k));
  return NULL;
}

START_TEST(test_links_out_capped) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "free.txt", "f");
  make_dir(t, "prot");
  for (int i = 0; i < 25; i++) {
    _cleanup_free_ char *name = xasprintf("prot/l%02d", i);
    make_symlink(t, name, "../free.txt");
  }
  AuditFindings f;
  audit(t, "protect:\n  - prot\n", &f);
  _cleanup_free_ char *got = summary(&f);
  char *want = xstrdup("");
  for (int i = 0; i < 20; i++) {
    char *next = xasprintf("%ssymlink-to-unprotected prot/l%02d\n", want, i);
    free(want);
    want = next;
  }
  char *next = xasprintf("%ssymlink-to-unprotected 5 more symbolic links\n", want);
  free(want);
  want = next;
  ck_assert_str_eq(got, want);
  free(want);
  ck_assert_str_eq(last_of(&f, AUDIT_SYMLINK_OUTSIDE)->detail,
                   "in protected directories point outside what is protected, like those above");
  audit_findings_clear(&f);

  /* 21: one more, in the singular. */
  for (int i = 21; i < 25; i++) {
    _cleanup_free_ char *p = xasprintf("%s/prot/l%02d", t, i);
    ck_assert_int_eq(unlink(p), 0);
  }
  audit(t, "protect:\n  - prot\n", &f);
  ck_assert_str_eq(last_of(&f, AUDIT_SYMLINK_OUTSIDE)->subject, "1 more symbolic link");
  ck_assert_str_eq(last_of(&f, AUDIT_SYMLINK_OUTSIDE)->detail,
                   "in protected directories points outside what is protected, like those above");
  audit_findings_clear(&f);

  /* 20 are named, and nothing more is said. */
  _cleanup_free_ char *p = xasprintf("%s/prot/l20", t);
  ck_assert_int_eq(unlink(p), 0);
  audit(t, "protect:\n  - prot\n", &f);
  _cleanup_free_ char *twenty = summary(&f);
  ck_assert_uint_eq(strlen(twenty), 20 * strlen("symlink-to-unprotected prot/l00\n"));
  ck_assert_str_eq(last_of(&f, AUDIT_SYMLINK_OUTSIDE)->subject, "prot/l19");
  audit_findings_clear(&f);
}
END_TEST

/* ---- .git/config: core.hooksPath, core.fsmonitor ------------------------- */

/* A git repository whose .git/config says `config`, with .git/hooks and
 * .git/config protected, so only what the config points at is left. */
static char *git_config_findings(const char *t, const char *config, const char *more_yaml,
                                 AuditFindings *keep) {
  _cleanup_free_ char *git = path_join(t, ".git");
  struct stat st;
  if (stat(git, &st) < 0) {
    make_git_dir(t);
  }
  make_file(t, ".git/config", config);
  _cleanup_free_ char *yaml =
      xasprintf("protect:\n  - .git/hooks\n  - .git/config\n%s", more_yaml ? more_yaml : "");
  AuditFindings f;
  audit(t, yaml, &f);
  char *got = summary(&f);
  if (keep != NULL) {
    *keep = f;
  } else {
    audit_findings_clear(&f);
  }
  return got;
}

static void assert_git(const char *t, const char *config, const char *more_yaml,
                       const char *want) {
  _cleanup_free_ char *got = git_config_findings(t, config, more_yaml, NULL);
  ck_assert_msg(streq(got, want), "config:\n%s\nfindings:\n%s\nwant:\n%s", config, got, want);
}

START_TEST(test_git_hooks_path) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, ".githooks");
  make_file(t, ".githooks/pre-commit", "#!/bin/sh\n");

  AuditFindings f;
  _cleanup_free_ char *got =
      git_config_findings(t, "[core]\n\thooksPath = .githooks\n", NULL, &f);
  ck_assert_str_eq(got, "git-hooks-path-unprotected .githooks\n");
  const char *d = f.items[0].detail;
  assert_contains(d, "core.hooksPath");
  assert_contains(d, "agent.lock does not protect it");
  assert_contains(d, "outside any sandbox");
  audit_findings_clear(&f);

  /* Protected: nothing to say. So is an unset or empty one. */
  assert_git(t, "[core]\n\thooksPath = .githooks\n", "  - .githooks\n", "");
  assert_git(t, "[core]\n\thooksPath = .githooks/\n", "  - '.githooks/**'\n", "");
  assert_git(t, "[core]\n\tbare = false\n", NULL, "");
  assert_git(t, "[core]\n\thooksPath =\n", NULL, "");
  /* Its files protected but not the directory: a new hook can be made. */
  assert_git(t, "[core]\n\thooksPath = .githooks\n", "  - '.githooks/*'\n",
             "git-hooks-path-unprotected .githooks\n");

  /* Outside the project: as absolute path, or as written for `~`. */
  _cleanup_free_ char *abs = xasprintf("[core]\n\thooksPath = %s/../elsewhere\n", t);
  _cleanup_free_ char *parent = path_dirname(t);
  _cleanup_free_ char *want_abs = xasprintf("git-hooks-path-unprotected %s/elsewhere\n", parent);
  assert_git(t, abs, NULL, want_abs);
  _cleanup_free_ char *want_up = xasprintf("git-hooks-path-unprotected %s/up\n", parent);
  assert_git(t, "[core]\n\thooksPath = ../up\n", NULL, want_up);
  assert_git(t, "[core]\n\thooksPath = ~/hooks\n", NULL,
             "git-hooks-path-unprotected ~/hooks\n");
}
END_TEST

/* How .git/config is read: git's syntax, [core] only, the last value. */
START_TEST(test_git_config_syntax) {
  _cleanup_free_ char *t = make_tmpdir();
  static const char want[] = "git-hooks-path-unprotected .githooks\n";
  static const struct {
    const char *config;
    bool reported;
  } rows[] = {
      {"[core]\n\thooksPath = .githooks\n", true},
      /* Section and key names ignore case; CRLF; no blanks. */
      {"[CORE]\r\n\tHOOKSPATH=.githooks\r\n", true},
      {"[Core]\n  hookspath\t=\t.githooks   \n", true},
      /* A key on the line of its section. */
      {"[core] hooksPath = .githooks\n", true},
      /* Quotes, escapes, comments, continued lines. */
      {"[core]\n\thooksPath = \".githooks\" ; a comment\n", true},
      {"[core]\n\thooksPath = .git\"hooks\" # comment\n", true},
      {"[core]\n\thooksPath = .git\\\nhooks\n", true},
      {"# [core]\n; hooksPath = x\n[core]\nhooksPath = .githooks\n", true},
      /* The last one wins. */
      {"[core]\n\thooksPath = protected-hooks\n[core]\n\thooksPath = .githooks\n", true},
      {"[core]\n\thooksPath = .githooks\n\thooksPath = protected-hooks\n", false},
      /* Not the core section. */
      {"[alias]\n\thooksPath = .githooks\n", false},
      {"[core \"sub\"]\n\thooksPath = .githooks\n", false},
      {"[core.sub]\n\thooksPath = .githooks\n", false},
      {"[corex]\n\thooksPath = .githooks\n", false},
      {"[core]\n[user]\n\thooksPath = .githooks\n", false},
      /* Another key that merely begins or ends the same way. */
      {"[core]\n\thooksPathX = .githooks\n\txhooksPath = .githooks\n", false},
      /* Includes are not followed. */
      {"[include]\n\tpath = other\n", false},
      /* git refuses the whole file, and runs nothing from it. */
      {"[core]\n\thooksPath = \".githooks\n", false},
      {"[core]\n\thooksPath = .githooks\n\tbad\\key = x\n", false},
      {"[core]\n\thooksPath = .githooks\n\t= x\n", false},
      {"[core\n\thooksPath = .githooks\n", false},
      {"[core]\n\thooksPath = .git\\qhooks\n", false},
  };
  make_file(t, "other", "[core]\n\thooksPath = .githooks\n");
  make_dir(t, "protected-hooks");
  for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
    _cleanup_free_ char *got = git_config_findings(t, rows[i].config, "  - protected-hooks\n", NULL);
    const char *w = rows[i].reported ? want : "";
    ck_assert_msg(streq(got, w), "row %zu:\n%s\ngot:\n%s\nwant:\n%s", i, rows[i].config, got, w);
  }
  /* A value with blanks inside keeps them. */
  assert_git(t, "[core]\n\thooksPath = \"my  hooks\" \n", NULL,
             "git-hooks-path-unprotected my  hooks\n");
  assert_git(t, "[core]\n\thooksPath = my\t hooks \n", NULL,
             "git-hooks-path-unprotected my  hooks\n");
}
END_TEST

START_TEST(test_git_fsmonitor) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "fsmon.sh", "#!/bin/sh\n");
  make_dir(t, "tools");
  make_file(t, "tools/fsmon", "#!/bin/sh\n");

  /* A program in the project the policy leaves writable. */
  AuditFindings f;
  _cleanup_free_ char *got =
      git_config_findings(t, "[core]\n\tfsmonitor = ./fsmon.sh --flag\n", NULL, &f);
  ck_assert_str_eq(got, "git-fsmonitor-unprotected fsmon.sh\n");
  assert_contains(f.items[0].detail, "core.fsmonitor");
  assert_contains(f.items[0].detail, "at every git command");
  audit_findings_clear(&f);
  assert_git(t, "[core]\n\tfsmonitor = \"tools/fsmon\" 2\n", NULL,
             "git-fsmonitor-unprotected tools/fsmon\n");
  assert_git(t, "[core]\n\tfsmonitor = ~/bin/fsmon\n", NULL,
             "git-fsmonitor-unprotected ~/bin/fsmon\n");
  _cleanup_free_ char *parent = path_dirname(t);
  _cleanup_free_ char *want_up = xasprintf("git-fsmonitor-unprotected %s/fsmon\n", parent);
  assert_git(t, "[core]\n\tfsmonitor = ../fsmon\n", NULL, want_up);

  /* Protected, or found on PATH: it runs code, which is worth a note, but
   * nothing an agent can change. */
  got = (free(got), git_config_findings(t, "[core]\n\tfsmonitor = tools/fsmon\n", "  - tools\n",
                                        &f));
  ck_assert_str_eq(got, "git-fsmonitor .git/config\n");
  assert_contains(f.items[0].detail, "sets core.fsmonitor to `tools/fsmon`");
  audit_findings_clear(&f);
  assert_git(t, "[core]\n\tfsmonitor = watchman-hook\n", NULL, "git-fsmonitor .git/config\n");

  /* Git's own daemon: true in any spelling, or a bare key. */
  static const char *const yes[] = {"true", "TRUE", "yes", "on", "1", "7", "1k"};
  for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
    _cleanup_free_ char *c = xasprintf("[core]\n\tfsmonitor = %s\n", yes[i]);
    assert_git(t, c, NULL, "git-fsmonitor .git/config\n");
  }
  got = (free(got), git_config_findings(t, "[core]\n\tfsmonitor\n", NULL, &f));
  ck_assert_str_eq(got, "git-fsmonitor .git/config\n");
  assert_contains(f.items[0].detail, "built-in file system monitor");
  audit_findings_clear(&f);

  /* Off. */
  static const char *const no[] = {"false", "no", "off", "0", "\"\""};
  for (size_t i = 0; i < ELEMENTSOF(no); i++) {
    _cleanup_free_ char *c = xasprintf("[core]\n\tfsmonitor = %s\n", no[i]);
    assert_git(t, c, NULL, "");
  }
  assert_git(t, "[core]\n\tfsmonitor = true\n\tfsmonitor = false\n", NULL, "");
  assert_git(t, "[other]\n\tfsmonitor = true\n", NULL, "");
}
END_TEST

START_TEST(test_git_config_no_repository) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "README", "r");
  /* Not a repository here: a .git file (a worktree) says only that the
   * git directory is elsewhere, and a config lying anywhere else in the
   * project is not read. */
  make_file(t, ".git", "gitdir: /somewhere/else\n");
  make_file(t, "config", "[core]\n\thooksPath = x\n\tfsmonitor = true\n");
  assert_summary(t, "protect:\n  - README\n", "git-dir-outside-project .git\n");
  /* A repository without a config. */
  _cleanup_free_ char *git = path_join(t, ".git");
  ck_assert_int_eq(unlink(git), 0);
  make_dir(t, ".git");
  assert_summary(t, "protect:\n  - README\n  - .git\n", "");
}
END_TEST

/* ---- Landlock (injected plans, over real directories) -------------------- */

/* The directories of the injected plans exist (the audit names only those
 * that can refuse new entries): BASE/home/dev/proj, with .git and tests. */
static char *ll_base;

static void ll_tree(void) {
  if (ll_base == NULL) {
    ll_base = make_tmpdir();
    static const char *const dirs[] = {"home", "home/dev", "home/dev/proj",
                                       "home/dev/proj/.git", "home/dev/proj/tests"};
    for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
      make_dir(ll_base, dirs[i]);
    }
  }
}

static char *ll(const char *rel) {
  ll_tree();
  return path_join(ll_base, rel);
}

/* audit_landlock() on `plan`, as "kind subject" lines; the findings are
 * kept in *keep, or cleared when it is NULL. */
static char *landlock_lines(const Plan *plan, int abi, const char *root, AuditFindings *keep) {
  AuditFindings f = {0};
  audit_landlock(plan, abi, root, &f);
  char *out = all_lines(&f);
  if (keep != NULL) {
    *keep = f;
  } else {
    audit_findings_clear(&f);
  }
  return out;
}

static char *landlock_kinds(Backend backend, int abi, const char *root, AuditFindings *keep) {
  _cleanup_free_ char *home = ll("home"), *dev = ll("home/dev"), *proj = ll("home/dev/proj"),
                      *git = ll("home/dev/proj/.git"), *tests = ll("home/dev/proj/tests"),
                      *linked = ll("home/dev/proj/linked.txt");
  char *restricted[] = {(char *)"/", home, dev, proj, git, tests};
  Plan plan = {.backend = backend};
  plan.carve.restricted = restricted;
  plan.carve.n_restricted = ELEMENTSOF(restricted);
  char *withheld[] = {linked};
  plan.carve.withheld = withheld;
  plan.carve.n_withheld = ELEMENTSOF(withheld);
  char *unlisted[] = {dev};
  plan.carve.unlisted = unlisted;
  plan.carve.n_unlisted = ELEMENTSOF(unlisted);
  return landlock_lines(&plan, abi, root, keep);
}

START_TEST(test_landlock) {
  AuditFindings f;
  _cleanup_free_ char *proj = ll("home/dev/proj");
  _cleanup_free_ char *got = landlock_kinds(BACKEND_LANDLOCK, 3, proj, &f);
  _cleanup_free_ char *want = xasprintf("landlock-metadata with the Landlock backend,\n"
                                        "landlock-no-new-entries %s/home\n"
                                        "landlock-no-new-entries %s/home/dev\n"
                                        "landlock-no-new-entries .\n"
                                        "landlock-no-new-entries .git\n"
                                        "landlock-no-new-entries tests\n"
                                        "landlock-linked-file linked.txt\n"
                                        "landlock-unlisted-directory %s/home/dev\n",
                                        ll_base, ll_base, ll_base);
  ck_assert_str_eq(got, want);
  assert_contains(f.items[0].detail, "mode, owner, times and extended attributes");
  assert_contains(f.items[6].detail, "read-only while the agent runs");
  assert_contains(f.items[6].detail, "hard links");
  ck_assert(!audit_weakens(f.items[6].kind));
  assert_contains(f.items[7].detail, "cannot be listed");
  ck_assert(!audit_weakens(f.items[7].kind));
  assert_contains(f.items[0].detail, "chmod, chown, utime or setxattr");
  ck_assert(audit_weakens(f.items[0].kind));
  /* Each directory on the way is told apart by where it is: above the
   * project, the root itself, the git directory, inside the project. */
  for (size_t i = 1; i <= 5; i++) {
    assert_contains(f.items[i].detail, "accepts no new entries");
    ck_assert(!audit_weakens(f.items[i].kind));
  }
  assert_contains(f.items[1].detail, "the project lies below it");
  assert_contains(f.items[1].detail, "temporary files");
  assert_contains(f.items[2].detail, "the project lies below it");
  assert_contains(f.items[3].detail, "it holds agent.lock");
  assert_contains(f.items[3].detail, "only in its subdirectories");
  assert_contains(f.items[4].detail, "git cannot stage, commit");
  assert_contains(f.items[4].detail, ".git/index.lock");
  assert_contains(f.items[5].detail, "leads to a protected path");
  assert_contains(f.items[5].detail, "move protected files into a directory of their own");
  for (size_t i = 1; i <= 4; i++) {
    ck_assert_ptr_null(strstr(f.items[i].detail, "move protected files"));
  }
  audit_findings_clear(&f);

  /* Before ABI 3, truncation is not governed either. */
  _cleanup_free_ char *v2 = landlock_kinds(BACKEND_LANDLOCK, 2, proj, &f);
  _cleanup_free_ char *v2_want = xasprintf("landlock-metadata with the Landlock backend,\n"
                                           "landlock-truncate with Landlock ABI 2,\n"
                                           "landlock-no-new-entries %s/home\n",
                                           ll_base);
  ck_assert_ptr_nonnull(strstr(v2, v2_want));
  assert_contains(f.items[1].detail, "truncated");
  audit_findings_clear(&f);
  _cleanup_free_ char *v1 = landlock_kinds(BACKEND_LANDLOCK, 1, proj, NULL);
  assert_contains(v1, "landlock-truncate with Landlock ABI 1,\n");
  _cleanup_free_ char *v7 = landlock_kinds(BACKEND_LANDLOCK, 7, proj, NULL);
  ck_assert_ptr_null(strstr(v7, "landlock-truncate"));
  /* No Landlock at all (a dry run): the ABI it would get is unknown. */
  _cleanup_free_ char *v0 = landlock_kinds(BACKEND_LANDLOCK, 0, proj, NULL);
  ck_assert_ptr_null(strstr(v0, "landlock-truncate"));
  assert_contains(v0, "landlock-metadata");
  _cleanup_free_ char *vneg = landlock_kinds(BACKEND_LANDLOCK, -38, proj, NULL);
  ck_assert_ptr_null(strstr(vneg, "landlock-truncate"));

  /* Without a root, paths stay absolute. */
  _cleanup_free_ char *abs = landlock_kinds(BACKEND_LANDLOCK, 4, NULL, NULL);
  _cleanup_free_ char *abs_want = xasprintf("landlock-no-new-entries %s\n"
                                            "landlock-no-new-entries %s/.git\n"
                                            "landlock-no-new-entries %s/tests\n",
                                            proj, proj, proj);
  assert_contains(abs, abs_want);

  /* Names that cannot refuse new entries are not named: one that does not
   * exist (on the way to a literal naming nothing) and a file (a
   * worktree's .git); and a directory outside the project that a link
   * leads to is not said to hold the project. */
  _cleanup_free_ char *nowhere = ll("home/dev/proj/nowhere"),
                      *file = ll("home/dev/proj/tests/.git"), *out = ll("home/out");
  make_file(ll_base, "home/dev/proj/tests/.git", "gitdir: elsewhere\n");
  make_dir(ll_base, "home/out");
  char *odd[] = {nowhere, file, out};
  Plan oddp = {.backend = BACKEND_LANDLOCK};
  oddp.carve.restricted = odd;
  oddp.carve.n_restricted = ELEMENTSOF(odd);
  AuditFindings o;
  _cleanup_free_ char *o_got = landlock_lines(&oddp, 5, proj, &o);
  _cleanup_free_ char *o_want = xasprintf("landlock-metadata with the Landlock backend,\n"
                                          "landlock-no-new-entries %s\n", out);
  ck_assert_str_eq(o_got, o_want);
  assert_contains(o.items[1].detail, "leads to a protected path");
  ck_assert_ptr_null(strstr(o.items[1].detail, "the project lies below it"));
  audit_findings_clear(&o);

  /* Another backend: nothing. */
  _cleanup_free_ char *mount = landlock_kinds(BACKEND_MOUNT, 1, proj, NULL);
  ck_assert_str_eq(mount, "");

  /* A plan with nothing restricted still says what Landlock leaves out. */
  Plan empty = {.backend = BACKEND_LANDLOCK};
  _cleanup_free_ char *e_got = landlock_lines(&empty, 5, proj, NULL);
  ck_assert_str_eq(e_got, "landlock-metadata with the Landlock backend,\n");
}
END_TEST

/* ---- inherited descriptors ----------------------------------------------- */

START_TEST(test_inherited_fds_real) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "locked.txt", "l");
  make_hardlink(t, "locked.txt", "alias");
  make_file(t, "free.txt", "f");
  make_dir(t, "prot");
  make_file(t, "prot/a", "a");
  Loaded l;
  load(&l, t, "protect:\n  - locked.txt\n  - prot\n");
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_int_eq(scan_project(l.policy, l.m, &r, &err), 0);

  static const struct {
    const char *rel;
    int flags;
  } opens[] = {
      {"locked.txt", O_WRONLY}, {"prot/a", O_RDWR | O_APPEND}, {"alias", O_WRONLY},
      {"free.txt", O_WRONLY},   {"locked.txt", O_RDONLY},      {"prot", O_RDONLY | O_DIRECTORY},
  };
  int fds[ELEMENTSOF(opens)];
  for (size_t i = 0; i < ELEMENTSOF(opens); i++) {
    _cleanup_free_ char *p = path_join(t, opens[i].rel);
    fds[i] = open(p, opens[i].flags | O_CLOEXEC);
    ck_assert_int_ge(fds[i], 0);
  }
  int pipe_fds[2];
  ck_assert_int_eq(pipe2(pipe_fds, O_CLOEXEC), 0);
  int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ck_assert_int_ge(null_fd, 0);
  AuditFd *list = NULL;
  size_t n = 0;
  ck_assert_int_eq(audit_list_fds(true, &list, &n), 0);
  /* Named: what a path reaches (a file, a directory); not a pipe or a
   * character device, which no policy protects. */
  _cleanup_free_ char *locked_path = path_join(t, "locked.txt");
  _cleanup_free_ char *prot_path = path_join(t, "prot");
  size_t seen = 0;
  for (size_t i = 0; i < n; i++) {
    if (list[i].fd == fds[0]) {
      ck_assert_str_eq(list[i].path, locked_path);
      ck_assert_int_eq(list[i].flags & O_ACCMODE, O_WRONLY);
      seen |= 1;
    } else if (list[i].fd == fds[5]) {
      ck_assert_str_eq(list[i].path, prot_path);
      ck_assert(S_ISDIR(list[i].mode));
      seen |= 2;
    } else if (list[i].fd == pipe_fds[1] || list[i].fd == null_fd) {
      ck_assert_ptr_null(list[i].path);
      ck_assert_int_eq(list[i].flags & O_ACCMODE, O_WRONLY);
      seen |= list[i].fd == null_fd ? 4 : 8;
    }
  }
  ck_assert_uint_eq(seen, 15);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  close(null_fd);
  AuditFindings f = {0};
  audit_inherited_fds(l.policy, l.m, r, list, n, &f);
  _cleanup_free_ char *got = all_lines(&f);
  /* In descriptor order; the hard link is known by its identity. */
  ck_assert_str_eq(got, "inherited-write-descriptor locked.txt\n"
                        "inherited-write-descriptor prot/a\n"
                        "inherited-write-descriptor locked.txt\n");
  _cleanup_free_ char *d0 = xasprintf("is open for writing on descriptor %d,", fds[0]);
  assert_contains(f.items[0].detail, d0);
  _cleanup_free_ char *d2 = xasprintf("`exec %d>&-`", fds[2]);
  assert_contains(f.items[2].detail, d2);
  audit_findings_clear(&f);
  audit_fds_free(list, n);

  /* Closed, nothing is left to say. */
  for (size_t i = 0; i < ELEMENTSOF(opens); i++) {
    close(fds[i]);
  }
  ck_assert_int_eq(audit_list_fds(true, &list, &n), 0);
  audit_inherited_fds(l.policy, l.m, r, list, n, &f);
  ck_assert_uint_eq(f.n, 0);
  audit_fds_free(list, n);
  loaded_clear(&l);
}
END_TEST

/* Every open descriptor is listed, in order, each with its identity and
 * access mode; a name only where a path can lead (not for a pipe), also
 * for one far beyond those usually open. */
static const AuditFd *find_fd(const AuditFd *v, size_t n, int fd) {
  for (size_t i = 0; i < n; i++) {
    if (v[i].fd == fd) {
      return &v[i];
    }
  }
  return NULL;
}

START_TEST(test_list_fds_kinds) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "f", "x");
  _cleanup_free_ char *f = path_join(t, "f");
  int file = open(f, O_RDWR | O_CLOEXEC);
  int dir = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int opath = open(f, O_PATH | O_CLOEXEC);
  int pipes[2];
  ck_assert_int_eq(pipe2(pipes, O_CLOEXEC), 0);
  ck_assert(file >= 0 && dir >= 0 && opath >= 0);
  struct stat fst;
  ck_assert_int_eq(stat(f, &fst), 0);

  /* Far beyond the usual ones, where the limit allows. */
  struct rlimit rl;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  int far = -1;
  if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1200) {
    struct rlimit raised = {1201, rl.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &raised), 0);
    far = 1200;
    ck_assert_int_eq(dup3(file, far, O_CLOEXEC), far);
  }

  AuditFd *v = NULL;
  size_t n = 0;
  ck_assert_int_eq(audit_list_fds(true, &v, &n), 0);
  for (size_t i = 1; i < n; i++) {
    ck_assert_int_lt(v[i - 1].fd, v[i].fd);
  }
  const AuditFd *a = find_fd(v, n, file);
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a->path, f);
  ck_assert_int_eq(a->flags & O_ACCMODE, O_RDWR);
  ck_assert(a->dev == fst.st_dev && a->ino == fst.st_ino);
  a = find_fd(v, n, dir);
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a->path, t);
  ck_assert(S_ISDIR(a->mode));
  a = find_fd(v, n, opath);
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a->path, f);
  ck_assert(a->flags & O_PATH);
  for (int k = 0; k < 2; k++) {
    a = find_fd(v, n, pipes[k]);
    ck_assert_ptr_nonnull(a);
    ck_assert(S_ISFIFO(a->mode));
    ck_assert_ptr_null(a->path);
  }
  if (far >= 0) {
    a = find_fd(v, n, far);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->path, f);
    ck_assert_int_eq(a->flags & O_ACCMODE, O_RDWR);
  }
  audit_fds_free(v, n);
  if (far >= 0) {
    close(far);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  }
  close(file);
  close(dir);
  close(opath);
  close(pipes[0]);
  close(pipes[1]);
}
END_TEST

START_TEST(test_inherited_fds_injected) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "locked.txt", "l");
  make_dir(t, "prot");
  Loaded l;
  load(&l, t, "protect:\n  - locked.txt\n  - prot\n");
  _cleanup_error_ Error err = {0};
  _cleanup_scan_result_ ScanResult *r = NULL;
  ck_assert_int_eq(scan_project(l.policy, l.m, &r, &err), 0);
  const ProtectedPath *lk = NULL;
  for (size_t i = 0; i < r->n_paths; i++) {
    if (streq(r->paths[i].relative, "locked.txt")) {
      lk = &r->paths[i];
    }
  }
  ck_assert_ptr_nonnull(lk);
  _cleanup_free_ char *in_prot = path_join(t, "prot/new");
  _cleanup_free_ char *free_txt = path_join(t, "free.txt");
  AuditFd fds[] = {
      /* Its identity, whatever the name (opened by another path). */
      {.fd = 3, .path = (char *)"/elsewhere/x", .dev = lk->dev, .ino = lk->ino,
       .mode = S_IFREG | 0644, .flags = O_WRONLY},
      /* A name the policy protects (inside a protected directory). */
      {.fd = 4, .path = in_prot, .dev = 1, .ino = 1, .mode = S_IFREG | 0644, .flags = O_RDWR},
      /* Not reported: read-only, a directory, unprotected, a pipe. */
      {.fd = 5, .path = (char *)"/elsewhere/x", .dev = lk->dev, .ino = lk->ino,
       .mode = S_IFREG | 0644, .flags = O_RDONLY},
      {.fd = 6, .path = in_prot, .dev = 1, .ino = 2, .mode = S_IFDIR | 0755, .flags = O_RDONLY},
      {.fd = 7, .path = free_txt, .dev = 1, .ino = 3, .mode = S_IFREG | 0644, .flags = O_RDWR},
      {.fd = 8, .path = (char *)"pipe:[1234]", .dev = 1, .ino = 4, .mode = S_IFIFO | 0600,
       .flags = O_WRONLY},
      {.fd = 9, .path = NULL, .dev = 1, .ino = 5, .mode = S_IFCHR | 0600, .flags = O_WRONLY},
      /* Unnamed, but known by its identity. */
      {.fd = 10, .path = NULL, .dev = lk->dev, .ino = lk->ino, .mode = S_IFREG | 0644,
       .flags = O_WRONLY},
  };
  AuditFindings f = {0};
  audit_inherited_fds(l.policy, l.m, r, fds, ELEMENTSOF(fds), &f);
  _cleanup_free_ char *got = all_lines(&f);
  ck_assert_str_eq(got, "inherited-write-descriptor locked.txt\n"
                        "inherited-write-descriptor prot/new\n"
                        "inherited-write-descriptor locked.txt\n");
  assert_contains(f.items[1].detail, "descriptor 4,");
  assert_contains(f.items[2].detail, "descriptor 10,");
  audit_findings_clear(&f);
  loaded_clear(&l);
}
END_TEST

/* ---- case-insensitive directories ---------------------------------------- */

/* An injected probe: the directories listed are case-insensitive (for
 * `why`); every directory asked about is recorded. */
typedef struct {
  const char *const *insensitive;
  const char *why;
  char *asked;
} FakeCase;

static const char *fake_case_probe(void *userdata, const char *dir) {
  FakeCase *c = userdata;
  char *next = xasprintf("%s%s\n", c->asked ? c->asked : "", dir);
  free(c->asked);
  c->asked = next;
  for (size_t i = 0; c->insensitive[i] != NULL; i++) {
    if (streq(c->insensitive[i], dir)) {
      return c->why;
    }
  }
  return NULL;
}

static char *case_kinds(const char *const *insensitive, char **ret_asked, AuditFindings *keep) {
  static const char *const rel[] = {"agent.lock", "tests/golden/a.json", "tests/golden/b.json",
                                    "docs/x"};
  char *abs[ELEMENTSOF(rel)];
  for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
    abs[i] = path_join(MI_PROJ, rel[i]);
  }
  FakeCase c = {.insensitive = insensitive, .why = "casefold"};
  AuditFindings f = {0};
  audit_case_insensitive(MI_PROJ, (const char *const *)abs, ELEMENTSOF(abs), fake_case_probe, &c,
                         &f);
  for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
    free(abs[i]);
  }
  char *out = all_lines(&f);
  if (ret_asked != NULL) {
    *ret_asked = c.asked;
  } else {
    free(c.asked);
  }
  if (keep != NULL) {
    *keep = f;
  } else {
    audit_findings_clear(&f);
  }
  return out;
}

START_TEST(test_case_insensitive) {
  /* None: every directory on the way is asked about, once. */
  char *asked = NULL;
  _cleanup_free_ char *none = case_kinds((const char *const[]){NULL}, &asked, NULL);
  ck_assert_str_eq(none, "");
  ck_assert_str_eq(asked, "/\n/home\n/home/dev\n/home/dev/proj\n/home/dev/proj/docs\n"
                          "/home/dev/proj/tests\n/home/dev/proj/tests/golden\n");
  free(asked);

  /* The topmost one of a chain, and nothing below it is even asked. */
  AuditFindings f;
  _cleanup_free_ char *tests = case_kinds(
      (const char *const[]){"/home/dev/proj/tests", "/home/dev/proj/tests/golden", NULL}, &asked,
      &f);
  ck_assert_str_eq(tests, "case-insensitive-directory tests\n");
  ck_assert_ptr_null(strstr(asked, "golden"));
  free(asked);
  assert_contains(f.items[0].detail, "is case-insensitive (casefold)");
  assert_contains(f.items[0].detail, "patterns match case-sensitively");
  audit_findings_clear(&f);

  /* Two chains; and one above the project, shown absolute. */
  _cleanup_free_ char *two = case_kinds(
      (const char *const[]){"/home/dev/proj/docs", "/home/dev/proj/tests/golden", NULL}, NULL,
      NULL);
  ck_assert_str_eq(two, "case-insensitive-directory docs\n"
                        "case-insensitive-directory tests/golden\n");
  _cleanup_free_ char *above = case_kinds(
      (const char *const[]){"/home/dev", "/home/dev/proj", "/home/dev/proj/docs", NULL}, NULL, NULL);
  ck_assert_str_eq(above, "case-insensitive-directory /home/dev\n");
  _cleanup_free_ char *root = case_kinds((const char *const[]){"/home/dev/proj", NULL}, NULL, NULL);
  ck_assert_str_eq(root, "case-insensitive-directory .\n");
  /* A protected path itself being a case-insensitive directory is fine:
   * all of it is protected. */
  _cleanup_free_ char *leaf =
      case_kinds((const char *const[]){"/home/dev/proj/docs/x", NULL}, NULL, NULL);
  ck_assert_str_eq(leaf, "");
}
END_TEST

/* Which mounts the probe asks statfs(2) about: every type but those that
 * only ignore case in a casefold directory. */
START_TEST(test_fs_may_ignore_case) {
  static const struct {
    const char *fstype;
    bool may;
  } table[] = {
      {"ext4", false},   {"tmpfs", false}, {"f2fs", false},   {"btrfs", false},
      {"ext2", false},   {"bcachefs", false}, {"vfat", true},  {"msdos", true},
      {"exfat", true},   {"hfsplus", true}, {"ntfs3", true},  {"ntfs", true},
      {"xfs", true},     {"fuse.sshfs", true}, {"overlay", true}, {"cifs", true},
      {"", true},        {"EXT4", true},   {"ext4x", true},   {NULL, true},
  };
  for (size_t i = 0; i < ELEMENTSOF(table); i++) {
    ck_assert_msg(audit_fs_may_ignore_case(table[i].fstype) == table[i].may, "%s: want %d",
                  table[i].fstype ? table[i].fstype : "(null)", table[i].may);
  }
}
END_TEST

START_TEST(test_case_probe_real) {
  /* The scratch directory is on an ordinary case-sensitive file system
   * here; a directory that cannot be opened says nothing. */
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "Dir");
  _cleanup_free_ char *d = path_join(t, "Dir");
  ck_assert_ptr_null(audit_case_probe(NULL, d));
  _cleanup_free_ char *missing = path_join(t, "missing");
  ck_assert_ptr_null(audit_case_probe(NULL, missing));
  /* audit_run says nothing either, so the trees above do not need to
   * leave it out. */
  make_file(t, "a", "a");
  AuditFindings f;
  audit(t, "protect:\n  - a\n", &f);
  for (size_t i = 0; i < f.n; i++) {
    ck_assert_int_ne(f.items[i].kind, AUDIT_CASE_INSENSITIVE);
  }
  audit_findings_clear(&f);
}
END_TEST

/* A real casefold tmpfs (Linux 6.13+, with CONFIG_UNICODE), in a mount
 * namespace of a child's own. */
static void casefold_child(FILE *out, void *userdata) {
  const char *t = userdata;
  if (!child_enter_mount_namespace(out)) {
    return;
  }
  _cleanup_free_ char *mnt = path_join(t, "mnt");
  if (mount("tmpfs", mnt, "tmpfs", 0, "mode=0755,casefold") < 0) {
    fprintf(out, "SKIP no casefold tmpfs on this kernel: %s\n", strerror(errno));
    return;
  }
  _cleanup_free_ char *proj = path_join(mnt, "proj");
  if (!child_mkdir(out, mnt, "proj") ||
      !child_write(out, proj, POLICY_FILE_NAME, "protect:\n  - Makefile\n") ||
      !child_write(out, proj, "makefile", "all:\n")) {
    return;
  }
  const char *why = audit_case_probe(NULL, proj);
  fprintf(out, "probe %s\n", why ? why : "(none)");
  child_audit(out, "casefold", t, proj);
}

START_TEST(test_case_insensitive_real) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "mnt");
  _cleanup_free_ char *got = run_in_child(__func__, casefold_child, t);
  if (got == NULL) {
    return;
  }
  /* The tmpfs root may or may not carry the attribute itself: the
   * topmost case-insensitive directory is the mount or the project. */
  ck_assert_msg(startswith(got, "probe casefold\n== casefold\n"), "got:\n%s", got);
  ck_assert_msg(strstr(got, "case-insensitive-directory T/mnt\n") != NULL ||
                    strstr(got, "case-insensitive-directory .\n") != NULL,
                "got:\n%s", got);
}
END_TEST

static Suite *audit_suite(void) {
  Suite *s = suite_create("audit");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_kind_names);
  tcase_add_test(tc, test_second_mount_found);
  tcase_add_test(tc, test_second_mount_of_a_subdirectory_filesystem);
  tcase_add_test(tc, test_second_mount_not_reported);
  tcase_add_test(tc, test_second_mount_garbage);
  tcase_add_test(tc, test_second_mount_of_part_of_the_project);
  tcase_add_test(tc, test_kind_weakens);
  tcase_add_test(tc, test_git_key_runs);
  tcase_add_test(tc, test_git_exec_lines);
  tcase_add_test(tc, test_mounts_bind);
  tcase_add_test(tc, test_mounts_bind_under_self_binds);
  tcase_add_test(tc, test_mounts_kinds);
  tcase_add_test(tc, test_mounts_file_bind_among_siblings);
  tcase_add_test(tc, test_mounts_not_reported);
  tcase_add_test(tc, test_case_insensitive);
  tcase_add_test(tc, test_fs_may_ignore_case);
  suite_add_tcase(s, tc);

  tc = tcase_create("findings");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_landlock);
  tcase_add_test(tc, test_unmatched_literal_and_glob);
  tcase_add_test(tc, test_everything_matched_is_quiet);
  tcase_add_test(tc, test_shadowed_pattern_is_not_unmatched);
  tcase_add_test(tc, test_symlink);
  tcase_add_test(tc, test_hard_links);
  tcase_add_test(tc, test_hard_links_inside_protected_dirs);
  tcase_add_test(tc, test_literal_through_a_link);
  tcase_add_test(tc, test_enclosing_policy);
  tcase_add_test(tc, test_git_unprotected);
  tcase_add_test(tc, test_git_protected);
  tcase_add_test(tc, test_git_submodules);
  tcase_add_test(tc, test_git_worktrees);
  tcase_add_test(tc, test_git_planted_commondir);
  tcase_add_test(tc, test_git_worktree_config);
  tcase_add_test(tc, test_policy_file_replaced_before_the_scan);
  tcase_add_test(tc, test_missing_target_that_appears);
  tcase_add_test(tc, test_plan_missing_reported_once);
  tcase_add_test(tc, test_git_not_a_directory);
  tcase_add_test(tc, test_unreadable);
  tcase_add_test(tc, test_unreadable_detail);
  tcase_add_test(tc, test_root);
  tcase_add_test(tc, test_order_and_accumulation);
  tcase_add_test(tc, test_mounts_real);
  tcase_add_test(tc, test_links_out_of_protected_dirs);
  tcase_add_test(tc, test_links_out_capped);
  tcase_add_test(tc, test_git_hooks_path);
  tcase_add_test(tc, test_git_config_syntax);
  tcase_add_test(tc, test_git_fsmonitor);
  tcase_add_test(tc, test_git_config_parse_as_git);
  tcase_add_test(tc, test_git_config_no_repository);
  tcase_add_test(tc, test_inherited_fds_real);
  tcase_add_test(tc, test_inherited_fds_injected);
  tcase_add_test(tc, test_list_fds_kinds);
  tcase_add_test(tc, test_case_probe_real);
  tcase_add_test(tc, test_case_insensitive_real);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  umask(022);
  SRunner *sr = srunner_create(audit_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
