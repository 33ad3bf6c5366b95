/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon hook check`: recognise the caller, find what the call touches,
 * decide from the policy alone, answer in the caller's dialect. Whatever
 * cannot be understood is refused, with a reason that says so. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/decision.h"
#include "hook/hook.h"
#include "log.h"
#include "path.h"

static const HookDialect *const dialects[_AGENT_MAX] = {
    [AGENT_CLAUDE] = &hook_dialect_claude,
    [AGENT_CURSOR] = &hook_dialect_cursor,
    [AGENT_OPENCODE] = &hook_dialect_opencode,
    [AGENT_COPILOT] = &hook_dialect_copilot,
    [AGENT_CODEX] = &hook_dialect_codex,
    [AGENT_GEMINI] = &hook_dialect_gemini,
    [AGENT_ANTIGRAVITY] = &hook_dialect_antigravity,
    [AGENT_WINDSURF] = &hook_dialect_windsurf,
    [AGENT_CLINE] = &hook_dialect_cline,
    [AGENT_QWEN] = &hook_dialect_qwen,
};

/* Most specific shapes first: several agents send Claude-like payloads. */
static const Agent recognition_order[] = {
    AGENT_CLINE,  AGENT_WINDSURF, AGENT_CURSOR, AGENT_COPILOT, AGENT_GEMINI,
    AGENT_OPENCODE, AGENT_CODEX, AGENT_QWEN,   AGENT_CLAUDE,
};

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
    hook_interpret_common(payload, tool, input ? input : payload, &tools, req);
  }
  json_object_put(owned);
}

/* ---- deciding ------------------------------------------------------------ */

typedef struct {
  char *file;
  Decider d;
  char *error; /* the policy could not be read */
} CachedPolicy;

typedef struct {
  CachedPolicy *v;
  size_t n;
  size_t cap;
  const char *start;
} Policies;

/* The policy governing `abs`: found upwards from its nearest existing
 * directory, else from -C / the working directory. */
static CachedPolicy *policy_for(Policies *ps, const char *abs) {
  _cleanup_free_ char *dir = path_dirname(abs);
  struct stat st;
  while (stat(dir, &st) < 0 && !streq(dir, "/")) {
    char *up = path_dirname(dir);
    free(dir);
    dir = up;
  }
  _cleanup_free_ char *file = NULL;
  Error err = {0};
  if (policy_find(dir, &file, &err) < 0) {
    error_clear(&err);
    if (policy_find(ps->start, &file, &err) < 0) {
      error_clear(&err);
      return NULL;
    }
  }
  for (size_t i = 0; i < ps->n; i++) {
    if (streq(ps->v[i].file, file)) {
      return &ps->v[i];
    }
  }
  CachedPolicy *c = grow_array(&ps->v, &ps->n, &ps->cap, sizeof(CachedPolicy));
  c->file = steal_pointer(&file);
  Policy *p = NULL;
  if (policy_load(c->file, &p, &err) < 0 || decider_from_policy(p, &c->d, &err) < 0) {
    c->error = xstrdup(err.message ? err.message : "?");
    error_clear(&err);
  }
  return c;
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
}

static long pattern_below(const Decider *d, const char *rel) {
  for (size_t i = 0; i < d->policy->n_patterns; i++) {
    if (matcher_may_match_below_one(d->matcher, i, rel)) {
      return (long)i;
    }
  }
  return -1;
}

static void decide_one(Policies *ps, const char *base, const char *path, bool tree, bool fuzzy,
                       HookVerdict *v, char **policy_error) {
  _cleanup_free_ char *abs = path_absolute(base, path);
  if (abs == NULL) {
    return;
  }
  CachedPolicy *c = policy_for(ps, abs);
  if (c == NULL) {
    return;
  }
  if (c->error != NULL) {
    if (*policy_error == NULL) {
      *policy_error = xstrdup(c->error);
    }
    return;
  }
  if (strpbrk(path, "*?[") != NULL) {
    /* A shell glob: decided against the patterns, lexically. */
    const char *rel = path_relative(c->d.policy->root, abs);
    long idx = rel ? matcher_match_glob(c->d.matcher, rel, tree) : -1;
    if (idx >= 0) {
      add_hit(v, path, rel[0] ? rel : ".", c, idx);
    }
    return;
  }
  PathDecision pd;
  Error err = {0};
  if (decide_path(&c->d, base, path, &pd, &err) < 0) {
    /* Cannot be resolved (a loop, no permission): not knowing is no. */
    if (*policy_error == NULL) {
      *policy_error = xstrdup(err.message);
    }
    error_clear(&err);
    return;
  }
  if (pd.verdict == VERDICT_LOCKED) {
    add_hit(v, path, pd.relative[0] ? pd.relative : ".", c, pd.pattern);
  } else if (tree && pd.relative != NULL) {
    long idx = pattern_below(&c->d, pd.relative);
    if (idx >= 0) {
      _cleanup_free_ char *shown = xasprintf("%s/", pd.relative[0] ? pd.relative : ".");
      add_hit(v, path, shown, c, idx);
    }
  } else if (fuzzy && path[0] != '/') {
    struct stat st;
    long idx = -1;
    if (stat(abs, &st) < 0 && decide_suffix(&c->d, path, &idx)) {
      _cleanup_free_ char *shown = xasprintf(".../%s", path);
      add_hit(v, path, shown, c, idx);
    }
  }
  path_decision_clear(&pd);
}

static void decide(const HookRequest *req, const char *start, HookVerdict *v) {
  _cleanup_free_ char *here = getcwd(NULL, 0);
  const char *base = req->cwd ? req->cwd : here ? here : "/";
  Policies ps = {.start = start ? start : base};
  _cleanup_free_ char *policy_error = NULL;

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
  HookRequest shell = {.cwd = req->cwd};
  for (size_t i = 0; i < req->n_commands; i++) {
    hook_shell_targets(req->commands[i], &shell);
  }
  for (size_t i = 0; i < req->n_paths; i++) {
    decide_one(&ps, base, req->paths[i], false, req->fuzzy_relative, v, &policy_error);
  }
  for (size_t i = 0; i < req->n_trees; i++) {
    decide_one(&ps, base, req->trees[i], true, false, v, &policy_error);
  }
  for (size_t i = 0; i < shell.n_paths; i++) {
    decide_one(&ps, base, shell.paths[i], false, false, v, &policy_error);
  }
  for (size_t i = 0; i < shell.n_trees; i++) {
    decide_one(&ps, base, shell.trees[i], true, false, v, &policy_error);
  }
  shell.cwd = NULL;
  hook_request_clear(&shell);
  for (size_t i = 0; i < ps.n; i++) {
    free(ps.v[i].file);
    free(ps.v[i].error);
    decider_clear(&ps.v[i].d);
  }
  free(ps.v);

  if (v->n_hits == 0 && policy_error != NULL) {
    v->deny = true;
    v->reason = xasprintf(_("this call cannot be checked against agent.lock (%s), so it was "
                            "refused and changed nothing. Tell the user."),
                          policy_error);
    return;
  }
  if (v->n_hits == 0) {
    return;
  }
  v->deny = true;
  char *list = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&list, &size);
  if (f == NULL) {
    oom();
  }
  if (v->n_hits == 1) {
    fprintf(f, _("`%s` is protected by agent.lock (pattern `%s`, %s)"), v->hits[0].shown,
            v->hits[0].pattern, v->hits[0].policy);
  } else {
    fprintf(f, _("%zu paths in this call are protected by agent.lock:"), v->n_hits);
    for (size_t i = 0; i < v->n_hits; i++) {
      fprintf(f, _("%s `%s` (pattern `%s`, %s)"), i ? "," : "", v->hits[i].shown,
              v->hits[i].pattern, v->hits[i].policy);
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
  const HookDialect *d = agent >= 0 && agent < _AGENT_MAX ? dialects[agent] : NULL;
  memset(ret, 0, sizeof(*ret));

  json_tokener *tok = json_tokener_new_ex(64);
  if (tok == NULL) {
    oom();
  }
  json_object *root = len > 0 && len < HOOK_MAX_PAYLOAD
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

  if (len >= HOOK_MAX_PAYLOAD) {
    req.not_understood = xasprintf(_("a payload of more than %u bytes"), HOOK_MAX_PAYLOAD);
  } else if (root == NULL && memmem(payload, len, "*** ", 4) != NULL &&
             memchr(payload, '\0', len) == NULL && hook_patch_paths(payload, &req) > 0) {
    /* A bare patch envelope: only Cursor has been seen sending one (for
     * ApplyPatch), and it wants its own answer, an explicit allow too. */
    if (d == NULL) {
      d = dialects[AGENT_CURSOR];
      req.agent = AGENT_CURSOR;
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
    for (size_t i = 0; d == NULL && i < ELEMENTSOF(recognition_order); i++) {
      const HookDialect *c = dialects[recognition_order[i]];
      if (c->recognize != NULL && c->recognize(root)) {
        d = c;
      }
    }
    if (d != NULL) {
      req.agent = d->agent;
      d->interpret(root, &req);
    } else {
      generic_interpret(root, &req);
    }
  }
  json_object_put(root);

  decide(&req, start, &v);
  if (v.deny) {
    log_refusal(&req, &v);
  }
  if (d != NULL) {
    d->answer(&v, ret);
  } else {
    hook_answer_exit2(&v, ret);
  }
  verdict_clear(&v);
  hook_request_clear(&req);
}
