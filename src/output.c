/* SPDX-License-Identifier: Apache-2.0 */
#include "output.h"

#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "path.h"

bool output_color(FILE *f) {
  static int cached[3] = {-1, -1, -1};
  int idx = f == stdout ? 1 : f == stderr ? 2 : 0;
  if (idx != 0 && cached[idx] >= 0) {
    return cached[idx];
  }
  const char *no = getenv("NO_COLOR");
  const char *term = getenv("TERM");
  bool on = (no == NULL || no[0] == '\0') && term != NULL && !streq(term, "dumb") &&
            isatty(fileno(f));
  if (idx != 0) {
    cached[idx] = on;
  }
  return on;
}

const char *color_on(FILE *f, Color c) {
  static const char *const seq[_COLOR_MAX] = {
      [COLOR_NONE] = "",
      [COLOR_RED] = "\033[31m",
      [COLOR_GREEN] = "\033[32m",
      [COLOR_YELLOW] = "\033[33m",
      [COLOR_BOLD] = "\033[1m",
  };
  if (c < 0 || c >= _COLOR_MAX || !output_color(f)) {
    return "";
  }
  return seq[c];
}

const char *color_off(FILE *f) {
  return output_color(f) ? "\033[0m" : "";
}

/* The first error writing stdout, kept for main: a flush here (ordering
 * stdout before a diagnostic) may be where it happens. */
static int stdout_errno;

void output_stdout_failed(int errnum) {
  if (stdout_errno == 0) {
    stdout_errno = errnum != 0 ? errnum : EIO;
  }
}

int output_flush_stdout(void) {
  if (fflush(stdout) != 0 && stdout_errno == 0) {
    stdout_errno = errno ? errno : EIO;
  }
  if (ferror(stdout) && stdout_errno == 0) {
    stdout_errno = EIO;
  }
  return -stdout_errno;
}

bool output_utf8(void) {
  static int cached = -1;
  if (cached < 0) {
    /* Without a locale (ralon loads none for C) nothing is translated,
     * and names are read as UTF-8. */
    const char *ctype = setlocale(LC_CTYPE, NULL);
    cached = ctype == NULL || streq(ctype, "C") || streq(ctype, "POSIX") ||
             streq(nl_langinfo(CODESET), "UTF-8");
  }
  return cached;
}

__attribute__((format(printf, 3, 0))) static void emit(Color c, const char *label,
                                                       const char *fmt, va_list ap) {
  int saved = errno;
  (void)output_flush_stdout();
  fputs("ralon: ", stderr);
  if (label != NULL) {
    fprintf(stderr, "%s%s%s ", color_on(stderr, c), label, color_off(stderr));
  }
  errno = saved;
  /* Messages carry names from the project, which may hold any byte: none
   * may reach the terminal as a control character. (A message's own lines
   * stay; the names that could hold a newline are escaped where the
   * message is made.) */
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0) {
    oom();
  }
  _cleanup_free_ char *shown = text_display_terminal(msg, output_utf8(), true);
  free(msg);
  fputs(shown, stderr);
  fputc('\n', stderr);
  errno = saved;
}

void print_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(COLOR_RED, NULL, fmt, ap);
  va_end(ap);
}

void print_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  /* TRANSLATORS: the label in front of every warning, "ralon: warning: …" */
  emit(COLOR_YELLOW, _("warning:"), fmt, ap);
  va_end(ap);
}

void print_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(COLOR_NONE, NULL, fmt, ap);
  va_end(ap);
}
