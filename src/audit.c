/* SPDX-License-Identifier: Apache-2.0 */
#include "audit.h"

#include <errno.h>
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
