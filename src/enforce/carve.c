/* SPDX-License-Identifier: Apache-2.0 */
/* The Landlock carve-out, planned without touching the filesystem: the
 * directory lister is handed in, so tests run it on a fake tree.
 *
 * Landlock rules only ever add access, so "everything but X" is written as
 * "every sibling of every directory on the way to X". */
#include <string.h>
#include <sys/stat.h>

#include "enforce/plan.h"
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

static bool identity_has(const IdentitySet *s, dev_t dev, ino_t ino) {
  for (size_t i = 0; i < s->n; i++) {
    if (s->v[i].dev == dev && s->v[i].ino == ino) {
      return true;
    }
  }
  return false;
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists `dir`; a directory that does not exist (below a missing protected
 * path) simply has no entries. */
static int list(DirLister lister, void *userdata, const char *dir, DirEntry **ret, size_t *n,
                Error *err) {
  *ret = NULL;
  *n = 0;
  int r = lister(userdata, dir, ret, n);
  if (r == -ENOENT || r == -ENOTDIR) {
    return 0;
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot list %s for the Landlock rules: %m"), dir);
  }
  return 0;
}

int carve_plan(const PlanTarget *targets, size_t n, DirLister lister, void *userdata, Carve *ret,
               Error *err) {
  char **chain = NULL;
  size_t n_chain = 0, cap_chain = 0, cap_grants = 0, cap_restricted = 0;
  IdentitySet blocked = {0}; /* protected objects and chain directories */
  Carve c = {0};
  int r = 0;

  memset(ret, 0, sizeof(*ret));
  char **root = grow_array(&chain, &n_chain, &cap_chain, sizeof(char *));
  *root = xstrdup("/");
  for (size_t i = 0; i < n; i++) {
    const PlanTarget *t = &targets[i];
    plan_add_ancestors(t->path, &chain, &n_chain, &cap_chain);
    if (t->link != NULL) {
      /* A protected symbolic link: the directory holding the link must
       * not let it be replaced either (ATTACKS.md row 35). */
      plan_add_ancestors(t->link, &chain, &n_chain, &cap_chain);
    }
    if (!t->missing) {
      identity_add(&blocked, t->dev, t->ino);
    }
  }
  plan_sort_unique(chain, &n_chain);

  /* A chain directory is known by what its parent's listing says it is:
   * collect those identities before granting anything, so an alias of one
   * (a bind mount, or the same directory under another spelling) is never
   * granted. */
  for (size_t i = 0; i < n_chain && r == 0; i++) {
    if (plan_inside_protected_dir(targets, n, chain[i])) {
      continue;
    }
    DirEntry *ents;
    size_t ne;
    r = list(lister, userdata, chain[i], &ents, &ne, err);
    for (size_t k = 0; r == 0 && k < ne; k++) {
      _cleanup_free_ char *child = path_join(chain[i], ents[k].name);
      if (bsearch(&child, chain, n_chain, sizeof(char *), compare_strings) != NULL) {
        identity_add(&blocked, ents[k].dev, ents[k].ino);
      }
    }
    dir_entries_free(ents, ne);
  }

  for (size_t i = 0; i < n_chain && r == 0; i++) {
    if (plan_inside_protected_dir(targets, n, chain[i])) {
      continue;
    }
    char **slot = grow_array(&c.restricted, &c.n_restricted, &cap_restricted, sizeof(char *));
    *slot = xstrdup(chain[i]);
    DirEntry *ents;
    size_t ne;
    r = list(lister, userdata, chain[i], &ents, &ne, err);
    for (size_t k = 0; r == 0 && k < ne; k++) {
      const DirEntry *e = &ents[k];
      /* A link has no content to write, and cannot leave a restricted
       * directory; rules are never placed through one. */
      if (S_ISLNK(e->mode) || identity_has(&blocked, e->dev, e->ino)) {
        continue;
      }
      CarveGrant *g = grow_array(&c.grants, &c.n_grants, &cap_grants, sizeof(CarveGrant));
      g->path = path_join(chain[i], e->name);
      g->is_dir = S_ISDIR(e->mode);
    }
    dir_entries_free(ents, ne);
  }

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
  for (size_t i = 0; i < c->n_restricted; i++) {
    free(c->restricted[i]);
  }
  free(c->grants);
  free(c->restricted);
  memset(c, 0, sizeof(*c));
}
