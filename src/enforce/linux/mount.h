/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdbool.h>

#include "enforce/plan.h"
#include "util.h"

/* The mount backend (docs/ARCHITECTURE.md §4, "Mount backend"), in two
 * halves, because the guard keeps the first namespace and the command
 * gets the second.
 *
 * mount_prepare(), in the guard: a mount namespace (and a user namespace
 * unless this process may mount already), private, every ancestor pinned
 * and every target bound read-only. */
int mount_prepare(const Plan *plan, Error *err);

/* mount_lock(), in the command's process, a copy of that namespace: the
 * working directory `cwd` re-entered, the namespace locked by a second
 * unshare (with `seal`, no namespace can be made below it), and the lock
 * verified for every target and pin. */
int mount_lock(const Plan *plan, const char *cwd, bool seal, Error *err);
