/* SPDX-License-Identifier: Apache-2.0 */
/* Conditions that leave a valid policy weaker than it looks. Each finding
 * says what is weak, why, and what to do; commands print them as
 * "ralon: warning: SUBJECT DETAIL" and put them in --json. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "matcher.h"
#include "policy.h"
#include "scan.h"

typedef enum {
  AUDIT_UNMATCHED_LITERAL,
  AUDIT_UNMATCHED_GLOB,
  AUDIT_SYMLINK,
  AUDIT_HARD_LINKS,
  AUDIT_GIT_HOOKS,
  AUDIT_GIT_CONFIG,
  AUDIT_UNREADABLE,
  AUDIT_ROOT,
  AUDIT_SECOND_MOUNT,
  _AUDIT_KIND_MAX,
  _AUDIT_KIND_INVALID = -EINVAL,
} AuditKind;

typedef struct {
  AuditKind kind;
  char *subject; /* the path or pattern concerned, as the user wrote it */
  char *detail;  /* translated: what is weak, why, and what to do */
} AuditFinding;

typedef struct {
  AuditFinding *items;
  size_t n;
  size_t cap;
} AuditFindings;

/* Looks at the policy and what the scan found. Never fails: a condition it
 * cannot check is not reported. */
void audit_run(const Policy *policy, const Matcher *m, const ScanResult *scan, AuditFindings *out);

/* The other places the directory `root` (canonical) is mounted, from the
 * text of /proc/self/mountinfo: another mount of the same filesystem whose
 * root covers the project is a second path to the same files, and writes
 * through it are restricted by neither backend. Pure: tests hand it text. */
void audit_second_mounts(const char *mountinfo, const char *root, AuditFindings *out);

/* Whether a finding leaves protection weaker (`run --strict` refuses
 * those), as opposed to noting something harmless. */
bool audit_weakens(AuditKind k);

/* A stable identifier for --json, e.g. "hard-links". */
const char *audit_kind_to_string(AuditKind k);

void audit_findings_clear(AuditFindings *f);
