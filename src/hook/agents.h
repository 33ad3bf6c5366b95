/* SPDX-License-Identifier: Apache-2.0 */
/* The coding agents ralon knows how to talk to. */
#pragma once

#include "util.h"

typedef enum {
  AGENT_CLAUDE,
  AGENT_CURSOR,
  AGENT_OPENCODE,
  AGENT_COPILOT,
  AGENT_CODEX,
  AGENT_GEMINI,
  AGENT_ANTIGRAVITY,
  AGENT_WINDSURF,
  AGENT_CLINE,
  AGENT_QWEN,
  _AGENT_MAX,
  _AGENT_INVALID = -EINVAL,
} Agent;

/* "claude", "cursor", …: the names `--agent` takes. */
const char *agent_to_string(Agent a);
Agent agent_from_string(const char *s);
/* "Claude Code", "Cursor", …: for people. */
const char *agent_display_name(Agent a);
