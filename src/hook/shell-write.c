/* SPDX-License-Identifier: Apache-2.0 */
/* What the commands of the writer table (shell-writers.c) write: their
 * options and operands read, and cp/mv/ln/install/rsync's destinations;
 * where the names ln and mv make lead is shell-target.c's
 * (shell_record_made). The interface is shell-effects.h. */
#include <string.h>
#include <sys/stat.h>

#include "hook/shell-effects.h"
#include "path.h"

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

void shell_copy_targets(const Frame *f, const char *cmd, char **plain, size_t np,
                        const CopyOptions *o, const Xargs *xargs) {
  bool rsync = streq(cmd, "rsync");
  if (o->make_dirs) {
    for (size_t k = 0; k < np; k++) {
      shell_add_target(f, plain[k], false);
    }
    if (xargs->on) {
      shell_unknown_targets(f);
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
    shell_unknown_targets(f);
    for (size_t k = o->move_sources ? 0 : np ? np - 1 : np; k < np; k++) {
      if (!rsync || !is_remote(plain[k])) {
        shell_add_target(f, plain[k], o->recursive);
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
    dir_known = !o->no_target_dir && shell_is_dir(f, dest, !o->no_dereference);
  }
  if (rsync && is_remote(dest)) {
    return;
  }
  if (xargs->on) {
    /* Sources xargs reads: any name inside DEST. */
    if (shell_replace_in(dest, xargs->replace) != NULL) {
      shell_unknown_targets(f);
    } else {
      shell_add_target(f, dest, false);
      shell_add_unread(f, dest);
    }
    if (o->move_sources) {
      /* The sources go: those written, and those it reads. */
      for (size_t k = 0; k < nsrc; k++) {
        bool read = shell_replace_in(plain[k], xargs->replace) != NULL;
        if (!read && (!rsync || !is_remote(plain[k]))) {
          shell_add_target(f, plain[k], o->recursive);
        }
      }
      shell_unknown_targets(f);
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
    shell_add_target(f, dest, o->recursive || o->delete_dest);
  }
  if (may_be_dir) {
    for (size_t k = 0; k < nsrc; k++) {
      _cleanup_free_ char *into = copy_into(dest, plain[k], o->parents, rsync);
      shell_add_target(f, into, o->recursive);
    }
  }
  if (o->move_sources) {
    /* mv renames a link itself; rsync --remove-source-files, left as it
     * was, is decided by where the names lead. */
    unsigned how = (o->recursive ? TARGET_TREE : 0) | (rsync ? 0 : TARGET_ENTRY);
    for (size_t k = 0; k < nsrc; k++) {
      if (!rsync || !is_remote(plain[k])) {
        shell_add_target_as(f, plain[k], how);
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
    bool file = slash && shell_stat_word(f, plain[k], &st, true) && !S_ISDIR(st.st_mode);
    /* The name inside first: a DEST that is a directory is not also the
     * link. */
    for (int inside = 1; inside >= 0; inside--) {
      if (inside ? o->no_target_dir : dir_known || nsrc > 1 || file) {
        continue;
      }
      _cleanup_free_ char *w = inside ? copy_into(dest, plain[k], false, false) : xstrdup(dest);
      _cleanup_free_ char *name = shell_from_cwd(f, w);
      shell_record_made(f, plain[k], name, o);
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
        shell_add_target(f, args[k] + 3, false);
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
    shell_copy_targets(f, cmd, plain, np, &co, xargs);
    free(plain);
    return;
  }
  recursive |= co.recursive;
  if (xargs->on && xargs->replace == NULL) {
    /* More operands than written: whatever xargs reads. (With -I STR,
     * the words holding STR are those: shell_add_target.) */
    shell_unknown_targets(f);
  }
  bool rm_r = false;
  for (size_t k = 0; k < n && streq(cmd, "rm"); k++) {
    rm_r |= streq(args[k], "--recursive") ||
            (args[k][0] == '-' && args[k][1] != '-' && strpbrk(args[k], "rR") != NULL);
  }
  unsigned how = (recursive ? TARGET_TREE : 0) | (rm_r ? TARGET_EXPANSIONS : 0) |
                 ((w->flags & SHELL_WRITER_ENTRIES) != 0 ? TARGET_ENTRY : 0);
  for (size_t k = 0; k < np; k++) {
    shell_add_target_as(f, plain[k], how);
  }
  free(plain);
}

void shell_command_targets(const Frame *f, const ShellWriter *w, char **argv, size_t argc,
                           const Xargs *xargs) {
  Frame in = with_replace(f, xargs);
  command_writes(&in, w, argv, argc, xargs);
}
