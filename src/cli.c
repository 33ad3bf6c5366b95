/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

enum {
  OPT_JSON = 0x100,
  OPT_FORCE,
  OPT_NO_HOOKS,
};

static const char *const command_names[_CMD_MAX] = {
    [CMD_NONE] = NULL,     [CMD_HELP] = "help",     [CMD_VERSION] = NULL,
    [CMD_INIT] = "init",   [CMD_CHECK] = "check",   [CMD_STATUS] = "status",
};

const char *cli_command_name(Command c) {
  if (c < 0 || c >= _CMD_MAX) {
    return NULL;
  }
  return command_names[c];
}

static Command command_from_name(const char *s) {
  for (int c = 0; c < _CMD_MAX; c++) {
    if (command_names[c] != NULL && streq(command_names[c], s)) {
      return (Command)c;
    }
  }
  return _CMD_INVALID;
}

void cli_print_help(FILE *f, Command c) {
  switch (c) {
  case CMD_INIT:
    fputs(_("Usage: ralon init [--force] [--no-hooks]\n"
            "\n"
            "Write a commented agent.lock in the current directory (or -C DIR).\n"
            "\n"
            "Options:\n"
            "      --force      replace an existing agent.lock\n"
            "      --no-hooks   do not install agent hooks\n"
            "  -C, --dir DIR    write it in DIR\n"
            "  -h, --help       show this help\n"),
          f);
    return;
  case CMD_CHECK:
    fputs(_("Usage: ralon check [--json] [PATH...]\n"
            "\n"
            "For each PATH, say whether agent.lock protects it:\n"
            "  locked    REL  (matches `PATTERN`)\n"
            "  writable  REL\n"
            "  outside   PATH\n"
            "Both the path as written (with .. resolved) and the path with symbolic\n"
            "links resolved count. Without PATH, list what the policy protects on\n"
            "disk, a protected directory once.\n"
            "\n"
            "Options:\n"
            "      --json       print a JSON document instead\n"
            "  -C, --dir DIR    look for agent.lock from DIR instead of here\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 nothing given is protected, 1 something is, 2 error.\n"),
          f);
    return;
  case CMD_STATUS:
    fputs(_("Usage: ralon status [--json]\n"
            "\n"
            "Show the policy file, the project root, the patterns, the protected\n"
            "paths found on disk, and every way the protection is weaker than the\n"
            "policy suggests.\n"
            "\n"
            "Options:\n"
            "      --json       print a JSON document instead\n"
            "  -C, --dir DIR    look for agent.lock from DIR instead of here\n"
            "  -h, --help       show this help\n"),
          f);
    return;
  case CMD_HELP:
  case CMD_NONE:
  case CMD_VERSION:
  case _CMD_MAX:
  case _CMD_INVALID:
    break;
  }
  fputs(_("Usage: ralon [-C DIR] [--json] COMMAND [ARGS...]\n"
          "\n"
          "Keep AI coding agents from modifying the files agent.lock lists.\n"
          "\n"
          "Commands:\n"
          "  init      write a commented agent.lock here\n"
          "  check     say whether paths are protected, or list what is\n"
          "  status    show the policy, what it protects, and its weak spots\n"
          "  help      show the help of a command\n"
          "\n"
          "Options:\n"
          "  -C, --dir DIR    look for agent.lock from DIR instead of here\n"
          "      --json       machine-readable output (check, status)\n"
          "  -h, --help       show this help\n"
          "  -V, --version    show the version\n"
          "\n"
          "Run `ralon COMMAND --help` for the options of a command.\n"),
        f);
}

#define COMMON_LONG_OPTIONS                               \
  {"dir", required_argument, NULL, 'C'},                  \
      {"json", no_argument, NULL, OPT_JSON},              \
      {"help", no_argument, NULL, 'h'}, {                 \
    "version", no_argument, NULL, 'V'                     \
  }

static int bad_option(const char *cmd, int argc, char **argv, int c, Error *err) {
  const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
  if (c == ':') {
    return error_set(err, EINVAL, _("option `%s` needs a value; see `ralon %s%s--help`"), arg,
                     cmd ? cmd : "", cmd ? " " : "");
  }
  if (optopt != 0 && !startswith(arg, "--")) {
    return error_set(err, EINVAL, _("unknown option `-%c`; see `ralon %s%s--help`"), optopt,
                     cmd ? cmd : "", cmd ? " " : "");
  }
  return error_set(err, EINVAL, _("unknown option `%s`; see `ralon %s%s--help`"), arg,
                   cmd ? cmd : "", cmd ? " " : "");
}

/* Options every command accepts, wherever they stand. */
static bool common_option(Options *o, int c) {
  switch (c) {
  case 'C':
    o->dir = optarg;
    return true;
  case OPT_JSON:
    o->json = true;
    return true;
  default:
    return false;
  }
}

static int parse_command(Options *o, int argc, char **argv, Error *err) {
  static const struct option init_opts[] = {
      COMMON_LONG_OPTIONS,
      {"force", no_argument, NULL, OPT_FORCE},
      {"no-hooks", no_argument, NULL, OPT_NO_HOOKS},
      {NULL, 0, NULL, 0},
  };
  static const struct option plain_opts[] = {
      COMMON_LONG_OPTIONS,
      {NULL, 0, NULL, 0},
  };
  const char *name = cli_command_name(o->command);
  const struct option *longopts = o->command == CMD_INIT ? init_opts : plain_opts;
  int c;

  optind = 0; /* full reinitialisation for the second getopt pass */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":C:hV", longopts, NULL)) != -1) {
    if (common_option(o, c)) {
      continue;
    }
    switch (c) {
    case 'h':
      o->help_for = o->command;
      o->command = CMD_HELP;
      return 0;
    case 'V':
      o->command = CMD_VERSION;
      return 0;
    case OPT_FORCE:
      o->force = true;
      break;
    case OPT_NO_HOOKS:
      o->no_hooks = true;
      break;
    default:
      return bad_option(name, argc, argv, c, err);
    }
  }
  char **rest = argv + optind;
  size_t n_rest = (size_t)(argc - optind);

  switch (o->command) {
  case CMD_CHECK:
    o->paths = rest;
    o->n_paths = n_rest;
    return 0;
  case CMD_HELP:
    if (n_rest > 1) {
      return error_set(err, EINVAL, _("`ralon help` takes at most one command"));
    }
    o->help_for = CMD_NONE;
    if (n_rest == 1) {
      Command h = command_from_name(rest[0]);
      if (h < 0) {
        return error_set(err, EINVAL, _("unknown command `%s`; see `ralon --help`"), rest[0]);
      }
      o->help_for = h;
    }
    return 0;
  case CMD_INIT:
  case CMD_STATUS:
  case CMD_NONE:
  case CMD_VERSION:
  case _CMD_MAX:
  case _CMD_INVALID:
    break;
  }
  if (n_rest > 0) {
    return error_set(err, EINVAL, _("`ralon %s` takes no arguments, but got `%s`"), name, rest[0]);
  }
  return 0;
}

int cli_parse(int argc, char **argv, Options *o, Error *err) {
  static const struct option global_opts[] = {
      COMMON_LONG_OPTIONS,
      {NULL, 0, NULL, 0},
  };
  int c;

  memset(o, 0, sizeof(*o));
  optind = 0;
  opterr = 0;
  /* "+": stop at the command name; what follows is the command's. */
  while ((c = getopt_long(argc, argv, "+:C:hV", global_opts, NULL)) != -1) {
    if (common_option(o, c)) {
      continue;
    }
    switch (c) {
    case 'h':
      o->command = CMD_HELP;
      o->help_for = CMD_NONE;
      return 0;
    case 'V':
      o->command = CMD_VERSION;
      return 0;
    default:
      return bad_option(NULL, argc, argv, c, err);
    }
  }
  if (optind >= argc) {
    return error_set(err, EINVAL, _("no command given; see `ralon --help`"));
  }
  o->command = command_from_name(argv[optind]);
  if (o->command < 0) {
    return error_set(err, EINVAL, _("unknown command `%s`; see `ralon --help`"), argv[optind]);
  }
  return parse_command(o, argc - optind, argv + optind, err);
}
