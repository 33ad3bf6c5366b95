/* SPDX-License-Identifier: Apache-2.0 */
/* Dispatch and exit codes: the only place that decides how ralon exits. */
#include "config.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#if defined(__linux__)
#include "enforce/linux/guard.h"
#endif
#include "output.h"
#include "util.h"

/* The first of these variables that is set and not empty, as setlocale(3)
 * picks them for LC_MESSAGES. */
static const char *getenv_first(const char *a, const char *b, const char *c) {
  const char *names[] = {a, b, c};
  for (size_t i = 0; i < ELEMENTSOF(names); i++) {
    const char *v = getenv(names[i]);
    if (v != NULL && v[0] != '\0') {
      return v;
    }
  }
  return NULL;
}

static bool locale_is_c(const char *name) {
  return name == NULL || streq(name, "C") || streq(name, "POSIX") || startswith(name, "C.");
}

static int dispatch(const Options *o, Error *err) {
  switch (o->command) {
  case CMD_VERSION:
    printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
    return EXIT_OK;
  case CMD_HELP:
    cli_print_help(stdout, o->help_for);
    return EXIT_OK;
  case CMD_INIT:
    return command_init(o, err);
  case CMD_CHECK:
    return command_check(o, err);
  case CMD_STATUS:
    return command_status(o, err);
  case CMD_RUN:
    return command_run(o, err);
  case CMD_GUARD:
    return command_guard(o, err);
  case CMD_HOOK:
    return command_hook(o, err);
  case CMD_PAUSE:
    return command_pause(o, err);
  case CMD_RESUME:
    return command_resume(o, err);
  case CMD_NONE:
  case _CMD_MAX:
  case _CMD_INVALID:
    break;
  }
  return error_set(err, EINVAL, _("no command given; see `ralon --help`"));
}

int main(int argc, char **argv) {
  _cleanup_error_ Error err = {0};
  Options o;

  /* Only what messages need: the character set and the language. Loading
   * every category costs more than the rest of `ralon check` (callgrind:
   * setlocale(LC_ALL) was 40% of a `--version`), and hooks run on every
   * agent edit. */
#if ENABLE_NLS
  /* In a C locale nothing is translated and ralon needs nothing else of
   * the locale (the matcher pins its own): skip loading it at all, which
   * even for C.UTF-8 means reading locale.alias. */
  if (!locale_is_c(getenv_first("LC_ALL", "LC_MESSAGES", "LANG"))) {
    setlocale(LC_CTYPE, "");
    const char *messages = setlocale(LC_MESSAGES, "");
    i18n_enabled = messages != NULL && !locale_is_c(messages);
    if (i18n_enabled) {
      bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
      textdomain(GETTEXT_PACKAGE);
    }
  }
#endif

  int r = cli_parse(argc, argv, &o, &err);
  /* `ralon check | head` should end quietly, whatever the parent ignored;
   * the command `run` starts gets the disposition ralon was given, as it
   * would have started directly. */
  if (r == 0 && ((o.command != CMD_RUN && o.command != CMD_PAUSE) || o.dry_run)) {
    signal(SIGPIPE, SIG_DFL);
  }
  if (r == 0) {
    r = dispatch(&o, &err);
  }
  options_clear(&o);
  if (r < 0) {
    print_error("%s", err.message ? err.message : _("unknown error"));
    r = err.exit_status != 0 ? err.exit_status : EXIT_ERROR;
  } else {
    int w = output_flush_stdout();
    if (w < 0) {
      print_error(_("cannot write the output: %s"), strerror(-w));
      r = EXIT_ERROR;
    }
  }
  error_clear(&err);
#if defined(__linux__) && defined(__SANITIZE_ADDRESS__)
  /* LeakSanitizer checks at exit from a process it forks, and after the
   * mount backend's guard made its PID namespace every fork is born
   * there, gone by now: the check would fail whatever it found. The guard
   * frees what it made; the unit tests check its parts. */
  if (guard_forks_into_sandbox()) {
    fflush(stdout);
    fflush(stderr);
    _exit(r);
  }
#endif
  return r;
}
