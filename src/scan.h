/* SPDX-License-Identifier: Apache-2.0 */
/* Resolving the policy against the filesystem: which entries under the
 * project root are protected right now. A protected directory is recorded
 * once and not descended into. A symbolic link is followed only where the
 * policy could protect something below it (`lib/?/config.yml` and a link
 * `lib/a`) and it leads to a directory inside the project: what is found
 * through it keeps the name the policy sees, and is marked so that `run`
 * resolves it to its own path. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "matcher.h"
#include "policy.h"
#include "util.h"

typedef struct {
  const char *relative; /* to the project root, "/" separated: the tail of `absolute` */
  char *absolute;
  size_t pattern; /* index of the first pattern that matches */
  /* lstat(2) of the entry at scan time: later stages compare by identity
   * (device + inode), never by name. */
  dev_t dev;
  ino_t ino;
  mode_t mode;
  nlink_t nlink;
  bool via_link; /* found through a symbolic link: `absolute` is not canonical */
} ProtectedPath;

/* One entry of a directory as readdir(3) gave it. */
typedef struct {
  ino_t ino;
  unsigned char type; /* DT_* */
  size_t name;        /* offset in ScanListing.names */
} ScanEntry;

/* A directory the scan listed on the way to protected paths (it holds one,
 * or a directory that does), kept with SCAN_KEEP_LISTINGS so `run` need
 * not list it again for the Landlock carve-out. */
typedef struct {
  char *relative; /* to the project root; "" for the root */
  dev_t dev;      /* fstat(2) of the directory the entries come from */
  ino_t ino;
  /* Its ctime then: a change since (an entry made, removed, renamed)
   * changes it. Looked at just after the entries were read. */
  struct timespec ctime;
  ScanEntry *entries; /* without "." and ".." */
  size_t n_entries;
  char *names; /* NUL-terminated, one after the other */
} ScanListing;

typedef struct {
  ProtectedPath *paths; /* sorted by `relative` */
  size_t n_paths;
  /* Per pattern: how many entries it was the first match for. Counts of
   * four bytes: a policy may list ten thousand patterns. */
  uint32_t *hits;
  size_t n_patterns;
  /* Directories that could hold protected entries but could not be read. */
  char **unreadable;
  size_t n_unreadable;
  /* Symbolic links the scan found protected entries through, relative to
   * the root, sorted. */
  char **links;
  size_t n_links;
  /* Symbolic links to directories outside the project where the policy
   * could protect something below them: not followed. Sorted. */
  char **links_outside;
  size_t n_links_outside;
  size_t n_visited; /* entries looked at, for the curious and the tests */
  ScanListing *listings; /* sorted by `relative`; only with SCAN_KEEP_LISTINGS */
  size_t n_listings;
  /* realpath(3) of the root as the scan began (NULL if that failed): what
   * the audit and `run` join the relative paths to, resolved once. */
  char *canon_root;
  /* The policy's root was canon_root already, so every path's `absolute`
   * is its canonical path and need not be joined again. */
  bool absolute_canonical;
} ScanResult;

enum {
  SCAN_KEEP_LISTINGS = 1 << 0,
};

int scan_project(const Policy *policy, const Matcher *m, ScanResult **ret, Error *err);
int scan_project_with(const Policy *policy, const Matcher *m, unsigned flags, ScanResult **ret,
                      Error *err);

/* The listing of the directory `relative` (to the root), or NULL. */
const ScanListing *scan_listing(const ScanResult *r, const char *relative);
/* The protected entry found at `relative`, or NULL (a binary search). */
const ProtectedPath *scan_find(const ScanResult *r, const char *relative);

/* For every pattern, how many of the protected paths it matches, whether
 * or not an earlier pattern matched them first (hits[] counts only that):
 * a protected directory counts once, not what is inside it. With
 * `inside`, also whether it could match something inside a protected
 * directory, which the scan does not walk. One pass over the paths (the
 * matcher's index attributes each to its patterns), not one per pattern.
 * counts[] and inside[] hold one for each of the matcher's patterns. */
void scan_pattern_matches(const ScanResult *r, const Matcher *m, uint32_t *counts, bool *inside);

void scan_result_free(ScanResult *r);
static inline void scan_result_freep(ScanResult **r) {
  scan_result_free(*r);
}
#define _cleanup_scan_result_ _cleanup_(scan_result_freep)

/* "directory", "file", "symlink" or "other": the kind, for messages and JSON. */
const char *scan_kind_name(mode_t mode);
