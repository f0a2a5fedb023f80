"""Privacy events of a run and their composition with Google's ``dp_accounting``.

A run's noisy releases are described by frozen :class:`PrivacyEvent` values (mechanism, noise
multiplier = noise scale / sensitivity, count). :func:`to_dp_event` is the one adapter to
``dp_accounting`` events; :func:`composed_epsilon` composes them with the RDP or the PLD
(pessimistic) accountant. Pure epsilon-DP per-iteration claims can also be composed with the
basic and the advanced (Dwork-Rothblum-Vadhan) theorems (:mod:`dpdl.privacy.theorems`), and
:func:`privacy_record` gives the JSON-safe provenance block of a run artifact.

Sensitivities and noise multipliers are taken with respect to the papers' neighbouring relation
(replace one record). The dominating pair of a Gaussian or Laplace mechanism is then the noise
distribution against its shift by one sensitivity, which is the pair ``dp_accounting`` builds for
its add-or-remove relation with sensitivity 1; the worst pair of a pure epsilon-DP mechanism is
binary randomized response under ``REPLACE_ONE``.
"""

from __future__ import annotations

import importlib.metadata
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import stats

from dpdl.privacy import _checks
from dpdl.privacy.exact import epsilon_root, gaussian_release_epsilon

Mechanism = Literal["gaussian", "laplace", "pure"]
Accountant = Literal["rdp", "pld"]

MECHANISMS: tuple[Mechanism, ...] = ("gaussian", "laplace", "pure")
ACCOUNTANTS: tuple[Accountant, ...] = ("rdp", "pld")

# PLD grid step as a fraction of the smallest per-release privacy-loss scale 1 / noise_multiplier.
# Pessimistic rounding keeps epsilon an upper bound at any step, so the step only trades slack
# for time. A fixed absolute step (the library's 1e-4) is too coarse for long runs of small
# per-release losses (the rounding adds up over releases) and needlessly fine for large ones;
# scaled to the loss, connect-the-dots keeps the slack below 1e-5 relative against a 5x finer
# grid in every case we measured (Gaussian sigma = 2 x 100, Laplace 1/20 x 2e4 in 0.7 s,
# Laplace 1/100 x 1e6 in about 45 s on one core). A step of 1e-1 is 10x faster but 0.25% loose.
PLD_STEP_PER_LOSS_SCALE = 1e-2
# dp-accounting's pessimistic PLD grid evaluates expm1(step), which overflows past a step of about
# 709 (a Gaussian loss scale above 7e4, e.g. OutP at epsilon-bar 5 over 2e4 iterations). Above this
# step, Gaussian-only compositions take their exact epsilon
# (dpdl.privacy.exact.gaussian_release_epsilon).
_PLD_MAX_STEP = 100.0
# Noise calibration stops when the bracket [lo, hi] on the noise multiplier has hi / lo - 1 below
# this; hi (the side whose epsilon is <= the target) is returned.
NOISE_RTOL = 1e-6
# privacy_record lists up to this many events; longer schedules are summarised.
NOISE_SCALES_LISTED = 16


@dataclass(frozen=True, slots=True)
class PrivacyEvent:
    """``count`` releases of one mechanism with the same noise multiplier.

    Parameters
    ----------
    mechanism : {"gaussian", "laplace", "pure"}
        ``"gaussian"``: N(0, sigma^2) noise on a query of l2 sensitivity Delta_2, with
        noise_multiplier = sigma / Delta_2. ``"laplace"``: i.i.d. Laplace(0, b) noise on a query of
        l1 sensitivity Delta_1, with noise_multiplier = b / Delta_1 (so 1 / epsilon of one release).
        ``"pure"``: any release proven epsilon-DP by other means (Zhang & Zhu's DVP and PVP), with
        noise_multiplier = 1 / epsilon; it is accounted as binary randomized response, the worst
        epsilon-DP mechanism, so composed values are upper bounds for every such mechanism.
    noise_multiplier : float
        Noise scale over sensitivity, >= 0 and finite; 0 means a non-private release.
    count : int
        Number of releases (iterations), >= 1.

    Notes
    -----
    A schedule whose noise varies per iteration (OutP's decaying variance) is a sequence of events.
    """

    mechanism: Mechanism
    noise_multiplier: float
    count: int = 1

    def __post_init__(self) -> None:
        _checks.choice("mechanism", self.mechanism, MECHANISMS)
        object.__setattr__(
            self, "noise_multiplier", _checks.nonnegative("noise_multiplier", self.noise_multiplier)
        )
        object.__setattr__(self, "count", _checks.count("count", self.count))


def to_dp_event(events: PrivacyEvent | Iterable[PrivacyEvent]) -> dp_event.DpEvent:
    """Return the ``dp_accounting`` event of a run's releases.

    Parameters
    ----------
    events : PrivacyEvent or iterable of PrivacyEvent
        The run's releases, in any order (composition is commutative).

    Returns
    -------
    dp_accounting.DpEvent
        ``NonPrivateDpEvent`` if any release is non-private; otherwise one ``GaussianDpEvent`` for
        all Gaussian releases, a ``SelfComposedDpEvent`` per distinct Laplace or pure noise
        multiplier, wrapped in a ``ComposedDpEvent`` when there is more than one part.

    Notes
    -----
    Gaussian releases are merged exactly: the privacy loss of a Gaussian mechanism with noise
    multiplier s is N(mu^2 / 2, mu^2) with mu = 1 / s, and independent losses add, so k releases
    with multipliers s_i equal one release with multiplier (sum_i 1 / s_i^2)^(-1/2) (Dong, Roth &
    Su, Gaussian differential privacy, Corollary 3.3). This keeps a 1e6-step decaying schedule a
    single event for both accountants.
    """
    events = _event_tuple(events)
    if any(event.noise_multiplier == 0 for event in events):
        return dp_event.NonPrivateDpEvent()
    parts: list[dp_event.DpEvent] = []
    gaussian = [event for event in events if event.mechanism == "gaussian"]
    if gaussian:
        parts.append(dp_event.GaussianDpEvent(_merged_gaussian_noise_multiplier(gaussian)))
    for (mechanism, noise_multiplier), total in _grouped_counts(events).items():
        if mechanism == "laplace":
            parts.append(dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(noise_multiplier), total))
        elif mechanism == "pure":
            response = dp_event.RandomizedResponseDpEvent(_randomized_response_noise(noise_multiplier), 2)
            parts.append(dp_event.SelfComposedDpEvent(response, total))
    return parts[0] if len(parts) == 1 else dp_event.ComposedDpEvent(parts)


def composed_epsilon(
    events: PrivacyEvent | Iterable[PrivacyEvent], delta: float, accountant: Accountant = "rdp"
) -> float:
    """Return the epsilon at ``delta`` of all releases composed, from RDP or PLD accounting.

    Parameters
    ----------
    events : PrivacyEvent or iterable of PrivacyEvent
        The run's releases; at least one.
    delta : float
        Target delta in (0, 1).
    accountant : {"rdp", "pld"}
        ``"rdp"``: ``dp_accounting``'s RDP accountant (default orders). ``"pld"``: its privacy
        loss distribution accountant, pessimistic estimate, grid step
        ``PLD_STEP_PER_LOSS_SCALE`` times the smallest per-release loss scale.

    Returns
    -------
    float
        Composed epsilon (an upper bound); ``math.inf`` when any release is non-private.

    Notes
    -----
    RDP uses the REPLACE_ONE relation, which only the randomized-response (``"pure"``) events
    read. Under PLD, ``"pure"`` events must all share one noise multiplier and cannot be mixed
    with Gaussian or Laplace ones: their epsilon is the exact hockey-stick divergence of T-fold
    binary randomized response (the optimal composition of Kairouz, Oh & Viswanath, ICML 2015,
    Theorem 3.3) from the binomial distribution, with no grid. ``PLDAccountant`` is not used for
    them because dp-accounting 0.6.0 ignores the count of a self-composed
    ``RandomizedResponseDpEvent`` and refuses Laplace under REPLACE_ONE.
    """
    events = _event_tuple(events)
    delta = _checks.open_unit("delta", delta)
    _checks.choice("accountant", accountant, ACCOUNTANTS)
    if any(event.noise_multiplier == 0 for event in events):
        return math.inf
    if accountant == "rdp":
        rdp = rdp_privacy_accountant.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
        return float(rdp.compose(to_dp_event(events)).get_epsilon(delta))
    if any(event.mechanism == "pure" for event in events):
        return _pure_pld_epsilon(events, delta)
    step = PLD_STEP_PER_LOSS_SCALE * min(_loss_scales(events))
    if step > _PLD_MAX_STEP and all(event.mechanism == "gaussian" for event in events):
        return gaussian_release_epsilon(_merged_gaussian_noise_multiplier(events), delta)
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=step)
    return float(pld.compose(to_dp_event(events)).get_epsilon(delta))


def gaussian_composed_epsilon(
    noise_multiplier: float, count: int, delta: float, accountant: Accountant = "rdp"
) -> float:
    """Return the epsilon at ``delta`` of ``count`` Gaussian releases with one noise multiplier.

    Parameters
    ----------
    noise_multiplier : float
        sigma / Delta_2 of each release, >= 0.
    count : int
        Number of releases T >= 1.
    delta : float
        Target delta in (0, 1).
    accountant : {"rdp", "pld"}
        Accountant, as in :func:`composed_epsilon`.

    Returns
    -------
    float
        Composed epsilon; ``math.inf`` for noise_multiplier 0.
    """
    return composed_epsilon(PrivacyEvent("gaussian", noise_multiplier, count), delta, accountant)


def laplace_composed_epsilon(
    epsilon_per_iteration: float, count: int, delta: float, accountant: Accountant = "rdp"
) -> float:
    """Return the epsilon at ``delta`` of ``count`` Laplace releases, each epsilon_per_iteration-DP.

    Parameters
    ----------
    epsilon_per_iteration : float
        Per-release epsilon = Delta_1 / b in (0, inf]; ``inf`` is a non-private release.
    count : int
        Number of releases T >= 1.
    delta : float
        Target delta in (0, 1).
    accountant : {"rdp", "pld"}
        Accountant, as in :func:`composed_epsilon`.

    Returns
    -------
    float
        Composed epsilon; ``math.inf`` when epsilon_per_iteration is ``inf``.
    """
    epsilon = _checks.positive("epsilon_per_iteration", epsilon_per_iteration, allow_inf=True)
    return composed_epsilon(PrivacyEvent("laplace", 1.0 / epsilon, count), delta, accountant)


def noise_for_target_epsilon(
    target_epsilon: float,
    delta: float,
    *,
    count: int,
    mechanism: Mechanism = "gaussian",
    accountant: Accountant = "rdp",
    rtol: float = NOISE_RTOL,
) -> float:
    """Return the smallest noise multiplier (to ``rtol``) whose composed epsilon is <= the target.

    Parameters
    ----------
    target_epsilon : float
        Composed epsilon to reach, in (0, inf]; ``inf`` returns 0 (no noise).
    delta : float
        Delta in (0, 1).
    count : int
        Number of releases T >= 1, all with the returned noise multiplier.
    mechanism : {"gaussian", "laplace", "pure"}
        Mechanism of every release.
    accountant : {"rdp", "pld"}
        Accountant used for every evaluation, as in :func:`composed_epsilon`.
    rtol : float
        Relative width of the final bracket, in (0, 1).

    Returns
    -------
    float
        Noise multiplier s with ``composed_epsilon([PrivacyEvent(mechanism, s, count)]) <=
        target_epsilon``; it errs toward more noise by at most a factor 1 + rtol.

    Notes
    -----
    Bisection on log(s) through the accountant itself, after doubling or halving to bracket the
    target; epsilon decreases as s grows.
    """
    target = _checks.positive("target_epsilon", target_epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    count = _checks.count("count", count)
    _checks.choice("mechanism", mechanism, MECHANISMS)
    _checks.choice("accountant", accountant, ACCOUNTANTS)
    rtol = _checks.open_unit("rtol", rtol)
    if math.isinf(target):
        return 0.0

    def epsilon_of(noise_multiplier: float) -> float:
        return composed_epsilon(PrivacyEvent(mechanism, noise_multiplier, count), delta, accountant)

    low = high = 1.0
    while epsilon_of(high) > target:
        low, high = high, 2.0 * high
    while epsilon_of(low) <= target:
        low, high = 0.5 * low, low
    while high / low - 1.0 > rtol:
        middle = math.sqrt(low * high)
        if epsilon_of(middle) <= target:
            high = middle
        else:
            low = middle
    return high


def privacy_record(
    events: PrivacyEvent | Iterable[PrivacyEvent], *, delta: float, eps_per_iteration: float | None
) -> dict:
    """Return the JSON-safe privacy provenance block of a run artifact.

    Parameters
    ----------
    events : PrivacyEvent or iterable of PrivacyEvent
        The run's releases (for one agent or node: the one whose privacy is reported).
    delta : float
        Delta in (0, 1) at which composed epsilons are reported.
    eps_per_iteration : float or None
        The per-iteration epsilon as the paper states it; None when the paper states none.

    Returns
    -------
    dict
        ``eps_per_iteration`` (float or None), ``eps_composed_rdp`` and ``eps_composed_pld``
        (floats, None for a non-private run), ``delta``, ``accountant`` (``name`` and ``version``
        of dp-accounting), and ``noise_scales``: a list of ``{"mechanism", "noise_multiplier",
        "count"}`` for up to ``NOISE_SCALES_LISTED`` events, else a summary dict with ``min``,
        ``max``, ``first``, ``last`` (noise multipliers), ``count`` (total releases) and
        ``mechanisms``.
    """
    events = _event_tuple(events)
    delta = _checks.open_unit("delta", delta)
    if eps_per_iteration is not None:
        eps_per_iteration = _checks.positive("eps_per_iteration", eps_per_iteration, allow_inf=True)
    return {
        "eps_per_iteration": _finite_or_none(eps_per_iteration),
        "eps_composed_rdp": _finite_or_none(composed_epsilon(events, delta, "rdp")),
        "eps_composed_pld": _finite_or_none(composed_epsilon(events, delta, "pld")),
        "delta": delta,
        "accountant": {
            "name": "dp_accounting",
            "version": importlib.metadata.version("dp-accounting"),
        },
        "noise_scales": _noise_scales(events),
    }


def _event_tuple(events: PrivacyEvent | Iterable[PrivacyEvent]) -> tuple[PrivacyEvent, ...]:
    events = (events,) if isinstance(events, PrivacyEvent) else tuple(events)
    if not events:
        raise ValueError("events must hold at least one PrivacyEvent; got none")
    for event in events:
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"events must be PrivacyEvent values; got {type(event).__name__}")
    return events


def _merged_gaussian_noise_multiplier(events: Sequence[PrivacyEvent]) -> float:
    return math.fsum(event.count / event.noise_multiplier**2 for event in events) ** -0.5


def _grouped_counts(events: Sequence[PrivacyEvent]) -> dict[tuple[str, float], int]:
    totals: dict[tuple[str, float], int] = defaultdict(int)
    for event in events:
        totals[(event.mechanism, event.noise_multiplier)] += event.count
    return totals


def _randomized_response_noise(noise_multiplier: float) -> float:
    # Binary randomized response keeps the true bit w.p. 1 - p/2, so e^eps = (2 - p) / p and
    # p = 2 / (1 + e^eps), written with e^-eps so that a large eps cannot overflow.
    decay = math.exp(-1.0 / noise_multiplier)
    return 2.0 * decay / (1.0 + decay)


def _loss_scales(events: Sequence[PrivacyEvent]) -> list[float]:
    scales = [1.0 / event.noise_multiplier for event in events if event.mechanism != "gaussian"]
    gaussian = [event for event in events if event.mechanism == "gaussian"]
    if gaussian:
        scales.append(1.0 / _merged_gaussian_noise_multiplier(gaussian))
    return scales


def _pure_pld_epsilon(events: Sequence[PrivacyEvent], delta: float) -> float:
    groups = _grouped_counts(events)
    if len(groups) > 1 or any(event.mechanism != "pure" for event in events):
        raise ValueError(
            f"events must be 'pure' releases with one noise_multiplier for the PLD accountant; got {sorted(groups)}"
        )
    (((_, noise_multiplier), total),) = groups.items()
    epsilon = 1.0 / noise_multiplier
    keep = 1.0 / (1.0 + math.exp(-epsilon))  # P(true bit) = e^eps / (1 + e^eps)

    def excess_delta(total_epsilon: float) -> float:
        # Hockey stick of T-fold randomized response: the loss is eps (2K - T) with K ~ Bin(T, keep)
        # under P and K ~ Bin(T, 1 - keep) under Q; delta(e) = P(L > e) - e^e Q(L > e).
        threshold = math.floor((total + total_epsilon / epsilon) / 2.0)
        tail_p = stats.binom.sf(threshold, total, keep)
        tail_q = math.exp(total_epsilon + stats.binom.logsf(threshold, total, 1.0 - keep))
        return tail_p - tail_q - delta

    return epsilon_root(excess_delta, total * epsilon)


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else float(value)


def _noise_scales(events: Sequence[PrivacyEvent]) -> list[dict] | dict:
    if len(events) <= NOISE_SCALES_LISTED:
        return [
            {
                "mechanism": e.mechanism,
                "noise_multiplier": float(e.noise_multiplier),
                "count": e.count,
            }
            for e in events
        ]
    multipliers = [float(event.noise_multiplier) for event in events]
    return {
        "min": min(multipliers),
        "max": max(multipliers),
        "first": multipliers[0],
        "last": multipliers[-1],
        "count": sum(event.count for event in events),
        "mechanisms": sorted({event.mechanism for event in events}),
    }
