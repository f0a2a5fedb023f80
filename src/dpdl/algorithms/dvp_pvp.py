"""Zhang & Zhu's network ADMM: non-private (Algorithm 1), DVP (Algorithm 2) and PVP (Algorithm 3).

Equation numbers are J(n) for the journal version (seed 000) and C(n) for the conference version
(seed 003); section and gap numbers refer to ``notes/zhang_zhu.md``. All nodes update
synchronously and every step is vectorised over nodes. Time indexing follows G7 and G16: loop
index t = 0..T computes the iterates of time t + 1 with noise drawn at that step; the step at
t = T is the "final iteration" (for PVP the one DVP step of J(21)-(23), for the others one more
identical step), so a run stores f_p(0..T+1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpdl.algorithms.dvp_pvp_network import NodeData, node_losses, solve_local
from dpdl.privacy.dvp_pvp import (
    DvpCalibration,
    DvpZetaMode,
    dvp_calibration,
    dvp_jacobian_budget,
    pvp_noise_rate,
)
from dpdl.privacy.samplers import norm_exponential

Algorithm = Literal["nonprivate", "dvp", "pvp"]
PvpCenter = Literal["paper", "plain"]
Init = Literal["random", "zeros"]
ALGORITHMS: tuple[Algorithm, ...] = ("nonprivate", "dvp", "pvp")
PVP_CENTERS: tuple[PvpCenter, ...] = ("paper", "plain")
INITS: tuple[Init, ...] = ("random", "zeros")
DVP_ZETA_MODES: tuple[DvpZetaMode, ...] = ("alpha_hat_half", "alpha_hat")
# Iterates whose pooled-data error rates are computed in one matrix product (memory bound).
EVALUATION_CHUNK = 16
EVALUATION_DTYPE = np.float32  # margins of the error rates (only their sign matters)


@dataclass(frozen=True)
class AdmmSettings:
    """Every parameter of one network-ADMM run.

    Attributes
    ----------
    algorithm : {"nonprivate", "dvp", "pvp"}
        Algorithm 1, 2 or 3.
    rho : float
        rho > 0, the weight of R(f) = ||f||^2 / 2 in each node's objective (Table 1).
    c_r : float
        C^R > 0, the loss scaling (Table 2).
    eta : float
        eta > 0, the ADMM penalty (not given in the paper; G14).
    iterations : int
        T = t_s >= 1, the intermediate iterations before the final one (G16).
    alpha : float or None
        alpha_p(t) > 0, the per-iteration privacy of every node (constant over t and nodes, A5);
        None for the non-private algorithm.
    dvp_zeta_mode : {"alpha_hat_half", "alpha_hat"}
        DVP's noise rate (G1): alpha-hat / 2 (the proof of Theorem 1) or alpha-hat (the box).
    pvp_center : {"paper", "plain"}
        PVP's neighbour centre (G5): 1/2 (f_p(t) + V_i(t) - eps_p(t)) as printed, or without
        the node's own previous noise.
    init : {"random", "zeros"}
        f_p(0) ~ N(0, init_scale^2 I) from the node's generator, or zeros (G8).
    init_scale : float
        Standard deviation of the random initialisation, >= 0.
    """

    algorithm: Algorithm
    rho: float
    c_r: float
    eta: float
    iterations: int
    alpha: float | None = None
    dvp_zeta_mode: DvpZetaMode = "alpha_hat_half"
    pvp_center: PvpCenter = "paper"
    init: Init = "random"
    init_scale: float = 0.1

    def __post_init__(self) -> None:
        for name, allowed in (
            ("algorithm", ALGORITHMS),
            ("dvp_zeta_mode", DVP_ZETA_MODES),
            ("pvp_center", PVP_CENTERS),
            ("init", INITS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        for name in ("rho", "c_r", "eta"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be in (0, inf); got {value!r}")
        if isinstance(self.iterations, bool) or int(self.iterations) != self.iterations:
            raise ValueError(f"iterations must be an integer >= 1; got {self.iterations!r}")
        if self.iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1; got {self.iterations!r}")
        if (self.algorithm == "nonprivate") != (self.alpha is None):
            raise ValueError(
                f"alpha must be None for the non-private algorithm and > 0 for DVP and PVP; got "
                f"algorithm {self.algorithm!r} with alpha {self.alpha!r}"
            )
        if self.alpha is not None and not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be in (0, inf); got {self.alpha!r}")
        if not (self.init_scale >= 0 and math.isfinite(self.init_scale)):
            raise ValueError(f"init_scale must be in [0, inf); got {self.init_scale!r}")


@dataclass(frozen=True)
class Calibration:
    """The noise calibration of every node of a private run (constant over iterations).

    Attributes
    ----------
    dvp : tuple of DvpCalibration
        Per node: DVP's alpha-hat, Phi, zeta and branch, used at every DVP step and at PVP's
        final step (with PVP's rho and C^R, G6); empty for the non-private algorithm.
    pvp_zeta : numpy.ndarray
        (P,) PVP's broadcast noise rate rho B_p alpha / (2 C^R); empty unless PVP.
    jacobian_budget : numpy.ndarray
        (P,) alpha-bar_0 = 2 ln(1 + c1 C^R / (B_p (rho + 2 eta N_p))) of each node, the part of
        alpha that DVP's Jacobian term costs (J(30)), for the calibration table (empty for the
        non-private algorithm).
    """

    dvp: tuple[DvpCalibration, ...]
    pvp_zeta: np.ndarray
    jacobian_budget: np.ndarray

    @property
    def dvp_zeta(self) -> np.ndarray:
        """(P,) DVP noise rates."""
        return np.array([node.zeta for node in self.dvp])

    @property
    def phi(self) -> np.ndarray:
        """(P,) DVP extra ridge coefficients Phi_p (0 in the no-ridge branch)."""
        return np.array([node.phi for node in self.dvp])


@dataclass(frozen=True)
class AdmmResult:
    """A finished run: every iterate, what was broadcast, the noise and the solver's record.

    Arrays are indexed by time t = 0..T+1 first and node second.

    Attributes
    ----------
    f : numpy.ndarray
        (T+2, P, d) primal iterates f_p(t) (for PVP the unperturbed ones).
    broadcast : numpy.ndarray
        (T+2, P, d) what each node sent its neighbours: f_p(t), or V_p(t) for PVP before its
        final step.
    noise_norm : numpy.ndarray
        (T+2, P) ||eps_p(t)|| of the noise drawn for time t (0 where none was drawn).
    dual_norm : numpy.ndarray
        (T+2, P) ||lambda_p(t)||.
    inner_iterations, inner_hessians, inner_grad_norm : numpy.ndarray
        (T+2, P) Newton steps, Hessian evaluations and final gradient norm of the local
        minimisation that produced time t (0 at t = 0).
    inner_converged : numpy.ndarray
        (T+2, P) whether that step met the solver's tolerance.
    calibration : Calibration
        The nodes' noise calibration.
    settings : AdmmSettings
        The run's parameters.
    """

    f: np.ndarray
    broadcast: np.ndarray
    noise_norm: np.ndarray
    dual_norm: np.ndarray
    inner_iterations: np.ndarray
    inner_hessians: np.ndarray
    inner_grad_norm: np.ndarray
    inner_converged: np.ndarray
    calibration: Calibration
    settings: AdmmSettings

    @property
    def converged(self) -> bool:
        """Whether every local minimisation met its tolerance."""
        return bool(self.inner_converged.all())


def calibrate(settings: AdmmSettings, sizes: np.ndarray, degrees: np.ndarray) -> Calibration:
    """Return every node's noise calibration for ``settings`` (see :class:`Calibration`).

    Parameters
    ----------
    settings : AdmmSettings
        The run's parameters.
    sizes : numpy.ndarray
        (P,) B_p.
    degrees : numpy.ndarray
        (P,) N_p.

    Returns
    -------
    Calibration
        DVP calibration per node for DVP and PVP (PVP uses it at its final step), PVP's
        broadcast noise rate per node for PVP.
    """
    if settings.algorithm == "nonprivate":
        return Calibration((), np.array([]), np.array([]))
    dvp = tuple(
        dvp_calibration(
            settings.alpha,
            n_samples=int(size),
            c_r=settings.c_r,
            rho=settings.rho,
            eta=settings.eta,
            n_neighbours=int(degree),
            dvp_zeta_mode=settings.dvp_zeta_mode,
        )
        for size, degree in zip(sizes, degrees, strict=True)
    )
    jacobian_budget = np.array(
        [
            dvp_jacobian_budget(
                n_samples=int(size),
                c_r=settings.c_r,
                rho=settings.rho,
                eta=settings.eta,
                n_neighbours=int(degree),
            )
            for size, degree in zip(sizes, degrees, strict=True)
        ]
    )
    pvp_zeta = np.array([])
    if settings.algorithm == "pvp":
        pvp_zeta = np.array(
            [
                pvp_noise_rate(settings.alpha, rho=settings.rho, n_samples=int(size), c_r=settings.c_r)
                for size in sizes
            ]
        )
    return Calibration(dvp, pvp_zeta, jacobian_budget)


def run_admm(
    data: NodeData,
    adjacency: np.ndarray,
    settings: AdmmSettings,
    *,
    rngs: Sequence[np.random.Generator],
    progress: Callable[[int], None] | None = None,
) -> AdmmResult:
    """Run Algorithm 1, 2 or 3 on the nodes' shards over the given graph.

    Parameters
    ----------
    data : NodeData
        The nodes' training shards (P nodes, d features).
    adjacency : numpy.ndarray
        (P, P) symmetric boolean adjacency of a connected graph.
    settings : AdmmSettings
        The run's parameters.
    rngs : sequence of numpy.random.Generator
        One generator per node (spawned children of the run's seed); node p draws its random
        initialisation and all its noise from ``rngs[p]``.
    progress : callable, optional
        Called with the number of finished steps (of ``iterations + 1``) after every step (for logging).

    Returns
    -------
    AdmmResult
        Iterates f_p(0..T+1), broadcasts, noise norms, dual norms and the solver's record.
    """
    n_nodes, dim = data.n_nodes, data.dim
    adjacency = np.asarray(adjacency, dtype=bool)
    if adjacency.shape != (n_nodes, n_nodes) or not (adjacency == adjacency.T).all():
        raise ValueError(f"adjacency must be a symmetric ({n_nodes}, {n_nodes}) matrix")
    if len(rngs) != n_nodes:
        raise ValueError(f"rngs must hold one generator per node ({n_nodes}); got {len(rngs)}")
    neighbours = adjacency.astype(float)
    degree = adjacency.sum(axis=1).astype(float)
    if (degree == 0).any():
        raise ValueError(f"every node needs a neighbour; nodes {np.flatnonzero(degree == 0)} have none")
    calibration = calibrate(settings, data.sizes, degree)
    eta, steps = settings.eta, settings.iterations + 1
    noise_scale = (settings.c_r / (2.0 * data.sizes))[:, np.newaxis]  # C^R / (2 B_p) of J(14)

    f = _initial_iterates(settings, rngs, dim)
    dual = np.zeros((n_nodes, dim))  # lambda_p(0) = 0
    sent = f.copy()  # V_p(0) = f_p(0) for PVP (G7)
    own_noise = np.zeros((n_nodes, dim))  # eps_p(0) = 0 (G7)
    record = _Record(steps + 1, n_nodes, dim)
    record.store(0, f, sent, np.zeros(n_nodes), dual, None)
    factors, previous_ridge = None, None
    for t in range(steps):
        final = t == steps - 1
        if settings.algorithm == "nonprivate":
            centres = degree[:, np.newaxis] * f + neighbours @ f
            linear = 2.0 * dual - eta * centres  # J(9): 2 lambda^T f + eta sum ||f - (f_p + f_i)/2||^2
            ridge = settings.rho + 2.0 * eta * degree
            noise = np.zeros((n_nodes, dim))
        elif settings.algorithm == "dvp" or final:
            noise = _draw(rngs, calibration.dvp_zeta, dim)
            perturbed_dual = dual + noise_scale * noise  # J(14): mu = lambda + C^R/(2 B_p) eps
            # PVP's final step sees its neighbours' V_i(t_s) and its own f_p(t_s) (G6)
            centres = degree[:, np.newaxis] * f + neighbours @ (f if settings.algorithm == "dvp" else sent)
            linear = 2.0 * perturbed_dual - eta * centres  # J(13), with (Phi/2)||f||^2 in the ridge
            ridge = settings.rho + calibration.phi + 2.0 * eta * degree
        else:
            centres = degree[:, np.newaxis] * f + neighbours @ sent
            if settings.pvp_center == "paper":
                centres -= degree[:, np.newaxis] * own_noise  # 1/2 (f_p(t) + V_i(t) - eps_p(t)), G5
            linear = 2.0 * dual - eta * centres  # PVP Lagrangian (C(22) with (11))
            ridge = settings.rho + 2.0 * eta * degree
            noise = np.zeros((n_nodes, dim))
        if previous_ridge is None or not np.array_equal(ridge, previous_ridge):
            factors = None  # Hessian factorisations are reused only for the same problem shape
        solution = solve_local(data, c_r=settings.c_r, ridge=ridge, linear=linear, start=f, factors=factors)
        f, factors, previous_ridge = solution.f, solution.factors, ridge  # J(10) / J(15) / J(18)
        if settings.algorithm == "pvp" and not final:
            noise = _draw(rngs, calibration.pvp_zeta, dim)
            own_noise = noise
            sent = f + noise  # J(19): V_p(t+1) = f_p(t+1) + eps_p(t+1)
        else:
            sent = f
        dual = dual + 0.5 * eta * (degree[:, np.newaxis] * sent - neighbours @ sent)  # J(11)/(16)/(20)
        record.store(t + 1, f, sent, np.linalg.norm(noise, axis=1), dual, solution)
        if progress is not None:
            progress(t + 1)
    return record.result(calibration, settings)


def _initial_iterates(settings: AdmmSettings, rngs: Sequence[np.random.Generator], dim: int) -> np.ndarray:
    if settings.init == "zeros":
        return np.zeros((len(rngs), dim))
    # Algorithm 1: "Randomly initialize f_p" (G8: N(0, init_scale^2 I), seeded per node)
    return np.stack([settings.init_scale * rng.standard_normal(dim) for rng in rngs])


def _draw(rngs: Sequence[np.random.Generator], zeta: np.ndarray, dim: int) -> np.ndarray:
    # density proportional to exp(-zeta_p ||e||), one fresh draw per node and iteration (G7)
    return np.stack(
        [norm_exponential(rng=rng, zeta=z, d=dim, size=1)[0] for rng, z in zip(rngs, zeta, strict=True)]
    )


class _Record:
    """Per-time arrays filled while a run advances."""

    def __init__(self, times: int, n_nodes: int, dim: int) -> None:
        self.f = np.zeros((times, n_nodes, dim))
        self.broadcast = np.zeros((times, n_nodes, dim))
        self.noise_norm = np.zeros((times, n_nodes))
        self.dual_norm = np.zeros((times, n_nodes))
        self.inner_iterations = np.zeros((times, n_nodes), dtype=int)
        self.inner_hessians = np.zeros((times, n_nodes), dtype=int)
        self.inner_grad_norm = np.zeros((times, n_nodes))
        self.inner_converged = np.ones((times, n_nodes), dtype=bool)

    def store(self, t, f, broadcast, noise_norm, dual, solution) -> None:
        self.f[t], self.broadcast[t], self.noise_norm[t] = f, broadcast, noise_norm
        self.dual_norm[t] = np.linalg.norm(dual, axis=1)
        if solution is not None:
            self.inner_iterations[t] = solution.iterations
            self.inner_hessians[t] = solution.hessians
            self.inner_grad_norm[t] = solution.grad_norm
            self.inner_converged[t] = solution.converged

    def result(self, calibration: Calibration, settings: AdmmSettings) -> AdmmResult:
        return AdmmResult(
            self.f,
            self.broadcast,
            self.noise_norm,
            self.dual_norm,
            self.inner_iterations,
            self.inner_hessians,
            self.inner_grad_norm,
            self.inner_converged,
            calibration,
            settings,
        )


def iterate_losses(iterates: np.ndarray, data: NodeData) -> np.ndarray:
    """Return each node's per-sample training loss of its own iterate, shape (times, P) (G21).

    Parameters
    ----------
    iterates : numpy.ndarray
        (times, P, d) iterates (f or V of an :class:`AdmmResult`).
    data : NodeData
        The nodes' shards.
    """
    return np.stack([node_losses(f, data) for f in iterates])


def iterate_error_rates(iterates: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return the misclassification rate of every node's iterate on (x, y), shape (times, P).

    Parameters
    ----------
    iterates : numpy.ndarray
        (times, P, d) iterates.
    x : numpy.ndarray
        (n, d) evaluation rows (the pooled training rows, or adult.test rows, G19).
    y : numpy.ndarray
        (n,) labels in {-1, +1}.

    Notes
    -----
    A prediction is sign(f^T x); a zero margin counts as an error (as ``dpdl.models.logistic``).
    The margins y f^T x are computed in float32 (``EVALUATION_DTYPE``), about 2x faster for the
    (times x P) iterates of a run; only rows within float32 rounding of the decision boundary
    can differ from a float64 evaluation.
    """
    times, n_nodes, dim = iterates.shape
    flat = iterates.reshape(times * n_nodes, dim).astype(EVALUATION_DTYPE)
    signed = (np.asarray(x) * np.asarray(y, dtype=float)[:, np.newaxis]).astype(EVALUATION_DTYPE)
    errors = np.empty(times * n_nodes)
    width = EVALUATION_CHUNK * n_nodes
    for start in range(0, len(flat), width):
        margins = signed @ flat[start : start + width].T
        errors[start : start + width] = np.count_nonzero(margins <= 0, axis=0) / len(signed)
    return errors.reshape(times, n_nodes)
