/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon run`: the decision (backend, plan, refusals, findings), printed by the dry run and enforced by the run. */
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
#include "gitscan.h"
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
  if (enter_dir(o->dir, err) < 0) {
    return -1;
  }
  fflush(stdout);
  execvp(o->paths[0], o->paths);
  return error_exec(err, errno, o->paths[0]);
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
  /* Under the guard: RALON_ACTIVE_ROOT as it was before run_announce()
   * set it for the command, in memory the guard shares until the execve. */
  char *outer_active;
} RunReport;

/* A finding's kind in a few words, for the run's one line per kind; the
 * finding's subjects follow, unless NULL is returned for `*alone` (the
 * subject is a phrase, not a name). `run --dry-run` and `status` give the
 * whole finding. */
static const char *finding_brief(AuditKind k, bool *alone) {
  *alone = false;
  switch (k) {
  case AUDIT_UNMATCHED_LITERAL:
    return _("not locked, as nothing on disk matches");
  case AUDIT_UNMATCHED_GLOB:
    return _("matching nothing on disk yet");
  case AUDIT_SYMLINK:
    return _("symbolic links on the way to protected paths (their targets are locked)");
  case AUDIT_HARD_LINKS:
    return _("protected files with other, unprotected names (hard links)");
  case AUDIT_GIT_HOOKS:
    return _("not protected, though git runs the hooks in it");
  case AUDIT_GIT_CONFIG:
    return _("not protected, though git runs commands it sets");
  case AUDIT_UNREADABLE:
    return _("could not be read in full, so what is protected there may be missed");
  case AUDIT_ROOT:
    *alone = true;
    return _("running as root: the agent keeps root's access to everything not protected");
  case AUDIT_SECOND_MOUNT:
    return _("second paths to protected files, not restricted");
  case AUDIT_BIND_MOUNT:
    return _("on a bind mount, writable through another path");
  case AUDIT_OVERLAY:
    return _("on an overlay file system, whose layers can be written elsewhere");
  case AUDIT_FUSE:
    return _("on a FUSE file system, whose daemon writes outside the sandbox");
  case AUDIT_NETWORK_FS:
    return _("on a network file system, which other machines can write");
  case AUDIT_SYMLINK_OUTSIDE:
    return _("symbolic links in protected directories to unprotected paths");
  case AUDIT_GIT_HOOKS_PATH:
    return _("core.hooksPath points to an unprotected directory");
  case AUDIT_GIT_FSMONITOR_UNPROTECTED:
    return _("core.fsmonitor runs an unprotected program");
  case AUDIT_GIT_FSMONITOR:
    return _("core.fsmonitor runs a program outside the sandbox");
  case AUDIT_LANDLOCK_METADATA:
    *alone = true;
    return _("Landlock does not stop chmod, chown, touch or setxattr on protected paths");
  case AUDIT_LANDLOCK_TRUNCATE:
    *alone = true;
    return _("this kernel's Landlock does not stop truncating protected files");
  case AUDIT_LANDLOCK_NO_NEW_ENTRIES:
    return _("creating, removing or renaming entries fails with \"Permission denied\" in");
  case AUDIT_INHERITED_FD:
    return _("open for writing on an inherited descriptor");
  case AUDIT_CASE_INSENSITIVE:
    return _("case-insensitive: other spellings of protected names are not matched");
  case AUDIT_LANDLOCK_LINKED_FILE:
    return _("read-only too, since they have other names");
  case AUDIT_LANDLOCK_UNLISTED:
    return _("nothing can be written in these directories this user cannot list");
  case AUDIT_ENCLOSING_POLICY:
    return _("only the nearest agent.lock applies, not");
  case AUDIT_GIT_DIR_OUTSIDE:
    return _("git's hooks and configuration are outside the project");
  case AUDIT_GIT_COMMONDIR_UNPROTECTED:
    return _("not protected, though it names the repository whose hooks git runs");
  case AUDIT_GIT_COMMONDIR:
    return _("sends git to hooks and configuration elsewhere");
  case AUDIT_GIT_NESTED_REPO:
    return _("repositories inside the project, whose configuration git reads");
  case AUDIT_GIT_BARE_REPO:
    return _("directories git takes for bare repositories");
  case AUDIT_GIT_INCLUDE:
    return _("unprotected configuration files that git reads");
  case AUDIT_GIT_COMMAND:
    return _("git settings in unprotected files that run commands");
  case AUDIT_GIT_SEQUENCER_EXEC:
    return _("exec lines in a rebase git would run on --continue");
  case AUDIT_GIT_WALK_LIMIT:
    *alone = true;
    return _("the search for repositories inside the project stopped early");
  case _AUDIT_KIND_MAX:
  case _AUDIT_KIND_INVALID:
    break;
  }
  return _("weakens the protection");
}

/* What `run` says before the command starts: one line per kind of
 * finding, in the order first found, naming at most a few subjects, and
 * where the rest is told. The journal keeps every finding whole. */
#define BRIEF_SUBJECTS 4
static void print_warnings_brief(const Project *p) {
  const AuditFindings *f = &p->findings;
  _cleanup_free_ bool *done = xcalloc(f->n + 1, sizeof(bool));
  for (size_t i = 0; i < f->n; i++) {
    if (done[i]) {
      continue;
    }
    bool alone;
    const char *brief = finding_brief(f->items[i].kind, &alone);
    char *buf = NULL;
    size_t size = 0, n = 0;
    FILE *out = open_memstream(&buf, &size);
    if (out == NULL) {
      oom();
    }
    for (size_t j = i; j < f->n; j++) {
      if (done[j] || f->items[j].kind != f->items[i].kind) {
        continue;
      }
      done[j] = true;
      if (!alone && n < BRIEF_SUBJECTS) {
        _cleanup_free_ char *subject = text_display(f->items[j].subject);
        fprintf(out, "%s%s", n > 0 ? ", " : "", subject);
      }
      n++;
    }
    if (!alone && n > BRIEF_SUBJECTS) {
      fputs(", ", out);
      fprintf(out, P_("and %zu more", "and %zu more", (unsigned long)(n - BRIEF_SUBJECTS)),
              n - BRIEF_SUBJECTS);
    }
    if (fclose(out) != 0) {
      oom();
    }
    if (alone) {
      print_warning("%s", brief);
    } else {
      print_warning("%s: %s", brief, buf);
    }
    free(buf);
  }
  if (f->n > 0) {
    print_note(_("`ralon run --dry-run` explains each warning, and what to do about it"));
  }
}

/* The restriction is in place: say so (unless -q), then the warnings.
 * Never before, so that the line does not claim paths locked by a run that
 * then failed. */
static void run_announce(void *userdata) {
  const RunReport *r = userdata;
  if (!r->o->quiet) {
    size_t n = 0;
    for (size_t i = 0; i < r->plan->n_targets; i++) {
      n += !r->plan->targets[i].missing;
    }
    print_note(_("%zu path(s) locked via the %s backend"), n,
               backend_to_string(r->plan->backend));
    print_warnings_brief(r->p);
  }
  /* What a wrapper inside looks at, so it does not wrap again; set once
   * the restriction holds, so that ralon's own errors before it can tell
   * an enclosing run from this one. */
  if (setenv(RALON_ACTIVE_ROOT, r->p->policy->root, 1) < 0) {
    oom();
  }
}

/* And the journal keeps it, as it keeps the findings; under the guard, from
 * the guard once the command runs (guard.h). */
static void run_log(void *userdata) {
  const RunReport *r = userdata;
  log_findings(r->p, "run");
  log_run(r->o, r->p, r->plan, r->av, r->requested, r->why);
}

static void run_ready(void *userdata) {
  run_announce(userdata);
  run_log(userdata);
}

/* The variable run_announce() set for the guard's command is the
 * command's, not the guard's: as it was before. */
static void restore_outer_active(const RunReport *r) {
  if (r->outer_active != NULL ? setenv(RALON_ACTIVE_ROOT, r->outer_active, 1) < 0
                              : unsetenv(RALON_ACTIVE_ROOT) < 0) {
    oom();
  }
}

/* The guard's side, once the command runs. */
static void run_started(void *userdata) {
  restore_outer_active(userdata);
  run_log(userdata);
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
                  "`ralon pause`; in the moment before it was stopped, the agent may have "
                  "written it, or made what stands there now (look before you use it)"),
                g->changed[i], o->paths[0]);
  }
  if (g->watch_limit) {
    /* Nothing changed: the guard could not watch every path. */
    print_note(_("raise the limit (sysctl fs.inotify.max_user_watches=N, as root), or use "
                 "--backend landlock, which needs no watches"));
  } else {
    print_note(_("change protected files under `ralon pause -- COMMAND` (or between `ralon "
                 "pause` and `ralon resume`), or use --backend landlock, whose rules follow "
                 "the files"));
  }
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
      .ready = run_announce,
      .started = run_started,
      .userdata = report,
  };
  const char *outer = getenv(RALON_ACTIVE_ROOT);
  report->outer_active = outer != NULL ? xstrdup(outer) : NULL;
  GuardResult res;
  /* What git would run later, as the audit found it, compared once the
   * agent has exited (it reports from outside the namespaces the guard
   * makes). Nothing would see the comparison with -q and no journal, and
   * the audit ran whenever something would (run_decide()). */
  GitWatch *watch = !o->quiet || log_enabled()
                        ? git_watch_start(p->policy->root, p->scan->canon_root, p->matcher,
                                          p->policy->file, o->quiet, &p->findings)
                        : NULL;
  int r = guard_run(&gc, &res, err);
  restore_outer_active(report); /* where the command's process set it and failed */
  free(report->outer_active);
  report->outer_active = NULL;
  if (r < 0) {
    git_watch_end(watch);
    log_failure(o, p, BACKEND_MOUNT, err);
    return -1;
  }
  git_watch_end(watch);
  if (res.stopped) {
    report_guard_stop(o, p, &res);
    guard_result_clear(&res);
    return GUARD_EXIT_STOPPED;
  }
  int status = res.wstatus;
  guard_result_clear(&res);
  return guard_exit_status(status);
}

/* Everything `run` decides before it acts, in one value: the dry run
 * prints it, the run enforces it (or refuses with `refusal`). */
typedef struct {
  Project p;
  Backend requested;
  /* The backend chosen; where none is available, the one the dry run
   * shows (and `why` says so). */
  Backend backend;
  char *why;
  Availability av;
  bool scoped; /* --seal also scopes signals and abstract sockets */
  Plan plan;
  /* The first reason the run refuses to start, in the order the run
   * meets them (message NULL: none), and the backend its journal record
   * names. */
  Error refusal;
  Backend refusal_backend;
  /* A finding that weakens the protection, with --strict. */
  const AuditFinding *weakening;
} RunDecision;

static void run_decision_clear(RunDecision *d) {
  plan_clear(&d->plan);
  free(d->why);
  error_clear(&d->refusal);
  project_clear(&d->p);
}

/* Takes `e` as the refusal, unless there is one already. */
static void refuse(RunDecision *d, Backend b, Error *e) {
  if (d->refusal.message == NULL) {
    d->refusal = *e;
    d->refusal_backend = b;
  } else {
    error_clear(e);
  }
  memset(e, 0, sizeof(*e));
}

/* Decides for the project in d->p (opened, not scanned). Returns -1 with
 * `err` only for what stops the dry run too (the scan, the targets, the
 * plan); every refusal of the run goes to d->refusal, and the run's stops
 * there: nothing after it is decided (no directory kept open for a plan
 * that will not be enforced). The dry run goes on, to show the plan. */
static int run_decide(const Options *o, RunDecision *d, Error *err) {
  /* The audit's findings are printed (not with -q), recorded in the
   * journal, or judged (--strict, --dry-run); where none of that happens,
   * nothing would read them, and its reading of the mount table, the
   * git configuration and the protected directories is skipped. */
  bool audit = !o->quiet || o->strict || o->dry_run || log_enabled();
  /* The directories it lists on the way to protected paths serve the
   * Landlock carve-out too. */
  if (project_scan(&d->p, SCAN_KEEP_LISTINGS, audit, err) < 0) {
    return -1;
  }
  d->requested = o->backend ? backend_from_string(o->backend) : BACKEND_AUTO;
  enforce_availability_for(d->requested, o->dry_run, d->p.policy->root, &d->av);
  d->backend = BACKEND_LANDLOCK;
  Error e = {0};
  if (enforce_select(d->requested, &d->av, &d->backend, &d->why, &e) < 0) {
    refuse(d, d->requested, &e);
    d->backend = d->requested == BACKEND_MOUNT ? BACKEND_MOUNT : BACKEND_LANDLOCK;
    free(d->why);
    d->why = xstrdup(_("not available here"));
  } else if (o->seal &&
             enforce_seal_check(d->backend, d->av.landlock_abi, &d->scoped, &e) < 0) {
    /* The backend is not the problem: it stays, and so does why. */
    refuse(d, d->requested, &e);
  } else if (d->backend == BACKEND_MOUNT) {
    _cleanup_free_ char *refusal = mount_refusal(d->p.policy);
    if (refusal != NULL) {
      error_set(&e, ELOOP, "%s", refusal);
      refuse(d, d->requested, &e);
    }
  }
  if (d->refusal.message != NULL && !o->dry_run) {
    return 0;
  }

  PlanTarget *targets = NULL;
  size_t n_targets = 0;
  const char *canon = d->p.scan->canon_root;
  /* Which files get no Landlock rule is read by the audit and the dry
   * run only; without them, the lister leaves it to landlock_apply. It
   * keeps the directories it lists open for the rules to be opened
   * through, once inherited descriptors have been judged (before any of
   * ralon's own is kept). */
  ScannedDirs scanned = {
      .root = canon,
      .scan = d->p.scan,
      .files_unchecked = !audit && !o->dry_run,
      .keep_dirs = !o->dry_run,
  };
  if (enforce_targets(d->p.policy, d->p.matcher, d->p.scan, &targets, &n_targets, err) < 0) {
    return -1;
  }
  /* The descriptors open, read once for every check below (before the
   * lister keeps any of its own): the dry run reads their names too, for
   * the finding `status` reports as well. */
  _cleanup_(sys_open_fds_clear) OpenFds fds = {0};
  sys_open_fds(o->dry_run, &fds);
  /* The run refuses such a descriptor before any finding is read; the dry
   * run says so (below), and lists it among the findings as status does. */
  if (o->dry_run && fds.error == 0) {
    audit_inherited_fds(d->p.policy, d->p.matcher, d->p.scan, fds.fds, fds.n,
                        &d->p.findings);
  }
  /* Inherited descriptors that would bypass the plan, and (the landlock
   * backend) more directories to hold open than the limit of open files
   * allows: the directories it lists are kept open (so checked before
   * the plan is built, and the run does not run out half-way), then its
   * rules (after). */
  if (sys_check_inherited_fds(d->backend, targets, n_targets, &fds, &e) < 0) {
    refuse(d, d->backend, &e);
  }
  bool nofile = enforce_check_descriptors(d->backend, targets, n_targets, NULL, &fds, &e) < 0;
  if (nofile) {
    refuse(d, d->backend, &e);
  }
  if (d->refusal.message != NULL && !o->dry_run) {
    plan_targets_free(targets, n_targets);
    return 0;
  }
  if (plan_build(d->backend, targets, n_targets, sys_list_dir_scanned, &scanned, &d->plan,
                 err) < 0) {
    if (d->plan.targets == NULL) {
      plan_targets_free(targets, n_targets);
    }
    sys_scanned_dirs_clear(&scanned);
    return -1;
  }
  if (!nofile && enforce_check_descriptors(d->backend, NULL, 0, &d->plan, &fds, &e) < 0) {
    refuse(d, d->backend, &e);
  }
  sys_give_kept_dirs(&scanned, &d->plan);
  if (audit) {
    audit_plan_missing(&d->plan, d->p.policy->root, &d->p.findings);
  }
  if (d->plan.backend == BACKEND_LANDLOCK) {
    enforce_withhold_mounted(&d->plan);
    if (audit) {
      audit_landlock(&d->plan, d->av.landlock_abi, canon, &d->p.findings);
    }
  }
  /* --strict refuses the first finding that weakens protection. */
  for (size_t i = 0; o->strict && i < d->p.findings.n && d->weakening == NULL; i++) {
    if (audit_weakens(d->p.findings.items[i].kind)) {
      d->weakening = &d->p.findings.items[i];
      error_set(&e, EPERM, _("%s %s (refusing to run with --strict)"), d->weakening->subject,
                d->weakening->detail);
      refuse(d, d->backend, &e);
    }
  }
  /* Last, as the run finds it: once the restriction holds (the run
   * itself looks then, in the restricted process). */
  if (o->dry_run && enforce_check_command(o->paths, &e) < 0) {
    refuse(d, d->backend, &e);
  }
  return 0;
}

static int print_decision(const Options *o, RunDecision *d) {
  bool enforceable = d->refusal.message == NULL;
  if (o->json) {
    json_object *doc =
        json_plan(&d->plan, &d->p, d->why, o->seal, d->scoped, d->av.landlock_abi);
    json_object_object_add(doc, "enforceable", json_object_new_boolean(enforceable));
    json_add_text(doc, "error", d->refusal.message);
    json_print(doc);
    log_findings(&d->p, "run --dry-run");
  } else {
    print_plan(&d->plan, &d->p, o, d->why, d->scoped, d->av.landlock_abi);
    if (!enforceable) {
      printf("\n%s %s\n", _("would fail:"), d->refusal.message);
    }
    if (o->quiet) {
      log_findings(&d->p, "run --dry-run");
    } else {
      print_warnings(&d->p, "run --dry-run");
    }
  }
  return enforceable ? EXIT_OK : EXIT_PROTECTED;
}

int command_run(const Options *o, Error *err) {
  _cleanup_(run_decision_clear) RunDecision d = {0};
  Error discover_err = {0};
  int r = project_open(o, 0, &d.p, &discover_err);
  if (r < 0) {
    /* Only "there is none": a policy that cannot be read, or a directory
     * on the way that cannot be searched, is an error even with
     * --if-policy. */
    bool none = r == -ENOENT;
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
  if (o->if_policy && plain && active != NULL && streq(active, d.p.policy->root) &&
      policy_write_denied(d.p.policy->file)) {
    if (o->dry_run) {
      return print_unchanged(o, &d.p);
    }
    return exec_unchanged(o, "already inside ralon run for this project", err);
  }
  if (run_decide(o, &d, err) < 0) {
    if (!o->dry_run) {
      log_failure(o, &d.p, d.backend, err);
    }
    return -1;
  }
  if (o->dry_run) {
    return print_decision(o, &d);
  }
  if (d.refusal.message != NULL) {
    if (d.weakening != NULL) {
      log_findings(&d.p, "run");
    }
    log_failure(o, &d.p, d.refusal_backend, &d.refusal);
    return error_set(err, d.refusal.errnum, "%s", d.refusal.message);
  }
  /* -C DIR: the command starts there, as if ralon had (discovery and the
   * plan are done from it already). */
  if (enter_dir(o->dir, err) < 0) {
    log_failure(o, &d.p, d.backend, err);
    return -1;
  }
  RunReport report = {o, &d.p, &d.plan, &d.av, d.requested, d.why, NULL};
  if (d.plan.backend == BACKEND_MOUNT) {
    return run_guarded(o, &d.p, &d.plan, &d.av, &report, err);
  }
  r = enforce_exec(&d.plan, &d.av, o->seal, o->paths, run_ready, &report, err);
  /* Only reached when nothing was executed. */
  log_failure(o, &d.p, d.backend, err);
  return r < 0 ? -1 : EXIT_ERROR;
}
