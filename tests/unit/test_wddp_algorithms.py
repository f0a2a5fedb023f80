"""WD-DP, the averaged baseline and centralized DP-GD (dpdl.algorithms.wddp): wddp.md 7.4 and more."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from dpdl.algorithms import wddp as algo
from dpdl.models import logistic
from dpdl.privacy import wddp as calibration


def unit_rows(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows of norm 1 and {0, 1} labels from a noisy linear rule (not separable)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels = (x @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0).astype(float)
    return x, labels


def equal_shards(n: int, m: int) -> list[np.ndarray]:
    return np.split(np.random.default_rng(1).permutation(n), m)


def run(method_weights, x, labels, *, sigma, seeds, eta=0.5, iterations=70, theta0=None, record_at=None):
    """per_round_descent over columns given as per-record weight vectors, each with its own seed."""
    k = len(method_weights)
    theta0 = np.full((x.shape[1], k), 0.01) if theta0 is None else theta0
    return algo.per_round_descent(
        x,
        labels,
        theta0,
        np.stack(method_weights, axis=1),
        np.asarray(sigma, dtype=float),
        np.full(k, eta),
        iterations=iterations,
        rngs=[np.random.default_rng(s) for s in seeds],
        record_at=record_at or [0, iterations],
    )


def test_the_methods_are_the_privacy_layers() -> None:
    """One Method literal, owned by the calibration; the algorithms use it."""
    assert algo.Method is calibration.Method and algo.METHODS is calibration.METHODS
    assert algo.METHODS == ("wddp", "dist_avg", "central")
    with pytest.raises(ValueError, match="method"):
        calibration.wddp_effective_sample_size([3, 4], "median")


def test_accuracy_counts_sign_predictions_per_column() -> None:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    labels = np.array([1.0, 1.0, 0.0, 1.0])
    theta = np.array([[1.0, -1.0], [0.0, 0.0]])  # column 0 predicts 1, 1, 0, 1; column 1 predicts 0, 1, 1, 1
    np.testing.assert_array_equal(algo.accuracy(theta, x, labels), [1.0, 0.5])
    assert float(algo.accuracy(theta[:, 0], x, labels)) == 1.0  # one model: a 0-d result
    assert float(algo.accuracy(np.zeros(2), x, labels)) == 0.75  # x theta = 0 predicts 1 (sigmoid 0.5)


@pytest.mark.parametrize("method", algo.METHODS)
def test_record_weights_sum_to_one(method: str) -> None:
    shards = np.split(np.random.default_rng(0).permutation(100), [7, 30, 31])
    weights = algo.record_weights(method, shards, 100)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12) and (weights > 0).all()


def test_baseline_weights_are_one_over_m_n_j() -> None:
    shards = [np.arange(0, 10), np.arange(10, 40)]
    weights = algo.record_weights("dist_avg", shards, 40)
    assert weights[0] == pytest.approx(1 / (2 * 10)) and weights[10] == pytest.approx(1 / (2 * 30))
    assert weights[shards[0]].sum() == pytest.approx(0.5)  # each client weighs 1 / m (eq. 1)


@pytest.mark.parametrize("method", ["wddp", "dist_avg"])
def test_client_weights_sum_to_one(method: str) -> None:
    weights = algo.client_weights(method, [5, 20, 75])
    assert weights.sum() == pytest.approx(1.0)
    expected = [0.05, 0.2, 0.75] if method == "wddp" else [1 / 3] * 3
    np.testing.assert_allclose(weights, expected)


def test_weighted_gradient_with_uniform_weights_is_the_logistic_gradient() -> None:
    x, labels = unit_rows(40, 4)
    theta = np.random.default_rng(2).standard_normal((4, 3))
    ours = algo.weighted_gradient(theta, x, labels, np.full(40, 1 / 40))
    np.testing.assert_allclose(ours, logistic.gradient(theta, x, logistic.signed_labels(labels)), atol=1e-14)


def test_weighted_gradient_matches_finite_differences_with_l2() -> None:
    x, labels = unit_rows(30, 3)
    weights = np.random.default_rng(4).random(30)
    theta = np.array([0.3, -1.0, 0.8])

    def weighted_loss(t: np.ndarray) -> float:
        per_record = np.logaddexp(0.0, -logistic.signed_labels(labels) * (x @ t))
        return float(weights @ per_record + 0.05 * t @ t)

    numeric = approx_fprime(theta, weighted_loss, 1e-7)
    ours = algo.weighted_gradient(theta[:, None], x, labels, weights, l2=0.1)[:, 0]
    np.testing.assert_allclose(ours, numeric, rtol=1e-5, atol=1e-7)


def test_per_example_gradient_norm_is_at_most_one() -> None:
    x, labels = unit_rows(500, 6)
    theta = 5 * np.random.default_rng(5).standard_normal(6)
    residual = 1 / (1 + np.exp(-(x @ theta))) - labels  # grad l_i = x_i (h - y_i), eq. (17) with A10's sign
    norms = np.linalg.norm(x * residual[:, None], axis=1)
    assert norms.max() <= 1.0  # G = 1 (wddp.md 1.3)


def test_one_round_by_hand() -> None:
    x, labels = unit_rows(20, 3)
    theta0 = np.array([[0.1], [-0.2], [0.3]])
    result = run(
        [np.full(20, 1 / 20)], x, labels, sigma=[0.7], seeds=[9], eta=0.4, iterations=1, theta0=theta0
    )
    z = np.random.default_rng(9).standard_normal((1, 3))[0]
    gradient = x.T @ (1 / (1 + np.exp(-(x @ theta0[:, 0]))) - labels) / 20
    np.testing.assert_allclose(result.thetas[-1][:, 0], theta0[:, 0] - 0.4 * (gradient + 0.7 * z), atol=1e-14)


@pytest.mark.parametrize(
    "iterations", [1, algo.NOISE_CHUNK, 2 * algo.NOISE_CHUNK + 5], ids=["one", "chunk", "ragged"]
)
def test_noise_is_the_generator_stream_in_order(iterations: int) -> None:
    """With zero features the gradient vanishes and theta_T = theta_0 - eta sigma sum_t z_t."""
    x, labels = np.zeros((10, 4)), np.ones(10)
    result = run([np.full(10, 0.1)], x, labels, sigma=[2.0], seeds=[3], eta=0.5, iterations=iterations)
    z = np.random.default_rng(3).standard_normal((iterations, 4))
    np.testing.assert_allclose(result.thetas[-1][:, 0], 0.01 - 0.5 * 2.0 * z.sum(axis=0), atol=1e-12)


def test_wddp_equals_central_with_a_shared_rng() -> None:
    x, labels = unit_rows(60, 5)
    shards = np.split(np.random.default_rng(0).permutation(60), [10, 45])  # uneven: irrelevant to both
    wddp, central = algo.record_weights("wddp", shards, 60), algo.record_weights("central", shards, 60)
    result = run([wddp, central], x, labels, sigma=[0.3, 0.3], seeds=[11, 11])
    np.testing.assert_array_equal(result.thetas[..., 0], result.thetas[..., 1])


def test_baseline_equals_wddp_at_u1_with_a_shared_rng() -> None:
    x, labels = unit_rows(64, 5)
    shards = equal_shards(64, 8)  # u = 1: n_j = n / m, so 1 / (m n_j) = 1 / n exactly
    weights = [algo.record_weights(method, shards, 64) for method in ("wddp", "dist_avg")]
    result = run(weights, x, labels, sigma=[0.3, 0.3], seeds=[5, 5])
    np.testing.assert_array_equal(result.thetas[..., 0], result.thetas[..., 1])


def test_baseline_differs_from_wddp_when_uneven() -> None:
    x, labels = unit_rows(64, 5)
    shards = np.split(np.arange(64), [8, 64 - 8])
    weights = [algo.record_weights(method, shards, 64) for method in ("wddp", "dist_avg")]
    result = run(weights, x, labels, sigma=[0.0, 0.0], seeds=[5, 5])
    assert np.abs(result.thetas[-1, :, 0] - result.thetas[-1, :, 1]).max() > 1e-3


def test_columns_do_not_depend_on_their_batch() -> None:
    x, labels = unit_rows(50, 4)
    weights = [np.full(50, 1 / 50), algo.record_weights("dist_avg", np.split(np.arange(50), [5]), 50)]
    together = run(weights, x, labels, sigma=[0.2, 0.5], seeds=[1, 2], record_at=[0, 35, 70])
    alone = run(weights[1:], x, labels, sigma=[0.5], seeds=[2], record_at=[0, 35, 70])
    np.testing.assert_allclose(together.thetas[..., 1], alone.thetas[..., 0], rtol=1e-12, atol=1e-14)
    assert together.recorded_iterations.tolist() == [0, 35, 70] and together.finite.all()


def test_inputs_are_not_modified() -> None:
    x, labels = unit_rows(30, 3)
    theta0, weights = np.full((3, 1), 0.5), np.full((30, 1), 1 / 30)
    copies = [a.copy() for a in (x, labels, theta0, weights)]
    algo.per_round_descent(
        x,
        labels,
        theta0,
        weights,
        np.array([0.1]),
        np.array([0.5]),
        iterations=5,
        rngs=[np.random.default_rng(0)],
        record_at=[5],
    )
    for before, after in zip(copies, (x, labels, theta0, weights), strict=True):
        np.testing.assert_array_equal(before, after)


def test_one_shot_with_one_client_is_per_round() -> None:
    x, labels = unit_rows(40, 4)
    theta0 = np.full((4, 2), 0.01)
    per_round = algo.per_round_descent(
        x,
        labels,
        theta0,
        np.full(40, 1 / 40),
        np.array([0.3, 0.0]),
        np.array([0.5, 1.0]),
        iterations=70,
        rngs=[np.random.default_rng(s) for s in (4, 5)],
        record_at=[0, 70],
    )
    one_shot = algo.one_shot_descent(
        x,
        labels,
        theta0,
        [np.arange(40)],
        np.ones((1, 2)),
        np.array([0.3, 0.0]),
        np.array([0.5, 1.0]),
        iterations=70,
        rngs=[np.random.default_rng(s) for s in (4, 5)],
        record_at=[0, 70],
    )
    np.testing.assert_allclose(one_shot.thetas, per_round.thetas, rtol=1e-12, atol=1e-14)


def test_one_shot_without_noise_averages_the_local_optima_paths() -> None:
    """Noise-free Algorithm 1: the released model is sum_j a_j theta_T^(j) of independent local descents."""
    x, labels = unit_rows(60, 3)
    shards = [np.arange(0, 15), np.arange(15, 60)]
    theta0 = np.zeros((3, 1))
    result = algo.one_shot_descent(
        x,
        labels,
        theta0,
        shards,
        algo.client_weights("wddp", [15, 45])[:, None],
        np.zeros(1),
        np.ones(1),
        iterations=30,
        rngs=[np.random.default_rng(0)],
        record_at=[30],
    )
    local = [
        algo.per_round_descent(
            x[s],
            labels[s],
            theta0,
            np.full(len(s), 1 / len(s)),
            np.zeros(1),
            np.ones(1),
            iterations=30,
            rngs=[np.random.default_rng(0)],
            record_at=[30],
        ).thetas[-1]
        for s in shards
    ]
    np.testing.assert_allclose(result.thetas[-1], 0.25 * local[0] + 0.75 * local[1], atol=1e-13)


def test_optimum_has_a_vanishing_gradient_and_no_run_beats_it() -> None:
    x, labels = unit_rows(300, 5)
    found = algo.nonprivate_optimum(x, labels)
    signed = logistic.signed_labels(labels)
    assert found.converged and np.linalg.norm(logistic.gradient(found.theta, x, signed)) <= 1e-8
    perturbed = found.theta[:, None] + 1e-3 * np.random.default_rng(0).standard_normal((5, 50))
    gaps = algo.objective(perturbed, x, labels) - found.loss
    assert gaps.min() >= -1e-9  # gap >= -1e-9 (wddp.md 7.4)
    descent = run([np.full(300, 1 / 300)], x, labels, sigma=[0.0], seeds=[0], eta=1.0, iterations=200)
    assert algo.objective(descent.thetas[-1], x, labels)[0] - found.loss >= -1e-9


def test_optimum_with_l2_solves_the_regularised_problem() -> None:
    x, labels = unit_rows(100, 4)
    found = algo.nonprivate_optimum(x, labels, l2=0.1)
    gradient = logistic.gradient(found.theta, x, logistic.signed_labels(labels)) + 0.1 * found.theta
    assert np.linalg.norm(gradient) < 1e-8
    assert found.loss == pytest.approx(algo.objective(found.theta, x, labels, 0.1))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"theta0": np.zeros(3)}, r"theta0 must be a \(d, k\) array"),
        ({"rngs": []}, "need one generator per column"),
        ({"record_at": [3, 2]}, "record_at must be increasing"),
        ({"record_at": [11]}, r"rounds in \[0, 10\]"),
        ({"iterations": 0}, "iterations must be >= 1"),
    ],
    ids=["flat_theta", "no_rng", "unsorted_record", "record_past_T", "no_rounds"],
)
def test_bad_arguments_name_the_problem(kwargs: dict, message: str) -> None:
    x, labels = unit_rows(10, 3)
    arguments = {
        "theta0": np.zeros((3, 1)),
        "rngs": [np.random.default_rng(0)],
        "record_at": [10],
        "iterations": 10,
    }
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        algo.per_round_descent(
            x, labels, arguments.pop("theta0"), np.full(10, 0.1), np.zeros(1), np.ones(1), **arguments
        )


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="method must be one of wddp, dist_avg, central; got 'avg'"):
        algo.record_weights("avg", [np.arange(3)], 3)
