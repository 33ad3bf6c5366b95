/* SPDX-License-Identifier: Apache-2.0 */
/* What a shell command plainly writes. A small reader of POSIX shell words
 * and operators, enough for `echo x > f`, `rm -rf d`, `sed -i s/a/b/ f`,
 * `cd d && mv a b` and an apply_patch heredoc; anything cleverer is the
 * kernel's business, which is why this is best effort. */
#include <string.h>

#include "hook/hook.h"
#include "path.h"

typedef struct {
  char **v;
  size_t n;
  size_t cap;
} Words;

static void words_add(Words *w, const char *s, size_t len) {
  char **slot = grow_array(&w->v, &w->n, &w->cap, sizeof(char *));
  *slot = xstrndup(s, len);
}

static void words_clear(Words *w) {
  for (size_t i = 0; i < w->n; i++) {
    free(w->v[i]);
  }
  free(w->v);
  memset(w, 0, sizeof(*w));
}

typedef struct {
  HookRequest *req;
  char *cd; /* where a `cd` in the command moved to, relative or absolute */
  int depth; /* sh -c nesting */
} Shell;

static void parse(Shell *sh, const char *command);

/* `path` as seen from the request's directory, after any `cd`. */
static char *from_cwd(const Shell *sh, const char *path) {
  if (sh->cd == NULL || path[0] == '/') {
    return xstrdup(path);
  }
  return path_join(sh->cd, path);
}

/* Adds a target. A glob stays a glob: it is decided against the patterns
 * (matcher_match_glob), never by listing directories. */
static void add_target(Shell *sh, const char *word, bool tree) {
  _cleanup_free_ char *p = from_cwd(sh, word);
  hook_request_add_path(sh->req, p);
  if (tree) {
    hook_request_add_tree(sh->req, p);
  }
}

static const char *base_name(const char *s) {
  const char *slash = strrchr(s, '/');
  return slash ? slash + 1 : s;
}

static bool is_option(const char *a, bool after_dashdash) {
  return !after_dashdash && a[0] == '-' && a[1] != '\0';
}

static bool has_short_flag(const char *a, char flag) {
  return a[0] == '-' && a[1] != '-' && strchr(a + 1, flag) != NULL;
}

/* One simple command, its words already split. */
static void simple_command(Shell *sh, char **argv, size_t argc) {
  size_t i = 0;
  /* Assignments and wrappers that run their arguments as a command. */
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strchr(a, '=') != NULL && a[0] != '=' && a[0] != '-' &&
        strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
            (size_t)(strchr(a, '=') - a)) {
      continue;
    }
    const char *b = base_name(a);
    if (streq(b, "sudo") || streq(b, "env") || streq(b, "command") || streq(b, "exec") ||
        streq(b, "nohup") || streq(b, "time") || streq(b, "nice") || streq(b, "doas")) {
      continue;
    }
    break;
  }
  if (i >= argc) {
    return;
  }
  const char *cmd = base_name(argv[i]);
  char **args = argv + i + 1;
  size_t n = argc - i - 1;

  /* sh -c 'SCRIPT': the script is a command line of its own. */
  if ((streq(cmd, "sh") || streq(cmd, "bash") || streq(cmd, "dash") || streq(cmd, "zsh") ||
       streq(cmd, "ksh") || streq(cmd, "busybox")) &&
      sh->depth < 8) {
    for (size_t k = 0; k + 1 < n; k++) {
      if (args[k][0] == '-' && args[k][1] != '-' && strchr(args[k], 'c') != NULL) {
        sh->depth++;
        parse(sh, args[k + 1]);
        sh->depth--;
        break;
      }
    }
    return;
  }
  if (streq(cmd, "cd")) {
    const char *dir = n > 0 ? args[n - 1] : NULL;
    if (dir != NULL && !is_option(dir, false)) {
      char *next = from_cwd(sh, dir);
      free(sh->cd);
      sh->cd = next;
    }
    return;
  }

  /* Which arguments are targets. */
  bool all = false, last = false, recursive = false, in_place = false, skip_first = false;
  const char *value_opts = ""; /* short options that take a value */
  if (streq(cmd, "rm") || streq(cmd, "unlink") || streq(cmd, "rmdir") || streq(cmd, "shred")) {
    all = true;
    recursive = !streq(cmd, "unlink");
  } else if (streq(cmd, "truncate")) {
    all = true;
    value_opts = "sr";
  } else if (streq(cmd, "touch")) {
    all = true;
    value_opts = "dtr";
  } else if (streq(cmd, "tee")) {
    all = true;
  } else if (streq(cmd, "mv")) {
    /* Sources leave their place, the destination is written. */
    all = true;
    recursive = true;
    value_opts = "tS";
  } else if (streq(cmd, "cp") || streq(cmd, "install") || streq(cmd, "ln") ||
             streq(cmd, "rsync")) {
    last = true;
    value_opts = "tSmogT";
  } else if (streq(cmd, "chmod") || streq(cmd, "chown") || streq(cmd, "chgrp") ||
             streq(cmd, "setfacl") || streq(cmd, "setfattr") || streq(cmd, "chattr")) {
    all = true;
    skip_first = !streq(cmd, "setfattr");
    value_opts = streq(cmd, "setfattr") ? "nvx" : "";
  } else if (streq(cmd, "sed") || streq(cmd, "perl")) {
    value_opts = streq(cmd, "sed") ? "efl" : "eEI";
    bool script_given = false;
    for (size_t k = 0; k < n; k++) {
      in_place |= has_short_flag(args[k], 'i') || startswith(args[k], "--in-place");
      script_given |= streq(args[k], "-e") || streq(args[k], "-f") || streq(args[k], "-E") ||
                      startswith(args[k], "--expression") || startswith(args[k], "--file") ||
                      (has_short_flag(args[k], 'e') && !startswith(args[k], "--"));
    }
    if (!in_place) {
      return;
    }
    all = true;
    skip_first = !script_given;
  } else if (streq(cmd, "dd")) {
    for (size_t k = 0; k < n; k++) {
      if (startswith(args[k], "of=")) {
        add_target(sh, args[k] + 3, false);
      }
    }
    return;
  } else {
    return;
  }

  bool dashdash = false, skipped = false;
  const char *target_dir = NULL;
  char **plain = xcalloc(n + 1, sizeof(char *));
  size_t np = 0;
  for (size_t k = 0; k < n; k++) {
    const char *a = args[k];
    if (!dashdash && streq(a, "--")) {
      dashdash = true;
      continue;
    }
    if (is_option(a, dashdash)) {
      /* -t DIR names the destination of cp/mv/ln/install. */
      if ((streq(a, "-t") || streq(a, "--target-directory")) && k + 1 < n) {
        target_dir = args[++k];
      } else if (startswith(a, "--target-directory=")) {
        target_dir = a + strlen("--target-directory=");
      } else if (a[1] != '-' && a[2] == '\0' && strchr(value_opts, a[1]) != NULL && k + 1 < n) {
        k++; /* the option's value */
      }
      continue;
    }
    if (skip_first && !skipped) {
      skipped = true;
      continue;
    }
    plain[np++] = args[k];
  }
  if (target_dir != NULL) {
    add_target(sh, target_dir, false);
  }
  if (all) {
    for (size_t k = 0; k < np; k++) {
      add_target(sh, plain[k], recursive);
    }
  } else if (last && np > 0 && target_dir == NULL) {
    add_target(sh, plain[np - 1], false);
  }
  free(plain);
}

/* Reads one word starting at *p; returns false at an operator or end. */
static bool read_word(const char **pp, Words *out) {
  const char *p = *pp;
  char *buf = xmalloc(strlen(p) + 1);
  size_t n = 0;
  bool any = false;
  while (*p != '\0') {
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
        c == ')' || c == '<' || c == '>') {
      break;
    }
    any = true;
    if (c == '\'') {
      const char *e = strchr(p + 1, '\'');
      size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);
      memcpy(buf + n, p + 1, len);
      n += len;
      p = e ? e + 1 : p + 1 + len;
    } else if (c == '"') {
      p++;
      while (*p != '\0' && *p != '"') {
        if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`\n", p[1]) != NULL) {
          p++;
        }
        buf[n++] = *p++;
      }
      if (*p == '"') {
        p++;
      }
    } else if (c == '\\' && p[1] != '\0') {
      if (p[1] != '\n') {
        buf[n++] = p[1];
      }
      p += 2;
    } else {
      buf[n++] = c;
      p++;
    }
  }
  if (any) {
    words_add(out, buf, n);
  }
  free(buf);
  *pp = p;
  return any;
}

/* Skips the bodies of the heredocs announced on the line just ended. */
static const char *skip_heredocs(const char *p, Words *pending) {
  for (size_t i = 0; i < pending->n; i++) {
    const char *delim = pending->v[i];
    while (*p != '\0') {
      const char *e = strchrnul(p, '\n');
      const char *t = p;
      while (*t == '\t') {
        t++;
      }
      bool done = (size_t)(e - t) == strlen(delim) && strncmp(t, delim, (size_t)(e - t)) == 0;
      p = *e ? e + 1 : e;
      if (done) {
        break;
      }
    }
  }
  words_clear(pending);
  return p;
}

static void parse(Shell *sh, const char *command) {
  Words words = {0}, heredocs = {0};
  const char *p = command;
  for (;;) {
    while (*p == ' ' || *p == '\t') {
      p++;
    }
    char c = *p;
    if (c == '#') {
      p = strchrnul(p, '\n');
      continue;
    }
    if (c == '\0' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      simple_command(sh, words.v, words.n);
      words_clear(&words);
      if (c == '\0') {
        break;
      }
      /* `&>` and `&>>` redirect both streams to a file. */
      if (c == '&' && p[1] == '>') {
        p += p[2] == '>' ? 3 : 2;
        Words target = {0};
        while (*p == ' ' || *p == '\t') {
          p++;
        }
        if (read_word(&p, &target)) {
          add_target(sh, target.v[0], false);
        }
        words_clear(&target);
        continue;
      }
      p++;
      if (c == '\n' && heredocs.n > 0) {
        p = skip_heredocs(p, &heredocs);
      }
      continue;
    }
    if (c == '>' || c == '<') {
      /* A fd number just read belongs to the operator, not the command. */
      if (words.n > 0 &&
          strspn(words.v[words.n - 1], "0123456789") == strlen(words.v[words.n - 1]) &&
          p > command && p[-1] >= '0' && p[-1] <= '9') {
        free(words.v[--words.n]);
      }
      bool out = c == '>';
      p++;
      if (out && (*p == '>' || *p == '|')) {
        p++;
      } else if (!out && *p == '<') {
        if (p[1] == '<') {
          p += 2; /* <<< here-string: a word, not a file */
        } else {
          /* A heredoc: its body follows the end of this line. */
          p++;
          while (*p == '-') {
            p++;
          }
          while (*p == ' ' || *p == '\t') {
            p++;
          }
          Words delim = {0};
          if (read_word(&p, &delim)) {
            words_add(&heredocs, delim.v[0], strlen(delim.v[0]));
          }
          words_clear(&delim);
          continue;
        }
      }
      if (*p == '&') {
        /* >&2, >&-: duplication, no file. */
        p++;
        Words dup = {0};
        read_word(&p, &dup);
        words_clear(&dup);
        continue;
      }
      while (*p == ' ' || *p == '\t') {
        p++;
      }
      Words target = {0};
      if (read_word(&p, &target) && out) {
        add_target(sh, target.v[0], false);
      }
      words_clear(&target);
      continue;
    }
    if (!read_word(&p, &words)) {
      p++;
    }
  }
  words_clear(&words);
  words_clear(&heredocs);
}

void hook_shell_targets(const char *command, HookRequest *req) {
  Shell sh = {.req = req};
  /* apply_patch <<'EOF' … heredocs carry an envelope. */
  hook_patch_paths(command, req);
  parse(&sh, command);
  free(sh.cd);
}
