/* SPDX-License-Identifier: Apache-2.0 */
/* The coding agents ralon knows how to talk to. */
#pragma once

#include "util.h"

/* The one list of agents, in the order `hook list`, `status` and --help
 * show them: X(ID, name) for the agent described by `agent_NAME` in
 * hook/NAME.c (a const AgentDesc, hook/agent-desc.h). Everything else is
 * made from it: the Agent enum, the --agent names, hook check's
 * recognition, install, detection, trust, the build's source list and
 * the agents in the shell completions (src/meson.build reads the X( lines
 * below, and each descriptor's .display line). Adding an agent: one file
 * and one line here (docs/ARCHITECTURE.md §5). */
#define AGENTS(X)                                                              \
  X(CLAUDE, claude)                                                            \
  X(CURSOR, cursor)                                                            \
  X(OPENCODE, opencode)                                                        \
  X(COPILOT, copilot)                                                          \
  X(CODEX, codex)                                                              \
  X(GEMINI, gemini)                                                            \
  X(ANTIGRAVITY, antigravity)                                                  \
  X(WINDSURF, windsurf)                                                        \
  X(CLINE, cline)                                                              \
  X(QWEN, qwen)                                                                \
  /* (every line ends in a backslash; the list ends at the blank line) */

typedef enum {
#define AGENT_ENUM(ID, name) AGENT_##ID,
  AGENTS(AGENT_ENUM)
#undef AGENT_ENUM
  _AGENT_MAX,
  _AGENT_INVALID = -EINVAL,
} Agent;

/* "claude", "cursor", …: the names `--agent` takes. */
const char *agent_to_string(Agent a);
Agent agent_from_string(const char *s);
/* "Claude Code", "Cursor", …: for people. */
const char *agent_display_name(Agent a);
/* "claude, cursor, …, qwen": every name, for help and error messages
 * (caller frees). */
char *agent_names(const char *separator);
