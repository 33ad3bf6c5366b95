/* SPDX-License-Identifier: Apache-2.0 */
/* Platforms where every restriction is inherited by the processes of the
 * agent need no guard process: there is nothing to hold and nothing to kill. */
#include "enforce/unguarded.h"

#include "util.h"

const char *unguarded_reason(void) {
  return _("a guard cannot protect a process it did not start on Linux. `ralon run -- <agent>` "
           "restricts the agent and every process it spawns, which is stronger — it is "
           "inherited rather than held, so there is nothing to kill.");
}
