"""Time Zhang & Zhu's network ADMM as the dvp_pvp rules run it, and project the ``paper`` config.

Run ``python benchmarks/bench_dvp_pvp.py [--eta 0.003] [--iterations 10]`` from the project root
after ``data/processed/dvp_pvp/adult.npz`` exists. On one thread, on the real Adult shards
(P = 10, B_p = 4,522, d = 63), it prints:

- the CPU time per ADMM iteration of the non-private algorithm, DVP and PVP (alpha = 0.1) with
  dpdl's local solver (Newton with reused Cholesky factors, float32 Hessians), and with a plain
  damped Newton that forms a float64 Hessian at every step (written here), with their ratio;
- the CPU time of one run's trace (losses and error rates of every iterate, T = 100);
- the start-up of one ``python -m dpdl dvp_pvp`` job (imports, data, centralized optimum);
- the projected CPU time of the ``paper`` config (465 runs of T = 100) on one and two cores.

Times are CPU times (the machine may be shared) and per-iteration times are the difference of a
long and a short run, which cancels set-up. Other processes still disturb them: the ratios
measured in the same run are the robust result.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # one thread, set before numpy loads

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from unittest import mock  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import expit  # noqa: E402

from dpdl.algorithms import dvp_pvp as admm_module  # noqa: E402
from dpdl.algorithms.dvp_pvp import AdmmSettings, run_admm  # noqa: E402
from dpdl.algorithms.dvp_pvp_network import NEWTON_GRAD_RTOL, LocalSolution, NodeData  # noqa: E402
from dpdl.config import load_config  # noqa: E402
from dpdl.io import load_npz, read_json  # noqa: E402
from dpdl.studies.dvp_pvp import grid, run  # noqa: E402

ARRAYS = "data/processed/dvp_pvp/adult.npz"
CARD = "data/processed/dvp_pvp/adult.json"
CASES = (("nonprivate", None), ("dvp", 0.1), ("pvp", 0.1))


def plain_newton(data: NodeData, *, c_r, ridge, linear, start, factors=None) -> LocalSolution:
    """Damped Newton with a fresh float64 Hessian at every step, same stopping rule as dpdl's."""
    solved = [
        _plain_newton_node(data.x[p], data.y[p], data.weight[p], c_r, ridge[p], linear[p], start[p])
        for p in range(data.n_nodes)
    ]
    f = np.stack([node[0] for node in solved])
    iterations = np.array([node[1] for node in solved])
    norms = np.array([node[2] for node in solved])
    return LocalSolution(
        f, iterations, iterations.copy(), norms, np.ones(data.n_nodes, bool), (None,) * data.n_nodes
    )


def _plain_newton_node(x, y, w, c_r, ridge, linear, start) -> tuple[np.ndarray, int, float]:
    def value_gradient(v):
        m = (x @ v) * y
        value = c_r * (w @ np.logaddexp(0.0, -m)) + 0.5 * ridge * v @ v + linear @ v
        return value, -c_r * ((w * y * expit(-m)) @ x) + ridge * v + linear

    f = np.array(start, dtype=float)
    value, grad = value_gradient(f)
    tolerance = NEWTON_GRAD_RTOL * max(1.0, np.linalg.norm(grad))
    iterations = 0
    while np.linalg.norm(grad) > tolerance and iterations < 50:
        m = (x @ f) * y
        hessian = (x.T * (c_r * w * expit(m) * expit(-m))) @ x + ridge * np.eye(len(grad))
        step, size = -np.linalg.solve(hessian, grad), 1.0
        while size > 1e-12:
            trial_value, trial_grad = value_gradient(f + size * step)
            if trial_value <= value + 1e-4 * size * grad @ step or -grad @ step < 1e-11 * abs(value):
                break
            size *= 0.5
        f = f + size * step
        value, grad = trial_value, trial_grad
        iterations += 1
    return f, iterations, float(np.linalg.norm(grad))


def cpu_per_iteration(context, algorithm, alpha, eta, iterations, solver=None) -> tuple[float, float]:
    """CPU seconds per ADMM iteration (long minus short run) and Newton steps per node-step."""
    settings = {
        "rho": context.values["rho"][algorithm],
        "c_r": float(context.values["c_r"][algorithm]),
        "eta": eta,
    }

    def one(n: int):
        rngs = [
            np.random.default_rng(child) for child in np.random.SeedSequence(0).spawn(context.data.n_nodes)
        ]
        admm = AdmmSettings(algorithm, iterations=n, alpha=alpha, **settings)
        start = time.process_time()
        if solver is None:
            result = run_admm(context.data, context.adjacency, admm, rngs=rngs)
        else:
            with mock.patch.object(admm_module, "solve_local", solver):
                result = run_admm(context.data, context.adjacency, admm, rngs=rngs)
        return time.process_time() - start, result

    short, _ = one(1)
    long, result = one(1 + iterations)
    return (long - short) / iterations, float(result.inner_iterations[1:].mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eta", type=float, default=0.003, help="ADMM penalty (ci's tuned value)")
    parser.add_argument("--iterations", type=int, default=10, help="ADMM iterations timed per case")
    args = parser.parse_args()
    config = load_config("config/paper.yaml")
    values = grid.run_settings(config)
    context = run.run_context(load_npz(ARRAYS), read_json(CARD), values)
    data = context.data
    print(f"one thread; P = {data.n_nodes}, B_p = {data.sizes[0]}, d = {data.dim}, eta = {args.eta}")
    per_iteration = {}
    for algorithm, alpha in CASES:
        ours, steps = cpu_per_iteration(context, algorithm, alpha, args.eta, args.iterations)
        plain, plain_steps = cpu_per_iteration(
            context, algorithm, alpha, args.eta, args.iterations, plain_newton
        )
        per_iteration[algorithm] = ours
        print(
            f"{algorithm:>10} alpha {alpha}: {ours * 1e3:7.1f} ms/iteration ({steps:.1f} steps/node), "
            f"plain Newton {plain * 1e3:7.1f} ms ({plain_steps:.1f} steps/node), ratio {plain / ours:.1f}x"
        )
    start = time.process_time()
    run.execute_run(context, algorithm="pvp", alpha=0.1, seed=0, eta=args.eta, eta_source="bench")
    run_cpu = time.process_time() - start
    values_ci = dict(values, iterations=100)
    rngs = [np.random.default_rng(c) for c in np.random.SeedSequence(0).spawn(context.data.n_nodes)]
    result = run_admm(
        context.data, context.adjacency, AdmmSettings("pvp", 0.1, 146.0, args.eta, 100, 0.1), rngs=rngs
    )
    start = time.process_time()
    run.run_trace(result, context.data, context.eval_x, context.eval_y, 1.0)
    trace_cpu = time.process_time() - start
    print(
        f"one PVP run of T = {values_ci['iterations']} with its trace and provenance: {run_cpu:.1f} s CPU; "
        f"the trace alone: {trace_cpu:.2f} s"
    )
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import dpdl.studies.dvp_pvp, dpdl.algorithms.dvp_pvp, dpdl.runs"], check=True
    )
    startup = time.perf_counter() - start
    print(f"job start-up (imports incl. dp_accounting): {startup:.1f} s wall")
    settings = grid.settings(config)
    runs = len(grid.main_runs(settings)) + len(grid.rho_runs(settings)) + len(grid.eta_job_outputs(settings))
    jobs = 1 + 3 + len(grid.main_runs(settings)) // settings["seeds"]
    mean_iteration = float(np.mean(list(per_iteration.values())))
    total = runs * (101 * mean_iteration + trace_cpu) + jobs * startup
    print(
        f"paper config: {runs} runs in {jobs} jobs, about {total / 60:.0f} CPU-minutes "
        f"({total / 120:.0f} min wall on 2 cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
