/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary trees for the unit tests, and forked children for the tests
 * that need a process (another user, a mount namespace) of their own
 * (tmptree.c). */
#pragma once

#include "util.h"

/* The scratch directory of this test program (scratch_setup). */
extern char *scratch;

void rm_rf_at(int parent, const char *name);
void scratch_setup(void);
void scratch_teardown(void);
/* A new directory below the scratch directory (caller frees). */
char *make_tmpdir(void);
void make_dir(const char *dir, const char *rel);
void make_file(const char *dir, const char *rel, const char *content);
void make_symlink(const char *dir, const char *rel, const char *target);
void make_hardlink(const char *dir, const char *existing, const char *rel);

#include <stdbool.h>
#include <stdio.h>

/* ---- tests that need a process of their own ------------------------------ */

/* What a forked child does: writes its results to `out`, or a first line
 * "SKIP why" when this system cannot make the condition it tests. It must
 * not use ck_assert (it is not the process check watches): write "ERROR
 * why" instead, which the caller's comparison then shows. */
typedef void (*ChildFn)(FILE *out, void *userdata);

/* Runs fn in a forked child and returns what it wrote (caller frees), or
 * NULL after printing "SKIPPED test: why" to stderr when it skipped. The
 * child must exit with status 0. */
char *run_in_child(const char *test, ChildFn fn, void *userdata);

/* Runs fn in a forked child as a user the permission bits apply to: as
 * root, one that becomes nobody (65534); otherwise one that stays as we
 * are. When `probe` is not NULL, skips unless that directory cannot be
 * read by that user (EACCES). */
char *run_unprivileged(const char *test, const char *probe, ChildFn fn, void *userdata);

/* In a child: enters a mount namespace of its own (and a user namespace
 * mapping us onto ourselves when not root) with private propagation, so
 * mounts made there are seen by nobody else and vanish with it. False
 * after writing the SKIP line. */
bool child_enter_mount_namespace(FILE *out);
