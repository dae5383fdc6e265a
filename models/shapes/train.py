#!/usr/bin/python3
"""Trains, quantizes and exports the shapes detector demo (models/shapes/README.md).

    /usr/bin/python3 models/shapes/train.py [--out DIR] [--build DIR] [--save-float NPZ]
                                            [--from-float NPZ]

Needs only numpy. Frames are drawn here: a smooth random background with noise, and one to four
filled shapes (square, disc, triangle) of random colours and sizes at random places. Training
frames of random sizes and aspect ratios go through a letterbox to the network's 64x64 input
(numpy's version of the library's: bilinear, grey 114 padding, centred), so the network learns
what the library will give it. A small YOLO-like convolutional network, trained in float32
numpy, then quantized after training (net.py has the frames and the network). Its one output
is in the Ultralytics head layout, [1, 4 + 3, 64]: cx, cy, w, h in input pixels, then the three
class scores, for each cell of an 8x8 grid, so HexagonTpu.Vision and `htpu detect` decode it
as they would a YOLOv8 export.

Outputs (in --out, default: this script's directory):
  shapes.txt    the model as a reference-backend text description, quantized data inline
  shapes.bin    shapes.txt built with htpu-refbuild (format version 2: the ops of a detector)
  labels.txt    the class names, one a line
  frames/       held-out frames, never used in training: PPM (P6) files and raw NV12 ones
  truth.txt     each held-out frame's objects: class and box (x1, y1, x2, y2 in frame pixels)
  meta.json     training settings, the float model's figures and what `htpu detect` finds on
                the held-out frames with the quantized model

Deterministic: fixed seeds and single-threaded BLAS.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse
import json
import subprocess
import sys

import numpy as np

from net import (BOX_MUL, CH, CLASSES, GRID, NC, SIZE, STRIDE, draw_frame, evaluate_float,
                 forward, grid_add, init_params, loss_and_grads, match, training_set)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

DEMO_SCORE = 0.25    # the thresholds the demo is scored with (examples/detect.exs)
DEMO_IOU = 0.5
TRAIN_SEED = 33
TEST_SEED = 3300     # held-out frames: another generator stream, never seen in training
TRAIN_FRAMES = 4000
STEPS = 3000
BATCH = 16
LR = 2e-3


def train(xs, boxes, rng):
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    for step in range(1, STEPS + 1):
        idx = rng.integers(0, len(xs), BATCH)
        xb = xs[idx].astype(np.float32) / 255.0
        if rng.random() < 0.5:  # mirror: the shapes are symmetric left to right
            xb = xb[:, :, ::-1]
            bb = [[(c, SIZE - x2, y1, SIZE - x1, y2) for c, x1, y1, x2, y2 in boxes[i]]
                  for i in idx]
        else:
            bb = [boxes[i] for i in idx]
        loss, g = loss_and_grads(p, np.ascontiguousarray(xb), bb)
        lr = LR * (0.1 if step > STEPS * 0.8 else 1.0)
        for k in p:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            mhat, vhat = m[k] / (1 - b1 ** step), v[k] / (1 - b2 ** step)
            p[k] -= (lr * mhat / (np.sqrt(vhat) + eps)).astype(np.float32)
        if step % 200 == 0:
            print(f"step {step}  loss {loss:.3f}", flush=True)
    return p


# ---- post-training quantization and export ----------------------------------------------------
#
# As models/digits: u8 activations per tensor, ranges calibrated on training frames (a convolution
# followed by Relu gets [0, max], the Relu fused into its encoding); i8 weights per output
# channel (axis 3 of HWIO), symmetric; i32 bias with scale = input scale * weight scale.

def rne(a):
    return np.rint(a)


def u8_params(lo, hi):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    return scale, int(np.clip(round(-lo / float(scale)), 0, 255))


def quantize_weights(w):
    amax = np.maximum(np.abs(w).reshape(-1, w.shape[3]).max(axis=0), 1e-6)
    scales = (amax / 127.0).astype(np.float32)
    return np.clip(rne(w / scales.astype(np.float64)), -127, 127).astype(np.int64), scales


def f32_text(x):
    return repr(float(np.float32(x)))


def num_list(values, fmt=str, per_line=16):
    vals = [fmt(v) for v in np.ravel(values)]
    rows = [",".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "[\n    " + ",\n    ".join(rows) + "\n  ]"


def encodings(p, xs):
    _, _, _, acts = forward(p, xs.astype(np.float32) / 255.0)
    enc = {name: u8_params(0.0, acts[name].max()) for name in ("c1", "c2", "c3", "c4", "c5", "c6")}
    enc["cat"] = u8_params(0.0, max(acts["c3"].max(), acts["c5"].max()))
    enc["box_t"] = u8_params(acts["box_t"].min(), acts["box_t"].max())
    enc["cls_t"] = u8_params(acts["cls_t"].min(), acts["cls_t"].max())
    enc["sig"] = (np.float32(1 / 255.0), 0)
    enc["box_m"] = u8_params(0.0, float(SIZE))
    enc["box"] = u8_params(-STRIDE, SIZE + STRIDE)
    lo, hi = -STRIDE, SIZE + STRIDE  # the head: boxes and scores in one u16 tensor
    scale = np.float32((hi - lo) / 65535.0)
    enc["head"] = (scale, int(round(-lo / float(scale))))
    return enc


def q_text(dtype, enc):
    return f"{dtype} scale={f32_text(enc[0])} zero_point={enc[1]}"


def conv_lines(p, name, src, dst, in_enc, out_enc, pad):
    k, ci, co = p[name + "_w"].shape[0], p[name + "_w"].shape[2], p[name + "_w"].shape[3]
    wq, ws = quantize_weights(p[name + "_w"])
    bs = (np.float32(in_enc[0]) * ws).astype(np.float32)
    bq = rne(p[name + "_b"] / bs.astype(np.float64)).astype(np.int64)
    pad_text = f" pad=[{pad},{pad},{pad},{pad}]" if pad else ""
    return [
        f"  static {name}_w i8 [{k},{k},{ci},{co}] axis=3 scales={num_list(ws, f32_text, 4)} "
        f"data={num_list(wq)}",
        f"  static {name}_b i32 [{co}] axis=0 scales={num_list(bs, f32_text, 4)} "
        f"data={num_list(bq, str, 8)}",
        f"  op Conv2d {src} {name}_w {name}_b -> {dst}{pad_text} name={name}",
    ]


def model_text(p, enc, stats):
    L = [f"""\
# Shapes detector for the reference backend (docs/reference-format.md, docs/vision.md).
# Generated by models/shapes/train.py -- do not edit; rerun the script instead.
# Classes: {', '.join(CLASSES)}. Output in the Ultralytics head layout [1, 4 + {NC}, {GRID * GRID}].
# Float model on {stats['val_objects']} objects of validation frames: {stats['val_found']} found,
# {stats['val_false']} false detections.
meta build_id=shapes-yolo-u8
graph shapes
  input image u8 [1,{SIZE},{SIZE},3] scale={f32_text(1 / 255.0)} zero_point=0
  output detections u16 [1,{4 + NC},{GRID * GRID}] {q_text('u16', enc['head'])[4:]}"""]
    src, size, in_enc = "image", SIZE, (np.float32(1 / 255.0), 0)
    for k, name in enumerate(("c1", "c2", "c3", "c4")):
        e, co = q_text("u8", enc[name])[3:], CH[k]
        L.append(f"  native {name}_a u8 [1,{size},{size},{co}] {e}")
        L.append(f"  native {name}_r u8 [1,{size},{size},{co}] {e}")
        L.append(f"  native {name}_p u8 [1,{size // 2},{size // 2},{co}] {e}")
        L += conv_lines(p, name, src, f"{name}_a", in_enc, enc[name], 1)
        L.append(f"  op Relu {name}_a -> {name}_r")
        L.append(f"  op PoolMax2d {name}_r -> {name}_p filter=[2,2] stride=[2,2]")
        src, size, in_enc = f"{name}_p", size // 2, enc[name]
    G, g2, c5 = GRID, GRID // 2, CH[4]
    e = q_text("u8", enc["c5"])[3:]
    ec = q_text("u8", enc["cat"])[3:]
    L += [f"  native c5_a u8 [1,{g2},{g2},{c5}] {e}", f"  native c5_r u8 [1,{g2},{g2},{c5}] {e}",
          f"  native c5_p u8 [1,{g2},{g2},{c5}] {e}", f"  native up u8 [1,{G},{G},{c5}] {e}",
          f"  native cat u8 [1,{G},{G},{CH[2] + c5}] {ec}"]
    L += conv_lines(p, "c5", "c4_p", "c5_a", enc["c4"], enc["c5"], 1)
    L += ["  op Relu c5_a -> c5_r",
          "  op PoolMax2d c5_r -> c5_p filter=[3,3] stride=[1,1] pad=[1,1,1,1]",
          "  op ResizeNearestNeighbor c5_p -> up",
          "  op Concat c3_p up -> cat axis=3"]
    e = q_text("u8", enc["c6"])[3:]
    L += [f"  native c6_a u8 [1,{G},{G},{CH[5]}] {e}", f"  native f u8 [1,{G},{G},{CH[5]}] {e}"]
    L += conv_lines(p, "c6", "cat", "c6_a", enc["cat"], enc["c6"], 1)
    L.append("  op Relu c6_a -> f")
    g = grid_add()
    L += [f"  native box_t u8 [1,{G},{G},4] {q_text('u8', enc['box_t'])[3:]}",
          f"  native box_s u8 [1,{G},{G},4] {q_text('u8', enc['sig'])[3:]}",
          f"  native box_m u8 [1,{G},{G},4] {q_text('u8', enc['box_m'])[3:]}",
          f"  native box u8 [1,{G},{G},4] {q_text('u8', enc['box'])[3:]}",
          f"  native cls_t u8 [1,{G},{G},{NC}] {q_text('u8', enc['cls_t'])[3:]}",
          f"  native cls u8 [1,{G},{G},{NC}] {q_text('u8', enc['sig'])[3:]}",
          f"  native head u16 [1,{G},{G},{4 + NC}] {q_text('u16', enc['head'])[4:]}",
          f"  native cells u16 [1,{G * G},{4 + NC}] {q_text('u16', enc['head'])[4:]}",
          f"  static box_mul f32 [1,1,1,4] data={num_list(BOX_MUL, f32_text)}",
          f"  static grid f32 [1,{G},{G},4] data={num_list(g, f32_text)}"]
    L += conv_lines(p, "box", "f", "box_t", enc["c6"], enc["box_t"], 0)
    L += conv_lines(p, "cls", "f", "cls_t", enc["c6"], enc["cls_t"], 0)
    L += ["  op Sigmoid box_t -> box_s", "  op ElementWiseMultiply box_s box_mul -> box_m",
          "  op ElementWiseAdd box_m grid -> box", "  op Sigmoid cls_t -> cls",
          "  op Concat box cls -> head axis=3", "  op Reshape head -> cells",
          "  op Transpose cells -> detections perm=[0,2,1]"]
    return "\n".join(L) + "\n"


# ---- held-out frames --------------------------------------------------------------------------

# (width, height, format): odd sizes, portrait and landscape, two NV12 ones (even sizes)
TEST_FRAMES = [(160, 120, "rgb24"), (200, 150, "rgb24"), (256, 144, "rgb24"),
               (120, 160, "rgb24"), (224, 224, "rgb24"), (199, 131, "rgb24"),
               (320, 180, "nv12"), (144, 176, "rgb24"), (180, 120, "rgb24"),
               (161, 121, "rgb24"), (240, 160, "nv12"), (128, 96, "rgb24")]


def rgb_to_nv12(img):
    """BT.601 limited range (what OpenCV's NV12 -> RGB inverts), chroma averaged over 2x2."""
    f = img.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 16 + 0.257 * r + 0.504 * g + 0.098 * b
    u = 128 - 0.148 * r - 0.291 * g + 0.439 * b
    v = 128 + 0.439 * r - 0.368 * g - 0.071 * b
    h, w = y.shape
    sub = lambda c: c.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    uv = np.stack([sub(u), sub(v)], axis=-1)
    q = lambda a: np.clip(np.rint(a), 0, 255).astype(np.uint8)
    return q(y).tobytes() + q(uv).tobytes()


def write_frames(out_dir, rng):
    os.makedirs(out_dir, exist_ok=True)
    truth = []
    for i, (w, h, fmt) in enumerate(TEST_FRAMES):
        img, objects = draw_frame(rng, h, w)
        if fmt == "rgb24":
            name = f"frame{i:02d}_{w}x{h}.ppm"
            data = b"P6\n%d %d\n255\n" % (w, h) + img.tobytes()
        else:
            name = f"frame{i:02d}_{w}x{h}.nv12"
            data = rgb_to_nv12(img)
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        truth.append({"file": name, "format": fmt, "width": w, "height": h,
                      "objects": [{"class": c, "label": CLASSES[c],
                                   "box": [round(v, 2) for v in b]} for c, *b in objects]})
    return truth


def truth_text(truth):
    """truth.txt: a line per object (examples/detect.exs reads it without a JSON library)."""
    lines = ["# the held-out frames' objects (models/shapes/train.py): file format width height "
             "class label x1 y1 x2 y2, boxes in frame pixels"]
    for t in truth:
        for o in t["objects"]:
            lines.append(f"{t['file']} {t['format']} {t['width']} {t['height']} {o['class']} "
                         f"{o['label']} " + " ".join(f"{v:.2f}" for v in o["box"]))
    return "\n".join(lines) + "\n"


def run_htpu(htpu, model, out_dir, truth):
    """What `htpu detect` finds on each held-out frame with the quantized model."""
    hits = false = total = 0
    for t in truth:
        path = os.path.join(out_dir, "frames", t["file"])
        src = (["--image", path] if t["format"] == "rgb24" else
               ["--frame", path, "--size", f"{t['width']}x{t['height']}", "--format", "nv12"])
        res = subprocess.run([htpu, "detect", model, "--backend", "reference", "--system-lib",
                              "reference", "--score", str(DEMO_SCORE), "--iou", str(DEMO_IOU)]
                             + src + ["--json"], check=True,
                             capture_output=True, text=True)
        found = [(d["class"], d["score"], *d["box"]) for d in json.loads(res.stdout)]
        objs = [(o["class"], *o["box"]) for o in t["objects"]]
        h, f = match(found, objs)
        hits, false, total = hits + h, false + f, total + len(objs)
    return hits, false, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE, help="output directory (default: %(default)s)")
    ap.add_argument("--build", default=os.path.join(REPO, "build", "plain"),
                    help="where htpu-refbuild and htpu are (default: %(default)s)")
    ap.add_argument("--save-float", metavar="NPZ", help="also save the float weights there")
    ap.add_argument("--from-float", metavar="NPZ",
                    help="skip training: quantize and export the float weights saved there")
    args = ap.parse_args()
    refbuild, htpu = (os.path.join(args.build, n) for n in ("htpu-refbuild", "htpu"))
    if not (os.access(refbuild, os.X_OK) and os.access(htpu, os.X_OK)):
        sys.exit(f"train.py: no htpu-refbuild and htpu in {args.build}; run `make` first")

    rng = np.random.default_rng(TRAIN_SEED)
    xs, boxes = training_set(rng, TRAIN_FRAMES)
    nval = 500
    if args.from_float:
        p = {k: v for k, v in np.load(args.from_float).items()}
    else:
        p = train(xs[nval:], boxes[nval:], rng)
    val_found, val_false, val_objects = evaluate_float(p, xs[:nval], boxes[:nval])
    print(f"float, validation: {val_found}/{val_objects} found, {val_false} false")
    if args.save_float:
        np.savez(args.save_float, **p)
    enc = encodings(p, xs[nval:nval + 256])
    stats = {"val_found": val_found, "val_false": val_false, "val_objects": val_objects}

    out = lambda name: os.path.join(args.out, name)
    with open(out("shapes.txt"), "w") as f:
        f.write(model_text(p, enc, stats))
    subprocess.run([refbuild, out("shapes.txt"), out("shapes.bin")], check=True)
    with open(out("labels.txt"), "w") as f:
        f.write("\n".join(CLASSES) + "\n")
    truth = write_frames(out("frames"), np.random.default_rng(TEST_SEED))
    with open(out("truth.txt"), "w") as f:
        f.write(truth_text(truth))
    found, false, objects = run_htpu(htpu, out("shapes.bin"), args.out, truth)
    print(f"quantized, held-out frames through htpu detect: {found}/{objects} found, "
          f"{false} false")
    meta = {
        "model": "shapes.bin", "graph": "shapes", "classes": CLASSES,
        "input": {"name": "image", "shape": [1, SIZE, SIZE, 3], "dtype": "u8",
                  "scale": 1 / 255.0, "zero_point": 0},
        "output": {"name": "detections", "shape": [1, 4 + NC, GRID * GRID], "dtype": "u16",
                   "scale": float(enc["head"][0]), "zero_point": enc["head"][1],
                   "layout": "Ultralytics: cx, cy, w, h (input pixels), then class scores"},
        "float_validation": stats,
        "held_out": {"frames": len(truth), "objects": objects, "found_expected": found,
                     "false_expected": false, "score": DEMO_SCORE, "iou": DEMO_IOU,
                     "match_iou": 0.5},
        "training": {"frames": TRAIN_FRAMES - nval, "steps": STEPS, "batch": BATCH, "lr": LR,
                     "optimizer": "Adam", "seed": TRAIN_SEED, "test_seed": TEST_SEED},
        "generated_by": "models/shapes/train.py",
    }
    with open(out("meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
