"""Every ``dpdl`` subcommand, driven with bad input, ends in one clear line on stderr and exit code 1.

The subcommands are read from the argument parser, so a new one is driven too. Each is given, in
turn, missing input files, garbage input files (random bytes) and bad JSON for every JSON option,
every other argument valid; a command that reads prepared data is also given arrays that are not
the ones their card describes. The cases below add out-of-range values and the inputs no generic
scenario reaches. A subcommand that neither reaches fails the test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpdl.cli import build_parser, main
from dpdl.config import validate_config
from dpdl.data.prepared import options as prepared_options
from dpdl.io import save_npz, sha256_file, write_json
from dpdl.readings import READING_SEPARATOR, study_readings
from dpdl.studies import prepared_dataset
from dpdl.studies.dp_iadmm import grid as iadmm_grid
from dpdl.studies.dvp_pvp import grid as dvp_grid
from dpdl.studies.dzoa import grid as dzoa_grid
from dpdl.studies.wddp import grid as wddp_grid

ROOT = Path(__file__).resolve().parents[2]
CONFIG = validate_config(yaml.safe_load((ROOT / "config" / "ci.yaml").read_text()))
JSON_OPTIONS = {"settings", "options", "config", "scale"}
OUTPUTS = {"out", "seeds_out", "png", "pdf", "table", "prepare card"}  # dest, or "command dest"
PREPARED_DATA = {"data", "arrays"}  # the prepared .npz, beside a --card
VALUES = {  # valid values of the arguments that are neither files, JSON, choices nor numbers; by dest, or
    # by "command dest" (an optional argument is given only so)
    "alpha": "1",
    "dvp_pvp run etas": "1",  # a fixed eta: the settings' eta is tuned
    "rho_exponents": "0",
    "epsilon": "1",
    "variant": "objp",
    "dataset": "mnist",
    "study": "dzoa",
    "reading": study_readings("dzoa")[1].name,
    "names": "dzoa/lasso",
    "name": "dzoa/lasso",
    "unavailable": "wddp/kdd",
    "buildable": "dzoa/lasso",
    "studies": "dzoa",
}
SETTINGS = {  # a valid JSON option of each subcommand (or study) that takes one
    "prepare options": json.dumps(prepared_options(prepared_dataset("dzoa/lasso"), CONFIG)),
    "privacy-table config": json.dumps(CONFIG),
    "reading-build config": json.dumps(CONFIG),
    "dp_iadmm run settings": json.dumps(iadmm_grid.run_settings(CONFIG, "main", "objp")),
    "dp_iadmm optimum settings": json.dumps(iadmm_grid.optimum_settings(CONFIG)),
    "dp_iadmm claims settings": json.dumps(iadmm_grid.claim_settings(CONFIG)),
    "dvp_pvp run settings": dvp_grid.run_settings_json(CONFIG),
    "dvp_pvp claims scale": dvp_grid.claim_scale_json(CONFIG),
    "dvp_pvp": dvp_grid.settings_json(CONFIG),
    "wddp": wddp_grid.settings_json(CONFIG),
    "dzoa": dzoa_grid.settings_json(CONFIG),
}
STALE_SHA = "0" * 64
MAY_BE_MISSING = {"dvp_pvp claims", "dzoa claims"}  # a per-seed table not built: its claims are "not run"


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(command words, parser) of every subcommand that runs something."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield prefix, parser
        return
    for name, sub in subparsers[0].choices.items():
        yield from leaf_commands(sub, (*prefix, name))


COMMANDS = {" ".join(words): sub for words, sub in leaf_commands(build_parser())}


def arguments(command: str) -> list[argparse.Action]:
    return [a for a in COMMANDS[command]._actions if not isinstance(a, argparse._HelpAction) and a.nargs != 0]


def is_input_file(command: str, action: argparse.Action) -> bool:
    """A file the command reads and cannot do without (required, positional or a list)."""
    named = {action.dest, f"{command} {action.dest}"}
    other = named & (JSON_OPTIONS | OUTPUTS | set(VALUES))
    if other or action.choices or action.type in (int, float):
        return False
    return action.required or not action.option_strings or action.nargs in ("*", "+")


def reads_prepared_data(command: str) -> bool:
    dests = {a.dest for a in arguments(command) if is_input_file(command, a)}
    return "card" in dests and bool(dests & PREPARED_DATA)


def generic_argv(command: str, scenario: str, folder: Path) -> list[str] | None:
    """The argv of ``command`` in ``scenario`` (input files ``folder/in_<dest>``); None if nothing is bad."""
    argv, bad = command.split(), scenario == "stale_card" and reads_prepared_data(command)
    for action in arguments(command):
        if is_input_file(command, action):
            bad = bad or scenario in ("missing", "garbage")
            path = folder / f"in_{action.dest}"
            value = [f"x{READING_SEPARATOR}y={path}" if "=" in str(action.metavar) else str(path)]
        elif action.dest in JSON_OPTIONS and (action.required or action.dest == "options"):
            bad = bad or scenario == "bad_json"
            valid = SETTINGS.get(f"{command} {action.dest}") or SETTINGS[command.split()[0]]
            value = ["{bad" if scenario == "bad_json" else valid]
        elif action.option_strings and not action.required and f"{command} {action.dest}" not in VALUES:
            continue  # an optional argument: its default
        elif action.choices:
            value = [next(iter(action.choices))]
        elif {action.dest, f"{command} {action.dest}"} & OUTPUTS:
            count = action.nargs if isinstance(action.nargs, int) else 1
            value = [str(folder / f"out_{action.dest}_{i}") for i in range(count)]
        elif action.type in (int, float):
            value = ["1"]
        else:
            value = [VALUES.get(f"{command} {action.dest}") or VALUES[action.dest]]
        argv += [*action.option_strings[:1], *value]
    return argv if bad else None


SCENARIOS = ("missing", "garbage", "bad_json", "stale_card")
GENERIC = [
    (c, s)
    for c in COMMANDS
    for s in SCENARIOS
    if generic_argv(c, s, Path("in")) is not None and not (s == "missing" and c in MAY_BE_MISSING)
]


def iadmm_run(settings: dict, dataset: str = "mnist") -> list[str]:
    """``dp_iadmm run`` on the MNIST fixture, with ``settings`` changed from the valid ones."""
    settings = {**iadmm_grid.run_settings(CONFIG, "main", "objp"), **settings}
    words = f"dp_iadmm run --horizon main --dataset {dataset} --variant objp --epsilon 1 --data {{npz}} --card {{card}}"
    return [*words.split(), "--settings", json.dumps(settings), "--out", "x.npz"]


def lasso_prepare(**changes: int) -> list[str]:
    """``dpdl prepare dzoa/lasso`` with the ci config's options, ``changes`` applied."""
    options = json.dumps({**prepared_options(prepared_dataset("dzoa/lasso"), CONFIG), **changes})
    return ["prepare", "dzoa/lasso", "--options", options, "--out", "x.npz", "--card", "x.json"]


BAD_DZOA_SETTINGS = json.dumps({**json.loads(SETTINGS["dzoa"]), "rho": "big"})
CASES = {  # argv ({name}: a file of the `prepared` fixture), and what the one line must say
    "fetch_missing_config": (["fetch", "--configfile", "no.yaml"], "config file no.yaml not found"),
    "availability_missing_config": (
        ["availability", "--configfile", "no.yaml"],
        "config file no.yaml not found",
    ),
    "status_missing_config": (["status", "--configfile", "no.yaml"], "config file no.yaml not found"),
    "check_nothing": (["check"], "nothing to check"),
    "article_unknown_study": (["article", "nope"], "unknown study 'nope'"),
    "article_missing_snapshot": (
        ["article", "--all", "--published", "nowhere"],
        "nowhere: no such snapshot folder",
    ),
    "publish_nothing": (["publish"], "publish needs --configfile and --studies (or --rejudge"),
    "publish_rejudge_with_studies": (
        ["publish", "--rejudge", "--studies", "dzoa"],
        "leave out --configfile and --studies",
    ),
    "publish_rejudge_empty_folder": (
        ["publish", "--rejudge", "--out", "nowhere"],
        "nowhere: no published study",
    ),
    "check_random_bytes": (["check", "{garbage}"], "the first: {garbage}: not an .npz archive (not a zip"),
    "fetch_garbage_config": (["fetch", "--configfile", "{garbage}"], "garbage.npz"),
    "availability_garbage_config": (["availability", "--configfile", "{garbage}"], "garbage.npz"),
    "status_garbage_config": (["status", "--configfile", "{garbage}"], "garbage.npz"),
    "check_garbage_config": (["check", "--configfile", "{garbage}"], "garbage.npz"),
    "prepare_bad_option": (
        ["prepare", "dzoa/lasso", "--options", '{"trials": 2}', "--out", "x.npz", "--card", "x.json"],
        "options for dzoa/lasso",
    ),
    "reading_build_no_snakefile": (
        [
            *f"reading-build --study dzoa --reading {VALUES['reading']} --snakefile no.smk".split(),
            "--config",
            "{}",
        ],
        "no.smk",
    ),
    "iadmm_seeds_string": (iadmm_run({"seeds": "two"}), "seeds: 'two' is not of type 'integer'"),
    "iadmm_negative_iterations": (
        iadmm_run({"iterations": -5}),
        "iterations: -5 is less than the minimum of 1",
    ),
    "iadmm_delta_5": (iadmm_run({"delta": 5}), "delta: 5 is greater than or equal to the maximum of 1"),
    "iadmm_log_every_0": (iadmm_run({"log_every": 0}), "log_every: 0 is less than the minimum of 1"),
    "iadmm_unknown_switch": (iadmm_run({"sensitivity": "loud"}), "sensitivity: 'loud' is not one of"),
    "iadmm_femnist_on_mnist": (iadmm_run({}, dataset="femnist"), "is the card of dp_iadmm/mnist"),
    "iadmm_optimum_femnist_on_mnist": (
        [
            *"dp_iadmm optimum --data {femnist} --out x.csv x.md --settings".split(),
            SETTINGS["dp_iadmm optimum settings"],
        ],
        "no arrays ['offsets_train'], so not the prepared femnist data",
    ),
    "audit_unknown_study": (
        "audit --study nope --runs 100 --out x.csv x.md x.json".split(),
        "--study: unknown 'nope'",
    ),
    "audit_too_few_runs": (
        "audit --study dzoa --runs 5 --out x.csv x.md x.json".split(),
        "--runs: 5 is less than the minimum of 20",
    ),
    "publish_audit_unpublished": (
        "publish --audit --configfile config/ci.yaml --studies dzoa --out nowhere".split(),
        "dzoa: not published in nowhere",
    ),
    "config_reference_out_below_a_file": (
        ["config-reference", "--out", "/dev/null/README.md"],
        "--out /dev/null/README.md: cannot write it",
    ),
    "dzoa_settings_wrong_type": (
        [
            *"dzoa claims --aggregates fig2=x.csv --trials 1 --out x.csv x.md --settings".split(),
            BAD_DZOA_SETTINGS,
        ],
        "rho: 'big' is not of type",
    ),
}


def assert_one_clear_line(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 1, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"dpdl {command_of(argv)}: error: "), err
    return err


def command_of(argv: list[str]) -> str:
    return " ".join(argv[:2]) if " ".join(argv[:2]) in COMMANDS else argv[0]


@pytest.mark.parametrize(
    ("command", "scenario"),
    [pytest.param(c, s, id=f"{c.replace(' ', '_')}-{s}") for c, s in GENERIC],
)
def test_generic_bad_input(command, scenario, tmp_path, monkeypatch, capsys, stderr_logging) -> None:
    monkeypatch.chdir(tmp_path)
    argv = generic_argv(command, scenario, tmp_path)
    if scenario == "garbage":
        for action in arguments(command):
            if is_input_file(command, action):
                (tmp_path / f"in_{action.dest}").write_bytes(np.random.default_rng(0).bytes(200))
    if scenario == "stale_card":
        data = tmp_path / f"in_{next(a.dest for a in arguments(command) if a.dest in PREPARED_DATA)}"
        save_npz(data, {"X": np.zeros((2, 2))})
        write_json(tmp_path / "in_card", {"npz_sha256": STALE_SHA})
    err = assert_one_clear_line(argv, capsys)
    if scenario == "stale_card":
        assert sha256_file(data) in err and STALE_SHA in err and "rebuild" in err


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_case(case, prepared, tmp_path, monkeypatch, capsys, stderr_logging) -> None:
    argv, message = CASES[case]
    monkeypatch.chdir(tmp_path)
    for name, path in prepared.items():
        argv = [word.replace(f"{{{name}}}", path) for word in argv]
        message = message.replace(f"{{{name}}}", path)
    assert message in assert_one_clear_line(argv, capsys)


def test_every_subcommand_is_driven() -> None:
    driven = {command for command, _ in GENERIC}
    driven |= {command_of(argv) for argv, _ in CASES.values()}
    assert set(COMMANDS) <= driven, sorted(set(COMMANDS) - driven)
