"""Privacy calibration of Gratton et al.'s D-ZOA (intrinsic zeroth-order noise, no added noise).

Equation numbers are the paper's (seed 004); section and gap numbers refer to ``notes/dzoa.md``.
Symbols: d_k = |N_k| (neighbours, excluding k: gap G5), N_k samples, P parameters, J directions
per step, T inner iterations, M outer iterations, step constant alpha0 R (only the product
enters). Each outer iteration is modelled as a Gaussian mechanism (25), so it is
``PrivacyEvent("gaussian", classical_gaussian_noise_multiplier(epsilon, delta, constant=2.1))``.
"""

from __future__ import annotations

import math

from dpdl.privacy import _checks

GAUSSIAN_CONSTANT = 2.1  # Theorem 1 uses sqrt(2.1 ln(1.25/delta)) instead of Dwork & Roth's 2
DIRECTION_CONSTANT = 0.5  # c in Duchi et al.'s Lemma 2 for Gaussian directions [P]


def dzoa_sensitivity(*, rho: float, n_neighbours: int, n_samples: int, c1: float = 1.0) -> float:
    """Return Delta_{k,2}, the l2 sensitivity of agent k's exact ADMM update to one sample.

    Parameters
    ----------
    rho : float
        ADMM penalty, > 0 (4 in the paper).
    n_neighbours : int
        d_k, >= 1.
    n_samples : int
        N_k, >= 1 (20 in the paper).
    c1 : float
        Bound on the per-sample loss gradient norm, > 0 (1 in the paper).

    Returns
    -------
    float
        c1 / (rho d_k N_k).

    Notes
    -----
    References: Gratton et al., Lemma 3, (24); dzoa.md section 3.2.
    """
    rho = _checks.positive("rho", rho)
    n_neighbours = _checks.count("n_neighbours", n_neighbours)
    n_samples = _checks.count("n_samples", n_samples)
    c1 = _checks.positive("c1", c1)
    return c1 / (rho * n_neighbours * n_samples)  # (24)


def dzoa_variance_constant(*, n_params: int, n_inner: int, c: float = DIRECTION_CONSTANT) -> float:
    """Return C = c (s1 (1 + ln P) + s2) / ln(2P), the constant of D-ZOA's noise-variance bound.

    Parameters
    ----------
    n_params : int
        P, the number of parameters, >= 1 (10 in the paper).
    n_inner : int
        T, the number of inner iterations, >= 1 (100 in the paper).
    c : float
        Constant of Duchi et al.'s second-moment bound, > 0 (0.5 for Gaussian directions).

    Returns
    -------
    float
        C, with s1 = sum_{t<=T} 1/t and s2 = sum_{t<=T} t^(-3/2); 3.2621 for P = 10, T = 100.

    Notes
    -----
    References: Gratton et al., Lemma 2, (22), with the sums to T of the main text (App. B sums
    to T - 1, giving 3.2564; dzoa.md gap G7).
    """
    n_params = _checks.count("n_params", n_params)
    n_inner = _checks.count("n_inner", n_inner)
    c = _checks.positive("c", c)
    s1 = math.fsum(1.0 / t for t in range(1, n_inner + 1))
    s2 = math.fsum(t**-1.5 for t in range(1, n_inner + 1))
    return c * (s1 * (1.0 + math.log(n_params)) + s2) / math.log(2.0 * n_params)  # (22)


def dzoa_epsilon_per_iteration(
    step_scale: float,
    delta: float,
    *,
    n_neighbours: int,
    n_samples: int,
    n_params: int,
    beta_c_sq_norm: float,
    rho: float,
    n_directions: int = 30,
    n_inner: int = 100,
    c1: float = 1.0,
    c: float = DIRECTION_CONSTANT,
) -> float:
    """Return agent k's per-outer-iteration epsilon implied by the step constant alpha0 R.

    Parameters
    ----------
    step_scale : float
        alpha0 R, > 0.
    delta : float
        Per-iteration delta in (0, 1); the paper's tail bound needs delta <= 0.01.
    n_neighbours : int
        d_k, >= 1.
    n_samples : int
        N_k, >= 1.
    n_params : int
        P, >= 1.
    beta_c_sq_norm : float
        ||beta^c||^2 of the centralized solution, >= 0 (data-dependent, as in the paper).
    rho : float
        ADMM penalty, > 0.
    n_directions : int
        J, direction pairs per inner step (30 in the paper).
    n_inner : int
        T, inner iterations (100).
    c1, c : float
        Gradient bound (1) and direction constant (0.5), > 0.

    Returns
    -------
    float
        epsilon = c1 / (rho d_k N_k) sqrt(2.1 J P ln(1.25/delta)) / sqrt(C (alpha0 R)^2 -
        4 ||beta^c||^2 / T); ``math.inf`` when the bracket is <= 0 (the variance bound then
        certifies no noise at all).

    Notes
    -----
    References: Gratton et al., Corollary 1, (27); dzoa.md sections 3.4 and 3.6: the value is
    nominal (CLT model, upper bound on the variance used where a lower bound is needed).
    """
    step_scale = _checks.positive("step_scale", step_scale)
    delta = _checks.open_unit("delta", delta)
    n_directions = _checks.count("n_directions", n_directions)
    beta_c_sq_norm = _checks.nonnegative("beta_c_sq_norm", beta_c_sq_norm)
    sensitivity = dzoa_sensitivity(rho=rho, n_neighbours=n_neighbours, n_samples=n_samples, c1=c1)
    constant = dzoa_variance_constant(n_params=n_params, n_inner=n_inner, c=c)
    bracket = constant * step_scale**2 - 4.0 * beta_c_sq_norm / n_inner
    if bracket <= 0:
        return math.inf
    spread = math.sqrt(GAUSSIAN_CONSTANT * n_directions * n_params * math.log(1.25 / delta))
    return sensitivity * spread / math.sqrt(bracket)  # (27)


def dzoa_step_scale(
    epsilon: float,
    delta: float,
    *,
    n_neighbours: int,
    n_samples: int,
    n_params: int,
    beta_c_sq_norm: float,
    rho: float,
    n_directions: int = 30,
    n_inner: int = 100,
    c1: float = 1.0,
    c: float = DIRECTION_CONSTANT,
) -> float:
    """Return the step constant alpha0 R that makes (27) equal the target per-iteration epsilon.

    Parameters
    ----------
    epsilon : float
        Target per-iteration epsilon in (0, inf]; ``inf`` gives the floor sqrt(4 ||beta^c||^2 /
        (T C)), below which (27) is undefined (D-ZOA has no non-private setting).
    delta, n_neighbours, n_samples, n_params, beta_c_sq_norm, rho, n_directions, n_inner, c1, c
        As in :func:`dzoa_epsilon_per_iteration`.

    Returns
    -------
    float
        alpha0 R = sqrt((c1^2 2.1 J P ln(1.25/delta) / (rho^2 d_k^2 N_k^2 epsilon^2) +
        4 ||beta^c||^2 / T) / C). Smaller epsilon gives a larger step, hence more noise.

    Notes
    -----
    References: Gratton et al., (27) solved for alpha0 R ("we calculate alpha0 according to (27)",
    section VI); dzoa.md section 3.5.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    n_directions = _checks.count("n_directions", n_directions)
    beta_c_sq_norm = _checks.nonnegative("beta_c_sq_norm", beta_c_sq_norm)
    sensitivity = dzoa_sensitivity(rho=rho, n_neighbours=n_neighbours, n_samples=n_samples, c1=c1)
    constant = dzoa_variance_constant(n_params=n_params, n_inner=n_inner, c=c)
    spread_sq = GAUSSIAN_CONSTANT * n_directions * n_params * math.log(1.25 / delta)
    noise_term = (sensitivity / epsilon) ** 2 * spread_sq
    return math.sqrt((noise_term + 4.0 * beta_c_sq_norm / n_inner) / constant)  # (27) inverted


def dzoa_noise_std(
    epsilon: float, delta: float, *, rho: float, n_neighbours: int, n_samples: int, c1: float = 1.0
) -> float:
    """Return sigma_k, the per-coordinate noise std making one outer iteration (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Per-iteration epsilon in (0, inf]; ``inf`` gives 0.
    delta : float
        Per-iteration delta in (0, 1).
    rho, n_neighbours, n_samples, c1
        As in :func:`dzoa_sensitivity`.

    Returns
    -------
    float
        c1 sqrt(2.1 ln(1.25/delta)) / (rho d_k N_k epsilon).

    Notes
    -----
    References: Gratton et al., Theorem 1, (25) = (28); dzoa.md section 3.2.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    sensitivity = dzoa_sensitivity(rho=rho, n_neighbours=n_neighbours, n_samples=n_samples, c1=c1)
    return sensitivity * math.sqrt(GAUSSIAN_CONSTANT * math.log(1.25 / delta)) / epsilon  # (25)


def dzoa_total_epsilon(epsilon: float, delta: float, *, n_outer: int) -> float:
    """Return epsilon-bar, the paper's moments-accountant total over M outer iterations.

    Parameters
    ----------
    epsilon : float
        Per-iteration epsilon in (0, inf].
    delta : float
        Delta in (0, 1), the same per iteration and in total as in the paper.
    n_outer : int
        M, outer iterations, >= 1 (200 in the paper).

    Returns
    -------
    float
        epsilon sqrt(M ln(1/delta) / (1.05 ln(1.25/delta))); 13.5837 epsilon at delta = 1e-3 and
        13.6912 epsilon at delta = 1e-6 for M = 200.

    Notes
    -----
    References: Gratton et al., Theorem 2, (29), following Huang et al.'s Theorem 2; dzoa.md
    section 3.2. A leading-order formula; compare it with :func:`composed_epsilon` of M Gaussian
    events, which is the accountant's bound.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    n_outer = _checks.count("n_outer", n_outer)
    return epsilon * math.sqrt(n_outer * math.log(1.0 / delta) / (1.05 * math.log(1.25 / delta)))  # (29)


def dzoa_epsilon_for_total(epsilon_total: float, delta: float, *, n_outer: int) -> float:
    """Return the per-iteration epsilon whose total (29) is ``epsilon_total``.

    Parameters
    ----------
    epsilon_total : float
        epsilon-bar in (0, inf].
    delta : float
        Delta in (0, 1).
    n_outer : int
        M, >= 1.

    Returns
    -------
    float
        epsilon-bar / sqrt(M ln(1/delta) / (1.05 ln(1.25/delta))).

    Notes
    -----
    References: Gratton et al., (29) inverted (Fig. 3a's x-axis is epsilon-bar); dzoa.md 8.1.
    """
    epsilon_total = _checks.positive("epsilon_total", epsilon_total, allow_inf=True)
    return epsilon_total / dzoa_total_epsilon(1.0, delta, n_outer=n_outer)
