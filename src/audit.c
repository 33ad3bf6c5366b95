/* SPDX-License-Identifier: Apache-2.0 */
#include "audit.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#endif

#include "gitscan.h"
#include "mounts.h"
#include "path.h"
#include "strset.h"

/* Older headers lack the casefold attribute (Linux 5.2). */
#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif

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
    [AUDIT_BIND_MOUNT] = "bind-mount",
    [AUDIT_OVERLAY] = "overlay-filesystem",
    [AUDIT_FUSE] = "fuse-filesystem",
    [AUDIT_NETWORK_FS] = "network-filesystem",
    [AUDIT_SYMLINK_OUTSIDE] = "symlink-to-unprotected",
    [AUDIT_GIT_HOOKS_PATH] = "git-hooks-path-unprotected",
    [AUDIT_GIT_FSMONITOR_UNPROTECTED] = "git-fsmonitor-unprotected",
    [AUDIT_GIT_FSMONITOR] = "git-fsmonitor",
    [AUDIT_LANDLOCK_METADATA] = "landlock-metadata",
    [AUDIT_LANDLOCK_TRUNCATE] = "landlock-truncate",
    [AUDIT_LANDLOCK_NO_NEW_ENTRIES] = "landlock-no-new-entries",
    [AUDIT_INHERITED_FD] = "inherited-write-descriptor",
    [AUDIT_CASE_INSENSITIVE] = "case-insensitive-directory",
    [AUDIT_LANDLOCK_LINKED_FILE] = "landlock-linked-file",
    [AUDIT_LANDLOCK_UNLISTED] = "landlock-unlisted-directory",
    [AUDIT_ENCLOSING_POLICY] = "enclosing-policy",
    [AUDIT_GIT_DIR_OUTSIDE] = "git-dir-outside-project",
    [AUDIT_GIT_COMMONDIR_UNPROTECTED] = "git-commondir-unprotected",
    [AUDIT_GIT_COMMONDIR] = "git-commondir",
    [AUDIT_GIT_NESTED_REPO] = "git-nested-repository",
    [AUDIT_GIT_BARE_REPO] = "git-bare-repository",
    [AUDIT_GIT_INCLUDE] = "git-include-unprotected",
    [AUDIT_GIT_COMMAND] = "git-command-unprotected",
    [AUDIT_GIT_SEQUENCER_EXEC] = "git-sequencer-exec",
    [AUDIT_GIT_WALK_LIMIT] = "git-search-limit",
};

bool audit_weakens(AuditKind k) {
  if (k < 0 || k >= _AUDIT_KIND_MAX) {
    return false;
  }
  switch (k) {
  case AUDIT_UNMATCHED_GLOB:          /* `*.pem` in a fresh clone */
  case AUDIT_GIT_FSMONITOR:           /* runs code, but nothing the agent can change */
  case AUDIT_LANDLOCK_NO_NEW_ENTRIES: /* stricter than asked, not weaker */
  case AUDIT_LANDLOCK_LINKED_FILE:    /* likewise */
  case AUDIT_LANDLOCK_UNLISTED:       /* likewise */
  case AUDIT_GIT_WALK_LIMIT:          /* says what was not looked at */
    return false;
  case AUDIT_UNMATCHED_LITERAL:
  case AUDIT_SYMLINK:
  case AUDIT_HARD_LINKS:
  case AUDIT_GIT_HOOKS:
  case AUDIT_GIT_CONFIG:
  case AUDIT_UNREADABLE:
  case AUDIT_ENCLOSING_POLICY:
  case AUDIT_GIT_DIR_OUTSIDE:
  case AUDIT_GIT_COMMONDIR_UNPROTECTED:
  case AUDIT_GIT_COMMONDIR:
  case AUDIT_GIT_NESTED_REPO:
  case AUDIT_GIT_BARE_REPO:
  case AUDIT_GIT_INCLUDE:
  case AUDIT_GIT_COMMAND:
  case AUDIT_GIT_SEQUENCER_EXEC:
  case AUDIT_ROOT:
  case AUDIT_SECOND_MOUNT:
  case AUDIT_BIND_MOUNT:
  case AUDIT_OVERLAY:
  case AUDIT_FUSE:
  case AUDIT_NETWORK_FS:
  case AUDIT_SYMLINK_OUTSIDE:
  case AUDIT_GIT_HOOKS_PATH:
  case AUDIT_GIT_FSMONITOR_UNPROTECTED:
  case AUDIT_LANDLOCK_METADATA:
  case AUDIT_LANDLOCK_TRUNCATE:
  case AUDIT_INHERITED_FD:
  case AUDIT_CASE_INSENSITIVE:
    return true;
  case _AUDIT_KIND_MAX:
  case _AUDIT_KIND_INVALID:
  default:
    return false;
  }
}

const char *audit_kind_to_string(AuditKind k) {
  if (k < 0 || k >= _AUDIT_KIND_MAX) {
    return NULL;
  }
  return kind_names[k];
}

static AuditFinding *add(AuditFindings *f, AuditKind kind, char *subject, char *detail) {
  AuditFinding *a = grow_array(&f->items, &f->n, &f->cap, sizeof(AuditFinding));
  a->kind = kind;
  a->subject = subject;
  a->detail = detail;
  a->pattern = NULL;
  return a;
}

/* `abs` as a subject: relative to `root` when inside it ("." for the root
 * itself), else as it is. */
static char *display_path(const char *root, const char *abs) {
  const char *rel = root != NULL ? path_relative(root, abs) : NULL;
  if (rel == NULL) {
    return xstrdup(abs);
  }
  return xstrdup(rel[0] != '\0' ? rel : ".");
}

/* Whether the policy protects the canonical path `abs`: it lies in the
 * (canonical) project root and some pattern protects it or a directory
 * above it. Outside the project nothing is protected. */
static bool protects(const Matcher *m, const char *canon_root, const char *abs) {
  const char *rel = canon_root != NULL ? path_relative(canon_root, abs) : NULL;
  return rel != NULL && matcher_match(m, rel) >= 0;
}

/* ---- .git ---------------------------------------------------------------- */

/* What .git/config says in its [core] section, as far as the audit cares. */
typedef struct {
  char *hooks_path;
  char *fsmonitor;
  bool has_fsmonitor; /* set, even without a value (a bare key is true) */
  char *worktree_config; /* extensions.worktreeConfig ("true" when bare) */
} GitCore;

static void git_core_clear(GitCore *c) {
  free(c->hooks_path);
  free(c->fsmonitor);
  free(c->worktree_config);
  *c = (GitCore){0};
}

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void git_core_each(void *userdata, const char *key, const char *value) {
  GitCore *out = userdata;
  if (streq(key, "core.hookspath")) {
    free(out->hooks_path);
    out->hooks_path = value != NULL ? xstrdup(value) : NULL;
  } else if (streq(key, "core.fsmonitor")) {
    free(out->fsmonitor);
    out->fsmonitor = value != NULL ? xstrdup(value) : NULL;
    out->has_fsmonitor = true;
  } else if (streq(key, "extensions.worktreeconfig")) {
    free(out->worktree_config);
    out->worktree_config = xstrdup(value != NULL ? value : "true");
  }
}

/* Reads the keys the audit needs from the text of a git config file, as
 * git reads it (gitscan_config_parse). `include.path` and
 * `includeIf.*.path` are not followed, nor are the user's ~/.gitconfig or
 * /etc/gitconfig read: a setting made there is not seen here (gitscan's
 * audit follows includes). Returns false when git would refuse the file as
 * malformed. */
static bool git_parse_config(const char *text, GitCore *out) {
  return gitscan_config_parse(text, strlen(text), git_core_each, out);
}

/* A git boolean: 1 true, 0 false, -1 not a boolean (then core.fsmonitor
 * names a hook command). */
static int git_bool(const char *v) {
  if (v == NULL) {
    return 1;
  }
  static const char *const yes[] = {"true", "yes", "on"};
  static const char *const no[] = {"false", "no", "off", ""};
  for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
    if (strcasecmp(v, yes[i]) == 0) {
      return 1;
    }
  }
  for (size_t i = 0; i < ELEMENTSOF(no); i++) {
    if (strcasecmp(v, no[i]) == 0) {
      return 0;
    }
  }
  char *end;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  if (end != v && errno == 0) {
    /* git also takes a unit suffix: 1k is true */
    if (*end == '\0' || ((*end == 'k' || *end == 'K' || *end == 'm' || *end == 'M' ||
                          *end == 'g' || *end == 'G') &&
                         end[1] == '\0')) {
      return n != 0;
    }
  }
  return -1;
}

/* Where `value`, a path from .git/config, leads: hooks and the fsmonitor
 * command run in the top of the work tree, so a relative path is relative
 * to the root. NULL for `~…`, which is in a home directory: outside. */
static char *git_place(const char *root, const char *value) {
  if (value[0] == '~') {
    return NULL;
  }
  _cleanup_free_ char *abs = path_join(root, value);
  char *r = path_resolve(abs);
  return r != NULL ? r : path_normalize(abs);
}

/* Reads and parses the project's .git/config into *out; false when it
 * cannot be read or git would refuse it (*out is then empty). */
static bool git_read_config(const char *root, GitCore *out) {
  _cleanup_free_ char *file = path_join(root, ".git/config");
  _cleanup_free_ char *text = read_text_file(file, 4u * 1024u * 1024u);
  *out = (GitCore){0};
  if (text == NULL || !git_parse_config(text, out)) {
    git_core_clear(out);
    return false;
  }
  return true;
}

static bool git_worktree_config_on(const GitCore *c) {
  return c->worktree_config != NULL && git_bool(c->worktree_config) == 1;
}

/* Reads .git/config; returns whether it sets extensions.worktreeConfig. */
static bool audit_git_config(const char *root, const char *canon_root, const Matcher *m,
                             AuditFindings *out) {
  GitCore core;
  if (!git_read_config(root, &core)) {
    return false;
  }
  bool worktree_config = git_worktree_config_on(&core);
  if (core.hooks_path != NULL && core.hooks_path[0] != '\0') {
    _cleanup_free_ char *place = git_place(canon_root ? canon_root : root, core.hooks_path);
    if (place == NULL || !protects(m, canon_root, place)) {
      add(out, AUDIT_GIT_HOOKS_PATH,
          place ? display_path(canon_root, place) : xstrdup(core.hooks_path),
          xstrdup(_("is where core.hooksPath in .git/config points, and agent.lock does not "
                    "protect it: git runs the hooks it finds there outside any sandbox at your "
                    "next git command, so an agent can plant one (protect it in agent.lock, or "
                    "unset core.hooksPath)")));
    }
  }
  int b = core.has_fsmonitor ? git_bool(core.fsmonitor) : 0;
  if (b == 1) {
    add(out, AUDIT_GIT_FSMONITOR, xstrdup(".git/config"),
        xstrdup(_("sets core.fsmonitor: git starts its built-in file system monitor, a daemon "
                  "that keeps running outside any sandbox after your git command (unset "
                  "core.fsmonitor if you do not need it)")));
  } else if (b == -1) {
    /* A command run by the shell in the top of the work tree: what
     * matters is the program, its first word. */
    const char *cmd = core.fsmonitor;
    while (is_blank(*cmd)) {
      cmd++;
    }
    size_t len = 0;
    while (cmd[len] != '\0' && !is_blank(cmd[len]) && cmd[len] != '\n') {
      len++;
    }
    _cleanup_free_ char *prog = xstrndup(cmd, len);
    bool is_path = strchr(prog, '/') != NULL || prog[0] == '~';
    _cleanup_free_ char *place =
        is_path ? git_place(canon_root ? canon_root : root, prog) : NULL;
    if (is_path && (place == NULL || !protects(m, canon_root, place))) {
      add(out, AUDIT_GIT_FSMONITOR_UNPROTECTED,
          place ? display_path(canon_root, place) : xstrdup(prog),
          xstrdup(_("is the program core.fsmonitor in .git/config runs, and agent.lock does not "
                    "protect it: git runs it outside any sandbox at every git command, so an "
                    "agent can rewrite it (protect it in agent.lock, or unset core.fsmonitor)")));
    } else {
      add(out, AUDIT_GIT_FSMONITOR, xstrdup(".git/config"),
          xasprintf(_("sets core.fsmonitor to `%s`: git runs that command outside any sandbox "
                      "at every git command (make sure nothing it runs or reads can be changed "
                      "by an agent)"),
                    core.fsmonitor));
    }
  }
  git_core_clear(&core);
  return worktree_config;
}

bool audit_git_worktree_config(const char *root) {
  GitCore core;
  bool on = git_read_config(root, &core) && git_worktree_config_on(&core);
  git_core_clear(&core);
  return on;
}

bool audit_git_is_file(const char *root) {
  _cleanup_free_ char *git = path_join(root, ".git");
  struct stat st;
  return lstat(git, &st) == 0 && S_ISREG(st.st_mode);
}

/* The path on the first line of `file`, after `prefix`, relative to
 * `base` unless absolute (how git reads .git files and commondir); NULL
 * when the file is missing or says something else. */
static char *git_path_in(const char *file, const char *prefix, const char *base) {
  _cleanup_free_ char *text = read_text_file(file, 4096);
  if (text == NULL || !startswith(text, prefix)) {
    return NULL;
  }
  char *named = text + strlen(prefix);
  named[strcspn(named, "\r\n")] = '\0';
  if (named[0] == '\0') {
    return NULL;
  }
  return named[0] == '/' ? xstrdup(named) : path_join(base, named);
}

/* The directory whose hooks and configuration git uses in a project
 * whose .git is a file ("gitdir: PATH": a worktree, a submodule, `git
 * init --separate-git-dir`): PATH/commondir names it, relative to PATH,
 * for a worktree; else it is PATH. NULL when the file names none. */
static char *git_common_dir(const char *root) {
  _cleanup_free_ char *file = path_join(root, ".git");
  _cleanup_free_ char *gitdir = git_path_in(file, "gitdir: ", root);
  if (gitdir == NULL) {
    return NULL;
  }
  _cleanup_free_ char *commondir = path_join(gitdir, "commondir");
  _cleanup_free_ char *common = git_path_in(commondir, "", gitdir);
  _cleanup_free_ char *dir = common != NULL ? steal_pointer(&common) : steal_pointer(&gitdir);
  char *canon = realpath(dir, NULL);
  return canon != NULL ? canon : steal_pointer(&dir);
}

static void audit_git_file(const Policy *policy, const Matcher *m, AuditFindings *out) {
  _cleanup_free_ char *common = git_common_dir(policy->root);
  _cleanup_free_ char *shown = common != NULL ? path_display(common) : NULL;
  const char *where = shown != NULL ? shown : _("the directory it names");
  if (matcher_match(m, ".git") >= 0) {
    add(out, AUDIT_GIT_DIR_OUTSIDE, xstrdup(".git"),
        xasprintf(_("is a file that sends git elsewhere (a worktree or a submodule): the hooks "
                    "and configuration git runs here are in %s, outside the project, where "
                    "agent.lock cannot protect them, so a hook an agent places there runs "
                    "outside any sandbox at your next git command (let agents work in a clone "
                    "of their own)"),
                  where));
  } else {
    add(out, AUDIT_GIT_DIR_OUTSIDE, xstrdup(".git"),
        xasprintf(_("is a file that sends git elsewhere (a worktree or a submodule), and it is "
                    "not protected: an agent can point it at a directory of its own, and the "
                    "hooks and configuration git runs here are in %s, outside the project, "
                    "where agent.lock cannot protect them; either way a hook runs outside any "
                    "sandbox at your next git command (add `.git` to agent.lock, and let agents "
                    "work in a clone of their own)"),
                  where));
  }
}

/* The names in directory `fd` but `.` and `..`, sorted (for findings in
 * the same order on every file system); *ret_n of them. */
static char **sorted_names(int fd, size_t *ret_n) {
  char **names = NULL;
  size_t n = 0, cap = 0;
  char buf[4096];
  DirReader dr = {.fd = fd, .buf = buf, .size = sizeof(buf)};
  for (const struct dirent64 *de; (de = dir_reader_next(&dr)) != NULL;) {
    if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
      char **slot = grow_array(&names, &n, &cap, sizeof(char *));
      *slot = xstrdup(de->d_name);
    }
  }
  if (n > 0) {
    qsort(names, n, sizeof(char *), strings_compare);
  }
  *ret_n = n;
  return names;
}

/* `git init` and `git clone` make no commondir file; only a linked
 * worktree's git directory has one. Where it is found in another git
 * directory (`rel`: .git, or a submodule's), git takes that repository's
 * hooks and configuration from the directory it names instead, and
 * `.git/hooks` and `.git/config` in agent.lock protect nothing git runs. */
static void audit_git_planted_commondir(const char *root, const char *rel, AuditFindings *out) {
  _cleanup_free_ char *dir = path_join(root, rel);
  _cleanup_free_ char *file = path_join(dir, "commondir");
  struct stat st;
  if (lstat(file, &st) < 0) {
    return;
  }
  _cleanup_free_ char *named = git_path_in(file, "", dir);
  _cleanup_free_ char *canon = named != NULL ? realpath(named, NULL) : NULL;
  _cleanup_free_ char *shown =
      canon != NULL ? path_display(canon) : named != NULL ? path_display(named) : NULL;
  add(out, AUDIT_GIT_COMMONDIR, xasprintf("%s/commondir", rel),
      xasprintf(_("sends git elsewhere: git takes the hooks and configuration it runs for this "
                  "repository from %s instead, and neither `git init` nor `git clone` makes "
                  "such a file, so an agent may have placed it (look at it, and remove it "
                  "unless you made it)"),
                shown != NULL ? shown : _("the directory it names")));
}

/* Linked worktrees (`git worktree add`) keep their git directories in
 * .git/worktrees/NAME; NAME/commondir names the repository whose hooks and
 * configuration git runs in that worktree, normally this one. */
static void audit_git_worktrees(const char *root, const Matcher *m, bool worktree_config,
                                AuditFindings *out) {
  _cleanup_free_ char *dir = path_join(root, ".git/worktrees");
  _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  size_t n;
  char **names = sorted_names(fd, &n);
  for (size_t i = 0; i < n; i++) {
    _cleanup_free_ char *rel = xasprintf(".git/worktrees/%s/commondir", names[i]);
    _cleanup_free_ char *abs = path_join(root, rel);
    struct stat st;
    if (lstat(abs, &st) == 0 && matcher_match(m, rel) < 0) {
      add(out, AUDIT_GIT_COMMONDIR_UNPROTECTED, steal_pointer(&rel),
          xstrdup(_("is not protected: it names the repository whose hooks and configuration "
                    "git runs in that linked worktree, so an agent that points it at a "
                    "directory of its own runs code outside any sandbox at your next git "
                    "command there (add `.git/worktrees/*/commondir` to agent.lock)")));
    }
    _cleanup_free_ char *config = xasprintf(".git/worktrees/%s/config.worktree", names[i]);
    _cleanup_free_ char *gitdir = xasprintf("%s/.git/worktrees/%s", root, names[i]);
    if (worktree_config && lstat(gitdir, &st) == 0 && S_ISDIR(st.st_mode) &&
        matcher_match(m, config) < 0) {
      add(out, AUDIT_GIT_CONFIG, steal_pointer(&config),
          xstrdup(_("is not protected, and git reads it in that linked worktree "
                    "(extensions.worktreeConfig is set): `core.hooksPath`, `core.fsmonitor` or "
                    "an alias set there runs commands outside any sandbox at your next git "
                    "command there (add `.git/worktrees/*/config.worktree` to agent.lock)")));
    }
    free(names[i]);
  }
  free(names);
}

/* Submodules keep their git directories in .git/modules/NAME (nested
 * ones in .git/modules/NAME/modules/NAME): each has hooks and a
 * configuration of its own, which `.git/hooks` and `.git/config` do not
 * cover, and git runs them at the next command in the submodule. */
#define GIT_MODULES_MAX_DEPTH 8u

static void audit_git_modules(const char *root, const char *rel, const Matcher *m,
                              unsigned depth, AuditFindings *out) {
  _cleanup_free_ char *dir = path_join(root, rel);
  _cleanup_close_ int fd =
      depth < GIT_MODULES_MAX_DEPTH
          ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
          : -1;
  if (fd < 0) {
    return;
  }
  size_t n;
  char **names = sorted_names(fd, &n);
  for (size_t i = 0; i < n; i++) {
    _cleanup_free_ char *module = xasprintf("%s/%s", rel, names[i]);
    _cleanup_free_ char *abs = path_join(root, module);
    _cleanup_free_ char *head = path_join(abs, "HEAD");
    struct stat st;
    if (lstat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
      continue;
    }
    if (lstat(head, &st) < 0) {
      /* Not a git directory: a submodule at libs/foo keeps its own in
       * .git/modules/libs/foo. */
      audit_git_modules(root, module, m, depth + 1, out);
      continue;
    }
    _cleanup_free_ char *hooks = xasprintf("%s/hooks", module);
    _cleanup_free_ char *config = xasprintf("%s/config", module);
    if (matcher_match(m, hooks) < 0) {
      add(out, AUDIT_GIT_HOOKS, steal_pointer(&hooks),
          xstrdup(_("is not protected: a hook an agent places there runs outside any sandbox at "
                    "your next git command in that submodule (add `.git/modules/**/hooks` to "
                    "agent.lock)")));
    }
    if (matcher_match(m, config) < 0) {
      add(out, AUDIT_GIT_CONFIG, steal_pointer(&config),
          xstrdup(_("is not protected: `core.hooksPath`, `core.fsmonitor` or an alias set there "
                    "runs commands outside any sandbox at your next git command in that "
                    "submodule (add `.git/modules/**/config` to agent.lock)")));
    }
    audit_git_planted_commondir(root, module, out);
    _cleanup_free_ char *nested = xasprintf("%s/modules", module);
    audit_git_modules(root, nested, m, depth + 1, out);
  }
  for (size_t i = 0; i < n; i++) {
    free(names[i]);
  }
  free(names);
}

static void audit_git(const Policy *policy, const Matcher *m, const char *canon_root,
                      AuditFindings *out) {
  if (audit_git_is_file(policy->root)) {
    audit_git_file(policy, m, out);
    return;
  }
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
  audit_git_planted_commondir(policy->root, ".git", out);
  bool worktree_config = audit_git_config(policy->root, canon_root, m, out);
  if (worktree_config && matcher_match(m, ".git/config.worktree") < 0) {
    add(out, AUDIT_GIT_CONFIG, xstrdup(".git/config.worktree"),
        xstrdup(_("is not protected, and git reads it (extensions.worktreeConfig is set, as "
                  "`git sparse-checkout` does): `core.hooksPath`, `core.fsmonitor` or an alias "
                  "set there runs commands outside any sandbox at your next git command (add "
                  "`.git/config.worktree` to agent.lock)")));
  }
  audit_git_worktrees(policy->root, m, worktree_config, out);
  audit_git_modules(policy->root, ".git/modules", m, 0, out);
}

/* ---- symbolic links inside protected directories -------------------------- */

/* A protected directory can be large (a whole .git): the walk looks at no
 * more than this many entries in all, this deep, and names no more than
 * this many links before summing up the rest. */
#define LINK_WALK_MAX_ENTRIES 20000u
#define LINK_WALK_MAX_DEPTH 32u
#define LINK_REPORT_MAX 20u

/* A file with more than one name, met inside a protected directory. */
typedef struct {
  dev_t dev;
  ino_t ino;
  nlink_t nlink;
  size_t names; /* of them, found protected */
  char *rel;    /* the first one */
} Linked;

typedef struct {
  const Matcher *m;
  const char *canon_root;
  size_t budget;
  size_t reported;
  size_t more;
  Linked *linked;
  size_t n_linked, cap_linked;
  AuditFindings *out;
} LinkWalk;

/* The names of the file `dev`:`ino` that the scan found protected. */
static size_t protected_names(const ScanResult *scan, dev_t dev, ino_t ino) {
  size_t n = 0;
  for (size_t i = 0; i < scan->n_paths; i++) {
    const ProtectedPath *p = &scan->paths[i];
    n += !S_ISDIR(p->mode) && !S_ISLNK(p->mode) && p->dev == dev && p->ino == ino;
  }
  return n;
}

static char *hard_links_detail(nlink_t nlink) {
  return xasprintf(P_("has %ju hard link; the other names are not protected and writing one "
                      "changes this file",
                      "has %ju hard links; the other names are not protected and writing one "
                      "changes this file",
                      (unsigned long)nlink),
                   (uintmax_t)nlink);
}

static void linked_found(LinkWalk *w, const struct stat *st, const char *rel) {
  for (size_t i = 0; i < w->n_linked; i++) {
    if (w->linked[i].dev == st->st_dev && w->linked[i].ino == st->st_ino) {
      w->linked[i].names++;
      return;
    }
  }
  Linked *l = grow_array(&w->linked, &w->n_linked, &w->cap_linked, sizeof(Linked));
  *l = (Linked){st->st_dev, st->st_ino, st->st_nlink, 1, xstrdup(rel)};
}

static void link_found(LinkWalk *w, const char *abs, const char *rel) {
  _cleanup_free_ char *target = path_resolve(abs);
  if (target == NULL || protects(w->m, w->canon_root, target)) {
    return; /* a loop, or unreachable: nothing is written through it */
  }
  struct stat st;
  if (stat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return; /* /dev/null and the like: nothing to protect there */
  }
  if (w->reported >= LINK_REPORT_MAX) {
    w->more++;
    return;
  }
  w->reported++;
  _cleanup_free_ char *shown = display_path(w->canon_root, target);
  add(w->out, AUDIT_SYMLINK_OUTSIDE, xstrdup(rel),
      xasprintf(_("is a symbolic link in a protected directory to %s, which is not protected: "
                  "the link itself cannot be changed, but what is written through it lands "
                  "there (protect %s as well, or replace the link with a copy)"),
                shown, shown));
}

/* Walks the directory open at `dfd` (taken over), whose lexical absolute
 * path is `abs` and whose path relative to the root is `rel`. Entries in
 * name order, so what is reported does not depend on the filesystem. */
static void link_walk(LinkWalk *w, int dfd, const char *abs, const char *rel, unsigned depth) {
  size_t n = 0;
  DirName *e = dir_names_sorted(dfd, &w->budget, NULL, &n);
  for (size_t i = 0; i < n; i++) {
    const char *name = e[i].name;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      continue;
    }
    _cleanup_free_ char *cabs = path_join(abs, name);
    _cleanup_free_ char *crel = path_join(rel, name);
    if (S_ISLNK(st.st_mode)) {
      link_found(w, cabs, crel);
    } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      linked_found(w, &st, crel);
    } else if (S_ISDIR(st.st_mode) && depth < LINK_WALK_MAX_DEPTH && w->budget > 0) {
      int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        link_walk(w, sub, cabs, crel, depth + 1);
      }
    }
  }
  dir_names_free(e, n);
  close(dfd);
}

/* Walks the protected directories (symbolic links found go to w->out,
 * files with several names to w->linked). */
static void links_inside_walk(const Policy *policy, const ScanResult *scan, LinkWalk *w) {
  for (size_t i = 0; i < scan->n_paths; i++) {
    const ProtectedPath *p = &scan->paths[i];
    if (!S_ISDIR(p->mode)) {
      continue;
    }
    _cleanup_free_ char *abs = path_join(policy->root, p->relative);
    int fd = open(abs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
      continue;
    }
    if (fstat(fd, &st) < 0 || st.st_dev != p->dev || st.st_ino != p->ino) {
      close(fd); /* replaced since the scan */
      continue;
    }
    link_walk(w, fd, abs, p->relative, 0);
  }
}

/* Whether every name of the file `dev`:`ino` is protected: listed (the
 * scan found it), or inside a protected directory (the walk did). */
static bool all_names_protected(const ScanResult *scan, const LinkWalk *w, dev_t dev, ino_t ino,
                                nlink_t nlink) {
  size_t names = protected_names(scan, dev, ino);
  for (size_t k = 0; k < w->n_linked; k++) {
    if (w->linked[k].dev == dev && w->linked[k].ino == ino) {
      names += w->linked[k].names;
    }
  }
  return names >= nlink;
}

/* What the walk found, after `out`'s findings so far: the symbolic links,
 * then the files with names outside what is protected; frees it. */
static void links_inside_report(const ScanResult *scan, LinkWalk *w, AuditFindings *out) {
  for (size_t i = 0; i < w->out->n; i++) {
    AuditFinding *f = add(out, w->out->items[i].kind, w->out->items[i].subject,
                          w->out->items[i].detail);
    f->pattern = w->out->items[i].pattern;
  }
  free(w->out->items);
  memset(w->out, 0, sizeof(*w->out));
  if (w->more > 0) {
    add(out, AUDIT_SYMLINK_OUTSIDE,
        xasprintf(P_("%zu more symbolic link", "%zu more symbolic links", (unsigned long)w->more),
                  w->more),
        xstrdup(P_("in protected directories points outside what is protected, like those above",
                   "in protected directories point outside what is protected, like those above",
                   (unsigned long)w->more)));
  }
  size_t shown = 0, hidden = 0;
  for (size_t i = 0; i < w->n_linked; i++) {
    const Linked *l = &w->linked[i];
    if (all_names_protected(scan, w, l->dev, l->ino, l->nlink)) {
      continue;
    }
    if (shown < LINK_REPORT_MAX) {
      add(out, AUDIT_HARD_LINKS, xstrdup(l->rel), hard_links_detail(l->nlink));
      shown++;
    } else {
      hidden++;
    }
  }
  if (hidden > 0) {
    add(out, AUDIT_HARD_LINKS,
        xasprintf(P_("%zu more file", "%zu more files", (unsigned long)hidden), hidden),
        xstrdup(P_("in protected directories has other names that are not protected, like those "
                   "above",
                   "in protected directories have other names that are not protected, like "
                   "those above",
                   (unsigned long)hidden)));
  }
  for (size_t i = 0; i < w->n_linked; i++) {
    free(w->linked[i].rel);
  }
  free(w->linked);
  w->linked = NULL;
  w->n_linked = w->cap_linked = 0;
}

/* ---- mounts -------------------------------------------------------------- */

static void add_second_mount(AuditFindings *out, char *alias, const char *detail) {
  for (size_t j = 0; j < out->n; j++) {
    if (out->items[j].kind == AUDIT_SECOND_MOUNT && streq(out->items[j].subject, alias)) {
      free(alias);
      return;
    }
  }
  add(out, AUDIT_SECOND_MOUNT, alias, xstrdup(detail));
}

static void second_mounts(const MountTable *t, const char *root, const char *const *paths,
                          size_t n_paths, AuditFindings *out) {
  const MountEntry *home = NULL;
  /* Where the project lies inside its filesystem. */
  _cleanup_free_ char *fs_path = mount_fs_path(t, root, &home);
  if (home == NULL) {
    return;
  }
  for (size_t i = 0; i < t->n; i++) {
    const MountEntry *e = &t->v[i];
    if (e == home || !streq(e->dev, home->dev)) {
      continue;
    }
    const char *rest = path_relative(e->root, fs_path);
    if (rest != NULL) {
      /* The whole project, seen again below e's mount point. */
      _cleanup_free_ char *joined = path_join(e->point, rest);
      char *alias = path_normalize(joined);
      if (streq(alias, root)) {
        free(alias);
        continue;
      }
      add_second_mount(out, alias,
                       _("is a second path to this project (another mount of the same "
                         "filesystem); writes through it are restricted by neither backend"));
      continue;
    }
    /* Part of the project: a second path to what is protected in it. */
    const char *part = path_relative(fs_path, e->root);
    if (part == NULL) {
      continue;
    }
    _cleanup_free_ char *part_abs = path_join(root, part);
    /* Bound on its own place (the pins and read-only binds of a `ralon
     * run` around this one, of a protected path or of something inside a
     * protected directory): the same path, not a second one. */
    if (streq(e->point, part_abs)) {
      continue;
    }
    for (size_t k = 0; k < n_paths; k++) {
      const char *below = path_relative(part_abs, paths[k]);
      char *alias;
      if (below != NULL) {
        _cleanup_free_ char *joined = path_join(e->point, below);
        alias = path_normalize(joined);
      } else if (path_relative(paths[k], part_abs) != NULL) {
        alias = xstrdup(e->point);
      } else {
        continue;
      }
      /* A protected path bound on itself (inside `ralon run`). */
      if (streq(alias, paths[k])) {
        free(alias);
        continue;
      }
      add_second_mount(out, alias,
                       _("is a second path to protected files of this project (a mount of part "
                         "of it); writes through it are restricted by neither backend"));
    }
  }
}

void audit_second_mounts(const char *mountinfo, const char *root, const char *const *paths,
                         size_t n_paths, AuditFindings *out) {
  MountTable t = {0};
  mounts_parse(mountinfo, &t);
  second_mounts(&t, root, paths, n_paths, out);
  mounts_clear(&t);
}

/* The value of option `key` in a comma-separated list, or NULL. */
static char *mount_option(const char *options, const char *key) {
  size_t klen = strlen(key);
  for (const char *o = options; *o != '\0';) {
    size_t len = strcspn(o, ",");
    if (len > klen && strncmp(o, key, klen) == 0 && o[klen] == '=') {
      return xstrndup(o + klen + 1, len - klen - 1);
    }
    o += len;
    if (*o == ',') {
      o++;
    }
  }
  return NULL;
}

/* Whether the mount shows its whole filesystem: its root is "/", or (btrfs)
 * the root of the subvolume it was asked for. */
static bool mount_whole(const MountEntry *e) {
  if (streq(e->root, "/")) {
    return true;
  }
  if (streq(e->fstype, "btrfs")) {
    _cleanup_free_ char *sv = mount_option(e->options, "subvol");
    return sv != NULL && streq(sv, e->root);
  }
  return false;
}

static const MountEntry *mount_parent(const MountTable *t, const MountEntry *e) {
  for (size_t i = t->n; i > 0; i--) {
    if (streq(t->v[i - 1].id, e->parent)) {
      return &t->v[i - 1];
    }
  }
  return NULL;
}

/* Where the files of `e` come from, seen through binds of a directory onto
 * its own path (what `ralon run` makes of every ancestor and protected
 * path): those add no other path, so the mount below them decides. */
static const MountEntry *mount_origin(const MountTable *t, const MountEntry *e) {
  for (size_t steps = 0; steps < t->n && !mount_whole(e); steps++) {
    const MountEntry *p = mount_parent(t, e);
    const char *below = p != NULL ? path_relative(p->point, e->point) : NULL;
    if (p == NULL || p == e || below == NULL || !streq(p->dev, e->dev)) {
      break;
    }
    _cleanup_free_ char *joined = path_join(p->root, below);
    _cleanup_free_ char *seen = path_normalize(joined);
    if (!streq(seen, e->root)) {
      break;
    }
    e = p;
  }
  return e;
}

static bool is_fuse(const char *fstype) {
  return streq(fstype, "fuse") || streq(fstype, "fuseblk") || startswith(fstype, "fuse.");
}

static bool is_network(const char *fstype) {
  static const char *const types[] = {
      "nfs",       "nfs4",          "cifs",           "smb3",       "smbfs",      "9p",
      "virtiofs",  "ceph",          "afs",            "glusterfs",  "lustre",     "gpfs",
      "beegfs",    "ocfs2",         "gfs2",           "coda",       "ncpfs",      "davfs",
      "fuse.sshfs", "fuse.glusterfs", "fuse.ceph-fuse", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse",
      "fuse.juicefs", "fuse.davfs2",
  };
  for (size_t i = 0; i < ELEMENTSOF(types); i++) {
    if (streq(fstype, types[i])) {
      return true;
    }
  }
  return false;
}

static void mounts_of(const MountTable *t, const char *root, const char *const *paths, size_t n,
                      AuditFindings *out) {
  const MountEntry **seen = xcalloc(t->n + 1, sizeof(MountEntry *));
  const MountEntry **homes = xcalloc(t->n + 1, sizeof(MountEntry *));
  size_t n_seen = 0, n_homes = 0;
  /* A thousand protected files in a few directories: the mount holding a
   * path is the one holding its directory, unless one is mounted on the
   * path itself, so each directory is looked up once. */
  const char *last_dir = NULL;
  size_t last_len = 0;
  const MountEntry *dir_home = NULL;
  bool mounts_below = false; /* on entries of that directory */
  for (size_t i = 0; i < n; i++) {
    const char *slash = strrchr(paths[i], '/');
    if (slash == NULL) {
      continue;
    }
    size_t len = (size_t)(slash - paths[i]);
    if (last_dir == NULL || len != last_len || strncmp(last_dir, paths[i], len) != 0) {
      _cleanup_free_ char *dir = xstrndup(paths[i], len > 0 ? len : 1);
      dir_home = mount_holding(t, dir);
      last_dir = paths[i];
      last_len = len;
      mounts_below = false;
      for (size_t k = 0; k < t->n && !mounts_below; k++) {
        const char *rest = path_relative(dir, t->v[k].point);
        mounts_below = rest != NULL && rest[0] != '\0';
      }
    }
    const MountEntry *home = dir_home;
    for (size_t k = 0; mounts_below && k < t->n; k++) {
      if (streq(t->v[k].point, paths[i])) {
        home = &t->v[k];
      }
    }
    if (home == NULL) {
      continue;
    }
    bool dup = false;
    for (size_t k = 0; k < n_homes && !dup; k++) {
      dup = homes[k] == home;
    }
    if (dup) {
      continue; /* its origin, and so its finding, is known already */
    }
    homes[n_homes++] = home;
    const MountEntry *origin = mount_origin(t, home);
    for (size_t k = 0; k < n_seen && !dup; k++) {
      dup = seen[k] == origin;
    }
    if (dup) {
      continue;
    }
    seen[n_seen++] = origin;
    const char *fstype = home->fstype;
    AuditKind kind;
    char *detail;
    if (is_network(fstype)) {
      kind = AUDIT_NETWORK_FS;
      detail = xasprintf(_("is on a network file system (%s, mounted at %s): the server and its "
                           "other clients write the same files, and neither backend restricts "
                           "them (keep protected files on a local file system)"),
                         fstype, home->point);
    } else if (is_fuse(fstype)) {
      kind = AUDIT_FUSE;
      detail = xasprintf(_("is on a FUSE file system (%s, mounted at %s): a daemon outside the "
                           "sandbox serves its files, and whatever other path it takes them "
                           "from is restricted by neither backend (keep protected files on a "
                           "local file system)"),
                         fstype, home->point);
    } else if (streq(fstype, "overlay") || streq(fstype, "aufs")) {
      kind = AUDIT_OVERLAY;
      detail = xasprintf(_("is on an overlay file system (mounted at %s): its layers are other "
                           "paths to the same files, and writes made to them directly are "
                           "restricted by neither backend (keep protected files off overlays, "
                           "or make sure nothing else can reach the layers)"),
                         home->point);
    } else if (!mount_whole(origin)) {
      kind = AUDIT_BIND_MOUNT;
      detail = xasprintf(_("is on a bind mount (directory %s of the file system on %s, mounted "
                           "at %s): other paths reach the same files, possibly outside this "
                           "mount namespace (on a container's host, say), and writes through "
                           "them are restricted by neither backend (work on the project at its "
                           "original path)"),
                         origin->root, origin->source[0] ? origin->source : origin->dev,
                         origin->point);
    } else {
      continue;
    }
    add(out, kind, display_path(root, paths[i]), detail);
  }
  free(homes);
  free(seen);
}

void audit_mounts(const char *mountinfo, const char *root, const char *const *paths, size_t n,
                  AuditFindings *out) {
  MountTable t = {0};
  mounts_parse(mountinfo, &t);
  mounts_of(&t, root, paths, n, out);
  mounts_clear(&t);
}

/* ---- case-insensitive directories ---------------------------------------- */

/* Whether the directory open at `fd` finds an entry by another spelling of
 * its name (for filesystems where that depends on how they were mounted). */
static bool lookup_ignores_case(int fd) {
  int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
  if (d == NULL) {
    if (dup >= 0) {
      close(dup);
    }
    return false;
  }
  bool result = false;
  struct dirent *de;
  for (unsigned tries = 0; tries < 64 && (de = readdir(d)) != NULL; tries++) {
    char other[NAME_MAX + 1];
    bool letters = false;
    size_t i;
    for (i = 0; i < NAME_MAX && de->d_name[i] != '\0'; i++) {
      unsigned char c = (unsigned char)de->d_name[i];
      letters |= isalpha(c) != 0;
      other[i] = (char)(islower(c) ? toupper(c) : tolower(c));
    }
    other[i] = '\0';
    if (!letters) {
      continue;
    }
    struct stat a, b;
    if (fstatat(fd, de->d_name, &a, AT_SYMLINK_NOFOLLOW) == 0 &&
        fstatat(fd, other, &b, AT_SYMLINK_NOFOLLOW) == 0) {
      result = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    }
    break;
  }
  closedir(d);
  return result;
}

/* The probe, told by `whole_fs` whether to ask statfs(2) about the
 * filesystem as a whole after the directory's own attribute. */
static const char *case_probe(const char *dir, bool whole_fs) {
#if defined(__linux__)
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return NULL;
  }
  const char *why = NULL;
  int flags = 0;
  struct statfs sfs;
  if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_CASEFOLD_FL) != 0) {
    why = "casefold";
  } else if (whole_fs && fstatfs(fd, &sfs) == 0) {
    switch ((unsigned long)sfs.f_type) {
    case 0x4d44UL: /* MSDOS_SUPER_MAGIC: vfat and msdos */
      why = "vfat";
      break;
    case 0x2011BAB0UL: /* EXFAT_SUPER_MAGIC */
      why = "exfat";
      break;
    case 0x482bUL: /* HFSPLUS_SUPER_MAGIC, unless formatted case-sensitive */
      why = lookup_ignores_case(fd) ? "hfsplus" : NULL;
      break;
    case 0x5346544eUL: /* NTFS_SB_MAGIC: ntfs3 ignores case only when mounted `nocase` */
      why = lookup_ignores_case(fd) ? "ntfs" : NULL;
      break;
    default:
      break;
    }
  }
  close(fd);
  return why;
#else
  (void)dir;
  (void)whole_fs;
  return NULL;
#endif
}

const char *audit_case_probe(void *userdata, const char *dir) {
  (void)userdata;
  return case_probe(dir, true);
}

bool audit_fs_may_ignore_case(const char *fstype) {
  static const char *const exact[] = {"ext4", "ext3", "ext2", "btrfs", "f2fs", "tmpfs",
                                      "bcachefs"};
  for (size_t i = 0; fstype != NULL && i < ELEMENTSOF(exact); i++) {
    if (streq(fstype, exact[i])) {
      return false;
    }
  }
  return true;
}

/* The probe audit_run uses, with the mount table it has read: statfs(2)
 * only where the type of the mount holding `dir` may ignore case as a
 * whole. A system call less per directory from / down, on every `run`. */
static const char *case_probe_mounts(void *userdata, const char *dir) {
  const MountEntry *home = mount_holding(userdata, dir);
  return case_probe(dir, audit_fs_may_ignore_case(home != NULL ? home->fstype : NULL));
}

/* The directories above `path` (from /), or only those longer than `from`
 * characters: `path` has a prefix of that length whose chain is known. */
static void add_dir_chain(const char *path, char ***v, size_t *n, size_t *cap, size_t from) {
  char **slot;
  if (from == 0) {
    slot = grow_array(v, n, cap, sizeof(char *));
    *slot = xstrdup("/");
  }
  for (const char *s = strchr(path + from + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
    slot = grow_array(v, n, cap, sizeof(char *));
    *slot = xstrndup(path, (size_t)(s - path));
  }
}

void audit_case_insensitive(const char *root, const char *const *paths, size_t n,
                            AuditCaseProbe probe, void *userdata, AuditFindings *out) {
  char **dirs = NULL;
  size_t nd = 0, cap = 0;
  add_dir_chain(root, &dirs, &nd, &cap, 0);
  char **self = grow_array(&dirs, &nd, &cap, sizeof(char *));
  *self = xstrdup(root);
  /* Only the directories below the root are new for each path, and only
   * those its predecessor (in the same directory, usually) did not add. */
  size_t root_len = streq(root, "/") ? 0 : strlen(root);
  const char *prev = NULL;
  size_t prev_len = 0;
  for (size_t i = 0; i < n; i++) {
    const char *rel = path_relative(root, paths[i]);
    if (rel == NULL || rel[0] == '\0') {
      continue;
    }
    const char *slash = strrchr(paths[i], '/');
    size_t len = slash != NULL ? (size_t)(slash - paths[i]) : 0;
    if (prev != NULL && len == prev_len && strncmp(prev, paths[i], len) == 0) {
      continue; /* same directory as the path before */
    }
    prev = paths[i];
    prev_len = len;
    add_dir_chain(paths[i], &dirs, &nd, &cap, root_len);
  }
  /* Sorted, a directory comes before everything below it. */
  if (nd > 1) {
    qsort(dirs, nd, sizeof(char *), strings_compare);
  }
  const char **found = xcalloc(nd, sizeof(char *));
  size_t n_found = 0;
  for (size_t i = 0; i < nd; i++) {
    if (i > 0 && streq(dirs[i], dirs[i - 1])) {
      continue;
    }
    bool below = false;
    for (size_t k = 0; k < n_found && !below; k++) {
      below = path_relative(found[k], dirs[i]) != NULL;
    }
    if (below) {
      continue; /* the topmost one of a chain says it for those below */
    }
    const char *why = probe(userdata, dirs[i]);
    if (why == NULL) {
      continue;
    }
    found[n_found++] = dirs[i];
    add(out, AUDIT_CASE_INSENSITIVE, display_path(root, dirs[i]),
        xasprintf(_("is case-insensitive (%s), and what lies below it too: other spellings of a "
                    "name reach the same file, but agent.lock patterns match case-sensitively, "
                    "so a protected name spelled differently on disk (`makefile` for "
                    "`Makefile`) is not protected, and hooks and `ralon check` take other "
                    "spellings for unprotected paths (spell patterns exactly as the names on "
                    "disk, or keep the project on a case-sensitive file system)"),
                  why));
  }
  free(found);
  for (size_t i = 0; i < nd; i++) {
    free(dirs[i]);
  }
  free(dirs);
}

/* ---- Landlock ------------------------------------------------------------ */

void audit_landlock(const Plan *plan, int abi, const char *root, AuditFindings *out) {
  if (plan->backend != BACKEND_LANDLOCK) {
    return;
  }
  add(out, AUDIT_LANDLOCK_METADATA, xstrdup(_("with the Landlock backend,")),
      xstrdup(_("the mode, owner, times and extended attributes of protected paths can still be "
                "changed: Landlock does not govern chmod, chown, utime or setxattr, so an agent "
                "can make a protected file writable for others or hide it with mode 000 (use the "
                "mount backend where it is available)")));
  /* abi < 1: no Landlock here (a dry run of what cannot run): which ABI
   * it would get is unknown. */
  if (abi >= 1 && abi < 3) {
    add(out, AUDIT_LANDLOCK_TRUNCATE, xasprintf(_("with Landlock ABI %d,"), abi),
        xstrdup(_("protected files can still be truncated: Landlock governs truncate(2) and "
                  "open(O_TRUNC) from ABI 3 (Linux 6.2) on (use the mount backend, or a newer "
                  "kernel)")));
  }
  for (size_t i = 0; i < plan->carve.n_restricted; i++) {
    const char *dir = plan->carve.restricted[i];
    /* Only root makes entries in `/`, and an agent running as root is a
     * finding of its own. */
    if (streq(dir, "/")) {
      continue;
    }
    /* A file on the way to a path that cannot exist below it (`.git/hooks`
     * where .git is a worktree's file), or a name that does not exist: it
     * is left without a write rule, and has no entries to refuse. */
    if (!carve_restricts_entries(dir)) {
      continue;
    }
    /* What it costs, and what helps, depends on where the directory is:
     * the generic advice (move the protected files) cannot apply to the
     * root, which always holds agent.lock, to the git directory, or to
     * a directory above the project. */
    const char *rel = root != NULL ? path_relative(root, dir) : NULL;
    /* Outside the project: above it, or on the way to a protected path a
     * link leads out to (which the generic advice fits). */
    bool above = rel == NULL && (root == NULL || path_relative(dir, root) != NULL);
    const char *detail;
    if (above) {
      detail = _("accepts no new entries while the agent runs, and none of its entries can be "
                 "removed or renamed: the project lies below it, and Landlock can only take "
                 "rights from a whole directory, so programs that make files there (temporary "
                 "files, dotfiles in a home directory) fail (use the mount backend, or keep the "
                 "project where nothing else needs to make files beside the way to it)");
    } else if (rel != NULL && rel[0] == '\0') {
      detail = _("accepts no new entries while the agent runs, and none of its entries can be "
                 "removed or renamed: it holds agent.lock, and Landlock can only take rights "
                 "from a whole directory, so new files can be made only in its subdirectories, "
                 "and its files can be changed only in place: saving by writing a new file and "
                 "renaming it over the old one (`sed -i`, many editors and formatters) fails "
                 "(use the mount backend where it is available)");
    } else if (rel != NULL && streq(rel, ".git")) {
      detail = _("accepts no new entries while the agent runs, and none of its entries can be "
                 "removed or renamed: agent.lock protects something in it, and Landlock can only "
                 "take rights from a whole directory, so git cannot stage, commit or switch "
                 "branches here (it creates .git/index.lock) (use the mount backend, or leave "
                 "git to yourself while the agent runs)");
    } else {
      detail = _("accepts no new entries while the agent runs, and none of its entries can be "
                 "removed or renamed: it leads to a protected path, and Landlock can only take "
                 "rights from a whole directory, so its files can be changed only in place: "
                 "saving by writing a new file and renaming it over the old one (`sed -i`, many "
                 "editors and formatters) fails (move protected files into a directory of their "
                 "own, or use the mount backend)");
    }
    add(out, AUDIT_LANDLOCK_NO_NEW_ENTRIES, display_path(root, dir), xstrdup(detail));
  }
  for (size_t i = 0; i < plan->carve.n_withheld; i++) {
    add(out, AUDIT_LANDLOCK_LINKED_FILE, display_path(root, plan->carve.withheld[i]),
        xstrdup(_("is read-only while the agent runs: it has other names (hard links, or "
                  "something mounted on it), and a Landlock rule follows a file to every name, "
                  "so one here could open a protected file too (use the mount backend, or "
                  "give it a single name)")));
  }
  for (size_t i = 0; i < plan->carve.n_unlisted; i++) {
    add(out, AUDIT_LANDLOCK_UNLISTED, display_path(root, plan->carve.unlisted[i]),
        xstrdup(_("cannot be listed by this user, so Landlock grants nothing in it: everything "
                  "in it is read-only while the agent runs")));
  }
}

/* ---- inherited descriptors ------------------------------------------------ */

char *audit_fd_path(int fd, mode_t mode) {
  /* Only what a file system path can name, or lead to, is worth a
   * readlink: each one makes /proc build an inode, and a terminal, a pipe
   * or /dev/null is what every command inherits. */
  if (!S_ISREG(mode) && !S_ISDIR(mode) && !S_ISBLK(mode) && !S_ISLNK(mode)) {
    return NULL;
  }
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t len = readlink(link, target, sizeof(target) - 1);
  return len >= 0 ? xstrndup(target, (size_t)len) : NULL;
}

int audit_list_fds(bool names, AuditFd **ret, size_t *ret_n) {
  *ret = NULL;
  *ret_n = 0;
  /* getdents64(2) directly: opendir(3) would add an fstat(2). */
  int self = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (self < 0) {
    return -errno;
  }
  AuditFd *v = NULL;
  size_t n = 0, cap = 0;
  char buf[4096];
  DirReader dr = {.fd = self, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  while ((de = dir_reader_next(&dr)) != NULL) {
    char *end;
    errno = 0;
    long fd = strtol(de->d_name, &end, 10);
    if (*end != '\0' || end == de->d_name || errno != 0 || fd < 0 || fd > INT_MAX ||
        fd == self) {
      continue;
    }
    struct stat st;
    int flags = fcntl((int)fd, F_GETFL);
    if (flags < 0 || fstat((int)fd, &st) < 0) {
      continue;
    }
    /* A name that cannot be read leaves the identity to judge by: the
     * descriptor is still listed. */
    AuditFd *a = grow_array(&v, &n, &cap, sizeof(AuditFd));
    a->fd = (int)fd;
    a->path = names ? audit_fd_path((int)fd, st.st_mode) : NULL;
    a->dev = st.st_dev;
    a->ino = st.st_ino;
    a->mode = st.st_mode;
    a->flags = flags;
  }
  int saved = errno; /* 0 at the end of the listing */
  close(self);
  if (saved != 0) {
    audit_fds_free(v, n);
    return -saved;
  }
  *ret = v;
  *ret_n = n;
  return 0;
}

void audit_fds_free(AuditFd *fds, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(fds[i].path);
  }
  free(fds);
}

void audit_inherited_fds(const Policy *policy, const Matcher *m, const ScanResult *scan,
                         const AuditFd *fds, size_t n, AuditFindings *out) {
  const char *root = scan->canon_root != NULL ? scan->canon_root : policy->root;
  for (size_t i = 0; i < n; i++) {
    const AuditFd *a = &fds[i];
    int acc = a->flags & O_ACCMODE;
    if ((acc != O_WRONLY && acc != O_RDWR) || S_ISDIR(a->mode)) {
      continue;
    }
    const ProtectedPath *hit = NULL;
    for (size_t k = 0; k < scan->n_paths && hit == NULL; k++) {
      if (scan->paths[k].dev == a->dev && scan->paths[k].ino == a->ino) {
        hit = &scan->paths[k];
      }
    }
    bool by_name = a->path != NULL && a->path[0] == '/' && protects(m, root, a->path);
    if (hit == NULL && !by_name) {
      continue;
    }
    add(out, AUDIT_INHERITED_FD, hit != NULL ? xstrdup(hit->relative) : display_path(root, a->path),
        xasprintf(_("is open for writing on descriptor %d, inherited from the program that "
                    "started ralon: a command that inherits it can write through it whatever "
                    "the backend (close it first, e.g. `exec %d>&-` in a shell)"),
                  a->fd, a->fd));
  }
}

/* ---- audit_run ----------------------------------------------------------- */

static char *unmatched_literal_detail(void) {
  return xstrdup(_("matches nothing on disk, so there is nothing to lock (a path that does not "
                   "exist cannot be made read-only: create it, or remove the line)"));
}

/* A `.git/...` pattern where .git is a file: what it names is in a git
 * directory elsewhere, which git-dir-outside-project reports; "create it"
 * would be wrong advice. */
static bool git_path_elsewhere(const char *root, const char *pattern) {
  return startswith(pattern, ".git/") && audit_git_is_file(root);
}

void audit_plan_missing(const Plan *plan, const char *root, AuditFindings *out) {
  /* What the findings name already, in an index that each finding added
   * here is entered into too: a lookup per missing target, not a pass
   * over every finding (a policy of many literals naming nothing yet has
   * as many findings as targets). */
  StrSet said = {0};
  for (size_t k = 0; k < out->n; k++) {
    const AuditFinding *f = &out->items[k];
    if (f->pattern != NULL) {
      strset_add(&said, f->pattern);
    }
    if (f->kind == AUDIT_SYMLINK) {
      strset_add(&said, f->subject);
    }
  }
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    if (!t->missing) {
      continue;
    }
    if (git_path_elsewhere(root, t->relative)) {
      continue;
    }
    if (!strset_has(&said, t->relative, strlen(t->relative))) {
      AuditFinding *f = add(out, AUDIT_UNMATCHED_LITERAL, xasprintf("`%s`", t->relative),
                            unmatched_literal_detail());
      f->pattern = xstrdup(t->relative);
      strset_add(&said, f->pattern);
    }
  }
  strset_clear(&said);
}

/* The first symbolic link among the directories on the way from `root` to
 * the literal pattern `pat` (relative to the root), or NULL. */
static char *link_on_the_way(const char *root, const char *pat) {
  for (const char *s = strchr(pat, '/'); s != NULL; s = strchr(s + 1, '/')) {
    _cleanup_free_ char *rel = xstrndup(pat, (size_t)(s - pat));
    _cleanup_free_ char *abs = path_join(root, rel);
    struct stat st;
    if (lstat(abs, &st) < 0) {
      return NULL;
    }
    if (S_ISLNK(st.st_mode)) {
      return steal_pointer(&rel);
    }
  }
  return NULL;
}

/* The nearest agent.lock above the project's, if any. Discovery stops at
 * the first one (like git), so the outer policy protects nothing here; an
 * agent can plant agent.lock in any directory it may write, and a session
 * started there obeys it. */
static void add_enclosing(AuditFindings *out, char *file) {
  add(out, AUDIT_ENCLOSING_POLICY, file,
      xstrdup(_("also governs this directory, but only the nearest agent.lock applies: "
                "what that one protects here is not protected now (if this project's "
                "agent.lock was not written by you, an agent may have planted it; start "
                "from that project's root)")));
}

static void audit_enclosing(const Policy *policy, AuditFindings *out) {
  /* Along the way the shell came, through a symbolic link: the real
   * path has not got it (policy_discover compared). */
  if (policy->enclosing_by_link != NULL) {
    add_enclosing(out, xstrdup(policy->enclosing_by_link));
  }
  char *d = xstrdup(policy->root);
  while (!streq(d, "/")) {
    char *up = path_dirname(d);
    free(d);
    d = up;
    _cleanup_free_ char *file = path_join(d, POLICY_FILE_NAME);
    struct stat st;
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
      add_enclosing(out, steal_pointer(&file));
      break;
    }
  }
  free(d);
}

void audit_run(const Policy *policy, const Matcher *m, const ScanResult *scan, AuditFindings *out) {
  /* Inside protected directories first: the other names of a protected
   * file may be there. Its findings follow the git ones, below. */
  AuditFindings inside = {0};
  LinkWalk w = {.m = m,
                .canon_root = scan->canon_root,
                .budget = LINK_WALK_MAX_ENTRIES,
                .out = &inside};
  links_inside_walk(policy, scan, &w);
  /* Whether a pattern that was first for no entry still names something
   * on disk: an entry an earlier pattern claimed, or something inside a
   * directory that is protected as a whole. One pass for all patterns. */
  uint32_t *claimed = xcalloc(policy->n_patterns + 1, sizeof(uint32_t));
  bool *inside_dir = xcalloc(policy->n_patterns + 1, sizeof(bool));
  scan_pattern_matches(scan, m, claimed, inside_dir);
  for (size_t i = 1; i < policy->n_patterns; i++) {
    if (scan->hits[i] > 0 || claimed[i] > 0 || inside_dir[i]) {
      continue;
    }
    const char *pat = policy->patterns[i].pattern;
    AuditFinding *f;
    _cleanup_free_ char *abs = matcher_is_literal(m, i) ? path_join(policy->root, pat) : NULL;
    struct stat st;
    if (abs != NULL && lstat(abs, &st) == 0) {
      /* There, but not where the scan looks: through a symbolic link on
       * the way (or below a directory it could not read, which says so). */
      _cleanup_free_ char *via = link_on_the_way(policy->root, pat);
      if (via != NULL) {
        f = add(out, AUDIT_SYMLINK, xasprintf("`%s`", pat),
                xasprintf(_("names a file through the symbolic link `%s`: that file is protected, "
                            "but the link can be replaced to lead elsewhere, and the pattern then "
                            "names another file (name the file by its own path)"),
                          via));
        f->pattern = xstrdup(pat);
      }
      continue;
    }
    if (abs != NULL && git_path_elsewhere(policy->root, pat)) {
      continue;
    }
    if (abs != NULL) {
      f = add(out, AUDIT_UNMATCHED_LITERAL, xasprintf("`%s`", pat), unmatched_literal_detail());
    } else {
      f = add(out, AUDIT_UNMATCHED_GLOB, xasprintf("`%s`", pat),
              xstrdup(_("matches nothing on disk, so there is nothing to lock")));
    }
    f->pattern = xstrdup(pat);
  }
  free(claimed);
  free(inside_dir);
  for (size_t i = 0; i < scan->n_paths; i++) {
    const ProtectedPath *p = &scan->paths[i];
    if (S_ISLNK(p->mode)) {
      add(out, AUDIT_SYMLINK, xstrdup(p->relative),
          xstrdup(_("is a symbolic link: what gets protected is its target, and the link itself "
                    "can be replaced (protect the target's own path instead)")));
    } else if (!S_ISDIR(p->mode) && p->nlink > 1 &&
               !all_names_protected(scan, &w, p->dev, p->ino, p->nlink)) {
      add(out, AUDIT_HARD_LINKS, xstrdup(p->relative), hard_links_detail(p->nlink));
    }
  }
  for (size_t i = 0; i < scan->n_links; i++) {
    add(out, AUDIT_SYMLINK, xstrdup(scan->links[i]),
        xstrdup(_("is a symbolic link the policy reaches through: what is found through it is "
                  "protected at its own path, and the link itself can be replaced (name that "
                  "path in the policy instead)")));
  }
  for (size_t i = 0; i < scan->n_links_outside; i++) {
    add(out, AUDIT_SYMLINK, xstrdup(scan->links_outside[i]),
        xstrdup(_("is a symbolic link to a directory outside the project, which the scan does "
                  "not enter: what the patterns would match through it is not protected "
                  "(name those paths in the policy one by one, or move them into the "
                  "project)")));
  }
  for (size_t i = 0; i < scan->n_unreadable; i++) {
    add(out, AUDIT_UNREADABLE, xstrdup(scan->unreadable[i]),
        xstrdup(_("could not be read in full (no permission, or names too long to reach "
                  "from the root), so protected paths inside it were not found; `ralon run` "
                  "protects all of it")));
  }
  audit_enclosing(policy, out);
  const char *canon = scan->canon_root;
  audit_git(policy, m, canon, out);
  gitscan_audit(policy->root, canon, m, out);
  links_inside_report(scan, &w, out);
  if (canon != NULL) {
    /* The canonical path of an entry not reached through a link is the
     * canonical root and its relative path: the scan's own absolute name
     * when the policy's root is canonical already. */
    bool own = !scan->absolute_canonical || scan->n_links > 0;
    const char **paths = xcalloc(scan->n_paths + 1, sizeof(char *));
    for (size_t i = 0; i < scan->n_paths; i++) {
      const ProtectedPath *p = &scan->paths[i];
      char *real = p->via_link ? realpath(p->absolute, NULL) : NULL;
      paths[i] = real != NULL ? real
                 : own        ? path_join(canon, p->relative)
                              : p->absolute;
    }
    _cleanup_free_ char *text = read_text_file("/proc/self/mountinfo", 16u * 1024u * 1024u);
    MountTable t = {0};
    if (text != NULL) {
      mounts_parse(text, &t);
      second_mounts(&t, canon, paths, scan->n_paths, out);
      mounts_of(&t, canon, paths, scan->n_paths, out);
    }
    audit_case_insensitive(canon, paths, scan->n_paths,
                           text != NULL ? case_probe_mounts : audit_case_probe, &t, out);
    mounts_clear(&t);
    for (size_t i = 0; own && i < scan->n_paths; i++) {
      free((char *)paths[i]);
    }
    free(paths);
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
    free(f->items[i].pattern);
  }
  free(f->items);
  f->items = NULL;
  f->n = f->cap = 0;
}
