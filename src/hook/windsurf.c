/* SPDX-License-Identifier: Apache-2.0 */
/* Windsurf / Devin Desktop (Cascade hooks): .windsurf/hooks.json, events
 * pre_write_code (tool_info.file_path) and pre_run_command
 * (tool_info.command_line, cwd). No matcher: the event is the filter.
 * Refusal: exit 2, the reason on stderr. */
#include "hook/hook.h"

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

const HookDialect hook_dialect_windsurf = {AGENT_WINDSURF, recognize, interpret, answer};
