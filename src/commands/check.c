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
#include "gitscan.h"
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

/* ---- check --range, check --staged ----------------------------------------- */

static const char *change_text(const char *change) {
  if (streq(change, "added")) {
    return _("added");
  }
  if (streq(change, "deleted")) {
    return _("deleted");
  }
  if (streq(change, "renamed-from")) {
    return _("renamed away");
  }
  if (streq(change, "renamed-to")) {
    return _("renamed here");
  }
  if (streq(change, "mode")) {
    return _("mode changed");
  }
  if (streq(change, "type")) {
    return _("type changed");
  }
  if (streq(change, "merge")) {
    return _("changed by a merge");
  }
  if (streq(change, "net")) {
    return _("differs at the end of the range, though no commit in it changes it");
  }
  return _("modified");
}

/* What commits in a range (or the index) change that the policy protects:
 * one line each, in check's format, with the commit. */
static int check_changes(const Options *o, Error *err) {
  GitChanges c;
  int r = o->staged ? git_staged_changes(o->dir, &c, err)
                    : git_range_changes(o->dir, o->range, &c, err);
  if (r < 0) {
    return -1;
  }
  if (o->json) {
    json_object *doc = json_object_new_object();
    json_add_string(doc, "policy", c.policy_file);
    json_object *pols = json_object_new_array();
    for (size_t i = 0; i < c.n_policies; i++) {
      json_object_array_add(pols, json_object_new_string(c.policies[i]));
    }
    json_object_object_add(doc, "policies", pols);
    json_add_string(doc, "base", c.base);
    if (o->staged) {
      json_object_object_add(doc, "staged", json_object_new_boolean(true));
    } else {
      json_add_string(doc, "range", o->range);
      json_object_object_add(doc, "commits", json_object_new_uint64((uint64_t)c.n_commits));
    }
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < c.n; i++) {
      json_object *e = json_object_new_object();
      json_add_string(e, "path", c.v[i].path);
      json_add_string(e, "status", "locked");
      json_add_string(e, "change", c.v[i].change);
      json_add_string(e, "commit", c.v[i].commit);
      json_add_string(e, "pattern", c.v[i].pattern);
      json_add_string(e, "policy", c.v[i].policy);
      json_object_array_add(a, e);
    }
    json_object_object_add(doc, "changes", a);
    json_object_object_add(doc, "locked", json_object_new_boolean(c.n > 0));
    json_print(doc);
  } else {
    for (size_t i = 0; i < c.n; i++) {
      const GitChange *g = &c.v[i];
      _cleanup_free_ char *name = shown(g->path, false), *pat = text_display(g->pattern);
      const char *red = color_on(stdout, COLOR_RED), *off = color_off(stdout);
      if (streq(g->policy_path, POLICY_FILE_NAME) && g->commit != NULL) {
        /* TRANSLATORS: the last two: how the path changed ("deleted"), and
         * the commit's abbreviated name. */
        printf(_("%s%s%s%s  (matches `%s`; %s in %.12s)\n"), red, _("locked    "), off, name, pat,
               change_text(g->change), g->commit);
      } else if (streq(g->policy_path, POLICY_FILE_NAME)) {
        printf(_("%s%s%s%s  (matches `%s`; %s, staged)\n"), red, _("locked    "), off, name, pat,
               change_text(g->change));
      } else {
        /* An agent.lock below the top of the repository: its pattern is
         * relative to its directory, so it is named. */
        _cleanup_free_ char *pol = shown(g->policy_path, false);
        if (g->commit != NULL) {
          /* TRANSLATORS: the pattern, the agent.lock that has it, how the
           * path changed ("deleted"), and the commit's abbreviated name. */
          printf(_("%s%s%s%s  (matches `%s` in %s; %s in %.12s)\n"), red, _("locked    "), off,
                 name, pat, pol, change_text(g->change), g->commit);
        } else {
          printf(_("%s%s%s%s  (matches `%s` in %s; %s, staged)\n"), red, _("locked    "), off,
                 name, pat, pol, change_text(g->change));
        }
      }
    }
  }
  /* Nothing was protected where the changes start: they cannot change a
   * protected path, so they pass; said, since a pull request that brings
   * the first agent.lock passes by it. Deleting or weakening one that the
   * base has is a change to a protected path, never this. */
  if (c.n_judged > 0 && c.n_governed == 0) {
    if (o->staged) {
      print_note(_("no agent.lock in %s at or above the staged paths: nothing was protected "
                   "there, so none of them is a protected path"),
                 c.base != NULL ? c.base_name : _("the working tree"));
    } else if (c.touches_policy) {
      print_note(_("no agent.lock in %s at or above the paths this range changes: nothing was "
                   "protected there, so it changes no protected path; the agent.lock it brings "
                   "protects from the first range whose base holds it"),
                 c.base_name);
    } else {
      print_note(_("no agent.lock in %s at or above the paths this range changes: nothing was "
                   "protected there, so it changes no protected path"),
                 c.base_name);
    }
  }
  r = c.n > 0 ? EXIT_PROTECTED : EXIT_OK;
  git_changes_clear(&c);
  return r;
}

int command_check(const Options *o, Error *err) {
  if (o->range != NULL || o->staged) {
    return check_changes(o, err);
  }
  Project p;
  bool list = o->n_paths == 0;
  /* A path's answer is the first pattern that matches it, whatever
   * duplicates follow. */
  int r = project_open(o, list ? PROJECT_SCAN : PROJECT_DUPLICATES, &p, err);
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
