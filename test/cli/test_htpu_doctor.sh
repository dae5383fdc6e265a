#!/usr/bin/env bash
# test_htpu_doctor.sh BUILD_DIR - htpu doctor's steps beyond the basics of test_htpu.sh: the
# backend's provider facts (shown whatever fails later), a runtime without a QNN log, hints
# that name only the QAIRT release the loaded library states, the CDSP's remoteproc and the
# board's boot firmware.
#
# The board's side runs on this host through a copy of the reference backend named
# libQnnHtp.so (which turns the board checks on) and --root, a directory standing in for / when
# doctor reads the board's /sys, /proc and /dev: every board run gets a fake tree under $TMP,
# never this machine's. One line per check, then "N passed, N failed"; exits non-zero if any
# check failed.
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu_doctor

# Every doctor run is bounded: a hang (a read of a FIFO, a walk that does not end) fails its
# check with timeout's status 124 instead of stopping the test run. The checks of adversarial
# trees below use a tighter bound of their own (within).
DOCTOR_BOUND=${HTPU_DOCTOR_TEST_BOUND:-120}
run() {
  timeout -k 5 "$DOCTOR_BOUND" $EMU "$HTPU" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}

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

mkdir -p "$TMP/fake" "$TMP/emptydsp" "$TMP/emptyroot"
cp "$BUILD/libhtpu_refbackend.so" "$TMP/fake/libQnnHtp.so"
BOARD=(--backend "$TMP/fake/libQnnHtp.so" --system-lib reference)
# run_board [--root DIR] ARGS...: doctor with the board's checks on, against DIR or an empty
# root. The empty root has no CDSP and no skel, so such a run fails; these checks compare the
# output only (RC reset to 0).
run_board() {
  local root=$TMP/emptyroot
  if [ "${1:-}" = --root ]; then
    root=$2
    shift 2
  fi
  run doctor "${BOARD[@]}" --root "$root" "$@"
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

# the board with its DSP down: the provider's facts come before the failures
HTPU_REF_BUILD_ID=$QAIRT_225 run doctor "${BOARD[@]}" --root "$TMP/emptyroot"
expect "doctor (HTP backend, no DSP): provider facts shown, runtime not attempted" 1 \
  out "[ ok ] backend provider: HTPU_REFERENCE, backend id 6 (HTP), core API 2.32.0, QAIRT 2.25.0" \
  out "[FAIL] fastrpc: no CDSP FastRPC device" out "coldplug waits up to 20 s" \
  out "[skip] runtime: not attempted"

# ---------------------------------------------------------------------------------------------
# the CDSP's remoteproc (/sys/class/remoteproc/*/{name,state,recovery} under --root)

# rproc ROOT DIR NAME STATE [RECOVERY]: a remoteproc in a fake tree
rproc() {
  local d="$1/sys/class/remoteproc/$2"
  mkdir -p "$d"
  printf '%s\n' "$3" >"$d/name"
  printf '%s\n' "$4" >"$d/state"
  if [ $# -ge 5 ]; then printf '%s\n' "$5" >"$d/recovery"; fi
}

rproc "$TMP/rp-up" remoteproc0 adsp running
rproc "$TMP/rp-up" remoteproc1 cdsp running enabled
rproc "$TMP/rp-up" remoteproc2 wpss offline
run_board --root "$TMP/rp-up"
expect "doctor: CDSP remoteproc running -> ok, every remoteproc listed" 0 \
  out "[ ok ] remoteproc: the CDSP (remoteproc1) is running" \
  out "remoteproc0: adsp, running" out "remoteproc2: wpss, offline"
run_board --root "$TMP/rp-up" --json
json_check "doctor --json: remoteproc step after the libraries, with its facts" '
  j.steps[3].name === "system_library" && j.steps[4].name === "remoteproc" &&
  step("remoteproc").status === "ok" && step("remoteproc").details.cdsp === "remoteproc1" &&
  step("remoteproc").details.state === "running" &&
  step("remoteproc").details.recovery === "enabled" &&
  step("remoteproc").details.remoteprocs.length === 3 &&
  step("remoteproc").details.remoteprocs[2].name === "wpss" &&
  step("remoteproc").details.remoteprocs[2].state === "offline"'

rproc "$TMP/rp-off" remoteproc0 adsp running
rproc "$TMP/rp-off" remoteproc1 cdsp offline
HTPU_REF_BUILD_ID=$QAIRT_225 run doctor "${BOARD[@]}" --root "$TMP/rp-off"
expect "doctor: CDSP remoteproc offline -> FAIL with the start command, runtime not attempted" 1 \
  out "[FAIL] remoteproc: the CDSP (remoteproc1) is offline: the NPU is not started" \
  out "echo start > /sys/class/remoteproc/remoteproc1/state" out "cdsp.mbn" \
  out "[skip] runtime: not attempted"
expect_not "doctor: the hint names the board's path, not the fake root" out "echo start > $TMP"

rproc "$TMP/rp-crash" remoteproc1 cdsp crashed disabled
run_board --root "$TMP/rp-crash"
expect "doctor: CDSP remoteproc crashed -> FAIL naming recovery" 0 \
  out "[FAIL] remoteproc: the CDSP (remoteproc1) has crashed" \
  out "echo enabled > /sys/class/remoteproc/remoteproc1/recovery"

rproc "$TMP/rp-norecovery" remoteproc1 cdsp running disabled
run_board --root "$TMP/rp-norecovery"
expect "doctor: CDSP running without crash recovery -> warn" 0 \
  out "[warn] remoteproc: the CDSP (remoteproc1) is running, but its crash recovery is disabled"

rproc "$TMP/rp-none" remoteproc0 adsp running
run_board --root "$TMP/rp-none" --json
json_check "doctor --json: no CDSP among the remoteprocs -> FAIL naming the module" '
  step("remoteproc").status === "fail" && step("remoteproc").details.cdsp === null &&
  step("remoteproc").message.startsWith("none of the 1 remoteproc is the CDSP") &&
  step("remoteproc").hint.includes("qcom_q6v5_pas")'

run_board
expect "doctor: no /sys/class/remoteproc -> FAIL" 0 \
  out "[FAIL] remoteproc: no remoteprocs (/sys/class/remoteproc is missing)"

run doctor "${R[@]}"
expect "doctor (reference): remoteproc skipped, not on a board" 0 \
  out "[skip] remoteproc: not applicable: libhtpu_refbackend.so is not the HTP backend (libQnnHtp.so): not on a board"

# ---------------------------------------------------------------------------------------------
# the CDSP's FastRPC node in /proc/device-tree under --root: compute banks, memory region

# dt ROOT [KIND]: a device tree with the CDSP's FastRPC node (as on sc7280/QCS6490, under the
# remoteproc's glink-edge) and the ADSP's. KIND: region (the node's memory-region names the
# reserved-memory node cdsp-heap@8e000000; the default), none, dangling (it names no node),
# cb-region (the region is on a compute bank), disabled, no-cb
dt() {
  local root=$1 kind=${2:-region} dtb="$1/proc/device-tree"
  local cdsp="$dtb/soc@0/remoteproc@a300000/glink-edge/fastrpc"
  local adsp="$dtb/soc@0/remoteproc@3700000/glink-edge/fastrpc"
  rm -rf "$dtb"
  mkdir -p "$cdsp" "$adsp/compute-cb@3" "$dtb/reserved-memory/cdsp-heap@8e000000"
  printf 'qcom,fastrpc\0' >"$adsp/compatible"
  printf 'adsp\0' >"$adsp/label"
  printf 'qcom,fastrpc-compute-cb\0' >"$adsp/compute-cb@3/compatible"
  printf 'qcom,fastrpc\0' >"$cdsp/compatible"
  printf 'cdsp\0' >"$cdsp/label"
  printf 'fastrpcglink-apps-dsp\0' >"$cdsp/qcom,glink-channels"
  printf '\0\0\0\x2a' >"$dtb/reserved-memory/cdsp-heap@8e000000/phandle"
  if [ "$kind" != no-cb ]; then
    for cb in 1 2 3; do
      mkdir -p "$cdsp/compute-cb@$cb"
      printf 'qcom,fastrpc-compute-cb\0' >"$cdsp/compute-cb@$cb/compatible"
    done
  fi
  case $kind in
    region | disabled) printf '\0\0\0\x2a' >"$cdsp/memory-region" ;;
    dangling) printf '\0\0\0\x07' >"$cdsp/memory-region" ;;
    cb-region) printf '\0\0\0\x2a' >"$cdsp/compute-cb@2/memory-region" ;;
  esac
  if [ "$kind" = disabled ]; then printf 'disabled\0' >"$cdsp/status"; fi
  return 0
}

dt "$TMP/dt"
run_board --root "$TMP/dt"
expect "doctor: CDSP FastRPC node with a memory region -> ok" 0 \
  out "[ ok ] device tree: CDSP FastRPC node with 3 compute banks, memory region cdsp-heap@8e000000" \
  out "/soc@0/remoteproc@a300000/glink-edge/fastrpc"
run_board --root "$TMP/dt" --json
json_check "doctor --json: device_tree right after remoteproc, with its facts" '
  j.steps[4].name === "remoteproc" && j.steps[5].name === "device_tree" &&
  j.steps[6].name === "fastrpc" && step("device_tree").status === "ok" &&
  step("device_tree").details.fastrpc_node === "/soc@0/remoteproc@a300000/glink-edge/fastrpc" &&
  step("device_tree").details.compute_cbs === 3 &&
  step("device_tree").details.memory_region === "cdsp-heap@8e000000"'

dt "$TMP/dt" cb-region
run_board --root "$TMP/dt"
expect "doctor: the memory region on a compute bank -> ok" 0 \
  out "[ ok ] device tree: CDSP FastRPC node with 3 compute banks, memory region cdsp-heap@8e000000"

dt "$TMP/dt" none
run_board --root "$TMP/dt" --json
json_check "doctor --json: no memory-region -> warn naming the Dragon Q6A report" '
  step("device_tree").status === "warn" && step("device_tree").details.memory_region === null &&
  step("device_tree").message === "the CDSP FastRPC node has no memory-region (remote heap)" &&
  step("device_tree").hint.includes("radxa-overlays#522")'

dt "$TMP/dt" dangling
run_board --root "$TMP/dt"
expect "doctor: memory-region naming no node -> warn" 0 \
  out "[warn] device tree: the CDSP FastRPC node's memory-region points at no reserved-memory node"

dt "$TMP/dt" disabled
run_board --root "$TMP/dt"
expect "doctor: CDSP FastRPC node disabled -> FAIL" 0 \
  out "[FAIL] device tree: the CDSP FastRPC node is disabled"

dt "$TMP/dt" no-cb
run_board --root "$TMP/dt"
expect "doctor: no compute banks -> FAIL" 0 \
  out "[FAIL] device tree: the CDSP FastRPC node has no enabled compute context banks"

rm -rf "$TMP/dt/proc/device-tree/soc@0/remoteproc@a300000"
run_board --root "$TMP/dt"
expect "doctor: only the ADSP's FastRPC node -> FAIL" 0 \
  out "[FAIL] device tree: no CDSP FastRPC node in the device tree"

run_board
expect "doctor: no /proc/device-tree -> skip" 0 \
  out "[skip] device tree: /proc/device-tree is not there"

run doctor "${R[@]}"
expect "doctor (reference): device tree skipped, not on a board" 0 \
  out "[skip] device tree: not applicable: libhtpu_refbackend.so is not the HTP backend"

# ---------------------------------------------------------------------------------------------
# boot firmware (/sys/class/dmi/id/bios_version under --root)

FLOOR=6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1
bios() {
  mkdir -p "$TMP/root/sys/class/dmi/id"
  printf '%s\n' "$1" >"$TMP/root/sys/class/dmi/id/bios_version"
}

bios 6.0.250905.BOOT.MXF.1.0.1-00498-KODIAKWP-1
run_board --root "$TMP/root"
expect "doctor: boot firmware older than the floor -> warn naming 0x80000600" 0 \
  out "[warn] boot firmware: 6.0.250905.BOOT.MXF.1.0.1-00498-KODIAKWP-1 is older than $FLOOR" \
  out "0x80000600" out "cdsp.mbn"

bios 6.0.260120.BOOT.MXF.1.0.1-00548-KODIAKWP-1
run_board --root "$TMP/root"
expect "doctor: same date, older build number -> warn" 0 out "[warn] boot firmware"

bios "$FLOOR"
run_board --root "$TMP/root" --json
json_check "doctor --json: boot firmware at the floor is ok" '
  step("firmware").status === "ok" &&
  step("firmware").details.bios_version === "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1" &&
  step("firmware").details.required === "6.0.260120.BOOT.MXF.1.0.1-00549-KODIAKWP-1"'

bios 6.1.260301.BOOT.MXF.1.0.1-00001-KODIAKWP-1
run_board --root "$TMP/root"
expect "doctor: newer boot firmware -> ok" 0 out "[ ok ] boot firmware: 6.1.260301"

bios "American Megatrends 1.2"
run_board --root "$TMP/root"
expect "doctor: a BIOS version of another form -> skip, not compared" 0 \
  out "[skip] boot firmware: 'American Megatrends 1.2' is not of the form"

run_board --root "$TMP/emptyroot" --json
json_check "doctor --json: no DMI -> firmware skipped, bios_version null" '
  step("firmware").status === "skip" && step("firmware").details.bios_version === null &&
  step("firmware").message.includes("/sys/class/dmi/id/bios_version")'

# ---------------------------------------------------------------------------------------------
# the whole board path: a running CDSP, its device node, heap and firmware under --root, a skel,
# the stub next to the backend and the FastRPC stand-in the backend opens: the runtime is
# attempted through the HTP backend as on a board (cdsprpcd is not running here: a warning)

mkdir -p "$TMP/board/dev/dma_heap" "$TMP/board/sys/class/dmi/id" "$TMP/dsp"
: >"$TMP/board/dev/fastrpc-cdsp"
: >"$TMP/board/dev/dma_heap/system"
printf '%s\n' "$FLOOR" >"$TMP/board/sys/class/dmi/id/bios_version"
rproc "$TMP/board" remoteproc0 adsp running
rproc "$TMP/board" remoteproc1 cdsp running enabled
dt "$TMP/board"
# lib_with_id STUB|SKEL ID: the board's stub or skel as a file of bytes with a build id inside
lib_with_id() {
  local f=$TMP/fake/libQnnHtpV68Stub.so
  if [ "$1" = SKEL ]; then f=$TMP/dsp/libQnnHtpV68Skel.so; fi
  printf '\177ELF\2\1\1\0v2.42 is not an id\0QnnHtp\0%s\0rest\0' "$2" >"$f"
}
ID_242=v2.42.0.251225103012_190212
lib_with_id SKEL "$ID_242"
lib_with_id STUB "$ID_242"
# the reference backend opens the FastRPC stand-in from its own directory (as libQnnHtp.so
# does libcdsprpc.so)
cp "$BUILD/libhtpu_refcdsprpc.so" "$TMP/fake/"
UP=(--fastrpc-lib "$TMP/fake/libhtpu_refcdsprpc.so")
# board_at ROOT ARGS...: the whole board path against ROOT; board_up: against $TMP/board
board_at() {
  local root=$1
  shift
  DSP_LIBRARY_PATH="${DSP:-$TMP/dsp}" ADSP_LIBRARY_PATH="${DSP:-$TMP/dsp}" \
    run doctor "${BOARD[@]}" "${UP[@]}" --root "$root" "$@"
}
board_up() { board_at "$TMP/board" "$@"; }

board_up
expect "doctor (board path): every step passes but cdsprpcd" 0 \
  out "[ ok ] remoteproc" out "[ ok ] device tree" \
  out "[warn] fastrpc: cdsprpcd is not running" out "is not up yet" \
  out "[ ok ] dsp libraries" out "[ ok ] stub/skel release: stub and skel are one QAIRT 2.42.0 build" \
  out "[ ok ] boot firmware" out "[ ok ] runtime: HTPU_REFERENCE" \
  out "[ ok ] device: QNN device created" out "[ ok ] shared memory: yes" \
  out "all checks passed (with warnings)"

# from here on the board runs FastRPC's daemon as the real one does: cdsprpcd, started at boot,
# holding the secure CDSP node open for good (it is expected, and no other user of the NPU)
mkdir -p "$TMP/board/proc/612/fd"
printf 'cdsprpcd\n' >"$TMP/board/proc/612/comm"
printf '7f00-7f01 r-xp 0 b3:02 8 /usr/lib/libcdsp_default_listener.so.1\n7f01-7f02 r-xp 0 b3:02 7 /usr/lib/libcdsprpc.so.1\n' \
  >"$TMP/board/proc/612/maps"
ln -s /dev/fastrpc-cdsp-secure "$TMP/board/proc/612/fd/3"
board_up
expect "doctor (board path): cdsprpcd running -> fastrpc ok, npu users ok, the session made" 0 \
  out "[ ok ] fastrpc: CDSP device and daemon present" \
  out "[ ok ] npu users: no other process holds /dev/fastrpc-cdsp but FastRPC's daemon (cdsprpcd), as expected" \
  out "FastRPC daemons         cdsprpcd (pid 612, /dev/fastrpc-cdsp-secure)" \
  out "[ ok ] runtime: HTPU_REFERENCE" out "[ ok ] device: QNN device created" \
  out "all checks passed"
expect_not "doctor (board path): cdsprpcd is no other user" out "other process holds the NPU"

# ---------------------------------------------------------------------------------------------
# the board's heat and clocks, and other users of the NPU (src/board/ under --root)

# zone ROOT N TYPE TEMP [TRIP_TYPE TRIP_TEMP]...: a thermal zone in a fake tree
zone() {
  local d="$1/sys/class/thermal/thermal_zone$2" i=0
  mkdir -p "$d"
  printf '%s\n' "$3" >"$d/type"
  printf '%s\n' "$4" >"$d/temp"
  shift 4
  while [ $# -ge 2 ]; do
    printf '%s\n' "$1" >"$d/trip_point_${i}_type"
    printf '%s\n' "$2" >"$d/trip_point_${i}_temp"
    i=$((i + 1))
    shift 2
  done
}
# policy ROOT N GOVERNOR KHZ CPUS: a cpufreq policy in a fake tree
policy() {
  local d="$1/sys/devices/system/cpu/cpufreq/policy$2"
  mkdir -p "$d"
  printf '%s\n' "$3" >"$d/scaling_governor"
  printf '%s\n' "$4" >"$d/scaling_cur_freq"
  printf '%s\n' "$5" >"$d/related_cpus"
  printf '2400000\n' >"$d/cpuinfo_max_freq"
}

zone "$TMP/board" 0 cpu0-thermal 52000 passive 95000
zone "$TMP/board" 12 nspss0-thermal 61000 hot 90000 critical 110000
zone "$TMP/board" 13 nspss1-thermal 63500 hot 90000 critical 110000
policy "$TMP/board" 0 performance 1804800 "0 1 2 3"
policy "$TMP/board" 4 performance 2400000 "4 5 6"
board_up
expect "doctor (board path): cool NSP, performance governor, nobody else on the NPU" 0 \
  out "[ ok ] npu users: no other process holds /dev/fastrpc-cdsp but FastRPC's daemon" \
  out "[ ok ] cpu governor: performance on all 2 policies" \
  out "policy4 (cpus 4 5 6): performance, 2400 MHz (max 2400)" \
  out "[ ok ] nsp temperature: the NSP is at 63.5 C (nspss1-thermal), below its hot trip point 90.0 C" \
  out "nspss0-thermal (thermal_zone12): 61.0 C, hot trip 90.0 C, critical 110.0 C" \
  out "hottest CPU zone  52.0 C" out "[ ok ] runtime: HTPU_REFERENCE"

# more trip points than a reading lists: the hot and critical ones past them still count, and
# the row says how many were left out
rm -rf "$TMP/board/sys/class/thermal/thermal_zone12"
PASSIVE=()
for i in $(seq 12); do PASSIVE+=(passive "$((95000 + i))"); done
zone "$TMP/board" 12 nspss0-thermal 61000 "${PASSIVE[@]}" hot 90000 critical 110000
board_up
expect "doctor (board path): trip points past the first 12 -> counted, and still the hot trip" 0 \
  out "nspss0-thermal (thermal_zone12): 61.0 C, hot trip 90.0 C, critical 110.0 C (2 trip points past the first 12 not listed)"
rm -rf "$TMP/board/sys/class/thermal/thermal_zone12"
zone "$TMP/board" 12 nspss0-thermal 61000 hot 90000 critical 110000

policy "$TMP/board" 4 schedutil 691200 "4 5 6"
zone "$TMP/board" 13 nspss1-thermal 94200 hot 90000 critical 110000
board_up
expect "doctor (board path): schedutil and a hot NSP -> warnings with the measured reasons" 0 \
  out "[warn] cpu governor: not the performance governor: policy4 (schedutil)" \
  out "the cores sat at 691 MHz and throughput fell from 29 to 21 frames/s" \
  out "echo performance | tee /sys/devices/system/cpu/cpufreq/policy*/scaling_governor" \
  out "[warn] nsp temperature: the NSP is at 94.2 C (nspss1-thermal), at or above its hot trip point 90.0 C" \
  out "22% of throughput"

zone "$TMP/board" 13 nspss1-thermal 87000 hot 90000
mkfifo "$TMP/board/sys/devices/system/cpu/cpufreq/policy0/scaling_governor.fifo"
rm "$TMP/board/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
mv "$TMP/board/sys/devices/system/cpu/cpufreq/policy0/scaling_governor.fifo" \
  "$TMP/board/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
board_up --json
json_check "doctor --json: near the hot trip; a FIFO for a governor is unreadable, not waited on" '
  step("nsp_temperature").status === "warn" &&
  step("nsp_temperature").message.includes("within 5 C of its hot trip point 90.0 C") &&
  step("nsp_temperature").details.zones.length === 2 &&
  step("nsp_temperature").details.zones[1].type === "nspss1-thermal" &&
  step("cpu_governor").status === "warn" &&
  step("cpu_governor").details.policies[0].governor === "" &&
  step("cpu_governor").details.policies[0].cur_mhz === "1804 MHz (max 2400)"'

rm -rf "$TMP/board/sys/class/thermal" "$TMP/board/sys/devices/system/cpu/cpufreq"
board_up
expect "doctor (board path): no thermal zones, no cpufreq -> warnings saying so" 0 \
  out "[warn] cpu governor: no cpufreq policies" \
  out "[warn] nsp temperature: no NSP thermal zone (nspss0-thermal, nspss1-thermal)"

# another process with the FastRPC device open: listed, and no session of doctor's beside it
mkdir -p "$TMP/board/proc/4242/fd"
printf 'beam.smp\n' >"$TMP/board/proc/4242/comm"
printf '7f00-7f01 r-xp 0 b3:02 1 /usr/lib/libQnnHtp.so\n7f01-7f02 r-xp 0 b3:02 2 /usr/lib/libcdsprpc.so\n' \
  >"$TMP/board/proc/4242/maps"
ln -s /dev/fastrpc-cdsp "$TMP/board/proc/4242/fd/31"
board_up
expect "doctor (board path): another NPU user -> warn naming it, runtime not attempted" 0 \
  out "[warn] npu users: 1 other process holds the NPU: pid 4242 (beam.smp)" \
  out "pid 4242 (beam.smp): /dev/fastrpc-cdsp; /usr/lib/libQnnHtp.so /usr/lib/libcdsprpc.so" \
  out "NPU lock                (not read under --root)" \
  out "[skip] runtime: not attempted: another process holds the NPU (npu users); --force"
expect_not "doctor (board path): no device step without a runtime" out "device: QNN device"
board_up --force --json
json_check "doctor --json --force: the runtime is created beside the other user" '
  step("npu_users").status === "warn" &&
  step("npu_users").details.processes.length === 1 &&
  step("npu_users").details.processes[0].pid === "4242" &&
  step("npu_users").details.daemons === "cdsprpcd (pid 612, /dev/fastrpc-cdsp-secure)" &&
  step("npu_users").details.processes[0].libraries === "/usr/lib/libQnnHtp.so /usr/lib/libcdsprpc.so" &&
  step("runtime").status === "ok"'
rm -rf "$TMP/board/proc/4242"

# ---------------------------------------------------------------------------------------------
# stub and skel of one QAIRT release: their build ids, read from the files (QAIRT links the id
# into each library as text, the string backendGetBuildId returns); the ids below have the
# real form but are made up

lib_with_id SKEL "$QAIRT_225"
board_up
expect "doctor (board path): stub 2.42, skel 2.25 -> FAIL, runtime not attempted" 1 \
  out "[FAIL] stub/skel release: the stub is QAIRT 2.42.0, the skel QAIRT 2.25.0: not one release" \
  out "stub build id  $ID_242" out "skel build id  $QAIRT_225" out "14001" \
  out "[skip] runtime: not attempted"

lib_with_id SKEL "$ID_242"
HTPU_REF_BUILD_ID=$QAIRT_225 board_up
expect "doctor (board path): stub and skel 2.42 under a 2.25 backend -> FAIL" 1 \
  out "[FAIL] stub/skel release: the stub and skel are QAIRT 2.42.0, the backend QAIRT 2.25.0"

HTPU_REF_BUILD_ID=$ID_242 board_up
expect "doctor (board path): the backend's release too -> ok, says so" 0 \
  out "[ ok ] stub/skel release: stub and skel are one QAIRT 2.42.0 build, the backend's release"

lib_with_id SKEL v2.42.0.251226090000_190300
board_up
expect "doctor (board path): one release, two builds -> warn" 0 \
  out "[warn] stub/skel release: the stub and skel are both QAIRT 2.42.0, but different builds"

: >"$TMP/dsp/libQnnHtpV68Skel.so"
board_up --json
json_check "doctor --json: a skel without a build id -> warn, skel_build_id null" '
  step("dsp_release").status === "warn" && step("dsp_release").details.skel_build_id === null &&
  step("dsp_release").details.stub_build_id === "v2.42.0.251225103012_190212" &&
  step("dsp_release").message.endsWith("in the skel: cannot tell its release")'

# the id straddles the first 64 KiB read
head -c 65530 /dev/zero >"$TMP/dsp/libQnnHtpV68Skel.so"
printf '%s\0' "$ID_242" >>"$TMP/dsp/libQnnHtpV68Skel.so"
board_up --json
json_check "doctor --json: a build id across a read boundary is found" '
  step("dsp_release").status === "ok" &&
  step("dsp_release").details.skel_build_id === "v2.42.0.251225103012_190212"'

DSP_LIBRARY_PATH="$TMP/emptydsp" ADSP_LIBRARY_PATH="$TMP/emptydsp" run_board --root "$TMP/board"
expect "doctor (HTP backend): no skel -> release not compared" 0 \
  out "[skip] stub/skel release: not compared: the skel was not found"

run doctor "${R[@]}"
expect "doctor (reference): stub/skel release skipped, not on a board" 0 \
  out "[skip] stub/skel release: not applicable: libhtpu_refbackend.so is not the HTP backend"

lib_with_id SKEL "$ID_242"

# ---------------------------------------------------------------------------------------------
# a second QNN set on LD_LIBRARY_PATH (ONNX Runtime's /usr/lib/onnxruntime-qnn on the image)

ORT=$TMP/usr/lib/onnxruntime-qnn
mkdir -p "$ORT" "$TMP/sysonly"
: >"$ORT/libQnnHtp.so"
: >"$ORT/libQnnSystem.so"
: >"$ORT/libQnnHtpV68Stub.so"
: >"$TMP/sysonly/libQnnSystem.so"

LD_LIBRARY_PATH="$TMP/emptydsp:$ORT" board_up
expect "doctor (board path): ONNX Runtime's stub on LD_LIBRARY_PATH -> FAIL, runtime not attempted" 1 \
  out "[FAIL] library path: libQnnHtpV68Stub.so in $ORT (LD_LIBRARY_PATH) shadows the one next to $TMP/fake/libQnnHtp.so" \
  out "(ONNX Runtime's)" out "14001" \
  out "$TMP/emptydsp: no QNN libraries" \
  out "$ORT: libQnnHtpV68Stub.so, libQnnHtp.so, libQnnSystem.so" \
  out "[skip] runtime: not attempted"

LD_LIBRARY_PATH="$TMP/fake:$ORT" board_up --json
json_check "doctor --json: the backend's directory first -> the other set is a warning" '
  step("library_path").status === "warn" &&
  step("library_path").message.startsWith("a second QNN set on LD_LIBRARY_PATH") &&
  step("library_path").details.library_path.length === 2 &&
  step("library_path").details.library_path[0].backend_dir === true &&
  step("library_path").details.library_path[1].qnn_libraries.includes("libQnnHtpV68Stub.so")'

LD_LIBRARY_PATH="$TMP/sysonly" board_up
expect "doctor (board path): another libQnnSystem.so on LD_LIBRARY_PATH -> warn" 0 \
  out "[warn] library path: a second QNN set on LD_LIBRARY_PATH: libQnnSystem.so in $TMP/sysonly"

LD_LIBRARY_PATH="$TMP/emptydsp" board_up
expect "doctor (board path): LD_LIBRARY_PATH without QNN libraries -> ok" 0 \
  out "[ ok ] library path: no other QNN set on LD_LIBRARY_PATH"

run doctor "${R[@]}"
expect "doctor (reference): library path skipped, not on a board" 0 \
  out "[skip] library path: not applicable: libhtpu_refbackend.so is not the HTP backend"

# ---------------------------------------------------------------------------------------------
# the board path, continued: shared memory and the runtime's start-up failures

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

# ---------------------------------------------------------------------------------------------
# adversarial trees given with --root: never a hang, never a confident wrong diagnosis

# within SECS ROOT ARGS...: the board path against ROOT, killed after SECS (status 124)
within() {
  local secs=$1 root=$2
  shift 2
  DSP_LIBRARY_PATH="${DSP:-$TMP/dsp}" ADSP_LIBRARY_PATH="${DSP:-$TMP/dsp}" \
    timeout -k 2 "$secs" $EMU "$HTPU" doctor "${BOARD[@]}" "${UP[@]}" --root "$root" "$@" \
    >"$TMP/out" 2>"$TMP/err"
  RC=$?
}

# a copy of the whole board's tree, to spoil one thing of
spoiled() {
  rm -rf "$TMP/$1"
  cp -r "$TMP/board" "$TMP/$1"
}

# FIFOs where the board has regular files: opened without blocking, refused with the cause
spoiled fifo-state
rm "$TMP/fifo-state/sys/class/remoteproc/remoteproc1/state"
mkfifo "$TMP/fifo-state/sys/class/remoteproc/remoteproc1/state"
within 20 "$TMP/fifo-state"
expect "doctor: a FIFO as the CDSP's state -> FAIL naming it, no hang" 1 \
  out "[FAIL] remoteproc: cannot read the CDSP's state: '$TMP/fifo-state/sys/class/remoteproc/remoteproc1/state' is a FIFO (named pipe); expected a regular file" \
  out "--root must be a copy of the board's tree"

spoiled fifo-dt
mkfifo "$TMP/fifo-dt/proc/device-tree/compatible"
within 20 "$TMP/fifo-dt"
expect "doctor: a FIFO as a device-tree property -> FAIL naming it, no hang" 1 \
  out "[FAIL] device tree: not a device tree: '$TMP/fifo-dt/proc/device-tree/compatible' is a FIFO (named pipe)" \
  out "every property in /proc/device-tree is a regular file"

mkdir -p "$TMP/fifodsp"
mkfifo "$TMP/fifodsp/libQnnHtpV68Skel.so"
DSP=$TMP/fifodsp within 20 "$TMP/board"
expect "doctor: a FIFO as the skel -> not a library, no hang" 1 \
  out "[FAIL] dsp libraries: libQnnHtpV68Skel.so not found: $TMP/fifodsp/libQnnHtpV68Skel.so is a FIFO (named pipe), not a library" \
  out "$TMP/fifodsp: libQnnHtpV68Skel.so is a FIFO (named pipe), not a library"

spoiled fifo-misc
mkdir -p "$TMP/fifo-misc/proc/1"
mkfifo "$TMP/fifo-misc/proc/1/comm"
rm "$TMP/fifo-misc/sys/class/dmi/id/bios_version"
mkfifo "$TMP/fifo-misc/sys/class/dmi/id/bios_version"
within 20 "$TMP/fifo-misc"
expect "doctor: FIFOs as a process's comm and the BIOS version -> no hang, the firmware not compared" 0 \
  out "[ ok ] fastrpc: CDSP device and daemon present" \
  out "[skip] boot firmware: cannot read /sys/class/dmi/id/bios_version: '$TMP/fifo-misc/sys/class/dmi/id/bios_version' is a FIFO (named pipe)"

# symbolic links in the device tree are not followed: 10 links to the root (a loop each) made
# the depth-limited walk exponential (minutes); the real /proc/device-tree is itself a link to
# /sys/firmware/devicetree/base, which is followed
spoiled dt-loops
rm -rf "$TMP/dt-loops/proc/device-tree/soc@0/remoteproc@a300000"
for i in 0 1 2 3 4 5 6 7 8 9; do ln -s . "$TMP/dt-loops/proc/device-tree/l$i"; done
within 20 "$TMP/dt-loops"
expect "doctor: links looping in the device tree -> no CDSP node found, at once" 1 \
  out "[FAIL] device tree: no CDSP FastRPC node in the device tree"

spoiled dt-link
mkdir -p "$TMP/dt-link/sys/firmware/devicetree"
mv "$TMP/dt-link/proc/device-tree" "$TMP/dt-link/sys/firmware/devicetree/base"
ln -s ../sys/firmware/devicetree/base "$TMP/dt-link/proc/device-tree"
within 20 "$TMP/dt-link"
expect "doctor: /proc/device-tree as a relative link into sys/ -> read through it" 0 \
  out "[ ok ] device tree: CDSP FastRPC node with 3 compute banks, memory region cdsp-heap@8e000000"

# ---- symbolic links under --root resolve inside the root, as after chroot(DIR): an absolute
# target is taken from DIR, `..` never climbs above it, at most 40 links. Nothing is read from
# this machine in the board's place ("host" files below stand for it: absolute paths under
# $TMP, outside the root).
mkdir -p "$TMP/host"
printf '%s\n' 6.1.261231.BOOT.MXF.1.0.1-09999-HOSTFILE-1 >"$TMP/host/bios_version"

# the link the kernel makes: /proc/device-tree -> /sys/firmware/devicetree/base (absolute)
rm "$TMP/dt-link/proc/device-tree"
ln -s /sys/firmware/devicetree/base "$TMP/dt-link/proc/device-tree"
within 20 "$TMP/dt-link"
expect "doctor: /proc/device-tree -> /sys/firmware/devicetree/base (absolute, as the kernel makes it) -> read inside the root" 0 \
  out "[ ok ] device tree: CDSP FastRPC node with 3 compute banks, memory region cdsp-heap@8e000000" \
  out "/soc@0/remoteproc@a300000/glink-edge/fastrpc"

# the same through `..` past the root and an absolute link inside the tree
rm "$TMP/dt-link/proc/device-tree"
ln -s ../../../../../../../../../sys/firmware/devicetree/base "$TMP/dt-link/proc/device-tree"
mv "$TMP/dt-link/sys/firmware/devicetree/base/reserved-memory" "$TMP/dt-link/rm"
ln -s /../../rm "$TMP/dt-link/sys/firmware/devicetree/base/reserved-memory"
within 20 "$TMP/dt-link"
expect "doctor: .. past the root stays at the root (device tree) -> read inside the root" 0 \
  out "[ ok ] device tree: CDSP FastRPC node with 3 compute banks, memory region cdsp-heap@8e000000"

# a link loop: an absolute link to itself, and two links naming each other
spoiled dt-loop
rm -rf "$TMP/dt-loop/proc/device-tree"
ln -s /proc/device-tree "$TMP/dt-loop/proc/device-tree"
within 20 "$TMP/dt-loop"
expect "doctor: /proc/device-tree an absolute link to itself -> FAIL naming the loop, no hang" 1 \
  out "[FAIL] device tree: cannot read /proc/device-tree: Too many levels of symbolic links"
expect_not "doctor: a link loop is not taken for no device tree" out "is not there"
rm "$TMP/dt-loop/sys/class/remoteproc/remoteproc1/state"
ln -s /sys/class/remoteproc/remoteproc1/state2 "$TMP/dt-loop/sys/class/remoteproc/remoteproc1/state"
ln -s /sys/class/remoteproc/remoteproc1/state "$TMP/dt-loop/sys/class/remoteproc/remoteproc1/state2"
within 20 "$TMP/dt-loop"
expect "doctor: the CDSP's state in a loop of absolute links -> FAIL naming the loop" 1 \
  out "[FAIL] remoteproc: cannot read the CDSP's state: cannot open '$TMP/dt-loop/sys/class/remoteproc/remoteproc1/state': Too many levels of symbolic links"

# remoteprocs as absolute links into the root's sys/devices (the kernel's are relative)
spoiled rp-abs
for i in 0 1; do
  dev=sys/devices/platform/soc@0/rproc$i/remoteproc/remoteproc$i
  mkdir -p "$TMP/rp-abs/${dev%/*}"
  mv "$TMP/rp-abs/sys/class/remoteproc/remoteproc$i" "$TMP/rp-abs/$dev"
  ln -s "/$dev" "$TMP/rp-abs/sys/class/remoteproc/remoteproc$i"
done
within 20 "$TMP/rp-abs"
expect "doctor: remoteprocs as absolute links -> read inside the root, the CDSP found" 0 \
  out "[ ok ] remoteproc: the CDSP (remoteproc1) is running" \
  out "remoteproc0: adsp, running" out "remoteproc1: cdsp, running"
expect_not "doctor: remoteprocs as absolute links -> names read" out "(no name)"

# absolute links and `..` escapes aimed at this machine's files: resolved inside the root
spoiled escape
rm "$TMP/escape/sys/class/dmi/id/bios_version" "$TMP/escape/dev/fastrpc-cdsp"
ln -s "$TMP/host/bios_version" "$TMP/escape/sys/class/dmi/id/bios_version"
ln -s /dev/null "$TMP/escape/dev/fastrpc-cdsp"
within 20 "$TMP/escape"
expect "doctor: absolute links out of the root -> resolved inside it, not there" 1 \
  out "[skip] boot firmware: cannot read /sys/class/dmi/id/bios_version: cannot open '$TMP/escape$TMP/host/bios_version': No such file or directory" \
  out "[FAIL] fastrpc: no CDSP FastRPC device (/dev/fastrpc-cdsp missing)"
expect_not "doctor: an absolute link never reads this machine's file" out "HOSTFILE"
rm "$TMP/escape/sys/class/dmi/id/bios_version"
ln -s "../../../../../../../../../../..$TMP/host/bios_version" \
  "$TMP/escape/sys/class/dmi/id/bios_version"
within 20 "$TMP/escape"
expect "doctor: a relative link climbing past the root -> stays inside it" 1 \
  out "[skip] boot firmware: cannot read /sys/class/dmi/id/bios_version: cannot open '$TMP/escape$TMP/host/bios_version': No such file or directory"
expect_not "doctor: .. past the root never reads this machine's file" out "HOSTFILE"
mkdir -p "$TMP/escape$TMP/host"
printf '%s\n' "$FLOOR" >"$TMP/escape$TMP/host/bios_version"
within 20 "$TMP/escape"
expect "doctor: the link's target inside the root -> the root's file read" 1 \
  out "[ ok ] boot firmware: $FLOOR"

# at most 40 links: 40 absolute links in a row resolve, 41 are a loop
spoiled chain
rm "$TMP/chain/sys/class/dmi/id/bios_version"
mv "$TMP/chain/sys/class/dmi/id" "$TMP/chain/dmi"
ln -s /dmi "$TMP/chain/l0"
for i in $(seq 1 38); do ln -s "/l$((i - 1))" "$TMP/chain/l$i"; done
ln -s /l38 "$TMP/chain/sys/class/dmi/id" # 40th: bios_version itself is in dmi/
printf '%s\n' "$FLOOR" >"$TMP/chain/dmi/bios_version"
ln -s /l38 "$TMP/chain/l39"
within 20 "$TMP/chain"
expect "doctor: 40 absolute links in a row -> resolved inside the root" 0 \
  out "[ ok ] boot firmware: $FLOOR"
rm "$TMP/chain/sys/class/dmi/id"
ln -s /l39 "$TMP/chain/sys/class/dmi/id"
within 20 "$TMP/chain"
expect "doctor: 41 links in a row -> too many, named" 0 \
  out "[skip] boot firmware: cannot read /sys/class/dmi/id/bios_version: cannot open" \
  out "Too many levels of symbolic links"

# --root that is no directory: refused in one line, no check run
within 20 "$TMP/missing-root"
expect "doctor: --root missing -> refused naming it" 2 \
  err "htpu doctor: --root $TMP/missing-root: No such file or directory; expected a directory standing in for /"
expect_not "doctor: --root missing -> no check runs" out "remoteproc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass "doctor: --root missing -> one line" ||
  fail "doctor: --root missing -> one line" "stderr has $(wc -l <"$TMP/err") lines"
: >"$TMP/file-root"
within 20 "$TMP/file-root"
expect "doctor: --root a regular file -> refused naming it" 2 \
  err "htpu doctor: --root $TMP/file-root is a regular file; expected a directory standing in for /"
expect_not "doctor: --root a file -> no check runs" out "remoteproc"
within 20 ""
expect "doctor: --root '' -> refused" 2 err "htpu doctor: --root '': an empty path"

# things of the wrong kind where the board has a device, a library or a property
spoiled dev-dir
rm "$TMP/dev-dir/dev/fastrpc-cdsp"
mkdir "$TMP/dev-dir/dev/fastrpc-cdsp"
within 20 "$TMP/dev-dir"
expect "doctor: /dev/fastrpc-cdsp a directory -> FAIL, not read/write ok" 1 \
  out "[FAIL] fastrpc: /dev/fastrpc-cdsp is a directory, not the CDSP FastRPC device" \
  out "a directory, not a device" out "rm -r /dev/fastrpc-cdsp"
expect_not "doctor: /dev/fastrpc-cdsp a directory -> not read/write" out "read/write"

mkdir -p "$TMP/dirdsp/libQnnHtpV68Skel.so"
DSP=$TMP/dirdsp within 20 "$TMP/board"
expect "doctor: the skel a directory -> FAIL, the dsp libraries do not pass" 1 \
  out "[FAIL] dsp libraries: libQnnHtpV68Skel.so not found: $TMP/dirdsp/libQnnHtpV68Skel.so is a directory, not a library" \
  out "[skip] stub/skel release: not compared: the skel was not found"

spoiled dt-short
printf '\0\0\x2a' >"$TMP/dt-short/proc/device-tree/soc@0/remoteproc@a300000/glink-edge/fastrpc/memory-region"
within 20 "$TMP/dt-short" --json
json_check "doctor --json: a 3-byte memory-region is malformed, not absent" '
  step("device_tree").status === "warn" && step("device_tree").details.memory_region === null &&
  step("device_tree").message ===
    "the CDSP FastRPC node'"'"'s memory-region is malformed: 3 bytes, not a list of 4-byte phandles" &&
  step("device_tree").hint.includes("overlay")'

# a CDSP beyond the first 32 remoteprocs (600 of them; readdir's order is the file system's):
# found, and the list says how many it leaves out
rm -rf "$TMP/rp-many"
rproc "$TMP/rp-many" remoteproc599 cdsp running enabled
mkdir -p "$TMP/rp-many/sys/class/remoteproc/remoteproc"{100..598}
for i in $(seq 100 598); do
  printf 'adsp%s\n' "$i" >"$TMP/rp-many/sys/class/remoteproc/remoteproc$i/name"
  printf 'offline\n' >"$TMP/rp-many/sys/class/remoteproc/remoteproc$i/state"
done
within 20 "$TMP/rp-many" --json
json_check "doctor --json: a CDSP past 32 remoteprocs is found; 32 listed, the rest counted" '
  step("remoteproc").status === "ok" && step("remoteproc").details.cdsp === "remoteproc599" &&
  step("remoteproc").details.remoteprocs.length === 32 &&
  step("remoteproc").details.remoteprocs[0].remoteproc === "remoteproc100" &&
  step("remoteproc").details.remoteprocs_unlisted === "468 more, not listed"'

# a second QNN set through the linker's configuration (/etc/ld.so.conf, and the *.conf files it
# includes), read under --root: searched before /usr/lib through ld.so.cache
spoiled ld
mkdir -p "$TMP/ld/etc/ld.so.conf.d" "$TMP/ld/usr/lib/onnxruntime-qnn" "$TMP/ld/opt/sys" \
  "$TMP/ld/usr/lib/aarch64-linux-gnu"
: >"$TMP/ld/usr/lib/onnxruntime-qnn/libQnnHtpV68Stub.so"
: >"$TMP/ld/usr/lib/onnxruntime-qnn/libQnnHtp.so"
: >"$TMP/ld/opt/sys/libQnnSystem.so"
printf '# the image\ninclude /etc/ld.so.conf.d/*.conf\n' >"$TMP/ld/etc/ld.so.conf"
printf '/usr/lib/aarch64-linux-gnu\n' >"$TMP/ld/etc/ld.so.conf.d/aarch64-linux-gnu.conf"
printf '/usr/lib/onnxruntime-qnn/  # ORT\n' >"$TMP/ld/etc/ld.so.conf.d/zz-ort.conf"
board_at "$TMP/ld"
expect "doctor: ONNX Runtime's stub through /etc/ld.so.conf.d -> FAIL naming the file" 1 \
  out "[FAIL] library path: libQnnHtpV68Stub.so in /usr/lib/onnxruntime-qnn (/etc/ld.so.conf.d/zz-ort.conf) shadows the one next to $TMP/fake/libQnnHtp.so" \
  out "remove /usr/lib/onnxruntime-qnn from /etc/ld.so.conf.d/zz-ort.conf and run ldconfig" \
  out "/usr/lib/aarch64-linux-gnu: no QNN libraries (/etc/ld.so.conf.d/aarch64-linux-gnu.conf)" \
  out "2 directories in 3 files"

# LD_LIBRARY_PATH comes first; a relative include; a loop of includes, a FIFO, a pattern that
# is not DIR/*.conf: bounded, never followed blindly
rm "$TMP/ld/etc/ld.so.conf.d/zz-ort.conf"
printf 'include loop.conf\ninclude /etc/*/x.conf\n/opt/sys=libc6\n' \
  >"$TMP/ld/etc/ld.so.conf.d/loop.conf"
mkfifo "$TMP/ld/etc/ld.so.conf.d/fifo.conf"
within 20 "$TMP/ld" --json
json_check "doctor --json: a system library through an include loop -> warn, bounded" '
  step("library_path").status === "warn" &&
  step("library_path").message ===
    "a second QNN set on the linker'"'"'s path, /etc/ld.so.conf.d/loop.conf: libQnnSystem.so in /opt/sys" &&
  step("library_path").details.ld_so_conf_note.includes("fifo.conf") &&
  step("library_path").details.library_path.some(r => r.dir === "/opt/sys")'
LD_LIBRARY_PATH="$TMP/fake" within 20 "$TMP/ld" --json
json_check "doctor --json: LD_LIBRARY_PATH before the configuration's directories" '
  step("library_path").details.library_path[0].from === "LD_LIBRARY_PATH" &&
  step("library_path").details.library_path[1].from === "/etc/ld.so.conf.d/aarch64-linux-gnu.conf"'

# what the configuration leaves out is named, whatever it is: a FIFO and a directory matched by
# *.conf (a.conf sorts before fifo.conf) both listed; /etc/ld.so.conf as a FIFO is not read, not
# "not there"
mkdir "$TMP/ld/etc/ld.so.conf.d/a.conf"
within 20 "$TMP/ld"
expect "doctor: a directory and a FIFO matched by *.conf -> both left out, named" 0 \
  out "/etc/ld.so.conf.d/a.conf is a directory, not a regular file" \
  out "/etc/ld.so.conf.d/fifo.conf is a FIFO (named pipe), not a regular file" \
  out "include /etc/*/x.conf in /etc/ld.so.conf.d/loop.conf not followed"
rm -r "$TMP/ld/etc/ld.so.conf.d/a.conf"
mv "$TMP/ld/etc/ld.so.conf" "$TMP/ld/etc/ld.so.conf.image"
mkfifo "$TMP/ld/etc/ld.so.conf"
within 20 "$TMP/ld" --json
json_check "doctor --json: /etc/ld.so.conf a FIFO -> named as not a regular file, no hang" '
  step("library_path").details.ld_so_conf ===
    "not read: a FIFO (named pipe), not a regular file" &&
  step("library_path").details.ld_so_conf_note ===
    "/etc/ld.so.conf is a FIFO (named pipe), not a regular file"'

# the configuration through absolute links: read inside the root, never this machine's files
rm "$TMP/ld/etc/ld.so.conf"
printf '/opt/host\n' >"$TMP/host/ld.so.conf"
ln -s "$TMP/host/ld.so.conf" "$TMP/ld/etc/ld.so.conf"
within 20 "$TMP/ld" --json
json_check "doctor --json: /etc/ld.so.conf an absolute link out of the root -> not there" '
  step("library_path").details.ld_so_conf === "not there" &&
  !step("library_path").details.library_path.some(r => r.dir === "/opt/host")'
mkdir -p "$TMP/ld$TMP/host"
ln -s /etc/ld.so.conf.image "$TMP/ld$TMP/host/ld.so.conf"
rm "$TMP/ld/etc/ld.so.conf.d/loop.conf" "$TMP/ld/etc/ld.so.conf.d/fifo.conf"
mv "$TMP/ld/usr/lib/aarch64-linux-gnu" "$TMP/ld/multiarch"
ln -s /multiarch "$TMP/ld/usr/lib/aarch64-linux-gnu"
ln -s /usr/lib/onnxruntime-qnn "$TMP/ld/etc/ld.so.conf.d/zz-ort.conf.d"
printf '/etc/ld.so.conf.d/zz-ort.conf.d/../../../../../../usr/lib/onnxruntime-qnn\n' \
  >"$TMP/ld/etc/ld.so.conf.d/zz-ort.conf"
within 20 "$TMP/ld"
expect "doctor: the configuration through links inside the root -> the root's, ORT's stub found" 1 \
  out "2 directories in 3 files" \
  out "/usr/lib/aarch64-linux-gnu: no QNN libraries (/etc/ld.so.conf.d/aarch64-linux-gnu.conf)" \
  out "[FAIL] library path: libQnnHtpV68Stub.so in /etc/ld.so.conf.d/zz-ort.conf.d/../../../../../../usr/lib/onnxruntime-qnn (/etc/ld.so.conf.d/zz-ort.conf) shadows"

harness_summary
