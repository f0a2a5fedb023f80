"""wddp's extractors: the stacked per-seed tables turned into the inputs of the claims' forms.

The claims (:mod:`dpdl.studies.wddp.claims`) declare which extractor reads which table
(:func:`~dpdl.studies.wddp.aggregate.claim_tables` stacks them); cells are paired on seeds.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from dpdl import claims as claims_lib
from dpdl.studies.wddp.aggregate import accuracy_drops, against_smallest, private_rows, seed_deviations
from dpdl.verdicts.inputs import Outcome, Pair, Series

Extractor = Callable[[pd.DataFrame], object]

# Section 5: "KDDCup99 ..., Adult ..., Bank ..., Breast Cancer ... and Credit Card Fraud ..., the
# number of total data instances are 70000, 45222, 41188, 699 and 984, respectively" (wddp.md 4.1)
PAPER_SIZES = {"kdd": 70000, "adult": 45222, "bank": 41188, "breast_cancer": 699, "credit_card": 984}
WEAKEST, STRONGEST = (32, 0.1), (8, 0.01)  # (m, epsilon) of Figs 13/14 and 15/16 (wddp.md 7.3 item 5)
# ------------------------------------------------------------------------------------ extractors


def uneven(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["unevenness"] > 1]


def even(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["unevenness"] == 1]


def ordering(metric: str, better: str, worse: str, cells: list[str], keep=None) -> Extractor:
    """``better`` beats ``worse`` in every cell: higher accuracy, or lower optimal gap."""
    low, high = (worse, better) if metric == "accuracy" else (better, worse)

    def extract(table: pd.DataFrame) -> list[Pair]:
        rows = private_rows(table, metric)
        rows = keep(rows) if keep else rows
        return claims_lib.pairs(rows, side="algorithm", low=low, high=high, cells=cells)

    return extract


def equivalent(metric: str, a: str, b: str, cells: list[str], keep=None) -> Extractor:
    """``a`` and ``b`` per cell (the gap on log10), for an equivalence."""

    def extract(table: pd.DataFrame) -> list[Pair]:
        rows = private_rows(table, metric, log_gap=True)
        rows = keep(rows) if keep else rows
        return claims_lib.pairs(rows, side="algorithm", low=a, high=b, cells=cells)

    return extract


def against_reference(metric: str, method: str, over: str, cells: list[str]) -> Extractor:
    """``method`` at each value of ``over`` against the smallest value in its cell (the gap on log10)."""

    def extract(table: pd.DataFrame) -> list[Pair]:
        rows = private_rows(table, metric, log_gap=True)
        frame, label = against_smallest(rows[rows["algorithm"] == method], over, cells)
        return claims_lib.pairs(frame, side="side", low="reference", high="other", cells=[*cells, label])

    return extract


def trend(
    metric: str, x: str, series: list[str], algorithm: str | None = None, *, spread: bool = False
) -> Extractor:
    """Per-seed curves of ``metric`` along ``x``, one per ``series`` key.

    With ``spread``, each seed's absolute deviation from its point's median (Brown-Forsythe): the
    run-to-run fluctuation, with the gap on log10 so that a gap that only grows is no fluctuation.
    """

    def extract(table: pd.DataFrame) -> list[Series]:
        rows = private_rows(table, metric, log_gap=spread)
        rows = rows if algorithm is None else rows[rows["algorithm"] == algorithm]
        rows = seed_deviations(rows, [*series, x]) if spread else rows
        return claims_lib.trend_series(rows, series=series, x=x)

    return extract


def either(*parts: Extractor) -> Extractor:
    """The input of a disjunction: one input per part, in order."""

    def extract(table: pd.DataFrame) -> tuple:
        return tuple(part(table) for part in parts)

    return extract


def setting_name(clients: int, epsilon: float) -> str:
    return f"m={clients}, eps={epsilon:g}"


def drop_weak_vs_strong(table: pd.DataFrame) -> list[Pair]:
    """The baseline's per-seed accuracy drop from the smallest to the largest u.

    Per dataset, the drop at the weakest setting, (m, epsilon) = (32, 0.1), is paired with that at the
    strongest, (8, 0.01).
    """
    drops = accuracy_drops(private_rows(table, "accuracy"), "dist_avg")
    drops["setting"] = [setting_name(m, e) for m, e in zip(drops["clients"], drops["epsilon"], strict=True)]
    return claims_lib.pairs(
        drops, side="setting", low=setting_name(*WEAKEST), high=setting_name(*STRONGEST), cells=["dataset"]
    )


def sizes(table: pd.DataFrame) -> Outcome:
    """Each available dataset's total rows (train + test) against the count the paper prints."""
    found = {row["dataset"]: int(row["rows"]) for _, row in table.iterrows() if row["dataset"] in PAPER_SIZES}
    if not found:
        return Outcome(False, "no dataset", "no card of the paper's datasets")
    wrong = {d: n for d, n in found.items() if n != PAPER_SIZES[d]}
    value = ", ".join(f"{d} {n}" for d, n in found.items())
    detail = "; ".join(f"{d}: {n} rows (paper {PAPER_SIZES[d]})" for d, n in found.items())
    return Outcome(not wrong, value, detail)


def at_least(dataset: str, floor: float) -> Extractor:
    """theta*'s test accuracy (deterministic) against a one-sided floor."""

    def extract(table: pd.DataFrame) -> Outcome:
        value = float(table["value"].iloc[0])
        return Outcome(
            value >= floor, f"{value:.4f}", f"{dataset}: theta* test accuracy {value:.4f}, floor {floor}"
        )

    return extract
