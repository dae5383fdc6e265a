/* test_core_probe.c - a backend's provider facts without a backend (htpu_backend_probe), and
 * the QAIRT release a build id names (htpu_qairt_version_from_build_id). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static const char *ref_backend(void) { return test_build_path("libhtpu_refbackend.so"); }

TEST(probe_reports_the_reference_provider) {
  fx_reset_env();
  htpu_backend_facts f;
  memset(&f, 0x5a, sizeof f);
  CHECK_MSG(htpu_backend_probe(ref_backend(), 0, &f) == HTPU_OK, "%s", htpu_last_error());
  CHECK(strcmp(f.provider_name, "HTPU_REFERENCE") == 0);
  CHECK_EQ(f.backend_id, 6);
  CHECK_EQ(f.core_api_version.major, 2);
  CHECK_EQ(f.core_api_version.minor, 32);
  CHECK_EQ(f.backend_api_version.major, 5);
  CHECK(strcmp(f.build_id, "htpu-reference-0.1.0") == 0);
  /* the same facts as an open runtime reports */
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(rt, &ri), HTPU_OK);
  CHECK(strcmp(ri.provider_name, f.provider_name) == 0);
  CHECK(strcmp(ri.build_id, f.build_id) == 0);
  CHECK_EQ(ri.backend_api_version.minor, f.backend_api_version.minor);
  htpu_runtime_close(&rt);
}

TEST(probe_creates_nothing_so_a_failing_backend_create_does_not_matter) {
  fx_reset_env();
  /* Every backendCreate and logCreate fails, as where no DSP is reachable. */
  CHECK_EQ(fx_ref_arm("logCreate:*:11002,backendCreate:*:4000"), 0);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.startup_retries = 0;
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 4000);
  htpu_backend_facts f;
  CHECK_MSG(htpu_backend_probe(ref_backend(), 0, &f) == HTPU_OK, "%s", htpu_last_error());
  CHECK(strcmp(f.provider_name, "HTPU_REFERENCE") == 0);
  CHECK(f.build_id[0] != '\0');
  fx_ref_disarm();
  htpu_stats st;
  htpu_stats_get(&st);
  CHECK_EQ(st.live_runtimes, 0);
}

TEST(probe_picks_the_provider_the_runtime_would) {
  fx_reset_env();
  setenv("HTPU_REF_PROVIDERS", "CPUISH:3:2.32.0:1.0.0,HTPISH:6:2.25.0:5.35.0", 1);
  setenv("HTPU_REF_BUILD_ID", "v2.25.0.240728104910_97711", 1);
  htpu_backend_facts f;
  CHECK_EQ(htpu_backend_probe(ref_backend(), 0, &f), HTPU_OK); /* HTP preferred */
  CHECK(strcmp(f.provider_name, "HTPISH") == 0);
  CHECK_EQ(f.core_api_version.minor, 25);
  CHECK(strcmp(f.build_id, "v2.25.0.240728104910_97711") == 0);
  CHECK_EQ(htpu_backend_probe(ref_backend(), 3, &f), HTPU_OK);
  CHECK(strcmp(f.provider_name, "CPUISH") == 0);
  CHECK_EQ(f.backend_id, 3);
  fx_reset_env();
}

TEST(probe_failures_are_staged_and_zero_the_facts) {
  fx_reset_env();
  htpu_backend_facts f;
  CHECK_EQ(htpu_backend_probe(ref_backend(), 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "out is NULL");
  memset(&f, 0x5a, sizeof f);
  CHECK_EQ(htpu_backend_probe("/nonexistent/libQnnHtp.so", 0, &f), HTPU_ELOAD_BACKEND);
  CHECK_STR_CONTAINS(htpu_last_error(), "/nonexistent/libQnnHtp.so");
  CHECK_EQ(f.provider_name[0], '\0');
  CHECK_EQ(f.backend_id, 0);
  CHECK_EQ(htpu_backend_probe(test_build_path("libhtpu_refsystem.so"), 0, &f), HTPU_ESYMBOL);
  CHECK_EQ(htpu_backend_probe(ref_backend(), 4, &f), HTPU_ENO_PROVIDER);
  CHECK_STR_CONTAINS(htpu_last_error(), "backend id 4");
  setenv("HTPU_REF_PROVIDERS", "OLD:6:2.7.0:5.13.0", 1);
  memset(&f, 0x5a, sizeof f);
  CHECK_EQ(htpu_backend_probe(ref_backend(), 0, &f), HTPU_EVERSION);
  CHECK_STR_CONTAINS(htpu_last_error(), "OLD");
  CHECK_EQ(f.build_id[0], '\0');
  fx_reset_env();
}

TEST(qairt_version_from_real_looking_build_ids) {
  static const struct {
    const char *id;
    uint32_t major, minor, patch;
  } good[] = {
      {"v2.25.0.240728104910_97711", 2, 25, 0}, /* x86-64 QAIRT 2.25 (docs/abi.md) */
      {"v2.42.0.251225", 2, 42, 0},
      {"v2.31.0.250130151446_114721", 2, 31, 0},
      {"2.18.0", 2, 18, 0},
      {"v2.10.40_abc", 2, 10, 40},
      {"v10.0.1-rc1", 10, 0, 1},
      {"v2.26.2+local", 2, 26, 2},
      {"v2.25.0.", 2, 25, 0},
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    htpu_version3 v = {9, 9, 9};
    CHECK_MSG(htpu_qairt_version_from_build_id(good[i].id, &v) == HTPU_OK, "%s: %s", good[i].id,
              htpu_last_error());
    CHECK_MSG(v.major == good[i].major && v.minor == good[i].minor && v.patch == good[i].patch,
              "%s -> %u.%u.%u", good[i].id, v.major, v.minor, v.patch);
  }
}

TEST(qairt_version_rejects_malformed_build_ids) {
  static const char *const bad[] = {
      "",
      "v",
      "v2",
      "v2.25",
      "v2.25.",
      "v2..0",
      "v2.25.0x",
      "v2.25.0 ",
      " v2.25.0",
      "vv2.25.0",
      "V2.25.0",
      "v2.-25.0",
      "htpu-reference-0.1.0",
      "v1234567890.0.0", /* more digits than a release number has */
      "release 2.25.0",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    htpu_version3 v = {9, 9, 9};
    int rc = htpu_qairt_version_from_build_id(bad[i], &v);
    CHECK_MSG(rc == HTPU_EINVAL, "'%s' accepted as %u.%u.%u", bad[i], v.major, v.minor, v.patch);
    CHECK_MSG(v.major == 0 && v.minor == 0 && v.patch == 0, "'%s': out not zeroed", bad[i]);
    CHECK_STR_CONTAINS(htpu_last_error(), "names no QAIRT release");
  }
  htpu_version3 v;
  CHECK_EQ(htpu_qairt_version_from_build_id(NULL, &v), HTPU_EINVAL);
  CHECK_EQ(htpu_qairt_version_from_build_id("v2.25.0", NULL), HTPU_EINVAL);
}
