/* SPDX-License-Identifier: Apache-2.0 */
/* What the commands share (commands/common.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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


void project_clear(Project *p) {
  audit_findings_clear(&p->findings);
  scan_result_free(p->scan);
  matcher_free(p->matcher);
  policy_free(p->policy);
}

/* What the policy protects on disk now, and (with `audit`) how that is
 * weaker than it looks. */
int project_scan(Project *p, unsigned flags, bool audit, Error *err) {
  if (scan_project_with(p->policy, p->matcher, flags, &p->scan, err) < 0) {
    return -1;
  }
  if (audit) {
    audit_run(p->policy, p->matcher, p->scan, &p->findings);
  }
  return 0;
}

int enter_dir(const char *dir, Error *err) {
  if (dir == NULL) {
    return 0;
  }
  if (chdir(dir) < 0) {
    return error_set(err, errno, _("cannot change to the directory %s: %m"), dir);
  }
  /* PWD must name the working directory, or shells and programs that
   * trust it would start from the caller's. */
  _cleanup_free_ char *here = getcwd(NULL, 0);
  if (here != NULL && setenv("PWD", here, 1) < 0) {
    oom();
  }
  return 0;
}

int project_open(const Options *o, unsigned what, Project *p, Error *err) {
  memset(p, 0, sizeof(*p));
  int found = policy_discover_flags(
      o->dir,
      ((what & PROJECT_POSITIONS) ? POLICY_POSITIONS : 0) |
          ((what & PROJECT_DUPLICATES) ? POLICY_DUPLICATES : 0),
      &p->policy, err);
  if (found < 0) {
    return found;
  }
  const Policy *pol = p->policy;
  if (policy_matcher(pol, 0, &p->matcher, err) < 0) {
    return -1;
  }
  return (what & PROJECT_SCAN) ? project_scan(p, 0, true, err) : 0;
}

/* ---- JSON ------------------------------------------------------------- */

void json_print(json_object *o) {
  /* Larger than stdout's buffer, it is written here, not at exit. */
  if (puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                 JSON_C_TO_STRING_NOSLASHESCAPE)) == EOF) {
    output_stdout_failed(errno);
  }
  json_object_put(o);
}

/* A string, or, when it is not UTF-8 (a file name may be any bytes), an
 * array of its bytes: JSON holds only Unicode text, and a name must come
 * out as the name it is (journalctl's JSON does the same). */
json_object *json_name(const char *s) {
  size_t len = strlen(s);
  if (utf8_invalid_offset(s, len) == len) {
    return json_object_new_string(s);
  }
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < len; i++) {
    json_object_array_add(a, json_object_new_int((unsigned char)s[i]));
  }
  return a;
}

void json_add_string(json_object *o, const char *key, const char *value) {
  json_object_object_add(o, key, value ? json_name(value) : NULL);
}

/* A message (an error, a reason, a hint): always a string, the bytes that
 * are not UTF-8 in the names it quotes escaped as on a terminal. */
void json_add_text(json_object *o, const char *key, const char *value) {
  if (value == NULL) {
    json_object_object_add(o, key, NULL);
    return;
  }
  _cleanup_free_ char *text = text_display(value);
  json_object_object_add(o, key, json_object_new_string(text));
}

json_object *json_protected_path(const Policy *pol, const ProtectedPath *p) {
  json_object *o = json_object_new_object();
  json_add_string(o, "path", p->relative);
  json_add_string(o, "absolute", p->absolute);
  json_add_string(o, "kind", scan_kind_name(p->mode));
  json_add_string(o, "pattern", pol->patterns[p->pattern].pattern);
  json_object_object_add(o, "device", json_object_new_uint64((uint64_t)p->dev));
  json_object_object_add(o, "inode", json_object_new_uint64((uint64_t)p->ino));
  json_object_object_add(o, "links", json_object_new_uint64((uint64_t)p->nlink));
  return o;
}

json_object *json_findings(const AuditFindings *f) {
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < f->n; i++) {
    json_object *o = json_object_new_object();
    json_add_string(o, "kind", audit_kind_to_string(f->items[i].kind));
    json_add_string(o, "subject", f->items[i].subject);
    json_add_string(o, "pattern", f->items[i].pattern);
    _cleanup_free_ char *msg = xasprintf("%s %s", f->items[i].subject, f->items[i].detail);
    json_add_text(o, "message", msg);
    json_object_array_add(a, o);
  }
  return a;
}

/* For every pattern, how many of the protected paths it matches, and
 * (unless `inside` is NULL) whether it could match something inside a
 * protected directory, which the scan does not walk: what `status` says
 * of a pattern that matches none of them (scan_pattern_matches()). The
 * caller frees both arrays. */
void pattern_matches(const Project *p, uint32_t **counts, bool **inside) {
  *counts = xcalloc(p->policy->n_patterns + 1, sizeof(uint32_t));
  if (inside != NULL) {
    *inside = xcalloc(p->policy->n_patterns + 1, sizeof(bool));
  }
  scan_pattern_matches(p->scan, p->matcher, *counts, inside != NULL ? *inside : NULL);
}

json_object *json_project(const Project *p) {
  json_object *o = json_object_new_object();
  json_add_string(o, "policy", p->policy->file);
  json_add_string(o, "root", p->policy->root);
  return o;
}

/* ---- human output ----------------------------------------------------- */

/* Each finding goes to the journal as it is reported, on stderr or in
 * --json. */
void log_findings(const Project *p, const char *command) {
  if (!log_enabled()) {
    return;
  }
  for (size_t i = 0; i < p->findings.n; i++) {
    const AuditFinding *f = &p->findings.items[i];
    LogFields lf = {0};
    log_field(&lf, "RALON_FINDING", "%s", audit_kind_to_string(f->kind));
    /* The pattern itself, or the path as printed; the other subjects are
     * phrases ("running as root:"). */
    if (f->pattern != NULL) {
      log_field(&lf, "RALON_PATTERN", "%s", f->pattern);
    } else if (f->kind != AUDIT_ROOT && f->kind != AUDIT_LANDLOCK_METADATA &&
               f->kind != AUDIT_LANDLOCK_TRUNCATE) {
      log_field(&lf, "RALON_PATH", "%s", f->subject);
    }
    log_field(&lf, "RALON_ROOT", "%s", p->policy->root);
    log_field(&lf, "RALON_POLICY", "%s", p->policy->file);
    log_field(&lf, "RALON_COMMAND", "%s", command);
    log_field(&lf, "RALON_WEAKENS", "%d", audit_weakens(f->kind));
    log_send(LOG_FINDING, &lf, "%s: %s %s", p->policy->root, f->subject, f->detail);
  }
}

void print_warnings(const Project *p, const char *command) {
  for (size_t i = 0; i < p->findings.n; i++) {
    /* The subject is a name or a pattern: on one line, whatever it holds
     * (the line's own escaping keeps a message's newlines). */
    _cleanup_free_ char *subject = text_display(p->findings.items[i].subject);
    print_warning("%s %s", subject, p->findings.items[i].detail);
  }
  log_findings(p, command);
}

/* `name` (with a `/` after it for a directory) as stdout shows it: names
 * are the project's, and may hold newlines and escape sequences. */
char *shown(const char *name, bool dir) {
  _cleanup_free_ char *s = dir ? xasprintf("%s/", name) : NULL;
  return path_display(s != NULL ? s : name);
}

/* Why the mount backend refuses this project, though the machine offers
 * it, or NULL. agent.lock as a symbolic link: the backend makes read-only
 * what it leads to, and cannot keep the link from being replaced (it sits
 * in the project root, which stays writable): an agent could put a policy
 * of its own there for the next session. Landlock keeps the root from
 * losing or gaining entries, the link included. */
char *mount_refusal(const Policy *pol) {
  struct stat st;
  if (lstat(pol->file, &st) < 0 || !S_ISLNK(st.st_mode)) {
    return NULL;
  }
  _cleanup_free_ char *file = shown(pol->file, false);
  return xasprintf(_("%s is a symbolic link, which the mount backend cannot keep from being "
                     "replaced: an agent could put a policy of its own there for the next session "
                     "(make it a regular file, or use --backend landlock)"),
                   file);
}

/* The patterns whose new matches `plan` does not stop (indices into the
 * policy, in its order; plan_new_names_stopped()): names that do not exist
 * when the command starts. */
size_t new_names_open(const Plan *plan, const Project *p, size_t **ret) {
  const Policy *pol = p->policy;
  size_t n = 0;
  size_t *v = xcalloc(pol->n_patterns + 1, sizeof(size_t));
  const char **patterns = xcalloc(pol->n_patterns + 1, sizeof(char *));
  bool *stops = xcalloc(pol->n_patterns + 1, sizeof(bool));
  for (size_t i = 0; i < pol->n_patterns; i++) {
    patterns[i] = pol->patterns[i].pattern;
  }
  plan_new_names_stopped(plan, p->matcher, patterns, pol->n_patterns, p->scan->canon_root, stops);
  for (size_t i = 0; i < pol->n_patterns; i++) {
    if (!stops[i]) {
      v[n++] = i;
    }
  }
  free(patterns);
  free(stops);
  *ret = v;
  return n;
}

/* For `status`: new_names_open() of the plan `run` would make here with
 * `backend`. Returns how many, or -1 when the plan cannot be made (then
 * `run` says why). */
ssize_t status_new_names(const Project *p, Backend backend, size_t **ret) {
  PlanTarget *targets = NULL;
  size_t n_targets = 0;
  _cleanup_error_ Error err = {0};
  Plan plan = {0};
  ScannedDirs scanned = {.root = p->scan->canon_root, .scan = p->scan};
  if (enforce_targets(p->policy, p->matcher, p->scan, &targets, &n_targets, &err) < 0) {
    return -1;
  }
  int r = plan_build(backend, targets, n_targets, sys_list_dir_scanned, &scanned, &plan, &err);
  sys_scanned_dirs_clear(&scanned);
  if (r < 0) {
    plan_clear(&plan);
    return -1;
  }
  enforce_withhold_mounted(&plan);
  size_t n = new_names_open(&plan, p, ret);
  plan_clear(&plan);
  return (ssize_t)n;
}

json_object *json_patterns(const Policy *pol, const size_t *idx, size_t n) {
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    json_object_array_add(a, json_name(pol->patterns[idx[i]].pattern));
  }
  return a;
}

void print_locked(const char *rel, bool dir, const char *pattern) {
  /* TRANSLATORS: a column of its own; keep "locked", "writable" and
   * "outside" the same width (10 characters with the spaces). */
  /* TRANSLATORS: scripts written for the Rust ralon read this line; keep
   * its shape. */
  _cleanup_free_ char *name = shown(rel[0] ? rel : ".", dir), *pat = text_display(pattern);
  printf(_("%s%s%s%s  (matches `%s`)\n"), color_on(stdout, COLOR_RED), _("locked    "),
         color_off(stdout), name, pat);
}

/* ---- hooks, as status and `hook list` show them ----------------------- */


size_t hook_states(const char *root, const char *home, HookState **ret) {
  HookState *v = NULL;
  size_t n = 0, cap = 0;
  for (int i = 0; i < _AGENT_MAX; i++) {
    Agent a = (Agent)i;
    for (int user = 0; user <= 1; user++) {
      /* What an install would do says what is there: unchanged is
       * installed, updated is an older form, wrote is none. */
      HookChange c;
      Error e = {0};
      const char *state;
      if (hook_install(a, root, home, user, false, true, &c, &e) < 0) {
        _cleanup_free_ char *p = hook_config_path(a, root, home, user);
        if (p == NULL) {
          error_clear(&e);
          continue; /* no such scope for this agent */
        }
        state = "error";
        c = (HookChange){.agent = a, .path = steal_pointer(&p)};
      } else {
        state = c.kind == HOOK_CHANGE_UNCHANGED ? "installed"
                : c.kind == HOOK_CHANGE_UPDATED ? "outdated"
                                                : "absent";
      }
      HookState *h = grow_array(&v, &n, &cap, sizeof(HookState));
      *h = (HookState){.agent = a, .user = user, .path = steal_pointer(&c.path), .state = state,
                       .error = steal_pointer(&e.message), .runs = _HOOK_RUNS_INVALID};
      if (streq(state, "installed") || streq(state, "outdated")) {
        h->runs = hook_runs_here(a, root, home, user, &h->note);
      }
      hook_change_clear(&c);
      error_clear(&e);
    }
  }
  *ret = v;
  return n;
}

void hook_states_free(HookState *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].path);
    free(v[i].error);
    free(v[i].note);
  }
  free(v);
}

const char *hook_state_text(const char *state) {
  return streq(state, "installed")  ? _("installed")
         : streq(state, "outdated") ? _("outdated")
         : streq(state, "error")    ? _("error")
                                    : _("not installed");
}

void print_hook_state(const HookState *h) {
  const char *scope = h->user ? _("user") : _("project");
  if (h->error != NULL) {
    _cleanup_free_ char *error = text_display_terminal(h->error, output_utf8(), false);
    printf("  %-12s %-8s %s  (%s)\n", agent_to_string(h->agent), scope, _("error"), error);
  } else {
    _cleanup_free_ char *path = shown(h->path, false);
    printf("  %-12s %-8s %-14s %s\n", agent_to_string(h->agent), scope, hook_state_text(h->state),
           path);
  }
  print_hook_note(h, "    ");
}

/* Under an installed hook that will not (or may not) run here, or runs
 * only when the agent starts in the right place: why, and what to do. */
void print_hook_note(const HookState *h, const char *indent) {
  if (h->note == NULL) {
    return;
  }
  _cleanup_free_ char *note = text_display_terminal(h->note, output_utf8(), false);
  const char *what = h->runs == HOOK_RUNS_NO        ? _("will not run here")
                     : h->runs == HOOK_RUNS_UNKNOWN ? _("may not run here")
                                                    : _("note");
  /* TRANSLATORS: under a hook in `ralon hook list` and `ralon status`:
   * "will not run here: <why, and what to do>". */
  printf(_("%s%s: %s\n"), indent, what, note);
}

json_object *json_hook_states(const HookState *v, size_t n) {
  json_object *list = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    json_object *j = json_object_new_object();
    json_add_string(j, "agent", agent_to_string(v[i].agent));
    json_add_string(j, "name", agent_display_name(v[i].agent));
    json_add_string(j, "scope", v[i].user ? "user" : "project");
    json_add_string(j, "path", v[i].path);
    json_add_string(j, "state", v[i].state);
    json_add_text(j, "error", v[i].error);
    json_add_string(j, "runs", hook_runs_to_string(v[i].runs));
    json_add_text(j, "note", v[i].note);
    json_object_array_add(list, j);
  }
  return list;
}

/* status: the hooks that are there (installed, outdated, unreadable), and
 * the agents found here that have none. */
void print_status_hooks(const char *root) {
  const char *home = getenv("HOME");
  HookState *states = NULL;
  size_t n = hook_states(root, home, &states);
  bool detected[_AGENT_MAX];
  bool any_agent = hook_detect(root, geteuid() == 0 ? NULL : home, detected);
  bool has[_AGENT_MAX] = {false};
  size_t listed = 0;
  printf("%s\n", _("hooks"));
  for (size_t i = 0; i < n; i++) {
    if (!streq(states[i].state, "absent")) {
      has[states[i].agent] = true;
      print_hook_state(&states[i]);
      listed++;
    }
  }
  for (size_t i = 0; any_agent && i < n; i++) {
    if (streq(states[i].state, "absent") && !states[i].user && detected[states[i].agent] &&
        !has[states[i].agent]) {
      print_hook_state(&states[i]);
      listed++;
    }
  }
  if (listed == 0) {
    printf("  %s\n", _("none installed (`ralon hook install --agent NAME` adds one)"));
  }
  hook_states_free(states, n);
}

/* What `run` would refuse, as a finding: a descriptor the caller left open
 * for writing on a protected file. */
void audit_descriptors(Project *p) {
  AuditFd *fds = NULL;
  size_t n_fds = 0;
  if (audit_list_fds(true, &fds, &n_fds) == 0) {
    audit_inherited_fds(p->policy, p->matcher, p->scan, fds, n_fds, &p->findings);
    audit_fds_free(fds, n_fds);
  }
}
