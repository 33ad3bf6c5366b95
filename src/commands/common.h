/* SPDX-License-Identifier: Apache-2.0 */
/* What the commands share (src/commands/, one file per command): the
 * project as a command sees it, the JSON and text pieces more than one
 * command prints, and the agents' hooks as `status` and `hook list` show
 * them. Everything a user reads on stdout is printed by the commands; the
 * layers below never print. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"
#include "cli.h"
#include "enforce/enforce.h"
#include "hook/install.h"
#include "json.h"
#include "matcher.h"
#include "policy.h"
#include "scan.h"
#include "util.h"

/* Everything a command needs to know about the project. */
typedef struct {
  Policy *policy;
  Matcher *matcher;
  ScanResult *scan; /* only when scanned */
  AuditFindings findings;
} Project;

/* Whether our hook is in each agent's configuration, per scope. */
typedef struct {
  Agent agent;
  bool user;
  char *path;
  const char *state; /* "installed", "outdated", "absent" or "error" */
  char *error;
  /* Installed or outdated: whether the agent will run it here, and what
   * to do when it will not (NULL: nothing to say). */
  HookRuns runs;
  char *note;
} HookState;

void project_clear(Project *p);
/* `-C DIR` for a command that starts another (`run`, `pause -- CMD`):
 * makes DIR the working directory, as if ralon had been started there
 * (PWD too). Nothing when `dir` is NULL. */
int enter_dir(const char *dir, Error *err);
int project_scan(Project *p, unsigned flags, bool audit, Error *err);
enum {
  PROJECT_SCAN = 1 << 0,      /* and scan it (project_scan, with the audit) */
  PROJECT_POSITIONS = 1 << 1, /* keep where each pattern was written (Policy.positions) */
  PROJECT_DUPLICATES = 1 << 2, /* keep patterns written twice (POLICY_DUPLICATES) */
};
int project_open(const Options *o, unsigned what, Project *p, Error *err);
void json_print(json_object *o);
json_object *json_name(const char *s);
void json_add_string(json_object *o, const char *key, const char *value);
void json_add_text(json_object *o, const char *key, const char *value);
json_object *json_protected_path(const Policy *pol, const ProtectedPath *p);
json_object *json_findings(const AuditFindings *f);
void pattern_matches(const Project *p, uint32_t **counts, bool **inside);
json_object *json_project(const Project *p);
void log_findings(const Project *p, const char *command);
void print_warnings(const Project *p, const char *command);
char *shown(const char *name, bool dir);
char *mount_refusal(const Policy *pol);
size_t new_names_open(const Plan *plan, const Project *p, size_t **ret);
ssize_t status_new_names(const Project *p, Backend backend, size_t **ret);
json_object *json_patterns(const Policy *pol, const size_t *idx, size_t n);
void print_locked(const char *rel, bool dir, const char *pattern);
size_t hook_states(const char *root, const char *home, HookState **ret);
void hook_states_free(HookState *v, size_t n);
const char *hook_state_text(const char *state);
void print_hook_state(const HookState *h);
void print_hook_note(const HookState *h, const char *indent);
json_object *json_hook_states(const HookState *v, size_t n);
void print_status_hooks(const char *root);
void audit_descriptors(Project *p);

/* `hook install` and `hook uninstall` (commands/hook.c), also run by
 * `init`. */
int hook_install_command(const Options *o, bool remove, Error *err);
