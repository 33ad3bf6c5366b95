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

#define UNDO HOOK_UNDO_OWNED("ralon.js in the plugins directory of opencode")

/* opencode has no command hooks: a plugin that asks ralon and throws to
 * refuse. Anything but a clean exit refuses, including a ralon that cannot
 * be started or does not answer in time. */
static const char opencode_plugin[] =
    "// ralon: refuses tool calls that would modify a path agent.lock protects.\n"
    "// Written by `ralon hook install`; `ralon hook uninstall` removes it.\n"
    "//\n"
    "// Every tool call is put to `" HOOK_COMMAND "`. A refusal, a failure, or a\n"
    "// ralon that cannot be started stops the call.\n"
    "import { spawnSync } from \"node:child_process\";\n"
    "\n"
    "export const RalonPlugin = async ({ directory }) => ({\n"
    "  \"tool.execute.before\": async (input, output) => {\n"
    "    const request = JSON.stringify({\n"
    "      tool_name: input.tool,\n"
    "      tool_input: output.args,\n"
    "      cwd: directory,\n"
    "      hook_event_name: \"tool.execute.before\",\n"
    "    });\n"
    "    const result = spawnSync(\"ralon\", [\"hook\", \"check\"], {\n"
    "      cwd: directory,\n"
    "      input: request,\n"
    "      encoding: \"utf8\",\n"
    "      timeout: 60000,\n"
    "    });\n"
    "    if (result.error) {\n"
    "      throw new Error(\n"
    "        `ralon could not be run (${result.error.message}; is it installed and on PATH?), ` +\n"
    "          \"so agent.lock could not be checked and this tool call was refused. \" +\n"
    "          \"" UNDO "\",\n"
    "      );\n"
    "    }\n"
    "    if (result.status !== 0) {\n"
    "      const reason = (result.stderr || \"\").trim();\n"
    "      const how = result.signal ? `signal ${result.signal}` "
    ": `exit status ${result.status}`;\n"
    "      throw new Error(\n"
    "        reason ||\n"
    "          `ralon hook check failed (${how}), so this tool call was refused. ` +\n"
    "            \"" UNDO "\",\n"
    "      );\n"
    "    }\n"
    "  },\n"
    "});\n";

static char *file(const char *where) {
  (void)where; /* the plugin names the file itself */
  return xstrdup(opencode_plugin);
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
    .file = file,
};
