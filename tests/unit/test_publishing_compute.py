"""The compute a snapshot records (dpdl.publishing.compute): the runs behind its tables, what they cost, and
what the claims not run would cost under the papers' grids."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_compute_counts_the_main_build_and_built_readings_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading still building (its runs exist, its scorecard not yet) adds nothing to the published compute,
    nor does a run a reading reuses from the main build; the runs made on a GPU are counted by card (#37)."""
    import numpy as np

    from dpdl.io import dumps_json, save_npz
    from dpdl.publishing.compute import run_compute

    def run(path: str, seconds: float, device: str = "cpu: cpu") -> None:
        provenance = {
            "timing": {"wall_time_s": seconds},
            "params": {"backend": {"name": "jax", "device": device}},
        }
        save_npz(tmp_path / path, {"provenance": np.array(dumps_json(provenance))})

    run("results/wddp/runs/adult/a.npz", 2.0)
    run("results/readings/wddp/per_setting/results/wddp/runs/adult/a.npz", 3.0, "gpu: NVIDIA H200")
    run("results/readings/wddp/one_shot/results/wddp/runs/adult/a.npz", 5.0)
    monkeypatch.chdir(tmp_path)
    assert run_compute("wddp", ["default", "per_setting"]) == (
        5.0,
        {"NVIDIA H200": {"runs": 1, "wall_seconds": 3.0}},
    )
    assert run_compute("wddp", ["default"]) == (2.0, {})
    reused = tmp_path / "results/readings/wddp/per_setting/results/wddp/runs/adult/b.npz"
    reused.hardlink_to(tmp_path / "results/wddp/runs/adult/a.npz")  # a run the reading reuses (seeded)
    assert run_compute("wddp", ["default", "per_setting"])[0] == 5.0
    run(
        "results/readings/wddp/per_setting/results/wddp/runs/adult/c.npz", 7.0
    )  # of a cell reading_cells leaves out
    assert run_compute("wddp", ["default", "per_setting"])[0] == 12.0
    narrowed = {"per_setting": ["results/wddp/runs/adult/a.npz", "results/wddp/runs/adult/b.npz"]}
    assert run_compute("wddp", ["default", "per_setting"], narrowed)[0] == 5.0


def test_compute_per_table_follows_the_recorded_inputs_down_to_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#39: a table's compute is that of the runs its job read, directly or through an intermediate file, each
    counted once (CPU time where the run records it, else its wall time; a GPU run's wall time as GPU time); a
    table with no record is left out."""
    import numpy as np

    from dpdl.io import dumps_json, save_npz
    from dpdl.publishing.compute import compute_by_aggregate

    def run(path: str, **timing: float) -> str:
        provenance = {"timing": timing, "seed": int(path[-7:-4])}
        save_npz(tmp_path / path, {"provenance": np.array(dumps_json(provenance))})
        return path

    a1 = run("results/dzoa/runs/a/trial001.npz", wall_time_s=9.0, cpu_time_s=2.0)
    a2 = run("results/dzoa/runs/a/trial002.npz", wall_time_s=4.0)  # made before CPU time was recorded
    b1 = run("results/dzoa/runs/b/trial001.npz", wall_time_s=7.0, cpu_time_s=1.0)
    gpu = {
        "timing": {"wall_time_s": 0.5, "cpu_time_s": 0.75},
        "seed": 1,
        "params": {"backend": {"device": "gpu: H"}},
    }
    save_npz(tmp_path / "results/dzoa/runs/c/trial001.npz", {"provenance": np.array(dumps_json(gpu))})
    rows = [
        ("results/dzoa/aggregates/gpu.csv", f"results/dzoa/runs/c/trial001.npz,{b1}"),
        ("results/dzoa/aggregates/fig2.csv", f"{a1},results/dzoa/calibration.npz"),
        ("results/dzoa/calibration.npz", f"{a2},data/processed/dzoa/lasso.npz,{a1}"),
        ("results/dzoa/aggregates/fig3.csv", f"{b1},{a1}"),
        ("results/dzoa/aggregates/fig1.csv", ""),  # a table made from no input
        ("results/dzoa/aggregates/old.csv", "-"),  # no record of its inputs
        ("figures/dzoa/fig2.png", "results/dzoa/aggregates/fig2.csv"),
        # a paper build lists thousands of inputs on one line (over the csv module's 131,072-character field)
        (
            "results/dzoa/aggregates/wide.csv",
            ",".join(f"data/processed/dzoa/part{i:05d}.npz" for i in range(9000)),
        ),
    ]
    header = "output_file\tdate\trule\tlog-file(s)\tinput-file(s)\tshellcmd\tstatus\tplan\n"
    shell = """python -m dpdl dzoa run --settings '{"a": [1, 2]}' > "log" 2>&1"""  # as Snakemake writes it: unquoted
    summary = header + "".join(f"{out}\t-\tr\t-\t{inputs}\t{shell}\tok\tno update\n" for out, inputs in rows)
    monkeypatch.chdir(tmp_path)
    assert compute_by_aggregate("dzoa", summary) == {
        "aggregates/fig1.csv": {"runs": 0, "cpu_seconds": 0.0},
        "aggregates/fig2.csv": {"runs": 2, "cpu_seconds": 6.0},
        "aggregates/fig3.csv": {"runs": 2, "cpu_seconds": 3.0},
        "aggregates/gpu.csv": {
            "runs": 2,
            "cpu_seconds": 1.0,
            "gpu_seconds": 0.5,
        },  # the GPU run's host CPU: no
        "aggregates/wide.csv": {"runs": 0, "cpu_seconds": 0.0},
    }

    import dpdl.publishing.compute as compute

    reads = []
    monkeypatch.setattr(
        compute,
        "read_run",
        lambda path: (
            reads.append(str(path)) or type("Run", (), {"provenance": {"timing": {"wall_time_s": 1.0}}})()
        ),
    )
    kept: dict[str, dict] = {}  # publish --compute's cache: the runs behind the tables, then the others
    compute_by_aggregate("dzoa", summary, kept)
    assert sorted(kept) == sorted({a1, a2, b1, "results/dzoa/runs/c/trial001.npz"})
    assert sorted(compute.run_provenances("dzoa", kept)) == sorted(
        kept
    )  # every run of the build: none read again
    assert sorted(reads) == sorted(kept)


def test_the_cost_of_runs_not_done_projects_gpu_time_from_gpu_runs_and_cpu_time_from_cpu_runs() -> None:
    """#37: a run made on a GPU charges GPU time, not CPU time: the projection's CPU rate comes from CPU runs alone
    (a dataset with none is counted, not projected), its GPU rate from GPU runs."""
    from dpdl.config import load_config
    from dpdl.publishing.compute import not_run_cost

    paper = load_config(ROOT / "config" / "paper.yaml")
    objt = "results/dp_iadmm/runs/main/mnist/objt/eps1/seed{}.npz"

    def run(device: str, wall: float, cpu: float) -> dict:
        timing = {"wall_time_s": wall, "cpu_time_s": cpu, "iterations": 20_000}
        return {"timing": timing, "params": {"backend": {"name": "jax", "device": device}}}

    card = pd.DataFrame({"id": ["dp_iadmm.mnist_long_objt_eps0.01"], "verdict": ["not run at this scale"]})
    on_gpu = {
        objt.format(0): run("gpu: NVIDIA H200", 1.0, 1.5),
        objt.format(1): run("gpu: NVIDIA H200", 3.0, 4.5),
    }
    cost = not_run_cost("dp_iadmm", card, paper, on_gpu)
    remark3 = cost["claims"]["dp_iadmm.mnist_long_objt_eps0.01"]  # 3 algorithms x 10 seeds of T = 1e6
    assert cost["ms_per_run_iteration"] == {} and cost["gpu_ms_per_run_iteration"] == {"mnist": 0.1}
    assert remark3 == {"runs": 30, "cpu_hours": 0.0, "gpu_hours": round(30 * 1e6 * 1e-4 / 3600, 2),
                       "runs_not_projected": {"mnist": 30}}  # fmt: skip
    both = {**on_gpu, objt.format(2): run("cpu: cpu", 500.0, 400.0)}
    cost = not_run_cost("dp_iadmm", card, paper, both)
    assert cost["ms_per_run_iteration"] == {
        "mnist": 20.0
    }  # 400 CPU-s over 20,000 iterations; the GPU runs: none
    assert cost["claims"]["dp_iadmm.mnist_long_objt_eps0.01"]["cpu_hours"] == round(30 * 1e6 * 0.02 / 3600, 1)


@pytest.mark.parametrize("study", ["dvp_pvp", "wddp", "dp_iadmm", "dzoa"])
def test_each_claims_paper_runs_are_runs_of_the_paper_grid_and_cost_their_horizon(study: str) -> None:
    """#39's projection reads, for a claim not run, the runs its table reads under config/paper.yaml and the
    iterations each makes: every such run is one of the study's paper runs, and its iterations are the config's."""
    from dpdl.config import load_config
    from dpdl.studies import study_module

    paper = load_config(ROOT / "config" / "paper.yaml")
    module = study_module(study)
    every = set(module.runs(paper, {d.name for d in module.PREPARED}))
    needed = {path for claim in module.CLAIMS for path in module.table_runs(paper, claim.aggregate)}
    assert needed and needed <= every
    section = paper[study]
    for path in sorted(needed)[:: max(1, len(needed) // 50)]:
        group, iterations = module.run_work(paper, path)
        if study == "dp_iadmm":
            expected = section["long_iterations" if "/runs/long/" in path else "iterations"]
        else:
            expected = section["outer_iterations" if study == "dzoa" else "iterations"]
        assert iterations == expected and group, path
    if study == "dp_iadmm":  # Remark 3's runs at T = 1e6, Fig. 2a's at 2e4, each on its dataset
        assert module.run_work(paper, module.table_runs(paper, "remark3_seeds")[0]) == ("mnist", 1_000_000)
        assert {module.run_work(paper, p) for p in module.table_runs(paper, "fig2b_seeds")} == {
            ("femnist", 20_000)
        }
