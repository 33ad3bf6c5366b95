/* SPDX-License-Identifier: Apache-2.0 */
/* OpenAI Codex CLI: PreToolUse in .codex/hooks.json. Files change only
 * through apply_patch, whose tool_input.command is the raw patch; shell
 * tools arrive as Bash. Codex validates hook output against a schema that
 * rejects unknown fields, so the refusal is exit 2 with a non-empty reason
 * on stderr and nothing on stdout. */
#include <string.h>

#include "hook/agent-desc.h"
#include "path.h"

static bool recognize(json_object *p) {
  const char *ev = hook_json_string(p, "hook_event_name");
  json_object *v;
  return ev != NULL && streq(ev, "PreToolUse") && json_object_object_get_ex(p, "turn_id", &v);
}

static void interpret(json_object *p, HookRequest *req) {
  static const char *const shell[] = {"Bash", "shell", "exec_command", "shell_command", NULL};
  static const char *const patch[] = {"apply_patch", "Edit", "Write", NULL};
  static const HookTools tools = {NULL, shell, patch, NULL};
  json_object *owned = NULL;
  json_object *input = hook_json_object(p, "tool_input", &owned);
  if (hook_input_invalid(p, input, "tool_input", req)) {
    return;
  }
  const char *tool = hook_json_string(p, "tool_name");
  hook_interpret_common(p, tool, input, &tools, req);
  json_object_put(owned);
}

static void answer(const HookVerdict *v, HookAnswer *ret) {
  hook_answer_exit2(v, ret);
}

/* Codex's trust_level for `root` or its nearest ancestor listed in
 * config.toml ([projects."/path"] then trust_level = "trusted"): 1, 0
 * (untrusted), -1 (not listed). A line-by-line reading of the one table
 * shape Codex writes. */
static int codex_trust(const char *config, const char *root) {
  _cleanup_free_ char *text = read_text_file(config, HOOK_CONFIG_MAX_SIZE);
  if (text == NULL) {
    return -1;
  }
  int verdict = -1;
  size_t best = 0;
  bool in_match = false;
  size_t match_len = 0;
  for (char *line = text, *next; line != NULL; line = next) {
    next = strchr(line, '\n');
    if (next != NULL) {
      *next++ = '\0';
    }
    line += strspn(line, " \t");
    if (line[0] == '[') {
      in_match = false;
      char quote = line[10];
      if (startswith(line, "[projects.") && (quote == '"' || quote == '\'')) {
        char *end = strchr(line + 11, quote);
        if (end != NULL && end[1] == ']') {
          _cleanup_free_ char *dir = xstrndup(line + 11, (size_t)(end - line - 11));
          if (hook_path_within(root, dir) && strlen(dir) >= best) {
            in_match = true;
            match_len = strlen(dir);
          }
        }
      }
      continue;
    }
    if (in_match && startswith(line, "trust_level")) {
      const char *v = line + strlen("trust_level");
      v += strspn(v, " \t");
      if (*v == '=') {
        v++;
        v += strspn(v, " \t");
        verdict = startswith(v, "\"trusted\"") || startswith(v, "'trusted'") ? 1 : 0;
        best = match_len;
      }
    }
  }
  return verdict;
}

static HookRuns runs_here(const char *root, const char *home, bool user, char **note) {
  if (user) {
    return HOOK_RUNS_YES; /* in every project, trusted or not */
  }
  _cleanup_free_ char *dir = hook_agent_home(AGENT_CODEX, home);
  _cleanup_free_ char *config = dir ? path_join(dir, "config.toml") : NULL;
  if (config != NULL && codex_trust(config, root) == 1) {
    /* TRANSLATORS: /hooks is a command typed in Codex; keep it as it is. */
    *note = xasprintf(_("Codex trusts %s, but runs a new or changed hook only once it is "
                        "reviewed: open /hooks in Codex and trust it."),
                      root);
    return HOOK_RUNS_UNKNOWN;
  }
  /* TRANSLATORS: /hooks is a command typed in Codex, trust_level a
   * key in its config.toml; keep them as they are. */
  *note = xasprintf(_("Codex does not trust %s (no trust_level = \"trusted\" for it in %s), "
                      "so it does not load the project's hooks: trust the project in Codex "
                      "and review the hook in /hooks, or install the hook with --user."),
                    root, config ? config : "~/.codex/config.toml");
  return HOOK_RUNS_NO;
}

const AgentDesc agent_codex = {
    .id = AGENT_CODEX,
    .name = "codex",
    .display = "OpenAI Codex CLI",
    .recognize = recognize,
    .recognize_rank = 70,
    .interpret = interpret,
    .answer = answer,
    .project = ".codex/hooks.json",
    .user = ".codex/hooks.json",
    .user_env = "CODEX_HOME",
    .user_env_file = "hooks.json",
    .home_dir = ".codex",
    .detect = {{".codex", AGENT_IN_BOTH}},
    .shape = AGENT_SHAPE_GROUPED,
    .events = {"PreToolUse"},
    .entry = hook_claude_entry,
    /* TRANSLATORS: /hooks is a command typed in Codex; keep it as it is. */
    .trust_note = N_("Codex runs project hooks only in a trusted project, and skips a new or "
                     "changed hook until it is reviewed: open /hooks in Codex and trust it."),
    .runs_here = runs_here,
};
