#!/usr/bin/python3
"""The vision room against OpenCV and NumPy (test/vision/run.sh; part of `make test`).

    oracle.py BUILD/vision_driver

Frames -> input: photographs (Debian's opencv-doc) and synthetic frames in every pixel format,
odd and even sizes, packed and padded rows, detached NV12 UV planes, crops, every resize mode,
type and layout, against cv2.cvtColor + cv2.resize + cv2.copyMakeBorder + NumPy conversions
(Ultralytics' LetterBox expressions): the geometry must be exact and every value within one
pixel level (OpenCV's INTER_LINEAR rounds two ways; counts of exact matches are printed).
Outputs -> detections (decoding.py): planted heads of every layout and type against a NumPy
greedy per-class NMS. Bad input: the error names what was wrong. Prints one line per check, then "N passed,
N failed"; exits non-zero on a failure."""
import sys

import numpy as np

import decoding
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


def main():
    drv = Driver(sys.argv[1])
    chk = Checks()
    formats_matrix(drv, chk)
    photographs(drv, chk)
    types_and_options(drv, chk)
    fast_rows(drv, chk)
    frame_errors(drv, chk)
    decoding.heads(drv, chk)
    decoding.pose_types(drv, chk)
    decoding.aihub(drv, chk)
    decoding.aihub_types(drv, chk)
    decoding.box_mapping(drv, chk)
    decoding.decode_errors(drv, chk)
    drv.close()
    print(f"vision oracle: {chk.exact} of {chk.values} input values equal OpenCV's exactly, "
          "the rest within one level")
    print(f"{chk.passed} passed, {chk.failed} failed")
    return 1 if chk.failed else 0


if __name__ == "__main__":
    sys.exit(main())
