"""The trend form: each series falls (or rises) along its grid, within seeds where the grid shares them.

Where every grid point ran the same seeds (trials), the test is *within* each seed: Page's L
test of the ordered alternative over the seeds as blocks, and a paired t-test that the
end-to-end change goes the claimed way and exceeds the declared minimum. Otherwise Kendall's tau
pooled over seeds (Jonckheere-Terpstra) and a Welch end-to-end test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy import stats

from dpdl.judgement import INCONCLUSIVE, Cell, Judgement, decide, fmt, one_sided_need, share_text
from dpdl.seed_statistics import ALPHA, Difference, finite, seeds_for_kendall, seeds_for_page
from dpdl.seed_statistics import difference as _difference
from dpdl.verdicts.inputs import Series


def _shared_seeds(series: Series) -> np.ndarray | None:
    """The per-seed matrix when every point ran the same seeds, else None.

    Its rows are seeds and its columns the grid points, in grid order.

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


def _taus_along(z: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``z`` (finite) against its column order.

    ``scipy.stats.kendalltau(np.arange(points), row).statistic`` bit for bit, for all rows at once:
    with no ties in the order, tau = (concordant - discordant) / sqrt(pairs) / sqrt(pairs - tied
    pairs), clipped to [-1, 1], NaN where every pair is tied.
    """
    earlier, later = np.triu_indices(z.shape[1], 1)
    a, b = z[:, earlier], z[:, later]
    pairs = len(earlier)
    tied = (a == b).sum(axis=1)
    con_minus_dis = (b > a).sum(axis=1) - (b < a).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = con_minus_dis / np.sqrt(pairs) / np.sqrt(pairs - tied)
    return np.where(tied == pairs, np.nan, np.clip(tau, -1.0, 1.0))


def _trend_cell(
    name: str, change: Difference, margin: float, p_rank: tuple, rank_need: tuple, line: str
) -> Cell:
    """One series of a trend claim from its rank test and its end-to-end ``change``.

    The rank test gives p-values rising and falling, and the seeds at which each reaches a level;
    ``change`` is judged against ``margin``. For the claim both must hold; against it either (each
    at half the level).
    """
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
            f"else pooled Kendall tau and Welch; change {self._margin_text()}; "
            f"{share_text(self.required_fraction)}"
        )

    def _margin(self, start: np.ndarray) -> float:
        if self.margin is not None:
            return self.margin
        if self.relative_margin is not None:
            return (
                self.relative_margin * abs(float(np.mean(finite(start)))) if len(finite(start)) else math.nan
            )
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
            ranks = stats.rankdata(z, axis=1)
            mean_l = float((ranks * np.arange(1, points + 1)).sum(axis=1).mean())
            p_rise = float(stats.page_trend_test(z, method="asymptotic" if n > 12 else "auto").pvalue)
            p_fall = float(
                stats.page_trend_test(z[:, ::-1], method="asymptotic" if n > 12 else "auto").pvalue
            )
            mean_l_fall = points * (points + 1) ** 2 / 2 - mean_l  # L of the reversed order, per seed
        else:
            mean_l = mean_l_fall = p_rise = p_fall = math.nan
        median_tau = float(np.median(_taus_along(z))) if points >= 3 else math.nan
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
            name,
            change,
            margin,
            (p_rise, p_fall),
            (partial(page_need, mean_l), partial(page_need, mean_l_fall)),
            line,
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
            series.name,
            change,
            margin,
            (p_rise, p_fall),
            (partial(tau_need, p_rise), partial(tau_need, p_fall)),
            line,
        )

    def judge(self, series: Sequence[Series]) -> Judgement:
        if not series:
            return Judgement(INCONCLUSIVE, detail="no series")
        cells = [self._series(s) for s in series]
        n = min(min((len(finite(s)) for s in one.samples), default=0) for one in series)
        paired = [_shared_seeds(s) is not None for s in series]
        if all(paired):
            kind = "within seeds (Page's L, paired t)"
        elif not any(paired):
            kind = "pooled tau and Welch"
        else:
            kind = "within seeds where shared"
        return decide(
            cells,
            self.required_fraction,
            self.alpha,
            n,
            f"{self.direction}, {kind}, change {self._margin_text()}",
        )
