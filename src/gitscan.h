/* SPDX-License-Identifier: Apache-2.0 */
/* Git, where the kernel's restriction does not reach: what an agent can
 * leave in a project for git to run later, outside any sandbox (nested
 * repositories, included configuration, settings that run commands,
 * sequencer state), and what commits change (`ralon check --range`).
 *
 * Everything here asks the `git` program, with its plumbing and -z
 * output only: every CI runner has it, and it reads the configuration,
 * includes and index exactly as the user's next git command will. Each
 * run neutralises what could run a command from the repository being
 * looked at (core.fsmonitor, core.hooksPath, the pager, the editor,
 * external diff, credential helpers, fetching), so that looking never
 * runs what it looks for. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "matcher.h"
#include "util.h"

enum {
  /* Keep the caller's GIT_* environment (GIT_DIR, GIT_OBJECT_DIRECTORY,
   * the quarantine of a pre-receive hook): the repository is the one the
   * caller means. Without it, every GIT_* variable is dropped and git
   * finds the repository from the directory. */
  GIT_RUN_KEEP_ENV = 1 << 0,
};

/* Runs `git ARGS...` in `dir` (NULL: here), neutralised as above, with
 * standard input from /dev/null and standard error discarded. Standard
 * output goes to *ret_out (NUL-terminated, its length in *ret_len; both may
 * be NULL to discard it). Returns git's exit status (0 to 255), or -1 with
 * `err` when git cannot be run at all (not installed: "git is not
 * installed"). */
int git_run(const char *dir, unsigned flags, const char *const *args, char **ret_out,
            size_t *ret_len, Error *err);

/* What an agent can leave in the project at `root` (the policy's root;
 * `canon_root` its canonical name, or NULL) for git to run later: nested
 * repositories (.git directories and files, directories that look like
 * bare repositories, gitlinks in the index), configuration files git reads
 * that the policy does not protect (include.path, includeIf), each setting
 * in them that runs a command, and exec lines in sequencer state. The
 * user's own configuration (~/.gitconfig) is not looked at. Never fails:
 * without git, or outside a repository, less is reported. */
void gitscan_audit(const char *root, const char *canon_root, const Matcher *m,
                   AuditFindings *out);

/* Whether `key` (as `git config --list` prints it: section and variable
 * lower-case, subsection as written) with `value` makes git run a command:
 * core.fsmonitor (not a boolean), core.hooksPath, core.sshCommand,
 * core.editor, core.pager, sequence.editor, diff.external,
 * diff.*.textconv, filter.*.clean/smudge/process, merge.*.driver,
 * credential.helper, alias.* starting with `!`, and the others listed in
 * ralon(1). Pure. */
bool gitscan_key_runs(const char *key, const char *value);

/* Each setting in the text of a git configuration file, as git's own
 * parser reads it (config.c): `key` as `git config --list` prints it
 * (section and variable lower-case, a quoted subsection as written),
 * `value` with quotes, escapes and comments undone, NULL for a key without
 * `=`. Includes are not followed. Returns false when git would refuse the
 * file, and with it every command, and at a NUL byte in a value or a
 * subsection (git would cut it short there); the settings before have
 * been handed to `each` by then. Pure. */
typedef void (*GitConfigEach)(void *userdata, const char *key, const char *value);
bool gitscan_config_parse(const char *text, size_t len, GitConfigEach each, void *userdata);

/* The exec lines of the text of a sequencer todo list (git-rebase-todo,
 * done, sequencer/todo): each command, in order, in a new array of `*n`
 * strings (NULL when there is none). Pure. */
char **gitscan_exec_lines(const char *text, size_t *n);

/* ---- after the session ------------------------------------------------ */

/* What gitscan_audit() found when a session started, to be compared with
 * what it finds when the agent has exited. */
typedef struct GitWatch GitWatch;

/* Starts the process that will compare: `before` holds what the audit
 * found as the session starts (its git findings are the snapshot; the
 * rest is ignored), read by that process after it has started, so it
 * need not live on. The process waits until every copy of a descriptor
 * this process keeps (close-on-exec) is closed, that is, until this
 * process calls git_watch_end() or exits and nothing it started (the
 * sandbox's processes included) holds it any longer; then it looks again,
 * outside any namespace the session made, and reports each item added
 * (one warning on standard error unless `quiet`, one journal record
 * each). NULL when the process cannot be started (nothing is then
 * compared). */
GitWatch *git_watch_start(const char *root, const char *canon_root, const Matcher *m,
                          const char *policy_file, bool quiet, const AuditFindings *before);
/* Lets the comparison run and waits for it. NULL does nothing. */
void git_watch_end(GitWatch *w);

/* ---- what commits change ------------------------------------------------ */

typedef struct {
  char *path;    /* from the top of the repository */
  char *commit;  /* the commit that changed it (full hex), or NULL for staged changes */
  const char *change; /* "added", "modified", "deleted", "renamed-from",
                       * "renamed-to", "mode", "type", "merge", "net" */
  char *pattern; /* the pattern that protects it, relative to its policy's directory */
  char *policy;  /* that policy: "REV:PATH", or the file on disk */
  char *policy_path; /* its path in the repository: "agent.lock", "app/agent.lock" */
} GitChange;

typedef struct {
  /* The agent.lock nearest to the working directory's place in the
   * repository at the base ("REV:PATH", or the file on disk), or NULL. */
  char *policy_file;
  char **policies;   /* every agent.lock of the base that was read */
  size_t n_policies;
  char *base;        /* the commit the policies were read at (full hex), or
                      * NULL (staged, before the first commit: on disk) */
  char *base_name;   /* how it was named: "A", "HEAD" */
  GitChange *v;
  size_t n, cap;
  size_t n_commits;
  size_t n_judged;   /* changed paths judged (a path once per change) */
  size_t n_governed; /* of them, those with an agent.lock at or above them */
  bool touches_policy; /* a changed path is named agent.lock */
} GitChanges;

/* `range`: "A..B", or "A" for A..HEAD. Every path changed by a commit in
 * A..B (for a merge: what differs from every parent), and every one that
 * differs between A and B, that an agent.lock of A's tree at or above it
 * protects (each relative to its own directory; the nearest that protects
 * it is named), in commit order (oldest first). The agent.locks of B, or
 * of any commit in the range, count for nothing. Returns 0 (a path no
 * agent.lock of A governs is not protected: see n_governed), or -1 with
 * `err`: no repository, an unknown revision, an agent.lock on the way of a
 * changed path that is not a regular file or does not parse. */
int git_range_changes(const char *dir, const char *range, GitChanges *ret, Error *err);

/* The same for the changes staged in the index against HEAD, with the
 * agent.locks of HEAD (or, before the first commit, those on disk). */
int git_staged_changes(const char *dir, GitChanges *ret, Error *err);

void git_changes_clear(GitChanges *c);
