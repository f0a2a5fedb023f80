"""Claims: a privacy premise, the headline counts (substantive apart from mechanism properties, the same or nested
cells once),
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
    tolerance_reach,
    trend_series,
)
from dpdl.summary import counted, headline_counts
from dpdl.verdicts import (
    NOT_REPRODUCED,
    PREMISE_FAILS,
    REPRODUCED,
    Equivalence,
    Ordering,
    Outcome,
    Pair,
    Series,
    StatedNumber,
    Trend,
)

RNG = np.random.default_rng(3)


def cells(gap: float) -> pd.DataFrame:
    """Per-seed errors of two methods in one cell, ``b`` above ``a`` by ``gap``."""
    a = RNG.normal(1.0, 0.05, 10)
    return pd.DataFrame({"seed": np.arange(10), "a": a, "b": a + gap + RNG.normal(0, 0.01, 10)})


def below(table: pd.DataFrame) -> list[Pair]:
    return [Pair("cell", table["a"].to_numpy(), table["b"].to_numpy())]


def noise_at_least_assumed(table: pd.DataFrame) -> Outcome:
    ratio = table["realised_over_assumed"].to_numpy()
    return Outcome(
        bool((ratio >= 1).all()), f"realised / assumed noise {ratio.min():.2g} to {ratio.max():.2g}"
    )


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


def many_cells() -> pd.DataFrame:
    """Per-seed values of eight independent columns (each a set of runs)."""
    return pd.DataFrame(
        {"seed": np.arange(10), **{c: RNG.normal(i, 0.1, 10) for i, c in enumerate("abcdefgh")}}
    )


def orders(*sides: tuple[str, str]):
    """An ordering's extractor over the cells (low column, high column) of ``many_cells``."""
    return lambda table: [
        Pair(f"{low}<{high}", table[low].to_numpy(), table[high].to_numpy()) for low, high in sides
    ]


def toy(cid: str, kind: str, extract, **extra) -> Claim:
    return Claim(f"toy.{cid}", "toy", "T1", cid, kind, Ordering(), "j", "cells", extract, **extra)


def test_claims_over_the_same_or_nested_cells_are_counted_once() -> None:
    """Independence derived from the cells each claim judged: a claim whose cells are among another's is listed
    beside it, not counted; the same cells in the other count (mechanism properties) are that count's own."""
    claims = [
        toy("part", PAPER_STATEMENT, orders(("a", "b"))),  # its cells nested in "whole"'s
        toy("whole", PAPER_NUMBER, orders(("a", "b"), ("c", "d"))),
        toy(
            "again", PAPER_STATEMENT, orders(("c", "d"), ("a", "b"))
        ),  # the same cells as "whole", declared after
        toy("own", PAPER_STATEMENT, orders(("e", "f"))),
        toy(
            "overlap", PAPER_STATEMENT, orders(("e", "f"), ("a", "b"))
        ),  # shares cells, holds "own": not nested
        toy(
            "declared", PAPER_NUMBER, orders(("g", "h")), same_runs_as="toy.own", same_runs_why="a difference"
        ),
        toy("falls", MECHANISM_PROPERTY, orders(("a", "b"), ("c", "d"))),
        # nested in "whole"'s cells but another form: another statement about the same runs, counted
        Claim(
            "toy.equal",
            "toy",
            "T1",
            "equal",
            PAPER_STATEMENT,
            Equivalence(1.0),
            "j",
            "cells",
            orders(("a", "b")),
        ),
    ]
    card = scorecard(claims, {"cells": many_cells()}, scale={}, switches={}, shared_seeds=True).astype(object)
    card["study"] = "dvp_pvp"
    same = dict(zip(card["id"], card["same_runs_as"], strict=True))
    assert (
        same["toy.part"] == "toy.whole"
        and same["toy.again"] == "toy.whole"
        and same["toy.own"] == "toy.overlap"
    )
    assert (
        same["toy.declared"] == "toy.own"
        and same["toy.whole"] == same["toy.overlap"] == same["toy.falls"] == ""
    )
    why = dict(zip(card["id"], card["same_runs_why"], strict=True))
    assert (
        why["toy.part"].startswith("derived: it judges 2 of the 4")
        and why["toy.declared"] == "declared: a difference"
    )
    assert same["toy.equal"] == ""  # grouped across forms, its verdict would be hidden under "whole"'s
    assert list(counted(card)["id"]) == ["toy.whole", "toy.overlap", "toy.equal"]  # both nested claims: fails
    assert list(counted(card, (MECHANISM_PROPERTY,))["id"]) == ["toy.falls"]
    text = headline_counts(card)
    assert text.index("Substantive claims") < text.index("Mechanism properties")


def test_a_declared_same_runs_needs_its_reason() -> None:
    with pytest.raises(ValueError, match="needs its reason"):
        toy("declared", PAPER_NUMBER, orders(("g", "h")), same_runs_as="toy.own")


def falling() -> pd.DataFrame:
    """Ten seeds (each its own level) whose error falls along a three-point epsilon grid."""
    level = RNG.normal(0.0, 1.0, 10)
    rows = [(seed, e, level[seed] - 0.1 * i) for i, e in enumerate((0.1, 1.0, 10.0)) for seed in range(10)]
    return pd.DataFrame(rows, columns=["seed", "epsilon", "value"]).assign(curve="A")


def without_seed_ids(table: pd.DataFrame) -> list[Series]:
    """The omission planted: the series built from the values alone (what dp_iadmm's extractor did)."""
    return [Series(s.name, s.x, s.samples) for s in trend_series(table, series=["curve"], x="epsilon")]


def trend_claim(extract) -> Claim:
    return Claim(
        "toy.falls", "toy", "F2", "falls with epsilon", MECHANISM_PROPERTY, Trend(), "j", "errors", extract
    )


def test_a_trend_without_seed_ids_is_refused_where_the_study_declares_shared_seeds() -> None:
    """Seeds shared over the grid: a series without seed ids would silently be judged unpaired (pooled tau, Welch)."""
    tables = {"errors": falling()}
    with pytest.raises(
        SeedsMissing, match=r"toy\.falls: trend series curve=A carry no seed ids.*SHARED_SEEDS"
    ):
        judge(trend_claim(without_seed_ids), tables, {}, shared_seeds=True)
    paired, *_ = judge(
        trend_claim(lambda t: trend_series(t, series=["curve"], x="epsilon")), tables, {}, True
    )
    assert paired.verdict == REPRODUCED and "within seeds (Page's L, paired t)" in paired.test
    unpaired, *_ = judge(
        trend_claim(without_seed_ids), tables, {}, shared_seeds=False
    )  # a grid that shares none
    assert "pooled tau and Welch" in unpaired.test


@pytest.mark.parametrize("study", studies.ALL)
def test_every_study_declares_that_its_grid_shares_seeds(study: str) -> None:
    assert studies.study_module(study).SHARED_SEEDS is True


@pytest.mark.parametrize(
    "shift", [0.5, 3.0, 0.02]
)  # inside the tolerance, wholly outside it, around the value
def test_how_far_a_stated_number_can_be_pushed_is_where_its_verdict_turns(shift: float) -> None:
    """The smallest tolerance that reproduces a stated number and the largest below which it is not reproduced,
    from its interval of ours - paper: judged again at either side of each, the verdict turns there."""
    values = 10.0 + shift + RNG.normal(0.0, 0.3, 10)
    judgement = StatedNumber(10.0, 2.0).judge(values)
    reproduced, refuted = tolerance_reach(StatedNumber(10.0, 2.0), judgement)
    assert reproduced == pytest.approx(max(-judgement.ci_low, judgement.ci_high))
    assert StatedNumber(10.0, reproduced * 1.001).judge(values).verdict == REPRODUCED
    assert StatedNumber(10.0, reproduced * 0.999).judge(values).verdict != REPRODUCED
    if (
        judgement.ci_low <= 0 <= judgement.ci_high
    ):  # the interval holds the paper's value: no tolerance refutes it
        assert refuted is None
    else:
        assert StatedNumber(10.0, refuted * 0.999).judge(values).verdict == NOT_REPRODUCED
        assert StatedNumber(10.0, refuted * 1.001).judge(values).verdict != NOT_REPRODUCED
    claim = Claim(
        "toy.n", "toy", "T1", "n", PAPER_NUMBER, StatedNumber(10.0, 2.0), "j", "v", lambda t: t["v"]
    )
    row = scorecard(
        [claim], {"v": pd.DataFrame({"v": values})}, scale={}, switches={}, shared_seeds=True
    ).iloc[0]
    assert (row["tolerance_reproduced"], row["tolerance_not_reproduced"]) == (reproduced, refuted)
    ordering = scorecard([CLAIM], {"errors": cells(0.2)}, scale={}, switches={}, shared_seeds=True).iloc[0]
    assert ordering["tolerance_reproduced"] is None and ordering["tolerance_not_reproduced"] is None
