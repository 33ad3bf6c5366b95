/* SPDX-License-Identifier: Apache-2.0 */
/* Where the words of a shell command lead, and what is written there: the
 * paths a word names from where the command is (its `cd`s, $HOME, $PWD and
 * the variables it sets), the names it makes with ln and mv and where they
 * lead, brace expansion, and the words known only when it runs (what
 * xargs reads, find finds, the shell expands), each added to the request
 * as a target (shell-effects.h). */
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook/shell-effects.h"
#include "path.h"

/* How many names made by ln and mv are remembered, how many names one
 * path may stand for through them, and how many steps following them may
 * take in one command: past any, the command is refused rather than read
 * in part (add_alias, alias_images). */
#define MAX_ALIASES 128
#define MAX_ALIAS_IMAGES 256
#define MAX_ALIAS_STEPS 4096

const char *shell_replace_in(const char *word, const char *r) {
  if (r == NULL || r[0] == '\0') {
    return NULL;
  }
  /* strstr(3) is linear in both; `$` is taken as the text it stands for. */
  _cleanup_free_ char *w = shell_literal_text(word);
  _cleanup_free_ char *t = shell_literal_text(r);
  const char *at = strstr(w, t);
  return at != NULL ? word + (at - w) : NULL;
}

/* $HOME, with which a `~` is expanded; NULL when it is unset or not an
 * absolute path and a `~` cannot be placed. */
static const char *home_dir;

const char *shell_home(void) {
  return home_dir;
}

void shell_home_init(void) {
  const char *h = getenv("HOME");
  home_dir = h != NULL && h[0] == '/' ? h : NULL;
}

/* A path that still starts with the `~` that could not be expanded. */
static bool is_unknown_tilde(const char *p) {
  return p[0] == '~' && (p[1] == '/' || p[1] == '\0') && shell_home() == NULL;
}

char *shell_from_cwd(const Frame *f, const char *path) {
  if (f->at->cd == NULL || path[0] == '/' || is_unknown_tilde(path)) {
    return xstrdup(path);
  }
  return path_join(f->at->cd, path);
}

/* The file `word` names as the command would see it, as a path for the
 * system calls; NULL for a `~` that cannot be placed. */
static char *word_file(const Frame *f, const char *word) {
  _cleanup_free_ char *w = shell_from_cwd(f, word);
  if (is_unknown_tilde(w)) {
    return NULL;
  }
  _cleanup_free_ char *p = shell_literal_text(w);
  return f->sh->req->cwd != NULL ? path_join(f->sh->req->cwd, p) : xstrdup(p);
}

/* The same for `p` as shell_from_cwd gives it; NULL too when it is relative to
 * where only running the command tells. */
static char *path_file(const Frame *f, const char *p) {
  if (is_unknown_tilde(p) || (f->at->cd_unknown && p[0] != '/')) {
    return NULL;
  }
  _cleanup_free_ char *t = shell_literal_text(p);
  return f->sh->req->cwd != NULL ? path_join(f->sh->req->cwd, t) : xstrdup(t);
}

bool shell_stat_word(const Frame *f, const char *word, struct stat *st, bool follow) {
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

bool shell_is_dir(const Frame *f, const char *word, bool follow) {
  struct stat st;
  return shell_stat_word(f, word, &st, follow) && S_ISDIR(st.st_mode);
}

/* Whether `p`, as shell_from_cwd gives it, is relative to a directory only
 * running the command tells: then it goes to HookRequest.somewhere. */
static bool somewhere(const Frame *f, const char *p) {
  return f->at->cd_unknown && p[0] != '/' && !is_unknown_tilde(p);
}

void shell_add_tree(const Frame *f, const char *word) {
  _cleanup_free_ char *p = shell_literal_text(word);
  if (somewhere(f, p)) {
    hook_request_add_somewhere(f->sh->req, p, true);
    return;
  }
  hook_request_add_tree(f->sh->req, p);
}

/* A path as shell_from_cwd gives it, written (and with `tree` its subtree). */
static void add_path(const Frame *f, const char *word, bool tree) {
  _cleanup_free_ char *p = shell_literal_text(word);
  if (somewhere(f, p)) {
    hook_request_add_somewhere(f->sh->req, p, tree);
    return;
  }
  hook_request_add_path(f->sh->req, p);
  if (tree) {
    shell_add_tree(f, p);
  }
}

/* `p`, which starts with a `~` that could not be expanded. With no $HOME,
 * bash expands `~` to the user's passwd entry; but the agent's shell may
 * know a HOME the hook was not given. Both. */
static void add_tilde_target(const Frame *f, const char *p, bool tree) {
  shell_unknown_targets_of(f, false);
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

void shell_add_unread_path(const Frame *f, const char *word) {
  add_unread_one(f, word);
  Words images = {0};
  alias_images(f, word, false, true, &images);
  for (size_t i = 0; i < images.n; i++) {
    add_unread_one(f, images.v[i]);
  }
  shell_words_clear(&images);
}

void shell_add_unread(const Frame *f, const char *word) {
  _cleanup_free_ char *p = shell_from_cwd(f, word);
  shell_add_unread_path(f, p);
}

/* Where the names xargs reads or find finds may be, as shell_from_cwd gives
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

void shell_unknown_targets_of(const Frame *f, bool xargs) {
  if (!xargs) {
    shell_add_tree(f, f->at->cd != NULL && !is_unknown_tilde(f->at->cd) ? f->at->cd : ".");
    return;
  }
  Words dirs = {0};
  names_read_dirs(f, &dirs);
  for (size_t i = 0; i < dirs.n; i++) {
    shell_add_unread_path(f, dirs.v[i]);
  }
  shell_words_clear(&dirs);
}

void shell_unknown_targets(const Frame *f) {
  shell_unknown_targets_of(f, true);
}

/* `p`, as shell_from_cwd gives it, absolute (a word of the reader) with its `.`
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

char *shell_current_dir(const Frame *f) {
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

void shell_note_assigned(const Frame *f, const char *word) {
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
        value = own = shell_current_dir(f);
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

char *shell_expand_environment(const Frame *f, const char *word) {
  return expand_variables(f, word, true);
}

const char *shell_unknown_part(const Frame *f, const char *word, bool expansions, bool *names) {
  const char *x = expansions ? shell_expansion(word) : NULL;
  const char *r = shell_replace_in(word, f->replace);
  /* In a script xargs or find runs, $1, $@ and the like are the names. */
  *names = f->in_script || (r != NULL && (x == NULL || r < x));
  return x == NULL || (r != NULL && r < x) ? r : x;
}

void shell_unknown_dirs(const Frame *f, const char *word, const char *x, bool names,
                        Words *out) {
  const char *slash = x;
  while (slash > word && slash[-1] != '/') {
    slash--;
  }
  if (slash != word || !names) {
    _cleanup_free_ char *dir = slash == word ? xstrdup(".")
                               : slash - 1 == word ? xstrdup("/")
                                                   : xstrndup(word, (size_t)(slash - 1 - word));
    _cleanup_free_ char *p = shell_from_cwd(f, dir);
    shell_words_add(out, p, strlen(p));
  }
  if (names) {
    names_read_dirs(f, out);
  }
}

/* How far up a name -execdir writes is looked for, one by one; above, the
 * whole tree from where its `..` lead counts. */
#define MAX_EXECDIR_UP 16

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
    shell_add_unread_path(f, top);
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
  shell_add_unread_path(f, dir);
}

/* `p`, as shell_from_cwd gives it, as the command's names made are kept: absolute
 * and normalised, or after a `cd` the hook cannot follow, relative to where
 * it leads (HookRequest.somewhere). NULL for a `~` that cannot be placed. */
static char *alias_key(const Frame *f, const char *p) {
  if (is_unknown_tilde(p)) {
    return NULL;
  }
  return somewhere(f, p) ? path_normalize(p) : anchored(f, p);
}

/* Remembers that `name` (as shell_from_cwd gives it), once the command has made
 * it, leads to `to` (as shell_from_cwd gives it, `..` not yet resolved): a link
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

/* What `p`, as shell_from_cwd gives it, may also be through the names the
 * command made (add_alias), one after another: added to `out` as shell_from_cwd
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

/* A written name as shell_from_cwd gives it: an entry when the command takes
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

void shell_add_target_as(const Frame *f, const char *word, unsigned how) {
  if (strchr(word, '{') != NULL && strchr(word, '}') != NULL) {
    Words words = {0};
    size_t open, close;
    bool sequence;
    if (brace_expand(f, word, &words)) {
      for (size_t i = 0; i < words.n; i++) {
        add_target_one(f, words.v[i], how);
      }
    } else if (brace_group(word, &open, &close, &sequence)) {
      shell_unknown_targets_of(f, false);
    }
    shell_words_clear(&words);
  }
  add_target_one(f, word, how);
}

void shell_add_target(const Frame *f, const char *word, bool tree) {
  shell_add_target_as(f, word, tree ? TARGET_TREE : 0);
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
  const char *x = shell_unknown_part(f, word, expansions, &names);
  bool cd_unknown = false;
  if (x == NULL && f->in_script && f->at->cd != NULL && word[0] != '/') {
    /* `cd "$1" && rm -f x`: x is where the names are. */
    cd_unknown = shell_unknown_part(f, f->at->cd, true, &names) != NULL;
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
      shell_unknown_dirs(f, word, x, names, &dirs);
    }
    for (size_t i = 0; i < dirs.n; i++) {
      shell_add_unread_path(f, dirs.v[i]);
    }
    shell_words_clear(&dirs);
    return;
  }
  _cleanup_free_ char *p = shell_from_cwd(f, word);
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

void shell_record_made(const Frame *f, const char *src, const char *name, const CopyOptions *o) {
  _cleanup_free_ char *p = shell_from_cwd(f, src);
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
