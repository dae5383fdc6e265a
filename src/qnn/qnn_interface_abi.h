/*
 * qnn_interface_abi.h - the two function tables: the backend's (QnnInterface_getProviders)
 * and the system library's (QnnSystemInterface_getProviders), slot by slot.
 * Part of the QNN ABI subset (qnn_abi.h, its door, says how it was written and checked).
 */
#ifndef HTPU_QNN_INTERFACE_ABI_H
#define HTPU_QNN_INTERFACE_ABI_H

#include <stddef.h>

#include "qnn_config_abi.h"
#include "qnn_tensor_abi.h"
#include "qnn_types_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the backend interface: QnnInterface_getProviders ---------------------------------------
 * Slot order is the table layout of core API 2.18 (62 slots), extended by appending up to
 * 2.32 (71 slots). Never read a slot at or past qnn_core_table_slots(provider's core version).
 */
typedef struct qnn_interface_table {
  qnn_error_t (*property_has_capability)(uint32_t key);                                     /* 0 */
  qnn_error_t (*backend_create)(qnn_log_handle_t, const qnn_backend_config_t **,
                                qnn_backend_handle_t *);                                  /* 1 */
  qnn_unused_fn backend_set_config;                                                        /* 2 */
  qnn_error_t (*backend_get_api_version)(qnn_api_version_t *);                             /* 3 */
  qnn_error_t (*backend_get_build_id)(const char **);                                      /* 4 */
  qnn_unused_fn backend_register_op_package;                                               /* 5 */
  qnn_unused_fn backend_get_supported_operations;                                          /* 6 */
  qnn_unused_fn backend_validate_op_config;                                                /* 7 */
  qnn_error_t (*backend_free)(qnn_backend_handle_t);                                       /* 8 */
  qnn_unused_fn context_create;                                                            /* 9 */
  qnn_unused_fn context_set_config;                                                        /* 10 */
  qnn_unused_fn context_get_binary_size;                                                   /* 11 */
  qnn_unused_fn context_get_binary;                                                        /* 12 */
  qnn_error_t (*context_create_from_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                            const qnn_context_config_t **, const void *,
                                            qnn_context_binary_size_t, qnn_context_handle_t *,
                                            qnn_profile_handle_t);                        /* 13 */
  qnn_error_t (*context_free)(qnn_context_handle_t, qnn_profile_handle_t);                 /* 14 */
  qnn_unused_fn graph_create;                                                              /* 15 */
  qnn_unused_fn graph_create_subgraph;                                                     /* 16 */
  qnn_error_t (*graph_set_config)(qnn_graph_handle_t, const qnn_graph_config_t **);         /* 17 */
  qnn_unused_fn graph_add_node;                                                            /* 18 */
  qnn_unused_fn graph_finalize;                                                            /* 19 */
  qnn_error_t (*graph_retrieve)(qnn_context_handle_t, const char *, qnn_graph_handle_t *); /* 20 */
  qnn_error_t (*graph_execute)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                               qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                               qnn_signal_handle_t);                                      /* 21 */
  /* one FIFO per graph shared with graph_execute; returns once queued (blocks while full) */
  qnn_error_t (*graph_execute_async)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                                     qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                                     qnn_signal_handle_t, qnn_notify_fn_t,
                                     void *notify_param);                                 /* 22 */
  qnn_unused_fn tensor_create_context_tensor;                                              /* 23 */
  qnn_unused_fn tensor_create_graph_tensor;                                                /* 24 */
  qnn_error_t (*log_create)(qnn_log_callback_t, uint32_t, qnn_log_handle_t *);             /* 25 */
  qnn_error_t (*log_set_log_level)(qnn_log_handle_t, uint32_t);                            /* 26 */
  qnn_error_t (*log_free)(qnn_log_handle_t);                                               /* 27 */
  qnn_error_t (*profile_create)(qnn_backend_handle_t, uint32_t level,
                                qnn_profile_handle_t *);                                  /* 28 */
  qnn_error_t (*profile_set_config)(qnn_profile_handle_t,
                                    const struct qnn_profile_config **);                  /* 29 */
  qnn_error_t (*profile_get_events)(qnn_profile_handle_t, const uint64_t **ids,
                                    uint32_t *num);                                       /* 30 */
  qnn_error_t (*profile_get_sub_events)(uint64_t event, const uint64_t **ids,
                                        uint32_t *num);                                   /* 31 */
  qnn_error_t (*profile_get_event_data)(uint64_t event, struct qnn_profile_event_data *); /* 32 */
  qnn_error_t (*profile_get_extended_event_data)(
      uint64_t event, struct qnn_profile_extended_event_data *);                          /* 33 */
  qnn_error_t (*profile_free)(qnn_profile_handle_t);                                       /* 34 */
  qnn_error_t (*mem_register)(qnn_context_handle_t, const struct qnn_mem_descriptor *, uint32_t,
                              qnn_mem_handle_t *);                                        /* 35 */
  qnn_error_t (*mem_de_register)(const qnn_mem_handle_t *, uint32_t);                     /* 36 */
  qnn_error_t (*device_get_platform_info)(qnn_log_handle_t,
                                          const struct qnn_device_platform_info **); /* 37 */
  qnn_error_t (*device_free_platform_info)(qnn_log_handle_t,
                                           const struct qnn_device_platform_info *); /* 38 */
  /* The argument is the address of a pointer the backend sets to its own memory. */
  qnn_error_t (*device_get_infrastructure)(void *const *infrastructure);                   /* 39 */
  qnn_error_t (*device_create)(qnn_log_handle_t, const qnn_device_config_t **,
                               qnn_device_handle_t *);                                    /* 40 */
  qnn_unused_fn device_set_config;                                                         /* 41 */
  qnn_error_t (*device_get_info)(qnn_device_handle_t,
                                 const struct qnn_device_platform_info **);               /* 42 */
  qnn_error_t (*device_free)(qnn_device_handle_t);                                         /* 43 */
  qnn_error_t (*signal_create)(qnn_backend_handle_t, const struct qnn_signal_config **,
                               qnn_signal_handle_t *);                                    /* 44 */
  qnn_error_t (*signal_set_config)(qnn_signal_handle_t,
                                   const struct qnn_signal_config **);                    /* 45 */
  qnn_error_t (*signal_trigger)(qnn_signal_handle_t);                                      /* 46 */
  qnn_error_t (*signal_free)(qnn_signal_handle_t);                                         /* 47 */
  qnn_error_t (*error_get_message)(qnn_error_t, const char **);                            /* 48 */
  qnn_unused_fn error_get_verbose_message;                                                 /* 49 */
  qnn_unused_fn error_free_verbose_message;                                                /* 50 */
  qnn_unused_fn graph_prepare_execution_environment;                                       /* 51 */
  qnn_unused_fn graph_release_execution_environment;                                       /* 52 */
  qnn_unused_fn graph_get_property;                                                        /* 53 */
  qnn_error_t (*context_validate_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                         const qnn_context_config_t **, const void *,
                                         qnn_context_binary_size_t);                      /* 54 */
  qnn_error_t (*context_create_from_binary_with_signal)(
      qnn_backend_handle_t, qnn_device_handle_t, const qnn_context_config_t **, const void *,
      qnn_context_binary_size_t, qnn_context_handle_t *, qnn_profile_handle_t,
      qnn_signal_handle_t);                                                               /* 55 */
  /* contexts are created in the background and notified (qnn_context_notify_fn_t) */
  qnn_error_t (*context_create_from_binary_list_async)(
      qnn_backend_handle_t, qnn_device_handle_t, const qnn_context_params_t **,
      const qnn_context_config_t **list_config, qnn_signal_handle_t);                     /* 56 */
  qnn_unused_fn tensor_update_graph_tensors;                                               /* 57 */
  qnn_unused_fn tensor_update_context_tensors;                                             /* 58 */
  qnn_unused_fn context_get_binary_section_size;                                           /* 59 */
  qnn_unused_fn context_get_binary_section;                                                /* 60 */
  qnn_unused_fn context_apply_binary_section;                                              /* 61 */
  /* ---- appended after core API 2.18 ---- */
  qnn_unused_fn backend_get_property;                                                      /* 62 */
  /* a NULL-terminated array of properties the client allocated and set the options of */
  qnn_error_t (*context_get_property)(qnn_context_handle_t,
                                      struct qnn_context_property **);                    /* 63 */
  qnn_unused_fn context_get_incremental_binary;                                            /* 64 */
  qnn_unused_fn context_release_incremental_binary;                                        /* 65 */
  qnn_unused_fn context_finalize;                                                          /* 66 */
  qnn_unused_fn global_config_set;                                                         /* 67 */
  qnn_unused_fn context_create_from_binary_with_callback;                                  /* 68 */
  qnn_unused_fn context_get_binary_section_update;                                         /* 69 */
  qnn_unused_fn context_free_binary_section_update;                                        /* 70 */
} qnn_interface_table_t;

#define QNN_INTERFACE_SLOT(field) \
  ((uint32_t)(offsetof(qnn_interface_table_t, field) / sizeof(void (*)(void))))

typedef struct qnn_interface {
  uint32_t backend_id;
  const char *provider_name;
  qnn_api_version_t api_version;
  qnn_interface_table_t table; /* the provider may have fewer slots: see QNN_INTERFACE_SLOT */
} qnn_interface_t;

typedef qnn_error_t (*qnn_interface_get_providers_fn)(const qnn_interface_t ***provider_list,
                                                      uint32_t *num_providers);
#define QNN_INTERFACE_GET_PROVIDERS_SYMBOL "QnnInterface_getProviders"

/* ---- the system interface: QnnSystemInterface_getProviders ----------------------------------
 * Append-only: System API 1.1 has the first 4 slots, 1.7 all 16.
 */
typedef struct qnn_system_interface_table {
  qnn_error_t (*system_context_create)(qnn_system_context_handle_t *);                    /* 0 */
  qnn_error_t (*system_context_get_binary_info)(qnn_system_context_handle_t, void *, uint64_t,
                                                const void **binary_info,
                                                qnn_context_binary_size_t *);             /* 1 */
  qnn_error_t (*system_context_get_metadata)(qnn_system_context_handle_t, const void *,
                                             uint64_t, const void **binary_info);         /* 2 */
  qnn_error_t (*system_context_free)(qnn_system_context_handle_t);                         /* 3 */
  qnn_unused_fn system_tensor_get_memory_footprint;                                        /* 4 */
  qnn_unused_fn system_log_create;                                                         /* 5 */
  qnn_unused_fn system_log_set_log_level;                                                  /* 6 */
  qnn_unused_fn system_log_free;                                                           /* 7 */
  qnn_unused_fn system_dlc_create_from_file;                                               /* 8 */
  qnn_unused_fn system_dlc_create_from_binary;                                             /* 9 */
  qnn_unused_fn system_dlc_compose_graphs;                                                 /* 10 */
  qnn_unused_fn system_dlc_get_op_mappings;                                                /* 11 */
  qnn_unused_fn system_dlc_free;                                                           /* 12 */
  /* the target is passed by value */
  qnn_error_t (*system_profile_create_serialization_target)(
      struct qnn_system_profile_target, struct qnn_system_profile_target_config *,
      uint32_t num_configs, void **target);                                               /* 13 */
  qnn_error_t (*system_profile_serialize_event_data)(
      void *target, const struct qnn_system_profile_data **, uint32_t num);               /* 14 */
  qnn_error_t (*system_profile_free_serialization_target)(void *target);                  /* 15 */
} qnn_system_interface_table_t;

#define QNN_SYSTEM_INTERFACE_SLOT(field) \
  ((uint32_t)(offsetof(qnn_system_interface_table_t, field) / sizeof(void (*)(void))))

typedef struct qnn_system_interface {
  uint32_t backend_id;
  const char *provider_name;
  qnn_version_t system_api_version;
  qnn_system_interface_table_t table;
} qnn_system_interface_t;

typedef qnn_error_t (*qnn_system_interface_get_providers_fn)(
    const qnn_system_interface_t ***provider_list, uint32_t *num_providers);
#define QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL "QnnSystemInterface_getProviders"

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_INTERFACE_ABI_H */
