"""Seconds per iteration of dpdl's DP-IADMM (ObjT, OutP) on one thread, against a float64 loop.

Usage (from the project root, after the prepared datasets exist)::

    python benchmarks/bench_dp_iadmm.py [--iterations 10] [--repeats 3] [--paper-config config/paper.yaml]

For MNIST (P = 10), FEMNIST (every writer of the prepared dataset: 114 with the offline shards) and
``femnist@paper`` (FEMNIST at the paper's size, 195 writers and 36,708 rows, which the target
refers to: the offline writers reused and their rows resampled, for timing only), ObjT and OutP at
epsilon-bar 0.05, it prints the CPU time per iteration of ``dpdl.algorithms.dp_iadmm.run_iadmm``
with one replica and with several seeds in one job (per run-iteration: divided by the seeds), and
of a straightforward float64 implementation that loops over agents as the authors' code does
(``dpdl.algorithms.dp_iadmm_reference``, the tests' oracle, with numpy's samplers), with their
ratio. Times are the minimum over repeats of the difference between a long and a short run (which
cancels set-up and logging), measured as process CPU time because the machine may be shared; wall
times are printed beside them. It also projects the CPU-hours of the ``paper`` config from these
numbers (FEMNIST from the paper-size case).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, before numpy loads its BLAS

import argparse  # noqa: E402
import functools  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from dpdl.algorithms import dp_iadmm as iadmm  # noqa: E402
from dpdl.algorithms import dp_iadmm_reference as reference  # noqa: E402
from dpdl.algorithms.dp_iadmm_data import FederatedData  # noqa: E402
from dpdl.config import load_config  # noqa: E402
from dpdl.io import load_npz  # noqa: E402
from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS  # noqa: E402
from dpdl.studies.dp_iadmm import grid as study_grid  # noqa: E402
from dpdl.studies.dp_iadmm.run import load_federated  # noqa: E402

EPSILON = 0.05
TARGET_MS = {"mnist": 40.0, "femnist@paper": 150.0}  # issue #4: per run-iteration, one thread, paper sizes
SEEDS_PER_JOB = {"mnist": 10, "femnist": 2, "femnist@paper": 10}  # mnist, femnist@paper: as the paper config
PAPER_FEMNIST = (195, 36_708)  # writers and training rows of the paper's FEMNIST (Table 1)
CASES = {"mnist": "mnist", "femnist": "femnist", "femnist@paper": "femnist"}  # case -> prepared dataset
PROJECTED_CASES = ("mnist", "femnist@paper")  # the paper-size cases the CPU-hour projection uses


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
    picked = np.concatenate([rng.integers(offsets[w], offsets[w + 1], n) for w, n in zip(owner, sizes, strict=True)])
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
        self.params = iadmm.IadmmParams(algorithm, EPSILON, 1, iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset]))
        self.state = reference.initial_state(len(self.agents), data.n_features, data.n_classes)

    def step(self, t: int) -> None:
        draw = self.rng.standard_normal if self.params.algorithm == "outp" else self.rng.laplace
        self.state = reference.iteration(self.state, self.agents, self.params, t, draw(size=self.state.z.shape))


def timed(function) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def per_iteration(run, short: int, long: int, repeats: int) -> tuple[float, float]:
    """Minimum over repeats of (time(long) - time(short)) / (long - short): CPU and wall seconds."""
    cpu, wall = [], []
    for _ in range(repeats):
        short_cpu, short_wall = timed(lambda: run(short))
        long_cpu, long_wall = timed(lambda: run(long))
        cpu.append((long_cpu - short_cpu) / (long - short))
        wall.append((long_wall - short_wall) / (long - short))
    return min(cpu), min(wall)


def run_ours(
    data: FederatedData, test_x: np.ndarray, test_y: np.ndarray, dataset: str, algorithm: str, seeds: int, t: int
) -> None:
    """T = t iterations of :func:`dpdl.algorithms.dp_iadmm.run_iadmm` on ``seeds`` replicas."""
    params = iadmm.IadmmParams(algorithm, EPSILON, t, iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset]), log_every=t)
    iadmm.run_iadmm(data, params, test_x, test_y, rngs=[np.random.default_rng(s) for s in range(seeds)])


def run_baseline(dataset: str, data: FederatedData, algorithm: str, t: int) -> None:
    """T = t iterations of the float64 loop (one replica)."""
    loop = LoopBaseline(dataset, data, algorithm)
    for step in range(1, t + 1):
        loop.step(step)


def measure(case: str, iterations: int, repeats: int, folder: Path) -> list[dict]:
    dataset = CASES[case]
    npz = f"data/processed/dp_iadmm/{dataset}.npz"
    if case == "femnist@paper":
        npz = paper_size_femnist(npz, folder)
    rows = []
    for algorithm in ("objt", "outp"):
        for seeds in sorted({1, SEEDS_PER_JOB[case]}):
            data, test_x, test_y, _ = load_federated(dataset, npz, 10, seeds)
            ours = functools.partial(run_ours, data, test_x, test_y, dataset, algorithm, seeds)
            cpu, wall = per_iteration(ours, 2, 2 + iterations, repeats)
            rows.append(
                {
                    "dataset": case,
                    "agents": data.n_agents,
                    "rows": data.n_total,
                    "algorithm": algorithm,
                    "seeds": seeds,
                    "cpu": cpu,
                    "wall": wall,
                }
            )
        baseline = functools.partial(run_baseline, dataset, data, algorithm)
        base_cpu, base_wall = per_iteration(baseline, 1, 1 + max(2, iterations // 3), repeats)
        for row in rows:
            if row["algorithm"] == algorithm and "base_cpu" not in row:
                row.update(base_cpu=base_cpu, base_wall=base_wall)
    return rows


def paper_projection(rows: list[dict], config_path: Path) -> list[str]:
    """CPU-hours of the paper config from the amortised per-run-iteration times."""
    config = load_config(config_path)
    amortised = {}  # per dataset: the slower algorithm, seeds amortised, at the paper's size
    for row in rows:
        if row["seeds"] > 1 and row["dataset"] in PROJECTED_CASES:
            key = CASES[row["dataset"]]
            amortised[key] = max(amortised.get(key, 0.0), row["cpu"] / row["seeds"])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10, help="iterations timed per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per case (the minimum is kept)")
    parser.add_argument("--datasets", nargs="+", choices=list(CASES), default=list(CASES))
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
    print(f"load average after: {os.getloadavg()[0]:.2f} (a shared machine inflates both columns alike)\n")
    header = (
        f"{'dataset':13} {'agents':>6} {'alg':4} {'seeds':>5} {'ms/iter':>8} {'ms/run-iter':>11} {'(wall)':>8} "
        f"{'loop f64 ms':>11} {'ratio':>6} {'target':>7}"
    )
    print(header)
    for row in rows:
        run_iter = row["cpu"] / row["seeds"] * 1e3
        ratio = row["base_cpu"] / (row["cpu"] / row["seeds"])
        target = TARGET_MS.get(row["dataset"])
        verdict = "" if target is None else f"{target:5.0f} {'met' if run_iter <= target else 'missed'}"
        print(
            f"{row['dataset']:13} {row['agents']:>6} {row['algorithm']:4} {row['seeds']:>5} {row['cpu'] * 1e3:8.1f} "
            f"{run_iter:11.1f} {row['wall'] / row['seeds'] * 1e3:8.1f} {row['base_cpu'] * 1e3:11.1f} {ratio:6.1f} "
            f"{verdict}"
        )
    if args.paper_config.is_file():
        print(f"\nprojected CPU time of {args.paper_config} (amortised over the seeds of a job):")
        print("\n".join(paper_projection(rows, args.paper_config)))


if __name__ == "__main__":
    main()
