/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "hook/agents.h"
#include "path.h"

enum {
  OPT_JSON = 0x100,
  OPT_FORCE,
  OPT_NO_HOOKS,
  OPT_BACKEND,
  OPT_DRY_RUN,
  OPT_IF_POLICY,
  OPT_STRICT,
  OPT_SEAL,
  OPT_DETACH,
  OPT_STOP,
  OPT_AGENT,
  OPT_USER,
  OPT_MINUTES,
  OPT_INDEFINITELY,
  OPT_RANGE,
  OPT_STAGED,
};

static const char *const command_names[_CMD_MAX] = {
    [CMD_NONE] = NULL,     [CMD_HELP] = "help",     [CMD_VERSION] = NULL,
    [CMD_INIT] = "init",   [CMD_CHECK] = "check",   [CMD_STATUS] = "status",
    [CMD_RUN] = "run",     [CMD_GUARD] = "guard",   [CMD_HOOK] = "hook",
    [CMD_PAUSE] = "pause", [CMD_RESUME] = "resume",
};

void options_clear(Options *o) {
  for (size_t i = 0; i < o->n_agents; i++) {
    free((char *)o->agents[i]);
  }
  free(o->agents);
  o->agents = NULL;
  o->n_agents = 0;
}

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

/* A paragraph, its words filled into lines of at most HELP_COLUMNS
 * columns, as the help texts are laid out. */
#define HELP_COLUMNS 76
static void put_wrapped(FILE *f, const char *text) {
  _cleanup_free_ char *copy = xstrdup(text);
  size_t used = 0;
  for (char *save = NULL, *w = strtok_r(copy, " ", &save); w != NULL;
       w = strtok_r(NULL, " ", &save)) {
    size_t cols = text_columns(w);
    if (used > 0 && used + 1 + cols > HELP_COLUMNS) {
      fputc('\n', f);
      used = 0;
    }
    if (used > 0) {
      fputc(' ', f);
      used++;
    }
    fputs(w, f);
    used += cols;
  }
  fputc('\n', f);
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
            "       ralon check [--json] --range A..B | --staged\n"
            "\n"
            "For each PATH, say whether agent.lock protects it:\n"
            "  locked    REL  (matches `PATTERN`)\n"
            "  writable  REL\n"
            "  outside   PATH\n"
            "Both the path as written (with .. resolved) and the path with symbolic\n"
            "links resolved count. Without PATH, list what the policy protects on\n"
            "disk, a protected directory once.\n"
            "\n"
            "With --range, list each path a commit in A..B changed (A alone: A..HEAD)\n"
            "that the agent.lock of commit A protects, with the commit; with --staged,\n"
            "each such path the index changes against HEAD.\n"
            "\n"
            "Options:\n"
            "      --range A..B the commits B has and A has not\n"
            "      --staged     the changes staged for the next commit\n"
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
  case CMD_RUN:
    fputs(_("Usage: ralon run [OPTIONS] -- COMMAND [ARGS...]\n"
            "\n"
            "Make what agent.lock protects unmodifiable for COMMAND and everything it\n"
            "starts, then start COMMAND: with the landlock backend in ralon's place,\n"
            "with the mount backend in a PID namespace of its own that ralon guards\n"
            "and that ends with COMMAND. Its exit status, signals and terminal are\n"
            "its own.\n"
            "\n"
            "Options:\n"
            "      --backend B  auto (default), mount or landlock\n"
            "      --dry-run    print the plan instead; exit 0 if the run would start\n"
            "                   COMMAND here, 1 if not\n"
            "      --json       with --dry-run: print the plan as JSON\n"
            "  -q, --quiet      no summary line and no warnings on stderr\n"
            "      --if-policy  without an agent.lock, run COMMAND unchanged\n"
            "      --strict     make every warning that weakens protection fatal\n"
            "      --seal       keep COMMAND from mounting anything over a protected\n"
            "                   path: no mounts, and with the mount backend no user\n"
            "                   namespaces (this stops an agent's own sandbox, such as\n"
            "                   bwrap); also scope signals and abstract sockets\n"
            "                   (Landlock ABI 6+)\n"
            "  -C, --dir DIR    start COMMAND in DIR, and look for agent.lock from there\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: COMMAND's own; 127 when COMMAND is not found, 126 when it\n"
            "cannot be executed; 2 when ralon cannot protect the paths; 125 when the\n"
            "guard stopped the sandbox (a protected path changed outside it without\n"
            "`ralon pause`, or it could not go on guarding).\n"),
          f);
    return;
  case CMD_HOOK:
    fputs(_("Usage: ralon hook check [--agent NAME]\n"
            "       ralon hook install [--agent auto|all|NAME...] [--user] [--dry-run]\n"
            "       ralon hook uninstall [--agent auto|all|NAME...] [--user] [--dry-run]\n"
            "       ralon hook list\n"
            "\n"
            "check reads a coding agent's pre-tool payload on stdin, recognises the\n"
            "agent from its shape, and refuses, in that agent's own terms, a call that\n"
            "would modify a path agent.lock protects. install writes the hook into each\n"
            "agent's project configuration (or the user's, with --user), keeping\n"
            "everything else in it; uninstall removes exactly that.\n"
            "\n"),
          f);
    {
      /* The agents as hook/agents.h lists them. */
      _cleanup_free_ char *names = agent_names(", ");
      /* TRANSLATORS: %s is the list of the agents' names ("claude, cursor,
       * …"), which stay as they are. The paragraph is wrapped where it is
       * printed. */
      _cleanup_free_ char *agents = xasprintf(_("Agents: %s. auto: those whose configuration "
                                                "directory exists in the project or the home "
                                                "directory; all: every one."),
                                              names);
      put_wrapped(f, agents);
    }
    return;
  case CMD_GUARD:
    fputs(_("Usage: ralon guard [--detach | --stop]\n"
            "\n"
            "On Linux there is no guard to start: `ralon run` restricts the agent in\n"
            "the kernel, the restriction is inherited by everything it starts, and\n"
            "with the mount backend `ralon run` itself guards the session.\n"),
          f);
    return;
  case CMD_PAUSE:
    fputs(_("Usage: ralon pause [--minutes N | --indefinitely] [-- COMMAND [ARGS...]]\n"
            "\n"
            "Freeze every sandbox `ralon run` keeps with the mount backend for this\n"
            "project, so that protected files can be changed (git pull, an editor,\n"
            "npm install) without the guard stopping the sandbox. `ralon resume`\n"
            "puts a read-only mount on whatever then stands at each protected path,\n"
            "and thaws them. With COMMAND: pause, run COMMAND, resume.\n"
            "\n"
            "Options:\n"
            "      --minutes N      resume on its own after N minutes (default 15)\n"
            "      --indefinitely   stay frozen until `ralon resume`\n"
            "  -C, --dir DIR        run COMMAND in DIR, and look for agent.lock from there\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: COMMAND's own (127 when it is not found, 126 when it cannot\n"
            "be executed); 0 without one; 2 on an error.\n"),
          f);
    return;
  case CMD_RESUME:
    fputs(_("Usage: ralon resume\n"
            "\n"
            "Re-protect what now stands at each protected path of this project and\n"
            "thaw the sandboxes `ralon pause` froze.\n"
            "\n"
            "Options:\n"
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
          "  run       run an agent that cannot modify what the policy protects\n"
          "  hook      check an agent's edit, or install hooks into agents\n"
          "  pause     freeze this project's sandboxes to change protected files\n"
          "  resume    re-protect what changed and thaw them\n"
          "  guard     (Linux: explains that `ralon run` guards its own session)\n"
          "  help      show the help of a command\n"
          "\n"
          "Options:\n"
          "  -C, --dir DIR    act as if started in DIR, as `git -C` does\n"
          "      --json       machine-readable output (check, status, run --dry-run, hook)\n"
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

/* getopt_long(3) takes any unambiguous prefix of a long option; a prefix
 * of several comes back like an unknown option. The options it could be,
 * joined with ", ", or NULL when it is not ambiguous. */
static char *ambiguous_as(const struct option *longopts, const char *arg) {
  if (!startswith(arg, "--")) {
    return NULL;
  }
  const char *name = arg + 2;
  size_t len = strcspn(name, "=");
  char *list = NULL;
  size_t n = 0;
  for (const struct option *lo = longopts; lo->name != NULL; lo++) {
    if (len > 0 && strncmp(lo->name, name, len) == 0) {
      char *more = xasprintf("%s%s--%s", list ? list : "", list ? ", " : "", lo->name);
      free(list);
      list = more;
      n++;
    }
  }
  if (n < 2) {
    free(list);
    return NULL;
  }
  return list;
}

static int bad_option(const char *cmd, const struct option *longopts, int argc, char **argv,
                      int c, Error *err) {
  const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
  if (c == ':') {
    return error_set(err, EINVAL, _("option `%s` needs a value; see `ralon %s%s--help`"), arg,
                     cmd ? cmd : "", cmd ? " " : "");
  }
  if (optopt != 0 && !startswith(arg, "--")) {
    return error_set(err, EINVAL, _("unknown option `-%c`; see `ralon %s%s--help`"), optopt,
                     cmd ? cmd : "", cmd ? " " : "");
  }
  if (optopt != 0 && strchr(arg, '=') != NULL) {
    for (const struct option *lo = longopts; lo->name != NULL; lo++) {
      if (lo->val == optopt && lo->has_arg == no_argument) {
        return error_set(err, EINVAL, _("option `--%s` takes no value; see `ralon %s%s--help`"),
                         lo->name, cmd ? cmd : "", cmd ? " " : "");
      }
    }
  }
  _cleanup_free_ char *could_be = ambiguous_as(longopts, arg);
  if (could_be != NULL) {
    /* TRANSLATORS: the second %s lists options, e.g. "--strict, --seal". */
    return error_set(err, EINVAL, _("option `%s` is ambiguous: it could be %s; see `ralon %s%s--help`"),
                     arg, could_be, cmd ? cmd : "", cmd ? " " : "");
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
  static const struct option run_opts[] = {
      COMMON_LONG_OPTIONS,
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"dry-run", no_argument, NULL, OPT_DRY_RUN},
      {"quiet", no_argument, NULL, 'q'},
      {"if-policy", no_argument, NULL, OPT_IF_POLICY},
      {"strict", no_argument, NULL, OPT_STRICT},
      {"seal", no_argument, NULL, OPT_SEAL},
      {NULL, 0, NULL, 0},
  };
  static const struct option guard_opts[] = {
      COMMON_LONG_OPTIONS,
      {"detach", no_argument, NULL, OPT_DETACH},
      {"stop", no_argument, NULL, OPT_STOP},
      {NULL, 0, NULL, 0},
  };
  static const struct option hook_opts[] = {
      COMMON_LONG_OPTIONS,
      {"agent", required_argument, NULL, OPT_AGENT},
      {"user", no_argument, NULL, OPT_USER},
      {"dry-run", no_argument, NULL, OPT_DRY_RUN},
      {NULL, 0, NULL, 0},
  };
  static const struct option pause_opts[] = {
      COMMON_LONG_OPTIONS,
      {"minutes", required_argument, NULL, OPT_MINUTES},
      {"indefinitely", no_argument, NULL, OPT_INDEFINITELY},
      {NULL, 0, NULL, 0},
  };
  static const struct option check_opts[] = {
      COMMON_LONG_OPTIONS,
      {"range", required_argument, NULL, OPT_RANGE},
      {"staged", no_argument, NULL, OPT_STAGED},
      {NULL, 0, NULL, 0},
  };
  static const struct option plain_opts[] = {
      COMMON_LONG_OPTIONS,
      {NULL, 0, NULL, 0},
  };
  const char *name = cli_command_name(o->command);
  const struct option *longopts = o->command == CMD_INIT    ? init_opts
                                  : o->command == CMD_RUN   ? run_opts
                                  : o->command == CMD_GUARD ? guard_opts
                                  : o->command == CMD_HOOK  ? hook_opts
                                  : o->command == CMD_PAUSE ? pause_opts
                                  : o->command == CMD_CHECK ? check_opts
                                                            : plain_opts;
  /* run and pause stop at the command: what follows belongs to it. */
  const char *optstring = o->command == CMD_RUN     ? "+:C:hVq"
                          : o->command == CMD_PAUSE ? "+:C:hV"
                                                    : ":C:hV";
  bool minutes_given = false, indefinitely = false;
  o->minutes = 15;
  int c;

  optind = 0; /* full reinitialisation for the second getopt pass */
  opterr = 0;
  while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
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
    case OPT_BACKEND:
      o->backend = optarg;
      break;
    case OPT_DRY_RUN:
      o->dry_run = true;
      break;
    case 'q':
      o->quiet = true;
      break;
    case OPT_IF_POLICY:
      o->if_policy = true;
      break;
    case OPT_STRICT:
      o->strict = true;
      break;
    case OPT_SEAL:
      o->seal = true;
      break;
    case OPT_DETACH:
      o->detach = true;
      break;
    case OPT_STOP:
      o->stop = true;
      break;
    case OPT_AGENT: {
      _cleanup_free_ char *copy = xstrdup(optarg);
      char *save = NULL;
      for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        o->agents = xreallocarray(o->agents, o->n_agents + 1, sizeof(char *));
        /* Points into argv: find the same text there. */
        o->agents[o->n_agents++] = xstrdup(t);
      }
      break;
    }
    case OPT_USER:
      o->user = true;
      break;
    case OPT_MINUTES: {
      char *end = NULL;
      errno = 0;
      unsigned long m = strtoul(optarg, &end, 10);
      if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || errno != 0 || m == 0 ||
          m > 7 * 24 * 60) {
        return error_set(err, EINVAL,
                         _("--minutes takes a whole number of minutes from 1 to %u, not `%s`"),
                         7u * 24u * 60u, optarg);
      }
      o->minutes = (unsigned)m;
      minutes_given = true;
      break;
    }
    case OPT_INDEFINITELY:
      indefinitely = true;
      break;
    case OPT_RANGE:
      o->range = optarg;
      break;
    case OPT_STAGED:
      o->staged = true;
      break;
    default:
      return bad_option(name, longopts, argc, argv, c, err);
    }
  }
  char **rest = argv + optind;
  size_t n_rest = (size_t)(argc - optind);

  switch (o->command) {
  case CMD_CHECK:
    if (o->range != NULL && o->staged) {
      return error_set(err, EINVAL, _("--range and --staged cannot be used together"));
    }
    if (o->range != NULL && o->range[0] == '\0') {
      return error_set(err, EINVAL, _("--range needs a revision range, such as main..HEAD"));
    }
    if ((o->range != NULL || o->staged) && n_rest > 0) {
      return error_set(err, EINVAL, _("`ralon check %s` takes no paths, but got `%s`"),
                       o->staged ? "--staged" : "--range", rest[0]);
    }
    o->paths = rest;
    o->n_paths = n_rest;
    return 0;
  case CMD_RUN:
    if (n_rest == 0) {
      return error_set(err, EINVAL, _("`ralon run` needs a command to run: ralon run -- COMMAND"));
    }
    if (o->backend != NULL && !streq(o->backend, "auto") && !streq(o->backend, "mount") &&
        !streq(o->backend, "landlock")) {
      return error_set(err, EINVAL, _("unknown backend `%s`; expected auto, mount or landlock"),
                       o->backend);
    }
    o->paths = rest;
    o->n_paths = n_rest;
    return 0;
  case CMD_HOOK:
    if (n_rest == 0) {
      return error_set(err, EINVAL,
                       _("`ralon hook` needs an action: check, install, uninstall or list"));
    }
    if (!streq(rest[0], "check") && !streq(rest[0], "install") && !streq(rest[0], "uninstall") &&
        !streq(rest[0], "list")) {
      return error_set(err, EINVAL,
                       _("unknown hook action `%s`; expected check, install, uninstall or list"),
                       rest[0]);
    }
    if (n_rest > 1) {
      return error_set(err, EINVAL, _("`ralon hook %s` takes no arguments, but got `%s`"), rest[0],
                       rest[1]);
    }
    o->hook_action = rest[0];
    return 0;
  case CMD_PAUSE:
    if (minutes_given && indefinitely) {
      return error_set(err, EINVAL, _("--minutes and --indefinitely cannot be used together"));
    }
    if (indefinitely) {
      o->minutes = 0;
    }
    o->paths = rest;
    o->n_paths = n_rest;
    return 0;
  case CMD_GUARD:
    if (o->detach && o->stop) {
      return error_set(err, EINVAL, _("--detach and --stop cannot be used together"));
    }
    break;
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
  case CMD_RESUME:
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
      return bad_option(NULL, global_opts, argc, argv, c, err);
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
