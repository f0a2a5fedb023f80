"""The data pipeline end to end on generated raw files, in a temporary copy of the project."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from workflow_project import TEST_CONFIG, dpdl, make_project, snakemake

WDDP_NEW = ["wddp/bank", "wddp/breast_cancer", "wddp/credit_card"]  # from the generated mirror too
PREPARED = [
    "dvp_pvp/adult",
    "wddp/adult",
    "wddp/kdd",
    *WDDP_NEW,
    "dp_iadmm/mnist",
    "dp_iadmm/femnist",
    "dzoa/lasso",
]
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
    report = [
        line for line in done.stderr.splitlines() if line and not line.startswith("Using workflow specific")
    ]
    assert len(report) <= 18, (
        report
    )  # one short block per skipped dataset, where a mirror comes from, nothing else
    for name in ("dvp_pvp/adult", "wddp/adult", "wddp/kdd", *WDDP_NEW, "dp_iadmm/mnist", "dp_iadmm/femnist"):
        (line,) = [line for line in report if line.startswith(f"SKIPPING {name}:")]
        assert "fix: DPDL_DATA_MIRROR=" in line
    assert "SKIPPING dzoa/lasso" not in done.stderr
    assert "  first: kdd/kddcup.data_10_percent.gz; sources: none besides the cache and a mirror" in report
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
    assert len(table) == 1 + 9
    assert (cards["wddp/breast_cancer"]["rows_train"], cards["wddp/breast_cancer"]["rows_test"]) == (559, 140)
    assert cards["wddp/credit_card"]["rows"] == 20 and cards["wddp/bank"]["rows"] == 60  # the generated sizes
    table1 = (work / "results/tables/dp_iadmm_table1.md").read_text()
    assert "not reproduced" in table1  # fixture MNIST has 40 rows, not the paper's 60000
    checked = dpdl(project, "check", *(f"data/processed/{name}.json" for name in PREPARED))
    assert checked.returncode == 0, checked.stderr
    assert "artifact(s) OK" in checked.stdout


def test_rerun_is_byte_identical(project: dict) -> None:
    work = project["work"]
    before = {p: p.read_bytes() for p in (work / "data/processed").rglob("*") if p.is_file()}
    # cold on purpose: the first build ran warm (the server's interpreter and hash seed), this one in fresh ones
    done = snakemake(project, *DATA_TARGETS, "--forcerun", "data_prepare", warm=False)
    assert done.returncode == 0, done.stderr[-3000:]
    after = {p: p.read_bytes() for p in (work / "data/processed").rglob("*") if p.is_file()}
    assert before.keys() == after.keys()
    assert all(before[p] == after[p] for p in before)


def test_a_build_ends_with_its_last_job(project: dict) -> None:
    # Snakemake re-plans on a non-daemon timer every max-jobs-per-timespan span: without the end hooks'
    # end_replanning (workflow/rules/common.smk) this call would wait out the 900 s span before exiting
    target = "data/processed/wddp/adult.npz"
    done = snakemake(
        project, target, "--forcerun", "data_prepare", "--max-jobs-per-timespan", "1000/900s", timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 of 1 steps (100%) done" in done.stderr


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


def test_end_of_build_repeats_what_was_skipped(tmp_path_factory: pytest.TempPathFactory) -> None:
    project = make_project(tmp_path_factory.mktemp("summary"), {**TEST_CONFIG, "studies": ["dp_iadmm"]})
    done = snakemake(project, mirror=False)
    assert done.returncode == 0, done.stderr[-3000:]
    end = done.stderr[done.stderr.rindex("dpdl: build finished.") :].splitlines()
    assert (
        end[0] == "dpdl: build finished. Studies with their data: none. Skipped for lack of data: dp_iadmm."
    )
    assert end[1].startswith("SKIPPING dp_iadmm/mnist: 4 of 4 raw files cannot be obtained here; fix: ")


def test_femnist_is_built_from_what_exists(tmp_path_factory: pytest.TempPathFactory) -> None:
    project = make_project(tmp_path_factory.mktemp("femnist"), TEST_CONFIG)
    target = "data/processed/dp_iadmm/femnist.npz"
    shard = project["mirror"] / "femnist/test/all_data_1_niid_05_keep_0_test_9.json"
    good = shard.read_bytes()
    card = project["work"] / "data/processed/dp_iadmm/femnist.json"

    shard.unlink()  # a shard that cannot be obtained: built without it
    done = snakemake(project, target)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(card.read_text())["missing_files"] == [str(shard.relative_to(project["mirror"]))]

    shard.write_bytes(good)  # the mirror repaired: the dataset built without the shard is out of date
    done = snakemake(project, target)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(card.read_text())["missing_files"] == []
    assert "Nothing to be done" in snakemake(project, target, "--dry-run").stdout  # and then up to date

    (project["work"] / "data/raw" / shard.relative_to(project["mirror"])).unlink()
    shard.write_bytes(good[:-100])  # a shard that exists but is truncated: an error, not a smaller dataset
    done = snakemake(project, target, "--forcerun", "data_prepare")
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"{shard.relative_to(project['mirror'])} from mirror {shard}: git-blob-sha1 is " in output
    assert "fix: replace that copy with a verified one" in output
