/* SPDX-License-Identifier: Apache-2.0 */
/* A set of strings, by hash: one lookup where a pass over a list would
 * compare with each (which, done once per item of another list, grows
 * with the square of a policy's size). It borrows the strings it holds:
 * they must outlive it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char **slots; /* NULL: empty */
  size_t *lens;
  size_t size; /* a power of two, or 0 */
  size_t n;
} StrSet;

/* Slots probed by every set so far: what the tests hold the growth of,
 * never a time. */
extern uint64_t strset_probes;

/* Adds `s` (borrowed); false when it was there already. */
bool strset_add(StrSet *set, const char *s);
/* Whether the `len` bytes at `s` are one of the strings. */
bool strset_has(const StrSet *set, const char *s, size_t len);
void strset_clear(StrSet *set);
