"""Project the wall time of the wddp study under ``config/paper.yaml`` from short measured runs.

Run ``python benchmarks/bench_wddp.py [--configfile config/paper.yaml] [--rounds 20]`` from the
project root after the prepared datasets exist (``snakemake --cores 1 data/processed/wddp/kdd.npz
data/processed/wddp/adult.npz``). On one thread it times, per dataset:

- one Experiment A batch (every method, epsilon and seed at the config's largest m) and one
  Experiment B batch (every method, u and seed at (16, 0.05)) for ``--rounds`` rounds, giving the
  cost of one round of one batch;
- the evaluation of the logged snapshots, theta*, and the step-size cross-validation (scaled
  from the same number of rounds);

then multiplies out to the config's T and grid: every batch is (columns x T) column-rounds and
costs the measured per-column-round time of the same dataset and batch shape. The projection
assumes the measured machine load holds, the 2 cores run two jobs at a time, and each Snakemake
job adds ``JOB_OVERHEAD_S`` (Python start-up and imports, measured in the ci run).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread per job, as Snakemake runs them

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.config import load_config  # noqa: E402
from dpdl.studies.common import format_number  # noqa: E402
from dpdl.studies.wddp import grid, run, tune  # noqa: E402

JOB_OVERHEAD_S = 3.0  # Python start-up + imports + Snakemake bookkeeping per job (ci-run benchmarks)
CORES = 2


def time_batch(
    settings: dict, dataset: str, data: dict, experiment: str, clients: int, epsilon: float | None
) -> tuple[float, int]:
    """Seconds per round of one batch, and its number of columns."""
    x, labels = data["X_train"], data["y_train"]
    step = {m: {format_number(e): 0.5 for e in grid.run_epsilons(settings)} for m in grid.PRIVATE_METHODS}
    groups, columns = run.build_batch(
        settings, dataset, x.shape[0], x.shape[1], experiment, clients, epsilon, step
    )
    rngs = [run.noise_generator(dataset, c, experiment, clients) for c in columns]
    start = time.perf_counter()
    run.descend(settings, x, labels, groups, columns, rngs, [settings["iterations"]], "bench")
    return (time.perf_counter() - start) / settings["iterations"], len(columns)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", default="config/paper.yaml")
    parser.add_argument("--rounds", type=int, default=20, help="rounds timed per batch")
    args = parser.parse_args()
    settings = load_config(args.configfile)["wddp"]
    short = {**settings, "iterations": args.rounds, "trace_points": 1}
    total_rounds = settings["iterations"]
    jobs, serial = 0, 0.0
    for dataset in grid.DATASETS:
        data = run.load_dataset(f"data/processed/wddp/{dataset}.npz")
        per_round = {}
        for experiment, clients, epsilon in (
            ("epsilon", max(settings["clients"]), None),
            ("unevenness", 16, 0.05),
        ):
            seconds, k = time_batch(short, dataset, data, experiment, clients, epsilon)
            per_round[experiment] = seconds / k
            print(
                f"{dataset:5s} {experiment:10s} batch: {k:3d} columns, {1e3 * seconds:7.1f} ms per round, "
                f"{1e6 * seconds / k:6.0f} us per column-round"
            )
        start = time.perf_counter()
        optimum = tune.compute_optimum(data, settings["l2"])
        optimum_s = time.perf_counter() - start
        snapshots = np.zeros((settings["trace_points"] + 1, data["X_train"].shape[1], 180))
        start = time.perf_counter()
        run.evaluate(snapshots, data, optimum["loss"], settings["l2"])
        evaluate_s = (time.perf_counter() - start) / 180
        tuning = settings["tuning"]
        tune_columns = (
            tuning["folds"] * tuning["seeds"] * len(grid.PRIVATE_METHODS) * len(settings["step_sizes"])
        )
        tune_columns *= len(tune.cross_validated_epsilons(settings))
        tune_s = tune_columns * total_rounds * per_round["epsilon"] * (1 - 1 / tuning["folds"])
        a_columns = len(settings["clients"]) * len(settings["epsilons"]) * settings["seeds"] * 3
        b_columns = len(grid.UNEVENNESS_SETTINGS) * len(settings["unevenness"]) * settings["seeds"] * 3
        runs_s = (a_columns * per_round["epsilon"] + b_columns * per_round["unevenness"]) * total_rounds
        runs_s += (a_columns + b_columns) * evaluate_s
        dataset_s = optimum_s + tune_s + runs_s
        print(
            f"{dataset:5s} projected at T = {total_rounds}: theta* {optimum_s:.0f} s, tuning {tune_s:.0f} s "
            f"({tune_columns} column-runs), runs {runs_s:.0f} s ({a_columns} + {b_columns} column-runs), "
            f"total {dataset_s / 60:.1f} min on one core"
        )
        serial += dataset_s
        jobs += 2 + len(settings["clients"]) + len(grid.UNEVENNESS_SETTINGS)
    figures = len(grid.figure_ids(settings))
    jobs += 2 * figures + 2
    wall = (serial + jobs * JOB_OVERHEAD_S) / CORES
    print(
        f"projected: {serial / 60:.1f} min of compute + {jobs} jobs x {JOB_OVERHEAD_S:g} s overhead "
        f"({100 * jobs * JOB_OVERHEAD_S / serial:.1f}% of compute); about {wall / 60:.0f} min on {CORES} cores"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
