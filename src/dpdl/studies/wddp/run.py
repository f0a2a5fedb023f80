"""One wddp batch: the seed streams, partitions and noise of its runs, the descent, and each run's record.

A batch is every method, epsilon (or u) and seed of one dataset's figure grid, run as the columns
of one parameter matrix (:func:`descend`). Section and gap numbers refer to ``notes/wddp.md``.

The algorithms (scipy), the privacy layer (dp_accounting) and the run contract (jsonschema) are
imported inside the functions that use them, so the aggregate, figure and claims steps load none
of them.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpdl.data.partition import shards_of_sizes, threshold_random_sizes, two_group_sizes
from dpdl.errors import ArtifactError
from dpdl.io import load_npz
from dpdl.progress import Progress
from dpdl.studies.wddp.grid import (
    PRIVATE_METHODS,
    STUDY,
    batch_name,
    cell_name,
    run_path,
    seeds,
    step_size_key,
    switches,
    unevenness_values,
)

if TYPE_CHECKING:
    from dpdl.privacy.accounting import PrivacyEvent
    from dpdl.runs import RunResult

log = logging.getLogger(__name__)

# the accountants' numerical slack on a composed epsilon (its figures and claims)
BUDGET_RELATIVE_SLACK = 1e-6
LIPSCHITZ = 1.0  # G: ||x|| = 1 and |h - y| < 1 (wddp.md 1.3)
EXPERIMENT_KEYS = {"epsilon": 0, "unevenness": 1, "tuning": 2}  # spawn-key codes of the seed streams


# ---------------------------------------------------------------------------------------------
# Seeds, partitions, calibration


def seed_sequence(
    dataset: str, purpose: str, epsilon: float | None, seed: int, *cell: int
) -> np.random.SeedSequence:
    """The seed sequence of one stream: ``run_seed_sequence`` keyed further by the grid cell."""
    from dpdl.runs import run_seed_sequence

    root = run_seed_sequence(STUDY, dataset, purpose, epsilon, seed)
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(int(c) for c in cell))


def initial_model(dataset: str, seed: int, dim: int, init_std: float, *cell: int) -> np.ndarray:
    """theta_0 ~ N(0, init_std^2 I) of one repetition, shared by every method (gap A6)."""
    rng = np.random.default_rng(seed_sequence(dataset, "init", None, seed, *cell))
    return init_std * rng.standard_normal(dim)


def partition(
    dataset: str,
    n_rows: int,
    experiment: str,
    clients: int,
    seed: int,
    *,
    unevenness: int = 1,
    threshold_fraction: float = 0.2,
    cell: tuple[int, ...] = (),
) -> list[np.ndarray]:
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
    from dpdl.privacy.wddp import wddp_effective_sample_size, wddp_noise_std

    n_eff = wddp_effective_sample_size(list(map(int, sizes)), method)
    sigma = wddp_noise_std(
        epsilon,
        settings["delta"],
        n_eff=n_eff,
        n_iterations=settings["iterations"],
        lipschitz=LIPSCHITZ,
        calibration=settings["calibration"],
        c=settings["eq3_constant"],
    )
    return sigma, n_eff


def privacy_events(settings: Mapping, method: str, sigma: float, sizes: Sequence[int]) -> list[PrivacyEvent]:
    """The releases of one run, for the record whose privacy is worst.

    Per-round: T Gaussian releases of the aggregate gradient, sensitivity 2G / N_eff. One-shot
    (no proof in the paper): each client's T local steps are Gaussian releases of its own mean
    gradient, sensitivity 2G / n_j, worst for the smallest client; the final average is
    post-processing. Centralized DP-GD is per-round in both settings.
    """
    from dpdl.privacy.accounting import PrivacyEvent
    from dpdl.privacy.wddp import wddp_effective_sample_size, wddp_sensitivity

    if settings["aggregation"] == "one_shot" and method != "central":
        sensitivity = wddp_sensitivity(int(min(sizes)), LIPSCHITZ)
    else:
        sensitivity = wddp_sensitivity(wddp_effective_sample_size(list(map(int, sizes)), method), LIPSCHITZ)
    return [PrivacyEvent("gaussian", sigma / sensitivity, settings["iterations"])]


@functools.lru_cache(maxsize=4096)
def _privacy_record_cached(noise_multiplier: float, count: int, delta: float) -> str:
    from dpdl.privacy.accounting import PrivacyEvent, privacy_record

    record = privacy_record(
        PrivacyEvent("gaussian", noise_multiplier, count), delta=delta, eps_per_iteration=None
    )
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
    settings: Mapping,
    dataset: str,
    n_rows: int,
    dim: int,
    experiment: str,
    clients: int,
    epsilon: float | None,
    step_sizes: Mapping[str, Mapping[str, float]],
) -> tuple[list[Group], list[Column]]:
    """The groups and columns of one batch, each column with its sigma, step size and output path.

    ``step_sizes[method][key]`` is the cross-validated step size
    (:func:`dpdl.studies.wddp.tune.select_step_sizes`), keyed by the run's epsilon label, or by its
    run cell (``eps0.05``, ``u3``) under ``tuning.protocol: per_setting``
    (:func:`dpdl.studies.wddp.grid.step_size_key`).
    """
    batch = batch_name(experiment, clients, epsilon)
    groups, columns = [], []
    cells = unevenness_values(settings, dataset) if experiment == "unevenness" else [None]
    for u in cells:
        for seed, shards in cell_partitions(settings, dataset, n_rows, experiment, clients, u):
            groups.append(Group(seed, u, shards, initial_model(dataset, seed, dim, settings["init_std"])))
            sizes = groups[-1].sizes
            epsilons = settings["epsilons"] if experiment == "epsilon" else [epsilon]
            for method in PRIVATE_METHODS:
                for eps in epsilons:
                    sigma, n_eff = noise_std(settings, method, eps, sizes)
                    path = run_path(dataset, batch, method, cell_name(experiment, eps, u), seed)
                    eta = step_sizes[method][step_size_key(settings, experiment, eps, u)]
                    columns.append(Column(method, eps, seed, u, len(groups) - 1, sigma, n_eff, eta, path))
    return groups, columns


def cell_partitions(
    settings: Mapping, dataset: str, n_rows: int, experiment: str, clients: int, unevenness: float | None
) -> Iterator[tuple[int, list[np.ndarray]]]:
    """(seed, shards) of each repetition of one grid cell, in seed order (the runs and Table 1 share them)."""
    for seed in seeds(settings):
        shards = partition(
            dataset,
            n_rows,
            experiment,
            clients,
            seed,
            unevenness=unevenness or 1,
            threshold_fraction=settings["threshold_fraction"],
        )
        yield seed, shards


def noise_generator(dataset: str, column: Column, experiment: str, clients: int) -> np.random.Generator:
    """The generator of one run's noise: (study, dataset, method, epsilon, seed) and the grid cell."""
    cell = (EXPERIMENT_KEYS[experiment], clients, column.unevenness or 0)
    return np.random.default_rng(seed_sequence(dataset, column.method, column.epsilon, column.seed, *cell))


def descend(
    settings: Mapping,
    x: np.ndarray,
    labels: np.ndarray,
    groups: Sequence[Group],
    columns: Sequence[Column],
    rngs: Sequence[np.random.Generator],
    record_at: Sequence[int],
    label: str,
) -> np.ndarray:
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
    pooled = [
        i for i, c in enumerate(columns) if settings["aggregation"] == "per_round" or c.method == "central"
    ]
    pooled_set = set(pooled)
    if pooled:
        weights = np.empty((n_rows, len(pooled)))
        for j, i in enumerate(pooled):
            weights[:, j] = algo.record_weights(columns[i].method, groups[columns[i].group].shards, n_rows)
        result = algo.per_round_descent(
            x,
            labels,
            theta0[:, pooled],
            weights,
            sigma[pooled],
            eta[pooled],
            iterations=iterations,
            rngs=[rngs[i] for i in pooled],
            record_at=record_at,
            l2=l2,
            progress=Progress(label, iterations).update,
        )
        snapshots[:, :, pooled] = result.thetas
    for g, group in enumerate(groups):
        local = [i for i, c in enumerate(columns) if c.group == g and i not in pooled_set]
        if not local:
            continue
        average = np.stack([algo.client_weights(columns[i].method, group.sizes) for i in local], axis=1)
        result = algo.one_shot_descent(
            x,
            labels,
            theta0[:, local],
            group.shards,
            average,
            sigma[local],
            eta[local],
            iterations=iterations,
            rngs=[rngs[i] for i in local],
            record_at=record_at,
            l2=l2,
            progress=Progress(f"{label} one-shot group {g + 1}/{len(groups)}", iterations).update,
        )
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
    accuracy = np.stack([algo.accuracy(theta, data["X_test"], data["y_test"]) for theta in snapshots])
    return {
        "train_loss": loss,
        "gap": loss - optimum_loss,
        "test_accuracy": accuracy,
        "theta_norm": np.linalg.norm(snapshots, axis=1),
    }


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a prepared wddp dataset, checked for what the study needs (||x|| <= 1, {0, 1} labels)."""
    arrays = load_npz(path)
    missing = [k for k in ("X_train", "y_train", "X_test", "y_test") if k not in arrays]
    if missing:
        raise ArtifactError(f"{path}: missing arrays {missing}; rebuild it with the data_prepare rule")
    data = {k: np.asarray(arrays[k], dtype=float) for k in ("X_train", "y_train", "X_test", "y_test")}
    norm = float(np.linalg.norm(data["X_train"], axis=1).max())
    if norm > 1 + 1e-9:
        raise ArtifactError(
            f"{path}: a training row has norm {norm} > 1, so G = 1 does not hold (wddp.md A8)"
        )
    if not set(np.unique(data["y_train"])) <= {0.0, 1.0}:
        raise ArtifactError(f"{path}: labels must be 0 or 1 (wddp.md 1.3)")
    return data


def run_batch(
    settings: Mapping,
    dataset: str,
    experiment: str,
    clients: int,
    epsilon: float | None,
    *,
    data: Mapping[str, np.ndarray],
    dataset_sha256: str,
    tuning: Mapping,
    optimum: Mapping,
) -> list[tuple[str, RunResult]]:
    """Run one batch and return each column's path and run record (trace + provenance)."""
    from dpdl.runs import RunResult, package_versions, run_timing, stopwatch

    x, labels = data["X_train"], data["y_train"]
    groups, columns = build_batch(
        settings, dataset, x.shape[0], x.shape[1], experiment, clients, epsilon, tuning["step_sizes"]
    )
    rngs = [noise_generator(dataset, column, experiment, clients) for column in columns]
    record_at = record_points(settings["iterations"], settings["trace_points"])
    label = f"{dataset} {batch_name(experiment, clients, epsilon)} ({len(columns)} runs)"
    elapsed = stopwatch()
    snapshots = descend(settings, x, labels, groups, columns, rngs, record_at, label)
    wall, cpu = elapsed()
    diverged = [c.path for i, c in enumerate(columns) if not np.isfinite(snapshots[..., i]).all()]
    if diverged:
        log.warning(
            "%d runs have non-finite models (step size too large?), e.g. %s", len(diverged), diverged[0]
        )
    metrics = evaluate(snapshots, data, optimum["loss"], settings["l2"])
    shared = {
        "versions": package_versions(),
        "timing": run_timing(wall, cpu, settings["iterations"], len(columns)),
    }
    results = []
    for i, column in enumerate(columns):
        trace = pd.DataFrame(
            {"iteration": np.asarray(record_at), **{name: values[:, i] for name, values in metrics.items()}}
        )
        provenance = run_provenance(
            settings,
            dataset,
            dataset_sha256,
            experiment,
            clients,
            column,
            groups[column.group],
            tuning,
            optimum,
        )
        results.append((column.path, RunResult(trace, {**provenance, **shared})))
    return results


def run_provenance(
    settings: Mapping,
    dataset: str,
    dataset_sha256: str,
    experiment: str,
    clients: int,
    column: Column,
    group: Group,
    tuning: Mapping,
    optimum: Mapping,
) -> dict:
    """The provenance record of one run (see ``schemas/run.schema.json``)."""
    from dpdl.privacy.wddp import wddp_sensitivity

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
        "step_size_selection": {
            "grid": settings["step_sizes"],
            **tuning["settings"],
            "source": "cross-validation",
        },
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
