/* SPDX-License-Identifier: Apache-2.0 */
/* Temporary trees for the unit tests (tmptree.c). */
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
