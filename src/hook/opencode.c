/* SPDX-License-Identifier: Apache-2.0 */
/* opencode: no command hooks; the plugin .opencode/plugins/ralon.js calls
 * `ralon hook check` from tool.execute.before with {tool_name, tool_input,
 * cwd, hook_event_name:"tool.execute.before"} and throws ralon's stderr
 * when it exits non-zero. Tools: write/edit/multiedit (filePath),
 * apply_patch/patch (patchText, paths relative to the project), bash
 * (command, and workdir: where it runs). */
#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  return ev != NULL && streq(ev, "tool.execute.before");
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"write", "edit", "multiedit", NULL};
  static const char *const shell[] = {"bash", NULL};
  static const char *const patch[] = {"apply_patch", "patch", NULL};
  static const char *const quiet[] = {"read", "glob",     "grep",     "list", "webfetch",
                                      "task", "todowrite", "todoread", NULL};
  static const HookTools tools = {edit, shell, patch, quiet};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  if (hook_name_in(tool, shell)) {
    hook_request_set_shell_dir(req, hook_json_string(p, "cwd"), hook_json_string(input, "workdir"));
  }
  hook_interpret_common(p, tool, input, &tools, req);
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  hook_answer_exit2(v, ret);
}

const AgentDesc agent_opencode = {
    .id = AGENT_OPENCODE,
    .name = "opencode",
    .display = "opencode",
    .recognize = recognize,
    .recognize_rank = 60,
    .interpret = interpret,
    .answer = answer,
    .project = ".opencode/plugins/ralon.js",
    .user = ".config/opencode/plugins/ralon.js",
    .user_env = "XDG_CONFIG_HOME",
    .user_env_file = "opencode/plugins/ralon.js",
    .user_env_dir = "opencode",
    .home_dir = ".config/opencode",
    .detect = {{".opencode", AGENT_IN_BOTH}, {".config/opencode", AGENT_IN_HOME}},
    .shape = AGENT_SHAPE_FILE,
    .file = hook_opencode_plugin,
};
