"""Claims: what each paper states, declared once in code, judged from the aggregates.

Each study module lists its :class:`Claim` objects in ``CLAIMS``. A claim names where the paper
makes it, the quantity, the paper's value if it gives one, the aggregate it is judged from, the
tolerance and why, the scale needed to judge it, and a function that computes our value from
the aggregate. :func:`scorecard` turns them into rows; nothing in a scorecard is typed in by hand.

Verdicts: ``reproduced`` / ``not reproduced`` (judged at sufficient scale), ``not run at this
scale`` (our value is shown, but the runs are smaller than the claim needs), ``data
unavailable`` (the aggregate could not be built here).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

TREND_SIGNIFICANCE = 0.05  # one-sided p-value below which a trend claim's Kendall test holds
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_AT_SCALE = "not run at this scale"
UNAVAILABLE = "data unavailable"
SCORECARD_COLUMNS = [
    "id",
    "study",
    "where",
    "statement",
    "paper_value",
    "our_value",
    "spread",
    "tolerance",
    "justification",
    "verdict",
    "detail",
    "switches",
    "scale",
]


@dataclass(frozen=True)
class Evidence:
    """Our side of a claim: the value, its spread over seeds, whether the claim holds, and why."""

    value: float | str | None
    holds: bool
    spread: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper."""

    id: str
    study: str
    where: str
    statement: str
    paper_value: float | str | None
    tolerance: str
    justification: str
    aggregate: str
    evaluate: Callable[[pd.DataFrame], Evidence]
    needs: Mapping[str, float] = field(default_factory=dict)


def at_scale(claim: Claim, scale: Mapping[str, float]) -> bool:
    """Whether the study's scale (its config values) reaches what ``claim`` needs to be judged."""
    return all(scale.get(key, 0) >= minimum for key, minimum in claim.needs.items())


def judge(claim: Claim, aggregate: pd.DataFrame | None, scale: Mapping[str, float]) -> tuple[str, Evidence | None]:
    """The verdict of ``claim`` on ``aggregate`` (``None`` when its data was unavailable)."""
    if aggregate is None:
        return UNAVAILABLE, None
    evidence = claim.evaluate(aggregate)
    if not at_scale(claim, scale):
        return NOT_AT_SCALE, evidence
    return (REPRODUCED if evidence.holds else NOT_REPRODUCED), evidence


def scorecard(
    claims: list[Claim],
    aggregates: Mapping[str, pd.DataFrame | None],
    *,
    scale: Mapping[str, float],
    switches: Mapping[str, str],
) -> pd.DataFrame:
    """One row per claim: the paper's value beside ours, with the verdict and the settings behind it."""
    rows = []
    for claim in claims:
        verdict, evidence = judge(claim, aggregates.get(claim.aggregate), scale)
        rows.append(
            {
                "id": claim.id,
                "study": claim.study,
                "where": claim.where,
                "statement": claim.statement,
                "paper_value": claim.paper_value,
                "our_value": None if evidence is None else evidence.value,
                "spread": "" if evidence is None else evidence.spread,
                "tolerance": claim.tolerance,
                "justification": claim.justification,
                "verdict": verdict,
                "detail": "" if evidence is None else evidence.detail,
                "switches": json.dumps(dict(switches), sort_keys=True),
                "scale": json.dumps(dict(scale), sort_keys=True),
            }
        )
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)


def kendall_trend(x, y, alternative: str = "less") -> tuple[float, float]:
    """Kendall's tau of ``y`` against ``x`` and its one-sided p-value (``"less"``: y falls as x grows).

    scipy computes the exact permutation p-value when there are no ties, which is valid for the
    handful of grid points a figure has. A trend claim holds when ``p < TREND_SIGNIFICANCE``.
    """
    from scipy import stats

    result = stats.kendalltau(x, y, alternative=alternative)
    return float(result.statistic), float(result.pvalue)
