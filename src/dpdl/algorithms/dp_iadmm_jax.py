"""DP-IADMM (ObjP, ObjT, OutP) for every replica of a job as one compiled JAX program (CPU or GPU).

The same iteration as :func:`dpdl.algorithms.dp_iadmm.run_iadmm` (numba, CPU) and
:mod:`dpdl.algorithms.dp_iadmm_reference` (float64 numpy, the oracle), written for an accelerator:
``lax.scan`` runs the T iterations inside one ``jax.jit`` program, and the replicas (the seeds of a
job, which share the data) sit on an axis of the state, so each of the two matrix products per
agent reads the agent's features once for all of them (``B K`` columns). Agents keep their original
order and are padded with zero rows to the largest I_p; a zero row adds nothing to a product, a
gradient or the sensitivity (20), so only the trace's objective (1) masks it (its loss would be ln K),
by its all-zero one-hot label. Everything is float32 with full-precision products
(``Precision.HIGHEST``: no TF32 or bf16 on a GPU). :func:`run_iadmm_jax` returns what
:func:`~dpdl.algorithms.dp_iadmm.run_iadmm` returns, traces included, computed in the program at the
logged iterations only (``lax.cond``).

What does not depend on the iterates is computed on the host, for every t, by the functions the
numba run uses (:func:`~dpdl.algorithms.dp_iadmm.fused_constants`,
:func:`~dpdl.algorithms.dp_iadmm.outp_calibration`, the calibration of :mod:`dpdl.privacy`) and
passed in as arrays over t; only the data-dependent sensitivity (20) is computed in the program.

Noise: either injected unit-scale draws (the tests replay the reference from them), or the
program's own stream: replica b's key comes from its run's ``SeedSequence`` and iteration t's draws
from ``fold_in(key, t)``, JAX's counter-based threefry generator, whose bits are a function of the
key and the shape only, on any backend (that a GPU gives the CPU's bits is for the device script to
check). Equation numbers are Ryu & Kim's (arXiv 2106.06127); sections refer to ``notes/iadmm.md``.

State layout: w (J, B, K), z and lambda (P, J, B, K), as in the numba run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax import lax

from dpdl.algorithms.dp_iadmm import (
    TRACE_COLUMNS,
    IadmmParams,
    IadmmResult,
    fused_constants,
    logged_iterations,
    outp_calibration,
)
from dpdl.algorithms.dp_iadmm_data import checked_rows
from dpdl.checkpoint import Checkpoint, RunStopped
from dpdl.privacy.dp_iadmm import objp_laplace_scale, objp_sensitivity

DTYPE = jnp.float32
HIGHEST = lax.Precision.HIGHEST  # full float32 products on every backend (no TF32 / bf16)
# The iteration's two products (loss_gradient) at "highest" (the default), or at the device's
# default float32 products, "tf32": TensorFloat-32 on a GPU of the Ampere line or newer (10-bit
# mantissa inputs, float32 sums), unchanged on a CPU. Only for runs a device check showed equivalent
# (benchmarks/device_dp_iadmm.py, issue 37).
MATMUL_PRECISIONS = {"highest": HIGHEST, "tf32": lax.Precision.DEFAULT}
CHUNK_ITERATIONS = 1000  # iterations per call of the compiled program (progress is reported between calls)


class PaddedAgents(NamedTuple):
    """The agents' data padded to a common number of rows m, agents in their original order.

    ``features`` (P, m, J) float32 with zero padding rows; ``onehot`` (P, m, K) float32 (zero on
    padding); ``feature_l1`` (P, m) float32, ||x_pi||_1 (zero on padding); ``sizes`` (P,) the I_p.
    """

    features: np.ndarray
    onehot: np.ndarray
    feature_l1: np.ndarray
    sizes: np.ndarray


def padded_agents(
    features: np.ndarray, labels: np.ndarray, offsets: np.ndarray, n_classes: int
) -> PaddedAgents:
    """Pad agent p's rows ``offsets[p]:offsets[p+1]`` of ``features`` (I, J) and ``labels`` (I,) to max I_p.

    Where every agent has the same size (MNIST) the features are a reshaped view, with no copy.
    """
    features, labels, offsets, sizes = checked_rows(features, labels, offsets, n_classes)
    n_agents, width = len(sizes), int(sizes.max())
    onehot = np.zeros((n_agents, width, n_classes), dtype=np.float32)
    if np.all(sizes == width):
        padded = features.reshape(n_agents, width, -1)
        onehot[:] = np.eye(n_classes, dtype=np.float32)[labels].reshape(n_agents, width, n_classes)
    else:
        padded = np.zeros((n_agents, width, features.shape[1]), dtype=np.float32)
        for p, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:], strict=True)):
            padded[p, : stop - start] = features[start:stop]
            onehot[p, np.arange(stop - start), labels[start:stop]] = 1.0
    feature_l1 = np.abs(padded).sum(axis=2, dtype=np.float64).astype(np.float32)
    return PaddedAgents(padded, onehot, feature_l1, sizes)


class Schedule(NamedTuple):
    """What iteration t needs that does not depend on the iterates, one row per t (host-computed).

    ``t`` (T,) int32; ``logged`` (T,) bool; ``rho`` (T,); ``radius`` (T,) ObjT's delta^t;
    ``inverse_eta`` (T, P): 1/eta^t (ObjP, every agent) or 1/eta-hat_p^t (OutP); ``outp_std`` (T, P)
    OutP's Gaussian std (sigma or sigma^2 by ``outp_noise``) and ``outp_sensitivity`` (T, P) its
    output's sensitivity; float64 on the host, float32 in the program.
    """

    t: np.ndarray
    logged: np.ndarray
    rho: np.ndarray
    radius: np.ndarray
    inverse_eta: np.ndarray
    outp_std: np.ndarray
    outp_sensitivity: np.ndarray


def iteration_schedule(params: IadmmParams, sizes: np.ndarray, n_params: int) -> Schedule:
    """The per-iteration scalars of ``params`` for agents of ``sizes`` (I_p), from the numba run's functions.

    They are evaluated on the whole horizon at once (the values the numba run's per-iteration calls give, bit
    for bit; issue 63: a Python loop cost 23 s per 1e6 OutP iterations).
    """
    iterations = params.iterations
    unique_sizes, size_index = np.unique(sizes, return_inverse=True)
    steps = np.arange(1, iterations + 1)
    rho = params.penalty.over(iterations, params.epsilon)  # (21)
    constants = fused_constants(params, steps, rho, None)
    # ObjT's delta^t (note 7.1)
    radius = np.broadcast_to(constants["radius"], (iterations,)).astype(np.float64)
    if params.algorithm == "outp":
        calibration = outp_calibration(params, steps, rho, unique_sizes, n_params)  # note 2.5
        inverse_eta, outp_sensitivity, outp_std = (v[:, size_index] for v in calibration)
    else:
        zeros = np.zeros((iterations, len(sizes)))
        inverse_eta = zeros + constants["inverse_eta"][:, None]  # ObjP: 1/eta^t = sqrt(t) / a (A.11)
        outp_std, outp_sensitivity = zeros, zeros.copy()
    logged = np.zeros(iterations, dtype=bool)
    logged[logged_iterations(iterations, params.log_every) - 1] = True
    return Schedule(steps.astype(np.int32), logged, rho, radius, inverse_eta, outp_std, outp_sensitivity)


@dataclass(frozen=True)
class Program:
    """The static switches of a compiled run (one compilation per distinct value)."""

    algorithm: str
    private: bool
    worst_case: bool  # sensitivity worst_case (note 7.3) instead of (20)
    regularise_server: bool  # OutP's outp_regulariser code_server_w
    matmul_precision: str = "highest"  # the iteration's products: a key of MATMUL_PRECISIONS


class State(NamedTuple):
    """w (J, B, K), z and lam (P, J, B, K), float32."""

    w: jax.Array
    z: jax.Array
    lam: jax.Array


class Constants(NamedTuple):
    """The run's constants that are arrays or depend on the data (traced, not compiled in)."""

    grad_scale: jax.Array  # (P,): 1/I (2c), or OutP's 1/I_p (note 7.5(c))
    beta_term: jax.Array  # 2 beta / P (37), or the authors' 2 beta at the server's w (issue 40)
    laplace_per_sensitivity: jax.Array  # b / Delta-bar = 1 / epsilon-bar (11a); 0 when non-private
    worst_case_sensitivity: jax.Array  # the replace-one Delta-bar (note 7.3), used by ``worst_case``
    n_total: jax.Array  # I
    beta: jax.Array  # the weight of r(w) in (1)


class Step(NamedTuple):
    """An iteration's new state and its noise: xi (P, J, B, K) as added, its scale and sensitivity (P, B)."""

    state: State
    xi: jax.Array
    noise_scale: jax.Array
    sensitivity: jax.Array


class TraceSums(NamedTuple):
    """Per replica (B,) at a logged iteration: what the trace columns are made of (normalised on the host)."""

    test_mistakes: jax.Array
    train_cost: jax.Array
    noise_sum: jax.Array  # sum |xi|
    z_change_sum: jax.Array  # sum |z^{t+1} - z^t|
    cv_sum: jax.Array  # sum_p ||w^{t+1} - z_p^{t+1}||_1 (A.10)
    noise_scale_sum: jax.Array  # sum over agents
    sensitivity_sum: jax.Array  # sum over agents


# --- one iteration -------------------------------------------------------------------------------


def loss_gradient(
    agents: PaddedAgents, z: jax.Array, grad_scale: jax.Array, precision: lax.Precision = HIGHEST
) -> tuple[jax.Array, jax.Array]:
    """scale_p sum_i x_pi (h(z_p; x_pi) - y_pi)^T, the loss part of (37), (P, J, B, K); and ||h - y||_1, (P, m, B)."""
    n_agents, n_features, replicas, n_classes = z.shape
    columns = z.reshape(n_agents, n_features, replicas * n_classes)
    # x_pi z_p for every replica: (P, m, B K)
    scores = jnp.matmul(agents.features, columns, precision=precision)
    scores = scores.reshape(n_agents, -1, replicas, n_classes)
    residual = jax.nn.softmax(scores, axis=-1) - agents.onehot[:, :, None, :]  # h - y (A.8)
    flat = residual.reshape(n_agents, -1, replicas * n_classes)
    total = jnp.matmul(jnp.swapaxes(agents.features, 1, 2), flat, precision=precision)  # sum_i x_pi (h - y)^T
    scaled = total.reshape(z.shape) * grad_scale[:, None, None, None]
    return scaled, jnp.abs(residual).sum(axis=-1)


def sensitivity_eq20(agents: PaddedAgents, residual_l1: jax.Array, n_total: jax.Array) -> jax.Array:
    """Delta-bar_p^t = max_i ||x_pi||_1 ||h_i - y_i||_1 / I (20), for every agent and replica, (P, B)."""
    return jnp.max(agents.feature_l1[:, :, None] * residual_l1, axis=1) / n_total  # (20)


def objective_perturbation_iteration(
    program: Program,
    agents: PaddedAgents,
    constants: Constants,
    state: State,
    row: Schedule,
    unit: jax.Array | None,
) -> Step:
    """ObjP (Algorithm 1) or ObjT (Algorithm 2): server (4a) -> agents (8) or (9) -> duals (4c)."""
    z, lam, rho = state.z, state.lam, row.rho
    w = jnp.mean(z - lam / rho, axis=0)  # (4a)
    loss, residual_l1 = loss_gradient(
        agents, z, constants.grad_scale, MATMUL_PRECISIONS[program.matmul_precision]
    )
    gradient = loss + constants.beta_term * z  # (37)
    xi = jnp.zeros_like(z)
    n_agents, _, replicas = residual_l1.shape
    scale = delta_bar = jnp.zeros((n_agents, replicas), DTYPE)
    if program.private:
        if program.worst_case:
            delta_bar = jnp.broadcast_to(constants.worst_case_sensitivity, (n_agents, replicas))
        else:
            delta_bar = sensitivity_eq20(agents, residual_l1, constants.n_total)
        scale = delta_bar * constants.laplace_per_sensitivity  # (11a): b = Delta-bar / epsilon-bar
        xi = scale[:, None, :, None] * unit  # (11a): i.i.d. Laplace(0, b)
    if program.algorithm == "objp":
        inverse_eta = row.inverse_eta[:, None, None, None]
        z_next = (rho * w + lam - xi - gradient + z * inverse_eta) / (rho + inverse_eta)  # (8)
    else:
        step = w + (lam - xi - gradient) / rho - z  # the minimiser of G^t (10) minus z^t
        z_next = z + jnp.clip(step, -row.radius, row.radius)  # (9), region (6b)
    return Step(State(w, z_next, lam + rho * (w - z_next)), xi, scale, delta_bar)  # (4c)


def outp_iteration(
    program: Program,
    agents: PaddedAgents,
    constants: Constants,
    state: State,
    row: Schedule,
    unit: jax.Array | None,
) -> Step:
    """OutP (Huang et al., note 2.5): agents' prox step at w^t plus Gaussian noise -> server (4a) -> duals (4c)."""
    w, z, lam, rho = state.w, state.z, state.lam, row.rho
    loss, _ = loss_gradient(agents, z, constants.grad_scale, MATMUL_PRECISIONS[program.matmul_precision])
    regularised = w if program.regularise_server else z  # the authors' 2 beta w^t (issue 40), or (37)'s z_p
    gradient = loss + constants.beta_term * regularised  # (37)
    inverse_eta = row.inverse_eta[:, None, None, None]  # 1 / eta-hat_p^t
    z_next = (rho * w + lam - gradient + z * inverse_eta) / (rho + inverse_eta)  # note 2.5 step 1
    xi = jnp.zeros_like(z)
    if program.private:
        xi = row.outp_std[:, None, None, None] * unit  # note 2.5 step 2: Gaussian output noise
    z_next = z_next + xi
    w_next = jnp.mean(z_next - lam / rho, axis=0)  # (4a), after the agents (note 7.5(d))
    replicas = z.shape[2]
    scale, sensitivity = (
        jnp.repeat(v[:, None], replicas, axis=1) for v in (row.outp_std, row.outp_sensitivity)
    )
    return Step(State(w_next, z_next, lam + rho * (w_next - z_next)), xi, scale, sensitivity)  # (4c)


def replica_keys(seeds: Sequence[np.random.SeedSequence]) -> jax.Array:
    """One threefry key per replica, (B,): the first two 32-bit state words of its run's ``SeedSequence``."""
    words = np.stack([seed.generate_state(2, np.uint32) for seed in seeds])
    return jax.random.wrap_key_data(jnp.asarray(words), impl="threefry2x32")


def drawn_unit_noise(program: Program, keys: jax.Array, t: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """Replica b's unit-scale draws of iteration t, (B, *shape): Gaussian (OutP) or Laplace, from fold_in(key_b, t)."""
    sample = jax.random.normal if program.algorithm == "outp" else jax.random.laplace
    # drawn flat: XLA's CPU compiler takes seconds over an N-d threefry (5 s at MNIST's)
    size = math.prod(shape)
    return jax.vmap(lambda key: sample(jax.random.fold_in(key, t), (size,), DTYPE).reshape(shape))(keys)


def mistakes(features: jax.Array, labels: jax.Array, w: jax.Array) -> jax.Array:
    """The number of rows whose arg-max class under w (J, B, K) is not the label, per replica, (B,) int32."""
    n_features, replicas, n_classes = w.shape
    scores = jnp.matmul(features, w.reshape(n_features, replicas * n_classes), precision=HIGHEST)
    predicted = jnp.argmax(scores.reshape(-1, replicas, n_classes), axis=-1)  # ties: the lowest class
    return jnp.sum(predicted != labels[:, None], axis=0, dtype=jnp.int32)


def training_objective(agents: PaddedAgents, w: jax.Array, beta: jax.Array, n_total: jax.Array) -> jax.Array:
    """(1) at the server's w (J, B, K): (1/I) sum_p sum_i l(w; x_pi, y_pi) + beta r(w), per replica, (B,)."""
    n_features, replicas, n_classes = w.shape
    scores = jnp.matmul(agents.features, w.reshape(n_features, replicas * n_classes), precision=HIGHEST)
    scores = scores.reshape(*agents.features.shape[:2], replicas, n_classes)
    valid = agents.onehot.sum(axis=-1)[..., None]  # 0 on padding rows
    label_scores = jnp.sum(agents.onehot[:, :, None, :] * scores, axis=-1)
    loss = jax.nn.logsumexp(scores, axis=-1) * valid - label_scores  # -ln h_y(w; x_pi) (A.8)
    return loss.sum(axis=(0, 1)) / n_total + beta * jnp.square(w).sum(axis=(0, 2))  # (1)


def trace_sums(
    agents: PaddedAgents,
    constants: Constants,
    previous: State,
    step: Step,
    test_set: tuple[jax.Array, jax.Array],
) -> TraceSums:
    """What the trace records of an iteration (``dpdl.algorithms.dp_iadmm.TRACE_COLUMNS``), as sums per replica."""
    w, z = step.state.w, step.state.z
    per_replica = functools.partial(jnp.sum, axis=(0, 1, 3))
    return TraceSums(
        mistakes(*test_set, w),
        training_objective(agents, w, constants.beta, constants.n_total),
        per_replica(jnp.abs(step.xi)),
        per_replica(jnp.abs(z - previous.z)),
        per_replica(jnp.abs(w - z)),  # A.10
        step.noise_scale.sum(axis=0),
        step.sensitivity.sum(axis=0),
    )


def _scan(
    program: Program,
    agents: PaddedAgents,
    constants: Constants,
    start: State,
    rows: Schedule,
    noise: jax.Array | None,
    keys: jax.Array | None,
    test_features: jax.Array,
    test_labels: jax.Array,
) -> tuple[State, TraceSums]:
    """Run the iterations of ``rows`` from ``start`` (``lax.scan``); return the state and the trace sums (T, B)."""
    n_agents, n_features, replicas, n_classes = start.z.shape
    iteration = outp_iteration if program.algorithm == "outp" else objective_perturbation_iteration

    def step(state: State, inputs: tuple[Schedule, jax.Array | None]) -> tuple[State, TraceSums]:
        row, injected = inputs
        unit = None
        if program.private:
            if injected is None:
                injected = drawn_unit_noise(program, keys, row.t, (n_agents, n_features, n_classes))
            unit = jnp.transpose(injected, (1, 2, 0, 3))  # (B, P, J, K) -> the state's (P, J, B, K)
        taken = iteration(program, agents, constants, state, row, unit)
        sums = lax.cond(
            row.logged,  # the same in every cell of a batch (not batched), so a branch, not a select
            lambda: trace_sums(agents, constants, state, taken, (test_features, test_labels)),
            lambda: TraceSums(
                jnp.zeros(replicas, jnp.int32), *(jnp.zeros(replicas, DTYPE) for _ in range(6))
            ),
        )
        return taken.state, sums

    return lax.scan(step, start, (rows, noise))


# t and logged are shared by the cells of a batch; the rest per cell
CELL_ROWS = Schedule(None, None, 0, 0, 0, 0, 0)


@functools.partial(jax.jit, static_argnames=("program",))
def _run(
    program: Program,
    agents: PaddedAgents,
    constants: Constants,
    start: State,
    rows: Schedule,
    noise: jax.Array | None,
    keys: jax.Array | None,
    test_features: jax.Array,
    test_labels: jax.Array,
) -> tuple[State, TraceSums]:
    """:func:`_scan` for every cell of a batch at once, ``vmap`` over the cells with the data shared.

    The leading axis C is that of the constants, start, the per-cell rows, noise and keys; each product reads
    the features once for the C B K columns of every cell and replica.
    """
    in_axes = (
        None,
        None,
        0,
        0,
        CELL_ROWS,
        None if noise is None else 0,
        None if keys is None else 0,
        None,
        None,
    )
    cells = jax.vmap(functools.partial(_scan, program), in_axes=in_axes[1:])
    return cells(agents, constants, start, rows, noise, keys, test_features, test_labels)


class Cell(NamedTuple):
    """One cell of a batch: its parameters and its noise source (exactly one of ``seeds`` and ``unit_noise``)."""

    params: IadmmParams
    seeds: Sequence[np.random.SeedSequence] | None = None
    unit_noise: np.ndarray | None = None


def program_of(params: IadmmParams) -> Program:
    """The static switches of ``params``' compiled program."""
    regularise_server = params.algorithm == "outp" and params.outp_regulariser == "code_server_w"
    return Program(params.algorithm, params.private, params.sensitivity == "worst_case", regularise_server)


def _constants(agents: PaddedAgents, params: IadmmParams) -> Constants:
    """The run's traced constants (host numpy, float32), from ``params`` and the data."""
    n_agents, _, n_features = agents.features.shape
    outp = params.algorithm == "outp"
    n_total = int(agents.sizes.sum())
    if outp and params.outp_gradient == "agent_mean":
        grad_scale = 1.0 / agents.sizes  # Huang et al.: the agent-average loss (note 7.5(c))
    else:
        grad_scale = np.full(n_agents, 1.0 / n_total)  # (2c): f_p scaled by the global 1/I
    worst_case = 0.0
    if params.sensitivity == "worst_case" and not outp:
        # no padding
        rows_l1 = agents.feature_l1[np.arange(agents.feature_l1.shape[1]) < agents.sizes[:, None]]
        worst_case = objp_sensitivity(
            rows_l1,
            np.zeros((rows_l1.size, 1)),
            n_total=n_total,
            mode="worst_case",
            feature_l1_bound=n_features * params.feature_bound,
        )  # note 7.3
    regularise_server = program_of(params).regularise_server
    values = (
        grad_scale,
        2.0 * params.beta if regularise_server else 2.0 * params.beta / n_agents,  # (37)
        objp_laplace_scale(1.0, params.epsilon),  # (11a): b = Delta-bar / epsilon-bar
        worst_case,
        n_total,
        params.beta,
    )
    return Constants(*(np.asarray(v, np.float32) for v in values))


def _unit_noise(cell: Cell, shape: tuple[int, int, int, int]) -> np.ndarray | None:
    """The cell's injected draws as float32, checked against (T, P, J, K) = ``shape``; None for its own stream."""
    if (cell.seeds is None) == (cell.unit_noise is None):
        raise ValueError(
            "give exactly one of seeds (the program's own stream) and unit_noise (injected draws)"
        )
    if cell.unit_noise is None:
        return None
    noise = np.asarray(cell.unit_noise, dtype=np.float32)
    if noise.ndim != 5 or (noise.shape[0], *noise.shape[2:]) != shape:
        raise ValueError(
            f"unit_noise must have shape (T, B, P, J, K) with (T, P, J, K) = {shape}; got {noise.shape}"
        )
    return noise


def run_iadmm_jax(
    agents: PaddedAgents,
    params: IadmmParams,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    *,
    seeds: Sequence[np.random.SeedSequence] | None = None,
    unit_noise: np.ndarray | None = None,
    progress: Callable[[int], None] | None = None,
    chunk: int = CHUNK_ITERATIONS,
    matmul_precision: str = "highest",
    checkpoint: Checkpoint | None = None,
) -> IadmmResult:
    """Run ObjP, ObjT or OutP for T iterations on every replica at once, as one compiled program.

    Parameters
    ----------
    agents : PaddedAgents
        The agents' training data (:func:`padded_agents`).
    params : IadmmParams
        Every switch is honoured as by :func:`~dpdl.algorithms.dp_iadmm.run_iadmm`.
    test_features : numpy.ndarray, shape (n_test, J)
    test_labels : numpy.ndarray of int, shape (n_test,)
    seeds : sequence of numpy.random.SeedSequence, optional
        One per replica (B): replica b's noise is drawn from a threefry key made of ``seeds[b]``'s
        first two state words, folded with t at iteration t, so it depends on nothing else.
    unit_noise : numpy.ndarray, shape (T, B, P, J, K), optional
        Injected unit-scale draws instead (Laplace for ObjP and ObjT, Gaussian for OutP), agents
        in the original order; replica b's agent p takes ``unit_noise[t - 1, b, p]`` at iteration t.
    progress : callable, optional
        Called with t after every ``chunk`` iterations and after the last (for progress logs).
    chunk : int
        Iterations per call of the compiled program (the state stays on the device between calls;
        the split changes no number, only when ``progress`` hears of it).
    matmul_precision : {"highest", "tf32"}
        The iteration's two products: full float32 (default), or the device's default float32
        products (TF32 on a recent GPU; no change on a CPU): :data:`MATMUL_PRECISIONS`.
    checkpoint : dpdl.checkpoint.Checkpoint, optional
        Where the state is saved after a chunk once ``checkpoint.every_s`` seconds have passed, and
        resumed from; the resumed run is the uninterrupted one, bit for bit (the noise of iteration t
        depends on t alone, and a resumed run's chunks are the uninterrupted run's). Past its
        ``stop_at`` the run saves after the chunk and raises :class:`dpdl.checkpoint.RunStopped`.

    Exactly one of ``seeds`` and ``unit_noise`` is given (a non-private run reads neither's
    values, only the number of replicas).

    Returns
    -------
    IadmmResult
        As :func:`~dpdl.algorithms.dp_iadmm.run_iadmm` returns it: the traces (``TRACE_COLUMNS`` at
        the logged iterations), the final w, z_p and lambda_p, the noise multipliers, ``finite``.
    """
    cell = Cell(params, seeds, unit_noise)
    return run_cells_jax(
        agents,
        [cell],
        test_features,
        test_labels,
        progress=progress,
        chunk=chunk,
        matmul_precision=matmul_precision,
        checkpoint=checkpoint,
    )[0]


def run_cells_jax(
    agents: PaddedAgents,
    cells: Sequence[Cell],
    test_features: np.ndarray,
    test_labels: np.ndarray,
    *,
    progress: Callable[[int], None] | None = None,
    chunk: int = CHUNK_ITERATIONS,
    matmul_precision: str = "highest",
    checkpoint: Checkpoint | None = None,
) -> list[IadmmResult]:
    """Run several cells on the same data as one compiled program: :func:`run_iadmm_jax` for each, batched.

    The cells share the program's switches (algorithm, privacy, sensitivity mode, OutP's
    regulariser), T, the logging interval and the number of replicas; epsilon-bar, the penalty
    schedule, a and beta may differ. Each product then reads the features once for every replica
    of every cell (C B K columns). A cell's result is the one it gets alone, up to float32 rounding
    (XLA may fuse the batched program's steps differently).
    """
    noises, replicas = _checked_cells(agents, cells, matmul_precision)
    first = cells[0].params
    n_agents, _, n_features = agents.features.shape
    n_classes = agents.onehot.shape[-1]
    program = replace(program_of(first), matmul_precision=matmul_precision)
    schedules = [iteration_schedule(c.params, agents.sizes, n_features * n_classes) for c in cells]
    per_cell = Schedule(*(np.stack(v) for v in zip(*schedules, strict=True)))
    in_float32 = Schedule(*(np.asarray(v, np.float32) if v.dtype == np.float64 else v for v in per_cell))
    constants = Constants(
        *(jnp.asarray(np.stack(v)) for v in zip(*(_constants(agents, c.params) for c in cells), strict=True))
    )
    keys = None if noises[0] is not None else jnp.stack([replica_keys(c.seeds) for c in cells])
    noise = None if noises[0] is None else np.stack(noises)
    device_agents = PaddedAgents(
        jnp.asarray(agents.features), jnp.asarray(agents.onehot), jnp.asarray(agents.feature_l1), agents.sizes
    )
    zeros = jnp.zeros((len(cells), n_agents, n_features, replicas, n_classes), DTYPE)
    state = State(zeros[:, 0], zeros, zeros)  # w = z = lambda = 0 (note 7.7)
    test_set = (jnp.asarray(test_features, DTYPE), jnp.asarray(test_labels, jnp.int32))
    logged_rows = schedules[0].logged
    parts, start = [], 0
    saved = None if checkpoint is None else checkpoint.load()
    # the state and trace sums after iteration ``start`` of this very run (checkpoint key)
    if saved is not None:
        start = int(saved["iteration"])
        state = State(*(jnp.asarray(saved[name]) for name in State._fields))
        parts.append(TraceSums(*(saved[f"sums_{name}"] for name in TraceSums._fields)))
    for begin in range(start, first.iterations, chunk):
        stop = min(begin + chunk, first.iterations)
        rows = Schedule(
            in_float32.t[0, begin:stop],
            in_float32.logged[0, begin:stop],
            *(jnp.asarray(v[:, begin:stop]) for v in in_float32[2:]),
        )
        state, sums = _run(
            program,
            device_agents,
            constants,
            state,
            Schedule(*(jnp.asarray(v) for v in rows)),
            None if noise is None else jnp.asarray(noise[:, begin:stop]),
            keys,
            *test_set,
        )
        # waits for the chunk
        parts.append(TraceSums(*(np.asarray(v)[:, logged_rows[begin:stop]] for v in sums)))
        if progress is not None:
            progress(stop)
        if checkpoint is not None and stop < first.iterations and (checkpoint.due() or checkpoint.stopping()):
            _save(checkpoint, stop, state, parts)
    logged = TraceSums(*(np.concatenate(v, axis=1).astype(np.float64) for v in zip(*parts, strict=True)))
    finals = [np.asarray(x) for x in state]
    return [
        _result(
            cell.params,
            schedule,
            TraceSums(*(v[c] for v in logged)),
            [x[c] for x in finals],
            agents,
            len(test_labels),
        )
        for c, (cell, schedule) in enumerate(zip(cells, schedules, strict=True))
    ]


def _checked_cells(
    agents: PaddedAgents, cells: Sequence[Cell], matmul_precision: str
) -> tuple[list[np.ndarray | None], int]:
    """Each cell's injected noise (None for its own stream) and the replicas per cell, once the batch is one.

    The cells of a batch share the program's switches, T, log_every, the replicas and the noise source.
    """
    if not cells:
        raise ValueError("give at least one cell")
    first = cells[0].params
    shared = {(program_of(c.params), c.params.iterations, c.params.log_every) for c in cells}
    if len(shared) != 1:
        raise ValueError(
            "the cells of a batch must share the program's switches, T and log_every; run them apart"
        )
    n_agents, _, n_features = agents.features.shape
    n_classes = agents.onehot.shape[-1]
    noises = [_unit_noise(c, (first.iterations, n_agents, n_features, n_classes)) for c in cells]
    replicas = {len(c.seeds) if n is None else n.shape[1] for c, n in zip(cells, noises, strict=True)}
    if len(replicas) != 1 or {n is None for n in noises} != {noises[0] is None}:
        raise ValueError("the cells of a batch must have as many replicas each and the same noise source")
    if matmul_precision not in MATMUL_PRECISIONS:
        raise ValueError(
            f"matmul_precision must be one of {', '.join(MATMUL_PRECISIONS)}; got {matmul_precision!r}"
        )
    return noises, replicas.pop()


def _save(checkpoint: Checkpoint, stop: int, state: State, parts: list[TraceSums]) -> None:
    """Save the state and the trace sums after iteration ``stop``; past ``stop_at``, stop the run."""
    columns = zip(TraceSums._fields, zip(*parts, strict=True), strict=True)
    sums = {f"sums_{name}": np.concatenate(v, axis=1) for name, v in columns}
    checkpoint.save(
        stop, {**{name: np.asarray(x) for name, x in zip(State._fields, state, strict=True)}, **sums}
    )
    if checkpoint.stopping():
        raise RunStopped(stop, checkpoint.path)


def _result(
    params: IadmmParams,
    rows: Schedule,
    logged: TraceSums,
    state: list[np.ndarray],
    agents: PaddedAgents,
    n_test: int,
) -> IadmmResult:
    """One cell's :class:`~dpdl.algorithms.dp_iadmm.IadmmResult` from its schedule, logged sums and final state."""
    n_agents, _, n_features = agents.features.shape
    n_classes = agents.onehot.shape[-1]
    replicas = logged.cv_sum.shape[1]
    per_coordinate = n_agents * n_features * n_classes
    log = {
        "iteration": np.repeat(rows.t[rows.logged, None].astype(np.int64), replicas, axis=1),
        "test_error": logged.test_mistakes / n_test,
        "train_cost": logged.train_cost,
        "noise_magnitude": logged.noise_sum / per_coordinate,  # Fig. 1 top
        "noise_scale": logged.noise_scale_sum / n_agents,
        "sensitivity": logged.sensitivity_sum / n_agents,
        "cv_sum": logged.cv_sum,
        "cv_mean_agent": logged.cv_sum / n_agents,
        "z_change": logged.z_change_sum / per_coordinate,
        "rho": np.repeat(rows.rho[rows.logged, None], replicas, axis=1),
    }
    if not params.private:
        multipliers = np.zeros(params.iterations)
    elif params.algorithm == "outp":
        multipliers = np.min(rows.outp_std / rows.outp_sensitivity, axis=1)  # sigma_p^t / Delta_p^t
    else:
        # b / Delta-bar (11a)
        multipliers = np.full(params.iterations, objp_laplace_scale(1.0, params.epsilon))
    w, z, lam = state
    return IadmmResult(
        tuple(pd.DataFrame({name: log[name][:, b] for name in TRACE_COLUMNS}) for b in range(replicas)),
        np.ascontiguousarray(np.moveaxis(w, 1, 0)),
        np.ascontiguousarray(np.moveaxis(z, 2, 0)),
        np.ascontiguousarray(np.moveaxis(lam, 2, 0)),
        multipliers,
        params.iterations,
        all(np.isfinite(values).all() for values in log.values()),
    )
