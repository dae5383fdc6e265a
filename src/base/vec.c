/* vec.c - growing the core's arrays (vec.h). */
#include "vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_reserve(void *itemsp, size_t *cap, size_t n, size_t elem_size, size_t first) {
  if (n < *cap) return 0;
  size_t want = *cap ? *cap * 2 : first;
  if (want < *cap || want > SIZE_MAX / elem_size) return -1;
  /* The pointer is copied in and out rather than read through a void **, which would alias
   * the caller's T *. */
  void *items;
  memcpy(&items, itemsp, sizeof items);
  void *grown = realloc(items, want * elem_size);
  if (!grown) return -1;
  memcpy(itemsp, &grown, sizeof grown);
  *cap = want;
  return 0;
}
