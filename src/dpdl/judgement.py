"""A claim's judgement, and how a claim over several cells (or series) is decided.

Every form of :mod:`dpdl.verdicts` returns a :class:`Judgement`. A claim over several cells holds
"in at least k of m cells", k from its ``required_fraction`` (1: every cell), tested as one
hypothesis (:func:`decide`, levels from :func:`~dpdl.seed_statistics.cell_levels`): reproduced when
k cells are significant for it at ``alpha / (m - k + 1)`` (every cell at ``alpha`` for an every-cell
claim: the intersection-union test, Berger 1982); not reproduced when m - k + 1 cells are
significantly the other way at ``alpha / k``; else inconclusive, with the seeds that would decide it
if every cell's effect and spread stayed as observed. The effect shown is the *typical* cell's
(the cell with the lower median effect), with the counts of cells for and against; the cell that decides the
verdict is named beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpdl.seed_statistics import Difference, cell_levels, seeds_for_one_sided

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_IDENTIFIABLE = "not identifiable"
BOUND_FAILS = "paper's bound does not hold"
PREMISE_FAILS = "numbers reproduced, premise not met"
NOT_AT_SCALE = "not run at this scale"
UNAVAILABLE = "data unavailable"
REFUTED = "privacy claim refuted by experiment"  # an audit's eps_LB above the claimed epsilon
NOT_REFUTED = "not refuted by the audit"  # an audit can refute a privacy claim, never prove it
REFUTED_OUTSIDE = "refuted only outside the paper's premises"  # the refuting cells leave a stated assumption
NOT_TESTABLE = "not testable by this audit"  # no within-premise cell can reach the claimed epsilon (issue 58)
CODE_REFUTED = "the code's guarantee refuted"  # an audit of someone's code: an implementation finding
# a stated assumption kept by every record (issue 58, item 3)
PREMISE_HOLDS = "premise holds on the paper's data"
PREMISE_BROKEN = "premise fails on the paper's data"  # some record of the paper's own data breaks it
NOT_PUBLISHED = "not yet published"  # registered after the scorecard it is read from was written
NOT_RUN = (NOT_AT_SCALE, UNAVAILABLE)  # the claims no run of the build decided
VERDICTS = (
    REPRODUCED,
    NOT_REPRODUCED,
    INCONCLUSIVE,
    NOT_IDENTIFIABLE,
    BOUND_FAILS,
    PREMISE_FAILS,
    NOT_AT_SCALE,
    UNAVAILABLE,
    REFUTED,
    REFUTED_OUTSIDE,
    CODE_REFUTED,
    NOT_REFUTED,
    NOT_TESTABLE,
    PREMISE_HOLDS,
    PREMISE_BROKEN,
    NOT_PUBLISHED,
)


@dataclass(frozen=True)
class Judgement:
    """What the engine found: the verdict, the typical cell's effect with its interval, the test, the seeds.

    ``cells``, ``cells_for`` and ``cells_against`` count the cells (or series) and those significant
    for and against the claim at their levels; ``deciding`` names the cell that decides the verdict,
    with its effect and interval.
    """

    verdict: str
    effect: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    test: str = ""
    n_seeds: int = 0
    seeds_to_decide: int | None = None
    detail: str = ""
    cells: int | None = None
    cells_for: int | None = None
    cells_against: int | None = None
    deciding: str = ""


def fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.4g}"


def required_cells(fraction: float, cells: int) -> int:
    return max(1, math.ceil(fraction * cells - 1e-9))


def share_text(fraction: float) -> str:
    return "every cell" if fraction >= 1 else f"at least {fraction:.0%} of cells"


# ------------------------------------------------------------------------- claims over cells


@dataclass(frozen=True)
class Cell:
    """One cell (or series) of a claim, as the k-of-m decision sees it."""

    name: str
    change: Difference  # the effect, positive in the claimed direction for an ordering and a trend
    p_for: float
    p_against: float
    need_for: Callable[[float], int | None]  # seeds at which the cell is significant for, at a level
    need_against: Callable[[float], int | None]
    line: str


def decide(cells: Sequence[Cell], required_fraction: float, alpha: float, n: int, test: str) -> Judgement:
    """The judgement of a claim over ``cells`` that must hold in at least ``required_fraction`` of them.

    One hypothesis at ``alpha`` (:func:`~dpdl.seed_statistics.cell_levels`): reproduced when k cells
    are significant for at ``alpha / (m - k + 1)``; not reproduced when m - k + 1 are significant
    against at ``alpha / k``; else inconclusive, with the seeds that would decide it.
    """
    m = len(cells)
    k = required_cells(required_fraction, m)
    level_for, level_against = cell_levels(m, k, alpha)
    p_for = np.nan_to_num(np.array([c.p_for for c in cells], dtype=float), nan=1.0)
    p_against = np.nan_to_num(np.array([c.p_against for c in cells], dtype=float), nan=1.0)
    n_for, n_against = int((p_for < level_for).sum()), int((p_against < level_against).sum())
    order_for = np.argsort(p_for, kind="stable")
    order_against = np.argsort(p_against, kind="stable")
    seeds = None
    if n_for >= k:
        verdict, decider = REPRODUCED, int(order_for[k - 1])
    elif n_against >= m - k + 1:
        verdict, decider = NOT_REPRODUCED, int(order_against[m - k])
    else:
        verdict, decider = INCONCLUSIVE, int(order_for[k - 1])
        seeds = seeds_to_decide(
            [c.need_for(level_for) for c in cells], [c.need_against(level_against) for c in cells], m, k, n
        )
    effects = np.array([c.change.mean for c in cells], dtype=float)
    ranked = np.argsort(np.nan_to_num(effects, nan=np.inf), kind="stable")
    typical = cells[int(ranked[(m - 1) // 2])].change
    deciding = cells[decider]
    lo, hi = deciding.change.interval
    levels = (
        f"{k} of {m} needed, each at {fmt(level_for)} (against: {m - k + 1} at {fmt(level_against)}); "
        f"{n_for} for, {n_against} against"
    )
    return Judgement(
        verdict,
        effect=typical.mean,
        ci_low=typical.interval[0],
        ci_high=typical.interval[1],
        test=f"{test}; {levels}",
        n_seeds=n,
        seeds_to_decide=seeds,
        detail=_per_panel(cells, p_for < level_for, p_against < level_against)
        + "; ".join(c.line for c in cells),
        cells=m,
        cells_for=n_for,
        cells_against=n_against,
        deciding=f"{deciding.name}: {fmt(deciding.change.mean)} [{fmt(lo)}, {fmt(hi)}]",
    )


# Cell names are "key=value, key=value, ..." where a claim spans a paper's panels: the keys a figure's panels
# are drawn by, whose per-panel counts a claim over many cells also reports (issue 59 item 5).
PANEL_KEYS = {"dataset": "dataset", "clients": "m"}


def _per_panel(cells: Sequence[Cell], significant_for: np.ndarray, significant_against: np.ndarray) -> str:
    """ "per m: 2: 11 of 12 for, 0 against; 4: ..." for each panel key the cells' names carry.

    Only keys with two or more values count, at the claim's own levels; empty where none does.
    """
    parsed = [dict(part.split("=", 1) for part in c.name.split(", ") if "=" in part) for c in cells]
    parts = []
    for key, label in PANEL_KEYS.items():
        values = [names.get(key) for names in parsed]
        if None in values or len(set(values)) < 2:
            continue
        counts = []
        for value in dict.fromkeys(values):
            at = np.array([v == value for v in values])
            counts.append(
                f"{value}: {int(significant_for[at].sum())} of {int(at.sum())} for, "
                f"{int(significant_against[at].sum())} against"
            )
        parts.append(f"per {label}: " + ", ".join(counts))
    return "".join(f"{part}; " for part in parts)


def seeds_to_decide(
    need_for: Sequence[int | None], need_against: Sequence[int | None], m: int, k: int, n: int
) -> int | None:
    """Seeds at which an inconclusive claim would be decided.

    That holds if every cell's effect and spread stay as observed.

    ``need_*`` give, per cell, the seeds at which it is significant at its level (for or against).
    The claim holds once k cells are significant for, and fails once m - k + 1 are significant
    against: the answer is the sooner of the two, and more than the ``n`` seeds that did not decide
    it; ``None`` when neither can happen.
    """

    def path(needs: Sequence[int | None], count: int) -> int | None:
        known = sorted(s for s in needs if s is not None)
        return known[count - 1] if len(known) >= count else None

    paths = [s for s in (path(need_for, k), path(need_against, m - k + 1)) if s is not None]
    return max(min(paths), n + 1) if paths else None


def one_sided_need(diff: Difference, room: float, level: float) -> int | None:
    """Seeds at which ``diff``'s spread finds an effect of size ``room`` (> 0) at a one-sided ``level``."""
    if not room > 0 or not math.isfinite(diff.se):
        return None
    return seeds_for_one_sided(diff.se * math.sqrt(max(diff.n, 1)), room, level)
