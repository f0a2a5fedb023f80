"""Runs -> the two tables of one wddp figure: per-seed values (the claims) and bands over seeds (the figure).

The value of a run is its metric at the last round T. :func:`seed_table` keeps one row per run
(what the claims are judged from, :mod:`dpdl.studies.wddp.claims`); :func:`band_table` reduces it
to a mean and a 20-80 percentile band per point (what the figure draws). Both come from the same
runs in one pass (:func:`tables`). :func:`claim_tables` stacks the per-seed tables of a build
into the inputs the claims name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.errors import ArtifactError
from dpdl.studies.wddp.grid import DATASETS, FIGURES, NONPRIVATE, STUDY
from dpdl.studies.wddp.tune import read_optimum

AGGREGATE_COLUMNS = (  # the leading columns of every figure aggregate, in this order (those it has)
    "figure",
    "metric",
    "dataset",
    "clients",
    "epsilon",
    "unevenness",
    "algorithm",
    "mean",
    "lo",
    "hi",
    "n",
)
SEED_COLUMNS = (  # the columns of every per-seed table, in this order
    "figure",
    "metric",
    "dataset",
    "clients",
    "epsilon",
    "unevenness",
    "algorithm",
    "seed",
    "value",
    "unevenness_realized",
    "noise_ratio",
    "n",
    "n_min",
    "sigma",
    "delta",
    "eps_composed_rdp",
    "eps_composed_pld",
)
SETTING_KEYS = ["dataset", "clients", "epsilon"]  # one Experiment B setting (m, epsilon) of one dataset


def _run_rows(figure: str, runs: Sequence[str | Path]) -> pd.DataFrame:
    """One row per run: the metric at round T and the run's partition, noise and privacy."""
    from dpdl.runs import read_run

    spec = FIGURES[figure]
    metric_column = {"accuracy": "test_accuracy", "gap": "gap"}[spec.metric]
    rows = []
    for path in runs:
        result = read_run(path, STUDY)
        prov, last = result.provenance, result.trace.iloc[-1]
        params = prov["params"]
        if int(last["iteration"]) != params["iterations"]:
            raise ArtifactError(
                f"{path}: trace ends at round {int(last['iteration'])}, not T = {params['iterations']}"
            )
        rows.append(
            {
                "dataset": prov["dataset"].split("/", 1)[1],
                "algorithm": prov["algorithm"],
                "epsilon": prov["epsilon"],
                "unevenness": params["unevenness_nominal"] if spec.x == "unevenness" else np.nan,
                "seed": prov["seed"],
                "value": float(last[metric_column]),
                "unevenness_realized": params["unevenness_realized"],
                "noise_ratio": params["noise_ratio"],
                "n": params["n"],
                "n_min": params["n_min"],
                "sigma": params["sigma"],
                "delta": prov["delta"],
                "eps_composed_rdp": prov["eps_composed_rdp"],
                "eps_composed_pld": prov["eps_composed_pld"],
            }
        )
    if not rows:
        raise ArtifactError(f"{figure}: no runs to aggregate; is any wddp dataset available?")
    return pd.DataFrame(rows)


def _optimum_rows(optima: Mapping[str, str | Path]) -> pd.DataFrame:
    """theta*'s test accuracy per dataset (the accuracy figures' dashed reference line)."""
    return pd.DataFrame(
        [
            {"dataset": d, "algorithm": NONPRIVATE, "value": read_optimum(p)["test_accuracy"]}
            for d, p in optima.items()
        ],
        columns=["dataset", "algorithm", "value"],
    )


def seed_table(figure: str, frame: pd.DataFrame, optima: Mapping[str, str | Path]) -> pd.DataFrame:
    """The per-seed table of one figure: one row per run, plus theta*'s row per dataset on accuracy figures.

    theta*'s rows have no seed (it is deterministic). Columns: :data:`SEED_COLUMNS`.
    """
    spec = FIGURES[figure]
    table = frame
    if spec.metric == "accuracy":
        table = pd.concat([table, _optimum_rows(optima)], ignore_index=True)
    table = table.assign(figure=figure, metric=spec.metric, clients=spec.clients)
    for column in ("clients", "seed", "n", "n_min"):
        table[column] = table[column].astype("Int64")
    return (
        table[list(SEED_COLUMNS)]
        .sort_values(["dataset", "algorithm", spec.x, "seed"], key=_panel_order, na_position="first")
        .reset_index(drop=True)
    )


def band_table(figure: str, frame: pd.DataFrame, optima: Mapping[str, str | Path]) -> pd.DataFrame:
    """The tidy aggregate of one figure: one row per (dataset, algorithm, x) with mean, lo, hi, n.

    Bands are the 20th / 80th percentiles over seeds. Extra columns: the mean realized u and
    noise ratio n / (m n_(1)), and the largest composed epsilon (RDP, PLD) over the grouped runs.
    Accuracy figures also get one ``nonpriv`` row per dataset: theta*'s test accuracy.
    """
    spec = FIGURES[figure]
    keys = ["dataset", "algorithm", spec.x]
    bands = seed_bands(frame, keys, "value")
    extra = (
        frame.groupby(keys, sort=True)
        .agg(
            unevenness_realized=("unevenness_realized", "mean"),
            noise_ratio=("noise_ratio", "mean"),
            delta=("delta", "max"),
            eps_composed_rdp=("eps_composed_rdp", "max"),
            eps_composed_pld=("eps_composed_pld", "max"),
        )
        .reset_index()
    )
    table = bands.merge(extra, on=keys)
    if spec.metric == "accuracy":
        reference = _optimum_rows(optima).rename(columns={"value": "mean"}).assign(n=1)
        reference = reference.assign(lo=lambda t: t["mean"], hi=lambda t: t["mean"])
        table = pd.concat([table, reference], ignore_index=True)
    fixed = {"figure": figure, "metric": spec.metric, "clients": spec.clients}
    if spec.experiment == "unevenness":
        fixed["epsilon"] = spec.epsilon
    table = table.assign(**fixed)
    columns = [c for c in AGGREGATE_COLUMNS if c in table.columns]
    columns += [c for c in table.columns if c not in AGGREGATE_COLUMNS]
    return (
        table[columns]
        .sort_values(["dataset", "algorithm", spec.x], key=_panel_order, na_position="first")
        .reset_index(drop=True)
    )


def tables(
    figure: str, runs: Sequence[str | Path], optima: Mapping[str, str | Path]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The banded aggregate and the per-seed table of one figure, from one read of its runs.

    The aggregate is for the figure, the per-seed table for the claims.
    """
    frame = _run_rows(figure, runs)
    return band_table(figure, frame, optima), seed_table(figure, frame, optima)


def aggregate(figure: str, runs: Sequence[str | Path], optima: Mapping[str, str | Path]) -> pd.DataFrame:
    """The tidy aggregate of one figure (:func:`band_table` of its runs)."""
    return band_table(figure, _run_rows(figure, runs), optima)


def claim_tables(
    frames: Mapping[str, pd.DataFrame], cards: Sequence[Mapping]
) -> dict[str, pd.DataFrame | None]:
    """The claims' inputs from the per-seed tables (figure id -> table) and the dataset cards.

    ``versus_epsilon`` and ``versus_unevenness`` stack the figures of each experiment, ``runs``
    stacks both, ``versus_epsilon_<dataset>`` holds one panel's rows of ``versus_epsilon``,
    ``nonprivate_<dataset>`` theta*'s row, ``datasets`` the cards' sizes and majority-class shares; a
    table is None (its claims: data unavailable) when nothing was built for it.
    """
    grouped: dict[str, list[pd.DataFrame]] = {"versus_epsilon": [], "versus_unevenness": []}
    for figure, frame in frames.items():
        grouped[f"versus_{FIGURES[figure].experiment}"].append(frame)
    tables = {name: pd.concat(parts, ignore_index=True) if parts else None for name, parts in grouped.items()}
    every = [frame for parts in grouped.values() for frame in parts]
    tables["runs"] = pd.concat(every, ignore_index=True) if every else None
    for dataset in DATASETS:
        rows = [f[(f["algorithm"] == NONPRIVATE) & (f["dataset"] == dataset)] for f in every]
        rows = [r for r in rows if not r.empty]
        tables[f"nonprivate_{dataset}"] = pd.concat(rows, ignore_index=True) if rows else None
        stack = tables["versus_epsilon"]
        panel = None if stack is None else stack[stack["dataset"] == dataset].reset_index(drop=True)
        ran = panel is not None and (panel["algorithm"] != NONPRIVATE).any()
        tables[f"versus_epsilon_{dataset}"] = panel if ran else None
    order = {d: i for i, d in enumerate(DATASETS)}
    sizes = [
        {
            "dataset": card["dataset"],
            "rows": card["rows"],
            "majority": max(card.get("class_balance", {}).values(), default=None),
        }
        # panel order, as read
        for card in sorted(cards, key=lambda card: order.get(card["dataset"], len(order)))
    ]
    tables["datasets"] = pd.DataFrame(sizes) if sizes else None
    return tables


# ---------------------------------------------------------------------------------------------
# Per-seed selections the claims judge (:mod:`dpdl.studies.wddp.claims`)


def private_rows(table: pd.DataFrame, metric: str, *, log_gap: bool = False) -> pd.DataFrame:
    """The private methods' per-seed rows of one metric.

    The gap is log10 with ``log_gap``; a gap <= 0 is NaN.
    """
    rows = table[(table["metric"] == metric) & (table["algorithm"] != NONPRIVATE)]
    if log_gap and metric == "gap":
        gap = rows["value"].astype(float)
        rows = rows.assign(value=np.log10(gap.where(gap > 0)))
    return rows


def against_smallest(rows: pd.DataFrame, over: str, cells: list[str]) -> tuple[pd.DataFrame, str]:
    """Each value of ``over`` beside the smallest one of its cell.

    Rows with ``side`` reference / other and a label.
    """
    label, parts = f"{over} (vs smallest)", []
    for _, part in rows.groupby(cells, sort=True):
        values = sorted(part[over].dropna().unique())
        for value in values[1:]:
            versus = f"{value:g} vs {values[0]:g}"
            parts.append(part[part[over] == values[0]].assign(side="reference", **{label: versus}))
            parts.append(part[part[over] == value].assign(side="other", **{label: versus}))
    columns = [*rows.columns, "side", label]
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)), label


def seed_deviations(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Each seed's absolute deviation from the median of its point (``keys``), Brown-Forsythe's spread."""
    rows = rows.dropna(subset=["value"])
    return rows.assign(value=(rows["value"] - rows.groupby(keys)["value"].transform("median")).abs())


def accuracy_drops(rows: pd.DataFrame, method: str) -> pd.DataFrame:
    """``method``'s per-seed drop from the smallest to the largest u of each (dataset, m, epsilon) setting."""
    parts = []
    for key, part in rows[rows["algorithm"] == method].groupby(SETTING_KEYS, sort=True):
        first, last = part["unevenness"].min(), part["unevenness"].max()
        if first == last:
            continue
        start = part[part["unevenness"] == first].set_index("seed")["value"]
        drop = (start - part[part["unevenness"] == last].set_index("seed")["value"]).dropna()
        setting = dict(zip(SETTING_KEYS, key, strict=True))
        parts.append(pd.DataFrame({**setting, "seed": drop.index, "value": drop.to_numpy()}))
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=[*SETTING_KEYS, "seed", "value"])
    )


def _panel_order(column: pd.Series) -> pd.Series:
    if column.name == "dataset":
        return column.map({d: i for i, d in enumerate(DATASETS)})
    return column
