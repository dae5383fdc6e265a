/*
 * rb_internal.h - state shared by the files of the reference backend library.
 *
 * Every object the caller gets a handle to lives in one registry guarded by one mutex. Handles
 * are serial numbers, not pointers: a stale or foreign handle is simply not found (an
 * INVALID_HANDLE error, never a dereference), and a loader that dereferences a handle crashes
 * here as it would on the board.
 *
 * The files, in layers: a file calls the files of its own layer (one way) and of the layers
 * below, never one above, and no two files call each other round a circle. Where a lower file
 * must reach up it is handed a function: the graph's queue runs and finishes an async job
 * through the run/finish functions the job carries (graph_exec.c sets them), the tensor checks
 * resolve a mem handle through the resolver they are given (mem.c's).
 *   7  providers.c               the function tables handed out (QnnInterface_getProviders)
 *   6  backend.c context.c       the QNN calls that create, free and run: context_list.c over
 *      context_list.c            context.c; backend.c and context.c over graph_exec.c (its wait
 *      graph_exec.c              for async calls past their notification)
 *   5  teardown.c stats.c        freeing objects (and every handle left at unload); the control
 *                                API's htpu_ref_get_stats, which counts every kind of object
 *   4  signal.c device_info.c    one kind of object or call each: signals, platform info, power
 *      perf.c mem.c profile.c    configs, mem handles, profiles, context/graph configs, the
 *      config.c exec_queue.c     graph's queue and its threads
 *   3  faults.c                  injected faults and latency, DSP subsystem restarts
 *   2  registry.c sched.c        the handles and their lookup; the wait lock, the clock and a
 *      counters.c                call's stop checks; the counters and the last rule violation
 *   1  log.c errors.c caps.c api_versions.c session.c graph_latency.c release.c validate.c
 *      tensor_check.c persist.c spill_fill.c: each calls the log at most
 * The declarations below follow the same order, bottom up; rb_loading.h (persist.c,
 * spill_fill.c, context_list.c) and rb_exec.h (tensor_check.c, exec_queue.c, graph_exec.c) hold
 * the rest, and rb_profile.h the profile API.
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

/* ---- signals and the execute queue (sched.c, signal.c, exec_queue.c) -------------------------
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
  bool enabled;               /* deserialized (ENABLE_GRAPHS lists it, or lists none) */
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

/* A group of contexts sharing one spill-fill buffer (the HTP custom context config
 * REGISTER_MULTI_CONTEXTS; spill_fill.c). `members`: the registry lock; the rest: spill_fill.c's
 * own. */
typedef struct rb_sf_group {
  struct rb_sf_group *next;
  uintptr_t id;          /* the handle of its first context */
  struct rb_backend *backend;
  uint64_t bytes;        /* the first context's maxSpillFillBuffer: the buffer allocated */
  uint32_t members;      /* live contexts in it; the group goes with the last */
  /* the context whose graphs execute now, and how many of them */
  const struct rb_context *running;
  uint32_t executing;
} rb_sf_group;

/* What createFromBinary's configs asked for (config.c). */
typedef struct rb_ctx_cfg {
  uint32_t priority;                 /* QNN_CONTEXT_CONFIG_OPTION_PRIORITY, default NORMAL */
  uint32_t async_depth;              /* QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH */
  const char *const *enable_graphs;  /* QNN_CONTEXT_CONFIG_ENABLE_GRAPHS; NULL: all */
  uint64_t memory_limit_mb;          /* QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT; 0: none */
  bool persistent;                   /* QNN_CONTEXT_CONFIG_PERSISTENT_BINARY */
  bool group;                        /* REGISTER_MULTI_CONTEXTS was given */
  const void *group_first;           /* its first group handle (NULL: a new group) */
  uint64_t group_max;                /* its maxSpillFillBuffer */
} rb_ctx_cfg;

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
  /* What the load's configs made of it (persist.c, spill_fill.c) */
  bool persistent;           /* PERSISTENT_BINARY: the model points into the caller's binary */
  const unsigned char *bin;  /* that binary (persistent only), checked at every use */
  size_t bin_len;
  uint64_t bin_hash;         /* of all of it, at creation */
  uint64_t *graph_hash;      /* per graph: of the static data its ops read, at creation */
  uint32_t *statics_at;      /* per graph g: its static tensors are statics[statics_at[g]..] */
  uint32_t *statics;         /*   up to statics_at[g + 1] (both in graph_hash's allocation) */
  uint64_t copied_bytes;     /* the backend's own copy of the binary (0 when persistent) */
  uint32_t num_enabled;      /* graphs deserialized */
  uint64_t memory_limit_mb;  /* MEMORY_LIMIT_HINT; 0: none */
  uint64_t spill_fill;       /* the largest spill-fill buffer of its deserialized graphs */
  rb_sf_group *group;        /* NULL: its spill-fill buffer is its own */
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

/* ==== layer 1: leaves ==== */

/* ---- log.c ---- */
/* Logs through log (NULL = nowhere) if level passes its threshold; the callback gets a real
 * va_list. Thread-safe; may be called with the registry lock held. */
void rb_logf(rb_log *log, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t rb_now_us(void);

/* ---- errors.c ---- */
qnn_error_t rb_error_get_message(qnn_error_t err, const char **msg);
const char *rb_error_text(uint32_t code); /* NULL for codes we do not know */
qnn_error_t rb_not_supported(void); /* every table slot not implemented */

/* ---- caps.c ---- */
/* propertyHasCapability's answer for key now: the control API's value, else HTPU_REF_CAPS's,
 * else the real HTP's (docs/reference-backend.md). */
qnn_error_t rb_cap(uint32_t key);
/* Checks HTPU_REF_CAPS; 0, or -1 with a message (backendCreate refuses a bad value). */
int rb_caps_check_env(char *err, size_t errlen);
void rb_caps_reset(void);
qnn_error_t rb_property_has_capability(uint32_t key);

/* ---- api_versions.c ---- */
/* getProviders handed out list[0, n) (valid until the library is unloaded). */
void rb_api_versions_handed_out(const qnn_interface_t *const *list, uint32_t n);
/* API version reported by backendGetApiVersion: that of the first provider last handed out. */
qnn_api_version_t rb_current_api_version(void);
/* API versions of the first provider with this backend id in the set last handed out (else
 * rb_current_api_version()): what a backend created through it checks binaries against. */
qnn_api_version_t rb_provider_api_version(uint32_t backend_id);

/* ---- session.c ---- */
void rb_session_from_env(rb_session *s);
/* Logs (and holds) a session creation of `api` made through b (NULL: backendCreate, with the
 * environment as it is now). Every other api is ignored. */
void rb_session_event(const rb_backend *b, uint32_t api);

/* ---- graph_latency.c ---- */
/* The latency set for the executes of the graph called `graph`, in us. */
uint32_t rb_graph_latency(const char *graph);
void rb_graph_latency_clear(void);

/* ---- release.c: a fake release's stub and skel (deviceCreate) ---- */
qnn_error_t rb_release_check(rb_log *log);

/* ---- validate.c ---- */
/* Compares what the binary says with backend b and its device; logs why it is rejected. */
qnn_error_t rb_check_binary(rb_backend *b, const char *api, const ref_model *m);

/* ==== layer 2 ==== */

/* ---- registry.c (all with g_rb.lock held) ---- */
uintptr_t rb_new_handle(void);
rb_log *rb_find_log(const void *h);
rb_backend *rb_find_backend(const void *h);
rb_device *rb_find_device(const void *h);
rb_context *rb_find_context(const void *h);
rb_graph *rb_find_graph(const void *h);
rb_signal *rb_find_signal(const void *h);
/* The backend a call without a backend handle (deviceCreate, platform info, perf
 * infrastructure) belongs to: the one sharing log l, else the newest. */
rb_backend *rb_owner_for(rb_log *l);

/* ---- sched.c ---- */
uint64_t rb_mono_ns(void);
/* Whether w's call must stop now (g_sched.lock held / not held). */
rb_stop rb_watch_check_locked(const rb_watch *w);
rb_stop rb_watch_check(const rb_watch *w);
/* Sleeps usec, or less when w says stop (returned). */
rb_stop rb_watch_sleep(const rb_watch *w, uint64_t usec);
/* Waits on g_sched.cond (lock held) until `until_ns` (0: no limit) or w's deadline. */
void rb_sched_wait_locked(const rb_watch *w, uint64_t until_ns);

/* ---- counters.c ---- */
/* Records a rule violation: counter, last message, and an ERROR line through log. */
void rb_violation(rb_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records a use whose outcome the API's headers leave unknown (no rule says it is wrong, none
 * says what it does): counter (htpu_ref_stats.unknown_behaviours) and a WARN line. */
void rb_unknown_behaviour(rb_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rb_count_stop(rb_stop why); /* aborted/timed-out calls, for the stats */
void rb_count_batch_multiple(void);
void rb_count_async_notified(void);
void rb_count_leak(void);
void rb_count_graphs_deserialized(uint32_t n);
void rb_count_list_async(void);
void rb_count_execute(void);
void rb_count_fault(void);
void rb_count_ssr(void);
void rb_exec_in_flight_add(int delta);
/* graphExecute calls in flight in this process, on any backend. */
int rb_exec_in_flight(void);
struct htpu_ref_stats;
/* Copies the counters into their fields of *out (htpu_ref_get_stats). */
void rb_counters_read(struct htpu_ref_stats *out);

/* ==== layer 3 ==== */

/* ---- faults.c ---- */
/* Parses HTPU_REF_FAULTS/HTPU_REF_LATENCY into s. Returns 0 or -1 with a message. */
int rb_faults_from_env(fr_set *s, char *err, size_t errlen);
/* One call of api: sleeps the configured latency, then returns the code of a matching rule
 * (global rules first, then b's; b may be NULL for the process-wide env rules) or 0. A fault
 * is logged through log and counted. */
uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log);
/* The same for a watched call: its latency ends early when w says stop (then *stopped is set
 * and 0 returned, no rule applied). Without latency nothing is checked here. */
uint32_t rb_fault_watched(rb_backend *b, uint32_t api, rb_log *log, const rb_watch *w,
                          rb_stop *stopped);
bool rb_fault_set_has(const fr_set *s, uint32_t api);
/* Whether graphOp rules or latency may apply to b's executes (else the per-op hook is
 * skipped: it costs a lock per op). */
bool rb_op_faults_armed(const rb_backend *b);
/* A DSP subsystem restart: every context of b (NULL: of every backend) alive now becomes
 * stale. Takes the registry lock. Returns the number of contexts made stale. */
unsigned rb_ssr(rb_backend *b);

/* ==== layer 4: one kind of object each ==== */

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
/* Frees b's signals, counting each as a leak (backendFree; g_rb.lock held). */
void rb_signal_release_all(rb_backend *b);
uint32_t rb_signal_live_count(void); /* g_rb.lock held */

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

/* ---- config.c ---- */
/* Reads createFromBinary's configs into *out (defaults first; a repeated option: the last
 * wins), each checked against its capability; logs and returns the code of the first one
 * refused. */
qnn_error_t rb_context_configs(rb_backend *b, const char *api, const qnn_context_config_t **cfg,
                               rb_ctx_cfg *out);
/* ENABLE_GRAPHS against the model: marks c's graphs deserialized (all when the config named
 * none); an unknown name 5010 (logged). */
qnn_error_t rb_enable_graphs(rb_backend *b, const char *api, rb_context *c,
                             const char *const *names);

qnn_error_t rb_graph_set_config(qnn_graph_handle_t, const qnn_graph_config_t **);
const char *rb_priority_name(uint32_t p); /* NULL: not a QNN priority */

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

/* ==== layer 5 ==== */

/* ---- teardown.c (g_rb.lock held) ---- */
/* Unlinks and frees a context that has no execute in flight (and its mem handles); stops and
 * joins its graphs' async workers, which are idle then. */
void rb_context_destroy(rb_context *c);
void rb_device_destroy(rb_device *d);

/* ==== layer 6: the calls ==== */

/* ---- backend.c ---- */
qnn_error_t rb_backend_create(uint32_t backend_id, qnn_log_handle_t log,
                              const qnn_backend_config_t **cfg, qnn_backend_handle_t *out);
qnn_error_t rb_backend_free(qnn_backend_handle_t h);
qnn_error_t rb_backend_get_api_version(qnn_api_version_t *out);
qnn_error_t rb_backend_get_build_id(const char **out);
qnn_error_t rb_log_create(qnn_log_callback_t cb, uint32_t level, qnn_log_handle_t *out);
qnn_error_t rb_log_set_level(qnn_log_handle_t h, uint32_t level);
qnn_error_t rb_log_free(qnn_log_handle_t h);
qnn_error_t rb_device_create(qnn_log_handle_t log, const qnn_device_config_t **cfg,
                             qnn_device_handle_t *out);
qnn_error_t rb_device_free(qnn_device_handle_t h);

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
qnn_error_t rb_context_validate_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                       const qnn_context_config_t **, const void *,
                                       qnn_context_binary_size_t);
qnn_error_t rb_graph_retrieve(qnn_context_handle_t, const char *, qnn_graph_handle_t *);
/* Resolves backend (and optional device) and pins the backend for a call that runs unlocked;
 * takes the call's signal (NULL: none) for a call that started at start_ns, into *w. */
qnn_error_t rb_pin_backend(qnn_backend_handle_t bh, qnn_device_handle_t dh, rb_backend **b,
                           rb_device **d, const void *signal, const char *api,
                           uint64_t start_ns, rb_watch *w);
void rb_unpin_backend(rb_backend *b);
/* One context from a binary, for contextCreateFromBinary(WithSignal) and each context of a
 * list (context_list.c): the call's backend b is pinned and its signal taken (w). Runs the
 * injected latency and fault rules, the configs, the parse and checks, and registers the
 * context (*out). `api` names the call in messages. */
qnn_error_t rb_create_one(rb_backend *b, rb_device *d, qnn_device_handle_t dh, const char *api,
                          const qnn_context_config_t **cfg, const void *buf,
                          qnn_context_binary_size_t size, qnn_profile_handle_t profile,
                          const rb_watch *w, rb_context **out);

/* ==== layer 7 ==== */

/* ---- providers.c ---- */
RB_EXPORT qnn_error_t QnnInterface_getProviders(const qnn_interface_t ***list, uint32_t *num);

#include "rb_loading.h" /* persist.c, spill_fill.c, context_list.c */
#include "rb_exec.h"    /* tensor_check.c, exec_queue.c, graph_exec.c */

#endif /* HTPU_RB_INTERNAL_H */
