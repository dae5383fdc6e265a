/* load_report.h - how a loaded model holds its binary and what its load gave QNN
 * (htpu_context_load_info), for `htpu load` and `htpu run --stats`. */
#ifndef HTPU_LOAD_REPORT_H
#define HTPU_LOAD_REPORT_H

#include "hexagon_tpu.h"
#include "json.h"

/* Lines, each starting with `indent`: the binary (mapped, copied or lent, and why), the
 * graphs deserialized, the memory hint, the spill-fill buffer and its group, the load time. */
void cli_load_info_print(const htpu_context_load_info *li, const char *indent);
/* The same as a JSON object `key`. */
void cli_load_info_json(cli_json *j, const char *key, const htpu_context_load_info *li);

#endif
