"""The verdict engine: every form passes, fails and (where it can) stays inconclusive on fabricated seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdl.seed_statistics import (
    cell_levels,
    mean_interval,
    seeds_for_halfwidth,
    seeds_for_kendall,
    seeds_for_page,
)
from dpdl.verdicts import (
    BOUND_FAILS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    AnyOf,
    Equivalence,
    Exact,
    Ordering,
    Outcome,
    Pair,
    Series,
    StatedNumber,
    Trend,
    difference,
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
    assert (
        mean == pytest.approx(5.0) and low == pytest.approx(5.0 - half) and high == pytest.approx(5.0 + half)
    )


def test_paired_and_welch_differences_match_scipy() -> None:
    a, b = seeds(1.0, 0.5), seeds(1.4, 0.7)
    paired = difference(Pair("c", a, b, paired=True))
    assert paired.p_greater() == pytest.approx(stats.ttest_rel(b, a, alternative="greater").pvalue)
    welch = difference(Pair("c", a, b[:7], paired=False))
    assert welch.p_greater() == pytest.approx(
        stats.ttest_ind(b[:7], a, equal_var=False, alternative="greater").pvalue
    )
    assert welch.p_less() == pytest.approx(
        stats.ttest_ind(b[:7], a, equal_var=False, alternative="less").pvalue
    )


def test_cell_levels_are_the_intersection_union_test_and_its_k_of_m_generalisation() -> None:
    assert cell_levels(5, 5) == pytest.approx((0.05, 0.01))  # every cell at alpha; one against at alpha / m
    assert cell_levels(10, 8) == pytest.approx((0.05 / 3, 0.05 / 8))
    assert cell_levels(4, 1) == pytest.approx((0.05 / 4, 0.05))  # "some cell": Bonferroni for it
    with pytest.raises(ValueError, match="k <= m"):
        cell_levels(3, 4)


def test_k_of_m_rule_keeps_its_level_under_the_least_favourable_null() -> None:
    """Simulated size of "at least k of m cells": k - 1 cells true far from the boundary, the rest exactly null.

    The rejection rate must stay at or below alpha (with Monte Carlo slack); with the per-cell level
    alpha (no correction) it would not.
    """
    rng = np.random.default_rng(3)
    m, k, trials = 6, 4, 4000
    p_null = rng.uniform(size=(trials, m - k + 1))  # the false cells, exactly at their null
    p = np.concatenate([np.zeros((trials, k - 1)), p_null], axis=1)
    level, _ = cell_levels(m, k)
    assert ((p < level).sum(axis=1) >= k).mean() <= 0.05 + 0.01
    assert ((p < 0.05).sum(axis=1) >= k).mean() > 0.1  # uncorrected: far above alpha


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


def test_a_zero_spread_on_fewer_than_five_seeds_is_no_interval() -> None:
    # Table 1's rho: 2 of 2 seeds pick 10^0 against the paper's 10^-1 +- 0.5. Their t-interval [0, 0] is no
    # confidence interval; five identical seeds are (issue 59).
    form = StatedNumber(paper_value=-1.0, tolerance=0.5)
    two = form.judge([0.0, 0.0])
    assert two.verdict == INCONCLUSIVE and math.isnan(two.ci_low) and two.seeds_to_decide == 5
    assert "zero spread on fewer than 5 seeds" in two.detail
    assert form.judge([0.0] * 5).verdict == NOT_REPRODUCED
    assert form.judge([0.0, 0.01]).verdict == NOT_REPRODUCED  # a spread, however small, gives an interval


@pytest.mark.parametrize(
    ("gap", "verdict"), [(0.5, REPRODUCED), (-0.5, NOT_REPRODUCED), (0.02, INCONCLUSIVE)]
)
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
    ("gap", "sd", "verdict"),
    [(0.0008, 0.002, REPRODUCED), (0.05, 0.002, NOT_REPRODUCED), (0.005, 0.02, INCONCLUSIVE)],
)
def test_equivalence(gap: float, sd: float, verdict: str) -> None:
    cells = [Pair("u=1", seeds(0.778, sd), seeds(0.778 + gap, sd), paired=False)]
    assert Equivalence(margin=0.01).judge(cells).verdict == verdict


def curve(ends: tuple[float, float], sd: float, points: int = 5) -> Series:
    x = np.geomspace(0.01, 1.0, points)
    return Series("dvp", x, [seeds(m, sd) for m in np.linspace(*ends, points)])


@pytest.mark.parametrize(
    ("ends", "sd", "margin", "verdict"),
    [
        ((1.0, 0.2), 0.1, None, REPRODUCED),  # falls by 8 seed spreads
        ((0.2, 1.0), 0.1, None, NOT_REPRODUCED),  # rises
        ((0.5, 0.5), 0.01, 0.1, NOT_REPRODUCED),  # flat: the change is significantly below 10% of the start
        ((0.5, 0.5), 0.01, None, INCONCLUSIVE),  # flat, no minimum declared: neither way
    ],
)
def test_trend(ends: tuple[float, float], sd: float, margin: float | None, verdict: str) -> None:
    assert Trend("decreasing", relative_margin=margin).judge([curve(ends, sd)]).verdict == verdict


def test_a_monotone_but_tiny_trend_does_not_pass_a_declared_minimum() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5]
    steady = Series(
        "steady", x, [seeds(0.5 - 1e-3 * i, 1e-4) for i in range(5)]
    )  # significant, but 0.004 in all
    judgement = Trend("decreasing", margin=0.01).judge([steady])
    assert judgement.verdict == NOT_REPRODUCED and "tau 0.9" in judgement.detail
    assert Trend("decreasing").judge([steady]).verdict == REPRODUCED  # no minimum declared: it does fall
    with pytest.raises(ValueError, match="not both"):
        Trend(margin=0.1, relative_margin=0.1)


def shared_trials(drop_per_step: float, points: int = 4, trials: int = 100, spread: float = 1.0) -> Series:
    """dzoa's Fig. 2 design: every trial a new problem (spread between trials), the same trials at every grid point."""
    rng = np.random.default_rng(11)
    problem = rng.lognormal(0.0, spread, trials)  # problem-to-problem variation, shared over the grid
    x = [0.15, 0.3, 0.6, 0.95]
    samples = [problem * (1 - drop_per_step * j) + rng.normal(0, 0.02, trials) for j in range(points)]
    return Series("dzoa", x, samples, [np.arange(trials)] * points)


def test_a_trend_on_shared_trials_is_tested_within_trials() -> None:
    """The spread between trials is problem-to-problem variation: within each trial the error falls.

    Pooled over trials (the old rule) the fall is lost in that spread; within trials Page's test and
    the paired change find it. An ordering of the two ends, on the same trials, says the same.
    """
    paired = shared_trials(0.02)
    judgement = Trend("decreasing").judge([paired])
    assert judgement.verdict == REPRODUCED and "Page" in judgement.detail and "monotone" in judgement.detail
    pooled = Series("dzoa", paired.x, paired.samples)  # the same values, seeds not named
    assert Trend("decreasing").judge([pooled]).verdict != REPRODUCED
    ends = Pair("ends", low=paired.samples[-1], high=paired.samples[0], paired=True)
    assert Ordering().judge([ends]).verdict == REPRODUCED
    assert Trend("increasing").judge([paired]).verdict == NOT_REPRODUCED


def test_seeds_for_page_matches_the_asymptotic_page_test() -> None:
    rng = np.random.default_rng(5)
    z = rng.normal(size=(40, 4)) + 0.3 * np.arange(4)
    result = stats.page_trend_test(z, method="asymptotic")
    ranks = np.array([stats.rankdata(r) for r in z])
    mean_l = float((ranks * np.arange(1, 5)).sum(axis=1).mean())
    assert seeds_for_page(mean_l, 4, result.pvalue * (1 + 1e-6)) in (39, 40)
    assert seeds_for_page(4 * 25 / 4, 4, 0.05) is None  # no trend in the ranks: no count decides it


def test_trend_power_grows_with_seeds_not_capped_by_the_grid() -> None:
    """Thirty rising curves that saturate (their last two means swap by 0.001) rise: the test uses every seed.

    Kendall's tau of the six means is 0.87 with an exact p of 0.0083 at best, which a correction over
    30 series never accepts, whatever the seeds: a rank test of the means alone could not decide this.
    """
    x = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25]
    means = [0.70, 0.75, 0.80, 0.85, 0.852, 0.851]
    series = [Series(f"s{i}", x, [seeds(mu, 0.01) for mu in means]) for i in range(30)]
    assert stats.kendalltau(x, means, alternative="greater").pvalue > 0.05 / 30
    assert Trend("increasing").judge(series).verdict == REPRODUCED


def test_trend_with_a_declared_margin_and_increasing_direction() -> None:
    rising = curve((0.2, 1.0), 0.1)
    assert Trend("increasing", margin=0.5).judge([rising]).verdict == REPRODUCED
    assert Trend("increasing", margin=2.0).judge([rising]).verdict == NOT_REPRODUCED
    with pytest.raises(ValueError, match="direction"):
        Trend("sideways")


def test_every_cell_claims_use_the_intersection_union_test() -> None:
    """Three cells each significant at 0.05 but not at Holm's 0.05/3: an every-cell claim holds (each at alpha)."""
    cells = [Pair(f"c{i}", seeds(0.0, 1.0, 20), seeds(0.68, 1.0, 20), paired=False) for i in range(3)]
    p = [difference(c).p_greater() for c in cells]
    assert all(0.05 / 3 < q < 0.05 for q in p)
    judgement = Ordering().judge(cells)
    assert judgement.verdict == REPRODUCED and (judgement.cells_for, judgement.cells_against) == (3, 0)
    one_fails = [*cells, Pair("bad", seeds(0.0, 1.0, 20), seeds(-2.0, 1.0, 20), paired=False)]
    assert Ordering().judge(one_fails).verdict == NOT_REPRODUCED
    assert Ordering(required_fraction=0.75).judge(one_fails).verdict != NOT_REPRODUCED  # 3 of 4 may hold


def test_the_effect_is_the_typical_cell_and_the_deciding_cell_is_named() -> None:
    """One cell far off (a calibration jump) does not become the effect shown: the lower median cell does."""
    cells = [Pair(f"c{i}", seeds(0.0, 0.1), seeds(1.0 + 0.1 * i, 0.1)) for i in range(4)]
    cells.append(Pair("jump", seeds(0.0, 0.1), seeds(-60.0, 0.1)))
    judgement = Ordering(required_fraction=0.8).judge(cells)
    assert judgement.effect == pytest.approx(1.1)  # sorted effects -60, 1.0, 1.1, 1.2, 1.3: the median
    assert judgement.verdict == REPRODUCED and judgement.deciding.startswith("c0: ")
    assert (judgement.cells, judgement.cells_for, judgement.cells_against) == (5, 4, 1)


def test_a_disjunction_holds_when_either_part_holds_each_at_half_alpha() -> None:
    rises = curve((0.2, 1.0), 0.1)
    flat = curve((0.5, 0.5), 0.01)
    form = AnyOf((Trend("increasing"), Trend("increasing")))
    assert form.judge(([flat], [rises])).verdict == REPRODUCED
    assert form.judge(([curve((1.0, 0.2), 0.1)], [curve((1.0, 0.2), 0.1)])).verdict == NOT_REPRODUCED
    assert form.judge(([flat], [flat])).verdict == INCONCLUSIVE
    # a part that passes at 0.05 alone but not at 0.025 does not carry the disjunction
    cell = [Pair("c", seeds(0.0, 1.0, 20), seeds(0.6, 1.0, 20), paired=False)]
    assert 0.025 < difference(cell[0]).p_greater() < 0.05
    assert Ordering().judge(cell).verdict == REPRODUCED
    assert AnyOf((Ordering(), Ordering())).judge((cell, cell)).verdict != REPRODUCED
    with pytest.raises(ValueError, match="two parts"):
        AnyOf((Ordering(),))


def test_exact_checks() -> None:
    assert Exact().judge(Outcome(True, "0.9 <= 1")).verdict == REPRODUCED
    assert Exact().judge(Outcome(False, "1.2 > 1")).verdict == NOT_REPRODUCED
    assert (
        Exact(fails_as=BOUND_FAILS).judge(Outcome(False, "eps (29) 0.8 < exact 1.3")).verdict == BOUND_FAILS
    )


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
        Pair(f"cell {i}", rng.normal(1.0, 0.3, 30), rng.normal(1.0 + gap, 0.3, 30), paired=False)
        for i in range(3)
    ]
    judgement = Ordering().judge(cells)
    if judgement.verdict == INCONCLUSIVE and judgement.seeds_to_decide is not None:
        assert judgement.seeds_to_decide > judgement.n_seeds
    x = [0.1, 0.3, 1.0, 3.0]
    series = [
        Series(f"s{i}", x, [rng.normal(1.0 - gap * j / 3, 0.3, 30) for j in range(4)]) for i in range(3)
    ]
    judgement = Trend().judge(series)
    if judgement.verdict == INCONCLUSIVE and judgement.seeds_to_decide is not None:
        assert judgement.seeds_to_decide > judgement.n_seeds


def _cells_like(judged: list[Pair], n: int) -> list[Pair]:
    """The same cells at ``n`` seeds: each side with exactly the observed mean and standard deviation."""
    return [
        Pair(
            c.name,
            seeds(np.mean(c.low), np.std(c.low, ddof=1), n),
            seeds(np.mean(c.high), np.std(c.high, ddof=1), n),
            c.paired,
        )
        for c in judged
    ]


def test_seeds_to_decide_count_each_cell_at_its_level() -> None:
    """Twenty cells all below 0.05 alone, with half of them required (each at 0.05 / 11): the seeds to
    decide are the seeds at which, with the same effects and spreads, the claim is decided, and more than now."""
    cells = [Pair(f"c{i}", seeds(0.0, 1.0), seeds(0.8 + 0.02 * i, 1.0), paired=False) for i in range(20)]
    form = Ordering(required_fraction=0.5)
    judgement = form.judge(cells)
    assert judgement.verdict == INCONCLUSIVE
    assert all(difference(c).p_greater() < 0.05 for c in cells)  # each cell alone would pass
    n = judgement.seeds_to_decide
    assert n is not None and n > 10
    assert form.judge(_cells_like(cells, n)).verdict == REPRODUCED
    assert form.judge(_cells_like(cells, n - 3)).verdict == INCONCLUSIVE


def test_seeds_for_kendall_matches_scipys_asymptotic_test() -> None:
    """At the seeds it returns for an observed tau and p, scipy's p equals that p (grid tied per point)."""
    rng = np.random.default_rng(1)
    for n in (3, 5, 10, 30):
        xs = np.repeat([0.1, 0.2, 0.3, 0.4], n)
        result = stats.kendalltau(xs, rng.normal(size=4 * n) - 3 * xs, alternative="less")
        assert seeds_for_kendall(abs(result.statistic), 4, result.pvalue * (1 + 1e-9)) == n


def test_seeds_to_decide_for_a_trend_include_its_rank_test() -> None:
    """A trend whose end-to-end change is already clear but whose tau is not: the tau test sets the seeds."""
    x = [0.1, 0.2, 0.3, 0.4]
    spread = 0.3 * np.array([-1.16, -0.39, 0.39, 1.16])
    series = Series("s", x, [mu + spread for mu in (1.0, 0.8, 1.3, 0.3)])
    judgement = Trend("decreasing", margin=0.1).judge([series])
    assert judgement.verdict == INCONCLUSIVE and judgement.ci_low > 0.1  # the change alone is decided
    tau = stats.kendalltau(np.repeat(x, 4), np.concatenate(series.samples)).statistic
    assert judgement.seeds_to_decide == seeds_for_kendall(abs(tau), 4, 0.05) > 4


def test_a_claim_over_panels_reports_its_counts_per_panel() -> None:
    # issue 59 item 5: wddp's 60-cell claims also say, per dataset and per m, how many cells are significant.
    cells = [
        Pair(f"dataset={d}, clients={m}, epsilon={e}", seeds(1.0, 0.3), seeds(1.0 + gap, 0.3), paired=False)
        for d, gap in (("adult", 0.5), ("kdd", -0.5))
        for m in (2, 4)
        for e in (0.1, 1)
    ]
    detail = Ordering().judge(cells).detail
    assert detail.startswith(
        "per dataset: adult: 4 of 4 for, 0 against, kdd: 0 of 4 for, 4 against; "
        "per m: 2: 2 of 4 for, 2 against, 4: 2 of 4 for, 2 against; dataset=adult, clients=2"
    )
    assert (
        not Ordering().judge(cells[:2]).detail.startswith("per ")
    )  # one dataset and one m: no panels to report


def test_per_seed_taus_are_scipys_kendall_tau_bit_for_bit() -> None:
    """The trend's per-seed tau, all rows at once, is kendalltau(range, row) of each row, ties and all."""
    from dpdl.verdicts.trend import _taus_along

    rng = np.random.default_rng(7)
    for z in (rng.normal(size=(9, 6)), rng.integers(0, 3, size=(12, 5)).astype(float), np.ones((3, 4))):
        expected = np.array([stats.kendalltau(np.arange(z.shape[1]), row).statistic for row in z])
        assert _taus_along(z).tobytes() == expected.tobytes()
