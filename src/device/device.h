/*
 * device/ - the board's DSP as the core sees it besides executes: performance votes (perf.h),
 * VTCM sizes (vtcm.h), the platform info the device reports (platform_info.h), FastRPC shared
 * memory (shared_regions.h over fastrpc_lib.h) and a context's memRegister handles for it
 * (mem_cache.h).
 *
 * The door: what the other rooms may use of device/. device/ uses base/ and qnn/.
 */
#ifndef HTPU_DEVICE_H
#define HTPU_DEVICE_H

#include "mem_cache.h"
#include "perf.h"
#include "platform_info.h"
#include "shared_regions.h"
#include "vtcm.h"

#endif
