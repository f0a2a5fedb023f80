"""The dvp_pvp grid as the rule file reads it: the claims step's inputs, Snakemake input functions, targets.

Gap numbers (G#) and outputs (O#) refer to ``notes/zhang_zhu.md``; J(n) / C(n) are equations of
the journal / conference version. The rule file ``workflow/rules/dvp_pvp.smk`` reads its outputs,
input functions and ``--settings`` from here; :func:`targets` and :func:`runs` are the study's
part of the default target, ``dpdl status`` and ``dpdl check``. What they are built from lives in
private modules, one concern each, and is re-exported below:

- :mod:`._layout`: the algorithms, figures and tables, and the path of every run and output;
- :mod:`._settings`: the section's checks, the ``--settings`` each step takes, the switches in force;
- :mod:`._jobs`: the runs a config implies, the run jobs and what each figure and table reads;
- :mod:`._paper`: the values the paper prints.
"""

from __future__ import annotations

import json

# The names the rule file, the config validation, the other modules and the tests read from ``grid``.
from dpdl.data import prepared
from dpdl.data.prepared import PreparedDataset
from dpdl.studies.dvp_pvp._jobs import (  # noqa: F401
    eta_inputs,
    eta_job_outputs,
    eta_runs,
    figure_runs,
    job_arguments,
    main_runs,
    own_eta_job_outputs,
    own_eta_runs,
    rho_job_outputs,
    rho_runs,
    rho_selection_alpha,
    run_job_outputs,
    table_inputs,
    table_names,
)
from dpdl.studies.dvp_pvp._layout import (  # noqa: F401
    ALGORITHM_NAMES,
    ALGORITHMS,
    DATASET,
    FIGURES,
    FIGURES_DIR,
    PRIVATE,
    REFERENCE,
    RESULTS,
    RUNS,
    STUDY,
    TABLES,
    TABLES_DIR,
    TITLE,
    aggregate_path,
    claims_path,
    eta_path,
    eta_run_path,
    figure_path,
    own_eta_path,
    own_eta_run_path,
    own_eta_table,
    rho_run_path,
    run_path,
    seeds_path,
    table_path,
)
from dpdl.studies.dvp_pvp._paper import PAPER_C_R, PAPER_OPTIMAL_ALPHA, PAPER_RHO_EXPONENT  # noqa: F401
from dpdl.studies.dvp_pvp._settings import (  # noqa: F401
    AGGREGATE_SWITCH_KEYS,
    CLAIMS_STEP_KEYS,
    ETA_PER_ALGORITHM,
    ETA_TUNED,
    RUN_KEYS,
    SETTINGS_KEYS,
    SWITCH_KEYS,
    all_alphas,
    check_config,
    eta_tuned,
    parse_run_settings,
    parse_section_settings,
    run_settings,
    run_settings_json,
    settings,
    settings_json,
    switches,
)

CARD_TABLES = {}  # no table is written from the dataset's card alone
SHARED_SEEDS = (
    True  # both algorithms run the seeds 0..seeds-1 at every alpha: a trend is judged within seeds, and a
)
# trend claim's extractor that hands the engine series without seed ids is refused
# the prepared datasets it reads (dpdl.data.prepared): each option -> the config key it comes from
PREPARED = (
    PreparedDataset(
        STUDY,
        "adult",
        build=prepared.build_dvp_pvp_adult,
        options={key: f"dvp_pvp.{key}" for key in ("agents", "partition_seed", "row_norm")},
        files=prepared.adult_files,
    ),
)

# ------------------------------------------------------------------------------ the claims step


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
    """Input function: the selected eta when eta is tuned.

    Every main and rho run reads it; its wildcard is ``algorithm``.
    """
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


# the claims' tables stacked from figures' tables
CLAIM_STACKS = {"tradeoff": ("tradeoff_dvp", "tradeoff_pvp")}


def table_runs(config: dict, table: str) -> list[str]:
    """Every run artifact the table ``table`` reads for ``config``.

    A figure's (or its ``_seeds`` twin's) runs; ``tradeoff``, the claims' stack of both trade-off figures
    (:func:`dpdl.studies.dvp_pvp.extract.claim_tables`), theirs; none for another table.
    """
    name, values = table.removesuffix("_seeds"), settings(config)
    figures = CLAIM_STACKS.get(name, (name,) if name in FIGURES else ())
    return list(dict.fromkeys(path for figure in figures for path in figure_runs(values, figure)))


def run_work(config: dict, path: str) -> tuple[str, int]:
    """The rate group of the run at ``path`` and the iterations it makes under ``config``.

    The rate group is the study's one dataset.
    """
    return DATASET, settings(config)["iterations"]


def runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact the study makes for ``config``: main grid, rho and eta selection."""
    if DATASET not in buildable:
        return []
    values = settings(config)
    return main_runs(values) + rho_runs(values) + eta_runs(values)


RECORDED_PARAMS = (
    "agents",
    "partition_seed",
    "graph",
    "edge_probability",
    "graph_seed",
    "iterations",
    "init",
)


def recorded_settings(config: dict, path: str) -> dict[str, tuple[str, object]]:
    """What the run at ``path`` records of ``config``.

    Each provenance field (dotted) -> the config key (in the section) and the value it gives. Every run
    records the run settings of :data:`RECORDED_PARAMS`, its C^R, the switches and the accounting delta; a
    main-grid run also its rho (a rho-selection run's is its path's).
    """
    values = run_settings(config)
    kind = path.split("/")[4]  # results/dvp_pvp/runs/adult/<algorithm, or the selection>/...
    algorithm = {"eta_selection": "nonprivate"}.get(kind, kind if kind in ALGORITHMS else path.split("/")[5])
    found = {f"params.{key}": (key, values[key]) for key in RECORDED_PARAMS}
    found["params.init_scale"] = ("init_scale", values["init_scale"])
    found["params.c_r"] = (f"c_r.{algorithm}", float(values["c_r"][algorithm]))
    if kind in ALGORITHMS:
        found["params.rho"] = (f"rho.{algorithm}", values["rho"][algorithm])
    found["delta"] = ("accounting_delta", values["accounting_delta"])
    return found | {f"switches.{key}": (key, value) for key, value in switches(values).items()}
