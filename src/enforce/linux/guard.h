/* SPDX-License-Identifier: Apache-2.0 */
/* The mount backend's guard (ARCHITECTURE.md §4): a read-only bind mount belongs
 * to a dentry, and the kernel detaches it in every namespace when a
 * process outside the sandbox replaces the protected path (`git checkout`,
 * `sed -i`, an editor's save by rename). So `ralon run` stays, as
 * bubblewrap's monitor does: the command runs in a new PID namespace (all
 * of it ends with the command), changes announced with `ralon pause` are
 * made while the sandbox is frozen and re-protected before it thaws, and
 * any other change to a protected path or a pinned directory stops the
 * sandbox. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "enforce/plan.h"
#include "util.h"

/* What `ralon run` exits with when its guard stopped the sandbox: a status
 * the command itself is unlikely to choose, documented in ralon(1). */
#define GUARD_EXIT_STOPPED 125

typedef void (*GuardReady)(void *userdata);

typedef struct {
  const Plan *plan;   /* the mount backend's */
  const char *root;   /* the project root, canonical: names the guard's socket */
  char *const *argv;  /* the command */
  bool seal;          /* --seal: no nested namespaces, a Landlock layer */
  int landlock_abi;
  /* Called in the command's process once the restriction holds, just
   * before execve (see EnforceReady). That process shares the guard's
   * memory until it executes the command (guard_run()): `ready` may print
   * and set the command's environment, but must open nothing that would
   * outlive the execve in the guard's memory (a journal connection, say:
   * that is `started`'s). */
  GuardReady ready;
  /* Called in the guard once the command has been executed. */
  GuardReady started;
  void *userdata;
} GuardConfig;

typedef struct {
  /* The command's wait status (waitpid(2)), to be reproduced by
   * guard_exit_status(). */
  int wstatus;
  /* The guard stopped the sandbox: these paths changed outside without
   * `ralon pause`. */
  bool stopped;
  char **changed;
  size_t n_changed;
  /* Why, when the guard itself failed and stopped the sandbox for it. */
  char *failure;
  /* That failure was the limit of inotify watches
   * (fs.inotify.max_user_watches), reached once the command ran. */
  bool watch_limit;
} GuardResult;

/* Sets up the sandbox, starts argv in it and guards it until it ends.
 * Returns 0 with *ret filled once the command has ended (or was stopped),
 * or -1 with `err` when it could not be started (nothing ran). */
int guard_run(const GuardConfig *c, GuardResult *ret, Error *err);
void guard_result_clear(GuardResult *r);

/* Whether this process made the sandbox's PID namespace: its children
 * are born there from then on, and once the sandbox has ended no fork can
 * succeed (what a leak checker at exit needs: main() skips it then). */
bool guard_forks_into_sandbox(void);

/* The exit status that reproduces a wait status: the command's exit code,
 * or, for a command killed by a signal, the same signal raised on this
 * process (its disposition reset first); 128 + N if that returns. */
int guard_exit_status(int wstatus);

/* ---- ralon pause / resume: the client side ---------------------------- */

typedef struct {
  pid_t pid;          /* the guard's */
  int fd;             /* the connection, -1 when closed */
  bool paused;
  /* After resume: */
  size_t n_reprotected;
  size_t n_killed;    /* processes in namespaces of their own, stopped */
  char **missing;     /* protected paths that no longer exist */
  size_t n_missing;
  char *error;        /* what the guard answered instead, if anything */
} GuardPeer;

typedef struct {
  GuardPeer *v;
  size_t n;
} GuardPeers;

/* Connects to every guard of `root` (canonical) this user runs, found by
 * their abstract sockets; only guards of this user in this PID namespace
 * are trusted (a process inside a sandbox can bind a name too). */
int guard_connect_all(const char *root, GuardPeers *ret, Error *err);

/* Asks each connected guard to freeze its sandbox. `seconds`: thaw on its
 * own after that long (0: only on resume); `hold`: resume when this
 * connection closes. Failures are in each peer's `error`. */
void guard_pause_all(GuardPeers *p, unsigned seconds, bool hold);

/* Asks each guard to re-protect what now stands at each protected path
 * and thaw its sandbox. */
void guard_resume_all(GuardPeers *p);

void guard_peers_clear(GuardPeers *p);

/* The abstract socket name prefix of the guards of `root` for `uid`. */
char *guard_socket_prefix(uid_t uid, const char *root);
