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

#include "hook/hook.h"

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

const HookDialect hook_dialect_copilot = {AGENT_COPILOT, recognize, interpret, answer};
