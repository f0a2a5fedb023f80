"""Milliseconds per seed-iteration of DP-IADMM: the JAX program against the numba run, on this machine's CPU.

Usage (from the project root, with jax installed: ``pip install -e '.[gpu]'``)::

    python benchmarks/bench_dp_iadmm_jax.py [--iterations 20] [--seeds 10] [--algorithms objt outp]

Data: MNIST-sized random arrays (60,000 x 784 float32 features in [0, 1), 10 classes, 10 agents of
6,000 rows; a product's time does not depend on the values), epsilon-bar 0.05, MNIST's penalty
constants, the trace logged at t = 1 and T only. For each algorithm it runs
``dpdl.algorithms.dp_iadmm.run_iadmm`` (numba and numpy's BLAS) and
``dpdl.algorithms.dp_iadmm_jax.run_iadmm_jax`` (its own noise stream) for T iterations on every
seed at once, in turn in the same process, after one untimed run of each (numba's and XLA's
compilation; the JAX line gives that first run's extra wall time as ``first +s``, mostly XLA's
compilation). It prints wall time and
process CPU time (user + sys, all threads) per seed-iteration, and JAX's over numba's. Both use
every core they are given; the CPU column shows what they spent, the wall column what they took. One run
of each, so on a shared machine run it twice and compare.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import numpy as np

from dpdl.algorithms import dp_iadmm as iadmm
from dpdl.algorithms import dp_iadmm_jax as jax_iadmm
from dpdl.algorithms.dp_iadmm_data import federated_data
from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS

ROWS, FEATURES, CLASSES, AGENTS, TEST_ROWS = 60_000, 784, 10, 10, 10_000  # MNIST's shapes
EPSILON = 0.05


def timed(run) -> tuple[float, float]:
    """Wall and process CPU (user + sys) seconds of ``run()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--algorithms", nargs="+", default=["objt", "outp"], choices=iadmm.ALGORITHMS)
    args = parser.parse_args()
    fill = np.random.default_rng(0)
    features = fill.random((ROWS, FEATURES), dtype=np.float32)
    labels = fill.integers(0, CLASSES, ROWS)
    test_features, test_labels = features[:TEST_ROWS], labels[:TEST_ROWS]
    offsets = np.linspace(0, ROWS, AGENTS + 1).astype(np.int64)
    data = federated_data(features, labels, offsets, CLASSES, replicas=args.seeds)
    padded = jax_iadmm.padded_agents(features, labels, offsets, CLASSES)
    seeds = np.random.SeedSequence(0).spawn(args.seeds)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; jax {jax.__version__} "
        f"({jax.devices()[0].platform}); T = {args.iterations}, {args.seeds} seeds, MNIST-sized"
    )
    print(
        f"{'algorithm':<10}{'program':<8}{'wall ms':>10}{'CPU ms':>10}{'first +s':>11}   per seed-iteration"
    )
    per_step = args.iterations * args.seeds
    for algorithm in args.algorithms:
        params = iadmm.IadmmParams(
            algorithm,
            EPSILON,
            args.iterations,
            iadmm.PenaltySchedule(**PENALTY_CONSTANTS["mnist"]),
            log_every=args.iterations,
        )

        def numba_run(params=params):
            rngs = [np.random.default_rng(seed) for seed in seeds]
            iadmm.run_iadmm(data, params, test_features, test_labels, rngs=rngs)

        def jax_run(params=params):
            jax_iadmm.run_iadmm_jax(padded, params, test_features, test_labels, seeds=seeds)

        numba_run()  # numba compiles (or loads its cache) and numpy warms up
        first_wall, _ = timed(jax_run)  # XLA compiles the program for these shapes
        numba_wall, numba_cpu = timed(numba_run)
        jax_wall, jax_cpu = timed(jax_run)
        compile_s = first_wall - jax_wall
        print(
            f"{algorithm:<10}{'numba':<8}{1e3 * numba_wall / per_step:>10.1f}{1e3 * numba_cpu / per_step:>10.1f}"
        )
        print(
            f"{'':<10}{'jax':<8}{1e3 * jax_wall / per_step:>10.1f}{1e3 * jax_cpu / per_step:>10.1f}{compile_s:>11.1f}"
        )
        print(f"{'':<10}{'ratio':<8}{jax_wall / numba_wall:>10.2f}{jax_cpu / numba_cpu:>10.2f}   jax / numba")


if __name__ == "__main__":
    main()
