/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/dl.h"

#include <dlfcn.h>

__typeof__(&cap_get_proc) sym_cap_get_proc;
__typeof__(&cap_get_flag) sym_cap_get_flag;
__typeof__(&cap_free) sym_cap_free;
__typeof__(&cap_max_bits) sym_cap_max_bits;
__typeof__(&cap_drop_bound) sym_cap_drop_bound;
__typeof__(&cap_set_secbits) sym_cap_set_secbits;
__typeof__(&cap_reset_ambient) sym_cap_reset_ambient;
__typeof__(&cap_init) sym_cap_init;
__typeof__(&cap_set_proc) sym_cap_set_proc;

__typeof__(&seccomp_init) sym_seccomp_init;
__typeof__(&seccomp_arch_add) sym_seccomp_arch_add;
__typeof__(&seccomp_rule_add_array) sym_seccomp_rule_add_array;
__typeof__(&seccomp_load) sym_seccomp_load;
__typeof__(&seccomp_release) sym_seccomp_release;

typedef struct {
  void **slot;
  const char *name;
} Symbol;

static int load(const char *soname, const Symbol *syms, size_t n, Error *err) {
  /* RTLD_NODELETE: nothing ever unloads it under the pointers. */
  void *h = dlopen(soname, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
  if (h == NULL) {
    return error_set(err, ELIBACC, _("cannot load %s, which `ralon run` needs: %s"), soname,
                     dlerror());
  }
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(h, syms[i].name);
    if (p == NULL) {
      return error_set(err, ELIBACC, _("%s has no symbol %s (too old?)"), soname, syms[i].name);
    }
    *syms[i].slot = p;
  }
  return 0;
}

#define SYM(fn) {(void **)&sym_##fn, #fn}

int dl_load_hardening(Error *err) {
  static bool loaded;
  static const Symbol cap_syms[] = {
      SYM(cap_get_proc),   SYM(cap_get_flag),  SYM(cap_free),
      SYM(cap_max_bits),   SYM(cap_drop_bound),
      SYM(cap_set_secbits), SYM(cap_reset_ambient), SYM(cap_init),
      SYM(cap_set_proc),
  };
  static const Symbol seccomp_syms[] = {
      SYM(seccomp_init), SYM(seccomp_arch_add), SYM(seccomp_rule_add_array),
      SYM(seccomp_load), SYM(seccomp_release),
  };
  if (loaded) {
    return 0;
  }
  if (load(LIBCAP_SONAME, cap_syms, ELEMENTSOF(cap_syms), err) < 0 ||
      load(LIBSECCOMP_SONAME, seccomp_syms, ELEMENTSOF(seccomp_syms), err) < 0) {
    return -1;
  }
  loaded = true;
  return 0;
}
