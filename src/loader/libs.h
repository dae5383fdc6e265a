/*
 * libs.h - dlopen the QNN backend and system libraries and pick their providers.
 *
 * Function pointers are copied out of the provider's table slot by slot, reading only the
 * slots that the provider's API version has (qnn_versions.h); a slot the version lacks stays
 * NULL. Every failure names its stage, the path, the symbol and dlerror().
 */
#ifndef HTPU_LOADER_LIBS_H
#define HTPU_LOADER_LIBS_H

#include "qnn/qnn_abi.h"

typedef struct qnn_backend_lib {
  void *dl;
  char *path;
  const qnn_interface_t *provider;
  qnn_version_t core_api, backend_api;
  uint32_t backend_id;
  uint32_t slots; /* table slots this provider's version has */
  /* The calls the project makes; NULL when the provider's version has no such slot. */
  qnn_error_t (*property_has_capability)(uint32_t);
  qnn_error_t (*backend_create)(qnn_log_handle_t, const qnn_backend_config_t **,
                                qnn_backend_handle_t *);
  qnn_error_t (*backend_get_api_version)(qnn_api_version_t *);
  qnn_error_t (*backend_get_build_id)(const char **);
  qnn_error_t (*backend_free)(qnn_backend_handle_t);
  qnn_error_t (*context_create_from_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                            const qnn_context_config_t **, const void *,
                                            qnn_context_binary_size_t, qnn_context_handle_t *,
                                            qnn_profile_handle_t);
  qnn_error_t (*context_free)(qnn_context_handle_t, qnn_profile_handle_t);
  qnn_error_t (*graph_retrieve)(qnn_context_handle_t, const char *, qnn_graph_handle_t *);
  qnn_error_t (*graph_execute)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                               qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                               qnn_signal_handle_t);
  /* Optional: used only where 304 is announced (execute.c, "executeAsync"). */
  qnn_error_t (*graph_execute_async)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                                     qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                                     qnn_signal_handle_t, qnn_notify_fn_t, void *);
  qnn_error_t (*log_create)(qnn_log_callback_t, uint32_t, qnn_log_handle_t *);
  qnn_error_t (*log_free)(qnn_log_handle_t);
  qnn_error_t (*device_create)(qnn_log_handle_t, const qnn_device_config_t **,
                               qnn_device_handle_t *);
  qnn_error_t (*device_free)(qnn_device_handle_t);
  qnn_error_t (*error_get_message)(qnn_error_t, const char **);
  qnn_error_t (*context_validate_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                         const qnn_context_config_t **, const void *,
                                         qnn_context_binary_size_t);
  qnn_error_t (*mem_register)(qnn_context_handle_t, const struct qnn_mem_descriptor *, uint32_t,
                              qnn_mem_handle_t *);
  qnn_error_t (*mem_de_register)(const qnn_mem_handle_t *, uint32_t);
  qnn_error_t (*device_get_info)(qnn_device_handle_t, const struct qnn_device_platform_info **);
  qnn_error_t (*device_get_platform_info)(qnn_log_handle_t,
                                          const struct qnn_device_platform_info **);
  qnn_error_t (*device_free_platform_info)(qnn_log_handle_t,
                                           const struct qnn_device_platform_info *);
  qnn_error_t (*device_get_infrastructure)(void *const *);
  qnn_error_t (*signal_create)(qnn_backend_handle_t, const struct qnn_signal_config **,
                               qnn_signal_handle_t *);
  qnn_error_t (*signal_trigger)(qnn_signal_handle_t);
  qnn_error_t (*signal_free)(qnn_signal_handle_t);
  qnn_error_t (*context_create_from_binary_with_signal)(
      qnn_backend_handle_t, qnn_device_handle_t, const qnn_context_config_t **, const void *,
      qnn_context_binary_size_t, qnn_context_handle_t *, qnn_profile_handle_t,
      qnn_signal_handle_t);
  /* Optional: used only where 212 is announced (several loads in one call). */
  qnn_error_t (*context_create_from_binary_list_async)(qnn_backend_handle_t, qnn_device_handle_t,
                                                       const qnn_context_params_t **,
                                                       const qnn_context_config_t **,
                                                       qnn_signal_handle_t);
  /* Optional: used only where 215 is announced (src/model/memory.c). */
  qnn_error_t (*context_get_property)(qnn_context_handle_t, struct qnn_context_property **);
} qnn_backend_lib;

typedef struct qnn_system_lib {
  void *dl;
  char *path;
  const qnn_system_interface_t *provider;
  qnn_version_t api;
  uint32_t slots;
  qnn_error_t (*context_create)(qnn_system_context_handle_t *);
  qnn_error_t (*get_binary_info)(qnn_system_context_handle_t, void *, uint64_t, const void **,
                                 qnn_context_binary_size_t *);
  qnn_error_t (*context_free)(qnn_system_context_handle_t);
} qnn_system_lib;

/* want_backend_id 0 = any provider, preferring HTP. Returns 0 or an HTPU_E* code with the
 * thread's last error set. */
int loader_open_backend(const char *path, uint32_t want_backend_id, qnn_backend_lib *out);
void loader_close_backend(qnn_backend_lib *lib);

int loader_open_system(const char *path, qnn_system_lib *out);
void loader_close_system(qnn_system_lib *lib);

#endif
