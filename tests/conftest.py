"""Shared pytest fixtures; the raw-file generators live in ``fixtures.py``."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest
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

# The suite starts hundreds of `python -m dpdl` jobs: let them keep the bytecode of dpdl's own modules (an
# editable install, so not compiled at install). Where PYTHONDONTWRITEBYTECODE is set, as on the CI machine,
# each job compiled them anew: 0.3 s of a dp_iadmm run job's 3.4 s.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


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
