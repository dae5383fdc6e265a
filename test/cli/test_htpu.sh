#!/usr/bin/env bash
# test_htpu.sh BUILD_DIR - end-to-end checks of the htpu command against the reference libraries.
#
# Builds small models with BUILD_DIR/htpu-refbuild, runs `htpu info` and `htpu doctor` (human and
# --json) and the usage/failure paths. One line per check, then "N passed, N failed"; exits
# non-zero if any check failed. JSON is validated with node when it is installed, otherwise with
# grep on known keys (python is not on every machine this runs on).
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu

# ---------------------------------------------------------------------------------------------
# models

cat >"$TMP/add.txt" <<'EOF'
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
EOF
if $EMU "$REFBUILD" "$TMP/add.txt" "$TMP/add.bin" >"$TMP/out" 2>"$TMP/err" \
  && [ -s "$TMP/add.bin" ]; then
  pass "htpu-refbuild makes add.bin"
else
  RC=1
  fail "htpu-refbuild makes add.bin" "the remaining info checks need it"
fi

# quantized tensors (per tensor and per axis), two graphs, a quoted name with a space
cat >"$TMP/quant.txt" <<'EOF'
graph quant
input x u8 [1,2,2,6] scale=0.0078125 zero_point=128
input w i8 [1,2,2,6] axis=3 scales=[0.5,0.25,0.125,1,2,4] zero_points=[0,1,2,3,4,5]
output y u8 [1,2,2,6] scale=0.015625 zero_point=0
op ElementWiseAdd x w -> y

graph second
input "odd name" f16 [3]
output o f16 [3]
op Relu "odd name" -> o
EOF
# the oldest struct versions and absent strings
cat >"$TMP/v1.txt" <<'EOF'
meta binary_info=1 graph_info=1 tensor=1 build_id="" soc_version="" backend_id=2
graph g1
input a f32 [2]
output y f32 [2]
op Relu a -> y
EOF
for m in quant v1; do
  if $EMU "$REFBUILD" "$TMP/$m.txt" "$TMP/$m.bin" >"$TMP/out" 2>"$TMP/err" \
    && [ -s "$TMP/$m.bin" ]; then
    pass "htpu-refbuild makes $m.bin"
  else
    RC=1
    fail "htpu-refbuild makes $m.bin"
  fi
done

# ---------------------------------------------------------------------------------------------
# top level

run --help
expect "--help lists the commands" 0 out "usage: htpu" out "info" out "doctor"
run --version
expect "--version" 0 out "htpu 0."
run help info
expect "help info" 0 out "usage: htpu info MODEL" out "--system-lib" out "--json"
run info --help
expect "info --help" 0 out "usage: htpu info MODEL"
run help doctor
expect "help doctor" 0 out "usage: htpu doctor" out "--dsp-library-path"
run
expect "no command -> usage, exit 2" 2 err "usage: htpu"
expect_empty "no command: stdout empty" out
run frobnicate
expect "unknown command -> exit 2" 2 err "unknown command 'frobnicate'" err "usage: htpu"
run --frob
expect "unknown top-level option -> exit 2" 2 err "unknown option '--frob'"
run help frobnicate
expect "help of an unknown command -> exit 2" 2 err "unknown command 'frobnicate'"

# ---------------------------------------------------------------------------------------------
# info

run info "$TMP/add.bin" --system-lib reference
expect "info (reference)" 0 out "add_f32" out "f32 0x0232" out "[1,4]" out "none" \
  out "binary info version" out "backend id" out "context blob size" out "libhtpu_refsystem.so"
expect_empty "info: stderr empty" err
# the tensor table: one header and three rows, names in graph order
if grep -q '^  in  *0  *a ' "$TMP/out" && grep -q '^  in  *1  *b ' "$TMP/out" &&
  grep -q '^  out  *0  *y ' "$TMP/out"; then
  pass "info: tensor rows"
else
  fail "info: tensor rows" "expected rows for a, b (in) and y (out)"
fi

run info --json "$TMP/add.bin" --system-lib=reference
expect "info --json (grep)" 0 out '"schema": "htpu.info/2"' out '"name": "add_f32"' \
  out '"shape": [1, 4]' out '"dtype": "f32"' out '"qnn_data_type_hex": "0x0232"' \
  out '"kind": "none"' out '"byte_size": 16'
json_check "info --json parses" '
  j.schema === "htpu.info/2" && j.graphs.length === 1 && j.graphs[0].name === "add_f32" &&
  j.graphs[0].vtcm_bytes === 2097152 && !("vtcm_mb" in j.graphs[0]) &&
  j.graphs[0].inputs.map(t => t.name).join() === "a,b" &&
  j.graphs[0].outputs[0].name === "y" && j.graphs[0].outputs[0].num_elements === 4 &&
  j.graphs[0].inputs[0].qnn_data_type === 0x232 && typeof j.context_blob_size === "number"'

run info "$TMP/quant.bin" --system-lib reference
expect "info: quantization and two graphs" 0 out "graph 0: quant" out "graph 1: second" \
  out "u8 0x0408" out "i8 0x0308" out "f16 0x0216" out "scale=0.0078125 zero_point=128" \
  out "axis=3 channels=6 scales=[0.5, 0.25, 0.125, 1, ...] zero_points=[0, 1, 2, 3, ...]" \
  out "odd name"

run info "$TMP/quant.bin" --system-lib reference --json
expect "info --json: quantization (grep)" 0 out '"kind": "per_tensor"' out '"zero_point": 128' \
  out '"kind": "per_axis"' out '"scales": [0.5, 0.25, 0.125, 1, 2, 4]' \
  out '"zero_points": [0, 1, 2, 3, 4, 5]' out '"name": "odd name"' \
  out '"qnn_data_type_name": "UFIXED_POINT_8"'
json_check "info --json: quantization parses" '
  j.graphs.length === 2 && j.graphs[1].name === "second" &&
  j.graphs[0].inputs[1].quantization.num_channels === 6 &&
  j.graphs[0].inputs[1].quantization.axis === 3 &&
  j.graphs[0].inputs[0].quantization.scale === 0.0078125 &&
  j.graphs[0].outputs[0].quantization.zero_point === 0'

run info "$TMP/v1.bin" --system-lib reference
expect "info: binary info v1, absent strings" 0 out "binary info version   1" \
  out "2 (SAVER)" out "(none)" out "(unknown)" out "graph info v1"

# a dynamic dimension (NonZero's dims[0]) is shown as its maximum with "<=", and listed in JSON
printf 'graph nz\n  input x f32 [2,3]\n  output idx i32 [6,2] dynamic=[0]\n  op NonZero x -> idx\n' \
  >"$TMP/nz.txt"
$EMU "$REFBUILD" "$TMP/nz.txt" "$TMP/nz.bin" >/dev/null
run info "$TMP/nz.bin" --system-lib reference
expect "info: a dynamic dimension" 0 out "[<=6,2]" out "<=N: a dynamic dimension, at most N"
if grep -qE '^  in +0 +x .*\[2,3\] ' "$TMP/out"; then pass "info: a fixed shape unmarked"
else fail "info: a fixed shape unmarked" "expected x [2,3]"; fi
run info "$TMP/nz.bin" --system-lib reference --json
json_check "info --json: dynamic_dims" '
  j.graphs[0].outputs[0].dynamic_dims.join() === "0" &&
  j.graphs[0].outputs[0].shape.join() === "6,2" && j.graphs[0].inputs[0].dynamic_dims.length === 0'
# a sparse graph input (QnnTypes.h: sparse tensors may only be NATIVE): refused, named
printf 'graph g\n  input a f32 [4] format=sparse\n  output b f32 [4]\n  op Relu a -> b\n' >"$TMP/sp.txt"
$EMU "$REFBUILD" "$TMP/sp.txt" "$TMP/sp.bin" >/dev/null
run info "$TMP/sp.bin" --system-lib reference
expect "info: a sparse graph input is refused" 1 err "HTPU_EMODEL" \
  err "graph 'g' input 'a': data format SPARSE (1), but sparse tensors may only be NATIVE"

# JSON string escaping, through the "file" member: quote, backslash, tab, invalid UTF-8
WEIRD="$TMP/we\"ird\\na	me$(printf '\377').bin"
cp "$TMP/add.bin" "$WEIRD"
run info --json "$WEIRD" --system-lib reference
expect "info --json escapes the path" 0 out 'we\"ird\\na\tme\ufffd.bin'
json_check "info --json with an odd path parses" 'j.file.endsWith("we\"ird\\na\tme\ufffd.bin")'

# errors: exit 1, the message on stderr, nothing on stdout
run info "$TMP/no-such-model.bin" --system-lib reference
expect "info: missing model file -> exit 1" 1 err "no-such-model.bin"
expect_empty "info: missing model file: stdout empty" out

head -c 64 /dev/urandom >"$TMP/corrupt.bin"
run info "$TMP/corrupt.bin" --system-lib reference
expect "info: corrupt model -> exit 1" 1 err "htpu info: HTPU_E"

head -c 40 "$TMP/add.bin" >"$TMP/truncated.bin"
run info "$TMP/truncated.bin" --system-lib reference
expect "info: truncated model -> exit 1" 1 err "htpu info: HTPU_E"

: >"$TMP/empty.bin"
run info "$TMP/empty.bin" --system-lib reference
expect "info: empty file -> exit 1" 1 err "htpu info: HTPU_E"
expect "info: empty file is named empty" 1 err "is empty; expected a QNN context binary"

# A /proc file reports size 0 but has content: it is read to its end and judged on that (here
# not a context binary), never reported as empty.
run info /proc/self/status --system-lib reference
expect "info: a /proc file is read, not taken as empty" 1 err "htpu info: HTPU_EMODEL" \
  err "malformed context binary"
expect_not "info: a /proc file is not 'empty'" err "is empty"

# A system library that reports System API 1.1.0 but lays its answer out as QAIRT 2.13's does
# (48-byte graph infos, 120-byte tensors): refused, naming the library and its version.
HTPU_REF_SYSTEM_PROVIDERS="QAIRT213:1.1.0" HTPU_REF_SYSTEM_LAYOUT=v1only \
  run info "$TMP/quant.bin" --system-lib reference
LAYOUT_ERR="htpu info: HTPU_ESYSTEM_LAYOUT: unsupported system library layout:"
expect "info: system library with older strides -> exit 1" 1 \
  err "$LAYOUT_ERR '$BUILD/libhtpu_refsystem.so' (System API 1.1.0): graph 0 ('quant') input 1"
expect_empty "info: system library with older strides: stdout empty" out
HTPU_REF_SYSTEM_PROVIDERS="QAIRT213:1.1.0" HTPU_REF_SYSTEM_LAYOUT=v1only \
  run info --json "$TMP/quant.bin" --system-lib reference
expect "info --json: system library with older strides -> exit 1" 1 \
  err "unsupported system library layout" err "(System API 1.1.0)"

run info "$TMP/add.bin" --system-lib "$TMP/nonexistent/libQnnSystem.so"
expect "info: nonexistent system library -> exit 1 naming it" 1 \
  err "$TMP/nonexistent/libQnnSystem.so"

run info "$TMP/add.bin" --system-lib "$BUILD/libhtpu_refbackend.so"
expect "info: a backend as system library -> exit 1" 1 err "QnnSystemInterface_getProviders"

run info
expect "info: no MODEL -> exit 2" 2 err "missing MODEL"
run info "$TMP/add.bin" --bogus
expect "info: unknown option -> exit 2" 2 err "unknown option '--bogus'"
run info "$TMP/add.bin" extra
expect "info: extra argument -> exit 2" 2 err "unexpected argument 'extra'"
run info "$TMP/add.bin" --system-lib
expect "info: option without its value -> exit 2" 2 err "needs a value"
run info "$TMP/add.bin" --json --json
expect "info: repeated option -> exit 2" 2 err "more than once"

# ---------------------------------------------------------------------------------------------
# doctor

run doctor --backend reference --system-lib reference
expect "doctor (reference)" 0 out "HTPU_REFERENCE" out "[ ok ] runtime" out "all checks passed" \
  out "libhtpu_refbackend.so" out "HTPU_REFERENCE_SYSTEM" out "core API" out "system API" \
  out "[ ok ] device: QNN device created"
if grep -q '^\[FAIL\]' "$TMP/out"; then fail "doctor (reference): no FAIL lines"; else
  pass "doctor (reference): no FAIL lines"
fi

# the reference backend brings the reference system library unless one is given
run doctor --backend reference
expect "doctor --backend reference without --system-lib" 0 out "[ ok ] system library" \
  out "libhtpu_refsystem.so" out "all checks passed"
run doctor --backend reference --system-lib "$TMP/nonexistent/libQnnSystem.so"
expect "doctor --backend reference --system-lib PATH: PATH is checked" 1 \
  out "$TMP/nonexistent/libQnnSystem.so" out "[FAIL] system library"
# a backend given by path implies nothing: the default system library is checked
if [ -e /usr/lib/libQnnSystem.so ]; then
  echo "skip doctor --backend PATH (/usr/lib/libQnnSystem.so is installed here)"
else
  run doctor --backend "$BUILD/libhtpu_refbackend.so"
  expect "doctor --backend PATH: the default system library" 1 \
    out "/usr/lib/libQnnSystem.so" out "[FAIL] system library"
fi

run doctor --backend=reference --system-lib=reference --json
expect "doctor --json (grep)" 0 out '"schema": "htpu.doctor/2"' out '"ok": true' \
  out '"provider_name": "HTPU_REFERENCE"' out '"name": "runtime"'
json_check "doctor --json parses" '
  j.ok === true && j.failed === 0 &&
  j.steps.find(s => s.name === "runtime").details.provider_name === "HTPU_REFERENCE" &&
  j.steps.every(s => ["ok", "warn", "skip"].includes(s.status))'

run doctor --backend reference --system-lib reference --dsp-library-path "$TMP"
expect "doctor --dsp-library-path sets the environment" 0 out "DSP_LIBRARY_PATH in effect" \
  out "$TMP"

run doctor --backend reference --system-lib reference --dsp-library-path "$TMP/nodir"
expect "doctor: --dsp-library-path not a directory -> exit 1" 1 out "$TMP/nodir"

run doctor --backend "$TMP/nonexistent/libQnnHtp.so" --system-lib reference
expect "doctor: nonexistent backend -> exit 1 naming it" 1 \
  out "$TMP/nonexistent/libQnnHtp.so" out "[FAIL] backend library" err "failed"

run doctor --backend reference --system-lib "$TMP/nonexistent/libQnnSystem.so"
expect "doctor: nonexistent system library -> exit 1 naming it" 1 \
  out "$TMP/nonexistent/libQnnSystem.so" out "[FAIL] system library"

run doctor --backend "$BUILD/libhtpu_refsystem.so" --system-lib reference
expect "doctor: system library as backend -> exit 1" 1 out "QnnInterface_getProviders"

cp "$TMP/corrupt.bin" "$TMP/notalib.so"
run doctor --backend "$TMP/notalib.so" --system-lib reference
expect "doctor: a file that is not a library -> exit 1" 1 out "does not load"

# runtime failures injected into the reference backend
HTPU_REF_PROVIDERS="OLD_REF:6:2.7.0:5.0.0" run doctor --backend reference --system-lib reference
expect "doctor: too old an API -> EVERSION with a hint" 1 out "HTPU_EVERSION" out "hint:"

HTPU_REF_FAULTS="backendCreate:1:4004" run doctor --backend reference --system-lib reference
expect "doctor: backendCreate fails -> exit 1" 1 out "[FAIL] runtime" out "HTPU_EQNN"

# a common code from backendCreate: the skip_device retry fails the same way, so the runtime
# step (not the device step) reports it
HTPU_REF_FAULTS="backendCreate:*:1002" run doctor --backend reference --system-lib reference
expect "doctor: backendCreate fails every time -> runtime FAIL" 1 out "[FAIL] runtime" \
  out "1002"

HTPU_REF_FAULTS="deviceCreate:1:14001" run doctor --backend reference --system-lib reference
expect "doctor: deviceCreate 14001 -> device FAIL with the skel hint" 1 out "[FAIL] device" \
  out "DSP_LIBRARY_PATH"

HTPU_REF_FAULTS="deviceCreate:1:1000" run doctor --backend reference --system-lib reference
expect "doctor: deviceCreate NOT_SUPPORTED -> backend has no device" 0 \
  out "backend has no device"

# "reference" resolution
HTPU_REFERENCE_DIR="$BUILD" run doctor --backend reference --system-lib reference
expect "doctor: HTPU_REFERENCE_DIR = build dir" 0 out "$BUILD/libhtpu_refbackend.so"
HTPU_REFERENCE_DIR="$TMP/elsewhere" run doctor --backend reference --system-lib reference
expect "doctor: HTPU_REFERENCE_DIR is honoured" 1 out "$TMP/elsewhere/libhtpu_refbackend.so"

run doctor extra
expect "doctor: positional argument -> exit 2" 2 err "unexpected argument 'extra'"
run doctor --json=yes
expect "doctor: value for a flag -> exit 2" 2 err "takes no value"

harness_summary
