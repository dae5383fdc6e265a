/* info_source.h - `htpu info`'s section on an ONNX EPContext model (htpu_model_source): the
 * file's identity, metadata, class names and EPContext nodes, as text or JSON. */
#ifndef HTPU_INFO_SOURCE_H
#define HTPU_INFO_SOURCE_H

#include "hexagon_tpu.h"
#include "json.h"

/* Text: a table after the binary's facts. Returns 0, or -1 when writing failed. */
int info_source_print(const htpu_model_source *s);
/* JSON: the "source" object (schema htpu.info/2, docs/htpu.md). */
void info_source_json(cli_json *j, const htpu_model_source *s);

#endif
