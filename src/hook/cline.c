/* SPDX-License-Identifier: Apache-2.0 */
/* Cline: an executable .clinerules/hooks/PreToolUse receives every tool
 * call: {hookName, workspaceRoots, tool_call:{name,input}} or, from the VS
 * Code adapter, {preToolUse:{toolName,parameters}}. Tools: editor (path),
 * write_to_file/replace_in_file/new_rule (path), apply_patch (input: patch
 * text), run_commands (commands[]), execute_command (command). Cline reads
 * only stdout JSON and ignores the exit code:
 * {"cancel":true,"errorMessage":…} refuses. */
#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  json_object *v;
  return json_object_object_get_ex(p, "hookName", &v) ||
         json_object_object_get_ex(p, "clineVersion", &v) ||
         json_object_object_get_ex(p, "preToolUse", &v) ||
         (json_object_object_get_ex(p, "tool_call", &v) &&
          json_object_object_get_ex(p, "taskId", &v));
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"editor", "write_to_file", "replace_in_file", "new_rule",
                                     NULL};
  static const char *const patch[] = {"apply_patch", NULL};
  static const char *const quiet[] = {"read_files",  "list_files", "search_files",
                                      "ask_followup_question", "attempt_completion",
                                      "fetch_web_content", "list_code_definition_names",
                                      "read_file",   NULL};
  static const HookTools tools = {edit, NULL, patch, quiet};
  json_object *roots;
  if (json_object_object_get_ex(p, "workspaceRoots", &roots) &&
      json_object_is_type(roots, json_type_array) && json_object_array_length(roots) > 0) {
    json_object *r0 = json_object_array_get_idx(roots, 0);
    if (json_object_is_type(r0, json_type_string)) {
      hook_request_set_cwd(req, json_object_get_string(r0));
    }
  }
  json_object *o1 = NULL, *o2 = NULL, *o3 = NULL;
  json_object *call = hook_json_object(p, "tool_call", &o1);
  const char *tool = hook_json_string(call, "name");
  json_object *input = hook_json_object(call, "input", &o2);
  if (call == NULL) {
    json_object *pre = hook_json_object(p, "preToolUse", &o3);
    tool = hook_json_string(pre, "toolName");
    json_object_put(o2);
    input = hook_json_object(pre, "parameters", &o2);
  }
  if (tool != NULL && streq(tool, "run_commands")) {
    hook_request_set_tool(req, tool);
    json_object *cmds;
    if (input != NULL && json_object_object_get_ex(input, "commands", &cmds)) {
      if (json_object_is_type(cmds, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(cmds); i++) {
          json_object *c = json_object_array_get_idx(cmds, i);
          if (json_object_is_type(c, json_type_string)) {
            hook_request_add_command(req, json_object_get_string(c));
          }
        }
      } else if (json_object_is_type(cmds, json_type_string)) {
        /* parameters hold stringified values */
        json_object *parsed = json_tokener_parse(json_object_get_string(cmds));
        for (size_t i = 0; parsed != NULL && json_object_is_type(parsed, json_type_array) &&
                           i < json_object_array_length(parsed);
             i++) {
          hook_request_add_command(req,
                                   json_object_get_string(json_object_array_get_idx(parsed, i)));
        }
        json_object_put(parsed);
      }
    }
    if (req->n_commands == 0) {
      req->unknown_target = true;
    }
  } else if (tool != NULL && streq(tool, "execute_command")) {
    hook_request_set_tool(req, tool);
    const char *cmd = hook_json_string(input, "command");
    if (cmd == NULL) {
      req->unknown_target = true;
    }
    hook_request_add_command(req, cmd);
  } else {
    hook_interpret_common(p, tool, input, &tools, req);
  }
  json_object_put(o1);
  json_object_put(o2);
  json_object_put(o3);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "cancel", json_object_new_boolean(v->deny));
  if (v->deny) {
    json_object_object_add(o, "errorMessage", json_object_new_string(hook_reason(v)));
  }
  hook_answer_json(o, 0, ret);
}

#define UNDO HOOK_UNDO_OWNED("the PreToolUse script ralon wrote in the hooks directory of Cline")

/* Cline ignores a hook's exit status and lets the tool run when the hook
 * prints nothing it can parse, so the script itself answers for a ralon
 * that is missing or fails. Not translated: the file must not depend on
 * the locale of whoever installed it, or reinstalling would rewrite it. */
static const char cline_script[] =
    "#!/bin/sh\n"
    "# ralon: refuses tool calls that would modify a path agent.lock protects.\n"
    "# Written by `ralon hook install`; `ralon hook uninstall` removes it.\n"
    "#\n"
    "# Cline ignores this script's exit status and lets the tool run when it\n"
    "# prints nothing it understands, so a ralon that cannot run, or fails\n"
    "# without answering, is answered here with a refusal.\n"
    "out=$(" HOOK_COMMAND ")\n"
    "status=$?\n"
    "case $status in\n"
    "0)\n"
    "  [ -z \"$out\" ] || printf '%s\\n' \"$out\"\n"
    "  ;;\n"
    "1 | 2)\n"
    "  if [ -n \"$out\" ]; then\n"
    "    printf '%s\\n' \"$out\"\n"
    "  else\n"
    "    printf '{\"cancel\":true,\"errorMessage\":\"ralon hook check failed (exit status %s), "
    "so this tool call was refused. " UNDO "\"}\\n' \"$status\"\n"
    "  fi\n"
    "  ;;\n"
    "*)\n"
    "  printf '{\"cancel\":true,\"errorMessage\":\"ralon hook check could not run (exit status %s; "
    "is ralon installed and on PATH?), so agent.lock could not be checked and this tool call "
    "was refused. " UNDO "\"}\\n' \"$status\"\n"
    "  ;;\n"
    "esac\n"
    "exit 0\n";

static char *file(const char *where) {
  (void)where; /* the script names the file itself */
  return xstrdup(cline_script);
}

const AgentDesc agent_cline = {
    .id = AGENT_CLINE,
    .name = "cline",
    .display = "Cline",
    .recognize = recognize,
    .recognize_rank = 10,
    .interpret = interpret,
    .answer = answer,
    .project = ".clinerules/hooks/PreToolUse",
    .user = "Documents/Cline/Hooks/PreToolUse",
    .detect = {{".clinerules", AGENT_IN_BOTH},
               {".cline", AGENT_IN_BOTH},
               {"Documents/Cline", AGENT_IN_HOME}},
    .shape = AGENT_SHAPE_FILE,
    .file = file,
    /* A script whose name says nothing: ours when it runs HOOK_COMMAND. */
    .marked = true,
    .executable = true,
};
