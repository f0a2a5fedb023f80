"""Per-seed errors -> the figure's band (mean and 20/80 quantiles over seeds)."""

from __future__ import annotations

import pandas as pd


def bands(seeds: pd.DataFrame) -> pd.DataFrame:
    grouped = seeds.groupby("epsilon")["value"]
    return pd.DataFrame(
        {"mean": grouped.mean(), "lo": grouped.quantile(0.2), "hi": grouped.quantile(0.8)}
    ).reset_index()
