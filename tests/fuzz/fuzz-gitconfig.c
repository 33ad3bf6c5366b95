/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the git configuration reader (gitscan.h,
 * gitscan_config_parse): `ralon status` and `run` read every nested
 * repository's configuration with it, a file an agent can write.
 *
 * Whatever the bytes (not NUL-terminated: an exact-size copy, so that ASan
 * catches a read past the end), the parser must return without crashing,
 * leaking or reading out of bounds, and every key it hands over must be
 * what `git config --list` could print: a variable (after a section,
 * unless it comes before any header) starting with a letter and made of
 * lower-case letters, digits and `-`. Parsing twice gives the same settings, and asking
 * gitscan_key_runs() about each does not crash. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz-gitconfig: invariant violated: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

static void check_key(const char *key) {
  /* A variable before any section header is one without a section, as
   * git lists it too. */
  const char *dot = strrchr(key, '.');
  if (dot == key) {
    fail("key `%s` has an empty section", key);
  }
  const char *var = dot != NULL ? dot + 1 : key;
  if (!(*var >= 'a' && *var <= 'z')) {
    fail("key `%s`: the variable does not start with a lower-case letter", key);
  }
  for (const char *c = var; *c != '\0'; c++) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-')) {
      fail("key `%s`: `%c` in the variable", key, *c);
    }
  }
}

static void collect(void *userdata, const char *key, const char *value) {
  FILE *f = userdata;
  check_key(key);
  (void)gitscan_key_runs(key, value);
  fprintf(f, "%s", key);
  if (value != NULL) {
    fputc('\n', f);
    fwrite(value, 1, strlen(value), f);
  }
  fputc('\0', f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size ? size : 1);
  if (text == NULL) {
    return 0;
  }
  memcpy(text, data, size);
  char *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  FILE *fa = open_memstream(&a, &la);
  FILE *fb = open_memstream(&b, &lb);
  if (fa == NULL || fb == NULL) {
    abort();
  }
  bool ra = gitscan_config_parse(text, size, collect, fa);
  bool rb = gitscan_config_parse(text, size, collect, fb);
  fclose(fa);
  fclose(fb);
  if (ra != rb || la != lb || memcmp(a, b, la) != 0) {
    fail("two parses of the same text differ");
  }
  free(a);
  free(b);
  free(text);
  return 0;
}
