/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdint.h>

#include "enforce/plan.h"
#include "util.h"

/* The write rights the Landlock backend handles at `abi`: ABI 3's set,
 * less what an older kernel lacks (REFER needs 2, TRUNCATE 3). Reads,
 * execution and device ioctls are never handled. */
uint64_t landlock_write_access(int abi);

/* The carve-out of plan->carve, restricting this process for good. */
int landlock_apply(const Plan *plan, int abi, Error *err);

/* --seal: a layer that restricts nothing a project needs (it handles only
 * MAKE_BLOCK and REFER, and grants REFER on `/`) but makes the kernel
 * refuse every mount, and on ABI 6+ scopes signals and abstract unix
 * sockets to the sandbox. */
int landlock_seal(int abi, Error *err);
