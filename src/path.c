/* SPDX-License-Identifier: Apache-2.0 */
#include "path.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

char *path_join(const char *a, const char *b) {
  if (b[0] == '/' || a[0] == '\0') {
    return xstrdup(b);
  }
  /* Without printf: it runs for every protected path, several times. */
  size_t la = strlen(a), lb = strlen(b);
  bool slash = a[la - 1] == '/';
  char *p = xmalloc(la + !slash + lb + 1);
  memcpy(p, a, la);
  if (!slash) {
    p[la] = '/';
  }
  memcpy(p + la + !slash, b, lb + 1);
  return p;
}

char *path_normalize(const char *p) {
  bool absolute = p[0] == '/';
  size_t len = strlen(p);
  char *out = xmalloc(len + 2);
  size_t o = 0;
  /* Number of components in `out` that a later ".." may remove. */
  size_t removable = 0;

  if (absolute) {
    out[o++] = '/';
  }
  const char *s = p;
  while (*s != '\0') {
    while (*s == '/') {
      s++;
    }
    if (*s == '\0') {
      break;
    }
    const char *e = strchrnul(s, '/');
    size_t n = (size_t)(e - s);
    if (n == 1 && s[0] == '.') {
      /* nothing */
    } else if (n == 2 && s[0] == '.' && s[1] == '.') {
      if (removable > 0) {
        /* Drop the last component and the separator before it. */
        while (o > 0 && out[o - 1] != '/') {
          o--;
        }
        if (o > (absolute ? 1u : 0u)) {
          o--;
        }
        removable--;
      } else if (!absolute) {
        if (o > 0) {
          out[o++] = '/';
        }
        memcpy(out + o, "..", 2);
        o += 2;
      }
    } else {
      if (o > 0 && out[o - 1] != '/') {
        out[o++] = '/';
      }
      memcpy(out + o, s, n);
      o += n;
      removable++;
    }
    s = e;
  }
  if (o == 0) {
    out[o++] = '.';
  }
  out[o] = '\0';
  return out;
}

char *path_absolute(const char *base, const char *p) {
  _cleanup_free_ char *cwd = NULL;
  if (p[0] != '/' && base == NULL) {
    cwd = getcwd(NULL, 0);
    if (cwd == NULL) {
      return NULL;
    }
    base = cwd;
  }
  _cleanup_free_ char *joined = p[0] == '/' ? xstrdup(p) : path_join(base, p);
  if (joined[0] != '/') {
    /* A relative base: make that absolute first. */
    char *abs = path_absolute(NULL, joined);
    return abs;
  }
  return path_normalize(joined);
}

const char *path_relative(const char *root, const char *path) {
  if (streq(root, "/")) {
    return path[0] == '/' ? path + 1 : NULL;
  }
  size_t n = strlen(root);
  if (strncmp(root, path, n) != 0) {
    return NULL;
  }
  if (path[n] == '\0') {
    return path + n;
  }
  if (path[n] == '/') {
    return path + n + 1;
  }
  return NULL;
}

const char *path_basename(const char *p) {
  const char *slash = strrchr(p, '/');
  if (slash == NULL) {
    return p;
  }
  return slash[1] == '\0' && slash == p ? p : slash + 1;
}

char *path_dirname(const char *p) {
  const char *slash = strrchr(p, '/');
  if (slash == NULL) {
    return xstrdup(".");
  }
  if (slash == p) {
    return xstrdup("/");
  }
  return xstrndup(p, (size_t)(slash - p));
}

__attribute__((noinline)) char *path_read_link(const char *p) {
  char target[PATH_MAX];
  ssize_t n = readlink(p, target, sizeof(target) - 1);
  return n < 0 ? NULL : xstrndup(target, (size_t)n);
}

/* realpath(3) that keeps going where components are missing; `links`
 * counts the symbolic links followed by hand, as the kernel's limit does. */
static char *resolve(const char *p, unsigned *links) {
  char *r = realpath(p, NULL);
  if (r != NULL) {
    return r;
  }
  /* ENOTDIR: a component is a file, so nothing below it exists either. */
  if (errno != ENOENT && errno != ENOTDIR) {
    return NULL;
  }
  size_t len = strlen(p);
  while (len > 1 && p[len - 1] == '/') {
    len--;
  }
  _cleanup_free_ char *trimmed = xstrndup(p, len);
  const char *slash = strrchr(trimmed, '/');
  _cleanup_free_ char *parent = NULL;
  const char *last;
  if (slash == NULL) {
    parent = xstrdup(".");
    last = trimmed;
  } else {
    parent = slash == trimmed ? xstrdup("/") : xstrndup(trimmed, (size_t)(slash - trimmed));
    last = slash + 1;
  }
  if (streq(trimmed, "/") || last[0] == '\0') {
    return NULL;
  }
  _cleanup_free_ char *rparent = resolve(parent, links);
  if (rparent == NULL) {
    return NULL;
  }
  _cleanup_free_ char *joined = path_join(rparent, last);
  /* A dangling symbolic link is where a write through it would land:
   * follow it by hand. */
  _cleanup_free_ char *target = streq(last, ".") || streq(last, "..") ? NULL : path_read_link(joined);
  if (target != NULL) {
    if (++*links > 40) {
      errno = ELOOP;
      return NULL;
    }
    _cleanup_free_ char *next = target[0] == '/' ? xstrdup(target) : path_join(rparent, target);
    return resolve(next, links);
  }
  return path_normalize(joined);
}

char *path_resolve(const char *p) {
  unsigned links = 0;
  return resolve(p, &links);
}

char *path_unescape_mountinfo_in_place(char *s) {
  char *o = s;
  for (const char *p = s; *p != '\0'; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
        p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  return s;
}

char *path_unescape_mountinfo(const char *s) {
  return path_unescape_mountinfo_in_place(xstrdup(s));
}

/* How the bytes of a text are to be read when it is shown. */
typedef enum {
  SHOW_NAME,     /* a name: quoted when anything in it is escaped */
  SHOW_TEXT,     /* a message on one line, in UTF-8 */
  SHOW_TERMINAL, /* a message in the locale's character set: lines kept */
} ShowMode;

/* How many bytes of `s` (which has `len`) make up the next character, and
 * whether it must be escaped: a control character (C0, DEL, or C1, which
 * terminals read as escape sequences too), a byte that is not UTF-8, and,
 * for a name, the quote and the backslash. A message for the terminal
 * keeps its newlines and tabs; in a character set other than UTF-8 its
 * bytes above 0x7F are that set's characters, and only where each byte is
 * a character of its own (ISO 8859) are 0x80-0x9F the C1 controls. */
static size_t next_char(const unsigned char *s, size_t len, ShowMode mode, bool utf8,
                        bool *ret_escape) {
  if (s[0] < 0x80) {
    *ret_escape = (s[0] < 0x20 && !(mode == SHOW_TERMINAL && (s[0] == '\n' || s[0] == '\t'))) ||
                  s[0] == 0x7F || (mode == SHOW_NAME && (s[0] == '"' || s[0] == '\\'));
    return 1;
  }
  if (!utf8) {
    *ret_escape = MB_CUR_MAX == 1 && s[0] < 0xA0;
    return 1;
  }
  size_t n = utf8_char_length(s, len);
  if (n == 0) {
    *ret_escape = true;
    return 1;
  }
  *ret_escape = n == 2 && s[0] == 0xC2 && s[1] < 0xA0;
  return n;
}

static const char *escape_letter(unsigned char c) {
  switch (c) {
  case '\a':
    return "\\a";
  case '\b':
    return "\\b";
  case '\t':
    return "\\t";
  case '\n':
    return "\\n";
  case '\v':
    return "\\v";
  case '\f':
    return "\\f";
  case '\r':
    return "\\r";
  case '"':
    return "\\\"";
  case '\\':
    return "\\\\";
  default:
    return NULL;
  }
}

static void put_escaped(FILE *f, const unsigned char *s, size_t len, ShowMode mode, bool utf8) {
  size_t i = 0;
  while (i < len) {
    bool escape;
    size_t n = next_char(s + i, len - i, mode, utf8, &escape);
    if (!escape) {
      fwrite(s + i, 1, n, f);
    } else if (n == 1 && escape_letter(s[i]) != NULL) {
      fputs(escape_letter(s[i]), f);
    } else {
      for (size_t k = 0; k < n; k++) {
        fprintf(f, "\\%03o", s[i + k]);
      }
    }
    i += n;
  }
}

static char *display(const char *s, ShowMode mode, bool utf8) {
  const unsigned char *u = (const unsigned char *)s;
  size_t len = strlen(s);
  bool any = false;
  for (size_t i = 0; i < len && !any;) {
    i += next_char(u + i, len - i, mode, utf8, &any);
  }
  if (!any) {
    return xstrdup(s);
  }
  char *out = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&out, &size);
  if (f == NULL) {
    oom();
  }
  if (mode == SHOW_NAME) {
    fputc('"', f);
  }
  put_escaped(f, u, len, mode, utf8);
  if (mode == SHOW_NAME) {
    fputc('"', f);
  }
  if (fclose(f) != 0) {
    oom();
  }
  return out;
}

char *path_display(const char *name) {
  return display(name, SHOW_NAME, true);
}

size_t text_columns(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t len = strlen(s), cols = 0;
  /* Widths as C.UTF-8 has them: in a C locale (which ralon keeps where
   * LANG is C.UTF-8, loading none) wcwidth knows no character beyond
   * ASCII. Switched to at the first such character. */
  locale_t old = (locale_t)0;
  bool switched = false;
  for (size_t i = 0; i < len;) {
    size_t n = utf8_char_length(p + i, len - i);
    if (n <= 1) {
      cols++;
      i++;
      continue;
    }
    /* Well-formed: the lead byte's bits, then six from each of the rest. */
    uint32_t cp = p[i] & (0x7Fu >> n);
    for (size_t k = 1; k < n; k++) {
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    if (!switched) {
      switched = true;
      old = utf8_locale() != (locale_t)0 ? uselocale(utf8_locale()) : (locale_t)0;
    }
    int w = wcwidth((wchar_t)cp);
    cols += w >= 0 ? (size_t)w : 1;
    i += n;
  }
  if (old != (locale_t)0) {
    uselocale(old);
  }
  return cols;
}

char *text_display(const char *s) {
  return display(s, SHOW_TEXT, true);
}

char *text_display_terminal(const char *s, bool utf8, bool lines) {
  return display(s, lines ? SHOW_TERMINAL : SHOW_TEXT, utf8);
}

/* 0 when execve(2) of `candidate` could start it: a regular file this
 * user may execute (root: one with an execute bit). Otherwise why not, as
 * execve(2) would say: stat(2)'s error, or EACCES for a file that is
 * there but is not a regular file or lacks the permission. */
static int program_at(const char *candidate) {
  struct stat st;
  if (stat(candidate, &st) < 0) {
    return errno;
  }
  return S_ISREG(st.st_mode) && access(candidate, X_OK) == 0 ? 0 : EACCES;
}

char *path_search_program(const char *path_env, const char *name, int *ret_errnum) {
  int e = ENOENT;
  char *found = NULL;
  if (strchr(name, '/') != NULL) {
    /* Named with a directory: no search, as for execvp(3). */
    e = program_at(name);
    if (ret_errnum != NULL) {
      *ret_errnum = e;
    }
    return e == 0 ? xstrdup(name) : NULL;
  }
  _cleanup_free_ char *fallback = NULL;
  if (path_env == NULL) {
    size_t n = confstr(_CS_PATH, NULL, 0);
    if (n > 0) {
      fallback = xmalloc(n);
      (void)confstr(_CS_PATH, fallback, n);
    } else {
      fallback = xstrdup("/bin:/usr/bin");
    }
    path_env = fallback;
  }
  for (const char *s = path_env;;) {
    const char *end = strchrnul(s, ':');
    /* An empty entry is the working directory, as for execvp(3). */
    _cleanup_free_ char *dir = end == s ? xstrdup(".") : xstrndup(s, (size_t)(end - s));
    char *candidate = path_join(dir, name);
    int r = program_at(candidate);
    if (r == 0) {
      found = candidate;
      e = 0;
      break;
    }
    free(candidate);
    /* execvp(3) goes on past every entry that fails, and fails with
     * EACCES when one did so (a file it may not execute, a directory it
     * may not search), else with ENOENT. */
    if (r == EACCES) {
      e = EACCES;
    }
    if (*end == '\0') {
      break;
    }
    s = end + 1;
  }
  if (ret_errnum != NULL) {
    *ret_errnum = e;
  }
  return found;
}

char *path_find_program(const char *path_env, const char *name) {
  return path_search_program(path_env, name, NULL);
}
