"""Claims: a privacy premise, the headline counts (substantive apart from mechanism properties, shared runs once),
and trend series refused without seed ids where the study declares shared seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdl import studies
from dpdl.claims import (
    MECHANISM_PROPERTY,
    PAPER_NUMBER,
    PAPER_STATEMENT,
    Claim,
    Premise,
    SeedsMissing,
    judge,
    scorecard,
    trend_series,
)
from dpdl.summary import counted, headline_counts
from dpdl.verdicts import NOT_REPRODUCED, PREMISE_FAILS, REPRODUCED, Ordering, Outcome, Pair, Series, Trend

RNG = np.random.default_rng(3)


def cells(gap: float) -> pd.DataFrame:
    """Per-seed errors of two methods in one cell, ``b`` above ``a`` by ``gap``."""
    a = RNG.normal(1.0, 0.05, 10)
    return pd.DataFrame({"seed": np.arange(10), "a": a, "b": a + gap + RNG.normal(0, 0.01, 10)})


def below(table: pd.DataFrame) -> list[Pair]:
    return [Pair("cell", table["a"].to_numpy(), table["b"].to_numpy())]


def noise_at_least_assumed(table: pd.DataFrame) -> Outcome:
    ratio = table["realised_over_assumed"].to_numpy()
    return Outcome(bool((ratio >= 1).all()), f"realised / assumed noise {ratio.min():.2g} to {ratio.max():.2g}")


PREMISE = Premise("A's realised noise is at least what its epsilon assumes", "noise", noise_at_least_assumed)
CLAIM = Claim(
    "toy.a_below_b",
    "toy",
    "Fig. 1",
    "A is more accurate than B at the same privacy",
    PAPER_STATEMENT,
    Ordering(),
    "the paper says it at every epsilon",
    "errors",
    below,
    premise=PREMISE,
)


def test_a_comparison_whose_privacy_premise_failed_is_not_counted_as_reproduced() -> None:
    """The numbers reproduce; the runs did not meet 'at the same privacy': its own verdict, not 'reproduced'."""
    met = {"errors": cells(0.2), "noise": pd.DataFrame({"realised_over_assumed": [1.0, 1.3]})}
    failed = {**met, "noise": pd.DataFrame({"realised_over_assumed": [0.04, 0.2]})}
    judgement, _, premise = judge(CLAIM, met, {})
    assert judgement.verdict == REPRODUCED and premise.startswith("met: ")
    judgement, _, premise = judge(CLAIM, failed, {})
    assert judgement.verdict == PREMISE_FAILS and premise.startswith("not met: ") and "0.04 to 0.2" in premise
    judgement, _, premise = judge(CLAIM, {**failed, "errors": cells(-0.2)}, {})
    assert judgement.verdict == NOT_REPRODUCED  # numbers not reproduced: the premise does not matter
    judgement, _, premise = judge(CLAIM, {"errors": cells(0.2)}, {})
    assert judgement.verdict == REPRODUCED and premise.startswith("unchecked")  # no table to check it on


def test_the_headline_counts_substantive_claims_apart_and_shared_runs_once() -> None:
    claims = [
        CLAIM,
        Claim("toy.number", "toy", "T1", "a number", PAPER_NUMBER, Ordering(), "j", "errors", below),
        Claim(
            "toy.gap", "toy", "T1", "a gap", PAPER_NUMBER, Ordering(), "j", "errors", below, same_runs_as="toy.number"
        ),
        Claim("toy.falls", "toy", "F2", "falls with epsilon", MECHANISM_PROPERTY, Ordering(), "j", "errors", below),
    ]
    card = scorecard(claims, {"errors": cells(0.2)}, scale={}, switches={}, shared_seeds=True).astype(object)
    card["study"] = "dvp_pvp"
    assert list(counted(card)["id"]) == ["toy.a_below_b", "toy.number"]  # toy.gap re-reads toy.number's runs
    assert list(counted(card, (MECHANISM_PROPERTY,))["id"]) == ["toy.falls"]
    text = headline_counts(card)
    assert text.index("Substantive claims") < text.index("Mechanism properties")
    assert set(card["verdict"]) == {REPRODUCED}


def falling() -> pd.DataFrame:
    """Ten seeds (each its own level) whose error falls along a three-point epsilon grid."""
    level = RNG.normal(0.0, 1.0, 10)
    rows = [(seed, e, level[seed] - 0.1 * i) for i, e in enumerate((0.1, 1.0, 10.0)) for seed in range(10)]
    return pd.DataFrame(rows, columns=["seed", "epsilon", "value"]).assign(curve="A")


def without_seed_ids(table: pd.DataFrame) -> list[Series]:
    """The omission planted: the series built from the values alone (what dp_iadmm's extractor did)."""
    return [Series(s.name, s.x, s.samples) for s in trend_series(table, series=["curve"], x="epsilon")]


def trend_claim(extract) -> Claim:
    return Claim("toy.falls", "toy", "F2", "falls with epsilon", MECHANISM_PROPERTY, Trend(), "j", "errors", extract)


def test_a_trend_without_seed_ids_is_refused_where_the_study_declares_shared_seeds() -> None:
    """Seeds shared over the grid: a series without seed ids would silently be judged unpaired (pooled tau, Welch)."""
    tables = {"errors": falling()}
    with pytest.raises(SeedsMissing, match=r"toy\.falls: trend series curve=A carry no seed ids.*SHARED_SEEDS"):
        judge(trend_claim(without_seed_ids), tables, {}, shared_seeds=True)
    paired, *_ = judge(trend_claim(lambda t: trend_series(t, series=["curve"], x="epsilon")), tables, {}, True)
    assert paired.verdict == REPRODUCED and "within seeds (Page's L, paired t)" in paired.test
    unpaired, *_ = judge(trend_claim(without_seed_ids), tables, {}, shared_seeds=False)  # a grid that shares none
    assert "pooled tau and Welch" in unpaired.test


@pytest.mark.parametrize("study", studies.ALL)
def test_every_study_declares_that_its_grid_shares_seeds(study: str) -> None:
    assert studies.study_module(study).SHARED_SEEDS is True
