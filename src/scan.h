/* SPDX-License-Identifier: Apache-2.0 */
/* Resolving the policy against the filesystem: which entries under the
 * project root are protected right now. Symbolic links are never followed;
 * a protected directory is recorded once and not descended into. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "matcher.h"
#include "policy.h"
#include "util.h"

typedef struct {
  char *relative; /* to the project root, "/" separated */
  char *absolute;
  size_t pattern; /* index of the first pattern that matches */
  /* lstat(2) of the entry at scan time: later stages compare by identity
   * (device + inode), never by name. */
  dev_t dev;
  ino_t ino;
  mode_t mode;
  nlink_t nlink;
} ProtectedPath;

typedef struct {
  ProtectedPath *paths; /* sorted by `relative` */
  size_t n_paths;
  size_t *hits; /* per pattern: how many entries it was the first match for */
  size_t n_patterns;
  /* Directories that could hold protected entries but could not be read. */
  char **unreadable;
  size_t n_unreadable;
  size_t n_visited; /* entries looked at, for the curious and the tests */
} ScanResult;

int scan_project(const Policy *policy, const Matcher *m, ScanResult **ret, Error *err);

void scan_result_free(ScanResult *r);
static inline void scan_result_freep(ScanResult **r) {
  scan_result_free(*r);
}
#define _cleanup_scan_result_ _cleanup_(scan_result_freep)

/* "directory", "file", "symlink" or "other": the kind, for messages and JSON. */
const char *scan_kind_name(mode_t mode);
