/* load_report.h - how a loaded model holds its binary and what its load gave QNN
 * (htpu_context_load_info), for `htpu load` and `htpu run --stats`. */
#ifndef HTPU_LOAD_REPORT_H
#define HTPU_LOAD_REPORT_H

#include "hexagon_tpu.h"
#include "json.h"

/* Lines, each starting with `indent`: the binary (mapped, copied or lent, and why), the
 * graphs deserialized, the memory hint, the spill-fill buffer and its group, the load time. */
void cli_load_info_print(const htpu_context_load_info *li, const char *indent);
/* A spill-fill note (htpu_runtime_info, htpu_context_load_info) naming htpu's option
 * (--share-spill-fill) where the library names its C one, in buf (len bytes). */
const char *cli_spill_fill_note(const char *note, char *buf, size_t len);
/* A load's failure message naming htpu's --graph where the library names its graph option
 * ("the graph option"), in buf (len bytes; HTPU_ERROR_MAX holds any message whole). */
const char *cli_graph_option_note(const char *msg, char *buf, size_t len);
/* The load info as a JSON object `key`. */
void cli_load_info_json(cli_json *j, const char *key, const htpu_context_load_info *li);

#endif
