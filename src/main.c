/* SPDX-License-Identifier: Apache-2.0 */
/* Dispatch and exit codes: the only place that decides how ralon exits. */
#include "config.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "util.h"

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

  /* `ralon check | head` should end quietly, whatever the parent ignored. */
  signal(SIGPIPE, SIG_DFL);
  setlocale(LC_ALL, "");
#if ENABLE_NLS
  bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
  textdomain(GETTEXT_PACKAGE);
#endif

  int r = cli_parse(argc, argv, &o, &err);
  if (r == 0) {
    r = dispatch(&o, &err);
  }
  options_clear(&o);
  if (r < 0) {
    print_error("%s", err.message ? err.message : _("unknown error"));
    return EXIT_ERROR;
  }
  int w = output_flush_stdout();
  if (w < 0) {
    print_error(_("cannot write the output: %s"), strerror(-w));
    return EXIT_ERROR;
  }
  return r;
}
