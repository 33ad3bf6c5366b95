/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enforce/linux/sys.h"
#include "path.h"
#include "policy.h"


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
  if (sys_set_no_new_privs(err) < 0) {
    return -1;
  }
  if (sys_landlock_restrict_self(ruleset) < 0) {
    return error_set(err, errno, _("landlock_restrict_self failed: %m"));
  }
  return 0;
}

/* The protected objects by identity, sorted for a binary search per
 * grant (a thousand protected files, a hundred grants). */
typedef struct {
  dev_t dev;
  ino_t ino;
  const PlanTarget *t;
} TargetId;

static int compare_ids(const void *a, const void *b) {
  const TargetId *x = a, *y = b;
  if (x->dev != y->dev) {
    return x->dev < y->dev ? -1 : 1;
  }
  return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static const PlanTarget *find_target(const TargetId *ids, size_t n, const struct stat *st) {
  const TargetId key = {st->st_dev, st->st_ino, NULL};
  const TargetId *hit = n > 0 ? bsearch(&key, ids, n, sizeof(TargetId), compare_ids) : NULL;
  return hit != NULL ? hit->t : NULL;
}

/* openat2(2) with RESOLVE_NO_XDEV: `name` in `dirfd`, on the same mount,
 * never through a mount point. -1 with errno, EXDEV for a mount point. */
static int open_same_mount(int dirfd, const char *name) {
#if defined(SYS_openat2)
  static bool unavailable;
  if (!unavailable) {
    struct open_how how = {
        .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
        .resolve = RESOLVE_NO_XDEV,
    };
    int fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != EINVAL && errno != E2BIG)) {
      return fd;
    }
    /* An older kernel, or a seccomp filter that does not know it. */
    unavailable = true;
  }
#else
  (void)dirfd;
  (void)name;
#endif
  errno = ENOSYS;
  return -1;
}

/* The descriptors opened for rules, closed together once a batch is full
 * and at the end: a rule is an open, a landlock_add_rule and a close, and
 * one close_range(2) for a whole batch saves a third of those system calls
 * (about 30 rules for a project in a home directory, hundreds where a busy
 * /tmp is on the way). Small enough to stay far from RLIMIT_NOFILE. */
typedef struct {
  int fds[PLAN_RULE_BATCH];
  size_t n;
} FdBatch;

static void fd_batch_flush(FdBatch *b) {
  close_fds(b->fds, b->n);
  b->n = 0;
}

static void fd_batch_add(FdBatch *b, int fd) {
  if (b->n == sizeof(b->fds) / sizeof(b->fds[0])) {
    fd_batch_flush(b);
  }
  b->fds[b->n++] = fd;
}

/* The grant's name leads to `st`, another object than the plan listed:
 * an outside rename since (RENAME_EXCHANGE with a protected directory,
 * say). Says which protected path it became, if one. */
static int grant_changed(const TargetId *ids, size_t n_ids, const CarveGrant *g,
                         const struct stat *st, Error *err) {
  const PlanTarget *t = find_target(ids, n_ids, st);
  if (t != NULL) {
    return error_set(err, ESTALE,
                     _("%s became the protected %s while ralon started; refusing to run"),
                     g->path, t->path);
  }
  return error_set(err, ESTALE, _("%s changed while ralon started; refusing to run"), g->path);
}

/* One grant, opened through its (already open) directory and never
 * through a symbolic link. The rule lands on whatever inode is opened, and
 * the name may lead elsewhere than when the plan listed it, so that inode
 * must be the one the plan listed (g->dev, g->ino): otherwise refuse.
 * Where the plan's identity is the entry's own (g->exact, a directory),
 * the entry is opened without crossing a mount point and one fstat(2)
 * compares it: that look cannot be saved, since the lister's identity is
 * exact only for the moment it listed, and nothing else proves what the
 * descriptor is. Otherwise (a file, a mount point) it is statx()ed the
 * careful way: a rule on a file that has gained another name (a hard link,
 * a mount on it) since the plan would reach it there too. */
static int add_grant(const TargetId *ids, size_t n_ids, int ruleset, uint64_t handled,
                     const CarveGrant *g, int dirfd, const struct stat *chain, size_t n_chain,
                     FdBatch *opened, Error *err) {
  const char *name = dirfd >= 0 ? strrchr(g->path, '/') + 1 : g->path;
  bool mount_point = false;
  if (g->exact && g->is_dir && dirfd >= 0) {
    int fd = open_same_mount(dirfd, name);
    if (fd < 0 && errno == ENOENT) {
      return 0; /* gone since the plan was made: nothing to grant */
    }
    mount_point = fd < 0 && errno == EXDEV;
    if (fd >= 0) {
      fd_batch_add(opened, fd);
      struct stat st;
      if (fstat(fd, &st) < 0) {
        return error_set(err, errno, _("cannot open %s for a Landlock rule: %m"), g->path);
      }
      if (st.st_dev == g->dev && st.st_ino == g->ino) {
        if (sys_landlock_add_path_rule(ruleset, fd, handled) == 0) {
          return 0;
        }
        if (errno != EINVAL) {
          return error_set(err, errno, _("cannot add the Landlock rule for %s: %m"), g->path);
        }
        /* EINVAL: no longer the kind of object the plan saw. */
      } else if (st.st_dev == g->dev) {
        return grant_changed(ids, n_ids, g, &st, err);
      }
      /* On another device, not crossing a mount: a btrfs subvolume, whose
       * identity getdents does not give. */
    }
    /* EXDEV, a mount point, and everything else: the careful way. */
  }
  int fd = openat(dirfd >= 0 ? dirfd : AT_FDCWD, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return 0; /* gone since the plan was made: nothing to grant */
    }
    return error_set(err, errno, _("cannot open %s for a Landlock rule: %m"), g->path);
  }
  fd_batch_add(opened, fd);
  struct stat st;
  bool aliased;
  if (sys_stat_aliased(fd, "", &st, &aliased) < 0) {
    return error_set(err, errno, _("cannot open %s for a Landlock rule: %m"), g->path);
  }
  if (S_ISLNK(st.st_mode) || aliased) {
    return 0; /* no rule: read-only while the agent runs */
  }
  /* Another object than the plan listed, unless the plan could not know
   * this one's identity: getdents gives that of the directory under a
   * mount point, and the parent's device for a btrfs subvolume. Those are
   * judged by what they are now, below. Never a grant on a protected
   * object, whatever name reached it. */
  bool other = st.st_dev != g->dev || st.st_ino != g->ino;
  if ((other && !mount_point && st.st_dev == g->dev) || find_target(ids, n_ids, &st) != NULL) {
    return grant_changed(ids, n_ids, g, &st, err);
  }
  /* Nor on a directory of the chain: a rule there would cover everything
   * below it, protected paths included (a bind mount of one, seen here
   * under another name). */
  for (size_t k = 0; k < n_chain; k++) {
    if (chain[k].st_dev == st.st_dev && chain[k].st_ino == st.st_ino) {
      return 0;
    }
  }
  uint64_t allowed = S_ISDIR(st.st_mode) ? handled : (handled & FILE_RIGHTS);
  if (sys_landlock_add_path_rule(ruleset, fd, allowed) < 0) {
    return error_set(err, errno, _("cannot add the Landlock rule for %s: %m"), g->path);
  }
  return 0;
}

/* Whether a directory of the project on the way changed since the lister
 * opened it: an entry made, removed or renamed there (RENAME_EXCHANGE
 * included) changes its ctime. Each rule is on the object the plan listed,
 * but the plan itself may be a passing state: a protected directory
 * exchanged with a granted one just before it was listed, and put back
 * once the agent runs, gets its rule from the granted name. A racer that
 * keeps exchanging is seen here; one exchange before the start and one
 * after it are not (nothing can tell that from a tree arranged so). One
 * fstat(2) per directory: since Linux 6.13 a ctime that was looked at is
 * updated with a fine-grained time at the next change, so a change within
 * the same clock tick is seen too (on older kernels it may not be).
 * Inside the project only: any change there counts, and above it (a busy
 * /tmp, a home directory) unrelated files come and go often enough to
 * refuse safe starts; the grants there are still checked one by one. */
static int check_unchanged(const Plan *plan, Error *err) {
  const Carve *c = &plan->carve;
  /* The project root: where agent.lock, always a target, is. */
  _cleanup_free_ char *root = NULL;
  for (size_t i = 0; i < plan->n_targets && root == NULL; i++) {
    const PlanTarget *t = &plan->targets[i];
    if (t->relative != NULL && streq(t->relative, POLICY_FILE_NAME)) {
      root = path_dirname(t->link != NULL ? t->link : t->path);
    }
  }
  for (size_t i = 0; i < c->n_restricted; i++) {
    const OpenDir *d = &plan->restricted_open[i];
    struct stat st;
    if (d->fd < 0 || (root != NULL && path_relative(root, c->restricted[i]) == NULL)) {
      continue;
    }
    if (fstat(d->fd, &st) < 0) {
      return error_set(err, errno, _("cannot open %s for the Landlock rules: %m"),
                       c->restricted[i]);
    }
    if (st.st_ctim.tv_sec != d->ctime.tv_sec || st.st_ctim.tv_nsec != d->ctime.tv_nsec) {
      return error_set(err, ESTALE, _("%s changed while ralon started; refusing to run"),
                       c->restricted[i]);
    }
  }
  return 0;
}

uint64_t landlock_seal_scopes(int abi) {
  return abi >= 6 ? LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0;
}

int landlock_apply(const Plan *plan, int abi, bool seal, Error *err) {
  uint64_t handled = landlock_write_access(abi);
  struct ralon_landlock_ruleset_attr attr = {
      .handled_access_fs = handled,
      .scoped = seal ? landlock_seal_scopes(abi) : 0,
  };
  _cleanup_close_ int ruleset = sys_landlock_create_ruleset(&attr, attr_size(abi), 0);
  if (ruleset < 0) {
    return error_set(err, errno, _("cannot create a Landlock ruleset: %m"));
  }
  /* The chain, each directory opened once: its identities are checked
   * against every grant, and the grants are opened through it. */
  const Carve *c = &plan->carve;
  size_t n_ids = 0;
  TargetId *ids = xcalloc(plan->n_targets + 1, sizeof(TargetId));
  for (size_t k = 0; k < plan->n_targets; k++) {
    const PlanTarget *t = &plan->targets[k];
    if (!t->missing) {
      ids[n_ids++] = (TargetId){t->dev, t->ino, t};
    }
  }
  if (n_ids > 1) {
    qsort(ids, n_ids, sizeof(TargetId), compare_ids);
  }
  size_t n_chain = 0;
  int *dirs = xcalloc(c->n_restricted + 1, sizeof(int));
  struct stat *chain = xcalloc(c->n_restricted + 1, sizeof(struct stat));
  int r = 0;
  for (size_t i = 0; i < c->n_restricted; i++) {
    dirs[i] = -1;
  }
  for (size_t i = 0; i < c->n_restricted; i++) {
    const OpenDir *listed = plan->restricted_open != NULL ? &plan->restricted_open[i] : NULL;
    if (listed != NULL && listed->fd >= 0) {
      /* The descriptor the plan listed it through: the plan's directory,
       * not whatever the name leads to now. Closed with the plan. */
      dirs[i] = listed->fd;
      chain[n_chain].st_dev = listed->dev;
      chain[n_chain].st_ino = listed->ino;
      n_chain++;
      continue;
    }
    dirs[i] = open(c->restricted[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirs[i] < 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        continue; /* below a missing protected path: nothing to grant in it */
      }
      r = error_set(err, errno, _("cannot open %s for the Landlock rules: %m"), c->restricted[i]);
      break;
    }
    if (fstat(dirs[i], &chain[n_chain]) < 0) {
      r = error_set(err, errno, _("cannot open %s for the Landlock rules: %m"), c->restricted[i]);
      break;
    }
    n_chain++;
  }
  char buf[PATH_MAX];
  FdBatch opened = {.n = 0};
  for (size_t i = 0; i < c->n_grants && r == 0; i++) {
    const CarveGrant *g = &c->grants[i];
    /* Its directory, which the carve-out restricts (restricted[] is
     * sorted). */
    int dirfd = -1;
    const char *slash = strrchr(g->path, '/');
    size_t len = slash == NULL ? 0 : slash == g->path ? 1 : (size_t)(slash - g->path);
    if (len > 0 && len < sizeof(buf)) {
      memcpy(buf, g->path, len);
      buf[len] = '\0';
      const char *key = buf;
      char **hit = c->n_restricted > 0 ? bsearch(&key, c->restricted, c->n_restricted,
                                                 sizeof(char *), strings_compare)
                                       : NULL;
      if (hit != NULL) {
        dirfd = dirs[hit - c->restricted];
      }
    }
    r = add_grant(ids, n_ids, ruleset, handled, g, dirfd, chain, n_chain, &opened, err);
  }
  if (r == 0 && plan->restricted_open != NULL) {
    r = check_unchanged(plan, err);
  }
  fd_batch_flush(&opened);
  size_t n_open = 0;
  for (size_t i = 0; i < c->n_restricted; i++) {
    bool borrowed = plan->restricted_open != NULL && plan->restricted_open[i].fd == dirs[i];
    if (dirs[i] >= 0 && !borrowed) {
      dirs[n_open++] = dirs[i];
    }
  }
  close_fds(dirs, n_open);
  free(dirs);
  free(chain);
  free(ids);
  if (r < 0) {
    return -1;
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
  attr.scoped = landlock_seal_scopes(abi);
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
