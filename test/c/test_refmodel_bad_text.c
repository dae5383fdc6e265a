/*
 * test_refmodel_bad_text.c - model text the builder must refuse, each with a message that names
 * the line.
 */
#include <stdlib.h>
#include <string.h>

#include "refmodel_rig.h"
#include "test.h"

/* ---- bad text ------------------------------------------------------------------------------ */

TEST(refmodel_bad_text_names_the_line) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Conv3d x -> y\n",
       "line 4: unknown op 'Conv3d'"},
      {"graph g\n  input x f64 [1]\n", "line 2: unknown type 'f64'"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu q -> y\n",
       "line 4: unknown tensor 'q' in graph 'g'"},
      {"graph g\n  input x f32 [1]\n  input x f32 [2]\n", "line 3: tensor 'x' already declared on line 2"},
      {"graph g\n  static w f32 [2,2] data=[1,2,3]\n", "line 2: tensor 'w' has 4 elements, data has 3 values"},
      {"graph g\n  static w u8 [2] data=[1,256]\n", "line 2: data: '256' is not an integer in u8's range [0, 255]"},
      {"graph g\n  static w i8 [2] data=[1,\n -129]\n", "line 3: data: '-129'"},
      {"input x f32 [1]\n", "line 1: 'input' outside a graph"},
      {"graph g\n  input a f32 [1,4]\n  input b f32 [1,3]\n  output y f32 [1,4]\n\n"
       "  op ElementWiseAdd a b -> y\n",
       "line 6: graph 'g' op 0 (ElementWiseAdd): shapes [1,4] and [1,3] do not broadcast"},
      {"# header\ngraph g\n  input a f32 [1]\n", "line 2: graph 'g' has no outputs"},
      {"graph g\n  output y f32 [1]\n", "line 1: graph 'g' has no inputs"},
      {"graph g\n  input a f32 [1]\n  output y f32 [1]\n", "line 1: graph 'g': output 'y' is never produced"},
      {"graph g\n  static w f32 [1,\n2\n", "line 2: '[' is never closed"},
      {"meta build_id=\"abc\n", "line 1: unterminated string"},
      {"graph g\n  input x f32 [1] colour=red\n", "line 2: a tensor takes no parameter 'colour'"},
      {"graph g\n  input x u8 [1] scale=0.1 zero_point=300\n", "line 2: tensor 'x': zero point 300 outside [0, 255]"},
      {"graph g\n  input x f32 [1] scale=0.1\n", "line 2: f32 tensors cannot carry quantization"},
      {"graph g\n  input x u8 [1] zero_point=3\n", "line 2: zero_point= needs scale="},
      {"graph g\n  input x u8 [1] scale=0\n", "line 2: tensor 'x': scale 0 must be finite and > 0"},
      {"graph g\n  static w u8 [2,2] axis=0 scales=[1,1,1] data=[1,2,3,4]\n",
       "line 2: tensor 'w': 3 per-axis scales but dims[0] is 2"},
      {"graph g\n  static w u8 [2] axis=0 scales=[1,1] zero_points=[1]\n", "line 2: zero_points= needs a list of 2"},
      {"meta flavour=3\n", "line 1: unknown meta key 'flavour'"},
      {"meta tensor=3\n", "line 1: tensor version 3"},
      {"meta core_api=2.x\n", "line 1: core_api: '2.x' is not a version"},
      {"meta vtcm_bytes=0\nmeta vtcm_bytes=0\n", "line 2: meta 'vtcm_bytes' given twice"},
      {"meta vtcm_bytes=8\n", "line 1: vtcm_bytes: 8 is below 1 MiB (1048576); give the VTCM "
       "in bytes"},
      {"meta vtcm_bytes=4294967296\n",
       "line 1: vtcm_bytes: '4294967296' is not an unsigned 32-bit"},
      {"meta vtcm_blob_unit=kb\n", "line 1: vtcm_blob_unit: 'kb' is not bytes or mb"},
      {"meta vtcm_bytes=1572864\nmeta vtcm_blob_unit=mb\ngraph g\n  input x f32 [1]\n"
       "  output y f32 [1]\n  op Relu x -> y\n",
       "line 2: vtcm_blob_unit=mb writes whole MB, but vtcm_bytes 1572864 is not a multiple of "
       "1048576"},
      {"meta vtcm_mb=2\n", "line 1: unknown meta key 'vtcm_mb' (binary_info"},
      {"graph g\n  input x f32 [1]\ngraph g\n", "line 3: graph 'g' already defined on line 1"},
      {"graph g\n  input x f32 [0]\n", "line 2: tensor 'x': dimension 0 is 0"},
      {"graph g\n  input x f32 [1,1,1,1,1,1,1,1,1]\n", "line 2: dims need 1 to 8 values, got 9"},
      {"graph g\n  input x f32 [65536,65536]\n", "line 2: tensor 'x': dims [65536,65536] x 4-byte"},
      {"graph g\n  static w f32 [1]\n", "line 2: static tensor 'w' needs exactly one of"},
      {"graph g\n  input x f32 [1] data=[1]\n", "line 2: data= is only for static tensors"},
      {"graph g\n  static w u8 [1] data_f32=[1]\n", "line 2: data_f32= needs a float or quantized tensor"},
      {"graph g\n  static w u8 [1] scale=1 data_f32=[nan]\n", "line 2: data_f32: value 0 is NaN"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x y\n", "line 4: expected '->'"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x -> y beta=2\n",
       "line 4: Relu takes no parameter 'beta'"},
      {"graph g\n  input x f32 [1,2,2,1]\n  static w f32 [1,1,1,1] data=[1]\n"
       "  output y f32 [1,2,2,1]\n  op Conv2d x w -> y stride=[1]\n",
       "line 5: 'stride' takes a list of 2 values"},
      {"graph g\n  input x f32 [1,2,2,1]\n  static w f32 [3,3,1,1] data=[1,1,1,1,1,1,1,1,1]\n"
       "  output y f32 [1,2,2,1]\n  op Conv2d x w -> y\n",
       "line 5: graph 'g' op 0 (Conv2d): kernel 3x3 larger than padded input 2x2"},
      {"graph g\n  input x f32 [1,4,4,1]\n  static w f32 [1,1,1,1] data=[1]\n"
       "  output y f32 [1,4,4,1]\n  op Conv2d x w -> y stride=[2,2]\n",
       "line 5: graph 'g' op 0 (Conv2d): output shape [1,4,4,1], expected [1,2,2,1]"},
      {"graph g\n  input x f32 [1,3]\n  static w f32 [2,4] data=[1,1,1,1,1,1,1,1]\n"
       "  output y f32 [1,2]\n  op FullyConnected x w -> y\n",
       "line 5: graph 'g' op 0 (FullyConnected): input 'x' shape [1,3] does not flatten to [N,4]"},
      {"graph g\n  input x f32 [1,3]\n  output y f32 [1,3]\n  op Softmax x -> y beta=inf\n",
       "line 4: graph 'g' op 0 (Softmax): beta inf is not finite"},
      {"graph g\n  input x f32 [6]\n  output y f32 [4]\n  op Reshape x -> y\n",
       "line 4: graph 'g' op 0 (Reshape): cannot reshape [6] to [4]"},
      {"graph g\n  input x f32 [2]\n  output y f32 [2]\n  op Relu x x -> y\n",
       "line 4: graph 'g' op 0 (Relu): takes 1 input, got 2"},
      {"graph g\n  input x f32 [2]\n  output y f32 [2]\n  op Relu x -> y\n  op Relu x -> y\n",
       "line 5: graph 'g' op 1 (Relu): 'y' is produced twice"},
      {"graph g\n  input x f32 [2]\n  native h f32 [2]\n  output y f32 [2]\n  op Relu h -> y\n",
       "line 5: graph 'g' op 0 (Relu): tensor 'h' is not produced by an earlier op"},
      {"graph g\n  input x f32 [2] ]\n", "line 2: ']' without '['"},
      {"graph g x\n", "line 1: expected 'graph NAME'"},
      {"graph g \\ x\n", "line 1: '\\' must end the line"},
      {"graph \\\n g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x -> z\n",
       "line 5: unknown tensor 'z'"},
      {"frobnicate\n", "line 1: unknown statement 'frobnicate'"},
      {"", "no graph defined"},
      {"graph g\n  input x f32 [1] scale\n", "line 2: expected key=value, got 'scale'"},
      /* data formats and dynamic dimensions (NonZero) */
      {"graph g\n  input x f32 [1] format=ubwc\n", "line 2: format: 'ubwc' (expected dense or sparse)"},
      {"graph g\n  static w f32 [1] data=[1] format=sparse\n",
       "line 2: tensor 'w': a static tensor cannot be sparse"},
      {"graph g\n  input x f32 [2,3] dynamic=[0]\n",
       "line 2: tensor 'x': dynamic dimensions on a tensor of kind input"},
      {"graph g\n  input x f32 [2,3]\n  output y i32 [6,2] dynamic=[2]\n",
       "line 3: dynamic: axis 2 is beyond the tensor's rank"},
      {"graph g\n  input x f32 [2,3]\n  output y i32 [6,2] dynamic=[0,0]\n",
       "line 3: dynamic: axis 0 is given twice"},
      {"graph g\n  input x f32 [2,3]\n  output y i32 [6,2]\n  op NonZero x -> y\n",
       "line 4: graph 'g' op 0 (NonZero): output 'y' must have exactly its dims[0] dynamic"},
      {"graph g\n  input x f32 [2,3]\n  output y i32 [5,2] dynamic=[0]\n  op NonZero x -> y\n",
       "line 4: graph 'g' op 0 (NonZero): output shape [5,2], expected [6,2]"},
      {"graph g\n  input x f32 [2,3]\n  output y f32 [6,2] dynamic=[0]\n  op NonZero x -> y\n",
       "line 4: graph 'g' op 0 (NonZero): output 'y' is f32; expected plain i32 or u32"},
      {"graph g\n  input x f32 [2]\n  output y f32 [2] dynamic=[0]\n  op Relu x -> y\n",
       "line 4: graph 'g' op 0 (Relu): output 'y' has dynamic dimensions, which only NonZero"},
      {"graph g\n  input x f32 [3]\n  output y i32 [3,1] dynamic=[0]\n  output z f32 [3,1]\n"
       "  op NonZero x -> y\n  op Relu y -> z\n",
       "line 6: graph 'g' op 1 (Relu): 'y' has dynamic dimensions: no op can read it"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    void *bin = build_bin(cases[i].text, &len);
    free(bin);
    CHECK_MSG(!bin, "case %zu built", i);
    CHECK_MSG(strstr(g_err, cases[i].want), "case %zu: '%s' lacks '%s'", i, g_err, cases[i].want);
  }
}
