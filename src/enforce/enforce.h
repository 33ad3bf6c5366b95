/* SPDX-License-Identifier: Apache-2.0 */
/* From a scanned policy to a restricted process: which backends this
 * machine offers, which one to use and why, what exactly to protect, and
 * the last steps before execve. */
#pragma once

#include <stdbool.h>

#include "enforce/plan.h"
#include "matcher.h"
#include "policy.h"
#include "scan.h"
#include "util.h"

#if defined(__linux__)
#include "enforce/linux/sys.h"
#endif

typedef struct {
  int landlock_abi; /* > 0, or -errno */
  MountProbe mount;
} Availability;

/* Probes both backends; `probe_path` is a directory the mount probe binds
 * (the project root). */
void enforce_availability(const char *probe_path, Availability *ret);

/* What `run` needs to know before choosing: with --backend landlock the
 * mount probe is skipped, and with --backend mount the real sequence is its
 * own probe (it fails with the step and errno), so only auto and --dry-run
 * pay for a probe process. */
void enforce_availability_for(Backend requested, bool dry_run, const char *probe_path,
                              Availability *ret);

bool enforce_backend_available(const Availability *a, Backend b);

/* One line for `status` and error messages: "available (...)" or
 * "unavailable — why". */
char *enforce_describe(const Availability *a, Backend b);

/* auto = mount when its probe passes, else Landlock. Sets *ret and a
 * translated reason; fails with what was tried when nothing is usable. */
int enforce_select(Backend requested, const Availability *a, Backend *ret, char **ret_why,
                   Error *err);

/* What was missing when planned can be protected by neither backend if it
 * is there once the restriction holds (put back under its name while ralon
 * started): the mount backend bound nothing there, and Landlock may have
 * granted it under another name. An error names the first such path. */
int enforce_verify_missing(const Plan *plan, Error *err);

/* Whether the landlock backend's descriptors fit under RLIMIT_NOFILE
 * (plan_check_descriptors()) beside those `open` (sys_open_fds(), read
 * before the lister keeps any): before the plan is built (`plan` NULL),
 * the directories the carve-out of `targets` will list and the run keeps
 * open; after, those the plan restricts (whether kept or not: the dry run
 * keeps none) and its rules. The dry run asks at the same two points as
 * the run, and fails where it would, with the same message. Nothing to
 * check for another backend, or without /proc. */
int enforce_check_descriptors(Backend backend, const PlanTarget *targets, size_t n,
                              const Plan *plan, const OpenFds *open, Error *err);

/* What to protect, by canonical path and identity: every entry the scan
 * found (a protected symbolic link protects its target, and its own name
 * where the backend can), deduplicated by device and inode, plus each
 * literal pattern that names nothing yet (marked missing), plus each
 * directory the scan could not read in full, protected as a whole. Fails
 * when the scan's agent.lock is not the file the policy was read from. */
int enforce_targets(const Policy *policy, const Matcher *m, const ScanResult *scan,
                    PlanTarget **ret, size_t *ret_n, Error *err);

/* Called by enforce_exec() once the restriction is in place and every
 * privilege is dropped, just before execve: what is reported there (the
 * paths locked, the journal's record) is then true. */
typedef void (*EnforceReady)(void *userdata);

/* For the Landlock backend: no rule on a directory where a bind mount of
 * something inside a protected directory sits (carve_withhold_mounted(),
 * with this process's mount table). */
void enforce_withhold_mounted(Plan *plan);

/* Whether --seal holds with `backend` at Landlock `abi`: a Landlock
 * domain refuses every mount, and the mount backend's extra one needs ABI
 * 2. Fails with why not. *ret_scoped: whether the domain also scopes
 * signals and abstract unix sockets to the sandbox (ABI 6). */
int enforce_seal_check(Backend backend, int abi, bool *ret_scoped, Error *err);

/* Whether argv[0] can be found as enforce_exec() looks for it once the
 * restriction holds (neither backend hides a program), failing with the
 * error it would fail with: what the dry run says of a command the run
 * could not start. */
int enforce_check_command(char *const argv[], Error *err);

/* Applies the Landlock backend (and the seal), drops every privilege, calls
 * `ready` (when not NULL) and executes argv; inherited descriptors that
 * would bypass the plan are refused before (sys_check_inherited_fds()).
 * Returns only on failure, with nothing executed and `ready` not
 * called. */
int enforce_exec(const Plan *plan, const Availability *a, bool seal, char *const argv[],
                 EnforceReady ready, void *userdata, Error *err);
