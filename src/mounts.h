/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/self/mountinfo, parsed once into a table: the audit's mount
 * findings and the Landlock plan's bind-mount check read it. */
#pragma once

#include <stddef.h>

/* One line of /proc/self/mountinfo; the strings point into the table's
 * copy of the text, unescaped in place. */
typedef struct {
  const char *id;
  const char *parent;
  const char *dev;     /* major:minor */
  const char *root;    /* the filesystem path mounted (field 4) */
  const char *point;   /* where (field 5) */
  const char *fstype;  /* after the " - ", "" when missing */
  const char *source;
  const char *options; /* the superblock's options */
} MountEntry;

typedef struct {
  MountEntry *v;
  size_t n;
  size_t cap;
  char *text;
} MountTable;

/* Parses `mountinfo` (the text of /proc/self/mountinfo) into `t`. */
void mounts_parse(const char *mountinfo, MountTable *t);
void mounts_clear(MountTable *t);
/* The mount holding `path`: the longest mount point above it (the last
 * such line wins among equals: it is the one on top). NULL if none. */
const MountEntry *mount_holding(const MountTable *t, const char *path);
/* Where `path` (absolute, normalised) lies inside the filesystem of the
 * mount holding it (caller frees), that mount in *ret_home; NULL when no
 * mount holds it. */
char *mount_fs_path(const MountTable *t, const char *path, const MountEntry **ret_home);
