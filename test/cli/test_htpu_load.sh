#!/usr/bin/env bash
# test_htpu_load.sh BUILD_DIR - end-to-end checks of `htpu load` and `htpu run --stats` against
# the reference libraries: several models in one call, the graphs asked for, the spill-fill
# group, the capabilities switched off (HTPU_REF_CAPS), failures per model. One line per check,
# then "N passed, N failed"; exits non-zero if any check failed.
set -u

EPC="python3 $(cd "$(dirname "$0")/../support" && pwd)/epcontext.py"

. "$(dirname "$0")/harness.sh" "$@" test_htpu_load

LIBS=(--backend reference --system-lib reference)

cat >"$TMP/add.txt" <<'EOF'
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
EOF
cat >"$TMP/two.txt" <<'EOF'
graph g1
input x f32 [4]
output y f32 [4]
op Relu x -> y
graph g2
input x f32 [4]
output y f32 [4]
op Relu x -> y
EOF
# an intermediate of 4 KiB: the graph's spill-fill size
cat >"$TMP/chain.txt" <<'EOF'
graph chain
input x f32 [1,1024]
native t f32 [1,1024]
output y f32 [1,1024]
op Relu x -> t
op Relu t -> y
EOF
for m in add two chain; do
  $EMU "$REFBUILD" "$TMP/$m.txt" "$TMP/$m.bin" || exit 2
done
printf '\000\000\200\077%.0s' $(seq 1024) >"$TMP/x.raw"

# --root: the stand-in named, so nothing is said about HTPU_BOARD_ROOT on stderr
run load add.bin two.bin "${LIBS[@]}" --root "$HTPU_BOARD_ROOT"
expect "two models in one list call" 0 out "2 models in" \
  out "(one contextCreateFromBinaryListAsync call)" out "in one list call with others" \
  out "graphs: 2 loaded"
expect_empty "nothing on stderr" err

run load add.bin two.bin --graph '*' --graph g2 "${LIBS[@]}"
expect "the i-th --graph is the i-th model's" 0 out "two.bin  graph g2" \
  out "graphs: 1 loaded (only those deserialized: ENABLE_GRAPHS)"

HTPU_REF_CAPS=206=1000 run load two.bin --graph g2 "${LIBS[@]}"
expect "without ENABLE_GRAPHS the same graph count, not deserialized alone" 0 \
  out "graphs: 1 loaded"
expect_not "ENABLE_GRAPHS not claimed" out "ENABLE_GRAPHS"

HTPU_REF_CAPS=212=1000 run load add.bin two.bin "${LIBS[@]}"
expect "without the list call, one after another" 0 \
  out "(one after another: the backend announces no list load)" out "graphs: 2 loaded"
expect_not "no list load claimed" out "in one list call"

run load add.bin "${LIBS[@]}"
expect "one model: no list call made, none claimed" 0 \
  out "1 model in" out "(one after another: no list call made)"
expect_not "a single model not said to be list-loaded" out "ListAsync"
run load chain.bin add.bin --share-spill-fill "${LIBS[@]}"
expect "a group's first created alone: the list call counted for the others" 0 \
  out "(1 through one contextCreateFromBinaryListAsync call, 1 alone)"
run load add.bin add.bin --json "${LIBS[@]}"
json_check "--json: how many came up through the list call" \
  'j.list_load === true && j.list_loaded === 2'
run load add.bin --json "${LIBS[@]}"
json_check "--json: a single model, no list call" 'j.list_load === true && j.list_loaded === 0'

run load add.bin --memory-limit 17592186044415 "${LIBS[@]}"
expect "--memory-limit up to 2^44 - 1" 0 out "memory limit hint: 17592186044415 MB (given to QNN)"
for mb in 17592186044416 18446744073709551615 0 -1; do
  run load add.bin --memory-limit "$mb" "${LIBS[@]}"
  expect "--memory-limit $mb is a usage error naming the range" 2 \
    err "option '--memory-limit' wants an integer from 1 to 17592186044415, not '$mb'"
done

run load add.bin --copy --memory-limit 64 "${LIBS[@]}"
expect "--copy and --memory-limit" 0 out "copied: the load asked for a copy" \
  out "memory limit hint: 64 MB (given to QNN)"
HTPU_REF_CAPS=207=1000,208=1000 run load add.bin --memory-limit 64 "${LIBS[@]}"
expect "hint and persistence not announced" 0 \
  out "memory limit hint: 64 MB (not announced by the backend)"
expect_not "QNN not told the binary persists" out "QNN told it persists"

run load chain.bin chain.bin --share-spill-fill "${LIBS[@]}"
expect "--share-spill-fill: a spill-fill group" 0 \
  out "spill-fill: shared by the runtime's contexts" out "spill-fill: 4096 bytes, shared: group"
run load chain.bin chain.bin "${LIBS[@]}"
expect "by default each context its own spill-fill buffer" 0 \
  out "spill-fill: a buffer per context" \
  out "spill-fill: 4096 bytes, its own (spill-fill sharing is off, the default: --share-spill-fill turns it on" \
  out "a buffer per context (spill-fill sharing is off, the default: --share-spill-fill turns it on"
expect_not "no group by default" out "shared: group"
expect_not "the note names htpu's option, not the C one" out "htpu_runtime_options"
run load chain.bin --json "${LIBS[@]}"
json_check "--json: the notes name --share-spill-fill" \
  'j.spill_fill_note.includes("--share-spill-fill turns it on") &&
   j.models[0].load.spill_fill_note.includes("--share-spill-fill turns it on") &&
   !JSON.stringify(j).includes("htpu_runtime_options")' 

run load add.bin two.bin --graph nope "${LIBS[@]}"
expect "a graph the binary lacks fails that model alone" 1 \
  out "failed: HTPU_ENOT_FOUND: " out "holds no graph 'nope' (--graph)" \
  out "graphs: 2 loaded" err "HTPU_ENOT_FOUND: a model did not load"
expect_not "a failed model's message names htpu's option, not the library's" out "graph option"
# an EPContext model of two contexts: one load takes one, which --graph chooses
$EPC "$TMP/both.onnx" --node first --embed "$TMP/add.bin" --node second --embed "$TMP/two.bin"
for g in "" "*"; do
  run load both.onnx ${g:+--graph "$g"} "${LIBS[@]}"
  expect "two contexts${g:+ and --graph '*'}: the report says to choose with --graph" 1 \
    out "holds 2 context binaries; name the graph to load with --graph (context 0 (node 'first'): add_f32; context 1 (node 'second'): g1, g2)"
  expect_not "two contexts${g:+, --graph '*'}: no library option named" out "graph option"
done
run load both.onnx --graph g2 --json "${LIBS[@]}"
json_check "two contexts, --graph: the one holding it loads" \
  'j.models[0].error === null && j.models[0].load.graphs_enabled === 1'
# a message longer than 512 bytes (a model deep in folders) is reported whole, to its end
DEEP=$TMP/$(printf 'folder%03d/' $(seq 60))
mkdir -p "$DEEP" && cp add.bin "$DEEP/add.bin"
run load "$DEEP/add.bin" --graph nope "${LIBS[@]}"
expect "a long failure message is whole" 1 \
  out "failed: HTPU_ENOT_FOUND: loading file '$DEEP/add.bin': the binary holds no graph 'nope' (--graph); it holds 'add_f32'"
run load "$DEEP/add.bin" --graph nope --json "${LIBS[@]}"
json_check "--json: a long failure message is whole" \
  'j.models[0].message.endsWith("it holds '"'"'add_f32'"'"'") && j.models[0].message.length > 600'
run load add.bin missing.bin "${LIBS[@]}"
expect "a missing file fails that model alone" 1 out "failed: HTPU_EIO" out "add.bin"
run load add.bin --graph a --graph b "${LIBS[@]}"
expect "more --graph than models is a usage error" 2 err "2 --graph options for 1 models"
run load "${LIBS[@]}"
expect "no MODEL is a usage error" 2 err "missing MODEL"

run load add.bin two.bin --graph '*' --graph g1 --json "${LIBS[@]}"
expect "--json" 0 out '"schema": "htpu.load/1"' out '"binary": "copied"'
json_check "--json: a list load of two models, their graphs and binaries" \
  'j.list_load === true && j.models.length === 2 && j.models[1].graph === "g1" &&
   j.models[1].load.graphs_enabled === 1 && j.models[1].load.enable_graphs_passed &&
   j.models[0].load.list_loaded && j.binary_bytes_copied > 0 && j.models[0].error === null'
run load add.bin missing.bin --json "${LIBS[@]}"
json_check "--json: a failed model has its error and no load" \
  'j.models[1].error === "HTPU_EIO" && j.models[1].load === null && j.models[0].load.binary'

run run chain.bin --input x=x.raw --stats "${LIBS[@]}"
expect "run --stats says what the load cost" 0 out "load:" \
  out "binary: " out "graphs: 1 loaded" out "spill-fill: 4096 bytes"
run run chain.bin --input x=x.raw "${LIBS[@]}"
expect_not "run without --stats says nothing of the load" out "spill-fill:"
run run chain.bin --input x=x.raw --json "${LIBS[@]}"
json_check "run --json always has the load" \
  'j.load.binary === "copied" && j.load.spill_fill_bytes === 4096 && j.load.graphs_enabled === 1'

# --timeout bounds the runtime's open and the loads together, as for run and bench: an open
# held inside its device creation until well past it (the pause is a floor, never a ceiling)
# leaves no time to load, and the command says so
mkfifo "$TMP/gate"
HTPU_REF_SESSION_LOG=$TMP/budget.log HTPU_REF_HOLD=deviceCreate:$TMP/gate \
  $EMU "$HTPU" load add.bin two.bin "${LIBS[@]}" --npu-lock none --timeout 200 \
  >"$TMP/out" 2>"$TMP/err" &
B=$!
wait_for "budget: the open is inside its device creation" grep -qs "^$B deviceCreate held" \
  "$TMP/budget.log"
sleep 0.3
echo go >"$TMP/gate"
wait $B
RC=$?
expect "budget: an open that took the whole --timeout leaves no time to load" 1 \
  err "htpu load: HTPU_ETIMEDOUT: opening the runtime took" \
  err "of --timeout 200 ms, which bounds the open and the model's load together: no time left to load the models"
check "budget: no context was created" bash -c "! grep -q '^$B contextCreateFromBinary' '$TMP/budget.log'"
# with time left, the loads get the rest and succeed
run load add.bin "${LIBS[@]}" --npu-lock none --timeout 60000
expect "budget: an open with time left loads" 0 out "1 model in"

harness_summary
