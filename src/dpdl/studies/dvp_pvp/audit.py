"""dvp_pvp's privacy audit: one iteration's released primal variable at the node holding the canary.

Theorems 1 and 2 (J Section III) state alpha_p(t)-DP per iteration ("dynamic" DP, J(12), J(17)),
conditional on what the node already holds; nothing is composed (note 3.3, G11). So each cell
audits the first release, where that history is public and data-free: f(0) is the seeded random
start (G8, broadcast at t = 0) and lambda(0) = 0. DVP (Algorithm 2) releases f_p(1), the minimiser
of its Lagrangian with the perturbed dual mu = lambda + C^R / (2 B_p) eps (J(13)-(15)); PVP
(Algorithm 3) releases V_p(1) = f_p(1) + eps (J(18)-(19)); eps has density proportional to
exp(-zeta ||eps||) (``samplers.norm_exponential``).

Canary: a unit-norm record whose D and D' versions are mirror images across e_1, both misclassified
by the f that the other records pin down, so the gradients differ by nearly 2 sin(phi)
(``neighbours``). Scores: the black box reads the released vector's coordinate along e_2, the axis
the two versions differ on. The white box is the log-likelihood ratio of the release given the
declared zeta. DVP: the KKT map J(28) inverts f_p(1) into the noise that D (or D') would have
needed, and the density of f is the noise density times the Jacobian |det d eps / d f| (J(29)-(30)).
PVP: V - f_D(1) and V - f_D'(1), with f(1) the noiseless minimisers from the same start.

Everything runs through the study's code as ``run.execute_run`` does: ``AdmmSettings`` from the
config defaults (``dpdl/schemas/dvp_pvp.schema.yaml``), ``calibrate`` and ``run_admm`` with one
generator per node, ``connected_graph`` and ``equal_shards`` (G12, G13), ``run.privacy_events``.
J(n) / C(n) are the journal / conference equations; G# the gaps of ``notes/zhang_zhu.md``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpdl import schemas
from dpdl.algorithms import dvp_pvp as admm_algo
from dpdl.algorithms.dvp_pvp_network import NodeData, connected_graph
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX, AuditCell, AuditSamples, PrivacyClaim
from dpdl.audit.data_premises import DataPremise
from dpdl.audit.premises import Premise, differing_records
from dpdl.audit.reach import CanaryLoss, laplace_canary
from dpdl.data.partition import equal_shards
from dpdl.privacy.accounting import composed_epsilon
from dpdl.studies.dvp_pvp import grid
from dpdl.studies.dvp_pvp import run as study_run

AGENTS = 3  # P: the study's Erdos-Renyi graph at graph_seed 0 is then the path 0 - 2 - 1
SAMPLES_PER_NODE = 500  # B_p >= PVP's C^R = 146 (note 1.2); DVP's eps-space audit does not depend on B_p
FEATURES = 2  # d: small, so the noise's direction (uniform on the circle) often lines up with the canary
DATA_SEED = 0
LABEL_SLOPE = 10.0  # ordinary labels: P(y = +1 | x) = sigmoid(10 x_1), so ||f_p(1)|| is large (about 8)
CANARY_ANGLE = np.radians(60.0)  # phi: the canary x = (-cos phi, +-sin phi), misclassified by f ~ 8 e_1
ITERATIONS = 1  # T of an audited run: step 0 releases f_p(1) / V_p(1); the final step is not scored

DVP_CLAIM, PVP_CLAIM = f"{grid.STUDY}.privacy.dvp", f"{grid.STUDY}.privacy.pvp"
PRIVACY_CLAIMS = (
    PrivacyClaim(
        DVP_CLAIM,
        grid.STUDY,
        "Theorem 1, J(17) / C(20), J Section III-A (proof: J appendix 'Proof of Theorem 1', C App. "
        "B; Definition 1, J(12)); no page numbers",
        "'Under Assumption 1, 2 and 3, if the DR-ERM problem can be solved by Algorithm 2, then "
        "Algorithm 2 solving this distributed problem is dynamic alpha-differential private with "
        "alpha_p(t) for each node p at time t': Q(f_p(t) | D) / Q(f_p(t) | D'_p) <= e^(alpha_p(t)) "
        "for H_d(D, D'_p) = 1 (17), every iterate f_p(t) a node sends its neighbours",
    ),
    PrivacyClaim(
        PVP_CLAIM,
        grid.STUDY,
        "Theorem 2, J Section III-B (proof: J appendix 'Proof of Theorem 2', sensitivity J(33), C "
        "App. D); zeta = rho B_p alpha / (2 C^R) "
        "from the Algorithm 3 box (G3); no page numbers",
        "'Under Assumption 1, 2 and 3, if the DR-ERM problem can be solved by Algorithm 3, then "
        "Algorithm 3 solving this distributed problem is dynamic alpha(t)-differential private. "
        "The ratio of conditional probabilities of f_p(t) is bounded as in (17)': each broadcast "
        "V_p(t) = f_p(t) + eps_p(t) is alpha_p(t)-DP (G4)",
    ),
)


# The papers' stated assumptions (issue 58's premise ledger), measured on each cell's canary pair.
# No reading selects other cells: every cell fixes its own eta (the grid's smallest and largest, the
# two branches of the DVP update), and loss_unit and pvp_error_of change only what is reported
# (issue 58 item 6).
def mechanism(section: dict) -> dict:
    """The switch values a build with this dvp_pvp config section releases with: none selects a cell."""
    return {}


PREMISES = (
    Premise(
        "record_norm",
        "features of norm at most 1 (Assumption 3)",
        "Assumption 3 (J and C)",
        "'||x_ip|| <= 1 and |y_ip| = 1'",
        1.0,
        "the largest l2 norm of the canary record on D and on D'",
    ),
    Premise(
        "label_domain",
        "labels +-1 (Assumption 3)",
        "Assumption 3 (J and C)",
        "'||x_ip|| <= 1 and |y_ip| = 1'",
        0.0,
        "the number of the canary record's labels (on D and D') with |y| != 1",
    ),
    Premise(
        "neighbours",
        "neighbours at Hamming distance 1",
        "Definition 1, J(12); Theorem 1 (17)",
        "'for any D'_p with H_d(D, D'_p) = 1'",
        1.0,
        "the number of records in which D and D' differ",
    ),
    Premise(
        "adversary",
        "the adversary sees every iterate",
        "Definition 1, J(12) (C's Type 2 adversary)",
        "the adversary sees all intermediate iterates a node sends and the final output",
        math.nan,
        "by construction: the cell scores the first release given the public history",
    ),
)
_WITHIN = {premise.id: True for premise in PREMISES}


@dataclass(frozen=True)
class _Spec:
    algorithm: str  # "dvp" or "pvp"
    eta: float  # the ADMM penalty (G14), a value of the study's eta_grid
    why: str  # why this eta


@functools.cache
def schema_defaults() -> dict:
    """The dvp_pvp config section's defaults (the paper's rho, C^R and alpha grid, the default switches)."""
    return schemas.defaults("dvp_pvp.schema.yaml")


def study_values(spec: _Spec) -> dict:
    """The run settings of a cell: the defaults with P = AGENTS, eta fixed and T = ITERATIONS."""
    return {**schema_defaults(), "agents": AGENTS, "eta": spec.eta, "iterations": ITERATIONS}


ALPHA = max(schema_defaults()["alphas"])  # 1.0: the grid's largest (G17; J Fig. 3d), the most runs-efficient
_ETAS = schema_defaults()["eta_grid"]
_AUDITED = (
    _Spec(
        "dvp", min(_ETAS), "the grid's smallest: the ridge branch (Phi > 0), as in every published DVP run"
    ),
    _Spec("dvp", max(_ETAS), "the grid's largest: the no-ridge branch (Phi = 0) with the largest alpha-hat"),
    _Spec(
        "pvp",
        min(_ETAS),
        "the grid's smallest: the PVP Lagrangian's strong convexity closest to the proof's rho",
    ),
)


def _spec_name(spec: _Spec) -> str:
    return f"{spec.algorithm}_alpha{ALPHA:g}_eta{spec.eta:g}_T1"


def admm_settings(spec: _Spec, iterations: int = ITERATIONS) -> admm_algo.AdmmSettings:
    """``AdmmSettings`` exactly as ``run.execute_run`` builds them from the cell's settings."""
    values = study_values(spec)
    return admm_algo.AdmmSettings(
        spec.algorithm,
        rho=values["rho"][spec.algorithm],
        c_r=float(values["c_r"][spec.algorithm]),
        eta=spec.eta,
        iterations=iterations,
        alpha=ALPHA,
        dvp_zeta_mode=values["dvp_zeta_mode"],
        pvp_center=values["pvp_center"],
        init=values["init"],
        init_scale=values["init_scale"],
    )


@functools.cache
def adjacency() -> np.ndarray:
    """The study's seeded connected graph (G13: Erdos-Renyi redrawn until connected) on AGENTS nodes."""
    values = schema_defaults()
    rng = np.random.default_rng(values["graph_seed"])
    return connected_graph(values["graph"], AGENTS, rng=rng, edge_probability=values["edge_probability"])


CANARY_NODE = int(np.argmax(adjacency().sum(axis=1)))  # the node with most neighbours (the path's middle)


@functools.cache
def shards() -> tuple[np.ndarray, ...]:
    """The nodes' rows: the run step's shuffle-then-equal-shards partition (G12).

    The partition is drawn at the default partition_seed.
    """
    rng = np.random.default_rng(schema_defaults()["partition_seed"])
    return tuple(equal_shards(AGENTS * SAMPLES_PER_NODE, AGENTS, rng=rng))


def canary_row() -> int:
    """The row holding the canary: the canary node's first row."""
    return int(shards()[CANARY_NODE][0])


@functools.cache
def neighbours(algorithm: str) -> tuple[NodeData, NodeData]:
    """(D, D') as node data for ``algorithm``'s cells, one record replaced (C(12)).

    Every record has ||x|| <= 1 and y = +-1 (A3).

    Ordinary records: labels from P(y = +1 | x) = sigmoid(LABEL_SLOPE x_1); their features span
    both coordinates for DVP (the data pin f_p(1), so the canary is misclassified on both sides
    and J(28)'s eps moves by nearly the sensitivity 2) and only e_1 for PVP (no curvature along
    e_2 but the canary's and rho's: f_p(1) moves by as much as J(33) allows). The canary: y = +1,
    x = (-cos phi, +sin phi) on D and its mirror image (-cos phi, -sin phi) on D'.
    """
    return tuple(NodeData.from_shards(x, y, list(shards())) for x, y in _records(algorithm))


@functools.cache
def _records(algorithm: str) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((x_D, y_D), (x_D', y_D')): the records behind :func:`neighbours`, one array of rows per side."""
    rng = np.random.default_rng(DATA_SEED)
    rows = AGENTS * SAMPLES_PER_NODE
    if algorithm == "dvp":
        x = rng.standard_normal((rows, FEATURES))
        x *= rng.uniform(0.5, 1.0, (rows, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    else:
        x = np.zeros((rows, FEATURES))
        x[:, 0] = rng.uniform(-1.0, 1.0, rows)
    labels = np.where(rng.random(rows) < expit(LABEL_SLOPE * x[:, 0]), 1.0, -1.0)
    sides = []
    for sign in (1.0, -1.0):
        x_side, y_side = x.copy(), labels.copy()
        x_side[canary_row()] = -np.cos(CANARY_ANGLE), sign * np.sin(CANARY_ANGLE)
        y_side[canary_row()] = 1.0
        sides.append((x_side, y_side))
    return sides[0], sides[1]


def calibration(spec: _Spec) -> admm_algo.Calibration:
    """The nodes' noise calibration of the cell (``calibrate``, as ``run_admm`` computes it)."""
    settings, sizes = admm_settings(spec), neighbours(spec.algorithm)[0].sizes
    return admm_algo.calibrate(settings, sizes, adjacency().sum(axis=1))


def whole_run_epsilon(spec: _Spec) -> float:
    """dp-accounting's (PLD) epsilon of a whole default run's T + 1 releases, from ``run.privacy_events``."""
    values = schema_defaults()
    full = admm_settings(spec, iterations=values["iterations"])
    events, _, _ = study_run.privacy_events(
        full, admm_algo.calibrate(full, neighbours(spec.algorithm)[0].sizes, adjacency().sum(1))
    )
    return composed_epsilon(events, values["accounting_delta"], "pld")


def _runs(spec: _Spec, data: NodeData, children) -> list:
    """One ``run_admm`` per run, node p drawing from a generator of the run's p-th child (as the run step)."""
    settings = admm_settings(spec)
    return [
        admm_algo.run_admm(data, adjacency(), settings, rngs=[np.random.default_rng(c) for c in nodes])
        for nodes in children
    ]


def _released_text(spec: _Spec) -> str:
    values = schema_defaults()
    releases = values["iterations"] + 1
    what = (
        "f_p(1), DVP's first primal iterate (J(15))"
        if spec.algorithm == "dvp"
        else "V_p(1) = f_p(1) + eps_p(1), PVP's first broadcast (J(19))"
    )
    return (
        f"{what} of node {CANARY_NODE} (the canary's), sent to its neighbours, given the public "
        "history f(0) (G8) and lambda(0) = 0; black box: its coordinate along e_2 (where the "
        "canary's versions differ); white box: the LLR under the declared zeta (module "
        f"docstring). A whole run (T = {values['iterations']}) releases {releases} iterates per "
        f"node: the paper claims alpha = {ALPHA:g} per iteration and composes nothing (G11); naive "
        f"composition {releases * ALPHA:g}, dp-accounting (PLD, run.privacy_events) "
        f"{whole_run_epsilon(spec):.4g} at delta {values['accounting_delta']:g}"
    )


def _canary_text(spec: _Spec) -> str:
    node = calibration(spec)
    spread = 2.0 * np.sin(CANARY_ANGLE)  # ||x_D - x_D'||
    head = (
        f"node {CANARY_NODE}'s first record, y = +1 with x = (-cos phi, sin phi) on D and its mirror image "
        f"(-cos phi, -sin phi) on D', phi = {np.degrees(CANARY_ANGLE):g} deg, unit norm "
        f"(replace-one, C(12)); the other {AGENTS * SAMPLES_PER_NODE - 1} records have y = +-1 "
        f"with P(y = +1) = sigmoid({LABEL_SLOPE:g} x_1) "
    )
    if spec.algorithm == "dvp":
        dvp = node.dvp[CANARY_NODE]
        return head + (
            "and 0.5 <= ||x|| <= 1 in random directions, so the data hold f_p(1) near a large "
            "multiple of e_1 that misclassifies the canary on both sides: J(28)'s eps moves by up "
            f"to ||x_D - x_D'|| = {spread:.3g} of the sensitivity 2 the calibration assumes, so "
            f"this pair's density part is at most zeta x {spread:.3g} = {dvp.zeta * spread:.3g} "
            f"(branch {dvp.branch}, alpha-hat {dvp.alpha_hat:.3g}) and its Jacobian part (mirror "
            "images, equal curvature) near 0"
        )
    moved = pvp_shift(spec)
    zeta = node.pvp_zeta[CANARY_NODE]
    sensitivity = ALPHA / zeta  # zeta = rho B_p alpha / (2 C^R): alpha / zeta is J(33)'s 2 C^R / (rho B_p)
    return head + (
        "and x = r e_1, |r| <= 1, so only rho and the canary curve PVP's Lagrangian along e_2: "
        f"the noiseless f_p(1) moves by {moved:.3g} of the declared sensitivity {sensitivity:.3g} "
        "(J(33)) before the canary's gradient saturates, so this pair's loss is at most zeta x "
        f"{moved:.3g} = {zeta * moved:.3g}"
    )


def pvp_shift(spec: _Spec) -> float:
    """How far the canary moves PVP's noiseless f_p(1) (l2), from the same seeded start on D and D'."""
    children = [np.random.SeedSequence(0).spawn(AGENTS)]
    noiseless = [_runs(spec, data, children)[0].f[1, CANARY_NODE] for data in neighbours("pvp")]
    return float(np.linalg.norm(np.subtract(*noiseless)))


def canary_loss(cell: AuditCell) -> CanaryLoss:
    """The canary pair's maximal privacy loss in the released first iterate (:mod:`dpdl.audit.reach`).

    The noise has density proportional to exp(-zeta ||eps||), so a shift s of its location gives a
    log ratio at most zeta s (triangle inequality; attained along the shift): PVP, s = the noiseless
    f_p(1)'s move (:func:`pvp_shift`), exact; DVP, s = ||x_D - x_D'|| = 2 sin(phi), the most J(28)'s
    eps can move (the gradients differ by sigmoid(.) (x_D - x_D'), sigmoid < 1), its Jacobian part
    taken as 0 (mirror images: equal curvature up to the off-diagonal sign), so a bound on the
    density part.
    """
    spec = _SPECS[cell.name]
    node = calibration(spec)
    if spec.algorithm == "dvp":
        zeta, spread = node.dvp[CANARY_NODE].zeta, 2.0 * float(np.sin(CANARY_ANGLE))
        return laplace_canary(
            spread,
            1.0 / zeta,
            cell,
            f"norm-exponential in J(28)'s eps: zeta x ||x_D - x_D'|| = {zeta:.3g} x "
            f"{spread:.3g} (Jacobian part 0)",
        )
    zeta, moved = node.pvp_zeta[CANARY_NODE], pvp_shift(spec)
    return laplace_canary(
        moved,
        1.0 / zeta,
        cell,
        f"norm-exponential: zeta x the noiseless f_p(1)'s move = {zeta:.3g} x {moved:.3g}",
    )


def _make_cell(spec: _Spec) -> AuditCell:
    values = study_values(spec)
    return AuditCell(
        study=grid.STUDY,
        name=_spec_name(spec),
        claim=DVP_CLAIM if spec.algorithm == "dvp" else PVP_CLAIM,
        algorithm=spec.algorithm,
        claimed_epsilon=ALPHA,  # Theorems 1-2: alpha_p(t) per iteration; one iteration audited
        delta=0.0,  # pure DP (J(17))
        iterations=1,
        released=_released_text(spec),
        canary=_canary_text(spec),
        switches={**grid.switches(values), "eta_choice": spec.why, "samples_per_node": str(SAMPLES_PER_NODE)},
        accountant_epsilon=None,  # one pure alpha-DP release at delta 0: the accountant adds nothing
        noise="norm_exponential",
        premises=_WITHIN,
        project_premises=(f"the penalty eta = {spec.eta:g}: {spec.why}",),
    )


def premise_measures(cell: AuditCell) -> dict[str, float]:
    """Each premise's bound computed on the cell's canary pair (:data:`PREMISES`), from its data alone."""
    (x_d, y_d), (x_n, y_n) = _records(_SPECS[cell.name].algorithm)
    row = canary_row()
    return {
        "record_norm": float(max(np.linalg.norm(x_d[row]), np.linalg.norm(x_n[row]))),
        "label_domain": float(np.count_nonzero(np.abs(np.array([y_d[row], y_n[row]])) != 1.0)),
        "neighbours": differing_records(x_d, y_d, x_n, y_n),
    }


_SPECS = {_spec_name(spec): spec for spec in _AUDITED}
AUDIT_CELLS = tuple(_make_cell(spec) for spec in _AUDITED)


def dvp_noise_of(
    f: np.ndarray, x: np.ndarray, y: np.ndarray, *, c_r: float, ridge: float, offset: np.ndarray
):
    """The DVP noise eps that makes ``f`` (runs, d) the minimiser on rows (x, y), by the KKT map J(28).

    J(28) with L'(z) = -sigmoid(-z) and lambda(0) = 0: eps = sum_i y_i sigmoid(-y_i f^T x_i) x_i
    - (B_p / C^R)(ridge f - offset), ridge = rho + Phi + 2 eta N_p and offset = eta (N_p f_p(0) +
    sum_j f_j(0)) (runs, d), the neighbours' centre term of J(13).
    """
    weight = y * expit(-(f @ x.T) * y)  # (runs, B_p): y_i sigmoid(-m_i)
    return weight @ x - (len(y) / c_r) * (ridge * f - offset)


def dvp_log_jacobian(f: np.ndarray, x: np.ndarray, y: np.ndarray, *, c_r: float, ridge: float) -> np.ndarray:
    """log |det d eps / d f| of J(28), up to a constant.

    That is log det(sum_i L''(m_i) x_i x_i^T + (B_p / C^R) ridge I).

    The density of f is the noise density at J(28)'s eps times this Jacobian (J(29)).
    """
    margin = (f @ x.T) * y
    curvature = expit(margin) * expit(-margin)  # L''(m) of the logistic loss, <= c1 = 1/4
    hessian = np.einsum("rb,bi,bj->rij", curvature, x, x) + (len(y) / c_r) * ridge * np.eye(x.shape[1])
    return np.linalg.slogdet(hessian)[1]


def _node_rows(data: NodeData, node: int) -> tuple[np.ndarray, np.ndarray]:
    size = int(data.sizes[node])
    return data.x[node, :size], data.y[node, :size]


def _dvp_white(spec: _Spec, results: list) -> np.ndarray:
    """LLR of each run's f_p(1) between D and D': log density of J(28)'s eps plus the Jacobian, J(29)-(31)."""
    settings, node = admm_settings(spec), calibration(spec).dvp[CANARY_NODE]
    neighbour_mask = adjacency()[CANARY_NODE]
    degree = neighbour_mask.sum()
    ridge = settings.rho + node.phi + 2.0 * settings.eta * degree  # J(13) with (Phi / 2)||f||^2
    released = np.stack([r.f[1, CANARY_NODE] for r in results])
    start = np.stack([r.f[0] for r in results])  # f(0), public: every node broadcast it
    offset = settings.eta * (degree * start[:, CANARY_NODE] + start[:, neighbour_mask].sum(axis=1))
    log_density = []
    for data in neighbours("dvp"):
        x, y = _node_rows(data, CANARY_NODE)
        noise = dvp_noise_of(released, x, y, c_r=settings.c_r, ridge=ridge, offset=offset)
        jacobian = dvp_log_jacobian(released, x, y, c_r=settings.c_r, ridge=ridge)
        log_density.append(-node.zeta * np.linalg.norm(noise, axis=1) + jacobian)  # K(eps) |det|, J(29)
    return log_density[0] - log_density[1]


def _pvp_white(spec: _Spec, released: np.ndarray, means: list[np.ndarray]) -> np.ndarray:
    """LLR of V_p(1) given the noiseless f_p(1) on D and D' (same start).

    It is zeta (||V - f_D'|| - ||V - f_D||).
    """
    zeta = calibration(spec).pvp_zeta[CANARY_NODE]  # Algorithm 3: zeta = rho B_p alpha / (2 C^R)
    return zeta * (np.linalg.norm(released - means[1], axis=1) - np.linalg.norm(released - means[0], axis=1))


def audit_scores(cell: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
    """Scores of ``runs`` first releases on D (with the canary) and on D', a function of (cell, runs, seed).

    Run i on D and run i on D' share their node generators (common random numbers): each side's
    runs are still independent of one another, which is all the bounds need, and the D' run gives
    the D run's noiseless counterpart f_D'(1) under the same f(0) (PVP draws its noise after the
    minimisation) and vice versa.
    """
    if cell.name not in _SPECS:
        raise ValueError(f"unknown dvp_pvp audit cell {cell.name!r}; expected one of {sorted(_SPECS)}")
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 2:
        raise ValueError(f"an audit needs at least 2 runs per side; got runs={runs!r}")
    spec = _SPECS[cell.name]
    children = [run.spawn(AGENTS) for run in np.random.SeedSequence(seed).spawn(int(runs))]
    results = [_runs(spec, data, children) for data in neighbours(spec.algorithm)]
    axis = np.eye(FEATURES)[1]  # the canary's feature: +1 on D pushes the release up
    if spec.algorithm == "dvp":
        released = [np.stack([r.f[1, CANARY_NODE] for r in side]) for side in results]
        white = [_dvp_white(spec, side) for side in results]
        white_what = (
            "log Q(f_p(1) | D) - log Q(f_p(1) | D'): J(28)'s eps under the declared zeta, with the Jacobian"
        )
    else:
        released = [np.stack([r.broadcast[1, CANARY_NODE] for r in side]) for side in results]
        means = [np.stack([r.f[1, CANARY_NODE] for r in side]) for side in results]
        white = [_pvp_white(spec, v, means) for v in released]
        white_what = (
            "zeta (||V - f_D'(1)|| - ||V - f_D(1)||), the declared zeta, noiseless f(1) from the same start"
        )
    black_what = f"the released {'f_p(1)' if spec.algorithm == 'dvp' else 'V_p(1)'}'s coordinate along e_2"
    return {
        BLACK_BOX: AuditSamples(*(v @ axis for v in released), what=black_what),
        WHITE_BOX: AuditSamples(*white, what=white_what),
    }


# The premises that concern the data, measured on every record of Adult as prepared (issue 58, item
# 3): Assumption 3's ||x_ip|| <= 1 and |y_ip| = 1, which with A1's |L'| <= 1 bound each record's
# loss gradient y L'(y f'x) x by 1.
_RUNS = "every DVP and PVP run (every figure and table of the study)"
DATA_PREMISES = (
    DataPremise(
        "record_norm",
        ("adult",),
        1.0,
        "||x_i|| of each record (with |y_i| = 1 and |L'| <= 1, A1, the bound on its loss gradient)",
        lambda arrays: np.linalg.norm(arrays["X"], axis=1),
        _RUNS,
    ),
    DataPremise(
        "label_domain",
        ("adult",),
        0.0,
        "1 for each record whose label is not +-1",
        lambda arrays: (np.abs(np.asarray(arrays["y"], dtype=float)) != 1.0).astype(float),
        _RUNS,
    ),
)
