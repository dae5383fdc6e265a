"""Frames in every pixel format, with padded rows and detached UV planes, from an RGB image.

Each maker returns (opencv_array, buffer, stride, uv_offset): the packed array OpenCV converts
(h x w x bpp, or (h*3/2) x w for NV12) and the bytes the runtime reads, whose rows are `stride`
apart with garbage in the padding."""
import os

import cv2
import numpy as np

PHOTOS = "/usr/share/doc/opencv-doc/examples/data"
BPP = {"rgb24": 3, "bgr24": 3, "rgba": 4, "bgra": 4, "gray8": 1, "yuyv": 2, "nv12": 1}


def photo(name):
    """A photograph from Debian's opencv-doc, as RGB."""
    path = os.path.join(PHOTOS, name)
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise SystemExit(f"oracle: cannot read {path} (Debian: apt-get install opencv-doc)")
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def synthetic(w, h, seed):
    """Noise over gradients and a few hard edges: every pixel differs from its neighbours."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1),
                     (x + y) * 127 // max(w + h - 2, 1)], axis=2).astype(np.int32)
    noise = rng.integers(-60, 61, size=(h, w, 3))
    img = np.clip(base + noise, 0, 255).astype(np.uint8)
    img[h // 3:h // 2, w // 4:w // 2] = rng.integers(0, 256, size=3)  # a flat patch
    img[:, w // 2] = 255  # a bright line
    return img


def _rows(arr2d, stride, rng):
    """Rows of arr2d (h x row_bytes) `stride` bytes apart, garbage between."""
    h, row = arr2d.shape
    buf = rng.integers(0, 256, size=h * stride, dtype=np.uint8)
    for r in range(h):
        buf[r * stride:r * stride + row] = arr2d[r]
    return buf[:(h - 1) * stride + row] if h else buf[:0]


def make(rgb, fmt, extra=0, uv_gap_rows=0, seed=1):
    """The frame of `rgb` in `fmt` with `extra` padding bytes a row; NV12's UV plane placed
    uv_gap_rows rows after the Y plane (a VPU buffer of aligned height)."""
    rng = np.random.default_rng(seed)
    h, w = rgb.shape[:2]
    if fmt in ("rgb24", "bgr24", "rgba", "bgra", "gray8"):
        arr = {"rgb24": lambda: rgb, "bgr24": lambda: rgb[:, :, ::-1],
               "rgba": lambda: np.dstack([rgb, rng.integers(0, 256, (h, w), dtype=np.uint8)]),
               "bgra": lambda: np.dstack([rgb[:, :, ::-1], rng.integers(0, 256, (h, w), dtype=np.uint8)]),
               "gray8": lambda: cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)}[fmt]()
        arr = np.ascontiguousarray(arr)
        row = w * BPP[fmt]
        stride = row + extra
        return arr, _rows(arr.reshape(h, row), stride, rng).tobytes(), stride, 0
    if fmt == "yuyv":
        yuv = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV).astype(np.int32)
        yuv[::7, ::5] = rng.integers(0, 256, size=yuv[::7, ::5].shape)  # out-of-range codes too
        u = (yuv[:, 0::2, 1] + yuv[:, 1::2, 1] + 1) // 2
        v = (yuv[:, 0::2, 2] + yuv[:, 1::2, 2] + 1) // 2
        arr = np.zeros((h, w, 2), np.uint8)
        arr[:, :, 0] = yuv[:, :, 0]
        arr[:, 0::2, 1], arr[:, 1::2, 1] = u, v
        if w >= 4:  # the sums' extremes: Y, U, V all 255, then all 0
            arr[0, 0:2], arr[0, 2:4] = 255, 0
        stride = 2 * w + extra
        return arr, _rows(arr.reshape(h, 2 * w), stride, rng).tobytes(), stride, 0
    # nv12 from I420: Y, then U and V interleaved
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    yp = i420[:h].copy()
    yp[::11, ::3] = rng.integers(0, 256, size=yp[::11, ::3].shape, dtype=np.uint8)
    chroma = i420[h:].ravel()
    n = (h // 2) * (w // 2)
    u, v = chroma[:n].reshape(h // 2, w // 2), chroma[n:].reshape(h // 2, w // 2)
    uv = np.dstack([u, v]).reshape(h // 2, w)
    uv[::5, ::4] = rng.integers(0, 256, size=uv[::5, ::4].shape, dtype=np.uint8)
    if w >= 4 and h >= 2:  # the sums' extremes: Y, U, V all 255, then all 0
        yp[0:2, 0:2], uv[0, 0:2], yp[0:2, 2:4], uv[0, 2:4] = 255, 255, 0, 0
    arr = np.vstack([yp, uv])
    stride = w + extra
    y_buf = _rows(yp, stride, rng)
    gap = rng.integers(0, 256, size=stride * (h + uv_gap_rows) - len(y_buf), dtype=np.uint8)
    uv_off = stride * (h + uv_gap_rows)
    buf = np.concatenate([y_buf, gap, _rows(uv, stride, rng)])
    return arr, buf.tobytes(), stride, (uv_off if uv_gap_rows else 0)
