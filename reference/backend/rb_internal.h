/*
 * rb_internal.h - state shared by the files of the reference backend library.
 *
 * Every object the caller gets a handle to lives in one registry guarded by one mutex. Handles
 * are serial numbers, not pointers: a stale or foreign handle is simply not found (an
 * INVALID_HANDLE error, never a dereference), and a loader that dereferences a handle crashes
 * here as it would on the board.
 */
#ifndef HTPU_RB_INTERNAL_H
#define HTPU_RB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_htp_abi.h"
#include "ref_faultrules.h"
#include "refmodel.h"

#define RB_EXPORT __attribute__((visibility("default")))
#define RB_BUILD_ID "htpu-reference-0.1.0"

/* Error-API codes (QnnError.h range 10000) not in the project's ABI subset. */
#define RB_ERROR_INVALID_ARGUMENT 10000u
#define RB_ERROR_INVALID_ERROR_HANDLE 10001u

typedef struct rb_log {
  struct rb_log *next;
  uintptr_t handle;
  qnn_log_callback_t cb; /* NULL: lines go to stderr, as QnnLog.h allows */
  _Atomic uint32_t level;
  uint32_t users; /* backends and devices logging through it (registry lock) */
} rb_log;

/* The HTP device a backend reports (HTPU_REF_DEVICE at backendCreate). */
typedef struct rb_hw {
  uint32_t arch;      /* 68 = v68 */
  uint32_t soc_model; /* 35 = QCS6490 in binaries; the board reportedly says 93 */
  /* VTCM as the extension's vtcmSize reports it: in MB (vtcm_mb=, the default 2) or in bytes
   * (vtcm_bytes=), the two encodings the core accepts; at most one is nonzero. */
  uint32_t vtcm_mb;
  uint32_t vtcm_bytes;
  uint32_t signed_pd; /* signed process domain available (the board uses unsigned PD) */
  uint32_t dlbc;
} rb_hw;

/* A platform-info chain handed out by deviceGetPlatformInfo (or kept by a device for
 * deviceGetInfo). Every piece is its own heap block. */
typedef struct rb_pinfo {
  struct rb_pinfo *next;
  qnn_device_platform_info_t *info;
  qnn_device_hardware_device_info_t *dev;
  qnn_device_core_info_t *core;
  qnn_htp_device_info_extension_t *ext;
} rb_pinfo;

/* One power config id (perf infrastructure) and what was last applied through it. */
typedef struct rb_power {
  struct rb_power *next;
  uint32_t id;
  uint32_t device_id, core_id;
  uint32_t set_calls, rejected_calls;
  bool has_dcvs, has_rpc_latency, has_rpc_polling;
  qnn_htp_dcvs_v3_t dcvs; /* merged: each set_* group keeps its last applied values */
  uint32_t rpc_latency_us, rpc_polling_us;
} rb_power;

typedef struct rb_backend {
  struct rb_backend *next;
  uintptr_t handle;
  uint32_t backend_id; /* of the provider whose backendCreate made it */
  qnn_api_version_t api; /* versions of the providers current at backendCreate */
  rb_hw hw;
  rb_log *log;
  fr_set faults;       /* HTPU_REF_FAULTS/HTPU_REF_LATENCY at backendCreate (fault lock) */
  atomic_bool fatal;   /* an injected 1011: the DSP did not recover */
  atomic_int busy;     /* calls using it outside the registry lock (fault latency, execute) */
  rb_pinfo *pinfos;    /* deviceGetPlatformInfo answers not yet freed (registry lock) */
  rb_power *powers;    /* live power config ids it created (registry lock) */
} rb_backend;

typedef struct rb_device {
  struct rb_device *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_log *log;
  rb_pinfo *info; /* deviceGetInfo's answer, kept until deviceFree */
} rb_device;

struct rb_context;
typedef struct rb_graph {
  uintptr_t handle;
  struct rb_context *ctx;
  uint32_t index;
  atomic_int in_flight;       /* executes between handle check and return */
  pthread_mutex_t exec_lock;  /* QNN queues executes of one graph: we serialize them */
} rb_graph;

typedef struct rb_context {
  struct rb_context *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_device *device; /* NULL: the default device */
  ref_model *model;
  uint32_t num_graphs;
  rb_graph *graphs;
  atomic_int executing; /* executes in flight over all its graphs */
  atomic_bool stale;    /* lost in a DSP subsystem restart: only contextFree works */
} rb_context;

/* A registered shared buffer (memRegister). The backend maps the fd itself. */
typedef struct rb_mem {
  struct rb_mem *next;
  uintptr_t handle;
  rb_context *ctx;
  uint32_t mem_type;   /* QNN_MEM_TYPE_ION or _CUSTOM */
  int fd;
  uint64_t ino, dev;   /* identity of the file behind fd at registration */
  uint64_t size;       /* of the whole allocation */
  uint64_t offset;
  uint64_t bytes;      /* of the tensor: dims x element size */
  uint32_t data_type;
  uint32_t rank;
  uint32_t dims[8];
  unsigned char *map;  /* whole file, MAP_SHARED */
  atomic_int in_use;   /* executes reading/writing it */
} rb_mem;

typedef struct rb_registry {
  pthread_mutex_t lock;
  uintptr_t next_handle;
  uint32_t next_power_id; /* power config ids are process-wide, like on the board (perf.c) */
  rb_log *logs;
  rb_backend *backends;
  rb_device *devices;
  rb_context *contexts;
  rb_mem *mems;
} rb_registry;

extern rb_registry g_rb;

/* ---- registry.c (all with g_rb.lock held) ---- */
uintptr_t rb_new_handle(void);
rb_log *rb_find_log(const void *h);
rb_backend *rb_find_backend(const void *h);
rb_device *rb_find_device(const void *h);
rb_context *rb_find_context(const void *h);
rb_graph *rb_find_graph(const void *h);
/* Unlinks and frees a context that has no execute in flight (and its mem handles). */
void rb_context_destroy(rb_context *c);
void rb_device_destroy(rb_device *d);

/* ---- log.c ---- */
/* Logs through log (NULL = nowhere) if level passes its threshold; the callback gets a real
 * va_list. Thread-safe; may be called with the registry lock held. */
void rb_logf(rb_log *log, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t rb_now_us(void);

/* ---- faults.c ---- */
/* Records a rule violation: counter, last message, and an ERROR line through log. */
void rb_violation(rb_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses HTPU_REF_FAULTS/HTPU_REF_LATENCY into s. Returns 0 or -1 with a message. */
int rb_faults_from_env(fr_set *s, char *err, size_t errlen);
/* One call of api: sleeps the configured latency, then returns the code of a matching rule
 * (global rules first, then b's; b may be NULL for the process-wide env rules) or 0. A fault
 * is logged through log and counted. */
uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log);
void rb_count_leak(void);
void rb_count_execute(void);
void rb_exec_in_flight_add(int delta);
/* graphExecute calls in flight in this process, on any backend. */
int rb_exec_in_flight(void);
/* A DSP subsystem restart: every context of b (NULL: of every backend) alive now becomes
 * stale. Takes the registry lock. Returns the number of contexts made stale. */
unsigned rb_ssr(rb_backend *b);

/* ---- backend.c ---- */
qnn_error_t rb_backend_create(uint32_t backend_id, qnn_log_handle_t log,
                              const qnn_backend_config_t **cfg, qnn_backend_handle_t *out);
qnn_error_t rb_backend_free(qnn_backend_handle_t h);
qnn_error_t rb_backend_get_api_version(qnn_api_version_t *out);
qnn_error_t rb_backend_get_build_id(const char **out);
qnn_error_t rb_property_has_capability(uint32_t key);
qnn_error_t rb_log_create(qnn_log_callback_t cb, uint32_t level, qnn_log_handle_t *out);
qnn_error_t rb_log_set_level(qnn_log_handle_t h, uint32_t level);
qnn_error_t rb_log_free(qnn_log_handle_t h);
qnn_error_t rb_device_create(qnn_log_handle_t log, const qnn_device_config_t **cfg,
                             qnn_device_handle_t *out);
qnn_error_t rb_device_free(qnn_device_handle_t h);
qnn_error_t rb_not_supported(void);
/* The backend a device-less call (platform info, perf infrastructure) belongs to: the one
 * sharing log l, else the newest. Registry lock held. */
rb_backend *rb_owner_for(rb_log *l);

/* ---- device_info.c ---- */
/* Parses HTPU_REF_DEVICE ("arch=68,soc_model=35,vtcm_mb=2,signed_pd=0,dlbc=0", or
 * vtcm_bytes=2097152 instead of vtcm_mb). Returns 0 or -1 with a message. */
int rb_hw_from_env(rb_hw *hw, char *err, size_t errlen);
/* Checks deviceCreate's configs against b's device; logs why one is rejected. */
qnn_error_t rb_device_check_configs(rb_backend *b, rb_log *log, const qnn_device_config_t **cfg);
rb_pinfo *rb_pinfo_new(const rb_hw *hw);
void rb_pinfo_free(rb_pinfo *p);
/* Frees b's platform infos, counting each as a leak (backendFree; registry lock held). */
void rb_pinfo_release_all(rb_backend *b);
qnn_error_t rb_device_get_platform_info(qnn_log_handle_t, const qnn_device_platform_info_t **);
qnn_error_t rb_device_free_platform_info(qnn_log_handle_t, const qnn_device_platform_info_t *);
qnn_error_t rb_device_get_info(qnn_device_handle_t, const qnn_device_platform_info_t **);
/* Opens the FastRPC-like allocator next to this library and initialises it, as the first
 * FastRPC session does on the board (deviceCreate, contextCreateFromBinary). */
void rb_fastrpc_session_open(rb_log *log);

/* ---- perf.c ---- */
qnn_error_t rb_device_get_infrastructure(void *const *infra);
/* Destroys b's power config ids, counting each as a leak (backendFree; registry lock held). */
void rb_power_release_all(rb_backend *b);
uint32_t rb_power_live_count(void); /* registry lock held */

/* ---- mem.c ---- */
qnn_error_t rb_mem_register(qnn_context_handle_t, const qnn_mem_descriptor_t *, uint32_t,
                            qnn_mem_handle_t *);
qnn_error_t rb_mem_de_register(const qnn_mem_handle_t *, uint32_t);
/* Mem handles registered on c (registry lock held). */
uint32_t rb_mem_count(const rb_context *c);
/* Unmaps and frees every mem handle of c (registry lock held). */
void rb_mem_drop_context(rb_context *c);
/* Resolves a MEMHANDLE tensor of graph tensor `want` executed in c: on success returns the
 * mapped address and pins the handle (*pin); else NULL with the reason in why. */
void *rb_mem_resolve(rb_context *c, const void *handle, const ref_tensor *want, rb_mem **pin,
                     char *why, size_t whylen);
void rb_mem_unpin(rb_mem *m);

/* ---- validate.c ---- */
/* Compares what the binary says with backend b and its device; logs why it is rejected. */
qnn_error_t rb_check_binary(rb_backend *b, const char *api, const ref_model *m);

/* ---- providers.c ---- */
RB_EXPORT qnn_error_t QnnInterface_getProviders(const qnn_interface_t ***list, uint32_t *num);
/* API version reported by backendGetApiVersion: that of the first provider last handed out. */
qnn_api_version_t rb_current_api_version(void);
/* API versions of the first provider with this backend id in the set last handed out (else
 * rb_current_api_version()): what a backend created through it checks binaries against. */
qnn_api_version_t rb_provider_api_version(uint32_t backend_id);

/* ---- errors.c ---- */
qnn_error_t rb_error_get_message(qnn_error_t err, const char **msg);
const char *rb_error_text(uint32_t code); /* NULL for codes we do not know */

/* ---- context.c ---- */
qnn_error_t rb_context_create_from_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                          const qnn_context_config_t **, const void *,
                                          qnn_context_binary_size_t, qnn_context_handle_t *,
                                          qnn_profile_handle_t);
qnn_error_t rb_context_free(qnn_context_handle_t, qnn_profile_handle_t);
qnn_error_t rb_context_validate_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                       const qnn_context_config_t **, const void *,
                                       qnn_context_binary_size_t);
qnn_error_t rb_graph_retrieve(qnn_context_handle_t, const char *, qnn_graph_handle_t *);

/* ---- graph_exec.c ---- */
qnn_error_t rb_graph_execute(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t, qnn_tensor_t *,
                             uint32_t, qnn_profile_handle_t, qnn_signal_handle_t);

#endif /* HTPU_RB_INTERNAL_H */
