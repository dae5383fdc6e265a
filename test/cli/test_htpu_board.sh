#!/usr/bin/env bash
# test_htpu_board.sh BUILD_DIR - the board around htpu's session commands: the guard against
# another process holding the NPU (run, bench, profile; --force), bench's record of the NSP and
# CPU temperatures, governors and frequencies at its start and end, and the NPU lock between two
# real htpu processes: session creation serialised, a timeout naming the holder, the waiting
# line. Order is proven by the reference backend's session log (HTPU_REF_SESSION_LOG) and a
# process held inside a creation (HTPU_REF_HOLD), never by timing. Fake board trees only.
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu_board

LIBS=(--backend reference --system-lib reference)
printf 'graph add_f32\n  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n  op ElementWiseAdd a b -> y\n' >add.txt
$EMU "$REFBUILD" add.txt "$TMP/add.bin" >/dev/null || { echo "cannot build add.bin" >&2; exit 2; }
MODEL=$TMP/add.bin
# Every lock here is the test's own file.
LOCK=$TMP/npu.lock
# How a holder is named: its pid, and its process name (under an emulator the kernel knows the
# emulator's name, not htpu's).
if [ -z "$EMU" ]; then NAMED=" (htpu)"; else NAMED=" ("; fi

# zone ROOT N TYPE TEMP [TRIP_TYPE TRIP_TEMP]... ; policy ROOT N GOVERNOR KHZ CPUS
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
policy() {
  local d="$1/sys/devices/system/cpu/cpufreq/policy$2"
  mkdir -p "$d"
  printf '%s\n' "$3" >"$d/scaling_governor"
  printf '%s\n' "$4" >"$d/scaling_cur_freq"
  printf '%s\n' "$5" >"$d/related_cpus"
}

# ---------------------------------------------------------------------------------------------
# another process holding the NPU: refused, named, unless --force

# daemon ROOT: FastRPC's cdsprpcd as the board runs it (pid 612, started at boot by the
# coldplug script): the secure CDSP node open for good, FastRPC's listener mapped, no QNN
daemon() {
  mkdir -p "$1/proc/612/fd"
  printf 'cdsprpcd\n' >"$1/proc/612/comm"
  printf '5500-5501 r-xp 0 b3:02 9 /usr/bin/cdsprpcd\n7f00-7f01 r-xp 0 b3:02 8 /usr/lib/libcdsp_default_listener.so.1\n7f01-7f02 r-xp 0 b3:02 7 /usr/lib/libcdsprpc.so.1\n' \
    >"$1/proc/612/maps"
  ln -s /dev/fastrpc-cdsp-secure "$1/proc/612/fd/3"
}

# the board at rest: only the daemon holds the device -> every session command runs, silently
DAEMON=$TMP/daemon
daemon "$DAEMON"
run bench "$MODEL" "${LIBS[@]}" -n 3 --root "$DAEMON"
expect "bench: cdsprpcd alone holds the NPU -> not another user, runs" 0 out "whole call"
expect_empty "bench: cdsprpcd alone -> nothing said about it" err

USERS=$TMP/users
daemon "$USERS"
mkdir -p "$USERS/proc/777/fd" "$USERS/proc/778/fd"
printf 'beam.smp\n' >"$USERS/proc/777/comm"
printf '7f00-7f01 r-xp 0 b3:02 1 /usr/lib/libQnnHtp.so\n7f01-7f02 r-xp 0 b3:02 2 /usr/lib/libQnnHtpV68Stub.so\n' \
  >"$USERS/proc/777/maps"
ln -s /dev/fastrpc-cdsp "$USERS/proc/777/fd/12"
ln -s /dev/null "$USERS/proc/778/fd/0"

for cmd in run bench profile; do
  extra=()
  [ $cmd = run ] && extra=(--input "a=$TMP/in.f32" --input "b=$TMP/in.f32")
  head -c 16 /dev/zero >"$TMP/in.f32"
  HTPU_REF_SESSION_LOG=$TMP/guard.log run $cmd "$MODEL" "${LIBS[@]}" "${extra[@]}" --root "$USERS"
  expect "$cmd: another process holds the NPU -> refused, naming it" 1 \
    err "htpu $cmd: 1 other process holds the NPU's FastRPC device open:" \
    err "pid 777 (beam.smp): /dev/fastrpc-cdsp; maps /usr/lib/libQnnHtp.so /usr/lib/libQnnHtpV68Stub.so" \
    err "has coincided with hard resets of this board" err "or pass --force"
  expect_not "$cmd: the daemon beside it is no user" err "cdsprpcd"
  check "$cmd: refused before any QNN session" test ! -e "$TMP/guard.log"
done

run bench "$MODEL" "${LIBS[@]}" -n 3 --root "$USERS" --force
expect "bench --force: runs beside the other user, saying so" 0 \
  err "htpu bench: --force: creating a QNN session beside it anyway" out "whole call"

HTPU_BOARD_ROOT=$USERS run bench "$MODEL" "${LIBS[@]}" -n 3
expect "bench: HTPU_BOARD_ROOT stands for --root, and says so" 1 err "pid 777 (beam.smp)" \
  err "htpu bench: HTPU_BOARD_ROOT=$USERS: the other-NPU-users check and the board's figures read /proc, /dev and /sys under it, not this machine's"

rm "$USERS/proc/777/fd/12"
run bench "$MODEL" "${LIBS[@]}" -n 3 --root "$USERS"
expect "bench: the device closed again -> runs" 0 out "whole call"
expect_empty "bench: nobody on the NPU -> nothing said" err

# a process whose descriptors cannot be listed (another user's): a user may hide there, said
mkdir -p "$USERS/proc/900"
: >"$USERS/proc/900/fd"
run bench "$MODEL" "${LIBS[@]}" -n 3 --root "$USERS"
expect "bench: a process not examined -> runs, saying the guard could not see it" 0 \
  out "whole call" \
  err "htpu bench: 1 process could not be examined (another user's, without privileges): another NPU user among them would not be seen"
rm -rf "$USERS/proc/900"
mkdir -p "$TMP/no-proc"
run bench "$MODEL" "${LIBS[@]}" -n 3 --root "$TMP/no-proc"
expect "bench: no /proc under the root -> runs, saying nothing could be examined" 0 \
  err "htpu bench: could not look for other NPU users: '$TMP/no-proc/proc' cannot be opened"

: >"$TMP/not-a-dir"
run bench "$MODEL" "${LIBS[@]}" --root "$TMP/not-a-dir"
expect "bench --root a file -> usage error naming it" 2 \
  err "htpu bench: --root $TMP/not-a-dir is a regular file; expected a directory standing in for /"
run run "$MODEL" "${LIBS[@]}" --npu-lock relative.lock --input "a=$TMP/in.f32" --input "b=$TMP/in.f32"
expect "run --npu-lock relative -> usage error" 2 \
  err "--npu-lock 'relative.lock': expected an absolute path"

# ---------------------------------------------------------------------------------------------
# bench records the board at the start and the end of its timed run, and says a hot run

HOT=$TMP/hot
zone "$HOT" 0 cpu4-thermal 71000
zone "$HOT" 1 nspss0-thermal 93400 hot 90000 critical 110000
zone "$HOT" 2 nspss1-thermal 92000 hot 90000 critical 110000
policy "$HOT" 0 schedutil 691200 "0 1 2 3"
policy "$HOT" 4 performance 2400000 "4 5 6"
run bench "$MODEL" "${LIBS[@]}" -n 20 --root "$HOT" --json
json_check "bench --json: the board at both ends, hot, the NPU's load" '
  const b = j.board;
  b.hot === true && b.start.nsp_temp_c === 93.4 && b.start.nsp_hot_c === 90 &&
  b.start.nsp_zone === "nspss0-thermal" && b.end.nsp_hot === true && b.end.cpu_temp_c === 71 &&
  b.start.cpufreq.length === 2 && b.start.cpufreq[0].governor === "schedutil" &&
  b.start.cpufreq[0].cur_khz === 691200 && b.end.cpufreq[1].cpus === "4 5 6" &&
  b.npu_busy > 0 && b.npu_busy <= 1 && b.executes_per_s > 0 && b.error === null'
expect "bench: a hot run is said on stderr" 0 \
  err "htpu bench: the run was hot: the NSP (nspss0-thermal) reached 93.4 C, at or above its hot trip point 90.0 C"

COOL=$TMP/cool
zone "$COOL" 0 nspss0-thermal 61000 hot 90000
zone "$COOL" 1 cpu0-thermal 50500
policy "$COOL" 0 performance 1804800 "0 1 2 3"
run bench "$MODEL" "${LIBS[@]}" -n 5 --root "$COOL"
expect "bench: a cool board in the report" 0 \
  out "board start    NSP 61.0 C (nspss0-thermal, hot trip 90.0 C), CPU 50.5 C; policy0 performance 1804 MHz" \
  out "board end      NSP 61.0 C" out "NPU load       NPU busy 0."
expect_not "bench: a cool run is not called hot" err "was hot"

run bench "$MODEL" "${LIBS[@]}" -n 5
expect "bench: a board without zones or cpufreq says so" 0 \
  out "board start    NSP temperature missing, CPU ?; no cpufreq policies"

# ---------------------------------------------------------------------------------------------
# the NPU lock between two htpu processes

mkfifo "$TMP/gate"
# A: holds the lock and stays inside its context creation until the gate is written
HTPU_REF_SESSION_LOG=$TMP/sessions.log HTPU_REF_HOLD=contextCreateFromBinary:$TMP/gate \
  $EMU "$HTPU" bench "$MODEL" "${LIBS[@]}" -n 3 --npu-lock "$LOCK" >"$TMP/a.out" 2>"$TMP/a.err" &
A=$!
wait_for "lock: A is inside its context creation" grep -qs "^$A contextCreateFromBinary held" \
  "$TMP/sessions.log"

# B: bounded by --timeout, it gives up naming A, and never began a session
HTPU_REF_SESSION_LOG=$TMP/b.log run bench "$MODEL" "${LIBS[@]}" -n 3 --npu-lock "$LOCK" \
  --timeout 300
expect "lock: a second htpu waits, then times out naming the holder" 1 \
  err "htpu bench: waiting for the NPU lock, held by pid $A$NAMED" \
  err "HTPU_ETIMEDOUT" err "creating the QNN backend and device: waited" \
  err "for the NPU lock '$LOCK', held by pid $A$NAMED" err "loading file '$MODEL'"
check "lock: the timed-out htpu created nothing" test ! -e "$TMP/b.log"

# C: no timeout of its own: it waits, says so, and creates nothing until A is through
HTPU_REF_SESSION_LOG=$TMP/sessions.log \
  $EMU "$HTPU" bench "$MODEL" "${LIBS[@]}" -n 3 --npu-lock "$LOCK" >"$TMP/c.out" 2>"$TMP/c.err" &
C=$!
wait_for "lock: C says it waits" grep -q "waiting for the NPU lock, held by pid $A" "$TMP/c.err"
check "lock: C began no session while A holds the lock" bash -c "! grep -q '^$C ' '$TMP/sessions.log'"
echo go >"$TMP/gate"
wait $A
RA=$?
wait $C
RC_C=$?
check "lock: A finished" test $RA -eq 0
check "lock: C finished after it" test $RC_C -eq 0
a_done=$(grep -n "^$A contextCreateFromBinary resumed" "$TMP/sessions.log" | cut -d: -f1)
c_first=$(grep -n "^$C " "$TMP/sessions.log" | head -1 | cut -d: -f1)
check "lock: C's first creation (backendCreate) came after A's context creation ended" \
  test -n "$a_done" -a -n "$c_first" -a "${c_first:-0}" -gt "${a_done:-0}"
check "lock: C began with backendCreate" grep -q "^$C backendCreate begin" "$TMP/sessions.log"

# 'none': no lock at all, so nothing waits for a holder
HTPU_REF_SESSION_LOG=$TMP/again.log HTPU_REF_HOLD=contextCreateFromBinary:$TMP/gate \
  $EMU "$HTPU" bench "$MODEL" "${LIBS[@]}" -n 1 --npu-lock "$LOCK" >/dev/null 2>&1 &
A=$!
wait_for "lock: A holds it again" grep -qs "^$A contextCreateFromBinary held" "$TMP/again.log"
run bench "$MODEL" "${LIBS[@]}" -n 3 --npu-lock none
expect "lock: --npu-lock none never waits" 0 out "whole call"
expect_not "lock: --npu-lock none says no wait" err "waiting for the NPU lock"
echo go >"$TMP/gate"
wait $A

# --timeout bounds the runtime's open and the load together: an open that used it all (held
# inside its device creation until well past it: the pause is a floor, never a ceiling) leaves
# no load behind, and says why
HTPU_REF_SESSION_LOG=$TMP/budget.log HTPU_REF_HOLD=deviceCreate:$TMP/gate \
  $EMU "$HTPU" bench "$MODEL" "${LIBS[@]}" -n 1 --npu-lock none --timeout 200 \
  >"$TMP/out" 2>"$TMP/err" &
B=$!
wait_for "budget: the open is inside its device creation" grep -qs "^$B deviceCreate held" \
  "$TMP/budget.log"
sleep 0.3
echo go >"$TMP/gate"
wait $B
RC=$?
expect "budget: an open that took the whole --timeout leaves no time to load" 1 \
  err "htpu bench: HTPU_ETIMEDOUT: opening the runtime took" \
  err "of --timeout 200 ms, which bounds the open and the model's load together: no time left to load $MODEL"
check "budget: no context was created" bash -c "! grep -q '^$B contextCreateFromBinary' '$TMP/budget.log'"

harness_summary
