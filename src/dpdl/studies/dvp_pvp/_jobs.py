"""The run grid: which runs a config implies, how the run jobs are cut, and what each figure and table reads.

``values`` below is always the dvp_pvp section of a config (:func:`._settings.settings`).
"""

from __future__ import annotations

from dpdl.errors import ConfigError
from dpdl.studies.common import format_number
from dpdl.studies.dvp_pvp._layout import (
    ALGORITHMS,
    FIGURES,
    PRIVATE,
    RUNS,
    TABLES,
    aggregate_path,
    eta_path,
    eta_run_path,
    own_eta_path,
    own_eta_run_path,
    own_eta_table,
    rho_run_path,
    run_path,
)
from dpdl.studies.dvp_pvp._settings import ETA_PER_ALGORITHM, ETA_TUNED, all_alphas

# ------------------------------------------------------------------------------ runs


def main_runs(
    values: dict, algorithms: tuple[str, ...] = ALGORITHMS, alphas: list[float] | None = None
) -> list[str]:
    """Return the main-grid runs of ``algorithms`` at ``alphas`` (default: every alpha), all seeds."""
    alphas = all_alphas(values) if alphas is None else alphas
    paths = []
    for algorithm in algorithms:
        levels = [None] if algorithm == "nonprivate" else alphas
        paths += [run_path(algorithm, alpha, seed) for alpha in levels for seed in range(values["seeds"])]
    return paths


def rho_runs(values: dict) -> list[str]:
    """Return every rho-selection run."""
    selection = values["rho_selection"]
    return [
        rho_run_path(algorithm, exponent, seed)
        for algorithm in ALGORITHMS
        for exponent in selection["exponents"]
        for seed in range(selection["seeds"])
    ]


def eta_runs(values: dict) -> list[str]:
    """Return the eta-selection runs the config's eta mode implies.

    Those are the non-private grid (``tuned``), every algorithm's own grid
    (``tuned_per_algorithm``) or none (eta fixed in the config).
    """
    if values["eta"] == ETA_PER_ALGORITHM:
        return [path for algorithm in ALGORITHMS for path in own_eta_runs(values, algorithm)]
    if values["eta"] == ETA_TUNED:
        return eta_job_outputs(values)
    return []


def own_eta_runs(values: dict, algorithm: str) -> list[str]:
    """Return the runs of one algorithm's own eta selection: every eta of the grid and rho-selection seed."""
    seeds = range(values["rho_selection"]["seeds"])
    return [own_eta_run_path(algorithm, eta, seed) for eta in values["eta_grid"] for seed in seeds]


# ------------------------------------------------------------------------------ run jobs


def own_eta_job_outputs(values: dict) -> list[str]:
    """Return the outputs of one algorithm's own eta-selection job (wildcard algorithm), eta-major."""
    return [
        str(RUNS / "eta_selection_own" / "{algorithm}" / f"eta{format_number(eta)}" / f"seed{seed}.npz")
        for eta in values["eta_grid"]
        for seed in range(values["rho_selection"]["seeds"])
    ]


def eta_job_outputs(values: dict) -> list[str]:
    """Return the outputs of the eta-selection job: one run per eta of the grid, in grid order."""
    return [eta_run_path(eta) for eta in values["eta_grid"]]


def run_job_outputs(values: dict) -> list[str]:
    """Return the outputs of one main-grid job (wildcards algorithm, alpha): one run per seed."""
    return [str(RUNS / "{algorithm}" / "eps{alpha}" / f"seed{seed}.npz") for seed in range(values["seeds"])]


def rho_job_outputs(values: dict) -> list[str]:
    """Return the outputs of one rho-selection job (wildcard algorithm), exponent-major."""
    selection = values["rho_selection"]
    return [
        str(RUNS / "rho_selection" / "{algorithm}" / f"rho{format_number(exponent)}" / f"seed{seed}.npz")
        for exponent in selection["exponents"]
        for seed in range(selection["seeds"])
    ]


def _seed_list(count: int) -> str:
    """The seeds 0..count-1 as ``--seeds`` takes them."""
    return " ".join(map(str, range(count)))


def job_arguments(values: dict, job: str) -> str:
    """Return the grid options of a run job: ``--seeds`` and the rho exponents or etas it runs."""
    etas = " ".join(format_number(eta) for eta in values["eta_grid"])
    if job == "eta":
        return f"--seeds 0 --etas {etas}"
    if job == "eta_own":
        return f"--seeds {_seed_list(values['rho_selection']['seeds'])} --etas {etas}"
    if job == "rho":
        selection = values["rho_selection"]
        exponents = " ".join(format_number(e) for e in selection["exponents"])
        return f"--seeds {_seed_list(selection['seeds'])} --rho-exponents {exponents}"
    return f"--seeds {_seed_list(values['seeds'])}"


def eta_inputs(values: dict, algorithm: str | None = None) -> list[str]:
    """Return the selected-eta file the runs of ``algorithm`` read, if eta is tuned.

    That is ``[eta.json]`` when eta is tuned on the non-private run, ``[eta/<algorithm>.json]``
    when tuned per algorithm, else ``[]``.
    """
    if values["eta"] == ETA_PER_ALGORITHM:
        if algorithm is None:
            raise ConfigError("eta is tuned per algorithm: the selected eta depends on the algorithm")
        return [own_eta_path(algorithm)]
    if values["eta"] == ETA_TUNED:
        return [eta_path()]
    return []


def rho_selection_alpha(values: dict, algorithm: str) -> str:
    """Return the ``--alpha`` of a rho-selection run (the selection's alpha; 'inf' if non-private)."""
    if algorithm == "nonprivate":
        return "inf"
    return format_number(values["rho_selection"]["alpha"])


# ------------------------------------------------------------------------------ what figures and tables read


def figure_runs(values: dict, figure: str) -> list[str]:
    """Return the runs one figure's aggregate reads."""
    if figure == "convergence":
        return main_runs(values, alphas=sorted(values["convergence_alphas"]))
    if figure in ("tradeoff_dvp", "tradeoff_pvp"):
        return main_runs(values, (figure.removeprefix("tradeoff_"),), sorted(values["alphas"]))
    if figure in ("final_risk", "mer"):
        return main_runs(values, alphas=sorted(values["alphas"]))
    if figure == "rho_selection":
        return rho_runs(values)
    raise ConfigError(f"unknown dvp_pvp figure {figure!r}; expected one of {', '.join(FIGURES)}")


def table_names(values: dict) -> list[str]:
    """Return the tables this config writes.

    ``eta_selection`` is among them when eta is tuned on the non-private run, and
    ``eta_selection_<algorithm>`` for each algorithm when it is tuned per algorithm.
    """
    names = [name for name in TABLES if name != "eta_selection" or values["eta"] == ETA_TUNED]
    if values["eta"] == ETA_PER_ALGORITHM:
        names += [own_eta_table(algorithm) for algorithm in ALGORITHMS]
    return names


def table_inputs(values: dict, table: str) -> list[str]:
    """Return the files one table is computed from."""
    if table == "table1_rho":
        return [aggregate_path("rho_selection")]
    if table == "table2_cr":
        smallest = min(all_alphas(values))
        alphas = {algorithm: None if algorithm == "nonprivate" else smallest for algorithm in ALGORITHMS}
        return [run_path(algorithm, alpha, 0) for algorithm, alpha in alphas.items()]
    if table == "optimal_alpha":
        return [aggregate_path("tradeoff_dvp"), aggregate_path("tradeoff_pvp")]
    if table in ("calibration", "privacy"):
        return main_runs(values, PRIVATE)
    if table == "eta_selection":
        return eta_runs(values)
    raise ConfigError(f"unknown dvp_pvp table {table!r}; expected one of {', '.join(TABLES)}")
