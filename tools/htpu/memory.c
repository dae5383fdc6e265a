/* memory.c - see memory.h. */
#include "memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

uint64_t cli_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int n = fscanf(f, "%llu %llu", &size, &resident);
  fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

void cli_format_bytes(uint64_t n, char *buf, size_t len) {
  if (n < 1000)
    snprintf(buf, len, "%" PRIu64 " B", n);
  else if (n < 1000000)
    snprintf(buf, len, "%.1f kB", (double)n / 1e3);
  else if (n < 1000000000)
    snprintf(buf, len, "%.1f MB", (double)n / 1e6);
  else
    snprintf(buf, len, "%.2f GB", (double)n / 1e9);
}

void cli_graph_memory_line(const htpu_graph_memory *m, char *buf, size_t len) {
  char a[5][32];
  buf[0] = '\0';
  if (m->blob_info_version == 1) {
    cli_format_bytes(m->spill_fill_bytes, a[0], sizeof a[0]);
    snprintf(buf, len, "memory (blob info v1): spill-fill %s, optimization level %" PRIu32
             ", %" PRIu64 " HVX threads", a[0], m->optimization_level, m->hvx_threads);
  } else if (m->blob_info_version == 2) {
    cli_format_bytes(m->io_tensor_bytes, a[0], sizeof a[0]);
    cli_format_bytes(m->op_data_bytes, a[1], sizeof a[1]);
    cli_format_bytes(m->const_bytes, a[2], sizeof a[2]);
    cli_format_bytes(m->ddr_tensor_bytes, a[3], sizeof a[3]);
    cli_format_bytes(m->shared_weights_bytes, a[4], sizeof a[4]);
    snprintf(buf, len, "memory (blob info v2): I/O %s, op data %s, constants %s, DDR tensors "
             "%s, shared weights %s%s", a[0], a[1], a[2], a[3], a[4],
             m->safe_share_io ? ", I/O may share a buffer" : "");
  }
}

/* A figure of blob info version `from`: null in another version's answer (each version has
 * only its own fields), so a V1 graph's V2 sizes do not read as measured zeros. */
static void figure(cli_json *j, const htpu_graph_memory *m, uint32_t from, const char *key,
                   uint64_t value) {
  if (m->blob_info_version == from)
    cli_json_uint(j, key, value);
  else
    cli_json_string(j, key, NULL);
}

void cli_graph_memory_json(cli_json *j, const htpu_graph_memory *m) {
  cli_json_object_begin(j, "memory");
  cli_json_uint(j, "blob_info_version", m->blob_info_version);
  figure(j, m, 1, "spill_fill_bytes", m->spill_fill_bytes);
  figure(j, m, 1, "optimization_level", m->optimization_level);
  figure(j, m, 1, "hvx_threads", m->hvx_threads);
  figure(j, m, 2, "io_tensor_bytes", m->io_tensor_bytes);
  figure(j, m, 2, "op_data_bytes", m->op_data_bytes);
  figure(j, m, 2, "const_bytes", m->const_bytes);
  figure(j, m, 2, "ddr_tensor_bytes", m->ddr_tensor_bytes);
  figure(j, m, 2, "shared_weights_bytes", m->shared_weights_bytes);
  figure(j, m, 2, "native_k_channel_bytes", m->native_k_channel_bytes);
  figure(j, m, 2, "native_v_channel_bytes", m->native_v_channel_bytes);
  if (m->blob_info_version == 2)
    cli_json_bool(j, "safe_share_io", m->safe_share_io);
  else
    cli_json_string(j, "safe_share_io", NULL);
  cli_json_object_end(j);
}

int cli_load_memory_print(const cli_load_memory *m) {
  char est[32], before[32], after[32], delta[48], weights[32], spill[32], ctx[400];
  cli_format_bytes(m->estimate, est, sizeof est);
  cli_format_bytes(m->rss_before, before, sizeof before);
  cli_format_bytes(m->rss_after, after, sizeof after);
  uint64_t grew = m->rss_after > m->rss_before ? m->rss_after - m->rss_before : 0;
  cli_format_bytes(grew, delta, sizeof delta);
  if (m->ctx_rc == 0 && m->ctx.reported) {
    cli_format_bytes(m->ctx.weights_bytes, weights, sizeof weights);
    cli_format_bytes(m->ctx.spill_fill_bytes, spill, sizeof spill);
    snprintf(ctx, sizeof ctx, "weights %s, largest spill-fill %s", weights, spill);
  } else {
    snprintf(ctx, sizeof ctx, "not reported: %s",
             m->ctx_rc ? htpu_err_name(m->ctx_rc) : m->ctx.note);
  }
  char load[160];
  snprintf(load, sizeof load, "%s (resident %s before the load, %s after)", delta, before, after);
  cli_table t;
  cli_table_init(&t, 2);
  const char *rows[][2] = {{"load estimate", est}, {"load measured", load}, {"context", ctx}};
  for (size_t i = 0; i < 3; i++) cli_table_add(&t, rows[i]);
  printf("\nmemory:\n");
  int rc = cli_table_print(&t, stdout, 2);
  cli_table_free(&t);
  return rc;
}

void cli_load_memory_json(cli_json *j, const cli_load_memory *m) {
  cli_json_object_begin(j, "memory");
  cli_json_uint(j, "load_estimate_bytes", m->estimate);
  cli_json_uint(j, "rss_before_load_bytes", m->rss_before);
  cli_json_uint(j, "rss_after_load_bytes", m->rss_after);
  cli_json_bool(j, "context_reported", m->ctx_rc == 0 && m->ctx.reported);
  cli_json_uint(j, "context_weights_bytes", m->ctx.weights_bytes);
  cli_json_uint(j, "context_spill_fill_bytes", m->ctx.spill_fill_bytes);
  cli_json_string(j, "context_note", m->ctx_rc ? htpu_err_name(m->ctx_rc) : m->ctx.note);
  cli_json_object_end(j);
}
