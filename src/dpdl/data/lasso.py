"""The synthetic distributed lasso data of Gratton et al., Section VI (dzoa.md section 5.3).

Per trial: X_raw ~ N(0, 1)^{N x P}, omega ~ N(0, I_P), psi ~ N(0, 0.1 I_N); y = X_raw omega + psi
(before normalisation, ``y_from="raw"``); columns divided by their maximum absolute value
(``col_norm="maxabs"``) and rows projected to norm <= 1 (``row_norm="project"``). Rows are split
contiguously: agent k holds rows k * N_k .. (k + 1) * N_k - 1. Trial t draws from the t-th child
of ``SeedSequence(seed)``, so a trial's data does not depend on how many trials are made.
"""

from __future__ import annotations

import numpy as np

from dpdl.errors import ConfigError

Y_FROM = ("raw", "normalized")
COL_NORM = ("maxabs", "max")
ROW_NORM = ("project", "unit", "global_max")


def generate_trial(
    rng: np.random.Generator,
    *,
    agents: int,
    samples_per_agent: int,
    features: int,
    noise_variance: float,
    y_from: str = "raw",
    col_norm: str = "maxabs",
    row_norm: str = "project",
) -> dict[str, np.ndarray]:
    """One trial's features ``X`` (N x P), responses ``y`` (N) and true coefficients ``omega`` (P)."""
    for name, value, allowed in (
        ("y_from", y_from, Y_FROM),
        ("col_norm", col_norm, COL_NORM),
        ("row_norm", row_norm, ROW_NORM),
    ):
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {allowed}, got {value!r}")
    n_rows = agents * samples_per_agent
    x_raw = rng.standard_normal((n_rows, features))
    omega = rng.standard_normal(features)  # omega ~ N(0, I_P)
    psi = np.sqrt(noise_variance) * rng.standard_normal(n_rows)  # psi ~ N(0, 0.1 I_N)
    scale = np.abs(x_raw).max(axis=0) if col_norm == "maxabs" else x_raw.max(axis=0)
    x = x_raw / scale  # column step: maximum (absolute) value 1
    norms = np.linalg.norm(x, axis=1)
    if row_norm == "project":
        x = x / np.maximum(1.0, norms)[:, None]  # row step: ||x_i|| <= 1
    elif row_norm == "unit":
        x = x / norms[:, None]
    else:
        x = x / norms.max()
    y = (x_raw if y_from == "raw" else x) @ omega + psi  # y = X omega + psi
    return {"X": x, "y": y, "omega": omega}


def generate(*, trials: int, seed: int, **trial_options) -> dict[str, np.ndarray]:
    """All trials stacked: ``X`` (trials x N x P), ``y`` (trials x N), ``omega`` (trials x P)."""
    children = np.random.SeedSequence(seed).spawn(trials)
    per_trial = [generate_trial(np.random.default_rng(child), **trial_options) for child in children]
    return {key: np.stack([t[key] for t in per_trial]) for key in ("X", "y", "omega")}
