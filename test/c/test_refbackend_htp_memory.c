/* test_refbackend_htp_memory.c - the reference FastRPC allocator (rpcmem_*), memRegister and
 * MEMHANDLE execution on the reference backend.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"
#include "htp_rig.h"
#include "test.h"

/* ---- 3. the allocator --------------------------------------------------------------------- */

TEST(htp_rpcmem_semantics) {
  hctl c;
  CHECK(hctl_open(&c) == 0);
  htpu_refcdsprpc_stats st;
  c.rpc_stats(&st);
  uint32_t live0 = st.live;
  /* not initialised: nothing */
  c.rpc_deinit();
  CHECK(c.rpc_alloc(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 64) == NULL);
  c.rpc_init();
  unsigned char *p = c.rpc_alloc(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 100);
  unsigned char *q = c.rpc_alloc2(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 4096);
  CHECK(p && q);
  int fd = c.rpc_to_fd(p);
  CHECK(fd >= 0 && c.rpc_to_fd(q) >= 0 && c.rpc_to_fd(q) != fd);
  CHECK_EQ(c.rpc_to_fd(p + 1), -1); /* only the base pointer */
  CHECK_EQ(c.rpc_to_fd(&st), -1);
  CHECK_EQ(lseek(fd, 0, SEEK_END), 100); /* the memfd is exactly the size asked for */
  /* the fd and the pointer are the same memory */
  p[7] = 0x5A;
  unsigned char byte = 0;
  CHECK_EQ(pread(fd, &byte, 1, 7), 1);
  CHECK_EQ(byte, 0x5A);
  CHECK(c.rpc_alloc(25, 1, 0) == NULL);
  CHECK(c.rpc_alloc(25, 1, -5) == NULL);
  setenv("HTPU_REF_RPCMEM_FAIL", "1", 1);
  CHECK(c.rpc_alloc(25, 1, 64) == NULL);
  unsetenv("HTPU_REF_RPCMEM_FAIL");
  c.rpc_stats(&st);
  CHECK_EQ(st.live, live0 + 2);
  CHECK_EQ(st.initialized, 1);
  /* the exit-time destructor leaves live allocations usable: another thread of an exiting
   * process may still be writing or executing with them */
  htpu_refcdsprpc_unload_fn unload = c.rpc_unload;
  CHECK(unload != NULL);
  if (unload) unload();
  p[8] = 0xA5;
  CHECK_EQ(pread(fd, &byte, 1, 8), 1);
  CHECK_EQ(byte, 0xA5);
  CHECK_EQ(c.rpc_to_fd(p), fd);
  c.rpc_free(p);
  c.rpc_free(q);
  c.rpc_free(NULL);
  c.rpc_stats(&st);
  CHECK_EQ(st.live, live0);
  /* a second rpcmem_init forgets what was allocated before it */
  unsigned char *r = c.rpc_alloc(25, 1, 32);
  CHECK(r);
  c.rpc_init();
  CHECK_EQ(c.rpc_to_fd(r), -1);
  c.rpc_stats(&st);
  CHECK(st.orphaned >= 1);
  hctl_close(&c);
}

TEST(htp_rpcmem_initialised_by_device_create) {
  stack s;
  CHECK(hctl_open(&s.c) == 0);
  s.c.rpc_deinit();
  CHECK(s.c.rpc_alloc(25, 1, 64) == NULL);
  hctl_close(&s.c);
  CHECK_EQ(stack_open(&s, NULL), 0); /* deviceCreate opens the FastRPC session */
  void *p = s.c.rpc_alloc(25, 1, 64);
  CHECK(p);
  CHECK(s.c.rpc_to_fd(p) >= 0);
  s.c.rpc_free(p);
  stack_close(&s);
}

/* ---- 4. memRegister and MEMHANDLE execution ------------------------------------------------ */

TEST(htp_mem_register_and_execute) {
  shared x;
  qnn_error_t rc = shared_open(&x);
  CHECK_MSG(rc == 0, "shared_open: %llu", (unsigned long long)rc);
  qnn_htp_mem_descriptor_t hd[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                    htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d[3];
  for (int i = 0; i < 3; i++) d[i] = custom_desc(&hd[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t h[3] = {0};
  CHECK_EQ(x.s.t->mem_register(x.ctx, d, 3, h), QNN_SUCCESS);
  CHECK(h[0] && h[1] && h[2] && h[0] != h[1]);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 3);
  float *a = (float *)(void *)x.buf, *b = a + 4, *y = a + 8;
  for (int i = 0; i < 4; i++) {
    a[i] = (float)i;
    b[i] = 100.0f * (float)i;
    y[i] = -1.0f;
  }
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, h, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  for (int i = 0; i < 4; i++) CHECK(y[i] == 101.0f * (float)i);
  /* MEMHANDLE and RAW mix in one call */
  float raw_b[4] = {1, 1, 1, 1};
  in[1].u.v2.mem_type = QNN_TENSORMEMTYPE_RAW;
  in[1].u.v2.u.client_buf.data = raw_b;
  in[1].u.v2.u.client_buf.data_size = sizeof(raw_b);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(y[3] == 4.0f);
  in[1].u.v2.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
  in[1].u.v2.u.mem_handle = h[1];
  /* deregister: every valid one goes even if one is bad */
  qnn_mem_handle_t dl[4] = {h[0], (qnn_mem_handle_t)(uintptr_t)0x9999, h[1], h[2]};
  CHECK_EQ(x.s.t->mem_de_register(dl, 4), QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  CHECK_EQ(x.s.t->mem_de_register(h, 1), QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(x.s.t->mem_de_register(NULL, 1), QNN_MEM_ERROR_INVALID_ARGUMENT);
  /* a deregistered handle no longer executes */
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "not registered");
  /* ION: one fd, one handle, offset 0 */
  qnn_mem_descriptor_t ion;
  memset(&ion, 0, sizeof(ion));
  ion.mem_shape.num_dim = 2;
  ion.mem_shape.dim_size = g_dims14;
  ion.data_type = QNN_DATATYPE_FLOAT_32;
  ion.mem_type = QNN_MEM_TYPE_ION;
  ion.u.ion_info.fd = x.fd;
  qnn_mem_handle_t hi = NULL, hi2 = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ion, 1, &hi), QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ion, 1, &hi2), QNN_MEM_ERROR_ALREADY_REGISTERED);
  CHECK(hi2 == NULL);
  CHECK_STR_CONTAINS(hlog(), "already registered");
  CHECK_EQ(x.s.t->mem_de_register(&hi, 1), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

TEST(htp_mem_register_rules) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd;
  qnn_mem_descriptor_t d;
  qnn_mem_handle_t h[2];
#define REG1(want, needle)                                                     \
  do {                                                                         \
    hlog_clear();                                                              \
    h[0] = (qnn_mem_handle_t)(uintptr_t)1;                                     \
    CHECK_EQ(x.s.t->mem_register(x.ctx, &d, 1, h), want);                      \
    CHECK(h[0] == NULL);                                                       \
    CHECK_STR_CONTAINS(hlog(), needle);                                        \
  } while (0)
  hd = htp_desc(x.fd, 4096, 0);
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "already mapped with mismatched size");
  hd = htp_desc(x.fd, 16, 0); /* the tensor's size is not the allocation's */
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "TOTAL size");
  hd = htp_desc(x.fd, x.size, 56);
  REG1(QNN_MEM_ERROR_INVALID_SHAPE, "offset 56 + tensor bytes 16");
  hd = htp_desc(987, x.size, 0);
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "fd 987 is not an open file descriptor");
  hd = htp_desc(x.fd, x.size, 0);
  hd.type = QNN_HTP_MEM_QURT;
  REG1(QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "SHARED_BUFFER");
  d.u.custom_info = NULL;
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "NULL customInfo");
  hd = htp_desc(x.fd, x.size, 0);
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  d.mem_type = QNN_MEM_TYPE_DMA_BUF;
  d.u.dma_buf_info.fd = x.fd;
  d.u.dma_buf_info.data = x.buf;
  REG1(QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "DMA_BUF");
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  d.mem_shape.num_dim = 0;
  REG1(QNN_MEM_ERROR_INVALID_SHAPE, "memShape");
  /* a pipe cannot be mapped */
  int pfd[2];
  CHECK(pipe(pfd) == 0);
  qnn_mem_descriptor_t ion;
  memset(&ion, 0, sizeof(ion));
  ion.mem_shape.num_dim = 1;
  uint32_t one = 1;
  ion.mem_shape.dim_size = &one;
  ion.data_type = QNN_DATATYPE_UINT_8;
  ion.mem_type = QNN_MEM_TYPE_ION;
  ion.u.ion_info.fd = pfd[0];
  d = ion;
  /* fstat works on a pipe but it has no size: the tensor does not fit, or mapping fails */
  hlog_clear();
  qnn_error_t prc = x.s.t->mem_register(x.ctx, &d, 1, h);
  CHECK(prc == QNN_MEM_ERROR_MAPPING || prc == QNN_MEM_ERROR_INVALID_SHAPE);
  close(pfd[0]);
  close(pfd[1]);
  /* the same fd+offset twice in one call: all or nothing */
  qnn_htp_mem_descriptor_t two[2] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 0)};
  qnn_mem_descriptor_t dd[2] = {custom_desc(&two[0], QNN_DATATYPE_FLOAT_32),
                                custom_desc(&two[1], QNN_DATATYPE_FLOAT_32)};
  CHECK_EQ(x.s.t->mem_register(x.ctx, dd, 2, h), QNN_MEM_ERROR_ALREADY_REGISTERED);
  CHECK(h[0] == NULL && h[1] == NULL);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  /* bad context, NULL arrays */
  CHECK_EQ(x.s.t->mem_register((qnn_context_handle_t)(uintptr_t)0x4242, dd, 1, h),
           QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(x.s.t->mem_register(x.ctx, NULL, 1, h), QNN_MEM_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(x.s.t->mem_register(x.ctx, dd, 1, NULL), QNN_MEM_ERROR_INVALID_ARGUMENT);
  /* registered in one context, executed in another: 6004 */
  qnn_context_handle_t ctx2 = NULL;
  qnn_graph_handle_t g2 = NULL;
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &ctx2, &g2), QNN_SUCCESS);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  /* the same buffers in the second context are a separate registration */
  qnn_mem_handle_t hh2[3];
  CHECK_EQ(x.s.t->mem_register(ctx2, d3, 3, hh2), QNN_SUCCESS);
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(g2, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "handles are per context");
  mh_tensors(x.model, hh2, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(g2, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  /* data type and shape of the registration must match the graph's tensor */
  qnn_htp_mem_descriptor_t hu = htp_desc(x.fd, x.size, 48);
  qnn_mem_descriptor_t du = custom_desc(&hu, QNN_DATATYPE_UINT_32);
  qnn_mem_handle_t hw = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &du, 1, &hw), QNN_SUCCESS);
  mh_tensors(x.model, hh, in, out, dims);
  in[0].u.v2.u.mem_handle = hw;
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "data type 0x0132");
  uint32_t d41[2] = {4, 1};
  qnn_htp_mem_descriptor_t hs = htp_desc(x.fd, x.size, 48);
  qnn_mem_descriptor_t ds = custom_desc(&hs, QNN_DATATYPE_FLOAT_32);
  ds.mem_shape.dim_size = d41;
  qnn_mem_handle_t hsh = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ds, 1, &hsh), QNN_MEM_ERROR_ALREADY_REGISTERED);
  hs.u.shared_buffer_config.offset = 44;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ds, 1, &hsh), QNN_SUCCESS);
  in[0].u.v2.u.mem_handle = hsh;
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "shape [4,1], the graph has [1,4]");
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  /* contextFree with handles still registered: a violation, and they are freed */
  CHECK_EQ(x.s.t->mem_de_register(hh2, 3), QNN_SUCCESS);
  CHECK_EQ(x.s.t->context_free(ctx2, NULL), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  x.ctx = NULL;
  CHECK_EQ(hstats(&x.s.c).violations, 1);
  CHECK_STR_CONTAINS(x.s.c.last_violation(), "5 mem handle(s) still registered");
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  shared_close(&x);
#undef REG1
}

TEST(htp_mem_freed_before_deregister) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  x.s.c.rpc_free(x.buf); /* wrong order: the fd is closed under the registration */
  x.buf = NULL;
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(x.s.c.last_violation(), "rpcmem_free before memDeRegister");
  x.s.c.reset_stats();
  CHECK_EQ(x.s.t->mem_de_register(hh, 3), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 3);
  shared_close(&x);
}
