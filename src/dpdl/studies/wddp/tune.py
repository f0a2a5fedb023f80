"""theta*, the non-private optimum every gap is measured from, and the step sizes chosen by cross-validation.

Section and gap numbers refer to ``notes/wddp.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import load_npz, save_npz
from dpdl.studies.common import format_number
from dpdl.studies.wddp.grid import PRIVATE_METHODS, cell_name, run_epsilons, unevenness_values
from dpdl.studies.wddp.run import (
    EXPERIMENT_KEYS,
    Column,
    Group,
    descend,
    initial_model,
    noise_std,
    partition,
    seed_sequence,
)

TUNING_SCOPES = ("per_method", "shared")  # gap A16: one step size per method, or one for all
ACCURACY_DECIMALS = 12  # mean validation accuracies equal to this many decimals tie in step-size selection


# ---------------------------------------------------------------------------------------------
# theta*


def compute_optimum(data: Mapping[str, np.ndarray], l2: float) -> dict:
    """theta* of the pooled training data and its loss, gradient norm and accuracies."""
    from dpdl.algorithms import wddp as algo

    found = algo.nonprivate_optimum(data["X_train"], data["y_train"], l2)
    if not found.converged:
        raise ArtifactError(
            f"theta* did not converge: ||grad|| = {found.gradient_norm:.3g} after {found.iterations} "
            f"iterations (needs < {algo.OPTIMUM_GRADIENT_NORM}); raise OPTIMUM_MAX_ITERATIONS in "
            "dpdl.algorithms.wddp"
        )
    accuracy = {
        split: float(algo.accuracy(found.theta, data[f"X_{split}"], data[f"y_{split}"]))
        for split in ("train", "test")
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
    save_npz(
        path, {"theta": np.asarray(optimum["theta"]), "record": np.array(json.dumps(record, sort_keys=True))}
    )


# ---------------------------------------------------------------------------------------------
# Step-size cross-validation


def cross_validated_epsilons(settings: Mapping) -> list[float]:
    """The epsilons at which step sizes are cross-validated (``wddp.tuning.protocol``, gap A16).

    ``per_epsilon``: every run epsilon (:func:`dpdl.studies.wddp.grid.run_epsilons`, Experiment A's
    grid and Experiment B's three); ``reference``: the one reference epsilon of the note's
    recommendation, whose step sizes :func:`select_step_sizes` then gives every run epsilon.
    """
    if settings["tuning"]["protocol"] == "reference":
        return [settings["tuning"]["epsilon"]]
    return run_epsilons(settings)


def cross_validate(settings: Mapping, dataset: str, data: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Validation accuracy and loss on held-out training rows.

    One per (method, epsilon, step size, fold, seed).

    wddp.md 4.4 / gap A16: K-fold CV on the training set only, at the reference m of Experiment
    A (random sizes) and at each epsilon of :func:`cross_validated_epsilons`; the test set is never
    used. The privacy cost of tuning is not accounted, as in the paper.
    """
    partitions = [("tuning", settings["tuning"]["clients"], 1)]
    scores = _cross_validate(settings, dataset, data, partitions, cross_validated_epsilons(settings))
    return scores.drop(columns="unevenness")


def cross_validate_setting(
    settings: Mapping,
    dataset: str,
    data: Mapping[str, np.ndarray],
    experiment: str,
    clients: int,
    epsilon: float | None,
) -> pd.DataFrame:
    """:func:`cross_validate` at every setting of one batch (``tuning.protocol: per_setting``, gap A16).

    Section 5: "In all the experiments, ... learning rate eta is chosen by cross-validation", read
    as a cross-validation in each experiment setting. Experiment A's batch (m): m clients of
    random sizes (as its runs), at every epsilon of ``epsilons``; Experiment B's batch (m,
    epsilon): two groups of m / 2 clients at every u of the dataset's ``unevenness`` (as its runs), at that
    epsilon. Each row gets the ``cell`` of the runs that use it (``eps0.05``, ``u3``). The folds,
    theta_0 and noise draws are those of :func:`cross_validate` (common random numbers across
    settings: a setting whose partition does not enter the update, WD-DP and centralized DP-GD
    under per-round aggregation, gets the same scores at every m and u).
    """
    if experiment == "epsilon":
        partitions, epsilons = [("tuning", clients, 1)], list(settings["epsilons"])
    else:
        partitions = [("unevenness", clients, u) for u in unevenness_values(settings, dataset)]
        epsilons = [epsilon]
    scores = _cross_validate(settings, dataset, data, partitions, epsilons)
    cells = [
        cell_name(experiment, e, None if pd.isna(u) else int(u))
        for e, u in zip(scores["epsilon"], scores["unevenness"], strict=True)
    ]
    return scores.assign(clients=clients, cell=cells)


def _cross_validate(
    settings: Mapping,
    dataset: str,
    data: Mapping[str, np.ndarray],
    partitions: Sequence[tuple[str, int, int]],
    epsilons: Sequence[float],
) -> pd.DataFrame:
    """The CV rows of every (partition, method, epsilon, step size) on every fold and seed.

    ``partitions`` are ``(experiment, clients, u)``: ``tuning`` (random sizes, Experiment A's
    rule) or ``unevenness`` (two groups, Experiment B's rule) of each training fold.
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
            for experiment, clients, u in partitions:
                # A two-group partition's stream is keyed apart from the runs' (which have no fold)
                cell = (f,) if experiment == "tuning" else (EXPERIMENT_KEYS["tuning"], f)
                shards = partition(
                    dataset,
                    len(train),
                    experiment,
                    clients,
                    seed,
                    unevenness=u,
                    threshold_fraction=settings["threshold_fraction"],
                    cell=cell,
                )
                theta0 = initial_model(
                    dataset, seed, x.shape[1], settings["init_std"], EXPERIMENT_KEYS["tuning"], f
                )
                groups.append(Group(seed, u if experiment == "unevenness" else None, shards, theta0))
                for method in PRIVATE_METHODS:
                    for epsilon in epsilons:
                        sigma, n_eff = noise_std(settings, method, epsilon, groups[-1].sizes)
                        for eta in settings["step_sizes"]:
                            group, u_cell = len(groups) - 1, groups[-1].unevenness
                            columns.append(
                                Column(method, epsilon, seed, u_cell, group, sigma, n_eff, eta, "")
                            )
        # Common random numbers: every method sees the same noise draws at a (fold, seed, epsilon,
        # step size), so the comparison of step sizes is not decided by noise (and identical
        # processes, WD-DP and centralized DP-GD under per-round aggregation, get identical scores).
        rngs = [
            np.random.default_rng(
                seed_sequence(
                    dataset,
                    "tune",
                    c.epsilon,
                    c.seed,
                    EXPERIMENT_KEYS["tuning"],
                    f,
                    settings["step_sizes"].index(c.step_size),
                )
            )
            for c in columns
        ]
        label = f"{dataset} step-size CV fold {f + 1}/{len(folds)} ({len(columns)} runs)"
        final = descend(
            settings, x[train], labels[train], groups, columns, rngs, [settings["iterations"]], label
        )[-1]
        held_x, held_y = x[held_out], labels[held_out]
        accuracy = algo.accuracy(final, held_x, held_y)
        loss = algo.objective(final, held_x, held_y, settings["l2"])
        for i, column in enumerate(columns):
            rows.append(
                {
                    "method": column.method,
                    "epsilon": column.epsilon,
                    "step_size": column.step_size,
                    "fold": f,
                    "seed": column.seed,
                    "validation_accuracy": float(accuracy[i]),
                    "validation_loss": float(loss[i]),
                    "unevenness": column.unevenness,
                }
            )
    return pd.DataFrame(rows)


def select_step_sizes(
    scores: pd.DataFrame,
    scope: str = "per_method",
    epsilons: Sequence[float] | None = None,
    by: str = "epsilon",
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """Mean validation accuracy per (method, epsilon or cell, step size) and the step size of every run.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`cross_validate`'s rows.
    scope : {"per_method", "shared"}
        Gap A16: ``per_method`` selects each method's best step size; ``shared`` selects one step
        size for all methods, the best on their pooled validation runs.
    epsilons : sequence of float, optional
        The run epsilons to cover (:func:`dpdl.studies.wddp.grid.run_epsilons`). Each takes the
        selection at the same epsilon, or, if the scores hold a single epsilon (the ``reference``
        protocol), the selection there.
    by : {"epsilon", "cell"}
        What a selection is made for: each epsilon (:func:`cross_validate`), or each run cell of a
        batch (:func:`cross_validate_setting`, ``tuning.protocol: per_setting``).

    Returns
    -------
    summary : pandas.DataFrame
        Mean validation accuracy and loss per (method, ``by``, step size), with ``selected``.
    selected : dict
        ``{method: {epsilon label or cell: step size}}``.

    Notes
    -----
    The highest mean validation accuracy wins; ties (to ``ACCURACY_DECIMALS``) are broken by the
    lower mean validation loss (finite values first; a diverged run's loss is infinite or NaN).
    """
    if scope not in TUNING_SCOPES:
        raise ConfigError(f"wddp.tuning.scope must be one of {', '.join(TUNING_SCOPES)}; got {scope!r}")
    if by not in ("epsilon", "cell"):
        raise ValueError(f"by must be 'epsilon' or 'cell', got {by!r}")
    label = format_number if by == "epsilon" else str
    summary = _validation_means(scores, ["method", by, "step_size"])
    keys = ["method", by, "step_size"] if scope == "per_method" else [by, "step_size"]
    ranked = _validation_means(scores, keys)
    if scope == "shared":
        ranked["method"] = "all"
    ranking_loss = ranked["validation_loss"].where(np.isfinite(ranked["validation_loss"]), np.inf)
    # equal means tie despite float noise
    ranking_accuracy = ranked["validation_accuracy"].round(ACCURACY_DECIMALS)
    order = ranked.assign(_accuracy=ranking_accuracy, _loss=ranking_loss).sort_values(
        ["method", by, "_accuracy", "_loss"], ascending=[True, True, False, True]
    )
    best = {key: float(group["step_size"].iloc[0]) for key, group in order.groupby(["method", by], sort=True)}
    tuned = sorted(set(summary[by]))
    selected = {}
    for method in sorted(set(summary["method"])):
        chosen = {e: best[(method if scope == "per_method" else "all", e)] for e in tuned}
        selected[method] = {label(e): chosen[e] for e in tuned}
        for epsilon in epsilons or []:
            if format_number(epsilon) not in selected[method]:
                if len(tuned) != 1:
                    raise ConfigError(f"no step size was tuned at epsilon {epsilon:g}; tuned at {tuned}")
                selected[method][format_number(epsilon)] = chosen[tuned[0]]
    summary["selected"] = [
        selected[m][label(e)] == s
        for m, e, s in zip(summary["method"], summary[by], summary["step_size"], strict=True)
    ]
    if by == "cell":  # the setting of each cell, for the reader of the scores
        setting = scores[["cell", "clients", "epsilon", "unevenness"]].drop_duplicates("cell")
        summary = summary.merge(setting, on="cell", how="left")
    return summary, selected


def _validation_means(scores: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return (
        scores.groupby(keys, sort=True)
        .agg(
            validation_accuracy=("validation_accuracy", "mean"),
            validation_loss=("validation_loss", "mean"),
            n=("validation_accuracy", "size"),
        )
        .reset_index()
    )
