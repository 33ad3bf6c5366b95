/* SPDX-License-Identifier: Apache-2.0 */
/* The one place that writes diagnostics: "ralon: " on stderr, colour only
 * on a terminal and never with NO_COLOR. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

typedef enum {
  COLOR_NONE,
  COLOR_RED,
  COLOR_GREEN,
  COLOR_YELLOW,
  COLOR_BOLD,
  _COLOR_MAX,
} Color;

/* Decides once per stream whether colour is wanted: a terminal, TERM not
 * "dumb", and NO_COLOR unset or empty (https://no-color.org). */
bool output_color(FILE *f);

/* Escape sequences for `c` on `f`, or "" where colour is off. */
const char *color_on(FILE *f, Color c);
const char *color_off(FILE *f);

/* Whether text for the terminal is in UTF-8: the locale's character set,
 * or no locale loaded (nothing translated). */
bool output_utf8(void);

/* Flushes stdout; 0, or -errno of the first write error it ever had. */
/* Records why a write to stdout failed, when the caller saw it fail (a
 * later flush only learns that it did, and says EIO). */
void output_stdout_failed(int errnum);
int output_flush_stdout(void);

void print_error(const char *fmt, ...) ATTR_PRINTF(1, 2);
void print_warning(const char *fmt, ...) ATTR_PRINTF(1, 2);
void print_note(const char *fmt, ...) ATTR_PRINTF(1, 2);
