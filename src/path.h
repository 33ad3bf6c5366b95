/* SPDX-License-Identifier: Apache-2.0 */
/* Path helpers: the one way ralon joins, normalises and relates paths. All
 * of them are lexical unless their name says otherwise. */
#pragma once

#include <stdbool.h>

#include "util.h"

/* `a/b`, or a copy of `b` when it is absolute. */
char *path_join(const char *a, const char *b);

/* Collapses empty and "." components and resolves ".." against the
 * components before it, without looking at the filesystem. "/.." is "/";
 * a relative path keeps leading ".." it cannot resolve. "" becomes ".". */
char *path_normalize(const char *p);

/* `p` made absolute against `base` (or the working directory when base is
 * NULL) and normalised. NULL with errno set when the working directory
 * cannot be read. */
char *path_absolute(const char *base, const char *p);

/* Where the normalised absolute `path` lies inside `root`: a pointer into
 * `path` ("" for the root itself), or NULL when it is outside. */
const char *path_relative(const char *root, const char *path);

/* What the symbolic link `p` holds (at most PATH_MAX - 1 bytes, caller
 * frees), or NULL with errno set. A function of its own so that its
 * PATH_MAX buffer is on the stack only while it runs: in a caller's frame
 * it put 4 KiB of stack under everything the caller called (and under
 * each step of a recursion), each new page of stack a page fault, on
 * every hook call. */
char *path_read_link(const char *p);

/* `p` with every symbolic link resolved, like realpath(3), except that
 * components that do not exist yet are appended lexically and dangling
 * links are followed (like `realpath -m`): a file an agent is about to
 * create, directly or through a link, still has a resolved name. NULL with
 * errno set on other errors (EACCES, ELOOP, …). */
char *path_resolve(const char *p);

/* The last component and the directory part of a normalised path. */
const char *path_basename(const char *p);
char *path_dirname(const char *p);

/* A path as /proc/self/mountinfo writes it, with its \ooo escapes (space,
 * tab, newline, backslash) undone: in a new string, or in `s` itself. */
char *path_unescape_mountinfo(const char *s);
char *path_unescape_mountinfo_in_place(char *s);

/* A name as it is shown to a person: unchanged when it is printable,
 * well-formed UTF-8 without `"` or `\`; otherwise in double quotes with
 * C escapes (\n, \t, \", \\, and \ooo for every other control character,
 * C1 control, and byte that is not UTF-8), as git quotes names. A file
 * name may hold any byte but `/` and NUL, and whoever wrote the project
 * chose its names: printed raw, a newline forges a line of ralon's output
 * and an escape sequence drives the terminal. Caller frees. */
char *path_display(const char *name);

/* `s` with the same bytes escaped, but no quotes and nothing else: for a
 * message in UTF-8 on one line (a hook's reason, the journal's MESSAGE, a
 * JSON `message`), whose names are not marked off. Newlines are escaped
 * too. Caller frees. */
char *text_display(const char *s);

/* The columns `s` (UTF-8, as the functions above return it) takes on a
 * terminal: wcwidth(3) of each character as C.UTF-8 has it, whatever the
 * process's locale (0 for a combining mark, 2 for a wide one; 1 where it
 * has none); a byte that is not UTF-8 counts 1. For aligning and
 * wrapping, where strlen would count a non-ASCII name two to four times. */
size_t text_columns(const char *s);

/* A message for the terminal, in the locale's character set (`utf8`: it
 * is UTF-8): control characters escaped, but with `lines` its newlines and
 * tabs kept; bytes that are not UTF-8 and C1 controls escaped only in
 * UTF-8, and in another character set only 0x80-0x9F where each byte is a
 * character (ISO 8859), so that a translation is never mangled. Caller
 * frees. */
char *text_display_terminal(const char *s, bool utf8, bool lines);

/* Where execvp(3) would find the program `name` with `path_env` as PATH
 * (NULL: the system's default): `name` itself when it holds a slash, else
 * the first executable regular file of that name in the search path.
 * NULL when there is none (caller frees). */
char *path_find_program(const char *path_env, const char *name);
/* The same, and, where it finds none, why in `*ret_errnum` (when not
 * NULL), as execvp(3) would fail: EACCES when a file of that name is in
 * the search path but cannot be executed (not a regular file, no execute
 * permission) or a directory of it cannot be searched, else ENOENT; for a
 * name with a slash, stat(2)'s error or EACCES. 0 when found. */
char *path_search_program(const char *path_env, const char *name, int *ret_errnum);
