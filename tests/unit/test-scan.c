/* SPDX-License-Identifier: Apache-2.0 */
/* scan_project() on real temporary trees. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "matcher.h"
#include "path.h"
#include "policy.h"
#include "scan.h"
#include "util.h"
#include "enforce/linux/sys.h"
#include "tmptree.h"

/* ---- temporary trees ---------------------------------------------------- */

/* One scratch directory per test case, made and removed by the runner
 * process (an unchecked fixture), so a failing test leaves nothing behind.
 * World-traversable: one test scans it as an unprivileged user. */









static void set_mode(const char *dir, const char *rel, mode_t mode) {
  _cleanup_free_ char *p = path_join(dir, rel);
  ck_assert_int_eq(chmod(p, mode), 0);
}

/* ---- policy, matcher, scan ---------------------------------------------- */

typedef struct {
  Policy *policy;
  Matcher *m;
  ScanResult *r;
} Project;

static void project_clear(Project *p) {
  scan_result_free(p->r);
  matcher_free(p->m);
  policy_free(p->policy);
  *p = (Project){0};
}

/* Parses `yaml` as `root`/agent.lock (writing it there too when `write`)
 * and compiles its patterns, without scanning. */
static void project_load(Project *p, const char *root, const char *yaml, bool write) {
  _cleanup_free_ char *file = path_join(root, POLICY_FILE_NAME);
  _cleanup_error_ Error err = {0};
  if (write) {
    make_file(root, POLICY_FILE_NAME, yaml);
  }
  *p = (Project){0};
  ck_assert_msg(policy_parse(file, yaml, strlen(yaml), &p->policy, &err) == 0, "policy: %s",
                err.message);
  _cleanup_free_ const char **pats = xcalloc(p->policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < p->policy->n_patterns; i++) {
    pats[i] = p->policy->patterns[i].pattern;
  }
  ck_assert_msg(matcher_new(pats, p->policy->n_patterns, 0, &p->m, &err) == 0, "matcher: %s",
                err.message);
}

static void project_scan(Project *p, const char *root, const char *yaml) {
  project_load(p, root, yaml, true);
  _cleanup_error_ Error err = {0};
  ck_assert_msg(scan_project(p->policy, p->m, &p->r, &err) == 0, "scan: %s", err.message);
  ck_assert_ptr_nonnull(p->r);
  ck_assert_uint_eq(p->r->n_patterns, p->policy->n_patterns);
}

/* The relative names found, joined with '|'. */
static char *joined_paths(const ScanResult *r) {
  char *out = xstrdup("");
  for (size_t i = 0; i < r->n_paths; i++) {
    char *next = xasprintf("%s%s%s", out, i ? "|" : "", r->paths[i].relative);
    free(out);
    out = next;
  }
  return out;
}

static const ProtectedPath *find_path(const ScanResult *r, const char *rel) {
  for (size_t i = 0; i < r->n_paths; i++) {
    if (streq(r->paths[i].relative, rel)) {
      return &r->paths[i];
    }
  }
  return NULL;
}

/* The entry for `rel`, which must be there. */
__attribute__((returns_nonnull)) static const ProtectedPath *get_path(const ScanResult *r,
                                                                      const char *rel) {
  const ProtectedPath *pp = find_path(r, rel);
  if (pp == NULL) {
    ck_abort_msg("\"%s\" not found", rel);
    abort();
  }
  return pp;
}

/* Every entry: sorted, absolute = root/relative, identity as lstat(2)
 * sees it right now; nothing unreadable. */
static void assert_consistent(const Project *p) {
  const ScanResult *r = p->r;
  size_t sum = 0;
  for (size_t i = 0; i < r->n_patterns; i++) {
    sum += r->hits[i];
  }
  ck_assert_uint_eq(sum, r->n_paths);
  /* Every tree checked in-process is readable throughout. */
  ck_assert_uint_eq(r->n_unreadable, 0);
  for (size_t i = 0; i < r->n_paths; i++) {
    const ProtectedPath *pp = &r->paths[i];
    if (i > 0) {
      ck_assert_msg(strcmp(r->paths[i - 1].relative, pp->relative) < 0, "not sorted: %s, %s",
                    r->paths[i - 1].relative, pp->relative);
    }
    _cleanup_free_ char *want_abs = xasprintf("%s/%s", p->policy->root, pp->relative);
    ck_assert_str_eq(pp->absolute, want_abs);
    ck_assert_uint_lt(pp->pattern, r->n_patterns);
    ck_assert_int_eq(matcher_match(p->m, pp->relative), (long)pp->pattern);
    struct stat st;
    ck_assert_msg(lstat(pp->absolute, &st) == 0, "lstat %s: %s", pp->absolute, strerror(errno));
    ck_assert_uint_eq(pp->dev, st.st_dev);
    ck_assert_uint_eq(pp->ino, st.st_ino);
    ck_assert_uint_eq(pp->mode, st.st_mode);
    ck_assert_uint_eq(pp->nlink, st.st_nlink);
  }
}

static void assert_hits(const ScanResult *r, const size_t *want, size_t n) {
  ck_assert_uint_eq(r->n_patterns, n);
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(r->hits[i] == want[i], "hits[%zu] = %u, want %zu", i, r->hits[i], want[i]);
  }
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_scan_sorted_identity) {
  _cleanup_free_ char *t = make_tmpdir();
  /* Created out of order; "a/x.txt" sorts between "a.txt" and "agent.lock"
   * byte-wise, which is the order promised. */
  make_file(t, "b.txt", "b");
  make_dir(t, "c");
  make_dir(t, "c/d");
  make_file(t, "c/d/e.txt", "e");
  make_file(t, "zz.md", "z");
  make_dir(t, "a");
  make_file(t, "a/x.txt", "x");
  make_file(t, "a/y.md", "y");
  make_file(t, "a.txt", "a");
  make_file(t, "a-b.txt", "ab");
  make_file(t, "B.txt", "B");

  Project p;
  project_scan(&p, t, "protect:\n  - '**/*.txt'\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "B.txt|a-b.txt|a.txt|a/x.txt|agent.lock|b.txt|c/d/e.txt");
  assert_consistent(&p);
  static const size_t hits[] = {1, 6};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  ck_assert_uint_eq(get_path(p.r, "agent.lock")->pattern, 0);
  ck_assert_uint_eq(get_path(p.r, "c/d/e.txt")->pattern, 1);
  ck_assert(S_ISREG(get_path(p.r, "c/d/e.txt")->mode));
  ck_assert_uint_eq(p.r->n_unreadable, 0);
  /* Everything could hold a *.txt: all 12 entries are looked at. */
  ck_assert_uint_eq(p.r->n_visited, 12);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_protected_dir_once) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "node_modules");
  for (int i = 0; i < 500; i++) {
    _cleanup_free_ char *name = xasprintf("node_modules/f%03d.js", i);
    make_file(t, name, "x");
  }
  make_dir(t, "node_modules/pkg");
  make_file(t, "node_modules/pkg/index.js", "x");
  make_dir(t, "src");
  make_file(t, "src/main.c", "int main;");

  Project p;
  project_scan(&p, t, "protect:\n  - node_modules\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "agent.lock|node_modules");
  assert_consistent(&p);
  const ProtectedPath *nm = get_path(p.r, "node_modules");
  mode_t nm_mode = nm->mode;
  size_t nm_pattern = nm->pattern;
  ck_assert(S_ISDIR(nm_mode));
  ck_assert_uint_eq(nm_pattern, 1);
  static const size_t hits[] = {1, 1};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  /* agent.lock, node_modules, src: not one of the 501 entries inside, and
   * src holds nothing a pattern could name. */
  ck_assert_uint_eq(p.r->n_visited, 3);
  project_clear(&p);

  /* A trailing `**` segment protects the directory itself as well. */
  project_scan(&p, t, "protect:\n  - node_modules/**\n");
  _cleanup_free_ char *got2 = joined_paths(p.r);
  ck_assert_str_eq(got2, "agent.lock|node_modules");
  ck_assert_uint_eq(p.r->n_visited, 3);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_prunes_unreachable) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "big");
  for (int i = 0; i < 200; i++) {
    _cleanup_free_ char *name = xasprintf("big/f%03d", i);
    make_file(t, name, "x");
  }
  make_dir(t, "big/src");
  make_file(t, "big/src/secret.txt", "not this one");
  make_dir(t, "docs");
  make_file(t, "docs/a.md", "x");
  make_dir(t, "src");
  make_file(t, "src/secret.txt", "s");
  make_file(t, "src/other.c", "o");
  make_dir(t, "src/sub");
  make_file(t, "src/sub/secret.txt", "not this one either");

  Project p;
  project_scan(&p, t, "protect:\n  - src/secret.txt\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "agent.lock|src/secret.txt");
  assert_consistent(&p);
  /* The four root entries and the three in src; big, docs and src/sub are
   * never opened. */
  ck_assert_uint_eq(p.r->n_visited, 7);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_symlinks_followed_where_alive) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *out = make_tmpdir();
  make_file(out, "x.pem", "outside");
  make_dir(out, "sub");
  make_file(out, "sub/y.pem", "outside");
  _cleanup_free_ char *out_x = path_join(out, "x.pem");

  make_dir(t, "inside");
  make_file(t, "inside/x.pem", "x");
  make_dir(t, "inside/sub");
  make_file(t, "inside/sub/y.pem", "y");
  make_symlink(t, "linkdir", "inside");  /* a directory of the project's */
  make_symlink(t, "outlink", out);       /* one outside it: not entered */
  make_symlink(t, "key.pem", out_x);     /* the link itself matches */
  make_symlink(t, "dirlink.pem", out);   /* matches, points at a directory */
  make_symlink(t, "dangling.pem", "nowhere");
  make_file(t, "real.pem", "r");

  Project p;
  project_scan(&p, t, "protect:\n  - '**/*.pem'\n  - linkdir/x.pem\n  - outlink/x.pem\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  /* What the policy names through a link is found under the policy's
   * name; a link that matches itself is recorded, not followed. */
  ck_assert_str_eq(got, "agent.lock|dangling.pem|dirlink.pem|inside/sub/y.pem|inside/x.pem|"
                        "key.pem|linkdir/sub/y.pem|linkdir/x.pem|real.pem");
  assert_consistent(&p);
  ck_assert(S_ISLNK(get_path(p.r, "key.pem")->mode));
  ck_assert(S_ISLNK(get_path(p.r, "dirlink.pem")->mode));
  ck_assert(S_ISLNK(get_path(p.r, "dangling.pem")->mode));
  ck_assert(S_ISREG(get_path(p.r, "real.pem")->mode));
  ck_assert(!get_path(p.r, "real.pem")->via_link);
  ck_assert(!get_path(p.r, "inside/x.pem")->via_link);
  ck_assert(!get_path(p.r, "key.pem")->via_link);
  ck_assert(get_path(p.r, "linkdir/x.pem")->via_link);
  ck_assert(get_path(p.r, "linkdir/sub/y.pem")->via_link);
  /* The identity is the link's for a link, the target's through one. */
  struct stat target;
  ck_assert_int_eq(stat(out_x, &target), 0);
  ck_assert_uint_ne(get_path(p.r, "key.pem")->ino, target.st_ino);
  ck_assert_uint_eq(get_path(p.r, "linkdir/x.pem")->ino, get_path(p.r, "inside/x.pem")->ino);
  /* `**` is first for every .pem file: the literals add nothing. */
  static const size_t hits[] = {1, 8, 0, 0};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  /* Root: agent.lock and 7 entries; inside: 2, and its sub: 1; the same
   * again through linkdir. */
  ck_assert_uint_eq(p.r->n_visited, 14);
  ck_assert_uint_eq(p.r->n_links, 1);
  ck_assert_str_eq(p.r->links[0], "linkdir");
  ck_assert_uint_eq(p.r->n_links_outside, 1);
  ck_assert_str_eq(p.r->links_outside[0], "outlink");
  project_clear(&p);

  /* Literal patterns through a link inside are found the same way; one
   * through a link outside is not (`run` resolves literals itself). */
  project_scan(&p, t, "protect:\n  - linkdir/x.pem\n  - linkdir/sub\n  - outlink/x.pem\n");
  _cleanup_free_ char *got2 = joined_paths(p.r);
  ck_assert_str_eq(got2, "agent.lock|linkdir/sub|linkdir/x.pem");
  static const size_t hits2[] = {1, 1, 1, 0};
  assert_hits(p.r, hits2, ELEMENTSOF(hits2));
  /* The root's 8 entries and linkdir's 2 (sub is protected, not entered);
   * inside could hold no match under its own name and is not entered. */
  ck_assert_uint_eq(p.r->n_visited, 10);
  ck_assert_uint_eq(p.r->n_links, 1);
  ck_assert_uint_eq(p.r->n_links_outside, 1);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_symlink_loops_cut) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "a");
  make_file(t, "a/k.pem", "k");
  make_symlink(t, "a/up", "..");     /* back to the root */
  make_symlink(t, "a/self", ".");    /* to itself */
  make_symlink(t, "b1", "a");        /* two links to one directory */
  make_symlink(t, "b2", "a");
  make_symlink(t, "loop1", "loop2"); /* a loop of links */
  make_symlink(t, "loop2", "loop1");

  Project p;
  project_scan(&p, t, "protect:\n  - '**/*.pem'\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  /* a/up and a/self lead back up and are cut; of b1 and b2, which lead to
   * one directory in one matcher state, only the first is walked. */
  ck_assert_str_eq(got, "a/k.pem|agent.lock|b1/k.pem");
  ck_assert_uint_eq(p.r->n_links, 1);
  ck_assert_str_eq(p.r->links[0], "b1");
  /* The links that go round lead nowhere and hold nothing. */
  ck_assert_uint_eq(p.r->n_unreadable, 0);
  ck_assert_uint_eq(p.r->n_links_outside, 0);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_hard_links) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "a.txt", "a");
  make_hardlink(t, "a.txt", "b.txt");
  make_file(t, "three", "3");
  make_hardlink(t, "three", "three-2");
  make_hardlink(t, "three", "three-3");
  make_file(t, "single", "1");

  Project p;
  project_scan(&p, t, "protect:\n  - a.txt\n  - three\n  - single\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "a.txt|agent.lock|single|three");
  assert_consistent(&p);
  ck_assert_uint_eq(get_path(p.r, "a.txt")->nlink, 2);
  ck_assert_uint_eq(get_path(p.r, "three")->nlink, 3);
  ck_assert_uint_eq(get_path(p.r, "single")->nlink, 1);
  /* Same inode as the other name. */
  _cleanup_free_ char *b = path_join(t, "b.txt");
  struct stat st;
  ck_assert_int_eq(lstat(b, &st), 0);
  ck_assert_uint_eq(get_path(p.r, "a.txt")->ino, st.st_ino);
  ck_assert_uint_eq(get_path(p.r, "a.txt")->dev, st.st_dev);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_hits_per_pattern) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "a.txt", "a");
  make_file(t, "b.txt", "b");
  make_file(t, "c.md", "c");
  make_dir(t, "docs");
  make_file(t, "docs/x.md", "x");
  make_file(t, "docs/y.md", "y");
  _cleanup_free_ char *fifo = path_join(t, "pipe.txt");
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);

  Project p;
  /* a.txt is claimed by `*.txt` first; the docs pattern after it lies
   * in a pruned directory; `missing` names nothing. */
  project_scan(&p, t,
               "protect:\n  - '*.txt'\n  - a.txt\n  - docs\n  - missing\n  - docs/*.md\n"
               "  - agent.lock\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "a.txt|agent.lock|b.txt|docs|pipe.txt");
  assert_consistent(&p);
  /* Listing agent.lock again does not add a pattern. */
  static const size_t hits[] = {1, 3, 0, 1, 0, 0};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  ck_assert_uint_eq(get_path(p.r, "a.txt")->pattern, 1);
  ck_assert_uint_eq(get_path(p.r, "docs")->pattern, 3);
  ck_assert(S_ISFIFO(get_path(p.r, "pipe.txt")->mode));
  ck_assert_str_eq(scan_kind_name(get_path(p.r, "pipe.txt")->mode), "other");
  ck_assert_str_eq(scan_kind_name(get_path(p.r, "docs")->mode), "directory");
  ck_assert_str_eq(scan_kind_name(get_path(p.r, "a.txt")->mode), "file");
  ck_assert_str_eq(scan_kind_name(S_IFLNK | 0777), "symlink");
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_deep_globstar) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "top.pem", "t");
  make_dir(t, "a");
  make_dir(t, "a/b");
  make_dir(t, "a/b/c");
  make_dir(t, "a/b/c/d");
  make_dir(t, "a/b/c/d/e");
  make_file(t, "a/b/c/d/e/key.pem", "k");
  make_file(t, "a/b/c/d/e/key.pem.bak", "k");
  make_file(t, "a/b/notpem.txt", "n");
  make_file(t, "a/b/pem", "n");
  make_dir(t, "a/dir.pem");
  make_file(t, "a/dir.pem/inner.pem", "i");

  Project p;
  project_scan(&p, t, "protect:\n  - '**/*.pem'\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "a/b/c/d/e/key.pem|a/dir.pem|agent.lock|top.pem");
  assert_consistent(&p);
  ck_assert(S_ISDIR(get_path(p.r, "a/dir.pem")->mode));
  static const size_t hits[] = {1, 3};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  project_clear(&p);

  /* `**` in the middle: zero or more directories. */
  project_scan(&p, t, "protect:\n  - a/**/e/*.pem\n  - a/**/notpem.txt\n");
  _cleanup_free_ char *got2 = joined_paths(p.r);
  ck_assert_str_eq(got2, "a/b/c/d/e/key.pem|a/b/notpem.txt|agent.lock");
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_everything) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "a");
  make_dir(t, "a/b");
  make_file(t, "a/b/c", "c");
  make_file(t, "x.txt", "x");

  Project p;
  project_scan(&p, t, "protect:\n  - '**'\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "a|agent.lock|x.txt");
  assert_consistent(&p);
  static const size_t hits[] = {1, 2};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  ck_assert_uint_eq(p.r->n_visited, 3);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_empty) {
  _cleanup_free_ char *t = make_tmpdir();
  Project p;
  /* No agent.lock on disk, nothing else either. */
  project_load(&p, t, "protect:\n  - src\n", false);
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(scan_project(p.policy, p.m, &p.r, &err), 0);
  ck_assert_ptr_null(err.message);
  ck_assert_uint_eq(p.r->n_paths, 0);
  ck_assert_uint_eq(p.r->n_visited, 0);
  ck_assert_uint_eq(p.r->n_unreadable, 0);
  static const size_t hits[] = {0, 0};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  project_clear(&p);

  make_dir(t, "empty");
  project_scan(&p, t, "protect:\n  - empty\n");
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "agent.lock|empty");
  assert_consistent(&p);
  ck_assert(S_ISREG(get_path(p.r, "agent.lock")->mode));
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_missing_root) {
  _cleanup_free_ char *t = make_tmpdir();
  _cleanup_free_ char *gone = path_join(t, "gone");
  Project p;
  project_load(&p, gone, "protect:\n  - src\n", false);
  _cleanup_error_ Error err = {0};
  ScanResult *r = NULL;
  ck_assert_int_lt(scan_project(p.policy, p.m, &r, &err), 0);
  ck_assert_ptr_null(r);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_int_eq(err.errnum, ENOENT);
  ck_assert_ptr_nonnull(strstr(err.message, gone));
  project_clear(&p);
}
END_TEST

/* Entries whose path from the root exceeds PATH_MAX cannot be named, so
 * neither backend can protect them: where the policy could reach one, its
 * directory is reported, once; where it cannot, nothing is. */
START_TEST(test_scan_too_long_to_name) {
  _cleanup_free_ char *t = make_tmpdir();
  char name[251];
  memset(name, 'd', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  int fd = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  /* 16 levels of 250 bytes: the directory's own path still fits in
   * PATH_MAX, the names inside it do not. */
  enum { LEVELS = 16 };
  for (int i = 0; i < LEVELS; i++) {
    ck_assert_int_eq(mkdirat(fd, name, 0755), 0);
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(next, 0);
    close(fd);
    fd = next;
  }
  int k = openat(fd, "key.pem-with-a-name-long-enough-to-cross-path-max-from-the-root-of-the-"
                     "project-which-it-does-at-two-hundred-and-fifty-bytes-or-so-xxxxxxxxxxxxxxxxxxx"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.pem",
                 O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ck_assert_int_ge(k, 0);
  close(k);
  ck_assert_int_eq(mkdirat(fd, name, 0755), 0);
  close(fd);

  Project p;
  project_scan(&p, t, "protect:\n  - '**/*.pem'\n");
  ck_assert_uint_eq(p.r->n_unreadable, 1);
  ck_assert_uint_eq(strlen(p.r->unreadable[0]), LEVELS * 251 - 1);
  _cleanup_free_ char *got = joined_paths(p.r);
  ck_assert_str_eq(got, "agent.lock");
  project_clear(&p);

  /* Nothing the policy could reach down there: nothing to report. */
  project_scan(&p, t, "protect:\n  - top.pem\n");
  ck_assert_uint_eq(p.r->n_unreadable, 0);
  project_clear(&p);
}
END_TEST

START_TEST(test_scan_odd_names) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "my key.pem", "1");
  make_file(t, "new\nline.pem", "2");
  make_file(t, "\xff\xfe.pem", "3");
  make_dir(t, "\xff");
  make_file(t, "\xff/k.pem", "4");
  make_file(t, "\xff/k.txt", "-");
  make_file(t, "caf\xc3\xa9.txt", "5"); /* é is one character */
  make_file(t, "cafe.txt", "6");
  make_file(t, "caf\xc3\xa9s.txt", "-");
  make_dir(t, "with space");
  make_file(t, "with space/inner file.txt", "7");
  make_file(t, "with space/other.txt", "-");
  make_dir(t, "nl\ndir");
  make_file(t, "nl\ndir/hidden.pem", "-"); /* inside a protected directory */
  make_dir(t, "d");
  make_file(t, "d/.a", "8");
  make_file(t, "d/..a", "9");
  make_file(t, "d/...", "10");
  make_file(t, "d/ ", "11");
  make_file(t, "-", "-");

  Project p;
  project_scan(&p, t,
               "protect:\n"
               "  - '**/*.pem'\n"
               "  - caf?.txt\n"
               "  - with space/inner file.txt\n"
               "  - \"nl\\ndir\"\n"
               "  - d/*\n");
  assert_consistent(&p);
  static const struct {
    const char *rel;
    size_t pattern;
  } want[] = {
      {"my key.pem", 1},   {"new\nline.pem", 1},
      {"\xff\xfe.pem", 1}, {"\xff/k.pem", 1},
      {"caf\xc3\xa9.txt", 2}, {"cafe.txt", 2},
      {"with space/inner file.txt", 3}, {"nl\ndir", 4},
      {"d/.a", 5},         {"d/..a", 5},
      {"d/...", 5},        {"d/ ", 5},
      {"agent.lock", 0},
  };
  for (size_t i = 0; i < ELEMENTSOF(want); i++) {
    const ProtectedPath *pp = find_path(p.r, want[i].rel);
    ck_assert_msg(pp != NULL, "\"%s\" not found", want[i].rel);
    ck_assert_uint_eq(pp->pattern, want[i].pattern);
  }
  ck_assert_uint_eq(p.r->n_paths, ELEMENTSOF(want));
  ck_assert(S_ISDIR(get_path(p.r, "nl\ndir")->mode));
  static const size_t hits[] = {1, 4, 2, 1, 1, 4};
  assert_hits(p.r, hits, ELEMENTSOF(hits));
  /* Everything but the inside of "nl\ndir": 12 in the root, 2 in "\xff",
   * 2 in "with space", 4 in d. */
  ck_assert_uint_eq(p.r->n_visited, 20);
  project_clear(&p);
}
END_TEST

/* ---- unreadable directories --------------------------------------------- */

/* Scanning as a user the permission bits apply to (run_unprivileged):
 * the child writes "P rel" per protected path, "U rel" per unreadable
 * directory, or one line "SKIP why" when this system cannot make
 * `probe_rel` unreadable. */
typedef struct {
  Project *p;
} ScanChild;

static void scan_child(FILE *out, void *userdata) {
  const ScanChild *c = userdata;
  ScanResult *r = NULL;
  Error err = {0};
  if (scan_project(c->p->policy, c->p->m, &r, &err) < 0) {
    fprintf(out, "ERROR %s\n", err.message);
    error_clear(&err);
    return;
  }
  for (size_t i = 0; i < r->n_paths; i++) {
    fprintf(out, "P %s\n", r->paths[i].relative);
  }
  for (size_t i = 0; i < r->n_unreadable; i++) {
    fprintf(out, "U %s\n", r->unreadable[i]);
  }
  scan_result_free(r);
}

static char *scan_unprivileged(const char *test, const char *root, const char *yaml,
                               const char *probe_rel) {
  Project p;
  project_load(&p, root, yaml, true);
  _cleanup_free_ char *probe = path_join(root, probe_rel);
  ScanChild c = {.p = &p};
  char *out = run_unprivileged(test, probe, scan_child, &c);
  project_clear(&p);
  return out;
}

/* Sorted lines, so the order directories are met in does not matter. */
static char *sorted_lines(char *buf) {
  char *lines[64];
  size_t n = 0;
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l != NULL;
       l = strtok_r(NULL, "\n", &save)) {
    ck_assert_uint_lt(n, ELEMENTSOF(lines));
    lines[n++] = l;
  }
  for (size_t i = 1; i < n; i++) {
    for (size_t k = i; k > 0 && strcmp(lines[k - 1], lines[k]) > 0; k--) {
      char *tmp = lines[k];
      lines[k] = lines[k - 1];
      lines[k - 1] = tmp;
    }
  }
  char *out = xstrdup("");
  for (size_t i = 0; i < n; i++) {
    char *next = xasprintf("%s%s\n", out, lines[i]);
    free(out);
    out = next;
  }
  return out;
}

START_TEST(test_scan_unreadable) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "keys");
  make_file(t, "keys/ok.pem", "ok");
  make_dir(t, "keys/locked");
  make_file(t, "keys/locked/secret.pem", "s");
  make_dir(t, "keys/a");
  make_dir(t, "keys/a/locked2");
  make_file(t, "keys/a/locked2/deep.pem", "d");
  make_dir(t, "other");
  make_dir(t, "other/locked3"); /* no pattern reaches it: never opened */
  make_dir(t, "keys/prot");     /* protected itself: recorded, not opened */
  set_mode(t, "keys/locked", 0);
  set_mode(t, "keys/a/locked2", 0);
  set_mode(t, "other/locked3", 0);
  set_mode(t, "keys/prot", 0);

  _cleanup_free_ char *raw =
      scan_unprivileged(__func__, t, "protect:\n  - keys/**/*.pem\n  - keys/prot\n", "keys/locked");
  if (raw == NULL) {
    return;
  }
  _cleanup_free_ char *got = sorted_lines(raw);
  ck_assert_str_eq(got, "P agent.lock\n"
                        "P keys/ok.pem\n"
                        "P keys/prot\n"
                        "U keys/a/locked2\n"
                        "U keys/locked\n");
}
END_TEST

/* A link to a directory that cannot be opened may hide protected entries
 * the policy names through the link only: unknown, so unreadable (`run`
 * then protects what it leads to as a whole). */
START_TEST(test_scan_unreadable_through_link) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "vendor");
  make_dir(t, "vendor/shut");
  make_file(t, "vendor/shut/config.yml", "c");
  make_dir(t, "lib");
  make_symlink(t, "lib/a", "../vendor/shut");
  set_mode(t, "vendor/shut", 0);

  _cleanup_free_ char *raw = scan_unprivileged(__func__, t, "protect:\n  - 'lib/*/config.yml'\n",
                                               "vendor/shut");
  if (raw == NULL) {
    return;
  }
  _cleanup_free_ char *got = sorted_lines(raw);
  ck_assert_str_eq(got, "P agent.lock\n"
                        "U lib/a\n");
}
END_TEST

/* A directory that can be listed but not searched (r without x): its
 * entries have names but cannot be examined, so it counts as unreadable
 * rather than silently holding nothing. */
START_TEST(test_scan_unsearchable) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "nox");
  make_file(t, "nox/k.pem", "k");
  make_file(t, "top.pem", "t");
  set_mode(t, "nox", 0444);

  _cleanup_free_ char *raw =
      scan_unprivileged(__func__, t, "protect:\n  - '**/*.pem'\n", "nox/k.pem");
  if (raw == NULL) {
    return;
  }
  _cleanup_free_ char *got = sorted_lines(raw);
  ck_assert_str_eq(got, "P agent.lock\n"
                        "P top.pem\n"
                        "U nox\n");
}
END_TEST

/* ---- listings kept for `run` -------------------------------------------- */

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `v` sorted, "|"-joined. */
static char *sorted_joined(const char **v, size_t n) {
  qsort(v, n, sizeof(char *), compare_strings);
  char *out = xstrdup("");
  for (size_t i = 0; i < n; i++) {
    char *next = xasprintf("%s%s%s", out, i ? "|" : "", v[i]);
    free(out);
    out = next;
  }
  return out;
}

/* The names of a kept listing, sorted, "|"-joined. */
static char *listing_names(const ScanListing *l) {
  _cleanup_free_ const char **v = xcalloc(l->n_entries + 1, sizeof(char *));
  for (size_t i = 0; i < l->n_entries; i++) {
    v[i] = l->names + l->entries[i].name;
  }
  return sorted_joined(v, l->n_entries);
}

/* A listing as "name:dev:ino:mode:exact", sorted, "|"-joined. */
static char *dir_entries_text(const DirEntry *e, size_t n) {
  char **v = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    v[i] = xasprintf("%s:%ju:%ju:%o:%d", e[i].name, (uintmax_t)e[i].dev, (uintmax_t)e[i].ino,
                     (unsigned)e[i].mode, e[i].exact);
  }
  char *out = sorted_joined((const char **)v, n);
  for (size_t i = 0; i < n; i++) {
    free(v[i]);
  }
  free(v);
  return out;
}

static char *list_with(DirLister lister, void *userdata, const char *dir) {
  DirEntry *e = NULL;
  size_t n = 0;
  ck_assert_int_eq(lister(userdata, dir, &e, &n), 0);
  char *out = dir_entries_text(e, n);
  dir_entries_free(e, n);
  return out;
}

/* `listing` (dir_entries_text's "name:…|name:…") without the entry named
 * `name`, which must be in it. */
static char *without_entry(const char *listing, const char *name) {
  size_t len = strlen(name);
  const char *at = listing;
  while (at != NULL && !(strncmp(at, name, len) == 0 && at[len] == ':')) {
    at = strchr(at, '|');
    at = at != NULL ? at + 1 : NULL;
  }
  ck_assert_msg(at != NULL, "%s is not in %s", name, listing);
  const char *end = strchr(at, '|');
  size_t before = (size_t)(at - listing);
  char *out = NULL;
  if (end != NULL) {
    out = xasprintf("%.*s%s", (int)before, listing, end + 1);
  } else {
    out = xasprintf("%.*s", before > 0 ? (int)before - 1 : 0, listing);
  }
  return out;
}

START_TEST(test_scan_keeps_listings_on_the_way) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "src");
  make_file(t, "src/main.c", "");
  make_dir(t, "conf");
  make_file(t, "conf/secret.yml", "");
  make_file(t, "conf/other.yml", "");
  make_dir(t, "conf/sub");
  make_dir(t, "tests");
  make_dir(t, "tests/golden");
  make_file(t, "tests/golden/a", "");
  make_file(t, "README", "");
  make_file(t, "conf/sub/k.pem", "");
  make_file(t, "src/util.c", "");

  /* Without the flag, nothing is kept. */
  Project p;
  project_scan(&p, t, "protect:\n  - conf/secret.yml\n  - tests/golden\n  - '**/*.pem'\n");
  ck_assert_uint_eq(p.r->n_listings, 0);
  ck_assert_ptr_null(scan_listing(p.r, ""));
  scan_result_free(p.r);

  /* With it: the directories holding protected paths, or directories
   * that do, every entry of each: the root, conf, conf/sub and tests; not
   * src (walked for the .pem glob, nothing found), not tests/golden (itself
   * protected, not descended into). */
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(scan_project_with(p.policy, p.m, SCAN_KEEP_LISTINGS, &p.r, &err), 0);
  ck_assert_uint_eq(p.r->n_listings, 4);
  const ScanListing *sub = scan_listing(p.r, "conf/sub");
  ck_assert_ptr_nonnull(sub);
  _cleanup_free_ char *sn = listing_names(sub);
  ck_assert_str_eq(sn, "k.pem");
  const ScanListing *root = scan_listing(p.r, "");
  const ScanListing *conf = scan_listing(p.r, "conf");
  const ScanListing *tests = scan_listing(p.r, "tests");
  ck_assert_ptr_nonnull(root);
  ck_assert_ptr_nonnull(conf);
  ck_assert_ptr_nonnull(tests);
  ck_assert_ptr_null(scan_listing(p.r, "src"));
  ck_assert_ptr_null(scan_listing(p.r, "tests/golden"));
  _cleanup_free_ char *rn = listing_names(root);
  ck_assert_str_eq(rn, "README|agent.lock|conf|src|tests");
  _cleanup_free_ char *cn = listing_names(conf);
  ck_assert_str_eq(cn, "other.yml|secret.yml|sub");
  _cleanup_free_ char *tn = listing_names(tests);
  ck_assert_str_eq(tn, "golden");
  struct stat st;
  _cleanup_free_ char *conf_path = path_join(t, "conf");
  ck_assert_int_eq(stat(conf_path, &st), 0);
  ck_assert(conf->dev == st.st_dev && conf->ino == st.st_ino);

  /* The lister that uses them gives what reading the directory gives,
   * less the files the scan found protected there (carve_plan grants no
   * protected path): a protected directory (tests/golden) stays. */
  _cleanup_free_ char *canon = realpath(t, NULL);
  ScannedDirs sd = {.root = canon, .scan = p.r};
  const char *dirs[] = {"", "conf", "conf/sub", "tests"};
  const char *left_out[] = {"agent.lock", "secret.yml", "k.pem", NULL};
  for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
    _cleanup_free_ char *d = path_join(canon, dirs[i]);
    _cleanup_free_ char *live = list_with(sys_list_dir, NULL, d);
    _cleanup_free_ char *kept = list_with(sys_list_dir_scanned, &sd, d);
    _cleanup_free_ char *want =
        left_out[i] != NULL ? without_entry(live, left_out[i]) : xstrdup(live);
    ck_assert_str_eq(kept, want);
  }

  /* A directory replaced since the scan is read again: the new one's
   * entries, not the kept ones. */
  _cleanup_free_ char *moved = path_join(t, "conf.old");
  ck_assert_int_eq(rename(conf_path, moved), 0);
  make_dir(t, "conf");
  make_file(t, "conf/new.yml", "");
  _cleanup_free_ char *cd = path_join(canon, "conf");
  _cleanup_free_ char *after = list_with(sys_list_dir_scanned, &sd, cd);
  _cleanup_free_ char *live = list_with(sys_list_dir, NULL, cd);
  ck_assert_str_eq(after, live);
  ck_assert_ptr_nonnull(strstr(after, "new.yml:"));
  ck_assert_ptr_null(strstr(after, "secret.yml"));
  project_clear(&p);
}
END_TEST

/* The entry named `name` in a listing of `dir`, which must have it. */
static DirEntry entry_named(const DirEntry *e, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    if (streq(e[i].name, name)) {
      return e[i];
    }
  }
  ck_abort_msg("no entry %s", name);
  return e[0];
}

static bool fd_is_open(int fd) {
  return fcntl(fd, F_GETFD) >= 0;
}

/* What `run` asks of the lister when nothing reads which files get no
 * rule (no audit, no dry run): files are not stat'ed (their identity is
 * getdents', their other names are landlock_apply's to find), and the
 * directories listed stay open for the rules, handed to the plan. */
START_TEST(test_scan_lister_for_run) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "conf");
  make_file(t, "conf/secret.yml", "");
  make_file(t, "plain", "");
  make_file(t, "linked", "");
  _cleanup_free_ char *canon = realpath(t, NULL);
  _cleanup_free_ char *linked = path_join(canon, "linked");
  _cleanup_free_ char *alias = path_join(canon, "conf/alias");
  ck_assert_int_eq(link(linked, alias), 0);
  struct stat lst;
  ck_assert_int_eq(stat(linked, &lst), 0);

  /* Checked (the default): the link count is known. */
  ScannedDirs checked = {.root = canon};
  DirEntry *e = NULL;
  size_t n = 0;
  ck_assert_int_eq(sys_list_dir_scanned(&checked, canon, &e, &n), 0);
  DirEntry got = entry_named(e, n, "linked");
  ck_assert(got.aliased && got.exact);
  ck_assert(!entry_named(e, n, "plain").aliased);
  dir_entries_free(e, n);
  ck_assert_uint_eq(checked.n_kept, 0);

  /* Unchecked: the same identity, from getdents, and no link count,
   * where getdents' inode numbers are exact (elsewhere files are stat'ed
   * as before). */
  struct statfs fs;
  ck_assert_int_eq(statfs(canon, &fs), 0);
  bool exact_fs = fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC ||
                  fs.f_type == XFS_SUPER_MAGIC || fs.f_type == BTRFS_SUPER_MAGIC;
  ScannedDirs sd = {.root = canon, .files_unchecked = true, .keep_dirs = true};
  ck_assert_int_eq(sys_list_dir_scanned(&sd, canon, &e, &n), 0);
  got = entry_named(e, n, "linked");
  ck_assert(got.dev == lst.st_dev && got.ino == lst.st_ino && S_ISREG(got.mode));
  /* Elsewhere (overlayfs, network file systems) files are stat'ed as
   * before. */
  ck_assert(exact_fs ? !got.aliased && !got.exact : got.aliased && got.exact);
  ck_assert(S_ISDIR(entry_named(e, n, "conf").mode));
  dir_entries_free(e, n);
  /* Kept open, with the identity of the directory listed. */
  ck_assert_uint_eq(sd.n_kept, 1);
  struct stat kst, dst;
  ck_assert_int_eq(fstat(sd.kept[0].dir.fd, &kst), 0);
  ck_assert_int_eq(stat(canon, &dst), 0);
  ck_assert(kst.st_dev == dst.st_dev && kst.st_ino == dst.st_ino);
  ck_assert(sd.kept[0].dir.dev == dst.st_dev && sd.kept[0].dir.ino == dst.st_ino);
  ck_assert(fcntl(sd.kept[0].dir.fd, F_GETFD) & FD_CLOEXEC);
  int first = sd.kept[0].dir.fd;
  sys_scanned_dirs_clear(&sd);
  ck_assert(!fd_is_open(first));
  ck_assert_uint_eq(sd.n_kept, 0);

  /* Through a plan: each restricted directory gets the descriptor it was
   * listed through, the others are closed, and plan_clear closes the
   * rest. */
  _cleanup_free_ char *secret = path_join(canon, "conf/secret.yml");
  struct stat sst;
  ck_assert_int_eq(stat(secret, &sst), 0);
  PlanTarget *targets = xcalloc(1, sizeof(PlanTarget));
  targets[0].path = targets[0].path_owned = xstrdup(secret);
  targets[0].dev = sst.st_dev;
  targets[0].ino = sst.st_ino;
  targets[0].mode = sst.st_mode;
  Plan plan;
  _cleanup_error_ Error err = {0};
  ScannedDirs run = {.root = canon, .files_unchecked = true, .keep_dirs = true};
  ck_assert_int_eq(plan_build(BACKEND_LANDLOCK, targets, 1, sys_list_dir_scanned, &run, &plan,
                              &err), 0);
  ck_assert_uint_ge(plan.carve.n_restricted, 3); /* /, ..., the project, conf */
  /* Every restricted directory this user may list (as root: all). */
  ck_assert_uint_eq(run.n_kept, plan.carve.n_restricted - plan.carve.n_unlisted);
  /* One more, which no plan asked for: closed when the kept are given. */
  DirEntry *extra = NULL;
  size_t n_extra = 0;
  ck_assert_int_eq(sys_list_dir_scanned(&run, "/", &extra, &n_extra), 0);
  dir_entries_free(extra, n_extra);
  int unasked = run.kept[run.n_kept - 1].dir.fd;
  sys_give_kept_dirs(&run, &plan);
  ck_assert_uint_eq(run.n_kept, 0);
  ck_assert(!fd_is_open(unasked));
  ck_assert_ptr_nonnull(plan.restricted_open);
  int *given = xcalloc(plan.carve.n_restricted, sizeof(int));
  for (size_t i = 0; i < plan.carve.n_restricted; i++) {
    given[i] = plan.restricted_open[i].fd;
    ck_assert_int_eq(stat(plan.carve.restricted[i], &dst), 0);
    if (path_relative(canon, plan.carve.restricted[i]) == NULL && given[i] < 0) {
      continue; /* an ancestor this user may search but not list */
    }
    ck_assert_int_ge(given[i], 0);
    ck_assert_int_eq(fstat(given[i], &kst), 0);
    ck_assert_msg(kst.st_dev == dst.st_dev && kst.st_ino == dst.st_ino, "%s",
                  plan.carve.restricted[i]);
    ck_assert(plan.restricted_open[i].dev == dst.st_dev && plan.restricted_open[i].ino == dst.st_ino);
  }
  /* Unchecked, the hard-linked file is a grant of the plan: landlock_apply
   * is what gives it no rule. */
  bool granted = false;
  for (size_t i = 0; i < plan.carve.n_grants; i++) {
    granted = granted || streq(plan.carve.grants[i].path, linked);
  }
  ck_assert(granted == exact_fs);
  size_t n_restricted = plan.carve.n_restricted;
  plan_clear(&plan);
  for (size_t i = 0; i < n_restricted; i++) {
    ck_assert_msg(given[i] < 0 || !fd_is_open(given[i]), "descriptor %d left open", given[i]);
  }
  free(given);
}
END_TEST

static Suite *scan_suite(void) {
  Suite *s = suite_create("scan");
  TCase *tc = tcase_create("tree");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_scan_sorted_identity);
  tcase_add_test(tc, test_scan_protected_dir_once);
  tcase_add_test(tc, test_scan_prunes_unreachable);
  tcase_add_test(tc, test_scan_symlinks_followed_where_alive);
  tcase_add_test(tc, test_scan_symlink_loops_cut);
  tcase_add_test(tc, test_scan_hard_links);
  tcase_add_test(tc, test_scan_hits_per_pattern);
  tcase_add_test(tc, test_scan_deep_globstar);
  tcase_add_test(tc, test_scan_everything);
  tcase_add_test(tc, test_scan_empty);
  tcase_add_test(tc, test_scan_missing_root);
  tcase_add_test(tc, test_scan_odd_names);
  tcase_add_test(tc, test_scan_too_long_to_name);
  tcase_add_test(tc, test_scan_keeps_listings_on_the_way);
  tcase_add_test(tc, test_scan_lister_for_run);
  suite_add_tcase(s, tc);

  tc = tcase_create("unreadable");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_scan_unreadable);
  tcase_add_test(tc, test_scan_unsearchable);
  tcase_add_test(tc, test_scan_unreadable_through_link);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  umask(022);
  SRunner *sr = srunner_create(scan_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
