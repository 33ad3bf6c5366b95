/* SPDX-License-Identifier: Apache-2.0 */
/* The code an agent is asked to work on: writable. */
#include <stdio.h>

int main(void) {
  puts("hello");
  return 0;
}
