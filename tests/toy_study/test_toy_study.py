"""The toy study (``tests/toy_study/toy``) built, judged and published through the real Snakefile.

It lives outside ``dpdl.studies`` and is registered by the environment alone (``DPDL_EXTRA_STUDIES=toy``, this
folder on ``PYTHONPATH``): no existing file of the project names it (``tests/unit/test_structure.py``). A copy of
the workflow builds its default target with the audit on (11 Snakemake jobs), then ``dpdl publish`` and ``dpdl
publish --audit`` write its snapshot into a temporary folder, which ``dpdl check`` accepts. Its audit
(``toy/audit.py``) does not refute the correct mechanism, and refutes one whose noise scale is halved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import warm_python
from fixtures import copy_workflow

from dpdl.judgement import NOT_REFUTED, PREMISE_HOLDS, REFUTED
from dpdl.verdicts import NOT_AT_SCALE

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# data_prepare, toy_release, toy_figure, toy_claims, audit_study, audit_data_premises, the datasets, privacy and
# provenance tables, scorecard, all
JOBS = 11
CONFIG = {
    "studies": ["toy"],
    "data": {},
    **dict.fromkeys(("dvp_pvp", "wddp", "dp_iadmm", "dzoa"), {}),  # required sections of the four papers
    "toy": {"seeds": 200},
    "audit": {"enabled": True},  # 200 runs, x 2 for the toy's cell (toy.audit.RUNS_SCALE)
}


def run(work: Path, env: dict, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("toy") / "project"
    copy_workflow(work, CONFIG)
    env = {k: v for k, v in os.environ.items() if k != "DPDL_DATA_MIRROR"}
    env.update(
        DPDL_EXTRA_STUDIES="toy",
        PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT / "src")]),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        **warm_python.THREADS,
    )
    # Snakemake and each job forked warm (tests/warm_python.py), each a fresh `python -m` of this environment:
    # dpdl, never imported by the server, reads DPDL_EXTRA_STUDIES and finds the toy on PYTHONPATH as a new
    # process would. DPDL_TEST_WARM=0: all cold.
    env, python = warm_python.interpreter(env)
    done = run(work, env, python, "-m", "snakemake", "--cores", "1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"work": work, "env": env, "python": python, "done": done}


def test_the_real_snakefile_builds_the_toy_in_few_jobs(built: dict) -> None:
    assert f"{JOBS} of {JOBS} steps (100%) done" in built["done"].stderr
    assert (built["work"] / "figures" / "toy" / "error.png").stat().st_size > 0


def test_its_claims_are_judged(built: dict) -> None:
    card = pd.read_csv(built["work"] / "results" / "claims" / "toy.csv")
    assert list(card["id"]) == ["toy.error_falls_with_epsilon", "toy.error_at_epsilon_1"]
    assert NOT_AT_SCALE not in set(card["verdict"]) and card["verdict"].notna().all()
    merged = pd.read_csv(built["work"] / "results" / "claims.csv").set_index("id")
    audited = {
        "toy.privacy.laplace_mean": NOT_REFUTED,
        "toy.premise.record_domain": PREMISE_HOLDS,
    }  # toy/audit.py
    assert set(merged.index[merged["study"] == "toy"]) == {*card["id"], *audited}
    assert {claim: merged.at[claim, "verdict"] for claim in audited} == audited


def test_it_is_published_into_a_folder_that_checks(built: dict) -> None:
    work, env = built["work"], built["env"]
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t")
    for command in (
        ("git", "init", "-q"),
        ("git", "add", "Snakefile", "workflow", "config"),
        (*git, "commit", "-qm", "b"),
    ):
        assert run(work, env, *command).returncode == 0
    out = work.parent / "published"
    dpdl = (built["python"], "-m", "dpdl")
    publish = (*dpdl, "publish", "--configfile", "config/config.yaml", "--studies", "toy", "--out", str(out))
    for command in (publish, (*publish, "--audit")):
        done = run(work, env, *command)
        assert done.returncode == 0, done.stderr[-3000:]
    folder = out / "toy"
    assert (folder / "figures" / "error.png").is_file() and (folder / "MANIFEST.json").is_file()
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    assert manifest["audit"]["config"]["enabled"] and "data_premises" in manifest
    assert {"audit/audit.csv", "audit/audit.json", "audit/premises.csv", "audit/data_premises.csv"} <= set(
        manifest["files"]
    )
    checked = run(work, env, *dpdl, "check", str(out))
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    card = pd.read_csv(out / "scorecard.csv").set_index("id")
    assert card.at["toy.privacy.laplace_mean", "verdict"] == NOT_REFUTED
    assert card.at["toy.premise.record_domain", "verdict"] == PREMISE_HOLDS


def test_its_audit_does_not_refute_the_calibrated_mechanism(built: dict) -> None:
    """One cell, 400 runs a side: eps_LB below the claimed epsilon, and the premises kept on the canary pair."""
    audit = pd.read_csv(built["work"] / "results" / "audit" / "toy.csv")
    assert len(audit) == 1 and audit.at[0, "runs"] == 400
    assert audit.at[0, "eps_lb"] < audit.at[0, "claimed_epsilon"] == 2 and not audit.at[0, "refutes"]
    assert audit.at[0, "ceiling"] > audit.at[0, "claimed_epsilon"]  # the runs could refute it
    assert (
        json.loads((built["work"] / "results" / "audit" / "toy.json").read_text())["timing"]["cpu_seconds"]
        < 5
    )
    premises = pd.read_csv(built["work"] / "results" / "audit" / "toy_data_premises.csv")
    assert list(premises["holds"]) == [True] and premises.at[0, "records"] == 100


def test_its_audit_refutes_a_planted_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """The noise scale halved in the toy's run code: the same audit (its seed, its runs) refutes the guarantee."""
    from dpdl import studies
    from dpdl.audit_report import audit_study, privacy_claim_rows

    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setattr(studies, "ALL", (*studies.ALL, "toy"))  # registered as DPDL_EXTRA_STUDIES would
    monkeypatch.setitem(studies.PACKAGES, "toy", "toy")
    from toy import run as toy_run

    correct = toy_run.noise_scale
    table, _ = audit_study("toy", 200, 0)
    assert privacy_claim_rows("toy", table).at[0, "verdict"] == NOT_REFUTED
    monkeypatch.setattr(toy_run, "noise_scale", lambda records, epsilon: correct(records, epsilon) / 2)
    table, _ = audit_study("toy", 200, 0)
    assert table.at[0, "eps_lb"] > table.at[0, "claimed_epsilon"]
    assert privacy_claim_rows("toy", table).at[0, "verdict"] == REFUTED
