/* SPDX-License-Identifier: Apache-2.0 */
/* The capability state `run` gives the command, set through libcap. libcap
 * is loaded with dlopen(3) the first time it is needed: only `run` needs
 * it, and linking it would make every `check` (an agent's every edit) load
 * it and run its constructor, which probes the kernel's capabilities. */
#pragma once

#include "util.h"

/* Empties the effective, permitted, inheritable and ambient sets and, when
 * this process holds CAP_SETPCAP (root, or the mount backend's user
 * namespace), the bounding set, and locks the securebits that would give
 * a uid 0 capabilities back at execve. Without CAP_SETPCAP there is no
 * bounding set to drop and no securebit to set (no_new_privs keeps
 * execve from adding capabilities). 0, or -1 with `err`: a libcap that
 * cannot be loaded fails too, and nothing is executed. */
int caps_drop_all(Error *err);

/* Loads libcap now (caps_drop_all() would): before a fork, so that the
 * child does not load it again, and a libcap that cannot be loaded stops
 * ralon before anything is made. 0, or -1 with `err`. */
int caps_load(Error *err);

/* libcap's name of capability `cap` ("cap_sys_admin"), or its number as
 * text where libcap cannot be loaded. Free it with free(3). */
char *caps_name(int cap);
