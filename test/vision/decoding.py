"""The decoding checks of oracle.py: planted detector outputs of every head, layout and type
against a NumPy reference (reference.py: dequantization, xywh2xyxy, greedy per-class NMS,
scale_boxes + clip_boxes), and the errors of outputs that cannot be decoded."""
import numpy as np

import reference as ref
from vdriver import Tensor

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
    geo = geo[:8] if geo else None  # the region, pads and scales (without the input's size)
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
    """One planted head (vals: f32 [C, A]) stored in the tensor's type and decoded, against the
    reference on the dequantized values. Returns (passed, the reference's candidate count, its
    detections)."""
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
        return chk.ok(label, False, ours), n_cand, want
    why = same_dets(ours, want) or (None if info["candidates"] == n_cand else
                                    f"{info['candidates']} candidates, expected {n_cand}")
    return chk.ok(f"{label} ({len(want)} of {n_cand} candidates)", why is None, why), n_cand, want


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
        dec_case(drv, chk, f"u32 {dims}", v, Tensor("output0", "u32", dims, (1.9e-7, 65537)),
                 layout)
        dec_case(drv, chk, f"i32 {dims}", v, Tensor("output0", "i32", dims, (2.7e-7, -333)),
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


def aihub_objects(rng, A, nc, n):
    """n objects planted among A anchors (plant) as AI Hub's outputs see them: corner boxes
    [A, 4], each anchor's best score and its class."""
    v = plant(rng, A, nc, 640, 640, n)
    hw, hh = v[2] / 2, v[3] / 2
    xyxy = np.stack([v[0] - hw, v[1] - hh, v[0] + hw, v[1] + hh], 1).astype(np.float32)
    return v, xyxy, v[4:].max(0), v[4:].argmax(0)


def aihub(drv, chk):
    rng = np.random.default_rng(5)
    A, nc = 1500, 80
    v, xyxy, best, cls = aihub_objects(rng, A, nc, 10)
    for bt, bq, st, sq in (("f32", None, "f32", None), ("u8", (720 / 255, 20), "u8", (1 / 255, 0)),
                           ("u16", (720 / 65535, 2000), "u16", (1 / 65535, 0))):
        aihub_case(drv, chk, f"aihub boxes {bt} scores {st} classes u8", xyxy, best, cls,
                   Tensor("boxes", bt, [1, A, 4], bq), Tensor("scores", st, [1, A], sq),
                   Tensor("class_idx", "u8", [1, A]), geo=LETTERBOX_1080)
    # scores [1, A, nc] without a class output, and the outputs in another order
    ts = Tensor("scores", "f32", [1, A, nc])
    info, ours = drv.dec([(ts, v[4:].T[None].copy()), (Tensor("boxes", "f32", [1, A, 4]), xyxy[None])],
                         head="aihub", geometry=None)
    cands = [{"score": best[a], "anchor": int(a), "cls": int(cls[a]), "box": list(xyxy[a])}
             for a in np.nonzero(best > np.float32(0.25))[0]]
    want = [dict(k, kp=[]) for k in ref.nms(cands, 0.7, 30000, 300)]
    why = ours if info is None else same_dets(ours, want)
    chk.ok(f"aihub scores [1, {A}, {nc}], named outputs in another order", why is None, why)


# ---- every type of the pose and AI Hub heads, thresholds on a stored level ---------------------


def letterbox_geo(w, h, in_w, in_h, crop=None):
    """The geometry (rx, ry, rw, rh, left, top, sx, sy, in_w, in_h) of Ultralytics' LetterBox of
    a w x h frame (or of its crop (x, y, w, h)) into in_w x in_h."""
    rx, ry, rw, rh = crop or (0, 0, w, h)
    r, _, (left, top, _, _) = ref.letterbox_geometry(rh, rw, in_h, in_w)
    return (rx, ry, rw, rh, left, top, r, r, in_w, in_h)


def clipped(dets, geo):
    """How many detections have a corner on the region's edge (clip_boxes moved it there)."""
    rx, ry, rw, rh = (np.float32(v) for v in geo[:4])
    return sum(1 for d in dets if d["box"][0] == rx or d["box"][1] == ry or
               d["box"][2] == rx + rw or d["box"][3] == ry + rh)


def pose_plant(rng, anchors, in_w, in_h, objects):
    """A pose head [5 + 51, A]: plant's boxes and one class, keypoints anywhere around the input,
    visibilities in 0..1."""
    v = plant(rng, anchors, 1, in_w, in_h, objects, extra=51)
    v[7::3] = rng.uniform(0, 1, v[7::3].shape)
    return v


def score_step(tensor, channel):
    """The distance between two stored levels of the score channel (f16: None, its spacing)."""
    q = tensor.quant
    return None if q is None else np.float32(q[0] if len(q) == 2 else q[1][channel])


def levels(scores, step):
    """Thresholds around a stored level that some anchors' best score sits on (the most common in
    0.3..0.95): 0.4 of a step and one f32 ulp below it, on it, one ulp and 0.4 of a step above.
    Only a comparison in the quantized domain that rounds as the dequantization does gets all
    five right. Returns the level, how many best scores sit on it, and the thresholds."""
    vals, counts = np.unique(scores[(scores > 0.3) & (scores < 0.95)], return_counts=True)
    v = vals[np.argmax(counts)]
    f = np.float32
    step = f(np.spacing(np.float16(v))) if step is None else step
    ts = [f(v - f(0.4) * step), np.nextafter(v, f(0)), v, np.nextafter(v, f(1)),
          f(v + f(0.4) * step)]
    return v, int((scores == v).sum()), ts


def level_cases(chk, label, run, scores, step):
    """run(threshold) -> (passed, candidates, detections) at each of levels' thresholds; the
    candidates must drop by the anchors on the level as the threshold reaches it (0.4 of a step
    may be less than an f32 ulp: u32 and i32 probabilities have many stored levels per f32)."""
    v, on, ts = levels(scores, step)
    got = [run(float(t))[1] for t in ts]
    chk.ok(f"{label}: {on} best scores on the level {v!r}, candidates {got}",
           on > 0 and got[1] == got[2] + on, f"expected a drop of {on} at the level")


POSE_TYPES = [  # dtype, quantization, model side (u8 and i8 share one scale: a 64-pixel model)
    ("u8", (80 / 255, 11), 64),
    ("i8", (0.29, -97), 64),
    ("u16", (900 / 65535, 4321), 640),
    ("i16", (730 / 32767, -123), 640),
    ("u32", (1.7e-7, 98765), 640),
    ("i32", (3.1e-7, -4567), 640),
    ("f16", None, 640),
]


def pose_types(drv, chk):
    """The pose head in every integer type, per tensor and per channel, in both layouts, mapped
    through letterboxes of odd non-square frames (some boxes and keypoints past the frame's
    edge), with thresholds on and next to a stored score level."""
    rng = np.random.default_rng(56)
    heads_of = {64: pose_plant(rng, 1344, 64, 64, 9), 640: pose_plant(rng, 2100, 640, 640, 9)}
    geos = {64: letterbox_geo(131, 77, 64, 64),
            640: letterbox_geo(1279, 721, 640, 640, (7, 5, 1265, 709))}
    cases = POSE_TYPES + [  # per channel: boxes, score, then x, y, visibility of each keypoint
        ("u8", ("pc", [2.9, 2.7, 1.3, 1.1, 0.0041] + [3.3, 3.1, 0.0043] * 17,
                [13, 17, -3, 1, 7] + [21, 19, 2] * 17), 640),
        ("i16", ("pc", [0.021, 0.019, 0.0071, 0.0067, 3.1e-5] + [0.023, 0.029, 3.7e-5] * 17,
                 [-123, 45, -7, 3, -1234] + [77, -66, 5] * 17), 640)]
    for i, (dtype, q, side) in enumerate(cases):
        v, geo = heads_of[side], geos[side]
        A = v.shape[1]
        for layout in ("channels_first", "anchors_first"):
            dims = [1, 56, A] if layout == "channels_first" else [1, A, 56]
            axis = 1 if layout == "channels_first" else 2
            quant = (axis, q[1], q[2]) if q and q[0] == "pc" else q
            t = Tensor("output0", dtype, dims, quant)
            kind = "per-channel " if quant and len(quant) == 3 else ""
            label = f"pose {kind}{dtype} {dims} {geo[2]}x{geo[3]} -> {side}"
            run = lambda s, t=t, layout=layout, label=label: dec_case(
                drv, chk, f"{label} score {s!r}", v, t, layout, nc=1, score=s, geo=geo,
                head="ultralytics_pose", kp=(17, 3))
            _, _, want = run(0.25)
            chk.ok(f"{label}: boxes clipped at the frame's edge", clipped(want, geo) > 0)
            if (layout == "channels_first") == (i % 2 == 0):
                stored = store((v if layout == "channels_first" else v.T)[None], t,
                               1 if layout == "channels_first" else 2)
                deq = ref.dequant(stored, t)[0]
                scores = (deq if layout == "channels_first" else deq.T)[4]
                level_cases(chk, label, run, scores, score_step(t, 4))


BOX_TYPES = {  # the corners of a 640-pixel model in each type
    "f32": None, "f16": None, "u8": (730 / 255, 23), "i8": (3.7, -41), "u16": (870 / 65535, 3011),
    "i16": (0.0231, -517), "u32": (2.3e-7, 777777), "i32": (3.3e-7, -9876)}
SCORE_TYPES = {  # probabilities in each type
    "f32": None, "f16": None, "u8": (0.0041, 9), "i8": (0.0043, -115), "u16": (1.7e-5, 321),
    "i16": (3.3e-5, -999), "u32": (2.9e-10, 123457), "i32": (5.1e-10, -54321)}
CLASS_TYPES = ["u8", "i8", "u16", "i16", "u32", "i32", "f16", "f32"]
GEO_ODD = letterbox_geo(1279, 721, 640, 640)
GEO_WIDE = letterbox_geo(1279, 721, 640, 384)  # a wide input: boxes below it are clipped too


def aihub_case(drv, chk, label, xyxy, best, cls, tb, ts, tc, score=0.25, geo=GEO_ODD):
    """Boxes [1, A, 4], scores [1, A] and class ids [1, A] in the tensors' types, decoded against
    the reference on their dequantized values (class ids as stored)."""
    b, s = store(xyxy[None], tb), store(best[None], ts)
    c = cls[None].astype(tc.np)
    db, ds = ref.dequant(b, tb)[0], ref.dequant(s, ts)[0]
    cands = [{"score": ds[a], "anchor": int(a), "cls": int(c[0, a]), "box": list(db[a])}
             for a in np.nonzero(ds > np.float32(score))[0]]
    g8 = geo[:8]
    want = [{"box": [*ref.map_xy(k["box"][0], k["box"][1], g8),
                     *ref.map_xy(k["box"][2], k["box"][3], g8)],
             "score": k["score"], "cls": k["cls"], "anchor": k["anchor"], "kp": []}
            for k in ref.nms(cands, 0.7, 30000, 300)]
    info, ours = drv.dec([(tb, b), (ts, s), (tc, c)], score=score, geometry=geo)
    why = ours if info is None else same_dets(ours, want) or (
        None if info["candidates"] == len(cands) else
        f"{info['candidates']} candidates, expected {len(cands)}")
    ok = chk.ok(f"{label} ({len(want)} of {len(cands)} candidates, {clipped(want, geo)} clipped)",
                why is None, why)
    return ok, len(cands), want


def aihub_types(drv, chk):
    """Boxes, scores and class ids each in every type the decoder reads (the other two in f32 and
    i32), then all three in one type, with thresholds on and next to a stored score level; the
    boxes of objects past the frame's edge are clipped to it."""
    rng = np.random.default_rng(15)
    A, nc = 1500, 80
    v, xyxy, best, cls = aihub_objects(rng, A, nc, 12)
    B = lambda d: Tensor("boxes", d, [1, A, 4], BOX_TYPES[d])
    S = lambda d: Tensor("scores", d, [1, A], SCORE_TYPES[d])
    C = lambda d: Tensor("class_idx", d, [1, A])
    for d in BOX_TYPES:
        aihub_case(drv, chk, f"aihub boxes {d} {BOX_TYPES[d]}", xyxy, best, cls, B(d), S("f32"),
                   C("i32"))
    for d in SCORE_TYPES:
        aihub_case(drv, chk, f"aihub scores {d} {SCORE_TYPES[d]}", xyxy, best, cls, B("f32"),
                   S(d), C("i32"))
    for d in CLASS_TYPES:
        aihub_case(drv, chk, f"aihub class ids {d}", xyxy, best, cls, B("f32"), S("f32"), C(d))
    for d in BOX_TYPES:
        label = f"aihub boxes, scores, class ids {d} into 640x384"
        run = lambda s, d=d, label=label: aihub_case(drv, chk, f"{label} score {s!r}", xyxy, best,
                                                     cls, B(d), S(d), C(d), score=s, geo=GEO_WIDE)
        run(0.25)
        if d != "f32":
            ts = S(d)
            stored = ref.dequant(store(best[None], ts), ts)[0]
            level_cases(chk, label, run, stored, score_step(ts, 0))
    # scores [1, A, nc] without class ids: one scale per class (read as floats), and one scale
    aihub_class_scores(drv, chk, v[4:].T.copy(), xyxy)


def aihub_class_scores(drv, chk, scores, xyxy):
    """Scores [1, A, nc] without class ids: one scale per class (compared as floats) or one for
    all; threshold 0 makes every background anchor a candidate, its classes tied on a level (the
    first is taken, as argmax does). Boxes quantized per coordinate."""
    A, nc = scores.shape
    tb = Tensor("boxes", "u8", [1, A, 4], (2, [2.9, 2.7, 3.1, 2.8], [23, 29, 3, 5]))
    b = store(xyxy[None], tb, 2)
    db = ref.dequant(b, tb)[0]
    per_class = (2, [0.0041 + 0.0001 * (k % 7) for k in range(nc)], [k % 13 for k in range(nc)])
    for d, q in (("u8", per_class), ("i8", (0.0043, -115))):
        ts = Tensor("scores", d, [1, A, nc], q)
        s = store(scores[None], ts, 2)
        ds = ref.dequant(s, ts)[0]
        dbest, dcls = ds.max(1), ds.argmax(1)
        for score in (0.0, 0.25):
            cands = [{"score": dbest[a], "anchor": int(a), "cls": int(dcls[a]), "box": list(db[a])}
                     for a in np.nonzero(dbest > np.float32(score))[0]]
            want = [dict(k, kp=[]) for k in ref.nms(cands, 0.7, 30000, 300)]
            info, ours = drv.dec([(tb, b), (ts, s)], head="aihub", geometry=None, score=score)
            why = ours if info is None else same_dets(ours, want) or (
                None if info["candidates"] == len(cands) else f"{info['candidates']} candidates")
            kind = "per-class" if len(q) == 3 else "per-tensor"
            chk.ok(f"aihub scores {d} {kind} [1, {A}, {nc}] score {score}, boxes u8 per coordinate "
                   f"({len(want)} of {len(cands)})", why is None, why)


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
        geo, _ = drv.pre(bytes(w * h * 3), "rgb24", w, h, Tensor("images", "u8", [1, 640, 640, 3]),
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
    unsupported_types(drv, chk)
    dec_error(drv, chk, "bad IoU threshold", "IoU threshold 1.5 is not in 0..1",
              [(Tensor("output0", "f32", [1, 84, 100]), f)], iou=1.5)


def unsupported_types(drv, chk):
    """Outputs of a type the decoder does not read (64-bit integers, booleans) in every place a
    head reads from are refused, naming the output, its type and the types read; so are class ids
    that are not class numbers."""
    A = 100
    ok = {"boxes": np.zeros((1, A, 4), np.float32), "scores": np.zeros((1, A), np.float32),
          "class_idx": np.zeros((1, A), np.int32)}
    ok_types = {"boxes": "f32", "scores": "f32", "class_idx": "i32"}
    read = "a detector output is u8, i8, u16, i16, u32, i32, f16 or f32"
    for d in ("u64", "i64", "bool8"):
        np_d = Tensor("x", d, [1]).np
        for head, c in (("ultralytics", 84), ("ultralytics_pose", 56)):
            dec_error(drv, chk, f"{head} head of {d}", f"output 'output0' is {d}; {read}",
                      [(Tensor("output0", d, [1, c, A]), np.zeros((1, c, A), np_d))], head=head,
                      nc=1 if head == "ultralytics_pose" else 0)
        for bad in ok:
            outs = [(Tensor(n, d if n == bad else ok_types[n], a.shape),
                     a.astype(np_d if n == bad else a.dtype)) for n, a in ok.items()]
            outs[1][1][0, 3] = 0.9  # a candidate, so that its class id is read
            dec_error(drv, chk, f"aihub {bad} of {d}", f"output '{bad}' is {d}; {read}", outs,
                      head="aihub")
    s = np.zeros((1, A), np.float32)
    s[0, 3] = 0.9
    for d, v, shown in (("i8", -2, "-2"), ("f32", np.nan, "nan"), ("f16", 80.5, "80.5")):
        c = np.zeros((1, A), Tensor("x", d, [1]).np)
        c[0, 3] = v
        expect = f"anchor 3 has class {shown}; expected a class id 0..79"
        dec_error(drv, chk, f"aihub class id {v} in {d}", expect,
                  [(Tensor("boxes", "f32", [1, A, 4]), ok["boxes"]),
                   (Tensor("scores", "f32", [1, A]), s), (Tensor("class_idx", d, [1, A]), c)],
                  head="aihub", nc=80)
