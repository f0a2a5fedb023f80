"""The build's scorecard beside the published snapshot: a claim this build did not run shows the snapshot's
paper-scale verdict, named as the snapshot's with its commit, never as this build's; what the build decided
is counted in a few lines (the end of the main job prints them). Fixtures: a generated published folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from dpdl.claims import HEADLINE_KINDS, PRIVACY_CLAIM
from dpdl.cli import main
from dpdl.errors import ArtifactError
from dpdl.summary import (
    PUBLISHED_SHOWN,
    PUBLISHED_SNAPSHOT,
    PUBLISHED_VERDICT,
    counted,
    decided_lines,
    end_message,
    merge_scorecards,
    scorecard_markdown,
    with_published_verdicts,
)
from dpdl.verdicts import (
    INCONCLUSIVE,
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    UNAVAILABLE,
)

BUILT = "0123456789abcdef0123456789abcdef01234567"
JUDGED = "fedcba9876543210fedcba9876543210fedcba98"


def publish(folder: Path, card: pd.DataFrame, verdict: str, manifests: dict[str, dict]) -> Path:
    """A published folder as ``dpdl publish`` lays it out: the merged scorecard, every claim with ``verdict``,
    and a ``MANIFEST.json`` for each study of ``manifests``."""
    folder.mkdir()
    card.assign(verdict=verdict).to_csv(folder / "scorecard.csv", index=False)
    for study, code in manifests.items():
        (folder / study).mkdir()
        (folder / study / "MANIFEST.json").write_text(json.dumps({"study": study, **code}))
    return folder


def build_card() -> pd.DataFrame:
    """A build's merged scorecard: dzoa built, one claim decided, one inconclusive, one without its data, the
    rest below the papers' scale; the other studies left out of the config (not run at this scale)."""
    card = merge_scorecards(["dzoa"], {})
    dzoa = card.index[(card["study"] == "dzoa") & card["kind"].isin(HEADLINE_KINDS)]
    card["verdict"] = NOT_AT_SCALE
    card.loc[dzoa[0], "verdict"] = REPRODUCED
    card.loc[dzoa[1], "verdict"] = INCONCLUSIVE
    card.loc[dzoa[2], "verdict"] = UNAVAILABLE
    return card


def test_a_claim_not_run_here_shows_the_snapshots_verdict_with_its_commit(tmp_path: Path) -> None:
    card = build_card()
    published = publish(
        tmp_path / "published",
        card,
        NOT_REPRODUCED,
        {
            "dzoa": {"code": {"commit": BUILT, "modified_files": []}, "judged": {"commit": JUDGED}},
            "wddp": {"code": {"commit": BUILT, "modified_files": [" M config/paper.yaml"]}},
        },  # dvp_pvp and dp_iadmm rows are in the scorecard but have no manifest: not published
    )
    shown = with_published_verdicts(card, published)
    pd.testing.assert_frame_equal(shown[card.columns], card)  # nothing of the build's own changes
    dzoa, wddp = shown["study"] == "dzoa", shown["study"] == "wddp"
    not_run = shown["verdict"].isin([NOT_AT_SCALE, UNAVAILABLE])
    assert set(shown.loc[dzoa & not_run, PUBLISHED_VERDICT]) == {NOT_REPRODUCED}
    assert set(shown.loc[dzoa & not_run, PUBLISHED_SNAPSHOT]) == {
        "published/dzoa at 0123456789, judged at fedcba9876"
    }
    assert set(shown.loc[wddp, PUBLISHED_SNAPSHOT]) == {"published/wddp at 0123456789 (modified)"}
    # a claim this build judged keeps its own verdict alone, decided or not
    assert set(shown.loc[~not_run, PUBLISHED_VERDICT]) == set(shown.loc[~not_run, PUBLISHED_SNAPSHOT]) == {""}
    assert set(shown.loc[~dzoa & ~wddp, PUBLISHED_VERDICT]) == {""}  # studies without a manifest

    markdown = scorecard_markdown(shown)

    def cells(line: str) -> list[str]:
        return [
            cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))
        ]  # not at an escaped \|

    columns = cells(next(line for line in markdown.splitlines() if line.startswith("| id |")))
    rows = {
        cells(line)[0]: dict(zip(columns, cells(line), strict=True))
        for line in markdown.splitlines()
        if line.startswith("| dzoa.")
    }
    decided, unavailable = shown.loc[dzoa, "id"].iloc[0], shown.loc[dzoa, "id"].iloc[2]
    assert rows[decided]["verdict"] == REPRODUCED and rows[decided][PUBLISHED_SHOWN] == ""
    assert rows[unavailable]["verdict"] == UNAVAILABLE
    assert (
        rows[unavailable][PUBLISHED_SHOWN]
        == f"{NOT_REPRODUCED} (published/dzoa at 0123456789, judged at fedcba9876)"
    )
    assert "not this build" in PUBLISHED_SHOWN


def test_what_the_build_decided_is_counted_in_a_few_lines(tmp_path: Path) -> None:
    card = build_card()
    claims = counted(card, (*HEADLINE_KINDS, PRIVACY_CLAIM))
    lines = decided_lines(card, scale="config/config.yaml's")
    assert lines[0] == "The scorecard: results/claims.md (every column: results/claims.csv)."
    assert lines[1] == (
        f"At config/config.yaml's scale this build decided 1 of the papers' {len(claims)} claims (1 inconclusive, "
        f"{len(claims) - 3} not run at this scale, 1 without their data)."
    )
    assert "no claim's rule is loosened" in lines[2] and lines[3].endswith(
        "(README, 'Published paper-scale results')."
    )
    published = publish(tmp_path / "published", card, NOT_IDENTIFIABLE, {"dzoa": {"code": {"commit": BUILT}}})
    with pytest.raises(
        ArtifactError, match=r"dzoa/MANIFEST.json: no code.commit \(not written by dpdl publish\)"
    ):
        with_published_verdicts(card, published)  # a manifest without modified_files
    (published / "dzoa" / "MANIFEST.json").write_text(
        json.dumps({"code": {"commit": BUILT, "modified_files": []}})
    )
    shown = with_published_verdicts(card, published)
    assert decided_lines(shown, where=False)[-1].endswith("marked as the snapshot's, with its commit.")
    assert len(decided_lines(shown)) == 4
    (tmp_path / "claims.csv").write_text(shown.to_csv(index=False))
    end = end_message(tmp_path / "claims.csv", "config/ci.yaml").splitlines()
    assert end[0] == "dpdl: " + lines[0] and end[1] == "  " + lines[1].replace(
        "config/config.yaml", "config/ci.yaml"
    )
    # no snapshot here (a copy of the workflow without published/): the columns are empty
    assert set(with_published_verdicts(card, tmp_path / "none")[PUBLISHED_VERDICT]) == {""}


def test_dpdl_scorecard_with_a_broken_snapshot_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    published = tmp_path / "published"
    (published / "dzoa").mkdir(parents=True)
    merge_scorecards([], {}).to_csv(published / "scorecard.csv", index=False)
    (published / "dzoa" / "MANIFEST.json").write_text("{not json")
    out = [str(tmp_path / name) for name in ("c.csv", "c.md", "c.html")]
    assert main(["scorecard", "--published", str(published), "--out", *out]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and err[0].startswith("dpdl scorecard: error: ")
        and "MANIFEST.json: not valid JSON" in err[0]
    )
    (published / "dzoa" / "MANIFEST.json").write_text(
        json.dumps({"code": {"commit": BUILT, "modified_files": []}})
    )
    assert main(["scorecard", "--published", str(published), "--out", *out]) == 0
    written = pd.read_csv(out[0], dtype=str, keep_default_na=False)
    assert set(written.loc[written["study"] == "dzoa", PUBLISHED_SNAPSHOT]) == {
        "published/dzoa at 0123456789"
    }
