"""D-ZOA, DP-ADMM and the centralized lasso of Gratton et al. (dzoa.md): formulas and update steps."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpdl.algorithms.dzoa import (
    adjacency,
    dzoa,
    exact_local_minimizer,
    local_objective,
    normalized_error,
    topology_edges,
    two_point_estimate,
)
from dpdl.algorithms.dzoa_dpadmm import dp_admm
from dpdl.data.lasso import generate
from dpdl.models import lasso

K, N_K, P = 5, 20, 10


@pytest.fixture(scope="module")
def trials() -> dict:
    """Two trials of the paper's data (dzoa.md 5.3), split by agent, with their centralized solutions."""
    data = generate(trials=2, seed=11, agents=K, samples_per_agent=N_K, features=P, noise_variance=0.1)
    solution = lasso.solve(data["X"], data["y"], l1_weight=1.0)
    return {
        "X": data["X"].reshape(2, K, N_K, P),
        "y": data["y"].reshape(2, K, N_K),
        "flat_X": data["X"],
        "flat_y": data["y"],
        "beta_c": solution.beta,
        "gap": solution.gap,
    }


def agent_rngs(seed: int, n_trials: int = 2) -> list[list[np.random.Generator]]:
    return [[np.random.default_rng([seed, b, k]) for k in range(K)] for b in range(n_trials)]


# ----------------------------------------------------------------------------- centralized lasso


@pytest.mark.parametrize("scale", [1.0, 1.0 / N_K], ids=["sum_33", "mean_1_over_Nk"])
def test_centralized_solution_has_duality_gap_below_1e_10_and_satisfies_kkt(trials, scale):
    solution = lasso.solve(trials["flat_X"], trials["flat_y"], l1_weight=1.0, scale=scale)
    assert np.all(solution.gap < 1e-10)
    residual = np.einsum("tnp,tp->tn", trials["flat_X"], solution.beta) - trials["flat_y"]
    slope = 2.0 * scale * np.einsum("tnp,tn->tp", trials["flat_X"], residual)
    active = solution.beta != 0
    assert np.allclose(slope[active], -np.sign(solution.beta[active]), atol=1e-9)  # 2 s x_j^T r = -eta sign
    assert np.all(np.abs(slope[~active]) <= 1.0 + 1e-9)


def test_duality_gap_bounds_the_suboptimality_of_any_point(trials):
    X, y, beta_c = trials["flat_X"], trials["flat_y"], trials["beta_c"]
    rng = np.random.default_rng(0)
    optimum = lasso.objective(beta_c, X, y, l1_weight=1.0)
    for _ in range(5):
        point = beta_c + rng.normal(scale=0.3, size=beta_c.shape)
        gap = lasso.duality_gap(point, X, y, l1_weight=1.0)
        assert np.all(lasso.objective(point, X, y, l1_weight=1.0) - optimum <= gap + 1e-9)
        assert np.all(gap > 1e-3)


def test_centralized_solver_rejects_a_zero_column():
    X = np.ones((4, 3))
    X[:, 1] = 0.0
    with pytest.raises(ValueError, match="every column of X must be non-zero"):
        lasso.solve(X, np.ones(4), l1_weight=1.0)


# ------------------------------------------------------------------------------------ topology


def test_default_topology_is_ring_plus_chord_with_degrees_3_2_3_2_2():
    edges = topology_edges("ring_chord", 5)
    assert edges == [(0, 1), (0, 2), (0, 4), (1, 2), (2, 3), (3, 4)]
    assert adjacency(edges, 5).sum(axis=1).tolist() == [3, 2, 3, 2, 2]
    assert len(topology_edges("complete", 5)) == 10 and len(topology_edges("path", 5)) == 4
    with pytest.raises(ValueError, match="needs at least 4 agents"):
        topology_edges("ring_chord", 3)


# ------------------------------------------------------------------------ zeroth-order estimator


def test_two_point_estimator_is_unbiased_for_the_smoothed_quadratic():
    """For f(b) = b^T A b + c^T b, E_nu1 f(b + u1 nu1) has gradient 2 A b + c; (9)/(12) is unbiased for it."""
    rng = np.random.default_rng(1)
    root = rng.normal(size=(P, P))
    A, c, point = root @ root.T / P, rng.normal(size=P), rng.normal(size=P)

    def quadratic(b: np.ndarray) -> np.ndarray:
        return np.einsum("...p,pq,...q->...", b, A, b) + b @ c

    n = 200_000
    nu1, nu2 = rng.standard_normal((n, P)), rng.standard_normal((n, P))
    u1, u2 = 0.5, 0.5 / (P * 2) ** 2
    shifted = point + u1 * nu1
    samples = ((quadratic(shifted + u2 * nu2) - quadratic(shifted)) / u2)[:, None] * nu2  # (9), one per pair
    estimate = two_point_estimate(quadratic, point, u1=u1, u2=u2, nu1=nu1, nu2=nu2)  # (12), J = n
    assert np.allclose(estimate, samples.mean(axis=0))
    standard_error = samples.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(estimate - (2 * A @ point + c)) < 5 * standard_error)


def reference_dzoa(
    X, y, graph, step_scale, rngs, *, n_outer, n_inner, n_directions, lipschitz=3.0, rho=4.0, l1_weight=1.0
):
    """Algorithm 1 literally: loops over settings, trials, agents and steps, with the literal (9)/(12)."""
    n_settings, n_trials = step_scale.shape[:2]
    degree = graph.sum(axis=1)
    beta = np.zeros((n_settings, n_trials, K, P))
    gamma = np.zeros_like(beta)
    for _ in range(n_outer):
        v = degree[:, None] * beta + np.einsum("kl,cblp->cbkp", graph, beta)
        directions = np.empty((n_trials, K, n_inner, 2, n_directions, P))
        for b in range(n_trials):
            for k in range(K):
                rngs[b][k].standard_normal(out=directions[b, k])
        new = np.zeros_like(beta)
        for c in range(n_settings):
            for b in range(n_trials):
                for k in range(K):
                    local = functools.partial(
                        local_objective,
                        X=X[b, k],
                        y=y[b, k],
                        gamma=gamma[c, b, k],
                        v=v[c, b, k],
                        degree=int(degree[k]),
                        rho=rho,
                        l1_weight=l1_weight,
                        n_agents=K,
                        loss_scale=1.0,
                    )
                    point = np.zeros(P)
                    for t in range(1, n_inner + 1):
                        nu1, nu2 = directions[b, k, t - 1]
                        g = two_point_estimate(
                            local, point, u1=1.0 / t, u2=1.0 / (P * t) ** 2, nu1=nu1, nu2=nu2
                        )
                        point = (
                            point - step_scale[c, b, k] / (lipschitz * math.sqrt(t * P * math.log(2 * P))) * g
                        )
                    new[c, b, k] = point
        beta = new
        gamma = gamma + rho * (degree[:, None] * beta - np.einsum("kl,cblp->cbkp", graph, beta))
    return beta


def test_vectorized_dzoa_equals_the_literal_algorithm(trials):
    graph = adjacency(topology_edges("ring_chord", K), K)
    step_scale = np.random.default_rng(2).uniform(1.0, 2.0, size=(2, 2, K))
    shape = {"n_outer": 3, "n_inner": 30, "n_directions": 8}
    fast = dzoa(
        trials["X"],
        trials["y"],
        trials["beta_c"],
        graph,
        step_scale,
        agent_rngs(3),
        rho=4.0,
        l1_weight=1.0,
        loss_scale=1.0,
        lipschitz=3.0,
        smoothing=1.0,
        **shape,
    )
    slow = reference_dzoa(trials["X"], trials["y"], graph, step_scale, agent_rngs(3), **shape)
    # The literal finite difference loses ~1e-13 |F| / u2 to cancellation; the split form does not.
    assert np.allclose(fast.beta, slow, rtol=1e-6, atol=1e-7)
    error = np.sum((slow - trials["beta_c"][None, :, None]) ** 2, axis=(2, 3)) / np.sum(
        trials["beta_c"] ** 2, axis=-1
    )
    assert np.allclose(fast.error[..., -1], error, rtol=1e-6)
    assert np.all(fast.error[..., 0] == K)  # sum over agents of ||0 - beta_c||^2 / ||beta_c||^2


def test_dzoa_same_seed_same_trajectory_and_other_seed_differs(trials):
    graph = adjacency(topology_edges("ring_chord", K), K)
    step_scale = np.full((1, 2, K), 1.5)
    options = {
        "rho": 4.0,
        "l1_weight": 1.0,
        "loss_scale": 1.0,
        "lipschitz": 3.0,
        "smoothing": 1.0,
        "n_directions": 30,
        "n_outer": 5,
        "n_inner": 50,
    }
    X, y, beta_c = trials["X"], trials["y"], trials["beta_c"]
    first = dzoa(X, y, beta_c, graph, step_scale, agent_rngs(5), **options)
    again = dzoa(X, y, beta_c, graph, step_scale, agent_rngs(5), **options)
    other = dzoa(X, y, beta_c, graph, step_scale, agent_rngs(6), **options)
    assert np.array_equal(first.error, again.error) and np.array_equal(first.beta, again.beta)
    assert not np.allclose(first.error[..., 1:], other.error[..., 1:])
    assert np.all(first.error[..., -1] < 0.5 * K) and not first.diverged.any()  # moving toward beta^c


def test_dzoa_reports_divergence_instead_of_hiding_it(trials):
    graph = adjacency(topology_edges("ring_chord", K), K)
    result = dzoa(
        trials["X"],
        trials["y"],
        trials["beta_c"],
        graph,
        np.full((1, 2, K), 1e6),
        agent_rngs(7),
        rho=4.0,
        l1_weight=1.0,
        loss_scale=1.0,
        lipschitz=3.0,
        smoothing=1.0,
        n_directions=5,
        n_outer=30,
        n_inner=5,
    )
    assert result.diverged.all()


def lasso_by_ista(X: np.ndarray, y: np.ndarray, l1_weight: float, sweeps: int = 20_000) -> np.ndarray:
    """argmin ||X b - y||^2 + l1_weight ||b||_1, (33), by plain proximal gradient (ISTA) from 0."""
    step = 1.0 / (2.0 * np.linalg.eigvalsh(X.T @ X)[-1])  # 1 / Lipschitz constant of the gradient
    beta = np.zeros(X.shape[1])
    for _ in range(sweeps):
        moved = beta - step * 2.0 * X.T @ (X @ beta - y)
        new = np.sign(moved) * np.maximum(np.abs(moved) - step * l1_weight, 0.0)
        if np.max(np.abs(new - beta)) < 1e-15:
            return new
        beta = new
    raise AssertionError("ISTA did not converge")


def test_dzoa_converges_to_the_centralized_lasso_solution(trials):
    """(7)-(8), (20), (33)-(34): D-ZOA's agents reach consensus on the centralized solution beta^c of (33).

    With loss_scale 1 the agents' f_k of (34) sum to (33), so the ADMM (7)-(8) has beta^c at every
    agent as its fixed point; beta^c is computed here by ISTA (and agrees with ``lasso.solve``).
    D-ZOA adds no noise: its only error is the inner loop's zeroth-order perturbation xi_k^(m) of
    (15)/(19), which ``perturbation`` records (about 1e-2, 1e-3 of ||beta^c||, at J = 30, T = 100).
    The outer ADMM contracts its error by about 0.85 per iteration (normalized error 5 -> 1e-5 in 80
    iterations) down to that floor, where beta_k^(m) = beta_breve_k^(m) + xi_k^(m) and beta_breve
    carries the neighbours' previous perturbations: after M = 100 every agent is within 3 max ||xi||
    of the last 10 iterations of beta^c (1.1-1.4 over four seeds), so the network average is within
    0.5% of beta^c (0.06-0.11%), and the normalized error sum_k ||beta_k - beta^c||^2 / ||beta^c||^2
    of note 5.5 is below 1e-4 (6e-6 to 1e-5; it starts at K = 5). The dual update (20) with its sign
    flipped diverges, the consensus term v_k with its sign flipped stalls at a normalized error near
    3.8, and an l1 weight of eta at each agent instead of eta / K (34) ends near the lasso with weight
    K eta, 12% of ||beta^c|| away: each fails.
    """
    X, y, beta_c = trials["X"][:1], trials["y"][:1], trials["beta_c"][:1]
    centralized = lasso_by_ista(trials["flat_X"][0], trials["flat_y"][0], l1_weight=1.0)
    np.testing.assert_allclose(centralized, beta_c[0], rtol=1e-8, atol=1e-10)  # two independent solvers agree
    graph = adjacency(topology_edges("ring_chord", K), K)
    result = dzoa(
        X,
        y,
        centralized[None],
        graph,
        np.full((1, 1, K), 1.0),
        agent_rngs(19, 1),
        rho=4.0,
        l1_weight=1.0,
        loss_scale=1.0,
        lipschitz=3.0,
        smoothing=1.0,
        n_directions=30,
        n_outer=100,
        n_inner=100,
    )
    assert not result.diverged.any()
    beta = result.beta[0, 0]  # (K, P) after the last outer iteration
    floor = result.perturbation[0, 0, -10:].max()  # the zeroth-order error of the last local updates
    assert floor < 0.05
    assert np.linalg.norm(beta - centralized, axis=1).max() < 3 * floor
    assert result.error[0, 0, 0] == pytest.approx(K) and result.error[0, 0, -1] < 1e-4
    average = beta.mean(axis=0)
    assert np.linalg.norm(average - centralized) < 5e-3 * np.linalg.norm(centralized)


# ------------------------------------------------------------- realised perturbation xi of (15)/(19)


def test_exact_local_minimizer_satisfies_the_optimality_condition_of_16():
    """argmin b^T A b + c^T b + w ||b||_1: 2 A b + c = -w sign(b) where b != 0, |2 A b + c| <= w where b = 0."""
    rng = np.random.default_rng(21)
    root = rng.normal(size=(2, 3, P, P))
    quad = np.einsum("bkpq,bkrq->bkpr", root, root) / P + 8.0 * np.eye(P)  # s X^T X + rho d I
    lin = rng.normal(scale=3.0, size=(2, 3, 4, P))
    weight = 1.5
    found = exact_local_minimizer(quad, lin, weight, rng.normal(size=lin.shape))
    slope = 2.0 * np.einsum("bkcp,bkpq->bkcq", found, quad) + lin
    active = found != 0
    assert active.any() and (~active).any()  # both kinds of coordinate are checked
    assert np.allclose(slope[active], -weight * np.sign(found[active]), atol=1e-10)
    assert np.all(np.abs(slope[~active]) <= weight + 1e-10)
    assert np.allclose(
        exact_local_minimizer(quad, lin, weight, np.zeros_like(lin)), found, atol=1e-12
    )  # any start


def local_update_by_lasso(X, y, gamma, v, degree, *, rho=4.0, l1_weight=1.0, scale=1.0) -> np.ndarray:
    """beta_breve_k of (18) by the centralized lasso solver: F_k as one lasso by completing the square.

    s ||X b - y||^2 + rho d ||b||^2 + (gamma - rho v)^T b = s ||[X; r I] b - [y; -c / (2 s r)]||^2 + const,
    with r = sqrt(rho d / s) and c = gamma - rho v.
    """
    root = math.sqrt(rho * degree / scale)
    c = gamma - rho * v
    X_aug = np.concatenate([X, root * np.eye(X.shape[1])])
    y_aug = np.concatenate([y, -c / (2.0 * scale * root)])
    return lasso.solve(X_aug[None], y_aug[None], l1_weight=l1_weight / K, scale=scale, tol=1e-12).beta[0]


def test_dzoa_records_the_distance_of_each_shared_iterate_to_the_exact_local_update(trials):
    """perturbation[..., m - 1, k] = ||beta_k^(m) - beta_breve_k^(m)||, beta_breve from gamma^(m-1), v^(m-1) (15)."""
    graph = adjacency(topology_edges("ring_chord", K), K)
    degree = graph.sum(axis=1)
    step_scale = np.random.default_rng(5).uniform(1.0, 2.0, size=(2, 2, K))
    options = {"rho": 4.0, "l1_weight": 1.0, "loss_scale": 1.0, "lipschitz": 3.0, "smoothing": 1.0}
    options |= {"n_directions": 10, "n_inner": 40}
    X, y, beta_c = trials["X"], trials["y"], trials["beta_c"]
    first = dzoa(X, y, beta_c, graph, step_scale, agent_rngs(13), n_outer=1, **options)
    second = dzoa(X, y, beta_c, graph, step_scale, agent_rngs(13), n_outer=2, **options)
    assert second.perturbation.shape == (2, 2, 2, K)
    assert np.array_equal(
        second.perturbation[:, :, 0], first.perturbation[:, :, 0]
    )  # the same first iteration
    for c in range(2):
        for b in range(2):
            beta = first.beta[c, b]  # beta^(1): gamma^(0) = 0, v^(0) = 0 at m = 1
            gamma = 4.0 * (degree[:, None] * beta - graph @ beta)  # (20)
            v = degree[:, None] * beta + graph @ beta
            for k in range(K):
                start = local_update_by_lasso(X[b, k], y[b, k], np.zeros(P), np.zeros(P), degree[k])
                assert first.perturbation[c, b, 0, k] == pytest.approx(
                    np.linalg.norm(beta[k] - start), rel=1e-7
                )
                update = local_update_by_lasso(X[b, k], y[b, k], gamma[k], v[k], degree[k])
                expected = np.linalg.norm(second.beta[c, b, k] - update)
                assert second.perturbation[c, b, 1, k] == pytest.approx(expected, rel=1e-7)
    assert np.all(second.perturbation > 0)


def test_the_perturbation_record_does_not_change_the_run(trials):
    """The diagnostic draws no random numbers: a run's errors equal those of the literal algorithm."""
    graph = adjacency(topology_edges("ring", K), K)
    step_scale = np.full((1, 2, K), 1.2)
    shape = {"n_outer": 2, "n_inner": 10, "n_directions": 4}
    fast = dzoa(
        trials["X"],
        trials["y"],
        trials["beta_c"],
        graph,
        step_scale,
        agent_rngs(17),
        rho=4.0,
        l1_weight=1.0,
        loss_scale=1.0,
        lipschitz=3.0,
        smoothing=1.0,
        **shape,
    )
    slow = reference_dzoa(trials["X"], trials["y"], graph, step_scale, agent_rngs(17), **shape)
    assert np.allclose(fast.beta, slow, rtol=1e-6, atol=1e-7) and np.isfinite(fast.perturbation).all()


def test_normalized_error_sums_over_agents_on_any_agent_axis():
    """Note 5.5: sum_k ||beta_k - beta^c||^2 / ||beta^c||^2, the same whichever axis holds the agents."""
    rng = np.random.default_rng(12)
    beta_c = rng.normal(size=(2, P))  # (B, P)
    estimates = rng.normal(size=(2, K, 3, P))  # D-ZOA's state axes (B, K, C, P)
    error = normalized_error(estimates, beta_c[:, None, None, :], agent_axis=1)
    expected = [
        [
            sum(np.sum((estimates[b, k, c] - beta_c[b]) ** 2) for k in range(K)) / np.sum(beta_c[b] ** 2)
            for c in range(3)
        ]
        for b in range(2)
    ]
    assert error.shape == (2, 3) and np.allclose(error, expected, rtol=1e-13)
    moved = np.moveaxis(estimates, (2, 0), (0, 1))  # DP-ADMM's axes (S, B, K, P)
    assert np.allclose(normalized_error(moved, beta_c[None, :, None, :], agent_axis=2), error.T, rtol=1e-13)
    assert np.all(normalized_error(np.zeros_like(estimates), beta_c[:, None, None, :], agent_axis=1) == K)


# ------------------------------------------------------------------------------------- DP-ADMM


def test_dp_admm_one_iteration_by_hand(trials):
    X, y, beta_c = trials["X"][:1], trials["y"][:1], trials["beta_c"][:1]
    rho, inverse, sigma = 3.0, 7.0, 0.05
    rngs = agent_rngs(8, 1)
    result = dp_admm(
        X,
        y,
        beta_c,
        rngs,
        penalty=np.array([rho]),
        inverse_prox_step=np.array([[inverse]]),
        noise_std=np.array([[sigma]]),
        l1_weight=1.0,
        loss_scale=1.0,
    )
    noise = np.stack([rng.standard_normal((1, P))[0] for rng in agent_rngs(8, 1)[0]])
    gradient = 2.0 * np.einsum("knp,kn->kp", X[0], -y[0])  # at w~ = 0, sign(0) = 0
    local = -gradient / (
        inverse + rho
    )  # (w~/eta_m + rho z + lambda - grad) / (1/eta_m + rho) with w~ = z = lambda = 0
    released = local + sigma * noise
    expected = np.sum((released - beta_c[0]) ** 2) / np.sum(beta_c[0] ** 2)
    assert result.error[0, 0, 1] == pytest.approx(expected, rel=1e-12)
    server = released.mean(axis=0)
    assert result.server_error[0, 0, 1] == pytest.approx(
        K * np.sum((server - beta_c[0]) ** 2) / np.sum(beta_c[0] ** 2), rel=1e-12
    )


def test_dp_admm_without_noise_converges_to_the_centralized_solution(trials):
    n_outer = 500
    result = dp_admm(
        trials["X"],
        trials["y"],
        trials["beta_c"],
        agent_rngs(9),
        penalty=np.array([3.0]),
        inverse_prox_step=np.full((1, n_outer), 20.0),
        noise_std=np.zeros((1, n_outer)),
        l1_weight=1.0,
        loss_scale=1.0,
    )
    assert np.all(result.error[0, :, -1] < 1e-12)


def test_dp_admm_same_seed_same_trajectory(trials):
    options = {
        "penalty": np.array([1.0, 10.0]),
        "inverse_prox_step": np.full((2, 20), 10.0),
        "noise_std": np.full((2, 20), 0.1),
        "l1_weight": 1.0,
        "loss_scale": 1.0,
    }
    first = dp_admm(trials["X"], trials["y"], trials["beta_c"], agent_rngs(4), **options)
    again = dp_admm(trials["X"], trials["y"], trials["beta_c"], agent_rngs(4), **options)
    assert np.array_equal(first.error, again.error)
    assert not first.diverged.any()
