"""dzoa's inputs to tuning and runs (``tune`` and ``run`` both read them).

The prepared trials, their card, the centralised solutions, the calibration, and the per-agent random
generators of a run.
"""

from __future__ import annotations

import numpy as np

from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dzoa.grid import DATASET, STUDY


def load_data(path: str) -> dict[str, np.ndarray]:
    """The prepared trials: ``X`` (trials, N, P) and ``y`` (trials, N)."""
    from dpdl.io import load_npz

    arrays = load_npz(path)
    for key in ("X", "y"):
        if key not in arrays:
            raise ArtifactError(f"{path}: no array {key!r}; rebuild data/processed/dzoa/lasso.npz")
    return arrays


def split_agents(X: np.ndarray, y: np.ndarray, n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """(trials, N, P) -> (trials, K, N_k, P): agent k holds rows k N_k .. (k + 1) N_k - 1."""
    n_trials, n_rows, n_params = X.shape
    if n_rows % n_agents:
        raise ArtifactError(f"{n_rows} rows cannot be split equally over {n_agents} agents")
    return X.reshape(n_trials, n_agents, -1, n_params), y.reshape(n_trials, n_agents, -1)


def data_shape(card: dict) -> tuple[int, int]:
    """(K, N_k) from a prepared dataset's card options."""
    options = card.get("options", {})
    try:
        return int(options["agents"]), int(options["samples_per_agent"])
    except KeyError:
        raise ArtifactError(
            "the dzoa/lasso card has no options.agents / options.samples_per_agent; rebuild it"
        ) from None


def read_card(path: str) -> dict:
    """The prepared dataset's card (its options and the sha256 of its arrays)."""
    from dpdl.io import read_json

    card = read_json(path)
    if not isinstance(card, dict) or "npz_sha256" not in card:
        raise ArtifactError(f"{path}: not a prepared-dataset card (no npz_sha256)")
    return card


def load_centralized(path: str, n_trials: int) -> np.ndarray:
    """beta^c of every trial, (trials, P), as ``dzoa centralized`` wrote it."""
    from dpdl.io import load_npz

    arrays = load_npz(path)
    if "beta" not in arrays or arrays["beta"].shape[0] != n_trials:
        raise ArtifactError(
            f"{path}: no centralized solution for each of the {n_trials} trials; rerun dzoa centralized"
        )
    return arrays["beta"]


def load_calibration(path: str) -> dict:
    """The privacy of every grid point, as ``dzoa calibrate`` wrote it."""
    from dpdl.io import read_json

    calibration = read_json(path)
    if not isinstance(calibration, dict) or "points" not in calibration:
        raise ArtifactError(f"{path}: not a dzoa calibration (no 'points'); rerun dzoa calibrate")
    return calibration


def check_trials(trials: list[int], n_trials: int) -> None:
    """Refuse trials that are not in the prepared data."""
    bad = [t for t in trials if not 0 <= t < n_trials]
    if bad or not trials:
        raise ConfigError(
            f"trials {bad or trials} are not in the prepared data's "
            f"0..{n_trials - 1}; check data.lasso.trials"
        )


def agent_rngs(algorithm: str, trial: int, n_agents: int) -> list[np.random.Generator]:
    """One generator per agent: spawned children of the run's root seed.

    The root is ``run_seed_sequence("dzoa", "dzoa/lasso", algorithm, None, trial)``: no epsilon,
    because every privacy setting of a trial shares the same draws (common random numbers).
    """
    from dpdl.runs import run_seed_sequence

    root = run_seed_sequence(STUDY, DATASET, algorithm, None, trial)
    return [np.random.default_rng(child) for child in root.spawn(n_agents)]
