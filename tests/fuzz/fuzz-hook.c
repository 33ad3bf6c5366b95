/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for `ralon hook check`: an agent's pre-tool payload in,
 * an answer out (ARCHITECTURE.md §5, src/hook/hook.h).
 *
 * Input: the first byte picks an agent (byte % _AGENT_MAX, in the order of
 * the Agent enum: claude, cursor, opencode, copilot, codex, gemini,
 * antigravity, windsurf, cline, qwen); the rest is the payload. It is put
 * to hook_check() twice: unrecognised (_AGENT_INVALID, as without
 * --agent) and as that agent (as with --agent NAME). Whatever the bytes,
 * hook_check must not crash, leak or read out of bounds, and its answer
 * must be one an agent can act on:
 *   - the exit status is 0 or 2, and 2 comes with a reason on stderr
 *     ("ralon: …\n");
 *   - stdout is empty or exactly one line holding one JSON object;
 *   - stdout and stderr are UTF-8 with no control character but the
 *     newline that ends them, whatever bytes the payload's names hold;
 *   - each dialect answers in its own shape: Codex, Windsurf and opencode
 *     never on stdout; Cursor always {"permission":"allow"|"deny"} and
 *     Cline always {"cancel":bool}, with a reason when refusing; Gemini
 *     and Copilot always exit 0, with a reason when refusing.
 *
 * Paths are decided against a small project that LLVMFuzzerInitialize
 * builds at /tmp/ralon-fuzz-hook ($RALON_FUZZ_HOOK_ROOT), the directory the
 * seeds in corpus/hook/ name, and the working directory of the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook/hook.h"

#define DEFAULT_ROOT "/tmp/ralon-fuzz-hook"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz-hook: invariant violated: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

static void write_file(const char *root, const char *rel, const char *text) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    fprintf(stderr, "fuzz-hook: cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
  size_t n = strlen(text);
  if (write(fd, text, n) != (ssize_t)n) {
    fprintf(stderr, "fuzz-hook: cannot write %s\n", path);
    exit(1);
  }
  close(fd);
}

static void make_dir(const char *root, const char *rel) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if (mkdir(path, 0755) < 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz-hook: cannot create %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

static void make_link(const char *root, const char *target, const char *rel) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  (void)unlink(path);
  if (symlink(target, path) < 0) {
    fprintf(stderr, "fuzz-hook: cannot link %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

/* The project of tests/hook/test_hook.py: agent.lock protects everything
 * below tests/golden, Cargo.lock and .github/workflows; src/link points
 * into tests/golden, src/newlink too but dangles. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *root = getenv("RALON_FUZZ_HOOK_ROOT");
  if (root == NULL || root[0] == '\0') {
    root = DEFAULT_ROOT;
  }
  struct stat st;
  if (mkdir(root, 0755) < 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz-hook: cannot create %s: %s\n", root, strerror(errno));
    exit(1);
  }
  if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    fprintf(stderr, "fuzz-hook: %s is not a directory of ours; set RALON_FUZZ_HOOK_ROOT\n",
            root);
    exit(1);
  }
  make_dir(root, "tests");
  make_dir(root, "tests/golden");
  make_dir(root, "src");
  make_dir(root, ".github");
  make_dir(root, ".github/workflows");
  write_file(root, "agent.lock",
             "version: 1\nprotect: [tests/golden/**, Cargo.lock, .github/workflows]\n");
  write_file(root, "tests/golden/a.txt", "a\n");
  write_file(root, "src/main.c", "int main(void) { return 0; }\n");
  write_file(root, "Cargo.lock", "# cargo\n");
  write_file(root, ".github/workflows/ci.yml", "on: push\n");
  make_link(root, "../tests/golden/a.txt", "src/link");
  make_link(root, "../tests/golden/new.txt", "src/newlink");
  if (chdir(root) < 0) {
    fprintf(stderr, "fuzz-hook: cannot enter %s: %s\n", root, strerror(errno));
    exit(1);
  }
  return 0;
}

/* stdout: nothing, or one line with one JSON object, returned parsed. */
static json_object *parse_out(const char *out, const char *who) {
  if (out == NULL) {
    return NULL;
  }
  size_t n = strlen(out);
  if (n == 0 || out[n - 1] != '\n' || memchr(out, '\n', n - 1) != NULL) {
    fail("%s: stdout is not one line: `%s`", who, out);
  }
  json_tokener *tok = json_tokener_new();
  json_object *o = json_tokener_parse_ex(tok, out, (int)(n - 1));
  if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
      (size_t)json_tokener_get_parse_end(tok) != n - 1 ||
      !json_object_is_type(o, json_type_object)) {
    fail("%s: stdout is not one JSON object: `%s`", who, out);
  }
  json_tokener_free(tok);
  return o;
}

static const char *string_at(json_object *o, const char *key) {
  json_object *v;
  if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
      !json_object_is_type(v, json_type_string)) {
    return NULL;
  }
  return json_object_get_string(v);
}

/* UTF-8 with no control character (C0, DEL, C1) but a final newline. */
static void check_showable(const char *text, const char *who) {
  if (text == NULL) {
    return;
  }
  size_t n = strlen(text);
  const unsigned char *u = (const unsigned char *)text;
  if (utf8_invalid_offset(text, n) != n) {
    fail("%s: not UTF-8: `%s`", who, text);
  }
  for (size_t i = 0; i < n; i++) {
    if ((u[i] < 0x20 && !(u[i] == '\n' && i == n - 1)) || u[i] == 0x7F ||
        (u[i] == 0xC2 && i + 1 < n && u[i + 1] < 0xA0)) {
      fail("%s: a control character at %zu: `%s`", who, i, text);
    }
  }
}

static void check_answer(const HookAnswer *a, Agent agent) {
  const char *who = agent >= 0 ? agent_to_string(agent) : "unrecognised";
  check_showable(a->out, who);
  check_showable(a->err, who);
  if (a->exit_code != 0 && a->exit_code != 2) {
    fail("%s: exit status %d", who, a->exit_code);
  }
  if (a->err != NULL) {
    size_t n = strlen(a->err);
    if (n < strlen("ralon: x\n") || strncmp(a->err, "ralon: ", 7) != 0 || a->err[n - 1] != '\n') {
      fail("%s: stderr is not a reason: `%s`", who, a->err);
    }
  }
  if (a->exit_code == 2 && a->err == NULL) {
    fail("%s: exit 2 without a reason on stderr", who);
  }
  json_object *o = parse_out(a->out, who);
  const char *reason = NULL;
  switch (agent) {
  case AGENT_CODEX:
  case AGENT_WINDSURF:
  case AGENT_OPENCODE:
  case _AGENT_INVALID:
    if (agent != _AGENT_INVALID && a->out != NULL) {
      fail("%s: answers on stdout: `%s`", who, a->out);
    }
    break;
  case AGENT_CURSOR: {
    const char *perm = string_at(o, "permission");
    if (perm == NULL || a->exit_code != 0) {
      fail("cursor: no permission: `%s`", a->out ? a->out : "(nothing)");
    }
    if (strcmp(perm, "deny") == 0) {
      reason = string_at(o, "agent_message");
    } else if (strcmp(perm, "allow") == 0) {
      reason = "";
    }
    if (reason == NULL || (strcmp(perm, "deny") == 0 && reason[0] == '\0')) {
      fail("cursor: `%s`", a->out);
    }
    break;
  }
  case AGENT_CLINE: {
    json_object *c;
    if (o == NULL || !json_object_object_get_ex(o, "cancel", &c) ||
        !json_object_is_type(c, json_type_boolean) || a->exit_code != 0) {
      fail("cline: no cancel: `%s`", a->out ? a->out : "(nothing)");
    }
    reason = string_at(o, "errorMessage");
    if (json_object_get_boolean(c) && (reason == NULL || reason[0] == '\0')) {
      fail("cline: cancel without errorMessage: `%s`", a->out);
    }
    break;
  }
  case AGENT_GEMINI:
  case AGENT_COPILOT:
    if (a->exit_code != 0) {
      fail("%s: exit status %d", who, a->exit_code);
    }
    if (o != NULL) {
      reason = string_at(o, agent == AGENT_GEMINI ? "reason" : "permissionDecisionReason");
      if (reason == NULL || reason[0] == '\0') {
        fail("%s: a refusal without a reason: `%s`", who, a->out);
      }
    }
    break;
  case AGENT_CLAUDE:
  case AGENT_QWEN:
  case AGENT_ANTIGRAVITY:
    if ((a->out != NULL) != (a->exit_code == 2)) {
      fail("%s: stdout `%s` with exit status %d", who, a->out ? a->out : "(nothing)",
           a->exit_code);
    }
    break;
  case _AGENT_MAX:
    break;
  }
  json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Agent agent = size > 0 ? (Agent)(data[0] % _AGENT_MAX) : _AGENT_INVALID;
  size_t len = size > 0 ? size - 1 : 0;
  /* As `ralon hook check` passes it: the payload's own bytes and a NUL
   * (read_fd_limited), so that ASan catches a read past that. */
  char *payload = malloc(len + 1);
  if (payload == NULL) {
    return 0;
  }
  memcpy(payload, size > 0 ? data + 1 : data, len);
  payload[len] = '\0';

  HookAnswer answer;
  hook_check(payload, len, _AGENT_INVALID, NULL, &answer);
  check_answer(&answer, _AGENT_INVALID);
  hook_answer_clear(&answer);

  if (agent != _AGENT_INVALID) {
    hook_check(payload, len, agent, NULL, &answer);
    check_answer(&answer, agent);
    hook_answer_clear(&answer);
  }
  free(payload);
  return 0;
}
