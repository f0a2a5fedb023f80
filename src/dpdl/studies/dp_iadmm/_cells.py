"""The run grid: which run jobs (cells) each aggregate reads, at which horizon and seeds, and their paths.

Runs are ``results/dp_iadmm/runs/{horizon}/{dataset}/{variant}/eps{epsilon}/seed{seed}.npz``:
``horizon`` is ``main`` (T = ``iterations``, Figs 1-4 and 6) or ``long`` (T = ``long_iterations``,
Fig. 5 and Remark 3; when the config's long horizon equals the main one, its figures read the
main runs); ``variant`` names the algorithm and its setting (:mod:`._variants`); one job, a
*cell*, runs every seed of a (horizon, dataset, variant, epsilon) at once. The config's ``cells``
(null: all) narrows the grid to the jobs it names, e.g. ``main/mnist/objt/eps0.05``, and the
aggregates and figures to those that read one (``config/paper_mnist_cells.yaml``).

``section`` below is always the ``dp_iadmm`` section of a config (``config["dp_iadmm"]``), or the
run settings of one job, which repeat the keys a function reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dpdl.studies.common import PaperReference, format_number
from dpdl.studies.dp_iadmm._variants import BASE_ALGORITHMS, NOISELESS, NONPRIVATE, a_variant, is_nonprivate

STUDY = "dp_iadmm"
TITLE = "Ryu & Kim, DP inexact ADMM"  # the report's section and the scorecard's heading
REFERENCE = PaperReference(  # the original paper: the replication article's citation
    authors="M. Ryu and K. Kim",
    title="Differentially Private Federated Learning via Inexact ADMM",
    venue="arXiv preprint",
    locator="arXiv:2106.06127",
)
DATASETS = ("mnist", "femnist")
HORIZONS = ("main", "long")
FIGURES = ("fig1", "fig2a", "fig2b", "fig3", "fig4", "fig5", "fig6")
AGGREGATES = FIGURES + ("remark3", "noiseless")
HORIZON_KEYS = ("iterations", "log_every", "seeds")  # each with a long_ twin for the long horizon
FIG5_VARIANTS = ("outp", "outp_plus", "objp", "objt")  # the series of Fig. 5
REMARK3_VARIANTS = ("objt", "outp", "objp")
NOISELESS_RUN_PATH = "results/dp_iadmm/runs/main/{dataset}/nonprivate_{algorithm}/epsinf/seed0.npz"
RUN_PATH = "results/dp_iadmm/runs/{horizon}/{dataset}/{variant}/eps{epsilon}/seed{seed}.npz"
EPSILON_REGEX = r"[0-9.e+-]+"  # a finite epsilon-bar as format_number writes it

# config section -> the (variant, epsilon) pairs an aggregate reads
Runs = Callable[[dict], list[tuple[str, float]]]


# --- what each aggregate reads ------------------------------------------------------------------


@dataclass(frozen=True)
class FigureSpec:
    """Which runs an aggregate reads and what it keeps."""

    horizon: str
    datasets: tuple[str, ...]
    final_only: bool
    metrics: tuple[str, ...]
    runs: Runs
    nonprivate: bool = False


def _pairs(variants: Iterable[str], epsilons: Iterable[float]) -> list[tuple[str, float]]:
    """Every (variant, epsilon-bar) pair of ``variants`` and ``epsilons``."""
    return [(name, float(epsilon)) for name in variants for epsilon in epsilons]


def _runs(variants: Iterable[str], epsilons: str) -> Runs:
    """``variants`` at every epsilon-bar of the config list ``epsilons``."""

    def runs(section: dict) -> list[tuple[str, float]]:
        return _pairs(variants, section[epsilons])

    return runs


def _base(epsilons: str) -> Runs:
    """ObjP, ObjT and OutP at every epsilon-bar of the config list ``epsilons``."""
    return _runs(BASE_ALGORITHMS, epsilons)


def _rho_runs(section: dict) -> list[tuple[str, float]]:
    """Fig. 4: OutP with rho-hat, rho-hat times outp_plus_factor and each constant rho."""
    rhos = [f"outp_rho{format_number(rho)}" for rho in section["outp_static_rhos"]]
    return _pairs(["outp", "outp_plus", *rhos], section["curve_epsilons"])


def _a_runs(section: dict) -> list[tuple[str, float]]:
    """Fig. 6: the three algorithms at each proximity scale a."""
    variants = [a_variant(algorithm, a) for a in section["a_values"] for algorithm in BASE_ALGORITHMS]
    return _pairs(variants, section["curve_epsilons"])


def _noiseless_runs(section: dict) -> list[tuple[str, float]]:
    """ObjP and OutP without noise (epsilon-bar = inf), whatever the config."""
    return _pairs(NOISELESS, [math.inf])


FIGURE_SPECS: dict[str, FigureSpec] = {
    "fig1": FigureSpec(
        horizon="main",
        datasets=("mnist",),
        final_only=False,
        metrics=("noise_magnitude", "test_error"),
        runs=_base("curve_epsilons"),
    ),
    "fig2a": FigureSpec(
        horizon="main",
        datasets=("mnist",),
        final_only=True,
        metrics=("test_error",),
        runs=_base("epsilons"),
        nonprivate=True,
    ),
    "fig2b": FigureSpec(
        horizon="main",
        datasets=("femnist",),
        final_only=True,
        metrics=("test_error",),
        runs=_base("epsilons"),
        nonprivate=True,
    ),
    "fig3": FigureSpec(
        horizon="main",
        datasets=("femnist",),
        final_only=False,
        metrics=("test_error",),
        runs=_base("curve_epsilons"),
    ),
    "fig4": FigureSpec(
        horizon="main",
        datasets=("mnist", "femnist"),
        final_only=False,
        metrics=("test_error",),
        runs=_rho_runs,
    ),
    "fig5": FigureSpec(
        horizon="long",
        datasets=("mnist",),
        final_only=False,
        metrics=("cv_sum", "test_error"),
        runs=_runs(FIG5_VARIANTS, "curve_epsilons"),
    ),
    "fig6": FigureSpec(
        horizon="main",
        datasets=("femnist",),
        final_only=False,
        metrics=("test_error",),
        runs=_a_runs,
    ),
    "remark3": FigureSpec(
        horizon="long",
        datasets=("mnist",),
        final_only=True,
        metrics=("test_error",),
        runs=_runs(REMARK3_VARIANTS, "remark3_epsilons"),
    ),
    "noiseless": FigureSpec(
        horizon="main",
        datasets=DATASETS,
        final_only=False,
        metrics=("test_error",),
        runs=_noiseless_runs,
    ),
}
# Trace columns the claims read beyond the plotted ones (per-seed tables only).
CLAIM_METRICS = {"fig5": ("rho",)}


# --- horizons and seeds -------------------------------------------------------------------------


def horizon_settings(section: dict, horizon: str) -> dict:
    """T, trace step and seed count of a horizon (``main`` or ``long``)."""
    prefix = "long_" if horizon == "long" else ""
    return {key: section[prefix + key] for key in HORIZON_KEYS}


def resolved_horizon(section: dict, horizon: str) -> str:
    """The horizon whose runs serve ``horizon``: ``long`` only if it differs from ``main``.

    A config whose long horizon equals the main one (as ``ci.yaml`` does) computes each run once.
    """
    distinct = horizon_settings(section, "long") != horizon_settings(section, "main")
    return "long" if horizon == "long" and distinct else "main"


def long_horizon_distinct(config: dict) -> bool:
    """Whether the config needs the long-horizon run rule."""
    return resolved_horizon(config[STUDY], "long") == "long"


def job_seeds(variant_name: str, count: int) -> list[int]:
    """Seeds of one job: 0..count-1; only seed 0 for a run without noise."""
    if is_nonprivate(variant_name):
        return [0]  # no noise: every seed gives the same run
    return list(range(count))


def seeds(section: dict, horizon: str, variant_name: str) -> list[int]:
    """Seeds of a job of ``horizon`` (see :func:`job_seeds`)."""
    return job_seeds(variant_name, horizon_settings(section, horizon)["seeds"])


# --- cells and their runs -----------------------------------------------------------------------


def run_path(horizon: str, dataset: str, variant_name: str, epsilon: float, seed: int) -> str:
    """Path of one run artifact."""
    return RUN_PATH.format(
        horizon=horizon, dataset=dataset, variant=variant_name, epsilon=format_number(epsilon), seed=seed
    )


def cell_name(horizon: str, dataset: str, variant_name: str, epsilon: float) -> str:
    """A cell (one run job, every seed) as ``cells`` names it: its folder under ``results/dp_iadmm/runs/``."""
    return f"{horizon}/{dataset}/{variant_name}/eps{format_number(epsilon)}"


def figure_cells(figure: str, section: dict, narrowed: bool = True) -> list[tuple[str, str, str, float]]:
    """(horizon, dataset, variant, epsilon) of the jobs of ``figure``.

    These are the jobs of its grid, only those ``cells`` names if ``narrowed``; a section without
    ``cells`` (written by hand, as in a test) is the whole grid, as null.
    """
    spec = FIGURE_SPECS[figure]
    chosen = section.get("cells") if narrowed else None
    keys = spec.runs(section)
    if spec.nonprivate:
        keys = [*keys, (NONPRIVATE, math.inf)]
    horizon = resolved_horizon(section, spec.horizon)
    found = [
        (horizon, dataset, name, epsilon)
        for dataset in spec.datasets
        for name, epsilon in dict.fromkeys(keys)
    ]
    return [cell for cell in found if chosen is None or cell_name(*cell) in chosen]


def grid_aggregates(section: dict) -> dict[str, list[str]]:
    """The aggregates of the config's grid, each with the datasets its jobs run on.

    The datasets are all of the aggregate's unless ``cells`` narrows them. ``cells`` keeps an aggregate when
    they reach each of its datasets, or name every job of it on one dataset: Fig. 4 and the noiseless pair,
    which span MNIST and FEMNIST, are then built from MNIST's jobs alone, and their claims on FEMNIST are not
    run at this scale.
    """
    found = {}
    for name in AGGREGATES:
        chosen = figure_cells(name, section)
        reached = list(dict.fromkeys(dataset for _, dataset, _, _ in chosen))
        every = figure_cells(name, section, narrowed=False)
        whole = [
            dataset for dataset in reached if all(cell in chosen for cell in every if cell[1] == dataset)
        ]
        if set(reached) == set(FIGURE_SPECS[name].datasets) or whole:
            found[name] = reached
    return found


def grid_gaps(section: dict) -> dict[str, list[list]]:
    """Each aggregate of the grid with the private cells of its grid that ``cells`` leaves out.

    Each cell is [dataset, variant, epsilon-bar], on the datasets the aggregate's jobs reach
    (:func:`grid_aggregates`); aggregates without such a cell are left out. A claim over an aggregate's
    epsilon-bar, a or rho grid reaches these cells and is not run at this scale, rather than judged on
    the part of the grid that ran (:func:`dpdl.studies.dp_iadmm.extract.with_grid_gaps`).
    """
    found = {}
    for name, datasets in grid_aggregates(section).items():
        chosen = set(figure_cells(name, section))
        left = [
            [dataset, variant_name, epsilon]
            for horizon, dataset, variant_name, epsilon in figure_cells(name, section, narrowed=False)
            if dataset in datasets
            and math.isfinite(epsilon)
            and (horizon, dataset, variant_name, epsilon) not in chosen
        ]
        if left:
            found[name] = left
    return found


def figure_run_paths(figure: str, config: dict, buildable: set[str] | None = None) -> list[str]:
    """Every run artifact the aggregate of ``figure`` reads, for ``config``.

    When ``buildable`` is given, they are only those on the buildable datasets (``"dp_iadmm/<dataset>"``).
    """
    section = config[STUDY]
    return [
        run_path(horizon, dataset, name, epsilon, seed)
        for horizon, dataset, name, epsilon in figure_cells(figure, section)
        if buildable is None or f"{STUDY}/{dataset}" in buildable
        for seed in seeds(section, horizon, name)
    ]
