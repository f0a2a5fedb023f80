"""``dpdl dp_iadmm run|aggregate|figure|remark3|optimum|claims``: the steps its rule file calls.

Each command parses its options, calls the study's modules and writes the result. A command imports
the modules it calls when it runs: a run job never loads the claims, the figures or scipy.stats.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from dpdl.errors import ConfigError
from dpdl.studies.common import parse_settings, study_steps
from dpdl.studies.dp_iadmm.grid import (
    AGGREGATES,
    CLAIM_SETTING_KEYS,
    DATASETS,
    FIGURE_SPECS,
    FIGURES,
    HORIZONS,
    OPTIMUM_SETTING_KEYS,
    SHARED_SEEDS,
    STUDY,
    SWITCHES,
    claim_scale,
    run_setting_keys,
    variant,
)
from dpdl.validation import parse_json_object

MADE_BY = "dpdl.studies.dp_iadmm.grid."  # the functions that write each --settings


def _epsilon(text: str) -> float:
    """``--epsilon``: a number > 0, or ``inf`` (the non-private run)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise ConfigError(f"--epsilon must be a number > 0 or 'inf'; got {text!r}")
    return value


def _cmd_run(args: argparse.Namespace) -> int:
    """Run every seed of one job and write one run artifact per seed."""
    from dpdl.data.prepared import verified_card
    from dpdl.studies.dp_iadmm.run import run_job

    if args.dataset not in DATASETS:
        raise ConfigError(f"--dataset must be one of {', '.join(DATASETS)}; got {args.dataset!r}")
    try:
        keys = run_setting_keys(args.variant)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    # run_settings names it where it is not numba
    if "backend" in parse_json_object(args.settings, "--settings"):
        keys = (*keys, "backend")
    settings = parse_settings(args.settings, keys, STUDY, MADE_BY + "run_settings(config, horizon, variant)")
    try:
        variant(args.variant, settings)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    card = verified_card(args.card, args.data)
    if card.get("dataset", args.dataset) != args.dataset:
        raise ConfigError(f"--dataset {args.dataset}, but {args.card} is the card of {card.get('name')}")
    run_job(
        horizon=args.horizon,
        dataset=args.dataset,
        variant_name=args.variant,
        epsilon=_epsilon(args.epsilon),
        settings=settings,
        npz=args.data,
        card=card,
        outputs=args.out,
    )
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    """Write the per-seed table and banded aggregate of one figure, of Remark 3 or of the noiseless runs."""
    from dpdl.io import write_text
    from dpdl.studies.dp_iadmm.aggregate import bands, seed_values

    seeds = seed_values(args.figure, args.runs)
    write_text(args.seeds_out, seeds.to_csv(index=False, lineterminator="\n"))
    write_text(args.out, bands(args.figure, seeds).to_csv(index=False, lineterminator="\n"))
    return 0


def _cells_left_out(text: str) -> list:
    """``--not-run``: a JSON list of [dataset, variant, epsilon-bar] cells, as ``grid_gaps`` writes each."""
    import json

    try:
        cells = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"--not-run is not valid JSON ({err}): {text!r}") from None
    if not isinstance(cells, list) or not all(
        isinstance(c, list)
        and len(c) == 3
        and all(isinstance(part, str) for part in c[:2])
        and isinstance(c[2], int | float)
        for c in cells
    ):
        raise ConfigError(
            f"--not-run must be a JSON list of [dataset, variant, epsilon-bar] cells, as {MADE_BY}grid_gaps(config) "
            f"writes each figure's; got {text!r}"
        )
    return cells


def _cmd_figure(args: argparse.Namespace) -> int:
    """Draw one figure from its aggregate."""
    from dpdl.studies.dp_iadmm.aggregate import read_aggregate
    from dpdl.studies.dp_iadmm.figures import draw_figure

    gaps = _cells_left_out(args.not_run)  # before the aggregate is read: a bad option fails first
    draw_figure(args.figure, read_aggregate(args.aggregate), *args.out, gaps=gaps)
    return 0


def _cmd_remark3(args: argparse.Namespace) -> int:
    """Write the Remark 3 table from its aggregate."""
    from dpdl.io import write_table
    from dpdl.studies.dp_iadmm.aggregate import read_aggregate
    from dpdl.studies.dp_iadmm.tables import remark3_table

    title = (
        "# Ryu & Kim, Remark 3 (MNIST, long horizon): final testing error, ours beside the paper's (T = 1e6)"
    )
    write_table(remark3_table(read_aggregate(args.aggregate)), *args.out, title=title)
    return 0


def _cmd_optimum(args: argparse.Namespace) -> int:
    """Write the table of the minimiser of (1) on each prepared dataset."""
    from dpdl.io import write_table
    from dpdl.studies.dp_iadmm.tune import optimum_table

    settings = parse_settings(
        args.settings, OPTIMUM_SETTING_KEYS, STUDY, MADE_BY + "optimum_settings(config)"
    )
    title = (
        "# Ryu & Kim (1) minimised by L-BFGS on our data: the reference every non-private run approaches, "
        "beside the paper's non-private testing error"
    )
    write_table(optimum_table(args.data, settings), *args.out, title=title)
    return 0


def judge_claims(tables: dict, scale: dict, switches: dict, grid: dict | None = None, claims=None):
    """The scorecard of every claim on the per-seed ``tables`` (by name, e.g. ``fig2a_seeds``).

    A claim one of whose cells is not in its table's grid (an empty table: the config's ``cells`` leave
    out the whole aggregate, or one dataset of Fig. 4 or the noiseless pair) is "not run at this scale",
    with the missing cell and its aggregate and horizon as its detail and no value: the config's runs
    are smaller than the claim needs. A table that is None (its data cannot be obtained here) is "data
    unavailable", and so is a claim that needs FEMNIST when the grid (``grid``: each aggregate with the
    datasets its jobs reach; None: all of them) reaches FEMNIST but no FEMNIST shard could be prepared
    (``scale``). ``claims``: the claims to judge (default: the study's ``CLAIMS``).
    """
    import pandas as pd

    from dpdl.claims import scorecard
    from dpdl.studies.dp_iadmm.claims import CLAIMS as DECLARED
    from dpdl.studies.dp_iadmm.extract import SHARDS_NEED
    from dpdl.verdicts import NOT_AT_SCALE

    claims = DECLARED if claims is None else claims

    grid = grid if grid is not None else {name: FIGURE_SPECS[name].datasets for name in AGGREGATES}

    def figure(claim):  # the aggregate's name without "_seeds": the runs a claim needs
        return claim.aggregate.removesuffix("_seeds")

    def claim_table(claim):
        reaches = "femnist" in grid.get(figure(claim), ())
        unprepared = SHARDS_NEED in claim.needs and not scale.get(SHARDS_NEED)
        return None if reaches and unprepared else tables.get(claim.aggregate)

    card = scorecard(claims, tables, scale=scale, switches=switches, shared_seeds=SHARED_SEEDS)
    unavailable = [row for row, claim in enumerate(claims) if claim_table(claim) is None]
    if unavailable:  # judged again as the claims of a table that is None
        without = {**tables, **{claims[row].aggregate: None for row in unavailable}}
        again = scorecard(
            [claims[row] for row in unavailable],
            without,
            scale=scale,
            switches=switches,
            shared_seeds=SHARED_SEEDS,
        )
        card = pd.concat([card.drop(index=unavailable), again.set_axis(unavailable)]).sort_index()
    for row, claim in enumerate(claims):
        table = claim_table(claim)
        missing = None if table is None else claim.extract.missing(table)
        if missing:
            name = figure(claim)  # which runs: "no mnist objt run" means at its horizon
            card.loc[row, ["verdict", "our_value", "test"]] = [NOT_AT_SCALE, "", ""]
            card.loc[row, "detail"] = (
                f"not in this config's grid ({name}, {FIGURE_SPECS[name].horizon} horizon): {missing}"
            )
            card.loc[row, ["effect", "ci_low", "ci_high", "seeds_to_decide"]] = None
            card.loc[row, "n_seeds"] = 0
    return card


def claim_tables(paths, grid_aggregates, grid_gaps) -> dict:
    """The per-seed tables by name; an aggregate outside the config's grid (``cells``) as an empty table.

    Each table is marked with the cells ``cells`` left out of its grid (``grid_gaps``), so that a claim
    over the grid is not judged on part of it (:func:`extract.with_grid_gaps`).
    """
    from dpdl.studies.dp_iadmm.aggregate import empty_seed_table, read_aggregate
    from dpdl.studies.dp_iadmm.extract import with_grid_gaps

    tables = {Path(path).stem: read_aggregate(path) for path in paths}
    for name in AGGREGATES:
        if name not in grid_aggregates:
            tables.setdefault(f"{name}_seeds", empty_seed_table())
        elif f"{name}_seeds" in tables:
            with_grid_gaps(tables[f"{name}_seeds"], grid_gaps.get(name, ()))
    return tables


def judge(settings: dict, aggregates: list, cards: list):
    """The scorecard on the per-seed tables that exist (:func:`judge_claims`) and the dataset cards.

    The cards are those of the datasets that could be prepared: their class shares (``dataset_<name>``,
    beside the testing errors) and, FEMNIST's, the shards its runs used.
    """
    from dpdl.claims import class_shares
    from dpdl.io import read_json

    found = {read_json(path)["dataset"]: read_json(path) for path in cards}
    tables = claim_tables(aggregates, settings["grid_aggregates"], settings["grid_gaps"])
    tables |= {f"dataset_{name}": class_shares(card) for name, card in found.items()}
    return judge_tables(settings, tables, found)


def judge_tables(settings: dict, tables: dict, cards: dict):
    """:func:`judge` on per-seed tables read, with the dataset ``cards`` by dataset name.

    A FEMNIST card that records the writers-at-hand deviation (:func:`tables.writers_at_hand`) has its
    claims judged without the need of all 36 training shards, each saying so first in its detail, then
    what a smaller training set can decide of it (``claims.AT_HAND_STANDING``). Under that deviation a
    config at the declared pilot's seeds (``claims.AT_HAND_PILOT_SEEDS``) is judged at them, each claim
    saying so (:func:`waive_at_hand`); any other count below a claim's need leaves it not run at this scale.
    """
    from dpdl.studies.dp_iadmm.claims import AT_HAND_STANDING, CLAIMS
    from dpdl.studies.dp_iadmm.extract import SHARDS_NEED
    from dpdl.studies.dp_iadmm.tables import writers_at_hand

    femnist = cards.get("femnist")
    shards = len(femnist["shards_train"]) if femnist else 0
    switches = {name: settings[name] for name in SWITCHES}
    deviation = writers_at_hand(femnist) if femnist else ""
    claims = [waive_at_hand(claim, settings["seeds"]) for claim in CLAIMS] if deviation else CLAIMS
    card = judge_claims(tables, claim_scale(settings, shards), switches, settings["grid_aggregates"], claims)
    # each FEMNIST claim says first that it is not on the paper's sample, then what that decides of it
    if deviation:
        rows = [row for row, claim in enumerate(CLAIMS) if SHARDS_NEED in claim.needs]
        card.loc[rows, "detail"] = [
            "; ".join(
                part
                for part in (
                    deviation,
                    pilot_seeds(CLAIMS[row], settings["seeds"]),
                    AT_HAND_STANDING[cid],
                    detail,
                )
                if isinstance(part, str) and part
            )
            for row, cid, detail in zip(rows, card.loc[rows, "id"], card.loc[rows, "detail"], strict=True)
        ]
    return card


def waive_at_hand(claim, seeds: int):
    """``claim`` as the writers-at-hand deviation judges it: on the writers at hand, at ``seeds`` seeds.

    The declared data deviation (issue 62, docs/studies/dp_iadmm.md "FEMNIST on the writers at hand")
    lifts the need of LEAF's every training shard; at the declared seed pilot's ``seeds``
    (``claims.AT_HAND_PILOT_SEEDS``) it lowers the seeds a claim needs to them (:func:`pilot_seeds` says
    so in the detail). The iterations a claim needs still hold, and the scale column still shows the
    shards and seeds the runs used.
    """
    from dataclasses import replace

    from dpdl.studies.dp_iadmm.extract import SHARDS_NEED

    if SHARDS_NEED not in claim.needs:  # an MNIST claim: the deviation does not reach it
        return claim
    needs = {k: v for k, v in claim.needs.items() if k != SHARDS_NEED}
    if pilot_seeds(claim, seeds):
        needs["seeds"] = seeds
    return replace(claim, needs=needs)


def pilot_seeds(claim, seeds: int) -> str:
    """The detail's words for a claim judged at the seed pilot's ``seeds``, fewer than it needs; else ""."""
    from dpdl.studies.dp_iadmm.claims import AT_HAND_PILOT_SEEDS

    need = claim.needs.get("seeds")
    if need is None or seeds >= need or seeds != AT_HAND_PILOT_SEEDS:
        return ""
    return (
        f"judged at {seeds} of the paper's {need} seeds, a pilot declared before its runs "
        "(config/paper_femnist_at_hand_pilot.yaml): a verdict the spread of fewer seeds still decides, "
        "and seeds_to_decide for one it leaves inconclusive"
    )


def judge_snapshot(folder: Path, config: dict, cards: Path | None = None):
    """The scorecard judged from a published snapshot.

    It reads ``aggregates/`` and the dataset cards in ``cards`` (default ``folder/cards``; a reading's
    folder holds no cards: they are its study's).
    """
    from dpdl.studies.dp_iadmm.grid import claim_settings

    settings = claim_settings(config)
    aggregates = [
        p
        for p in (folder / "aggregates" / f"{n}_seeds.csv" for n in settings["grid_aggregates"])
        if p.is_file()
    ]
    return judge(settings, aggregates, sorted((cards or folder / "cards").glob("*.json")))


def _cmd_claims(args: argparse.Namespace) -> int:
    """Judge every claim on the per-seed tables that exist; write the scorecard (CSV and Markdown)."""
    from dpdl.io import write_table

    settings = parse_settings(args.settings, CLAIM_SETTING_KEYS, STUDY, MADE_BY + "claim_settings(config)")
    card = judge(settings, args.aggregates, args.cards)
    title = "# Ryu & Kim (dp_iadmm): the paper's claims beside ours, judged from per-seed values"
    write_table(card, *args.out, title=title)
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``dpdl dp_iadmm run|aggregate|figure|remark3|optimum|claims``."""
    step = study_steps(commands, STUDY, "Ryu & Kim, DP inexact ADMM (MNIST, FEMNIST)")

    sub = step(
        "run",
        _cmd_run,
        "Run every seed of one (horizon, dataset, variant, epsilon-bar); one artifact per seed.",
    )
    sub.add_argument("--horizon", choices=HORIZONS, required=True)
    sub.add_argument("--dataset", required=True, help="mnist or femnist")
    sub.add_argument(
        "--variant", required=True, help="objp, objt, outp, outp_plus, outp_rho<r>, <alg>_a<a>, nonprivate"
    )
    sub.add_argument("--epsilon", required=True, help="per-iteration epsilon-bar, or inf (nonprivate)")
    sub.add_argument("--data", type=Path, required=True, help="prepared arrays (.npz)")
    sub.add_argument("--card", type=Path, required=True, help="the dataset's JSON card")
    sub.add_argument("--settings", required=True, help="JSON of the run settings (the rule's params)")
    sub.add_argument("--out", nargs="+", required=True, help="one run artifact per seed, in seed order")

    sub = step(
        "aggregate", _cmd_aggregate, "Per-seed table and bands over seeds of one figure's runs (tidy CSVs)."
    )
    sub.add_argument("figure", choices=AGGREGATES)
    sub.add_argument("--runs", nargs="+", required=True)
    sub.add_argument("--out", type=Path, required=True, help="the banded aggregate (mean, 20/80 band)")
    sub.add_argument("--seeds-out", type=Path, required=True, help="the per-seed table the claims read")

    sub = step("figure", _cmd_figure, "Draw one figure (PNG and PDF) from its aggregate.")
    sub.add_argument("figure", choices=FIGURES)
    sub.add_argument("--aggregate", type=Path, required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("PNG", "PDF"), required=True)
    sub.add_argument(
        "--not-run",
        default="[]",
        help="JSON list of [dataset, variant, epsilon] cells of the grid the config's cells left out (named in a note)",
    )

    sub = step("remark3", _cmd_remark3, "Write the Remark 3 table from its aggregate.")
    sub.add_argument("--aggregate", type=Path, required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)

    sub = step("optimum", _cmd_optimum, "Minimise (1) by L-BFGS on each prepared dataset; write the table.")
    sub.add_argument(
        "--data", type=Path, nargs="+", required=True, help="prepared arrays (mnist.npz, femnist.npz)"
    )
    sub.add_argument("--settings", required=True, help="JSON of the optimum settings (the rule's params)")
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)

    sub = step("claims", _cmd_claims, "Judge the paper's claims on the per-seed tables; write the scorecard.")
    sub.add_argument("--aggregates", nargs="*", default=[], help="per-seed CSVs (their file stem names them)")
    sub.add_argument(
        "--cards", type=Path, nargs="*", default=[], help="the cards of the datasets prepared here"
    )
    sub.add_argument("--settings", required=True, help="JSON of the dp_iadmm config section")
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)
