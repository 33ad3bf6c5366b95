/* SPDX-License-Identifier: Apache-2.0 */
/* `ralon guard`: on Linux, that `ralon run` guards its own session. */
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

/* ---- guard ------------------------------------------------------------ */

int command_guard(const Options *o, Error *err) {
  Project p;
  if (project_open(o, 0, &p, err) < 0) {
    project_clear(&p);
    return -1;
  }
  if (o->stop) {
    _cleanup_free_ char *root = shown(p.policy->root, false);
    printf(_("no guard was running for %s\n"), root);
    project_clear(&p);
    return EXIT_OK;
  }
  project_clear(&p);
  return error_set(err, ENOTSUP, "%s", unguarded_reason());
}
