/* SPDX-License-Identifier: Apache-2.0 */
/* The system-call helpers the backends check their work with: a path
 * opened without following any symbolic link (openat2, and the walk used
 * where openat2 is missing, forced here with a seccomp filter), and the
 * statx that tells a file with other names. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enforce/linux/landlock.h"
#include "enforce/linux/mount.h"
#include "enforce/linux/sys.h"
#include "enforce/plan.h"
#include "path.h"
#include "tmptree.h"
#include "util.h"

/* a/b/file, a/link -> b, a/b/flink -> file, a/b/dangling -> nowhere */
static char *tree(void) {
  char *t = make_tmpdir();
  make_dir(t, "a");
  make_dir(t, "a/b");
  make_file(t, "a/b/file", "x\n");
  make_symlink(t, "a/link", "b");
  make_symlink(t, "a/b/flink", "file");
  make_symlink(t, "a/b/dangling", "nowhere");
  return t;
}

/* "name: OK" when the open succeeds on the object lstat(2) names, else
 * "name: ERRNO". */
static void describe(FILE *out, const char *t, const char *rel) {
  _cleanup_free_ char *p = path_join(t, rel);
  int fd = sys_open_no_symlinks(p);
  if (fd < 0) {
    fprintf(out, "%s: %s\n", rel, errno == ELOOP ? "ELOOP" : errno == ENOENT ? "ENOENT" : "other");
    return;
  }
  struct stat a, b;
  bool same = fstat(fd, &a) == 0 && lstat(p, &b) == 0 && a.st_dev == b.st_dev &&
              a.st_ino == b.st_ino;
  fprintf(out, "%s: %s\n", rel, same ? "OK" : "WRONG OBJECT");
  close(fd);
}

static const char *const cases[] = {"a", "a/b", "a/b/file", "a/link", "a/link/file",
                                    "a/b/flink", "a/b/dangling", "a/b/missing"};
static const char expected[] = "a: OK\n"
                               "a/b: OK\n"
                               "a/b/file: OK\n"
                               "a/link: ELOOP\n"
                               "a/link/file: ELOOP\n"
                               "a/b/flink: ELOOP\n"
                               "a/b/dangling: ELOOP\n"
                               "a/b/missing: ENOENT\n";

static void describe_all(FILE *out, void *userdata) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    describe(out, userdata, cases[i]);
  }
}

START_TEST(open_no_symlinks) {
  _cleanup_free_ char *t = tree();
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  describe_all(out, t);
  fclose(out);
  ck_assert_str_eq(buf, expected);
  free(buf);
  /* Not an absolute path: refused, not resolved from somewhere. */
  errno = 0;
  ck_assert_int_eq(sys_open_no_symlinks("a/b"), -1);
}
END_TEST

/* The same answers from the walk used where openat2(2) is missing: a
 * seccomp filter makes it fail with ENOSYS, as on Linux before 5.6. */
static void without_openat2(FILE *out, void *userdata) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = ELEMENTSOF(f), .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
    fprintf(out, "SKIP cannot load a seccomp filter: %s\n", strerror(errno));
    return;
  }
  struct open_how how = {.flags = O_PATH, .resolve = RESOLVE_NO_SYMLINKS};
  if (syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how)) >= 0 || errno != ENOSYS) {
    fprintf(out, "ERROR the filter did not take openat2 away\n");
    return;
  }
  describe_all(out, userdata);
}

START_TEST(open_no_symlinks_without_openat2) {
  _cleanup_free_ char *t = tree();
  _cleanup_free_ char *got = run_in_child("open_no_symlinks_without_openat2", without_openat2, t);
  if (got != NULL) {
    ck_assert_str_eq(got, expected);
  }
}
END_TEST

static bool aliased(const char *t, const char *rel, struct stat *st) {
  _cleanup_close_ int dir = open(t, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(dir, 0);
  bool a = true;
  ck_assert_int_eq(sys_stat_aliased(dir, rel, st, &a), 0);
  return a;
}

START_TEST(stat_aliased) {
  _cleanup_free_ char *t = tree();
  make_file(t, "single", "1\n");
  make_file(t, "linked", "2\n");
  make_hardlink(t, "linked", "a/other-name");
  struct stat st, ref;
  ck_assert(!aliased(t, "single", &st));
  _cleanup_free_ char *single = path_join(t, "single");
  ck_assert_int_eq(lstat(single, &ref), 0);
  ck_assert(st.st_dev == ref.st_dev && st.st_ino == ref.st_ino);
  ck_assert(S_ISREG(st.st_mode));
  ck_assert(aliased(t, "linked", &st));
  ck_assert(aliased(t, "a/other-name", &st));
  ck_assert_uint_eq(st.st_nlink, 2);
  /* A directory has as many links as subdirectories: never aliased. */
  ck_assert(!aliased(t, "a", &st));
  ck_assert(S_ISDIR(st.st_mode));
  /* A link is looked at, not followed. */
  ck_assert(!aliased(t, "a/link", &st));
  ck_assert(S_ISLNK(st.st_mode));
  /* The descriptor itself, by an empty name. */
  _cleanup_free_ char *linked = path_join(t, "linked");
  _cleanup_close_ int fd = open(linked, O_PATH | O_CLOEXEC);
  bool a = false;
  ck_assert_int_eq(sys_stat_aliased(fd, "", &st, &a), 0);
  ck_assert(a);
  ck_assert_int_eq(sys_stat_aliased(fd, "gone", &st, &a), -1);
}
END_TEST

/* Something mounted on a file makes it aliased as well. */
static void mounted_file(FILE *out, void *userdata) {
  const char *t = userdata;
  if (!child_enter_mount_namespace(out)) {
    return;
  }
  _cleanup_free_ char *src = path_join(t, "single");
  _cleanup_free_ char *dst = path_join(t, "mounted");
  if (mount(src, dst, NULL, MS_BIND, NULL) < 0) {
    fprintf(out, "SKIP cannot bind mount a file here: %s\n", strerror(errno));
    return;
  }
  _cleanup_close_ int dir = open(t, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  bool a = false;
  if (sys_stat_aliased(dir, "mounted", &st, &a) < 0) {
    fprintf(out, "ERROR statx: %s\n", strerror(errno));
    return;
  }
  fprintf(out, "mounted: %s\n", a ? "aliased" : "single");
  if (sys_stat_aliased(dir, "single", &st, &a) == 0) {
    fprintf(out, "single: %s\n", a ? "aliased" : "single");
  }
}

START_TEST(stat_aliased_mount_point) {
  _cleanup_free_ char *t = make_tmpdir();
  make_file(t, "single", "1\n");
  make_file(t, "mounted", "");
  _cleanup_free_ char *got = run_in_child("stat_aliased_mount_point", mounted_file, t);
  if (got != NULL) {
    /* The mount point is aliased; the file mounted there, under its own
     * name, has one link and nothing on it. */
    ck_assert_str_eq(got, "mounted: aliased\nsingle: single\n");
  }
}
END_TEST

/* ---- sys_make_read_only ------------------------------------------------------
 *
 * Read-only must reach what is mounted below the path too (ATTACKS #51).
 * mount_setattr(AT_RECURSIVE) does it; before Linux 5.12 (ENOSYS, made
 * here by a seccomp filter) each mount below is remounted on its own. */

static void read_only_tree(FILE *out, void *userdata) {
  const char *t = userdata;
  if (!child_enter_mount_namespace(out)) {
    return;
  }
  _cleanup_free_ char *d = path_join(t, "d"), *sub = path_join(t, "d/sub");
  _cleanup_free_ char *src = path_join(t, "elsewhere");
  if (mount(d, d, NULL, MS_BIND, NULL) < 0 || mount(src, sub, NULL, MS_BIND, NULL) < 0) {
    fprintf(out, "SKIP cannot bind mount here: %s\n", strerror(errno));
    return;
  }
  int r = sys_make_read_only(d);
  fprintf(out, "make_read_only: %s\n", r == 0 ? "OK" : strerror(-r));
  static const char *const files[] = {"d/f", "d/sub/g"};
  for (size_t i = 0; i < ELEMENTSOF(files); i++) {
    _cleanup_free_ char *p = path_join(t, files[i]);
    int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
    fprintf(out, "%s: %s\n", files[i], fd >= 0 ? "writable" : strerrorname_np(errno));
    if (fd >= 0) {
      close(fd);
    }
  }
}

static void read_only_tree_without_setattr(FILE *out, void *userdata) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount_setattr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = ELEMENTSOF(f), .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
    fprintf(out, "SKIP cannot load a seccomp filter: %s\n", strerror(errno));
    return;
  }
  read_only_tree(out, userdata);
}

static char *read_only_with(const char *test, ChildFn fn) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "d");
  make_dir(t, "d/sub");
  make_file(t, "d/f", "protected\n");
  make_dir(t, "elsewhere");
  make_file(t, "elsewhere/g", "mounted below\n");
  return run_in_child(test, fn, t);
}

static const char read_only_expected[] = "make_read_only: OK\n"
                                         "d/f: EROFS\n"
                                         "d/sub/g: EROFS\n";

START_TEST(make_read_only_reaches_submounts) {
  _cleanup_free_ char *got = read_only_with(__func__, read_only_tree);
  if (got != NULL) {
    ck_assert_str_eq(got, read_only_expected);
  }
}
END_TEST

START_TEST(make_read_only_reaches_submounts_without_mount_setattr) {
  _cleanup_free_ char *got = read_only_with(__func__, read_only_tree_without_setattr);
  if (got != NULL) {
    ck_assert_str_eq(got, read_only_expected);
  }
}
END_TEST

/* ---- mount_lock's checks after locking ------------------------------------
 *
 * Between the plan and the binds another process of the user may change
 * the tree: replace the protected file, or turn a directory on the way
 * into a symbolic link (mount(2) follows it, so every bind lands
 * somewhere else). mount_lock must then refuse to run, saying which
 * path; with nothing changed it must succeed. Each case in a child of its
 * own, whose namespaces vanish with it. */

typedef enum {
  SWAP_NONE,
  SWAP_FILE,         /* another file renamed over d/f */
  SWAP_DIR_FOR_LINK, /* d renamed to d2, and d made a link to it */
} Swap;

typedef struct {
  const char *t;
  Swap swap;
} SwapCase;

/* The protected file d/f of a swap case's tree, as planned; NULL after
 * writing the ERROR line. */
static PlanTarget *target_d_f(FILE *out, const char *t) {
  PlanTarget *target = xcalloc(1, sizeof(*target));
  target->path_owned = path_join(t, "d/f");
  target->path = target->path_owned;
  target->relative = "d/f";
  struct stat st;
  if (stat(target->path, &st) < 0) {
    fprintf(out, "ERROR stat: %s\n", strerror(errno));
    plan_targets_free(target, 1);
    return NULL;
  }
  target->dev = st.st_dev;
  target->ino = st.st_ino;
  target->mode = st.st_mode;
  return target;
}

static void apply_after_swap(FILE *out, void *userdata) {
  const SwapCase *c = userdata;
  PlanTarget *target = target_d_f(out, c->t);
  if (target == NULL) {
    return;
  }
  Plan plan;
  Error err = {0};
  if (plan_build(BACKEND_MOUNT, target, 1, NULL, NULL, &plan, &err) < 0) {
    fprintf(out, "ERROR plan: %s\n", err.message);
    return;
  }
  _cleanup_free_ char *d = path_join(c->t, "d"), *d2 = path_join(c->t, "d2");
  _cleanup_free_ char *g = path_join(c->t, "d/g");
  if ((c->swap == SWAP_FILE && rename(g, target->path) < 0) ||
      (c->swap == SWAP_DIR_FOR_LINK && (rename(d, d2) < 0 || symlink("d2", d) < 0))) {
    fprintf(out, "ERROR swap: %s\n", strerror(errno));
    return;
  }
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  if (mount_prepare(&plan, &err) == 0 && mount_lock(&plan, cwd, false, &err) == 0) {
    fputs("applied\n", out);
  } else if (startswith(err.message, "the mount backend failed at")) {
    const char *need = getenv("RALON_REQUIRE_BACKENDS");
    fprintf(out, "%s %s\n", need != NULL && strstr(need, "mount") ? "ERROR" : "SKIP",
            err.message);
  } else {
    /* The path as the test names it, not the scratch directory's. */
    const char *m = err.message;
    const char *at = strstr(m, c->t);
    if (at != NULL) {
      fprintf(out, "refused: %.*sT%s\n", (int)(at - m), m, at + strlen(c->t));
    } else {
      fprintf(out, "refused: %s\n", m);
    }
  }
  error_clear(&err);
  plan_clear(&plan);
}

/* d/f (protected) and d/g, swapped as `swap` says, then fn in a child. */
static char *swap_case(const char *test, Swap swap, ChildFn fn) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "d");
  make_file(t, "d/f", "protected\n");
  make_file(t, "d/g", "other\n");
  SwapCase c = {.t = t, .swap = swap};
  return run_in_child(test, fn, &c);
}

static char *apply_with(const char *test, Swap swap) {
  return swap_case(test, swap, apply_after_swap);
}

START_TEST(mount_apply_unchanged) {
  _cleanup_free_ char *got = apply_with(__func__, SWAP_NONE);
  if (got != NULL) {
    ck_assert_str_eq(got, "applied\n");
  }
}
END_TEST

START_TEST(mount_apply_refuses_a_replaced_file) {
  _cleanup_free_ char *got = apply_with(__func__, SWAP_FILE);
  if (got != NULL) {
    ck_assert_str_eq(got, "refused: T/d/f is no longer the object that was planned (replaced "
                          "while ralon started?); refusing to run\n");
  }
}
END_TEST

START_TEST(mount_apply_refuses_a_link_on_the_way) {
  _cleanup_free_ char *got = apply_with(__func__, SWAP_DIR_FOR_LINK);
  if (got != NULL) {
    ck_assert_str_eq(got, "refused: a symbolic link appeared on the way to T/d/f while ralon "
                          "started; refusing to run\n");
  }
}
END_TEST

/* ---- landlock_write_access -------------------------------------------------
 *
 * ABI 3's write set, less what an older kernel lacks: REFER needs ABI 2,
 * TRUNCATE ABI 3 (ATTACKS #3, #4: without them renames across
 * directories and truncation are not governed). Nothing of later ABIs
 * (device ioctls from 5) is ever handled. */

START_TEST(landlock_write_access_by_abi) {
  const uint64_t base = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                        LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                        LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                        LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                        LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  ck_assert_uint_eq(landlock_write_access(1), base);
  ck_assert_uint_eq(landlock_write_access(2), base | LANDLOCK_ACCESS_FS_REFER);
  for (int abi = 3; abi <= 9; abi++) {
    ck_assert_uint_eq(landlock_write_access(abi),
                      base | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE);
  }
  /* Never a read or execute right. */
  ck_assert_uint_eq(landlock_write_access(7) &
                        (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
                         LANDLOCK_ACCESS_FS_EXECUTE),
                    0);
}
END_TEST

/* ---- landlock_apply's checks of each grant ---------------------------------
 *
 * The grants are opened when the rules are made, after the plan: by then
 * a grant's name may lead to the protected file itself (renamed over it),
 * and a rule there would let it be written. landlock_apply must refuse,
 * naming both; with nothing changed it must apply. In a child, which the
 * domain restricts and which then ends. */

static void landlock_after_swap(FILE *out, void *userdata) {
  const SwapCase *c = userdata;
  int abi = sys_landlock_abi();
  if (abi < 1) {
    const char *need = getenv("RALON_REQUIRE_BACKENDS");
    fprintf(out, "%s Landlock is not available here\n",
            need != NULL && strstr(need, "landlock") ? "ERROR" : "SKIP");
    return;
  }
  PlanTarget *target = target_d_f(out, c->t);
  if (target == NULL) {
    return;
  }
  Plan plan;
  Error err = {0};
  if (plan_build(BACKEND_LANDLOCK, target, 1, sys_list_dir, NULL, &plan, &err) < 0) {
    fprintf(out, "ERROR plan: %s\n", err.message);
    return;
  }
  _cleanup_free_ char *g = path_join(c->t, "d/g");
  if (c->swap == SWAP_FILE && rename(target->path, g) < 0) {
    fprintf(out, "ERROR swap: %s\n", strerror(errno));
    return;
  }
  if (landlock_apply(&plan, abi, false, &err) == 0) {
    fputs("applied\n", out);
  } else {
    /* The paths as the test names them, not the scratch directory's. */
    char *m = err.message;
    for (char *at; (at = strstr(m, c->t)) != NULL;) {
      fprintf(out, "%.*sT", (int)(at - m), m);
      m = at + strlen(c->t);
    }
    fprintf(out, "%s\n", m);
  }
  error_clear(&err);
  plan_clear(&plan);
}

static char *landlock_with(const char *test, Swap swap) {
  return swap_case(test, swap, landlock_after_swap);
}

START_TEST(landlock_apply_unchanged) {
  _cleanup_free_ char *got = landlock_with(__func__, SWAP_NONE);
  if (got != NULL) {
    ck_assert_str_eq(got, "applied\n");
  }
}
END_TEST

START_TEST(landlock_apply_refuses_a_grant_that_became_protected) {
  /* d/f renamed over d/g: the grant's name now leads to the protected
   * file, with one link, nothing mounted on it. */
  _cleanup_free_ char *got = landlock_with(__func__, SWAP_FILE);
  if (got != NULL) {
    ck_assert_str_eq(got, "T/d/g became the protected T/d/f while ralon started; refusing to "
                          "run\n");
  }
}
END_TEST

/* ---- landlock_apply: a grant exchanged with a directory ------------------
 * d/conf is protected; d/src and d/docs are granted directories, whose
 * plan identity is getdents' (CarveGrant.exact). Between the plan and the
 * rules an outside process exchanges (RENAME_EXCHANGE) d/src with another
 * directory: opened by name, the grant would get the rule of whatever is
 * there now. landlock_apply must refuse, naming the grant; with the
 * protected directory, saying so. */

static void landlock_after_exchange(FILE *out, void *userdata) {
  const char *const *args = userdata; /* tree, the name d/src is exchanged with */
  int abi = sys_landlock_abi();
  if (abi < 1) {
    const char *need = getenv("RALON_REQUIRE_BACKENDS");
    fprintf(out, "%s Landlock is not available here\n",
            need != NULL && strstr(need, "landlock") ? "ERROR" : "SKIP");
    return;
  }
  PlanTarget *target = xcalloc(1, sizeof(*target));
  target->path_owned = path_join(args[0], "d/conf");
  target->path = target->path_owned;
  target->relative = "d/conf";
  struct stat st;
  if (stat(target->path, &st) < 0) {
    fprintf(out, "ERROR stat: %s\n", strerror(errno));
    plan_targets_free(target, 1);
    return;
  }
  target->dev = st.st_dev;
  target->ino = st.st_ino;
  target->mode = st.st_mode;
  Plan plan;
  Error err = {0};
  if (plan_build(BACKEND_LANDLOCK, target, 1, sys_list_dir, NULL, &plan, &err) < 0) {
    fprintf(out, "ERROR plan: %s\n", err.message);
    return;
  }
  _cleanup_free_ char *src = path_join(args[0], "d/src");
  _cleanup_free_ char *other = args[1] != NULL ? path_join(args[0], args[1]) : NULL;
  if (other != NULL && syscall(SYS_renameat2, AT_FDCWD, src, AT_FDCWD, other, 2u) < 0) {
    fprintf(out, "ERROR exchange: %s\n", strerror(errno));
    return;
  }
  if (landlock_apply(&plan, abi, false, &err) == 0) {
    fputs("applied\n", out);
  } else {
    char *m = err.message;
    for (char *at; (at = strstr(m, args[0])) != NULL;) {
      fprintf(out, "%.*sT", (int)(at - m), m);
      m = at + strlen(args[0]);
    }
    fprintf(out, "%s\n", m);
  }
  error_clear(&err);
  plan_clear(&plan);
}

static char *landlock_exchanging(const char *test, const char *with) {
  _cleanup_free_ char *t = make_tmpdir();
  make_dir(t, "d");
  make_dir(t, "d/conf");
  make_file(t, "d/conf/secret", "protected\n");
  make_dir(t, "d/src");
  make_dir(t, "d/docs");
  const char *args[] = {t, with};
  return run_in_child(test, landlock_after_exchange, args);
}

START_TEST(landlock_apply_directories_unchanged) {
  _cleanup_free_ char *got = landlock_exchanging(__func__, NULL);
  if (got != NULL) {
    ck_assert_str_eq(got, "applied\n");
  }
}
END_TEST

START_TEST(landlock_apply_refuses_a_grant_exchanged_with_the_protected_dir) {
  _cleanup_free_ char *got = landlock_exchanging(__func__, "d/conf");
  if (got != NULL) {
    ck_assert_str_eq(got, "T/d/src became the protected T/d/conf while ralon started; "
                          "refusing to run\n");
  }
}
END_TEST

START_TEST(landlock_apply_refuses_a_grant_exchanged_with_another) {
  /* Both granted, but the rule would land on another object than the
   * plan decided on: refused all the same (the plan checked that one). */
  _cleanup_free_ char *got = landlock_exchanging(__func__, "d/docs");
  if (got != NULL) {
    ck_assert_str_eq(got, "T/d/src changed while ralon started; refusing to run\n");
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sys");
  TCase *tc = tcase_create("core");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, open_no_symlinks);
  tcase_add_test(tc, open_no_symlinks_without_openat2);
  tcase_add_test(tc, stat_aliased);
  tcase_add_test(tc, stat_aliased_mount_point);
  tcase_add_test(tc, make_read_only_reaches_submounts);
  tcase_add_test(tc, make_read_only_reaches_submounts_without_mount_setattr);
  suite_add_tcase(s, tc);
  tc = tcase_create("mount_apply");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, mount_apply_unchanged);
  tcase_add_test(tc, mount_apply_refuses_a_replaced_file);
  tcase_add_test(tc, mount_apply_refuses_a_link_on_the_way);
  suite_add_tcase(s, tc);
  tc = tcase_create("landlock_apply");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, landlock_write_access_by_abi);
  tcase_add_test(tc, landlock_apply_unchanged);
  tcase_add_test(tc, landlock_apply_refuses_a_grant_that_became_protected);
  tcase_add_test(tc, landlock_apply_directories_unchanged);
  tcase_add_test(tc, landlock_apply_refuses_a_grant_exchanged_with_the_protected_dir);
  tcase_add_test(tc, landlock_apply_refuses_a_grant_exchanged_with_another);
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
