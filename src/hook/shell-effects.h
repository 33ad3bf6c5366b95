/* SPDX-License-Identifier: Apache-2.0 */
/* The effects half of the shell reader, private to it: what the commands of
 * a command line write, split by concern (shell.c runs each simple command
 * the parser reports, shell-target.c resolves the words it writes to and
 * adds them to the request, shell-write.c, shell-find.c and shell-git.c
 * read the commands that write). Every function takes the Frame of the
 * part of the command being read; nothing here is set around a call. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/hook.h"
#include "hook/shell.h"
#include "util.h"

/* How deep sh -c, eval, env -S and command substitutions nest. */
#define MAX_DEPTH 8

/* What holds for the whole command line. */
typedef struct {
  HookRequest *req;
  Words dirs;  /* pushd's stack of earlier `cd`s (cd_save), "" for the request's directory */
  /* pushd's stack lost its oldest entries (past MAX_SAVED_DIRS). */
  bool dirs_dropped;
  /* Variables the command sets (NAME=…, export, read, for): their values
   * are not the environment's. "NAME=VALUE" where the value is written
   * out, else "NAME". */
  Words assigned;
  /* Names the command gives to what it could already reach (see
   * add_alias): alias_names[i] leads to alias_to[i], both absolute. */
  Words alias_names;
  Words alias_to;
  /* The text of alias_names[i] when the command makes it a symbolic link,
   * else "". */
  Words alias_text;
  size_t alias_steps;
  /* The command line as given, and a copy with the heredoc bodies whose
   * envelopes were read blanked (heredoc_patch). */
  const char *top;
  size_t top_len;
  char *unread_text;
  /* The last stat(2)s and lstat(2)s (shell_stat_word): a long command names the
   * same few directories again and again. */
  struct {
    char *word;
    char *cd;
    bool follow;
    bool ok;
    struct stat st;
  } stats[8];
  size_t next_stat;
} Shell;

/* Where the command is: what its `cd`s did. A subshell, a heredoc's body,
 * find -exec's command and a command run with env -C or git -C each have
 * their own (place_copy), which ends with them. */
typedef struct {
  char *cd;        /* where a `cd` moved to, relative or absolute; NULL: nowhere */
  /* A `cd` went where only running the command tells (`cd "$X"`, `cd -`):
   * relative paths, and cd if relative, are from there
   * (HookRequest.somewhere). */
  bool cd_unknown;
} Place;

/* What holds while one part of the command is read: set up by what starts
 * reading it (a nested script, find's -exec, xargs) in a Frame of its
 * own, copied from its caller's, and the same for everything that part
 * calls. */
typedef struct {
  Shell *sh;
  Place *at;   /* the directory the part runs in */
  int depth;   /* sh -c, eval, env -S and `…` nesting */
  /* find's starting points while its -exec runs, as shell_from_cwd gives them
   * at find: what `{}` stands for lies below them, not below the working
   * directory (which -execdir changes). */
  char **below;
  size_t n_below;
  /* While -execdir's command is read: the starting point, which is its
   * `cd`; it runs in the directories around it too (execdir_targets). */
  const char *execdir;
  /* The word (xargs -I's, find's `{}`) that stands for the names xargs
   * reads or find finds, in the command or script being read. */
  const char *replace;
  /* In a script xargs or find -exec runs (sh -c '…'): its positional
   * parameters are those names, so any word the shell expands may be. */
  bool in_script;
  /* The command runs only if the one before failed (after `||`). */
  bool after_or;
} Frame;

/* How a target is written (shell_add_target_as). */
enum {
  /* With its subtree (rm -r, cp -r's destination). */
  TARGET_TREE = 1 << 0,
  /* An entry that goes as it is, a symbolic link and not what it leads
   * to (rm, unlink, mv's sources; HookRequest.entries). */
  TARGET_ENTRY = 1 << 1,
  /* A word the shell expands may be any tree (rm -r's operands). */
  TARGET_EXPANSIONS = 1 << 2,
};

/* Charges `units` of the reader's work (about a byte read each) to the
 * request's budget; false once it is spent, and then reading stops. */
static inline bool charge(const Frame *f, size_t units) {
  return hook_request_charge(f->sh->req, units);
}

/* A command run by xargs gets more arguments than it was written with. */
typedef struct {
  bool on;
  const char *replace; /* -I STR: STR in the words stands for them; NULL: appended */
} Xargs;

/* A place of its own for a part of the command whose `cd`s end with it,
 * starting where `at` is; place_clear when it ends. */
static inline Place place_copy(const Place *at) {
  return (Place){.cd = at->cd != NULL ? xstrdup(at->cd) : NULL, .cd_unknown = at->cd_unknown};
}

static inline void place_clear(Place *at) {
  free(at->cd);
  at->cd = NULL;
}

/* ---- words ---------------------------------------------------------------- */

static inline const char *base_name(const char *s) {
  const char *slash = strrchr(s, '/');
  return slash ? slash + 1 : s;
}

static inline bool is_option(const char *a, bool after_dashdash) {
  return !after_dashdash && a[0] == '-' && a[1] != '\0';
}

static inline bool has_short_flag(const char *a, char flag) {
  return a[0] == '-' && a[1] != '-' && strchr(a + 1, flag) != NULL;
}

static inline bool is_digits(const char *s) {
  return s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

static inline bool in_list(const char *s, const char *const *list) {
  for (size_t i = 0; list[i] != NULL; i++) {
    if (s[0] == list[i][0] && streq(s, list[i])) {
      return true;
    }
  }
  return false;
}

/* What the options of cp, mv, ln, link, install, rsync (and git mv) say
 * about how they write (shell_copy_targets). */
typedef struct {
  const char *target_dir; /* -t DIR, --target-directory=DIR */
  bool no_target_dir;     /* -T: DEST is never a directory */
  bool recursive;         /* -r, -R, -a: sources are trees */
  bool parents;           /* cp --parents, rsync -R: the whole source path */
  bool delete_dest;       /* rsync --delete: DEST loses what the sources lack */
  bool move_sources;      /* rsync --remove-source-files */
  bool make_dirs;         /* install -d: every operand is created */
  bool makes_links;       /* ln, link, cp -s/-l: DEST is another name for SRC */
  bool symbolic;          /* ln -s, cp -s */
  bool relative_link;     /* ln -r: a symbolic link's target is as written from here */
  bool no_dereference;    /* ln -n: DEST, a link to a directory, is replaced */
} CopyOptions;

/* `f`, with the string that stands for the names xargs reads (-I STR,
 * find's `{}`) known to shell_add_target: for the command xargs runs. */
static inline Frame with_replace(const Frame *f, const Xargs *xargs) {
  Frame in = *f;
  if (xargs->on && xargs->replace != NULL) {
    in.replace = xargs->replace;
  }
  return in;
}

/* ---- shell-target.c: where words lead, and the targets added ------------ */

/* Where the string `r` (xargs -I's, find's `{}`) is in `word`, or NULL:
 * the two compare as the text they stand for, so a `$` quoted in one and
 * bare in the other (a `$` the shell keeps either way) is the same. */
const char *shell_replace_in(const char *word, const char *r);

/* $HOME, with which a `~` is expanded; NULL when it is unset or not an
 * absolute path and a `~` cannot be placed. */
const char *shell_home(void);

/* Looks $HOME up once for a whole command (shell_home()). */
void shell_home_init(void);

/* `path` as seen from the request's directory, after any `cd`. A `~`
 * that could not be expanded is the home directory, wherever that is. */
char *shell_from_cwd(const Frame *f, const char *path);

/* stat(2) of `word` as the command would see it, or lstat(2) unless
 * `follow`. */
bool shell_stat_word(const Frame *f, const char *word, struct stat *st, bool follow);

/* Whether `word` is a directory (shell_stat_word). */
bool shell_is_dir(const Frame *f, const char *word, bool follow);

/* A tree, as shell_from_cwd gives it. */
void shell_add_tree(const Frame *f, const char *word);

/* A directory, as shell_from_cwd gives it, standing for files whose names
 * the command knows only when it runs; and where names the command made in
 * it or on the way to it lead (add_alias). */
void shell_add_unread_path(const Frame *f, const char *word);

/* A directory below which go files whose names xargs reads. */
void shell_add_unread(const Frame *f, const char *word);

/* Targets that cannot be named: the words xargs reads, the files find
 * finds, a `~` with no $HOME. They may be anything below the directory the
 * command runs in (or find's starting points), so that directory stands
 * for them, as a tree: refused whenever anything protected lies below it.
 * (Anything elsewhere escapes this hook; the kernel sandbox is the
 * boundary.) The names read are told apart, for the explanation. */
void shell_unknown_targets_of(const Frame *f, bool xargs);

/* shell_unknown_targets_of for the names xargs reads. */
void shell_unknown_targets(const Frame *f);

/* The directory the command is in, absolute, as a word of the reader, or
 * NULL when a `cd` went where the hook cannot follow. */
char *shell_current_dir(const Frame *f);

/* Remembers that the command sets the variable named at the start of
 * `word` (NAME, or NAME=VALUE: the value too when it is written out). */
void shell_note_assigned(const Frame *f, const char *word);

/* `word` with the variables the command sets, $PWD and the environment's
 * replaced by their values (as a word of the reader, a new string). */
char *shell_expand_environment(const Frame *f, const char *word);

/* Where in `word` begins what the command knows only when it runs: the
 * names read (Frame.replace), or with `expansions` a word the shell
 * expands; NULL when it is all written. *names: whether it stands for the
 * names read, below find's starting points (names_read_dirs), rather than
 * for anything below the working directory. */
const char *shell_unknown_part(const Frame *f, const char *word, bool expansions, bool *names);

/* The trees `word` may be, unknown from `x` on, as shell_from_cwd gives
 * them: the directory written before that part (the working directory if none),
 * and for the names read (`names`) where those are too, as they may hold
 * `..` (`xargs -I{} rm src/{}` reading `../Cargo.lock`). The one written
 * comes first, for the explanation. */
void shell_unknown_dirs(const Frame *f, const char *word, const char *x, bool names,
                        Words *out);

/* Adds a target, each of the words its braces make (`> secret.{txt,y}`)
 * and the word as written (a shell without brace expansion, or the
 * braces quoted, which the reader no longer tells apart). Too many: all
 * that the directory the command is in holds. */
void shell_add_target_as(const Frame *f, const char *word, unsigned how);

/* A target, and with `tree` its subtree. */
void shell_add_target(const Frame *f, const char *word, bool tree);

/* Remembers where the name `name` (as shell_from_cwd gives it) that ln,
 * link, cp -s/-l or mv makes for the operand `src` leads (add_alias). A
 * symbolic link's relative text leads on from the directory it is in,
 * which may itself be reached through a link, on disk or made by the
 * command: from each of those. A renamed or hard-linked symbolic link
 * (on disk, or made earlier in the command) keeps its text, and so leads
 * on from its new place. */
void shell_record_made(const Frame *f, const char *src, const char *name, const CopyOptions *o);

/* ---- shell-write.c: the writer table's commands ------------------------- */

/* cp/install/ln/rsync SRC… DEST (or -t DEST SRC…): DEST, or DEST/basename(SRC)
 * for every source when DEST is, or may be by the time it runs, a
 * directory. */
void shell_copy_targets(const Frame *f, const char *cmd, char **plain, size_t np,
                        const CopyOptions *o, const Xargs *xargs);

/* What the command argv[0], the writer `w` of shell-writers.c, writes,
 * with the string that stands for the names xargs reads
 * (-I STR, find's `{}`) known to shell_add_target. */
void shell_command_targets(const Frame *f, const ShellWriter *w, char **argv, size_t argc,
                           const Xargs *xargs);

/* ---- shell-find.c ------------------------------------------------------- */

/* find START… EXPR: -delete removes whatever it finds below each start
 * point, -exec/-execdir/-ok/-okdir CMD … {} run CMD on it (read as xargs
 * -I{} would be, the names below the start points), -fprint FILE and the
 * like write FILE. Tests and other actions change nothing.
 *
 * A start point the shell expands ($DIR, $(…)) may be any tree below the
 * directory written before it, as for rm -r; under xargs -I (or another
 * find's -exec) one holding its string is any of the names read. The
 * words plain xargs appends come after the expression, where find refuses
 * them, or (no input) there are none: it is read as written. */
void shell_find_targets(const Frame *f, char **args, size_t n, const Xargs *xargs);

/* ---- shell-git.c -------------------------------------------------------- */

/* The working tree holding the directory the command is in (where `.git`
 * is, as `git rev-parse --show-toplevel` finds it), or NULL. */
char *shell_git_toplevel(const Frame *f);

/* git rm, mv, checkout, restore, reset, clean: the paths of the working
 * tree they write. Branches, commits and the index are no files; the
 * subcommands that merge, apply or switch change files only the history
 * knows, which is the kernel's to stop. */
void shell_git_targets(const Frame *f, char **args, size_t n, const Xargs *xargs);

/* ---- shell.c: the commands run, and where they run ---------------------- */

/* cd, pushd and popd: where later relative paths are. */
void shell_change_dir(const Frame *f, const char *cmd, char **args, size_t n);

/* One simple command, its words already split, run by xargs or not. */
void shell_run_words(const Frame *f, char **argv, size_t argc, Xargs xargs);
