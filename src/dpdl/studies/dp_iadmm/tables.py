"""The Remark 3 table: final testing error on MNIST at the long horizon, ours beside the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd

REMARK3_PAPER_PCT = {"ObjT": 15.64, "OutP": 37.98}  # Remark 3, at epsilon-bar 0.01
REMARK3_PAPER_EPSILON = 0.01
REMARK3_PAPER_ITERATIONS = 1_000_000


def remark3_table(agg: pd.DataFrame) -> pd.DataFrame:
    """Remark 3 [MNIST, long horizon]: final testing error at each epsilon-bar, ours beside the paper's."""
    errors = agg[agg["metric"] == "test_error"]
    rows = []
    for _, row in errors.sort_values(["epsilon", "algorithm"]).iterrows():
        privacy = agg[(agg["variant"] == row["variant"]) & np.isclose(agg["epsilon"], row["epsilon"])]
        composed = privacy.set_index("metric")["mean"]
        at_paper_epsilon = np.isclose(row["epsilon"], REMARK3_PAPER_EPSILON)
        rows.append(
            {
                "algorithm": row["algorithm"],
                "epsilon_bar": row["epsilon"],
                "iterations": int(row["iteration"]),
                "test_error_pct": round(100 * row["mean"], 2),
                "p20_pct": round(100 * row["lo"], 2),
                "p80_pct": round(100 * row["hi"], 2),
                "seeds": int(row["n"]),
                "paper_pct": REMARK3_PAPER_PCT.get(row["algorithm"]) if at_paper_epsilon else None,
                "paper_iterations": REMARK3_PAPER_ITERATIONS,
                "eps_composed_rdp": composed.get("eps_composed_rdp"),
                "eps_composed_pld": composed.get("eps_composed_pld"),
            }
        )
    return pd.DataFrame(rows)
