"""The dzoa study package: grid, trials, step constants from (27), aggregation, commands (claims: test_dzoa_claims)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl import schemas
from dpdl.errors import ConfigError
from dpdl.studies.common import parse_settings
from dpdl.studies.dzoa import aggregate, cli, grid, readings, tune

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def values() -> dict:
    """The schema's defaults: the paper's setting with the note's recommended resolutions."""
    return schemas.defaults("dzoa.schema.yaml")


def config_with(values: dict, trials: int) -> dict:
    return {"dzoa": values, "data": {"lasso": {"trials": trials}}}


def parse(text: str) -> dict:
    """``--settings`` as every dzoa command reads it."""
    return parse_settings(text, grid.SETTINGS_KEYS, grid.STUDY, grid.SETTINGS_MADE_BY)


def test_schema_defaults_are_exactly_the_settings_keys(values):
    assert sorted(values) == sorted(grid.SETTINGS_KEYS)
    assert parse(json.dumps(values)) == values
    config = {"dzoa": {**values, "ignored": 1}}
    assert json.loads(grid.settings_json(config)) == values


def test_parse_settings_names_missing_and_unknown_keys(values):
    del values["rho"]
    values["typo"] = 1
    with pytest.raises(ConfigError, match=r"missing \['rho'\], unknown \['typo'\]"):
        parse(json.dumps(values))
    with pytest.raises(ConfigError, match="not valid JSON"):
        parse("{")


def test_paper_grid_has_38_points_and_fig2_is_inside_fig3b(values):
    points = grid.grid(values)
    assert len(points) == 38  # 18 of Fig. 3(b) (Fig. 2's 4 among them) + 20 of Fig. 3(a)
    labels = {p.label for p in points}
    assert {p.label for p in grid.figure_points(values, "fig2")} <= {
        p.label for p in grid.figure_points(values, "fig3b")
    }
    assert (
        "eps0.15-delta1e-06" in labels
        and "epsbar13.5-delta0.001" in labels
        and "eps0.95-delta3.1623e-06" in labels
    )


def test_labels_that_collide_are_refused(values):
    values["delta_sweep"] = [1e-3, 1.0000001e-3]
    with pytest.raises(ConfigError, match="share the label"):
        grid.grid(values)


def test_tuning_and_evaluation_trials_are_disjoint(values):
    config = config_with(values, 110)
    assert grid.tuning_trials(config) == list(range(10))
    assert grid.evaluation_trials(config) == list(range(10, 110))
    with pytest.raises(
        ConfigError, match=r"dzoa.tuning_trials \(10\) must be smaller than data.lasso.trials \(10\)"
    ):
        grid.evaluation_trials(config_with(values, 10))
    assert (
        grid.evaluation_trials({**config_with(values, 10), "studies": ["wddp"]}) == []
    )  # study off: no error


def test_run_paths_cover_every_grid_point_and_trial(values):
    config = config_with(values, 12)
    assert len(grid.run_paths(values, "dzoa", grid.evaluation_trials(config))) == 38 * 2
    assert len(grid.runs(config, {"dzoa/lasso"})) == 2 * 38 * 2
    assert grid.runs(config, set()) == []
    fig2 = grid.figure_run_paths(values, [10, 11], "fig2")
    assert len(fig2) == 2 * 4 * 2 and set(fig2) < set(grid.runs(config, {"dzoa/lasso"}))
    assert grid.figure_run_paths(values, [10, 11], "fig1") == []
    assert (
        grid.run_path("dpadmm", "eps0.15-delta0.001", 7)
        == "results/dzoa/runs/dpadmm/eps0.15-delta0.001/trial007.npz"
    )
    labels = grid.point_labels(config)  # the rule files' run folders
    assert len(labels) == len(set(labels)) == 38 and "eps0.15-delta0.001" in labels


@pytest.mark.parametrize("mode", ["per_agent", "common_max"])
def test_step_constants_invert_27_per_agent(values, mode):
    from dpdl.privacy.dzoa import dzoa_epsilon_per_iteration

    values["step_scale"] = mode
    degree = np.array([3, 2, 3, 2, 2])
    beta_c = np.random.default_rng(0).normal(scale=3.0, size=(2, 10))
    scales = tune.step_scales(values, 0.15, 1e-3, degree, 20, 10, beta_c)
    eps = np.array(
        [
            [
                dzoa_epsilon_per_iteration(
                    scales[b, k],
                    1e-3,
                    n_neighbours=int(degree[k]),
                    n_samples=20,
                    n_params=10,
                    beta_c_sq_norm=float(beta_c[b] @ beta_c[b]),
                    rho=4.0,
                )
                for k in range(5)
            ]
            for b in range(2)
        ]
    )
    if mode == "per_agent":
        assert np.allclose(eps, 0.15, rtol=1e-12)  # every agent meets the target (G6)
    else:
        assert np.all(eps <= 0.15 * (1 + 1e-12)) and np.isclose(eps.max(axis=1), 0.15).all()


def test_topology_aggregate_marks_the_graph_as_assumed(values):
    table = aggregate.aggregate(values, "fig1", [], n_agents=5)
    assert table[["node_a", "node_b"]].values.tolist() == [[1, 2], [1, 3], [1, 5], [2, 3], [3, 4], [4, 5]]
    assert table["assumed"].all() and table.loc[0, "degree_a"] == 3


def test_bands_count_divergences_and_keep_privacy_columns():
    frame = pd.DataFrame(
        {
            "algorithm": ["dzoa"] * 4,
            "epsilon": [0.15] * 4,
            "delta": [1e-3] * 4,
            "measure": ["final"] * 4,
            "value": [1e-5, 2e-5, np.inf, 3e-5],
            "epsilon_total_29": [2.04] * 4,
            "eps_composed_rdp": [1.7] * 4,
            "eps_composed_pld": [1.5] * 4,
        }
    )
    table = aggregate.bands(frame, ["algorithm", "epsilon", "delta", "measure"])
    row = table.iloc[0]
    assert row["n"] == 3 and row["n_diverged"] == 1 and row["mean"] == pytest.approx(2e-5)
    assert row["eps_composed_pld"] == 1.5
    assert list(table.columns) == [
        *["algorithm", "epsilon", "delta", "measure", "mean", "lo", "hi", "n", "n_diverged"],
        *aggregate.PRIVACY_COLUMNS,
    ]


def test_bands_keep_a_group_whose_runs_all_diverged_and_a_missing_key():
    frame = pd.DataFrame(
        {
            "algorithm": ["dzoa"] * 4,
            "epsilon_total_given": [np.nan, np.nan, 2.0, 2.0],
            "measure": ["final"] * 4,
            "value": [1e-5, 3e-5, np.nan, np.inf],
            "epsilon_total_29": [2.04] * 4,
            "eps_composed_rdp": [1.7] * 4,
            "eps_composed_pld": [1.5, 1.5, 1.6, 1.6],
        }
    )
    table = aggregate.bands(frame, ["algorithm", "epsilon_total_given", "measure"])
    assert len(table) == 2 and np.isnan(table.loc[0, "epsilon_total_given"])  # NaN key: a group, sorted first
    assert table.loc[0, ["n", "n_diverged"]].tolist() == [2, 0] and table.loc[0, "mean"] == pytest.approx(
        2e-5
    )
    assert table.loc[1, ["n", "n_diverged"]].tolist() == [0, 2] and np.isnan(table.loc[1, "mean"])
    assert table["eps_composed_pld"].tolist() == [1.5, 1.6]


def fake_runs(monkeypatch, figure: str, values: dict, trials: list[int]) -> list[str]:
    """Run paths of ``figure``; ``read_run`` fabricates each: error 5 -> trial x 1e-3 (DP-ADMM) or x 1e-5."""
    from dpdl.runs import RunResult

    points = {p.label: p for p in grid.figure_points(values, figure)}
    n = values["outer_iterations"] + 1

    def read_run(path, study=None):
        algorithm, label, name = Path(path).parts[-3:]
        point, trial = points[label], int(name[5:8])
        floor = (1e-3 if algorithm == "dpadmm" else 1e-5) * trial
        error = floor + (5.0 - floor) * np.exp(-np.arange(n, dtype=float))
        if algorithm == "dzoa" and trial == trials[-1] and point.epsilon == values["epsilons"][0]:
            error[-1] = np.inf  # one diverged run
        provenance = {
            "algorithm": algorithm,
            "epsilon": point.epsilon or 0.1,
            "delta": point.delta,
            "seed": trial,
        }
        provenance |= {"eps_composed_rdp": 1.0, "eps_composed_pld": 0.9}
        provenance["params"] = {"epsilon_total_given": point.epsilon_total, "epsilon_total_29": 2.0}
        return RunResult(pd.DataFrame({"iteration": np.arange(n), "error": error}), provenance)

    monkeypatch.setattr("dpdl.runs.read_run", read_run)
    return grid.figure_run_paths(values, trials, figure)


def test_aggregate_writes_bands_for_the_figure_and_per_seed_rows_for_the_claims(values, monkeypatch):
    values["outer_iterations"] = 25
    bands, seeds = aggregate.tables(values, "fig2", fake_runs(monkeypatch, "fig2", values, [3, 4, 5]))
    assert list(seeds.columns) == [*aggregate.FIGURE_KEYS["fig2"], "seed", "value"]
    assert sorted(seeds["iteration"].unique()) == [0, 10, 20, 25]  # every 10th and the last
    assert (
        len(seeds) == 2 * 4 * 4 * 3
        and seeds.groupby(["algorithm", "epsilon", "delta", "iteration"]).size().eq(3).all()
    )
    assert len(bands) == 2 * 4 * 26 and "seed" not in bands.columns
    final = seeds[(seeds["iteration"] == 25) & (seeds["algorithm"] == "dpadmm")]
    assert final.groupby("seed")["value"].first().to_dict() == pytest.approx(
        {3: 3e-3, 4: 4e-3, 5: 5e-3}, rel=1e-3
    )
    bands, seeds = aggregate.tables(values, "fig3b", fake_runs(monkeypatch, "fig3b", values, [3, 4, 5]))
    assert list(seeds.columns) == [*aggregate.FIGURE_KEYS["fig3b"], "seed", "value"]
    assert len(seeds) == 2 * 18 * 2 * 3 and np.isinf(seeds["value"]).sum() == 2 * 9  # kept: final, last10
    assert bands["n_diverged"].sum() == 2 * 9 and set(bands["n"]) == {2, 3}
    assert aggregate.tables(values, "fig1", [], n_agents=5)[1] is None


def test_aggregate_command_writes_both_tables_and_checks_their_number(values, monkeypatch, tmp_path):
    values["outer_iterations"] = 5
    fake_runs(monkeypatch, "fig3a", values, [1, 2])
    out = [str(tmp_path / "fig3a.csv"), str(tmp_path / "fig3a_seeds.csv")]
    args = parse_command(
        "aggregate", "fig3a", "--settings", json.dumps(values), "--trials", "1", "2", "--out", *out
    )
    assert args.command(args) == 0
    seeds = pd.read_csv(out[1])
    assert list(seeds.columns) == [*aggregate.FIGURE_KEYS["fig3a"], "seed", "value"] and set(
        seeds["seed"]
    ) == {1, 2}
    assert "mean" in pd.read_csv(out[0]).columns
    args = parse_command(
        "aggregate", "fig3a", "--settings", json.dumps(values), "--trials", "1", "--out", out[0]
    )
    with pytest.raises(ConfigError, match="give --out 2 paths"):
        args.command(args)


def test_targets_include_the_per_seed_tables(values):
    paths = grid.targets(config_with(values, 12), {"dzoa/lasso"})
    assert {grid.seeds_path(f) for f in grid.SEED_FIGURES} <= set(paths)
    assert {"results/dzoa/aggregates/fig2.csv", "results/dzoa/aggregates/fig2_seeds.csv"} <= set(paths)
    assert "results/dzoa/aggregates/fig1_seeds.csv" not in paths


def fake_dzoa_runs(monkeypatch, values: dict, trials: list[int], *, realised: float = 1e-3) -> list[str]:
    """D-ZOA run paths of the grid; ``read_run`` fabricates each with a constant perturbation per coordinate."""
    from dpdl.runs import RunResult
    from dpdl.studies.dzoa.run import perturbation_column

    points = {p.label: p for p in grid.grid(values)}
    n = values["outer_iterations"] + 1
    degrees, sigma, sensitivity = (
        [3, 2, 3, 2, 2],
        [0.02, 0.03, 0.02, 0.03, 0.03],
        [1 / 240, 1 / 160] * 2 + [1 / 160],
    )

    def read_run(path, study=None):
        _, label, name = Path(path).parts[-3:]
        point, trial = points[label], int(name[5:8])
        trace = pd.DataFrame({"iteration": np.arange(n), "error": np.full(n, 1e-5)})
        for k in range(5):
            trace[perturbation_column(k)] = np.r_[np.nan, np.full(n - 1, realised * (k + 1))]
        provenance = {
            "algorithm": "dzoa",
            "epsilon": point.epsilon or 0.5,
            "delta": point.delta,
            "seed": trial,
        }
        provenance |= {"eps_per_iteration": point.epsilon or 0.5, "eps_composed_pld": 7.0}
        provenance["params"] = {"grid_point": label, "epsilon_total_given": point.epsilon_total}
        provenance["params"] |= {"outer_iterations": n - 1, "n_params": 10, "degrees": degrees}
        provenance["params"] |= {"modelled_noise_std": sigma, "sensitivity": sensitivity, "edges": []}
        return RunResult(trace, provenance)

    monkeypatch.setattr("dpdl.runs.read_run", read_run)
    return grid.evaluation_run_paths(values, trials)


def test_perturbation_table_sets_the_realised_perturbation_beside_sigma_k(values, monkeypatch):
    from dpdl.privacy.exact import gaussian_exact_epsilon

    values["outer_iterations"] = 20
    table = aggregate.perturbation_table(fake_dzoa_runs(monkeypatch, values, [3, 4]))
    assert list(table.columns) == aggregate.PERTURBATION_COLUMNS and len(table) == 38 * 2 * 5
    row = table[(table["label"] == "eps0.15-delta0.001") & (table["seed"] == 4) & (table["agent"] == 2)].iloc[
        0
    ]
    assert row["perturbation_rms"] == pytest.approx(2e-3) and row["perturbation_rms_last10"] == pytest.approx(
        2e-3
    )
    assert row["ratio"] == pytest.approx(2e-3 / 0.03) and row["degree"] == 2 and row["n_params"] == 10
    assert row["eps_realised_iteration"] == pytest.approx(gaussian_exact_epsilon(2e-3 * 160, 1, 1e-3))
    assert row["eps_realised_total"] == pytest.approx(gaussian_exact_epsilon(2e-3 * 160, 20, 1e-3))
    assert row["eps_realised_total"] > row["eps_composed_pld"]  # less noise than assumed: a larger epsilon


def test_perturbation_table_keeps_a_diverged_run_and_refuses_runs_without_the_trace(values, monkeypatch):
    from dpdl.errors import ArtifactError
    from dpdl.runs import RunResult

    values["outer_iterations"] = 5
    paths = fake_dzoa_runs(monkeypatch, values, [1], realised=np.inf)
    table = aggregate.perturbation_table(paths[:1])
    assert np.isinf(table["perturbation_rms"]).all() and table["eps_realised_total"].isna().all()
    monkeypatch.setattr(
        "dpdl.runs.read_run", lambda path, study=None: RunResult(pd.DataFrame({"iteration": [0]}), {})
    )
    with pytest.raises((ArtifactError, KeyError)):
        aggregate.perturbation_table(paths[:1])


def test_perturbation_command_writes_the_table(values, monkeypatch, tmp_path):
    values["outer_iterations"] = 5
    fake_dzoa_runs(monkeypatch, values, [1, 2])
    out = tmp_path / "perturbation.csv"
    args = parse_command(
        "perturbation", "--settings", json.dumps(values), "--trials", "1", "2", "--out", str(out)
    )
    assert args.command is cli._cmd_perturbation and args.command(args) == 0
    table = pd.read_csv(out)
    assert set(table["seed"]) == {1, 2} and (table["ratio"] > 0).all()
    assert grid.aggregate_path(grid.PERTURBATION) in grid.targets(config_with(values, 12), {"dzoa/lasso"})


def test_every_reading_sets_valid_values_of_the_open_settings():
    from dpdl.config import load_config, validate_config
    from dpdl.readings import DEFAULT, reading_config

    config = load_config(ROOT / "config/config.yaml")
    names = [r.name for r in readings.READINGS]
    assert names[0] == DEFAULT and not readings.READINGS[0].switches and 2 <= len(names) - 1 <= 4
    opened = set()
    for reading in readings.READINGS[1:]:
        assert set(reading.switches) <= {"loss_scale", "lipschitz", "topology"}, reading.name
        built = validate_config(reading_config(config, "dzoa", reading.name))  # the schema accepts the values
        changed = {key for key in config["dzoa"] if built["dzoa"][key] != config["dzoa"][key]}
        assert changed == set(reading.switches) and not reading.post_hoc, reading.name
        opened |= changed
    assert opened == {"loss_scale", "lipschitz", "topology"}  # a reading for each open setting


def parse_command(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_commands(parser.add_subparsers(dest="study"))
    return parser.parse_args(["dzoa", *argv])


def test_commands_take_the_options_the_rules_pass():
    data = ["--settings", "{}", "--data", "lasso.npz", "--card", "lasso.json"]
    args = parse_command("centralized", *data, "--out", "c.npz")
    assert args.command is cli._cmd_centralized and args.out == "c.npz"
    args = parse_command("calibrate", *data, "--centralized", "c.npz", "--out", "a.json", "a.npz", "a.csv")
    assert args.command is cli._cmd_calibrate and args.out == ["a.json", "a.npz", "a.csv"]
    args = parse_command(
        "tune", *data, "--centralized", "c", "--calibration", "a", "--trials", "0", "1", "--out", "t", "u"
    )
    assert args.command is cli._cmd_tune and args.trials == [0, 1]
    run = ("run", "--algorithm", "dzoa", "--trials", "3", *data, "--centralized", "c", "--calibration", "a")
    args = parse_command(*run, "--calibration-arrays", "a.npz")
    assert args.command is cli._cmd_run and args.calibration_arrays == "a.npz" and args.tuning is None
    args = parse_command(
        "aggregate", "fig2", "--settings", "{}", "--agents", "5", "--trials", "1", "2", "--out", "f", "s"
    )
    assert args.command is cli._cmd_aggregate and (args.agents, args.trials, args.out) == (
        5,
        [1, 2],
        ["f", "s"],
    )
    args = parse_command("figure", "fig3a", "--aggregate", "f.csv", "--out", "f.png", "f.pdf")
    assert args.command is cli._cmd_figure and not hasattr(args, "settings")
    args = parse_command(
        "claims", "--settings", "{}", "--trials", "3", "--aggregates", "fig2_seeds=f.csv", "--out", "c", "m"
    )
    assert args.command is cli._cmd_claims and args.aggregates == ["fig2_seeds=f.csv"]


def test_claims_command_refuses_an_aggregate_without_a_name(values):
    args = parse_command(
        "claims",
        "--settings",
        json.dumps(values),
        "--trials",
        "3",
        "--aggregates",
        "f.csv",
        "--out",
        "c",
        "m",
    )
    with pytest.raises(ConfigError, match="NAME=PATH"):
        args.command(args)


def test_each_setting_reaches_the_algorithm_keyword_it_names() -> None:
    # the run and the audit pass the same keywords: eta of (1) is the l1 weight, J of (30) the directions
    import inspect

    from dpdl.algorithms.dzoa import dzoa
    from dpdl.studies.dzoa.grid import dzoa_keywords

    values = {
        "rho": 2.0,
        "eta": 3.0,
        "lipschitz": 5.0,
        "smoothing": 7.0,
        "directions": 11,
        "inner_iterations": 13,
    }
    keywords = dzoa_keywords(values, 0.5)
    assert keywords == {
        "rho": 2.0,
        "l1_weight": 3.0,
        "loss_scale": 0.5,
        "lipschitz": 5.0,
        "smoothing": 7.0,
        "n_directions": 11,
        "n_inner": 13,
    }
    inspect.signature(dzoa).bind(*[None] * 6, **keywords, n_outer=1)  # every keyword is one dzoa takes
