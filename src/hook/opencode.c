/* SPDX-License-Identifier: Apache-2.0 */
/* opencode: no command hooks; the plugin .opencode/plugins/ralon.js calls
 * `ralon hook check` from tool.execute.before with {tool_name, tool_input,
 * cwd, hook_event_name:"tool.execute.before"} and throws ralon's stderr
 * when it exits non-zero; cwd is where opencode was started, from which it
 * resolves relative paths too. Tools of opencode 1.18.33, as the real
 * client sends them (tests/agents/test_opencode.py): write and edit
 * (filePath) for most models, apply_patch (patchText, paths relative to
 * cwd) instead for GPT-named ones, bash (command, and workdir: where it
 * runs, relative to cwd or absolute); task starts a subagent whose calls
 * come through the plugin too; read, glob, grep, skill, todowrite and
 * webfetch change no file. multiedit and patch are older builds' names. */
#include <stdlib.h>
#include <strings.h>

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

/* opencode's own test of a flag variable: "1" or "true", in any case. */
static bool flag_set(const char *name) {
  const char *v = getenv(name);
  return v != NULL && (streq(v, "1") || strcasecmp(v, "true") == 0);
}

/* opencode reads these at start (the real client shows it,
 * tests/agents/test_opencode.py): OPENCODE_PURE, which --pure sets too,
 * loads no plugin but its own, so neither level's ralon.js runs;
 * OPENCODE_DISABLE_PROJECT_CONFIG skips every .opencode/ directory, so
 * only the user-level plugin runs. Read from ralon's environment, which
 * is the shell's opencode would be started from. */
static HookRuns runs_here(const char *root, const char *home, bool user, char **ret_note) {
  (void)root;
  (void)home;
  if (flag_set("OPENCODE_PURE")) {
    /* TRANSLATORS: OPENCODE_PURE and --pure are opencode's names; keep them. */
    *ret_note = xstrdup(_("OPENCODE_PURE is set here, so opencode loads no plugin but its own, "
                          "this one included: unset OPENCODE_PURE (and do not start opencode "
                          "with --pure)."));
    return HOOK_RUNS_NO;
  }
  if (!user && flag_set("OPENCODE_DISABLE_PROJECT_CONFIG")) {
    /* TRANSLATORS: OPENCODE_DISABLE_PROJECT_CONFIG is opencode's name; keep it. */
    *ret_note = xstrdup(_("OPENCODE_DISABLE_PROJECT_CONFIG is set here, so opencode skips the "
                          "project's .opencode directory and this plugin: unset it, or install "
                          "the hook with --user."));
    return HOOK_RUNS_NO;
  }
  return HOOK_RUNS_YES;
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
    .runs_here = runs_here,
};
