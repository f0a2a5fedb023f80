"""The wddp study package (dpdl.studies.wddp): calibration round trip, grid, batches, tuning, aggregates, claims."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from fixtures import write_adult, write_kdd

from dpdl import schemas
from dpdl.algorithms import wddp as algo
from dpdl.claims import scorecard
from dpdl.data import adult, kdd
from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import save_npz
from dpdl.privacy.accounting import composed_epsilon, to_dp_event
from dpdl.runs import read_run, validate_run, write_run
from dpdl.studies.common import format_number
from dpdl.studies.wddp import aggregate, claims, figures, grid, run, tables, tune
from dpdl.verdicts import NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED, UNAVAILABLE

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {
    "epsilons": [0.05, 1.0],
    "delta": 1e-3,
    "clients": [2, 4],
    "unevenness": [1, 3],
    "seeds": 2,
    "iterations": 30,
    "trace_points": 3,
    "step_sizes": [0.1, 1.0],
    "tuning": {
        "folds": 2,
        "seeds": 1,
        "epsilon": 0.1,
        "clients": 4,
        "protocol": "reference",
        "scope": "per_method",
    },
    "threshold_fraction": 0.2,
    "init_std": 0.01,
    "l2": 0.0,
    "aggregation": "per_round",
    "calibration": "closed_form",
    "eq3_constant": 16,
}


def steps(eta: float, settings: dict = SETTINGS) -> dict:
    """The tuning record of a fixed step size ``eta`` for every method and run epsilon."""
    return {m: {format_number(e): eta for e in grid.run_epsilons(settings)} for m in grid.PRIVATE_METHODS}


DENSE_ORDERS = np.concatenate([np.linspace(1.01, 10, 400), np.geomspace(10, 1e5, 4000)])


def synthetic(n: int = 96, n_test: int = 40, d: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n + n_test, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = (x @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n + n_test) > 0).astype(float)
    return {"X_train": x[:n], "y_train": y[:n], "X_test": x[n:], "y_test": y[n:]}


# ------------------------------------------------------------------ calibration round trip (A3)


@pytest.mark.parametrize("epsilon", [0.01, 0.05, 0.1, 0.25, 1.0], ids=lambda e: f"eps_{e}")
@pytest.mark.parametrize("method", grid.PRIVATE_METHODS)
def test_sigma_round_trips_through_the_accountant(method: str, epsilon: float) -> None:
    """sigma (closed form) -> RDP curve of the accountant -> moments-accountant tail bound = epsilon."""
    settings = {**SETTINGS, "iterations": 1000}
    sizes = [1200, 3000, 800, 5000]
    sigma, n_eff = run.noise_std(settings, method, epsilon, sizes)
    assert n_eff == (4 * 800 if method == "dist_avg" else 10_000)
    (event,) = run.privacy_events(settings, method, sigma, sizes)
    # The paper's accountant: rho = T Delta^2 / (2 sigma^2), eps = rho + 2 sqrt(rho ln(1/delta)) (wddp.md 2.3).
    rho = 1000 / (2 * event.noise_multiplier**2)
    assert rho + 2 * math.sqrt(rho * math.log(1e3)) == pytest.approx(epsilon, rel=1e-9)
    # The same through dp_accounting's RDP curve and Abadi et al.'s tail bound (Thm 2.2), on dense orders.
    accountant = rdp_privacy_accountant.RdpAccountant(DENSE_ORDERS).compose(to_dp_event([event]))
    tail = np.min(accountant.rdp + math.log(1e3) / (accountant.orders - 1))
    assert tail == pytest.approx(epsilon, rel=1e-3)
    # dpdl's composed epsilon (sharper conversions) never exceeds the target: the calibration is valid.
    assert composed_epsilon([event], 1e-3, "rdp") <= epsilon
    assert composed_epsilon([event], 1e-3, "pld") <= epsilon


def test_eq3_calibration_with_c16_is_more_conservative() -> None:
    closed, _ = run.noise_std(SETTINGS, "wddp", 0.1, [500, 500])
    eq3, _ = run.noise_std({**SETTINGS, "calibration": "eq3"}, "wddp", 0.1, [500, 500])
    assert eq3 == pytest.approx(math.sqrt(16 * 30 * math.log(1e3)) / (1000 * 0.1))
    assert eq3 > closed


@pytest.mark.parametrize("u", [1, 3, 9], ids=lambda u: f"u{u}")
def test_noise_ratio_of_two_groups_is_one_plus_u_over_two(u: int) -> None:
    sizes = [100] * 4 + [100 * u] * 4
    wddp_sigma, _ = run.noise_std(SETTINGS, "wddp", 0.1, sizes)
    baseline_sigma, _ = run.noise_std(SETTINGS, "dist_avg", 0.1, sizes)
    assert baseline_sigma / wddp_sigma == pytest.approx((1 + u) / 2)  # wddp.md 2.4


def test_one_shot_privacy_is_that_of_the_smallest_client() -> None:
    settings = {**SETTINGS, "aggregation": "one_shot"}
    sigma, _ = run.noise_std(settings, "wddp", 0.1, [10, 90])
    (event,) = run.privacy_events(settings, "wddp", sigma, [10, 90])
    assert event.noise_multiplier == pytest.approx(sigma / (2 / 10))
    (central,) = run.privacy_events(settings, "central", sigma, [10, 90])
    assert central.noise_multiplier == pytest.approx(sigma / (2 / 100))


# ---------------------------------------------------------------------------------- data (A8)


def test_prepared_fixture_rows_have_unit_norm_and_bounded_gradients(tmp_path: Path) -> None:
    features, labels = kdd.read_kdd(write_kdd(tmp_path / "kdd.gz", rows=60))
    kdd_arrays = kdd.prepare_wddp(
        features, labels, sample_size=50, train_size=40, rng=np.random.default_rng(0)
    )
    train, test = write_adult(tmp_path / "adult")
    adult_arrays = adult.prepare_wddp(adult.read_adult(train), adult.read_adult(test))
    for arrays in (kdd_arrays, adult_arrays):
        x, y = arrays["X_train"].astype(float), arrays["y_train"].astype(float)
        assert np.linalg.norm(x, axis=1).max() <= 1 + 1e-12
        theta = np.random.default_rng(0).standard_normal((x.shape[1], 20))
        residual = 1 / (1 + np.exp(-(x @ theta))) - y[:, None]
        assert (np.abs(residual) * np.linalg.norm(x, axis=1)[:, None]).max() <= 1.0  # ||grad l|| <= G = 1


def test_load_dataset_refuses_rows_above_norm_one(tmp_path: Path) -> None:
    data = synthetic()
    data["X_train"][3] *= 2
    save_npz(tmp_path / "bad.npz", data)
    with pytest.raises(ArtifactError, match="norm 2.0.* > 1, so G = 1 does not hold"):
        run.load_dataset(tmp_path / "bad.npz")


# ----------------------------------------------------------------------------- grids and paths


def test_targets_and_run_outputs_agree() -> None:
    config = {"wddp": SETTINGS}
    paths = grid.targets(config, {"wddp/kdd", "dvp_pvp/adult"})
    assert "figures/wddp/fig04.png" in paths and "figures/wddp/fig06.pdf" in paths
    assert "figures/wddp/fig01.png" not in paths  # m = 32 is not in the grid
    assert {"figures/wddp/fig02.png", "figures/wddp/fig16.png", "results/claims/wddp.csv"} <= set(paths)
    assert "results/tables/wddp/table1.md" in paths
    assert {"results/wddp/aggregates/fig04.csv", "results/wddp/aggregates/fig04_seeds.csv"} <= set(paths)
    assert grid.seeds_targets(SETTINGS) == [
        p.replace(".csv", "_seeds.csv") for p in grid.aggregate_targets(SETTINGS)
    ]
    assert grid.targets(config, {"dvp_pvp/adult"}) == []
    concrete = grid.batch_runs(SETTINGS, "kdd", "unevenness", 16, 0.05)
    assert grid.batch_cells(SETTINGS, "unevenness", "kdd") == [f"u{u}" for u in SETTINGS["unevenness"]]
    assert concrete[0] == "results/wddp/runs/kdd/unevenness_m16_eps0.05/wddp/u1/seed0.npz"
    assert len(concrete) == 3 * 2 * 2


def test_breast_cancer_and_credit_card_run_u_up_to_5_in_a_rule_of_their_own() -> None:
    """Section 5: "u is set from 1 to 9 on KDDCup99, Adult and Bank, while from 1 to 5 on the rest"."""
    paper = {**SETTINGS, "unevenness": list(range(1, 10))}
    assert grid.unevenness_values(paper, "bank") == list(range(1, 10))
    assert (
        grid.unevenness_values(paper, "breast_cancer")
        == grid.unevenness_values(paper, "credit_card")
        == [1, 2, 3, 4, 5]
    )
    assert grid.unevenness_rules(paper) == [
        ("", ("kdd", "adult", "bank"), [f"u{u}" for u in range(1, 10)]),
        ("_u5", ("breast_cancer", "credit_card"), [f"u{u}" for u in range(1, 6)]),
    ]
    assert grid.unevenness_rules(SETTINGS) == [("", grid.DATASETS, ["u1", "u3"])]  # every u <= 5: one rule
    above = {**SETTINGS, "unevenness": [7, 9]}
    assert grid.unevenness_rules(above) == [("", ("kdd", "adult", "bank"), ["u7", "u9"])]
    assert grid.batch_runs(above, "breast_cancer", "unevenness", 16, 0.05) == []  # no u: no batch
    with pytest.raises(ValueError, match="depend on its dataset"):
        grid.batch_cells(SETTINGS, "unevenness")
    runs = grid.batch_runs(paper, "breast_cancer", "unevenness", 8, 0.01)
    assert len(runs) == 3 * 5 * 2 and not any("/u6/" in p for p in runs)


def test_the_dataset_selection_chooses_jobs_and_is_no_run_setting() -> None:
    """wddp.datasets selects the prepared datasets (and so the panels); it is not in --settings, so selecting
    another dataset reruns nothing already built."""
    from dpdl.studies import prepared_names

    config = {"studies": ["wddp"], "wddp": {**SETTINGS, "datasets": ["breast_cancer", "kdd"]}}
    assert prepared_names(config) == ["wddp/kdd", "wddp/breast_cancer"]
    assert grid.selected_datasets(config) == ["kdd", "breast_cancer"]  # panel order, not the config's
    assert "datasets" not in json.loads(grid.settings_json(config))
    assert grid.settings_from_json(grid.settings_json(config)) == SETTINGS
    stack = grid.table_runs(config, "versus_epsilon")
    panel = grid.table_runs(config, "versus_epsilon_breast_cancer")
    assert panel and set(panel) < set(stack) and all("/runs/breast_cancer/" in p for p in panel)
    assert grid.table_runs(config, "versus_epsilon_bank") == []  # not selected: no runs to project
    assert {p.split("/")[3] for p in stack} == {"kdd", "breast_cancer"}


def test_figures_follow_the_captions() -> None:
    spec = grid.FIGURES
    assert (spec["fig01"].clients, spec["fig01"].metric) == (32, "accuracy")
    assert (spec["fig12"].clients, spec["fig12"].epsilon, spec["fig12"].metric) == (16, 0.05, "gap")
    assert (spec["fig15"].clients, spec["fig15"].epsilon) == (8, 0.01)
    assert len(spec) == 16 and sorted(s.number for s in spec.values()) == list(range(1, 17))
    assert grid.PRIVATE_METHODS == algo.METHODS


def test_cell_names_are_the_run_folders() -> None:
    assert (
        grid.cell_name("epsilon", 0.05, None) == "eps0.05" and grid.cell_name("epsilon", 1.0, None) == "eps1"
    )
    assert grid.cell_name("unevenness", 0.1, 3) == grid.cell_name("unevenness", None, 3) == "u3"
    assert grid.batch_runs(SETTINGS, "kdd", "epsilon", 2, None)[-1].endswith("/central/eps1/seed1.npz")


def test_record_points_include_zero_and_T() -> None:
    assert run.record_points(1000, 4) == [0, 250, 500, 750, 1000]
    assert run.record_points(3, 20) == [0, 1, 2, 3]


# ------------------------------------------------------------------------------ batched runs


@pytest.fixture(scope="module")
def batch_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One Experiment A batch (m = 4) and one Experiment B batch (m = 16) on synthetic data, written."""
    data = synthetic(n=160)
    optimum = tune.compute_optimum(data, 0.0)
    tuning = {"step_sizes": steps(1.0), "settings": {"folds": 2}}
    root = tmp_path_factory.mktemp("runs")
    written = {}
    for experiment, clients, epsilon in (("epsilon", 4, None), ("unevenness", 16, 0.05)):
        results = run.run_batch(
            SETTINGS,
            "kdd",
            experiment,
            clients,
            epsilon,
            data=data,
            dataset_sha256="0" * 64,
            tuning=tuning,
            optimum=optimum,
        )
        for path, result in results:
            write_run(root / path, result)
            written[path] = result
    tune.write_optimum(root / "kdd.npz", optimum, "0" * 64, 0.0)
    return {"root": root, "runs": written, "data": data, "optimum": optimum, "tuning": tuning}


def test_runs_satisfy_the_contract(batch_runs: dict) -> None:
    root = batch_runs["root"]
    assert len(batch_runs["runs"]) == 3 * 2 * 2 + 3 * 2 * 2
    for path in batch_runs["runs"]:
        assert validate_run(root / path) == []
    result = read_run(root / "results/wddp/runs/kdd/epsilon_m4/dist_avg/eps0.05/seed1.npz")
    prov = result.provenance
    assert prov["algorithm"] == "dist_avg" and prov["epsilon"] == 0.05 and prov["seed"] == 1
    assert prov["switches"] == {
        "aggregation": "per_round",
        "calibration": "closed_form",
        "tuning_protocol": "reference",
        "tuning_scope": "per_method",
    }
    assert prov["params"]["n"] == 160 and sum(prov["params"]["client_sizes"]) == 160
    assert prov["params"]["noise_ratio"] == pytest.approx(160 / (4 * prov["params"]["n_min"]))
    assert prov["eps_composed_rdp"] <= 0.05 and prov["eps_composed_pld"] <= prov["eps_composed_rdp"]
    assert list(result.trace.columns) == ["iteration", "train_loss", "gap", "test_accuracy", "theta_norm"]
    assert result.trace["iteration"].tolist() == [0, 10, 20, 30]
    assert (result.trace["gap"] >= -1e-9).all()
    timing = prov["timing"]  # each run of the batch is charged its share of the batch's CPU time
    assert timing["cpu_time_s"] > 0 and timing["batch_cpu_time_s"] == pytest.approx(
        timing["cpu_time_s"] * timing["batch_runs"]
    )


def test_wddp_and_central_differ_only_by_their_noise(batch_runs: dict) -> None:
    """Same theta_0 and weights; independent noise streams (wddp.md 4.4) make the runs distinct."""
    runs = batch_runs["runs"]
    a = runs["results/wddp/runs/kdd/epsilon_m4/wddp/eps1/seed0.npz"]
    b = runs["results/wddp/runs/kdd/epsilon_m4/central/eps1/seed0.npz"]
    assert a.trace["train_loss"].iloc[0] == b.trace["train_loss"].iloc[0]  # shared theta_0
    assert a.trace["train_loss"].iloc[-1] != b.trace["train_loss"].iloc[-1]
    assert a.provenance["params"]["sigma"] == b.provenance["params"]["sigma"]


def test_batches_are_deterministic(batch_runs: dict) -> None:
    again = run.run_batch(
        SETTINGS,
        "kdd",
        "epsilon",
        4,
        None,
        data=batch_runs["data"],
        dataset_sha256="0" * 64,
        tuning=batch_runs["tuning"],
        optimum=batch_runs["optimum"],
    )
    for path, result in again:
        pd.testing.assert_frame_equal(result.trace, batch_runs["runs"][path].trace)


def test_one_shot_runs_and_records_its_switch() -> None:
    data = synthetic(n=80)
    settings = {**SETTINGS, "aggregation": "one_shot", "seeds": 1}
    results = run.run_batch(
        settings,
        "adult",
        "epsilon",
        2,
        None,
        data=data,
        dataset_sha256="0" * 64,
        tuning={"step_sizes": steps(0.5), "settings": {}},
        optimum=tune.compute_optimum(data, 0.0),
    )
    assert len(results) == 3 * 2
    assert all(r.provenance["switches"]["aggregation"] == "one_shot" for _, r in results)
    assert all(np.isfinite(r.trace["gap"]).all() for _, r in results)


def test_cross_validation_never_reads_the_test_set() -> None:
    data = synthetic(n=120)
    poisoned = {
        **data,
        "X_test": np.full_like(data["X_test"], np.nan),
        "y_test": np.full_like(data["y_test"], np.nan),
    }
    scores = tune.cross_validate(SETTINGS, "kdd", poisoned)
    assert len(scores) == 2 * 1 * 3 * 2  # folds x seeds x methods x step sizes
    assert scores["validation_accuracy"].notna().all()
    summary, selected = tune.select_step_sizes(scores, "per_method", grid.run_epsilons(SETTINGS))
    assert set(selected["wddp"]) == {
        "0.01",
        "0.05",
        "0.1",
        "1",
    }  # reference protocol: one choice for every epsilon
    assert len(set(selected["wddp"].values())) == 1


def test_per_epsilon_protocol_tunes_every_run_epsilon() -> None:
    settings = {**SETTINGS, "tuning": {**SETTINGS["tuning"], "protocol": "per_epsilon"}}
    # the grid [0.05, 1] and Experiment B's 0.01, 0.05, 0.1: every run epsilon
    assert tune.cross_validated_epsilons(settings) == grid.run_epsilons(settings) == [0.01, 0.05, 0.1, 1.0]
    scores = tune.cross_validate({**settings, "iterations": 5}, "kdd", synthetic(n=80))
    assert len(scores) == 2 * 1 * 3 * 4 * 2  # folds x seeds x methods x epsilons x step sizes
    _, selected = tune.select_step_sizes(scores, "per_method", grid.run_epsilons(settings))
    assert set(selected["dist_avg"]) == {"0.01", "0.05", "0.1", "1"}
    # common random numbers: WD-DP and centralized DP-GD are one process under per-round aggregation
    by_method = scores.set_index(["method", "epsilon", "step_size", "fold"])["validation_loss"]
    np.testing.assert_array_equal(by_method["wddp"], by_method["central"])
    assert selected["wddp"] == selected["central"]


def test_step_size_selection_breaks_ties_by_loss() -> None:
    scores = pd.DataFrame(
        {
            "method": ["wddp"] * 4,
            "epsilon": 0.1,
            "step_size": [0.1, 0.1, 1.0, 1.0],
            "fold": [0, 1, 0, 1],
            "seed": 0,
            "validation_accuracy": [0.9, 0.8, 0.85, 0.85],
            "validation_loss": [0.3, 0.3, 0.2, 0.2],
        }
    )
    summary, selected = tune.select_step_sizes(scores)
    assert selected == {"wddp": {"0.1": 1.0}}
    assert summary.loc[summary["selected"], "step_size"].tolist() == [1.0]


def test_shared_step_size_is_best_on_the_pooled_runs() -> None:
    scores = pd.DataFrame(
        {
            "method": ["wddp", "wddp", "dist_avg", "dist_avg"],
            "epsilon": 0.1,
            "step_size": [0.1, 1.0, 0.1, 1.0],
            "fold": 0,
            "seed": 0,
            "validation_accuracy": [0.80, 0.90, 0.79, 0.70],
            "validation_loss": 0.3,
        }
    )
    assert tune.select_step_sizes(scores, "per_method")[1] == {"dist_avg": {"0.1": 0.1}, "wddp": {"0.1": 1.0}}
    summary, selected = tune.select_step_sizes(scores, "shared")  # pooled means: 0.795 (0.1) vs 0.80 (1.0)
    assert selected == {"dist_avg": {"0.1": 1.0}, "wddp": {"0.1": 1.0}} and summary["selected"].sum() == 2
    with pytest.raises(ConfigError, match="tuning.scope must be one of per_method, shared; got 'each'"):
        tune.select_step_sizes(scores, "each")


# ------------------------------------------------------------------ aggregates, figures, claims


def test_aggregate_figure_and_claims(batch_runs: dict, tmp_path: Path) -> None:
    root = batch_runs["root"]
    bands, per_seed = {}, {}
    for figure in ("fig06", "fig07", "fig02", "fig12"):
        spec = grid.FIGURES[figure]
        spec_runs = [
            root / p for p in grid.batch_runs(SETTINGS, "kdd", spec.experiment, spec.clients, spec.epsilon)
        ]
        bands[figure], per_seed[figure] = aggregate.tables(figure, spec_runs, {"kdd": root / "kdd.npz"})
        pd.testing.assert_frame_equal(
            bands[figure], aggregate.aggregate(figure, spec_runs, {"kdd": root / "kdd.npz"})
        )
    accuracy = bands["fig06"]
    assert set(accuracy["algorithm"]) == {"wddp", "dist_avg", "central", "nonpriv"}
    assert (accuracy.loc[accuracy["algorithm"] != "nonpriv", "n"] == 2).all()
    assert (
        accuracy.loc[accuracy["algorithm"] == "nonpriv", "mean"].iloc[0]
        == batch_runs["optimum"]["test_accuracy"]
    )
    assert (accuracy["lo"] <= accuracy["mean"] + 1e-12).all() and (
        accuracy["mean"] <= accuracy["hi"] + 1e-12
    ).all()
    assert "nonpriv" not in set(bands["fig07"]["algorithm"])
    assert sorted(bands["fig12"]["unevenness"].unique()) == [1, 3]
    bands["fig12"].to_csv(tmp_path / "fig12.csv", index=False)  # a gap figure: log axis, no reference line
    figures.draw_figure(
        "fig12", pd.read_csv(tmp_path / "fig12.csv"), tmp_path / "fig12.png", tmp_path / "fig12.pdf"
    )
    assert (tmp_path / "fig12.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "fig12.pdf").is_file()

    # the per-seed table: one row per run (and theta*'s), the values the bands summarise
    seeds = per_seed["fig06"]
    assert list(seeds.columns) == list(aggregate.SEED_COLUMNS)
    private = seeds[seeds["algorithm"] != "nonpriv"]
    assert len(private) == 3 * 2 * 2 and sorted(private["seed"].unique()) == [
        0,
        1,
    ]  # methods x epsilons x seeds
    assert seeds.loc[seeds["algorithm"] == "nonpriv", "seed"].isna().all()
    means = private.groupby(["algorithm", "epsilon"])["value"].mean()
    banded = accuracy[accuracy["algorithm"] != "nonpriv"].set_index(["algorithm", "epsilon"])["mean"]
    pd.testing.assert_series_equal(means.sort_index(), banded.sort_index(), check_names=False)
    assert per_seed["fig12"]["unevenness"].notna().all() and (per_seed["fig12"]["epsilon"] == 0.05).all()

    inputs = aggregate.claim_tables(per_seed, [{"dataset": "kdd", "rows": 200}])
    card = scorecard(
        claims.CLAIMS,
        inputs,
        scale=claims.claims_scale(SETTINGS),
        switches=grid.switches(SETTINGS),
        shared_seeds=True,
    )
    assert len(card) == len(claims.CLAIMS)
    scaled = card[[bool(c.needs) and inputs.get(c.aggregate) is not None for c in claims.CLAIMS]]
    assert set(scaled["verdict"]) == {NOT_AT_SCALE}  # 2 seeds, T = 30: below the paper's scale
    exact = card.set_index("id")["verdict"]
    assert (
        exact["wddp.noise_bound_factor"] == REPRODUCED and exact["wddp.privacy_within_budget"] == REPRODUCED
    )
    assert exact["wddp.dataset_sizes"] == NOT_REPRODUCED  # 200 rows, not the paper's 70000
    assert exact["wddp.nonprivate_accuracy_adult"] == UNAVAILABLE


def _footnote_rows(composed: dict[float, float]) -> pd.DataFrame:
    """A figure aggregate's privacy columns: one private method per nominal epsilon, its composed epsilon."""
    rows = [
        {
            "algorithm": "wddp",
            "epsilon": eps,
            "delta": 1e-3,
            "eps_composed_rdp": 2 * spent,
            "eps_composed_pld": spent,
        }
        for eps, spent in composed.items()
    ]
    return pd.DataFrame(rows)


def test_privacy_footnote_says_why_the_composed_epsilon_is_below_the_axis() -> None:
    """The footnote's composed epsilon is below the x axis's (0.00015 at 0.01 under the default calibration), and
    it says why; the real calibration at epsilon 0.01, delta 1e-3 spends 0.00015 (PLD), so the gap is the bound's."""
    sigma, _ = run.noise_std(
        {**SETTINGS, "calibration": "closed_form", "delta": 1e-3}, "wddp", 0.01, [500, 500]
    )
    (event,) = run.privacy_events(
        {**SETTINGS, "delta": 1e-3, "aggregation": "per_round"}, "wddp", sigma, [500, 500]
    )
    spent = composed_epsilon([event], 1e-3, "pld")
    assert spent == pytest.approx(1.49e-4, rel=0.02)  # the paper's bound gives 0.01 for the same sigma
    note = figures.privacy_footnote(_footnote_rows({0.01: 1.49e-4, 0.25: 0.12}))
    assert "ε = 0.01: 0.000298 (RDP), 0.000149 (PLD)" in note
    assert "below its nominal ε" in note and "zCDP conversion" in note and "Above" not in note
    over = figures.privacy_footnote(_footnote_rows({0.01: 1.49e-4, 0.25: 0.3}))
    assert "Above the nominal ε at ε = 0.25" in over and "below its nominal" not in over


def test_table1_has_the_bounds_and_a_sigma_per_cell() -> None:
    table = tables.table1(SETTINGS, {"kdd": 400})
    bounds = table[table["cell"] == "bound"]
    assert len(bounds) == 5 and "n²" in bounds["noise_bound"].iloc[-1]
    cells = table[table["cell"] != "bound"]
    assert len(cells) == 3 * (2 * 2 + 3 * 2)  # methods x (clients x epsilons + settings x u)
    cell = cells[
        (cells["experiment"] == "unevenness") & (cells["clients"] == 16) & (cells["unevenness"] == 3)
    ]
    sigma = cell.set_index("algorithm")["sigma_mean"]
    assert sigma["dist_avg"] / sigma["wddp"] == pytest.approx(cell["noise_ratio_mean"].iloc[0], rel=1e-12)
    assert sigma["central"] == sigma["wddp"]
    assert (cells["eps_composed_rdp"] <= cells["epsilon"] + 1e-12).all()
    assert cells["cell"].iloc[0] == "kdd epsilon_m2 eps0.05"
    assert cells["cell"].iloc[-1] == "kdd unevenness_m8_eps0.01 u3"


def test_table1_title_states_its_settings() -> None:
    title = tables.table1_title(SETTINGS)
    assert title.startswith("# Kang, Liu & Wang, Table 1: ")
    assert (
        "Calibration `closed_form`, aggregation `per_round`, δ = 0.001, T = 30, G = 1; σ over 2 repetitions"
        in title
    )


# ------------------------------------------------------------------------------------ commands


def test_settings_round_trip_through_json() -> None:
    assert grid.settings_from_json(grid.settings_json({"wddp": SETTINGS})) == SETTINGS


def test_settings_must_be_the_wddp_section() -> None:
    with pytest.raises(
        ConfigError, match=r"--settings: missing \['aggregation'\], unknown \[\]; pass the valid"
    ):
        grid.settings_from_json(json.dumps({k: v for k, v in SETTINGS.items() if k != "aggregation"}))
    with pytest.raises(ConfigError, match=r"missing \[\], unknown \['iteration'\]"):
        grid.settings_from_json(json.dumps({**SETTINGS, "iteration": 3}))
    tuning = {k: v for k, v in SETTINGS["tuning"].items() if k != "scope"}
    with pytest.raises(ConfigError, match=r"--settings tuning: missing \['scope'\], unknown \[\]"):
        grid.settings_from_json(json.dumps({**SETTINGS, "tuning": tuning}))
    with pytest.raises(ConfigError, match="tuning: 3 is not of type 'object'"):
        grid.settings_from_json(json.dumps({**SETTINGS, "tuning": 3}))
    with pytest.raises(ConfigError, match="trace_points .* must not exceed wddp.iterations"):
        grid.settings_from_json(json.dumps({**SETTINGS, "trace_points": 100}))


def test_settings_keys_are_the_schema_section() -> None:
    schema = schemas.load("wddp.schema.yaml")
    assert set(grid.SETTINGS_KEYS) == set(schema["properties"]) - set(grid.SELECTION_KEYS) == set(SETTINGS)
    assert schema["properties"]["datasets"]["default"] == list(grid.DATASETS)
    assert (
        set(grid.TUNING_KEYS) == set(schema["properties"]["tuning"]["properties"]) == set(SETTINGS["tuning"])
    )


def test_run_command_checks_epsilon_against_the_experiment(tmp_path: Path) -> None:
    from dpdl.cli import main

    argv = [
        "wddp",
        "run",
        "--experiment",
        "unevenness",
        "--dataset",
        "kdd",
        "--clients",
        "16",
        "--data",
        "x.npz",
    ]
    argv += [
        "--card",
        "x.json",
        "--settings",
        json.dumps(SETTINGS),
        "--tuning",
        "t.json",
        "--optimum",
        "o.npz",
    ]
    assert main(argv) == 1
