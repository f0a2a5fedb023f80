"""The network, the node data and the exact local solver of Zhang & Zhu's network ADMM.

Section and gap numbers refer to ``notes/zhang_zhu.md``. Every node's primal step in Algorithms
1-3 is the minimisation of one strongly convex function of the same shape,

    F_p(f) = C^R sum_i w_pi L(y_pi f^T x_pi) + (ridge_p / 2) ||f||^2 + linear_p^T f,

with L the logistic loss and w_pi = 1 / B_p (J(9), J(13) and the PVP Lagrangian expanded; the
ridge collects rho, Phi and 2 eta N_p, the linear term the dual, the noise and the neighbours'
centres). :func:`solve_local` minimises it for all nodes at once with damped Newton to a stated
gradient tolerance (G9: the privacy proofs assume the exact minimiser).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.linalg import lapack
from scipy.special import expit

GraphFamily = Literal["erdos_renyi", "ring", "complete"]
GRAPH_FAMILIES: tuple[GraphFamily, ...] = ("erdos_renyi", "ring", "complete")
# Erdos-Renyi graphs are redrawn until connected; give up (and say why) after this many draws.
MAX_GRAPH_DRAWS = 10_000

# Newton stops when ||grad F_p|| <= NEWTON_GRAD_RTOL * max(1, ||grad F_p(start)||) (G9).
NEWTON_GRAD_RTOL = 1e-8
NEWTON_MAX_ITERATIONS = 50
# Armijo backtracking: sufficient-decrease constant and the most halvings of one step.
ARMIJO_C = 1e-4
MAX_HALVINGS = 40
# Below this predicted decrease (relative to |F|) F's rounding error hides the decrease, so the
# full Newton step is taken without the Armijo test.
DECREASE_FLOOR = 1e-11
# A Hessian factorisation is reused while each step shrinks the gradient norm at least this much.
CHORD_RATE = 0.25
# Rows whose curvature is below this fraction of the largest are left out of the Hessian.
HESSIAN_ROW_FLOOR = 1e-10
# Hessians are formed in float32 when the ridge is at least this fraction of C^R (the loss
# Hessian's norm is at most C^R / 4): float32 rounding is then far below the ridge.
FLOAT32_RIDGE_RATIO = 1e-6


def connected_graph(
    family: GraphFamily, n_nodes: int, *, rng: np.random.Generator, edge_probability: float = 0.3
) -> np.ndarray:
    """Return the adjacency matrix of a connected undirected graph on ``n_nodes`` nodes.

    Parameters
    ----------
    family : {"erdos_renyi", "ring", "complete"}
        ``"erdos_renyi"``: G(P, p), redrawn from ``rng`` until connected (the note's default, G13);
        ``"ring"``: node p is joined to p - 1 and p + 1 (mod P); ``"complete"``: every pair.
    n_nodes : int
        P >= 2.
    rng : numpy.random.Generator
        Source of the Erdos-Renyi draws (unused by the deterministic families).
    edge_probability : float
        p in (0, 1], the Erdos-Renyi edge probability.

    Returns
    -------
    numpy.ndarray
        Symmetric boolean (P, P) adjacency matrix with an empty diagonal; the graph is connected.

    Raises
    ------
    ValueError
        For an unknown family, P < 2, p outside (0, 1], or when no connected Erdos-Renyi graph
        was drawn in ``MAX_GRAPH_DRAWS`` tries.
    """
    if family not in GRAPH_FAMILIES:
        raise ValueError(f"graph family must be one of {GRAPH_FAMILIES}; got {family!r}")
    if isinstance(n_nodes, bool) or int(n_nodes) != n_nodes or n_nodes < 2:
        raise ValueError(f"n_nodes must be an integer >= 2; got {n_nodes!r}")
    if not 0 < edge_probability <= 1:
        raise ValueError(f"edge_probability must be in (0, 1]; got {edge_probability!r}")
    n_nodes = int(n_nodes)
    nodes = np.arange(n_nodes)
    if family == "complete":
        return ~np.eye(n_nodes, dtype=bool)
    if family == "ring":
        adjacency = np.zeros((n_nodes, n_nodes), dtype=bool)
        adjacency[nodes, (nodes + 1) % n_nodes] = True
        return adjacency | adjacency.T
    upper = np.triu_indices(n_nodes, k=1)
    for _ in range(MAX_GRAPH_DRAWS):
        adjacency = np.zeros((n_nodes, n_nodes), dtype=bool)
        adjacency[upper] = rng.random(len(upper[0])) < edge_probability
        adjacency |= adjacency.T
        if is_connected(adjacency):
            return adjacency
    raise ValueError(
        f"no connected Erdos-Renyi graph G({n_nodes}, {edge_probability}) in {MAX_GRAPH_DRAWS} "
        "draws; raise the edge probability or choose the ring or complete family"
    )


def is_connected(adjacency: np.ndarray) -> bool:
    """Return whether the undirected graph with boolean ``adjacency`` is connected (breadth-first)."""
    adjacency = np.asarray(adjacency, dtype=bool)
    reached = np.zeros(len(adjacency), dtype=bool)
    reached[0] = True
    frontier = reached.copy()
    while frontier.any():
        frontier = adjacency[frontier].any(axis=0) & ~reached
        reached |= frontier
    return bool(reached.all())


def edge_list(adjacency: np.ndarray) -> list[list[int]]:
    """Return the edges (p, q) with p < q of a symmetric adjacency matrix, for provenance."""
    rows, cols = np.nonzero(np.triu(adjacency, k=1))
    return [[int(p), int(q)] for p, q in zip(rows, cols, strict=True)]


@dataclass(frozen=True)
class NodeData:
    """The nodes' training shards stacked and zero-padded to a common length.

    Attributes
    ----------
    x : numpy.ndarray
        (P, B_max, d) features; rows past a node's B_p are zero.
    y : numpy.ndarray
        (P, B_max) labels in {-1, +1} (0 on padding).
    weight : numpy.ndarray
        (P, B_max) row weights 1 / B_p (0 on padding), so ``(weight * losses).sum(1)`` is each
        node's per-sample mean loss.
    sizes : numpy.ndarray
        (P,) B_p, the number of samples of each node.
    x32 : numpy.ndarray
        ``x`` in float32 (derived), for the local solver's Hessians.
    """

    x: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    sizes: np.ndarray
    x32: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "x32", self.x.astype(np.float32))  # for the solver's Hessians

    @classmethod
    def from_shards(cls, x: np.ndarray, y: np.ndarray, shards: list[np.ndarray]) -> NodeData:
        """Stack the rows ``x[s], y[s]`` of each shard ``s`` (one shard per node)."""
        sizes = np.array([len(shard) for shard in shards])
        if len(sizes) == 0 or sizes.min() < 1:
            raise ValueError(f"every node needs at least one row; shard sizes are {sizes.tolist()}")
        n_nodes, longest = len(shards), int(sizes.max())
        stacked_x = np.zeros((n_nodes, longest, x.shape[1]))
        stacked_y = np.zeros((n_nodes, longest))
        weight = np.zeros((n_nodes, longest))
        for p, shard in enumerate(shards):
            stacked_x[p, : len(shard)] = x[shard]
            stacked_y[p, : len(shard)] = y[shard]
            weight[p, : len(shard)] = 1.0 / len(shard)
        return cls(stacked_x, stacked_y, weight, sizes)

    @property
    def n_nodes(self) -> int:
        """P, the number of nodes."""
        return self.x.shape[0]

    @property
    def dim(self) -> int:
        """d, the number of features."""
        return self.x.shape[2]


@dataclass(frozen=True)
class LocalSolution:
    """The minimisers of all nodes' local problems and how the solver ended.

    Attributes
    ----------
    f : numpy.ndarray
        (P, d) minimisers.
    iterations : numpy.ndarray
        (P,) Newton steps taken by each node.
    hessians : numpy.ndarray
        (P,) Hessians evaluated (the other steps reused the last factorisation).
    grad_norm : numpy.ndarray
        (P,) final gradient norms.
    converged : numpy.ndarray
        (P,) whether each node met the gradient tolerance within ``NEWTON_MAX_ITERATIONS``.
    factors : tuple
        Per node, the lower Cholesky factor of the last Hessian (pass it to the next call to
        reuse it) or None.
    """

    f: np.ndarray
    iterations: np.ndarray
    hessians: np.ndarray
    grad_norm: np.ndarray
    converged: np.ndarray
    factors: tuple


def node_margins(f: np.ndarray, data: NodeData) -> np.ndarray:
    """Return y_pi f_p^T x_pi, shape (P, B_max), for node parameters ``f`` of shape (P, d)."""
    return np.matmul(data.x, f[:, :, np.newaxis])[:, :, 0] * data.y


def node_losses(f: np.ndarray, data: NodeData) -> np.ndarray:
    """Return each node's per-sample mean logistic loss of its own f_p on its shard, shape (P,)."""
    return (data.weight * np.logaddexp(0.0, -node_margins(f, data))).sum(axis=1)


def local_objective(
    f: np.ndarray, data: NodeData, *, c_r: float, ridge: np.ndarray, linear: np.ndarray
) -> np.ndarray:
    """Return F_p(f_p) for every node (see the module docstring), shape (P,)."""
    return (
        c_r * node_losses(f, data)
        + 0.5 * ridge * np.einsum("pd,pd->p", f, f)
        + np.einsum("pd,pd->p", linear, f)
    )


def solve_local(
    data: NodeData,
    *,
    c_r: float,
    ridge: np.ndarray,
    linear: np.ndarray,
    start: np.ndarray,
    factors: tuple | None = None,
) -> LocalSolution:
    """Minimise every node's F_p with damped Newton, warm-started at ``start``.

    Parameters
    ----------
    data : NodeData
        The nodes' shards.
    c_r : float
        C^R, the loss scaling, > 0.
    ridge : numpy.ndarray
        (P,) ridge_p > 0: rho + Phi_p + 2 eta N_p in the ADMM steps.
    linear : numpy.ndarray
        (P, d) linear coefficients.
    start : numpy.ndarray
        (P, d) starting points (the previous iterates).
    factors : tuple, optional
        ``LocalSolution.factors`` of the previous call with the same ``ridge``: Hessian
        factorisations to try first.

    Returns
    -------
    LocalSolution
        Minimisers, steps, Hessian evaluations, final gradient norms and convergence flags.

    Notes
    -----
    grad F_p = -C^R X_p^T (w y sigmoid(-m)) + ridge_p f + linear_p and
    Hess F_p = C^R X_p^T diag(w sigmoid(m) sigmoid(-m)) X_p + ridge_p I (zhang_zhu.md 2.2).
    Each step solves with a Cholesky factor of the Hessian and backtracks (Armijo) until F_p
    decreases enough. A factor is reused (a chord step, exact gradient) while the gradient norm
    shrinks by ``CHORD_RATE`` per step, and re-evaluated otherwise, so the stopping test
    (``NEWTON_GRAD_RTOL``) is the same as plain Newton's at a fraction of the Hessian cost.
    """
    ridge = np.asarray(ridge, dtype=float)
    if not np.all(ridge > 0):
        raise ValueError(f"ridge must be > 0 for every node; got {ridge!r}")
    n_nodes = data.n_nodes
    factors = (None,) * n_nodes if factors is None else factors
    solved = [
        _newton(
            data.x[p], data.x32[p], data.y[p], data.weight[p], c_r, ridge[p], linear[p], start[p], factors[p]
        )
        for p in range(n_nodes)
    ]
    return LocalSolution(
        f=np.stack([node.f for node in solved]),
        iterations=np.array([node.iterations for node in solved]),
        hessians=np.array([node.hessians for node in solved]),
        grad_norm=np.array([node.grad_norm for node in solved]),
        converged=np.array([node.converged for node in solved]),
        factors=tuple(node.factor for node in solved),
    )


@dataclass(frozen=True)
class _NodeSolution:
    f: np.ndarray
    iterations: int
    hessians: int
    grad_norm: float
    converged: bool
    factor: np.ndarray | None


class _NodeProblem:
    """F(f) = C^R sum_i w_i L(y_i f^T x_i) + (ridge / 2) ||f||^2 + linear^T f of one node."""

    def __init__(self, x, x32, y, weight, c_r, ridge, linear) -> None:
        self.x, self.x32, self.y, self.weight = x, x32, y, weight
        self.c_r, self.ridge, self.linear = c_r, ridge, linear

    def value_and_gradient(self, f: np.ndarray) -> tuple[float, np.ndarray]:
        margin = (self.x @ f) * self.y
        decay = np.exp(-np.abs(margin))
        losses = np.maximum(-margin, 0.0) + np.log1p(decay)  # log(1 + e^-m), overflow-free
        value = self.c_r * (self.weight @ losses) + 0.5 * self.ridge * (f @ f) + self.linear @ f
        coefficient = self.weight * self.y * expit(-margin)
        gradient = -self.c_r * (coefficient @ self.x) + self.ridge * f + self.linear
        return float(value), gradient

    def hessian_factor(self, f: np.ndarray) -> np.ndarray:
        margin = (self.x @ f) * self.y
        curvature = self.c_r * self.weight * expit(margin) * expit(-margin)
        # The Hessian only preconditions steps whose gradient is exact: rows of negligible
        # curvature are left out and the product runs in float32 when the ridge allows it.
        rows = np.flatnonzero(curvature > HESSIAN_ROW_FLOOR * curvature.max())
        weights = np.sqrt(curvature[rows])[:, np.newaxis]
        if self.ridge >= FLOAT32_RIDGE_RATIO * self.c_r:
            scaled = self.x32[rows] * weights.astype(np.float32)
            factor, info = self._factor((scaled.T @ scaled).astype(float))
            if info == 0:
                return factor
        scaled = self.x[rows] * weights  # a tiny ridge (the centralized solve) needs float64
        factor, info = self._factor(scaled.T @ scaled)  # Z^T Z, Z = diag(sqrt(c)) X: BLAS's fastest form
        if info != 0:
            raise np.linalg.LinAlgError(
                f"the local Hessian with ridge {self.ridge:.3g} is not positive definite (dpotrf info {info})"
            )
        return factor

    def _factor(self, hessian: np.ndarray) -> tuple[np.ndarray, int]:
        hessian.flat[:: hessian.shape[0] + 1] += self.ridge
        return lapack.dpotrf(hessian, lower=1)


def _newton(x, x32, y, weight, c_r, ridge, linear, start, factor) -> _NodeSolution:
    problem = _NodeProblem(x, x32, y, weight, c_r, ridge, linear)
    f = np.array(start, dtype=float)  # a copy: the caller's iterate is never modified
    value, grad = problem.value_and_gradient(f)
    grad_norm = float(np.linalg.norm(grad))
    tolerance = NEWTON_GRAD_RTOL * max(1.0, grad_norm)
    iterations = hessians = 0
    while grad_norm > tolerance and iterations < NEWTON_MAX_ITERATIONS:
        if factor is None:
            factor = problem.hessian_factor(f)
            hessians += 1
        step = -lapack.dpotrs(factor, grad, lower=1)[0]
        slope = float(grad @ step)
        size = 1.0
        trial_value, trial_grad = problem.value_and_gradient(f + step)
        # Backtrack only while the predicted decrease is above F's rounding error; below it the
        # full step is inside Newton's quadratic region and Armijo's test is just noise.
        if -slope > DECREASE_FLOOR * max(1.0, abs(value)):
            for _ in range(MAX_HALVINGS):
                if trial_value <= value + ARMIJO_C * size * slope:
                    break
                size *= 0.5
                trial_value, trial_grad = problem.value_and_gradient(f + size * step)
        f = f + size * step
        trial_norm = float(np.linalg.norm(trial_grad))
        if trial_norm > CHORD_RATE * grad_norm or size < 1.0:
            factor = None  # the factor no longer contracts fast enough: evaluate the Hessian
        value, grad, grad_norm = trial_value, trial_grad, trial_norm
        iterations += 1
    return _NodeSolution(f, iterations, hessians, grad_norm, grad_norm <= tolerance, factor)


def centralized_optimum(
    x: np.ndarray, y: np.ndarray, shards: list[np.ndarray], *, c_r: float, rho: float
) -> tuple[np.ndarray, float]:
    """Return the minimiser and minimum of the consensus objective that network ADMM solves.

    Parameters
    ----------
    x, y : numpy.ndarray
        All rows and their labels in {-1, +1}.
    shards : list of numpy.ndarray
        Row indices of each node.
    c_r : float
        C^R.
    rho : float
        rho of one node's local objective.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        f* and Z(f*) for Z(f) = sum_p (C^R / B_p) sum_{i in D_p} L(y_i f^T x_i) + (P rho / 2) ||f||^2,
        the restriction of J(2) to consensus (the note's G15: P copies of rho R(f)).
    """
    rows = np.concatenate(shards)
    weight = np.concatenate([np.full(len(shard), 1.0 / len(shard)) for shard in shards])
    pooled = NodeData(
        x[rows][np.newaxis],
        np.asarray(y, dtype=float)[rows][np.newaxis],
        weight[np.newaxis],
        np.array([len(rows)]),
    )
    ridge = np.array([len(shards) * rho])
    linear = np.zeros((1, x.shape[1]))
    solution = solve_local(pooled, c_r=c_r, ridge=ridge, linear=linear, start=linear)
    if not solution.converged[0]:
        raise RuntimeError(
            f"the centralized Newton solve did not converge in {NEWTON_MAX_ITERATIONS} iterations "
            f"(gradient norm {solution.grad_norm[0]:.3g})"
        )
    value = local_objective(solution.f, pooled, c_r=c_r, ridge=ridge, linear=linear)[0]
    return solution.f[0], float(value)


def consensus_objective(f: np.ndarray, data: NodeData, *, c_r: float, rho: float) -> np.ndarray | float:
    """Return Z(f) of :func:`centralized_optimum` at one vector f (d,) or at each row of (k, d)."""
    f = np.atleast_2d(f)
    margins = np.matmul(data.x, f.T) * data.y[:, :, np.newaxis]  # (P, B_max, k)
    loss = (data.weight[:, :, np.newaxis] * np.logaddexp(0.0, -margins)).sum(axis=(0, 1))
    value = c_r * loss + 0.5 * data.n_nodes * rho * np.einsum("kd,kd->k", f, f)
    return value if value.size > 1 else float(value[0])
