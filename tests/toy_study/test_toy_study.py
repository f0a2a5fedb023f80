"""The toy study (``tests/toy_study/toy``) built, judged and published through the real Snakefile.

It lives outside ``dpdl.studies`` and is registered by the environment alone (``DPDL_EXTRA_STUDIES=toy``, this
folder on ``PYTHONPATH``): no existing file of the project names it (``tests/unit/test_structure.py``). A copy of
the workflow builds its default target (9 Snakemake jobs), then ``dpdl publish`` writes its snapshot into a
temporary folder, which ``dpdl check`` accepts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fixtures import copy_workflow

from dpdl.verdicts import NOT_AT_SCALE

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
JOBS = (
    9  # data_prepare, toy_release, toy_figure, toy_claims, the datasets, privacy and provenance tables, scorecard, all
)
CONFIG = {
    "studies": ["toy"],
    "data": {},
    **dict.fromkeys(("dvp_pvp", "wddp", "dp_iadmm", "dzoa"), {}),  # required sections of the four papers
    "toy": {"seeds": 200},
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
    )
    done = run(work, env, sys.executable, "-m", "snakemake", "--cores", "1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"work": work, "env": env, "done": done}


def test_the_real_snakefile_builds_the_toy_in_few_jobs(built: dict) -> None:
    assert f"{JOBS} of {JOBS} steps (100%) done" in built["done"].stderr
    assert (built["work"] / "figures" / "toy" / "error.png").stat().st_size > 0


def test_its_claims_are_judged(built: dict) -> None:
    card = pd.read_csv(built["work"] / "results" / "claims" / "toy.csv")
    assert list(card["id"]) == ["toy.error_falls_with_epsilon", "toy.error_at_epsilon_1"]
    assert NOT_AT_SCALE not in set(card["verdict"]) and card["verdict"].notna().all()
    merged = pd.read_csv(built["work"] / "results" / "claims.csv")
    assert set(merged.loc[merged["study"] == "toy", "id"]) == set(card["id"])


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
    dpdl = (sys.executable, "-m", "dpdl")
    done = run(work, env, *dpdl, "publish", "--configfile", "config/config.yaml", "--studies", "toy", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "toy" / "figures" / "error.png").is_file() and (out / "toy" / "MANIFEST.json").is_file()
    checked = run(work, env, *dpdl, "check", str(out))
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
