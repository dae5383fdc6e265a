/* VTCM units end to end: QNN fields that carry bytes (real binaries' graph blob info) or MB
 * (the documented unit, and perhaps the device's) become bytes in the public API, and the
 * compatibility check compares bytes and speaks MB (docs/abi.md, "VTCM units"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"
#include "device/vtcm.h"

#define MIB 1048576ull

TEST(vtcm_reported_values_become_bytes) {
  CHECK(vtcm_reported_to_bytes(0) == 0);                       /* unknown stays unknown */
  CHECK(vtcm_reported_to_bytes(1) == MIB);                     /* MB form */
  CHECK(vtcm_reported_to_bytes(8) == 8 * MIB);
  CHECK(vtcm_reported_to_bytes(MIB - 1) == (MIB - 1) * MIB);   /* largest MB value: < 2^40 */
  CHECK(vtcm_reported_to_bytes(MIB) == MIB);                   /* smallest byte count */
  CHECK(vtcm_reported_to_bytes(MIB + 1) == MIB + 1);
  CHECK(vtcm_reported_to_bytes(8388608) == 8 * MIB);           /* what real binaries carry */
  CHECK(vtcm_reported_to_bytes(UINT32_MAX) == UINT32_MAX);     /* the blob field's maximum */
  CHECK(vtcm_reported_to_bytes(1ull << 40) == 1ull << 40);
  CHECK(vtcm_reported_to_bytes(UINT64_MAX) == UINT64_MAX);     /* never wraps */
}

TEST(vtcm_format_is_mb_when_whole) {
  char buf[48];
  vtcm_format(8 * MIB, buf, sizeof buf);
  CHECK(strcmp(buf, "8 MB") == 0);
  vtcm_format(MIB + MIB / 2, buf, sizeof buf);
  CHECK(strcmp(buf, "1572864 bytes") == 0);
  vtcm_format(UINT64_MAX, buf, sizeof buf);
  CHECK(strcmp(buf, "18446744073709551615 bytes") == 0);
}

/* One graph with the given meta line. */
static void *vtcm_model(const char *meta, size_t *len) {
  char text[512];
  snprintf(text, sizeof text,
           "meta %s\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n  op Relu a -> b\n", meta);
  return fx_build_model(text, len);
}

static int inspect_vtcm(const char *meta, uint64_t *out) {
  size_t len = 0;
  void *bin = vtcm_model(meta, &len);
  if (!bin) return -100;
  htpu_model_info *m = NULL;
  int rc = htpu_inspect_buffer(test_build_path("libhtpu_refsystem.so"), bin, len, &m);
  free(bin);
  if (rc == 0) *out = m->graphs[0].vtcm_bytes;
  htpu_model_info_free(m);
  return rc;
}

TEST(vtcm_graph_blob_info_is_read_as_bytes) {
  fx_reset_env();
  uint64_t v = 1;
  /* Real 2.29-2.31 binaries of an 8 MB build carry 8388608 in the blob info. */
  CHECK_MSG(inspect_vtcm("vtcm_bytes=8388608", &v) == 0, "%s", htpu_last_error());
  CHECK(v == 8 * MIB);
  /* The MB form (8) means the same. */
  CHECK_MSG(inspect_vtcm("vtcm_bytes=8388608 vtcm_blob_unit=mb", &v) == 0, "%s",
            htpu_last_error());
  CHECK(v == 8 * MIB);
  CHECK_EQ(inspect_vtcm("vtcm_bytes=0", &v), 0);
  CHECK(v == 0);
  /* The blob field is 32 bits: its largest byte count comes through unchanged. */
  CHECK_EQ(inspect_vtcm("vtcm_bytes=4294967295", &v), 0);
  CHECK(v == UINT32_MAX);
  /* Graph info before v3 has no blob info: unknown. */
  CHECK_EQ(inspect_vtcm("graph_info=2 vtcm_bytes=8388608", &v), 0);
  CHECK(v == 0);
}

static int device_vtcm(const char *device, uint64_t *out) {
  fx_reset_env();
  setenv("HTPU_REF_DEVICE", device, 1);
  htpu_runtime *rt = fx_open_runtime();
  unsetenv("HTPU_REF_DEVICE");
  if (!rt) return -1;
  htpu_runtime_info ri;
  int rc = htpu_runtime_get_info(rt, &ri);
  if (rc == 0) *out = ri.device_vtcm_bytes;
  htpu_runtime_close(&rt);
  return rc;
}

TEST(vtcm_device_reports_either_encoding) {
  uint64_t v = 0;
  CHECK_EQ(device_vtcm("vtcm_mb=8", &v), 0);
  CHECK(v == 8 * MIB);
  CHECK_EQ(device_vtcm("vtcm_bytes=8388608", &v), 0);
  CHECK(v == 8 * MIB);
  CHECK_EQ(device_vtcm("vtcm_bytes=1048576", &v), 0);
  CHECK(v == MIB);
  CHECK_EQ(device_vtcm("vtcm_mb=0", &v), 0); /* the device does not say */
  CHECK(v == 0);
  CHECK_EQ(device_vtcm("arch=68", &v), 0); /* the reference default: 2, in MB */
  CHECK(v == 2 * MIB);
}

static char g_open_error[512]; /* open_on's failure message (closing clears the last error) */

/* Opens a one-graph binary with `meta` on a runtime whose device is `device`. */
static int open_on(const char *device, const char *meta) {
  g_open_error[0] = '\0';
  fx_reset_env();
  setenv("HTPU_REF_DEVICE", device, 1);
  htpu_runtime *rt = fx_open_runtime();
  unsetenv("HTPU_REF_DEVICE");
  if (!rt) return -100;
  size_t len = 0;
  void *bin = vtcm_model(meta, &len);
  htpu_context *ctx = NULL;
  int rc = bin ? htpu_context_open_buffer(rt, bin, len, &ctx) : -101;
  if (rc) snprintf(g_open_error, sizeof g_open_error, "%s", htpu_last_error());
  free(bin);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  return rc;
}

TEST(vtcm_compat_compares_bytes_and_names_mb) {
  /* The board-breaking case: bytes in the binary, MB from the device. */
  static const char *const devices[] = {"vtcm_mb=8", "vtcm_bytes=8388608"};
  static const char *const fits[] = {"vtcm_bytes=8388608", "vtcm_bytes=8388608 vtcm_blob_unit=mb",
                                     "vtcm_bytes=2097152", "vtcm_bytes=0"};
  static const char *const too_big[] = {"vtcm_bytes=16777216",
                                        "vtcm_bytes=16777216 vtcm_blob_unit=mb"};
  for (size_t d = 0; d < 2; d++) {
    for (size_t i = 0; i < sizeof fits / sizeof *fits; i++)
      CHECK_MSG(open_on(devices[d], fits[i]) == 0, "device %s, binary %s: %s", devices[d],
                fits[i], g_open_error);
    for (size_t i = 0; i < sizeof too_big / sizeof *too_big; i++) {
      CHECK_MSG(open_on(devices[d], too_big[i]) == HTPU_EINCOMPATIBLE, "device %s, binary %s",
                devices[d], too_big[i]);
      CHECK_STR_CONTAINS(g_open_error, "graph 'g' needs 16 MB of VTCM, this device has 8 MB");
    }
  }
  /* Not a whole MB: the exact byte count, never a rounded figure. */
  CHECK_EQ(open_on("vtcm_mb=1", "vtcm_bytes=1572864"), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(g_open_error, "needs 1572864 bytes of VTCM, this device has 1 MB");
  /* A device that does not say is not a reason to refuse. */
  CHECK_EQ(open_on("vtcm_mb=0", "vtcm_bytes=16777216"), 0);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_runtimes, 0);
}
