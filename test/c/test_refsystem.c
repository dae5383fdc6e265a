/* test_refsystem.c - the reference system library (libhtpu_refsystem.so): providers, and the
 * context-binary info at every version.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_versions.h"
#include "fixture.h"
#include "refb_rig.h"
#include "test.h"

/* ---- system library ----------------------------------------------------------------------- */

typedef struct sys {
  void *dl;
  qnn_system_interface_get_providers_fn get_providers;
  const qnn_system_interface_t *p;
} sys;

static int sys_open(sys *s, const char *spec) {
  memset(s, 0, sizeof(*s));
  ref_reset_env();
  if (spec) setenv("HTPU_REF_SYSTEM_PROVIDERS", spec, 1);
  s->dl = dlopen(test_build_path("libhtpu_refsystem.so"), RTLD_NOW | RTLD_LOCAL);
  if (!s->dl) {
    printf("    dlopen: %s\n", dlerror());
    return -1;
  }
  s->get_providers = (qnn_system_interface_get_providers_fn)dlsym(
      s->dl, QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL);
  const qnn_system_interface_t **list = NULL;
  uint32_t n = 0;
  if (!s->get_providers || s->get_providers(&list, &n) != QNN_SUCCESS || n == 0) return -1;
  s->p = list[0];
  return 0;
}

static void sys_close(sys *s) {
  ref_reset_env();
  if (s->dl) dlclose(s->dl);
}

TEST(refs_providers) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  size_t off = offsetof(qnn_system_interface_t, table);
  CHECK(strcmp(s.p->provider_name, "HTPU_REFERENCE_SYSTEM") == 0);
  CHECK_EQ(s.p->system_api_version.minor, 7);
  CHECK(slots_all_set(s.p, off, 16));
  CHECK(block_size_ok(s.p, off + 16 * sizeof(qnn_unused_fn)));
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "OLD_SYS:1.1.0,MID:1.6.2", 1);
  const qnn_system_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(s.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 2);
  CHECK(strcmp(list[0]->provider_name, "OLD_SYS") == 0);
  CHECK(slots_all_set(list[0], off, 4));
  CHECK(block_size_ok(list[0], off + 4 * sizeof(qnn_unused_fn)));
  CHECK_EQ(list[1]->system_api_version.patch, 2);
  uint32_t mid_slots = qnn_system_table_slots(list[1]->system_api_version);
  CHECK(mid_slots >= 4);
  CHECK(slots_all_set(list[1], off, mid_slots));
  CHECK(block_size_ok(list[1], off + mid_slots * sizeof(qnn_unused_fn)));
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 0);
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "broken", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  unsetenv("HTPU_REF_SYSTEM_PROVIDERS");
  setenv("HTPU_REF_SYSTEM_GETPROVIDERS_ERROR", "1009", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_COMMON_ERROR_LOADING_BINARIES);
  sys_close(&s);
}

static char *multi_text(unsigned bi, unsigned gi, unsigned tv) {
  static char text[4096];
  snprintf(text, sizeof(text),
           "meta binary_info=%u graph_info=%u tensor=%u backend_id=6 build_id=\"v2.42.0.ref\" "
           "core_api=2.32.0 backend_api=5.42.0 context_blob=3.3.4 soc_version=\"v68\" "
           "soc_model=35 dsp_arch=68 vtcm_bytes=2097152\n%s",
           bi, gi, tv, FX_MULTI_GRAPH);
  return text;
}

/* Fields common to V1/V2 tensors, read through the member the version selects. */
static const qnn_tensor_v1_t *tensor_fields(const qnn_tensor_t *t) {
  return t->version == QNN_TENSOR_VERSION_2 ? (const qnn_tensor_v1_t *)(const void *)&t->u.v2
                                            : &t->u.v1;
}

static void check_info(const qnn_system_context_binary_info_t *info, unsigned bi, unsigned gi,
                       unsigned tv, uint32_t stride, uint64_t blob_len) {
  CHECK_EQ(info->version, bi);
  uint32_t num_graphs;
  const unsigned char *graphs;
  if (bi == 3) {
    const qnn_binary_info_v3_t *v = &info->u.v3;
    CHECK_EQ(v->backend_id, 6);
    CHECK(strcmp(v->build_id, "v2.42.0.ref") == 0);
    CHECK(strcmp(v->soc_version, "v68") == 0);
    CHECK_EQ(v->core_api_version.minor, 32);
    CHECK_EQ(v->backend_api_version.minor, 42);
    CHECK_EQ(v->context_blob_version.patch, 4);
    CHECK_EQ(v->context_blob_size, blob_len);
    CHECK_EQ(v->soc_model, 35);
    CHECK(v->platform_info != NULL);
    num_graphs = v->num_graphs;
    graphs = (const unsigned char *)v->graphs;
  } else {
    const qnn_binary_info_v1_t *v = &info->u.v1;
    CHECK_EQ(v->backend_id, 6);
    CHECK(strcmp(v->build_id, "v2.42.0.ref") == 0);
    CHECK(strcmp(v->soc_version, "v68") == 0);
    CHECK_EQ(v->context_blob_version.major, 3);
    CHECK_EQ(v->context_blob_size, blob_len);
    if (bi == 2) {
      /* V2 carries the device the binary was built for: HTP on-chip, arch 68, SoC 35. */
      const qnn_device_platform_info_t *p = info->u.v2.platform_info;
      CHECK(p && p->version == 1 && p->u.v1.num_hw_devices == 1);
      const qnn_htp_device_info_extension_t *ext = p->u.v1.hw_devices[0].u.v1.device_info_extension;
      CHECK(ext && ext->u.on_chip_device.arch == 68 && ext->u.on_chip_device.soc_model == 35);
    }
    num_graphs = v->num_graphs;
    graphs = (const unsigned char *)v->graphs;
  }
  CHECK_EQ(num_graphs, 3);
  static const char *const names[3] = {"first", "second", "third"};
  unsigned want_gi = (gi == 3 && stride < QNN_GRAPH_INFO_STRIDE_V3) ? 2 : gi;
  for (uint32_t i = 0; i < 3; i++) {
    const qnn_system_context_graph_info_t *g =
        (const qnn_system_context_graph_info_t *)(const void *)(graphs + (size_t)i * stride);
    CHECK_EQ(g->version, want_gi);
    const qnn_graph_info_v1_t *v = &g->u.v1;
    CHECK(strcmp(v->graph_name, names[i]) == 0);
    CHECK_EQ(v->num_graph_inputs, 1);
    CHECK_EQ(v->num_graph_outputs, 1);
    const qnn_tensor_t *in = v->graph_inputs, *out = v->graph_outputs;
    CHECK_EQ(in->version, tv);
    CHECK_EQ(out->version, tv);
    const qnn_tensor_v1_t *ti = tensor_fields(in), *to = tensor_fields(out);
    CHECK_EQ(ti->type, QNN_TENSOR_TYPE_APP_WRITE);
    CHECK_EQ(to->type, QNN_TENSOR_TYPE_APP_READ);
    CHECK_EQ(ti->mem_type, QNN_TENSORMEMTYPE_RAW);
    CHECK(ti->id != 0 && ti->id != to->id);
    if (i == 0) {
      CHECK(strcmp(ti->name, "x") == 0 && strcmp(to->name, "y") == 0);
      CHECK_EQ(ti->data_type, QNN_DATATYPE_UFIXED_POINT_8);
      CHECK_EQ(ti->rank, 2);
      CHECK(ti->dimensions[0] == 1 && ti->dimensions[1] == 3);
      CHECK_EQ(ti->quantize_params.encoding_definition, QNN_DEFINITION_DEFINED);
      CHECK_EQ(ti->quantize_params.quantization_encoding, QNN_QUANTIZATION_ENCODING_SCALE_OFFSET);
      CHECK(ti->quantize_params.u.scale_offset_encoding.scale == 0.5f);
      CHECK_EQ(ti->quantize_params.u.scale_offset_encoding.offset, -3);
    } else if (i == 1) {
      CHECK(strcmp(ti->name, "p") == 0);
      CHECK_EQ(ti->data_type, QNN_DATATYPE_FLOAT_16);
      CHECK_EQ(ti->quantize_params.encoding_definition, QNN_DEFINITION_UNDEFINED);
    } else {
      CHECK_EQ(ti->data_type, QNN_DATATYPE_SFIXED_POINT_8);
      CHECK_EQ(ti->quantize_params.u.scale_offset_encoding.offset, 5);
      CHECK(ti->dimensions[0] == 4);
    }
    if (want_gi >= 2) CHECK_EQ(g->u.v2.num_updateable_tensors, 0);
    if (want_gi == 3) {
      CHECK_EQ(g->u.v3.graph_blob_info_size, 40);
      const unsigned char *blob = g->u.v3.graph_blob_info;
      uint32_t blob_version, vtcm;
      memcpy(&blob_version, blob, 4);
      memcpy(&vtcm, blob + 16, 4);
      CHECK_EQ(blob_version, 1);
      CHECK_EQ(vtcm, 2097152); /* bytes, as real binaries carry it */
    }
  }
}

TEST(refs_binary_info_all_versions_and_strides) {
  static const char *const specs[2] = {"S17:1.7.0", "S11:1.1.0"};
  for (int sv = 0; sv < 2; sv++) {
    sys s;
    CHECK(sys_open(&s, specs[sv]) == 0);
    uint32_t stride = qnn_graph_info_stride(s.p->system_api_version);
    CHECK_EQ(stride, sv == 0 ? 88 : 64);
    for (unsigned bi = 1; bi <= 3; bi++)
      for (unsigned gi = 1; gi <= 3; gi++)
        for (unsigned tv = 1; tv <= 2; tv++) {
          size_t len = 0;
          void *bin = fx_build_model(multi_text(bi, gi, tv), &len);
          CHECK(bin);
          qnn_system_context_handle_t h = NULL;
          CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
          const void *info = NULL;
          qnn_context_binary_size_t info_size = 0;
          qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &info,
                                                                      &info_size);
          const void *meta = NULL;
          qnn_error_t rc2 = s.p->table.system_context_get_metadata(h, bin, len, &meta);
          free(bin); /* the answers must not point into the caller's buffer */
          CHECK_EQ(rc, QNN_SUCCESS);
          CHECK_EQ(rc2, QNN_SUCCESS);
          CHECK(info_size >= sizeof(qnn_system_context_binary_info_t));
          check_info(info, bi, gi, tv, stride, len);
          if (test_failed()) {
            printf("    binary_info=%u graph_info=%u tensor=%u stride=%u\n", bi, gi, tv, stride);
            s.p->table.system_context_free(h);
            sys_close(&s);
            return;
          }
          check_info(meta, bi, gi, tv, stride, len);
          CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
        }
    sys_close(&s);
  }
}

/* HTPU_REF_SYSTEM_LAYOUT=v1only: 48-byte graph infos and 120-byte tensors (version + V1 only,
 * QAIRT 2.13's layout) whatever version the provider reports and the binary asks for. */
TEST(refs_binary_info_v1only_layout) {
  sys s;
  CHECK(sys_open(&s, "S11:1.1.0") == 0);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  size_t len = 0;
  void *bin = fx_build_model(multi_text(3, 3, 2), &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &sz);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v2only", 1);
  const void *bad = NULL;
  qnn_error_t rc_bad = s.p->table.system_context_get_binary_info(h, bin, len, &bad, &sz);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK_EQ(rc_bad, QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  const qnn_system_context_binary_info_t *info = vinfo;
  CHECK_EQ(info->u.v3.num_graphs, 3);
  const unsigned char *graphs = (const void *)info->u.v3.graphs;
  static const char *const names[3][3] = {{"first", "x", "y"}, {"second", "p", "q"},
                                          {"third", "m", "n"}};
  for (uint32_t i = 0; i < 3; i++) {
    const qnn_system_context_graph_info_t *g =
        (const void *)(graphs + (size_t)i * QNN_GRAPH_INFO_STRIDE_V1_ONLY);
    CHECK_EQ(g->version, QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1);
    CHECK(strcmp(g->u.v1.graph_name, names[i][0]) == 0);
    const qnn_tensor_t *in = g->u.v1.graph_inputs, *out = g->u.v1.graph_outputs;
    CHECK_EQ(in->version, QNN_TENSOR_VERSION_1);
    CHECK(strcmp(in->u.v1.name, names[i][1]) == 0);
    CHECK(strcmp(out->u.v1.name, names[i][2]) == 0);
  }
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

/* Two inputs: the second starts 120 bytes after the first, and the array ends there. */
TEST(refs_v1only_tensor_stride) {
  sys s;
  CHECK(sys_open(&s, "S11:1.1.0") == 0);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &sz);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  const qnn_system_context_binary_info_t *info = vinfo;
  const qnn_system_context_graph_info_t *g = info->u.v3.graphs;
  CHECK_EQ(g->u.v1.num_graph_inputs, 2);
  const unsigned char *in = (const void *)g->u.v1.graph_inputs;
  const qnn_tensor_t *b = (const void *)(in + QNN_TENSOR_STRIDE_V1_ONLY);
  CHECK_EQ(b->version, QNN_TENSOR_VERSION_1);
  CHECK(strcmp(b->u.v1.name, "b") == 0);
  CHECK_EQ(b->u.v1.type, QNN_TENSOR_TYPE_APP_WRITE);
  CHECK_EQ(b->u.v1.dimensions[1], 4);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

TEST(refs_axis_scale_offset_tensor) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  size_t len = 0;
  void *bin = fx_build_model("graph q\n"
                    "  input x u8 [2,3] axis=0 scales=[0.5,0.25] zero_points=[1,2]\n"
                    "  output y u8 [2,3] scale=1.0 zero_point=0\n"
                    "  op Relu x -> y\n", &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_error_t rc = s.p->table.system_context_get_metadata(h, bin, len, &vinfo);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  const qnn_system_context_binary_info_t *info = vinfo;
  const qnn_system_context_graph_info_t *g =
      info->version == 3 ? info->u.v3.graphs : info->u.v1.graphs;
  const qnn_tensor_v1_t *t = tensor_fields(g->u.v1.graph_inputs);
  CHECK_EQ(t->quantize_params.quantization_encoding,
           QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET);
  const qnn_axis_scale_offset_t *ax = &t->quantize_params.u.axis_scale_offset_encoding;
  CHECK_EQ(ax->axis, 0);
  CHECK_EQ(ax->num_scale_offsets, 2);
  CHECK(ax->scale_offset[0].scale == 0.5f && ax->scale_offset[1].scale == 0.25f);
  CHECK_EQ(ax->scale_offset[0].offset, -1);
  CHECK_EQ(ax->scale_offset[1].offset, -2);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

/* The graph blob info carries the model's VTCM value as written: bytes as in real binaries
 * (8388608 for 8 MB), or the MB form (8) when the model asks for it. */
TEST(refs_graph_blob_vtcm_as_written) {
  static const struct {
    const char *meta;
    uint32_t want;
  } cases[] = {{"meta vtcm_bytes=8388608\n", 8388608}, {"", 2097152},
               {"meta vtcm_bytes=8388608 vtcm_blob_unit=mb\n", 8}};
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "%sgraph g\n  input x f32 [1]\n  output y f32 [1]\n"
             "  op Relu x -> y\n", cases[i].meta);
    size_t len = 0;
    void *bin = fx_build_model(text, &len);
    CHECK(bin);
    qnn_system_context_handle_t h = NULL;
    CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
    const void *vinfo = NULL;
    qnn_context_binary_size_t size = 0;
    qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &size);
    free(bin);
    uint32_t version = 0, vtcm = 0;
    if (rc == QNN_SUCCESS) {
      const qnn_system_context_binary_info_t *info = vinfo;
      const unsigned char *blob = info->u.v3.graphs[0].u.v3.graph_blob_info;
      memcpy(&version, blob, 4);
      memcpy(&vtcm, blob + 16, 4); /* vtcmSize of blob info v1 */
    }
    s.p->table.system_context_free(h);
    CHECK_EQ(rc, QNN_SUCCESS);
    CHECK_EQ(version, 1);
    CHECK_MSG(vtcm == cases[i].want, "case %zu: blob says %u, want %u", i, vtcm, cases[i].want);
  }
  sys_close(&s);
}

TEST(refs_malformed_and_errors) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *info = NULL;
  qnn_context_binary_size_t sz = 0;
  char garbage[64] = "definitely not a reference binary";
  CHECK_EQ(s.p->table.system_context_get_binary_info(h, garbage, sizeof(garbage), &info, &sz),
           QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_error_t trunc = s.p->table.system_context_get_binary_info(h, bin, len - 8, &info, &sz);
  qnn_error_t null_out = s.p->table.system_context_get_binary_info(h, bin, len, NULL, &sz);
  qnn_error_t bad_h = s.p->table.system_context_get_binary_info(
      (qnn_system_context_handle_t)(uintptr_t)0x77, bin, len, &info, &sz);
  free(bin);
  CHECK_EQ(trunc, QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
  CHECK_EQ(null_out, QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(bad_h, QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(s.p->table.system_context_create(NULL), QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE);
  sys_close(&s);
}

TEST(refs_faults_env) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  setenv("HTPU_REF_FAULTS", "systemContextCreate:1:1002,systemContextGetBinaryInfo:*:30002", 1);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_COMMON_ERROR_MEM_ALLOC);
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  const void *info = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t r1 = s.p->table.system_context_get_binary_info(h, bin, len, &info, &sz);
  qnn_error_t r2 = s.p->table.system_context_get_binary_info(h, bin, len, &info, &sz);
  qnn_error_t r3 = s.p->table.system_context_get_metadata(h, bin, len, &info);
  free(bin);
  CHECK_EQ(r1, QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED);
  CHECK_EQ(r2, QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED);
  CHECK_EQ(r3, QNN_SUCCESS);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}
