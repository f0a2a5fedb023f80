"""The ADMM penalty eta of Zhang & Zhu, which the paper does not give (G14).

With ``eta: tuned`` in the config, one non-private run per eta of ``eta_grid`` is made, and
:func:`select_eta` keeps the eta whose node average ends closest to the centralized optimum;
``eta.json`` records it and every main and rho-selection run reads it (:func:`run_etas`).

With ``eta: tuned_per_algorithm``, each algorithm runs every eta of the grid at its own rho and
C^R (at the rho selection's alpha and seeds), and :func:`select_eta_by_loss` keeps the eta with
the smallest mean final training loss: the protocol by which the paper chose rho (C Section 5.3,
"selected the value of rho that minimizes the empirical loss for a fixed alpha_p (0.3 in this
experiment)"), applied to eta. ``eta/<algorithm>.json`` records it and that algorithm's runs read it.
"""

from __future__ import annotations

import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dvp_pvp.grid import STUDY

CRITERION = "smallest relative gap of Z(f-bar(T)) to the centralized optimum (G14)"
LOSS_CRITERION = (
    "smallest mean over seeds of the final training loss (t = T + 1) at the algorithm's own rho and C^R and "
    "the rho selection's alpha (C Section 5.3's rho protocol applied to eta)"
)
CRITERIA = {"objective_gap": CRITERION, "final_loss": LOSS_CRITERION}


def select_eta(runs: list[str]) -> tuple[float, pd.DataFrame]:
    """Return the eta whose non-private run ends closest to the centralized optimum, and the table.

    The criterion (G14) is the relative objective gap of the node average at t = T (the last
    intermediate iteration); ties go to the smaller eta.
    """
    from dpdl.runs import read_run

    rows = []
    for path in runs:
        run = read_run(path, STUDY)
        params = run.provenance["params"]
        trace = run.trace.set_index("iteration")
        last = params["iterations"]
        rows.append(
            {
                "eta": params["eta"],
                "objective_gap_t_T": float(trace.loc[last, "objective_gap"]),
                "loss_t_T": float(trace.loc[last, "loss"]),
                "mer_t_T": float(trace.loc[last, "mer"]),
                "consensus_error_t_T": float(trace.loc[last, "consensus_error"]),
                "T": last,
            }
        )
    if not rows:
        raise ArtifactError("no eta-selection runs given; pass --runs")
    table = pd.DataFrame(rows).sort_values("eta", ignore_index=True)
    best = table["objective_gap_t_T"].idxmin()
    table["selected"] = table.index == best
    return float(table.loc[best, "eta"]), table


def select_eta_by_loss(runs: list[str]) -> tuple[float, pd.DataFrame]:
    """Return the eta whose runs' mean final training loss is smallest, and the table (one algorithm's runs).

    The criterion is the paper's for rho (C Section 5.3): the empirical loss of the final output
    (t = T + 1), here the mean over the runs' seeds at each eta; ties go to the smaller eta.

    Raises
    ------
    ArtifactError
        If no runs are given, or they mix algorithms or alphas.
    """
    from dpdl.runs import read_run

    rows = []
    for path in runs:
        run = read_run(path, STUDY)
        params = run.provenance["params"]
        trace = run.trace.set_index("iteration")
        final = params["iterations"] + 1
        rows.append(
            {
                "algorithm": run.provenance["algorithm"],
                "alpha": run.provenance["epsilon"],
                "eta": params["eta"],
                "seed": run.provenance["seed"],
                "loss_final": float(trace.loc[final, "loss"]),
                "mer_final": float(trace.loc[final, "mer"]),
                "T": params["iterations"],
            }
        )
    if not rows:
        raise ArtifactError("no eta-selection runs given; pass --runs")
    frame = pd.DataFrame(rows)
    for key in ("algorithm", "alpha"):
        if frame[key].astype(str).nunique() > 1:
            raise ArtifactError(
                f"the eta-selection runs mix {key}s {sorted(frame[key].astype(str).unique())}"
            )
    table = (
        frame.groupby("eta", sort=True)
        .agg(
            algorithm=("algorithm", "first"),
            alpha=("alpha", "first"),
            loss_final=("loss_final", "mean"),
            loss_final_sd=("loss_final", "std"),
            mer_final=("mer_final", "mean"),
            seeds=("seed", "nunique"),
            T=("T", "first"),
        )
        .reset_index()
    )
    best = table["loss_final"].idxmin()  # the first minimum: ties go to the smaller eta
    table["selected"] = table.index == best
    return float(table.loc[best, "eta"]), table


def selection_record(eta: float, table: pd.DataFrame, criterion: str = "objective_gap") -> dict:
    """Return the content of ``eta.json``: the eta, the criterion, the grid and whether eta is at its edge."""
    grid = table["eta"].tolist()
    at_edge = eta in (min(grid), max(grid)) and len(grid) > 1
    record = {"eta": eta, "criterion": CRITERIA[criterion], "grid": grid, "at_grid_edge": at_edge}
    if criterion == "final_loss":
        record["algorithm"] = str(table["algorithm"].iloc[0])
    return record


def selection_title(record: dict) -> str:
    """Return the title of the eta-selection table (with a warning when eta is at the grid's edge)."""
    if "algorithm" in record:
        title = (
            f"# Zhang & Zhu: eta selection on {record['algorithm']}'s own final training loss "
            "(G14, C Section 5.3)"
        )
    else:
        title = "# Zhang & Zhu: eta selection on the non-private run (G14)"
    if record["at_grid_edge"]:
        title += (
            f"\n\nThe selected eta {record['eta']:g} is at the edge of the grid; a wider grid may do better."
        )
    return title


def read_eta(path: str) -> float:
    """Return the eta recorded in ``eta.json``."""
    from dpdl.io import read_json

    record = read_json(path)
    if not isinstance(record, dict) or not isinstance(record.get("eta"), (int, float)):
        raise ArtifactError(
            f"{path}: expected a JSON object with a numeric 'eta'; rerun dpdl dvp_pvp select-eta"
        )
    return float(record["eta"])


def run_etas(values: dict, etas: list[float] | None, eta_file: str | None) -> list[tuple[float, str]]:
    """Return the etas a run job uses, each with where it came from (the run's ``eta_source``).

    ``etas`` (the eta-selection grid) comes first, then the tuned eta of ``eta_file``, then a
    fixed eta of the settings.
    """
    if etas:
        return [(eta, "eta selection grid") for eta in etas]
    if eta_file is not None:
        return [(read_eta(eta_file), f"tuned ({eta_file})")]
    if values["eta"] not in ("tuned", "tuned_per_algorithm"):
        return [(float(values["eta"]), "config")]
    raise ConfigError(
        f"eta is {values['eta']!r} in the settings: pass --eta-file (results/dvp_pvp/eta.json, or "
        "results/dvp_pvp/eta/<algorithm>.json when tuned per algorithm) or --etas"
    )
