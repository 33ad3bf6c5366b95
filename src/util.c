/* SPDX-License-Identifier: Apache-2.0 */
#include "util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#if ENABLE_NLS
bool i18n_enabled;
#endif

int error_setv(Error *err, int errnum, const char *fmt, va_list ap) {
  if (err == NULL || err->message != NULL) {
    return -1;
  }
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0) {
    oom();
  }
  err->errnum = errnum;
  err->message = msg;
  return -1;
}

int error_set(Error *err, int errnum, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_setv(err, errnum, fmt, ap);
  va_end(ap);
  return -1;
}

void error_clear(Error *err) {
  if (err == NULL) {
    return;
  }
  free(err->message);
  err->message = NULL;
  err->errnum = 0;
  err->exit_status = 0;
}

int exit_status_exec(int errnum) {
  return errnum == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
}

int error_exec(Error *err, int errnum, const char *program) {
  if (err == NULL || err->message != NULL) {
    return -1;
  }
  error_set(err, errnum, _("failed to run `%s`: %s"), program, strerror(errnum));
  err->exit_status = exit_status_exec(errnum);
  return -1;
}

void oom(void) {
  static const char msg[] = "ralon: out of memory\n";
  (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
  _exit(EXIT_ERROR);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) {
    oom();
  }
  return p;
}

size_t page_size(void) {
  static size_t page;
  if (page == 0) {
    long ps = sysconf(_SC_PAGESIZE);
    page = ps > 0 ? (size_t)ps : 4096;
  }
  return page;
}

void prefault(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  uintptr_t page = page_size();
  uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)p + n) & ~(page - 1);
  if (end > start) {
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
  }
#else
  (void)p;
  (void)n;
#endif
}

void prefault_ahead_step(void *array, size_t n, size_t size, size_t cap, size_t *done) {
  size_t at = n * size, total = cap * size;
  if (at + size <= *done || at >= total) {
    return;
  }
  size_t page = page_size();
  size_t more = at > page ? at : page;
  size_t upto = total - at < more ? total : at + more;
  /* From the page entry `n` starts on (an entry may begin before *done
   * and end past it) to a page boundary: prefault() maps whole pages
   * only, and the next call starts where this one ends, so a page across
   * that end would be mapped in by neither (one fault a call, where an
   * array is not page-aligned, as malloc's are not). The pages the array
   * starts and ends in the middle of are the process's memory as a
   * whole (a mapping is made of whole pages). */
  uintptr_t base = (uintptr_t)array;
  uintptr_t from = (base + at) & ~(uintptr_t)(page - 1);
  uintptr_t end = (base + upto + page - 1) & ~(uintptr_t)(page - 1);
  prefault((void *)from, end - from);
  *done = end - base < total ? end - base : total;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p == NULL) {
    oom();
  }
  return p;
}

void *xreallocarray(void *p, size_t n, size_t size) {
  void *q = reallocarray(p, n ? n : 1, size ? size : 1);
  if (q == NULL) {
    oom();
  }
  return q;
}

char *xstrdup(const char *s) {
  char *p = strdup(s);
  if (p == NULL) {
    oom();
  }
  return p;
}

char *xstrndup(const char *s, size_t n) {
  char *p = strndup(s, n);
  if (p == NULL) {
    oom();
  }
  return p;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  char *s = NULL;
  va_start(ap, fmt);
  int r = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (r < 0) {
    oom();
  }
  return s;
}

void strings_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i]);
  }
  free(v);
}

int strings_compare(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void *grow_array(void *array_ptr, size_t *n, size_t *cap, size_t size) {
  void **array = array_ptr;
  if (*n >= *cap) {
    size_t ncap = *cap ? *cap * 2 : 8;
    if (ncap < *cap) {
      oom();
    }
    *array = xreallocarray(*array, ncap, size);
    *cap = ncap;
  }
  char *slot = (char *)*array + *n * size;
  memset(slot, 0, size);
  (*n)++;
  return slot;
}

bool streq(const char *a, const char *b) {
  return strcmp(a, b) == 0;
}

locale_t utf8_locale(void) {
  static locale_t loc;
  if (loc == (locale_t)0) {
    loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  }
  return loc;
}

size_t utf8_char_length(const unsigned char *s, size_t len) {
  unsigned char c = s[0];
  size_t n;
  uint32_t cp;
  if (c < 0x80) {
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    n = 1;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 2;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len <= n) {
    return 0;
  }
  for (size_t k = 1; k <= n; k++) {
    if ((s[k] & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n + 1;
}

size_t utf8_invalid_offset(const void *s, size_t len) {
  const unsigned char *u = s;
  size_t i = 0;
  while (i < len) {
    size_t n = utf8_char_length(u + i, len - i);
    if (n == 0) {
      return i;
    }
    i += n;
  }
  return len;
}

bool startswith(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

int read_fd_limited(int fd, size_t max, char **ret, size_t *ret_len) {
  struct stat st;
  return read_fd_limited_stat(fd, fstat(fd, &st) == 0 ? &st : NULL, max, ret, ret_len);
}

/* Reads `fd` to its end into a buffer of `cap` bytes, grown when full:
 * doubled, or (`to_max`) made max + 1 at once. `sized`: `cap` is what
 * fstat(2) says the file holds, so the buffer is written end to end. */
static int read_fd_grow(int fd, size_t cap, bool to_max, bool sized, size_t max, char **ret,
                        size_t *ret_len) {
  size_t len = 0;
  _cleanup_free_ char *buf = xmalloc(cap + 1);
  if (sized) {
    prefault(buf, cap);
  }
  for (;;) {
    if (len == cap) {
      if (cap > max) {
        return -EFBIG;
      }
      cap = to_max ? max + 1 : cap * 2;
      buf = xreallocarray(buf, cap + 1, 1);
    }
    ssize_t r = read(fd, buf + len, cap - len);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -errno;
    }
    if (r == 0) {
      break;
    }
    len += (size_t)r;
    if (len > max) {
      return -EFBIG;
    }
  }
  buf[len] = '\0';
  *ret = steal_pointer(&buf);
  *ret_len = len;
  return 0;
}

int read_fd_limited_stat(int fd, const struct stat *st, size_t max, char **ret, size_t *ret_len) {
  size_t cap = 4096;
  bool sized = st != NULL && S_ISREG(st->st_mode) && st->st_size > 0;
  if (sized) {
    if ((uintmax_t)st->st_size > max) {
      return -EFBIG;
    }
    cap = (size_t)st->st_size + 1;
  }
  return read_fd_grow(fd, cap, false, sized, max, ret, ret_len);
}

int read_fd_limited_stream(int fd, size_t first, size_t max, char **ret, size_t *ret_len) {
  return read_fd_grow(fd, first, true, false, max, ret, ret_len);
}

static long long ms_since(const struct timespec *t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

size_t drain_fd(int fd, size_t max, int idle_ms, int total_ms) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char buf[64 * 1024];
  size_t total = 0;
  while (total < max) {
    long long left = total_ms - ms_since(&start);
    if (left <= 0) {
      break;
    }
    /* Waited for, so that a writer that keeps its end open without
     * writing holds us no longer than idle_ms. */
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int p = poll(&pfd, 1, (int)(left < idle_ms ? left : idle_ms));
    if (p < 0 && errno == EINTR) {
      continue;
    }
    if (p <= 0) {
      break;
    }
    size_t want = max - total < sizeof(buf) ? max - total : sizeof(buf);
    ssize_t r = read(fd, buf, want);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
      continue;
    }
    if (r <= 0) {
      break;
    }
    total += (size_t)r;
  }
  return total;
}

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, data, len);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -errno;
    }
    data += w;
    len -= (size_t)w;
  }
  return 0;
}

int write_file_atomic(const char *dir, const char *name, const char *data, size_t len,
                      bool replace) {
  mode_t mask = umask(0);
  umask(mask);
  return write_file_atomic_mode(dir, name, data, len, replace, 0666 & ~mask);
}

int write_file_atomic_mode(const char *dir, const char *name, const char *data, size_t len,
                           bool replace, mode_t mode) {
  _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    return -errno;
  }
  _cleanup_free_ char *tmp = xasprintf("%s/.%s.XXXXXX", dir, name);
  _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    return -errno;
  }
  const char *tmpname = strrchr(tmp, '/') + 1;
  int r = write_all(fd, data, len);
  if (r == 0 && fchmod(fd, mode) < 0) {
    r = -errno;
  }
  if (r == 0 && fsync(fd) < 0) {
    r = -errno;
  }
  if (r == 0) {
    if (replace) {
      r = renameat(dfd, tmpname, dfd, name) < 0 ? -errno : 0;
    } else {
      r = renameat2(dfd, tmpname, dfd, name, RENAME_NOREPLACE) < 0 ? -errno : 0;
      if (r == -EINVAL || r == -ENOSYS) {
        /* A filesystem without RENAME_NOREPLACE: link(2) refuses to
         * replace, too. */
        r = linkat(dfd, tmpname, dfd, name, 0) < 0 ? -errno : 0;
        if (r == 0) {
          (void)unlinkat(dfd, tmpname, 0);
        }
      }
    }
  }
  if (r < 0) {
    (void)unlinkat(dfd, tmpname, 0);
    return r;
  }
  (void)fsync(dfd);
  return 0;
}

ssize_t read_dir(int fd, void *buf, size_t size) {
  return (ssize_t)syscall(SYS_getdents64, fd, buf, size);
}

const struct dirent64 *dir_reader_next(DirReader *r) {
  if (r->off >= r->got) {
    r->got = read_dir(r->fd, r->buf, r->size);
    r->off = 0;
    if (r->got <= 0) {
      if (r->got == 0) {
        errno = 0;
      }
      return NULL;
    }
  }
  const struct dirent64 *de = (const void *)(r->buf + r->off);
  r->off += de->d_reclen;
  return de;
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

void close_fds(int *fds, size_t n) {
  int saved = errno;
  if (n > 1) {
    qsort(fds, n, sizeof(int), compare_ints);
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && fds[j] == fds[j - 1] + 1) {
      j++;
    }
#if defined(SYS_close_range)
    if (j - i > 1 && syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0u) == 0) {
      i = j;
      continue;
    }
#endif
    /* One descriptor, or a kernel (or seccomp filter) without close_range. */
    for (; i < j; i++) {
      (void)close(fds[i]);
    }
  }
  errno = saved;
}

char *read_text_file(const char *path, size_t max) {
  return read_text_file_at(AT_FDCWD, path, max);
}

char *read_text_file_at(int dirfd, const char *path, size_t max) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return NULL;
  }
  char *text = NULL;
  size_t len = 0;
  if (read_fd_limited(fd, max, &text, &len) < 0) {
    text = NULL;
  }
  close(fd);
  return text;
}

static int compare_dir_names(const void *a, const void *b) {
  return strcmp(((const DirName *)a)->name, ((const DirName *)b)->name);
}

DirName *dir_names_sorted(int fd, size_t *budget, bool *ret_cut, size_t *ret_n) {
  DirName *v = NULL;
  size_t n = 0, cap = 0;
  char buf[32768] __attribute__((aligned(__alignof__(struct dirent64))));
  DirReader r = {.fd = fd, .buf = buf, .size = sizeof(buf)};
  const struct dirent64 *de;
  while ((de = dir_reader_next(&r)) != NULL) {
    if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
      continue;
    }
    if (*budget == 0) {
      if (ret_cut != NULL) {
        *ret_cut = true;
      }
      break;
    }
    (*budget)--;
    *(DirName *)grow_array(&v, &n, &cap, sizeof(DirName)) =
        (DirName){xstrdup(de->d_name), de->d_type};
  }
  if (n > 1) {
    qsort(v, n, sizeof(DirName), compare_dir_names);
  }
  *ret_n = n;
  return v;
}

void dir_names_free(DirName *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].name);
  }
  free(v);
}

mode_t dir_name_type(int dfd, const DirName *e) {
  if (e->type != DT_UNKNOWN) {
    return DTTOIF(e->type);
  }
  struct stat st;
  return fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode & S_IFMT : 0;
}
