"""The dataset tables: one row per prepared dataset, and Table 1 of Ryu & Kim (dp_iadmm)."""

from __future__ import annotations

import numpy as np
import pandas as pd

# Ryu & Kim, Table 1, as printed (reference values shown beside ours, never used as results).
PAPER_TABLE1 = {
    "mnist": {"I": 60000, "J": 784, "K": 10, "P": 10, "mean": 6000.0, "stdev": 0.0},
    "femnist": {"I": 36708, "J": 784, "K": 62, "P": 195, "mean": 188.25, "stdev": 87.99},
}
STDEV_DECIMALS = 2  # the paper prints two decimals


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


def table1(cards: dict[str, dict]) -> pd.DataFrame:
    """Table 1 of Ryu & Kim: ours (both stdev conventions) beside the paper's, with a verdict per row.

    ``cards`` maps ``mnist`` / ``femnist`` to their prepared cards; a missing key gives a row that
    says the dataset was not available.
    """
    rows = []
    for dataset, paper in PAPER_TABLE1.items():
        card = cards.get(dataset)
        row = {"dataset": dataset, **{f"paper_{k}": v for k, v in paper.items()}}
        if card is None:
            rows.append({**row, "verdict": "not available here"})
            continue
        per_agent = card["samples_per_agent"]
        ours = {"I": card["rows_train"], "J": card["features"], "K": card["classes"], "P": card["agents"]}
        std0, std1 = (round(per_agent[k], STDEV_DECIMALS) for k in ("std_ddof0", "std_ddof1"))
        matching = [name for name, value in (("ddof=0", std0), ("ddof=1", std1)) if value == paper["stdev"]]
        same = all(ours[k] == paper[k] for k in ours) and round(per_agent["mean"], STDEV_DECIMALS) == paper["mean"]
        complete = not card.get("missing_files")
        if same and matching:
            verdict = "reproduced"
        elif not complete:
            verdict = f"not comparable: only {len(card['shards_train'])} of 36 train shards available"
        else:
            verdict = "not reproduced"
        rows.append(
            {
                **row,
                "I": ours["I"],
                "J": ours["J"],
                "K": ours["K"],
                "P": ours["P"],
                "mean": round(per_agent["mean"], STDEV_DECIMALS),
                "stdev_ddof0": std0,
                "stdev_ddof1": std1,
                "stdev_convention": " and ".join(matching)
                if matching
                else ("undetermined" if not complete else "neither"),
                "verdict": verdict,
            }
        )
    columns = ["dataset", "I", "J", "K", "P", "mean", "stdev_ddof0", "stdev_ddof1", "stdev_convention"]
    columns += [f"paper_{k}" for k in PAPER_TABLE1["mnist"]] + ["verdict"]
    return pd.DataFrame(rows, columns=columns).replace({np.nan: None})
