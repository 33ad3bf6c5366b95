/* SPDX-License-Identifier: Apache-2.0 */
#include "mounts.h"

#include <string.h>

#include "path.h"
#include "util.h"

/* Without an allocation per field: it runs on every `run`. */
void mounts_parse(const char *mountinfo, MountTable *t) {
  t->text = xstrdup(mountinfo);
  static char empty[] = "";
  char *save = NULL;
  for (char *line = strtok_r(t->text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char *f[32];
    char *fs = NULL;
    size_t k = 0;
    for (char *tok = strtok_r(line, " ", &fs); tok != NULL && k < ELEMENTSOF(f);
         tok = strtok_r(NULL, " ", &fs)) {
      f[k++] = tok;
    }
    if (k < 5) {
      continue;
    }
    /* Optional fields run from the seventh to a lone "-". */
    size_t sep = 6;
    while (sep < k && !streq(f[sep], "-")) {
      sep++;
    }
    MountEntry *e = grow_array(&t->v, &t->n, &t->cap, sizeof(MountEntry));
    e->id = f[0];
    e->parent = f[1];
    e->dev = f[2];
    e->root = path_unescape_mountinfo_in_place(f[3]);
    e->point = path_unescape_mountinfo_in_place(f[4]);
    e->fstype = sep + 1 < k ? path_unescape_mountinfo_in_place(f[sep + 1]) : empty;
    e->source = sep + 2 < k ? path_unescape_mountinfo_in_place(f[sep + 2]) : empty;
    e->options = sep + 3 < k ? path_unescape_mountinfo_in_place(f[sep + 3]) : empty;
  }
}

void mounts_clear(MountTable *t) {
  free(t->v);
  free(t->text);
  *t = (MountTable){0};
}

const MountEntry *mount_holding(const MountTable *t, const char *path) {
  const MountEntry *home = NULL;
  size_t best = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (path_relative(t->v[i].point, path) != NULL && strlen(t->v[i].point) >= best) {
      best = strlen(t->v[i].point);
      home = &t->v[i];
    }
  }
  return home;
}

char *mount_fs_path(const MountTable *t, const char *path, const MountEntry **ret_home) {
  const MountEntry *home = mount_holding(t, path);
  *ret_home = home;
  if (home == NULL) {
    return NULL;
  }
  _cleanup_free_ char *inside = path_join(home->root, path_relative(home->point, path));
  return path_normalize(inside);
}
