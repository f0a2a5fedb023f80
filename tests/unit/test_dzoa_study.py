"""The dzoa study package: grid, trials, step constants from (27), aggregation, claims, commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpdl.claims import NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED, judge
from dpdl.errors import ConfigError
from dpdl.studies.common import parse_settings
from dpdl.studies.dzoa import CLAIMS, aggregate, cli, grid, tune

SCHEMA = Path(__file__).resolve().parents[2] / "workflow/schemas/dzoa.schema.yaml"


@pytest.fixture
def values() -> dict:
    """The schema's defaults: the paper's setting with the note's recommended resolutions."""
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    return {key: spec["default"] for key, spec in schema["properties"].items()}


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
    assert "eps0.15-delta1e-06" in labels and "epsbar13.5-delta0.001" in labels and "eps0.95-delta3.1623e-06" in labels


def test_labels_that_collide_are_refused(values):
    values["delta_sweep"] = [1e-3, 1.0000001e-3]
    with pytest.raises(ConfigError, match="share the label"):
        grid.grid(values)


def test_tuning_and_evaluation_trials_are_disjoint(values):
    config = config_with(values, 110)
    assert grid.tuning_trials(config) == list(range(10))
    assert grid.evaluation_trials(config) == list(range(10, 110))
    with pytest.raises(ConfigError, match=r"dzoa.tuning_trials \(10\) must be smaller than data.lasso.trials \(10\)"):
        grid.evaluation_trials(config_with(values, 10))
    assert grid.evaluation_trials({**config_with(values, 10), "studies": ["wddp"]}) == []  # study off: no error


def test_run_paths_cover_every_grid_point_and_trial(values):
    config = config_with(values, 12)
    assert len(grid.run_paths(values, "dzoa", grid.evaluation_trials(config))) == 38 * 2
    assert len(grid.runs(config, {"dzoa/lasso"})) == 2 * 38 * 2
    assert grid.runs(config, set()) == []
    fig2 = grid.figure_run_paths(values, [10, 11], "fig2")
    assert len(fig2) == 2 * 4 * 2 and set(fig2) < set(grid.runs(config, {"dzoa/lasso"}))
    assert grid.figure_run_paths(values, [10, 11], "fig1") == []
    assert (
        grid.run_path("dpadmm", "eps0.15-delta0.001", 7) == "results/dzoa/runs/dpadmm/eps0.15-delta0.001/trial007.npz"
    )
    assert grid.run_patterns(config, "dzoa")[0].endswith("/trial{trial}.npz")


@pytest.mark.parametrize("mode", ["per_agent", "common_max"])
def test_step_constants_invert_27_per_agent(values, mode):
    from dpdl.privacy import dzoa_epsilon_per_iteration

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
    assert table.loc[0, ["n", "n_diverged"]].tolist() == [2, 0] and table.loc[0, "mean"] == pytest.approx(2e-5)
    assert table.loc[1, ["n", "n_diverged"]].tolist() == [0, 2] and np.isnan(table.loc[1, "mean"])
    assert table["eps_composed_pld"].tolist() == [1.5, 1.6]


def tradeoff_table(dzoa_errors, dpadmm_errors, x="delta") -> pd.DataFrame:
    rows = []
    for algorithm, errors in (("dzoa", dzoa_errors), ("dpadmm", dpadmm_errors)):
        for i, error in enumerate(errors):
            rows.append(
                {"algorithm": algorithm, "epsilon": 0.15, x: 10.0 ** (i - 6), "measure": "final", "mean": error}
            )
    return pd.DataFrame(rows)


def claim(claim_id: str):
    return next(c for c in CLAIMS if c.id == claim_id)


PAPER_SCALE = {
    "trials": 100,
    "outer_iterations": 200,
    "inner_iterations": 100,
    "directions": 30,
    "epsilon_grid": 10,
    "delta_grid": 9,
}


def test_trend_claim_needs_a_significant_decrease():
    decreasing = tradeoff_table([5e-6, 4e-6, 3.5e-6, 3e-6, 2.9e-6], [3e-3, 2e-3, 1.5e-3, 1e-3, 9e-4])
    verdict, evidence = judge(claim("dzoa.fig3b.error_vs_delta"), decreasing, PAPER_SCALE)
    assert verdict == REPRODUCED and "tau=-1.00" in evidence.detail
    flat = tradeoff_table([5e-6, 4e-6, 6e-6, 3e-6, 5.5e-6], [3e-3, 2e-3, 1.5e-3, 1e-3, 9e-4])
    assert judge(claim("dzoa.fig3b.error_vs_delta"), flat, PAPER_SCALE)[0] == NOT_REPRODUCED
    assert judge(claim("dzoa.fig3b.error_vs_delta"), decreasing, {**PAPER_SCALE, "trials": 3})[0] == NOT_AT_SCALE


def test_dzoa_below_dpadmm_claim_checks_every_point():
    table = tradeoff_table([5e-6, 4e-6, 3e-6], [3e-3, 2e-3, 2e-6])
    verdict, evidence = judge(claim("dzoa.fig3b.dzoa_below_dpadmm"), table, PAPER_SCALE)
    assert verdict == NOT_REPRODUCED and "(2/3 points)" in evidence.value


def test_total_29_claim_compares_with_the_pld_accountant():
    table = pd.DataFrame(
        {
            "algorithm": ["dzoa", "dzoa", "dpadmm"],
            "epsilon": [0.15, 0.95, 0.95],
            "delta": [1e-3] * 3,
            "epsilon_total_29": [2.04, 12.9, 12.9],
            "eps_composed_rdp": [1.72, 17.6, 17.6],
            "eps_composed_pld": [1.51, 16.0, 16.0],
        }
    )
    verdict, evidence = judge(claim("dzoa.privacy.total_29"), table, PAPER_SCALE)
    assert verdict == NOT_REPRODUCED and "(29) exceeded at 1 of 2 rows" in evidence.spread
    assert judge(claim("dzoa.privacy.total_29"), table.iloc[[0]], PAPER_SCALE)[0] == REPRODUCED


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
    args = parse_command("aggregate", "fig2", "--settings", "{}", "--agents", "5", "--trials", "1", "2", "--out", "f")
    assert args.command is cli._cmd_aggregate and (args.agents, args.trials) == (5, [1, 2])
    args = parse_command("figure", "fig3a", "--aggregate", "f.csv", "--out", "f.png", "f.pdf")
    assert args.command is cli._cmd_figure and not hasattr(args, "settings")
    args = parse_command("claims", "--settings", "{}", "--trials", "3", "--aggregates", "fig2=f.csv", "--out", "c", "m")
    assert args.command is cli._cmd_claims and args.aggregates == ["fig2=f.csv"]


def test_claims_command_refuses_an_aggregate_without_a_name(values):
    args = parse_command(
        "claims", "--settings", json.dumps(values), "--trials", "3", "--aggregates", "f.csv", "--out", "c", "m"
    )
    with pytest.raises(ConfigError, match="NAME=PATH"):
        args.command(args)
