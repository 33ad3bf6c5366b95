/* SPDX-License-Identifier: Apache-2.0 */
/* An arena: many small allocations that live and die together (a policy's
 * pattern strings, a matcher's segments), carved from a few large blocks
 * and freed at once, instead of a malloc(3) and a free(3) each. */
#pragma once

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;

typedef struct {
  ArenaBlock *block; /* the newest block, which the next allocation is cut from */
  size_t used;       /* bytes of it handed out */
  size_t size;       /* bytes it holds */
} Arena;

/* `n` bytes aligned for any object, uninitialised; lives until
 * arena_free(). Never NULL (out of memory ends ralon). */
void *arena_alloc(Arena *a, size_t n) __attribute__((malloc, alloc_size(2)));
/* A NUL-terminated copy of the `n` bytes at `s`. */
char *arena_strndup(Arena *a, const char *s, size_t n);
/* Frees every block; the arena can be used again. */
void arena_free(Arena *a);
