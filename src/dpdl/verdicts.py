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
- :class:`Trend` ("falls with epsilon"): per series, Kendall's tau of the means against the grid
  (exact one-sided p) *and* a Welch test that the end-to-end change goes the claimed way and
  exceeds a margin (by default the seed spread: the pooled standard deviation of one run at the
  two ends), so a flat curve never passes. Not reproduced when a series trends the other way
  significantly, or its end-to-end change is significantly below the margin.
- :class:`Exact` (a deterministic computation: a bound checked exactly, an implementation
  check): holds or not, no seeds involved.

A form's ``judge`` returns a :class:`Judgement`. An inconclusive judgement says how many seeds
would decide it, assuming the observed effect and spread stay as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05
CONFIDENCE = 0.95
MAX_SEEDS = 10_000  # seeds_to_decide above this is reported as None (more seeds will not decide it)

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


# ------------------------------------------------------------------------------ statistics helpers


def _finite(values) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    return array[np.isfinite(array)]


def mean_interval(values) -> tuple[float, float, float]:
    """Mean and 95% t-interval of per-seed values (NaN interval with fewer than 2 values)."""
    x = _finite(values)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class Difference:
    """``high - low`` of one cell: its mean, standard error, degrees of freedom and 95% interval."""

    mean: float
    se: float
    df: float
    n: int

    @property
    def interval(self) -> tuple[float, float]:
        if self.se == 0:
            return self.mean, self.mean
        if not math.isfinite(self.df):
            return math.nan, math.nan
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, self.df) * self.se)
        return self.mean - half, self.mean + half

    def p_greater(self, threshold: float = 0.0) -> float:
        """One-sided p-value of H0: difference <= threshold."""
        if self.se == 0:
            return 0.0 if self.mean > threshold else 1.0
        if not math.isfinite(self.df):
            return math.nan
        return float(stats.t.sf((self.mean - threshold) / self.se, self.df))

    def p_less(self, threshold: float = 0.0) -> float:
        """One-sided p-value of H0: difference >= threshold."""
        if self.se == 0:
            return 0.0 if self.mean < threshold else 1.0
        if not math.isfinite(self.df):
            return math.nan
        return float(stats.t.cdf((self.mean - threshold) / self.se, self.df))


def difference(pair: Pair) -> Difference:
    """``high - low``: a paired difference over seeds, or Welch's when the seeds are not paired."""
    low, high = _finite(pair.low), _finite(pair.high)
    if pair.paired and len(pair.low) == len(pair.high):
        d = np.asarray(pair.high, dtype=float) - np.asarray(pair.low, dtype=float)
        d = d[np.isfinite(d)]
        if len(d) < 2:
            return Difference(float(d.mean()) if len(d) else math.nan, math.nan, math.nan, len(d))
        return Difference(float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))), len(d) - 1.0, len(d))
    n = min(len(low), len(high))
    if len(low) < 2 or len(high) < 2:
        mean = float(high.mean() - low.mean()) if n else math.nan
        return Difference(mean, math.nan, math.nan, n)
    v_low, v_high = low.var(ddof=1) / len(low), high.var(ddof=1) / len(high)
    se = math.sqrt(v_low + v_high)
    if se == 0:
        return Difference(float(high.mean() - low.mean()), 0.0, math.inf, n)
    df = (v_low + v_high) ** 2 / (v_low**2 / (len(low) - 1) + v_high**2 / (len(high) - 1))
    return Difference(float(high.mean() - low.mean()), se, float(df), n)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and counts as not significant)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    m = len(p)
    adjusted = np.full(m, np.nan)
    running = 0.0
    for rank, index in enumerate(order):
        if np.isnan(p[index]):
            break
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def _significant(adjusted: np.ndarray) -> np.ndarray:
    return np.nan_to_num(adjusted, nan=1.0) < ALPHA


def seeds_for_halfwidth(sd: float, halfwidth: float, level: float = CONFIDENCE) -> int | None:
    """Fewest seeds whose two-sided ``level`` t-interval of a mean with spread ``sd`` is below ``halfwidth``."""
    if not (halfwidth > 0 and math.isfinite(sd)):
        return None
    if sd == 0:
        return 2
    quantile = 0.5 + level / 2
    for n in range(2, MAX_SEEDS + 1):
        if stats.t.ppf(quantile, n - 1) * sd / math.sqrt(n) < halfwidth:
            return n
    return None


def seeds_for_one_sided(sd_one_run: float, effect: float, alpha: float) -> int | None:
    """Fewest seeds per side for a one-sided test at ``alpha`` to find ``effect`` given the spread of one run."""
    if not (abs(effect) > 0 and math.isfinite(sd_one_run)):
        return None
    return seeds_for_halfwidth(sd_one_run, abs(effect), level=1 - 2 * alpha)


def _fmt(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{value:.4g}"


def _required(fraction: float, cells: int) -> int:
    return max(1, math.ceil(fraction * cells - 1e-9))


def _cell_seeds(cells: Sequence[Pair]) -> int:
    return min((min(len(_finite(c.low)), len(_finite(c.high))) for c in cells), default=0)


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
        x = _finite(values)
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


def _judge_cells(
    cells: Sequence[Pair],
    diffs: Sequence[Difference],
    p_for: Sequence[float],
    p_against: Sequence[float],
    required_fraction: float,
    test: Callable[[int, int, int, int], str],
    p_label: str,
    room: Callable[[Difference], float],
) -> Judgement:
    """The decision an ordering and an equivalence share, from each cell's p-values for and against the claim.

    Holm-corrects both lists; reproduced when at least the required number of cells is significant
    for the claim, not reproduced when so many are significant against it that the number cannot be
    reached. The deciding cell (the required-th by p for the claim) gives the effect and interval;
    ``room`` is the signed distance of its effect from the claim's threshold (positive on the
    claim's side), from which the seeds to decide follow (:func:`_seeds_to_decide`).
    """
    if not cells:
        return Judgement(INCONCLUSIVE, detail="no cell to compare")
    p_for, p_against = holm(p_for), holm(p_against)
    m, k = len(cells), _required(required_fraction, len(cells))
    n_for, n_against = int(_significant(p_for).sum()), int(_significant(p_against).sum())
    decider = diffs[np.argsort(np.nan_to_num(p_for, nan=2.0), kind="stable")[k - 1]]
    ci = decider.interval
    detail = "; ".join(_cell_line(c, d, f"({p_label} {_fmt(p)})") for c, d, p in zip(cells, diffs, p_for, strict=True))
    base = dict(
        effect=decider.mean,
        ci_low=ci[0],
        ci_high=ci[1],
        test=test(m, n_for, n_against, k),
        n_seeds=_cell_seeds(cells),
        detail=detail,
    )
    if n_for >= k:
        return Judgement(REPRODUCED, **base)
    if n_against > m - k:
        return Judgement(NOT_REPRODUCED, **base)
    sd = decider.se * math.sqrt(max(decider.n, 1)) if math.isfinite(decider.se) else math.nan
    return Judgement(INCONCLUSIVE, seeds_to_decide=_seeds_to_decide(sd, room(decider), m, k), **base)


def _seeds_to_decide(sd_one_run: float, room: float, m: int, k: int) -> int | None:
    """Seeds at which the deciding cell's observed effect and spread would settle an inconclusive claim.

    ``room`` > 0: the effect lies on the claim's side, and the claim holds once the k-th of m cells
    is significant, which Holm tests at ALPHA / (m - k + 1). ``room`` < 0: it lies on the other
    side, and the claim fails once m - k + 1 cells are significant against it, the last of which
    Holm tests at ALPHA / k.
    """
    if not math.isfinite(room):
        return None
    return seeds_for_one_sided(sd_one_run, room, ALPHA / (m - k + 1) if room > 0 else ALPHA / k)


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
            lambda decider: decider.mean,
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
            lambda decider: margin - abs(decider.mean),
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

    def _series(self, series: Series) -> tuple[float, float, float, float, Difference, float, str]:
        """(p for, p against, tau, margin, end-to-end difference, p of change below margin, line)."""
        sign = 1.0 if self.direction == "decreasing" else -1.0
        means = [float(np.mean(_finite(s))) if len(_finite(s)) else math.nan for s in series.samples]
        x = np.asarray(series.x, dtype=float)
        usable = np.isfinite(means)
        if usable.sum() >= 3:
            claimed = "less" if self.direction == "decreasing" else "greater"
            opposite = "greater" if claimed == "less" else "less"
            tau = float(stats.kendalltau(x[usable], np.asarray(means)[usable]).statistic)
            p_claimed = float(stats.kendalltau(x[usable], np.asarray(means)[usable], alternative=claimed).pvalue)
            p_opposite = float(stats.kendalltau(x[usable], np.asarray(means)[usable], alternative=opposite).pvalue)
        else:
            tau, p_claimed, p_opposite = math.nan, math.nan, math.nan
        order = np.argsort(x)
        first, last = series.samples[order[0]], series.samples[order[-1]]
        # change in the claimed direction: first - last for a decreasing trend
        pair = Pair(series.name, low=sign * np.asarray(last, float), high=sign * np.asarray(first, float), paired=False)
        change = difference(pair)
        ends = (_finite(first), _finite(last))
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
        return supports, against, tau, margin, change, spread, line

    def judge(self, series: Sequence[Series]) -> Judgement:
        if not series:
            return Judgement(INCONCLUSIVE, detail="no series")
        rows = [self._series(s) for s in series]
        p_for = holm([r[0] for r in rows])
        p_against = holm([r[1] for r in rows])
        m, k = len(rows), _required(self.required_fraction, len(rows))
        n_for, n_against = int(_significant(p_for).sum()), int(_significant(p_against).sum())
        ranked = np.argsort(np.nan_to_num(p_for, nan=2.0), kind="stable")
        _, _, _, margin, change, spread, _ = rows[ranked[k - 1]]
        ci = change.interval
        test = (
            f"{self.direction}: Kendall tau and end-to-end Welch change beyond "
            f"{'the seed spread' if self.margin is None else _fmt(self.margin)}, Holm over {m} series: "
            f"{n_for} as claimed, {n_against} flat or reversed; {k} needed"
        )
        n = min(min((len(_finite(s)) for s in one.samples), default=0) for one in series)
        detail = "; ".join(r[-1] for r in rows)
        base = dict(effect=change.mean, ci_low=ci[0], ci_high=ci[1], test=test, n_seeds=n, detail=detail)
        if n_for >= k:
            return Judgement(REPRODUCED, **base)
        if n_against > m - k:
            return Judgement(NOT_REPRODUCED, **base)
        seeds = _seeds_to_decide(spread * math.sqrt(2), change.mean - margin, m, k)  # Welch: two ends
        return Judgement(INCONCLUSIVE, seeds_to_decide=seeds, **base)


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
