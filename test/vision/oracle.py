#!/usr/bin/python3
"""The vision room against OpenCV and NumPy (test/vision/run.sh; part of `make test`).

    oracle.py BUILD/vision_driver

Frames -> input: photographs (Debian's opencv-doc) and synthetic frames in every pixel format,
odd and even sizes, packed and padded rows, detached NV12 UV planes, crops, every resize mode,
type and layout, against cv2.cvtColor + cv2.resize + cv2.copyMakeBorder + NumPy conversions
(Ultralytics' LetterBox expressions): the geometry must be exact and every value within one
pixel level (OpenCV's INTER_LINEAR rounds two ways; counts of exact matches are printed).
Outputs -> detections: planted heads of every layout and type against a NumPy greedy per-class
NMS. Bad input: the error names what was wrong. Prints one line per check, then "N passed,
N failed"; exits non-zero on a failure."""
import sys

import numpy as np

import frames
import reference as ref
from vdriver import Driver, Tensor


class Checks:
    def __init__(self):
        self.passed = self.failed = 0
        self.exact = self.values = 0

    def ok(self, name, cond, why=""):
        if cond:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {why}" if why else ""))
        return cond


# ---- frames -> input ------------------------------------------------------------------------------


def image_tensor(in_w, in_h, c, dtype, quant, layout):
    dims = [1, c, in_h, in_w] if layout == "nchw" else [1, in_h, in_w, c]
    return Tensor("images", dtype, dims, quant)


def chan_quant(tensor, layout):
    q = tensor.quant
    return (q[1], q[2]) if q is not None and len(q) == 3 else None


def bits(x):
    """The bytes of each element: floats compare bit for bit (and NaN never hides)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8).reshape(x.shape + (-1,))


def compare_values(ours, model_u8, tensor, norm, mean, std, cq):
    """ours (H x W x C) against the conversions of the reference pixels and of +-1."""
    exact = ref.convert(model_u8, tensor, norm, mean, std, cq)
    ok = (bits(ours) == bits(exact)).all(axis=-1)
    n_exact = int(ok.sum())
    for d in (-1, 1):
        alt = ref.convert(np.clip(model_u8.astype(int) + d, 0, 255).astype(np.uint8), tensor,
                          norm, mean, std, cq)
        ok |= (bits(ours) == bits(alt)).all(axis=-1)
    return bool(ok.all()), n_exact, ours.size, np.argwhere(~ok)[:3].tolist()


def pre_case(drv, chk, label, rgb, fmt, in_w, in_h, c=3, dtype="u8", quant=None, layout="nhwc",
             resize="letterbox", extra=0, crop=(0, 0, 0, 0), norm="auto", bgr=0, scaleup=1,
             pad=114, uv_gap=0, mean=(0, 0, 0), std=(1, 1, 1), exact=False):
    arr, buf, stride, uv_off = frames.make(rgb, fmt, extra, uv_gap, seed=len(label))
    h, w = rgb.shape[:2]
    tensor = image_tensor(in_w, in_h, c, dtype, quant, layout)
    geo, ours = drv.pre(buf, fmt, w, h, tensor, stride=stride, uv_offset=uv_off, crop=crop,
                        resize=resize, pad=pad, scaleup=scaleup, bgr=bgr, layout=layout,
                        norm=norm, mean=mean, std=std)
    if geo is None:
        return chk.ok(label, False, ours)
    img, native_bgr = ref.decode_frame(arr, fmt, c)
    u8, rgeo = ref.resize_image(img, w, h, in_w, in_h, resize, crop, scaleup, pad)
    model = ref.model_order(u8, native_bgr, bool(bgr), c)
    keys = ["rx", "ry", "rw", "rh", "new_w", "new_h", "left", "top", "right", "bottom"]
    bad_geo = [k for k in keys if geo[k] != rgeo[k]]
    bad_geo += [k for k in ("scale_x", "scale_y") if geo[k] != rgeo[k]]
    ours = ours.reshape(tensor.dims[1:])
    if layout == "nchw":
        ours = ours.transpose(1, 2, 0)
    good, n_exact, n, where = compare_values(ours, model, tensor, norm, mean, std,
                                             chan_quant(tensor, layout))
    chk.exact += n_exact
    chk.values += n
    good = good and (n_exact == n or not exact)
    return chk.ok(f"{label} ({n_exact}/{n} exact)", good and not bad_geo,
                  f"geometry {bad_geo} {geo} vs {rgeo}" if bad_geo else f"off by more than 1 at {where}")


SIZES = {False: [(38, 24), (161, 121), (200, 150)], True: [(38, 24), (162, 122), (200, 150)]}


def formats_matrix(drv, chk):
    """Every format x size (odd where the format allows) x stride x mode."""
    for fmt in frames.BPP:
        yuv = fmt in ("yuyv", "nv12")
        for (w, h) in SIZES[yuv]:
            rgb = frames.synthetic(w, h, seed=w * 7 + h)
            for extra in (0, 13):
                gap = 5 if fmt == "nv12" and extra else 0
                base = f"{fmt} {w}x{h} stride+{extra}"
                pre_case(drv, chk, f"{base} letterbox 96x96 u8", rgb, fmt, 96, 96, extra=extra,
                         uv_gap=gap)
                pre_case(drv, chk, f"{base} stretch 64x48 f32 nchw", rgb, fmt, 64, 48,
                         dtype="f32", layout="nchw", resize="stretch", extra=extra, uv_gap=gap)
                pre_case(drv, chk, f"{base} crop 80x80 bgr", rgb, fmt, 80, 80, resize="crop",
                         extra=extra, bgr=1, uv_gap=gap)
                crop = (3, 5, w - 10, h - 7)
                pre_case(drv, chk, f"{base} crop {crop} letterbox 72x56 gray", rgb, fmt, 72, 56,
                         c=1, extra=extra, crop=crop, uv_gap=gap)


def photographs(drv, chk):
    u8_unit = (1 / 255, 0)
    for name in ("fruits.jpg", "building.jpg", "butterfly.jpg", "aero1.jpg"):
        rgb = frames.photo(name)
        h, w = rgb.shape[:2]
        if name == "butterfly.jpg":  # 493 x 356: odd width, so not for YUV
            pre_case(drv, chk, f"photo {name} rgb24 640 u8", rgb, "rgb24", 640, 640)
            pre_case(drv, chk, f"photo {name} bgr24 -> rgb 640 nchw f32", rgb, "bgr24", 640, 640,
                     dtype="f32", layout="nchw")
            continue
        pre_case(drv, chk, f"photo {name} rgb24 640 u8 scale 1/255", rgb, "rgb24", 640, 640,
                 quant=u8_unit)
        pre_case(drv, chk, f"photo {name} nv12 640 u8", rgb, "nv12", 640, 640, extra=64, uv_gap=8)
        pre_case(drv, chk, f"photo {name} yuyv 320x256 u16 (A16W8)", rgb, "yuyv", 320, 256,
                 dtype="u16", quant=(1 / 65535, 0))
        pre_case(drv, chk, f"photo {name} bgra 416 f32 nchw", rgb, "bgra", 416, 416, dtype="f32",
                 layout="nchw")


def types_and_options(drv, chk):
    rgb = frames.synthetic(150, 110, seed=3)
    cases = [
        ("i8 zp -128", dict(dtype="i8", quant=(1 / 255, -128))),
        ("i8 odd scale", dict(dtype="i8", quant=(0.0123, 3))),
        ("u8 coarse scale", dict(dtype="u8", quant=(0.01, 7))),
        ("u16", dict(dtype="u16", quant=(1 / 65535, 0))),
        ("i16", dict(dtype="i16", quant=(1 / 30000, -5))),
        ("f16", dict(dtype="f16")),
        ("f32 raw", dict(dtype="f32", norm="raw")),
        ("u8 plain raw", dict(dtype="u8")),
        ("f32 mean/std", dict(dtype="f32", norm="mean_std", mean=(0.485, 0.456, 0.406),
                              std=(0.229, 0.224, 0.225))),
        ("u8 per-channel nhwc", dict(dtype="u8", quant=(3, [0.004, 0.005, 0.006], [0, 3, 9]))),
        ("u8 per-channel nchw", dict(dtype="u8", layout="nchw",
                                     quant=(1, [0.004, 0.005, 0.006], [0, 3, 9]))),
        ("pad 0", dict(pad=0)),
        ("pad 255 f16 nchw", dict(pad=255, dtype="f16", layout="nchw")),
        ("no scaleup", dict(scaleup=0)),
    ]
    for name, kw in cases:
        pre_case(drv, chk, f"type/option {name}", rgb, "rgb24", 200, 180, **kw)
    # exact ratios: 2x (OpenCV takes INTER_AREA's path), 3x (one tap), 1:1 (no resize), and up
    for (w, h), (iw, ih) in (((192, 144), (96, 72)), ((288, 216), (96, 72)), ((96, 72), (96, 96)),
                             ((20, 15), (160, 160)), ((17, 9), (33, 65))):
        pre_case(drv, chk, f"ratio {w}x{h} -> {iw}x{ih}", frames.synthetic(w, h, w + h), "rgb24",
                 iw, ih)
        pre_case(drv, chk, f"ratio {w}x{h} -> {iw}x{ih} stretch", frames.synthetic(w, h, w + h),
                 "bgr24", iw, ih, resize="stretch")


def fast_rows(drv, chk):
    """The 1:1 and exact 2x resizes (src/vision/rows.c: the frame's rows as they lie, whole YUV
    rows converted, the 2x2 box): every format, crops of odd offsets, padded rows, widths that
    leave tails after the 16-pixel vector steps, NHWC u8 and NCHW f32, both channel orders.
    OpenCV is deterministic here (one tap, or the 2x2 mean): every value must equal its."""
    cases = [  # frame w, h, input w, h, resize, crop
        (64, 48, 64, 64, "letterbox", (0, 0, 0, 0)),
        (70, 50, 70, 50, "stretch", (0, 0, 0, 0)),
        (40, 30, 35, 21, "stretch", (1, 3, 35, 21)),
        (128, 96, 64, 64, "letterbox", (0, 0, 0, 0)),
        (146, 102, 73, 51, "stretch", (0, 0, 0, 0)),
        (200, 150, 64, 64, "letterbox", (3, 5, 128, 96)),
        (100, 80, 37, 29, "stretch", (7, 9, 74, 58)),
    ]
    for fmt in frames.BPP:
        for i, (w, h, iw, ih, resize, crop) in enumerate(cases):
            rgb = frames.synthetic(w, h, seed=w * 3 + h + i)
            extra = 13 if i % 2 else 0
            gap = 5 if fmt == "nv12" and extra else 0
            label = f"fast rows {fmt} {w}x{h} crop {crop} -> {resize} {iw}x{ih} stride+{extra}"
            pre_case(drv, chk, f"{label} u8", rgb, fmt, iw, ih, resize=resize, crop=crop,
                     extra=extra, uv_gap=gap, bgr=i % 2, exact=True)
            pre_case(drv, chk, f"{label} f32 nchw", rgb, fmt, iw, ih, dtype="f32", layout="nchw",
                     resize=resize, crop=crop, extra=extra, uv_gap=gap, exact=True)


def expect_error(drv, chk, label, fragment, buf, fmt, w, h, tensor, **kw):
    geo, msg = drv.pre(buf, fmt, w, h, tensor, **kw)
    chk.ok(f"error: {label}", geo is None and fragment in msg, msg if geo is None else "accepted")


def frame_errors(drv, chk):
    t = image_tensor(64, 64, 3, "u8", None, "nhwc")
    rgb = bytes(30 * 20 * 3)
    expect_error(drv, chk, "stride below a row", "stride 80 is smaller than a row of 30 rgb24",
                 rgb, "rgb24", 30, 20, t, stride=80)
    expect_error(drv, chk, "frame shorter than its rows", "needs 1800 bytes, got 1799", rgb,
                 "rgb24", 30, 20, t, size=1799)
    expect_error(drv, chk, "strided frame too short", "with a stride of 100 needs 1990 bytes",
                 bytes(1900), "rgb24", 30, 20, t, stride=100)
    expect_error(drv, chk, "odd yuyv width", "yuyv needs an even width", bytes(31 * 20 * 2),
                 "yuyv", 31, 20, t)
    expect_error(drv, chk, "odd nv12 height", "nv12 needs an even width and height",
                 bytes(30 * 21 * 2), "nv12", 30, 21, t)
    expect_error(drv, chk, "nv12 without its UV plane", "needs 900 bytes", bytes(600), "nv12", 30,
                 20, t)
    expect_error(drv, chk, "crop outside", "crop 30x10 at (5, 0) is outside the 30x20", rgb,
                 "rgb24", 30, 20, t, crop=(5, 0, 30, 10))
    expect_error(drv, chk, "not an image", "is not an image of 1 or 3 channels", rgb, "rgb24", 30,
                 20, Tensor("x", "u8", [1, 64, 64, 4]))
    expect_error(drv, chk, "batch of 2", "with a batch other than 1", rgb, "rgb24", 30, 20,
                 Tensor("x", "u8", [2, 64, 64, 3]))
    expect_error(drv, chk, "ambiguous layout", "could be NHWC or NCHW", rgb, "rgb24", 30, 20,
                 Tensor("x", "u8", [1, 3, 8, 1]))
    for dims in ([1, 3, 64, 3], [1, 1, 64, 1], [3, 5, 3]):
        expect_error(drv, chk, "ambiguous layout %s" % dims, "name the layout (the layout option",
                     rgb, "rgb24", 30, 20, Tensor("x", "u8", dims))
    expect_error(drv, chk, "unit into a plain integer", "use normalize raw", rgb, "rgb24", 30, 20,
                 t, norm="unit")
    expect_error(drv, chk, "letterbox to nothing", "nothing left of it", bytes(3000 * 1 * 3),
                 "rgb24", 3000, 1, t)
    expect_error(drv, chk, "bad std", "expected a finite mean and a finite std > 0", rgb, "rgb24",
                 30, 20, Tensor("x", "f32", [1, 64, 64, 3]), norm="mean_std", std=(1, 0, 1))
    expect_error(drv, chk, "bad pad", "pad value 300", rgb, "rgb24", 30, 20, t, pad=300)


# ---- outputs -> detections ---------------------------------------------------------------------------


def store(vals, tensor, axis=None):
    """f32 values -> the tensor's stored values (round half to even, saturated)."""
    if tensor.dtype == "f32":
        return vals.astype(np.float32)
    if tensor.dtype == "f16":
        return vals.astype(np.float16)
    lo, hi = ref.INT_RANGE[tensor.dtype]
    if tensor.quant is None:
        return np.clip(np.round(vals), lo, hi).astype(tensor.np)
    if len(tensor.quant) == 2:
        s, z = tensor.quant
        return np.clip(np.round(vals / np.float64(np.float32(s))) + z, lo, hi).astype(tensor.np)
    ax, scales, zps = tensor.quant
    shape = [1] * vals.ndim
    shape[axis] = len(scales)
    s = np.asarray(scales, np.float32).astype(np.float64).reshape(shape)
    z = np.asarray(zps, np.float64).reshape(shape)
    return np.clip(np.round(vals / s) + z, lo, hi).astype(tensor.np)


def plant(rng, anchors, nc, in_w, in_h, objects, extra=0):
    """A head [4 + nc + extra, A] (f32): low scores everywhere, then per object several anchors
    with jittered boxes and high scores of its class, some exact ties, some boxes outside the
    input, and objects of different classes on top of each other."""
    v = np.zeros((4 + nc + extra, anchors), np.float32)
    v[0] = rng.uniform(0, in_w, anchors)
    v[1] = rng.uniform(0, in_h, anchors)
    v[2:4] = rng.uniform(2, in_w / 4, (2, anchors))
    v[4:4 + nc] = rng.uniform(0, 0.2, (nc, anchors))
    v[4 + nc:] = rng.uniform(-in_w * 0.1, in_w * 1.1, (extra, anchors))
    free = list(rng.permutation(anchors))
    for o in range(objects):
        cls = int(rng.integers(nc))
        cx, cy = rng.uniform(-0.05 * in_w, 1.05 * in_w), rng.uniform(-0.05 * in_h, 1.05 * in_h)
        w, h = rng.uniform(0.05 * in_w, 0.4 * in_w), rng.uniform(0.05 * in_h, 0.4 * in_h)
        if o % 4 == 3:  # another class right on the previous object
            cx, cy, w, h = prev
        prev = (cx, cy, w, h)
        top = rng.uniform(0.5, 0.95)
        for k in range(int(rng.integers(2, 6))):
            a = free.pop()
            jit = 0 if k == 1 else rng.uniform(-0.04, 0.04, 4) * [w, h, w, h]
            v[0:4, a] = np.array([cx, cy, w, h]) + jit
            v[4 + cls, a] = top if k <= 1 else top - rng.uniform(0, 0.3)  # k 0 and 1: a tie
    return v


def dec_reference(vals, nc, score, iou, max_det, max_cand, geo, agnostic=False, kp=None):
    cands = ref.ultralytics_cands(vals, nc, score)
    keep = ref.nms(cands, iou, max_cand, max_det, agnostic)
    out = []
    for c in keep:
        x1, y1 = ref.map_xy(c["box"][0], c["box"][1], geo)
        x2, y2 = ref.map_xy(c["box"][2], c["box"][3], geo)
        kps = []
        if kp:
            k, kd = kp
            for j in range(k):
                p = vals[4 + nc + j * kd:4 + nc + (j + 1) * kd, c["anchor"]]
                x, y = ref.map_xy(p[0], p[1], geo)
                kps += [x, y] + list(p[2:])
        out.append({"box": [x1, y1, x2, y2], "score": c["score"], "cls": c["cls"],
                    "anchor": c["anchor"], "kp": kps})
    return len(cands), out


def same_dets(ours, want):
    if len(ours) != len(want):
        return f"{len(ours)} detections, expected {len(want)}"
    for i, (o, w) in enumerate(zip(ours, want)):
        for k in ("anchor", "cls"):
            if o[k] != w[k]:
                return f"detection {i}: {k} {o[k]} != {w[k]}"
        got = [o["score"]] + o["box"] + o["kp"]
        exp = [w["score"]] + w["box"] + [np.float32(x) for x in w["kp"]]
        if len(got) != len(exp) or any(np.float32(a) != np.float32(b) for a, b in zip(got, exp)):
            return f"detection {i}: {got} != {exp}"
    return None


LETTERBOX_1080 = (0, 0, 1920, 1080, 0, 140, 1 / 3, 1 / 3)
GEO_64 = (0, 0, 320, 180, 0, 14, 0.2, 0.2)


def dec_case(drv, chk, label, vals, tensor, layout="channels_first", nc=80, score=0.25, iou=0.7,
             max_det=300, max_cand=30000, geo=LETTERBOX_1080, agnostic=0, head="ultralytics",
             kp=None):
    axis = 1 if layout == "channels_first" else 2
    arr = vals if layout == "channels_first" else vals.T
    stored = store(arr[None], tensor, axis)
    deq = ref.dequant(stored, tensor)[0]
    deq_cf = deq if layout == "channels_first" else deq.T
    n_cand, want = dec_reference(deq_cf, nc, score, iou, max_det, max_cand, geo, agnostic, kp)
    info, ours = drv.dec([(tensor, stored)], head=head, layout="auto", score=score, iou=iou,
                         max_det=max_det, max_cand=max_cand,
                         nc=nc if head == "ultralytics_pose" else 0, agnostic=agnostic,
                         geometry=geo)
    if info is None:
        return chk.ok(label, False, ours)
    why = same_dets(ours, want) or (None if info["candidates"] == n_cand else
                                    f"{info['candidates']} candidates, expected {n_cand}")
    return chk.ok(f"{label} ({len(want)} of {n_cand} candidates)", why is None, why)


def heads(drv, chk):
    rng = np.random.default_rng(84)
    A, nc = 2100, 80
    v = plant(rng, A, nc, 640, 640, 14)
    v8 = plant(rng, A, nc, 64, 64, 14)
    for layout in ("channels_first", "anchors_first"):
        dims = [1, 84, A] if layout == "channels_first" else [1, A, 84]
        ax = 1 if layout == "channels_first" else 2
        dec_case(drv, chk, f"f32 {dims}", v, Tensor("output0", "f32", dims), layout)
        dec_case(drv, chk, f"f16 {dims}", v, Tensor("output0", "f16", dims), layout)
        dec_case(drv, chk, f"u16 {dims} (A16W8)", v, Tensor("output0", "u16", dims, (700 / 65535, 0)),
                 layout)
        dec_case(drv, chk, f"i16 {dims}", v, Tensor("output0", "i16", dims, (700 / 32767, -40)),
                 layout)
        # one scale for boxes and scores: a model of 64 pixels, scores in steps of 70/255
        dec_case(drv, chk, f"u8 {dims}", v8, Tensor("output0", "u8", dims, (70 / 255, 3)), layout,
                 geo=GEO_64)
        dec_case(drv, chk, f"i8 {dims}", v8, Tensor("output0", "i8", dims, (70 / 255, -100)),
                 layout, geo=GEO_64)
        scales = [700 / 255] * 4 + [1 / 255] * nc
        dec_case(drv, chk, f"u8 per-channel {dims}", v,
                 Tensor("output0", "u8", dims, (ax, scales, [0] * 84)), layout)
    small = plant(rng, 300, 3, 64, 64, 8)  # u8 for a 64x64 model: scores in steps of 0.25
    t = Tensor("out", "u8", [1, 7, 300], (64 / 255, 0))
    dec_case(drv, chk, "u8 coarse: ties everywhere", small, t, nc=3, geo=None)
    deq = ref.dequant(store(small[None], t, 1), t)[0]
    on_value = float(np.unique(deq[4:])[-2])
    dec_case(drv, chk, f"threshold exactly on a stored value {on_value}", small, t, nc=3,
             score=on_value, geo=None)
    t32 = Tensor("output0", "f32", [1, 84, A])
    dec_case(drv, chk, "all below the threshold", v, t32, score=0.99)
    dec_case(drv, chk, "more than max_detections", v, t32, max_det=5)
    dec_case(drv, chk, "more than max_candidates", v, t32, max_cand=7)
    dec_case(drv, chk, "agnostic", v, t32, agnostic=1, iou=0.3)
    dec_case(drv, chk, "iou 0", v, t32, iou=0.0)
    dec_case(drv, chk, "crop geometry", v, t32, geo=(100, 50, 800, 600, 0, 80, 0.8, 0.8))
    pose = plant(rng, 2100, 1, 640, 640, 9, extra=51)
    for dtype, q in (("f32", None), ("u16", (800 / 65535, 6000)), ("f16", None)):
        dec_case(drv, chk, f"pose {dtype} [1, 56, 2100]", pose, Tensor("output0", dtype, [1, 56, 2100], q),
                 nc=1, head="ultralytics_pose", kp=(17, 3))


def aihub(drv, chk):
    rng = np.random.default_rng(5)
    A, nc = 1500, 80
    v = plant(rng, A, nc, 640, 640, 10)
    best, cls = v[4:].max(0), v[4:].argmax(0)
    hw, hh = v[2] / 2, v[3] / 2
    xyxy = np.stack([v[0] - hw, v[1] - hh, v[0] + hw, v[1] + hh], 1).astype(np.float32)
    for bt, bq, st, sq in (("f32", None, "f32", None), ("u8", (720 / 255, 20), "u8", (1 / 255, 0)),
                           ("u16", (720 / 65535, 2000), "u16", (1 / 65535, 0))):
        tb, ts = Tensor("boxes", bt, [1, A, 4], bq), Tensor("scores", st, [1, A], sq)
        tc = Tensor("class_idx", "u8", [1, A])
        b, s, c = store(xyxy[None], tb), store(best[None], ts), cls[None].astype(np.uint8)
        db, ds = ref.dequant(b, tb)[0], ref.dequant(s, ts)[0]
        cands = [{"score": ds[a], "anchor": int(a), "cls": int(c[0, a]), "box": list(db[a])}
                 for a in np.nonzero(ds > np.float32(0.25))[0]]
        keep = ref.nms(cands, 0.7, 30000, 300)
        want = [{"box": [*ref.map_xy(k["box"][0], k["box"][1], LETTERBOX_1080),
                         *ref.map_xy(k["box"][2], k["box"][3], LETTERBOX_1080)],
                 "score": k["score"], "cls": k["cls"], "anchor": k["anchor"], "kp": []} for k in keep]
        info, ours = drv.dec([(tb, b), (ts, s), (tc, c)], geometry=LETTERBOX_1080)
        why = ours if info is None else same_dets(ours, want)
        chk.ok(f"aihub boxes {bt} scores {st} classes u8 ({len(want)} kept)", why is None, why)
    # scores [1, A, nc] without a class output, and the outputs in another order
    ts = Tensor("scores", "f32", [1, A, nc])
    info, ours = drv.dec([(ts, v[4:].T[None].copy()), (Tensor("boxes", "f32", [1, A, 4]), xyxy[None])],
                         head="aihub", geometry=None)
    cands = [{"score": best[a], "anchor": int(a), "cls": int(cls[a]), "box": list(xyxy[a])}
             for a in np.nonzero(best > np.float32(0.25))[0]]
    want = [dict(k, kp=[]) for k in ref.nms(cands, 0.7, 30000, 300)]
    why = ours if info is None else same_dets(ours, want)
    chk.ok(f"aihub scores [1, {A}, {nc}], named outputs in another order", why is None, why)


def box_mapping(drv, chk):
    """Mapping back to frame pixels: through the letterbox's own padding (the default), or as
    Ultralytics' predict does (box_mapping ultralytics): scale_boxes recomputes the padding from
    the gain as round((640 - w * gain) / 2 - 0.1), which for some sizes is one more than the
    letterbox's round((640 - round(w * gain)) / 2 - 0.1); scale_coords takes it unrounded."""
    differ = [(w, h) for w in range(1, 641) for h in range(1, 641)
              if ref.letterbox_geometry(h, w, 640, 640)[2][:2] != ref.scale_boxes_pads(640, 640, h, w)[1]]
    print(f"     the two paddings differ for {len(differ)} of {640 * 640} frame sizes up to 640x640 "
          f"({100 * len(differ) / 640 ** 2:.1f}%)")
    chk.ok("100x62 into 640x640: the letterbox's top 121, scale_boxes' 122",
           ref.letterbox_geometry(62, 100, 640, 640)[2][1] == 121 and
           ref.scale_boxes_pads(640, 640, 62, 100)[1][1] == 122 and (100, 62) in differ)
    rng = np.random.default_rng(62)
    pose = plant(rng, 400, 1, 640, 640, 9, extra=51)
    t = Tensor("output0", "f32", [1, 56, 400])
    for (w, h, crop) in ((100, 62, (0, 0, 0, 0)), (1920, 1080, (0, 0, 0, 0)), (333, 517, (0, 0, 0, 0)),
                         (640, 480, (20, 10, 100, 62))):
        geo, _ = drv.pre(bytes(w * h * 3), "rgb24", w, h, image_tensor(640, 640, 3, "u8", None, "nhwc"),
                         crop=crop)
        region = (geo["rx"], geo["ry"], geo["rw"], geo["rh"])
        g = (*region, geo["left"], geo["top"], geo["scale_x"], geo["scale_y"], 640, 640)
        gain, box_pad, kp_pad = ref.scale_boxes_pads(640, 640, geo["rh"], geo["rw"])
        for mapping in ("letterbox", "ultralytics"):
            info, ours = drv.dec([(t, pose[None])], head="ultralytics_pose", nc=1, geometry=g,
                                 mapping=mapping)
            if info is None:
                chk.ok(f"box mapping {mapping} {w}x{h}", False, ours)
                continue
            keep = ref.nms(ref.ultralytics_cands(pose, 1, 0.25), 0.7, 30000, 300)
            want = []
            for c in keep:
                if mapping == "letterbox":
                    to = lambda x, y: ref.map_xy(x, y, g[:8])
                    kto = to
                else:
                    to = lambda x, y: ref.ultralytics_xy(x, y, region, gain, box_pad)
                    kto = lambda x, y: ref.ultralytics_xy(x, y, region, gain, kp_pad)
                kps = []
                for j in range(17):
                    p = pose[5 + 3 * j:8 + 3 * j, c["anchor"]]
                    kps += [*kto(p[0], p[1]), p[2]]
                want.append({"box": [*to(*c["box"][:2]), *to(*c["box"][2:])], "score": c["score"],
                             "cls": c["cls"], "anchor": c["anchor"], "kp": kps})
            why = same_dets(ours, want)
            pads = f"pads {geo['left']},{geo['top']} vs scale_boxes {box_pad}"
            chk.ok(f"box mapping {mapping}, {w}x{h} crop {crop} ({pads})", why is None, why)


def dec_error(drv, chk, label, fragment, outputs, **kw):
    info, msg = drv.dec(outputs, **kw)
    chk.ok(f"error: {label}", info is None and fragment in msg, msg if info is None else "accepted")


def decode_errors(drv, chk):
    f = np.zeros((1, 84, 100), np.float32)
    dec_error(drv, chk, "head too small", "the ultralytics head needs 4 box values",
              [(Tensor("o", "f32", [1, 3, 100]), np.zeros((1, 3, 100), np.float32))])
    dec_error(drv, chk, "pose values not keypoints", "the pose head needs 4 box values",
              [(Tensor("o", "f32", [1, 84, 100]), f)], head="ultralytics_pose")
    dec_error(drv, chk, "rank 4 head", "is not a head of [1, C, A]",
              [(Tensor("o", "f32", [1, 1, 84, 100]), f)])
    g = f.copy()
    g[0, 30, 77] = np.nan
    dec_error(drv, chk, "NaN score f32", "the score of class 26 at anchor 77 is NaN",
              [(Tensor("output0", "f32", [1, 84, 100]), g)])
    dec_error(drv, chk, "NaN score f16", "at anchor 77 is NaN",
              [(Tensor("output0", "f16", [1, 84, 100]), g.astype(np.float16))])
    b = f.copy()
    b[0, 4, 9], b[0, 2, 9] = 0.9, np.nan
    dec_error(drv, chk, "NaN box of a candidate", "the box of anchor 9 is NaN",
              [(Tensor("output0", "f32", [1, 84, 100]), b)])
    dec_error(drv, chk, "aihub boxes not [1, A, 4]", "the aihub boxes are [1, A, 4]",
              [(Tensor("boxes", "f32", [1, 100, 5]), np.zeros((1, 100, 5), np.float32)),
               (Tensor("scores", "f32", [1, 100]), np.zeros((1, 100), np.float32))], head="aihub")
    dec_error(drv, chk, "aihub scores of another count", "one per box",
              [(Tensor("boxes", "f32", [1, 100, 4]), np.zeros((1, 100, 4), np.float32)),
               (Tensor("scores", "f32", [1, 99]), np.zeros((1, 99), np.float32))], head="aihub")
    cls = np.full((1, 100), 300, np.int32)
    s = np.zeros((1, 100), np.float32)
    s[0, 3] = 0.9
    dec_error(drv, chk, "aihub class out of range", "anchor 3 has class 300; expected a class id 0..79",
              [(Tensor("boxes", "f32", [1, 100, 4]), np.zeros((1, 100, 4), np.float32)),
               (Tensor("scores", "f32", [1, 100]), s), (Tensor("class_idx", "i32", [1, 100]), cls)],
              head="aihub", nc=80)
    dec_error(drv, chk, "bad IoU threshold", "IoU threshold 1.5 is not in 0..1",
              [(Tensor("output0", "f32", [1, 84, 100]), f)], iou=1.5)


def main():
    drv = Driver(sys.argv[1])
    chk = Checks()
    formats_matrix(drv, chk)
    photographs(drv, chk)
    types_and_options(drv, chk)
    fast_rows(drv, chk)
    frame_errors(drv, chk)
    heads(drv, chk)
    aihub(drv, chk)
    box_mapping(drv, chk)
    decode_errors(drv, chk)
    drv.close()
    print(f"vision oracle: {chk.exact} of {chk.values} input values equal OpenCV's exactly, "
          "the rest within one level")
    print(f"{chk.passed} passed, {chk.failed} failed")
    return 1 if chk.failed else 0


if __name__ == "__main__":
    sys.exit(main())
