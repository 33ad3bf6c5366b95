/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/agents.h"

static const struct {
  const char *name;
  const char *display;
} agents[_AGENT_MAX] = {
    [AGENT_CLAUDE] = {"claude", "Claude Code"},
    [AGENT_CURSOR] = {"cursor", "Cursor"},
    [AGENT_OPENCODE] = {"opencode", "opencode"},
    [AGENT_COPILOT] = {"copilot", "GitHub Copilot"},
    [AGENT_CODEX] = {"codex", "OpenAI Codex CLI"},
    [AGENT_GEMINI] = {"gemini", "Gemini CLI"},
    [AGENT_ANTIGRAVITY] = {"antigravity", "Google Antigravity"},
    [AGENT_WINDSURF] = {"windsurf", "Windsurf (Cascade)"},
    [AGENT_CLINE] = {"cline", "Cline"},
    [AGENT_QWEN] = {"qwen", "Qwen Code"},
};

const char *agent_to_string(Agent a) {
  return a >= 0 && a < _AGENT_MAX ? agents[a].name : NULL;
}

const char *agent_display_name(Agent a) {
  return a >= 0 && a < _AGENT_MAX ? agents[a].display : NULL;
}

Agent agent_from_string(const char *s) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    if (streq(agents[a].name, s)) {
      return (Agent)a;
    }
  }
  return _AGENT_INVALID;
}
