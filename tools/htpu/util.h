/* util.h - small helpers shared by the htpu subcommands. */
#ifndef HTPU_UTIL_H
#define HTPU_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hexagon_tpu.h"

/* ---- libpath.c ---- */

#define CLI_REFERENCE_BACKEND "libhtpu_refbackend.so"
#define CLI_REFERENCE_SYSTEM "libhtpu_refsystem.so"
/* the reference FastRPC stand-in (rpcmem_*), for --fastrpc-lib reference */
#define CLI_REFERENCE_CDSPRPC "libhtpu_refcdsprpc.so"
/* what the library dlopens for shared memory when runtime option fastrpc_lib is NULL */
#define CLI_DEFAULT_FASTRPC_LIB "libcdsprpc.so"

/* Resolves a --backend/--system-lib/--fastrpc-lib value. The word "reference" means the library `refname`
 * in $HTPU_REFERENCE_DIR when set and non-empty, else next to the running executable (the build
 * directory puts them side by side). Any other value is returned as given; NULL stays NULL
 * (the library default). Returns NULL and prints why on stderr when the executable's directory
 * cannot be found or the path does not fit in buf. */
const char *cli_resolve_lib(const char *value, const char *refname, char *buf, size_t len,
                            int *failed);

/* The backend and system library a command opens. NULL: the library default. */
typedef struct cli_libs {
  const char *backend_lib;
  const char *system_lib;
  char backend_buf[4096], system_buf[4096];
} cli_libs;

/* Resolves --backend and --system-lib together (each value as cli_resolve_lib; NULL when the
 * option was not given or the command has none). `--backend reference` without --system-lib
 * means the reference system library too: the two only work as a pair, and the default system
 * library (the board's) cannot read the reference backend's models. An explicit --system-lib
 * always wins. Returns 0, or -1 after printing why on stderr. */
int cli_resolve_libs(const char *backend_opt, const char *system_opt, cli_libs *out);

/* ---- names.c ---- */

/* "HTP", "SAVER", ... for a QNN backend id; "unknown" otherwise. */
const char *cli_backend_name(uint32_t backend_id);
/* "FLOAT_32", "UFIXED_POINT_8", ... for a raw Qnn_DataType_t; "UNKNOWN" otherwise. */
const char *cli_qnn_type_name(uint32_t qnn_data_type);
/* "2.32.0" */
void cli_format_version(htpu_version3 v, char *buf, size_t len);
/* A VTCM size: "8 MB" when a whole number of MiB (QNN's MB), else exact, "1572864 bytes"
 * (the core's messages use the same rule). */
void cli_format_vtcm(uint64_t bytes, char *buf, size_t len);

/* ---- table.c: left-aligned text columns ---- */

typedef struct cli_table {
  size_t num_cols, num_rows, cap_rows;
  char **cells; /* num_rows * num_cols, owned */
  int failed;   /* an allocation failed: printing says so instead of printing a partial table */
} cli_table;

void cli_table_init(cli_table *t, size_t num_cols);
/* Adds a row of num_cols cells; NULL cells print empty. Control characters are shown as '?'
 * so a hostile tensor name cannot break the layout or the terminal. */
void cli_table_add(cli_table *t, const char *const *cells);
/* Prints the rows, each prefixed by `indent` spaces, columns two spaces apart; the last column
 * is not padded. Returns 0, or -1 if a row could not be stored. */
int cli_table_print(const cli_table *t, FILE *f, int indent);
void cli_table_free(cli_table *t);

#endif /* HTPU_UTIL_H */
