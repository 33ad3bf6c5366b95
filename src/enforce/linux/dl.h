/* SPDX-License-Identifier: Apache-2.0 */
/* libcap and libseccomp, loaded with dlopen(3) when `run` is about to
 * restrict the process, and never otherwise: `check` and `hook check` run
 * on every agent edit, and every shared library linked is loaded at every
 * start. The types come from the libraries' own headers. */
#pragma once

#include <seccomp.h>
#include <sys/capability.h>

#include "util.h"

extern __typeof__(&cap_get_proc) sym_cap_get_proc;
extern __typeof__(&cap_get_flag) sym_cap_get_flag;
extern __typeof__(&cap_free) sym_cap_free;
extern __typeof__(&cap_max_bits) sym_cap_max_bits;
extern __typeof__(&cap_drop_bound) sym_cap_drop_bound;
extern __typeof__(&cap_set_secbits) sym_cap_set_secbits;
extern __typeof__(&cap_reset_ambient) sym_cap_reset_ambient;
extern __typeof__(&cap_init) sym_cap_init;
extern __typeof__(&cap_set_proc) sym_cap_set_proc;

extern __typeof__(&seccomp_init) sym_seccomp_init;
extern __typeof__(&seccomp_arch_add) sym_seccomp_arch_add;
extern __typeof__(&seccomp_rule_add_array) sym_seccomp_rule_add_array;
extern __typeof__(&seccomp_load) sym_seccomp_load;
extern __typeof__(&seccomp_release) sym_seccomp_release;

/* Loads both libraries (once). A library that cannot be loaded is an error:
 * ralon does not run a command it could not restrict. */
int dl_load_hardening(Error *err);
