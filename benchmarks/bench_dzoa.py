"""Time D-ZOA and DP-ADMM as the dzoa rules run them, and project the ``paper`` config's wall time.

Run ``python benchmarks/bench_dzoa.py [--outer M]`` from the project root. On one thread it
times, on generated data of the paper's size (K = 5, N_k = 20, P = 10, T = 100, J = 30):

- D-ZOA unbatched: one privacy setting per call (the note measured 4.4 s per run this way, with
  loops over agents and steps);
- D-ZOA batched: the 38 grid points of the ``paper`` config in one call (common directions),
  one trial, as each ``dzoa_run_dzoa`` job does;
- DP-ADMM: the 38 grid points on 10 trials in one call (the ``dzoa_run_dpadmm`` job);
- the start-up of one ``python -m dpdl dzoa`` job (imports).

Each D-ZOA case runs ``--outer`` outer iterations (default 4) and is scaled to M = 200. The
projection assumes 100 evaluation trials, 2 cores and this machine's load; other processes
disturb the absolute numbers, so ratios measured in the same run are the robust result.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, set before numpy loads

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.algorithms.dzoa import adjacency, dzoa, topology_edges  # noqa: E402
from dpdl.algorithms.dzoa_dpadmm import dp_admm  # noqa: E402
from dpdl.data.lasso import generate  # noqa: E402
from dpdl.models import lasso  # noqa: E402

K, N_K, P, T, J, M = 5, 20, 10, 100, 30, 200
PAPER_POINTS = 38  # 18 (Fig. 3b, with Fig. 2's 4) + 20 (Fig. 3a)
PAPER_TRIALS = 100
CORES = 2
STEP_SCALE = 1.5  # alpha0 R of a typical grid point (dzoa.md 3.5)


def cpu_seconds(function) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--outer", type=int, default=4, help="outer iterations timed per case (scaled to 200)"
    )
    outer = parser.parse_args().outer
    data = generate(trials=10, seed=0, agents=K, samples_per_agent=N_K, features=P, noise_variance=0.1)
    X, y = data["X"].reshape(10, K, N_K, P), data["y"].reshape(10, K, N_K)
    beta_c = lasso.solve(data["X"], data["y"], l1_weight=1.0).beta
    graph = adjacency(topology_edges("ring_chord", K), K)
    options = {
        "rho": 4.0,
        "l1_weight": 1.0,
        "loss_scale": 1.0,
        "lipschitz": 3.0,
        "smoothing": 1.0,
        "n_directions": J,
        "n_inner": T,
    }

    def run_dzoa(n_settings: int) -> None:
        rngs = [[np.random.default_rng([0, k]) for k in range(K)]]
        scales = np.full((n_settings, 1, K), STEP_SCALE)
        dzoa(X[:1], y[:1], beta_c[:1], graph, scales, rngs, n_outer=outer, **options)

    unbatched = cpu_seconds(lambda: run_dzoa(1)) * M / outer  # seconds per run
    batched = cpu_seconds(lambda: run_dzoa(PAPER_POINTS)) * M / outer  # seconds per trial (38 runs)

    def run_dpadmm() -> None:
        rngs = [[np.random.default_rng([b, k]) for k in range(K)] for b in range(10)]
        dp_admm(
            X,
            y,
            beta_c,
            rngs,
            penalty=np.full(PAPER_POINTS, 3.0),
            inverse_prox_step=np.full((PAPER_POINTS, M), 10.0),
            noise_std=np.full((PAPER_POINTS, M), 0.01),
            l1_weight=1.0,
            loss_scale=1.0,
        )

    dpadmm = cpu_seconds(run_dpadmm) * PAPER_TRIALS / 10  # all trials and points
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import dpdl.studies.dzoa, dpdl.runs, dpdl.algorithms.dzoa"], check=True
    )
    startup = time.perf_counter() - start

    paper_dzoa_cpu = PAPER_TRIALS * (batched + startup)
    print(f"D-ZOA unbatched (1 setting per call):  {unbatched:7.2f} s per run")
    print(
        f"D-ZOA batched ({PAPER_POINTS} settings per call): {batched:7.2f} s per trial = "
        f"{batched / PAPER_POINTS:.3f} s per run"
    )
    print(f"speed-up of batching, same process:     {unbatched * PAPER_POINTS / batched:7.1f}x")
    print(f"DP-ADMM, {PAPER_POINTS} points x {PAPER_TRIALS} trials:       {dpadmm:7.2f} s")
    print(f"start-up of one dzoa job:               {startup:7.2f} s")
    print(
        f"projected paper config: D-ZOA {paper_dzoa_cpu:.0f} CPU-s over {PAPER_TRIALS} jobs -> "
        f"{(paper_dzoa_cpu + dpadmm) / CORES / 60:.1f} min on {CORES} cores (plus tuning, aggregates, figures)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
