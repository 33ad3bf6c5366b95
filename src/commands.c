/* SPDX-License-Identifier: Apache-2.0 */
/* One function per subcommand; everything a user reads on stdout is printed
 * here. Each returns an exit status (0 or 1) or -1 with *err set. */
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
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

static int project_open(const Options *o, bool scan, Project *p, Error *err) {
  memset(p, 0, sizeof(*p));
  if (policy_discover(o->dir, &p->policy, err) < 0) {
    return -1;
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
  if (!scan) {
    return 0;
  }
  if (scan_project(p->policy, p->matcher, &p->scan, err) < 0) {
    return -1;
  }
  audit_run(p->policy, p->matcher, p->scan, &p->findings);
  return 0;
}

/* ---- JSON ------------------------------------------------------------- */

static void json_print(json_object *o) {
  puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                             JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(o);
}

static void json_add_string(json_object *o, const char *key, const char *value) {
  json_object_object_add(o, key, value ? json_object_new_string(value) : NULL);
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
    _cleanup_free_ char *msg = xasprintf("%s %s", f->items[i].subject, f->items[i].detail);
    json_add_string(o, "message", msg);
    json_object_array_add(a, o);
  }
  return a;
}

static json_object *json_project(const Project *p) {
  json_object *o = json_object_new_object();
  json_add_string(o, "policy", p->policy->file);
  json_add_string(o, "root", p->policy->root);
  return o;
}

/* ---- human output ----------------------------------------------------- */

static void print_warnings(const AuditFindings *f) {
  for (size_t i = 0; i < f->n; i++) {
    print_warning("%s %s", f->items[i].subject, f->items[i].detail);
  }
}

static void print_locked(const char *rel, bool dir, const char *pattern) {
  /* TRANSLATORS: a column of its own; keep "locked", "writable" and
   * "outside" the same width (10 characters with the spaces). */
  printf("%s%s%s%s%s  (matches `%s`)\n", color_on(stdout, COLOR_RED), _("locked    "),
         color_off(stdout), rel[0] ? rel : ".", dir ? "/" : "", pattern);
}

/* ---- init ------------------------------------------------------------- */

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
  _cleanup_free_ char *text = policy_starter_text(dir);
  int r = write_file_atomic(dir, POLICY_FILE_NAME, text, strlen(text), o->force);
  if (r == -EEXIST) {
    return error_set(err, EEXIST, _("%s already exists (use --force to overwrite)"), file);
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot write %s: %m"), file);
  }
  printf(_("wrote %s\n"), file);
  printf("\n");
  fputs(_("Now edit agent.lock, then protect it:\n"
          "  ralon run -- <your agent>   the agent and everything it spawns\n"
          "\n"
          "An agent that reaches a protected path reports\n"
          "`EROFS: read-only file system`, or `EACCES: permission denied`,\n"
          "which is ralon refusing the write, not a damaged file.\n"),
        stdout);
  return 0;
}

/* ---- check ------------------------------------------------------------ */

typedef enum {
  VERDICT_WRITABLE,
  VERDICT_LOCKED,
  VERDICT_OUTSIDE,
} Verdict;

typedef struct {
  Verdict verdict;
  char *relative; /* NULL when outside */
  long pattern;
} CheckResult;

/* Decides one path from the policy alone: no scan, O(patterns). */
static int check_one(const Project *p, const char *base, const char *canon_root, const char *arg,
                     CheckResult *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  ret->pattern = -1;
  _cleanup_free_ char *abs = path_absolute(base, arg);
  if (abs == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  const char *lex = path_relative(p->policy->root, abs);
  long lex_idx = lex ? matcher_match(p->matcher, lex) : -1;

  _cleanup_free_ char *resolved = NULL;
  const char *res = NULL;
  long res_idx = -1;
  if (lex_idx < 0) {
    /* Only needed when the name as written is not protected. */
    _cleanup_free_ char *joined = arg[0] == '/' ? xstrdup(arg) : path_join(base, arg);
    resolved = path_resolve(joined);
    if (resolved == NULL) {
      return error_set(err, errno, _("cannot resolve %s: %m"), arg);
    }
    res = canon_root ? path_relative(canon_root, resolved) : NULL;
    res_idx = res ? matcher_match(p->matcher, res) : -1;
  }

  if (lex_idx >= 0) {
    ret->verdict = VERDICT_LOCKED;
    ret->relative = xstrdup(lex);
    ret->pattern = lex_idx;
  } else if (res_idx >= 0) {
    ret->verdict = VERDICT_LOCKED;
    ret->relative = xstrdup(res);
    ret->pattern = res_idx;
  } else if (lex != NULL || res != NULL) {
    ret->verdict = VERDICT_WRITABLE;
    ret->relative = xstrdup(lex ? lex : res);
  } else {
    ret->verdict = VERDICT_OUTSIDE;
  }
  return 0;
}

static int check_paths(const Options *o, Project *p, Error *err) {
  _cleanup_free_ char *base = path_absolute(NULL, o->dir ? o->dir : ".");
  if (base == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  _cleanup_free_ char *canon_root = realpath(p->policy->root, NULL);
  json_object *list = o->json ? json_object_new_array() : NULL;
  bool any_locked = false;
  int r = 0;

  for (size_t i = 0; i < o->n_paths; i++) {
    const char *arg = o->paths[i];
    CheckResult cr;
    if (check_one(p, base, canon_root, arg, &cr, err) < 0) {
      r = -1;
      break;
    }
    const char *pattern = cr.pattern >= 0 ? p->policy->patterns[cr.pattern].pattern : NULL;
    const char *rel = cr.relative && cr.relative[0] ? cr.relative : ".";
    any_locked |= cr.verdict == VERDICT_LOCKED;
    if (list != NULL) {
      static const char *const names[] = {"writable", "locked", "outside"};
      json_object *e = json_object_new_object();
      json_add_string(e, "path", arg);
      json_add_string(e, "status", names[cr.verdict]);
      json_add_string(e, "relative", cr.relative ? rel : NULL);
      json_add_string(e, "pattern", pattern);
      json_object_array_add(list, e);
    } else if (cr.verdict == VERDICT_LOCKED) {
      print_locked(rel, false, pattern);
    } else if (cr.verdict == VERDICT_WRITABLE) {
      printf("%s%s%s%s\n", color_on(stdout, COLOR_GREEN), _("writable  "), color_off(stdout), rel);
    } else {
      printf("%s%s\n", _("outside   "), arg);
    }
    free(cr.relative);
  }
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
    } else {
      for (size_t i = 0; i < p.scan->n_paths; i++) {
        const ProtectedPath *pp = &p.scan->paths[i];
        print_locked(pp->relative, S_ISDIR(pp->mode), p.policy->patterns[pp->pattern].pattern);
      }
      print_warnings(&p.findings);
    }
  }
  project_clear(&p);
  return r;
}

/* ---- status ----------------------------------------------------------- */

static void status_json(const Project *p) {
  const Policy *pol = p->policy;
  json_object *doc = json_project(p);
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
    json_object_object_add(e, "matches", json_object_new_uint64(p->scan->hits[i]));
    json_object_array_add(pats, e);
  }
  json_object_object_add(doc, "patterns", pats);

  json_object *prot = json_object_new_array();
  for (size_t i = 0; i < p->scan->n_paths; i++) {
    json_object_array_add(prot, json_protected_path(pol, &p->scan->paths[i]));
  }
  json_object_object_add(doc, "protected", prot);
  json_object_object_add(doc, "findings", json_findings(&p->findings));
  json_print(doc);
}

int command_status(const Options *o, Error *err) {
  Project p;
  if (project_open(o, true, &p, err) < 0) {
    project_clear(&p);
    return -1;
  }
  if (o->json) {
    status_json(&p);
    project_clear(&p);
    return 0;
  }
  const Policy *pol = p.policy;
  printf("%-11s%s\n", _("policy"), pol->file);
  printf("%-11s%s\n", _("root"), pol->root);
  printf("%-11s%u\n", _("version"), pol->version);
  printf("%-11s", _("patterns"));
  printf(N_("%zu declared (+1 implicit: agent.lock)\n", "%zu declared (+1 implicit: agent.lock)\n",
            (unsigned long)pol->n_declared),
         pol->n_declared);
  for (size_t i = 0; i < pol->n_patterns; i++) {
    size_t hits = p.scan->hits[i];
    printf("  %-30s ", pol->patterns[i].pattern);
    if (hits == 0) {
      printf("%s\n", _("nothing on disk"));
    } else {
      printf(N_("%zu path\n", "%zu paths\n", (unsigned long)hits), hits);
    }
  }
  printf("%-11s", _("protected"));
  /* The Rust ralon's wording, which scripts may read. */
  printf(_("%zu path(s) currently on disk\n"), p.scan->n_paths);
  for (size_t i = 0; i < p.scan->n_paths; i++) {
    const ProtectedPath *pp = &p.scan->paths[i];
    printf("  %s%s\n", pp->relative, S_ISDIR(pp->mode) ? "/" : "");
  }
  print_warnings(&p.findings);
  project_clear(&p);
  return 0;
}
