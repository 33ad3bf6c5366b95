/* SPDX-License-Identifier: Apache-2.0 */
/* Decisions in the systemd journal (ARCHITECTURE.md §6). Each kind of record has
 * a fixed MESSAGE_ID, explained in data/catalog/ralon.catalog, and custom
 * fields named RALON_*. libsystemd is loaded with dlopen(3) only when a
 * record is about to be written and a journal socket exists; without one
 * (containers, CI) nothing is loaded and nothing is said. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

typedef enum {
  LOG_RUN,          /* `run` restricted itself and is starting the command */
  LOG_PASS_THROUGH, /* `run --if-policy` started the command unchanged */
  LOG_HOOK_REFUSAL, /* `hook check` refused a path (one record each) */
  LOG_FAILURE,      /* `run` could not enforce, or refused to start */
  LOG_FINDING,      /* an audit finding, as it was printed */
  LOG_GUARD_STOP,   /* the guard stopped a sandbox: a protected path changed */
  LOG_PAUSE,        /* `ralon pause` froze a sandbox, or `ralon resume` thawed it */
  _LOG_KIND_MAX,
} LogKind;

/* "KEY=value" strings, gathered before one record is sent. */
typedef struct {
  char **v;
  size_t n;
  size_t cap;
} LogFields;

/* Whether records can be written at all: built with the journal and a
 * journal socket present. Callers skip gathering fields when not. */
bool log_enabled(void);

/* Adds KEY=value (printf-style value). */
void log_field(LogFields *f, const char *key, const char *fmt, ...) ATTR_PRINTF(3, 4);

/* Sends the record: MESSAGE (printf-style), the kind's MESSAGE_ID and
 * PRIORITY, SYSLOG_IDENTIFIER=ralon, then the fields, and empties `f`.
 * Never fails visibly: a journal that cannot be reached loses the record,
 * never the command. */
void log_send(LogKind kind, LogFields *f, const char *fmt, ...) ATTR_PRINTF(3, 4);

void log_fields_clear(LogFields *f);

/* The MESSAGE_ID of a kind, 32 hex digits (tests and the catalog). */
const char *log_message_id(LogKind kind);
