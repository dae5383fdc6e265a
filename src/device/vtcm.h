/* vtcm.h - VTCM sizes as QNN reports them -> bytes, and back to text for messages.
 *
 * QNN's fields are named as if they carried MB, but the graph blob info of real binaries
 * carries bytes (docs/abi.md, "VTCM units") and the device's field is unverified on a board.
 * Every VTCM figure the core reads goes through vtcm_reported_to_bytes, so the rest of the
 * core (and the public API) knows only bytes. */
#ifndef HTPU_VTCM_H
#define HTPU_VTCM_H

#include <stddef.h>
#include <stdint.h>

#define VTCM_MIB 1048576u

/* A reported VTCM size in bytes: 0 stays 0 (unknown); a value below 1 MiB is taken as MB (no
 * Hexagon has less than 1 MB of VTCM, so a byte count that small cannot be real); anything
 * else is already bytes. Cannot overflow: an MB value is below 2^20, its bytes below 2^40. */
uint64_t vtcm_reported_to_bytes(uint64_t reported);

/* "8 MB" for a whole number of MiB, else "1572864 bytes" (exact, never rounded). */
void vtcm_format(uint64_t bytes, char *buf, size_t len);

#endif
