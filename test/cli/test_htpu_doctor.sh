#!/usr/bin/env bash
# test_htpu_doctor.sh BUILD_DIR - htpu doctor's steps beyond the basics of test_htpu.sh: the
# backend's provider facts (shown whatever fails later), a runtime without a QNN log, hints
# that name only the QAIRT release the loaded library states, and the board's boot firmware.
#
# The board's side runs on this host through a copy of the reference backend named
# libQnnHtp.so (which turns the board checks on) and HTPU_DOCTOR_ROOT, a directory standing in
# for / when doctor reads /sys/class/dmi/id/bios_version. One line per check, then
# "N passed, N failed"; exits non-zero if any check failed.
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu_doctor

R=(--backend reference --system-lib reference)
QAIRT_225=v2.25.0.240728104910_97711 # the build id form of a real QAIRT library (docs/abi.md)

# ---------------------------------------------------------------------------------------------
# the provider's facts, before any backend exists

run doctor "${R[@]}"
expect "doctor: backend provider step with the library's facts" 0 \
  out "[ ok ] backend provider: HTPU_REFERENCE, backend id 6 (HTP), core API 2.32.0" \
  out "build id       htpu-reference-0.1.0" out "QAIRT release  (the build id does not name it)"
expect_not "doctor: no QAIRT release claimed for the reference build id" out "QAIRT 2."

run doctor "${R[@]}" --json
json_check "doctor --json: backend_provider step right after backend_library" '
  j.steps[1].name === "backend_library" && j.steps[2].name === "backend_provider" &&
  step("backend_provider").status === "ok" &&
  step("backend_provider").details.provider_name === "HTPU_REFERENCE" &&
  step("backend_provider").details.backend_id === 6 &&
  step("backend_provider").details.core_api_version === "2.32.0" &&
  step("backend_provider").details.backend_api_version === "5.42.0" &&
  step("backend_provider").details.build_id === "htpu-reference-0.1.0" &&
  step("backend_provider").details.qairt_version === null &&
  step("runtime").details.log_note === null'

HTPU_REF_BUILD_ID=$QAIRT_225 run doctor "${R[@]}" --json
json_check "doctor --json: a QAIRT build id names its release" '
  step("backend_provider").details.build_id === "v2.25.0.240728104910_97711" &&
  step("backend_provider").details.qairt_version === "2.25.0" &&
  step("backend_provider").message.endsWith("QAIRT 2.25.0")'

# backendCreate fails (here with logCreate too, as where no DSP is reachable): the provider's
# facts are still there, and the runtime's failure carries the log note and the retries
HTPU_REF_FAULTS=logCreate:*:11002,backendCreate:*:4000 HTPU_REF_BUILD_ID=$QAIRT_225 \
  run doctor "${R[@]}"
expect "doctor: backendCreate fails -> provider facts shown, runtime FAIL with the log note" 1 \
  out "[ ok ] backend provider: HTPU_REFERENCE" out "build id       $QAIRT_225" \
  out "QAIRT release  2.25.0" out "[FAIL] runtime: HTPU_EQNN" \
  out "QNN_BACKEND_ERROR_CANNOT_INITIALIZE" out "QNN log unavailable: logCreate returned 11002" \
  out "after 4 attempts"

HTPU_REF_PROVIDERS="OLD_REF:6:2.7.0:5.0.0" run doctor "${R[@]}"
expect "doctor: provider with too old an API -> provider FAIL, runtime not attempted" 1 \
  out "[FAIL] backend provider: HTPU_EVERSION" out "OLD_REF" out "hint:" \
  out "[skip] runtime: not attempted"

run doctor --backend "$TMP/nonexistent/libQnnHtp.so" --system-lib reference
expect "doctor: backend does not load -> provider step skipped" 1 \
  out "[skip] backend provider: not attempted: the backend library does not load"

# ---------------------------------------------------------------------------------------------
# a QNN log that cannot be created is a note, not a failure

HTPU_REF_FAULTS=logCreate:*:11002 run doctor "${R[@]}"
expect "doctor: logCreate fails -> runtime warns with the note, the device is created" 0 \
  out "[warn] runtime: HTPU_REFERENCE, core API 2.32.0, without a QNN log" \
  out "QNN log                     QNN log unavailable: logCreate returned 11002 (QNN_LOG_ERROR_INITIALIZATION" \
  out "[ ok ] device: QNN device created" out "all checks passed (with warnings)"
HTPU_REF_FAULTS=logCreate:*:11002 run doctor "${R[@]}" --json
json_check "doctor --json: runtime log_note" '
  j.ok === true && step("runtime").status === "warn" &&
  step("runtime").details.log_note.startsWith("QNN log unavailable: logCreate returned 11002") &&
  step("device").status === "ok"'

# ---------------------------------------------------------------------------------------------
# the board's side: hints name the loaded library's release, or none

mkdir -p "$TMP/fake" "$TMP/emptydsp"
cp "$BUILD/libhtpu_refbackend.so" "$TMP/fake/libQnnHtp.so"
BOARD=(--backend "$TMP/fake/libQnnHtp.so" --system-lib reference)
# run_board ARGS...: doctor with the board's checks on. This host has no /dev/fastrpc-cdsp and
# no skel, so such a run fails there; these checks compare the output only (RC reset to 0).
run_board() {
  run doctor "${BOARD[@]}" "$@"
  RC=0
}

DSP_LIBRARY_PATH="$TMP/emptydsp" ADSP_LIBRARY_PATH="$TMP/emptydsp" HTPU_REF_BUILD_ID=$QAIRT_225 \
  run_board
expect "doctor (HTP backend): the skel hint names the loaded library's QAIRT release" 0 \
  out "[FAIL] dsp libraries: libQnnHtpV68Skel.so not found" \
  out "The loaded library is QAIRT 2.25.0." out "[ ok ] backend provider"
expect_not "doctor (HTP backend): no fixed QAIRT release in the hints" out "2.42"

DSP_LIBRARY_PATH="$TMP/emptydsp" ADSP_LIBRARY_PATH="$TMP/emptydsp" run_board
expect "doctor (HTP backend): skel hint without a known release" 0 \
  out "the skel of the backend's own QAIRT release"
expect_not "doctor (HTP backend): no release claimed when the build id names none" \
  out "The loaded library is QAIRT"

if [ ! -e /dev/fastrpc-cdsp ]; then
  # the board with its DSP down: the provider's facts come before the failures
  HTPU_REF_BUILD_ID=$QAIRT_225 run doctor "${BOARD[@]}"
  expect "doctor (HTP backend, no DSP): provider facts shown, runtime not attempted" 1 \
    out "[ ok ] backend provider: HTPU_REFERENCE, backend id 6 (HTP), core API 2.32.0, QAIRT 2.25.0" \
    out "[FAIL] fastrpc: no CDSP FastRPC device" out "coldplug waits up to 20 s" \
    out "[skip] runtime: not attempted"
else
  echo "skip doctor (HTP backend, no DSP): this machine has /dev/fastrpc-cdsp"
fi

# ---------------------------------------------------------------------------------------------
# boot firmware (/sys/class/dmi/id/bios_version under HTPU_DOCTOR_ROOT)

FLOOR=6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1
bios() {
  mkdir -p "$TMP/root/sys/class/dmi/id"
  printf '%s\n' "$1" >"$TMP/root/sys/class/dmi/id/bios_version"
}

bios 6.0.250905.BOOT.MXF.1.0.1-00498-KODIAKWP-1
HTPU_DOCTOR_ROOT="$TMP/root" run_board
expect "doctor: boot firmware older than the floor -> warn naming 0x80000600" 0 \
  out "[warn] boot firmware: 6.0.250905.BOOT.MXF.1.0.1-00498-KODIAKWP-1 is older than $FLOOR" \
  out "0x80000600" out "cdsp.mbn"

bios 6.0.260120.BOOT.MXF.1.0.1-00548-KODIAKWP-1
HTPU_DOCTOR_ROOT="$TMP/root" run_board
expect "doctor: same date, older build number -> warn" 0 out "[warn] boot firmware"

bios "$FLOOR"
HTPU_DOCTOR_ROOT="$TMP/root" run_board --json
json_check "doctor --json: boot firmware at the floor is ok" '
  step("firmware").status === "ok" &&
  step("firmware").details.bios_version === "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1" &&
  step("firmware").details.required === "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1"'

bios 6.1.260301.BOOT.MXF.1.0.1-00001-KODIAKWP-1
HTPU_DOCTOR_ROOT="$TMP/root" run_board
expect "doctor: newer boot firmware -> ok" 0 out "[ ok ] boot firmware: 6.1.260301"

bios "American Megatrends 1.2"
HTPU_DOCTOR_ROOT="$TMP/root" run_board
expect "doctor: a BIOS version of another form -> skip, not compared" 0 \
  out "[skip] boot firmware: 'American Megatrends 1.2' is not of the form"

HTPU_DOCTOR_ROOT="$TMP/nowhere" run_board --json
json_check "doctor --json: no DMI -> firmware skipped, bios_version null" '
  step("firmware").status === "skip" && step("firmware").details.bios_version === null &&
  step("firmware").message.includes("/sys/class/dmi/id/bios_version")'

# ---------------------------------------------------------------------------------------------
# the whole board path: the CDSP device node, heap and firmware under HTPU_DOCTOR_ROOT, a skel,
# the stub next to the backend and the FastRPC stand-in the backend opens: the runtime is
# attempted through the HTP backend as on a board (cdsprpcd is not running here: a warning)

mkdir -p "$TMP/board/dev/dma_heap" "$TMP/board/sys/class/dmi/id" "$TMP/dsp"
: >"$TMP/board/dev/fastrpc-cdsp"
: >"$TMP/board/dev/dma_heap/system"
printf '%s\n' "$FLOOR" >"$TMP/board/sys/class/dmi/id/bios_version"
: >"$TMP/dsp/libQnnHtpV68Skel.so"
: >"$TMP/fake/libQnnHtpV68Stub.so"
# the reference backend opens the FastRPC stand-in from its own directory (as libQnnHtp.so
# does libcdsprpc.so)
cp "$BUILD/libhtpu_refcdsprpc.so" "$TMP/fake/"
UP=(--fastrpc-lib "$TMP/fake/libhtpu_refcdsprpc.so")
board_up() {
  HTPU_DOCTOR_ROOT="$TMP/board" DSP_LIBRARY_PATH="$TMP/dsp" ADSP_LIBRARY_PATH="$TMP/dsp" \
    run doctor "${BOARD[@]}" "${UP[@]}" "$@"
}

board_up
expect "doctor (board path): every step passes but cdsprpcd" 0 \
  out "[warn] fastrpc: cdsprpcd is not running" out "is not up yet" \
  out "[ ok ] dsp libraries" out "[ ok ] boot firmware" out "[ ok ] runtime: HTPU_REFERENCE" \
  out "[ ok ] device: QNN device created" out "[ ok ] shared memory: yes" \
  out "all checks passed (with warnings)"

HTPU_REF_RPCMEM_FAIL=1 board_up
expect "doctor (board path): rpcmem_alloc fails -> the heap only needs to be readable" 0 \
  out "[warn] shared memory: no" \
  out "/dev/dma_heap/system, which must be readable by this user (it is;"
expect_not "doctor (board path): the heap need not be writable" out "readable and writable"

# no DSP reachable: logCreate 11002, then backendCreate 4000 on every start-up attempt
HTPU_REF_FAULTS=logCreate:*:11002,backendCreate:*:4000 board_up
expect "doctor (board path): 4000 -> the FastRPC session hint, with the log note" 1 \
  out "[FAIL] runtime: HTPU_EQNN" out "QNN log unavailable: logCreate returned 11002" \
  out "after 4 attempts" out "0x72 in the log means the CDSP or /dev/fastrpc-cdsp is not up yet" \
  out "coldplug.sh waits up to 20 s" out "logCreate failed too"

printf '%s\n' 6.0.250905.BOOT.MXF.1.0.1-00498-KODIAKWP-1 \
  >"$TMP/board/sys/class/dmi/id/bios_version"
HTPU_REF_FAULTS=logCreate:*:11002,backendCreate:*:4000 board_up
expect "doctor (board path): 4000 with old boot firmware -> the hint names 0x80000600" 1 \
  out "[warn] boot firmware" out "[FAIL] runtime" \
  out "0x80000600 in the log means that"

run doctor "${R[@]}"
expect "doctor (reference): boot firmware not applicable" 0 \
  out "[skip] boot firmware: not applicable"

harness_summary
