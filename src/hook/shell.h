/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of the shell reader that stand on their own: the lexer
 * (shell-lex.c), the parser (shell-parse.c) and the table of commands that
 * write the files they are given (shell-writers.c). What the commands
 * write is the effects' (shell-effects.h: shell.c and its units).
 * hook_shell_targets (hook.h) is the whole reader. */
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

/* The whole table, *ret_n entries. */
const ShellWriter *shell_writers(size_t *ret_n);
/* The writer named `name` (a command's base name), or NULL. */
const ShellWriter *shell_writer_find(const char *name);

/* ---- lexing (shell-lex.c) ----------------------------------------------- */

typedef struct {
  char **v;
  size_t n;
  size_t cap;
} Words;

void shell_words_add(Words *w, const char *s, size_t len);
/* Empties `w`, keeping its room for the next words. */
void shell_words_reset(Words *w);
void shell_words_clear(Words *w);

/* A `$` the shell takes as it is (in '…' or $'…', escaped, or in a value
 * it substituted) is held as LITERAL_DOLLAR while the command is read, so
 * that nothing after it mistakes `cd '$HOME'` for the home directory;
 * names get their `$` back where they leave the reader (literal_text).
 * The byte itself, in a command, is read as `?`: a glob for any one byte,
 * never a `$`. */
#define LITERAL_DOLLAR '\x01'

/* The shell's special parameters, $@ to $$. */
#define SPECIAL_PARAMETERS "@*#?!-$"

/* `s`, written out as it is: a new string for the reader's words. */
char *shell_literal_word(const char *s);
/* A word of the reader as the text it stands for: a new string. */
char *shell_literal_text(const char *word);

/* Whether a `$` before `after` starts an expansion ($VAR, ${…}, $(…), $1,
 * $?); before anything else it is a `$` as it is. */
bool shell_starts_expansion(const char *after);
/* Where in `word` the shell substitutes something only known when it runs
 * ($VAR, ${…}, $(…), `…`), or NULL. */
const char *shell_expansion(const char *word);
/* With `x` at an expansion: where it ends. */
const char *shell_expansion_end(const char *x);
/* With `p` just after `$(`: the `)` that closes it (or the end). */
const char *shell_subst_end(const char *p);
/* With `p` at the first `(` of `((`: past the `))` that closes it when it
 * is arithmetic, else NULL. */
const char *shell_arith_end(const char *p);

bool shell_ends_word(char c);
bool shell_is_name(const char *s, size_t len);
bool shell_is_assignment(const char *a);
/* >&2, >&-, >&2-: a descriptor duplicated; >&WORD is bash's &>WORD. */
bool shell_is_fd_word(const char *w);

typedef struct {
  /* Where a word is built: at least as long as the text read plus two
   * `home`s and 8 bytes (shell_read_word never writes more). */
  char *scratch;
  const char *home; /* what a leading `~` is, or NULL */
  /* Parses the command of a substitution starting at `p` (`…` or $(…)),
   * returning what follows it. */
  const char *(*substitution)(void *ctx, const char *p);
  /* Charges the work of reading (a byte each); false once the budget is
   * spent. */
  bool (*charge)(void *ctx, size_t units);
  void *ctx;
} ShellLexer;

/* Once, before any reading. */
void shell_lex_init(void);
/* Reads one word starting at *pp into `out`; false at an operator or the
 * end. Quotes are removed, substitutions parsed (ShellLexer.substitution)
 * and kept as text, a leading `~` (or one after NAME=) is `home`; a `$` the
 * shell takes as it is becomes LITERAL_DOLLAR. */
bool shell_read_word(ShellLexer *lx, const char **pp, Words *out);

/* ---- parsing (shell-parse.c) -------------------------------------------- */

/* What the parser reports, in the order of the text; `ctx` is given back. */
typedef struct {
  /* A simple command's words (assignments, reserved words and all), run
   * only if the one before failed with `after_or` (after `||`). */
  void (*command)(void *ctx, char **argv, size_t argc, bool after_or);
  /* A file a redirection writes: >, >>, >|, <>, &>, >&WORD. */
  void (*redirect)(void *ctx, const char *word);
  /* Where the command is now, as a new string, for what comes back to it:
   * a subshell's end (restore_dir, which takes it over) or a heredoc's
   * body (heredoc_body; freed by the parser). */
  char *(*save_dir)(void *ctx);
  void (*restore_dir)(void *ctx, char *saved);
  /* The body of a heredoc, announced while the command was at `dir`. */
  void (*heredoc_body)(void *ctx, const char *body, size_t len, const char *dir);
  /* Whether to stop reading (the budget is spent). */
  bool (*stopped)(void *ctx);
} ShellParseEvents;

/* Parses `text`, reporting to `ev`, with a copy of `lx` whose scratch is
 * made for the text (lx->scratch is not used, so nested calls, from a
 * substitution the lexer hands to its ShellLexer.substitution, are fine). */
void shell_parse(const ShellLexer *lx, const ShellParseEvents *ev, void *ctx, const char *text);

/* With `p` at `…` or $(…): the text of the command it runs, as a new
 * string; *ret_end is what follows it. */
char *shell_substitution_text(const char *p, const char **ret_end);
