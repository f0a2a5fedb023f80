"""Time dpdl's noise samplers against numpy's own on one thread.

Run ``python benchmarks/bench_samplers.py``. Each case draws FEMNIST's per-iteration volume of
noise (195 agents x 784 x 62 = 9.5 million coordinates for dp_iadmm) and reports the best of
several repeats in milliseconds and its speed-up over ``Generator.laplace`` measured in the
same run; the Gaussian sampler is also compared with ``Generator.standard_normal`` in float32.
The script exits with status 1 if dpdl's Laplace or Gaussian sampler is not at least 1.5x faster
than numpy's.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, set before numpy loads

import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.privacy.samplers import gaussian, laplace, norm_exponential  # noqa: E402

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
        "Generator.standard_normal, float32": lambda: rng.standard_normal(DRAWS, dtype=np.float32),
        "dpdl gaussian, float64": lambda: gaussian(rng=rng, scale=1.0, size=DRAWS),
        "dpdl gaussian, float32": lambda: gaussian(rng=rng, scale=1.0, size=DRAWS, dtype=np.float32),
        f"dpdl norm_exponential d={NORM_DIMENSION}, float64": lambda: norm_exponential(
            rng=rng, zeta=1.0, d=NORM_DIMENSION, size=DRAWS // NORM_DIMENSION
        ),
    }
    print(f"{DRAWS:,} draws per call, best of {REPEATS}, one thread, numpy {np.__version__}")
    timings = {name: best_ms(draw) for name, draw in cases.items()}
    baseline = timings["Generator.laplace (baseline), float64"]
    for name, ms in timings.items():
        print(f"{name:<45} {ms:8.1f} ms   {baseline / ms:5.2f}x vs Generator.laplace")
    pairs = {
        "laplace (float64) vs Generator.laplace": (
            "dpdl laplace, float64",
            "Generator.laplace (baseline), float64",
        ),
        "gaussian (float32) vs Generator.standard_normal": (
            "dpdl gaussian, float32",
            "Generator.standard_normal, float32",
        ),
    }
    status = 0
    for label, (ours, numpy_own) in pairs.items():
        speedup = timings[numpy_own] / timings[ours]
        verdict = "OK" if speedup >= REQUIRED_SPEEDUP else "FAIL"
        print(f"{verdict}: dpdl {label}: {speedup:.2f}x (required {REQUIRED_SPEEDUP}x)")
        status |= speedup < REQUIRED_SPEEDUP
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
