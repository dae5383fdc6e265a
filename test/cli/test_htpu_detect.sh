#!/usr/bin/env bash
# test_htpu_detect.sh BUILD_DIR - `htpu detect` and the frame inputs of `htpu run` (--image,
# --frame) against the reference libraries.
#
# The detector is made of the reference backend's ops: its head [1, 7, 4] (4 anchors, 3 classes)
# is a planted bias, except anchor 0's class-0 score, which is the letterboxed input's mean red
# (/ 255), so what comes back shows the frame went in. Its arithmetic is checked against OpenCV
# by test/vision/oracle.py; here: the command line, the reports, the drawn PNG, the errors.
set -u

SHAPES=$(cd "$(dirname "$0")/../../models/shapes" && pwd)
EPC="python3 $(cd "$(dirname "$0")/../support" && pwd)/epcontext.py"
. "$(dirname "$0")/harness.sh" "$@" test_htpu_detect

LIBS=(--backend reference --system-lib reference)

# ---------------------------------------------------------------------------------------------
# the detector and its frames

awk 'BEGIN {
  printf "graph detector\n"
  printf "  input  images u8 [1,8,8,3] scale=0.00392156862745098\n"
  printf "  static w f32 [28,192] data=["
  for (r = 0; r < 28; r++) for (k = 0; k < 192; k++)
    printf "%s%s", (r || k) ? "," : "", (r == 16 && k % 3 == 0) ? "0.015625" : "0"
  printf "]\n"
  printf "  static b f32 [28] data=[2,4,4,7,2,4,4.5,8,4,4,4,4,4,4,4,4,0,0.1,0.1,0.1,0.1,0.9,0.8,0.1,0.1,0.1,0.1,0.3]\n"
  printf "  native pixels u8 [1,192] scale=0.00392156862745098\n"
  printf "  native flat f32 [1,28]\n"
  printf "  output output0 f32 [1,7,4]\n"
  printf "  op Reshape images -> pixels\n"
  printf "  op FullyConnected pixels w b -> flat\n"
  printf "  op Reshape flat -> output0\n"
}' >"$TMP/det.txt"
$EMU "$REFBUILD" "$TMP/det.txt" "$TMP/det.bin" || exit 2
printf 'cat\ndog\nbird\n' >"$TMP/labels.txt"

# a 16x8 frame of one color (R G B bytes), as a PPM
ppm() {
  local r=$1 g=$2 b=$3 out=$4
  printf 'P6\n# a comment\n16 8\n255\n' >"$out"
  for _ in $(seq 128); do printf "\\$(printf %03o "$r")\\$(printf %03o "$g")\\$(printf %03o "$b")"; done >>"$out"
}
ppm 255 10 20 "$TMP/red.ppm"
ppm 0 10 20 "$TMP/dark.ppm"
# the same red frame raw with rows of 52 bytes (4 of padding, 0xEE)
for _ in $(seq 8); do
  for _ in $(seq 16); do printf '\377\012\024'; done
  printf '\356\356\356\356'
done >"$TMP/red.rgb"
# a 16x8 NV12 frame: Y 235, U 128, V 128 (white), 128 + 64 bytes
{ for _ in $(seq 128); do printf '\353'; done; for _ in $(seq 64); do printf '\200'; done; } >"$TMP/white.nv12"

DET=("$TMP/det.bin" "${LIBS[@]}" --head-layout channels_first)

# ---------------------------------------------------------------------------------------------
# detect: the table, JSON, the drawn frame

run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/labels.txt"
expect "detect: table of detections, best first, labels" 0 \
  out "frame  $TMP/red.ppm (16x8 rgb24)" out "into   8x4 at (0, 2) in 8x8" \
  out "3 detections (4 candidates above the threshold)" \
  out "1  1      dog    0.900  4.0   0.0  12.0  8.0" \
  out "2  0      cat    0.724  0.0   0.0  8.0   4.0" \
  out "3  2      bird   0.300  10.0  8.0  16.0  8.0"

run detect "${DET[@]}" --image "$TMP/red.ppm" --json --labels "$TMP/labels.txt"
expect "detect --json: an array of detections" 0 out '"label": "dog"' out '"box": [4, 0, 12, 8]' \
  out '"keypoints": null'
json_check "detect --json: 3 objects with class, label, score, box, keypoints" \
  'j.length == 3 && j[0].class == 1 && j[1].label == "cat" && j[2].box[0] == 10 && "keypoints" in j[0]'

run detect "${DET[@]}" --image "$TMP/dark.ppm" --score 0.2
expect "detect: the frame reaches the model (dark red: anchor 0 scores 0.224)" 0 \
  out "3  0      -      0.224" out "3 detections (4 candidates"

run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16x8 --format rgb24 --stride 52
expect "detect --frame raw rgb24 with a stride: the same as the PPM" 0 \
  out "2  0      -      0.724"

run detect "${DET[@]}" --frame "$TMP/white.nv12" --size 16x8 --format nv12 --channels bgr
expect "detect --frame nv12: white, (255 * 32 + 114 * 32) / 64 / 255" 0 out "0.724"

run detect "${DET[@]}" --image "$TMP/red.ppm" --crop 8,0,8,8
expect "detect --crop: boxes in frame pixels, clipped to the crop" 0 \
  out "region 8x8 at (8, 0)" out "1  0      -      1.000  8.0   0.0  12.0  4.0" \
  out "2  1      -      0.900  10.0  2.0  14.0  6.0"

run detect "${DET[@]}" --image "$TMP/red.ppm" --draw "$TMP/out.png" --labels "$TMP/labels.txt"
png_ok() {
  # signature, then IHDR: width 16, height 8, 8-bit RGB
  [ "$(od -An -tx1 -N24 "$TMP/out.png" | tr -d ' \n')" = \
    "89504e470d0a1a0a0000000d494844520000001000000008" ] &&
    [ "$(od -An -tx1 -j24 -N2 "$TMP/out.png" | tr -d ' \n')" = "0802" ]
}
check "detect --draw: a 16x8 RGB PNG" png_ok
if [ -x /usr/bin/python3 ]; then
  check "detect --draw: the PNG decodes (zlib, CRCs) to the frame with boxes" /usr/bin/python3 -c '
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
pos, idat = 8, b""
while pos < len(d):
    n, kind = struct.unpack(">I4s", d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", d[pos + 8 + n:pos + 12 + n])[0], kind
    idat += body if kind == b"IDAT" else b""
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(raw) == 8 * (16 * 3 + 1), len(raw)
rows = [raw[r * 49 + 1:(r + 1) * 49] for r in range(8)]
px = [r[3 * x:3 * x + 3] for r in rows for x in range(16)]
assert bytes([255, 10, 20]) in px  # the frame
assert bytes([255, 157, 151]) in px  # the box of class 1 (dog) in its color
' "$TMP/out.png"
fi

# A head with a dynamic dimension: NonZero of the [1, 1, 4, 4, 3] input, rows [0, 0, y, x, c]
# read anchors first (cx 0, cy 0, w y, h x, score c). With a threshold below 0 every row the
# execute produced is a detection, and only those: one for the frame's one nonzero byte (a
# decode of the declared 48 rows would count the buffer's 47 others).
cat >"$TMP/nz.txt" <<'EOF2'
graph nzdet
  input images u8 [1,4,4,3] scale=0.00392156862745098
  native deep u8 [1,1,4,4,3] scale=0.00392156862745098
  output idx i32 [48,5] dynamic=[0]
  op Reshape images -> deep
  op NonZero deep -> idx
EOF2
$EMU "$REFBUILD" "$TMP/nz.txt" "$TMP/nz.bin" || exit 2
{ printf 'P6 4 4 255\n'; for i in $(seq 0 47); do
    if [ "$i" = 20 ]; then printf '\007'; else printf '\000'; fi; done; } >"$TMP/one.ppm"
run detect "$TMP/nz.bin" "${LIBS[@]}" --image "$TMP/one.ppm" --head-layout anchors_first \
  --score 0 --iou 1 --json
json_check "detect, a dynamic head: the rows the execute produced, not the declared 48" \
  'j.length == 1 && j[0].score == 2 && j[0].box[2] == 0.5 && j[0].box[3] == 1'

# The shapes demo (models/shapes/) on one of its held-out frames and on an NV12 one: the
# detections docs/htpu.md shows, and the truth's objects (models/shapes/truth.txt).
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --labels "$SHAPES/labels.txt" --iou 0.5
expect "detect, shapes demo: two triangles, a square and a disc" 0 \
  out "1  2      triangle  0.992  133.6  27.3  174.6  68.2" \
  out "3  0      square    0.596  87.8   67.7  124.9  103.8" out "4 detections"
if /usr/bin/python3 -c 'import cv2' 2>/dev/null; then
  run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
    --labels "$SHAPES/labels.txt" --iou 0.5 --draw "$TMP/shapes.png"
  # The first triangle's box ends 25 px before the frame's right edge: its label "triangle
  # 0.99" (13 characters, 79 px with its margins) is moved left to stay whole (it was cut at
  # 66 px); above the box's top (row 27) nothing else has the box's color.
  check "detect --draw: a label at the frame's right edge is whole" /usr/bin/python3 -c '
import sys, cv2
im = cv2.imread(sys.argv[1])
c = im[27, 140]
n = max(int((im[y] == c).all(axis=1).sum()) for y in range(27))
assert n == 79, n
' "$TMP/shapes.png"
fi
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --frame "$SHAPES/frames/frame06_320x180.nv12" \
  --size 320x180 --format nv12 --labels "$SHAPES/labels.txt" --iou 0.5 --json
json_check "detect, shapes demo, NV12: two squares and a disc" \
  'j.length == 3 && j.filter(d => d.label == "square").length == 2 && j[1].label == "disc"'
# --max keeps the best N of what NMS leaves (the two triangles above, in score order)
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --labels "$SHAPES/labels.txt" --iou 0.5 --max 2
expect "detect --max 2: the two best of four" 0 out "2 detections" \
  out "1  2      triangle  0.992  133.6  27.3  174.6  68.2" \
  out "2  2      triangle  0.870  23.4   49.7  56.6   82.9"
expect_not "detect --max 2: no third row" out "square"
# --resize crop: the centre square of the frame (131x131 at x 34), every box inside it
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --labels "$SHAPES/labels.txt" --iou 0.5 --resize crop
expect "detect --resize crop: the centre region" 0 \
  out "into   64x64 at (0, 0) in 64x64, region 131x131 at (34, 0)" out "3 detections"
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --labels "$SHAPES/labels.txt" --iou 0.5 --resize crop --json
json_check "detect --resize crop --json: boxes inside the crop, in frame pixels" '
  j.length == 3 && j.every(d => d.box[0] >= 34 && d.box[2] <= 165 && d.box[1] >= 0 &&
                               d.box[3] <= 131 && d.box[0] < d.box[2])'
# --resize stretch: the whole frame into the whole input, boxes back in frame pixels
run detect "$SHAPES/shapes.bin" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --labels "$SHAPES/labels.txt" --iou 0.5 --resize stretch --json
json_check "detect --resize stretch --json: four shapes across the frame" '
  j.length == 4 && j.some(d => d.box[2] > 180) && j.some(d => d.box[0] < 25) &&
  j.every(d => d.box[2] <= 199 && d.box[3] <= 131)'

# The shapes detector as Ultralytics exports it (format="qnn"): an EPContext model whose
# metadata names the classes. Those are the labels unless --labels gives others.
$EPC "$TMP/shapes_qnn.onnx" --node shapes_ctx \
  --embed "$SHAPES/shapes.bin" --prop "names={0: 'square', 1: 'disc', 2: 'triangle'}" || exit 2
run detect "$TMP/shapes_qnn.onnx" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --iou 0.5
expect "detect, an EPContext model: its class names are the labels" 0 \
  out "names  3 from the model's metadata (htpu info: class names)" \
  out "1  2      triangle  0.992" out "3  0      square    0.596"
expect_not "detect, an EPContext model: no class without its label" out "  -      0."
run detect "$TMP/shapes_qnn.onnx" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --iou 0.5 --json
json_check "detect --json, an EPContext model: the labels are its class names" \
  'j.length == 4 && j[0].label == "triangle" && j[2].label == "square" && j[3].label == "disc"'
printf 'box\nround\n' >"$TMP/fr.txt"
run detect "$TMP/shapes_qnn.onnx" "${LIBS[@]}" --image "$SHAPES/frames/frame05_199x131.ppm" \
  --iou 0.5 --labels "$TMP/fr.txt"
expect "detect --labels wins over the model's class names (and where it has none, none)" 0 \
  out "names  2 from $TMP/fr.txt" out "1  2      -      0.992" out "3  0      box    0.596" \
  out "4  1      round  0.498"
run detect "${DET[@]}" --image "$TMP/red.ppm"
expect "detect, a model without class names and no --labels: says how to name them" 0 \
  out "names  none (--labels FILE names the classes)"

# ---------------------------------------------------------------------------------------------
# run: frames as inputs

run run "$TMP/det.bin" "${LIBS[@]}" --image "images=$TMP/red.ppm" --output-dir "$TMP/o1"
expect "run --image NAME=F.ppm: the input from a frame" 0 out "images  $TMP/red.ppm  frame   u8 (native)"
run run "$TMP/det.bin" "${LIBS[@]}" --image "$TMP/red.ppm" --output-dir "$TMP/o2"
expect "run --image F.ppm: a bare file for a graph of one input" 0 out "frame"
check "run --image: the same outputs either way" cmp "$TMP/o1/output0.npy" "$TMP/o2/output0.npy"
run run "$TMP/det.bin" "${LIBS[@]}" --frame "images=$TMP/red.rgb" --size 16x8 --format rgb24 \
  --stride 52 --output-dir "$TMP/o3"
expect "run --frame raw with a stride" 0 out "frame"
check "run --frame: the same outputs as the PPM" cmp "$TMP/o1/output0.npy" "$TMP/o3/output0.npy"

# ---------------------------------------------------------------------------------------------
# one NPU user at a time: detect refuses beside another program holding the NPU (not beside
# FastRPC's daemon), unless --force

BOARD=$TMP/board
mkdir -p "$BOARD/proc/612/fd" "$BOARD/proc/4242/fd"
printf 'cdsprpcd\n' >"$BOARD/proc/612/comm"
ln -s /dev/fastrpc-cdsp-secure "$BOARD/proc/612/fd/3"
run detect "${DET[@]}" --image "$TMP/red.ppm" --root "$BOARD"
expect "detect: only cdsprpcd holds the NPU -> runs" 0 out "3 detections"
expect_not "detect: the daemon is no user" err "cdsprpcd"
printf 'frigate\n' >"$BOARD/proc/4242/comm"
printf '7f00-7f01 r-xp 0 b3:02 1 /usr/lib/onnxruntime-qnn/libQnnHtp.so\n' >"$BOARD/proc/4242/maps"
ln -s /dev/fastrpc-cdsp "$BOARD/proc/4242/fd/40"
HTPU_REF_SESSION_LOG=$TMP/detect-guard.log run detect "${DET[@]}" --image "$TMP/red.ppm" \
  --root "$BOARD"
expect "detect: another program holds the NPU -> refused, naming it" 1 \
  err "htpu detect: 1 other process holds the NPU's FastRPC device open:" \
  err "pid 4242 (frigate): /dev/fastrpc-cdsp; maps /usr/lib/onnxruntime-qnn/libQnnHtp.so" \
  err "or pass --force"
expect_not "detect: refused -> no detections" out "detections"
check "detect: refused before any QNN session" test ! -e "$TMP/detect-guard.log"
run detect "${DET[@]}" --image "$TMP/red.ppm" --root "$BOARD" --force
expect "detect --force: runs beside it, saying so" 0 out "3 detections" \
  err "htpu detect: --force: creating a QNN session beside it anyway"

# ---------------------------------------------------------------------------------------------
# errors: usage (exit 2) and bad frames (exit 1), each naming what was wrong

run detect "${DET[@]}"
expect "detect: no frame -> exit 2" 2 err "give one frame: --image F.ppm or --frame F"
run detect "${DET[@]}" --image "$TMP/red.ppm" --frame "$TMP/red.rgb"
expect "detect: two frames -> exit 2" 2 err "give one frame"
run detect "${DET[@]}" --frame "$TMP/red.rgb"
expect "detect --frame without --size -> exit 2" 2 err "--frame needs --size WxH and --format FMT"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16by8 --format rgb24
expect "detect --size malformed -> exit 2" 2 err "--size 16by8: expected WIDTHxHEIGHT"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 2147483648x1080 --format rgb24
expect "detect --size past the largest side -> exit 2" 2 err \
  "--size 2147483648x1080: expected WIDTHxHEIGHT, each 1 to 65535 (e.g. 1920x1080)"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16x4294967304 --format rgb24
expect "detect --size wrapping 32 bits -> exit 2" 2 err "--size 16x4294967304: expected"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16x8 --format i420
expect "detect --format unknown -> exit 2" 2 err "unknown pixel format 'i420'"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16x9 --format rgb24 --stride 52
expect "detect: frame shorter than its rows -> exit 1, naming the file and the input" 1 \
  err "--frame $TMP/red.rgb into input 'images': HTPU_EINVAL: frame: 16x9 rgb24 with a stride of 52 needs 464 bytes, got 416"
run detect "${DET[@]}" --frame "$TMP/red.rgb" --size 16x8 --format rgb24 --stride 40
expect "detect: stride below a row -> exit 1" 1 \
  err "stride 40 is smaller than a row of 16 rgb24 pixels (48 bytes): expected 0 (rows packed) or at least 48"
run detect "${DET[@]}" --image "$TMP/red.ppm" --stride 52
expect "detect --image with --stride: not ignored -> exit 2" 2 \
  err "--stride describes a raw --frame; an --image (PPM or PGM) has its own size and format"
run detect "${DET[@]}" --image "$TMP/red.ppm" --size 16x8 --format rgb24
expect "detect --image with --size -> exit 2" 2 err "--size describes a raw --frame"
run run "$TMP/det.bin" "${LIBS[@]}" --image "images=$TMP/red.ppm" --uv-offset 8
expect "run --image with --uv-offset -> exit 2" 2 err "--uv-offset describes a raw --frame"
run detect "${DET[@]}" --frame "$TMP/white.nv12" --size 16x9 --format nv12
expect "detect: odd nv12 height -> exit 1" 1 err "nv12 needs an even width and height"
run detect "${DET[@]}" --image "$TMP/det.txt"
expect "detect --image of a text file -> exit 1" 1 err "not a binary PPM (P6) or PGM (P5)"
head -c 100 "$TMP/red.ppm" >"$TMP/short.ppm"
run detect "${DET[@]}" --image "$TMP/short.ppm"
expect "detect --image truncated -> exit 1" 1 err "a 16x8 P6 image has 384 bytes of pixels, got"
run detect "${DET[@]}" --image "$TMP/red.ppm" --crop 10,0,10,8
expect "detect --crop outside the frame -> exit 1" 1 \
  err "--image $TMP/red.ppm into input 'images': HTPU_EINVAL: frame: crop 10x8 at (10, 0) is outside the 16x8 frame: expected x + width <= 16 and y + height <= 8"
for c in -1,0,8,8 0,0,4294967297,8 0,0,8,0 1,2,3 0,0,8,8,; do
  run detect "${DET[@]}" --image "$TMP/red.ppm" --crop "$c"
  expect "detect --crop $c: malformed, negative, past 32 bits or empty -> exit 2" 2 \
    err "--crop $c: expected X,Y,WIDTH,HEIGHT in pixels (each 0 to 4294967295, WIDTH and HEIGHT at least 1"
done
run detect "${DET[@]}" --image "$TMP/red.ppm" --resize zoom
expect "detect --resize unknown -> exit 2" 2 err "unknown resize mode 'zoom'"
run detect "${DET[@]}" --image "$TMP/red.ppm" --score high
expect "detect --score not a number -> exit 2" 2 err "--score high: expected a number"
for t in -0.5 1.5 1e9; do
  run detect "${DET[@]}" --image "$TMP/red.ppm" --score "$t"
  expect "detect --score $t out of 0..1 -> exit 2" 2 err "--score $t: expected a number in 0..1"
done
run detect "${DET[@]}" --image "$TMP/red.ppm" --iou 2
expect "detect --iou out of range -> exit 2" 2 err "--iou 2: expected a number in 0..1"
run detect "${DET[@]}" --image "$TMP/red.ppm" --head yolo
expect "detect --head unknown -> exit 2" 2 err "unknown head 'yolo'"
run detect "${DET[@]}" --image "$TMP/red.ppm" --head ultralytics_pose
expect "detect --head pose on a detect head -> exit 1" 1 err "the pose head needs 4 box values"
run detect "$TMP/det.bin" "${LIBS[@]}" --image "$TMP/red.ppm"
expect "detect: a head read by its smaller axis says so and names the layout option -> exit 1" 1 \
  err "decoding the outputs of graph 'detector': HTPU_EINVAL: output 'output0' [1, 7, 4] has 4 values per anchor (read anchors_first from the smaller axis; name the head layout if the other holds an anchor's values); the ultralytics head needs 4 box values and at least 1 class score"
run detect "${DET[@]}" --image "$TMP/red.ppm" --classes 2
expect "detect --classes not the head's -> exit 1" 1 \
  err "has 7 values per anchor (read channels_first, the layout given); the ultralytics head needs 4 box values and 2 class scores (the class count given): 6 values"
run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/no-such.txt"
expect "detect --labels missing -> exit 1" 1 err "--labels $TMP/no-such.txt: cannot open it"
# --labels reads whole lines: a long name stays one label (the next keep their classes); one
# past the bound, a NUL byte or a line past the classes' bound is an error naming the line
{ printf '%0300d\n' 0; printf 'dog\nbird\n'; } >"$TMP/long.txt"
run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/long.txt" --json
json_check "detect --labels: a 300-byte name is one label, the next one class 1's" \
  'j[0].class == 1 && j[0].label == "dog" && j[1].label.length == 300 && j[2].label == "bird"'
{ printf 'cat\n'; printf '%01025d\n' 0; printf 'bird\n'; } >"$TMP/toolong.txt"
run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/toolong.txt"
expect "detect --labels with a name past 1024 bytes -> exit 1, naming the file and line" 1 \
  err "--labels $TMP/toolong.txt: line 2 is 1025 bytes long; a class name may have at most 1024"
printf 'cat\ndo\000g\n' >"$TMP/nul.txt"
run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/nul.txt"
expect "detect --labels with a NUL byte -> exit 1, naming the line" 1 \
  err "--labels $TMP/nul.txt: line 2 holds a NUL byte"
yes x | head -n 65537 >"$TMP/many.txt"
run detect "${DET[@]}" --image "$TMP/red.ppm" --labels "$TMP/many.txt"
expect "detect --labels past 65536 lines -> exit 1" 1 \
  err "--labels $TMP/many.txt: more than 65536 lines"
run detect "${DET[@]}" --image "$TMP/red.ppm" --draw "$TMP/no-such-dir/out.png"
expect "detect --draw into a missing directory -> exit 1" 1 err "cannot write it"
run run "$TMP/det.bin" "${LIBS[@]}" --image "pixels=$TMP/red.ppm"
expect "run --image for an unknown input -> exit 2" 2 err "name the input as --image NAME=FILE"
run run "$TMP/det.bin" "${LIBS[@]}" --image "images=$TMP/red.ppm" --input "images=$TMP/red.rgb"
expect "run: an input given twice -> exit 2" 2 err "input 'images' given twice"

harness_summary
