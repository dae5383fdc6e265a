/* dtype_map.h - QNN data types <-> htpu element types. */
#ifndef HTPU_DTYPE_MAP_H
#define HTPU_DTYPE_MAP_H

#include <stdint.h>

#include "hexagon_tpu.h"

/* Storage type of a QNN data type; HTPU_DTYPE_INVALID for types the project does not handle at
 * graph I/O (4-bit packed, strings, bf16, f64). */
htpu_dtype dtype_from_qnn(uint32_t qnn_data_type);

/* Nonzero for the UFIXED/SFIXED types, which require quantization parameters. */
int dtype_is_fixed_point(uint32_t qnn_data_type);

#endif
