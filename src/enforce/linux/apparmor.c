/* SPDX-License-Identifier: Apache-2.0 */
#include "enforce/linux/apparmor.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

char *apparmor_userns_hint(const MountProbe *probe, const char *sysctl, const char *exe,
                           bool profile) {
  /* Failing to fork or to unshare at all is another matter (no user
   * namespaces, or a seccomp filter); the restriction lets unshare pass
   * and takes the capabilities away inside. */
  if (probe->step == MOUNT_STEP_NONE || probe->step == MOUNT_STEP_FORK ||
      probe->step == MOUNT_STEP_UNSHARE) {
    return NULL;
  }
  if (sysctl == NULL || strtol(sysctl, NULL, 10) != 1) {
    return NULL;
  }
  if (!profile) {
    return xasprintf(_("AppArmor restricts unprivileged user namespaces on this machine "
                       "(kernel.apparmor_restrict_unprivileged_userns = 1), which is why the "
                       "mount backend failed. The ralon package installs a profile that "
                       "allows them for ralon, %s/ralon; it is not there: reinstall the "
                       "package, or write a profile granting `userns` to %s."),
                     APPARMOR_PROFILE_DIR, exe ? exe : "ralon");
  }
  return xasprintf(_("AppArmor restricts unprivileged user namespaces on this machine "
                     "(kernel.apparmor_restrict_unprivileged_userns = 1), which is why the "
                     "mount backend failed, although %s/ralon exists: load it with `sudo "
                     "apparmor_parser -r %s/ralon`, and check that it names this ralon, %s."),
                   APPARMOR_PROFILE_DIR, APPARMOR_PROFILE_DIR, exe ? exe : "ralon");
}

char *apparmor_userns_hint_here(const MountProbe *probe) {
  if (probe->step == MOUNT_STEP_NONE) {
    return NULL;
  }
  _cleanup_close_ int fd = open(APPARMOR_USERNS_SYSCTL, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NULL;
  }
  char buf[16];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n <= 0) {
    return NULL;
  }
  buf[n] = '\0';
  _cleanup_free_ char *exe = realpath("/proc/self/exe", NULL);
  return apparmor_userns_hint(probe, buf, exe,
                              access(APPARMOR_PROFILE_DIR "/ralon", F_OK) == 0);
}
