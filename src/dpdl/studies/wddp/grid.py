"""The wddp grid: figures, batches, paths, settings and the Snakemake input functions a config implies.

Two experiments (wddp.md 4.1, 4.3):

- ``epsilon`` (Experiment A, Figures 1, 3-11): m clients of random sizes above a threshold, for
  every epsilon of the grid. One batch per (dataset, m).
- ``unevenness`` (Experiment B, Figures 2, 12-16): two groups of m / 2 clients with size ratio u,
  at the paper's three (m, epsilon) settings. One batch per (dataset, setting); Breast Cancer and
  Credit Card run the u of the grid up to 5 only (Section 5).

Five datasets, one panel each in the paper's order; ``wddp.datasets`` selects those a config builds,
and of those the ones whose raw files can be obtained here are built (the others are skipped).

Every ``dpdl`` command imports this module, so it imports nothing heavy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpdl.data import prepared
from dpdl.data.prepared import PreparedDataset
from dpdl.errors import ConfigError
from dpdl.studies import common
from dpdl.studies.common import format_number, parse_settings
from dpdl.validation import require_exact_keys

if TYPE_CHECKING:
    from dpdl.data.availability import Availability

STUDY = "wddp"
TITLE = "Kang, Liu & Wang, weighted DP-ERM"  # the report's section and the scorecard's heading
REFERENCE = common.PaperReference(  # the original paper: the replication article's citation
    authors="Y. Kang, Y. Liu and W. Wang",
    title="Weighted Distributed Differential Privacy ERM: Convex and Non-convex",
    venue="arXiv preprint",
    locator="arXiv:1910.10308v2",
)
# the prepared datasets it reads (dpdl.data.prepared): each option -> the config key it comes from
PREPARED = (
    PreparedDataset(STUDY, "adult", build=prepared.build_wddp_adult, files=prepared.adult_files),
    PreparedDataset(
        STUDY,
        "kdd",
        build=prepared.build_wddp_kdd,
        options={key: f"data.kdd.{key}" for key in ("sample_size", "train_size", "seed")},
        files=prepared.kdd_files,
    ),
    # no official split: stratified 80/20 with a fixed seed (dpdl.data.tabular.SPLIT_SEED,
    # TEST_FRACTION), no option
    PreparedDataset(STUDY, "bank", build=prepared.build_wddp_bank, files=prepared.bank_files),
    PreparedDataset(
        STUDY, "breast_cancer", build=prepared.build_wddp_breast_cancer, files=prepared.breast_cancer_files
    ),
    PreparedDataset(
        STUDY, "credit_card", build=prepared.build_wddp_credit_card, files=prepared.credit_card_files
    ),
)
CLAIMS_STEP_KEYS = ()  # no key is read by the claims step alone: every reading is judged on its own tables
CARD_TABLES = {}  # no table is written from the datasets' cards alone
SHARED_SEEDS = (
    True  # every method, epsilon and m runs the seeds 0..seeds-1: a trend is judged within seeds, and a
)
# trend claim's extractor that hands the engine series without seed ids is refused Panel order of
# every figure (Section 5): (a) KDD Cup 99, (b) Adult, (c) Bank, (d) Breast Cancer, (e) Credit Card
DATASETS = ("kdd", "adult", "bank", "breast_cancer", "credit_card")
# Section 5: "u is set from 1 to 9 on KDDCup99, Adult and Bank, while from 1 to 5 on the rest"
MAX_UNEVENNESS = {"breast_cancer": 5, "credit_card": 5}
# dpdl.privacy.wddp.METHODS (not imported: it loads dp_accounting)
PRIVATE_METHODS = ("wddp", "dist_avg", "central")
NONPRIVATE = "nonpriv"  # the aggregate rows of theta*, the non-private optimum
METRICS = {"accuracy": "test accuracy", "gap": "optimality gap L(θ) − L(θ*)"}
# (m, epsilon, (accuracy figure, gap figure)) of Experiment B, from the captions of Figs 2, 12-16.
UNEVENNESS_SETTINGS = ((16, 0.05, (2, 12)), (32, 0.1, (13, 14)), (8, 0.01, (15, 16)))
# The keys of the config's wddp section (dpdl/schemas/wddp.schema.yaml) that --settings carries: all but
# SELECTION_KEYS, which choose the jobs (a dataset left out changes no other dataset's job, nor reruns it).
SELECTION_KEYS = ("datasets",)
SETTINGS_KEYS = (
    "epsilons",
    "delta",
    "clients",
    "unevenness",
    "seeds",
    "iterations",
    "trace_points",
    "step_sizes",
    "tuning",
    "threshold_fraction",
    "init_std",
    "l2",
    "aggregation",
    "calibration",
    "eq3_constant",
)
TUNING_KEYS = ("folds", "seeds", "epsilon", "protocol", "clients", "scope")  # wddp.tuning
PER_SETTING = "per_setting"  # wddp.tuning.protocol that cross-validates every setting of a batch (gap A16)


@dataclass(frozen=True)
class FigureSpec:
    """One of the paper's figures: which metric against which grid at which fixed values."""

    id: str
    number: int
    metric: str  # "accuracy" or "gap"
    experiment: str  # "epsilon" or "unevenness"
    clients: int
    epsilon: float | None = None  # fixed epsilon of an unevenness figure

    @property
    def x(self) -> str:
        """The aggregate column on the x axis."""
        return "epsilon" if self.experiment == "epsilon" else "unevenness"


def _figures() -> dict[str, FigureSpec]:
    specs = []
    for clients, (acc, gap) in {32: (1, 3), 2: (4, 5), 4: (6, 7), 8: (8, 9), 16: (10, 11)}.items():
        specs += [
            FigureSpec(f"fig{acc:02d}", acc, "accuracy", "epsilon", clients),
            FigureSpec(f"fig{gap:02d}", gap, "gap", "epsilon", clients),
        ]
    for clients, epsilon, (acc, gap) in UNEVENNESS_SETTINGS:
        specs += [
            FigureSpec(f"fig{acc:02d}", acc, "accuracy", "unevenness", clients, epsilon),
            FigureSpec(f"fig{gap:02d}", gap, "gap", "unevenness", clients, epsilon),
        ]
    return {spec.id: spec for spec in sorted(specs, key=lambda s: s.number)}


FIGURES = _figures()


# ---------------------------------------------------------------------------------------------
# Settings


def settings_json(config: Mapping) -> str:
    """The study's config section but its selection keys, as JSON.

    It is the rules' params: a change reruns what depends on it.
    """
    return json.dumps({key: config[STUDY][key] for key in SETTINGS_KEYS}, sort_keys=True)


def settings_from_json(text: str) -> dict:
    """Read back :func:`settings_json`'s ``--settings``: exactly the schema's keys, cross-checked."""
    made_by = "the validated config's wddp section (dpdl.studies.wddp.grid.settings_json)"
    settings = parse_settings(text, SETTINGS_KEYS, STUDY, made_by)  # the schema: tuning is an object
    require_exact_keys(settings["tuning"], TUNING_KEYS, "--settings tuning", f"pass {made_by}")
    check_section(settings)
    return settings


def check_config(config: Mapping) -> None:
    """The cross-key checks of the wddp section that the schema cannot express.

    Config validation runs them.
    """
    check_section(config[STUDY])


def check_section(section: Mapping) -> None:
    """Cross-key checks of the wddp section (:func:`check_config`; ``--settings`` read back)."""
    common.check_labels(section, STUDY, ("epsilons",))
    if section["trace_points"] > section["iterations"]:
        raise ConfigError(
            f"wddp.trace_points ({section['trace_points']}) must not exceed wddp.iterations "
            f"({section['iterations']}); lower trace_points"
        )


def switches(settings: Mapping) -> dict[str, str]:
    """The fidelity switches in force (recorded in every run and in the scorecard)."""
    return {
        "aggregation": settings["aggregation"],
        "calibration": settings["calibration"],
        "tuning_protocol": settings["tuning"]["protocol"],
        "tuning_scope": settings["tuning"]["scope"],
    }


def seeds(settings: Mapping) -> list[int]:
    """The repetition seeds 0 .. seeds-1."""
    return list(range(settings["seeds"]))


def run_epsilons(settings: Mapping) -> list[float]:
    """Every epsilon some run of the config uses: Experiment A's grid and Experiment B's three.

    The selected step sizes must cover each of them; the epsilons at which step sizes are
    cross-validated are :func:`dpdl.studies.wddp.tune.cross_validated_epsilons`.
    """
    return sorted(set(settings["epsilons"]) | {epsilon for _, epsilon, _ in UNEVENNESS_SETTINGS})


def selected_datasets(config: Mapping) -> list[str]:
    """The datasets ``wddp.datasets`` selects, in panel order."""
    return [d for d in DATASETS if d in config[STUDY]["datasets"]]


def unevenness_values(settings: Mapping, dataset: str) -> list[int]:
    """The u of Experiment B on ``dataset``.

    They are the grid's, up to :data:`MAX_UNEVENNESS` where the paper stops.
    """
    cap = MAX_UNEVENNESS.get(dataset)
    return [u for u in settings["unevenness"] if cap is None or u <= cap]


def unevenness_rules(settings: Mapping) -> list[tuple[str, tuple[str, ...], list[str]]]:
    """One Experiment B run rule per u grid: its name suffix, its datasets and their cell folders.

    A group that runs no u, as Breast Cancer under a grid of u > 5 only, gets no rule.
    """
    groups: dict[tuple[int, ...], list[str]] = {}
    for dataset in DATASETS:
        groups.setdefault(tuple(unevenness_values(settings, dataset)), []).append(dataset)
    rules = []
    for values, datasets in groups.items():
        if values:
            cap = max(MAX_UNEVENNESS.get(d, 0) for d in datasets)
            cells = [cell_name("unevenness", None, u) for u in values]
            rules.append((f"_u{cap}" if cap and len(groups) > 1 else "", tuple(datasets), cells))
    return rules


def figure_ids(settings: Mapping) -> list[str]:
    """The figures a config builds: the epsilon figures of its client counts and all u figures."""
    return [
        f
        for f, spec in FIGURES.items()
        if spec.experiment == "unevenness" or spec.clients in settings["clients"]
    ]


# ---------------------------------------------------------------------------------------------
# Paths


def optimum_path(dataset: str) -> str:
    """theta* and its metrics for one dataset."""
    return f"results/{STUDY}/optimum/{dataset}.npz"


def tuning_paths(dataset: str) -> tuple[str, str]:
    """The cross-validation scores (CSV) and the selected step sizes (JSON) of one dataset."""
    return f"results/{STUDY}/tuning/{dataset}.csv", f"results/{STUDY}/tuning/{dataset}.json"


def setting_tuning_paths(dataset: str, batch: str) -> tuple[str, str]:
    """Scores and selected step sizes of one batch's settings (``tuning.protocol: per_setting``)."""
    return f"results/{STUDY}/tuning/{dataset}/{batch}.csv", f"results/{STUDY}/tuning/{dataset}/{batch}.json"


def run_tuning_input(settings: Mapping, experiment: str) -> str:
    """The step sizes a batch of ``experiment`` reads, as a Snakemake pattern.

    They are the dataset's step sizes or, under the per-setting tuning protocol, its batch's.
    """
    if settings["tuning"]["protocol"] == PER_SETTING:
        return setting_tuning_paths("{dataset}", batch_name(experiment, "{clients}", "{epsilon}"))[1]
    return tuning_paths("{dataset}")[1]


def step_size_key(settings: Mapping, experiment: str, epsilon: float, unevenness: int | None) -> str:
    """The key of a run's step size in the selection: its epsilon, or its run cell under ``per_setting``."""
    if settings["tuning"]["protocol"] == PER_SETTING:
        return cell_name(experiment, epsilon, unevenness)
    return format_number(epsilon)


def batch_name(experiment: str, clients: int | str, epsilon: float | str | None = None) -> str:
    """The folder of one batch: ``epsilon_m32`` or ``unevenness_m16_eps0.05``."""
    if experiment == "epsilon":
        return f"epsilon_m{clients}"
    label = epsilon if isinstance(epsilon, str) else format_number(epsilon)
    return f"unevenness_m{clients}_eps{label}"


def cell_name(experiment: str, epsilon: float | None, unevenness: int | None) -> str:
    """The folder of one grid cell within a batch: ``eps0.05`` (Experiment A) or ``u3`` (Experiment B)."""
    return f"eps{format_number(epsilon)}" if experiment == "epsilon" else f"u{unevenness}"


def parse_batch(name: str) -> tuple[str, int, float | None]:
    """``(experiment, clients, epsilon)`` of a batch name (:func:`batch_name`'s inverse)."""
    match = re.fullmatch(r"epsilon_m(\d+)|unevenness_m(\d+)_eps([0-9.e+-]+)", name)
    if not match:
        raise ConfigError(f"{name!r} is not a wddp batch (epsilon_m<m> or unevenness_m<m>_eps<epsilon>)")
    if match.group(1):
        return "epsilon", int(match.group(1)), None
    return "unevenness", int(match.group(2)), float(match.group(3))


def run_path(dataset: str, batch: str, algorithm: str, cell: str, seed: int | str) -> str:
    """One run artifact: ``results/wddp/runs/<dataset>/<batch>/<algorithm>/<cell>/seed<seed>.npz``."""
    return f"results/{STUDY}/runs/{dataset}/{batch}/{algorithm}/{cell}/seed{seed}.npz"


def batch_cells(settings: Mapping, experiment: str, dataset: str | None = None) -> list[str]:
    """The cell folders of one batch of ``experiment`` on ``dataset`` (needed for Experiment B only).

    They are ``eps<epsilon>`` or ``u<unevenness>`` (:func:`unevenness_values`), in grid order.
    """
    if experiment == "epsilon":
        return [cell_name(experiment, e, None) for e in settings["epsilons"]]
    if dataset is None:
        raise ValueError("the u cells of a batch depend on its dataset (unevenness_values)")
    return [cell_name(experiment, None, u) for u in unevenness_values(settings, dataset)]


def batch_runs(
    settings: Mapping, dataset: str, experiment: str, clients: int, epsilon: float | None
) -> list[str]:
    """The run artifacts of one batch (what its run rule writes; none where the dataset runs no u)."""
    batch = batch_name(experiment, clients, epsilon)
    return [
        run_path(dataset, batch, method, cell, seed)
        for method in PRIVATE_METHODS
        for cell in batch_cells(settings, experiment, dataset)
        for seed in seeds(settings)
    ]


def aggregate_path(figure: str) -> str:
    """The tidy aggregate one figure reads (mean and band over seeds)."""
    return f"results/{STUDY}/aggregates/{figure}.csv"


def seeds_path(figure: str) -> str:
    """The per-seed table of one figure, which the claims are judged from."""
    return f"results/{STUDY}/aggregates/{figure}_seeds.csv"


def figure_paths(figure: str) -> tuple[str, str]:
    """PNG and PDF of one figure."""
    return f"figures/{STUDY}/{figure}.png", f"figures/{STUDY}/{figure}.pdf"


def table1_paths() -> tuple[str, str]:
    """Table 1 (bounds and computed sigma per cell), CSV and Markdown."""
    return f"results/tables/{STUDY}/table1.csv", f"results/tables/{STUDY}/table1.md"


def claims_path(ext: str) -> str:
    """Path of the study's scorecard: ``csv`` or ``md``."""
    return common.claims_path(STUDY, ext)


# ---------------------------------------------------------------------------------------------
# Targets and Snakemake input functions


def available_datasets(buildable: Iterable[str]) -> list[str]:
    """The study's datasets (panel order) whose prepared arrays can be built here."""
    names = set(buildable)
    return [d for d in DATASETS if f"{STUDY}/{d}" in names]


def aggregate_runs(settings: Mapping, figure: str, buildable: Iterable[str]) -> list[str]:
    """The runs the aggregate of ``figure`` reads, for the datasets available here."""
    spec = FIGURES[figure]
    paths = []
    for dataset in available_datasets(buildable):
        paths += batch_runs(settings, dataset, spec.experiment, spec.clients, spec.epsilon)
    return paths


def table_runs(config: Mapping, table: str) -> list[str]:
    """Every run artifact the table ``table`` reads for ``config``.

    On the selected datasets, whether or not they can be prepared here: a figure's (or its ``_seeds``
    twin's) runs; ``versus_<experiment>`` and ``runs``, the claims' stacks of figures
    (:func:`dpdl.studies.wddp.aggregate.claim_tables`), those of the figures stacked;
    ``versus_<experiment>_<dataset>``, one panel's rows of such a stack, that dataset's; none for
    another table.
    """
    settings, name = config[STUDY], table.removesuffix("_seeds")
    every = [f"{STUDY}/{d}" for d in selected_datasets(config)]
    panel = re.fullmatch(rf"(versus_(?:epsilon|unevenness))_({'|'.join(DATASETS)})", name)
    if panel:
        name, every = (
            panel.group(1),
            [f"{STUDY}/{panel.group(2)}"] if f"{STUDY}/{panel.group(2)}" in every else [],
        )
    stacked = [f for f in figure_ids(settings) if name in ("runs", f"versus_{FIGURES[f].experiment}", f)]
    return list(dict.fromkeys(path for f in stacked for path in aggregate_runs(settings, f, every)))


def run_work(config: Mapping, path: str) -> tuple[str, int]:
    """The rate group of the run at ``path`` (its dataset) and the iterations it makes under ``config``."""
    dataset = path.split("/")[3]  # results/wddp/runs/<dataset>/...
    return dataset, config[STUDY]["iterations"]


def figure_runs_input(settings: Mapping, availability: Callable[[], Availability], wildcards) -> list[str]:
    """Snakemake input function (bind the first two arguments): the runs of ``wildcards.figure``."""
    return aggregate_runs(settings, wildcards.figure, availability().buildable)


def optima_input(availability: Callable[[], Availability], wildcards) -> list[str]:
    """Snakemake input function (bind ``availability``): theta* of every dataset available here."""
    return [optimum_path(d) for d in available_datasets(availability().buildable)]


def cards_input(availability: Callable[[], Availability], wildcards) -> list[str]:
    """Snakemake input function (bind ``availability``): the cards of the datasets available here."""
    return [f"data/processed/{STUDY}/{d}.json" for d in available_datasets(availability().buildable)]


def aggregate_targets(settings: Mapping) -> list[str]:
    """Every figure aggregate of a config (the figures' inputs)."""
    return [aggregate_path(f) for f in figure_ids(settings)]


def seeds_targets(settings: Mapping) -> list[str]:
    """Every per-seed table of a config (the claims' inputs)."""
    return [seeds_path(f) for f in figure_ids(settings)]


def targets(config: Mapping, buildable: Iterable[str]) -> list[str]:
    """Every artifact the study promises for ``config``.

    They are its figures, aggregates, per-seed tables, Table 1 and claims.
    """
    settings = config[STUDY]
    if not available_datasets(buildable):
        return []
    paths = []
    for figure in figure_ids(settings):
        paths += [aggregate_path(figure), seeds_path(figure), *figure_paths(figure)]
    return paths + [*table1_paths(), claims_path("csv"), claims_path("md")]


def runs(config: Mapping, buildable: Iterable[str]) -> list[str]:
    """Every run artifact the study makes for ``config`` (those of its figures, once each)."""
    settings = config[STUDY]
    paths = (path for figure in figure_ids(settings) for path in aggregate_runs(settings, figure, buildable))
    return list(dict.fromkeys(paths))


RECORDED_PARAMS = ("iterations", "l2", "init_std", "threshold_fraction", "eq3_constant")


def recorded_settings(config: Mapping, path: str) -> dict[str, tuple[str, object]]:
    """What the run at ``path`` records of ``config``.

    Each provenance field (dotted) -> the config key (in the section) and the value it gives (the same
    for every run: its cell is its path).
    """
    section = config[STUDY]
    found = {f"params.{key}": (key, section[key]) for key in RECORDED_PARAMS}
    found["params.step_size_selection.grid"] = ("step_sizes", section["step_sizes"])
    found["delta"] = ("delta", section["delta"])
    names = {"tuning_protocol": "tuning.protocol", "tuning_scope": "tuning.scope"}
    return found | {
        f"switches.{key}": (names.get(key, key), value) for key, value in switches(section).items()
    }
