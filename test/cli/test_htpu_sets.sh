#!/usr/bin/env bash
# test_htpu_sets.sh BUILD_DIR - QNN sets through the command (docs/board.md, "QNN sets"), with
# the two fake releases of mk/qnnsets.mk: doctor lists them, info says which can load a binary,
# run --qnn uses one (its stub first, its skel's folder as the DSP path), and a binary too new
# for a set names the one that can. Each htpu run is its own process, so one set each.
set -u

EPC="python3 $(cd "$(dirname "$0")/../support" && pwd)/epcontext.py"

. "$(dirname "$0")/harness.sh" "$@" test_htpu_sets

S42="$BUILD/qnnsets/2.42"
S48="$BUILD/qnnsets/2.48"
export HTPU_QNN_SET_PATH="$S42:$S48"

cat >"$TMP/new.txt" <<'TXT'
meta build_id="v2.48.40.260301120000_197354" backend_api=5.48.0 core_api=2.34.0
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
TXT
$EMU "$REFBUILD" "$TMP/new.txt" "$TMP/new.bin" >/dev/null 2>&1
python3 -c "
import struct
open('$TMP/a.f32','wb').write(struct.pack('<4f',1,2,3,4))
open('$TMP/b.f32','wb').write(struct.pack('<4f',10,20,30,40))"

run doctor --backend reference
expect "doctor lists the sets with their releases" 0 \
  out "QNN sets on the image: 2 found, each with its own release's stub and skel" \
  out "qnnsets/2.42: QAIRT 2.42.0, qairt layout, stub and skel of its release" \
  out "qnnsets/2.48: QAIRT 2.48.40, flat layout, stub and skel of its release"
run doctor --backend reference --json
json_check "doctor --json: the sets step" '
  step("qnn_sets").details.sets.length === 2 &&
  step("qnn_sets").details.sets[1].release === "2.48.40" &&
  step("qnn_sets").details.sets[0].consistent === true'
# a set's backend is a libQnnHtp.so: the board checks apply, and this host is no board
run doctor --qnn "$S48"
expect "doctor --qnn: the set's libraries and DSP path are checked" 1 \
  out "QAIRT release  2.48.40" out "flat layout, stub and skel of its release (in use)" \
  out "stub/skel release: stub and skel are one QAIRT 2.48.40 build, the backend's release" \
  out "qnnsets/2.48: libQnnHtpV68Skel.so present"

run info "$TMP/new.bin" --qnn "$S48"
expect "info: which set can load the binary" 0 \
  out "qnnsets/2.42  cannot       the binary was made by QAIRT 2.48.40, newer than this set's 2.42.0" \
  out "qnnsets/2.48  can load it"
run info "$TMP/new.bin" --qnn "$S48" --json
json_check "info --json: the sets' verdicts" '
  j.qnn_sets.length === 2 && j.qnn_sets[0].can_load === false && j.qnn_sets[1].can_load === true'

run run "$TMP/new.bin" --qnn "$S48" --input a="$TMP/a.f32" --input b="$TMP/b.f32" \
  --output-dir "$TMP/o"
expect "run --qnn: the 2.48 set runs the 2.48 binary" 0 out "y: [11, 22, 33, 44]"
run run "$TMP/new.bin" --qnn "$S42" --input a="$TMP/a.f32" --input b="$TMP/b.f32" \
  --output-dir "$TMP/o"
expect "run --qnn: the 2.42 set names the set that can" 1 err "HTPU_EINCOMPATIBLE" \
  err "the QNN set in '$S48' (QAIRT 2.48.40) can load it"
run run "$TMP/new.bin" --backend "$S48/libQnnHtp.so" --system-lib "$S48/libQnnSystem.so" \
  --startup-retries 0 --input a="$TMP/a.f32" --input b="$TMP/b.f32" --output-dir "$TMP/o"
expect "run: the backend alone finds its stub but not the set's skel (14001)" 1 err "14001" \
  err "no libQnnHtpV68Skel.so in DSP_LIBRARY_PATH"
run run "$TMP/new.bin" --qnn "$S48" --backend reference --input a="$TMP/a.f32"
expect "run: --qnn with --backend is a usage error" 2 err "give it without --backend"
run run "$TMP/new.bin" --qnn "$TMP" --input a="$TMP/a.f32"
expect "run: --qnn of a folder that is no set" 1 err "is not a QNN set"

# every command that reads a model takes --qnn: load and detect (session commands), and import,
# which opens no backend and reads the binary with the set's system library
run load "$TMP/new.bin" --qnn "$S48"
expect "load --qnn: the 2.48 set loads the 2.48 binary" 0 out "graphs: 1 loaded"
run load "$TMP/new.bin" --qnn "$S42"
expect "load --qnn: the 2.42 set names the set that can" 1 out "failed: HTPU_EINCOMPATIBLE" \
  out "the QNN set in '$S48' (QAIRT 2.48.40) can load it"
$EPC "$TMP/new_qnn.onnx" --node ctx --embed "$TMP/new.bin"
run import "$TMP/new_qnn.onnx" -o "$TMP/imported.bin" --qnn "$S48"
expect "import --qnn: the set's system library reads the model" 0 out "imported.bin: "
check "import --qnn: byte for byte the binary" cmp -s "$TMP/imported.bin" "$TMP/new.bin"
run import "$TMP/new_qnn.onnx" -o "$TMP/imported.bin" --qnn "$S48" --system-lib reference
expect "import: --qnn with --system-lib is a usage error" 2 err "give it without --backend and --system-lib"
run import "$TMP/new_qnn.onnx" -o "$TMP/imported.bin" --qnn "$TMP"
expect "import: --qnn of a folder that is no set" 1 err "is not a QNN set"
for c in load import detect; do
  run help "$c"
  expect "help $c: --qnn in the usage line and the options" 0 out "--qnn DIR]" out "  --qnn DIR"
done

harness_summary
