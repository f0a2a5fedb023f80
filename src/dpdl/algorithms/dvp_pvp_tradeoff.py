"""Zhang & Zhu's privacy-accuracy trade-off model and its optimal alpha (zhang_zhu.md 4.1, O4-O6).

The experiments section fits the empirical loss at a fixed iteration as a function of the
per-iteration privacy alpha by L_acc(alpha) = a exp(-b alpha) + c (the papers' c4, c5, c6; J
inline, C(30)), defines the privacy utility U_priv(alpha) = w1 ln(w2 / (w3 alpha + w4 alpha^2))
(C(29)) and chooses alpha by minimising J(alpha) = L_acc(alpha) - U_priv(alpha) subject to
alpha_L <= alpha <= alpha_U and L_acc(alpha) <= c3 (C(27), (28)).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

# [PAPER] J Fig. 4 / C Figs 5-6 captions: omega_p1..omega_p4 of U_priv.
UTILITY_WEIGHTS = (0.02, 6.0, 9.0, 1.0)
# [PAPER] fitted constants (a, b) = (c4, c5): DVP 0.2, 25; PVP 20, 20 (c6 is data-dependent, G22).
PAPER_AMPLITUDE_DECAY = {"dvp": (0.2, 25.0), "pvp": (20.0, 20.0)}
ALPHA_UPPER = 1.0  # [PAPER] alpha_U of C(27)
LOSS_CAP = 0.135  # [PAPER] c3 of C(27): L_acc(alpha) <= c3
# Points of the grid scanned for sign changes of J' before each root is polished with brentq.
SCAN_POINTS = 20_001
FIT_MAX_EVALUATIONS = 20_000


def accuracy_curve(alpha: np.ndarray | float, a: float, b: float, c: float) -> np.ndarray | float:
    """Return L_acc(alpha) = a exp(-b alpha) + c (C(30))."""
    return a * np.exp(-b * np.asarray(alpha, dtype=float)) + c


def privacy_utility(
    alpha: np.ndarray | float, weights: tuple[float, float, float, float] = UTILITY_WEIGHTS
) -> np.ndarray | float:
    """Return U_priv(alpha) = w1 ln(w2 / (w3 alpha + w4 alpha^2)) (C(29)), alpha > 0."""
    alpha = np.asarray(alpha, dtype=float)
    w1, w2, w3, w4 = weights
    return w1 * np.log(w2 / (w3 * alpha + w4 * alpha**2))


def tradeoff_objective(
    alpha: np.ndarray | float,
    a: float,
    b: float,
    c: float,
    weights: tuple[float, float, float, float] = UTILITY_WEIGHTS,
) -> np.ndarray | float:
    """Return J(alpha) = L_acc(alpha) - U_priv(alpha) (C(27))."""
    return accuracy_curve(alpha, a, b, c) - privacy_utility(alpha, weights)


@dataclass(frozen=True)
class CurveFit:
    """A least-squares fit of L_acc(alpha) = a exp(-b alpha) + c.

    Attributes
    ----------
    a, b, c : float
        The fitted constants (NaN when the fit failed).
    a_se, b_se, c_se : float
        Their standard errors from the fit's covariance (NaN when undetermined, e.g. with three
        or fewer points).
    points : int
        Number of (alpha, loss) points fitted.
    ok : bool
        Whether the fit converged.
    message : str
        Why it failed, if it did.
    """

    a: float
    b: float
    c: float
    a_se: float
    b_se: float
    c_se: float
    points: int
    ok: bool
    message: str = ""


def fit_accuracy_curve(alphas: np.ndarray, losses: np.ndarray) -> CurveFit:
    """Fit a exp(-b alpha) + c with a, b, c >= 0 to the points (alpha, loss) (G22 (i)).

    Parameters
    ----------
    alphas : numpy.ndarray
        Privacy levels alpha > 0.
    losses : numpy.ndarray
        Empirical losses at those alphas (means over seeds).

    Returns
    -------
    CurveFit
        Constants, standard errors and whether the fit converged.

    Notes
    -----
    Unweighted nonlinear least squares (``scipy.optimize.curve_fit``, trust-region reflective
    with bounds). Start: c at the smallest loss, a at the range of the losses, b = 10.
    """
    alphas = np.asarray(alphas, dtype=float)
    losses = np.asarray(losses, dtype=float)
    if alphas.shape != losses.shape or alphas.ndim != 1:
        raise ValueError(f"alphas and losses must be 1-d of equal length; got {alphas.shape}, {losses.shape}")
    if len(alphas) < 3:
        return CurveFit(*(math.nan,) * 6, len(alphas), False, "fewer than 3 points for 3 constants")
    start = (max(losses.max() - losses.min(), 1e-12), 10.0, max(losses.min(), 0.0))
    try:
        with warnings.catch_warnings():
            # with 3 points the covariance is undetermined: the standard errors are then NaN
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            params, covariance = optimize.curve_fit(
                accuracy_curve,
                alphas,
                losses,
                p0=start,
                bounds=([0.0, 0.0, 0.0], [np.inf] * 3),
                maxfev=FIT_MAX_EVALUATIONS,
            )
    except (RuntimeError, ValueError) as err:
        return CurveFit(*(math.nan,) * 6, len(alphas), False, str(err))
    errors = np.sqrt(np.diag(covariance)) if np.all(np.isfinite(covariance)) else np.full(3, math.nan)
    return CurveFit(*map(float, params), *map(float, errors), len(alphas), True)


@dataclass(frozen=True)
class OptimalAlpha:
    """The optimal alpha of C(27)/(28) for one set of constants (a, b, c).

    Attributes
    ----------
    stationary : float
        The interior local minimum of J on (alpha_L, alpha_U] from the corrected first-order
        condition w1 (w3 + 2 w4 alpha) = a b (w3 alpha + w4 alpha^2) exp(-b alpha), the one with
        the smallest J if there are several; NaN if J has no interior local minimum there.
    constrained : float
        argmin J over [alpha_L, alpha_U] with L_acc(alpha) <= c3; NaN when infeasible.
    objective : float
        J at ``stationary`` (NaN if none).
    feasible : bool
        Whether some alpha in [alpha_L, alpha_U] has L_acc(alpha) <= c3.
    """

    stationary: float
    constrained: float
    objective: float
    feasible: bool


def optimal_alpha(
    a: float,
    b: float,
    c: float,
    *,
    lower: float,
    upper: float = ALPHA_UPPER,
    loss_cap: float = LOSS_CAP,
    weights: tuple[float, float, float, float] = UTILITY_WEIGHTS,
) -> OptimalAlpha:
    """Return the optimal alpha of the trade-off problem for constants (a, b, c).

    Parameters
    ----------
    a, b, c : float
        L_acc's constants (c4, c5, c6).
    lower : float
        alpha_L > 0 (not given in the paper; the smallest alpha of the grid, O6).
    upper : float
        alpha_U (paper 1).
    loss_cap : float
        c3 (paper 0.135).
    weights : tuple of float
        U_priv's omega_p1..omega_p4.

    Returns
    -------
    OptimalAlpha
        The stationary (first-order condition) and the constrained optimum.

    Notes
    -----
    J'(alpha) = h(alpha) / (w3 alpha + w4 alpha^2) with
    h(alpha) = w1 (w3 + 2 w4 alpha) - a b (w3 alpha + w4 alpha^2) exp(-b alpha), so J' has the
    sign of h. C prints the condition with w3 - 2 w4 alpha (a sign typo, zhang_zhu.md 4.1); the
    corrected one is used. Roots of h are bracketed on a grid of ``SCAN_POINTS`` and polished with
    ``brentq``; local minima are where h changes from - to +.
    """
    if not 0 < lower < upper:
        raise ValueError(f"need 0 < lower < upper; got lower {lower!r}, upper {upper!r}")
    if not all(math.isfinite(v) for v in (a, b, c)):
        return OptimalAlpha(math.nan, math.nan, math.nan, False)
    w1, _, w3, w4 = weights

    def slope_sign(alpha: np.ndarray | float) -> np.ndarray | float:
        return w1 * (w3 + 2 * w4 * alpha) - a * b * (w3 * alpha + w4 * alpha**2) * np.exp(-b * alpha)

    grid = np.linspace(lower, upper, SCAN_POINTS)
    signs = slope_sign(grid)
    minima = []
    for k in np.flatnonzero((signs[:-1] < 0) & (signs[1:] >= 0)):
        minima.append(optimize.brentq(slope_sign, grid[k], grid[k + 1], xtol=1e-14))
    objective = lambda alpha: tradeoff_objective(alpha, a, b, c, weights)  # noqa: E731
    stationary = min(minima, key=objective) if minima else math.nan
    candidates = np.concatenate([grid, minima, [lower, upper]])
    feasible = candidates[accuracy_curve(candidates, a, b, c) <= loss_cap]
    constrained = float(feasible[np.argmin(objective(feasible))]) if len(feasible) else math.nan
    return OptimalAlpha(
        float(stationary),
        constrained,
        float(objective(stationary)) if minima else math.nan,
        bool(len(feasible)),
    )
