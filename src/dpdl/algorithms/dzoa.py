"""Gratton et al.'s D-ZOA: decentralized consensus ADMM whose local step is zeroth-order SGD.

Equation numbers are the paper's (seed 004); sections and gaps refer to ``notes/dzoa.md``.
K agents on an undirected graph each hold (X_k, y_k). Outer iteration m (Algorithm 1 in the
textbook order (7)-(8), note 2.5):

1. ``v_k = d_k beta_k + sum_{l in nbr(k)} beta_l`` from the neighbours' shared estimates;
2. T steps of two-point zeroth-order SGD (9), (11), (12) on the local augmented Lagrangian
   ``F_k(beta) = f_k(beta) + beta^T gamma_k + rho d_k ||beta||^2 - rho beta^T v_k`` (note 2.2),
   with ``f_k(beta) = s ||X_k beta - y_k||^2 + (eta / K) ||beta||_1`` (34), cold-started at 0,
   returning the last iterate (G9); the paper's l1 weight eta is ``l1_weight`` in the code;
3. ``gamma_k += rho sum_{l in nbr(k)} (beta_k - beta_l)`` (20).

There is no added noise: the zeroth-order randomness is the privacy mechanism; its step constant
alpha0 R comes from inverting (27) (``dpdl.privacy.dzoa_step_scale``) and enters as
``alpha_t = alpha0 R / (L sqrt(t P ln 2P))`` (text after (11)).

Speed. F_k is a quadratic plus an l1 term, so the finite difference of (9) splits exactly: with
``q(beta) = beta^T A beta + b^T beta`` (A = s X_k^T X_k + rho d_k I), the quadratic part of the
estimate averaged over the J directions is ``S_t (2 A beta + b) + r_t`` with
``S_t = (1/J) sum_j nu2_j nu2_j^T`` and ``r_t = (1/J) sum_j (2 u1_t nu1_j^T A nu2_j + u2_t nu2_j^T A
nu2_j) nu2_j``, which do not depend on the iterate; only the l1 difference is evaluated direction
by direction. Directions are drawn per (trial, agent) and shared by every privacy setting of a
batch (common random numbers), so one batch runs a trial's whole privacy grid at once.
:func:`two_point_estimate` is the literal (9)/(12) on any callable, the reference the tests
compare with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

TOPOLOGIES = ("ring_chord", "ring", "path", "complete")


@dataclass(frozen=True)
class DzoaResult:
    """Outcome of a batch of D-ZOA runs (C privacy settings x B trials).

    Attributes
    ----------
    error : numpy.ndarray, shape (C, B, M + 1)
        Normalized error ``sum_k ||beta_k^(m) - beta^c||^2 / ||beta^c||^2`` at m = 0..M (K at m = 0);
        non-finite after a divergence.
    beta : numpy.ndarray, shape (C, B, K, P)
        Local estimates after the last outer iteration.
    diverged : numpy.ndarray, shape (C, B)
        True where an iterate became non-finite.
    perturbation : numpy.ndarray, shape (C, B, M, K)
        ``||xi_k^(m)||`` at m = 1..M: the l2 norm of the realised zeroth-order perturbation
        ``xi_k^(m) = beta_k^(m) - beta_k_breve^(m)`` of (15)/(19), the shared iterate minus the exact
        minimizer of the same F_k (:func:`exact_local_minimizer`); a diagnostic that draws no
        random numbers, so ``error`` and ``beta`` are what they were without it.
    """

    error: np.ndarray
    beta: np.ndarray
    diverged: np.ndarray
    perturbation: np.ndarray


def topology_edges(name: str, n_agents: int) -> list[tuple[int, int]]:
    """Return the undirected edges (0-indexed, i < j) of a named graph on ``n_agents`` nodes.

    Parameters
    ----------
    name : {"ring_chord", "ring", "path", "complete"}
        ``ring_chord`` (the default, dzoa.md 1.1): the ring 1-2-...-K-1 plus the chord 1-3, an
        assumption (the paper's Figure 1 is an image; E and the degrees are not stated).
    n_agents : int
        K; ``ring_chord`` needs K >= 4, ``ring`` K >= 3, the others K >= 2.

    Returns
    -------
    list of tuple of int
    """
    minimum = {"ring_chord": 4, "ring": 3, "path": 2, "complete": 2}
    if name not in minimum:
        raise ValueError(f"topology must be one of {TOPOLOGIES}; got {name!r}")
    if n_agents < minimum[name]:
        raise ValueError(f"topology {name!r} needs at least {minimum[name]} agents; got {n_agents}")
    if name == "complete":
        return [(i, j) for i in range(n_agents) for j in range(i + 1, n_agents)]
    edges = [(i, i + 1) for i in range(n_agents - 1)]
    if name in ("ring", "ring_chord"):
        edges.append((0, n_agents - 1))
    if name == "ring_chord":
        edges.append((0, 2))
    return sorted(edges)


def adjacency(edges: Sequence[tuple[int, int]], n_agents: int) -> np.ndarray:
    """Return the symmetric 0/1 adjacency matrix (K x K) of an undirected edge list."""
    matrix = np.zeros((n_agents, n_agents))
    for i, j in edges:
        matrix[i, j] = matrix[j, i] = 1.0
    return matrix


def local_objective(
    beta: np.ndarray,
    *,
    X: np.ndarray,
    y: np.ndarray,
    gamma: np.ndarray,
    v: np.ndarray,
    degree: int,
    rho: float,
    l1_weight: float,
    n_agents: int,
    loss_scale: float,
) -> np.ndarray:
    """Return F_k(beta), agent k's local augmented Lagrangian of outer iteration m (note 2.2).

    Parameters
    ----------
    beta : numpy.ndarray, shape (..., P)
        Points (a batch along the leading axes).
    X, y : numpy.ndarray, shapes (N_k, P) and (N_k,)
        Agent k's data.
    gamma, v : numpy.ndarray, shape (P,)
        gamma_k^(m-1) and v_k^(m-1) = d_k beta_k^(m-1) + sum_{l in nbr(k)} beta_l^(m-1).
    degree : int
        d_k, neighbours of k excluding k (G5).
    rho : float
        ADMM penalty.
    l1_weight : float
        eta of (1) and (34), the lasso's l1 weight.
    n_agents : int
        K (the l1 weight is split as eta / K).
    loss_scale : float
        s: 1 (``loss_scale: sum``) or 1 / N_k (``mean``).

    Returns
    -------
    numpy.ndarray, shape (...)
    """
    residual = beta @ X.T - y
    # (34)
    loss = loss_scale * np.sum(residual**2, axis=-1) + (l1_weight / n_agents) * np.abs(beta).sum(axis=-1)
    return loss + beta @ gamma + rho * degree * np.sum(beta**2, axis=-1) - rho * (beta @ v)  # (7), note 2.2


def two_point_estimate(
    objective: Callable[[np.ndarray], np.ndarray],
    point: np.ndarray,
    *,
    u1: float,
    u2: float,
    nu1: np.ndarray,
    nu2: np.ndarray,
) -> np.ndarray:
    """Return the averaged two-point zeroth-order gradient estimate at ``point``, literally (9), (12).

    Parameters
    ----------
    objective : callable
        Maps points of shape (..., P) to values of shape (...).
    point : numpy.ndarray, shape (P,)
        The current iterate (G8: the estimate is taken at beta^(t-1)).
    u1, u2 : float
        Smoothing radii u_{1,t}, u_{2,t}.
    nu1, nu2 : numpy.ndarray, shape (J, P)
        Gaussian directions.

    Returns
    -------
    numpy.ndarray, shape (P,)
        ``(1/J) sum_j [F(w + u1 nu1_j + u2 nu2_j) - F(w + u1 nu1_j)] / u2 * nu2_j``.
    """
    shifted = point + u1 * nu1
    differences = (objective(shifted + u2 * nu2) - objective(shifted)) / u2  # (9)
    return differences @ nu2 / nu1.shape[0]  # (12)


def exact_local_minimizer(
    quad: np.ndarray, lin: np.ndarray, l1_weight: float, start: np.ndarray, *, rtol: float = 1e-12
) -> np.ndarray:
    """Return argmin_beta ``beta^T A beta + b^T beta + w ||beta||_1``, the exact local ADMM update (16)/(18).

    This is beta_k_breve^(m), the minimizer of agent k's F_k (note 2.2) with gamma_k^(m-1) and v_k^(m-1)
    frozen, around which Lemma 1 (21) models the shared iterate as beta_breve + xi (15)/(19). A is
    positive definite (``s X_k^T X_k + rho d_k I``), so proximal gradient with step ``1 / (lambda_max +
    lambda_min)`` of A contracts by ``q = (lambda_max - lambda_min) / (lambda_max + lambda_min)`` per
    step; it runs until ``q^n <= rtol``, so the distance to the minimizer shrinks by ``rtol`` from the
    ``start`` (the zeroth-order iterate: the error left is ``rtol`` times the perturbation measured).

    Parameters
    ----------
    quad : numpy.ndarray, shape (B, K, P, P)
        A per trial and agent (symmetric positive definite).
    lin : numpy.ndarray, shape (B, K, C, P)
        b = ``-2 s X_k^T y_k + gamma_k - rho v_k`` per trial, agent and privacy setting.
    l1_weight : float
        w = eta / K, the agent's l1 weight (34).
    start : numpy.ndarray, shape (B, K, C, P)
        Where the iteration starts.
    rtol : float
        The contraction to reach.

    Returns
    -------
    numpy.ndarray, shape (B, K, C, P)
    """
    eigenvalues = np.linalg.eigvalsh(quad)  # ascending, (B, K, P)
    low, high = eigenvalues[..., 0], eigenvalues[..., -1]
    if np.any(low <= 0):
        raise ValueError("the quadratic part of F_k must be positive definite (rho d_k > 0)")
    # gradient 2 A beta + b: Lipschitz 2 high, strong convexity 2 low
    step = (1.0 / (high + low))[..., None, None]
    contraction = float(np.max((high - low) / (high + low)))
    n_steps = 1 if contraction <= 0 else max(1, math.ceil(math.log(rtol) / math.log(contraction)))
    beta = np.array(start, dtype=float)
    for _ in range(n_steps):
        moved = beta - step * (2.0 * np.matmul(beta, quad) + lin)
        beta = np.sign(moved) * np.maximum(np.abs(moved) - step * l1_weight, 0.0)  # prox of w ||.||_1
    return beta


def dzoa(
    X: np.ndarray,
    y: np.ndarray,
    beta_c: np.ndarray,
    graph: np.ndarray,
    step_scale: np.ndarray,
    rngs: Sequence[Sequence[np.random.Generator]],
    *,
    rho: float,
    l1_weight: float,
    loss_scale: float,
    lipschitz: float,
    smoothing: float,
    n_directions: int,
    n_outer: int,
    n_inner: int,
    on_iteration: Callable[[int], None] | None = None,
) -> DzoaResult:
    """Run D-ZOA (Algorithm 1) for C privacy settings on B trials at once.

    Parameters
    ----------
    X : numpy.ndarray, shape (B, K, N_k, P)
        Each trial's features, split by agent.
    y : numpy.ndarray, shape (B, K, N_k)
        Responses.
    beta_c : numpy.ndarray, shape (B, P)
        Each trial's centralized solution (for the normalized error only).
    graph : numpy.ndarray, shape (K, K)
        Symmetric 0/1 adjacency matrix; every agent needs a neighbour.
    step_scale : numpy.ndarray, shape (C, B, K)
        alpha0 R per setting, trial and agent (from inverting (27)).
    rngs : sequence of sequence of numpy.random.Generator
        ``rngs[b][k]`` draws agent k's directions in trial b (shared by the C settings).
    rho : float
        ADMM penalty (4).
    l1_weight : float
        eta of (1), the lasso's l1 weight (split as eta / K per agent, (34)).
    loss_scale : float
        s of f_k (G1): 1 or 1 / N_k.
    lipschitz : float
        L of the step size (G3; not given in the paper).
    smoothing : float
        u1 (1): u_{1,t} = u1 / t, u_{2,t} = u1 / (P t)^2.
    n_directions, n_outer, n_inner : int
        J (30), M (200), T (100).
    on_iteration : callable, optional
        Called with m after each outer iteration (progress logging).

    Returns
    -------
    DzoaResult
        With ``perturbation``, the realised ``||xi_k^(m)||`` of (15)/(19) at every outer iteration.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n_trials, n_agents, _, n_params = X.shape
    n_settings = step_scale.shape[0]
    degree = _checked_degree(X, graph, step_scale, rngs)
    problem = _local_problems(
        X, y, graph, degree, step_scale, rho=rho, l1_weight=l1_weight, loss_scale=loss_scale,
        lipschitz=lipschitz, smoothing=smoothing, n_directions=n_directions, n_inner=n_inner,
    )  # fmt: skip
    probes = _probe_buffers(n_trials, n_agents, n_settings, n_params, n_directions, n_inner)

    beta = np.zeros((n_trials, n_agents, n_settings, n_params))
    gamma = np.zeros_like(beta)
    reference = beta_c[:, None, None, :]  # beta^c on the state axes (B, K, C, P)
    error = np.empty((n_trials, n_settings, n_outer + 1))
    error[..., 0] = normalized_error(beta, reference, agent_axis=1)
    perturbation = np.empty((n_trials, n_agents, n_settings, n_outer))  # ||xi_k^(m)|| of (15)/(19)
    with np.errstate(over="ignore", invalid="ignore"):
        for m in range(1, n_outer + 1):
            beta, gamma, perturbation[..., m - 1] = _outer_iteration(problem, probes, beta, gamma, rngs)
            error[..., m] = normalized_error(beta, reference, agent_axis=1)
            if on_iteration is not None:
                on_iteration(m)
    diverged = ~np.isfinite(error).all(axis=-1) | ~np.isfinite(beta).all(axis=(1, 3))
    return DzoaResult(
        error=np.transpose(error, (1, 0, 2)),
        beta=np.transpose(beta, (2, 0, 1, 3)),
        diverged=np.transpose(diverged, (1, 0)),
        perturbation=np.transpose(perturbation, (2, 0, 3, 1)),
    )


def _checked_degree(
    X: np.ndarray, graph: np.ndarray, step_scale: np.ndarray, rngs: Sequence[Sequence[np.random.Generator]]
) -> np.ndarray:
    """Each agent's degree d_k in ``graph``, once the shapes of ``step_scale`` and ``rngs`` fit ``X``."""
    n_trials, n_agents = X.shape[:2]
    n_settings = step_scale.shape[0]
    if step_scale.shape != (n_settings, n_trials, n_agents):
        raise ValueError(f"step_scale must have shape (C, {n_trials}, {n_agents}); got {step_scale.shape}")
    if len(rngs) != n_trials or any(len(row) != n_agents for row in rngs):
        raise ValueError(f"rngs must hold {n_trials} rows of {n_agents} generators (one per trial and agent)")
    degree = graph.sum(axis=1)
    if np.any(degree == 0):
        raise ValueError("every agent needs at least one neighbour in the graph")
    return degree


class _LocalProblems(NamedTuple):
    """What every outer iteration of :func:`dzoa` shares: the agents' F_k and the inner step schedules.

    ``quad`` (B, K, P, P) and ``lin0`` (B, K, P) are the quadratic and the data's linear part of F_k;
    ``u1_t``, ``u2_t`` (T,) the smoothing and ``step_t`` (T, B, K, C, 1) the step alpha_t of Algorithm 1.
    """

    graph: np.ndarray
    degree: np.ndarray
    rho: float
    quad: np.ndarray
    lin0: np.ndarray
    agent_l1_weight: float
    n_directions: int
    u1_t: np.ndarray
    u2_t: np.ndarray
    step_t: np.ndarray


def _local_problems(
    X: np.ndarray,
    y: np.ndarray,
    graph: np.ndarray,
    degree: np.ndarray,
    step_scale: np.ndarray,
    *,
    rho: float,
    l1_weight: float,
    loss_scale: float,
    lipschitz: float,
    smoothing: float,
    n_directions: int,
    n_inner: int,
) -> _LocalProblems:
    """Each agent's F_k (its quadratic part) and the inner iterations' smoothing and step sizes."""
    n_agents, P, T = X.shape[1], X.shape[-1], n_inner
    # Quadratic part of F_k: beta^T A beta + (lin0 + gamma - rho v)^T beta, per trial and agent.
    gram = np.einsum("bknp,bknq->bkpq", X, X)
    quad = loss_scale * gram + rho * degree[None, :, None, None] * np.eye(P)  # s X^T X + rho d_k I
    lin0 = -2.0 * loss_scale * np.einsum("bknp,bkn->bkp", X, y)  # from s ||X beta - y||^2
    agent_l1_weight = l1_weight / n_agents  # (34): (eta / K) ||beta||_1 at each agent
    t_index = np.arange(1, T + 1, dtype=float)
    u1_t = smoothing / t_index  # Algorithm 1: u_{1,t} = u1 / t
    u2_t = smoothing / (P * t_index) ** 2  # u_{2,t} = u1 / (P t)^2
    # alpha_t = alpha0 R / (L sqrt(t P ln 2P)); state axes are (B, K, C, P).
    step_base = np.transpose(step_scale, (1, 2, 0))[..., None] / (lipschitz * math.sqrt(P * math.log(2 * P)))
    step_t = step_base[None] / np.sqrt(t_index)[:, None, None, None, None]
    return _LocalProblems(graph, degree, rho, quad, lin0, agent_l1_weight, n_directions, u1_t, u2_t, step_t)


class _ProbeBuffers(NamedTuple):
    """The inner iterations' arrays, allocated once: the directions and the evaluation points of (9).

    The first evaluation point of (9) for all J directions is one matrix product per (trial, agent):
    ``state`` [beta, 1] @ ``to_shifted`` [[E], [u1 nu1]], where E (P x PJ) copies beta_p into the columns
    (p, j) for every j; only the last row changes between steps. Columns are ordered (p, j). ``inner`` is
    the inner iterate, a view of ``state``.
    """

    directions: np.ndarray
    to_shifted: np.ndarray
    state: np.ndarray
    inner: np.ndarray
    shifted: np.ndarray
    probed: np.ndarray


def _probe_buffers(n_trials: int, n_agents: int, n_settings: int, P: int, J: int, T: int) -> _ProbeBuffers:
    """Allocate the buffers for B trials, K agents, C settings, P features, J directions and T steps."""
    directions = np.empty((n_trials, n_agents, T, 2, J, P))
    copy_rows = np.repeat(np.eye(P), J, axis=1)
    to_shifted = np.empty((n_trials, n_agents, T, P + 1, P * J))
    to_shifted[..., :P, :] = copy_rows
    state = np.ones((n_trials, n_agents, n_settings, P + 1))  # [inner iterate, 1]
    inner = state[..., :P]
    shifted = np.empty((n_trials, n_agents, n_settings, P * J))
    probed = np.empty_like(shifted)
    return _ProbeBuffers(directions, to_shifted, state, inner, shifted, probed)


def _outer_iteration(
    problem: _LocalProblems,
    probes: _ProbeBuffers,
    beta: np.ndarray,
    gamma: np.ndarray,
    rngs: Sequence[Sequence[np.random.Generator]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One outer iteration m: the local zeroth-order minimisations, then the duals (20).

    Returns beta^(m), gamma^(m) and ``||xi_k^(m)||``, the distance of each shared iterate to the exact
    local update.
    """
    graph, degree, rho = problem.graph, problem.degree, problem.rho
    v = degree[None, :, None, None] * beta + np.einsum("kl,blcp->bkcp", graph, beta)
    lin = problem.lin0[:, :, None, :] + gamma - rho * v
    beta = _local_minimisation(problem, probes, lin, rngs)
    # xi_k^(m) = beta_k^(m) - beta_k_breve^(m) (15)/(19): the shared iterate minus the exact
    # minimizer of the same F_k (gamma^(m-1), v^(m-1) frozen); no random numbers are drawn.
    exact = exact_local_minimizer(problem.quad, lin, problem.agent_l1_weight, beta)
    perturbation = np.sqrt(np.sum((beta - exact) ** 2, axis=-1))
    gamma = gamma + rho * (
        degree[None, :, None, None] * beta - np.einsum("kl,blcp->bkcp", graph, beta)
    )  # (20)
    return beta, gamma, perturbation


def _local_minimisation(
    problem: _LocalProblems,
    probes: _ProbeBuffers,
    lin: np.ndarray,
    rngs: Sequence[Sequence[np.random.Generator]],
) -> np.ndarray:
    """T zeroth-order steps (11) on every F_k from a cold start with fresh directions; the last iterate."""
    n_trials, n_agents, T, _, J, P = probes.directions.shape
    quad, u1_t, u2_t = problem.quad, problem.u1_t, problem.u2_t
    for b in range(n_trials):
        for k in range(n_agents):
            rngs[b][k].standard_normal(out=probes.directions[b, k])  # nu1, nu2 ~ N(0, I_P), J pairs per step
    nu1, nu2 = probes.directions[:, :, :, 0], probes.directions[:, :, :, 1]  # (B, K, T, J, P)
    second = np.matmul(np.swapaxes(nu2, -1, -2), nu2) / J  # S_t
    a_nu2 = np.matmul(nu2, quad[:, :, None])  # A nu2_j (A symmetric)
    weights = 2.0 * u1_t[:, None] * np.einsum("bktjp,bktjp->bktj", nu1, a_nu2)
    weights += u2_t[:, None] * np.einsum("bktjp,bktjp->bktj", nu2, a_nu2)
    offset = np.matmul(weights[..., None, :], nu2)[..., 0, :] / J  # r_t
    slope = 2.0 * np.matmul(quad[:, :, None], second)  # 2 A S_t
    constant = np.matmul(lin[:, :, None], second) + offset[:, :, :, None, :]  # b^T S_t + r_t
    shift = u1_t[:, None, None] * np.swapaxes(nu1, -1, -2)  # u_{1,t} nu1, as (P, J)
    probes.to_shifted[..., P, :] = shift.reshape(n_trials, n_agents, T, P * J)
    probe = (u2_t[:, None, None] * np.swapaxes(nu2, -1, -2)).reshape(n_trials, n_agents, T, 1, P * J)
    l1_scale = problem.agent_l1_weight / (u2_t * J)
    state, inner, shifted, probed = probes.state, probes.inner, probes.shifted, probes.probed
    inner[...] = 0.0  # cold start (Algorithm 1, G9)
    for t in range(T):
        np.matmul(state, probes.to_shifted[:, :, t], out=shifted)  # beta + u1 nu1_j, all j
        np.add(shifted, probe[:, :, t], out=probed)  # beta + u1 nu1_j + u2 nu2_j
        np.abs(shifted, out=shifted)
        np.abs(probed, out=probed)
        np.subtract(probed, shifted, out=probed)  # (9), l1 part, per coordinate
        l1_difference = np.einsum("bkcpj->bkcj", probed.reshape(*probed.shape[:3], P, J))
        gradient = np.matmul(l1_difference, nu2[:, :, t])  # (12), l1 part
        gradient *= l1_scale[t]
        gradient += np.matmul(inner, slope[:, :, t])  # (12), quadratic part
        gradient += constant[:, :, t]
        gradient *= problem.step_t[t]
        inner -= gradient  # (11): beta^(t) = beta^(t-1) - alpha_t g^(t)
    return inner.copy()  # last iterate (Algorithm 1)


def normalized_error(estimates: np.ndarray, reference: np.ndarray, *, agent_axis: int) -> np.ndarray:
    """Return ``sum_k ||beta_k - beta^c||^2 / ||beta^c||^2``, the error of note 5.5 (a sum over agents, G15).

    D-ZOA and the DP-ADMM baseline (:mod:`dpdl.algorithms.dzoa_dpadmm`) both report it.

    Parameters
    ----------
    estimates : numpy.ndarray, shape (..., P)
        The agents' estimates beta_k, agents along ``agent_axis``, batch axes (trials, settings) elsewhere.
    reference : numpy.ndarray
        beta^c, broadcastable to ``estimates`` and of size 1 along the agent axis.
    agent_axis : int
        The axis of ``estimates`` that holds the K agents (not the last).

    Returns
    -------
    numpy.ndarray
        The error per batch element: ``estimates``' shape without the agent and P axes.
    """
    squared = np.sum((estimates - reference) ** 2, axis=(agent_axis, -1))
    return squared / np.sum(reference**2, axis=-1).squeeze(axis=agent_axis)
