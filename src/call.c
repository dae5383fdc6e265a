/* call.c - submitted calls (htpu_graph_submit): not built yet, every entry point refuses. */
#include <stddef.h>

#include "errors.h"
#include "hexagon_tpu.h"

int htpu_graph_submit(htpu_graph *g, const htpu_io *inputs, uint32_t num_inputs,
                      const htpu_io *outputs, uint32_t num_outputs, const htpu_exec_options *opts,
                      htpu_call_done_fn done, void *done_arg, htpu_call **out) {
  (void)g, (void)inputs, (void)num_inputs, (void)outputs, (void)num_outputs, (void)opts;
  (void)done, (void)done_arg;
  if (out) *out = NULL;
  return htpu_set_error(HTPU_EUNSUPPORTED, 0, "htpu_graph_submit is not built yet");
}

int htpu_call_cancel(htpu_call *call) {
  (void)call;
  return htpu_set_error(HTPU_EUNSUPPORTED, 0, "htpu_call_cancel is not built yet");
}

int htpu_call_wait(htpu_call *call, uint64_t timeout_ns) {
  (void)call, (void)timeout_ns;
  return htpu_set_error(HTPU_EUNSUPPORTED, 0, "htpu_call_wait is not built yet");
}

int htpu_call_result(htpu_call *call, htpu_exec_stats *stats, char *msg, size_t len) {
  (void)call, (void)stats;
  if (msg && len) msg[0] = '\0';
  return htpu_set_error(HTPU_EUNSUPPORTED, 0, "htpu_call_result is not built yet");
}

void htpu_call_release(htpu_call **call) {
  if (call) *call = NULL;
}
