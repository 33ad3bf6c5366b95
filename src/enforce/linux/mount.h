/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "enforce/plan.h"
#include "util.h"

/* The mount backend, applied to this process (seed, "The mount backend",
 * and DESIGN.md §4): a mount namespace (and a user namespace unless this
 * process may mount already), every ancestor pinned,
 * every target bound read-only, the working directory re-entered, the
 * namespace locked by a second unshare, and the lock verified. */
int mount_apply(const Plan *plan, Error *err);
