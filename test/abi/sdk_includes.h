/* The SDK headers check_abi.c compares against (include path: <SDK>/include/QNN).
 * The per-backend headers define the backend ids; a partial header set (no such directory)
 * still compiles, and then check_abi reports those ids as undefined by the SDK. */
#include "QnnInterface.h"
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
#if __has_include("Saver/QnnSaverCommon.h")
#include "Saver/QnnSaverCommon.h"
#endif
