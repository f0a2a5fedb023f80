"""Aggregation of run traces over seeds into the tidy tables that figures read.

Every figure reads one aggregate: one row per group (for example algorithm x epsilon x
iteration) with the mean over seeds, a lower and an upper percentile band (20/80 by default, as
Ryu & Kim plot), and the number of seeds. Plotting never computes statistics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

LOWER_PERCENTILE = 20
UPPER_PERCENTILE = 80
MISSING_KEY = -np.inf  # stands in for a NaN group key (a non-private run's epsilon) while grouping


def seed_bands(
    frame: pd.DataFrame,
    by: list[str],
    value: str,
    *,
    lower: float = LOWER_PERCENTILE,
    upper: float = UPPER_PERCENTILE,
    finite_only: bool = False,
) -> pd.DataFrame:
    """Mean and percentile band of ``value`` over the rows of each group (one row per seed).

    Returns the columns ``by`` + ``mean``, ``lo``, ``hi``, ``n`` (rows averaged). Percentiles use
    numpy's default linear interpolation; with one seed ``lo == hi == mean``. A NaN in a key
    column (a non-private run has no epsilon) is a group of its own, sorted first.

    With ``finite_only`` the band is over the finite values only (a diverged run's NaN or inf is
    left out), ``n`` counts those, and a column ``n_diverged`` counts the others; a group with no
    finite value has NaN ``mean``, ``lo`` and ``hi`` and ``n = 0``.
    """
    if frame.empty:
        raise ValueError(f"no rows to aggregate for {value!r}")
    missing = [key for key in by if frame[key].dtype.kind == "f" and frame[key].isna().any()]
    frame = frame.assign(**{key: frame[key].fillna(MISSING_KEY) for key in missing})
    values = frame[value].astype(float)
    finite = np.isfinite(values)
    if finite_only:
        frame = frame.assign(**{value: values.where(finite)})
    grouped = frame.groupby(by, sort=True)[value]
    result = grouped.agg(
        mean="mean",
        lo=lambda v: _percentile(v, lower, finite_only),
        hi=lambda v: _percentile(v, upper, finite_only),
        n="count" if finite_only else "size",
    )
    if finite_only:
        result["n_diverged"] = (~finite).groupby([frame[key] for key in by], sort=True).sum().astype(int)
    result = result.reset_index()
    for key in missing:
        result[key] = result[key].replace(MISSING_KEY, np.nan)
    return result


def _percentile(values: pd.Series, q: float, finite_only: bool) -> float:
    if not finite_only:
        return float(np.percentile(values, q))
    present = values.dropna()
    return float(np.percentile(present, q)) if len(present) else np.nan
