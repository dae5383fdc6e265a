/* memory.h - what a model costs in memory, for `htpu info` (the binary's figures and the load
 * estimate) and `htpu run --stats` (the resident set around the load, and what the loaded
 * context reports). */
#ifndef HTPU_MEMORY_H
#define HTPU_MEMORY_H

#include <stdint.h>

#include "hexagon_tpu.h"
#include "json.h"

/* This process's resident set in bytes (/proc/self/statm), 0 when unreadable. */
uint64_t cli_rss_bytes(void);
/* "1.5 MB", "512 B" (decimal units: MB = 10^6 bytes). */
void cli_format_bytes(uint64_t n, char *buf, size_t len);

/* One graph's figures as a line ("memory (blob info v2): I/O 64 B, op data 240 B, ..."), or ""
 * when the binary reports none. */
void cli_graph_memory_line(const htpu_graph_memory *m, char *buf, size_t len);
/* The same as a JSON object "memory" inside a graph. */
void cli_graph_memory_json(cli_json *j, const htpu_graph_memory *m);

/* The load of a model measured: resident set before and after, the estimate, what the context
 * reports. Printed by `htpu run --stats`. */
typedef struct cli_load_memory {
  uint64_t estimate, rss_before, rss_after;
  htpu_context_memory ctx;
  int ctx_rc; /* htpu_context_get_memory's answer */
} cli_load_memory;
int cli_load_memory_print(const cli_load_memory *m);
void cli_load_memory_json(cli_json *j, const cli_load_memory *m);

#endif
