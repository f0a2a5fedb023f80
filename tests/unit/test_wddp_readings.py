"""The wddp readings (readings.READINGS) and the per_setting tuning protocol they add (gap A16)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_wddp_study import SETTINGS, synthetic

from dpdl.config import load_config, validate_config
from dpdl.errors import ConfigError
from dpdl.readings import DEFAULT, reading_config, study_readings
from dpdl.studies.wddp import grid, run, tune

ROOT = Path(__file__).resolve().parents[2]
PER_SETTING = {**SETTINGS, "tuning": {**SETTINGS["tuning"], "protocol": "per_setting"}, "iterations": 5}


# ------------------------------------------------------------------------------------ readings


def test_readings_are_the_default_then_valid_configs_that_change_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    config = load_config(ROOT / "config/config.yaml")
    found = study_readings("wddp")
    assert found[0].name == DEFAULT and 3 <= len(found) <= 5
    for reading in found[1:]:
        built = validate_config(
            reading_config(config, "wddp", reading.name)
        )  # the schema accepts the switches
        assert built["wddp"] != config["wddp"], reading.name
        assert reading.why.strip(), reading.name
    assert {r.name: r.post_hoc for r in found} == {
        DEFAULT: True,  # its tuning protocol per_epsilon was set after a measured result (docs/post_hoc.md)
        "per_setting": True,  # declared after the default's u = 1 verdicts were seen
        "shared_step": True,
        "reference_step": False,
        "one_shot": False,
    }


def test_every_config_keeps_the_defaults_of_the_open_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The readings' switches are at their defaults in every shipped config (the default reading is the config)."""
    monkeypatch.chdir(ROOT)
    for name in ("config", "ci", "paper"):
        section = load_config(ROOT / f"config/{name}.yaml")["wddp"]
        assert section["aggregation"] == "per_round", name
        assert (section["tuning"]["protocol"], section["tuning"]["scope"]) == ("per_epsilon", "per_method"), (
            name
        )


# ------------------------------------------------------------------------- batches and step keys


@pytest.mark.parametrize(
    ("experiment", "clients", "epsilon"),
    [("epsilon", 32, None), ("unevenness", 16, 0.05), ("unevenness", 8, 0.01)],
)
def test_batch_names_parse_back(experiment: str, clients: int, epsilon: float | None) -> None:
    assert grid.parse_batch(grid.batch_name(experiment, clients, epsilon)) == (experiment, clients, epsilon)


def test_a_bad_batch_name_is_refused() -> None:
    with pytest.raises(ConfigError, match="'epsilon_32' is not a wddp batch"):
        grid.parse_batch("epsilon_32")


def test_runs_read_the_dataset_tuning_unless_per_setting() -> None:
    assert grid.run_tuning_input(SETTINGS, "epsilon") == "results/wddp/tuning/{dataset}.json"
    assert grid.run_tuning_input(SETTINGS, "unevenness") == "results/wddp/tuning/{dataset}.json"
    assert (
        grid.run_tuning_input(PER_SETTING, "epsilon")
        == "results/wddp/tuning/{dataset}/epsilon_m{clients}.json"
    )
    assert (
        grid.run_tuning_input(PER_SETTING, "unevenness")
        == "results/wddp/tuning/{dataset}/unevenness_m{clients}_eps{epsilon}.json"
    )


def test_step_size_keys_are_epsilons_or_run_cells() -> None:
    assert grid.step_size_key(SETTINGS, "unevenness", 0.05, 3) == "0.05"  # today's key: runs unchanged
    assert grid.step_size_key(PER_SETTING, "epsilon", 0.05, None) == "eps0.05"
    assert grid.step_size_key(PER_SETTING, "unevenness", 0.05, 3) == "u3"


def test_a_per_setting_batch_takes_each_cell_its_own_step_size() -> None:
    steps = {m: {"u1": 0.1, "u3": 1.0} for m in grid.PRIVATE_METHODS}
    _, columns = run.build_batch(PER_SETTING, "kdd", 160, 5, "unevenness", 16, 0.05, steps)
    assert {(c.unevenness, c.step_size) for c in columns} == {(1, 0.1), (3, 1.0)}
    with pytest.raises(KeyError):  # an epsilon-keyed selection is not silently reused under per_setting
        run.build_batch(PER_SETTING, "kdd", 160, 5, "unevenness", 16, 0.05, {m: {"0.05": 1.0} for m in steps})


# ------------------------------------------------------------------------------ per-setting CV


def test_per_setting_cv_of_an_epsilon_batch_is_the_reference_cv_at_its_m() -> None:
    """At m = tuning.clients the per-setting CV is per_epsilon's at the batch's epsilons (same streams)."""
    data = synthetic(n=80)
    scores = tune.cross_validate_setting(PER_SETTING, "kdd", data, "epsilon", 4, None)
    assert len(scores) == 2 * 1 * 3 * 2 * 2  # folds x seeds x methods x epsilons x step sizes
    assert sorted(set(scores["cell"])) == ["eps0.05", "eps1"] and set(scores["clients"]) == {4}
    per_epsilon = {**PER_SETTING, "tuning": {**PER_SETTING["tuning"], "protocol": "per_epsilon"}}
    reference = tune.cross_validate(per_epsilon, "kdd", data)
    keys = ["method", "epsilon", "step_size", "fold", "seed"]
    ours = scores.set_index(keys)["validation_loss"].sort_index()
    np.testing.assert_array_equal(ours, reference.set_index(keys)["validation_loss"].loc[ours.index])
    other_m = tune.cross_validate_setting(PER_SETTING, "kdd", data, "epsilon", 2, None)
    dist_avg = other_m["method"] == "dist_avg"
    assert not np.array_equal(
        other_m.loc[dist_avg, "validation_loss"], scores.loc[dist_avg, "validation_loss"]
    )


def test_per_setting_cv_of_a_u_batch_tunes_every_u_on_two_groups() -> None:
    data = synthetic(n=120)
    poisoned = {**data, "X_test": np.full_like(data["X_test"], np.nan)}
    scores = tune.cross_validate_setting(PER_SETTING, "kdd", poisoned, "unevenness", 4, 0.05)
    assert len(scores) == 2 * 1 * 2 * 3 * 2  # folds x seeds x u x methods x step sizes
    assert sorted(set(scores["cell"])) == ["u1", "u3"] and set(scores["epsilon"]) == {0.05}
    assert scores["validation_accuracy"].notna().all()  # the test set is never read
    by_cell = scores.set_index(["method", "cell", "step_size", "fold", "seed"])["validation_loss"]
    # per-round: WD-DP's update has no partition in it, so its scores are the same at every u
    np.testing.assert_array_equal(
        by_cell["wddp"].xs("u1", level="cell"), by_cell["wddp"].xs("u3", level="cell")
    )
    # the baseline's sigma and weights change with u
    assert not np.array_equal(
        by_cell["dist_avg"].xs("u1", level="cell"), by_cell["dist_avg"].xs("u3", level="cell")
    )
    summary, selected = tune.select_step_sizes(scores, "per_method", by="cell")
    assert set(selected) == set(grid.PRIVATE_METHODS) and set(selected["dist_avg"]) == {"u1", "u3"}
    assert selected["wddp"]["u1"] == selected["wddp"]["u3"]
    assert {"cell", "clients", "epsilon", "unevenness", "selected"} <= set(summary.columns)
    assert summary["selected"].sum() == 3 * 2


def test_per_setting_selection_is_per_cell_and_pools_methods_when_shared() -> None:
    scores = pd.DataFrame(
        {
            "method": ["wddp", "wddp", "dist_avg", "dist_avg"] * 2,
            "cell": ["u1"] * 4 + ["u9"] * 4,
            "clients": 16,
            "epsilon": 0.05,
            "unevenness": [1] * 4 + [9] * 4,
            "step_size": [0.1, 1.0] * 4,
            "fold": 0,
            "seed": 0,
            "validation_accuracy": [0.80, 0.90, 0.79, 0.70, 0.80, 0.90, 0.85, 0.60],
            "validation_loss": 0.3,
        }
    )
    assert tune.select_step_sizes(scores, "per_method", by="cell")[1] == {
        "dist_avg": {"u1": 0.1, "u9": 0.1},
        "wddp": {"u1": 1.0, "u9": 1.0},
    }
    # shared: u1 pools 0.795 (0.1) vs 0.80 (1.0); u9 pools 0.825 (0.1) vs 0.75 (1.0)
    assert tune.select_step_sizes(scores, "shared", by="cell")[1] == {
        "dist_avg": {"u1": 1.0, "u9": 0.1},
        "wddp": {"u1": 1.0, "u9": 0.1},
    }


def test_the_default_cv_keeps_its_columns() -> None:
    """The dataset-level CV (per_epsilon, reference) writes today's columns: its runs stay byte-identical."""
    scores = tune.cross_validate({**SETTINGS, "iterations": 3}, "kdd", synthetic(n=80))
    assert list(scores.columns) == [
        "method",
        "epsilon",
        "step_size",
        "fold",
        "seed",
        "validation_accuracy",
        "validation_loss",
    ]


# ------------------------------------------------------------------------------------ command


def test_the_tune_command_takes_a_batch_exactly_under_per_setting(capsys: pytest.CaptureFixture[str]) -> None:
    from dpdl.cli import main

    argv = [
        "wddp",
        "tune",
        "--dataset",
        "kdd",
        "--data",
        "x.npz",
        "--card",
        "x.json",
        "--out",
        "s.csv",
        "s.json",
    ]
    message = "--batch is required under tuning.protocol per_setting and not allowed otherwise"
    assert main([*argv, "--settings", json.dumps(PER_SETTING)]) == 1  # per_setting without --batch
    assert message in capsys.readouterr().err
    assert (
        main([*argv, "--settings", json.dumps(SETTINGS), "--batch", "epsilon_m4"]) == 1
    )  # --batch otherwise
    assert message in capsys.readouterr().err


def test_the_tune_command_writes_a_batch_selection_keyed_by_run_cell(tmp_path: Path) -> None:
    from dpdl.cli import main
    from dpdl.io import read_json, save_npz, sha256_file

    save_npz(tmp_path / "kdd.npz", synthetic(n=120))
    card = {"npz_sha256": sha256_file(tmp_path / "kdd.npz")}
    (tmp_path / "kdd.json").write_text(json.dumps(card), encoding="utf-8")
    out = [str(tmp_path / "tuning.csv"), str(tmp_path / "tuning.json")]
    argv = [
        "wddp",
        "tune",
        "--dataset",
        "kdd",
        "--data",
        str(tmp_path / "kdd.npz"),
        "--card",
        str(tmp_path / "kdd.json"),
    ]
    argv += ["--settings", json.dumps(PER_SETTING), "--batch", "unevenness_m4_eps0.05", "--out", *out]
    assert main(argv) == 0
    written = read_json(out[1])
    assert {cell for cells in written["step_sizes"].values() for cell in cells} == {"u1", "u3"}
    assert (
        written["settings"]["batch"] == "unevenness_m4_eps0.05"
        and written["settings"]["protocol"] == "per_setting"
    )
    assert (
        "clients" not in written["settings"] and "epsilon" not in written["settings"]
    )  # unused under per_setting
    # the batch's runs find every step size they need
    _, columns = run.build_batch(PER_SETTING, "kdd", 120, 5, "unevenness", 4, 0.05, written["step_sizes"])
    assert len(columns) == 2 * 2 * 3
