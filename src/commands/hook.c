/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon hook check | install | uninstall | list`. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "commands.h"
#include "commands/common.h"
#include "enforce/enforce.h"
#if defined(__linux__)
#include "enforce/linux/apparmor.h"
#include "enforce/linux/guard.h"
#endif
#include "enforce/unguarded.h"
#include "hook/decision.h"
#include "hook/hook.h"
#include "hook/install.h"
#include "json.h"
#include "log.h"
#include "matcher.h"
#include "output.h"
#include "path.h"
#include "policy.h"
#include "scan.h"

/* ---- hook ------------------------------------------------------------- */

/* The payload from standard input, as read_fd_limited reads it, but from a
 * pipe in at most two buffers: a small one, which every ordinary call fits
 * in, then one of the whole limit. Doubling would fault in and copy about
 * twice the payload's pages, and a page fault costs as much as thousands
 * of instructions; pages of the large buffer that are not read into are
 * never touched. */
static int read_payload(char **ret, size_t *ret_len) {
  struct stat st;
  if (fstat(STDIN_FILENO, &st) < 0 || S_ISREG(st.st_mode)) {
    return read_fd_limited(STDIN_FILENO, HOOK_MAX_PAYLOAD, ret, ret_len);
  }
  return read_fd_limited_stream(STDIN_FILENO, 64 * 1024, HOOK_MAX_PAYLOAD, ret, ret_len);
}

static int hook_check_command(const Options *o, Error *err) {
  Agent agent = _AGENT_INVALID;
  if (o->n_agents > 1) {
    return error_set(err, EINVAL, _("`ralon hook check` takes one --agent"));
  }
  if (o->n_agents == 1) {
    agent = agent_from_string(o->agents[0]);
    if (agent < 0) {
      return error_set(err, EINVAL, _("unknown agent `%s`"), o->agents[0]);
    }
  }
  /* A large payload is held three times over (as read, in json-c's
   * buffer, as the string parsed) and copied once more as a command: from
   * the heap rather than each in pages of its own, what one frees the next
   * takes, already touched. Faulting fresh pages in costs more than
   * reading them. */
  mallopt(M_MMAP_THRESHOLD, (int)(2 * HOOK_MAX_PAYLOAD));
  mallopt(M_TRIM_THRESHOLD, (int)(8 * HOOK_MAX_PAYLOAD));
  _cleanup_free_ char *payload = NULL;
  size_t len = 0;
  int r = read_payload(&payload, &len);
  if (r == -EFBIG) {
    /* Too big: a length hook_check refuses unread, and the rest of a
     * pipe read and thrown away, so that the agent's write into it does
     * not fail. */
    len = HOOK_MAX_PAYLOAD + 1;
    (void)drain_fd(STDIN_FILENO, HOOK_MAX_DRAIN, HOOK_DRAIN_IDLE_MS, HOOK_DRAIN_TOTAL_MS);
  } else if (r < 0) {
    len = 0; /* unreadable: refused as empty */
  }
  HookAnswer a;
  hook_check(payload ? payload : "", len, agent, o->dir, &a);
  if (a.out != NULL) {
    fputs(a.out, stdout);
  }
  if (a.err != NULL) {
    (void)output_flush_stdout();
    fputs(a.err, stderr);
  }
  int code = a.exit_code;
  hook_answer_clear(&a);
  return code;
}

/* Hooks go into the project the policy governs; without a policy (or
 * before `init` wrote one), into -C DIR or the working directory. A
 * broken agent.lock still names its project. */
static char *hook_root(const Options *o, Error *err) {
  _cleanup_free_ char *file = NULL;
  Error e = {0};
  int r = policy_find(o->dir, &file, &e);
  if (r < 0 && r != -ENOENT) {
    /* Reached through a link along which another policy applies, an
     * agent.lock that is no regular file, one that cannot be looked at:
     * which project this is must not be guessed. */
    error_set(err, e.errnum, "%s", e.message);
    error_clear(&e);
    return NULL;
  }
  error_clear(&e);
  if (r == 0) {
    return path_dirname(file);
  }
  char *dir = path_absolute(NULL, o->dir ? o->dir : ".");
  if (dir == NULL) {
    error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  return dir;
}

/* Where --agent auto looks for agents: the project, and home, except
 * that root's home does not choose hooks for a project (a project root
 * works in is usually someone else's, and root's home holds whatever was
 * ever run as root). At user level, home is where the hooks go. */
static const char *detect_home(const Options *o, const char *home) {
  return o->user || geteuid() != 0 ? home : NULL;
}

/* --agent: none or `auto`, the agents found in the project or in home
 * (uninstall: every agent, so that it finds ralon's hooks wherever they
 * are); `all`; or names. Installing with none found is an error that says
 * what to pass: hooks for ten agents nobody uses are not what was meant. */
static int hook_selection(const Options *o, const char *root, const char *home, bool remove,
                          bool ret[_AGENT_MAX], Error *err) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    ret[a] = false;
  }
  bool want_auto = o->n_agents == 0;
  for (size_t i = 0; i < o->n_agents; i++) {
    const char *name = o->agents[i];
    if (streq(name, "auto")) {
      want_auto = true;
      continue;
    }
    Agent a = agent_from_string(name);
    if (!streq(name, "all") && a < 0) {
      return error_set(err, EINVAL, _("unknown agent `%s`"), name);
    }
    for (int b = 0; b < _AGENT_MAX; b++) {
      ret[b] |= streq(name, "all") || b == (int)a;
    }
  }
  if (!want_auto) {
    return 0;
  }
  bool found[_AGENT_MAX];
  if (remove) {
    /* Every agent that has a file at this level (Antigravity has none
     * at user level). */
    for (int a = 0; a < _AGENT_MAX; a++) {
      _cleanup_free_ char *p = hook_config_path((Agent)a, root, home, o->user);
      ret[a] |= p != NULL;
    }
    return 0;
  }
  const char *where = detect_home(o, home);
  if (!hook_detect(o->user ? NULL : root, where, found)) {
    bool any = false;
    for (int a = 0; a < _AGENT_MAX; a++) {
      any |= ret[a];
    }
    if (any) {
      return 0; /* `auto` beside names that were given */
    }
    _cleanup_free_ char *names = agent_names(", ");
    _cleanup_free_ char *shown_root = shown(root, true);
    if (o->user) {
      return error_set(err, ENOENT,
                       _("no coding agent's directory found in your home directory, so no hook "
                         "was written; name the agent: `ralon hook install --user --agent NAME` "
                         "(NAME: %s, or all)"),
                       names);
    }
    if (where == NULL && home != NULL) {
      return error_set(err, ENOENT,
                       _("no coding agent's directory found in %s (as root, agents found only "
                         "in your home directory do not count), so no hook was written; name "
                         "the agent: `ralon hook install --agent NAME` (NAME: %s, or all)"),
                       shown_root, names);
    }
    return error_set(err, ENOENT,
                     _("no coding agent's directory found in %s or your home directory, so no "
                       "hook was written; name the agent: `ralon hook install --agent NAME` "
                       "(NAME: %s, or all)"),
                     shown_root, names);
  }
  for (int a = 0; a < _AGENT_MAX; a++) {
    _cleanup_free_ char *p = found[a] ? hook_config_path((Agent)a, root, home, o->user) : NULL;
    ret[a] |= p != NULL;
  }
  return 0;
}

static const char *hook_change_verb(HookChangeKind k, bool dry_run) {
  switch (k) {
  case HOOK_CHANGE_WROTE:
    return dry_run ? _("would write") : _("wrote");
  case HOOK_CHANGE_UPDATED:
    return dry_run ? _("would update") : _("updated");
  case HOOK_CHANGE_UNCHANGED:
    return _("unchanged");
  case HOOK_CHANGE_REMOVED:
    return dry_run ? _("would remove") : _("removed");
  case HOOK_CHANGE_ABSENT:
    return _("not installed");
  case _HOOK_CHANGE_MAX:
  case _HOOK_CHANGE_INVALID:
    break;
  }
  return "";
}

int hook_install_command(const Options *o, bool remove, Error *err) {
  _cleanup_free_ char *root = hook_root(o, err);
  if (root == NULL) {
    return -1;
  }
  const char *home = getenv("HOME");
  bool selected[_AGENT_MAX];
  if (hook_selection(o, root, home, remove, selected, err) < 0) {
    return -1;
  }
  json_object *list = o->json ? json_object_new_array() : NULL;
  bool failed = false, changed = false;
  for (int i = 0; i < _AGENT_MAX; i++) {
    Agent a = (Agent)i;
    if (!selected[a]) {
      continue;
    }
    HookChange c;
    _cleanup_error_ Error e = {0};
    if (hook_install(a, root, home, o->user, remove, o->dry_run, &c, &e) < 0) {
      /* One unreadable file does not stop the other agents. */
      print_error("%s", e.message);
      failed = true;
      continue;
    }
    bool change = c.kind != HOOK_CHANGE_UNCHANGED && c.kind != HOOK_CHANGE_ABSENT;
    changed |= change && !remove;
    if (list != NULL) {
      json_object *j = json_object_new_object();
      json_add_string(j, "agent", agent_to_string(a));
      json_add_string(j, "name", agent_display_name(a));
      json_add_string(j, "path", c.path);
      json_add_string(j, "change", hook_change_kind_to_string(c.kind));
      if (o->dry_run) {
        /* What would be written (null: the file would be deleted); a real
         * run has written it, and says only what it did. */
        json_add_string(j, "content", c.content);
      }
      json_object_array_add(list, j);
    } else if (o->dry_run && change && !remove) {
      _cleanup_free_ char *path = shown(c.path, false);
      /* The project's own settings, changed: they may hold anything. */
      _cleanup_free_ char *content = text_display_terminal(c.content, output_utf8(), true);
      printf("%s %s\n%s", hook_change_verb(c.kind, true), path, content);
    } else if (!remove || c.kind != HOOK_CHANGE_ABSENT) {
      _cleanup_free_ char *path = shown(c.path, false);
      printf("%s %s\n", hook_change_verb(c.kind, o->dry_run), path);
    }
    /* Whether the agent will run it here, and what to do otherwise. */
    _cleanup_free_ char *note = NULL;
    HookRuns runs = remove ? HOOK_RUNS_YES : hook_runs_here(a, root, home, o->user, &note);
    if (list != NULL && !remove) {
      json_object *j = json_object_array_get_idx(list, json_object_array_length(list) - 1);
      json_add_string(j, "runs", hook_runs_to_string(runs));
      json_add_text(j, "note", note);
    } else if (note != NULL && list == NULL) {
      /* It names the project, whose name may hold anything. */
      _cleanup_free_ char *text = text_display_terminal(note, output_utf8(), false);
      print_note("%s", text);
    }
    hook_change_clear(&c);
  }
  if (list != NULL) {
    json_object *doc = json_object_new_object();
    json_add_string(doc, "root", root);
    json_object_object_add(doc, "hooks", list);
    json_print(doc);
  }
  /* A dry run warns as the real run would. */
  if (changed && !hook_ralon_on_path(getenv("PATH"), NULL)) {
    print_warning(_("`ralon` is not on PATH, so the agents cannot run the hooks: they will refuse "
                    "the tool calls the hooks check"));
  }
  return failed ? EXIT_ERROR : EXIT_OK;
}

static int hook_list_command(const Options *o, Error *err) {
  _cleanup_free_ char *root = hook_root(o, err);
  if (root == NULL) {
    return -1;
  }
  HookState *states = NULL;
  size_t n = hook_states(root, getenv("HOME"), &states);
  if (o->json) {
    json_object *doc = json_object_new_object();
    json_add_string(doc, "root", root);
    json_object_object_add(doc, "hooks", json_hook_states(states, n));
    char *found = NULL;
    bool on_path = hook_ralon_on_path(getenv("PATH"), &found);
    json_add_string(doc, "ralon", on_path ? found : NULL);
    free(found);
    json_print(doc);
  } else {
    for (size_t i = 0; i < n; i++) {
      /* Unindented, as `hook list` has always printed them. */
      const HookState *h = &states[i];
      const char *scope = h->user ? _("user") : _("project");
      if (h->error != NULL) {
        _cleanup_free_ char *error = text_display_terminal(h->error, output_utf8(), false);
        printf("%-12s %-8s %s  (%s)\n", agent_to_string(h->agent), scope, _("error"), error);
      } else {
        _cleanup_free_ char *path = shown(h->path, false);
        printf("%-12s %-8s %-14s %s\n", agent_to_string(h->agent), scope,
               hook_state_text(h->state), path);
        print_hook_note(h, "  ");
      }
    }
    if (!hook_ralon_on_path(getenv("PATH"), NULL)) {
      print_warning(_("`ralon` is not on PATH, so installed hooks cannot run it"));
    }
  }
  hook_states_free(states, n);
  return EXIT_OK;
}

int command_hook(const Options *o, Error *err) {
  if (streq(o->hook_action, "check")) {
    return hook_check_command(o, err);
  }
  if (streq(o->hook_action, "install") || streq(o->hook_action, "uninstall")) {
    return hook_install_command(o, streq(o->hook_action, "uninstall"), err);
  }
  return hook_list_command(o, err);
}
