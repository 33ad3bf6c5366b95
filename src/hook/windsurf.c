/* SPDX-License-Identifier: Apache-2.0 */
/* Windsurf / Devin Desktop (Cascade hooks): .windsurf/hooks.json, events
 * pre_write_code (tool_info.file_path) and pre_run_command
 * (tool_info.command_line, cwd). No matcher: the event is the filter.
 * Refusal: exit 2, the reason on stderr. */
#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  return hook_json_string(p, "agent_action_name") != NULL;
}

static void interpret(json_object *p, HookRequest *req) {
  const char *ev = hook_json_string(p, "agent_action_name");
  json_object *owned = NULL;
  json_object *info = hook_json_object(p, "tool_info", &owned);
  if (ev == NULL) {
    req->not_understood = xstrdup(_("no `agent_action_name`"));
    json_object_put(owned);
    return;
  }
  hook_request_set_tool(req, ev);
  hook_request_set_cwd(req, hook_json_string(info, "cwd"));
  if (streq(ev, "pre_write_code")) {
    const char *f = hook_json_string(info, "file_path");
    if (f == NULL) {
      req->unknown_target = true;
    }
    hook_request_add_path(req, f);
  } else if (streq(ev, "pre_run_command")) {
    const char *cmd = hook_json_string(info, "command_line");
    if (cmd == NULL) {
      req->unknown_target = true;
    }
    hook_request_add_command(req, cmd);
  } else if (streq(ev, "pre_mcp_tool_use")) {
    hook_generic_paths(info, req);
  }
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  hook_answer_exit2(v, ret);
}

static json_object *entry(const char *where) {
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, false, false);
  json_object *h = json_object_new_object();
  hook_json_add_string(h, "command", command);
  /* Windows PowerShell 5 has no `||`; ralon's own refusal exits 2. */
  hook_json_add_string(h, "powershell", HOOK_COMMAND);
  json_object_object_add(h, "show_output", json_object_new_boolean(false));
  return h;
}

const AgentDesc agent_windsurf = {
    .id = AGENT_WINDSURF,
    .name = "windsurf",
    .display = "Windsurf (Cascade)",
    .recognize = recognize,
    .recognize_rank = 20,
    .interpret = interpret,
    .answer = answer,
    .project = ".windsurf/hooks.json",
    .user = ".codeium/windsurf/hooks.json",
    .home_dir = ".codeium/windsurf",
    .detect = {{".windsurf", AGENT_IN_BOTH}, {".codeium/windsurf", AGENT_IN_HOME}},
    .shape = AGENT_SHAPE_FLAT,
    .events = {"pre_write_code", "pre_run_command"},
    .entry = entry,
};
