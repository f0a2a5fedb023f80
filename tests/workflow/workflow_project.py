"""Workflow tests' helpers: a copy of the project that runs on generated raw files.

The real registry pins real files. Here every Python process the workflow starts (Snakemake
and each job) imports a ``sitecustomize`` that swaps the pins of the raw files for those of
generated fixtures and removes their network sources, so the pipeline runs hermetically while
the fetcher still verifies every file it uses.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import warm_python
from fixtures import copy_workflow, write_raw_mirror

ROOT = Path(__file__).resolve().parents[2]
SITECUSTOMIZE = """
import dataclasses, json, os
from dpdl.data import adult, bank, breast_cancer, credit_card, femnist, kdd, mnist
from dpdl.data.fetch import Pin

PINS = json.loads(open(os.environ["DPDL_TEST_PINS"]).read())

def swap(remote):
    if remote.path not in PINS:
        return dataclasses.replace(remote, sources=())  # never the network
    digest, size = PINS[remote.path]
    algorithm = remote.pin.algorithm if remote.pin else "sha256"  # a content-checked file: pinned to its fixture
    return dataclasses.replace(remote, pin=Pin(algorithm, digest), size=size, sources=(), content=None)

for module in (adult, kdd, mnist, bank, breast_cancer, credit_card):
    module.FILES = tuple(swap(r) for r in module.FILES)
femnist.FILES = {key: swap(r) for key, r in femnist.FILES.items()}
"""
TEST_CONFIG = {
    "studies": ["dvp_pvp", "wddp", "dp_iadmm", "dzoa"],
    "data": {
        "mirror": None,
        "kdd": {"sample_size": 50, "train_size": 40, "seed": 0},
        "femnist": {"shards": [0, 1], "missing_shards": "use_available"},
        "lasso": {"trials": 2, "seed": 0},
    },
    "dvp_pvp": {"agents": 2},
    "wddp": {},
    "dp_iadmm": {"mnist_agents": 4},
    "dzoa": {
        "tuning_trials": 1,
        "epsilon_totals": [1.0, 2.5],
        "delta_sweep": [0.000001, 0.01],
        "outer_iterations": 10,
        "inner_iterations": 20,
        "directions": 10,
    },
}


def _pin(path: Path, algorithm: str) -> str:
    data = path.read_bytes()
    if algorithm == "git-blob-sha1":
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return hashlib.sha256(data).hexdigest()


def make_project(base: Path, config: dict) -> dict:
    """A copy of the workflow in ``base`` with ``config``, a generated mirror and the pin swap.

    Its ``python -m dpdl`` jobs run warm (``tests/warm_python.py``): the worker's server is started here, on first
    use, and the shim that reaches it goes first on the project's ``PATH``; ``DPDL_TEST_WARM=0``: all cold."""
    server = warm_python.shared()
    from dpdl.data import adult, bank, breast_cancer, credit_card, femnist, kdd, mnist

    work = base / "project"
    copy_workflow(work, config)
    mirror = write_raw_mirror(base / "mirror")
    remotes = [*adult.FILES, *kdd.FILES, *mnist.FILES, *femnist.FILES.values()]
    remotes += [*bank.FILES, *breast_cancer.FILES, *credit_card.FILES]
    pins = {
        r.path: [
            _pin(mirror / r.path, r.pin.algorithm if r.pin else "sha256"),
            (mirror / r.path).stat().st_size,
        ]
        for r in remotes
        if (mirror / r.path).is_file()
    }
    (base / "pins.json").write_text(json.dumps(pins))
    site = base / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if k != "DPDL_DATA_MIRROR"}
    env.update(
        DPDL_TEST_PINS=str(base / "pins.json"),
        PYTHONPATH=os.pathsep.join([str(site), str(ROOT / "src")]),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    # One BLAS thread, as Snakemake gives each job of these rules (`threads: 1`), for the tests' own dpdl calls
    # too: the warm server's numpy was imported so (a call with other values would run cold).
    env.update(warm_python.THREADS)
    if server is not None:
        env = server.env(env)
    return {"work": work, "mirror": mirror, "env": env, "warm": server}


def _env(project: dict, warm: bool) -> dict:
    """The project's environment, once its warm server listens; without the shim if not ``warm``."""
    server = project.get("warm")
    if not warm or server is None or not server.wait_ready():
        return warm_python.cold_env(project["env"])
    return dict(project["env"])


def _python(project: dict, env: dict) -> str:
    """The shim if ``env`` reaches the warm server, else the real interpreter."""
    return str(project["warm"].python) if "DPDL_WARM_SOCKET" in env else sys.executable


def snakemake(
    project: dict, *args: str, mirror: bool = True, warm: bool = True, timeout: float = 1800
) -> subprocess.CompletedProcess:
    """Run Snakemake in the project copy (the mirror as its data source if ``mirror``); cold, jobs too, if not ``warm``.

    Warm, Snakemake itself is forked from the worker's server too (``tests/warm_python.py``), its jobs as well."""
    env = _env(project, warm)
    if mirror:
        env["DPDL_DATA_MIRROR"] = str(project["mirror"])
    command = [_python(project, env), "-m", "snakemake", "--cores", "2", *args]
    # A guard against a hang, not a speed test: under pytest-xdist two study builds share 2 cores, and
    # dp_iadmm's took over 600 s on a loaded 2-core machine even alone.
    return subprocess.run(
        command, cwd=project["work"], env=env, capture_output=True, text=True, timeout=timeout
    )


def dpdl(project: dict, *args: str) -> subprocess.CompletedProcess:
    env = _env(project, warm=True)
    command = [_python(project, env), "-m", "dpdl", *args]
    return subprocess.run(command, cwd=project["work"], env=env, capture_output=True, text=True, timeout=120)


def commit_build(project: dict) -> str:
    """Make the project copy a git checkout of its workflow and config (``dpdl publish`` stamps the commit); its
    commit."""
    git = {"cwd": project["work"], "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "init", "-q"], **git)
    subprocess.run(["git", "add", "Snakefile", "workflow", "config"], **git)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "build"], **git)
    return subprocess.run(["git", "rev-parse", "HEAD"], **git).stdout.strip()


def judged_from_a_snapshot(project: dict, study: str) -> tuple[str, str]:
    """The study's scorecard judged from a snapshot-like copy of the build (its per-seed tables in
    ``aggregates/``, its dataset cards in ``cards/``, as ``dpdl publish`` lays them out), and the build's own."""
    from dpdl.config import load_config
    from dpdl.studies import study_module

    work = project["work"]
    snapshot = work.parent / f"snapshot_{study}"
    shutil.copytree(work / "results" / study / "aggregates", snapshot / "aggregates", dirs_exist_ok=True)
    (snapshot / "cards").mkdir(exist_ok=True)
    for card in (work / "data" / "processed" / study).glob("*.json"):
        shutil.copy(card, snapshot / "cards" / card.name)
    config = load_config(work / "config" / "config.yaml")
    judged = study_module(study).judge_snapshot(snapshot, config).to_csv(index=False, lineterminator="\n")
    return judged, (work / "results" / "claims" / f"{study}.csv").read_text()
