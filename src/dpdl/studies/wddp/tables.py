"""Table 1 of Kang, Liu & Wang: the paper's noise and risk bounds and the sigma of every experiment cell.

Also the exact checks of the noise-bound factor and of the runs' privacy against the per-seed
tables.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from dpdl.studies.wddp.grid import (
    NONPRIVATE,
    PRIVATE_METHODS,
    UNEVENNESS_SETTINGS,
    batch_name,
    cell_name,
    unevenness_values,
)
from dpdl.studies.wddp.run import BUDGET_RELATIVE_SLACK, LIPSCHITZ, cell_partitions, noise_std, run_privacy
from dpdl.verdicts.inputs import Outcome

SIZE_RELATIVE_SLACK = 1e-9  # sigma ratios are exact up to floating point

# Kang, Liu & Wang, Table 1 (row labels inferred, wddp.md 3): method, noise bound, excess-risk
# bound, distributed, non-convex, and the algorithm of ours that implements the row ("" if none).
TABLE1_BOUNDS = (
    (
        "Pathak, Rane & Raj 2010",
        "None",
        "O((m−1)²(λ+1)/(n_(1)² λ²) + p²(λ+1)/(n_(1)² ε² λ²) log²(p/δ) + p(m−1)(λ+1)/(n_(1)² ε λ²) log(p/δ))",
        "Yes",
        "No",
        "",
    ),
    (
        "Jayaraman et al. 2018",
        "O(G² T log(1/δ) / (m² n_(1)² ε²))",
        "O(p G² L log²(m n_(1)) log(1/δ) / (m² n_(1)² λ² ε²))",
        "Yes",
        "No",
        "dist_avg",
    ),
    (
        "Zhang et al. 2017 (RRPSGD)",
        "O((p G² log(n/δ) log(1/δ) + G² ε²) / ε²)",
        "O(G √(p log(n/δ) log(1/δ)) D / (n ε))",
        "No",
        "Yes",
        "",
    ),
    (
        "Wang, Ye & Xu 2017",
        "O(G² T ln(1/δ) / (n² ε²))",
        "O(p G² log²(n) ln(1/δ) / (n² ε²))",
        "No",
        "Yes",
        "central",
    ),
    ("WD-DP (ours)", "O(G² T ln(1/δ) / (n² ε²))", "O(p G² log(n) ln(1/δ) / (n² ε²))", "Yes", "Yes", "wddp"),
)


def table1(settings: Mapping, rows_train: Mapping[str, int]) -> pd.DataFrame:
    """Table 1: the paper's bounds (text) and, for every experiment cell, the sigma we compute.

    One row per method of the paper's Table 1 without numbers (``cell`` = "bound"), then one
    row per (dataset, experiment cell, method) with n, n_(1) and sigma over the repetitions
    (they differ only through the random partition), the noise ratio n / (m n_(1)), the noise
    multiplier sigma / sensitivity and the composed epsilon of one run (RDP and PLD, at delta).
    """
    rows = []
    bound_of = {}
    for method, noise, risk, distributed, nonconvex, ours in TABLE1_BOUNDS:
        rows.append(
            {
                "cell": "bound",
                "method": method,
                "noise_bound": noise,
                "risk_bound": risk,
                "distributed": distributed,
                "non_convex": nonconvex,
            }
        )
        if ours:
            bound_of[ours] = (method, noise)
    for dataset, n_rows in rows_train.items():
        cells = [("epsilon", m, eps, None) for m in settings["clients"] for eps in settings["epsilons"]]
        cells += [
            ("unevenness", m, eps, u)
            for m, eps, _ in UNEVENNESS_SETTINGS
            for u in unevenness_values(settings, dataset)
        ]
        for experiment, clients, epsilon, u in cells:
            sizes = [  # n_j of each client, per repetition
                np.array([len(s) for s in shards])
                for _, shards in cell_partitions(settings, dataset, n_rows, experiment, clients, u)
            ]
            cell = f"{dataset} {batch_name(experiment, clients, epsilon)} {cell_name(experiment, epsilon, u)}"
            for method in PRIVATE_METHODS:
                sigmas = [noise_std(settings, method, epsilon, s)[0] for s in sizes]
                worst = int(np.argmax(sigmas))
                privacy = run_privacy(settings, method, sigmas[worst], sizes[worst])
                label, noise = bound_of[method]
                rows.append(
                    {
                        "cell": cell,
                        "method": label,
                        "algorithm": method,
                        "noise_bound": noise,
                        "dataset": dataset,
                        "experiment": experiment,
                        "clients": clients,
                        "epsilon": epsilon,
                        "unevenness": u,
                        "delta": settings["delta"],
                        "iterations": settings["iterations"],
                        "n": n_rows,
                        "n_min_min": int(min(s.min() for s in sizes)),
                        "n_min_max": int(max(s.min() for s in sizes)),
                        "noise_ratio_mean": float(np.mean([s.sum() / (len(s) * s.min()) for s in sizes])),
                        "sigma_mean": float(np.mean(sigmas)),
                        "sigma_min": float(min(sigmas)),
                        "sigma_max": float(max(sigmas)),
                        "noise_multiplier": privacy["noise_scales"][0]["noise_multiplier"],
                        "eps_composed_rdp": privacy["eps_composed_rdp"],
                        "eps_composed_pld": privacy["eps_composed_pld"],
                    }
                )
    table = pd.DataFrame(rows)
    integers = ["clients", "unevenness", "iterations", "n", "n_min_min", "n_min_max"]
    return table.astype({c: "Int64" for c in integers})  # empty in the bound rows, integers elsewhere


def table1_title(settings: Mapping) -> str:
    """The Markdown heading and note of Table 1: the settings its sigma columns were computed at."""
    return (
        "# Kang, Liu & Wang, Table 1: noise and excess-risk bounds (rows `bound`), and the σ we compute\n\n"
        f"Calibration `{settings['calibration']}`, aggregation `{settings['aggregation']}`, δ = "
        f"{settings['delta']}, T = {settings['iterations']}, G = {LIPSCHITZ:g}; σ over "
        f"{settings['seeds']} repetitions (random partitions); "
        "composed ε of the run with the largest σ."
    )


# ---------------------------------------------------------------------------------------------
# Table 1's noise bound and the privacy of the runs, checked exactly (two of the claims)


def _one_row_per_run(table: pd.DataFrame) -> pd.DataFrame:
    """Each run once (accuracy and gap figures of one batch share their runs); u = 0 in Experiment A."""
    rows = table[table["algorithm"] != NONPRIVATE].assign(unevenness=lambda t: t["unevenness"].fillna(0))
    return rows.drop_duplicates(["dataset", "clients", "epsilon", "unevenness", "algorithm", "seed"])


def noise_bound_outcome(table: pd.DataFrame) -> Outcome:
    """Table 1's noise-bound factor in every run's partition (the claim ``wddp.noise_bound_factor``).

    sigma_wddp^2 / sigma_dist_avg^2 = (m n_(1) / n)^2 <= 1 and sigma_central = sigma_wddp; ``table``
    holds per-seed rows.
    """
    rows = _one_row_per_run(table)
    keys = ["dataset", "clients", "epsilon", "unevenness", "seed"]
    sigma = rows.pivot_table(index=keys, columns="algorithm", values="sigma", aggfunc="first")
    ratio = rows[rows["algorithm"] == "wddp"].set_index(keys)["noise_ratio"]
    both = sigma.join(ratio, how="inner").dropna()
    if both.empty or not {"wddp", "dist_avg", "central"} <= set(sigma.columns):
        return Outcome(False, "no partition with all three methods", "needs wddp, dist_avg and central runs")
    factor = (both["wddp"] / both["dist_avg"]) ** 2
    paper = 1 / both["noise_ratio"] ** 2  # (m n_(1) / n)^2
    deviation = float((factor / paper - 1).abs().max())
    central = float((both["central"] / both["wddp"] - 1).abs().max())
    paper_at_most_one = bool((paper <= 1 + 1e-12).all())
    holds = deviation <= SIZE_RELATIVE_SLACK and central <= SIZE_RELATIVE_SLACK and paper_at_most_one
    detail = (
        f"{len(both)} partitions; factor (m n_(1)/n)^2 from {paper.min():.4g} to {paper.max():.4g}; "
        f"largest relative deviation of sigma_wddp^2/sigma_dist_avg^2 from it {deviation:.2e}, "
        f"of sigma_central/sigma_wddp from 1 {central:.2e}"
    )
    return Outcome(holds, f"max deviation {max(deviation, central):.1e}", detail)


def budget_outcome(table: pd.DataFrame) -> Outcome:
    """Every run's composed epsilon within its nominal epsilon (the claim ``wddp.privacy_within_budget``).

    The composed epsilon is the tighter of RDP and PLD, both upper bounds; ``table`` holds per-seed
    rows.
    """
    rows = _one_row_per_run(table)
    if rows.empty:
        return Outcome(False, "no runs", "no private run in the tables")
    spent = np.minimum(rows["eps_composed_rdp"].astype(float), rows["eps_composed_pld"].astype(float))
    share = spent / rows["epsilon"].astype(float)
    over = rows[share > 1 + BUDGET_RELATIVE_SLACK]
    worst = rows.loc[share.idxmax()]
    detail = (
        f"{len(rows)} runs at delta {rows['delta'].max():g}; largest composed / nominal epsilon "
        f"{share.max():.6g} ({worst['algorithm']}, {worst['dataset']}, m={worst['clients']}, "
        f"eps={worst['epsilon']:g}); {len(over)} runs over budget"
    )
    return Outcome(over.empty, f"max spent/nominal {share.max():.4g}", detail)
