/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon hook install|uninstall|list`: writes each agent's own hook
 * configuration so that it runs `ralon hook check` before a tool call.
 *
 * Every edit keeps what is not ralon's: other keys, other hooks, their
 * order. A handler is ralon's when its command contains `ralon hook check`
 * (what the Rust ralon installs, too), so older entries are upgraded in
 * place rather than duplicated. A file that cannot be understood is refused
 * and left untouched; a file is written whole or not at all. */
#pragma once

#include <stdbool.h>

#include "hook/agents.h"
#include "util.h"

/* The command every installed hook runs. */
#define HOOK_COMMAND "ralon hook check"

/* A configuration larger than this is not a hook configuration. */
#define HOOK_CONFIG_MAX_SIZE (16u << 20)

typedef enum {
  HOOK_CHANGE_WROTE,     /* our hook was not there; now it is (file created or edited) */
  HOOK_CHANGE_UPDATED,   /* our hook was there in another form (e.g. the Rust ralon's); replaced */
  HOOK_CHANGE_UNCHANGED, /* our hook is there as it should be; nothing written */
  HOOK_CHANGE_REMOVED,   /* uninstall: our hook was removed (content NULL: the file was deleted) */
  HOOK_CHANGE_ABSENT,    /* uninstall: there was nothing of ours to remove */
  _HOOK_CHANGE_MAX,
  _HOOK_CHANGE_INVALID = -EINVAL,
} HookChangeKind;

typedef struct {
  Agent agent;
  HookChangeKind kind;
  char *path;    /* the configuration file */
  char *content; /* the file's text after the change (or as it stands when
                    unchanged); NULL when the file is deleted or absent */
} HookChange;

/* "wrote", "updated", "unchanged", "removed", "absent": stable names for
 * --json. */
const char *hook_change_kind_to_string(HookChangeKind k);

/* Installs (or with `remove`, uninstalls) ralon's hook for `agent`.
 * `root`: the project root (the policy root, or -C/cwd when there is
 * none); `home`: $HOME, used with `user` for the user-level configuration.
 * `dry_run`: compute the change and fill *ret, write nothing. Missing
 * parent directories are created (0755); an existing file keeps its
 * permission bits. What an install creates (the file, its directories) is
 * recorded in $XDG_STATE_HOME/ralon/created.json (default under `home`),
 * and an uninstall removes it again: the file when nothing but ralon's
 * default is left in it, the directories once empty; never what ralon did
 * not create. Refuses (-1, *err naming the file; nothing touched)
 * a configuration that is not valid JSON, not an object, has `hooks` or
 * the event key of an unexpected type, is a symbolic link, or (project
 * scope) lies through a symbolic link outside the project; and a file
 * ralon owns whole (Copilot's ralon.json, Cline's script, the opencode
 * plugin) that exists but was not written by ralon. */
int hook_install(Agent agent, const char *root, const char *home, bool user, bool remove,
                 bool dry_run, HookChange *ret, Error *err);
void hook_change_clear(HookChange *c);

/* Where `agent`'s configuration lives (project or user scope), or NULL
 * when the agent has none there (Antigravity has no known user-level
 * file) or `user` is set without a home. At user level, the directory the
 * agent is told to use instead of home (its descriptor's user_env, an
 * absolute CODEX_HOME, CLAUDE_CONFIG_DIR, …) wins, as it does for the
 * agent. */
char *hook_config_path(Agent agent, const char *root, const char *home, bool user);
/* Whether our hook is in it now. A configuration that cannot be read or
 * parsed is an error. */
int hook_is_installed(Agent agent, const char *root, const char *home, bool user, bool *ret,
                      Error *err);

/* For --agent auto: agents whose configuration directory exists in the
 * project or in home (each descriptor's `detect`: .claude, .github/hooks,
 * .config/opencode, …), or, with a home, the directory the agent's
 * user_env names (CODEX_HOME, …). Returns whether any was found; none
 * found, none is set. `home` may be NULL (then only the project counts). */
bool hook_detect(const char *root, const char *home, bool ret[_AGENT_MAX]);

/* A translated note for agents that must be told to trust project hooks
 * before they run them (the descriptor's trust_note: Codex, Gemini CLI,
 * Qwen Code, Cursor), or NULL. */
const char *hook_trust_note(Agent agent);

typedef enum {
  HOOK_RUNS_YES,     /* nothing known stops the agent from running it */
  HOOK_RUNS_NO,      /* the agent will not run it here, as things stand */
  HOOK_RUNS_UNKNOWN, /* it depends on what cannot be read (a trust prompt
                        not answered yet, an IDE's workspace trust) */
  _HOOK_RUNS_MAX,
  _HOOK_RUNS_INVALID = -EINVAL,
} HookRuns;

/* "yes", "no", "unknown": stable names for --json. */
const char *hook_runs_to_string(HookRuns r);

/* Whether `agent` will run a hook installed at that level for a session in
 * the project `root`, from the agent's own trust records where they can be
 * read (its descriptor's runs_here): Gemini CLI's and Qwen Code's
 * trustedFolders.json and folderTrust setting, Codex's trust_level in
 * config.toml, Copilot's trusted folders.
 * *ret_note (may be NULL) gets a translated sentence saying why not, or
 * where the agent must be started, and what to do (caller frees; NULL when
 * there is nothing to say). A user-level hook runs everywhere. */
HookRuns hook_runs_here(Agent agent, const char *root, const char *home, bool user,
                        char **ret_note);

/* Whether an executable `ralon` is on `path_env` (a $PATH value; NULL:
 * the system's default search path), which is what the agent will run.
 * *ret_found (optional) gets its full name. */
bool hook_ralon_on_path(const char *path_env, char **ret_found);

/* ---- helpers for the agent files (install.c) --------------------------- */

/* The tools that modify files, by the verbs in their names, for agents
 * whose matchers are regular expressions searched in the tool name (the
 * Rust ralon's, so its entries compare equal where nothing else changed). */
#define HOOK_VERB_MATCHER                                                                   \
  "[Ww]rite|[Ee]dit|[Cc]reate|[Rr]eplace|[Pp]atch|[Ii]nsert|[Uu]pdate|[Dd]elete|[Rr]emove|" \
  "[Rr]ename|[Mm]ove"

/* How long an agent may wait for the hook. Gemini CLI, Qwen Code and
 * Copilot let the tool run when a hook times out, so the only safe limit
 * is one ralon never reaches: `hook check` answers in milliseconds and
 * bounds itself; a minute (Gemini's and Qwen's own default) leaves room
 * for a loaded machine or a cold disk. */
#define HOOK_TIMEOUT_SECONDS 60

/* How a file ralon owns whole tells the user to take it away (no single
 * quote: the Cline script prints it from within one). */
#define HOOK_UNDO_OWNED(file)                                                      \
  "If ralon was removed on purpose, remove its hook: run `ralon hook uninstall` "  \
  "where ralon is installed, or delete " file "."

struct json_object;

/* The shell command an agent runs: HOOK_COMMAND (or `check`), and every
 * failure of ralon (missing, not executable, killed, crashed) made exit 2
 * with a reason that says what happened and how to take the hook away.
 * `where` names the file holding the hook (`owned`: a file ralon owns
 * whole); `copilot` adds Copilot's JSON refusal. */
char *hook_blocking_command(const char *check, const char *where, bool owned, bool copilot);
/* {"type": "command", "command": command} */
struct json_object *hook_new_handler(const char *command);
/* {"matcher": matcher, "hooks": [handler]}, taking over `handler`. */
struct json_object *hook_new_group(const char *matcher, struct json_object *handler);
/* o[key] = value, a string. */
void hook_json_add_string(struct json_object *o, const char *key, const char *value);
/* The layout every file ralon writes gets: two-space indent, a final
 * newline. */
char *hook_json_pretty(struct json_object *o);

/* An environment variable naming a directory, when it is set to an
 * absolute path (the XDG rule: a relative value is ignored). */
const char *hook_env_dir(const char *name);
/* The agent's own user-level directory (where its trust is kept): from
 * its user_env, else home_dir under `home`; NULL when neither is known. */
char *hook_agent_home(Agent a, const char *home);
/* An agent's own JSON file, read as the agent reads it (comments
 * allowed), or NULL; and doc.a.b.c, when every step is there. */
struct json_object *hook_agent_json(const char *path);
struct json_object *hook_json_at(struct json_object *doc, const char *const *keys);
/* Whether `path` is `dir` or lies below it (both absolute). */
bool hook_path_within(const char *path, const char *dir);
/* Gemini CLI's folder trust, which Qwen Code inherited, read from
 * trustedFolders.json in the agent's home (or `trusted_file`, absolute)
 * and the folderTrust setting. */
HookRuns hook_runs_folder_trust(Agent a, const char *root, const char *home,
                                const char *trusted_file, char **note);
