"""The independent reference: what OpenCV + NumPy make of a frame, and greedy per-class NMS in
NumPy. Written from the published definitions (Ultralytics' LetterBox, scale_boxes and
clip_boxes; torchvision's nms; OpenCV's conversions), not from the C code under test."""
import cv2
import numpy as np

# ---- frames -> the model's image ---------------------------------------------------------------

_TO_NATIVE = {  # frame -> a 3-channel image in the frame's native order, as OpenCV would
    "rgb24": (None, False), "bgr24": (None, True),
    "rgba": (cv2.COLOR_RGBA2RGB, False), "bgra": (cv2.COLOR_BGRA2BGR, True),
    "yuyv": (cv2.COLOR_YUV2RGB_YUYV, False), "nv12": (cv2.COLOR_YUV2RGB_NV12, False),
}
_TO_GRAY = {"rgb24": cv2.COLOR_RGB2GRAY, "bgr24": cv2.COLOR_BGR2GRAY, "rgba": cv2.COLOR_RGBA2GRAY,
            "bgra": cv2.COLOR_BGRA2GRAY, "yuyv": cv2.COLOR_YUV2GRAY_YUYV,
            "nv12": cv2.COLOR_YUV2GRAY_NV12}


def decode_frame(arr, fmt, channels):
    """arr: the frame as OpenCV takes it (h x w x bpp, nv12 as (h*3/2) x w). Returns the image
    to resize (native channel order, or gray) and whether that order is B, G, R."""
    if fmt == "gray8":
        return arr, False
    if channels == 1:
        return cv2.cvtColor(arr, _TO_GRAY[fmt]), False
    code, bgr = _TO_NATIVE[fmt]
    return (arr if code is None else cv2.cvtColor(arr, code)), bgr


def letterbox_geometry(h, w, in_h, in_w, scaleup=True):
    """Ultralytics' LetterBox (auto=False, center=True), expression by expression."""
    r = min(in_h / h, in_w / w)
    if not scaleup:
        r = min(r, 1.0)
    new_unpad = int(round(w * r)), int(round(h * r))
    dw, dh = in_w - new_unpad[0], in_h - new_unpad[1]
    dw /= 2
    dh /= 2
    top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
    left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
    return r, new_unpad, (left, top, right, bottom)


def centre_crop(x, y, w, h, in_w, in_h):
    if w * in_h >= h * in_w:
        cw, ch = min(w, max(1, int(round(h * in_w / in_h)))), h
    else:
        cw, ch = w, min(h, max(1, int(round(w * in_h / in_w))))
    return x + (w - cw) // 2, y + (h - ch) // 2, cw, ch


def resize_image(img, fw, fh, in_w, in_h, resize, crop, scaleup, pad):
    """The u8 image at the model's size (still native order) and its geometry."""
    cx, cy, cw, ch = crop if crop[2] and crop[3] else (0, 0, fw, fh)
    if resize == "crop":
        cx, cy, cw, ch = centre_crop(cx, cy, cw, ch, in_w, in_h)
    region = img[cy:cy + ch, cx:cx + cw]
    geo = {"rx": cx, "ry": cy, "rw": cw, "rh": ch}
    if resize == "letterbox":
        r, new, (left, top, right, bottom) = letterbox_geometry(ch, cw, in_h, in_w, scaleup)
        if (cw, ch) != new:
            region = cv2.resize(region, new, interpolation=cv2.INTER_LINEAR)
        out = cv2.copyMakeBorder(region, top, bottom, left, right, cv2.BORDER_CONSTANT,
                                 value=(pad, pad, pad))
        geo.update(new_w=new[0], new_h=new[1], left=left, top=top, right=right, bottom=bottom,
                   scale_x=r, scale_y=r)
    else:
        out = cv2.resize(region, (in_w, in_h), interpolation=cv2.INTER_LINEAR) \
            if (cw, ch) != (in_w, in_h) else region.copy()
        geo.update(new_w=in_w, new_h=in_h, left=0, top=0, right=0, bottom=0,
                   scale_x=in_w / cw, scale_y=in_h / ch)
    return out, geo


def model_order(img, native_bgr, want_bgr, channels):
    """h x w x C in the model's channel order (a gray image fills every channel)."""
    if img.ndim == 2:
        return np.repeat(img[:, :, None], channels, axis=2)
    return img[:, :, ::-1] if native_bgr != want_bgr else img


# ---- pixel values -> the input's type -------------------------------------------------------------

INT_RANGE = {"u8": (0, 255), "i8": (-128, 127), "u16": (0, 65535), "i16": (-32768, 32767),
             "u32": (0, 2**32 - 1), "i32": (-2**31, 2**31 - 1)}


def convert(p, tensor, norm, mean, std, chan_axis_quant=None):
    """u8 pixels p (h x w x C, model order) -> the input's element values (NumPy, f32 maths as
    img.astype(np.float32) / 255). chan_axis_quant: per-channel (scales, zps) or None."""
    x = p.astype(np.float32)
    plain = tensor.dtype not in ("f32", "f16") and tensor.quant is None
    if norm == "auto":
        norm = "raw" if plain else "unit"
    if norm == "unit":
        x = x / np.float32(255)
    elif norm == "mean_std":
        x = (x / np.float32(255) - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    if tensor.dtype == "f32":
        return x
    if tensor.dtype == "f16":
        return x.astype(np.float16)
    if tensor.quant is None:
        q = np.round(x.astype(np.float64))
    elif chan_axis_quant is not None:
        scales, zps = chan_axis_quant
        q = np.round(x.astype(np.float64) / np.asarray(scales, np.float32).astype(np.float64)) + \
            np.asarray(zps, np.float64)
    else:
        scale, zp = tensor.quant
        q = np.round(x.astype(np.float64) / np.float64(np.float32(scale))) + zp
    lo, hi = INT_RANGE[tensor.dtype]
    return np.clip(q, lo, hi).astype(tensor.np)


# ---- decoding ------------------------------------------------------------------------------------------


def dequant(arr, tensor, axis_of_values=None):
    """Stored values -> f32, as the runtime dequantizes ((q - zp) * scale in double, once)."""
    if tensor.dtype in ("f32", "f16") or tensor.quant is None:
        return arr.astype(np.float32)
    if len(tensor.quant) == 2:
        s, z = tensor.quant
        return ((arr.astype(np.float64) - z) * np.float64(np.float32(s))).astype(np.float32)
    axis, scales, zps = tensor.quant
    shape = [1] * len(tensor.dims)
    shape[axis] = len(scales)
    a = arr.reshape(tensor.dims).astype(np.float64)
    s = np.asarray(scales, np.float32).astype(np.float64).reshape(shape)
    z = np.asarray(zps, np.float64).reshape(shape)
    return ((a - z) * s).astype(np.float32).reshape(arr.shape)


def iou32(a, b):
    f = np.float32
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    w, h = max(f(0), f(x2 - x1)), max(f(0), f(y2 - y1))
    inter = f(w * h)
    area_a = f((a[2] - a[0]) * (a[3] - a[1]))
    area_b = f((b[2] - b[0]) * (b[3] - b[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return f(inter / f(f(area_a + area_b) - inter))


def nms(cands, iou, max_cand, max_det, agnostic=False):
    """cands: list of dicts with score, anchor, cls, box. Greedy, best first, per class."""
    order = sorted(cands, key=lambda c: (-float(c["score"]), c["anchor"]))[:max_cand]
    dead = [False] * len(order)
    keep = []
    for i, c in enumerate(order):
        if dead[i]:
            continue
        keep.append(c)
        if len(keep) == max_det:
            break
        for j in range(i + 1, len(order)):
            if not dead[j] and (agnostic or order[j]["cls"] == c["cls"]) and \
                    iou32(c["box"], order[j]["box"]) > np.float32(iou):
                dead[j] = True
    return keep


def map_xy(x, y, geo):
    """Ultralytics' scale_boxes + clip_boxes in f32, then the region's offset."""
    f = np.float32
    if geo is None:
        return x, y
    rx, ry, rw, rh, left, top, sx, sy = geo
    x = min(max(f(f(x - f(left)) / f(sx)), f(0)), f(rw)) + f(rx)
    y = min(max(f(f(y - f(top)) / f(sy)), f(0)), f(rh)) + f(ry)
    return f(x), f(y)


def scale_boxes_pads(in_h, in_w, h, w):
    """Ultralytics' ultralytics/utils/ops.py with ratio_pad=None: the gain, scale_boxes' padding
    (rounded, after - 0.1) and scale_coords' (unrounded), recomputed from the shapes."""
    gain = min(in_h / h, in_w / w)
    dx, dy = (in_w - w * gain) / 2, (in_h - h * gain) / 2
    return gain, (round(dx - 0.1), round(dy - 0.1)), (dx, dy)


def ultralytics_xy(x, y, region, gain, pad):
    """(x - pad) / gain on f32 tensors, clip_boxes / clip_coords to the region, then its offset."""
    f = np.float32
    rx, ry, rw, rh = region
    x = min(max(f(f(f(x) - f(pad[0])) / f(gain)), f(0)), f(rw)) + f(rx)
    y = min(max(f(f(f(y) - f(pad[1])) / f(gain)), f(0)), f(rh)) + f(ry)
    return f(x), f(y)


def ultralytics_cands(vals, nc, score):
    """vals: f32 [C, A] (channels first). Candidates with xyxy boxes in input pixels."""
    f = np.float32
    scores = vals[4:4 + nc]
    best, cls = scores.max(0), scores.argmax(0)
    out = []
    for a in np.nonzero(best > np.float32(score))[0]:
        cx, cy, w, h = vals[0:4, a]
        hw, hh = f(w / f(2)), f(h / f(2))
        out.append({"score": best[a], "anchor": int(a), "cls": int(cls[a]),
                    "box": [f(cx - hw), f(cy - hh), f(cx + hw), f(cy + hh)]})
    return out
