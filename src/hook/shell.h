/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of the shell reader (shell.c) that stand on their own: the
 * table of commands that write the files they are given
 * (shell-writers.c). hook_shell_targets (hook.h) is the whole reader. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* How a writer's operands say what it writes. */
typedef enum {
  SHELL_WRITES_OPERANDS, /* every operand (rm, touch, tee, chmod's files …) */
  SHELL_WRITES_COPY,     /* SRC… DEST, or -t DIR SRC… (cp, mv, ln, install, rsync) */
  SHELL_WRITES_IN_PLACE, /* its operands only with -i (sed, perl) */
  SHELL_WRITES_DD,       /* the file of of=FILE */
} ShellWriteKind;

enum {
  SHELL_WRITER_TREE = 1 << 0,         /* an operand goes with its subtree (rm -r …) */
  SHELL_WRITER_SKIP_FIRST = 1 << 1,   /* the first operand is no file (a mode, a script) */
  SHELL_WRITER_TARGET_DIR = 1 << 2,   /* -t DIR / --target-directory is the destination */
  SHELL_WRITER_RECURSIVE_R = 1 << 3,  /* -R / --recursive makes it change a tree */
  SHELL_WRITER_ENTRIES = 1 << 4,      /* removes names as they are (a link, not its target) */
  SHELL_WRITER_MOVES = 1 << 5,        /* its sources leave their place (mv) */
  SHELL_WRITER_LINKS = 1 << 6,        /* DEST is another name for SRC (ln, link) */
  SHELL_WRITER_NO_TARGET_DIR = 1 << 7, /* DEST is never a directory it goes into (link) */
};

typedef struct {
  const char *name;
  ShellWriteKind kind;
  unsigned flags;
  const char *value_opts;           /* short options that take a value */
  const char *const *value_longs;   /* long options that take a value */
} ShellWriter;

/* The writer named `name` (a command's base name), or NULL. */
const ShellWriter *shell_writer_find(const char *name);
