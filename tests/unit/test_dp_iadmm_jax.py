"""The JAX program of DP-IADMM against the float64 reference, and its own noise stream against its seeds.

The replay holds the JAX run (float32, every replica in one ``lax.scan`` program) to the tolerance
the numba kernel meets (``test_dp_iadmm_algorithms``): from the same injected unit-scale draws, each
iterate of 6 iterations within 1e-6 of its largest entry, for every case of ``REPLAY_CASES`` on an
equal and an unequal split of the agents. Measured at T = 6: at most 6.4e-7 of the largest entry (ObjT
with the paper's radius, unequal split; the numba kernel's worst is 4.5e-7).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from test_dp_iadmm_algorithms import (  # noqa: E402
    REPLAY_CASES,
    REPLAY_ITERATIONS,
    J,
    K,
    assert_replays,
    params,
    replayed_unit_noise,
    tiny_fixture,  # noqa: F401 (the fixture ``tiny``)
)

from dpdl.algorithms import dp_iadmm as iadmm  # noqa: E402
from dpdl.algorithms import dp_iadmm_data as chunks  # noqa: E402
from dpdl.algorithms import dp_iadmm_jax as jax_iadmm  # noqa: E402
from dpdl.algorithms import dp_iadmm_reference as reference  # noqa: E402
from dpdl.checkpoint import Checkpoint  # noqa: E402
from dpdl.privacy.samplers import gaussian, laplace  # noqa: E402

SPLITS = {"unequal": None, "equal": np.array([0, 7, 14, 21])}  # None: the fixture's sizes 5, 9, 7


def offsets_of(tiny: dict, split: str) -> np.ndarray:
    return tiny["offsets"] if SPLITS[split] is None else SPLITS[split]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("case", REPLAY_CASES)
def test_the_jax_run_replays_the_float64_reference_at_the_first_and_last_iteration(tiny, case, split) -> None:
    algorithm, epsilon, options = REPLAY_CASES[case]
    seeds = (4, 5)  # two replicas, each with its own draws
    offsets = offsets_of(tiny, split)
    data = chunks.federated_data(tiny["x"], tiny["y"], offsets, K)
    sampler = gaussian if algorithm == "outp" else laplace
    noise = np.stack([replayed_unit_noise(data, seed, sampler, REPLAY_ITERATIONS) for seed in seeds], axis=1)
    agents = reference.agents_from_rows(tiny["x"], tiny["y"], offsets, K)
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], offsets, K)
    states = [reference.initial_state(len(agents), J, K) for _ in seeds]
    for t in range(1, REPLAY_ITERATIONS + 1):
        p = params(algorithm, epsilon, t, beta=0.05, **options)  # a beta whose term (37) shows
        for b in range(len(seeds)):
            states[b] = reference.iteration(states[b], agents, p, t, noise[t - 1, b])
        if t not in (
            1,
            REPLAY_ITERATIONS,
        ):  # each T is a compilation (1 s); the numba comparison below covers
            continue  # every iteration's trace from the same draws, and the kernel replays every iterate
        result = jax_iadmm.run_iadmm_jax(
            padded, p, tiny["x"], tiny["y"], unit_noise=noise[:t]
        )  # iterations 1..t
        for b in range(len(seeds)):
            assert_replays(result.weights[b], states[b].w, f"w^{t + 1}, replica {b}")
            assert_replays(result.local[b], states[b].z, f"z^{t + 1}, replica {b}")
            assert_replays(result.duals[b], states[b].lam, f"lambda^{t + 1}, replica {b}")


@pytest.mark.parametrize("case", REPLAY_CASES)
def test_the_jax_run_is_the_numba_run_from_its_draws_traces_included(tiny, case) -> None:
    """From the numba run's own draws (replayed), the JAX run gives run_iadmm's result: iterates, every
    trace column at every iteration, the noise multipliers (unequal agents, so padding is exercised)."""
    algorithm, epsilon, options = REPLAY_CASES[case]
    seeds = (4, 5)
    data = chunks.federated_data(tiny["x"], tiny["y"], tiny["offsets"], K, replicas=len(seeds))
    sampler = gaussian if algorithm == "outp" else laplace
    noise = np.stack([replayed_unit_noise(data, seed, sampler, REPLAY_ITERATIONS) for seed in seeds], axis=1)
    p = params(algorithm, epsilon, REPLAY_ITERATIONS, beta=0.05, **options)
    numba = iadmm.run_iadmm(
        data, p, tiny["x"], tiny["y"], rngs=[np.random.default_rng(seed) for seed in seeds]
    )
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    ours = jax_iadmm.run_iadmm_jax(padded, p, tiny["x"], tiny["y"], unit_noise=noise)
    for name in ("weights", "local", "duals"):
        assert_replays(getattr(ours, name), getattr(numba, name), name)
    np.testing.assert_allclose(ours.noise_multipliers, numba.noise_multipliers, rtol=1e-12)
    assert ours.iterations == numba.iterations and ours.finite and numba.finite
    for b in range(len(seeds)):
        assert list(ours.traces[b].columns) == list(iadmm.TRACE_COLUMNS)
        assert ours.traces[b]["iteration"].dtype == numba.traces[b]["iteration"].dtype
        for column in iadmm.TRACE_COLUMNS:
            expected = numba.traces[b][column].to_numpy()
            np.testing.assert_allclose(ours.traces[b][column], expected, rtol=1e-5, atol=1e-7, err_msg=column)


@pytest.mark.parametrize("algorithm", ["objp", "objt", "outp"])
def test_the_own_stream_is_deterministic_in_the_seed_and_differs_across_seeds(tiny, algorithm) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    p = params(algorithm, 0.5, 4)
    seeds = np.random.SeedSequence(11).spawn(3)

    def run(chosen):
        return jax_iadmm.run_iadmm_jax(padded, p, tiny["x"], tiny["y"], seeds=chosen)

    first, again = run(seeds[:2]), run(seeds[:2])
    np.testing.assert_array_equal(first.local, again.local)
    np.testing.assert_array_equal(first.duals, again.duals)
    assert not np.allclose(first.local[0], first.local[1])  # the two replicas draw differently
    other = run(seeds[2:])
    assert not np.allclose(other.local[0], first.local[0]) and not np.allclose(other.local[0], first.local[1])
    alone = run(seeds[1:2])  # replica 1 on its own: its draws depend on its seed only
    np.testing.assert_allclose(alone.local[0], first.local[1], rtol=1e-6, atol=1e-7)
    assert list(first.traces[0]["iteration"]) == [1, 2, 3, 4]


@pytest.mark.parametrize("algorithm", ["objp", "outp"])
def test_the_own_stream_run_is_the_injected_run_of_its_draws(tiny, algorithm) -> None:
    """Mode (b) runs the iteration the replay checks, on the draws of ``drawn_unit_noise``."""
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    p = params(algorithm, 0.5, 3)
    seeds = np.random.SeedSequence(11).spawn(2)
    program = jax_iadmm.Program(algorithm, private=True, worst_case=False, regularise_server=False)
    keys = jax_iadmm.replica_keys(seeds)
    shape = (len(padded.sizes), J, K)
    draws = np.stack([np.asarray(jax_iadmm.drawn_unit_noise(program, keys, t, shape)) for t in (1, 2, 3)])
    stream = jax_iadmm.run_iadmm_jax(padded, p, tiny["x"], tiny["y"], seeds=seeds)
    injected = jax_iadmm.run_iadmm_jax(padded, p, tiny["x"], tiny["y"], unit_noise=draws)
    assert_replays(stream.local, injected.local, "z^4")  # XLA may fuse the two programs' float32 steps apart
    assert_replays(stream.duals, injected.duals, "lambda^4")


@pytest.mark.parametrize("algorithm, expected_abs_mean", [("objp", 1.0), ("outp", math.sqrt(2 / math.pi))])
def test_the_own_stream_draws_unit_laplace_or_gaussian_independent_across_iterations(
    algorithm, expected_abs_mean
) -> None:
    """E|X| is 1 for Laplace(0, 1) and sqrt(2 / pi) for N(0, 1); held to 4 standard errors (sd(|X|) <= 1)."""
    program = jax_iadmm.Program(algorithm, private=True, worst_case=False, regularise_server=False)
    keys = jax_iadmm.replica_keys(np.random.SeedSequence(5).spawn(2))
    shape = (3, 40, 50)
    first, second = (np.asarray(jax_iadmm.drawn_unit_noise(program, keys, t, shape)) for t in (1, 2))
    assert first.shape == (2, *shape) and first.dtype == np.float32
    count = first.size
    assert abs(np.abs(first).mean() - expected_abs_mean) < 4 / math.sqrt(count)
    series = [draws[b, p].ravel() for draws in (first, second) for b in range(2) for p in range(3)]
    off_diagonal = np.corrcoef(series)[~np.eye(len(series), dtype=bool)]
    assert np.abs(off_diagonal).max() < 5 / math.sqrt(series[0].size)  # replicas, agents and iterations


def test_padded_agents_hold_each_agents_rows_and_zero_padding(tiny) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    offsets = tiny["offsets"]
    for p, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:], strict=True)):
        n = stop - start
        np.testing.assert_array_equal(padded.features[p, :n], tiny["x"][start:stop])
        np.testing.assert_array_equal(padded.onehot[p, :n].argmax(axis=1), tiny["y"][start:stop])
        assert (
            not padded.features[p, n:].any()
            and not padded.onehot[p, n:].any()
            and not padded.feature_l1[p, n:].any()
        )
    equal = jax_iadmm.padded_agents(tiny["x"], tiny["y"], np.array([0, 7, 14, 21]), K)
    assert np.shares_memory(equal.features, tiny["x"])  # equal agents: a view
    with pytest.raises(ValueError, match="at least one row"):
        jax_iadmm.padded_agents(tiny["x"], tiny["y"], np.array([0, 0, 21]), K)


def test_run_refuses_both_or_neither_noise_source(tiny) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    with pytest.raises(ValueError, match="exactly one of seeds"):
        jax_iadmm.run_iadmm_jax(padded, params("objp"), tiny["x"], tiny["y"])


@pytest.mark.parametrize("algorithm", ["objt", "outp"])
def test_a_run_split_into_chunks_is_the_run_in_one_call_and_reports_each_chunk(tiny, algorithm) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    p = params(algorithm, 0.5, 5)
    seeds = np.random.SeedSequence(3).spawn(2)
    heard = []
    whole = jax_iadmm.run_iadmm_jax(padded, p, tiny["x"], tiny["y"], seeds=seeds)
    split = jax_iadmm.run_iadmm_jax(
        padded, p, tiny["x"], tiny["y"], seeds=seeds, chunk=2, progress=heard.append
    )
    assert heard == [2, 4, 5]
    assert_replays(split.local, whole.local, "z^6")  # two compiled programs: XLA may fuse float32 steps apart
    assert_replays(split.duals, whole.duals, "lambda^6")
    for b in range(len(seeds)):
        np.testing.assert_array_equal(split.traces[b]["iteration"], whole.traces[b]["iteration"])
        np.testing.assert_allclose(split.traces[b]["test_error"], whole.traces[b]["test_error"])


class Killed(Exception):
    """Stands for the signal that ends a session."""


@pytest.mark.parametrize("algorithm", ["objp", "objt", "outp"])
def test_a_run_killed_after_a_save_resumes_to_the_uninterrupted_result_bit_for_bit(
    tiny, tmp_path, algorithm
) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    p = params(algorithm, 0.5, 7, log_every=2)
    seeds = np.random.SeedSequence(3).spawn(2)

    def run(checkpoint=None, kill_at=None):
        def progress(t: int) -> None:
            if t == kill_at:
                raise Killed

        return jax_iadmm.run_iadmm_jax(
            padded, p, tiny["x"], tiny["y"], seeds=seeds, chunk=2, progress=progress, checkpoint=checkpoint
        )

    straight = run()
    with pytest.raises(Killed):
        run(Checkpoint(tmp_path / "state.npz", key="run-a", every_s=0.0), kill_at=6)  # saved after 2 and 4
    again = Checkpoint(tmp_path / "state.npz", key="run-a", every_s=0.0)
    resumed = run(again)
    assert again.resumed_at == 4 and again.earlier_cpu_s > 0
    for name in ("weights", "local", "duals", "noise_multipliers"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(straight, name), err_msg=name)
    for ours, theirs in zip(resumed.traces, straight.traces, strict=True):
        assert ours.equals(theirs)


@pytest.mark.parametrize("algorithm", ["objp", "objt", "outp"])
def test_cells_run_as_one_batch_give_what_each_gives_alone(tiny, algorithm) -> None:
    """Cells that differ in epsilon-bar, a and the penalty, batched on the shared data (unequal agents)."""
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    cells = [
        jax_iadmm.Cell(params(algorithm, 0.5, 4, beta=0.05), np.random.SeedSequence(1).spawn(2)),
        jax_iadmm.Cell(params(algorithm, 2.0, 4, a=0.2), np.random.SeedSequence(2).spawn(2)),
        jax_iadmm.Cell(
            params(algorithm, 1.0, 4, penalty=iadmm.PenaltySchedule(c1=1.0, c2=3.0, t_c=2)),
            np.random.SeedSequence(3).spawn(2),
        ),
    ]
    batch = jax_iadmm.run_cells_jax(padded, cells, tiny["x"], tiny["y"], chunk=3)
    for cell, ours in zip(cells, batch, strict=True):
        alone = jax_iadmm.run_iadmm_jax(padded, cell.params, tiny["x"], tiny["y"], seeds=cell.seeds)
        for name in ("weights", "local", "duals"):
            assert_replays(getattr(ours, name), getattr(alone, name), name)
        np.testing.assert_array_equal(ours.noise_multipliers, alone.noise_multipliers)
        for b in range(2):
            for column in iadmm.TRACE_COLUMNS:
                np.testing.assert_allclose(
                    ours.traces[b][column], alone.traces[b][column], rtol=1e-5, atol=1e-7
                )
    assert not np.allclose(batch[0].local, batch[1].local)  # the cells are different runs


def test_a_batch_refuses_cells_that_cannot_share_a_program(tiny) -> None:
    padded = jax_iadmm.padded_agents(tiny["x"], tiny["y"], tiny["offsets"], K)
    seeds = np.random.SeedSequence(1).spawn(2)
    objp, outp = jax_iadmm.Cell(params("objp", 1.0, 3), seeds), jax_iadmm.Cell(params("outp", 1.0, 3), seeds)
    with pytest.raises(ValueError, match="share the program's switches, T and log_every"):
        jax_iadmm.run_cells_jax(padded, [objp, outp], tiny["x"], tiny["y"])
    with pytest.raises(ValueError, match="as many replicas each"):
        jax_iadmm.run_cells_jax(padded, [objp, objp._replace(seeds=seeds[:1])], tiny["x"], tiny["y"])
    with pytest.raises(ValueError, match="at least one cell"):
        jax_iadmm.run_cells_jax(padded, [], tiny["x"], tiny["y"])


def schedule_by_loop(p, sizes: np.ndarray, n_params: int) -> jax_iadmm.Schedule:
    """The per-iteration schedule as the numba run computes it, one iteration at a time (the reference)."""
    unique_sizes, size_index = np.unique(sizes, return_inverse=True)
    rho, radius = np.empty(p.iterations), np.empty(p.iterations)
    inverse_eta, std, sensitivity = (np.zeros((p.iterations, len(sizes))) for _ in range(3))
    for t in range(1, p.iterations + 1):
        rho[t - 1] = p.penalty(t, p.epsilon)
        constants = iadmm.fused_constants(p, t, rho[t - 1], None)
        radius[t - 1] = constants["radius"]
        if p.algorithm == "outp":
            calibration = iadmm.outp_calibration(p, t, rho[t - 1], unique_sizes, n_params)
            inverse_eta[t - 1], sensitivity[t - 1], std[t - 1] = (v[size_index] for v in calibration)
        else:
            inverse_eta[t - 1] = constants["inverse_eta"]
    logged = np.zeros(p.iterations, dtype=bool)
    logged[iadmm.logged_iterations(p.iterations, p.log_every) - 1] = True
    steps = np.arange(1, p.iterations + 1, dtype=np.int32)
    return jax_iadmm.Schedule(steps, logged, rho, radius, inverse_eta, std, sensitivity)


@pytest.mark.parametrize("algorithm", ["objp", "objt", "outp"])
@pytest.mark.parametrize("epsilon", [0.05, math.inf])
@pytest.mark.parametrize(
    "penalty",
    [{}, {"factor": 0.01}, {"static": 0.1}],
    ids=["rho-hat", "outp-plus", "static"],
)
def test_the_schedule_on_the_whole_horizon_is_the_loops_bit_for_bit(algorithm, epsilon, penalty) -> None:
    """Issue 63: the vectorised schedule gives the numba run's per-iteration values exactly, over several growth
    periods of (21) (t_c = 7 here), with both ObjT radii and both OutP noise readings."""
    sizes = np.array([5, 9, 7, 9])
    schedule = iadmm.PenaltySchedule(c1=2.0, c2=5.0, t_c=7, **penalty)
    for switches in ({}, {"trust_radius": "paper_inv_t2", "outp_noise": "sigma", "a": 100.0}):
        p = iadmm.IadmmParams(algorithm, epsilon, 60, schedule, log_every=25, **switches)
        ours, loop = jax_iadmm.iteration_schedule(p, sizes, J * K), schedule_by_loop(p, sizes, J * K)
        for name in jax_iadmm.Schedule._fields:
            mine, theirs = getattr(ours, name), getattr(loop, name)
            assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
            np.testing.assert_array_equal(mine, theirs, err_msg=name)
