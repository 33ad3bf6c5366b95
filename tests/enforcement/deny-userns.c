/* SPDX-License-Identifier: Apache-2.0 */
/* deny-userns [--enospc] COMMAND [ARG...]: runs COMMAND where no new user
 * namespace can be created, like a distribution that restricts them, or
 * (--enospc) as where the quota of user namespaces has been used up.
 *
 * A seccomp filter makes unshare(2) and clone(2) with CLONE_NEWUSER fail
 * with EPERM, and clone3(2) fail with ENOSYS (its flags live in a struct
 * seccomp cannot look into; ENOSYS makes glibc fall back to clone). The
 * enforcement suite uses it to see `ralon run` fall back to the Landlock
 * backend for real, and `--backend mount` refuse with the failed step. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what, int r) {
  fprintf(stderr, "deny-userns: %s: %s\n", what, strerror(-r));
  return 125;
}

int main(int argc, char **argv) {
  int refusal = EPERM;
  if (argc > 1 && strcmp(argv[1], "--enospc") == 0) {
    refusal = ENOSPC;
    argv++;
    argc--;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: deny-userns [--enospc] COMMAND [ARG...]\n");
    return 125;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) {
    fprintf(stderr, "deny-userns: seccomp_init failed\n");
    return 125;
  }
  /* clone(2) takes its flags in the second argument on s390. */
  unsigned clone_arg = 0;
  uint32_t arch = seccomp_arch_native();
  if (arch == SCMP_ARCH_S390 || arch == SCMP_ARCH_S390X) {
    clone_arg = 1;
  }
  const struct scmp_arg_cmp newuser0 =
      SCMP_A0(SCMP_CMP_MASKED_EQ, (scmp_datum_t)CLONE_NEWUSER, (scmp_datum_t)CLONE_NEWUSER);
  const struct scmp_arg_cmp newuser_clone = {
      .arg = clone_arg,
      .op = SCMP_CMP_MASKED_EQ,
      .datum_a = (scmp_datum_t)CLONE_NEWUSER,
      .datum_b = (scmp_datum_t)CLONE_NEWUSER,
  };
  int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)refusal), SCMP_SYS(unshare), 1,
                             newuser0);
  if (r < 0) {
    return fail("cannot add the unshare rule", r);
  }
  r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)refusal), SCMP_SYS(clone), 1,
                         newuser_clone);
  if (r < 0) {
    return fail("cannot add the clone rule", r);
  }
  r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (r < 0 && r != -EDOM) {
    return fail("cannot add the clone3 rule", r);
  }
  /* libseccomp sets no_new_privs first (SCMP_FLTATR_CTL_NNP defaults on),
   * so this works unprivileged too. */
  r = seccomp_load(ctx);
  if (r < 0) {
    return fail("cannot load the filter", r);
  }
  seccomp_release(ctx);
  execvp(argv[1], argv + 1);
  fprintf(stderr, "deny-userns: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
