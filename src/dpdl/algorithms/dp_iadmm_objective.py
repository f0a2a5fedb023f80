"""The objective (1) of DP-IADMM on the agents' data: its value, the training error, its minimiser.

Ryu & Kim's (1): (1/I) sum_p sum_i l(w; x_pi, y_pi) + beta r(w) with the softmax loss and
r(w) = sum w_jk^2, evaluated on the float32 chunks of :mod:`dpdl.algorithms.dp_iadmm_data` (the
same data, padding and features the runs see). The study measures runs by it and compares the
non-private runs with its minimiser.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpdl.algorithms.dp_iadmm_data import DTYPE, FederatedData, chunk_gradients
from dpdl.models import softmax


def training_objective(data: FederatedData, w: np.ndarray, beta: float) -> np.ndarray:
    """The objective (1) at the server's w: (1/I) sum_p sum_i l(w; x_pi, y_pi) + beta r(w), per replica.

    Parameters
    ----------
    data : FederatedData
    w : numpy.ndarray, shape (J, B, K)
    beta : float

    Returns
    -------
    numpy.ndarray, shape (B,)
    """
    total = sum(
        softmax.loss_sum(chunk.features, w[chunk.columns], chunk.labels, chunk.valid) for chunk in data.chunks
    )
    return total / data.n_total + beta * np.square(w, dtype=np.float64).sum(axis=(0, 2))  # (1)


def training_error(data: FederatedData, w: np.ndarray) -> np.ndarray:
    """The fraction of training rows whose arg-max class under the server's w is not the label, per replica.

    ``w`` is (J, B, K); padding rows are excluded. Returns shape (B,).
    """
    wrong = sum(
        softmax.mistakes(chunk.features, w[chunk.columns], chunk.labels, chunk.valid) for chunk in data.chunks
    )
    return wrong / data.n_total


def objective_minimiser(
    data: FederatedData,
    beta: float,
    max_iterations: int,
    callback: Callable[[np.ndarray], None] | None = None,
) -> tuple[np.ndarray, object]:
    """Minimise (1) over one w by scipy's L-BFGS-B from w = 0: the point the non-private runs approach.

    The gradient of (1) is sum_p f'_p(w) (2c), each agent's (37) from :func:`chunk_gradients`
    with the global 1/I, so the minimiser sees the runs' float32 data, padding and features.

    Parameters
    ----------
    data : FederatedData
        One replica (``replicas=1``).
    beta : float
    max_iterations : int
        L-BFGS iterations at most.
    callback : callable, optional
        Called with the iterate w, shape (J, 1, K) float32, after every L-BFGS iteration.

    Returns
    -------
    tuple
        (w of shape (J, 1, K) float32, scipy's ``OptimizeResult``: ``nit``, ``message``, ``fun``,
        ``jac``). The objective is float32 arithmetic, so near the minimiser a line search can stop
        at rounding level (scipy's "ABNORMAL" message); ``jac`` shows how stationary w is.
    """
    from scipy import optimize

    shape = (data.n_features, 1, data.n_classes)
    scale = np.full(data.n_agents, 1.0 / data.n_total)  # (2c): f_p scaled by the global 1/I
    widest = max(chunk.stop - chunk.start for chunk in data.chunks)
    gradients = np.empty((widest, *shape), dtype=DTYPE)

    def value_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.astype(DTYPE).reshape(shape)
        total = np.zeros(shape)
        for chunk in data.chunks:
            size = chunk.stop - chunk.start
            local = np.broadcast_to(w, (size, *shape))  # every agent at the same w
            chunk_gradients(
                chunk, local, scale[chunk.start : chunk.stop], beta, data.n_agents, gradients[:size]
            )
            total += gradients[:size].sum(axis=0, dtype=np.float64)  # (2c): grad (1) = sum_p f'_p(w)
        return float(training_objective(data, w, beta)[0]), total.ravel()

    def report(flat: np.ndarray) -> None:
        if callback is not None:
            callback(flat.astype(DTYPE).reshape(shape))

    result = optimize.minimize(
        value_and_gradient,
        np.zeros(math.prod(shape)),
        jac=True,
        method="L-BFGS-B",
        callback=report,
        options={"maxiter": max_iterations, "gtol": 1e-9, "ftol": 1e-14},
    )
    return result.x.astype(DTYPE).reshape(shape), result
