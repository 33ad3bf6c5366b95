/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon check`: whether paths are protected, or what is. */
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
