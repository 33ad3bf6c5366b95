/* SPDX-License-Identifier: Apache-2.0 */
/* agent.lock: finding it, reading it strictly, normalising its patterns
 * (ARCHITECTURE.md §2). Nothing here matches paths; that is matcher.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"
#include "matcher.h"
#include "util.h"

#define POLICY_FILE_NAME "agent.lock"
#define POLICY_VERSION 1u
/* Larger files are refused before parsing. */
#define POLICY_MAX_SIZE (1024u * 1024u)

typedef struct {
  /* In the policy's `strings` or `text`, freed with it. Pattern zero is
   * always the implicit one, agent.lock itself. */
  char *pattern; /* normalised: no "./", no trailing "/", "/" separators */
} PolicyPattern;

/* Where a pattern was written: what only `status --json` shows, so a
 * policy keeps it only when asked to (POLICY_POSITIONS). A policy may
 * list ten thousand patterns, and every command reads them all. */
typedef struct {
  /* The string as written in the file, in the policy's `strings` or
   * `text` (the pattern's own when it was written in its normal form). */
  char *declared;
  unsigned line; /* 1-based position of the item; 0 for the implicit one */
  unsigned column;
} PolicyPosition;

enum {
  POLICY_POSITIONS = 1 << 0, /* fill Policy.positions */
  /* Keep patterns written more than once, each time: for a caller that
   * only asks which is the first to match a path (`check PATH`, the
   * hooks), which the duplicates never change. The check for them costs
   * a hash of every pattern. */
  POLICY_DUPLICATES = 1 << 1,
};

typedef struct {
  char *file; /* absolute path of agent.lock */
  char *root; /* absolute directory holding it: patterns are relative to it */
  /* `root` is canonical already (no symbolic link, `.` or `..`): it was
   * found from the working directory, whose name getcwd(3) gives so. */
  bool root_canonical;
  /* Found from a working directory the shell reached through a symbolic
   * link: the agent.lock further up along that way, which the nearest one
   * keeps from applying (NULL when there is none). */
  char *enclosing_by_link;
  /* The file policy_load read (0 when parsed from text). */
  dev_t file_dev;
  ino_t file_ino;
  unsigned version;
  PolicyPattern *patterns; /* [0] is always agent.lock */
  PolicyPosition *positions; /* beside `patterns`; NULL without POLICY_POSITIONS */
  size_t n_patterns;
  size_t n_declared; /* items in `protect:` that were not duplicates (with
                       * POLICY_DUPLICATES: every item) */
  /* A bit per pattern: its text is a literal path in its normal form, as
   * most are (`src/auth.c`), which the matcher then need not read again
   * (matcher_new_strided). NULL where nothing is known. */
  uint64_t *plain;
  Arena strings;     /* every pattern's and declared string */
  /* The patterns written in their normal form (most), copied one after
   * the other, each with its NUL, or NULL. Freed with the policy. */
  char *text;
  /* policy_load read the file whole, a second time, because reading it
   * as libyaml parsed it failed (a file that changed between the two):
   * what the tests check is the exception. */
  bool read_whole;
  /* Work parsing did beyond libyaml's (slots of the duplicate check's
   * index probed): what the tests hold the growth of, never a time. */
  uint64_t operations;
} Policy;

/* A matcher of the policy's patterns (matcher_new_strided), which borrows
 * them: it must be freed before the policy. */
int policy_matcher(const Policy *p, unsigned flags, Matcher **ret, Error *err);

/* Parses `len` bytes of policy text. `file` names it in messages and
 * determines `root`. Every rejection is "FILE:LINE:COL: message". */
int policy_parse(const char *file, const char *text, size_t len, Policy **ret, Error *err);
/* The same with `flags` (POLICY_POSITIONS; policy_parse keeps positions). */
int policy_parse_flags(const char *file, const char *text, size_t len, unsigned flags,
                       Policy **ret, Error *err);

/* Reads and parses the file at `file` (an absolute path), with
 * positions. */
int policy_load(const char *file, Policy **ret, Error *err);
int policy_load_flags(const char *file, unsigned flags, Policy **ret, Error *err);

/* Whether `file`, the name agent.lock in a directory, is a policy file:
 * 0 when it is a regular file (also through a symbolic link), -ENOENT
 * (err untouched) when nothing has that name, -EINVAL when it is anything
 * else (a directory, a FIFO, a socket, a device, a symbolic link leading
 * nowhere or to one of those: err says which, and what to do), another
 * -errno when it cannot be looked at. Opens nothing, so a FIFO cannot
 * block it. */
int policy_check_file(const char *file, Error *err);

/* Walks up from `start` (a directory; NULL for the working directory) to
 * `/`; the first directory holding the name agent.lock is the root, and
 * that name must be a policy file (policy_check_file: anything else there
 * is an error, never passed by). Returns 0 and the policy, or -ENOENT
 * (with err set) when there is none, or another negative value on a bad
 * policy, on an agent.lock that is no regular file (-EINVAL), or when a
 * directory on the way cannot be searched (then whether there is one is
 * unknown). */
int policy_discover(const char *start, Policy **ret, Error *err);
/* The same with `flags` for the parse (policy_discover keeps positions). */
int policy_discover_flags(const char *start, unsigned flags, Policy **ret, Error *err);

/* The policy's root with every symbolic link resolved (caller frees), or
 * NULL with errno: a copy when it is canonical already (root_canonical),
 * else realpath(3), which costs a readlink(2) per component. */
char *policy_canonical_root(const Policy *p);

/* The directory policy_discover would report, without parsing anything:
 * *ret_file is the absolute path of agent.lock. -ENOENT when there is none;
 * -EINVAL when the nearest agent.lock is no regular file; another negative
 * errno when a directory on the way cannot be searched,
 * and -EXDEV when, without `start`, the working directory was reached
 * through a symbolic link ($PWD) along which another agent.lock applies
 * than along its real path. */
int policy_find(const char *start, char **ret_file, Error *err);
/* The same, except that -ENOENT (none at or above `start`) sets no
 * message: for callers to whom that is an answer rather than an error
 * (`hook check` looks for every policy up to `/`). A message formatted
 * to be thrown away is the first translated string, whose lookup loads
 * the catalogue and reads locale.alias. */
int policy_find_if_any(const char *start, char **ret_file, Error *err);

/* Normalises one pattern as ARCHITECTURE.md §2 says. On rejection returns -1 and
 * sets *ret_reason to a translated explanation (static storage or owned by
 * *ret_reason_owned, which the caller frees). */
int policy_normalize_pattern(const char *in, size_t len, char **ret, char **ret_reason);

void policy_free(Policy *p);
static inline void policy_freep(Policy **p) {
  policy_free(*p);
}
#define _cleanup_policy_ _cleanup_(policy_freep)

/* The commented starter policy `ralon init` writes for directory `dir`:
 * .git/hooks and .git/config in a git repository, and the CI configuration
 * and lock files that exist there. Always a valid policy. */
char *policy_starter_text(const char *dir);
