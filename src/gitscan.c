/* SPDX-License-Identifier: Apache-2.0 */
#include "gitscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
                                    int out) {
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0 ||
      dup2(out >= 0 ? out : null, STDOUT_FILENO) < 0) {
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

int git_run(const char *dir, unsigned flags, const char *const *args, char **ret_out,
            size_t *ret_len, Error *err) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    return error_set(err, errno, _("cannot run git: %m"));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    return error_set(err, e, _("cannot run git: %m"));
  }
  if (pid == 0) {
    git_child(dir, flags, args, p[1]);
  }
  close(p[1]);
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
      "sendemail.sendmailcmd", "help.browser", "instaweb.httpd",
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
  if (streq(key, "sendemail.smtpserver")) {
    return value != NULL && value[0] == '/'; /* a program instead of a host */
  }
  /* Remote helpers that run a command: `ext::` URLs, once let in. */
  if (startswith(key, "protocol.") && key_is(key, "protocol", "allow")) {
    return value != NULL && streq(value, "always") && streq(key, "protocol.ext.allow");
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
    _cleanup_free_ char *v_shown = text_display(e->value ? e->value : "");
    add(s->out, AUDIT_GIT_COMMAND, display(s, file),
        xasprintf(_("sets `%s = %s`%s: git runs that command outside any sandbox at your next "
                    "git command, and agent.lock does not protect this file (remove the setting "
                    "if you did not make it, and protect the file in agent.lock)"),
                  e->key, v_shown, where));
  }
  free(v);
}

/* The project's own configuration, includes followed, as git reads it.
 * The git directory is given by its absolute name, so that git names each
 * file it reads absolutely too (found on its own, it names them relative
 * to the top of the working tree, which need not be the project root). */
static void audit_project_config(const Scan *s, const char *root, const char *git_dir) {
  const char *args[] = {"--git-dir", git_dir, "config", "--list", "-z", "--includes",
                        "--show-origin", "--show-scope", NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(root, 0, args, &len);
  if (out != NULL) {
    audit_config_listing(s, out, len, true, root, "");
  }
}

/* A nested repository's configuration file (and what it includes). */
static void audit_file_config(const Scan *s, const char *config, const char *where) {
  struct stat st;
  if (lstat(config, &st) < 0 || !S_ISREG(st.st_mode)) {
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
 * objects/ and refs/. */
static bool looks_like_git_dir(int dfd) {
  struct stat st;
  return fstatat(dfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && is_dir_at(dfd, "objects") &&
         is_dir_at(dfd, "refs");
}

static void walk_dir(Walk *w, int dfd, const char *rel, unsigned depth) {
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    return;
  }
  size_t n = 0;
  char **names = dir_names_sorted(d, &w->budget, &w->cut, &n);
  for (size_t i = 0; i < n; i++) {
    const char *name = names[i];
    _cleanup_free_ char *child = rel[0] ? xasprintf("%s/%s", rel, name) : xstrdup(name);
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      continue;
    }
    if (streq(name, ".git")) {
      if (rel[0] != '\0' && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
        *(Nested *)grow_array(&w->v, &w->n, &w->cap, sizeof(Nested)) =
            (Nested){xstrdup(child), false};
      }
      continue; /* neither the project's own nor a nested one is walked */
    }
    if (!S_ISDIR(st.st_mode) || matcher_match(w->s->m, child) >= 0) {
      continue; /* what the policy protects, an agent cannot have planted */
    }
    int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      continue;
    }
    if (looks_like_git_dir(sub)) {
      *(Nested *)grow_array(&w->v, &w->n, &w->cap, sizeof(Nested)) =
          (Nested){xstrdup(child), true};
      close(sub);
      continue;
    }
    if (depth + 1 >= NESTED_WALK_MAX_DEPTH) {
      close(sub);
      w->cut = true;
      continue;
    }
    walk_dir(w, sub, child, depth + 1);
  }
  strings_free(names, n);
  closedir(d);
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

static void audit_nested(const Scan *s, const char *root, const char *git_dir) {
  Walk w = {.s = s, .budget = NESTED_WALK_MAX_ENTRIES};
  int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    walk_dir(&w, fd, "", 0);
  }
  /* The index only matters for a repository found: one git less
   * otherwise, which is the common case. */
  size_t n_links = 0;
  char **links = w.n > 0 ? index_gitlinks(root, &n_links) : NULL;
  size_t reported = 0, more = 0;
  for (size_t i = 0; i < w.n; i++) {
    const Nested *nd = &w.v[i];
    _cleanup_free_ char *abs = path_join(root, nd->rel);
    _cleanup_free_ char *gd = nd->bare ? xstrdup(abs) : nested_git_dir(abs);
    _cleanup_free_ char *canon_gd = gd != NULL ? path_resolve(gd) : NULL;
    /* A submodule whose git directory is the project's .git/modules/NAME:
     * the audit of .git covers it. */
    if (canon_gd != NULL && git_dir != NULL && path_relative(git_dir, canon_gd) != NULL) {
      continue;
    }
    _cleanup_free_ char *config = canon_gd ? path_join(canon_gd, "config") : NULL;
    _cleanup_free_ char *hooks = canon_gd ? path_join(canon_gd, "hooks") : NULL;
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
  }
  free(c->v);
  free(c->policy_file);
  free(c->base);
  memset(c, 0, sizeof(*c));
}

/* The policy the changes are judged by, and where its root is in the
 * repository ("" or "DIR/"). */
typedef struct {
  Policy *policy;
  Matcher *m;
  char *prefix;
} RangePolicy;

static void range_policy_clear(RangePolicy *rp) {
  policy_free(rp->policy);
  matcher_free(rp->m);
  free(rp->prefix);
  memset(rp, 0, sizeof(*rp));
}

static int range_matcher(RangePolicy *rp, Error *err) {
  const char **pats = xcalloc(rp->policy->n_patterns, sizeof(char *));
  for (size_t i = 0; i < rp->policy->n_patterns; i++) {
    pats[i] = rp->policy->patterns[i].pattern;
  }
  int r = matcher_new(pats, rp->policy->n_patterns, 0, &rp->m, err);
  free(pats);
  return r;
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
  static const char *const args[] = {"rev-parse", "--git-dir", NULL};
  Error e = {0};
  int r = git_run(dir, GIT_RUN_KEEP_ENV, args, NULL, NULL, &e);
  if (r < 0) {
    *err = e;
    return -1;
  }
  if (r != 0) {
    return error_set(err, ENOENT, _("%s is not in a git repository"), dir ? dir : ".");
  }
  static const char *const pargs[] = {"rev-parse", "--show-prefix", NULL};
  char *p = git_line(dir, GIT_RUN_KEEP_ENV, pargs);
  *prefix = p != NULL ? p : xstrdup("");
  return 0;
}

/* The agent.lock nearest to `prefix` in the tree of `commit`: prefix's own
 * directory first, then each one above it, as on disk. */
static int policy_at(const char *dir, const char *commit, const char *rev_shown,
                     const char *prefix, RangePolicy *rp, char **ret_file, Error *err) {
  _cleanup_free_ char *d = xstrdup(prefix);
  for (;;) {
    size_t len = strlen(d);
    while (len > 0 && d[len - 1] == '/') {
      d[--len] = '\0';
    }
    _cleanup_free_ char *path = len > 0 ? xasprintf("%s/%s", d, POLICY_FILE_NAME)
                                        : xstrdup(POLICY_FILE_NAME);
    const char *args[] = {"ls-tree", "-z", "--full-tree", commit, "--", path, NULL};
    _cleanup_free_ char *entry = git_output(dir, GIT_RUN_KEEP_ENV, args, NULL);
    if (entry == NULL) {
      return error_set(err, EIO, _("cannot list the tree of %s"), rev_shown);
    }
    if (entry[0] != '\0') {
      _cleanup_free_ char *shown = xasprintf("%s:%s", rev_shown, path);
      /* MODE TYPE OBJECT\tPATH */
      if (!startswith(entry, "100644 blob ") && !startswith(entry, "100755 blob ")) {
        return error_set(err, EINVAL,
                         _("%s is not a regular file in that commit, so it protects nothing "
                           "there: refusing to judge the range by it"),
                         shown);
      }
      char *oid = entry + strlen("100644 blob ");
      oid[strcspn(oid, "\t")] = '\0';
      const char *cargs[] = {"cat-file", "blob", oid, NULL};
      size_t tlen = 0;
      _cleanup_free_ char *text = git_output(dir, GIT_RUN_KEEP_ENV, cargs, &tlen);
      if (text == NULL) {
        return error_set(err, EIO, _("cannot read %s"), shown);
      }
      if (tlen > POLICY_MAX_SIZE) {
        return error_set(err, EFBIG, _("%s is larger than %u bytes"), shown, POLICY_MAX_SIZE);
      }
      if (policy_parse(shown, text, tlen, &rp->policy, err) < 0 || range_matcher(rp, err) < 0) {
        return -1;
      }
      rp->prefix = len > 0 ? xasprintf("%s/", d) : xstrdup("");
      *ret_file = steal_pointer(&shown);
      return 0;
    }
    if (len == 0) {
      break;
    }
    char *slash = strrchr(d, '/');
    if (slash != NULL) {
      *slash = '\0';
    } else {
      d[0] = '\0';
    }
  }
  return error_set(err, ENOENT, _("no %s in %s (nor in a directory above %s there)"),
                   POLICY_FILE_NAME, rev_shown, prefix[0] ? prefix : ".");
}

/* One changed path, if the policy protects it. */
static void change_found(GitChanges *c, const RangePolicy *rp, const char *repo_path,
                         const char *commit, const char *change) {
  if (!startswith(repo_path, rp->prefix)) {
    return;
  }
  const char *rel = repo_path + strlen(rp->prefix);
  long pat = matcher_match(rp->m, rel);
  if (pat < 0) {
    return;
  }
  GitChange *g = grow_array(&c->v, &c->n, &c->cap, sizeof(GitChange));
  *g = (GitChange){.path = xstrdup(rel),
                   .commit = commit ? xstrdup(commit) : NULL,
                   .change = change,
                   .pattern = xstrdup(rp->policy->patterns[pat].pattern)};
}

/* The records of `git diff-tree --raw -z` (or diff-index): for each, its
 * status letter and the paths it names, handed to `each`. */
typedef void (*RawEach)(void *userdata, char status, bool mode_changed, const char *a,
                        const char *b);

static void raw_records(char *out, size_t len, RawEach each, void *userdata) {
  char *p = out, *end = out + len;
  while (p < end && *p == ':') {
    /* :OLDMODE NEWMODE OLDOID NEWOID STATUS[SCORE]\0PATH\0[PATH\0] */
    char *meta = p;
    p += strlen(p) + 1;
    char old_mode[8] = "", new_mode[8] = "", status[16] = "";
    if (sscanf(meta, ":%7s %7s %*s %*s %15s", old_mode, new_mode, status) != 3 || p >= end) {
      return;
    }
    const char *a = p;
    p += strlen(p) + 1;
    const char *b = NULL;
    if (status[0] == 'R' || status[0] == 'C') {
      if (p >= end) {
        return;
      }
      b = p;
      p += strlen(p) + 1;
    }
    each(userdata, status[0], !streq(old_mode, new_mode), a, b);
  }
}

typedef struct {
  GitChanges *c;
  const RangePolicy *rp;
  const char *commit;
} RawCtx;

static void raw_change(void *userdata, char status, bool mode_changed, const char *a,
                       const char *b) {
  RawCtx *x = userdata;
  switch (status) {
  case 'A':
    change_found(x->c, x->rp, a, x->commit, "added");
    break;
  case 'D':
    change_found(x->c, x->rp, a, x->commit, "deleted");
    break;
  case 'T':
    change_found(x->c, x->rp, a, x->commit, "type");
    break;
  case 'R':
    change_found(x->c, x->rp, a, x->commit, "renamed-from");
    change_found(x->c, x->rp, b, x->commit, "renamed-to");
    break;
  case 'C':
    change_found(x->c, x->rp, b, x->commit, "added");
    break;
  default: /* M, U, X */
    change_found(x->c, x->rp, a, x->commit, mode_changed ? "mode" : "modified");
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

/* A merge: the paths whose content differs from every parent's (what the
 * merge itself wrote, not what it brought from one side). */
static int merge_changes(const char *dir, const RangePolicy *rp, const char *commit,
                         char **parents, size_t n_parents, GitChanges *c, Error *err) {
  PathSet *sets = xcalloc(n_parents, sizeof(PathSet));
  int r = 0;
  for (size_t i = 0; i < n_parents && r == 0; i++) {
    const char *args[] = {"diff-tree", "-z", "-r", "--raw", "--no-renames", "--no-commit-id",
                          parents[i], commit, NULL};
    size_t len = 0;
    _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, args, &len);
    if (out == NULL) {
      r = error_set(err, EIO, _("cannot compare %s with its parent %s"), commit, parents[i]);
      break;
    }
    raw_records(out, len, raw_collect, &sets[i]);
    if (sets[i].n > 1) {
      qsort(sets[i].v, sets[i].n, sizeof(char *), strings_compare);
    }
  }
  for (size_t k = 0; r == 0 && k < sets[0].n; k++) {
    bool everywhere = true;
    for (size_t i = 1; i < n_parents && everywhere; i++) {
      everywhere = set_has(&sets[i], sets[0].v[k]);
    }
    if (everywhere && (k == 0 || !streq(sets[0].v[k], sets[0].v[k - 1]))) {
      change_found(c, rp, sets[0].v[k], commit, "merge");
    }
  }
  for (size_t i = 0; i < n_parents; i++) {
    strings_free(sets[i].v, sets[i].n);
  }
  free(sets);
  return r;
}

typedef struct {
  GitChanges *c;
  const RangePolicy *rp;
  const char *tip;
  PathSet seen; /* sorted: what the commits were found to change */
} NetCtx;

static void net_change(void *userdata, char status, bool mode_changed, const char *a,
                       const char *b) {
  (void)status;
  (void)mode_changed;
  (void)b; /* --no-renames: one path a record */
  NetCtx *x = userdata;
  if (!set_has(&x->seen, a)) {
    change_found(x->c, x->rp, a, x->tip, "net");
  }
}

/* What the range does as a whole, A's tree against B's: a protected path
 * that differs although no commit of the range was found changing it. A
 * merge may take a parent's older version of a file (a parent A already
 * has, outside the range, so that the merge differs from none of its own
 * parents where it matters), and B need not descend from A at all (a
 * push that rewinds a branch): each commit alone changes nothing there,
 * yet the branch's file goes back. */
static int net_changes(const char *dir, const RangePolicy *rp, const char *a, const char *b,
                       GitChanges *c, Error *err) {
  NetCtx x = {c, rp, b, {0}};
  for (size_t i = 0; i < c->n; i++) {
    *(char **)grow_array(&x.seen.v, &x.seen.n, &x.seen.cap, sizeof(char *)) =
        xasprintf("%s%s", rp->prefix, c->v[i].path);
  }
  if (x.seen.n > 1) {
    qsort(x.seen.v, x.seen.n, sizeof(char *), strings_compare);
  }
  const char *args[] = {"diff-tree", "-z", "-r", "--raw", "--no-renames", "--no-commit-id",
                        a, b, NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, args, &len);
  int r = 0;
  if (out == NULL) {
    r = error_set(err, EIO, _("cannot compare %s with %s"), a, b);
  } else {
    raw_records(out, len, net_change, &x);
  }
  strings_free(x.seen.v, x.seen.n);
  return r;
}

int git_range_changes(const char *dir, const char *range, GitChanges *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  _cleanup_free_ char *prefix = NULL;
  if (repository_prefix(dir, &prefix, err) < 0) {
    return -1;
  }
  const char *dots = strstr(range, "..");
  if (dots != NULL && dots[2] == '.') {
    return error_set(err, EINVAL,
                     _("--range takes A..B (the commits B has and A has not), not `%s`"), range);
  }
  _cleanup_free_ char *a_name = dots ? xstrndup(range, (size_t)(dots - range)) : xstrdup(range);
  _cleanup_free_ char *b_name = dots && dots[2] != '\0' ? xstrdup(dots + 2) : xstrdup("HEAD");
  _cleanup_free_ char *a = resolve_commit(dir, a_name);
  if (a == NULL) {
    return error_set(err, ENOENT, _("unknown revision `%s`: it names no commit here"), a_name);
  }
  _cleanup_free_ char *b = resolve_commit(dir, b_name);
  if (b == NULL) {
    return error_set(err, ENOENT, _("unknown revision `%s`: it names no commit here"), b_name);
  }
  RangePolicy rp = {0};
  if (policy_at(dir, a, a_name, prefix, &rp, &ret->policy_file, err) < 0) {
    range_policy_clear(&rp);
    return -1;
  }
  ret->base = xstrdup(a);
  _cleanup_free_ char *not_a = xasprintf("^%s", a);
  const char *args[] = {"rev-list", "--reverse", "--topo-order", "--parents", b, not_a, "--",
                        NULL};
  _cleanup_free_ char *list = git_output(dir, GIT_RUN_KEEP_ENV, args, NULL);
  if (list == NULL) {
    range_policy_clear(&rp);
    git_changes_clear(ret);
    return error_set(err, EIO, _("cannot list the commits of %s"), range);
  }
  int r = 0;
  for (char *line = list; r == 0 && *line != '\0';) {
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
    if (n == 0) {
      continue;
    }
    ret->n_commits++;
    const char *commit = words[0];
    if (n > 2) {
      r = merge_changes(dir, &rp, commit, words + 1, n - 1, ret, err);
      continue;
    }
    const char *dargs[] = {"diff-tree", "-z", "-r", "--raw", "-M", "--no-commit-id", "--root",
                           n == 2 ? words[1] : commit, n == 2 ? commit : NULL, NULL};
    size_t olen = 0;
    _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, dargs, &olen);
    if (out == NULL) {
      r = error_set(err, EIO, _("cannot list what %s changed"), commit);
      break;
    }
    RawCtx x = {ret, &rp, commit};
    raw_records(out, olen, raw_change, &x);
  }
  if (r == 0) {
    r = net_changes(dir, &rp, a, b, ret, err);
  }
  range_policy_clear(&rp);
  if (r < 0) {
    git_changes_clear(ret);
  }
  return r;
}

int git_staged_changes(const char *dir, GitChanges *ret, Error *err) {
  memset(ret, 0, sizeof(*ret));
  _cleanup_free_ char *prefix = NULL;
  if (repository_prefix(dir, &prefix, err) < 0) {
    return -1;
  }
  RangePolicy rp = {0};
  _cleanup_free_ char *head = resolve_commit(dir, "HEAD");
  _cleanup_free_ char *tree = NULL;
  if (head != NULL) {
    if (policy_at(dir, head, "HEAD", prefix, &rp, &ret->policy_file, err) < 0) {
      range_policy_clear(&rp);
      return -1;
    }
    ret->base = xstrdup(head);
  } else {
    /* Before the first commit: the policy on disk, against an empty tree. */
    static const char *const targs[] = {"hash-object", "-t", "tree", "--stdin", NULL};
    static const char *const top_args[] = {"rev-parse", "--show-toplevel", NULL};
    tree = git_line(dir, GIT_RUN_KEEP_ENV, targs);
    _cleanup_free_ char *top = git_line(dir, GIT_RUN_KEEP_ENV, top_args);
    if (tree == NULL || top == NULL) {
      return error_set(err, EIO, _("cannot read the repository at %s"), dir ? dir : ".");
    }
    if (policy_discover(dir, &rp.policy, err) < 0 || range_matcher(&rp, err) < 0) {
      range_policy_clear(&rp);
      return -1;
    }
    _cleanup_free_ char *canon_top = path_resolve(top);
    _cleanup_free_ char *canon_root = policy_canonical_root(rp.policy);
    const char *in = canon_top && canon_root ? path_relative(canon_top, canon_root) : NULL;
    if (in == NULL) {
      range_policy_clear(&rp);
      return error_set(err, EINVAL, _("%s is not inside the repository at %s"),
                       rp.policy ? rp.policy->file : POLICY_FILE_NAME, top);
    }
    rp.prefix = in[0] ? xasprintf("%s/", in) : xstrdup("");
    ret->policy_file = xstrdup(rp.policy->file);
  }
  const char *args[] = {"diff-index", "--cached", "-z", "-r", "--raw", "-M",
                        head ? head : tree, "--", NULL};
  size_t len = 0;
  _cleanup_free_ char *out = git_output(dir, GIT_RUN_KEEP_ENV, args, &len);
  if (out == NULL) {
    range_policy_clear(&rp);
    git_changes_clear(ret);
    return error_set(err, EIO, _("cannot list the staged changes"));
  }
  RawCtx x = {ret, &rp, NULL};
  raw_records(out, len, raw_change, &x);
  range_policy_clear(&rp);
  return 0;
}
