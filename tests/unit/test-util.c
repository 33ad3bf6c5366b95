/* SPDX-License-Identifier: Apache-2.0 */
/* util's memory helpers: prefault() maps pages in without changing what
 * they hold, and prefault_ahead() keeps what it maps in ahead of an
 * array's use and within twice of it. Its directory listing:
 * dir_names_sorted() and dir_name_type(). */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "tmptree.h"
#include "util.h"

static size_t page(void) {
  return (size_t)sysconf(_SC_PAGESIZE);
}

/* How many of the `n` pages at `p` are resident (mincore(2)). */
static size_t resident(void *p, size_t n) {
  unsigned char v[64];
  ck_assert_uint_le(n, sizeof(v));
  ck_assert_int_eq(mincore(p, n * page(), v), 0);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    k += v[i] & 1;
  }
  return k;
}

static bool populate_supported(void) {
#ifdef MADV_POPULATE_WRITE
  void *p = mmap(NULL, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  bool ok = madvise(p, page(), MADV_POPULATE_WRITE) == 0;
  munmap(p, page());
  return ok;
#else
  return false;
#endif
}

START_TEST(test_prefault_maps_whole_pages_in) {
  if (!populate_supported()) {
    return; /* before Linux 5.14: nothing to see, and nothing promised */
  }
  size_t ps = page(), n = 16;
  char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  ck_assert_uint_eq(resident(p, n), 0);
  /* From the middle of page 2 to the middle of page 9: pages 3..8, the
   * whole ones, and no other. */
  prefault(p + 2 * ps + ps / 2, 7 * ps);
  unsigned char v[16];
  ck_assert_int_eq(mincore(p, n * ps, v), 0);
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg((v[i] & 1) == (i >= 3 && i <= 8), "page %zu resident: %d", i, v[i] & 1);
  }
  /* Less than a whole page: nothing. */
  prefault(p + 12 * ps + 1, ps);
  ck_assert_uint_eq(resident(p + 12 * ps, 2), 0);
  munmap(p, n * ps);
}
END_TEST

START_TEST(test_prefault_keeps_contents) {
  size_t ps = page(), n = 8;
  unsigned char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  /* Pages written before, and pages never touched (which read as zero). */
  for (size_t i = 0; i < 3 * ps; i++) {
    p[i] = (unsigned char)(i * 7 + 1);
  }
  prefault(p, n * ps);
  for (size_t i = 0; i < n * ps; i++) {
    ck_assert_uint_eq(p[i], i < 3 * ps ? (unsigned char)(i * 7 + 1) : 0);
  }
  /* Heap memory, the common case. */
  size_t len = 5 * ps + 123;
  unsigned char *h = xmalloc(len);
  memset(h, 0xA5, len);
  prefault(h, len);
  for (size_t i = 0; i < len; i++) {
    ck_assert_uint_eq(h[i], 0xA5);
  }
  free(h);
  munmap(p, n * ps);
}
END_TEST

/* Filling an array of a hundred pages of `size`-byte entries from `off`
 * bytes into a mapping (0: page-aligned; otherwise as malloc's are):
 * every page an entry lies on is mapped in before the entry is written,
 * by a few calls; with `last`, the entries are told by their last byte,
 * as for items of different lengths in an array of bytes. */
static void fill_ahead(size_t off, size_t size, bool last) {
  size_t ps = page();
  size_t cap = (100 * ps - off) / size; /* a hundred pages of entries */
  char *m = mmap(NULL, 100 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(m, MAP_FAILED);
  char *a = m + off;
  size_t done = 0, calls = 0, last_done = 0;
  bool populate = populate_supported();
  for (size_t n = 0; n < cap; n++) {
    if (last) {
      prefault_ahead(a, n * size + size - 1, 1, cap * size, &done);
    } else {
      prefault_ahead(a, n, size, cap, &done);
    }
    if (done != last_done) {
      calls++;
      /* Ahead of the entry about to be written, by at least a page, and
       * never more than the entries so far again (or a page), and the
       * rest of the page that ends in. */
      ck_assert_uint_ge(done, (n + 1) * size);
      size_t filled = n * size;
      ck_assert_uint_le(done, filled + (filled > ps ? filled : ps) + 2 * ps);
      last_done = done;
    }
    ck_assert_uint_ge(done, (n + 1) * size);
    ck_assert_uint_le(done, cap * size);
    char *at = a + n * size, *end = at + size - 1;
    uintptr_t first_page = (uintptr_t)at / ps, last_page = (uintptr_t)end / ps;
    if (populate && ((uintptr_t)at % ps == 0 || first_page != last_page)) {
      /* Mapped in before anything is written there. */
      ck_assert_msg(resident((char *)(last_page * ps), 1) == 1,
                    "entry %zu (size %zu, off %zu) not mapped in", n, size, off);
    }
    memset(at, 1, size);
  }
  ck_assert_uint_ge(done, cap * size - ps);
  /* Doubling: a few calls for a hundred pages, not one a page. */
  ck_assert_uint_le(calls, 9);
  ck_assert_uint_ge(calls, 6);
  if (populate) {
    ck_assert_uint_eq(resident(m, 64), 64);
  }
  /* Past what is mapped in, nothing more: n beyond cap is ignored. */
  size_t before = done;
  prefault_ahead(a, cap, size, cap, &done);
  ck_assert_uint_eq(done, before);
  munmap(m, 100 * ps);
}

START_TEST(test_prefault_ahead) {
  fill_ahead(0, 8, false);
  fill_ahead(24, 8, false);
  fill_ahead(page() - 8, 8, false);
  fill_ahead(16, 12, false);
  fill_ahead(16, 13, true);
}
END_TEST

/* Every entry but "." and "..", in strcmp order whatever the
 * filesystem's, each with its type; the descriptor left open. */
START_TEST(test_dir_names_sorted_with_types) {
  _cleanup_free_ char *d = make_tmpdir();
  make_file(d, "b.txt", "b");
  make_dir(d, "a");
  make_symlink(d, "C", "a");
  make_file(d, "a.txt", "a");
  _cleanup_free_ char *fifo = path_join(d, "p");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  size_t budget = 100, n = 0;
  bool cut = false;
  DirName *e = dir_names_sorted(fd, &budget, &cut, &n);
  const char *names[] = {"C", "a", "a.txt", "b.txt", "p"};
  const mode_t types[] = {S_IFLNK, S_IFDIR, S_IFREG, S_IFREG, S_IFIFO};
  ck_assert_uint_eq(n, 5);
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(e[i].name, names[i]);
    ck_assert_uint_eq(dir_name_type(fd, &e[i]), types[i]);
  }
  ck_assert(!cut);
  ck_assert_uint_eq(budget, 95);
  /* Left open, read to its end. */
  char rest[256] __attribute__((aligned(8)));
  ck_assert_int_eq(read_dir(fd, rest, sizeof(rest)), 0);
  dir_names_free(e, n);
  close(fd);
}
END_TEST

/* The budget: an entry each; when it runs out, the rest is not read and
 * the cut said. */
START_TEST(test_dir_names_sorted_budget) {
  _cleanup_free_ char *d = make_tmpdir();
  for (int i = 0; i < 10; i++) {
    char name[8];
    snprintf(name, sizeof(name), "f%d", i);
    make_file(d, name, "x");
  }
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  size_t budget = 4, n = 0;
  bool cut = false;
  DirName *e = dir_names_sorted(fd, &budget, &cut, &n);
  ck_assert_uint_eq(n, 4);
  ck_assert_uint_eq(budget, 0);
  ck_assert(cut);
  dir_names_free(e, n);
  close(fd);
  /* No cut reported where the caller asked for none. */
  fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  budget = 3;
  e = dir_names_sorted(fd, &budget, NULL, &n);
  ck_assert_uint_eq(n, 3);
  dir_names_free(e, n);
  close(fd);
}
END_TEST

/* A listing that gives no type (some filesystems): the type is asked of
 * the entry itself, without following a link; a gone entry has none. */
START_TEST(test_dir_name_type_without_the_listings) {
  _cleanup_free_ char *d = make_tmpdir();
  make_dir(d, "sub");
  make_symlink(d, "link", "sub");
  make_file(d, "file", "x");
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  DirName e = {(char *)"sub", DT_UNKNOWN};
  ck_assert_uint_eq(dir_name_type(fd, &e), S_IFDIR);
  e.name = (char *)"link";
  ck_assert_uint_eq(dir_name_type(fd, &e), S_IFLNK);
  e.name = (char *)"file";
  ck_assert_uint_eq(dir_name_type(fd, &e), S_IFREG);
  e.name = (char *)"gone";
  ck_assert_uint_eq(dir_name_type(fd, &e), 0);
  /* The listing's type is taken as it is. */
  e = (DirName){(char *)"file", DT_DIR};
  ck_assert_uint_eq(dir_name_type(fd, &e), S_IFDIR);
  close(fd);
}
END_TEST

static Suite *util_suite(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("prefault");
  tcase_add_test(tc, test_prefault_maps_whole_pages_in);
  tcase_add_test(tc, test_prefault_keeps_contents);
  tcase_add_test(tc, test_prefault_ahead);
  suite_add_tcase(s, tc);
  TCase *dirs = tcase_create("dir_names");
  tcase_add_unchecked_fixture(dirs, scratch_setup, scratch_teardown);
  tcase_add_test(dirs, test_dir_names_sorted_with_types);
  tcase_add_test(dirs, test_dir_names_sorted_budget);
  tcase_add_test(dirs, test_dir_name_type_without_the_listings);
  suite_add_tcase(s, dirs);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(util_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
