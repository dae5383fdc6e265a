/*
 * vec.h - the one growable array of the core: a `T *items` with a count and a capacity beside
 * it, grown by doubling. The caller keeps its own lock and its own element type.
 */
#ifndef HTPU_VEC_H
#define HTPU_VEC_H

#include <stddef.h>

/* Makes room for one more element in the array at `itemsp` (the address of a `T *`, whose
 * elements are elem_size bytes) that holds n of *cap: when it is full, reallocates it to twice
 * its capacity (`first` elements when it has none) and updates *cap. Returns 0 when there is
 * room, -1 when out of memory (the array and *cap unchanged). */
int vec_reserve(void *itemsp, size_t *cap, size_t n, size_t elem_size, size_t first);

#endif
