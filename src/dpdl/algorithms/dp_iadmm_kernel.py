"""The compiled inner loop of DP-IADMM: one pass over a chunk's state per iteration (numba).

Everything a chunk of agents does in an iteration after its loss gradient, the gradient's beta
term, the noise's scale, the local step, the dual step and the sums over agents, is one compiled
pass over its float32 state (:func:`fused_step`): numpy would make about 13 passes. Each replica
draws a chunk's unit-scale noise in one call from its own generator (agents in size order,
:func:`draw_noise`), so a replica's trajectory does not depend on the other replicas of its job
(up to the float32 rounding of sums over agents). :mod:`dpdl.algorithms.dp_iadmm_reference`
states the same iteration in plain float64 numpy, the oracle the tests compare this kernel with.
Equation numbers are Ryu & Kim's (arXiv 2106.06127); sections refer to ``notes/iadmm.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numba
import numpy as np

from dpdl.algorithms.dp_iadmm_data import DTYPE

ALGORITHM_CODES = {"objp": 0, "objt": 1, "outp": 2}  # the ``algorithm`` argument of :func:`fused_step`


@numba.njit(cache=True)
def fused_step(
    algorithm,
    z,
    lam,
    w,
    loss_gradient,
    feature_row,
    beta_term,
    regularise_server,
    noise,
    noise_scale,
    rho,
    inverse_rho,
    radius,
    inverse_eta,
    objp_factor,
    dual_rho,
    new,
    sum_new,
    sum_lam,
):
    """One iteration's elementwise work for a chunk of agents, in one compiled pass over their state.

    For every agent p, feature j, replica b and class k, with the gradient of (37)
    f'_p = loss_gradient[p, feature_row[j]] (zero where feature_row[j] < 0) + beta_term z_p
    (+ beta_term w when ``regularise_server``: OutP's ``outp_regulariser`` code_server_w):

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
                    server = w[j, b, k]
                    # (37): (2 beta / P) z, or the authors' code's 2 gamma w (src/Functions.py), plus ...
                    gradient = (server if regularise_server else z_old) * beta_term
                    if row >= 0:
                        gradient = gradient + loss_gradient[a, row, b, k]  # ... (1/I) sum x (h - y)
                    xi = noise[b, a, j, k] * noise_scale[a, b] if private else np.float32(0.0)
                    dual = lam[a, j, b, k]
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
