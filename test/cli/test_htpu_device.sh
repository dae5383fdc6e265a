#!/usr/bin/env bash
# test_htpu_device.sh BUILD_DIR - end-to-end checks of the htpu command's HTP device features
# against the reference libraries: shared (zero-copy) buffers in bench and run, --fastrpc-lib,
# the device's side in doctor (arch, SoC model, VTCM, perf infrastructure, shared memory,
# start-up attempts), performance profiles, the compatibility preflight, start-up and recovery
# retries.
#
# One line per check, then "N passed, N failed"; exits non-zero if any check failed. JSON is
# checked with node when it is installed, otherwise with grep on known keys only.
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu_device libhtpu_refcdsprpc.so

R=(--backend reference --system-lib reference)

# ---------------------------------------------------------------------------------------------
# models

cat >"$TMP/add.txt" <<'EOF'
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
EOF
cat >"$TMP/quant.txt" <<'EOF'
graph quant
input x u8 [1,2,2,6] scale=0.0078125 zero_point=128
input w i8 [1,2,2,6] axis=3 scales=[0.5,0.25,0.125,1,2,4] zero_points=[0,1,2,3,4,5]
output y u8 [1,2,2,6] scale=0.015625 zero_point=0
op ElementWiseAdd x w -> y
EOF
# the compatibility preflight: a binary for another DSP arch
{ echo "meta dsp_arch=73"; cat "$TMP/add.txt"; } >"$TMP/v73.txt"
# VTCM: 8 MB as real binaries carry it (bytes), the same in the MB form, 16 MB, 1.5 MB
{ echo "meta vtcm_bytes=8388608"; cat "$TMP/add.txt"; } >"$TMP/vtcm8.txt"
{ echo "meta vtcm_bytes=8388608 vtcm_blob_unit=mb"; cat "$TMP/add.txt"; } >"$TMP/vtcm8mb.txt"
{ echo "meta vtcm_bytes=16777216"; cat "$TMP/add.txt"; } >"$TMP/vtcm16.txt"
{ echo "meta vtcm_bytes=1572864"; cat "$TMP/add.txt"; } >"$TMP/vtcm1_5.txt"
for m in add quant v73 vtcm8 vtcm8mb vtcm16 vtcm1_5; do
  if $EMU "$REFBUILD" "$TMP/$m.txt" "$TMP/$m.bin" >"$TMP/out" 2>"$TMP/err" &&
    [ -s "$TMP/$m.bin" ]; then
    pass "htpu-refbuild makes $m.bin"
  else
    RC=1
    fail "htpu-refbuild makes $m.bin"
  fi
done

# f32 input files: 1.0 2.0 3.0 4.0 (little-endian), and 24 values for the quant graph
printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100' >"$TMP/a.raw"
printf '\000\000\000\277\000\000\040\100\315\314\314\075\000\000\300\300' >"$TMP/b.raw"
: >"$TMP/x.raw"
: >"$TMP/w.raw"
for i in 1 2 3 4 5 6; do
  # 0.25 -0.5 0.75 -1.0 (x) and 1.5 -2.0 0.125 3.0 (w), six times each
  printf '\000\000\200\076\000\000\000\277\000\000\100\077\000\000\200\277' >>"$TMP/x.raw"
  printf '\000\000\300\077\000\000\000\300\000\000\000\076\000\000\100\100' >>"$TMP/w.raw"
done

# ---------------------------------------------------------------------------------------------
# bench --shared-buffers

run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers --fastrpc-lib reference -n 20
expect "bench --shared-buffers --fastrpc-lib reference: FastRPC memory" 0 \
  out "shared I/O     yes: FastRPC shared memory, 3 tensors registered" \
  out "converted once into the shared buffer"
run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers --fastrpc-lib reference -n 20 --json
expect "bench --shared-buffers --json (grep)" 0 out '"shared_buffers": {' \
  out '"requested": true' out '"fastrpc": true' out '"note": null' out '"registrations": 3' \
  out '"quantize_mean_ns": 0' out '"dequantize_mean_ns": 0' out 'libhtpu_refcdsprpc.so'
json_check "bench --shared-buffers --json parses" '
  j.schema === "htpu.bench/1" && j.shared_buffers.requested === true &&
  j.shared_buffers.fastrpc === true && j.shared_buffers.note === null &&
  j.shared_buffers.registrations === 3 && j.inputs[0].dtype === "u8" &&
  j.inputs[1].dtype === "i8" && j.iterations === 20'

run bench "$TMP/quant.bin" "${R[@]}" --zero-copy --fastrpc-lib reference -n 5 --json
expect "bench --zero-copy = --shared-buffers" 0 out '"fastrpc": true'

# without a FastRPC library the library falls back to ordinary memory and says why (skipped
# where a real libcdsprpc.so is installed)
if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libcdsprpc\.so'; then
  echo "skip bench --shared-buffers without --fastrpc-lib (libcdsprpc.so is installed here)"
else
  run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers -n 5 --json
  expect "bench --shared-buffers without --fastrpc-lib: fallback with note" 0 \
    out '"requested": true' out '"fastrpc": false' out "libcdsprpc.so" \
    out '"fastrpc_lib": "libcdsprpc.so"'
  run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers -n 5
  expect "bench --shared-buffers without --fastrpc-lib: human fallback line" 0 \
    out "requested, fallback to ordinary memory: loading the FastRPC library"
fi

HTPU_REF_RPCMEM_FAIL=1 run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers \
  --fastrpc-lib reference -n 5 --json
expect "bench --shared-buffers, rpcmem_alloc fails: fallback with note" 0 \
  out '"fastrpc": false' out "rpcmem_alloc of" out "using ordinary memory" \
  out '"registrations": 0'
json_check "bench fallback --json parses" '
  j.shared_buffers.requested === true && j.shared_buffers.fastrpc === false &&
  typeof j.shared_buffers.note === "string" && j.shared_buffers.note.includes("rpcmem_alloc")'

run bench "$TMP/quant.bin" "${R[@]}" -n 5 --json
expect "bench without --shared-buffers: requested false" 0 out '"requested": false' \
  out '"fastrpc": false' out '"note": null'

run bench "$TMP/quant.bin" "${R[@]}" -n 5
expect "bench without --shared-buffers: human line" 0 \
  out "no (ordinary buffers, copied on every call)"

# file inputs (f32, quantized once into the shared buffer)
run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers --fastrpc-lib reference -n 5 \
  --input x="$TMP/x.raw" --input w="$TMP/w.raw"
expect "bench --shared-buffers with f32 input files" 0 out "x.raw f32 -> u8, converted once"

run bench "$TMP/quant.bin" "${R[@]}" --fastrpc-lib "$TMP/nonexistent.so" --shared-buffers -n 3
expect "bench --fastrpc-lib PATH that does not load: fallback, not failure" 0 \
  out "nonexistent.so"

# ---------------------------------------------------------------------------------------------
# run --shared-buffers: the same outputs as without

same_outputs() { # NAME DIR1 DIR2 FILE...
  local name=$1 d1=$2 d2=$3
  shift 3
  for f in "$@"; do
    if [ ! -s "$d1/$f" ] || ! cmp -s "$d1/$f" "$d2/$f"; then
      fail "$name" "$d1/$f and $d2/$f differ (or are missing)"
      return
    fi
  done
  pass "$name"
}

for native in "" --native-output; do
  tag=${native:-f32}
  run run "$TMP/quant.bin" "${R[@]}" --input x="$TMP/x.raw" --input w="$TMP/w.raw" \
    --output-dir "$TMP/plain_$tag" $native
  expect "run quant ($tag), ordinary buffers" 0 out "y"
  run run "$TMP/quant.bin" "${R[@]}" --input x="$TMP/x.raw" --input w="$TMP/w.raw" \
    --output-dir "$TMP/shared_$tag" --shared-buffers --fastrpc-lib reference $native
  expect "run quant ($tag) --shared-buffers" 0 \
    out "shared I/O" out "yes: FastRPC shared memory, 3 tensors registered"
  same_outputs "run quant ($tag): outputs identical with and without shared buffers" \
    "$TMP/plain_$tag" "$TMP/shared_$tag" y.npy
done

run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/plain_add"
expect "run add_f32, ordinary buffers" 0 out "y"
HTPU_REF_RPCMEM_FAIL=1 run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/shared_add" --shared-buffers --fastrpc-lib reference \
  --json
expect "run add_f32 --shared-buffers, rpcmem fails: fallback" 0 out '"requested": true' \
  out '"fastrpc": false' out "rpcmem_alloc"
same_outputs "run add_f32: outputs identical with the ordinary-memory fallback" \
  "$TMP/plain_add" "$TMP/shared_add" y.npy
run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/shared_add2" --zero-copy --fastrpc-lib reference --json
expect "run add_f32 --zero-copy --json" 0 out '"fastrpc": true' out '"registrations": 3'
same_outputs "run add_f32: outputs identical with FastRPC shared buffers" \
  "$TMP/plain_add" "$TMP/shared_add2" y.npy

# FastRPC memory allocated but not registered (memRegister fails): passed as ordinary memory,
# and the library's reason is shown, not a null note
HTPU_REF_FAULTS='memRegister:*:1000' run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/shared_add3" --shared-buffers --fastrpc-lib reference
expect "run --shared-buffers, memRegister fails: the library's note" 0 \
  out "yes: FastRPC shared memory, 0 tensors registered: " out "1000"
same_outputs "run add_f32: outputs identical with unregistered FastRPC buffers" \
  "$TMP/plain_add" "$TMP/shared_add3" y.npy
HTPU_REF_FAULTS='memRegister:*:1000' run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/shared_add4" --shared-buffers --fastrpc-lib reference \
  --json
expect "run --shared-buffers --json, memRegister fails: a note" 0 out '"fastrpc": true' \
  out '"registrations": 0' out '"note": "'
json_check "run --shared-buffers --json, memRegister fails: parses" '
  j.shared_buffers.fastrpc === true && j.shared_buffers.registrations === 0 &&
  typeof j.shared_buffers.note === "string" && j.shared_buffers.note.includes("1000")'
HTPU_REF_FAULTS='memRegister:*:1000' run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers \
  --fastrpc-lib reference -n 3
expect "bench --shared-buffers, memRegister fails: the library's note" 0 \
  out "yes: FastRPC shared memory, 0 tensors registered: " out "1000"
HTPU_REF_FAULTS='memRegister:*:1000' run bench "$TMP/quant.bin" "${R[@]}" --shared-buffers \
  --fastrpc-lib reference -n 3 --json
json_check "bench --shared-buffers --json, memRegister fails: a note" '
  j.shared_buffers.fastrpc === true && j.shared_buffers.registrations === 0 &&
  typeof j.shared_buffers.note === "string" && j.shared_buffers.note.includes("1000")'

# ---------------------------------------------------------------------------------------------
# doctor: the device's side

run doctor "${R[@]}"
expect "doctor (reference): device arch, SoC model, VTCM" 0 \
  out "[ ok ] device: QNN device created" out "device arch          v68" \
  out "SoC model            35" out "VTCM                 2 MB" \
  out "perf infrastructure  yes" out "start-up attempts    1"
expect "doctor (reference): board checks skipped, not failed" 0 \
  out "[skip] fastrpc: not applicable" out "[skip] dsp libraries: not applicable" \
  out "[skip] environment: not applicable" out "all checks passed"
expect_not "doctor (reference): no FAIL lines" out "[FAIL]"

run doctor "${R[@]}" --json
expect "doctor --json: device fields (grep)" 0 out '"schema": "htpu.doctor/2"' \
  out '"device_arch": 68' out '"device_soc_model": 35' out '"device_vtcm_bytes": 2097152' \
  out '"has_perf_infrastructure": true' out '"startup_attempts": 1' \
  out '"name": "shared_memory"'
json_check "doctor --json: device step parses" '
  step("device").status === "ok" && step("device").details.device_arch === 68 &&
  step("device").details.device_soc_model === 35 && step("device").details.device_vtcm_bytes === 2097152 &&
  step("device").details.has_perf_infrastructure === true &&
  step("device").details.startup_attempts === 1 &&
  step("fastrpc").status === "skip" && step("dsp_libraries").status === "skip" &&
  step("runtime").details.provider_name === "HTPU_REFERENCE" && j.ok === true'

HTPU_REF_DEVICE=arch=69 run doctor "${R[@]}"
expect "doctor: HTPU_REF_DEVICE=arch=69 -> v69" 0 out "device arch          v69"
HTPU_REF_DEVICE=arch=69,soc_model=93,vtcm_mb=8 run doctor "${R[@]}" --json
expect "doctor --json: HTPU_REF_DEVICE changes arch, SoC, VTCM" 0 out '"device_arch": 69' \
  out '"device_soc_model": 93' out '"device_vtcm_bytes": 8388608'
HTPU_REF_DEVICE=vtcm_bytes=8388608 run doctor "${R[@]}" --json
expect "doctor --json: a device reporting VTCM in bytes reports bytes" 0 out '"device_vtcm_bytes": 8388608,'

run doctor "${R[@]}" --fastrpc-lib reference
expect "doctor --fastrpc-lib reference: shared memory yes" 0 \
  out "[ ok ] fastrpc: --fastrpc-lib loads" \
  out "[ ok ] shared memory: yes: FastRPC shared buffers" out "test allocation        FastRPC memory"
run doctor "${R[@]}" --fastrpc-lib reference --json
json_check "doctor --json: shared_memory step" '
  step("shared_memory").status === "ok" &&
  step("shared_memory").details.has_shared_memory === true &&
  step("shared_memory").details.test_allocation === "FastRPC memory" &&
  step("shared_memory").details.note === null &&
  step("shared_memory").details.fastrpc_lib.endsWith("libhtpu_refcdsprpc.so")'

HTPU_REF_RPCMEM_FAIL=1 run doctor "${R[@]}" --fastrpc-lib reference
expect "doctor: rpcmem_alloc fails -> shared memory warn with the note, exit 0" 0 \
  out "[warn] shared memory: no: shared buffers fall back to ordinary memory" \
  out "rpcmem_alloc of" out "hint:" out "all checks passed (with warnings)"

run doctor "${R[@]}"
expect "doctor without --fastrpc-lib: shared memory skipped" 0 \
  out "[skip] shared memory: not applicable"

run doctor "${R[@]}" --fastrpc-lib "$TMP/nonexistent.so"
expect "doctor --fastrpc-lib that does not load -> fastrpc FAIL, exit 1" 1 \
  out "[FAIL] fastrpc: --fastrpc-lib $TMP/nonexistent.so" out "hint:"

# a start-up failure: the first two deviceCreate calls fail with 14002, the third works
HTPU_REF_FAULTS=deviceCreate:1:14002:2 run doctor "${R[@]}"
expect "doctor: start-up failure injected -> ok after 3 attempts" 0 \
  out "QNN device created after 3 start-up attempts" out "start-up attempts    3" \
  out "all checks passed"
HTPU_REF_FAULTS=deviceCreate:1:14002:2 run doctor "${R[@]}" --json
expect "doctor --json: startup_attempts 3" 0 out '"startup_attempts": 3' out '"ok": true'

# the board's side on this host: a backend named libQnnHtp.so turns the board checks on. The
# host has no /dev/fastrpc-cdsp, so only the listing and the environment checks are compared.
mkdir -p "$TMP/fake" "$TMP/dsp1"
cp "$BUILD/libhtpu_refbackend.so" "$TMP/fake/libQnnHtp.so"
: >"$TMP/dsp1/libQnnHtpV68Skel.so"
DSP_LIBRARY_PATH="$TMP/dsp1;$TMP/nodir" ADSP_LIBRARY_PATH="$TMP/dsp1" \
  run doctor --backend "$TMP/fake/libQnnHtp.so" --system-lib reference
RC_BOARD=$RC
RC=0
expect "doctor (HTP backend): DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH differ -> warn" 0 \
  out "[warn] environment: DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH differ" out "hint:"
expect "doctor (HTP backend): each search directory listed" 0 \
  out "$TMP/dsp1: libQnnHtpV68Skel.so present (DSP_LIBRARY_PATH)" \
  out "$TMP/nodir: no such directory (DSP_LIBRARY_PATH)" out "(fastrpc default)"
if [ -e /dev/fastrpc-cdsp ]; then
  echo "skip doctor (HTP backend): missing /dev/fastrpc-cdsp (this machine has one)"
else
  RC=$RC_BOARD
  expect "doctor (HTP backend): missing /dev/fastrpc-cdsp -> fastrpc FAIL with a hint" 1 \
    out "[FAIL] fastrpc: no CDSP FastRPC device" out "remoteproc"
fi
DSP_LIBRARY_PATH="$TMP/nodir" ADSP_LIBRARY_PATH="$TMP/nodir" \
  run doctor --backend "$TMP/fake/libQnnHtp.so" --system-lib reference --json
RC=0
expect "doctor --json (HTP backend): search_path entries" 0 out '"search_path": [' \
  out '"from": "DSP_LIBRARY_PATH"' out '"exists": false'
json_check "doctor --json (HTP backend): skel missing everywhere" '
  step("environment").status === "ok" &&
  step("dsp_libraries").details.search_path[0].dir.endsWith("/nodir") &&
  step("dsp_libraries").details.search_path.every(d => d.skel === false)'

# ---------------------------------------------------------------------------------------------
# performance profile

run bench "$TMP/add.bin" "${R[@]}" -n 5 --perf-profile burst --json
expect "bench --perf-profile burst applied" 0 out '"requested": "burst"' out '"applied": true'
run bench "$TMP/add.bin" "${R[@]}" -n 5 --perf-profile burst
expect "bench --perf-profile burst: human" 0 out "perf profile   burst"
expect_not "bench --perf-profile burst: no fallback note" out "not available"

# ---------------------------------------------------------------------------------------------
# compatibility preflight

run run "$TMP/v73.bin" "${R[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/v73out"
expect "run: binary for v73 -> exit 1 naming both sides" 1 \
  err "HTPU_EINCOMPATIBLE" err "built for v73, this device is v68"
run bench "$TMP/v73.bin" "${R[@]}" -n 3
expect "bench: binary for v73 -> exit 1" 1 err "built for v73, this device is v68"
HTPU_REF_DEVICE=arch=73 run run "$TMP/v73.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/v73out"
expect "run: the same binary on a v73 device works" 0 out "y"
run info "$TMP/v73.bin" --system-lib reference
expect "info shows the binary's side (DSP arch, SoC model, VTCM)" 0 out "DSP arch              v73" \
  out "SoC model             35" out "VTCM 2 MB" out "build id" out "core API"

# VTCM: bytes in the binary's blob info, MB or bytes from the device; one unit compared
run info "$TMP/vtcm8.bin" --system-lib reference
expect "info: blob info 8388608 shows as VTCM 8 MB" 0 out "1 output, VTCM 8 MB)"
expect_not "info: no byte count read as MB" out "8388608 MB"
run info "$TMP/vtcm8.bin" --system-lib reference --json
expect "info --json: vtcm_bytes 8388608 (8 MB in bytes)" 0 out '"vtcm_bytes": 8388608'
expect_not "info --json: no vtcm_mb key" out '"vtcm_mb"'
json_check "info --json: graphs[0].vtcm_bytes" 'j.graphs[0].vtcm_bytes === 8388608'
run info "$TMP/vtcm8mb.bin" --system-lib reference --json
expect "info --json: the MB form (8) is 8388608 bytes too" 0 out '"vtcm_bytes": 8388608'
run info "$TMP/vtcm1_5.bin" --system-lib reference
expect "info: a VTCM that is not whole MB shows exact bytes" 0 out "VTCM 1572864 bytes)"
for dev in vtcm_mb=8 vtcm_bytes=8388608; do
  for m in vtcm8 vtcm8mb; do
    HTPU_REF_DEVICE=$dev run run "$TMP/$m.bin" "${R[@]}" --input a="$TMP/a.raw" \
      --input b="$TMP/b.raw" --output-dir "$TMP/vtcmout"
    expect "run: $m.bin fits a device reporting $dev" 0 out "y"
  done
  HTPU_REF_DEVICE=$dev run run "$TMP/vtcm16.bin" "${R[@]}" --input a="$TMP/a.raw" \
    --input b="$TMP/b.raw" --output-dir "$TMP/vtcmout"
  expect "run: 16 MB on a device reporting $dev -> exit 1, both sides in MB" 1 \
    err "HTPU_EINCOMPATIBLE" err "graph 'add_f32' needs 16 MB of VTCM, this device has 8 MB"
done

# ---------------------------------------------------------------------------------------------
# start-up and recovery retries

HTPU_REF_FAULTS=deviceCreate:1:14002:2 run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/o" --startup-retries 1
expect "run --startup-retries 1: two start-up failures -> exit 1" 1 \
  err "14002" err "after 2 attempts"
HTPU_REF_FAULTS=deviceCreate:1:14002:2 run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/o" --startup-retries 2
expect "run --startup-retries 2: two start-up failures are retried" 0 out "y"

HTPU_REF_FAULTS=graphExecute:1:1007:1:ssr run run "$TMP/add.bin" "${R[@]}" \
  --input a="$TMP/a.raw" --input b="$TMP/b.raw" --output-dir "$TMP/o"
expect "run: a DSP restart during execute is recovered (default)" 0 out "y: [0.5, 4.5, 3.1, -2]"
HTPU_REF_FAULTS=graphExecute:1:1007:1:ssr run run "$TMP/add.bin" "${R[@]}" \
  --input a="$TMP/a.raw" --input b="$TMP/b.raw" --output-dir "$TMP/o" --recovery-retries 0
expect "run --recovery-retries 0: the restart is reported" 1 err "1007"
HTPU_REF_FAULTS=graphExecute:3:1007:1:ssr run bench "$TMP/add.bin" "${R[@]}" -n 10 \
  --shared-buffers --fastrpc-lib reference --json
expect "bench --shared-buffers survives a DSP restart (buffers re-registered)" 0 \
  out '"fastrpc": true' out '"iterations": 10'

run run "$TMP/add.bin" "${R[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --recovery-retries many
expect "--recovery-retries many -> usage error" 2 \
  err "option '--recovery-retries' wants an integer from 0 to 4294967295, not 'many'"
run bench "$TMP/add.bin" "${R[@]}" --startup-retries -1
expect "--startup-retries -1 -> usage error" 2 \
  err "option '--startup-retries' wants an integer from 0 to 4294967295, not '-1'"
run help bench
expect "help bench lists the new options" 0 out "--shared-buffers" out "--zero-copy" \
  out "--fastrpc-lib" out "--recovery-retries" out "--startup-retries"
run help doctor
expect "help doctor lists --fastrpc-lib and the new steps" 0 out "--fastrpc-lib" \
  out "shared memory"

harness_summary
