"""Statistics over seeds for the verdict engine.

Means and differences with their t-intervals, the per-cell levels of a claim over several cells, and
the seeds a test needs. Only :mod:`dpdl.verdicts` uses them to judge claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats

ALPHA = 0.05
CONFIDENCE = 0.95
MAX_SEEDS = 10_000  # a seed count above this is reported as None (more seeds will not decide it)
SEED_COUNTS = np.arange(2, MAX_SEEDS + 1)  # the seed counts seeds_for_halfwidth tries, in order


def finite(values) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    return array[np.isfinite(array)]


def mean_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean and ``confidence`` (95%) t-interval of per-seed values (NaN interval with fewer than 2 values)."""
    x = finite(values)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
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


def difference(low_values, high_values, paired: bool) -> Difference:
    """``high - low``: a paired difference over seeds, or Welch's when the seeds are not paired."""
    low, high = finite(low_values), finite(high_values)
    if paired and len(low_values) == len(high_values):
        d = np.asarray(high_values, dtype=float) - np.asarray(low_values, dtype=float)
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


def cell_levels(m: int, k: int, alpha: float = ALPHA) -> tuple[float, float]:
    """Per-cell levels of a claim that must hold in at least ``k`` of ``m`` cells, tested as one hypothesis.

    For: the claim holds when ``k`` cells are significant at ``alpha / (m - k + 1)``. Under the null
    (at most ``k - 1`` cells true) at least one of them is a false null, and by Markov's inequality
    the chance is at most ``alpha``; with ``k = m`` this is the intersection-union test (every cell at
    ``alpha``, Berger 1982). Against: the claim fails when ``m - k + 1`` cells are significantly the
    other way at ``alpha / k`` (the same rule for "at least m - k + 1 cells false"; ``alpha / m``,
    Bonferroni, when one failing cell refutes an every-cell claim).
    """
    if not 1 <= k <= m:
        raise ValueError(f"need 1 <= k <= m cells; got k = {k}, m = {m}")
    return alpha / (m - k + 1), alpha / k


def seeds_for_halfwidth(sd: float, halfwidth: float, level: float = CONFIDENCE) -> int | None:
    """Fewest seeds whose ``level`` t-interval of a mean is below ``halfwidth``.

    The interval is two-sided, for a spread ``sd``.
    """
    if not (halfwidth > 0 and math.isfinite(sd)):
        return None
    if sd == 0:
        return 2
    below = np.flatnonzero(_t_quantiles(0.5 + level / 2) * sd / np.sqrt(SEED_COUNTS) < halfwidth)
    return int(SEED_COUNTS[below[0]]) if below.size else None


@cache
def _t_quantiles(quantile: float) -> np.ndarray:
    """The t ``quantile`` at ``n - 1`` degrees of freedom for each n of :data:`SEED_COUNTS`.

    It is computed once per level (the same numbers as one ``stats.t.ppf`` call per n; those calls
    took half the time of judging a snapshot).
    """
    quantiles = stats.t.ppf(quantile, SEED_COUNTS - 1)
    quantiles.flags.writeable = False  # shared by every call at this level
    return quantiles


def seeds_for_one_sided(sd_one_run: float, effect: float, alpha: float) -> int | None:
    """Fewest seeds per side for a one-sided test at ``alpha`` to find ``effect``, given one run's spread."""
    if not (abs(effect) > 0 and math.isfinite(sd_one_run)):
        return None
    return seeds_for_halfwidth(sd_one_run, abs(effect), level=1 - 2 * alpha)


def seeds_for_page(mean_l: float, points: int, alpha: float) -> int | None:
    """Fewest seeds (blocks) at which Page's L is significant one-sided at ``alpha``.

    One seed contributes ``mean_l`` to L, as observed. The test is its normal approximation: under
    the null one seed contributes mean p(p+1)^2/4 and variance p^2(p^2-1)(p+1)/144 (Page 1963).
    """
    null_mean = points * (points + 1) ** 2 / 4
    null_var = points**2 * (points**2 - 1) * (points + 1) / 144
    if not (points >= 2 and mean_l > null_mean):
        return None
    n = math.ceil((stats.norm.isf(alpha) * math.sqrt(null_var) / (mean_l - null_mean)) ** 2)
    return max(n, 2) if n <= MAX_SEEDS else None


def seeds_for_kendall(tau: float, points: int, alpha: float) -> int | None:
    """Fewest seeds per grid point at which Kendall's tau-b of ``tau`` is significant.

    The tau-b is between the grid and every seed's value, one-sided at ``alpha`` (scipy's asymptotic
    test: the grid ties in groups of a point's seeds, the values do not tie).
    """
    if not (tau > 0 and points >= 2):
        return None
    n = np.arange(2, MAX_SEEDS + 1, dtype=float)
    total = points * n
    pairs, tied = total * (total - 1) / 2, points * n * (n - 1) / 2
    var_s = (total * (total - 1) * (2 * total + 5) - points * n * (n - 1) * (2 * n + 5)) / 18
    z = tau * np.sqrt((pairs - tied) * pairs) / np.sqrt(var_s)
    enough = np.flatnonzero(z >= stats.norm.isf(alpha))
    return int(n[enough[0]]) if len(enough) else None
