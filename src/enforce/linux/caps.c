/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/caps.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/capability.h>

#include "config.h"

static __typeof__(&cap_clear) sym_cap_clear;
static __typeof__(&cap_drop_bound) sym_cap_drop_bound;
static __typeof__(&cap_free) sym_cap_free;
static __typeof__(&cap_get_flag) sym_cap_get_flag;
static __typeof__(&cap_get_proc) sym_cap_get_proc;
static __typeof__(&cap_max_bits) sym_cap_max_bits;
static __typeof__(&cap_set_proc) sym_cap_set_proc;
static __typeof__(&cap_set_secbits) sym_cap_set_secbits;
static __typeof__(&cap_to_name) sym_cap_to_name;

/* Loads libcap once. RTLD_NODELETE: nothing unloads it under the
 * pointers. */
static int load_libcap(Error *err) {
  static int state; /* 0 not tried, 1 loaded, -1 failed */
  static char *why;
  if (state == 0) {
    state = -1;
    void *h = dlopen(LIBCAP_SONAME, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
    if (h == NULL) {
      const char *e = dlerror();
      why = xstrdup(e != NULL ? e : "?");
      goto done;
    }
    static const struct {
      void **slot;
      const char *name;
    } syms[] = {
        {(void **)&sym_cap_clear, "cap_clear"},
        {(void **)&sym_cap_drop_bound, "cap_drop_bound"},
        {(void **)&sym_cap_free, "cap_free"},
        {(void **)&sym_cap_get_flag, "cap_get_flag"},
        {(void **)&sym_cap_get_proc, "cap_get_proc"},
        {(void **)&sym_cap_max_bits, "cap_max_bits"},
        {(void **)&sym_cap_set_proc, "cap_set_proc"},
        {(void **)&sym_cap_set_secbits, "cap_set_secbits"},
        {(void **)&sym_cap_to_name, "cap_to_name"},
    };
    for (size_t i = 0; i < ELEMENTSOF(syms); i++) {
      *syms[i].slot = dlsym(h, syms[i].name);
      if (*syms[i].slot == NULL) {
        why = xasprintf(_("it has no symbol %s"), syms[i].name);
        goto done;
      }
    }
    state = 1;
  }
done:
  if (state < 0) {
    return error_set(err, ELIBACC,
                     _("cannot load %s, with which ralon drops the command's capabilities: %s "
                       "(install libcap)"),
                     LIBCAP_SONAME, why);
  }
  return 0;
}

int caps_load(Error *err) {
  return load_libcap(err);
}

static void cap_freep(void *p) {
  void *obj = *(void **)p;
  if (obj != NULL) {
    int saved = errno;
    sym_cap_free(obj);
    errno = saved;
  }
}
#define _cleanup_cap_ _cleanup_(cap_freep)

char *caps_name(int cap) {
  if (load_libcap(NULL) < 0) {
    return xasprintf("%d", cap);
  }
  char *n = sym_cap_to_name(cap);
  if (n == NULL) {
    oom();
  }
  char *copy = xstrdup(n);
  sym_cap_free(n);
  return copy;
}

int caps_drop_all(Error *err) {
  if (load_libcap(err) < 0) {
    return -1;
  }
  _cleanup_cap_ cap_t caps = sym_cap_get_proc();
  if (caps == NULL) {
    return error_set(err, errno, _("cannot read the capabilities of this process: %m"));
  }
  cap_flag_value_t setpcap = CAP_CLEAR;
  if (sym_cap_get_flag(caps, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) < 0) {
    return error_set(err, errno, _("cannot read the capabilities of this process: %m"));
  }
  if (setpcap == CAP_SET) {
    /* Root in its namespace would get the bounding set back at execve.
     * One prctl per capability the kernel knows (libcap counted them when
     * it was loaded). Without CAP_SETPCAP there is nothing to drop it
     * with (no_new_privs keeps setuid programs from adding any). */
    for (cap_value_t c = 0; c < sym_cap_max_bits(); c++) {
      if (sym_cap_drop_bound(c) < 0) {
        int e = errno;
        _cleanup_free_ char *name = caps_name(c);
        return error_set(err, e, _("cannot drop %s from the bounding set: %m"), name);
      }
    }
    /* What libcap calls CAP_SECURED_BITS_AMBIENT: root gains nothing at
     * execve (NOROOT, NO_SETUID_FIXUP), may raise no ambient capability,
     * keeps none across a change of uid, and none of it can be undone. */
    unsigned bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (sym_cap_set_secbits(bits) < 0) {
      return error_set(err, errno, _("cannot lock the securebits: %m"));
    }
  }
  /* Last, since the steps above need CAP_SETPCAP: the effective,
   * permitted and inheritable sets emptied, and with them the ambient
   * set, which the kernel keeps within permitted and inheritable
   * (capabilities(7)). libcap's IAB functions would clear it by asking
   * for each capability first, 41 system calls more. */
  if (sym_cap_clear(caps) < 0 || sym_cap_set_proc(caps) < 0) {
    return error_set(err, errno, _("cannot drop capabilities: %m"));
  }
  return 0;
}
