"""Runs -> the tidy aggregate of one wddp figure: the metric at round T, banded over seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.errors import ArtifactError
from dpdl.studies.wddp.grid import DATASETS, FIGURES, NONPRIVATE
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
        rows.append(
            {
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
            }
        )
    if not rows:
        raise ArtifactError(f"{figure}: no runs to aggregate; is any wddp dataset available?")
    frame = pd.DataFrame(rows)
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
    columns = [c for c in AGGREGATE_COLUMNS if c in table.columns]
    columns += [c for c in table.columns if c not in AGGREGATE_COLUMNS]
    return (
        table[columns]
        .sort_values(["dataset", "algorithm", spec.x], key=_panel_order, na_position="first")
        .reset_index(drop=True)
    )


def _panel_order(column: pd.Series) -> pd.Series:
    if column.name == "dataset":
        return column.map({d: i for i, d in enumerate(DATASETS)})
    return column
