"""Multinomial (softmax) logistic regression without bias: probabilities, loss, gradient, error.

Ryu & Kim's model (A.8): w is a J x K weight matrix, h_k(w; x) = exp(x w_k) / sum_k' exp(x w_k'),
the loss of one example is l(w; x, y) = -sum_k y_k ln h_k(w; x) with one-hot y, and r(w) = sum w_jk^2.

Every function is batched twice. Features may carry leading batch axes (agents): ``(..., n, J)``.
Weights always carry a replica axis before the class axis, ``(..., J, B, K)`` (B = 1 for one
model): the replicas are runs that share the data, for example the seeds of a job, and are
multiplied in one matrix product as ``B * K`` columns, so the data are read once for all of them.
Per-example arrays (scores, probabilities, residuals) are class-major, ``(..., B, K, n)``: the
sums and maxima over the K classes are then elementwise operations over contiguous rows of n
examples, not n short reductions (on MNIST, K = 10, this makes a gradient 20-25% faster).
Arrays stay in the caller's dtype (float32 in the studies); sums of losses are accumulated in
float64.
"""

from __future__ import annotations

import numpy as np


def logits(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Return the scores x_i w of every example and replica, class-major.

    Parameters
    ----------
    features : numpy.ndarray, shape (..., n, J)
        Examples as rows.
    weights : numpy.ndarray, shape (..., J, B, K)
        B replicas of the weight matrix; leading axes broadcast against those of ``features``
        (one w for every agent, or one per agent).

    Returns
    -------
    numpy.ndarray, shape (..., B, K, n)
    """
    replicas, n_classes = weights.shape[-2:]
    columns = weights.reshape(*weights.shape[:-2], replicas * n_classes)
    # (w^T x^T): (..., B K, n)
    scores = np.matmul(np.swapaxes(columns, -1, -2), np.swapaxes(features, -1, -2))
    return scores.reshape(*scores.shape[:-2], replicas, n_classes, scores.shape[-1])


def softmax_inplace(scores: np.ndarray) -> np.ndarray:
    """Turn class-major scores (..., K, n) into class probabilities h_k along axis -2, in place."""
    scores -= scores.max(axis=-2, keepdims=True)  # shift for stability; h is unchanged
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-2, keepdims=True)
    return scores


def probabilities(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Return h(w; x_i), shape (..., B, K, n) (see :func:`logits`)."""
    return softmax_inplace(logits(features, weights))


def label_entries(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return values[..., b, y_i, i]: each example's entry at its label, shape (..., B, n).

    Parameters
    ----------
    values : numpy.ndarray, shape (..., B, K, n)
    labels : numpy.ndarray of int, shape (..., n)
    """
    index = np.broadcast_to(labels[..., None, None, :], values.shape[:-2] + (1, values.shape[-1]))
    return np.take_along_axis(values, index, axis=-2)[..., 0, :]


def residual_l1(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return ||h(w; x_i) - y_i||_1 for each example and replica, shape (..., B, n).

    Parameters
    ----------
    probs : numpy.ndarray, shape (..., B, K, n)
        Class probabilities (each example's K entries sum to 1).
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
    residuals : numpy.ndarray, shape (..., B, K, n)
        h(w; x_i) - y_i, class-major (zero-feature padding rows contribute nothing).

    Returns
    -------
    numpy.ndarray, shape (..., J, B, K)
    """
    replicas, n_classes, n = residuals.shape[-3:]
    columns = residuals.reshape(*residuals.shape[:-3], replicas * n_classes, n)
    # x^T (h - y)^T: (..., J, B K)
    total = np.matmul(np.swapaxes(features, -1, -2), np.swapaxes(columns, -1, -2))
    return total.reshape(*total.shape[:-1], replicas, n_classes)


def one_hot(labels: np.ndarray, n_classes: int, dtype: np.dtype = np.float32) -> np.ndarray:
    """Return the one-hot y_i of labels (..., n) class-major, shape (..., 1, K, n), like the residuals."""
    labels = np.asarray(labels)
    return (labels[..., None, None, :] == np.arange(n_classes)[:, None]).astype(dtype)


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
    top = scores.max(axis=-2, keepdims=True)
    log_norm = np.log(np.exp(scores - top).sum(axis=-2)) + top[..., 0, :]
    per_example = log_norm - label_entries(scores, labels)  # -ln h_y(w; x_i), (..., B, n)
    if valid is not None:
        per_example = per_example * valid[..., None, :]
    per_replica = per_example.sum(axis=-1, dtype=np.float64)
    return per_replica.reshape(-1, per_replica.shape[-1]).sum(axis=0)


def mistakes(
    features: np.ndarray, weights: np.ndarray, labels: np.ndarray, valid: np.ndarray | None = None
) -> np.ndarray:
    """Return the number of examples whose arg-max class is not the label, per replica, shape (B,).

    Arguments as in :func:`loss_sum` (``valid`` excludes padding rows). Ties go to the lowest class
    index (numpy's argmax), as in the authors' evaluation.
    """
    wrong = logits(features, weights).argmax(axis=-2) != labels[..., None, :]  # (..., B, n)
    if valid is not None:
        wrong &= valid[..., None, :]
    per_replica = wrong.sum(axis=-1)
    return per_replica.reshape(-1, per_replica.shape[-1]).sum(axis=0)


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
        See :func:`mistakes`.
    """
    return mistakes(features, weights, labels) / len(labels)
