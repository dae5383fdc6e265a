/* errors.c - errorGetMessage: a static message per QNN error code; the NOT_SUPPORTED answer of
 * every table slot the backend does not implement. */
#include "rb_internal.h"

qnn_error_t rb_not_supported(void) { return QNN_COMMON_ERROR_NOT_SUPPORTED; }

const char *rb_error_text(uint32_t code) {
  switch (code) {
    case QNN_SUCCESS: return "success";
    case QNN_COMMON_ERROR_NOT_SUPPORTED: return "API or feature not supported by this backend";
    case QNN_COMMON_ERROR_MEM_ALLOC: return "memory allocation failed";
    case QNN_COMMON_ERROR_SYSTEM: return "system error";
    case QNN_COMMON_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED: return "operation not permitted";
    case QNN_COMMON_ERROR_PLATFORM_NOT_SUPPORTED: return "platform not supported";
    case QNN_COMMON_ERROR_SYSTEM_COMMUNICATION:
      return "communication with the DSP failed; subsystem restart recovered";
    case QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES: return "incompatible QNN libraries loaded";
    case QNN_COMMON_ERROR_LOADING_BINARIES: return "failed to load QNN libraries";
    case QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE: return "resource unavailable";
    case QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL:
      return "communication with the DSP failed; subsystem restart did not recover";
    case QNN_COMMON_ERROR_GENERAL: return "general error";
    case QNN_BACKEND_ERROR_CANNOT_INITIALIZE: return "backend cannot initialize";
    case QNN_BACKEND_ERROR_INVALID_ARGUMENT: return "backend: invalid argument";
    case QNN_BACKEND_ERROR_INVALID_HANDLE: return "backend: invalid handle";
    case QNN_CONTEXT_ERROR_INVALID_ARGUMENT: return "context: invalid argument";
    case QNN_CONTEXT_ERROR_CTX_DOES_NOT_EXIST: return "context does not exist";
    case QNN_CONTEXT_ERROR_INVALID_HANDLE: return "context: invalid handle";
    case QNN_CONTEXT_ERROR_BINARY_VERSION: return "context binary version incompatible";
    case QNN_CONTEXT_ERROR_CREATE_FROM_BINARY: return "failed to create a context from the binary";
    case QNN_CONTEXT_ERROR_BINARY_CONFIGURATION:
      return "context binary is not configured for this backend/device";
    case QNN_CONTEXT_ERROR_INVALID_CONFIG: return "context: invalid config";
    case QNN_CONTEXT_ERROR_ABORTED: return "context: call aborted by its signal";
    case QNN_CONTEXT_ERROR_TIMED_OUT: return "context: call timed out (its signal's limit)";
    case QNN_GRAPH_ERROR_INVALID_ARGUMENT: return "graph: invalid argument";
    case QNN_GRAPH_ERROR_INVALID_HANDLE: return "graph: invalid handle";
    case QNN_GRAPH_ERROR_GRAPH_DOES_NOT_EXIST: return "graph does not exist";
    case QNN_GRAPH_ERROR_INVALID_NAME: return "graph: invalid name";
    case QNN_GRAPH_ERROR_INVALID_TENSOR: return "graph: invalid tensor";
    case QNN_GRAPH_ERROR_GRAPH_FINALIZED: return "graph: config not valid on a finalized graph";
    case QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL: return "graph: async execute queue full";
    case QNN_GRAPH_ERROR_SIGNAL_IN_USE: return "graph: signal in use by another call";
    case QNN_GRAPH_ERROR_ABORTED: return "graph: execute aborted by its signal";
    case QNN_GRAPH_ERROR_TIMED_OUT: return "graph: execute timed out (its signal's limit)";
    case QNN_PROPERTY_ERROR_UNKNOWN_KEY: return "property: unknown key";
    case QNN_SIGNAL_ERROR_SIGNAL_IN_USE: return "signal: in use by a call";
    case QNN_SIGNAL_ERROR_SIGNAL_IDLE: return "signal: idle (no call is using it)";
    case QNN_SIGNAL_ERROR_INVALID_ARGUMENT: return "signal: invalid argument or config";
    case QNN_SIGNAL_ERROR_INVALID_HANDLE: return "signal: invalid handle";
    case QNN_SIGNAL_ERROR_TIMEOUT: return "signal: timeout";
    case QNN_SIGNAL_ERROR_INCOMPATIBLE_SIGNAL_TYPE: return "signal: incompatible signal type";
    case QNN_LOG_ERROR_INVALID_ARGUMENT: return "log: invalid argument";
    case QNN_LOG_ERROR_INVALID_HANDLE: return "log: invalid handle";
    case QNN_DEVICE_ERROR_INVALID_HANDLE: return "device: invalid handle";
    case QNN_DEVICE_ERROR_INVALID_CONFIG: return "device: invalid config";
    case QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE: return "device: hardware unavailable";
    case QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT: return "device is still associated to a context";
    case QNN_MEM_ERROR_INVALID_ARGUMENT: return "mem: invalid argument or memory descriptor";
    case QNN_MEM_ERROR_INVALID_HANDLE: return "mem: invalid handle";
    case QNN_MEM_ERROR_ALREADY_REGISTERED: return "mem: memory already registered";
    case QNN_MEM_ERROR_MAPPING: return "mem: mapping the memory failed";
    case QNN_MEM_ERROR_INVALID_SHAPE: return "mem: invalid memory shape";
    case QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE: return "mem: memory type not supported";
    case 13000u: return "perf infrastructure: invalid handle pointer";
    case QNN_HTP_PERF_ERROR_INVALID_INPUT: return "perf infrastructure: invalid input";
    case QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG: return "perf infrastructure: unsupported config";
    default: return NULL;
  }
}

qnn_error_t rb_error_get_message(qnn_error_t err, const char **msg) {
  if (!msg) return RB_ERROR_INVALID_ARGUMENT;
  const char *text = rb_error_text(QNN_ERROR_CODE(err));
  if (!text) return RB_ERROR_INVALID_ERROR_HANDLE;
  *msg = text;
  return QNN_SUCCESS;
}
