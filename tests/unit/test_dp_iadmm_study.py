"""The dp_iadmm study package: grid, run, tune, aggregate, tables, figures, claims and cli."""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

from dpdl.algorithms.dp_iadmm import (
    OUTP_GRADIENTS,
    OUTP_NOISES,
    OUTP_REGULARISERS,
    SENSITIVITIES,
    TRUST_RADII,
)
from dpdl.io import save_npz, sha256_file
from dpdl.runs import read_run, validate_run
from dpdl.studies.dp_iadmm import aggregate as aggregation
from dpdl.studies.dp_iadmm import claims, cli, figures, grid, readings, run, tables, tune
from dpdl.verdicts import NOT_AT_SCALE

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
    "outp_regulariser": "eq37",
    "nonprivate_algorithm": "objp",
    "optimum_iterations": 200,
}
CONFIG = {"dp_iadmm": SECTION}
SWITCH_VALUES = {
    "trust_radius": TRUST_RADII,
    "outp_noise": OUTP_NOISES,
    "sensitivity": SENSITIVITIES,
    "outp_gradient": OUTP_GRADIENTS,
    "outp_regulariser": OUTP_REGULARISERS,
}
OTHER_VALUE = {
    switch: next(v for v in values if v != SECTION[switch]) for switch, values in SWITCH_VALUES.items()
}
PACKAGE = Path(grid.__file__).parent
ROOT = Path(__file__).resolve().parents[2]


def test_variants_name_the_algorithm_and_its_setting() -> None:
    assert grid.variant("objt", SECTION) == grid.Variant("objt", "objt")
    assert (
        grid.variant("outp_plus", SECTION).rho_factor == 0.01
        and grid.variant("outp_plus", SECTION).label == "OutP+"
    )
    assert grid.variant("outp_rho0.1", SECTION).rho_static == 0.1
    assert (
        grid.variant("objp_a100", SECTION).a == 100.0 and grid.variant("objp_a100", SECTION).label == "ObjP"
    )
    assert grid.variant("nonprivate", SECTION).algorithm == "objp"
    assert grid.variant("nonprivate", {**SECTION, "nonprivate_algorithm": "objt"}) == grid.Variant(
        "nonprivate", "objt"
    )
    assert (
        grid.variant("objp", {**SECTION, "nonprivate_algorithm": "objt"}).algorithm == "objp"
    )  # private runs keep theirs
    noiseless = grid.variant("nonprivate_outp", SECTION)
    assert noiseless == grid.Variant("nonprivate_outp", "outp") and noiseless.label == "OutP without noise"
    assert (
        grid.is_nonprivate("nonprivate_objp")
        and grid.is_nonprivate("nonprivate")
        and not grid.is_nonprivate("objp")
    )
    with pytest.raises(ValueError, match="unknown dp_iadmm variant"):
        grid.variant("nonprivate_sgd", SECTION)
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
    noiseless = grid.figure_run_paths("noiseless", CONFIG)
    assert sorted(noiseless) == sorted(
        grid.NOISELESS_RUN_PATH.format(dataset=d, algorithm=a)
        for d in grid.DATASETS
        for a in ("objp", "outp")
    )


def test_targets_leave_out_figures_without_data() -> None:
    everything = grid.targets(CONFIG, {"dp_iadmm/mnist", "dp_iadmm/femnist"})
    assert "figures/dp_iadmm/fig6.pdf" in everything and "results/claims/dp_iadmm.md" in everything
    assert {grid.seeds_path(name) for name in grid.AGGREGATES} <= set(everything)
    assert "results/dp_iadmm/aggregates/noiseless_seeds.csv" in everything
    assert "results/tables/dp_iadmm/remark3.csv" in everything
    mnist_only = grid.targets(CONFIG, {"dp_iadmm/mnist"})
    assert "figures/dp_iadmm/fig1.png" in mnist_only
    assert not any(f in p for p in mnist_only for f in ("fig2b", "fig3", "fig6"))
    # Fig. 4 and the noiseless pair span both datasets: built from MNIST's jobs when FEMNIST is not at hand
    assert {"figures/dp_iadmm/fig4.png", grid.seeds_path("noiseless")} <= set(mnist_only)
    runs = grid.runs(CONFIG, {"dp_iadmm/mnist"})
    assert any("/main/mnist/outp_rho0.1/" in p for p in runs) and not any("/femnist/" in p for p in runs)
    assert grid.targets(CONFIG, set()) == []


def test_cells_narrow_the_grid_to_the_jobs_they_name() -> None:
    from dpdl.errors import ConfigError

    cells = ["main/mnist/nonprivate/epsinf", "main/mnist/objt/eps5"]
    narrowed = {"dp_iadmm": {**SECTION, "cells": cells}}
    assert sorted(grid.runs(narrowed, {"dp_iadmm/mnist", "dp_iadmm/femnist"})) == [
        "results/dp_iadmm/runs/main/mnist/nonprivate/epsinf/seed0.npz",
        "results/dp_iadmm/runs/main/mnist/objt/eps5/seed0.npz",
        "results/dp_iadmm/runs/main/mnist/objt/eps5/seed1.npz",
    ]
    assert grid.grid_aggregates(narrowed["dp_iadmm"]) == {
        "fig2a": ["mnist"]
    }  # fig1's curve_epsilons hold no 5
    assert grid.claim_settings(narrowed)["grid_aggregates"] == {"fig2a": ["mnist"]}
    whole = {name: list(grid.FIGURE_SPECS[name].datasets) for name in grid.AGGREGATES}
    assert grid.claim_settings(CONFIG)["grid_aggregates"] == whole  # null: the whole grid
    promised = grid.targets(narrowed, {"dp_iadmm/mnist", "dp_iadmm/femnist"})
    assert "figures/dp_iadmm/fig2a.png" in promised and "results/claims/dp_iadmm.csv" in promised
    assert not any(f"/{f}" in p for p in promised for f in ("fig1", "fig2b", "fig5", "remark3", "noiseless"))
    assert grid.run_settings(narrowed, "main", "objt") == grid.run_settings(
        CONFIG, "main", "objt"
    )  # the same runs
    assert grid.check_section({**SECTION, "cells": cells})["cells"] == cells
    for wrong in ("main/mnist/objt/eps5.0", "main/mnist/objt/eps3", "long/mnist/objt/eps0.05"):
        with pytest.raises(ConfigError, match=r"dp_iadmm\.cells\[0\]: .* is not a job of this config's grid"):
            grid.check_section({**SECTION, "cells": [wrong]})


def test_the_mnist_cells_config_is_the_paper_config_narrowed_to_the_stated_numbers() -> None:
    """config/paper_mnist_cells.yaml runs the paper build's own jobs of Section 4's MNIST numbers, and no other."""
    import yaml

    from dpdl.config import load_config

    text = {
        name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        for name in ("paper", "paper_mnist_cells")
    }
    cells = text["paper_mnist_cells"]["dp_iadmm"].pop("cells")
    narrowed = {
        "studies": text["paper"]["studies"],
        "readings": True,
        "audit": text["paper"]["audit"],
    }  # no audit
    assert text["paper_mnist_cells"] | narrowed == text["paper"]
    assert text["paper_mnist_cells"]["studies"] == ["dp_iadmm"]
    chosen, paper = (load_config(ROOT / "config" / f"{name}.yaml") for name in ("paper_mnist_cells", "paper"))
    both = {"dp_iadmm/mnist", "dp_iadmm/femnist"}
    jobs = {path.rsplit("/", 1)[0].removeprefix("results/dp_iadmm/runs/") for path in grid.runs(chosen, both)}
    assert jobs == set(cells) == {
        "main/mnist/nonprivate/epsinf", "main/mnist/objt/eps0.05", "main/mnist/objt/eps5", "main/mnist/outp/eps0.05"
    }  # fmt: skip
    assert len(grid.runs(chosen, both)) == 3 * 10 + 1 and set(grid.runs(chosen, both)) < set(
        grid.runs(paper, both)
    )
    assert grid.run_settings(chosen, "main", "outp") == grid.run_settings(paper, "main", "outp")
    assert chosen[grid.STUDY]["iterations"] == 20_000 and chosen[grid.STUDY]["seeds"] == 10
    promised = grid.targets(chosen, both)
    assert {p for p in promised if p.startswith("figures/")} == {
        f"figures/dp_iadmm/{f}.{e}" for f in ("fig1", "fig2a") for e in ("png", "pdf")
    }  # fig4 needs a FEMNIST cell too


def test_the_femnist_config_is_the_data_at_hand_config_narrowed_to_the_cheapest_deciding_cells() -> None:
    """config/paper_femnist_at_hand.yaml (#62 item 2) runs paper_at_hand.yaml's own FEMNIST jobs (the
    writers at hand, all 10 seeds, T = 2e4) of the noiseless pair, the reference, Section 4's numbers and
    the batches of Fig. 2b's that have run (ObjP and OutP at 1, Fig. 3's five, then the rest), and no other."""
    import yaml

    from dpdl.config import load_config

    text = {
        name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        for name in ("paper_at_hand", "paper_femnist_at_hand")
    }
    chosen_text, at_hand_text = text["paper_femnist_at_hand"], text["paper_at_hand"]
    cells = chosen_text["dp_iadmm"].pop("cells")
    narrowed = {key: at_hand_text[key] for key in ("studies", "readings", "audit")}
    assert chosen_text | narrowed == at_hand_text
    assert chosen_text["studies"] == ["dp_iadmm"] and chosen_text["audit"]["enabled"] is False
    chosen, at_hand = (
        load_config(ROOT / "config" / f"{n}.yaml") for n in ("paper_femnist_at_hand", "paper_at_hand")
    )
    assert chosen["data"]["femnist"]["missing_shards"] == "use_available"
    both = {"dp_iadmm/mnist", "dp_iadmm/femnist"}
    runs = grid.runs(chosen, both)
    jobs = {path.rsplit("/", 1)[0].removeprefix("results/dp_iadmm/runs/") for path in runs}
    assert jobs == set(cells) == {
        "main/femnist/nonprivate_objp/epsinf", "main/femnist/nonprivate_outp/epsinf",
        "main/femnist/nonprivate/epsinf", "main/femnist/objt/eps5", "main/femnist/objt/eps0.05",
        "main/femnist/outp/eps0.05", "main/femnist/objp/eps1", "main/femnist/outp/eps1",
        "main/femnist/objp/eps0.05", "main/femnist/objp/eps0.1", "main/femnist/objt/eps0.1",
        "main/femnist/objt/eps1", "main/femnist/outp/eps0.1", "main/femnist/objp/eps3",
        "main/femnist/objp/eps5", "main/femnist/objt/eps3", "main/femnist/outp/eps3", "main/femnist/outp/eps5",
    }  # fmt: skip
    assert len(runs) == 15 * 10 + 3 and set(runs) < set(grid.runs(at_hand, both))
    for variant in ("objt", "outp"):
        assert grid.run_settings(chosen, "main", variant) == grid.run_settings(at_hand, "main", variant)
    assert chosen[grid.STUDY]["iterations"] == 20_000 and chosen[grid.STUDY]["seeds"] == 10


def test_the_femnist_first_batch_is_the_femnist_config_narrowed_to_its_first_three_cells() -> None:
    """config/paper_femnist_at_hand_nonprivate.yaml (#62 item 2): the non-private runs of
    paper_femnist_at_hand.yaml, its first three cells in its order, and nothing else different."""
    import yaml

    batch, whole = (
        yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        for name in ("paper_femnist_at_hand_nonprivate", "paper_femnist_at_hand")
    )
    assert batch["dp_iadmm"].pop("cells") == whole["dp_iadmm"].pop("cells")[:3]
    assert batch == whole


def test_the_femnist_pilot_is_the_femnist_config_at_the_declared_pilot_seeds() -> None:
    """config/paper_femnist_at_hand_pilot.yaml (#62 item 2): paper_femnist_at_hand.yaml with its seeds at
    claims.AT_HAND_PILOT_SEEDS and nothing else different; a config of the writers-at-hand deviation."""
    import yaml

    from dpdl.studies.dp_iadmm.claims import AT_HAND_PILOT_SEEDS
    from dpdl.studies.dp_iadmm.readings import DATA_DEVIATIONS

    pilot, whole = (
        yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        for name in ("paper_femnist_at_hand_pilot", "paper_femnist_at_hand")
    )
    assert pilot["dp_iadmm"].pop("seeds") == AT_HAND_PILOT_SEEDS and whole["dp_iadmm"].pop("seeds") == 10
    assert pilot == whole
    (deviation,) = DATA_DEVIATIONS
    assert "config/paper_femnist_at_hand_pilot.yaml" in deviation.configfiles


def test_the_mnist_config_is_the_paper_config_narrowed_to_every_mnist_main_cell() -> None:
    """config/paper_mnist.yaml (#38) differs from config/paper.yaml only in its grid (every MNIST job at T = 2e4,
    and a reading still building narrowed to its finished jobs) and in the route that built it: the jax backend,
    on a GPU (#37)."""
    import yaml

    from dpdl.config import load_config

    text = {
        name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
        for name in ("paper", "paper_mnist")
    }
    cells = text["paper_mnist"]["dp_iadmm"].pop("cells")
    assert text["paper_mnist"]["dp_iadmm"].pop("backend") == "jax"
    for narrowed_cells in text["paper_mnist"].pop("reading_cells", {}).values():  # a reading still building
        assert set(narrowed_cells) < set(cells)
    narrowed = {
        "studies": text["paper"]["studies"],
        "audit": text["paper"]["audit"],
    }  # the audit is paper.yaml's
    assert text["paper_mnist"] | narrowed == text["paper"]
    assert text["paper_mnist"]["studies"] == ["dp_iadmm"] and text["paper_mnist"]["readings"] is True
    chosen, paper = (load_config(ROOT / "config" / f"{name}.yaml") for name in ("paper_mnist", "paper"))
    both = {"dp_iadmm/mnist", "dp_iadmm/femnist"}
    mnist = {path for path in grid.runs(paper, both) if "/main/mnist/" in path}
    assert len(cells) == len(set(cells)) == 30
    assert set(cells) == {path.rsplit("/", 1)[0].removeprefix("results/dp_iadmm/runs/") for path in mnist}
    assert cells[:2] == ["main/mnist/objp/eps0.05", "main/mnist/outp/eps0.05"]  # the most claims first
    assert set(grid.runs(chosen, both)) == mnist
    assert set(grid.grid_aggregates(chosen[grid.STUDY])) == {"fig1", "fig2a", "fig4", "noiseless"}
    for variant in ("objp", "objt", "outp", "nonprivate"):
        assert grid.run_settings(chosen, "main", variant) == {
            **grid.run_settings(paper, "main", variant),
            "backend": "jax",
        }


def test_the_long_mnist_config_is_the_mnist_config_with_the_long_horizon_jobs_added() -> None:
    """config/paper_mnist_long.yaml (#38, the GPU route): config/paper_mnist.yaml's 30 jobs, then the 15 MNIST jobs
    of the long horizon (Remark 3's first), and nothing else differs, so its main-horizon runs are that build's."""
    import yaml

    from dpdl.config import load_config

    names = ("paper", "paper_mnist", "paper_mnist_long")
    text = {name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text()) for name in names}
    cells = text["paper_mnist_long"]["dp_iadmm"].pop("cells")
    main_cells = text["paper_mnist"]["dp_iadmm"].pop("cells")
    text["paper_mnist"].pop(
        "reading_cells", None
    )  # the CPU route's reading still building; a GPU builds it whole
    assert text["paper_mnist_long"] == text["paper_mnist"]
    chosen, paper = (load_config(ROOT / "config" / f"{name}.yaml") for name in ("paper_mnist_long", "paper"))
    both = {"dp_iadmm/mnist", "dp_iadmm/femnist"}
    mnist = {path for path in grid.runs(paper, both) if "/mnist/" in path}
    assert cells[: len(main_cells)] == main_cells and len(cells) == len(set(cells)) == 45
    assert cells[30:33] == ["long/mnist/objt/eps0.01", "long/mnist/outp/eps0.01", "long/mnist/objp/eps0.01"]
    assert set(grid.runs(chosen, both)) == mnist and sum("/long/" in p for p in mnist) == 150
    assert set(grid.grid_aggregates(chosen[grid.STUDY])) == {
        "fig1",
        "fig2a",
        "fig4",
        "noiseless",
        "remark3",
        "fig5",
    }
    for variant in ("objp", "objt", "outp", "outp_plus"):
        assert grid.run_settings(chosen, "long", variant) == {
            **grid.run_settings(paper, "long", variant),
            "backend": "jax",
        }


def test_cells_keep_an_aggregate_over_two_datasets_by_every_job_on_one() -> None:
    """Fig. 4 spans MNIST and FEMNIST: cells naming every MNIST job of it build it from MNIST alone (#38); one
    MNIST job fewer, and it is out of the grid, as an aggregate the cells reach on one dataset only."""
    mnist = [grid.cell_name(*cell) for cell in grid.figure_cells("fig4", SECTION) if cell[1] == "mnist"]
    narrowed = {**SECTION, "cells": mnist}
    assert grid.grid_aggregates(narrowed)["fig4"] == ["mnist"]
    assert {p.split("/")[4] for p in grid.figure_run_paths("fig4", {"dp_iadmm": narrowed})} == {"mnist"}
    assert "fig4" not in grid.grid_aggregates({**SECTION, "cells": mnist[1:]})
    both = {**SECTION, "cells": [*mnist[1:], "main/femnist/outp/eps0.05"]}  # reaching each dataset keeps it
    assert grid.grid_aggregates(both)["fig4"] == ["mnist", "femnist"]


def test_job_seeds_are_one_for_the_nonprivate_run() -> None:
    assert grid.job_seeds("objt_a100", 3) == [0, 1, 2]
    assert grid.job_seeds(grid.NONPRIVATE, 3) == [0] and grid.job_seeds("nonprivate_outp", 3) == [0]
    assert grid.seeds(SECTION, "long", "outp") == [0, 1]
    assert grid.seeds({**SECTION, "long_seeds": 5}, "long", "outp") == [0, 1, 2, 3, 4]
    assert grid.seeds(CONFIG["dp_iadmm"], "main", "any") == [0, 1]  # the run rule's one file per seed


def test_run_resources_grow_with_the_grid() -> None:
    small = grid.run_minutes(CONFIG, "femnist", "main")
    large = grid.run_minutes({"dp_iadmm": {**SECTION, "iterations": 20_000, "seeds": 10}}, "femnist", "main")
    assert large > 100 * small
    assert grid.run_memory_mb(CONFIG, "mnist", "main") >= grid.BASE_MEMORY_MB


def test_privacy_events_of_each_algorithm() -> None:
    from dpdl.privacy.accounting import PrivacyEvent

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
    for figure in ("fig1", "fig2a", "remark3", "noiseless"):
        paths[figure] = [p for p in grid.figure_run_paths(figure, CONFIG) if "/femnist/" not in p]
    for path in sorted({p for group in paths.values() for p in group}):
        parts = Path(path).parts  # results/dp_iadmm/runs/<horizon>/<dataset>/<variant>/eps<e>/seed<s>.npz
        out = root / path
        if out.exists():
            continue
        horizon, name, epsilon = parts[3], parts[5], float(parts[6][3:])
        seeds = grid.seeds(SECTION, horizon, name)
        outputs = [str(root / grid.run_path(horizon, "mnist", name, epsilon, s)) for s in seeds]
        settings = grid.run_settings(CONFIG, horizon, name)
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
        settings = {**grid.run_settings(CONFIG, "main", grid.NONPRIVATE), "nonprivate_algorithm": algorithm}
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
    assert (
        objp.provenance["params"]["algorithm"] == "objp" and objt.provenance["params"]["algorithm"] == "objt"
    )
    assert objt.provenance["switches"]["nonprivate_algorithm"] == "objt"
    default = read_run(jobs["root"] / grid.run_path("main", "mnist", "nonprivate", math.inf, 0))
    assert objp.trace.equals(default.trace)  # the default is ObjP
    assert not objt.trace["train_cost"].equals(objp.trace["train_cost"])


def test_the_backend_is_a_run_setting_only_when_it_is_not_numba_and_asks_for_the_gpu() -> None:
    section = CONFIG["dp_iadmm"]
    assert "backend" not in grid.run_settings(
        CONFIG, "main", "objt"
    )  # numba: the runs' cache predates the key
    on_jax = {**CONFIG, "dp_iadmm": {**section, "backend": "jax"}}
    assert grid.run_settings(on_jax, "main", "objt")["backend"] == "jax"
    assert grid.run_settings(on_jax, "main", grid.NONPRIVATE)["backend"] == "jax"
    assert grid.run_gpus_input(on_jax, None) == 1 and grid.run_gpus_input(CONFIG, None) == 0


@pytest.mark.parametrize("name, epsilon", [("objt", 0.05), ("outp", 0.05), (grid.NONPRIVATE, math.inf)])
def test_run_job_on_the_jax_backend_writes_the_runs_numba_writes_and_says_so(
    jobs, tmp_path, name, epsilon
) -> None:
    pytest.importorskip("jax")
    seeds = grid.seeds(SECTION, "main", name)
    outputs = [str(tmp_path / f"seed{s}.npz") for s in seeds]
    settings = {**grid.run_settings(CONFIG, "main", name), "backend": "jax"}
    npz = jobs["root"] / "mnist.npz"
    job = {"horizon": "main", "dataset": "mnist", "variant_name": name, "epsilon": epsilon, "npz": npz}
    run.run_job(**job, settings=settings, card={"npz_sha256": sha256_file(npz)}, outputs=outputs)
    for seed, path in zip(seeds, outputs, strict=True):
        assert validate_run(path) == []
        ours = read_run(path)
        numba = read_run(jobs["root"] / grid.run_path("main", "mnist", name, epsilon, seed))
        backend = ours.provenance["params"].pop("backend")
        assert (
            backend["name"] == "jax"
            and backend["device"].startswith("cpu")
            and "threefry" in backend["noise"]
        )
        assert numba.provenance["params"].pop("backend")["name"] == "numba"
        assert ours.provenance["params"] == numba.provenance["params"]
        for key in ("eps_composed_rdp", "eps_composed_pld", "noise_scales", "seed", "epsilon"):
            assert ours.provenance.get(key) == numba.provenance.get(key), key
        assert list(ours.trace.columns) == list(numba.trace.columns)
        assert list(ours.trace["iteration"]) == list(numba.trace["iteration"])
        if name == grid.NONPRIVATE:  # no noise: the same iterates, to float32 rounding
            np.testing.assert_allclose(ours.trace["train_cost"], numba.trace["train_cost"], rtol=1e-5)
        else:  # its own draws
            assert not np.allclose(ours.trace["noise_magnitude"], numba.trace["noise_magnitude"])


def test_jobs_run_together_on_the_jax_backend_write_what_each_job_writes_alone(jobs, tmp_path) -> None:
    pytest.importorskip("jax")
    from dpdl.errors import ConfigError

    npz = jobs["root"] / "mnist.npz"
    card = {"npz_sha256": sha256_file(npz)}
    cells = [("objt", 0.05), ("objt", 1.0), ("outp", 0.05), (grid.NONPRIVATE, math.inf)]
    planned, alone = [], []
    for name, epsilon in cells:
        settings = {**grid.run_settings(CONFIG, "main", name), "backend": "jax"}
        seeds = grid.seeds(SECTION, "main", name)
        job = {
            "horizon": "main",
            "dataset": "mnist",
            "variant_name": name,
            "epsilon": epsilon,
            "settings": settings,
        }
        outputs = [str(tmp_path / "together" / name / f"{epsilon}-{s}.npz") for s in seeds]
        planned.append(run.plan_job(**job, card=card, outputs=outputs))
        alone.append([str(tmp_path / "alone" / name / f"{epsilon}-{s}.npz") for s in seeds])
        run.run_job(**job, npz=npz, card=card, outputs=alone[-1])
    run.run_jobs_together(planned, npz)
    for job, paths in zip(planned, alone, strict=True):
        for ours_path, alone_path in zip(job.outputs, paths, strict=True):
            assert validate_run(ours_path) == []
            ours, single = read_run(ours_path), read_run(alone_path)
            assert ours.provenance["params"] == single.provenance["params"]
            for column in ("test_error", "train_cost", "noise_magnitude", "cv_sum"):
                np.testing.assert_allclose(ours.trace[column], single.trace[column], rtol=1e-4, atol=1e-6)
    batched = read_run(planned[0].outputs[0]).provenance["timing"]["wall_time_s"]
    assert batched == pytest.approx(read_run(planned[1].outputs[0]).provenance["timing"]["wall_time_s"])
    with pytest.raises(ConfigError, match="the jobs of one dataset"):
        run.run_jobs_together([planned[0], dataclasses.replace(planned[1], dataset="femnist")], npz)


def test_a_batch_stopped_at_its_deadline_resumes_in_another_folder_to_the_uninterrupted_runs(
    jobs, tmp_path, monkeypatch
) -> None:
    """Issue 63: a long batch saves its state and stops at ``stop_at``; its folder travels as a tarball (the lent
    device's output, carried into the next call) and the batch resumes there to the artifacts of a run never
    stopped, bit for bit; once a batch has stopped, no later batch starts."""
    pytest.importorskip("jax")
    import tarfile

    npz = jobs["root"] / "mnist.npz"
    card = {"npz_sha256": sha256_file(npz)}

    def planned(root: Path) -> list:
        found = []
        for name, epsilon in (("outp", 0.05), ("objt", 1.0)):
            settings = {**grid.run_settings(CONFIG, "main", name), "backend": "jax", "iterations": 7}
            seeds = grid.seeds(SECTION, "main", name)
            outputs = [str(root / name / f"seed{s}.npz") for s in seeds]
            found.append(run.plan_job(horizon="main", dataset="mnist", variant_name=name, epsilon=epsilon,
                                      settings=settings, card=card, outputs=outputs))  # fmt: skip
        return found

    straight = planned(tmp_path / "straight")
    assert run.run_jobs_together(straight, npz, chunk=2) == []
    first = planned(tmp_path / "first")
    with monkeypatch.context() as patched:  # the deadline passes during each batch's first chunk
        patched.setattr(run.Checkpoint, "stopping", lambda self: True)
        left = run.run_jobs_together(first, npz, chunk=2, stop_at=1e18)
    assert left == [job.label for job in first]
    saved = [Path(job.outputs[0]).parent / run.CHECKPOINT_NAME for job in first]
    assert (
        saved[0].exists() and not saved[1].exists()
    )  # the second batch was not started after the first stopped
    assert not any(Path(p).exists() for job in first for p in job.outputs)
    late = planned(
        tmp_path / "late"
    )  # started past the deadline: one chunk, saved, stopped; the next not started
    assert run.run_jobs_together(late, npz, chunk=2, stop_at=0.0) == left
    assert (Path(late[0].outputs[0]).parent / run.CHECKPOINT_NAME).exists() and not Path(
        late[1].outputs[0]
    ).parent.exists()
    with tarfile.open(tmp_path / "out.tar.gz", "w:gz") as archive:  # what the device's $OUT brings back
        archive.add(tmp_path / "first", arcname=".")
    with tarfile.open(tmp_path / "out.tar.gz") as archive:  # carried into the next call
        archive.extractall(tmp_path / "next", filter="data")
    again = planned(tmp_path / "next")
    assert run.run_jobs_together(again, npz, chunk=2) == []
    assert not any((Path(job.outputs[0]).parent / run.CHECKPOINT_NAME).exists() for job in again)
    for ours_job, straight_job in zip(again, straight, strict=True):
        for ours_path, straight_path in zip(ours_job.outputs, straight_job.outputs, strict=True):
            ours, theirs = read_run(ours_path), read_run(straight_path)
            assert ours.trace.equals(theirs.trace), ours_path
            resumed = ours.provenance["params"].pop("resumed_after_iteration")
            assert resumed == (2 if ours_job is again[0] else 0)
            theirs.provenance["params"].pop("resumed_after_iteration")
            assert ours.provenance["params"] == theirs.provenance["params"]


def test_run_job_on_the_jax_backend_without_jax_says_how_to_install_it(jobs, monkeypatch) -> None:
    import builtins

    from dpdl.errors import ConfigError

    real_import = builtins.__import__

    def without_jax(name, *args, **kwargs):
        if (
            name == "jax"
            or name.startswith("jax.")
            or name.endswith("dp_iadmm_jax")
            or "dp_iadmm_jax" in (args[2] or ())
        ):
            raise ImportError("No module named 'jax'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "dpdl.algorithms.dp_iadmm_jax", raising=False)
    monkeypatch.setattr(builtins, "__import__", without_jax)
    settings = {**grid.run_settings(CONFIG, "main", "objt"), "backend": "jax"}
    job = {
        "horizon": "main",
        "dataset": "mnist",
        "settings": settings,
        "npz": jobs["root"] / "mnist.npz",
        "card": {},
    }
    with pytest.raises(ConfigError, match=r"dp_iadmm.backend is jax but JAX cannot be imported.*\[gpu\]"):
        run.run_job(**job, variant_name="objt", epsilon=0.05, outputs=["a.npz", "b.npz"])


@pytest.mark.parametrize("backend", ["numba", "jax"])
def test_a_run_job_killed_mid_way_resumes_from_its_checkpoint_to_the_same_artifacts(
    jobs, tmp_path, monkeypatch, backend
) -> None:
    from dpdl.progress import Progress

    class Killed(Exception):
        pass

    def killed_at_2(self, done: int) -> None:
        if done == 2:
            raise Killed

    if backend == "jax":  # one iteration per chunk, so that the JAX run saves after each as numba's does
        jax_iadmm = pytest.importorskip("dpdl.algorithms.dp_iadmm_jax")
        program = SimpleNamespace(
            padded_agents=jax_iadmm.padded_agents,
            run_iadmm_jax=functools.partial(jax_iadmm.run_iadmm_jax, chunk=1),
        )
        monkeypatch.setattr(run, "jax_program", lambda: program)
    seeds = grid.seeds(SECTION, "main", "objt")
    npz = jobs["root"] / "mnist.npz"
    job = {"horizon": "main", "dataset": "mnist", "variant_name": "objt", "epsilon": 0.05, "npz": npz}
    settings = {**grid.run_settings(CONFIG, "main", "objt"), "backend": backend}
    job |= {"settings": settings, "card": {"npz_sha256": sha256_file(npz)}}
    straight_outputs = [str(tmp_path / "straight" / f"seed{s}.npz") for s in seeds]
    run.run_job(**job, outputs=straight_outputs)
    outputs = [str(tmp_path / "objt" / f"seed{s}.npz") for s in seeds]
    monkeypatch.setattr(run, "CHECKPOINT_EVERY_S", 0.0)  # a save after every iteration
    with monkeypatch.context() as patched:
        patched.setattr(Progress, "update", killed_at_2)
        with pytest.raises(Killed):
            run.run_job(**job, outputs=outputs)
    checkpoint = tmp_path / "objt" / run.CHECKPOINT_NAME
    assert checkpoint.exists() and not any(Path(o).exists() for o in outputs)
    run.run_job(**job, outputs=outputs)
    assert not checkpoint.exists()
    for path, straight_path in zip(outputs, straight_outputs, strict=True):
        resumed, straight = read_run(path), read_run(straight_path)
        assert resumed.provenance["params"]["resumed_after_iteration"] == 1
        assert straight.provenance["params"]["resumed_after_iteration"] == 0
        assert resumed.trace.equals(straight.trace)


def test_run_job_rejects_a_private_epsilon_for_the_nonprivate_variant(jobs) -> None:
    from dpdl.errors import ConfigError

    settings = grid.run_settings(CONFIG, "main", grid.NONPRIVATE)
    job = {
        "horizon": "main",
        "dataset": "mnist",
        "settings": settings,
        "npz": jobs["root"] / "mnist.npz",
        "card": {},
    }
    with pytest.raises(ConfigError, match="only 'nonprivate' runs at epsilon inf"):
        run.run_job(**job, variant_name="nonprivate", epsilon=1.0, outputs=["x.npz"])
    with pytest.raises(ConfigError, match="only 'nonprivate' runs at epsilon inf"):
        run.run_job(**job, variant_name="nonprivate_outp", epsilon=1.0, outputs=["x.npz"])
    with pytest.raises(ConfigError, match="only 'nonprivate' runs at epsilon inf"):
        run.run_job(**job, variant_name="outp", epsilon=math.inf, outputs=["x.npz", "y.npz"])
    with pytest.raises(ConfigError, match="3 output paths for 2 seeds"):
        run.run_job(**job, variant_name="objt", epsilon=1.0, outputs=["a.npz", "b.npz", "c.npz"])


def test_per_seed_tables_bands_figures_tables_and_claims(jobs, tmp_path) -> None:
    seeds = {name: aggregation.seed_values(name, paths) for name, paths in jobs["paths"].items()}
    fig1 = seeds["fig1"]
    assert list(fig1.columns) == aggregation.SEED_COLUMNS and set(fig1["seed"]) == {0, 1}
    assert set(fig1["metric"]) == {"noise_magnitude", "test_error", *aggregation.PRIVACY_METRICS}
    assert (
        len(fig1[fig1["metric"] == "test_error"]) == 3 * 1 * 2 * 3
    )  # algorithms x epsilons x seeds x logged t
    aggregates = {name: aggregation.bands(name, table) for name, table in seeds.items()}
    assert aggregates["fig1"].equals(aggregation.aggregate("fig1", jobs["paths"]["fig1"]))
    assert list(aggregates["fig1"].columns) == aggregation.AGGREGATE_COLUMNS
    assert (aggregates["fig1"].loc[aggregates["fig1"]["metric"] == "test_error", "n"] == 2).all()
    fig2a = aggregates["fig2a"]
    assert set(fig2a["iteration"]) == {3} and math.inf in set(fig2a["epsilon"])
    noiseless = seeds["noiseless"]
    assert set(noiseless["variant"]) == set(grid.NOISELESS) and set(noiseless["seed"]) == {0}
    objp, outp = (
        noiseless[(noiseless["variant"] == v) & (noiseless["metric"] == "test_error")] for v in grid.NOISELESS
    )
    assert (
        list(objp["iteration"]) == list(outp["iteration"]) == [1, 2, 3]
    )  # one deterministic run each, every t
    for name in ("fig1", "fig2a"):
        csv = tmp_path / f"{name}.csv"
        aggregates[name].to_csv(csv, index=False)
        figures.draw_figure(
            name, aggregation.read_aggregate(csv), tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"
        )
        assert (tmp_path / f"{name}.png").stat().st_size > 0 and (tmp_path / f"{name}.pdf").stat().st_size > 0
    table = tables.remark3_table(aggregates["remark3"])
    assert set(table["algorithm"]) == {"ObjT", "OutP", "ObjP"}
    assert table.loc[table["algorithm"] == "ObjT", "paper_pct"].item() == 15.64
    for name, table in seeds.items():  # the CSV round trip keeps the non-private epsilon (inf)
        table.to_csv(tmp_path / f"{name}_seeds.csv", index=False)
    read = {f"{name}_seeds": aggregation.read_aggregate(tmp_path / f"{name}_seeds.csv") for name in seeds}
    card = cli.judge_claims(read, grid.claim_scale(grid.claim_settings(CONFIG), 0), {"trust_radius": "x"})
    assert len(card) == len(claims.CLAIMS) == len({c.id for c in claims.CLAIMS})
    judged = card.set_index("id")
    assert judged.loc["dp_iadmm.mnist_objt_eps0.05", "verdict"] == NOT_AT_SCALE
    assert judged.loc["dp_iadmm.nonprivate_equivalence_mnist", "verdict"] == NOT_AT_SCALE
    assert judged.loc["dp_iadmm.femnist_objt_eps5", "verdict"] == "data unavailable"  # no FEMNIST table
    errors = (
        seeds["fig2a"].query("epsilon == 0.05 and metric == 'test_error'").groupby("variant")["value"].mean()
    )
    gap = 100 * (errors["outp"] - errors["objt"])
    assert float(judged.loc["dp_iadmm.mnist_gap_eps0.05", "our_value"]) == pytest.approx(gap, abs=0.01)


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


def claim(claim_id: str):
    return next(c for c in claims.CLAIMS if c.id == f"dp_iadmm.{claim_id}")


def test_cli_parses_epsilon_and_names_the_settings_function() -> None:
    import argparse

    from dpdl.errors import ConfigError

    assert cli._epsilon("0.05") == 0.05 and math.isinf(cli._epsilon("inf"))
    for bad in ("0", "-1", "nan", "x"):
        with pytest.raises(ConfigError, match="--epsilon must be a number > 0"):
            cli._epsilon(bad)
    parser = argparse.ArgumentParser()
    cli.add_commands(parser.add_subparsers())
    args = parser.parse_args(
        ["dp_iadmm", "optimum", "--data", "m.npz", "--settings", "{}", "--out", "o.csv", "o.md"]
    )
    with pytest.raises(ConfigError, match=r"pass dpdl\.studies\.dp_iadmm\.grid\.optimum_settings\(config\)"):
        args.command(args)


REDECIDED = {  # the open settings' defaults, re-decided from the paper's text (docs/studies/dp_iadmm.md, Readings)
    "nonprivate_algorithm": "objp",  # Section 4: "OutP and ObjP are equivalent in a nonprivate setting"; note 7.6
    "outp_noise": "sigma",  # Section 4: "the Gaussian mechanism ... as in [10]", "(epsilon-bar, delta-bar)-DP"
    "trust_radius": "code_const",  # A.11's 1/t^2 against its own ObjT results: the note's recommendation (7.1)
    "outp_gradient": "agent_mean",  # "the baseline algorithm in [10] by OutP"; note 7.5c
    "sensitivity": "eq20",  # Section 4: "we compute Delta-bar_p^t in (11b) as (20)" (not a reading)
}
AS_WRITTEN = {  # not open in the paper: (37) as written; the authors' code's form rides with outp_noise_variance (#40)
    "outp_regulariser": "eq37",
}


@pytest.mark.parametrize("name", ["config.yaml", "ci.yaml", "paper.yaml"])
def test_every_config_takes_the_redecided_defaults(name: str) -> None:
    from dpdl.config import load_config

    section = load_config(ROOT / "config" / name)[grid.STUDY]
    assert {key: section[key] for key in REDECIDED | AS_WRITTEN} == REDECIDED | AS_WRITTEN


def test_readings_each_set_one_open_setting_away_from_its_default_and_rebuild_the_runs() -> None:
    from dpdl.config import load_config
    from dpdl.readings import DEFAULT, reading_config, study_readings

    config = load_config(ROOT / "config" / "config.yaml")
    found = study_readings(grid.STUDY)
    assert found == readings.READINGS and found[0].name == DEFAULT and 2 <= len(found) - 1 <= 4
    for reading in found[1:]:
        built = reading_config(config, grid.STUDY, reading.name)[grid.STUDY]
        changed = {key for key in built if built[key] != config[grid.STUDY][key]}
        assert changed == set(reading.switches) and changed <= set(grid.SWITCHES), reading.name
        (key,) = changed & set(REDECIDED)  # one open setting, and with it only the code's forms (AS_WRITTEN)
        assert changed - {key} <= set(AS_WRITTEN), reading.name
        assert REDECIDED[key] != built[key]  # the reading is the other resolution of a re-decided setting
        reference = grid.run_settings(
            config, "main", grid.NONPRIVATE
        )  # rerun by every reading (and the runs of
        assert (
            grid.run_settings({grid.STUDY: built}, "main", grid.NONPRIVATE) != reference
        )  # the switch's algorithm)
        assert grid.claim_settings({grid.STUDY: built}) != grid.claim_settings(
            config
        )  # the scorecard names it
    assert [r.name for r in found if r.post_hoc] == ["default", "nonprivate_objt", "outp_noise_variance"]
    assert {key for r in found for key in r.switches} == set(REDECIDED) - {"sensitivity"} | set(AS_WRITTEN)
    noise_variance = next(r for r in found if r.name == "outp_noise_variance")  # the authors' OutP (#40)
    assert noise_variance.switches == {"outp_noise": "variance", "outp_regulariser": "code_server_w"}


def test_reading_cells_narrow_one_reading_to_the_jobs_it_has_finished() -> None:
    """reading_cells (#38: a reading still building is judged on what it has): the named reading's build and its
    claims see only its cells, so Fig. 4's claims are "not run at this scale" under it; the default and the other
    readings keep the config's cells; a cell the config does not build, the default, or a study without cells
    is refused in one line at validation."""
    from dpdl.config import load_config, validate_config
    from dpdl.errors import ConfigError
    from dpdl.readings import narrowing_notes, reading_config

    config = {**load_config(ROOT / "config" / "paper_mnist.yaml"), "reading_cells": {}}
    cells = config[grid.STUDY]["cells"]
    finished = [cell for cell in cells if "/outp_plus/" not in cell and "/outp_rho" not in cell]
    assert len(finished) == 18
    narrowed = validate_config({**config, "reading_cells": {"dp_iadmm/outp_noise_variance": finished}})
    built = reading_config(narrowed, grid.STUDY, "outp_noise_variance")
    assert (
        built[grid.STUDY]["cells"] == finished and built["reading_cells"] == {}
    )  # the nested build's own config
    assert set(grid.claim_settings(built)["grid_aggregates"]) == {
        "fig1",
        "fig2a",
        "noiseless",
    }  # Fig. 4 left out
    both = {"dp_iadmm/mnist", "dp_iadmm/femnist"}
    assert not any("/outp_rho" in path for path in grid.runs(built, both))
    assert narrowing_notes(narrowed) == [  # dpdl status says which runs it does not count
        "dp_iadmm/outp_noise_variance: built on 18 of the config's 30 cells (reading_cells); "
        "the runs of the other 12 are not counted"
    ]
    assert narrowing_notes(config) == []
    for other in ("trust_inv_t2", "outp_global_mean"):  # the other readings build every cell
        assert reading_config(narrowed, grid.STUDY, other)[grid.STUDY]["cells"] == cells
    assert set(
        grid.claim_settings(reading_config(config, grid.STUDY, "outp_noise_variance"))["grid_aggregates"]
    ) == {
        "fig1",
        "fig2a",
        "fig4",
        "noiseless",
    }
    bad = {
        "dp_iadmm/outp_noise_variance": ["main/mnist/objt_a10/eps1"],
        "dp_iadmm/default": finished,
        "dvp_pvp/eta_1": finished,
        "dp_iadmm/outp_variance": finished,
    }
    expected = [r"\['main/mnist/objt_a10/eps1'\] are not in dp_iadmm.cells", "narrow dp_iadmm.cells instead"]
    expected += ["'dvp_pvp' is not a study with a `cells` key", "dp_iadmm has no reading 'outp_variance'"]
    for (key, value), message in zip(bad.items(), expected, strict=True):
        with pytest.raises(ConfigError, match=message):
            validate_config({**config, "reading_cells": {key: value}})


def test_only_the_reference_run_depends_on_the_nonprivate_algorithm() -> None:
    """Switching nonprivate_algorithm (the nonprivate_objt reading) changes the params of the `nonprivate` run
    alone, so the reading's build reuses every private run of the main build."""
    objt = {**CONFIG, grid.STUDY: {**SECTION, "nonprivate_algorithm": "objt"}}
    for horizon in grid.HORIZONS:
        for name in ("objp", "objt", "outp", "outp_plus", "nonprivate_outp"):
            assert grid.run_settings(objt, horizon, name) == grid.run_settings(CONFIG, horizon, name)
    assert grid.run_settings(objt, "main", grid.NONPRIVATE) != grid.run_settings(
        CONFIG, "main", grid.NONPRIVATE
    )


@pytest.mark.parametrize(
    ("switch", "reached"),
    [
        ("outp_noise", {"outp", "outp_plus", "outp_rho0.1", "nonprivate_outp"}),
        ("outp_gradient", {"outp", "outp_plus", "outp_rho0.1", "nonprivate_outp"}),
        ("outp_regulariser", {"outp", "outp_plus", "outp_rho0.1", "nonprivate_outp"}),
        ("trust_radius", {"objt", "objt_a10"}),
        ("sensitivity", {"objp", "objt", "objp_a100", "objt_a10", "nonprivate_objp"}),
    ],
)
def test_a_switch_reruns_only_the_runs_of_the_algorithm_that_reads_it(switch: str, reached: set) -> None:
    """A run's params hold its algorithm's switches only, so a reading (one switch) reruns the runs it reaches."""
    switched = {**CONFIG, grid.STUDY: {**SECTION, switch: OTHER_VALUE[switch]}}
    names = ("objp", "objt", "outp", "outp_plus", "outp_rho0.1", "objp_a100", "objt_a10", "nonprivate_objp")
    for name in (*names, "nonprivate_outp", grid.NONPRIVATE):
        changed = grid.run_settings(switched, "main", name) != grid.run_settings(CONFIG, "main", name)
        assert changed == (name in reached or name == grid.NONPRIVATE), name


@pytest.mark.parametrize(
    ("name", "switch"),
    [("objt", "outp_noise"), ("objt", "outp_gradient"), ("outp", "trust_radius"), ("outp", "sensitivity")]
    + [("objp", "trust_radius"), ("objp", "outp_gradient"), ("objt", "outp_regulariser")],
)
def test_a_run_does_not_depend_on_the_switches_left_out_of_its_params(jobs, tmp_path, name, switch) -> None:
    """What licenses leaving a switch out of a run's params: the run's trace is the same whatever its value."""
    assert switch not in grid.run_setting_keys(name)
    npz = jobs["root"] / "mnist.npz"
    traces = []
    for section in (SECTION, {**SECTION, switch: OTHER_VALUE[switch]}):
        settings = {key: section[key] for key in grid.PARAM_SWITCHES}  # what the run reads, were it given
        settings |= grid.run_settings({**CONFIG, grid.STUDY: section}, "main", name)
        outs = [
            tmp_path / f"{name}_{len(traces)}_seed{seed}.npz" for seed in grid.seeds(SECTION, "main", name)
        ]
        run.run_job(
            horizon="main",
            dataset="mnist",
            variant_name=name,
            epsilon=1.0,
            settings=settings,
            npz=npz,
            card={"npz_sha256": sha256_file(npz)},
            outputs=[str(out) for out in outs],
        )
        traces.append(pd.concat([read_run(out).trace for out in outs]))
    assert traces[0].equals(traces[1])
