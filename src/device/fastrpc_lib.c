/* fastrpc_lib.c - dlopen of the FastRPC library and its rpcmem symbols (fastrpc_lib.h). */
#include "fastrpc_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int fastrpc_lib_open(fastrpc_lib *l, const char *path, char *why, size_t whylen) {
  memset(l, 0, sizeof *l);
  dlerror();
  l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->dl) {
    const char *e = dlerror();
    snprintf(why, whylen, "loading the FastRPC library '%s' failed: %s", path,
             e ? e : "unknown error");
    return -1;
  }
  l->rpc_alloc = (void *(*)(int, uint32_t, int))dlsym(l->dl, "rpcmem_alloc");
  l->rpc_free = (void (*)(void *))dlsym(l->dl, "rpcmem_free");
  l->rpc_to_fd = (int (*)(void *))dlsym(l->dl, "rpcmem_to_fd");
  if (!l->rpc_alloc || !l->rpc_free || !l->rpc_to_fd) {
    snprintf(why, whylen, "'%s' lacks rpcmem_alloc/rpcmem_free/rpcmem_to_fd", path);
    fastrpc_lib_close(l);
    return -1;
  }
  return 0;
}

void fastrpc_lib_close(fastrpc_lib *l) {
  if (l->dl) dlclose(l->dl);
  memset(l, 0, sizeof *l);
}
