"""Issue 61 item 7, the smaller holes of its point 5: each is refused in one line, or named by ``dpdl check``.

A dataset card that is another dataset's or was prepared for another config; ``dpdl audit --runs`` outside the
config's bounds; ``missing_shards: fail`` with a FEMNIST shard missing; raw HTML from claim text in the Markdown
outputs; an ``.npz`` that expands far beyond its size; a YAML alias bomb in a config file. Each case here failed
on the code before its fix (the closing note of issue 61 shows it).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_cli_bad_input import CONFIG, assert_one_clear_line, lasso_prepare

from dpdl import targets
from dpdl.check import check_card
from dpdl.cli import main
from dpdl.config import load_config
from dpdl.data import femnist
from dpdl.data.availability import FEMNIST, Availability, MissingFile, Status
from dpdl.data.prepared import verified_card
from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import NPZ_FLOOR_BYTES, load_npz, markdown_table, markdown_text
from dpdl.validation import MAX_YAML_VALUES


@pytest.fixture(scope="module")
def lasso_card(tmp_path_factory) -> Path:
    """dzoa/lasso prepared with the ci config's options, as data/processed/dzoa/lasso.{npz,json}."""
    folder = tmp_path_factory.mktemp("cards") / "data" / "processed" / "dzoa"
    folder.mkdir(parents=True)
    argv = lasso_prepare()
    argv[argv.index("x.npz")], argv[argv.index("x.json")] = (
        str(folder / "lasso.npz"),
        str(folder / "lasso.json"),
    )
    assert main(argv) == 0
    return folder / "lasso.json"


def _copy_card(card: Path, to: Path, **changes: object) -> Path:
    """``card`` and its arrays copied to ``to`` (a .json path), the card's options changed by ``changes``."""
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(card.with_suffix(".npz"), to.with_suffix(".npz"))
    contents = json.loads(card.read_text())
    contents["options"].update(changes)
    to.write_text(json.dumps(contents))
    return to


def test_a_card_of_another_dataset_is_named_by_check_and_refused_by_a_run(
    lasso_card: Path, tmp_path: Path, monkeypatch, capsys, stderr_logging
) -> None:
    # hole 1: dzoa/lasso's card and arrays (hashes consistent) put where wddp/adult's belong passed `dpdl check`
    swapped = _copy_card(lasso_card, tmp_path / "data" / "processed" / "wddp" / "adult.json")
    monkeypatch.chdir(tmp_path)
    err = assert_one_clear_line(["check", "data/processed/wddp/adult.json"], capsys)
    assert "names dataset 'dzoa/lasso', but this path holds wddp/adult's card" in err
    with pytest.raises(ArtifactError, match="this path holds wddp/adult's card"):
        verified_card(swapped, swapped.with_suffix(".npz"))  # what every run job reads its card with


def test_a_card_prepared_for_another_config_is_named_by_check(lasso_card: Path, tmp_path: Path) -> None:
    # hole 1: a card whose options are not the config's (its seed edited) passed `dpdl check --configfile`
    assert check_card(lasso_card, CONFIG) == []
    edited = _copy_card(lasso_card, tmp_path / "data" / "processed" / "dzoa" / "lasso.json", seed=7)
    problems = check_card(edited, CONFIG)
    assert len(problems) == 1
    assert "option seed is 7 in the card but 0 in the config's data.lasso.seed" in problems[0]
    assert "prepared for another config" in problems[0]


@pytest.mark.parametrize(
    ("runs", "message"),
    [("10", "less than the minimum of 20"), ("1000000", "greater than the maximum of 100000")],
)
def test_audit_runs_outside_the_config_bounds_is_one_line(
    runs: str, message: str, tmp_path: Path, monkeypatch, capsys, stderr_logging
) -> None:
    # hole 2: --runs 1000000 started an audit the config could never ask for (audit.runs <= 100000)
    def reached(*args, **kwargs):
        raise AssertionError("the audit ran")

    monkeypatch.setattr("dpdl.audit_report.audit_study", reached)
    monkeypatch.chdir(tmp_path)
    err = assert_one_clear_line(
        ["audit", "--study", "dzoa", "--runs", runs, "--out", "a.csv", "a.md", "a.json"], capsys
    )
    assert f"--runs: {runs} is {message}" in err and "audit.runs" in err
    assert list(tmp_path.iterdir()) == []


def _availability_without_shards(missing: int) -> Availability:
    available = Availability(cache=targets.RAW_DIR, mirror=None)
    available.datasets["dp_iadmm/mnist"] = Status("available", 2, ())
    lost = tuple(MissingFile(femnist.FILES["train", k], ()) for k in range(missing))
    available.datasets[FEMNIST] = Status("skipped", 72, lost)
    return available


def test_missing_shards_fail_stops_the_build_naming_the_shards() -> None:
    # hole 3: under `fail` the planner skipped FEMNIST and built the rest, as `use_available` does
    config = load_config(Path(__file__).parents[2] / "config" / "paper.yaml")
    stop = targets.missing_shards_stop(config, _availability_without_shards(4))
    assert stop is not None and "\n" not in stop
    assert stop.startswith(
        "dp_iadmm/femnist: 4 of its 72 selected shard files cannot be obtained here (femnist/train/"
    )
    assert "and 1 more) and data.femnist.missing_shards is 'fail'; fix: " in stop
    assert stop.endswith(
        "or set data.femnist.missing_shards: use_available to build it from the shards at hand"
    )
    config["data"]["femnist"]["missing_shards"] = "use_available"
    assert targets.missing_shards_stop(config, _availability_without_shards(4)) is None
    workflow = (Path(__file__).parents[2] / "workflow" / "rules" / "common.smk").read_text()
    assert "targets.missing_shards_stop(config, available)" in workflow  # the build asks before planning


def test_missing_shards_fail_does_not_stop_a_config_without_femnist_outputs() -> None:
    config = load_config(Path(__file__).parents[2] / "config" / "paper_mnist_cells.yaml")  # MNIST cells only
    assert config["data"]["femnist"]["missing_shards"] == "fail"
    assert targets.missing_shards_stop(config, _availability_without_shards(4)) is None


RAW_HTML = "<script>alert(1)</script> <img src=x onerror=alert(1)> &lt;b&gt; <!-- x --> a|b"


def test_raw_html_from_claim_text_is_shown_as_text_in_markdown() -> None:
    # hole 4: claim text reached claims.md, the scorecard, RESULTS.md, ARTICLE.md and the README block as raw HTML
    table = markdown_table(pd.DataFrame({"id": ["x.claim"], "detail": [RAW_HTML]}))
    row = table.splitlines()[2]
    assert "<script" not in row and "<img" not in row and "<!--" not in row and "&lt;b&gt;" not in row
    assert "&lt;script>alert(1)&lt;/script>" in row and "&amp;lt;b&amp;gt;" in row and "a\\|b" in row
    # what is text in Markdown already stays byte for byte (the published tables hold such values)
    plain = "every record <= 1 (measured 28 > 1); Ryu & Kim; `<study>/audit/`"
    assert markdown_text(plain) == plain


def test_the_article_markdown_escapes_claim_text() -> None:
    from dpdl.article.blocks import Block
    from dpdl.article.render import markdown

    text = markdown(
        [Block(kind="heading", text="<b>t</b>", level=1), Block(kind="text", text=RAW_HTML)]
        + [Block(kind="list", items=["<i>x</i>"])]
    )
    assert "<b>" not in text and "<script" not in text and "<i>" not in text


def test_an_npz_that_expands_far_beyond_its_size_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # hole 5: 1 MB of deflated zeros declaring 1.2 GB was read whole before a traceback
    path = tmp_path / "bomb.npz"
    size = NPZ_FLOOR_BYTES + 2**20
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("x.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(
                member, {"descr": "<u1", "fortran_order": False, "shape": (size,)}
            )
            for _ in range(size // 2**22):
                member.write(bytes(2**22))
            member.write(bytes(size % 2**22))
    with pytest.raises(
        ArtifactError, match=r"bomb.npz: its arrays expand to 269,484,\d+ bytes from [\d,]+ on disk"
    ):
        load_npz(path)


def test_an_npy_header_that_declares_more_than_it_holds_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "lies.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("x.npy", "w") as member:
            np.lib.format.write_array_header_1_0(
                member, {"descr": "<f8", "fortran_order": False, "shape": (10**8,)}
            )
            member.write(bytes(80))
    with pytest.raises(
        ArtifactError, match=r"array x.npy declares shape \(100000000,\) of float64 \(800,000,000 bytes"
    ):
        load_npz(path)


def test_an_ordinary_npz_still_loads(tmp_path: Path) -> None:
    from dpdl.io import save_npz

    save_npz(tmp_path / "ok.npz", {"x": np.zeros((1000, 100)), "y": np.arange(5)})
    arrays = load_npz(tmp_path / "ok.npz")
    assert arrays["x"].shape == (1000, 100) and list(arrays["y"]) == [0, 1, 2, 3, 4]


def _alias_bomb(levels: int) -> str:
    """A YAML alias bomb under a known key (wddp.epsilons), every anchor inside it: 9**levels values."""
    anchors = ["&a0 [" + ", ".join(["0.5"] * 9) + "]"]
    anchors += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "wddp:\n  epsilons: [" + ", ".join(anchors) + "]\n"


def _top_level_bomb(levels: int) -> str:
    """The same bomb with its anchors under top-level keys of their own, used under wddp.epsilons (this shape
    hung ``load_config`` for more than a minute on the old code)."""
    lines = ["a0: &a0 [" + ", ".join(["0.5"] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join([*lines, f"wddp:\n  epsilons: *a{levels - 1}\n"])


@pytest.mark.parametrize(
    "bomb", [_alias_bomb(7), _top_level_bomb(9)], ids=["under_the_key", "anchors_at_top"]
)
def test_a_yaml_alias_bomb_in_a_config_file_is_one_line(
    bomb: str, tmp_path: Path, monkeypatch, capsys, stderr_logging
) -> None:
    # hole 6: 2 KB of aliases under a known key hung planning and every command for minutes
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    assert path.stat().st_size < 2048
    with pytest.raises(
        ConfigError, match=r"bomb.yaml: its YAML aliases \(\*name\) expand it to [\d,]+ values, more"
    ):
        load_config(path)
    monkeypatch.chdir(tmp_path)
    assert "expand it to" in assert_one_clear_line(["status", "--configfile", "bomb.yaml"], capsys)


def test_a_few_aliases_in_a_config_file_still_read(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text("wddp:\n  epsilons: &e [0.5, 1.0]\n")
    assert load_config(path)["wddp"]["epsilons"] == [0.5, 1.0]
    assert len(yaml.safe_load(_alias_bomb(3))["wddp"]["epsilons"]) < MAX_YAML_VALUES
