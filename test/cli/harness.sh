# harness.sh - what the htpu test scripts share; sourced as `. harness.sh BUILD_DIR NAME [FILE...]`.
#
# Sets BUILD, HTPU, REFBUILD, EMU and TMP (the current directory from then on, removed at
# exit), checks that the build has htpu, htpu-refbuild, the reference libraries and any extra
# FILE given, clears the environment the checks must not depend on, and defines the check
# functions. A script ends with `harness_summary`, which prints "N passed, N failed" and sets
# the exit status.

if [ $# -lt 2 ] || [ ! -d "$1" ]; then
  echo "usage: ${0##*/} BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
HARNESS_NAME=$2
shift 2
HTPU="$BUILD/htpu"
REFBUILD="$BUILD/htpu-refbuild"
# HTPU_TEST_EMU: a command put in front of every program a script runs, for a cross build
# tested without binfmt_misc (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu"). Split on spaces.
EMU=${HTPU_TEST_EMU:-}
for f in "$HTPU" "$REFBUILD" "$BUILD/libhtpu_refbackend.so" "$BUILD/libhtpu_refsystem.so" \
  "${@/#/$BUILD/}"; do
  if [ ! -e "$f" ]; then
    echo "missing $f: build first (make BUILD=${BUILD})" >&2
    exit 2
  fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/$HARNESS_NAME.XXXXXX")
# chmod first: a check may leave a read-only directory behind.
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
# A backend may write files into the current directory.
cd "$TMP" || exit 2
# Checks must not depend on the caller's environment.
unset HTPU_REFERENCE_DIR DSP_LIBRARY_PATH ADSP_LIBRARY_PATH HTPU_REF_FAULTS HTPU_REF_PROVIDERS \
  HTPU_REF_DEVICE HTPU_REF_RPCMEM_FAIL HTPU_REF_LATENCY HTPU_REF_SYSTEM_PROVIDERS \
  HTPU_REF_SYSTEM_LAYOUT HTPU_REF_BUILD_ID HTPU_REF_SKIP_OUTPUTS HTPU_REF_SESSION_LOG HTPU_REF_HOLD
# The session commands read the board's /proc and /sys (the NPU users guard, bench's board
# record) under this stand-in of a board where nothing runs (an empty /proc), never this
# machine's, and say so on stderr; checks that need a board, or a quiet stderr, give --root.
mkdir -p "$TMP/board-root/proc"
export HTPU_BOARD_ROOT="$TMP/board-root"
# Sanitizer builds: a leak or UB report fails the run (exit code), and goes to stderr.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL $1"
  shift
  for line in "$@"; do echo "     $line"; done
  echo "     --- stdout:"; sed 's/^/     | /' "$TMP/out" | head -40
  echo "     --- stderr:"; sed 's/^/     | /' "$TMP/err" | head -40
}

# wait_for NAME COMMAND...: polls COMMAND until it succeeds (an event: a line in a file), with
# a generous bound so that a broken build fails instead of hanging.
wait_for() {
  local name=$1 i
  shift
  for ((i = 0; i < 6000; i++)); do
    if "$@"; then return 0; fi
    sleep 0.01
  done
  fail "$name" "never happened: $*"
  return 1
}

# run ARGS...: runs htpu, stdout -> $TMP/out, stderr -> $TMP/err, exit status -> $RC
run() {
  $EMU "$HTPU" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}

# expect NAME RC [out|err PATTERN]... : the last run's exit status and fixed strings in its
# stdout or stderr.
expect() {
  local name=$1 want=$2
  shift 2
  if [ "$RC" -ne "$want" ]; then
    fail "$name" "exit status $RC, expected $want"
    return
  fi
  while [ $# -ge 2 ]; do
    if ! grep -qF -- "$2" "$TMP/$1"; then
      fail "$name" "std$1 lacks: $2"
      return
    fi
    shift 2
  done
  pass "$name"
}

# expect_not NAME out|err PATTERN : the last run's output lacks PATTERN.
expect_not() {
  if grep -qF -- "$3" "$TMP/$2"; then fail "$1" "std$2 should not contain: $3"; else pass "$1"; fi
}

# expect_empty NAME out|err : the last run wrote nothing there.
expect_empty() {
  if [ -s "$TMP/$2" ]; then fail "$1" "std$2 should be empty"; else pass "$1"; fi
}

# check NAME COMMAND...: passes when COMMAND succeeds.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name" "check failed: $*"; fi
}

HAVE_NODE=0
# HTPU_TEST_NODE=0 forces the grep-only path (to test it on machines that have node), and
# says so for each check it leaves out; otherwise a JSON check without node fails: a check
# that quietly does not run proves nothing (Debian: apt-get install nodejs).
[ "${HTPU_TEST_NODE:-1}" != 0 ] && command -v node >/dev/null 2>&1 && HAVE_NODE=1

# json_check NAME SCRIPT: parses $TMP/out with node and evaluates SCRIPT with the document as
# `j` (and `step(name)` for doctor's steps).
json_check() {
  local name=$1 script=$2
  if [ $HAVE_NODE -eq 0 ]; then
    if [ "${HTPU_TEST_NODE:-1}" = 0 ]; then
      echo "skip $name (HTPU_TEST_NODE=0)"
    else
      fail "$name" "node is not installed: the JSON checks need it (Debian: apt-get install nodejs)"
    fi
    return
  fi
  if node -e '
    const fs = require("fs");
    const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const step = (n) => (j.steps || []).find(s => s.name === n);
    const ok = (function (j) { return eval(process.argv[2]); })(j);
    if (!ok) { console.error("assertion false: " + process.argv[2]); process.exit(1); }
  ' "$TMP/out" "$script" 2>"$TMP/node_err"; then
    pass "$name"
  else
    fail "$name" "$(cat "$TMP/node_err")"
  fi
}

harness_summary() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
