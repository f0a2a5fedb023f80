"""The forms that compare numbers per cell: a stated number, an ordering and an equivalence.

:class:`StatedNumber` puts the t-interval of our mean against the paper's value ± a tolerance;
:class:`Ordering` and :class:`Equivalence` test each cell of a claim (one-sided t, TOST) and leave
the "at least k of m cells" rule to :func:`dpdl.judgement.decide`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from dpdl.judgement import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Cell,
    Judgement,
    decide,
    fmt,
    one_sided_need,
    share_text,
)
from dpdl.seed_statistics import ALPHA, finite, mean_interval, seeds_for_halfwidth
from dpdl.verdicts.inputs import Pair, difference

# Fewer seeds than this that all agree give no interval: their t-interval has zero width whatever
# the seed-to-seed spread is (issue 59: a rank picked from a grid, e.g. Table 1's rho, agrees on 2
# of 2 seeds by chance easily)
MIN_SEEDS_FOR_ZERO_SPREAD = 5


def _cell_seeds(cells: Sequence[Pair]) -> int:
    """The fewest finite seeds on either side of any cell (the claim's seed count)."""
    return min((min(len(finite(c.low)), len(finite(c.high))) for c in cells), default=0)


def _pair_cell(pair: Pair, p_for, p_against, need_for, need_against, label: str) -> Cell:
    """One cell of an ordering or equivalence: its difference, p-values for and against, seeds to decide."""
    diff = difference(pair)
    low, high = mean_interval(pair.low)[0], mean_interval(pair.high)[0]
    ci = diff.interval
    pf = p_for(diff)
    line = (
        f"{pair.name}: {fmt(low)} vs {fmt(high)}, diff {fmt(diff.mean)} [{fmt(ci[0])}, {fmt(ci[1])}] "
        f"({label} {fmt(pf)})"
    )
    return Cell(
        pair.name, diff, pf, p_against(diff), partial(need_for, diff), partial(need_against, diff), line
    )


@dataclass(frozen=True)
class StatedNumber:
    """A number the paper prints: our (1 - alpha) interval against paper value ± tolerance.

    ``tolerance`` is absolute unless ``relative``, then a fraction of ``|paper_value|``.
    """

    paper_value: float
    tolerance: float
    relative: bool = False
    alpha: float = ALPHA
    name = "stated number"

    @property
    def absolute_tolerance(self) -> float:
        return self.tolerance * abs(self.paper_value) if self.relative else self.tolerance

    def describe(self) -> str:
        if self.relative:
            return f"±{self.tolerance * 100:g}% of the paper's value (±{fmt(self.absolute_tolerance)})"
        return f"±{fmt(self.tolerance)}"

    def judge(self, values) -> Judgement:
        x = finite(values)
        confidence = 1 - self.alpha
        mean, low, high = mean_interval(x, confidence)
        tol = self.absolute_tolerance
        lo_band, hi_band = self.paper_value - tol, self.paper_value + tol
        test = (
            f"{confidence:.1%} t-interval of the mean over {len(x)} seeds"
            f" against {fmt(self.paper_value)} ± {fmt(tol)}"
        )
        base = dict(effect=mean - self.paper_value, n_seeds=len(x), test=test)
        if len(x) == 0:
            return Judgement(NOT_REPRODUCED, detail="no finite value (every run diverged)", **base)
        if len(x) == 1:
            return Judgement(INCONCLUSIVE, seeds_to_decide=2, detail="one seed: no interval", **base)
        if len(x) < MIN_SEEDS_FOR_ZERO_SPREAD and x.std() == 0:  # a t-interval of zero width is no interval
            return Judgement(
                INCONCLUSIVE,
                seeds_to_decide=MIN_SEEDS_FOR_ZERO_SPREAD,
                detail=f"all {len(x)} seeds give {fmt(mean)}: zero spread on fewer than {MIN_SEEDS_FOR_ZERO_SPREAD} "
                "seeds is no confidence interval (issue 59)",
                **base,
            )
        base.update(ci_low=low - self.paper_value, ci_high=high - self.paper_value)
        if lo_band <= low and high <= hi_band:
            return Judgement(REPRODUCED, **base)
        if high < lo_band or low > hi_band:
            return Judgement(NOT_REPRODUCED, **base)
        if lo_band <= mean <= hi_band:
            room = min(mean - lo_band, hi_band - mean)  # inside the band: the distance to its nearer edge
        else:
            room = max(lo_band - mean, mean - hi_band)  # outside: the distance back to it
        seeds = seeds_for_halfwidth(float(x.std(ddof=1)), room, level=confidence)
        return Judgement(INCONCLUSIVE, seeds_to_decide=seeds, **base)


@dataclass(frozen=True)
class Ordering:
    """``low`` below ``high`` in at least ``required_fraction`` of the cells (one-sided t per cell)."""

    required_fraction: float = 1.0
    alpha: float = ALPHA
    name = "ordering"

    def describe(self) -> str:
        return f"one-sided t-test per cell, {share_text(self.required_fraction)} (one test at {self.alpha:g})"

    def judge(self, cells: Sequence[Pair]) -> Judgement:
        if not cells:
            return Judgement(INCONCLUSIVE, detail="no cell to compare")
        judged = [
            _pair_cell(
                c,
                lambda d: d.p_greater(),
                lambda d: d.p_less(),
                lambda d, level: one_sided_need(d, d.mean, level),
                lambda d, level: one_sided_need(d, -d.mean, level),
                "p",
            )
            for c in cells
        ]
        if all(c.paired for c in cells):
            kind = "paired"
        elif not any(c.paired for c in cells):
            kind = "Welch"
        else:
            kind = "paired/Welch"
        return decide(
            judged, self.required_fraction, self.alpha, _cell_seeds(cells), f"one-sided {kind} t per cell"
        )


@dataclass(frozen=True)
class Equivalence:
    """The two sides agree within ``margin`` (absolute) in the required cells: TOST per cell."""

    margin: float
    required_fraction: float = 1.0
    alpha: float = ALPHA
    name = "equivalence"

    def describe(self) -> str:
        return f"equivalence margin ±{fmt(self.margin)} (TOST per cell, {share_text(self.required_fraction)})"

    def judge(self, cells: Sequence[Pair]) -> Judgement:
        if not cells:
            return Judgement(INCONCLUSIVE, detail="no cell to compare")
        margin = self.margin
        judged = [
            _pair_cell(
                c,
                lambda d: max(d.p_greater(-margin), d.p_less(margin)),
                lambda d: min(1.0, 2 * min(d.p_greater(margin), d.p_less(-margin))),
                lambda d, level: one_sided_need(d, margin - abs(d.mean), level),
                lambda d, level: one_sided_need(d, abs(d.mean) - margin, level / 2),
                "TOST p",
            )
            for c in cells
        ]
        return decide(
            judged, self.required_fraction, self.alpha, _cell_seeds(cells), f"TOST at margin ±{fmt(margin)}"
        )
