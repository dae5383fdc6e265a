/*
 * fastrpc_lib.h - the FastRPC library (libcdsprpc) and the three rpcmem symbols the core uses.
 *
 * Loaded by the runtime after its device exists: before that, rpcmem_alloc returns NULL on
 * upstream Linux fastrpc.
 */
#ifndef HTPU_FASTRPC_LIB_H
#define HTPU_FASTRPC_LIB_H

#include <stddef.h>
#include <stdint.h>

/* rpcmem constants (fastrpc's rpcmem.h): the system heap, default (cached) flags. */
#define RPCMEM_HEAP_ID_SYSTEM 25
#define RPCMEM_DEFAULT_FLAGS 1u

typedef struct fastrpc_lib {
  void *dl;
  void *(*rpc_alloc)(int heap_id, uint32_t flags, int size);
  void (*rpc_free)(void *p);
  int (*rpc_to_fd)(void *p);
} fastrpc_lib;

/* dlopens `path` and finds rpcmem_alloc, rpcmem_free and rpcmem_to_fd. Returns 0, or -1 with
 * `why` (whylen bytes) saying what failed and l left closed. */
int fastrpc_lib_open(fastrpc_lib *l, const char *path, char *why, size_t whylen);

/* Closes what fastrpc_lib_open opened; a closed or zeroed l is a no-op. */
void fastrpc_lib_close(fastrpc_lib *l);

#endif
