/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's share of each backend: what `ralon run` could not avoid
 * paying even with no policy to read, no scan, no audit and no checks.
 * bench/run times it beside ralon, so the difference is ralon's own work.
 *
 *   floor mount    PATH... -- CMD [ARGS...]
 *   floor guarded  PATH... -- CMD [ARGS...]
 *   floor landlock PATH... -- CMD [ARGS...]
 *
 * mount: a user and mount namespace (uid/gid maps), / made private, each
 * PATH bound onto itself and remounted read-only (keeping the flags the
 * kernel locks), a second user and mount namespace (the same maps) to
 * lock the mounts, then CMD. No pinning of ancestors, no verification.
 *
 * guarded: the same binds in the shape of the mount backend's guard: a PID
 * namespace whose PID 1 lives until this process lets it go, CMD as this
 * process's second child (PID 2 there, started as ralon starts it, in this
 * process's memory until its execve; PID 1 shares it too, as ralon's
 * does) with a /proc of that namespace and
 * the mounts locked, and this process waiting for CMD, then ending PID 1
 * and reaping it. Three processes and one execve, as ralon and
 * `bwrap --unshare-pid` have; no watches, no checks, no socket.
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
 * Built with -DFLOOR_LIBS (and libyaml), every mode first loads the
 * libraries ralon is specified with, as ralon loads them: libyaml linked,
 * libcap opened with dlopen(3) and its symbols looked up. Two more modes
 * then measure what libraries alone cost a hook and a policy:
 *
 *   floor hook < PAYLOAD    json-c opened as ralon opens it, PAYLOAD read
 *                           from standard input and parsed; libcap is not
 *                           loaded (hook check does not load it)
 *   floor yaml FILE         FILE read and parsed by libyaml into events,
 *                           none of them kept
 *
 * and the backends' modes take `--policy FILE` before their PATHs: FILE
 * parsed so first, as any `run` must read the policy before it can know
 * what to protect (the listing of the directories on the way to each
 * PATH, which stands for a scan of the project, the modes make anyway).
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
#include <stdbool.h>
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
#include <sys/wait.h>
#include <unistd.h>

#ifdef FLOOR_LIBS
#include <dlfcn.h>
#include <yaml.h>
#endif

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

/* A user and mount namespace in which this process keeps its own uid
 * and gid (a command that saw itself as the overflow uid would find no
 * home directory, and every file owned by someone else). */
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

static void floor_binds(char **paths, int n) {
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
}

/* The copy that locks the mounts is a user namespace too, with the same
 * maps, as ralon's (and bwrap --unshare-user's) must be. */
static void floor_lock(void) {
  enter_namespaces();
}

static void floor_mount(char **paths, int n) {
  floor_binds(paths, n);
  floor_lock();
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

/* /proc is mounted before the lock, while this namespace's owner still
 * may. */
static int command(void *arg) {
  char **cmd = arg;
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
    die("mount /proc");
  }
  floor_lock();
  harden();
  execvp(cmd[0], cmd);
  /* No exit(3) in the parent's memory: stderr is unbuffered. */
  fprintf(stderr, "floor: %s: %s\n", cmd[0], strerror(errno));
  _exit(127);
}

/* PID 1 ends when its end of the lifeline is closed. It shares the
 * caller's memory, so it calls the kernel directly (errno is the
 * caller's) and ends with the raw exit, never exit(3). */
static int init_main(void *arg) {
  const int *fds = arg;
  char c;
  syscall(SYS_close, fds[1]);
  /* No handler is set, so nothing interrupts it: it returns at the
   * hang-up. */
  (void)syscall(SYS_read, fds[0], &c, 1);
  syscall(SYS_exit, 0);
  return 0;
}

static int floor_guarded(char **paths, int n, char **cmd) {
  floor_binds(paths, n);
  if (unshare(CLONE_NEWPID) < 0) {
    die("unshare (pid)");
  }
  int lifeline[2];
  if (pipe2(lifeline, O_CLOEXEC) < 0) {
    die("pipe");
  }
  /* In this process's memory, as ralon's guard starts its PID 1
   * (src/enforce/linux/pid1.c): nothing this process writes later is
   * copied for it. */
  static char init_stack[64 * 1024];
  static int init_fds[2];
  init_fds[0] = lifeline[0];
  init_fds[1] = lifeline[1];
  pid_t init = clone(init_main, init_stack + sizeof(init_stack), CLONE_VM | SIGCHLD, init_fds);
  if (init < 0) {
    die("clone (pid 1)");
  }
  close(lifeline[0]);
  /* Started as ralon starts it, sharing this process's memory until its
   * execve (clone(CLONE_VM | CLONE_VFORK), as posix_spawn(3) does). */
  static char stack[256 * 1024];
  pid_t child = clone(command, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, cmd);
  if (child < 0) {
    die("clone");
  }
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  close(lifeline[1]);
  while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#ifdef FLOOR_LIBS
static void *open_library(const char *soname, const char *const *names, size_t n) {
  void *h = dlopen(soname, RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "floor: %s\n", dlerror());
    exit(2);
  }
  for (size_t i = 0; i < n; i++) {
    if (dlsym(h, names[i]) == NULL) {
      fprintf(stderr, "floor: %s has no %s\n", soname, names[i]);
      exit(2);
    }
  }
  return h;
}

static void load_libcap(void) {
  static const char *const names[] = {"cap_clear", "cap_drop_bound", "cap_free",
                                      "cap_get_flag", "cap_get_proc", "cap_max_bits",
                                      "cap_set_proc", "cap_set_secbits", "cap_to_name"};
  open_library("libcap.so.2", names, sizeof(names) / sizeof(names[0]));
}

static int floor_hook(void) {
  static const char *const names[] = {"json_tokener_parse", "json_object_put",
                                      "json_object_object_get_ex", "json_object_get_string",
                                      "json_object_get_type"};
  void *h = open_library("libjson-c.so.5", names, sizeof(names) / sizeof(names[0]));
  void *(*parse)(const char *) = (void *(*)(const char *))dlsym(h, "json_tokener_parse");
  int (*put)(void *) = (int (*)(void *))dlsym(h, "json_object_put");
  static char buf[1 << 20];
  size_t len = 0;
  ssize_t got;
  while (len < sizeof(buf) - 1 && (got = read(0, buf + len, sizeof(buf) - 1 - len)) != 0) {
    if (got < 0 && errno != EINTR) {
      die("stdin");
    }
    len += got > 0 ? (size_t)got : 0;
  }
  buf[len] = '\0';
  void *o = parse(buf);
  if (o == NULL) {
    fprintf(stderr, "floor: the payload is not JSON\n");
    return 2;
  }
  put(o);
  return 0;
}

static int floor_yaml(const char *file) {
  FILE *f = fopen(file, "rb");
  if (f == NULL) {
    die(file);
  }
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  for (;;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&p, &e)) {
      fprintf(stderr, "floor: %s: %s\n", file, p.problem != NULL ? p.problem : "?");
      return 2;
    }
    bool end = e.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&e);
    if (end) {
      break;
    }
  }
  yaml_parser_delete(&p);
  fclose(f);
  return 0;
}
#endif

int main(int argc, char **argv) {
#ifdef FLOOR_LIBS
  /* Keeps libyaml a dependency of the program, as it is of ralon's. */
  yaml_parser_t probe;
  yaml_parser_initialize(&probe);
  yaml_parser_delete(&probe);
  if (argc == 2 && strcmp(argv[1], "hook") == 0) {
    return floor_hook();
  }
  if (argc == 3 && strcmp(argv[1], "yaml") == 0) {
    return floor_yaml(argv[2]);
  }
  load_libcap();
  if (argc > 3 && strcmp(argv[2], "--policy") == 0) {
    if (floor_yaml(argv[3]) != 0) {
      return 2;
    }
    memmove(argv + 2, argv + 4, (size_t)(argc - 4 + 1) * sizeof(char *));
    argc -= 2;
  }
#endif
  int sep = 2;
  while (sep < argc && strcmp(argv[sep], "--") != 0) {
    sep++;
  }
  if (argc < 3 || sep >= argc - 1) {
    fprintf(stderr, "usage: floor mount|guarded|landlock PATH... -- CMD [ARGS...]\n");
    return 2;
  }
  char **paths = argv + 2;
  int n = sep - 2;
  if (strcmp(argv[1], "guarded") == 0) {
    return floor_guarded(paths, n, argv + sep + 1);
  }
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
