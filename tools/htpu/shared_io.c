/* shared_io.c - --shared-buffers: I/O in one registered shared buffer (see shared_io.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "shared_io.h"

int cli_shared_io_open(const cli_command *cmd, htpu_graph *g, const htpu_graph_info *gi,
                       cli_shared_io *out) {
  memset(out, 0, sizeof(*out));
  out->io = calloc((size_t)gi->num_inputs + gi->num_outputs + 1, sizeof(*out->io));
  if (!out->io) return cli_fail(cmd, "out of memory");
  htpu_stats st;
  htpu_stats_get(&st);
  out->registrations_at_open = st.mem_registrations;
  int rc = htpu_graph_alloc_io(g, out->io, out->io + gi->num_inputs, &out->buf);
  if (rc != 0) return cli_fail_htpu(cmd, rc, "allocating shared I/O buffers");
  out->fastrpc = htpu_shared_is_fastrpc(out->buf);
  if (!out->fastrpc) {
    const char *why = htpu_shared_note(out->buf); /* this buffer's own reason, never "" */
    snprintf(out->note, sizeof(out->note), "%s", why ? why : "");
  }
  return CLI_EXIT_OK;
}

int cli_shared_io_fill_inputs(const cli_command *cmd, cli_shared_io *sio, const cli_inputs *in) {
  for (uint32_t i = 0; i < in->count; i++) {
    const cli_input *x = &in->items[i];
    const htpu_io *dst = &sio->io[i];
    if (x->dtype == x->tensor->dtype) {
      if (x->size != dst->size)
        return cli_fail(cmd, "input '%s': %zu bytes of data for a %zu-byte tensor",
                        x->tensor->name, x->size, dst->size);
      if (x->size) memcpy(dst->data, x->data, x->size);
      continue;
    }
    /* f32 data for a quantized, f16 or integer tensor: converted once, here */
    int rc = htpu_quantize(x->tensor, x->data, dst->data);
    if (rc != 0) {
      char what[320];
      snprintf(what, sizeof(what), "converting input '%s' to %s", x->tensor->name,
               htpu_dtype_name(x->tensor->dtype));
      return cli_fail_htpu(cmd, rc, what);
    }
  }
  return CLI_EXIT_OK;
}

int cli_shared_io_read_output(const cli_command *cmd, const cli_shared_io *sio,
                              const htpu_graph_info *gi, uint32_t i, const htpu_tensor_info *t,
                              htpu_dtype dtype, void *dst, size_t size) {
  const htpu_io *src = &sio->io[gi->num_inputs + i];
  if (dtype == t->dtype) {
    if (size != t->byte_size || size > src->size)
      return cli_fail(cmd, "output '%s': %zu-byte buffer for %zu bytes", t->name, size,
                      t->byte_size);
    if (size) memcpy(dst, src->data, size);
    return CLI_EXIT_OK;
  }
  int rc = htpu_dequantize(t, src->data, dst);
  if (rc != 0) {
    char what[320];
    snprintf(what, sizeof(what), "converting output '%s' to f32", t->name);
    return cli_fail_htpu(cmd, rc, what);
  }
  return CLI_EXIT_OK;
}

uint64_t cli_shared_io_registrations(const cli_shared_io *sio) {
  htpu_stats st;
  htpu_stats_get(&st);
  return st.mem_registrations - sio->registrations_at_open;
}

uint64_t cli_shared_io_finish(cli_shared_io *sio, htpu_runtime *rt) {
  uint64_t n = cli_shared_io_registrations(sio);
  /* FastRPC memory whose registration failed is passed as ordinary memory: the buffer's own
   * note stays "", the runtime keeps the reason (QNN code and message) */
  htpu_runtime_info info;
  if (sio->fastrpc && n == 0 && htpu_runtime_get_info(rt, &info) == 0 &&
      info.shared_memory_note && info.shared_memory_note[0])
    snprintf(sio->note, sizeof(sio->note), "%s", info.shared_memory_note);
  return n;
}

void cli_shared_io_close(cli_shared_io *sio) {
  htpu_shared_free(&sio->buf);
  free(sio->io);
  memset(sio, 0, sizeof(*sio));
}
