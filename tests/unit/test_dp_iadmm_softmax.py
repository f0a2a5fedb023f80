"""Softmax regression (dpdl.models.softmax) against finite differences and direct formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from dpdl.models import softmax


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.random((2, 7, 5))  # 2 agents, 7 rows, J = 5
    w = rng.standard_normal((2, 5, 3, 4))  # 2 agents, J = 5, B = 3 replicas, K = 4
    y = rng.integers(0, 4, (2, 7))
    return x, w, y


def test_probabilities_are_a_class_major_softmax_per_example_and_replica(data) -> None:
    x, w, _ = data
    probs = softmax.probabilities(x, w)
    assert probs.shape == (2, 3, 4, 7)  # agents, replicas, classes, examples
    scores = np.einsum("anj,ajbk->abkn", x, w)
    expected = np.exp(scores) / np.exp(scores).sum(axis=-2, keepdims=True)
    np.testing.assert_allclose(probs, expected, rtol=1e-12)


def test_softmax_is_stable_for_large_scores() -> None:
    probs = softmax.softmax_inplace(np.array([[1000.0], [0.0], [-1000.0]]))  # K = 3, one example
    np.testing.assert_allclose(probs, [[1.0], [0.0], [0.0]])


def test_residual_l1_equals_the_l1_distance_to_the_one_hot_label(data) -> None:
    x, w, y = data
    probs = softmax.probabilities(x, w)
    direct = np.abs(probs - softmax.one_hot(y, 4)).sum(axis=-2)
    assert direct.shape == (2, 3, 7)
    np.testing.assert_allclose(softmax.residual_l1(probs, y), direct, rtol=1e-12)


def test_gradient_sum_matches_finite_differences_of_the_loss(data) -> None:
    x, w, y = data
    x0, y0 = x[0], y[0]

    def loss(flat: np.ndarray) -> float:
        return float(softmax.loss_sum(x0, flat.reshape(5, 1, 4), y0)[0])

    w0 = w[0][:, :1, :]
    residual = softmax.probabilities(x0, w0) - softmax.one_hot(y0, 4)
    numeric = approx_fprime(w0.ravel(), loss, 1e-7).reshape(5, 1, 4)
    np.testing.assert_allclose(softmax.gradient_sum(x0, residual), numeric, rtol=1e-5, atol=1e-6)


def test_gradient_sum_is_batched_over_agents_and_replicas(data) -> None:
    x, w, y = data
    residual = softmax.probabilities(x, w)
    np.testing.assert_allclose(
        softmax.gradient_sum(x, residual), np.einsum("anj,abkn->ajbk", x, residual), rtol=1e-12
    )


def test_loss_sum_is_the_cross_entropy_per_replica(data) -> None:
    x, w, y = data
    scores = np.einsum("anj,ajbk->anbk", x, w)
    log_h = scores - np.log(np.exp(scores).sum(axis=-1, keepdims=True))
    direct = -np.take_along_axis(log_h, y[:, :, None, None], axis=-1)[..., 0].sum(axis=(0, 1))
    np.testing.assert_allclose(softmax.loss_sum(x, w, y), direct, rtol=1e-12)


def test_loss_sum_skips_padding_rows(data) -> None:
    x, w, y = data
    valid = np.ones((2, 7), dtype=bool)
    valid[1, 4:] = False
    full = softmax.loss_sum(x, w, y, valid)
    parts = softmax.loss_sum(x[:1], w[:1], y[:1]) + softmax.loss_sum(x[1:, :4], w[1:], y[1:, :4])
    np.testing.assert_allclose(full, parts, rtol=1e-12)


def test_error_rate_counts_arg_max_mistakes() -> None:
    x = np.eye(3)
    w = np.eye(3)[:, None, :]  # predicts class j for row j
    np.testing.assert_allclose(softmax.error_rate(x, w, np.array([0, 1, 0])), [1 / 3])
