"""Study dvp_pvp: its readings, eta tuned per algorithm (G14) and the loss unit of the aggregates (G21)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpdl.config import load_config, validate_config
from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import write_json
from dpdl.readings import DEFAULT, reading_config, study_readings
from dpdl.runs import write_run
from dpdl.studies.dvp_pvp import aggregate, cli, grid, run, tune

ROOT = Path(__file__).resolve().parents[2]
AGENTS = 3
PER_ALGORITHM = {"eta": grid.ETA_PER_ALGORITHM, "eta_grid": [0.01, 0.1]}


def section(**changes) -> dict:
    """A small valid dvp_pvp section (schema defaults for the rest)."""
    base = {
        "agents": AGENTS,
        "alphas": [0.1, 0.5, 1.0],
        "convergence_alphas": [0.1, 1.0],
        "seeds": 1,
        "iterations": 4,
        "tradeoff_iterations": [2, 4],
        "mer_iteration": 4,
        "c_r": {"nonprivate": 20, "dvp": 20, "pvp": 5},
        "eta": 0.1,
        "eta_grid": [0.01, 0.1],
        "rho_selection": {"alpha": 0.3, "exponents": [-10, -2.5], "seeds": 2},
    }
    return {"dvp_pvp": base | changes}


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The config schema is found from the project root, as the workflow runs."""
    monkeypatch.chdir(ROOT)


def validated(study: dict) -> dict:
    """``config/config.yaml`` with ``study`` as its dvp_pvp section, validated (defaults filled in)."""
    raw = yaml.safe_load((ROOT / "config/config.yaml").read_text(encoding="utf-8"))
    return validate_config(raw | study)


def values(**changes) -> dict:
    return grid.settings(validated(section(**changes)))


@pytest.fixture(scope="module")
def dataset() -> tuple[dict, dict]:
    rng = np.random.default_rng(1)
    x = np.abs(rng.standard_normal((60, 4)))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    y = np.where(x @ np.array([1.0, -1.0, 0.5, -0.5]) + 0.1 * rng.standard_normal(60) > 0, 1, -1).astype(
        np.int8
    )
    arrays = {"X": x, "y": y, "from_test": np.arange(60) >= 40, "feature_names": np.array(list("abcd"))}
    card = {"options": {"agents": AGENTS, "partition_seed": 0, "row_norm": "project"}, "npz_sha256": "0" * 64}
    return arrays, card


# ------------------------------------------------------------------------------------- readings


def test_readings_start_with_the_default_and_each_gives_a_valid_config() -> None:
    readings = study_readings("dvp_pvp")
    assert readings[0].name == DEFAULT and 3 <= len(readings) <= 6  # 2-5 non-default readings
    post_hoc = [
        "default",
        "eta_1",
        "eta_per_algorithm",
        "released",
    ]  # after the band-rule run (docs/post_hoc.md)
    assert [r.name for r in readings if r.post_hoc] == post_hoc
    for path in ("config/config.yaml", "config/ci.yaml", "config/paper.yaml"):
        config = load_config(ROOT / path)
        for reading in readings[1:]:
            assert set(reading.switches) <= set(grid.SETTINGS_KEYS), reading.name
            built = validate_config(reading_config(config, "dvp_pvp", reading.name))
            assert built["dvp_pvp"] != config["dvp_pvp"], f"{path}: {reading.name} changes nothing"
            grid.settings(built)  # the cross-key checks pass too


def test_the_defaults_are_the_readings_of_the_text() -> None:
    defaults = values()
    assert defaults["loss_unit"] == "ln"  # C(26) with |L'| <= 1, L'' <= c1 = 1/4: the natural-log loss
    assert validated({"dvp_pvp": {}})["dvp_pvp"]["eta"] == grid.ETA_TUNED  # G14: tuned on the non-private run
    with pytest.raises(ConfigError, match="dvp_pvp.loss_unit"):
        validated(section(loss_unit="log2"))
    with pytest.raises(ConfigError, match="dvp_pvp.eta"):
        validated(section(eta="per_node"))


# ---------------------------------------------------------------------- eta tuned per algorithm


def test_eta_per_algorithm_runs_every_algorithm_over_the_grid_and_its_seeds() -> None:
    chosen = values(**PER_ALGORITHM)
    runs = grid.eta_runs(chosen)
    assert len(runs) == 3 * 2 * 2  # algorithms x etas x rho-selection seeds
    assert grid.own_eta_run_path("dvp", 0.1, 1) in runs
    assert runs == [p for a in grid.ALGORITHMS for p in grid.own_eta_runs(chosen, a)]
    assert grid.own_eta_job_outputs(chosen)[:2] == [
        "results/dvp_pvp/runs/adult/eta_selection_own/{algorithm}/eta0.01/seed0.npz",
        "results/dvp_pvp/runs/adult/eta_selection_own/{algorithm}/eta0.01/seed1.npz",
    ]
    assert grid.job_arguments(chosen, "eta_own") == "--seeds 0 1 --etas 0.01 0.1"
    assert grid.eta_alpha_param(chosen, argparse.Namespace(algorithm="dvp")) == "0.3"
    assert grid.eta_alpha_param(chosen, argparse.Namespace(algorithm="nonprivate")) == "inf"
    assert set(grid.runs({"dvp_pvp": chosen}, {grid.DATASET})) >= set(runs)


def test_each_algorithms_runs_read_its_own_eta() -> None:
    chosen = values(**PER_ALGORITHM)
    for algorithm in grid.ALGORITHMS:
        wildcards = argparse.Namespace(algorithm=algorithm)
        assert grid.eta_file_input(chosen, wildcards) == [f"results/dvp_pvp/eta/{algorithm}.json"]
        assert grid.eta_option(chosen, wildcards) == f"--eta-file results/dvp_pvp/eta/{algorithm}.json"
    with pytest.raises(ConfigError, match="depends on the algorithm"):
        grid.eta_inputs(chosen)
    tuned = values(eta="tuned")  # today's mode: one eta.json for every algorithm, unchanged
    assert grid.eta_file_input(tuned, argparse.Namespace(algorithm="pvp")) == ["results/dvp_pvp/eta.json"]
    assert grid.eta_option(values(), argparse.Namespace(algorithm="pvp")) == ""
    paths = grid.targets({"dvp_pvp": chosen}, {grid.DATASET})
    assert {f"results/tables/dvp_pvp/eta_selection_{a}.md" for a in grid.ALGORITHMS} <= set(paths)
    assert "results/tables/dvp_pvp/eta_selection.md" not in paths
    assert grid.switches(chosen)["eta"] == grid.ETA_PER_ALGORITHM


def test_run_etas_need_the_algorithms_file_when_tuned_per_algorithm(tmp_path: Path) -> None:
    settings = grid.run_settings({"dvp_pvp": values(**PER_ALGORITHM)})
    with pytest.raises(ConfigError, match="eta/<algorithm>.json"):
        tune.run_etas(settings, None, None)
    write_json(tmp_path / "dvp.json", {"eta": 1.0})
    assert tune.run_etas(settings, None, str(tmp_path / "dvp.json")) == [
        (1.0, f"tuned ({tmp_path / 'dvp.json'})")
    ]
    assert tune.run_etas(settings, [0.01, 0.1], None) == [
        (0.01, "eta selection grid"),
        (0.1, "eta selection grid"),
    ]


def own_runs(dataset, folder: Path, algorithm: str, etas: list[float], seeds: int) -> list[str]:
    arrays, card = dataset
    settings = grid.run_settings({"dvp_pvp": values(**PER_ALGORITHM)})
    context = run.run_context(arrays, card, settings)
    alpha = None if algorithm == "nonprivate" else 0.3
    paths = []
    for eta in etas:
        for seed in range(seeds):
            path = folder / grid.own_eta_run_path(algorithm, eta, seed)
            result = run.execute_run(
                context,
                algorithm=algorithm,
                alpha=alpha,
                seed=seed,
                eta=eta,
                eta_source="eta selection grid",
                purpose="eta_selection",
            )
            write_run(path, result)
            paths.append(str(path))
    return paths


def test_select_eta_by_loss_keeps_the_smallest_mean_final_loss(dataset, tmp_path: Path) -> None:
    paths = own_runs(dataset, tmp_path, "dvp", [1.0, 0.01, 0.1], 2)
    eta, table = tune.select_eta_by_loss(paths)
    assert table["eta"].tolist() == [0.01, 0.1, 1.0] and (table["seeds"] == 2).all()
    assert table["selected"].sum() == 1 and eta == table.loc[table["loss_final"].idxmin(), "eta"]
    by_hand = {}
    for path in paths:  # the criterion: the loss of the final output t = T + 1, mean over seeds
        from dpdl.runs import read_run

        found = read_run(path)
        final = found.trace.set_index("iteration").loc[found.provenance["params"]["iterations"] + 1, "loss"]
        by_hand.setdefault(found.provenance["params"]["eta"], []).append(final)
    np.testing.assert_allclose(table["loss_final"], [np.mean(by_hand[e]) for e in table["eta"]])
    record = tune.selection_record(eta, table, "final_loss")
    assert record["algorithm"] == "dvp" and record["criterion"] == tune.LOSS_CRITERION
    assert record["grid"] == [0.01, 0.1, 1.0] and record["at_grid_edge"] == (eta != 0.1)
    assert "dvp's own final training loss" in tune.selection_title(record)
    assert "algorithm" not in tune.selection_record(eta, table)  # today's record is unchanged
    mixed = paths[:1] + own_runs(dataset, tmp_path, "pvp", [0.1], 1)
    with pytest.raises(ArtifactError, match="mix algorithms"):
        tune.select_eta_by_loss(mixed)
    with pytest.raises(ArtifactError, match="no eta-selection runs"):
        tune.select_eta_by_loss([])


def test_ties_go_to_the_smaller_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    class Found:
        def __init__(self, eta: float) -> None:
            self.provenance = {
                "algorithm": "dvp",
                "epsilon": 0.3,
                "seed": 0,
                "params": {"eta": eta, "iterations": 1},
            }
            self.trace = pd.DataFrame(
                {"iteration": [0, 1, 2], "loss": [1.0, 0.5, 0.25], "mer": [0.5, 0.4, 0.3]}
            )

    monkeypatch.setattr("dpdl.runs.read_run", lambda path, study=None: Found(float(path)))
    eta, table = tune.select_eta_by_loss(["1", "0.1", "10"])
    assert eta == 0.1 and table["selected"].tolist() == [True, False, False]


def test_cli_select_eta_takes_the_criterion(dataset, tmp_path: Path) -> None:
    paths = own_runs(dataset, tmp_path, "nonprivate", [0.01, 0.1], 1)
    parser = argparse.ArgumentParser()
    cli.add_commands(parser.add_subparsers(dest="study"))
    out = tmp_path / "eta" / "nonprivate.json"
    table = [str(tmp_path / "t.csv"), str(tmp_path / "t.md")]
    args = parser.parse_args(
        [
            "dvp_pvp",
            "select-eta",
            "--criterion",
            "final_loss",
            "--runs",
            *paths,
            "--out",
            str(out),
            "--table",
            *table,
        ]
    )
    assert args.command(args) == 0
    from dpdl.io import read_json

    record = read_json(out)
    assert record["algorithm"] == "nonprivate" and record["eta"] in (0.01, 0.1)
    assert "own final training loss" in Path(table[1]).read_text()
    default = parser.parse_args(["dvp_pvp", "select-eta", "--runs", "a", "--out", "b", "--table", "c", "d"])
    assert default.criterion == "objective_gap"


# -------------------------------------------------------------------------------- the loss unit


def test_log10_divides_only_the_loss_columns() -> None:
    frame = pd.DataFrame(
        {"loss": [math.log(10.0)], "loss_node0": [2 * math.log(10.0)], "loss_broadcast": [0.0]}
        | {"loss_average": [math.log(100.0)], "mer": [0.25], "objective_gap": [0.5], "loss_mean_x": [1.0]}
    )
    assert aggregate.in_loss_unit(frame, "ln") is frame
    shown = aggregate.in_loss_unit(frame, "log10")
    assert shown[["loss", "loss_node0", "loss_average"]].iloc[0].tolist() == pytest.approx([1.0, 2.0, 2.0])
    assert shown[["mer", "objective_gap", "loss_mean_x"]].iloc[0].tolist() == [0.25, 0.5, 1.0]
    assert frame["loss"].iloc[0] == math.log(10.0)  # the caller's frame is not changed
    with pytest.raises(ConfigError, match="loss_unit"):
        aggregate.in_loss_unit(frame, "bits")


def test_log10_scales_the_trade_off_fit_but_not_its_decay(dataset, tmp_path: Path) -> None:
    arrays, card = dataset
    chosen = values(alphas=[0.05, 0.1, 0.3, 0.5, 1.0])
    context = run.run_context(arrays, card, grid.run_settings({"dvp_pvp": chosen}))
    paths = []
    for alpha in chosen["alphas"]:
        path = tmp_path / grid.run_path("pvp", alpha, 0)
        write_run(
            path, run.execute_run(context, algorithm="pvp", alpha=alpha, seed=0, eta=0.1, eta_source="config")
        )
        paths.append(str(path))
    frame, provenances = aggregate.load_runs(paths)
    ln = aggregate.figure_seeds("tradeoff_pvp", frame, chosen)
    log10 = aggregate.figure_seeds("tradeoff_pvp", frame, chosen | {"loss_unit": "log10"})
    np.testing.assert_allclose(log10["value"], ln["value"] / math.log(10.0))
    fits = {
        unit: aggregate.figure_aggregate("tradeoff_pvp", frame, provenances, chosen | {"loss_unit": unit})
        for unit in ("ln", "log10")
    }
    ours = {unit: table[table["series"] == "fit"].iloc[0] for unit, table in fits.items()}
    assert ours["ln"]["fit_ok"] and ours["log10"]["fit_ok"]
    assert ours["log10"]["a"] == pytest.approx(ours["ln"]["a"] / math.log(10.0), rel=1e-3)
    assert ours["log10"]["b"] == pytest.approx(ours["ln"]["b"], rel=1e-3)  # the decay rate c5 has no unit
    mer = aggregate.figure_seeds("mer", frame, chosen | {"loss_unit": "log10"})
    pd.testing.assert_frame_equal(mer, aggregate.figure_seeds("mer", frame, chosen))
    assert grid.switches(chosen)["loss_unit"] == "ln"
    assert "loss_unit" not in grid.switches(grid.run_settings({"dvp_pvp": chosen}))  # runs never see it
    assert "loss_unit" not in grid.RUN_KEYS
