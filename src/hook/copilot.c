/* SPDX-License-Identifier: Apache-2.0 */
/* GitHub Copilot (CLI, cloud agent): preToolUse in .github/hooks/ files.
 * Payload {sessionId, cwd, toolName, toolArgs}, toolArgs sometimes a JSON
 * string. Tools: create and edit (path), str_replace_editor (path unless
 * viewing), apply_patch (patch text), bash/powershell. Refusal:
 * {"permissionDecision":"deny","permissionDecisionReason":…}, the only
 * form whose reason Copilot passes on to the model; any non-zero exit
 * denies too, with a bare "hook exited with code 2". `hook install` writes
 * this camelCase preToolUse hook. (With the PascalCase PreToolUse older
 * ralon installed, Copilot sends Claude's shape, which claude.c answers.) */
#include <string.h>

#include "hook/agent-desc.h"
#include "path.h"

static bool recognize(json_object *p) {
  json_object *v;
  return hook_json_string(p, "toolName") != NULL &&
         (json_object_object_get_ex(p, "toolArgs", &v) ||
          json_object_object_get_ex(p, "sessionId", &v));
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"create", "edit", "str_replace_editor", "write", NULL};
  static const char *const shell[] = {"bash", "powershell", NULL};
  static const char *const patch[] = {"apply_patch", NULL};
  static const char *const quiet[] = {"view",  "read",      "glob",          "grep",
                                      "task",  "web_fetch", "report_intent", "think",
                                      "fetch", "search",    NULL};
  static const HookTools tools = {edit, shell, patch, quiet};
  const char *tool = hook_json_string(p, "toolName");
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "toolArgs", &owned);
  json_object *raw = NULL;
  if (input == NULL) {
    json_object_object_get_ex(p, "toolArgs", &raw);
  }
  const char *sub = hook_json_string(input, "command");
  if (tool != NULL && streq(tool, "str_replace_editor") && sub != NULL && streq(sub, "view")) {
    hook_request_set_tool(req, tool);
  } else {
    hook_interpret_common(p, tool, input ? input : raw, &tools, req);
  }
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  if (v->deny) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "permissionDecision", json_object_new_string("deny"));
    json_object_object_add(o, "permissionDecisionReason", json_object_new_string(hook_reason(v)));
    hook_answer_json(o, 0, ret);
  }
}

/* Copilot's own camelCase preToolUse: its own payload ({toolName,
 * toolArgs}), answered by a JSON permissionDecision, the one way its reason
 * reaches the model (with the PascalCase event older ralon wrote, Copilot
 * drops it). No matcher, so every tool is checked. Any non-zero exit
 * denies here too; a failing ralon also prints the JSON refusal, so the
 * model is told why. */
static char *file(const char *where) {
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "version", json_object_new_int(1));
  json_object *h = json_object_new_object();
  hook_json_add_string(h, "type", "command");
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, true, true);
  hook_json_add_string(h, "bash", command);
  json_object_object_add(h, "timeoutSec", json_object_new_int(HOOK_TIMEOUT_SECONDS));
  json_object *arr = json_object_new_array();
  json_object_array_add(arr, h);
  json_object *hooks = json_object_new_object();
  json_object_object_add(hooks, "preToolUse", arr);
  json_object_object_add(doc, "hooks", hooks);
  char *text = hook_json_pretty(doc);
  json_object_put(doc);
  return text;
}

/* Whether Copilot lists `root` (or a folder above it) as trusted, in
 * config.json or settings.json (trusted_folders, trustedFolders). */
static bool copilot_trusts(const char *dir, const char *root) {
  static const char *const files[] = {"config.json", "settings.json"};
  static const char *const keys[] = {"trusted_folders", "trustedFolders"};
  for (size_t i = 0; i < ELEMENTSOF(files); i++) {
    _cleanup_free_ char *p = path_join(dir, files[i]);
    json_object *doc = hook_agent_json(p);
    bool trusted = false;
    for (size_t k = 0; doc != NULL && !trusted && k < ELEMENTSOF(keys); k++) {
      json_object *arr;
      if (!json_object_object_get_ex(doc, keys[k], &arr) ||
          !json_object_is_type(arr, json_type_array)) {
        continue;
      }
      for (size_t j = 0; !trusted && j < json_object_array_length(arr); j++) {
        json_object *e = json_object_array_get_idx(arr, j);
        trusted = json_object_is_type(e, json_type_string) &&
                  hook_path_within(root, json_object_get_string(e));
      }
    }
    if (doc != NULL) {
      json_object_put(doc);
    }
    if (trusted) {
      return true;
    }
  }
  return false;
}

static HookRuns runs_here(const char *root, const char *home, bool user, char **note) {
  if (user) {
    return HOOK_RUNS_YES; /* in every project, trusted or not */
  }
  _cleanup_free_ char *dir = hook_agent_home(AGENT_COPILOT, home);
  if (dir != NULL && copilot_trusts(dir, root)) {
    return HOOK_RUNS_YES;
  }
  *note = xasprintf(_("GitHub Copilot reads .github/hooks only in a trusted folder, and in "
                      "-p mode it does not ask: trust %s in Copilot, or install the hook "
                      "with --user."),
                    root);
  return HOOK_RUNS_UNKNOWN;
}

const AgentDesc agent_copilot = {
    .id = AGENT_COPILOT,
    .name = "copilot",
    .display = "GitHub Copilot",
    .recognize = recognize,
    .recognize_rank = 40,
    .interpret = interpret,
    .answer = answer,
    .project = ".github/hooks/ralon.json",
    .user = ".copilot/hooks/ralon.json",
    .user_env = "COPILOT_HOME",
    .user_env_file = "hooks/ralon.json",
    .home_dir = ".copilot",
    .detect = {{".github/hooks", AGENT_IN_PROJECT},
               {".github/copilot", AGENT_IN_PROJECT},
               {".copilot", AGENT_IN_HOME}},
    .shape = AGENT_SHAPE_FILE,
    .file = file,
    .runs_here = runs_here,
};
