/* SPDX-License-Identifier: Apache-2.0 */
/* One function per subcommand; everything a user reads on stdout is printed
 * here. Each returns an exit status (0 or 1) or -1 with *err set. */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include "json.h"
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "enforce/enforce.h"
#if defined(__linux__)
#include "enforce/linux/apparmor.h"
#include "enforce/linux/guard.h"
#endif
#include "enforce/unguarded.h"
#include "hook/decision.h"
#include "hook/hook.h"
#include "hook/install.h"
#include "log.h"
#include "matcher.h"
#include "output.h"
#include "path.h"
#include "policy.h"
#include "scan.h"

/* Everything a command needs to know about the project. */
typedef struct {
  Policy *policy;
  Matcher *matcher;
  ScanResult *scan; /* only when scanned */
  AuditFindings findings;
} Project;

static void project_clear(Project *p) {
  audit_findings_clear(&p->findings);
  scan_result_free(p->scan);
  matcher_free(p->matcher);
  policy_free(p->policy);
}

/* What the policy protects on disk now, and (with `audit`) how that is
 * weaker than it looks. */
static int project_scan(Project *p, unsigned flags, bool audit, Error *err) {
  if (scan_project_with(p->policy, p->matcher, flags, &p->scan, err) < 0) {
    return -1;
  }
  if (audit) {
    audit_run(p->policy, p->matcher, p->scan, &p->findings);
  }
  return 0;
}

static int project_open(const Options *o, bool scan, Project *p, Error *err) {
  memset(p, 0, sizeof(*p));
  int found = policy_discover(o->dir, &p->policy, err);
  if (found < 0) {
    return found;
  }
  const char **pats = xcalloc(p->policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < p->policy->n_patterns; i++) {
    pats[i] = p->policy->patterns[i].pattern;
  }
  int r = matcher_new(pats, p->policy->n_patterns, 0, &p->matcher, err);
  free(pats);
  if (r < 0) {
    return -1;
  }
  return scan ? project_scan(p, 0, true, err) : 0;
}

/* ---- JSON ------------------------------------------------------------- */

static void json_print(json_object *o) {
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
static json_object *json_name(const char *s) {
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

static void json_add_string(json_object *o, const char *key, const char *value) {
  json_object_object_add(o, key, value ? json_name(value) : NULL);
}

/* A message (an error, a reason, a hint): always a string, the bytes that
 * are not UTF-8 in the names it quotes escaped as on a terminal. */
static void json_add_text(json_object *o, const char *key, const char *value) {
  if (value == NULL) {
    json_object_object_add(o, key, NULL);
    return;
  }
  _cleanup_free_ char *text = text_display(value);
  json_object_object_add(o, key, json_object_new_string(text));
}

static json_object *json_protected_path(const Policy *pol, const ProtectedPath *p) {
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

static json_object *json_findings(const AuditFindings *f) {
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

/* How many of the protected paths found pattern `idx` matches, whether or
 * not an earlier pattern matched them first (the scan counts only that);
 * a protected directory counts once, not what is inside it. Sets
 * *inside (unless NULL) when it matches none of them but could match
 * something inside a protected directory, which the scan does not walk. */
static size_t pattern_matches(const Project *p, size_t idx, bool *inside) {
  size_t n = 0;
  for (size_t k = 0; k < p->scan->n_paths; k++) {
    n += matcher_match_one(p->matcher, idx, p->scan->paths[k].relative);
  }
  if (inside == NULL) {
    return n;
  }
  *inside = false;
  for (size_t k = 0; n == 0 && !*inside && k < p->scan->n_paths; k++) {
    const ProtectedPath *pp = &p->scan->paths[k];
    *inside = S_ISDIR(pp->mode) && matcher_may_match_below_one(p->matcher, idx, pp->relative);
  }
  return n;
}

static json_object *json_project(const Project *p) {
  json_object *o = json_object_new_object();
  json_add_string(o, "policy", p->policy->file);
  json_add_string(o, "root", p->policy->root);
  return o;
}

/* ---- human output ----------------------------------------------------- */

/* Each finding goes to the journal as it is reported, on stderr or in
 * --json. */
static void log_findings(const Project *p, const char *command) {
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

static void print_warnings(const Project *p, const char *command) {
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
static char *shown(const char *name, bool dir) {
  _cleanup_free_ char *s = dir ? xasprintf("%s/", name) : NULL;
  return path_display(s != NULL ? s : name);
}

/* Why the mount backend refuses this project, though the machine offers
 * it, or NULL. agent.lock as a symbolic link: the backend makes read-only
 * what it leads to, and cannot keep the link from being replaced (it sits
 * in the project root, which stays writable): an agent could put a policy
 * of its own there for the next session. Landlock keeps the root from
 * losing or gaining entries, the link included. */
static char *mount_refusal(const Policy *pol) {
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
 * policy, in its order; plan_stops_new_names()): names that do not exist
 * when the command starts. */
static size_t new_names_open(const Plan *plan, const Project *p, size_t **ret) {
  const Policy *pol = p->policy;
  size_t n = 0;
  size_t *v = xcalloc(pol->n_patterns + 1, sizeof(size_t));
  for (size_t i = 0; i < pol->n_patterns; i++) {
    if (!plan_stops_new_names(plan, p->matcher, i, pol->patterns[i].pattern,
                              p->scan->canon_root)) {
      v[n++] = i;
    }
  }
  *ret = v;
  return n;
}

/* For `status`: new_names_open() of the plan `run` would make here with
 * `backend`. Returns how many, or -1 when the plan cannot be made (then
 * `run` says why). */
static ssize_t status_new_names(const Project *p, Backend backend, size_t **ret) {
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

static json_object *json_patterns(const Policy *pol, const size_t *idx, size_t n) {
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    json_object_array_add(a, json_name(pol->patterns[idx[i]].pattern));
  }
  return a;
}

static void print_locked(const char *rel, bool dir, const char *pattern) {
  /* TRANSLATORS: a column of its own; keep "locked", "writable" and
   * "outside" the same width (10 characters with the spaces). */
  /* TRANSLATORS: scripts written for the Rust ralon read this line; keep
   * its shape. */
  _cleanup_free_ char *name = shown(rel[0] ? rel : ".", dir), *pat = text_display(pattern);
  printf(_("%s%s%s%s  (matches `%s`)\n"), color_on(stdout, COLOR_RED), _("locked    "),
         color_off(stdout), name, pat);
}

/* ---- init ------------------------------------------------------------- */

static int hook_install_command(const Options *o, bool remove, Error *err);

int command_init(const Options *o, Error *err) {
  _cleanup_free_ char *dir = path_absolute(NULL, o->dir ? o->dir : ".");
  if (dir == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  struct stat st;
  if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    return error_set(err, errno ? errno : ENOTDIR, _("cannot use %s: %s"), dir,
                     strerror(errno ? errno : ENOTDIR));
  }
  _cleanup_free_ char *file = path_join(dir, POLICY_FILE_NAME);
  /* Something there that is no policy (a directory, a FIFO, a link that
   * leads nowhere): "already exists" would not say what, and every other
   * command refuses it. --force replaces it where a rename can. */
  int r = o->force ? 0 : policy_check_file(file, err);
  if (r < 0 && r != -ENOENT) {
    return -1;
  }
  _cleanup_free_ char *text = policy_starter_text(dir);
  r = write_file_atomic(dir, POLICY_FILE_NAME, text, strlen(text), o->force);
  if (r == -EEXIST) {
    return error_set(err, EEXIST, _("%s already exists (use --force to overwrite)"), file);
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot write %s: %m"), file);
  }
  _cleanup_free_ char *file_shown = shown(file, false);
  printf(_("wrote %s\n"), file_shown);
  int status = EXIT_OK;
  if (!o->no_hooks) {
    /* The agents found in the project or home; none found, none written
     * (`ralon hook install --agent NAME` adds one later). */
    bool found[_AGENT_MAX];
    if (hook_detect(dir, getenv("HOME"), found)) {
      Options ho = {.command = CMD_HOOK, .dir = dir, .hook_action = "install"};
      for (int a = 0; a < _AGENT_MAX; a++) {
        if (found[a]) {
          ho.agents = xreallocarray(ho.agents, ho.n_agents + 1, sizeof(char *));
          ho.agents[ho.n_agents++] = xstrdup(agent_to_string((Agent)a));
        }
      }
      status = hook_install_command(&ho, false, err);
      options_clear(&ho);
    }
  }
  printf("\n");
  fputs(_("Now edit agent.lock, then protect it:\n"
          "  ralon run -- <your agent>   the agent and everything it spawns\n"
          "\n"
          "An agent that reaches a protected path reports\n"
          "`EROFS: read-only file system`, `EBUSY: device or resource busy`\n"
          "(removing or renaming one) or `EACCES: permission denied`, which is\n"
          "ralon refusing the change, not a damaged file or a passing lock.\n"),
        stdout);
  return status;
}

/* ---- check ------------------------------------------------------------ */

static int check_paths(const Options *o, Project *p, Error *err) {
  _cleanup_free_ char *base = path_absolute(NULL, o->dir ? o->dir : ".");
  if (base == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  Decider d = {.policy = p->policy,
               .matcher = p->matcher,
               .canon_root = policy_canonical_root(p->policy)};
  json_object *list = o->json ? json_object_new_array() : NULL;
  bool any_locked = false;
  int r = 0;

  for (size_t i = 0; i < o->n_paths; i++) {
    const char *arg = o->paths[i];
    PathDecision cr;
    if (decide_path(&d, base, arg, &cr, err) < 0) {
      r = -1;
      break;
    }
    const char *pattern = cr.pattern >= 0 ? p->policy->patterns[cr.pattern].pattern : NULL;
    const char *rel = cr.relative && cr.relative[0] ? cr.relative : ".";
    any_locked |= cr.verdict == VERDICT_LOCKED;
    if (list != NULL) {
      json_object *e = json_object_new_object();
      json_add_string(e, "path", arg);
      json_add_string(e, "status", verdict_to_string(cr.verdict));
      json_add_string(e, "relative", cr.via ? cr.via : cr.relative ? rel : NULL);
      json_add_string(e, "pattern", pattern);
      json_object_array_add(list, e);
    } else if (cr.verdict == VERDICT_LOCKED && cr.via != NULL) {
      _cleanup_free_ char *name = shown(rel, false), *via = shown(cr.via, false),
                          *pat = text_display(pattern);
      printf(_("%s%s%s%s  (resolves to %s, matches `%s`)\n"), color_on(stdout, COLOR_RED),
             _("locked    "), color_off(stdout), name, via, pat);
    } else if (cr.verdict == VERDICT_LOCKED) {
      print_locked(rel, false, pattern);
    } else if (cr.verdict == VERDICT_WRITABLE) {
      _cleanup_free_ char *name = shown(rel, false);
      printf("%s%s%s%s\n", color_on(stdout, COLOR_GREEN), _("writable  "), color_off(stdout), name);
    } else {
      _cleanup_free_ char *name = shown(arg, false);
      printf("%s%s\n", _("outside   "), name);
    }
    path_decision_clear(&cr);
  }
  free(d.canon_root);
  if (list != NULL) {
    if (r < 0) {
      json_object_put(list);
    } else {
      json_object *doc = json_project(p);
      json_object_object_add(doc, "paths", list);
      json_object_object_add(doc, "locked", json_object_new_boolean(any_locked));
      json_print(doc);
    }
  }
  if (r < 0) {
    return -1;
  }
  return any_locked ? EXIT_PROTECTED : EXIT_OK;
}

int command_check(const Options *o, Error *err) {
  Project p;
  bool list = o->n_paths == 0;
  int r = project_open(o, list, &p, err);
  if (r == 0 && !list) {
    r = check_paths(o, &p, err);
  } else if (r == 0) {
    if (o->json) {
      json_object *doc = json_project(&p);
      json_object *a = json_object_new_array();
      for (size_t i = 0; i < p.scan->n_paths; i++) {
        json_object_array_add(a, json_protected_path(p.policy, &p.scan->paths[i]));
      }
      json_object_object_add(doc, "protected", a);
      json_object_object_add(doc, "findings", json_findings(&p.findings));
      json_print(doc);
      log_findings(&p, "check");
    } else {
      for (size_t i = 0; i < p.scan->n_paths; i++) {
        const ProtectedPath *pp = &p.scan->paths[i];
        print_locked(pp->relative, S_ISDIR(pp->mode), p.policy->patterns[pp->pattern].pattern);
      }
      print_warnings(&p, "check");
    }
  }
  project_clear(&p);
  return r;
}

/* ---- status ----------------------------------------------------------- */

/* ---- hooks, as status and `hook list` show them ----------------------- */

/* Whether our hook is in each agent's configuration, per scope. */
typedef struct {
  Agent agent;
  bool user;
  char *path;
  const char *state; /* "installed", "outdated", "absent" or "error" */
  char *error;
} HookState;

static size_t hook_states(const char *root, const char *home, HookState **ret) {
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
                       .error = steal_pointer(&e.message)};
      hook_change_clear(&c);
      error_clear(&e);
    }
  }
  *ret = v;
  return n;
}

static void hook_states_free(HookState *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].path);
    free(v[i].error);
  }
  free(v);
}

static const char *hook_state_text(const char *state) {
  return streq(state, "installed")  ? _("installed")
         : streq(state, "outdated") ? _("outdated")
         : streq(state, "error")    ? _("error")
                                    : _("not installed");
}

static void print_hook_state(const HookState *h) {
  const char *scope = h->user ? _("user") : _("project");
  if (h->error != NULL) {
    _cleanup_free_ char *error = text_display_terminal(h->error, output_utf8(), false);
    printf("  %-12s %-8s %s  (%s)\n", agent_to_string(h->agent), scope, _("error"), error);
  } else {
    _cleanup_free_ char *path = shown(h->path, false);
    printf("  %-12s %-8s %-14s %s\n", agent_to_string(h->agent), scope, hook_state_text(h->state),
           path);
  }
}

static json_object *json_hook_states(const HookState *v, size_t n) {
  json_object *list = json_object_new_array();
  for (size_t i = 0; i < n; i++) {
    json_object *j = json_object_new_object();
    json_add_string(j, "agent", agent_to_string(v[i].agent));
    json_add_string(j, "name", agent_display_name(v[i].agent));
    json_add_string(j, "scope", v[i].user ? "user" : "project");
    json_add_string(j, "path", v[i].path);
    json_add_string(j, "state", v[i].state);
    json_add_text(j, "error", v[i].error);
    json_object_array_add(list, j);
  }
  return list;
}

/* status: the hooks that are there (installed, outdated, unreadable), and
 * the agents found here that have none. */
static void print_status_hooks(const char *root) {
  const char *home = getenv("HOME");
  HookState *states = NULL;
  size_t n = hook_states(root, home, &states);
  bool detected[_AGENT_MAX];
  bool any_agent = hook_detect(root, home, detected);
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
    printf("  %s\n", _("none installed (`ralon hook install` adds them for the agents found here)"));
  }
  hook_states_free(states, n);
}

static json_object *json_backends(const Availability *av, const Project *p) {
  const Policy *pol = p->policy;
  json_object *o = json_object_new_object();
  for (Backend b = BACKEND_MOUNT; b <= BACKEND_LANDLOCK; b++) {
    json_object *e = json_object_new_object();
    _cleanup_free_ char *d = enforce_describe(av, b);
    bool available = enforce_backend_available(av, b);
    json_object_object_add(e, "available", json_object_new_boolean(available));
    json_add_text(e, "description", d);
    _cleanup_free_ size_t *open = NULL;
    ssize_t n_open = available ? status_new_names(p, b, &open) : -1;
    json_object_object_add(e, "new_names", n_open < 0 ? NULL
                                                      : json_patterns(pol, open, (size_t)n_open));
    if (b == BACKEND_LANDLOCK) {
      json_object_object_add(e, "abi", json_object_new_int(av->landlock_abi > 0 ? av->landlock_abi : 0));
    } else {
      json_add_string(e, "failed_step",
                      av->mount.step == MOUNT_STEP_NONE ? NULL : mount_step_to_string(av->mount.step));
      /* The symbolic name; the number where the C library has none. */
      const char *ename = strerrorname_np(av->mount.errnum);
      _cleanup_free_ char *enumber = ename == NULL ? xasprintf("%d", av->mount.errnum) : NULL;
      json_add_string(e, "errno", av->mount.step == MOUNT_STEP_NONE ? NULL
                                  : ename != NULL                   ? ename
                                                                    : enumber);
      _cleanup_free_ char *hint = apparmor_userns_hint_here(&av->mount);
      json_add_text(e, "hint", hint);
      _cleanup_free_ char *refusal =
          enforce_backend_available(av, BACKEND_MOUNT) ? mount_refusal(pol) : NULL;
      json_add_text(e, "refused", refusal);
    }
    json_object_object_add(o, backend_to_string(b), e);
  }
  return o;
}

static void status_json(const Project *p) {
  const Policy *pol = p->policy;
  json_object *doc = json_project(p);
  Availability av;
  enforce_availability(pol->root, &av);
  json_object_object_add(doc, "backends", json_backends(&av, p));
  json_object_object_add(doc, "version", json_object_new_int((int)pol->version));

  json_object *pats = json_object_new_array();
  for (size_t i = 0; i < pol->n_patterns; i++) {
    const PolicyPattern *pp = &pol->patterns[i];
    json_object *e = json_object_new_object();
    json_add_string(e, "pattern", pp->pattern);
    json_add_string(e, "declared", pp->declared);
    json_object_object_add(e, "implicit", json_object_new_boolean(pp->implicit));
    json_object_object_add(e, "literal", json_object_new_boolean(matcher_is_literal(p->matcher, i)));
    json_object_object_add(e, "line", pp->line ? json_object_new_int((int)pp->line) : NULL);
    json_object_object_add(e, "column", pp->column ? json_object_new_int((int)pp->column) : NULL);
    json_object_object_add(e, "matches", json_object_new_uint64(pattern_matches(p, i, NULL)));
    json_object_array_add(pats, e);
  }
  json_object_object_add(doc, "patterns", pats);

  json_object *prot = json_object_new_array();
  for (size_t i = 0; i < p->scan->n_paths; i++) {
    json_object_array_add(prot, json_protected_path(pol, &p->scan->paths[i]));
  }
  json_object_object_add(doc, "protected", prot);
  HookState *hooks = NULL;
  size_t n_hooks = hook_states(pol->root, getenv("HOME"), &hooks);
  json_object_object_add(doc, "hooks", json_hook_states(hooks, n_hooks));
  hook_states_free(hooks, n_hooks);
  json_object_object_add(doc, "findings", json_findings(&p->findings));
  json_print(doc);
  log_findings(p, "status");
}

/* What `run` would refuse, as a finding: a descriptor the caller left open
 * for writing on a protected file. */
static void audit_descriptors(Project *p) {
  AuditFd *fds = NULL;
  size_t n_fds = 0;
  if (audit_list_fds(true, &fds, &n_fds) == 0) {
    audit_inherited_fds(p->policy, p->matcher, p->scan, fds, n_fds, &p->findings);
    audit_fds_free(fds, n_fds);
  }
}

int command_status(const Options *o, Error *err) {
  Project p;
  if (project_open(o, true, &p, err) < 0) {
    project_clear(&p);
    return -1;
  }
  audit_descriptors(&p);
  if (o->json) {
    status_json(&p);
    project_clear(&p);
    return 0;
  }
  const Policy *pol = p.policy;
  _cleanup_free_ char *file = shown(pol->file, false), *root = shown(pol->root, false);
  printf("%-11s%s\n", _("policy"), file);
  printf("%-11s%s\n", _("root"), root);
  printf("%-11s%u\n", _("version"), pol->version);
  printf("%-11s", _("patterns"));
  printf(P_("%zu declared (+1 implicit: agent.lock)\n", "%zu declared (+1 implicit: agent.lock)\n",
            (unsigned long)pol->n_declared),
         pol->n_declared);
  for (size_t i = 0; i < pol->n_patterns; i++) {
    bool inside;
    size_t hits = pattern_matches(&p, i, &inside);
    _cleanup_free_ char *pat = text_display(pol->patterns[i].pattern);
    printf("  %-30s ", pat);
    if (hits == 0 && inside) {
      printf("%s\n", _("only inside protected directories, if anything"));
    } else if (hits == 0) {
      printf("%s\n", _("nothing on disk"));
    } else {
      printf(P_("%zu path\n", "%zu paths\n", (unsigned long)hits), hits);
    }
  }
  printf("%-11s", _("protected"));
  /* The Rust ralon's wording, which scripts may read. */
  printf(_("%zu path(s) currently on disk\n"), p.scan->n_paths);
  for (size_t i = 0; i < p.scan->n_paths; i++) {
    const ProtectedPath *pp = &p.scan->paths[i];
    _cleanup_free_ char *name = shown(pp->relative, S_ISDIR(pp->mode));
    printf("  %s\n", name);
  }
  Availability av;
  enforce_availability(pol->root, &av);
  printf("%s\n", _("backends"));
  for (Backend b = BACKEND_MOUNT; b <= BACKEND_LANDLOCK; b++) {
    _cleanup_free_ char *d = enforce_describe(&av, b);
    printf("  %-9s%s\n", backend_to_string(b), d);
    _cleanup_free_ char *refusal =
        b == BACKEND_MOUNT && enforce_backend_available(&av, b) ? mount_refusal(pol) : NULL;
    if (refusal != NULL) {
      /* TRANSLATORS: under "mount    available (…)" in `ralon status`;
       * %s says why `ralon run` will not use it for this project. */
      printf(_("           but refuses this project: %s\n"), refusal);
    }
    _cleanup_free_ size_t *open = NULL;
    ssize_t n_open = enforce_backend_available(&av, b) ? status_new_names(&p, b, &open) : -1;
    for (ssize_t i = 0; i < n_open; i++) {
      _cleanup_free_ char *pat = text_display(pol->patterns[open[i]].pattern);
      /* TRANSLATORS: under a backend in `ralon status`, one line per
       * pattern: a file or directory that matches it but does not exist
       * yet can be made while the agent runs. */
      printf(_("           does not stop new names matching `%s`\n"), pat);
    }
  }
  print_status_hooks(pol->root);
  _cleanup_free_ char *hint = apparmor_userns_hint_here(&av.mount);
  if (hint != NULL) {
    printf("\n%s\n", hint);
  }
  if (!enforce_backend_available(&av, BACKEND_AUTO)) {
    fputs(_("\nNothing on this machine can stop an agent from writing to those paths.\n"
            "`ralon run` will refuse to start rather than pretend otherwise.\n"),
          stdout);
  } else if (!enforce_backend_available(&av, BACKEND_MOUNT)) {
    fputs(_("\nOnly Landlock is available: it does not protect metadata (chmod, chown,\n"
            "times, extended attributes) of protected paths, and directories on the way\n"
            "to a protected path accept no new entries while the agent runs.\n"),
          stdout);
    if (plan_gaps(BACKEND_LANDLOCK, av.landlock_abi) & PLAN_GAP_TRUNCATE) {
      printf(_("With Landlock ABI %d, protected files can be truncated too (truncate,\n"
               "open with O_TRUNC): ABI 3 (Linux 6.2) is the first to govern it.\n"),
             av.landlock_abi);
    }
  }
  print_warnings(&p, "status");
  project_clear(&p);
  return 0;
}

/* ---- run -------------------------------------------------------------- */

static const char *plural_dirs(size_t n) {
  return P_("directory", "directories", (unsigned long)n);
}

/* Where target `t` is, as the plan shows it, when that is not its name:
 * relative to the (canonical) root, or absolute outside it; NULL when the
 * name is the path. */
static const char *target_shown(const Project *p, const PlanTarget *t) {
  const char *canon = p->scan->canon_root != NULL ? p->scan->canon_root : p->policy->root;
  const char *rel = path_relative(canon, t->path);
  if (rel != NULL && streq(rel, t->relative)) {
    return NULL;
  }
  return rel != NULL && rel[0] != '\0' ? rel : t->path;
}

/* The entries of restricted directory `dir` granted write access (one
 * Landlock rule each), sorted and wrapped: "    write granted  a b c". */
static void print_grants_in(const Plan *plan, const char *dir) {
  size_t dlen = strlen(dir), n = 0;
  _cleanup_free_ const char **names = xreallocarray(NULL, plan->carve.n_grants + 1,
                                                    sizeof(*names));
  for (size_t i = 0; i < plan->carve.n_grants; i++) {
    const char *g = plan->carve.grants[i].path;
    if (strncmp(g, dir, dlen) != 0 || (!streq(dir, "/") && g[dlen] != '/')) {
      continue;
    }
    const char *rest = streq(dir, "/") ? g + 1 : g + dlen + 1;
    if (strchr(rest, '/') == NULL) {
      names[n++] = rest;
    }
  }
  qsort(names, n, sizeof(*names), strings_compare);
  const char *label = _("write granted");
  size_t indent = 4 + text_columns(label) + 1, col = 0;
  for (size_t i = 0; i < n; i++) {
    _cleanup_free_ char *display = shown(names[i], false);
    /* In a list separated by spaces, a name with one is quoted too. */
    _cleanup_free_ char *name = display[0] != '"' && strchr(display, ' ') != NULL
                                    ? xasprintf("\"%s\"", display)
                                    : xstrdup(display);
    size_t width = text_columns(name);
    if (i == 0) {
      printf("    %s ", label);
      col = indent;
    } else if (col + 1 + width > 78) {
      printf("\n%*s", (int)indent, "");
      col = indent;
    }
    printf(" %s", name);
    col += 1 + width;
  }
  if (n > 0) {
    putchar('\n');
  }
}

static void print_plan(const Plan *plan, const Project *p, const Options *o, const char *why,
                       bool scoped, int abi) {
  _cleanup_free_ char *root = shown(p->policy->root, false);
  printf("%-11s%s\n", _("root"), root);
  printf("%-11s%s  (%s)\n", _("backend"), backend_to_string(plan->backend), why);
  printf("%-11s", _("command"));
  for (size_t i = 0; i < o->n_paths; i++) {
    _cleanup_free_ char *arg = shown(o->paths[i], false);
    printf("%s%s", i ? " " : "", arg);
  }
  printf("\n");
  if (plan->backend == BACKEND_MOUNT) {
    printf("%-11s%s\n", _("guard"),
           _("ralon stays: the command runs in a PID namespace of its own, and an outside "
             "change to a protected path stops it unless made under `ralon pause`"));
  }
  if (o->seal && plan->backend == BACKEND_MOUNT) {
    printf("%-11s%s\n", _("seal"),
           scoped ? _("no user namespaces, no mounts; signals and abstract sockets scoped to "
                      "the sandbox")
                  : _("no user namespaces, no mounts (scoping signals and abstract sockets "
                      "needs Landlock ABI 6)"));
  } else if (o->seal) {
    printf("%-11s%s\n", _("seal"),
           scoped ? _("no mounts; signals and abstract sockets scoped to the sandbox")
                  : _("no mounts (scoping signals and abstract sockets needs Landlock ABI 6)"));
  }
  size_t n_present = 0;
  for (size_t i = 0; i < plan->n_targets; i++) {
    n_present += !plan->targets[i].missing;
  }
  printf("%-11s", _("protected"));
  printf(_("%zu path(s)\n"), n_present);
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    if (t->missing) {
      continue;
    }
    _cleanup_free_ char *name = shown(t->relative, S_ISDIR(t->mode));
    /* What is made read-only is what the name leads to; a link the name
     * itself is stays a link (the mount backend can bind only its
     * target). */
    const char *target = target_shown(p, t);
    if (target == NULL) {
      printf("  %s  %s\n", _("read-only"), name);
    } else {
      _cleanup_free_ char *to = shown(target, S_ISDIR(t->mode));
      printf(_("  %s  %s  (where %s leads)\n"), _("read-only"), to, name);
    }
  }
  if (plan->backend == BACKEND_MOUNT && plan->n_pinned > 0) {
    printf("%-11s", _("pinned"));
    printf(_("%zu %s, which cannot be renamed or removed\n"), plan->n_pinned,
           plural_dirs(plan->n_pinned));
    for (size_t i = 0; i < plan->n_pinned; i++) {
      _cleanup_free_ char *name = shown(plan->pinned[i], false);
      printf("  %s  %s\n", _("no rename"), name);
    }
  }
  if (plan->backend == BACKEND_LANDLOCK) {
    printf("%-11s", _("landlock"));
    /* Each looked at once: the count comes before the list. */
    _cleanup_free_ bool *holds = xcalloc(plan->carve.n_restricted + 1, sizeof(bool));
    size_t n_restricted = 0;
    for (size_t i = 0; i < plan->carve.n_restricted; i++) {
      holds[i] = carve_restricts_entries(plan->carve.restricted[i]);
      n_restricted += holds[i];
    }
    printf(_("%zu grant(s), %zu %s create-restricted\n"), plan->carve.n_grants, n_restricted,
           plural_dirs(n_restricted));
    for (size_t i = 0; i < plan->carve.n_restricted; i++) {
      if (!holds[i]) {
        continue;
      }
      _cleanup_free_ char *name = shown(plan->carve.restricted[i], false);
      printf("  %s  %s\n", _("no new entries in"), name);
      print_grants_in(plan, plan->carve.restricted[i]);
    }
    for (size_t i = 0; i < plan->carve.n_withheld; i++) {
      _cleanup_free_ char *name = shown(plan->carve.withheld[i], false);
      printf("  %s  %s\n", _("no write rule for"), name);
    }
    for (size_t i = 0; i < plan->carve.n_unlisted; i++) {
      _cleanup_free_ char *name = shown(plan->carve.unlisted[i], false);
      printf("  %s  %s\n", _("nothing granted in"), name);
    }
  }
  bool header = false;
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    if (!t->missing) {
      continue;
    }
    if (!header) {
      printf("%s\n", _("not covered"));
      header = true;
    }
    _cleanup_free_ char *name = shown(t->relative, false);
    const char *target = target_shown(p, t);
    _cleanup_free_ char *to = target != NULL ? shown(target, false) : NULL;
    if (plan->backend == BACKEND_MOUNT && to != NULL) {
      printf(_("  %s leads to %s, which does not exist, so it cannot be made read-only\n"), name,
             to);
    } else if (plan->backend == BACKEND_MOUNT) {
      printf(_("  %s does not exist, so it cannot be made read-only\n"), name);
    } else if (to != NULL) {
      printf(_("  %s leads to %s, which does not exist; it cannot be created while the agent "
               "runs\n"),
             name, to);
    } else {
      printf(_("  %s does not exist; it cannot be created while the agent runs\n"), name);
    }
  }
  /* A literal naming nothing is said above already. */
  _cleanup_free_ size_t *open = NULL;
  size_t n_open = new_names_open(plan, p, &open);
  for (size_t i = 0; i < n_open; i++) {
    const char *pattern = p->policy->patterns[open[i]].pattern;
    bool said = false;
    for (size_t k = 0; k < plan->n_targets && !said; k++) {
      said = plan->targets[k].missing && streq(plan->targets[k].relative, pattern);
    }
    if (said) {
      continue;
    }
    if (!header) {
      printf("%s\n", _("not covered"));
      header = true;
    }
    _cleanup_free_ char *pat = text_display(pattern);
    if (plan->backend == BACKEND_MOUNT) {
      printf(_("  new names matching `%s`: only what exists when the command starts is made "
               "read-only\n"),
             pat);
    } else {
      printf(_("  new names matching `%s` below a directory granted write access\n"), pat);
    }
  }
  unsigned gaps = plan_gaps(plan->backend, abi);
  if (gaps != 0 && !header) {
    printf("%s\n", _("not covered"));
  }
  if (gaps & PLAN_GAP_METADATA) {
    printf("%s\n", _("  metadata of protected paths (chmod, chown, times, extended attributes): "
                     "Landlock does not govern it"));
  }
  if (gaps & PLAN_GAP_TRUNCATE) {
    printf(_("  truncating protected files (truncate, open with O_TRUNC): Landlock ABI %d does "
             "not govern it (ABI 3, Linux 6.2, does)\n"),
           abi);
  }
}

static json_object *json_plan(const Plan *plan, const Project *p, const char *why, bool seal,
                              bool scoped, int abi) {
  json_object *doc = json_project(p);
  json_add_string(doc, "backend", backend_to_string(plan->backend));
  json_add_text(doc, "reason", why);
  json_object *prot = json_object_new_array(), *missing = json_object_new_array();
  for (size_t i = 0; i < plan->n_targets; i++) {
    const PlanTarget *t = &plan->targets[i];
    json_object *e = json_object_new_object();
    json_add_string(e, "path", t->relative);
    json_add_string(e, "target", t->path);
    json_add_string(e, "link", t->link);
    if (!t->missing) {
      json_add_string(e, "kind", scan_kind_name(t->mode));
      json_object_object_add(e, "device", json_object_new_uint64((uint64_t)t->dev));
      json_object_object_add(e, "inode", json_object_new_uint64((uint64_t)t->ino));
    }
    json_object_array_add(t->missing ? missing : prot, e);
  }
  json_object_object_add(doc, "protected", prot);
  json_object_object_add(doc, "missing", missing);
  json_object *pinned = json_object_new_array();
  for (size_t i = 0; i < plan->n_pinned; i++) {
    json_object_array_add(pinned, json_name(plan->pinned[i]));
  }
  json_object_object_add(doc, "pinned", pinned);
  json_object *grants = json_object_new_array(), *restricted = json_object_new_array();
  for (size_t i = 0; i < plan->carve.n_grants; i++) {
    json_object_array_add(grants, json_name(plan->carve.grants[i].path));
  }
  for (size_t i = 0; i < plan->carve.n_restricted; i++) {
    if (!carve_restricts_entries(plan->carve.restricted[i])) {
      continue;
    }
    json_object_array_add(restricted, json_name(plan->carve.restricted[i]));
  }
  json_object *withheld = json_object_new_array();
  for (size_t i = 0; i < plan->carve.n_withheld; i++) {
    json_object_array_add(withheld, json_name(plan->carve.withheld[i]));
  }
  json_object_object_add(doc, "granted", grants);
  json_object_object_add(doc, "restricted", restricted);
  json_object_object_add(doc, "withheld", withheld);
  json_object *unlisted = json_object_new_array();
  for (size_t i = 0; i < plan->carve.n_unlisted; i++) {
    json_object_array_add(unlisted, json_name(plan->carve.unlisted[i]));
  }
  json_object_object_add(doc, "unlisted", unlisted);
  json_object *nc = json_object_new_array();
  unsigned gaps = plan_gaps(plan->backend, abi);
  if (gaps & PLAN_GAP_METADATA) {
    json_object_array_add(nc, json_object_new_string("metadata"));
  }
  if (gaps & PLAN_GAP_TRUNCATE) {
    json_object_array_add(nc, json_object_new_string("truncate"));
  }
  _cleanup_free_ size_t *open = NULL;
  size_t n_open = new_names_open(plan, p, &open);
  if (n_open > 0) {
    json_object_array_add(nc, json_object_new_string("new-names"));
  }
  json_object_object_add(doc, "not_covered", nc);
  json_object_object_add(doc, "new_names", json_patterns(p->policy, open, n_open));
  /* What --seal refuses beyond writes; null without it. */
  json_object *sealed = NULL;
  if (seal) {
    sealed = json_object_new_array();
    if (plan->backend == BACKEND_MOUNT) {
      json_object_array_add(sealed, json_object_new_string("user-namespaces"));
    }
    json_object_array_add(sealed, json_object_new_string("mount"));
    if (scoped) {
      json_object_array_add(sealed, json_object_new_string("signal"));
      json_object_array_add(sealed, json_object_new_string("abstract-unix-socket"));
    }
  }
  json_object_object_add(doc, "seal", sealed);
  /* The mount backend's run stays as the sandbox's guard. */
  json_object_object_add(doc, "guard", json_object_new_boolean(plan->backend == BACKEND_MOUNT));
  json_object_object_add(doc, "findings", json_findings(&p->findings));
  return doc;
}

/* `run --if-policy --dry-run` where the command would start unchanged:
 * no agent.lock found (`p` NULL), or inside a `ralon run` of the same
 * project. With --json, the plan's members, with no backend, nothing
 * protected, and the policy and root where there is one. */
static int print_unchanged(const Options *o, const Project *p) {
  const char *policy = p != NULL ? p->policy->file : NULL;
  const char *root = p != NULL ? p->policy->root : NULL;
  if (!o->json) {
    _cleanup_free_ char *command = shown(o->paths[0], false);
    if (p == NULL) {
      printf(_("no agent.lock here: `%s` would run unchanged\n"), command);
    } else {
      printf(_("already inside `ralon run` for this project: `%s` would run unchanged\n"),
             command);
    }
    return EXIT_OK;
  }
  json_object *doc = json_object_new_object();
  json_add_string(doc, "policy", policy);
  json_add_string(doc, "root", root);
  json_add_string(doc, "backend", NULL);
  json_add_text(doc, "reason",
                p == NULL ? _("no agent.lock here: the command would run unchanged")
                          : _("already inside `ralon run` for this project: the command "
                              "would run unchanged"));
  static const char *const lists[] = {"protected", "missing",  "pinned",      "granted",
                                      "restricted", "withheld", "unlisted",    "not_covered",
                                      "new_names"};
  for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
    json_object_object_add(doc, lists[i], json_object_new_array());
  }
  json_object_object_add(doc, "seal", NULL);
  json_object_object_add(doc, "guard", json_object_new_boolean(false));
  json_object_object_add(doc, "findings", json_object_new_array());
  json_object_object_add(doc, "enforceable", json_object_new_boolean(true));
  json_add_string(doc, "error", NULL);
  json_print(doc);
  return EXIT_OK;
}

/* The command line as a shell would read it back, for the journal. */
static char *command_line(char *const argv[]) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  if (f == NULL) {
    oom();
  }
  for (size_t i = 0; argv[i] != NULL; i++) {
    const char *a = argv[i];
    if (i > 0) {
      fputc(' ', f);
    }
    if (a[0] != '\0' && a[strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789_./=:,+-@%")] == '\0') {
      fputs(a, f);
      continue;
    }
    fputc('\'', f);
    for (const char *c = a; *c; c++) {
      if (*c == '\'') {
        fputs("'\\''", f);
      } else {
        fputc(*c, f);
      }
    }
    fputc('\'', f);
  }
  if (fclose(f) != 0) {
    oom();
  }
  return buf;
}

/* Runs the command as it is (--if-policy), and says so in the journal. */
static int exec_unchanged(const Options *o, const char *reason, Error *err) {
  if (log_enabled()) {
    LogFields lf = {0};
    _cleanup_free_ char *cmd = command_line(o->paths);
    _cleanup_free_ char *here = getcwd(NULL, 0);
    log_field(&lf, "RALON_COMMAND", "%s", cmd);
    log_field(&lf, "RALON_DIRECTORY", "%s", o->dir ? o->dir : here ? here : "?");
    log_field(&lf, "RALON_REASON", "%s", reason);
    log_send(LOG_PASS_THROUGH, &lf, "Started %s unchanged: %s", o->paths[0], reason);
  }
  fflush(stdout);
  execvp(o->paths[0], o->paths);
  return error_set(err, errno, _("failed to run `%s`: %m"), o->paths[0]);
}

/* `run` could not enforce, or refused to: the journal keeps why. */
static void log_failure(const Options *o, const Project *p, Backend b, const Error *e) {
  if (!log_enabled()) {
    return;
  }
  LogFields lf = {0};
  _cleanup_free_ char *cmd = command_line(o->paths);
  log_field(&lf, "RALON_BACKEND", "%s", b == BACKEND_AUTO ? "none" : backend_to_string(b));
  log_field(&lf, "RALON_ROOT", "%s", p->policy->root);
  log_field(&lf, "RALON_POLICY", "%s", p->policy->file);
  log_field(&lf, "RALON_COMMAND", "%s", cmd);
  log_field(&lf, "RALON_ERROR", "%s", e->message ? e->message : "?");
  if (e->errnum > 0) {
    log_field(&lf, "ERRNO", "%d", e->errnum);
  }
  log_send(LOG_FAILURE, &lf, "Refused to start %s in %s: %s", o->paths[0], p->policy->root,
           e->message ? e->message : "?");
}

static void log_run(const Options *o, const Project *p, const Plan *plan, const Availability *av,
                    Backend requested, const char *why) {
  if (!log_enabled()) {
    return;
  }
  size_t n = 0;
  for (size_t i = 0; i < plan->n_targets; i++) {
    n += !plan->targets[i].missing;
  }
  LogFields lf = {0};
  _cleanup_free_ char *cmd = command_line(o->paths);
  log_field(&lf, "RALON_BACKEND", "%s", backend_to_string(plan->backend));
  log_field(&lf, "RALON_BACKEND_REASON", "%s", why ? why : "");
  log_field(&lf, "RALON_ROOT", "%s", p->policy->root);
  log_field(&lf, "RALON_POLICY", "%s", p->policy->file);
  log_field(&lf, "RALON_PROTECTED", "%zu", n);
  log_field(&lf, "RALON_COMMAND", "%s", cmd);
  log_field(&lf, "RALON_LANDLOCK_ABI", "%d", av->landlock_abi > 0 ? av->landlock_abi : 0);
  if (requested == BACKEND_AUTO && plan->backend != BACKEND_MOUNT) {
    _cleanup_free_ char *d = enforce_describe(av, BACKEND_MOUNT);
    log_field(&lf, "RALON_FALLBACK", "%s", d);
  }
  if (o->seal) {
    log_field(&lf, "RALON_SEAL", "1");
  }
  log_send(LOG_RUN, &lf, "Locked %zu path(s) of %s with the %s backend, starting %s", n,
           p->policy->root, backend_to_string(plan->backend), o->paths[0]);
}

typedef struct {
  const Options *o;
  const Project *p;
  const Plan *plan;
  const Availability *av;
  Backend requested;
  const char *why;
} RunReport;

/* The restriction is in place: say so (unless -q), then the warnings, and
 * let the journal keep it. Never before, so that neither the line nor the
 * record claims paths locked by a run that then failed. */
static void run_ready(void *userdata) {
  const RunReport *r = userdata;
  if (!r->o->quiet) {
    size_t n = 0;
    for (size_t i = 0; i < r->plan->n_targets; i++) {
      n += !r->plan->targets[i].missing;
    }
    print_note(_("%zu path(s) locked via the %s backend"), n,
               backend_to_string(r->plan->backend));
    print_warnings(r->p, "run");
  } else {
    log_findings(r->p, "run");
  }
  log_run(r->o, r->p, r->plan, r->av, r->requested, r->why);
  /* What a wrapper inside looks at, so it does not wrap again; set once
   * the restriction holds, so that ralon's own errors before it can tell
   * an enclosing run from this one. */
  if (setenv(RALON_ACTIVE_ROOT, r->p->policy->root, 1) < 0) {
    oom();
  }
}

/* Whether something other than the file's mode keeps this process from
 * writing `file`: a read-only mount (the mount backend), or a denial that
 * access(2), which only asks the mode, does not foresee (Landlock). Opens
 * it for writing, writes nothing. */
static bool policy_write_denied(const char *file) {
  int fd = open(file, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return false;
  }
  return errno == EROFS || (errno == EACCES && access(file, W_OK) == 0);
}

/* The guard stopped the sandbox: say which paths changed, that the agent
 * may have written them in the moment before, and how to avoid it. */
static void report_guard_stop(const Options *o, const Project *p, const GuardResult *g) {
  if (g->failure != NULL) {
    print_error(_("the guard stopped the sandbox: %s"), g->failure);
  }
  for (size_t i = 0; i < g->n_changed; i++) {
    print_error(_("stopped the sandbox: %s changed outside it while `%s` ran, without "
                  "`ralon pause`; the agent may have written it in the moment before it was "
                  "stopped"),
                g->changed[i], o->paths[0]);
  }
  print_note(_("change protected files under `ralon pause -- COMMAND` (or between `ralon "
               "pause` and `ralon resume`), or use --backend landlock, whose rules follow the "
               "files"));
  if (!log_enabled()) {
    return;
  }
  LogFields lf = {0};
  _cleanup_free_ char *cmd = command_line(o->paths);
  for (size_t i = 0; i < g->n_changed; i++) {
    log_field(&lf, "RALON_PATH", "%s", g->changed[i]);
  }
  if (g->failure != NULL) {
    log_field(&lf, "RALON_ERROR", "%s", g->failure);
  }
  log_field(&lf, "RALON_ROOT", "%s", p->policy->root);
  log_field(&lf, "RALON_POLICY", "%s", p->policy->file);
  log_field(&lf, "RALON_COMMAND", "%s", cmd);
  log_send(LOG_GUARD_STOP, &lf, "Stopped %s in %s: %s", o->paths[0], p->policy->root,
           g->n_changed > 0 ? g->changed[0] : g->failure ? g->failure : "?");
}

/* The mount backend: the command runs under the guard, and ralon exits as
 * it did (or with GUARD_EXIT_STOPPED when the guard stopped it). */
static int run_guarded(const Options *o, const Project *p, const Plan *plan,
                       const Availability *av, RunReport *report, Error *err) {
  GuardConfig gc = {
      .plan = plan,
      .root = p->scan->canon_root ? p->scan->canon_root : p->policy->root,
      .argv = o->paths,
      .seal = o->seal,
      .landlock_abi = av->landlock_abi,
      .ready = run_ready,
      .userdata = report,
  };
  GuardResult res;
  if (guard_run(&gc, &res, err) < 0) {
    log_failure(o, p, BACKEND_MOUNT, err);
    return -1;
  }
  if (res.stopped) {
    report_guard_stop(o, p, &res);
    guard_result_clear(&res);
    return GUARD_EXIT_STOPPED;
  }
  int status = res.wstatus;
  guard_result_clear(&res);
  return guard_exit_status(status);
}

int command_run(const Options *o, Error *err) {
  Project p;
  Error discover_err = {0};
  int r = project_open(o, false, &p, &discover_err);
  if (r < 0) {
    /* Only "there is none": a policy that cannot be read, or a directory
     * on the way that cannot be searched, is an error even with
     * --if-policy. */
    bool none = r == -ENOENT;
    project_clear(&p);
    if (none && o->if_policy && o->dry_run) {
      error_clear(&discover_err);
      return print_unchanged(o, NULL);
    }
    if (none && o->if_policy) {
      error_clear(&discover_err);
      return exec_unchanged(o, "no agent.lock", err);
    }
    error_set(err, discover_err.errnum, "%s", discover_err.message);
    error_clear(&discover_err);
    return -1;
  }
  /* A distribution's wrapper inside a `ralon run` of the same project:
   * that sandbox already holds. Explicit nesting (no --if-policy) nests,
   * and so does a request for more than any run gives (--seal, --strict,
   * a named backend), which the run outside may not have made: passing
   * through would drop it without a word. The variable alone proves
   * nothing (anything can set it): the policy must be beyond writing
   * here too. */
  const char *active = getenv(RALON_ACTIVE_ROOT);
  bool plain = !o->seal && !o->strict && (o->backend == NULL || streq(o->backend, "auto"));
  if (o->if_policy && plain && active != NULL && streq(active, p.policy->root) &&
      policy_write_denied(p.policy->file)) {
    if (o->dry_run) {
      r = print_unchanged(o, &p);
      project_clear(&p);
      return r;
    }
    project_clear(&p);
    return exec_unchanged(o, "already inside ralon run for this project", err);
  }
  /* The audit's findings are printed (not with -q), recorded in the
   * journal, or judged (--strict, --dry-run); where none of that happens,
   * nothing would read them, and its reading of the mount table, the
   * git configuration and the protected directories is skipped. */
  bool audit = !o->quiet || o->strict || o->dry_run || log_enabled();
  /* The directories it lists on the way to protected paths serve the
   * Landlock carve-out too. */
  if (project_scan(&p, SCAN_KEEP_LISTINGS, audit, err) < 0) {
    project_clear(&p);
    return -1;
  }
  /* The run refuses such a descriptor before any finding is read; the dry
   * run says so (below), and lists it among the findings as status does. */
  if (o->dry_run) {
    audit_descriptors(&p);
  }

  Backend requested = o->backend ? backend_from_string(o->backend) : BACKEND_AUTO;
  Availability av;
  enforce_availability_for(requested, o->dry_run, p.policy->root, &av);
  Backend chosen = BACKEND_LANDLOCK;
  _cleanup_free_ char *why = NULL;
  _cleanup_error_ Error select_err = {0};
  bool enforceable = enforce_select(requested, &av, &chosen, &why, &select_err) == 0;
  /* --seal: the Landlock backend's domain is the seal; the mount
   * backend adds one. */
  bool scoped = false;
  if (enforceable && o->seal && enforce_seal_check(chosen, av.landlock_abi, &scoped,
                                                   &select_err) < 0) {
    enforceable = false; /* `chosen` and `why` stay: the backend is not the problem */
  }
  _cleanup_free_ char *refusal =
      enforceable && chosen == BACKEND_MOUNT ? mount_refusal(p.policy) : NULL;
  if (refusal != NULL) {
    enforceable = false;
    error_set(&select_err, ELOOP, "%s", refusal);
  }
  if (!enforceable) {
    if (!o->dry_run) {
      log_failure(o, &p, requested, &select_err);
      project_clear(&p);
      return error_set(err, select_err.errnum, "%s", select_err.message);
    }
    if (why == NULL) {
      chosen = requested == BACKEND_MOUNT ? BACKEND_MOUNT : BACKEND_LANDLOCK;
      why = xstrdup(_("not available here"));
    }
  }

  PlanTarget *targets = NULL;
  size_t n_targets = 0;
  Plan plan = {0};
  const char *canon = p.scan->canon_root;
  /* Which files get no Landlock rule is read by the audit and the dry
   * run only; without them, the lister leaves it to landlock_apply. It
   * keeps the directories it lists open for the rules to be opened
   * through, once inherited descriptors have been judged (before any of
   * ralon's own is kept). */
  ScannedDirs scanned = {
      .root = canon,
      .scan = p.scan,
      .files_unchecked = !audit && !o->dry_run,
      .keep_dirs = !o->dry_run,
  };
  /* The dry run judges the inherited descriptors as the run would, and
   * reports a refusal as what would fail. */
  _cleanup_error_ Error fd_err = {0};
  /* So do the descriptors the landlock backend holds: the directories it
   * lists are kept open (before the plan is built, so the run does not
   * run out half-way), then its rules (after). */
  _cleanup_error_ Error nofile_err = {0};
  Error *nofile = o->dry_run ? &nofile_err : err;
  if (enforce_targets(p.policy, p.matcher, p.scan, &targets, &n_targets, err) < 0 ||
      (sys_check_inherited_fds(chosen, targets, n_targets, o->dry_run ? &fd_err : err) < 0 &&
       !o->dry_run) ||
      (enforce_check_descriptors(chosen, targets, n_targets, NULL, nofile) < 0 && !o->dry_run) ||
      plan_build(chosen, targets, n_targets, sys_list_dir_scanned, &scanned, &plan, err) < 0 ||
      (nofile_err.message == NULL &&
       enforce_check_descriptors(chosen, NULL, 0, &plan, nofile) < 0 && !o->dry_run)) {
    if (!o->dry_run) {
      log_failure(o, &p, chosen, err);
    }
    if (plan.targets == NULL) {
      plan_targets_free(targets, n_targets);
    }
    sys_scanned_dirs_clear(&scanned);
    plan_clear(&plan);
    project_clear(&p);
    return -1;
  }
  sys_give_kept_dirs(&scanned, &plan);
  if (audit) {
    audit_plan_missing(&plan, p.policy->root, &p.findings);
  }

  if (plan.backend == BACKEND_LANDLOCK) {
    enforce_withhold_mounted(&plan);
    if (audit) {
      audit_landlock(&plan, av.landlock_abi, canon, &p.findings);
    }
  }

  if (enforceable && fd_err.message != NULL) {
    enforceable = false;
    error_set(&select_err, fd_err.errnum, "%s", fd_err.message);
  } else if (enforceable && nofile_err.message != NULL) {
    enforceable = false;
    error_set(&select_err, nofile_err.errnum, "%s", nofile_err.message);
  }
  /* --strict refuses the first finding that weakens protection: the run
   * before starting anything, the dry run by saying it would. */
  const AuditFinding *weakening = NULL;
  for (size_t i = 0; o->strict && i < p.findings.n && weakening == NULL; i++) {
    if (audit_weakens(p.findings.items[i].kind)) {
      weakening = &p.findings.items[i];
    }
  }
  if (weakening != NULL && o->dry_run && enforceable) {
    enforceable = false;
    error_set(&select_err, EPERM, _("%s %s (refusing to run with --strict)"), weakening->subject,
              weakening->detail);
  }
  /* Last, as the run finds it: once the restriction holds. */
  if (o->dry_run && enforceable && enforce_check_command(o->paths, &select_err) < 0) {
    enforceable = false;
  }

  if (o->dry_run) {
    if (o->json) {
      json_object *doc = json_plan(&plan, &p, why, o->seal, scoped, av.landlock_abi);
      json_object_object_add(doc, "enforceable", json_object_new_boolean(enforceable));
      json_add_text(doc, "error", enforceable ? NULL : select_err.message);
      json_print(doc);
      log_findings(&p, "run --dry-run");
    } else {
      print_plan(&plan, &p, o, why, scoped, av.landlock_abi);
      if (!enforceable) {
        printf("\n%s %s\n", _("would fail:"), select_err.message);
      }
      if (o->quiet) {
        log_findings(&p, "run --dry-run");
      } else {
        print_warnings(&p, "run --dry-run");
      }
    }
    plan_clear(&plan);
    project_clear(&p);
    return enforceable ? EXIT_OK : EXIT_PROTECTED;
  }

  if (weakening != NULL) {
    r = error_set(err, EPERM, _("%s %s (refusing to run with --strict)"), weakening->subject,
                  weakening->detail);
    log_findings(&p, "run");
    log_failure(o, &p, chosen, err);
    plan_clear(&plan);
    project_clear(&p);
    return r;
  }
  RunReport report = {o, &p, &plan, &av, requested, why};
  if (plan.backend == BACKEND_MOUNT) {
    r = run_guarded(o, &p, &plan, &av, &report, err);
    plan_clear(&plan);
    project_clear(&p);
    return r;
  }
  r = enforce_exec(&plan, &av, o->seal, o->paths, run_ready, &report, err);
  /* Only reached when nothing was executed. */
  log_failure(o, &p, chosen, err);
  plan_clear(&plan);
  project_clear(&p);
  return r < 0 ? -1 : EXIT_ERROR;
}

/* ---- guard ------------------------------------------------------------ */

int command_guard(const Options *o, Error *err) {
  Project p;
  if (project_open(o, false, &p, err) < 0) {
    project_clear(&p);
    return -1;
  }
  if (o->stop) {
    _cleanup_free_ char *root = shown(p.policy->root, false);
    printf(_("no guard was running for %s\n"), root);
    project_clear(&p);
    return EXIT_OK;
  }
  project_clear(&p);
  return error_set(err, ENOTSUP, "%s", unguarded_reason());
}

/* ---- hook ------------------------------------------------------------- */

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
  _cleanup_free_ char *payload = NULL;
  size_t len = 0;
  int r = read_fd_limited(STDIN_FILENO, HOOK_MAX_PAYLOAD, &payload, &len);
  if (r < 0) {
    /* Too big or unreadable: a length hook_check refuses unread. */
    len = r == -EFBIG ? HOOK_MAX_PAYLOAD : 0;
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

/* --agent: none or `auto`, the agents found in the project or in home;
 * `all`; or names. */
static int hook_selection(const Options *o, const char *root, const char *home,
                          bool ret[_AGENT_MAX], Error *err) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    ret[a] = false;
  }
  if (o->n_agents == 0) {
    hook_detect(root, home, ret);
    return 0;
  }
  for (size_t i = 0; i < o->n_agents; i++) {
    const char *name = o->agents[i];
    bool found[_AGENT_MAX];
    if (streq(name, "auto") || streq(name, "all")) {
      if (streq(name, "auto")) {
        hook_detect(root, home, found);
      }
      for (int a = 0; a < _AGENT_MAX; a++) {
        ret[a] |= streq(name, "all") || found[a];
      }
      continue;
    }
    Agent a = agent_from_string(name);
    if (a < 0) {
      return error_set(err, EINVAL, _("unknown agent `%s`"), name);
    }
    ret[a] = true;
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

static int hook_install_command(const Options *o, bool remove, Error *err) {
  _cleanup_free_ char *root = hook_root(o, err);
  if (root == NULL) {
    return -1;
  }
  const char *home = getenv("HOME");
  bool selected[_AGENT_MAX];
  if (hook_selection(o, root, home, selected, err) < 0) {
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
      json_add_string(j, "content", o->dry_run ? c.content : NULL);
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
    const char *note = hook_trust_note(a);
    if (!remove && !o->user && change && note != NULL && list == NULL) {
      print_note("%s", note);
    }
    hook_change_clear(&c);
  }
  if (list != NULL) {
    json_object *doc = json_object_new_object();
    json_add_string(doc, "root", root);
    json_object_object_add(doc, "hooks", list);
    json_print(doc);
  }
  if (changed && !o->dry_run && !hook_ralon_on_path(getenv("PATH"), NULL)) {
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
