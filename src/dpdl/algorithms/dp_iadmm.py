"""Ryu & Kim's DP-IADMM (ObjP, ObjT), the OutP baseline of Huang et al., and the non-private run.

Consensus ADMM with one server and P agents on multinomial logistic regression without bias
(``dpdl.models.softmax``). Every local step is solved in closed form from one full-batch gradient
per agent per iteration; w = z = lambda = 0 at the start; the time index t starts at 1. Equation
numbers are the paper's (arXiv 2106.06127); section numbers refer to ``notes/iadmm.md``.

- ObjP (Algorithm 1): server (4a) -> agents (8), Laplace noise in the objective -> duals (4c).
- ObjT (Algorithm 2): as ObjP with the infinity-norm trust region (9) instead of the proximal term.
- OutP (Huang et al.'s DP-ADMM, note 2.5): agents (prox step with eta-hat) -> Gaussian noise on the
  output -> server -> duals. OutP+ is OutP with rho / 100 (a ``PenaltySchedule`` factor).
- The non-private run is ObjP (or ObjT, by the study's ``nonprivate_algorithm``) with epsilon-bar = inf:
  no noise and rho without the c2 term.

This module holds the parameters, :func:`run_iadmm` and the minimiser of (1). The implementation
details live beside it: the agents' data in padded float32 chunks, with the gradient (37), the
sensitivity (20) and the objective (1) computed from them, in :mod:`dpdl.algorithms.dp_iadmm_data`;
the compiled pass that does a chunk's local and dual steps, and the noise layout it reads, in
:mod:`dpdl.algorithms.dp_iadmm_kernel`; and the same iteration in plain float64 numpy, one
function per equation, the oracle the tests replay runs against, in
:mod:`dpdl.algorithms.dp_iadmm_reference`.

Speed: all state is float32 with shape (P, J, B, K): agents, features, replicas (the seeds of a
job, which share the data so each matrix product reads the data once for all of them), classes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from dpdl.algorithms.dp_iadmm_data import (
    DTYPE,
    FederatedData,
    chunk_loss_gradients,
    chunk_sensitivities,
)
from dpdl.algorithms.dp_iadmm_objective import training_objective
from dpdl.checkpoint import Checkpoint, generator_states, restore_generators
from dpdl.models import softmax
from dpdl.privacy.dp_iadmm import (
    OUTP_DELTA,
    PENALTY_MAX,
    iadmm_penalty,
    objp_laplace_scale,
    objp_sensitivity,
    outp_inverse_proximity,
    outp_noise_std,
    outp_sensitivity,
)
from dpdl.privacy.samplers import gaussian, laplace

BETA = 1e-6  # regularisation weight beta of (1) [P section 4, "as in [10]"]

Algorithm = Literal["objp", "objt", "outp"]
ALGORITHMS: tuple[str, ...] = ("objp", "objt", "outp")
TRUST_RADII = ("code_const", "paper_inv_t2")  # note 7.1
OUTP_NOISES = ("variance", "sigma")  # note 7.5(b)
SENSITIVITIES = ("eq20", "worst_case")  # note 7.3
OUTP_GRADIENTS = ("agent_mean", "global_mean")  # note 7.5(c)
OUTP_REGULARISERS = ("eq37", "code_server_w")  # issue 40: the authors' code regularises at the server's w
TRACE_COLUMNS = (
    "iteration",
    "test_error",
    "train_cost",
    "noise_magnitude",
    "noise_scale",
    "sensitivity",
    "cv_sum",
    "cv_mean_agent",
    "z_change",
    "rho",
)


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
        return self.factor * iadmm_penalty(
            t, epsilon, c1=self.c1, c2=self.c2, t_c=self.t_c, rho_max=self.rho_max
        )

    def over(self, iterations: int, epsilon: float) -> np.ndarray:
        """rho^t for t = 1, ..., T, float64, evaluated once per period of t_c iterations.

        (21) moves only when floor(t / t_c) does; each value is :meth:`__call__`'s, the number the loop gets.
        """
        t = np.arange(1, iterations + 1)
        period = t // self.t_c
        starts = np.flatnonzero(np.r_[True, period[1:] != period[:-1]])
        values = np.array([self(int(t[s]), epsilon) for s in starts], dtype=np.float64)
        return np.repeat(values, np.diff(np.r_[starts, iterations]))


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
    outp_regulariser : {"eq37", "code_server_w"}
        OutP's gradient of the regulariser: (37)'s (2 beta / P) z_p (default), or the authors'
        code's 2 beta w at the server's w^t (``src/Functions.py``, ``calculate_gradient``:
        ``+ 2. * par.gamma * par.W_val``; found by replaying their code, issue 40).
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
    outp_regulariser: str = "eq37"
    feature_bound: float = 1.0

    def __post_init__(self) -> None:
        for name, allowed in (
            ("algorithm", ALGORITHMS),
            ("trust_radius", TRUST_RADII),
            ("outp_noise", OUTP_NOISES),
            ("sensitivity", SENSITIVITIES),
            ("outp_gradient", OUTP_GRADIENTS),
            ("outp_regulariser", OUTP_REGULARISERS),
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
    (B, P, J, K) in the original agent order; ``noise_multipliers[t-1]`` is the smallest noise
    scale / sensitivity over agents at iteration t (1/epsilon-bar for ObjP/ObjT; sigma_p^t /
    Delta_p^t for OutP; 0 when non-private), identical for every replica; ``finite`` is False if
    any logged value was not finite (the run is never stopped early).
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


# --- the server's and the duals' steps outside the kernel ----------------------------------------


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


def dual_update(lam: np.ndarray, w: np.ndarray, z: np.ndarray, rho: float, work: np.ndarray) -> np.ndarray:
    """lambda_p += rho (w^{t+1} - z_p^{t+1}) in place (4c); returns ``lam``."""
    np.subtract(w, z, out=work)
    work *= np.float32(rho)
    lam += work  # (4c)
    return lam


def outp_calibration(
    params: IadmmParams, t: int | np.ndarray, rho: float | np.ndarray, sizes: np.ndarray, n_params: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OutP's 1/eta-hat_p^t, output sensitivity and Gaussian std for each agent size I_p (note 2.5).

    Returns three arrays shaped like ``sizes``; the std is sigma or sigma^2 by ``params.outp_noise``. With
    ``t`` and ``rho`` arrays of T iterations (a run's schedule at once), each array is (T, len(sizes)).
    """
    inverse_eta, sensitivity, std = [], [], []
    for n in sizes:
        inverse = outp_inverse_proximity(
            t, params.epsilon, params.delta, n_samples=int(n), n_params=n_params, a=params.a
        )
        inverse_eta.append(inverse)
        sensitivity.append(outp_sensitivity(rho, inverse, n_samples=int(n)))
        std.append(
            outp_noise_std(
                params.epsilon, params.delta, sensitivity=sensitivity[-1], outp_noise=params.outp_noise
            )
        )
    return tuple(np.stack(v, axis=-1) for v in (inverse_eta, sensitivity, std))


_laplace_scales = np.vectorize(objp_laplace_scale, otypes=[np.float64])  # (11a), per agent and replica


def fused_constants(
    params: IadmmParams, t: int | np.ndarray, rho: float | np.ndarray, previous_rho: float | None
) -> dict[str, np.float32]:
    """The float32 scalars of :func:`fused_step` at iteration t (rho = rho^t; OutP's previous rho or None).

    With arrays of iterations and their rho, float32 arrays (a run's schedule at once).
    """
    inverse_eta = np.sqrt(t) / params.a  # ObjP: eta = a / sqrt(t) (A.11); t may be an array of iterations
    radius = params.a if params.trust_radius == "code_const" else params.a / t**2  # ObjT's delta (note 7.1)
    dual_rho = previous_rho if params.algorithm == "outp" and previous_rho is not None else 0.0
    values = {
        "rho": rho,
        "inverse_rho": 1.0 / rho,
        "radius": radius,
        "inverse_eta": inverse_eta,
        "objp_factor": 1.0 / (rho + inverse_eta),
        "dual_rho": dual_rho,
    }
    return {name: np.float32(value) for name, value in values.items()}


def run_iadmm(
    data: FederatedData,
    params: IadmmParams,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    *,
    rngs: Sequence[np.random.Generator],
    progress: Callable[[int], None] | None = None,
    checkpoint: Checkpoint | None = None,
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
    checkpoint : dpdl.checkpoint.Checkpoint, optional
        Resume from its file when it holds this run's state, and save the state to it every
        ``checkpoint.every_s`` seconds; the result is the uninterrupted run's, bit for bit.

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
    from dpdl.algorithms import dp_iadmm_kernel  # numba: the JAX path needs none

    run = _start_run(data, params, test_features, test_labels, list(rngs), dp_iadmm_kernel)
    saved = None if checkpoint is None else checkpoint.load()
    start = 0 if saved is None else _resume(run, saved)
    for t in range(start + 1, params.iterations + 1):
        _iteration(run, t)
        if progress is not None:
            progress(t)
        if checkpoint is not None and t < params.iterations and checkpoint.due():
            _save(run, t, checkpoint)
    return _result(run)


@dataclass
class _Run:
    """One :func:`run_iadmm` call: what its iterations share (set up once) and its state between iterations.

    The state (``z``, ``lam``, ``w``, the agents' sums, the trace ``log``, ``multipliers``, the next trace
    ``row``, OutP's ``previous_rho``) is what a checkpoint saves; the rest is fixed by the data and params.
    """

    data: FederatedData
    params: IadmmParams
    test_features: np.ndarray
    test_labels: np.ndarray
    rngs: list[np.random.Generator]
    kernel: object  # dpdl.algorithms.dp_iadmm_kernel (numba), imported by run_iadmm
    outp: bool
    regularise_server: bool
    beta_term: np.float32
    grad_scale: np.ndarray
    worst_case: float | np.ndarray | None
    unique_sizes: np.ndarray
    size_index: np.ndarray
    log_points: np.ndarray
    work: np.ndarray
    noise_buffer: np.ndarray
    z: np.ndarray
    lam: np.ndarray
    z_next: np.ndarray
    w: np.ndarray
    sums: dict[str, np.ndarray]
    log: dict[str, np.ndarray]
    multipliers: np.ndarray
    row: int = 0
    previous_rho: float | None = None

    @property
    def replicas(self) -> int:
        return len(self.rngs)


def _start_run(
    data: FederatedData,
    params: IadmmParams,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    rngs: list[np.random.Generator],
    kernel,
) -> _Run:
    """Check the inputs; the run's constants (gradient scales, sensitivity, log points) and zero state."""
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
    outp = params.algorithm == "outp"
    regularise_server = outp and params.outp_regulariser == "code_server_w"
    if regularise_server:
        beta_term = np.float32(2.0 * params.beta)  # the authors' code: + 2 gamma W (src/Functions.py) at w^t
    else:
        beta_term = np.float32(2.0 * params.beta / n_agents)  # (37): the gradient of (2 beta / P) ||z||^2
    sums = {key: np.zeros(z.shape[1:], dtype=DTYPE) for key in ("z", "lam", "next_z", "next_lam")}
    w = np.zeros(z.shape[1:], dtype=DTYPE)
    sizes = data.sizes.astype(np.float64)
    if outp and params.outp_gradient == "agent_mean":
        grad_scale = 1.0 / sizes  # Huang et al.: the agent-average loss (note 7.5(c))
    else:
        grad_scale = np.full(n_agents, 1.0 / data.n_total)  # (2c): f_p scaled by the global 1/I
    unique_sizes, size_index = np.unique(data.sizes, return_inverse=True)
    log_points = logged_iterations(params.iterations, params.log_every)
    log = {name: np.full((len(log_points), replicas), np.nan) for name in TRACE_COLUMNS}
    return _Run(
        data,
        params,
        test_features,
        test_labels,
        rngs,
        kernel,
        outp,
        regularise_server,
        beta_term,
        grad_scale,
        _worst_case_sensitivity(data, params),
        unique_sizes,
        size_index,
        log_points,
        work,
        noise_buffer,
        z,
        lam,
        z_next,
        w,
        sums,
        log,
        np.zeros(params.iterations),
    )


def _worst_case_sensitivity(data: FederatedData, params: IadmmParams) -> float | np.ndarray | None:
    """ObjP/ObjT's replace-one worst-case sensitivity over all rows (``sensitivity: worst_case``), or None."""
    if params.sensitivity != "worst_case":
        return None
    all_l1 = np.concatenate([chunk.feature_l1[chunk.valid] for chunk in data.chunks])
    return objp_sensitivity(
        all_l1,
        np.zeros((len(all_l1), 1)),
        n_total=data.n_total,
        mode="worst_case",
        feature_l1_bound=data.n_features * params.feature_bound,
    )


def _resume(run: _Run, saved: dict[str, np.ndarray]) -> int:
    """Restore the state a checkpoint saved after iteration ``start`` of this very run; return ``start``."""
    start, run.row = int(saved["iteration"]), int(saved["row"])
    run.previous_rho = None if np.isnan(saved["previous_rho"]) else float(saved["previous_rho"])
    for target, name in (
        (run.z, "z"),
        (run.lam, "lam"),
        (run.w, "w"),
        (run.sums["z"], "sum_z"),
        (run.sums["lam"], "sum_lam"),
    ):
        target[...] = saved[name]
    for name in TRACE_COLUMNS:
        run.log[name][...] = saved[f"log_{name}"]
    run.multipliers[...] = saved["multipliers"]
    restore_generators(run.rngs, saved["generators"])
    return start


def _iteration(run: _Run, t: int) -> None:
    """Iteration t: the server step, every chunk's local and dual steps, and the trace row when t is logged.

    ObjP and ObjT take the server step before the agents, OutP after them.
    """
    params, sums = run.params, run.sums
    rho = params.penalty(t, params.epsilon)
    log_now = t == run.log_points[run.row]
    totals = {key: np.zeros(run.replicas) for key in ("noise", "change", "cv", "scale", "sensitivity")}
    step_constants = fused_constants(params, t, rho, run.previous_rho)
    agent_inverse_eta, agent_std = _iteration_calibration(run, t, rho, step_constants, totals)
    sums["next_z"][...] = 0.0
    sums["next_lam"][...] = 0.0
    for chunk in run.data.chunks:
        _chunk_step(run, chunk, step_constants, agent_inverse_eta, agent_std, totals, log_now)
    run.z, run.z_next = run.z_next, run.z
    sums["z"], sums["next_z"] = sums["next_z"], sums["z"]
    sums["lam"], sums["next_lam"] = sums["next_lam"], sums["lam"]
    if run.outp:
        run.w = server_update(
            sums["z"], sums["lam"], rho, run.data.n_agents
        )  # (4a) after the agents (7.5(d))
        run.previous_rho = rho
        if log_now:
            totals["cv"] = np.abs(run.w - run.z).sum(axis=(0, 1, 3), dtype=np.float64)  # A.10
    if log_now:
        _log_row(run, t, rho, totals)


def _iteration_calibration(
    run: _Run, t: int, rho: float, step_constants: dict[str, np.float32], totals: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray | None]:
    """Iteration t's noise multiplier, each agent's 1/eta and OutP's std (else None); ObjP/ObjT's server step.

    OutP's noise scale and sensitivity, the same for every replica, are added to ``totals`` here.
    """
    params, n_agents = run.params, run.data.n_agents
    if run.outp:
        n_params = run.data.n_features * run.data.n_classes
        inverse_eta, sensitivity, std = outp_calibration(params, t, rho, run.unique_sizes, n_params)
        run.multipliers[t - 1] = float(np.min(std / sensitivity)) if params.private else 0.0
        agent_inverse_eta, agent_std = inverse_eta[run.size_index].astype(DTYPE), std[run.size_index]
        totals["scale"] += agent_std.sum()
        totals["sensitivity"] += sensitivity[run.size_index].sum()
        return agent_inverse_eta, agent_std
    run.w = server_update(run.sums["z"], run.sums["lam"], rho, n_agents)  # (4a)
    run.multipliers[t - 1] = 1.0 / params.epsilon  # b / Delta-bar = 1 / epsilon-bar (11a)
    # ObjP's 1/eta, every agent
    return np.full(n_agents, step_constants["inverse_eta"], DTYPE), None


def _chunk_step(
    run: _Run,
    chunk,
    step_constants: dict[str, np.float32],
    agent_inverse_eta: np.ndarray,
    agent_std: np.ndarray | None,
    totals: dict[str, np.ndarray],
    log_now: bool,
) -> None:
    """One chunk of agents in one iteration: loss gradient, noise, local and dual steps, logged sums.

    The local and dual steps are the compiled :func:`fused_step`; the sums are its part of the trace row.
    """
    params, replicas = run.params, run.replicas
    n_features, n_classes = run.data.n_features, run.data.n_classes
    agents = slice(chunk.start, chunk.stop)
    size = chunk.stop - chunk.start
    z_c, lam_c, new_c, work_c = run.z[agents], run.lam[agents], run.z_next[agents], run.work[:size]
    loss_gradient, residual_norms = chunk_loss_gradients(chunk, z_c, run.grad_scale[agents])
    noise, scale = np.zeros((replicas, 0, 0, 0), DTYPE), np.zeros((0, replicas))  # none
    if run.outp and params.private:
        scale = np.repeat(agent_std[agents, None], replicas, axis=1)
        # note 2.5 step 2
        noise = run.kernel.draw_noise(run.rngs, gaussian, (size, n_features, n_classes), run.noise_buffer)
    elif params.private:
        if run.worst_case is None:
            sensitivity = chunk_sensitivities(run.data, chunk, residual_norms)
        else:
            sensitivity = np.full((size, replicas), run.worst_case)
        scale = _laplace_scales(sensitivity, params.epsilon)  # (11a): b = Delta-bar / epsilon-bar
        # (11a): i.i.d. Laplace
        noise = run.kernel.draw_noise(run.rngs, laplace, (size, n_features, n_classes), run.noise_buffer)
        totals["scale"] += scale.sum(axis=0)
        totals["sensitivity"] += sensitivity.sum(axis=0)
    run.kernel.fused_step(
        run.kernel.ALGORITHM_CODES[params.algorithm],
        z_c,
        lam_c,
        run.w,
        loss_gradient,
        chunk.feature_rows,
        run.beta_term,
        run.regularise_server,
        noise,
        scale.astype(DTYPE),
        step_constants["rho"],
        step_constants["inverse_rho"],
        step_constants["radius"],
        agent_inverse_eta[agents],
        step_constants["objp_factor"],
        step_constants["dual_rho"],
        new_c,
        run.sums["next_z"],
        run.sums["next_lam"],
    )
    if log_now:
        totals["noise"] += (np.abs(noise).sum(axis=(2, 3), dtype=np.float64) * scale.T).sum(axis=1)
        np.subtract(new_c, z_c, out=work_c)
        totals["change"] += np.abs(work_c).sum(axis=(0, 1, 3), dtype=np.float64)
        if not run.outp:
            np.subtract(run.w, new_c, out=work_c)
            totals["cv"] += np.abs(work_c).sum(axis=(0, 1, 3), dtype=np.float64)  # A.10


def _log_row(run: _Run, t: int, rho: float, totals: dict[str, np.ndarray]) -> None:
    """Write iteration t's trace row (every replica): the iteration's sums, the test error, the cost."""
    log, row, n_agents = run.log, run.row, run.data.n_agents
    per_coordinate = n_agents * run.data.n_features * run.data.n_classes
    log["iteration"][row] = t
    log["rho"][row] = rho
    log["noise_magnitude"][row] = totals["noise"] / per_coordinate  # Fig. 1 top
    log["z_change"][row] = totals["change"] / per_coordinate
    log["cv_sum"][row], log["cv_mean_agent"][row] = totals["cv"], totals["cv"] / n_agents
    log["noise_scale"][row] = totals["scale"] / n_agents
    log["sensitivity"][row] = totals["sensitivity"] / n_agents
    log["test_error"][row] = softmax.error_rate(run.test_features, run.w, run.test_labels)
    log["train_cost"][row] = training_objective(run.data, run.w, run.params.beta)
    run.row += 1


def _save(run: _Run, t: int, checkpoint: Checkpoint) -> None:
    """Save the state after iteration t (what :func:`_resume` restores)."""
    state = {
        "z": run.z,
        "lam": run.lam,
        "w": run.w,
        "sum_z": run.sums["z"],
        "sum_lam": run.sums["lam"],
        "row": np.array(run.row),
    }
    trace = {f"log_{name}": values for name, values in run.log.items()}
    last_rho = np.array(np.nan if run.previous_rho is None else run.previous_rho)
    generators = generator_states(run.rngs)
    checkpoint.save(
        t,
        {
            **state,
            **trace,
            "multipliers": run.multipliers,
            "previous_rho": last_rho,
            "generators": generators,
        },
    )


def _result(run: _Run) -> IadmmResult:
    """The run's result: OutP's last dual step (4c), then the traces and the final iterates.

    The loop defers OutP's dual step of the last iteration; the iterates are in the original agent order.
    """
    data, params, log = run.data, run.params, run.log
    if run.outp:
        for chunk in data.chunks:  # the last dual step (4c), deferred above
            agents = slice(chunk.start, chunk.stop)
            dual_update(
                run.lam[agents], run.w, run.z[agents], run.previous_rho, run.work[: chunk.stop - chunk.start]
            )
    finite = all(np.isfinite(values).all() for values in log.values())
    traces = tuple(
        pd.DataFrame(
            {
                name: (values[:, b].astype(np.int64) if name == "iteration" else values[:, b])
                for name, values in log.items()
            }
        )
        for b in range(run.replicas)
    )
    original = np.argsort(data.agent_ids)  # internal index of each original agent

    def by_replica(state: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(state[original], 2, 0))

    multipliers = run.multipliers
    return IadmmResult(
        traces,
        np.ascontiguousarray(np.moveaxis(run.w, 1, 0)),
        by_replica(run.z),
        by_replica(run.lam),
        multipliers if params.private else np.zeros_like(multipliers),
        params.iterations,
        finite,
    )
