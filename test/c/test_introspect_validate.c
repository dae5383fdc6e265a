/*
 * test_introspect_validate.c - the rules of sysinfo_validate (src/introspect_validate.c), one
 * field at a time, on answers built here in the System API 1.7 layout (88-byte graph infos,
 * 144-byte tensors: the sizes of our own structs, so plain C arrays).
 *
 * Pointers that must not be followed are set to an address that faults when read: a validator
 * that followed one would crash the runner instead of failing quietly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "model/introspect_validate.h"
#include "qnn/qnn_versions.h"
#include "test.h"

#define LIB "/opt/qairt/lib/libQnnSystem.so"
#define PREFIX "unsupported system library layout: '" LIB "' (System API 1.7.0): "

/* Reading this address faults (the first page is never mapped). */
#define UNREADABLE ((void *)(uintptr_t)0x10)

typedef struct answer {
  qnn_system_context_graph_info_t graphs[2];
  qnn_tensor_t in[2][2];
  qnn_tensor_t out[2][1];
  uint32_t dims[2];
  sysinfo_answer a;
} answer;

_Static_assert(sizeof(qnn_system_context_graph_info_t) == QNN_GRAPH_INFO_STRIDE_V3,
               "graph infos at the 1.7 stride");
_Static_assert(sizeof(qnn_tensor_t) == QNN_TENSOR_STRIDE, "tensors at the 144-byte stride");

static void set_tensor(answer *x, qnn_tensor_t *t, uint32_t type, const char *name) {
  memset(t, 0, sizeof *t);
  t->version = QNN_TENSOR_VERSION_2;
  qnn_tensor_v1_t *v = &t->u.v1;
  v->id = 1;
  v->name = name;
  v->type = type;
  v->data_format = QNN_TENSOR_DATA_FORMAT_DENSE;
  v->data_type = QNN_DATATYPE_UFIXED_POINT_8;
  v->quantize_params.encoding_definition = QNN_DEFINITION_DEFINED;
  v->quantize_params.quantization_encoding = QNN_QUANTIZATION_ENCODING_SCALE_OFFSET;
  v->quantize_params.u.scale_offset_encoding.scale = 0.5f;
  v->rank = 2;
  v->dimensions = x->dims;
  v->mem_type = QNN_TENSORMEMTYPE_RAW;
}

/* Two graphs "g0" and "g1", each with inputs "a", "b" and output "y": every rule passes. */
static void make_answer(answer *x) {
  memset(x, 0, sizeof *x);
  x->dims[0] = 1;
  x->dims[1] = 4;
  static const char *const names[2] = {"g0", "g1"};
  for (int g = 0; g < 2; g++) {
    qnn_system_context_graph_info_t *gi = &x->graphs[g];
    gi->version = QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3;
    gi->u.v3.graph_name = names[g];
    gi->u.v3.num_graph_inputs = 2;
    gi->u.v3.graph_inputs = x->in[g];
    gi->u.v3.num_graph_outputs = 1;
    gi->u.v3.graph_outputs = x->out[g];
    set_tensor(x, &x->in[g][0], QNN_TENSOR_TYPE_APP_WRITE, "a");
    set_tensor(x, &x->in[g][1], QNN_TENSOR_TYPE_APP_WRITE, "b");
    set_tensor(x, &x->out[g][0], QNN_TENSOR_TYPE_APP_READ, "y");
  }
  x->a = (sysinfo_answer){LIB, {1, 7, 0}, "v2.42.0.251225", "v68", 2, x->graphs};
}

#define ACCEPTED(x)                                                                 \
  do {                                                                              \
    int rc_ = sysinfo_validate(&(x)->a);                                            \
    CHECK_MSG(rc_ == 0, "expected acceptance, got %s: %s", htpu_err_name(rc_),      \
              htpu_last_error());                                                   \
  } while (0)

/* Refused with the library named first, then `detail`. */
#define REFUSED(x, detail)                                                          \
  do {                                                                              \
    CHECK_EQ(sysinfo_validate(&(x)->a), HTPU_ESYSTEM_LAYOUT);                       \
    CHECK_STR_CONTAINS(htpu_last_error(), PREFIX detail);                           \
  } while (0)

TEST(validate_accepts_plausible_answers) {
  answer x;
  make_answer(&x);
  ACCEPTED(&x);
  /* A scalar (rank 0) has no dimensions. */
  x.in[1][0].u.v1.rank = 0;
  x.in[1][0].u.v1.dimensions = NULL;
  ACCEPTED(&x);
  /* Types QNN declares but the project does not handle are the copy's to refuse. */
  x.in[0][1].u.v1.data_type = QNN_DATATYPE_STRING;
  x.out[1][0].u.v1.data_type = QNN_DATATYPE_BFLOAT_16;
  x.out[0][0].u.v1.type = QNN_TENSOR_TYPE_UNDEFINED;
  ACCEPTED(&x);
  /* Undefined quantization: the encoding field is not looked at. */
  x.in[0][0].u.v1.quantize_params.encoding_definition = QNN_DEFINITION_UNDEFINED;
  x.in[0][0].u.v1.quantize_params.quantization_encoding = 12345;
  ACCEPTED(&x);
  /* Tensor names may be empty, or UTF-8; version 1 tensors and graph infos. */
  x.in[0][0].u.v1.name = "";
  x.out[0][0].u.v1.name = "\xc3\xa9t\xc3\xa9";
  x.in[1][1].version = QNN_TENSOR_VERSION_1;
  x.graphs[1].version = QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1;
  ACCEPTED(&x);
  /* Absent strings, and a name just inside the bound. */
  x.a.build_id = NULL;
  x.a.soc_version = NULL;
  char *longest = malloc(SYSINFO_MAX_NAME);
  CHECK(longest);
  memset(longest, 'n', SYSINFO_MAX_NAME - 1);
  longest[SYSINFO_MAX_NAME - 1] = '\0';
  x.graphs[0].u.v1.graph_name = longest;
  int rc = sysinfo_validate(&x.a);
  free(longest);
  CHECK_MSG(rc == 0, "a %u-byte name: %s", SYSINFO_MAX_NAME - 1, htpu_last_error());
  /* Zero graphs: nothing to misread (introspection reports the empty binary itself). */
  x.a.num_graphs = 0;
  x.a.graphs = NULL;
  ACCEPTED(&x);
}

TEST(validate_graph_counts_and_versions) {
  answer x;
  make_answer(&x);
  x.a.num_graphs = SYSINFO_MAX_GRAPHS + 1;
  REFUSED(&x, "4097 graphs; expected at most 4096");
  make_answer(&x);
  x.a.graphs = NULL;
  REFUSED(&x, "2 graphs but no graph array");
  make_answer(&x);
  x.graphs[1].version = 0;
  REFUSED(&x, "graph 1 (of 2) has graph info version 0; expected 1..3");
  x.graphs[1].version = 4;
  REFUSED(&x, "graph 1 (of 2) has graph info version 4; expected 1..3");
  /* System API 1.1 has no graph info v3 (element 0 is at the same place at every stride). */
  make_answer(&x);
  x.a.api = (qnn_version_t){1, 1, 0};
  x.a.num_graphs = 1;
  CHECK_EQ(sysinfo_validate(&x.a), HTPU_ESYSTEM_LAYOUT);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "(System API 1.1.0): graph 0 (of 1) has graph info version 3; expected 1..2");
  CHECK_STR_CONTAINS(htpu_last_error(), "(64-byte graph infos, 144-byte tensors)");
  make_answer(&x);
  x.graphs[0].u.v1.num_graph_inputs = SYSINFO_MAX_GRAPH_IO + 1;
  REFUSED(&x, "graph 0 has 65537 inputs; expected at most 65536");
  make_answer(&x);
  x.graphs[1].u.v1.graph_outputs = NULL;
  REFUSED(&x, "graph 1 has 1 outputs but no output array");
}

TEST(validate_names_are_bounded_and_printable) {
  answer x;
  make_answer(&x);
  x.graphs[1].u.v1.graph_name = NULL;
  REFUSED(&x, "graph 1 has no name (NULL)");
  x.graphs[1].u.v1.graph_name = "";
  REFUSED(&x, "graph 1: its name is empty");
  x.graphs[1].u.v1.graph_name = "\x01";
  REFUSED(&x, "graph 1: its name has byte 0x01 at offset 0; expected printable characters "
              "ending in NUL within 4096 bytes");
  x.graphs[1].u.v1.graph_name = "ok\x7f";
  REFUSED(&x, "graph 1: its name has byte 0x7f at offset 2");
  /* No NUL: exactly SYSINFO_MAX_NAME bytes are read (ASan catches one more). */
  char *run_on = malloc(SYSINFO_MAX_NAME);
  CHECK(run_on);
  memset(run_on, 'n', SYSINFO_MAX_NAME);
  x.graphs[1].u.v1.graph_name = run_on;
  int rc = sysinfo_validate(&x.a);
  const char *msg = htpu_last_error();
  int named = strstr(msg, "graph 1: its name has no NUL within 4096 bytes") != NULL;
  make_answer(&x);
  x.out[1][0].u.v1.name = run_on;
  int rc2 = sysinfo_validate(&x.a);
  int named2 = strstr(htpu_last_error(), "graph 1 ('g1') output 0: its name has no NUL") != NULL;
  make_answer(&x);
  x.a.build_id = run_on;
  int rc3 = sysinfo_validate(&x.a);
  int named3 = strstr(htpu_last_error(), "the build id has no NUL within 4096 bytes") != NULL;
  free(run_on);
  CHECK_EQ(rc, HTPU_ESYSTEM_LAYOUT);
  CHECK(named);
  CHECK_EQ(rc2, HTPU_ESYSTEM_LAYOUT);
  CHECK(named2);
  CHECK_EQ(rc3, HTPU_ESYSTEM_LAYOUT);
  CHECK(named3);
  make_answer(&x);
  x.in[0][1].u.v1.name = NULL;
  REFUSED(&x, "graph 0 ('g0') input 1 has no name (NULL)");
  x.in[0][1].u.v1.name = "b\n";
  REFUSED(&x, "graph 0 ('g0') input 1: its name has byte 0x0a at offset 1");
  make_answer(&x);
  x.a.soc_version = "v6\x02";
  REFUSED(&x, "the SoC version has byte 0x02 at offset 2");
}

TEST(validate_tensor_fields) {
  answer x;
  make_answer(&x);
  x.out[1][0].version = 3;
  REFUSED(&x, "graph 1 ('g1') output 0 has tensor version 3; expected 1 or 2");
  x.out[1][0].version = 0;
  REFUSED(&x, "graph 1 ('g1') output 0 has tensor version 0; expected 1 or 2");
  make_answer(&x);
  x.in[1][1].u.v1.type = QNN_TENSOR_TYPE_OPTIONAL_APP_READWRITE + 1;
  REFUSED(&x, "graph 1 ('g1') input 1 has tensor type 14; expected 0..13 or 0x7fffffff");
  make_answer(&x);
  x.in[0][1].u.v1.data_type = 0;
  REFUSED(&x, "graph 0 ('g0') input 1 has data type 0x0, which is not a QNN data type");
  x.in[0][1].u.v1.data_type = 0x3e000000; /* the bits of 0.125f */
  REFUSED(&x, "graph 0 ('g0') input 1 has data type 0x3e000000, which is not a QNN data type");
  make_answer(&x);
  x.in[0][0].u.v1.quantize_params.encoding_definition = 2;
  REFUSED(&x, "graph 0 ('g0') input 0 has quantization definition 2; expected 0, 1 or 0x7fffffff");
  make_answer(&x);
  x.in[0][0].u.v1.quantize_params.quantization_encoding = 12;
  REFUSED(&x, "graph 0 ('g0') input 0 has quantization encoding 12; expected 0..11 or 0x7fffffff");
  x.in[0][0].u.v1.quantize_params.quantization_encoding = -1;
  REFUSED(&x, "graph 0 ('g0') input 0 has quantization encoding -1");
  make_answer(&x);
  x.out[0][0].u.v1.rank = HTPU_MAX_RANK + 1;
  REFUSED(&x, "graph 0 ('g0') output 0 has rank 9; expected 0..8");
  make_answer(&x);
  x.out[0][0].u.v1.dimensions = NULL;
  REFUSED(&x, "graph 0 ('g0') output 0 has rank 2 but no dimensions");
}

/* Fields are judged before the entry's pointers are followed: each answer below has a pointer
 * that faults when read, in an entry that an earlier plain field already condemns. */
TEST(validate_follows_no_pointer_of_a_bad_entry) {
  answer x;
  make_answer(&x);
  x.graphs[1].version = 0x5f3a2b10; /* half of a pointer, as a wrong stride reads */
  x.graphs[1].u.v1.graph_name = UNREADABLE;
  x.graphs[1].u.v1.graph_inputs = UNREADABLE;
  x.graphs[1].u.v1.graph_outputs = UNREADABLE;
  REFUSED(&x, "graph 1 (of 2) has graph info version 1597647632");
  make_answer(&x);
  x.graphs[1].u.v1.num_graph_inputs = 0x7f000000;
  x.graphs[1].u.v1.graph_name = UNREADABLE;
  x.graphs[1].u.v1.graph_inputs = UNREADABLE;
  REFUSED(&x, "graph 1 has 2130706432 inputs");
  make_answer(&x);
  x.graphs[1].u.v1.graph_outputs = NULL;
  x.graphs[1].u.v1.graph_name = UNREADABLE;
  REFUSED(&x, "graph 1 has 1 outputs but no output array");
  /* Tensors: the name and dimensions pointers of a condemned entry stay unread. */
  qnn_tensor_t *t = &x.in[1][1];
  make_answer(&x);
  t->version = 0;
  t->u.v1.name = UNREADABLE;
  t->u.v1.dimensions = UNREADABLE;
  REFUSED(&x, "graph 1 ('g1') input 1 has tensor version 0");
  make_answer(&x);
  t->u.v1.type = 0x3f800000;
  t->u.v1.name = UNREADABLE;
  REFUSED(&x, "graph 1 ('g1') input 1 has tensor type 1065353216");
  make_answer(&x);
  t->u.v1.data_type = 0;
  t->u.v1.name = UNREADABLE;
  t->u.v1.dimensions = UNREADABLE;
  REFUSED(&x, "graph 1 ('g1') input 1 has data type 0x0");
  make_answer(&x);
  t->u.v1.quantize_params.encoding_definition = -7;
  t->u.v1.name = UNREADABLE;
  REFUSED(&x, "graph 1 ('g1') input 1 has quantization definition -7");
  make_answer(&x);
  t->u.v1.rank = 0x55555555;
  t->u.v1.name = UNREADABLE;
  t->u.v1.dimensions = UNREADABLE;
  REFUSED(&x, "graph 1 ('g1') input 1 has rank 1431655765; expected 0..8");
}

TEST(validate_io_data_formats) {
  CHECK_EQ(sysinfo_check_io_format("graph 'g' input 'x'", QNN_TENSOR_DATA_FORMAT_DENSE), 0);
  CHECK_EQ(sysinfo_check_io_format("graph 'g' input 'x'", QNN_TENSOR_DATA_FORMAT_SPARSE),
           HTPU_EMODEL);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 'g' input 'x': data format SPARSE (1)");
  CHECK_EQ(sysinfo_check_io_format("graph 'g' output 'y'", QNN_TENSOR_DATA_FORMAT_UBWC_NV12),
           HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 'g' output 'y': data format UBWC_NV12 (5) is not "
                                        "supported at graph inputs and outputs");
  CHECK_EQ(sysinfo_check_io_format("graph 'g' output 'y'", 99), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "data format 99, which QNN (up to QAIRT 2.43) does not "
                                        "declare");
}
