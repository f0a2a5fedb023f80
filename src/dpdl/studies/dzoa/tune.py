"""dzoa's reference solutions and settings: the centralized lasso, the privacy calibration, DP-ADMM's tuning.

1. ``centralized``: the lasso solution (33) of every trial, with its duality gap;
2. ``calibrate``: per grid point (epsilon, delta) the per-iteration epsilon, the paper's total
   (29), the accountant's totals, and D-ZOA's step constants alpha0 R from inverting (27) per
   trial and agent; the privacy table;
3. ``tune``: DP-ADMM's (rho, eta0) per grid point on the tuning trials (disjoint from the
   evaluation trials).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.progress import Progress
from dpdl.studies.dzoa._dpadmm import dpadmm_batch, dpadmm_schedules
from dpdl.studies.dzoa._inputs import (
    check_trials,
    data_shape,
    load_calibration,
    load_centralized,
    load_data,
    read_card,
    split_agents,
)
from dpdl.studies.dzoa.grid import GRADIENT_BOUND, THEOREM1_MAX_EPSILON, graph_edges, grid, loss_scale

log = logging.getLogger(__name__)


PRIVACY_TABLE_COLUMNS = [  # calibrate's privacy table: one row per grid point and algorithm
    "algorithm",
    "label",
    "epsilon",
    "delta",
    "epsilon_total_given",
    "epsilon_total_29",
    "eps_composed_rdp",
    "eps_composed_pld",
    "noise_multiplier",
    "outer_iterations",
    "noise_std_min",
    "noise_std_max",
    "step_scale_min",
    "step_scale_max",
]


def centralized(values: dict, data_path: str, card_path: str, out: str) -> None:
    """Solve (33) (or its 1/N_k version under ``loss_scale: mean``) for every trial; write beta, gap."""
    from dpdl.io import save_npz
    from dpdl.models import lasso

    arrays = load_data(data_path)
    n_agents, samples = data_shape(read_card(card_path))
    scale = loss_scale(values, samples)
    solution = lasso.solve(arrays["X"], arrays["y"], l1_weight=values["eta"], scale=scale)
    squared_norms = np.sum(solution.beta**2, axis=-1)
    log.info(
        "centralized lasso of %d trials: largest duality gap %.3g after %d sweeps; ||beta_c||^2 in [%.1f, %.1f]",
        len(solution.gap),
        solution.gap.max(),
        solution.sweeps,
        np.min(squared_norms),
        np.max(squared_norms),
    )
    save_npz(
        out,
        {
            "beta": solution.beta,
            "gap": solution.gap,
            "objective": solution.objective,
            "loss_scale": np.array(scale),
        },
    )


def calibrate(
    values: dict,
    data_path: str,
    card_path: str,
    centralized_path: str,
    out_json: str,
    out_npz: str,
    out_table: str,
) -> None:
    """Privacy of every grid point and algorithm, and D-ZOA's step constants per trial and agent."""
    from dpdl.algorithms.dzoa import adjacency
    from dpdl.io import save_npz, write_json, write_text

    n_agents, samples = data_shape(read_card(card_path))
    arrays = load_data(data_path)
    beta_c = load_centralized(centralized_path, arrays["X"].shape[0])
    n_params = arrays["X"].shape[-1]
    degree = adjacency(graph_edges(values, n_agents), n_agents).sum(axis=1).astype(int)
    records, rows, per_point = {}, [], []
    for point in grid(values):
        records[point.label], point_rows, scales = _calibrate_point(
            values, point, degree, samples, n_params, beta_c
        )
        rows += point_rows
        per_point.append(scales)
    write_json(out_json, {"degrees": degree.tolist(), "points": records})
    save_npz(
        out_npz, {"labels": np.array([p.label for p in grid(values)]), "step_scale": np.stack(per_point)}
    )
    write_text(
        out_table, pd.DataFrame(rows, columns=PRIVACY_TABLE_COLUMNS).to_csv(index=False, lineterminator="\n")
    )
    log.info("calibrated %d grid points for %d trials", len(records), len(beta_c))


def _calibrate_point(
    values: dict, point, degree: np.ndarray, samples: int, n_params: int, beta_c: np.ndarray
) -> tuple[dict, list[dict], np.ndarray]:
    """One grid point's privacy record, its privacy table rows (D-ZOA, DP-ADMM) and its step constants."""
    from dpdl.privacy.accounting import PrivacyEvent, privacy_record
    from dpdl.privacy.dp_iadmm import outp_noise_std
    from dpdl.privacy.dzoa import dzoa_noise_std, dzoa_sensitivity, dzoa_total_epsilon

    n_outer, rho = values["outer_iterations"], values["rho"]
    epsilon = _point_epsilon(point, n_outer)
    total = dzoa_total_epsilon(epsilon, point.delta, n_outer=n_outer)  # (29)
    scales = step_scales(values, epsilon, point.delta, degree, samples, n_params, beta_c)
    network_epsilon = _network_epsilon(values, scales, point.delta, degree, samples, n_params, beta_c)
    sigma = [
        dzoa_noise_std(network_epsilon, point.delta, rho=rho, n_neighbours=int(d), n_samples=samples)
        for d in degree
    ]
    sensitivity = [dzoa_sensitivity(rho=rho, n_neighbours=int(d), n_samples=samples) for d in degree]
    # (25) per outer iteration; sigma_k / Delta_k = sqrt(2.1 ln(1.25/delta)) / epsilon for every agent
    dzoa_event = PrivacyEvent("gaussian", sigma[0] / sensitivity[0], count=n_outer)
    dpadmm_multiplier = outp_noise_std(
        epsilon,
        point.delta,
        sensitivity=1.0,
        outp_noise="sigma",
        constant=float(values["dpadmm_gauss_constant"]),
    )  # sigma_m / Delta_m of every DP-ADMM release
    dpadmm_event = PrivacyEvent("gaussian", dpadmm_multiplier, count=n_outer)
    point_record = {"epsilon": epsilon, "delta": point.delta, "epsilon_total_29": total}
    rows = []
    for algorithm, event, eps_iteration in (
        ("dzoa", dzoa_event, network_epsilon),
        ("dpadmm", dpadmm_event, epsilon),
    ):
        record = privacy_record(event, delta=point.delta, eps_per_iteration=eps_iteration)
        point_record[algorithm] = record
        is_dzoa = algorithm == "dzoa"
        rows.append(
            {
                "algorithm": algorithm,
                "label": point.label,
                "epsilon": epsilon,
                "delta": point.delta,
                "epsilon_total_given": point.epsilon_total,
                "epsilon_total_29": total,
                "eps_composed_rdp": record["eps_composed_rdp"],
                "eps_composed_pld": record["eps_composed_pld"],
                "noise_multiplier": event.noise_multiplier,
                "outer_iterations": n_outer,
                "noise_std_min": min(sigma) if is_dzoa else None,
                "noise_std_max": max(sigma) if is_dzoa else None,
                "step_scale_min": float(scales.min()) if is_dzoa else None,
                "step_scale_max": float(scales.max()) if is_dzoa else None,
            }
        )
    point_record["dzoa"]["noise_std"] = sigma
    point_record["dzoa"]["sensitivity"] = sensitivity
    return point_record, rows, scales


def _point_epsilon(point, n_outer: int) -> float:
    """The grid point's per-iteration epsilon (given, or from its total by (29)), within Theorem 1."""
    from dpdl.privacy.dzoa import dzoa_epsilon_for_total, dzoa_total_epsilon

    epsilon = point.epsilon
    if epsilon is None:
        epsilon = dzoa_epsilon_for_total(point.epsilon_total, point.delta, n_outer=n_outer)
    if epsilon > THEOREM1_MAX_EPSILON:
        largest = dzoa_total_epsilon(1.0, point.delta, n_outer=n_outer)
        raise ConfigError(
            f"grid point {point.label}: per-iteration epsilon {epsilon:.4g} exceeds 1, outside Theorem 1 "
            f"(dzoa.md G11); lower dzoa.epsilon_totals below {largest:.4g} for outer_iterations = {n_outer}"
        )
    return epsilon


def _network_epsilon(values, scales, delta, degree, samples, n_params, beta_c) -> float:
    """The network's per-iteration epsilon: the largest (27) over the trials and agents (G6)."""
    from dpdl.privacy.dzoa import dzoa_epsilon_per_iteration

    agent_epsilons = np.array(
        [
            [
                dzoa_epsilon_per_iteration(
                    scales[b, k],
                    delta,
                    n_neighbours=int(degree[k]),
                    beta_c_sq_norm=float(beta_c[b] @ beta_c[b]),
                    rho=values["rho"],
                    n_samples=samples,
                    n_params=n_params,
                    n_directions=values["directions"],
                    n_inner=values["inner_iterations"],
                    c1=GRADIENT_BOUND,
                )
                for k in range(len(degree))
            ]
            for b in range(len(beta_c))
        ]
    )
    return float(agent_epsilons.max())  # (27) per agent; the network's is the largest (G6)


def step_scales(values, epsilon, delta, degree, samples, n_params, beta_c) -> np.ndarray:
    """alpha0 R per trial and agent from (27) inverted; ``common_max`` gives every agent the largest (G6)."""
    from dpdl.privacy.dzoa import dzoa_step_scale

    scales = np.array(
        [
            [
                dzoa_step_scale(
                    epsilon,
                    delta,
                    n_neighbours=int(d),
                    n_samples=samples,
                    n_params=n_params,
                    beta_c_sq_norm=float(b @ b),
                    rho=values["rho"],
                    n_directions=values["directions"],
                    n_inner=values["inner_iterations"],
                    c1=GRADIENT_BOUND,
                )
                for d in degree
            ]
            for b in beta_c
        ]
    )
    if values["step_scale"] == "common_max":
        scales = np.repeat(scales.max(axis=1, keepdims=True), len(degree), axis=1)
    return scales


def tune(
    values: dict,
    trials: list[int],
    data_path: str,
    card_path: str,
    centralized_path: str,
    calibration_path: str,
    out_json: str,
    out_table: str,
) -> None:
    """Pick DP-ADMM's (rho, eta0) per grid point: lowest mean final error over the tuning trials."""
    from dpdl.io import write_json, write_text

    n_agents, samples = data_shape(read_card(card_path))
    arrays = load_data(data_path)
    beta_c_all = load_centralized(centralized_path, arrays["X"].shape[0])
    check_trials(trials, arrays["X"].shape[0])
    X, y = split_agents(arrays["X"][trials], arrays["y"][trials], n_agents)
    beta_c = beta_c_all[trials]
    calibration = load_calibration(calibration_path)["points"]
    combos = [(rho, step) for rho in values["dpadmm_penalties"] for step in values["dpadmm_step_sizes"]]
    penalties = [c[0] for c in combos]
    prox_steps = [c[1] for c in combos]  # eta0
    chosen, rows = {}, []
    points = grid(values)
    progress = Progress(
        f"DP-ADMM tuning, {len(combos)} (rho, eta0) x trials {trials}, grid points", len(points)
    )
    for done, point in enumerate(points):
        progress.update(done)
        epsilon = calibration[point.label]["epsilon"]
        inverse_prox_step, noise_std = dpadmm_schedules(
            values, epsilon, point.delta, samples, penalties, prox_steps
        )
        result = dpadmm_batch(values, X, y, beta_c, trials, samples, penalties, inverse_prox_step, noise_std)
        final = result.error[:, :, -1]
        finite = np.isfinite(final).all(axis=1)
        score = np.where(finite, np.mean(np.where(np.isfinite(final), final, 0.0), axis=1), np.inf)
        if not np.isfinite(score).any():
            raise ArtifactError(
                f"DP-ADMM diverged for every (rho, eta0) at {point.label}; "
                "widen dzoa.dpadmm_penalties / dpadmm_step_sizes"
            )
        best = int(np.argmin(score))
        chosen[point.label] = {
            "penalty": penalties[best],
            "step_size": prox_steps[best],
            "tuning_error": float(score[best]),
        }
        for i, (rho, step) in enumerate(combos):
            rows.append(
                {
                    "label": point.label,
                    "epsilon": epsilon,
                    "delta": point.delta,
                    "penalty": rho,
                    "step_size": step,
                    "mean_final_error": float(score[i]) if np.isfinite(score[i]) else None,
                    "n_diverged": int((~np.isfinite(final[i])).sum()),
                    "n_trials": len(trials),
                    "chosen": i == best,
                }
            )
    progress.update(len(points))
    write_json(
        out_json,
        {
            "tuning_trials": trials,
            "grid": {"penalties": values["dpadmm_penalties"], "step_sizes": values["dpadmm_step_sizes"]},
            "chosen": chosen,
        },
    )
    write_text(out_table, pd.DataFrame(rows).to_csv(index=False, lineterminator="\n"))
    log.info("tuned DP-ADMM on trials %s for %d grid points", trials, len(chosen))
