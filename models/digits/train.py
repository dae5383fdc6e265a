#!/usr/bin/python3
"""Trains, quantizes and exports the handwritten-digit demo model (models/digits/README.md).

    /usr/bin/python3 models/digits/train.py [--out DIR] [--refbuild PATH]

Needs only Debian's python3-numpy and python3-sklearn (the latter just for the data file it
ships, sklearn/datasets/data/digits.csv.gz: 1797 8x8 images, pixels 0..16, and their labels).
Everything else -- split, training, quantization, the simulation of the quantized graph -- is
plain numpy, so every step is visible here.

Outputs (in --out, default: this script's directory):
  digits.txt       the model as a reference-backend text description, quantized data inline
  digits.bin       digits.txt built with htpu-refbuild (docs/reference-format.md)
  test_x.f32       held-out images, raw little-endian f32 [N,64], pixel/16 (what the model takes)
  test_y.u8        held-out labels [N]
  float_pred.u8    the float model's predicted class per held-out image [N]
  meta.json        accuracies, sample count, tensor names/shapes/quantization, how it was made

Deterministic: fixed seeds, a fixed stratified split, single-threaded BLAS and float64 training,
so a rerun on the same machine gives byte-identical files. (Another numpy/BLAS build may sum in
a different order and move a weight by one quantization step; the committed files are the ones
the demo uses.)
"""
import os

# One BLAS thread: a multithreaded BLAS may split sums differently from run to run, and the
# exported integers must not depend on that. Must be set before numpy is imported.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse
import gzip
import json
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

SPLIT_SEED = 1797      # the split depends on this alone
TRAIN_SEED = 64        # weight init and minibatch order
TEST_FRACTION = 0.3    # stratified 70/30: 1258 training, 539 held-out images
HIDDEN = 64            # 64 -> 64 ReLU -> 10: ~4.8k parameters, ~97% on held-out data
EPOCHS = 150
BATCH = 32
LR = 1e-3
WEIGHT_DECAY = 1e-4    # L2 on the weights: keeps them small, which also helps 8-bit weights

# Input quantization. Pixels are integers 0..16 and the model takes pixel/16, so u8 with
# scale 1/16 and zero point 0 stores exactly the original pixel value: the input is lossless,
# no calibration needed. (A calibrated [0,1] range, scale 1/255, would round 15 of 17 levels.)
IN_SCALE = np.float32(1.0 / 16.0)
IN_ZP = 0


# ---- data -----------------------------------------------------------------------------------

def digits_csv_path():
    """The copy of the UCI 8x8 digits data that python3-sklearn ships."""
    import sklearn  # only to find its data directory
    return os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "digits.csv.gz")


def load_digits():
    with gzip.open(digits_csv_path(), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.int64)
    pixels, labels = data[:, :64], data[:, 64]
    assert pixels.shape == (1797, 64) and pixels.min() == 0 and pixels.max() == 16
    return pixels, labels


def stratified_split(labels, fraction, seed):
    """Per class, a seeded permutation; its first round(fraction * count) go to the test set.
    Both index lists come back sorted, so the files keep the data set's order. Done by hand
    rather than with sklearn's train_test_split so the split cannot change with its version."""
    rng = np.random.RandomState(seed)
    test = []
    for c in range(10):
        idx = np.flatnonzero(labels == c)
        idx = idx[rng.permutation(len(idx))]
        test.extend(idx[: int(round(fraction * len(idx)))])
    test = np.sort(np.array(test))
    train = np.setdiff1d(np.arange(len(labels)), test)
    return train, test


# ---- float model: 64 -> HIDDEN ReLU -> 10, softmax cross-entropy, Adam ------------------------

def init_params(rng):
    # He init for the ReLU layer, Glorot-ish for the output layer. Weights are [out, in], the
    # layout FullyConnected uses, so they are exported without a transpose.
    return {
        "w1": rng.randn(HIDDEN, 64) * np.sqrt(2.0 / 64),
        "b1": np.zeros(HIDDEN),
        "w2": rng.randn(10, HIDDEN) * np.sqrt(1.0 / HIDDEN),
        "b2": np.zeros(10),
    }


def forward(p, x):
    pre = x @ p["w1"].T + p["b1"]
    h = np.maximum(pre, 0.0)
    return pre, h, h @ p["w2"].T + p["b2"]


def train(x, y, seed):
    rng = np.random.RandomState(seed)
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0
    onehot = np.eye(10)[y]
    for epoch in range(EPOCHS):
        order = rng.permutation(len(x))
        for start in range(0, len(x), BATCH):
            idx = order[start:start + BATCH]
            xb, yb = x[idx], onehot[idx]
            pre, h, logits = forward(p, xb)
            z = logits - logits.max(axis=1, keepdims=True)
            prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            d_logits = (prob - yb) / len(idx)          # d(mean cross-entropy)/d logits
            d_h = d_logits @ p["w2"]
            d_pre = d_h * (pre > 0)
            grads = {
                "w2": d_logits.T @ h + WEIGHT_DECAY * p["w2"],
                "b2": d_logits.sum(axis=0),
                "w1": d_pre.T @ xb + WEIGHT_DECAY * p["w1"],
                "b1": d_pre.sum(axis=0),
            }
            t += 1
            for k in p:
                m[k] = b1 * m[k] + (1 - b1) * grads[k]
                v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
                mhat = m[k] / (1 - b1 ** t)
                vhat = v[k] / (1 - b2 ** t)
                p[k] -= LR * mhat / (np.sqrt(vhat) + eps)
    return p


# ---- post-training quantization ---------------------------------------------------------------
#
# What QNN's HTP converters produce for such a graph, and what the reference backend executes:
#   activations  u8 per tensor, scale/zero point from the min/max seen on the training set
#   weights      i8 per axis (one scale per output channel, axis 0 of [M,K]), symmetric (zero
#                point 0, range -127..127): a channel with small weights keeps its precision
#   bias         i32 per axis, zero point 0, scale[c] = input_scale * weight_scale[c]: the scale
#                of the integer accumulator, so on the NPU the bias adds to it directly.
# Scales are float32 from the start, since that is what the file stores and the backend uses.

def rne(a):
    return np.rint(a)  # numpy rounds half to even, as the backend does


def quantize_weights_per_axis(w):
    """Symmetric i8 per output channel (rows of w)."""
    # A floor on the range: a ReLU unit that never fires during training ("dead") only feels
    # the weight decay, its weights shrink towards 1e-68, whose scale would underflow to an f32
    # 0 the format rejects. With the floor such a channel just quantizes to all zeros.
    amax = np.maximum(np.abs(w).max(axis=1), 1e-6)
    scales = (amax / 127.0).astype(np.float32)
    q = np.clip(rne(w / scales.astype(np.float64)[:, None]), -127, 127).astype(np.int64)
    return q, scales


def quantize_bias(b, in_scale, w_scales):
    scales = (np.float32(in_scale) * w_scales).astype(np.float32)  # the product, in f32
    q = rne(b / scales.astype(np.float64)).astype(np.int64)
    assert np.abs(q).max() < 2**31 - 1
    return q, scales


def u8_params(lo, hi):
    """Asymmetric u8 for the float range [lo, hi], widened to hold 0 so that zero (ReLU's
    output, padding) is exact: scale = (hi - lo) / 255, zero point = round(-lo / scale)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(round(-lo / float(scale)), 0, 255))
    return scale, zp


# ---- simulation of the quantized graph with the reference backend's arithmetic ----------------
#
# reference/model/interp.c + ops.c + src/quant.c: every op dequantizes its operands to f32
# (x = (float)((double)(q - zp) * scale)), computes in f32 -- FullyConnected accumulates
# bias + sum_k x[k]*w[k] in double, k ascending, then rounds to float -- and requantizes its
# result: q = saturate(round_half_even(x / scale) + zp), x / scale taken in double. Reproduced
# here step by step (same accumulation order, so the results are bit-identical, not "close").

def dequant(q, scale, zp):
    return (np.asarray(q, np.float64) - zp) * np.asarray(scale, np.float32).astype(np.float64)


def deq_f32(q, scale, zp):
    return dequant(q, scale, zp).astype(np.float32)


def requant_u8(x_f32, scale, zp):
    qf = np.clip(x_f32.astype(np.float64) / np.float64(scale), 0 - zp, 255 - zp)
    return (rne(qf) + zp).astype(np.int64)


def ref_fully_connected(x_f32, w_f32, b_f32):
    acc = np.broadcast_to(b_f32.astype(np.float64), (x_f32.shape[0], w_f32.shape[0])).copy()
    xd, wd = x_f32.astype(np.float64), w_f32.astype(np.float64)
    for k in range(x_f32.shape[1]):
        acc += xd[:, k:k + 1] * wd[None, :, k]  # f32*f32 is exact in double
    return acc.astype(np.float32)


def simulate(q_in, qm):
    """u8 inputs [N,64] -> u8 logits [N,10], as the reference backend computes them."""
    x = deq_f32(q_in, IN_SCALE, IN_ZP)
    w1 = deq_f32(qm["w1_q"], qm["w1_s"][:, None], 0)
    b1 = deq_f32(qm["b1_q"], qm["b1_s"], 0)
    h_pre = requant_u8(ref_fully_connected(x, w1, b1), qm["h_s"], qm["h_zp"])
    # Relu: dequantize, max(0, .), requantize with the same parameters -> unchanged codes
    h_f = np.maximum(deq_f32(h_pre, qm["h_s"], qm["h_zp"]), np.float32(0))
    h = requant_u8(h_f, qm["h_s"], qm["h_zp"])
    w2 = deq_f32(qm["w2_q"], qm["w2_s"][:, None], 0)
    b2 = deq_f32(qm["b2_q"], qm["b2_s"], 0)
    x2 = deq_f32(h, qm["h_s"], qm["h_zp"])
    return requant_u8(ref_fully_connected(x2, w2, b2), qm["out_s"], qm["out_zp"])


def quantize_model(p, x_train):
    """Calibrates the activation ranges on the training set and quantizes the parameters."""
    pre, _, logits = forward(p, x_train)
    qm = {}
    # hidden layer: FullyConnected -> h_pre -> Relu -> h. h_pre gets the range [0, max] rather
    # than [min, max]: negative values saturate to code zp = 0, i.e. to 0.0, which is the ReLU
    # itself (what converters do when they fuse a ReLU into the preceding op's encoding), and
    # all 256 codes go to the values the next layer actually sees. h has the same parameters,
    # so the Relu op passes the codes through unchanged.
    qm["h_s"], qm["h_zp"] = u8_params(0.0, pre.max())
    qm["out_s"], qm["out_zp"] = u8_params(logits.min(), logits.max())
    qm["w1_q"], qm["w1_s"] = quantize_weights_per_axis(p["w1"])
    qm["b1_q"], qm["b1_s"] = quantize_bias(p["b1"], IN_SCALE, qm["w1_s"])
    qm["w2_q"], qm["w2_s"] = quantize_weights_per_axis(p["w2"])
    qm["b2_q"], qm["b2_s"] = quantize_bias(p["b2"], qm["h_s"], qm["w2_s"])
    return qm


# ---- export -----------------------------------------------------------------------------------

def f32_text(x):
    """A float32 as text that strtod + (float) turns back into the same float32: repr of its
    exact double value (the builder parses with strtod and narrows to float)."""
    return repr(float(np.float32(x)))


def int_list(values, per_line=16, indent="    "):
    vals = [str(int(v)) for v in np.ravel(values)]
    rows = [",".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "[\n" + ",\n".join(indent + r for r in rows) + "\n  ]"


def f32_list(values, per_line=4, indent="    "):
    vals = [f32_text(v) for v in np.ravel(values)]
    rows = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "[\n" + ",\n".join(indent + r for r in rows) + "\n  ]"


def model_text(qm, stats):
    h = f"scale={f32_text(qm['h_s'])} zero_point={qm['h_zp']}"
    return f"""\
# Handwritten-digit classifier for the reference backend (docs/reference-format.md).
# Generated by models/digits/train.py -- do not edit; rerun the script instead.
# 8x8 digits (UCI, as shipped by python3-sklearn), stratified 70/30 split (seed {SPLIT_SEED}).
# MLP 64 -> {HIDDEN} ReLU -> 10, trained in float64 numpy, post-training quantized:
#   activations u8 per tensor (calibrated on the training set), weights i8 per output channel
#   (symmetric), bias i32 per channel with scale = input scale * weight scale.
# Held-out accuracy: float {stats['float_acc']:.4f}, quantized {stats['quant_acc']:.4f}.
meta build_id=digits-mlp-u8
graph digits
  # pixel/16: u8 code = the original 0..16 pixel value (lossless)
  input image u8 [1,64] scale={f32_text(IN_SCALE)} zero_point={IN_ZP}
  static fc1_w i8 [{HIDDEN},64] axis=0 scales={f32_list(qm['w1_s'])} data={int_list(qm['w1_q'])}
  static fc1_b i32 [{HIDDEN}] axis=0 scales={f32_list(qm['b1_s'])} data={int_list(qm['b1_q'], 8)}
  native fc1_out u8 [1,{HIDDEN}] {h}
  native hidden u8 [1,{HIDDEN}] {h}
  static fc2_w i8 [10,{HIDDEN}] axis=0 scales={f32_list(qm['w2_s'])} data={int_list(qm['w2_q'])}
  static fc2_b i32 [10] axis=0 scales={f32_list(qm['b2_s'])} data={int_list(qm['b2_q'], 8)}
  output logits u8 [1,10] scale={f32_text(qm['out_s'])} zero_point={qm['out_zp']}
  op FullyConnected image fc1_w fc1_b -> fc1_out name=fc1
  op Relu fc1_out -> hidden name=relu1
  op FullyConnected hidden fc2_w fc2_b -> logits name=fc2
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE, help="output directory (default: %(default)s)")
    ap.add_argument("--refbuild", default=os.path.join(REPO, "build", "plain", "htpu-refbuild"),
                    help="htpu-refbuild to build digits.bin with (default: %(default)s; `make` "
                         "builds it)")
    args = ap.parse_args()
    if not os.access(args.refbuild, os.X_OK):
        sys.exit(f"train.py: {args.refbuild} not found; run `make` first or pass --refbuild")

    pixels, labels = load_digits()
    x = pixels.astype(np.float64) / 16.0
    tr, te = stratified_split(labels, TEST_FRACTION, SPLIT_SEED)
    p = train(x[tr], labels[tr], TRAIN_SEED)

    float_pred = forward(p, x[te])[2].argmax(axis=1)
    float_acc = float(np.mean(float_pred == labels[te]))
    train_acc = float(np.mean(forward(p, x[tr])[2].argmax(axis=1) == labels[tr]))

    qm = quantize_model(p, x[tr])
    # the demo passes pixel/16 as f32; the library quantizes it with the input's scale, which
    # gives back exactly the pixel value
    q_logits = simulate(pixels[te], qm)
    quant_pred = q_logits.argmax(axis=1)  # first maximum on ties, like the C demo
    quant_acc = float(np.mean(quant_pred == labels[te]))
    agree = float(np.mean(quant_pred == float_pred))
    q_train_acc = float(np.mean(simulate(pixels[tr], qm).argmax(axis=1) == labels[tr]))
    stats = {"float_acc": float_acc, "quant_acc": quant_acc}
    print(f"train {len(tr)}  test {len(te)}")
    print(f"float      train {train_acc:.4f}  held-out {float_acc:.4f}")
    print(f"quantized  train {q_train_acc:.4f}  held-out {quant_acc:.4f}  "
          f"(agreement with float {agree:.4f})")

    os.makedirs(args.out, exist_ok=True)
    out = lambda name: os.path.join(args.out, name)
    txt = out("digits.txt")
    with open(txt, "w") as f:
        f.write(model_text(qm, stats))
    subprocess.run([args.refbuild, txt, out("digits.bin")], check=True)
    x[te].astype("<f4").tofile(out("test_x.f32"))
    labels[te].astype(np.uint8).tofile(out("test_y.u8"))
    float_pred.astype(np.uint8).tofile(out("float_pred.u8"))

    meta = {
        "model": "digits.bin",
        "graph": "digits",
        "architecture": f"FullyConnected 64->{HIDDEN}, Relu, FullyConnected {HIDDEN}->10 (logits)",
        "dataset": "UCI 8x8 optical digits as shipped by python3-sklearn (digits.csv.gz)",
        "split": {"kind": "stratified", "test_fraction": TEST_FRACTION, "seed": SPLIT_SEED,
                  "train_samples": int(len(tr)), "test_samples": int(len(te))},
        "samples": int(len(te)),
        "input": {"name": "image", "shape": [1, 64], "dtype": "u8", "scale": float(IN_SCALE),
                  "zero_point": IN_ZP, "file": "test_x.f32",
                  "file_format": "little-endian f32 [samples,64], pixel value / 16"},
        "output": {"name": "logits", "shape": [1, 10], "dtype": "u8",
                   "scale": float(qm["out_s"]), "zero_point": qm["out_zp"],
                   "meaning": "class scores; the prediction is the argmax (first on ties)"},
        "labels": {"file": "test_y.u8", "file_format": "u8 [samples]"},
        "float_predictions": {"file": "float_pred.u8", "file_format": "u8 [samples]"},
        "float_accuracy": round(float_acc, 6),
        "quantized_accuracy_expected": round(quant_acc, 6),
        "quantized_correct_expected": int(np.sum(quant_pred == labels[te])),
        "agreement_with_float_expected": round(agree, 6),
        "float_train_accuracy": round(train_acc, 6),
        "quantized_train_accuracy": round(q_train_acc, 6),
        "training": {"optimizer": "Adam", "lr": LR, "epochs": EPOCHS, "batch": BATCH,
                     "weight_decay": WEIGHT_DECAY, "seed": TRAIN_SEED},
        "generated_by": "models/digits/train.py",
    }
    with open(out("meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
