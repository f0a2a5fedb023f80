"""The one statistical verdict engine: per-seed values in; effect, interval, test and verdict out.

Every claim of every study declares a *form*, and only this module turns per-seed values into a
verdict. The rules, all at level ``ALPHA`` = 0.05 with 95% intervals over seeds:

- :class:`StatedNumber` (the paper prints a number): reproduced when the 95% t-interval of our
  mean lies inside paper value ± tolerance; not reproduced when it lies wholly outside; else
  inconclusive.
- :class:`Ordering` ("A below B" in each cell): a one-sided t-test per cell (paired on seeds
  when both sides ran the same seeds, else Welch), Holm-corrected over the cells. Reproduced when
  at least the required number of cells is significant in the claimed direction; not reproduced
  when so many cells are significant the other way that the required number cannot be reached.
- :class:`Equivalence` ("A matches B"): two one-sided tests (TOST) against a margin declared with
  the claim, Holm over the cells; not reproduced when the difference is significantly beyond the
  margin in too many cells.
- :class:`Trend` ("falls with epsilon"): per series, Kendall's tau of every seed's value against
  the grid (one-sided; Jonckheere-Terpstra's test, whose power grows with the seeds) *and* a
  Welch test that the end-to-end change goes the claimed way and exceeds a margin (by default
  the seed spread: the pooled standard deviation of one run at the two ends), so a flat curve
  never passes. Not reproduced when a series trends the other way
  significantly, or its end-to-end change is significantly below the margin.
- :class:`Exact` (a deterministic computation: a bound checked exactly, an implementation
  check): holds or not, no seeds involved.

A form's ``judge`` returns a :class:`Judgement`. An inconclusive judgement says how many seeds
would decide it, assuming every cell's observed effect and spread stay as they are, each cell
tested at its own Holm level (:func:`_seeds_to_decide`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy import stats

from dpdl.seed_statistics import (
    ALPHA,
    Difference,
    finite,
    holm,
    mean_interval,
    seeds_for_halfwidth,
    seeds_for_kendall,
    seeds_for_one_sided,
    significant,
)
from dpdl.seed_statistics import difference as _difference

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_IDENTIFIABLE = "not identifiable"
BOUND_FAILS = "paper's bound does not hold"
NOT_AT_SCALE = "not run at this scale"
UNAVAILABLE = "data unavailable"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_IDENTIFIABLE, BOUND_FAILS, NOT_AT_SCALE, UNAVAILABLE)


@dataclass(frozen=True)
class Judgement:
    """What the engine found: the verdict, the effect with its interval, the test, the seeds."""

    verdict: str
    effect: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    test: str = ""
    n_seeds: int = 0
    seeds_to_decide: int | None = None
    detail: str = ""


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
    """One curve of a trend claim: the grid values and the per-seed values at each."""

    name: str
    x: Sequence[float]
    samples: Sequence[np.ndarray]


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


def _fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.4g}"


def _required(fraction: float, cells: int) -> int:
    return max(1, math.ceil(fraction * cells - 1e-9))


def _cell_seeds(cells: Sequence[Pair]) -> int:
    return min((min(len(finite(c.low)), len(finite(c.high))) for c in cells), default=0)


# ----------------------------------------------------------------------------------------- forms


@dataclass(frozen=True)
class StatedNumber:
    """A number the paper prints: our 95% interval against paper value ± tolerance.

    ``tolerance`` is absolute unless ``relative``, then a fraction of ``|paper_value|``.
    """

    paper_value: float
    tolerance: float
    relative: bool = False
    name = "stated number"

    @property
    def absolute_tolerance(self) -> float:
        return self.tolerance * abs(self.paper_value) if self.relative else self.tolerance

    def describe(self) -> str:
        if self.relative:
            return f"±{self.tolerance * 100:g}% of the paper's value (±{_fmt(self.absolute_tolerance)})"
        return f"±{_fmt(self.tolerance)}"

    def judge(self, values) -> Judgement:
        x = finite(values)
        mean, low, high = mean_interval(x)
        tol = self.absolute_tolerance
        lo_band, hi_band = self.paper_value - tol, self.paper_value + tol
        test = f"95% t-interval of the mean over {len(x)} seeds against {_fmt(self.paper_value)} ± {_fmt(tol)}"
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
        return Judgement(INCONCLUSIVE, seeds_to_decide=seeds_for_halfwidth(float(x.std(ddof=1)), room), **base)


def _cell_line(pair: Pair, diff: Difference, extra: str) -> str:
    low, high = mean_interval(pair.low)[0], mean_interval(pair.high)[0]
    ci = diff.interval
    return f"{pair.name}: {_fmt(low)} vs {_fmt(high)}, diff {_fmt(diff.mean)} [{_fmt(ci[0])}, {_fmt(ci[1])}] {extra}"


@dataclass(frozen=True)
class _Decision:
    """What Holm's correction over the cells (or series) of a claim decides, before it is worded."""

    verdict: str
    decider: int  # the required-th cell by raw p for the claim: it gives the effect and interval
    adjusted_for: np.ndarray
    m: int
    k: int
    n_for: int
    n_against: int
    seeds_to_decide: int | None


def _decide(
    p_for: Sequence[float],
    p_against: Sequence[float],
    required_fraction: float,
    needs_for: Sequence[Callable[[float], int | None]],
    needs_against: Sequence[Callable[[float], int | None]],
    n: int,
) -> _Decision:
    """The decision an ordering, an equivalence and a trend share, from each cell's raw p-values for and
    against the claim: Holm-corrects both lists; reproduced when at least the required number of
    cells is significant for the claim, not reproduced when so many are significant against it that
    the number cannot be reached, else inconclusive with the seeds to decide (:func:`_seeds_to_decide`;
    ``needs_*`` give, per cell, the seeds at which it is significant at a level)."""
    adjusted_for, adjusted_against = holm(p_for), holm(p_against)
    order_for, m, k = _by_p(p_for), len(p_for), _required(required_fraction, len(p_for))
    n_for, n_against = int(significant(adjusted_for).sum()), int(significant(adjusted_against).sum())
    seeds = None
    if n_for >= k:
        verdict = REPRODUCED
    elif n_against > m - k:
        verdict = NOT_REPRODUCED
    else:
        verdict = INCONCLUSIVE
        seeds = _seeds_to_decide(
            [needs_for[i] for i in order_for], [needs_against[i] for i in _by_p(p_against)], m, k, n
        )
    return _Decision(verdict, int(order_for[k - 1]), adjusted_for, m, k, n_for, n_against, seeds)


def _judge_cells(
    cells: Sequence[Pair],
    diffs: Sequence[Difference],
    p_for: Sequence[float],
    p_against: Sequence[float],
    required_fraction: float,
    test: Callable[[int, int, int, int], str],
    p_label: str,
    need_for: Callable[[Difference, float], int | None],
    need_against: Callable[[Difference, float], int | None],
) -> Judgement:
    """An ordering's or an equivalence's judgement (:func:`_decide`), worded from its cells' differences."""
    if not cells:
        return Judgement(INCONCLUSIVE, detail="no cell to compare")
    n = _cell_seeds(cells)
    decision = _decide(
        p_for,
        p_against,
        required_fraction,
        [partial(need_for, d) for d in diffs],
        [partial(need_against, d) for d in diffs],
        n,
    )
    decider = diffs[decision.decider]
    ci = decider.interval
    detail = "; ".join(
        _cell_line(c, d, f"({p_label} {_fmt(p)})") for c, d, p in zip(cells, diffs, decision.adjusted_for, strict=True)
    )
    return Judgement(
        decision.verdict,
        effect=decider.mean,
        ci_low=ci[0],
        ci_high=ci[1],
        test=test(decision.m, decision.n_for, decision.n_against, decision.k),
        n_seeds=n,
        seeds_to_decide=decision.seeds_to_decide,
        detail=detail,
    )


def _by_p(p_values: Sequence[float]) -> np.ndarray:
    """Cell indices from the smallest raw p-value up (NaN last): the order in which Holm tests them."""
    return np.argsort(np.nan_to_num(np.asarray(p_values, dtype=float), nan=2.0), kind="stable")


def _seeds_to_decide(
    need_for: Sequence[Callable[[float], int | None]],
    need_against: Sequence[Callable[[float], int | None]],
    m: int,
    k: int,
    n: int,
) -> int | None:
    """Seeds at which an inconclusive claim would be decided, if every cell's effect and spread stay as observed.

    Each list holds one function per cell, in Holm's order (smallest raw p first), giving the seeds
    at which that cell is significant at a level. Holm tests the j-th cell (from 0) at
    ALPHA / (m - j): the claim holds once the first k cells for it are significant, and fails once
    the first m - k + 1 cells against it are. The answer is the sooner of the two, and more than
    the ``n`` seeds that did not decide it; ``None`` when neither can happen (a required cell's
    effect lies on the wrong side, or more than ``MAX_SEEDS`` would be needed).
    """

    def path(needs: Sequence[Callable[[float], int | None]], count: int) -> int | None:
        seeds = [need(ALPHA / (m - j)) for j, need in enumerate(needs[:count])]
        return None if len(seeds) < count or None in seeds else max(seeds)

    paths = [s for s in (path(need_for, k), path(need_against, m - k + 1)) if s is not None]
    return max(min(paths), n + 1) if paths else None


def _one_sided_need(diff: Difference, room: float, level: float) -> int | None:
    """Seeds at which ``diff``'s spread finds an effect of size ``room`` (> 0) at a one-sided ``level``."""
    if not room > 0 or not math.isfinite(diff.se):
        return None
    return seeds_for_one_sided(diff.se * math.sqrt(max(diff.n, 1)), room, level)


@dataclass(frozen=True)
class Ordering:
    """``low`` below ``high`` in at least ``required_fraction`` of the cells (one-sided t, Holm)."""

    required_fraction: float = 1.0
    name = "ordering"

    def describe(self) -> str:
        share = "every cell" if self.required_fraction >= 1 else f"{self.required_fraction:.0%} of cells"
        return f"one-sided t-test at {ALPHA}, Holm over cells; {share}"

    def judge(self, cells: Sequence[Pair]) -> Judgement:
        diffs = [difference(c) for c in cells]
        return _judge_cells(
            cells,
            diffs,
            [d.p_greater() for d in diffs],
            [d.p_less() for d in diffs],
            self.required_fraction,
            lambda m, n_for, n_against, k: (
                f"one-sided {'paired' if cells[0].paired else 'Welch'} t, Holm over {m} cells: "
                f"{n_for} significant as claimed, {n_against} the other way; {k} needed"
            ),
            "Holm p",
            lambda d, level: _one_sided_need(d, d.mean, level),
            lambda d, level: _one_sided_need(d, -d.mean, level),
        )


@dataclass(frozen=True)
class Equivalence:
    """The two sides agree within ``margin`` (absolute) in the required cells: TOST, Holm."""

    margin: float
    required_fraction: float = 1.0
    name = "equivalence"

    def describe(self) -> str:
        return f"equivalence margin ±{_fmt(self.margin)} (two one-sided tests at {ALPHA}, Holm over cells)"

    def judge(self, cells: Sequence[Pair]) -> Judgement:
        diffs = [difference(c) for c in cells]
        margin = self.margin
        return _judge_cells(
            cells,
            diffs,
            [max(d.p_greater(-margin), d.p_less(margin)) for d in diffs],
            [min(1.0, 2 * min(d.p_greater(margin), d.p_less(-margin))) for d in diffs],
            self.required_fraction,
            lambda m, n_in, n_out, k: (
                f"TOST at margin ±{_fmt(margin)}, Holm over {m} cells: {n_in} equivalent, "
                f"{n_out} significantly beyond the margin; {k} needed"
            ),
            "Holm TOST p",
            lambda d, level: _one_sided_need(d, margin - abs(d.mean), level),
            lambda d, level: _one_sided_need(d, abs(d.mean) - margin, level / 2),
        )


@dataclass(frozen=True)
class Trend:
    """Each series falls (or rises) along its grid: Kendall's tau and an end-to-end change beyond a margin.

    ``margin`` is the end-to-end change a trend must exceed, in the value's units; ``None`` takes
    the seed spread (pooled standard deviation of one run at the two ends).
    """

    direction: str = "decreasing"
    margin: float | None = None
    required_fraction: float = 1.0
    name = "trend"

    def __post_init__(self) -> None:
        if self.direction not in ("decreasing", "increasing"):
            raise ValueError(f"direction must be 'decreasing' or 'increasing'; got {self.direction!r}")

    def describe(self) -> str:
        margin = "the seed spread" if self.margin is None else f"±{_fmt(self.margin)}"
        return f"{self.direction}: one-sided Kendall tau and end-to-end Welch test at {ALPHA}, change beyond {margin}"

    def _series(self, series: Series) -> _SeriesTest:
        """Both tests of one series, and the seeds at which each would reach a level."""
        sign = 1.0 if self.direction == "decreasing" else -1.0
        claimed = "less" if self.direction == "decreasing" else "greater"
        opposite = "greater" if claimed == "less" else "less"
        x = np.asarray(series.x, dtype=float)
        kept = [finite(s) for s in series.samples]
        if sum(len(v) > 0 for v in kept) >= 3:
            # pooled over seeds (Jonckheere-Terpstra's statistic): its power grows with the seeds
            xs = np.concatenate([np.full(len(v), xi) for xi, v in zip(x, kept, strict=True)])
            ys = np.concatenate(kept)
            tau, p_claimed = map(float, stats.kendalltau(xs, ys, alternative=claimed))
            p_opposite = float(stats.kendalltau(xs, ys, alternative=opposite).pvalue)
        else:
            tau, p_claimed, p_opposite = math.nan, math.nan, math.nan
        order = np.argsort(x)
        first, last = series.samples[order[0]], series.samples[order[-1]]
        # change in the claimed direction: first - last for a decreasing trend
        pair = Pair(series.name, low=sign * np.asarray(last, float), high=sign * np.asarray(first, float), paired=False)
        change = difference(pair)
        ends = (finite(first), finite(last))
        spread = math.sqrt((ends[0].var(ddof=1) + ends[1].var(ddof=1)) / 2) if min(map(len, ends)) >= 2 else math.nan
        margin = spread if self.margin is None else self.margin
        p_change = change.p_greater(0.0)
        # with fewer than 3 grid points Kendall's tau says nothing: the end-to-end test decides alone
        tests = [p for p in (p_claimed, p_change) if not math.isnan(p)] if not math.isnan(p_change) else []
        supports = (max(tests) if tests else math.nan) if change.mean > margin else 1.0
        p_small = change.p_less(margin) if math.isfinite(margin) else math.nan
        known = [p for p in (p_opposite, p_small) if not math.isnan(p)]
        against = min(known) if known else math.nan
        ci = change.interval
        line = (
            f"{series.name}: tau {_fmt(tau)} (p {_fmt(p_claimed)}), change {_fmt(change.mean)} "
            f"[{_fmt(ci[0])}, {_fmt(ci[1])}] vs margin {_fmt(margin)}"
        )

        def tau_need(p: float, level: float) -> int | None:
            if math.isnan(p):
                return 0  # no tau test: the end-to-end change decides alone
            return seeds_for_kendall(abs(tau), len(kept), level) if p < 0.5 else None  # p < 0.5: tau on this side

        def need_for(level: float) -> int | None:
            needs = [tau_need(p_claimed, level), _one_sided_need(change, change.mean - margin, level)]
            return None if None in needs else max(needs)

        def need_against(level: float) -> int | None:
            needs = (tau_need(p_opposite, level), _one_sided_need(change, margin - change.mean, level))
            return min((n for n in needs if n), default=None)

        return _SeriesTest(supports, against, change, line, need_for, need_against)

    def judge(self, series: Sequence[Series]) -> Judgement:
        if not series:
            return Judgement(INCONCLUSIVE, detail="no series")
        rows = [self._series(s) for s in series]
        n = min(min((len(finite(s)) for s in one.samples), default=0) for one in series)
        decision = _decide(
            [r.p_for for r in rows],
            [r.p_against for r in rows],
            self.required_fraction,
            [r.need_for for r in rows],
            [r.need_against for r in rows],
            n,
        )
        change = rows[decision.decider].change
        ci = change.interval
        test = (
            f"{self.direction}: Kendall tau over seeds and end-to-end Welch change beyond "
            f"{'the seed spread' if self.margin is None else _fmt(self.margin)}, Holm over {decision.m} series: "
            f"{decision.n_for} as claimed, {decision.n_against} flat or reversed; {decision.k} needed"
        )
        return Judgement(
            decision.verdict,
            effect=change.mean,
            ci_low=ci[0],
            ci_high=ci[1],
            test=test,
            n_seeds=n,
            seeds_to_decide=decision.seeds_to_decide,
            detail="; ".join(r.line for r in rows),
        )


@dataclass(frozen=True)
class _SeriesTest:
    """One series of a trend claim: its p-values for and against, end-to-end change, line, seed needs."""

    p_for: float
    p_against: float
    change: Difference
    line: str
    need_for: Callable[[float], int | None]
    need_against: Callable[[float], int | None]


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


Form = StatedNumber | Ordering | Equivalence | Trend | Exact
FORMS = {form.name: form for form in (StatedNumber, Ordering, Equivalence, Trend, Exact)}
