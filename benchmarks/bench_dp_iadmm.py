"""Seconds per iteration of dpdl's DP-IADMM (ObjT, OutP) on one thread, against a float64 loop.

Usage (from the project root, after the prepared datasets exist)::

    python benchmarks/bench_dp_iadmm.py [--iterations 10] [--repeats 3] [--paper-config config/paper.yaml]

For MNIST (P = 10) and FEMNIST (every writer of the prepared dataset), ObjT and OutP at
epsilon-bar 0.05, it prints the CPU time per iteration of ``dpdl.algorithms.dp_iadmm.run_iadmm``
with one replica and with several seeds in one job (per run-iteration: divided by the seeds), and
of a straightforward float64 implementation that loops over agents (written here, in the style of
the authors' code), with their ratio. Times are the minimum over repeats of the difference between
a long and a short run (which cancels set-up and logging), measured as process CPU time because
the machine may be shared; wall times are printed beside them. It also projects the CPU-hours of
the ``paper`` config from these numbers.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, before numpy loads its BLAS

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from dpdl.algorithms import dp_iadmm as iadmm  # noqa: E402
from dpdl.config import load_config  # noqa: E402
from dpdl.privacy import outp_inverse_proximity, outp_noise_std, outp_sensitivity  # noqa: E402
from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS  # noqa: E402
from dpdl.studies import dp_iadmm as study  # noqa: E402

EPSILON = 0.05
TARGET_MS = {"mnist": 40.0, "femnist": 150.0}  # issue #4: per run-iteration, one thread
SEEDS_PER_JOB = {"mnist": 10, "femnist": 2}
PAPER_FEMNIST_ROWS = 36_708  # Table 1; the projection scales FEMNIST times by rows


class LoopBaseline:
    """A straightforward float64 ObjT / OutP: one agent at a time, numpy's own samplers."""

    def __init__(self, dataset: str, data: iadmm.FederatedData, algorithm: str, seed: int = 0) -> None:
        self.algorithm, self.rng = algorithm, np.random.default_rng(seed)
        self.agents = []
        for chunk in data.chunks:
            for row, agent in enumerate(range(chunk.start, chunk.stop)):
                n = int(data.sizes[agent])
                x = np.zeros((n, data.n_features))
                x[:, chunk.columns] = chunk.features[row, :n]  # the chunk keeps only its nonzero features
                y = chunk.onehot[row, :n, 0, :].astype(np.float64)
                self.agents.append((x, y))
        self.n_total, self.classes = data.n_total, data.n_classes
        self.penalty = iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset])
        shape = (data.n_features, data.n_classes)
        self.z = [np.zeros(shape) for _ in self.agents]
        self.lam = [np.zeros(shape) for _ in self.agents]
        self.w = np.zeros(shape)

    def gradient(self, x, y, z, scale):
        scores = x @ z
        scores -= scores.max(axis=1, keepdims=True)
        h = np.exp(scores)
        h /= h.sum(axis=1, keepdims=True)
        residual = h - y
        return x.T @ residual * scale + 2e-6 / len(self.agents) * z, residual

    def step(self, t: int) -> None:
        rho, count = self.penalty(t, EPSILON), len(self.agents)
        if self.algorithm == "objt":
            self.w = sum(z - lam / rho for z, lam in zip(self.z, self.lam)) / count
            for p, (x, y) in enumerate(self.agents):
                grad, residual = self.gradient(x, y, self.z[p], 1.0 / self.n_total)
                sensitivity = (np.abs(x).sum(axis=1) * np.abs(residual).sum(axis=1)).max() / self.n_total
                noise = self.rng.laplace(0.0, sensitivity / EPSILON, size=grad.shape)
                candidate = self.w + (self.lam[p] - noise - grad) / rho
                self.z[p] = np.clip(candidate, self.z[p] - 1.0, self.z[p] + 1.0)
                self.lam[p] += rho * (self.w - self.z[p])
            return
        for p, (x, y) in enumerate(self.agents):
            n = len(x)
            inverse_eta = outp_inverse_proximity(t, EPSILON, n_samples=n, n_params=self.z[p].size)
            grad, _ = self.gradient(x, y, self.z[p], 1.0 / n)
            z_bar = (rho * self.w + self.lam[p] - grad + self.z[p] * inverse_eta) / (rho + inverse_eta)
            std = outp_noise_std(EPSILON, sensitivity=outp_sensitivity(rho, inverse_eta, n_samples=n))
            self.z[p] = z_bar + self.rng.normal(0.0, std, size=z_bar.shape)
        self.w = sum(z - lam / rho for z, lam in zip(self.z, self.lam)) / count
        for p in range(count):
            self.lam[p] += rho * (self.w - self.z[p])


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


def measure(dataset: str, iterations: int, repeats: int) -> list[dict]:
    npz = f"data/processed/dp_iadmm/{dataset}.npz"
    rows = []
    for algorithm in ("objt", "outp"):
        for seeds in sorted({1, SEEDS_PER_JOB[dataset]}):
            data, test_x, test_y, _ = study.load_federated(dataset, npz, 10, seeds)

            def ours(t: int) -> None:
                params = iadmm.IadmmParams(algorithm, EPSILON, t, iadmm.PenaltySchedule(**PENALTY_CONSTANTS[dataset]),
                                           log_every=t)  # fmt: skip
                iadmm.run_iadmm(data, params, test_x, test_y, rngs=[np.random.default_rng(s) for s in range(seeds)])

            cpu, wall = per_iteration(ours, 2, 2 + iterations, repeats)
            rows.append({"dataset": dataset, "agents": data.n_agents, "rows": data.n_total, "algorithm": algorithm,
                         "seeds": seeds, "cpu": cpu, "wall": wall})  # fmt: skip

        def baseline(t: int) -> None:
            loop = LoopBaseline(dataset, data, algorithm)
            for step in range(1, t + 1):
                loop.step(step)

        base_cpu, base_wall = per_iteration(baseline, 1, 1 + max(2, iterations // 3), repeats)
        for row in rows:
            if row["algorithm"] == algorithm and "base_cpu" not in row:
                row.update(base_cpu=base_cpu, base_wall=base_wall)
    return rows


def paper_projection(rows: list[dict], config_path: Path) -> list[str]:
    """CPU-hours of the paper config from the amortised per-run-iteration times."""
    config = load_config(config_path)
    amortised = {}
    for row in rows:
        key = row["dataset"]
        amortised[key] = max(amortised.get(key, 0.0), row["cpu"] / row["seeds"]) if row["seeds"] > 1 else amortised.get(key, 0.0)
    runs = {p for name in study.AGGREGATES for p in study.figure_run_paths(name, config)}
    study_config = config["dp_iadmm"]
    lines, total = [], 0.0
    for horizon in study.HORIZONS:
        for dataset in study.DATASETS:
            count = sum(1 for p in runs if f"/runs/{horizon}/{dataset}/" in p)
            if not count or dataset not in amortised:
                continue
            iterations = study.horizon_settings(study_config, horizon)["iterations"]
            seconds = amortised[dataset] * (PAPER_FEMNIST_ROWS / rows_of(rows, dataset) if dataset == "femnist" else 1.0)
            hours = count * iterations * seconds / 3600
            total += hours
            lines.append(f"  {horizon:4} {dataset:7} {count:4} runs x T = {iterations:>7} x {seconds * 1e3:6.1f} ms = {hours:8.0f} CPU-h")
    lines.append(f"  total {total:.0f} CPU-hours (FEMNIST scaled by rows to the paper's {PAPER_FEMNIST_ROWS}; an upper estimate)")
    return lines


def rows_of(rows: list[dict], dataset: str) -> int:
    return next(row["rows"] for row in rows if row["dataset"] == dataset)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10, help="iterations timed per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per case (the minimum is kept)")
    parser.add_argument("--datasets", nargs="+", default=list(study.DATASETS))
    parser.add_argument("--paper-config", type=Path, default=Path("config/paper.yaml"))
    args = parser.parse_args()
    print(f"dp_iadmm benchmark: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, one BLAS thread, "
          f"numpy {np.__version__}; load average before: {os.getloadavg()[0]:.2f}")  # fmt: skip
    rows = []
    for dataset in args.datasets:
        rows += measure(dataset, args.iterations, args.repeats)
    print(f"load average after: {os.getloadavg()[0]:.2f} (a shared machine inflates both columns alike)\n")
    header = f"{'dataset':8} {'agents':>6} {'alg':4} {'seeds':>5} {'ms/iter':>8} {'ms/run-iter':>11} {'(wall)':>8} " \
             f"{'loop f64 ms':>11} {'ratio':>6} {'target':>7}"  # fmt: skip
    print(header)
    for row in rows:
        run_iter = row["cpu"] / row["seeds"] * 1e3
        ratio = row["base_cpu"] / (row["cpu"] / row["seeds"])
        verdict = "met" if run_iter <= TARGET_MS[row["dataset"]] else "missed"
        print(f"{row['dataset']:8} {row['agents']:>6} {row['algorithm']:4} {row['seeds']:>5} {row['cpu'] * 1e3:8.1f} "
              f"{run_iter:11.1f} {row['wall'] / row['seeds'] * 1e3:8.1f} {row['base_cpu'] * 1e3:11.1f} {ratio:6.1f} "
              f"{TARGET_MS[row['dataset']]:5.0f} {verdict}")  # fmt: skip
    if args.paper_config.is_file():
        print(f"\nprojected CPU time of {args.paper_config} (amortised over the seeds of a job):")
        print("\n".join(paper_projection(rows, args.paper_config)))


if __name__ == "__main__":
    main()
