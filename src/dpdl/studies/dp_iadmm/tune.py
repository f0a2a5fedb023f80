"""The reference optimum: the minimiser of (1) on each prepared dataset.

Every non-private run approaches it; its table sets our test error at the optimum beside the
paper's non-private testing error (the study has no hyperparameter search: the paper fixes them).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.errors import ConfigError
from dpdl.progress import Progress
from dpdl.studies.dp_iadmm.grid import DATASETS
from dpdl.studies.dp_iadmm.run import load_federated

log = logging.getLogger(__name__)

# The paper's non-private testing error (%) on each dataset (section 4, Figs 2a and 2b); the
# claims mnist_nonprivate and femnist_nonprivate judge our non-private runs against it.
PAPER_NONPRIVATE_PCT = {"mnist": 7.42, "femnist": 35.25}


def optimum_row(dataset: str, npz: str | Path, settings: dict) -> dict:
    """The minimiser of (1) on one prepared dataset (L-BFGS from w = 0) and its errors.

    Besides the errors at the minimiser, it reports the lowest test error seen along the L-BFGS
    path and where: an oracle choice on the test set, so a bound on what stopping any solver of (1)
    early could give, not a result of the paper's method.
    """
    from dpdl.algorithms.dp_iadmm_objective import objective_minimiser, training_error
    from dpdl.models import softmax

    data, test_x, test_y, _ = load_federated(dataset, npz, settings["mnist_agents"])
    job = f"{dataset}: L-BFGS on (1)"
    limit = settings["optimum_iterations"]
    log.info("%s: %d samples, %d features, at most %d iterations", job, data.n_total, data.n_features, limit)
    progress = Progress(job, limit)
    path = []

    def record(w: np.ndarray) -> None:
        path.append(float(softmax.error_rate(test_x, w, test_y)[0]))
        progress.update(len(path))

    w, result = objective_minimiser(data, settings["beta"], limit, callback=record)
    test_error = float(softmax.error_rate(test_x, w, test_y)[0])
    lowest = int(np.argmin(path)) if path else None
    return {
        "dataset": dataset,
        "train_samples": data.n_total,
        "test_samples": len(test_y),
        "beta": settings["beta"],
        "lbfgs_iterations": int(result.nit),
        "lbfgs_stop": str(result.message),  # float32 data: a line search may end at rounding level
        "gradient_max_abs": float(f"{np.abs(result.jac).max():.3g}"),  # first-order optimality of (1)
        "objective": round(float(result.fun), 6),
        "train_error_pct": round(100 * float(training_error(data, w)[0]), 2),
        "test_error_pct": round(100 * test_error, 2),
        "lowest_path_test_error_pct": None if lowest is None else round(100 * path[lowest], 2),
        "lowest_at_iteration": None if lowest is None else lowest + 1,
        "paper_nonprivate_pct": PAPER_NONPRIVATE_PCT[dataset],
    }


def optimum_table(npzs: Iterable[str | Path], settings: dict) -> pd.DataFrame:
    """One :func:`optimum_row` per prepared dataset (each file's stem names its dataset)."""
    rows = []
    for npz in npzs:
        dataset = Path(npz).stem
        if dataset not in DATASETS:
            raise ConfigError(f"--data {npz}: its file name must be one of {', '.join(DATASETS)} (.npz)")
        rows.append(optimum_row(dataset, npz, settings))
    return pd.DataFrame(rows)
