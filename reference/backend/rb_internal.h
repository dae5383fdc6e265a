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
#include "qnn/qnn_signal_abi.h"
#include "ref_faultrules.h"
#include "refmodel.h"

#define RB_EXPORT __attribute__((visibility("default")))
/* The build id and API versions the backend reports. A fake QAIRT release of the tests
 * (mk/qnnsets.mk) is this backend built with RB_RELEASE_BUILD_ID, RB_RELEASE_CORE_API and
 * RB_RELEASE_BACKEND_API (as "major,minor,patch"), and checks its stub and skel (release.c). */
#ifdef RB_RELEASE_BUILD_ID
#define RB_BUILD_ID RB_RELEASE_BUILD_ID
#else
#define RB_BUILD_ID "htpu-reference-0.1.0"
#endif
#ifndef RB_RELEASE_CORE_API
#define RB_RELEASE_CORE_API 2, 32, 0
#endif
#ifndef RB_RELEASE_BACKEND_API
#define RB_RELEASE_BACKEND_API 5, 42, 0
#endif

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

/* HTPU_REF_SESSION_LOG and HTPU_REF_HOLD (session.c). */
typedef struct rb_session {
  char log[512];       /* "" = none */
  uint32_t hold_api;   /* FR_API_COUNT = none */
  char hold_fifo[512];
} rb_session;

typedef struct rb_backend {
  struct rb_backend *next;
  uintptr_t handle;
  uint32_t backend_id; /* of the provider whose backendCreate made it */
  qnn_api_version_t api; /* versions of the providers current at backendCreate */
  rb_hw hw;
  rb_log *log;
  fr_set faults;       /* HTPU_REF_FAULTS/HTPU_REF_LATENCY at backendCreate (fault lock) */
  atomic_bool fatal;   /* an injected 1011: the DSP did not recover */
  bool op_faults;      /* its own rules or latency name graphOp */
  atomic_int busy;     /* calls using it outside the registry lock (fault latency, execute) */
  int notifying;       /* g_sched: of them, async calls past their DSP work, notifying or just
                          notified (backendFree waits for these instead of refusing) */
  rb_pinfo *pinfos;    /* deviceGetPlatformInfo answers not yet freed (registry lock) */
  rb_power *powers;    /* live power config ids it created (registry lock) */
  /* HTPU_REF_PROFILE_OBJECT at backendCreate: the payload of an OBJECT event its execute
   * profiles carry (profile.c); "" and has_profile_object 0 when unset */
  char profile_object[256];
  bool has_profile_object;
  rb_session session;  /* HTPU_REF_SESSION_LOG / HTPU_REF_HOLD at backendCreate */
} rb_backend;

typedef struct rb_device {
  struct rb_device *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_log *log;
  rb_pinfo *info; /* deviceGetInfo's answer, kept until deviceFree */
} rb_device;

/* ---- signals and the execute queue (signal.c, exec_queue.c) ---------------------------------
 * One lock, g_sched, guards every signal's use and every graph's queue, and one condition
 * variable (CLOCK_MONOTONIC) is broadcast on every change: a waiter in a queue, in an injected
 * latency or in a full async queue wakes for an abort as for its turn. Lock order: g_rb.lock,
 * then g_sched.lock; nothing is logged and no callback runs under g_sched.lock. */
typedef struct rb_sched {
  pthread_mutex_t lock;
  pthread_cond_t cond;
} rb_sched;
extern rb_sched g_sched;

typedef enum rb_sig_kind { RB_SIG_NONE = 0, RB_SIG_ABORT, RB_SIG_TIMEOUT } rb_sig_kind;

typedef struct rb_signal {
  struct rb_signal *next;
  uintptr_t handle;
  rb_backend *backend;
  /* g_sched */
  rb_sig_kind kind;
  uint64_t timeout_us;
  bool in_use;          /* from a call's start to its return (async: to its notification) */
  uint64_t generation;  /* incremented by each call that takes it */
  uint64_t aborted_gen; /* the generation an abort trigger hit (0: none) */
  const char *user;     /* the QNN function using it, for messages */
} rb_signal;

/* Why a watched call must stop. */
typedef enum rb_stop { RB_STOP_NONE = 0, RB_STOP_ABORT, RB_STOP_TIMEOUT } rb_stop;

/* What can stop one call: its signal (NULL: nothing) and, for a timeout signal, the deadline
 * measured from the call's start. */
typedef struct rb_watch {
  rb_signal *sig;
  uint64_t gen;
  uint64_t start_ns;
  uint64_t deadline_ns; /* 0: none */
} rb_watch;

struct rb_context;
struct rb_job;
typedef struct rb_job rb_job;
typedef struct rb_graph {
  uintptr_t handle;
  struct rb_context *ctx;
  uint32_t index;
  atomic_int in_flight;       /* blocking executes between handle check and return */
  /* g_sched: one FIFO per graph shared by graphExecute and graphExecuteAsync, as in QNN */
  struct rb_job *q_head, *q_tail;
  bool running;               /* an execute of this graph runs now */
  uint32_t async_waiting;     /* queued async executes not started */
  uint32_t async_pending;     /* accepted async executes not yet notified (incl. running) */
  struct rb_job *done_head, *done_tail; /* async executes over, to be notified in order */
  bool worker_started, worker_stop;
  pthread_t worker;           /* runs the async executes */
  pthread_t notifier;         /* notifies them, and takes stopped ones out of the queue */
  /* g_rb.lock */
  uint32_t priority;          /* graphSetConfig PRIORITY, else the context's */
  bool priority_set;
  _Atomic uint64_t executes_done;        /* executes that ran to success (both kinds) */
  _Atomic uint32_t last_batch_multiple;  /* of the last successful execute */
} rb_graph;

typedef struct rb_context {
  struct rb_context *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_device *device; /* NULL: the default device */
  ref_model *model;
  uint32_t num_graphs;
  rb_graph *graphs;
  uint32_t priority;         /* QNN_CONTEXT_CONFIG_OPTION_PRIORITY, default NORMAL */
  uint32_t async_depth;      /* QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH */
  atomic_int executing; /* executes in flight over all its graphs (async: until notified) */
  int notifying;        /* g_sched: of them, async calls notifying or just notified: their
                           notification told the client the call is over, so contextFree waits
                           for their last steps instead of refusing */
  atomic_bool stale;    /* lost in a DSP subsystem restart: only contextFree works */
} rb_context;

/* Default and largest async queue depth per graph. */
#define RB_ASYNC_DEPTH_DEFAULT 8u
#define RB_ASYNC_DEPTH_MAX 64u

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
  rb_signal *signals;
} rb_registry;

extern rb_registry g_rb;

/* ---- registry.c (all with g_rb.lock held) ---- */
uintptr_t rb_new_handle(void);
rb_log *rb_find_log(const void *h);
rb_backend *rb_find_backend(const void *h);
rb_device *rb_find_device(const void *h);
rb_context *rb_find_context(const void *h);
rb_graph *rb_find_graph(const void *h);
rb_signal *rb_find_signal(const void *h);
/* Unlinks and frees a context that has no execute in flight (and its mem handles); stops and
 * joins its graphs' async workers, which are idle then. */
void rb_context_destroy(rb_context *c);
void rb_device_destroy(rb_device *d);

/* ---- log.c ---- */
/* Logs through log (NULL = nowhere) if level passes its threshold; the callback gets a real
 * va_list. Thread-safe; may be called with the registry lock held. */
void rb_logf(rb_log *log, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t rb_now_us(void);

/* ---- session.c ---- */
void rb_session_from_env(rb_session *s);
/* Logs (and holds) a session creation of `api` made through b (NULL: backendCreate, with the
 * environment as it is now). Every other api is ignored. */
void rb_session_event(const rb_backend *b, uint32_t api);

/* ---- faults.c ---- */
/* Records a rule violation: counter, last message, and an ERROR line through log. */
void rb_violation(rb_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses HTPU_REF_FAULTS/HTPU_REF_LATENCY into s. Returns 0 or -1 with a message. */
int rb_faults_from_env(fr_set *s, char *err, size_t errlen);
/* One call of api: sleeps the configured latency, then returns the code of a matching rule
 * (global rules first, then b's; b may be NULL for the process-wide env rules) or 0. A fault
 * is logged through log and counted. */
uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log);
/* The same for a watched call: its latency ends early when w says stop (then *stopped is set
 * and 0 returned, no rule applied). Without latency nothing is checked here. */
/* The latency set for the executes of the graph called `graph` (graph_latency.c), in us. */
uint32_t rb_graph_latency(const char *graph);
void rb_graph_latency_clear(void);
uint32_t rb_fault_watched(rb_backend *b, uint32_t api, rb_log *log, const rb_watch *w,
                          rb_stop *stopped);
void rb_count_stop(rb_stop why); /* aborted/timed-out calls, for the stats */
bool rb_fault_set_has(const fr_set *s, uint32_t api);
/* Whether graphOp rules or latency may apply to b's executes (else the per-op hook is
 * skipped: it costs a lock per op). */
bool rb_op_faults_armed(const rb_backend *b);
void rb_count_batch_multiple(void);
void rb_count_async_notified(void);
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

/* ---- caps.c ---- */
/* propertyHasCapability's answer for key now: the control API's value, else HTPU_REF_CAPS's,
 * else the real HTP's (docs/reference-backend.md). */
qnn_error_t rb_cap(uint32_t key);
/* Checks HTPU_REF_CAPS; 0, or -1 with a message (backendCreate refuses a bad value). */
int rb_caps_check_env(char *err, size_t errlen);
void rb_caps_reset(void);

/* ---- signal.c ---- */
qnn_error_t rb_signal_create(qnn_backend_handle_t, const qnn_signal_config_t **,
                             qnn_signal_handle_t *);
qnn_error_t rb_signal_set_config(qnn_signal_handle_t, const qnn_signal_config_t **);
qnn_error_t rb_signal_trigger(qnn_signal_handle_t);
qnn_error_t rb_signal_free(qnn_signal_handle_t);
/* Takes signal h (NULL: none) for a call of b that started at start_ns, into *w. g_rb.lock
 * held. Returns 0, -1 if h is not a live signal of b, -2 if it is in use by another call. */
int rb_signal_acquire(rb_backend *b, const void *h, const char *user, uint64_t start_ns,
                      rb_watch *w);
/* The call is over: its signal is idle again (wakes a trigger waiting for it). */
void rb_signal_release(rb_watch *w);
/* Whether w's call must stop now (g_sched.lock held / not held). */
rb_stop rb_watch_check_locked(const rb_watch *w);
rb_stop rb_watch_check(const rb_watch *w);
/* Sleeps usec, or less when w says stop (returned). */
rb_stop rb_watch_sleep(const rb_watch *w, uint64_t usec);
/* Waits on g_sched.cond (lock held) until `until_ns` (0: no limit) or w's deadline. */
void rb_sched_wait_locked(const rb_watch *w, uint64_t until_ns);
/* contextFree / backendFree, g_rb.lock held: when every call keeping c (or b, when c is NULL)
 * is an async call past its notification (its last steps are near) and this thread is not
 * inside one of their notifications, waits one round for them (at most 1 ms, g_rb.lock let go
 * meanwhile and held again: the caller looks its object up again) and returns true; else
 * returns false at once. */
bool rb_wait_notified_round(const rb_context *c, const rb_backend *b);
uint64_t rb_mono_ns(void);
/* Frees b's signals, counting each as a leak (backendFree; g_rb.lock held). */
void rb_signal_release_all(rb_backend *b);
uint32_t rb_signal_live_count(void); /* g_rb.lock held */

/* ---- config.c ---- */
/* Reads createFromBinary's configs into *priority and *async_depth (defaults first); logs
 * and returns the code of the first one refused. */
qnn_error_t rb_context_configs(rb_backend *b, const char *api, const qnn_context_config_t **cfg,
                               uint32_t *priority, uint32_t *async_depth);
qnn_error_t rb_graph_set_config(qnn_graph_handle_t, const qnn_graph_config_t **);
const char *rb_priority_name(uint32_t p); /* NULL: not a QNN priority */

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
qnn_error_t rb_context_create_from_binary_with_signal(
    qnn_backend_handle_t, qnn_device_handle_t, const qnn_context_config_t **, const void *,
    qnn_context_binary_size_t, qnn_context_handle_t *, qnn_profile_handle_t,
    qnn_signal_handle_t);
qnn_error_t rb_context_free(qnn_context_handle_t, qnn_profile_handle_t);
qnn_error_t rb_context_get_property(qnn_context_handle_t, qnn_context_property_t **);
/* ---- release.c: a fake release's stub and skel (deviceCreate) ---- */
qnn_error_t rb_release_check(rb_log *log);
qnn_error_t rb_context_validate_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                       const qnn_context_config_t **, const void *,
                                       qnn_context_binary_size_t);
qnn_error_t rb_graph_retrieve(qnn_context_handle_t, const char *, qnn_graph_handle_t *);

/* ---- profile.c: one call's recording (the functions: rb_profile.h) ---- */
struct rb_profile;
/* One call recording into a profile handle (NULL p: the call is not profiled). */
typedef struct rb_prof_call {
  struct rb_profile *p;
  uint64_t t_enter, t_locked, t_checked, t_run0, t_run1; /* ns, CLOCK_MONOTONIC */
  /* Per op of the graph (execute), summed over the row groups of a batch multiple; NULL when
   * not recorded. op_t0/op_t1: the interpreter's start/end of each op in one row group. */
  uint64_t *op_t0, *op_t1;
  uint64_t *op_first;     /* when the op first started */
  uint64_t *op_busy;      /* time in the op */
  uint64_t *op_wait;      /* time from the previous op's end (the group's start) to its start */
  uint64_t *op_wait_from; /* when its first wait began */
  uint32_t num_ops;
  uint32_t row_groups; /* row groups run (a batch multiple k runs k) */
} rb_prof_call;

/* ---- graph_exec.c ---- */
qnn_error_t rb_graph_execute(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t, qnn_tensor_t *,
                             uint32_t, qnn_profile_handle_t, qnn_signal_handle_t);
qnn_error_t rb_graph_execute_async(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                                   qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                                   qnn_signal_handle_t, qnn_notify_fn_t, void *);

/* One execute's resolved buffers: checked against the graph, MEMHANDLEs pinned. */
typedef struct rb_bufs {
  uint32_t nin, nout;
  const void **inp;
  void **outp;
  rb_mem **pins;
  uint32_t multiple; /* batch multiple: k row groups of the graph's batch */
  /* per output: the caller's dimensions array, where an output with dynamic dimensions gets
   * the dims its execute produced (QnnGraph.h); NULL for the others */
  uint32_t **out_dims;
} rb_bufs;
/* How a MEMHANDLE tensor's handle becomes its bytes (rb_mem_resolve), passed in so that the
 * checks below stay outside the registries they would otherwise call into. */
typedef void *(*rb_handle_resolver)(rb_context *c, const void *handle, const ref_tensor *want,
                                    rb_mem **pin, char *why, size_t whylen);
/* Checks tensor t against graph input/output i of context c (tensor_check.c), logging why it
 * is refused. *data: where its bytes are; a MEMHANDLE tensor's handle is resolved with
 * `resolve` and pinned in *pin until the execute ends. *multiple: the batch multiple its dims
 * give (1 when they are the graph's or NULL). *out_dims: an output with dynamic dimensions'
 * dimensions array (which it must have, QnnGraph.h), where the execute writes the dims it
 * produced; else NULL. */
qnn_error_t rb_check_tensor(rb_log *log, const char *api, rb_context *c, const ref_graph *rg,
                            int is_input, uint32_t i, const qnn_tensor_t *t,
                            rb_handle_resolver resolve, const void **data, rb_mem **pin,
                            uint32_t *multiple, uint32_t **out_dims);
/* Checks the tensors of an execute of graph gi of c (logging why one is refused, `api` naming
 * the call) and resolves their buffers into *x. */
qnn_error_t rb_bufs_resolve(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                            const qnn_tensor_t *in, uint32_t nin, const qnn_tensor_t *out,
                            uint32_t nout, rb_bufs *x);
void rb_bufs_release(rb_bufs *x);
/* A watched call of g stopped (`where`: "during ..."): logs why, counts it and returns the
 * graph code, 6031 aborted or 6033 timed out. */
qnn_error_t rb_graph_stopped(rb_graph *g, const char *api, const rb_watch *w, rb_stop why,
                             const char *where);
/* The async job is over with rc: releases its buffers, records and releases its profile,
 * releases its signal, calls its notify function (this thread: the graph's notifier), then
 * lets the context go (graph_exec.c). */
void rb_async_complete(rb_job *j, qnn_error_t rc);
/* Runs one execute of g (blocking or from the worker) once it has its turn: stale check,
 * fault rules and latency, then the graph on pre's buffers (async, resolved at the call) or
 * on in/out resolved now (blocking), timing it into pc (NULL: not profiled). Returns the
 * call's QNN code (logged). */
qnn_error_t rb_execute_turn(rb_graph *g, const char *api, const qnn_tensor_t *in, uint32_t nin,
                            const qnn_tensor_t *out, uint32_t nout, const rb_bufs *pre,
                            const rb_watch *w, struct rb_prof_call *pc);
/* Runs graph gi of c on x's buffers, row group after row group, stopping between ops when w
 * says so; times the run (and, when pc has per-op arrays, each op) into pc. Returns 0,
 * 6031/6033 with *stopped set, or the failure code (logged). */
qnn_error_t rb_bufs_run(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                        const rb_bufs *x, const rb_watch *w, struct rb_prof_call *pc,
                        rb_stop *stopped);

/* ---- exec_queue.c ---- */
/* A place in a graph's queue: a blocking caller's (on its stack) or an async execute's. */
struct rb_job {
  struct rb_job *next;
  bool async;
  rb_graph *g;
  rb_watch watch;
  /* async only */
  rb_bufs bufs;
  rb_prof_call prof;    /* its profile recording (prof.p NULL: none), held until notified */
  qnn_notify_fn_t notify;
  void *notify_param;
  qnn_error_t rc;       /* its result, once over */
  rb_stop queued_stop;  /* it left the queue for this stop without running */
};
/* Blocking execute: queues j and waits for its turn. 0: it is running now (call
 * rb_queue_done after); else the stop that ended the wait (j left the queue). */
rb_stop rb_queue_wait_turn(rb_graph *g, rb_job *j);
void rb_queue_done(rb_graph *g);
/* Async execute: waits while g's queue holds `depth` async executes (or w says stop), then
 * queues j (heap, owned by the queue from then on) and starts g's worker if needed. Returns
 * the stop that ended the wait, j not queued, or RB_STOP_NONE. *failed is set when the worker
 * thread could not be started (j not queued). */
rb_stop rb_queue_async(rb_graph *g, rb_job *j, uint32_t depth, bool *failed);
/* Stops and joins g's worker (it must be idle: no async execute pending). g_rb.lock held. */
void rb_queue_stop_worker(rb_graph *g);


#endif /* HTPU_RB_INTERNAL_H */
