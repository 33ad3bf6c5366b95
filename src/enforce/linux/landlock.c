/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce/linux/sys.h"

/* Rights that apply to a file (a rule on a file may hold no others). */
#define FILE_RIGHTS (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

uint64_t landlock_write_access(int abi) {
  uint64_t a = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
               LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
               LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
               LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  /* ABI 3 is the last whose write set means exactly "modify a file": v5
   * adds device ioctls, v9 unix socket connects. */
  switch (abi >= 3 ? 3 : abi) {
  case 3:
    a |= LANDLOCK_ACCESS_FS_TRUNCATE;
    __attribute__((fallthrough));
  case 2:
    a |= LANDLOCK_ACCESS_FS_REFER;
    break;
  default:
    break;
  }
  return a;
}

/* Size of struct landlock_ruleset_attr the running ABI understands. */
static size_t attr_size(int abi) {
  if (abi >= 6) {
    return sizeof(struct ralon_landlock_ruleset_attr);
  }
  if (abi >= 4) {
    return offsetof(struct ralon_landlock_ruleset_attr, scoped);
  }
  return offsetof(struct ralon_landlock_ruleset_attr, handled_access_net);
}

static int restrict_self(int ruleset, Error *err) {
  /* Required for an unprivileged landlock_restrict_self(), and wanted
   * anyway: nothing the command runs may gain privileges. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    return error_set(err, errno, _("cannot set no_new_privs: %m"));
  }
  if (sys_landlock_restrict_self(ruleset) < 0) {
    return error_set(err, errno, _("landlock_restrict_self failed: %m"));
  }
  return 0;
}

int landlock_apply(const Plan *plan, int abi, Error *err) {
  uint64_t handled = landlock_write_access(abi);
  struct ralon_landlock_ruleset_attr attr = {.handled_access_fs = handled};
  _cleanup_close_ int ruleset = sys_landlock_create_ruleset(&attr, attr_size(abi), 0);
  if (ruleset < 0) {
    return error_set(err, errno, _("cannot create a Landlock ruleset: %m"));
  }
  for (size_t i = 0; i < plan->carve.n_grants; i++) {
    const CarveGrant *g = &plan->carve.grants[i];
    _cleanup_close_ int fd = open(g->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) {
        continue; /* gone since the plan was made: nothing to grant */
      }
      return error_set(err, errno, _("cannot open %s for a Landlock rule: %m"), g->path);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
      return error_set(err, errno, _("cannot open %s for a Landlock rule: %m"), g->path);
    }
    if (S_ISLNK(st.st_mode)) {
      continue;
    }
    /* Never a grant on a protected object, whatever name reached it. */
    for (size_t k = 0; k < plan->n_targets; k++) {
      if (!plan->targets[k].missing && plan->targets[k].dev == st.st_dev &&
          plan->targets[k].ino == st.st_ino) {
        return error_set(err, ESTALE,
                         _("%s became the protected %s while ralon started; refusing to run"),
                         g->path, plan->targets[k].path);
      }
    }
    uint64_t allowed = S_ISDIR(st.st_mode) ? handled : (handled & FILE_RIGHTS);
    if (sys_landlock_add_path_rule(ruleset, fd, allowed) < 0) {
      return error_set(err, errno, _("cannot add the Landlock rule for %s: %m"), g->path);
    }
  }
  return restrict_self(ruleset, err);
}

int landlock_seal(int abi, Error *err) {
  if (abi < 2) {
    /* Without REFER every cross-directory rename would fail with EXDEV. */
    return error_set(err, ENOTSUP,
                     _("--seal needs Landlock ABI 2 or later; this kernel has ABI %d"), abi);
  }
  struct ralon_landlock_ruleset_attr attr = {
      .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_REFER,
  };
  if (abi >= 6) {
    attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
  }
  _cleanup_close_ int ruleset = sys_landlock_create_ruleset(&attr, attr_size(abi), 0);
  if (ruleset < 0) {
    return error_set(err, errno, _("cannot create a Landlock ruleset: %m"));
  }
  /* A domain that handles an access right but not REFER keeps ABI 1's "no
   * reparenting": handle REFER and grant it everywhere. */
  _cleanup_close_ int root = open("/", O_PATH | O_CLOEXEC);
  if (root < 0) {
    return error_set(err, errno, _("cannot open / for a Landlock rule: %m"));
  }
  if (sys_landlock_add_path_rule(ruleset, root, LANDLOCK_ACCESS_FS_REFER) < 0) {
    return error_set(err, errno, _("cannot add the Landlock rule for /: %m"));
  }
  return restrict_self(ruleset, err);
}
