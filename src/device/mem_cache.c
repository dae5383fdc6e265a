/* mem_cache.c - a context's registrations of tensors in FastRPC memory (mem_cache.h). */
#include "mem_cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "qnn/qnn_htp_abi.h"

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
    shared_registry_set_note(r,
                             "memRegister of tensor '%s' failed with QNN error %u (%s); it is "
                             "passed as an ordinary buffer",
                             t->name, code, htpu_qnn_error_name(code));
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
