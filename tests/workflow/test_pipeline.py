"""The data pipeline end to end on generated raw files, in a temporary copy of the project."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from workflow_project import TEST_CONFIG, dpdl, make_project, snakemake

PREPARED = ["dvp_pvp/adult", "wddp/adult", "wddp/kdd", "dp_iadmm/mnist", "dp_iadmm/femnist", "dzoa/lasso"]
# The data pipeline's own outputs; the studies' workflow tests cover what is built from them.
DATA_TARGETS = [f"data/processed/{name}.npz" for name in PREPARED] + [
    "results/tables/datasets.csv",
    "results/tables/dp_iadmm_table1.md",
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A project copy with the small data-only ``TEST_CONFIG`` (shared by this module's tests)."""
    return make_project(tmp_path_factory.mktemp("pipeline"), TEST_CONFIG)


def test_offline_without_mirror_skips_and_explains(project: dict) -> None:
    done = snakemake(project, "--dry-run", mirror=False)
    assert done.returncode == 0, done.stderr
    for name in ("dvp_pvp/adult", "wddp/adult", "wddp/kdd", "dp_iadmm/mnist", "dp_iadmm/femnist"):
        assert f"SKIPPING {name}:" in done.stderr
    assert "SKIPPING dzoa/lasso" not in done.stderr
    assert "data/raw/kdd/kddcup.data_10_percent.gz: not present" in done.stderr
    assert "DPDL_DATA_MIRROR" in done.stderr
    assert "data/processed/dzoa/lasso.npz" in done.stdout


def test_named_target_never_skips(project: dict) -> None:
    done = snakemake(project, "data/processed/wddp/kdd.npz", mirror=False)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "raw file kdd/kddcup.data_10_percent.gz" in output and "is not available" in output
    assert not list((project["work"] / "data").rglob("kdd*")), "a failed target left files behind"
    assert not list((project["work"] / "data").rglob("*.part-*"))


def test_full_run_with_mirror(project: dict) -> None:
    done = snakemake(project, *DATA_TARGETS)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    work = project["work"]
    cards = {p.relative_to(work / "data/processed").with_suffix("").as_posix(): json.loads(p.read_text())
             for p in (work / "data/processed").rglob("*.json")}  # fmt: skip
    assert sorted(cards) == sorted(PREPARED)
    assert cards["dvp_pvp/adult"]["rows"] == 12  # 12 fixture rows, 1 with "?", + 1 repeated in adult.test
    assert cards["wddp/kdd"]["rows_train"] == 40 and cards["wddp/kdd"]["rows_test"] == 10
    assert cards["dp_iadmm/mnist"]["agents"] == 4
    assert cards["dp_iadmm/femnist"]["agents"] == 3 and cards["dp_iadmm/femnist"]["missing_files"] == []
    table = (work / "results/tables/datasets.csv").read_text().splitlines()
    assert len(table) == 1 + 6
    table1 = (work / "results/tables/dp_iadmm_table1.md").read_text()
    assert "not reproduced" in table1  # fixture MNIST has 40 rows, not the paper's 60000
    checked = dpdl(project, "check", *(f"data/processed/{name}.json" for name in PREPARED))
    assert checked.returncode == 0, checked.stderr
    assert "artifact(s) OK" in checked.stdout


def test_rerun_is_byte_identical(project: dict) -> None:
    work = project["work"]
    before = {p: p.read_bytes() for p in (work / "data/processed").rglob("*") if p.is_file()}
    done = snakemake(project, *DATA_TARGETS, "--forcerun", "data_prepare")
    assert done.returncode == 0, done.stderr[-3000:]
    after = {p: p.read_bytes() for p in (work / "data/processed").rglob("*") if p.is_file()}
    assert before.keys() == after.keys()
    assert all(before[p] == after[p] for p in before)


def test_corrupt_cache_is_fetched_again(project: dict) -> None:
    work = project["work"]
    cached = work / "data/raw/adult/adult.data"
    data = bytearray(cached.read_bytes())
    data[100] ^= 0xFF
    cached.write_bytes(bytes(data))
    done = snakemake(project, "data/processed/wddp/adult.npz", "--forcerun", "data_prepare")
    assert done.returncode == 0, done.stderr[-3000:]
    log = (work / "logs/data/prepare/wddp/adult.log").read_text()
    assert "adult/adult.data from cache" in log and "fetching it again" in log
    assert cached.read_bytes() == (project["mirror"] / "adult/adult.data").read_bytes()


def test_invalid_config_names_the_key(project: dict) -> None:
    bad = {**TEST_CONFIG, "wddp": {"epsilons": [-0.5], "delta": 2}, "typo": 1}
    (project["work"] / "config" / "bad.yaml").write_text(yaml.safe_dump(bad))
    done = snakemake(project, "--dry-run", "--configfile", "config/bad.yaml")
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "wddp.epsilons[0]: -0.5 is less than or equal to the minimum of 0" in output
    assert "wddp.delta: 2 is greater than or equal to the maximum of 1" in output
    assert "'typo' was unexpected" in output


def test_prepared_arrays_load_without_pickle(project: dict) -> None:
    arrays = np.load(project["work"] / "data/processed/dp_iadmm/femnist.npz", allow_pickle=False)
    assert arrays["X_train"].dtype == np.uint8 and arrays["offsets_train"][-1] == len(arrays["y_train"])
