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

#include "hook/hook.h"
#include "hook/install.h"

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

const HookDialect hook_dialect_opencode = {AGENT_OPENCODE, recognize, interpret, answer};

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
HookRuns hook_opencode_runs_here(bool user, char **ret_note) {
  *ret_note = NULL;
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
