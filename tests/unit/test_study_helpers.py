"""Shared study helpers: seed bands, claims and verdicts, figure writing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl.aggregate import seed_bands
from dpdl.claims import NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED, UNAVAILABLE, Claim, Evidence, scorecard
from dpdl.plotting import new_figure, save_figure


def test_seed_bands_against_numpy() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"algo": ["a"] * 10 + ["b"] * 10, "seed": list(range(10)) * 2, "err": rng.random(20)})
    bands = seed_bands(frame, ["algo"], "err")
    a = frame.loc[frame.algo == "a", "err"].to_numpy()
    row = bands.set_index("algo").loc["a"]
    assert row["mean"] == pytest.approx(a.mean())
    assert row["lo"] == pytest.approx(np.percentile(a, 20)) and row["hi"] == pytest.approx(np.percentile(a, 80))
    assert row["n"] == 10 and list(bands.columns) == ["algo", "mean", "lo", "hi", "n"]


def test_seed_bands_refuses_empty_input() -> None:
    with pytest.raises(ValueError, match="no rows to aggregate for 'err'"):
        seed_bands(pd.DataFrame({"algo": [], "err": []}), ["algo"], "err")


def error_below(threshold: float):
    def evaluate(agg: pd.DataFrame) -> Evidence:
        value = float(agg["mean"].iloc[0])
        return Evidence(value, value <= threshold, spread=f"{agg['lo'].iloc[0]}-{agg['hi'].iloc[0]}")

    return evaluate


CLAIM = Claim(
    id="demo.error", study="dzoa", where="Fig. 9", statement="error below 0.1", paper_value=0.1,
    tolerance="<= 0.1", justification="demo", aggregate="fig9", evaluate=error_below(0.1), needs={"seeds": 10},
)  # fmt: skip


@pytest.mark.parametrize(
    ("aggregate", "scale", "verdict"),
    [
        (pd.DataFrame({"mean": [0.05], "lo": [0.04], "hi": [0.06]}), {"seeds": 10}, REPRODUCED),
        (pd.DataFrame({"mean": [0.50], "lo": [0.40], "hi": [0.60]}), {"seeds": 10}, NOT_REPRODUCED),
        (pd.DataFrame({"mean": [0.05], "lo": [0.04], "hi": [0.06]}), {"seeds": 2}, NOT_AT_SCALE),
        (None, {"seeds": 10}, UNAVAILABLE),
    ],
    ids=["holds", "fails", "too_small", "no_data"],
)
def test_scorecard_verdicts(aggregate: pd.DataFrame | None, scale: dict, verdict: str) -> None:
    card = scorecard([CLAIM], {"fig9": aggregate}, scale=scale, switches={"mode": "paper"})
    row = card.iloc[0]
    assert row["verdict"] == verdict
    assert row["paper_value"] == 0.1 and row["switches"] == '{"mode": "paper"}'
    if aggregate is not None:
        assert row["our_value"] == aggregate["mean"].iloc[0]


def test_save_figure_writes_png_and_pdf(tmp_path: Path) -> None:
    fig, axes = new_figure(1, 2)
    axes[0, 0].plot([0, 1], [1, 0])
    save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]
