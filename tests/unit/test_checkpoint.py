"""A run saved mid-way and resumed gives the uninterrupted run's numbers, bit for bit (dpdl.checkpoint)."""

from __future__ import annotations

import numpy as np
import pytest
from test_dp_iadmm_algorithms import K, params, tiny_fixture  # noqa: F401 (the fixture ``tiny``)

from dpdl.algorithms import dp_iadmm as iadmm
from dpdl.algorithms.dp_iadmm_data import federated_data
from dpdl.checkpoint import Checkpoint, generator_states, restore_generators


class Killed(Exception):
    """Stands for the signal that ends a session."""


def run(tiny, p, checkpoint=None, kill_at=None):
    data = federated_data(tiny["x"], tiny["y"], tiny["offsets"], K, replicas=2)
    rngs = [np.random.default_rng(seed) for seed in np.random.SeedSequence(9).spawn(2)]

    def progress(t: int) -> None:
        if t == kill_at:
            raise Killed

    return iadmm.run_iadmm(data, p, tiny["x"], tiny["y"], rngs=rngs, progress=progress, checkpoint=checkpoint)


def assert_same(resumed, straight) -> None:
    for name in ("weights", "local", "duals", "noise_multipliers"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(straight, name), err_msg=name)
    for ours, theirs in zip(resumed.traces, straight.traces, strict=True):
        assert ours.equals(theirs)


@pytest.mark.parametrize("algorithm", ["objp", "objt", "outp"])
def test_a_run_killed_after_a_save_resumes_to_the_uninterrupted_result(tiny, tmp_path, algorithm) -> None:
    p = params(algorithm, 0.5, 7, log_every=2)
    straight = run(tiny, p)
    checkpoint = Checkpoint(tmp_path / "state.npz", key="run-a", every_s=0.0)  # a save after every iteration
    with pytest.raises(Killed):
        run(tiny, p, checkpoint, kill_at=5)  # the save after iteration 4 is the last
    again = Checkpoint(tmp_path / "state.npz", key="run-a", every_s=0.0)
    resumed = run(tiny, p, again)
    assert again.resumed_at == 4 and again.earlier_wall_s > 0 and again.earlier_cpu_s > 0
    assert_same(resumed, straight)


def test_a_checkpoint_of_another_run_is_ignored(tiny, tmp_path) -> None:
    p = params("objt", 0.5, 6)
    with pytest.raises(Killed):
        run(
            tiny,
            params("objt", 2.0, 6),
            Checkpoint(tmp_path / "state.npz", key="epsilon 2", every_s=0.0),
            kill_at=4,
        )
    other = Checkpoint(tmp_path / "state.npz", key="epsilon 0.5", every_s=0.0)
    assert_same(run(tiny, p, other), run(tiny, p))
    assert other.resumed_at == 0


def test_an_unreadable_checkpoint_is_ignored_and_a_finished_run_removes_nothing_itself(
    tiny, tmp_path
) -> None:
    path = tmp_path / "state.npz"
    path.write_bytes(b"cut short")
    p = params("outp", 0.5, 3)
    checkpoint = Checkpoint(path, key="k", every_s=3600.0)  # never due in this run
    assert_same(run(tiny, p, checkpoint), run(tiny, p))
    assert checkpoint.resumed_at == 0 and path.read_bytes() == b"cut short"  # no save was due
    checkpoint.remove()
    assert not path.exists()


def test_generator_states_restore_the_draws_to_come() -> None:
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    for rng in rngs:
        rng.laplace(size=5)
    saved = generator_states(rngs)
    expected = [rng.laplace(size=3) for rng in rngs]
    fresh = [np.random.default_rng(0) for _ in rngs]
    restore_generators(fresh, saved)
    for rng, values in zip(fresh, expected, strict=True):
        np.testing.assert_array_equal(rng.laplace(size=3), values)
    with pytest.raises(ValueError, match="holds 2 generators; the run has 1"):
        restore_generators(fresh[:1], saved)
