/* SPDX-License-Identifier: Apache-2.0 */
/* The pure planning code: ancestor pinning and the Landlock carve-out on a
 * fake tree, including the aliases (hard links, bind mounts, other
 * spellings) that must never be granted. */
#include <check.h>
#include <string.h>
#include <sys/stat.h>

#include "enforce/enforce.h"
#include "enforce/plan.h"
#include "matcher.h"
#include "path.h"
#include "tmptree.h"

#define D (S_IFDIR | 0755)
#define F (S_IFREG | 0644)
#define L (S_IFLNK | 0777)
/* A file with other names (DirEntry.aliased): hard links, a mount on it. */
#define FL (S_IFREG | 0640)

/* A fake filesystem: each node is "path mode dev ino". */
typedef struct {
  const char *path;
  mode_t mode;
  dev_t dev;
  ino_t ino;
} Node;

typedef struct {
  const Node *nodes;
  size_t n;
  int fail_errno;       /* make listing this directory fail */
  const char *fail_dir;
  size_t calls;
} FakeFs;

static int fake_list(void *userdata, const char *dir, DirEntry **ret, size_t *ret_n) {
  FakeFs *fs = userdata;
  DirEntry *v = NULL;
  size_t n = 0, cap = 0;
  bool exists = streq(dir, "/");
  fs->calls++;
  if (fs->fail_dir != NULL && streq(dir, fs->fail_dir)) {
    return -fs->fail_errno;
  }
  for (size_t i = 0; i < fs->n; i++) {
    const char *p = fs->nodes[i].path;
    exists |= streq(p, dir);
    _cleanup_free_ char *parent = path_dirname(p);
    if (!streq(parent, dir)) {
      continue;
    }
    DirEntry *e = grow_array(&v, &n, &cap, sizeof(DirEntry));
    e->name = xstrdup(path_basename(p));
    e->mode = fs->nodes[i].mode;
    e->dev = fs->nodes[i].dev;
    e->ino = fs->nodes[i].ino;
    e->aliased = fs->nodes[i].mode == FL;
  }
  if (!exists) {
    dir_entries_free(v, n);
    return -ENOENT;
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

/* /home/dev/proj with agent.lock, src/{index.tsx,App.tsx}, tests/ */
static const Node tree[] = {
    {"/usr", D, 1, 10},
    {"/tmp", D, 2, 11},
    {"/home", D, 1, 12},
    {"/home/other", D, 1, 13},
    {"/home/dev", D, 1, 14},
    {"/home/dev/.bashrc", F, 1, 15},
    {"/home/dev/proj", D, 1, 16},
    {"/home/dev/proj/agent.lock", F, 1, 17},
    {"/home/dev/proj/package.json", F, 1, 18},
    {"/home/dev/proj/tests", D, 1, 19},
    {"/home/dev/proj/tests/a.test", F, 1, 20},
    {"/home/dev/proj/src", D, 1, 21},
    {"/home/dev/proj/src/App.tsx", F, 1, 22},
    {"/home/dev/proj/src/index.tsx", F, 1, 23},
    /* A hard link of the protected file, as a sibling of a chain dir. */
    {"/home/dev/proj/zz_hardlink", F, 1, 23},
    /* A bind alias of the project root, as a sibling of a chain dir. */
    {"/home/dev/proj-alias", D, 1, 16},
    /* The same chain directory under another spelling (case folding). */
    {"/home/dev/PROJ", D, 1, 16},
    /* A symlink sibling pointing at the protected file. */
    {"/home/dev/proj/link.tsx", L, 1, 30},
    /* A file with another name the plan cannot see: perhaps a hard link
     * of a file inside a protected directory. */
    {"/home/dev/proj/linked.yml", FL, 1, 31},
};

static PlanTarget target(const char *path, mode_t mode, dev_t dev, ino_t ino) {
  PlanTarget t = {0};
  t.path = path; /* borrowed, as from the scan: a literal here */
  t.relative = path;
  t.mode = mode;
  t.dev = dev;
  t.ino = ino;
  return t;
}

static bool has_grant(const Carve *c, const char *path) {
  for (size_t i = 0; i < c->n_grants; i++) {
    if (streq(c->grants[i].path, path)) {
      return true;
    }
  }
  return false;
}

static bool has_restricted(const Carve *c, const char *path) {
  for (size_t i = 0; i < c->n_restricted; i++) {
    if (streq(c->restricted[i], path)) {
      return true;
    }
  }
  return false;
}

START_TEST(carve_seed_example) {
  FakeFs fs = {tree, ELEMENTSOF(tree), 0, NULL, 0};
  PlanTarget t[2] = {target("/home/dev/proj/agent.lock", F, 1, 17),
                     target("/home/dev/proj/src/index.tsx", F, 1, 23)};
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(t, 2, fake_list, &fs, &c, &err), 0);

  /* The chain, parents first, from / down. */
  const char *restricted[] = {"/", "/home", "/home/dev", "/home/dev/proj", "/home/dev/proj/src"};
  ck_assert_uint_eq(c.n_restricted, ELEMENTSOF(restricted));
  for (size_t i = 0; i < ELEMENTSOF(restricted); i++) {
    ck_assert_str_eq(c.restricted[i], restricted[i]);
  }
  /* Siblings off the way are granted, whole subtrees. */
  ck_assert(has_grant(&c, "/usr"));
  ck_assert(has_grant(&c, "/tmp"));
  ck_assert(has_grant(&c, "/home/other"));
  ck_assert(has_grant(&c, "/home/dev/.bashrc"));
  ck_assert(has_grant(&c, "/home/dev/proj/package.json"));
  ck_assert(has_grant(&c, "/home/dev/proj/tests"));
  ck_assert(has_grant(&c, "/home/dev/proj/src/App.tsx"));
  /* The protected objects and the chain itself are not. */
  ck_assert(!has_grant(&c, "/home/dev/proj/agent.lock"));
  ck_assert(!has_grant(&c, "/home/dev/proj/src/index.tsx"));
  ck_assert(!has_grant(&c, "/home/dev/proj/src"));
  ck_assert(!has_grant(&c, "/home/dev/proj"));
  ck_assert(!has_grant(&c, "/home"));
  /* Aliases, found by identity rather than by name (ATTACKS.md rows 30,
   * 32, 70): a grant there would land on the protected inode or on the
   * whole project. */
  ck_assert(!has_grant(&c, "/home/dev/proj/zz_hardlink"));
  ck_assert(!has_grant(&c, "/home/dev/proj-alias"));
  ck_assert(!has_grant(&c, "/home/dev/PROJ"));
  /* Symbolic links are never granted through (row 33). */
  ck_assert(!has_grant(&c, "/home/dev/proj/link.tsx"));
  ck_assert_uint_eq(c.n_grants, 7);
  /* Each grant carries the identity the lister gave it: landlock_apply
   * puts the rule on that object only, whatever the name leads to by
   * then (an outside RENAME_EXCHANGE of src/ and a protected directory). */
  for (size_t i = 0; i < c.n_grants; i++) {
    const Node *node = NULL;
    for (size_t k = 0; k < ELEMENTSOF(tree) && node == NULL; k++) {
      node = streq(tree[k].path, c.grants[i].path) ? &tree[k] : NULL;
    }
    ck_assert_ptr_nonnull(node);
    ck_assert_msg(c.grants[i].dev == node->dev && c.grants[i].ino == node->ino, "%s",
                  c.grants[i].path);
  }
  /* A file another name may reach gets no rule (a rule follows the file
   * to every name), and the plan says so. */
  ck_assert(!has_grant(&c, "/home/dev/proj/linked.yml"));
  ck_assert_uint_eq(c.n_withheld, 1);
  ck_assert_str_eq(c.withheld[0], "/home/dev/proj/linked.yml");
  carve_clear(&c);
  plan_targets_free(NULL, 0);
}
END_TEST

START_TEST(carve_protected_directory_not_listed) {
  FakeFs fs = {tree, ELEMENTSOF(tree), 0, NULL, 0};
  /* A protected directory plus a target inside it (a symlink target):
   * nothing inside the directory may be granted. */
  PlanTarget t[2] = {target("/home/dev/proj/tests", D, 1, 19),
                     target("/home/dev/proj/tests/a.test", F, 1, 20)};
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(t, 2, fake_list, &fs, &c, &err), 0);
  ck_assert(!has_restricted(&c, "/home/dev/proj/tests"));
  ck_assert(!has_grant(&c, "/home/dev/proj/tests"));
  ck_assert(!has_grant(&c, "/home/dev/proj/tests/a.test"));
  ck_assert(has_restricted(&c, "/home/dev/proj"));
  ck_assert(has_grant(&c, "/home/dev/proj/src"));
  carve_clear(&c);
  for (int i = 0; i < 2; i++) {
  }
}
END_TEST

START_TEST(carve_missing_target_restricts_its_parent) {
  FakeFs fs = {tree, ELEMENTSOF(tree), 0, NULL, 0};
  PlanTarget t = target("/home/dev/proj/src/new/secret.env", F, 0, 0);
  t.missing = true;
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(&t, 1, fake_list, &fs, &c, &err), 0);
  /* src is restricted (nothing new in it, so `new` cannot be created);
   * the directory that does not exist has nothing to list. */
  ck_assert(has_restricted(&c, "/home/dev/proj/src"));
  ck_assert(has_restricted(&c, "/home/dev/proj/src/new"));
  ck_assert(has_grant(&c, "/home/dev/proj/src/index.tsx"));
  ck_assert(has_grant(&c, "/home/dev/proj/src/App.tsx"));
  carve_clear(&c);
}
END_TEST

START_TEST(carve_symlink_target_also_restricts_link_dir) {
  FakeFs fs = {tree, ELEMENTSOF(tree), 0, NULL, 0};
  PlanTarget t = target("/home/dev/proj/src/index.tsx", F, 1, 23);
  t.link = xstrdup("/home/dev/proj/tests/link.lock");
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(&t, 1, fake_list, &fs, &c, &err), 0);
  /* The link's directory is on a chain too, so the link cannot be
   * replaced (ATTACKS.md row 35). */
  ck_assert(has_restricted(&c, "/home/dev/proj/tests"));
  ck_assert(has_grant(&c, "/home/dev/proj/tests/a.test"));
  ck_assert(!has_grant(&c, "/home/dev/proj/tests"));
  carve_clear(&c);
  free(t.link);
}
END_TEST

START_TEST(carve_withholds_bind_mounts_from_protected_dirs) {
  /* tests/golden is protected; a bind mount of a directory inside it
   * sits at /home/dev/alias, beside the chain. A rule there would land on
   * an inode inside golden, opening it under its protected name too. */
  PlanTarget t[2] = {target("/home/dev/proj/agent.lock", F, 1, 17),
                     target("/home/dev/proj/tests/golden", D, 1, 40)};
  CarveGrant grants[] = {
      /* a bind from inside golden */
      {.path = (char *)"/home/dev/alias", .is_dir = true, .exact = true},
      /* a bind from elsewhere */
      {.path = (char *)"/home/dev/other", .is_dir = true, .exact = true},
      /* golden itself, bound */
      {.path = (char *)"/home/dev/whole", .is_dir = true, .exact = true},
      /* another filesystem */
      {.path = (char *)"/tmp", .is_dir = true, .exact = true},
      /* no mount at all */
      {.path = (char *)"/home/dev/plain", .is_dir = true, .exact = true},
      /* a file: not judged here */
      {.path = (char *)"/home/dev/file", .is_dir = false, .exact = true},
  };
  Carve c = {0};
  c.grants = xmalloc(sizeof(grants));
  memcpy(c.grants, grants, sizeof(grants));
  c.n_grants = ELEMENTSOF(grants);
  for (size_t i = 0; i < c.n_grants; i++) {
    c.grants[i].path = xstrdup(grants[i].path);
  }
  carve_withhold_mounted(&c, t, 2,
                         "26 1 254:0 / / rw - ext4 /dev/vda rw\n"
                         "30 26 0:30 / /tmp rw - tmpfs tmpfs rw\n"
                         "40 26 254:0 /home/dev/proj/tests/golden/sub /home/dev/alias rw - ext4 "
                         "/dev/vda rw\n"
                         "41 26 254:0 /home/other /home/dev/other rw - ext4 /dev/vda rw\n"
                         "42 26 254:0 /home/dev/proj/tests/golden /home/dev/whole rw - ext4 "
                         "/dev/vda rw\n"
                         /* a bind of the same place on another device */
                         "43 26 8:1 /home/dev/proj/tests/golden /home/dev/plain2 rw - ext4 "
                         "/dev/sdb1 rw\n");
  ck_assert_uint_eq(c.n_withheld, 2);
  ck_assert_str_eq(c.withheld[0], "/home/dev/alias");
  ck_assert_str_eq(c.withheld[1], "/home/dev/whole");
  ck_assert_uint_eq(c.n_grants, 4);
  ck_assert(has_grant(&c, "/home/dev/other"));
  ck_assert(has_grant(&c, "/tmp"));
  ck_assert(has_grant(&c, "/home/dev/plain"));
  ck_assert(has_grant(&c, "/home/dev/file"));
  carve_clear(&c);
}
END_TEST

START_TEST(carve_lister_error_is_reported) {
  FakeFs fs = {tree, ELEMENTSOF(tree), EIO, "/home/dev", 0};
  PlanTarget t = target("/home/dev/proj/agent.lock", F, 1, 17);
  Carve c;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(carve_plan(&t, 1, fake_list, &fs, &c, &err), -1);
  ck_assert_ptr_nonnull(err.message);
  ck_assert_ptr_nonnull(strstr(err.message, "/home/dev"));
  ck_assert_int_eq(err.errnum, EIO);
  ck_assert_uint_eq(c.n_grants, 0);
}
END_TEST

START_TEST(carve_unlistable_directory_grants_nothing) {
  /* Searchable but not listable (0711): nothing in it is granted, it is
   * still restricted, and the plan names it. */
  FakeFs fs = {tree, ELEMENTSOF(tree), EACCES, "/home/dev", 0};
  PlanTarget t = target("/home/dev/proj/agent.lock", F, 1, 17);
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(&t, 1, fake_list, &fs, &c, &err), 0);
  ck_assert_uint_eq(c.n_unlisted, 1);
  ck_assert_str_eq(c.unlisted[0], "/home/dev");
  ck_assert(has_restricted(&c, "/home/dev"));
  ck_assert(!has_grant(&c, "/home/dev/.bashrc"));
  /* Elsewhere, as usual. */
  ck_assert(has_grant(&c, "/home/other"));
  ck_assert(has_grant(&c, "/home/dev/proj/src"));
  carve_clear(&c);
}
END_TEST

START_TEST(carve_dirs_listed_counts_what_the_lister_is_asked) {
  /* What carve_plan lists is what a keeping lister holds open: `/`, each
   * ancestor once, a protected link's own directory, nothing inside a
   * protected directory. */
  PlanTarget t[4] = {target("/home/dev/proj/agent.lock", F, 1, 17),
                     target("/home/dev/proj/src/App.tsx", F, 1, 22),
                     target("/home/dev/proj/tests", D, 1, 19),
                     target("/home/dev/proj/tests/a.test", F, 1, 20)};
  t[1].link = xstrdup("/home/other/link.tsx");
  FakeFs fs = {tree, ELEMENTSOF(tree), 0, NULL, 0};
  Carve c;
  Error err = {0};
  ck_assert_int_eq(carve_plan(t, 4, fake_list, &fs, &c, &err), 0);
  /* /, /home, /home/dev, /home/dev/proj, its src, and /home/other. */
  ck_assert_uint_eq(carve_dirs_listed(t, 4), 6);
  ck_assert_uint_eq(fs.calls, 6);
  carve_clear(&c);
  free(t[1].link);
  ck_assert_uint_eq(carve_dirs_listed(NULL, 0), 1); /* `/` alone */
}
END_TEST

START_TEST(descriptors_checked_against_the_limit) {
  Error err = {0};
  /* Room for the directories, the slack and a batch of rules. */
  ck_assert_int_eq(plan_check_descriptors(100, 0, 3, 100 + 3 + PLAN_FD_SLACK, &err), 0);
  ck_assert_int_eq(plan_check_descriptors(100, 1000, 3, 100 + 3 + PLAN_FD_SLACK +
                                                          PLAN_RULE_BATCH, &err), 0);
  /* No limit at all. */
  ck_assert_int_eq(plan_check_descriptors(100000, 100000, 3, 0, &err), 0);
  /* One more than there is room for, before the plan (no rules yet) and
   * after (a batch of rules at most, however many there are). */
  ck_assert_int_eq(plan_check_descriptors(101, 0, 3, 100 + 3 + PLAN_FD_SLACK, &err), -1);
  ck_assert_int_eq(err.errnum, EMFILE);
  ck_assert_str_eq(err.message,
                   "the plan needs 101 open directories (those on the way to protected paths, "
                   "held open while the Landlock rules are made), more than the limit of 107 open "
                   "files (ulimit -n) leaves room for; raise it with `ulimit -n`");
  error_clear(&err);
  ck_assert_int_eq(plan_check_descriptors(100, 5, 3, 100 + 3 + PLAN_FD_SLACK + 4, &err), -1);
  error_clear(&err);
  ck_assert_int_eq(plan_check_descriptors(100, 5000, 3, 100 + 3 + PLAN_FD_SLACK + 63, &err),
                   -1);
  error_clear(&err);
}
END_TEST

/* The patterns of the new-names tests, and the targets a scan of /p
 * would give for them. */
static const char *const names_patterns[] = {
    "agent.lock",      "tests/golden/**", "Cargo.lock",          "migrations/*.sql",
    ".env.production", "**/*.pem",        "tests/golden/*.txt", "tests/{golden,other}/x",
    "docs/*.md",       "tests/golden",
};

static Matcher *names_matcher(void) {
  Matcher *m = NULL;
  Error err = {0};
  ck_assert_int_eq(matcher_new(names_patterns, ELEMENTSOF(names_patterns), 0, &m, &err), 0);
  return m;
}

static void names_targets(PlanTarget t[5]) {
  t[0] = target("/p/Cargo.lock", F, 1, 2);
  t[0].relative = "Cargo.lock";
  t[1] = target("/p/agent.lock", F, 1, 3);
  t[1].relative = "agent.lock";
  t[2] = target("/p/migrations/001.sql", F, 1, 4);
  t[2].relative = "migrations/001.sql";
  t[3] = target("/p/tests/golden", D, 1, 5);
  t[3].relative = "tests/golden";
  t[4] = target("/p/.env.production", F, 0, 0);
  t[4].relative = ".env.production";
  t[4].missing = true;
}

/* plan_new_names_stopped(), every pattern at once, says what
 * plan_stops_new_names() says of each. */
static void check_all_at_once(const Plan *plan, const Matcher *m, const bool *want,
                              const char *canon_root) {
  bool stops[ELEMENTSOF(names_patterns)];
  memset(stops, 0xff, sizeof(stops));
  plan_new_names_stopped(plan, m, names_patterns, ELEMENTSOF(names_patterns), canon_root, stops);
  for (size_t i = 0; i < ELEMENTSOF(names_patterns); i++) {
    ck_assert_msg(stops[i] == want[i], "all at once: %s", names_patterns[i]);
  }
}

START_TEST(new_names_under_the_mount_backend) {
  _cleanup_matcher_ Matcher *m = names_matcher();
  PlanTarget t[5];
  names_targets(t);
  Plan plan = {.backend = BACKEND_MOUNT, .targets = t, .n_targets = 5};
  /* What exists is bound, and so is everything in a protected directory;
   * a glob whose matches may appear in a writable directory, and a
   * literal naming nothing, are not covered. */
  const bool want[] = {true, true, true, false, false, false, true, false, false, true};
  for (size_t i = 0; i < ELEMENTSOF(names_patterns); i++) {
    ck_assert_msg(plan_stops_new_names(&plan, m, i, names_patterns[i], "/p") == want[i], "%s",
                  names_patterns[i]);
  }
  check_all_at_once(&plan, m, want, "/p");
  /* The root protected whole (it could not be read): everything in it. */
  PlanTarget whole = target("/p", D, 1, 1);
  whole.relative = ".";
  Plan all = {.backend = BACKEND_MOUNT, .targets = &whole, .n_targets = 1};
  ck_assert(plan_stops_new_names(&all, m, 5, names_patterns[5], "/p"));
  const bool every[] = {true, true, true, true, true, true, true, true, true, true};
  check_all_at_once(&all, m, every, "/p");
}
END_TEST

START_TEST(new_names_under_the_landlock_backend) {
  _cleanup_matcher_ Matcher *m = names_matcher();
  PlanTarget t[5];
  names_targets(t);
  /* /p, /p/migrations and /p/tests are on the chain; src and docs are
   * granted, and so are a file and a directory outside the project. */
  CarveGrant grants[] = {{.path = (char *)"/p/src", .is_dir = true, .exact = true},
                         {.path = (char *)"/p/docs", .is_dir = true, .exact = true},
                         {.path = (char *)"/p/README.md", .is_dir = false, .exact = true},
                         {.path = (char *)"/p/tests/unit", .is_dir = true, .exact = true},
                         {.path = (char *)"/usr", .is_dir = true, .exact = true}};
  Plan plan = {.backend = BACKEND_LANDLOCK, .targets = t, .n_targets = 5};
  plan.carve.grants = grants;
  plan.carve.n_grants = ELEMENTSOF(grants);
  /* A new name in a directory on the chain or in a protected one is
   * refused; one below a granted directory is not: `**` everywhere, and
   * the glob over docs, which matched nothing, so docs is no chain. */
  const bool want[] = {true, true, true, true, true, false, true, true, false, true};
  for (size_t i = 0; i < ELEMENTSOF(names_patterns); i++) {
    ck_assert_msg(plan_stops_new_names(&plan, m, i, names_patterns[i], "/p") == want[i], "%s",
                  names_patterns[i]);
  }
  check_all_at_once(&plan, m, want, "/p");
  /* Without the root's canonical name, nothing is said to be covered. */
  ck_assert(!plan_stops_new_names(&plan, m, 3, names_patterns[3], NULL));
  const bool none[ELEMENTSOF(names_patterns)] = {false};
  check_all_at_once(&plan, m, none, NULL);
}
END_TEST

/* What plan_dirs_hold() answers, one target at a time: whether `path` is
 * a protected directory target or lies below one. */
static bool inside_protected_dir(const PlanTarget *t, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++) {
    if (!t[i].missing && S_ISDIR(t[i].mode) && path_relative(t[i].path, path) != NULL) {
      return true;
    }
  }
  return false;
}

/* plan_dirs_hold(), the index, says what a pass over the targets says,
 * for paths at, below, beside and above protected directories, also for
 * directories added after it was made. */
START_TEST(dirs_index_agrees) {
  PlanTarget t[] = {target("/p/a", D, 1, 1),     target("/p/a-b", F, 1, 2),
                    target("/p/ab", D, 1, 3),    target("/p/c/d", D, 1, 4),
                    target("/p/c/d.txt", F, 1, 5), target("/p/m", D, 0, 0),
                    target("/q", D, 1, 6)};
  t[5].missing = true;
  const char *paths[] = {"/p",     "/p/a",    "/p/a/x",  "/p/a-b",     "/p/a-b/x", "/p/ab",
                         "/p/abc", "/p/ab/c", "/p/c",    "/p/c/d",     "/p/c/dd",  "/p/c/d/e",
                         "/p/m",   "/p/m/x",  "/q",      "/q/r/s",     "/qq",      "/",
                         "/p/a/",  "p/a",     "/p/c/d.txt"};
  PlanDirs d;
  plan_dirs_init(&d, t, ELEMENTSOF(t));
  for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
    ck_assert_msg(plan_dirs_hold(&d, paths[i]) == inside_protected_dir(t, ELEMENTSOF(t), paths[i]),
                  "%s", paths[i]);
  }
  ck_assert(plan_dirs_hold(&d, "/p/a/x"));
  ck_assert(!plan_dirs_hold(&d, "/p/abc"));
  plan_dirs_clear(&d);
  /* Made from the first four, the rest added one by one. */
  plan_dirs_init(&d, t, 4);
  for (size_t k = 4; k < ELEMENTSOF(t); k++) {
    if (!t[k].missing && S_ISDIR(t[k].mode)) {
      plan_dirs_add(&d, t[k].path);
    }
  }
  for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
    ck_assert_msg(plan_dirs_hold(&d, paths[i]) ==
                      inside_protected_dir(t, ELEMENTSOF(t), paths[i]),
                  "%s", paths[i]);
  }
  ck_assert(plan_dirs_hold(&d, "/q/r/s"));
  plan_dirs_clear(&d);
  /* The root protected whole holds everything absolute. */
  PlanTarget root = target("/", D, 1, 7);
  plan_dirs_init(&d, &root, 1);
  ck_assert(plan_dirs_hold(&d, "/etc/x"));
  ck_assert(plan_dirs_hold(&d, "/"));
  plan_dirs_clear(&d);
}
END_TEST

START_TEST(pinned_every_ancestor_parents_first) {
  PlanTarget t[3] = {target("/home/dev/proj/agent.lock", F, 1, 17),
                     target("/home/dev/proj/src/deep/x.c", F, 1, 40),
                     target("/home/dev/proj/tests", D, 1, 19)};
  char **pinned;
  size_t n;
  ck_assert_int_eq(plan_pinned(t, 3, &pinned, &n), 0);
  const char *want[] = {"/home", "/home/dev", "/home/dev/proj", "/home/dev/proj/src",
                        "/home/dev/proj/src/deep"};
  ck_assert_uint_eq(n, ELEMENTSOF(want));
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(pinned[i], want[i]);
    free(pinned[i]);
  }
  free(pinned);
  for (int i = 0; i < 3; i++) {
  }
}
END_TEST

START_TEST(pinned_skips_missing_and_inside_protected) {
  PlanTarget t[3] = {target("/p/conf", D, 1, 2), target("/p/conf/sub/file", F, 1, 3),
                     target("/q/missing/x", F, 0, 0)};
  t[2].missing = true;
  char **pinned;
  size_t n;
  ck_assert_int_eq(plan_pinned(t, 3, &pinned, &n), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(pinned[0], "/p");
  free(pinned[0]);
  free(pinned);
  for (int i = 0; i < 3; i++) {
  }
}
END_TEST

START_TEST(backend_names_round_trip) {
  ck_assert_int_eq(backend_from_string("auto"), BACKEND_AUTO);
  ck_assert_int_eq(backend_from_string("mount"), BACKEND_MOUNT);
  ck_assert_int_eq(backend_from_string("landlock"), BACKEND_LANDLOCK);
  ck_assert_int_eq(backend_from_string("seatbelt"), _BACKEND_INVALID);
  ck_assert_str_eq(backend_to_string(BACKEND_LANDLOCK), "landlock");
  ck_assert_ptr_null(backend_to_string(_BACKEND_MAX));
}
END_TEST

/* Backend selection is pure: fed injected probe results. */
static Availability avail(int abi, MountStep step, int errnum) {
  Availability a = {.landlock_abi = abi, .mount = {.step = step, .errnum = errnum}};
  return a;
}

START_TEST(select_auto_prefers_mount) {
  Availability a = avail(7, MOUNT_STEP_NONE, 0);
  Backend b = _BACKEND_INVALID;
  _cleanup_free_ char *why = NULL;
  Error err = {0};
  ck_assert_int_eq(enforce_select(BACKEND_AUTO, &a, &b, &why, &err), 0);
  ck_assert_int_eq(b, BACKEND_MOUNT);
}
END_TEST

START_TEST(select_auto_falls_back_with_reason) {
  /* AppArmor-style: unshare works, the mount does not. */
  Availability a = avail(7, MOUNT_STEP_BIND, EACCES);
  Backend b = _BACKEND_INVALID;
  _cleanup_free_ char *why = NULL;
  Error err = {0};
  ck_assert_int_eq(enforce_select(BACKEND_AUTO, &a, &b, &why, &err), 0);
  ck_assert_int_eq(b, BACKEND_LANDLOCK);
  ck_assert_ptr_nonnull(strstr(why, "mount(MS_BIND|MS_REC) failed"));
  ck_assert_ptr_nonnull(strstr(why, strerror(EACCES)));
}
END_TEST

START_TEST(select_auto_does_not_fall_back_for_exhaustion) {
  /* Out of namespaces (a quota something can use up), memory or
   * processes: auto refuses rather than take the weaker backend, and an
   * explicit --backend landlock still works. */
  static const struct {
    MountStep step;
    int errnum;
  } exhausted[] = {
      {MOUNT_STEP_UNSHARE, ENOSPC}, {MOUNT_STEP_LOCK, ENOSPC}, {MOUNT_STEP_BIND, ENOSPC},
      {MOUNT_STEP_UNSHARE, EUSERS}, {MOUNT_STEP_FORK, EAGAIN}, {MOUNT_STEP_UNSHARE, ENOMEM},
      {MOUNT_STEP_FORK, EMFILE},    {MOUNT_STEP_FORK, ENFILE},
  };
  for (size_t i = 0; i < ELEMENTSOF(exhausted); i++) {
    Availability a = avail(7, exhausted[i].step, exhausted[i].errnum);
    ck_assert_msg(mount_probe_exhausted(&a.mount, 1000, 1000), "case %zu", i);
    ck_assert_msg(mount_probe_exhausted(&a.mount, -1, -1), "case %zu: quotas unknown", i);
    /* enforce_select reads this machine's quotas. */
    if (!sys_mount_probe_exhausted(&a.mount)) {
      continue;
    }
    Backend b = _BACKEND_INVALID;
    _cleanup_free_ char *why = NULL;
    _cleanup_error_ Error err = {0};
    ck_assert_int_eq(enforce_select(BACKEND_AUTO, &a, &b, &why, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.message, "auto does not fall back"));
    ck_assert_ptr_nonnull(strstr(err.message, "--backend landlock"));
    ck_assert_ptr_nonnull(strstr(err.message, strerror(exhausted[i].errnum)));
    ck_assert_int_eq(err.errnum, exhausted[i].errnum);
    error_clear(&err);
    ck_assert_int_eq(enforce_select(BACKEND_LANDLOCK, &a, &b, &why, &err), 0);
    ck_assert_int_eq(b, BACKEND_LANDLOCK);
    /* Without Landlock, no advice to choose it. */
    a.landlock_abi = -ENOSYS;
    ck_assert_int_eq(enforce_select(BACKEND_AUTO, &a, &b, &why, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.message, "ran out of resources"));
    ck_assert_ptr_null(strstr(err.message, "--backend landlock"));
  }
  /* A quota of 0 turns namespaces off: ENOSPC at unshare is then the
   * system's choice, and auto falls back. */
  MountProbe off = {MOUNT_STEP_UNSHARE, ENOSPC};
  ck_assert(!mount_probe_exhausted(&off, 0, 1000));
  ck_assert(!mount_probe_exhausted(&off, 1000, 0));
  off.step = MOUNT_STEP_LOCK;
  ck_assert(!mount_probe_exhausted(&off, 0, 1000));
  MountProbe bind = {MOUNT_STEP_BIND, ENOSPC};
  ck_assert(mount_probe_exhausted(&bind, 0, 0)); /* the mount count limit */
  /* What configuration refuses is not exhaustion. */
  static const int refused[] = {EPERM, EACCES, EINVAL};
  for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
    MountProbe p = {MOUNT_STEP_UNSHARE, refused[i]};
    ck_assert(!mount_probe_exhausted(&p, 1000, 1000));
  }
  MountProbe none = {MOUNT_STEP_NONE, 0};
  ck_assert(!sys_mount_probe_exhausted(&none));
}
END_TEST

START_TEST(select_nothing_available_fails) {
  Availability a = avail(-ENOSYS, MOUNT_STEP_UNSHARE, EPERM);
  Backend b = _BACKEND_INVALID;
  _cleanup_free_ char *why = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(enforce_select(BACKEND_AUTO, &a, &b, &why, &err), -1);
  ck_assert_ptr_null(why);
  ck_assert_ptr_nonnull(strstr(err.message, "no enforcement backend is available"));
  ck_assert_ptr_nonnull(strstr(err.message, "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed"));
  ck_assert_ptr_nonnull(strstr(err.message, "no Landlock support"));
}
END_TEST

START_TEST(select_requested_unavailable_fails) {
  Availability a = avail(7, MOUNT_STEP_UID_MAP, EPERM);
  Backend b = _BACKEND_INVALID;
  _cleanup_free_ char *why = NULL;
  _cleanup_error_ Error err = {0};
  ck_assert_int_eq(enforce_select(BACKEND_MOUNT, &a, &b, &why, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "the mount backend is unavailable"));
  ck_assert_ptr_nonnull(strstr(err.message, "uid_map"));
  error_clear(&err);
  a = avail(-EOPNOTSUPP, MOUNT_STEP_NONE, 0);
  ck_assert_int_eq(enforce_select(BACKEND_LANDLOCK, &a, &b, &why, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "not enabled"));
  error_clear(&err);
  ck_assert_int_eq(enforce_select(BACKEND_MOUNT, &a, &b, &why, &err), 0);
  ck_assert_int_eq(b, BACKEND_MOUNT);
}
END_TEST

START_TEST(describe_landlock_abi) {
  Availability a = avail(2, MOUNT_STEP_NONE, 0);
  _cleanup_free_ char *d2 = enforce_describe(&a, BACKEND_LANDLOCK);
  ck_assert_ptr_nonnull(strstr(d2, "truncation is not controlled"));
  a.landlock_abi = 7;
  _cleanup_free_ char *d7 = enforce_describe(&a, BACKEND_LANDLOCK);
  ck_assert_str_eq(d7, "available (kernel ABI v7)");
}
END_TEST

START_TEST(gaps_by_backend_and_abi) {
  /* The mount backend covers content and metadata alike. */
  ck_assert_uint_eq(plan_gaps(BACKEND_MOUNT, 1), 0);
  ck_assert_uint_eq(plan_gaps(BACKEND_MOUNT, 7), 0);
  /* Landlock: never metadata; below ABI 3, not truncation either. */
  ck_assert_uint_eq(plan_gaps(BACKEND_LANDLOCK, 1), PLAN_GAP_METADATA | PLAN_GAP_TRUNCATE);
  ck_assert_uint_eq(plan_gaps(BACKEND_LANDLOCK, 2), PLAN_GAP_METADATA | PLAN_GAP_TRUNCATE);
  ck_assert_uint_eq(plan_gaps(BACKEND_LANDLOCK, 3), PLAN_GAP_METADATA);
  ck_assert_uint_eq(plan_gaps(BACKEND_LANDLOCK, 7), PLAN_GAP_METADATA);
  /* No Landlock here (a dry run of what cannot run): the ABI it would
   * get is unknown, so no claim about truncation. */
  ck_assert_uint_eq(plan_gaps(BACKEND_LANDLOCK, -EOPNOTSUPP), PLAN_GAP_METADATA);
}
END_TEST

START_TEST(restricted_entries_only_in_directories) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "dir");
  make_file(t, "file", "x");
  make_symlink(t, "link", "dir");
  _cleanup_free_ char *dir = path_join(t, "dir"), *file = path_join(t, "file"),
                      *link = path_join(t, "link"), *missing = path_join(t, "nowhere"),
                      *under_file = path_join(t, "file/x");
  ck_assert(carve_restricts_entries(t));
  ck_assert(carve_restricts_entries(dir));
  /* A worktree's .git file, a name that does not exist, a name below a
   * file: no entries to refuse. A link is not followed. */
  ck_assert(!carve_restricts_entries(file));
  ck_assert(!carve_restricts_entries(missing));
  ck_assert(!carve_restricts_entries(under_file));
  ck_assert(!carve_restricts_entries(link));
}
END_TEST

START_TEST(seal_check_by_backend_and_abi) {
  bool scoped = true;
  _cleanup_error_ Error err = {0};
  /* No Landlock: no seal with either backend. */
  ck_assert_int_eq(enforce_seal_check(BACKEND_MOUNT, -EOPNOTSUPP, &scoped, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "does not offer"));
  ck_assert(!scoped);
  error_clear(&err);
  ck_assert_int_eq(enforce_seal_check(BACKEND_LANDLOCK, 0, &scoped, &err), -1);
  error_clear(&err);
  /* ABI 1: the Landlock backend's own domain is the seal; the mount
   * backend's layer needs REFER (ABI 2). */
  ck_assert_int_eq(enforce_seal_check(BACKEND_LANDLOCK, 1, &scoped, &err), 0);
  ck_assert(!scoped);
  ck_assert_int_eq(enforce_seal_check(BACKEND_MOUNT, 1, &scoped, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.message, "ABI 2 or later; this kernel has ABI 1"));
  error_clear(&err);
  for (int abi = 2; abi <= 7; abi++) {
    for (Backend b = BACKEND_MOUNT; b <= BACKEND_LANDLOCK; b++) {
      scoped = abi < 6;
      ck_assert_int_eq(enforce_seal_check(b, abi, &scoped, &err), 0);
      /* Signals and abstract sockets from ABI 6 on. */
      ck_assert(scoped == (abi >= 6));
    }
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("carve");
  TCase *tc = tcase_create("core");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, carve_seed_example);
  tcase_add_test(tc, carve_protected_directory_not_listed);
  tcase_add_test(tc, carve_missing_target_restricts_its_parent);
  tcase_add_test(tc, carve_symlink_target_also_restricts_link_dir);
  tcase_add_test(tc, carve_lister_error_is_reported);
  tcase_add_test(tc, carve_unlistable_directory_grants_nothing);
  tcase_add_test(tc, carve_withholds_bind_mounts_from_protected_dirs);
  tcase_add_test(tc, carve_dirs_listed_counts_what_the_lister_is_asked);
  tcase_add_test(tc, dirs_index_agrees);
  tcase_add_test(tc, descriptors_checked_against_the_limit);
  tcase_add_test(tc, new_names_under_the_mount_backend);
  tcase_add_test(tc, new_names_under_the_landlock_backend);
  tcase_add_test(tc, pinned_every_ancestor_parents_first);
  tcase_add_test(tc, pinned_skips_missing_and_inside_protected);
  tcase_add_test(tc, backend_names_round_trip);
  tcase_add_test(tc, select_auto_prefers_mount);
  tcase_add_test(tc, select_auto_falls_back_with_reason);
  tcase_add_test(tc, select_auto_does_not_fall_back_for_exhaustion);
  tcase_add_test(tc, select_nothing_available_fails);
  tcase_add_test(tc, select_requested_unavailable_fails);
  tcase_add_test(tc, describe_landlock_abi);
  tcase_add_test(tc, gaps_by_backend_and_abi);
  tcase_add_test(tc, restricted_entries_only_in_directories);
  tcase_add_test(tc, seal_check_by_backend_and_abi);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
