#!/usr/bin/python3
"""cv2_peer.py - the peer of `make bench`'s vision rows (bench/bench_vision.c): OpenCV and NumPy
doing the same work, one thread (cv2.setNumThreads(1)), min and median over the repeats.

    /usr/bin/python3 cv2_peer.py REPS HEAD.u8     prints "peer KEY MIN_NS MEDIAN_NS" per row

Rows: memcpy (numpy copy of the 1920x1080 RGB24 frame), letterbox (Ultralytics' LetterBox:
cv2.resize INTER_LINEAR + cv2.copyMakeBorder with 114), nv12 (cv2.cvtColor NV12 -> RGB first),
u16 (the letterbox, then astype(uint16) * 257: the A16 input of scale 1/65535), f32 (then
astype(float32) / 255), letterbox720 / nv12_720 and letterbox480 / nv12_480 (the same for
1280x720 and 640x480 frames: a 2x resize, and none), decode (the [1,84,8400] head of HEAD.u8, dequantized to f32 before
the clock starts: NumPy's decode as Ultralytics writes it, the best class per anchor, above
0.25, boxes to corners, then cv2.dnn.NMSBoxes per class through Ultralytics' class offset).
Prints "cv2-absent REASON" and exits 0 when cv2 cannot be imported.
"""
import statistics
import sys
import time

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"cv2-absent {e} (Debian: apt-get install python3-opencv)", flush=True)
    sys.exit(0)

cv2.setNumThreads(1)
W, H, S = 1920, 1080, 640


def letterbox(img):
    h, w = img.shape[:2]
    r = min(S / h, S / w)
    nw, nh = int(round(w * r)), int(round(h * r))
    dw, dh = (S - nw) / 2, (S - nh) / 2
    if (w, h) != (nw, nh):
        img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
    left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
    return cv2.copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT,
                              value=(114, 114, 114))


def decode(head, conf=0.25, iou=0.7):
    x = head[0].T                                   # [8400, 84]
    scores = x[:, 4:]
    cls = scores.argmax(axis=1)
    best = scores[np.arange(len(cls)), cls]
    keep = best > conf
    b, s, c = x[keep, :4], best[keep], cls[keep]
    xyxy = np.empty_like(b)
    xyxy[:, :2] = b[:, :2] - b[:, 2:] / 2
    xyxy[:, 2:] = b[:, :2] + b[:, 2:] / 2
    off = xyxy + c[:, None] * 7680.0                # per class, as Ultralytics' NMS does it
    wh = np.concatenate([off[:, :2], off[:, 2:] - off[:, :2]], axis=1)
    idx = cv2.dnn.NMSBoxes(wh.tolist(), s.tolist(), conf, iou, top_k=300)
    return xyxy[idx], s[idx], c[idx]


def timed(reps, fn):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return min(times), statistics.median(times)


def main():
    reps = int(sys.argv[1])
    rng = np.random.default_rng(33)
    rgb = rng.integers(0, 256, (H, W, 3), np.uint8)
    nv12 = rng.integers(0, 256, (H * 3 // 2, W), np.uint8)
    head = np.fromfile(sys.argv[2], np.uint8).reshape(1, 84, 8400).astype(np.float32) / 255
    rgb720, nv720 = rgb[:720, :1280].copy(), nv12[:1080, :1280].copy()
    rgb480, nv480 = rgb[:480, :640].copy(), nv12[:720, :640].copy()
    rows = [("memcpy", lambda: rgb.copy()),
            ("letterbox", lambda: letterbox(rgb)),
            ("nv12", lambda: letterbox(cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12))),
            ("u16", lambda: letterbox(rgb).astype(np.uint16) * np.uint16(257)),
            ("f32", lambda: letterbox(rgb).astype(np.float32) / 255),
            ("letterbox720", lambda: letterbox(rgb720)),
            ("nv12_720", lambda: letterbox(cv2.cvtColor(nv720, cv2.COLOR_YUV2RGB_NV12))),
            ("letterbox480", lambda: letterbox(rgb480)),
            ("nv12_480", lambda: letterbox(cv2.cvtColor(nv480, cv2.COLOR_YUV2RGB_NV12))),
            ("decode", lambda: decode(head))]
    for key, fn in rows:
        mn, md = timed(reps, fn)
        print(f"peer {key} {mn} {md}", flush=True)


main()
