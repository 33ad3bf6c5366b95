/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon hook check`: recognise the caller, find what the call touches,
 * decide from the policy alone, answer in the caller's dialect. Whatever
 * cannot be understood is refused, with a reason that says so. */
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/agent-desc.h"
#include "hook/decision.h"
#include "hook/hook.h"
#include "log.h"
#include "path.h"

/* The agents whose payloads can be recognised, in the order they are
 * tried (increasing recognize_rank: the most specific shapes first, as
 * several agents send Claude-like payloads); returns how many. */
static size_t recognition_order(const AgentDesc *ret[_AGENT_MAX]) {
  size_t n = 0;
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    if (d->recognize == NULL) {
      continue;
    }
    size_t i = n++;
    for (; i > 0 && ret[i - 1]->recognize_rank > d->recognize_rank; i--) {
      ret[i] = ret[i - 1];
    }
    ret[i] = d;
  }
  return n;
}

bool hook_name_in(const char *name, const char *const *list) {
  for (size_t i = 0; name != NULL && list != NULL && list[i] != NULL; i++) {
    if (streq(name, list[i])) {
      return true;
    }
  }
  return false;
}

void hook_interpret_common(json_object *payload, const char *tool, json_object *input,
                           const HookTools *tools, HookRequest *req) {
  hook_request_set_tool(req, tool);
  hook_request_set_cwd(req, hook_json_string(payload, "cwd"));
  if (tool != NULL && hook_name_in(tool, tools->quiet_tools)) {
    return;
  }
  if (tool != NULL && hook_name_in(tool, tools->shell_tools)) {
    const char *cmd = hook_json_string(input, "command");
    if (cmd == NULL) {
      req->unknown_target = true;
      return;
    }
    hook_request_add_command(req, cmd);
    return;
  }
  size_t found = hook_generic_paths(input, req);
  if (tool != NULL && hook_name_in(tool, tools->patch_tools) && input != NULL &&
      json_object_is_type(input, json_type_string)) {
    found += hook_patch_paths(json_object_get_string(input), req);
  }
  bool edit = tool == NULL || hook_name_in(tool, tools->edit_tools) ||
              hook_name_in(tool, tools->patch_tools);
  if (edit && found == 0) {
    req->unknown_target = true;
  }
}

void hook_answer_clear(HookAnswer *a) {
  free(a->out);
  free(a->err);
  memset(a, 0, sizeof(*a));
}

void hook_answer_exit2(const HookVerdict *v, HookAnswer *ret) {
  if (v->deny) {
    ret->err = xasprintf("ralon: %s\n", hook_reason(v));
    ret->exit_code = 2;
  }
}

void hook_answer_json(json_object *o, int exit_code, HookAnswer *ret) {
  ret->out = hook_json_line(o);
  ret->exit_code = exit_code;
}

json_object *hook_json_claude_deny(const HookVerdict *v) {
  json_object *spec = json_object_new_object();
  json_object_object_add(spec, "hookEventName", json_object_new_string("PreToolUse"));
  json_object_object_add(spec, "permissionDecision", json_object_new_string("deny"));
  json_object_object_add(spec, "permissionDecisionReason", json_object_new_string(hook_reason(v)));
  json_object *o = json_object_new_object();
  json_object_object_add(o, "hookSpecificOutput", spec);
  return o;
}

void hook_answer_claude(const HookVerdict *v, HookAnswer *ret) {
  if (v->deny) {
    hook_answer_json(hook_json_claude_deny(v), 2, ret);
    hook_answer_exit2(v, ret);
  }
}

/* ---- unknown callers ---------------------------------------------------- */

static void generic_interpret(json_object *payload, HookRequest *req) {
  static const char *const shell[] = {"Bash",  "bash",         "shell", "Shell", "run_shell_command",
                                      "exec",  "execute_bash", "Execute", "run_commands",
                                      "execute_command", "powershell", NULL};
  const char *tool = hook_json_string(payload, "tool_name");
  if (tool == NULL) {
    tool = hook_json_string(payload, "toolName");
  }
  if (tool == NULL) {
    tool = hook_json_string(payload, "tool");
  }
  json_object *owned = NULL;
  json_object *input = hook_json_object(payload, "tool_input", &owned);
  if (input == NULL) {
    input = hook_json_object(payload, "toolArgs", &owned);
  }
  if (input == NULL) {
    input = hook_json_object(payload, "args", &owned);
  }
  if (hook_input_invalid(payload, input, "tool_input", req) ||
      hook_input_invalid(payload, input, "args", req)) {
    json_object_put(owned);
    return;
  }
  /* Unknown tools: check whatever paths they carry, unless they plainly
   * only read; only a tool with no name at all must show its target. */
  static const HookTools tools = {.shell_tools = shell};
  if (tool != NULL && hook_tool_reads_only(tool)) {
    hook_request_set_tool(req, tool);
  } else {
    if (hook_name_in(tool, shell)) {
      /* opencode's workdir, Qwen's directory, Gemini's dir_path. */
      static const char *const dirs[] = {"workdir", "directory", "dir_path"};
      for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
        hook_request_set_shell_dir(req, hook_json_string(payload, "cwd"),
                                   hook_json_string(input, dirs[i]));
      }
    }
    hook_interpret_common(payload, tool, input ? input : payload, &tools, req);
  }
  json_object_put(owned);
}

/* ---- deciding ------------------------------------------------------------ */

typedef struct {
  char *file;
  Decider d;
  char *error; /* the policy could not be read */
  /* Whether a policy governs the directory is itself unknown (an
   * agent.lock that is no regular file, a name that cannot be looked at):
   * `file` is the message, not a path, and nothing above is looked at. */
  bool unknown;
} CachedPolicy;

/* Indexes into the cache, each once. */
typedef struct {
  long *v;
  size_t n;
  size_t cap;
} PolicyList;

/* What policy_from answered for a directory. */
typedef struct {
  char *dir;
  long i;
} PolicyAt;

typedef struct {
  CachedPolicy *v;
  size_t n;
  size_t cap;
  PolicyAt *at; /* each directory asked about, once */
  size_t n_at;
  size_t cap_at;
  const char *start;
  PolicyList start_chain;
  bool start_done;
} Policies;

/* What deciding the paths of one call gathers. */
typedef struct {
  Policies ps;
  const char *base;
  HookVerdict *v;
  char *policy_error; /* the first thing that could not be checked */
  char *ambiguous;    /* a relative path an agent may "correct" to any file */
} Deciding;

/* One path of a call, and its names. */
typedef struct {
  const char *path;  /* as the agent gave it */
  char *abs;         /* absolute, `..` resolved lexically */
  char *resolved;    /* with symbolic links resolved (NULL: could not be) */
  char *glob;        /* a shell glob: `abs` with the directory before its
                        first wildcard resolved (NULL: none, or could not) */
  bool tree;         /* its whole subtree is removed or moved */
  bool link;         /* a symbolic link removed or renamed as it is: its
                        last component is not followed */
} Target;

static long policy_find_cached(Policies *ps, const char *dir);

/* The policy found upwards from `dir`, or from the nearest directory above
 * it that exists: its index in the cache, or -1 when there is none. The
 * cache holds the few policies one call can meet, and the answer for each
 * directory asked about: a call's paths, where it runs and the chains
 * above them mostly share their directories, and each look is a walk to
 * `/`. */
static long policy_from(Policies *ps, const char *dir) {
  for (size_t k = 0; k < ps->n_at; k++) {
    if (streq(ps->at[k].dir, dir)) {
      return ps->at[k].i;
    }
  }
  long i = policy_find_cached(ps, dir);
  PolicyAt *a = grow_array(&ps->at, &ps->n_at, &ps->cap_at, sizeof(PolicyAt));
  a->dir = xstrdup(dir);
  a->i = i;
  return i;
}

/* policy_from's look itself. */
static long policy_find_cached(Policies *ps, const char *dir) {
  _cleanup_free_ char *d = xstrdup(dir);
  struct stat st;
  while ((stat(d, &st) < 0 || !S_ISDIR(st.st_mode)) && !streq(d, "/")) {
    char *up = path_dirname(d);
    free(d);
    d = up;
  }
  _cleanup_free_ char *file = NULL;
  Error err = {0};
  int r = policy_find_if_any(d, &file, &err);
  if (r == -ENOENT) {
    return -1;
  }
  if (r < 0) {
    /* Not knowing whether a policy governs here is no, as for one that
     * cannot be read (the refusal quotes the message). */
    file = steal_pointer(&err.message);
  }
  for (size_t i = 0; i < ps->n; i++) {
    if (streq(ps->v[i].file, file) && ps->v[i].unknown == (r < 0)) {
      return (long)i;
    }
  }
  CachedPolicy *c = grow_array(&ps->v, &ps->n, &ps->cap, sizeof(CachedPolicy));
  c->file = steal_pointer(&file);
  if (r < 0) {
    c->unknown = true;
    c->error = xstrdup(c->file);
    return (long)(ps->n - 1);
  }
  Policy *p = NULL;
  /* Every question a hook asks is which pattern is the first to match
   * (decision.c): the duplicates of one never change it. */
  if (policy_load_flags(c->file, POLICY_DUPLICATES, &p, &err) < 0 ||
      decider_from_policy(p, &c->d, &err) < 0) {
    c->error = xstrdup(err.message ? err.message : "?");
    error_clear(&err);
  }
  return (long)(ps->n - 1);
}

static void policy_list_add(PolicyList *l, long i) {
  for (size_t k = 0; k < l->n; k++) {
    if (l->v[k] == i) {
      return;
    }
  }
  *(long *)grow_array(&l->v, &l->n, &l->cap, sizeof(long)) = i;
}

/* Every policy from `dir` up to `/`, the nearest first. Not only the
 * nearest: an agent.lock an agent writes in a subdirectory (allowed: it
 * protects nothing of the project) must not hide the project's own
 * patterns from a call made there. */
static void policy_chain(Policies *ps, const char *dir, PolicyList *out) {
  _cleanup_free_ char *d = xstrdup(dir);
  for (;;) {
    long i = policy_from(ps, d);
    if (i < 0) {
      return;
    }
    policy_list_add(out, i);
    if (ps->v[i].unknown) {
      return;
    }
    _cleanup_free_ char *root = path_dirname(ps->v[i].file);
    if (streq(root, "/")) {
      return;
    }
    free(d);
    d = path_dirname(root);
  }
}

static void note_error(Deciding *dc, const char *message) {
  if (dc->policy_error == NULL) {
    dc->policy_error = xstrdup(message ? message : "?");
  }
}

static void add_hit(HookVerdict *v, const char *path, const char *shown, const CachedPolicy *c,
                    long pattern) {
  for (size_t i = 0; i < v->n_hits; i++) {
    if (streq(v->hits[i].shown, shown) && streq(v->hits[i].policy, c->file)) {
      return;
    }
  }
  v->hits = xreallocarray(v->hits, v->n_hits + 1, sizeof(HookHit));
  HookHit *h = &v->hits[v->n_hits++];
  h->path = xstrdup(path);
  h->shown = xstrdup(shown);
  h->pattern = xstrdup(pattern >= 0 ? c->d.policy->patterns[pattern].pattern : "?");
  h->policy = xstrdup(c->file);
  h->unread = false;
  h->somewhere = false;
}

static long pattern_below(const Decider *d, const char *rel) {
  for (size_t i = 0; i < d->policy->n_patterns; i++) {
    if (matcher_may_match_below_one(d->matcher, i, rel)) {
      return (long)i;
    }
  }
  return -1;
}

/* Whether the project root lies at or below `target`, by either name of
 * each: removing or moving `target` takes the whole project along. */
static bool holds_root(const Decider *d, const char *target) {
  if (target == NULL) {
    return false;
  }
  return path_relative(target, d->policy->root) != NULL ||
         (d->canon_root != NULL && path_relative(target, d->canon_root) != NULL);
}

/* A shell glob, decided against the patterns: as written, and with the
 * directory before its first wildcard resolved. */
static bool decide_glob_in(Deciding *dc, const CachedPolicy *c, const Target *t) {
  const Decider *d = &c->d;
  const char *rest = NULL;
  long idx = decide_glob(d, d->policy->root, t->abs, t->tree, &rest);
  if (idx < 0 && t->glob != NULL && d->canon_root != NULL) {
    idx = decide_glob(d, d->canon_root, t->glob, t->tree, &rest);
  }
  if (idx < 0) {
    return false;
  }
  /* Its name inside the project, else the glob itself (`../proj*`). */
  const char *lex = path_relative(d->policy->root, t->abs);
  const char *shown = lex && lex[0] ? lex : rest && rest[0] ? rest : t->abs;
  add_hit(dc->v, t->path, shown, c, idx);
  return true;
}

/* A directory whose subtree goes: protected when a pattern could match
 * below its name as written or its resolved name (`rm -rf link/`), or
 * when the project itself is inside it (`rm -rf ..`). */
static bool decide_tree_in(Deciding *dc, const CachedPolicy *c, const Target *t,
                           const PathDecision *pd) {
  const Decider *d = &c->d;
  long idx = -1;
  _cleanup_free_ char *shown = NULL;
  if (pd->relative != NULL && (idx = pattern_below(d, pd->relative)) >= 0) {
    shown = xasprintf("%s/", pd->relative[0] ? pd->relative : ".");
  } else if (pd->resolved != NULL && (idx = pattern_below(d, pd->resolved)) >= 0) {
    const char *name = pd->relative ? pd->relative : pd->resolved;
    shown = xasprintf("%s/", name[0] ? name : ".");
  } else if ((holds_root(d, t->abs) || holds_root(d, t->resolved)) &&
             (idx = pattern_below(d, "")) >= 0) {
    shown = xasprintf("%s%s", t->abs, streq(t->abs, "/") ? "" : "/");
  }
  if (idx < 0) {
    return false;
  }
  add_hit(dc->v, t->path, shown, c, idx);
  return true;
}

static bool has_dotdot(const char *p) {
  for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2) {
    if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/')) {
      return true;
    }
  }
  return false;
}

/* Decides `t` against one policy; whether it protects it. */
static bool decide_in(Deciding *dc, size_t policy, const Target *t) {
  const CachedPolicy *c = &dc->ps.v[policy];
  if (c->error != NULL) {
    note_error(dc, c->error);
    return false;
  }
  if (t->glob != NULL && decide_glob_in(dc, c, t)) {
    return true;
  }
  /* Also a glob as a literal name: quoted, or matching nothing, the shell
   * passes it on as it is. */
  PathDecision pd;
  Error err = {0};
  int r = decide_known(&c->d, dc->base, t->path, t->link, t->resolved, &pd, &err);
  if (r < 0) {
    /* Cannot be resolved (a loop, no permission): not knowing is no. */
    note_error(dc, err.message);
    error_clear(&err);
    return false;
  }
  bool hit = false;
  if (pd.verdict == VERDICT_LOCKED) {
    /* The name as written, unless a `..` in it follows a link: then its
     * lexical name is some other file (`deep/../a.txt`), and the resolved
     * one is what is protected. */
    const char *shown = pd.via != NULL && has_dotdot(t->path) ? pd.via : pd.relative;
    add_hit(dc->v, t->path, shown[0] ? shown : ".", c, pd.pattern);
    hit = true;
  } else if (t->tree && !t->link) {
    hit = decide_tree_in(dc, c, t, &pd);
  }
  path_decision_clear(&pd);
  return hit;
}

/* `p` (absolute) with the directory before its first component holding a
 * wildcard resolved, and that component and the rest appended as they
 * are; NULL when the directory cannot be resolved. */
static char *resolve_glob_prefix(const char *p, char **ret_dir) {
  const char *c = p;
  for (;;) {
    while (*c == '/') {
      c++;
    }
    const char *e = strchrnul(c, '/');
    size_t len = (size_t)(e - c);
    if (*c == '\0' || memchr(c, '*', len) || memchr(c, '?', len) || memchr(c, '[', len)) {
      break;
    }
    c = e;
  }
  _cleanup_free_ char *dir = c == p ? xstrdup("/") : xstrndup(p, (size_t)(c - p));
  *ret_dir = path_resolve(dir);
  if (*ret_dir == NULL) {
    return NULL;
  }
  _cleanup_free_ char *joined = path_join(*ret_dir, c);
  return path_normalize(joined);
}

/* ---- what a shell glob reaches through a symbolic link -------------------- */

/* glob(3) lists the directories itself; these wrappers only note which of
 * the entries it reads are symbolic links, from the type the directory
 * gives (no lstat(2) per entry), and stop reading after GLOB_ENTRIES_MAX
 * entries, all the globs of one call together. glob(3) takes no argument for them: one glob at a time. */
#define GLOB_ENTRIES_MAX 200000

typedef struct {
  DIR *dir;
  char *path;
} GlobDir;

static struct {
  char **links;
  size_t n_links, cap_links;
} globbing;

/* Entries the globs of one call may still read, all together. */
static size_t glob_entries_left;

static void *glob_opendir(const char *path) {
  DIR *d = opendir(path);
  if (d == NULL) {
    return NULL;
  }
  GlobDir *g = xcalloc(1, sizeof(GlobDir));
  g->dir = d;
  g->path = xstrdup(path);
  return g;
}

static struct dirent *glob_readdir(void *p) {
  GlobDir *g = p;
  if (glob_entries_left == 0) {
    return NULL; /* best effort: the kernel is the boundary */
  }
  struct dirent *de = readdir(g->dir);
  if (de == NULL) {
    return NULL;
  }
  glob_entries_left--;
  bool link = de->d_type == DT_LNK;
  _cleanup_free_ char *full = NULL;
  if (de->d_type == DT_UNKNOWN) {
    struct stat st;
    full = path_join(g->path, de->d_name);
    link = lstat(full, &st) == 0 && S_ISLNK(st.st_mode);
  }
  if (link) {
    char **slot = grow_array(&globbing.links, &globbing.n_links, &globbing.cap_links,
                             sizeof(char *));
    *slot = full != NULL ? steal_pointer(&full) : path_join(g->path, de->d_name);
  }
  return de;
}

static void glob_closedir(void *p) {
  GlobDir *g = p;
  closedir(g->dir);
  free(g->path);
  free(g);
}

/* Whether `path` passes through the link `link` (or is it). */
static bool passes_through(const char *path, const char *link) {
  size_t n = strlen(link);
  return strncmp(path, link, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void decide_one(Deciding *dc, const char *path, bool tree, bool shell_word, bool fuzzy,
                       bool entry);

/* The names a shell would expand `pattern` (absolute) to that pass through
 * a symbolic link, each decided as the file it names: matching the glob
 * against the patterns as written cannot see where a link leads
 * (`echo x > c?` with `cl -> Cargo.lock`, `rm g?/a.txt` with
 * `gl -> tests/golden`). Names reached without a link are what the
 * patterns were matched against already. */
static void decide_glob_links(Deciding *dc, const char *pattern, bool tree, bool entry) {
  glob_t g = {
      .gl_opendir = glob_opendir,
      .gl_readdir = glob_readdir,
      .gl_closedir = glob_closedir,
      .gl_lstat = lstat,
      .gl_stat = stat,
  };
  memset(&globbing, 0, sizeof(globbing));
  int r = glob(pattern, GLOB_ALTDIRFUNC | GLOB_NOSORT, NULL, &g);
  if (r == 0 && globbing.n_links > 0) {
    for (size_t i = 0; i < g.gl_pathc; i++) {
      for (size_t k = 0; k < globbing.n_links; k++) {
        if (passes_through(g.gl_pathv[i], globbing.links[k])) {
          decide_one(dc, g.gl_pathv[i], tree, false, false, entry);
          break;
        }
      }
    }
  }
  globfree(&g);
  for (size_t k = 0; k < globbing.n_links; k++) {
    free(globbing.links[k]);
  }
  free(globbing.links);
  memset(&globbing, 0, sizeof(globbing));
}

/* Decides one path against every policy that may govern it: the nearest
 * upwards from its name as written, the nearest upwards from where it
 * leads, and the one where the agent runs (-C, or the payload's cwd),
 * which is the one `ralon run` enforces. An agent.lock the agent put in a
 * subdirectory cannot so hide the project's patterns, and a link into
 * another project is judged by that project's. `shell_word`: from a shell
 * command, where `*`, `?` and `[` are wildcards. `fuzzy`: the agent may
 * "correct" a relative path that does not exist (Gemini's replace).
 * `entry`: removed or renamed as it is (HookRequest.entries), so a
 * symbolic link is decided as itself, not as what it leads to. */
static void decide_one(Deciding *dc, const char *path, bool tree, bool shell_word, bool fuzzy,
                       bool entry) {
  Target t = {.path = path, .tree = tree};
  t.abs = path_absolute(dc->base, path);
  if (t.abs == NULL) {
    return;
  }
  _cleanup_free_ char *joined = path_join(dc->base, path);
  _cleanup_free_ char *lex_dir = path_dirname(t.abs);
  _cleanup_free_ char *res_dir = NULL;
  bool glob = shell_word && strpbrk(path, "*?[") != NULL;
  struct stat st;
  if (entry && lstat(joined, &st) == 0 && S_ISLNK(st.st_mode)) {
    /* `rm link`, `mv link x`: the link goes, what it leads to stays (and
     * nothing below it: rm -r does not follow it). A glob word, as the
     * literal name it also is (`rm 'l[x]'`). */
    t.link = true;
    t.tree = glob && tree;
  }
  if (glob) {
    t.glob = resolve_glob_prefix(joined, &res_dir);
  } else if (t.link) {
    _cleanup_free_ char *dir = path_dirname(joined);
    res_dir = path_resolve(dir);
    t.resolved = res_dir != NULL ? path_join(res_dir, path_basename(joined)) : NULL;
  } else {
    t.resolved = path_resolve(joined);
    res_dir = t.resolved ? path_dirname(t.resolved) : NULL;
  }
  if (!dc->ps.start_done) {
    policy_chain(&dc->ps, dc->ps.start, &dc->ps.start_chain);
    dc->ps.start_done = true;
  }
  PolicyList cand = {0};
  policy_chain(&dc->ps, lex_dir, &cand);
  if (res_dir != NULL) {
    policy_chain(&dc->ps, res_dir, &cand);
  }
  for (size_t i = 0; i < dc->ps.start_chain.n; i++) {
    policy_list_add(&cand, dc->ps.start_chain.v[i]);
  }
  bool hit = false, governed = false;
  for (size_t i = 0; i < cand.n && !hit; i++) {
    governed |= dc->ps.v[cand.v[i]].error == NULL;
    hit = decide_in(dc, (size_t)cand.v[i], &t);
  }
  if (!hit && t.glob != NULL) {
    decide_glob_links(dc, joined, tree, entry);
  }
  if (!hit && governed && fuzzy && path[0] != '/' && stat(t.abs, &st) < 0) {
    /* Any file whose path ends with `path` may be meant: name a protected
     * one if some pattern says so, else ask for the absolute path. */
    for (size_t i = 0; i < cand.n && !hit; i++) {
      const CachedPolicy *c = &dc->ps.v[cand.v[i]];
      long idx = -1;
      if (c->error == NULL && decide_suffix(&c->d, path, &idx)) {
        _cleanup_free_ char *shown = xasprintf(".../%s", path);
        add_hit(dc->v, path, shown, c, idx);
        hit = true;
      }
    }
    _cleanup_free_ char *norm = path_normalize(path);
    if (!hit && !streq(norm, "..") && !startswith(norm, "../") && dc->ambiguous == NULL) {
      dc->ambiguous = xstrdup(path);
    }
  }
  free(cand.v);
  free(t.abs);
  free(t.resolved);
  free(t.glob);
}

/* Whether the relative tree `rel` (its components shell globs), from an
 * unknown directory, may be `root` or a directory holding it: its
 * components, leading `..` dropped, are a run of the root's. */
static bool may_hold_root(const char *rel, const char *root) {
  _cleanup_free_ char *norm = path_normalize(rel);
  const char *r = norm;
  while (r[0] == '.' && r[1] == '.' && (r[2] == '/' || r[2] == '\0')) {
    r += r[2] == '/' ? 3 : 2;
  }
  if (r[0] == '\0' || streq(r, ".") || r[0] == '/' || root == NULL) {
    return false; /* nothing named, or not relative: decided elsewhere */
  }
  char **want = NULL, **have = NULL;
  size_t n_want = 0, n_have = 0, cap_want = 0, cap_have = 0;
  for (const char *c = r; *c != '\0';) {
    size_t len = strcspn(c, "/");
    *(char **)grow_array(&want, &n_want, &cap_want, sizeof(char *)) = xstrndup(c, len);
    c += len + (c[len] == '/');
  }
  for (const char *c = root + strspn(root, "/"); *c != '\0';) {
    size_t len = strcspn(c, "/");
    *(char **)grow_array(&have, &n_have, &cap_have, sizeof(char *)) = xstrndup(c, len);
    c += len + strspn(c + len, "/");
  }
  bool found = false;
  for (size_t j = 0; j + n_want <= n_have && !found; j++) {
    found = true;
    for (size_t k = 0; k < n_want && found; k++) {
      found = fnmatch(want[k], have[j + k], FNM_PERIOD) == 0;
    }
  }
  strings_free(want, n_want);
  strings_free(have, n_have);
  return found;
}

/* A relative name written after a `cd` the hook cannot follow
 * (HookRequest.somewhere): refused where that `cd` may lead to the
 * working directory and the name is protected from there, or where a
 * pattern of the policies governing the working directory names a path
 * that may end with it. */
static void decide_somewhere_one(Deciding *dc, const char *name, bool tree) {
  size_t before = dc->v->n_hits;
  decide_one(dc, name, tree, true, false, false);
  if (dc->v->n_hits == before) {
    if (!dc->ps.start_done) {
      policy_chain(&dc->ps, dc->ps.start, &dc->ps.start_chain);
      dc->ps.start_done = true;
    }
    for (size_t i = 0; i < dc->ps.start_chain.n && dc->v->n_hits == before; i++) {
      const CachedPolicy *c = &dc->ps.v[dc->ps.start_chain.v[i]];
      long idx = -1;
      if (c->error != NULL) {
        note_error(dc, c->error);
      } else if (decide_somewhere(&c->d, name, tree, &idx) ||
                 (tree && (may_hold_root(name, c->d.policy->root) ||
                           may_hold_root(name, c->d.canon_root)))) {
        /* `rm -rf proj` may be the project itself: agent.lock goes. */
        _cleanup_free_ char *shown = xasprintf(".../%s", name);
        add_hit(dc->v, name, shown, c, idx >= 0 ? idx : 0);
      }
    }
  }
  for (size_t k = before; k < dc->v->n_hits; k++) {
    dc->v->hits[k].somewhere = true;
  }
}

static void decide(const HookRequest *req, const char *start, HookVerdict *v) {
  _cleanup_free_ char *here = getcwd(NULL, 0);
  const char *base = req->cwd ? req->cwd : here ? here : "/";
  Deciding dc = {.ps = {.start = start ? start : base}, .base = base, .v = v};

  if (req->not_understood != NULL) {
    v->deny = true;
    v->reason = xasprintf(_("this hook call could not be understood (%s), so it was refused and "
                            "changed nothing. If it keeps happening, ralon does not know this "
                            "agent's hook format: tell the user."),
                          req->not_understood);
    return;
  }
  if (req->unknown_target) {
    v->deny = true;
    v->reason = xasprintf(_("which file this `%s` call changes could not be found, so it was "
                            "refused and changed nothing. Name the file explicitly."),
                          req->tool ? req->tool : "?");
    return;
  }
  /* Shell commands: what they plainly write. */
  HookRequest shell = {.cwd = req->cwd, .work = req->work, .names = req->names,
                       .over_budget = req->over_budget};
  for (size_t i = 0; i < req->n_commands && !shell.over_budget; i++) {
    hook_shell_targets(req->commands[i], &shell);
  }
  if (shell.over_budget) {
    /* Nothing is decided: that alone could take longer than the agent
     * waits. */
    shell.cwd = NULL;
    hook_request_clear(&shell);
    v->deny = true;
    v->reason = xstrdup(_("this call is too large for ralon to check in the time an agent gives "
                          "its hook (too much shell to read, or too many paths), so it was "
                          "refused and changed nothing. Split it into smaller calls, and write "
                          "long content with the edit tool rather than through the shell."));
    return;
  }
  glob_entries_left = GLOB_ENTRIES_MAX;
  /* Names given to edit tools and in patches are literal file names. */
  for (size_t i = 0; i < req->n_paths; i++) {
    decide_one(&dc, req->paths[i], false, false, req->fuzzy_relative, false);
  }
  for (size_t i = 0; i < req->n_trees; i++) {
    decide_one(&dc, req->trees[i], true, false, false, false);
  }
  for (size_t i = 0; i < shell.n_paths; i++) {
    decide_one(&dc, shell.paths[i], false, true, false, false);
  }
  for (size_t i = 0; i < shell.n_trees; i++) {
    decide_one(&dc, shell.trees[i], true, true, false, false);
  }
  for (size_t i = 0; i < shell.n_entries; i++) {
    decide_one(&dc, shell.entries[i], false, true, false, true);
  }
  for (size_t i = 0; i < shell.n_entry_trees; i++) {
    decide_one(&dc, shell.entry_trees[i], true, true, false, true);
  }
  for (size_t i = 0; i < shell.n_somewhere; i++) {
    decide_somewhere_one(&dc, shell.somewhere[i], false);
  }
  for (size_t i = 0; i < shell.n_somewhere_trees; i++) {
    decide_somewhere_one(&dc, shell.somewhere_trees[i], true);
  }
  for (size_t i = 0; i < shell.n_unread; i++) {
    size_t before = v->n_hits;
    decide_one(&dc, shell.unread[i], true, true, false, false);
    for (size_t k = before; k < v->n_hits; k++) {
      v->hits[k].unread = true;
    }
  }
  /* A command that makes more links and renames than the reader follows
   * (hook_shell_targets) may lead anywhere: refused where agent.lock
   * governs. */
  bool too_many_names = shell.unknown_target && v->n_hits == 0 && policy_from(&dc.ps, base) >= 0;
  shell.cwd = NULL;
  hook_request_clear(&shell);
  for (size_t i = 0; i < dc.ps.n; i++) {
    free(dc.ps.v[i].file);
    free(dc.ps.v[i].error);
    decider_clear(&dc.ps.v[i].d);
  }
  free(dc.ps.v);
  for (size_t i = 0; i < dc.ps.n_at; i++) {
    free(dc.ps.at[i].dir);
  }
  free(dc.ps.at);
  free(dc.ps.start_chain.v);
  _cleanup_free_ char *policy_error = dc.policy_error;
  _cleanup_free_ char *ambiguous = dc.ambiguous;

  if (too_many_names) {
    v->deny = true;
    v->reason = xstrdup(_("this command makes more links and renames than ralon follows before "
                          "it runs, and a name written through one of them may be a file "
                          "agent.lock protects: it was refused and changed nothing. Run it as "
                          "several shorter commands."));
    return;
  }
  if (v->n_hits == 0 && policy_error != NULL) {
    v->deny = true;
    v->reason = xasprintf(_("this call cannot be checked against agent.lock (%s), so it was "
                            "refused and changed nothing. Tell the user."),
                          policy_error);
    return;
  }
  if (v->n_hits == 0 && ambiguous != NULL) {
    v->deny = true;
    v->reason = xasprintf(_("`%s` does not exist, and `%s` would then change whichever file in "
                            "the workspace has a path ending with it, which may be one "
                            "agent.lock protects: this call was refused and changed nothing. "
                            "Give the file's absolute path."),
                          ambiguous, req->tool ? req->tool : "?");
    return;
  }
  if (v->n_hits == 0) {
    return;
  }
  v->deny = true;
  bool all_unread = true, named_any = false;
  const HookHit *somewhere = NULL;
  for (size_t i = 0; i < v->n_hits; i++) {
    all_unread &= v->hits[i].unread;
    named_any |= !v->hits[i].unread && !v->hits[i].somewhere;
    if (somewhere == NULL && v->hits[i].somewhere) {
      somewhere = &v->hits[i];
    }
  }
  if (!named_any && somewhere != NULL) {
    /* `cd "$X" && rm Cargo.lock`: where it writes is known only when it
     * runs. */
    v->reason = xasprintf(_("`%s` is written in the directory a `cd` leads to that is known only "
                            "when the command runs, and it may be a path agent.lock protects "
                            "(pattern `%s`, %s): this call was refused and changed nothing. Name "
                            "the file by its full path, or `cd` to a directory written out."),
                          somewhere->path, somewhere->pattern, somewhere->policy);
    return;
  }
  if (all_unread) {
    /* `… | xargs rm`, `find -delete` where agent.lock protects something
     * below: which files go is known only when it runs. */
    v->reason = xasprintf(_("which files this command changes is known only when it runs (names "
                            "xargs reads, files find finds, words the shell expands), so they may "
                            "be any below `%s`, where agent.lock protects paths (pattern `%s`, "
                            "%s): this call was refused and changed nothing. Name the files "
                            "explicitly, leaving out the protected ones."),
                          v->hits[0].shown, v->hits[0].pattern, v->hits[0].policy);
    return;
  }
  /* Named ones only: they are reason enough. */
  _cleanup_free_ const HookHit **named = xcalloc(v->n_hits, sizeof(HookHit *));
  size_t n = 0;
  for (size_t i = 0; i < v->n_hits; i++) {
    if (!v->hits[i].unread && !v->hits[i].somewhere) {
      named[n++] = &v->hits[i];
    }
  }
  char *list = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&list, &size);
  if (f == NULL) {
    oom();
  }
  if (n == 1) {
    fprintf(f, _("`%s` is protected by agent.lock (pattern `%s`, %s)"), named[0]->shown,
            named[0]->pattern, named[0]->policy);
  } else {
    fprintf(f, _("%zu paths in this call are protected by agent.lock:"), n);
    for (size_t i = 0; i < n; i++) {
      fprintf(f, _("%s `%s` (pattern `%s`, %s)"), i ? "," : "", named[i]->shown,
              named[i]->pattern, named[i]->policy);
    }
  }
  fclose(f);
  v->reason = xasprintf(_("%s: this call was refused and changed nothing. Edit other files, or "
                          "ask the user to change agent.lock; you cannot, and renaming, copying "
                          "over or writing it from the shell is refused too."),
                        list);
  free(list);
}

static void verdict_clear(HookVerdict *v) {
  for (size_t i = 0; i < v->n_hits; i++) {
    free(v->hits[i].path);
    free(v->hits[i].shown);
    free(v->hits[i].pattern);
    free(v->hits[i].policy);
  }
  free(v->hits);
  free(v->reason);
  memset(v, 0, sizeof(*v));
}

/* The journal keeps every refusal: one record per protected path, or one
 * with the reason when the call could not be checked at all. */
static void log_refusal(const HookRequest *req, const HookVerdict *v) {
  if (!log_enabled()) {
    return;
  }
  const char *agent = req->agent >= 0 && req->agent < _AGENT_MAX ? agent_to_string(req->agent)
                                                                   : "unknown";
  const char *tool = req->tool ? req->tool : "?";
  for (size_t i = 0; i < v->n_hits; i++) {
    const HookHit *h = &v->hits[i];
    _cleanup_free_ char *root = path_dirname(h->policy);
    LogFields lf = {0};
    log_field(&lf, "RALON_AGENT", "%s", agent);
    log_field(&lf, "RALON_TOOL", "%s", tool);
    log_field(&lf, "RALON_PATH", "%s", h->path);
    log_field(&lf, "RALON_RELATIVE_PATH", "%s", h->shown);
    log_field(&lf, "RALON_PATTERN", "%s", h->pattern);
    log_field(&lf, "RALON_POLICY", "%s", h->policy);
    log_field(&lf, "RALON_ROOT", "%s", root);
    log_send(LOG_HOOK_REFUSAL, &lf, "Refused %s %s of %s: protected by pattern `%s` of %s",
             agent, tool, h->shown, h->pattern, h->policy);
  }
  if (v->n_hits == 0) {
    LogFields lf = {0};
    log_field(&lf, "RALON_AGENT", "%s", agent);
    log_field(&lf, "RALON_TOOL", "%s", tool);
    log_field(&lf, "RALON_REASON", "%s", v->reason ? v->reason : "?");
    log_send(LOG_HOOK_REFUSAL, &lf, "Refused %s %s: %s", agent, tool, v->reason ? v->reason : "?");
  }
}

void hook_check(const char *payload, size_t len, Agent agent, const char *start,
                HookAnswer *ret) {
  HookRequest req = {.agent = agent};
  HookVerdict v = {0};
  const AgentDesc *d = agent_desc(agent);
  memset(ret, 0, sizeof(*ret));

  json_tokener *tok = json_tokener_new_ex(64);
  if (tok == NULL) {
    oom();
  }
  json_object *root = len > 0 && len <= HOOK_MAX_PAYLOAD
                          ? json_tokener_parse_ex(tok, payload, (int)len)
                          : NULL;
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  if (root != NULL && jerr == json_tokener_success &&
      (size_t)json_tokener_get_parse_end(tok) < len &&
      strspn(payload + json_tokener_get_parse_end(tok), " \t\r\n") !=
          len - json_tokener_get_parse_end(tok)) {
    /* Something after the JSON value. */
    json_object_put(root);
    root = NULL;
    jerr = json_tokener_error_parse_unexpected;
  }
  json_tokener_free(tok);

  if (len > HOOK_MAX_PAYLOAD) {
    req.not_understood = xasprintf(_("a payload of more than %u bytes"), HOOK_MAX_PAYLOAD);
  } else if (root == NULL && memmem(payload, len, "*** ", 4) != NULL &&
             memchr(payload, '\0', len) == NULL && hook_patch_paths(payload, &req) > 0) {
    /* A bare patch envelope: the agent that sends one answered in its
     * own terms (Cursor, which wants an explicit allow too). */
    for (int a = 0; d == NULL && a < _AGENT_MAX; a++) {
      if (agent_desc((Agent)a)->bare_patch) {
        d = agent_desc((Agent)a);
        req.agent = d->id;
      }
    }
  } else if (root == NULL) {
    req.not_understood =
        strspn(payload, " \t\r\n") == len ? xstrdup(_("the payload is empty"))
        : jerr == json_tokener_continue
            ? xstrdup(_("the payload is JSON cut short"))
            : xasprintf(_("the payload is not JSON: %s"), json_tokener_error_desc(jerr));
  } else if (!json_object_is_type(root, json_type_object)) {
    req.not_understood = xstrdup(_("the payload is not a JSON object"));
  } else {
    const AgentDesc *order[_AGENT_MAX];
    size_t n = d == NULL ? recognition_order(order) : 0;
    for (size_t i = 0; d == NULL && i < n; i++) {
      if (order[i]->recognize(root)) {
        d = order[i];
      }
    }
    if (d != NULL) {
      req.agent = d->id;
      d->interpret(root, &req);
    } else {
      generic_interpret(root, &req);
    }
  }
  json_object_put(root);

  decide(&req, start, &v);
  if (v.deny) {
    log_refusal(&req, &v); /* RALON_REASON as it is; MESSAGE is escaped */
  }
  if (v.reason != NULL) {
    /* Names from the payload and the disk, for a model, a terminal and a
     * JSON answer: no control characters, nothing that is not UTF-8. */
    char *shown = text_display(v.reason);
    free(v.reason);
    v.reason = shown;
  }
  if (d != NULL) {
    d->answer(&v, ret);
  } else {
    hook_answer_exit2(&v, ret);
  }
  verdict_clear(&v);
  hook_request_clear(&req);
}
