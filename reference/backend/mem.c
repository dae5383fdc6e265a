/*
 * mem.c - memRegister / memDeRegister of shared buffers (ION fd, or HTP CUSTOM SHARED_BUFFER
 * fd + offset), and their use by graphExecute (MEMHANDLE tensors).
 *
 * The backend maps each registered fd itself (MAP_SHARED over the whole file), as the DSP
 * maps the dma-buf on the board, so what the client writes through its own mapping is what a
 * graph reads. Handles are serial numbers in the registry, per context.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "rb_internal.h"

static rb_mem *find_mem(const void *h) {
  if (!h) return NULL;
  for (rb_mem *m = g_rb.mems; m; m = m->next)
    if (m->handle == (uintptr_t)h) return m;
  return NULL;
}

static void mem_free(rb_mem *m) {
  if (m->map) munmap(m->map, (size_t)m->size);
  free(m);
}

static void unlink_mem(rb_mem *m) {
  for (rb_mem **pp = &g_rb.mems; *pp; pp = &(*pp)->next)
    if (*pp == m) {
      *pp = m->next;
      return;
    }
}

uint32_t rb_mem_count(const rb_context *c) {
  uint32_t n = 0;
  for (rb_mem *m = g_rb.mems; m; m = m->next) n += m->ctx == c;
  return n;
}

void rb_mem_drop_context(rb_context *c) {
  for (rb_mem **pp = &g_rb.mems; *pp;) {
    rb_mem *m = *pp;
    if (m->ctx == c) {
      *pp = m->next;
      mem_free(m);
    } else {
      pp = &m->next;
    }
  }
}

/* Whether fd still refers to the file it referred to at registration. */
static bool same_file(const rb_mem *m) {
  struct stat st;
  return fstat(m->fd, &st) == 0 && (uint64_t)st.st_ino == m->ino && (uint64_t)st.st_dev == m->dev;
}

/* ---- memRegister ---------------------------------------------------------------------------- */

/* A registration being built; checked against the context's handles and the earlier
 * descriptors of the same call. */
static bool duplicate(const rb_context *c, rb_mem *const *pending, uint32_t npending,
                      const rb_mem *n) {
  for (rb_mem *m = g_rb.mems; m; m = m->next)
    if (m->ctx == c && m->mem_type == n->mem_type && m->ino == n->ino && m->dev == n->dev &&
        (n->mem_type == QNN_MEM_TYPE_ION || m->offset == n->offset))
      return true;
  for (uint32_t i = 0; i < npending; i++) {
    const rb_mem *m = pending[i];
    if (m->mem_type == n->mem_type && m->ino == n->ino && m->dev == n->dev &&
        (n->mem_type == QNN_MEM_TYPE_ION || m->offset == n->offset))
      return true;
  }
  return false;
}

/* Another registration of the same file in c with a different total size (CUSTOM). */
static const rb_mem *size_conflict(const rb_context *c, rb_mem *const *pending, uint32_t np,
                                   const rb_mem *n) {
  for (rb_mem *m = g_rb.mems; m; m = m->next)
    if (m->ctx == c && m->ino == n->ino && m->dev == n->dev && m->size != n->size) return m;
  for (uint32_t i = 0; i < np; i++)
    if (pending[i]->ino == n->ino && pending[i]->dev == n->dev && pending[i]->size != n->size)
      return pending[i];
  return NULL;
}

/* Logs why descriptor i of a memRegister call is rejected; returns code. */
static qnn_error_t reject(rb_log *log, uint32_t i, qnn_error_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static qnn_error_t reject(rb_log *log, uint32_t i, qnn_error_t code, const char *fmt, ...) {
  char why[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "memRegister: descriptor %u: %s", i, why);
  return code;
}

/* What d says the tensor is: its memType, data type and shape, into m (type, dims, bytes). */
static qnn_error_t read_tensor(rb_log *log, uint32_t i, const qnn_mem_descriptor_t *d,
                               rb_mem *m) {
  m->mem_type = d->mem_type;
  if (d->mem_type == QNN_MEM_TYPE_DMA_BUF)
    return reject(log, i, QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "memType DMA_BUF is not supported "
                  "by this backend (a public report saw it crash HTP memRegister); use CUSTOM "
                  "with a SHARED_BUFFER descriptor or ION");
  if (d->mem_type != QNN_MEM_TYPE_ION && d->mem_type != QNN_MEM_TYPE_CUSTOM)
    return reject(log, i, QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "unknown memType %u", d->mem_type);
  size_t esize = ref_dtype_size(d->data_type);
  if (!esize)
    return reject(log, i, QNN_MEM_ERROR_INVALID_ARGUMENT, "data type 0x%04x", d->data_type);
  if (d->mem_shape.num_dim == 0 || d->mem_shape.num_dim > REF_MAX_RANK || !d->mem_shape.dim_size)
    return reject(log, i, QNN_MEM_ERROR_INVALID_SHAPE, "memShape has %u dimension(s)%s "
                  "(expected 1..%u)", d->mem_shape.num_dim,
                  d->mem_shape.dim_size ? "" : " and a NULL dimSize", REF_MAX_RANK);
  if (d->mem_shape.shape_config)
    return reject(log, i, QNN_MEM_ERROR_INVALID_SHAPE, "memShape.shapeConfig '%s' is not "
                  "supported", d->mem_shape.shape_config);
  uint64_t bytes = esize;
  for (uint32_t k = 0; k < d->mem_shape.num_dim; k++) {
    uint32_t dim = d->mem_shape.dim_size[k];
    if (dim == 0 || bytes > UINT64_MAX / dim)
      return reject(log, i, QNN_MEM_ERROR_INVALID_SHAPE, "dimension %u is %u", k, dim);
    bytes *= dim;
    m->dims[k] = dim;
  }
  m->rank = d->mem_shape.num_dim;
  m->data_type = d->data_type;
  m->bytes = bytes;
  return QNN_SUCCESS;
}

/* The buffer d points at: its fd (ION, or CUSTOM SHARED_BUFFER with offset and total size),
 * the file behind it, and the tensor's place in it, into m. */
static qnn_error_t read_buffer(rb_log *log, uint32_t i, const qnn_mem_descriptor_t *d,
                               rb_mem *m) {
  int fd = -1;
  uint64_t want_size = 0;
  if (d->mem_type == QNN_MEM_TYPE_ION) {
    fd = d->u.ion_info.fd;
  } else {
    const qnn_htp_mem_descriptor_t *h = d->u.custom_info;
    if (!h)
      return reject(log, i, QNN_MEM_ERROR_INVALID_ARGUMENT, "memType CUSTOM with a NULL "
                    "customInfo");
    if (h->type != QNN_HTP_MEM_SHARED_BUFFER)
      return reject(log, i, QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "HTP descriptor type %u (only "
                    "SHARED_BUFFER = 1 can be registered from the application processor)",
                    h->type);
    fd = h->u.shared_buffer_config.fd;
    m->offset = h->u.shared_buffer_config.offset;
    want_size = h->size;
  }
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0)
    return reject(log, i, QNN_MEM_ERROR_INVALID_ARGUMENT, "fd %d is not an open file "
                  "descriptor", fd);
  m->fd = fd;
  m->ino = (uint64_t)st.st_ino;
  m->dev = (uint64_t)st.st_dev;
  m->size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
  if (d->mem_type == QNN_MEM_TYPE_CUSTOM && want_size != m->size)
    return reject(log, i, QNN_MEM_ERROR_INVALID_ARGUMENT, "fd %d already mapped with mismatched "
                  "size: the descriptor says %llu bytes, the buffer behind the fd has %llu "
                  "(size is the TOTAL size of the allocation, not the tensor's)", fd,
                  (unsigned long long)want_size, (unsigned long long)m->size);
  if (m->offset > m->size || m->bytes > m->size - m->offset)
    return reject(log, i, QNN_MEM_ERROR_INVALID_SHAPE, "offset %llu + tensor bytes %llu do not "
                  "fit the %llu-byte buffer behind fd %d", (unsigned long long)m->offset,
                  (unsigned long long)m->bytes, (unsigned long long)m->size, fd);
  return QNN_SUCCESS;
}

/* m against the context's registrations and the call's earlier ones, then mapped. */
static qnn_error_t place(rb_log *log, rb_context *c, uint32_t i, rb_mem *const *pending,
                         rb_mem *m) {
  uint32_t np = 0;
  while (pending[np]) np++;
  if (duplicate(c, pending, np, m))
    return reject(log, i, QNN_MEM_ERROR_ALREADY_REGISTERED, "fd %d%s is already registered in "
                  "context 0x%lx", m->fd,
                  m->mem_type == QNN_MEM_TYPE_CUSTOM ? " at this offset" : "",
                  (unsigned long)c->handle);
  const rb_mem *other = size_conflict(c, pending, np, m);
  if (other)
    return reject(log, i, QNN_MEM_ERROR_INVALID_ARGUMENT, "fd %d already mapped with "
                  "mismatched size (%llu, now %llu)", m->fd, (unsigned long long)other->size,
                  (unsigned long long)m->size);
  m->map = mmap(NULL, (size_t)m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
  if (m->map == MAP_FAILED) {
    m->map = NULL;
    return reject(log, i, QNN_MEM_ERROR_MAPPING, "cannot map fd %d (%llu bytes): %s", m->fd,
                  (unsigned long long)m->size, strerror(errno));
  }
  return QNN_SUCCESS;
}

/* Builds one registration from d (registry lock held). Logs why it is rejected. */
static qnn_error_t make_one(rb_log *log, rb_context *c, uint32_t i, const qnn_mem_descriptor_t *d,
                            rb_mem *const *pending, rb_mem **out) {
  rb_mem *m = calloc(1, sizeof(*m));
  if (!m) return QNN_COMMON_ERROR_MEM_ALLOC;
  qnn_error_t rc = read_tensor(log, i, d, m);
  if (rc == QNN_SUCCESS) rc = read_buffer(log, i, d, m);
  if (rc == QNN_SUCCESS) rc = place(log, c, i, pending, m);
  if (rc != QNN_SUCCESS) {
    free(m); /* never mapped: place maps last */
    return rc;
  }
  m->ctx = c;
  *out = m;
  return QNN_SUCCESS;
}

qnn_error_t rb_mem_register(qnn_context_handle_t ch, const qnn_mem_descriptor_t *descs,
                            uint32_t n, qnn_mem_handle_t *handles) {
  if (handles)
    for (uint32_t i = 0; i < n; i++) handles[i] = NULL;
  pthread_mutex_lock(&g_rb.lock);
  rb_context *c = rb_find_context(ch);
  if (!c) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_MEM_ERROR_INVALID_HANDLE;
  }
  rb_backend *b = c->backend;
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);
  qnn_error_t rc = rb_fault(b, FR_MEM_REGISTER, b->log);
  if (rc == QNN_SUCCESS && (!descs || !handles || n == 0)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "memRegister: %s", !descs ? "descriptor array is NULL"
            : !handles ? "handle array is NULL" : "zero descriptors");
    rc = QNN_MEM_ERROR_INVALID_ARGUMENT;
  }
  rb_mem **pending = rc == QNN_SUCCESS ? calloc((size_t)n + 1, sizeof(*pending)) : NULL;
  if (rc == QNN_SUCCESS && !pending) rc = QNN_COMMON_ERROR_MEM_ALLOC;

  pthread_mutex_lock(&g_rb.lock);
  atomic_fetch_sub(&b->busy, 1);
  if (rc == QNN_SUCCESS && rb_find_context(ch) != c) rc = QNN_MEM_ERROR_INVALID_HANDLE;
  if (rc == QNN_SUCCESS && atomic_load(&c->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "memRegister: context 0x%lx was lost in a DSP "
            "subsystem restart; free it and create a new one", (unsigned long)c->handle);
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  uint32_t done = 0;
  for (; rc == QNN_SUCCESS && done < n; done++)
    rc = make_one(b->log, c, done, &descs[done], pending, &pending[done]);
  if (rc == QNN_SUCCESS) {
    /* All or nothing: only now do the handles exist. */
    for (uint32_t i = 0; i < n; i++) {
      rb_mem *m = pending[i];
      m->handle = rb_new_handle();
      m->next = g_rb.mems;
      g_rb.mems = m;
      handles[i] = (qnn_mem_handle_t)m->handle;
    }
    rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "memRegister: %u handle(s) in context 0x%lx", n,
            (unsigned long)c->handle);
  } else if (pending) {
    for (uint32_t i = 0; i < n; i++)
      if (pending[i]) mem_free(pending[i]);
  }
  pthread_mutex_unlock(&g_rb.lock);
  free(pending);
  return rc;
}

/* ---- memDeRegister -------------------------------------------------------------------------- */

qnn_error_t rb_mem_de_register(const qnn_mem_handle_t *handles, uint32_t n) {
  if (!handles || n == 0) return QNN_MEM_ERROR_INVALID_ARGUMENT;
  qnn_error_t rc = QNN_SUCCESS;
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *any = rb_owner_for(NULL);
  for (uint32_t i = 0; i < n; i++) {
    rb_mem *m = find_mem(handles[i]);
    if (!m) {
      rb_logf(any ? any->log : NULL, QNN_LOG_LEVEL_ERROR, "memDeRegister: handle %u (%p) is "
              "NULL, unknown or already deregistered", i, handles[i]);
      if (rc == QNN_SUCCESS) rc = QNN_MEM_ERROR_INVALID_HANDLE;
      continue;
    }
    rb_log *log = m->ctx->backend->log;
    if (atomic_load(&m->in_use)) {
      rb_violation(log, "memDeRegister of mem handle 0x%lx while a graphExecute uses it",
                   (unsigned long)m->handle);
      if (rc == QNN_SUCCESS) rc = QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED;
      continue;
    }
    if (!atomic_load(&m->ctx->stale) && !same_file(m))
      rb_violation(log, "memDeRegister of mem handle 0x%lx after its fd %d was closed "
                   "(rpcmem_free before memDeRegister)", (unsigned long)m->handle, m->fd);
    unlink_mem(m);
    mem_free(m);
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

/* ---- graphExecute ------------------------------------------------------------------------- */

void *rb_mem_resolve(rb_context *c, const void *handle, const ref_tensor *want, rb_mem **pin,
                     char *why, size_t whylen) {
  void *p = NULL;
  pthread_mutex_lock(&g_rb.lock);
  rb_mem *m = find_mem(handle);
  if (!m) {
    snprintf(why, whylen, "memType 1 (MEMHANDLE): handle %p is not registered (or was "
             "deregistered)", handle);
  } else if (m->ctx != c) {
    snprintf(why, whylen, "memType 1 (MEMHANDLE): handle 0x%lx belongs to context 0x%lx, the "
             "graph's context is 0x%lx (handles are per context)", (unsigned long)m->handle,
             (unsigned long)m->ctx->handle, (unsigned long)c->handle);
  } else if (m->data_type != want->data_type) {
    snprintf(why, whylen, "memType 1 (MEMHANDLE): handle 0x%lx was registered with data type "
             "0x%04x, the graph has 0x%04x", (unsigned long)m->handle, m->data_type,
             want->data_type);
  } else if (m->rank != want->rank ||
             memcmp(m->dims, want->dims, want->rank * sizeof(uint32_t)) != 0) {
    char got[96] = "[", exp[96] = "[";
    for (uint32_t k = 0; k < m->rank; k++)
      snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%u", k ? "," : "", m->dims[k]);
    for (uint32_t k = 0; k < want->rank; k++)
      snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), "%s%u", k ? "," : "", want->dims[k]);
    snprintf(why, whylen, "memType 1 (MEMHANDLE): handle 0x%lx was registered with shape %s], "
             "the graph has %s]", (unsigned long)m->handle, got, exp);
  } else if (!same_file(m)) {
    rb_violation(c->backend->log, "graphExecute with mem handle 0x%lx whose fd %d was closed "
                 "(rpcmem_free before memDeRegister)", (unsigned long)m->handle, m->fd);
    snprintf(why, whylen, "memType 1 (MEMHANDLE): the buffer behind handle 0x%lx was freed",
             (unsigned long)m->handle);
  } else {
    atomic_fetch_add(&m->in_use, 1);
    *pin = m;
    p = m->map + m->offset;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return p;
}

void rb_mem_unpin(rb_mem *m) {
  if (m) atomic_fetch_sub(&m->in_use, 1);
}
