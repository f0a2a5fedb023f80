"""Every dvp_pvp claim on fabricated per-seed tables: one it reproduces and one it does not.

The tables are made by the small generators below, in the per-seed format the aggregate steps write
(``dpdl.studies.dvp_pvp.aggregate.SEED_COLUMNS``). ``FIXTURES`` maps each registered claim to a
table on which the verdict engine must find it reproduced and one on which it must not (for an
exact check: holds and fails; an unidentifiable quantity has its own test); a claim without a
fixture fails :func:`test_every_claim_has_a_fixture`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from dpdl.claims import IMPLEMENTATION_CHECK, judge
from dpdl.studies.dvp_pvp import claims, extract
from dpdl.studies.dvp_pvp.aggregate import SEED_COLUMNS
from dpdl.verdicts import (
    INCONCLUSIVE,
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    Ordering,
    Pair,
)

ALPHAS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]  # G17
CONVERGENCE_ALPHAS = [0.01, 0.1, 0.5, 1.0]
EXPONENTS = [e / 2 for e in range(-20, 1)]  # G23: 10^-10 .. 10^0 in half decades
SEEDS = 10
PAPER_SCALE = {"iterations": 100, "seeds": 10, "alphas": 16, "rho_seeds": 2, "rho_grid": 21}
CI_SCALE = {"iterations": 15, "seeds": 2, "alphas": 4, "rho_seeds": 1, "rho_grid": 3}
RHO = {"nonprivate": -10.0, "dvp": -2.5, "pvp": -1.0}

# ------------------------------------------------------------------------------ generators


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=SEED_COLUMNS)


def rho_table(argmin: dict[str, float], flat_below: tuple[str, ...] = (), seeds: int = 5) -> pd.DataFrame:
    """Final loss against log10 rho: a parabola around ``argmin`` (flat below it for ``flat_below``), on 5 seeds: the
    fewest whose agreement is an interval (fewer agreeing seeds are inconclusive, issue 59)."""
    rows = []
    for algorithm, best in argmin.items():
        for seed in range(seeds):
            for e in EXPONENTS:
                distance = 0.0 if algorithm in flat_below and e <= best else e - best
                loss = 1.0 + 0.1 * distance**2 + 0.01 * seed
                rows.append(
                    dict(algorithm=algorithm, alpha=0.3, rho_exponent=e, metric="loss", seed=seed, value=loss)
                )
    return table(rows)


def monotone_rho_table() -> pd.DataFrame:
    """The non-private final loss grows with rho (as it must without noise)."""
    return rho_table({"nonprivate": -10.0}).assign(value=lambda t: 1.0 + 1e-3 * (t["rho_exponent"] + 10.0))


def alpha_table(
    metric: str, curves: dict[str, Callable], noise: float = 1e-3, alphas: list = ALPHAS, seed: int = 0
) -> pd.DataFrame:
    """``metric`` per algorithm, alpha and seed: ``curves[algorithm](alpha)`` plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    rows = [
        dict(
            algorithm=algorithm, alpha=alpha, rho_exponent=RHO[algorithm], metric=metric, seed=s, value=value
        )
        for algorithm, curve in curves.items()
        for alpha in alphas
        for s, value in enumerate(curve(alpha) + noise * rng.standard_normal(SEEDS))
    ]
    return table(rows)


def tradeoff_table(constants: dict[str, tuple], zigzag: dict[str, float] | None = None, noise: float = 1e-4):
    """Loss at t = 2 and t = 100 against alpha: a exp(-b alpha) + c, plus an up-down ``zigzag`` along alpha."""
    parts = []
    for t in (2, 100):
        for algorithm, (a, b, c) in constants.items():
            wiggle = (zigzag or {}).get(algorithm, 0.0)

            def curve(alpha, a=a, b=b, c=c, wiggle=wiggle):
                return a * math.exp(-b * alpha) + c + wiggle * (-1) ** ALPHAS.index(alpha)

            parts.append(alpha_table("loss", {algorithm: curve}, noise, seed=t).assign(iteration=t))
    return pd.concat(parts, ignore_index=True)


def decaying(a: float, b: float = 10.0, c: float = 0.3) -> Callable:
    return lambda alpha: a * math.exp(-b * alpha) + c


def constant(value: float) -> Callable:
    return lambda alpha: value


def more_is_better(fraction_of_alphas: float, low: float, high: float) -> Callable:
    """``low`` at the first ``fraction_of_alphas`` of the grid, ``high`` after (and the mirror image below)."""
    return lambda alpha: low if ALPHAS.index(alpha) < round(fraction_of_alphas * len(ALPHAS)) else high


def gaps(value: float) -> pd.DataFrame:
    rows = [
        dict(
            algorithm="nonprivate", rho_exponent=-10.0, iteration=100, metric="objective_gap", seed=s, value=v
        )
        for s, v in enumerate(value + 1e-5 * np.random.default_rng(0).standard_normal(SEEDS))
    ]
    return table(rows)


def both(metric: str, dvp: Callable, pvp: Callable, alphas: list = ALPHAS) -> pd.DataFrame:
    return alpha_table(metric, {"dvp": dvp, "pvp": pvp}, alphas=alphas)


def mer(released: tuple[float, float], internal: tuple[float, float]) -> pd.DataFrame:
    """The error rates (DVP, PVP) of what is released and of the nodes' f_p."""
    return pd.concat(
        [
            both("mer_released", constant(released[0]), constant(released[1])),
            both("mer", constant(internal[0]), constant(internal[1])),
        ],
        ignore_index=True,
    )


def tradeoff(constants: dict[str, tuple], zigzag: dict[str, float] | None = None) -> dict[str, pd.DataFrame]:
    """The three names a trade-off claim may read: each mechanism's table and both together."""
    full = tradeoff_table(constants, zigzag)
    split = {f"tradeoff_{m}": full[full["algorithm"] == m].reset_index(drop=True) for m in constants}
    return extract.claim_tables(split)


PAPER_CONSTANTS = {"dvp": (0.2, 25.0, 0.3), "pvp": (20.0, 20.0, 0.35)}


def tradeoff_per_iteration(constants: dict[int, dict[str, tuple]]) -> dict[str, pd.DataFrame]:
    """As :func:`tradeoff`, with each trade-off iteration (2 and 100) drawn from its own constants."""
    parts = [tradeoff_table(c).loc[lambda t, i=i: t["iteration"] == i] for i, c in constants.items()]
    full = pd.concat(parts, ignore_index=True)
    split = {f"tradeoff_{m}": full[full["algorithm"] == m].reset_index(drop=True) for m in ("dvp", "pvp")}
    return extract.claim_tables(split)


def pvp_trace(unsettled: float = 0.0, iterations=(2, *range(20, 101))) -> pd.DataFrame:
    """PVP's loss at every stored iteration: 20 exp(-20 alpha) + 0.35, plus ``unsettled`` before t = 100."""
    parts = []
    for t in iterations:
        offset = 0.35 + (unsettled if t < 100 else 0.0)
        curve = decaying(20.0, 20.0, offset)
        parts.append(alpha_table("loss", {"pvp": curve}, noise=1e-4, seed=t).assign(iteration=t))
    return pd.concat(parts, ignore_index=True)


# Each claim: (the table it is reproduced on, the table it is not reproduced on), as zero-argument makers.
FIXTURES: dict[str, tuple[Callable, Callable]] = {
    "dvp_pvp.table1_rho.dvp": (lambda: rho_table(RHO), lambda: rho_table({**RHO, "dvp": -5.0})),
    "dvp_pvp.table1_rho.pvp": (lambda: rho_table(RHO), lambda: rho_table({**RHO, "pvp": -3.0})),
    "dvp_pvp.table1_rho.nonprivate": (monotone_rho_table, lambda: rho_table({"nonprivate": -5.0})),
    "dvp_pvp.tradeoff_fit.dvp.a": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "dvp": (0.5, 25.0, 0.3)}),
    ),
    "dvp_pvp.tradeoff_fit.dvp.b": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "dvp": (0.2, 50.0, 0.3)}),
    ),
    "dvp_pvp.tradeoff_fit.pvp.a": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "pvp": (40.0, 20.0, 0.35)}),
    ),
    "dvp_pvp.tradeoff_fit.pvp.b": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "pvp": (20.0, 40.0, 0.35)}),
    ),
    "dvp_pvp.tradeoff_amplitude": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({"dvp": (20.0, 20.0, 0.3), "pvp": (0.2, 25.0, 0.35)}),
    ),
    "dvp_pvp.optimal_alpha.dvp": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "dvp": (0.2, 10.0, 0.3)}),  # alpha* 0.353
    ),
    "dvp_pvp.optimal_alpha.pvp": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff({**PAPER_CONSTANTS, "pvp": (20.0, 30.0, 0.35)}),  # alpha* 0.303
    ),
    "dvp_pvp.loss_decreasing": (
        lambda: both("loss", decaying(0.2), decaying(2.0)),
        lambda: both("loss", decaying(0.2), decaying(-2.0, c=3.0)),  # PVP's rises
    ),
    "dvp_pvp.error_decreasing": (
        lambda: both("mer", decaying(0.2, c=0.2), decaying(0.3, c=0.2)),
        lambda: both("mer", decaying(-0.2, c=0.5), decaying(0.3, c=0.2)),  # DVP's rises
    ),
    # the nodes' f_p (the default measure): DVP below PVP; released: PVP below DVP (so the claim reads f_p)
    "dvp_pvp.dvp_error_below_pvp": (lambda: mer((0.3, 0.2), (0.2, 0.3)), lambda: mer((0.2, 0.3), (0.3, 0.2))),
    "dvp_pvp.pvp_loss_slightly_better": (
        lambda: both("loss", decaying(0.2, c=0.31), decaying(0.2, c=0.30)),
        lambda: both("loss", decaying(0.2, c=0.30), decaying(0.2, c=0.31)),
    ),
    "dvp_pvp.larger_alpha_converges_faster": (
        lambda: both("loss_mean", decaying(0.5), decaying(5.0)),
        lambda: both("loss_mean", decaying(0.5), decaying(-0.2, c=1.0)),  # PVP's rises
    ),
    "dvp_pvp.dvp_smaller_variance": (
        lambda: both("oscillation", constant(0.01), constant(0.05), alphas=CONVERGENCE_ALPHAS),
        lambda: both("oscillation", constant(0.05), constant(0.01), alphas=CONVERGENCE_ALPHAS),
    ),
    "dvp_pvp.dvp_more_stable_most_alpha": (
        lambda: both("oscillation", constant(0.01), more_is_better(0.75, 0.05, 0.01)),  # 12 of 16 alphas
        lambda: both("oscillation", constant(0.01), more_is_better(0.5, 0.05, 0.001)),  # 8 of 16, 8 reversed
    ),
    "dvp_pvp.pvp_oscillates_more": (
        lambda: tradeoff(PAPER_CONSTANTS, zigzag={"pvp": 0.05}),
        lambda: tradeoff(PAPER_CONSTANTS, zigzag={"dvp": 0.05}),
    ),
    "dvp_pvp.nonprivate_centralized": (lambda: gaps(1e-5), lambda: gaps(1e-2)),
    "dvp_pvp.similar_tradeoff_management": (
        lambda: both("loss", decaying(0.2, c=0.31), decaying(0.2, c=0.30)),
        lambda: both("loss", decaying(0.2), decaying(2.0)),  # PVP 1.6 above DVP at the smallest alpha
    ),
    "dvp_pvp.tradeoff_fit.dvp.all_iterations": (
        lambda: tradeoff(PAPER_CONSTANTS),
        lambda: tradeoff_per_iteration(
            {2: {**PAPER_CONSTANTS, "dvp": (0.5, 25.0, 0.3)}, 100: PAPER_CONSTANTS}
        ),
    ),
    "dvp_pvp.tradeoff_fit.pvp.c6": (lambda: pvp_trace(), lambda: pvp_trace(unsettled=0.2)),
    # DVP below PVP at 12 of 16 alphas: "most" (dvp_error_below_pvp) holds, "every" does not
    "dvp_pvp.dvp_outperforms_conclusion": (
        lambda: mer((0.3, 0.2), (0.2, 0.3)),
        lambda: both("mer", constant(0.2), more_is_better(0.75, 0.3, 0.1)),
    ),
}


def verdict(claim, made: pd.DataFrame | dict, scale: dict = PAPER_SCALE, pvp_error_of: str = "local") -> str:
    """The claim's verdict on ``made`` (a table of its aggregate, or tables by name), as the claims step sees them."""
    tables = made if isinstance(made, dict) else {claim.aggregate: made}
    return judge(claim, extract.claim_tables(tables, pvp_error_of), scale)[0].verdict


CLAIMS = {claim.id: claim for claim in claims.CLAIMS}

# ------------------------------------------------------------------------------ tests


def test_every_claim_has_a_fixture() -> None:
    missing = sorted(set(CLAIMS) - set(FIXTURES))
    assert not missing, f"claims without a reproduced/not-reproduced fixture: {missing}"
    assert not set(FIXTURES) - set(CLAIMS), "fixtures of claims no longer registered"


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_reproduced_on_one_table_and_not_on_the_other(claim_id: str) -> None:
    if claim_id not in FIXTURES:
        pytest.fail(f"{claim_id} has no fixture")
    claim, (holds, fails) = CLAIMS[claim_id], FIXTURES[claim_id]
    assert verdict(claim, holds()) == REPRODUCED
    assert verdict(claim, fails()) == NOT_REPRODUCED


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_nothing_is_judged_at_the_ci_scale(claim_id: str) -> None:
    assert verdict(CLAIMS[claim_id], FIXTURES[claim_id][0](), CI_SCALE) == NOT_AT_SCALE


@pytest.mark.parametrize("algorithm", ["dvp", "pvp"])
def test_a_rho_argmin_tied_across_the_grid_is_not_identified(algorithm: str) -> None:
    claim = CLAIMS[f"dvp_pvp.table1_rho.{algorithm}"]
    tied = rho_table(RHO, flat_below=(algorithm,))
    judgement = judge(claim, {claim.aggregate: tied}, PAPER_SCALE)[0]
    assert judgement.verdict == NOT_IDENTIFIABLE
    assert (
        "the same" in judgement.detail
        and f"at {EXPONENTS.index(RHO[algorithm]) + 1} of 21 rho" in judgement.detail
    )
    assert verdict(claim, rho_table(RHO, flat_below=("nonprivate",))) == REPRODUCED  # another algorithm's tie


def test_a_fit_no_seed_admits_is_not_identified() -> None:
    too_few = tradeoff(PAPER_CONSTANTS)["tradeoff_dvp"]
    too_few = too_few[too_few["alpha"].isin([0.01, 1.0])]  # two points for three constants
    for name in ("dvp_pvp.tradeoff_fit.dvp.a", "dvp_pvp.optimal_alpha.dvp"):
        assert verdict(CLAIMS[name], too_few) == NOT_IDENTIFIABLE


@pytest.mark.parametrize(
    "claim_id",
    ["dvp_pvp.loss_decreasing", "dvp_pvp.error_decreasing", "dvp_pvp.larger_alpha_converges_faster"],
)
def test_a_flat_curve_never_passes_a_trend(claim_id: str) -> None:
    metric = {"dvp_pvp.error_decreasing": "mer", "dvp_pvp.larger_alpha_converges_faster": "loss_mean"}
    flat = both(metric.get(claim_id, "loss"), constant(0.3), constant(0.3))
    assert verdict(CLAIMS[claim_id], flat) != REPRODUCED


def test_most_means_more_than_half_of_the_alphas() -> None:
    rule = Ordering(required_fraction=claims.MOST)
    better, worse = (
        np.full(SEEDS, 0.1) + 1e-3 * np.arange(SEEDS),
        np.full(SEEDS, 0.2) + 1e-3 * np.arange(SEEDS)[::-1],
    )
    for n_better, expected in ((9, REPRODUCED), (8, NOT_REPRODUCED)):
        cells = [
            Pair(f"{i}", better, worse) if i < n_better else Pair(f"{i}", worse, better) for i in range(16)
        ]
        assert rule.judge(cells).verdict == expected


def test_the_note_derived_values_are_not_reproductions() -> None:
    checks = {c.id for c in claims.CLAIMS if c.kind == IMPLEMENTATION_CHECK}
    assert checks == {
        "dvp_pvp.table1_rho.nonprivate",
        "dvp_pvp.tradeoff_amplitude",  # orders two printed constants that are not reproduced
        "dvp_pvp.optimal_alpha.dvp",
        "dvp_pvp.optimal_alpha.pvp",
        "dvp_pvp.nonprivate_centralized",
    }


def test_pvp_error_is_measured_on_f_p_unless_the_released_reading_says_v_p() -> None:
    """Every claim that measures PVP's error reads the same quantity: f_p by default (G21), V_p under 'released'."""
    claim = CLAIMS["dvp_pvp.dvp_error_below_pvp"]
    dvp_below_on_f_only = mer((0.3, 0.2), (0.2, 0.3))
    assert verdict(claim, dvp_below_on_f_only) == REPRODUCED
    assert verdict(claim, dvp_below_on_f_only, pvp_error_of="released") == NOT_REPRODUCED
    conclusion = CLAIMS["dvp_pvp.dvp_outperforms_conclusion"]
    assert verdict(conclusion, dvp_below_on_f_only) == REPRODUCED
    assert verdict(conclusion, dvp_below_on_f_only, pvp_error_of="released") == NOT_REPRODUCED


def test_claim_tables_join_the_trade_off_tables_only_when_both_exist() -> None:
    full = tradeoff(PAPER_CONSTANTS)
    assert set(full["tradeoff"]["algorithm"]) == {"dvp", "pvp"}
    assert (
        extract.claim_tables({"tradeoff_dvp": full["tradeoff_dvp"], "tradeoff_pvp": None})["tradeoff"] is None
    )


# ------------------------------------------------------------------------------ the remaining statements


def judged(claim_id: str, tables: dict, scale: dict = PAPER_SCALE):
    return judge(CLAIMS[claim_id], extract.claim_tables(tables), scale)[0]


def test_pvp_c6_needs_every_iteration_of_its_window() -> None:
    """c6 averages t = 20..100: the trade-off table's t = 2 and 100 alone cannot give it."""
    claim_id = "dvp_pvp.tradeoff_fit.pvp.c6"
    judgement = judged(claim_id, tradeoff(PAPER_CONSTANTS))
    assert judgement.verdict == NOT_IDENTIFIABLE and "t = 2, 100 only" in judgement.detail
    gap = pvp_trace(iterations=(2, *range(20, 60), *range(61, 101)))  # t = 60 missing
    assert judged(claim_id, {"tradeoff_pvp": gap}).verdict == NOT_IDENTIFIABLE
    assert judged(claim_id, {"tradeoff_pvp": pvp_trace()}).verdict == REPRODUCED
    assert judged(claim_id, {"tradeoff_pvp": pvp_trace(unsettled=0.2)}).verdict == NOT_REPRODUCED


def test_dvp_constants_at_all_iterations_read_every_iteration() -> None:
    """The printed constants at t = T but not at t = 2: the fitted-constant claim holds, all-iterations does not."""
    tables = tradeoff_per_iteration({2: {**PAPER_CONSTANTS, "dvp": (0.2, 50.0, 0.3)}, 100: PAPER_CONSTANTS})
    assert judged("dvp_pvp.tradeoff_fit.dvp.b", tables).verdict == REPRODUCED
    judgement = judged("dvp_pvp.tradeoff_fit.dvp.all_iterations", tables)
    assert judgement.verdict == NOT_REPRODUCED and "decay rate c5 / 25, t=2" in judgement.detail


def test_the_conclusion_needs_every_alpha_where_section_5_needs_most() -> None:
    twelve_of_sixteen = both("mer", constant(0.2), more_is_better(0.75, 0.3, 0.1))
    assert judged("dvp_pvp.dvp_error_below_pvp", {"mer": twelve_of_sixteen}).verdict == REPRODUCED
    assert judged("dvp_pvp.dvp_outperforms_conclusion", {"mer": twelve_of_sixteen}).verdict == NOT_REPRODUCED


def test_similar_allows_differences_up_to_dvp_c4() -> None:
    claim_id = "dvp_pvp.similar_tradeoff_management"
    assert claims.SIMILAR_MARGIN == claims.PAPER_FIT["dvp"]["a"] == 0.2
    within = both("loss", constant(0.40), constant(0.30))  # 0.1 apart everywhere
    beyond = both("loss", constant(0.60), constant(0.30))  # 0.3 apart everywhere
    assert judged(claim_id, {"final_risk": within}).verdict == REPRODUCED
    assert judged(claim_id, {"final_risk": beyond}).verdict == NOT_REPRODUCED


def test_two_seeds_agreeing_on_the_rho_are_no_interval() -> None:
    # The paper config's 2 seeds both at the paper's rho: inconclusive, not reproduced on [0, 0] (issue 59).
    claim = CLAIMS["dvp_pvp.table1_rho.pvp"]
    assert verdict(claim, rho_table(RHO, seeds=2)) == INCONCLUSIVE
    assert verdict(claim, rho_table(RHO, seeds=5)) == REPRODUCED
