/*
 * compat.c - will this binary run here? Checked before a context is created, so an
 * incompatible binary fails with one message naming both sides instead of an opaque QNN code
 * (and is never retried: retrying cannot make it fit).
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "internal.h"
#include "loader/loader.h"
#include "device/device.h"

/* SoC model ids that name the same silicon. QCS6490 binaries are built for SM7325/QCM6490
 * (35) while the board reports 93 at run time (docs/board.md). */
static const uint32_t soc_aliases[][2] = {{35, 93}};

static int same_soc(uint32_t a, uint32_t b) {
  if (a == b) return 1;
  for (size_t i = 0; i < sizeof soc_aliases / sizeof *soc_aliases; i++)
    if ((soc_aliases[i][0] == a && soc_aliases[i][1] == b) ||
        (soc_aliases[i][0] == b && soc_aliases[i][1] == a))
      return 1;
  return 0;
}

/* The QAIRT release a build id names ("v2.42.0.2512..._193295"): 1, or 0 when it names none
 * (the reference backend's "htpu-ref"). Not htpu_qairt_version_from_build_id: this runs while
 * an error is being written, and that one sets the thread's error. */
static int release_of(const char *build_id, htpu_version3 *v) {
  unsigned a, b, c;
  if (!build_id || sscanf(build_id, "v%u.%u.%u", &a, &b, &c) != 3) return 0;
  *v = (htpu_version3){a, b, c};
  return 1;
}

static int newer(htpu_version3 a, htpu_version3 b) {
  if (a.major != b.major) return a.major > b.major;
  if (a.minor != b.minor) return a.minor > b.minor;
  return a.patch > b.patch;
}

int compat_too_new(runtime_obj *rt, const model_info *info, const uint8_t *graph_on) {
  const htpu_model_info *m = &info->pub;
  const device_facts *d = &rt->device_facts;
  const qnn_backend_lib *b = &rt->backend_lib;
  /* what no QNN release can change: the backend, the DSP, the SoC, the VTCM */
  if ((m->backend_id && m->backend_id != b->backend_id) ||
      (m->dsp_arch && d->arch && m->dsp_arch != d->arch) ||
      (m->soc_model && d->soc_model && !same_soc(m->soc_model, d->soc_model)))
    return 0;
  for (uint32_t i = 0; d->vtcm_bytes && i < m->num_graphs; i++)
    if ((!graph_on || graph_on[i]) && m->graphs[i].vtcm_bytes > d->vtcm_bytes) return 0;
  const htpu_version3 *bc = &m->core_api_version, *bb = &m->backend_api_version;
  if (bc->major && (bc->major != b->core_api.major || bc->minor > b->core_api.minor)) return 1;
  if (bb->major && (bb->major != b->backend_api.major || bb->minor > b->backend_api.minor))
    return 1;
  htpu_version3 made, here;
  return release_of(m->build_id, &made) && release_of(rt->build_id, &here) && newer(made, here);
}

int compat_check(runtime_obj *rt, const model_info *info, const uint8_t *graph_on,
                 const void *binary, size_t len) {
  const htpu_model_info *m = &info->pub;
  const device_facts *d = &rt->device_facts;
  const qnn_backend_lib *b = &rt->backend_lib;
  if (m->backend_id && m->backend_id != b->backend_id)
    return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                          "incompatible binary: built for QNN backend id %u, this runtime's "
                          "backend is id %u",
                          m->backend_id, b->backend_id);
  if (m->dsp_arch && d->arch && m->dsp_arch != d->arch)
    return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                          "incompatible binary: built for v%u, this device is v%u", m->dsp_arch,
                          d->arch);
  if (m->soc_model && d->soc_model && !same_soc(m->soc_model, d->soc_model))
    return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                          "incompatible binary: built for SoC model %u, this device is SoC "
                          "model %u",
                          m->soc_model, d->soc_model);
  const htpu_version3 *bc = &m->core_api_version;
  if (bc->major && (bc->major != b->core_api.major || bc->minor > b->core_api.minor))
    return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                          "incompatible binary: built with QNN API %u.%u, newer than this "
                          "runtime's %u.%u; generate it with this runtime's QAIRT version or an "
                          "older one",
                          bc->major, bc->minor, b->core_api.major, b->core_api.minor);
  const htpu_version3 *bb = &m->backend_api_version;
  if (bb->major && m->backend_id == b->backend_id &&
      (bb->major != b->backend_api.major || bb->minor > b->backend_api.minor))
    return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                          "incompatible binary: built with backend API %u.%u, newer than this "
                          "runtime's %u.%u",
                          bb->major, bb->minor, b->backend_api.major, b->backend_api.minor);
  /* Both sides are bytes here (vtcm.h normalized them); people think in MB. */
  for (uint32_t i = 0; d->vtcm_bytes && i < m->num_graphs; i++)
    if ((!graph_on || graph_on[i]) && m->graphs[i].vtcm_bytes > d->vtcm_bytes) {
      char need[48], have[48];
      vtcm_format(m->graphs[i].vtcm_bytes, need, sizeof need);
      vtcm_format(d->vtcm_bytes, have, sizeof have);
      return htpu_set_error(HTPU_EINCOMPATIBLE, 0,
                            "incompatible binary: graph '%s' needs %s of VTCM, this device "
                            "has %s",
                            m->graphs[i].name, need, have);
    }
  /* Last, the backend's own opinion, where the provider's version has the call. */
  if (b->context_validate_binary) {
    uint64_t mark = qnn_log_mark();
    qnn_error_t e = b->context_validate_binary(rt->backend, rt->device, NULL, binary,
                                               (qnn_context_binary_size_t)len);
    uint32_t code = QNN_ERROR_CODE(e);
    if (e != QNN_SUCCESS && code != QNN_COMMON_ERROR_NOT_SUPPORTED) {
      htpu_set_error(HTPU_EINCOMPATIBLE, code,
                     "incompatible binary: the backend rejected it (QNN error %u, %s: %s)", code,
                     htpu_qnn_error_name(code), htpu_qnn_error_message(code));
      qnn_log_append_since(mark);
      return HTPU_EINCOMPATIBLE;
    }
  }
  return 0;
}
