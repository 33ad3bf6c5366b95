/* SPDX-License-Identifier: Apache-2.0 */
/* Cursor: .cursor/hooks.json, events preToolUse and beforeShellExecution.
 * Payloads carry cursor_version, conversation_id, workspace_roots; the tool
 * name is sometimes missing (or under tool_call/tool), paths sit in path,
 * file_path, target_file or target_notebook. Cursor wants an explicit
 * {"permission":"allow"} (with failClosed an empty answer is a refusal)
 * and refuses with {"permission":"deny","user_message","agent_message"}. */
#include <strings.h>

#include "hook/agent-desc.h"

static bool recognize(json_object *p) {
  json_object *v;
  return json_object_object_get_ex(p, "cursor_version", &v) ||
         json_object_object_get_ex(p, "workspace_roots", &v) ||
         (json_object_object_get_ex(p, "conversation_id", &v) &&
          json_object_object_get_ex(p, "generation_id", &v));
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const edit[] = {"Write", "StrReplace", "Delete", "EditNotebook",
                                     "MultiEdit", "Edit", NULL};
  static const char *const shell[] = {"Shell", "Bash", NULL};
  static const char *const patch[] = {"ApplyPatch", NULL};
  static const char *const quiet[] = {"Read", "ReadFile", "Grep", "Glob", "LS",
                                      "Task", "WebSearch", "WebFetch", "TodoWrite", NULL};
  static const HookTools tools = {edit, shell, patch, quiet};

  const char *ev = hook_json_string(p, "hook_event_name");
  if (ev != NULL && strcasecmp(ev, "beforeShellExecution") == 0) {
    /* The shell's own directory first: that is where it runs. */
    hook_request_set_cwd(req, hook_json_string(p, "cwd"));
  }
  json_object *roots;
  if (json_object_object_get_ex(p, "workspace_roots", &roots) &&
      json_object_is_type(roots, json_type_array) && json_object_array_length(roots) > 0) {
    json_object *r0 = json_object_array_get_idx(roots, 0);
    if (json_object_is_type(r0, json_type_string)) {
      hook_request_set_cwd(req, json_object_get_string(r0));
    }
  }
  if (ev != NULL && strcasecmp(ev, "beforeShellExecution") == 0) {
    hook_request_set_tool(req, "Shell");
    const char *cmd = hook_json_string(p, "command");
    if (cmd == NULL) {
      req->unknown_target = true;
    }
    hook_request_add_command(req, cmd);
    return;
  }
  /* Events that only read, or come after the fact: nothing to refuse. */
  static const char *const passive[] = {"beforeReadFile", "afterFileEdit", "afterShellExecution",
                                        "afterMCPExecution", "beforeSubmitPrompt", "stop",
                                        "afterAgentResponse", "afterAgentThought", NULL};
  for (size_t i = 0; ev != NULL && passive[i] != NULL; i++) {
    if (strcasecmp(ev, passive[i]) == 0) {
      return;
    }
  }
  if (ev != NULL && strcasecmp(ev, "beforeMCPExecution") == 0) {
    hook_request_set_tool(req, hook_json_string(p, "tool_name"));
    hook_generic_paths(p, req);
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  json_object *owned = NULL, *owned2 = NULL;
  json_object *call = hook_json_object(p, "tool_call", &owned2);
  if (tool == NULL) {
    tool = hook_json_string(call, "name");
  }
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (input == NULL && call != NULL) {
    json_object_put(owned);
    input = hook_json_object(call, "input", &owned);
  }
  json_object *raw = NULL;
  if (input == NULL && !json_object_object_get_ex(p, "tool_input", &raw) && call != NULL) {
    json_object_object_get_ex(call, "input", &raw);
  }
  /* ApplyPatch has arrived with the patch as a plain string. */
  hook_interpret_common(p, tool, input ? input : raw, &tools, req);
  json_object_put(owned);
  json_object_put(owned2);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  json_object *o = json_object_new_object();
  if (v->deny) {
    _cleanup_free_ char *user = xasprintf("ralon: %s", hook_reason(v));
    json_object_object_add(o, "permission", json_object_new_string("deny"));
    json_object_object_add(o, "user_message", json_object_new_string(user));
    json_object_object_add(o, "agent_message", json_object_new_string(hook_reason(v)));
  } else {
    json_object_object_add(o, "permission", json_object_new_string("allow"));
  }
  hook_answer_json(o, 0, ret);
}

static json_object *entry(const char *where) {
  /* No matcher: the Shell tool goes through preToolUse as well. */
  _cleanup_free_ char *command = hook_blocking_command(HOOK_COMMAND, where, false, false);
  json_object *h = json_object_new_object();
  hook_json_add_string(h, "command", command);
  hook_json_add_string(h, "type", "command");
  json_object_object_add(h, "failClosed", json_object_new_boolean(true));
  json_object_object_add(h, "timeout", json_object_new_int(HOOK_TIMEOUT_SECONDS));
  return h;
}

const AgentDesc agent_cursor = {
    .id = AGENT_CURSOR,
    .name = "cursor",
    .display = "Cursor",
    .recognize = recognize,
    .recognize_rank = 30,
    .interpret = interpret,
    .answer = answer,
    /* ApplyPatch has arrived as the bare patch. */
    .bare_patch = true,
    .project = ".cursor/hooks.json",
    .user = ".cursor/hooks.json",
    .home_dir = ".cursor",
    .detect = {{".cursor", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_FLAT,
    .events = {"preToolUse"},
    .versioned = true,
    .entry = entry,
    /* Its workspace trust is the IDE's, which cannot be read. */
    .trust_note = N_("Cursor runs project hooks only in a trusted workspace: trust this "
                     "workspace in Cursor."),
};
