/* The SDK headers check_abi.c compares against (include path: <SDK>/include/QNN).
 * The per-backend headers define the backend ids; a partial header set (no such directory)
 * still compiles, and then check_abi reports those ids as undefined by the SDK. The HTP
 * headers declare the device-info extension, memory descriptor, device config, performance
 * infrastructure, graph blob info and context custom config that qnn_device_abi.h /
 * qnn_htp_abi.h mirror; without
 * them those structs are reported as skipped and their values as undefined by the SDK.
 * QnnProfile.h comes with QnnInterface.h; HTP/QnnHtpProfile.h holds the HTP event ids and
 * level, System/QnnSystemProfile.h (System API 1.5 on) the profile serialization. */
#include <stdbool.h>
#include "QnnInterface.h"
#include "QnnDevice.h"
#include "QnnMem.h"
#include "QnnProperty.h"
#include "System/QnnSystemInterface.h"
#include "System/QnnSystemContext.h"
#if __has_include("CPU/QnnCpuCommon.h")
#include "CPU/QnnCpuCommon.h"
#endif
#if __has_include("GPU/QnnGpuCommon.h")
#include "GPU/QnnGpuCommon.h"
#endif
#if __has_include("DSP/QnnDspCommon.h")
#include "DSP/QnnDspCommon.h"
#endif
#if __has_include("HTP/QnnHtpCommon.h")
#include "HTP/QnnHtpCommon.h"
#endif
#if __has_include("HTP/QnnHtpDevice.h")
#include "HTP/QnnHtpDevice.h" /* includes HTP/QnnHtpPerfInfrastructure.h */
#endif
#if __has_include("HTP/QnnHtpPerfInfrastructure.h")
#include "HTP/QnnHtpPerfInfrastructure.h"
#endif
#if __has_include("HTP/QnnHtpMem.h")
#include "HTP/QnnHtpMem.h"
#endif
#if __has_include("HTP/QnnHtpContext.h")
#include "HTP/QnnHtpContext.h"
#endif
#if __has_include("HTP/QnnHtpSystemContext.h")
#include "HTP/QnnHtpSystemContext.h"
#endif
#if __has_include("HTP/QnnHtpProfile.h")
#include "HTP/QnnHtpProfile.h"
#endif
#if __has_include("System/QnnSystemProfile.h")
#include "System/QnnSystemProfile.h"
#endif
#if __has_include("Saver/QnnSaverCommon.h")
#include "Saver/QnnSaverCommon.h"
#endif
