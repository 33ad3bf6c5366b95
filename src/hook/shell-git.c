/* SPDX-License-Identifier: Apache-2.0 */
/* What git writes in the working tree: rm, mv, checkout, restore, reset
 * --hard and clean, run where -C says (shell-effects.h). */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "hook/shell-effects.h"
#include "path.h"

char *shell_git_toplevel(const Frame *f) {
  char *d = shell_current_dir(f);
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
  _cleanup_free_ char *top = shell_git_toplevel(f);
  if (top != NULL) {
    shell_add_tree(f, top);
  } else {
    shell_unknown_targets_of(f, false);
  }
}

void shell_git_targets(const Frame *outer, char **args, size_t n, const Xargs *xargs) {
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
        shell_change_dir(&moved, "cd", &operand, 1);
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
          shell_unknown_targets(f);
        }
        for (size_t i = 0; i < g.n_plain; i++) {
          shell_add_target_as(f, g.plain[i], TARGET_ENTRY | (g.recursive ? TARGET_TREE : 0));
        }
      }
    } else if (streq(sub, "mv")) {
      git_args(rest, nr, "", none_longs, &g);
      if (!g.dry_run) {
        CopyOptions co = {.recursive = true, .move_sources = true};
        shell_copy_targets(f, "mv", g.plain, g.n_plain, &co, xargs);
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
        from = shell_stat_word(f, g.plain[0], &st, false) ? 0 : 1;
      }
      if (!(restore && g.cached && !g.worktree)) {
        if (g.names_read || (xargs->on && xargs->replace == NULL)) {
          shell_unknown_targets(f);
        }
        for (size_t i = from; i < g.n_plain; i++) {
          shell_add_target(f, g.plain[i], true);
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
          shell_add_target(f, g.plain[i], true);
        }
        if (g.n_plain == 0) {
          shell_unknown_targets_of(f, false);
        }
      }
    }
    free(g.plain);
  }
  place_clear(&here);
}
