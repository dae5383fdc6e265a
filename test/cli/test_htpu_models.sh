#!/usr/bin/env bash
# test_htpu_models.sh BUILD_DIR - htpu on ONNX EPContext models (docs/context-binaries.md,
# route C): info (text and --json), run and import answer as for the raw binary; several
# contexts need --graph; external binaries stay in the model's folder; a QDQ model and a
# truncated file are clear errors. The models are written by test/support/epcontext.py.
set -u

EPC="python3 $(cd "$(dirname "$0")/../support" && pwd)/epcontext.py"

. "$(dirname "$0")/harness.sh" "$@" test_htpu_models

cat >"$TMP/add.txt" <<'TXT'
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
TXT
cat >"$TMP/two.txt" <<'TXT'
graph add_two
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
TXT
$EMU "$REFBUILD" "$TMP/add.txt" "$TMP/add.bin" >/dev/null 2>&1
$EMU "$REFBUILD" "$TMP/two.txt" "$TMP/two.bin" >/dev/null 2>&1
python3 -c "
import struct
open('$TMP/a.f32','wb').write(struct.pack('<4f',1.5,-2,3,4e3))
open('$TMP/b.f32','wb').write(struct.pack('<4f',10,20,-30,0.25))"

NAMES="{0: 'person', 1: 'bicycle', 2: \"it's\"}"
$EPC "$TMP/yolo_qnn.onnx" --node yolo_ctx --embed "$TMP/add.bin" \
  --attr source=QNNExecutionProvider --attr ep_sdk_version=v2.48.40.250101_1 \
  --attr partition_name=add_f32 --prop "names=$NAMES" --prop task=detect --prop "imgsz=[640, 640]"
mkdir -p "$TMP/ext/sub"
cp "$TMP/add.bin" "$TMP/ext/sub/model.bin"
$EPC "$TMP/ext/model_ctx.onnx" --node ext --external sub/model.bin --attr source=QNN
$EPC "$TMP/both.onnx" --node first --embed "$TMP/add.bin" --node second --embed "$TMP/two.bin"
$EPC "$TMP/qdq.onnx" --op QuantizeLinear --op Conv --op DequantizeLinear
head -c 300 "$TMP/yolo_qnn.onnx" >"$TMP/cut.onnx"

# ---------------------------------------------------------------------------------------------
# info

run info "$TMP/yolo_qnn.onnx" --system-lib reference
expect "info: an embedded EPContext model" 0 out "graph 0: add_f32" out "ONNX model" \
  out "onnx-epcontext (IR 9, opset 17)" out "class names  3: person, bicycle, it's" \
  out "embedded in node 'yolo_ctx'" out "v2.48.40.250101_1" out "task" out "detect"
run info "$TMP/yolo_qnn.onnx" --system-lib reference --json
expect "info --json: the source" 0 out '"format": "onnx-epcontext"' \
  out '"class_names": [' out '"person"' out '"ep_sdk_version": "v2.48.40.250101_1"' \
  out '"other_contexts": []'
json_check "info --json: source parses" '
  j.graphs[0].name === "add_f32" && j.source.num_contexts === 1 &&
  j.source.class_names.join() === "person,bicycle,it'"'"'s" && j.source.metadata.task === "detect" &&
  j.source.nodes[0].main_context === true && j.source.nodes[0].cache_file === null'
run info "$TMP/add.bin" --system-lib reference --json
expect "info --json: a raw binary has no source" 0 out '"source": null'
# a key given twice means its last value, in the class names, the text and the JSON alike
$EPC "$TMP/dup.onnx" --node ctx --embed "$TMP/add.bin" --prop "names={0: 'first'}" \
  --prop task=pose --prop "names={0: 'last', 1: 'too'}" --producer onnxrt --producer-version ""
run info "$TMP/dup.onnx" --system-lib reference
expect "info: a duplicate key's last value" 0 out "class names  2: last, too" \
  out "names  {0: 'last', 1: 'too'}"
expect_not "info: a duplicate key shown once" out "{0: 'first'}"
check "info: no trailing space after a producer without a version" \
  grep -qx "producer     onnxrt" "$TMP/out"
run info "$TMP/dup.onnx" --system-lib reference --json
expect_not "info --json: a duplicate key written once" out "{0: 'first'}"
json_check "info --json: a duplicate key's last value" '
  j.source.metadata.names === "{0: '"'"'last'"'"', 1: '"'"'too'"'"'}" &&
  j.source.class_names.join() === "last,too" && j.source.metadata.task === "pose"'
run info "$TMP/both.onnx" --system-lib reference
expect "info: each context of a model holding two" 0 out "graph 0: add_f32" \
  out "context 1 of the model's 2 (embedded in node 'second')" out "graph 0: add_two"
run info "$TMP/ext/model_ctx.onnx" --system-lib reference
expect "info: an external binary beside the model" 0 out "sub/model.bin" out "graph 0: add_f32"
$EPC "$TMP/ext/twice.onnx" --node a --external sub/model.bin --node b --external ./sub/./model.bin
run info "$TMP/ext/twice.onnx" --system-lib reference
expect "info: one file named two ways is one context" 0 out "contexts     1 (this report"
run run "$TMP/ext/twice.onnx" --backend reference --input a="$TMP/a.f32" --input b="$TMP/b.f32"
expect "run: one file named two ways needs no --graph" 0
run info "$TMP/qdq.onnx" --system-lib reference
expect "info: a QDQ model says what to do" 1 \
  err "is an ONNX model without an EPContext node (3 nodes: QuantizeLinear, Conv, DequantizeLinear)" \
  err "docs/context-binaries.md"
run info "$TMP/cut.onnx" --system-lib reference
expect "info: a truncated model" 1 err "HTPU_EMODEL" err "is not a readable ONNX model"

# ---------------------------------------------------------------------------------------------
# run: the same answer as the raw binary

run run "$TMP/add.bin" --backend reference --input a="$TMP/a.f32" --input b="$TMP/b.f32" \
  --output-dir "$TMP/raw_out"
expect "run: the raw binary" 0
run run "$TMP/yolo_qnn.onnx" --backend reference --input a="$TMP/a.f32" --input b="$TMP/b.f32" \
  --output-dir "$TMP/onnx_out"
expect "run: the EPContext model" 0
check "run: the same outputs, byte for byte" cmp -s "$TMP/raw_out/y.npy" "$TMP/onnx_out/y.npy"
run run "$TMP/ext/model_ctx.onnx" --backend reference --input a="$TMP/a.f32" \
  --input b="$TMP/b.f32" --output-dir "$TMP/ext_out"
expect "run: the external model" 0
check "run: external, the same outputs" cmp -s "$TMP/raw_out/y.npy" "$TMP/ext_out/y.npy"
run run "$TMP/both.onnx" --backend reference --input a="$TMP/a.f32" --input b="$TMP/b.f32"
expect "run: two contexts need --graph" 2 \
  err "holds 2 context binaries (context 0: 'add_f32'; context 1: 'add_two'): choose a graph"
run run "$TMP/both.onnx" --backend reference --graph add_two --input a="$TMP/a.f32" \
  --input b="$TMP/b.f32" --output-dir "$TMP/two_out"
expect "run: --graph picks the second context" 0
check "run: second context, the same outputs" cmp -s "$TMP/raw_out/y.npy" "$TMP/two_out/y.npy"
run run "$TMP/both.onnx" --backend reference --graph nope --input a="$TMP/a.f32"
expect "run: an unknown graph lists the contexts" 2 err "has no graph 'nope' (context 0: 'add_f32'"

# ---------------------------------------------------------------------------------------------
# import

run import "$TMP/yolo_qnn.onnx" -o "$TMP/imported.bin" --system-lib reference
expect "import: the embedded binary" 0 out "bytes"
check "import: byte for byte the binary" cmp -s "$TMP/imported.bin" "$TMP/add.bin"
run import "$TMP/both.onnx" -o "$TMP/second.bin" --graph add_two --system-lib reference
expect "import --graph" 0
check "import --graph: the second binary" cmp -s "$TMP/second.bin" "$TMP/two.bin"
run import "$TMP/ext/model_ctx.onnx" --output "$TMP/ext.bin" --system-lib reference
expect "import: an external binary" 0
check "import: external, byte for byte" cmp -s "$TMP/ext.bin" "$TMP/add.bin"
run import "$TMP/yolo_qnn.onnx" --system-lib reference
expect "import: -o is required" 2 err "-o OUT is required"
run import "$TMP/both.onnx" -o "$TMP/x.bin" --context 2 --system-lib reference
expect "import --context past the end" 1 err "there is no context 2"
ln -s "$TMP/add.bin" "$TMP/ext/escape.bin"
$EPC "$TMP/ext/escape.onnx" --node e --external escape.bin
run import "$TMP/ext/escape.onnx" -o "$TMP/x.bin" --system-lib reference
expect "import: a symlink out of the model's folder is refused" 1 \
  err "outside the model's folder"
check "import: nothing written on failure" test ! -e "$TMP/x.bin"

# ---------------------------------------------------------------------------------------------
# memory figures (docs/board.md, "Memory"): blob info v1 and v2 from the reference format

for v in 1 2; do
  cat >"$TMP/mem$v.txt" <<TXT
meta graph_blob=$v
graph chain
  input x f32 [1,8]
  static w f32 [1,8] data=[1,2,3,4,5,6,7,8]
  native t1 f32 [1,8]
  native t2 f32 [1,8]
  output y f32 [1,8]
  op ElementWiseMultiply x w -> t1
  op Relu t1 -> t2
  op ElementWiseAdd t2 t1 -> y
TXT
  $EMU "$REFBUILD" "$TMP/mem$v.txt" "$TMP/mem$v.bin" >/dev/null 2>&1
done
python3 -c "import struct; open('$TMP/x8.f32','wb').write(struct.pack('<8f',*range(8)))"
run info "$TMP/mem1.bin" --system-lib reference
expect "info: blob info v1 figures" 0 \
  out "memory (blob info v1): spill-fill 64 B, optimization level 2, 4 HVX threads" \
  out "load estimate"
run info "$TMP/mem2.bin" --system-lib reference
expect "info: blob info v2 figures" 0 \
  out "memory (blob info v2): I/O 64 B, op data 240 B, constants 32 B, DDR tensors 64 B"
run info "$TMP/mem2.bin" --system-lib reference --json
json_check "info --json: memory and the estimate" '
  j.graphs[0].memory.blob_info_version === 2 && j.graphs[0].memory.const_bytes === 32 &&
  j.graphs[0].memory.ddr_tensor_bytes === 64 &&
  j.load_estimate_bytes === j.binary_bytes + 64 + 240 + 32 + 64 &&
  j.graphs[0].memory.spill_fill_bytes === null && j.graphs[0].memory.hvx_threads === null'
run info "$TMP/mem1.bin" --system-lib reference --json
json_check "info --json: v1 figures, and null for v2 ones (not measured zeros)" '
  const m = j.graphs[0].memory;
  m.blob_info_version === 1 && m.spill_fill_bytes === 64 && m.hvx_threads === 4 &&
  m.optimization_level === 2 && m.io_tensor_bytes === null && m.const_bytes === null &&
  m.safe_share_io === null'
run run "$TMP/mem1.bin" --backend reference --input x="$TMP/x8.f32" --output-dir "$TMP/mo" --stats
expect "run --stats: the load's memory" 0 out "load estimate" out "load measured" \
  out "not reported: the backend does not announce context custom properties (capability 215)"
export HTPU_REF_CAPS=215=0
run run "$TMP/mem1.bin" --backend reference --input x="$TMP/x8.f32" --output-dir "$TMP/mo" --stats
expect "run --stats: the context's properties where announced" 0 \
  out "weights 32 B, largest spill-fill 64 B"
run run "$TMP/mem1.bin" --backend reference --input x="$TMP/x8.f32" --output-dir "$TMP/mo" --json
json_check "run --json: memory" '
  j.memory.context_reported === true && j.memory.context_weights_bytes === 32 &&
  j.memory.rss_after_load_bytes > 0 && j.memory.load_estimate_bytes > 0'
unset HTPU_REF_CAPS

harness_summary
