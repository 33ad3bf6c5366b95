/* SPDX-License-Identifier: Apache-2.0 */
/* Claude Code: PreToolUse in .claude/settings.json. Payload: tool_name,
 * tool_input, cwd; Write/Edit/MultiEdit carry file_path, NotebookEdit
 * notebook_path, Bash a command. Refusal: exit 2 with the reason on stderr
 * (stdout JSON is then ignored by Claude Code, but read by the agents that
 * load Claude's file, which also block on exit 2). */
#include "hook/hook.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  return ev != NULL && streq(ev, "PreToolUse") && hook_json_string(p, "tool_name") != NULL;
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"Write", "Edit", "MultiEdit", "NotebookEdit", NULL};
  static const char *const shell[] = {"Bash", "PowerShell", NULL};
  /* TodoWrite matches the installed `[Ww]rite` matcher but writes no file. */
  static const char *const quiet[] = {"Read",    "Glob",      "Grep",        "LS",
                                      "WebFetch", "WebSearch", "Agent",       "Task",
                                      "TodoWrite", "AskUserQuestion", "ExitPlanMode",
                                      "NotebookRead", NULL};
  static const HookTools tools = {edit, shell, NULL, quiet};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (input == NULL && hook_input_patch(p, "tool_input", req)) {
    return; /* Copilot's freeform apply_patch, in Claude's shape */
  }
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  hook_interpret_common(p, hook_json_string(p, "tool_name"), input, &tools, req);
  /* Unknown (MCP) tools: check what paths they carry, no more. */
  json_object_put(owned);
}

const HookDialect hook_dialect_claude = {AGENT_CLAUDE, recognize, interpret, hook_answer_claude};
