"""dzoa's runs: the prepared trials in, one run artifact per (algorithm, grid point, trial) out.

D-ZOA runs one batch per evaluation trial with every grid point at once (the zeroth-order
directions are common random numbers across the privacy grid); DP-ADMM runs one batch of all
evaluation trials and grid points with the hyperparameters ``dzoa tune`` chose. The readers of
the prepared data and of the earlier steps' outputs are in :mod:`._inputs` (tuning uses them too).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.progress import Progress
from dpdl.studies.dzoa._dpadmm import dpadmm_batch, dpadmm_schedules
from dpdl.studies.dzoa._inputs import (
    agent_rngs,
    check_trials,
    data_shape,
    load_calibration,
    load_centralized,
    load_data,
    read_card,
    split_agents,
)
from dpdl.studies.dzoa.grid import (
    ALGORITHMS,
    DATASET,
    GRADIENT_BOUND,
    STUDY,
    dzoa_keywords,
    graph_edges,
    grid,
    loss_scale,
    run_path,
    switches,
)

log = logging.getLogger(__name__)

# the fields of a grid point's privacy record (dzoa calibrate) that every run's provenance carries
PRIVACY_KEYS = (
    "delta",
    "eps_per_iteration",
    "eps_composed_rdp",
    "eps_composed_pld",
    "accountant",
    "noise_scales",
)


# --------------------------------------------------------------------------------------- runs


def run(
    values: dict,
    algorithm: str,
    trials: list[int],
    *,
    data_path: str,
    card_path: str,
    centralized_path: str,
    calibration_path: str,
    calibration_arrays: str | None,
    tuning_path: str | None,
) -> list[str]:
    """Run one algorithm on the given evaluation trials for every grid point; write one artifact each."""
    from dpdl.runs import RunResult, package_versions, run_timing, stopwatch, write_run

    card = read_card(card_path)
    n_agents, samples = data_shape(card)
    arrays = load_data(data_path)
    n_total = arrays["X"].shape[0]
    check_trials(trials, n_total)
    beta_c = load_centralized(centralized_path, n_total)[trials]
    X, y = split_agents(arrays["X"][trials], arrays["y"][trials], n_agents)
    calibration = load_calibration(calibration_path)
    points = grid(values)
    n_outer = values["outer_iterations"]
    elapsed = stopwatch()
    if algorithm == "dzoa":
        errors, extra, params = _run_dzoa(
            values, X, y, beta_c, trials, points, calibration, calibration_arrays, samples
        )
    elif algorithm == "dpadmm":
        errors, extra, params = _run_dpadmm(
            values, X, y, beta_c, trials, points, calibration, tuning_path, samples
        )
    else:
        raise ConfigError(f"algorithm must be one of {ALGORITHMS}; got {algorithm!r}")
    wall, cpu = elapsed()
    n_runs = len(points) * len(trials)
    versions = package_versions()
    written = []
    for i, point in enumerate(points):
        entry = calibration["points"][point.label]
        record = entry[algorithm]
        for b, trial in enumerate(trials):
            trace = pd.DataFrame({"iteration": np.arange(n_outer + 1), "error": errors[i, b]})
            for column, series in extra.items():
                trace[column] = series[i, b]
            run_params = {
                **params(i, b),
                "grid_point": point.label,
                "epsilon_total_29": entry["epsilon_total_29"],
                "epsilon_total_given": point.epsilon_total,
                "trial": trial,
            }
            provenance = {
                "study": STUDY,
                "dataset": DATASET,
                "dataset_sha256": card["npz_sha256"],
                "algorithm": algorithm,
                "params": run_params,
                "seed": trial,
                "epsilon": entry["epsilon"],
                **{key: record[key] for key in PRIVACY_KEYS},
                "switches": switches(values),
                "versions": versions,
                "timing": run_timing(wall, cpu, n_outer, n_runs),
            }
            path = run_path(algorithm, point.label, trial)
            write_run(path, RunResult(trace, provenance))
            written.append(path)
    log.info(
        "%s: %d runs (%d grid points x %d trials) in %.1f s",
        algorithm,
        n_runs,
        len(points),
        len(trials),
        wall,
    )
    return written


def _run_dzoa(values, X, y, beta_c, trials, points, calibration, calibration_arrays, samples):
    from dpdl.algorithms.dzoa import adjacency, dzoa
    from dpdl.io import load_npz

    if calibration_arrays is None:
        raise ConfigError(
            "dzoa run --algorithm dzoa needs --calibration-arrays (the step constants of dzoa calibrate)"
        )
    steps = load_npz(calibration_arrays)
    labels = [str(label) for label in steps["labels"]]
    missing = [p.label for p in points if p.label not in labels]
    if missing:
        raise ArtifactError(f"{calibration_arrays}: no step constants for {missing}; rerun dzoa calibrate")
    step_scale = steps["step_scale"][[labels.index(p.label) for p in points]][:, trials]  # (C, B, K)
    n_agents = X.shape[1]
    edges = graph_edges(values, n_agents)
    scale = loss_scale(values, samples)
    result = dzoa(
        X,
        y,
        beta_c,
        adjacency(edges, n_agents),
        step_scale,
        [agent_rngs("dzoa", t, n_agents) for t in trials],
        **dzoa_keywords(values, scale),
        n_outer=values["outer_iterations"],
        on_iteration=Progress(f"D-ZOA trials {trials}", values["outer_iterations"]).update,
    )
    if result.diverged.any():
        log.warning(
            "D-ZOA diverged in %d of %d runs (kept; non-finite errors)",
            int(result.diverged.sum()),
            result.diverged.size,
        )

    # The realised perturbation xi_k^(m) of (15)/(19) per coordinate, ||xi_k^(m)|| / sqrt(P), beside
    # the sigma_k of (25) that the point's epsilon assumes (Lemma 1: xi_k^(m) ~ N(0, sigma_k^2 I_P)).
    n_params = X.shape[-1]
    per_coordinate = result.perturbation / np.sqrt(n_params)  # (C, B, M, K)
    before_first = np.full((*per_coordinate.shape[:2], 1), np.nan)  # m = 0: nothing released yet
    extra = {
        perturbation_column(k): np.concatenate([before_first, per_coordinate[..., k]], axis=-1)
        for k in range(n_agents)
    }
    realised = np.sqrt(np.mean(per_coordinate**2, axis=2))  # (C, B, K): RMS over m = 1..M

    def params(i: int, b: int) -> dict:
        entry = calibration["points"][points[i].label]["dzoa"]
        assumed = np.asarray(entry["noise_std"], dtype=float)
        return {
            "rho": values["rho"],
            "eta": values["eta"],
            "loss_scale": scale,
            "outer_iterations": values["outer_iterations"],
            "inner_iterations": values["inner_iterations"],
            "directions": values["directions"],
            "smoothing": values["smoothing"],
            "lipschitz": values["lipschitz"],
            "c1": GRADIENT_BOUND,
            "step_scale_alpha0R": step_scale[i, b].tolist(),
            "degrees": calibration["degrees"],
            "modelled_noise_std": entry["noise_std"],
            "sensitivity": entry["sensitivity"],
            "edges": [list(e) for e in edges],
            "diverged": bool(result.diverged[i, b]),
            "n_params": n_params,
            "perturbation_rms": _finite_or_none(realised[i, b]),  # None after a divergence
            "perturbation_over_sigma": _finite_or_none(realised[i, b] / assumed),
        }

    return result.error, extra, params


def _finite_or_none(values: np.ndarray) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in values]


def perturbation_column(agent: int) -> str:
    """Trace column of agent ``agent``'s realised perturbation per coordinate.

    ``agent`` is 0-indexed; the value is ||xi_k^(m)|| / sqrt(P).
    """
    return f"perturbation_agent{agent + 1}"


def _run_dpadmm(values, X, y, beta_c, trials, points, calibration, tuning_path, samples):
    from dpdl.io import read_json

    if tuning_path is None:
        raise ConfigError("dzoa run --algorithm dpadmm needs --tuning (the choices of dzoa tune)")
    chosen = read_json(tuning_path).get("chosen", {})
    missing = [p.label for p in points if p.label not in chosen]
    if missing:
        raise ArtifactError(f"{tuning_path}: no tuned hyperparameters for {missing}; rerun dzoa tune")
    penalties = [chosen[p.label]["penalty"] for p in points]
    prox_steps = [chosen[p.label]["step_size"] for p in points]  # eta0 of each point
    schedules = [
        dpadmm_schedules(values, calibration["points"][p.label]["epsilon"], p.delta, samples, [rho], [step])
        for p, rho, step in zip(points, penalties, prox_steps, strict=True)
    ]
    inverse_prox_step = np.concatenate([s[0] for s in schedules])
    noise_std = np.concatenate([s[1] for s in schedules])
    scale = loss_scale(values, samples)
    result = dpadmm_batch(values, X, y, beta_c, trials, samples, penalties, inverse_prox_step, noise_std)

    def params(i: int, b: int) -> dict:
        return {
            "eta": values["eta"],
            "loss_scale": scale,
            "outer_iterations": values["outer_iterations"],
            "penalty": penalties[i],
            "step_size_eta0": prox_steps[i],
            "step_schedule": "eta0 / sqrt(m)",
            "tuning_error": chosen[points[i].label]["tuning_error"],
            "c1": GRADIENT_BOUND,
            "gauss_constant": float(values["dpadmm_gauss_constant"]),
            "noise_std_first": float(noise_std[i, 0]),
            "noise_std_last": float(noise_std[i, -1]),
            "diverged": bool(result.diverged[i, b]),
        }

    return result.error, {"server_error": result.server_error}, params
