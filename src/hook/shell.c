/* SPDX-License-Identifier: Apache-2.0 */
/* What a shell command plainly writes. A small reader of POSIX shell words
 * and operators, enough for `echo x > f`, `rm -rf d`, `sed -i s/a/b/ f`,
 * `cd d && mv a b`, `if …; then cp a dir/; fi`, `sudo -u u rm f` and an
 * apply_patch heredoc; anything cleverer is the kernel's business, which is
 * why this is best effort. This file runs what the parser (shell-parse.c)
 * reports: the command table, the wrappers that run their arguments as a
 * command, cd and its kin, nested scripts and heredoc bodies; the effects
 * of the commands that write are in the units shell-effects.h names. */
#include <ctype.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/shell-effects.h"
#include "path.h"

/* How many earlier `cd`s pushd and open subshells keep: each is a copy, and
 * a long enough command line must not cost quadratic memory. */
#define MAX_SAVED_DIRS 64

/* A scratch buffer for the words of `text` (ShellLexer.scratch). */
static char *scratch_for(const char *text) {
  return xmalloc(strlen(text) + 2 * (shell_home() != NULL ? strlen(shell_home()) : 0) + 8 + 1);
}

static ShellLexer lexer(const Frame *f);

/* Where `at` is, as one string for the stacks of pushd and of subshells:
 * `=` (or `?` for cd_unknown), then cd. */
static char *cd_text(const Place *at) {
  return xasprintf("%c%s", at->cd_unknown ? '?' : '=', at->cd ? at->cd : "");
}

static void cd_save(const Place *at, Words *stack) {
  _cleanup_free_ char *s = cd_text(at);
  shell_words_add(stack, s, strlen(s));
}

/* Back to what cd_text gave, taking `saved` over. */
static void cd_restore(Place *at, char *saved) {
  free(at->cd);
  at->cd_unknown = saved[0] == '?';
  at->cd = saved[0] != '\0' && saved[1] != '\0' ? xstrdup(saved + 1) : NULL;
  free(saved);
}

/* ---- wrappers: commands that run their arguments as a command ---------- */

typedef struct {
  const char *name; /* --name */
  char as;          /* the short option it is (a made-up letter if none) */
} LongOption;

typedef struct {
  const char *name;
  const char *values;       /* short options that take a value */
  const LongOption *longs;  /* long options that matter */
  const char *stops;        /* options with which the command is not run */
  char chdir;               /* the option naming the directory it runs in */
  size_t operands;          /* words between the options and the command */
} Wrapper;

static const LongOption sudo_longs[] = {
    {"--chdir", 'D'},  {"--user", 'u'},       {"--group", 'g'},      {"--close-from", 'C'},
    {"--prompt", 'p'}, {"--role", 'r'},       {"--type", 't'},       {"--other-user", 'U'},
    {"--chroot", 'R'}, {"--auth-type", 'a'},  {"--login-class", 'c'}, {"--command-timeout", 'T'},
    {"--edit", 'e'},   {"--list", 'l'},       {NULL, 0}};

static const LongOption env_longs[] = {
    {"--chdir", 'C'}, {"--split-string", 'S'}, {"--unset", 'u'}, {"--argv0", 'a'}, {NULL, 0}};

static const LongOption time_longs[] = {{"--output", 'o'}, {"--format", 'f'}, {NULL, 0}};

static const LongOption nice_longs[] = {{"--adjustment", 'n'}, {NULL, 0}};

static const LongOption timeout_longs[] = {{"--signal", 's'}, {"--kill-after", 'k'}, {NULL, 0}};

static const LongOption stdbuf_longs[] = {
    {"--input", 'i'}, {"--output", 'o'}, {"--error", 'e'}, {NULL, 0}};

static const LongOption flock_longs[] = {
    {"--timeout", 'w'}, {"--wait", 'w'}, {"--conflict-exit-code", 'E'}, {NULL, 0}};

static const LongOption ionice_longs[] = {{"--class", 'c'}, {"--classdata", 'n'},
                                          {"--pid", 'p'},   {"--pgid", 'P'},
                                          {"--uid", 'u'},   {NULL, 0}};

static const LongOption chrt_longs[] = {{"--pid", 'p'},
                                        {"--sched-runtime", 'T'},
                                        {"--sched-period", 'P'},
                                        {"--sched-deadline", 'D'},
                                        {NULL, 0}};

static const LongOption taskset_longs[] = {{"--pid", 'p'}, {NULL, 0}};

static const LongOption xargs_longs[] = {
    {"--arg-file", 'a'},  {"--delimiter", 'd'}, {"--max-args", 'n'},         {"--max-procs", 'P'},
    {"--max-chars", 's'}, {"--replace", 'i'},   {"--process-slot-var", '.'}, {NULL, 0}};

static const Wrapper wrappers[] = {
    /* name, values, longs, stops, chdir, operands */
    {"sudo", "aCcDgpRrTtUu", sudo_longs, "l", 'D', 0},
    {"sudoedit", "aCcDgpRrTtUu", sudo_longs, "l", 'D', 0},
    {"doas", "aCu", NULL, "C", 0, 0},
    {"env", "aCSu", env_longs, "", 'C', 0},
    {"command", "", NULL, "vV", 0, 0},
    {"builtin", "", NULL, "", 0, 0},
    {"exec", "a", NULL, "", 0, 0},
    {"nohup", "", NULL, "", 0, 0},
    {"time", "of", time_longs, "", 0, 0},
    {"nice", "n", nice_longs, "", 0, 0},
    {"timeout", "sk", timeout_longs, "", 0, 1},   /* DURATION */
    {"stdbuf", "ioe", stdbuf_longs, "", 0, 0},
    {"setsid", "", NULL, "", 0, 0},
    {"flock", "wE", flock_longs, "", 0, 1},       /* the lock file */
    {"ionice", "cnpPu", ionice_longs, "pPu", 0, 0},
    {"chrt", "DPT", chrt_longs, "p", 0, 1},       /* the priority */
    {"taskset", "", taskset_longs, "p", 0, 1},    /* the CPU mask */
    {"xargs", "adEILnPs.", xargs_longs, "", 0, 0},
};

/* ---- the commands the reader knows, by name ----------------------------- */

/* What a command's name makes of it: one lookup per simple command
 * (command_find) instead of a string test for each kind. */
typedef enum {
  COMMAND_OTHER,    /* runs, writes nothing the reader sees */
  COMMAND_RESERVED, /* opens or closes a compound command: the command is the next word */
  COMMAND_FUNCTION, /* function NAME { …: the body follows */
  COMMAND_WRAPPER,  /* runs its arguments as a command (wrappers[]) */
  COMMAND_SHELL,    /* sh -c SCRIPT */
  COMMAND_EVAL,
  COMMAND_CD,       /* cd, pushd, popd */
  COMMAND_SETS,     /* export, read, printf -v …: variables no longer the environment's */
  COMMAND_FOR,      /* for NAME, select NAME */
  COMMAND_FIND,
  COMMAND_GIT,      /* git rm, mv, checkout, restore, reset --hard, clean */
  COMMAND_WRITER,   /* writes its operands (shell-writers.c) */
} CommandKind;

typedef struct {
  const char *name;
  CommandKind kind;
  const Wrapper *wrapper;
  const ShellWriter *writer;
} CommandEntry;

/* An open-addressed table, filled once (command_table_init); a power of
 * two well above the hundred or so names. */
#define COMMAND_SLOTS 512u

static CommandEntry command_slots[COMMAND_SLOTS];

static bool command_table_ready;

static unsigned command_hash(const char *s) {
  unsigned h = 2166136261u; /* FNV-1a */
  for (; *s != '\0'; s++) {
    h = (h ^ (unsigned char)*s) * 16777619u;
  }
  return h;
}

static void command_add(const char *name, CommandKind kind, const Wrapper *wrapper,
                        const ShellWriter *writer) {
  unsigned i = command_hash(name) & (COMMAND_SLOTS - 1);
  while (command_slots[i].name != NULL) {
    i = (i + 1) & (COMMAND_SLOTS - 1);
  }
  command_slots[i] = (CommandEntry){name, kind, wrapper, writer};
}

static void command_table_init(void) {
  static const char *const reserved[] = {"if",   "then", "else", "elif", "do", "while",
                                         "until", "!",   "{",    "}",    "fi", "done",
                                         "esac", "coproc"};
  static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "busybox"};
  static const char *const sets[] = {"export", "declare", "typeset",  "local",    "readonly",
                                     "read",   "mapfile", "readarray", "printf"};
  if (command_table_ready) {
    return;
  }
  for (size_t i = 0; i < ELEMENTSOF(reserved); i++) {
    command_add(reserved[i], COMMAND_RESERVED, NULL, NULL);
  }
  command_add("function", COMMAND_FUNCTION, NULL, NULL);
  for (size_t i = 0; i < ELEMENTSOF(wrappers); i++) {
    command_add(wrappers[i].name, COMMAND_WRAPPER, &wrappers[i], NULL);
  }
  for (size_t i = 0; i < ELEMENTSOF(shells); i++) {
    command_add(shells[i], COMMAND_SHELL, NULL, NULL);
  }
  command_add("eval", COMMAND_EVAL, NULL, NULL);
  command_add("cd", COMMAND_CD, NULL, NULL);
  command_add("pushd", COMMAND_CD, NULL, NULL);
  command_add("popd", COMMAND_CD, NULL, NULL);
  for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
    command_add(sets[i], COMMAND_SETS, NULL, NULL);
  }
  command_add("for", COMMAND_FOR, NULL, NULL);
  command_add("select", COMMAND_FOR, NULL, NULL);
  command_add("find", COMMAND_FIND, NULL, NULL);
  command_add("git", COMMAND_GIT, NULL, NULL);
  size_t n = 0;
  const ShellWriter *writers = shell_writers(&n);
  for (size_t i = 0; i < n; i++) {
    command_add(writers[i].name, COMMAND_WRITER, NULL, &writers[i]);
  }
  command_table_ready = true;
}

/* The entry for the command named `name`, or NULL. */
static const CommandEntry *command_find(const char *name) {
  unsigned i = command_hash(name) & (COMMAND_SLOTS - 1);
  for (; command_slots[i].name != NULL; i = (i + 1) & (COMMAND_SLOTS - 1)) {
    if (command_slots[i].name[0] == name[0] && streq(command_slots[i].name, name)) {
      return &command_slots[i];
    }
  }
  return NULL;
}

static CommandKind command_kind(const CommandEntry *e) {
  return e != NULL ? e->kind : COMMAND_OTHER;
}

/* What a wrapper's options said. */
typedef struct {
  bool stop;         /* the command is not run (command -v, sudo -l) */
  bool edit;         /* sudo -e: the words are files it edits */
  const char *chdir; /* env -C, sudo -D */
  const char *split; /* env -S: a command line of its own */
  Xargs xargs;
} WrapperState;

static void wrapper_option(const Frame *f, const Wrapper *w, char opt, const char *value,
                           WrapperState *st) {
  if (strchr(w->stops, opt) != NULL) {
    st->stop = true;
  } else if (opt == w->chdir && value != NULL) {
    st->chdir = value;
  } else if (streq(w->name, "env") && opt == 'S') {
    st->split = value;
  } else if (streq(w->name, "time") && opt == 'o' && value != NULL) {
    shell_add_target(f, value, false); /* GNU time -o FILE writes FILE */
  } else if ((streq(w->name, "sudo") || streq(w->name, "sudoedit")) && opt == 'e') {
    st->edit = true;
  } else if (streq(w->name, "xargs") && (opt == 'I' || opt == 'i')) {
    st->xargs.replace = value != NULL ? value : "{}";
  }
}

/* Reads a wrapper's options from argv[k]; returns where they end. All of
 * these stop at the first word that is not an option, as getopt's "+". */
static size_t wrapper_options(const Frame *f, const Wrapper *w, char **argv, size_t argc,
                              size_t k, WrapperState *st) {
  while (k < argc) {
    const char *a = argv[k];
    if (streq(a, "--")) {
      return k + 1;
    }
    if (streq(a, "-") && streq(w->name, "env")) {
      k++; /* env -: env -i */
      continue;
    }
    if (!is_option(a, false)) {
      return k;
    }
    k++;
    if (a[1] == '-') {
      const char *eq = strchr(a, '=');
      size_t len = eq != NULL ? (size_t)(eq - a) : strlen(a);
      for (const LongOption *l = w->longs; l != NULL && l->name != NULL; l++) {
        if (strlen(l->name) == len && strncmp(a, l->name, len) == 0) {
          const char *value = eq != NULL ? eq + 1 : NULL;
          if (value == NULL && strchr(w->values, l->as) != NULL && k < argc) {
            value = argv[k++];
          }
          wrapper_option(f, w, l->as, value, st);
          break;
        }
      }
      continue;
    }
    for (const char *c = a + 1; *c != '\0'; c++) {
      if (strchr(w->values, *c) != NULL) {
        const char *value = c[1] != '\0' ? c + 1 : k < argc ? argv[k++] : NULL;
        wrapper_option(f, w, *c, value, st);
        break;
      }
      wrapper_option(f, w, *c, NULL, st);
    }
  }
  return k;
}

/* ---- simple commands --------------------------------------------------- */

static void parse_nested(const Frame *f, const char *text, bool subshell);

/* Remembers the current `cd` on pushd's stack; the oldest is forgotten
 * when it is full. */
static void push_dir(const Frame *f) {
  if (f->sh->dirs.n == MAX_SAVED_DIRS) {
    free(f->sh->dirs.v[0]);
    memmove(f->sh->dirs.v, f->sh->dirs.v + 1, (f->sh->dirs.n - 1) * sizeof(char *));
    f->sh->dirs.n--;
    f->sh->dirs_dropped = true;
  }
  cd_save(f->at, &f->sh->dirs);
}

/* What `word` names after the last component holding an expansion (`sub`
 * in "$X/sub", "$X/$Y/sub", and after a `/` inside "${D%…}"), or "". */
static const char *after_expansions(const char *word) {
  const char *tail = word;
  for (const char *x; (x = shell_expansion(tail)) != NULL;) {
    const char *slash = strchr(shell_expansion_end(x), '/');
    if (slash == NULL) {
      return "";
    }
    tail = slash + strspn(slash, "/");
  }
  return tail;
}

/* A `cd` operand with what the hook can know substituted: the working
 * tree for `$(git rev-parse --show-toplevel)` (the usual way to the top of
 * a project), and the variables the environment holds. */
static char *cd_operand(const Frame *f, const char *dir) {
  static const char *const toplevel[] = {"$(git rev-parse --show-toplevel)",
                                         "`git rev-parse --show-toplevel`"};
  for (size_t i = 0; i < ELEMENTSOF(toplevel); i++) {
    if (startswith(dir, toplevel[i])) {
      _cleanup_free_ char *top = shell_git_toplevel(f);
      if (top != NULL) {
        return xasprintf("%s%s", top, dir + strlen(toplevel[i]));
      }
    }
  }
  return shell_expand_environment(f, dir);
}

void shell_change_dir(const Frame *f, const char *cmd, char **args, size_t n) {
  const char *dir = NULL;
  bool no_change = false;
  for (size_t k = 0; k < n; k++) {
    if (!streq(cmd, "cd") && streq(args[k], "-n")) {
      no_change = true;
    } else if (!is_option(args[k], false)) {
      dir = args[k];
    }
  }
  if (no_change) {
    return;
  }
  if (dir != NULL && (streq(dir, "-") || dir[0] == '+')) {
    /* $OLDPWD, the stack rotated: somewhere. */
    free(f->at->cd);
    f->at->cd = NULL;
    f->at->cd_unknown = true;
    return;
  }
  if (streq(cmd, "popd") || (dir == NULL && streq(cmd, "pushd"))) {
    if (f->sh->dirs.n == 0) {
      if (f->sh->dirs_dropped) {
        /* Back to an entry the stack no longer holds. */
        free(f->at->cd);
        f->at->cd = NULL;
        f->at->cd_unknown = true;
      }
      return;
    }
    char *saved = f->sh->dirs.v[--f->sh->dirs.n];
    if (streq(cmd, "pushd")) {
      push_dir(f); /* pushd alone swaps the top two */
    }
    cd_restore(f->at, saved);
    return;
  }
  char *next;
  if (dir == NULL) {
    if (shell_home() == NULL) {
      return; /* cd with no operand and no HOME fails */
    }
    next = xstrdup(shell_home());
  } else {
    if (streq(cmd, "pushd")) {
      push_dir(f);
    }
    _cleanup_free_ char *operand = cd_operand(f, dir);
    bool names = false;
    const char *x = shell_unknown_part(f, operand, true, &names);
    if (x != NULL && !names) {
      /* Known only when it runs: somewhere, and whatever the operand
       * names after the last component that holds an expansion. */
      const char *tail = after_expansions(x);
      free(f->at->cd);
      f->at->cd = tail[0] != '\0' ? xstrdup(tail) : NULL;
      f->at->cd_unknown = true;
      return;
    }
    next = shell_from_cwd(f, operand);
  }
  free(f->at->cd);
  f->at->cd = next;
  if (next[0] == '/') {
    f->at->cd_unknown = false;
  }
}

/* A command, its wrappers already skipped: what it runs or writes. */
static void run_command(const Frame *f, const CommandEntry *e, char **argv, size_t argc,
                        const Xargs *xargs) {
  const char *cmd = base_name(argv[0]);
  char **args = argv + 1;
  size_t n = argc - 1;
  CommandKind kind = command_kind(e);

  /* sh -c 'SCRIPT': the script is a command line of its own. */
  if (kind == COMMAND_SHELL) {
    for (size_t k = 0; k + 1 < n; k++) {
      if (args[k][0] == '-' && args[k][1] != '-' && strchr(args[k], 'c') != NULL) {
        /* Run by xargs or find -exec, its arguments are the names they
         * read, and their `{}` in its text too. */
        Frame in = *f;
        if (xargs->on) {
          in.in_script = true;
          in.replace = xargs->replace != NULL ? xargs->replace : f->replace;
        }
        _cleanup_free_ char *script = shell_literal_text(args[k + 1]);
        parse_nested(&in, script, true);
        break;
      }
    }
  } else if (kind == COMMAND_EVAL) {
    /* eval joins its arguments and runs them, in this shell. */
    size_t len = 1;
    for (size_t k = 0; k < n; k++) {
      len += strlen(args[k]) + 1;
    }
    _cleanup_free_ char *line = xmalloc(len);
    char *end = line;
    for (size_t k = 0; k < n; k++) {
      end = stpcpy(end, args[k]);
      *end++ = ' ';
    }
    *end = '\0';
    _cleanup_free_ char *text = shell_literal_text(line);
    parse_nested(f, text, false);
  } else if (kind == COMMAND_CD) {
    shell_change_dir(f, cmd, args, n);
    if (f->after_or) {
      /* `cd A || cd B`: A or B, whichever worked. */
      free(f->at->cd);
      f->at->cd = NULL;
      f->at->cd_unknown = true;
    }
  } else if (kind == COMMAND_SETS) {
    /* What they set is no longer the environment's (printf -v NAME;
     * read's and the others' options and values are noted too: a name
     * too many only leaves a word unexpanded). */
    for (size_t k = 0; k < n; k++) {
      shell_note_assigned(f, args[k]);
    }
  } else if (kind == COMMAND_FOR && n > 0) {
    shell_note_assigned(f, args[0]); /* for NAME in …: set each time round */
  } else if (kind == COMMAND_FIND) {
    shell_find_targets(f, args, n, xargs);
  } else if (kind == COMMAND_GIT) {
    shell_git_targets(f, args, n, xargs);
  } else if (kind == COMMAND_WRITER) {
    shell_command_targets(f, e->writer, argv, argc, xargs);
  }
}

void shell_run_words(const Frame *outer, char **argv, size_t argc, Xargs xargs) {
  if (!charge(outer, argc + 1)) {
    return;
  }
  /* env -C, sudo -D: the command runs in a place of its own. */
  Place here = {0};
  Frame cmd = *outer;
  const Frame *f = &cmd;
  bool done = false;  /* the wrappers said all there is */
  size_t i = 0;
  const CommandEntry *entry = NULL; /* argv[i]'s, once the loop ends */
  /* Assignments, reserved words and wrappers that run their arguments as a
   * command. */
  while (i < argc && !done) {
    const char *a = argv[i];
    if (shell_is_assignment(a)) {
      shell_note_assigned(f, a);
      i++;
      continue;
    }
    const CommandEntry *e = command_find(a);
    if (command_kind(e) == COMMAND_RESERVED) {
      i++;
      continue;
    }
    if (command_kind(e) == COMMAND_FUNCTION) {
      i += 2; /* function NAME { …: the body follows */
      continue;
    }
    const char *b = base_name(a);
    entry = b == a ? e : command_find(b);
    if (command_kind(entry) != COMMAND_WRAPPER) {
      break;
    }
    const Wrapper *w = entry->wrapper;
    WrapperState st = {.xargs = xargs};
    i = wrapper_options(f, w, argv, argc, i + 1, &st);
    if (st.stop) {
      done = true;
      break;
    }
    if (st.chdir != NULL) {
      if (cmd.at != &here) {
        here = place_copy(outer->at);
        cmd.at = &here;
      }
      char *operand = (char *)st.chdir;
      shell_change_dir(f, "cd", &operand, 1);
    }
    if (streq(w->name, "xargs")) {
      xargs = st.xargs;
      xargs.on = true;
    }
    if (st.edit || streq(w->name, "sudoedit")) {
      for (; i < argc; i++) {
        shell_add_target(f, argv[i], false);
      }
    } else if (st.split != NULL) {
      /* env -S 'CMD ARGS' REST: the string is split into words. */
      done = true;
      if (f->depth < MAX_DEPTH) {
        Words split = {0};
        _cleanup_free_ char *text = shell_literal_text(st.split);
        ShellLexer lx = lexer(f);
        lx.scratch = scratch_for(text);
        const char *q = text;
        while (*q != '\0') {
          if (!shell_read_word(&lx, &q, &split)) {
            q++;
          }
        }
        free(lx.scratch);
        for (; i < argc; i++) {
          shell_words_add(&split, argv[i], strlen(argv[i]));
        }
        Frame nested = *f;
        nested.depth++;
        shell_run_words(&nested, split.v, split.n, xargs);
        shell_words_clear(&split);
      }
    } else if (streq(w->name, "flock") && i < argc) {
      /* flock FILE CMD…, flock FILE -c 'CMD': FILE is created if missing. */
      const char *file = argv[i++];
      struct stat st_file;
      if (!is_digits(file) && !shell_stat_word(f, file, &st_file, true)) {
        shell_add_target(f, file, false);
      }
      if (i + 1 < argc && (streq(argv[i], "-c") || streq(argv[i], "--command"))) {
        _cleanup_free_ char *script = shell_literal_text(argv[i + 1]);
        parse_nested(f, script, true);
        done = true;
      }
    } else if (w->operands > 0 && i < argc &&
               (!streq(w->name, "chrt") || is_digits(argv[i]))) {
      i += w->operands;
    }
  }
  if (!done && i < argc) {
    run_command(f, entry, argv + i, argc - i, &xargs);
  }
  place_clear(&here);
}

/* ---- the parser's events ------------------------------------------------ */

static void heredoc_patch(const Frame *f, const char *body, size_t len, const char *cd);

/* The parser's context is the Frame of the text it reads. */
static void simple_command(void *ctx, char **argv, size_t argc, bool after_or) {
  Frame cmd = *(const Frame *)ctx;
  cmd.after_or = after_or;
  shell_run_words(&cmd, argv, argc, (Xargs){0});
}

static void redirect(void *ctx, const char *word) {
  shell_add_target(ctx, word, false);
}

static char *save_dir(void *ctx) {
  const Frame *f = ctx;
  return cd_text(f->at);
}

static void restore_dir(void *ctx, char *saved) {
  const Frame *f = ctx;
  cd_restore(f->at, saved);
}

static void heredoc_body(void *ctx, const char *body, size_t len, const char *dir) {
  heredoc_patch(ctx, body, len, dir);
}

static bool stopped(void *ctx) {
  const Frame *f = ctx;
  return f->sh->req->over_budget;
}

static const ShellParseEvents events = {
    .command = simple_command,
    .redirect = redirect,
    .save_dir = save_dir,
    .restore_dir = restore_dir,
    .heredoc_body = heredoc_body,
    .stopped = stopped,
};

static const char *substitution(const Frame *f, const char *p);

static const char *lex_substitution(void *ctx, const char *p) {
  return substitution(ctx, p);
}

static bool lex_charge(void *ctx, size_t units) {
  return charge(ctx, units);
}

/* A lexer whose substitutions are read in `f`. */
static ShellLexer lexer(const Frame *f) {
  return (ShellLexer){.home = shell_home(), .substitution = lex_substitution, .charge = lex_charge,
                      .ctx = (void *)f};
}

static void parse(const Frame *f, const char *text) {
  ShellLexer lx = lexer(f);
  shell_parse(&lx, &events, (void *)f, text);
}

/* A command substitution, eval or sh -c: parsed like the command line, one
 * level deeper; a subshell's `cd` does not outlive it (a place of its
 * own), eval's does. */
static void parse_nested(const Frame *f, const char *text, bool subshell) {
  if (f->depth >= MAX_DEPTH) {
    return;
  }
  if (!charge(f, strlen(text) + 1)) {
    return;
  }
  Place here = subshell ? place_copy(f->at) : (Place){0};
  Frame nested = *f;
  nested.depth++;
  if (subshell) {
    nested.at = &here;
  }
  parse(&nested, text);
  place_clear(&here);
}

/* With `p` at a `…` or $(…) (not $((…))): parses the command it runs and
 * returns what follows it. */
static const char *substitution(const Frame *f, const char *p) {
  const char *end;
  _cleanup_free_ char *inner = shell_substitution_text(p, &end);
  parse_nested(f, inner, true);
  return end;
}

/* The patch envelope a heredoc's body may carry (`apply_patch <<'EOF'`):
 * its paths are relative to the directory the command runs in, `cd` (as
 * cd_text gave it when the heredoc was announced). A body of the command
 * line itself is blanked in Shell.unread_text, which hook_shell_targets
 * reads for envelopes found nowhere else. */
static void heredoc_patch(const Frame *f, const char *body, size_t len, const char *cd) {
  if (memmem(body, len, "*** ", 4) == NULL) {
    return;
  }
  _cleanup_free_ char *text = xstrndup(body, len);
  HookRequest found = {0};
  if (hook_patch_paths(text, &found) > 0) {
    Place there = {0};
    cd_restore(&there, xstrdup(cd));
    Frame at_body = *f;
    at_body.at = &there;
    for (size_t i = 0; i < found.n_paths; i++) {
      _cleanup_free_ char *w = shell_literal_word(found.paths[i]);
      shell_add_target(&at_body, w, false);
    }
    place_clear(&there);
  }
  hook_request_clear(&found);
  Shell *sh = f->sh;
  if (body >= sh->top && body + len <= sh->top + sh->top_len) {
    if (sh->unread_text == NULL) {
      /* Copied only once a body is blanked: most commands have none. */
      sh->unread_text = xstrdup(sh->top);
    }
    char *b = sh->unread_text + (body - sh->top);
    for (size_t i = 0; i < len; i++) {
      b[i] = b[i] == '\n' ? '\n' : ' ';
    }
  }
}

void hook_shell_targets(const char *command, HookRequest *req) {
  Shell sh = {.req = req, .top = command, .top_len = strlen(command)};
  Place at = {0};
  shell_home_init();
  shell_lex_init();
  command_table_init();
  parse(&(Frame){.sh = &sh, .at = &at}, command);
  /* An envelope anywhere else (a heredoc that never ends, a quoted
   * argument): relative to the request's directory. Past the budget the
   * call is refused whatever it names. */
  if (!req->over_budget) {
    hook_patch_paths(sh.unread_text != NULL ? sh.unread_text : command, req);
  }
  free(sh.unread_text);
  for (size_t i = 0; i < ELEMENTSOF(sh.stats); i++) {
    free(sh.stats[i].word);
    free(sh.stats[i].cd);
  }
  place_clear(&at);
  shell_words_clear(&sh.dirs);
  shell_words_clear(&sh.assigned);
  shell_words_clear(&sh.alias_names);
  shell_words_clear(&sh.alias_to);
  shell_words_clear(&sh.alias_text);
}
