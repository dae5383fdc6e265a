/*
 * platform_info.h - the facts a QNN device platform info gives: the device's own (runtime.c,
 * for the compatibility checks) or the one a context binary records (introspect.c).
 */
#ifndef HTPU_PLATFORM_INFO_H
#define HTPU_PLATFORM_INFO_H

#include <stdint.h>

/* DSP arch, SoC model and VTCM (in bytes, vtcm_reported_to_bytes) from the HTP extension of a
 * platform info's first device; fields it cannot find are left as they are. */
struct qnn_device_platform_info;
void platform_info_read(const struct qnn_device_platform_info *p, uint32_t *arch,
                        uint32_t *soc_model, uint64_t *vtcm_bytes);

#endif
