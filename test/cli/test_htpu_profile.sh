#!/usr/bin/env bash
# test_htpu_profile.sh BUILD_DIR - end-to-end checks of `htpu profile` against the reference
# libraries on models/chain100 (100 named ops): the table, --json, --trace, --html, --qnn-log,
# the levels and every bad input docs/profiling.md lists. The page's check in a real browser
# is `make check-profile-page` (mk/profile.mk).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/harness.sh" "$@" test_htpu_profile
LIBS=(--backend reference --system-lib reference)
$EMU "$REFBUILD" "$ROOT/models/chain100/chain100.txt" chain100.bin >/dev/null ||
  { echo "could not build chain100"; exit 1; }
count() { grep -oF -- "$1" "$2" | wc -l | tr -d ' '; }

# --root: the stand-in named, so nothing is said about HTPU_BOARD_ROOT
run profile chain100.bin "${LIBS[@]}" -n 3 --root "$HTPU_BOARD_ROOT"
expect "table: graph, level, runs" 0 out "graph chain100, level detailed, 3 runs" \
  out "accelerator " out "RPC          host" out "host         convert in" out "total (ops)"
check "table: one row per op (100)" [ "$(grep -cE '^[0-9]+ +(add|relu)_[0-9]{2} ' "$TMP/out")" = 100 ]
expect_empty "table: nothing on stderr" err

run profile chain100.bin "${LIBS[@]}" -n 2 --json
expect "json: schema and ops" 0 out '"schema": "htpu.profile/1"' out '"name": "relu_49"' \
  out '"share_pct"' out '"events": ['
json_check "json: 100 ops, shares sum to 100, the tree's 100 op events" \
  'j.ops.length === 100 && Math.abs(j.ops.reduce((s,o)=>s+o.share_pct,0)-100) < 0.01 &&
   j.events[0].name === "execute" && j.events[0].children.find(c=>c.type===3004).children.length === 100 &&
   j.ops[0].cycles >= j.ops[99].cycles && j.total_events === 207'

run profile chain100.bin "${LIBS[@]}" -n 1 --level basic --json
json_check "basic: no ops, accelerator figures" 'j.ops.length === 0 && j.accel_us >= 0 && j.total_events === 6'
json_check "json: the capabilities the backend announced (the reference's defaults, as HTP's)" \
  'j.capabilities.profiling === true && j.capabilities.extended_events === true &&
   j.capabilities.optrace === true && j.capabilities.continuous === false &&
   j.capabilities.max_events_config === false'
HTPU_REF_CAPS=1404=1000 run profile chain100.bin "${LIBS[@]}" -n 1 --level basic --json
json_check "json: a backend without extended events says so" 'j.capabilities.extended_events === false'
run profile chain100.bin "${LIBS[@]}" -n 1 --level basic
expect "basic table says why no ops and no cycles" 0 out "no per-op events at level basic" \
  out "cycles not reported at this level: HTP gives them at --level detailed"
run profile chain100.bin "${LIBS[@]}" -n 1 --level linting --json
json_check "linting: ops from the critical path" \
  'j.ops.length === 100 && j.events[0].children.some(c => c.name === "critical path cycles")'
json_check "linting, json: per op its wait and overlap cycles, no time" \
  'j.ops.every(o => o.us === null && o.cycles > 0 && typeof o.wait_cycles === "number" &&
   typeof o.overlap_cycles === "number") && j.ops.some(o => o.wait_cycles > 0)'
run profile chain100.bin "${LIBS[@]}" -n 2 --level linting
expect "linting table: the critical path, wait and overlap columns" 0 \
  out "crit. cycles" out "wait" out "overlap" out "(linting: the critical path's cycles per op"
check "linting table: a row per op with its wait figures" \
  [ "$(grep -cE '^[0-9]+ +(add|relu)_[0-9]{2} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' "$TMP/out")" = 100 ]
printf 'meta backend_id=3\ngraph g\n  input x f32 [1,4]\n  output y f32 [1,4]\n  op Relu x -> y name=r\n' > cpu.txt
$EMU "$REFBUILD" cpu.txt cpu.bin >/dev/null
HTPU_REF_PROVIDERS=CPU_REF:3:2.32.0:5.42.0 run profile cpu.bin "${LIBS[@]}" -n 1 --level linting
expect "linting on a backend that is not HTP: refused, naming it" 1 err "HTPU_EUNSUPPORTED" \
  err "profile level linting is HTP's own (QNN level 7001): the backend 'CPU_REF' is backend id 3 (CPU)"
HTPU_REF_PROVIDERS=CPU_REF:3:2.32.0:5.42.0 run profile cpu.bin "${LIBS[@]}" -n 1
expect "the detailed level on that backend still works" 0 out "total (ops)"

run profile chain100.bin "${LIBS[@]}" -n 1 --level optrace
expect "optrace on a binary without optrace data: a note, detailed events" 0 \
  out "note         no optrace data: the binary was not built with optrace" out "relu_49"

run profile chain100.bin "${LIBS[@]}" -n 2 --trace trace.json --html page.html --qnn-log qnn.log
expect "writers: exit 0" 0
check "trace: 100 op spans" [ "$(count '"cat":"op"' trace.json)" = 100 ]
check "trace: host track and NPU track" grep -qF '"NPU (accelerator)"' trace.json
json_check_file() { local f=$1; shift; cp "$f" "$TMP/out"; json_check "$@"; }
json_check_file trace.json "trace: valid JSON with traceEvents" \
  'j.traceEvents.filter(e => e.cat === "op").length === 100'
json_check_file trace.json "trace: the host spans tile the call, no unlabelled hole (profile setup, profile read)" \
  'const h = j.traceEvents.filter(e => e.cat === "host").sort((a, b) => a.ts - b.ts);
   h[0].ts === 0 && h.some(e => e.name === "profile setup") && h.some(e => e.name === "profile read") &&
   h.every((e, i) => i === 0 || Math.abs(h[i - 1].ts + h[i - 1].dur - e.ts) < 0.002)'
check "page: 100 bars, self-contained" \
  bash -c "[ \$(grep -oF '<rect class=\"bar\"' page.html | wc -l) = 100 ] && ! grep -q 'https\\?://' page.html"
check "qnn log: every op through QnnSystemProfile" [ "$(count 'id=relu_' qnn.log)" = 100 ]
# an event of unit object carries the backend's opaque object: its size and file in --json, its
# bytes through QnnSystemProfile as an object (hex of "trace-blob"), not as a number
HTPU_REF_PROFILE_OBJECT=trace-blob run profile chain100.bin "${LIBS[@]}" -n 1 --json --qnn-log obj.log
json_check "json: the object event's size and file" \
  'const o = j.events[0].children.find(c => c.type === 61441);
   o.unit === "object" && o.value === 0 && o.object_bytes === 10 &&
   o.object_file === "htpu-reference-object.bin"'
check "qnn log: the object's bytes" \
  grep -q '61441 5 object=10 file=htpu-reference-object.bin data=74726163652d626c6f62 ts=' obj.log

# bad inputs
run profile chain100.bin "${LIBS[@]}" --level verbose
expect "unknown level: usage error" 2 err "--level 'verbose': expected basic, detailed, linting or optrace"
run profile chain100.bin "${LIBS[@]}" -n 0
expect "-n 0: usage error" 2 err "-n"
run profile chain100.bin "${LIBS[@]}" -n 1 --max-events 30
expect "event cap: truncated" 0 out "truncated at 30 events"
check "event cap: the table says it is partial and gives no shares" \
  bash -c "grep -q '^PARTIAL: the event cap (30' '$TMP/out' && ! grep -qE '[0-9]%\$' '$TMP/out'"
run profile chain100.bin "${LIBS[@]}" -n 1 --max-events 30 --html "$TMP/partial.html"
check "event cap: the page says its bars are partial" \
  grep -q "Ops by [a-z ]*(PARTIAL: the events were cut at the cap" "$TMP/partial.html"
run profile chain100.bin "${LIBS[@]}" -n 1 --level basic --html "$TMP/basic.html"
check "basic: the page says the cycles are not reported, not 0" \
  grep -q "us (cycles not reported at this level)" "$TMP/basic.html"
run profile chain100.bin "${LIBS[@]}" -n 1 --max-events 10
check "event cap 10: the ops read have their time, their cycles not read ('-')" \
  bash -c "grep -qE '^0 +add_00 +[0-9]+ +[0-9]+ +- +- +-\$' '$TMP/out' && grep -q 'total (ops read)' '$TMP/out'"
run profile chain100.bin "${LIBS[@]}" -n 1 --max-events 10 --json
json_check "event cap, json: partial, figures not read and shares are null" \
  'j.partial === true && j.ops.length === 3 && j.ops.every(o => o.share_pct === null && o.cycles === null && o.us > 0)'
run profile chain100.bin "${LIBS[@]}" -n 1 --max-events 1
expect "event cap 1: one event, no ops, said right" 0 out "truncated at 1 event (" \
  out "per-op figures partial: 0 ops read" out "no per-op events read before the event cap of 1"
run profile chain100.bin "${LIBS[@]}" -n 1 --trace /nonexistent-dir/t.json
expect "trace file that cannot be written" 1 err "cannot write '/nonexistent-dir/t.json'"
run profile chain100.bin "${LIBS[@]}" -n 1 --html /nonexistent-dir/p.html
expect "page that cannot be written" 1 err "cannot write '/nonexistent-dir/p.html'"
# where the reports land (src/report_file.h). No real /dev node is written in a way that could
# replace it: /dev/fd/1 (this run's stdout, a file of the harness) cannot be replaced; the full
# device is a node made here as root, /dev/full otherwise; /dev/stdout is tried as nobody.
run profile chain100.bin "${LIBS[@]}" -n 1 --trace /dev/fd/1
expect "trace to /dev/fd/1: the trace, then the table, in stdout" 0 \
  out '"traceEvents"' out "graph chain100, level detailed, 1 run"
check "trace to /dev/fd/1: the trace first" grep -q '^{"displayTimeUnit"' "$TMP/out"
mkfifo fifo
(cat fifo > fifo.out) &
run profile chain100.bin "${LIBS[@]}" -n 1 --trace fifo
wait
expect "trace to a FIFO: written through it" 0
check "trace to a FIFO: the reader got it, the FIFO is still one" \
  bash -c "[ -p fifo ] && [ \$(grep -oF '\"cat\":\"op\"' fifo.out | wc -l) = 100 ]"
if [ "$(id -u)" = 0 ]; then mknod full c 1 7 && FULL=$TMP/full; else FULL=/dev/full; fi
if [ -c "${FULL:-}" ]; then
  run profile chain100.bin "${LIBS[@]}" -n 1 --trace "$FULL"
  expect "trace to a full device: ENOSPC is an error naming it" 1 \
    err "cannot write '$FULL': No space left on device"
  run profile chain100.bin "${LIBS[@]}" -n 1 --html "$FULL"
  expect "page to a full device: an error" 1 err "cannot write '$FULL': No space left on device"
  check "the full device is still a device" [ -c "$FULL" ]
fi
echo old > target.json
ln -s target.json link.json
run profile chain100.bin "${LIBS[@]}" -n 1 --trace link.json --qnn-log link.log
expect "trace through a symlink" 0
check "trace through a symlink: still a link, its target has the trace" \
  bash -c '[ -L link.json ] && grep -q traceEvents target.json'
LONG=$(printf 'n%.0s' $(seq 1 250)).json # 255 characters (NAME_MAX)
LONGQ=q${LONG#n}
run profile chain100.bin "${LIBS[@]}" -n 1 --trace "$LONG" --qnn-log "$LONGQ"
expect "trace and qnn log to 255-character names" 0
check "255-character names: the trace written" grep -q traceEvents "$LONG"
check "255-character names: the qnn log written" grep -q htpu-reference-profile-log "$LONGQ"
mkdir adir
run profile chain100.bin "${LIBS[@]}" -n 1 --trace adir
expect "trace to a directory: an error" 1 err "cannot write 'adir': Is a directory"
check "nothing left behind (no temporary files)" bash -c '! ls -A | grep -q "^\."'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -z "$EMU" ]; then
  NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$TMP" && chmod 644 chain100.bin
  if "${NOBODY[@]}" test -x "$HTPU" -a -r chain100.bin; then
    "${NOBODY[@]}" "$HTPU" profile chain100.bin "${LIBS[@]}" -n 1 --trace /dev/stdout \
      >"$TMP/out" 2>"$TMP/err"
    RC=$?
    expect "trace to /dev/stdout as a normal user" 0 out '"traceEvents"'
    # a writable file in a directory this user cannot write: written in place
    mkdir rodir && echo old > rodir/f.json && echo old > rodir/ro.json
    chmod 666 rodir/f.json && chmod 444 rodir/ro.json && chmod 555 rodir
    "${NOBODY[@]}" "$HTPU" profile chain100.bin "${LIBS[@]}" -n 1 --trace rodir/f.json \
      --qnn-log rodir/f.json >"$TMP/out" 2>"$TMP/err"
    RC=$?
    expect "trace to a writable file in a read-only directory as a normal user" 0
    check "read-only directory: the file written in place, nothing beside it" bash -c '[ "$(ls -A rodir | tr "\n" " ")" = "f.json ro.json " ] &&
      grep -q htpu-reference-profile-log rodir/f.json'
    "${NOBODY[@]}" "$HTPU" profile chain100.bin "${LIBS[@]}" -n 1 --trace rodir/ro.json \
      >"$TMP/out" 2>"$TMP/err"
    RC=$?
    expect "trace to a read-only file in a read-only directory: an error" 1 \
      err "cannot write 'rodir/ro.json': Permission denied"
    chmod 755 rodir
  fi
fi

HTPU_REF_SYSTEM_PROVIDERS=OLD:1.1.0 run profile chain100.bin "${LIBS[@]}" -n 3 --trace q2.json \
  --html q2.html --qnn-log q2.log
expect "qnn log with System API 1.1: refused before the runs" 1 err "HTPU_EUNSUPPORTED" \
  err "(System API 1.1.0) has no QnnSystemProfile serialization" err "nothing was run or written"
expect_empty "qnn log refused: no table" out
check "qnn log refused: no log, trace or page written" \
  bash -c '[ ! -e q2.log ] && [ ! -e q2.json ] && [ ! -e q2.html ]'
# per-op samples are bounded (ops x runs <= 16777216): 168 ops x 100000 runs is refused after
# the first run, not run out of memory (the timeout bounds a build that would try)
{ echo "graph wide"; echo "  input x f32 [1,4]"; for i in $(seq 1 167); do echo "  native t$i f32 [1,4]"; done
  echo "  output y f32 [1,4]"; echo "  op Relu x -> t1 name=r1"
  for i in $(seq 2 167); do echo "  op Relu t$((i - 1)) -> t$i name=r$i"; done
  echo "  op Relu t167 -> y name=r168"; } > wide.txt
$EMU "$REFBUILD" wide.txt wide.bin >/dev/null
timeout 120 $EMU "$HTPU" profile wide.bin "${LIBS[@]}" -n 100000 >"$TMP/out" 2>"$TMP/err"
RC=$?
expect "samples past the cap: a clear error" 1 \
  err "100000 runs of 168 ops make 16800000 per-op samples, past the limit of 16777216" \
  err "-n 99864 at most"
printf 'graph g\n  input x f32 [1,4]\n  output y f32 [1,4]\n  op Relu x -> y name=""\n' > nameless.txt
$EMU "$REFBUILD" nameless.txt nameless.bin >/dev/null
run profile nameless.bin "${LIBS[@]}" -n 1
expect "a binary without op names: numbered, with a note" 0 out "#0" out "no op names"

harness_summary
