/* SPDX-License-Identifier: Apache-2.0 */
#include "gitscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "output.h"
#include "path.h"
#include "policy.h"

extern char **environ;

/* What git prints is read whole; more than this is refused. */
#define GIT_OUTPUT_MAX (256u * 1024u * 1024u)

/* ---- running git -------------------------------------------------------- */

/* Each `-c` is given after whatever the repository and the user set, so it
 * wins: nothing the repository says runs while ralon looks at it. */
static const char *const neutral_config[] = {
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.sshCommand=false",
    "core.askPass=",
    "core.untrackedCache=false",
    "sequence.editor=false",
    "diff.external=",
    "credential.helper=",
    "protocol.allow=never",
    "log.showSignature=false",
    /* Read-only plumbing in a directory another user owns (root looking at
     * a user's project, a CI checkout): nothing runs, so nothing to fear. */
    "safe.directory=*",
};

/* Environment variables that make git run something, or look elsewhere
 * than it was told to, dropped even when the caller's GIT_* are kept. */
static const char *const dropped_env[] = {
    "GIT_EXTERNAL_DIFF", "GIT_PAGER",       "GIT_EDITOR",          "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",           "GIT_SSH_COMMAND", "GIT_ASKPASS",         "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",  "GIT_PROXY_COMMAND", "GIT_EXEC_PATH",     "PAGER",
};

ATTR_NORETURN static void git_child(const char *dir, unsigned flags, const char *const *args,
                                    int in, int out) {
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(in >= 0 ? in : null, STDIN_FILENO) < 0 ||
      dup2(null, STDERR_FILENO) < 0 || dup2(out >= 0 ? out : null, STDOUT_FILENO) < 0) {
    _exit(127);
  }
  if (dir != NULL && chdir(dir) < 0) {
    _exit(126);
  }
  if (!(flags & GIT_RUN_KEEP_ENV)) {
    /* Every GIT_*: collected first, as unsetenv() changes environ. */
    size_t n = 0;
    for (char **e = environ; *e != NULL; e++) {
      n++;
    }
    char **names = xcalloc(n + 1, sizeof(char *));
    size_t k = 0;
    for (char **e = environ; *e != NULL; e++) {
      if (startswith(*e, "GIT_")) {
        names[k++] = xstrndup(*e, strcspn(*e, "="));
      }
    }
    for (size_t i = 0; i < k; i++) {
      (void)unsetenv(names[i]);
    }
  }
  for (size_t i = 0; i < sizeof(dropped_env) / sizeof(dropped_env[0]); i++) {
    (void)unsetenv(dropped_env[i]);
  }
  /* GIT_CONFIG_KEY_n and _VALUE_n go with GIT_CONFIG_COUNT, dropped above. */
  if (setenv("GIT_CONFIG_NOSYSTEM", "1", 1) < 0 || setenv("GIT_NO_REPLACE_OBJECTS", "1", 1) < 0 ||
      setenv("GIT_OPTIONAL_LOCKS", "0", 1) < 0 || setenv("GIT_TERMINAL_PROMPT", "0", 1) < 0 ||
      setenv("GIT_PROTOCOL_FROM_USER", "0", 1) < 0) {
    _exit(127);
  }
  size_t n_args = 0;
  while (args[n_args] != NULL) {
    n_args++;
  }
  size_t n_neutral = sizeof(neutral_config) / sizeof(neutral_config[0]);
  const char **argv = xcalloc(2 + 2 * n_neutral + n_args + 1, sizeof(char *));
  size_t a = 0;
  argv[a++] = "git";
  argv[a++] = "--no-pager";
  for (size_t i = 0; i < n_neutral; i++) {
    argv[a++] = "-c";
    argv[a++] = neutral_config[i];
  }
  for (size_t i = 0; i < n_args; i++) {
    argv[a++] = args[i];
  }
  execvp("git", (char *const *)argv);
  _exit(errno == ENOENT ? 127 : 126);
}

/* Starts git as above, with standard input from `in` (-1: /dev/null) and
 * standard output to `out`. Its pid, or -1 with `err`. */
static pid_t git_spawn(const char *dir, unsigned flags, const char *const *args, int in, int out,
                       Error *err) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    return error_set(err, errno, _("cannot run git: %m"));
  }
  if (pid == 0) {
    git_child(dir, flags, args, in, out);
  }
  return pid;
}

/* git_run() with standard input from `in` (-1: /dev/null). */
static int git_run_in(const char *dir, unsigned flags, const char *const *args, int in,
                      char **ret_out, size_t *ret_len, Error *err) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    return error_set(err, errno, _("cannot run git: %m"));
  }
  pid_t pid = git_spawn(dir, flags, args, in, p[1], err);
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    return -1;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  bool too_long = false;
  for (;;) {
    if (cap - len < 65536) {
      cap = cap == 0 ? 65536 : cap * 2;
      buf = xreallocarray(buf, cap + 1, 1);
    }
    ssize_t got = read(p[0], buf + len, cap - len);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break;
    }
    len += (size_t)got;
    if (len > GIT_OUTPUT_MAX) {
      too_long = true;
      break;
    }
  }
  close(p[0]);
  if (too_long) {
    (void)kill(pid, SIGKILL);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      free(buf);
      return error_set(err, errno, _("cannot run git: %m"));
    }
  }
  if (buf == NULL) {
    buf = xstrdup("");
  }
  buf[len] = '\0';
  if (too_long) {
    free(buf);
    return error_set(err, EFBIG, _("git printed more than %u MiB"), GIT_OUTPUT_MAX >> 20);
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    free(buf);
    return error_set(err, ENOENT, _("git is not installed (or not in PATH)"));
  }
  if (ret_out != NULL) {
    *ret_out = buf;
  } else {
    free(buf);
  }
  if (ret_len != NULL) {
    *ret_len = len;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int git_run(const char *dir, unsigned flags, const char *const *args, char **ret_out,
            size_t *ret_len, Error *err) {
  return git_run_in(dir, flags, args, -1, ret_out, ret_len, err);
}

/* git's output when it exits 0, given `input` (`len` bytes) on its
 * standard input, else NULL. The input is written whole to an anonymous
 * file first, so that git never waits for ralon to read while ralon
 * waits for it to read. */
static char *git_output_input(const char *dir, unsigned flags, const char *const *args,
                              const char *input, size_t input_len, size_t *len) {
  int fd = memfd_create("ralon-git-input", MFD_CLOEXEC);
  if (fd < 0) {
    return NULL;
  }
  for (size_t off = 0; off < input_len;) {
    ssize_t w = write(fd, input + off, input_len - off);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      close(fd);
      return NULL;
    }
    off += (size_t)w;
  }
  if (lseek(fd, 0, SEEK_SET) < 0) {
    close(fd);
    return NULL;
  }
  Error err = {0};
  char *out = NULL;
  int r = git_run_in(dir, flags, args, fd, &out, len, &err);
  close(fd);
  error_clear(&err);
  if (r != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* git's output when it exits 0, else NULL. */
static char *git_output(const char *dir, unsigned flags, const char *const *args, size_t *len) {
  Error err = {0};
  char *out = NULL;
  int r = git_run(dir, flags, args, &out, len, &err);
  error_clear(&err);
  if (r != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* The first line of git's output, when it exits 0. */
static char *git_line(const char *dir, unsigned flags, const char *const *args) {
  char *out = git_output(dir, flags, args, NULL);
  if (out != NULL) {
    out[strcspn(out, "\n")] = '\0';
  }
  return out;
}

/* ---- settings that run commands ------------------------------------------ */

/* `key` is SECTION.SUB.VAR: whether SECTION is `section` and VAR `var`,
 * with any subsection. */
static bool key_is(const char *key, const char *section, const char *var) {
  size_t ls = strlen(section);
  if (strncmp(key, section, ls) != 0 || key[ls] != '.') {
    return false;
  }
  const char *dot = strrchr(key, '.');
  return dot != NULL && streq(dot + 1, var);
}

static bool is_bool(const char *v) {
  static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "1", "0", ""};
  if (v == NULL) {
    return true;
  }
  for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
    if (strcasecmp(v, words[i]) == 0) {
      return true;
    }
  }
  return false;
}

bool gitscan_key_runs(const char *key, const char *value) {
  /* Exactly these keys run their value. */
  static const char *const exact[] = {
      "core.hookspath",    "core.sshcommand", "core.editor",      "core.pager",
      "core.askpass",      "core.gitproxy",   "core.alternaterefscommand",
      "sequence.editor",   "diff.external",   "credential.helper", "gpg.program",
      "interactive.difffilter", "sendemail.tocmd", "sendemail.cccmd", "web.browser",
      "uploadpack.packobjectshook", "merge.tool", "diff.tool",
      "gpg.ssh.defaultkeycommand", "gpg.ssh.program", "gpg.x509.program", "gpg.openpgp.program",
      "sendemail.sendmailcmd", "sendemail.headercmd", "help.browser", "instaweb.httpd",
      "imap.tunnel", "svn.authorsprog",
  };
  /* SECTION.*.VAR. */
  static const char *const any[][2] = {
      {"diff", "textconv"},      {"diff", "command"},     {"filter", "clean"},
      {"filter", "smudge"},      {"filter", "process"},   {"merge", "driver"},
      {"credential", "helper"},  {"gpg", "program"},      {"remote", "uploadpack"},
      {"remote", "receivepack"}, {"remote", "vcs"},       {"difftool", "cmd"},
      {"difftool", "path"},      {"mergetool", "cmd"},    {"mergetool", "path"},
      {"browser", "cmd"},        {"browser", "path"},     {"man", "cmd"},
      {"man", "path"},           {"tar", "command"},      {"trailer", "command"},
      {"trailer", "cmd"},        {"guitool", "cmd"},      {"hook", "command"},
      /* sendemail.<identity>.*: an identity's own version of each. */
      {"sendemail", "tocmd"},    {"sendemail", "cccmd"},  {"sendemail", "sendmailcmd"},
      {"sendemail", "headercmd"},
  };
  if (value != NULL && value[0] == '\0') {
    return false; /* an empty value resets, runs nothing */
  }
  if (streq(key, "core.fsmonitor")) {
    return !is_bool(value); /* true: git's own daemon, see AUDIT_GIT_FSMONITOR */
  }
  if (startswith(key, "alias.")) {
    return value != NULL && value[0] == '!';
  }
  if (startswith(key, "pager.")) {
    return !is_bool(value); /* pager.log = less: runs it */
  }
  if (streq(key, "sendemail.smtpserver") || key_is(key, "sendemail", "smtpserver")) {
    return value != NULL && value[0] == '/'; /* a program instead of a host */
  }
  /* Remote helpers that run a command: `ext::` URLs, once let in, by
   * protocol.ext.allow or by protocol.allow for every protocol. */
  if (startswith(key, "protocol.") && key_is(key, "protocol", "allow")) {
    return value != NULL && streq(value, "always") &&
           (streq(key, "protocol.ext.allow") || streq(key, "protocol.allow"));
  }
  if (startswith(key, "remote.") && (key_is(key, "remote", "url") || key_is(key, "remote", "pushurl"))) {
    return value != NULL && startswith(value, "ext::");
  }
  /* git-lfs, when installed, runs these from the repository's
   * configuration: a custom transfer agent, and an extension's filters. */
  if (startswith(key, "lfs.customtransfer.") && key_is(key, "lfs", "path")) {
    return true;
  }
  if (startswith(key, "lfs.extension.") &&
      (key_is(key, "lfs", "clean") || key_is(key, "lfs", "smudge"))) {
    return true;
  }
  if (startswith(key, "url.") && value != NULL && startswith(value, "ext::")) {
    return true;
  }
  if (startswith(key, "url.") && strstr(key, "ext::") != NULL) {
    return true; /* url.<ext::…>.insteadOf: a command for a remote's URL */
  }
  if (startswith(key, "submodule.") && key_is(key, "submodule", "update")) {
    return value != NULL && value[0] == '!';
  }
  for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
    if (streq(key, exact[i])) {
      return true;
    }
  }
  for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++) {
    if (key_is(key, any[i][0], any[i][1]) && strchr(key, '.') != strrchr(key, '.')) {
      return true;
    }
  }
  return false;
}

static bool is_include_key(const char *key) {
  return streq(key, "include.path") ||
         (startswith(key, "includeif.") && key_is(key, "includeif", "path") &&
          strchr(key, '.') != strrchr(key, '.'));
}

/* ---- configuration files, read as git reads them ----------------------- */

/* git's own character classes (git-compat-util.h), not the locale's. */
static bool cfg_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool cfg_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool cfg_keychar(int c) {
  return cfg_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int cfg_lower(int c) {
  return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

typedef struct {
  const unsigned char *p, *end;
  bool eof;
} CfgSource;

/* git's get_next_char(): CRLF is a newline, the end of the text one too. */
static int cfg_next(CfgSource *s) {
  if (s->p >= s->end) {
    s->eof = true;
    return '\n';
  }
  int c = *s->p++;
  if (c == '\r' && s->p < s->end && *s->p == '\n') {
    s->p++;
    c = '\n';
  }
  return c;
}

typedef struct {
  char *v;
  size_t len, cap;
} CfgBuf;

static void cfg_add(CfgBuf *b, int c) {
  if (b->len + 2 > b->cap) {
    b->cap = b->cap ? b->cap * 2 : 64;
    b->v = xreallocarray(b->v, b->cap, 1);
  }
  b->v[b->len++] = (char)c;
  b->v[b->len] = '\0';
}

/* git's parse_value(): NULL where git refuses the line. */
static char *cfg_value(CfgSource *s) {
  CfgBuf b = {0};
  cfg_add(&b, 'x'); /* never NULL, even when empty */
  b.len = 0;
  b.v[0] = '\0';
  bool quote = false, comment = false;
  size_t spaces = 0;
  for (;;) {
    int c = cfg_next(s);
    if (c == '\n') {
      if (quote) {
        free(b.v);
        return NULL;
      }
      return b.v;
    }
    if (c == '\0') {
      free(b.v); /* git would cut the value short there: refused */
      return NULL;
    }
    if (comment) {
      continue;
    }
    if (cfg_space(c) && !quote) {
      spaces += b.len > 0;
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    for (; spaces > 0; spaces--) {
      cfg_add(&b, ' ');
    }
    if (c == '\\') {
      c = cfg_next(s);
      switch (c) {
      case '\n':
        continue;
      case 't':
        c = '\t';
        break;
      case 'b':
        c = '\b';
        break;
      case 'n':
        c = '\n';
        break;
      case '\\':
      case '"':
        break;
      default:
        free(b.v);
        return NULL;
      }
      cfg_add(&b, c);
      continue;
    }
    if (c == '"') {
      quote = !quote;
      continue;
    }
    cfg_add(&b, c);
  }
}

/* git's get_base_var() and get_extended_base_var(): the section header
 * after `[`, into `name`. */
static bool cfg_section(CfgSource *s, CfgBuf *name) {
  for (;;) {
    int c = cfg_next(s);
    if (s->eof) {
      return false;
    }
    if (c == ']') {
      return true;
    }
    if (cfg_space(c)) {
      do {
        if (c == '\n') {
          return false;
        }
        c = cfg_next(s);
      } while (cfg_space(c));
      if (c != '"') {
        return false;
      }
      cfg_add(name, '.');
      for (;;) {
        c = cfg_next(s);
        if (c == '\n' || c == '\0') {
          return false;
        }
        if (c == '"') {
          break;
        }
        if (c == '\\') {
          c = cfg_next(s);
          if (c == '\n' || c == '\0') {
            return false;
          }
        }
        cfg_add(name, c);
      }
      return cfg_next(s) == ']';
    }
    if (!cfg_keychar(c) && c != '.') {
      return false;
    }
    cfg_add(name, cfg_lower(c));
  }
}

bool gitscan_config_parse(const char *text, size_t len, GitConfigEach each, void *userdata) {
  CfgSource s = {(const unsigned char *)text, (const unsigned char *)text + len, false};
  if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
    s.p += 3; /* a byte-order mark */
  }
  CfgBuf var = {0};
  cfg_add(&var, 'x');
  var.len = 0;
  size_t base = 0;
  bool comment = false, ok = false;
  for (;;) {
    int c = cfg_next(&s);
    if (c == '\n') {
      if (s.eof) {
        ok = true;
        break;
      }
      comment = false;
      continue;
    }
    if (comment || cfg_space(c)) {
      continue;
    }
    if (c == '#' || c == ';') {
      comment = true;
      continue;
    }
    if (c == '[') {
      var.len = 0;
      if (!cfg_section(&s, &var) || var.len < 1) {
        break;
      }
      cfg_add(&var, '.');
      base = var.len;
      continue;
    }
    if (!cfg_alpha(c)) {
      break;
    }
    /* git's get_value(): the variable's name, then `=` and a value, or
     * the end of the line (a boolean true). */
    var.len = base;
    cfg_add(&var, cfg_lower(c));
    for (;;) {
      c = cfg_next(&s);
      if (s.eof || !cfg_keychar(c)) {
        break;
      }
      cfg_add(&var, cfg_lower(c));
    }
    var.v[var.len] = '\0';
    while (c == ' ' || c == '\t') {
      c = cfg_next(&s);
    }
    char *value = NULL;
    if (c != '\n') {
      if (c != '=' || (value = cfg_value(&s)) == NULL) {
        break;
      }
    }
    each(userdata, var.v, value);
    free(value);
  }
  free(var.v);
  return ok;
}

/* ---- configuration as git lists it ------------------------------------- */

typedef struct {
  const char *scope;  /* "local", "global", "worktree", …; NULL with --file */
  const char *origin; /* "file:PATH", "command line:", … */
  const char *key;
  char *value;        /* NULL: a key without `=` */
} ConfigEntry;

/* Splits the output of `git config --list -z --show-origin [--show-scope]`
 * in place: SCOPE\0 ORIGIN\0 KEY\nVALUE\0 ... */
static size_t config_entries(char *out, size_t len, bool scoped, ConfigEntry **ret) {
  ConfigEntry *v = NULL;
  size_t n = 0, cap = 0;
  char *p = out, *end = out + len;
  while (p < end) {
    ConfigEntry e = {0};
    if (scoped) {
      e.scope = p;
      p += strlen(p) + 1;
      if (p >= end) {
        break;
      }
    }
    e.origin = p;
    p += strlen(p) + 1;
    if (p >= end) {
      break;
    }
    char *kv = p;
    p += strlen(p) + 1;
    char *nl = strchr(kv, '\n');
    if (nl != NULL) {
      *nl = '\0';
      e.value = nl + 1;
    }
    e.key = kv;
    *(ConfigEntry *)grow_array(&v, &n, &cap, sizeof(ConfigEntry)) = e;
  }
  *ret = v;
  return n;
}

typedef struct {
  const char *root;       /* the policy's root, as given */
  const char *canon_root; /* canonical, or NULL */
  const Matcher *m;
  AuditFindings *out;
} Scan;

static AuditFinding *add(AuditFindings *f, AuditKind kind, char *subject, char *detail) {
  AuditFinding *a = grow_array(&f->items, &f->n, &f->cap, sizeof(AuditFinding));
  *a = (AuditFinding){.kind = kind, .subject = subject, .detail = detail};
  return a;
}

/* `abs` relative to the project root when inside it, else as it is. */
static char *display(const Scan *s, const char *abs) {
  const char *root = s->canon_root ? s->canon_root : s->root;
  const char *rel = path_relative(root, abs);
  if (rel == NULL && s->canon_root != NULL) {
    rel = path_relative(s->root, abs);
  }
  if (rel == NULL) {
    return xstrdup(abs);
  }
  return xstrdup(rel[0] != '\0' ? rel : ".");
}

/* Whether an agent could change the file at `abs` (absolute, may not
 * exist): inside the project, unless the policy protects it; outside, when
 * this user may write it, or create it in its directory. */
static bool agent_writable(const Scan *s, const char *abs) {
  _cleanup_free_ char *canon = path_resolve(abs);
  if (canon == NULL) {
    return false;
  }
  const char *root = s->canon_root ? s->canon_root : s->root;
  const char *rel = path_relative(root, canon);
  if (rel != NULL) {
    return matcher_match(s->m, rel) < 0;
  }
  if (access(canon, F_OK) == 0) {
    return access(canon, W_OK) == 0;
  }
  _cleanup_free_ char *dir = path_dirname(canon);
  return access(dir, W_OK) == 0;
}

/* ---- whether git need be asked ------------------------------------------ */

typedef struct {
  bool include; /* include.path, includeIf.*.path */
  bool runs;    /* a setting that runs a command */
} Interest;

static void interest_each(void *userdata, const char *key, const char *value) {
  Interest *x = userdata;
  if (startswith(key, "include.") || startswith(key, "includeif.")) {
    x->include = true;
  } else if (gitscan_key_runs(key, value)) {
    x->runs = true;
  }
}

/* Reads the configuration file `file` (not through a symbolic link) as
 * git reads it, calling `each` for every setting: true when it was read
 * plainly (no NUL byte, no line git would refuse), false when it could
 * not be read or was not. */
static bool config_file_parse(const char *file, GitConfigEach each, void *userdata) {
  int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  char *text = NULL;
  size_t len = 0;
  int r = read_fd_limited(fd, 16u * 1024u * 1024u, &text, &len);
  close(fd);
  if (r < 0) {
    return false;
  }
  bool plain = memchr(text, '\0', len) == NULL && gitscan_config_parse(text, len, each, userdata);
  free(text);
  return plain;
}

/* Whether the configuration file `file` may hold something the audit
 * reports: an include (what it includes is only known by following it),
 * or a setting that runs a command when an agent could write the file.
 * Read as git reads it (gitscan_config_parse); anything not plainly
 * understood (not a regular file, unreadable, a NUL byte, a line git
 * would refuse) may. A file that is not there holds nothing. When no file
 * of a repository may, git is not run to list them: the common case costs
 * no process. */
static bool config_may_matter(const Scan *s, const char *file) {
  struct stat st;
  if (lstat(file, &st) < 0) {
    return errno != ENOENT && errno != ENOTDIR;
  }
  if (!S_ISREG(st.st_mode)) {
    return true;
  }
  Interest x = {0};
  bool plain = config_file_parse(file, interest_each, &x);
  return !plain || x.include || (x.runs && agent_writable(s, file));
}

/* The same for every file git reads as the repository's own configuration
 * (scope local or worktree): config and config.worktree of its git
 * directory and, for a linked worktree, of the common directory. */
static bool repo_config_may_matter(const Scan *s, const char *git_dir) {
  static const char *const names[] = {"config", "config.worktree"};
  for (size_t i = 0; i < ELEMENTSOF(names); i++) {
    _cleanup_free_ char *f = path_join(git_dir, names[i]);
    if (config_may_matter(s, f)) {
      return true;
    }
  }
  _cleanup_free_ char *commondir = path_join(git_dir, "commondir");
  struct stat st;
  if (lstat(commondir, &st) < 0) {
    return errno != ENOENT;
  }
  _cleanup_free_ char *text = read_text_file(commondir, 65536);
  if (text == NULL) {
    return true;
  }
  text[strcspn(text, "\r\n")] = '\0';
  _cleanup_free_ char *common = path_absolute(git_dir, text);
  if (common == NULL) {
    return true;
  }
  for (size_t i = 0; i < ELEMENTSOF(names); i++) {
    _cleanup_free_ char *f = path_join(common, names[i]);
    if (config_may_matter(s, f)) {
      return true;
    }
  }
  return false;
}

/* Where an include.path value leads: `~/` is the home directory, a
 * relative path is relative to the directory of the file that says it. */
static char *include_target(const char *including, const char *value) {
  if (startswith(value, "~/")) {
    const char *home = getenv("HOME");
    return home != NULL ? path_join(home, value + 2) : NULL;
  }
  _cleanup_free_ char *dir = path_dirname(including);
  return path_absolute(dir, value);
}

/* A setting in `file` (absolute) that runs a command, in a file an agent
 * could write. */
static void command_found(const Scan *s, const char *file, const char *key, const char *value,
                          const char *where) {
  _cleanup_free_ char *v_shown = text_display(value ? value : "");
  add(s->out, AUDIT_GIT_COMMAND, display(s, file),
      xasprintf(_("sets `%s = %s`%s: git runs that command outside any sandbox at your next "
                  "git command, and agent.lock does not protect this file (remove the setting "
                  "if you did not make it, and protect the file in agent.lock)"),
                key, v_shown, where));
}

/* One listing of configuration: `where` says which repository it belongs
 * to in the messages ("" for the project's own). `base`: the directory
 * relative file origins are relative to. */
static void audit_config_listing(const Scan *s, char *out, size_t len, bool scoped,
                                 const char *base, const char *where) {
  ConfigEntry *v = NULL;
  size_t n = config_entries(out, len, scoped, &v);
  for (size_t i = 0; i < n; i++) {
    const ConfigEntry *e = &v[i];
    if (!startswith(e->origin, "file:")) {
      continue; /* the command line (ours), standard input, a blob */
    }
    if (e->scope != NULL && !streq(e->scope, "local") && !streq(e->scope, "worktree")) {
      continue;
    }
    _cleanup_free_ char *file = path_absolute(base, e->origin + 5);
    if (file == NULL) {
      continue;
    }
    if (is_include_key(e->key) && e->value != NULL && e->value[0] != '\0') {
      _cleanup_free_ char *target = include_target(file, e->value);
      if (target != NULL && agent_writable(s, target)) {
        _cleanup_free_ char *from = display(s, file);
        _cleanup_free_ char *v_shown = text_display(e->value);
        add(s->out, AUDIT_GIT_INCLUDE, display(s, target),
            xasprintf(_("is read by git as configuration (`%s = %s` in %s%s), and agent.lock does "
                        "not protect it: a setting an agent adds there (core.fsmonitor, an "
                        "alias) runs commands outside any sandbox at your next git command "
                        "(protect it in agent.lock, or remove the include)"),
                      e->key, v_shown, from, where));
      }
      continue;
    }
    if (!gitscan_key_runs(e->key, e->value) || !agent_writable(s, file)) {
      continue;
    }
    command_found(s, file, e->key, e->value, where);
  }
  free(v);
}

/* The project's own configuration, includes followed, as git reads it.
 * The git directory is given by its absolute name, so that git names each
 * file it reads absolutely too (found on its own, it names them relative
 * to the top of the working tree, which need not be the project root). */
static void audit_project_config(const Scan *s, const char *root, const char *git_dir) {
  if (!repo_config_may_matter(s, git_dir)) {
    return;
  }
  const char *args[] = {"--git-dir", git_dir, "config", "--list", "-z", "--includes",
                        "--show-origin", "--show-scope", NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(root, 0, args, &len);
  if (out != NULL) {
    audit_config_listing(s, out, len, true, root, "");
  }
}

typedef struct {
  char **keys, **values; /* values[i] NULL: a key without `=` */
  size_t n, cap, cap_v;
  bool include;
} Settings;

static void settings_each(void *userdata, const char *key, const char *value) {
  Settings *x = userdata;
  x->include |= is_include_key(key);
  size_t n = x->n;
  *(char **)grow_array(&x->keys, &x->n, &x->cap, sizeof(char *)) = xstrdup(key);
  *(char **)grow_array(&x->values, &n, &x->cap_v, sizeof(char *)) = value ? xstrdup(value) : NULL;
}

/* A configuration file with no include, read plainly by ralon's own
 * reading of git's syntax (gitscan_config_parse), lists exactly what `git
 * config --file F --list` would: its settings are judged here, with no
 * git run. false when git must be asked (an include, whose conditions
 * and targets are git's to resolve, or anything not read plainly). */
static bool audit_file_config_plain(const Scan *s, const char *config, const char *where) {
  Settings x = {0};
  bool plain = config_file_parse(config, settings_each, &x) && !x.include;
  if (plain && agent_writable(s, config)) {
    for (size_t i = 0; i < x.n; i++) {
      if (gitscan_key_runs(x.keys[i], x.values[i])) {
        command_found(s, config, x.keys[i], x.values[i], where);
      }
    }
  }
  for (size_t i = 0; i < x.n; i++) {
    free(x.keys[i]);
    free(x.values[i]);
  }
  free(x.keys);
  free(x.values);
  return plain;
}

/* A nested repository's configuration file (and what it includes). */
static void audit_file_config(const Scan *s, const char *config, const char *where) {
  struct stat st;
  if (lstat(config, &st) < 0 || !S_ISREG(st.st_mode) || !config_may_matter(s, config) ||
      audit_file_config_plain(s, config, where)) {
    return;
  }
  const char *args[] = {"config", "--file", config, "--list", "-z", "--includes", "--show-origin",
                        NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(NULL, 0, args, &len);
  if (out != NULL) {
    audit_config_listing(s, out, len, false, "/", where);
  }
}

/* ---- nested repositories --------------------------------------------------- */

/* The walk for nested repositories looks at no more than this many
 * entries, this deep. */
#define NESTED_WALK_MAX_ENTRIES 200000u
#define NESTED_WALK_MAX_DEPTH 64u
#define NESTED_REPORT_MAX 50u

typedef struct {
  char *rel;  /* the .git entry (or the bare directory), relative to the root */
  bool bare;
} Nested;

typedef struct {
  const Scan *s;
  size_t budget;
  bool cut;
  Nested *v;
  size_t n, cap;
} Walk;

static bool is_dir_at(int dfd, const char *name) {
  struct stat st;
  return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* git's own test for a git directory (setup.c, is_git_directory()): HEAD,
 * and objects/ and refs/ in its common directory, which is the directory
 * itself unless a `commondir` file in it names another (relative to it). */
static bool looks_like_git_dir(int dfd) {
  struct stat st;
  if (fstatat(dfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
      !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
    return false;
  }
  _cleanup_free_ char *common = read_text_file_at(dfd, "commondir", 65536);
  if (common == NULL) {
    return is_dir_at(dfd, "objects") && is_dir_at(dfd, "refs");
  }
  common[strcspn(common, "\r\n")] = '\0';
  int cfd = common[0] != '\0' ? openat(dfd, common, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (cfd < 0) {
    return false;
  }
  bool ok = is_dir_at(cfd, "objects") && is_dir_at(cfd, "refs");
  close(cfd);
  return ok;
}

/* The common directory of the git directory `git_dir` (absolute): where
 * its configuration and hooks are. The directory a `commondir` file in it
 * names (relative to it), or itself. */
static char *common_dir_of(const char *git_dir) {
  _cleanup_free_ char *file = path_join(git_dir, "commondir");
  _cleanup_free_ char *text = read_text_file(file, 65536);
  if (text != NULL) {
    text[strcspn(text, "\r\n")] = '\0';
  }
  if (text == NULL || text[0] == '\0') {
    return xstrdup(git_dir);
  }
  char *common = path_absolute(git_dir, text);
  char *canon = common != NULL ? path_resolve(common) : NULL;
  if (canon != NULL) {
    free(common);
    return canon;
  }
  return common != NULL ? common : xstrdup(git_dir);
}

static void add_nested(Walk *w, const char *rel, bool bare) {
  *(Nested *)grow_array(&w->v, &w->n, &w->cap, sizeof(Nested)) = (Nested){xstrdup(rel), bare};
}

static bool has_name(const DirName *e, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    if (streq(e[i].name, name)) {
      return true;
    }
  }
  return false;
}

/* Walks the directory open at `dfd` (taken over), `rel` from the root: a
 * git directory there (not the root) is recorded and not walked. Its
 * listing says what a stat(2) of each entry would (the types), and
 * whether it can be a git directory at all (a HEAD in it): on a project
 * of 100,000 files, those stats were most of the walk's system calls. */
static void walk_dir(Walk *w, int dfd, const char *rel, unsigned depth) {
  size_t n = 0;
  DirName *e = dir_names_sorted(dfd, &w->budget, &w->cut, &n);
  bool git_dir = rel[0] != '\0' && has_name(e, n, "HEAD") && looks_like_git_dir(dfd);
  if (git_dir) {
    add_nested(w, rel, true);
  }
  for (size_t i = 0; i < n && !git_dir; i++) {
    const char *name = e[i].name;
    mode_t type = dir_name_type(dfd, &e[i]);
    bool git = streq(name, ".git");
    if (!git && type != S_IFDIR) {
      continue;
    }
    _cleanup_free_ char *child = rel[0] ? xasprintf("%s/%s", rel, name) : xstrdup(name);
    if (git) {
      if (rel[0] != '\0' && (type == S_IFDIR || type == S_IFREG || type == S_IFLNK)) {
        add_nested(w, child, false);
      }
      continue; /* neither the project's own nor a nested one is walked */
    }
    if (matcher_match(w->s->m, child) >= 0) {
      continue; /* what the policy protects, an agent cannot have planted */
    }
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      continue;
    }
    if (depth + 1 >= NESTED_WALK_MAX_DEPTH) {
      if (looks_like_git_dir(sub)) {
        add_nested(w, child, true);
      } else {
        w->cut = true;
      }
      close(sub);
      continue;
    }
    walk_dir(w, sub, child, depth + 1);
  }
  dir_names_free(e, n);
  close(dfd);
}

/* The gitlinks of the project's index, relative to the project root. */
static char **index_gitlinks(const char *root, size_t *ret_n) {
  static const char *const args[] = {"ls-files", "--stage", "-z", NULL};
  size_t len = 0;
  *ret_n = 0;
  _cleanup_free_ char *out = git_output(root, 0, args, &len);
  if (out == NULL) {
    return NULL;
  }
  char **v = NULL;
  size_t n = 0, cap = 0;
  for (char *p = out; p < out + len; p += strlen(p) + 1) {
    char *tab = strchr(p, '\t');
    if (startswith(p, "160000 ") && tab != NULL) {
      *(char **)grow_array(&v, &n, &cap, sizeof(char *)) = xstrdup(tab + 1);
    }
  }
  *ret_n = n;
  return v;
}

/* The git directory a .git entry at `abs` leads to (a directory, or a
 * file "gitdir: PATH"), absolute; NULL when it leads nowhere. */
static char *nested_git_dir(const char *abs) {
  struct stat st;
  if (lstat(abs, &st) < 0) {
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    return xstrdup(abs);
  }
  _cleanup_free_ char *text = read_text_file(abs, 65536);
  if (text == NULL || !startswith(text, "gitdir: ")) {
    return NULL;
  }
  char *v = text + strlen("gitdir: ");
  v[strcspn(v, "\r\n")] = '\0';
  _cleanup_free_ char *dir = path_dirname(abs);
  return path_absolute(dir, v);
}

static bool in_list(char **v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++) {
    if (streq(v[i], s)) {
      return true;
    }
  }
  return false;
}

static void audit_sequencer(const Scan *s, const char *git_dir);

static void audit_nested(const Scan *s, const char *root, const char *git_dir) {
  Walk w = {.s = s, .budget = NESTED_WALK_MAX_ENTRIES};
  int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    walk_dir(&w, fd, "", 0);
  }
  size_t n_links = 0;
  char **links = NULL;
  bool links_read = false;
  size_t reported = 0, more = 0;
  for (size_t i = 0; i < w.n; i++) {
    const Nested *nd = &w.v[i];
    _cleanup_free_ char *abs = path_join(root, nd->rel);
    _cleanup_free_ char *gd = nd->bare ? xstrdup(abs) : nested_git_dir(abs);
    _cleanup_free_ char *canon_gd = gd != NULL ? path_resolve(gd) : NULL;
    /* Its sequencer state, unless that was looked at already: the
     * project's own git directory, a linked worktree's. */
    _cleanup_free_ char *worktrees = git_dir != NULL ? path_join(git_dir, "worktrees") : NULL;
    if (canon_gd != NULL && (git_dir == NULL || (!streq(canon_gd, git_dir) &&
                                                 path_relative(worktrees, canon_gd) == NULL))) {
      audit_sequencer(s, canon_gd);
    }
    /* A submodule whose git directory is the project's .git/modules/NAME:
     * the audit of .git covers it. */
    if (canon_gd != NULL && git_dir != NULL && path_relative(git_dir, canon_gd) != NULL) {
      continue;
    }
    /* A linked worktree's git directory (and anything else with a
     * commondir file) takes its configuration and hooks from there. */
    _cleanup_free_ char *common = canon_gd ? common_dir_of(canon_gd) : NULL;
    _cleanup_free_ char *config = common ? path_join(common, "config") : NULL;
    _cleanup_free_ char *hooks = common ? path_join(common, "hooks") : NULL;
    bool open_config = config == NULL || agent_writable(s, config);
    bool open_hooks = hooks == NULL || agent_writable(s, hooks);
    _cleanup_free_ char *work = nd->bare ? xstrdup(nd->rel) : path_dirname(nd->rel);
    if (open_config || open_hooks) {
      if (reported >= NESTED_REPORT_MAX) {
        more++;
      } else if (nd->bare) {
        reported++;
        add(s->out, AUDIT_GIT_BARE_REPO, xstrdup(nd->rel),
            xasprintf(_("looks like a bare git repository, and agent.lock does not protect it: "
                        "git run in that directory reads its configuration and runs its hooks "
                        "outside any sandbox, so a setting there runs commands (remove it if "
                        "you did not make it; `git config --global safe.bareRepository "
                        "explicit` makes git ignore such directories)")));
      } else {
        reported++;
        if (!links_read) {
          /* The index only matters for a repository reported: one git
           * run, once, and none when every nested one is protected. */
          links = index_gitlinks(root, &n_links);
          links_read = true;
        }
        bool linked = in_list(links, n_links, work);
        add(s->out, AUDIT_GIT_NESTED_REPO, xstrdup(nd->rel),
            linked ? xasprintf(_("is a git repository inside the project, registered as a "
                                 "submodule (a gitlink in the index), and agent.lock does not "
                                 "protect its configuration or hooks: `git status` and `git "
                                 "diff` at the root enter it and run its core.fsmonitor, and "
                                 "git in %s runs its hooks and settings, outside any sandbox "
                                 "(remove it if you did not make it, or protect it in "
                                 "agent.lock; `git config diff.ignoreSubmodules all` keeps git "
                                 "at the root out of it)"),
                               work)
                   : xasprintf(_("is a git repository inside the project, and agent.lock does "
                                 "not protect its configuration or hooks: git in %s runs them "
                                 "outside any sandbox (remove it if you did not make it, or "
                                 "protect it in agent.lock)"),
                               work));
      }
    }
    if (config != NULL) {
      _cleanup_free_ char *where = xasprintf(_(" (for the repository in %s)"), work);
      audit_file_config(s, config, where);
    }
  }
  if (more > 0) {
    add(s->out, AUDIT_GIT_NESTED_REPO, xstrdup("..."),
        xasprintf(P_("and %zu more git repository inside the project, not protected either",
                     "and %zu more git repositories inside the project, not protected either",
                     (unsigned long)more),
                  more));
  }
  if (w.cut) {
    add(s->out, AUDIT_GIT_WALK_LIMIT, xstrdup("."),
        xasprintf(_("has more than %u entries (or is nested deeper than %u directories): the "
                    "search for git repositories inside the project stopped there, and one "
                    "beyond was not looked for"),
                  NESTED_WALK_MAX_ENTRIES, NESTED_WALK_MAX_DEPTH));
  }
  for (size_t i = 0; i < w.n; i++) {
    free(w.v[i].rel);
  }
  free(w.v);
  strings_free(links, n_links);
}

/* ---- sequencer state ------------------------------------------------------- */

char **gitscan_exec_lines(const char *text, size_t *ret_n) {
  char **v = NULL;
  size_t n = 0, cap = 0;
  const char *p = text;
  while (*p != '\0') {
    size_t len = strcspn(p, "\n");
    _cleanup_free_ char *line = xstrndup(p, len);
    p += len + (p[len] == '\n');
    char *l = line + strspn(line, " \t");
    size_t w = strcspn(l, " \t");
    if ((w == 4 && strncmp(l, "exec", 4) == 0) || (w == 1 && l[0] == 'x')) {
      char *cmd = l + w + strspn(l + w, " \t");
      cmd[strcspn(cmd, "\r")] = '\0';
      if (*cmd != '\0') {
        *(char **)grow_array(&v, &n, &cap, sizeof(char *)) = xstrdup(cmd);
      }
    }
  }
  *ret_n = n;
  return v;
}

/* The merge strategies git has itself; any other name makes the
 * sequencer run the program git-merge-NAME. */
static bool builtin_strategy(const char *name) {
  static const char *const names[] = {"ort", "recursive", "resolve", "octopus", "ours",
                                      "subtree"};
  for (size_t i = 0; i < ELEMENTSOF(names); i++) {
    if (streq(name, names[i])) {
      return true;
    }
  }
  return false;
}

static void strategy_found(const Scan *s, const char *abs, const char *name) {
  if (name == NULL || name[0] == '\0' || builtin_strategy(name)) {
    return;
  }
  _cleanup_free_ char *shown = text_display(name);
  add(s->out, AUDIT_GIT_SEQUENCER_EXEC, display(s, abs),
      xasprintf(_("names the merge strategy `%s`: a rebase or cherry-pick is in progress, and "
                  "`git rebase --continue` (or `git cherry-pick --continue`) runs the program "
                  "git-merge-%s outside any sandbox, found from the top of the working tree "
                  "when the name has a `/` and in PATH otherwise (if you did not start it, end "
                  "it with `git rebase --quit` or `git cherry-pick --quit`, which run nothing)"),
                shown, shown));
}

static void opts_each(void *userdata, const char *key, const char *value) {
  char **strategy = userdata;
  if (streq(key, "options.strategy")) {
    free(*strategy);
    *strategy = value != NULL ? xstrdup(value) : NULL;
  }
}

/* Sequencer state in one git directory (the worktree's own, where git
 * keeps it): exec lines in a todo list, and a merge strategy that is a
 * program (rebase-merge/strategy, the `strategy` of sequencer/opts). */
static void audit_sequencer(const Scan *s, const char *git_dir) {
  static const char *const files[] = {"rebase-merge/git-rebase-todo", "rebase-merge/done",
                                      "sequencer/todo"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    _cleanup_free_ char *abs = path_join(git_dir, files[i]);
    _cleanup_free_ char *text = read_text_file(abs, 16u * 1024u * 1024u);
    if (text == NULL) {
      continue;
    }
    size_t n = 0;
    char **cmds = gitscan_exec_lines(text, &n);
    for (size_t k = 0; k < n && k < 20; k++) {
      _cleanup_free_ char *cmd = text_display(cmds[k]);
      add(s->out, AUDIT_GIT_SEQUENCER_EXEC, display(s, abs),
          xasprintf(_("holds `exec %s`: a rebase or cherry-pick is in progress, and `git rebase "
                      "--continue` runs that command outside any sandbox (if you did not start "
                      "it, end it with `git rebase --quit` or `git cherry-pick --quit`, which "
                      "run nothing, and remove the line)"),
                    cmd));
    }
    strings_free(cmds, n);
  }
  _cleanup_free_ char *strategy_file = path_join(git_dir, "rebase-merge/strategy");
  _cleanup_free_ char *strategy = read_text_file(strategy_file, 65536);
  if (strategy != NULL) {
    strategy[strcspn(strategy, "\n")] = '\0'; /* as git reads it: the first line */
    strategy_found(s, strategy_file, strategy);
  }
  _cleanup_free_ char *opts_file = path_join(git_dir, "sequencer/opts");
  char *opts = NULL;
  size_t opts_len = 0;
  int fd = open(opts_file, O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && read_fd_limited(fd, 65536, &opts, &opts_len) == 0) {
    char *name = NULL;
    (void)gitscan_config_parse(opts, opts_len, opts_each, &name);
    strategy_found(s, opts_file, name);
    free(name);
  }
  if (fd >= 0) {
    close(fd);
  }
  free(opts);
}

/* The same in each linked worktree's git directory (.git/worktrees/NAME),
 * wherever the worktree is: its state is kept there. */
static void audit_worktree_sequencers(const Scan *s, const char *git_dir) {
  _cleanup_free_ char *dir = path_join(git_dir, "worktrees");
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  size_t budget = 10000, n = 0;
  bool cut = false;
  DirName *e = dir_names_sorted(fd, &budget, &cut, &n);
  for (size_t i = 0; i < n; i++) {
    if (dir_name_type(fd, &e[i]) == S_IFDIR) {
      _cleanup_free_ char *wt = path_join(dir, e[i].name);
      audit_sequencer(s, wt);
    }
  }
  dir_names_free(e, n);
  close(fd);
}

/* Whether git, started in `dir`, could find a repository above it: a
 * .git entry in a directory on the way up, or a directory that looks like
 * a git directory itself. Lexical and cheap: when there is none, no git
 * needs to be asked. */
static bool repository_above(const char *dir) {
  _cleanup_free_ char *d = xstrdup(dir);
  for (;;) {
    _cleanup_free_ char *dot_git = path_join(d, ".git");
    struct stat st;
    if (lstat(dot_git, &st) == 0) {
      return true;
    }
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool bare = fd >= 0 && looks_like_git_dir(fd);
    if (fd >= 0) {
      close(fd);
    }
    if (bare) {
      return true;
    }
    if (streq(d, "/")) {
      return false;
    }
    char *up = path_dirname(d);
    free(d);
    d = up;
  }
}

void gitscan_audit(const char *root, const char *canon_root, const Matcher *m,
                   AuditFindings *out) {
  Scan s = {.root = root, .canon_root = canon_root, .m = m, .out = out};
  const char *dir = canon_root ? canon_root : root;
  /* The project's git directory: .git in the root (a directory, or a
   * file naming it), as git finds it from there; else ask git, for a
   * project below the top of its repository. One git run less in the
   * common case. */
  _cleanup_free_ char *dot_git = path_join(dir, ".git");
  _cleanup_free_ char *git_dir = nested_git_dir(dot_git);
  struct stat st;
  if (git_dir == NULL || stat(git_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    static const char *const rev_args[] = {"rev-parse", "--absolute-git-dir", NULL};
    free(git_dir);
    git_dir = repository_above(dir) ? git_line(dir, 0, rev_args) : NULL;
  }
  _cleanup_free_ char *canon_git_dir = git_dir ? path_resolve(git_dir) : NULL;
  if (git_dir != NULL) {
    audit_project_config(&s, dir, git_dir);
    audit_sequencer(&s, git_dir);
    audit_worktree_sequencers(&s, git_dir);
  }
  audit_nested(&s, dir, canon_git_dir);
}

/* ---- after the session -------------------------------------------------- */

struct GitWatch {
  pid_t pid;
  int fd;
};

static bool same_finding(const AuditFinding *a, const AuditFinding *b) {
  return a->kind == b->kind && streq(a->subject, b->subject) && streq(a->detail, b->detail);
}

ATTR_NORETURN static void watch_child(int fd, const char *root, const char *canon_root,
                                      const Matcher *m, const char *policy_file, bool quiet,
                                      const AuditFindings *before) {
  /* The terminal's signals are the agent's: this process says its piece
   * once the session is over, whatever the keyboard sent meanwhile. */
  static const int ignored[] = {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTOU, SIGTTIN, SIGPIPE};
  for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
    signal(ignored[i], SIG_IGN);
  }
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  for (;;) {
    char c;
    ssize_t got = read(fd, &c, 1);
    if (got == 0 || (got < 0 && errno != EINTR)) {
      break;
    }
  }
  close(fd);
  AuditFindings after = {0};
  gitscan_audit(root, canon_root, m, &after);
  for (size_t i = 0; i < after.n; i++) {
    const AuditFinding *f = &after.items[i];
    bool known = false;
    for (size_t k = 0; k < before->n && !known; k++) {
      known = same_finding(f, &before->items[k]);
    }
    if (known) {
      continue;
    }
    _cleanup_free_ char *subject = text_display(f->subject);
    if (!quiet) {
      print_warning(_("added during the session: %s %s"), subject, f->detail);
    }
    if (log_enabled()) {
      LogFields lf = {0};
      log_field(&lf, "RALON_FINDING", "%s", audit_kind_to_string(f->kind));
      log_field(&lf, "RALON_PATH", "%s", f->subject);
      log_field(&lf, "RALON_ROOT", "%s", root);
      log_field(&lf, "RALON_POLICY", "%s", policy_file);
      log_field(&lf, "RALON_COMMAND", "%s", "run");
      log_field(&lf, "RALON_SESSION", "%s", "ended");
      log_field(&lf, "RALON_WEAKENS", "%d", audit_weakens(f->kind));
      log_send(LOG_FINDING, &lf, "%s: added during the session: %s %s", root, f->subject,
               f->detail);
    }
  }
  fflush(stderr);
  _exit(0);
}

GitWatch *git_watch_start(const char *root, const char *canon_root, const Matcher *m,
                          const char *policy_file, bool quiet, const AuditFindings *before) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    return NULL;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return NULL;
  }
  if (pid == 0) {
    close(p[1]);
    /* Only the standard descriptors and the pipe: nothing of ralon's
     * (the plan's directories, the policy) stays open for the session. */
    int keep = p[0];
    if (keep > 3) {
      (void)close_range(3, (unsigned)keep - 1, 0);
    }
    (void)close_range((unsigned)keep + 1, ~0u, 0);
    watch_child(keep, root, canon_root, m, policy_file, quiet, before);
  }
  close(p[0]);
  GitWatch *w = xcalloc(1, sizeof(GitWatch));
  w->pid = pid;
  w->fd = p[1];
  return w;
}

void git_watch_end(GitWatch *w) {
  if (w == NULL) {
    return;
  }
  close(w->fd);
  int st;
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
  }
  free(w);
}

/* ---- what commits change --------------------------------------------------- */

void git_changes_clear(GitChanges *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].path);
    free(c->v[i].commit);
    free(c->v[i].pattern);
    free(c->v[i].policy);
    free(c->v[i].policy_path);
  }
  free(c->v);
  free(c->policy_file);
  strings_free(c->policies, c->n_policies);
  free(c->base);
  free(c->base_name);
  memset(c, 0, sizeof(*c));
}

/* The longest object id in hexadecimal (SHA-256). */
#define GIT_HEX_MAX 64

/* `git cat-file --batch`, started once and asked one object at a time: it
 * answers each request before it reads the next, so every agent.lock of a
 * tree, and the trees that lead to them, cost one process. */
typedef struct {
  pid_t pid;
  int req;   /* requests: our end of a socket pair, written with
              * MSG_NOSIGNAL (a pipe would kill ralon with SIGPIPE if git
              * went away) */
  FILE *ans; /* answers */
  bool broken;
} CatFile;

static int catfile_start(const char *dir, CatFile *cf, Error *err) {
  static const char *const args[] = {"cat-file", "--batch", NULL};
  *cf = (CatFile){.pid = -1, .req = -1};
  int sv[2], p[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
    return error_set(err, errno, _("cannot run git: %m"));
  }
  if (pipe2(p, O_CLOEXEC) < 0) {
    int e = errno;
    close(sv[0]);
    close(sv[1]);
    return error_set(err, e, _("cannot run git: %m"));
  }
  pid_t pid = git_spawn(dir, GIT_RUN_KEEP_ENV, args, sv[1], p[1], err);
  close(sv[1]);
  close(p[1]);
  if (pid < 0) {
    close(sv[0]);
    close(p[0]);
    return -1;
  }
  cf->pid = pid;
  cf->req = sv[0];
  cf->ans = fdopen(p[0], "r");
  if (cf->ans == NULL) {
    oom();
  }
  return 0;
}

static void catfile_end(CatFile *cf) {
  if (cf->ans != NULL) {
    fclose(cf->ans); /* git, still writing, gets EPIPE */
  }
  if (cf->req >= 0) {
    close(cf->req); /* git reads the end of its input and exits */
  }
  if (cf->pid > 0) {
    int st;
    while (waitpid(cf->pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  *cf = (CatFile){.pid = -1, .req = -1};
}

/* The object `name` (an object id, or ID^{tree}): 1 with its type, its id
 * in hexadecimal and its content (NUL-terminated, its length in *ret_len);
 * 0 when the repository has none of that name; -1 with `err` when git
 * does not answer. */
static int catfile_get(CatFile *cf, const char *name, char type[16], char oid[GIT_HEX_MAX + 1],
                       char **ret, size_t *ret_len, Error *err) {
  if (cf->broken) {
    return error_set(err, EIO, _("cannot read objects from git"));
  }
  _cleanup_free_ char *line = xasprintf("%s\n", name);
  size_t len = strlen(line), off = 0;
  while (off < len) {
    ssize_t w = send(cf->req, line + off, len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w <= 0) {
      cf->broken = true;
      return error_set(err, w < 0 ? errno : EIO, _("cannot read objects from git: %m"));
    }
    off += (size_t)w;
  }
  _cleanup_free_ char *hdr = NULL;
  size_t cap = 0;
  if (getline(&hdr, &cap, cf->ans) <= 0) {
    cf->broken = true;
    return error_set(err, EIO, _("cannot read objects from git"));
  }
  /* ID TYPE SIZE, or NAME missing (or ambiguous) */
  unsigned long long size = 0;
  char t[16] = "", o[GIT_HEX_MAX + 1] = "";
  if (sscanf(hdr, "%64s %15s %llu", o, t, &size) != 3) {
    return 0;
  }
  if (size > GIT_OUTPUT_MAX) {
    cf->broken = true;
    return error_set(err, EFBIG, _("git printed more than %u MiB"), GIT_OUTPUT_MAX >> 20);
  }
  char *buf = xmalloc((size_t)size + 1);
  if (fread(buf, 1, (size_t)size, cf->ans) != (size_t)size || fgetc(cf->ans) != '\n') {
    free(buf);
    cf->broken = true;
    return error_set(err, EIO, _("cannot read objects from git"));
  }
  buf[size] = '\0';
  memcpy(type, t, sizeof(t));
  memcpy(oid, o, sizeof(o));
  *ret = buf;
  *ret_len = (size_t)size;
  return 1;
}

/* The entry `name` of the tree object `tree`: its mode and its object id
 * in hexadecimal; false when the tree has none. `raw`: the length of an
 * object id in binary (20, or 32 in a SHA-256 repository). */
static bool tree_entry(const char *tree, size_t len, size_t raw, const char *name,
                       unsigned *ret_mode, char oid[GIT_HEX_MAX + 1]) {
  size_t name_len = strlen(name);
  const char *p = tree, *end = tree + len;
  while (p < end) {
    /* MODE SP NAME NUL ID */
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    const char *nul = sp != NULL ? memchr(sp + 1, '\0', (size_t)(end - sp - 1)) : NULL;
    if (nul == NULL || (size_t)(end - nul - 1) < raw) {
      return false;
    }
    if ((size_t)(nul - sp - 1) == name_len && memcmp(sp + 1, name, name_len) == 0) {
      unsigned mode = 0;
      for (const char *q = p; q < sp; q++) {
        if (*q < '0' || *q > '7' || mode > 0777777) {
          return false;
        }
        mode = mode * 8 + (unsigned)(*q - '0');
      }
      static const char hex[] = "0123456789abcdef";
      for (size_t i = 0; i < raw; i++) {
        unsigned char b = (unsigned char)nul[1 + i];
        oid[2 * i] = hex[b >> 4];
        oid[2 * i + 1] = hex[b & 15];
      }
      oid[2 * raw] = '\0';
      *ret_mode = mode;
      return true;
    }
    p = nul + 1 + raw;
  }
  return false;
}

/* One directory of the tree the changes are judged by, and its agent.lock. */
typedef struct {
  char *dir;      /* "" for the top of the repository, else "a/b" */
  char *tree;     /* its tree object; NULL when it is no directory there
                   * (and when the policies are read from disk) */
  size_t tree_len;
  size_t raw;     /* the length of an object id in binary, in `tree` */
  Policy *policy; /* its agent.lock, or NULL */
  Matcher *m;
  char *file;     /* where that was read: "REV:a/b/agent.lock", or on disk */
  char *path;     /* its path in the repository: "a/b/agent.lock" */
  char *error;    /* why it cannot be judged by (not a regular file, does
                   * not parse), or NULL */
} TreeDir;

/* Every agent.lock of one tree that a changed path needs, each read once,
 * through one `git cat-file --batch`: the tree of a commit, or, before the
 * first commit, the working tree. */
typedef struct {
  const char *git_dir;   /* where git runs (the caller's directory) */
  const char *commit;    /* full hex; NULL: the working tree at `top` */
  const char *rev_shown; /* how the caller named the commit */
  const char *top;       /* the working tree's top, when commit is NULL */
  CatFile cf;
  bool started;
  TreeDir *v; /* sorted by dir */
  size_t n, cap;
} TreePolicies;

static void tree_policies_clear(TreePolicies *tp) {
  if (tp->started) {
    catfile_end(&tp->cf);
  }
  for (size_t i = 0; i < tp->n; i++) {
    TreeDir *d = &tp->v[i];
    free(d->dir);
    free(d->tree);
    policy_free(d->policy);
    matcher_free(d->m);
    free(d->file);
    free(d->path);
    free(d->error);
  }
  free(tp->v);
  tp->v = NULL;
  tp->n = tp->cap = 0;
}

/* Whether `dir` is known; *at: its place, or where it goes. */
static bool tree_dir_find(const TreePolicies *tp, const char *dir, size_t *at) {
  size_t lo = 0, hi = tp->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(tp->v[mid].dir, dir);
    if (c == 0) {
      *at = mid;
      return true;
    }
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *at = lo;
  return false;
}

/* An object of the tree's repository, of type `want`: 1, 0 when there is
 * none (or it is something else), -1 with `err`. */
static int tree_object(TreePolicies *tp, const char *name, const char *want, char **ret,
                       size_t *ret_len, size_t *ret_raw, Error *err) {
  if (!tp->started) {
    if (catfile_start(tp->git_dir, &tp->cf, err) < 0) {
      return -1;
    }
    tp->started = true;
  }
  char type[16], oid[GIT_HEX_MAX + 1];
  int r = catfile_get(&tp->cf, name, type, oid, ret, ret_len, err);
  if (r <= 0) {
    return r;
  }
  if (!streq(type, want)) {
    free(*ret);
    *ret = NULL;
    return 0;
  }
  if (ret_raw != NULL) {
    *ret_raw = strlen(oid) / 2;
  }
  return 1;
}

static int matcher_of(const Policy *p, Matcher **ret, Error *err) {
  return policy_matcher(p, 0, ret, err);
}

/* Parses the text of d's agent.lock; a policy that does not parse is
 * d->error. */
static void tree_dir_parse(TreeDir *d, const char *text, size_t len) {
  Error e = {0};
  if (len > POLICY_MAX_SIZE) {
    error_set(&e, EFBIG, _("%s is larger than %u bytes"), d->file, POLICY_MAX_SIZE);
  } else if (policy_parse_flags(d->file, text, len, 0, &d->policy, &e) == 0) {
    (void)matcher_of(d->policy, &d->m, &e);
  }
  if (e.message != NULL) {
    d->error = steal_pointer(&e.message);
    policy_free(d->policy);
    d->policy = NULL;
  }
  error_clear(&e);
}

/* d's agent.lock in the commit's tree, from d->tree. */
static int tree_dir_policy(TreePolicies *tp, TreeDir *d, Error *err) {
  unsigned mode = 0;
  char oid[GIT_HEX_MAX + 1];
  if (!tree_entry(d->tree, d->tree_len, d->raw, POLICY_FILE_NAME, &mode, oid)) {
    return 0;
  }
  d->path = d->dir[0] ? xasprintf("%s/%s", d->dir, POLICY_FILE_NAME) : xstrdup(POLICY_FILE_NAME);
  d->file = xasprintf("%s:%s", tp->rev_shown, d->path);
  if (mode != 0100644 && mode != 0100755) {
    /* A symbolic link (it may lead out of the tree), a directory, a
     * gitlink: on disk every command would refuse it too. */
    d->error = xasprintf(_("%s is not a regular file in that commit, so it protects nothing "
                           "there: refusing to judge the range by it"),
                         d->file);
    return 0;
  }
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  int r = tree_object(tp, oid, "blob", &text, &len, NULL, err);
  if (r < 0) {
    return -1;
  }
  if (r == 0) {
    return error_set(err, EIO, _("cannot read %s"), d->file);
  }
  tree_dir_parse(d, text, len);
  return 0;
}

/* d's agent.lock in the working tree: as every command finds one on disk
 * (policy_check_file: anything there but a regular file is an error). */
static void disk_dir_policy(const TreePolicies *tp, TreeDir *d) {
  _cleanup_free_ char *dir = path_join(tp->top, d->dir[0] ? d->dir : ".");
  _cleanup_free_ char *file = path_join(dir, POLICY_FILE_NAME);
  _cleanup_free_ char *norm = path_normalize(file);
  Error e = {0};
  int r = policy_check_file(norm, &e);
  if (r == -ENOENT || r == -ENOTDIR) {
    error_clear(&e);
    return;
  }
  d->path = d->dir[0] ? xasprintf("%s/%s", d->dir, POLICY_FILE_NAME) : xstrdup(POLICY_FILE_NAME);
  d->file = steal_pointer(&norm);
  if (r == 0 && policy_load_flags(d->file, 0, &d->policy, &e) == 0) {
    (void)matcher_of(d->policy, &d->m, &e);
  }
  if (e.message != NULL) {
    d->error = steal_pointer(&e.message);
    policy_free(d->policy);
    d->policy = NULL;
  }
  error_clear(&e);
}

/* The directory `dir` ("" for the top, else "a/b") with its agent.lock,
 * read the first time it is asked for; NULL with `err` when git fails. The
 * pointer holds until the next call. */
static const TreeDir *tree_dir(TreePolicies *tp, const char *dir, Error *err) {
  size_t at;
  if (tree_dir_find(tp, dir, &at)) {
    return &tp->v[at];
  }
  TreeDir d = {.dir = xstrdup(dir)};
  int r = 0;
  if (tp->commit == NULL) {
    disk_dir_policy(tp, &d);
  } else if (dir[0] == '\0') {
    _cleanup_free_ char *name = xasprintf("%s^{tree}", tp->commit);
    r = tree_object(tp, name, "tree", &d.tree, &d.tree_len, &d.raw, err);
    if (r == 0) {
      r = error_set(err, EIO, _("cannot list the tree of %s"), tp->rev_shown);
    }
  } else {
    const char *slash = strrchr(dir, '/');
    _cleanup_free_ char *up = slash ? xstrndup(dir, (size_t)(slash - dir)) : xstrdup("");
    const TreeDir *parent = tree_dir(tp, up, err);
    unsigned mode = 0;
    char oid[GIT_HEX_MAX + 1];
    if (parent == NULL) {
      r = -1;
    } else if (parent->tree != NULL &&
               tree_entry(parent->tree, parent->tree_len, parent->raw, slash ? slash + 1 : dir,
                          &mode, oid) &&
               mode == 040000) {
      r = tree_object(tp, oid, "tree", &d.tree, &d.tree_len, &d.raw, err);
      if (r == 0) {
        r = error_set(err, EIO, _("cannot list the tree of %s"), tp->rev_shown);
      }
    }
  }
  if (r >= 0 && d.tree != NULL) {
    r = tree_dir_policy(tp, &d, err);
  }
  if (r < 0) {
    free(d.dir);
    free(d.tree);
    policy_free(d.policy);
    matcher_free(d.m);
    free(d.file);
    free(d.path);
    free(d.error);
    return NULL;
  }
  (void)tree_dir_find(tp, dir, &at); /* the parent went in meanwhile */
  (void)grow_array(&tp->v, &tp->n, &tp->cap, sizeof(TreeDir));
  memmove(&tp->v[at + 1], &tp->v[at], (tp->n - 1 - at) * sizeof(TreeDir));
  tp->v[at] = d;
  return &tp->v[at];
}

/* Judges `path` (from the top of the repository) as the working-tree
 * commands do, by every agent.lock of the tree at or above it, each with
 * its patterns relative to its own directory: 1 when one protects it (the
 * nearest that does: *ret_dir, *ret_pattern), 0 when none does, -1 with
 * `err` when git fails or an agent.lock on the way cannot be judged by.
 * Not only the nearest: an agent.lock in a subdirectory does not hide
 * what one above it protects there, as `ralon hook check` decides.
 * *governed: whether any agent.lock is on the way. */
static int tree_judge(TreePolicies *tp, const char *path, const TreeDir **ret_dir,
                      long *ret_pattern, bool *governed, Error *err) {
  const char *slash = strrchr(path, '/');
  _cleanup_free_ char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup("");
  for (;;) {
    const TreeDir *d = tree_dir(tp, dir, err);
    if (d == NULL) {
      return -1;
    }
    if (d->error != NULL) {
      return error_set(err, EINVAL, "%s", d->error);
    }
    if (d->policy != NULL) {
      *governed = true;
      long pat = matcher_match(d->m, path + (dir[0] ? strlen(dir) + 1 : 0));
      if (pat >= 0) {
        *ret_dir = d;
        *ret_pattern = pat;
        return 1;
      }
    }
    if (dir[0] == '\0') {
      return 0;
    }
    char *s = strrchr(dir, '/');
    if (s != NULL) {
      *s = '\0';
    } else {
      dir[0] = '\0';
    }
  }
}

/* The agent.lock nearest to `prefix` ("" or "DIR/", the working
 * directory's place in the repository), or NULL: what the changes were
 * judged by before nested policies counted, kept for the JSON form. */
static char *nearest_policy_file(TreePolicies *tp, const char *prefix) {
  _cleanup_free_ char *dir = xstrdup(prefix);
  for (;;) {
    size_t len = strlen(dir);
    while (len > 0 && dir[len - 1] == '/') {
      dir[--len] = '\0';
    }
    Error e = {0};
    const TreeDir *d = tree_dir(tp, dir, &e);
    error_clear(&e);
    if (d != NULL && d->file != NULL) {
      return xstrdup(d->file);
    }
    if (len == 0) {
      return NULL;
    }
    char *s = strrchr(dir, '/');
    if (s != NULL) {
      *s = '\0';
    } else {
      dir[0] = '\0';
    }
  }
}

/* Every agent.lock that was read, in path order, for the JSON form. */
static void list_policies(const TreePolicies *tp, GitChanges *c) {
  size_t cap = 0;
  for (size_t i = 0; i < tp->n; i++) {
    if (tp->v[i].file != NULL) {
      *(char **)grow_array(&c->policies, &c->n_policies, &cap, sizeof(char *)) =
          xstrdup(tp->v[i].file);
    }
  }
}

/* A commit's full name, or NULL when `rev` names none. */
static char *resolve_commit(const char *dir, const char *rev) {
  if (rev[0] == '\0' || rev[0] == '-') {
    return NULL;
  }
  _cleanup_free_ char *spec = xasprintf("%s^{commit}", rev);
  const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL};
  char *hex = git_line(dir, GIT_RUN_KEEP_ENV, args);
  if (hex != NULL && hex[0] == '\0') {
    free(hex);
    return NULL;
  }
  return hex;
}

/* Whether `dir` is in a git repository at all (bare or not); its prefix
 * there in *prefix ("" at the top, and in a bare repository). */
static int repository_prefix(const char *dir, char **prefix, Error *err) {
  static const char *const args[] = {"rev-parse", "--show-prefix", NULL};
  Error e = {0};
  char *out = NULL;
  int r = git_run(dir, GIT_RUN_KEEP_ENV, args, &out, NULL, &e);
  if (r < 0) {
    *err = e;
    return -1;
  }
  if (r != 0) {
    free(out);
    return error_set(err, ENOENT, _("%s is not in a git repository"), dir ? dir : ".");
  }
  out[strcspn(out, "\n")] = '\0';
  *prefix = out;
  return 0;
}

/* What one judgement needs: where the changes go, the policies, the
 * commit being looked at, and the first error. */
typedef struct {
  GitChanges *c;
  TreePolicies *tp;
  const char *commit;
  Error *err;
  int r;
} RawCtx;

/* One changed path, if an agent.lock of the base protects it. */
static void change_found(RawCtx *x, const char *path, const char *commit, const char *change) {
  if (x->r < 0) {
    return;
  }
  const TreeDir *d = NULL;
  long pat = -1;
  bool governed = false;
  int r = tree_judge(x->tp, path, &d, &pat, &governed, x->err);
  x->c->n_judged++;
  x->c->n_governed += governed;
  x->c->touches_policy |= streq(path_basename(path), POLICY_FILE_NAME);
  if (r < 0) {
    x->r = -1;
  }
  if (r <= 0) {
    return;
  }
  GitChange *g = grow_array(&x->c->v, &x->c->n, &x->c->cap, sizeof(GitChange));
  *g = (GitChange){.path = xstrdup(path),
                   .commit = commit ? xstrdup(commit) : NULL,
                   .change = change,
                   .pattern = xstrdup(d->policy->patterns[pat].pattern),
                   .policy = xstrdup(d->file),
                   .policy_path = xstrdup(d->path)};
}

/* The records of `git diff-tree --raw -z` (or diff-index): for each, its
 * status letter and the paths it names, handed to `each`. */
typedef void (*RawEach)(void *userdata, char status, bool mode_changed, const char *a,
                        const char *b);

static void raw_records(char *out, size_t len, RawEach each, void *userdata) {
  char *p = out, *end = out + len;
  while (p < end && *p == ':') {
    /* :OLDMODE NEWMODE OLDOID NEWOID STATUS[SCORE]\0PATH\0[PATH\0] */
    const char *meta = p + 1;
    p += strlen(p) + 1;
    /* Its five fields, split at single spaces (sscanf cost thousands of
     * instructions a record). */
    const char *field[5];
    size_t flen[5], n_fields = 0;
    for (const char *f = meta; n_fields < 5;) {
      size_t l = strcspn(f, " ");
      field[n_fields] = f;
      flen[n_fields++] = l;
      if (f[l] != ' ') {
        break;
      }
      f += l + 1;
    }
    if (n_fields != 5 || flen[0] == 0 || flen[1] == 0 || flen[4] == 0 || p >= end) {
      return;
    }
    char status = field[4][0];
    bool mode_changed = flen[0] != flen[1] || memcmp(field[0], field[1], flen[0]) != 0;
    const char *a = p;
    p += strlen(p) + 1;
    const char *b = NULL;
    if (status == 'R' || status == 'C') {
      if (p >= end) {
        return;
      }
      b = p;
      p += strlen(p) + 1;
    }
    each(userdata, status, mode_changed, a, b);
  }
}

static void raw_change(void *userdata, char status, bool mode_changed, const char *a,
                       const char *b) {
  RawCtx *x = userdata;
  switch (status) {
  case 'A':
    change_found(x, a, x->commit, "added");
    break;
  case 'D':
    change_found(x, a, x->commit, "deleted");
    break;
  case 'T':
    change_found(x, a, x->commit, "type");
    break;
  case 'R':
    change_found(x, a, x->commit, "renamed-from");
    change_found(x, b, x->commit, "renamed-to");
    break;
  case 'C':
    change_found(x, b, x->commit, "added");
    break;
  default: /* M, U, X */
    change_found(x, a, x->commit, mode_changed ? "mode" : "modified");
    break;
  }
}

typedef struct {
  char **v;
  size_t n, cap;
} PathSet;

static void raw_collect(void *userdata, char status, bool mode_changed, const char *a,
                        const char *b) {
  (void)status;
  (void)mode_changed;
  PathSet *s = userdata;
  *(char **)grow_array(&s->v, &s->n, &s->cap, sizeof(char *)) = xstrdup(a);
  if (b != NULL) {
    *(char **)grow_array(&s->v, &s->n, &s->cap, sizeof(char *)) = xstrdup(b);
  }
}

static bool set_has(const PathSet *s, const char *p) {
  return bsearch(&p, s->v, s->n, sizeof(char *), strings_compare) != NULL;
}

/* One answer of `git diff-tree --stdin --always`: the records that one
 * line of its input gave (a pointer into the whole output). */
typedef struct {
  char *v;
  size_t len;
} DiffAnswer;

/* Splits the output of `git diff-tree --stdin --always -z`: each line of
 * input gives a header (the commit's id, NUL-terminated) and the records
 * that follow it up to the next. `expect`: the header each answer must
 * have, in order (`n` of them). false when the output does not have
 * exactly those. */
static bool diff_answers(char *out, size_t len, const char *const *expect, size_t n,
                         DiffAnswer *ret) {
  char *p = out, *end = out + len;
  for (size_t i = 0; i < n; i++) {
    if (p >= end || *p == ':' || !streq(p, expect[i])) {
      return false;
    }
    p += strlen(p) + 1;
    ret[i].v = p;
    while (p < end && *p == ':') {
      /* :OLDMODE NEWMODE OLDOID NEWOID STATUS[SCORE]\0PATH\0[PATH\0] */
      const char *status = strrchr(p, ' ');
      bool two = status != NULL && (status[1] == 'R' || status[1] == 'C');
      p += strlen(p) + 1;
      for (int k = 0; k < 1 + two && p < end; k++) {
        p += strlen(p) + 1;
      }
    }
    ret[i].len = (size_t)(p - ret[i].v);
  }
  return p >= end;
}

/* A merge: the paths whose content differs from every parent's (what the
 * merge itself wrote, not what it brought from one side); `diffs`: the
 * merge against each parent. */
static int merge_changes(RawCtx *x, const char *commit, const DiffAnswer *diffs,
                         size_t n_parents) {
  PathSet *sets = xcalloc(n_parents, sizeof(PathSet));
  for (size_t i = 0; i < n_parents; i++) {
    raw_records(diffs[i].v, diffs[i].len, raw_collect, &sets[i]);
    if (sets[i].n > 1) {
      qsort(sets[i].v, sets[i].n, sizeof(char *), strings_compare);
    }
  }
  for (size_t k = 0; x->r == 0 && k < sets[0].n; k++) {
    bool everywhere = true;
    for (size_t i = 1; i < n_parents && everywhere; i++) {
      everywhere = set_has(&sets[i], sets[0].v[k]);
    }
    if (everywhere && (k == 0 || !streq(sets[0].v[k], sets[0].v[k - 1]))) {
      change_found(x, sets[0].v[k], commit, "merge");
    }
  }
  for (size_t i = 0; i < n_parents; i++) {
    strings_free(sets[i].v, sets[i].n);
  }
  free(sets);
  return x->r;
}

typedef struct {
  RawCtx *x;
  const char *tip;
  PathSet seen; /* sorted: what the commits were found to change */
} NetCtx;

static void net_change(void *userdata, char status, bool mode_changed, const char *a,
                       const char *b) {
  (void)status;
  (void)mode_changed;
  (void)b; /* --no-renames: one path a record */
  NetCtx *n = userdata;
  if (!set_has(&n->seen, a)) {
    change_found(n->x, a, n->tip, "net");
  }
}

/* What the range does as a whole, A's tree against B's (`diff`): a
 * protected path that differs although no commit of the range was found
 * changing it. A merge may take a parent's older version of a file (a
 * parent A already has, outside the range, so that the merge differs from
 * none of its own parents where it matters), and B need not descend from
 * A at all (a push that rewinds a branch): each commit alone changes
 * nothing there, yet the branch's file goes back. */
static int net_changes(RawCtx *x, const char *b, const DiffAnswer *diff) {
  NetCtx n = {x, b, {0}};
  for (size_t i = 0; i < x->c->n; i++) {
    *(char **)grow_array(&n.seen.v, &n.seen.n, &n.seen.cap, sizeof(char *)) =
        xstrdup(x->c->v[i].path);
  }
  if (n.seen.n > 1) {
    qsort(n.seen.v, n.seen.n, sizeof(char *), strings_compare);
  }
  raw_records(diff->v, diff->len, net_change, &n);
  strings_free(n.seen.v, n.seen.n);
  return x->r;
}

/* The end of a range or staged check: on success, the policy nearest the
 * working directory and every policy read; on failure, nothing. */
static int changes_finish(RawCtx *x, const char *prefix) {
  if (x->r == 0) {
    x->c->policy_file = nearest_policy_file(x->tp, prefix);
    list_policies(x->tp, x->c);
  }
  tree_policies_clear(x->tp);
  if (x->r < 0) {
    git_changes_clear(x->c);
  }
  return x->r;
}

static bool is_object_id(const char *s, size_t len) {
  if (len != 40 && len != 64) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
      return false;
    }
  }
  return true;
}

/* The working directory's prefix in the repository and the commits `a`
 * and `b` name, in one `git rev-parse`: false when that does not answer
 * plainly (a name it does not know, no repository, git missing), and the
 * caller asks one question at a time, for the error that names what is
 * wrong. */
static bool resolve_at_once(const char *dir, const char *a, const char *b, char **prefix,
                            char **ret_a, char **ret_b) {
  if (a[0] == '\0' || a[0] == '-' || b[0] == '\0' || b[0] == '-') {
    return false;
  }
  _cleanup_free_ char *a_spec = xasprintf("%s^{commit}", a);
  _cleanup_free_ char *b_spec = xasprintf("%s^{commit}", b);
  const char *args[] = {"rev-parse", "--show-prefix", a_spec, b_spec, NULL};
  _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, args, NULL);
  if (out == NULL) {
    return false;
  }
  char *line[3];
  char *p = out;
  for (size_t i = 0; i < 3; i++) {
    char *nl = strchr(p, '\n');
    if (nl == NULL) {
      return false;
    }
    *nl = '\0';
    line[i] = p;
    p = nl + 1;
  }
  if (*p != '\0' || !is_object_id(line[1], strlen(line[1])) ||
      !is_object_id(line[2], strlen(line[2]))) {
    return false;
  }
  *prefix = xstrdup(line[0]);
  *ret_a = xstrdup(line[1]);
  *ret_b = xstrdup(line[2]);
  return true;
}

int git_range_changes(const char *dir, const char *range, GitChanges *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  _cleanup_free_ char *prefix = NULL;
  const char *dots = strstr(range, "..");
  bool dots3 = dots != NULL && dots[2] == '.';
  _cleanup_free_ char *a_name = dots ? xstrndup(range, (size_t)(dots - range)) : xstrdup(range);
  _cleanup_free_ char *b_name = dots && dots[2] != '\0' ? xstrdup(dots + 2) : xstrdup("HEAD");
  _cleanup_free_ char *a = NULL, *b = NULL;
  if (dots3 || !resolve_at_once(dir, a_name, b_name, &prefix, &a, &b)) {
    /* One question at a time, each failure named, in this order. */
    if (repository_prefix(dir, &prefix, err) < 0) {
      return -1;
    }
    if (dots3) {
      return error_set(err, EINVAL,
                       _("--range takes A..B (the commits B has and A has not), not `%s`"), range);
    }
    a = resolve_commit(dir, a_name);
    if (a == NULL) {
      return error_set(err, ENOENT, _("unknown revision `%s`: it names no commit here"), a_name);
    }
    b = resolve_commit(dir, b_name);
    if (b == NULL) {
      return error_set(err, ENOENT, _("unknown revision `%s`: it names no commit here"), b_name);
    }
  }
  ret->base = xstrdup(a);
  ret->base_name = xstrdup(a_name);
  _cleanup_free_ char *not_a = xasprintf("^%s", a);
  const char *args[] = {"rev-list", "--reverse", "--topo-order", "--parents", b, not_a, "--",
                        NULL};
  _cleanup_free_ char *list = git_output(dir, GIT_RUN_KEEP_ENV, args, NULL);
  if (list == NULL) {
    git_changes_clear(ret);
    return error_set(err, EIO, _("cannot list the commits of %s"), range);
  }
  /* The commits, oldest first, each with its parents. */
  typedef struct {
    char *id;
    char **parents;
    size_t n_parents;
  } Commit;
  Commit *commits = NULL;
  size_t n_commits = 0, cap_commits = 0;
  for (char *line = list; *line != '\0';) {
    size_t len = strcspn(line, "\n");
    char *next = line + len + (line[len] == '\n');
    line[len] = '\0';
    char *words[64];
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t != NULL && n < 64; t = strtok_r(NULL, " ", &save)) {
      words[n++] = t;
    }
    line = next;
    if (n > 0) {
      Commit *c = grow_array(&commits, &n_commits, &cap_commits, sizeof(Commit));
      *c = (Commit){words[0], xcalloc(n, sizeof(char *)), n - 1};
      memcpy(c->parents, words + 1, (n - 1) * sizeof(char *));
    }
  }
  ret->n_commits = n_commits;
  /* A chain of commits of one parent each from A to B: every path that
   * differs between A and B is changed by one of them, so A's tree need
   * not be compared with B's. */
  bool chain = true;
  const char *prev = a;
  for (size_t i = 0; i < n_commits && chain; i++) {
    chain = commits[i].n_parents == 1 && streq(commits[i].parents[0], prev);
    prev = commits[i].id;
  }
  chain = chain && streq(prev, b);
  /* Two `git diff-tree --stdin` at most, however many commits: one, with
   * renames found, for each commit of one parent (or none) against it;
   * one, without, for each merge against each of its parents, and for A's
   * tree against B's. Each line of input gives one answer (--always). */
  size_t n_one = 0, n_many = chain ? 0 : 1;
  for (size_t i = 0; i < n_commits; i++) {
    if (commits[i].n_parents > 1) {
      n_many += commits[i].n_parents;
    } else {
      n_one++;
    }
  }
  const char **expect_one = xcalloc(n_one + 1, sizeof(char *));
  const char **expect_many = xcalloc(n_many + 1, sizeof(char *));
  char *in_one = NULL, *in_many = NULL;
  size_t len_one = 0, len_many = 0;
  FILE *f_one = open_memstream(&in_one, &len_one), *f_many = open_memstream(&in_many, &len_many);
  if (f_one == NULL || f_many == NULL) {
    oom();
  }
  size_t k_one = 0, k_many = 0;
  for (size_t i = 0; i < n_commits; i++) {
    const Commit *c = &commits[i];
    if (c->n_parents > 1) {
      for (size_t p = 0; p < c->n_parents; p++) {
        fputs(c->id, f_many);
        fputc(' ', f_many);
        fputs(c->parents[p], f_many);
        fputc('\n', f_many);
        expect_many[k_many++] = c->id;
      }
    } else {
      fputs(c->id, f_one);
      if (c->n_parents == 1) {
        fputc(' ', f_one);
        fputs(c->parents[0], f_one);
      }
      fputc('\n', f_one);
      expect_one[k_one++] = c->id;
    }
  }
  if (!chain) {
    fprintf(f_many, "%s %s\n", b, a); /* B as if its parent were A: A's tree against B's */
    expect_many[k_many++] = b;
  }
  if (fclose(f_one) != 0 || fclose(f_many) != 0) {
    oom();
  }
  static const char *const one_args[] = {"diff-tree", "--stdin", "--always", "-z", "-r",
                                         "--raw", "-M", "--root", NULL};
  static const char *const many_args[] = {"diff-tree", "--stdin", "--always", "-z", "-r",
                                          "--raw", "--no-renames", NULL};
  size_t out_one_len = 0, out_many_len = 0;
  _cleanup_free_ char *out_one =
      n_one > 0 ? git_output_input(dir, GIT_RUN_KEEP_ENV, one_args, in_one, len_one, &out_one_len)
                : xstrdup("");
  _cleanup_free_ char *out_many =
      out_one == NULL ? NULL
      : n_many > 0
          ? git_output_input(dir, GIT_RUN_KEEP_ENV, many_args, in_many, len_many, &out_many_len)
          : xstrdup("");
  DiffAnswer *one = xcalloc(n_one + 1, sizeof(DiffAnswer));
  DiffAnswer *many = xcalloc(n_many + 1, sizeof(DiffAnswer));
  TreePolicies tp = {.git_dir = dir, .commit = a, .rev_shown = a_name};
  RawCtx x = {ret, &tp, NULL, err, 0};
  if (out_one == NULL || out_many == NULL ||
      !diff_answers(out_one, out_one_len, expect_one, n_one, one) ||
      !diff_answers(out_many, out_many_len, expect_many, n_many, many)) {
    x.r = error_set(err, EIO, _("cannot list what %s changed"), range);
  }
  k_one = k_many = 0;
  for (size_t i = 0; x.r == 0 && i < n_commits; i++) {
    const Commit *c = &commits[i];
    if (c->n_parents > 1) {
      (void)merge_changes(&x, c->id, many + k_many, c->n_parents);
      k_many += c->n_parents;
    } else {
      x.commit = c->id;
      raw_records(one[k_one].v, one[k_one].len, raw_change, &x);
      k_one++;
    }
  }
  if (x.r == 0 && !chain) {
    (void)net_changes(&x, b, &many[k_many]);
  }
  for (size_t i = 0; i < n_commits; i++) {
    free(commits[i].parents);
  }
  free(commits);
  free(expect_one);
  free(expect_many);
  free(in_one);
  free(in_many);
  free(one);
  free(many);
  return changes_finish(&x, prefix);
}

int git_staged_changes(const char *dir, GitChanges *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  _cleanup_free_ char *prefix = NULL;
  if (repository_prefix(dir, &prefix, err) < 0) {
    return -1;
  }
  _cleanup_free_ char *head = resolve_commit(dir, "HEAD");
  _cleanup_free_ char *tree = NULL, *top = NULL;
  if (head == NULL) {
    /* Before the first commit: the policies on disk, against an empty
     * tree. */
    static const char *const targs[] = {"hash-object", "-t", "tree", "--stdin", NULL};
    static const char *const top_args[] = {"rev-parse", "--show-toplevel", NULL};
    tree = git_line(dir, GIT_RUN_KEEP_ENV, targs);
    top = git_line(dir, GIT_RUN_KEEP_ENV, top_args);
    if (tree == NULL || top == NULL || top[0] != '/') {
      return error_set(err, EIO, _("cannot read the repository at %s"), dir ? dir : ".");
    }
  } else {
    ret->base = xstrdup(head);
  }
  ret->base_name = xstrdup("HEAD");
  const char *args[] = {"diff-index", "--cached", "-z", "-r", "--raw", "-M",
                        head ? head : tree, "--", NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, args, &len);
  if (out == NULL) {
    git_changes_clear(ret);
    return error_set(err, EIO, _("cannot list the staged changes"));
  }
  TreePolicies tp = {.git_dir = dir, .commit = head, .rev_shown = "HEAD", .top = top};
  RawCtx x = {ret, &tp, NULL, err, 0};
  raw_records(out, len, raw_change, &x);
  return changes_finish(&x, prefix);
}
