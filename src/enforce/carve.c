/* SPDX-License-Identifier: Apache-2.0 */
/* The Landlock carve-out, planned without touching the filesystem: the
 * directory lister is handed in, so tests run it on a fake tree.
 *
 * Landlock rules only ever add access, so "everything but X" is written as
 * "every sibling of every directory on the way to X". */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "enforce/plan.h"
#include "mounts.h"
#include "path.h"

typedef struct {
  dev_t dev;
  ino_t ino;
} Identity;

typedef struct {
  Identity *v;
  size_t n;
  size_t cap;
} IdentitySet;

static void identity_add(IdentitySet *s, dev_t dev, ino_t ino) {
  Identity *id = grow_array(&s->v, &s->n, &s->cap, sizeof(Identity));
  id->dev = dev;
  id->ino = ino;
}

static int compare_identities(const void *a, const void *b) {
  const Identity *x = a, *y = b;
  if (x->dev != y->dev) {
    return x->dev < y->dev ? -1 : 1;
  }
  return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* After identity_sort(), identity_has() is a binary search: a directory
 * on the way to a thousand protected files is checked against all of them
 * for each of its entries. */
static void identity_sort(IdentitySet *s) {
  if (s->n > 1) {
    qsort(s->v, s->n, sizeof(Identity), compare_identities);
  }
}

static bool identity_has(const IdentitySet *s, dev_t dev, ino_t ino) {
  const Identity key = {dev, ino};
  return s->n > 0 && bsearch(&key, s->v, s->n, sizeof(Identity), compare_identities) != NULL;
}

static bool strings_have(const char *const *v, size_t n, const char *s) {
  return n > 0 && bsearch(&s, v, n, sizeof(char *), strings_compare) != NULL;
}

/* Lists `dir`; a directory that does not exist (below a missing protected
 * path) simply has no entries, and neither has one this user may not
 * list (noted in *unlisted: nothing in it can be granted). */
static int list(DirLister lister, void *userdata, const char *dir, DirEntry **ret, size_t *n,
                bool *unlisted, Error *err) {
  *ret = NULL;
  *n = 0;
  *unlisted = false;
  int r = lister(userdata, dir, ret, n);
  if (r == -ENOENT || r == -ENOTDIR) {
    return 0;
  }
  if (r == -EACCES) {
    *unlisted = true;
    return 0;
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot list %s for the Landlock rules: %m"), dir);
  }
  return 0;
}

/* `dir`/`name` into buf, or NULL when it does not fit (it then names
 * nothing on the chain, which holds canonical paths shorter than that). */
static const char *child_path(char *buf, size_t size, const char *dir, const char *name) {
  size_t ld = streq(dir, "/") ? 0 : strlen(dir), ln = strlen(name);
  if (ld + 1 + ln >= size) {
    return NULL;
  }
  memcpy(buf, dir, ld);
  buf[ld] = '/';
  memcpy(buf + ld + 1, name, ln + 1);
  return buf;
}

/* The directories on the way to the targets: `/` and every ancestor of
 * each target and of each protected link's own name, sorted, parents
 * first. */
static void carve_chain(const PlanTarget *targets, size_t n, char ***ret, size_t *ret_n) {
  char **chain = NULL;
  size_t n_chain = 0, cap_chain = 0;
  char **root = grow_array(&chain, &n_chain, &cap_chain, sizeof(char *));
  *root = xstrdup("/");
  for (size_t i = 0; i < n; i++) {
    const PlanTarget *t = &targets[i];
    plan_add_ancestors(t->path, i > 0 ? targets[i - 1].path : NULL, &chain, &n_chain, &cap_chain);
    if (t->link != NULL) {
      /* A protected symbolic link: the directory holding the link must
       * not let it be replaced either (ATTACKS.md row 35). */
      plan_add_ancestors(t->link, NULL, &chain, &n_chain, &cap_chain);
    }
  }
  plan_sort_unique(chain, &n_chain);
  *ret = chain;
  *ret_n = n_chain;
}

size_t carve_dirs_listed(const PlanTarget *targets, size_t n) {
  char **chain;
  size_t n_chain, listed = 0;
  carve_chain(targets, n, &chain, &n_chain);
  PlanDirs dirs;
  plan_dirs_init(&dirs, targets, n);
  for (size_t i = 0; i < n_chain; i++) {
    /* As carve_plan: what lies inside a protected directory is not
     * listed. */
    listed += !plan_dirs_hold(&dirs, chain[i]);
  }
  plan_dirs_clear(&dirs);
  strings_free(chain, n_chain);
  return listed;
}

int carve_plan(const PlanTarget *targets, size_t n, DirLister lister, void *userdata, Carve *ret,
               Error *err) {
  char **chain = NULL;
  size_t n_chain = 0, cap_grants = 0, cap_restricted = 0, cap_withheld = 0, cap_unlisted = 0;
  IdentitySet blocked = {0}; /* protected objects and chain directories */
  Carve c = {0};
  int r = 0;

  memset(ret, 0, sizeof(*ret));
  carve_chain(targets, n, &chain, &n_chain);
  for (size_t i = 0; i < n; i++) {
    if (!targets[i].missing) {
      identity_add(&blocked, targets[i].dev, targets[i].ino);
    }
  }

  /* What is never granted by name either, whatever the listing says its
   * identity is: the chain itself and every protected path. Identity
   * catches the other names of the same objects. */
  size_t n_named = 0;
  const char **named = xcalloc(n_chain + n + 1, sizeof(char *));
  bool sorted = true;
  for (size_t i = 0; i < n; i++) {
    sorted = sorted && (i == 0 || strcmp(targets[i - 1].path, targets[i].path) <= 0);
  }
  if (sorted) {
    /* Both sorted (the targets usually are): merge. */
    size_t a = 0, b = 0;
    while (a < n_chain || b < n) {
      if (b == n || (a < n_chain && strcmp(chain[a], targets[b].path) <= 0)) {
        named[n_named++] = chain[a++];
      } else {
        named[n_named++] = targets[b++].path;
      }
    }
  } else {
    for (size_t i = 0; i < n_chain; i++) {
      named[n_named++] = chain[i];
    }
    for (size_t i = 0; i < n; i++) {
      named[n_named++] = targets[i].path;
    }
    qsort(named, n_named, sizeof(char *), strings_compare);
  }

  /* Each chain directory is listed once; its listing serves both passes. */
  DirEntry **ents = xcalloc(n_chain, sizeof(DirEntry *));
  size_t *n_ents = xcalloc(n_chain, sizeof(size_t));
  bool *listed = xcalloc(n_chain, sizeof(bool));
  char buf[PATH_MAX];

  /* A chain directory is known by what its parent's listing says it is:
   * collect those identities before granting anything, so an alias of one
   * (a bind mount, or the same directory under another spelling) is never
   * granted. */
  PlanDirs dirs;
  plan_dirs_init(&dirs, targets, n);
  for (size_t i = 0; i < n_chain && r == 0; i++) {
    if (plan_dirs_hold(&dirs, chain[i])) {
      continue;
    }
    bool unlisted = false;
    r = list(lister, userdata, chain[i], &ents[i], &n_ents[i], &unlisted, err);
    listed[i] = r == 0;
    if (unlisted) {
      char **u = grow_array(&c.unlisted, &c.n_unlisted, &cap_unlisted, sizeof(char *));
      *u = xstrdup(chain[i]);
    }
    for (size_t k = 0; r == 0 && k < n_ents[i]; k++) {
      const DirEntry *e = &ents[i][k];
      const char *child;
      if (streq(e->name, ".") ||
          ((child = child_path(buf, sizeof(buf), chain[i], e->name)) != NULL &&
           strings_have((const char *const *)chain, n_chain, child))) {
        identity_add(&blocked, e->dev, e->ino);
      }
    }
  }
  plan_dirs_clear(&dirs);
  identity_sort(&blocked);

  for (size_t i = 0; i < n_chain && r == 0; i++) {
    if (!listed[i]) {
      continue;
    }
    char **slot = grow_array(&c.restricted, &c.n_restricted, &cap_restricted, sizeof(char *));
    *slot = xstrdup(chain[i]);
    for (size_t k = 0; k < n_ents[i]; k++) {
      const DirEntry *e = &ents[i][k];
      /* A link has no content to write, and cannot leave a restricted
       * directory; rules are never placed through one. */
      if (S_ISLNK(e->mode) || streq(e->name, ".") || identity_has(&blocked, e->dev, e->ino)) {
        continue;
      }
      const char *child = child_path(buf, sizeof(buf), chain[i], e->name);
      if (child == NULL || strings_have(named, n_named, child)) {
        continue;
      }
      if (e->aliased && !S_ISDIR(e->mode)) {
        char **w = grow_array(&c.withheld, &c.n_withheld, &cap_withheld, sizeof(char *));
        *w = xstrdup(child);
        continue;
      }
      CarveGrant *g = grow_array(&c.grants, &c.n_grants, &cap_grants, sizeof(CarveGrant));
      g->path = xstrdup(child);
      g->is_dir = S_ISDIR(e->mode);
      g->dev = e->dev;
      g->ino = e->ino;
      g->exact = e->exact;
    }
  }

  for (size_t i = 0; i < n_chain; i++) {
    dir_entries_free(ents[i], n_ents[i]);
  }
  free(ents);
  free(n_ents);
  free(listed);
  free(named);
  for (size_t i = 0; i < n_chain; i++) {
    free(chain[i]);
  }
  free(chain);
  free(blocked.v);
  if (r < 0) {
    carve_clear(&c);
    return r;
  }
  *ret = c;
  return 0;
}

void carve_withhold_mounted(Carve *c, const PlanTarget *targets, size_t n,
                            const char *mountinfo) {
  MountTable t = {0};
  mounts_parse(mountinfo, &t);
  /* Where each protected directory lies inside its filesystem. */
  char **fs = xcalloc(n + 1, sizeof(char *));
  const MountEntry **home = xcalloc(n + 1, sizeof(MountEntry *));
  for (size_t i = 0; i < n; i++) {
    if (!targets[i].missing && S_ISDIR(targets[i].mode)) {
      fs[i] = mount_fs_path(&t, targets[i].path, &home[i]);
    }
  }
  size_t cap_withheld = c->n_withheld, o = 0;
  for (size_t g = 0; g < c->n_grants; g++) {
    CarveGrant *grant = &c->grants[g];
    const MountEntry *top = NULL;
    for (size_t k = 0; grant->is_dir && k < t.n; k++) {
      if (streq(t.v[k].point, grant->path)) {
        top = &t.v[k]; /* the last line is the mount on top */
      }
    }
    bool inside = false;
    for (size_t i = 0; top != NULL && i < n && !inside; i++) {
      inside = fs[i] != NULL && streq(home[i]->dev, top->dev) &&
               path_relative(fs[i], top->root) != NULL;
    }
    if (inside) {
      char **w = grow_array(&c->withheld, &c->n_withheld, &cap_withheld, sizeof(char *));
      *w = grant->path;
    } else {
      c->grants[o++] = *grant;
    }
  }
  c->n_grants = o;
  for (size_t i = 0; i < n; i++) {
    free(fs[i]);
  }
  free(fs);
  free(home);
  mounts_clear(&t);
}

void dir_entries_free(DirEntry *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(e[i].name);
  }
  free(e);
}

void carve_clear(Carve *c) {
  for (size_t i = 0; i < c->n_grants; i++) {
    free(c->grants[i].path);
  }
  free(c->grants);
  strings_free(c->restricted, c->n_restricted);
  strings_free(c->withheld, c->n_withheld);
  strings_free(c->unlisted, c->n_unlisted);
  memset(c, 0, sizeof(*c));
}
