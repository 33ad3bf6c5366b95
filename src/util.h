/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers every unit uses: gettext, cleanup attributes, allocation,
 * and the error value that library-style functions hand back to main. */
#pragma once

#include <dirent.h>

#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#if ENABLE_NLS
#include <libintl.h>
/* Off in the C locales, where every message is the msgid: gettext would
 * still look for catalogs and read locale.alias, on every `hook check`. */
extern bool i18n_enabled;
#define _(s) (i18n_enabled ? gettext(s) : (s))
#define P_(s, p, n) (i18n_enabled ? ngettext(s, p, n) : ((n) == 1 ? (s) : (p)))
#else
#define _(s) (s)
#define P_(s, p, n) ((n) == 1 ? (s) : (p))
#endif
/* Marks a string for extraction without translating it where it stands. */
#define N_(s) (s)

#define ATTR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ATTR_NORETURN __attribute__((noreturn))
#define ATTR_WUR __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Exit codes shared by every command (ARCHITECTURE.md §3). */
enum {
  EXIT_OK = 0,
  EXIT_PROTECTED = 1, /* check: something is protected; dry-run: cannot enforce */
  EXIT_ERROR = 2,
  /* `run` (and `pause -- CMD`): the command was found but could not be
   * executed, or was not found, as env(1), timeout(1) and the shells say. */
  EXIT_CANNOT_EXECUTE = 126,
  EXIT_NOT_FOUND = 127,
};

/* The error a library-style function returns through its last argument.
 * `message` is complete and translated ("FILE:LINE:COL: what was expected");
 * `errnum` is the errno behind it, or 0. Only main turns it into an exit. */
typedef struct {
  int errnum;
  char *message;
  /* What ralon exits with instead of EXIT_ERROR, or 0: EXIT_NOT_FOUND or
   * EXIT_CANNOT_EXECUTE when the command `run` starts could not be run
   * (error_exec()). */
  int exit_status;
} Error;

/* Sets *err (when err is not NULL) and returns -1, so callers can write
 * `return error_set(err, errno, _("cannot open %s"), path);`. The first
 * error set wins; later ones are dropped. */
int error_set(Error *err, int errnum, const char *fmt, ...) ATTR_PRINTF(3, 4);
int error_setv(Error *err, int errnum, const char *fmt, va_list ap) ATTR_PRINTF(3, 0);
void error_clear(Error *err);
/* Sets *err to "failed to run `PROGRAM`: STRERROR(errnum)" with the exit
 * status env(1) gives then: 127 for ENOENT, 126 otherwise. Returns -1. */
int error_exec(Error *err, int errnum, const char *program);
/* The exit status that error: EXIT_NOT_FOUND or EXIT_CANNOT_EXECUTE. */
int exit_status_exec(int errnum);

/* Allocation that cannot fail: an out-of-memory ralon has nothing better
 * to do than stop, before it restricts or executes anything. */
void *xmalloc(size_t n) __attribute__((malloc, alloc_size(1)));
void *xcalloc(size_t n, size_t size) __attribute__((malloc, alloc_size(1, 2)));
void *xreallocarray(void *p, size_t n, size_t size) __attribute__((alloc_size(2, 3)));
char *xstrdup(const char *s) __attribute__((malloc, nonnull));
char *xstrndup(const char *s, size_t n) __attribute__((malloc, nonnull));
char *xasprintf(const char *fmt, ...) ATTR_PRINTF(1, 2) __attribute__((malloc));
ATTR_NORETURN void oom(void);

/* The system's page size (sysconf(3), asked once). */
size_t page_size(void);
/* Maps in the whole pages of [p, p + n), writable, in one system call
 * (MADV_POPULATE_WRITE), for memory about to be written from end to end:
 * a page fault per page costs more, by far on a virtual machine. Nothing
 * changes in what the memory holds; without kernel support (before Linux
 * 5.14) the pages are faulted in one by one when touched, as without it. */
void prefault(void *p, size_t n);
/* prefault() for an array of `cap` entries of `size` bytes filled from its
 * start, called before entry `n` is written: once an entry reaches past
 * what is mapped in (*done bytes), the page it starts on and as much
 * again as is filled are (at least a page, and on to the end of the page
 * that ends in), so what is mapped in and not used stays below what is,
 * plus a page. For items of different lengths, an array of bytes: called
 * for the last byte of each. */
void prefault_ahead_step(void *array, size_t n, size_t size, size_t cap, size_t *done);
/* prefault_ahead_step() where entry `n` is past what is mapped in: called
 * once for every entry of an array of thousands. */
static inline void prefault_ahead(void *array, size_t n, size_t size, size_t cap, size_t *done) {
  /* Mostly nothing to do: told without a call. */
  if (n * size + size > *done) {
    prefault_ahead_step(array, n, size, cap, done);
  }
}

/* Grows *array (holding *n of size `size`) by one element and returns a
 * pointer to the new, zeroed element. Capacity doubles. */
void *grow_array(void *array_ptr, size_t *n, size_t *cap, size_t size);

/* Frees the `n` strings of `v`, and `v`. */
void strings_free(char **v, size_t n);

/* qsort(3)/bsearch(3) comparison of two `char *` elements, by strcmp. */
int strings_compare(const void *a, const void *b);

static inline void freep(void *p) {
  free(*(void **)p);
}
static inline void closep(int *fd) {
  if (*fd >= 0) {
    int saved = errno;
    (void)close(*fd);
    errno = saved;
  }
}
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_error_ _cleanup_(error_clear)

/* Hands ownership out of a cleanup variable. */
#define steal_pointer(pp)               \
  ({                                    \
    __typeof__(*(pp)) _tmp_ = *(pp);    \
    *(pp) = NULL;                       \
    _tmp_;                              \
  })
#define steal_fd(fdp)      \
  ({                       \
    int _tmp_fd_ = *(fdp); \
    *(fdp) = -1;           \
    _tmp_fd_;              \
  })

bool streq(const char *a, const char *b);
bool startswith(const char *s, const char *prefix);

/* The length of the well-formed UTF-8 character at `s` (1 to 4 bytes; no
 * overlong form, no surrogate, nothing above U+10FFFF), or 0 when the
 * bytes there are not one. `len` (> 0) bytes may be read. */
size_t utf8_char_length(const unsigned char *s, size_t len);
/* Offset of the first byte of `s` that is not part of well-formed UTF-8,
 * or `len` when there is none. */
size_t utf8_invalid_offset(const void *s, size_t len);
/* C.UTF-8's LC_CTYPE, for uselocale(3) where UTF-8 must be read whatever
 * the process's locale (ralon loads none in a C locale): loaded the first
 * time it is asked for (loading reads locale.alias: not for every
 * `check`), never freed. (locale_t)0 where the C library has none. */
locale_t utf8_locale(void);

/* Reads a whole regular file through an open descriptor, refusing more than
 * `max` bytes. The buffer is NUL-terminated; *ret_len excludes the NUL. */
int read_fd_limited(int fd, size_t max, char **ret, size_t *ret_len);
/* The same, with the fstat(2) of `fd` the caller has made (NULL: none). */
int read_fd_limited_stat(int fd, const struct stat *st, size_t max, char **ret, size_t *ret_len);
/* The same, for a stream (a pipe) that may be large: read into `first`
 * bytes, then, if that fills, into one buffer of the whole limit, rather
 * than doubling (which faults in and copies about twice the pages). */
int read_fd_limited_stream(int fd, size_t first, size_t max, char **ret, size_t *ret_len);
/* Reads what is left of `fd` and throws it away, so that the writer at
 * the other end of a pipe sees its write succeed: up to end of file, `max`
 * bytes, `idle_ms` milliseconds with nothing to read or `total_ms` in all,
 * whichever comes first. Returns the bytes read; whatever ended it early
 * is no error of the caller's. */
size_t drain_fd(int fd, size_t max, int idle_ms, int total_ms);
/* The whole text of the file at `path` (at most `max` bytes, caller
 * frees), or NULL when it cannot be read. */
char *read_text_file(const char *path, size_t max);
/* The same, for `path` relative to the directory `dirfd` (openat(2)). */
char *read_text_file_at(int dirfd, const char *path, size_t max);

/* Writes `len` bytes as `dir/name` through a temporary file in `dir` that
 * is renamed into place, so the file is either whole or untouched. Without
 * `replace`, an existing file is left alone and -EEXIST returned. The new
 * file gets mode 0666 less the umask. Returns 0 or -errno. */
int write_file_atomic(const char *dir, const char *name, const char *data, size_t len,
                      bool replace);
/* The same, giving the new file exactly `mode` (not filtered by the
 * umask): for replacing a file while keeping its permission bits. */
int write_file_atomic_mode(const char *dir, const char *name, const char *data, size_t len,
                           bool replace, mode_t mode);

/* getdents64(2) (which glibc wraps only since 2.30): fills `buf` with
 * struct dirent64 records and returns the bytes used, 0 at the end of the
 * directory, or -1 with errno. Where readdir(3) would cost an fstat and
 * two fcntl calls per directory opened with fdopendir(3). */
ssize_t read_dir(int fd, void *buf, size_t size);
/* An entry of a directory: its name, and its type as the listing gives
 * it (a DT_* value; DT_UNKNOWN where the filesystem does not say). */
typedef struct {
  char *name;
  unsigned char type;
} DirName;

/* The entries of the directory open at `fd` but "." and "..", sorted by
 * name (strcmp), for a walk that reports in an order the filesystem does
 * not decide; `fd` is read from where it stands (read_dir()) and left
 * open. Each entry takes one from *budget; when it runs out the rest are
 * not read and *ret_cut is set (ret_cut may be NULL). Free with
 * dir_names_free(). */
DirName *dir_names_sorted(int fd, size_t *budget, bool *ret_cut, size_t *ret_n);
void dir_names_free(DirName *v, size_t n);
/* The file type (the S_IFMT bits) of the entry `e` of the directory open
 * at `dfd`: as the listing gave it, or, where it did not, from
 * fstatat(2) without following a symbolic link; 0 when the entry is gone. */
mode_t dir_name_type(int dfd, const DirName *e);

/* The entries of the directory open at `fd`, one at a time, as readdir(3)
 * gives them, from a buffer of the caller's (read_dir()). */
typedef struct {
  int fd;
  char *buf;
  size_t size;
  ssize_t got, off;
} DirReader;

/* The next entry ("." and ".." included), or NULL: at the end with errno
 * 0, on an error with errno set. */
const struct dirent64 *dir_reader_next(DirReader *r);

/* Closes the `n` descriptors in `fds` (reordering the array): one
 * close_range(2) for each run of consecutive numbers, close(2) where that
 * is not available. Only the numbers listed are closed. */
void close_fds(int *fds, size_t n);
