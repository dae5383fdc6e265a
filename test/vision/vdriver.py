"""The protocol of test/vision/driver.c: one process, many requests (driver.c's header)."""
import os
import subprocess

import numpy as np

# htpu_dtype values and their numpy types
DTYPES = {"f32": (1, np.float32), "f16": (2, np.float16), "u8": (3, np.uint8), "i8": (4, np.int8),
          "u16": (5, np.uint16), "i16": (6, np.int16), "u32": (7, np.uint32), "i32": (8, np.int32),
          "u64": (9, np.uint64), "i64": (10, np.int64), "bool8": (11, np.bool_)}
FORMATS = {"rgb24": 1, "bgr24": 2, "rgba": 3, "bgra": 4, "gray8": 5, "yuyv": 6, "nv12": 7}
RESIZE = {"letterbox": 0, "stretch": 1, "crop": 2}
LAYOUT = {"auto": 0, "nhwc": 1, "nchw": 2}
NORM = {"auto": 0, "unit": 1, "raw": 2, "mean_std": 3}
HEADS = {"auto": 0, "ultralytics": 1, "ultralytics_pose": 2, "aihub": 3}
HEAD_LAYOUT = {"auto": 0, "channels_first": 1, "anchors_first": 2}
MAPPING = {"letterbox": 0, "ultralytics": 1}


class Tensor:
    """A tensor description: name, dtype, dims, quantization (None, (scale, zp) or
    (axis, scales, zps))."""

    def __init__(self, name, dtype, dims, quant=None):
        self.name, self.dtype, self.dims, self.quant = name, dtype, list(dims), quant

    def words(self):
        w = [self.name, str(DTYPES[self.dtype][0]), str(len(self.dims))] + [str(d) for d in self.dims]
        if self.quant is None:
            w.append("0")
        elif len(self.quant) == 2:
            w += ["1", repr(float(np.float32(self.quant[0]))), str(self.quant[1])]
        else:
            axis, scales, zps = self.quant
            w += ["2", str(axis), str(len(scales))]
            w += [repr(float(np.float32(s))) for s in scales] + [str(z) for z in zps]
        return w

    @property
    def np(self):
        return DTYPES[self.dtype][1]


class Driver:
    def __init__(self, path):
        # HTPU_TEST_EMU: a command in front of the driver (qemu-user for a cross build)
        emu = os.environ.get("HTPU_TEST_EMU", "").split()
        self.p = subprocess.Popen(emu + [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def close(self):
        self.p.stdin.write(b"quit\n")
        self.p.stdin.close()
        rc = self.p.wait()
        if rc != 0:
            raise RuntimeError(f"vision_driver exited with {rc} (a sanitizer report?)")

    def _send(self, words, payloads):
        self.p.stdin.write((" ".join(str(w) for w in words) + "\n").encode())
        for b in payloads:
            self.p.stdin.write(b)
        self.p.stdin.flush()

    def _answer(self):
        line = self.p.stdout.readline().decode()
        if not line:
            raise RuntimeError("vision_driver died (see its stderr)")
        return line.rstrip("\n")

    def pre(self, frame_bytes, fmt, w, h, tensor, stride=0, uv_offset=0, crop=(0, 0, 0, 0),
            resize="letterbox", pad=114, scaleup=1, bgr=0, layout="auto", norm="auto",
            mean=(0, 0, 0), std=(1, 1, 1), size=None):
        size = len(frame_bytes) if size is None else size
        words = ["pre", FORMATS.get(fmt, fmt), w, h, stride, uv_offset, *crop, size]
        words += tensor.words()
        words += [RESIZE.get(resize, resize), pad, scaleup, bgr, LAYOUT.get(layout, layout),
                  NORM.get(norm, norm)]
        words += [repr(float(v)) for v in mean] + [repr(float(v)) for v in std]
        self._send(words, [bytes(frame_bytes[:size])])
        line = self._answer()
        if line.startswith("err"):
            return None, line
        f = line.split()[1:]
        g = dict(zip(["frame_w", "frame_h", "rx", "ry", "rw", "rh", "in_w", "in_h", "new_w", "new_h",
                      "left", "top", "right", "bottom"], map(int, f[:14])))
        g["scale_x"], g["scale_y"] = float(f[14]), float(f[15])
        data = self.p.stdout.read(int(f[16]))
        return g, np.frombuffer(data, dtype=tensor.np)

    def dec(self, outputs, head="auto", layout="auto", score=0.25, iou=0.7, max_det=300,
            max_cand=30000, nc=0, nk=0, kd=3, agnostic=0, geometry=None, mapping="letterbox"):
        """outputs: [(Tensor, ndarray)]. geometry: (rx, ry, rw, rh, left, top, sx, sy[, in_w,
        in_h]) or None."""
        words = ["dec", len(outputs), HEADS[head], HEAD_LAYOUT[layout], repr(float(score)),
                 repr(float(iou)), max_det, max_cand, nc, nk, kd, agnostic, MAPPING[mapping]]
        if geometry is not None and len(geometry) == 8:
            geometry = (*geometry, 0, 0)
        words += ["0"] if geometry is None else ["1", *[repr(v) if isinstance(v, float) else v for v in geometry]]
        self._send(words, [])
        for t, arr in outputs:
            b = np.ascontiguousarray(arr).tobytes()
            self._send(t.words() + [len(b)], [b])
        line = self._answer()
        if line.startswith("err"):
            return None, line
        f = line.split()[1:]
        count = int(f[0])
        info = dict(zip(["count", "candidates", "head", "layout", "anchors", "classes", "keypoints",
                         "kdims"], map(int, f)))
        dets = []
        for _ in range(count):
            v = self._answer().split()
            dets.append({"box": [np.float32(x) for x in v[:4]], "score": np.float32(v[4]),
                         "cls": int(v[5]), "anchor": int(v[6]),
                         "kp": [np.float32(x) for x in v[7:]]})
        return info, dets
