"""Verdicts re-derived, never copied (issue 61 item 3): a verdict edited by hand, its hashes and merged files made to
agree, fails ``dpdl check``; so does a per-seed table edited under its verdicts; ``dpdl publish`` refuses a build whose
scorecard is not what its tables give, before it writes anything.

Each test works on a copy of one committed study (dvp_pvp: the quickest to judge), as ``dpdl publish`` lays it out.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_cli_bad_input import assert_one_clear_line

from dpdl.cli import main
from dpdl.config import validate_config
from dpdl.errors import DpdlError
from dpdl.io import sha256_file
from dpdl.paths import PUBLISHED
from dpdl.publishing.layout import MANIFEST, built_readings
from dpdl.publishing.merged import write_merged
from dpdl.publishing.problems import published_problems
from dpdl.readings import reading_folder
from dpdl.studies import ALL
from dpdl.verdict_check import build_problems, refuse_misjudged

ROOT = Path(__file__).resolve().parents[2]
STUDY = "dvp_pvp"
READING = "eta_1"  # a reading judged from its own per-seed tables


@pytest.fixture(scope="module")
def one_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of the committed dvp_pvp alone, its merged files written for it."""
    out = tmp_path_factory.mktemp("one_study") / "published"
    shutil.copytree(ROOT / PUBLISHED / STUDY, out / STUDY)
    write_merged(out)
    return out


@pytest.fixture
def snapshot(one_study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of :func:`one_study` to edit; the checkout is the working directory (``check`` reads its git)."""
    monkeypatch.chdir(ROOT)
    return Path(shutil.copytree(one_study, tmp_path / "published"))


def rehash(out: Path) -> None:
    """Make the study's manifest and the snapshot's merged files agree with its files again, as a careful hand
    edit would.

    The hash chain is dropped (a snapshot published before it has none), or it would name the edit first: here
    the verdicts themselves, judged again, must.
    """
    path = out / STUDY / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["files"] = {name: sha256_file(out / STUDY / name) for name in manifest["files"]}
    manifest.pop("chain", None)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    write_merged(out)


def read_card(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def flip(path: Path) -> tuple[str, str, str]:
    """Change the first 'reproduced' verdict of the scorecard ``path`` to 'not reproduced': (claim, old, new)."""
    card = read_card(path)
    row = card.index[card["verdict"] == "reproduced"][0]
    card.loc[row, "verdict"] = "not reproduced"
    path.write_text(card.to_csv(index=False, lineterminator="\n"), encoding="utf-8")
    return card.loc[row, "id"], "reproduced", "not reproduced"


def test_an_unedited_snapshot_passes(snapshot: Path) -> None:
    assert published_problems(snapshot) == []


@pytest.mark.parametrize(
    ("scorecard", "reading"), [("claims.csv", "default"), (f"readings/{READING}.csv", READING)]
)
def test_a_verdict_flipped_by_hand_is_named_though_hashes_and_merged_files_agree(
    snapshot: Path, scorecard: str, reading: str, capsys: pytest.CaptureFixture[str]
) -> None:
    claim, derived, stored = flip(snapshot / STUDY / scorecard)
    rehash(snapshot)
    assert published_problems(snapshot) == [
        f"{snapshot / STUDY / scorecard}: claim {claim} ({STUDY}, reading {reading}): verdict {stored!r} here, "
        f"{derived!r} from its per-seed tables; judge the snapshot again (`dpdl publish --rejudge`) or publish it again"
    ]
    assert main(["check", str(snapshot)]) == 1
    out = capsys.readouterr().out
    assert f"claim {claim} ({STUDY}, reading {reading}): verdict" in out and "Traceback" not in out


def test_per_seed_values_scaled_by_3_no_longer_give_the_published_verdicts(snapshot: Path) -> None:
    """PVP's per-seed values tripled: its error is then above DVP's, which the scorecard says it is not."""
    for table in sorted((snapshot / STUDY / "aggregates").glob("*_seeds.csv")):
        seeds = pd.read_csv(table)
        seeds.loc[seeds["algorithm"] == "pvp", "value"] *= 3
        table.write_text(seeds.to_csv(index=False, lineterminator="\n"), encoding="utf-8")
    rehash(snapshot)
    problems = published_problems(snapshot)
    scorecard = snapshot / STUDY / "claims.csv"
    assert all(
        line.startswith(f"{scorecard}: claim {STUDY}.") for line in problems
    )  # the numbers: many claims
    for claim in ("dvp_error_below_pvp", "dvp_outperforms_conclusion"):  # and two verdicts
        said = (
            f"{scorecard}: claim {STUDY}.{claim} ({STUDY}, reading default): verdict 'not reproduced' here, "
        )
        assert any(
            line.startswith(said + "'reproduced' from its per-seed tables; our_value ") for line in problems
        )


def test_the_cli_check_published_passes_an_unedited_snapshot(
    snapshot: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["check", str(snapshot)]) == 0
    assert "1 artifact(s) OK" in capsys.readouterr().out


@pytest.fixture
def build(snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A finished build of dvp_pvp laid out from the snapshot (scorecards, per-seed tables, cards, readings) in a
    folder of its own, the working directory; its config is the manifest's."""
    folder = snapshot / STUDY
    where = tmp_path / "build"
    shutil.copytree(folder / "aggregates", where / "results" / STUDY / "aggregates")
    shutil.copytree(folder / "cards", where / "data" / "processed" / STUDY)
    (where / "results" / "claims").mkdir(parents=True)
    shutil.copyfile(folder / "claims.csv", where / "results" / "claims" / f"{STUDY}.csv")
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    for name in manifest["readings"][1:]:
        built = where / reading_folder(STUDY, name) / "results"
        shutil.copytree(folder / "readings" / name / "aggregates", built / STUDY / "aggregates")
        (built / "claims").mkdir()
        shutil.copyfile(folder / "readings" / f"{name}.csv", built / "claims" / f"{STUDY}.csv")
    (where / "workflow").symlink_to(ROOT / "workflow")  # the config schemas, as in a checkout
    monkeypatch.chdir(where)
    config = validate_config({**{other: {} for other in ALL}, **manifest["config"], "studies": [STUDY]})
    return {"folder": where, "config": config, "builds": {STUDY: (built_readings(STUDY), {})}}


def test_a_build_whose_tables_give_its_verdicts_passes(build: dict) -> None:
    assert build_problems(build["builds"], build["config"]) == []


@pytest.mark.parametrize("reading", ["default", READING])
def test_publish_refuses_a_built_verdict_edited_by_hand_before_writing_anything(
    build: dict, reading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import dpdl.config
    import dpdl.publishing.snapshot
    import dpdl.targets

    where = Path("results") if reading == "default" else reading_folder(STUDY, reading) / "results"
    scorecard = where / "claims" / f"{STUDY}.csv"
    claim, derived, stored = flip(scorecard)
    line = (
        f"{scorecard}: claim {claim} ({STUDY}, reading {reading}): verdict {stored!r} here, {derived!r} from its "
        "per-seed tables; delete it and build it again with snakemake (its claims step)"
    )
    assert build_problems(build["builds"], build["config"]) == [line]
    with pytest.raises(DpdlError) as raised:
        refuse_misjudged(build["builds"], build["config"])
    assert (
        str(raised.value)
        == f"nothing published: a built verdict is not what its per-seed tables give: {line}"
    )

    class Plan:
        buildable = ()

    def no_writes(*args: object) -> None:
        raise AssertionError("publish wrote a study before refusing")

    monkeypatch.setattr(dpdl.config, "load_config", lambda path: build["config"])
    monkeypatch.setattr(dpdl.targets, "plan", lambda config: Plan())
    monkeypatch.setattr(dpdl.publishing.snapshot, "publish_study", no_writes)
    out = tmp_path / "out"
    args = ["publish", "--configfile", "config.yaml", "--studies", STUDY, "--out", str(out)]
    assert "a built verdict is not what its per-seed tables give" in assert_one_clear_line(args, capsys)
    assert not out.exists()
    from dpdl.check import claim_problems  # `dpdl check --configfile` on the build

    assert claim_problems(build["config"]) == [line]
