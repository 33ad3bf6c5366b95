/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon init`: a commented agent.lock, and the hooks of the agents found. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "commands.h"
#include "commands/common.h"
#include "enforce/enforce.h"
#if defined(__linux__)
#include "enforce/linux/apparmor.h"
#include "enforce/linux/guard.h"
#endif
#include "enforce/unguarded.h"
#include "hook/decision.h"
#include "hook/hook.h"
#include "hook/install.h"
#include "json.h"
#include "log.h"
#include "matcher.h"
#include "output.h"
#include "path.h"
#include "policy.h"
#include "scan.h"

/* ---- init ------------------------------------------------------------- */


int command_init(const Options *o, Error *err) {
  _cleanup_free_ char *dir = path_absolute(NULL, o->dir ? o->dir : ".");
  if (dir == NULL) {
    return error_set(err, errno, _("cannot determine the working directory: %m"));
  }
  struct stat st;
  if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    return error_set(err, errno ? errno : ENOTDIR, _("cannot use %s: %s"), dir,
                     strerror(errno ? errno : ENOTDIR));
  }
  _cleanup_free_ char *file = path_join(dir, POLICY_FILE_NAME);
  /* Something there that is no policy (a directory, a FIFO, a link that
   * leads nowhere): "already exists" would not say what, and every other
   * command refuses it. --force replaces it where a rename can. */
  int r = o->force ? 0 : policy_check_file(file, err);
  if (r < 0 && r != -ENOENT) {
    return -1;
  }
  _cleanup_free_ char *text = policy_starter_text(dir);
  r = write_file_atomic(dir, POLICY_FILE_NAME, text, strlen(text), o->force);
  if (r == -EEXIST) {
    return error_set(err, EEXIST, _("%s already exists (use --force to overwrite)"), file);
  }
  if (r < 0) {
    errno = -r;
    return error_set(err, -r, _("cannot write %s: %m"), file);
  }
  _cleanup_free_ char *file_shown = shown(file, false);
  printf(_("wrote %s\n"), file_shown);
  int status = EXIT_OK;
  if (!o->no_hooks) {
    /* The agents found in the project or home; none found, none written.
     * As root, only the project counts: root's home says nothing about
     * which agents work on this project. */
    bool found[_AGENT_MAX];
    const char *home = geteuid() == 0 ? NULL : getenv("HOME");
    if (hook_detect(dir, home, found)) {
      Options ho = {.command = CMD_HOOK, .dir = dir, .hook_action = "install"};
      for (int a = 0; a < _AGENT_MAX; a++) {
        if (found[a]) {
          ho.agents = xreallocarray(ho.agents, ho.n_agents + 1, sizeof(char *));
          ho.agents[ho.n_agents++] = xstrdup(agent_to_string((Agent)a));
        }
      }
      status = hook_install_command(&ho, false, err);
      options_clear(&ho);
    } else {
      fputs(_("No coding agent's directory was found here, so no agent hook was installed:\n"
              "  ralon hook install --agent NAME   adds one to this project\n"),
            stdout);
    }
    fputs(_("A hook in the project runs only where the agent reads the project's\n"
            "settings: started in this directory, in a folder it trusts. A hook\n"
            "installed with --user runs in every project and decides by the\n"
            "agent.lock of the edited path (allowing at once where there is none):\n"
            "  ralon hook install --user --agent NAME   the robust choice\n"),
          stdout);
  }
  printf("\n");
  fputs(_("Now edit agent.lock, then protect it:\n"
          "  ralon run -- <your agent>   the agent and everything it spawns\n"
          "\n"
          "An agent that reaches a protected path reports\n"
          "`EROFS: read-only file system`, `EBUSY: device or resource busy`\n"
          "(removing or renaming one) or `EACCES: permission denied`, which is\n"
          "ralon refusing the change, not a damaged file or a passing lock.\n"),
        stdout);
  return status;
}
