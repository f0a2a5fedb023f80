"""The hash chain (issue 61 item 2): each step records the sha256 of what it read beside what it wrote, and
``dpdl check`` names the first broken link.

A small build is made here by the real writers and readers of :mod:`dpdl.io` and :mod:`dpdl.runs`, each step inside
:func:`dpdl.chain.step` as ``dpdl`` runs every command: prepared data -> a calibration (an intermediate) -> runs ->
a per-seed table and an audit table -> the study's claims -> the merged scorecard. Each class of edit the probe
found passing ``check`` is then made to a copy, and the check must name the file and its first broken link.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl import chain
from dpdl.check import chain_problems, run_problems
from dpdl.cli import main
from dpdl.io import load_npz, read_csv, read_json, save_npz, sha256_file, write_json, write_table, write_text
from dpdl.runs import execute, read_run, write_run

DATA = "data/processed/dzoa/lasso.npz"
CARD = "data/processed/dzoa/lasso.json"
CALIBRATION = "results/dzoa/calibration.json"
RUNS = [f"results/dzoa/runs/dzoa/eps1/trial{trial:03d}.npz" for trial in range(3)]
SEEDS = "results/dzoa/aggregates/fig2_seeds.csv"
AUDIT = "results/audit/dzoa.csv"
CLAIMS = "results/claims/dzoa.csv"
SCORECARD = "results/claims.csv"


def provenance(trial: int, dataset_sha256: str) -> dict:
    """A dzoa run's provenance (the run schema's fields), of trial ``trial`` on the arrays ``dataset_sha256``."""
    privacy = dict.fromkeys(("eps_per_iteration", "eps_composed_rdp", "eps_composed_pld"), 0.5)
    return {
        **privacy,
        "study": "dzoa",
        "dataset": "dzoa/lasso",
        "dataset_sha256": dataset_sha256,
        "algorithm": "dzoa",
        "params": {"iterations": 3},
        "seed": trial,
        "epsilon": 1.0,
        "delta": 1e-3,
        "accountant": {"name": "dp_accounting", "version": "0.6.0"},
        "noise_scales": None,
        "switches": {},
    }


def build(folder: Path) -> None:
    """Every step of a small build of one study in ``folder`` (the working folder), each as ``dpdl`` runs it."""
    save_npz(DATA, {"x": np.arange(12.0).reshape(4, 3)})
    write_json(CARD, {"name": "dzoa/lasso", "npz_sha256": sha256_file(DATA)})
    with chain.step():  # calibrate: the prepared arrays -> an intermediate
        scale = float(load_npz(DATA)["x"].sum())
        write_json(CALIBRATION, {"scale": scale, "points": list(range(20))})
    with chain.step():  # run: the arrays, the card and the calibration -> one run per trial
        dataset_sha256 = read_json(CARD)["npz_sha256"]
        scale = read_json(CALIBRATION)["scale"] + float(load_npz(DATA)["x"][0, 0])
        for trial, path in enumerate(RUNS):
            trace = pd.DataFrame({"iteration": [1, 2, 3], "error": [scale, scale / 2, scale / (4 + trial)]})
            write_run(path, execute(lambda t=trace: t, provenance(trial, dataset_sha256), iterations=3))
    with chain.step():  # aggregate: the runs -> the per-seed table
        rows = [
            {"seed": read_run(path).provenance["seed"], "value": read_run(path).trace["error"].iloc[-1]}
            for path in RUNS
        ]
        write_text(SEEDS, pd.DataFrame(rows).to_csv(index=False, lineterminator="\n"))
    with chain.step():  # audit: the arrays -> an audit table
        write_text(AUDIT, f"cell,eps_lb\nc1,{load_npz(DATA)['x'].max() / 10}\n")
    with chain.step():  # claims: the per-seed and audit tables -> the study's scorecard
        verdict = (
            "reproduced"
            if read_csv(SEEDS)["value"].mean() > read_csv(AUDIT)["eps_lb"].max()
            else "not reproduced"
        )
        write_table(
            pd.DataFrame({"id": ["dzoa.c1"], "verdict": [verdict]}), CLAIMS, CLAIMS.replace(".csv", ".md")
        )
    with (
        chain.step()
    ):  # scorecard: the claims files (read by pandas directly, told to the chain) -> the merged one
        chain.note_read(CLAIMS)
        write_text(SCORECARD, pd.read_csv(CLAIMS).to_csv(index=False, lineterminator="\n"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chain") / "build"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        build(folder)
    return folder


@pytest.fixture
def project(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the small build to edit, as the working folder."""
    folder = tmp_path / "build"
    shutil.copytree(built, folder)
    monkeypatch.chdir(folder)
    return folder


def check_chain() -> list[str]:
    """What ``dpdl check --configfile`` reports of the chain: the runs' links and the records beside the rest."""
    links: list[chain.Record] = []
    problems, _ = run_problems(sorted(Path().glob("results/*/runs/**/*.npz")), links)
    return problems + chain_problems(links)


def test_every_step_records_what_it_read_and_an_intact_build_passes(project: Path, caplog) -> None:
    run = read_run(RUNS[0]).provenance["chain"]
    assert set(run["inputs"]) == {DATA, CARD, CALIBRATION} and len(run["arrays_sha256"]) == 64
    assert set(read_json(chain.record_path(SEEDS))["inputs"]) == set(RUNS)
    assert set(read_json(chain.record_path(CLAIMS))["inputs"]) == {SEEDS, AUDIT}
    assert set(read_json(chain.record_path(SCORECARD))["inputs"]) == {CLAIMS}
    assert read_json(chain.record_path(CALIBRATION))["inputs"] == {DATA: sha256_file(DATA)}
    with caplog.at_level(logging.WARNING, logger="dpdl"):
        assert check_chain() == []
    assert chain.NO_RECORD not in caplog.text


def test_a_number_edited_in_a_run_file_is_its_first_broken_link(project: Path) -> None:
    arrays = load_npz(RUNS[1])
    arrays["trace/error"] = arrays["trace/error"] * 3
    save_npz(RUNS[1], arrays)  # its provenance, and the chain in it, as they were
    problems = check_chain()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{RUNS[1]}: arrays sha256 now ")
    assert (
        "the first broken link of the hash chain" in problems[0]
        and "4 more files made from it" in problems[0]
    )


def test_a_run_edited_with_its_own_hash_forged_breaks_at_the_table_made_from_it(project: Path) -> None:
    arrays = load_npz(RUNS[1])
    arrays["trace/error"] = arrays["trace/error"] * 3
    provenance = json.loads(str(arrays["provenance"]))
    trace = {name: array for name, array in arrays.items() if name.startswith("trace/")}
    provenance["chain"]["arrays_sha256"] = chain.arrays_sha256(trace)
    arrays["provenance"] = np.array(json.dumps(provenance))
    save_npz(RUNS[1], arrays)
    problems = check_chain()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{SEEDS}: made from {RUNS[1]}, read with sha256 ")
    recorded = read_json(chain.record_path(SEEDS))["inputs"][RUNS[1]]
    assert f"read with sha256 {recorded[:12]}, now {sha256_file(RUNS[1])[:12]}" in problems[0]


@pytest.mark.parametrize(
    "edited",
    [SEEDS, AUDIT, CLAIMS],
    ids=["per-seed table", "audit table", "verdict edited by hand"],
)
def test_a_table_edited_after_its_step_wrote_it_is_named(project: Path, edited: str) -> None:
    path = Path(edited)
    text = path.read_text()
    if edited == CLAIMS:  # the verdict flipped
        flipped = "reproduced" if "not reproduced" in text else "not reproduced"
        path.write_text(text.replace("not reproduced", "reproduced").replace(",reproduced", f",{flipped}"))
    else:
        path.write_text(text.replace("1", "7", 1))
    assert path.read_text() != text
    problems = check_chain()
    assert len(problems) == 1, problems
    recorded = read_json(chain.record_path(edited))["sha256"]
    assert problems[0].startswith(
        f"{edited}: sha256 now {sha256_file(edited)[:12]}, not the {recorded[:12]} its step"
    )
    assert f"delete {edited} and rerun" in problems[0]


def test_a_truncated_intermediate_is_named_before_the_runs_made_from_it(project: Path) -> None:
    path = Path(CALIBRATION)
    path.write_bytes(path.read_bytes()[:20])
    problems = check_chain()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{CALIBRATION}: sha256 now ") and "more files made from it" in problems[0]


def test_an_input_rebuilt_after_a_step_read_it_breaks_the_link(project: Path) -> None:
    with chain.step():  # the audit table written again (other numbers), the claims not judged again
        write_text(AUDIT, "cell,eps_lb\nc1,0.5\n")
    problems = check_chain()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{CLAIMS}: made from {AUDIT}, read with sha256 ")
    assert f"rebuild {AUDIT} and what is made from it" in problems[0]


def test_a_build_made_before_the_chain_is_said_not_failed(project: Path, caplog) -> None:
    for sidecar in Path("results").rglob(f".*{chain.RECORD_SUFFIX}"):
        sidecar.unlink()
    for path in RUNS:  # a run as written before: no chain in its provenance
        arrays = load_npz(path)
        provenance = json.loads(str(arrays["provenance"]))
        del provenance["chain"]
        arrays["provenance"] = np.array(json.dumps(provenance))
        save_npz(path, arrays)
    with caplog.at_level(logging.WARNING, logger="dpdl"):
        assert check_chain() == []
    assert f"files under results/ have no hash-chain record ({chain.NO_RECORD})" in caplog.text


def test_the_snapshot_carries_the_top_of_the_chain_and_check_verifies_it(project: Path) -> None:
    outputs = {
        "claims.csv": Path(CLAIMS),
        "aggregates/fig2_seeds.csv": Path(SEEDS),
        "audit/audit.csv": Path(AUDIT),
    }
    top = chain.published_chain(outputs)
    assert top["claims.csv"]["made_from"] == {
        "aggregates/fig2_seeds.csv": sha256_file(SEEDS),
        "audit/audit.csv": sha256_file(AUDIT),
    }
    assert (
        top["aggregates/fig2_seeds.csv"]["made_from"] == {}
    )  # its runs are not published: their digest only
    snapshot = Path("snapshot")
    for name, source in outputs.items():
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, snapshot / name)
    files = {name: snapshot / name for name in outputs}
    assert (
        chain.published_breaks(files, top) == [] and chain.published_breaks(files, {}) == []
    )  # an old snapshot
    table = snapshot / "aggregates/fig2_seeds.csv"
    table.write_text(table.read_text().replace("1", "7", 1))
    problems = chain.published_breaks(files, top)
    assert len(problems) == 1 and problems[0].startswith(f"{table.as_posix()}: sha256 now ")
    assert "1 more files made from it" in problems[0] and problems[0].endswith(
        "publish the study again; 1 more files made from it break with it"
    )


def test_every_dpdl_command_is_a_step(project: Path) -> None:
    out = "results/config_reference.md"
    assert main(["config-reference", "--out", out]) == 0
    record = read_json(chain.record_path(out))
    assert record == {"file": out, "sha256": sha256_file(out), "inputs": {}}
    assert chain._current is None  # the step ends with the command
