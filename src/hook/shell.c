/* SPDX-License-Identifier: Apache-2.0 */
/* What a shell command plainly writes. A small reader of POSIX shell words
 * and operators, enough for `echo x > f`, `rm -rf d`, `sed -i s/a/b/ f`,
 * `cd d && mv a b`, `if …; then cp a dir/; fi`, `sudo -u u rm f` and an
 * apply_patch heredoc; anything cleverer is the kernel's business, which is
 * why this is best effort. */
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook/hook.h"
#include "hook/shell.h"
#include "path.h"

/* How deep sh -c, eval, env -S and command substitutions nest. */
#define MAX_DEPTH 8
/* How many earlier `cd`s pushd and open subshells keep: each is a copy, and
 * a long enough command line must not cost quadratic memory. */
#define MAX_SAVED_DIRS 64
/* How many names made by ln and mv are remembered, how many names one
 * path may stand for through them, and how many steps following them may
 * take in one command: past any, the command is refused rather than read
 * in part (add_alias, alias_images). */
#define MAX_ALIASES 128
#define MAX_ALIAS_IMAGES 256
#define MAX_ALIAS_STEPS 4096

/* Where the string `r` (xargs -I's, find's `{}`) is in `word`, or NULL:
 * the two compare as the text they stand for, so a `$` quoted in one and
 * bare in the other (a `$` the shell keeps either way) is the same. */
static const char *replace_in(const char *word, const char *r) {
  if (r == NULL || r[0] == '\0') {
    return NULL;
  }
  /* strstr(3) is linear in both; `$` is taken as the text it stands for. */
  _cleanup_free_ char *w = shell_literal_text(word);
  _cleanup_free_ char *t = shell_literal_text(r);
  const char *at = strstr(w, t);
  return at != NULL ? word + (at - w) : NULL;
}

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
  /* The last stat(2)s and lstat(2)s (stat_word): a long command names the
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
  /* find's starting points while its -exec runs, as from_cwd gives them
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

/* How a target is written (add_target_as). */
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
static bool charge(const Frame *f, size_t units) {
  return hook_request_charge(f->sh->req, units);
}

static const char *home(void);

/* A scratch buffer for the words of `text` (ShellLexer.scratch). */
static char *scratch_for(const char *text) {
  return xmalloc(strlen(text) + 2 * (home() != NULL ? strlen(home()) : 0) + 8 + 1);
}

/* A command run by xargs gets more arguments than it was written with. */
typedef struct {
  bool on;
  const char *replace; /* -I STR: STR in the words stands for them; NULL: appended */
} Xargs;

static ShellLexer lexer(const Frame *f);

/* $HOME, with which a `~` is expanded; NULL when it is unset or not an
 * absolute path and a `~` cannot be placed. */
static const char *home_dir;

static const char *home(void) {
  return home_dir;
}

/* Looks $HOME up once for a whole command (home()). */
static void home_init(void) {
  const char *h = getenv("HOME");
  home_dir = h != NULL && h[0] == '/' ? h : NULL;
}

/* A path that still starts with the `~` that could not be expanded. */
static bool is_unknown_tilde(const char *p) {
  return p[0] == '~' && (p[1] == '/' || p[1] == '\0') && home() == NULL;
}

/* `path` as seen from the request's directory, after any `cd`. A `~`
 * that could not be expanded is the home directory, wherever that is. */
static char *from_cwd(const Frame *f, const char *path) {
  if (f->at->cd == NULL || path[0] == '/' || is_unknown_tilde(path)) {
    return xstrdup(path);
  }
  return path_join(f->at->cd, path);
}

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

/* A place of its own for a part of the command whose `cd`s end with it,
 * starting where `at` is; place_clear when it ends. */
static Place place_copy(const Place *at) {
  return (Place){.cd = at->cd != NULL ? xstrdup(at->cd) : NULL, .cd_unknown = at->cd_unknown};
}

static void place_clear(Place *at) {
  free(at->cd);
  at->cd = NULL;
}

/* The file `word` names as the command would see it, as a path for the
 * system calls; NULL for a `~` that cannot be placed. */
static char *word_file(const Frame *f, const char *word) {
  _cleanup_free_ char *w = from_cwd(f, word);
  if (is_unknown_tilde(w)) {
    return NULL;
  }
  _cleanup_free_ char *p = shell_literal_text(w);
  return f->sh->req->cwd != NULL ? path_join(f->sh->req->cwd, p) : xstrdup(p);
}

/* The same for `p` as from_cwd gives it; NULL too when it is relative to
 * where only running the command tells. */
static char *path_file(const Frame *f, const char *p) {
  if (is_unknown_tilde(p) || (f->at->cd_unknown && p[0] != '/')) {
    return NULL;
  }
  _cleanup_free_ char *t = shell_literal_text(p);
  return f->sh->req->cwd != NULL ? path_join(f->sh->req->cwd, t) : xstrdup(t);
}

/* stat(2) of `word` as the command would see it, or lstat(2) unless
 * `follow`. */
static bool stat_word(const Frame *f, const char *word, struct stat *st, bool follow) {
  /* A system call costs what reading some 64 bytes does. */
  if (!hook_request_charge(f->sh->req, 64)) {
    return false;
  }
  const char *cd = f->at->cd != NULL ? f->at->cd : "";
  for (size_t i = 0; i < ELEMENTSOF(f->sh->stats) && f->sh->stats[i].word != NULL; i++) {
    if (f->sh->stats[i].follow == follow && streq(f->sh->stats[i].word, word) &&
        streq(f->sh->stats[i].cd, cd)) {
      *st = f->sh->stats[i].st;
      return f->sh->stats[i].ok;
    }
  }
  _cleanup_free_ char *abs = word_file(f, word);
  bool ok = abs != NULL && (follow ? stat(abs, st) : lstat(abs, st)) == 0;
  size_t i = f->sh->next_stat++ % ELEMENTSOF(f->sh->stats);
  free(f->sh->stats[i].word);
  free(f->sh->stats[i].cd);
  f->sh->stats[i].word = xstrdup(word);
  f->sh->stats[i].cd = xstrdup(cd);
  f->sh->stats[i].follow = follow;
  f->sh->stats[i].ok = ok;
  if (ok) {
    f->sh->stats[i].st = *st;
  }
  return ok;
}

static bool is_dir(const Frame *f, const char *word, bool follow) {
  struct stat st;
  return stat_word(f, word, &st, follow) && S_ISDIR(st.st_mode);
}

/* Whether `p`, as from_cwd gives it, is relative to a directory only
 * running the command tells: then it goes to HookRequest.somewhere. */
static bool somewhere(const Frame *f, const char *p) {
  return f->at->cd_unknown && p[0] != '/' && !is_unknown_tilde(p);
}

/* A tree, as from_cwd gives it. */
static void add_tree(const Frame *f, const char *word) {
  _cleanup_free_ char *p = shell_literal_text(word);
  if (somewhere(f, p)) {
    hook_request_add_somewhere(f->sh->req, p, true);
    return;
  }
  hook_request_add_tree(f->sh->req, p);
}

/* A path as from_cwd gives it, written (and with `tree` its subtree). */
static void add_path(const Frame *f, const char *word, bool tree) {
  _cleanup_free_ char *p = shell_literal_text(word);
  if (somewhere(f, p)) {
    hook_request_add_somewhere(f->sh->req, p, tree);
    return;
  }
  hook_request_add_path(f->sh->req, p);
  if (tree) {
    add_tree(f, p);
  }
}

static void unknown_targets_of(const Frame *f, bool xargs);

/* `p`, which starts with a `~` that could not be expanded. With no $HOME,
 * bash expands `~` to the user's passwd entry; but the agent's shell may
 * know a HOME the hook was not given. Both. */
static void add_tilde_target(const Frame *f, const char *p, bool tree) {
  unknown_targets_of(f, false);
  struct passwd *pw = getpwuid(getuid());
  if (pw == NULL || pw->pw_dir == NULL || pw->pw_dir[0] != '/') {
    return;
  }
  _cleanup_free_ char *dir = shell_literal_word(pw->pw_dir);
  _cleanup_free_ char *expanded = xasprintf("%s%s", dir, p + 1);
  add_path(f, expanded, tree);
}

static void add_unread_one(const Frame *f, const char *word) {
  if (is_unknown_tilde(word)) {
    add_tilde_target(f, word, true);
    return;
  }
  _cleanup_free_ char *p = shell_literal_text(word);
  if (somewhere(f, p)) {
    hook_request_add_somewhere(f->sh->req, p, true);
    return;
  }
  hook_request_add_unread(f->sh->req, p);
}

static void alias_images(const Frame *f, const char *p, bool entry, bool below, Words *out);

/* A directory, as from_cwd gives it, standing for files whose names the
 * command knows only when it runs; and where names the command made in it
 * or on the way to it lead (add_alias). */
static void add_unread_path(const Frame *f, const char *word) {
  add_unread_one(f, word);
  Words images = {0};
  alias_images(f, word, false, true, &images);
  for (size_t i = 0; i < images.n; i++) {
    add_unread_one(f, images.v[i]);
  }
  shell_words_clear(&images);
}

/* A directory below which go files whose names xargs reads. */
static void add_unread(const Frame *f, const char *word) {
  _cleanup_free_ char *p = from_cwd(f, word);
  add_unread_path(f, p);
}

/* Where the names xargs reads or find finds may be, as from_cwd gives
 * them: below find's starting points while its -exec runs, else anything
 * below the directory the command runs in. */
static void names_read_dirs(const Frame *f, Words *out) {
  if (f->below != NULL) {
    for (size_t i = 0; i < f->n_below; i++) {
      shell_words_add(out, f->below[i], strlen(f->below[i]));
    }
    return;
  }
  const char *dir = f->at->cd != NULL && !is_unknown_tilde(f->at->cd) ? f->at->cd : ".";
  shell_words_add(out, dir, strlen(dir));
}

/* Targets that cannot be named: the words xargs reads, the files find
 * finds, a `~` with no $HOME. They may be anything below the directory the
 * command runs in (or find's starting points), so that directory stands
 * for them, as a tree: refused whenever anything protected lies below it.
 * (Anything elsewhere escapes this hook; the kernel sandbox is the
 * boundary.) The names read are told apart, for the explanation. */
static void unknown_targets_of(const Frame *f, bool xargs) {
  if (!xargs) {
    add_tree(f, f->at->cd != NULL && !is_unknown_tilde(f->at->cd) ? f->at->cd : ".");
    return;
  }
  Words dirs = {0};
  names_read_dirs(f, &dirs);
  for (size_t i = 0; i < dirs.n; i++) {
    add_unread_path(f, dirs.v[i]);
  }
  shell_words_clear(&dirs);
}

static void unknown_targets(const Frame *f) {
  unknown_targets_of(f, true);
}

/* `p`, as from_cwd gives it, absolute (a word of the reader) with its `.`
 * and `..` as written, or NULL when it is relative to where only running
 * the command tells. */
static char *anchored_raw(const Frame *f, const char *p) {
  if (p[0] == '/') {
    return xstrdup(p);
  }
  if (f->at->cd_unknown || is_unknown_tilde(p)) {
    return NULL;
  }
  _cleanup_free_ char *here = getcwd(NULL, 0);
  const char *cwd = f->sh->req->cwd != NULL ? f->sh->req->cwd : here;
  if (cwd == NULL || cwd[0] != '/') {
    return NULL;
  }
  _cleanup_free_ char *base = shell_literal_word(cwd);
  return path_join(base, p);
}

/* The same without `.` and `..`. */
static char *anchored(const Frame *f, const char *p) {
  _cleanup_free_ char *raw = anchored_raw(f, p);
  return raw != NULL ? path_normalize(raw) : NULL;
}

/* The directory the command is in, absolute, as a word of the reader, or
 * NULL when a `cd` went where the hook cannot follow. */
static char *current_dir(const Frame *f) {
  return f->at->cd_unknown ? NULL : anchored(f, f->at->cd != NULL ? f->at->cd : ".");
}

/* The command's own setting of the variable `name`: its entry in
 * Shell.assigned (the last one), or NULL. */
static const char *assigned(const Frame *f, const char *name) {
  size_t len = strlen(name);
  for (size_t i = f->sh->assigned.n; i-- > 0;) {
    const char *a = f->sh->assigned.v[i];
    if (strncmp(a, name, len) == 0 && (a[len] == '\0' || a[len] == '=')) {
      return a;
    }
  }
  return NULL;
}

/* Remembers that the command sets the variable named at the start of
 * `word` (NAME, or NAME=VALUE: the value too when it is written out). */
static void note_assigned(const Frame *f, const char *word) {
  size_t len = 0;
  while (word[len] == '_' || isalnum((unsigned char)word[len])) {
    len++;
  }
  if (len == 0 || isdigit((unsigned char)word[0]) ||
      !(word[len] == '\0' || word[len] == '=' || (word[len] == '+' && word[len + 1] == '='))) {
    return;
  }
  bool known = word[len] == '=' && shell_expansion(word + len + 1) == NULL;
  if (f->sh->assigned.n < 256) {
    shell_words_add(&f->sh->assigned, word, known ? strlen(word) : len);
  }
}

/* `word` with each $NAME and ${NAME} the environment holds (the agent's,
 * which the hook inherits) replaced by its value; $PWD is the directory
 * the command is in. Left as they are: what the command sets itself, and
 * $OLDPWD (wherever the agent's shell was before). Without `environment`
 * only what the command itself says is replaced: the values it assigns,
 * written out, and $PWD (`.` after a `cd` the hook cannot follow: from
 * there on, relative names are relative to it). */
static char *expand_variables(const Frame *f, const char *word, bool environment) {
  size_t wlen = strlen(word), size = wlen + 1, n = 0;
  char *out = xmalloc(size);
  for (const char *c = word; *c != '\0';) {
    bool braced = c[0] == '$' && c[1] == '{';
    const char *name = c + 1 + braced;
    size_t len = 0;
    while (c[0] == '$' && (name[len] == '_' || isalnum((unsigned char)name[len])) &&
           !(len == 0 && isdigit((unsigned char)name[0]))) {
      len++;
    }
    /* A word of the reader: the command's own value is one already, the
     * environment's is taken as it is (the shell expands it once). */
    const char *value = NULL;
    _cleanup_free_ char *own = NULL;
    if (len > 0 && (!braced || name[len] == '}')) {
      _cleanup_free_ char *var = xstrndup(name, len);
      const char *set = assigned(f, var);
      if (set != NULL) {
        value = set[len] == '=' ? set + len + 1 : NULL;
      } else if (streq(var, "PWD")) {
        value = own = current_dir(f);
        if (own == NULL && !environment) {
          value = own = xstrdup(".");
        }
      } else if (environment && !streq(var, "OLDPWD") && getenv(var) != NULL) {
        value = own = shell_literal_word(getenv(var));
      }
    }
    size_t len_value = value != NULL ? strlen(value) : 0;
    if (len_value > 0 && hook_request_charge(f->sh->req, len_value)) {
      if (n + len_value + wlen + 1 > size) {
        /* Twice what it takes: many variables in one word stay linear. */
        size = 2 * (n + len_value + wlen + 1);
        out = xreallocarray(out, size, 1);
      }
      n = (size_t)(stpcpy(out + n, value) - out);
      c = name + len + braced;
    } else {
      out[n++] = *c++;
    }
  }
  out[n] = '\0';
  return out;
}

static char *expand_environment(const Frame *f, const char *word) {
  return expand_variables(f, word, true);
}

/* Where in `word` begins what the command knows only when it runs: the
 * names read (Frame.replace), or with `expansions` a word the shell
 * expands; NULL when it is all written. *names: whether it stands for the
 * names read, below find's starting points (names_read_dirs), rather than
 * for anything below the working directory. */
static const char *unknown_part(const Frame *f, const char *word, bool expansions, bool *names) {
  const char *x = expansions ? shell_expansion(word) : NULL;
  const char *r = replace_in(word, f->replace);
  /* In a script xargs or find runs, $1, $@ and the like are the names. */
  *names = f->in_script || (r != NULL && (x == NULL || r < x));
  return x == NULL || (r != NULL && r < x) ? r : x;
}

/* The trees `word` may be, unknown from `x` on, as from_cwd gives them:
 * the directory written before that part (the working directory if none),
 * and for the names read (`names`) where those are too, as they may hold
 * `..` (`xargs -I{} rm src/{}` reading `../Cargo.lock`). The one written
 * comes first, for the explanation. */
static void unknown_dirs(const Frame *f, const char *word, const char *x, bool names,
                         Words *out) {
  const char *slash = x;
  while (slash > word && slash[-1] != '/') {
    slash--;
  }
  if (slash != word || !names) {
    _cleanup_free_ char *dir = slash == word ? xstrdup(".")
                               : slash - 1 == word ? xstrdup("/")
                                                   : xstrndup(word, (size_t)(slash - 1 - word));
    _cleanup_free_ char *p = from_cwd(f, dir);
    shell_words_add(out, p, strlen(p));
  }
  if (names) {
    names_read_dirs(f, out);
  }
}

/* How far up a name -execdir writes is looked for, one by one; above, the
 * whole tree from where its `..` lead counts. */
#define MAX_EXECDIR_UP 16
/* How many start points -execdir's command is read in, one by one. */
#define MAX_EXECDIR_STARTS 64

/* -execdir runs its command in the directory of each file found: for the
 * starting point itself the one holding it, then the starting point
 * (Frame.execdir, the command's `cd`), then any below. So `p`, a relative
 * name it writes as resolved against the starting point, is also that
 * name in each of them: in the directory above, and below the starting
 * point any (which it stands for, as for `{}`), unless leading `..` climb
 * from there to directories between it and where they lead. */
static void execdir_targets(const Frame *f, const char *p, bool tree) {
  const char *dir = f->execdir;
  size_t len = strlen(dir);
  if (strncmp(p, dir, len) != 0) {
    return; /* a `cd` elsewhere in the command */
  }
  const char *rel = p + len;
  if (len > 0 && dir[len - 1] != '/') {
    if (rel[0] != '/') {
      return;
    }
    rel++;
  }
  size_t up = 0;
  const char *name = rel;
  while (name[0] == '.' && name[1] == '.' && (name[2] == '/' || name[2] == '\0')) {
    up++;
    name += name[2] == '/' ? 3 : 2;
  }
  _cleanup_free_ char *parent = path_join(dir, "..");
  _cleanup_free_ char *above = path_join(parent, rel);
  add_path(f, above, tree);
  /* From a directory d levels below the starting point, d < up: up - d
   * levels above it. */
  if (up > 1 && up - 1 > MAX_EXECDIR_UP) {
    _cleanup_free_ char *climb = xstrndup(rel, 3 * (up - 1));
    _cleanup_free_ char *top = path_join(dir, climb);
    add_unread_path(f, top);
  } else {
    _cleanup_free_ char *cur = xstrdup(dir);
    for (size_t j = 1; j < up; j++) {
      char *next = path_join(cur, "..");
      free(cur);
      cur = next;
      _cleanup_free_ char *q = path_join(cur, name);
      add_path(f, q, tree);
    }
  }
  add_unread_path(f, dir);
}

/* `p`, as from_cwd gives it, as the command's names made are kept: absolute
 * and normalised, or after a `cd` the hook cannot follow, relative to where
 * it leads (HookRequest.somewhere). NULL for a `~` that cannot be placed. */
static char *alias_key(const Frame *f, const char *p) {
  if (is_unknown_tilde(p)) {
    return NULL;
  }
  return somewhere(f, p) ? path_normalize(p) : anchored(f, p);
}

/* Remembers that `name` (as from_cwd gives it), once the command has made
 * it, leads to `to` (as from_cwd gives it, `..` not yet resolved): a link
 * ln makes, another name for a file, the new name of what mv moves. Names
 * written through it later are judged where it leads too (`ln -s
 * ../Cargo.lock x && echo y > x`, `mv lnk d && rm -r d/`), which the file
 * system cannot tell before the command runs. One name may lead to
 * several places, when where is uncertain. `text`: the symbolic link's,
 * when it is one (NULL if not). */
static void add_alias(const Frame *f, const char *name, const char *to, const char *text) {
  _cleanup_free_ char *key = alias_key(f, name);
  if (key == NULL || streq(key, "/") || streq(key, ".")) {
    return;
  }
  _cleanup_free_ char *dest = somewhere(f, to) ? xstrdup(to) : anchored_raw(f, to);
  _cleanup_free_ char *norm = dest != NULL ? path_normalize(dest) : NULL;
  if (dest == NULL || streq(norm, key)) {
    return; /* `ln -s x x` leads nowhere new */
  }
  for (size_t i = 0; i < f->sh->alias_names.n; i++) {
    if (streq(f->sh->alias_names.v[i], key) && streq(f->sh->alias_to.v[i], dest)) {
      return;
    }
  }
  if (f->sh->alias_names.n == MAX_ALIASES) {
    /* Past that many, a later name may lead anywhere. */
    f->sh->req->unknown_target = true;
    return;
  }
  shell_words_add(&f->sh->alias_names, key, strlen(key));
  shell_words_add(&f->sh->alias_to, dest, strlen(dest));
  shell_words_add(&f->sh->alias_text, text != NULL ? text : "", text != NULL ? strlen(text) : 0);
}

/* The names `cur` (absolute, or relative as alias_key keeps it, `..` not
 * yet resolved) also stands for, one alias away, added to `todo`: wherever
 * a leading part of it, resolved so far, is a name made, that part
 * replaced by where it leads (so `g/../golden` through a link `g` is
 * judged from where `g` leads). Not the whole of it when `entry` (a name
 * removed or renamed itself takes nothing with it). With `below`, also
 * where any name made below it leads: what a tree written there reaches. */
static void alias_step(const Frame *f, const char *cur, bool entry, bool below, Words *todo) {
  size_t n = strlen(cur);
  _cleanup_free_ char *norm = xmalloc(n + 2);
  _cleanup_free_ size_t *starts = xcalloc(n / 2 + 2, sizeof(size_t));
  size_t nl = 0, depth = 0;
  bool absolute = cur[0] == '/';
  norm[0] = '\0';
  for (size_t i = 0; cur[i] != '\0';) {
    while (cur[i] == '/') {
      i++;
    }
    size_t s = i;
    while (cur[i] != '\0' && cur[i] != '/') {
      i++;
    }
    size_t len = i - s;
    if (len == 0 || (len == 1 && cur[s] == '.')) {
      continue;
    }
    bool up = len == 2 && cur[s] == '.' && cur[s + 1] == '.';
    bool last_up = depth > 0 && streq(norm + starts[depth - 1] + (starts[depth - 1] > 0), "..");
    if (up && depth > 0 && !last_up) {
      nl = starts[--depth];
      norm[nl] = '\0';
      continue;
    }
    if (up && absolute) {
      continue; /* `/..` is `/` */
    }
    starts[depth++] = nl;
    if (absolute || nl > 0) {
      norm[nl++] = '/';
    }
    memcpy(norm + nl, cur + s, len);
    nl += len;
    norm[nl] = '\0';
    for (size_t a = 0; a < f->sh->alias_names.n; a++) {
      if (streq(norm, f->sh->alias_names.v[a]) && !(entry && cur[i] == '\0')) {
        _cleanup_free_ char *q = xasprintf("%s%s", f->sh->alias_to.v[a], cur + i);
        shell_words_add(todo, q, strlen(q));
      }
    }
  }
  if (!below) {
    return;
  }
  for (size_t a = 0; a < f->sh->alias_names.n; a++) {
    const char *name = f->sh->alias_names.v[a];
    size_t len = strlen(name);
    if (nl < len && strncmp(name, norm, nl) == 0 && (nl == 0 || name[nl] == '/')) {
      shell_words_add(todo, f->sh->alias_to.v[a], strlen(f->sh->alias_to.v[a]));
    }
  }
}

/* What `p`, as from_cwd gives it, may also be through the names the
 * command made (add_alias), one after another: added to `out` as from_cwd
 * would give them (trees too with `below`; see alias_step). Each is taken
 * once, so a cycle of links ends; past MAX_ALIAS_IMAGES the command is
 * refused (HookRequest.unknown_target), as no reading of it is cheap. */
static void alias_images(const Frame *f, const char *p, bool entry, bool below, Words *out) {
  if (f->sh->alias_names.n == 0 || is_unknown_tilde(p)) {
    return;
  }
  _cleanup_free_ char *start = somewhere(f, p) ? xstrdup(p) : anchored_raw(f, p);
  if (start == NULL) {
    return;
  }
  Words seen = {0};
  shell_words_add(&seen, start, strlen(start));
  for (size_t t = 0; t < seen.n; t++) {
    if (++f->sh->alias_steps > MAX_ALIAS_STEPS) {
      f->sh->req->unknown_target = true;
      break;
    }
    Words next = {0};
    alias_step(f, seen.v[t], entry && t == 0, below, &next);
    for (size_t j = 0; j < next.n; j++) {
      bool known = false;
      for (size_t k = 0; k < seen.n && !known; k++) {
        known = streq(seen.v[k], next.v[j]);
      }
      if (known) {
        continue;
      }
      if (seen.n > MAX_ALIAS_IMAGES) {
        f->sh->req->unknown_target = true;
        break;
      }
      shell_words_add(&seen, next.v[j], strlen(next.v[j]));
    }
    shell_words_clear(&next);
  }
  for (size_t t = 1; t < seen.n; t++) {
    size_t len = strlen(seen.v[t]);
    _cleanup_free_ char *q = path_normalize(seen.v[t]);
    /* A trailing `/` follows a link: kept. */
    _cleanup_free_ char *w = len > 0 && seen.v[t][len - 1] == '/' && !streq(q, "/")
                                 ? xasprintf("%s/", q)
                                 : xstrdup(q);
    shell_words_add(out, w, strlen(w));
  }
  shell_words_clear(&seen);
}

/* A written name as from_cwd gives it: an entry when the command takes
 * names as they are (TARGET_ENTRY), else a path. */
static void add_named(const Frame *f, const char *p, bool tree, bool entry) {
  size_t len = strlen(p);
  if (entry && len > 0 && p[len - 1] != '/' && !somewhere(f, p)) {
    /* With a trailing `/` a link is followed: `rm -r link/` empties what
     * it leads to. */
    _cleanup_free_ char *name = shell_literal_text(p);
    hook_request_add_entry(f->sh->req, name, tree);
    return;
  }
  add_path(f, p, tree);
}

/* How many words one brace expansion may make before it stands for
 * anything in the directory the command is in. */
#define MAX_BRACE_WORDS 64

/* The first brace expansion in `word`: `{` at word[*open] and its `}` at
 * word[*close], holding a `,` at its own level ({a,b}) or `..` ({1..9}).
 * `${…}` is a parameter, and `{}` or `{x}` stay as they are. */
static bool brace_group(const char *word, size_t *open, size_t *close, bool *sequence) {
  for (const char *b = strchr(word, '{'); b != NULL; b = strchr(b + 1, '{')) {
    if (b > word && b[-1] == '$') {
      continue;
    }
    int depth = 0;
    bool comma = false;
    for (const char *c = b; *c != '\0'; c++) {
      depth += *c == '{';
      depth -= *c == '}';
      comma |= depth == 1 && *c == ',';
      if (depth == 0) {
        _cleanup_free_ char *inner = xstrndup(b + 1, (size_t)(c - b - 1));
        *sequence = !comma && strstr(inner, "..") != NULL && strchr(inner, '{') == NULL;
        if (comma || *sequence) {
          *open = (size_t)(b - word);
          *close = (size_t)(c - word);
          return true;
        }
        break;
      }
    }
  }
  return false;
}

/* The words `word` stands for once its braces are expanded ({a,b} one
 * after the other, nested too; a sequence {1..9} as the glob `*`, which
 * matches each of them); false when there is no brace expansion in it,
 * or more than MAX_BRACE_WORDS. */
static bool brace_expand(const Frame *f, const char *word, Words *out) {
  Words todo = {0};
  shell_words_add(&todo, word, strlen(word));
  bool expanded = false, over = false;
  while (todo.n > 0 && !over) {
    char *w = todo.v[--todo.n];
    size_t open, close;
    bool sequence;
    if (!brace_group(w, &open, &close, &sequence)) {
      shell_words_add(out, w, strlen(w));
      free(w);
      continue;
    }
    expanded = true;
    const char *body = w + open + 1;
    const char *end = w + close;
    const char *suffix = end + 1;
    /* Onto the stack last first, so that they come out in order. */
    Words alts = {0};
    for (const char *alt = body; alt <= end && !over;) {
      /* The next `,` at the group's own level. */
      const char *c = alt;
      for (int depth = 0; c < end && !(depth == 0 && *c == ',' && !sequence); c++) {
        depth += *c == '{';
        depth -= *c == '}';
      }
      const char *piece = sequence ? "*" : alt;
      size_t plen = sequence ? 1 : (size_t)(c - alt);
      _cleanup_free_ char *next = xasprintf("%.*s%.*s%s", (int)open, w, (int)plen, piece, suffix);
      over = todo.n + alts.n + out->n >= MAX_BRACE_WORDS || !charge(f, strlen(next) + 1);
      shell_words_add(&alts, next, strlen(next));
      alt = sequence ? end + 1 : c + 1;
    }
    for (size_t i = alts.n; i-- > 0;) {
      shell_words_add(&todo, alts.v[i], strlen(alts.v[i]));
    }
    shell_words_clear(&alts);
    free(w);
  }
  shell_words_clear(&todo);
  if (over) {
    shell_words_clear(out);
  }
  return expanded && !over;
}

static void add_target_one(const Frame *f, const char *word, unsigned how);

/* Adds a target, each of the words its braces make (`> secret.{txt,y}`)
 * and the word as written (a shell without brace expansion, or the
 * braces quoted, which the reader no longer tells apart). Too many: all
 * that the directory the command is in holds. */
static void add_target_as(const Frame *f, const char *word, unsigned how) {
  if (strchr(word, '{') != NULL && strchr(word, '}') != NULL) {
    Words words = {0};
    size_t open, close;
    bool sequence;
    if (brace_expand(f, word, &words)) {
      for (size_t i = 0; i < words.n; i++) {
        add_target_one(f, words.v[i], how);
      }
    } else if (brace_group(word, &open, &close, &sequence)) {
      unknown_targets_of(f, false);
    }
    shell_words_clear(&words);
  }
  add_target_one(f, word, how);
}

/* A target, and with `tree` its subtree. */
static void add_target(const Frame *f, const char *word, bool tree) {
  add_target_as(f, word, tree ? TARGET_TREE : 0);
}

/* Adds a target. A glob stays a glob: it is decided against the patterns
 * (matcher_match_glob), never by listing directories. */
static void add_target_one(const Frame *f, const char *word, unsigned how) {
  bool tree = (how & TARGET_TREE) != 0;
  bool entry = (how & TARGET_ENTRY) != 0;
  _cleanup_free_ char *with_env = NULL;
  /* rm -r, and every write of a script xargs or find runs: a word the
   * shell expands may be anything. Elsewhere a file a variable names is
   * left to the kernel (`rm -f "$tmp"`, `> "$out"` are everywhere). */
  bool expansions = (tree && (how & TARGET_EXPANSIONS) != 0) || f->in_script;
  if (shell_expansion(word) != NULL) {
    /* `f=a.txt; echo x > "$f"`, `> "$PWD/a.txt"`: what the command says
     * itself is followed everywhere; the environment only where any
     * expansion counts. */
    with_env = expand_variables(f, word, expansions);
    word = with_env;
  }
  bool names = false;
  const char *x = unknown_part(f, word, expansions, &names);
  bool cd_unknown = false;
  if (x == NULL && f->in_script && f->at->cd != NULL && word[0] != '/') {
    /* `cd "$1" && rm -f x`: x is where the names are. */
    cd_unknown = unknown_part(f, f->at->cd, true, &names) != NULL;
    x = cd_unknown ? word : NULL;
  }
  if (x != NULL) {
    /* `rm -rf "$X"`, `xargs -I{} rm out/{}`, `sh -c 'rm "$1"'` under find
     * -exec: anything below the directory the word names before that
     * part. The word itself is none of them: it is left out. */
    Words dirs = {0};
    if (cd_unknown) {
      names_read_dirs(f, &dirs);
    } else {
      unknown_dirs(f, word, x, names, &dirs);
    }
    for (size_t i = 0; i < dirs.n; i++) {
      add_unread_path(f, dirs.v[i]);
    }
    shell_words_clear(&dirs);
    return;
  }
  _cleanup_free_ char *p = from_cwd(f, word);
  if (is_unknown_tilde(p)) {
    add_tilde_target(f, p, tree);
    return;
  }
  if (f->execdir != NULL && word[0] != '/') {
    execdir_targets(f, p, tree);
  }
  add_named(f, p, tree, entry);
  Words images = {0};
  alias_images(f, p, entry, tree && !entry, &images);
  for (size_t i = 0; i < images.n; i++) {
    add_named(f, images.v[i], tree, entry);
  }
  shell_words_clear(&images);
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

static bool is_digits(const char *s) {
  return s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

static bool in_list(const char *s, const char *const *list) {
  for (size_t i = 0; list[i] != NULL; i++) {
    if (s[0] == list[i][0] && streq(s, list[i])) {
      return true;
    }
  }
  return false;
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
    add_target(f, value, false); /* GNU time -o FILE writes FILE */
  } else if ((streq(w->name, "sudo") || streq(w->name, "sudoedit")) && opt == 'e') {
    st->edit = true;
  } else if (streq(w->name, "xargs") && (opt == 'I' || opt == 'i')) {
    st->xargs.replace = value != NULL ? value : "{}";
  }
}

/* Reads a wrapper's options from argv[k]; returns where they end. All of
 * these stop at the first word that is not an option, as getopt's "+". */
static size_t wrapper_options(const Frame *f, const Wrapper *w, char **argv, size_t argc, size_t k,
                              WrapperState *st) {
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

/* ---- what a command writes --------------------------------------------- */

/* rsync's host:path and rsync://: not a file here. */
static bool is_remote(const char *s) {
  const char *colon = strchr(s, ':');
  const char *slash = strchr(s, '/');
  return colon != NULL && (slash == NULL || colon < slash);
}

/* Where cp, install, ln or rsync put `src` when `dest` is a directory. */
static char *copy_into(const char *dest, const char *src, bool parents, bool rsync) {
  if (rsync && is_remote(src)) {
    src = strchr(src, ':') + 1;
  }
  size_t len = strlen(src);
  /* rsync a/ b copies what a holds into b itself. */
  bool contents = rsync && len > 0 && src[len - 1] == '/';
  while (len > 1 && src[len - 1] == '/') {
    len--;
  }
  _cleanup_free_ char *s = xstrndup(src, len);
  const char *name = parents ? s + strspn(s, "/") : base_name(s);
  if (contents || name[0] == '\0' || streq(name, ".") || streq(name, "..")) {
    return xstrdup(dest);
  }
  return path_join(dest, name);
}

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

/* The text of the symbolic link `word` names, as a word of the reader;
 * NULL when it is none (or cannot be read). */
static char *link_text(const Frame *f, const char *word) {
  _cleanup_free_ char *abs = word_file(f, word);
  struct stat st;
  if (abs == NULL || lstat(abs, &st) != 0 || !S_ISLNK(st.st_mode)) {
    return NULL;
  }
  char buf[PATH_MAX];
  ssize_t n = readlink(abs, buf, sizeof(buf) - 1);
  if (n <= 0) {
    return NULL;
  }
  buf[n] = '\0';
  return shell_literal_word(buf);
}

/* Remembers where the name `name` (as from_cwd gives it) that ln, link,
 * cp -s/-l or mv makes for the operand `src` leads (add_alias). A
 * symbolic link's relative text leads on from the directory it is in,
 * which may itself be reached through a link, on disk or made by the
 * command: from each of those. A renamed or hard-linked symbolic link
 * (on disk, or made earlier in the command) keeps its text, and so leads
 * on from its new place. */
static void record_made(const Frame *f, const char *src, const char *name, const CopyOptions *o) {
  _cleanup_free_ char *p = from_cwd(f, src);
  Words texts = {0};
  if (o->symbolic && !o->relative_link) {
    shell_words_add(&texts, src, strlen(src));
  } else if (o->symbolic) {
    add_alias(f, name, p, NULL); /* ln -r: a text that leads to SRC */
    return;
  } else {
    _cleanup_free_ char *text = link_text(f, src);
    _cleanup_free_ char *key = alias_key(f, p);
    if (text != NULL) {
      shell_words_add(&texts, text, strlen(text));
    }
    for (size_t i = 0; key != NULL && i < f->sh->alias_names.n; i++) {
      if (streq(f->sh->alias_names.v[i], key) && f->sh->alias_text.v[i][0] != '\0') {
        shell_words_add(&texts, f->sh->alias_text.v[i], strlen(f->sh->alias_text.v[i]));
      }
    }
    if (texts.n == 0) {
      add_alias(f, name, p, NULL);
      return;
    }
  }
  size_t len = strlen(name);
  while (len > 1 && name[len - 1] == '/') {
    len--;
  }
  _cleanup_free_ char *trimmed = xstrndup(name, len);
  _cleanup_free_ char *dir = path_dirname(trimmed);
  Words dirs = {0};
  shell_words_add(&dirs, dir, strlen(dir));
  alias_images(f, dir, false, false, &dirs);
  for (size_t i = 0, n = dirs.n; i < n; i++) {
    /* The directory as the file system resolves it. */
    _cleanup_free_ char *abs = path_file(f, dirs.v[i]);
    _cleanup_free_ char *real = abs != NULL ? path_resolve(abs) : NULL;
    if (real != NULL) {
      _cleanup_free_ char *w = shell_literal_word(real);
      shell_words_add(&dirs, w, strlen(w));
    }
  }
  for (size_t t = 0; t < texts.n; t++) {
    for (size_t i = 0; i < (texts.v[t][0] == '/' ? 1 : dirs.n); i++) {
      _cleanup_free_ char *to = streq(dirs.v[i], ".") ? xstrdup(texts.v[t])
                                                      : path_join(dirs.v[i], texts.v[t]);
      add_alias(f, name, to, texts.v[t]);
    }
  }
  shell_words_clear(&dirs);
  shell_words_clear(&texts);
}

/* cp/install/ln/rsync SRC… DEST (or -t DEST SRC…): DEST, or DEST/basename(SRC)
 * for every source when DEST is, or may be by the time it runs, a
 * directory. */
static void copy_targets(const Frame *f, const char *cmd, char **plain, size_t np,
                         const CopyOptions *o, const Xargs *xargs) {
  bool rsync = streq(cmd, "rsync");
  if (o->make_dirs) {
    for (size_t k = 0; k < np; k++) {
      add_target(f, plain[k], false);
    }
    if (xargs->on) {
      unknown_targets(f);
    }
    return;
  }
  const char *dest;
  size_t nsrc;
  bool dir_known;
  if (o->target_dir != NULL) {
    dest = o->target_dir;
    nsrc = np;
    dir_known = true;
  } else if (xargs->on && xargs->replace == NULL) {
    /* The destination is the last word xargs reads; with no input at
     * all GNU xargs runs the command once, and the last word written is.
     * mv/rsync --remove-source-files: any word written may be a source. */
    unknown_targets(f);
    for (size_t k = o->move_sources ? 0 : np ? np - 1 : np; k < np; k++) {
      if (!rsync || !is_remote(plain[k])) {
        add_target(f, plain[k], o->recursive);
      }
    }
    return;
  } else if (np == 1 && streq(cmd, "ln")) {
    dest = "."; /* ln TARGET: a link of that name here */
    nsrc = 1;
    dir_known = true;
  } else if (np < 2) {
    return;
  } else {
    dest = plain[np - 1];
    nsrc = np - 1;
    dir_known = !o->no_target_dir && is_dir(f, dest, !o->no_dereference);
  }
  if (rsync && is_remote(dest)) {
    return;
  }
  if (xargs->on) {
    /* Sources xargs reads: any name inside DEST. */
    if (replace_in(dest, xargs->replace) != NULL) {
      unknown_targets(f);
    } else {
      add_target(f, dest, false);
      add_unread(f, dest);
    }
    if (o->move_sources) {
      /* The sources go: those written, and those it reads. */
      for (size_t k = 0; k < nsrc; k++) {
        bool read = replace_in(plain[k], xargs->replace) != NULL;
        if (!read && (!rsync || !is_remote(plain[k]))) {
          add_target(f, plain[k], o->recursive);
        }
      }
      unknown_targets(f);
    }
    return;
  }
  size_t len = strlen(dest);
  /* cp -r SRC DEST copies into DEST when it exists; mv only then too, but
   * mv is "recursive" whatever DEST is, so that says nothing there. */
  bool may_be_dir = !o->no_target_dir && (dir_known || (len > 0 && dest[len - 1] == '/') ||
                                          nsrc > 1 || (o->recursive && !streq(cmd, "mv")));
  if (!dir_known || o->delete_dest) {
    /* A file, or with -r a new directory copied from the source. */
    add_target(f, dest, o->recursive || o->delete_dest);
  }
  if (may_be_dir) {
    for (size_t k = 0; k < nsrc; k++) {
      _cleanup_free_ char *into = copy_into(dest, plain[k], o->parents, rsync);
      add_target(f, into, o->recursive);
    }
  }
  if (o->move_sources) {
    /* mv renames a link itself; rsync --remove-source-files, left as it
     * was, is decided by where the names lead. */
    unsigned how = (o->recursive ? TARGET_TREE : 0) | (rsync ? 0 : TARGET_ENTRY);
    for (size_t k = 0; k < nsrc; k++) {
      if (!rsync || !is_remote(plain[k])) {
        add_target_as(f, plain[k], how);
      }
    }
  }
  /* The names ln and mv make lead to their sources from now on: the one
   * DEST names, or the one inside it (with a trailing `/`, only that). */
  if (!o->makes_links && (!o->move_sources || rsync)) {
    return;
  }
  /* Both, unless certain: a directory DEST may be made by the time it
   * runs. DEST/ is the new name only of a directory. */
  bool slash = len > 0 && dest[len - 1] == '/';
  for (size_t k = 0; k < nsrc; k++) {
    struct stat st;
    bool file = slash && stat_word(f, plain[k], &st, true) && !S_ISDIR(st.st_mode);
    /* The name inside first: a DEST that is a directory is not also the
     * link. */
    for (int inside = 1; inside >= 0; inside--) {
      if (inside ? o->no_target_dir : dir_known || nsrc > 1 || file) {
        continue;
      }
      _cleanup_free_ char *w = inside ? copy_into(dest, plain[k], false, false) : xstrdup(dest);
      _cleanup_free_ char *name = from_cwd(f, w);
      record_made(f, plain[k], name, o);
    }
  }
}

/* chmod's modes (`-w`, `-rwx`) and chattr's (`-i`) look like options. */
static bool is_mode_word(const char *cmd, const char *a) {
  if (a[0] != '-' || a[1] == '\0' || a[1] == '-') {
    return false;
  }
  if (streq(cmd, "chmod")) {
    return strspn(a + 1, "cfvR") != strlen(a + 1);
  }
  if (streq(cmd, "chattr")) {
    return strspn(a + 1, "aAcCdDeFijmPsStTux") == strlen(a + 1);
  }
  return false;
}

/* `f`, with the string that stands for the names xargs reads (-I STR,
 * find's `{}`) known to add_target: for the command xargs runs. */
static Frame with_replace(const Frame *f, const Xargs *xargs) {
  Frame in = *f;
  if (xargs->on && xargs->replace != NULL) {
    in.replace = xargs->replace;
  }
  return in;
}

/* The files a command (argv[0], the writer `w` of shell-writers.c) writes. */
static void command_writes(const Frame *f, const ShellWriter *w, char **argv, size_t argc,
                           const Xargs *xargs) {
  const char *cmd = w->name;
  char **args = argv + 1;
  size_t n = argc - 1;

  /* Which arguments are targets: every operand, unless `copy` says how
   * (the table in shell-writers.c). */
  bool copy = w->kind == SHELL_WRITES_COPY;
  bool recursive = (w->flags & SHELL_WRITER_TREE) != 0;
  bool skip_first = (w->flags & SHELL_WRITER_SKIP_FIRST) != 0;
  bool target_opt = (w->flags & SHELL_WRITER_TARGET_DIR) != 0;
  bool recursive_opts = (w->flags & SHELL_WRITER_RECURSIVE_R) != 0;
  const char *value_opts = w->value_opts;
  const char *const *value_longs = w->value_longs;
  if (w->kind == SHELL_WRITES_IN_PLACE) {
    bool in_place = false, script_given = false;
    for (size_t k = 0; k < n; k++) {
      in_place |= has_short_flag(args[k], 'i') || startswith(args[k], "--in-place");
      script_given |= streq(args[k], "-e") || streq(args[k], "-f") || streq(args[k], "-E") ||
                      startswith(args[k], "--expression") || startswith(args[k], "--file") ||
                      (has_short_flag(args[k], 'e') && !startswith(args[k], "--"));
    }
    if (!in_place) {
      return;
    }
    skip_first = !script_given;
  } else if (w->kind == SHELL_WRITES_DD) {
    for (size_t k = 0; k < n; k++) {
      if (startswith(args[k], "of=")) {
        add_target(f, args[k] + 3, false);
      }
    }
    return;
  }

  bool dashdash = false, skipped = false;
  CopyOptions co = {0};
  if (w->flags & SHELL_WRITER_MOVES) {
    /* Into DEST/basename(SRC) when DEST is a directory (so `mv x ..` is
     * no move of the parent). */
    co.recursive = true;
    co.move_sources = true;
  }
  /* link FILE1 FILE2: FILE2 is never a directory it goes into. */
  co.makes_links = (w->flags & SHELL_WRITER_LINKS) != 0;
  co.no_target_dir = (w->flags & SHELL_WRITER_NO_TARGET_DIR) != 0;
  char **plain = xcalloc(n + 1, sizeof(char *));
  size_t np = 0;
  for (size_t k = 0; k < n; k++) {
    const char *a = args[k];
    if (!dashdash && streq(a, "--")) {
      dashdash = true;
      continue;
    }
    if (is_option(a, dashdash) && !is_mode_word(cmd, a)) {
      if (a[1] == '-') {
        const char *eq = strchr(a, '=');
        _cleanup_free_ char *name = xstrndup(a, eq != NULL ? (size_t)(eq - a) : strlen(a));
        const char *value = eq != NULL ? eq + 1 : NULL;
        if (value == NULL && in_list(name, value_longs) && k + 1 < n) {
          value = args[++k];
        }
        if (target_opt && streq(name, "--target-directory")) {
          co.target_dir = value;
        } else if (streq(name, "--no-target-directory")) {
          co.no_target_dir = true;
        } else if (streq(name, "--recursive") || (copy && streq(name, "--archive"))) {
          co.recursive = true;
        } else if (streq(cmd, "ln") && (streq(name, "--symbolic") || streq(name, "--relative") ||
                                        streq(name, "--no-dereference"))) {
          co.symbolic |= streq(name, "--symbolic");
          co.relative_link |= streq(name, "--relative");
          co.no_dereference |= streq(name, "--no-dereference");
        } else if (streq(cmd, "cp") && (streq(name, "--symbolic-link") || streq(name, "--link"))) {
          co.makes_links = true;
          co.symbolic |= streq(name, "--symbolic-link");
        } else if (streq(name, "--parents") || (copy && streq(name, "--relative"))) {
          co.parents = true;
        } else if (streq(cmd, "rsync") &&
                   (streq(name, "--del") || startswith(name, "--delete"))) {
          co.delete_dest = true;
        } else if (streq(name, "--remove-source-files")) {
          co.move_sources = true;
        } else if (streq(cmd, "install") && streq(name, "--directory")) {
          co.make_dirs = true;
        } else if (streq(name, "--reference")) {
          skip_first = false; /* chmod --reference=F: no mode operand */
        }
        continue;
      }
      for (const char *c = a + 1; *c != '\0'; c++) {
        if (strchr(value_opts, *c) != NULL) {
          const char *value = c[1] != '\0' ? c + 1 : k + 1 < n ? args[++k] : NULL;
          if (target_opt && *c == 't') {
            co.target_dir = value;
          }
          break;
        }
        if (target_opt && *c == 'T') {
          co.no_target_dir = true;
        } else if ((recursive_opts && *c == 'R') ||
                   (streq(cmd, "cp") && strchr("rRa", *c) != NULL) ||
                   (streq(cmd, "rsync") && strchr("ra", *c) != NULL)) {
          /* Not chmod's -r: that is a mode, and never gets here. */
          co.recursive = true;
        } else if (streq(cmd, "rsync") && *c == 'R') {
          co.parents = true;
        } else if (streq(cmd, "install") && *c == 'd') {
          co.make_dirs = true;
        } else if (streq(cmd, "ln") && strchr("srn", *c) != NULL) {
          co.symbolic |= *c == 's';
          co.relative_link |= *c == 'r';
          co.no_dereference |= *c == 'n';
        } else if (streq(cmd, "cp") && (*c == 's' || *c == 'l')) {
          co.makes_links = true;
          co.symbolic |= *c == 's';
        }
      }
      continue;
    }
    if (skip_first && !skipped) {
      skipped = true;
      continue;
    }
    plain[np++] = args[k];
  }
  if (copy) {
    copy_targets(f, cmd, plain, np, &co, xargs);
    free(plain);
    return;
  }
  recursive |= co.recursive;
  if (xargs->on && xargs->replace == NULL) {
    /* More operands than written: whatever xargs reads. (With -I STR,
     * the words holding STR are those: add_target.) */
    unknown_targets(f);
  }
  bool rm_r = false;
  for (size_t k = 0; k < n && streq(cmd, "rm"); k++) {
    rm_r |= streq(args[k], "--recursive") ||
            (args[k][0] == '-' && args[k][1] != '-' && strpbrk(args[k], "rR") != NULL);
  }
  unsigned how = (recursive ? TARGET_TREE : 0) | (rm_r ? TARGET_EXPANSIONS : 0) |
                 ((w->flags & SHELL_WRITER_ENTRIES) != 0 ? TARGET_ENTRY : 0);
  for (size_t k = 0; k < np; k++) {
    add_target_as(f, plain[k], how);
  }
  free(plain);
}

/* command_writes, with the string that stands for the names xargs reads
 * (-I STR, find's `{}`) known to add_target. */
static void command_targets(const Frame *f, const ShellWriter *w, char **argv, size_t argc,
                            const Xargs *xargs) {
  Frame in = with_replace(f, xargs);
  command_writes(&in, w, argv, argc, xargs);
}

/* ---- find ---------------------------------------------------------------- */

static void run_words(const Frame *f, char **argv, size_t argc, Xargs xargs);

/* Whether find's expression starts at `a`. */
static bool find_expression(const char *a) {
  return (a[0] == '-' && a[1] != '\0') || streq(a, "(") || streq(a, "!") || streq(a, ",");
}

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
static void find_targets(const Frame *outer, char **args, size_t n, const Xargs *xargs) {
  static const char *const valued[] = {
      "-name",     "-iname",    "-path",     "-ipath",   "-wholename", "-iwholename",
      "-regex",    "-iregex",   "-lname",    "-ilname",  "-type",      "-xtype",
      "-newer",    "-anewer",   "-cnewer",   "-perm",    "-user",      "-group",
      "-uid",      "-gid",      "-size",     "-mtime",   "-atime",     "-ctime",
      "-mmin",     "-amin",     "-cmin",     "-maxdepth", "-mindepth", "-links",
      "-inum",     "-samefile", "-printf",   "-fstype",  "-regextype", "-used",
      "-context",  "-files0-from", NULL};
  size_t k = 0;
  /* Options before the start points: -H -L -P, -O3, -D LIST. */
  while (k < n && (streq(args[k], "-H") || streq(args[k], "-L") || streq(args[k], "-P") ||
                   startswith(args[k], "-O") || streq(args[k], "-D"))) {
    k += streq(args[k], "-D") ? 2 : 1;
  }
  Frame in = with_replace(outer, xargs);
  const Frame *f = &in;
  /* The start points as from_cwd gives them; none is `.`. -files0-from
   * reads them from a file, where they may be any path: `/` stands for
   * those. */
  Words starts = {0};
  for (size_t j = k; j < n; j++) {
    if (streq(args[j], "-files0-from")) {
      shell_words_add(&starts, "/", 1);
      break;
    }
  }
  for (; k < n && !find_expression(args[k]); k++) {
    _cleanup_free_ char *with_env = shell_expansion(args[k]) != NULL ? expand_environment(f, args[k])
                                                               : NULL;
    const char *word = with_env != NULL ? with_env : args[k];
    bool names = false;
    const char *x = unknown_part(f, word, true, &names);
    if (x != NULL) {
      unknown_dirs(f, word, x, names, &starts);
    } else {
      _cleanup_free_ char *p = from_cwd(f, word);
      shell_words_add(&starts, p, strlen(p));
    }
  }
  if (starts.n == 0) {
    _cleanup_free_ char *p = from_cwd(f, ".");
    shell_words_add(&starts, p, strlen(p));
  }
  for (; k < n; k++) {
    const char *a = args[k];
    if (in_list(a, valued) || startswith(a, "-newer")) {
      k++; /* -newerXY REF too */
    } else if (streq(a, "-delete")) {
      for (size_t i = 0; i < starts.n; i++) {
        add_unread_path(f, starts.v[i]);
      }
    } else if (streq(a, "-fprint") || streq(a, "-fprint0") || streq(a, "-fls") ||
               streq(a, "-fprintf")) {
      if (k + 1 < n) {
        add_target(f, args[++k], false);
      }
      k += streq(a, "-fprintf"); /* its format */
    } else if (streq(a, "-exec") || streq(a, "-execdir") || streq(a, "-ok") ||
               streq(a, "-okdir")) {
      size_t b = k + 1, e = b;
      while (e < n && !streq(args[e], ";") && !(streq(args[e], "+") && e > b &&
                                                 streq(args[e - 1], "{}"))) {
        e++;
      }
      if (e > b && f->depth < MAX_DEPTH) {
        /* -execdir runs in each found file's directory: in each start
         * point, in the one above for the point itself, and in any below
         * (execdir_targets). */
        bool in_dir = streq(a, "-execdir") || streq(a, "-okdir");
        Frame exec = *f;
        exec.below = starts.v;
        exec.n_below = starts.n;
        exec.depth++;
        size_t runs = in_dir ? starts.n : 1;
        if (runs > MAX_EXECDIR_STARTS) {
          /* Each is a reading of the whole command: past that many, a
           * start point stands for anything in the directory above. */
          for (size_t i = MAX_EXECDIR_STARTS; i < runs; i++) {
            _cleanup_free_ char *parent = path_join(starts.v[i], "..");
            add_unread_path(f, parent);
          }
          runs = MAX_EXECDIR_STARTS;
        }
        for (size_t i = 0; i < runs; i++) {
          /* Whatever a `sh -c 'cd …'` in it does ends with it. */
          Place here = place_copy(f->at);
          Frame run = exec;
          run.at = &here;
          if (in_dir) {
            free(here.cd);
            here.cd = xstrdup(starts.v[i]);
            run.execdir = starts.v[i];
          }
          run_words(&run, args + b, e - b, (Xargs){.on = true, .replace = "{}"});
          place_clear(&here);
        }
      }
      k = e;
    }
  }
  shell_words_clear(&starts);
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

/* The working tree holding the directory the command is in (where `.git`
 * is, as `git rev-parse --show-toplevel` finds it), or NULL. */
static char *git_toplevel(const Frame *f) {
  char *d = current_dir(f);
  while (d != NULL) {
    _cleanup_free_ char *dir = shell_literal_text(d);
    _cleanup_free_ char *git = path_join(dir, ".git");
    struct stat st;
    if (lstat(git, &st) == 0) {
      return d;
    }
    if (streq(d, "/")) {
      break;
    }
    char *up = path_dirname(d);
    free(d);
    d = up;
  }
  free(d);
  return NULL;
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
      _cleanup_free_ char *top = git_toplevel(f);
      if (top != NULL) {
        return xasprintf("%s%s", top, dir + strlen(toplevel[i]));
      }
    }
  }
  return expand_environment(f, dir);
}

/* cd, pushd and popd: where later relative paths are. */
static void change_dir(const Frame *f, const char *cmd, char **args, size_t n) {
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
    if (home() == NULL) {
      return; /* cd with no operand and no HOME fails */
    }
    next = xstrdup(home());
  } else {
    if (streq(cmd, "pushd")) {
      push_dir(f);
    }
    _cleanup_free_ char *operand = cd_operand(f, dir);
    bool names = false;
    const char *x = unknown_part(f, operand, true, &names);
    if (x != NULL && !names) {
      /* Known only when it runs: somewhere, and whatever the operand
       * names after the last component that holds an expansion. */
      const char *tail = after_expansions(x);
      free(f->at->cd);
      f->at->cd = tail[0] != '\0' ? xstrdup(tail) : NULL;
      f->at->cd_unknown = true;
      return;
    }
    next = from_cwd(f, operand);
  }
  free(f->at->cd);
  f->at->cd = next;
  if (next[0] == '/') {
    f->at->cd_unknown = false;
  }
}

/* ---- git ----------------------------------------------------------------- */

/* git's own options before the subcommand that take a value. */
static bool git_global_value(const char *a) {
  static const char *const valued[] = {"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                       "--exec-path", "--super-prefix", "--config-env", NULL};
  return in_list(a, valued);
}

/* The operands of a git subcommand (after its options, or all after
 * `--`), and what its options said. `values`: its short options that take
 * a value; `longs`: its long ones. */
typedef struct {
  char **plain;
  size_t n_plain;
  size_t first_after_dashdash; /* index in plain of the first after `--`, or n_plain */
  bool dashdash;
  bool dry_run;                /* -n, --dry-run */
  bool recursive;              /* -r */
  bool cached;                 /* --cached, -S/--staged without -W/--worktree */
  bool worktree;               /* -W, --worktree */
  bool hard;                   /* reset --hard, --merge, --keep */
  bool branch;                 /* checkout -b/-B/--orphan, -- */
  bool names_read;             /* --pathspec-from-file */
} GitArgs;

static void git_args(char **args, size_t n, const char *values, const char *const *longs,
                     GitArgs *g) {
  g->plain = xcalloc(n + 1, sizeof(char *));
  g->first_after_dashdash = SIZE_MAX;
  bool dashdash = false;
  for (size_t k = 0; k < n; k++) {
    const char *a = args[k];
    if (!dashdash && streq(a, "--")) {
      dashdash = true;
      g->dashdash = true;
      g->first_after_dashdash = g->n_plain;
      continue;
    }
    if (!is_option(a, dashdash)) {
      g->plain[g->n_plain++] = args[k];
      continue;
    }
    if (a[1] == '-') {
      const char *eq = strchr(a, '=');
      _cleanup_free_ char *name = xstrndup(a, eq != NULL ? (size_t)(eq - a) : strlen(a));
      if (eq == NULL && in_list(name, longs) && k + 1 < n) {
        k++;
      }
      g->dry_run |= streq(name, "--dry-run");
      g->cached |= streq(name, "--cached") || streq(name, "--staged");
      g->worktree |= streq(name, "--worktree");
      g->hard |= streq(name, "--hard") || streq(name, "--merge") || streq(name, "--keep");
      g->branch |= streq(name, "--orphan");
      g->names_read |= streq(name, "--pathspec-from-file");
      g->recursive |= streq(name, "--recursive");
      continue;
    }
    for (const char *c = a + 1; *c != '\0'; c++) {
      if (strchr(values, *c) != NULL) {
        if (c[1] == '\0' && k + 1 < n) {
          k++;
        }
        g->branch |= *c == 'b' || *c == 'B';
        break;
      }
      g->dry_run |= *c == 'n';
      g->recursive |= *c == 'r';
      g->cached |= *c == 'S';
      g->worktree |= *c == 'W';
    }
  }
  if (g->first_after_dashdash == SIZE_MAX) {
    g->first_after_dashdash = g->n_plain;
  }
}

/* The working tree a git command changes as a whole (reset --hard): the
 * one holding the directory the command is in, or that directory when
 * none is found. */
static void git_whole_tree(const Frame *f) {
  _cleanup_free_ char *top = git_toplevel(f);
  if (top != NULL) {
    add_tree(f, top);
  } else {
    unknown_targets_of(f, false);
  }
}

/* git rm, mv, checkout, restore, reset, clean: the paths of the working
 * tree they write. Branches, commits and the index are no files; the
 * subcommands that merge, apply or switch change files only the history
 * knows, which is the kernel's to stop. */
static void git_targets(const Frame *outer, char **args, size_t n, const Xargs *xargs) {
  static const char *const rm_longs[] = {"--pathspec-from-file", NULL};
  static const char *const checkout_longs[] = {"--orphan", "--conflict", "--pathspec-from-file",
                                               NULL};
  static const char *const restore_longs[] = {"--source", "--conflict", "--pathspec-from-file",
                                              NULL};
  static const char *const clean_longs[] = {"--exclude", NULL};
  static const char *const none_longs[] = {NULL};
  size_t k = 0;
  /* git's own options: -C DIR runs it in DIR, one after another. */
  Place here = {0};
  Frame moved = *outer;
  while (k < n && is_option(args[k], false)) {
    const char *a = args[k++];
    if (git_global_value(a) && k < n) {
      const char *value = args[k++];
      if (streq(a, "-C")) {
        if (moved.at != &here) {
          here = place_copy(outer->at);
          moved.at = &here;
        }
        char *operand = (char *)value;
        change_dir(&moved, "cd", &operand, 1);
      }
    }
  }
  if (k < n) {
    const char *sub = args[k++];
    char **rest = args + k;
    size_t nr = n - k;
    GitArgs g = {0};
    Frame in = with_replace(&moved, xargs);
    const Frame *f = &in;
    if (streq(sub, "rm")) {
      git_args(rest, nr, "", rm_longs, &g);
      if (!g.dry_run && !g.cached) {
        if (g.names_read || (xargs->on && xargs->replace == NULL)) {
          unknown_targets(f);
        }
        for (size_t i = 0; i < g.n_plain; i++) {
          add_target_as(f, g.plain[i], TARGET_ENTRY | (g.recursive ? TARGET_TREE : 0));
        }
      }
    } else if (streq(sub, "mv")) {
      git_args(rest, nr, "", none_longs, &g);
      if (!g.dry_run) {
        CopyOptions co = {.recursive = true, .move_sources = true};
        copy_targets(f, "mv", g.plain, g.n_plain, &co, xargs);
      }
    } else if (streq(sub, "checkout") || streq(sub, "restore")) {
      bool restore = streq(sub, "restore");
      git_args(rest, nr, restore ? "s" : "bB", restore ? restore_longs : checkout_longs, &g);
      /* checkout BRANCH, -b NEW: no path named; checkout [TREE] PATH…:
       * without `--`, a first operand is a path when it is there. */
      size_t from = g.first_after_dashdash;
      if (restore) {
        from = 0;
      } else if (!g.dashdash && !g.branch && g.n_plain > 0) {
        struct stat st;
        from = stat_word(f, g.plain[0], &st, false) ? 0 : 1;
      }
      if (!(restore && g.cached && !g.worktree)) {
        if (g.names_read || (xargs->on && xargs->replace == NULL)) {
          unknown_targets(f);
        }
        for (size_t i = from; i < g.n_plain; i++) {
          add_target(f, g.plain[i], true);
        }
      }
    } else if (streq(sub, "reset")) {
      git_args(rest, nr, "", none_longs, &g);
      if (g.hard) {
        git_whole_tree(f);
      }
    } else if (streq(sub, "clean")) {
      git_args(rest, nr, "e", clean_longs, &g);
      if (!g.dry_run) {
        /* What git does not track, below each path or the directory it
         * runs in. */
        for (size_t i = 0; i < g.n_plain; i++) {
          add_target(f, g.plain[i], true);
        }
        if (g.n_plain == 0) {
          unknown_targets_of(f, false);
        }
      }
    }
    free(g.plain);
  }
  place_clear(&here);
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
    change_dir(f, cmd, args, n);
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
      note_assigned(f, args[k]);
    }
  } else if (kind == COMMAND_FOR && n > 0) {
    note_assigned(f, args[0]); /* for NAME in …: set each time round */
  } else if (kind == COMMAND_FIND) {
    find_targets(f, args, n, xargs);
  } else if (kind == COMMAND_GIT) {
    git_targets(f, args, n, xargs);
  } else if (kind == COMMAND_WRITER) {
    command_targets(f, e->writer, argv, argc, xargs);
  }
}

/* One simple command, its words already split, run by xargs or not. */
static void run_words(const Frame *outer, char **argv, size_t argc, Xargs xargs) {
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
      note_assigned(f, a);
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
      change_dir(f, "cd", &operand, 1);
    }
    if (streq(w->name, "xargs")) {
      xargs = st.xargs;
      xargs.on = true;
    }
    if (st.edit || streq(w->name, "sudoedit")) {
      for (; i < argc; i++) {
        add_target(f, argv[i], false);
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
        run_words(&nested, split.v, split.n, xargs);
        shell_words_clear(&split);
      }
    } else if (streq(w->name, "flock") && i < argc) {
      /* flock FILE CMD…, flock FILE -c 'CMD': FILE is created if missing. */
      const char *file = argv[i++];
      struct stat st_file;
      if (!is_digits(file) && !stat_word(f, file, &st_file, true)) {
        add_target(f, file, false);
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
  run_words(&cmd, argv, argc, (Xargs){0});
}

static void redirect(void *ctx, const char *word) {
  add_target(ctx, word, false);
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
  return (ShellLexer){.home = home(), .substitution = lex_substitution, .charge = lex_charge,
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
      add_target(&at_body, w, false);
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
  home_init();
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
