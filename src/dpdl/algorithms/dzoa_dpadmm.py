"""DP-ADMM (Huang et al., TIFS 2020), the baseline of Gratton et al., adapted to distributed lasso.

Section numbers refer to ``notes/dzoa.md`` (4.3, 4.4). Star topology: K agents and a server,
consensus ``w_i = z``. Iteration m = 1..M, from w~ = z = lambda = 0:

- local step, the loss linearised at the released iterate with a scalar proximity 1 / eta_m,
  ``w_i = (w~_i / eta_m + rho z + lambda_i - grad f_i(w~_i)) / (1 / eta_m + rho)``, with the
  subgradient ``grad f_i(w) = 2 s X_i^T (X_i w - y_i) + (eta / K) sign(w)``;
- output perturbation ``w~_i = w_i + xi_i``, ``xi_i ~ N(0, sigma_m^2 I)``;
- server ``z = (1/K) sum_i (w~_i - lambda_i / rho)``;
- dual ``lambda_i += rho (z - w~_i)``.

Two etas meet here: Huang et al.'s proximal step eta_m (``inverse_prox_step`` holds 1 / eta_m)
and Gratton et al.'s lasso l1 weight eta (``l1_weight``). The schedule 1 / eta_m and the noise
std sigma_m are inputs (calibrated with ``dpdl.privacy.outp_sensitivity`` and
``outp_noise_std``). Noise is drawn per (trial, agent) and shared by every setting of a batch
(common random numbers), so hyperparameter tuning and the privacy grid run as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdl.algorithms.dzoa import normalized_error


@dataclass(frozen=True)
class DpAdmmResult:
    """Outcome of a batch of DP-ADMM runs (S settings x B trials).

    Attributes
    ----------
    error : numpy.ndarray, shape (S, B, M + 1)
        Normalized error of the released local estimates w~_k (G13), K at m = 0.
    server_error : numpy.ndarray, shape (S, B, M + 1)
        The same metric with every agent's estimate replaced by the server's z.
    diverged : numpy.ndarray, shape (S, B)
        True where an iterate became non-finite.
    """

    error: np.ndarray
    server_error: np.ndarray
    diverged: np.ndarray


def dp_admm(
    X: np.ndarray,
    y: np.ndarray,
    beta_c: np.ndarray,
    rngs: Sequence[Sequence[np.random.Generator]],
    *,
    penalty: np.ndarray,
    inverse_prox_step: np.ndarray,
    noise_std: np.ndarray,
    l1_weight: float,
    loss_scale: float,
) -> DpAdmmResult:
    """Run DP-ADMM for S settings on B trials at once.

    Parameters
    ----------
    X : numpy.ndarray, shape (B, K, N_k, P)
        Each trial's features, split by agent.
    y : numpy.ndarray, shape (B, K, N_k)
        Responses.
    beta_c : numpy.ndarray, shape (B, P)
        Centralized solutions (for the error only).
    rngs : sequence of sequence of numpy.random.Generator
        ``rngs[b][k]`` draws agent k's noise in trial b (shared by the S settings).
    penalty : numpy.ndarray, shape (S,)
        rho_DP of each setting.
    inverse_prox_step : numpy.ndarray, shape (S, M)
        1 / eta_m, the inverse proximal step of each setting and iteration.
    noise_std : numpy.ndarray, shape (S, M)
        sigma_m of each setting and iteration (0 for a non-private run).
    l1_weight : float
        Gratton et al.'s eta, the lasso's l1 weight (split as eta / K per agent).
    loss_scale : float
        s of f_k (dzoa.md G1): 1 or 1 / N_k.

    Returns
    -------
    DpAdmmResult
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n_trials, n_agents, _, n_params = X.shape
    n_settings, n_outer = inverse_prox_step.shape
    if penalty.shape != (n_settings,) or noise_std.shape != (n_settings, n_outer):
        raise ValueError(
            f"penalty must have shape ({n_settings},) and noise_std ({n_settings}, {n_outer}); "
            f"got {penalty.shape} and {noise_std.shape}"
        )
    if len(rngs) != n_trials or any(len(row) != n_agents for row in rngs):
        raise ValueError(f"rngs must hold {n_trials} rows of {n_agents} generators (one per trial and agent)")
    gram = 2.0 * loss_scale * np.einsum("bknp,bknq->bkpq", X, X)
    target = 2.0 * loss_scale * np.einsum("bknp,bkn->bkp", X, y)
    agent_l1_weight = l1_weight / n_agents  # (34): (eta / K) ||w||_1 at each agent
    noise = np.empty((n_trials, n_agents, n_outer, n_params))
    for b in range(n_trials):
        for k in range(n_agents):
            rngs[b][k].standard_normal(out=noise[b, k])  # xi / sigma ~ N(0, I_P) per iteration
    rho = penalty[:, None, None, None]
    released = np.zeros((n_settings, n_trials, n_agents, n_params))  # w~
    dual = np.zeros_like(released)  # lambda
    server = np.zeros((n_settings, n_trials, n_params))  # z
    error = np.empty((n_settings, n_trials, n_outer + 1))
    server_error = np.empty_like(error)
    error[..., 0], server_error[..., 0] = _errors(released, server, beta_c)
    with np.errstate(over="ignore", invalid="ignore"):
        for m in range(n_outer):
            subgradient = (
                np.einsum("bkpq,sbkq->sbkp", gram, released) - target + agent_l1_weight * np.sign(released)
            )
            proximity = inverse_prox_step[:, m, None, None, None]
            local = (proximity * released + rho * server[:, :, None] + dual - subgradient) / (
                proximity + rho
            )  # 4.3 local
            released = local + noise_std[:, m, None, None, None] * noise[None, :, :, m]  # output perturbation
            server = np.mean(released - dual / rho, axis=2)  # server average of perturbed primal and dual
            dual = dual + rho * (server[:, :, None] - released)  # dual ascent
            error[..., m + 1], server_error[..., m + 1] = _errors(released, server, beta_c)
    diverged = ~np.isfinite(error).all(axis=-1)
    return DpAdmmResult(error=error, server_error=server_error, diverged=diverged)


def _errors(released, server, beta_c) -> tuple[np.ndarray, np.ndarray]:
    """The error of note 5.5 for the released local estimates and for z counted K times.

    The local estimates are (S, B, K, P); z is (S, B, P).
    """
    local = normalized_error(released, beta_c[None, :, None, :], agent_axis=2)
    central = released.shape[2] * np.sum((server - beta_c) ** 2, axis=-1) / np.sum(beta_c**2, axis=-1)
    return local, central
