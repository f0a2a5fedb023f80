"""Multinomial (softmax) logistic regression without bias: probabilities, loss, gradient, error.

Ryu & Kim's model (A.8): w is a J x K weight matrix, h_k(w; x) = exp(x w_k) / sum_k' exp(x w_k'),
the loss of one example is l(w; x, y) = -sum_k y_k ln h_k(w; x) with one-hot y, and r(w) = sum w_jk^2.

Every function is batched twice. Features may carry leading batch axes (agents): ``(..., n, J)``.
Weights always carry a replica axis before the class axis, ``(..., J, B, K)`` (B = 1 for one
model): the replicas are runs that share the data, for example the seeds of a job, and are
multiplied in one matrix product as ``B * K`` columns, so the data are read once for all of them.
Arrays stay in the caller's dtype (float32 in the studies); sums of losses are accumulated in
float64.
"""

from __future__ import annotations

import numpy as np


def logits(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Return the scores x_i w of every example and replica.

    Parameters
    ----------
    features : numpy.ndarray, shape (..., n, J)
        Examples as rows.
    weights : numpy.ndarray, shape (..., J, B, K)
        B replicas of the weight matrix; leading axes broadcast against those of ``features``
        (one w for every agent, or one per agent).

    Returns
    -------
    numpy.ndarray, shape (..., n, B, K)
    """
    replicas, n_classes = weights.shape[-2:]
    scores = np.matmul(features, weights.reshape(*weights.shape[:-2], replicas * n_classes))
    return scores.reshape(*scores.shape[:-1], replicas, n_classes)


def softmax_inplace(scores: np.ndarray) -> np.ndarray:
    """Turn scores into class probabilities h_k along the last axis, in place; return the array."""
    scores -= scores.max(axis=-1, keepdims=True)  # shift for stability; h is unchanged
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def probabilities(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Return h(w; x_i), shape (..., n, B, K) (see :func:`logits`)."""
    return softmax_inplace(logits(features, weights))


def label_entries(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return values[..., i, b, y_i]: each example's entry at its label, shape (..., n, B).

    Parameters
    ----------
    values : numpy.ndarray, shape (..., n, B, K)
    labels : numpy.ndarray of int, shape (..., n)
    """
    index = np.broadcast_to(labels[..., None, None], values.shape[:-1] + (1,))
    return np.take_along_axis(values, index, axis=-1)[..., 0]


def residual_l1(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return ||h(w; x_i) - y_i||_1 for each example and replica, shape (..., n, B).

    Parameters
    ----------
    probs : numpy.ndarray, shape (..., n, B, K)
        Class probabilities (each row sums to 1).
    labels : numpy.ndarray of int, shape (..., n)

    Notes
    -----
    Because h sums to 1, the l1 distance to the one-hot label is (1 - h_y) + sum_{k != y} h_k
    = 2 (1 - h_y), which needs one entry per example instead of K.
    """
    return 2.0 * (1.0 - label_entries(probs, labels))


def gradient_sum(features: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """Return sum_i x_i (h(w; x_i) - y_i)^T, the unscaled loss gradient of (37).

    Parameters
    ----------
    features : numpy.ndarray, shape (..., n, J)
    residuals : numpy.ndarray, shape (..., n, B, K)
        h(w; x_i) - y_i (zero-feature padding rows contribute nothing).

    Returns
    -------
    numpy.ndarray, shape (..., J, B, K)
    """
    replicas, n_classes = residuals.shape[-2:]
    columns = residuals.reshape(*residuals.shape[:-2], replicas * n_classes)
    total = np.matmul(np.swapaxes(features, -1, -2), columns)
    return total.reshape(*total.shape[:-1], replicas, n_classes)


def one_hot(labels: np.ndarray, n_classes: int, dtype: np.dtype = np.float32) -> np.ndarray:
    """Return one-hot rows, shape labels.shape + (n_classes,)."""
    return (np.asarray(labels)[..., None] == np.arange(n_classes)).astype(dtype)


def loss_sum(
    features: np.ndarray, weights: np.ndarray, labels: np.ndarray, valid: np.ndarray | None = None
) -> np.ndarray:
    """Return sum_i l(w; x_i, y_i), the summed cross-entropy, per replica (float64).

    Parameters
    ----------
    features : numpy.ndarray, shape (..., n, J)
    weights : numpy.ndarray, shape (..., J, B, K)
    labels : numpy.ndarray of int, shape (..., n)
    valid : numpy.ndarray of bool, shape (..., n), optional
        Rows that count (padding rows are excluded).

    Returns
    -------
    numpy.ndarray, shape (B,)
    """
    scores = logits(features, weights)
    top = scores.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(scores - top).sum(axis=-1)) + top[..., 0]
    per_example = log_norm - label_entries(scores, labels)  # -ln h_y(w; x_i)
    if valid is not None:
        per_example = per_example * valid[..., None]
    return per_example.reshape(-1, per_example.shape[-1]).sum(axis=0, dtype=np.float64)


def error_rate(features: np.ndarray, weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return the fraction of examples whose arg-max class is not the label, per replica.

    Parameters
    ----------
    features : numpy.ndarray, shape (n, J)
    weights : numpy.ndarray, shape (J, B, K)
    labels : numpy.ndarray of int, shape (n,)

    Returns
    -------
    numpy.ndarray, shape (B,)
        Ties go to the lowest class index (numpy's argmax), as in the authors' evaluation.
    """
    predicted = logits(features, weights).argmax(axis=-1)
    return (predicted != labels[:, None]).mean(axis=0)
