/* SPDX-License-Identifier: Apache-2.0 */
/* audit_run() on real temporary trees: every finding appears when its
 * condition holds, and only then. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "matcher.h"
#include "path.h"
#include "policy.h"
#include "scan.h"
#include "util.h"
#include "tmptree.h"

/* ---- temporary trees ---------------------------------------------------- */



/* Made and removed by the runner process (an unchecked fixture), so a
 * failing test leaves nothing behind. World-traversable: one test scans it
 * as an unprivileged user. */







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

/* The findings as "kind subject" lines in the order given. Whether the
 * tests run as root is not the business of the trees below: the root
 * finding is left out here and checked by test_root. */
static char *summary(const AuditFindings *f) {
  char *out = xstrdup("");
  for (size_t i = 0; i < f->n; i++) {
    if (f->items[i].kind == AUDIT_ROOT) {
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
static char *second_mounts(const char *mountinfo, const char *root) {
  AuditFindings f = {0};
  audit_second_mounts(mountinfo, root, &f);
  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  ck_assert_ptr_nonnull(m);
  for (size_t i = 0; i < f.n; i++) {
    ck_assert_int_eq(f.items[i].kind, AUDIT_SECOND_MOUNT);
    ck_assert_ptr_nonnull(strstr(f.items[i].detail, "second path to this project"));
    fprintf(m, "%s\n", f.items[i].subject);
  }
  fclose(m);
  audit_findings_clear(&f);
  return buf;
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

START_TEST(test_kind_weakens) {
  for (int k = 0; k < _AUDIT_KIND_MAX; k++) {
    /* A glob that matches nothing yet (say `*.pem` in a fresh clone) is
     * harmless; every other finding leaves protection weaker. */
    ck_assert_msg(audit_weakens((AuditKind)k) == (k != AUDIT_UNMATCHED_GLOB), "kind %s",
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

  /* Gone when the other names are. */
  _cleanup_free_ char *b = path_join(t, "two-b");
  ck_assert_int_eq(unlink(b), 0);
  assert_summary(t, "protect:\n  - two\n", "");
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
  /* A worktree or submodule: .git is a file naming the real one. */
  make_file(t, ".git", "gitdir: /somewhere/else\n");
  assert_summary(t, "protect:\n  - README\n", "");
}
END_TEST

/* ---- unreadable directories --------------------------------------------- */

/* Runs the whole policy → scan → audit chain as a user the permission bits
 * apply to: as root, a forked child that becomes nobody; otherwise a forked
 * child as we are. Returns "kind subject" lines for every finding, the
 * root one included, or NULL after printing why this system cannot make
 * `probe_rel` (when not NULL) unreadable. */
static char *audit_unprivileged(const char *test, const char *root, const char *yaml,
                                const char *probe_rel) {
  Loaded l;
  load(&l, root, yaml);
  _cleanup_free_ char *probe = probe_rel ? path_join(root, probe_rel) : NULL;

  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    FILE *out = fdopen(fds[1], "w");
    if (out == NULL) {
      _exit(3);
    }
    if (geteuid() == 0) {
      if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
          setresuid(65534, 65534, 65534) < 0) {
        fprintf(out, "SKIP cannot become nobody (65534): %s\n", strerror(errno));
        fclose(out);
        _exit(0);
      }
    }
    DIR *d = probe ? opendir(probe) : NULL;
    if (probe == NULL) {
      /* Nothing to make unreadable. */
    } else if (d != NULL) {
      closedir(d);
      fprintf(out, "SKIP a directory of mode 000 stays readable for uid %u\n",
              (unsigned)geteuid());
      fclose(out);
      _exit(0);
    } else if (errno != EACCES) {
      fprintf(out, "SKIP cannot reach %s as uid %u: %s\n", probe, (unsigned)geteuid(),
              strerror(errno));
      fclose(out);
      _exit(0);
    }
    ScanResult *r = NULL;
    Error err = {0};
    if (scan_project(l.policy, l.m, &r, &err) < 0) {
      fprintf(out, "ERROR %s\n", err.message);
      fclose(out);
      _exit(0);
    }
    AuditFindings f = {0};
    audit_run(l.policy, l.m, r, &f);
    for (size_t i = 0; i < f.n; i++) {
      const char *kind = audit_kind_to_string(f.items[i].kind);
      fprintf(out, "%s %s\n", kind ? kind : "(null)", f.items[i].subject);
    }
    audit_findings_clear(&f);
    scan_result_free(r);
    fclose(out);
    _exit(0);
  }
  close(fds[1]);
  loaded_clear(&l);
  char *buf = NULL;
  size_t len = 0;
  ck_assert_int_eq(read_fd_limited(fds[0], 1 << 20, &buf, &len), 0);
  close(fds[0]);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  if (startswith(buf, "SKIP ")) {
    fprintf(stderr, "SKIPPED %s: %s", test, buf + 5);
    free(buf);
    return NULL;
  }
  return buf;
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
  ck_assert_str_eq(f.items[0].detail,
                   "could not be read, so protected paths inside it were not found");
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
  if (geteuid() == 0) {
    /* Reported once, last, whatever the tree. */
    ck_assert_uint_eq(f.n, 1);
    ck_assert_int_eq(f.items[0].kind, AUDIT_ROOT);
    ck_assert_ptr_nonnull(strstr(f.items[0].detail, "root"));
    audit_findings_clear(&f);

    /* And not for anybody else. */
    _cleanup_free_ char *got = audit_unprivileged(__func__, t, "protect:\n  - a\n", NULL);
    if (got != NULL) {
      ck_assert_str_eq(got, "");
    }
  } else {
    ck_assert_uint_eq(f.n, 0);
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

static Suite *audit_suite(void) {
  Suite *s = suite_create("audit");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_kind_names);
  tcase_add_test(tc, test_second_mount_found);
  tcase_add_test(tc, test_second_mount_of_a_subdirectory_filesystem);
  tcase_add_test(tc, test_second_mount_not_reported);
  tcase_add_test(tc, test_second_mount_garbage);
  tcase_add_test(tc, test_kind_weakens);
  suite_add_tcase(s, tc);

  tc = tcase_create("findings");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_unmatched_literal_and_glob);
  tcase_add_test(tc, test_everything_matched_is_quiet);
  tcase_add_test(tc, test_shadowed_pattern_is_not_unmatched);
  tcase_add_test(tc, test_symlink);
  tcase_add_test(tc, test_hard_links);
  tcase_add_test(tc, test_git_unprotected);
  tcase_add_test(tc, test_git_protected);
  tcase_add_test(tc, test_git_not_a_directory);
  tcase_add_test(tc, test_unreadable);
  tcase_add_test(tc, test_unreadable_detail);
  tcase_add_test(tc, test_root);
  tcase_add_test(tc, test_order_and_accumulation);
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
