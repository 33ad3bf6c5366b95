/* SPDX-License-Identifier: Apache-2.0 */
/* Gemini CLI: BeforeTool in .gemini/settings.json. write_file and replace
 * carry file_path, which may be relative; replace "corrects" a relative
 * path that does not exist to any workspace file ending with it, so such a
 * path is refused when a protected file could be meant. The shell tool is
 * run_shell_command (command, dir_path). Gemini reads only a top-level
 * decision: {"decision":"deny","reason":…}. */
#include "hook/hook.h"

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

const HookDialect hook_dialect_gemini = {AGENT_GEMINI, recognize, interpret, answer};
