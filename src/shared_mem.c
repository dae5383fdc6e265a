/* shared_mem.c - the public shared buffers: htpu_shared_* and htpu_graph_alloc_io. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/base.h"
#include "exec/exec.h"
#include "internal.h"

#define SHARED_ALIGN 64u

typedef struct shared_obj {
  htpu_object base;
  runtime_obj *rt;
  void *data;
  size_t size;
  int fd;        /* -1: ordinary memory */
  char note[SHARED_NOTE_MAX]; /* why ordinary memory (never "" then), fixed at allocation */
} shared_obj;

static void shared_destroy(htpu_object *o) {
  shared_obj *s = (shared_obj *)o;
  runtime_obj *rt = s->rt;
  if (s->fd >= 0)
    runtime_free_region(rt, s->data, s->fd);
  else
    free(s->data);
  free(s);
  STAT_SUB(live_shared_buffers, 1);
  obj_release(&rt->base);
}

/* Allocates on rt, consuming the caller's reference on it (the buffer keeps it). */
static int shared_alloc_on(runtime_obj *rt, size_t size, htpu_shared **out) {
  if (size == 0 || size > (size_t)INT_MAX - SHARED_ALIGN) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_EINVAL, 0, "shared buffer size %zu; expected 1 .. %d bytes", size,
                          INT_MAX - (int)SHARED_ALIGN);
  }
  shared_obj *s = calloc(1, sizeof *s);
  if (!s) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  s->rt = rt;
  s->size = size;
  size_t rounded = (size + SHARED_ALIGN - 1) / SHARED_ALIGN * SHARED_ALIGN;
  s->data = shared_region_alloc(&rt->shared, rounded, &s->fd, s->note, sizeof s->note);
  if (!s->data) s->data = aligned_alloc(SHARED_ALIGN, rounded);
  if (!s->data) {
    free(s);
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", rounded);
  }
  obj_init(&s->base, OBJ_SHARED, shared_destroy);
  STAT_ADD(live_shared_buffers, 1);
  void *handle = obj_register(&s->base);
  if (!handle) {
    obj_release(&s->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = handle;
  return 0;
}

int htpu_shared_alloc(htpu_runtime *h, size_t size, htpu_shared **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_shared_alloc: out is NULL");
  *out = NULL;
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_shared_alloc: the runtime is closed");
  int rc = shared_alloc_on(rt, size, out);
  return rc;
}

int htpu_shared_free(htpu_shared **sp) {
  htpu_clear_error();
  if (!sp || !*sp) return 0;
  htpu_object *o = obj_unregister(*sp, OBJ_SHARED);
  *sp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_shared_free: not a live shared buffer");
  obj_release(o);
  return 0;
}

void *htpu_shared_data(htpu_shared *h) {
  shared_obj *s = (shared_obj *)obj_acquire(h, OBJ_SHARED);
  if (!s) return NULL;
  void *p = s->data;
  obj_release(&s->base); /* borrowed while the caller's handle is open */
  return p;
}

size_t htpu_shared_size(htpu_shared *h) {
  shared_obj *s = (shared_obj *)obj_acquire(h, OBJ_SHARED);
  if (!s) return 0;
  size_t n = s->size;
  obj_release(&s->base);
  return n;
}

int htpu_shared_is_fastrpc(htpu_shared *h) {
  shared_obj *s = (shared_obj *)obj_acquire(h, OBJ_SHARED);
  if (!s) return 0;
  int yes = s->fd >= 0;
  obj_release(&s->base);
  return yes;
}

const char *htpu_shared_note(htpu_shared *h) {
  shared_obj *s = (shared_obj *)obj_acquire(h, OBJ_SHARED);
  if (!s) return NULL;
  /* Written once before the handle was published; the caller's handle keeps it. */
  const char *note = s->note;
  obj_release(&s->base);
  return note;
}

static size_t align_up(size_t n) { return (n + SHARED_ALIGN - 1) / SHARED_ALIGN * SHARED_ALIGN; }

int htpu_graph_alloc_io(htpu_graph *gh, htpu_io *inputs, htpu_io *outputs, htpu_shared **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_alloc_io: out is NULL");
  *out = NULL;
  graph_obj *g = (graph_obj *)obj_acquire(gh, OBJ_GRAPH);
  if (!g) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_graph_alloc_io: the graph is closed");
  const htpu_graph_info *gi = &g->ctx->info->pub.graphs[g->index];
  int rc = 0;
  if ((gi->num_inputs && !inputs) || (gi->num_outputs && !outputs))
    rc = htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_alloc_io: inputs/outputs array is NULL");
  size_t total = 0;
  for (uint32_t i = 0; !rc && i < gi->num_inputs + gi->num_outputs; i++) {
    const htpu_tensor_info *t = i < gi->num_inputs ? &gi->inputs[i] : &gi->outputs[i - gi->num_inputs];
    /* QNN buffers are at most 4 GiB (32-bit sizes), and execute refuses more anyway. */
    if (t->byte_size > UINT32_MAX || total > (size_t)INT_MAX)
      rc = htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "graph '%s': tensor '%s' (%zu bytes) does not fit a shared buffer",
                          gi->name, t->name, t->byte_size);
    else
      total += align_up(t->byte_size ? t->byte_size : 1);
  }
  htpu_shared *buf = NULL;
  if (!rc) {
    obj_retain(&g->ctx->rt->base); /* the buffer's reference on the graph's runtime */
    rc = shared_alloc_on(g->ctx->rt, total, &buf);
  }
  if (!rc) {
    char *base = htpu_shared_data(buf);
    size_t at = 0;
    for (uint32_t i = 0; i < gi->num_inputs + gi->num_outputs; i++) {
      int is_in = i < gi->num_inputs;
      const htpu_tensor_info *t = is_in ? &gi->inputs[i] : &gi->outputs[i - gi->num_inputs];
      htpu_io io = {base + at, t->byte_size, t->dtype};
      if (is_in)
        inputs[i] = io;
      else
        outputs[i - gi->num_inputs] = io;
      at += align_up(t->byte_size ? t->byte_size : 1);
    }
    *out = buf;
  }
  if (rc) obj_keep_error(&g->base);
  obj_release(&g->base);
  return rc;
}
