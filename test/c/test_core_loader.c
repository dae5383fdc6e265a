/* Loader: library loading, provider selection by backend id and API version, staged errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static int open_with(const char *backend, const char *system, uint32_t backend_id,
                     htpu_runtime **rt) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  if (backend) o.backend_lib = backend;
  if (system) o.system_lib = system;
  o.backend_id = backend_id;
  return htpu_runtime_open(&o, rt);
}

TEST(loader_default_reference_provider) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK_EQ(info.backend_id, 6);
  CHECK(info.provider_name[0] != '\0');
  CHECK_EQ(info.core_api_version.major, 2);
  CHECK(info.build_id[0] != '\0');
  CHECK(info.system_provider_name[0] != '\0');
  CHECK_EQ(info.system_api_version.major, 1);
  CHECK(info.has_device);
  CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
  CHECK(rt == NULL);
}

TEST(loader_missing_backend_library_names_stage_and_path) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  int rc = open_with("/nonexistent/libQnnHtp.so", NULL, 0, &rt);
  CHECK_EQ(rc, HTPU_ELOAD_BACKEND);
  CHECK(rt == NULL);
  CHECK_STR_CONTAINS(htpu_last_error(), "loading the backend library");
  CHECK_STR_CONTAINS(htpu_last_error(), "/nonexistent/libQnnHtp.so");
  CHECK_STR_CONTAINS(htpu_last_error(), "No such file");
}

TEST(loader_library_without_entry_point_names_symbol) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  /* The system library is a real shared object without QnnInterface_getProviders. */
  int rc = open_with(test_build_path("libhtpu_refsystem.so"), NULL, 0, &rt);
  CHECK_EQ(rc, HTPU_ESYMBOL);
  CHECK_STR_CONTAINS(htpu_last_error(), "resolving the symbol 'QnnInterface_getProviders'");
  CHECK_STR_CONTAINS(htpu_last_error(), "libhtpu_refsystem.so");
}

TEST(loader_no_providers) {
  fx_reset_env();
  setenv("HTPU_REF_PROVIDERS", "", 1);
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_ENO_PROVIDER);
  CHECK_STR_CONTAINS(htpu_last_error(), "no provider");
  fx_reset_env();
}

TEST(loader_get_providers_error_code) {
  fx_reset_env();
  setenv("HTPU_REF_GETPROVIDERS_ERROR", "1002", 1);
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_ENO_PROVIDER);
  CHECK_EQ(htpu_last_qnn_code(), 1002);
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN_COMMON_ERROR_MEM_ALLOC");
  fx_reset_env();
}

TEST(loader_rejects_old_core_api) {
  fx_reset_env();
  /* 2.7's table differs mid-table; 2.17 is below the verified floor. */
  const char *specs[] = {"OLD:6:2.7.2:5.13.0", "OLD:6:2.17.0:5.24.0", "NEXT:6:3.0.0:6.0.0",
                         "ONE:6:1.99.0:5.0.0"};
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    setenv("HTPU_REF_PROVIDERS", specs[i], 1);
    htpu_runtime *rt = NULL;
    int rc = open_with(NULL, NULL, 0, &rt);
    CHECK_MSG(rc == HTPU_EVERSION, "%s: got %s", specs[i], htpu_err_name(rc));
    CHECK_STR_CONTAINS(htpu_last_error(), "version");
    char name[16];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(specs[i], ":"), specs[i]);
    CHECK_STR_CONTAINS(htpu_last_error(), name); /* the message lists what was found */
  }
  fx_reset_env();
}

TEST(loader_accepts_floor_and_newer_minors) {
  fx_reset_env();
  /* 2.18 has a 62-slot table: reading any slot past it would trip ASan in the backend's
   * exactly-sized provider allocation. 2.40 is newer than anything we know: it has at least
   * the 71 slots of 2.32. */
  const char *specs[] = {"FLOOR:6:2.18.0:5.25.0", "MID:6:2.25.1:5.35.0", "NEW:6:2.40.0:5.50.0"};
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    setenv("HTPU_REF_PROVIDERS", specs[i], 1);
    htpu_runtime *rt = NULL;
    int rc = open_with(NULL, NULL, 0, &rt);
    CHECK_MSG(rc == HTPU_OK, "%s: %s", specs[i], htpu_last_error());
    htpu_runtime_info info;
    CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
    CHECK_EQ(strncmp(info.provider_name, specs[i], strlen(info.provider_name)), 0);
    htpu_runtime_close(&rt);
  }
  fx_reset_env();
}

TEST(loader_picks_by_backend_id) {
  fx_reset_env();
  setenv("HTPU_REF_PROVIDERS", "CPUISH:3:2.32.0:1.0.0,HTPISH:6:2.32.0:5.42.0", 1);
  htpu_runtime *rt = NULL;
  htpu_runtime_info info;
  /* Any: HTP preferred even though it is listed second. */
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_OK);
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK(strcmp(info.provider_name, "HTPISH") == 0);
  htpu_runtime_close(&rt);
  /* Explicit id. */
  CHECK_EQ(open_with(NULL, NULL, 3, &rt), HTPU_OK);
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK(strcmp(info.provider_name, "CPUISH") == 0);
  CHECK_EQ(info.backend_id, 3);
  htpu_runtime_close(&rt);
  /* An id nobody offers. */
  CHECK_EQ(open_with(NULL, NULL, 4, &rt), HTPU_ENO_PROVIDER);
  CHECK_STR_CONTAINS(htpu_last_error(), "backend id 4");
  CHECK_STR_CONTAINS(htpu_last_error(), "CPUISH");
  fx_reset_env();
}

TEST(loader_skips_unsupported_provider_for_supported_one) {
  fx_reset_env();
  setenv("HTPU_REF_PROVIDERS", "OLD:6:2.7.0:5.13.0,GOOD:6:2.32.0:5.42.0", 1);
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK(strcmp(info.provider_name, "GOOD") == 0);
  htpu_runtime_close(&rt);
  fx_reset_env();
}

TEST(loader_system_library_stages) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, "/nonexistent/libQnnSystem.so", 0, &rt), HTPU_ELOAD_SYSTEM);
  CHECK_STR_CONTAINS(htpu_last_error(), "loading the system library");
  CHECK_STR_CONTAINS(htpu_last_error(), "/nonexistent/libQnnSystem.so");
  /* The backend library is not a system library. */
  CHECK_EQ(open_with(NULL, test_build_path("libhtpu_refbackend.so"), 0, &rt), HTPU_ESYMBOL);
  CHECK_STR_CONTAINS(htpu_last_error(), "QnnSystemInterface_getProviders");
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "SYS:1.0.0", 1);
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_EVERSION);
  CHECK_STR_CONTAINS(htpu_last_error(), "system API");
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "SYS:2.0.0", 1);
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_EVERSION);
  /* 1.1 has only four slots: enough for introspection. */
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "SYS11:1.1.0", 1);
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK_EQ(info.system_api_version.minor, 1);
  htpu_runtime_close(&rt);
  fx_reset_env();
}

TEST(loader_backend_create_failure_is_staged_with_qnn_code) {
  fx_reset_env();
  /* 4004 is a configuration error, not a start-up hiccup: not retried. */
  setenv("HTPU_REF_FAULTS", "backendCreate:1:4004", 1);
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 4004);
  CHECK_STR_CONTAINS(htpu_last_error(), "creating the QNN backend");
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN_BACKEND_ERROR_INVALID_ARGUMENT");
  fx_reset_env();
  setenv("HTPU_REF_FAULTS", "deviceCreate:1:14001", 1);
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 14001);
  CHECK_STR_CONTAINS(htpu_last_error(), "creating the QNN device");
  fx_reset_env();
  htpu_stats st;
  htpu_stats_get(&st);
  CHECK_EQ(st.live_runtimes, 0);
}

TEST(loader_dsp_library_path_reaches_c_environment) {
  fx_reset_env();
  unsetenv("DSP_LIBRARY_PATH");
  unsetenv("ADSP_LIBRARY_PATH");
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.dsp_library_path = "/usr/lib/dsp;/opt/dsp";
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_OK);
  CHECK(getenv("DSP_LIBRARY_PATH") && strcmp(getenv("DSP_LIBRARY_PATH"), "/usr/lib/dsp;/opt/dsp") == 0);
  CHECK(getenv("ADSP_LIBRARY_PATH") && strcmp(getenv("ADSP_LIBRARY_PATH"), "/usr/lib/dsp;/opt/dsp") == 0);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK(strcmp(info.dsp_library_path, "/usr/lib/dsp;/opt/dsp") == 0);
  htpu_runtime_close(&rt);
  unsetenv("DSP_LIBRARY_PATH");
  unsetenv("ADSP_LIBRARY_PATH");
}

TEST(loader_bad_options) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.log_level = 9;
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "log_level");
  CHECK_EQ(htpu_runtime_open(&o, NULL), HTPU_EINVAL);
}

/* The real libQnnHtp fails logCreate with 11002 where no DSP is reachable. QNN allows a NULL
 * log handle, so the runtime goes on without one and says so. */
TEST(loader_runtime_opens_without_qnn_log_when_log_create_fails) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  CHECK_EQ(open_with(NULL, NULL, 0, &rt), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK(info.log_note && info.log_note[0] == '\0'); /* a log: nothing to say */
  htpu_runtime_close(&rt);

  CHECK_EQ(fx_ref_arm("logCreate:*:11002"), 0);
  unsigned long v0 = fx_ref_violations();
  int rc = open_with(NULL, NULL, 0, &rt);
  CHECK_MSG(rc == HTPU_OK, "%s: %s", htpu_err_name(rc), htpu_last_error());
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK_STR_CONTAINS(info.log_note, "QNN log unavailable: logCreate returned 11002");
  CHECK_STR_CONTAINS(info.log_note, "QNN_LOG_ERROR_INITIALIZATION");
  CHECK(info.has_device);
  CHECK_EQ(info.startup_attempts, 1);
  /* the backend and device work without a log handle: a model loads and runs */
  const char *path = fx_build_model_file("nolog.bin", FX_ADD_F32);
  CHECK(path);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(htpu_context_open_file(rt, path, &ctx) == HTPU_OK, "%s", htpu_last_error());
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_OK);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4] = {0};
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  CHECK_MSG(htpu_graph_execute(g, in, 2, &out, 1, NULL) == HTPU_OK, "%s", htpu_last_error());
  CHECK(y[3] == 44.0f);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  fx_ref_disarm();
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}
