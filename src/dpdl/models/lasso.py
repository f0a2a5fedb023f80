"""The lasso of Gratton et al., (33): minimise ``s ||X beta - y||^2 + eta ||beta||_1``, batched over trials.

The paper's l1 weight eta is ``l1_weight`` in the code.

``s`` is the loss scale: 1 in the centralized problem (33) and in the distributed problem under
``loss_scale: sum`` (dzoa.md G1, the default); 1 / N_k under ``loss_scale: mean`` (the literal
(2)/(34)). The paper computes the centralized solution with CVX; :func:`solve` is a deterministic
cyclic coordinate descent on the Gram matrix, polished by one exact solve on the final support
and signs, with a duality-gap certificate (dzoa.md section 5.4).

Every function takes a batch of problems: ``X`` of shape ``(..., N, P)``, ``y`` of shape
``(..., N)`` and ``beta`` of shape ``(..., P)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GAP_TOL = 1e-11  # duality gap (in the objective's scale) at which coordinate descent stops
MAX_SWEEPS = 100_000  # coordinate-descent sweeps over all P coordinates before giving up
GAP_CHECK_EVERY = 10  # sweeps between two duality-gap evaluations


@dataclass(frozen=True)
class LassoSolution:
    """Solutions of a batch of lasso problems.

    Attributes
    ----------
    beta : numpy.ndarray, shape (..., P)
        The minimisers.
    gap : numpy.ndarray, shape (...)
        Duality gap of each solution, in the objective's scale (an upper bound on its suboptimality).
    objective : numpy.ndarray, shape (...)
        The objective value at ``beta``.
    sweeps : int
        Coordinate-descent sweeps used (the batch stops together).
    """

    beta: np.ndarray
    gap: np.ndarray
    objective: np.ndarray
    sweeps: int


def objective(
    beta: np.ndarray, X: np.ndarray, y: np.ndarray, *, l1_weight: float, scale: float = 1.0
) -> np.ndarray:
    """Return ``scale ||X beta - y||^2 + eta ||beta||_1`` for each problem of the batch.

    Parameters
    ----------
    beta : numpy.ndarray, shape (..., P)
    X : numpy.ndarray, shape (..., N, P)
    y : numpy.ndarray, shape (..., N)
    l1_weight : float
        eta of (33), the l1 weight (eta = 1 in the paper).
    scale : float
        The loss scale s (1 for (33)).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    residual = np.einsum("...np,...p->...n", X, beta) - y
    # (33)
    return scale * np.einsum("...n,...n->...", residual, residual) + l1_weight * np.abs(beta).sum(axis=-1)


def duality_gap(
    beta: np.ndarray, X: np.ndarray, y: np.ndarray, *, l1_weight: float, scale: float = 1.0
) -> np.ndarray:
    """Return the duality gap of ``beta`` for each problem, in the objective's scale.

    Parameters
    ----------
    beta, X, y, l1_weight, scale
        As in :func:`objective`.

    Returns
    -------
    numpy.ndarray, shape (...)
        A certificate: objective(beta) - min objective <= gap. Zero only at the minimiser.

    Notes
    -----
    In the standard form ``(1/2)||y - X beta||^2 + lam ||beta||_1`` with ``lam = eta / (2 s)``
    (the objective divided by 2s; eta is ``l1_weight``), the dual point ``theta = kappa r`` with residual
    ``r = y - X beta``, ``c = X^T r`` and ``kappa = min(1, lam / ||c||_inf)`` is feasible and the
    gap expands to ``(1/2)(1 - kappa)^2 ||r||^2 + sum_j |beta_j| (lam - kappa sign(beta_j) c_j)``, a
    sum of non-negative terms; this form avoids subtracting two objective values of order
    ``||y||^2`` and is accurate to rounding of the terms themselves.
    """
    lam = l1_weight / (2.0 * scale)
    residual = y - np.einsum("...np,...p->...n", X, beta)
    correlation = np.einsum("...np,...n->...p", X, residual)
    largest = np.abs(correlation).max(axis=-1)
    kappa = np.minimum(1.0, lam / np.maximum(largest, np.finfo(float).tiny))
    radial = 0.5 * (1.0 - kappa) ** 2 * np.einsum("...n,...n->...", residual, residual)
    slack = np.abs(beta) * (lam - kappa[..., None] * np.sign(beta) * correlation)
    return 2.0 * scale * (radial + slack.sum(axis=-1))


def solve(
    X: np.ndarray,
    y: np.ndarray,
    *,
    l1_weight: float,
    scale: float = 1.0,
    tol: float = GAP_TOL,
    max_sweeps: int = MAX_SWEEPS,
) -> LassoSolution:
    """Solve a batch of lasso problems ``min scale ||X beta - y||^2 + eta ||beta||_1``.

    Parameters
    ----------
    X : numpy.ndarray, shape (..., N, P)
        Features; every column must be non-zero.
    y : numpy.ndarray, shape (..., N)
        Responses.
    l1_weight : float
        eta of (33), the l1 weight, > 0.
    scale : float
        The loss scale s, > 0.
    tol : float
        Coordinate descent stops when every duality gap is below ``tol``.
    max_sweeps : int
        Sweeps allowed before giving up.

    Returns
    -------
    LassoSolution

    Raises
    ------
    ValueError
        If a column of ``X`` is zero, or the gap does not fall below ``tol`` within ``max_sweeps``.

    Notes
    -----
    Cyclic coordinate descent from zero in the standard form: ``beta_j = soft(q_j - sum_{i != j}
    G_ji beta_i, lam) / G_jj`` with ``G = X^T X``, ``q = X^T y``, ``lam = eta / (2 s)``. At the end
    the support and signs are fixed and ``G_AA beta_A = q_A - lam sign_A`` is solved exactly; that
    polished point replaces the iterate when its signs agree and its gap is smaller.
    """
    if l1_weight <= 0 or scale <= 0:
        raise ValueError(f"l1_weight and scale must be > 0; got l1_weight={l1_weight}, scale={scale}")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    gram = np.einsum("...np,...nq->...pq", X, X)
    target = np.einsum("...np,...n->...p", X, y)
    diagonal = np.diagonal(gram, axis1=-2, axis2=-1)
    if np.any(diagonal <= 0):
        raise ValueError("every column of X must be non-zero (a zero column has no coordinate update)")
    lam = l1_weight / (2.0 * scale)
    beta = np.zeros(target.shape)
    n_features = beta.shape[-1]
    sweeps = 0
    while sweeps < max_sweeps:
        for j in range(n_features):
            partial = (
                target[..., j]
                - np.einsum("...p,...p->...", gram[..., j, :], beta)
                + diagonal[..., j] * beta[..., j]
            )
            beta[..., j] = np.sign(partial) * np.maximum(np.abs(partial) - lam, 0.0) / diagonal[..., j]
        sweeps += 1
        if sweeps % GAP_CHECK_EVERY == 0 and np.all(
            duality_gap(beta, X, y, l1_weight=l1_weight, scale=scale) < tol
        ):
            break
    beta = _polish(beta, gram, target, lam, X, y, l1_weight=l1_weight, scale=scale)
    gap = duality_gap(beta, X, y, l1_weight=l1_weight, scale=scale)
    if not np.all(gap < tol):
        raise ValueError(
            f"lasso coordinate descent did not reach a duality gap below {tol:g} in {max_sweeps} sweeps "
            f"(largest gap {gap.max():.3g}); raise max_sweeps"
        )
    return LassoSolution(beta, gap, objective(beta, X, y, l1_weight=l1_weight, scale=scale), sweeps)


def _polish(beta, gram, target, lam, X, y, *, l1_weight, scale) -> np.ndarray:
    """Solve exactly on each problem's support and signs; keep the result where it is better."""
    polished = beta.copy()
    flat_beta = polished.reshape(-1, beta.shape[-1])
    flat_gram = gram.reshape(-1, *gram.shape[-2:])
    flat_target = target.reshape(-1, target.shape[-1])
    for b in range(flat_beta.shape[0]):
        support = np.flatnonzero(flat_beta[b])
        if support.size == 0:
            continue
        signs = np.sign(flat_beta[b, support])
        solution = np.linalg.solve(
            flat_gram[b][np.ix_(support, support)], flat_target[b, support] - lam * signs
        )
        if np.all(np.sign(solution) == signs):
            flat_beta[b, support] = solution
    before = duality_gap(beta, X, y, l1_weight=l1_weight, scale=scale)
    after = duality_gap(polished, X, y, l1_weight=l1_weight, scale=scale)
    return np.where((after <= before)[..., None], polished, beta)
