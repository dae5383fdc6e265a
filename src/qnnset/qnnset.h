/*
 * qnnset.h - the door of src/qnnset/: QNN sets, one QAIRT release's backend, system library,
 * stubs and skel together (include/hexagon_tpu.h, "QNN sets").
 *
 *   layout.c  a folder read as a set: which layout, which files, which release (build ids)
 *   find.c    the sets installed on an image (htpu_qnn_sets_find)
 *   claim.c   the runtime option: the set's libraries and DSP path, its stub opened first,
 *             and the one-set-per-process rule
 *   loaded.c  a stub of another release already loaded in the process, refused
 *   hint.c    which other installed set can load a binary its runtime refused as too new
 *
 * The core uses qnnset_apply (runtime.c, before any QNN call) and qnnset_hint (context_load.c
 * and context_many.c, on HTPU_EINCOMPATIBLE); the rest is behind the public htpu_qnn_set*
 * functions. A room just above loader/ (docs/architecture.md, "The core's rooms"): qnnset/ uses base/ and common/ only.
 */
#ifndef HTPU_QNNSET_H
#define HTPU_QNNSET_H

#include <stddef.h>

#include "hexagon_tpu.h"

/* The runtime options as a set makes them: a copy of *in with backend_lib, system_lib and
 * (unless given) dsp_library_path taken from in->qnn_set, pointing into *out. */
typedef struct qnnset_options {
  htpu_runtime_options opts;
  htpu_qnn_set set;
} qnnset_options;

/* Resolves in->qnn_set (if any), opens the set's stub by full path, and claims the process's
 * set (in->qnn_set, or the folder of a backend named libQnnHtp.so) before any QNN call: a
 * second set in the process is HTPU_EINVAL naming both, as is a set whose stub soname another
 * release's stub already holds in the process (loaded.c). Other backends (the reference, CPU)
 * are no DSP set and pass unchecked. 0 with out->opts to use, or an HTPU_E* code (error set). */
int qnnset_apply(const htpu_runtime_options *in, qnnset_options *out);

/* For a binary a runtime refused because a newer QNN release made it (the error `code`, set;
 * the caller has checked that nothing else keeps it out: compat_too_new): appends to the
 * thread's last error which installed set (htpu_qnn_sets_find) can load it, if one can. Never
 * the set this process uses; when the process's set is decided, the hint says the other set
 * needs a new OS process. */
void qnnset_hint(const htpu_model_info *m, int code);

/* 0 when the set's stub is not loaded in the process yet, or is (that file, or a copy of its
 * release); else HTPU_EINVAL (set) naming the stub of another release already loaded under its
 * soname, which the set's backend would be handed (loaded.c). */
int qnnset_check_loaded_stub(const htpu_qnn_set *s);

/* The process's set (its resolved folder) into out, "" before the first runtime of a DSP set
 * decided it (claim.c). */
void qnnset_claimed(char *out, size_t len);

/* Reads the set in dir into *out (layout.c). 0, or -1 when dir holds no libQnnHtp.so. */
int qnnset_read(const char *dir, htpu_qnn_set *out);

#endif
