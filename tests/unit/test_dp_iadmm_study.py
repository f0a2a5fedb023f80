"""The dp_iadmm study package: grid, run, tune, aggregate, tables, figures, claims and cli."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from dpdl.claims import NOT_AT_SCALE, REPRODUCED, scorecard
from dpdl.io import save_npz, sha256_file
from dpdl.runs import read_run, validate_run
from dpdl.studies.dp_iadmm import aggregate as aggregation
from dpdl.studies.dp_iadmm import claims, cli, figures, grid, run, tables, tune

matplotlib.use("Agg")

SECTION = {
    "mnist_agents": 4,
    "epsilons": [0.05, 5.0],
    "curve_epsilons": [0.05],
    "remark3_epsilons": [0.01],
    "seeds": 2,
    "iterations": 3,
    "log_every": 1,
    "long_iterations": 3,
    "long_seeds": 2,
    "long_log_every": 1,
    "a_values": [1, 100],
    "outp_static_rhos": [0.1],
    "outp_plus_factor": 0.01,
    "beta": 1e-6,
    "delta": 1e-6,
    "trust_radius": "code_const",
    "outp_noise": "variance",
    "sensitivity": "eq20",
    "outp_gradient": "agent_mean",
    "nonprivate_algorithm": "objp",
    "optimum_iterations": 200,
}
CONFIG = {"dp_iadmm": SECTION}
PACKAGE = Path(grid.__file__).parent


def _package_imports(module: str) -> set[str]:
    """The modules of the package that ``module`` imports (``from dpdl.studies.dp_iadmm.<m> import``)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    prefix = "dpdl.studies.dp_iadmm."
    found = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    return {name.removeprefix(prefix) for name in found if name.startswith(prefix)}


def test_package_has_the_study_shape_and_imports_flow_one_way() -> None:
    import dpdl.studies.dp_iadmm as package
    from dpdl.studies import MODULES, OPTIONAL_MODULES

    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(MODULES) | set(OPTIONAL_MODULES)
    assert set(package.__all__) == {"STUDY", "CLAIMS", "targets", "runs", "add_commands"}
    assert all(len((PACKAGE / f"{m}.py").read_text().splitlines()) <= 500 for m in modules)
    layer = {"grid": 0, "run": 1, "tune": 1, "aggregate": 2, "tables": 3, "figures": 3, "claims": 3, "cli": 4}
    for module in modules:
        for imported in _package_imports(module):
            assert layer[imported] < layer[module] or (module, imported) == ("tune", "run"), (module, imported)


def test_variants_name_the_algorithm_and_its_setting() -> None:
    assert grid.variant("objt", SECTION) == grid.Variant("objt", "objt")
    assert grid.variant("outp_plus", SECTION).rho_factor == 0.01 and grid.variant("outp_plus", SECTION).label == "OutP+"
    assert grid.variant("outp_rho0.1", SECTION).rho_static == 0.1
    assert grid.variant("objp_a100", SECTION).a == 100.0 and grid.variant("objp_a100", SECTION).label == "ObjP"
    assert grid.variant("nonprivate", SECTION).algorithm == "objp"
    assert grid.variant("nonprivate", {**SECTION, "nonprivate_algorithm": "objt"}) == grid.Variant("nonprivate", "objt")
    assert (
        grid.variant("objp", {**SECTION, "nonprivate_algorithm": "objt"}).algorithm == "objp"
    )  # private runs keep theirs
    with pytest.raises(ValueError, match="only OutP has penalty variants"):
        grid.variant("objt_plus", SECTION)
    with pytest.raises(ValueError, match="unknown dp_iadmm variant"):
        grid.variant("sgd", SECTION)


def test_figure_runs_cover_the_grid_and_share_equal_horizons() -> None:
    fig2a = grid.figure_run_paths("fig2a", CONFIG)
    assert "results/dp_iadmm/runs/main/mnist/nonprivate/epsinf/seed0.npz" in fig2a
    assert not any("nonprivate/epsinf/seed1" in p for p in fig2a)
    assert len(fig2a) == 3 * 2 * 2 + 1
    assert all(p.startswith("results/dp_iadmm/runs/main/") for p in grid.figure_run_paths("fig5", CONFIG))
    long = {**SECTION, "long_iterations": 10}
    assert all("/runs/long/" in p for p in grid.figure_run_paths("remark3", {"dp_iadmm": long}))
    assert grid.long_horizon_distinct({"dp_iadmm": long}) and not grid.long_horizon_distinct(CONFIG)
    fig4 = grid.figure_run_paths("fig4", CONFIG)
    assert {p.split("/")[4] for p in fig4} == {"mnist", "femnist"}
    fig6_variants = {p.split("/")[5] for p in grid.figure_run_paths("fig6", CONFIG)}
    assert fig6_variants == {"objp", "objt", "outp", "objp_a100", "objt_a100", "outp_a100"}


def test_targets_leave_out_figures_without_data() -> None:
    everything = grid.targets(CONFIG, {"dp_iadmm/mnist", "dp_iadmm/femnist"})
    assert "figures/dp_iadmm/fig6.pdf" in everything and "results/claims/dp_iadmm.md" in everything
    assert "results/tables/dp_iadmm/remark3.csv" in everything
    mnist_only = grid.targets(CONFIG, {"dp_iadmm/mnist"})
    assert "figures/dp_iadmm/fig1.png" in mnist_only
    assert not any(f in p for p in mnist_only for f in ("fig2b", "fig3", "fig4", "fig6"))
    assert grid.targets(CONFIG, set()) == []


def test_job_seeds_are_one_for_the_nonprivate_run() -> None:
    assert grid.job_seeds("objt_a100", 3) == [0, 1, 2]
    assert grid.job_seeds(grid.NONPRIVATE, 3) == [0]
    assert grid.seeds(SECTION, "long", "outp") == [0, 1]
    assert grid.seeds({**SECTION, "long_seeds": 5}, "long", "outp") == [0, 1, 2, 3, 4]
    assert grid.run_output_patterns(CONFIG, "main")[-1].endswith("/eps{epsilon}/seed1.npz")


def test_run_resources_grow_with_the_grid() -> None:
    small = grid.run_minutes(CONFIG, "femnist", "main")
    large = grid.run_minutes({"dp_iadmm": {**SECTION, "iterations": 20_000, "seeds": 10}}, "femnist", "main")
    assert large > 100 * small
    assert grid.run_memory_mb(CONFIG, "mnist", "main") >= grid.BASE_MEMORY_MB


def test_privacy_events_of_each_algorithm() -> None:
    from dpdl.privacy import PrivacyEvent

    assert run.privacy_events("objt", 0.05, np.zeros(7)) == [PrivacyEvent("laplace", 20.0, 7)]
    assert run.privacy_events("objp", math.inf, np.zeros(7)) == [PrivacyEvent("laplace", 0.0, 7)]
    assert run.privacy_events("outp", 1.0, np.full(5, 3.0)) == [PrivacyEvent("gaussian", 3.0, 5)]
    decaying = np.linspace(2.0, 1.0, 3000)
    events = run.privacy_events("outp", 1.0, decaying)
    assert len(events) == run.PRIVACY_GROUPS and sum(e.count for e in events) == 3000
    merged = sum(e.count / e.noise_multiplier**2 for e in events)
    assert merged >= (1.0 / decaying**2).sum()  # grouping at the smallest multiplier spends more privacy


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict:
    """Tiny MNIST-like data and every run fig1, fig2a and remark3 need, written by run_job."""
    root = tmp_path_factory.mktemp("dp_iadmm")
    rng = np.random.default_rng(0)
    arrays = {
        "X_train": rng.integers(0, 256, (40, 12), dtype=np.uint8),
        "y_train": rng.integers(0, 3, 40).astype(np.uint8),
        "X_test": rng.integers(0, 256, (10, 12), dtype=np.uint8),
        "y_test": rng.integers(0, 3, 10).astype(np.uint8),
        "pixel_divisor": np.int32(255),
    }
    npz = root / "mnist.npz"
    save_npz(npz, arrays)
    card = {"npz_sha256": sha256_file(npz)}
    paths = {}
    for figure in ("fig1", "fig2a", "remark3"):
        paths[figure] = grid.figure_run_paths(figure, CONFIG)
    for path in sorted({p for group in paths.values() for p in group}):
        parts = Path(path).parts  # results/dp_iadmm/runs/<horizon>/<dataset>/<variant>/eps<e>/seed<s>.npz
        out = root / path
        if out.exists():
            continue
        horizon, name, epsilon = parts[3], parts[5], float(parts[6][3:])
        seeds = grid.seeds(SECTION, horizon, name)
        outputs = [str(root / grid.run_path(horizon, "mnist", name, epsilon, s)) for s in seeds]
        settings = grid.run_settings(CONFIG, horizon)
        run.run_job(
            horizon=horizon,
            dataset="mnist",
            variant_name=name,
            epsilon=epsilon,
            settings=settings,
            npz=npz,
            card=card,
            outputs=outputs,
        )
    return {"root": root, "paths": {k: [root / p for p in v] for k, v in paths.items()}}


def test_run_job_writes_valid_runs_with_privacy(jobs) -> None:
    for path in jobs["paths"]["fig2a"]:
        assert validate_run(path) == []
    artifact = read_run(jobs["root"] / grid.run_path("main", "mnist", "objt", 0.05, 1))
    prov = artifact.provenance
    assert prov["seed"] == 1 and prov["epsilon"] == 0.05 and prov["eps_per_iteration"] == 0.05
    assert prov["params"]["agents"] == 4 and prov["params"]["iterations"] == 3
    assert prov["switches"]["trust_radius"] == "code_const"
    assert 0 < prov["eps_composed_rdp"] and prov["noise_scales"][0]["noise_multiplier"] == pytest.approx(20.0)
    assert list(artifact.trace["iteration"]) == [1, 2, 3]
    nonprivate = read_run(jobs["root"] / grid.run_path("main", "mnist", "nonprivate", math.inf, 0)).provenance
    assert nonprivate["epsilon"] is None and nonprivate["eps_composed_rdp"] is None


def test_nonprivate_algorithm_switch_changes_only_the_nonprivate_run(jobs, tmp_path) -> None:
    def nonprivate(algorithm: str):
        out = tmp_path / f"{algorithm}.npz"
        settings = {**grid.run_settings(CONFIG, "main"), "nonprivate_algorithm": algorithm}
        npz = jobs["root"] / "mnist.npz"
        card = {"npz_sha256": sha256_file(npz)}
        run.run_job(
            horizon="main",
            dataset="mnist",
            variant_name="nonprivate",
            epsilon=math.inf,
            settings=settings,
            npz=npz,
            card=card,
            outputs=[str(out)],
        )
        return read_run(out)

    objp, objt = nonprivate("objp"), nonprivate("objt")
    assert objp.provenance["params"]["algorithm"] == "objp" and objt.provenance["params"]["algorithm"] == "objt"
    assert objt.provenance["switches"]["nonprivate_algorithm"] == "objt"
    default = read_run(jobs["root"] / grid.run_path("main", "mnist", "nonprivate", math.inf, 0))
    assert objp.trace.equals(default.trace)  # the default is ObjP
    assert not objt.trace["train_cost"].equals(objp.trace["train_cost"])


def test_run_job_rejects_a_private_epsilon_for_the_nonprivate_variant(jobs) -> None:
    from dpdl.errors import ConfigError

    settings = grid.run_settings(CONFIG, "main")
    job = {"horizon": "main", "dataset": "mnist", "settings": settings, "npz": jobs["root"] / "mnist.npz", "card": {}}
    with pytest.raises(ConfigError, match="only 'nonprivate' runs at epsilon inf"):
        run.run_job(**job, variant_name="nonprivate", epsilon=1.0, outputs=["x.npz"])
    with pytest.raises(ConfigError, match="3 output paths for 2 seeds"):
        run.run_job(**job, variant_name="objt", epsilon=1.0, outputs=["a.npz", "b.npz", "c.npz"])


def test_aggregates_figures_tables_and_claims(jobs, tmp_path) -> None:
    aggregates = {name: aggregation.aggregate(name, paths) for name, paths in jobs["paths"].items()}
    fig1 = aggregates["fig1"]
    assert list(fig1.columns) == aggregation.AGGREGATE_COLUMNS
    assert set(fig1["metric"]) == {"noise_magnitude", "test_error", *aggregation.PRIVACY_METRICS}
    assert (fig1.loc[fig1["metric"] == "test_error", "n"] == 2).all()
    fig2a = aggregates["fig2a"]
    assert set(fig2a["iteration"]) == {3} and math.inf in set(fig2a["epsilon"])
    for name in ("fig1", "fig2a"):
        csv = tmp_path / f"{name}.csv"
        fig2a.to_csv(csv, index=False) if name == "fig2a" else fig1.to_csv(csv, index=False)
        figures.draw_figure(name, aggregation.read_aggregate(csv), tmp_path / f"{name}.png", tmp_path / f"{name}.pdf")
        assert (tmp_path / f"{name}.png").stat().st_size > 0 and (tmp_path / f"{name}.pdf").stat().st_size > 0
    table = tables.remark3_table(aggregates["remark3"])
    assert set(table["algorithm"]) == {"ObjT", "OutP", "ObjP"}
    assert table.loc[table["algorithm"] == "ObjT", "paper_pct"].item() == 15.64
    card = scorecard(
        claims.CLAIMS,
        aggregates,
        scale=grid.claim_scale(grid.claim_settings(CONFIG), 0),
        switches={"trust_radius": "x"},
    )
    assert len(card) == len(claims.CLAIMS) == len({c.id for c in claims.CLAIMS})
    judged = card.set_index("id")
    assert judged.loc["dp_iadmm.mnist_objt_eps0.05", "verdict"] == NOT_AT_SCALE
    assert judged.loc["dp_iadmm.femnist_objt_eps5", "verdict"] == "data unavailable"
    assert isinstance(judged.loc["dp_iadmm.mnist_gap_eps0.05", "our_value"], float)


def test_optimum_table_minimises_1_on_each_prepared_dataset(jobs, tmp_path) -> None:
    from dpdl.errors import ConfigError

    settings = grid.optimum_settings(CONFIG)
    row = tune.optimum_table([jobs["root"] / "mnist.npz"], settings).iloc[0]
    assert row["dataset"] == "mnist" and row["train_samples"] == 40 and row["test_samples"] == 10
    assert 1 <= row["lbfgs_iterations"] < 200 and row["gradient_max_abs"] < 1e-4
    assert row["train_error_pct"] < 50 and row["lowest_path_test_error_pct"] <= row["test_error_pct"]
    assert row["paper_nonprivate_pct"] == 7.42 == claim("mnist_nonprivate").paper_value
    (tmp_path / "cifar.npz").write_bytes((jobs["root"] / "mnist.npz").read_bytes())
    with pytest.raises(ConfigError, match="must be one of mnist, femnist"):
        tune.optimum_table([tmp_path / "cifar.npz"], settings)


def synthetic(rows: list[tuple]) -> pd.DataFrame:
    """An aggregate from (dataset, variant, epsilon, iteration, metric, mean) rows."""
    frame = pd.DataFrame(rows, columns=["dataset", "variant", "epsilon", "iteration", "metric", "mean"])
    frame["algorithm"] = frame["variant"].map(lambda v: grid.variant(v, SECTION).label)
    frame["a"] = frame["variant"].map(lambda v: grid.variant(v, SECTION).a)
    frame["rho_setting"] = frame["variant"].map(lambda v: grid.variant(v, SECTION).rho_setting)
    frame["lo"], frame["hi"], frame["n"] = frame["mean"] - 0.01, frame["mean"] + 0.01, 10
    return frame[aggregation.AGGREGATE_COLUMNS]


def claim(claim_id: str):
    return next(c for c in claims.CLAIMS if c.id == f"dp_iadmm.{claim_id}")


def test_value_claims_use_the_tolerance_and_the_scale() -> None:
    objt = ("mnist", "objt", 0.05, 20_000, "test_error", 0.1280 + 0.019)
    agg = synthetic([objt, ("mnist", "outp", 0.05, 20_000, "test_error", 0.2179)])
    evidence = claim("mnist_objt_eps0.05").evaluate(agg)
    assert evidence.value == pytest.approx(14.70) and evidence.holds
    assert not claim("mnist_objt_eps0.05").evaluate(agg.assign(mean=agg["mean"] + 0.01)).holds
    gap = claim("mnist_gap_eps0.05").evaluate(agg)
    assert gap.value == pytest.approx(7.09) and gap.holds
    scale = {"iterations": 20_000, "seeds": 10, "long_iterations": 1e6, "long_seeds": 1, "femnist_train_shards": 21}
    card = scorecard(claims.CLAIMS, {"fig2a": agg}, scale=scale, switches={}).set_index("id")
    assert card.loc["dp_iadmm.mnist_objt_eps0.05", "verdict"] == REPRODUCED
    assert card.loc["dp_iadmm.mnist_objt_eps5", "verdict"] == "not reproduced"  # not in this aggregate's grid
    assert card.loc["dp_iadmm.femnist_objt_eps5", "verdict"] == "data unavailable"


def test_ordering_claims() -> None:
    rows = []
    for eps, (objt, objp, outp) in {0.05: (0.13, 0.15, 0.22), 1.0: (0.08, 0.09, 0.12)}.items():
        rows += [
            ("mnist", v, eps, 20_000, "test_error", e) for v, e in (("objt", objt), ("objp", objp), ("outp", outp))
        ]
        noise = (("objt", 1.0), ("objp", 1.0), ("outp", 0.1))
        rows += [
            ("mnist", v, eps, t, "noise_magnitude", scale * 0.008 / eps) for v, scale in noise for t in (1, 20_000)
        ]
    agg = synthetic(rows)
    assert claim("fig1_error_order").evaluate(agg).holds
    assert claim("fig1_noise").evaluate(agg).holds
    swapped = agg.copy()
    swapped.loc[(swapped["variant"] == "objp") & (swapped["metric"] == "test_error"), "mean"] = 0.5
    assert not claim("fig1_error_order").evaluate(swapped).holds


def test_cv_and_a_claims() -> None:
    rows = []
    for variant_name, start in (("outp", 1.0), ("outp_plus", 30.0), ("objp", 10.0), ("objt", 10.0)):
        rows += [("mnist", variant_name, 0.05, t, "cv_sum", start / t**2) for t in (1, 10, 100, 1000)]
        rows += [("mnist", variant_name, 0.05, 1000, "test_error", 0.3 if variant_name == "outp_plus" else 0.2)]
    agg = synthetic(rows)
    assert claim("fig5_cv_to_zero").evaluate(agg).holds
    assert claim("fig5_outp_cv_fastest").evaluate(agg).holds
    assert claim("fig5_outp_plus").evaluate(agg).holds
    errors_at_a = {"outp": (0.5, 0.8), "objp": (0.9, 0.4), "objt": (0.3, 0.31)}  # at a = 1 and a = 100
    a_rows = [
        ("femnist", grid.a_variant(alg, a), 0.05, 100, "test_error", err)
        for alg, errs in errors_at_a.items()
        for a, err in zip((1, 100), errs, strict=True)
    ]
    agg = synthetic(a_rows)
    for claim_id in ("fig6_outp_best_at_1", "fig6_objp_improves", "fig6_objt_insensitive"):
        assert claim(claim_id).evaluate(agg).holds, claim_id


def test_claim_sources_set_the_tolerance_by_dataset() -> None:
    mnist, femnist = claims.FIG2A, claims.FIG2B
    assert (mnist.dataset, mnist.tolerance_pp, femnist.dataset, femnist.tolerance_pp) == ("mnist", 2.0, "femnist", 5.0)
    assert claim("femnist_gap_eps0.05").tolerance == "+-10 pp" and claim("mnist_objt_eps5").tolerance == "+-2 pp"
    assert claim("femnist_nonprivate").paper_value == tune.PAPER_NONPRIVATE_PCT["femnist"] == 35.25


def test_cli_parses_epsilon_and_names_the_settings_function() -> None:
    import argparse

    from dpdl.errors import ConfigError

    assert cli._epsilon("0.05") == 0.05 and math.isinf(cli._epsilon("inf"))
    for bad in ("0", "-1", "nan", "x"):
        with pytest.raises(ConfigError, match="--epsilon must be a number > 0"):
            cli._epsilon(bad)
    parser = argparse.ArgumentParser()
    cli.add_commands(parser.add_subparsers())
    args = parser.parse_args(["dp_iadmm", "optimum", "--data", "m.npz", "--settings", "{}", "--out", "o.csv", "o.md"])
    with pytest.raises(ConfigError, match=r"pass dpdl\.studies\.dp_iadmm\.grid\.optimum_settings\(config\)"):
        args.command(args)
