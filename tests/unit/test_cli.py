"""``dpdl`` commands: clear errors without tracebacks, prepare/tables/check on small inputs."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from fixtures import write_adult, write_kdd

from dpdl.cli import build_parser, main, plain_text
from dpdl.config import validate_config
from dpdl.data.availability import Availability, Status
from dpdl.io import save_npz, sha256_file, write_json
from dpdl.targets import default_targets

ROOT = Path(__file__).resolve().parents[2]
LASSO = {"trials": 2, "seed": 0, "agents": 5, "samples_per_agent": 4, "features": 3, "noise_variance": 0.1,
         "y_from": "raw", "col_norm": "maxabs", "row_norm": "project"}  # fmt: skip


def prepare_lasso(tmp_path: Path, **overrides: object) -> tuple[Path, Path]:
    out, card = tmp_path / "dzoa" / "lasso.npz", tmp_path / "dzoa" / "lasso.json"
    options = json.dumps({**LASSO, **overrides})
    assert main(["prepare", "dzoa/lasso", "--options", options, "--out", str(out), "--card", str(card)]) == 0
    return out, card


def test_prepare_writes_arrays_and_a_valid_card(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, card_path = prepare_lasso(tmp_path)
    card = json.loads(card_path.read_text())
    arrays = np.load(out, allow_pickle=False)
    assert arrays["X"].shape == (2, 20, 3) and card["rows"] == 20 and card["agents"] == 5
    assert card["options"]["trials"] == 2
    assert main(["check", str(card_path)]) == 0
    assert "1 artifact(s) OK" in capsys.readouterr().out


def test_check_detects_a_changed_npz(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, card_path = prepare_lasso(tmp_path)
    prepare_lasso(tmp_path / "other", seed=1)
    (tmp_path / "other" / "dzoa" / "lasso.npz").replace(out)
    assert main(["check", str(card_path)]) == 1
    captured = capsys.readouterr()
    assert f"{out} has sha256 {sha256_file(out)}, but its card" in captured.out
    assert captured.err.startswith(
        "dpdl check: error: 1 problem(s) in 1 artifact(s), listed above; the first: "
    )


def test_a_job_refuses_arrays_that_are_not_its_cards(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue #23: KDD arrays copied over Adult's were trained on and recorded as Adult; now the job stops."""
    from dpdl.data import adult, kdd
    from dpdl.studies.wddp.grid import settings_json

    features, labels = kdd.read_kdd(write_kdd(tmp_path / "raw" / "kdd.gz"))
    rng = np.random.default_rng(0)
    arrays = {
        "kdd": kdd.prepare_wddp(features, labels, sample_size=50, train_size=40, rng=rng),
        "adult": adult.prepare_wddp(*map(adult.read_adult, write_adult(tmp_path / "raw"))),
    }
    folder = tmp_path / "data" / "processed" / "wddp"
    for name in arrays:  # as `dpdl prepare` writes them
        save_npz(folder / f"{name}.npz", arrays[name])
        write_json(folder / f"{name}.json", {"npz_sha256": sha256_file(folder / f"{name}.npz")})
    adult_sha256, kdd_sha256 = sha256_file(folder / "adult.npz"), sha256_file(folder / "kdd.npz")
    shutil.copy(folder / "kdd.npz", folder / "adult.npz")
    config = validate_config(yaml.safe_load((ROOT / "config" / "ci.yaml").read_text()))
    data = ["--data", str(folder / "adult.npz"), "--card", str(folder / "adult.json")]
    argv = ["wddp", "optimum", "--dataset", "adult", *data, "--settings", settings_json(config)]
    assert main([*argv, "--out", str(tmp_path / "theta.npz")]) == 1
    err = capsys.readouterr().err
    assert (
        f"has sha256 {kdd_sha256}, but its card {folder / 'adult.json'} records npz_sha256 {adult_sha256}"
        in err
    )
    assert f"delete {folder / 'adult.npz'} and rebuild it" in err
    assert not (tmp_path / "theta.npz").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["prepare", "nope/data", "--out", "x.npz", "--card", "x.json"],
            "unknown prepared dataset 'nope/data'",
        ),
        (
            ["prepare", "dzoa/lasso", "--options", "{bad", "--out", "x.npz", "--card", "x.json"],
            "--options is not valid JSON",
        ),
        (
            [
                "dp_iadmm",
                "figure",
                "fig2b",
                "--aggregate",
                "a.csv",
                "--not-run",
                '[["femnist", "objp"]]',
                "--out",
                "x.png",
                "x.pdf",
            ],
            "--not-run must be a JSON list of [dataset, variant, epsilon-bar] cells",
        ),
        (
            ["prepare", "dzoa/lasso", "--options", "[1]", "--out", "x.npz", "--card", "x.json"],
            "--options must be a JSON object",
        ),
        (
            ["prepare", "dzoa/lasso", "--options", "{}", "--out", "x.npz", "--card", "x.json"],
            "options for dzoa/lasso: missing ['agents', 'col_norm'",
        ),
        (["check", "missing.json"], "missing.json: not found"),
        (["check", "--configfile", "no/such.yaml"], "config file no/such.yaml not found"),
        (
            ["dp_iadmm", "claims", "--settings", '{"iterations": 10}', "--out", "x.csv", "x.md"],
            "--settings: missing ['grid_aggregates', 'grid_gaps', 'long_iterations', 'long_seeds'",
        ),
        (
            [
                "dp_iadmm",
                "run",
                "--horizon",
                "main",
                "--dataset",
                "mnist",
                "--variant",
                "objt",
                "--epsilon",
                "1",
                "--data",
                "d.npz",
                "--card",
                "d.json",
                "--settings",
                '{"seeds": 2, "seed": 0}',
                "--out",
                "x.npz",
            ],
            "unknown ['seed']; pass dpdl.studies.dp_iadmm.grid.run_settings",
        ),
    ],
    ids=[
        "unknown_dataset",
        "bad_json",
        "iadmm_figure_not_run",
        "not_object",
        "missing_key",
        "missing_artifact",
        "missing_config",
        "iadmm_claims_settings",
        "iadmm_run_settings",
    ],
)
def test_errors_are_one_clear_message(
    argv: list[str], message: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("x.*"))


def test_bad_switch_value_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    options = json.dumps({**LASSO, "row_norm": "l2"})
    assert (
        main(
            [
                "prepare",
                "dzoa/lasso",
                "--options",
                options,
                "--out",
                str(tmp_path / "x.npz"),
                "--card",
                str(tmp_path / "x.json"),
            ]
        )
        == 1
    )
    assert (
        "data.lasso.row_norm: 'l2' is not one of ['project', 'unit', 'global_max']" in capsys.readouterr().err
    )
    assert list(tmp_path.iterdir()) == []


def test_tables_from_cards(tmp_path: Path) -> None:
    _, card = prepare_lasso(tmp_path)
    csv, md = tmp_path / "datasets.csv", tmp_path / "datasets.md"
    assert (
        main(
            [
                "tables",
                "datasets",
                "--cards",
                str(card),
                "--unavailable",
                "wddp/kdd",
                "--out",
                str(csv),
                str(md),
            ]
        )
        == 0
    )
    lines = csv.read_text().splitlines()
    assert lines[1].startswith("dzoa/lasso,20,20,0,3,,5,4.0,0.0,built")
    assert lines[2].startswith("wddp/kdd,") and "unavailable" in lines[2]
    assert (
        main(["tables", "table1", "--cards", "--out", str(tmp_path / "t1.csv"), str(tmp_path / "t1.md")]) == 0
    )
    assert (tmp_path / "t1.csv").read_text().count("not available here") == 2


def test_module_entry_point_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dpdl", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("dpdl ")


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every parser under it (commands, then a study's steps)."""
    children = [
        child
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for child in action.choices.values()
    ]
    return [parser, *(p for child in children for p in _parsers(child))]


RESTRUCTURED_TEXT = re.compile(r"``|:[a-z]+:`|`[^`]+`_")


def test_help_is_plain_text() -> None:
    """`dpdl --help`, each command's and each step's show no reST markup (the module docstrings' ``x``, :func:`x`)."""
    parsers = _parsers(build_parser())
    assert len(parsers) > 40  # the top, its commands and the four studies' steps
    for parser in parsers:
        shown = parser.format_help()
        assert not RESTRUCTURED_TEXT.search(shown), f"{parser.prog} --help shows reST: {shown}"
    assert "dpdl / python -m dpdl: every pipeline step is also a command." in parsers[0].format_help()


def test_plain_text_drops_roles_and_literals() -> None:
    text = (
        "``dpdl`` runs :func:`dpdl.cli.main` and :py:class:`~dpdl.errors.DpdlError`; `dpdl X --help` stays."
    )
    assert plain_text(text) == "dpdl runs dpdl.cli.main and dpdl.errors.DpdlError; `dpdl X --help` stays."


def test_option_keys_match_what_the_config_provides() -> None:
    from dpdl.data.prepared import options
    from dpdl.studies import prepared_datasets

    config = validate_config(yaml.safe_load((ROOT / "config" / "ci.yaml").read_text()))
    for record in prepared_datasets().values():
        assert set(options(record, config)) == set(record.options), record.name


def test_default_targets_follow_availability() -> None:
    config = validate_config(yaml.safe_load((ROOT / "config" / "ci.yaml").read_text()))
    plan = Availability(
        {"dzoa/lasso": Status("available"), "wddp/adult": Status("available"), "wddp/kdd": Status("skipped")}
    )
    targets = default_targets(config, plan)
    assert "data/processed/dzoa/lasso.npz" in targets and "data/processed/wddp/adult.json" in targets
    assert not any("kdd" in t for t in targets)
    assert "results/tables/datasets.md" in targets and "results/tables/dp_iadmm_table1.csv" in targets
    config["studies"] = ["dzoa"]
    assert not any("table1" in t for t in default_targets(config, plan))
