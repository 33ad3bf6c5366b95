/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary trees for the unit tests: one scratch directory per test
 * program, made and removed by the runner process (an unchecked fixture),
 * so a failing test leaves nothing behind. World-traversable: some tests
 * look at it as an unprivileged user. */
#include "tmptree.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

char *scratch;

void rm_rf_at(int parent, const char *name) {
  struct stat st;
  if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    (void)fchmodat(parent, name, 0700, 0);
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      DIR *d = fdopendir(fd);
      if (d == NULL) {
        close(fd);
      } else {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
          if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
            continue;
          }
          rm_rf_at(dirfd(d), de->d_name);
        }
        closedir(d);
      }
    }
    (void)unlinkat(parent, name, AT_REMOVEDIR);
  } else {
    (void)unlinkat(parent, name, 0);
  }
}

void scratch_setup(void) {
  const char *tmp = getenv("TMPDIR");
  _cleanup_free_ char *tmpl = xasprintf("%s/ralon-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
                                     program_invocation_short_name);
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  ck_assert_int_eq(chmod(tmpl, 0755), 0);
  scratch = realpath(tmpl, NULL);
  ck_assert_ptr_nonnull(scratch);
}

void scratch_teardown(void) {
  if (scratch != NULL) {
    rm_rf_at(AT_FDCWD, scratch);
    free(scratch);
    scratch = NULL;
  }
}

char *make_tmpdir(void) {
  char *tmpl = xasprintf("%s/t.XXXXXX", scratch);
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  ck_assert_int_eq(chmod(tmpl, 0755), 0);
  return tmpl;
}

void make_dir(const char *dir, const char *rel) {
  _cleanup_free_ char *p = path_join(dir, rel);
  ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
}

void make_file(const char *dir, const char *rel, const char *content) {
  _cleanup_free_ char *p = path_join(dir, rel);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_msg(fd >= 0, "create %s: %s", p, strerror(errno));
  size_t len = strlen(content);
  ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
  ck_assert_int_eq(close(fd), 0);
}

void make_symlink(const char *dir, const char *rel, const char *target) {
  _cleanup_free_ char *p = path_join(dir, rel);
  ck_assert_msg(symlink(target, p) == 0, "symlink %s: %s", p, strerror(errno));
}

void make_hardlink(const char *dir, const char *existing, const char *rel) {
  _cleanup_free_ char *a = path_join(dir, existing);
  _cleanup_free_ char *b = path_join(dir, rel);
  ck_assert_msg(link(a, b) == 0, "link %s: %s", b, strerror(errno));
}
