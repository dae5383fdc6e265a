/* errors.c - error codes, QNN error names, and the thread-local last error. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hexagon_tpu.h"

static _Thread_local char tls_message[HTPU_ERROR_MAX];
static _Thread_local uint32_t tls_qnn_code;

const char *htpu_err_name(int code) {
#define HTPU_ERROR_NAME_(name, value, msg) \
  case value:                              \
    return #name;
  switch (code) { HTPU_ERRORS(HTPU_ERROR_NAME_) }
#undef HTPU_ERROR_NAME_
  return "unknown";
}

const char *htpu_strerror(int code) {
#define HTPU_ERROR_MSG_(name, value, msg) \
  case value:                             \
    return msg;
  switch (code) { HTPU_ERRORS(HTPU_ERROR_MSG_) }
#undef HTPU_ERROR_MSG_
  return "unknown error";
}

/* The QNN codes a user of context binaries can meet, with what they mean on a device. */
#define QNN_CODES(X)                                                                           \
  X(0, "QNN_SUCCESS", "success")                                                              \
  X(1000, "QNN_COMMON_ERROR_NOT_SUPPORTED", "not supported by this backend")                 \
  X(1002, "QNN_COMMON_ERROR_MEM_ALLOC", "memory allocation failed")                          \
  X(1003, "QNN_COMMON_ERROR_SYSTEM", "system error")                                         \
  X(1004, "QNN_COMMON_ERROR_INVALID_ARGUMENT", "invalid argument")                           \
  X(1005, "QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED", "operation not permitted")             \
  X(1006, "QNN_COMMON_ERROR_PLATFORM_NOT_SUPPORTED", "platform not supported")               \
  X(1007, "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION", "DSP subsystem restarted")                 \
  X(1008, "QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES",                                           \
    "incompatible QNN libraries loaded (mixed SDK versions)")                                 \
  X(1009, "QNN_COMMON_ERROR_LOADING_BINARIES", "failed to load QNN binaries")                \
  X(1010, "QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE", "resource unavailable")                   \
  X(1011, "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL",                                      \
    "DSP subsystem restarted and did not recover")                                            \
  X(1100, "QNN_COMMON_ERROR_GENERAL", "general error")                                       \
  X(2000, "QNN_PROPERTY_ERROR_UNKNOWN_KEY", "unknown property key")                          \
  X(4000, "QNN_BACKEND_ERROR_CANNOT_INITIALIZE", "backend cannot initialize")                \
  X(4002, "QNN_BACKEND_ERROR_TERMINATE_FAILED", "backend termination failed")                \
  X(4003, "QNN_BACKEND_ERROR_NOT_SUPPORTED", "not supported by the backend")                 \
  X(4004, "QNN_BACKEND_ERROR_INVALID_ARGUMENT", "invalid argument to the backend")           \
  X(4010, "QNN_BACKEND_ERROR_INCONSISTENT_CONFIG", "inconsistent backend config")            \
  X(4011, "QNN_BACKEND_ERROR_INVALID_HANDLE", "invalid backend handle")                      \
  X(4012, "QNN_BACKEND_ERROR_INVALID_CONFIG", "invalid backend config")                      \
  X(5000, "QNN_CONTEXT_ERROR_INVALID_ARGUMENT", "invalid context argument")                  \
  X(5001, "QNN_CONTEXT_ERROR_CTX_DOES_NOT_EXIST", "context does not exist")                  \
  X(5002, "QNN_CONTEXT_ERROR_INVALID_HANDLE", "invalid context handle")                      \
  X(5003, "QNN_CONTEXT_ERROR_NOT_FINALIZED", "context not finalized")                        \
  X(5004, "QNN_CONTEXT_ERROR_BINARY_VERSION",                                                 \
    "context binary version not supported by this runtime")                                   \
  X(5005, "QNN_CONTEXT_ERROR_CREATE_FROM_BINARY", "could not create context from binary")    \
  X(5006, "QNN_CONTEXT_ERROR_GET_BINARY_SIZE_FAILED", "could not get context binary size")   \
  X(5007, "QNN_CONTEXT_ERROR_GET_BINARY_FAILED", "could not get context binary")             \
  X(5008, "QNN_CONTEXT_ERROR_BINARY_CONFIGURATION",                                           \
    "context binary was built for another device configuration")                              \
  X(5009, "QNN_CONTEXT_ERROR_SET_PROFILE", "could not set profile")                          \
  X(5010, "QNN_CONTEXT_ERROR_INVALID_CONFIG", "invalid context config")                      \
  X(5011, "QNN_CONTEXT_ERROR_BINARY_SUBOPTIMAL", "context binary is suboptimal (strict mode)") \
  X(5012, "QNN_CONTEXT_ERROR_ABORTED", "context operation aborted")                          \
  X(5013, "QNN_CONTEXT_ERROR_TIMED_OUT", "context operation timed out")                      \
  X(6000, "QNN_GRAPH_ERROR_INVALID_ARGUMENT", "invalid graph argument")                      \
  X(6001, "QNN_GRAPH_ERROR_INVALID_HANDLE", "invalid graph handle")                          \
  X(6002, "QNN_GRAPH_ERROR_GRAPH_DOES_NOT_EXIST", "graph does not exist")                    \
  X(6003, "QNN_GRAPH_ERROR_INVALID_NAME", "invalid graph name")                              \
  X(6004, "QNN_GRAPH_ERROR_INVALID_TENSOR", "invalid tensor")                                \
  X(6005, "QNN_GRAPH_ERROR_INVALID_OP_CONFIG", "invalid op config")                          \
  X(6020, "QNN_GRAPH_ERROR_CREATE_FAILED", "graph creation failed")                          \
  X(6023, "QNN_GRAPH_ERROR_GRAPH_NOT_FINALIZED", "graph not finalized")                      \
  X(6025, "QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL", "async execution queue full")         \
  X(6031, "QNN_GRAPH_ERROR_ABORTED", "graph execution aborted")                              \
  X(6033, "QNN_GRAPH_ERROR_TIMED_OUT", "graph execution timed out")                          \
  X(7001, "QNN_TENSOR_ERROR_INVALID_HANDLE", "invalid tensor handle")                        \
  X(7002, "QNN_TENSOR_ERROR_DOES_NOT_EXIST", "tensor does not exist")                        \
  X(8000, "QNN_MEM_ERROR_INVALID_ARGUMENT", "invalid memory argument")                       \
  X(8001, "QNN_MEM_ERROR_INVALID_HANDLE", "invalid memory handle")                           \
  X(8002, "QNN_MEM_ERROR_ALREADY_REGISTERED", "memory already registered")                   \
  X(8003, "QNN_MEM_ERROR_MAPPING", "memory mapping failed")                                  \
  X(8004, "QNN_MEM_ERROR_INVALID_SHAPE", "invalid memory shape")                             \
  X(8005, "QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE", "unsupported memory type")                    \
  X(11002, "QNN_LOG_ERROR_INITIALIZATION", "log initialization failed")                      \
  X(11003, "QNN_LOG_ERROR_INVALID_ARGUMENT", "invalid log argument")                         \
  X(11004, "QNN_LOG_ERROR_INVALID_HANDLE", "invalid log handle")                             \
  X(13000, "QNN_HTP_PERF_ERROR_INVALID_HANDLE_PTR", "invalid perf infrastructure handle")    \
  X(13001, "QNN_HTP_PERF_ERROR_INVALID_INPUT", "invalid perf config input")                  \
  X(13002, "QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG", "unsupported perf config")               \
  X(13003, "QNN_HTP_PERF_ERROR_TRANSPORT", "perf config transport failed")                   \
  X(14000, "QNN_DEVICE_ERROR_INVALID_HANDLE", "invalid device handle")                       \
  X(14001, "QNN_DEVICE_ERROR_INVALID_CONFIG",                                                 \
    "invalid device config (often a skel/stub version mismatch in DSP_LIBRARY_PATH)")         \
  X(14002, "QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE", "NPU hardware unavailable")              \
  X(14003, "QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT", "device still has contexts")            \
  X(30000, "QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE", "invalid system context handle")       \
  X(30001, "QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT", "invalid system context argument")   \
  X(30002, "QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED", "system context operation failed")   \
  X(30010, "QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY", "malformed context binary")

const char *htpu_qnn_error_name(uint32_t qnn_code) {
#define QNN_NAME_(code, name, msg) \
  case code:                       \
    return name;
  switch (qnn_code) { QNN_CODES(QNN_NAME_) }
#undef QNN_NAME_
  return "QNN_ERROR_UNKNOWN";
}

const char *htpu_qnn_error_message(uint32_t qnn_code) {
#define QNN_MSG_(code, name, msg) \
  case code:                      \
    return msg;
  switch (qnn_code) { QNN_CODES(QNN_MSG_) }
#undef QNN_MSG_
  return "unknown QNN error";
}

const char *htpu_last_error(void) { return tls_message; }
uint32_t htpu_last_qnn_code(void) { return tls_qnn_code; }

void htpu_clear_error(void) {
  tls_message[0] = '\0';
  tls_qnn_code = 0;
}

int htpu_set_error(int code, uint32_t qnn_code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_message, sizeof tls_message, fmt, ap);
  va_end(ap);
  tls_qnn_code = qnn_code;
  return code;
}

void htpu_append_error(const char *fmt, ...) {
  size_t used = strlen(tls_message);
  if (used + 1 >= sizeof tls_message) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_message + used, sizeof tls_message - used, fmt, ap);
  va_end(ap);
}

size_t htpu_copy_message(const char *src, char *buf, size_t len) {
  size_t n = strlen(src);
  if (!buf || len == 0) return n;
  if (n < len) {
    memcpy(buf, src, n + 1);
  } else {
    memcpy(buf, src, len - 1);
    buf[len - 1] = '\0';
    for (size_t i = len >= 4 ? len - 4 : 0; i < len - 1; i++) buf[i] = '.';
  }
  return n;
}
