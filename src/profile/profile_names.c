/* profile_names.c - names for QNN's and HTP's profile event types, units and our levels. */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"
#include "qnn/qnn_profile_abi.h"

static const struct {
  uint32_t type;
  const char *name;
} k_names[] = {
    {QNN_PROFILE_EVENTTYPE_INIT, "init"},
    {QNN_PROFILE_EVENTTYPE_FINALIZE, "finalize"},
    {QNN_PROFILE_EVENTTYPE_EXECUTE, "execute"},
    {QNN_PROFILE_EVENTTYPE_NODE, "op"},
    {QNN_PROFILE_EVENTTYPE_EXECUTE_QUEUE_WAIT, "queue wait"},
    {QNN_PROFILE_EVENTTYPE_EXECUTE_PREPROCESS, "preprocess"},
    {QNN_PROFILE_EVENTTYPE_EXECUTE_DEVICE, "device"},
    {QNN_PROFILE_EVENTTYPE_EXECUTE_POSTPROCESS, "postprocess"},
    {QNN_PROFILE_EVENTTYPE_DEINIT, "deinit"},
    {QNN_PROFILE_EVENTTYPE_TRACE, "trace"},
    {QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HOST_RPC_TIME_MICROSEC, "load host RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HTP_RPC_TIME_MICROSEC, "load HTP RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_ACCEL_TIME_MICROSEC, "load accelerator time"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC, "host RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HTP_RPC_TIME_MICROSEC, "HTP RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE, "accelerator cycles"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC, "accelerator time"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_MISC_ACCEL_TIME_MICROSEC, "misc accelerator time"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_RELEASE_TIME, "yield release"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_WAIT_TIME, "yield wait"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_RESTORE_TIME, "yield restore"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_COUNT, "yield"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_VTCM_ACQUIRE_TIME, "VTCM acquire"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_RESOURCE_POWER_UP_TIME, "resource power-up"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_EXCL_WAIT_TIME_MICROSEC,
     "accelerator time excluding waits"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_HOST_RPC_TIME_MICROSEC, "deinit host RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_HTP_RPC_TIME_MICROSEC, "deinit HTP RPC"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_ACCEL_TIME_MICROSEC, "deinit accelerator time"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT, "op wait"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_OVERLAP, "op overlap"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT_OVERLAP, "op wait overlap"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_RESOURCEMASK, "op resources"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_CRITICAL_BG_OP_ID, "critical background op"},
    {QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT_BG_OP_ID, "waited-on background op"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE, "critical path cycles"},
    {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_NUMBER_OF_HVX_THREADS, "HVX threads"},
};

const char *htpu_profile_event_name(uint32_t type) {
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
    if (k_names[i].type == type) return k_names[i].name;
  return "";
}

const char *htpu_profile_unit_name(uint32_t unit) {
  static const char *const units[] = {"", "us", "bytes", "cycles", "count", "object", "none"};
  return unit < sizeof units / sizeof units[0] ? units[unit] : "";
}

static const char *const k_levels[] = {"off", "basic", "detailed", "linting", "optrace"};
#define NLEVELS (sizeof k_levels / sizeof k_levels[0])

const char *htpu_profile_level_name(htpu_profile_level level) {
  return (unsigned)level < NLEVELS ? k_levels[level] : NULL;
}

int htpu_profile_level_from_name(const char *name, htpu_profile_level *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_profile_level_from_name: out is NULL");
  for (unsigned i = 0; name && i < NLEVELS; i++)
    if (strcmp(name, k_levels[i]) == 0) {
      *out = (htpu_profile_level)i;
      return 0;
    }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown profile level '%s'; expected off, basic, detailed, linting or "
                        "optrace",
                        name ? name : "(null)");
}
