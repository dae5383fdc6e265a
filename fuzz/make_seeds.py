#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/ (docs/reliability.md). Standard library only.

    python3 fuzz/make_seeds.py [BUILD]      BUILD holds htpu-refbuild (default build/plain)

build_text/*.txt are written by hand and kept as they are, and so are the files named
found_* (inputs a fuzzer found that pin down a boundary of a check); everything else is made
here:
model_read/ and public_api/ get those texts built with the project's own builder plus the
digits demo model; npy/ gets a few headers (versions 1.0, 2.0, 3.0) as numpy writes them;
quantize/ gets tensor descriptions in the layout fuzz/quantize.c documents; onnx_model/ gets
ONNX EPContext models (test/support/epcontext.py) around the built add and multi models: one
embedded context with Ultralytics' metadata, two contexts, a main_context 0 node, external
names (of what the target's folder holds: fuzz/onnx_model.c), a QDQ model; vision/ frames and heads in the layout fuzz/vision.c documents.
"""
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
sys.path.insert(0, os.path.join(ROOT, "test", "support"))
import epcontext  # noqa: E402  (the tests' ONNX writer)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def models(build):
    refbuild = os.path.join(ROOT, build, "htpu-refbuild")
    texts = os.path.join(CORPUS, "build_text")
    with tempfile.TemporaryDirectory() as tmp:
        # the same bytes fuzz/build_text.c puts in its scratch directory
        for name, n in (("w4.bin", 4), ("w16.bin", 16)):
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(bytes((i * 17 + 3) & 0xFF for i in range(n)))
        for txt in sorted(os.listdir(texts)):
            shutil.copy(os.path.join(texts, txt), tmp)
            out = os.path.join(tmp, txt[:-4] + ".bin")
            # the texts the builder must refuse (regression inputs) give no model
            if subprocess.run([refbuild, txt, out], cwd=tmp, capture_output=True).returncode:
                continue
            with open(out, "rb") as f:
                data = f.read()
            write("model_read", txt[:-4] + ".bin", data)
            write("public_api", txt[:-4] + ".bin", data)
    with open(os.path.join(ROOT, "models", "digits", "digits.bin"), "rb") as f:
        digits = f.read()
    write("model_read", "digits.bin", digits)
    write("public_api", "digits.bin", digits)


def npy(version, descr, fortran, shape, data):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    field = 2 if version == 1 else 4
    pre = 8 + field
    total = pre + len(d) + 1
    pad = (64 - total % 64) % 64
    header = (d + " " * pad + "\n").encode()
    length = struct.pack("<H" if field == 2 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header + data


def npys():
    write("npy", "f32_1x4.npy", npy(1, "<f4", "False", (1, 4), struct.pack("<4f", 1, 2, 3, 4)))
    write("npy", "u8_2x3_v2.npy", npy(2, "|u1", "False", (2, 3), bytes(range(6))))
    write("npy", "i2_scalar_v3.npy", npy(3, "<i2", "True", (), struct.pack("<h", -7)))
    write("npy", "bool_empty.npy", npy(1, "|b1", "False", (0, 5), b""))


def tensor(dtype, kind, rank, axis, dims, params, values, ties=False, raw_scale=False,
           clamp_zp=False, nan_at=False):
    flags = kind | (4 if raw_scale else 0) | (8 if clamp_zp else 0) | (16 if ties else 0)
    flags |= 32 if nan_at else 0
    b = bytes([dtype, flags, (rank - 1) | (axis << 2)]) + bytes(d - 1 for d in dims)
    for scale, zp in params:
        b += struct.pack("<fi", scale, zp)
    if ties:
        return b + struct.pack("<%dh" % len(values), *values)
    return b + struct.pack("<%df" % len(values), *values)


def quantize():
    U8, I8, U16, I16, U32, I32, F16 = range(7)
    NONE, TENSOR, AXIS = range(3)
    write("quantize", "u8_per_tensor", tensor(U8, TENSOR, 2, 0, [1, 4], [(0.1, 128)],
                                              [1.0, -2.5, 12.7, 100.0]))
    write("quantize", "i8_per_axis", tensor(I8, AXIS, 2, 0, [2, 4], [(0.5, 0), (0.25, -3)],
                                            [0.25, 0.75, -1.25, 63.5, -64.0, 1e9, -0.0, 2.0]))
    write("quantize", "u16_ties", tensor(U16, TENSOR, 1, 0, [8], [(1.0, 100)],
                                         [1, 3, 5, -1, -3, 7, 9, 2], ties=True))
    write("quantize", "i32_plain", tensor(I32, NONE, 1, 0, [4], [],
                                          [3e9, -3e9, 0.5, 1.5]))
    write("quantize", "u32_nan", tensor(U32, TENSOR, 1, 0, [4], [(0.125, 7)],
                                        [1.0, math.nan, 2.0, 3.0], clamp_zp=True))
    write("quantize", "f16_edges", tensor(F16, NONE, 1, 0, [6], [],
                                          [65519.0, 65520.0, 1e-8, -0.0, math.inf, 3.14159]))
    # 8*8*8*4 elements, one NaN at 0x0e01 % 2048 = 1537: past the kernel's first block
    write("quantize", "u8_late_nan", tensor(U8, TENSOR, 4, 1, [8, 8, 8, 4], [(0.5, 3)],
                                            [struct.unpack("<f", b"\x01\x0e\x00\x3f")[0],
                                             -1.5, 2.5, 1e6], nan_at=True))
    write("quantize", "i16_bad_scale", tensor(I16, TENSOR, 1, 0, [2], [(-1.0, 0)],
                                              [1.0, 2.0], raw_scale=True))


def onnx_models():
    def model_bytes(name):
        with open(os.path.join(CORPUS, "model_read", name), "rb") as f:
            return f.read()

    add, multi = model_bytes("add.bin"), model_bytes("multi.bin")
    qnn = [("source", "QNNExecutionProvider"), ("ep_sdk_version", "v2.48.40.250101_1")]
    names = "{0: 'person', 1: \"it's\", 2: 'caf\\xe9'}"
    write("onnx_model", "embedded.onnx", epcontext.model(
        [{"name": "ctx", "cache": add, "attrs": qnn + [("partition_name", "add_f32")]}],
        [("names", names), ("imgsz", "[640, 640]"), ("stride", "32"), ("task", "detect")]))
    write("onnx_model", "two_contexts.onnx", epcontext.model(
        [{"name": "a", "cache": add, "attrs": qnn},
         {"name": "b", "cache": multi, "main_context": 1, "embed_mode": 1, "attrs": qnn}]))
    write("onnx_model", "not_main.onnx", epcontext.model(
        [{"name": "c", "cache": add}, {"name": "add_f32", "main_context": 0}]))
    write("onnx_model", "external.onnx", epcontext.model(
        [{"name": "e", "cache": "sub/model.bin", "embed_mode": 0, "attrs": qnn}]))
    # names of what fuzz/onnx_model.c's folder holds: one file three ways, a symlink out of
    # the folder, a FIFO, a folder, the folder itself
    write("onnx_model", "external_three_ways.onnx", epcontext.model(
        [{"name": "a", "cache": "model.bin", "embed_mode": 0},
         {"name": "b", "cache": "./hard.bin", "embed_mode": 0},
         {"name": "c", "cache": "near.bin", "embed_mode": 0, "attrs": qnn}]))
    for name in ("escape.bin", "fifo.bin", "dir", "."):
        seed = "external_%s.onnx" % (name.split(".")[0] or "folder")
        write("onnx_model", seed, epcontext.model([{"name": "x", "cache": name, "embed_mode": 0}]))
    write("onnx_model", "qdq.onnx", epcontext.model(
        [{"name": "q", "op": "QuantizeLinear"}, {"name": "c", "op": "Conv"}]))


def frame_seed(fmt, w, h, data, crop=None, dtype=0, ih=16, iw=16, flags=0x40, pad=114 & 0x3f):
    """fuzz/vision.c's preprocess layout: the frame and input description, then the data."""
    hdr = bytes([0, fmt, w & 0xFF, w >> 8, h & 0xFF, h >> 8, 0x80, 1 if crop else 0])
    hdr += bytes(crop or (0, 0, 0, 0)) + bytes([dtype, ih - 1, iw - 1, flags, pad])
    return hdr + data


def wide_frame_seed(fmt, w, h, stride, uv_offset, data, crop=None, dtype=0, ih=16, iw=16,
                    flags=0x40, pad=114 & 0x3f):
    """The wide variant: the small header (its sizes unused), then full-range sizes."""
    hdr = bytearray(frame_seed(fmt, 0, 0, b"", crop=(0, 0, 0, 0) if crop else None, dtype=dtype,
                               ih=ih, iw=iw, flags=flags, pad=pad))
    hdr[0] = 2
    hdr += struct.pack("<IIIQ", w, h, stride, uv_offset)
    hdr += struct.pack("<HHHH", *(crop or (0, 0, 0, 0)))
    return bytes(hdr) + data


def head_seed(head, layout, dtype, nout, rank, dims, score, iou, max_det, opts, values):
    """fuzz/vision.c's decode layout: the head description, then the bytes of its outputs."""
    return bytes([1, head, layout, dtype, nout - 1, rank - 1] + [d - 1 for d in dims] +
                 [score, iou, max_det - 1, opts]) + bytes(values)


def vision():
    # frames: (format index, bytes a pixel) of fuzz/vision.c: 1 rgb24 ... 7 nv12
    ramp = lambda n: bytes((i * 37 + 11) & 0xFF for i in range(n))
    write("vision", "rgb24_7x5", frame_seed(1, 7, 5, ramp(7 * 5 * 3)))
    write("vision", "bgra_6x4_crop", frame_seed(4, 6, 4, ramp(6 * 4 * 4), crop=(1, 1, 4, 2)))
    write("vision", "gray_9x3_gray_input", frame_seed(5, 9, 3, ramp(27), flags=0x48))
    write("vision", "yuyv_8x4_f32_nchw", frame_seed(6, 8, 4, ramp(8 * 4 * 2), dtype=5,
                                                     flags=0x04 | 0x02))
    write("vision", "nv12_8x6_u16_stretch", frame_seed(7, 8, 6, ramp(8 * 6 * 3 // 2), dtype=2,
                                                        flags=0x10))
    write("vision", "rgb24_short", frame_seed(1, 7, 5, ramp(20)))
    # heads: ultralytics [1, 4 + 2, 8] u8 (dtype index 0), boxes in the 64x64 input
    boxes = [20, 22, 40, 42, 24, 26, 28, 30, 10, 12, 14, 16, 30, 30, 50, 50]
    vals = []
    for c in range(6):
        for a in range(8):
            vals.append(boxes[(a * 2 + c) % 16] * 4 if c < 4 else (200 if (a + c) % 3 else 40))
    write("vision", "ultralytics_u8", head_seed(1, 1, 0, 1, 3, [1, 6, 8, 1], 60, 140, 10, 0,
                                                 [v & 0xFF for v in vals]))
    write("vision", "ultralytics_f32_agnostic",
          head_seed(1, 2, 5, 1, 3, [1, 8, 6, 1], 60, 100, 5, 1,
                    b"".join(struct.pack("<f", (i % 13) * 3.5 - 2) for i in range(48))))
    write("vision", "pose_u16", head_seed(2, 1, 2, 1, 3, [1, 11, 4, 1], 40, 140, 4, 0x42,
                                           bytes((i * 29) & 0xFF for i in range(88))))
    write("vision", "aihub_i8", head_seed(3, 0, 1, 3, 3, [1, 5, 4, 1], 40, 140, 6, 0x02 | 0x10,
                                           bytes((i * 53) & 0xFF for i in range(20))))
    # wide frames: sizes that wrap 32 and 64 bits, a UV offset near SIZE_MAX, a valid one
    write("vision", "wide_rgba_2g", wide_frame_seed(3, 1 << 31, 1 << 31, 0, 0, ramp(16)))
    write("vision", "wide_nv12_uv_wrap", wide_frame_seed(7, 2, 2, 0, (1 << 64) - 1, ramp(6)))
    write("vision", "wide_nv12_uv_ok", wide_frame_seed(7, 4, 2, 6, 14, ramp(20),
                                                       crop=(1, 0, 2, 2)))
    write("vision", "wide_stride_max", wide_frame_seed(1, 65535, 65535, (1 << 32) - 1, 0,
                                                       ramp(64)))
    # wide heads: AI Hub with f32 class ids (up to 2^32 and past), an empty dynamic axis, dims
    # that claim more than the bytes, the Ultralytics box mapping
    ids = struct.pack("<5f", 3.0e9, 4294967040.0, 4294967296.0, 7.0, 1.0)
    boxes = b"".join(struct.pack("<4f", 4 * a, 4 * a, 4 * a + 10, 4 * a + 10) for a in range(5))
    scores = struct.pack("<5f", 0.9, 0.8, 0.7, 0.6, 0.5)
    wide = bytearray(head_seed(3, 0, 5, 3, 3, [1, 5, 4, 1], 40, 140, 6, 0, b""))
    wide[0] = 3
    write("vision", "wide_aihub_f32_ids", bytes(wide) + bytes([1 << 2]) + boxes + scores + ids)
    write("vision", "wide_empty_anchor_axis",
          bytes([3, 1, 1, 5, 0, 2, 0, 23, 0, 0, 60, 140, 10, 0, 1]) + ramp(64))
    write("vision", "wide_lying_dims",
          bytes([3, 1, 1, 0, 0, 2, 0, 5, 7, 0, 60, 140, 10, 0, 2]) + ramp(64))
    write("vision", "wide_ultralytics_mapping",
          bytes([3, 1, 1, 0, 0, 2, 0, 5, 7, 0, 60, 140, 10, 0, 16]) + ramp(64))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/plain"
    models(build)
    onnx_models()
    npys()
    quantize()
    vision()


if __name__ == "__main__":
    main()
