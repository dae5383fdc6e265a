/* profile.c - QnnProfile for the reference backend: handles, recorded events, readers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htpu_ref_control.h"
#include "qnn/qnn_profile_abi.h"
#include "rb_profile.h"

/* The reference's nominal accelerator clock: cycles are nanoseconds. */
#define RB_CYCLES_PER_NS 1u

typedef struct rb_pevent {
  uint32_t type, unit;
  uint64_t value;
  uint64_t timestamp; /* us */
  int32_t parent;     /* index, -1 for a top-level event */
  uint32_t ident;     /* offset into the string pool, UINT32_MAX for none */
  uint32_t child_off, child_n; /* the event's sub-event ids: ids[child_off ..] */
  /* unit OBJECT: the opaque object's bytes and file name in the string pool */
  uint32_t obj_off, obj_len, obj_file;
} rb_pevent;

/* One recording: events, their identifiers, and the id lists handed out. */
typedef struct rb_precord {
  rb_pevent *ev;
  uint32_t n, cap;
  char *str;
  size_t slen, scap;
  uint64_t *ids; /* top-level ids first (n_top), then each event's sub-events together */
  uint32_t n_top;
  int full; /* max_events reached or out of memory: later events dropped */
} rb_precord;

typedef struct rb_profile {
  struct rb_profile *next;
  uintptr_t handle;
  uint32_t serial; /* 24 bits: the event ids' prefix */
  uint32_t gen;    /* bumped per recording: ids of an earlier call stop resolving */
  rb_backend *backend;
  uint32_t level;
  uint64_t max_events; /* 0: no limit (only with the max-events capability on) */
  int optrace;
  atomic_int in_use;
  rb_precord rec;
} rb_profile;

static rb_profile *g_profiles; /* registry lock */
static uint32_t g_next_serial;  /* registry lock */

/* The profile capabilities (1401..1405, 310, 315) are switched in caps.c with the others;
 * what the backend does follows their answers. */
static int cap_on(uint32_t key) { return rb_cap(key) == QNN_SUCCESS; }

RB_EXPORT uint32_t htpu_ref_live_profiles(void) {
  uint32_t n = 0;
  pthread_mutex_lock(&g_rb.lock);
  for (rb_profile *p = g_profiles; p; p = p->next) n++;
  pthread_mutex_unlock(&g_rb.lock);
  return n;
}

/* ---- handles (registry lock held) ---------------------------------------------------------- */

static rb_profile *find_profile(const void *h) {
  for (rb_profile *p = g_profiles; p; p = p->next)
    if ((const void *)p->handle == h) return p;
  return NULL;
}

#define ID_INDEX_BITS 24
#define ID_GEN_BITS 16
static uint64_t make_id(const rb_profile *p, uint32_t index) {
  return ((uint64_t)p->serial << (ID_INDEX_BITS + ID_GEN_BITS)) |
         ((uint64_t)(p->gen & 0xFFFFu) << ID_INDEX_BITS) | (uint64_t)(index + 1);
}

/* The event an id names in the current recording of its profile, or NULL. */
static const rb_pevent *find_event(uint64_t id, rb_profile **owner) {
  uint32_t serial = (uint32_t)(id >> (ID_INDEX_BITS + ID_GEN_BITS));
  uint32_t gen = (uint32_t)(id >> ID_INDEX_BITS) & 0xFFFFu;
  uint32_t index = (uint32_t)(id & ((1u << ID_INDEX_BITS) - 1));
  for (rb_profile *p = g_profiles; p; p = p->next) {
    if (p->serial != serial) continue;
    if ((p->gen & 0xFFFFu) != gen || index == 0 || index > p->rec.n) return NULL;
    *owner = p;
    return &p->rec.ev[index - 1];
  }
  return NULL;
}

static void record_free(rb_precord *r) {
  free(r->ev);
  free(r->str);
  free(r->ids);
  memset(r, 0, sizeof *r);
}

static void profile_destroy(rb_profile *p) {
  for (rb_profile **pp = &g_profiles; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  record_free(&p->rec);
  free(p);
}

void rb_profile_release_all(rb_backend *b) {
  for (rb_profile *p = g_profiles, *next; p; p = next) {
    next = p->next;
    if (p->backend != b) continue;
    rb_violation(b->log, "backendFree: profile 0x%lx was not freed (leaked; freeing it now)",
                 (unsigned long)p->handle);
    rb_count_leak();
    profile_destroy(p);
  }
}

/* ---- the API ------------------------------------------------------------------------------- */

qnn_error_t rb_profile_create(qnn_backend_handle_t bh, uint32_t level, qnn_profile_handle_t *out) {
  if (!cap_on(QNN_PROPERTY_GROUP_PROFILE)) return QNN_COMMON_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = rb_find_backend(bh);
  qnn_error_t rc = QNN_SUCCESS;
  if (!b) {
    rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  } else if (!out) {
    rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
  } else if (level != QNN_PROFILE_LEVEL_BASIC && level != QNN_PROFILE_LEVEL_DETAILED &&
             level != QNN_HTP_PROFILE_LEVEL_LINTING) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "profileCreate: unknown level %u (expected %u basic, "
            "%u detailed or %u linting)", level, QNN_PROFILE_LEVEL_BASIC,
            QNN_PROFILE_LEVEL_DETAILED, QNN_HTP_PROFILE_LEVEL_LINTING);
    rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
  }
  rb_profile *p = rc == QNN_SUCCESS ? calloc(1, sizeof *p) : NULL;
  if (rc == QNN_SUCCESS && !p) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  if (rc == QNN_SUCCESS) {
    p->handle = rb_new_handle();
    if (++g_next_serial >= (1u << 24)) g_next_serial = 1;
    p->serial = g_next_serial;
    p->backend = b;
    p->level = level;
    p->next = g_profiles;
    g_profiles = p;
    *out = (qnn_profile_handle_t)p->handle;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_profile_set_config(qnn_profile_handle_t h, const struct qnn_profile_config **cfg) {
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = find_profile(h);
  qnn_error_t rc = QNN_SUCCESS;
  if (!p) rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  else if (atomic_load(&p->in_use)) rc = QNN_PROFILE_ERROR_HANDLE_IN_USE;
  uint64_t max_events = p ? p->max_events : 0;
  int optrace = p ? p->optrace : 0;
  for (uint32_t i = 0; rc == QNN_SUCCESS && cfg && cfg[i]; i++) {
    const qnn_profile_config_t *c = cfg[i];
    switch (c->option) {
      case QNN_PROFILE_CONFIG_OPTION_CUSTOM: /* accepted and ignored where announced */
        if (!cap_on(QNN_PROPERTY_PROFILE_SUPPORT_CUSTOM_CONFIG))
          rc = QNN_COMMON_ERROR_NOT_SUPPORTED;
        break;
      case QNN_PROFILE_CONFIG_OPTION_MAX_EVENTS:
        if (!cap_on(QNN_PROPERTY_PROFILE_SUPPORT_MAX_EVENTS_CONFIG))
          rc = QNN_COMMON_ERROR_NOT_SUPPORTED;
        else max_events = c->u.num_max_events;
        break;
      case QNN_PROFILE_CONFIG_OPTION_ENABLE_OPTRACE:
        if (!cap_on(QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG))
          rc = QNN_COMMON_ERROR_NOT_SUPPORTED;
        else optrace = c->u.enable_optrace != 0;
        break;
      default:
        rb_logf(p->backend->log, QNN_LOG_LEVEL_ERROR, "profileSetConfig: unknown option %u",
                c->option);
        rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
    }
  }
  if (rc == QNN_SUCCESS && p) { /* all or nothing: a config the backend cannot take fails */
    p->max_events = max_events;
    p->optrace = optrace;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_profile_free(qnn_profile_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = find_profile(h);
  qnn_error_t rc = QNN_SUCCESS;
  if (!p) rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  else if (atomic_load(&p->in_use)) rc = QNN_PROFILE_ERROR_HANDLE_IN_USE;
  else profile_destroy(p);
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_profile_get_events(qnn_profile_handle_t h, const uint64_t **ids, uint32_t *n) {
  if (!ids || !n) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = find_profile(h);
  rb_backend *b = p ? p->backend : NULL;
  pthread_mutex_unlock(&g_rb.lock);
  /* Fault rules (counted per backend, as graphExecute's): a read that fails after the call it
   * profiled succeeded. Outside the registry lock: a rule's latency sleeps. */
  if (b) {
    qnn_error_t f = rb_fault(b, FR_PROFILE_GET_EVENTS, b->log);
    if (f) return f;
  }
  pthread_mutex_lock(&g_rb.lock);
  p = find_profile(h);
  qnn_error_t rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  if (p) {
    *ids = p->rec.ids;
    *n = p->rec.n_top;
    rc = QNN_SUCCESS;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_profile_get_sub_events(uint64_t id, const uint64_t **ids, uint32_t *n) {
  if (!ids || !n) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = NULL;
  const rb_pevent *e = find_event(id, &p);
  qnn_error_t rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  if (e) {
    *ids = e->child_n ? p->rec.ids + e->child_off : NULL;
    *n = e->child_n;
    rc = QNN_SUCCESS;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

static const char *ident_of(const rb_profile *p, const rb_pevent *e) {
  return e->ident == UINT32_MAX ? NULL : p->rec.str + e->ident;
}

qnn_error_t rb_profile_get_event_data(uint64_t id, struct qnn_profile_event_data *out) {
  if (!out) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = NULL;
  const rb_pevent *e = find_event(id, &p);
  qnn_error_t rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  if (e && e->unit == QNN_PROFILE_EVENTUNIT_OBJECT) {
    /* an object has no number: only the extended data can carry it (QnnProfile.h) */
    rc = QNN_PROFILE_ERROR_INCOMPATIBLE_EVENT;
  } else if (e) {
    out->type = e->type;
    out->unit = e->unit;
    out->value = e->value;
    out->identifier = ident_of(p, e);
    rc = QNN_SUCCESS;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_profile_get_extended_event_data(uint64_t id,
                                               struct qnn_profile_extended_event_data *out) {
  if (!cap_on(QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT)) return QNN_COMMON_ERROR_NOT_SUPPORTED;
  if (!out) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = NULL;
  const rb_pevent *e = find_event(id, &p);
  qnn_error_t rc = QNN_PROFILE_ERROR_INVALID_HANDLE;
  if (e) {
    memset(out, 0, sizeof *out);
    out->version = QNN_PROFILE_DATA_VERSION_1;
    out->u.v1.type = e->type;
    out->u.v1.unit = e->unit;
    if (e->unit == QNN_PROFILE_EVENTUNIT_OBJECT) {
      qnn_profile_backend_opaque_object_t *o = &out->u.v1.u.backend_opaque_object;
      o->opaque_object.data = p->rec.str + e->obj_off;
      o->opaque_object.len = e->obj_len;
      o->file_name = p->rec.str + e->obj_file;
    } else {
      out->u.v1.u.value.data_type = QNN_DATATYPE_UINT_64;
      out->u.v1.u.value.u.uint64_value = e->value;
    }
    out->u.v1.timestamp = e->timestamp;
    out->u.v1.identifier = ident_of(p, e);
    rc = QNN_SUCCESS;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

/* ---- recording ------------------------------------------------------------------------------ */

qnn_error_t rb_profile_begin(rb_backend *b, qnn_profile_handle_t handle, uint32_t num_ops,
                             qnn_error_t bad_handle, qnn_error_t in_use, rb_prof_call *pc) {
  memset(pc, 0, sizeof *pc);
  pc->t_enter = rb_mono_ns();
  if (!handle) return QNN_SUCCESS;
  pthread_mutex_lock(&g_rb.lock);
  rb_profile *p = find_profile(handle);
  qnn_error_t rc = QNN_SUCCESS;
  if (!p || p->backend != b) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "unknown profile handle %p", handle);
    rc = bad_handle;
  } else if (atomic_exchange(&p->in_use, 1)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "profile handle %p is in use by another call (a "
            "profile handle serves one call at a time)", handle);
    rc = in_use;
  } else {
    pc->p = p;
  }
  pthread_mutex_unlock(&g_rb.lock);
  if (rc == QNN_SUCCESS && pc->p && num_ops) {
    uint64_t *block = calloc((size_t)num_ops * 6, sizeof *block); /* OOM: no per-op events */
    if (block) {
      pc->op_t0 = block;
      pc->op_t1 = block + num_ops;
      pc->op_first = block + 2 * (size_t)num_ops;
      pc->op_busy = block + 3 * (size_t)num_ops;
      pc->op_wait = block + 4 * (size_t)num_ops;
      pc->op_wait_from = block + 5 * (size_t)num_ops;
      pc->num_ops = num_ops;
    }
  }
  return rc;
}

void rb_profile_row_group(rb_prof_call *pc, uint64_t group_t0) {
  if (!pc || !pc->num_ops) return;
  for (uint32_t o = 0; o < pc->num_ops; o++) {
    uint64_t prev = o ? pc->op_t1[o - 1] : group_t0;
    if (pc->row_groups == 0) {
      pc->op_first[o] = pc->op_t0[o];
      pc->op_wait_from[o] = prev;
    }
    pc->op_busy[o] += pc->op_t1[o] - pc->op_t0[o];
    pc->op_wait[o] += pc->op_t0[o] > prev ? pc->op_t0[o] - prev : 0;
  }
  pc->row_groups++;
}

/* Appends len bytes to the recording's string pool: their offset, or UINT32_MAX (then the
 * recording is full). */
static uint32_t pool_put(rb_precord *r, const void *data, size_t len) {
  if (len > UINT32_MAX - r->slen) {
    r->full = 1;
    return UINT32_MAX;
  }
  if (r->slen + len > r->scap) {
    size_t cap = r->scap ? r->scap * 2 : 256;
    while (cap < r->slen + len) cap *= 2;
    char *s = realloc(r->str, cap);
    if (!s) {
      r->full = 1;
      return UINT32_MAX;
    }
    r->str = s;
    r->scap = cap;
  }
  memcpy(r->str + r->slen, data, len);
  uint32_t off = (uint32_t)r->slen;
  r->slen += len;
  return off;
}

/* Adds an event; its index, or -1 once the recording is full. */
static int add(rb_precord *r, uint64_t max_events, int parent, uint32_t type, uint32_t unit,
               uint64_t value, uint64_t t_ns, const char *ident) {
  if (r->full || (max_events && r->n >= max_events)) {
    r->full = 1;
    return -1;
  }
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? r->cap * 2 : 16;
    rb_pevent *ev = realloc(r->ev, cap * sizeof *ev);
    if (!ev) {
      r->full = 1;
      return -1;
    }
    r->ev = ev;
    r->cap = cap;
  }
  uint32_t off = UINT32_MAX;
  if (ident && (off = pool_put(r, ident, strlen(ident) + 1)) == UINT32_MAX) return -1;
  rb_pevent *e = &r->ev[r->n];
  memset(e, 0, sizeof *e);
  e->type = type;
  e->unit = unit;
  e->value = value;
  e->timestamp = t_ns / 1000u;
  e->parent = parent;
  e->ident = off;
  return (int)r->n++;
}

/* Builds the id lists (sub-events of one event together) and swaps the recording in. */
static void seal_and_release(rb_prof_call *pc, rb_precord *r) {
  rb_profile *p = pc->p;
  uint32_t *fill = NULL;
  if (r->n) {
    r->ids = calloc(r->n, sizeof *r->ids);
    fill = calloc(r->n, sizeof *fill);
    if (!r->ids || !fill) {
      record_free(r); /* an empty recording: the call's events are lost, not half-made */
    } else {
      for (uint32_t i = 0; i < r->n; i++)
        if (r->ev[i].parent < 0) r->n_top++;
        else r->ev[r->ev[i].parent].child_n++;
      uint32_t at = r->n_top;
      for (uint32_t i = 0; i < r->n; i++) {
        r->ev[i].child_off = at;
        at += r->ev[i].child_n;
      }
    }
  }
  pthread_mutex_lock(&g_rb.lock);
  p->gen++;
  for (uint32_t i = 0, top = 0; r->ids && i < r->n; i++) {
    int par = r->ev[i].parent;
    if (par < 0) r->ids[top++] = make_id(p, i);
    else r->ids[r->ev[par].child_off + fill[par]++] = make_id(p, i);
  }
  rb_precord old = p->rec;
  p->rec = *r;
  atomic_store(&p->in_use, 0);
  pthread_mutex_unlock(&g_rb.lock);
  record_free(&old);
  free(fill);
  free(pc->op_t0); /* the block of all per-op arrays */
  pc->op_t0 = pc->op_t1 = pc->op_first = pc->op_busy = pc->op_wait = pc->op_wait_from = NULL;
  pc->num_ops = 0;
  pc->p = NULL;
}

void rb_profile_abandon(rb_prof_call *pc) {
  if (!pc->p) return;
  rb_precord r;
  memset(&r, 0, sizeof r);
  seal_and_release(pc, &r);
}

static uint64_t us(uint64_t ns) { return ns / 1000u; }

/* A test's opaque object (HTPU_REF_PROFILE_OBJECT=<bytes> at backendCreate): an OBJECT event
 * under `parent` whose payload is those bytes and whose file name is RB_PROFILE_OBJECT_FILE,
 * so a client's handling of objects (read with the extended data only; passed on as an
 * object, never a number) can be checked. No HTP event of this unit is known. */
#define RB_PROFILE_EVENTTYPE_OBJECT 0xF001u
#define RB_PROFILE_OBJECT_FILE "htpu-reference-object.bin"
static void add_object(rb_precord *r, const rb_backend *b, uint64_t max_events, int parent,
                       uint64_t t_ns) {
  if (!b->has_profile_object || parent < 0) return;
  const char *payload = b->profile_object;
  int i = add(r, max_events, parent, RB_PROFILE_EVENTTYPE_OBJECT, QNN_PROFILE_EVENTUNIT_OBJECT,
              0, t_ns, NULL);
  if (i < 0) return;
  size_t len = strlen(payload);
  uint32_t off = pool_put(r, payload, len + 1); /* NUL kept for the pool, not in the object */
  uint32_t file = pool_put(r, RB_PROFILE_OBJECT_FILE, sizeof RB_PROFILE_OBJECT_FILE);
  if (off == UINT32_MAX || file == UINT32_MAX) {
    r->n--; /* not recorded: the recording is full */
    return;
  }
  r->ev[i].obj_off = off;
  r->ev[i].obj_len = (uint32_t)len;
  r->ev[i].obj_file = file;
}

void rb_profile_end_execute(rb_prof_call *pc, const ref_model *m, uint32_t gi, qnn_error_t rc) {
  rb_profile *p = pc->p;
  if (!p) return;
  rb_precord r;
  memset(&r, 0, sizeof r);
  if (rc != QNN_SUCCESS) { /* a failed call leaves an empty (reset) profile */
    seal_and_release(pc, &r);
    return;
  }
  uint64_t t_exit = rb_mono_ns(), mx = p->max_events;
  const ref_graph *g = &m->graphs[gi];
  uint64_t run = pc->t_run1 - pc->t_run0, wait = pc->t_locked - pc->t_enter;
  int top = add(&r, mx, -1, QNN_PROFILE_EVENTTYPE_EXECUTE, QNN_PROFILE_EVENTUNIT_MICROSEC,
                us(t_exit - pc->t_enter), pc->t_enter, g->name);
  add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC,
      QNN_PROFILE_EVENTUNIT_MICROSEC, us(t_exit - pc->t_locked), pc->t_locked, NULL);
  add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HTP_RPC_TIME_MICROSEC,
      QNN_PROFILE_EVENTUNIT_MICROSEC, us(pc->t_run1 - pc->t_checked), pc->t_checked, NULL);
  /* Waits included: the graph's turn is the reference's resource acquisition. */
  int accel = add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC,
                  QNN_PROFILE_EVENTUNIT_MICROSEC, us(run + wait), pc->t_run0, NULL);
  add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_EXCL_WAIT_TIME_MICROSEC,
      QNN_PROFILE_EVENTUNIT_MICROSEC, us(run), pc->t_run0, NULL);
  add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_COUNT,
      QNN_PROFILE_EVENTUNIT_COUNT, 0, pc->t_run0, NULL); /* the reference never yields */
  add_object(&r, p->backend, mx, top, pc->t_run0);
  int detailed = p->level == QNN_PROFILE_LEVEL_DETAILED, linting = p->level ==
      QNN_HTP_PROFILE_LEVEL_LINTING;
  if (p->optrace)
    rb_logf(p->backend->log, QNN_LOG_LEVEL_WARN, "graphExecute: graph '%s': optrace asked, but "
            "a reference binary carries no optrace data: detailed events only", g->name);
  if ((detailed || linting) && top >= 0) {
    uint32_t type = linting ? QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE
                            : QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE;
    int cyc = add(&r, mx, top, type, QNN_PROFILE_EVENTUNIT_CYCLES, run * RB_CYCLES_PER_NS,
                  pc->t_run0, NULL);
    /* per-op figures only when every op was timed (a run with a batch multiple: summed over
     * its row groups) */
    uint32_t nops = pc->row_groups && pc->num_ops == g->num_ops ? pc->num_ops : 0;
    for (uint32_t o = 0; cyc >= 0 && o < nops; o++) {
      int node = add(&r, mx, cyc, QNN_PROFILE_EVENTTYPE_NODE, QNN_PROFILE_EVENTUNIT_CYCLES,
                     pc->op_busy[o] * RB_CYCLES_PER_NS, pc->op_first[o], g->ops[o].name);
      if (linting && node >= 0) {
        add(&r, mx, node, QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT, QNN_PROFILE_EVENTUNIT_CYCLES,
            pc->op_wait[o] * RB_CYCLES_PER_NS, pc->op_wait_from[o], NULL);
        /* one thread: no background op ever overlaps */
        add(&r, mx, node, QNN_HTP_PROFILE_EVENTTYPE_NODE_OVERLAP, QNN_PROFILE_EVENTUNIT_CYCLES,
            0, pc->op_first[o], NULL);
      }
    }
    for (uint32_t o = 0; detailed && accel >= 0 && o < nops; o++)
      add(&r, mx, accel, QNN_PROFILE_EVENTTYPE_NODE, QNN_PROFILE_EVENTUNIT_MICROSEC,
          us(pc->op_busy[o]), pc->op_first[o], g->ops[o].name);
  }
  seal_and_release(pc, &r);
}

void rb_profile_end_load(rb_prof_call *pc, qnn_error_t rc) {
  rb_profile *p = pc->p;
  if (!p) return;
  rb_precord r;
  memset(&r, 0, sizeof r);
  if (rc == QNN_SUCCESS) {
    uint64_t t_exit = rb_mono_ns(), mx = p->max_events;
    int top = add(&r, mx, -1, QNN_PROFILE_EVENTTYPE_INIT, QNN_PROFILE_EVENTUNIT_MICROSEC,
                  us(t_exit - pc->t_enter), pc->t_enter, NULL);
    add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HOST_RPC_TIME_MICROSEC,
        QNN_PROFILE_EVENTUNIT_MICROSEC, us(t_exit - pc->t_enter), pc->t_enter, NULL);
    add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HTP_RPC_TIME_MICROSEC,
        QNN_PROFILE_EVENTUNIT_MICROSEC, us(t_exit - pc->t_run0), pc->t_run0, NULL);
    add(&r, mx, top, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_ACCEL_TIME_MICROSEC,
        QNN_PROFILE_EVENTUNIT_MICROSEC, us(pc->t_run1 - pc->t_run0), pc->t_run0, NULL);
  }
  seal_and_release(pc, &r);
}

/* Profiles the callers left alive, freed at unload like the registry's other handles (one in
 * use by a call still running is left to the process exit). */
__attribute__((destructor)) static void rb_profile_unload(void) {
  pthread_mutex_lock(&g_rb.lock);
  for (rb_profile *p = g_profiles, *next; p; p = next) {
    next = p->next;
    if (!atomic_load(&p->in_use)) profile_destroy(p);
  }
  pthread_mutex_unlock(&g_rb.lock);
}
