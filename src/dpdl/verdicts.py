"""The one statistical verdict engine: per-seed values in; effect, interval, test and verdict out.

Every claim of every study declares a *form*, and only this module turns per-seed values into a
verdict. Each form tests at its level ``alpha`` (``ALPHA`` = 0.05, 95% intervals over seeds;
a part of a disjunction at ``alpha`` divided by the parts):

- :class:`StatedNumber` (the paper prints a number): reproduced when the t-interval of our mean
  lies inside paper value ± tolerance; not reproduced when it lies wholly outside; else
  inconclusive.
- :class:`Ordering` ("A below B" in each cell): a one-sided t-test per cell, paired on seeds when
  both sides ran the same seeds, else Welch.
- :class:`Equivalence` ("A matches B"): two one-sided tests (TOST) per cell against a margin
  declared with the claim.
- :class:`Trend` ("falls with epsilon"), per series: where every grid point ran the same seeds
  (trials), the test is *within* each seed: Page's L test of the ordered alternative over the
  seeds as blocks, and a paired t-test that the end-to-end change goes the claimed way and exceeds
  the declared minimum (none unless the claim declares one, absolute or relative to the start).
  Otherwise (seeds not shared) Kendall's tau pooled over seeds (Jonckheere-Terpstra) and a Welch
  end-to-end test.
- :class:`AnyOf` (a sentence "A or B"): one claim that holds when either part holds, each part at
  ``alpha`` / parts.
- :class:`Exact` (a deterministic computation: a bound checked exactly, an implementation
  check): holds or not, no seeds involved.

A claim over several cells (or series) holds "in at least k of m cells", tested as one hypothesis;
the rule, the typical cell the effect shows and the deciding cell are in :mod:`dpdl.judgement`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from scipy import stats

from dpdl.judgement import (  # noqa: F401  (the verdict words and Judgement are part of this module's face)
    BOUND_FAILS,
    INCONCLUSIVE,
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    PREMISE_FAILS,
    REPRODUCED,
    UNAVAILABLE,
    VERDICTS,
    Cell,
    Judgement,
    decide,
    fmt,
    one_sided_need,
    share_text,
)
from dpdl.seed_statistics import (
    ALPHA,
    Difference,
    finite,
    mean_interval,
    seeds_for_halfwidth,
    seeds_for_kendall,
    seeds_for_page,
)
from dpdl.seed_statistics import difference as _difference


@dataclass(frozen=True)
class Pair:
    """One cell of an ordering or equivalence claim: per-seed values of the two sides.

    For an ordering the claim is ``mean(low) < mean(high)``; for an equivalence the sides are
    symmetric. ``paired`` says the two arrays hold the same seeds in the same order.
    """

    name: str
    low: np.ndarray
    high: np.ndarray
    paired: bool = True


@dataclass(frozen=True)
class Series:
    """One curve of a trend claim: the grid values and the per-seed values at each.

    ``seeds`` (optional) names the seed (trial) of every value at every grid point; where every
    point holds the same seeds, the trend is tested within seeds.
    """

    name: str
    x: Sequence[float]
    samples: Sequence[np.ndarray]
    seeds: Sequence[np.ndarray] | None = None


@dataclass(frozen=True)
class Unidentified:
    """What an extractor returns when the quantity does not depend on what the claim is about."""

    reason: str


@dataclass(frozen=True)
class Outcome:
    """The result of an exact (deterministic) check."""

    holds: bool
    value: str
    detail: str = ""


def difference(pair: Pair) -> Difference:
    """``high - low`` of one cell over its seeds: paired, or Welch's when the seeds are not paired."""
    return _difference(pair.low, pair.high, pair.paired)


def _cell_seeds(cells: Sequence[Pair]) -> int:
    return min((min(len(finite(c.low)), len(finite(c.high))) for c in cells), default=0)


def _pair_cell(pair: Pair, p_for, p_against, need_for, need_against, label: str) -> Cell:
    diff = difference(pair)
    low, high = mean_interval(pair.low)[0], mean_interval(pair.high)[0]
    ci = diff.interval
    pf = p_for(diff)
    line = (
        f"{pair.name}: {fmt(low)} vs {fmt(high)}, diff {fmt(diff.mean)} [{fmt(ci[0])}, {fmt(ci[1])}] "
        f"({label} {fmt(pf)})"
    )
    return Cell(pair.name, diff, pf, p_against(diff), partial(need_for, diff), partial(need_against, diff), line)


# ----------------------------------------------------------------------------------------- forms


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
            f"{confidence:.1%} t-interval of the mean over {len(x)} seeds against {fmt(self.paper_value)} ± {fmt(tol)}"
        )
        base = dict(effect=mean - self.paper_value, n_seeds=len(x), test=test)
        if len(x) == 0:
            return Judgement(NOT_REPRODUCED, detail="no finite value (every run diverged)", **base)
        if len(x) == 1:
            return Judgement(INCONCLUSIVE, seeds_to_decide=2, detail="one seed: no interval", **base)
        base.update(ci_low=low - self.paper_value, ci_high=high - self.paper_value)
        if lo_band <= low and high <= hi_band:
            return Judgement(REPRODUCED, **base)
        if high < lo_band or low > hi_band:
            return Judgement(NOT_REPRODUCED, **base)
        room = (
            min(mean - lo_band, hi_band - mean) if lo_band <= mean <= hi_band else max(lo_band - mean, mean - hi_band)
        )
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
        kind = (
            "paired"
            if all(c.paired for c in cells)
            else "Welch"
            if not any(c.paired for c in cells)
            else "paired/Welch"
        )
        return decide(judged, self.required_fraction, self.alpha, _cell_seeds(cells), f"one-sided {kind} t per cell")


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
        return decide(judged, self.required_fraction, self.alpha, _cell_seeds(cells), f"TOST at margin ±{fmt(margin)}")


def _shared_seeds(series: Series) -> np.ndarray | None:
    """The per-seed matrix (seeds x grid points, in grid order) when every point ran the same seeds, else None.

    Seeds with a non-finite value at some point are left out (a diverged run).
    """
    if series.seeds is None or len(series.x) < 2:
        return None
    ids = [np.asarray(s) for s in series.seeds]
    first = sorted(ids[0].tolist())
    if len(first) < 2 or len(set(first)) != len(first) or any(sorted(i.tolist()) != first for i in ids):
        return None
    order = np.argsort(np.asarray(series.x, dtype=float), kind="stable")
    columns = []
    for point in order:
        by_seed = dict(zip(ids[point].tolist(), np.asarray(series.samples[point], dtype=float), strict=True))
        columns.append([by_seed[s] for s in first])
    matrix = np.array(columns, dtype=float).T
    matrix = matrix[np.isfinite(matrix).all(axis=1)]
    return matrix if len(matrix) >= 2 else None


def _trend_cell(name: str, change: Difference, margin: float, p_rank: tuple, rank_need: tuple, line: str) -> Cell:
    """One series of a trend claim from its rank test (p-values rising and falling, and the seeds at which
    each reaches a level) and its end-to-end ``change`` against ``margin``: for the claim both must hold;
    against it either (each at half the level)."""
    p_rise, p_fall = p_rank
    need_rise, need_fall = rank_need
    p_change = change.p_greater(margin)
    p_for = math.nan if math.isnan(p_change) else (p_change if math.isnan(p_rise) else max(p_rise, p_change))
    against = [p for p in (p_fall, change.p_less(margin)) if not math.isnan(p)]
    p_against = min(1.0, 2 * min(against)) if against else math.nan

    def need_for(level: float) -> int | None:
        needs = [need_rise(level), one_sided_need(change, change.mean - margin, level)]
        return None if None in needs else max(needs)

    def need_against(level: float) -> int | None:
        needs = (need_fall(level / 2), one_sided_need(change, margin - change.mean, level / 2))
        return min((s for s in needs if s), default=None)

    return Cell(name, change, p_for, p_against, need_for, need_against, line)


@dataclass(frozen=True)
class Trend:
    """Each series falls (or rises) along its grid, in at least ``required_fraction`` of the series.

    ``margin`` (absolute, in the value's units) or ``relative_margin`` (a fraction of the mean value
    at the grid's first point) is the end-to-end change a trend must exceed; none by default.
    """

    direction: str = "decreasing"
    margin: float | None = None
    relative_margin: float | None = None
    required_fraction: float = 1.0
    alpha: float = ALPHA
    name = "trend"

    def __post_init__(self) -> None:
        if self.direction not in ("decreasing", "increasing"):
            raise ValueError(f"direction must be 'decreasing' or 'increasing'; got {self.direction!r}")
        if self.margin is not None and self.relative_margin is not None:
            raise ValueError("a trend declares an absolute margin or a relative one, not both")

    def _margin_text(self) -> str:
        if self.margin is not None:
            return f"beyond {fmt(self.margin)}"
        if self.relative_margin is not None:
            return f"beyond {self.relative_margin:.0%} of the start"
        return "beyond 0"

    def describe(self) -> str:
        return (
            f"{self.direction}: within seeds (Page's L and paired end-to-end t) where the grid shares seeds, "
            f"else pooled Kendall tau and Welch; change {self._margin_text()}; {share_text(self.required_fraction)}"
        )

    def _margin(self, start: np.ndarray) -> float:
        if self.margin is not None:
            return self.margin
        if self.relative_margin is not None:
            return self.relative_margin * abs(float(np.mean(finite(start)))) if len(finite(start)) else math.nan
        return 0.0

    def _series(self, series: Series) -> Cell:
        sign = 1.0 if self.direction == "increasing" else -1.0  # claimed: sign * value rises along x
        order = np.argsort(np.asarray(series.x, dtype=float), kind="stable")
        first, last = series.samples[order[0]], series.samples[order[-1]]
        margin = self._margin(np.asarray(first, dtype=float))
        matrix = _shared_seeds(series)
        if matrix is not None:
            return self._paired(series.name, sign * matrix, margin)
        return self._pooled(series, sign, margin, first, last)

    def _paired(self, name: str, z: np.ndarray, margin: float) -> Cell:
        """Within seeds: ``z`` (seeds x points, grid order) should rise along the points."""
        n, points = z.shape
        change = _difference(z[:, 0], z[:, -1], True)
        if points >= 3:
            ranks = np.array([stats.rankdata(row) for row in z])
            mean_l = float((ranks * np.arange(1, points + 1)).sum(axis=1).mean())
            p_rise = float(stats.page_trend_test(z, method="asymptotic" if n > 12 else "auto").pvalue)
            p_fall = float(stats.page_trend_test(z[:, ::-1], method="asymptotic" if n > 12 else "auto").pvalue)
            mean_l_fall = points * (points + 1) ** 2 / 2 - mean_l  # L of the reversed order, per seed
        else:
            mean_l = mean_l_fall = p_rise = p_fall = math.nan
        taus = [stats.kendalltau(np.arange(points), row).statistic for row in z] if points >= 3 else []
        median_tau = float(np.median(taus)) if taus else math.nan
        monotone = int(np.sum(np.all(np.diff(z, axis=1) > 0, axis=1)))
        ci = change.interval
        line = (
            f"{name}: within {n} seeds, Page p {fmt(p_rise)}, median per-seed tau {fmt(median_tau)}, "
            f"{monotone} of {n} monotone as claimed; change {fmt(change.mean)} [{fmt(ci[0])}, {fmt(ci[1])}] "
            f"vs {fmt(margin)}"
        )

        def page_need(l_value: float, level: float) -> int | None:
            return 0 if math.isnan(l_value) else seeds_for_page(l_value, points, level)

        return _trend_cell(
            name, change, margin, (p_rise, p_fall), (partial(page_need, mean_l), partial(page_need, mean_l_fall)), line
        )

    def _pooled(self, series: Series, sign: float, margin: float, first, last) -> Cell:
        """Seeds not shared over the grid: Kendall's tau pooled over seeds and a Welch end-to-end change."""
        x = np.asarray(series.x, dtype=float)
        kept = [finite(s) for s in series.samples]
        if sum(len(v) > 0 for v in kept) >= 3:
            xs = np.concatenate([np.full(len(v), xi) for xi, v in zip(x, kept, strict=True)])
            ys = sign * np.concatenate(kept)
            tau, p_rise = map(float, stats.kendalltau(xs, ys, alternative="greater"))
            p_fall = float(stats.kendalltau(xs, ys, alternative="less").pvalue)
        else:
            tau, p_rise, p_fall = math.nan, math.nan, math.nan
        change = _difference(sign * np.asarray(first, float), sign * np.asarray(last, float), False)
        ci = change.interval
        line = (
            f"{series.name}: pooled tau {fmt(tau)} as claimed (p {fmt(p_rise)}), change {fmt(change.mean)} "
            f"[{fmt(ci[0])}, {fmt(ci[1])}] vs {fmt(margin)} (Welch: seeds not shared over the grid)"
        )

        def tau_need(p: float, level: float) -> int | None:
            if math.isnan(p):
                return 0
            return seeds_for_kendall(abs(tau), len(kept), level) if p < 0.5 else None

        return _trend_cell(
            series.name, change, margin, (p_rise, p_fall), (partial(tau_need, p_rise), partial(tau_need, p_fall)), line
        )

    def judge(self, series: Sequence[Series]) -> Judgement:
        if not series:
            return Judgement(INCONCLUSIVE, detail="no series")
        cells = [self._series(s) for s in series]
        n = min(min((len(finite(s)) for s in one.samples), default=0) for one in series)
        paired = [_shared_seeds(s) is not None for s in series]
        kind = (
            "within seeds (Page's L, paired t)"
            if all(paired)
            else "pooled tau and Welch"
            if not any(paired)
            else "within seeds where shared"
        )
        return decide(
            cells, self.required_fraction, self.alpha, n, f"{self.direction}, {kind}, change {self._margin_text()}"
        )


@dataclass(frozen=True)
class AnyOf:
    """One sentence "A or B": holds when any part holds, each part tested at ``alpha`` / parts.

    Its input is a tuple with one input per part, in order. Not reproduced when every part is not
    reproduced; else inconclusive.
    """

    parts: tuple
    name = "disjunction"

    def __post_init__(self) -> None:
        if len(self.parts) < 2 or any(isinstance(p, AnyOf | Exact) for p in self.parts):
            raise ValueError("a disjunction needs at least two parts, none of them exact or itself a disjunction")

    def describe(self) -> str:
        return " OR ".join(f"({part.describe()})" for part in self._split())

    def _split(self) -> list:
        return [replace(part, alpha=part.alpha / len(self.parts)) for part in self.parts]

    def judge(self, data: Sequence) -> Judgement:
        judged = [part.judge(d) for part, d in zip(self._split(), data, strict=True)]
        verdicts = [j.verdict for j in judged]
        if REPRODUCED in verdicts:
            verdict, chosen = REPRODUCED, verdicts.index(REPRODUCED)
        elif all(v == NOT_REPRODUCED for v in verdicts):
            verdict, chosen = NOT_REPRODUCED, 0
        else:
            verdict, chosen = INCONCLUSIVE, 0
        pick = judged[chosen]
        open_seeds = [j.seeds_to_decide for j in judged if j.verdict == INCONCLUSIVE and j.seeds_to_decide]
        return replace(
            pick,
            verdict=verdict,
            test=" OR ".join(f"part {i + 1} ({j.verdict}): {j.test}" for i, j in enumerate(judged)),
            detail=" | ".join(f"part {i + 1}: {j.detail}" for i, j in enumerate(judged)),
            seeds_to_decide=min(open_seeds) if verdict == INCONCLUSIVE and open_seeds else None,
            deciding=f"part {chosen + 1}" + (f", {pick.deciding}" if pick.deciding else ""),
        )


@dataclass(frozen=True)
class Exact:
    """A deterministic check (an exact computation; no seeds): holds or not.

    ``fails_as`` is the verdict when it does not hold: ``not reproduced``, or ``paper's bound does
    not hold`` for a bound the paper proves and an exact computation contradicts.
    """

    fails_as: str = NOT_REPRODUCED
    name = "exact"

    def describe(self) -> str:
        return "exact computation"

    def judge(self, outcome: Outcome) -> Judgement:
        verdict = REPRODUCED if outcome.holds else self.fails_as
        return Judgement(verdict, test="exact computation", detail=outcome.detail)


Form = StatedNumber | Ordering | Equivalence | Trend | AnyOf | Exact
FORMS = {form.name: form for form in (StatedNumber, Ordering, Equivalence, Trend, AnyOf, Exact)}
