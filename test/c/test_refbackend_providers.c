/* test_refbackend_providers.c - the reference backend's providers: versions, table slots,
 * QNN_INTERFACE specs in HTPU_REF_PROVIDERS.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_versions.h"
#include "refb_rig.h"
#include "test.h"

/* ---- providers ---------------------------------------------------------------------------- */

TEST(refb_providers_default) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t **list = NULL, **again = NULL;
  uint32_t n = 0, n2 = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 1);
  const qnn_interface_t *p = list[0];
  CHECK(strcmp(p->provider_name, "HTPU_REFERENCE") == 0);
  CHECK_EQ(p->backend_id, QNN_BACKEND_ID_HTP);
  CHECK_EQ(p->api_version.core_api_version.major, 2);
  CHECK_EQ(p->api_version.core_api_version.minor, 32);
  CHECK_EQ(p->api_version.backend_api_version.major, 5);
  CHECK_EQ(p->api_version.backend_api_version.minor, 42);
  CHECK(slots_all_set(p, offsetof(qnn_interface_t, table), 71));
  CHECK(block_size_ok(p, offsetof(qnn_interface_t, table) + 71 * sizeof(qnn_unused_fn)));
  /* same spec, same arrays */
  CHECK_EQ(c.get_providers(&again, &n2), QNN_SUCCESS);
  CHECK(again == list && n2 == 1);
  /* unimplemented slots answer NOT_SUPPORTED */
  qnn_error_t (*ctx_create)(void) = (qnn_error_t(*)(void))p->table.context_create;
  CHECK_EQ(ctx_create(), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(p->table.property_has_capability(QNN_PROPERTY_GROUP_DEVICE), QNN_SUCCESS);
  CHECK_EQ(p->table.property_has_capability(1104), QNN_COMMON_ERROR_NOT_SUPPORTED);
  const char *build_id = NULL;
  CHECK_EQ(p->table.backend_get_build_id(&build_id), QNN_SUCCESS);
  CHECK(strcmp(build_id, "htpu-reference-0.1.0") == 0);
  qnn_api_version_t v;
  CHECK_EQ(p->table.backend_get_api_version(&v), QNN_SUCCESS);
  CHECK_EQ(v.core_api_version.minor, 32);
  const char *msg = NULL;
  CHECK_EQ(p->table.error_get_message(QNN_GRAPH_ERROR_INVALID_TENSOR, &msg), QNN_SUCCESS);
  CHECK_STR_CONTAINS(msg, "tensor");
  CHECK(p->table.error_get_message(12345, &msg) != QNN_SUCCESS);
  ctl_close(&c);
}

TEST(refb_providers_spec_versions_and_slots) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  setenv("HTPU_REF_PROVIDERS",
         "OLD_HTP:6:2.18.0:5.25.0,CPU_ONE:3:2.32.1:1.2.3,ANCIENT:6:2.7.2:5.13.0", 1);
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 3);
  size_t off = offsetof(qnn_interface_t, table);
  CHECK(strcmp(list[0]->provider_name, "OLD_HTP") == 0);
  CHECK_EQ(list[0]->api_version.core_api_version.minor, 18);
  CHECK_EQ(list[0]->api_version.backend_api_version.minor, 25);
  uint32_t old_slots = qnn_core_table_slots(list[0]->api_version.core_api_version);
  CHECK_EQ(old_slots, 62);
  CHECK(slots_all_set(list[0], off, old_slots));
  CHECK(block_size_ok(list[0], off + old_slots * sizeof(qnn_unused_fn)));
  CHECK_EQ(list[1]->backend_id, 3);
  CHECK_EQ(list[1]->api_version.core_api_version.patch, 1);
  CHECK_EQ(list[1]->api_version.backend_api_version.patch, 3);
  CHECK(block_size_ok(list[1], off + 71 * sizeof(qnn_unused_fn)));
  /* unsupported 2.7: a different size, and nothing in it works */
  CHECK_EQ(qnn_core_table_slots(list[2]->api_version.core_api_version), 0);
  CHECK(block_size_ok(list[2], off + 44 * sizeof(qnn_unused_fn)));
  CHECK(slots_all_set(list[2], off, 44));
  CHECK_EQ(list[2]->table.property_has_capability(QNN_PROPERTY_GROUP_DEVICE),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  /* backendGetApiVersion follows the first provider handed out */
  qnn_api_version_t v;
  CHECK_EQ(list[0]->table.backend_get_api_version(&v), QNN_SUCCESS);
  CHECK_EQ(v.core_api_version.minor, 18);
  ctl_close(&c);
}

TEST(refb_providers_empty_error_and_bad_spec) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t **list = (const qnn_interface_t **)&c;
  uint32_t n = 99;
  setenv("HTPU_REF_PROVIDERS", "", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 0);
  CHECK(list == NULL);
  setenv("HTPU_REF_PROVIDERS", "X:6:2.32", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  setenv("HTPU_REF_PROVIDERS", "X:99:2.32.0:5.42.0", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  unsetenv("HTPU_REF_PROVIDERS");
  setenv("HTPU_REF_GETPROVIDERS_ERROR", "1008", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES);
  unsetenv("HTPU_REF_GETPROVIDERS_ERROR");
  CHECK_EQ(c.get_providers(NULL, &n), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 1);
  ctl_close(&c);
}
