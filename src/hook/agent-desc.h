/* SPDX-License-Identifier: Apache-2.0 */
/* One coding agent, whole: everything ralon knows about it, in one
 * descriptor in the agent's own file (hook/claude.c: agent_claude, …),
 * listed once in AGENTS() (hook/agents.h). hook check, install, uninstall,
 * list, status, detection and trust read these and nothing else that is
 * agent-specific; tests/unit/test-agents.c checks every descriptor is
 * complete. */
#pragma once

#include <stdbool.h>

#include "hook/agents.h"
#include "hook/hook.h"
#include "hook/install.h"
#include "json.h"

/* How ralon's hook sits in the agent's configuration. */
typedef enum {
  AGENT_SHAPE_GROUPED, /* hooks.EVENT[] = {matcher, hooks: [handler…]} (Claude Code and kin) */
  AGENT_SHAPE_FLAT,    /* hooks.EVENT[] = handler (Cursor, Windsurf) */
  AGENT_SHAPE_NAMED,   /* a top-level "ralon": {enabled, EVENT: [group]} (Antigravity) */
  AGENT_SHAPE_FILE,    /* a file ralon owns whole (a script, a plugin) */
  _AGENT_SHAPE_MAX,
} AgentShape;

/* Where a directory that shows the agent is used is looked for. */
enum {
  AGENT_IN_PROJECT = 1,
  AGENT_IN_HOME = 2,
  AGENT_IN_BOTH = 3,
};

typedef struct {
  const char *dir; /* relative to the project or home */
  unsigned where;  /* AGENT_IN_* */
} AgentDir;

typedef struct AgentDesc {
  Agent id;            /* its AGENT_* */
  const char *name;    /* what --agent takes: "claude" */
  /* For people: "Claude Code". Written on a line of its own as
   * `.display = "…",` with no quote or backslash inside: src/meson.build
   * reads it from there for the zsh and fish completions. */
  const char *display;

  /* ---- hook check: its payloads and its answers ---- */
  /* Whether a parsed payload is this agent's; NULL: never guessed, only
   * with --agent (the installed command names it). */
  bool (*recognize)(json_object *payload);
  /* With recognize: agents are tried in increasing rank, so the most
   * specific shapes go first and Claude's, which others imitate, last. */
  unsigned recognize_rank;
  /* Fills the request from a payload of this agent. */
  void (*interpret)(json_object *payload, HookRequest *req);
  /* The refusal, or the (often empty) consent, in this agent's words. */
  void (*answer)(const HookVerdict *v, HookAnswer *ret);
  /* It sends a bare patch envelope, not JSON, for its patch tool: such a
   * payload is answered in its terms (one agent at most: Cursor). */
  bool bare_patch;

  /* ---- its configuration ---- */
  const char *project; /* the file ralon edits, relative to the project */
  const char *user;    /* the same relative to home; NULL: none known */
  /* The environment variable naming the directory the agent reads its
   * user-level configuration from instead (an absolute path wins, as it
   * does for the agent; NULL: none), the file relative to it, and the
   * agent's own directory relative to it (its trust records; whose
   * existence shows the agent is used). */
  const char *user_env;
  const char *user_env_file;
  const char *user_env_dir;
  /* The agent's own directory relative to home (its trust records). */
  const char *home_dir;
  /* Directories whose existence shows the agent is used (--agent auto,
   * init, status), up to a {NULL} entry. */
  AgentDir detect[4];

  /* ---- ralon's hook in it ---- */
  AgentShape shape;
  /* The events ralon's entry goes under (JSON shapes). */
  const char *events[2];
  /* A new file starts with "version": 1 (Cursor's hooks.json). */
  bool versioned;
  /* JSON shapes: one element of each event array, a matcher group or (flat)
   * a handler, running HOOK_COMMAND; `where` names the file for the
   * refusal the command prints when ralon cannot run (NULL: unknown). */
  json_object *(*entry)(const char *where);
  /* AGENT_SHAPE_FILE: the file's whole text. */
  char *(*file)(const char *where);
  /* AGENT_SHAPE_FILE: the name is generic, so the file is ours only when
   * it runs HOOK_COMMAND (otherwise its name, ralon.*, says it is ours). */
  bool marked;
  bool executable;

  /* ---- will it run? ---- */
  /* Untranslated (N_()): what must be done before the agent runs project
   * hooks, or NULL. */
  const char *trust_note;
  /* Whether ralon's hook at that level (`user`: the user-level one; also
   * when `root` is NULL) runs for a session in the project `root`, read
   * from the agent's own records; *note (set only when there is something
   * to say) why not or where to start, translated. NULL: a user-level hook
   * runs; a project's, with a trust note, HOOK_RUNS_UNKNOWN and that
   * note, else HOOK_RUNS_YES. */
  HookRuns (*runs_here)(const char *root, const char *home, bool user, char **note);
} AgentDesc;

/* Claude Code's entry: a matcher group for the tools that write and Bash,
 * whose handler shows a status message. Codex reads the same. */
json_object *hook_claude_entry(const char *where);

/* The descriptor of `a`, or NULL when `a` is no agent. */
const AgentDesc *agent_desc(Agent a);

#define AGENT_DECLARE(ID, name) extern const AgentDesc agent_##name;
AGENTS(AGENT_DECLARE)
#undef AGENT_DECLARE
