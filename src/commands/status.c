/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon status`: the policy, what it protects, the backends, the hooks and every weak spot. */
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

/* ---- status ----------------------------------------------------------- */
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
  _cleanup_free_ uint32_t *matches = NULL;
  pattern_matches(p, &matches, NULL);
  for (size_t i = 0; i < pol->n_patterns; i++) {
    /* project_open was asked for the positions (PROJECT_POSITIONS). */
    const PolicyPosition *pos = &pol->positions[i];
    json_object *e = json_object_new_object();
    json_add_string(e, "pattern", pol->patterns[i].pattern);
    json_add_string(e, "declared", pos->declared);
    json_object_object_add(e, "implicit", json_object_new_boolean(i == 0));
    json_object_object_add(e, "literal", json_object_new_boolean(matcher_is_literal(p->matcher, i)));
    json_object_object_add(e, "line", pos->line ? json_object_new_int((int)pos->line) : NULL);
    json_object_object_add(e, "column", pos->column ? json_object_new_int((int)pos->column) : NULL);
    json_object_object_add(e, "matches", json_object_new_uint64(matches[i]));
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


int command_status(const Options *o, Error *err) {
  Project p;
  if (project_open(o, PROJECT_SCAN | (o->json ? PROJECT_POSITIONS : 0), &p, err) < 0) {
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
  _cleanup_free_ uint32_t *matches = NULL;
  _cleanup_free_ bool *within = NULL;
  pattern_matches(&p, &matches, &within);
  for (size_t i = 0; i < pol->n_patterns; i++) {
    bool inside = within[i];
    size_t hits = matches[i];
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
