/* SPDX-License-Identifier: Apache-2.0 */
/* When `status` blames AppArmor's user-namespace restriction, and when it
 * must not. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "enforce/linux/apparmor.h"

static const MountProbe refused_mount = {MOUNT_STEP_BIND, 1 /* EPERM */};
static const MountProbe refused_map = {MOUNT_STEP_UID_MAP, 13 /* EACCES */};

START_TEST(test_restricted_no_profile) {
  char *h = apparmor_userns_hint(&refused_mount, "1\n", "/usr/bin/ralon", false);
  ck_assert_ptr_nonnull(h);
  ck_assert_ptr_nonnull(strstr(h, "apparmor_restrict_unprivileged_userns = 1"));
  ck_assert_ptr_nonnull(strstr(h, "/etc/apparmor.d/ralon"));
  ck_assert_ptr_nonnull(strstr(h, "reinstall"));
  ck_assert_ptr_nonnull(strstr(h, "/usr/bin/ralon"));
  free(h);
  h = apparmor_userns_hint(&refused_map, "1", "/opt/ralon/bin/ralon", false);
  ck_assert_ptr_nonnull(h);
  ck_assert_ptr_nonnull(strstr(h, "/opt/ralon/bin/ralon"));
  free(h);
}
END_TEST

START_TEST(test_restricted_profile_not_loaded) {
  char *h = apparmor_userns_hint(&refused_mount, "1\n", "/usr/local/bin/ralon", true);
  ck_assert_ptr_nonnull(h);
  ck_assert_ptr_nonnull(strstr(h, "apparmor_parser -r /etc/apparmor.d/ralon"));
  ck_assert_ptr_nonnull(strstr(h, "/usr/local/bin/ralon"));
  free(h);
}
END_TEST

START_TEST(test_not_apparmor) {
  /* The restriction off, or absent. */
  ck_assert_ptr_null(apparmor_userns_hint(&refused_mount, "0\n", "/usr/bin/ralon", false));
  ck_assert_ptr_null(apparmor_userns_hint(&refused_mount, NULL, "/usr/bin/ralon", false));
  /* Available: nothing to explain. */
  MountProbe ok = {MOUNT_STEP_NONE, 0};
  ck_assert_ptr_null(apparmor_userns_hint(&ok, "1\n", "/usr/bin/ralon", false));
  /* No user namespace at all (unshare refused, e.g. a seccomp filter or
   * user.max_user_namespaces=0) is not AppArmor's doing. */
  MountProbe unshare = {MOUNT_STEP_UNSHARE, 1};
  ck_assert_ptr_null(apparmor_userns_hint(&unshare, "1\n", "/usr/bin/ralon", false));
  MountProbe fork_failed = {MOUNT_STEP_FORK, 11};
  ck_assert_ptr_null(apparmor_userns_hint(&fork_failed, "1\n", "/usr/bin/ralon", false));
}
END_TEST

START_TEST(test_here_when_available) {
  MountProbe ok = {MOUNT_STEP_NONE, 0};
  ck_assert_ptr_null(apparmor_userns_hint_here(&ok));
}
END_TEST

int main(void) {
  Suite *s = suite_create("apparmor");
  TCase *tc = tcase_create("hint");
  tcase_add_test(tc, test_restricted_no_profile);
  tcase_add_test(tc, test_restricted_profile_not_loaded);
  tcase_add_test(tc, test_not_apparmor);
  tcase_add_test(tc, test_here_when_available);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
