"""From scores on neighbouring datasets to a lower bound on epsilon, and a Gaussian-DP fit.

An (epsilon, delta)-DP mechanism limits every test that tells D from D': its true positive rate
(TPR) and false positive rate (FPR) satisfy TPR <= e^eps FPR + delta and
1 - FPR <= e^eps (1 - TPR) + delta (Kairouz, Oh & Viswanath 2015, Theorem 2.1). With the rates
bounded by Clopper-Pearson intervals, the smallest epsilon consistent with both is a lower bound
on the mechanism's epsilon at the stated confidence (Jagielski, Ullman & Oprea 2020, Section 3).

The threshold is chosen on the first half of the runs and the rates counted on the second half,
so one threshold is tested and no correction for the search is needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from dpdl.audit.cells import AuditSamples


@dataclass(frozen=True)
class AuditBound:
    """The lower bound on epsilon from one set of scores, with what it was computed from."""

    epsilon: float  # the lower bound eps_LB (>= 0) at ``confidence``
    threshold: float  # scores >= threshold are called "D"
    tpr: float  # on the evaluation half
    fpr: float
    runs: int  # per side, both halves
    evaluated: int  # per side, the evaluation half
    ceiling: float  # the largest eps_LB these runs could give (no error on either side)
    confidence: float


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds (lower, upper), each holding with probability ``confidence``.

    Clopper & Pearson (1934): the lower bound is the (1 - confidence) quantile of
    Beta(k, n - k + 1), the upper the ``confidence`` quantile of Beta(k + 1, n - k).
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"clopper_pearson needs 0 <= successes <= trials and trials >= 1, got {successes}/{trials}"
        )
    low = 0.0 if successes == 0 else float(stats.beta.ppf(1 - confidence, successes, trials - successes + 1))
    high = (
        1.0 if successes == trials else float(stats.beta.ppf(confidence, successes + 1, trials - successes))
    )
    return low, high


def epsilon_from_rates(tpr: float, fpr: float, delta: float) -> float:
    """The smallest epsilon allowing these rates at ``delta`` (Kairouz et al. 2015, Theorem 2.1), >= 0."""
    candidates = [0.0]
    if fpr > 0 and tpr - delta > 0:
        candidates.append(math.log((tpr - delta) / fpr))  # TPR <= e^eps FPR + delta
    if tpr < 1 and 1 - fpr - delta > 0:
        candidates.append(math.log((1 - fpr - delta) / (1 - tpr)))  # TNR <= e^eps FNR + delta
    if (fpr == 0 and tpr > delta) or (tpr == 1 and 1 - fpr > delta):
        return math.inf
    return max(candidates)


def epsilon_bound_from_counts(
    true_pos: int, false_pos: int, runs: int, delta: float, confidence: float
) -> float:
    """eps_LB from counts on ``runs`` runs per side: TPR's lower and FPR's upper Clopper-Pearson bounds.

    The two bounds each hold with probability 1 - (1 - confidence) / 2, so both hold together with
    probability ``confidence`` (Bonferroni), and so does the epsilon computed from them.
    """
    each = 1 - (1 - confidence) / 2
    tpr_low, _ = clopper_pearson(true_pos, runs, each)
    _, fpr_high = clopper_pearson(false_pos, runs, each)
    return epsilon_from_rates(tpr_low, fpr_high, delta)


def _counts_at(
    canary: np.ndarray, neighbour: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives (score >= threshold) for every threshold, by sorting once."""
    canary_sorted = np.sort(canary)
    neighbour_sorted = np.sort(neighbour)
    true_pos = canary.size - np.searchsorted(canary_sorted, thresholds, side="left")
    false_pos = neighbour.size - np.searchsorted(neighbour_sorted, thresholds, side="left")
    return true_pos, false_pos


def _best_threshold(canary: np.ndarray, neighbour: np.ndarray, delta: float, confidence: float) -> float:
    """The threshold whose Clopper-Pearson eps_LB on the selection half is largest (vectorised)."""
    thresholds = np.unique(np.concatenate([canary, neighbour]))
    true_pos, false_pos = _counts_at(canary, neighbour, thresholds)
    n, each = canary.size, 1 - (1 - confidence) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr_low = np.where(true_pos > 0, stats.beta.ppf(1 - each, true_pos, n - true_pos + 1), 0.0)
        fpr_high = np.where(false_pos < n, stats.beta.ppf(each, false_pos + 1, n - false_pos), 1.0)
        forward = np.log((tpr_low - delta) / fpr_high)  # TPR <= e^eps FPR + delta
        backward = np.log((1 - fpr_high - delta) / (1 - tpr_low))  # TNR <= e^eps FNR + delta
    bounds = np.fmax(
        np.nan_to_num(forward, nan=0.0, posinf=0.0), np.nan_to_num(backward, nan=0.0, posinf=0.0)
    )
    return float(thresholds[int(np.argmax(bounds))])


def epsilon_lower_bound(samples: AuditSamples, delta: float, confidence: float = 0.95) -> AuditBound:
    """eps_LB from the scores: threshold chosen on the first half of the runs, bound from the second."""
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    runs = samples.canary.size
    half = runs // 2
    if half < 1 or runs - half < 1:
        raise ValueError(f"an audit needs at least 2 runs per side, got {runs}")
    threshold = _best_threshold(samples.canary[:half], samples.neighbour[:half], delta, confidence)
    evaluation_canary, evaluation_neighbour = samples.canary[half:], samples.neighbour[half:]
    evaluated = evaluation_canary.size
    true_pos = int(np.count_nonzero(evaluation_canary >= threshold))
    false_pos = int(np.count_nonzero(evaluation_neighbour >= threshold))
    return AuditBound(
        epsilon=epsilon_bound_from_counts(true_pos, false_pos, evaluated, delta, confidence),
        threshold=threshold,
        tpr=true_pos / evaluated,
        fpr=false_pos / evaluated,
        runs=runs,
        evaluated=evaluated,
        ceiling=epsilon_bound_from_counts(evaluated, 0, evaluated, delta, confidence),
        confidence=confidence,
    )


def gaussian_dp_delta(mu: float, epsilon: float) -> float:
    """delta(eps) of mu-Gaussian DP (Dong, Roth & Su 2022, Corollary 2.13)."""
    if mu <= 0:
        return 0.0
    # e^eps Phi(.), in logs: no overflow
    tail = math.exp(epsilon + float(stats.norm.logcdf(-epsilon / mu - mu / 2)))
    return float(stats.norm.cdf(-epsilon / mu + mu / 2)) - tail


def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon with delta(eps) <= ``delta`` for mu-Gaussian DP (Corollary 2.13), >= 0."""
    if mu <= 0 or gaussian_dp_delta(mu, 0.0) <= delta:
        return 0.0
    high = 1.0
    while gaussian_dp_delta(mu, high) > delta:
        high *= 2
    return float(optimize.brentq(lambda eps: gaussian_dp_delta(mu, eps) - delta, 0.0, high, xtol=1e-10))


@dataclass(frozen=True)
class GaussianFit:
    """mu of the Gaussian-DP curve fitted to the scores, with its lower confidence bound, as epsilon."""

    mu: float
    mu_low: float
    epsilon: float  # at delta, from mu
    epsilon_low: float  # at delta, from mu_low


def gaussian_dp_fit(samples: AuditSamples, delta: float, confidence: float = 0.95) -> GaussianFit:
    """Fit mu-GDP to scores that are the log-likelihood ratio of Gaussian releases.

    For a Gaussian release with mean shift Delta and standard deviation s, the log-likelihood ratio
    computed with any declared scale is Gaussian with the same spread on both sides and means
    Delta/s apart in units of that spread, so mu = (mean on D - mean on D') / pooled sd is the
    release's Gaussian-DP parameter (Dong, Roth & Su 2022, Definition 2.6; the composition of k
    Gaussian releases is sqrt(sum mu_i^2)-GDP, their Corollary 3.3). The lower bound uses the
    large-sample standard error of a standardised mean difference, sqrt(2/n + d^2/(4n))
    (Hedges & Olkin 1985, eq. 5.14 with n per side). An estimate under the Gaussian assumption,
    not a guarantee like :func:`epsilon_lower_bound`.
    """
    canary, neighbour = samples.canary, samples.neighbour
    n = canary.size
    spread = math.sqrt((canary.var(ddof=1) + neighbour.var(ddof=1)) / 2)
    if spread == 0:
        raise ValueError("a Gaussian-DP fit needs scores that vary within each side")
    mu = float((canary.mean() - neighbour.mean()) / spread)
    error = math.sqrt(2 / n + mu**2 / (4 * n))
    mu_low = max(0.0, mu - float(stats.norm.ppf(confidence)) * error)
    return GaussianFit(
        mu=max(mu, 0.0),
        mu_low=mu_low,
        epsilon=gaussian_dp_epsilon(max(mu, 0.0), delta),
        epsilon_low=gaussian_dp_epsilon(mu_low, delta),
    )


@dataclass(frozen=True)
class LaplaceFit:
    """epsilon of the Laplace mechanism fitted to the scores, with its lower confidence bound.

    The fitted epsilon is the shift over the scale.
    """

    epsilon: float
    epsilon_low: float
    scale: float  # the fitted Laplace scale b, in the score's units


def laplace_dp_fit(samples: AuditSamples, confidence: float = 0.95) -> LaplaceFit:
    """Fit the Laplace mechanism to scores that are a Laplace release's coordinate along its shift.

    A release Lap(m, b) on D and Lap(m', b) on D' is |m - m'| / b-DP exactly, and no less (Dwork &
    Roth 2014, Theorem 3.6; its tradeoff curve, Dong, Roth & Su 2022, Section 2.3, is that of pure
    |m - m'| / b-DP in the tails). The maximum-likelihood estimates are each side's median for the
    locations and the mean absolute deviation from them, pooled over both sides, for b. Their
    large-sample variances are b^2 / n per median (1 / (4 n f^2), f = 1 / (2b) at the median) and
    b^2 / (2n) for the pooled scale, so the delta method gives eps = (median_D - median_D') / b a
    standard error sqrt(2/n + eps^2 / (2n)) (n per side), and the lower bound is eps minus the
    normal quantile at ``confidence`` times it. An estimate under the Laplace assumption, not a
    guarantee like :func:`epsilon_lower_bound`.
    """
    canary, neighbour = samples.canary, samples.neighbour
    n = canary.size
    centre_d, centre_n = float(np.median(canary)), float(np.median(neighbour))
    scale = float((np.abs(canary - centre_d).sum() + np.abs(neighbour - centre_n).sum()) / (2 * n))
    if scale == 0:
        raise ValueError("a Laplace fit needs scores that vary within each side")
    epsilon = max(0.0, (centre_d - centre_n) / scale)
    error = math.sqrt(2 / n + epsilon**2 / (2 * n))
    return LaplaceFit(epsilon, max(0.0, epsilon - float(stats.norm.ppf(confidence)) * error), scale)
