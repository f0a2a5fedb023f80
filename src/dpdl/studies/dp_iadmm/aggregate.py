"""Runs -> one tidy aggregate per figure (and per Remark 3): mean and 20/80 band over seeds."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.studies.dp_iadmm.grid import FIGURE_SPECS

PRIVACY_METRICS = ("eps_composed_rdp", "eps_composed_pld", "privacy_delta")
KEY_COLUMNS = ["dataset", "variant", "algorithm", "epsilon", "a", "rho_setting", "iteration", "metric"]
AGGREGATE_COLUMNS = [*KEY_COLUMNS, "mean", "lo", "hi", "n"]


def aggregate(figure: str, paths: Iterable[str | Path]) -> pd.DataFrame:
    """Mean and 20/80 percentile band over seeds of the metrics ``figure`` plots.

    Returns the ``AGGREGATE_COLUMNS``: one row per (dataset, variant, epsilon, iteration, metric);
    ``epsilon`` is inf for the non-private run. Besides the plotted metrics, every group has the
    rows ``eps_composed_rdp``, ``eps_composed_pld`` and ``privacy_delta`` at its last iteration
    (the composed privacy of the plotted runs; empty for a non-private run).
    """
    from dpdl.runs import read_run

    spec = FIGURE_SPECS[figure]
    frames = []
    for path in paths:
        run = read_run(path)
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
        for metric in spec.metrics:
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
    tidy = pd.concat(frames, ignore_index=True)
    return seed_bands(tidy, by=KEY_COLUMNS, value="value")[AGGREGATE_COLUMNS]


def read_aggregate(path: str | Path) -> pd.DataFrame:
    """Read an aggregate CSV (epsilon ``inf`` is the non-private run)."""
    return pd.read_csv(path)
