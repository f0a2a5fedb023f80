"""Kang, Liu & Wang's WD-DP, Jayaraman et al.'s averaged baseline, centralized DP-GD, and theta*.

Equation numbers are the paper's (Weighted Distributed Differential Privacy ERM, arXiv
1910.10308 v2); section and gap numbers refer to ``notes/wddp.md``. The loss is logistic
regression with labels in {0, 1} (eq. 17), with the gradient's sign corrected to x (h(z) - y)
(gap A10), and an optional L2 term (l2 / 2) ||theta||^2 (gap A7, 0 by default).

Every method is full-batch noisy gradient descent; the methods differ only in how the clients'
gradients are weighted and in the noise scale sigma (wddp.md 2.4):

- ``wddp``: per-record weight 1 / n, i.e. client weight n_j / n (Algorithm 1, eq. 4);
- ``dist_avg``: per-record weight 1 / (m n_j), i.e. client weight 1 / m (eq. 1; Jayaraman et al.);
- ``central``: per-record weight 1 / n on the pooled data (Wang, Ye & Xu's DP-GD).

Two aggregation schedules (gap A1): :func:`per_round_descent` evaluates all clients' gradients at
a common model every round and adds one N(0, sigma^2 I) draw to the weighted aggregate (what the
proof of Theorem 1, eq. 4, analyses); :func:`one_shot_descent` is Algorithm 1 as printed, T noisy
local steps per client and one weighted average at the end (no DP proof in the paper). Columns
of ``theta`` are independent runs; each has its own generator, so a run's numbers do not depend
on which other runs share its batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpdl.models import logistic
from dpdl.privacy.wddp import METHODS, Method

NOISE_CHUNK = 64  # iterations of noise drawn per generator call (a memory / call-overhead trade)
OPTIMUM_GTOL = 1e-10  # gradient-norm tolerance handed to scipy's trust-exact for theta*
OPTIMUM_MAX_ITERATIONS = 1000  # trust-region iterations allowed for theta*
OPTIMUM_GRADIENT_NORM = 1e-8  # theta* counts as converged when ||grad L(theta*)|| is below this


@dataclass(frozen=True)
class DescentResult:
    """Snapshots of a batch of noisy gradient-descent runs.

    Attributes
    ----------
    iterations : int
        T, the number of rounds run (always all of them; there is no early stop).
    recorded_iterations : numpy.ndarray
        The rounds t at which theta_t was recorded (0 is the initial model), increasing.
    thetas : numpy.ndarray
        ``(len(recorded_iterations), d, k)``: the released model theta_t of each of the k runs
        (for the one-shot schedule, the weighted average of the clients' local models at t).

    Notes
    -----
    Noisy gradient descent has no stopping rule here (the paper fixes T), so there is no
    ``converged`` flag; :attr:`finite` says whether every recorded model is finite (a step size
    too large for the data makes the iterates overflow).
    """

    iterations: int
    recorded_iterations: np.ndarray
    thetas: np.ndarray

    @property
    def finite(self) -> np.ndarray:
        """``(k,)``: whether all recorded models of each run are finite."""
        return np.isfinite(self.thetas).all(axis=(0, 1))


@dataclass(frozen=True)
class OptimumResult:
    """The non-private optimum theta* of the training objective.

    Attributes
    ----------
    theta : numpy.ndarray
        theta*, shape ``(d,)``.
    loss : float
        L(theta*), the mean logistic loss plus the L2 term.
    gradient_norm : float
        ||grad L(theta*)||.
    iterations : int
        Trust-region iterations used.
    converged : bool
        Whether ``gradient_norm < OPTIMUM_GRADIENT_NORM``.
    """

    theta: np.ndarray
    loss: float
    gradient_norm: float
    iterations: int
    converged: bool


def record_weights(method: Method, shards: Sequence[np.ndarray], n_rows: int) -> np.ndarray:
    """Return the weight of every training record in a method's aggregate gradient.

    Parameters
    ----------
    method : {"wddp", "dist_avg", "central"}
        The method (module docstring).
    shards : sequence of numpy.ndarray
        Row indices of each client's data; together they cover ``range(n_rows)`` once.
    n_rows : int
        n, the number of training rows.

    Returns
    -------
    numpy.ndarray
        ``(n_rows,)`` weights w_i summing to 1: 1 / n for ``wddp`` and ``central``, 1 / (m n_j)
        for a record of client j under ``dist_avg`` (wddp.md 2.4).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if method != "dist_avg":
        return np.full(n_rows, 1.0 / n_rows)  # client weight n_j / n (eq. 4)
    weights = np.empty(n_rows)
    for shard in shards:
        weights[shard] = 1.0 / (len(shards) * len(shard))  # client weight 1 / m (eq. 1)
    return weights


def client_weights(method: Method, sizes: Sequence[int]) -> np.ndarray:
    """Return the weight of each client's model in the one-shot average of Algorithm 1.

    Parameters
    ----------
    method : {"wddp", "dist_avg"}
        ``wddp``: n_j / n (Algorithm 1's server step); ``dist_avg``: 1 / m (eq. 2).
    sizes : sequence of int
        n_j of the m clients.

    Returns
    -------
    numpy.ndarray
        ``(m,)`` weights summing to 1.
    """
    sizes = np.asarray(sizes, dtype=float)
    if method == "wddp":
        return sizes / sizes.sum()  # theta^(c) = sum_j (n_j / n) theta_T^(j)
    if method == "dist_avg":
        return np.full(sizes.size, 1.0 / sizes.size)  # eq. (2)
    raise ValueError(f"the one-shot average is defined for 'wddp' and 'dist_avg'; got {method!r}")


def objective(theta: np.ndarray, x: np.ndarray, labels: np.ndarray, l2: float = 0.0) -> np.ndarray | float:
    """Return L(theta) = mean logistic loss (eq. 17) + (l2 / 2) ||theta||^2, per column of ``theta``.

    Parameters
    ----------
    theta : numpy.ndarray
        ``(d,)`` or ``(d, k)``.
    x : numpy.ndarray
        ``(n, d)`` features.
    labels : numpy.ndarray
        ``(n,)`` labels in {0, 1}.
    l2 : float
        L2 coefficient (gap A7), >= 0.

    Returns
    -------
    float or numpy.ndarray
        L(theta) per column.
    """
    penalty = 0.5 * l2 * np.sum(theta * theta, axis=0)
    return logistic.loss(theta, x, logistic.signed_labels(labels)) + penalty


def accuracy(theta: np.ndarray, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Return the fraction of rows whose prediction 1{x theta >= 0} equals the {0, 1} label, per column.

    Parameters
    ----------
    theta : numpy.ndarray
        ``(d,)`` or ``(d, k)`` models.
    x : numpy.ndarray
        ``(n, d)`` features.
    labels : numpy.ndarray
        ``(n,)`` labels in {0, 1}.

    Returns
    -------
    numpy.ndarray
        A 0-d array for ``(d,)`` ``theta``, else ``(k,)``. 1{x theta >= 0} is 1{sigmoid(x theta) >= 0.5}
        (wddp.md 4.4).
    """
    predictions = x @ theta >= 0
    return np.mean(
        predictions == (labels > 0)[:, None] if predictions.ndim == 2 else predictions == (labels > 0), axis=0
    )


def weighted_gradient(
    theta: np.ndarray, x: np.ndarray, labels: np.ndarray, weights: np.ndarray, l2: float = 0.0
) -> np.ndarray:
    """Return sum_i w_i x_i (h(x_i theta) - y_i) + l2 theta for each column of ``theta``.

    Parameters
    ----------
    theta : numpy.ndarray
        ``(d, k)`` models.
    x : numpy.ndarray
        ``(n, d)`` features.
    labels : numpy.ndarray
        ``(n,)`` labels in {0, 1}.
    weights : numpy.ndarray
        ``(n,)`` or ``(n, k)`` per-record weights (:func:`record_weights`).
    l2 : float
        L2 coefficient, >= 0.

    Returns
    -------
    numpy.ndarray
        ``(d, k)`` gradients.
    """
    residual = x @ theta
    expit(residual, out=residual)
    residual -= labels[:, None]  # grad l = x (h(z) - y), eq. (17) with the sign of A10
    residual *= weights if np.ndim(weights) == 2 else weights[:, None]
    gradient = x.T @ residual  # sum_j (n_j / n) grad L_{D_j}(theta_t) for wddp, eq. (4)
    if l2:
        gradient += l2 * theta
    return gradient


def per_round_descent(
    x: np.ndarray,
    labels: np.ndarray,
    theta0: np.ndarray,
    weights: np.ndarray,
    sigma: np.ndarray,
    step_size: np.ndarray,
    *,
    iterations: int,
    rngs: Sequence[np.random.Generator],
    record_at: Sequence[int],
    l2: float = 0.0,
    progress: Callable[[int], None] | None = None,
) -> DescentResult:
    """Run k noisy full-batch gradient descents with per-round aggregation (default schedule, A1).

    Each round, every column c takes theta <- theta - eta_c (sum_i w_ic grad l_i(theta) + z),
    z ~ N(0, sigma_c^2 I_d) drawn from ``rngs[c]``: one draw on the aggregate (gap A2).

    Parameters
    ----------
    x : numpy.ndarray
        ``(n, d)`` pooled training features (all clients).
    labels : numpy.ndarray
        ``(n,)`` labels in {0, 1}.
    theta0 : numpy.ndarray
        ``(d, k)`` initial models; not modified.
    weights : numpy.ndarray
        ``(n, k)`` per-record weights of each column (or ``(n,)`` shared by all).
    sigma : numpy.ndarray
        ``(k,)`` noise standard deviations (0 for a non-private run).
    step_size : numpy.ndarray
        ``(k,)`` learning rates eta.
    iterations : int
        T >= 1.
    rngs : sequence of numpy.random.Generator
        One generator per column; the only source of randomness.
    record_at : sequence of int
        Rounds t in [0, T] at which to record theta_t, increasing.
    l2 : float
        L2 coefficient, >= 0.
    progress : callable, optional
        Called with the number of rounds done after each round (for logging).

    Returns
    -------
    DescentResult
    """
    theta, sigma, step_size, record_at = _checked_batch(theta0, sigma, step_size, rngs, iterations, record_at)
    snapshots = np.empty((len(record_at), *theta.shape))
    slot = _record(snapshots, 0, record_at, 0, theta)
    noise = np.empty(0)
    for t in range(iterations):
        if t % NOISE_CHUNK == 0:
            noise = _noise_block(rngs, (min(NOISE_CHUNK, iterations - t), theta.shape[0]))
        gradient = weighted_gradient(theta, x, labels, weights, l2)
        gradient += sigma * noise[t % NOISE_CHUNK]  # + z_t, z_t ~ N(0, sigma^2 I_p)
        # theta_{t+1} = theta_t - eta (grad L_D(theta_t) + z_t), Alg. 1 / eq. (4)
        theta -= step_size * gradient
        slot = _record(snapshots, slot, record_at, t + 1, theta)
        if progress is not None:
            progress(t + 1)
    return DescentResult(iterations, np.asarray(record_at), snapshots)


def one_shot_descent(
    x: np.ndarray,
    labels: np.ndarray,
    theta0: np.ndarray,
    shards: Sequence[np.ndarray],
    average_weights: np.ndarray,
    sigma: np.ndarray,
    step_size: np.ndarray,
    *,
    iterations: int,
    rngs: Sequence[np.random.Generator],
    record_at: Sequence[int],
    l2: float = 0.0,
    progress: Callable[[int], None] | None = None,
) -> DescentResult:
    """Run Algorithm 1 as printed: T noisy local steps per client, then one weighted average.

    Client j of column c takes theta_j <- theta_j - eta_c (grad L_{D_j}(theta_j) + z_j), with
    its own z_j ~ N(0, sigma_c^2 I_d) each round; the released model is sum_j a_jc theta_j. All
    columns share one partition (``shards``). The paper proves no privacy for this schedule
    (wddp.md 2.2 and gap A1).

    Parameters
    ----------
    x, labels : numpy.ndarray
        Pooled training data, as in :func:`per_round_descent`.
    theta0 : numpy.ndarray
        ``(d, k)`` common initial models theta^(c) downloaded by every client; not modified.
    shards : sequence of numpy.ndarray
        Row indices of each of the m clients.
    average_weights : numpy.ndarray
        ``(m, k)`` weights of the final average (:func:`client_weights`).
    sigma, step_size : numpy.ndarray
        ``(k,)``, as in :func:`per_round_descent`.
    iterations : int
        T >= 1 local rounds.
    rngs : sequence of numpy.random.Generator
        One generator per column; each draws the noise of all its clients.
    record_at : sequence of int
        Rounds at which to record the weighted average of the local models.
    l2 : float
        L2 coefficient, >= 0.
    progress : callable, optional
        Called with the number of rounds done after each round.

    Returns
    -------
    DescentResult
    """
    theta, sigma, step_size, record_at = _checked_batch(theta0, sigma, step_size, rngs, iterations, record_at)
    average_weights = np.asarray(average_weights, dtype=float)
    if average_weights.shape != (len(shards), theta.shape[1]):
        raise ValueError(
            f"average_weights must have shape {(len(shards), theta.shape[1])}; got {average_weights.shape}"
        )
    local_x = [np.ascontiguousarray(x[shard]) for shard in shards]
    local_labels = [labels[shard] for shard in shards]
    local_theta = np.repeat(theta[None], len(shards), axis=0)  # every client starts at theta^(c)
    snapshots = np.empty((len(record_at), *theta.shape))
    slot = _record(snapshots, 0, record_at, 0, theta)
    noise = np.empty(0)
    for t in range(iterations):
        if t % NOISE_CHUNK == 0:
            noise = _noise_block(rngs, (min(NOISE_CHUNK, iterations - t), len(shards), theta.shape[0]))
        for j, (xj, yj) in enumerate(zip(local_x, local_labels, strict=True)):
            gradient = weighted_gradient(local_theta[j], xj, yj, np.full(len(yj), 1.0 / len(yj)), l2)
            gradient += sigma * noise[t % NOISE_CHUNK, j]  # + z_t, drawn by party j
            # theta_{t+1}^(j) = theta_t^(j) - eta (grad L_{D_j} + z_t), Alg. 1
            local_theta[j] -= step_size * gradient
        if t + 1 in record_at:
            # sum_j a_j theta^(j), Alg. 1 server
            average = np.einsum("jk,jdk->dk", average_weights, local_theta)
            slot = _record(snapshots, slot, record_at, t + 1, average)
        if progress is not None:
            progress(t + 1)
    return DescentResult(iterations, np.asarray(record_at), snapshots)


def nonprivate_optimum(x: np.ndarray, labels: np.ndarray, l2: float = 0.0) -> OptimumResult:
    """Return theta*, the minimizer of the training objective, by scipy's trust-exact Newton method.

    Parameters
    ----------
    x : numpy.ndarray
        ``(n, d)`` training features.
    labels : numpy.ndarray
        ``(n,)`` labels in {0, 1}.
    l2 : float
        L2 coefficient, >= 0.

    Returns
    -------
    OptimumResult
        ``converged`` says whether ||grad L(theta*)|| < ``OPTIMUM_GRADIENT_NORM``.

    Notes
    -----
    The paper's "centralized optimal non-privacy model" (wddp.md 4.1). Without L2 and with nearly
    separable data (KDD) the infimum is approached as ||theta|| grows; trust-exact still reaches a
    point whose gradient norm is below the tolerance, which makes L(theta*) the infimum to far
    better precision than any gap we report (gap A18).
    """
    from scipy import optimize  # imported here: only theta* needs it, and it is slow to import

    signed = logistic.signed_labels(labels)
    d = x.shape[1]

    def value(theta: np.ndarray) -> float:
        return float(objective(theta, x, labels, l2))

    def gradient(theta: np.ndarray) -> np.ndarray:
        return logistic.gradient(theta, x, signed) + l2 * theta

    def hessian(theta: np.ndarray) -> np.ndarray:
        return logistic.hessian(theta, x, signed) + l2 * np.eye(d)

    found = optimize.minimize(
        value,
        np.zeros(d),
        jac=gradient,
        hess=hessian,
        method="trust-exact",
        options={"gtol": OPTIMUM_GTOL, "maxiter": OPTIMUM_MAX_ITERATIONS},
    )
    norm = float(np.linalg.norm(gradient(found.x)))
    return OptimumResult(found.x, value(found.x), norm, int(found.nit), norm < OPTIMUM_GRADIENT_NORM)


def _checked_batch(
    theta0: np.ndarray,
    sigma: np.ndarray,
    step_size: np.ndarray,
    rngs: Sequence[np.random.Generator],
    iterations: int,
    record_at: Sequence[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    theta = np.array(theta0, dtype=float, copy=True)
    if theta.ndim != 2:
        raise ValueError(f"theta0 must be a (d, k) array of k models; got shape {theta.shape}")
    k = theta.shape[1]
    sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (k,))
    step_size = np.broadcast_to(np.asarray(step_size, dtype=float), (k,))
    if len(rngs) != k:
        raise ValueError(f"need one generator per column: {k} columns, {len(rngs)} generators")
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1; got {iterations}")
    record_at = [int(t) for t in record_at]
    if not record_at or record_at != sorted(set(record_at)) or record_at[0] < 0 or record_at[-1] > iterations:
        raise ValueError(f"record_at must be increasing rounds in [0, {iterations}]; got {record_at}")
    return theta, sigma, step_size, record_at


def _noise_block(rngs: Sequence[np.random.Generator], shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal draws of shape ``shape + (k,)``, column c from ``rngs[c]`` in stream order."""
    block = np.empty((*shape, len(rngs)))
    for column, rng in enumerate(rngs):
        block[..., column] = rng.standard_normal(shape)
    return block


def _record(snapshots: np.ndarray, slot: int, record_at: list[int], t: int, theta: np.ndarray) -> int:
    if slot < len(record_at) and record_at[slot] == t:
        snapshots[slot] = theta
        return slot + 1
    return slot
