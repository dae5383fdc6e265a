#!/usr/bin/env python3
"""numpy_peer.py - the peer of `make bench`: numpy doing the f32 -> u8 quantization the C
kernels do (np.rint on x / scale, the zero point added, np.clip to the type's range, astype),
for the element counts given, min and median over the repeats.

    python3 numpy_peer.py REPS N...     prints "numpy N MIN_NS MEDIAN_NS" per N

Prints "numpy-absent REASON" and exits 0 when numpy cannot be imported, so the bench can say so.
Inputs span the same range as the C u8 case (bench_kernels.c): quantized values a little
beyond 0..255.
"""
import statistics
import sys
import time

try:
    import numpy as np
except ImportError as e:
    print(f"numpy-absent {e} (Debian: apt-get install python3-numpy)", flush=True)
    sys.exit(0)

SCALE = np.float32(0.0235294)
ZP = np.float32(128)


def quantize(x):
    return np.clip(np.rint(x / SCALE) + ZP, 0, 255).astype(np.uint8)


def main():
    reps = int(sys.argv[1])
    rng = np.random.default_rng(1)
    for n in (int(a) for a in sys.argv[2:]):
        x = ((rng.random(n) * 271 - 8 - float(ZP)) * float(SCALE)).astype(np.float32)
        quantize(x)  # warm-up: page faults and numpy's first-call costs
        times = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            quantize(x)
            times.append(time.perf_counter_ns() - t0)
        print(f"numpy {n} {min(times)} {statistics.median(times)}", flush=True)


main()
