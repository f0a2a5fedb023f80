"""Study ``wddp``: Kang, Liu & Wang, Weighted Distributed Differential Privacy ERM (Figures 1-16, Table 1).

Grids, paths and target lists; the batched runs (all methods, epsilons, seeds and grid cells
of a dataset's figure grid as columns of one parameter matrix); step-size cross-validation;
aggregation; plotting; Table 1; the claims; the ``dpdl wddp ...`` commands. Section and gap
numbers refer to ``notes/wddp.md``.

Two experiments (wddp.md 4.1, 4.3):

- ``epsilon`` (Experiment A, Figures 1, 3-11): m clients of random sizes above a threshold, for
  every epsilon of the grid. One batch per (dataset, m).
- ``unevenness`` (Experiment B, Figures 2, 12-16): two groups of m / 2 clients with size ratio u,
  at the paper's three (m, epsilon) settings. One batch per (dataset, setting).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpdl import claims as claims_lib
from dpdl.aggregate import seed_bands
from dpdl.config import parse_json_object
from dpdl.data.partition import shards_of_sizes, threshold_random_sizes, two_group_sizes
from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import load_npz, read_json, save_npz, write_json, write_table, write_text
from dpdl.progress import Progress

# The algorithms (scipy), the privacy layer (dp_accounting) and the run contract (jsonschema) are
# imported inside the functions that use them: every `dpdl` command imports this module, and
# the figure, aggregate and claims steps need none of them.
if TYPE_CHECKING:
    from dpdl.data.prepared import Availability
    from dpdl.privacy import PrivacyEvent
    from dpdl.runs import RunResult

log = logging.getLogger(__name__)

STUDY = "wddp"
DATASETS = ("kdd", "adult")  # panel order of every figure: (a) KDD Cup 99, (b) Adult
DATASET_TITLES = {"kdd": "KDD Cup 99", "adult": "Adult"}
PRIVATE_METHODS = ("wddp", "dist_avg", "central")  # dpdl.algorithms.wddp.METHODS
NONPRIVATE = "nonpriv"
METHOD_LABELS = {
    "wddp": "WD-DP",
    "dist_avg": "Jayaraman et al. (averaged)",
    "central": "centralized DP-GD",
    NONPRIVATE: "non-private optimum (added)",
}
METHOD_COLORS = {"wddp": "tab:blue", "dist_avg": "tab:red", "central": "tab:green", NONPRIVATE: "0.3"}
LIPSCHITZ = 1.0  # G: ||x|| = 1 and |h - y| < 1 (wddp.md 1.3)
EXPERIMENT_KEYS = {"epsilon": 0, "unevenness": 1, "tuning": 2}  # spawn-key codes of the seed streams
TUNING_SCOPES = ("per_method", "shared")  # gap A16: one step size per method, or one for all
ACCURACY_DECIMALS = 12  # mean validation accuracies equal to this many decimals tie in step-size selection


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
        specs += [FigureSpec(f"fig{acc:02d}", acc, "accuracy", "epsilon", clients),
                  FigureSpec(f"fig{gap:02d}", gap, "gap", "epsilon", clients)]  # fmt: skip
    for clients, epsilon, (acc, gap) in UNEVENNESS_SETTINGS:
        specs += [FigureSpec(f"fig{acc:02d}", acc, "accuracy", "unevenness", clients, epsilon),
                  FigureSpec(f"fig{gap:02d}", gap, "gap", "unevenness", clients, epsilon)]  # fmt: skip
    return {spec.id: spec for spec in sorted(specs, key=lambda s: s.number)}


# (m, epsilon, (accuracy figure, gap figure)) of Experiment B, from the captions of Figs 2, 12-16.
UNEVENNESS_SETTINGS = ((16, 0.05, (2, 12)), (32, 0.1, (13, 14)), (8, 0.01, (15, 16)))
FIGURES = _figures()
METRICS = {"accuracy": "test accuracy", "gap": "optimality gap L(θ) − L(θ*)"}

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
    ("Wang, Ye & Xu 2017", "O(G² T ln(1/δ) / (n² ε²))", "O(p G² log²(n) ln(1/δ) / (n² ε²))", "No", "Yes", "central"),
    ("WD-DP (ours)", "O(G² T ln(1/δ) / (n² ε²))", "O(p G² log(n) ln(1/δ) / (n² ε²))", "Yes", "Yes", "wddp"),
)  # fmt: skip  (Kang, Liu & Wang, Table 1; row labels inferred, wddp.md 3)


# ---------------------------------------------------------------------------------------------
# Grids, paths and targets


def number_label(value: float) -> str:
    """A grid value as it appears in paths: ``0.05`` -> ``"0.05"``, ``1.0`` -> ``"1"``."""
    return f"{value:g}"


def seeds(settings: Mapping) -> list[int]:
    """The repetition seeds 0 .. seeds-1."""
    return list(range(settings["seeds"]))


def figure_ids(settings: Mapping) -> list[str]:
    """The figures a config builds: the epsilon figures of its client counts and all u figures."""
    return [f for f, spec in FIGURES.items() if spec.experiment == "unevenness" or spec.clients in settings["clients"]]


def optimum_path(dataset: str) -> str:
    """theta* and its metrics for one dataset."""
    return f"results/{STUDY}/optimum/{dataset}.npz"


def tuning_paths(dataset: str) -> tuple[str, str]:
    """The cross-validation scores (CSV) and the selected step sizes (JSON) of one dataset."""
    return f"results/{STUDY}/tuning/{dataset}.csv", f"results/{STUDY}/tuning/{dataset}.json"


def batch_name(experiment: str, clients: int | str, epsilon: float | str | None = None) -> str:
    """The folder of one batch: ``epsilon_m32`` or ``unevenness_m16_eps0.05``."""
    if experiment == "epsilon":
        return f"epsilon_m{clients}"
    label = epsilon if isinstance(epsilon, str) else number_label(epsilon)
    return f"unevenness_m{clients}_eps{label}"


def run_path(dataset: str, batch: str, algorithm: str, cell: str, seed: int | str) -> str:
    """One run artifact: ``results/wddp/runs/<dataset>/<batch>/<algorithm>/<cell>/seed<seed>.npz``."""
    return f"results/{STUDY}/runs/{dataset}/{batch}/{algorithm}/{cell}/seed{seed}.npz"


def _batch_cells(settings: Mapping, experiment: str) -> list[str]:
    if experiment == "epsilon":
        return [f"eps{number_label(e)}" for e in settings["epsilons"]]
    return [f"u{u}" for u in settings["unevenness"]]


def run_outputs(settings: Mapping, experiment: str) -> list[str]:
    """The run artifacts of one batch as Snakemake patterns (``{dataset}``, ``{clients}``[, ``{epsilon}``])."""
    batch = batch_name(experiment, "{clients}", "{epsilon}")
    return [
        run_path("{dataset}", batch, method, cell, seed)
        for method in PRIVATE_METHODS
        for cell in _batch_cells(settings, experiment)
        for seed in seeds(settings)
    ]


def batch_runs(settings: Mapping, dataset: str, experiment: str, clients: int, epsilon: float | None) -> list[str]:
    """The run artifacts of one batch (the concrete paths of :func:`run_outputs`)."""
    batch = batch_name(experiment, clients, epsilon)
    return [
        run_path(dataset, batch, method, cell, seed)
        for method in PRIVATE_METHODS
        for cell in _batch_cells(settings, experiment)
        for seed in seeds(settings)
    ]


def aggregate_path(figure: str) -> str:
    """The tidy aggregate one figure reads."""
    return f"results/{STUDY}/aggregates/{figure}.csv"


def figure_paths(figure: str) -> tuple[str, str]:
    """PNG and PDF of one figure."""
    return f"figures/{STUDY}/{figure}.png", f"figures/{STUDY}/{figure}.pdf"


def table1_paths() -> tuple[str, str]:
    """Table 1 (bounds and computed sigma per cell), CSV and Markdown."""
    return f"results/tables/{STUDY}/table1.csv", f"results/tables/{STUDY}/table1.md"


def claims_paths() -> tuple[str, str]:
    """The claims scorecard, CSV and Markdown."""
    return f"results/claims/{STUDY}.csv", f"results/claims/{STUDY}.md"


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
    """Every figure aggregate of a config (the claims' inputs)."""
    return [aggregate_path(f) for f in figure_ids(settings)]


def targets(config: Mapping, buildable: Iterable[str]) -> list[str]:
    """Every artifact the study promises for ``config``: figures, aggregates, Table 1, claims."""
    settings = config[STUDY]
    if not available_datasets(buildable):
        return []
    paths = []
    for figure in figure_ids(settings):
        paths += [aggregate_path(figure), *figure_paths(figure)]
    return paths + [*table1_paths(), *claims_paths()]


def runs(config: Mapping, buildable: Iterable[str]) -> list[str]:
    """Every run artifact the study makes for ``config`` (those of its figures, once each)."""
    settings = config[STUDY]
    paths = (path for figure in figure_ids(settings) for path in aggregate_runs(settings, figure, buildable))
    return list(dict.fromkeys(paths))


def settings_json(config: Mapping) -> str:
    """The study's config section as JSON (the rules' params: a change reruns what depends on it)."""
    return json.dumps(config[STUDY], sort_keys=True)


def check_settings(settings: Mapping) -> Mapping:
    """Cross-key checks the schema cannot express; return ``settings``."""
    if settings["trace_points"] > settings["iterations"]:
        raise ConfigError(
            f"wddp.trace_points ({settings['trace_points']}) must not exceed wddp.iterations "
            f"({settings['iterations']}); lower trace_points"
        )
    return settings


# ---------------------------------------------------------------------------------------------
# Seeds, partitions, calibration


def seed_sequence(dataset: str, purpose: str, epsilon: float | None, seed: int, *cell: int) -> np.random.SeedSequence:
    """The seed sequence of one stream: ``run_seed_sequence`` keyed further by the grid cell."""
    from dpdl.runs import run_seed_sequence

    root = run_seed_sequence(STUDY, dataset, purpose, epsilon, seed)
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(int(c) for c in cell))


def initial_model(dataset: str, seed: int, dim: int, init_std: float, *cell: int) -> np.ndarray:
    """theta_0 ~ N(0, init_std^2 I) of one repetition, shared by every method (gap A6)."""
    rng = np.random.default_rng(seed_sequence(dataset, "init", None, seed, *cell))
    return init_std * rng.standard_normal(dim)


def partition(
    dataset: str, n_rows: int, experiment: str, clients: int, seed: int, *, unevenness: int = 1,
    threshold_fraction: float = 0.2, cell: tuple[int, ...] = (),
) -> list[np.ndarray]:  # fmt: skip
    """The clients' row indices in one repetition of one experiment cell (wddp.md 4.3).

    ``epsilon`` (Experiment A): random sizes above ``threshold_fraction * n / m``;
    ``unevenness`` and ``tuning``: see :func:`dpdl.data.partition.two_group_sizes` and
    :func:`dpdl.data.partition.threshold_random_sizes`. Rows are assigned IID by a seeded permutation.
    """
    key = (EXPERIMENT_KEYS[experiment], clients, unevenness, *cell)
    rng = np.random.default_rng(seed_sequence(dataset, "partition", None, seed, *key))
    if experiment == "unevenness":
        sizes = two_group_sizes(n_rows, clients, unevenness)
    else:
        sizes = threshold_random_sizes(n_rows, clients, threshold_fraction=threshold_fraction, rng=rng)
    return shards_of_sizes(sizes, rng=rng)


def noise_std(settings: Mapping, method: str, epsilon: float, sizes: Sequence[int]) -> tuple[float, int]:
    """sigma of a method at epsilon for client sizes ``sizes``, and its N_eff (wddp.md 2.4, gap A3)."""
    from dpdl.privacy import wddp_effective_sample_size, wddp_noise_std

    n_eff = wddp_effective_sample_size(list(map(int, sizes)), method)
    sigma = wddp_noise_std(
        epsilon, settings["delta"], n_eff=n_eff, n_iterations=settings["iterations"], lipschitz=LIPSCHITZ,
        calibration=settings["calibration"], c=settings["eq3_constant"],
    )  # fmt: skip
    return sigma, n_eff


def privacy_events(settings: Mapping, method: str, sigma: float, sizes: Sequence[int]) -> list[PrivacyEvent]:
    """The releases of one run, for the record whose privacy is worst.

    Per-round: T Gaussian releases of the aggregate gradient, sensitivity 2G / N_eff. One-shot
    (no proof in the paper): each client's T local steps are Gaussian releases of its own mean
    gradient, sensitivity 2G / n_j, worst for the smallest client; the final average is
    post-processing. Centralized DP-GD is per-round in both settings.
    """
    from dpdl.privacy import PrivacyEvent, wddp_effective_sample_size, wddp_sensitivity

    if settings["aggregation"] == "one_shot" and method != "central":
        sensitivity = wddp_sensitivity(int(min(sizes)), LIPSCHITZ)
    else:
        sensitivity = wddp_sensitivity(wddp_effective_sample_size(list(map(int, sizes)), method), LIPSCHITZ)
    return [PrivacyEvent("gaussian", sigma / sensitivity, settings["iterations"])]


@functools.lru_cache(maxsize=4096)
def _privacy_record_cached(noise_multiplier: float, count: int, delta: float) -> str:
    from dpdl.privacy import PrivacyEvent, privacy_record

    record = privacy_record(PrivacyEvent("gaussian", noise_multiplier, count), delta=delta, eps_per_iteration=None)
    return json.dumps(record)


def run_privacy(settings: Mapping, method: str, sigma: float, sizes: Sequence[int]) -> dict:
    """The privacy block of a run's provenance (composed RDP and PLD over its T rounds)."""
    (event,) = privacy_events(settings, method, sigma, sizes)
    return json.loads(_privacy_record_cached(event.noise_multiplier, event.count, settings["delta"]))


def record_points(iterations: int, points: int) -> list[int]:
    """The rounds logged in a trace: 0, T and ``points - 1`` evenly spaced rounds between."""
    return sorted({int(round(t)) for t in np.linspace(0, iterations, points + 1)})


# ---------------------------------------------------------------------------------------------
# Batched runs


@dataclass(frozen=True)
class Column:
    """One run of a batch: a method at one epsilon, one repetition and one grid cell."""

    method: str
    epsilon: float
    seed: int
    unevenness: int | None
    group: int  # index of the (repetition, cell) the column's partition and theta_0 belong to
    sigma: float
    n_eff: int
    step_size: float
    path: str


@dataclass(frozen=True)
class Group:
    """The partition and initial model that the columns of one (repetition, cell) share."""

    seed: int
    unevenness: int | None
    shards: list[np.ndarray]
    theta0: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """n_j of each client."""
        return np.array([len(s) for s in self.shards])


def build_batch(
    settings: Mapping, dataset: str, n_rows: int, dim: int, experiment: str, clients: int,
    epsilon: float | None, step_sizes: Mapping[str, Mapping[str, float]],
) -> tuple[list[Group], list[Column]]:  # fmt: skip
    """The groups and columns of one batch, each column with its sigma, step size and output path.

    ``step_sizes[method][epsilon label]`` is the cross-validated step size (:func:`select_step_sizes`).
    """
    batch = batch_name(experiment, clients, epsilon)
    groups, columns = [], []
    cells = settings["unevenness"] if experiment == "unevenness" else [None]
    for u in cells:
        for seed in seeds(settings):
            shards = partition(
                dataset, n_rows, experiment, clients, seed, unevenness=u or 1,
                threshold_fraction=settings["threshold_fraction"],
            )  # fmt: skip
            groups.append(Group(seed, u, shards, initial_model(dataset, seed, dim, settings["init_std"])))
            sizes = groups[-1].sizes
            epsilons = settings["epsilons"] if experiment == "epsilon" else [epsilon]
            for method in PRIVATE_METHODS:
                for eps in epsilons:
                    sigma, n_eff = noise_std(settings, method, eps, sizes)
                    cell = f"eps{number_label(eps)}" if experiment == "epsilon" else f"u{u}"
                    path = run_path(dataset, batch, method, cell, seed)
                    eta = step_sizes[method][number_label(eps)]
                    columns.append(Column(method, eps, seed, u, len(groups) - 1, sigma, n_eff, eta, path))
    return groups, columns


def noise_generator(dataset: str, column: Column, experiment: str, clients: int) -> np.random.Generator:
    """The generator of one run's noise: (study, dataset, method, epsilon, seed) and the grid cell."""
    cell = (EXPERIMENT_KEYS[experiment], clients, column.unevenness or 0)
    return np.random.default_rng(seed_sequence(dataset, column.method, column.epsilon, column.seed, *cell))


def descend(
    settings: Mapping, x: np.ndarray, labels: np.ndarray, groups: Sequence[Group], columns: Sequence[Column],
    rngs: Sequence[np.random.Generator], record_at: Sequence[int], label: str,
) -> np.ndarray:  # fmt: skip
    """Run every column of a batch under the configured aggregation; return ``(r, d, k)`` snapshots.

    Per-round (default): all columns in one matrix product per round. One-shot: per group
    (shared partition) the distributed methods run Algorithm 1 as printed; centralized DP-GD runs
    per-round on the pooled data.
    """
    from dpdl.algorithms import wddp as algo

    n_rows, k = x.shape[0], len(columns)
    theta0 = np.stack([groups[c.group].theta0 for c in columns], axis=1)
    sigma = np.array([c.sigma for c in columns])
    eta = np.array([c.step_size for c in columns])
    iterations, l2 = settings["iterations"], settings["l2"]
    snapshots = np.empty((len(record_at), x.shape[1], k))
    pooled = [i for i, c in enumerate(columns) if settings["aggregation"] == "per_round" or c.method == "central"]
    pooled_set = set(pooled)
    if pooled:
        weights = np.empty((n_rows, len(pooled)))
        for j, i in enumerate(pooled):
            weights[:, j] = algo.record_weights(columns[i].method, groups[columns[i].group].shards, n_rows)
        result = algo.per_round_descent(
            x, labels, theta0[:, pooled], weights, sigma[pooled], eta[pooled], iterations=iterations,
            rngs=[rngs[i] for i in pooled], record_at=record_at, l2=l2, progress=Progress(label, iterations).update,
        )  # fmt: skip
        snapshots[:, :, pooled] = result.thetas
    for g, group in enumerate(groups):
        local = [i for i, c in enumerate(columns) if c.group == g and i not in pooled_set]
        if not local:
            continue
        average = np.stack([algo.client_weights(columns[i].method, group.sizes) for i in local], axis=1)
        result = algo.one_shot_descent(
            x, labels, theta0[:, local], group.shards, average, sigma[local], eta[local], iterations=iterations,
            rngs=[rngs[i] for i in local], record_at=record_at, l2=l2,
            progress=Progress(f"{label} one-shot group {g + 1}/{len(groups)}", iterations).update,
        )  # fmt: skip
        snapshots[:, :, local] = result.thetas
    return snapshots


def evaluate(
    snapshots: np.ndarray, data: Mapping[str, np.ndarray], optimum_loss: float, l2: float
) -> dict[str, np.ndarray]:
    """Metrics of every snapshot: training objective, optimality gap, test accuracy, ||theta||.

    Returns arrays of shape ``(r, k)``. The gap is against the centralized training objective for
    every method (gap A18); accuracy predicts 1 iff sigmoid(x theta) >= 0.5 (wddp.md 4.4).
    """
    from dpdl.algorithms import wddp as algo

    loss = np.stack([algo.objective(theta, data["X_train"], data["y_train"], l2) for theta in snapshots])
    accuracy = np.stack([_accuracy(theta, data["X_test"], data["y_test"]) for theta in snapshots])
    return {
        "train_loss": loss,
        "gap": loss - optimum_loss,
        "test_accuracy": accuracy,
        "theta_norm": np.linalg.norm(snapshots, axis=1),
    }


def _accuracy(theta: np.ndarray, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Fraction of rows where the prediction 1{x theta >= 0} equals the {0, 1} label, per column."""
    predictions = x @ theta >= 0
    return np.mean(
        predictions == (labels > 0)[:, None] if predictions.ndim == 2 else predictions == (labels > 0), axis=0
    )


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a prepared wddp dataset, checked for what the study needs (||x|| <= 1, {0, 1} labels)."""
    arrays = load_npz(path)
    missing = [k for k in ("X_train", "y_train", "X_test", "y_test") if k not in arrays]
    if missing:
        raise ArtifactError(f"{path}: missing arrays {missing}; rebuild it with the data_prepare rule")
    data = {k: np.asarray(arrays[k], dtype=float) for k in ("X_train", "y_train", "X_test", "y_test")}
    norm = float(np.linalg.norm(data["X_train"], axis=1).max())
    if norm > 1 + 1e-9:
        raise ArtifactError(f"{path}: a training row has norm {norm} > 1, so G = 1 does not hold (wddp.md A8)")
    if not set(np.unique(data["y_train"])) <= {0.0, 1.0}:
        raise ArtifactError(f"{path}: labels must be 0 or 1 (wddp.md 1.3)")
    return data


def run_batch(
    settings: Mapping, dataset: str, experiment: str, clients: int, epsilon: float | None, *,
    data: Mapping[str, np.ndarray], dataset_sha256: str, tuning: Mapping, optimum: Mapping,
) -> list[tuple[str, RunResult]]:  # fmt: skip
    """Run one batch and return each column's path and run record (trace + provenance)."""
    from dpdl.runs import RunResult, execute, run_timing

    x, labels = data["X_train"], data["y_train"]
    groups, columns = build_batch(
        settings, dataset, x.shape[0], x.shape[1], experiment, clients, epsilon, tuning["step_sizes"]
    )
    rngs = [noise_generator(dataset, column, experiment, clients) for column in columns]
    record_at = record_points(settings["iterations"], settings["trace_points"])
    label = f"{dataset} {batch_name(experiment, clients, epsilon)} ({len(columns)} runs)"
    start = time.perf_counter()
    snapshots = descend(settings, x, labels, groups, columns, rngs, record_at, label)
    wall = time.perf_counter() - start
    diverged = [c.path for i, c in enumerate(columns) if not np.isfinite(snapshots[..., i]).all()]
    if diverged:
        log.warning("%d runs have non-finite models (step size too large?), e.g. %s", len(diverged), diverged[0])
    metrics = evaluate(snapshots, data, optimum["loss"], settings["l2"])
    results = []
    for i, column in enumerate(columns):
        trace = pd.DataFrame(
            {"iteration": np.asarray(record_at), **{name: values[:, i] for name, values in metrics.items()}}
        )
        provenance = run_provenance(
            settings, dataset, dataset_sha256, experiment, clients, column, groups[column.group], tuning, optimum
        )
        result = execute(lambda trace=trace: trace, provenance, iterations=settings["iterations"])
        timing = run_timing(wall, settings["iterations"], len(columns))
        results.append((column.path, RunResult(result.trace, {**result.provenance, "timing": timing})))
    return results


def run_provenance(
    settings: Mapping, dataset: str, dataset_sha256: str, experiment: str, clients: int, column: Column,
    group: Group, tuning: Mapping, optimum: Mapping,
) -> dict:  # fmt: skip
    """The provenance record of one run (see ``schemas/run.schema.json``)."""
    from dpdl.privacy import wddp_sensitivity

    sizes = group.sizes
    params = {
        "experiment": experiment,
        "clients": clients,
        "unevenness_nominal": column.unevenness,
        "unevenness_realized": float(sizes.max() / sizes.min()),
        "client_sizes": sizes.tolist(),
        "n": int(sizes.sum()),
        "n_min": int(sizes.min()),
        "noise_ratio": float(sizes.sum() / (len(sizes) * sizes.min())),  # n / (m n_(1)), wddp.md 2.4
        "n_eff": column.n_eff,
        "sigma": column.sigma,
        "sensitivity": wddp_sensitivity(column.n_eff, LIPSCHITZ),
        "lipschitz": LIPSCHITZ,
        "iterations": settings["iterations"],
        "step_size": column.step_size,
        "step_size_selection": {"grid": settings["step_sizes"], **tuning["settings"], "source": "cross-validation"},
        "l2": settings["l2"],
        "init_std": settings["init_std"],
        "threshold_fraction": settings["threshold_fraction"],
        "eq3_constant": settings["eq3_constant"],
        "theta_star_loss": optimum["loss"],
        "theta_star_test_accuracy": optimum["test_accuracy"],
    }
    return {
        "study": STUDY,
        "dataset": f"{STUDY}/{dataset}",
        "dataset_sha256": dataset_sha256,
        "algorithm": column.method,
        "params": params,
        "seed": column.seed,
        "epsilon": column.epsilon,
        **run_privacy(settings, column.method, column.sigma, sizes),
        "switches": switches(settings),
    }


def switches(settings: Mapping) -> dict[str, str]:
    """The fidelity switches in force."""
    return {
        "aggregation": settings["aggregation"],
        "calibration": settings["calibration"],
        "tuning_protocol": settings["tuning"]["protocol"],
        "tuning_scope": settings["tuning"]["scope"],
    }


# ---------------------------------------------------------------------------------------------
# theta* and step-size cross-validation


def compute_optimum(data: Mapping[str, np.ndarray], l2: float) -> dict:
    """theta* of the pooled training data and its loss, gradient norm and accuracies."""
    from dpdl.algorithms import wddp as algo

    found = algo.nonprivate_optimum(data["X_train"], data["y_train"], l2)
    if not found.converged:
        raise ArtifactError(
            f"theta* did not converge: ||grad|| = {found.gradient_norm:.3g} after {found.iterations} iterations "
            f"(needs < {algo.OPTIMUM_GRADIENT_NORM}); raise OPTIMUM_MAX_ITERATIONS in dpdl.algorithms.wddp"
        )
    accuracy = {
        split: float(_accuracy(found.theta, data[f"X_{split}"], data[f"y_{split}"])) for split in ("train", "test")
    }
    return {
        "theta": found.theta,
        "loss": found.loss,
        "gradient_norm": found.gradient_norm,
        "iterations": found.iterations,
        "train_accuracy": accuracy["train"],
        "test_accuracy": accuracy["test"],
    }


def read_optimum(path: str | Path) -> dict:
    """theta* and its scalar metrics from :func:`write_optimum`'s file."""
    arrays = load_npz(path)
    return {"theta": arrays["theta"], **json.loads(str(arrays["record"]))}


def write_optimum(path: str | Path, optimum: Mapping, dataset_sha256: str, l2: float) -> None:
    """Store theta* (array) and its metrics (JSON record) in one pickle-free ``.npz``."""
    record = {k: v for k, v in optimum.items() if k != "theta"} | {"dataset_sha256": dataset_sha256, "l2": l2}
    save_npz(path, {"theta": np.asarray(optimum["theta"]), "record": np.array(json.dumps(record, sort_keys=True))})


def tuning_epsilons(settings: Mapping) -> list[float]:
    """The epsilons at which step sizes are cross-validated (``wddp.tuning.protocol``, gap A16).

    ``per_epsilon``: every epsilon a figure uses (Experiment A's grid and Experiment B's three);
    ``reference``: the one reference epsilon of the note's recommendation.
    """
    if settings["tuning"]["protocol"] == "reference":
        return [settings["tuning"]["epsilon"]]
    return sorted(set(settings["epsilons"]) | {epsilon for _, epsilon, _ in UNEVENNESS_SETTINGS})


def run_epsilons(settings: Mapping) -> list[float]:
    """Every epsilon a run of the config uses (the step sizes must cover them)."""
    return sorted(set(settings["epsilons"]) | {epsilon for _, epsilon, _ in UNEVENNESS_SETTINGS})


def cross_validate(settings: Mapping, dataset: str, data: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Validation accuracy and loss of every (method, epsilon, step size, fold, seed) on held-out training rows.

    wddp.md 4.4 / gap A16: K-fold CV on the training set only, at the reference m of Experiment
    A (random sizes) and at each epsilon of :func:`tuning_epsilons`; the test set is never used.
    The privacy cost of tuning is not accounted, as in the paper.
    """
    from dpdl.algorithms import wddp as algo

    tuning = settings["tuning"]
    x, labels = data["X_train"], data["y_train"]
    rng = np.random.default_rng(seed_sequence(dataset, "folds", None, 0, EXPERIMENT_KEYS["tuning"]))
    folds = np.array_split(rng.permutation(x.shape[0]), tuning["folds"])
    rows = []
    for f, held_out in enumerate(folds):
        train = np.setdiff1d(np.arange(x.shape[0]), held_out)
        groups, columns = [], []
        for seed in range(tuning["seeds"]):
            shards = partition(
                dataset, len(train), "tuning", tuning["clients"], seed,
                threshold_fraction=settings["threshold_fraction"], cell=(f,),
            )  # fmt: skip
            theta0 = initial_model(dataset, seed, x.shape[1], settings["init_std"], EXPERIMENT_KEYS["tuning"], f)
            groups.append(Group(seed, None, shards, theta0))
            for method in PRIVATE_METHODS:
                for epsilon in tuning_epsilons(settings):
                    sigma, n_eff = noise_std(settings, method, epsilon, groups[-1].sizes)
                    for eta in settings["step_sizes"]:
                        columns.append(Column(method, epsilon, seed, None, len(groups) - 1, sigma, n_eff, eta, ""))
        # Common random numbers: every method sees the same noise draws at a (fold, seed, epsilon,
        # step size), so the comparison of step sizes is not decided by noise (and identical
        # processes, WD-DP and centralized DP-GD under per-round aggregation, get identical scores).
        rngs = [
            np.random.default_rng(seed_sequence(dataset, "tune", c.epsilon, c.seed, EXPERIMENT_KEYS["tuning"], f,
                                                settings["step_sizes"].index(c.step_size)))
            for c in columns
        ]  # fmt: skip
        label = f"{dataset} step-size CV fold {f + 1}/{len(folds)} ({len(columns)} runs)"
        final = descend(settings, x[train], labels[train], groups, columns, rngs, [settings["iterations"]], label)[-1]
        held_x, held_y = x[held_out], labels[held_out]
        accuracy = _accuracy(final, held_x, held_y)
        loss = algo.objective(final, held_x, held_y, settings["l2"])
        for i, column in enumerate(columns):
            rows.append({"method": column.method, "epsilon": column.epsilon, "step_size": column.step_size, "fold": f,
                         "seed": column.seed, "validation_accuracy": float(accuracy[i]),
                         "validation_loss": float(loss[i])})  # fmt: skip
    return pd.DataFrame(rows)


def select_step_sizes(
    scores: pd.DataFrame, scope: str = "per_method", epsilons: Sequence[float] | None = None
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """Mean validation accuracy per (method, epsilon, step size) and the step size of every run.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`cross_validate`'s rows.
    scope : {"per_method", "shared"}
        Gap A16: ``per_method`` selects each method's best step size; ``shared`` selects one step
        size for all methods, the best on their pooled validation runs.
    epsilons : sequence of float, optional
        The run epsilons to cover. Each takes the selection at the same epsilon, or, if the
        scores hold a single epsilon (the ``reference`` protocol), the selection there.

    Returns
    -------
    summary : pandas.DataFrame
        Mean validation accuracy and loss per (method, epsilon, step size), with ``selected``.
    selected : dict
        ``{method: {epsilon label: step size}}``.

    Notes
    -----
    The highest mean validation accuracy wins; ties (to ``ACCURACY_DECIMALS``) are broken by the
    lower mean validation loss (finite values first; a diverged run's loss is infinite or NaN).
    """
    if scope not in TUNING_SCOPES:
        raise ConfigError(f"wddp.tuning.scope must be one of {', '.join(TUNING_SCOPES)}; got {scope!r}")
    summary = _validation_means(scores, ["method", "epsilon", "step_size"])
    keys = ["method", "epsilon", "step_size"] if scope == "per_method" else ["epsilon", "step_size"]
    ranked = _validation_means(scores, keys)
    if scope == "shared":
        ranked["method"] = "all"
    ranking_loss = ranked["validation_loss"].where(np.isfinite(ranked["validation_loss"]), np.inf)
    ranking_accuracy = ranked["validation_accuracy"].round(ACCURACY_DECIMALS)  # equal means tie despite float noise
    order = ranked.assign(_accuracy=ranking_accuracy, _loss=ranking_loss).sort_values(
        ["method", "epsilon", "_accuracy", "_loss"], ascending=[True, True, False, True]
    )
    best = {key: float(group["step_size"].iloc[0]) for key, group in order.groupby(["method", "epsilon"], sort=True)}
    tuned = sorted(set(summary["epsilon"]))
    selected = {}
    for method in sorted(set(summary["method"])):
        chosen = {e: best[(method if scope == "per_method" else "all", e)] for e in tuned}
        selected[method] = {number_label(e): chosen[e] for e in tuned}
        for epsilon in epsilons or []:
            if number_label(epsilon) not in selected[method]:
                if len(tuned) != 1:
                    raise ConfigError(f"no step size was tuned at epsilon {epsilon:g}; tuned at {tuned}")
                selected[method][number_label(epsilon)] = chosen[tuned[0]]
    summary["selected"] = [
        selected[m][number_label(e)] == s
        for m, e, s in zip(summary["method"], summary["epsilon"], summary["step_size"], strict=True)
    ]
    return summary, selected


def _validation_means(scores: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return (
        scores.groupby(keys, sort=True)
        .agg(validation_accuracy=("validation_accuracy", "mean"), validation_loss=("validation_loss", "mean"),
             n=("validation_accuracy", "size"))
        .reset_index()
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Aggregation, plotting, Table 1


def aggregate(figure: str, runs: Sequence[str | Path], optima: Mapping[str, str | Path]) -> pd.DataFrame:
    """The tidy aggregate of one figure: one row per (dataset, algorithm, x) with mean, lo, hi, n.

    The value is the metric at the last round T of each run; bands are the 20th / 80th
    percentiles over seeds. Extra columns: the mean realized u and noise ratio n / (m n_(1)), and
    the largest composed epsilon (RDP, PLD) over the grouped runs. Accuracy figures also get one
    ``nonpriv`` row per dataset: theta*'s test accuracy (the dashed reference line).
    """
    from dpdl.runs import read_run

    spec = FIGURES[figure]
    metric_column = {"accuracy": "test_accuracy", "gap": "gap"}[spec.metric]
    rows = []
    for path in runs:
        result = read_run(path)
        prov, last = result.provenance, result.trace.iloc[-1]
        if int(last["iteration"]) != prov["params"]["iterations"]:
            raise ArtifactError(
                f"{path}: trace ends at round {int(last['iteration'])}, not T = {prov['params']['iterations']}"
            )
        rows.append({
            "dataset": prov["dataset"].split("/", 1)[1],
            "algorithm": prov["algorithm"],
            spec.x: prov["epsilon"] if spec.x == "epsilon" else prov["params"]["unevenness_nominal"],
            "seed": prov["seed"],
            "value": float(last[metric_column]),
            "unevenness_realized": prov["params"]["unevenness_realized"],
            "noise_ratio": prov["params"]["noise_ratio"],
            "delta": prov["delta"],
            "eps_composed_rdp": prov["eps_composed_rdp"],
            "eps_composed_pld": prov["eps_composed_pld"],
        })  # fmt: skip
    if not rows:
        raise ArtifactError(f"{figure}: no runs to aggregate; is any wddp dataset available?")
    frame = pd.DataFrame(rows)
    keys = ["dataset", "algorithm", spec.x]
    bands = seed_bands(frame, keys, "value")
    extra = frame.groupby(keys, sort=True).agg(
        unevenness_realized=("unevenness_realized", "mean"), noise_ratio=("noise_ratio", "mean"), delta=("delta", "max"),
        eps_composed_rdp=("eps_composed_rdp", "max"), eps_composed_pld=("eps_composed_pld", "max"),
    ).reset_index()  # fmt: skip
    table = bands.merge(extra, on=keys)
    if spec.metric == "accuracy":
        reference = [
            {"dataset": d, "algorithm": NONPRIVATE, "mean": read_optimum(p)["test_accuracy"], "n": 1}
            for d, p in optima.items()
        ]
        reference = pd.DataFrame(reference).assign(lo=lambda t: t["mean"], hi=lambda t: t["mean"])
        table = pd.concat([table, reference], ignore_index=True)
    fixed = {"figure": figure, "metric": spec.metric, "clients": spec.clients}
    if spec.experiment == "unevenness":
        fixed["epsilon"] = spec.epsilon
    table = table.assign(**fixed)
    order = ["figure", "metric", "dataset", "clients", "epsilon", "unevenness", "algorithm", "mean", "lo", "hi", "n"]
    columns = [c for c in order if c in table.columns] + [c for c in table.columns if c not in order]
    return (
        table[columns]
        .sort_values(["dataset", "algorithm", spec.x], key=_panel_order, na_position="first")
        .reset_index(drop=True)
    )


def _panel_order(column: pd.Series) -> pd.Series:
    if column.name == "dataset":
        return column.map({d: i for i, d in enumerate(DATASETS)})
    return column


def plot_figure(agg: pd.DataFrame, ax, spec: FigureSpec):
    """Draw one dataset's panel of a figure from its aggregate rows: mean lines with seed bands.

    Accuracy panels add theta*'s test accuracy as a dashed line; gap panels use a log y axis
    (runs whose mean gap is <= 0 would not show; none is expected, since theta* is the minimum).
    """
    import seaborn as sns

    private = agg[agg["algorithm"] != NONPRIVATE]
    hue_order = [m for m in PRIVATE_METHODS if m in set(private["algorithm"])]
    palette = {m: METHOD_COLORS[m] for m in hue_order}
    sns.lineplot(data=private, x=spec.x, y="mean", hue="algorithm", hue_order=hue_order, palette=palette,
                 style="algorithm", markers=True, dashes=False, errorbar=None, ax=ax)  # fmt: skip
    for method in hue_order:
        rows = private[private["algorithm"] == method].sort_values(spec.x)
        ax.fill_between(rows[spec.x], rows["lo"], rows["hi"], color=palette[method], alpha=0.2, linewidth=0)
    for _, row in agg[agg["algorithm"] == NONPRIVATE].iterrows():
        ax.axhline(row["mean"], color=METHOD_COLORS[NONPRIVATE], linestyle="--", linewidth=1, label=NONPRIVATE)
    if spec.metric == "gap":
        ax.set_yscale("log")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [METHOD_LABELS.get(label, label) for label in labels], fontsize="small")
    ax.set_xlabel("privacy budget ε" if spec.x == "epsilon" else "unevenness u = n_max / n_min")
    ax.set_ylabel(METRICS[spec.metric])
    return ax


def draw_figure(figure: str, agg: pd.DataFrame, png: str | Path, pdf: str | Path) -> None:
    """Write one figure (one panel per dataset in the aggregate) as PNG and PDF."""
    from dpdl.plotting import new_figure, save_figure

    spec = FIGURES[figure]
    datasets = [d for d in DATASETS if d in set(agg["dataset"])]
    if not datasets:
        raise ArtifactError(f"{figure}: the aggregate has no dataset rows")
    fig, axes = new_figure(1, len(datasets), width=4.6, height=3.4)
    for i, (dataset, ax) in enumerate(zip(datasets, axes[0], strict=True)):
        plot_figure(agg[agg["dataset"] == dataset], ax, spec)
        ax.set_title(f"({chr(ord('a') + i)}) {DATASET_TITLES[dataset]}")
    fixed = f"m = {spec.clients}" + ("" if spec.epsilon is None else f", ε = {number_label(spec.epsilon)}")
    fig.suptitle(f"Kang, Liu & Wang, Figure {spec.number}: {METRICS[spec.metric]}, {fixed}")
    fig.text(0.01, 0.005, privacy_footnote(agg), fontsize="x-small", ha="left", va="bottom", wrap=True)
    fig.subplots_adjust(bottom=0.22)
    save_figure(fig, png, pdf)


def privacy_footnote(agg: pd.DataFrame) -> str:
    """The composed privacy of the plotted runs: per nominal epsilon, the largest RDP and PLD epsilon."""
    private = agg[agg["algorithm"] != NONPRIVATE]
    spent = private.groupby("epsilon").agg(rdp=("eps_composed_rdp", "max"), pld=("eps_composed_pld", "max"))
    parts = [f"ε = {number_label(e)}: {row.rdp:.3g} (RDP), {row.pld:.3g} (PLD)" for e, row in spent.iterrows()]
    delta = number_label(float(private["delta"].max()))
    return f"Composed privacy of the plotted runs (dp-accounting, δ = {delta}): " + "; ".join(parts)


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
        rows.append({"cell": "bound", "method": method, "noise_bound": noise, "risk_bound": risk,
                     "distributed": distributed, "non_convex": nonconvex})  # fmt: skip
        if ours:
            bound_of[ours] = (method, noise)
    for dataset, n_rows in rows_train.items():
        cells = [("epsilon", m, eps, None) for m in settings["clients"] for eps in settings["epsilons"]]
        cells += [("unevenness", m, eps, u) for m, eps, _ in UNEVENNESS_SETTINGS for u in settings["unevenness"]]
        for experiment, clients, epsilon, u in cells:
            sizes = [
                np.array([len(s) for s in partition(dataset, n_rows, experiment, clients, seed, unevenness=u or 1,
                                                    threshold_fraction=settings["threshold_fraction"])])
                for seed in seeds(settings)
            ]  # fmt: skip
            for method in PRIVATE_METHODS:
                sigmas = [noise_std(settings, method, epsilon, s)[0] for s in sizes]
                worst = int(np.argmax(sigmas))
                privacy = run_privacy(settings, method, sigmas[worst], sizes[worst])
                label, noise = bound_of[method]
                rows.append({
                    "cell": f"{dataset} {batch_name(experiment, clients, epsilon)}"
                            + (f" eps{number_label(epsilon)}" if u is None else f" u{u}"),
                    "method": label, "algorithm": method, "noise_bound": noise,
                    "dataset": dataset, "experiment": experiment, "clients": clients, "epsilon": epsilon,
                    "unevenness": u, "delta": settings["delta"], "iterations": settings["iterations"], "n": n_rows,
                    "n_min_min": int(min(s.min() for s in sizes)), "n_min_max": int(max(s.min() for s in sizes)),
                    "noise_ratio_mean": float(np.mean([s.sum() / (len(s) * s.min()) for s in sizes])),
                    "sigma_mean": float(np.mean(sigmas)), "sigma_min": float(min(sigmas)), "sigma_max": float(max(sigmas)),
                    "noise_multiplier": privacy["noise_scales"][0]["noise_multiplier"],
                    "eps_composed_rdp": privacy["eps_composed_rdp"], "eps_composed_pld": privacy["eps_composed_pld"],
                })  # fmt: skip
    table = pd.DataFrame(rows)
    integers = ["clients", "unevenness", "iterations", "n", "n_min_min", "n_min_max"]
    return table.astype({c: "Int64" for c in integers})  # empty in the bound rows, integers elsewhere


# ---------------------------------------------------------------------------------------------
# Claims (wddp.md 7.3). "Within the seed spread": a difference no larger than the wider of the
# two 20-80 percentile bands compared.


def _width(row: pd.Series) -> float:
    return float(row["hi"] - row["lo"])


def _private(agg: pd.DataFrame, metric: str) -> pd.DataFrame:
    return agg[(agg["metric"] == metric) & (agg["algorithm"] != NONPRIVATE)]


def _monotone(metric: str, direction: int):
    """Claim test: the metric moves in ``direction`` (+1 up, -1 down) with epsilon, within the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        worst, pairs, violations = None, 0, 0
        for key, rows in _private(agg, metric).groupby(["dataset", "clients", "algorithm"]):
            rows = rows.sort_values("epsilon")
            for (_, a), (_, b) in zip(rows.iloc[:-1].iterrows(), rows.iloc[1:].iterrows(), strict=True):
                pairs += 1
                excess = direction * (a["mean"] - b["mean"]) - max(_width(a), _width(b))
                if excess > 0:
                    violations += 1
                if worst is None or excess > worst[0]:
                    worst = (excess, key, a["epsilon"], b["epsilon"], a["mean"], b["mean"])
        if not pairs:
            return claims_lib.Evidence(None, False, detail="fewer than two epsilons in the grid")
        cell = ", ".join(str(k) for k in worst[1])
        detail = (f"worst step: {cell}, eps {worst[2]:g} -> {worst[3]:g}: {worst[4]:.4g} -> {worst[5]:.4g}"
                  f" (beyond the spread by {max(worst[0], 0):.3g})")  # fmt: skip
        return claims_lib.Evidence(f"{violations} of {pairs} steps against the trend", violations == 0,
                                   spread="20-80 percentile bands over seeds", detail=detail)  # fmt: skip

    return evaluate


def _paired(agg: pd.DataFrame, metric: str, a: str, b: str, keys: list[str]) -> pd.DataFrame:
    rows = _private(agg, metric)
    left = rows[rows["algorithm"] == a].set_index(keys)
    right = rows[rows["algorithm"] == b].set_index(keys)
    both = pd.merge(left[["mean", "lo", "hi"]], right[["mean", "lo", "hi"]], left_index=True, right_index=True,
                    suffixes=("_a", "_b"))  # fmt: skip
    both["width"] = np.maximum(both["hi_a"] - both["lo_a"], both["hi_b"] - both["lo_b"])
    return both.reset_index()


def _agree(a: str, b: str, keys: list[str]):
    """Claim test: methods a and b agree (accuracy and gap) in every cell, within the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        frames = [_paired(agg, metric, a, b, keys).assign(metric=metric) for metric in METRICS]
        both = pd.concat(frames, ignore_index=True)
        if both.empty:
            return claims_lib.Evidence(None, False, detail=f"no cells with both {a} and {b}")
        both["excess"] = (both["mean_a"] - both["mean_b"]).abs() - both["width"]
        worst = both.loc[both["excess"].idxmax()]
        agree = int((both["excess"] <= 0).sum())
        cell = ", ".join(f"{k} {worst[k]:g}" if k != "dataset" else str(worst[k]) for k in keys)
        detail = (f"largest difference beyond the spread: {worst['metric']} at {cell}: "
                  f"{a} {worst['mean_a']:.4g} vs {b} {worst['mean_b']:.4g} (band width {worst['width']:.3g})")  # fmt: skip
        return claims_lib.Evidence(f"{agree} of {len(both)} cells agree", agree == len(both),
                                   spread="20-80 percentile bands over seeds", detail=detail)  # fmt: skip

    return evaluate


def _steady(method: str, over: str, keys: list[str]):
    """Claim test: a method's mean varies over ``over`` by no more than its widest band (each metric)."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        cells, steady, worst = 0, 0, None
        for metric in METRICS:
            rows = _private(agg, metric)
            for key, group in rows[rows["algorithm"] == method].groupby(keys):
                if group[over].nunique() < 2:
                    continue
                cells += 1
                excess = (group["mean"].max() - group["mean"].min()) - (group["hi"] - group["lo"]).max()
                steady += excess <= 0
                if worst is None or excess > worst[0]:
                    worst = (excess, metric, key, group["mean"].min(), group["mean"].max())
        if not cells:
            return claims_lib.Evidence(None, False, detail=f"needs at least two values of {over}")
        cell = ", ".join(str(k) for k in (worst[2] if isinstance(worst[2], tuple) else (worst[2],)))
        detail = f"widest range: {worst[1]} at {cell}: {worst[3]:.4g} .. {worst[4]:.4g}"
        return claims_lib.Evidence(f"{steady} of {cells} curves steady", steady == cells,
                                   spread="20-80 percentile bands over seeds", detail=detail)  # fmt: skip

    return evaluate


def _wddp_not_worse(keys: list[str], uneven_only: bool):
    """Claim test: WD-DP is never worse than the averaged baseline beyond the spread, and its gap is
    lower in most cells."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        acc = _paired(agg, "accuracy", "wddp", "dist_avg", keys)
        gap = _paired(agg, "gap", "wddp", "dist_avg", keys)
        if uneven_only:
            acc, gap = acc[acc["unevenness"] > 1], gap[gap["unevenness"] > 1]
        if gap.empty:
            return claims_lib.Evidence(None, False, detail="no uneven cells in the grid")
        worse_acc = (acc["mean_b"] - acc["mean_a"] - acc["width"] > 0).sum()
        worse_gap = (gap["mean_a"] - gap["mean_b"] - gap["width"] > 0).sum()
        lower = float((gap["mean_a"] < gap["mean_b"]).mean())
        ratio = float(np.median(gap["mean_b"] / gap["mean_a"]))
        holds = worse_acc == 0 and worse_gap == 0 and lower > 0.5
        detail = (f"cells where the baseline is better beyond the spread: accuracy {worse_acc}, gap {worse_gap}; "
                  f"median gap ratio baseline / WD-DP {ratio:.3g}")  # fmt: skip
        return claims_lib.Evidence(f"WD-DP gap lower in {lower:.0%} of {len(gap)} cells", holds,
                                   spread="20-80 percentile bands over seeds", detail=detail)  # fmt: skip

    return evaluate


def _agree_at_u1():
    """Claim test: WD-DP and the baseline agree at u = 1 (accuracy and gap), within the spread."""
    agree = _agree("wddp", "dist_avg", ["dataset", "clients", "unevenness"])

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        even = agg[agg["unevenness"] == 1]
        if even.empty:
            return claims_lib.Evidence(None, False, detail="u = 1 is not in the grid")
        return agree(even)

    return evaluate


def _at_u(agg: pd.DataFrame, metric: str, method: str, u: float) -> pd.DataFrame:
    rows = _private(agg, metric)
    return rows[(rows["algorithm"] == method) & (rows["unevenness"] == u)].set_index(["dataset", "clients"])


def _baseline_degrades(metric: str, direction: int):
    """Claim test: the baseline's metric at the largest u differs from u = 1 in ``direction`` beyond the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        rows = _private(agg, metric)
        if rows.empty or 1 not in set(rows["unevenness"]) or rows["unevenness"].max() <= 1:
            return claims_lib.Evidence(None, False, detail="needs u = 1 and a larger u in the grid")
        u_max = rows["unevenness"].max()
        low, high = _at_u(agg, metric, "dist_avg", 1), _at_u(agg, metric, "dist_avg", u_max)
        both = pd.merge(low, high, left_index=True, right_index=True, suffixes=("_1", "_max"))
        width = np.maximum(both["hi_1"] - both["lo_1"], both["hi_max"] - both["lo_max"])
        change = direction * (both["mean_max"] - both["mean_1"])
        holds = int((change > width).sum())
        detail = "; ".join(f"{d} m={m}: {r['mean_1']:.4g} -> {r['mean_max']:.4g}" for (d, m), r in both.iterrows())
        return claims_lib.Evidence(f"{holds} of {len(both)} settings, u = 1 -> {u_max:g}", holds == len(both),
                                   spread="20-80 percentile bands over seeds", detail=detail)  # fmt: skip

    return evaluate


def _strongest_at_smallest_epsilon(agg: pd.DataFrame) -> claims_lib.Evidence:
    """Claim test: the baseline's accuracy loss from u = 1 to the largest u is larger at (8, 0.01) than at (32, 0.1)."""
    rows = _private(agg, "accuracy")
    if rows.empty or 1 not in set(rows["unevenness"]) or rows["unevenness"].max() <= 1:
        return claims_lib.Evidence(None, False, detail="needs u = 1 and a larger u in the grid")
    u_max = rows["unevenness"].max()
    drop = _at_u(agg, "accuracy", "dist_avg", 1)["mean"] - _at_u(agg, "accuracy", "dist_avg", u_max)["mean"]
    pairs = []
    for dataset in drop.index.get_level_values("dataset").unique():
        if (dataset, 8) in drop.index and (dataset, 32) in drop.index:
            pairs.append((dataset, drop[(dataset, 8)], drop[(dataset, 32)]))
    if not pairs:
        return claims_lib.Evidence(None, False, detail="needs the (8, 0.01) and (32, 0.1) settings")
    holds = all(small > large for _, small, large in pairs)
    detail = "; ".join(f"{d}: drop {s:.4g} at (8, 0.01) vs {g:.4g} at (32, 0.1)" for d, s, g in pairs)
    return claims_lib.Evidence(f"{sum(s > g for _, s, g in pairs)} of {len(pairs)} datasets", holds, detail=detail)


def _nonprivate_accuracy(dataset: str, low: float, high: float):
    """Claim test: theta*'s test accuracy lies in [low, high]."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        rows = agg[(agg["algorithm"] == NONPRIVATE) & (agg["dataset"] == dataset)]
        if rows.empty:
            return claims_lib.Evidence(None, False, detail=f"no {dataset} rows (data unavailable)")
        value = float(rows["mean"].iloc[0])
        return claims_lib.Evidence(
            round(value, 4), low <= value <= high, detail="test accuracy of theta* (L2 as configured)"
        )

    return evaluate


PAPER_SCALE = {"seeds": 10, "iterations": 1000}  # R = 10 (wddp.md 4.4, A17), T = 1000 (Section 5)


def _claim(id_: str, where: str, statement: str, paper_value: str, tolerance: str, justification: str,
           aggregate: str, evaluate, needs: Mapping[str, float]) -> claims_lib.Claim:  # fmt: skip
    return claims_lib.Claim(f"{STUDY}.{id_}", STUDY, where, statement, paper_value, tolerance, justification,
                            aggregate, evaluate, dict(needs))  # fmt: skip


SPREAD = "difference within the wider 20-80 percentile band over seeds"
CLAIMS = [
    _claim("accuracy_rises_with_epsilon", "Figs 1, 4, 6, 8, 10; Section 5 text",
           "Performance is becoming better when ε increases (every method, dataset and m)", "qualitative",
           f"no step to a larger ε lowers mean accuracy by more than the spread ({SPREAD})",
           "the paper prints no numbers; seed noise is the only yardstick", "versus_epsilon",
           _monotone("accuracy", +1), PAPER_SCALE),
    _claim("gap_falls_with_epsilon", "Figs 3, 5, 7, 9, 11; Section 5 text",
           "With the increasing of ε, the optimal gap decreases", "qualitative",
           f"no step to a larger ε raises the mean gap by more than the spread ({SPREAD})",
           "as above", "versus_epsilon", _monotone("gap", -1), PAPER_SCALE),
    _claim("wddp_matches_central", "Figs 1, 3-11; wddp.md 7.3 item 2",
           "WD-DP is similar to the centralized method (straight up to centralized methods)", "qualitative",
           f"accuracy and gap of WD-DP and centralized DP-GD agree in every (dataset, m, ε) cell ({SPREAD})",
           "under per-round aggregation both are the same process with independent noise", "versus_epsilon",
           _agree("wddp", "central", ["dataset", "clients", "epsilon"]), PAPER_SCALE),
    _claim("wddp_steady_in_m", "Figs 1, 3-11; wddp.md 7.3 item 2",
           "WD-DP's curves do not depend on the number of clients m", "qualitative",
           "for each (dataset, ε, metric) the range of WD-DP's mean over m is within its widest band",
           "WD-DP's noise depends on n only (eq. 3)", "versus_epsilon",
           _steady("wddp", "clients", ["dataset", "epsilon"]), {**PAPER_SCALE, "client_counts": 2}),
    _claim("wddp_beats_baseline_random_sizes", "Figs 1, 3-11; Section 5 text",
           "WD-DP is better than the method proposed in (Jayaraman et al.) with uneven client sizes", "qualitative",
           "the baseline is never better beyond the spread (accuracy or gap) and WD-DP's gap is lower in most cells",
           "σ_baseline / σ_WD-DP = n / (m n_(1)) > 1 for uneven sizes (wddp.md 2.4)", "versus_epsilon",
           _wddp_not_worse(["dataset", "clients", "epsilon"], uneven_only=False), PAPER_SCALE),
    _claim("wddp_beats_baseline_two_groups", "Figs 2, 12-16; Section 5 text",
           "For u > 1 WD-DP is better than the averaged baseline", "qualitative",
           "as above, over the cells with u > 1", "σ ratio (1 + u) / 2 for two equal groups (wddp.md 7.3 item 3)",
           "versus_unevenness", _wddp_not_worse(["dataset", "clients", "unevenness"], uneven_only=True),
           {**PAPER_SCALE, "max_unevenness": 9}),
    _claim("equal_at_u1", "Figs 2, 12-16; Section 5 text",
           "When u = 1 the accuracy of WD-DP is similar to the method proposed in (Jayaraman et al.)", "qualitative",
           f"accuracy and gap of WD-DP and the baseline agree at u = 1 in every setting ({SPREAD})",
           "identical weights and σ at an even split (the unit tests check identical trajectories)",
           "versus_unevenness", _agree_at_u1(),
           PAPER_SCALE),
    _claim("baseline_gap_grows_with_u", "Figs 12, 14, 16; Section 5 text",
           "The optimal gap of (Jayaraman et al.) increases rapidly or fluctuates sharply as u increases",
           "qualitative", "the baseline's mean gap at the largest u exceeds u = 1 by more than the spread, every setting",
           "its σ grows as (1 + u) / 2", "versus_unevenness", _baseline_degrades("gap", +1),
           {**PAPER_SCALE, "max_unevenness": 9}),
    _claim("baseline_accuracy_drops_with_u", "Figs 2, 13, 15; Section 5 text",
           "The accuracy of (Jayaraman et al.) decreases rapidly or fluctuates sharply as u increases",
           "qualitative", "the baseline's mean accuracy at the largest u is below u = 1 by more than the spread, every setting",
           "its σ grows as (1 + u) / 2; wddp.md 7.3 item 5 expects it weakest at (32, 0.1)", "versus_unevenness",
           _baseline_degrades("accuracy", -1), {**PAPER_SCALE, "max_unevenness": 9}),
    _claim("wddp_steady_in_u", "Figs 2, 12-16; Section 5 text",
           "When u increases the accuracy (and optimal gap) of WD-DP is steady", "qualitative",
           "for each (dataset, setting, metric) the range of WD-DP's mean over u is within its widest band",
           "WD-DP's noise depends on n only", "versus_unevenness",
           _steady("wddp", "unevenness", ["dataset", "clients"]), {**PAPER_SCALE, "max_unevenness": 9}),
    _claim("degradation_strongest_at_smallest_eps", "Figs 13, 15; wddp.md 7.3 item 5",
           "The baseline's degradation in u is strongest at ε = 0.01 (Fig. 15) and weakest at ε = 0.1 (Fig. 13)",
           "qualitative (note's reading)", "accuracy drop u = 1 -> largest u larger at (m, ε) = (8, 0.01) than at (32, 0.1)",
           "larger σ at small ε moves the model further from θ*", "versus_unevenness",
           _strongest_at_smallest_epsilon, {**PAPER_SCALE, "max_unevenness": 9}),
    _claim("nonprivate_accuracy_kdd", "wddp.md 7.3 item 6 (sanity; not from the paper)",
           "Non-private logistic regression test accuracy on KDD Cup 99", "0.98-0.99",
           "inside [0.98, 0.99]", "the note's typical figure for logistic regression on KDD", "nonprivate_kdd",
           _nonprivate_accuracy("kdd", 0.98, 0.99), {}),
    _claim("nonprivate_accuracy_adult", "wddp.md 7.3 item 6 (sanity; not from the paper)",
           "Non-private logistic regression test accuracy on Adult", "0.82-0.85",
           "inside [0.82, 0.85]", "the note's typical figure for logistic regression on Adult", "nonprivate_adult",
           _nonprivate_accuracy("adult", 0.82, 0.85), {}),
]  # fmt: skip


def claim_aggregates(frames: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame | None]:
    """The claims' inputs: the epsilon-figure and the u-figure aggregates stacked, and theta*'s rows per dataset."""
    grouped: dict[str, list[pd.DataFrame]] = {"versus_epsilon": [], "versus_unevenness": []}
    for figure, frame in frames.items():
        grouped[f"versus_{FIGURES[figure].experiment}"].append(frame)
    stacked = {name: pd.concat(parts, ignore_index=True) if parts else None for name, parts in grouped.items()}
    for dataset in DATASETS:  # theta*'s rows per dataset; None (data unavailable) when it was not built
        rows = [f[(f["algorithm"] == NONPRIVATE) & (f["dataset"] == dataset)] for f in frames.values()]
        rows = [r for r in rows if not r.empty]
        stacked[f"nonprivate_{dataset}"] = pd.concat(rows, ignore_index=True) if rows else None
    return stacked


def claims_scale(settings: Mapping) -> dict[str, float]:
    """The config values the claims' ``needs`` are compared with."""
    return {
        "seeds": settings["seeds"],
        "iterations": settings["iterations"],
        "client_counts": len(settings["clients"]),
        "max_unevenness": max(settings["unevenness"]),
    }


# ---------------------------------------------------------------------------------------------
# Commands


def add_commands(commands) -> None:
    """Register ``dpdl wddp <step>`` (optimum, tune, run, aggregate, figure, table1, claims)."""
    parser = commands.add_parser(STUDY, help="Kang, Liu & Wang's WD-DP study (Figures 1-16, Table 1).")
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")

    def step(name: str, function, help_text: str) -> argparse.ArgumentParser:
        sub = steps.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(command=function)
        return sub

    def dataset_inputs(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--dataset", choices=DATASETS, required=True)
        sub.add_argument("--data", type=Path, required=True, help="prepared arrays data/processed/wddp/<dataset>.npz")
        sub.add_argument("--card", type=Path, required=True, help="its JSON card (for the dataset hash)")
        sub.add_argument("--settings", required=True, help="the config's wddp section as JSON")

    sub = step("optimum", cmd_optimum, "Compute theta*, the non-private optimum of one dataset.")
    dataset_inputs(sub)
    sub.add_argument("--out", type=Path, required=True)

    sub = step("tune", cmd_tune, "Select each method's step size by K-fold cross-validation on the training set.")
    dataset_inputs(sub)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "JSON"), required=True)

    sub = step("run", cmd_run, "Run one batch (all methods, epsilons or u, and seeds of a figure grid).")
    dataset_inputs(sub)
    sub.add_argument("--experiment", choices=("epsilon", "unevenness"), required=True)
    sub.add_argument("--clients", type=int, required=True, help="m")
    sub.add_argument("--epsilon", type=float, default=None, help="fixed epsilon (unevenness batches only)")
    sub.add_argument("--tuning", type=Path, required=True, help="the selected step sizes (JSON)")
    sub.add_argument("--optimum", type=Path, required=True, help="theta* of the dataset")

    sub = step("aggregate", cmd_aggregate, "Aggregate the runs of one figure over seeds.")
    sub.add_argument("figure", choices=sorted(FIGURES))
    sub.add_argument("--runs", type=Path, nargs="*", default=[])
    sub.add_argument("--optima", type=Path, nargs="*", default=[])
    sub.add_argument("--out", type=Path, required=True)

    sub = step("figure", cmd_figure, "Draw one figure from its aggregate.")
    sub.add_argument("figure", choices=sorted(FIGURES))
    sub.add_argument("--aggregate", type=Path, required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("PNG", "PDF"), required=True)

    sub = step("table1", cmd_table1, "Write Table 1: the bounds and the computed sigma of every cell.")
    sub.add_argument("--cards", type=Path, nargs="*", default=[])
    sub.add_argument("--settings", required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)

    sub = step("claims", cmd_claims, "Judge the study's claims from the figure aggregates.")
    sub.add_argument("--aggregates", type=Path, nargs="*", default=[])
    sub.add_argument("--settings", required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)


def _settings(text: str) -> dict:
    settings = parse_json_object(text, "--settings")
    required = {"epsilons", "delta", "clients", "unevenness", "seeds", "iterations", "trace_points", "step_sizes",
                "tuning", "threshold_fraction", "init_std", "l2", "aggregation", "calibration", "eq3_constant"}  # fmt: skip
    missing = sorted(required - set(settings))
    tuning_keys = ("folds", "seeds", "epsilon", "clients", "protocol", "scope")
    missing += [f"tuning.{k}" for k in tuning_keys if k not in settings.get("tuning", {})]
    if missing:
        raise ConfigError(f"--settings lacks the wddp keys {missing}; pass the validated config's wddp section")
    return dict(check_settings(settings))


def _card_sha(path: Path) -> str:
    card = read_json(path)
    if "npz_sha256" not in card:
        raise ArtifactError(f"{path}: no npz_sha256; rebuild the prepared dataset")
    return card["npz_sha256"]


def cmd_optimum(args: argparse.Namespace) -> int:
    """``dpdl wddp optimum``."""
    settings = _settings(args.settings)
    data = load_dataset(args.data)
    optimum = compute_optimum(data, settings["l2"])
    write_optimum(args.out, optimum, _card_sha(args.card), settings["l2"])
    log.info("%s: theta* loss %.6g, ||grad|| %.2e, test accuracy %.4f", args.dataset, optimum["loss"],
             optimum["gradient_norm"], optimum["test_accuracy"])  # fmt: skip
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    """``dpdl wddp tune``."""
    settings = _settings(args.settings)
    data = load_dataset(args.data)
    scores = cross_validate(settings, args.dataset, data)
    summary, selected = select_step_sizes(scores, settings["tuning"]["scope"], run_epsilons(settings))
    csv_path, json_path = args.out
    write_text(csv_path, summary.to_csv(index=False, lineterminator="\n"))
    write_json(
        json_path, {"step_sizes": selected, "settings": {**settings["tuning"], "dataset_sha256": _card_sha(args.card)}}
    )
    log.info("%s: selected step sizes %s", args.dataset, selected)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """``dpdl wddp run``."""
    from dpdl.runs import write_run

    settings = _settings(args.settings)
    if (args.experiment == "unevenness") != (args.epsilon is not None):
        raise ConfigError("--epsilon is required for --experiment unevenness and not allowed for epsilon")
    data = load_dataset(args.data)
    tuning = read_json(args.tuning)
    results = run_batch(settings, args.dataset, args.experiment, args.clients, args.epsilon, data=data,
                        dataset_sha256=_card_sha(args.card), tuning=tuning, optimum=read_optimum(args.optimum))  # fmt: skip
    for path, result in results:
        write_run(path, result)
    log.info("wrote %d runs", len(results))
    return 0


def cmd_aggregate(args: argparse.Namespace) -> int:
    """``dpdl wddp aggregate``."""
    optima = {Path(p).stem: p for p in args.optima}
    write_text(args.out, aggregate(args.figure, args.runs, optima).to_csv(index=False, lineterminator="\n"))
    return 0


def cmd_figure(args: argparse.Namespace) -> int:
    """``dpdl wddp figure``."""
    draw_figure(args.figure, pd.read_csv(args.aggregate), *args.out)
    return 0


def cmd_table1(args: argparse.Namespace) -> int:
    """``dpdl wddp table1``."""
    settings = _settings(args.settings)
    cards = [read_json(p) for p in args.cards]
    rows_train = {
        card["dataset"]: int(card["rows_train"]) for card in sorted(cards, key=lambda c: DATASETS.index(c["dataset"]))
    }
    title = (
        "# Kang, Liu & Wang, Table 1: noise and excess-risk bounds (rows `bound`), and the σ we compute\n\n"
        f"Calibration `{settings['calibration']}`, aggregation `{settings['aggregation']}`, δ = {settings['delta']}, "
        f"T = {settings['iterations']}, G = {LIPSCHITZ:g}; σ over {settings['seeds']} repetitions (random partitions); "
        "composed ε of the run with the largest σ."
    )
    write_table(table1(settings, rows_train), *args.out, title=title)
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    """``dpdl wddp claims``."""
    settings = _settings(args.settings)
    frames = {Path(p).stem: pd.read_csv(p) for p in args.aggregates}
    card = claims_lib.scorecard(
        CLAIMS, claim_aggregates(frames), scale=claims_scale(settings), switches=switches(settings)
    )
    write_table(card, *args.out, title="# wddp claims (Kang, Liu & Wang)")
    return 0
