/*
 * model_read.c - libFuzzer target for the reference model reader, ref_model_parse
 * (reference/model/format_read.c), which the reference backend and system libraries run on
 * every context binary they are handed.
 *
 * Per input: parse; a parse failure must say why. A model that parses must be writable
 * (ref_model_write checks with the parser's rules, so what the parser accepted passes), the
 * written file must parse again into the same model, field by field (so the writer drops or
 * alters nothing the reader read), and writing that gives the same bytes (format_write.c
 * promises that fixed point).
 */
#include <string.h>

#include "fuzz.h"
#include "refmodel.h"

static void check_model(const ref_model *m) {
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const ref_graph *gr = &m->graphs[g];
    FUZZ_CHECK(gr->name != NULL, "graph %u has no name", g);
    for (uint32_t i = 0; i < gr->num_inputs; i++)
      FUZZ_CHECK(gr->inputs[i] < m->num_tensors, "graph %u input %u: index %u of %u", g, i,
                 gr->inputs[i], m->num_tensors);
    for (uint32_t i = 0; i < gr->num_outputs; i++)
      FUZZ_CHECK(gr->outputs[i] < m->num_tensors, "graph %u output %u: index %u of %u", g, i,
                 gr->outputs[i], m->num_tensors);
  }
  for (uint32_t t = 0; t < m->num_tensors; t++) {
    const ref_tensor *tn = &m->tensors[t];
    FUZZ_CHECK(tn->rank <= REF_MAX_RANK, "tensor %u: rank %u", t, tn->rank);
    FUZZ_CHECK(tn->nbytes == ref_tensor_elements(tn) * ref_dtype_size(tn->data_type),
               "tensor %u: %zu bytes for %zu elements of type 0x%x", t, tn->nbytes,
               ref_tensor_elements(tn), tn->data_type);
    FUZZ_CHECK(ref_model_find_tensor(m, tn->id) == (int)t, "tensor %u: id %u found at %d", t,
               tn->id, ref_model_find_tensor(m, tn->id));
  }
}

static int same_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

static void same_tensor(const ref_tensor *a, const ref_tensor *b, uint32_t t) {
  int same = a->id == b->id && same_str(a->name, b->name) && a->kind == b->kind &&
             a->data_type == b->data_type && a->rank == b->rank &&
             memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0 && a->quant == b->quant &&
             a->nbytes == b->nbytes;
  if (same && a->quant == REF_QUANT_SCALE_OFFSET)
    same = memcmp(&a->scale, &b->scale, sizeof a->scale) == 0 && a->offset == b->offset;
  if (same && a->quant == REF_QUANT_AXIS_SCALE_OFFSET)
    same = a->axis == b->axis && a->num_axis == b->num_axis &&
           memcmp(a->scales, b->scales, a->num_axis * sizeof *a->scales) == 0 &&
           memcmp(a->offsets, b->offsets, a->num_axis * sizeof *a->offsets) == 0;
  if (same && a->kind == REF_TENSOR_STATIC) same = memcmp(a->data, b->data, a->nbytes) == 0;
  FUZZ_CHECK(same, "tensor %u ('%s') differs after writing and reading back", t,
             a->name ? a->name : "");
}

static void same_graph(const ref_graph *a, const ref_graph *b, uint32_t g) {
  int same = same_str(a->name, b->name) && a->num_inputs == b->num_inputs &&
             a->num_outputs == b->num_outputs && a->num_ops == b->num_ops &&
             memcmp(a->inputs, b->inputs, a->num_inputs * sizeof *a->inputs) == 0 &&
             memcmp(a->outputs, b->outputs, a->num_outputs * sizeof *a->outputs) == 0;
  for (uint32_t o = 0; same && o < a->num_ops; o++) {
    const ref_op *x = &a->ops[o], *y = &b->ops[o];
    same = x->type == y->type && same_str(x->name, y->name) && x->num_inputs == y->num_inputs &&
           x->num_outputs == y->num_outputs &&
           memcmp(x->inputs, y->inputs, x->num_inputs * sizeof *x->inputs) == 0 &&
           memcmp(x->outputs, y->outputs, x->num_outputs * sizeof *x->outputs) == 0;
    /* parameters an op does not take are 0 on both sides */
    if (same)
      same = memcmp(x->stride, y->stride, sizeof x->stride) == 0 &&
             memcmp(x->pad, y->pad, sizeof x->pad) == 0 && x->axis == y->axis &&
             memcmp(x->filter, y->filter, sizeof x->filter) == 0 &&
             x->ceil_mode == y->ceil_mode && x->align_corners == y->align_corners &&
             x->half_pixel_centers == y->half_pixel_centers &&
             memcmp(x->perm, y->perm, sizeof x->perm) == 0;
    if (same && x->type == REF_OP_SOFTMAX) same = memcmp(&x->beta, &y->beta, sizeof x->beta) == 0;
  }
  FUZZ_CHECK(same, "graph %u ('%s') differs after writing and reading back", g,
             a->name ? a->name : "");
}

static void same_model(const ref_model *a, const ref_model *b) {
  const ref_model_meta *x = &a->meta, *y = &b->meta;
  FUZZ_CHECK(x->binary_info_version == y->binary_info_version &&
                 x->graph_info_version == y->graph_info_version &&
                 x->tensor_version == y->tensor_version && x->backend_id == y->backend_id &&
                 same_str(x->build_id, y->build_id) &&
                 memcmp(x->core_api, y->core_api, sizeof x->core_api) == 0 &&
                 memcmp(x->backend_api, y->backend_api, sizeof x->backend_api) == 0 &&
                 memcmp(x->context_blob_version, y->context_blob_version,
                        sizeof x->context_blob_version) == 0 &&
                 same_str(x->soc_version, y->soc_version) && x->soc_model == y->soc_model &&
                 x->dsp_arch == y->dsp_arch && x->vtcm_blob == y->vtcm_blob &&
                     (x->graph_blob_version == 2) == (y->graph_blob_version == 2),
             "metadata differs after writing and reading back");
  FUZZ_CHECK(a->num_tensors == b->num_tensors && a->num_graphs == b->num_graphs,
             "%u tensors / %u graphs read back as %u / %u", a->num_tensors, a->num_graphs,
             b->num_tensors, b->num_graphs);
  for (uint32_t t = 0; t < a->num_tensors; t++) same_tensor(&a->tensors[t], &b->tensors[t], t);
  for (uint32_t g = 0; g < a->num_graphs; g++) same_graph(&a->graphs[g], &b->graphs[g], g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[512] = "";
  ref_model *m = NULL;
  if (ref_model_parse(data, size, &m, err, sizeof err) != 0) {
    FUZZ_CHECK(m == NULL, "a failed parse returned a model");
    FUZZ_CHECK(err[0] != '\0', "a failed parse gave no message");
    return 0;
  }
  FUZZ_CHECK(m != NULL, "parse succeeded without a model");
  check_model(m);

  void *first = NULL, *second = NULL;
  size_t first_len = 0, second_len = 0;
  FUZZ_CHECK(ref_model_write(m, &first, &first_len, err, sizeof err) == 0,
             "a parsed model does not write: %s", err);

  ref_model *again = NULL;
  FUZZ_CHECK(ref_model_parse(first, first_len, &again, err, sizeof err) == 0,
             "the writer's output does not parse: %s", err);
  check_model(again);
  same_model(m, again);
  ref_model_free(m);
  FUZZ_CHECK(ref_model_write(again, &second, &second_len, err, sizeof err) == 0,
             "the reparsed model does not write: %s", err);
  FUZZ_CHECK(first_len == second_len && memcmp(first, second, first_len) == 0,
             "write(parse(write(m))) differs from write(m): %zu vs %zu bytes", first_len,
             second_len);
  ref_model_free(again);
  free(first);
  free(second);
  return 0;
}
