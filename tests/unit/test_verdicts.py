"""The verdict engine: every form passes, fails and (where it can) stays inconclusive on fabricated seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdl.verdicts import (
    BOUND_FAILS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Equivalence,
    Exact,
    Ordering,
    Outcome,
    Pair,
    Series,
    StatedNumber,
    Trend,
    difference,
    holm,
    mean_interval,
    seeds_for_halfwidth,
)

RNG = np.random.default_rng(20261124)


def seeds(mean: float, sd: float, n: int = 10) -> np.ndarray:
    """n values with exactly this mean and sample standard deviation."""
    z = RNG.standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z


# ------------------------------------------------------------------------------ building blocks


def test_mean_interval_is_the_t_interval() -> None:
    x = seeds(5.0, 2.0, n=10)
    mean, low, high = mean_interval(x)
    half = stats.t.ppf(0.975, 9) * 2.0 / math.sqrt(10)
    assert mean == pytest.approx(5.0) and low == pytest.approx(5.0 - half) and high == pytest.approx(5.0 + half)


def test_paired_and_welch_differences_match_scipy() -> None:
    a, b = seeds(1.0, 0.5), seeds(1.4, 0.7)
    paired = difference(Pair("c", a, b, paired=True))
    assert paired.p_greater() == pytest.approx(stats.ttest_rel(b, a, alternative="greater").pvalue)
    welch = difference(Pair("c", a, b[:7], paired=False))
    assert welch.p_greater() == pytest.approx(stats.ttest_ind(b[:7], a, equal_var=False, alternative="greater").pvalue)
    assert welch.p_less() == pytest.approx(stats.ttest_ind(b[:7], a, equal_var=False, alternative="less").pvalue)


def test_holm_matches_the_step_down_definition() -> None:
    # sorted p: 0.01, 0.02, 0.04 -> 3*0.01, max(0.03, 2*0.02), max(0.04, 0.04)
    assert holm([0.04, 0.01, 0.02]).tolist() == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.001]).tolist() == pytest.approx([0.5, 0.002])
    assert np.isnan(holm([math.nan, 0.01])[0]) and holm([math.nan, 0.01])[1] == pytest.approx(0.02)


def test_seeds_for_halfwidth_is_the_smallest_sufficient_count() -> None:
    n = seeds_for_halfwidth(1.0, 0.5)
    assert stats.t.ppf(0.975, n - 1) / math.sqrt(n) < 0.5 <= stats.t.ppf(0.975, n - 2) / math.sqrt(n - 1)


# ------------------------------------------------------------------------------------------ forms


@pytest.mark.parametrize(
    ("mean", "sd", "verdict"),
    [(7.5, 0.3, REPRODUCED), (11.0, 0.3, NOT_REPRODUCED), (8.4, 0.3, INCONCLUSIVE), (7.5, 3.0, INCONCLUSIVE)],
)
def test_stated_number(mean: float, sd: float, verdict: str) -> None:
    judgement = StatedNumber(paper_value=7.42, tolerance=1.0).judge(seeds(mean, sd))
    assert judgement.verdict == verdict
    assert judgement.effect == pytest.approx(mean - 7.42) and judgement.n_seeds == 10
    if verdict == INCONCLUSIVE:
        assert judgement.seeds_to_decide is not None and judgement.seeds_to_decide > 10


def test_stated_number_relative_tolerance_and_single_seed() -> None:
    form = StatedNumber(paper_value=18.65, tolerance=0.2, relative=True)  # +-3.73
    assert form.judge(seeds(9.26, 0.5)).verdict == NOT_REPRODUCED
    assert form.judge(seeds(17.0, 0.5)).verdict == REPRODUCED
    assert form.judge([17.0]).verdict == INCONCLUSIVE


@pytest.mark.parametrize(("gap", "verdict"), [(0.5, REPRODUCED), (-0.5, NOT_REPRODUCED), (0.02, INCONCLUSIVE)])
def test_ordering_every_cell(gap: float, verdict: str) -> None:
    cells = [Pair(f"eps {e}", seeds(1.0, 0.3), seeds(1.0 + gap, 0.3), paired=False) for e in (0.1, 1, 10)]
    judgement = Ordering().judge(cells)
    assert judgement.verdict == verdict
    assert judgement.ci_low <= judgement.effect <= judgement.ci_high
    assert (judgement.seeds_to_decide is not None) == (verdict == INCONCLUSIVE)


def test_ordering_required_fraction_lets_one_cell_go_either_way() -> None:
    cells = [Pair(str(i), seeds(1.0, 0.1), seeds(2.0, 0.1)) for i in range(3)]
    cells.append(Pair("against", seeds(2.0, 0.1), seeds(1.0, 0.1)))
    assert Ordering().judge(cells).verdict == NOT_REPRODUCED
    assert Ordering(required_fraction=0.75).judge(cells).verdict == REPRODUCED


def test_ordering_is_not_fooled_by_a_band_collapse() -> None:
    # a tiny but perfectly consistent paired difference is a real ordering; no band width is involved
    a = seeds(0.5, 0.01)
    assert Ordering().judge([Pair("c", a, a + 0.0008, paired=True)]).verdict == REPRODUCED


@pytest.mark.parametrize(
    ("gap", "sd", "verdict"), [(0.0008, 0.002, REPRODUCED), (0.05, 0.002, NOT_REPRODUCED), (0.005, 0.02, INCONCLUSIVE)]
)
def test_equivalence(gap: float, sd: float, verdict: str) -> None:
    cells = [Pair("u=1", seeds(0.778, sd), seeds(0.778 + gap, sd), paired=False)]
    assert Equivalence(margin=0.01).judge(cells).verdict == verdict


def curve(ends: tuple[float, float], sd: float, points: int = 5) -> Series:
    x = np.geomspace(0.01, 1.0, points)
    return Series("dvp", x, [seeds(m, sd) for m in np.linspace(*ends, points)])


@pytest.mark.parametrize(
    ("ends", "sd", "verdict"),
    [
        ((1.0, 0.2), 0.1, REPRODUCED),  # falls by 8 seed spreads
        ((0.2, 1.0), 0.1, NOT_REPRODUCED),  # rises
        ((0.5, 0.5), 0.01, NOT_REPRODUCED),  # flat: the change is significantly below one seed spread
        ((0.5, 0.47), 0.05, INCONCLUSIVE),  # falls by less than the spread, not significantly flat either
    ],
)
def test_trend(ends: tuple[float, float], sd: float, verdict: str) -> None:
    assert Trend("decreasing").judge([curve(ends, sd)]).verdict == verdict


def test_a_monotone_but_tiny_trend_does_not_pass() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5]
    tiny = Series("flat", x, [seeds(0.5 - 1e-4 * i, 0.05) for i in range(5)])  # Kendall tau = -1, change 4e-4
    judgement = Trend("decreasing").judge([tiny])
    assert judgement.verdict != REPRODUCED and "tau -1" in judgement.detail


def test_trend_with_a_declared_margin_and_increasing_direction() -> None:
    rising = curve((0.2, 1.0), 0.1)
    assert Trend("increasing", margin=0.5).judge([rising]).verdict == REPRODUCED
    assert Trend("increasing", margin=2.0).judge([rising]).verdict == NOT_REPRODUCED
    with pytest.raises(ValueError, match="direction"):
        Trend("sideways")


def test_exact_checks() -> None:
    assert Exact().judge(Outcome(True, "0.9 <= 1")).verdict == REPRODUCED
    assert Exact().judge(Outcome(False, "1.2 > 1")).verdict == NOT_REPRODUCED
    assert Exact(fails_as=BOUND_FAILS).judge(Outcome(False, "eps (29) 0.8 < exact 1.3")).verdict == BOUND_FAILS


def test_a_two_point_trend_is_decided_by_its_end_to_end_change() -> None:
    two = Series("dvp", [0.1, 1.0], [seeds(1.0, 0.1), seeds(0.2, 0.1)])
    assert Trend("decreasing").judge([two]).verdict == REPRODUCED
    one_seed = Series("dvp", [0.1, 0.5, 1.0], [np.array([1.0]), np.array([0.6]), np.array([0.2])])
    assert Trend("decreasing").judge([one_seed]).verdict == INCONCLUSIVE  # no spread: nothing to test against


@pytest.mark.parametrize("gap", np.linspace(-0.3, 0.3, 25))
def test_seeds_to_decide_exceed_the_seeds_that_did_not(gap: float) -> None:
    """An inconclusive verdict at n seeds never says that n or fewer would have decided it.

    The deciding cell's effect is tested at the Holm level of the direction it points: all three
    cells must hold, so refuting takes one cell at ALPHA / 3, not at ALPHA.
    """
    rng = np.random.default_rng(7)
    cells = [
        Pair(f"cell {i}", rng.normal(1.0, 0.3, 30), rng.normal(1.0 + gap, 0.3, 30), paired=False) for i in range(3)
    ]
    judgement = Ordering().judge(cells)
    if judgement.verdict == INCONCLUSIVE and judgement.seeds_to_decide is not None:
        assert judgement.seeds_to_decide > judgement.n_seeds
    x = [0.1, 0.3, 1.0, 3.0]
    series = [Series(f"s{i}", x, [rng.normal(1.0 - gap * j / 3, 0.3, 30) for j in range(4)]) for i in range(3)]
    judgement = Trend().judge(series)
    if judgement.verdict == INCONCLUSIVE and judgement.seeds_to_decide is not None:
        assert judgement.seeds_to_decide > judgement.n_seeds
