/* SPDX-License-Identifier: Apache-2.0 */
/* Ubuntu 23.10 and later let unprivileged processes create user
 * namespaces only under an AppArmor profile that grants `userns`; without
 * one, unshare succeeds and the mount inside fails. The ralon package
 * ships that profile (data/apparmor/ralon.in). This says so when it is why
 * the mount backend is unavailable. */
#pragma once

#include <stdbool.h>

#include "enforce/linux/sys.h"

/* The sysctl that turns the restriction on. */
#define APPARMOR_USERNS_SYSCTL "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
#define APPARMOR_PROFILE_DIR "/etc/apparmor.d"

/* Pure: the explanation to print (translated, newly allocated) when the
 * probe failed after creating the namespace and `sysctl` (the sysctl
 * file's text, NULL when absent) says the restriction is on; NULL
 * otherwise. `exe` is this ralon's path, `profile` whether the shipped
 * profile file exists. */
char *apparmor_userns_hint(const MountProbe *probe, const char *sysctl, const char *exe,
                           bool profile);

/* The same, from this machine's sysctl, /proc/self/exe and profile. */
char *apparmor_userns_hint_here(const MountProbe *probe);
