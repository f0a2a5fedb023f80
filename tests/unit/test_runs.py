"""The run contract: provenance schema, atomic storage, validation, seeding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl.chain import arrays_sha256
from dpdl.errors import ArtifactError
from dpdl.runs import (
    RunResult,
    execute,
    read_run,
    run_seed_sequence,
    run_timing,
    trace_arrays,
    validate_run,
    write_run,
)


def provenance(**overrides: object) -> dict:
    record = {
        "study": "wddp",
        "dataset": "wddp/kdd",
        "dataset_sha256": "0" * 64,
        "algorithm": "wddp",
        "params": {"eta": 0.1, "iterations": 3},
        "seed": 0,
        "epsilon": 0.5,
        "delta": 1e-3,
        "eps_per_iteration": 0.1,
        "eps_composed_rdp": 1.2,
        "eps_composed_pld": 1.1,
        "accountant": {"name": "dp_accounting", "version": "0.6.0"},
        "noise_scales": [2.0],
        "switches": {"aggregation": "per_round"},
    }
    return {**record, **overrides}


def trace() -> pd.DataFrame:
    return pd.DataFrame({"iteration": [1, 2, 3], "loss": [0.7, 0.5, 0.4], "accuracy": [0.6, 0.7, 0.75]})


def test_execute_adds_versions_and_timing() -> None:
    result = execute(trace, provenance(), iterations=3)
    assert result.provenance["timing"]["iterations"] == 3
    assert result.provenance["timing"]["iterations_per_second"] > 0
    assert {"python", "dpdl", "numpy", "dp-accounting"} <= result.provenance["versions"].keys()


def test_execute_records_cpu_time_apart_from_wall_time() -> None:
    """A run that waits is charged its wall time but almost no CPU time; one that computes, its CPU time."""
    import time

    def waiting() -> pd.DataFrame:
        time.sleep(0.3)
        return trace()

    def computing() -> pd.DataFrame:
        start = time.process_time()
        while time.process_time() - start < 0.1:
            pass
        return trace()

    waited = execute(waiting, provenance(), iterations=3).provenance["timing"]
    assert waited["wall_time_s"] >= 0.3 and waited["cpu_time_s"] < 0.1
    computed = execute(computing, provenance(), iterations=3).provenance["timing"]
    assert computed["cpu_time_s"] >= 0.1
    batch = run_timing(wall=8.0, cpu=6.0, iterations=3, runs=4)
    assert (batch["wall_time_s"], batch["cpu_time_s"], batch["batch_cpu_time_s"]) == (2.0, 1.5, 6.0)


def test_write_read_round_trip(tmp_path: Path) -> None:
    result = execute(trace, provenance(), iterations=3)
    path = tmp_path / "results/wddp/runs/kdd/wddp/eps0.5/seed0.npz"
    write_run(path, result)
    loaded = read_run(path)
    pd.testing.assert_frame_equal(loaded.trace, result.trace)
    chain = {"arrays_sha256": arrays_sha256(trace_arrays(result.trace))}  # outside a step: its arrays only
    stored_as = "results/wddp/runs/kdd/wddp/eps0.5/seed0.npz"
    assert loaded.provenance == {**result.provenance, "stored_as": stored_as, "chain": chain}
    assert validate_run(path) == []
    assert np.load(path, allow_pickle=False)["provenance"].dtype.kind == "U"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"epsilon": -1.0}, "epsilon: -1.0 is less than or equal to the minimum of 0"),
        ({"delta": 1.0}, "delta: 1.0 is greater than or equal to the maximum of 1"),
        ({"study": "Other study"}, "study: 'Other study' does not match"),
        ({"dataset_sha256": "xyz"}, "dataset_sha256: 'xyz' does not match"),
        ({"surprise": 1}, "'surprise' was unexpected"),
    ],
    ids=["negative_epsilon", "delta_one", "unknown_study", "bad_hash", "unknown_key"],
)
def test_invalid_provenance_is_refused_before_writing(tmp_path: Path, change: dict, message: str) -> None:
    result = execute(trace, provenance(**change), iterations=3)
    with pytest.raises(ArtifactError, match=message):
        write_run(tmp_path / "run.npz", result)
    assert list(tmp_path.iterdir()) == []


def test_trace_must_have_increasing_numeric_iterations(tmp_path: Path) -> None:
    bad = RunResult(
        pd.DataFrame({"iteration": [2, 1], "name": ["a", "b"]}),
        execute(trace, provenance(), iterations=3).provenance,
    )
    with pytest.raises(ArtifactError) as caught:
        write_run(tmp_path / "run.npz", bad)
    assert "strictly increasing" in str(caught.value) and "'name' is not numeric" in str(caught.value)


def test_non_private_run_is_valid(tmp_path: Path) -> None:
    record = provenance(
        epsilon=None, eps_per_iteration=None, eps_composed_rdp=None, eps_composed_pld=None, noise_scales=None
    )
    write_run(tmp_path / "run.npz", execute(trace, record, iterations=3))
    assert validate_run(tmp_path / "run.npz") == []


def test_validate_run_reports_foreign_files(tmp_path: Path) -> None:
    np.savez(tmp_path / "foreign.npz", x=np.zeros(2))
    assert "no provenance record" in validate_run(tmp_path / "foreign.npz")[0]


def test_run_seed_sequence_is_a_pure_function_of_its_keys() -> None:
    draw = lambda *keys: np.random.default_rng(run_seed_sequence(*keys)).random(4)  # noqa: E731
    np.testing.assert_array_equal(
        draw("wddp", "wddp/kdd", "wddp", 0.5, 0), draw("wddp", "wddp/kdd", "wddp", 0.5, 0)
    )
    assert not np.array_equal(
        draw("wddp", "wddp/kdd", "wddp", 0.5, 0), draw("wddp", "wddp/kdd", "wddp", 0.5, 1)
    )
    assert not np.array_equal(
        draw("wddp", "wddp/kdd", "wddp", 0.5, 0), draw("wddp", "wddp/kdd", "avg", 0.5, 0)
    )


def test_privacy_record_fills_the_provenance_privacy_fields(tmp_path: Path) -> None:
    from dpdl.privacy.accounting import PrivacyEvent, privacy_record

    record = privacy_record([PrivacyEvent("gaussian", 2.0, count=100)], delta=1e-5, eps_per_iteration=None)
    base = {k: v for k, v in provenance().items() if k not in record}
    write_run(tmp_path / "run.npz", execute(trace, {**base, **record}, iterations=100))
    stored = read_run(tmp_path / "run.npz").provenance
    assert stored["eps_composed_rdp"] == pytest.approx(35.08, abs=0.01)
    assert stored["eps_composed_pld"] == pytest.approx(33.10, abs=0.01)
    assert stored["accountant"]["name"] == "dp_accounting"
