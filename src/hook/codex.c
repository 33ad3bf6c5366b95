/* SPDX-License-Identifier: Apache-2.0 */
/* OpenAI Codex CLI: PreToolUse in .codex/hooks.json. Files change only
 * through apply_patch, whose tool_input.command is the raw patch; shell
 * tools arrive as Bash. Codex validates hook output against a schema that
 * rejects unknown fields, so the refusal is exit 2 with a non-empty reason
 * on stderr and nothing on stdout. */
#include "hook/hook.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  json_object *v;
  return ev != NULL && streq(ev, "PreToolUse") && json_object_object_get_ex(p, "turn_id", &v);
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const shell[] = {"Bash", "shell", "exec_command", "shell_command", NULL};
  static const char *const patch[] = {"apply_patch", "Edit", "Write", NULL};
  static const HookTools tools = {NULL, shell, patch, NULL};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  hook_interpret_common(p, tool, input, &tools, req);
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  hook_answer_exit2(v, ret);
}

const HookDialect hook_dialect_codex = {AGENT_CODEX, recognize, interpret, answer};
