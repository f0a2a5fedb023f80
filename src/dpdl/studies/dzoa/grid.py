"""dzoa's grid: the privacy grid points, trials, paths and Snakemake inputs a config implies.

Trials: the prepared ``dzoa/lasso`` holds ``data.lasso.trials`` independent draws; the first
``dzoa.tuning_trials`` tune DP-ADMM and the rest are the evaluation trials. Every dzoa command
takes the whole dzoa config section as its ``--settings`` (:func:`settings_json`), so a change of
any dzoa key reruns the study.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dpdl.data import prepared
from dpdl.data.prepared import PreparedDataset
from dpdl.errors import ConfigError
from dpdl.studies import common

STUDY = "dzoa"
TITLE = "Gratton et al., zeroth-order ADMM"  # the report's section and the scorecard's heading
REFERENCE = common.PaperReference(  # the original paper: the replication article's citation
    authors="C. Gratton, N. K. D. Venkategowda, R. Arablouei and S. Werner",
    title="Privacy-Preserved Distributed Learning With Zeroth-Order Optimization",
    venue="IEEE Transactions on Information Forensics and Security",
    locator="doi:10.1109/TIFS.2021.3139267",
)
CLAIMS_STEP_KEYS = ()  # no key is read by the claims step alone: every reading is judged on its own tables
CARD_TABLES = {}  # no table is written from the datasets' cards alone
SHARED_SEEDS = (
    True  # every grid point runs the same evaluation trials (one synthetic problem each): a trend is
)
# judged within trials, and a trend claim's extractor that hands the engine series without trial ids
# is refused
# the prepared datasets it reads (dpdl.data.prepared): each option -> the config key it comes from
PREPARED = (PreparedDataset(STUDY, "lasso", build=prepared.build_dzoa_lasso, options=prepared.LASSO_OPTIONS),)
DATASET = "dzoa/lasso"
ALGORITHMS = ("dzoa", "dpadmm")
ALGORITHM_NAMES = {"dzoa": "D-ZOA", "dpadmm": "DP-ADMM"}
FIGURES = ("fig1", "fig2", "fig3a", "fig3b")
SEED_FIGURES = ("fig2", "fig3a", "fig3b")  # figures whose aggregate step also writes a per-seed table
RESULTS = Path("results/dzoa")
FIGURES_DIR = Path("figures/dzoa")
GRADIENT_BOUND = 1.0  # c1 [P section VI]; nominal for the squared loss (note 3.6)
THEOREM1_MAX_EPSILON = 1.0  # Theorem 1 assumes epsilon in (0, 1] (G11)
SETTINGS_KEYS = (
    "epsilons",
    "deltas",
    "epsilon_totals",
    "delta_sweep",
    "outer_iterations",
    "inner_iterations",
    "directions",
    "rho",
    "eta",  # the lasso's l1 weight eta of (1), (33); ``l1_weight`` in the code
    "smoothing",
    "lipschitz",
    "loss_scale",
    "topology",
    "step_scale",
    "tuning_trials",
    "dpadmm_penalties",
    "dpadmm_step_sizes",
    "dpadmm_gauss_constant",
)
SETTINGS_MADE_BY = "the complete dzoa config section"  # what the rules pass as --settings
SWITCH_KEYS = ("loss_scale", "topology", "step_scale", "lipschitz", "dpadmm_gauss_constant")
PERTURBATION = "perturbation"  # the aggregate of D-ZOA's realised perturbation against sigma_k of (25)
# What a D-ZOA run artifact's trace holds; a parameter of the run rule, so a change reruns cached runs
# (Snakemake's params trigger): runs written before the perturbation columns existed are redone.
DZOA_TRACE = "error perturbation"


@dataclass(frozen=True)
class GridPoint:
    """One privacy setting: a per-iteration epsilon, or a total epsilon-bar of (29), and a delta."""

    label: str
    delta: float
    epsilon: float | None = None
    epsilon_total: float | None = None


def settings(config: dict) -> dict:
    """The study's config section (the ``--settings`` JSON of every dzoa command)."""
    return {key: config[STUDY][key] for key in SETTINGS_KEYS}


def settings_json(config: dict) -> str:
    """The ``--settings`` argument of every dzoa command (a change of any dzoa key reruns the study)."""
    return json.dumps(settings(config), sort_keys=True)


def _label(kind: str, value: float, delta: float) -> str:
    return f"{kind}{value:.6g}-delta{delta:.6g}"


def figure_points(values: dict, figure: str) -> list[GridPoint]:
    """The grid points a figure plots.

    Fig. 2: epsilons x deltas; Fig. 3(a): epsilon_totals x deltas; Fig. 3(b): epsilons x delta_sweep.
    """
    if figure == "fig2":
        return [
            GridPoint(_label("eps", e, d), d, epsilon=e) for d in values["deltas"] for e in values["epsilons"]
        ]
    if figure == "fig3a":
        return [
            GridPoint(_label("epsbar", e, d), d, epsilon_total=e)
            for d in values["deltas"]
            for e in values["epsilon_totals"]
        ]
    if figure == "fig3b":
        return [
            GridPoint(_label("eps", e, d), d, epsilon=e)
            for e in values["epsilons"]
            for d in values["delta_sweep"]
        ]
    raise ConfigError(f"figure {figure!r} has no grid points; expected fig2, fig3a or fig3b")


def grid(values: dict) -> list[GridPoint]:
    """Every grid point of the study, each once (Fig. 2's points are also Fig. 3b's)."""
    points: dict[str, GridPoint] = {}
    for figure in ("fig2", "fig3b", "fig3a"):
        for point in figure_points(values, figure):
            previous = points.setdefault(point.label, point)
            if previous != point:
                raise ConfigError(
                    f"dzoa grid points {previous} and {point} share the label {point.label!r}; "
                    "make the epsilons and deltas differ in their first 6 significant digits"
                )
    return list(points.values())


def tuning_trials(config: dict) -> list[int]:
    """Trials of the prepared data that tune DP-ADMM (the first ``dzoa.tuning_trials``)."""
    return list(range(config[STUDY]["tuning_trials"]))


def evaluation_trials(config: dict) -> list[int]:
    """Trials every figure averages over: those after the tuning trials (none if the study is off)."""
    total, tuning = config["data"]["lasso"]["trials"], config[STUDY]["tuning_trials"]
    if tuning >= total:
        if STUDY not in config.get("studies", [STUDY]):
            return []
        raise ConfigError(
            f"dzoa.tuning_trials ({tuning}) must be smaller than data.lasso.trials ({total}): the trials "
            "after the tuning trials are the evaluation trials (paper: 100 evaluation trials)"
        )
    return list(range(tuning, total))


def check_config(config: dict) -> None:
    """Cross-key checks of an enabled dzoa that the schema cannot state (run by the config validation)."""
    from dpdl.privacy.dzoa import dzoa_epsilon_for_total, dzoa_total_epsilon

    evaluation_trials(config)
    values = settings(config)
    graph_edges(values, config["data"]["lasso"]["agents"])
    n_outer = values["outer_iterations"]
    for point in grid(values):  # also rejects two grid points with one label
        if point.epsilon_total is None:
            continue  # a per-iteration epsilon: the schema bounds it by 1
        epsilon = dzoa_epsilon_for_total(point.epsilon_total, point.delta, n_outer=n_outer)
        if epsilon > THEOREM1_MAX_EPSILON:
            raise ConfigError(
                f"dzoa.epsilon_totals: {point.epsilon_total:g} gives a per-iteration epsilon of "
                f"{epsilon:.4g} at delta {point.delta:g} over dzoa.outer_iterations = {n_outer}, outside "
                "Theorem 1's epsilon <= 1 (dzoa.md G11); keep it at most "
                f"{dzoa_total_epsilon(1.0, point.delta, n_outer=n_outer):.4g}"
            )


def run_path(algorithm: str, label: str, trial: int) -> str:
    """Path of one run artifact."""
    return str(RESULTS / "runs" / algorithm / label / f"trial{trial:03d}.npz")


def point_labels(config: dict) -> list[str]:
    """The labels of the config's grid points, in grid order.

    A run's folder is ``runs/<algorithm>/<label>``.
    """
    return [point.label for point in grid(settings(config))]


def run_paths(values: dict, algorithm: str, trials: list[int], figure: str | None = None) -> list[str]:
    """Run artifacts of ``algorithm`` for ``trials`` over the grid (or one figure's grid points)."""
    points = grid(values) if figure is None else figure_points(values, figure)
    return [run_path(algorithm, p.label, t) for p in points for t in trials]


def evaluation_run_paths(values: dict, trials: list[int]) -> list[str]:
    """D-ZOA's run artifacts of ``trials`` over the whole grid (what the perturbation table reads)."""
    return run_paths(values, "dzoa", trials)


def figure_run_paths(values: dict, trials: list[int], figure: str) -> list[str]:
    """Run artifacts one figure's aggregate reads: both algorithms, its grid points, ``trials``."""
    if figure == "fig1":
        return []
    return [path for algorithm in ALGORITHMS for path in run_paths(values, algorithm, trials, figure)]


def aggregate_path(name: str) -> str:
    """Path of a tidy aggregate: a figure's, ``privacy``, ``dpadmm_tuning`` or ``perturbation``."""
    return str(RESULTS / "aggregates" / f"{name}.csv")


def seeds_path(figure: str) -> str:
    """Path of a figure's per-seed table (one row per run: the claims are judged from it)."""
    return aggregate_path(f"{figure}_seeds")


def figure_path(figure: str, ext: str) -> str:
    """Path of a figure file (png or pdf)."""
    return str(FIGURES_DIR / f"{figure}.{ext}")


def claims_path(ext: str) -> str:
    """Path of the study's scorecard: ``csv`` or ``md``."""
    return common.claims_path(STUDY, ext)


def targets(config: dict, buildable: set[str]) -> list[str]:
    """Every artifact the study promises for ``config`` (nothing if its data cannot be built)."""
    if DATASET not in buildable:
        return []
    evaluation_trials(config)
    grid(settings(config))
    paths = [figure_path(f, ext) for f in FIGURES for ext in ("png", "pdf")]
    paths += [aggregate_path(name) for name in (*FIGURES, "privacy", "dpadmm_tuning")]
    paths += [seeds_path(figure) for figure in SEED_FIGURES] + [aggregate_path(PERTURBATION)]
    return paths + [claims_path("csv"), claims_path("md")]


def table_runs(config: dict, table: str) -> list[str]:
    """Every run artifact the aggregate table ``table`` reads for ``config``.

    ``table`` is a figure's, or its ``_seeds`` twin; none for a table not built from one figure's runs.
    """
    name = table.removesuffix("_seeds")
    return figure_run_paths(settings(config), evaluation_trials(config), name) if name in FIGURES else []


def run_work(config: dict, path: str) -> tuple[str, int]:
    """The rate group of the run at ``path`` and its outer iterations under ``config``.

    The rate group is the study's one dataset.
    """
    return DATASET, settings(config)["outer_iterations"]


def runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact the study makes for ``config`` (the privacy table and ``dpdl status`` read them)."""
    if DATASET not in buildable:
        return []
    values, trials = settings(config), evaluation_trials(config)
    return [path for algorithm in ALGORITHMS for path in run_paths(values, algorithm, trials)]


def switches(values: dict) -> dict:
    """The fidelity switches in force (provenance and scorecard)."""
    return {key: values[key] for key in SWITCH_KEYS}


def loss_scale(values: dict, samples_per_agent: int) -> float:
    """s of the local loss (G1): 1 under ``sum`` (matches (33)), 1 / N_k under ``mean`` (literal (34))."""
    return 1.0 if values["loss_scale"] == "sum" else 1.0 / samples_per_agent


def dzoa_keywords(values: dict, scale: float) -> dict:
    """The keywords of :func:`dpdl.algorithms.dzoa.dzoa` that the study's settings give.

    ``scale`` is :func:`loss_scale`'s; ``n_outer`` is left to the caller (a run's M, or 1 in the audit).
    """
    return {
        "rho": values["rho"],
        "l1_weight": values["eta"],  # eta of (1)
        "loss_scale": scale,
        "lipschitz": values["lipschitz"],
        "smoothing": values["smoothing"],
        "n_directions": values["directions"],  # J of (30)
        "n_inner": values["inner_iterations"],  # T
    }


def graph_edges(values: dict, n_agents: int) -> list[tuple[int, int]]:
    """The assumed communication graph (Fig. 1 is not recoverable; G: ring + chord 1-3 by default)."""
    from dpdl.algorithms.dzoa import topology_edges

    try:
        return topology_edges(values["topology"], n_agents)
    except ValueError as err:
        raise ConfigError(
            f"dzoa.topology: {err} (the agents are data.lasso.agents); choose another topology or more agents"
        ) from None


def claim_scale(values: dict, n_trials: int) -> dict[str, int]:
    """The scale the claims are judged at (compared with each claim's ``needs``)."""
    return {
        "trials": n_trials,
        "outer_iterations": values["outer_iterations"],
        "inner_iterations": values["inner_iterations"],
        "directions": values["directions"],
        "epsilon_grid": len(values["epsilon_totals"]),
        "delta_grid": len(values["delta_sweep"]),
    }


RECORDED_PARAMS = {  # the section's keys each algorithm's runs record verbatim in their params
    "dzoa": ("rho", "eta", "outer_iterations", "inner_iterations", "directions", "smoothing", "lipschitz"),
    "dpadmm": ("eta", "outer_iterations"),
}


def recorded_settings(config: dict, path: str) -> dict[str, tuple[str, object]]:
    """What the run at ``path`` (``results/dzoa/runs/<algorithm>/...``) records of ``config``.

    Each provenance field (dotted) -> the config key (in the section) and the value it gives.
    """
    values, algorithm = settings(config), path.split("/")[3]
    found = {f"params.{key}": (key, values[key]) for key in RECORDED_PARAMS.get(algorithm, ())}
    return found | {f"switches.{key}": (key, value) for key, value in switches(values).items()}
