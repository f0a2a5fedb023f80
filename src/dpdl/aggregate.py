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


def seed_bands(
    frame: pd.DataFrame, by: list[str], value: str, *, lower: float = LOWER_PERCENTILE, upper: float = UPPER_PERCENTILE
) -> pd.DataFrame:
    """Mean and percentile band of ``value`` over the rows of each group (one row per seed).

    Returns the columns ``by`` + ``mean``, ``lo``, ``hi``, ``n`` (rows averaged). Percentiles use
    numpy's default linear interpolation; with one seed ``lo == hi == mean``.
    """
    if frame.empty:
        raise ValueError(f"no rows to aggregate for {value!r}")
    grouped = frame.groupby(by, sort=True)[value]
    result = grouped.agg(
        mean="mean",
        lo=lambda v: float(np.percentile(v, lower)),
        hi=lambda v: float(np.percentile(v, upper)),
        n="size",
    )
    return result.reset_index()
