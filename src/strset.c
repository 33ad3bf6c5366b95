/* SPDX-License-Identifier: Apache-2.0 */
#include "strset.h"

#include <string.h>

#include "util.h"

uint64_t strset_probes;

static size_t hash_bytes(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) {
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  }
  return (size_t)(h ^ (h >> 29));
}

/* The slot holding the `len` bytes at `s`, or the empty one where they
 * would go. */
static size_t find_slot(const StrSet *set, const char *s, size_t len) {
  size_t mask = set->size - 1;
  for (size_t i = hash_bytes(s, len) & mask;; i = (i + 1) & mask) {
    strset_probes++;
    if (set->slots[i] == NULL ||
        (set->lens[i] == len && memcmp(set->slots[i], s, len) == 0)) {
      return i;
    }
  }
}

bool strset_add(StrSet *set, const char *s) {
  size_t len = strlen(s);
  /* At most half full: a lookup probes about two slots. */
  if (2 * (set->n + 1) > set->size) {
    StrSet bigger = {.size = set->size ? 2 * set->size : 16};
    bigger.slots = xcalloc(bigger.size, sizeof(char *));
    bigger.lens = xcalloc(bigger.size, sizeof(size_t));
    for (size_t i = 0; i < set->size; i++) {
      if (set->slots[i] != NULL) {
        size_t k = find_slot(&bigger, set->slots[i], set->lens[i]);
        bigger.slots[k] = set->slots[i];
        bigger.lens[k] = set->lens[i];
      }
    }
    bigger.n = set->n;
    strset_clear(set);
    *set = bigger;
  }
  size_t k = find_slot(set, s, len);
  if (set->slots[k] != NULL) {
    return false;
  }
  set->slots[k] = s;
  set->lens[k] = len;
  set->n++;
  return true;
}

bool strset_has(const StrSet *set, const char *s, size_t len) {
  return set->size != 0 && set->slots[find_slot(set, s, len)] != NULL;
}

void strset_clear(StrSet *set) {
  free(set->slots);
  free(set->lens);
  *set = (StrSet){0};
}
