"""Runs -> per figure (and Remark 3, and the noiseless runs) a per-seed table and its bands over seeds.

The per-seed table (``<name>_seeds.csv``) holds one value per run, logged iteration and metric;
the claims read it. The aggregate (``<name>.csv``) holds the mean and 20/80 band over seeds of the
plotted metrics; the figures and the Remark 3 table read it. Both come from the same runs in one
step. Below them, the per-seed reductions the claims judge (a cell's final values, the value at a
fraction of the horizon, a time average, the iteration a curve first reaches a level).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.studies.dp_iadmm.grid import CLAIM_METRICS, FIGURE_SPECS, STUDY
from dpdl.verdicts.inputs import Pair

PRIVACY_METRICS = ("eps_composed_rdp", "eps_composed_pld", "privacy_delta")
CELL_COLUMNS = ["dataset", "variant", "algorithm", "epsilon", "a", "rho_setting"]
KEY_COLUMNS = [*CELL_COLUMNS, "iteration", "metric"]
AGGREGATE_COLUMNS = [*KEY_COLUMNS, "mean", "lo", "hi", "n"]
SEED_COLUMNS = [*CELL_COLUMNS, "seed", "iteration", "metric", "value"]


def seed_values(figure: str, paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per (run, logged iteration, metric): the ``SEED_COLUMNS``.

    The metrics are those ``figure`` plots and those its claims read (``grid.CLAIM_METRICS``), at
    every logged iteration (the last only for a final-value figure), and the composed privacy of
    each run (``eps_composed_rdp``, ``eps_composed_pld``, ``privacy_delta``) at its last iteration
    (NaN for a run without noise). ``epsilon`` is inf for a run without noise.
    """
    from dpdl.runs import read_run

    spec = FIGURE_SPECS[figure]
    metrics = (*spec.metrics, *CLAIM_METRICS.get(figure, ()))
    frames = []
    for path in paths:
        run = read_run(path, STUDY)
        prov, trace = run.provenance, run.trace
        keys = {
            "dataset": prov["dataset"].split("/")[1],
            "variant": prov["algorithm"],
            "algorithm": prov["params"]["label"],
            "epsilon": math.inf if prov["epsilon"] is None else prov["epsilon"],
            "a": prov["params"]["a"],
            "rho_setting": prov["params"]["rho_setting"],
            "seed": prov["seed"],
        }
        rows = trace.iloc[[-1]] if spec.final_only else trace
        iterations = rows["iteration"].to_numpy()
        for metric in metrics:
            values = rows[metric].to_numpy(dtype=float)
            frames.append(pd.DataFrame({**keys, "iteration": iterations, "metric": metric, "value": values}))
        privacy = {
            "eps_composed_rdp": prov["eps_composed_rdp"],
            "eps_composed_pld": prov["eps_composed_pld"],
            "privacy_delta": prov["delta"],
        }
        last = int(trace["iteration"].iloc[-1])
        privacy_rows = [
            {**keys, "iteration": last, "metric": metric, "value": np.nan if value is None else value}
            for metric, value in privacy.items()
        ]
        frames.append(pd.DataFrame(privacy_rows))
    if not frames:
        raise ValueError(f"no runs given for aggregate {figure!r}")
    tidy = pd.concat(frames, ignore_index=True)[SEED_COLUMNS]
    return tidy.sort_values([*CELL_COLUMNS[:3], "epsilon", "metric", "iteration", "seed"], ignore_index=True)


def bands(figure: str, seeds: pd.DataFrame) -> pd.DataFrame:
    """Mean and 20/80 percentile band over seeds of what ``figure`` plots (and the composed privacy).

    Returns the ``AGGREGATE_COLUMNS``: one row per (dataset, variant, epsilon, iteration, metric).
    """
    shown = (*FIGURE_SPECS[figure].metrics, *PRIVACY_METRICS)
    return seed_bands(seeds[seeds["metric"].isin(shown)], by=KEY_COLUMNS, value="value")[AGGREGATE_COLUMNS]


def aggregate(figure: str, paths: Iterable[str | Path]) -> pd.DataFrame:
    """The banded aggregate of ``figure`` from its runs (see :func:`bands`)."""
    return bands(figure, seed_values(figure, paths))


def empty_seed_table() -> pd.DataFrame:
    """A per-seed table without rows (``SEED_COLUMNS``, typed): an aggregate none of whose cells was run."""
    types = {"epsilon": float, "a": float, "seed": int, "iteration": int, "value": float}
    return pd.DataFrame({column: pd.Series(dtype=types.get(column, object)) for column in SEED_COLUMNS})


def read_aggregate(path: str | Path) -> pd.DataFrame:
    """Read an aggregate or per-seed CSV (epsilon ``inf`` is a run without noise)."""
    from dpdl.io import read_csv

    return read_csv(path)


# --------------------------------------------------------------------- per-seed reductions (claims)


class MissingCells(LookupError):
    """A cell a claim compares is not in this config's grid."""


def cell(table: pd.DataFrame, dataset: str, variant: str, epsilon: float, metric: str = "test_error") -> pd.DataFrame:
    """The per-seed rows of one (dataset, variant, epsilon-bar) and metric, by seed and iteration.

    Raises :class:`MissingCells` when the table has none.
    """
    mask = (table["dataset"] == dataset) & (table["variant"] == variant) & (table["metric"] == metric)
    mask &= (table["epsilon"] == epsilon) if math.isinf(epsilon) else np.isclose(table["epsilon"], epsilon)
    if not mask.any():
        raise MissingCells(f"{dataset} {variant} at epsilon-bar {epsilon:g} ({metric}) is not in this grid")
    return table[mask].sort_values(["seed", "iteration"])


def epsilons(table: pd.DataFrame, dataset: str, variant: str) -> list[float]:
    """The finite epsilon-bars at which ``variant`` ran on ``dataset`` (MissingCells: none)."""
    rows = table[(table["dataset"] == dataset) & (table["variant"] == variant)]
    found = sorted(float(e) for e in rows["epsilon"].unique() if math.isfinite(e))
    if not found:
        raise MissingCells(f"no {dataset} {variant} run in this grid")
    return found


def a_values(table: pd.DataFrame) -> list[float]:
    """The proximity scales a of Fig. 6's variants in the table."""
    return sorted(float(a) for a in table.loc[table["variant"].str.match(r"^(objp|objt|outp)(_a|$)"), "a"].unique())


def wide(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of one cell as a seeds x iterations frame of values (sorted; each pair's first non-missing value,
    as ``pivot_table(..., aggfunc="first", dropna=False)`` gives it, in a tenth of its time: the claims
    step reshapes hundreds of cells)."""
    seeds, seed_at = np.unique(rows["seed"].to_numpy(), return_inverse=True)
    iterations, iteration_at = np.unique(rows["iteration"].to_numpy(), return_inverse=True)
    values = rows["value"].to_numpy(float)
    flat = np.full(len(seeds) * len(iterations), np.nan)
    present = ~np.isnan(values)
    cells, first = np.unique((seed_at * len(iterations) + iteration_at)[present], return_index=True)
    flat[cells] = values[present][first]
    return pd.DataFrame(
        flat.reshape(len(seeds), len(iterations)),
        index=pd.Index(seeds, name="seed"),
        columns=pd.Index(iterations, name="iteration"),
    )


def final(rows: pd.DataFrame) -> pd.Series:
    """Each seed's value at the last logged iteration of the cell."""
    return wide(rows).iloc[:, -1]


def checkpoint(iterations: Iterable[int], fraction: float) -> int:
    """The first logged iteration at or beyond ``fraction`` of the horizon (the last logged one)."""
    logged = sorted(set(int(t) for t in iterations))
    return next(t for t in logged if t >= fraction * logged[-1] - 1e-9)


def at_fraction(rows: pd.DataFrame, fraction: float) -> pd.Series:
    """Each seed's value at the checkpoint ``fraction`` of the horizon."""
    curves = wide(rows)
    return curves[checkpoint(curves.columns, fraction)]


def time_average(rows: pd.DataFrame) -> pd.Series:
    """Each seed's mean over the logged iterations."""
    return wide(rows).mean(axis=1)


def peak_ratio(rows: pd.DataFrame) -> pd.Series:
    """Each seed's final value over its largest logged value."""
    curves = wide(rows)
    return curves.iloc[:, -1] / curves.max(axis=1)


def hitting_time(rows: pd.DataFrame, level: float) -> pd.Series:
    """Each seed's first logged iteration with value <= ``level``; never: one logging step past the last."""
    curves = wide(rows)
    t = np.asarray(curves.columns, dtype=float)
    beyond = t[-1] + (t[-1] - t[-2] if len(t) > 1 else 1.0)
    reached = curves.to_numpy(float) <= level
    first = np.where(reached.any(axis=1), t[reached.argmax(axis=1)], beyond)
    return pd.Series(first, index=curves.index)


@dataclass(frozen=True)
class Extractor:
    """A claim's extractor: the form's input from a per-seed table, or ``empty`` when a cell is missing.

    ``missing`` says which cell is missing (the claims command reports such a claim as "not run
    at this scale": the config's grid leaves the cell out).
    """

    strict: Callable[[pd.DataFrame], object]
    empty: object

    def __call__(self, table: pd.DataFrame):
        try:
            return self.strict(table)
        except MissingCells:
            return self.empty

    def missing(self, table: pd.DataFrame) -> str | None:
        try:
            self.strict(table)
        except MissingCells as err:
            return str(err)
        return None


def pair(name: str, low: pd.Series | float, high: pd.Series | float) -> Pair:
    """``low`` below ``high`` over seeds; paired on seeds when both ran the same ones; a float is a constant."""
    if not isinstance(low, pd.Series):
        low = pd.Series(low, index=high.index)
    if not isinstance(high, pd.Series):
        high = pd.Series(high, index=low.index)
    if set(low.index) == set(high.index):
        seeds = sorted(low.index)
        return Pair(name, low[seeds].to_numpy(float), high[seeds].to_numpy(float), paired=True)
    return Pair(name, low.to_numpy(float), high.to_numpy(float), paired=False)


def pair_cells(build: Callable[[pd.DataFrame], Iterator[tuple[str, object, object]]]):
    """Pairs from ``build`` (name, low, high); no cell at all is a missing cell."""

    def strict(table: pd.DataFrame) -> list[Pair]:
        found = [pair(*cells) for cells in build(table)]
        if not found:
            raise MissingCells("no cell of this claim is in this grid")
        return found

    return strict
