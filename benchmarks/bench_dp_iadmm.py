"""CPU time per iteration of dpdl's DP-IADMM (ObjT, OutP) on one thread, as a ratio to its own floor.

Usage (from the project root, after the prepared datasets exist)::

    python benchmarks/bench_dp_iadmm.py [--iterations 10] [--repeats 3] [--paper-config config/paper.yaml]

Cases: MNIST (P = 10), FEMNIST (every writer of the prepared dataset: 114 with the offline shards)
and ``femnist@paper`` (FEMNIST at the paper's size, 195 writers and 36,708 rows, which the aim
refers to: the offline writers reused and their rows resampled, for timing only), ObjT and OutP at
epsilon-bar 0.05, with one replica and with the seeds of one job of the ``paper`` config (10; 2 for
the offline FEMNIST). For each it prints, per run-iteration (a job's time divided by its seeds):

- the **floor**: the work of one iteration that a perfect implementation could not avoid on this
  machine, timed in the same run (below);
- the CPU time of ``dpdl.algorithms.dp_iadmm.run_iadmm`` for ObjT and OutP, and its ratio to the
  floor, marked against the aim of issue #22 at the paper's size and seeds (1.3x on MNIST, 1.6x on
  ``femnist@paper``);
- the CPU time of a straightforward float64 implementation that loops over agents as the authors'
  code does (``dpdl.algorithms.dp_iadmm_reference``, the tests' oracle, with numpy's samplers; one
  replica) and its ratio to the same floor.

Absolute milliseconds do not carry across machines (single-thread float32 sgemm has been measured
at 26 to 184 GFLOP/s on machines of the same kind); the ratio to a floor timed in the same process
does. **The floor** is, per iteration, with the shapes and memory layouts ``run_iadmm`` uses
(``dpdl.models.softmax.logits`` and ``gradient_sum`` on the chunks of
``dpdl.algorithms.dp_iadmm_data.federated_data`` built for the same number of replicas B):

1. for every chunk of g agents padded to m rows, over its J_c nonzero-feature columns, the two
   float32 matrix products, each one ``numpy.matmul`` call on the chunk's g agents as in
   ``run_iadmm``: the scores W^T X^T, (g, B K, J_c) x (g, J_c, m), and the gradient X^T R^T,
   (g, J_c, m) x (g, m, B K) (numpy's OpenBLAS; a result written into a preallocated ``out`` was
   no faster); and
2. the noise words: for every chunk and replica, one call of numpy's default bit generator (PCG64,
   ``bit_generator.random_raw``) for the ceil(g J K / 2) 64-bit words that the unit-scale Laplace
   or Gaussian sampler of ``dpdl.privacy.samplers`` reads (the same count for both, J K being even).

The two parts are timed separately and added. Not in the floor (all of it is work ``run_iadmm``
does beyond the floor, so it is what the ratio measures): gathering z's nonzero-feature columns,
the softmax (maxima, exponentials, sums), the residual norms and the sensitivity (20), turning the
words into Laplace or Gaussian values (logarithms, sines and cosines), the fused local and dual
step (one pass over the state), the server step, OutP's per-agent calibration, logging, and Python's
per-chunk call overhead. The products' time depends on the data's shape only, not their values, so
the floor multiplies fixed random arrays. Both ObjT and OutP draw noise at every iteration, so they
share one floor.

Each time is the least process CPU time of one iteration over ``--repeats`` runs of
``--iterations`` + 2 iterations (the first and last of each run, which hold set-up and
``run_iadmm``'s logging, left out): CPU time because the machine may be shared, and the least
because another process only ever adds to it (wall times with ``--wall``). The floor's parts, ObjT
and OutP are run in turn within each repeat, so a drift of the machine's speed moves them together.
It also projects the CPU-hours of the ``paper`` config from the measured times (FEMNIST from the
paper-size case).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, before numpy loads its BLAS

import argparse  # noqa: E402
import functools  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.algorithms import dp_iadmm as iadmm  # noqa: E402
from dpdl.algorithms import dp_iadmm_reference as reference  # noqa: E402
from dpdl.algorithms.dp_iadmm_data import DTYPE, FederatedData  # noqa: E402
from dpdl.config import load_config  # noqa: E402
from dpdl.io import load_npz  # noqa: E402
from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS  # noqa: E402
from dpdl.studies.dp_iadmm import grid as study_grid  # noqa: E402
from dpdl.studies.dp_iadmm.run import load_federated  # noqa: E402

EPSILON = 0.05
AIM_RATIO = {
    "mnist": 1.3,
    "femnist@paper": 1.6,
}  # issue #22: time / floor at the paper's size and seeds per job
SEEDS_PER_JOB = {"mnist": 10, "femnist": 2, "femnist@paper": 10}  # mnist, femnist@paper: as the paper config
PAPER_FEMNIST = (195, 36_708)  # writers and training rows of the paper's FEMNIST (Table 1)
CASES = {"mnist": "mnist", "femnist": "femnist", "femnist@paper": "femnist"}  # case -> prepared dataset
PROJECTED_CASES = ("mnist", "femnist@paper")  # the paper-size cases the CPU-hour projection uses
ALGORITHMS = ("objt", "outp")


def paper_size_femnist(npz: str, folder: Path) -> Path:
    """FEMNIST at the paper's size, for timing only, as a prepared-dataset file in ``folder``.

    The offline writers are reused in turn as the 195 agents; each agent draws rows (seeded, with
    replacement) from its writer, sizes stretched so that the agents hold 36,708 rows in all.
    """
    arrays = load_npz(npz)
    offsets = arrays["offsets_train"]
    writers, rows = PAPER_FEMNIST
    owner = np.arange(writers) % (len(offsets) - 1)
    sizes = np.diff(offsets)[owner]
    sizes = np.maximum(1, np.round(sizes * rows / sizes.sum())).astype(np.int64)
    rng = np.random.default_rng(0)
    picked = np.concatenate(
        [rng.integers(offsets[w], offsets[w + 1], n) for w, n in zip(owner, sizes, strict=True)]
    )
    path = folder / "femnist_paper_size.npz"
    np.savez(
        path,
        X_train=arrays["X_train"][picked],
        y_train=arrays["y_train"][picked],
        offsets_train=np.concatenate([[0], np.cumsum(sizes)]),
        X_test=arrays["X_test"],
        y_test=arrays["y_test"],
        pixel_divisor=arrays["pixel_divisor"],
    )
    return path


def reference_agents(data: FederatedData) -> list[reference.Agent]:
    """The agents of ``data`` as the float64 reference takes them: unpadded rows, every feature."""
    agents = []
    for chunk in data.chunks:
        for row, agent in enumerate(range(chunk.start, chunk.stop)):
            n = int(data.sizes[agent])
            features = np.zeros((n, data.n_features))
            features[:, chunk.columns] = chunk.features[row, :n]  # the chunk keeps only its nonzero features
            labels = chunk.onehot[row, 0, :, :n].T.astype(np.float64)  # class-major in the chunk
            agents.append(reference.Agent(features, labels))
    return agents


class LoopBaseline:
    """A straightforward float64 ObjT / OutP: the reference iteration, one agent at a time.

    :mod:`dpdl.algorithms.dp_iadmm_reference` with numpy's own samplers for the unit-scale noise.
    """

    def __init__(self, dataset: str, data: FederatedData, algorithm: str, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.agents = reference_agents(data)
        self.params = iadmm.IadmmParams(
            algorithm, EPSILON, 1, iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset])
        )
        self.state = reference.initial_state(len(self.agents), data.n_features, data.n_classes)

    def step(self, t: int) -> None:
        draw = self.rng.standard_normal if self.params.algorithm == "outp" else self.rng.laplace
        self.state = reference.iteration(
            self.state, self.agents, self.params, t, draw(size=self.state.z.shape)
        )


class Floor:
    """The floor of one iteration of ``run_iadmm`` on ``data`` with ``replicas`` replicas (module docstring).

    :meth:`products` does every chunk's two float32 matrix products (the scores and the gradient)
    with the operand layouts and calls of ``softmax.logits`` and ``softmax.gradient_sum``;
    :meth:`words` draws every chunk's noise words for every replica, one ``random_raw`` call per
    chunk and replica as ``draw_noise`` makes.
    """

    def __init__(self, data: FederatedData, replicas: int) -> None:
        columns = replicas * data.n_classes  # the B K columns of one product
        fill = np.random.default_rng(12345)
        self.operands = []
        for chunk in data.chunks:
            agents, rows, features = chunk.features.shape
            weights = fill.standard_normal(
                (agents, features, columns), dtype=DTYPE
            )  # z[:, columns], (g, J_c, B K)
            residuals = fill.standard_normal(
                (agents, columns, rows), dtype=DTYPE
            )  # h - y, class-major (g, B K, m)
            features_t = np.swapaxes(chunk.features, -1, -2)  # X^T
            self.operands.append((np.swapaxes(weights, -1, -2), features_t, np.swapaxes(residuals, -1, -2)))
        self.words_per_call = [
            math.ceil((chunk.stop - chunk.start) * data.n_features * data.n_classes / 2)
            for chunk in data.chunks
        ]
        self.rngs = [np.random.default_rng(seed) for seed in range(replicas)]

    def products(self, t: int, clock: Clock) -> None:
        """T = t iterations of the two matrix products of every chunk, ``clock`` called after each."""
        for step in range(1, t + 1):
            for weights_t, features_t, residuals_t in self.operands:
                np.matmul(weights_t, features_t)  # the scores W^T X^T, (g, B K, m)
                np.matmul(features_t, residuals_t)  # the gradient X^T R^T, (g, J_c, B K)
            clock(step)

    def words(self, t: int, clock: Clock) -> None:
        """T = t iterations of the noise words (every chunk, every replica), ``clock`` called after each."""
        for step in range(1, t + 1):
            for count in self.words_per_call:
                for rng in self.rngs:
                    rng.bit_generator.random_raw(count)
            clock(step)


class Clock:
    """Process CPU and wall time stamps: one at creation, one per call (after each iteration)."""

    def __init__(self) -> None:
        self.stamps = [(time.process_time(), time.perf_counter())]

    def __call__(self, _t: int) -> None:
        self.stamps.append((time.process_time(), time.perf_counter()))

    def inner(self) -> list[tuple[float, float]]:
        """CPU and wall seconds of every iteration but the first and the last (which ``run_iadmm`` logs)."""
        steps = [(c1 - c0, w1 - w0) for (c0, w0), (c1, w1) in itertools.pairwise(self.stamps)]
        return steps[1:-1]


def run_ours(
    data: FederatedData,
    test_x: np.ndarray,
    test_y: np.ndarray,
    dataset: str,
    algorithm: str,
    seeds: int,
    t: int,
    clock: Clock,
) -> None:
    """T = t iterations of :func:`dpdl.algorithms.dp_iadmm.run_iadmm` on ``seeds`` replicas, ``clock`` after each."""
    params = iadmm.IadmmParams(
        algorithm, EPSILON, t, iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset]), log_every=t
    )
    rngs = [np.random.default_rng(s) for s in range(seeds)]
    iadmm.run_iadmm(data, params, test_x, test_y, rngs=rngs, progress=clock)


def run_baseline(dataset: str, data: FederatedData, algorithm: str, t: int, clock: Clock) -> None:
    """T = t iterations of the float64 loop (one replica), ``clock`` after each."""
    loop = LoopBaseline(dataset, data, algorithm)
    for step in range(1, t + 1):
        loop.step(step)
        clock(step)


def fastest_iteration(runs: dict, iterations: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Per run: the least CPU and wall seconds of one iteration, over ``repeats`` runs of ``iterations`` + 2.

    The runs are made in turn within each repeat; a run's first and last iterations are left out (set-up,
    and ``run_iadmm``'s logging at t = 1 and t = T). Another process only ever adds time to an iteration,
    so the least is the estimate least disturbed by a shared machine.
    """
    steps = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            clock = Clock()
            run(iterations + 2, clock)
            steps[name] += clock.inner()
    return {name: (min(c for c, _ in values), min(w for _, w in values)) for name, values in steps.items()}


def measure(case: str, iterations: int, repeats: int, folder: Path) -> list[dict]:
    """One row per seeds-per-job of ``case``: the floor's parts, ObjT, OutP and the float64 loops (s/iteration).

    The floor's parts, ObjT and OutP are timed in turn within each repeat (:func:`fastest_iteration`);
    the float64 loops (one replica, whatever the seeds) once per case, over a third of the iterations.
    """
    dataset = CASES[case]
    npz = f"data/processed/dp_iadmm/{dataset}.npz"
    if case == "femnist@paper":
        npz = paper_size_femnist(npz, folder)
    rows = []
    for seeds in sorted({1, SEEDS_PER_JOB[case]}):
        data, test_x, test_y, _ = load_federated(dataset, npz, 10, seeds)
        floor = Floor(data, seeds)
        runs = {"products": floor.products, "words": floor.words}
        for algorithm in ALGORITHMS:
            runs[algorithm] = functools.partial(run_ours, data, test_x, test_y, dataset, algorithm, seeds)
        row = {"dataset": case, "agents": data.n_agents, "rows": data.n_total, "seeds": seeds}
        for name, (cpu, wall) in fastest_iteration(runs, iterations, repeats).items():
            row.update({name: cpu, f"{name}_wall": wall})
        rows.append(row)
    loops = {
        f"loop_{algorithm}": functools.partial(run_baseline, dataset, data, algorithm)
        for algorithm in ALGORITHMS
    }
    for name, (cpu, wall) in fastest_iteration(loops, max(2, iterations // 3), repeats).items():
        for row in rows:
            row.update({name: cpu, f"{name}_wall": wall})
    return rows


def paper_projection(rows: list[dict], config_path: Path) -> list[str]:
    """CPU-hours of the paper config from the amortised per-run-iteration times."""
    config = load_config(config_path)
    amortised = {}  # per dataset: the slower algorithm, seeds amortised, at the paper's size
    for row in rows:
        if row["seeds"] > 1 and row["dataset"] in PROJECTED_CASES:
            key = CASES[row["dataset"]]
            amortised[key] = max(amortised.get(key, 0.0), *(row[name] / row["seeds"] for name in ALGORITHMS))
    runs = {p for name in study_grid.AGGREGATES for p in study_grid.figure_run_paths(name, config)}
    study_config = config["dp_iadmm"]
    lines, total = [], 0.0
    for horizon in study_grid.HORIZONS:
        for dataset in study_grid.DATASETS:
            count = sum(1 for p in runs if f"/runs/{horizon}/{dataset}/" in p)
            if not count or dataset not in amortised:
                continue
            iterations = study_grid.horizon_settings(study_config, horizon)["iterations"]
            seconds = amortised[dataset]
            hours = count * iterations * seconds / 3600
            total += hours
            lines.append(
                f"  {horizon:4} {dataset:7} {count:4} runs x T = {iterations:>7} x {seconds * 1e3:6.1f} ms "
                f"= {hours:8.0f} CPU-h"
            )
    lines.append(f"  total {total:.0f} CPU-hours")
    return lines


def cell(seconds: float, floor: float, width: int, aim: float | None = None) -> str:
    """``seconds`` in ms with its ratio to ``floor``, marked against ``aim`` if given."""
    ratio = seconds / floor
    mark = "" if aim is None else (" met" if ratio <= aim else " MISSED")
    return f"{seconds * 1e3:.1f} ({ratio:.2f}x{mark})".rjust(width)


def table(rows: list[dict], wall: bool = False) -> list[str]:
    """The printed table, per run-iteration: the floor (products + words), and each time with its ratio to it."""
    suffix = "_wall" if wall else ""
    header = (
        f"{'case':13} {'agents':>6} {'seeds':>5} {'floor':>6} {'(gemm':>6} {'words)':>6} "
        f"{'ObjT':>18} {'OutP':>18} {'loop f64 ObjT':>15} {'loop f64 OutP':>15}"
    )
    lines = [header]
    for row in rows:
        seeds = row["seeds"]
        products, words = row[f"products{suffix}"] / seeds, row[f"words{suffix}"] / seeds
        floor = products + words
        aim = AIM_RATIO.get(row["dataset"]) if seeds == SEEDS_PER_JOB[row["dataset"]] else None
        ours = [cell(row[f"{name}{suffix}"] / seeds, floor, 18, aim) for name in ALGORITHMS]
        loops = [cell(row[f"loop_{name}{suffix}"], floor, 15) for name in ALGORITHMS]
        lines.append(
            f"{row['dataset']:13} {row['agents']:>6} {seeds:>5} {floor * 1e3:6.1f} {products * 1e3:6.1f} "
            f"{words * 1e3:6.1f} {' '.join(ours)} {' '.join(loops)}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10, help="iterations timed per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per case (the minimum is kept)")
    parser.add_argument("--datasets", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--wall", action="store_true", help="also print the table in wall-clock time")
    parser.add_argument("--paper-config", type=Path, default=Path("config/paper.yaml"))
    args = parser.parse_args()
    print(
        f"dp_iadmm benchmark: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, one BLAS thread, "
        f"numpy {np.__version__}; load average before: {os.getloadavg()[0]:.2f}"
    )
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for case in args.datasets:
            rows += measure(case, args.iterations, args.repeats, Path(folder))
    print(
        f"load average after: {os.getloadavg()[0]:.2f} (a shared machine slows the floor and the runs alike)\n"
    )
    aims = ", ".join(f"{case} {ratio}x" for case, ratio in AIM_RATIO.items())
    print(
        "CPU ms per run-iteration (a job's iteration / its seeds); in brackets the ratio to the floor, marked "
        f"against issue #22's aims at the paper's seeds per job ({aims})"
    )
    print("\n".join(table(rows)))
    if args.wall:
        print("\nthe same in wall-clock ms (each the minimum over repeats)")
        print("\n".join(table(rows, wall=True)))
    if args.paper_config.is_file():
        print(f"\nprojected CPU time of {args.paper_config} (amortised over the seeds of a job):")
        print("\n".join(paper_projection(rows, args.paper_config)))
    print(f"\nthis benchmark: {time.process_time():.0f} s of CPU")


if __name__ == "__main__":
    main()
