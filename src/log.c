/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>

#include "config.h"
#include "path.h"

#if HAVE_JOURNAL
#include <dlfcn.h>
#include <systemd/sd-journal.h>
#endif

/* Where sd_journal_sendv(3) writes; when it is not there, neither is a
 * journal to read the records back. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static const struct {
  const char *id;
  int priority;
} kinds[_LOG_KIND_MAX] = {
    [LOG_RUN] = {"5f8fa535faf947df8e4d9779d80cba7e", LOG_NOTICE},
    [LOG_PASS_THROUGH] = {"1f2bae7ceb8b42fca8e2d559eccdf4bf", LOG_INFO},
    [LOG_HOOK_REFUSAL] = {"811933fd90844332a969e540053f478a", LOG_NOTICE},
    [LOG_FAILURE] = {"619cc12248c74036a8afef4c9b727030", LOG_ERR},
    [LOG_FINDING] = {"1301f0c7ac424508899dafcfcc1dd1fb", LOG_WARNING},
    [LOG_GUARD_STOP] = {"b2669b203ae24889b60ef3b335e8cd54", LOG_CRIT},
    [LOG_PAUSE] = {"616d2462b7df4c49af17fd690cdcc750", LOG_NOTICE},
};

const char *log_message_id(LogKind kind) {
  return kind >= 0 && kind < _LOG_KIND_MAX ? kinds[kind].id : NULL;
}

#if HAVE_JOURNAL
static __typeof__(&sd_journal_sendv) sym_sd_journal_sendv;

/* Loaded once, on the first record: linking libsystemd would make every
 * start pay for it (about 1.6 ms here), and most starts write nothing. */
static bool load_journal(void) {
  static int state; /* 0 not tried, 1 loaded, -1 failed */
  if (state == 0) {
    void *h = dlopen(LIBSYSTEMD_SONAME, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
    if (h != NULL) {
      *(void **)&sym_sd_journal_sendv = dlsym(h, "sd_journal_sendv");
    }
    state = sym_sd_journal_sendv != NULL ? 1 : -1;
  }
  return state > 0;
}
#endif

bool log_enabled(void) {
#if HAVE_JOURNAL
  static int state; /* 0 not checked, 1 yes, -1 no */
  if (state == 0) {
    struct stat st;
    state = stat(JOURNAL_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode) ? 1 : -1;
  }
  return state > 0;
#else
  return false;
#endif
}

void log_field(LogFields *f, const char *key, const char *fmt, ...) {
  if (!log_enabled()) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  _cleanup_free_ char *value = NULL;
  if (vasprintf(&value, fmt, ap) < 0) {
    oom();
  }
  va_end(ap);
  char **slot = grow_array(&f->v, &f->n, &f->cap, sizeof(char *));
  *slot = xasprintf("%s=%s", key, value);
}

void log_fields_clear(LogFields *f) {
  for (size_t i = 0; i < f->n; i++) {
    free(f->v[i]);
  }
  free(f->v);
  memset(f, 0, sizeof(*f));
}

void log_send(LogKind kind, LogFields *f, const char *fmt, ...) {
#if HAVE_JOURNAL
  if (log_enabled() && kind >= 0 && kind < _LOG_KIND_MAX && load_journal()) {
    va_list ap;
    va_start(ap, fmt);
    _cleanup_free_ char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) {
      oom();
    }
    va_end(ap);
    /* The message stays English, as systemd's own do: it is searched for
     * and quoted in reports; the catalog entry explains it. Names in it
     * are escaped (journalctl shows a message with a control character as
     * a blob); the RALON_* fields keep them as they are. */
    _cleanup_free_ char *shown = text_display(text);
    _cleanup_free_ char *message = xasprintf("MESSAGE=%s", shown);
    _cleanup_free_ char *id = xasprintf("MESSAGE_ID=%s", kinds[kind].id);
    _cleanup_free_ char *priority = xasprintf("PRIORITY=%d", kinds[kind].priority);
    _cleanup_free_ struct iovec *iov = xcalloc(f->n + 5, sizeof(struct iovec));
    size_t n = 0;
    const char *fixed[] = {message, id, priority, "SYSLOG_IDENTIFIER=ralon",
                           "RALON_VERSION=" PACKAGE_VERSION};
    for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
      iov[n++] = (struct iovec){.iov_base = (void *)fixed[i], .iov_len = strlen(fixed[i])};
    }
    for (size_t i = 0; i < f->n; i++) {
      iov[n++] = (struct iovec){.iov_base = f->v[i], .iov_len = strlen(f->v[i])};
    }
    int saved = errno;
    (void)sym_sd_journal_sendv(iov, (int)n);
    errno = saved;
  }
#else
  (void)kind;
  (void)fmt;
#endif
  log_fields_clear(f);
}
