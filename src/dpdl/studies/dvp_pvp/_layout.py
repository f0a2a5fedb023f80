"""The study's layout: its algorithms, figures and tables, and where each run and output is written."""

from __future__ import annotations

from pathlib import Path

from dpdl.studies import common
from dpdl.studies.common import format_number

STUDY = "dvp_pvp"
TITLE = "Zhang & Zhu, DVP and PVP on Adult"  # the report's section and the scorecard's heading
REFERENCE = common.PaperReference(  # the original paper: the replication article's citation
    authors="T. Zhang and Q. Zhu",
    title="Dynamic Differential Privacy for Distributed Machine Learning over Networks",
    venue="journal version; conference version: Dynamic Privacy For Distributed "
    "Machine Learning Over Network",
    locator="",
)
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


# ------------------------------------------------------------------------------ runs


def run_path(algorithm: str, alpha: float | None, seed: int) -> str:
    """Return the path of one main-grid run (``alpha`` None for the non-private algorithm)."""
    return str(RUNS / algorithm / f"eps{format_number(alpha)}" / f"seed{seed}.npz")


def rho_run_path(algorithm: str, exponent: float, seed: int) -> str:
    """Return the path of one rho-selection run (rho = 10^exponent)."""
    return str(RUNS / "rho_selection" / algorithm / f"rho{format_number(exponent)}" / f"seed{seed}.npz")


def eta_run_path(eta: float) -> str:
    """Return the path of the non-private eta-selection run at ``eta`` (seed 0)."""
    return str(RUNS / "eta_selection" / "nonprivate" / f"eta{format_number(eta)}" / "seed0.npz")


def own_eta_run_path(algorithm: str, eta: float, seed: int) -> str:
    """Return the path of one run of an algorithm's own eta selection (``eta: tuned_per_algorithm``)."""
    return str(RUNS / "eta_selection_own" / algorithm / f"eta{format_number(eta)}" / f"seed{seed}.npz")


# ------------------------------------------------------------------------------ selected etas


def eta_path() -> str:
    """Return the path of the selected eta (JSON)."""
    return str(RESULTS / "eta.json")


def own_eta_path(algorithm: str) -> str:
    """Return the path of an algorithm's own selected eta (JSON, ``eta: tuned_per_algorithm``)."""
    return str(RESULTS / "eta" / f"{algorithm}.json")


# ------------------------------------------------------------------------------ aggregates,
# figures, tables, claims


def aggregate_path(name: str) -> str:
    """Return the path of an aggregate CSV."""
    return str(RESULTS / "aggregates" / f"{name}.csv")


def seeds_path(name: str) -> str:
    """Return the path of the per-seed table written beside the aggregate ``name`` (what the claims read)."""
    return str(RESULTS / "aggregates" / f"{name}_seeds.csv")


def figure_path(name: str, ext: str) -> str:
    """Return the path of a figure file (``png`` or ``pdf``)."""
    return str(FIGURES_DIR / f"{name}.{ext}")


def own_eta_table(algorithm: str) -> str:
    """Return the name of an algorithm's own eta-selection table (``eta: tuned_per_algorithm``)."""
    return f"eta_selection_{algorithm}"


def table_path(name: str, ext: str) -> str:
    """Return the path of a table file (``csv`` or ``md``)."""
    return str(TABLES_DIR / f"{name}.{ext}")


def claims_path(ext: str) -> str:
    """Path of the study's scorecard: ``csv`` or ``md``."""
    return common.claims_path(STUDY, ext)
