"""Binary logistic regression with labels in {-1, +1}: loss, gradient and Hessian.

The loss of one example is ``log(1 + exp(-y * x @ theta))``. Zhang & Zhu and Kang et al. both use
it (Kang et al. with labels {0, 1}: pass ``signed_labels(y)``). With ``||x|| <= 1`` the gradient
of one example has norm at most 1 (the Lipschitz constant G = 1 of wddp.md and c1 = 1 of
zhang_zhu.md). Every function accepts a batch of parameter vectors as the columns of a
``(d, k)`` array, so many runs that share data cost one matrix product.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def signed_labels(y: np.ndarray) -> np.ndarray:
    """Map labels {0, 1} to {-1, +1} (floating point)."""
    return 2.0 * np.asarray(y, dtype=float) - 1.0


def margins(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y_i * x_i @ theta`` for each example (rows) and each parameter column."""
    return (x @ theta) * (y[:, None] if np.ndim(theta) == 2 else y)


def loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """Mean logistic loss ``(1/n) sum_i log(1 + exp(-y_i x_i @ theta))`` (per column of ``theta``)."""
    m = margins(theta, x, y)
    return np.mean(np.logaddexp(0.0, -m), axis=0)


def gradient(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Gradient of :func:`loss`: ``-(1/n) sum_i y_i sigmoid(-m_i) x_i`` (per column of ``theta``)."""
    m = margins(theta, x, y)
    weights = expit(-m) * (y[:, None] if np.ndim(theta) == 2 else y)
    return -(x.T @ weights) / x.shape[0]


def hessian(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Hessian of :func:`loss` at one parameter vector: ``(1/n) X^T diag(s (1 - s)) X``."""
    s = expit(margins(theta, x, y))
    return (x.T * (s * (1.0 - s))) @ x / x.shape[0]


def error_rate(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """Fraction of examples with ``sign(x @ theta) != y`` (a zero score counts as an error)."""
    return np.mean(margins(theta, x, y) <= 0, axis=0)
