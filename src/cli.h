/* SPDX-License-Identifier: Apache-2.0 */
/* Option parsing only: argv in, Options out. Nothing here touches the
 * filesystem or prints, except the help texts it owns. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

typedef enum {
  CMD_NONE,
  CMD_HELP,
  CMD_VERSION,
  CMD_INIT,
  CMD_CHECK,
  CMD_STATUS,
  CMD_RUN,
  CMD_GUARD,
  CMD_HOOK,
  CMD_PAUSE,
  CMD_RESUME,
  _CMD_MAX,
  _CMD_INVALID = -EINVAL,
} Command;

typedef struct {
  Command command;
  Command help_for; /* CMD_HELP: which command's help, CMD_NONE for the tool */
  const char *dir;  /* -C/--dir */
  bool json;
  /* init */
  bool force;
  bool no_hooks;
  /* check --range A..B, check --staged: what commits (or the index)
   * change, instead of paths */
  const char *range;
  bool staged;
  /* check: the paths; run, pause: the command and its arguments */
  char **paths;
  size_t n_paths;
  /* run */
  const char *backend; /* NULL: auto */
  bool dry_run;
  bool quiet;
  bool if_policy;
  bool strict;
  bool seal;
  /* pause: thaw on its own after this many minutes (0: never) */
  unsigned minutes;
  /* guard */
  bool detach;
  bool stop;
  /* hook: "check", "install", "uninstall" or "list" */
  const char *hook_action;
  const char **agents; /* --agent values, split at commas; NULL: auto */
  size_t n_agents;
  bool user;
} Options;

void options_clear(Options *o);

int cli_parse(int argc, char **argv, Options *ret, Error *err);

const char *cli_command_name(Command c);

/* The --help text of the tool (CMD_NONE) or of one command. */
void cli_print_help(FILE *f, Command c);
