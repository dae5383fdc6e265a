/*
 * profile_read.c - a QNN profile handle's events into one htpu_profile block.
 *
 * The tree is walked breadth first, so the sub-events of each event are read one after the
 * other and land side by side: each event's children are a contiguous slice of one array, with
 * no per-event allocation. At most max_events are read; what lies past them is counted (as far
 * as the visited events say) and not read, and nesting deeper than MAX_DEPTH is not followed: a
 * backend's answer, whatever its size or shape, costs bounded memory and time. Everything the
 * backend handed out is copied before the handle is freed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "loader/loader.h"

#define MAX_DEPTH 16

typedef struct raw_event {
  qnn_profile_event_id_t id;
  uint32_t type, unit;
  uint64_t value, timestamp;
  int has_ts;
  const char *ident; /* the backend's, valid until the handle is freed */
  uint32_t parent, depth, first, nchild;
  /* unit OBJECT (extended data): the backend's opaque object, valid until the handle is freed;
   * obj_copy: within the profile's object budget (plan_objects) */
  const void *obj;
  uint64_t obj_len;
  const char *obj_file;
  int obj_copy;
} raw_event;

typedef struct reader {
  const qnn_backend_lib *b;
  qnn_error_t (*get_sub)(uint64_t, const uint64_t **, uint32_t *);
  qnn_error_t (*get_data)(uint64_t, qnn_profile_event_data_t *);
  qnn_error_t (*get_ext)(uint64_t, qnn_profile_extended_event_data_t *);
  raw_event *ev;
  uint32_t n, cap, limit;
  uint64_t dropped;
  uint32_t ext_error;  /* the code that ended extended reads, 0 if none */
  uint32_t unreadable; /* events neither call could read */
} reader;

static int push(reader *r, qnn_profile_event_id_t id, uint32_t parent, uint32_t depth) {
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? r->cap * 2 : 64;
    if (cap > r->limit) cap = r->limit;
    raw_event *ev = realloc(r->ev, (size_t)cap * sizeof *ev);
    if (!ev) return -1;
    r->ev = ev;
    r->cap = cap;
  }
  raw_event *e = &r->ev[r->n++];
  memset(e, 0, sizeof *e);
  e->id = id;
  e->parent = parent;
  e->depth = depth;
  return 0;
}

/* Adds ids[0..n) as children of `parent` (UINT32_MAX: top level), within the limit. */
static int push_all(reader *r, const uint64_t *ids, uint32_t n, uint32_t parent, uint32_t depth) {
  for (uint32_t j = 0; j < n; j++) {
    if (r->n >= r->limit) {
      r->dropped += n - j;
      return 0;
    }
    if (push(r, ids[j], parent, depth)) return -1;
  }
  return 0;
}

static uint64_t scalar_u64(const qnn_scalar_t *s) {
  switch (s->data_type) {
    case QNN_DATATYPE_UINT_64: return s->u.uint64_value;
    case QNN_DATATYPE_INT_64: return s->u.int64_value < 0 ? 0 : (uint64_t)s->u.int64_value;
    case QNN_DATATYPE_UINT_32: return s->u.uint32_value;
    case QNN_DATATYPE_INT_32: return s->u.int32_value < 0 ? 0 : (uint64_t)s->u.int32_value;
    case QNN_DATATYPE_UINT_16: return s->u.uint32_value & 0xFFFFu;
    case QNN_DATATYPE_UINT_8:
    case QNN_DATATYPE_BOOL_8: return s->u.uint32_value & 0xFFu;
    case QNN_DATATYPE_FLOAT_32: return s->u.float_value > 0 ? (uint64_t)(s->u.float_value + 0.5f) : 0;
    case QNN_DATATYPE_FLOAT_64:
      return s->u.double_value > 0 ? (uint64_t)(s->u.double_value + 0.5) : 0;
    default: return 0; /* strings, objects: no number to show */
  }
}

/* One event's data: extended while the backend gives it, else plain. */
static void read_one(reader *r, raw_event *e) {
  if (r->get_ext && !r->ext_error) {
    qnn_profile_extended_event_data_t x;
    memset(&x, 0, sizeof x);
    qnn_error_t rc = r->get_ext(e->id, &x);
    if (rc == QNN_SUCCESS && x.version == QNN_PROFILE_DATA_VERSION_1) {
      e->type = x.u.v1.type;
      e->unit = x.u.v1.unit;
      if (x.u.v1.unit == QNN_PROFILE_EVENTUNIT_OBJECT) {
        /* the union holds the object, not a number (QnnProfile.h) */
        const qnn_profile_backend_opaque_object_t *o = &x.u.v1.u.backend_opaque_object;
        e->obj = o->opaque_object.len ? o->opaque_object.data : NULL;
        e->obj_len = e->obj ? o->opaque_object.len : 0;
        e->obj_file = o->file_name;
      } else {
        e->value = scalar_u64(&x.u.v1.u.value);
      }
      e->timestamp = x.u.v1.timestamp;
      e->has_ts = 1;
      e->ident = x.u.v1.identifier;
      return;
    }
    r->ext_error = rc != QNN_SUCCESS ? QNN_ERROR_CODE(rc) : UINT32_MAX;
  }
  qnn_profile_event_data_t d;
  memset(&d, 0, sizeof d);
  if (r->get_data(e->id, &d) != QNN_SUCCESS) {
    r->unreadable++;
    return;
  }
  e->type = d.type;
  e->unit = d.unit;
  e->value = d.value;
  e->ident = d.identifier;
}

static int walk(reader *r, qnn_profile_handle_t h) {
  qnn_error_t (*get_events)(qnn_profile_handle_t, const uint64_t **, uint32_t *) =
      PROFILE_SLOT(r->b, profile_get_events);
  const uint64_t *ids = NULL;
  uint32_t n = 0;
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = get_events(h, &ids, &n);
  if (e != QNN_SUCCESS) return qnn_fail(e, mark, "reading the profile's events failed");
  if (n && !ids)
    return htpu_set_error(HTPU_EQNN, 0, "profileGetEvents gave %u events and no id list", n);
  if (push_all(r, ids, n, UINT32_MAX, 0)) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  for (uint32_t i = 0; i < r->n; i++) {
    raw_event *ev = &r->ev[i];
    read_one(r, ev);
    ev = &r->ev[i];
    ev->first = r->n;
    if (!r->get_sub || ev->depth + 1 >= MAX_DEPTH) continue;
    ids = NULL;
    n = 0;
    if (r->get_sub(ev->id, &ids, &n) != QNN_SUCCESS || !ids) continue;
    if (push_all(r, ids, n, i, ev->depth + 1))
      return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    r->ev[i].nchild = r->n - r->ev[i].first;
  }
  return 0;
}

/* The first child of event i (UINT32_MAX: the top level) of one of the types. */
static int child_of_type(const reader *r, uint32_t i, const uint32_t *types, int ntypes) {
  uint32_t from = i == UINT32_MAX ? 0 : r->ev[i].first;
  uint32_t count = 0;
  if (i == UINT32_MAX) {
    while (count < r->n && r->ev[count].parent == UINT32_MAX) count++;
  } else {
    count = r->ev[i].nchild;
  }
  for (uint32_t k = from; k < from + count; k++)
    for (int t = 0; t < ntypes; t++)
      if (r->ev[k].type == types[t]) return (int)k;
  return -1;
}

/* The per-op digest: which events hold the accelerator's figures and the ops. */
typedef struct digest {
  int top, cyc, us, host, htp;
  uint32_t nops;
} digest;

static uint32_t count_nodes(const reader *r, int i) {
  uint32_t n = 0;
  if (i < 0) return 0;
  for (uint32_t k = r->ev[i].first; k < r->ev[i].first + r->ev[i].nchild; k++)
    if (r->ev[k].type == QNN_PROFILE_EVENTTYPE_NODE) n++;
  return n;
}

/* Which event's NODE children are the ops: the cycles event's, unless the time event has more
 * read (the event cap cut the cycles event's and not the time event's). */
static int ops_holder(const reader *r, const digest *d) {
  uint32_t nc = count_nodes(r, d->cyc), nu = count_nodes(r, d->us);
  return d->cyc >= 0 && nc && nc >= nu ? d->cyc : d->us >= 0 && nu ? d->us : d->cyc;
}

static void find_digest(const reader *r, digest *d) {
  memset(d, 0, sizeof *d);
  d->cyc = d->us = d->host = d->htp = -1;
  static const uint32_t exec[] = {QNN_PROFILE_EVENTTYPE_EXECUTE, QNN_PROFILE_EVENTTYPE_INIT};
  d->top = child_of_type(r, UINT32_MAX, exec, 2);
  if (d->top < 0) return;
  static const uint32_t cyc[] = {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE,
                                 QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE};
  static const uint32_t us[] = {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC,
                                QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_ACCEL_TIME_MICROSEC};
  static const uint32_t host[] = {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC,
                                  QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HOST_RPC_TIME_MICROSEC};
  static const uint32_t htp[] = {QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HTP_RPC_TIME_MICROSEC,
                                 QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HTP_RPC_TIME_MICROSEC};
  d->cyc = child_of_type(r, (uint32_t)d->top, cyc, 2);
  d->us = child_of_type(r, (uint32_t)d->top, us, 2);
  d->host = child_of_type(r, (uint32_t)d->top, host, 2);
  d->htp = child_of_type(r, (uint32_t)d->top, htp, 2);
  /* the ops: NODE children of the cycles event, else of the time event */
  int holder = ops_holder(r, d);
  d->nops = count_nodes(r, holder);
}

/* The NODE children of event `holder` (-1: none), in order, as a list of indices. */
static uint32_t nodes_of(const reader *r, int holder, uint32_t *out, uint32_t max) {
  uint32_t n = 0;
  if (holder < 0) return 0;
  const raw_event *h = &r->ev[holder];
  for (uint32_t k = h->first; k < h->first + h->nchild && n < max; k++)
    if (r->ev[k].type == QNN_PROFILE_EVENTTYPE_NODE) out[n++] = k;
  return n;
}

/* Which objects are copied: in event order, as long as they fit HTPU_PROFILE_MAX_OBJECT_BYTES
 * together. Returns the bytes to copy; *skipped / *skipped_bytes: what does not fit. */
static uint64_t plan_objects(reader *r, uint32_t *skipped, uint64_t *skipped_bytes) {
  uint64_t total = 0;
  *skipped = 0;
  *skipped_bytes = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    raw_event *e = &r->ev[i];
    if (!e->obj_len) continue;
    if (e->obj_len <= HTPU_PROFILE_MAX_OBJECT_BYTES - total) {
      e->obj_copy = 1;
      total += e->obj_len;
    } else {
      (*skipped)++;
      *skipped_bytes += e->obj_len;
    }
  }
  return total;
}

/* An event's object into the block at *s (its bytes, then its file name). */
static void copy_object(const raw_event *e, htpu_profile_event *o, char **s) {
  if (e->obj_copy) {
    memcpy(*s, e->obj, (size_t)e->obj_len);
    o->object = *s;
    o->object_size = e->obj_len;
    *s += e->obj_len;
  }
  size_t l = e->obj_file ? strlen(e->obj_file) + 1 : 1;
  if (e->obj_file) memcpy(*s, e->obj_file, l);
  else **s = 0;
  o->object_file = *s;
  *s += l;
}

/* The ops: ci their events, ui the same ops' events under the other holder (cycles or time). */
typedef struct op_index {
  uint32_t *ci, *ui;
  uint32_t nops, nother;
} op_index;

typedef struct note_buf {
  char text[512];
  size_t len;
} note_buf;

__attribute__((format(printf, 2, 3))) static void note_add(note_buf *n, const char *fmt, ...) {
  if (n->len < sizeof n->text)
    n->len += (size_t)snprintf(n->text + n->len, sizeof n->text - n->len, "%s", n->len ? "; " : "");
  if (n->len >= sizeof n->text) return;
  va_list ap;
  va_start(ap, fmt);
  n->len += (size_t)vsnprintf(n->text + n->len, sizeof n->text - n->len, fmt, ap);
  va_end(ap);
}

/* The note: what the figures lack. Also decides which objects are copied (*obj_bytes). */
static void make_note(reader *r, const digest *d, const op_index *oi, htpu_profile_level level,
                      const char *graph, note_buf *n, uint64_t *obj_bytes) {
  if (r->dropped)
    note_add(n, "truncated at %u event%s (at least %llu more not read)", r->limit,
             r->limit == 1 ? "" : "s", (unsigned long long)r->dropped);
  /* A load's events (graph "") have no ops at any level: the per-op notes are an execute's. */
  int per_op = graph && graph[0] && level != HTPU_PROFILE_BASIC;
  if (r->dropped && per_op)
    note_add(n, "per-op figures partial: %u op%s read", oi->nops, oi->nops == 1 ? "" : "s");
  if (r->ext_error)
    note_add(n, "no timestamps: profileGetExtendedEventData gave QNN error %u", r->ext_error);
  if (r->unreadable)
    note_add(n, "%u event%s could not be read", r->unreadable, r->unreadable == 1 ? "" : "s");
  uint32_t obj_skipped = 0;
  uint64_t obj_skipped_bytes = 0;
  *obj_bytes = plan_objects(r, &obj_skipped, &obj_skipped_bytes);
  if (obj_skipped)
    note_add(n, "%u event object%s (%llu bytes) past the limit of %llu bytes per profile not "
             "copied", obj_skipped, obj_skipped == 1 ? "" : "s",
             (unsigned long long)obj_skipped_bytes,
             (unsigned long long)HTPU_PROFILE_MAX_OBJECT_BYTES);
  int nameless = 0;
  for (uint32_t k = 0; k < oi->nops; k++)
    if (!r->ev[oi->ci[k]].ident || !r->ev[oi->ci[k]].ident[0]) nameless = 1;
  if (nameless) note_add(n, "the binary carries no op names: ops are numbered (#0, #1, ...)");
  /* optrace data come as trace events (600) beside the detailed ones; a binary not built
   * with optrace has none, and the backend gives the detailed events alone (HTP and the
   * reference only log a warning) */
  if (per_op && level == HTPU_PROFILE_OPTRACE && d->top >= 0 && !r->dropped) {
    int traced = 0;
    for (uint32_t i = 0; i < r->n && !traced; i++)
      traced = r->ev[i].type == QNN_PROFILE_EVENTTYPE_TRACE;
    if (!traced)
      note_add(n, "no optrace data: the binary was not built with optrace, so the detailed "
               "events are shown");
  }
  if (per_op && d->top >= 0 && !oi->nops && !r->dropped)
    note_add(n, "the backend gave no per-op events at this level");
}

static char *copy_str(char **s, const char *src) {
  size_t l = strlen(src) + 1;
  char *d = memcpy(*s, src, l);
  *s += l;
  return d;
}

/* The events, copied side by side as read (children contiguous). */
static void fill_events(const reader *r, htpu_profile *p, htpu_profile_event *ev, char **s) {
  for (uint32_t i = 0; i < r->n; i++) {
    const raw_event *e = &r->ev[i];
    htpu_profile_event *o = &ev[i];
    o->type = e->type;
    o->unit = e->unit;
    o->value = e->value;
    o->name = htpu_profile_event_name(e->type);
    o->identifier = copy_str(s, e->ident ? e->ident : "");
    o->timestamp = e->timestamp;
    o->has_timestamp = e->has_ts;
    o->num_children = e->nchild;
    o->children = e->nchild ? &ev[e->first] : NULL;
    copy_object(e, o, s);
    if (e->parent == UINT32_MAX) p->num_events++;
  }
  p->events = r->n ? ev : NULL;
}

/* The per-op digest: each op's name, cycles and time, from its events under both holders. */
static void fill_ops(const op_index *oi, htpu_profile *p, const htpu_profile_event *ev,
                     htpu_profile_op *ops, char **s) {
  for (uint32_t k = 0; k < oi->nops; k++) {
    const htpu_profile_event *e = &ev[oi->ci[k]];
    htpu_profile_op *o = &ops[k];
    if (e->identifier[0]) {
      o->name = e->identifier;
    } else {
      int w = snprintf(*s, 16, "#%u", k);
      o->name = *s;
      *s += w + 1;
    }
    o->start = e->timestamp;
    int has_cyc = 0, has_us = 0;
    for (int side = 0; side < 2; side++) {
      const htpu_profile_event *x = side == 0 ? e : k < oi->nother ? &ev[oi->ui[k]] : NULL;
      if (!x) continue;
      if (x->unit == QNN_PROFILE_EVENTUNIT_CYCLES) {
        o->cycles = x->value;
        has_cyc = 1;
      } else {
        o->us = x->value;
        has_us = 1;
      }
    }
    if (has_cyc && p->ops_with_cycles == k) p->ops_with_cycles++;
    if (has_us && p->ops_with_us == k) p->ops_with_us++;
  }
  p->num_ops = oi->nops;
  p->ops = oi->nops ? ops : NULL;
}

/* One block: header, events, ops, strings (and the objects' bytes). NULL when out of memory. */
static htpu_profile *build_block(const reader *r, const digest *d, const op_index *oi,
                                 htpu_profile_level level, int extended, const char *graph,
                                 const char *note, uint64_t obj_bytes) {
  size_t strings = strlen(graph) + 1 + strlen(note) + 1;
  for (uint32_t i = 0; i < r->n; i++) {
    strings += (r->ev[i].ident ? strlen(r->ev[i].ident) : 0) + 1;
    strings += (r->ev[i].obj_file ? strlen(r->ev[i].obj_file) : 0) + 1;
  }
  strings += (size_t)obj_bytes;
  strings += (size_t)oi->nops * 16; /* "#<index>" names */
  size_t size = sizeof(htpu_profile) + (size_t)r->n * sizeof(htpu_profile_event) +
                (size_t)oi->nops * sizeof(htpu_profile_op) + strings;
  unsigned char *blk = calloc(1, size);
  if (!blk) {
    htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", size);
    return NULL;
  }
  htpu_profile *p = (htpu_profile *)blk;
  htpu_profile_event *ev = (htpu_profile_event *)(p + 1);
  htpu_profile_op *ops = (htpu_profile_op *)(ev + r->n);
  char *s = (char *)(ops + oi->nops);
  p->level = level;
  p->graph = copy_str(&s, graph);
  p->note = copy_str(&s, note);
  p->max_events = r->limit;
  p->total_events = r->n;
  p->dropped_events = r->dropped > UINT32_MAX ? UINT32_MAX : (uint32_t)r->dropped;
  p->extended = extended && !r->ext_error;
  fill_events(r, p, ev, &s);
  if (d->us >= 0) p->accel_us = r->ev[d->us].value;
  if (d->cyc >= 0) p->accel_cycles = r->ev[d->cyc].value;
  if (d->host >= 0) p->host_rpc_us = r->ev[d->host].value;
  if (d->htp >= 0) p->htp_rpc_us = r->ev[d->htp].value;
  fill_ops(oi, p, ev, ops, &s);
  return p;
}

int profile_read(const qnn_backend_lib *b, qnn_profile_handle_t h, htpu_profile_level level,
                 uint32_t max_events, int extended, const char *graph, htpu_profile **out) {
  *out = NULL;
  reader r;
  memset(&r, 0, sizeof r);
  r.b = b;
  r.get_sub = PROFILE_SLOT(b, profile_get_sub_events);
  r.get_data = PROFILE_SLOT(b, profile_get_event_data);
  r.get_ext = extended ? PROFILE_SLOT(b, profile_get_extended_event_data) : NULL;
  r.limit = max_events;
  if (!r.get_data && !r.get_ext)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0, "the backend has no profileGetEventData");
  int rc = walk(&r, h);
  if (rc) {
    free(r.ev);
    return rc;
  }
  digest d;
  find_digest(&r, &d);
  op_index oi = {calloc(d.nops + 1, sizeof(uint32_t)), calloc(d.nops + 1, sizeof(uint32_t)), 0,
                 0};
  if (!oi.ci || !oi.ui) {
    rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  } else {
    int holder = ops_holder(&r, &d);
    oi.nops = nodes_of(&r, holder, oi.ci, d.nops);
    oi.nother = nodes_of(&r, holder == d.cyc ? d.us : d.cyc, oi.ui, d.nops);
    note_buf note = {"", 0};
    uint64_t obj_bytes = 0;
    make_note(&r, &d, &oi, level, graph, &note, &obj_bytes);
    *out = build_block(&r, &d, &oi, level, extended, graph ? graph : "", note.text, obj_bytes);
    if (!*out) rc = HTPU_ENOMEM;
  }
  free(oi.ci);
  free(oi.ui);
  free(r.ev);
  return rc;
}
