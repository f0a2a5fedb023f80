"""DP-IADMM (ObjP, ObjT), OutP and the non-private run against independent truths.

Each closed-form step is checked against a numerical minimisation of its subproblem; the
non-private runs against scipy's L-BFGS optimum of (1); every switch against what it names;
runs against their seeds; the noise against independence across agents and iterations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import Bounds, approx_fprime, minimize

from dpdl.algorithms import dp_iadmm as iadmm
from dpdl.algorithms import dp_iadmm_data as chunks
from dpdl.algorithms import dp_iadmm_kernel as kernel
from dpdl.algorithms import dp_iadmm_objective as objective
from dpdl.algorithms import dp_iadmm_reference as reference
from dpdl.models import softmax
from dpdl.privacy.dp_iadmm import objp_sensitivity
from dpdl.privacy.samplers import gaussian, laplace

J, K, SIZES = 6, 3, (5, 9, 7)


@pytest.fixture(scope="module", name="tiny")
def tiny_fixture() -> dict:  # importable as tiny_fixture (test_dp_iadmm_jax)
    rng = np.random.default_rng(3)
    n = sum(SIZES)
    x = rng.random((n, J)).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(SIZES)])
    x[:, 0] = 0.0  # a feature no agent has (a blank pixel): every chunk drops it
    x[offsets[1] : offsets[2], 1] = 0.0  # one that only agent 1 lacks: its chunk drops it too
    y = rng.integers(0, K, n)
    return {
        "x": x,
        "y": y,
        "offsets": offsets,
        "data": chunks.federated_data(x, y, offsets, K, chunk_bytes=1),
    }


def params(algorithm: str, epsilon: float = 1.0, iterations: int = 3, **kwargs) -> iadmm.IadmmParams:
    penalty = kwargs.pop("penalty", iadmm.PenaltySchedule(c1=2.0, c2=5.0, t_c=10_000))
    return iadmm.IadmmParams(algorithm, epsilon, iterations, penalty, **{"log_every": 1, **kwargs})


def run(tiny: dict, p: iadmm.IadmmParams, seeds=(0,), data=None) -> iadmm.IadmmResult:
    rngs = [np.random.default_rng(s) for s in seeds]
    return iadmm.run_iadmm(data or tiny["data"], p, tiny["x"], tiny["y"], rngs=rngs)


def random_state(shape=(2, J, 1, K), seed=1) -> dict:
    rng = np.random.default_rng(seed)
    arrays = {name: rng.standard_normal(shape).astype(np.float32) for name in ("z", "lam", "grad", "noise")}
    arrays["w"] = rng.standard_normal(shape[1:]).astype(np.float32)
    return arrays


def as_float64(s: dict, *names: str) -> list[np.ndarray]:
    return [s[name].astype(np.float64) for name in names]


def argmin(objective, start, bounds=None) -> np.ndarray:
    result = minimize(
        objective,
        start.ravel().astype(float),
        method="L-BFGS-B",
        bounds=bounds,
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
    )
    return result.x.reshape(start.shape)


# --- closed-form steps against numerical minimisation ---------------------------------------------
# Each step is checked twice: as the compiled kernel does it (float32) and as the float64
# reference (dp_iadmm_reference) states it.


def test_server_update_solves_4a() -> None:
    s = random_state(shape=(3, J, 1, K))
    rho = 2.5

    def objective(w):  # (4a): sum_p <lambda_p, w> + rho/2 ||w - z_p||^2
        w = w.reshape(s["w"].shape)
        return float(sum((s["lam"][p] * w).sum() + rho / 2 * ((w - s["z"][p]) ** 2).sum() for p in range(3)))

    expected = argmin(objective, s["w"])
    closed = iadmm.server_update(s["z"].sum(axis=0), s["lam"].sum(axis=0), rho, 3)
    np.testing.assert_allclose(closed, expected, atol=1e-5)
    np.testing.assert_allclose(reference.server_step(s["z"], s["lam"], rho), expected, atol=1e-5)


def fused(
    algorithm: str,
    s: dict,
    *,
    rho: float,
    radius: float = 1.0,
    inverse_eta=(1.0, 1.0),
    dual_rho: float = 0.0,
    beta_term: float = 0.0,
    regularise_server: bool = False,
    feature_rows=None,
    loss_gradient=None,
    noise_scale=None,
) -> dict:
    """Run :func:`kernel.fused_step` on a random state; return the new z and lambda and the sums over agents."""
    z, lam = s["z"], s["lam"].copy()
    rows = np.arange(z.shape[1]) if feature_rows is None else feature_rows
    noise = np.ascontiguousarray(np.moveaxis(s["noise"], 2, 0))  # replica-major (B, g, J, K)
    new, sum_new, sum_lam = np.empty_like(z), np.zeros_like(s["w"]), np.zeros_like(s["w"])
    scale = np.ones((z.shape[0], z.shape[2]), np.float32) if noise_scale is None else noise_scale
    f32 = np.float32
    kernel.fused_step(
        kernel.ALGORITHM_CODES[algorithm],
        z,
        lam,
        s["w"],
        s["grad"] if loss_gradient is None else loss_gradient,
        rows,
        f32(beta_term),
        regularise_server,
        noise,
        scale,
        f32(rho),
        f32(1 / rho),
        f32(radius),
        np.asarray(inverse_eta, f32),
        f32(1 / (rho + inverse_eta[0])),
        f32(dual_rho),
        new,
        sum_new,
        sum_lam,
    )
    return {"z": new, "lam": lam, "sum_z": sum_new, "sum_lam": sum_lam}


def test_objp_step_solves_8() -> None:
    s = random_state()
    rho, inverse_eta = 3.0, math.sqrt(4.0)  # eta = 1 / sqrt(t), t = 4

    def objective(z):  # (8): G^t(z) of (10) + ||z - z^t||^2 / (2 eta)
        z = z.reshape(s["z"].shape)
        quadratic = rho / 2 * ((s["w"] - z + (s["lam"] - s["noise"]) / rho) ** 2).sum()
        return float((s["grad"] * z).sum() + quadratic + inverse_eta / 2 * ((z - s["z"]) ** 2).sum())

    expected = argmin(objective, s["z"])
    closed = fused("objp", s, rho=rho, inverse_eta=(inverse_eta, inverse_eta))["z"]
    np.testing.assert_allclose(closed, expected, atol=1e-5)
    stated = reference.objp_step(*as_float64(s, "z", "lam", "w", "grad", "noise"), rho, 1 / inverse_eta)
    np.testing.assert_allclose(stated, expected, atol=1e-5)


@pytest.mark.parametrize("radius", [0.05, 10.0], ids=["active", "inactive"])
def test_objt_step_solves_9(radius) -> None:
    s = random_state()
    rho = 1.5

    def objective(z):  # (9): G^t(z) of (10) on the infinity-norm ball of radius delta around z^t
        z = z.reshape(s["z"].shape)
        return float(
            (s["grad"] * z).sum() + rho / 2 * ((s["w"] - z + (s["lam"] - s["noise"]) / rho) ** 2).sum()
        )

    box = Bounds((s["z"] - radius).ravel(), (s["z"] + radius).ravel())
    expected = argmin(objective, s["z"], box)
    closed = fused("objt", s, rho=rho, radius=radius)["z"]
    np.testing.assert_allclose(closed, expected, atol=1e-5)
    assert np.abs(closed - s["z"]).max() <= radius * (1 + 1e-6)
    stated = reference.objt_step(*as_float64(s, "z", "lam", "w", "grad", "noise"), rho, radius)
    np.testing.assert_allclose(stated, expected, atol=1e-5)


def test_outp_step_solves_huang_prox_subproblem_and_adds_the_noise() -> None:
    s = random_state()
    rho = 0.7
    inverse_eta = np.array([4.0, 9.0], dtype=np.float32)  # one eta-hat per agent
    per_agent = inverse_eta[:, None, None, None]

    def objective(z):  # <grad, z> - <lambda, z> + rho/2 ||w - z||^2 + ||z - z^t||^2 / (2 eta-hat)
        z = z.reshape(s["z"].shape)
        return float(
            ((s["grad"] - s["lam"]) * z).sum()
            + rho / 2 * ((s["w"] - z) ** 2).sum()
            + (per_agent / 2 * (z - s["z"]) ** 2).sum()
        )

    expected = argmin(objective, s["z"])
    step = fused("outp", s, rho=rho, inverse_eta=inverse_eta)
    np.testing.assert_allclose(step["z"] - s["noise"], expected, atol=1e-5)
    np.testing.assert_array_equal(step["lam"], s["lam"])  # OutP's (4c) waits for the server step
    stated = reference.outp_step(*as_float64(s, "z", "lam", "w", "grad"), rho, per_agent.astype(np.float64))
    np.testing.assert_allclose(stated, expected, atol=1e-5)


def test_outp_step_first_applies_the_deferred_4c() -> None:
    s = random_state()
    step = fused("outp", s, rho=0.7, inverse_eta=(4.0, 9.0), dual_rho=2.0)
    np.testing.assert_allclose(step["lam"], s["lam"] + 2.0 * (s["w"] - s["z"]), rtol=1e-6)
    moved = dict(s, lam=step["lam"])
    np.testing.assert_allclose(
        step["z"], fused("outp", moved, rho=0.7, inverse_eta=(4.0, 9.0))["z"], rtol=1e-6
    )


@pytest.mark.parametrize("algorithm", ["objp", "objt"])
def test_objp_and_objt_steps_apply_4c_and_sum_over_agents(algorithm) -> None:
    s = random_state(shape=(3, J, 2, K))
    step = fused(algorithm, s, rho=2.0, inverse_eta=(1.5,) * 3)
    np.testing.assert_allclose(
        step["lam"], s["lam"] + 2.0 * (s["w"] - step["z"]), rtol=1e-5, atol=1e-6
    )  # (4c)
    np.testing.assert_allclose(step["sum_z"], step["z"].sum(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step["sum_lam"], step["lam"].sum(axis=0), rtol=1e-5, atol=1e-6)


def test_step_noise_is_the_unit_draw_times_each_agents_and_replicas_scale() -> None:
    s = random_state(shape=(2, J, 3, K))
    scale = np.array([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], dtype=np.float32)  # (g, B)
    scaled = dict(s, noise=s["noise"] * scale[:, None, :, None])
    for algorithm in iadmm.ALGORITHMS:
        ours = fused(algorithm, s, rho=1.5, radius=0.3, inverse_eta=(2.0, 4.0), noise_scale=scale)
        np.testing.assert_array_equal(
            ours["z"], fused(algorithm, scaled, rho=1.5, radius=0.3, inverse_eta=(2.0, 4.0))["z"]
        )


def test_step_gradient_is_the_loss_rows_plus_the_beta_term() -> None:
    s = random_state()
    rows = np.array([-1, 0, -1, 1, 2, 3])  # features 0 and 2 dropped from the chunk
    loss = s["grad"][:, [1, 3, 4, 5]].copy()
    expected_grad = 0.25 * s["z"]
    expected_grad[:, [1, 3, 4, 5]] += loss  # (37): loss rows + (2 beta / P) z
    direct = fused("objt", dict(s, grad=expected_grad), rho=1.5, radius=0.2)
    ours = fused("objt", s, rho=1.5, radius=0.2, beta_term=0.25, feature_rows=rows, loss_gradient=loss)
    np.testing.assert_allclose(ours["z"], direct["z"], rtol=1e-6, atol=1e-7)


def test_dual_update_is_4c() -> None:
    s = random_state()
    lam = s["lam"].copy()
    iadmm.dual_update(lam, s["w"], s["z"], 2.0, np.empty_like(lam))
    np.testing.assert_allclose(lam, s["lam"] + 2.0 * (s["w"] - s["z"]), rtol=1e-6)
    stated = reference.dual_step(*as_float64(s, "lam", "w", "z"), 2.0)
    np.testing.assert_allclose(stated, s["lam"] + 2.0 * (s["w"].astype(float) - s["z"]), rtol=1e-12)


def test_chunk_gradients_match_37_and_report_residual_norms(tiny) -> None:
    data = tiny["data"]
    rng = np.random.default_rng(5)
    z = rng.standard_normal((data.n_agents, J, 2, K)).astype(np.float32)
    beta, n = 0.3, data.n_total
    for chunk in data.chunks:
        agents = slice(chunk.start, chunk.stop)
        out = np.empty_like(z[agents])
        norms = chunks.chunk_gradients(
            chunk, z[agents], np.full(chunk.stop - chunk.start, 1.0 / n), beta, data.n_agents, out
        )
        for row, agent in enumerate(range(chunk.start, chunk.stop)):
            original = data.agent_ids[agent]
            rows = slice(tiny["offsets"][original], tiny["offsets"][original + 1])
            x, y = tiny["x"][rows].astype(float), tiny["y"][rows]
            for b in range(2):
                w = z[agent, :, b, :].astype(float)
                h = np.exp(x @ w) / np.exp(x @ w).sum(axis=1, keepdims=True)
                residual = h - np.eye(K)[y]
                expected = x.T @ residual / n + 2 * beta / data.n_agents * w  # (37)
                np.testing.assert_allclose(out[row, :, b, :], expected, rtol=1e-4, atol=1e-6)
                np.testing.assert_allclose(norms[row, b, : len(y)], np.abs(residual).sum(axis=1), rtol=1e-5)


def test_chunk_sensitivities_equal_eq20_on_full_residuals(tiny) -> None:
    data = tiny["data"]
    z = np.random.default_rng(6).standard_normal((data.n_agents, J, 2, K)).astype(np.float32)
    for chunk in data.chunks:
        agents = slice(chunk.start, chunk.stop)
        norms = chunks.chunk_gradients(
            chunk, z[agents], np.ones(chunk.stop - chunk.start), 0.0, data.n_agents, np.empty_like(z[agents])
        )
        ours = chunks.chunk_sensitivities(data, chunk, norms)
        assert ours.shape == (chunk.stop - chunk.start, 2)
        probs = softmax.probabilities(chunk.features, z[agents][:, chunk.columns])
        for row, agent in enumerate(range(chunk.start, chunk.stop)):
            n = data.sizes[agent]
            for b in range(2):
                residual = (probs[row, b, :, :n] - chunk.onehot[row, 0, :, :n]).T  # (n, K)
                direct = objp_sensitivity(
                    np.abs(chunk.features[row, :n]).sum(axis=1), residual, n_total=data.n_total
                )
                assert ours[row, b] == pytest.approx(direct, rel=1e-5)


def test_reference_gradient_is_37_and_its_sensitivity_is_20(tiny) -> None:
    agents = reference.agents_from_rows(tiny["x"], tiny["y"], tiny["offsets"], K)
    n_total, beta = len(tiny["y"]), 0.3
    z = np.random.default_rng(7).standard_normal((J, K))
    for agent in agents:

        def f_p(flat, agent=agent):  # (2c): (1/I) sum_i l(z; x_pi, y_pi) + (beta / P) r(z)
            weights = flat.reshape(J, 1, K)
            loss = softmax.loss_sum(agent.features, weights, agent.labels.argmax(axis=1))[0]
            return loss / n_total + beta / len(agents) * (weights**2).sum()

        gradient, residual = reference.local_gradient(agent, z, 1 / n_total, beta, len(agents))
        numeric = approx_fprime(z.ravel(), f_p, 1e-7).reshape(J, K)
        np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)
        probs = softmax.probabilities(agent.features, z[:, None, :])[0].T  # (I_p, K)
        np.testing.assert_allclose(residual, probs - agent.labels, rtol=1e-12, atol=1e-15)
        direct = objp_sensitivity(agent.features.sum(axis=1), residual, n_total=n_total)  # (20)
        assert reference.sensitivity(agent, residual, n_total) == pytest.approx(direct, rel=1e-12)
    worst = objp_sensitivity(
        np.ones(1), np.zeros((1, K)), n_total=n_total, mode="worst_case", feature_l1_bound=J
    )
    assert reference.worst_case_sensitivity(J, 1.0, n_total) == pytest.approx(worst, rel=1e-12)


# --- data blocking ------------------------------------------------------------------------------


def test_size_blocks_are_optimal_and_cover_every_agent() -> None:
    sizes = np.array([3, 3, 4, 40, 41, 120])
    blocks = chunks.size_blocks(sizes, overhead_rows=10)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    assert blocks == [(0, 3), (3, 5), (5, 6)]  # 3*4 + 10 + 2*41 + 10 + 120 + 10 = 244, the minimum


def test_federated_data_pads_sorts_and_views(tiny) -> None:
    data = tiny["data"]
    assert list(data.sizes) == sorted(SIZES) and list(data.agent_ids) == [0, 2, 1]
    for chunk in data.chunks:
        for row, agent in enumerate(range(chunk.start, chunk.stop)):
            n = data.sizes[agent]
            original = data.agent_ids[agent]
            rows = tiny["x"][tiny["offsets"][original] :][:n]
            np.testing.assert_array_equal(chunk.features[row, :n], rows[:, chunk.columns])
            assert (
                not chunk.features[row, n:].any()
                and chunk.valid[row, :n].all()
                and not chunk.valid[row, n:].any()
            )
        expected_columns = (
            [2, 3, 4, 5]
            if chunk.stop - chunk.start == 1 and data.agent_ids[chunk.start] == 1
            else [1, 2, 3, 4, 5]
        )
        assert list(chunk.columns) == expected_columns  # the features nonzero in some row of the chunk
    dense = np.random.default_rng(4).random((18, J)).astype(np.float32)
    equal = chunks.federated_data(dense, tiny["y"][:18], np.array([0, 6, 12, 18]), K)
    assert len(equal.chunks) == 1 and np.shares_memory(
        equal.chunks[0].features, dense
    )  # all features: a view
    assert equal.chunks[0].columns == slice(None)


def test_federated_data_rejects_empty_agents(tiny) -> None:
    with pytest.raises(ValueError, match="at least one row"):
        chunks.federated_data(tiny["x"], tiny["y"], np.array([0, 0, 21]), K)


# --- whole runs -----------------------------------------------------------------------------------


def centralized_optimum(tiny: dict, beta: float) -> np.ndarray:
    x, y, n = tiny["x"].astype(float), tiny["y"], len(tiny["y"])

    def objective(flat):  # (1): (1/I) sum_i l(w; x_i, y_i) + beta r(w)
        w = flat.reshape(J, K)
        scores = x @ w
        scores -= scores.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(scores).sum(axis=1))
        h = np.exp(scores - log_norm[:, None])
        h[np.arange(n), y] -= 1
        value = (log_norm - scores[np.arange(n), y]).sum() / n + beta * (w**2).sum()
        return value, (x.T @ h / n + 2 * beta * w).ravel()

    result = minimize(
        objective,
        np.zeros(J * K),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
    )
    return result.x.reshape(J, K)


def test_objective_minimiser_finds_the_centralized_optimum(tiny) -> None:
    beta = 0.01
    seen = []
    w, result = objective.objective_minimiser(tiny["data"], beta, 500, callback=seen.append)
    optimum = centralized_optimum(tiny, beta)
    assert w.shape == (J, 1, K) and w.dtype == np.float32
    # float32 objective: its rounding (1e-7) hides the last f - f* ~ 0.01 ||w - w*||^2 from the line search
    assert np.linalg.norm(w[:, 0] - optimum) / np.linalg.norm(optimum) < 1e-3
    assert np.abs(result.jac).max() < 1e-4
    assert len(seen) == result.nit and all(s.shape == (J, 1, K) for s in seen)
    assert objective.objective_minimiser(tiny["data"], beta, 3)[1].nit == 3  # max_iterations bounds it


def test_training_error_counts_the_wrong_rows_of_each_replica(tiny) -> None:
    w = np.random.default_rng(5).standard_normal((J, 2, K)).astype(np.float32)
    expected = [np.mean((tiny["x"] @ w[:, b]).argmax(axis=1) != tiny["y"]) for b in range(2)]
    assert 0 < min(expected)
    np.testing.assert_allclose(objective.training_error(tiny["data"], w), expected)  # padding rows left out


@pytest.mark.parametrize(
    "algorithm, options",
    [("objp", {"a": 100.0}), ("objt", {}), ("outp", {"outp_gradient": "global_mean"})],
    ids=["nonprivate_objp", "nonprivate_objt", "nonprivate_outp_global_mean"],
)
def test_nonprivate_runs_reach_the_centralized_optimum(tiny, algorithm, options) -> None:
    beta = 0.01  # a strongly convex (1), so the optimum is unique
    optimum = centralized_optimum(tiny, beta)
    result = run(tiny, params(algorithm, math.inf, 3000, beta=beta, log_every=3000, **options))
    assert np.linalg.norm(result.weights[0] - optimum) / np.linalg.norm(optimum) < 1e-3
    assert not result.noise_multipliers.any()
    np.testing.assert_allclose(
        result.local[0], np.broadcast_to(optimum, result.local[0].shape), rtol=0, atol=1e-3
    )


@pytest.mark.parametrize("algorithm", iadmm.ALGORITHMS)
def test_same_seed_gives_identical_trajectories(tiny, algorithm) -> None:
    first, second = (run(tiny, params(algorithm, 0.5, 4), seeds=(7,)) for _ in range(2))
    np.testing.assert_array_equal(first.local, second.local)
    assert first.traces[0].equals(second.traces[0])
    other = run(tiny, params(algorithm, 0.5, 4), seeds=(8,))
    assert not np.array_equal(first.local, other.local)


@pytest.mark.parametrize("algorithm", iadmm.ALGORITHMS)
def test_a_replica_does_not_depend_on_the_other_replicas(tiny, algorithm) -> None:
    alone = run(tiny, params(algorithm, 0.5, 4), seeds=(1,))
    batched = run(tiny, params(algorithm, 0.5, 4), seeds=(0, 1))
    np.testing.assert_allclose(batched.local[1], alone.local[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(batched.weights[1], alone.weights[0], rtol=1e-6, atol=1e-7)


def test_chunking_does_not_change_a_run(tiny) -> None:
    one_chunk = chunks.federated_data(tiny["x"], tiny["y"], tiny["offsets"], K, chunk_bytes=10**9)
    for algorithm in iadmm.ALGORITHMS:
        p = params(algorithm, 0.5, 4)
        np.testing.assert_allclose(
            run(tiny, p, data=one_chunk).local, run(tiny, p).local, rtol=1e-6, atol=1e-7
        )


def first_step_noise(tiny: dict, p: iadmm.IadmmParams, seeds: tuple[int, ...]) -> np.ndarray:
    """The Laplace noise of iteration 1 of each replica, (B, P, J, K), read back from ObjT's unclipped step."""
    result = run(tiny, p, seeds=seeds)
    x, y, offsets, n = tiny["x"].astype(float), tiny["y"], tiny["offsets"], tiny["data"].n_total
    rho = p.penalty(1, p.epsilon)
    noise = np.empty(result.local.shape)
    for agent in range(len(offsets) - 1):
        rows = slice(offsets[agent], offsets[agent + 1])
        grad = x[rows].T @ (np.full((len(y[rows]), K), 1 / K) - np.eye(K)[y[rows]]) / n  # f'_p(0), (37)
        noise[:, agent] = (
            -rho * result.local[:, agent] - grad
        )  # (9) at t = 1: z = (lambda - xi - f'(0)) / rho
    return noise


def test_noise_has_the_calibrated_scale_and_is_independent_across_agents(tiny) -> None:
    """(11a) with (20): each coordinate of xi_p^1 is Laplace(0, b_p), b_p = Delta-bar_p^1 / epsilon-bar.

    The noise is read back from ObjT's first step (9) (w = lambda = z = 0) in 400 replicas, 7200
    coordinates per agent. At z = 0 every softmax output is 1/K, so ||h - y_i||_1 = 2 (K - 1) / K for
    every sample and (20) gives b_p = max_i ||x_pi||_1 2 (K - 1) / (K I epsilon-bar), computed here
    by hand. |xi| / b_p is Exp(1) (mean 1, sd 1); the sample sd of xi / b_p is sqrt(2) with relative
    standard error sqrt(1.25 / n) (Laplace kurtosis 6). Both are held to 4 standard errors (under 5%
    per agent), so a scale 10% off (8 standard errors) fails, and so does b_p^2 in place of b_p
    (every b_p here is below 0.5: b_p^2 is less than b_p / 2).
    """
    epsilon, seeds = 0.5, tuple(range(400))
    big = dataclasses.replace(params("objt", epsilon, 1), a=1e9)  # the radius never binds
    noise = first_step_noise(tiny, big, seeds)
    x, offsets, n = tiny["x"].astype(float), tiny["offsets"], tiny["data"].n_total
    ratios = []
    for agent in range(3):
        rows = slice(offsets[agent], offsets[agent + 1])
        scale = np.abs(x[rows]).sum(axis=1).max() * 2 * (K - 1) / K / n / epsilon  # (20), (11a), by hand
        assert 0.05 < scale < 0.5  # far from 1, so that b and b^2 differ
        ratio = noise[:, agent].ravel() / scale
        count = ratio.size
        assert count == len(seeds) * J * K
        assert abs(np.abs(ratio).mean() - 1.0) < 4 / math.sqrt(count)  # E|xi| = b
        assert abs(ratio.std() - math.sqrt(2)) < 4 * math.sqrt(2) * math.sqrt(
            1.25 / count
        )  # sd(xi) = sqrt(2) b
        assert abs(ratio.mean()) < 4 * math.sqrt(2) / math.sqrt(count)  # centred
        ratios.append(ratio)
    correlation = np.corrcoef(ratios)[np.triu_indices(3, 1)]
    assert np.abs(correlation).max() < 4 / math.sqrt(len(ratios[0]))  # independent across agents


def test_noise_draws_are_uncorrelated_across_agents_and_iterations() -> None:
    rngs = [np.random.default_rng(4), np.random.default_rng(5)]
    buffer = np.empty(2 * 3 * 200 * 50, dtype=np.float32)
    first = kernel.draw_noise(rngs, laplace, (3, 200, 50), buffer).copy()
    second = kernel.draw_noise(rngs, laplace, (3, 200, 50), buffer)
    assert first.shape == (2, 3, 200, 50)  # replica-major
    np.testing.assert_allclose(np.abs(first).mean(axis=(2, 3)), 1.0, rtol=0.05)  # E|Laplace(1)| = 1
    series = [first[b, p].ravel() for p in range(3) for b in range(2)]
    series += [second[b, p].ravel() for p in range(3) for b in range(2)]
    correlation = np.corrcoef(series)
    off_diagonal = correlation[~np.eye(len(series), dtype=bool)]
    assert np.abs(off_diagonal).max() < 5 / math.sqrt(200 * 50)  # about 5 standard errors


def test_a_single_replica_draws_exactly_like_the_sampler() -> None:
    ours = kernel.draw_noise([np.random.default_rng(9)], laplace, (2, 4, 3), np.empty(24, dtype=np.float32))
    direct = laplace(rng=np.random.default_rng(9), scale=1.0, size=(2, 4, 3), dtype=np.float32)
    np.testing.assert_array_equal(ours[0], direct)


# --- the compiled run against the float64 reference -----------------------------------------------
# run_iadmm (float32, chunked, fused) replays dp_iadmm_reference (float64, one agent at a time)
# from the same noise draws. Tolerance: float32 rounds at 2^-24 = 6e-8; each coordinate of an
# iteration passes through about ten roundings (a softmax and products over up to 9 rows, the
# local step's six operations, sums over 3 agents) and carries the earlier iterations' errors.
# Measured over these cases at T = 6: at most 4.5e-7 of the largest entry (ObjT with the paper's
# radius; it grows with T: 1.3e-6 by T = 20), while a wrong sign or term in one equation moves the
# state by O(1).

REPLAY_ITERATIONS = 6
REPLAY_TOLERANCE = 1e-6  # of the largest |entry| of each of w, z and lambda
REPLAY_CASES = {  # algorithm, epsilon-bar, options
    "objp": ("objp", 0.5, {"a": 0.5}),
    "objp_worst_case": ("objp", 0.5, {"sensitivity": "worst_case"}),
    "objt": ("objt", 0.5, {"a": 0.05}),  # delta = 0.05: the trust region (9) binds
    "objt_paper_radius": ("objt", 0.5, {"a": 0.2, "trust_radius": "paper_inv_t2"}),
    "outp": ("outp", 0.5, {}),
    "outp_sigma_global_mean": ("outp", 0.5, {"outp_noise": "sigma", "outp_gradient": "global_mean"}),
    "outp_code_server_w": ("outp", 0.5, {"outp_regulariser": "code_server_w"}),  # the authors' 2 beta w (#40)
    "objp_nonprivate": ("objp", math.inf, {"a": 0.5}),
    "outp_nonprivate": ("outp", math.inf, {}),
}


def replayed_unit_noise(data: chunks.FederatedData, seed: int, sampler, iterations: int) -> np.ndarray:
    """One replica's unit-scale draws in a run, replayed: (T, P, J, K) float64, agents in original order.

    At every iteration :func:`iadmm.run_iadmm` draws, chunk by chunk (agents in size order), one
    sampler call of the chunk's shape (g, J, K) at scale 1 from each replica's own generator
    (:func:`kernel.draw_noise`); the same calls on a generator of the same seed give the same values.
    """
    rng = np.random.default_rng(seed)
    draws = np.empty((iterations, data.n_agents, data.n_features, data.n_classes))
    for t in range(iterations):
        for chunk in data.chunks:
            shape = (chunk.stop - chunk.start, data.n_features, data.n_classes)
            draws[t, chunk.start : chunk.stop] = sampler(rng=rng, scale=1.0, size=shape, dtype=np.float32)
    unit = np.empty_like(draws)
    unit[:, data.agent_ids] = draws  # internal agent p is original agent agent_ids[p]
    return unit


def assert_replays(ours: np.ndarray, stated: np.ndarray, what: str) -> None:
    error, size = np.abs(ours - stated).max(), np.abs(stated).max()
    assert error <= REPLAY_TOLERANCE * size, f"{what}: max error {error:.3g} against max |entry| {size:.3g}"


@pytest.mark.parametrize("chunk_bytes", [1, 10**9], ids=["agent_chunks", "one_padded_chunk"])
@pytest.mark.parametrize("case", REPLAY_CASES)
def test_a_run_replays_the_float64_reference_iteration_by_iteration(tiny, case, chunk_bytes) -> None:
    algorithm, epsilon, options = REPLAY_CASES[case]
    seeds = (4, 5)  # two replicas: each follows its own generator
    data = chunks.federated_data(
        tiny["x"], tiny["y"], tiny["offsets"], K, replicas=len(seeds), chunk_bytes=chunk_bytes
    )
    agents = reference.agents_from_rows(tiny["x"], tiny["y"], tiny["offsets"], K)
    sampler = gaussian if algorithm == "outp" else laplace
    noise = {
        seed: replayed_unit_noise(data, seed, sampler, REPLAY_ITERATIONS) for seed in seeds
    }  # unused if inf
    states = {seed: reference.initial_state(len(agents), J, K) for seed in seeds}
    trust_region_bound = False
    for t in range(1, REPLAY_ITERATIONS + 1):
        p = params(algorithm, epsilon, t, beta=0.05, **options)  # a beta whose term (37) shows
        result = run(tiny, p, seeds=seeds, data=data)  # iterations 1..t (the same draws as a longer run)
        for b, seed in enumerate(seeds):
            previous, states[seed] = (
                states[seed],
                reference.iteration(states[seed], agents, p, t, noise[seed][t - 1]),
            )
            stated = states[seed]
            assert_replays(result.weights[b], stated.w, f"w^{t + 1}, replica {b}")
            assert_replays(result.local[b], stated.z, f"z^{t + 1}, replica {b}")
            assert_replays(result.duals[b], stated.lam, f"lambda^{t + 1}, replica {b}")
            radius = reference.trust_radius(p, t)
            trust_region_bound |= bool(
                np.isclose(np.abs(stated.z - previous.z), radius, rtol=1e-12, atol=0).any()
            )
    assert trust_region_bound == (algorithm == "objt")  # ObjT's clip (9) is exercised


# --- switches -------------------------------------------------------------------------------------


def test_trust_radius_switch_changes_only_objt_radius(tiny) -> None:
    paper = run(tiny, params("objt", 0.05, 3, trust_radius="paper_inv_t2", a=0.01))
    code = run(tiny, params("objt", 0.05, 3, trust_radius="code_const", a=0.01))
    change = paper.traces[0]["z_change"].to_numpy()
    assert change[1] <= 0.01 / 4 + 1e-9 and change[2] <= 0.01 / 9 + 1e-9  # |z^{t+1} - z^t| <= a / t^2
    assert not np.allclose(paper.local, code.local)
    np.testing.assert_array_equal(paper.traces[0]["z_change"][:1], code.traces[0]["z_change"][:1])  # t = 1
    for algorithm in ("objp", "outp"):
        a, b = (run(tiny, params(algorithm, 0.05, 3, trust_radius=r)) for r in ("paper_inv_t2", "code_const"))
        np.testing.assert_array_equal(a.local, b.local)


def test_outp_noise_switch_squares_the_std_only_for_outp(tiny) -> None:
    equal = chunks.federated_data(
        tiny["x"], tiny["y"], np.array([0, 7, 14, 21]), K
    )  # one sigma for all agents
    variance = run(tiny, params("outp", 0.05, 2, outp_noise="variance"), data=equal)
    sigma = run(tiny, params("outp", 0.05, 2, outp_noise="sigma"), data=equal)
    np.testing.assert_allclose(
        variance.traces[0]["noise_scale"], sigma.traces[0]["noise_scale"] ** 2, rtol=1e-9
    )
    for algorithm in ("objp", "objt"):
        a, b = (run(tiny, params(algorithm, 0.05, 2, outp_noise=mode)) for mode in ("variance", "sigma"))
        np.testing.assert_array_equal(a.local, b.local)


def test_sensitivity_switch_sets_the_worst_case_laplace_scale(tiny) -> None:
    worst = run(tiny, params("objt", 0.5, 2, sensitivity="worst_case"))
    np.testing.assert_allclose(worst.traces[0]["noise_scale"], 4 * J / tiny["data"].n_total / 0.5, rtol=1e-9)
    eq20 = run(tiny, params("objt", 0.5, 2, sensitivity="eq20"))
    assert np.all(eq20.traces[0]["noise_scale"] < worst.traces[0]["noise_scale"])
    a, b = (run(tiny, params("outp", 0.5, 2, sensitivity=mode)) for mode in ("eq20", "worst_case"))
    np.testing.assert_array_equal(a.local, b.local)


def test_outp_gradient_switch_rescales_only_outp(tiny) -> None:
    agent, glob = (
        run(tiny, params("outp", math.inf, 2, outp_gradient=m)) for m in ("agent_mean", "global_mean")
    )
    assert not np.allclose(agent.local, glob.local)
    one_agent = chunks.federated_data(tiny["x"], tiny["y"], np.array([0, 21]), K)  # I_p = I: no difference
    a, b = (
        run(tiny, params("outp", math.inf, 2, outp_gradient=m), data=one_agent)
        for m in ("agent_mean", "global_mean")
    )
    np.testing.assert_array_equal(a.local, b.local)
    c, d = (run(tiny, params("objt", 0.5, 2, outp_gradient=m)) for m in ("agent_mean", "global_mean"))
    np.testing.assert_array_equal(c.local, d.local)


def test_penalty_schedule_factor_and_static() -> None:
    schedule = iadmm.PenaltySchedule(c1=2.0, c2=5.0, t_c=10_000)
    assert schedule(1, 0.05) == pytest.approx(102.0)  # (21): 2 * 1.2^0 + 5 / 0.05
    assert schedule(10_000, 0.05) == pytest.approx(2.4 + 100.0)
    assert schedule(1, math.inf) == pytest.approx(2.0)
    assert dataclasses.replace(schedule, factor=0.01)(1, 0.05) == pytest.approx(1.02)
    assert dataclasses.replace(schedule, static=0.1)(5, 0.05) == 0.1


def test_outp_privacy_schedule_is_the_smallest_multiplier_over_agents(tiny) -> None:
    from dpdl.privacy.dp_iadmm import outp_inverse_proximity, outp_noise_std, outp_sensitivity

    result = run(tiny, params("outp", 0.5, 3, outp_noise="sigma"))
    np.testing.assert_allclose(result.noise_multipliers, math.sqrt(2 * math.log(1.25e6)) / 0.5)
    result = run(tiny, params("outp", 0.5, 3, outp_noise="variance"))
    rho = 2.0 + 5.0 / 0.5
    expected = []
    for t in (1, 2, 3):
        multipliers = []
        for n in SIZES:
            inverse_eta = outp_inverse_proximity(t, 0.5, n_samples=n, n_params=J * K)
            sensitivity = outp_sensitivity(rho, inverse_eta, n_samples=n)
            multipliers.append(
                outp_noise_std(0.5, sensitivity=sensitivity, outp_noise="variance") / sensitivity
            )
        expected.append(min(multipliers))
    np.testing.assert_allclose(result.noise_multipliers, expected, rtol=1e-12)


def test_params_reject_unknown_switch_values() -> None:
    with pytest.raises(ValueError, match="trust_radius must be one of"):
        params("objt", trust_radius="paper")
    with pytest.raises(ValueError, match="epsilon must be in"):
        params("objt", epsilon=0.0)


def _outp_as_written(x, labels, offsets, epsilon, unit_noise, iterations, regulariser, beta=1e-6, delta=1e-6):
    """OutP under the authors' switches, written out from notes/iadmm.md 2.5 and the authors' src/Models.py
    (Base_First_Block_Problem_ClosedForm, Base_Second_Block_Problem_ClosedForm, the dual update), with (37)'s
    regulariser or their src/Functions.py's (``code_server_w``): the update the replay against their code
    (benchmarks/replay_outp_authors.py) pins."""
    n_agents, n_classes = len(offsets) - 1, labels.max() + 1
    onehot = np.eye(n_classes)[labels]
    w = np.zeros((x.shape[1], n_classes))
    z, lam = np.zeros((n_agents, *w.shape)), np.zeros((n_agents, *w.shape))
    for t in range(1, iterations + 1):
        rho = min(1e9, 2.0 * 1.2 ** math.floor(t / 10_000) + 5.0 / epsilon)  # (21), MNIST's constants
        for p in range(n_agents):
            rows = slice(offsets[p], offsets[p + 1])
            n_p = offsets[p + 1] - offsets[p]
            scores = np.exp(x[rows] @ z[p])
            residual = scores / scores.sum(axis=1, keepdims=True) - onehot[rows]
            gradient = x[rows].T @ residual / n_p  # agent mean
            gradient += (
                2.0 * beta * w if regulariser == "code_server_w" else 2.0 * beta / n_agents * z[p]
            )  # (37)
            inverse_eta = (
                0.25 * n_p + 2.0 * math.sqrt(t * math.log(1.25 / delta)) / epsilon
            )  # 1/eta-hat, a = 1
            z[p] = (rho * w + lam[p] - gradient + inverse_eta * z[p]) / (rho + inverse_eta)
            sigma = 2.0 * math.sqrt(2.0 * math.log(1.25 / delta)) / (epsilon * (rho + inverse_eta))
            z[p] += sigma**2 * unit_noise[t - 1, p]  # the code's std: sigma^2 ("variance")
        w = np.mean(z - lam / rho, axis=0)
        lam += rho * (w - z)
    return w, z, lam


@pytest.mark.parametrize("regulariser", ["eq37", "code_server_w"])
@pytest.mark.parametrize("epsilon", [0.05, 1.0])
def test_outp_replays_the_update_written_out_from_the_note(epsilon: float, regulariser: str) -> None:
    """#40: the reference's OutP, under the authors' switches, is the update written out above, iterate by
    iterate from injected noise; a change to its eta-hat, rho, noise std, order of steps or gradient fails."""
    rng = np.random.default_rng(3)
    x = rng.random((21, 5))
    labels = rng.integers(0, 3, 21)
    offsets = np.array([0, 7, 14, 21])
    unit_noise = rng.standard_normal((6, 3, 5, 3))
    params = iadmm.IadmmParams(
        algorithm="outp",
        epsilon=epsilon,
        iterations=6,
        penalty=iadmm.PenaltySchedule(c1=2.0, c2=5.0, t_c=10_000),
        outp_noise="variance",
        outp_gradient="agent_mean",
        outp_regulariser=regulariser,
    )
    agents = reference.agents_from_rows(x, labels, offsets, 3)
    state = reference.initial_state(3, 5, 3)
    for t in range(1, 7):
        state = reference.iteration(state, agents, params, t, unit_noise[t - 1])
    w, z, lam = _outp_as_written(x, labels, offsets, epsilon, unit_noise, 6, regulariser)
    np.testing.assert_allclose(state.w, w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state.z, z, rtol=0, atol=1e-12)
    np.testing.assert_allclose(state.lam, lam, rtol=0, atol=1e-10)
