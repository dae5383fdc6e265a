/* shared_memory.c - the `shared_memory` step: a test allocation through htpu_shared_alloc,
 * which is FastRPC memory or the ordinary-memory fallback with the library's note. */
#include <stdio.h>
#include <unistd.h>

#include "doctor.h"

#define SHARED_TEST_BYTES 4096u
#define DMA_HEAP "/dev/dma_heap/system"

typedef struct alloc_result {
  int rc;      /* htpu_shared_alloc */
  int fastrpc; /* ... and whether it is FastRPC memory */
  char note[1024]; /* the test buffer's htpu_shared_note, else the runtime's shared_memory_note */
  char err[512];
} alloc_result;

/* rpcmem only works once a FastRPC session is open: a real allocation is the test. */
static void test_allocation(doctor *d, alloc_result *a) {
  report_copy(a->note, sizeof(a->note), d->ri.shared_memory_note ? d->ri.shared_memory_note : "");
  htpu_shared *buf = NULL;
  a->rc = htpu_shared_alloc(d->rt, SHARED_TEST_BYTES, &buf);
  if (a->rc == 0) {
    a->fastrpc = htpu_shared_is_fastrpc(buf);
    const char *why = htpu_shared_note(buf); /* the test allocation's own reason wins */
    if (why && why[0]) report_copy(a->note, sizeof(a->note), why);
  } else {
    report_copy(a->err, sizeof(a->err), htpu_last_error());
  }
  htpu_shared_free(&buf);
}

static void judge(doctor *d, step *s, const alloc_result *a) {
  const char *lib = d->ro.fastrpc_lib;
  if (a->rc) {
    step_set(s, ST_FAIL, "htpu_shared_alloc of %u bytes failed: %s", SHARED_TEST_BYTES, a->err);
    return;
  }
  if (a->fastrpc) {
    step_set(s, ST_OK, "yes: FastRPC shared buffers, registered with the context on use");
    return;
  }
  if (!d->board && !d->fastrpc_given) {
    step_set(s, ST_SKIP, "not applicable: no FastRPC library for this backend (shared buffers "
                         "use ordinary memory; see the note)");
    step_hint(s, "--fastrpc-lib reference uses the reference stand-in next to htpu");
    return;
  }
  step_set(s, ST_WARN, "no: shared buffers fall back to ordinary memory (copied on every call): "
                       "%s",
           a->note[0] ? a->note : "no reason given");
  if (!d->ri.has_shared_memory) {
    step_hint(s, "the library dlopens %s after the device exists and needs rpcmem_alloc, "
                 "rpcmem_free and rpcmem_to_fd; check the fastrpc step above (`ldd`, "
                 "--fastrpc-lib PATH)",
              lib);
    return;
  }
  /* FastRPC opens the heap read-only (and falls back when it cannot): readable is enough. */
  step_hint(s, "rpcmem_alloc returned nothing: FastRPC memory comes from " DMA_HEAP ", which "
               "must be readable by this user (%s; the image's udev rule makes it 0666), and only "
               "works once a FastRPC session is open",
            doctor_access(d->root, DMA_HEAP, R_OK) == 0   ? "it is"
            : doctor_access(d->root, DMA_HEAP, F_OK) == 0 ? "it is not"
                                      : "it is missing here");
}

void check_shared_memory(doctor *d) {
  /* Only after a first-try open: the skip_device retry has no device to allocate for. */
  if (!d->rt || d->rt_skip_device) return;
  step *s = report_begin(&d->rep, "shared_memory", "shared memory");
  if (!d->have_info || !d->ri.has_device) {
    step_set(s, ST_SKIP, "no QNN device: shared buffers need one");
    report_end(&d->rep, s);
    return;
  }
  alloc_result a = {0};
  test_allocation(d, &a);
  step_str(s, "FastRPC library", "fastrpc_lib", d->ro.fastrpc_lib);
  step_bool(s, "registration possible", "has_shared_memory", d->ri.has_shared_memory);
  step_str(s, "test allocation", "test_allocation",
           a.rc        ? "failed"
           : a.fastrpc ? "FastRPC memory"
                       : "ordinary memory (fallback)");
  step_str_shown(s, "note", "note", a.note[0] ? a.note : NULL, a.note[0] ? a.note : "(none)");
  judge(d, s, &a);
  report_end(&d->rep, s);
}
