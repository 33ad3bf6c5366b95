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
  unsigned flags;
  size_t cap_paths;
  size_t cap_unreadable;
  size_t cap_links;
  size_t cap_links_outside;
  size_t cap_listings;
  unsigned links; /* symbolic links followed on the way to the current directory */
  /* Each directory walked through a link, with the matcher state it was
   * walked in: walked once, however many links lead to it (a pnpm
   * node_modules links every package to each of its dependents). */
  struct LinkVisit {
    dev_t dev;
    ino_t ino;
    MatcherState *state;
  } *visits;
  size_t n_visits, cap_visits;
  char rel[PATH_MAX];
  size_t len;
} Walk;

/* The entries of the directory being walked, recorded as they are read
 * (with SCAN_KEEP_LISTINGS) and kept if it turns out to be on the way to a
 * protected path. */
typedef struct {
  ScanEntry *v;
  size_t n, cap;
  char *names;
  size_t names_len, names_cap;
} Recording;

static void record(Recording *rec, const struct dirent64 *de) {
  size_t len = strlen(de->d_name) + 1;
  if (rec->names_len + len > rec->names_cap) {
    rec->names_cap = rec->names_cap ? rec->names_cap * 2 : 1024;
    while (rec->names_cap < rec->names_len + len) {
      rec->names_cap *= 2;
    }
    rec->names = xreallocarray(rec->names, rec->names_cap, 1);
  }
  ScanEntry *e = grow_array(&rec->v, &rec->n, &rec->cap, sizeof(ScanEntry));
  e->ino = de->d_ino;
  e->type = de->d_type;
  e->name = rec->names_len;
  memcpy(rec->names + rec->names_len, de->d_name, len);
  rec->names_len += len;
}

static void keep_listing(Walk *w, int fd, Recording *rec) {
  struct stat st;
  if (fstat(fd, &st) < 0) {
    return; /* then `run` lists it itself */
  }
  ScanListing *l = grow_array(&w->r->listings, &w->r->n_listings, &w->cap_listings,
                              sizeof(ScanListing));
  l->relative = xstrdup(w->rel);
  l->dev = st.st_dev;
  l->ino = st.st_ino;
  l->ctime = st.st_ctim;
  l->entries = steal_pointer(&rec->v);
  l->n_entries = rec->n;
  l->names = steal_pointer(&rec->names);
}

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
  /* One allocation for both names: the relative one is the absolute
   * one's tail (at a thousand protected files, a thousand allocations
   * and 8 page faults fewer). */
  p->absolute = path_join(w->root, w->rel);
  p->relative = p->absolute + strlen(p->absolute) - strlen(w->rel);
  p->pattern = (size_t)idx;
  p->dev = st->st_dev;
  p->ino = st->st_ino;
  p->mode = st->st_mode;
  p->nlink = st->st_nlink;
  p->via_link = w->links > 0;
  w->r->hits[idx]++;
}

/* Walks the directory open at `dfd` (taking it over), whose path relative
 * to the root is w->rel and whose matcher state is `st`: each entry costs
 * one step of the matcher, not a match of its whole path. The entries come
 * from getdents64(2) directly (DirReader): fdopendir(3) would add three
 * system calls to every directory. */
static void walk(Walk *w, int dfd, const MatcherState *st);

/* Whether the directory `st` is the root or one on the way from it to the
 * link at w->rel (each looked up by name, links followed): a link back up,
 * which would loop. */
static bool on_the_way(const Walk *w, const struct stat *st) {
  char path[PATH_MAX];
  size_t root_len = strlen(w->root);
  if (root_len + 1 + w->len >= sizeof(path)) {
    return true;
  }
  memcpy(path, w->root, root_len + 1);
  for (size_t i = 0; i < w->len; i++) {
    if (i > 0 && w->rel[i] != '/') {
      continue;
    }
    if (i > 0) {
      path[root_len] = '/';
      memcpy(path + root_len + 1, w->rel, i);
      path[root_len + 1 + i] = '\0';
    }
    struct stat a;
    if (stat(path, &a) == 0 && a.st_dev == st->st_dev && a.st_ino == st->st_ino) {
      return true;
    }
  }
  return false;
}

/* A symbolic link at w->rel where the policy could protect something
 * below it: the directory it leads to is walked as if it were here. One
 * that leads nowhere, or to a file, holds nothing; one that leads back up
 * would loop, and so would more links than the kernel follows. One that
 * leads out of the project is not walked (a link to `/` or to the home
 * directory, and `**` in the policy, would have the scan walk all of it):
 * it is recorded, and the audit says what it leaves unprotected. */
static void follow_link(Walk *w, int dfd, const char *name, const MatcherState *st) {
  enum { MAX_LINKS = 40 }; /* as the kernel's ELOOP */
  int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sub < 0) {
    /* Dangling, a file, or a loop of links: it holds nothing. Anything
     * else (no permission) may hide protected entries: unknown. */
    if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) {
      add_unreadable(w, w->rel);
    }
    return;
  }
  struct stat sb;
  if (w->links >= MAX_LINKS || fstat(sub, &sb) < 0 || on_the_way(w, &sb)) {
    close(sub);
    return;
  }
  _cleanup_free_ char *joined = path_join(w->root, w->rel);
  _cleanup_free_ char *real = realpath(joined, NULL);
  if (w->r->canon_root == NULL || real == NULL ||
      path_relative(w->r->canon_root, real) == NULL) {
    close(sub);
    char **slot = grow_array(&w->r->links_outside, &w->r->n_links_outside,
                             &w->cap_links_outside, sizeof(char *));
    *slot = xstrdup(w->rel);
    return;
  }
  size_t size = matcher_state_size(w->m);
  for (size_t i = 0; i < w->n_visits; i++) {
    const struct LinkVisit *v = &w->visits[i];
    if (v->dev == sb.st_dev && v->ino == sb.st_ino && memcmp(v->state, st, size) == 0) {
      close(sub); /* what it holds is found already, under another name */
      return;
    }
  }
  struct LinkVisit *v = grow_array(&w->visits, &w->n_visits, &w->cap_visits, sizeof(*v));
  v->dev = sb.st_dev;
  v->ino = sb.st_ino;
  v->state = xmalloc(size);
  memcpy(v->state, st, size);
  size_t found_before = w->r->n_paths;
  w->links++;
  walk(w, sub, st);
  w->links--;
  if (w->r->n_paths > found_before) {
    char **slot = grow_array(&w->r->links, &w->r->n_links, &w->cap_links, sizeof(char *));
    *slot = xstrdup(w->rel);
  }
}

static void walk(Walk *w, int dfd, const MatcherState *st) {
  /* 8 KiB: about 250 entries a call. A larger buffer is mostly never
   * written, but malloc(3) writes the header of the free space after it,
   * which faults in a page that nothing else uses; on a virtual machine
   * where a page fault costs 10-15 µs, two of those cost more than the
   * three getdents calls a directory of a thousand entries needs more. */
  enum { WALK_BUFFER = 8 * 1024 };
  char *buf = xmalloc(WALK_BUFFER);
  size_t base = w->len;
  size_t found_before = w->r->n_paths;
  bool reported = false, complete = true;
  Recording rec = {0};
  MatcherState *child = xmalloc(matcher_state_size(w->m));
  DirReader dr = {.fd = dfd, .buf = buf, .size = WALK_BUFFER};
  for (;;) {
    const struct dirent64 *de = dir_reader_next(&dr);
    if (de == NULL) {
      if (errno != 0) {
        /* Not listable (ENOTDIR, EACCES, EIO): its protected entries, if
         * any, are unknown. */
        add_unreadable(w, w->rel);
        complete = false;
      }
      break;
    }
    const char *name = de->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
      continue;
    }
    if (w->flags & SCAN_KEEP_LISTINGS) {
      record(&rec, de);
    }
    size_t nlen = strlen(name);
    size_t need = base + (base ? 1 : 0) + nlen;
    if (need >= sizeof(w->rel)) {
      /* Cannot be named in PATH_MAX, so neither bound nor carved out by
       * name: when the policy could protect it, or something below it,
       * this directory holds protected entries that stay unknown. */
      bool could = false;
      if (!reported && (matcher_state_step(w->m, st, name, child, &could) >= 0 || could)) {
        add_unreadable(w, w->rel);
        reported = true;
      }
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
      if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
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
      bool is_dir = de->d_type == DT_DIR, is_link = de->d_type == DT_LNK;
      if (alive && de->d_type == DT_UNKNOWN &&
          fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        is_dir = S_ISDIR(sb.st_mode);
        is_link = S_ISLNK(sb.st_mode);
      }
      if (is_link && alive) {
        follow_link(w, dfd, name, child);
      } else if (is_dir && alive) {
        int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
  /* Not one reached through a link: a listing is looked up by the
   * canonical path of its directory. */
  if ((w->flags & SCAN_KEEP_LISTINGS) && complete && w->links == 0 &&
      w->r->n_paths > found_before) {
    keep_listing(w, dfd, &rec);
  }
  free(rec.v);
  free(rec.names);
  free(buf);
  close(dfd);
}

static int compare_paths(const void *a, const void *b) {
  return strcmp(((const ProtectedPath *)a)->relative, ((const ProtectedPath *)b)->relative);
}

static int compare_listings(const void *a, const void *b) {
  return strcmp(((const ScanListing *)a)->relative, ((const ScanListing *)b)->relative);
}

const ProtectedPath *scan_find(const ScanResult *r, const char *relative) {
  const ProtectedPath key = {.relative = relative};
  return r->n_paths > 0
             ? bsearch(&key, r->paths, r->n_paths, sizeof(ProtectedPath), compare_paths)
             : NULL;
}

const ScanListing *scan_listing(const ScanResult *r, const char *relative) {
  const ScanListing key = {.relative = (char *)relative};
  return r->n_listings > 0 ? bsearch(&key, r->listings, r->n_listings, sizeof(ScanListing),
                                     compare_listings)
                           : NULL;
}

int scan_project(const Policy *policy, const Matcher *m, ScanResult **ret, Error *err) {
  return scan_project_with(policy, m, 0, ret, err);
}

int scan_project_with(const Policy *policy, const Matcher *m, unsigned flags, ScanResult **ret,
                      Error *err) {
  _cleanup_scan_result_ ScanResult *r = xcalloc(1, sizeof(ScanResult));
  r->n_patterns = policy->n_patterns;
  r->hits = xcalloc(policy->n_patterns, sizeof(uint32_t));
  r->canon_root = policy_canonical_root(policy);
  r->absolute_canonical = r->canon_root != NULL && streq(r->canon_root, policy->root);

  int fd = open(policy->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return error_set(err, errno, _("cannot read the project directory %s: %m"), policy->root);
  }
  Walk *w = xcalloc(1, sizeof(Walk));
  w->m = m;
  w->root = policy->root;
  w->r = r;
  w->flags = flags;
  MatcherState *root = xmalloc(matcher_state_size(m));
  matcher_state_init(m, root);
  walk(w, fd, root);
  free(root);
  for (size_t i = 0; i < w->n_visits; i++) {
    free(w->visits[i].state);
  }
  free(w->visits);
  free(w);

  if (r->n_paths > 1) {
    qsort(r->paths, r->n_paths, sizeof(ProtectedPath), compare_paths);
  }
  if (r->n_links > 1) {
    qsort(r->links, r->n_links, sizeof(char *), strings_compare);
  }
  if (r->n_links_outside > 1) {
    qsort(r->links_outside, r->n_links_outside, sizeof(char *), strings_compare);
  }
  if (r->n_listings > 1) {
    qsort(r->listings, r->n_listings, sizeof(ScanListing), compare_listings);
  }
  *ret = steal_pointer(&r);
  return 0;
}

typedef struct {
  uint32_t *counts;
  bool *inside;
  uint32_t *last; /* per pattern: 1 + the path it was last counted for */
  uint32_t path;  /* 1 + the path being attributed */
} Attribution;

static void count_match(size_t pattern, void *data) {
  Attribution *a = data;
  /* Once per path, however many of its alternatives match. */
  if (a->last[pattern] != a->path) {
    a->last[pattern] = a->path;
    a->counts[pattern]++;
  }
}

static void mark_inside(size_t pattern, void *data) {
  Attribution *a = data;
  a->inside[pattern] = true;
}

void scan_pattern_matches(const ScanResult *r, const Matcher *m, uint32_t *counts, bool *inside) {
  size_t n = matcher_n_patterns(m);
  Attribution a = {.counts = counts, .inside = inside, .last = xcalloc(n + 1, sizeof(uint32_t))};
  memset(counts, 0, n * sizeof(uint32_t));
  if (inside != NULL) {
    memset(inside, 0, n * sizeof(bool));
  }
  for (size_t k = 0; k < r->n_paths; k++) {
    a.path = (uint32_t)(k + 1);
    matcher_each_match(m, r->paths[k].relative, false, count_match, &a);
    if (inside != NULL && S_ISDIR(r->paths[k].mode)) {
      matcher_each_match(m, r->paths[k].relative, true, mark_inside, &a);
    }
  }
  free(a.last);
}

void scan_result_free(ScanResult *r) {
  if (r == NULL) {
    return;
  }
  for (size_t i = 0; i < r->n_paths; i++) {
    free(r->paths[i].absolute); /* `relative` lies inside it */
  }
  for (size_t i = 0; i < r->n_unreadable; i++) {
    free(r->unreadable[i]);
  }
  for (size_t i = 0; i < r->n_links; i++) {
    free(r->links[i]);
  }
  free(r->links);
  for (size_t i = 0; i < r->n_links_outside; i++) {
    free(r->links_outside[i]);
  }
  free(r->links_outside);
  for (size_t i = 0; i < r->n_listings; i++) {
    free(r->listings[i].relative);
    free(r->listings[i].entries);
    free(r->listings[i].names);
  }
  free(r->listings);
  free(r->canon_root);
  free(r->paths);
  free(r->hits);
  free(r->unreadable);
  free(r);
}
