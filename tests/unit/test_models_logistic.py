"""Logistic loss, gradient and Hessian against finite differences and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from dpdl.models import logistic


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 4))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    return x, np.where(rng.random(50) < 0.5, -1.0, 1.0)


def test_loss_at_zero_is_log_two(data) -> None:
    x, y = data
    assert logistic.loss(np.zeros(4), x, y) == pytest.approx(np.log(2.0))


def test_gradient_matches_finite_differences(data) -> None:
    x, y = data
    theta = np.array([0.3, -1.0, 2.0, 0.1])
    numeric = approx_fprime(theta, lambda t: logistic.loss(t, x, y), 1e-7)
    np.testing.assert_allclose(logistic.gradient(theta, x, y), numeric, rtol=1e-5, atol=1e-7)


def test_hessian_matches_finite_differences(data) -> None:
    x, y = data
    theta = np.array([0.3, -1.0, 2.0, 0.1])
    numeric = np.array(
        [approx_fprime(theta, lambda t, i=i: logistic.gradient(t, x, y)[i], 1e-7) for i in range(4)]
    )
    np.testing.assert_allclose(logistic.hessian(theta, x, y), numeric, rtol=1e-4, atol=1e-6)


def test_columns_are_independent_runs(data) -> None:
    x, y = data
    thetas = np.random.default_rng(1).standard_normal((4, 3))
    batched = logistic.gradient(thetas, x, y)
    for k in range(3):
        np.testing.assert_allclose(batched[:, k], logistic.gradient(thetas[:, k], x, y))
    np.testing.assert_allclose(
        logistic.loss(thetas, x, y), [logistic.loss(thetas[:, k], x, y) for k in range(3)]
    )


def test_per_example_gradient_norm_is_at_most_one(data) -> None:
    x, y = data
    theta = np.random.default_rng(2).standard_normal(4) * 10
    per_example = np.linalg.norm(
        [logistic.gradient(theta, x[i : i + 1], y[i : i + 1]) for i in range(50)], axis=1
    )
    assert per_example.max() <= 1.0 + 1e-12


def test_error_rate_and_label_mapping() -> None:
    x = np.array([[1.0], [-1.0], [0.0]])
    y = logistic.signed_labels(np.array([1, 1, 0]))
    np.testing.assert_array_equal(y, [1.0, 1.0, -1.0])
    assert logistic.error_rate(np.array([1.0]), x, y) == pytest.approx(2 / 3)
