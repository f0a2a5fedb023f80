"""Zhang & Zhu's network ADMM: graph, local solver, the three algorithms' updates, the trade-off model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from dpdl.algorithms.dvp_pvp import AdmmSettings, calibrate, iterate_error_rates, iterate_losses, run_admm
from dpdl.algorithms.dvp_pvp_network import (
    NodeData,
    centralized_optimum,
    connected_graph,
    consensus_objective,
    edge_list,
    is_connected,
    local_objective,
    solve_local,
)
from dpdl.algorithms.dvp_pvp_tradeoff import (
    PAPER_AMPLITUDE_DECAY,
    accuracy_curve,
    fit_accuracy_curve,
    optimal_alpha,
    privacy_utility,
    tradeoff_objective,
)
from dpdl.models import logistic
from dpdl.privacy.dvp_pvp import dvp_jacobian_budget
from dpdl.privacy.samplers import norm_exponential

N_NODES, ROWS_PER_NODE, DIM = 4, 40, 5
SQUARE = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=bool)  # a 4-cycle


@pytest.fixture(scope="module")
def problem() -> tuple[np.ndarray, np.ndarray, list[np.ndarray], NodeData]:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N_NODES * ROWS_PER_NODE, DIM))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    y = np.where(x @ rng.standard_normal(DIM) + 0.5 * rng.standard_normal(len(x)) > 0, 1.0, -1.0)
    shards = np.split(rng.permutation(len(x)), N_NODES)
    return x, y, shards, NodeData.from_shards(x, y, shards)


def rngs(seed: int) -> list[np.random.Generator]:
    return [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(N_NODES)]


def settings(algorithm: str, alpha: float | None = None, **changes) -> AdmmSettings:
    values = {"rho": 0.05, "c_r": 30.0, "eta": 0.5, "iterations": 60} | changes
    return AdmmSettings(algorithm, alpha=alpha, **values)


# ------------------------------------------------------------------------------------------ graph


@pytest.mark.parametrize("family", ["erdos_renyi", "ring", "complete"])
@pytest.mark.parametrize("n_nodes", [2, 3, 10, 25])
def test_graph_is_always_connected_and_symmetric(family: str, n_nodes: int) -> None:
    for seed in range(20):
        adjacency = connected_graph(family, n_nodes, rng=np.random.default_rng(seed), edge_probability=0.1)
        assert adjacency.shape == (n_nodes, n_nodes) and adjacency.dtype == bool
        assert (adjacency == adjacency.T).all() and not adjacency.diagonal().any()
        assert is_connected(adjacency)


def test_graph_is_seeded_and_edges_listed() -> None:
    first = connected_graph("erdos_renyi", 10, rng=np.random.default_rng(7))
    second = connected_graph("erdos_renyi", 10, rng=np.random.default_rng(7))
    assert (first == second).all()
    edges = edge_list(first)
    assert len(edges) == first.sum() // 2 and all(p < q for p, q in edges)


def test_is_connected_detects_two_components() -> None:
    split = np.zeros((4, 4), dtype=bool)
    split[0, 1] = split[1, 0] = split[2, 3] = split[3, 2] = True
    assert not is_connected(split)


@pytest.mark.parametrize(
    ("family", "n_nodes", "probability", "message"),
    [
        ("star", 4, 0.3, "graph family must be one of"),
        ("ring", 1, 0.3, "n_nodes must be an integer >= 2"),
        ("erdos_renyi", 4, 0.0, "edge_probability must be in"),
    ],
    ids=["unknown_family", "one_node", "zero_probability"],
)
def test_graph_rejects_bad_input(family: str, n_nodes: int, probability: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        connected_graph(family, n_nodes, rng=np.random.default_rng(0), edge_probability=probability)


# ---------------------------------------------------------------------------------- local solver


def test_local_solver_matches_scipy_and_meets_its_tolerance(problem) -> None:
    _, _, _, data = problem
    rng = np.random.default_rng(3)
    ridge = np.array([0.1, 1.0, 5.0, 0.01])
    linear = 10.0 * rng.standard_normal((N_NODES, DIM))
    solution = solve_local(data, c_r=30.0, ridge=ridge, linear=linear, start=np.zeros((N_NODES, DIM)))
    assert solution.converged.all() and (solution.iterations >= 1).all()
    for p in range(N_NODES):
        rows = data.weight[p] > 0
        x, y = data.x[p, rows], data.y[p, rows]

        def objective(f: np.ndarray, x=x, y=y, r=ridge[p], c=linear[p]) -> float:
            return 30.0 * logistic.loss(f, x, y) + 0.5 * r * f @ f + c @ f

        def gradient(f: np.ndarray, x=x, y=y, r=ridge[p], c=linear[p]) -> np.ndarray:
            return 30.0 * logistic.gradient(f, x, y) + r * f + c

        reference = optimize.minimize(
            objective,
            np.zeros(DIM),
            jac=gradient,
            method="L-BFGS-B",
            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
        )
        np.testing.assert_allclose(solution.f[p], reference.x, rtol=1e-5, atol=1e-6)
        assert np.linalg.norm(gradient(solution.f[p])) == pytest.approx(solution.grad_norm[p], abs=1e-9)


def test_local_solver_reuses_factors_without_changing_the_answer(problem) -> None:
    _, _, _, data = problem
    ridge = np.full(N_NODES, 0.5)
    linear = np.random.default_rng(4).standard_normal((N_NODES, DIM))
    first = solve_local(data, c_r=30.0, ridge=ridge, linear=linear, start=np.zeros((N_NODES, DIM)))
    moved = linear + 0.1
    fresh = solve_local(data, c_r=30.0, ridge=ridge, linear=moved, start=first.f)
    reused = solve_local(data, c_r=30.0, ridge=ridge, linear=moved, start=first.f, factors=first.factors)
    np.testing.assert_allclose(reused.f, fresh.f, rtol=1e-7, atol=1e-9)
    assert reused.hessians.sum() <= fresh.hessians.sum()


def test_local_solver_leaves_its_inputs_alone(problem) -> None:
    _, _, _, data = problem
    start = np.ones((N_NODES, DIM))
    linear = np.ones((N_NODES, DIM))
    solve_local(data, c_r=30.0, ridge=np.ones(N_NODES), linear=linear, start=start)
    assert (start == 1).all() and (linear == 1).all()


def test_local_objective_of_padding_free_shards(problem) -> None:
    x, y, shards, _ = problem
    uneven = [shards[0][:10], shards[1], shards[2][:25], shards[3]]
    data = NodeData.from_shards(x, y, uneven)
    f = np.random.default_rng(5).standard_normal((N_NODES, DIM))
    values = local_objective(f, data, c_r=2.0, ridge=np.zeros(N_NODES), linear=np.zeros((N_NODES, DIM)))
    expected = [2.0 * logistic.loss(f[p], x[s], y[s]) for p, s in enumerate(uneven)]
    np.testing.assert_allclose(values, expected)


# ----------------------------------------------------------------------------------- algorithms


def test_nonprivate_admm_reaches_the_centralized_optimum(problem) -> None:
    x, y, shards, data = problem
    result = run_admm(data, SQUARE, settings("nonprivate", iterations=400), rngs=rngs(0))
    optimum, value = centralized_optimum(x, y, shards, c_r=30.0, rho=0.05)
    assert result.converged
    np.testing.assert_allclose(result.f[-1], np.broadcast_to(optimum, (N_NODES, DIM)), atol=1e-6)
    assert consensus_objective(result.f[-1].mean(axis=0), data, c_r=30.0, rho=0.05) == pytest.approx(
        value, rel=1e-10
    )


def test_centralized_optimum_uses_p_copies_of_rho(problem) -> None:
    x, y, shards, data = problem
    optimum, value = centralized_optimum(x, y, shards, c_r=30.0, rho=0.05)
    gradient = 30.0 * sum(logistic.gradient(optimum, x[s], y[s]) for s in shards) + N_NODES * 0.05 * optimum
    assert np.linalg.norm(gradient) < 1e-7
    assert consensus_objective(optimum, data, c_r=30.0, rho=0.05) == pytest.approx(value)


@pytest.mark.parametrize(("algorithm", "alpha"), [("nonprivate", None), ("dvp", 0.5), ("pvp", 0.5)])
def test_same_seed_gives_the_same_trajectory(problem, algorithm: str, alpha: float | None) -> None:
    _, _, _, data = problem
    first = run_admm(data, SQUARE, settings(algorithm, alpha, iterations=8), rngs=rngs(11))
    second = run_admm(data, SQUARE, settings(algorithm, alpha, iterations=8), rngs=rngs(11))
    other = run_admm(data, SQUARE, settings(algorithm, alpha, iterations=8), rngs=rngs(12))
    np.testing.assert_array_equal(first.f, second.f)
    np.testing.assert_array_equal(first.broadcast, second.broadcast)
    assert not np.array_equal(first.f, other.f)


def test_dvp_step_satisfies_its_kkt_condition(problem) -> None:
    """J(28): the noise is recovered from the optimality condition of J(13)-(15) at f_p(t+1)."""
    _, _, _, data = problem
    admm = settings("dvp", 0.3, iterations=1)
    result = run_admm(data, SQUARE, admm, rngs=rngs(2))
    degree = SQUARE.sum(axis=1)
    phi = calibrate(admm, data.sizes, degree).phi
    f0, f1 = result.f[0], result.f[1]
    for p in range(N_NODES):
        rows = data.weight[p] > 0
        x, y = data.x[p, rows], data.y[p, rows]
        size = rows.sum()
        centres = degree[p] * f0[p] + f0[SQUARE[p]].sum(axis=0)
        # lambda(0) = 0: C^R grad L + (rho + Phi + 2 eta N_p) f + (C^R / B_p) eps - eta sum (f_p + f_i) = 0
        residual = (
            30.0 * logistic.gradient(f1[p], x, y)
            + (0.05 + phi[p] + 2 * 0.5 * degree[p]) * f1[p]
            - 0.5 * centres
        )
        noise = -residual * size / 30.0
        assert np.linalg.norm(noise) == pytest.approx(result.noise_norm[1, p], rel=1e-6)


def dual_from_broadcasts(broadcast: np.ndarray, eta: float) -> np.ndarray:
    """lambda_p(t), t = 0..T+1, from lambda_p(0) = 0 and what was broadcast: J(11), (16), (20)."""
    degree = SQUARE.sum(axis=1)[:, np.newaxis]
    dual = np.zeros_like(broadcast)
    for t in range(1, len(broadcast)):
        dual[t] = dual[t - 1] + 0.5 * eta * (degree * broadcast[t] - SQUARE @ broadcast[t])
    return dual


def replayed_noise(seed: int, rates: list[np.ndarray]) -> np.ndarray:
    """eps_p(t), t = 1..len(rates), replayed from each node's generator: its f_p(0) draw (G8), then one draw per
    step at that step's rates (one zeta per node)."""
    replay = rngs(seed)
    for generator in replay:
        generator.standard_normal(DIM)
    return np.stack(
        [
            [norm_exponential(rng=g, zeta=z, d=DIM, size=1)[0] for g, z in zip(replay, zetas, strict=True)]
            for zetas in rates
        ]
    )


def private_run(data: NodeData, algorithm: str, alpha: float, iterations: int, seed: int):
    """One run on the 4-cycle, its settings and calibration, checked to be in the branch alpha selects."""
    admm = settings(algorithm, alpha, iterations=iterations)
    result = run_admm(data, SQUARE, admm, rngs=rngs(seed))
    calibration = calibrate(admm, data.sizes, SQUARE.sum(axis=1))
    assert ((calibration.phi > 0) == (alpha < 0.2)).all()  # the Jacobian budget here is about 0.175
    return admm, result, calibration


@pytest.mark.parametrize("alpha", [0.3, 0.1], ids=["no_ridge", "ridge"])
def test_dvp_step_satisfies_its_kkt_condition_at_a_nonzero_dual(problem, alpha: float) -> None:
    """J(13)-(16), J(28) at lambda_p(t) != 0: the noise recovered from f_p(t+1) is the noise drawn.

    Stationarity of J(13) at f_p(t+1), with mu_p(t+1) = lambda_p(t) + C^R / (2 B_p) eps_p(t+1) (J(14)):
    C^R grad L + (rho + Phi + 2 eta N_p) f + 2 lambda_p(t) + (C^R / B_p) eps - eta sum_i (f_p(t) + f_i(t))
    = 0, i.e. J(28). lambda_p(t) comes from the broadcast f by J(16); eps_p(t+1) by replaying each
    node's generator (its f_p(0) draw, then one draw per step). The recovered noise differs from the
    drawn one by exactly (B_p / C^R) times the local solver's final gradient norm. Both branches of
    the calibration are run (Phi = 0 above the Jacobian budget, Phi > 0 below it).
    """
    x_all, y_all, shards, data = problem
    iterations, seed = 6, 2
    admm, result, calibration = private_run(data, "dvp", alpha, iterations, seed)
    degree = SQUARE.sum(axis=1)
    drawn = np.zeros((iterations + 2, N_NODES, DIM))  # eps_p(t), t = 1..T+1
    drawn[1:] = replayed_noise(seed, [calibration.dvp_zeta] * (iterations + 1))
    np.testing.assert_allclose(
        np.linalg.norm(drawn, axis=2), result.noise_norm, rtol=1e-12
    )  # the run's noise
    dual = dual_from_broadcasts(result.f, admm.eta)  # DVP broadcasts f, J(16)
    np.testing.assert_allclose(np.linalg.norm(dual, axis=2), result.dual_norm, rtol=1e-10, atol=1e-12)
    assert (result.dual_norm[1:] > 1.0).all()  # lambda_p(t) != 0 from t = 1 on
    f, c_r, eta = result.f, admm.c_r, admm.eta
    for t in range(1, iterations + 1):
        for p in range(N_NODES):
            size = data.sizes[p]
            dual_term = (2 * size / c_r) * dual[t, p]
            x, y = x_all[shards[p]], y_all[shards[p]]
            centres = degree[p] * f[t, p] + f[t, SQUARE[p]].sum(axis=0)
            ridge = admm.rho + calibration.phi[p] + 2 * eta * degree[p]
            recovered = (
                -size * logistic.gradient(f[t + 1, p], x, y)
                - (size / c_r) * ridge * f[t + 1, p]
                - dual_term
                + (size * eta / c_r) * centres
            )  # J(28)
            miss = np.linalg.norm(recovered - drawn[t + 1, p])
            assert miss == pytest.approx(size / c_r * result.inner_grad_norm[t + 1, p], abs=1e-9)
            assert miss < 1e-6 * np.linalg.norm(drawn[t + 1, p])
            assert np.linalg.norm(dual_term) > 1e3 * miss  # so lambda_p(t) = 0 in J(28) would fail


def test_pvp_dual_update_uses_the_released_values(problem) -> None:
    """J(20): lambda_p(t+1) = lambda_p(t) + (eta / 2) sum_j (V_p(t+1) - V_j(t+1)), V = f + eps (J(19)).

    lambda(t) is recomputed from the recorded broadcasts (V before the final DVP step, then f, J(23))
    and checked twice against the run: its norm equals the run's ||lambda_p(t)|| to 1e-12, and, as a
    vector, it makes the gradient of the PVP Lagrangian J(18) (centre 1/2 (f_p(t) + V_i(t) - eps_p(t)),
    G5) at the run's f_p(t+1) exactly as small as the local solver reported. The same recomputation
    from the unperturbed f fails both checks.
    """
    x_all, y_all, shards, data = problem
    iterations = 5
    admm = settings("pvp", 0.5, iterations=iterations)
    result = run_admm(data, SQUARE, admm, rngs=rngs(3))
    released, f = result.broadcast, result.f
    assert (np.linalg.norm(released[1:-1] - f[1:-1], axis=2) > 1.0).all()  # V and f differ at every PVP step
    dual = dual_from_broadcasts(released, admm.eta)
    np.testing.assert_allclose(np.linalg.norm(dual, axis=2), result.dual_norm, rtol=1e-12, atol=1e-12)
    unperturbed = dual_from_broadcasts(f, admm.eta)
    assert (np.abs(np.linalg.norm(unperturbed[1:], axis=2) / result.dual_norm[1:] - 1) > 1e-3).all()
    degree = SQUARE.sum(axis=1)
    own_noise = released - f  # eps_p(t), 0 at t = 0 (G7)
    eta, ridge = admm.eta, admm.rho + 2 * admm.eta * degree
    for t in range(iterations):  # the PVP steps t -> t + 1; step T is the final DVP step
        for p in range(N_NODES):
            x, y = x_all[shards[p]], y_all[shards[p]]
            centres = degree[p] * (f[t, p] - own_noise[t, p]) + released[t, SQUARE[p]].sum(axis=0)
            smooth = admm.c_r * logistic.gradient(f[t + 1, p], x, y) + ridge[p] * f[t + 1, p] - eta * centres
            gradient = np.linalg.norm(smooth + 2 * dual[t, p])  # J(18) with the released V in lambda
            assert gradient == pytest.approx(result.inner_grad_norm[t + 1, p], abs=1e-9)
            if t > 0:
                assert np.linalg.norm(smooth + 2 * unperturbed[t, p]) > 1.0  # with f in lambda


def test_pvp_broadcasts_the_perturbed_primal_and_ends_with_a_dvp_step(problem) -> None:
    _, _, _, data = problem
    result = run_admm(data, SQUARE, settings("pvp", 0.5, iterations=5), rngs=rngs(3))
    gaps = np.linalg.norm(result.broadcast - result.f, axis=2)
    np.testing.assert_allclose(gaps[1:-1], result.noise_norm[1:-1])  # V = f + eps, J(19)
    assert (gaps[-1] == 0).all() and (result.noise_norm[-1] > 0).all()  # the final DVP step broadcasts f


@pytest.mark.parametrize("alpha", [0.5, 0.1], ids=["no_ridge", "ridge"])
def test_pvp_final_step_is_one_dvp_step_at_pvp_settings(problem, alpha: float) -> None:
    """J(21)-(23), G6, G16: PVP's step t = T -> T + 1 is one DVP step, the cause of the convergence figure's jump.

    Its noise is DVP's (drawn with DVP's zeta after the T PVP draws, replayed from each node's generator),
    calibrated at PVP's rho and C^R, and it enters through the dual: the noise recovered from the
    optimality condition of J(13) at the output f_p(T + 1), with mu = lambda_p(T) + C^R / (2 B_p) eps, the
    node's own f_p(T), its neighbours' released V_i(T) (G6) and lambda_p(T) from the released V's (J(20)), is
    the noise drawn, in both branches of DVP's calibration (Phi = 0, Phi > 0). A final PVP step, one with
    the neighbours' unreleased f_i(T) or one without DVP's Phi fails.
    """
    x_all, y_all, shards, data = problem
    iterations, seed = 4, 3
    admm, result, calibration = private_run(data, "pvp", alpha, iterations, seed)
    degree = SQUARE.sum(axis=1)
    assert not np.allclose(calibration.dvp_zeta, calibration.pvp_zeta)  # the two noises differ here
    # the T PVP draws (V_p(t + 1) = f_p(t + 1) + eps_p(t + 1)), then the final step's at DVP's rate: eps_p(T + 1)
    drawn = replayed_noise(seed, [calibration.pvp_zeta] * iterations + [calibration.dvp_zeta])[-1]
    np.testing.assert_allclose(np.linalg.norm(drawn, axis=1), result.noise_norm[-1], rtol=1e-12)
    f, released, last = result.f, result.broadcast, iterations
    dual = dual_from_broadcasts(released, admm.eta)  # lambda_p(T) from the V's of the PVP steps
    c_r, eta = admm.c_r, admm.eta
    for p in range(N_NODES):
        size = data.sizes[p]
        x, y = x_all[shards[p]], y_all[shards[p]]
        centres = degree[p] * f[last, p] + released[last, SQUARE[p]].sum(axis=0)  # f_p(T) and V_i(T), G6
        ridge = admm.rho + calibration.phi[p] + 2 * eta * degree[p]
        recovered = (
            -size * logistic.gradient(f[last + 1, p], x, y)
            - (size / c_r) * ridge * f[last + 1, p]
            - (2 * size / c_r) * dual[last, p]
            + (size * eta / c_r) * centres
        )  # J(28) at PVP's rho and C^R
        miss = np.linalg.norm(recovered - drawn[p])
        assert miss == pytest.approx(size / c_r * result.inner_grad_norm[last + 1, p], abs=1e-9)
        assert miss < 1e-6 * np.linalg.norm(drawn[p])


@pytest.mark.parametrize("center", ["paper", "plain"])
def test_pvp_center_switch_changes_the_run(problem, center: str) -> None:
    _, _, _, data = problem
    paper = run_admm(data, SQUARE, settings("pvp", 0.5, iterations=4), rngs=rngs(5))
    other = run_admm(data, SQUARE, settings("pvp", 0.5, iterations=4, pvp_center=center), rngs=rngs(5))
    np.testing.assert_array_equal(paper.f[:2], other.f[:2])  # eps_p(0) = 0: the first step agrees
    assert np.array_equal(paper.f, other.f) == (center == "paper")


def test_dvp_calibration_picks_the_branch_on_both_sides_of_the_boundary(problem) -> None:
    _, _, _, data = problem
    degree = SQUARE.sum(axis=1)
    boundary = dvp_jacobian_budget(n_samples=ROWS_PER_NODE, c_r=30.0, rho=0.05, eta=0.5, n_neighbours=2)
    above = calibrate(settings("dvp", boundary * 1.01), data.sizes, degree)
    below = calibrate(settings("dvp", boundary * 0.99), data.sizes, degree)
    assert {node.branch for node in above.dvp} == {"no_ridge"} and (above.phi == 0).all()
    assert {node.branch for node in below.dvp} == {"ridge"} and (below.phi > 0).all()
    np.testing.assert_allclose(above.jacobian_budget, boundary)
    np.testing.assert_allclose([n.alpha_hat for n in above.dvp], boundary * 0.01, rtol=1e-9)
    np.testing.assert_allclose([n.alpha_hat for n in below.dvp], boundary * 0.99 / 2)
    np.testing.assert_allclose([n.zeta for n in below.dvp], boundary * 0.99 / 4)  # zeta = alpha-hat / 2, G1


def test_dvp_zeta_mode_switch_doubles_the_rate(problem) -> None:
    _, _, _, data = problem
    degree = SQUARE.sum(axis=1)
    half = calibrate(settings("dvp", 0.5), data.sizes, degree)
    box = calibrate(settings("dvp", 0.5, dvp_zeta_mode="alpha_hat"), data.sizes, degree)
    np.testing.assert_allclose(box.dvp_zeta, 2 * half.dvp_zeta)


def test_noise_norm_has_mean_d_over_zeta() -> None:
    rng = np.random.default_rng(6)
    zeta, dim, draws = 0.37, 63, 20_000
    norms = np.linalg.norm(norm_exponential(rng=rng, zeta=zeta, d=dim, size=draws), axis=1)
    standard_error = np.sqrt(dim) / zeta / np.sqrt(draws)  # ||eps|| ~ Gamma(d, 1/zeta)
    assert abs(norms.mean() - dim / zeta) < 4 * standard_error


def test_run_noise_matches_the_calibration(problem) -> None:
    _, _, _, data = problem
    admm = settings("pvp", 0.8, iterations=200)
    result = run_admm(data, SQUARE, admm, rngs=rngs(7))
    calibration = calibrate(admm, data.sizes, SQUARE.sum(axis=1))
    realised = result.noise_norm[1:-1].mean(axis=0)
    expected = DIM / calibration.pvp_zeta
    np.testing.assert_allclose(realised, expected, rtol=4 * np.sqrt(DIM) / DIM / np.sqrt(200))


def test_settings_reject_inconsistent_input() -> None:
    with pytest.raises(ValueError, match="alpha must be None for the non-private"):
        AdmmSettings("nonprivate", rho=1.0, c_r=1.0, eta=1.0, iterations=2, alpha=0.5)
    with pytest.raises(ValueError, match="alpha must be None for the non-private algorithm and > 0"):
        AdmmSettings("dvp", rho=1.0, c_r=1.0, eta=1.0, iterations=2)
    with pytest.raises(ValueError, match="eta must be in"):
        AdmmSettings("dvp", rho=1.0, c_r=1.0, eta=0.0, iterations=2, alpha=0.5)
    with pytest.raises(ValueError, match="dvp_zeta_mode must be one of"):
        AdmmSettings("dvp", rho=1.0, c_r=1.0, eta=1.0, iterations=2, alpha=0.5, dvp_zeta_mode="box")


def test_iterate_metrics_agree_with_the_logistic_model(problem) -> None:
    x, y, shards, data = problem
    iterates = np.random.default_rng(8).standard_normal((3, N_NODES, DIM))
    losses = iterate_losses(iterates, data)
    errors = iterate_error_rates(iterates, x, y)
    for t in range(3):
        for p, shard in enumerate(shards):
            assert losses[t, p] == pytest.approx(logistic.loss(iterates[t, p], x[shard], y[shard]))
            assert errors[t, p] == pytest.approx(logistic.error_rate(iterates[t, p], x, y))


# ------------------------------------------------------------------------------ trade-off model


@pytest.mark.parametrize(("mechanism", "expected"), [("dvp", 0.1422), ("pvp", 0.4533)])
def test_optimal_alpha_from_the_paper_constants(mechanism: str, expected: float) -> None:
    a, b = PAPER_AMPLITUDE_DECAY[mechanism]
    best = optimal_alpha(a, b, 0.0, lower=0.01)
    assert best.stationary == pytest.approx(expected, abs=5e-5)  # zhang_zhu.md 6.4
    assert best.constrained == pytest.approx(best.stationary, abs=1e-4) and best.feasible
    derivative = optimize.approx_fprime(
        [best.stationary], lambda v: tradeoff_objective(v[0], a, b, 0.0), 1e-7
    )
    assert abs(derivative[0]) < 1e-5


def test_optimal_alpha_reports_an_infeasible_loss_cap() -> None:
    best = optimal_alpha(0.2, 25.0, 0.3, lower=0.01)  # L_acc >= 0.3 > c3 = 0.135 everywhere
    assert not best.feasible and np.isnan(best.constrained)
    assert best.stationary == pytest.approx(0.1422, abs=5e-5)  # c does not enter the condition


def test_fit_recovers_known_constants() -> None:
    alphas = np.array([0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0])
    fit = fit_accuracy_curve(alphas, accuracy_curve(alphas, 3.0, 12.0, 0.33))
    assert fit.ok and fit.points == 8
    np.testing.assert_allclose([fit.a, fit.b, fit.c], [3.0, 12.0, 0.33], rtol=1e-6)


def test_fit_needs_three_points() -> None:
    fit = fit_accuracy_curve(np.array([0.1, 1.0]), np.array([2.0, 1.0]))
    assert not fit.ok and np.isnan(fit.a) and "fewer than 3 points" in fit.message


def test_privacy_utility_values() -> None:
    assert privacy_utility(0.1) == pytest.approx(0.0377, abs=5e-5)  # zhang_zhu.md 6.4
    assert privacy_utility(1.0) == pytest.approx(-0.0102, abs=5e-5)
