"""Shared pytest fixtures; the raw-file generators live in ``fixtures.py``."""

from __future__ import annotations

# isort: off
import dpdl  # noqa: F401  (first: importing it pins the numeric kernels before numpy loads)

# isort: on
import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import warm_python
from fixtures import (  # noqa: F401  (re-exported for the test modules)
    ADULT_ROWS,
    KDD_LABELS,
    idx_bytes,
    leaf_shard,
    network_tests_enabled,
    write_adult,
    write_femnist,
    write_kdd,
    write_mnist,
    write_raw_mirror,
)

from dpdl.data import mnist
from dpdl.io import save_npz, sha256_file, write_json

ROOT = Path(__file__).resolve().parents[1]
# The test files that take longest (most CPU: whole Snakemake builds, JAX's equivalence test), longest first. Under
# pytest-xdist (`--dist loadfile --no-loadscope-reorder`, pyproject) each file runs whole on one worker, in this
# order: started first, a long file runs beside the many short ones instead of alone at the end (xdist's own order,
# most tests first, left the study builds, with few tests each, for last: a tail of one busy core).
SLOWEST_FIRST = (
    "tests/workflow/test_dp_iadmm_workflow.py",
    "tests/workflow/test_wddp_workflow.py",
    "tests/workflow/test_dzoa_workflow.py",
    "tests/workflow/test_pipeline.py",
    "tests/unit/test_dp_iadmm_backends.py",
    "tests/workflow/test_dvp_pvp_workflow.py",
    "tests/toy_study/test_toy_study.py",
    "tests/unit/test_dp_iadmm_jax.py",
    "tests/workflow/test_data_premises_workflow.py",
    "tests/unit/test_figure_layout.py",  # and the unit tests of most CPU, whatever their number of tests
    "tests/unit/test_publishing_faults.py",
    "tests/unit/test_article.py",
)
# The workflow projects' `python -m dpdl` jobs (~250 processes over the suite) and `python -m snakemake` calls run
# in a warm interpreter: forked from a server per worker that imported numpy, pandas, scipy, matplotlib, Snakemake...
# once (tests/warm_python.py; started on first use by tests/workflow/workflow_project.py, stopped at the session's
# end). DPDL_TEST_WARM=0 runs them all cold, as a plain `python` would: the check that no job relies on a module the
# server imported (run it now and then).

# The suite starts hundreds of `python -m dpdl` jobs: let them keep the bytecode of dpdl's own modules (an
# editable install, so not compiled at install). Where PYTHONDONTWRITEBYTECODE is set, as on the CI machine,
# each job compiled them anew: 0.3 s of a dp_iadmm run job's 3.4 s.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (``SLOWEST_FIRST``), then the others by their number of tests, most first; a file's
    tests keep their order (its tests may build on each other)."""
    missing = [name for name in SLOWEST_FIRST if not (ROOT / name).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py's SLOWEST_FIRST names no file at {', '.join(missing)}")
    files = [item.path.relative_to(ROOT).as_posix() for item in items]
    counts = {name: files.count(name) for name in files}
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    order = sorted(
        range(len(items)), key=lambda i: (rank.get(files[i], len(rank)), -counts[files[i]], files[i])
    )
    items[:] = [items[i] for i in order]


@pytest.fixture(scope="session", autouse=True)
def _warm_server_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The warm server of this worker, if one is started, lives in its basetemp (its socket, shim and log)."""
    warm_python.set_basetemp(tmp_path_factory.getbasetemp)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop this worker's warm server and wait for it: its jobs' CPU then counts in this process's children."""
    warm_python.stop_shared()


@pytest.fixture
def raw_mirror(tmp_path: Path) -> Path:
    """A generated mirror folder of every dataset, in the real formats."""
    return write_raw_mirror(tmp_path / "mirror")


@pytest.fixture(autouse=True)
def _no_mirror_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see a developer's DPDL_DATA_MIRROR, package index or pip.conf, and messages print
    commands in the plain form whether or not pytest runs under ``uv run`` (hermetic)."""
    monkeypatch.delenv("DPDL_DATA_MIRROR", raising=False)
    for name in ("UV", "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict[str, str]:
    """The MNIST fixture (real idx format) prepared as ``dpdl prepare`` would, its card, and copies."""
    folder = tmp_path_factory.mktemp("prepared")
    npz, card = folder / "mnist.npz", folder / "mnist.json"
    save_npz(npz, mnist.prepare(*write_mnist(folder / "raw").values()))
    write_json(card, {"name": "dp_iadmm/mnist", "dataset": "mnist", "npz_sha256": sha256_file(npz)})
    (folder / "femnist.npz").write_bytes(npz.read_bytes())
    (folder / "garbage.npz").write_bytes(np.random.default_rng(0).bytes(200))
    (folder / "empty.json").write_text("{}")
    paths = {"npz": npz, "card": card, "femnist": folder / "femnist.npz", "garbage": folder / "garbage.npz"}
    paths |= {"empty": folder / "empty.json", "folder": folder}
    return {name: str(path) for name, path in paths.items()}


@pytest.fixture
def stderr_logging():
    """Let ``main`` configure logging to the captured stderr (pytest's handlers would stop it)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers = []
    yield
    root.handlers, root.level = handlers, level


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    return ROOT
