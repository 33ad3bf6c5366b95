/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's share of each backend: what `ralon run` could not avoid
 * paying even with no policy to read, no scan, no audit and no checks.
 * bench/run times it beside ralon, so the difference is ralon's own work.
 *
 *   floor mount    PATH... -- CMD [ARGS...]
 *   floor landlock PATH... -- CMD [ARGS...]
 *
 * mount: a user and mount namespace (uid/gid maps), / made private, each
 * PATH bound onto itself and remounted read-only (keeping the flags the
 * kernel locks), a second user and mount namespace to lock the mounts,
 * then CMD. No pinning of ancestors, no verification.
 *
 * landlock: a ruleset handling ralon's write rights (ABI 3), one rule on
 * every entry of every directory from / to each PATH except the
 * directories on the way and the PATHs themselves, then CMD. No identity
 * checks, no symbolic link care.
 *
 * Both then harden the process as ralon must: every capability dropped
 * (with CAP_SETPCAP, the bounding set too, one prctl each as the kernel
 * requires), no_new_privs, and a seccomp filter refusing TIOCSTI and
 * TIOCLINUX (loading it JIT-compiles a program, which on a VM is a large
 * share of the cost).
 *
 * PATHs must be absolute and canonical. Not a sandbox: a measuring stick. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

struct dirent64_raw {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void die(const char *what) {
  fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void write_file(const char *path, const char *s) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
    die(path);
  }
  close(fd);
}

static void enter_namespaces(void) {
  char map[64];
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
    die("unshare");
  }
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
  write_file("/proc/self/gid_map", map);
}

static unsigned long locked_flags(const char *path) {
  struct statvfs sv;
  unsigned long fl = 0;
  if (statvfs(path, &sv) == 0) {
    fl |= sv.f_flag & ST_NOSUID ? MS_NOSUID : 0;
    fl |= sv.f_flag & ST_NODEV ? MS_NODEV : 0;
    fl |= sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0;
    fl |= sv.f_flag & ST_NOATIME ? MS_NOATIME : 0;
    fl |= sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0;
    fl |= sv.f_flag & ST_RELATIME ? MS_RELATIME : 0;
  }
  return fl;
}

static void floor_mount(char **paths, int n) {
  enter_namespaces();
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    die("make / private");
  }
  for (int i = 0; i < n; i++) {
    if (mount(paths[i], paths[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
      die(paths[i]);
    }
    unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(paths[i]);
    if (mount(NULL, paths[i], NULL, fl, NULL) < 0) {
      die(paths[i]);
    }
  }
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
    die("unshare (lock)");
  }
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void floor_landlock(char **paths, int n) {
  uint64_t handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM |
                     LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
  struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
  if (rs < 0) {
    die("landlock_create_ruleset");
  }
  /* The directories on the way, each listed once, and never granted;
   * nor are the paths (sorted together, for a binary search). */
  size_t cap = 64, nd = 0, nn = 0;
  char **dirs = malloc(cap * sizeof(char *));
  for (int i = 0; i < n; i++) {
    for (const char *s = paths[i]; s != NULL; s = strchr(s + 1, '/')) {
      char *d = strndup(paths[i], s == paths[i] ? 1 : (size_t)(s - paths[i]));
      int seen = 0;
      for (size_t k = 0; k < nd && !seen; k++) {
        seen = strcmp(dirs[k], d) == 0;
      }
      if (seen) {
        free(d);
        continue;
      }
      if (nd == cap) {
        dirs = realloc(dirs, (cap *= 2) * sizeof(char *));
      }
      dirs[nd++] = d;
    }
  }
  char **named = malloc((nd + (size_t)n) * sizeof(char *));
  memcpy(named, dirs, nd * sizeof(char *));
  for (int i = 0; i < n; i++) {
    named[nd + nn++] = paths[i];
  }
  nn += nd;
  qsort(named, nn, sizeof(char *), compare_strings);
  static char buf[64 * 1024];
  char child[4096];
  for (size_t k = 0; k < nd; k++) {
    int dfd = open(dirs[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
      die(dirs[k]);
    }
    ssize_t got;
    while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
      for (ssize_t off = 0; off < got;) {
        struct dirent64_raw *de = (void *)(buf + off);
        off += de->d_reclen;
        const char *name = de->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
          continue;
        }
        snprintf(child, sizeof(child), "%s/%s", strcmp(dirs[k], "/") == 0 ? "" : dirs[k], name);
        const char *key = child;
        if (de->d_type == DT_LNK || bsearch(&key, named, nn, sizeof(char *), compare_strings)) {
          continue;
        }
        int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
          continue;
        }
        struct landlock_path_beneath_attr pb = {
            .allowed_access = de->d_type == DT_DIR
                                  ? handled
                                  : (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE),
            .parent_fd = fd,
        };
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
          die(child);
        }
        close(fd);
      }
    }
    close(dfd);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
    die("landlock_restrict_self");
  }
  close(rs);
}

static void harden(void) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
  if (syscall(SYS_capget, &hdr, data) < 0) {
    die("capget");
  }
  if (data[0].effective & (1u << CAP_SETPCAP)) {
    for (unsigned long c = 0; c < 64; c++) {
      if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
        break;
      }
    }
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  memset(data, 0, sizeof(data));
  if (syscall(SYS_capset, &hdr, data) < 0) {
    die("capset");
  }
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
    die("seccomp");
  }
}

int main(int argc, char **argv) {
  int sep = 2;
  while (sep < argc && strcmp(argv[sep], "--") != 0) {
    sep++;
  }
  if (argc < 3 || sep >= argc - 1) {
    fprintf(stderr, "usage: floor mount|landlock PATH... -- CMD [ARGS...]\n");
    return 2;
  }
  char **paths = argv + 2;
  int n = sep - 2;
  if (strcmp(argv[1], "mount") == 0) {
    floor_mount(paths, n);
  } else if (strcmp(argv[1], "landlock") == 0) {
    floor_landlock(paths, n);
  } else {
    fprintf(stderr, "floor: unknown backend %s\n", argv[1]);
    return 2;
  }
  harden();
  execvp(argv[sep + 1], argv + sep + 1);
  die(argv[sep + 1]);
}
