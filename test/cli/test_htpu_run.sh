#!/usr/bin/env bash
# test_htpu_run.sh BUILD_DIR - end-to-end checks of `htpu run` and `htpu bench` against the
# reference libraries.
#
# Builds models of each I/O type with BUILD_DIR/htpu-refbuild, writes raw and .npy inputs with
# printf (npy_write below), runs the commands and checks the written .npy files byte-exactly
# (header text, then the values with od). One line per check, then "N passed, N failed"; exits
# non-zero if any check failed. JSON is checked with node when it is installed, otherwise with
# grep and shell arithmetic.
set -u

. "$(dirname "$0")/harness.sh" "$@" test_htpu_run

# Every run uses the reference libraries.
LIBS=(--backend reference --system-lib reference)

# ---------------------------------------------------------------------------------------------
# data helpers (pure shell: printf writes the bytes, od reads them back)

# f32 VALUE...: little-endian IEEE bytes of a few exactly representable values.
f32() {
  local v
  for v in "$@"; do
    case $v in
      0) printf '\000\000\000\000' ;;
      0.25) printf '\000\000\200\076' ;;
      0.5) printf '\000\000\000\077' ;;
      -0.5) printf '\000\000\000\277' ;;
      1) printf '\000\000\200\077' ;;
      -1) printf '\000\000\200\277' ;;
      2) printf '\000\000\000\100' ;;
      -2) printf '\000\000\000\300' ;;
      3) printf '\000\000\100\100' ;;
      -3) printf '\000\000\100\300' ;;
      3.5) printf '\000\000\140\100' ;;
      4) printf '\000\000\200\100' ;;
      10) printf '\000\000\040\101' ;;
      20) printf '\000\000\240\101' ;;
      30) printf '\000\000\360\101' ;;
      40) printf '\000\000\040\102' ;;
      nan) printf '\000\000\300\177' ;;
      *) echo "f32: no bytes for $v" >&2; return 1 ;;
    esac
  done
}

# bytes N...: one byte per decimal value 0..255.
bytes() {
  local v
  for v in "$@"; do printf "\\$(printf %03o "$v")"; done
}

# npy_write FILE DESCR SHAPE [VERSION]: a .npy header (numpy's layout: dict padded with spaces
# to a multiple of 64 bytes, ending in '\n') followed by stdin. SHAPE as Python prints it:
# "(1, 4)", "(4,)". VERSION 1 (u16 length) or 2 (u32 length).
npy_write() {
  local file=$1 descr=$2 shape=$3 version=${4:-1}
  local dict="{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
  local pre=$((version == 1 ? 10 : 12))
  local total=$((pre + ${#dict} + 1))
  local pad=$(((64 - total % 64) % 64))
  local hlen=$((${#dict} + pad + 1))
  {
    printf '\223NUMPY'
    bytes "$version" 0 $((hlen & 255)) $((hlen >> 8))
    [ "$version" -ne 1 ] && bytes 0 0
    printf '%s%*s\n' "$dict" "$pad" ''
    cat
  } >"$file"
}

# npy_dict FILE: the header dict of a .npy file (version 1.0), trailing padding removed.
npy_dict() {
  local hlen
  hlen=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
  head -c $((10 + hlen)) "$1" | tail -c +11 | sed 's/ *$//'
}

# npy_values FILE TYPE: the data of a .npy 1.0 file as od prints TYPE (f4, u1, d1, u2, x2),
# one line, single spaces.
npy_values() {
  local hlen
  hlen=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
  od -An -v -t"$2" -j$((10 + hlen)) "$1" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'
}

# expect_npy NAME FILE DICT TYPE VALUES: header dict and values of an output file.
expect_npy() {
  local name=$1 file=$2 dict=$3 type=$4 values=$5
  if [ ! -f "$file" ]; then
    fail "$name" "$file was not written"
    return
  fi
  local got_dict got_values
  got_dict=$(npy_dict "$file")
  got_values=$(npy_values "$file" "$type")
  if [ "$got_dict" != "$dict" ]; then
    fail "$name" "header: $got_dict" "wanted: $dict"
  elif [ "$got_values" != "$values" ]; then
    fail "$name" "values: $got_values" "wanted: $values"
  elif [ $(($(od -An -tu2 -j8 -N2 "$file" | tr -d ' ') % 64)) -ne 54 ]; then
    fail "$name" "the data does not start at a multiple of 64 bytes"
  else
    pass "$name"
  fi
}

# ---------------------------------------------------------------------------------------------
# models: one per I/O type, two graphs in one, awkward output names

cat >"$TMP/add.txt" <<'EOF'
graph add_f32
input a f32 [1,4]
input b f32 [1,4]
output y f32 [1,4]
op ElementWiseAdd a b -> y
EOF
cat >"$TMP/f16.txt" <<'EOF'
graph relu_f16
input x f16 [4]
output y f16 [4]
op Relu x -> y
EOF
# u8 per tensor: real = (q - 128) * 0.5
cat >"$TMP/u8.txt" <<'EOF'
graph add_u8
input a u8 [1,4] scale=0.5 zero_point=128
input b u8 [1,4] scale=0.5 zero_point=128
output y u8 [1,4] scale=0.5 zero_point=128
op ElementWiseAdd a b -> y
EOF
cat >"$TMP/i8.txt" <<'EOF'
graph relu_i8
input x i8 [2,2] scale=0.25 zero_point=0
output y i8 [2,2] scale=0.25 zero_point=0
op Relu x -> y
EOF
# u16: real = (q - 100) * 0.25
cat >"$TMP/u16.txt" <<'EOF'
graph relu_u16
input x u16 [3] scale=0.25 zero_point=100
output y u16 [3] scale=0.25 zero_point=100
op Relu x -> y
EOF
cat >"$TMP/two.txt" <<'EOF'
graph first
input x f32 [2]
output y f32 [2]
op Relu x -> y

graph second
input x f32 [2]
input z f32 [2]
output y f32 [2]
op ElementWiseMultiply x z -> y
EOF
cat >"$TMP/names.txt" <<'EOF'
graph names
input x f32 [2]
output "a/b c" f32 [2]
output ".hidden" f32 [2]
output "A/B C" f32 [2]
op Relu x -> "a/b c"
op Relu x -> ".hidden"
op Relu x -> "A/B C"
EOF
# quantized inputs for bench: per tensor and per axis
cat >"$TMP/quant.txt" <<'EOF'
graph quant
input x u8 [1,2,2,6] scale=0.0078125 zero_point=128
input w i8 [1,2,2,6] axis=3 scales=[0.5,0.25,0.125,1,2,4] zero_points=[0,1,2,3,4,5]
output y u8 [1,2,2,6] scale=0.015625 zero_point=0
op ElementWiseAdd x w -> y
EOF
for m in add f16 u8 i8 u16 two names quant; do
  if $EMU "$REFBUILD" "$TMP/$m.txt" "$TMP/$m.bin" >"$TMP/out" 2>"$TMP/err" &&
    [ -s "$TMP/$m.bin" ]; then
    pass "htpu-refbuild makes $m.bin"
  else
    RC=1
    fail "htpu-refbuild makes $m.bin"
  fi
done

# ---------------------------------------------------------------------------------------------
# inputs

f32 1 2 3 4 >"$TMP/a.raw"
f32 10 20 30 40 >"$TMP/b.raw"
f32 1 2 3 4 | npy_write "$TMP/a.npy" '<f4' '(1, 4)'
f32 10 20 30 40 | npy_write "$TMP/b.npy" '<f4' '(1, 4)' 2

# ---------------------------------------------------------------------------------------------
# help

run help run
expect "help run" 0 out "usage: htpu run MODEL" out "--input NAME=FILE" out "--output-dir" \
  out "--native-output" out "(repeatable)"
run help bench
expect "help bench" 0 out "usage: htpu bench MODEL" out "--iterations" out "--duration" \
  out "--warmup" out "--perf-profile" out "nearest-rank"
run --help
expect "--help lists run and bench" 0 out "run" out "bench"

# ---------------------------------------------------------------------------------------------
# run: f32

run run "$TMP/add.bin" "${LIBS[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/o_add"
expect "run f32, raw inputs" 0 out "add_f32" out "a.raw" out "raw" \
  out "y: [11, 22, 33, 44]" out "$TMP/o_add/y.npy"
expect_npy "run f32: y.npy header and values" "$TMP/o_add/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "11 22 33 44"
# min max mean argmax in the output table
if grep -qE '^  y +f32 +\[1,4\] +11 +44 +27\.5 +3 ' "$TMP/out"; then
  pass "run f32: min/max/mean/argmax"
else
  fail "run f32: min/max/mean/argmax" "expected y f32 [1,4] 11 44 27.5 3"
fi

# A symlink already at OUTDIR/NAME.npy is replaced by the output, never followed: its target
# (here a file of the user's, and a dangling link's would-be file) stays as it was.
mkdir "$TMP/o_link" && printf 'precious\n' >"$TMP/precious.txt"
cp "$TMP/precious.txt" "$TMP/precious.orig"
ln -s "$TMP/precious.txt" "$TMP/o_link/y.npy"
mkdir "$TMP/o_dangling" && ln -s "$TMP/created_through_link" "$TMP/o_dangling/y.npy"
run run "$TMP/add.bin" "${LIBS[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/o_link"
expect "run: output over a symlink" 0 out "y: [11, 22, 33, 44]"
check "run: the symlink's target is untouched" cmp -s "$TMP/precious.txt" "$TMP/precious.orig"
check "run: the symlink was replaced by a regular file" \
  test -f "$TMP/o_link/y.npy" -a ! -L "$TMP/o_link/y.npy"
expect_npy "run: the output written over the symlink" "$TMP/o_link/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "11 22 33 44"
check "run: no temporary file left in the output dir" \
  test "$(ls -A "$TMP/o_link")" = y.npy
run run "$TMP/add.bin" "${LIBS[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/o_dangling"
expect "run: output over a dangling symlink" 0 out "y: [11, 22, 33, 44]"
check "run: nothing created through the dangling symlink" test ! -e "$TMP/created_through_link"
check "run: the dangling symlink was replaced" \
  test -f "$TMP/o_dangling/y.npy" -a ! -L "$TMP/o_dangling/y.npy"
# an output name taken by a directory: an error naming the file, and no temporary left behind
mkdir -p "$TMP/o_dir/y.npy"
run run "$TMP/add.bin" "${LIBS[@]}" --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/o_dir"
expect "run: an output name that is a directory -> exit 1" 1 err "cannot write $TMP/o_dir/y.npy"
check "run: no temporary file left after a failed rename" test "$(ls -A "$TMP/o_dir")" = y.npy

run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.npy" --input "b=$TMP/b.npy" \
  --output-dir "$TMP/o_add_npy"
expect "run f32, .npy inputs (v1.0 and v2.0 headers)" 0 out "npy" out "y: [11, 22, 33, 44]"
expect_npy "run f32 .npy: values" "$TMP/o_add_npy/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "11 22 33 44"

run run "$TMP/add.bin" "${LIBS[@]}" --input "$TMP/a.npy" --input "$TMP/b.raw"
expect "run: bare --input files in graph order" 0 out "y: [11, 22, 33, 44]" out "output/y.npy"
check "run without --output-dir writes no file" test ! -e "$TMP/y.npy"

run run "$TMP/add.bin" "${LIBS[@]}" --input "b=$TMP/b.raw" --input "a=$TMP/b.raw" --json
expect "run --json (grep)" 0 out '"schema": "htpu.run/1"' out '"graph": "add_f32"' \
  out '"first": [20, 40, 60, 80]' out '"argmax": 3' out '"file": "output/y.npy"'
json_check "run --json parses" '
  j.schema === "htpu.run/1" && j.inputs.length === 2 && j.inputs[0].name === "a" &&
  j.inputs[0].format === "raw" && j.outputs[0].name === "y" && j.outputs[0].min === 20 &&
  j.outputs[0].max === 80 && j.outputs[0].mean === 50 && j.outputs[0].shape.join() === "1,4" &&
  j.timing_ns.total >= j.timing_ns.execute && j.timing_ns.execute > 0'

# ---------------------------------------------------------------------------------------------
# run: f16 (f32 in -> quantized to f16; native f16 in; native f16 out)

f32 -1 0.5 2 -3 >"$TMP/x16.raw"
run run "$TMP/f16.bin" "${LIBS[@]}" --input "x=$TMP/x16.raw" --output-dir "$TMP/o_f16"
expect "run f16, f32 raw input" 0 out "f32 -> f16" out "y: [0, 0.5, 2, 0]"
expect_npy "run f16: dequantized f32 output" "$TMP/o_f16/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" f4 "0 0.5 2 0"

# -1 0.5 2 -3 as f16: bc00 3800 4000 c200
bytes 0 188 0 56 0 64 0 194 | npy_write "$TMP/x16.npy" '<f2' '(4,)'
run run "$TMP/f16.bin" "${LIBS[@]}" --input "x=$TMP/x16.npy" --output-dir "$TMP/o_f16n" \
  --native-output
expect "run f16, native .npy input and output" 0 out "f16 (native)" out "y: [0, 0.5, 2, 0]"
expect_npy "run f16 --native-output: '<f2' file" "$TMP/o_f16n/y.npy" \
  "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }" x2 "0000 3800 4000 0000"

bytes 0 188 0 56 0 64 0 194 >"$TMP/x16n.raw"
run run "$TMP/f16.bin" "${LIBS[@]}" --input "x=$TMP/x16n.raw"
expect "run f16, native raw input (8 bytes)" 0 out "f16 (native)" out "y: [0, 0.5, 2, 0]"

# ---------------------------------------------------------------------------------------------
# run: u8 per tensor (real = (q - 128) * 0.5)

f32 -2 -0.5 1 3.5 >"$TMP/u8a.raw"
# 130 132 134 136 = 1 2 3 4
bytes 130 132 134 136 | npy_write "$TMP/u8b.npy" '|u1' '(1, 4)'
run run "$TMP/u8.bin" "${LIBS[@]}" --input "a=$TMP/u8a.raw" --input "b=$TMP/u8b.npy" \
  --output-dir "$TMP/o_u8"
expect "run u8: f32 raw + native .npy input" 0 out "f32 -> u8" out "u8 (native)" \
  out "y: [-1, 1.5, 4, 7.5]" out "f32 (from u8)"
expect_npy "run u8: dequantized output" "$TMP/o_u8/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "-1 1.5 4 7.5"
run run "$TMP/u8.bin" "${LIBS[@]}" --input "a=$TMP/u8a.raw" --input "b=$TMP/u8b.npy" \
  --output-dir "$TMP/o_u8n" --native-output
expect_npy "run u8 --native-output: '|u1' q values" "$TMP/o_u8n/y.npy" \
  "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 4), }" u1 "126 131 136 143"

# ---------------------------------------------------------------------------------------------
# run: i8 (real = q * 0.25), raw native input of 4 bytes

bytes 252 4 8 248 >"$TMP/i8.raw" # -4 4 8 -8
run run "$TMP/i8.bin" "${LIBS[@]}" --input "x=$TMP/i8.raw" --output-dir "$TMP/o_i8"
expect "run i8: native raw input" 0 out "i8 (native)" out "y: [0, 1, 2, 0]"
expect_npy "run i8: dequantized output" "$TMP/o_i8/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }" f4 "0 1 2 0"
run run "$TMP/i8.bin" "${LIBS[@]}" --input "x=$TMP/i8.raw" --output-dir "$TMP/o_i8n" \
  --native-output
expect_npy "run i8 --native-output: '|i1'" "$TMP/o_i8n/y.npy" \
  "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }" d1 "0 4 8 0"

# a backend that reports success without writing its outputs: htpu shows and saves zeros, not
# memory nobody wrote (its own buffers, and the library's conversion blocks)
HTPU_REF_SKIP_OUTPUTS=1 run run "$TMP/add.bin" "${LIBS[@]}" --input a="$TMP/a.raw" \
  --input b="$TMP/b.raw" --output-dir "$TMP/o_skip_f32"
expect "run f32, outputs not written: zeros" 0 out "y: [0, 0, 0, 0]"
expect_npy "run f32, outputs not written: y.npy zeros" "$TMP/o_skip_f32/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "0 0 0 0"
HTPU_REF_SKIP_OUTPUTS=1 run run "$TMP/i8.bin" "${LIBS[@]}" --input "x=$TMP/i8.raw" \
  --output-dir "$TMP/o_skip_i8"
expect_npy "run i8, outputs not written: dequantized zeros" "$TMP/o_skip_i8/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }" f4 "0 0 0 0"
HTPU_REF_SKIP_OUTPUTS=1 run run "$TMP/i8.bin" "${LIBS[@]}" --input "x=$TMP/i8.raw" \
  --output-dir "$TMP/o_skip_i8n" --native-output
expect_npy "run i8 --native-output, outputs not written: zeros" "$TMP/o_skip_i8n/y.npy" \
  "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }" d1 "0 0 0 0"

# ---------------------------------------------------------------------------------------------
# run: u16 (real = (q - 100) * 0.25), f32 .npy input

f32 -2 0.25 3 | npy_write "$TMP/u16.npy" '<f4' '(3,)'
run run "$TMP/u16.bin" "${LIBS[@]}" --input "x=$TMP/u16.npy" --output-dir "$TMP/o_u16" \
  --native-output
expect "run u16: f32 .npy input, native output" 0 out "f32 -> u16" out "y: [100, 101, 112]"
expect_npy "run u16 --native-output: '<u2'" "$TMP/o_u16/y.npy" \
  "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }" u2 "100 101 112"
run run "$TMP/u16.bin" "${LIBS[@]}" --input "x=$TMP/u16.npy" --json
json_check "run u16 --json: dequantized" '
  j.outputs[0].first.join() === "0,0.25,3" && j.outputs[0].dtype === "f32" &&
  j.outputs[0].tensor_dtype === "u16" && j.inputs[0].dtype === "f32"'

# ---------------------------------------------------------------------------------------------
# run: two graphs

f32 -1 2 >"$TMP/x2.raw"
f32 3 4 >"$TMP/z2.raw"
run run "$TMP/two.bin" "${LIBS[@]}" --input "x=$TMP/x2.raw"
expect "run: two graphs without --graph -> exit 2 naming them" 2 \
  err "holds 2 graphs ('first', 'second')" err "--graph"
run run "$TMP/two.bin" "${LIBS[@]}" --graph second --input "x=$TMP/x2.raw" \
  --input "z=$TMP/z2.raw"
expect "run --graph second" 0 out "second" out "y: [-3, 8]"
run run "$TMP/two.bin" "${LIBS[@]}" --graph first --input "x=$TMP/x2.raw"
expect "run --graph first" 0 out "y: [0, 2]"
run run "$TMP/two.bin" "${LIBS[@]}" --graph third --input "x=$TMP/x2.raw"
expect "run: unknown --graph -> exit 2 listing the graphs" 2 \
  err "no graph 'third' (graphs: 'first', 'second')"

# ---------------------------------------------------------------------------------------------
# run: output file names

run run "$TMP/names.bin" "${LIBS[@]}" --input "x=$TMP/x2.raw" --output-dir "$TMP/o_names"
expect "run: odd output names" 0 out "a/b c"
check "run: 'a/b c' -> a_b_c.npy" test -f "$TMP/o_names/a_b_c.npy"
check "run: '.hidden' -> _hidden.npy" test -f "$TMP/o_names/_hidden.npy"
check "run: 'A/B C' (same name ignoring case) -> A_B_C_2.npy" test -f "$TMP/o_names/A_B_C_2.npy"
check "run: nothing else written" test "$(ls -A "$TMP/o_names" | wc -l)" -eq 3

# ---------------------------------------------------------------------------------------------
# files that are not regular files: refused at once, never waited on (a FIFO with no writer
# used to block the open forever; `timeout` turns such a hang into a failure here)

mkfifo "$TMP/fifo"
run_bounded() {
  timeout 30 $EMU "$HTPU" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}
run_bounded info "$TMP/fifo" --system-lib reference
expect "info: a FIFO is refused, not waited on" 1 err "is a FIFO (named pipe); expected a regular file"
run_bounded run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/fifo" --input "b=$TMP/b.raw"
expect "run: a FIFO input is refused, not waited on" 1 \
  err "input 'a': '$TMP/fifo' is a FIFO (named pipe); expected a regular file"
run_bounded info "$TMP" --system-lib reference
expect "info: a directory is named as one" 1 err "is a directory; expected a regular file"
printf 'graph g\n  static w f32 [1] data_file=fifo\n' >"$TMP/fifo_model.txt"
timeout 30 $EMU "$REFBUILD" "$TMP/fifo_model.txt" "$TMP/fifo_model.bin" >"$TMP/out" 2>"$TMP/err"
RC=$?
expect "htpu-refbuild: a FIFO data_file is refused" 1 err "is a FIFO (named pipe)"
timeout 30 $EMU "$REFBUILD" "$TMP/fifo" "$TMP/fifo_model.bin" >"$TMP/out" 2>"$TMP/err"
RC=$?
expect "htpu-refbuild: a FIFO description is refused" 1 err "is a FIFO (named pipe)"

# ---------------------------------------------------------------------------------------------
# run: argument errors (exit 2, the graph's inputs listed)

run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw"
expect "run: missing input -> exit 2" 2 err "missing input 'b'" \
  err "(inputs: 'a' f32 [1,4], 'b' f32 [1,4])"
run run "$TMP/add.bin" "${LIBS[@]}"
expect "run: no inputs -> exit 2" 2 err "missing input 'a'"
run run "$TMP/add.bin" "${LIBS[@]}" --input "$TMP/a.raw" --input "$TMP/b.raw" \
  --input "$TMP/a.raw"
expect "run: extra bare input -> exit 2" 2 err "extra input, the graph has 2"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "a=$TMP/b.raw" \
  --input "b=$TMP/b.raw"
expect "run: duplicate input -> exit 2" 2 err "input 'a' given twice"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "c=$TMP/b.raw"
expect "run: unknown input name -> exit 2 listing valid names" 2 \
  err "the graph has no input 'c' (inputs: 'a' f32 [1,4], 'b' f32 [1,4])"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "$TMP/b.raw"
expect "run: NAME=FILE mixed with a bare FILE -> exit 2" 2 err "not a mix"
run run "$TMP/add.bin" "${LIBS[@]}" --input "$TMP/a.raw"
expect "run: one bare file for two inputs -> exit 2" 2 err "name them as NAME=FILE"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=" --input "b=$TMP/b.raw"
expect "run: empty file name -> exit 2" 2 err "no file name"
run run
expect "run: no MODEL -> exit 2" 2 err "missing MODEL"
run run "$TMP/add.bin" --bogus
expect "run: unknown option -> exit 2" 2 err "unknown option '--bogus'"

# ---------------------------------------------------------------------------------------------
# run: failures (exit 1)

run run "$TMP/nonexistent.bin" "${LIBS[@]}" --input "a=$TMP/a.raw"
expect "run: nonexistent model -> exit 1" 1 err "nonexistent.bin" err "HTPU_EIO"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/nope.raw" --input "b=$TMP/b.raw"
expect "run: nonexistent input file -> exit 1" 1 err "cannot open '$TMP/nope.raw': No such file or directory"
head -c 15 "$TMP/a.raw" >"$TMP/short.raw"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/short.raw" --input "b=$TMP/b.raw"
expect "run: raw file of the wrong size -> exit 1" 1 \
  err "has 15 bytes; a raw file must have 16 bytes (4 f32 values)"
run run "$TMP/u8.bin" "${LIBS[@]}" --input "a=$TMP/short.raw" --input "b=$TMP/u8b.npy"
expect "run: wrong raw size names both accepted sizes" 1 \
  err "16 bytes (4 f32 values) or 4 bytes (4 u8 values)"
f32 1 nan 3 4 >"$TMP/nan.raw"
run run "$TMP/u8.bin" "${LIBS[@]}" --input "a=$TMP/nan.raw" --input "b=$TMP/u8b.npy"
expect "run: NaN for a quantized input -> exit 1" 1 err "HTPU_ENAN"

# What the model's metadata can tell is checked before a backend exists (on the board: no DSP
# session and no model load for a typo). Every backendCreate fails here, so only a check made
# before it can say what is wrong with the arguments.
NOBE=(--startup-retries 0)
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "a=$TMP/a.raw" --input "c=$TMP/b.raw"
expect "run: unknown --input name found before the backend" 2 err "the graph has no input 'c'"
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "a=$TMP/a.raw"
expect "run: missing input found before the backend" 2 err "missing input 'b'"
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "a=$TMP/short.raw" --input "b=$TMP/b.raw"
expect "run: input file of the wrong size found before the backend" 1 \
  err "has 15 bytes; a raw file must have 16 bytes"
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "a=$TMP/a.raw" --input "b=$TMP/no-such.raw"
expect "run: missing input file found before the backend" 1 err "no-such.raw"
HTPU_REF_FAULTS='backendCreate:*:1000' run bench "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "c=$TMP/b.raw" -n 1
expect "bench: unknown --input name found before the backend" 2 err "the graph has no input 'c'"
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --graph nope --input "a=$TMP/a.raw" --input "b=$TMP/b.raw"
expect "run: unknown --graph found before the backend" 2 err "has no graph 'nope'"
# and with good arguments the backend's failure is what is reported
HTPU_REF_FAULTS='backendCreate:*:1000' run run "$TMP/add.bin" "${LIBS[@]}" "${NOBE[@]}" \
  --input "a=$TMP/a.raw" --input "b=$TMP/b.raw" --output-dir "$TMP/o_nobe"
expect "run: good arguments, no backend -> the runtime's error" 1 err "opening the runtime"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "b=$TMP/b.raw" \
  --output-dir "$TMP/a.raw/sub"
expect "run: output dir under a file -> exit 1" 1 err "output directory"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "b=$TMP/b.raw" \
  --output-dir "$TMP/a.raw"
expect "run: output dir is a file -> exit 1" 1 err "is not a directory"
if [ "$(id -u)" -ne 0 ]; then
  mkdir "$TMP/ro" && chmod 555 "$TMP/ro"
  run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a.raw" --input "b=$TMP/b.raw" \
    --output-dir "$TMP/ro"
  expect "run: read-only output dir -> exit 1" 1 err "is not writable"
else
  echo "skip run: read-only output dir (root ignores permissions)"
fi

# Files whose size stat reports as 0 but that have content (/proc): read to their end. Here the
# input is the process's own environment, 16 bytes made to be four normal f32 values (the last
# byte, environ's NUL, is the top of the last float; 0xc0 below it keeps that one normal), and
# b is zero, so y holds exactly those bytes.
f32 0 0 0 0 >"$TMP/zero.raw"
env -i "X=123456789012"$'\xc0' $EMU "$HTPU" run "$TMP/add.bin" "${LIBS[@]}" \
  --input a=/proc/self/environ --input "b=$TMP/zero.raw" --output-dir "$TMP/o_proc" \
  >"$TMP/out" 2>"$TMP/err"
RC=$?
expect "run: a /proc input is read to its end" 0 out "/proc/self/environ" out "raw"
printf 'X=123456789012\300\000' >"$TMP/environ.expected"
check "run: the /proc input's bytes went through" \
  cmp -s <(tail -c 16 "$TMP/o_proc/y.npy") "$TMP/environ.expected"
run run "$TMP/add.bin" "${LIBS[@]}" --input a=/proc/self/status --input "b=$TMP/b.raw"
expect "run: a /proc input of the wrong size names its real size" 1 err "/proc/self/status has" \
  err "a raw file must have 16 bytes"
expect_not "run: a /proc input is not '0 bytes'" err "has 0 bytes"
: >"$TMP/empty.raw"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/empty.raw" --input "b=$TMP/b.raw"
expect "run: an empty input file has 0 bytes" 1 err "empty.raw has 0 bytes"

# corrupt and mismatching .npy files
npy_case() { # NAME FILE PATTERN: runs add.bin with FILE as input a, expects exit 1 + PATTERN
  run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$2" --input "b=$TMP/b.raw"
  expect "$1" 1 err "$3"
}
printf 'NUMPY\001\000' >"$TMP/magic.npy"
npy_case "npy: bad magic" "$TMP/magic.npy" "not a .npy file"
f32 1 2 3 4 | npy_write "$TMP/v4.npy" '<f4' '(1, 4)'
printf '\004' | dd of="$TMP/v4.npy" bs=1 seek=6 conv=notrunc status=none
npy_case "npy: unknown version 4.0" "$TMP/v4.npy" "unsupported .npy version 4.0"
head -c 9 "$TMP/a.npy" >"$TMP/cut9.npy"
npy_case "npy: length field cut off" "$TMP/cut9.npy" "header length field is cut off"
head -c 40 "$TMP/a.npy" >"$TMP/cut40.npy"
npy_case "npy: truncated header" "$TMP/cut40.npy" "the header needs 128 bytes, file has 40"
{ printf '\223NUMPY\002\000'; bytes 0 0 2 0; } >"$TMP/huge.npy"
npy_case "npy: header length beyond the limit" "$TMP/huge.npy" "exceeds the limit"
f32 1 2 3 4 | npy_write "$TMP/dict.npy" '<f4' '(1, 4' # unbalanced tuple
npy_case "npy: malformed shape tuple" "$TMP/dict.npy" "'shape' holds something other than"
f32 1 2 3 4 | npy_write "$TMP/shape.npy" '<f4' '(4,)'
npy_case "npy: wrong shape names both" "$TMP/shape.npy" \
  "has shape (4,); the tensor's shape is (1, 4)"
f32 1 2 3 4 | npy_write "$TMP/shape3.npy" '<f4' '(1, 1, 4)'
npy_case "npy: extra leading 1 is a mismatch" "$TMP/shape3.npy" "has shape (1, 1, 4)"
bytes 1 0 2 0 3 0 4 0 | npy_write "$TMP/i2.npy" '<i2' '(1, 4)'
npy_case "npy: wrong dtype" "$TMP/i2.npy" "has dtype '<i2'; the input takes '<f4'"
f32 1 2 3 4 | npy_write "$TMP/f8.npy" '<f8' '(1, 2)'
npy_case "npy: unsupported dtype" "$TMP/f8.npy" "'<f8', which htpu does not read"
f32 1 2 3 4 | npy_write "$TMP/be.npy" '>f4' '(1, 4)'
npy_case "npy: big-endian f32 is not read" "$TMP/be.npy" "'>f4', which htpu does not read"
f32 1 2 3 | npy_write "$TMP/short.npy" '<f4' '(1, 4)'
npy_case "npy: data shorter than the shape" "$TMP/short.npy" "holds 12 data bytes"
f32 1 2 3 4 1 | npy_write "$TMP/long.npy" '<f4' '(1, 4)'
npy_case "npy: trailing data" "$TMP/long.npy" "holds 20 data bytes"
f32 1 2 3 4 | npy_write "$TMP/fortran.npy" '<f4' '(1, 4)'
sed -i 's/False/True /' "$TMP/fortran.npy"
npy_case "npy: Fortran order" "$TMP/fortran.npy" "Fortran order"
f32 1 2 3 4 | npy_write "$TMP/key.npy" '<f4' '(1, 4), '"'"'extra'"'"': 1'
npy_case "npy: unexpected key" "$TMP/key.npy" "unexpected key 'extra'"
# bytes >= 0x7F from a header are escaped in messages, never echoed raw
f32 1 2 3 4 | LC_ALL=C npy_write "$TMP/descr8.npy" "$(printf '<f\303\251')" '(1, 4)'
npy_case "npy: non-ASCII descr is escaped" "$TMP/descr8.npy" "'<f\xc3\xa9', which htpu does not read"
check "npy: no raw byte >= 0x80 in the descr message" bash -c "! LC_ALL=C grep -q \$'[\x80-\xff]' '$TMP/err'"
f32 1 2 3 4 | LC_ALL=C npy_write "$TMP/key8.npy" '<f4' "(1, 4), '$(printf 'k\377\177')': 1"
npy_case "npy: non-ASCII key is escaped" "$TMP/key8.npy" "unexpected key 'k\xff\x7f'"
check "npy: no raw byte >= 0x7F in the key message" bash -c "! LC_ALL=C grep -q \$'[\x7f-\xff]' '$TMP/err'"
f32 1 2 3 4 >"$TMP/nomagic.npy"
npy_case "npy: a .npy name without the magic is not read as raw" "$TMP/nomagic.npy" \
  "not a .npy file"
# the magic makes a file .npy whatever its name
cp "$TMP/a.npy" "$TMP/a_npy.dat"
run run "$TMP/add.bin" "${LIBS[@]}" --input "a=$TMP/a_npy.dat" --input "b=$TMP/b.raw"
expect "run: .npy recognized by its magic" 0 out "y: [11, 22, 33, 44]"

# --backend reference alone: the reference system library comes with it
run run "$TMP/add.bin" --backend reference --input a="$TMP/a.raw" --input b="$TMP/b.raw" \
  --output-dir "$TMP/o_implied" --json
expect "run --backend reference without --system-lib" 0 out "libhtpu_refsystem.so"
expect_npy "run --backend reference without --system-lib: values" "$TMP/o_implied/y.npy" \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }" f4 "11 22 33 44"
# an explicit --system-lib still wins
run run "$TMP/add.bin" --backend reference --system-lib "$TMP/nonexistent/libQnnSystem.so" \
  --input a="$TMP/a.raw" --input b="$TMP/b.raw" --output-dir "$TMP/o_explicit"
expect "run --backend reference --system-lib PATH: PATH is used" 1 \
  err "$TMP/nonexistent/libQnnSystem.so"

# ---------------------------------------------------------------------------------------------
# bench

# --root: the stand-in named, so nothing is said about HTPU_BOARD_ROOT on stderr
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 50 --warmup 2 --root "$HTPU_BOARD_ROOT"
expect "bench --iterations 50" 0 out "50 timed (+2 warmup)" out "execute" out "whole call" \
  out "p50" out "p99" out "generated f32"
# progress goes to a terminal only
check "bench: no progress on a non-terminal stderr" test ! -s "$TMP/err"

run bench "$TMP/add.bin" --backend reference --iterations 5 --json
expect "bench --backend reference without --system-lib" 0 out '"iterations": 5' \
  out "libhtpu_refsystem.so"

run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 200 --json
expect "bench --json (grep)" 0 out '"schema": "htpu.bench/1"' out '"iterations": 200' \
  out '"p50_ns"' out '"p90_ns"' out '"p99_ns"' out '"max_ns"' out '"mean_ns"' \
  out '"throughput_per_s"' out '"execute"' out '"total"' out '"warmup": 5'
json_check "bench --json: p50 <= p90 <= p99 <= max, total >= execute" '
  ["execute", "total"].every(k => { const l = j[k];
    return l.min_ns <= l.p50_ns && l.p50_ns <= l.p90_ns && l.p90_ns <= l.p99_ns &&
           l.p99_ns <= l.max_ns && l.mean_ns > 0 && l.throughput_per_s > 0; }) &&
  j.total.p50_ns >= j.execute.p50_ns && j.requested_iterations === 200 &&
  j.requested_duration_s === null && j.perf_profile.requested === null &&
  j.inputs.every(i => i.source === "generated")'
# the same order check without node: the execute block comes first
ORDER=$(awk -F': ' '/"(min|p50|p90|p99|max)_ns"/ { gsub(/,/, "", $2); printf "%s ", $2 }' \
  "$TMP/out")
set -- $ORDER
if [ $# -eq 10 ] && [ "$1" -le "$2" ] && [ "$2" -le "$3" ] && [ "$3" -le "$4" ] &&
  [ "$4" -le "$5" ] && [ "$6" -le "$7" ] && [ "$7" -le "$8" ] && [ "$8" -le "$9" ] &&
  [ "$9" -le "${10}" ]; then
  pass "bench --json: percentiles ordered (shell)"
else
  fail "bench --json: percentiles ordered (shell)" "got: $ORDER"
fi

run bench "$TMP/add.bin" "${LIBS[@]}" --duration 0.2 --warmup 0 --json
expect "bench --duration 0.2" 0 out '"requested_duration_s": 0.2' out '"warmup": 0'
json_check "bench --duration: ran about 0.2 s" '
  j.iterations >= 1 && j.wall_s >= 0.2 && j.wall_s < 5 && j.requested_iterations === null'

run bench "$TMP/quant.bin" "${LIBS[@]}" --iterations 20 --input "x=$TMP/nonexistent"
expect "bench: input file errors as in run" 1 err "cannot open"
bytes $(seq 100 123) | npy_write "$TMP/qx.npy" '|u1' '(1, 2, 2, 6)'
run bench "$TMP/quant.bin" "${LIBS[@]}" --iterations 20 --input "x=$TMP/qx.npy" --json
expect "bench: quantized model, one input from a file, one generated" 0 \
  out '"source": "npy"' out '"source": "generated"'
json_check "bench: the file input is native, the generated one f32" '
  typeof j.quantize_mean_ns === "number" && j.inputs[0].dtype === "u8" &&
  j.inputs[1].dtype === "f32"'

run bench "$TMP/two.bin" "${LIBS[@]}" --graph second --iterations 10
expect "bench --graph" 0 out "second"
run bench "$TMP/two.bin" "${LIBS[@]}" --iterations 10
expect "bench: two graphs without --graph -> exit 2" 2 err "choose one with --graph"

# --histogram: 30 calls of which the last 10 sleep 20 ms in graphExecute (the reference
# backend's latency rule, from its 21st call): every call lands in exactly one bin, the bins
# tile [min, p99] (p99 of 30 is the max), and the slow ten sit apart from the fast calls.
# Bins are log-spaced, at most a factor of 4 wide here, so the slow ten are all in bins above
# 5 ms; "at least" because a fast call stalled by a busy machine may join them (no timing is
# asserted: a fast call only has to exist below 5 ms).
HTPU_REF_LATENCY=graphExecute:20000:21 run bench "$TMP/add.bin" "${LIBS[@]}" -n 30 --warmup 0 \
  --histogram --json
expect "bench --histogram --json" 0 out '"histogram": {'
json_check "bench --histogram: every call binned once, bins tiling min..max, slow ones apart" '
  const h = j.histogram.total, e = j.histogram.execute;
  const all = (x) => x.bins.concat(x.above_p99 ? [x.above_p99] : []);
  const sum = (bins) => bins.reduce((a, b) => a + b.count, 0);
  const tiled = (x, l) => x.bins[0].lo_ns === l.min_ns &&
    all(x)[all(x).length - 1].hi_ns === l.max_ns &&
    x.bins.every((b, i) => b.lo_ns < b.hi_ns && (i === 0 || b.lo_ns === x.bins[i - 1].hi_ns));
  sum(all(h)) === 30 && sum(all(e)) === 30 && tiled(h, j.total) && tiled(e, j.execute) &&
  sum(all(h).filter(b => b.lo_ns >= 5e6)) >= 10 && sum(all(h).filter(b => b.hi_ns <= 5e6)) >= 1'
run bench "$TMP/add.bin" "${LIBS[@]}" -n 1 --warmup 0 --histogram --json
json_check "bench --histogram, one call: one bin holding it" '
  const h = j.histogram.total;
  h.bins.length === 1 && h.bins[0].count === 1 && h.bins[0].lo_ns === j.total.min_ns &&
  h.bins[0].hi_ns === j.total.max_ns && h.above_p99 === null'
run bench "$TMP/add.bin" "${LIBS[@]}" -n 10 --json
expect "bench --json without --histogram: null" 0 out '"histogram": null'
LC_ALL=C run bench "$TMP/add.bin" "${LIBS[@]}" -n 200 --histogram
expect "bench --histogram: both distributions drawn, '#' outside UTF-8" 0 \
  out "whole call, 200 calls (log scale up to p99, then the slowest 1%)" \
  out "execute, 200 calls" out "#" out "(p99)"
LC_ALL=C.UTF-8 run bench "$TMP/add.bin" "${LIBS[@]}" -n 200 --histogram
expect "bench --histogram: block characters in a UTF-8 locale" 0 out "█"

# Until the library has a profile API the option must say so, never pretend; once it is wired
# (tools/htpu/profile.c) the reference backend applies it. Either way the report must agree
# with stderr.
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 10 --perf-profile burst --json
if grep -qF "performance profiles are not available in this build" "$TMP/err"; then
  expect "bench --perf-profile burst: a note, not a fake" 0 \
    err "performance profiles are not available in this build; running with the backend's default" \
    out '"requested": "burst"' out '"applied": false'
else
  expect "bench --perf-profile burst: applied" 0 out '"requested": "burst"' out '"applied": true'
fi
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 10 --perf-profile sustained_high_performance
if grep -qF "not available" "$TMP/err"; then
  expect "bench --perf-profile: human report says it was not applied" 0 \
    out "sustained_high_performance (not available: backend default)"
else
  expect "bench --perf-profile: human report names the profile" 0 \
    out "perf profile   sustained_high_performance"
fi
run bench "$TMP/add.bin" "${LIBS[@]}" --perf-profile turbo
expect "bench: unknown profile -> exit 2 listing the profiles" 2 \
  err "unknown --perf-profile 'turbo'" err "burst, sustained_high_performance" \
  err "extreme_power_saver, default"

run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 0
expect "bench --iterations 0 -> exit 2" 2 \
  err "option '--iterations' wants an integer from 1 to 10000000, not '0'"
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations abc
expect "bench --iterations abc -> exit 2" 2 err "wants an integer from 1 to 10000000, not 'abc'"
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations -5
expect "bench --iterations -5 -> exit 2" 2 err "wants an integer from 1 to 10000000, not '-5'"
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 20000000
expect "bench --iterations above the cap -> exit 2" 2 err "from 1 to 10000000, not '20000000'"
run bench "$TMP/add.bin" "${LIBS[@]}" --iterations 5 --duration 1
expect "bench --iterations with --duration -> exit 2" 2 err "not both"
# -n is named as it was given, with the range, also beyond 32 bits (never '--n')
for n in 10000000000 0 20000000 x; do
  run bench "$TMP/add.bin" "${LIBS[@]}" -n "$n"
  expect "bench -n $n -> exit 2 naming -n and the range" 2 \
    err "option '-n' wants an integer from 1 to 10000000, not '$n'"
  expect_not "bench -n $n: never '--n'" err "'--n'"
done
run bench "$TMP/add.bin" "${LIBS[@]}" -n 5 --duration 1
expect "bench -n with --duration names -n" 2 err "give -n or --duration, not both"
run bench "$TMP/add.bin" "${LIBS[@]}" -n 5 -n 6
expect "bench -n twice names -n" 2 err "option '-n' given more than once"
run bench "$TMP/add.bin" "${LIBS[@]}" -n
expect "bench -n without a value names -n" 2 err "option '-n' needs a value (N)"
run help bench
expect "help bench: -n written with one dash" 0 out "  -n N "
expect_not "help bench: never --n" out "--n "
for d in 0 -1 abc 1s nan inf 100000; do
  run bench "$TMP/add.bin" "${LIBS[@]}" --duration "$d"
  expect "bench --duration $d -> exit 2" 2 err "--duration wants seconds"
done
run bench "$TMP/add.bin" "${LIBS[@]}" --warmup x
expect "bench --warmup x -> exit 2" 2 err "option '--warmup' wants an integer from 0 to 4294967295"
run bench "$TMP/add.bin" "${LIBS[@]}" --input "c=$TMP/a.raw"
expect "bench: unknown input name -> exit 2" 2 err "the graph has no input 'c'"
run bench "$TMP/nonexistent.bin" "${LIBS[@]}"
expect "bench: nonexistent model -> exit 1" 1 err "nonexistent.bin"
run bench "$TMP/add.bin" --backend "$TMP/nonexistent/libQnnHtp.so" --system-lib reference
expect "bench: nonexistent backend -> exit 1" 1 err "HTPU_ELOAD_BACKEND"

# ---------------------------------------------------------------------------------------------
# --timeout, --priority (run, bench, profile) and bench --in-flight

AB=(--input a="$TMP/a.raw" --input b="$TMP/b.raw")
run help bench
expect "help bench: --in-flight, --timeout, --priority" 0 out "--in-flight K" out "--timeout MS" \
  out "--priority P"
run run "$TMP/add.bin" "${LIBS[@]}" "${AB[@]}" --timeout 5000 --priority high \
  --output-dir "$TMP/o_prio"
expect "run --timeout 5000 --priority high" 0 out "y: [11, 22, 33, 44]"
for t in 0 -5 abc 1.5 86400001; do
  run run "$TMP/add.bin" "${LIBS[@]}" "${AB[@]}" --timeout "$t"
  expect "run --timeout $t -> exit 2" 2 \
    err "option '--timeout' wants an integer from 1 to 86400000, not '$t'"
done
for p in urgent default HIGH ""; do
  run run "$TMP/add.bin" "${LIBS[@]}" "${AB[@]}" --priority "$p"
  expect "run --priority '$p' -> exit 2" 2 \
    err "unknown --priority '$p' (priorities: low, normal, normal_high, high)"
done
run bench "$TMP/add.bin" "${LIBS[@]}" --priority urgent
expect "bench --priority urgent -> exit 2" 2 err "unknown --priority 'urgent'"
run profile "$TMP/add.bin" "${LIBS[@]}" --timeout x
expect "profile --timeout x -> exit 2" 2 err "option '--timeout' wants an integer"
# a stalled execute (3 s injected) with a 1 s timeout: aborted, named, exit 1. The timeout
# also bounds the open and the load, so it leaves them ample time on a loaded machine.
HTPU_REF_LATENCY=graphExecute:3000000 run run "$TMP/add.bin" "${LIBS[@]}" "${AB[@]}" \
  --timeout 1000
expect "run --timeout 1000 on a 3 s execute -> exit 1" 1 err "HTPU_ETIMEDOUT" \
  err "the call passed its 1000 ms deadline (timeout)"
# the same without execute signals: --timeout is the model's default (exec_timeout_ns), which
# ends the call at its deadline on the host although the call names no timeout of its own
HTPU_REF_CAPS=308=1000 HTPU_REF_LATENCY=graphExecute:3000000 run run "$TMP/add.bin" \
  "${LIBS[@]}" "${AB[@]}" --timeout 1000
expect "run --timeout 1000 without signals on a 3 s execute -> exit 1" 1 err "HTPU_ETIMEDOUT" \
  err "the call passed its 1000 ms deadline (timeout; host-side"
HTPU_REF_LATENCY=graphExecute:3000000 run bench "$TMP/add.bin" "${LIBS[@]}" --timeout 1000 \
  --warmup 0 -n 2 --in-flight 2
expect "bench --in-flight 2 --timeout 1000 on a 3 s execute -> exit 1" 1 err "HTPU_ETIMEDOUT" \
  err "a submitted call"
run bench "$TMP/add.bin" "${LIBS[@]}" -n 50 --in-flight 4 --json
expect "bench --in-flight 4 --json" 0 out '"in_flight": 4' out '"gap_mean_ns": ' \
  out '"iterations": 50'
json_check "bench --in-flight: 50 calls, a gap, total >= execute" '
  j.iterations === 50 && j.in_flight === 4 && j.gap_mean_ns > 0 &&
  j.total.p50_ns >= j.execute.p50_ns'
run bench "$TMP/add.bin" "${LIBS[@]}" -n 20 --in-flight 3
expect "bench --in-flight 3 (human)" 0 out "20 timed" \
  out "3 submitted calls at a time; gap between executes"
run bench "$TMP/add.bin" "${LIBS[@]}" --duration 0.2 --warmup 0 --in-flight 2 --json
expect "bench --in-flight with --duration" 0 out '"in_flight": 2' out '"requested_duration_s": 0.2'
run bench "$TMP/add.bin" "${LIBS[@]}" --json
expect "bench without --in-flight: synchronous" 0 out '"in_flight": 0' out '"gap_mean_ns": null'
for k in 0 1025 x; do
  run bench "$TMP/add.bin" "${LIBS[@]}" --in-flight "$k"
  expect "bench --in-flight $k -> exit 2" 2 \
    err "option '--in-flight' wants an integer from 1 to 1024, not '$k'"
done
run bench "$TMP/add.bin" "${LIBS[@]}" --in-flight 2 --shared-buffers
expect "bench --in-flight with --shared-buffers -> exit 2" 2 \
  err "does not combine with --shared-buffers"

# ---------------------------------------------------------------------------------------------
# an output with dynamic dimensions (NonZero's dims[0]): summarized and written in the shape the
# execute wrote, not its maximum ([6,2]), with its own and with shared buffers
printf 'graph nz\n  input x f32 [2,3]\n  output idx i32 [6,2] dynamic=[0]\n  op NonZero x -> idx\n' \
  >"$TMP/nz.txt"
$EMU "$REFBUILD" "$TMP/nz.txt" "$TMP/nz.bin" >/dev/null
f32 0 3 0 -2 0 1 >"$TMP/nz_x.raw"
for shared in "" --shared-buffers; do
  rm -rf "$TMP/o_nz"
  run run "$TMP/nz.bin" "${LIBS[@]}" --input x="$TMP/nz_x.raw" --output-dir "$TMP/o_nz" \
    --native-output $shared
  expect "run, dynamic output ${shared:-(own buffers)}: its produced shape" 0 out "[3,2]" \
    out "idx: [0, 1, 1, 0, 1, 2]"
  expect_npy "run, dynamic output ${shared:-(own buffers)}: idx.npy is [3,2]" "$TMP/o_nz/idx.npy" \
    "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), }" d4 "0 1 1 0 1 2"
done

harness_summary
