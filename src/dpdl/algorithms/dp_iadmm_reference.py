"""One iteration of ObjP, ObjT and OutP in plain float64 numpy: the mathematics, and the kernel's oracle.

:func:`dpdl.algorithms.dp_iadmm.run_iadmm` does these steps in float32, chunk by chunk, fused into
one compiled pass (:mod:`dpdl.algorithms.dp_iadmm_kernel`). This module states them one function
per equation of Ryu & Kim (arXiv 2106.06127; ``notes/iadmm.md`` sections 2.1-2.5), looping over
agents, without chunks, padding or replicas. The tests replay a run's noise draws through it and
check that the compiled run follows it iteration by iteration; the benchmark times it as the
straightforward float64 implementation.

State: the server's w (J, K) and the agents' z_p and lambda_p (P, J, K), agents in the order of
the ``agents`` list; w = z = lambda = 0 at the start and t starts at 1. One iteration t:

- ObjP, ObjT: w^{t+1} by (4a); each agent's gradient f'_p(z_p^t) (37) and Laplace scale
  b_p = Delta-bar_p^t / epsilon-bar (20), (11a); z_p^{t+1} by (8) (ObjP) or (9) (ObjT) with
  xi_p = b_p times the agent's unit draws; lambda_p^{t+1} by (4c).
- OutP (Huang et al., note 2.5): z_p^{t+1} by the prox step at the previous w^t plus Gaussian
  output noise of std sigma_p^t (or sigma^2, ``outp_noise``) times the unit draws; then w^{t+1}
  by (4a) and lambda_p^{t+1} by (4c).

The noise enters as unit-scale draws, one (J, K) array per agent, so a caller can feed the same
draws as a run of :func:`~dpdl.algorithms.dp_iadmm.run_iadmm` or any other source.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdl.algorithms.dp_iadmm import IadmmParams
from dpdl.privacy.dp_iadmm import outp_inverse_proximity, outp_noise_std, outp_sensitivity


@dataclass(frozen=True)
class Agent:
    """Agent p's data D_p: ``features`` (I_p, J) float64 and one-hot ``labels`` (I_p, K) float64."""

    features: np.ndarray
    labels: np.ndarray

    @property
    def size(self) -> int:
        """I_p."""
        return len(self.features)


@dataclass(frozen=True)
class State:
    """The iterates after an iteration: w (J, K), z and lam (P, J, K), float64."""

    w: np.ndarray
    z: np.ndarray
    lam: np.ndarray


def agents_from_rows(
    features: np.ndarray, labels: np.ndarray, offsets: np.ndarray, n_classes: int
) -> list[Agent]:
    """Agent p owns rows offsets[p]:offsets[p+1] of ``features`` and ``labels``.

    ``features`` is (I, J); ``labels`` is (I,) (class indices).
    """
    features = np.asarray(features, dtype=np.float64)
    onehot = np.eye(n_classes)[np.asarray(labels)]
    return [
        Agent(features[start:stop], onehot[start:stop])
        for start, stop in zip(offsets[:-1], offsets[1:], strict=True)
    ]


def initial_state(n_agents: int, n_features: int, n_classes: int) -> State:
    """w = z = lambda = 0 (note 7.7)."""
    return State(
        np.zeros((n_features, n_classes)),
        np.zeros((n_agents, n_features, n_classes)),
        np.zeros((n_agents, n_features, n_classes)),
    )


def probabilities(features: np.ndarray, z: np.ndarray) -> np.ndarray:
    """h_k(z; x_i) = exp(x_i z_k) / sum_k' exp(x_i z_k') for every row, shape (I_p, K) (A.8)."""
    scores = features @ z
    scores -= scores.max(axis=1, keepdims=True)  # the shift leaves h unchanged
    h = np.exp(scores)
    h /= h.sum(axis=1, keepdims=True)
    return h


def local_gradient(
    agent: Agent, z: np.ndarray, scale: float, beta: float, n_agents: int, server: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """f'_p(z) = scale sum_i x_pi (h(z; x_pi) - y_pi)^T + (2 beta / P) z (37), and the residuals h - y.

    ``scale`` is the global 1/I of (2c) (ObjP, ObjT) or OutP's agent-average 1/I_p (note 7.5(c)).
    With ``server`` (the server's w^t), the regulariser's gradient is the authors' code's 2 beta w
    instead (OutP's ``outp_regulariser`` code_server_w; issue 40).
    """
    residual = probabilities(agent.features, z) - agent.labels
    if server is not None:  # the authors' src/Functions.py, calculate_gradient: + 2. * par.gamma * par.W_val
        return scale * (agent.features.T @ residual) + 2.0 * beta * server, residual
    return scale * (agent.features.T @ residual) + 2.0 * beta / n_agents * z, residual  # (37)


def outp_gradient(
    agent: Agent, z: np.ndarray, w: np.ndarray, params: IadmmParams, n_agents: int, n_total: int
) -> np.ndarray:
    """OutP's f'_p(z_p^t) under its switches.

    The loss is scaled 1/I_p or 1/I (note 7.5(c)); the regulariser is taken at z_p (37) or at the server's
    w^t (``outp_regulariser``).
    """
    scale = 1.0 / agent.size if params.outp_gradient == "agent_mean" else 1.0 / n_total  # note 7.5(c)
    server = w if params.outp_regulariser == "code_server_w" else None
    return local_gradient(agent, z, scale, params.beta, n_agents, server)[0]  # (37)


def sensitivity(agent: Agent, residual: np.ndarray, n_total: int) -> float:
    """Delta-bar_p^t = max_i sum_jk |x_pij (h_k(z_p^t; x_pi) - y_pik)| / I (20), from the residuals h - y."""
    per_row = np.abs(agent.features).sum(axis=1) * np.abs(residual).sum(axis=1)  # ||x_i||_1 ||h_i - y_i||_1
    return float(per_row.max()) / n_total  # (20)


def worst_case_sensitivity(n_features: int, feature_bound: float, n_total: int) -> float:
    """The replace-one bound 2 (2 max ||x||_1) / I with ||x||_1 <= J ``feature_bound`` (note 7.3)."""
    return 4.0 * n_features * feature_bound / n_total


def server_step(z: np.ndarray, lam: np.ndarray, rho: float) -> np.ndarray:
    """The server's update w^{t+1} (4a).

    w^{t+1} = argmin_w sum_p <lambda_p, w> + rho/2 ||w - z_p||^2 = (1/P) sum_p (z_p - lambda_p / rho).
    """
    return np.mean(z - lam / rho, axis=0)  # (4a)


def objp_step(
    z: np.ndarray,
    lam: np.ndarray,
    w: np.ndarray,
    gradient: np.ndarray,
    xi: np.ndarray,
    rho: float,
    eta: float,
) -> np.ndarray:
    """ObjP's z_p^{t+1} = argmin_z G^t(z) + ||z - z^t||^2 / (2 eta) (8), in closed form.

    G^t(z) = <f'_p(z^t), z> + rho/2 ||w - z + (lambda - xi) / rho||^2 (10); setting the gradient to
    zero gives (rho w + lambda - xi - f'_p(z^t) + z^t / eta) / (rho + 1 / eta).
    """
    return (rho * w + lam - xi - gradient + z / eta) / (rho + 1.0 / eta)  # (8)


def objt_step(
    z: np.ndarray,
    lam: np.ndarray,
    w: np.ndarray,
    gradient: np.ndarray,
    xi: np.ndarray,
    rho: float,
    radius: float,
) -> np.ndarray:
    """ObjT's z_p^{t+1} = argmin of G^t (10) over ||z - z^t||_inf <= delta (9), in closed form.

    G^t is an isotropic separable quadratic with minimiser w + (lambda - xi - f'_p(z^t)) / rho, so
    its minimiser over the infinity-norm box (6b) is that point clipped to the box around z^t.
    """
    unconstrained = w + (lam - xi - gradient) / rho  # argmin of (10)
    return np.clip(unconstrained, z - radius, z + radius)  # (9)


def dual_step(lam: np.ndarray, w: np.ndarray, z_next: np.ndarray, rho: float) -> np.ndarray:
    """lambda_p^{t+1} = lambda_p^t + rho (w^{t+1} - z_p^{t+1}) (4c)."""
    return lam + rho * (w - z_next)  # (4c)


def outp_step(
    z: np.ndarray, lam: np.ndarray, w: np.ndarray, gradient: np.ndarray, rho: float, inverse_eta: float
) -> np.ndarray:
    """OutP's local output before its noise, at the server's previous w^t (note 2.5, step 1).

    argmin_z <f'_p(z^t) - lambda, z> + rho/2 ||w - z||^2 + ||z - z^t||^2 / (2 eta-hat), in closed
    form (rho w + lambda - f'_p(z^t) + z^t / eta-hat) / (rho + 1 / eta-hat); ``inverse_eta`` is
    1 / eta-hat_p^t.
    """
    return (rho * w + lam - gradient + z * inverse_eta) / (rho + inverse_eta)  # note 2.5 step 1


def trust_radius(params: IadmmParams, t: int) -> float:
    """ObjT's delta^t (note 7.1).

    a (the authors' code, ``code_const``) or a / t^2 (A.11, ``paper_inv_t2``).
    """
    return params.a if params.trust_radius == "code_const" else params.a / t**2


def iteration(
    state: State, agents: Sequence[Agent], params: IadmmParams, t: int, unit_noise: np.ndarray | None
) -> State:
    """Iteration t of ``params.algorithm`` from ``state`` (the iterates after iteration t - 1).

    Parameters
    ----------
    state : State
    agents : sequence of Agent
    params : IadmmParams
        The algorithm, epsilon-bar, penalty schedule, a, beta, delta-bar and switches (as the run's).
    t : int
        The iteration, >= 1.
    unit_noise : numpy.ndarray, shape (P, J, K), or None
        Unit-scale draws (Laplace for ObjP and ObjT, Gaussian for OutP), agent p's in row p;
        ignored (may be None) when the run is non-private.

    Returns
    -------
    State
        w^{t+1}, z^{t+1} and lambda^{t+1}.
    """
    if params.private:
        unit_noise = np.asarray(unit_noise, dtype=np.float64)  # float32 draws must not make xi float32
    rho = params.penalty(t, params.epsilon)  # (21)
    if params.algorithm == "outp":
        return outp_iteration(state, agents, params, t, rho, unit_noise)
    return objective_perturbation_iteration(state, agents, params, t, rho, unit_noise)


def objective_perturbation_iteration(
    state: State,
    agents: Sequence[Agent],
    params: IadmmParams,
    t: int,
    rho: float,
    unit_noise: np.ndarray | None,
) -> State:
    """ObjP (Algorithm 1) or ObjT (Algorithm 2): server (4a) -> agents (8) or (9) -> duals (4c)."""
    n_agents, n_total = len(agents), sum(agent.size for agent in agents)
    z_next, lam_next = np.empty_like(state.z), np.empty_like(state.lam)
    w = server_step(state.z, state.lam, rho)  # (4a)
    for p, agent in enumerate(agents):
        # (37), (2c)
        gradient, residual = local_gradient(agent, state.z[p], 1.0 / n_total, params.beta, n_agents)
        xi = np.zeros_like(gradient)
        if params.private:
            if params.sensitivity == "eq20":
                delta_bar = sensitivity(agent, residual, n_total)
            else:
                delta_bar = worst_case_sensitivity(state.w.shape[0], params.feature_bound, n_total)
            # (11a): i.i.d. Laplace with b = Delta-bar / epsilon-bar
            xi = delta_bar / params.epsilon * unit_noise[p]
        if params.algorithm == "objp":
            eta = params.a / math.sqrt(t)  # A.11: eta^t = a / sqrt(t)
            z_next[p] = objp_step(state.z[p], state.lam[p], w, gradient, xi, rho, eta)
        else:
            z_next[p] = objt_step(state.z[p], state.lam[p], w, gradient, xi, rho, trust_radius(params, t))
        lam_next[p] = dual_step(state.lam[p], w, z_next[p], rho)  # (4c)
    return State(w, z_next, lam_next)


def outp_iteration(
    state: State,
    agents: Sequence[Agent],
    params: IadmmParams,
    t: int,
    rho: float,
    unit_noise: np.ndarray | None,
) -> State:
    """OutP (Huang et al., note 2.5): one iteration.

    The agents' prox step at w^t plus Gaussian noise -> server (4a) -> duals (4c).
    """
    n_agents, n_total = len(agents), sum(agent.size for agent in agents)
    n_params = state.w.size  # J K
    z_next, lam_next = np.empty_like(state.z), np.empty_like(state.lam)
    for p, agent in enumerate(agents):
        gradient = outp_gradient(agent, state.z[p], state.w, params, n_agents, n_total)  # (37)
        inverse_eta = outp_inverse_proximity(
            t, params.epsilon, params.delta, n_samples=agent.size, n_params=n_params, a=params.a
        )  # 1 / eta-hat_p^t (note 2.5)
        z_next[p] = outp_step(state.z[p], state.lam[p], state.w, gradient, rho, inverse_eta)
        if params.private:
            output_sensitivity = outp_sensitivity(rho, inverse_eta, n_samples=agent.size)
            std = outp_noise_std(
                params.epsilon, params.delta, sensitivity=output_sensitivity, outp_noise=params.outp_noise
            )
            z_next[p] += std * unit_noise[p]  # note 2.5 step 2: Gaussian output perturbation
    w = server_step(z_next, state.lam, rho)  # (4a), after the agents (note 7.5(d))
    for p in range(n_agents):
        lam_next[p] = dual_step(state.lam[p], w, z_next[p], rho)  # (4c)
    return State(w, z_next, lam_next)
