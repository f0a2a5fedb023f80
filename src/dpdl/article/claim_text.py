"""One claim's row as the article prints it: its outcome, why it is undecided, its interval and tolerance."""

from __future__ import annotations

import pandas as pd

from dpdl.judgement import fmt

CLAIM_COLUMNS = [
    "id",
    "where",
    "statement",
    "paper_value",
    "our_value",
    "verdict",
    "interval",
    "test",
    "tolerance",
]


def claim_outcome(row) -> str:
    """One claim as a reader meets it: the paper's sentence, its id, ours against the paper's value."""
    ours = row.our_value
    if row.ci_low != "" and row.form == "stated number":  # its effect and interval are ours - paper's value
        bounds = f"[{fmt(float(row.ci_low))}, {fmt(float(row.ci_high))}]"
        ours = f"{row.our_value} (ours - paper {fmt(float(row.effect))} {bounds}; tolerance {tolerance_reach(row)})"
    elif row.ci_low != "":  # the interval is the effect's (ours against the other method's, or the change's)
        interval = f"interval {effect_interval(row)}"
        effect = "" if row.our_value.startswith("effect") else f"effect {fmt(float(row.effect))}, "
        ours = f"{row.our_value} ({effect}{interval})"
    paper = f"; the paper: {row.paper_value}" if row.paper_value != "" else ""
    return f"{row.statement} (`{row.id}`): ours {ours}{paper}"


def claim_undecided(row) -> str:
    """Why a claim has no decisive verdict, from its row.

    An inconclusive claim over several cells names the weakest of the cells it needs (``deciding_cell``): its
    effect shown is the median cell's, not that one's.
    """
    if row.verdict == "inconclusive" and row.seeds_to_decide != "":
        seeds = fmt(float(row.seeds_to_decide))
        cell = getattr(row, "deciding_cell", "")
        weakest = f"; the weakest of the cells it needs: {cell}" if cell else ""
        return f"{claim_outcome(row)}; inconclusive: about {seeds} seeds per cell would decide it{weakest}"
    return f"{row.statement} (`{row.id}`): {row.verdict}"


def effect_interval(row) -> str:
    """The effect's interval, labelled "ours - paper" where it is that (a stated number's)."""
    if row.ci_low == "":
        return ""
    label = "ours - paper " if row.form == "stated number" else ""
    return f"{label}[{fmt(float(row.ci_low))}, {fmt(float(row.ci_high))}]"


def tolerance_reach(row) -> str:
    """How far a stated number's verdict can be pushed, beside its declared tolerance (issue 59)."""
    reproduced, refuted = (
        getattr(row, name, "") for name in ("tolerance_reproduced", "tolerance_not_reproduced")
    )
    if reproduced == "":
        return row.tolerance
    refuted = "no tolerance" if refuted == "" else f"below ±{fmt(float(refuted))}"
    return f"{row.tolerance}; reproduced from ±{fmt(float(reproduced))}, not reproduced {refuted}"


def claims_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The claims' rows as an exhibit's table shows them, interval and reach filled in.

    Its columns are :data:`CLAIM_COLUMNS`.
    """
    shown = [(effect_interval(r), tolerance_reach(r)) for r in rows.itertuples()]
    return rows.assign(interval=[i for i, _ in shown], tolerance=[r for _, r in shown])[CLAIM_COLUMNS]
