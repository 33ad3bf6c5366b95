/* SPDX-License-Identifier: Apache-2.0 */
/* Qwen Code: PreToolUse in .qwen/settings.json, Claude-like, but its
 * payload carries `timestamp` and `tool_call_id`, and its tools are
 * write_file, edit (formerly replace), run_shell_command and monitor (which
 * starts a shell command in the background); both shell tools take
 * `command` and `directory`, where it runs. Refusal: as Claude Code (exit 2
 * feeds stderr to the model). */
#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  json_object *v;
  return ev != NULL && streq(ev, "PreToolUse") && json_object_object_get_ex(p, "tool_call_id", &v);
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"write_file", "edit", "replace", "notebook_edit",
                                     "WriteFile",  "Edit", NULL};
  static const char *const shell[] = {"run_shell_command", "monitor", NULL};
  static const char *const quiet[] = {"read_file",   "read_many_files", "glob",
                                      "grep_search", "search_file_content", "list_directory",
                                      "web_fetch",   "web_search",       "todo_write",
                                      "save_memory", "task",             NULL};
  static const HookTools tools = {edit, shell, NULL, quiet};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  if (hook_name_in(tool, shell)) {
    hook_request_set_shell_dir(req, hook_json_string(p, "cwd"),
                               hook_json_string(input, "directory"));
  }
  hook_interpret_common(p, tool, input, &tools, req);
  json_object_put(owned);
}

static json_object *entry(const char *where) {
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, false, false);
  json_object *h = hook_new_handler(command);
  json_object_object_add(h, "timeout", json_object_new_int(HOOK_TIMEOUT_SECONDS * 1000));
  return hook_new_group("^(write_file|edit|replace|notebook_edit|run_shell_command|monitor)$", h);
}

static HookRuns runs_here(const char *root, const char *home, bool user, char **note) {
  if (user) {
    return HOOK_RUNS_YES; /* in every project, trusted or not */
  }
  return hook_runs_folder_trust(AGENT_QWEN, root, home, NULL, note);
}

const AgentDesc agent_qwen = {
    .id = AGENT_QWEN,
    .name = "qwen",
    .display = "Qwen Code",
    .recognize = recognize,
    .recognize_rank = 80,
    .interpret = interpret,
    .answer = hook_answer_claude,
    .project = ".qwen/settings.json",
    .user = ".qwen/settings.json",
    .home_dir = ".qwen",
    .detect = {{".qwen", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_GROUPED,
    .events = {"PreToolUse"},
    .entry = entry,
    .trust_note = N_("Qwen Code runs project hooks only in a trusted folder: trust this folder "
                     "in Qwen Code."),
    .runs_here = runs_here,
};
