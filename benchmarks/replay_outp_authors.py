"""Replay OutP against the authors' code from the same Gaussian draws, iterate by iterate (issue #40).

Ryu & Kim's code (APPFL/DPFL-IADMM-Classification, pinned at ``AUTHORS_COMMIT``) is not part of dpdl
and never runs in its tests. Get it, then run this script from the project root::

    git clone https://github.com/APPFL/DPFL-IADMM-Classification /tmp/authors
    git -C /tmp/authors checkout 4610458edaad176f5108199393f2bc18c93659e2
    python benchmarks/replay_outp_authors.py --authors /tmp/authors --mnist ../shared/data/mnist

Both sides get the same arrays: MNIST's training images / 255 in float32, split into 10 contiguous
agents, and its test set, as the authors' ``Read_MNIST`` makes them (their ``Read.py`` needs mlxtend to
read the idx files; this script reads them with dpdl's reader instead, so their code runs on numpy and
scipy alone). The authors' OutP (``src/Models.py``: ``Base_First_Block_Problem_ClosedForm``, then
``Base_Second_Block_Problem_ClosedForm``, then the dual update of ``src/Algorithms.py``) runs with their
``Parameters`` for MNIST: ``rho_str`` dynamic_1, ``a_str`` 1.0, ``gamma`` 1e-6. It draws each agent's
noise with ``np.random.normal(M, sigma^2, (J, K))`` from numpy's global generator, seeded here; numpy's
legacy normal is ``loc + scale`` times the stream's standard normal draw, so dpdl's float64 reference
(:mod:`dpdl.algorithms.dp_iadmm_reference`) is fed those standard normal draws, in the same order, as
its unit noise, under the authors' switches (``outp_noise`` variance, ``outp_gradient`` agent_mean,
``outp_regulariser`` code_server_w: the reading ``outp_noise_variance``).

The authors' iteration ``k`` (0, 1, ..., T) is dpdl's t = k + 1. Printed per epsilon-bar, at the
checkpoints: the largest absolute difference of w, z_p, lambda_p (and the largest absolute value, for
scale), rho and eta-hat, and each side's test error.

The replay found one departure of the authors' code from the paper: their gradient's regulariser is
``2 gamma W`` at the server's w (``src/Functions.py``, ``calculate_gradient``: ``+ 2. * par.gamma *
par.W_val``), where (37) has (2 beta / P) z_p. dpdl's switch ``outp_regulariser`` (``code_server_w``, set by
the reading ``outp_noise_variance``) is the authors' form; ``--outp-regulariser eq37`` replays (37)'s instead
(the default reading's), which shows how far that one term moves the iterates.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import types
from pathlib import Path

import numpy as np

from dpdl.algorithms import dp_iadmm_reference as reference
from dpdl.algorithms.dp_iadmm import OUTP_REGULARISERS, IadmmParams, PenaltySchedule
from dpdl.data.mnist import read_idx
from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS, outp_inverse_proximity

AUTHORS_COMMIT = "4610458edaad176f5108199393f2bc18c93659e2"
AGENTS = 10
GAMMA = 1e-6  # the authors' Parameters.gamma; dpdl's beta


def mnist(folder: Path, limit: int | None) -> tuple[np.ndarray, ...]:
    """Training and test images / 255 as float32 (J = 784) and labels, as the authors' Read_MNIST gives them."""
    read = {name: read_idx(folder / name) for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")}
    read |= {name: read_idx(folder / name) for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
    x_train = read["train-images-idx3-ubyte"].reshape(-1, 784).astype(np.float32) / 255.0
    x_test = read["t10k-images-idx3-ubyte"].reshape(-1, 784).astype(np.float32) / 255.0
    y_train, y_test = (
        read["train-labels-idx1-ubyte"].astype(np.int64),
        read["t10k-labels-idx1-ubyte"].astype(np.int64),
    )
    if limit is not None:  # a smaller check: the first rows, still a multiple of the agents
        x_train, y_train = x_train[: limit - limit % AGENTS], y_train[: limit - limit % AGENTS]
    return x_train, y_train, x_test, y_test


def authors_modules(checkout: Path) -> types.ModuleType:
    """The authors' ``Models`` module (it imports their ``Functions``), from ``<checkout>/src``."""
    sys.path.insert(0, str(checkout / "src"))
    return importlib.import_module("Models")


def authors_parameters(epsilon: float, x_agents: list, n_total: int) -> types.SimpleNamespace:
    """The attributes of the authors' ``Parameters`` their OutP reads (MNIST, dynamic_1, a = 1)."""
    n_features, n_classes = 784, 10
    return types.SimpleNamespace(
        Instance="MNIST",
        Algorithm="OutP",
        rho_str="dynamic_1",
        a_str="1.0",
        bar_eps_str=repr(float(epsilon)),
        gamma=GAMMA,
        split_number=len(x_agents),
        num_features=n_features,
        num_classes=n_classes,
        total_data=n_total,
        rho=0.0,
        eta=0.0,
        W_val=np.zeros((n_features, n_classes)),
        Z_val=np.zeros((len(x_agents), n_features, n_classes)),
        Lambdas_val=np.zeros((len(x_agents), n_features, n_classes)),
        M=np.zeros((n_features, n_classes)),
    )


def test_error(w: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> float:
    """The share of test images whose largest score is not their label (the authors' 1 - accuracy)."""
    return float(np.mean(np.argmax(x_test @ w, axis=1) != y_test))


def replay(
    models, epsilon: float, arrays: tuple, iterations: int, seed: int, checkpoints: set[int], regulariser: str
) -> list[dict]:
    """Run both sides for ``iterations`` iterations (authors' k = 0..iterations-1); a row per checkpoint t."""
    x_train, y_train, x_test, y_test = arrays
    x_agents, y_agents = np.split(x_train, AGENTS), np.split(y_train, AGENTS)
    par = authors_parameters(epsilon, x_agents, len(x_train))
    agents = reference.agents_from_rows(
        x_train, y_train, np.arange(AGENTS + 1) * (len(x_train) // AGENTS), 10
    )
    params = IadmmParams(
        algorithm="outp",
        epsilon=epsilon,
        iterations=iterations,
        penalty=PenaltySchedule(**PENALTY_CONSTANTS["mnist"]),
        beta=GAMMA,
        outp_noise="variance",
        outp_gradient="agent_mean",
        outp_regulariser=regulariser,
    )
    state = reference.initial_state(AGENTS, 784, 10)
    np.random.seed(seed)  # the authors' noise: numpy's global generator
    stream = np.random.RandomState(seed)  # the same stream, read as standard normal draws for dpdl
    rows = []
    for k in range(iterations):
        t = k + 1
        models.hyperparameter_rho(par, k)
        models.Base_First_Block_Problem_ClosedForm(par, x_agents, y_agents, k)
        models.Base_Second_Block_Problem_ClosedForm(par)
        par.Lambdas_val += par.rho * (par.W_val - par.Z_val)
        unit = np.stack([stream.standard_normal((784, 10)) for _ in range(AGENTS)])
        state = reference.iteration(state, agents, params, t, unit)
        if t in checkpoints:
            inverse_eta = outp_inverse_proximity(
                t, epsilon, params.delta, n_samples=len(x_agents[0]), n_params=7840
            )
            rows.append(
                {
                    "t": t,
                    "w": float(np.abs(state.w - par.W_val).max()),
                    "z": float(np.abs(state.z - par.Z_val).max()),
                    "lambda": float(np.abs(state.lam - par.Lambdas_val).max()),
                    "|w|": float(np.abs(par.W_val).max()),
                    "|lambda|": float(np.abs(par.Lambdas_val).max()),
                    "rho": abs(params.penalty(t, epsilon) - par.rho),
                    "eta": abs(1.0 / inverse_eta - par.eta),
                    "dpdl_error": test_error(state.w, x_test, y_test),
                    "authors_error": test_error(par.W_val, x_test, y_test),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--authors", type=Path, required=True, help=f"checkout of the authors' code at {AUTHORS_COMMIT}"
    )
    parser.add_argument("--mnist", type=Path, required=True, help="folder with MNIST's four idx files")
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.05, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--limit", type=int, default=None, help="use only the first training rows (a quick check)"
    )
    parser.add_argument(
        "--outp-regulariser",
        choices=OUTP_REGULARISERS,
        default="code_server_w",
        help="dpdl's switch: the authors' 2 gamma w (code_server_w, default) or (37)'s (2 beta / P) z_p (eq37)",
    )
    args = parser.parse_args(argv)
    if not (args.authors / "src" / "Models.py").is_file():
        parser.error(
            f"--authors {args.authors}: no src/Models.py; clone the authors' code at {AUTHORS_COMMIT}"
        )
    models = authors_modules(args.authors)
    arrays = mnist(args.mnist, args.limit)
    checkpoints = {t for t in (1, 2, 10, 50, 100, 200, 300, 400, 500, 1000) if t <= args.iterations}
    checkpoints.add(args.iterations)
    print(
        f"OutP, MNIST ({len(arrays[0])} training rows, {AGENTS} agents), seed {args.seed}, "
        f"authors at {AUTHORS_COMMIT[:7]}, dpdl's reference with outp_regulariser {args.outp_regulariser}"
    )
    for epsilon in args.epsilons:
        start = time.perf_counter()
        rows = replay(models, epsilon, arrays, args.iterations, args.seed, checkpoints, args.outp_regulariser)
        print(
            f"\nepsilon-bar {epsilon:g} ({time.perf_counter() - start:.0f} s): largest absolute differences"
        )
        print(
            "| t | w | z_p | lambda_p | max abs w | max abs lambda | rho | eta-hat | test error dpdl | authors |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for row in rows:
            print(
                f"| {row['t']} | {row['w']:.2e} | {row['z']:.2e} | {row['lambda']:.2e} | {row['|w|']:.3g} | "
                f"{row['|lambda|']:.3g} | {row['rho']:.1e} | {row['eta']:.1e} | {100 * row['dpdl_error']:.2f}% | "
                f"{100 * row['authors_error']:.2f}% |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
