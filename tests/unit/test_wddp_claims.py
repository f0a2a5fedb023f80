"""Every wddp claim on fabricated per-seed tables: one world where it holds and one where it does not.

The tables come from one small generator (:func:`world`): every method's accuracy and optimal
gap follow its noise level (ratio / epsilon, where the baseline's ratio is 2 with random sizes
and (1 + u) / 2 with two groups), and each point's seeds spread around its mean by a fixed,
per-cell permuted pattern (so point means are exact and pairs still vary). A broken world changes
one ingredient; :data:`FIXTURES` names, per claim, the world it holds in, the one it fails in and
the verdict it must then get. A claim without a fixture fails :func:`test_every_claim_has_fixtures`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpdl.claims import IMPLEMENTATION_CHECK, MECHANISM_PROPERTY, PAPER_STATEMENT, judge, scorecard
from dpdl.studies.wddp import aggregate, claims, extract, grid
from dpdl.studies.wddp.aggregate import SEED_COLUMNS
from dpdl.verdicts import BOUND_FAILS, NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED, UNAVAILABLE

ROOT = Path(__file__).resolve().parents[2]
PAPER = {"seeds": 10, "iterations": 1000, "client_counts": 5, "epsilon_counts": 6, "max_unevenness": 9}
PAPER_SCALE = {**PAPER, "unevenness_counts": 9}
EPSILONS = (0.01, 0.05, 0.1, 0.15, 0.2, 0.25)
UNEVENNESS = (1, 2, 3, 5, 7, 9)
CLIENTS = (2, 32)
SEEDS = 10

Level = Callable[[str, int, float, int | None], float]  # (method, m, epsilon, u or None) -> noise level
Spread = Callable[[str, int | None], float]  # (method, u or None) -> seed spread factor


def ratio(method: str, u: int | None) -> float:
    """The baseline's noise ratio n / (m n_(1)): 2 with random sizes, (1 + u) / 2 with two groups."""
    if method != "dist_avg":
        return 1.0
    return 2.0 if u is None else (1 + u) / 2


def level(method: str, clients: int, epsilon: float, u: int | None) -> float:
    return ratio(method, u) / epsilon


def spread(method: str, u: int | None) -> float:
    return ratio(method, u) ** 2


def accuracy(noise: float) -> float:
    return 0.5 + 0.45 * np.exp(-noise / 250)


THETA_STAR = {"kdd": 0.99, "adult": 0.85, "bank": 0.9, "breast_cancer": 0.96, "credit_card": 0.93}


def world(
    level: Level = level,
    spread: Spread = spread,
    *,
    theta_star: dict | None = None,
    sizes: dict | None = None,
    seeds: int = SEEDS,
    datasets: tuple[str, ...] = ("kdd", "adult"),
) -> dict[str, pd.DataFrame | None]:
    """The claims' tables (:func:`aggregate.claim_tables`) of a fabricated build: figures' per-seed tables and cards.

    Runs on ``datasets`` (each with its own u grid, :func:`grid.unevenness_values`); theta*'s row on every dataset
    of ``theta_star`` (the sanity claims of every panel)."""
    rng = np.random.default_rng(0)
    pattern = np.linspace(-1.5, 1.5, seeds)
    theta_star = {**THETA_STAR, **(theta_star or {})}
    frames = {}
    for figure, spec in grid.FIGURES.items():
        if spec.experiment == "epsilon" and spec.clients not in CLIENTS:
            continue
        rows = []
        for dataset in datasets:
            u_grid = grid.unevenness_values({"unevenness": UNEVENNESS}, dataset)
            cells = (
                [(e, None) for e in EPSILONS]
                if spec.experiment == "epsilon"
                else [(spec.epsilon, u) for u in u_grid]
            )
            for epsilon, u in cells:
                for method in grid.PRIVATE_METHODS:
                    noise = level(method, spec.clients, epsilon, u)
                    z = rng.permutation(pattern) * spread(method, u)
                    if spec.metric == "accuracy":
                        values = accuracy(noise) + 0.0005 * z
                    else:
                        values = 1e-4 * noise**2 * 10 ** (0.01 * z)
                    r = ratio(method, u)
                    for seed, value in enumerate(values):
                        rows.append(
                            {
                                "dataset": dataset,
                                "epsilon": epsilon,
                                "unevenness": np.nan if u is None else u,
                                "algorithm": method,
                                "seed": seed,
                                "value": value,
                                "unevenness_realized": 1.0 if u is None else float(u),
                                "noise_ratio": ratio("dist_avg", u),
                                "n": 1000 * spec.clients,
                                "n_min": 1000,
                                "sigma": r / epsilon,
                                "delta": 1e-3,
                                "eps_composed_rdp": 0.99 * epsilon,
                                "eps_composed_pld": 0.9 * epsilon,
                            }
                        )
        if spec.metric == "accuracy":
            rows += [{"dataset": d, "algorithm": grid.NONPRIVATE, "value": v} for d, v in theta_star.items()]
        frame = pd.DataFrame(rows).assign(figure=figure, metric=spec.metric, clients=spec.clients)
        frames[figure] = frame.reindex(columns=list(SEED_COLUMNS))
    cards = [{"dataset": d, "rows": n} for d, n in (sizes or extract.PAPER_SIZES).items()]
    return aggregate.claim_tables(frames, cards)


def edit(tables: dict, name: str, change: Callable[[pd.DataFrame], pd.DataFrame]) -> dict:
    return {**tables, name: change(tables[name].copy())}


# ------------------------------------------------------------------------------------ broken worlds


def falling_with_epsilon() -> dict:
    """Every method gets noisier as epsilon grows: accuracy falls and the gap rises."""
    return world(lambda method, m, epsilon, u: ratio(method, u) * epsilon * 400)


def baseline_better() -> dict:
    """The baseline has half WD-DP's noise everywhere (and less at larger u)."""
    return world(
        lambda method, m, epsilon, u: (1 / ratio(method, u) if method == "dist_avg" else 1) / epsilon
    )


def central_noisier() -> dict:
    return world(lambda method, m, epsilon, u: (3.0 if method == "central" else ratio(method, u)) / epsilon)


def wddp_depends_on_m() -> dict:
    return world(lambda method, m, epsilon, u: ratio(method, u) * (m if method == "wddp" else 1) / epsilon)


def wddp_depends_on_u() -> dict:
    return world(
        lambda method, m, epsilon, u: ((1 + (u or 1)) / 2 if method == "wddp" else ratio(method, u)) / epsilon
    )


def uneven_at_u1() -> dict:
    return world(
        lambda method, m, epsilon, u: (3.0 if method == "dist_avg" and u == 1 else ratio(method, u)) / epsilon
    )


def steadier_with_u() -> dict:
    """The baseline's seeds draw closer together as u grows."""
    return world(spread=lambda method, u: 1 / ratio(method, u) ** 2)


def baseline_better_and_steadier() -> dict:
    """Neither part of "decreases rapidly or fluctuates sharply": the baseline improves and steadies as u grows."""
    return world(
        lambda method, m, epsilon, u: (1 / ratio(method, u) if method == "dist_avg" else 1) / epsilon,
        spread=lambda method, u: 1 / ratio(method, u) ** 2,
    )


def no_drop_at_smallest_epsilon() -> dict:
    """At (8, 0.01) the baseline does not degrade in u; at (32, 0.1) it does."""
    return world(lambda method, m, epsilon, u: (1.0 if m == 8 else ratio(method, u)) / epsilon)


def sigma_off() -> dict:
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        frame.loc[frame["algorithm"] == "dist_avg", "sigma"] *= 1.1
        return frame

    return edit(world(), "runs", change)


def over_budget() -> dict:
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        first = frame.index[frame["algorithm"] == "dist_avg"][0]
        frame.loc[first, ["eps_composed_rdp", "eps_composed_pld"]] = 1.2 * frame.loc[first, "epsilon"]
        return frame

    return edit(world(), "runs", change)


def much_worse_baseline() -> dict:
    """The baseline five times noisier wherever the sizes are uneven; as noisy as WD-DP at u = 1."""
    return world(
        lambda method, m, epsilon, u: ratio(method, u) * (5 if ratio(method, u) > 1 else 1) / epsilon
    )


def slightly_worse_baseline() -> dict:
    """WD-DP ahead everywhere, but at large epsilon by a fraction of a percentage point only (tight seeds)."""
    return world(
        lambda method, m, epsilon, u: (1.2 if method == "dist_avg" else 1.0) / epsilon, lambda m, u: 1.0
    )


def with_panel(tables: dict, key: str) -> dict:
    """``tables`` plus a panel dataset's table: Experiment A's KDD rows relabelled as ``key``."""
    runs = tables["versus_epsilon"]
    return {**tables, f"versus_epsilon_{key}": runs[runs["dataset"] == "kdd"].assign(dataset=key)}


# claim id -> (world where it holds, world where it does not, the verdict there)
FIXTURES: dict[str, tuple[Callable[[], dict], Callable[[], dict], str]] = {
    "accuracy_rises_with_epsilon": (world, falling_with_epsilon, NOT_REPRODUCED),
    "gap_falls_with_epsilon": (world, falling_with_epsilon, NOT_REPRODUCED),
    "wddp_beats_baseline_random_sizes_accuracy": (world, baseline_better, NOT_REPRODUCED),
    "wddp_beats_baseline_random_sizes_gap": (world, baseline_better, NOT_REPRODUCED),
    "wddp_beats_baseline_two_groups_accuracy": (world, baseline_better, NOT_REPRODUCED),
    "wddp_beats_baseline_two_groups_gap": (world, baseline_better, NOT_REPRODUCED),
    "baseline_accuracy_drops_or_fluctuates_with_u": (world, baseline_better_and_steadier, NOT_REPRODUCED),
    "baseline_gap_grows_or_fluctuates_with_u": (world, baseline_better_and_steadier, NOT_REPRODUCED),
    "wddp_matches_central_accuracy": (world, central_noisier, NOT_REPRODUCED),
    "wddp_matches_central_gap": (world, central_noisier, NOT_REPRODUCED),
    "wddp_steady_in_m_accuracy": (world, wddp_depends_on_m, NOT_REPRODUCED),
    "wddp_steady_in_m_gap": (world, wddp_depends_on_m, NOT_REPRODUCED),
    "wddp_steady_in_u_accuracy": (world, wddp_depends_on_u, NOT_REPRODUCED),
    "wddp_steady_in_u_gap": (world, wddp_depends_on_u, NOT_REPRODUCED),
    "equal_at_u1_accuracy": (world, uneven_at_u1, NOT_REPRODUCED),
    "equal_at_u1_gap": (world, uneven_at_u1, NOT_REPRODUCED),
    "degradation_strongest_at_smallest_eps": (world, no_drop_at_smallest_epsilon, NOT_REPRODUCED),
    "noise_bound_factor": (world, sigma_off, NOT_REPRODUCED),
    "privacy_within_budget": (world, over_budget, BOUND_FAILS),
    "dataset_sizes": (world, lambda: world(sizes={"kdd": 300, "adult": 45222}), NOT_REPRODUCED),
    **{  # each below the lower end of the note's typical range (wddp.md 7.3 item 6)
        f"nonprivate_accuracy_{dataset}": (
            world,
            lambda d=dataset, f=floor: world(theta_star={d: f - 0.01}),
            NOT_REPRODUCED,
        )
        for dataset, floor in claims.NONPRIVATE_FLOOR.items()
    },
    "wddp_much_better_than_baseline": (much_worse_baseline, slightly_worse_baseline, NOT_REPRODUCED),
    **{
        f"panel_{key}": (
            lambda key=key: with_panel(world(), key),
            lambda key=key: with_panel(baseline_better(), key),
            NOT_REPRODUCED,
        )
        for key in claims.PANEL_DATASETS
    },
}
IDS = [claim.id.removeprefix("wddp.") for claim in claims.CLAIMS]


def verdict(claim_id: str, tables: dict, scale: dict = PAPER_SCALE) -> str:
    claim = next(c for c in claims.CLAIMS if c.id == f"wddp.{claim_id}")
    judgement, *_ = judge(claim, tables, scale)
    return judgement.verdict


def test_every_claim_has_fixtures() -> None:
    assert [i for i in IDS if i not in FIXTURES] == []
    assert [i for i in FIXTURES if i not in IDS] == []


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_holds_in_its_world(claim_id: str) -> None:
    good, _, _ = FIXTURES[claim_id]
    assert verdict(claim_id, good()) == REPRODUCED


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_fails_in_the_broken_world(claim_id: str) -> None:
    _, bad, expected = FIXTURES[claim_id]
    assert verdict(claim_id, bad()) == expected


def test_kinds_and_forms() -> None:
    """The paper prints no result number: statements are orderings and trends, checks everything else."""
    kinds = {c.id.removeprefix("wddp."): c.kind for c in claims.CLAIMS}
    assert {i for i, k in kinds.items() if k == MECHANISM_PROPERTY} == {
        "accuracy_rises_with_epsilon",  # any calibrated mechanism: less noise as the budget grows
        "gap_falls_with_epsilon",
    }
    assert {i for i, k in kinds.items() if k == PAPER_STATEMENT} == {
        "wddp_beats_baseline_random_sizes_accuracy",
        "wddp_beats_baseline_random_sizes_gap",
        "wddp_beats_baseline_two_groups_accuracy",
        "wddp_beats_baseline_two_groups_gap",
        "baseline_accuracy_drops_or_fluctuates_with_u",
        "baseline_gap_grows_or_fluctuates_with_u",
        "equal_at_u1_accuracy",  # not by construction: each method keeps its own cross-validated step size
        "wddp_much_better_than_baseline",
        *(f"panel_{key}" for key in claims.PANEL_DATASETS),  # datasets not built: data unavailable
    }
    by_construction = [i for i in kinds if i.startswith(("wddp_matches_central", "wddp_steady"))]
    assert len(by_construction) == 6 and all(kinds[i] == IMPLEMENTATION_CHECK for i in by_construction)


def test_a_flat_baseline_is_neither_dropping_nor_fluctuating() -> None:
    """A baseline as steady as WD-DP in u (its noise ratio stuck at 1): the degradation claims do not hold."""
    flat = world(
        lambda method, m, epsilon, u: 1 / epsilon if u is not None else level(method, m, epsilon, u),
        lambda method, u: 1.0 if u is not None else spread(method, u),
    )
    for claim_id in (
        "baseline_accuracy_drops_or_fluctuates_with_u",
        "baseline_gap_grows_or_fluctuates_with_u",
    ):
        assert verdict(claim_id, flat) != REPRODUCED


def test_one_sentence_with_an_or_holds_when_either_part_holds() -> None:
    """'decreases rapidly or fluctuates sharply' is one claim: a baseline that drops but steadies still satisfies it."""
    assert verdict("baseline_accuracy_drops_or_fluctuates_with_u", steadier_with_u()) == REPRODUCED
    assert (
        verdict("baseline_accuracy_drops_or_fluctuates_with_u", baseline_better_and_steadier())
        == NOT_REPRODUCED
    )


def test_steadiness_compares_each_dataset_with_its_own_smallest_m() -> None:
    """A dataset that ran only m = 32 has no pair; the other still compares m = 32 with m = 2."""
    tables = world()
    runs = tables["versus_epsilon"]
    tables["versus_epsilon"] = runs[~((runs["dataset"] == "kdd") & (runs["clients"] == 2))]
    claim = next(c for c in claims.CLAIMS if c.id == "wddp.wddp_steady_in_m_accuracy")
    cells = claim.extract(tables["versus_epsilon"])
    assert len(cells) == len(EPSILONS) and all(c.name.startswith("dataset=adult") for c in cells)
    assert all(len(c.low) == SEEDS and c.paired for c in cells)


def test_at_ci_scale_every_run_claim_is_not_at_scale() -> None:
    settings = yaml.safe_load((ROOT / "config/ci.yaml").read_text())["wddp"]
    scale = claims.claims_scale(settings)
    tables = world(seeds=2)
    card = scorecard(claims.CLAIMS, tables, scale=scale, switches={}, shared_seeds=grid.SHARED_SEEDS)
    built = [
        c for c in claims.CLAIMS if tables.get(c.aggregate) is not None
    ]  # unbuilt panels: data unavailable
    card = card[[c in built for c in claims.CLAIMS]]
    needs_runs = card[[bool(c.needs) for c in built]]
    assert set(needs_runs["verdict"]) == {NOT_AT_SCALE}
    assert set(card.loc[card["kind"] == PAPER_STATEMENT, "verdict"]) == {NOT_AT_SCALE}
    # the exact checks do not depend on the scale: theta*, the data and the calibration are final at any size
    assert set(card.loc[[not c.needs for c in built], "verdict"]) == {REPRODUCED}


def test_missing_tables_are_data_unavailable() -> None:
    tables = aggregate.claim_tables({}, [])
    card = scorecard(claims.CLAIMS, tables, scale=PAPER_SCALE, switches={}, shared_seeds=grid.SHARED_SEEDS)
    assert set(card["verdict"]) == {UNAVAILABLE}


def test_claim_tables_split_the_experiments_and_keep_theta_star() -> None:
    tables = world()
    assert set(tables["versus_epsilon"]["figure"]) == {"fig01", "fig03", "fig04", "fig05"}
    assert set(tables["versus_unevenness"]["unevenness"].dropna()) == set(UNEVENNESS)
    assert tables["nonprivate_kdd"]["value"].tolist() == [0.99] * 5  # each accuracy figure carries theta*
    assert len(tables["runs"]) == len(tables["versus_epsilon"]) + len(tables["versus_unevenness"])


# ------------------------------------------------------------------------------------ the remaining statements


def judged(claim_id: str, tables: dict) -> str:
    return judge(next(c for c in claims.CLAIMS if c.id == f"wddp.{claim_id}"), tables, PAPER_SCALE)[0].verdict


def test_a_panel_not_built_is_data_unavailable_with_its_size() -> None:
    """Bank, Breast Cancer and Credit Card where their data could not be obtained: no table for their claims."""
    tables = world()
    card = scorecard(
        claims.CLAIMS, tables, scale=PAPER_SCALE, switches={}, shared_seeds=grid.SHARED_SEEDS
    ).set_index("id")
    for key, size in (("bank", 41188), ("breast_cancer", 699), ("credit_card", 984)):
        claim = next(c for c in claims.CLAIMS if c.id == f"wddp.panel_{key}")
        assert (
            tables[claim.aggregate] is None and tables[f"nonprivate_{key}"] is not None
        )  # THETA_STAR has it
        assert card.loc[claim.id, "verdict"] == UNAVAILABLE
        assert f"{size:,} instances" in claim.statement


def test_a_built_panel_counts_in_the_claims_over_all_datasets_and_its_own_is_not_counted_twice() -> None:
    """Breast Cancer built (u up to 5): its cells join every claim the paper makes over all datasets, whose
    detail counts them per dataset; its own panel claim is judged on them and listed as re-reading the claim
    over all panels (derived from the bit-identical cells), not counted beside it."""
    tables = world(datasets=("kdd", "adult", "breast_cancer"))
    card = scorecard(
        claims.CLAIMS, tables, scale=PAPER_SCALE, switches={}, shared_seeds=grid.SHARED_SEEDS
    ).set_index("id")
    general = card.loc["wddp.wddp_beats_baseline_random_sizes_accuracy"]
    assert (
        general["verdict"] == REPRODUCED
        and f"{3 * len(CLIENTS) * len(EPSILONS)} of 36 needed" in general["test"]
    )
    per_dataset = (
        "per dataset: adult: 12 of 12 for, 0 against, breast_cancer: 12 of 12 for, 0 against, kdd: 12 of 12"
    )
    assert general["detail"].startswith(per_dataset)
    two_groups = card.loc["wddp.wddp_beats_baseline_two_groups_accuracy"]
    # u > 1: five of the grid's u on KDD and Adult, three on Breast Cancer (2, 3, 5), in each of 3 settings
    assert f"{3 * (2 * (len(UNEVENNESS) - 1) + 3)} of 39 needed" in two_groups["test"]
    panel = card.loc["wddp.panel_breast_cancer"]
    assert panel["verdict"] == REPRODUCED and "12 of 12 needed" in panel["test"]
    assert panel["same_runs_as"] == "wddp.wddp_beats_baseline_random_sizes_accuracy"
    assert panel["same_runs_why"].startswith("derived: it judges ")  # the world's panels differ only in order
    assert card.loc["wddp.panel_bank", "verdict"] == UNAVAILABLE
    assert set(tables["versus_unevenness"].query("dataset == 'breast_cancer'")["unevenness"].dropna()) == {
        1,
        2,
        3,
        5,
    }


def test_much_better_leaves_out_the_even_split_and_needs_a_percentage_point() -> None:
    """The baseline equal to WD-DP at u = 1 does not count against it; a lead under one point does."""
    good, slight = much_worse_baseline(), slightly_worse_baseline()
    assert judged("wddp_much_better_than_baseline", good) == REPRODUCED
    assert (
        judged("wddp_beats_baseline_random_sizes_accuracy", slight) == REPRODUCED
    )  # better, not much better
    assert judged("wddp_much_better_than_baseline", slight) == NOT_REPRODUCED
    claim = next(c for c in claims.CLAIMS if c.id == "wddp.wddp_much_better_than_baseline")
    cells = claim.extract(good["runs"])
    assert not any("split=u=1 " in c.name for c in cells) and any("split=random" in c.name for c in cells)
    assert len(cells) == 2 * (len(CLIENTS) * len(EPSILONS) + 3 * (len(UNEVENNESS) - 1))


def test_every_accuracy_claim_shows_the_majority_class_accuracy_beside_it() -> None:
    """A test accuracy is read against a constant classifier's: the majority class's share, from the cards."""
    cards = [{"dataset": "kdd", "rows": 70000, "class_balance": {"0": 0.2, "1": 0.8}}]
    tables = aggregate.claim_tables({}, cards)
    with_reference = {c.id for c in claims.CLAIMS if c.reference is not None}
    assert {c.id for c in claims.CLAIMS if "accuracy" in c.id} <= with_reference
    assert not any("_gap" in i and "accuracy" not in i for i in with_reference)
    reference = next(c for c in claims.CLAIMS if c.id == "wddp.equal_at_u1_accuracy").reference
    assert reference.shown(tables) == "majority-class accuracy: kdd 0.8"
