"""Ryu & Kim's DP-IADMM (ObjP, ObjT), the OutP baseline of Huang et al., and the non-private run.

Consensus ADMM with one server and P agents on multinomial logistic regression without bias
(``dpdl.models.softmax``). Every local step is solved in closed form from one full-batch gradient
per agent per iteration; w = z = lambda = 0 at the start; the time index t starts at 1. Equation
numbers are the paper's (arXiv 2106.06127); section numbers refer to ``notes/iadmm.md``.

- ObjP (Algorithm 1): server (4a) -> agents (8), Laplace noise in the objective -> duals (4c).
- ObjT (Algorithm 2): as ObjP with the infinity-norm trust region (9) instead of the proximal term.
- OutP (Huang et al.'s DP-ADMM, note 2.5): agents (prox step with eta-hat) -> Gaussian noise on the
  output -> server -> duals. OutP+ is OutP with rho / 100 (a ``PenaltySchedule`` factor).
- The non-private run is ObjT (or ObjP, by the study's ``nonprivate_algorithm``) with epsilon-bar = inf:
  no noise and rho without the c2 term.

Speed: all state is float32 with shape (P, J, B, K): agents, features, replicas (the seeds of a
job, which share the data so each matrix product reads the data once for all of them), classes.
Agents are sorted by size and grouped into a few blocks padded with zero rows (one block, a view
of the data, when all agents have the same size, as on MNIST) and cut into chunks of a few agents
whose elementwise work stays in cache; the two matrix products per chunk are batched over its
agents and skip the features that are zero in every row of the chunk (pixels no writer of the
chunk touched: half of FEMNIST's per chunk, 12% of MNIST's), which contribute nothing to them.
Each replica draws a chunk's unit-scale noise in one call from its own generator (agents in size
order), so a replica's trajectory does not depend on the other replicas of its job (up to the
float32 rounding of sums over agents). Everything else a chunk does in an iteration, the
gradient's beta term, the noise's scale, the local step, the dual step and the sums over agents,
is one compiled pass over its state (:func:`fused_step`, numba): numpy would make about 13 passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numba
import numpy as np
import pandas as pd

from dpdl.models import softmax
from dpdl.privacy import (
    gaussian,
    iadmm_penalty,
    laplace,
    objp_laplace_scale,
    objp_sensitivity,
    outp_inverse_proximity,
    outp_noise_std,
    outp_sensitivity,
)
from dpdl.privacy.dp_iadmm import OUTP_DELTA, PENALTY_MAX

BETA = 1e-6  # regularisation weight beta of (1) [P section 4, "as in [10]"]
# Blocking of unequal agents: a block costs about as much fixed overhead (numpy calls) as this
# many padded rows of matrix products; the partition minimises padded rows + this per block.
BLOCK_OVERHEAD_ROWS = 64
# The iteration works through the agents chunk by chunk so that the elementwise updates of a
# chunk stay in the core's cache (2 MB L2 here): a chunk holds about this many bytes of the
# J x B x K state (at least one agent); a step touches about five such arrays.
CHUNK_BYTES = 1 << 20
DTYPE = np.float32

Algorithm = Literal["objp", "objt", "outp"]
ALGORITHMS: tuple[str, ...] = ("objp", "objt", "outp")
TRUST_RADII = ("code_const", "paper_inv_t2")  # note 7.1
OUTP_NOISES = ("variance", "sigma")  # note 7.5(b)
SENSITIVITIES = ("eq20", "worst_case")  # note 7.3
OUTP_GRADIENTS = ("agent_mean", "global_mean")  # note 7.5(c)
TRACE_COLUMNS = (
    "iteration", "test_error", "train_cost", "noise_magnitude", "noise_scale", "sensitivity",
    "cv_sum", "cv_mean_agent", "z_change", "rho",
)  # fmt: skip


@dataclass(frozen=True)
class AgentChunk:
    """Agents ``start`` to ``stop`` (in size order) padded to a common number of rows m.

    ``features`` (g, m, J_c) float32 with zero padding rows holds only the chunk's ``columns``: the
    indices of the J_c features that are nonzero in some row of the chunk, or ``slice(None)`` when
    all J are (then ``features`` is a view of its block). Every dropped feature is zero in every row,
    so x w = x[columns] w[columns] and the gradient's other rows are zero. ``labels`` (g, m) (0 on
    padding), ``onehot`` (g, 1, K, m) float32 (class-major like ``softmax``'s per-example arrays;
    zero on padding), ``valid`` (g, m) bool and ``feature_l1`` (g, m) float64, the ||x_pi||_1 (0 on
    padding), are views into the arrays of a block of similar-size agents. ``feature_rows`` (J,) int
    gives each feature's row in ``features``' last axis (and in the chunk's loss gradients), or -1
    for a dropped feature.
    """

    start: int
    stop: int
    features: np.ndarray
    labels: np.ndarray
    onehot: np.ndarray
    valid: np.ndarray
    columns: np.ndarray | slice
    feature_l1: np.ndarray
    feature_rows: np.ndarray


@dataclass(frozen=True)
class FederatedData:
    """The agents' training data, in chunks of agents for batched matrix products.

    ``agent_ids[p]`` is the original index (writer, shard) of internal agent p; ``sizes`` are the
    I_p in internal order (ascending).
    """

    chunks: tuple[AgentChunk, ...]
    agent_ids: np.ndarray
    sizes: np.ndarray
    n_features: int
    n_classes: int

    @property
    def n_agents(self) -> int:
        """P."""
        return int(self.sizes.size)

    @property
    def n_total(self) -> int:
        """I = sum_p I_p."""
        return int(self.sizes.sum())


def size_blocks(sizes: np.ndarray, overhead_rows: int = BLOCK_OVERHEAD_ROWS) -> list[tuple[int, int]]:
    """Partition agents sorted by size into consecutive blocks that minimise padded work.

    Parameters
    ----------
    sizes : numpy.ndarray of int, shape (P,)
        Agent sizes in ascending order.
    overhead_rows : int
        Fixed cost of one block, in padded rows.

    Returns
    -------
    list of (start, stop)
        Blocks covering 0..P; block cost = (stop - start) * sizes[stop - 1] + overhead_rows, and
        the total cost is minimal (dynamic programming over the sorted sizes).
    """
    n = len(sizes)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, dtype=int)
    for stop in range(1, n + 1):
        starts = np.arange(stop)
        costs = best[:stop] + (stop - starts) * float(sizes[stop - 1]) + overhead_rows
        cut[stop] = int(np.argmin(costs))
        best[stop] = costs[cut[stop]]
    blocks = []
    stop = n
    while stop > 0:
        blocks.append((int(cut[stop]), stop))
        stop = cut[stop]
    return blocks[::-1]


def federated_data(
    features: np.ndarray, labels: np.ndarray, offsets: np.ndarray, n_classes: int, *, replicas: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
) -> FederatedData:  # fmt: skip
    """Group the agents' rows into padded blocks (float32) and chunks for :func:`run_iadmm`.

    Parameters
    ----------
    features : numpy.ndarray, shape (I, J)
        Training features, agents' rows contiguous; converted to float32 once (a float32 array
        is used without copying where a block needs no padding).
    labels : numpy.ndarray of int, shape (I,)
        Class indices in 0..n_classes-1.
    offsets : numpy.ndarray of int, shape (P + 1,)
        Agent p owns rows offsets[p]:offsets[p+1]; every agent needs at least one row.
    n_classes : int
        K.
    replicas : int
        B, the replicas the data will be run with (it sets the chunk size).
    chunk_bytes : int
        A chunk holds as many agents as fit their J x B x K float32 state in this many bytes (at
        least one). The chunking changes only the order of float32 sums over agents.

    Returns
    -------
    FederatedData
    """
    features = np.asarray(features, dtype=DTYPE)
    labels = np.asarray(labels, dtype=np.intp)
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    if offsets.ndim != 1 or sizes.size == 0 or offsets[0] != 0 or offsets[-1] != len(features):
        raise ValueError(f"offsets must run from 0 to the number of rows {len(features)}; got {offsets}")
    if np.any(sizes < 1):
        raise ValueError(f"every agent needs at least one row; agents {np.flatnonzero(sizes < 1)} have none")
    if labels.shape != (len(features),) or labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must be {len(features)} class indices in 0..{n_classes - 1}")
    order = np.argsort(sizes, kind="stable")
    sorted_sizes = sizes[order]
    per_chunk = max(1, chunk_bytes // (features.shape[1] * replicas * n_classes * np.dtype(DTYPE).itemsize))
    chunks = []
    for start, stop in size_blocks(sorted_sizes):
        agents = order[start:stop]
        width = int(sorted_sizes[stop - 1])
        first = offsets[agents[0]]
        if np.all(sizes[agents] == width) and np.array_equal(offsets[agents], first + width * np.arange(len(agents))):
            rows = slice(first, first + width * len(agents))
            block_features = features[rows].reshape(len(agents), width, -1)  # a view: no padding needed
            block_labels = labels[rows].reshape(len(agents), width)
            valid = np.ones((len(agents), width), dtype=bool)
        else:
            block_features = np.zeros((len(agents), width, features.shape[1]), dtype=DTYPE)
            block_labels = np.zeros((len(agents), width), dtype=np.intp)
            valid = np.zeros((len(agents), width), dtype=bool)
            for row, agent in enumerate(agents):
                n = sizes[agent]
                block_features[row, :n] = features[offsets[agent] : offsets[agent + 1]]
                block_labels[row, :n] = labels[offsets[agent] : offsets[agent + 1]]
                valid[row, :n] = True
        onehot = softmax.one_hot(block_labels, n_classes, DTYPE) * valid[:, None, None, :]  # zero on padding
        block_l1 = np.abs(block_features).sum(axis=2, dtype=np.float64)
        for first_row in range(0, len(agents), per_chunk):
            part = slice(first_row, first_row + per_chunk)
            chunk_start = start + first_row
            chunk_stop = min(stop, chunk_start + per_chunk)
            chunk_features, columns = block_features[part], slice(None)
            used = np.flatnonzero(chunk_features.any(axis=(0, 1)))
            if len(used) < features.shape[1]:
                chunk_features, columns = np.ascontiguousarray(chunk_features[:, :, used]), used
            feature_rows = np.full(features.shape[1], -1, dtype=np.int64)
            feature_rows[used] = np.arange(len(used))
            chunks.append(AgentChunk(chunk_start, chunk_stop, chunk_features, block_labels[part], onehot[part],
                                     valid[part], columns, block_l1[part], feature_rows))  # fmt: skip
    return FederatedData(tuple(chunks), order, sorted_sizes, features.shape[1], n_classes)


@dataclass(frozen=True)
class PenaltySchedule:
    """The ADMM penalty rho^t: (21) times ``factor``, or the constant ``static``.

    ``c1``, ``c2``, ``t_c`` are the constants of (21) (``dpdl.privacy.dp_iadmm.PENALTY_CONSTANTS``);
    ``factor`` = 0.01 gives OutP+ (A.10) and Fig. 4's rho-hat / 100; ``static`` gives Fig. 4's
    constant rho in {0.1, 1, 10}.
    """

    c1: float
    c2: float
    t_c: int
    rho_max: float = PENALTY_MAX
    factor: float = 1.0
    static: float | None = None

    def __post_init__(self) -> None:
        if not (self.factor > 0 and math.isfinite(self.factor)):
            raise ValueError(f"factor must be in (0, inf); got {self.factor!r}")
        if self.static is not None and not (self.static > 0 and math.isfinite(self.static)):
            raise ValueError(f"static must be in (0, inf) or None; got {self.static!r}")

    def __call__(self, t: int, epsilon: float) -> float:
        """rho^t at iteration t (>= 1) for per-iteration epsilon-bar (inf: no c2 term)."""
        if self.static is not None:
            return self.static
        return self.factor * iadmm_penalty(t, epsilon, c1=self.c1, c2=self.c2, t_c=self.t_c, rho_max=self.rho_max)


@dataclass(frozen=True)
class IadmmParams:
    """Hyperparameters and fidelity switches of one job (shared by its replicas).

    Parameters
    ----------
    algorithm : {"objp", "objt", "outp"}
    epsilon : float
        Per-iteration epsilon-bar in (0, inf]; inf is the non-private run (no noise).
    iterations : int
        T >= 1.
    penalty : PenaltySchedule
    log_every : int
        The trace holds t = 1, log_every, 2 log_every, ..., and T.
    a : float
        Scale of the proximity parameters (A.11, Fig. 6): eta^t = a / sqrt(t) (ObjP), delta^t
        (ObjT), eta-hat^t a (OutP).
    beta : float
        Regularisation weight of (1), 1e-6.
    delta : float
        OutP's per-iteration delta-bar, 1e-6.
    trust_radius : {"code_const", "paper_inv_t2"}
        ObjT's radius delta^t: the authors' code uses ``a/(t+1)*(t+1)`` = a, a constant
        ("code_const", default: what the figures were made with); the paper (A.11) says a / t^2.
    outp_noise : {"variance", "sigma"}
        OutP's Gaussian std: sigma^2 as the code passes it (default), or sigma (note 7.5(b)).
    sensitivity : {"eq20", "worst_case"}
        ObjP/ObjT Laplace sensitivity: data-dependent (20) (default) or a replace-one worst case.
    outp_gradient : {"agent_mean", "global_mean"}
        OutP's loss normalisation 1/I_p as in Huang et al. and the code (default), or the
        paper's 1/I of (2c) (note 7.5(c)); the noise calibration is the same for both.
    feature_bound : float
        Known bound on |x_ij| for the worst-case sensitivity (1 for pixels in [0, 1]).
    """

    algorithm: Algorithm
    epsilon: float
    iterations: int
    penalty: PenaltySchedule
    log_every: int = 200
    a: float = 1.0
    beta: float = BETA
    delta: float = OUTP_DELTA
    trust_radius: str = "code_const"
    outp_noise: str = "variance"
    sensitivity: str = "eq20"
    outp_gradient: str = "agent_mean"
    feature_bound: float = 1.0

    def __post_init__(self) -> None:
        for name, allowed in (
            ("algorithm", ALGORITHMS),
            ("trust_radius", TRUST_RADII),
            ("outp_noise", OUTP_NOISES),
            ("sensitivity", SENSITIVITIES),
            ("outp_gradient", OUTP_GRADIENTS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be in (0, inf]; got {self.epsilon!r}")
        for name in ("iterations", "log_every"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {getattr(self, name)!r}")
        for name in ("a", "feature_bound"):
            if not (getattr(self, name) > 0 and math.isfinite(getattr(self, name))):
                raise ValueError(f"{name} must be in (0, inf); got {getattr(self, name)!r}")
        if not self.beta >= 0:
            raise ValueError(f"beta must be >= 0; got {self.beta!r}")

    @property
    def private(self) -> bool:
        """Whether noise is added (epsilon-bar finite)."""
        return math.isfinite(self.epsilon)


@dataclass(frozen=True)
class IadmmResult:
    """A job's outcome: one trace per replica, the final iterates, the privacy schedule.

    ``traces[b]`` has the columns ``TRACE_COLUMNS`` at the logged iterations; ``weights`` is the
    server's final w, (B, J, K); ``local`` and ``duals`` are the final z_p and lambda_p,
    (B, P, J, K) in the original agent order; ``noise_multipliers[t-1]`` is the smallest noise scale / sensitivity over agents at
    iteration t (1/epsilon-bar for ObjP/ObjT; sigma_p^t / Delta_p^t for OutP; 0 when
    non-private), identical for every replica; ``finite`` is False if any logged value was not
    finite (the run is never stopped early).
    """

    traces: tuple[pd.DataFrame, ...]
    weights: np.ndarray
    local: np.ndarray
    duals: np.ndarray
    noise_multipliers: np.ndarray
    iterations: int
    finite: bool = field(default=True)


def logged_iterations(iterations: int, log_every: int) -> np.ndarray:
    """The iterations a trace holds: 1, log_every, 2 log_every, ... and the last one."""
    points = set(range(log_every, iterations + 1, log_every)) | {1, iterations}
    return np.array(sorted(points))


# --- update steps (each writes into ``out``, which may be ``grad``; other inputs are unchanged) ----


def server_update(sum_z: np.ndarray, sum_lam: np.ndarray, rho: float, n_agents: int) -> np.ndarray:
    """w^{t+1} = (1/P) sum_p (z_p - lambda_p / rho), the closed form of (4a), from the agents' sums.

    Parameters
    ----------
    sum_z, sum_lam : numpy.ndarray, shape (J, B, K)
        sum_p z_p and sum_p lambda_p.
    rho : float
    n_agents : int

    Returns
    -------
    numpy.ndarray, shape (J, B, K), float32
    """
    return ((sum_z - sum_lam / np.float32(rho)) / np.float32(n_agents)).astype(DTYPE)  # (4a)


ALGORITHM_CODES = {"objp": 0, "objt": 1, "outp": 2}  # the ``algorithm`` argument of :func:`fused_step`


@numba.njit(cache=True)
def fused_step(
    algorithm, z, lam, w, loss_gradient, feature_row, beta_term, noise, noise_scale, rho, inverse_rho, radius,
    inverse_eta, objp_factor, dual_rho, new, sum_new, sum_lam,
):  # fmt: skip
    """One iteration's elementwise work for a chunk of agents, in one compiled pass over their state.

    For every agent p, feature j, replica b and class k, with the gradient of (37)
    f'_p = loss_gradient[p, feature_row[j]] (zero where feature_row[j] < 0) + beta_term z_p:

    - ObjP (``algorithm`` 0): z_p^{t+1} of (8),
      (rho w + lambda - xi - f'(z^t) + z^t / eta) / (rho + 1/eta), then lambda_p += rho (w - z_p^{t+1}) (4c);
    - ObjT (1): z_p^{t+1} of (9), z^t + clip((lambda - xi - f'(z^t)) / rho + w - z^t, -delta, delta):
      the infinity-norm trust region makes (9) separable, so clipping the minimiser of (10) is
      exact; then (4c);
    - OutP (2): first the deferred (4c) of iteration t-1 with ``dual_rho`` (none when it is 0), then
      Huang et al.'s prox step (rho w + lambda - f' + z^t / eta-hat_p) / (rho + 1/eta-hat_p) plus
      the Gaussian output noise (note 2.5, steps 1-2).

    It writes z^{t+1} to ``new``, updates ``lam`` in place and adds both over the agents into
    ``sum_new`` and ``sum_lam``. Arrays: z, lam, new (g, J, B, K); w, sum_new, sum_lam (J, B, K);
    loss_gradient (g, J_c, B, K); feature_row (J,) int; noise (B, g, J, K), replica-major unit-scale
    draws, or empty for no noise, and noise_scale (g, B), so that xi = noise * noise_scale (the
    Laplace b of (11a) or OutP's Gaussian std); inverse_eta (g,) (1/eta for ObjP, 1/eta-hat_p for
    OutP). Scalars and arrays are float32, and each coordinate follows the float32 operations of the
    equations in the order written, as numpy would evaluate them array by array.
    """
    agents, n_features, replicas, n_classes = z.shape
    private = noise.size > 0
    for a in range(agents):
        eta_term = inverse_eta[a]
        for j in range(n_features):
            row = feature_row[j]
            for b in range(replicas):
                for k in range(n_classes):
                    z_old = z[a, j, b, k]
                    gradient = z_old * beta_term  # (37): (2 beta / P) z ...
                    if row >= 0:
                        gradient = gradient + loss_gradient[a, row, b, k]  # ... + (1/I) sum x (h - y)
                    xi = noise[b, a, j, k] * noise_scale[a, b] if private else np.float32(0.0)
                    dual = lam[a, j, b, k]
                    server = w[j, b, k]
                    if algorithm == 2:
                        if dual_rho > 0:
                            dual = dual + (server - z_old) * dual_rho  # (4c) of iteration t-1
                        value = (dual - gradient + rho * server + z_old * eta_term) / (rho + eta_term) + xi
                    else:
                        value = dual - gradient - xi
                        if algorithm == 1:
                            step = value * inverse_rho + server - z_old  # minimiser of G^t (10) minus z^t
                            value = z_old + min(max(step, -radius), radius)  # (9), region (6b)
                        else:
                            value = (value + rho * server + z_old * eta_term) * objp_factor  # (8)
                        dual = dual + (server - value) * rho  # (4c)
                    new[a, j, b, k] = value
                    lam[a, j, b, k] = dual
                    sum_new[j, b, k] += value
                    sum_lam[j, b, k] += dual


def dual_update(lam: np.ndarray, w: np.ndarray, z: np.ndarray, rho: float, work: np.ndarray) -> np.ndarray:
    """lambda_p += rho (w^{t+1} - z_p^{t+1}) in place (4c); returns ``lam``."""
    np.subtract(w, z, out=work)
    work *= np.float32(rho)
    lam += work  # (4c)
    return lam


def chunk_loss_gradients(chunk: AgentChunk, z: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return scale_p sum_i x_pi (h(z_p; x_pi) - y_pi)^T on the chunk's features, and the residual norms.

    Parameters
    ----------
    chunk : AgentChunk
    z : numpy.ndarray, shape (g, J, B, K)
        The chunk's local iterates.
    scale : numpy.ndarray, shape (g,)
        1/I (ObjP, ObjT: (2c), (37)) or 1/I_p (OutP, the agent-average loss).

    Returns
    -------
    tuple of numpy.ndarray
        The loss part of (37), shape (g, J_c, B, K), rows ``chunk.columns`` (every other feature's
        row is zero); and ||h(z_p; x_pi) - y_pi||_1 of every row (padding rows included), shape
        (g, B, m), for the sensitivity (20).
    """
    active_z = z[:, chunk.columns]  # the features dropped from the chunk add nothing to x z
    probs = softmax.probabilities(chunk.features, active_z)
    residual_norms = softmax.residual_l1(probs, chunk.labels)
    probs -= chunk.onehot  # h - y (zero-feature padding rows add nothing to the gradient)
    per_agent = scale.astype(DTYPE)[:, None, None, None]
    scale_residuals = probs.size < active_z.size  # scale the smaller of (h - y) and the product
    if scale_residuals:
        probs *= per_agent
    loss_gradient = softmax.gradient_sum(chunk.features, probs)  # rows of the chunk's nonzero features
    if not scale_residuals:
        loss_gradient *= per_agent
    return loss_gradient, residual_norms


def chunk_gradients(
    chunk: AgentChunk, z: np.ndarray, scale: np.ndarray, beta: float, n_agents: int, out: np.ndarray
) -> np.ndarray:
    """Write f'_p(z_p) = scale_p sum_i x_pi (h(z_p; x_pi) - y_pi)^T + (2 beta / P) z_p into ``out``.

    ``chunk``, ``z`` and ``scale`` as in :func:`chunk_loss_gradients`; ``beta`` and ``n_agents``
    (P) give the regulariser's term; ``out`` has z's shape (g, J, B, K). Returns the residual
    norms of :func:`chunk_loss_gradients`. (The runs fuse this sum into :func:`fused_step`.)
    """
    loss_gradient, residual_norms = chunk_loss_gradients(chunk, z, scale)
    np.multiply(z, np.float32(2.0 * beta / n_agents), out=out)
    out[:, chunk.columns] += loss_gradient  # (37): (1/I) sum x (h - y) + (2 beta / P) z
    return residual_norms


def chunk_sensitivities(data: FederatedData, chunk: AgentChunk, residual_norms: np.ndarray) -> np.ndarray:
    """Delta-bar_p^t of (20) for the chunk's agents and every replica, shape (g, B).

    ``residual_norms`` (g, B, m) are the ||h - y||_1 of :func:`chunk_gradients`, passed to (20) as
    one-column residuals; padding rows have ||x||_1 = 0 and add nothing.
    """
    return objp_sensitivity(chunk.feature_l1[:, None, :], residual_norms[..., None], n_total=data.n_total)  # (20)


def outp_calibration(
    params: IadmmParams, t: int, rho: float, sizes: np.ndarray, n_params: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OutP's 1/eta-hat_p^t, output sensitivity and Gaussian std for each agent size I_p (note 2.5).

    Returns three arrays shaped like ``sizes``; the std is sigma or sigma^2 by ``params.outp_noise``.
    """
    inverse_eta = np.array([
        outp_inverse_proximity(t, params.epsilon, params.delta, n_samples=int(n), n_params=n_params, a=params.a)
        for n in sizes
    ])  # fmt: skip
    sensitivity = np.array([outp_sensitivity(rho, v, n_samples=int(n)) for v, n in zip(inverse_eta, sizes)])
    std = np.array([
        outp_noise_std(params.epsilon, params.delta, sensitivity=v, outp_noise=params.outp_noise) for v in sensitivity
    ])  # fmt: skip
    return inverse_eta, sensitivity, std


_laplace_scales = np.vectorize(objp_laplace_scale, otypes=[np.float64])  # (11a), per agent and replica


def draw_noise(
    rngs: Sequence[np.random.Generator], sampler: Callable, shape: tuple[int, int, int], buffer: np.ndarray
) -> np.ndarray:
    """Draw the chunk's unit-scale noise of every replica (replica b from ``rngs[b]`` only), replica-major.

    ``shape`` is (g, J, K); ``buffer`` is a flat float32 array of at least B g J K entries. Returns
    (B, g, J, K), a view of ``buffer``. Each replica's draw is one call of ``sampler`` of size
    ``shape`` with scale 1, into the buffer (agents in order); :func:`fused_step` multiplies it by
    each agent's and replica's scale, the same float32 product as the sampler's.
    """
    out = buffer[: len(rngs) * math.prod(shape)].reshape(len(rngs), *shape)
    for b, rng in enumerate(rngs):
        sampler(rng=rng, scale=1.0, size=shape, dtype=DTYPE, out=out[b])
    return out


def fused_constants(params: IadmmParams, t: int, rho: float, previous_rho: float | None) -> dict[str, np.float32]:
    """The float32 scalars of :func:`fused_step` at iteration t (rho = rho^t; OutP's previous rho or None)."""
    inverse_eta = math.sqrt(t) / params.a  # ObjP: eta = a / sqrt(t)
    radius = params.a if params.trust_radius == "code_const" else params.a / t**2  # ObjT's delta (note 7.1)
    dual_rho = previous_rho if params.algorithm == "outp" and previous_rho is not None else 0.0
    values = {"rho": rho, "inverse_rho": 1.0 / rho, "radius": radius, "inverse_eta": inverse_eta,
              "objp_factor": 1.0 / (rho + inverse_eta), "dual_rho": dual_rho}  # fmt: skip
    return {name: np.float32(value) for name, value in values.items()}


def run_iadmm(
    data: FederatedData,
    params: IadmmParams,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    *,
    rngs: Sequence[np.random.Generator],
    progress: Callable[[int], None] | None = None,
) -> IadmmResult:
    """Run ObjP, ObjT or OutP for T iterations on every replica at once.

    Parameters
    ----------
    data : FederatedData
        The agents' training data (:func:`federated_data`).
    params : IadmmParams
    test_features : numpy.ndarray, shape (n_test, J)
    test_labels : numpy.ndarray of int, shape (n_test,)
    rngs : sequence of numpy.random.Generator
        One generator per replica (B >= 1); replica b's noise comes only from ``rngs[b]``, agent by
        agent in size order, so its trajectory does not depend on the other replicas (up to the
        float32 rounding of the sums over agents, whose grouping follows the chunks).
    progress : callable, optional
        Called with t after every iteration (for progress logs).

    Returns
    -------
    IadmmResult
        Test error and train cost are those of the server's w^{t+1}; the noise magnitude is
        (1/(PJK)) sum |xi_pjk^t| (Fig. 1); CV^t = sum_p ||w^{t+1} - z_p^{t+1}||_1 (A.10), also / P.

    Notes
    -----
    Each iteration works through the agents chunk by chunk (loss gradient, noise, then
    :func:`fused_step` for the local and dual steps), keeping the chunk's arrays in cache. The
    server step needs every agent, so ObjP/ObjT
    form w^{t+1} from the sums of z^t and lambda^t accumulated in the previous pass, and OutP,
    whose server step follows the agents, applies its dual step (4c) of iteration t at the start
    of the chunk's work in iteration t+1 (and once more after the last iteration).
    """
    rngs = list(rngs)
    if not rngs or not all(isinstance(r, np.random.Generator) for r in rngs):
        raise TypeError("rngs must be a non-empty sequence of numpy.random.Generator")
    n_agents, n_features, n_classes, replicas = data.n_agents, data.n_features, data.n_classes, len(rngs)
    test_features = np.asarray(test_features, dtype=DTYPE)
    if test_features.ndim != 2 or test_features.shape[1] != n_features:
        raise ValueError(f"test_features must have {n_features} columns; got shape {test_features.shape}")
    z = np.zeros((n_agents, n_features, replicas, n_classes), dtype=DTYPE)
    lam, z_next = np.zeros_like(z), np.zeros_like(z)
    widest = max(chunk.stop - chunk.start for chunk in data.chunks)
    work = np.zeros((widest,) + z.shape[1:], dtype=DTYPE)  # for the logged sums and OutP's last (4c)
    noise_buffer = np.zeros(replicas * widest * n_features * n_classes, dtype=DTYPE)  # a chunk's (B, g, J, K)
    no_noise, no_scale = np.zeros((replicas, 0, 0, 0), DTYPE), np.zeros((0, replicas))
    algorithm_code = ALGORITHM_CODES[params.algorithm]
    beta_term = np.float32(2.0 * params.beta / n_agents)  # (37): the gradient of (2 beta / P) ||z||^2
    sums = {key: np.zeros(z.shape[1:], dtype=DTYPE) for key in ("z", "lam", "next_z", "next_lam")}
    w = np.zeros(z.shape[1:], dtype=DTYPE)
    outp = params.algorithm == "outp"
    sizes = data.sizes.astype(np.float64)
    if outp and params.outp_gradient == "agent_mean":
        grad_scale = 1.0 / sizes  # Huang et al.: the agent-average loss (note 7.5(c))
    else:
        grad_scale = np.full(n_agents, 1.0 / data.n_total)  # (2c): f_p scaled by the global 1/I
    worst_case = None
    if params.sensitivity == "worst_case":
        all_l1 = np.concatenate([chunk.feature_l1[chunk.valid] for chunk in data.chunks])
        worst_case = objp_sensitivity(
            all_l1, np.zeros((len(all_l1), 1)), n_total=data.n_total, mode="worst_case",
            feature_l1_bound=n_features * params.feature_bound,
        )  # fmt: skip
    unique_sizes, size_index = np.unique(data.sizes, return_inverse=True)
    log_points = logged_iterations(params.iterations, params.log_every)
    log = {name: np.full((len(log_points), replicas), np.nan) for name in TRACE_COLUMNS}
    multipliers = np.zeros(params.iterations)
    row, previous_rho = 0, None
    for t in range(1, params.iterations + 1):
        rho = params.penalty(t, params.epsilon)
        log_now = t == log_points[row]
        totals = {key: np.zeros(replicas) for key in ("noise", "change", "cv", "scale", "sensitivity")}
        step_constants = fused_constants(params, t, rho, previous_rho)
        if outp:
            inverse_eta, sensitivity, std = outp_calibration(params, t, rho, unique_sizes, n_features * n_classes)
            multipliers[t - 1] = float(np.min(std / sensitivity)) if params.private else 0.0
            agent_inverse_eta, agent_std = inverse_eta[size_index].astype(DTYPE), std[size_index]
            totals["scale"] += agent_std.sum()
            totals["sensitivity"] += sensitivity[size_index].sum()
        else:
            w = server_update(sums["z"], sums["lam"], rho, n_agents)  # (4a)
            multipliers[t - 1] = 1.0 / params.epsilon  # b / Delta-bar = 1 / epsilon-bar (11a)
            agent_inverse_eta = np.full(n_agents, step_constants["inverse_eta"], DTYPE)  # ObjP's 1/eta, every agent
        sums["next_z"][...] = 0.0
        sums["next_lam"][...] = 0.0
        for chunk in data.chunks:
            agents = slice(chunk.start, chunk.stop)
            size = chunk.stop - chunk.start
            z_c, lam_c, new_c, work_c = z[agents], lam[agents], z_next[agents], work[:size]
            loss_gradient, residual_norms = chunk_loss_gradients(chunk, z_c, grad_scale[agents])
            noise, scale = no_noise, no_scale
            if outp and params.private:
                scale = np.repeat(agent_std[agents, None], replicas, axis=1)
                noise = draw_noise(rngs, gaussian, (size, n_features, n_classes), noise_buffer)  # note 2.5 step 2
            elif params.private:
                if worst_case is None:
                    sensitivity = chunk_sensitivities(data, chunk, residual_norms)
                else:
                    sensitivity = np.full((size, replicas), worst_case)
                scale = _laplace_scales(sensitivity, params.epsilon)  # (11a): b = Delta-bar / epsilon-bar
                noise = draw_noise(rngs, laplace, (size, n_features, n_classes), noise_buffer)  # (11a): i.i.d. Laplace
                totals["scale"] += scale.sum(axis=0)
                totals["sensitivity"] += sensitivity.sum(axis=0)
            fused_step(algorithm_code, z_c, lam_c, w, loss_gradient, chunk.feature_rows, beta_term, noise,
                       scale.astype(DTYPE), step_constants["rho"], step_constants["inverse_rho"],
                       step_constants["radius"], agent_inverse_eta[agents], step_constants["objp_factor"],
                       step_constants["dual_rho"], new_c, sums["next_z"], sums["next_lam"])  # fmt: skip
            if log_now:
                totals["noise"] += (np.abs(noise).sum(axis=(2, 3), dtype=np.float64) * scale.T).sum(axis=1)
                np.subtract(new_c, z_c, out=work_c)
                totals["change"] += np.abs(work_c).sum(axis=(0, 1, 3), dtype=np.float64)
                if not outp:
                    np.subtract(w, new_c, out=work_c)
                    totals["cv"] += np.abs(work_c).sum(axis=(0, 1, 3), dtype=np.float64)  # A.10
        z, z_next = z_next, z
        sums["z"], sums["next_z"] = sums["next_z"], sums["z"]
        sums["lam"], sums["next_lam"] = sums["next_lam"], sums["lam"]
        if outp:
            w = server_update(sums["z"], sums["lam"], rho, n_agents)  # (4a) after the agents (note 7.5(d))
            previous_rho = rho
            if log_now:
                totals["cv"] = np.abs(w - z).sum(axis=(0, 1, 3), dtype=np.float64)  # A.10
        if log_now:
            per_coordinate = n_agents * n_features * n_classes
            log["iteration"][row] = t
            log["rho"][row] = rho
            log["noise_magnitude"][row] = totals["noise"] / per_coordinate  # Fig. 1 top
            log["z_change"][row] = totals["change"] / per_coordinate
            log["cv_sum"][row], log["cv_mean_agent"][row] = totals["cv"], totals["cv"] / n_agents
            log["noise_scale"][row] = totals["scale"] / n_agents
            log["sensitivity"][row] = totals["sensitivity"] / n_agents
            log["test_error"][row] = softmax.error_rate(test_features, w, test_labels)
            log["train_cost"][row] = training_objective(data, w, params.beta)
            row += 1
        if progress is not None:
            progress(t)
    if outp:
        for chunk in data.chunks:  # the last dual step (4c), deferred above
            agents = slice(chunk.start, chunk.stop)
            dual_update(lam[agents], w, z[agents], previous_rho, work[: chunk.stop - chunk.start])
    finite = all(np.isfinite(values).all() for values in log.values())
    traces = tuple(
        pd.DataFrame({name: (values[:, b].astype(np.int64) if name == "iteration" else values[:, b])
                      for name, values in log.items()})
        for b in range(replicas)
    )  # fmt: skip
    original = np.argsort(data.agent_ids)  # internal index of each original agent

    def by_replica(state: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(state[original], 2, 0))

    return IadmmResult(traces, np.ascontiguousarray(np.moveaxis(w, 1, 0)), by_replica(z), by_replica(lam),
                       multipliers if params.private else np.zeros_like(multipliers), params.iterations, finite)  # fmt: skip


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
    total = sum(softmax.loss_sum(chunk.features, w[chunk.columns], chunk.labels, chunk.valid) for chunk in data.chunks)
    return total / data.n_total + beta * np.square(w, dtype=np.float64).sum(axis=(0, 2))  # (1)


def training_error(data: FederatedData, w: np.ndarray) -> np.ndarray:
    """The fraction of training rows whose arg-max class under the server's w is not the label, per replica.

    ``w`` is (J, B, K); padding rows are excluded. Returns shape (B,).
    """
    wrong = sum(softmax.mistakes(chunk.features, w[chunk.columns], chunk.labels, chunk.valid) for chunk in data.chunks)
    return wrong / data.n_total


def objective_minimiser(
    data: FederatedData, beta: float, max_iterations: int, callback: Callable[[np.ndarray], None] | None = None
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
            chunk_gradients(chunk, local, scale[chunk.start : chunk.stop], beta, data.n_agents, gradients[:size])
            total += gradients[:size].sum(axis=0, dtype=np.float64)  # (2c): grad (1) = sum_p f'_p(w)
        return float(training_objective(data, w, beta)[0]), total.ravel()

    def report(flat: np.ndarray) -> None:
        if callback is not None:
            callback(flat.astype(DTYPE).reshape(shape))

    result = optimize.minimize(
        value_and_gradient, np.zeros(math.prod(shape)), jac=True, method="L-BFGS-B", callback=report,
        options={"maxiter": max_iterations, "gtol": 1e-9, "ftol": 1e-14},
    )  # fmt: skip
    return result.x.astype(DTYPE).reshape(shape), result
