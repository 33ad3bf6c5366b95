/* SPDX-License-Identifier: Apache-2.0 */
/* Google Antigravity: .agents/hooks.json, Claude-like PreToolUse entries.
 * Its payload is not documented, so it is never guessed from the shape:
 * the installed command names it (`--agent antigravity`), and the request
 * is read like any Claude-like one. Refusal: {"decision":"deny","reason"}
 * and exit 2 with the reason on stderr. */
#include "hook/agent-desc.h"

static void interpret(json_object *p, HookRequest *req) {
  /* Tool names as Antigravity's own prompt gives them: write_to_file,
   * replace_file_content, …; run_command carries CommandLine. */
  static const char *const shell[] = {"Bash", "run_shell_command", "shell", NULL};
  static const HookTools tools = {NULL, shell, NULL, NULL};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  if (tool == NULL) {
    tool = hook_json_string(p, "toolName");
  }
  const char *line = hook_json_string(input, "CommandLine");
  if (tool != NULL && streq(tool, "run_command")) {
    hook_request_set_tool(req, tool);
    hook_request_set_cwd(req, hook_json_string(input, "Cwd"));
    hook_request_set_cwd(req, hook_json_string(p, "cwd"));
    if (line == NULL) {
      line = hook_json_string(input, "command");
    }
    if (line == NULL) {
      req->unknown_target = true;
    }
    hook_request_add_command(req, line);
  } else if (tool != NULL && hook_tool_reads_only(tool)) {
    hook_request_set_tool(req, tool);
  } else {
    hook_interpret_common(p, tool, input ? input : p, &tools, req);
  }
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  if (v->deny) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "decision", json_object_new_string("deny"));
    json_object_object_add(o, "reason", json_object_new_string(hook_reason(v)));
    hook_answer_json(o, 2, ret);
    hook_answer_exit2(v, ret);
  }
}

static json_object *entry(const char *where) {
  _cleanup_free_ char *command =
      hook_blocking_command(HOOK_COMMAND " --agent antigravity", where, false, false);
  json_object *h = hook_new_handler(command);
  json_object_object_add(h, "timeout", json_object_new_int(HOOK_TIMEOUT_SECONDS));
  return hook_new_group(HOOK_VERB_MATCHER, h);
}

const AgentDesc agent_antigravity = {
    .id = AGENT_ANTIGRAVITY,
    .name = "antigravity",
    .display = "Google Antigravity",
    /* Never guessed from the shape: the installed command names it. */
    .recognize = NULL,
    .interpret = interpret,
    .answer = answer,
    .project = ".agents/hooks.json",
    /* No user-level file known. */
    .user = NULL,
    .detect = {{".agents", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_NAMED,
    .events = {"PreToolUse"},
    .entry = entry,
};
