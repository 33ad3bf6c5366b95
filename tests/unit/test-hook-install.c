/* SPDX-License-Identifier: Apache-2.0 */
/* hook_install() on real temporary projects: the exact files written for
 * every agent, idempotence, what is kept of other people's configuration,
 * upgrades of the Rust ralon's entries, refusals that leave files
 * untouched, uninstall, dry runs, permissions, symbolic links, detection,
 * and what the installed commands do when ralon is missing or fails. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook/agents.h"
#include "hook/install.h"
#include "json.h"
#include "path.h"
#include "util.h"
#include "tmptree.h"

#define VERB                                                                                   \
  "[Ww]rite|[Ee]dit|[Cc]reate|[Rr]eplace|[Pp]atch|[Ii]nsert|[Uu]pdate|[Dd]elete|[Rr]emove|" \
  "[Rr]ename|[Mm]ove"

/* ---- what a fresh install writes ---------------------------------------- */

/* The installed command, as it stands in a JSON file (quotes escaped):
 * any failure of ralon but its own exit 2 becomes exit 2 with a reason
 * and the way to take the hook away. @F@ is the file (fresh_at()). */
#define FAIL_TAIL(undo)                                                                          \
  " || { s=$?; [ $s = 2 ] && exit 2; if [ $s = 127 ]; then w='ralon is not installed or not on " \
  "PATH'; elif [ $s = 126 ]; then w='ralon cannot be executed'; elif [ $s -gt 128 ]; then "      \
  "w=\\\"ralon was killed by signal $((s - 128))\\\"; else w=\\\"ralon hook check failed with "    \
  "exit status $s\\\"; fi; m=\\\"agent.lock could not be checked ($w), so this tool call was "    \
  "refused. If ralon was removed on purpose, remove its hook: run 'ralon hook uninstall' where " \
  "ralon is installed, or " undo ".\\\"; "
#define CMD_JSON "ralon hook check" FAIL_TAIL("delete ralon's entry in @F@") \
  "echo \\\"ralon: $m\\\" >&2; exit 2; }"
#define CMD_JSON_AG "ralon hook check --agent antigravity" \
  FAIL_TAIL("delete ralon's entry in @F@") "echo \\\"ralon: $m\\\" >&2; exit 2; }"
#define CMD_JSON_COPILOT                                                                   \
  "ralon hook check" FAIL_TAIL("delete @F@")                                              \
  "printf '{\\\"permissionDecision\\\":\\\"deny\\\",\\\"permissionDecisionReason\\\":\\\"%s\\\"}" \
  "\\\\n' \\\"$m\\\"; echo \\\"ralon: $m\\\" >&2; exit 2; }"


static const char claude_fresh[] = "{\n"
                                   "  \"hooks\": {\n"
                                   "    \"PreToolUse\": [\n"
                                   "      {\n"
                                   "        \"matcher\": \"" VERB "|Bash\",\n"
                                   "        \"hooks\": [\n"
                                   "          {\n"
                                   "            \"type\": \"command\",\n"
                                   "            \"command\": \"" CMD_JSON "\",\n"
                                   "            \"statusMessage\": \"Checking agent.lock\"\n"
                                   "          }\n"
                                   "        ]\n"
                                   "      }\n"
                                   "    ]\n"
                                   "  }\n"
                                   "}\n";

static const char gemini_fresh[] = "{\n"
                                   "  \"hooks\": {\n"
                                   "    \"BeforeTool\": [\n"
                                   "      {\n"
                                   "        \"matcher\": \"" VERB "|run_shell_command\",\n"
                                   "        \"hooks\": [\n"
                                   "          {\n"
                                   "            \"type\": \"command\",\n"
                                   "            \"command\": \"" CMD_JSON "\"\n"
                                   "          }\n"
                                   "        ]\n"
                                   "      }\n"
                                   "    ]\n"
                                   "  }\n"
                                   "}\n";

static const char qwen_fresh[] =
    "{\n"
    "  \"hooks\": {\n"
    "    \"PreToolUse\": [\n"
    "      {\n"
    "        \"matcher\": \"^(write_file|edit|replace|notebook_edit|run_shell_command|monitor)$\",\n"
    "        \"hooks\": [\n"
    "          {\n"
    "            \"type\": \"command\",\n"
    "            \"command\": \"" CMD_JSON "\",\n"
    "            \"timeout\": 60000\n"
    "          }\n"
    "        ]\n"
    "      }\n"
    "    ]\n"
    "  }\n"
    "}\n";

static const char cursor_fresh[] = "{\n"
                                   "  \"version\": 1,\n"
                                   "  \"hooks\": {\n"
                                   "    \"preToolUse\": [\n"
                                   "      {\n"
                                   "        \"command\": \"" CMD_JSON "\",\n"
                                   "        \"type\": \"command\",\n"
                                   "        \"failClosed\": true,\n"
                                   "        \"timeout\": 60\n"
                                   "      }\n"
                                   "    ]\n"
                                   "  }\n"
                                   "}\n";

static const char windsurf_fresh[] = "{\n"
                                     "  \"hooks\": {\n"
                                     "    \"pre_write_code\": [\n"
                                     "      {\n"
                                     "        \"command\": \"" CMD_JSON "\",\n"
                                     "        \"powershell\": \"ralon hook check\",\n"
                                     "        \"show_output\": false\n"
                                     "      }\n"
                                     "    ],\n"
                                     "    \"pre_run_command\": [\n"
                                     "      {\n"
                                     "        \"command\": \"" CMD_JSON "\",\n"
                                     "        \"powershell\": \"ralon hook check\",\n"
                                     "        \"show_output\": false\n"
                                     "      }\n"
                                     "    ]\n"
                                     "  }\n"
                                     "}\n";

static const char antigravity_fresh[] =
    "{\n"
    "  \"ralon\": {\n"
    "    \"enabled\": true,\n"
    "    \"PreToolUse\": [\n"
    "      {\n"
    "        \"matcher\": \"" VERB "\",\n"
    "        \"hooks\": [\n"
    "          {\n"
    "            \"type\": \"command\",\n"
    "            \"command\": \"" CMD_JSON_AG "\",\n"
    "            \"timeout\": 60\n"
    "          }\n"
    "        ]\n"
    "      }\n"
    "    ]\n"
    "  }\n"
    "}\n";

static const char copilot_fresh[] = "{\n"
                                    "  \"version\": 1,\n"
                                    "  \"hooks\": {\n"
                                    "    \"preToolUse\": [\n"
                                    "      {\n"
                                    "        \"type\": \"command\",\n"
                                    "        \"bash\": \"" CMD_JSON_COPILOT "\",\n"
                                    "        \"timeoutSec\": 60\n"
                                    "      }\n"
                                    "    ]\n"
                                    "  }\n"
                                    "}\n";

static const char cline_fresh[] =
    "#!/bin/sh\n"
    "# ralon: refuses tool calls that would modify a path agent.lock protects.\n"
    "# Written by `ralon hook install`; `ralon hook uninstall` removes it.\n"
    "#\n"
    "# Cline ignores this script's exit status and lets the tool run when it\n"
    "# prints nothing it understands, so a ralon that cannot run, or fails\n"
    "# without answering, is answered here with a refusal.\n"
    "out=$(ralon hook check)\n"
    "status=$?\n"
    "case $status in\n"
    "0)\n"
    "  [ -z \"$out\" ] || printf '%s\\n' \"$out\"\n"
    "  ;;\n"
    "1 | 2)\n"
    "  if [ -n \"$out\" ]; then\n"
    "    printf '%s\\n' \"$out\"\n"
    "  else\n"
    "    printf '{\"cancel\":true,\"errorMessage\":\"ralon hook check failed (exit status %s), "
    "so this tool call was refused. If ralon was removed on purpose, remove its hook: run "
    "`ralon hook uninstall` where ralon is installed, or delete the PreToolUse script ralon "
    "wrote in the hooks directory of Cline.\"}\\n' \"$status\"\n"
    "  fi\n"
    "  ;;\n"
    "*)\n"
    "  printf '{\"cancel\":true,\"errorMessage\":\"ralon hook check could not run (exit status %s; "
    "is ralon installed and on PATH?), so agent.lock could not be checked and this tool call "
    "was refused. If ralon was removed on purpose, remove its hook: run `ralon hook uninstall` "
    "where ralon is installed, or delete the PreToolUse script ralon wrote in the hooks "
    "directory of Cline.\"}\\n' \"$status\"\n"
    "  ;;\n"
    "esac\n"
    "exit 0\n";

static const char opencode_fresh[] =
    "// ralon: refuses tool calls that would modify a path agent.lock protects.\n"
    "// Written by `ralon hook install`; `ralon hook uninstall` removes it.\n"
    "//\n"
    "// Every tool call is put to `ralon hook check`. A refusal, a failure, or a\n"
    "// ralon that cannot be started stops the call.\n"
    "import { spawnSync } from \"node:child_process\";\n"
    "\n"
    "export const RalonPlugin = async ({ directory }) => ({\n"
    "  \"tool.execute.before\": async (input, output) => {\n"
    "    const request = JSON.stringify({\n"
    "      tool_name: input.tool,\n"
    "      tool_input: output.args,\n"
    "      cwd: directory,\n"
    "      hook_event_name: \"tool.execute.before\",\n"
    "    });\n"
    "    const result = spawnSync(\"ralon\", [\"hook\", \"check\"], {\n"
    "      cwd: directory,\n"
    "      input: request,\n"
    "      encoding: \"utf8\",\n"
    "      timeout: 60000,\n"
    "    });\n"
    "    if (result.error) {\n"
    "      throw new Error(\n"
    "        `ralon could not be run (${result.error.message}; is it installed and on PATH?), ` +\n"
    "          \"so agent.lock could not be checked and this tool call was refused. \" +\n"
    "          \"If ralon was removed on purpose, remove its hook: run `ralon hook uninstall` where "
    "ralon is installed, or delete ralon.js in the plugins directory of opencode.\",\n"
    "      );\n"
    "    }\n"
    "    if (result.status !== 0) {\n"
    "      const reason = (result.stderr || \"\").trim();\n"
    "      const how = result.signal ? `signal ${result.signal}` : `exit status "
    "${result.status}`;\n"
    "      throw new Error(\n"
    "        reason ||\n"
    "          `ralon hook check failed (${how}), so this tool call was refused. ` +\n"
    "            \"If ralon was removed on purpose, remove its hook: run `ralon hook uninstall` "
    "where ralon is installed, or delete ralon.js in the plugins directory of opencode.\",\n"
    "      );\n"
    "    }\n"
    "  },\n"
    "});\n";

typedef struct {
  Agent agent;
  const char *file; /* project-relative */
  const char *fresh;
  const char *event; /* where foreign hooks go; NULL: not a JSON settings file */
  bool flat;
} AgentCase;

static const AgentCase cases[] = {
    {AGENT_CLAUDE, ".claude/settings.json", claude_fresh, "PreToolUse", false},
    {AGENT_CURSOR, ".cursor/hooks.json", cursor_fresh, "preToolUse", true},
    {AGENT_OPENCODE, ".opencode/plugins/ralon.js", opencode_fresh, NULL, false},
    {AGENT_COPILOT, ".github/hooks/ralon.json", copilot_fresh, NULL, false},
    {AGENT_CODEX, ".codex/hooks.json", claude_fresh, "PreToolUse", false},
    {AGENT_GEMINI, ".gemini/settings.json", gemini_fresh, "BeforeTool", false},
    {AGENT_ANTIGRAVITY, ".agents/hooks.json", antigravity_fresh, NULL, false},
    {AGENT_WINDSURF, ".windsurf/hooks.json", windsurf_fresh, "pre_write_code", true},
    {AGENT_CLINE, ".clinerules/hooks/PreToolUse", cline_fresh, NULL, false},
    {AGENT_QWEN, ".qwen/settings.json", qwen_fresh, "PreToolUse", false},
};

/* A fresh text with its @F@ (the file, as the refusal names it) filled. */
static char *fresh_at(const char *tmpl, const char *where) {
  char *out = xstrdup("");
  for (const char *p = tmpl;;) {
    const char *at = strstr(p, "@F@");
    char *next = xasprintf("%s%.*s%s", out, (int)(at ? (size_t)(at - p) : strlen(p)), p,
                           at ? where : "");
    free(out);
    out = next;
    if (at == NULL) {
      return out;
    }
    p = at + 3;
  }
}

/* What installing `ac` into a project writes. */
static char *fresh(const AgentCase *ac) {
  return fresh_at(ac->fresh, ac->file);
}

/* ---- temporary trees ---------------------------------------------------- */






static void make_dirs(const char *path) {
  _cleanup_free_ char *p = xstrdup(path);
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
      *s = c;
      if (c == '\0') {
        break;
      }
    }
  }
}

/* Writes root/rel (parents made), with `mode`, and an old mtime so that a
 * rewrite within the same second still shows. */
static char *put(const char *root, const char *rel, const char *text, mode_t mode) {
  char *p = path_join(root, rel);
  _cleanup_free_ char *dir = path_dirname(p);
  make_dirs(dir);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_msg(fd >= 0, "create %s: %s", p, strerror(errno));
  size_t len = strlen(text);
  ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
  ck_assert_int_eq(fchmod(fd, mode), 0);
  const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  ck_assert_int_eq(futimens(fd, old), 0);
  ck_assert_int_eq(close(fd), 0);
  return p;
}

/* The file's text, or NULL when there is none. */
static char *slurp(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ck_assert_int_eq(errno, ENOENT);
    return NULL;
  }
  char *text = NULL;
  size_t len = 0;
  ck_assert_int_eq(read_fd_limited(fd, 1 << 20, &text, &len), 0);
  close(fd);
  return text;
}

static char *slurp_at(const char *root, const char *rel) {
  _cleanup_free_ char *p = path_join(root, rel);
  return slurp(p);
}

static bool exists(const char *root, const char *rel) {
  _cleanup_free_ char *p = path_join(root, rel);
  struct stat st;
  return lstat(p, &st) == 0;
}

static mode_t mode_of(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mode & 07777;
}

static size_t count_entries(const char *dir) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
  }
  closedir(d);
  return n;
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) {
    n++;
  }
  return n;
}

/* Everything that shows a file was left alone: bytes, inode, mode, mtime. */
typedef struct {
  struct stat st;
  char *text;
} Snapshot;

static void snapshot(const char *path, Snapshot *s) {
  ck_assert_int_eq(lstat(path, &s->st), 0);
  s->text = slurp(path);
  ck_assert_ptr_nonnull(s->text);
}

static void assert_untouched(const char *path, Snapshot *s) {
  struct stat st;
  ck_assert_int_eq(lstat(path, &st), 0);
  _cleanup_free_ char *text = slurp(path);
  ck_assert_ptr_nonnull(text);
  ck_assert_str_eq(text, s->text);
  ck_assert_uint_eq(st.st_ino, s->st.st_ino);
  ck_assert_uint_eq(st.st_mode, s->st.st_mode);
  ck_assert_int_eq(st.st_mtim.tv_sec, s->st.st_mtim.tv_sec);
  ck_assert_int_eq(st.st_mtim.tv_nsec, s->st.st_mtim.tv_nsec);
  free(s->text);
  s->text = NULL;
}

/* ---- calling the module ------------------------------------------------- */

static HookChange run_hook(Agent a, const char *root, const char *home, bool user, bool remove,
                           bool dry_run) {
  HookChange c;
  _cleanup_error_ Error err = {0};
  int r = hook_install(a, root, home, user, remove, dry_run, &c, &err);
  ck_assert_msg(r == 0, "%s %s: %s", remove ? "uninstall" : "install", agent_to_string(a),
                err.message);
  ck_assert_int_eq(c.agent, a);
  ck_assert_ptr_nonnull(c.path);
  return c;
}

static HookChange install(Agent a, const char *root) {
  return run_hook(a, root, NULL, false, false, false);
}

static HookChange uninstall(Agent a, const char *root) {
  return run_hook(a, root, NULL, false, true, false);
}

static void expect_kind(HookChange *c, HookChangeKind want) {
  ck_assert_msg(c->kind == want, "%s: got %s, want %s", c->path,
                hook_change_kind_to_string(c->kind), hook_change_kind_to_string(want));
}

/* hook_install must fail; returns the message. */
static char *expect_failure(Agent a, const char *root, const char *home, bool user, bool remove,
                            int errnum) {
  HookChange c = {0};
  Error err = {0};
  int r = hook_install(a, root, home, user, remove, false, &c, &err);
  ck_assert_msg(r == -1, "%s %s succeeded (%s)", remove ? "uninstall" : "install",
                agent_to_string(a), c.path);
  ck_assert_ptr_null(c.path);
  ck_assert_ptr_null(c.content);
  ck_assert_ptr_nonnull(err.message);
  if (errnum != 0) {
    ck_assert_msg(err.errnum == errnum, "%s: errnum %d, want %d", err.message, err.errnum, errnum);
  }
  return err.message;
}

static const AgentCase *case_of(Agent a) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    if (cases[i].agent == a) {
      return &cases[i];
    }
  }
  ck_abort_msg("no case for %d", a);
  abort();
}

/* ---- names and paths ---------------------------------------------------- */

START_TEST(test_kind_names) {
  ck_assert_str_eq(hook_change_kind_to_string(HOOK_CHANGE_WROTE), "wrote");
  ck_assert_str_eq(hook_change_kind_to_string(HOOK_CHANGE_UPDATED), "updated");
  ck_assert_str_eq(hook_change_kind_to_string(HOOK_CHANGE_UNCHANGED), "unchanged");
  ck_assert_str_eq(hook_change_kind_to_string(HOOK_CHANGE_REMOVED), "removed");
  ck_assert_str_eq(hook_change_kind_to_string(HOOK_CHANGE_ABSENT), "absent");
  ck_assert_ptr_null(hook_change_kind_to_string(_HOOK_CHANGE_MAX));
  ck_assert_ptr_null(hook_change_kind_to_string(_HOOK_CHANGE_INVALID));
  hook_change_clear(NULL);
}
END_TEST

START_TEST(test_config_paths) {
  static const char *const user[_AGENT_MAX] = {
      [AGENT_CLAUDE] = "/h/.claude/settings.json",
      [AGENT_CURSOR] = "/h/.cursor/hooks.json",
      [AGENT_OPENCODE] = "/h/.config/opencode/plugins/ralon.js",
      [AGENT_COPILOT] = "/h/.copilot/hooks/ralon.json",
      [AGENT_CODEX] = "/h/.codex/hooks.json",
      [AGENT_GEMINI] = "/h/.gemini/settings.json",
      [AGENT_ANTIGRAVITY] = NULL,
      [AGENT_WINDSURF] = "/h/.codeium/windsurf/hooks.json",
      [AGENT_CLINE] = "/h/Documents/Cline/Hooks/PreToolUse",
      [AGENT_QWEN] = "/h/.qwen/settings.json",
  };
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    Agent a = cases[i].agent;
    _cleanup_free_ char *p = hook_config_path(a, "/p", "/h", false);
    _cleanup_free_ char *want = path_join("/p", cases[i].file);
    ck_assert_str_eq(p, want);
    _cleanup_free_ char *u = hook_config_path(a, "/p", "/h", true);
    if (user[a] == NULL) {
      ck_assert_ptr_null(u);
    } else {
      ck_assert_str_eq(u, user[a]);
    }
    _cleanup_free_ char *nohome = hook_config_path(a, "/p", NULL, true);
    ck_assert_ptr_null(nohome);
  }
  ck_assert_ptr_null(hook_config_path(_AGENT_MAX, "/p", "/h", false));
  ck_assert_ptr_null(hook_config_path(_AGENT_INVALID, "/p", "/h", false));
}
END_TEST

/* ---- install ------------------------------------------------------------ */

START_TEST(test_fresh_exact) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const AgentCase *ac = &cases[i];
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = install(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_WROTE);
    _cleanup_free_ char *want_path = path_join(root, ac->file);
    ck_assert_str_eq(c.path, want_path);
    _cleanup_free_ char *want = fresh(ac);
    ck_assert_str_eq(c.content, want);
    _cleanup_free_ char *text = slurp(c.path);
    ck_assert_msg(text != NULL, "%s not written", c.path);
    ck_assert_str_eq(text, want);
    /* New files: 0666/0777 less the umask (022 here). */
    ck_assert_uint_eq(mode_of(c.path), ac->agent == AGENT_CLINE ? 0755u : 0644u);
    ck_assert_uint_eq(count_entries(root), 1);
    hook_change_clear(&c);
    ck_assert_ptr_null(c.path);
    ck_assert_ptr_null(c.content);
  }
}
END_TEST

START_TEST(test_install_twice) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = install(cases[i].agent, root);
    expect_kind(&c, HOOK_CHANGE_WROTE);
    const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, c.path, old, 0), 0);
    Snapshot s;
    snapshot(c.path, &s);
    hook_change_clear(&c);

    c = install(cases[i].agent, root);
    expect_kind(&c, HOOK_CHANGE_UNCHANGED);
    _cleanup_free_ char *want = fresh(&cases[i]);
    ck_assert_str_eq(c.content, want);
    assert_untouched(c.path, &s);
    _cleanup_free_ char *dir = path_dirname(c.path);
    ck_assert_uint_eq(count_entries(dir), 1);
    hook_change_clear(&c);
  }
}
END_TEST

/* Our hook already there, in a layout of the user's: not even reformatted. */
START_TEST(test_unchanged_keeps_layout) {
  _cleanup_free_ char *root = make_tmpdir();
  static const char layout[] =
      "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"" VERB "|Bash\", \"hooks\": [{\"type\": "
      "\"command\", \"command\": \"" CMD_JSON "\", \"statusMessage\": \"Checking "
      "agent.lock\"}]}]},\n    \"model\": \"opus\", \"n\": 1.50}";
  _cleanup_free_ char *text = fresh_at(layout, ".claude/settings.json");
  _cleanup_free_ char *p = put(root, ".claude/settings.json", text, 0644);
  Snapshot s;
  snapshot(p, &s);
  HookChange c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_UNCHANGED);
  ck_assert_str_eq(c.content, text);
  assert_untouched(p, &s);
  hook_change_clear(&c);
}
END_TEST

START_TEST(test_empty_file) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p = put(root, ".claude/settings.json", " \n", 0644);
  HookChange c = uninstall(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_ABSENT);
  hook_change_clear(&c);
  c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_WROTE);
  _cleanup_free_ char *text = slurp(p);
  _cleanup_free_ char *want = fresh(case_of(AGENT_CLAUDE));
  ck_assert_str_eq(text, want);
  hook_change_clear(&c);
}
END_TEST

/* Foreign keys and hooks survive in their order, next to ours, and
 * uninstall gives back exactly what was there. */
START_TEST(test_foreign_claude_exact) {
  _cleanup_free_ char *root = make_tmpdir();
  static const char before[] = "{\n"
                               "  \"model\": \"opus\",\n"
                               "  \"hooks\": {\n"
                               "    \"PostToolUse\": [\n"
                               "      {\n"
                               "        \"matcher\": \"Write\",\n"
                               "        \"hooks\": [\n"
                               "          {\n"
                               "            \"type\": \"command\",\n"
                               "            \"command\": \"prettier --write\"\n"
                               "          }\n"
                               "        ]\n"
                               "      }\n"
                               "    ],\n"
                               "    \"PreToolUse\": [\n"
                               "      {\n"
                               "        \"matcher\": \"Bash\",\n"
                               "        \"hooks\": [\n"
                               "          {\n"
                               "            \"type\": \"command\",\n"
                               "            \"command\": \"audit.sh\",\n"
                               "            \"timeout\": 30\n"
                               "          }\n"
                               "        ]\n"
                               "      }\n"
                               "    ]\n"
                               "  },\n"
                               "  \"permissions\": {\n"
                               "    \"allow\": [],\n"
                               "    \"deny\": [\n"
                               "      \"Read(./.env)\"\n"
                               "    ],\n"
                               "    \"ratio\": 1.50,\n"
                               "    \"empty\": {},\n"
                               "    \"path\": \"a/b \\\"c\\\" \\u00e9\\t\"\n"
                               "  },\n"
                               "  \"z\": null\n"
                               "}\n";
  /* json-c hands back \u00e9 as the character itself. */
  static const char before_canonical[] = "{\n"
                                         "  \"model\": \"opus\",\n"
                                         "  \"hooks\": {\n"
                                         "    \"PostToolUse\": [\n"
                                         "      {\n"
                                         "        \"matcher\": \"Write\",\n"
                                         "        \"hooks\": [\n"
                                         "          {\n"
                                         "            \"type\": \"command\",\n"
                                         "            \"command\": \"prettier --write\"\n"
                                         "          }\n"
                                         "        ]\n"
                                         "      }\n"
                                         "    ],\n"
                                         "    \"PreToolUse\": [\n"
                                         "      {\n"
                                         "        \"matcher\": \"Bash\",\n"
                                         "        \"hooks\": [\n"
                                         "          {\n"
                                         "            \"type\": \"command\",\n"
                                         "            \"command\": \"audit.sh\",\n"
                                         "            \"timeout\": 30\n"
                                         "          }\n"
                                         "        ]\n"
                                         "      }\n"
                                         "    ]\n"
                                         "  },\n"
                                         "  \"permissions\": {\n"
                                         "    \"allow\": [],\n"
                                         "    \"deny\": [\n"
                                         "      \"Read(./.env)\"\n"
                                         "    ],\n"
                                         "    \"ratio\": 1.50,\n"
                                         "    \"empty\": {},\n"
                                         "    \"path\": \"a/b \\\"c\\\" \xc3\xa9\\t\"\n"
                                         "  },\n"
                                         "  \"z\": null\n"
                                         "}\n";
  static const char after[] = "{\n"
                              "  \"model\": \"opus\",\n"
                              "  \"hooks\": {\n"
                              "    \"PostToolUse\": [\n"
                              "      {\n"
                              "        \"matcher\": \"Write\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"prettier --write\"\n"
                              "          }\n"
                              "        ]\n"
                              "      }\n"
                              "    ],\n"
                              "    \"PreToolUse\": [\n"
                              "      {\n"
                              "        \"matcher\": \"Bash\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"audit.sh\",\n"
                              "            \"timeout\": 30\n"
                              "          }\n"
                              "        ]\n"
                              "      },\n"
                              "      {\n"
                              "        \"matcher\": \"" VERB "|Bash\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"" CMD_JSON "\",\n"
                              "            \"statusMessage\": \"Checking agent.lock\"\n"
                              "          }\n"
                              "        ]\n"
                              "      }\n"
                              "    ]\n"
                              "  },\n"
                              "  \"permissions\": {\n"
                              "    \"allow\": [],\n"
                              "    \"deny\": [\n"
                              "      \"Read(./.env)\"\n"
                              "    ],\n"
                              "    \"ratio\": 1.50,\n"
                              "    \"empty\": {},\n"
                              "    \"path\": \"a/b \\\"c\\\" \xc3\xa9\\t\"\n"
                              "  },\n"
                              "  \"z\": null\n"
                              "}\n";
  _cleanup_free_ char *p = put(root, ".claude/settings.json", before, 0644);
  HookChange c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_WROTE);
  _cleanup_free_ char *want = fresh_at(after, ".claude/settings.json");
  ck_assert_str_eq(c.content, want);
  _cleanup_free_ char *text = slurp(p);
  ck_assert_str_eq(text, want);
  hook_change_clear(&c);

  c = uninstall(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_REMOVED);
  ck_assert_str_eq(c.content, before_canonical);
  _cleanup_free_ char *text2 = slurp(p);
  ck_assert_str_eq(text2, before_canonical);
  hook_change_clear(&c);

  c = uninstall(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_ABSENT);
  hook_change_clear(&c);
}
END_TEST

/* The same for every agent with a shared JSON configuration. */
START_TEST(test_foreign_every_agent) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const AgentCase *ac = &cases[i];
    if (ac->event == NULL && ac->agent != AGENT_ANTIGRAVITY) {
      continue;
    }
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_free_ char *before = NULL;
    if (ac->agent == AGENT_ANTIGRAVITY) {
      before = xstrdup("{\n"
                       "  \"lint\": {\n"
                       "    \"Stop\": [\n"
                       "      {\n"
                       "        \"command\": \"make lint\"\n"
                       "      }\n"
                       "    ]\n"
                       "  },\n"
                       "  \"zz\": {\n"
                       "    \"enabled\": false\n"
                       "  }\n"
                       "}\n");
    } else if (ac->flat) {
      before = xasprintf("{\n"
                         "  \"a\": true,\n"
                         "  \"hooks\": {\n"
                         "    \"other\": [\n"
                         "      {\n"
                         "        \"command\": \"x\"\n"
                         "      }\n"
                         "    ],\n"
                         "    \"%s\": [\n"
                         "      {\n"
                         "        \"command\": \"audit.sh\"\n"
                         "      }\n"
                         "    ]\n"
                         "  },\n"
                         "  \"z\": [\n"
                         "    1,\n"
                         "    2\n"
                         "  ]\n"
                         "}\n",
                         ac->event);
    } else {
      before = xasprintf("{\n"
                         "  \"a\": true,\n"
                         "  \"hooks\": {\n"
                         "    \"other\": [],\n"
                         "    \"%s\": [\n"
                         "      {\n"
                         "        \"matcher\": \"Read\",\n"
                         "        \"hooks\": [\n"
                         "          {\n"
                         "            \"type\": \"command\",\n"
                         "            \"command\": \"audit.sh\"\n"
                         "          }\n"
                         "        ]\n"
                         "      }\n"
                         "    ]\n"
                         "  },\n"
                         "  \"z\": [\n"
                         "    1,\n"
                         "    2\n"
                         "  ]\n"
                         "}\n",
                         ac->event);
    }
    _cleanup_free_ char *p = put(root, ac->file, before, 0644);
    HookChange c = install(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_WROTE);
    _cleanup_free_ char *text = slurp(p);
    ck_assert_str_eq(text, c.content);
    ck_assert_int_ge(count(text, "ralon hook check"), 1);
    /* Everything foreign is there, in its order, ahead of ours. */
    const char *marks[] = {"audit.sh", "ralon hook check", "\"z\""};
    if (ac->agent == AGENT_ANTIGRAVITY) {
      marks[0] = "make lint";
      marks[1] = "\"zz\"";
      marks[2] = "ralon hook check";
    }
    const char *at = text;
    for (size_t m = 0; m < ELEMENTSOF(marks); m++) {
      const char *next = strstr(at, marks[m]);
      ck_assert_msg(next != NULL, "%s: `%s` missing or out of order:\n%s", ac->file, marks[m],
                    text);
      at = next;
    }
    if (ac->event != NULL) {
      ck_assert_ptr_nonnull(strstr(text, "\"other\""));
    }
    hook_change_clear(&c);

    c = install(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_UNCHANGED);
    hook_change_clear(&c);

    c = uninstall(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_REMOVED);
    _cleanup_free_ char *restored = slurp(p);
    /* Cursor's document gained a version, which stays. */
    if (ac->agent == AGENT_CURSOR) {
      ck_assert_ptr_nonnull(strstr(restored, "\"version\": 1"));
    } else {
      ck_assert_str_eq(restored, before);
    }
    ck_assert_str_eq(restored, c.content);
    hook_change_clear(&c);
  }
}
END_TEST

/* What the Rust ralon 0.1.x wrote is recognised and brought up to date in
 * place, never duplicated. */
START_TEST(test_rust_entries_upgraded) {
  static const struct {
    Agent agent;
    const char *text;
    HookChangeKind kind;
  } rust[] = {
      {AGENT_CLAUDE,
       "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"" VERB
       "\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n"
       "            \"command\": \"ralon hook check\",\n            \"statusMessage\": "
       "\"Checking agent.lock\"\n          }\n        ]\n      }\n    ]\n  }\n}\n",
       HOOK_CHANGE_UPDATED},
      {AGENT_CODEX,
       "{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"" VERB
       "\",\"hooks\":[{\"type\":\"command\",\"command\":\"ralon hook check\","
       "\"statusMessage\":\"Checking agent.lock\"}]}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_GEMINI,
       "{\"hooks\":{\"BeforeTool\":[{\"matcher\":\"" VERB
       "\",\"hooks\":[{\"type\":\"command\",\"command\":\"ralon hook check\"}]}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_WINDSURF,
       "{\"hooks\":{\"pre_write_code\":[{\"command\":\"ralon hook check\",\"powershell\":"
       "\"ralon hook check\",\"show_output\":false}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_CURSOR,
       "{\"version\":1,\"hooks\":{\"preToolUse\":[{\"command\":\"ralon hook check\",\"type\":"
       "\"command\",\"failClosed\":true,\"timeout\":10}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_COPILOT,
       "{\"hooks\":{\"PreToolUse\":[{\"type\":\"command\",\"command\":\"ralon hook check\","
       "\"timeout\":15}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_ANTIGRAVITY,
       "{\"ralon\":{\"enabled\":true,\"PreToolUse\":[{\"matcher\":\"" VERB
       "\",\"hooks\":[{\"type\":\"command\",\"command\":\"ralon hook check\",\"timeout\":15}]}]}}",
       HOOK_CHANGE_UPDATED},
      {AGENT_CLINE,
       "#!/bin/sh\n# Ralon: refuse edits to paths in agent.lock\nexec ralon hook check\n",
       HOOK_CHANGE_UPDATED},
      {AGENT_OPENCODE,
       "export const RalonPlugin = async () => ({ \"tool.execute.before\": async () => {} });\n",
       HOOK_CHANGE_UPDATED},
  };
  for (size_t i = 0; i < ELEMENTSOF(rust); i++) {
    const AgentCase *ac = case_of(rust[i].agent);
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_free_ char *p = put(root, ac->file, rust[i].text, 0644);
    HookChange c = install(ac->agent, root);
    expect_kind(&c, rust[i].kind);
    _cleanup_free_ char *text = slurp(p);
    if (rust[i].kind == HOOK_CHANGE_UNCHANGED) {
      ck_assert_str_eq(text, rust[i].text);
    } else {
      _cleanup_free_ char *want = fresh(ac);
      ck_assert_str_eq(text, want);
    }
    hook_change_clear(&c);
  }
}
END_TEST

/* A Rust entry between foreign groups keeps its place; copies of ours are
 * merged into one; a handler of ours inside someone's group is replaced
 * there, under that group's matcher. */
START_TEST(test_upgrade_in_place) {
  _cleanup_free_ char *root = make_tmpdir();
  static const char before[] =
      "{\"hooks\": {\"PreToolUse\": ["
      "{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"a.sh\"}]},"
      "{\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"b.sh\"},"
      " {\"type\": \"command\", \"command\": \"/usr/bin/ralon hook check\"}]},"
      "{\"matcher\": \"Read\", \"hooks\": [{\"type\": \"command\", \"command\": \"c.sh\"}]},"
      "{\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", "
      "\"command\": \"ralon hook check\"}]}"
      "]}}";
  static const char after[] = "{\n"
                              "  \"hooks\": {\n"
                              "    \"PreToolUse\": [\n"
                              "      {\n"
                              "        \"matcher\": \"Bash\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"a.sh\"\n"
                              "          }\n"
                              "        ]\n"
                              "      },\n"
                              "      {\n"
                              "        \"matcher\": \"Edit\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"b.sh\"\n"
                              "          },\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"" CMD_JSON "\",\n"
                              "            \"statusMessage\": \"Checking agent.lock\"\n"
                              "          }\n"
                              "        ]\n"
                              "      },\n"
                              "      {\n"
                              "        \"matcher\": \"Read\",\n"
                              "        \"hooks\": [\n"
                              "          {\n"
                              "            \"type\": \"command\",\n"
                              "            \"command\": \"c.sh\"\n"
                              "          }\n"
                              "        ]\n"
                              "      }\n"
                              "    ]\n"
                              "  }\n"
                              "}\n";
  _cleanup_free_ char *p = put(root, ".claude/settings.json", before, 0644);
  HookChange c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_UPDATED);
  _cleanup_free_ char *text = slurp(p);
  _cleanup_free_ char *want = fresh_at(after, ".claude/settings.json");
  ck_assert_str_eq(text, want);
  hook_change_clear(&c);

  c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_UNCHANGED);
  hook_change_clear(&c);

  /* Uninstall takes our handler out of the shared group, and leaves the group. */
  c = uninstall(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_REMOVED);
  _cleanup_free_ char *left = slurp(p);
  ck_assert_uint_eq(count(left, "ralon"), 0);
  ck_assert_uint_eq(count(left, "\"matcher\""), 3);
  ck_assert_ptr_nonnull(strstr(left, "b.sh"));
  hook_change_clear(&c);
}
END_TEST

/* ---- refusals ----------------------------------------------------------- */

START_TEST(test_malformed_refused) {
  static const struct {
    const char *text;
    const char *needle; /* in the message, after the file name */
    bool settings;      /* a `hooks`/event type problem: not for Antigravity */
  } bad[] = {
      {"{\"hooks\": {", ":1:12: not valid JSON (unexpected end of file)", false},
      {"{\n  \"a\": 1,\n  \"b\": \n}\n", ":4:1: not valid JSON", false},
      {"{\"a\": 1,}", ":1:9: not valid JSON (a comment, a trailing comma", false},
      {"{\"a\": 1} {}", ":1:10: not valid JSON", false},
      {"{\n  // mine\n  \"a\": 1\n}", ":2:3: not valid JSON (a comment", false},
      {"{\"a\": \"\xff\"}", "not valid JSON", false},
      {"[1, 2]", "does not contain a JSON object", false},
      {"\"x\"", "does not contain a JSON object", false},
      {"null", "does not contain a JSON object", false},
      {"{\"hooks\": []}", ": `hooks` is not a JSON object", true},
      {"{\"hooks\": \"x\"}", ": `hooks` is not a JSON object", true},
  };
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const AgentCase *ac = &cases[i];
    if (ac->event == NULL && ac->agent != AGENT_ANTIGRAVITY) {
      continue;
    }
    for (size_t b = 0; b <= ELEMENTSOF(bad); b++) {
      _cleanup_free_ char *text = NULL, *needle = NULL;
      if (b < ELEMENTSOF(bad)) {
        if (bad[b].settings && ac->agent == AGENT_ANTIGRAVITY) {
          continue;
        }
        text = xstrdup(bad[b].text);
        needle = xstrdup(bad[b].needle);
      } else {
        if (ac->event == NULL) {
          continue;
        }
        text = xasprintf("{\"hooks\": {\"%s\": {\"matcher\": \"x\"}}}", ac->event);
        needle = xasprintf(": `hooks.%s` is not a JSON array", ac->event);
      }
      for (int remove = 0; remove <= 1; remove++) {
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *p = put(root, ac->file, text, 0644);
        Snapshot s;
        snapshot(p, &s);
        _cleanup_free_ char *msg = expect_failure(ac->agent, root, NULL, false, remove, EINVAL);
        ck_assert_msg(startswith(msg, p), "message does not start with the file: %s", msg);
        ck_assert_msg(strstr(msg, needle) != NULL, "%s: want `%s` in: %s", ac->file, needle, msg);
        assert_untouched(p, &s);
        _cleanup_free_ char *dir = path_dirname(p);
        ck_assert_uint_eq(count_entries(dir), 1);
        bool installed = true;
        Error err = {0};
        ck_assert_int_eq(hook_is_installed(ac->agent, root, NULL, false, &installed, &err), -1);
        error_clear(&err);
      }
    }
  }
}
END_TEST

/* A NUL byte json-c would take for the end of the text. */
START_TEST(test_nul_byte_refused) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p = put(root, ".qwen/settings.json", "", 0644);
  static const char text[] = "{\"a\": 1}\n\0{\"b\": 2}\n";
  int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
  ck_assert_int_eq(close(fd), 0);
  _cleanup_free_ char *msg = expect_failure(AGENT_QWEN, root, NULL, false, false, EINVAL);
  _cleanup_free_ char *want = xasprintf("%s:2:1: not valid JSON (a NUL byte)", p);
  ck_assert_msg(startswith(msg, want), "%s", msg);
  struct stat st;
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_size, (off_t)sizeof(text) - 1);
}
END_TEST

START_TEST(test_foreign_owned_file_refused) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p =
      put(root, ".clinerules/hooks/PreToolUse", "#!/bin/sh\necho '{}'\n", 0755);
  Snapshot s;
  snapshot(p, &s);
  _cleanup_free_ char *msg = expect_failure(AGENT_CLINE, root, NULL, false, false, EEXIST);
  ck_assert_ptr_nonnull(strstr(msg, p));
  assert_untouched(p, &s);

  snapshot(p, &s);
  HookChange c = uninstall(AGENT_CLINE, root);
  expect_kind(&c, HOOK_CHANGE_ABSENT);
  ck_assert_ptr_null(c.content);
  assert_untouched(p, &s);
  hook_change_clear(&c);
}
END_TEST

START_TEST(test_not_a_regular_file) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p = path_join(root, ".claude/settings.json");
  make_dirs(p);
  _cleanup_free_ char *msg = expect_failure(AGENT_CLAUDE, root, NULL, false, false, 0);
  ck_assert_ptr_nonnull(strstr(msg, p));
  ck_assert_uint_eq(count_entries(p), 0);
}
END_TEST

START_TEST(test_symlinks) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *outside = make_tmpdir();

  /* The configuration itself a link: refused, wherever it leads. */
  _cleanup_free_ char *target = put(outside, "settings.json", "{}\n", 0644);
  _cleanup_free_ char *dir = path_join(root, ".claude");
  make_dirs(dir);
  _cleanup_free_ char *link = path_join(dir, "settings.json");
  ck_assert_int_eq(symlink(target, link), 0);
  Snapshot s;
  snapshot(target, &s);
  _cleanup_free_ char *msg = expect_failure(AGENT_CLAUDE, root, NULL, false, false, ELOOP);
  ck_assert_ptr_nonnull(strstr(msg, link));
  _cleanup_free_ char *msg2 = expect_failure(AGENT_CLAUDE, root, NULL, false, true, ELOOP);
  ck_assert_ptr_nonnull(strstr(msg2, link));
  assert_untouched(target, &s);
  struct stat st;
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));

  /* A directory on the way that leads out of the project: refused, and
   * nothing created out there. */
  _cleanup_free_ char *cursor = path_join(root, ".cursor");
  ck_assert_int_eq(symlink(outside, cursor), 0);
  size_t n = count_entries(outside);
  _cleanup_free_ char *msg3 = expect_failure(AGENT_CURSOR, root, NULL, false, false, EXDEV);
  ck_assert_ptr_nonnull(strstr(msg3, outside));
  ck_assert_uint_eq(count_entries(outside), n);

  /* A link that stays inside the project is fine. */
  _cleanup_free_ char *real = path_join(root, "config/codex");
  make_dirs(real);
  _cleanup_free_ char *codex = path_join(root, ".codex");
  ck_assert_int_eq(symlink("config/codex", codex), 0);
  HookChange c = install(AGENT_CODEX, root);
  expect_kind(&c, HOOK_CHANGE_WROTE);
  _cleanup_free_ char *text = slurp_at(real, "hooks.json");
  _cleanup_free_ char *want = fresh(case_of(AGENT_CODEX));
  ck_assert_str_eq(text, want);
  hook_change_clear(&c);
}
END_TEST

/* ---- uninstall ---------------------------------------------------------- */

START_TEST(test_uninstall_absent) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = uninstall(cases[i].agent, root);
    expect_kind(&c, HOOK_CHANGE_ABSENT);
    ck_assert_ptr_null(c.content);
    ck_assert_uint_eq(count_entries(root), 0);
    hook_change_clear(&c);
  }
  /* A configuration without our hook is not touched. */
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p =
      put(root, ".gemini/settings.json", "{\"hooks\":{\"BeforeTool\":[]},\"x\":1}", 0644);
  Snapshot s;
  snapshot(p, &s);
  HookChange c = uninstall(AGENT_GEMINI, root);
  expect_kind(&c, HOOK_CHANGE_ABSENT);
  ck_assert_ptr_null(c.content);
  assert_untouched(p, &s);
  hook_change_clear(&c);
}
END_TEST

/* Without a record of what install created (no home, no XDG_STATE_HOME):
 * files ralon owns are deleted; shared files keep whatever is left, even
 * if that is nothing (test_uninstall_restores_tree: with the record). */
START_TEST(test_uninstall_after_install) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const AgentCase *ac = &cases[i];
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = install(ac->agent, root);
    hook_change_clear(&c);
    c = uninstall(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_REMOVED);
    _cleanup_free_ char *text = slurp_at(root, ac->file);
    bool owned = ac->agent == AGENT_CLINE || ac->agent == AGENT_OPENCODE ||
                 ac->agent == AGENT_COPILOT;
    if (owned) {
      ck_assert_ptr_null(c.content);
      ck_assert_ptr_null(text);
    } else {
      const char *want = ac->agent == AGENT_CURSOR ? "{\n  \"version\": 1\n}\n" : "{}\n";
      ck_assert_str_eq(c.content, want);
      ck_assert_str_eq(text, want);
    }
    hook_change_clear(&c);
    c = uninstall(ac->agent, root);
    expect_kind(&c, HOOK_CHANGE_ABSENT);
    hook_change_clear(&c);
  }
}
END_TEST

/* ---- dry run ------------------------------------------------------------ */

START_TEST(test_dry_run) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    const AgentCase *ac = &cases[i];
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = run_hook(ac->agent, root, NULL, false, false, true);
    expect_kind(&c, HOOK_CHANGE_WROTE);
    _cleanup_free_ char *want = fresh(ac);
    ck_assert_str_eq(c.content, want);
    ck_assert(!exists(root, ac->file));
    ck_assert_uint_eq(count_entries(root), 0);
    hook_change_clear(&c);

    c = install(ac->agent, root);
    hook_change_clear(&c);
    _cleanup_free_ char *p = path_join(root, ac->file);
    Snapshot s;
    snapshot(p, &s);
    c = run_hook(ac->agent, root, NULL, false, true, true);
    expect_kind(&c, HOOK_CHANGE_REMOVED);
    assert_untouched(p, &s);
    hook_change_clear(&c);
  }
  /* An upgrade, shown and not made. */
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p = put(root, ".gemini/settings.json",
                               "{\"hooks\":{\"BeforeTool\":[{\"matcher\":\"" VERB
                               "\",\"hooks\":[{\"type\":\"command\",\"command\":\"ralon hook "
                               "check\"}]}]}}",
                               0644);
  Snapshot s;
  snapshot(p, &s);
  HookChange c = run_hook(AGENT_GEMINI, root, NULL, false, false, true);
  expect_kind(&c, HOOK_CHANGE_UPDATED);
  _cleanup_free_ char *want = fresh(case_of(AGENT_GEMINI));
  ck_assert_str_eq(c.content, want);
  assert_untouched(p, &s);
  hook_change_clear(&c);
}
END_TEST

/* ---- permissions -------------------------------------------------------- */

START_TEST(test_permissions_kept) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *p =
      put(root, ".claude/settings.json", "{\"env\": {\"TOKEN\": \"x\"}}", 0600);
  HookChange c = install(AGENT_CLAUDE, root);
  expect_kind(&c, HOOK_CHANGE_WROTE);
  ck_assert_uint_eq(mode_of(p), 0600);
  hook_change_clear(&c);
  c = uninstall(AGENT_CLAUDE, root);
  ck_assert_uint_eq(mode_of(p), 0600);
  hook_change_clear(&c);

  _cleanup_free_ char *q = put(root, ".codex/hooks.json", "{}", 0640);
  c = install(AGENT_CODEX, root);
  ck_assert_uint_eq(mode_of(q), 0640);
  hook_change_clear(&c);

  /* Cline's script: its bits kept, and whoever may read it may run it. */
  _cleanup_free_ char *r =
      put(root, ".clinerules/hooks/PreToolUse", "exec ralon hook check\n", 0700);
  c = install(AGENT_CLINE, root);
  expect_kind(&c, HOOK_CHANGE_UPDATED);
  ck_assert_uint_eq(mode_of(r), 0700);
  hook_change_clear(&c);
  ck_assert_int_eq(unlink(r), 0);
  _cleanup_free_ char *r2 = put(root, ".clinerules/hooks/PreToolUse", "ralon hook check\n", 0640);
  c = install(AGENT_CLINE, root);
  ck_assert_uint_eq(mode_of(r2), 0750);
  hook_change_clear(&c);

  /* A new file follows the umask. */
  mode_t old = umask(077);
  c = install(AGENT_GEMINI, root);
  ck_assert_uint_eq(mode_of(c.path), 0600);
  hook_change_clear(&c);
  umask(old);
}
END_TEST

/* ---- user scope --------------------------------------------------------- */

START_TEST(test_user_scope) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *home = make_tmpdir();
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    Agent a = cases[i].agent;
    if (a == AGENT_ANTIGRAVITY) {
      _cleanup_free_ char *msg = expect_failure(a, root, home, true, false, ENOTSUP);
      ck_assert_ptr_nonnull(strstr(msg, "Google Antigravity"));
      continue;
    }
    HookChange c = run_hook(a, root, home, true, false, false);
    expect_kind(&c, HOOK_CHANGE_WROTE);
    ck_assert_msg(startswith(c.path, home), "%s not under %s", c.path, home);
    /* The refusal names the file under ~. */
    _cleanup_free_ char *where = xasprintf("~%s", c.path + strlen(home));
    _cleanup_free_ char *want = fresh_at(cases[i].fresh, where);
    ck_assert_str_eq(c.content, want);
    _cleanup_free_ char *text = slurp(c.path);
    ck_assert_str_eq(text, want);
    bool installed = false;
    _cleanup_error_ Error err = {0};
    ck_assert_int_eq(hook_is_installed(a, root, home, true, &installed, &err), 0);
    ck_assert(installed);
    ck_assert_int_eq(hook_is_installed(a, root, home, false, &installed, &err), 0);
    ck_assert(!installed);
    hook_change_clear(&c);
  }
  ck_assert_uint_eq(count_entries(root), 0);
  _cleanup_free_ char *claude = slurp_at(home, ".claude/settings.json");
  _cleanup_free_ char *claude_want = fresh_at(claude_fresh, "~/.claude/settings.json");
  ck_assert_str_eq(claude, claude_want);
  _cleanup_free_ char *opencode = slurp_at(home, ".config/opencode/plugins/ralon.js");
  ck_assert_str_eq(opencode, opencode_fresh);

  _cleanup_free_ char *msg = expect_failure(AGENT_CLAUDE, root, NULL, true, false, EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "HOME"));

  /* Home directories are often links into a dotfiles repository. */
  _cleanup_free_ char *home2 = make_tmpdir();
  _cleanup_free_ char *dotfiles = make_tmpdir();
  _cleanup_free_ char *link = path_join(home2, ".qwen");
  ck_assert_int_eq(symlink(dotfiles, link), 0);
  HookChange c = run_hook(AGENT_QWEN, root, home2, true, false, false);
  expect_kind(&c, HOOK_CHANGE_WROTE);
  _cleanup_free_ char *text = slurp_at(dotfiles, "settings.json");
  _cleanup_free_ char *qwen_want = fresh_at(qwen_fresh, "~/.qwen/settings.json");
  ck_assert_str_eq(text, qwen_want);
  hook_change_clear(&c);
}
END_TEST

START_TEST(test_is_installed) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    Agent a = cases[i].agent;
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_error_ Error err = {0};
    bool installed = true;
    ck_assert_int_eq(hook_is_installed(a, root, NULL, false, &installed, &err), 0);
    ck_assert(!installed);
    HookChange c = install(a, root);
    hook_change_clear(&c);
    ck_assert_int_eq(hook_is_installed(a, root, NULL, false, &installed, &err), 0);
    ck_assert(installed);
    c = uninstall(a, root);
    hook_change_clear(&c);
    ck_assert_int_eq(hook_is_installed(a, root, NULL, false, &installed, &err), 0);
    ck_assert(!installed);
  }
}
END_TEST

/* ---- detection, trust notes, PATH --------------------------------------- */

static void assert_detected(const char *root, const char *home, const char *want) {
  bool got[_AGENT_MAX];
  hook_detect(root, home, got);
  _cleanup_free_ char *s = xstrdup("");
  for (int a = 0; a < _AGENT_MAX; a++) {
    if (got[a]) {
      char *next = xasprintf("%s%s%s", s, s[0] ? " " : "", agent_to_string((Agent)a));
      free(s);
      s = next;
    }
  }
  ck_assert_str_eq(s, want);
}

START_TEST(test_detect) {
  static const char all[] = "claude cursor opencode copilot codex gemini antigravity windsurf "
                            "cline qwen";
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *home = make_tmpdir();
  /* None found is none, not all ten. */
  bool got[_AGENT_MAX];
  ck_assert(!hook_detect(root, home, got));
  assert_detected(root, home, "");
  assert_detected(root, NULL, "");

  /* .github alone is every GitHub repository, not Copilot. */
  _cleanup_free_ char *gh = path_join(root, ".github/workflows");
  make_dirs(gh);
  assert_detected(root, home, "");

  _cleanup_free_ char *claude = path_join(root, ".claude");
  make_dirs(claude);
  assert_detected(root, home, "claude");
  _cleanup_free_ char *ghh = path_join(root, ".github/hooks");
  make_dirs(ghh);
  _cleanup_free_ char *qwen = path_join(root, ".qwen");
  make_dirs(qwen);
  _cleanup_free_ char *cline = path_join(root, ".clinerules");
  make_dirs(cline);
  assert_detected(root, home, "claude copilot cline qwen");

  _cleanup_free_ char *codex = path_join(home, ".codex");
  make_dirs(codex);
  _cleanup_free_ char *oc = path_join(home, ".config/opencode");
  make_dirs(oc);
  _cleanup_free_ char *ws = path_join(home, ".codeium/windsurf");
  make_dirs(ws);
  assert_detected(root, home, "claude opencode copilot codex windsurf cline qwen");

  /* A file of that name is not a configuration directory. */
  _cleanup_free_ char *root2 = make_tmpdir();
  free(put(root2, ".cursor", "", 0644));
  _cleanup_free_ char *agents = path_join(root2, ".agents");
  make_dirs(agents);
  _cleanup_free_ char *gc = path_join(root2, ".github/copilot");
  make_dirs(gc);
  assert_detected(root2, NULL, "copilot antigravity");

  /* The directories the agents are told to use instead of home count,
   * and only with a home to look in (as root, init passes none). */
  _cleanup_free_ char *root3 = make_tmpdir();
  _cleanup_free_ char *home3 = make_tmpdir();
  _cleanup_free_ char *elsewhere = make_tmpdir();
  _cleanup_free_ char *ch = path_join(elsewhere, "codex-home");
  make_dirs(ch);
  _cleanup_free_ char *xdg = path_join(elsewhere, "xdg");
  _cleanup_free_ char *xoc = path_join(xdg, "opencode");
  make_dirs(xoc);
  setenv("CODEX_HOME", ch, 1);
  setenv("XDG_CONFIG_HOME", xdg, 1);
  assert_detected(root3, home3, "opencode codex");
  assert_detected(root3, NULL, "");
  setenv("CODEX_HOME", "relative/dir", 1); /* ignored, as the XDG rule says */
  assert_detected(root3, home3, "opencode");
  unsetenv("CODEX_HOME");
  unsetenv("XDG_CONFIG_HOME");
  assert_detected(root3, home3, "");
  (void)all;
}
END_TEST

/* ---- will it run here? -------------------------------------------------- */

static void expect_runs(Agent a, const char *root, const char *home, bool user, HookRuns want,
                        const char *note_has) {
  char *note = NULL;
  HookRuns got = hook_runs_here(a, root, home, user, &note);
  ck_assert_msg(got == want, "%s %s: %s, want %s (%s)", agent_to_string(a),
                user ? "user" : "project", hook_runs_to_string(got), hook_runs_to_string(want),
                note ? note : "no note");
  if (note_has == NULL) {
    ck_assert_msg(note == NULL, "%s: %s", agent_to_string(a), note);
  } else {
    ck_assert_msg(note != NULL && strstr(note, note_has) != NULL, "%s: %s, want %s",
                  agent_to_string(a), note ? note : "no note", note_has);
  }
  free(note);
}

/* From each agent's own trust records, read as the agent reads them. */
START_TEST(test_runs_here) {
  _cleanup_free_ char *home = make_tmpdir();
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *sub = path_join(root, "sub");
  make_dirs(sub);
  unsetenv("OPENCODE_PURE");
  unsetenv("OPENCODE_DISABLE_PROJECT_CONFIG");
  ck_assert_str_eq(hook_runs_to_string(HOOK_RUNS_YES), "yes");
  ck_assert_str_eq(hook_runs_to_string(HOOK_RUNS_NO), "no");
  ck_assert_str_eq(hook_runs_to_string(HOOK_RUNS_UNKNOWN), "unknown");
  ck_assert_ptr_null(hook_runs_to_string(_HOOK_RUNS_MAX));

  /* A user-level hook runs everywhere; so do the agents without trust. */
  for (int a = 0; a < _AGENT_MAX; a++) {
    expect_runs((Agent)a, root, home, true, HOOK_RUNS_YES, NULL);
  }
  expect_runs(AGENT_OPENCODE, root, home, false, HOOK_RUNS_YES, NULL);
  expect_runs(AGENT_WINDSURF, root, home, false, HOOK_RUNS_YES, NULL);
  expect_runs(AGENT_CLINE, root, home, false, HOOK_RUNS_YES, NULL);
  expect_runs(AGENT_CURSOR, root, home, false, HOOK_RUNS_UNKNOWN, "trusted workspace");
  /* Claude Code: where it must be started. */
  _cleanup_free_ char *started = xasprintf("only when started in %s itself", root);
  expect_runs(AGENT_CLAUDE, root, home, false, HOOK_RUNS_YES, started);

  /* opencode: the variables with which it loads no plugin (OPENCODE_PURE,
   * set by --pure too) or none of the project's, read as opencode reads
   * them ("1" or "true"). */
  setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "TRUE", 1);
  expect_runs(AGENT_OPENCODE, root, home, false, HOOK_RUNS_NO, "OPENCODE_DISABLE_PROJECT_CONFIG");
  expect_runs(AGENT_OPENCODE, root, home, true, HOOK_RUNS_YES, NULL);
  setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "0", 1);
  expect_runs(AGENT_OPENCODE, root, home, false, HOOK_RUNS_YES, NULL);
  unsetenv("OPENCODE_DISABLE_PROJECT_CONFIG");
  setenv("OPENCODE_PURE", "1", 1);
  expect_runs(AGENT_OPENCODE, root, home, false, HOOK_RUNS_NO, "--pure");
  expect_runs(AGENT_OPENCODE, root, home, true, HOOK_RUNS_NO, "OPENCODE_PURE");
  expect_runs(AGENT_CLAUDE, root, home, true, HOOK_RUNS_YES, NULL);
  unsetenv("OPENCODE_PURE");
  expect_runs(AGENT_OPENCODE, root, home, true, HOOK_RUNS_YES, NULL);

  /* Gemini CLI and Qwen Code: nothing decided yet, then each rule. */
  static const struct {
    Agent agent;
    const char *dir;
  } folder[] = {{AGENT_GEMINI, ".gemini"}, {AGENT_QWEN, ".qwen"}};
  for (size_t i = 0; i < ELEMENTSOF(folder); i++) {
    Agent a = folder[i].agent;
    _cleanup_free_ char *trust = xasprintf("%s/trustedFolders.json", folder[i].dir);
    _cleanup_free_ char *settings = xasprintf("%s/settings.json", folder[i].dir);
    expect_runs(a, root, home, false, HOOK_RUNS_UNKNOWN, "--skip-trust");
    _cleanup_free_ char *t1 = xasprintf("{\"%s\": \"DO_NOT_TRUST\"}", root);
    free(put(home, trust, t1, 0600));
    expect_runs(a, root, home, false, HOOK_RUNS_NO, "does not trust");
    /* Distrust is of that folder exactly. */
    expect_runs(a, sub, home, false, HOOK_RUNS_UNKNOWN, "--skip-trust");
    _cleanup_free_ char *t2 =
        xasprintf("// the agent's own comments\n{\"%s\": \"TRUST_FOLDER\"}", root);
    free(put(home, trust, t2, 0600));
    expect_runs(a, root, home, false, HOOK_RUNS_YES, NULL);
    expect_runs(a, sub, home, false, HOOK_RUNS_YES, NULL);
    _cleanup_free_ char *t3 = xasprintf("{\"%s\": \"TRUST_PARENT\"}", sub);
    free(put(home, trust, t3, 0600));
    expect_runs(a, root, home, false, HOOK_RUNS_YES, NULL);
    _cleanup_free_ char *t4 = xasprintf("{\"%s\": \"TRUST_FOLDER\"}", sub);
    free(put(home, trust, t4, 0600));
    expect_runs(a, root, home, false, HOOK_RUNS_UNKNOWN, "--skip-trust");
    /* Folder trust turned off: every folder counts. */
    free(put(home, settings, "{\"security\": {\"folderTrust\": {\"enabled\": false}}}", 0600));
    expect_runs(a, root, home, false, HOOK_RUNS_YES, NULL);
  }

  /* Codex: trust_level in config.toml, nearest listed folder; CODEX_HOME. */
  expect_runs(AGENT_CODEX, root, home, false, HOOK_RUNS_NO, "does not trust");
  _cleanup_free_ char *c1 = xasprintf("model = \"x\"\n\n[projects.\"%s\"]\ntrust_level = "
                                      "\"trusted\"\n\n[projects.\"%s\"]\n  trust_level = "
                                      "\"untrusted\"\n",
                                      root, sub);
  free(put(home, ".codex/config.toml", c1, 0600));
  expect_runs(AGENT_CODEX, root, home, false, HOOK_RUNS_UNKNOWN, "/hooks");
  expect_runs(AGENT_CODEX, sub, home, false, HOOK_RUNS_NO, "does not trust");
  _cleanup_free_ char *elsewhere = make_tmpdir();
  setenv("CODEX_HOME", elsewhere, 1);
  expect_runs(AGENT_CODEX, root, home, false, HOOK_RUNS_NO, elsewhere);
  unsetenv("CODEX_HOME");

  /* Copilot: its trusted folders, a parent of the project too. */
  expect_runs(AGENT_COPILOT, root, home, false, HOOK_RUNS_UNKNOWN, "-p mode");
  _cleanup_free_ char *parent = path_dirname(root);
  _cleanup_free_ char *p1 = xasprintf("{\"trusted_folders\": [\"/nowhere\", \"%s\"]}", parent);
  free(put(home, ".copilot/config.json", p1, 0600));
  expect_runs(AGENT_COPILOT, root, home, false, HOOK_RUNS_YES, NULL);

  /* GEMINI_CLI_HOME is Gemini's home: its .gemini holds the trust. */
  _cleanup_free_ char *gh = make_tmpdir();
  _cleanup_free_ char *t5 = xasprintf("{\"%s\": \"DO_NOT_TRUST\"}", root);
  free(put(gh, ".gemini/trustedFolders.json", t5, 0600));
  setenv("GEMINI_CLI_HOME", gh, 1);
  expect_runs(AGENT_GEMINI, root, home, false, HOOK_RUNS_NO, gh);
  unsetenv("GEMINI_CLI_HOME");
  expect_runs(AGENT_GEMINI, root, home, false, HOOK_RUNS_YES, NULL);
}
END_TEST

/* ---- uninstall restores the tree ---------------------------------------- */

/* Every entry below `dir`, sorted, one line each: its name, type and
 * mode, and a file's bytes. Two equal texts are two equal trees. */
static void tree_walk(const char *dir, const char *rel, char ***lines, size_t *n) {
  _cleanup_free_ char *here = rel[0] ? path_join(dir, rel) : xstrdup(dir);
  DIR *d = opendir(here);
  ck_assert_msg(d != NULL, "opendir %s: %s", here, strerror(errno));
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
      continue;
    }
    _cleanup_free_ char *r = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
    _cleanup_free_ char *full = path_join(dir, r);
    struct stat st;
    ck_assert_int_eq(lstat(full, &st), 0);
    _cleanup_free_ char *text = S_ISREG(st.st_mode) ? slurp(full) : xstrdup("");
    *lines = xreallocarray(*lines, *n + 1, sizeof(char *));
    (*lines)[(*n)++] = xasprintf("%s %o [%s]", r, (unsigned)st.st_mode, text);
    if (S_ISDIR(st.st_mode)) {
      tree_walk(dir, r, lines, n);
    }
  }
  closedir(d);
}

static char *tree(const char *dir) {
  char **lines = NULL;
  size_t n = 0;
  tree_walk(dir, "", &lines, &n);
  if (n > 0) {
    qsort(lines, n, sizeof(char *), strings_compare);
  }
  char *s = xstrdup("");
  for (size_t i = 0; i < n; i++) {
    char *next = xasprintf("%s%s\n", s, lines[i]);
    free(s);
    s = next;
  }
  strings_free(lines, n);
  return s;
}

/* The directory holding `agent`'s file at that scope, relative to the
 * project or home: what the user may have made before ralon came. */
static char *config_dir(Agent a, const char *root, const char *home, bool user) {
  _cleanup_free_ char *p = hook_config_path(a, root, home, user);
  ck_assert_ptr_nonnull(p);
  return path_dirname(p);
}

static void round_trip(Agent a, const char *root, const char *home, bool user, const char *how) {
  _cleanup_free_ char *before_root = tree(root), *before_home = tree(home);
  HookChange c = run_hook(a, root, home, user, false, false);
  ck_assert_msg(c.kind == HOOK_CHANGE_WROTE || c.kind == HOOK_CHANGE_UPDATED, "%s %s: %s",
                agent_to_string(a), how, hook_change_kind_to_string(c.kind));
  hook_change_clear(&c);
  c = run_hook(a, root, home, user, true, false);
  expect_kind(&c, HOOK_CHANGE_REMOVED);
  hook_change_clear(&c);
  _cleanup_free_ char *after_root = tree(root), *after_home = tree(home);
  ck_assert_msg(streq(before_root, after_root), "%s %s %s: project\nbefore:\n%s\nafter:\n%s",
                agent_to_string(a), user ? "user" : "project", how, before_root, after_root);
  ck_assert_msg(streq(before_home, after_home), "%s %s %s: home\nbefore:\n%s\nafter:\n%s",
                agent_to_string(a), user ? "user" : "project", how, before_home, after_home);
}

/* Install then uninstall leaves project and home byte for byte as they
 * were, files and directories: from nothing, from the agent's own
 * directory already there (empty, or holding a file of the user's), and
 * from a configuration of the user's, in ralon's layout or in their own;
 * for every agent, at both levels. */
START_TEST(test_uninstall_restores_tree) {
  for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
    Agent a = cases[i].agent;
    for (int user = 0; user <= 1; user++) {
      if (user && a == AGENT_ANTIGRAVITY) {
        continue;
      }
      for (int start = 0; start < 5; start++) {
        _cleanup_free_ char *root = make_tmpdir();
        _cleanup_free_ char *home = make_tmpdir();
        _cleanup_free_ char *dir = config_dir(a, root, home, user);
        _cleanup_free_ char *file = hook_config_path(a, root, home, user);
        const char *how = "from nothing";
        if (start == 1) {
          how = "into an empty directory of the user's";
          make_dirs(dir);
        } else if (start == 2) {
          how = "beside a file of the user's";
          free(put(dir, "notes.txt", "mine\n", 0640));
        } else if (start == 3) {
          if (cases[i].event == NULL && a != AGENT_ANTIGRAVITY) {
            continue; /* a file ralon owns whole */
          }
          how = "into a configuration of the user's";
          /* Cursor's file is versioned (ralon adds the version to one
           * that lacks it, and keeps it). */
          free(put(dir, path_basename(file),
                   a == AGENT_CURSOR ? "{\n  \"version\": 1\n}\n"
                                     : "{\n  \"model\": \"x\"\n}\n",
                   0600));
        }
        if (start == 4) {
          if (cases[i].event == NULL && a != AGENT_ANTIGRAVITY) {
            continue;
          }
          how = "into a configuration of the user's in a layout of their own";
          free(put(dir, path_basename(file),
                   a == AGENT_CURSOR ? "{\"version\":1 }" : "{\"model\":\"x\",\n\t\"n\": 1.50}",
                   0600));
        }
        round_trip(a, root, home, user, how);
      }
    }
  }
}
END_TEST

/* A `{}` the user wrote is the user's; a directory of the same name made
 * again after ralon's was deleted is the user's; a directory ralon made
 * that now holds something of the user's stays. */
START_TEST(test_uninstall_keeps_what_is_not_ralons) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *home = make_tmpdir();
  free(put(root, ".gemini/settings.json", "{}\n", 0644));
  round_trip(AGENT_GEMINI, root, home, false, "into a {} of the user's");
  _cleanup_free_ char *stub = slurp_at(root, ".gemini/settings.json");
  ck_assert_str_eq(stub, "{}\n");

  HookChange c = run_hook(AGENT_CLAUDE, root, home, false, false, false);
  hook_change_clear(&c);
  free(put(root, ".claude/agents/mine.md", "x\n", 0644));
  c = run_hook(AGENT_CLAUDE, root, home, false, true, false);
  expect_kind(&c, HOOK_CHANGE_REMOVED);
  ck_assert_ptr_null(c.content); /* the file ralon made, back to nothing: gone */
  hook_change_clear(&c);
  ck_assert(!exists(root, ".claude/settings.json"));
  ck_assert(exists(root, ".claude/agents/mine.md"));

  c = run_hook(AGENT_QWEN, root, home, false, false, false);
  hook_change_clear(&c);
  _cleanup_free_ char *qdir = path_join(root, ".qwen");
  _cleanup_free_ char *qfile = path_join(root, ".qwen/settings.json");
  ck_assert_int_eq(unlink(qfile), 0);
  ck_assert_int_eq(rmdir(qdir), 0);
  make_dirs(qdir);
  c = run_hook(AGENT_QWEN, root, home, false, true, false);
  expect_kind(&c, HOOK_CHANGE_ABSENT);
  hook_change_clear(&c);
  ck_assert(exists(root, ".qwen"));

  /* ext4 may give the directory made again the inode number just freed,
   * and then only its birth time tells it from ralon's: a record whose
   * device and inode match but whose birth time does not is the user's
   * directory, which stays. */
  struct statx sx;
  if (statx(AT_FDCWD, root, 0, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME)) {
    _cleanup_free_ char *root2 = make_tmpdir();
    c = run_hook(AGENT_QWEN, root2, home, false, false, false);
    hook_change_clear(&c);
    _cleanup_free_ char *state = path_join(home, ".local/state/ralon");
    _cleanup_free_ char *record = slurp_at(state, "created.json");
    _cleanup_free_ char *q2 = path_join(root2, ".qwen");
    _cleanup_free_ char *born = xasprintf("\"path\": \"%s\"", q2);
    char *at = strstr(record, born);
    ck_assert_msg(at != NULL, "%s in %s", born, record);
    char *bt = strstr(at, "\"btime\": \"");
    ck_assert_msg(bt != NULL, "no birth time recorded for %s: %s", q2, record);
    bt += strlen("\"btime\": \"");
    ck_assert(bt[0] != '1' || bt[1] != '.');
    /* Another birth time, of the same length: the file keeps its size. */
    bt[0] = '1';
    bt[1] = '.';
    free(put(state, "created.json", record, 0600));
    c = run_hook(AGENT_QWEN, root2, home, false, true, false);
    expect_kind(&c, HOOK_CHANGE_REMOVED);
    hook_change_clear(&c);
    ck_assert(!exists(root2, ".qwen/settings.json"));
    ck_assert(exists(root2, ".qwen"));
  }

  /* The user's own settings stay, less the hook, in a file ralon made. */
  c = run_hook(AGENT_CODEX, root, home, false, false, false);
  hook_change_clear(&c);
  _cleanup_free_ char *cx = slurp_at(root, ".codex/hooks.json");
  _cleanup_free_ char *edited = xasprintf("{\n  \"mine\": true,%s", cx + 1);
  free(put(root, ".codex/hooks.json", edited, 0644));
  c = run_hook(AGENT_CODEX, root, home, false, true, false);
  expect_kind(&c, HOOK_CHANGE_REMOVED);
  hook_change_clear(&c);
  _cleanup_free_ char *left = slurp_at(root, ".codex/hooks.json");
  ck_assert_str_eq(left, "{\n  \"mine\": true\n}\n");
}
END_TEST

START_TEST(test_trust_notes) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    const char *note = hook_trust_note((Agent)a);
    bool want = a == AGENT_CODEX || a == AGENT_GEMINI || a == AGENT_QWEN || a == AGENT_CURSOR;
    ck_assert_msg((note != NULL) == want, "%s", agent_to_string((Agent)a));
    if (note != NULL) {
      ck_assert(note[0] != '\0');
    }
  }
  ck_assert_ptr_nonnull(strstr(hook_trust_note(AGENT_CODEX), "/hooks"));
  ck_assert_ptr_null(hook_trust_note(_AGENT_MAX));
}
END_TEST

START_TEST(test_ralon_on_path) {
  _cleanup_free_ char *a = make_tmpdir();
  _cleanup_free_ char *b = make_tmpdir();
  _cleanup_free_ char *c = make_tmpdir();
  _cleanup_free_ char *d = make_tmpdir();
  /* Not executable, a directory, then the real thing. */
  free(put(a, "ralon", "#!/bin/sh\n", 0644));
  _cleanup_free_ char *dir = path_join(b, "ralon");
  make_dirs(dir);
  _cleanup_free_ char *exe = put(c, "ralon", "#!/bin/sh\n", 0755);
  _cleanup_free_ char *env = xasprintf("%s:%s::%s:%s", a, b, c, d);
  char *found = NULL;
  ck_assert(hook_ralon_on_path(env, &found));
  ck_assert_str_eq(found, exe);
  free(found);
  ck_assert(hook_ralon_on_path(env, NULL));

  _cleanup_free_ char *none = xasprintf("%s:%s:%s", a, b, d);
  found = NULL;
  ck_assert(!hook_ralon_on_path(none, &found));
  ck_assert_ptr_null(found);

  /* An empty entry is the working directory. */
  _cleanup_free_ char *cwd = getcwd(NULL, 0);
  ck_assert_int_eq(chdir(c), 0);
  ck_assert(hook_ralon_on_path(d, NULL) == false);
  _cleanup_free_ char *with_empty = xasprintf("%s:", d);
  ck_assert(hook_ralon_on_path(with_empty, &found));
  ck_assert_str_eq(found, exe);
  free(found);
  ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

/* ---- what the installed hooks do ---------------------------------------- */

/* A stand-in for ralon: records its stdin, then behaves as $RALON_FAKE
 * says. */
static const char fake_ralon[] = "#!/bin/sh\n"
                                 "PATH=/usr/bin:/bin\n"
                                 "cat > \"$RALON_FAKE_STDIN\"\n"
                                 "case \"$RALON_FAKE\" in\n"
                                 "allow) exit 0 ;;\n"
                                 "deny)\n"
                                 "  echo '{\"cancel\":true,\"errorMessage\":\"protected\"}'\n"
                                 "  echo 'ralon: x is protected' >&2\n"
                                 "  exit 2 ;;\n"
                                 "silent) exit 2 ;;\n"
                                 "fail) echo 'ralon: broken' >&2; exit 1 ;;\n"
                                 "crash) kill -SEGV $$ ;;\n"
                                 "esac\n"
                                 "exit 0\n";

/* Runs `cmd` through /bin/sh; stdout and stderr come back separately. */
static int shell(const char *cmd, char **ret_out, char **ret_err) {
  _cleanup_free_ char *errfile = xasprintf("%s/stderr", scratch);
  _cleanup_free_ char *full = xasprintf("(%s) 2>%s", cmd, errfile);
  FILE *f = popen(full, "r");
  ck_assert_ptr_nonnull(f);
  char *out = NULL;
  size_t len = 0;
  ck_assert_int_eq(read_fd_limited(fileno(f), 1 << 20, &out, &len), 0);
  int status = pclose(f);
  *ret_out = out;
  *ret_err = slurp(errfile);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef struct {
  char *root;
  char *bin;   /* holds the fake ralon */
  char *empty; /* holds nothing */
  char *stdin_file;
} Fake;

static void fake_setup(Fake *f) {
  f->root = make_tmpdir();
  f->bin = make_tmpdir();
  f->empty = make_tmpdir();
  free(put(f->bin, "ralon", fake_ralon, 0755));
  f->stdin_file = path_join(f->root, "stdin.json");
}

static void fake_clear(Fake *f) {
  free(f->root);
  free(f->bin);
  free(f->empty);
  free(f->stdin_file);
}

/* The command string at `keys` (a path of member names and array
 * indices, "0".."9") in the JSON file `path`. */
static char *installed_command(const char *path, const char *const *keys) {
  _cleanup_free_ char *text = slurp(path);
  ck_assert_ptr_nonnull(text);
  json_object *doc = json_tokener_parse(text);
  ck_assert_ptr_nonnull(doc);
  json_object *o = doc;
  for (size_t i = 0; keys[i] != NULL; i++) {
    if (keys[i][0] >= '0' && keys[i][0] <= '9' && keys[i][1] == '\0') {
      o = json_object_array_get_idx(o, (size_t)(keys[i][0] - '0'));
    } else {
      ck_assert_msg(json_object_object_get_ex(o, keys[i], &o), "%s: no %s", path, keys[i]);
    }
    ck_assert_ptr_nonnull(o);
  }
  char *command = xstrdup(json_object_get_string(o));
  json_object_put(doc);
  return command;
}

/* Runs `command` through /bin/sh with the fake ralon (or none) on PATH. */
static int run_installed(const Fake *f, const char *command, const char *mode, char **out,
                         char **err) {
  _cleanup_free_ char *script = path_join(f->root, "command.sh");
  free(put(f->root, "command.sh", command, 0644));
  _cleanup_free_ char *cmd =
      xasprintf("printf '{}' | env PATH=%s RALON_FAKE=%s RALON_FAKE_STDIN=%s /bin/sh %s",
                mode ? f->bin : f->empty, mode ? mode : "", f->stdin_file, script);
  return shell(cmd, out, err);
}

/* Every installed command blocks (exit 2) whenever ralon does not allow,
 * and then always says why: ralon's own reason, or one of its own for a
 * ralon that is missing, cannot be executed, fails or is killed, naming
 * how to take the hook away. Gemini CLI and Qwen Code let the tool run on
 * a silent failure. */
START_TEST(test_blocking_command) {
  Fake f;
  fake_setup(&f);
  static const char *const grouped[] = {"hooks", "PreToolUse", "0", "hooks", "0", "command",
                                        NULL};
  static const char *const gemini[] = {"hooks", "BeforeTool", "0", "hooks", "0", "command", NULL};
  static const char *const flat[] = {"hooks", "preToolUse", "0", "command", NULL};
  static const char *const windsurf[] = {"hooks", "pre_write_code", "0", "command", NULL};
  static const char *const antigravity[] = {"ralon", "PreToolUse", "0", "hooks", "0", "command",
                                            NULL};
  static const char *const copilot[] = {"hooks", "preToolUse", "0", "bash", NULL};
  static const struct {
    Agent agent;
    const char *const *keys;
  } agents[] = {
      {AGENT_CLAUDE, grouped},  {AGENT_CODEX, grouped},       {AGENT_QWEN, grouped},
      {AGENT_GEMINI, gemini},   {AGENT_CURSOR, flat},         {AGENT_WINDSURF, windsurf},
      {AGENT_COPILOT, copilot}, {AGENT_ANTIGRAVITY, antigravity},
  };
  static const struct {
    const char *mode; /* NULL: no ralon on PATH; "noexec": one that cannot run */
    int status;
    const char *why; /* in the refusal; NULL: ralon's own answer passes */
  } rows[] = {
      {"allow", 0, NULL},
      {"deny", 2, NULL},
      {"fail", 2, "(ralon hook check failed with exit status 1)"},
      {"crash", 2, "(ralon was killed by signal 11)"},
      {NULL, 2, "(ralon is not installed or not on PATH)"},
      /* bash says 126, dash 127 (with its own "Permission denied"). */
      {"noexec", 2, "(ralon "},
  };
  _cleanup_free_ char *noexec_bin = make_tmpdir();
  free(put(noexec_bin, "ralon", "#!/bin/sh\nexit 0\n", 0644));
  for (size_t a = 0; a < ELEMENTSOF(agents); a++) {
    const AgentCase *ac = case_of(agents[a].agent);
    _cleanup_free_ char *root = make_tmpdir();
    HookChange c = install(ac->agent, root);
    _cleanup_free_ char *command = installed_command(c.path, agents[a].keys);
    for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
      Fake g = f;
      bool noexec = rows[i].mode != NULL && streq(rows[i].mode, "noexec");
      if (noexec) {
        g.bin = noexec_bin;
      }
      _cleanup_free_ char *out = NULL, *err = NULL;
      int status = run_installed(&g, command, rows[i].mode, &out, &err);
      const char *name = agent_to_string(ac->agent);
      const char *mode = rows[i].mode ? rows[i].mode : "missing";
      ck_assert_msg(status == rows[i].status, "%s %s: exit %d (%s)", name, mode, status, err);
      if (rows[i].status == 0) {
        ck_assert_msg(err[0] == '\0', "%s %s: %s", name, mode, err);
        continue;
      }
      if (rows[i].why == NULL) {
        ck_assert_str_eq(err, "ralon: x is protected\n");
        continue;
      }
      _cleanup_free_ char *undo =
          ac->agent == AGENT_COPILOT ? xasprintf("or delete %s.", ac->file)
                                     : xasprintf("or delete ralon's entry in %s.", ac->file);
      ck_assert_msg(strstr(err, rows[i].why) != NULL, "%s %s: %s", name, mode, err);
      if (noexec) {
        ck_assert_msg(strstr(err, "(ralon cannot be executed)") != NULL ||
                          strstr(err, "(ralon is not installed or not on PATH)") != NULL,
                      "%s: %s", name, err);
      }
      ck_assert_msg(strstr(err, "ralon: agent.lock could not be checked") != NULL, "%s: %s",
                    name, err);
      ck_assert_msg(strstr(err, "run 'ralon hook uninstall' where ralon is installed") != NULL,
                    "%s: %s", name, err);
      ck_assert_msg(strstr(err, undo) != NULL, "%s %s: %s", name, mode, err);
      if (ac->agent == AGENT_COPILOT) {
        /* Copilot passes on only a JSON reason. */
        json_object *o = json_tokener_parse(out);
        ck_assert_msg(o != NULL, "copilot %s: %s", mode, out);
        json_object *d, *r;
        ck_assert(json_object_object_get_ex(o, "permissionDecision", &d));
        ck_assert_str_eq(json_object_get_string(d), "deny");
        ck_assert(json_object_object_get_ex(o, "permissionDecisionReason", &r));
        ck_assert_ptr_nonnull(strstr(json_object_get_string(r), rows[i].why));
        json_object_put(o);
      } else {
        ck_assert_str_eq(out, "");
      }
    }
    hook_change_clear(&c);
  }
  fake_clear(&f);
}
END_TEST

START_TEST(test_cline_script) {
  Fake f;
  fake_setup(&f);
  HookChange c = install(AGENT_CLINE, f.root);
  static const struct {
    const char *mode;
    const char *out; /* stdout, exactly; NULL: a refusal of the script's own */
  } rows[] = {
      {"allow", ""},
      {"deny", "{\"cancel\":true,\"errorMessage\":\"protected\"}\n"},
      {"silent", NULL},
      {"fail", NULL},
      {"crash", NULL},
      {NULL, NULL},
  };
  for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
    _cleanup_free_ char *cmd = xasprintf(
        "printf '{\"hookName\":\"tool_call\"}' | env PATH=%s RALON_FAKE=%s RALON_FAKE_STDIN=%s "
        "/bin/sh %s",
        rows[i].mode ? f.bin : f.empty, rows[i].mode ? rows[i].mode : "", f.stdin_file, c.path);
    _cleanup_free_ char *out = NULL, *err = NULL;
    int status = shell(cmd, &out, &err);
    ck_assert_int_eq(status, 0);
    if (rows[i].out != NULL) {
      ck_assert_str_eq(out, rows[i].out);
    } else {
      ck_assert_msg(startswith(out, "{\"cancel\":true,\"errorMessage\":\"ralon hook check "),
                    "%s: %s", rows[i].mode, out);
      ck_assert_msg(strstr(out, "refused. If ralon was removed on purpose, remove its hook: run "
                               "`ralon hook uninstall` where ralon is installed, or delete the "
                               "PreToolUse script ralon wrote in the hooks directory of "
                               "Cline.\"}\n") != NULL,
                    "%s: %s", rows[i].mode, out);
    }
    if (rows[i].mode != NULL) {
      _cleanup_free_ char *in = slurp(f.stdin_file);
      ck_assert_str_eq(in, "{\"hookName\":\"tool_call\"}");
    }
  }
  hook_change_clear(&c);
  fake_clear(&f);
}
END_TEST

static char *which(const char *name) {
  const char *p = getenv("PATH");
  for (const char *s = p ? p : "/usr/bin:/bin";;) {
    const char *e = strchrnul(s, ':');
    _cleanup_free_ char *dir = xstrndup(s, (size_t)(e - s));
    char *candidate = path_join(dir[0] ? dir : ".", name);
    if (access(candidate, X_OK) == 0) {
      return candidate;
    }
    free(candidate);
    if (*e == '\0') {
      return NULL;
    }
    s = e + 1;
  }
}

START_TEST(test_opencode_plugin) {
  _cleanup_free_ char *node = which("node");
  if (node == NULL) {
    return; /* nothing to run the plugin with here */
  }
  Fake f;
  fake_setup(&f);
  HookChange c = install(AGENT_OPENCODE, f.root);
  /* node reads a .js file as CommonJS without a package.json saying
   * otherwise; opencode's Bun does not care. */
  free(put(f.root, "plugin.mjs", c.content, 0644));
  free(put(
      f.root, "harness.mjs",
      "import { RalonPlugin } from \"./plugin.mjs\";\n"
      "const hooks = await RalonPlugin({ directory: process.cwd() });\n"
      "try {\n"
      "  await hooks[\"tool.execute.before\"](\n"
      "    { tool: \"write\", sessionID: \"s\", callID: \"c\" },\n"
      "    { args: { filePath: \"src/x.c\", content: \"y\" } });\n"
      "  console.log(\"allowed\");\n"
      "} catch (e) {\n"
      "  console.log(\"refused: \" + e.message);\n"
      "}\n",
      0644));
  static const struct {
    const char *mode;
    const char *out; /* prefix of stdout */
  } rows[] = {
      {"allow", "allowed\n"},
      {"deny", "refused: ralon: x is protected\n"},
      {"silent", "refused: ralon hook check failed (exit status 2)"},
      {"fail", "refused: ralon: broken\n"},
      {"crash", "refused: ralon hook check failed (signal SIGSEGV)"},
      {NULL, "refused: ralon could not be run ("},
  };
  for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
    _cleanup_free_ char *cmd =
        xasprintf("cd %s && env PATH=%s RALON_FAKE=%s RALON_FAKE_STDIN=%s %s harness.mjs", f.root,
                  rows[i].mode ? f.bin : f.empty, rows[i].mode ? rows[i].mode : "", f.stdin_file,
                  node);
    _cleanup_free_ char *out = NULL, *err = NULL;
    int status = shell(cmd, &out, &err);
    ck_assert_msg(status == 0, "node: %d %s", status, err);
    ck_assert_msg(startswith(out, rows[i].out), "%s: %s", rows[i].mode ? rows[i].mode : "missing",
                  out);
  }
  _cleanup_free_ char *in = slurp(f.stdin_file);
  _cleanup_free_ char *want = xasprintf(
      "{\"tool_name\":\"write\",\"tool_input\":{\"filePath\":\"src/x.c\",\"content\":\"y\"},"
      "\"cwd\":\"%s\",\"hook_event_name\":\"tool.execute.before\"}",
      f.root);
  ck_assert_str_eq(in, want);
  hook_change_clear(&c);
  fake_clear(&f);
}
END_TEST

static Suite *hook_install_suite(void) {
  Suite *s = suite_create("hook-install");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_kind_names);
  tcase_add_test(tc, test_config_paths);
  tcase_add_test(tc, test_trust_notes);
  suite_add_tcase(s, tc);

  tc = tcase_create("install");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_fresh_exact);
  tcase_add_test(tc, test_install_twice);
  tcase_add_test(tc, test_unchanged_keeps_layout);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_foreign_claude_exact);
  tcase_add_test(tc, test_foreign_every_agent);
  tcase_add_test(tc, test_rust_entries_upgraded);
  tcase_add_test(tc, test_upgrade_in_place);
  tcase_add_test(tc, test_malformed_refused);
  tcase_add_test(tc, test_nul_byte_refused);
  tcase_add_test(tc, test_foreign_owned_file_refused);
  tcase_add_test(tc, test_not_a_regular_file);
  tcase_add_test(tc, test_symlinks);
  tcase_add_test(tc, test_uninstall_absent);
  tcase_add_test(tc, test_uninstall_after_install);
  tcase_add_test(tc, test_dry_run);
  tcase_add_test(tc, test_permissions_kept);
  tcase_add_test(tc, test_user_scope);
  tcase_add_test(tc, test_is_installed);
  tcase_add_test(tc, test_detect);
  tcase_add_test(tc, test_runs_here);
  tcase_add_test(tc, test_uninstall_restores_tree);
  tcase_add_test(tc, test_uninstall_keeps_what_is_not_ralons);
  tcase_add_test(tc, test_ralon_on_path);
  suite_add_tcase(s, tc);

  tc = tcase_create("hooks-run");
  tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_blocking_command);
  tcase_add_test(tc, test_cline_script);
  tcase_add_test(tc, test_opencode_plugin);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  umask(022);
  /* Nothing of the caller's: no record in their state directory, no
   * user-level directory of theirs chosen. */
  static const char *const vars[] = {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "CODEX_HOME",
                                     "CLAUDE_CONFIG_DIR", "COPILOT_HOME", "GEMINI_CLI_HOME"};
  for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
    unsetenv(vars[i]);
  }
  SRunner *sr = srunner_create(hook_install_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
