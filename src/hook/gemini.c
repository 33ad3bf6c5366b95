/* SPDX-License-Identifier: Apache-2.0 */
/* Gemini CLI: BeforeTool in .gemini/settings.json. write_file and replace
 * carry file_path, which may be relative; replace "corrects" a relative
 * path that does not exist to any workspace file ending with it, so such a
 * path is refused when a protected file could be meant. The shell tool is
 * run_shell_command (command, dir_path). Gemini reads only a top-level
 * decision: {"decision":"deny","reason":…}. */
#include <stdlib.h>

#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  return ev != NULL && streq(ev, "BeforeTool");
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"write_file", "replace", NULL};
  static const char *const shell[] = {"run_shell_command", NULL};
  static const char *const quiet[] = {"read_file",        "read_many_files", "glob",
                                      "search_file_content", "list_directory", "google_web_search",
                                      "web_fetch",        "save_memory",     "write_todos",
                                      NULL};
  static const HookTools tools = {edit, shell, NULL, quiet};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  if (hook_name_in(tool, shell)) {
    /* The command runs in dir_path. */
    hook_request_set_shell_dir(req, hook_json_string(p, "cwd"),
                               hook_json_string(input, "dir_path"));
  }
  hook_interpret_common(p, tool, input, &tools, req);
  req->fuzzy_relative = tool != NULL && streq(tool, "replace");
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  if (v->deny) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "decision", json_object_new_string("deny"));
    json_object_object_add(o, "reason", json_object_new_string(hook_reason(v)));
    hook_answer_json(o, 0, ret);
  }
}

static json_object *entry(const char *where) {
  /* Gemini's default timeout is a minute already. */
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, false, false);
  return hook_new_group(HOOK_VERB_MATCHER "|run_shell_command", hook_new_handler(command));
}

static HookRuns runs_here(const char *root, const char *home, bool user, char **note) {
  if (user) {
    return HOOK_RUNS_YES; /* in every project, trusted or not */
  }
  /* Gemini CLI lets GEMINI_CLI_TRUSTED_FOLDERS_PATH name the file. */
  return hook_runs_folder_trust(AGENT_GEMINI, root, home,
                                getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"), note);
}

const AgentDesc agent_gemini = {
    .id = AGENT_GEMINI,
    .name = "gemini",
    .display = "Gemini CLI",
    .recognize = recognize,
    .recognize_rank = 50,
    .interpret = interpret,
    .answer = answer,
    .project = ".gemini/settings.json",
    .user = ".gemini/settings.json",
    /* A home of Gemini's own, holding its .gemini. */
    .user_env = "GEMINI_CLI_HOME",
    .user_env_file = ".gemini/settings.json",
    .user_env_dir = ".gemini",
    .home_dir = ".gemini",
    .detect = {{".gemini", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_GROUPED,
    .events = {"BeforeTool"},
    .entry = entry,
    .trust_note = N_("Gemini CLI runs project hooks only in a trusted folder, and warns when a "
                     "hook changes: trust this folder in Gemini CLI."),
    .runs_here = runs_here,
};
