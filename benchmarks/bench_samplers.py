"""Time dpdl's noise samplers against numpy's ``Generator.laplace`` on one thread.

Run ``python benchmarks/bench_samplers.py``. Each case draws FEMNIST's per-iteration volume of
noise (195 agents x 784 x 62 = 9.5 million coordinates for dp_iadmm) and reports the best of
several repeats in milliseconds and its speed-up over ``Generator.laplace`` measured in the
same run. The script exits with status 1 if dpdl's Laplace sampler is not at least 1.5x faster.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, set before numpy loads

import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.privacy import gaussian, laplace, norm_exponential  # noqa: E402

DRAWS = 195 * 784 * 62  # 9,478,560 Laplace coordinates per FEMNIST iteration
REPEATS = 7
SEED = 0
REQUIRED_SPEEDUP = 1.5
NORM_DIMENSION = 63  # Adult's feature dimension in dvp_pvp; DRAWS // 63 vectors


def best_ms(draw: Callable[[], np.ndarray]) -> float:
    """Best wall time of ``REPEATS`` calls, in milliseconds, after one warm-up call."""
    draw()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        draw()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def main() -> int:
    rng = np.random.default_rng(SEED)
    cases: dict[str, Callable[[], np.ndarray]] = {
        "Generator.laplace (baseline), float64": lambda: rng.laplace(0.0, 1.0, DRAWS),
        "dpdl laplace, float64": lambda: laplace(rng=rng, scale=1.0, size=DRAWS),
        "dpdl laplace, float32": lambda: laplace(rng=rng, scale=1.0, size=DRAWS, dtype=np.float32),
        "dpdl gaussian, float64": lambda: gaussian(rng=rng, scale=1.0, size=DRAWS),
        "dpdl gaussian, float32": lambda: gaussian(
            rng=rng, scale=1.0, size=DRAWS, dtype=np.float32
        ),
        f"dpdl norm_exponential d={NORM_DIMENSION}, float64": lambda: norm_exponential(
            rng=rng, zeta=1.0, d=NORM_DIMENSION, size=DRAWS // NORM_DIMENSION
        ),
    }
    print(f"{DRAWS:,} draws per call, best of {REPEATS}, one thread, numpy {np.__version__}")
    timings = {name: best_ms(draw) for name, draw in cases.items()}
    baseline = timings["Generator.laplace (baseline), float64"]
    for name, ms in timings.items():
        print(f"{name:<45} {ms:8.1f} ms   {baseline / ms:5.2f}x vs Generator.laplace")
    speedup = baseline / timings["dpdl laplace, float64"]
    if speedup < REQUIRED_SPEEDUP:
        print(f"FAIL: dpdl laplace is {speedup:.2f}x, below the required {REQUIRED_SPEEDUP}x")
        return 1
    print(f"OK: dpdl laplace (float64) is {speedup:.2f}x faster than Generator.laplace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
