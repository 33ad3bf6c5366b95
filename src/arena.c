/* SPDX-License-Identifier: Apache-2.0 */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

struct ArenaBlock {
  ArenaBlock *prev;
  alignas(max_align_t) unsigned char data[];
};

/* The first block's size; each next one doubles, so a policy of a
 * megabyte takes about twenty blocks. */
#define ARENA_FIRST_BLOCK 4096u

void *arena_alloc(Arena *a, size_t n) {
  size_t align = alignof(max_align_t);
  size_t start = (a->used + align - 1) & ~(align - 1);
  if (a->block == NULL || start > a->size || n > a->size - start) {
    size_t size = a->size ? a->size * 2 : ARENA_FIRST_BLOCK;
    while (size < n) {
      if (size > SIZE_MAX / 2) {
        oom();
      }
      size *= 2;
    }
    if (size > SIZE_MAX - sizeof(ArenaBlock)) {
      oom();
    }
    ArenaBlock *b = xmalloc(sizeof(ArenaBlock) + size);
    b->prev = a->block;
    a->block = b;
    a->size = size;
    start = 0;
  }
  a->used = start + n;
  return a->block->data + start;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  /* Strings need no alignment: cut from the block's end of use directly. */
  char *p;
  if (a->block != NULL && a->used <= a->size && n < a->size - a->used) {
    p = (char *)a->block->data + a->used;
    a->used += n + 1;
  } else {
    p = arena_alloc(a, n + 1);
  }
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void arena_free(Arena *a) {
  for (ArenaBlock *b = a->block; b != NULL;) {
    ArenaBlock *prev = b->prev;
    free(b);
    b = prev;
  }
  *a = (Arena){0};
}
