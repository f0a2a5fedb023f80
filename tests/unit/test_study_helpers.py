"""Shared study helpers: seed bands, claims and verdicts, figure writing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl.aggregate import seed_bands
from dpdl.claims import PAPER_NUMBER, SCORECARD_COLUMNS, Claim, pairs, scorecard, trend_series
from dpdl.errors import ConfigError
from dpdl.plotting import new_figure, save_figure
from dpdl.studies.common import format_number, parse_named_paths, parse_settings
from dpdl.verdicts import (
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    UNAVAILABLE,
    StatedNumber,
    Unidentified,
)


def test_seed_bands_against_numpy() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"algo": ["a"] * 10 + ["b"] * 10, "seed": list(range(10)) * 2, "err": rng.random(20)}
    )
    bands = seed_bands(frame, ["algo"], "err")
    a = frame.loc[frame.algo == "a", "err"].to_numpy()
    row = bands.set_index("algo").loc["a"]
    assert row["mean"] == pytest.approx(a.mean())
    assert row["lo"] == pytest.approx(np.percentile(a, 20)) and row["hi"] == pytest.approx(
        np.percentile(a, 80)
    )
    assert row["n"] == 10 and list(bands.columns) == ["algo", "mean", "lo", "hi", "n"]


def test_seed_bands_refuses_empty_input() -> None:
    with pytest.raises(ValueError, match="no rows to aggregate for 'err'"):
        seed_bands(pd.DataFrame({"algo": [], "err": []}), ["algo"], "err")


def stated_claim(**overrides) -> Claim:
    fields = dict(
        id="demo.error",
        study="dzoa",
        where="Fig. 9",
        statement="final error 0.1",
        kind=PAPER_NUMBER,
        form=StatedNumber(paper_value=0.1, tolerance=0.02),
        justification="the paper prints two digits",
        aggregate="fig9",
        extract=lambda table: table["value"].to_numpy(),
        needs={"seeds": 10},
    )
    return Claim(**{**fields, **overrides})


def per_seed(mean: float, n: int = 10) -> pd.DataFrame:
    return pd.DataFrame({"seed": range(n), "value": mean + 0.001 * (np.arange(n) - (n - 1) / 2)})


@pytest.mark.parametrize(
    ("table", "scale", "verdict"),
    [
        (per_seed(0.105), {"seeds": 10}, REPRODUCED),
        (per_seed(0.5), {"seeds": 10}, NOT_REPRODUCED),
        (per_seed(0.105), {"seeds": 2}, NOT_AT_SCALE),
        (None, {"seeds": 10}, UNAVAILABLE),
    ],
    ids=["holds", "fails", "too_small", "no_data"],
)
def test_scorecard_verdicts(table: pd.DataFrame | None, scale: dict, verdict: str) -> None:
    card = scorecard(
        [stated_claim()], {"fig9": table}, scale=scale, switches={"mode": "paper"}, shared_seeds=True
    )
    row = card.iloc[0]
    assert list(card.columns) == SCORECARD_COLUMNS
    assert row["verdict"] == verdict and row["kind"] == PAPER_NUMBER and row["form"] == "stated number"
    assert (
        row["paper_value"] == 0.1 and row["switches"] == '{"mode": "paper"}' and row["tolerance"] == "±0.02"
    )
    if table is not None:
        assert row["our_value"] == f"{table['value'].mean():.4g}" and row["n_seeds"] == 10
        assert row["ci_low"] < row["effect"] < row["ci_high"]


def test_a_claim_whose_quantity_is_not_identified() -> None:
    claim = stated_claim(extract=lambda table: Unidentified("the loss is the same at 20 of 21 rho"))
    row = scorecard(
        [claim], {"fig9": per_seed(0.1)}, scale={"seeds": 10}, switches={}, shared_seeds=True
    ).iloc[0]
    assert row["verdict"] == NOT_IDENTIFIABLE and row["detail"] == "the loss is the same at 20 of 21 rho"
    small = scorecard(
        [claim], {"fig9": per_seed(0.1)}, scale={"seeds": 2}, switches={}, shared_seeds=True
    ).iloc[0]
    assert small["verdict"] == NOT_AT_SCALE and small["detail"] == "the loss is the same at 20 of 21 rho"


def test_a_claim_needs_a_known_kind_and_a_justification() -> None:
    with pytest.raises(ValueError, match="kind 'number'"):
        stated_claim(kind="number")
    with pytest.raises(ValueError, match="justification"):
        stated_claim(justification=" ")


def test_pairs_and_trend_series_from_per_seed_rows() -> None:
    rows = [
        {"method": m, "epsilon": e, "seed": s, "value": v + e}
        for m, v in (("wddp", 0.0), ("dist_avg", 1.0))
        for e in (0.1, 1.0)
        for s in range(3)
    ]
    table = pd.DataFrame(rows)
    cells = pairs(table, side="method", low="wddp", high="dist_avg", cells=["epsilon"])
    assert [c.name for c in cells] == ["epsilon=0.1", "epsilon=1.0"] and all(c.paired for c in cells)
    assert cells[0].low.tolist() == [0.1] * 3 and cells[0].high.tolist() == [1.1] * 3
    series = trend_series(table, series=["method"], x="epsilon")
    assert [s.name for s in series] == ["method=dist_avg", "method=wddp"]
    assert list(series[1].x) == [0.1, 1.0] and series[1].samples[1].tolist() == [1.0] * 3


def test_save_figure_writes_png_and_pdf(tmp_path: Path) -> None:
    fig, axes = new_figure(1, 2)
    axes[0, 0].plot([0, 1], [1, 0])
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]


def test_seed_bands_keeps_a_missing_key_as_its_own_group_first() -> None:
    frame = pd.DataFrame({"alpha": [np.nan, np.nan, 0.5, 0.5, 1.0], "err": [1.0, 3.0, 2.0, 4.0, 5.0]})
    bands = seed_bands(frame, ["alpha"], "err")
    assert np.isnan(bands["alpha"].iloc[0]) and bands["alpha"].iloc[1:].tolist() == [0.5, 1.0]
    assert bands["mean"].tolist() == [2.0, 3.0, 5.0] and bands["n"].tolist() == [2, 2, 1]


def test_seed_bands_finite_only_counts_diverged_runs() -> None:
    frame = pd.DataFrame({"algo": ["a", "a", "a", "b", "b"], "err": [1.0, np.inf, 3.0, np.nan, np.inf]})
    bands = seed_bands(frame, ["algo"], "err", finite_only=True).set_index("algo")
    assert bands.loc["a", "mean"] == 2.0 and bands.loc["a", "lo"] == pytest.approx(
        np.percentile([1.0, 3.0], 20)
    )
    assert bands.loc["a", "n"] == 2 and bands.loc["a", "n_diverged"] == 1
    assert np.isnan(bands.loc["b", "mean"]) and bands.loc["b", "n"] == 0 and bands.loc["b", "n_diverged"] == 2


def test_format_number() -> None:
    assert [format_number(v) for v in (0.05, 1.0, 1000.0, None, math.inf)] == [
        "0.05",
        "1",
        "1000",
        "inf",
        "inf",
    ]


def test_parse_settings_names_missing_and_unknown_keys() -> None:
    assert parse_settings('{"a": 1, "b": 2}', ("a", "b"), "wddp", "x") == {"a": 1, "b": 2}
    with pytest.raises(ConfigError, match=r"missing \['b'\], unknown \['c'\].*dpdl/schemas/wddp.schema.yaml"):
        parse_settings('{"a": 1, "c": 2}', ("a", "b"), "wddp", "x")
    with pytest.raises(ConfigError, match="--settings is not valid JSON"):
        parse_settings("{a", ("a",), "wddp", "x")


def test_parse_named_paths() -> None:
    assert parse_named_paths(["fig1=a.csv", "fig2=b=c.csv"]) == {"fig1": "a.csv", "fig2": "b=c.csv"}
    with pytest.raises(ConfigError, match="NAME=PATH items; got 'fig1'"):
        parse_named_paths(["fig1"])
