"""The dvp_pvp grid: the settings, runs, paths and Snakemake input functions a config implies.

Gap numbers (G#) and outputs (O#) refer to ``notes/zhang_zhu.md``; J(n) / C(n) are equations of
the journal / conference version. The rule file ``workflow/rules/dvp_pvp.smk`` reads its outputs,
input functions and ``--settings`` from here; :func:`targets` and :func:`runs` are the study's
part of the default target, ``dpdl status`` and ``dpdl check``.
"""

from __future__ import annotations

import json
from pathlib import Path

from dpdl.errors import ConfigError
from dpdl.studies.common import format_number, parse_settings

STUDY = "dvp_pvp"
DATASET = "dvp_pvp/adult"
ALGORITHMS = ("nonprivate", "dvp", "pvp")
PRIVATE = ("dvp", "pvp")
ALGORITHM_NAMES = {"nonprivate": "non-private (Alg. 1)", "dvp": "DVP (Alg. 2)", "pvp": "PVP (Alg. 3)"}
FIGURES = ("convergence", "tradeoff_dvp", "tradeoff_pvp", "final_risk", "mer", "rho_selection")
TABLES = ("table1_rho", "table2_cr", "optimal_alpha", "calibration", "privacy", "eta_selection")
RESULTS = Path("results/dvp_pvp")
RUNS = RESULTS / "runs" / "adult"
TABLES_DIR = Path("results/tables/dvp_pvp")
FIGURES_DIR = Path("figures/dvp_pvp")
CLAIMS_DIR = Path("results/claims")
# Every key of the dvp_pvp config section (workflow/schemas/dvp_pvp.schema.yaml fills them all in):
# the --settings of the aggregate, table and claims steps.
SETTINGS_KEYS = (
    "agents",
    "partition_seed",
    "row_norm",
    "graph",
    "edge_probability",
    "graph_seed",
    "alphas",
    "convergence_alphas",
    "seeds",
    "iterations",
    "tradeoff_iterations",
    "mer_iteration",
    "rho",
    "c_r",
    "eta",
    "eta_grid",
    "rho_selection",
    "dvp_zeta_mode",
    "pvp_center",
    "init",
    "init_scale",
    "evaluation",
    "loss_unit",
    "pvp_error_of",
    "accounting_delta",
)
# Config keys a run depends on (the --settings of run jobs; other keys never rerun a run).
RUN_KEYS = (
    "agents",
    "partition_seed",
    "row_norm",
    "graph",
    "edge_probability",
    "graph_seed",
    "iterations",
    "rho",
    "c_r",
    "eta",
    "dvp_zeta_mode",
    "pvp_center",
    "init",
    "init_scale",
    "evaluation",
    "accounting_delta",
)
SWITCH_KEYS = ("dvp_zeta_mode", "pvp_center", "graph", "agents", "evaluation", "init", "row_norm", "eta")
# Switches of the aggregates (loss_unit) and the claims (pvp_error_of): in the scorecard's provenance, not a run's.
AGGREGATE_SWITCH_KEYS = ("loss_unit", "pvp_error_of")
CLAIMS_STEP_KEYS = ("pvp_error_of",)  # read by the claims step alone: a reading of these needs no other table
# The eta modes of the config (G14): one eta tuned on the non-private run for all three algorithms
# (the note's resolution), or each algorithm's own (C Section 5.3's rho protocol applied to eta).
ETA_TUNED = "tuned"
ETA_PER_ALGORITHM = "tuned_per_algorithm"
# [PAPER] C Tables 1-2 and the paper-constant reference values derived in zhang_zhu.md 6.4.
PAPER_RHO_EXPONENT = {"nonprivate": -10.0, "dvp": -2.5, "pvp": -1.0}
PAPER_C_R = {"nonprivate": 1750, "dvp": 1750, "pvp": 146}
PAPER_OPTIMAL_ALPHA = {"dvp": 0.1422, "pvp": 0.4533}


# ------------------------------------------------------------------------------ settings


def settings(config: dict) -> dict:
    """The dvp_pvp config section; ConfigError if a trade-off or MER iteration exceeds ``iterations``."""
    values = dict(config[STUDY])
    late = [t for t in values["tradeoff_iterations"] if t > values["iterations"]]
    if late:
        raise ConfigError(
            f"dvp_pvp.tradeoff_iterations {late} exceed dvp_pvp.iterations ({values['iterations']}); "
            "lower them or raise iterations"
        )
    if values["mer_iteration"] > values["iterations"]:
        raise ConfigError(
            f"dvp_pvp.mer_iteration ({values['mer_iteration']}) exceeds dvp_pvp.iterations "
            f"({values['iterations']}); lower it or raise iterations"
        )
    return values


def run_settings(config: dict) -> dict:
    """Return the config values a run depends on (the run jobs' ``--settings`` JSON)."""
    return {key: settings(config)[key] for key in RUN_KEYS}


def settings_json(config: dict) -> str:
    """Return the dvp_pvp section as JSON (``--settings`` of the aggregate, table and claims steps)."""
    return json.dumps(settings(config), sort_keys=True)


def run_settings_json(config: dict) -> str:
    """Return :func:`run_settings` as JSON (``--settings`` of the run jobs; a change reruns them)."""
    return json.dumps(run_settings(config), sort_keys=True)


def parse_section_settings(text: str) -> dict:
    """Parse ``--settings`` of the aggregate, table and claims steps: the whole section."""
    return parse_settings(text, SETTINGS_KEYS, STUDY, "dpdl.studies.dvp_pvp.grid.settings_json(config)")


def parse_run_settings(text: str) -> dict:
    """Parse ``--settings`` of a run job: exactly the keys of :data:`RUN_KEYS`."""
    return parse_settings(text, RUN_KEYS, STUDY, "dpdl.studies.dvp_pvp.grid.run_settings_json(config)")


def switches(values: dict) -> dict:
    """Return the fidelity switches in force (for run provenance and the scorecard).

    ``values`` is the run settings (run provenance: :data:`SWITCH_KEYS`) or the whole section
    (the scorecard: also :data:`AGGREGATE_SWITCH_KEYS`).
    """
    eta_mode = values["eta"] if eta_tuned(values) else f"fixed {values['eta']}"
    found = {key: values[key] if key != "eta" else eta_mode for key in SWITCH_KEYS}
    return found | {key: values[key] for key in AGGREGATE_SWITCH_KEYS if key in values}


def eta_tuned(values: dict) -> bool:
    """Whether eta is selected by a grid of runs (either mode of G14) rather than fixed in the config."""
    return values["eta"] in (ETA_TUNED, ETA_PER_ALGORITHM)


def all_alphas(values: dict) -> list[float]:
    """Return every alpha the main grid runs: the figures' alphas and the convergence panels'."""
    return sorted(set(values["alphas"]) | set(values["convergence_alphas"]))


# ------------------------------------------------------------------------------ paths


def run_path(algorithm: str, alpha: float | None, seed: int) -> str:
    """Return the path of one main-grid run (``alpha`` None for the non-private algorithm)."""
    return str(RUNS / algorithm / f"eps{format_number(alpha)}" / f"seed{seed}.npz")


def rho_run_path(algorithm: str, exponent: float, seed: int) -> str:
    """Return the path of one rho-selection run (rho = 10^exponent)."""
    return str(RUNS / "rho_selection" / algorithm / f"rho{format_number(exponent)}" / f"seed{seed}.npz")


def eta_run_path(eta: float) -> str:
    """Return the path of the non-private eta-selection run at ``eta`` (seed 0)."""
    return str(RUNS / "eta_selection" / "nonprivate" / f"eta{format_number(eta)}" / "seed0.npz")


def eta_path() -> str:
    """Return the path of the selected eta (JSON)."""
    return str(RESULTS / "eta.json")


def own_eta_run_path(algorithm: str, eta: float, seed: int) -> str:
    """Return the path of one run of an algorithm's own eta selection (``eta: tuned_per_algorithm``)."""
    return str(RUNS / "eta_selection_own" / algorithm / f"eta{format_number(eta)}" / f"seed{seed}.npz")


def own_eta_path(algorithm: str) -> str:
    """Return the path of an algorithm's own selected eta (JSON, ``eta: tuned_per_algorithm``)."""
    return str(RESULTS / "eta" / f"{algorithm}.json")


def own_eta_table(algorithm: str) -> str:
    """Return the name of an algorithm's own eta-selection table (``eta: tuned_per_algorithm``)."""
    return f"eta_selection_{algorithm}"


def aggregate_path(name: str) -> str:
    """Return the path of an aggregate CSV."""
    return str(RESULTS / "aggregates" / f"{name}.csv")


def seeds_path(name: str) -> str:
    """Return the path of the per-seed table written beside the aggregate ``name`` (what the claims read)."""
    return str(RESULTS / "aggregates" / f"{name}_seeds.csv")


def figure_path(name: str, ext: str) -> str:
    """Return the path of a figure file (``png`` or ``pdf``)."""
    return str(FIGURES_DIR / f"{name}.{ext}")


def table_path(name: str, ext: str) -> str:
    """Return the path of a table file (``csv`` or ``md``)."""
    return str(TABLES_DIR / f"{name}.{ext}")


def claims_path(ext: str) -> str:
    """Return the path of the scorecard (``csv`` or ``md``)."""
    return str(CLAIMS_DIR / f"{STUDY}.{ext}")


# ------------------------------------------------------------------------------ runs and jobs


def main_runs(values: dict, algorithms: tuple[str, ...] = ALGORITHMS, alphas: list[float] | None = None) -> list[str]:
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
    """Return the eta-selection runs: the non-private grid (``tuned``), every algorithm's own grid
    (``tuned_per_algorithm``) or none (eta fixed in the config)."""
    if values["eta"] == ETA_PER_ALGORITHM:
        return [path for algorithm in ALGORITHMS for path in own_eta_runs(values, algorithm)]
    return eta_job_outputs(values) if values["eta"] == ETA_TUNED else []


def own_eta_runs(values: dict, algorithm: str) -> list[str]:
    """Return the runs of one algorithm's own eta selection: every eta of the grid and rho-selection seed."""
    seeds = range(values["rho_selection"]["seeds"])
    return [own_eta_run_path(algorithm, eta, seed) for eta in values["eta_grid"] for seed in seeds]


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


def job_arguments(values: dict, job: str) -> str:
    """Return the grid options of a run job: ``--seeds`` and the rho exponents or etas it runs."""
    etas = " ".join(format_number(eta) for eta in values["eta_grid"])
    if job == "eta":
        return f"--seeds 0 --etas {etas}"
    if job == "eta_own":
        return f"--seeds {' '.join(map(str, range(values['rho_selection']['seeds'])))} --etas {etas}"
    if job == "rho":
        selection = values["rho_selection"]
        exponents = " ".join(format_number(e) for e in selection["exponents"])
        return f"--seeds {' '.join(map(str, range(selection['seeds'])))} --rho-exponents {exponents}"
    return f"--seeds {' '.join(map(str, range(values['seeds'])))}"


def eta_inputs(values: dict, algorithm: str | None = None) -> list[str]:
    """Return the selected-eta file the runs of ``algorithm`` read: ``[eta.json]`` when eta is tuned
    on the non-private run, ``[eta/<algorithm>.json]`` when tuned per algorithm, else ``[]``."""
    if values["eta"] == ETA_PER_ALGORITHM:
        if algorithm is None:
            raise ConfigError("eta is tuned per algorithm: the selected eta depends on the algorithm")
        return [own_eta_path(algorithm)]
    return [eta_path()] if values["eta"] == ETA_TUNED else []


def rho_selection_alpha(values: dict, algorithm: str) -> str:
    """Return the ``--alpha`` of a rho-selection run (the selection's alpha; 'inf' if non-private)."""
    return "inf" if algorithm == "nonprivate" else format_number(values["rho_selection"]["alpha"])


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
    """Return the tables this config writes (eta_selection when eta is tuned on the non-private run,
    eta_selection_<algorithm> for each algorithm when it is tuned per algorithm)."""
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
        return [run_path(algorithm, None if algorithm == "nonprivate" else smallest, 0) for algorithm in ALGORITHMS]
    if table == "optimal_alpha":
        return [aggregate_path("tradeoff_dvp"), aggregate_path("tradeoff_pvp")]
    if table in ("calibration", "privacy"):
        return main_runs(values, PRIVATE)
    if table == "eta_selection":
        return eta_runs(values)
    raise ConfigError(f"unknown dvp_pvp table {table!r}; expected one of {', '.join(TABLES)}")


def claim_inputs() -> dict[str, str]:
    """Return the per-seed tables the claims are judged on, by name (one per figure)."""
    return {name: seeds_path(name) for name in FIGURES}


def claim_scale(config: dict) -> dict[str, int]:
    """Return the config values the claims' ``needs`` are compared with."""
    values = settings(config)
    return {
        "iterations": values["iterations"],
        "seeds": values["seeds"],
        "alphas": len(values["alphas"]),
        "rho_seeds": values["rho_selection"]["seeds"],
        "rho_grid": len(values["rho_selection"]["exponents"]),
    }


def claim_scale_json(config: dict) -> str:
    """Return :func:`claim_scale` as JSON (``--scale`` of the claims step)."""
    return json.dumps(claim_scale(config), sort_keys=True)


def claims_aggregates_option() -> str:
    """The claims step's ``--aggregates NAME=CSV ...`` items."""
    return " ".join(f"{name}={path}" for name, path in claim_inputs().items())


# ------------------------------------------------------------------------------ Snakemake input functions


def eta_file_input(values: dict, wildcards) -> list[str]:
    """Input function: the selected eta when eta is tuned (read by every main and rho run; wildcard ``algorithm``)."""
    return eta_inputs(values, wildcards.algorithm)


def eta_option(values: dict, wildcards) -> str:
    """Params function: ``--eta-file <eta.json>`` when eta is tuned (a fixed eta is in the settings)."""
    return " ".join(f"--eta-file {path}" for path in eta_inputs(values, wildcards.algorithm))


def eta_alpha_param(values: dict, wildcards) -> str:
    """Params function: the ``--alpha`` of an algorithm's own eta selection (the rho selection's alpha)."""
    return rho_selection_alpha(values, wildcards.algorithm)


def own_eta_runs_input(values: dict, wildcards) -> list[str]:
    """Input function: the runs of one algorithm's own eta selection (wildcard ``algorithm``)."""
    return own_eta_runs(values, wildcards.algorithm)


def rho_alpha_param(values: dict, wildcards) -> str:
    """Params function: the ``--alpha`` of a rho-selection job (wildcard ``algorithm``)."""
    return rho_selection_alpha(values, wildcards.algorithm)


def eta_runs_input(values: dict, wildcards) -> list[str]:
    """Input function: the non-private runs of the eta grid."""
    return eta_runs(values)


def figure_runs_input(values: dict, wildcards) -> list[str]:
    """Input function: the runs one figure's aggregate reads (wildcard ``figure``)."""
    return figure_runs(values, wildcards.figure)


def table_input(values: dict, wildcards) -> list[str]:
    """Input function: the aggregates or runs one table is computed from (wildcard ``table``)."""
    return table_inputs(values, wildcards.table)


# ------------------------------------------------------------------------------ the Study protocol


def targets(config: dict, buildable: set[str]) -> list[str]:
    """Return every artifact the study promises for ``config`` (none without the Adult data)."""
    if DATASET not in buildable:
        return []
    values = settings(config)
    paths = [figure_path(name, ext) for name in FIGURES for ext in ("png", "pdf")]
    paths += [table_path(name, ext) for name in table_names(values) for ext in ("csv", "md")]
    paths += [claims_path(ext) for ext in ("csv", "md")]
    return paths


def runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact the study makes for ``config``: main grid, rho and eta selection."""
    if DATASET not in buildable:
        return []
    values = settings(config)
    return main_runs(values) + rho_runs(values) + eta_runs(values)
