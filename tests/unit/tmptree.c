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
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* ---- tests that need a process of their own ------------------------------ */

char *run_in_child(const char *test, ChildFn fn, void *userdata) {
  int fds[2];
  ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    FILE *out = fdopen(fds[1], "w");
    if (out == NULL) {
      _exit(3);
    }
    fn(out, userdata);
    fclose(out);
    _exit(0);
  }
  close(fds[1]);
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

typedef struct {
  const char *probe;
  ChildFn fn;
  void *userdata;
} Unprivileged;

static void unprivileged_child(FILE *out, void *userdata) {
  const Unprivileged *u = userdata;
  if (geteuid() == 0) {
    if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
        setresuid(65534, 65534, 65534) < 0) {
      fprintf(out, "SKIP cannot become nobody (65534): %s\n", strerror(errno));
      return;
    }
  }
  if (u->probe != NULL) {
    DIR *d = opendir(u->probe);
    if (d != NULL) {
      closedir(d);
      fprintf(out, "SKIP a directory of mode 000 stays readable for uid %u\n",
              (unsigned)geteuid());
      return;
    }
    if (errno != EACCES) {
      fprintf(out, "SKIP cannot reach %s as uid %u: %s\n", u->probe, (unsigned)geteuid(),
              strerror(errno));
      return;
    }
  }
  u->fn(out, u->userdata);
}

char *run_unprivileged(const char *test, const char *probe, ChildFn fn, void *userdata) {
  Unprivileged u = {.probe = probe, .fn = fn, .userdata = userdata};
  return run_in_child(test, unprivileged_child, &u);
}

static bool write_proc(const char *file, const char *text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  size_t len = strlen(text);
  bool ok = write(fd, text, len) == (ssize_t)len;
  return close(fd) == 0 && ok;
}

bool child_enter_mount_namespace(FILE *out) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  bool userns = uid != 0;
  if (!userns && unshare(CLONE_NEWNS) < 0) {
    userns = true; /* root without CAP_SYS_ADMIN, in a container */
  }
  if (userns) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
      fprintf(out, "SKIP cannot enter a user and mount namespace: %s\n", strerror(errno));
      return false;
    }
    char map[64];
    (void)write_proc("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    bool ok = write_proc("/proc/self/uid_map", map);
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (!ok || !write_proc("/proc/self/gid_map", map)) {
      fprintf(out, "SKIP cannot map our ids in a user namespace: %s\n", strerror(errno));
      return false;
    }
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    fprintf(out, "SKIP cannot make the mounts private: %s\n", strerror(errno));
    return false;
  }
  return true;
}
