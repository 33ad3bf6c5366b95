/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon pause` and `ralon resume`: announced changes to protected files.
 * The guards of the mount backend's sandboxes answer on abstract sockets
 * (src/enforce/linux/guard.c); this side finds them, asks, and prints. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "commands/common.h"
#include "enforce/linux/guard.h"
#include "log.h"
#include "output.h"
#include "path.h"
#include "policy.h"

static void log_pause(const char *action, const char *root, const GuardPeers *peers) {
  if (!log_enabled()) {
    return;
  }
  size_t n = 0, reprotected = 0;
  for (size_t i = 0; i < peers->n; i++) {
    n += peers->v[i].error == NULL;
    reprotected += peers->v[i].n_reprotected;
  }
  LogFields lf = {0};
  log_field(&lf, "RALON_ACTION", "%s", action);
  log_field(&lf, "RALON_ROOT", "%s", root);
  log_field(&lf, "RALON_SANDBOXES", "%zu", n);
  if (streq(action, "resume")) {
    log_field(&lf, "RALON_REPROTECTED", "%zu", reprotected);
  }
  log_send(LOG_PAUSE, &lf, "%s %zu sandbox(es) of %s",
           streq(action, "pause") ? "Paused" : "Resumed", n, root);
}

/* Prints each guard's failure; returns how many failed. */
static size_t report_errors(const GuardPeers *peers, bool resuming) {
  size_t failed = 0;
  for (size_t i = 0; i < peers->n; i++) {
    const GuardPeer *p = &peers->v[i];
    if (p->error == NULL) {
      continue;
    }
    failed++;
    if (p->pid == 0) {
      /* A socket that never answered: its error says all. */
      print_error("%s", p->error);
    } else if (resuming) {
      print_error(_("the sandbox of ralon run (process %d) could not be re-protected and was "
                    "stopped: %s"),
                  (int)p->pid, p->error);
    } else {
      print_error(_("the sandbox of ralon run (process %d) could not be paused: %s"),
                  (int)p->pid, p->error);
    }
  }
  return failed;
}

static void report_resume(const char *root, const GuardPeers *peers) {
  size_t thawed = 0, reprotected = 0, killed = 0;
  for (size_t i = 0; i < peers->n; i++) {
    const GuardPeer *p = &peers->v[i];
    if (p->error != NULL) {
      continue;
    }
    thawed++;
    reprotected += p->n_reprotected;
    killed += p->n_killed;
    for (size_t k = 0; k < p->n_missing; k++) {
      print_warning(_("%s does not exist now: make it again under `ralon pause` (the resume "
                      "then protects it); made otherwise, inside the sandbox or out, it stops "
                      "the sandbox"),
                    p->missing[k]);
    }
  }
  _cleanup_free_ char *shown = text_display(root);
  /* TRANSLATORS: scripts written for the Rust ralon read this line: keep
   * it as it is. */
  printf(_("enforcing %s\n"), shown);
  printf(_("%zu sandbox(es) thawed; %zu path(s) changed and protected again\n"), thawed,
         reprotected);
  if (killed > 0) {
    printf(_("%zu process(es) stopped: each in a mount namespace of its own or holding a way "
             "around the new read-only mounts\n"),
           killed);
  }
}

/* The canonical project root, as the guards name their sockets. */
static int project_root(const Options *o, char **ret, Error *err) {
  Policy *pol = NULL;
  int r = policy_discover_flags(o->dir, 0, &pol, err);
  if (r < 0) {
    return -1;
  }
  *ret = policy_canonical_root(pol);
  policy_free(pol);
  if (*ret == NULL) {
    return error_set(err, errno, _("cannot resolve the project root: %m"));
  }
  return 0;
}

/* Runs argv outside any sandbox, as system(3) would: this process ignores
 * the terminal's SIGINT and SIGQUIT meanwhile, so that it lives to resume. */
static int run_command(char *const argv[], const char *dir, Error *err) {
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    return error_set(err, errno, _("failed to run `%s`: %m"), argv[0]);
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    Error cd = {0};
    if (enter_dir(dir, &cd) < 0) {
      print_error("%s", cd.message);
      _exit(EXIT_ERROR);
    }
    execvp(argv[0], argv);
    int e = errno;
    print_error(_("failed to run `%s`: %s"), argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : EXIT_ERROR;
}

int command_pause(const Options *o, Error *err) {
  _cleanup_free_ char *root = NULL;
  if (project_root(o, &root, err) < 0) {
    return -1;
  }
  _cleanup_free_ char *shown = text_display(root);
  GuardPeers peers;
  if (guard_connect_all(root, &peers, err) < 0) {
    return -1;
  }
  bool with_command = o->n_paths > 0;
  if (peers.n == 0) {
    printf(_("no sandbox of the mount backend is running for %s; nothing to pause\n"), shown);
    guard_peers_clear(&peers);
    return with_command ? run_command(o->paths, o->dir, err) : EXIT_OK;
  }
  /* With a command, the guards resume on their own if this process goes
   * before it could ask them to. */
  guard_pause_all(&peers, with_command ? 0 : o->minutes * 60u, with_command);
  size_t failed = report_errors(&peers, false);
  log_pause("pause", root, &peers);
  if (failed == peers.n) {
    guard_peers_clear(&peers);
    return error_set(err, EBUSY, _("nothing was paused for %s; protected files must not be "
                                   "changed now"),
                     shown);
  }
  if (!with_command) {
    /* TRANSLATORS: scripts written for the Rust ralon read this line: keep
     * it as it is. */
    printf(_("paused %s\n"), shown);
    printf(_("%zu sandbox(es) frozen: change the protected files now, then run `ralon "
             "resume`\n"),
           peers.n - failed);
    if (o->minutes > 0) {
      printf(_("they resume on their own in %u minute(s)\n"), o->minutes);
    } else {
      printf(_("they stay frozen until `ralon resume`\n"));
    }
    guard_peers_clear(&peers);
    return failed > 0 ? EXIT_ERROR : EXIT_OK;
  }
  if (failed > 0) {
    guard_resume_all(&peers);
    guard_peers_clear(&peers);
    return error_set(err, EBUSY, _("not every sandbox of %s could be paused, so `%s` was not "
                                   "run"),
                     shown, o->paths[0]);
  }
  int status = run_command(o->paths, o->dir, err);
  guard_resume_all(&peers);
  failed = report_errors(&peers, true);
  log_pause("resume", root, &peers);
  report_resume(root, &peers);
  guard_peers_clear(&peers);
  if (status < 0) {
    return -1;
  }
  return status != 0 ? status : failed > 0 ? EXIT_ERROR : EXIT_OK;
}

int command_resume(const Options *o, Error *err) {
  _cleanup_free_ char *root = NULL;
  if (project_root(o, &root, err) < 0) {
    return -1;
  }
  GuardPeers peers;
  if (guard_connect_all(root, &peers, err) < 0) {
    return -1;
  }
  if (peers.n == 0) {
    _cleanup_free_ char *shown = text_display(root);
    printf(_("no sandbox of the mount backend is running for %s; nothing to resume\n"), shown);
    guard_peers_clear(&peers);
    return EXIT_OK;
  }
  guard_resume_all(&peers);
  size_t failed = report_errors(&peers, true);
  log_pause("resume", root, &peers);
  report_resume(root, &peers);
  guard_peers_clear(&peers);
  return failed > 0 ? EXIT_ERROR : EXIT_OK;
}
