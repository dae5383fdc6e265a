"""The shapes detector's pieces (models/shapes/README.md), shared by train.py: the synthetic
frames and their letterbox, the network in numpy (forward and backward), and an independent
decode + NMS and scoring of detections against truth."""
import numpy as np

CLASSES = ["square", "disc", "triangle"]
NC = len(CLASSES)
SIZE = 64            # network input, square
STRIDE = 8           # one output cell per 8x8 input pixels
GRID = SIZE // STRIDE
PAD_VALUE = 114      # Ultralytics' letterbox grey


# ---- frames -----------------------------------------------------------------------------------

def background(rng, h, w):
    """A smooth two-colour gradient plus a little noise, u8 [h, w, 3]."""
    a, b = rng.uniform(20, 235, 3), rng.uniform(20, 235, 3)
    angle = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    t = (np.cos(angle) * xx / w + np.sin(angle) * yy / h)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    img = a[None, None, :] * (1 - t[..., None]) + b[None, None, :] * t[..., None]
    img += rng.normal(0, 5, img.shape)
    return img


def shape_mask(cls, cx, cy, s, h, w):
    """Coverage in [0,1] of a shape of class cls, centre (cx, cy), size s, over an h x w frame,
    from 4x4 supersampling (soft edges, as a camera gives). Returns (mask, tight box)."""
    ss = 4
    r = s / 2.0
    y0, y1 = max(int(cy - r) - 1, 0), min(int(cy + r) + 2, h)
    x0, x1 = max(int(cx - r) - 1, 0), min(int(cx + r) + 2, w)
    ys = y0 + (np.arange((y1 - y0) * ss, dtype=np.float32) + 0.5) / ss
    xs = x0 + (np.arange((x1 - x0) * ss, dtype=np.float32) + 0.5) / ss
    yy, xx = ys[:, None], xs[None, :]
    if cls == 0:    # square
        m = (np.abs(xx - cx) <= r) & (np.abs(yy - cy) <= r)
        box = (cx - r, cy - r, cx + r, cy + r)
    elif cls == 1:  # disc
        m = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        box = (cx - r, cy - r, cx + r, cy + r)
    else:           # triangle, apex up, base s, height s
        top, bottom = cy - r, cy + r
        frac = np.clip((yy - top) / s, 0, 1)
        m = (yy >= top) & (yy <= bottom) & (np.abs(xx - cx) <= frac * r)
        box = (cx - r, top, cx + r, bottom)
    full = np.zeros((h, w), np.float32)
    full[y0:y1, x0:x1] = m.reshape(y1 - y0, ss, x1 - x0, ss).mean(axis=(1, 3))
    return full, box


def draw_frame(rng, h, w):
    """A frame with 1..4 non-overlapping shapes: (u8 image [h,w,3], [(cls, x1, y1, x2, y2)])."""
    img = background(rng, h, w)
    objects, placed = [], []
    lo, hi = 0.18 * min(h, w), 0.4 * min(h, w)
    for _ in range(int(rng.integers(1, 5))):
        for _try in range(30):
            s = rng.uniform(lo, hi)
            cx, cy = rng.uniform(s / 2 + 1, w - s / 2 - 1), rng.uniform(s / 2 + 1, h - s / 2 - 1)
            if all(abs(cx - px) > (s + ps) / 2 + 2 or abs(cy - py) > (s + ps) / 2 + 2
                   for px, py, ps in placed):
                break
        else:
            continue
        cls = int(rng.integers(0, NC))
        bg = img[int(cy), int(cx)]
        for _c in range(20):  # a colour that stands out from the background under it
            colour = rng.uniform(0, 255, 3)
            if np.abs(colour - bg).max() > 80:
                break
        m, box = shape_mask(cls, cx, cy, s, h, w)
        img = img * (1 - m[..., None]) + colour[None, None, :] * m[..., None]
        placed.append((cx, cy, s))
        objects.append((cls,) + tuple(float(v) for v in box))
    return np.clip(np.rint(img), 0, 255).astype(np.uint8), objects


def random_size(rng):
    w = int(rng.integers(100, 241))
    aspect = rng.choice([4 / 3, 16 / 9, 1.0, 3 / 4, 3 / 2, rng.uniform(0.6, 2.0)])
    h = int(np.clip(round(w / aspect), 80, 240))
    return h, w


def letterbox_geometry(h, w):
    """Ultralytics' LetterBox (auto=False, center=True): the library's geometry."""
    r = min(SIZE / h, SIZE / w)
    nw, nh = int(round(w * r)), int(round(h * r))
    dw, dh = (SIZE - nw) / 2, (SIZE - nh) / 2
    left, top = int(round(dw - 0.1)), int(round(dh - 0.1))
    return r, nw, nh, left, top


def bilinear(img, nh, nw):
    """Half-pixel-centre bilinear resize (OpenCV's INTER_LINEAR mapping), float."""
    h, w = img.shape[:2]

    def axis(n_out, n_in):
        src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        i0 = np.floor(src).astype(np.int64)
        f = (src - i0).astype(np.float32)
        i1 = np.clip(i0 + 1, 0, n_in - 1)
        f = np.where(i0 < 0, 0, f)
        i0 = np.clip(i0, 0, n_in - 1)
        return i0, i1, f

    y0, y1, fy = axis(nh, h)
    x0, x1, fx = axis(nw, w)
    im = img.astype(np.float32)
    top = im[y0] * (1 - fy)[:, None, None] + im[y1] * fy[:, None, None]
    return top[:, x0] * (1 - fx)[None, :, None] + top[:, x1] * fx[None, :, None]


def letterbox(img, objects):
    """u8 [SIZE,SIZE,3] and the objects' boxes in input pixels."""
    h, w = img.shape[:2]
    r, nw, nh, left, top = letterbox_geometry(h, w)
    out = np.full((SIZE, SIZE, 3), PAD_VALUE, np.float32)
    out[top:top + nh, left:left + nw] = bilinear(img, nh, nw)
    boxes = [(c, x1 * r + left, y1 * r + top, x2 * r + left, y2 * r + top)
             for c, x1, y1, x2, y2 in objects]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), boxes


def training_set(rng, n):
    xs, targets = np.zeros((n, SIZE, SIZE, 3), np.uint8), []
    for i in range(n):
        img, objects = draw_frame(rng, *random_size(rng))
        xs[i], boxes = letterbox(img, objects)
        targets.append(boxes)
    return xs, targets


# ---- the network ------------------------------------------------------------------------------
#
#   image u8 [1,64,64,3] (pixel / 255)
#   c1 Conv2d 3x3 3->6 + Relu, PoolMax2d 2x2      -> [32,32,6]
#   c2 Conv2d 3x3 6->12 + Relu, PoolMax2d 2x2     -> [16,16,12]
#   c3 Conv2d 3x3 12->24 + Relu, PoolMax2d 2x2    -> p3 [8,8,24]
#   c4 Conv2d 3x3 24->24 + Relu, PoolMax2d 2x2    -> [4,4,24]
#   c5 Conv2d 3x3 24->24 + Relu, PoolMax2d 3x3 stride 1 pad 1 (an SPPF-like widening) -> [4,4,24]
#   ResizeNearestNeighbor to [8,8], Concat with p3 (channels)             -> [8,8,48]
#   c6 Conv2d 3x3 48->24 + Relu                   -> f [8,8,24]
#   box Conv2d 1x1 24->4, Sigmoid, * [24,24,64,64], + grid  -> cx, cy, w, h in input pixels
#   cls Conv2d 1x1 24->3, Sigmoid                  -> class scores
#   Concat (channels), Reshape [1,64,7], Transpose [0,2,1] -> [1,7,64]
#
# Box: cx = (gx - 1) * 8 + 24 s: the cell's centre +- 1.5 cells (YOLOv5's 2 sigmoid - 0.5 idea,
# wider), so the cell holding an object's centre reaches it wherever in the cell it lies.

CH = [6, 12, 24, 24, 24, 24]  # output channels of c1..c6
CONVS = [("c1", 3, 3, CH[0]), ("c2", 3, CH[0], CH[1]), ("c3", 3, CH[1], CH[2]),
         ("c4", 3, CH[2], CH[3]), ("c5", 3, CH[3], CH[4]), ("c6", 3, CH[2] + CH[4], CH[5]),
         ("box", 1, CH[5], 4), ("cls", 1, CH[5], NC)]
BOX_MUL = np.array([3 * STRIDE, 3 * STRIDE, SIZE, SIZE], np.float32)


def grid_add():
    g = np.zeros((GRID, GRID, 4), np.float32)
    g[..., 0] = (np.arange(GRID)[None, :] - 1) * STRIDE
    g[..., 1] = (np.arange(GRID)[:, None] - 1) * STRIDE
    return g


def init_params(rng):
    p = {}
    for name, k, ci, co in CONVS:
        p[name + "_w"] = (rng.standard_normal((k, k, ci, co)) * np.sqrt(2.0 / (k * k * ci))
                          ).astype(np.float32)
        p[name + "_b"] = np.zeros(co, np.float32)
    p["cls_b"][:] = -4.0  # start with few detections: most cells hold nothing
    return p


def im2col(x, k):
    n, h, w, c = x.shape
    if k == 1:
        return x
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return np.concatenate([xp[:, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=3)


def conv(x, w, b):
    k = w.shape[0]
    cols = im2col(x, k)
    return cols @ w.reshape(-1, w.shape[3]) + b, cols


def conv_back(dy, cols, w, x_shape):
    k, co = w.shape[0], w.shape[3]
    dw = (cols.reshape(-1, cols.shape[-1]).T @ dy.reshape(-1, co)).reshape(w.shape)
    db = dy.sum(axis=(0, 1, 2))
    dcols = dy @ w.reshape(-1, co).T
    if k == 1:
        return dcols, dw, db
    n, h, wd, c = x_shape
    dxp = np.zeros((n, h + 2, wd + 2, c), np.float32)
    for t, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        dxp[:, i:i + h, j:j + wd] += dcols[..., t * c:(t + 1) * c]
    return dxp[:, 1:-1, 1:-1], dw, db


def pool2(x):
    n, h, w, c = x.shape
    v = x.reshape(n, h // 2, 2, w // 2, 2, c)
    y = v.max(axis=(2, 4))
    mask = v == y[:, :, None, :, None, :]
    mask = (mask / mask.sum(axis=(2, 4), keepdims=True)).astype(np.float32)
    return y, mask


def pool2_back(dy, mask):
    n, h2, _, w2, _, c = mask.shape
    return (mask * dy[:, :, None, :, None, :]).reshape(n, h2 * 2, w2 * 2, c)


def pool3(x):
    """3x3, stride 1, padding 1 that never wins."""
    n, h, w, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    stack = np.stack([xp[:, i:i + h, j:j + w] for i in range(3) for j in range(3)])
    arg = stack.argmax(axis=0)
    return np.take_along_axis(stack, arg[None], 0)[0], arg


def pool3_back(dy, arg):
    n, h, w, c = dy.shape
    dxp = np.zeros((n, h + 2, w + 2, c), np.float32)
    for t, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        dxp[:, i:i + h, j:j + w] += dy * (arg == t)
    return dxp[:, 1:-1, 1:-1]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def forward(p, x, keep=False):
    """x f32 [N,64,64,3] in [0,1]. Returns (box [N,8,8,4] in input pixels, class logits
    [N,8,8,NC], cache for backward, and each activation for calibration)."""
    cache, acts = {}, {}
    h = x
    for name in ("c1", "c2", "c3", "c4"):
        a, cols = conv(h, p[name + "_w"], p[name + "_b"])
        r = np.maximum(a, 0)
        h, mask = pool2(r)
        cache[name] = (cols, a, mask, r.shape)
        acts[name] = a
        if name == "c3":
            p3 = h
    a, cols = conv(h, p["c5_w"], p["c5_b"])
    r = np.maximum(a, 0)
    q, arg = pool3(r)
    cache["c5"] = (cols, a, arg, h.shape)
    acts["c5"] = a
    up = q.repeat(2, axis=1).repeat(2, axis=2)
    cat = np.concatenate([p3, up], axis=3)
    a, cols = conv(cat, p["c6_w"], p["c6_b"])
    f = np.maximum(a, 0)
    cache["c6"] = (cols, a, cat.shape)
    acts["c6"] = a
    t, bcols = conv(f, p["box_w"], p["box_b"])
    s = sigmoid(t)
    box = s * BOX_MUL + grid_add()
    logits, ccols = conv(f, p["cls_w"], p["cls_b"])
    cache["head"] = (bcols, s, ccols, f)
    acts["box_t"], acts["cls_t"], acts["box"] = t, logits, box
    return box, logits, (cache if keep else None), acts


def backward(p, cache, dbox, dlogits):
    g = {}
    bcols, s, ccols, f = cache["head"]
    dt = dbox * BOX_MUL * s * (1 - s)
    df1, g["box_w"], g["box_b"] = conv_back(dt, bcols, p["box_w"], f.shape)
    df2, g["cls_w"], g["cls_b"] = conv_back(dlogits, ccols, p["cls_w"], f.shape)
    cols, a, cat_shape = cache["c6"]
    da = (df1 + df2) * (a > 0)
    dcat, g["c6_w"], g["c6_b"] = conv_back(da, cols, p["c6_w"], cat_shape)
    dp3, dup = dcat[..., :CH[2]], dcat[..., CH[2]:]
    n, h2, w2, c = dup.shape
    dq = dup.reshape(n, h2 // 2, 2, w2 // 2, 2, c).sum(axis=(2, 4))
    cols, a, arg, in_shape = cache["c5"]
    da = pool3_back(dq, arg) * (a > 0)
    dh, g["c5_w"], g["c5_b"] = conv_back(da, cols, p["c5_w"], in_shape)
    for name in ("c4", "c3", "c2", "c1"):
        if name == "c3":
            dh = dh + dp3
        cols, a, mask, r_shape = cache[name]
        da = pool2_back(dh, mask) * (a > 0)
        in_shape = (r_shape[0], r_shape[1], r_shape[2], p[name + "_w"].shape[2])
        dh, g[name + "_w"], g[name + "_b"] = conv_back(da, cols, p[name + "_w"], in_shape)
    return g


def targets_for(batch_boxes):
    """Per cell: the class one-hot and the box, for the cell holding each object's centre (its
    neighbours learn to stay quiet, so an object gives one strong prediction)."""
    n = len(batch_boxes)
    cls = np.zeros((n, GRID, GRID, NC), np.float32)
    box = np.zeros((n, GRID, GRID, 4), np.float32)
    pos = np.zeros((n, GRID, GRID), bool)
    for i, boxes in enumerate(batch_boxes):
        for c, x1, y1, x2, y2 in boxes:
            cx, cy, w, h = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
            gx = min(max(int(cx // STRIDE), 0), GRID - 1)
            gy = min(max(int(cy // STRIDE), 0), GRID - 1)
            cls[i, gy, gx] = 0
            cls[i, gy, gx, c] = 1
            box[i, gy, gx] = (cx, cy, w, h)
            pos[i, gy, gx] = True
    return cls, box, pos


def iou_and_grad(box, tbox):
    """IoU of (cx, cy, w, h) boxes with their targets, and its gradient by box (w, h > 0)."""
    cx, cy, w, h = (box[..., i] for i in range(4))
    tx1, ty1 = tbox[..., 0] - tbox[..., 2] / 2, tbox[..., 1] - tbox[..., 3] / 2
    tx2, ty2 = tbox[..., 0] + tbox[..., 2] / 2, tbox[..., 1] + tbox[..., 3] / 2
    x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    iw = np.minimum(x2, tx2) - np.maximum(x1, tx1)
    ih = np.minimum(y2, ty2) - np.maximum(y1, ty1)
    on = (iw > 0) & (ih > 0)
    iw, ih = np.maximum(iw, 0), np.maximum(ih, 0)
    inter, area = iw * ih, w * h
    union = np.maximum(area + tbox[..., 2] * tbox[..., 3] - inter, 1e-6)
    iou = inter / union
    d_inter, d_area = (union + inter) / union ** 2, -inter / union ** 2
    # the intersection's edges: each moves with the box's edge when that edge is the inner one
    dx1 = np.where(on & (x1 > tx1), -ih, 0.0)
    dx2 = np.where(on & (x2 < tx2), ih, 0.0)
    dy1 = np.where(on & (y1 > ty1), -iw, 0.0)
    dy2 = np.where(on & (y2 < ty2), iw, 0.0)
    g = np.stack([d_inter * (dx1 + dx2), d_inter * (dy1 + dy2),
                  d_inter * (dx2 - dx1) / 2 + d_area * h,
                  d_inter * (dy2 - dy1) / 2 + d_area * w], axis=-1)
    return iou, g


def loss_and_grads(p, x, batch_boxes):
    """Class scores: binary cross-entropy everywhere. Boxes, at the assigned cells: L1 on
    input-size units plus 1 - IoU (tight boxes, so NMS finds the duplicates of one object)."""
    box, logits, cache, _ = forward(p, x, keep=True)
    tcls, tbox, pos = targets_for(batch_boxes)
    prob = sigmoid(logits)
    bce = -(tcls * np.log(prob + 1e-9) + (1 - tcls) * np.log(1 - prob + 1e-9))
    npos = max(int(pos.sum()), 1)
    diff = (box - tbox) / SIZE
    l1 = np.abs(diff) * pos[..., None]
    iou, g_iou = iou_and_grad(box, tbox)
    loss = bce.sum() / npos + (5.0 * l1.sum() + 2.0 * ((1 - iou) * pos).sum()) / npos
    dlogits = ((prob - tcls) / npos).astype(np.float32)
    dbox = (5.0 * np.sign(diff) / SIZE - 2.0 * g_iou) * pos[..., None] / npos
    return float(loss), backward(p, cache, dbox.astype(np.float32), dlogits)


# ---- decoding and scoring (numpy, independent of the library) ---------------------------------

def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def decode(box, prob, score=0.25, iou_max=0.7):
    """One image's cells -> [(cls, score, x1, y1, x2, y2)] in input pixels, greedy per class."""
    box, prob = box.reshape(-1, 4), prob.reshape(-1, NC)
    cls, sc = prob.argmax(axis=1), prob.max(axis=1)
    cand = sorted((i for i in range(len(sc)) if sc[i] > score), key=lambda i: -sc[i])
    kept = []
    for i in cand:
        cx, cy, w, h = box[i]
        b = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        if all(k[0] != cls[i] or iou(k[2:], b) <= iou_max for k in kept):
            kept.append((int(cls[i]), float(sc[i])) + b)
    return kept


def match(found, truth, min_iou=0.5):
    """Greedy by score: a found box is right when it overlaps a not yet matched object of its
    class by IoU >= min_iou. Returns (objects found, false detections)."""
    used, hits = set(), 0
    for c, _s, *b in sorted(found, key=lambda d: -d[1]):
        best = max((j for j, t in enumerate(truth) if j not in used and t[0] == c),
                   key=lambda j: iou(b, truth[j][1:]), default=None)
        if best is not None and iou(b, truth[best][1:]) >= min_iou:
            used.add(best)
            hits += 1
    return hits, len(found) - hits


def evaluate_float(p, xs, boxes):
    hits = false = total = 0
    for start in range(0, len(xs), 64):
        box, logits, _, _ = forward(p, xs[start:start + 64].astype(np.float32) / 255.0)
        for i in range(box.shape[0]):
            h, f = match(decode(box[i], sigmoid(logits[i])), boxes[start + i])
            hits, false, total = hits + h, false + f, total + len(boxes[start + i])
    return hits, false, total
