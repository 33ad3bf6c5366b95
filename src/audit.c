/* SPDX-License-Identifier: Apache-2.0 */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

static const char *const kind_names[_AUDIT_KIND_MAX] = {
    [AUDIT_UNMATCHED_LITERAL] = "unmatched-path",
    [AUDIT_UNMATCHED_GLOB] = "unmatched-glob",
    [AUDIT_SYMLINK] = "symlink",
    [AUDIT_HARD_LINKS] = "hard-links",
    [AUDIT_GIT_HOOKS] = "git-hooks-unprotected",
    [AUDIT_GIT_CONFIG] = "git-config-unprotected",
    [AUDIT_UNREADABLE] = "unreadable-directory",
    [AUDIT_ROOT] = "root",
    [AUDIT_SECOND_MOUNT] = "second-mount",
};

bool audit_weakens(AuditKind k) {
  return k != AUDIT_UNMATCHED_GLOB && k >= 0 && k < _AUDIT_KIND_MAX;
}

const char *audit_kind_to_string(AuditKind k) {
  if (k < 0 || k >= _AUDIT_KIND_MAX) {
    return NULL;
  }
  return kind_names[k];
}

static void add(AuditFindings *f, AuditKind kind, char *subject, char *detail) {
  AuditFinding *a = grow_array(&f->items, &f->n, &f->cap, sizeof(AuditFinding));
  a->kind = kind;
  a->subject = subject;
  a->detail = detail;
}

static void audit_git(const Policy *policy, const Matcher *m, AuditFindings *out) {
  _cleanup_free_ char *git = path_join(policy->root, ".git");
  struct stat st;
  if (lstat(git, &st) < 0 || !S_ISDIR(st.st_mode)) {
    return;
  }
  if (matcher_match(m, ".git/hooks") < 0) {
    add(out, AUDIT_GIT_HOOKS, xstrdup(".git/hooks"),
        xstrdup(_("is not protected: a hook an agent places there runs outside any sandbox at "
                  "your next git command (add `.git/hooks` to agent.lock)")));
  }
  if (matcher_match(m, ".git/config") < 0) {
    add(out, AUDIT_GIT_CONFIG, xstrdup(".git/config"),
        xstrdup(_("is not protected: `core.hooksPath`, `core.fsmonitor` or an alias set there "
                  "runs commands outside any sandbox at your next git command (add `.git/config` "
                  "to agent.lock)")));
  }
}

/* Whether pattern `idx`, which was first for no entry, still names
 * something on disk: an entry an earlier pattern claimed, or something
 * inside a directory that is protected as a whole. */
static bool pattern_shadowed(const Policy *policy, const Matcher *m, const ScanResult *scan,
                             size_t idx) {
  for (size_t k = 0; k < scan->n_paths; k++) {
    const ProtectedPath *p = &scan->paths[k];
    if (matcher_match_one(m, idx, p->relative)) {
      return true;
    }
    if (S_ISDIR(p->mode) && matcher_may_match_below_one(m, idx, p->relative)) {
      return true;
    }
  }
  if (matcher_is_literal(m, idx)) {
    _cleanup_free_ char *abs = path_join(policy->root, policy->patterns[idx].pattern);
    struct stat st;
    return lstat(abs, &st) == 0;
  }
  return false;
}

typedef struct {
  char *dev;  /* major:minor */
  char *root; /* the filesystem path mounted (field 4) */
  char *point; /* where (field 5) */
} MountEntry;

void audit_second_mounts(const char *mountinfo, const char *root, AuditFindings *out) {
  MountEntry *v = NULL;
  size_t n = 0, cap = 0;
  _cleanup_free_ char *copy = xstrdup(mountinfo);
  char *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    char *f[5];
    char *fs = NULL;
    size_t k = 0;
    for (char *t = strtok_r(line, " ", &fs); t != NULL && k < 5; t = strtok_r(NULL, " ", &fs)) {
      f[k++] = t;
    }
    if (k < 5) {
      continue;
    }
    MountEntry *e = grow_array(&v, &n, &cap, sizeof(MountEntry));
    e->dev = xstrdup(f[2]);
    e->root = path_unescape_mountinfo(f[3]);
    e->point = path_unescape_mountinfo(f[4]);
  }
  /* The mount holding the project: the longest mount point above it (the
   * last such line wins among equals: it is the one on top). */
  const MountEntry *home = NULL;
  size_t best = 0;
  for (size_t i = 0; i < n; i++) {
    if (path_relative(v[i].point, root) != NULL && strlen(v[i].point) >= best) {
      best = strlen(v[i].point);
      home = &v[i];
    }
  }
  if (home != NULL) {
    /* Where the project lies inside its filesystem. */
    _cleanup_free_ char *inside = path_join(home->root, path_relative(home->point, root));
    _cleanup_free_ char *fs_path = path_normalize(inside);
    for (size_t i = 0; i < n; i++) {
      const MountEntry *e = &v[i];
      const char *rest = path_relative(e->root, fs_path);
      if (e == home || !streq(e->dev, home->dev) || rest == NULL) {
        continue;
      }
      _cleanup_free_ char *joined = path_join(e->point, rest);
      char *alias = path_normalize(joined);
      if (streq(alias, root)) {
        free(alias);
        continue;
      }
      bool dup = false;
      for (size_t j = 0; j < out->n; j++) {
        dup |= out->items[j].kind == AUDIT_SECOND_MOUNT && streq(out->items[j].subject, alias);
      }
      if (dup) {
        free(alias);
        continue;
      }
      add(out, AUDIT_SECOND_MOUNT, alias,
          xstrdup(_("is a second path to this project (another mount of the same filesystem); "
                    "writes through it are restricted by neither backend")));
    }
  }
  for (size_t i = 0; i < n; i++) {
    free(v[i].dev);
    free(v[i].root);
    free(v[i].point);
  }
  free(v);
}

void audit_run(const Policy *policy, const Matcher *m, const ScanResult *scan, AuditFindings *out) {
  for (size_t i = 1; i < policy->n_patterns; i++) {
    if (scan->hits[i] > 0 || pattern_shadowed(policy, m, scan, i)) {
      continue;
    }
    const char *pat = policy->patterns[i].pattern;
    if (matcher_is_literal(m, i)) {
      add(out, AUDIT_UNMATCHED_LITERAL, xasprintf("`%s`", pat),
          xstrdup(_("matches nothing on disk, so there is nothing to lock (a path that does not "
                    "exist cannot be made read-only: create it, or remove the line)")));
    } else {
      add(out, AUDIT_UNMATCHED_GLOB, xasprintf("`%s`", pat),
          xstrdup(_("matches nothing on disk, so there is nothing to lock")));
    }
  }
  for (size_t i = 0; i < scan->n_paths; i++) {
    const ProtectedPath *p = &scan->paths[i];
    if (S_ISLNK(p->mode)) {
      add(out, AUDIT_SYMLINK, xstrdup(p->relative),
          xstrdup(_("is a symbolic link: what gets protected is its target, and the link itself "
                    "can be replaced (protect the target's own path instead)")));
    } else if (!S_ISDIR(p->mode) && p->nlink > 1) {
      add(out, AUDIT_HARD_LINKS, xstrdup(p->relative),
          xasprintf(P_("has %ju hard link; the other names are not protected and writing one "
                       "changes this file",
                       "has %ju hard links; the other names are not protected and writing one "
                       "changes this file",
                       (unsigned long)p->nlink),
                    (uintmax_t)p->nlink));
    }
  }
  for (size_t i = 0; i < scan->n_unreadable; i++) {
    add(out, AUDIT_UNREADABLE, xstrdup(scan->unreadable[i]),
        xstrdup(_("could not be read, so protected paths inside it were not found")));
  }
  audit_git(policy, m, out);
  _cleanup_free_ char *canon = realpath(policy->root, NULL);
  int fd = canon ? open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    if (read_fd_limited(fd, 16u * 1024u * 1024u, &text, &len) == 0) {
      audit_second_mounts(text, canon, out);
    }
    close(fd);
  }
  if (geteuid() == 0) {
    add(out, AUDIT_ROOT, xstrdup(_("running as root:")),
        xstrdup(_("an agent running as root is not a protected configuration; it keeps owner "
                  "access to /proc/sys, block devices and every root-owned file (run the agent "
                  "as an ordinary user)")));
  }
}

void audit_findings_clear(AuditFindings *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->items[i].subject);
    free(f->items[i].detail);
  }
  free(f->items);
  f->items = NULL;
  f->n = f->cap = 0;
}
