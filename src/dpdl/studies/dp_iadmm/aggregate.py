"""Runs -> per figure (and Remark 3, and the noiseless runs) a per-seed table and its bands over seeds.

The per-seed table (``<name>_seeds.csv``) holds one value per run, logged iteration and metric;
the claims read it. The aggregate (``<name>.csv``) holds the mean and 20/80 band over seeds of the
plotted metrics; the figures and the Remark 3 table read it. Both come from the same runs in one
step. Below them, the per-seed reductions the claims judge (a cell's final values, the value at a
fraction of the horizon, a time average, the iteration a curve first reaches a level).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.studies.dp_iadmm.grid import CLAIM_METRICS, FIGURE_SPECS, STUDY

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
