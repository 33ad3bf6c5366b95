/* SPDX-License-Identifier: Apache-2.0 */
/* Claude Code: PreToolUse in .claude/settings.json. Payload: tool_name,
 * tool_input, cwd; Write/Edit/MultiEdit carry file_path, NotebookEdit
 * notebook_path, Bash a command. Refusal: exit 2 with the reason on stderr
 * (stdout JSON is then ignored by Claude Code, but read by the agents that
 * load Claude's file, which also block on exit 2). */
#include "hook/agent-desc.h"

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

json_object *hook_claude_entry(const char *where) {
  /* Claude Code and Codex wait ten minutes by default. */
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, false, false);
  json_object *h = hook_new_handler(command);
  hook_json_add_string(h, "statusMessage", "Checking agent.lock");
  return hook_new_group(HOOK_VERB_MATCHER "|Bash", h);
}

static HookRuns runs_here(const char *root, const char *home, bool user, char **note) {
  if (user) {
    return HOOK_RUNS_YES; /* in every project, trusted or not */
  }
  (void)home;
  *note = xasprintf(_("Claude Code reads %s/%s only when started in %s itself, not in a "
                      "subdirectory; a hook installed with --user runs wherever it starts."),
                    root, agent_claude.project, root);
  return HOOK_RUNS_YES;
}

const AgentDesc agent_claude = {
    .id = AGENT_CLAUDE,
    .name = "claude",
    .display = "Claude Code",
    .recognize = recognize,
    .recognize_rank = 90,
    .interpret = interpret,
    .answer = hook_answer_claude,
    .project = ".claude/settings.json",
    .user = ".claude/settings.json",
    .user_env = "CLAUDE_CONFIG_DIR",
    .user_env_file = "settings.json",
    .home_dir = ".claude",
    .detect = {{".claude", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_GROUPED,
    .events = {"PreToolUse"},
    .entry = hook_claude_entry,
    .runs_here = runs_here,
};
