"""DP-ADMM, dzoa's baseline (note 4.3-4.4): its step and noise schedules and one batched call.

The batched call runs the algorithm over trials and settings. The tuning step and the runs share both.
"""

from __future__ import annotations

import numpy as np

from dpdl.studies.dzoa._inputs import agent_rngs
from dpdl.studies.dzoa.grid import GRADIENT_BOUND, loss_scale


def dpadmm_schedules(
    values: dict, epsilon: float, delta: float, samples: int, penalties, prox_steps
) -> tuple[np.ndarray, np.ndarray]:
    """DP-ADMM's inverse proximal step and noise std per (setting, m) (note 4.3-4.4).

    The inverse proximal step is 1 / eta_m = sqrt(m) / eta0.

    ``penalties`` (rho) and ``prox_steps`` (eta0) give one setting each; returns two (settings, M) arrays.
    """
    from dpdl.privacy.dp_iadmm import outp_noise_std, outp_sensitivity

    n_outer = values["outer_iterations"]
    iterations = np.arange(1, n_outer + 1)
    # eta_m = eta0 / sqrt(m)
    inverse_prox_step = np.sqrt(iterations)[None, :] / np.asarray(prox_steps, dtype=float)[:, None]
    noise_std = np.array(
        [
            [
                outp_noise_std(
                    epsilon,
                    delta,
                    sensitivity=outp_sensitivity(rho, inverse, n_samples=samples, c1=GRADIENT_BOUND),
                    outp_noise="sigma",
                    constant=float(values["dpadmm_gauss_constant"]),
                )
                for inverse in row
            ]
            for rho, row in zip(penalties, inverse_prox_step, strict=True)
        ]
    )
    return inverse_prox_step, noise_std


def dpadmm_batch(
    values: dict, X, y, beta_c, trials: list[int], samples: int, penalties, inverse_prox_step, noise_std
):
    """DP-ADMM on ``trials`` (one generator per agent and trial), one setting per row of the schedules."""
    from dpdl.algorithms.dzoa_dpadmm import dp_admm

    return dp_admm(
        X,
        y,
        beta_c,
        [agent_rngs("dpadmm", t, X.shape[1]) for t in trials],
        penalty=np.array(penalties, dtype=float),
        inverse_prox_step=inverse_prox_step,
        noise_std=noise_std,
        l1_weight=values["eta"],
        loss_scale=loss_scale(values, samples),
    )
