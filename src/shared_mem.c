/* shared_mem.c - FastRPC buffers: allocation, the region registry, per-context registration. */
#include "shared_mem.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "internal.h"
#include "qnn/qnn_htp_abi.h"
#include "qnn_log.h"
#include "stats.h"
#include "vec.h"

/* rpcmem constants (fastrpc's rpcmem.h): the system heap, default (cached) flags. */
#define RPCMEM_HEAP_ID_SYSTEM 25
#define RPCMEM_DEFAULT_FLAGS 1u
#define SHARED_ALIGN 64u

/* Sets the note unless one is set already. Caller holds r->lock (or is shared_registry_init,
 * before anyone else can see r). */
static void set_note_locked(shared_registry *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_note_locked(shared_registry *r, const char *fmt, ...) {
  if (atomic_load_explicit(&r->note_set, memory_order_relaxed)) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->note, sizeof r->note, fmt, ap);
  va_end(ap);
  atomic_store_explicit(&r->note_set, 1, memory_order_release);
}

const char *shared_registry_note(shared_registry *r) {
  return atomic_load_explicit(&r->note_set, memory_order_acquire) ? r->note : "";
}

void shared_registry_init(shared_registry *r, const qnn_backend_lib *b, int has_device,
                          const char *fastrpc_lib) {
  memset(r, 0, sizeof *r);
  atomic_init(&r->note_set, 0);
  pthread_mutex_init(&r->lock, NULL);
  if (!has_device) {
    set_note_locked(r, "no QNN device: shared buffers need one");
    return;
  }
  if (!b->mem_register || !b->mem_de_register) {
    set_note_locked(r, "the backend's API version has no memRegister");
    return;
  }
  if (b->property_has_capability &&
      b->property_has_capability(QNN_PROPERTY_MEM_SUPPORT_CUSTOM) != QNN_SUCCESS) {
    set_note_locked(r,
             "the backend does not support custom (HTP shared-buffer) memory registration");
    return;
  }
  dlerror();
  r->dl = dlopen(fastrpc_lib, RTLD_NOW | RTLD_LOCAL);
  if (!r->dl) {
    const char *e = dlerror();
    set_note_locked(r, "loading the FastRPC library '%s' failed: %s", fastrpc_lib,
             e ? e : "unknown error");
    return;
  }
  r->rpc_alloc = (void *(*)(int, uint32_t, int))dlsym(r->dl, "rpcmem_alloc");
  r->rpc_free = (void (*)(void *))dlsym(r->dl, "rpcmem_free");
  r->rpc_to_fd = (int (*)(void *))dlsym(r->dl, "rpcmem_to_fd");
  if (!r->rpc_alloc || !r->rpc_free || !r->rpc_to_fd) {
    set_note_locked(r, "'%s' lacks rpcmem_alloc/rpcmem_free/rpcmem_to_fd",
             fastrpc_lib);
    dlclose(r->dl);
    r->dl = NULL;
    return;
  }
  r->available = 1;
}

void shared_registry_destroy(shared_registry *r) {
  if (r->dl) dlclose(r->dl);
  free(r->regions);
  pthread_mutex_destroy(&r->lock);
  memset(r, 0, sizeof *r);
}

int shared_registry_find(shared_registry *r, const void *p, size_t len, shared_region *out) {
  int found = 0;
  uintptr_t a = (uintptr_t)p;
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->num_regions && !found; i++) {
    uintptr_t base = (uintptr_t)r->regions[i].base;
    if (a >= base && a - base <= r->regions[i].size && len <= r->regions[i].size - (a - base)) {
      *out = r->regions[i];
      found = 1;
    }
  }
  pthread_mutex_unlock(&r->lock);
  return found;
}

static int registry_add(shared_registry *r, shared_region reg) {
  pthread_mutex_lock(&r->lock);
  int rc = vec_reserve(&r->regions, &r->cap_regions, r->num_regions, sizeof *r->regions, 8);
  if (rc == 0) r->regions[r->num_regions++] = reg;
  pthread_mutex_unlock(&r->lock);
  return rc;
}

static void registry_remove(shared_registry *r, const void *base) {
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->num_regions; i++) {
    if (r->regions[i].base == base) {
      r->regions[i] = r->regions[--r->num_regions];
      break;
    }
  }
  pthread_mutex_unlock(&r->lock);
}

/* ---- per-context registrations ----------------------------------------------------------- */

void mem_cache_init(mem_cache *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
}

void mem_cache_destroy(mem_cache *c) {
  free(c->entries);
  pthread_mutex_destroy(&c->lock);
}

static int same_layout(const mem_entry *e, const void *ptr, const htpu_tensor_info *t) {
  if (e->ptr != ptr || e->data_type != t->qnn_data_type || e->rank != t->rank) return 0;
  return memcmp(e->dims, t->dims, t->rank * sizeof(uint32_t)) == 0;
}

/* The cached entry for this tensor at ptr, or NULL. Caller holds c->lock. */
static const mem_entry *find_locked(const mem_cache *c, const void *ptr,
                                    const htpu_tensor_info *t) {
  for (size_t i = 0; i < c->num; i++)
    if (same_layout(&c->entries[i], ptr, t)) return &c->entries[i];
  return NULL;
}

int mem_cache_lookup(mem_cache *c, shared_registry *r, const htpu_tensor_info *t,
                     const void *ptr, qnn_mem_handle_t *out) {
  *out = NULL;
  if (!r->available) return 0;
  shared_region reg;
  if (!shared_registry_find(r, ptr, t->byte_size, &reg)) return 0;
  /* Tried only: a bind holds the lock across memRegister, a DSP round trip. */
  if (pthread_mutex_trylock(&c->lock) != 0) return -1;
  const mem_entry *e = find_locked(c, ptr, t);
  if (e) *out = e->handle; /* NULL: registration failed before; a plain client buffer */
  pthread_mutex_unlock(&c->lock);
  return e ? 0 : -1;
}

qnn_mem_handle_t mem_cache_bind(mem_cache *c, shared_registry *r, const qnn_backend_lib *b,
                                qnn_context_handle_t ctx, const htpu_tensor_info *t,
                                const void *ptr) {
  if (!r->available) return NULL;
  shared_region reg;
  if (!shared_registry_find(r, ptr, t->byte_size, &reg)) return NULL;
  pthread_mutex_lock(&c->lock);
  const mem_entry *found = find_locked(c, ptr, t);
  if (found) {
    qnn_mem_handle_t h = found->handle; /* NULL: registration failed before */
    pthread_mutex_unlock(&c->lock);
    return h;
  }
  if (vec_reserve(&c->entries, &c->cap, c->num, sizeof *c->entries, 8) != 0) {
    pthread_mutex_unlock(&c->lock);
    return NULL;
  }
  qnn_htp_mem_descriptor_t htp;
  memset(&htp, 0, sizeof htp);
  htp.type = QNN_HTP_MEM_SHARED_BUFFER;
  htp.size = reg.size; /* the whole allocation: a tensor's own size makes the DSP refuse it */
  htp.u.shared_buffer_config.fd = reg.fd;
  htp.u.shared_buffer_config.offset = (uint64_t)((const char *)ptr - (const char *)reg.base);
  uint32_t dims[HTPU_MAX_RANK];
  memcpy(dims, t->dims, sizeof dims);
  qnn_mem_descriptor_t desc;
  memset(&desc, 0, sizeof desc);
  desc.mem_shape.num_dim = t->rank;
  desc.mem_shape.dim_size = dims;
  desc.data_type = t->qnn_data_type;
  desc.mem_type = QNN_MEM_TYPE_CUSTOM;
  desc.u.custom_info = &htp;
  qnn_mem_handle_t h = NULL;
  qnn_error_t e = b->mem_register(ctx, &desc, 1, &h);
  if (e != QNN_SUCCESS || !h) {
    /* The buffer still works as a plain client buffer. The failure is remembered (a NULL
     * entry), so the DSP is not asked again on every call, and said once. */
    h = NULL;
    uint32_t code = QNN_ERROR_CODE(e);
    pthread_mutex_lock(&r->lock);
    set_note_locked(r,
                    "memRegister of tensor '%s' failed with QNN error %u (%s); it is passed as "
                    "an ordinary buffer",
                    t->name, code, htpu_qnn_error_name(code));
    pthread_mutex_unlock(&r->lock);
  }
  mem_entry *en = &c->entries[c->num++];
  memset(en, 0, sizeof *en);
  en->ptr = ptr;
  en->data_type = t->qnn_data_type;
  en->rank = t->rank;
  memcpy(en->dims, t->dims, sizeof en->dims);
  en->fd = reg.fd;
  en->handle = h;
  pthread_mutex_unlock(&c->lock);
  if (h) STAT_ADD(mem_registrations, 1);
  return h;
}

void mem_cache_release(mem_cache *c, const qnn_backend_lib *b, int fd) {
  pthread_mutex_lock(&c->lock);
  size_t kept = 0;
  for (size_t i = 0; i < c->num; i++) {
    if (fd < 0 || c->entries[i].fd == fd) {
      /* Errors are ignored: after a DSP restart there is nothing left to deregister, and the
       * handle is forgotten either way. */
      if (b->mem_de_register && c->entries[i].handle)
        (void)b->mem_de_register(&c->entries[i].handle, 1);
    } else {
      c->entries[kept++] = c->entries[i];
    }
  }
  c->num = kept;
  pthread_mutex_unlock(&c->lock);
}

/* ---- FastRPC regions: the public buffers below and the core's conversion scratch ---------- */

void *shared_region_alloc(shared_registry *r, size_t size, int *fd, char *why, size_t whylen) {
  *fd = -1;
  if (!r->available) {
    /* Published at runtime open (every reason for !available sets one), never changed after. */
    snprintf(why, whylen, "%s", shared_registry_note(r));
    return NULL;
  }
  if (size == 0 || size > (size_t)INT_MAX) {
    snprintf(why, whylen, "%zu bytes do not fit rpcmem_alloc's int size", size);
    return NULL;
  }
  void *p = r->rpc_alloc(RPCMEM_HEAP_ID_SYSTEM, RPCMEM_DEFAULT_FLAGS, (int)size);
  int f = p ? r->rpc_to_fd(p) : -1;
  if (!p) {
    snprintf(why, whylen, "rpcmem_alloc of %zu bytes failed; using ordinary memory", size);
  } else if (f < 0) {
    snprintf(why, whylen,
             "rpcmem_to_fd found no fd for a %zu-byte rpcmem buffer; using ordinary memory",
             size);
  } else if (registry_add(r, (shared_region){p, size, f}) != 0) {
    snprintf(why, whylen, "out of memory recording a %zu-byte rpcmem buffer; using ordinary memory",
             size);
  } else {
    *fd = f;
    return p;
  }
  if (p) r->rpc_free(p);
  pthread_mutex_lock(&r->lock);
  set_note_locked(r, "%s", why);
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

void shared_region_free(runtime_obj *rt, void *p, int fd) {
  /* No execute may be using a handle while it is deregistered. */
  gate_enter_exclusive(&htpu_exec_gate);
  pthread_mutex_lock(&rt->contexts_lock);
  for (size_t i = 0; i < rt->num_contexts; i++)
    mem_cache_release(&rt->contexts[i]->mem, &rt->backend_lib, fd);
  pthread_mutex_unlock(&rt->contexts_lock);
  registry_remove(&rt->shared, p);
  gate_leave_exclusive(&htpu_exec_gate);
  rt->shared.rpc_free(p);
}

/* ---- the public htpu_shared handles ------------------------------------------------------ */

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
    shared_region_free(rt, s->data, s->fd);
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
