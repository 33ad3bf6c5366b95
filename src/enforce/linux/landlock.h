/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "enforce/plan.h"
#include "util.h"

/* The write rights the Landlock backend handles at `abi`: ABI 3's set,
 * less what an older kernel lacks (REFER needs 2, TRUNCATE 3). Reads,
 * execution and device ioctls are never handled. */
uint64_t landlock_write_access(int abi);

/* What --seal's layer scopes to the sandbox at `abi` (0 before ABI 6). */
uint64_t landlock_seal_scopes(int abi);

/* The carve-out of plan->carve, restricting this process for good. With
 * `seal`, the domain also scopes what landlock_seal_scopes() names (any
 * Landlock domain refuses mounts already). */
int landlock_apply(const Plan *plan, int abi, bool seal, Error *err);

/* --seal: a layer that restricts nothing a project needs (it handles only
 * MAKE_BLOCK and REFER, and grants REFER on `/`) but makes the kernel
 * refuse every mount, and on ABI 6+ scopes signals and abstract unix
 * sockets to the sandbox. */
int landlock_seal(int abi, Error *err);
