"""The wddp claims (wddp.md 7.3), judged from the figure aggregates.

"Within the seed spread": a difference no larger than the wider of the two 20-80 percentile bands
compared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from dpdl import claims as claims_lib
from dpdl.studies.wddp.grid import DATASETS, FIGURES, METRICS, NONPRIVATE, STUDY

Evaluator = Callable[[pd.DataFrame], claims_lib.Evidence]

PAPER_SCALE = {"seeds": 10, "iterations": 1000}  # R = 10 (wddp.md 4.4, A17), T = 1000 (Section 5)
SPREAD = "difference within the wider 20-80 percentile band over seeds"
BANDS = "20-80 percentile bands over seeds"


def _width(row: pd.Series) -> float:
    return float(row["hi"] - row["lo"])


def _private(agg: pd.DataFrame, metric: str) -> pd.DataFrame:
    return agg[(agg["metric"] == metric) & (agg["algorithm"] != NONPRIVATE)]


def _monotone(metric: str, direction: int) -> Evaluator:
    """Claim test: the metric moves in ``direction`` (+1 up, -1 down) with epsilon, within the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        worst, pairs, violations = None, 0, 0
        for key, rows in _private(agg, metric).groupby(["dataset", "clients", "algorithm"]):
            rows = rows.sort_values("epsilon")
            for (_, a), (_, b) in zip(rows.iloc[:-1].iterrows(), rows.iloc[1:].iterrows(), strict=True):
                pairs += 1
                excess = direction * (a["mean"] - b["mean"]) - max(_width(a), _width(b))
                if excess > 0:
                    violations += 1
                if worst is None or excess > worst[0]:
                    worst = (excess, key, a["epsilon"], b["epsilon"], a["mean"], b["mean"])
        if not pairs:
            return claims_lib.Evidence(None, False, detail="fewer than two epsilons in the grid")
        cell = ", ".join(str(k) for k in worst[1])
        detail = (
            f"worst step: {cell}, eps {worst[2]:g} -> {worst[3]:g}: {worst[4]:.4g} -> {worst[5]:.4g}"
            f" (beyond the spread by {max(worst[0], 0):.3g})"
        )
        return claims_lib.Evidence(
            f"{violations} of {pairs} steps against the trend", violations == 0, spread=BANDS, detail=detail
        )

    return evaluate


def _paired(agg: pd.DataFrame, metric: str, a: str, b: str, keys: list[str]) -> pd.DataFrame:
    rows = _private(agg, metric)
    left = rows[rows["algorithm"] == a].set_index(keys)
    right = rows[rows["algorithm"] == b].set_index(keys)
    both = pd.merge(
        left[["mean", "lo", "hi"]],
        right[["mean", "lo", "hi"]],
        left_index=True,
        right_index=True,
        suffixes=("_a", "_b"),
    )
    both["width"] = np.maximum(both["hi_a"] - both["lo_a"], both["hi_b"] - both["lo_b"])
    return both.reset_index()


def _agree(a: str, b: str, keys: list[str]) -> Evaluator:
    """Claim test: methods a and b agree (accuracy and gap) in every cell, within the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        frames = [_paired(agg, metric, a, b, keys).assign(metric=metric) for metric in METRICS]
        both = pd.concat(frames, ignore_index=True)
        if both.empty:
            return claims_lib.Evidence(None, False, detail=f"no cells with both {a} and {b}")
        both["excess"] = (both["mean_a"] - both["mean_b"]).abs() - both["width"]
        worst = both.loc[both["excess"].idxmax()]
        agree = int((both["excess"] <= 0).sum())
        cell = ", ".join(f"{k} {worst[k]:g}" if k != "dataset" else str(worst[k]) for k in keys)
        detail = (
            f"largest difference beyond the spread: {worst['metric']} at {cell}: "
            f"{a} {worst['mean_a']:.4g} vs {b} {worst['mean_b']:.4g} (band width {worst['width']:.3g})"
        )
        return claims_lib.Evidence(
            f"{agree} of {len(both)} cells agree", agree == len(both), spread=BANDS, detail=detail
        )

    return evaluate


def _steady(method: str, over: str, keys: list[str]) -> Evaluator:
    """Claim test: a method's mean varies over ``over`` by no more than its widest band (each metric)."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        cells, steady, worst = 0, 0, None
        for metric in METRICS:
            rows = _private(agg, metric)
            for key, group in rows[rows["algorithm"] == method].groupby(keys):
                if group[over].nunique() < 2:
                    continue
                cells += 1
                excess = (group["mean"].max() - group["mean"].min()) - (group["hi"] - group["lo"]).max()
                steady += excess <= 0
                if worst is None or excess > worst[0]:
                    worst = (excess, metric, key, group["mean"].min(), group["mean"].max())
        if not cells:
            return claims_lib.Evidence(None, False, detail=f"needs at least two values of {over}")
        cell = ", ".join(str(k) for k in (worst[2] if isinstance(worst[2], tuple) else (worst[2],)))
        detail = f"widest range: {worst[1]} at {cell}: {worst[3]:.4g} .. {worst[4]:.4g}"
        return claims_lib.Evidence(f"{steady} of {cells} curves steady", steady == cells, spread=BANDS, detail=detail)

    return evaluate


def _wddp_not_worse(keys: list[str], uneven_only: bool) -> Evaluator:
    """Claim test: WD-DP is never worse than the averaged baseline beyond the spread, and its gap is
    lower in most cells."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        acc = _paired(agg, "accuracy", "wddp", "dist_avg", keys)
        gap = _paired(agg, "gap", "wddp", "dist_avg", keys)
        if uneven_only:
            acc, gap = acc[acc["unevenness"] > 1], gap[gap["unevenness"] > 1]
        if gap.empty:
            return claims_lib.Evidence(None, False, detail="no uneven cells in the grid")
        worse_acc = (acc["mean_b"] - acc["mean_a"] - acc["width"] > 0).sum()
        worse_gap = (gap["mean_a"] - gap["mean_b"] - gap["width"] > 0).sum()
        lower = float((gap["mean_a"] < gap["mean_b"]).mean())
        ratio = float(np.median(gap["mean_b"] / gap["mean_a"]))
        holds = worse_acc == 0 and worse_gap == 0 and lower > 0.5
        detail = (
            f"cells where the baseline is better beyond the spread: accuracy {worse_acc}, gap {worse_gap}; "
            f"median gap ratio baseline / WD-DP {ratio:.3g}"
        )
        return claims_lib.Evidence(
            f"WD-DP gap lower in {lower:.0%} of {len(gap)} cells", holds, spread=BANDS, detail=detail
        )

    return evaluate


def _agree_at_u1() -> Evaluator:
    """Claim test: WD-DP and the baseline agree at u = 1 (accuracy and gap), within the spread."""
    agree = _agree("wddp", "dist_avg", ["dataset", "clients", "unevenness"])

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        even = agg[agg["unevenness"] == 1]
        if even.empty:
            return claims_lib.Evidence(None, False, detail="u = 1 is not in the grid")
        return agree(even)

    return evaluate


def _at_u(agg: pd.DataFrame, metric: str, method: str, u: float) -> pd.DataFrame:
    rows = _private(agg, metric)
    return rows[(rows["algorithm"] == method) & (rows["unevenness"] == u)].set_index(["dataset", "clients"])


def _baseline_degrades(metric: str, direction: int) -> Evaluator:
    """Claim test: the baseline's metric at the largest u differs from u = 1 in ``direction`` beyond the spread."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        rows = _private(agg, metric)
        if rows.empty or 1 not in set(rows["unevenness"]) or rows["unevenness"].max() <= 1:
            return claims_lib.Evidence(None, False, detail="needs u = 1 and a larger u in the grid")
        u_max = rows["unevenness"].max()
        low, high = _at_u(agg, metric, "dist_avg", 1), _at_u(agg, metric, "dist_avg", u_max)
        both = pd.merge(low, high, left_index=True, right_index=True, suffixes=("_1", "_max"))
        width = np.maximum(both["hi_1"] - both["lo_1"], both["hi_max"] - both["lo_max"])
        change = direction * (both["mean_max"] - both["mean_1"])
        holds = int((change > width).sum())
        detail = "; ".join(f"{d} m={m}: {r['mean_1']:.4g} -> {r['mean_max']:.4g}" for (d, m), r in both.iterrows())
        return claims_lib.Evidence(
            f"{holds} of {len(both)} settings, u = 1 -> {u_max:g}", holds == len(both), spread=BANDS, detail=detail
        )

    return evaluate


def _strongest_at_smallest_epsilon(agg: pd.DataFrame) -> claims_lib.Evidence:
    """Claim test: the baseline's accuracy loss from u = 1 to the largest u is larger at (8, 0.01) than at (32, 0.1)."""
    rows = _private(agg, "accuracy")
    if rows.empty or 1 not in set(rows["unevenness"]) or rows["unevenness"].max() <= 1:
        return claims_lib.Evidence(None, False, detail="needs u = 1 and a larger u in the grid")
    u_max = rows["unevenness"].max()
    drop = _at_u(agg, "accuracy", "dist_avg", 1)["mean"] - _at_u(agg, "accuracy", "dist_avg", u_max)["mean"]
    pairs = []
    for dataset in drop.index.get_level_values("dataset").unique():
        if (dataset, 8) in drop.index and (dataset, 32) in drop.index:
            pairs.append((dataset, drop[(dataset, 8)], drop[(dataset, 32)]))
    if not pairs:
        return claims_lib.Evidence(None, False, detail="needs the (8, 0.01) and (32, 0.1) settings")
    holds = all(small > large for _, small, large in pairs)
    detail = "; ".join(f"{d}: drop {s:.4g} at (8, 0.01) vs {g:.4g} at (32, 0.1)" for d, s, g in pairs)
    return claims_lib.Evidence(f"{sum(s > g for _, s, g in pairs)} of {len(pairs)} datasets", holds, detail=detail)


def _nonprivate_accuracy(dataset: str, low: float, high: float) -> Evaluator:
    """Claim test: theta*'s test accuracy lies in [low, high]."""

    def evaluate(agg: pd.DataFrame) -> claims_lib.Evidence:
        rows = agg[(agg["algorithm"] == NONPRIVATE) & (agg["dataset"] == dataset)]
        if rows.empty:
            return claims_lib.Evidence(None, False, detail=f"no {dataset} rows (data unavailable)")
        value = float(rows["mean"].iloc[0])
        return claims_lib.Evidence(
            round(value, 4), low <= value <= high, detail="test accuracy of theta* (L2 as configured)"
        )

    return evaluate


def _claim(
    id_: str,
    where: str,
    statement: str,
    paper_value: str,
    tolerance: str,
    justification: str,
    aggregate: str,
    evaluate: Evaluator,
    needs: Mapping[str, float],
) -> claims_lib.Claim:
    return claims_lib.Claim(
        f"{STUDY}.{id_}",
        STUDY,
        where,
        statement,
        paper_value,
        tolerance,
        justification,
        aggregate,
        evaluate,
        dict(needs),
    )


UNEVEN_SCALE = {**PAPER_SCALE, "max_unevenness": 9}
CLAIMS = [
    _claim(
        "accuracy_rises_with_epsilon",
        where="Figs 1, 4, 6, 8, 10; Section 5 text",
        statement="Performance is becoming better when ε increases (every method, dataset and m)",
        paper_value="qualitative",
        tolerance=f"no step to a larger ε lowers mean accuracy by more than the spread ({SPREAD})",
        justification="the paper prints no numbers; seed noise is the only yardstick",
        aggregate="versus_epsilon",
        evaluate=_monotone("accuracy", +1),
        needs=PAPER_SCALE,
    ),
    _claim(
        "gap_falls_with_epsilon",
        where="Figs 3, 5, 7, 9, 11; Section 5 text",
        statement="With the increasing of ε, the optimal gap decreases",
        paper_value="qualitative",
        tolerance=f"no step to a larger ε raises the mean gap by more than the spread ({SPREAD})",
        justification="as above",
        aggregate="versus_epsilon",
        evaluate=_monotone("gap", -1),
        needs=PAPER_SCALE,
    ),
    _claim(
        "wddp_matches_central",
        where="Figs 1, 3-11; wddp.md 7.3 item 2",
        statement="WD-DP is similar to the centralized method (straight up to centralized methods)",
        paper_value="qualitative",
        tolerance=f"accuracy and gap of WD-DP and centralized DP-GD agree in every (dataset, m, ε) cell ({SPREAD})",
        justification="under per-round aggregation both are the same process with independent noise",
        aggregate="versus_epsilon",
        evaluate=_agree("wddp", "central", ["dataset", "clients", "epsilon"]),
        needs=PAPER_SCALE,
    ),
    _claim(
        "wddp_steady_in_m",
        where="Figs 1, 3-11; wddp.md 7.3 item 2",
        statement="WD-DP's curves do not depend on the number of clients m",
        paper_value="qualitative",
        tolerance="for each (dataset, ε, metric) the range of WD-DP's mean over m is within its widest band",
        justification="WD-DP's noise depends on n only (eq. 3)",
        aggregate="versus_epsilon",
        evaluate=_steady("wddp", "clients", ["dataset", "epsilon"]),
        needs={**PAPER_SCALE, "client_counts": 2},
    ),
    _claim(
        "wddp_beats_baseline_random_sizes",
        where="Figs 1, 3-11; Section 5 text",
        statement="WD-DP is better than the method proposed in (Jayaraman et al.) with uneven client sizes",
        paper_value="qualitative",
        tolerance="the baseline is never better beyond the spread (accuracy or gap) and WD-DP's gap is lower in "
        "most cells",
        justification="σ_baseline / σ_WD-DP = n / (m n_(1)) > 1 for uneven sizes (wddp.md 2.4)",
        aggregate="versus_epsilon",
        evaluate=_wddp_not_worse(["dataset", "clients", "epsilon"], uneven_only=False),
        needs=PAPER_SCALE,
    ),
    _claim(
        "wddp_beats_baseline_two_groups",
        where="Figs 2, 12-16; Section 5 text",
        statement="For u > 1 WD-DP is better than the averaged baseline",
        paper_value="qualitative",
        tolerance="as above, over the cells with u > 1",
        justification="σ ratio (1 + u) / 2 for two equal groups (wddp.md 7.3 item 3)",
        aggregate="versus_unevenness",
        evaluate=_wddp_not_worse(["dataset", "clients", "unevenness"], uneven_only=True),
        needs=UNEVEN_SCALE,
    ),
    _claim(
        "equal_at_u1",
        where="Figs 2, 12-16; Section 5 text",
        statement="When u = 1 the accuracy of WD-DP is similar to the method proposed in (Jayaraman et al.)",
        paper_value="qualitative",
        tolerance=f"accuracy and gap of WD-DP and the baseline agree at u = 1 in every setting ({SPREAD})",
        justification="identical weights and σ at an even split (the unit tests check identical trajectories)",
        aggregate="versus_unevenness",
        evaluate=_agree_at_u1(),
        needs=PAPER_SCALE,
    ),
    _claim(
        "baseline_gap_grows_with_u",
        where="Figs 12, 14, 16; Section 5 text",
        statement="The optimal gap of (Jayaraman et al.) increases rapidly or fluctuates sharply as u increases",
        paper_value="qualitative",
        tolerance="the baseline's mean gap at the largest u exceeds u = 1 by more than the spread, every setting",
        justification="its σ grows as (1 + u) / 2",
        aggregate="versus_unevenness",
        evaluate=_baseline_degrades("gap", +1),
        needs=UNEVEN_SCALE,
    ),
    _claim(
        "baseline_accuracy_drops_with_u",
        where="Figs 2, 13, 15; Section 5 text",
        statement="The accuracy of (Jayaraman et al.) decreases rapidly or fluctuates sharply as u increases",
        paper_value="qualitative",
        tolerance="the baseline's mean accuracy at the largest u is below u = 1 by more than the spread, every setting",
        justification="its σ grows as (1 + u) / 2; wddp.md 7.3 item 5 expects it weakest at (32, 0.1)",
        aggregate="versus_unevenness",
        evaluate=_baseline_degrades("accuracy", -1),
        needs=UNEVEN_SCALE,
    ),
    _claim(
        "wddp_steady_in_u",
        where="Figs 2, 12-16; Section 5 text",
        statement="When u increases the accuracy (and optimal gap) of WD-DP is steady",
        paper_value="qualitative",
        tolerance="for each (dataset, setting, metric) the range of WD-DP's mean over u is within its widest band",
        justification="WD-DP's noise depends on n only",
        aggregate="versus_unevenness",
        evaluate=_steady("wddp", "unevenness", ["dataset", "clients"]),
        needs=UNEVEN_SCALE,
    ),
    _claim(
        "degradation_strongest_at_smallest_eps",
        where="Figs 13, 15; wddp.md 7.3 item 5",
        statement="The baseline's degradation in u is strongest at ε = 0.01 (Fig. 15) and weakest at ε = 0.1 (Fig. 13)",
        paper_value="qualitative (note's reading)",
        tolerance="accuracy drop u = 1 -> largest u larger at (m, ε) = (8, 0.01) than at (32, 0.1)",
        justification="larger σ at small ε moves the model further from θ*",
        aggregate="versus_unevenness",
        evaluate=_strongest_at_smallest_epsilon,
        needs=UNEVEN_SCALE,
    ),
    _claim(
        "nonprivate_accuracy_kdd",
        where="wddp.md 7.3 item 6 (sanity; not from the paper)",
        statement="Non-private logistic regression test accuracy on KDD Cup 99",
        paper_value="0.98-0.99",
        tolerance="inside [0.98, 0.99]",
        justification="the note's typical figure for logistic regression on KDD",
        aggregate="nonprivate_kdd",
        evaluate=_nonprivate_accuracy("kdd", 0.98, 0.99),
        needs={},
    ),
    _claim(
        "nonprivate_accuracy_adult",
        where="wddp.md 7.3 item 6 (sanity; not from the paper)",
        statement="Non-private logistic regression test accuracy on Adult",
        paper_value="0.82-0.85",
        tolerance="inside [0.82, 0.85]",
        justification="the note's typical figure for logistic regression on Adult",
        aggregate="nonprivate_adult",
        evaluate=_nonprivate_accuracy("adult", 0.82, 0.85),
        needs={},
    ),
]


def claim_aggregates(frames: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame | None]:
    """The claims' inputs: the epsilon-figure and the u-figure aggregates stacked, and theta*'s rows per dataset."""
    grouped: dict[str, list[pd.DataFrame]] = {"versus_epsilon": [], "versus_unevenness": []}
    for figure, frame in frames.items():
        grouped[f"versus_{FIGURES[figure].experiment}"].append(frame)
    stacked = {name: pd.concat(parts, ignore_index=True) if parts else None for name, parts in grouped.items()}
    for dataset in DATASETS:  # theta*'s rows per dataset; None (data unavailable) when it was not built
        rows = [f[(f["algorithm"] == NONPRIVATE) & (f["dataset"] == dataset)] for f in frames.values()]
        rows = [r for r in rows if not r.empty]
        stacked[f"nonprivate_{dataset}"] = pd.concat(rows, ignore_index=True) if rows else None
    return stacked


def claims_scale(settings: Mapping) -> dict[str, float]:
    """The config values the claims' ``needs`` are compared with."""
    return {
        "seeds": settings["seeds"],
        "iterations": settings["iterations"],
        "client_counts": len(settings["clients"]),
        "max_unevenness": max(settings["unevenness"]),
    }
