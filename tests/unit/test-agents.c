/* SPDX-License-Identifier: Apache-2.0 */
/* The agent list (hook/agents.h) and every agent's descriptor
 * (hook/agent-desc.h): each descriptor is complete and consistent, so that
 * an agent added by half fails here; and every agent, whatever it is,
 * installs, is found installed and detected, and uninstalls, through
 * nothing but its descriptor. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/agent-desc.h"
#include "path.h"
#include "tmptree.h"
#include "util.h"

/* Whether `path` is `dir` or lies below it, both relative. */
static bool below(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool relative_name(const char *p) {
  return p != NULL && p[0] != '\0' && p[0] != '/' && strstr(p, "..") == NULL;
}

/* Whether one of d's detect directories, looked for `where`, holds `path`. */
static bool detected_by(const AgentDesc *d, const char *path, unsigned where) {
  for (size_t i = 0; i < ELEMENTSOF(d->detect) && d->detect[i].dir != NULL; i++) {
    if ((d->detect[i].where & where) && below(path, d->detect[i].dir)) {
      return true;
    }
  }
  return false;
}

START_TEST(test_list) {
  ck_assert_int_gt(_AGENT_MAX, 0);
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    ck_assert_msg(d != NULL, "agent %d has no descriptor", a);
    ck_assert_msg(d->id == (Agent)a, "%s: id %d, listed as %d", d->name, (int)d->id, a);
    ck_assert_ptr_eq(agent_to_string((Agent)a), d->name);
    ck_assert_ptr_eq(agent_display_name((Agent)a), d->display);
    ck_assert_int_eq(agent_from_string(d->name), a);
    for (int b = 0; b < a; b++) {
      ck_assert_msg(!streq(agent_desc((Agent)b)->name, d->name), "%s listed twice", d->name);
    }
  }
  ck_assert_ptr_null(agent_desc(_AGENT_MAX));
  ck_assert_ptr_null(agent_desc(_AGENT_INVALID));
  ck_assert_int_eq(agent_from_string("auto"), _AGENT_INVALID);
  ck_assert_int_eq(agent_from_string("all"), _AGENT_INVALID);

  /* The names as --help and the errors give them: every one, in order. */
  _cleanup_free_ char *names = agent_names(", ");
  const char *p = names;
  for (int a = 0; a < _AGENT_MAX; a++) {
    const char *name = agent_to_string((Agent)a);
    ck_assert_msg(strncmp(p, name, strlen(name)) == 0, "`%s` lacks %s where expected", names,
                  name);
    p += strlen(name);
    if (a + 1 < _AGENT_MAX) {
      ck_assert_msg(strncmp(p, ", ", 2) == 0, "`%s`", names);
      p += 2;
    }
  }
  ck_assert_str_eq(p, "");
}
END_TEST

/* Every field a new agent must fill, and the ones that go together. */
START_TEST(test_complete) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    const char *n = d->name;
    ck_assert_msg(n != NULL && n[0] >= 'a' && n[0] <= 'z' &&
                      strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(n),
                  "agent %d: name `%s` is not a lowercase word", a, n ? n : "(null)");
    ck_assert_msg(d->display != NULL && d->display[0] != '\0', "%s: no display name", n);

    /* hook check */
    ck_assert_msg(d->interpret != NULL, "%s: no interpret", n);
    ck_assert_msg(d->answer != NULL, "%s: no answer", n);
    ck_assert_msg((d->recognize != NULL) == (d->recognize_rank > 0),
                  "%s: recognize and recognize_rank go together", n);
    for (int b = 0; b < a && d->bare_patch; b++) {
      ck_assert_msg(!agent_desc((Agent)b)->bare_patch,
                    "%s and %s both send bare patches: which answers one?", n,
                    agent_desc((Agent)b)->name);
    }
    for (int b = 0; b < a && d->recognize != NULL; b++) {
      const AgentDesc *o = agent_desc((Agent)b);
      ck_assert_msg(o->recognize == NULL || o->recognize_rank != d->recognize_rank,
                    "%s and %s share recognize_rank %u: which is tried first?", n, o->name,
                    d->recognize_rank);
    }

    /* its configuration */
    ck_assert_msg(relative_name(d->project), "%s: no project file relative to the project", n);
    ck_assert_msg(d->user == NULL || relative_name(d->user), "%s: user file not relative", n);
    ck_assert_msg(d->detect[0].dir != NULL, "%s: no directory to detect it by", n);
    for (size_t i = 0; i < ELEMENTSOF(d->detect) && d->detect[i].dir != NULL; i++) {
      ck_assert_msg(relative_name(d->detect[i].dir), "%s: detect[%zu] not relative", n, i);
      ck_assert_msg(d->detect[i].where >= AGENT_IN_PROJECT && d->detect[i].where <= AGENT_IN_BOTH,
                    "%s: detect[%zu] looked for nowhere", n, i);
    }
    /* What install writes shows the agent is used. */
    ck_assert_msg(detected_by(d, d->project, AGENT_IN_PROJECT),
                  "%s: %s is below no directory it is detected by in a project", n, d->project);
    ck_assert_msg(d->user == NULL || detected_by(d, d->user, AGENT_IN_HOME),
                  "%s: %s is below no directory it is detected by in home", n, d->user);
    if (d->user_env != NULL) {
      ck_assert_msg(d->user != NULL, "%s: %s without a user-level file", n, d->user_env);
      ck_assert_msg(relative_name(d->user_env_file), "%s: %s without its file", n, d->user_env);
      ck_assert_msg(d->user_env_dir == NULL || below(d->user_env_file, d->user_env_dir),
                    "%s: %s is not below %s", n, d->user_env_file, d->user_env_dir);
    } else {
      ck_assert_msg(d->user_env_file == NULL && d->user_env_dir == NULL,
                    "%s: a file under no environment variable", n);
    }
    ck_assert_msg(d->home_dir == NULL || relative_name(d->home_dir), "%s: home_dir", n);

    /* ralon's hook in it */
    ck_assert_msg(d->shape < _AGENT_SHAPE_MAX, "%s: shape", n);
    if (d->shape == AGENT_SHAPE_FILE) {
      ck_assert_msg(d->file != NULL, "%s: a file of ralon's without its text", n);
      ck_assert_msg(d->entry == NULL && d->events[0] == NULL && !d->versioned,
                    "%s: a file of ralon's has no entries or events", n);
    } else {
      ck_assert_msg(d->entry != NULL, "%s: no entry to install", n);
      ck_assert_msg(d->events[0] != NULL, "%s: no event to install it under", n);
      ck_assert_msg(d->file == NULL && !d->marked && !d->executable,
                    "%s: file, marked and executable are for files ralon owns", n);
    }
    ck_assert_msg(d->trust_note == NULL || d->trust_note[0] != '\0', "%s: empty trust note", n);
  }
}
END_TEST

/* What an agent file builds runs `ralon hook check`, and names `where`
 * in the refusal it prints when ralon cannot run. */
START_TEST(test_builders) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    if (d->entry != NULL) {
      json_object *e = d->entry("where.json");
      ck_assert_msg(e != NULL && json_object_is_type(e, json_type_object), "%s: entry", d->name);
      const char *text = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN);
      ck_assert_msg(strstr(text, HOOK_COMMAND) != NULL, "%s: entry runs no `%s`: %s", d->name,
                    HOOK_COMMAND, text);
      ck_assert_msg(strstr(text, "where.json") != NULL, "%s: entry ignores where: %s",
                    d->name, text);
      json_object_put(e);
    }
    if (d->file != NULL) {
      _cleanup_free_ char *text = d->file("where.json");
      ck_assert_msg(text != NULL && strstr(text, HOOK_COMMAND) != NULL, "%s: file runs no `%s`",
                    d->name, HOOK_COMMAND);
    }
  }
}
END_TEST

static void assert_only(const bool got[_AGENT_MAX], Agent want) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    ck_assert_msg(got[a] == (a == (int)want), "%s detected: %d, wanted only %s",
                  agent_to_string((Agent)a), got[a], agent_to_string(want));
  }
}

/* install, installed, unchanged, uninstall; at project and user level,
 * and in the directory the agent's environment variable names. */
static void round_trip(Agent a, const char *root, const char *home, bool user,
                       const char *want_path) {
  const char *n = agent_to_string(a);
  _cleanup_error_ Error err = {0};
  HookChange c;
  bool installed = true;
  ck_assert_int_eq(hook_is_installed(a, root, home, user, &installed, &err), 0);
  ck_assert_msg(!installed, "%s: installed before install", n);
  ck_assert_msg(hook_install(a, root, home, user, false, false, &c, &err) == 0, "%s: %s", n,
                err.message);
  ck_assert_int_eq(c.kind, HOOK_CHANGE_WROTE);
  ck_assert_str_eq(c.path, want_path);
  ck_assert_msg(strstr(c.content, HOOK_COMMAND) != NULL, "%s: %s runs no hook", n, c.path);
  _cleanup_free_ char *on_disk = read_text_file(c.path, 1u << 20);
  ck_assert_str_eq(on_disk, c.content);
  hook_change_clear(&c);
  ck_assert_int_eq(hook_is_installed(a, root, home, user, &installed, &err), 0);
  ck_assert_msg(installed, "%s: not installed after install", n);

  bool got[_AGENT_MAX];
  ck_assert(hook_detect(user ? NULL : root, user ? home : NULL, got));
  assert_only(got, a);

  ck_assert_int_eq(hook_install(a, root, home, user, false, false, &c, &err), 0);
  ck_assert_msg(c.kind == HOOK_CHANGE_UNCHANGED, "%s: a second install changed %s", n, c.path);
  hook_change_clear(&c);
  ck_assert_int_eq(hook_install(a, root, home, user, true, false, &c, &err), 0);
  ck_assert_int_eq(c.kind, HOOK_CHANGE_REMOVED);
  hook_change_clear(&c);
  ck_assert_int_eq(hook_is_installed(a, root, home, user, &installed, &err), 0);
  ck_assert_msg(!installed, "%s: installed after uninstall", n);
  struct stat st;
  ck_assert_msg(lstat(want_path, &st) < 0, "%s: %s left after uninstall", n, want_path);
}

START_TEST(test_round_trip) {
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    _cleanup_free_ char *root = make_tmpdir();
    _cleanup_free_ char *home = make_tmpdir();
    _cleanup_free_ char *state = make_tmpdir();
    setenv("XDG_STATE_HOME", state, 1);

    _cleanup_free_ char *project = path_join(root, d->project);
    round_trip((Agent)a, root, home, false, project);
    if (d->user == NULL) {
      _cleanup_free_ char *p = hook_config_path((Agent)a, root, home, true);
      ck_assert_ptr_null(p);
      unsetenv("XDG_STATE_HOME");
      continue;
    }
    _cleanup_free_ char *user = path_join(home, d->user);
    round_trip((Agent)a, root, home, true, user);
    if (d->user_env != NULL) {
      /* The agent's own directory, where the variable sends it. */
      _cleanup_free_ char *env = make_tmpdir();
      _cleanup_free_ char *file = path_join(env, d->user_env_file);
      setenv(d->user_env, env, 1);
      round_trip((Agent)a, root, home, true, file);
      /* A relative value is not a directory the agent uses. */
      setenv(d->user_env, "relative", 1);
      _cleanup_free_ char *p = hook_config_path((Agent)a, root, home, true);
      ck_assert_str_eq(p, user);
      unsetenv(d->user_env);
    }
    unsetenv("XDG_STATE_HOME");
  }
}
END_TEST

/* A user-level hook runs everywhere (opencode started pure aside); a
 * project's, as the descriptor says:
 * an agent with a trust note is never plainly "yes" without a note. */
START_TEST(test_runs_here) {
  _cleanup_free_ char *root = make_tmpdir();
  _cleanup_free_ char *home = make_tmpdir();
  for (int a = 0; a < _AGENT_MAX; a++) {
    const AgentDesc *d = agent_desc((Agent)a);
    char *note = NULL;
    ck_assert_int_eq(hook_runs_here((Agent)a, root, home, true, &note), HOOK_RUNS_YES);
    ck_assert_ptr_null(note);
    HookRuns r = hook_runs_here((Agent)a, root, home, false, &note);
    if (d->trust_note != NULL) {
      ck_assert_msg(r != HOOK_RUNS_YES && note != NULL, "%s: trust ignored", d->name);
      ck_assert_ptr_nonnull(hook_trust_note((Agent)a));
    } else {
      ck_assert_ptr_null(hook_trust_note((Agent)a));
    }
    if (d->runs_here == NULL && d->trust_note == NULL) {
      ck_assert_int_eq(r, HOOK_RUNS_YES);
      ck_assert_ptr_null(note);
    }
    free(note);
  }
}
END_TEST

static Suite *agents_suite(void) {
  Suite *s = suite_create("agents");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
  tcase_add_test(tc, test_list);
  tcase_add_test(tc, test_complete);
  tcase_add_test(tc, test_builders);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_runs_here);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  umask(022);
  static const char *const vars[] = {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "CODEX_HOME",
                                     "CLAUDE_CONFIG_DIR", "COPILOT_HOME", "GEMINI_CLI_HOME",
                                     "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "OPENCODE_PURE",
                                     "OPENCODE_DISABLE_PROJECT_CONFIG"};
  for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
    unsetenv(vars[i]);
  }
  SRunner *sr = srunner_create(agents_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
