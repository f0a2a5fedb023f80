"""The dataset table: one row per prepared dataset.

A paper's own tables come from its cards: its ``CARD_TABLES``.
"""

from __future__ import annotations

import pandas as pd

STDEV_DECIMALS = 2  # samples per agent: their mean and stdev to two decimals


def datasets_table(cards: list[dict], unavailable: list[str]) -> pd.DataFrame:
    """One row per prepared dataset: rows, features, classes, agents, samples per agent, status."""
    rows = []
    for card in cards:
        per_agent = card["samples_per_agent"] or {}
        rows.append(
            {
                "dataset": card["name"],
                "rows": card["rows"],
                "rows_train": card["rows_train"],
                "rows_test": card["rows_test"],
                "features": card["features"],
                "classes": card["classes"],
                "agents": str(card["agents"]) if card["agents"] is not None else "per experiment",
                "samples_per_agent_mean": _rounded(per_agent.get("mean")),
                "samples_per_agent_std": _rounded(per_agent.get("std_ddof0")),
                "status": "partial: " + card["notes"][-1] if card.get("missing_files") else "built",
            }
        )
    rows += [
        {"dataset": name, "status": "unavailable: raw files could not be obtained (see the log)"}
        for name in unavailable
    ]
    columns = ["dataset", "rows", "rows_train", "rows_test", "features", "classes", "agents"]
    columns += ["samples_per_agent_mean", "samples_per_agent_std", "status"]
    counts = {c: "Int64" for c in ("rows", "rows_train", "rows_test", "features", "classes")}
    return pd.DataFrame(rows, columns=columns).astype(counts)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, STDEV_DECIMALS)
