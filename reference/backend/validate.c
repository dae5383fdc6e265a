/*
 * validate.c - does a context binary fit this backend and its device? Used by
 * contextValidateBinary and contextCreateFromBinary (real backends reject in both).
 */
#include "rb_internal.h"

qnn_error_t rb_check_binary(rb_backend *b, const char *api, const ref_model *m) {
  const ref_model_meta *mm = &m->meta;
  if (mm->backend_id != b->backend_id) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the binary was built for backend id %u, this "
            "backend is id %u", api, mm->backend_id, b->backend_id);
    return QNN_CONTEXT_ERROR_BINARY_CONFIGURATION;
  }
  if (mm->dsp_arch && mm->dsp_arch != b->hw.arch) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the binary was built for v%u, this device is v%u",
            api, mm->dsp_arch, b->hw.arch);
    return QNN_CONTEXT_ERROR_BINARY_CONFIGURATION;
  }
  const qnn_version_t *core = &b->api.core_api_version, *be = &b->api.backend_api_version;
  if (mm->core_api[0] != core->major || mm->core_api[1] > core->minor) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the binary needs core API %u.%u.%u, this backend "
            "provides %u.%u.%u (same major, minor at most the provider's)", api, mm->core_api[0],
            mm->core_api[1], mm->core_api[2], core->major, core->minor, core->patch);
    return QNN_CONTEXT_ERROR_BINARY_VERSION;
  }
  if (mm->backend_api[0] != be->major) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the binary was built with backend API %u.x, this "
            "backend is %u.%u.%u", api, mm->backend_api[0], be->major, be->minor, be->patch);
    return QNN_CONTEXT_ERROR_BINARY_VERSION;
  }
  /* QnnTypes.h: "Sparse tensors may only be QNN_TENSOR_TYPE_NATIVE": a graph input or output
   * declared sparse makes a binary no backend can take (the builder writes one for tests). */
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const ref_graph *rg = &m->graphs[g];
    for (uint32_t i = 0; i < rg->num_inputs + rg->num_outputs; i++) {
      int in = i < rg->num_inputs;
      const ref_tensor *t = &m->tensors[in ? rg->inputs[i] : rg->outputs[i - rg->num_inputs]];
      if (t->data_format != QNN_TENSOR_DATA_FORMAT_SPARSE) continue;
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s' %s '%s' is sparse: sparse tensors "
              "may only be NATIVE (QnnTypes.h)", api, rg->name, in ? "input" : "output",
              t->name);
      return QNN_CONTEXT_ERROR_CREATE_FROM_BINARY;
    }
  }
  /* Not rejected: QCS6490 binaries say 35 while the board reportedly reports 93. */
  if (mm->soc_model && mm->soc_model != b->hw.soc_model)
    rb_logf(b->log, QNN_LOG_LEVEL_WARN, "%s: the binary names soc model %u, this device "
            "reports %u (accepted: same arch)", api, mm->soc_model, b->hw.soc_model);
  return QNN_SUCCESS;
}
