/* SPDX-License-Identifier: Apache-2.0 */
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

typedef struct {
  const Matcher *m;
  const char *root;
  ScanResult *r;
  size_t cap_paths;
  size_t cap_unreadable;
  char rel[PATH_MAX];
  size_t len;
} Walk;

const char *scan_kind_name(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "directory";
  }
  if (S_ISREG(mode)) {
    return "file";
  }
  if (S_ISLNK(mode)) {
    return "symlink";
  }
  return "other";
}

static void add_unreadable(Walk *w, const char *rel) {
  char **slot = grow_array(&w->r->unreadable, &w->r->n_unreadable, &w->cap_unreadable,
                           sizeof(char *));
  *slot = xstrdup(rel[0] ? rel : ".");
}

static void add_protected(Walk *w, long idx, const struct stat *st) {
  ProtectedPath *p = grow_array(&w->r->paths, &w->r->n_paths, &w->cap_paths, sizeof(*p));
  p->relative = xstrdup(w->rel);
  p->absolute = path_join(w->root, w->rel);
  p->pattern = (size_t)idx;
  p->dev = st->st_dev;
  p->ino = st->st_ino;
  p->mode = st->st_mode;
  p->nlink = st->st_nlink;
  w->r->hits[idx]++;
}

/* Walks the directory open at `dfd` (taking it over), whose path relative
 * to the root is w->rel and whose matcher state is `st`: each entry costs
 * one step of the matcher, not a match of its whole path. */
static void walk(Walk *w, int dfd, const MatcherState *st) {
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    add_unreadable(w, w->rel);
    return;
  }
  size_t base = w->len;
  bool reported = false;
  MatcherState *child = xmalloc(matcher_state_size(w->m));
  for (;;) {
    errno = 0;
    struct dirent *de = readdir(d);
    if (de == NULL) {
      if (errno != 0) {
        add_unreadable(w, w->rel);
      }
      break;
    }
    const char *name = de->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
      continue;
    }
    size_t nlen = strlen(name);
    size_t need = base + (base ? 1 : 0) + nlen;
    if (need >= sizeof(w->rel)) {
      /* Cannot be named in PATH_MAX; nothing can be protected by name. */
      continue;
    }
    if (base) {
      w->rel[base] = '/';
    }
    memcpy(w->rel + base + (base ? 1 : 0), name, nlen + 1);
    w->len = need;
    w->r->n_visited++;

    struct stat sb;
    bool alive = false;
    long idx = matcher_state_step(w->m, st, name, child, &alive);
    if (idx >= 0) {
      if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        add_protected(w, idx, &sb);
      } else if (errno != ENOENT && !reported) {
        /* Listed but not searchable (r without x): its protected
         * entries exist but cannot be identified. */
        w->len = base;
        w->rel[base] = '\0';
        add_unreadable(w, w->rel);
        reported = true;
      }
    } else {
      bool is_dir = de->d_type == DT_DIR;
      if (alive && de->d_type == DT_UNKNOWN) {
        is_dir = fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
      }
      if (is_dir && alive) {
        int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
          add_unreadable(w, w->rel);
        } else {
          walk(w, sub, child);
        }
      }
    }
    w->len = base;
    w->rel[base] = '\0';
  }
  free(child);
  closedir(d);
}

static int compare_paths(const void *a, const void *b) {
  return strcmp(((const ProtectedPath *)a)->relative, ((const ProtectedPath *)b)->relative);
}

int scan_project(const Policy *policy, const Matcher *m, ScanResult **ret, Error *err) {
  _cleanup_scan_result_ ScanResult *r = xcalloc(1, sizeof(ScanResult));
  r->n_patterns = policy->n_patterns;
  r->hits = xcalloc(policy->n_patterns, sizeof(size_t));

  int fd = open(policy->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return error_set(err, errno, _("cannot read the project directory %s: %m"), policy->root);
  }
  Walk *w = xcalloc(1, sizeof(Walk));
  w->m = m;
  w->root = policy->root;
  w->r = r;
  MatcherState *root = xmalloc(matcher_state_size(m));
  matcher_state_init(m, root);
  walk(w, fd, root);
  free(root);
  free(w);

  if (r->n_paths > 1) {
    qsort(r->paths, r->n_paths, sizeof(ProtectedPath), compare_paths);
  }
  *ret = steal_pointer(&r);
  return 0;
}

void scan_result_free(ScanResult *r) {
  if (r == NULL) {
    return;
  }
  for (size_t i = 0; i < r->n_paths; i++) {
    free(r->paths[i].relative);
    free(r->paths[i].absolute);
  }
  for (size_t i = 0; i < r->n_unreadable; i++) {
    free(r->unreadable[i]);
  }
  free(r->paths);
  free(r->hits);
  free(r->unreadable);
  free(r);
}
