/* SPDX-License-Identifier: Apache-2.0 */
/* Lexing for the shell reader (shell.c): the words of a command line as
 * the shell would split and unquote them ('…', "…", $'…', \\, a leading
 * `~`), and where substitutions, arithmetic and expansions end. What a
 * command substitution runs is handed back to the parser
 * (ShellLexer.substitution). */
#include <ctype.h>
#include <string.h>

#include "hook/shell.h"
#include "util.h"




static bool plain_bytes[256];


void shell_words_add(Words *w, const char *s, size_t len) {
  char **slot = grow_array(&w->v, &w->n, &w->cap, sizeof(char *));
  *slot = xstrndup(s, len);
}

void shell_words_reset(Words *w) {
  for (size_t i = 0; i < w->n; i++) {
    free(w->v[i]);
  }
  w->n = 0;
}

void shell_words_clear(Words *w) {
  for (size_t i = 0; i < w->n; i++) {
    free(w->v[i]);
  }
  free(w->v);
  memset(w, 0, sizeof(*w));
}

/* A byte of the command as the reader holds it: `literal` when the shell
 * takes it as it is. */
static char word_byte(char c, bool literal) {
  return c == LITERAL_DOLLAR ? '?' : literal && c == '$' ? LITERAL_DOLLAR : c;
}

/* Appends `len` bytes of `s`, all taken as they are, to buf at *n. */
static void put_literal(char *buf, size_t *n, const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    buf[(*n)++] = word_byte(s[i], true);
  }
}

/* `s`, written out as it is: a new string for the reader's words. */
char *shell_literal_word(const char *s) {
  size_t n = 0;
  char *w = xmalloc(strlen(s) + 1);
  put_literal(w, &n, s, strlen(s));
  w[n] = '\0';
  return w;
}

/* A word of the reader as the text it stands for: a new string. */
char *shell_literal_text(const char *word) {
  char *t = xstrdup(word);
  for (char *c = t; (c = strchr(c, LITERAL_DOLLAR)) != NULL; c++) {
    *c = '$';
  }
  return t;
}

/* Whether a `$` before `after` starts an expansion ($VAR, ${…}, $(…), $1,
 * $?); before anything else it is a `$` as it is. */
bool shell_starts_expansion(const char *after) {
  char c = after[0];
  return c == '{' || c == '(' || c == '_' || isalnum((unsigned char)c) ||
         (c != '\0' && strchr(SPECIAL_PARAMETERS, c) != NULL);
}

/* Where in `word` the shell substitutes something only known when it runs
 * ($VAR, ${…}, $(…), `…`), or NULL. */
const char *shell_expansion(const char *word) {
  for (const char *c = word; *c != '\0'; c++) {
    if (*c == '`' || (*c == '$' && shell_starts_expansion(c + 1))) {
      return c;
    }
  }
  return NULL;
}

/* With `p` just after `$(`: the `)` that closes it (or the end). */
const char *shell_subst_end(const char *p) {
  int depth = 1;
  for (; *p != '\0'; p++) {
    if (*p == '\\' && p[1] != '\0') {
      p++;
    } else if (*p == '\'') {
      const char *e = strchr(p + 1, '\'');
      if (e == NULL) {
        return p + strlen(p);
      }
      p = e;
    } else if (*p == '"') {
      for (p++; *p != '\0' && *p != '"'; p++) {
        if (*p == '\\' && p[1] != '\0') {
          p++;
        }
      }
      if (*p == '\0') {
        return p;
      }
    } else if (*p == '(') {
      depth++;
    } else if (*p == ')' && --depth == 0) {
      return p;
    }
  }
  return p;
}

/* With `x` at an expansion (see shell_expansion()): where it ends. */
const char *shell_expansion_end(const char *x) {
  if (*x == '`') {
    const char *e = strchr(x + 1, '`');
    return e != NULL ? e + 1 : x + strlen(x);
  }
  if (x[1] == '(') {
    const char *e = shell_subst_end(x + 2);
    return *e != '\0' ? e + 1 : e;
  }
  if (x[1] == '{') {
    int depth = 0;
    for (const char *c = x + 1; *c != '\0'; c++) {
      depth += *c == '{';
      depth -= *c == '}';
      if (depth == 0) {
        return c + 1;
      }
    }
    return x + strlen(x);
  }
  const char *c = x + 1;
  if (*c == '_' || isalpha((unsigned char)*c)) {
    while (*c == '_' || isalnum((unsigned char)*c)) {
      c++;
    }
    return c;
  }
  return *c != '\0' ? c + 1 : c; /* $1, $@, $$ … */
}

/* With `p` at the first `(` of `((`: past the `))` that closes it when it
 * is arithmetic (where `<<` is a shift), else NULL: `((a) )` is two
 * subshells, as bash decides it. */
const char *shell_arith_end(const char *p) {
  int depth = 0;
  for (; *p != '\0'; p++) {
    if (*p == '(') {
      if (++depth > 64) {
        return NULL;
      }
    } else if (*p == ')') {
      if (--depth == 1) {
        return p[1] == ')' ? p + 2 : NULL;
      }
    }
  }
  return NULL;
}

/* ---- words ------------------------------------------------------------- */

bool shell_ends_word(char c) {
  return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
         c == '(' || c == ')' || c == '<' || c == '>';
}

bool shell_is_name(const char *s, size_t len) {
  if (len == 0 || (s[0] >= '0' && s[0] <= '9')) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\0' ||
        strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_", s[i]) == NULL) {
      return false;
    }
  }
  return true;
}

bool shell_is_assignment(const char *a) {
  const char *eq = strchr(a, '=');
  return eq != NULL && shell_is_name(a, (size_t)(eq - a));
}

/* >&2, >&-, >&2-: a descriptor duplicated; >&WORD is bash's &>WORD. */
bool shell_is_fd_word(const char *w) {
  size_t d = strspn(w, "0123456789");
  return streq(w, "-") || (d > 0 && (w[d] == '\0' || streq(w + d, "-")));
}

void shell_lex_init(void) {
  for (int i = 0; i < 256; i++) {
    plain_bytes[i] = i != 0 && i != LITERAL_DOLLAR && !shell_ends_word((char)i) &&
                     strchr("'\"$`\\=~", i) == NULL;
  }
}

static inline bool plain_byte(char c) {
  return plain_bytes[(unsigned char)c];
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/* Up to `max` digits of base 8 or 16 from *pp; how many were read. */
static int read_number(const char **pp, int base, int max, unsigned long *ret) {
  int i = 0;
  *ret = 0;
  for (; i < max; i++) {
    int d = hex_value((*pp)[i]);
    if (d < 0 || d >= base) {
      break;
    }
    *ret = *ret * (unsigned long)base + (unsigned long)d;
  }
  *pp += i;
  return i;
}

/* Never longer than the escape it comes from (\uHHHH, \UHHHHHHHH). */
static void put_utf8(char *buf, size_t *n, unsigned long cp) {
  if (cp < 0x80) {
    buf[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    buf[(*n)++] = (char)(0xc0 | (cp >> 6));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    buf[(*n)++] = (char)(0xe0 | (cp >> 12));
    buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else if (cp <= 0x10ffff) {
    buf[(*n)++] = (char)(0xf0 | (cp >> 18));
    buf[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
    buf[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    buf[(*n)++] = (char)(0x80 | (cp & 0x3f));
  }
}

/* One escape of $'…', `p` at its backslash: its bytes into `out` (at most
 * 4, never more than the escape's own length), or *nul when it is \0,
 * which ends the string as in bash; returns what follows it. */
static const char *ansi_c_escape(const char *p, char *out, size_t *len, bool *nul) {
  const char *e = p + 2;
  unsigned long v = 0;
  switch (p[1]) {
  case 'a': v = '\a'; break;
  case 'b': v = '\b'; break;
  case 'e':
  case 'E': v = 0x1b; break;
  case 'f': v = '\f'; break;
  case 'n': v = '\n'; break;
  case 'r': v = '\r'; break;
  case 't': v = '\t'; break;
  case 'v': v = '\v'; break;
  case '\\':
  case '\'':
  case '"':
  case '?': v = (unsigned char)p[1]; break;
  case 'c':
    if (p[2] == '\0') {
      goto literal;
    }
    v = (unsigned char)p[2] & 0x1f;
    e = p + 3;
    break;
  case 'x':
    if (read_number(&e, 16, 2, &v) == 0) {
      goto literal;
    }
    break;
  case 'u':
  case 'U':
    if (read_number(&e, 16, p[1] == 'u' ? 4 : 8, &v) == 0) {
      goto literal;
    }
    *nul = *nul || v == 0;
    put_utf8(out, len, v);
    return e;
  default:
    if (p[1] < '0' || p[1] > '7') {
      goto literal;
    }
    e = p + 1;
    read_number(&e, 8, 3, &v);
    v &= 0xff;
    break;
  }
  *nul = *nul || v == 0;
  out[(*len)++] = (char)v;
  return e;
literal:
  out[(*len)++] = '\\'; /* the rest is read as it is */
  return p + 1;
}

/* The body of $'…' from `p` (after the quote), its C escapes decoded into
 * buf; returns what follows the closing quote. The result is never longer
 * than the text read. */
static const char *ansi_c_quote(const char *p, char *buf, size_t *n) {
  bool nul = false;
  while (*p != '\0' && *p != '\'') {
    char bytes[4];
    size_t len = 0;
    if (*p == '\\' && p[1] != '\0') {
      p = ansi_c_escape(p, bytes, &len, &nul);
    } else {
      bytes[len++] = *p++;
    }
    if (!nul) {
      memcpy(buf + *n, bytes, len);
      *n += len;
    }
  }
  return *p == '\'' ? p + 1 : p;
}

/* Reads one word starting at *p; returns false at an operator or end.
 * Quotes are removed, `…` and $(…) inside double quotes are parsed as
 * commands, and a leading `~` (or one after NAME=) is $HOME. */
bool shell_read_word(ShellLexer *lx, const char **pp, Words *out) {
  const char *p = *pp;
  const char *h = lx->home;
  /* At most one `~` is expanded per word: at its start, or after NAME=;
   * otherwise a word is never longer than its text (lx->scratch), but for
   * ~- which is 5 bytes longer as $OLDPWD. */
  char *buf = lx->scratch;
  size_t n = 0;
  bool any = false, quoted = false;
  while (!shell_ends_word(*p)) {
    char c = *p;
    any = true;
    if (plain_byte(c) && n > 0) {
      /* The common case, a run of bytes that mean nothing to the shell
       * (not at the start, where a `~` may be). */
      do {
        buf[n++] = c;
        c = *++p;
      } while (plain_byte(c));
      continue;
    }
    bool tilde_prefix = n == 0 || (buf[n - 1] == '=' && shell_is_name(buf, n - 1));
    if (c == '~' && h != NULL && !quoted && tilde_prefix && (p[1] == '/' || shell_ends_word(p[1]))) {
      put_literal(buf, &n, h, strlen(h));
      p++;
    } else if (c == '~' && !quoted && tilde_prefix && (p[1] == '+' || p[1] == '-') &&
               (p[2] == '/' || shell_ends_word(p[2]))) {
      /* ~+ and ~- are $PWD and $OLDPWD, which the reader follows (or
       * knows it cannot) where a word is a name. */
      const char *var = p[1] == '+' ? "$PWD" : "$OLDPWD";
      memcpy(buf + n, var, strlen(var));
      n += strlen(var);
      p += 2;
    } else if (c == '\'') {
      const char *e = strchr(p + 1, '\'');
      size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);
      put_literal(buf, &n, p + 1, len);
      p = e ? e + 1 : p + 1 + len;
      quoted = true;
    } else if (c == '$' && p[1] == '\'') {
      /* $'…': C escapes, decoded in place; then taken as they are. */
      size_t start = n;
      p = ansi_c_quote(p + 2, buf, &n);
      for (size_t i = start; i < n; i++) {
        buf[i] = word_byte(buf[i], true);
      }
      quoted = true;
    } else if (c == '$' && p[1] == '"') {
      p++; /* $"…": a translated string, double-quoted */
    } else if (c == '$' && p[1] == '(' && p[2] == '(' && shell_arith_end(p + 1) != NULL) {
      const char *e = shell_arith_end(p + 1); /* $((…)): its << is a shift */
      memcpy(buf + n, p, (size_t)(e - p));
      n += (size_t)(e - p);
      p = e;
    } else if (c == '`' || (c == '$' && p[1] == '(')) {
      /* The command runs; the word keeps its text, as a name it is unknown. */
      const char *e = lx->substitution(lx->ctx, p);
      memcpy(buf + n, p, (size_t)(e - p));
      n += (size_t)(e - p);
      p = e;
    } else if (c == '"') {
      quoted = true;
      p++;
      while (*p != '\0' && *p != '"') {
        if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`\n", p[1]) != NULL) {
          put_literal(buf, &n, p + 1, 1);
          p += 2;
          continue;
        }
        if (*p == '`' || (*p == '$' && p[1] == '(' &&
                                 (p[2] != '(' || shell_arith_end(p + 1) == NULL))) {
          /* "`…`", "$(…)": the command runs, quoted or not. */
          const char *e = lx->substitution(lx->ctx, p);
          memcpy(buf + n, p, (size_t)(e - p));
          n += (size_t)(e - p);
          p = e;
          continue;
        }
        if (*p == '$' && !shell_starts_expansion(p + 1)) {
          buf[n++] = LITERAL_DOLLAR; /* "$", "a$b": a `$` as it is */
          p++;
          continue;
        }
        if (*p == '$' && strchr(SPECIAL_PARAMETERS, p[1]) != NULL && p[1] != '\0') {
          buf[n++] = *p++; /* "$$": one expansion */
          buf[n++] = *p++;
          continue;
        }
        buf[n++] = word_byte(*p++, false);
      }
      if (*p == '"') {
        p++;
      }
    } else if (c == '\\' && p[1] != '\0') {
      if (p[1] != '\n') {
        put_literal(buf, &n, p + 1, 1);
      }
      p += 2;
      quoted = true;
    } else if (c == '$' && !shell_starts_expansion(p + 1)) {
      buf[n++] = LITERAL_DOLLAR; /* $\HOME, a `$` ending a word: as it is */
      p++;
    } else if (c == '$' && p[1] != '\0' && strchr(SPECIAL_PARAMETERS, p[1]) != NULL) {
      buf[n++] = '$'; /* $$, $?: one expansion, both bytes */
      buf[n++] = p[1];
      p += 2;
    } else {
      buf[n++] = word_byte(c, false);
      p++;
    }
  }
  if (any) {
    shell_words_add(out, buf, n);
  }
  lx->charge(lx->ctx, (size_t)(p - *pp) + 1);
  *pp = p;
  return any;
}
