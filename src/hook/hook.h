/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon hook check`: an agent's pre-tool payload in, a refusal or nothing
 * out, in that agent's own dialect. Each agent has a file of its own
 * (claude.c, gemini.c, …) whose descriptor recognises its payloads, says
 * which paths and shell commands a call touches, and answers; this header
 * is what they share. Facts about each protocol: docs/ARCHITECTURE.md §5
 * and ralon(1). */
#pragma once

#include "json.h"
#include <stdbool.h>
#include <stddef.h>

#include "hook/agents.h"
#include "util.h"

/* Payloads larger than this are refused unread. No agent's tool call
 * comes near it: what a model writes in one call is bounded by its output
 * limit, hundreds of KiB. Four times that would cost json-c alone some
 * 350 M instructions to read, past the 100 ms a hook has. */
#define HOOK_MAX_PAYLOAD (4u * 1024u * 1024u)
/* What is left of a refused payload is read and thrown away, so that the
 * agent's write into the pipe succeeds (Node and Python report a failed
 * one as an error of their own, not as ralon's refusal): up to end of
 * file, 64 times the limit (a quarter second of pipe here), two seconds
 * with nothing written or ten in all, whichever comes first. A writer
 * that never closes, or writes forever, so holds the hook a bounded
 * time, far inside the 60 s written into every agent's configuration,
 * past which three agents let the tool run; one that writes, however
 * slowly the machine lets it, is read to its end. */
#define HOOK_MAX_DRAIN (64u * HOOK_MAX_PAYLOAD)
#define HOOK_DRAIN_IDLE_MS 2000
#define HOOK_DRAIN_TOTAL_MS 10000
/* The work one call may cost before it is refused as too large to check
 * in time (HookRequest.over_budget): about a byte of shell read, or one
 * comparison of a name with one already found, per unit. */
#define HOOK_MAX_WORK (2u * 1024u * 1024u)
/* The names one call may ask to decide, each weighed as 16 plus its
 * components (every component of a name costs system calls). */
#define HOOK_MAX_NAMES (16u * 1024u)

/* What one tool call would touch, as its agent describes it. */
typedef struct {
  Agent agent;      /* the dialect answered in; _AGENT_INVALID: unknown */
  char *tool;       /* the tool's name, when the payload gives one */
  char *cwd;        /* what relative paths are relative to; NULL: ours */
  char **paths;     /* files the call writes, deletes, moves or creates */
  size_t n_paths;
  char **trees;     /* directories whose whole subtree it removes or moves */
  size_t n_trees;
  char **commands;  /* shell commands it runs */
  size_t n_commands;
  /* Directories standing for files a shell command names only when it
   * runs (the words xargs reads): treated as trees, with their own
   * explanation when that is what is refused. */
  char **unread;
  size_t n_unread;
  /* Names a shell command removes or renames as they are (rm, unlink,
   * mv's sources): a symbolic link among them goes itself, and what it
   * leads to stays; anything else is decided as `paths`, or with
   * `entry_trees` as `trees`. */
  char **entries;
  size_t n_entries;
  char **entry_trees;
  size_t n_entry_trees;
  /* Relative names a shell command writes after a `cd` the hook cannot
   * follow (`cd "$X"`, `cd -`): from a directory only running it tells.
   * Refused when a pattern names a path that may end with one (more than
   * `**` does), or below one with `somewhere_trees`; or when it is
   * protected from the working directory, where the `cd` may lead. */
  char **somewhere;
  size_t n_somewhere;
  char **somewhere_trees;
  size_t n_somewhere_trees;
  /* Relative paths the agent may "correct" to any file whose name ends with
   * them (Gemini's replace): one that does not exist is refused, naming the
   * pattern when a protected file could be meant, else asking for the
   * absolute path (any name could end a path below a protected directory). */
  bool fuzzy_relative;
  /* A tool that modifies files, whose targets could not be found: refuse. */
  bool unknown_target;
  /* Why the payload could not be understood (refused), or NULL. */
  char *not_understood;
  /* Work done reading the call (HOOK_MAX_WORK) and the weight of the names
   * found (HOOK_MAX_NAMES); past either, reading stops and the call is
   * refused: a hook must answer before the agent gives up on it, and some
   * agents let the tool run when it does not. */
  size_t work;
  size_t names;
  bool over_budget;
} HookRequest;

typedef struct {
  char *path;    /* as the agent named it */
  char *shown;   /* relative to its project, for the message */
  char *pattern; /* the agent.lock pattern that protects it */
  char *policy;  /* that agent.lock */
  bool unread;   /* found only below a directory standing for unread names */
  bool somewhere; /* a name written where a `cd` the hook cannot follow leads */
} HookHit;

typedef struct {
  bool deny;
  char *reason; /* one paragraph for the agent (and the user) */
  HookHit *hits;
  size_t n_hits;
} HookVerdict;

/* What to print and how to exit. */
typedef struct {
  char *out;
  char *err;
  int exit_code;
} HookAnswer;

/* The whole of `ralon hook check`: `payload` (NUL-terminated after `len`
 * bytes) as read from stdin, `agent` from
 * --agent (or _AGENT_INVALID to recognise it), `start` from -C (or NULL).
 * Never fails: whatever goes wrong becomes a refusal. */
void hook_check(const char *payload, size_t len, Agent agent, const char *start,
                HookAnswer *ret);

void hook_answer_clear(HookAnswer *a);

/* ---- helpers for the agent files (request.c) --------------------------- */

void hook_request_add_path(HookRequest *req, const char *path);
void hook_request_add_tree(HookRequest *req, const char *path);
void hook_request_add_unread(HookRequest *req, const char *dir);
/* An entry (see HookRequest.entries), with `tree` its whole subtree. */
void hook_request_add_entry(HookRequest *req, const char *path, bool tree);
/* A name from an unknown directory (HookRequest.somewhere). */
void hook_request_add_somewhere(HookRequest *req, const char *path, bool tree);
void hook_request_add_command(HookRequest *req, const char *command);
void hook_request_set_tool(HookRequest *req, const char *tool);
void hook_request_set_cwd(HookRequest *req, const char *cwd);
/* The directory a shell tool runs its command in (Gemini's dir_path,
 * Qwen's directory, opencode's workdir), relative to the payload's `cwd`
 * when not absolute: what the command's relative paths are relative to.
 * Before hook_interpret_common, which would set the payload's cwd. */
void hook_request_set_shell_dir(HookRequest *req, const char *cwd, const char *dir);
void hook_request_clear(HookRequest *req);
/* Adds `units` to req->work; false (and req->over_budget) past HOOK_MAX_WORK. */
bool hook_request_charge(HookRequest *req, size_t units);

/* The string at `key` of object `o`, or NULL (also when not a string). */
const char *hook_json_string(json_object *o, const char *key);
/* The object at `key`, or NULL; a string holding a JSON object (Copilot's
 * toolArgs) is parsed into *owned (freed by the caller with
 * json_object_put). */
json_object *hook_json_object(json_object *o, const char *key, json_object **owned);

/* Adds every path in a patch envelope (`*** Add File:`, `*** Update File:`,
 * `*** Delete File:`, `*** Move to:`); returns how many. */
size_t hook_patch_paths(const char *text, HookRequest *req);

/* For tools ralon does not know: every string under a key that names a path
 * (file_path, path, notebook_path, target_file, source, destination, uri,
 * …, at any depth; a file:// URI as its path), and the paths of any patch
 * envelope. Returns how many were found. */
size_t hook_generic_paths(json_object *input, HookRequest *req);

/* Whether a tool name plainly only reads: a read verb (read, view, cat,
 * grep, search, list, fetch, …) as a whole word of it, the name split at
 * `_`, `-`, `.` and changes of case, and nothing like write, edit, create,
 * delete … anywhere in it. */
bool hook_tool_reads_only(const char *tool);

/* When `key` of `payload` is a string holding a patch envelope (Copilot
 * with GPT-5-class models sends its freeform apply_patch so, as tool_name
 * "Edit"): fills the request with the envelope's paths (none: the target
 * is unknown) and returns true; else false, and nothing is touched. */
bool hook_input_patch(json_object *payload, const char *key, HookRequest *req);

/* Marks the request not understood when `payload` has `key` but `input`
 * (what was read from it) is not an object; returns whether it did. */
bool hook_input_invalid(json_object *payload, json_object *input, const char *key,
                        HookRequest *req);

/* A refusal's reason as one string, for the dialects that take one. */
const char *hook_reason(const HookVerdict *v);

/* Answers shared by several dialects (hook.c). */
void hook_answer_exit2(const HookVerdict *v, HookAnswer *ret);     /* stderr + exit 2 */
void hook_answer_json(json_object *o, int exit_code, HookAnswer *ret); /* stdout JSON */
/* Claude Code's PreToolUse refusal (hookSpecificOutput), which Qwen Code
 * and the agents that read Claude's files share. */
json_object *hook_json_claude_deny(const HookVerdict *v);
/* That refusal on stdout, the reason on stderr, exit 2: Claude Code and
 * Qwen Code read stderr on exit 2; agents loading Claude's file block on
 * it too. */
void hook_answer_claude(const HookVerdict *v, HookAnswer *ret);

/* The fields most PreToolUse payloads share: tool_name, tool_input, cwd;
 * recognises the shell tools named in `shell_tools` (NULL-terminated), and
 * the edit tools in `edit_tools`, whose paths must be found. */
typedef struct {
  const char *const *edit_tools;  /* paths required */
  const char *const *shell_tools; /* `command` is a shell command */
  const char *const *patch_tools; /* every string may hold an envelope */
  const char *const *quiet_tools; /* plainly modify nothing: skip */
} HookTools;
void hook_interpret_common(json_object *payload, const char *tool, json_object *input,
                           const HookTools *tools, HookRequest *req);
bool hook_name_in(const char *name, const char *const *list);

/* JSON text of `o` (consumed) on one line with a newline. */
char *hook_json_line(json_object *o);

/* The targets a shell command plainly writes: redirections, rm, mv, cp,
 * tee, truncate, sed -i, …, and patch envelopes given to apply_patch. Best
 * effort; the kernel is the boundary. Paths stay relative to `cwd` unless a
 * `cd` in the command moved it. */
void hook_shell_targets(const char *command, HookRequest *req);
