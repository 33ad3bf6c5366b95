/* SPDX-License-Identifier: Apache-2.0 */
/* What find writes: -delete below its start points, -fprint's files, and
 * the commands -exec and -execdir run, read as run on the names it finds
 * (shell-effects.h). */
#include <string.h>

#include "hook/shell-effects.h"
#include "path.h"

/* How many start points -execdir's command is read in, one by one. */
#define MAX_EXECDIR_STARTS 64

/* Whether find's expression starts at `a`. */
static bool find_expression(const char *a) {
  return (a[0] == '-' && a[1] != '\0') || streq(a, "(") || streq(a, "!") || streq(a, ",");
}

void shell_find_targets(const Frame *outer, char **args, size_t n, const Xargs *xargs) {
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
  /* The start points as shell_from_cwd gives them; none is `.`. -files0-from
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
    _cleanup_free_ char *with_env =
        shell_expansion(args[k]) != NULL ? shell_expand_environment(f, args[k]) : NULL;
    const char *word = with_env != NULL ? with_env : args[k];
    bool names = false;
    const char *x = shell_unknown_part(f, word, true, &names);
    if (x != NULL) {
      shell_unknown_dirs(f, word, x, names, &starts);
    } else {
      _cleanup_free_ char *p = shell_from_cwd(f, word);
      shell_words_add(&starts, p, strlen(p));
    }
  }
  if (starts.n == 0) {
    _cleanup_free_ char *p = shell_from_cwd(f, ".");
    shell_words_add(&starts, p, strlen(p));
  }
  for (; k < n; k++) {
    const char *a = args[k];
    if (in_list(a, valued) || startswith(a, "-newer")) {
      k++; /* -newerXY REF too */
    } else if (streq(a, "-delete")) {
      for (size_t i = 0; i < starts.n; i++) {
        shell_add_unread_path(f, starts.v[i]);
      }
    } else if (streq(a, "-fprint") || streq(a, "-fprint0") || streq(a, "-fls") ||
               streq(a, "-fprintf")) {
      if (k + 1 < n) {
        shell_add_target(f, args[++k], false);
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
            shell_add_unread_path(f, parent);
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
          shell_run_words(&run, args + b, e - b, (Xargs){.on = true, .replace = "{}"});
          place_clear(&here);
        }
      }
      k = e;
    }
  }
  shell_words_clear(&starts);
}
