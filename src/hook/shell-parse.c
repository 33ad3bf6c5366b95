/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing for the shell reader: a command line as simple commands (their
 * words), the files redirections write, subshells, `||`, heredocs and the
 * bodies that follow them, reported as they come (ShellParseEvents). What
 * any of it writes is decided elsewhere (shell.c); the words are the
 * lexer's (shell-lex.c). */
#include <string.h>

#include "hook/shell.h"
#include "util.h"

/* How many open subshells keep where they were opened: each is a copy,
 * and a long enough command line must not cost quadratic memory. */
#define MAX_SAVED_DIRS 64

/* `…`, with `p` after the opening quote: the text of the command inside,
 * its escapes undone; *ret_end is what follows the closing quote. */
static char *backquote_text(const char *p, const char **ret_end) {
  size_t len = 0;
  for (const char *e = p; *e != '\0' && *e != '`'; e++, len++) {
    if (*e == '\\' && e[1] != '\0' && strchr("$`\\", e[1]) != NULL) {
      e++;
    }
  }
  char *inner = xmalloc(len + 1);
  size_t n = 0;
  while (*p != '\0' && *p != '`') {
    if (*p == '\\' && p[1] != '\0' && strchr("$`\\", p[1]) != NULL) {
      p++;
    }
    inner[n++] = *p++;
  }
  inner[n] = '\0';
  *ret_end = *p == '`' ? p + 1 : p;
  return inner;
}

char *shell_substitution_text(const char *p, const char **ret_end) {
  if (*p == '`') {
    return backquote_text(p + 1, ret_end);
  }
  const char *e = shell_subst_end(p + 2);
  *ret_end = *e != '\0' ? e + 1 : e;
  return xstrndup(p + 2, (size_t)(e - p - 2));
}

/* Delimiters that do not come after some point of a text: a heredoc that
 * never ends is looked for once, not again on every line after it. */
typedef struct {
  char *delim[16];
  const char *from[16];
  size_t n;
} Unended;

typedef struct {
  ShellLexer *lx;
  const ShellParseEvents *ev;
  void *ctx;
  Words heredocs;    /* the delimiters announced on the line being read */
  Words heredoc_dirs; /* where the command was when each was announced */
  Unended unended;
} Parser;

static void push_owned(Words *w, char *s) {
  char **slot = grow_array(&w->v, &w->n, &w->cap, sizeof(char *));
  *slot = s;
}

/* Skips the bodies of the heredocs announced on the line just ended,
 * handing each to the events. When a delimiter never comes, nothing is
 * skipped: bash would take the rest as the body, but the rest is read as
 * commands rather than trusted. */
static const char *skip_heredocs(Parser *ps, const char *p) {
  Words *pending = &ps->heredocs;
  Unended *unended = &ps->unended;
  const char *start = p;
  _cleanup_free_ const char **bodies = xcalloc(pending->n * 2 + 1, sizeof(char *));
  bool all = true;
  for (size_t i = 0; i < pending->n && all; i++) {
    const char *delim = pending->v[i];
    size_t dlen = strlen(delim);
    bool done = false, known = false;
    for (size_t k = 0; k < unended->n && !known; k++) {
      known = unended->from[k] <= p && streq(unended->delim[k], delim);
    }
    const char *from = p;
    bodies[2 * i] = p;
    while (*p != '\0' && !done && !known) {
      const char *e = strchrnul(p, '\n');
      const char *t = p;
      while (*t == '\t') {
        t++;
      }
      done = (size_t)(e - t) == dlen && strncmp(t, delim, dlen) == 0;
      bodies[2 * i + 1] = p;
      /* A line skipped costs less than one read. */
      if (!ps->lx->charge(ps->lx->ctx, 1 + (size_t)(e - p) / 8)) {
        break;
      }
      p = *e ? e + 1 : e;
    }
    if (!done && !known && unended->n < ELEMENTSOF(unended->delim)) {
      unended->delim[unended->n] = xstrdup(delim);
      unended->from[unended->n++] = from;
    }
    all = done;
  }
  if (!all) {
    p = start;
  }
  for (size_t i = 0; i < pending->n && all; i++) {
    ps->ev->heredoc_body(ps->ctx, bodies[2 * i], (size_t)(bodies[2 * i + 1] - bodies[2 * i]),
                         ps->heredoc_dirs.v[i]);
  }
  shell_words_reset(pending);
  shell_words_reset(&ps->heredoc_dirs);
  return p;
}

void shell_parse(const ShellLexer *with, const ShellParseEvents *ev, void *ctx,
                 const char *command) {
  /* A lexer of its own, with scratch room for this text. */
  ShellLexer own = *with;
  ShellLexer *lx = &own;
  lx->scratch = xmalloc(strlen(command) + 2 * (lx->home != NULL ? strlen(lx->home) : 0) + 8 + 1);
  Parser ps = {.lx = lx, .ev = ev, .ctx = ctx};
  Words words = {0};
  Words target = {0};    /* a redirection's, read into the same room each time */
  Words subshells = {0}; /* where the command was at each open `(` */
  size_t deeper = 0;     /* open `(` beyond MAX_SAVED_DIRS, not remembered */
  bool or_next = false;  /* the next command runs only if the one before failed */
  const char *p = command;
  while (!ev->stopped(ctx)) {
    while (*p == ' ' || *p == '\t') {
      p++;
    }
    char c = *p;
    if (c == '#') {
      p = strchrnul(p, '\n');
      continue;
    }
    bool arith = c == '(' && p[1] == '(' && shell_arith_end(p) != NULL;
    if (arith || c == '\0' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
        c == ')') {
      if (words.n > 0) {
        ev->command(ctx, words.v, words.n, or_next);
        or_next = false;
      }
      shell_words_reset(&words);
    }
    if (arith) {
      /* (( … )): arithmetic, where << is a shift, not a heredoc. */
      p = shell_arith_end(p);
      continue;
    }
    if (c == '\0') {
      break;
    }
    if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      if (c == '|' && p[1] == '|') {
        or_next = true;
        p += 2;
        continue;
      }
      /* `&>` and `&>>` redirect both streams to a file. */
      if (c == '&' && p[1] == '>') {
        p += p[2] == '>' ? 3 : 2;
        while (*p == ' ' || *p == '\t') {
          p++;
        }
        if (shell_read_word(lx, &p, &target)) {
          ev->redirect(ctx, target.v[0]);
        }
        shell_words_reset(&target);
        continue;
      }
      if (c == '(' && subshells.n == MAX_SAVED_DIRS) {
        deeper++;
      } else if (c == '(') {
        /* A subshell (or $(…)): its `cd` ends with it. */
        push_owned(&subshells, ev->save_dir(ctx));
      } else if (c == ')' && deeper > 0) {
        deeper--;
      } else if (c == ')' && subshells.n > 0) {
        ev->restore_dir(ctx, subshells.v[--subshells.n]);
      }
      p++;
      if (c == '\n' && ps.heredocs.n > 0) {
        p = skip_heredocs(&ps, p);
      }
      continue;
    }
    if (c == '>' || c == '<') {
      /* A fd number just read belongs to the operator, not the command. */
      if (words.n > 0 &&
          strspn(words.v[words.n - 1], "0123456789") == strlen(words.v[words.n - 1]) &&
          p > command && p[-1] >= '0' && p[-1] <= '9') {
        free(words.v[--words.n]);
      }
      bool out = c == '>';
      p++;
      if (out && (*p == '>' || *p == '|')) {
        p++;
      } else if (!out && *p == '>') {
        p++; /* <> opens the file for writing too */
        out = true;
      } else if (!out && *p == '<') {
        if (p[1] == '<') {
          p += 2; /* <<< here-string: a word, not a file */
        } else {
          /* A heredoc: its body follows the end of this line. */
          p++;
          while (*p == '-') {
            p++;
          }
          while (*p == ' ' || *p == '\t') {
            p++;
          }
          Words delim = {0};
          if (shell_read_word(lx, &p, &delim)) {
            char *text = shell_literal_text(delim.v[0]);
            push_owned(&ps.heredocs, text);
            push_owned(&ps.heredoc_dirs, ev->save_dir(ctx));
          }
          shell_words_clear(&delim);
          continue;
        }
      }
      bool dup = *p == '&';
      if (dup) {
        p++;
      }
      while (*p == ' ' || *p == '\t') {
        p++;
      }
      if (shell_read_word(lx, &p, &target) && out && !(dup && shell_is_fd_word(target.v[0]))) {
        ev->redirect(ctx, target.v[0]);
      }
      shell_words_reset(&target);
      continue;
    }
    if (!shell_read_word(lx, &p, &words)) {
      p++;
    }
  }
  shell_words_clear(&words);
  shell_words_clear(&target);
  shell_words_clear(&ps.heredocs);
  shell_words_clear(&ps.heredoc_dirs);
  shell_words_clear(&subshells);
  for (size_t k = 0; k < ps.unended.n; k++) {
    free(ps.unended.delim[k]);
  }
  free(lx->scratch);
}
