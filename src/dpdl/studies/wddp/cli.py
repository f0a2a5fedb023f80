"""``dpdl wddp <step>``, the commands workflow/rules/wddp.smk calls.

The steps: optimum, tune, run, aggregate, figure, table1, claims.

A command imports the modules it calls when it runs: a run job never loads the claims or the figures.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from dpdl.errors import ConfigError
from dpdl.studies.common import study_steps
from dpdl.studies.wddp.grid import (
    DATASETS,
    FIGURES,
    PER_SETTING,
    SHARED_SEEDS,
    STUDY,
    parse_batch,
    run_epsilons,
    settings_from_json,
    switches,
)

log = logging.getLogger(__name__)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``dpdl wddp <step>`` (optimum, tune, run, aggregate, figure, table1, claims)."""
    step = study_steps(commands, STUDY, "Kang, Liu & Wang's WD-DP study (Figures 1-16, Table 1).")

    def dataset_inputs(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--dataset", choices=DATASETS, required=True)
        sub.add_argument(
            "--data", type=Path, required=True, help="prepared arrays data/processed/wddp/<dataset>.npz"
        )
        sub.add_argument("--card", type=Path, required=True, help="its JSON card (for the dataset hash)")
        sub.add_argument("--settings", required=True, help="the config's wddp section as JSON")

    sub = step("optimum", _cmd_optimum, "Compute theta*, the non-private optimum of one dataset.")
    dataset_inputs(sub)
    sub.add_argument("--out", type=Path, required=True)

    sub = step(
        "tune", _cmd_tune, "Select each method's step size by K-fold cross-validation on the training set."
    )
    dataset_inputs(sub)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "JSON"), required=True)
    sub.add_argument(
        "--batch",
        default=None,
        help="tuning.protocol per_setting: the batch whose settings to tune (epsilon_m32)",
    )

    sub = step("run", _cmd_run, "Run one batch (all methods, epsilons or u, and seeds of a figure grid).")
    dataset_inputs(sub)
    sub.add_argument("--experiment", choices=("epsilon", "unevenness"), required=True)
    sub.add_argument("--clients", type=int, required=True, help="m")
    sub.add_argument("--epsilon", type=float, default=None, help="fixed epsilon (unevenness batches only)")
    sub.add_argument("--tuning", type=Path, required=True, help="the selected step sizes (JSON)")
    sub.add_argument("--optimum", type=Path, required=True, help="theta* of the dataset")

    sub = step(
        "aggregate", _cmd_aggregate, "Aggregate the runs of one figure over seeds; keep the per-seed values."
    )
    sub.add_argument("figure", choices=sorted(FIGURES))
    sub.add_argument("--runs", type=Path, nargs="*", default=[])
    sub.add_argument("--optima", type=Path, nargs="*", default=[])
    sub.add_argument("--out", type=Path, required=True, help="the banded aggregate (the figure reads it)")
    sub.add_argument("--seeds-out", type=Path, required=True, help="the per-seed table (the claims read it)")

    sub = step("figure", _cmd_figure, "Draw one figure from its aggregate.")
    sub.add_argument("figure", choices=sorted(FIGURES))
    sub.add_argument("--aggregate", type=Path, required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("PNG", "PDF"), required=True)

    sub = step("table1", _cmd_table1, "Write Table 1: the bounds and the computed sigma of every cell.")
    sub.add_argument("--cards", type=Path, nargs="*", default=[])
    sub.add_argument("--settings", required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)

    sub = step("claims", _cmd_claims, "Judge the study's claims from the figures' per-seed tables.")
    sub.add_argument(
        "--seeds", type=Path, nargs="*", default=[], help="results/wddp/aggregates/<figure>_seeds.csv"
    )
    sub.add_argument("--cards", type=Path, nargs="*", default=[], help="the prepared datasets' JSON cards")
    sub.add_argument("--settings", required=True)
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)


def _dataset_sha(args: argparse.Namespace) -> str:
    """The hash of ``--data`` that the job records, from its ``--card`` once checked against the file."""
    from dpdl.data.prepared import verified_card

    return verified_card(args.card, args.data)["npz_sha256"]


def _cmd_optimum(args: argparse.Namespace) -> int:
    """``dpdl wddp optimum``."""
    from dpdl.studies.wddp.run import load_dataset
    from dpdl.studies.wddp.tune import compute_optimum, write_optimum

    settings = settings_from_json(args.settings)
    dataset_sha256 = _dataset_sha(args)
    optimum = compute_optimum(load_dataset(args.data), settings["l2"])
    write_optimum(args.out, optimum, dataset_sha256, settings["l2"])
    log.info(
        "%s: theta* loss %.6g, ||grad|| %.2e, test accuracy %.4f",
        args.dataset,
        optimum["loss"],
        optimum["gradient_norm"],
        optimum["test_accuracy"],
    )
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    """``dpdl wddp tune``."""
    from dpdl.io import write_json, write_text
    from dpdl.studies.wddp.run import load_dataset
    from dpdl.studies.wddp.tune import cross_validate, cross_validate_setting, select_step_sizes

    settings = settings_from_json(args.settings)
    per_setting = settings["tuning"]["protocol"] == PER_SETTING
    if per_setting != (args.batch is not None):
        raise ConfigError(
            f"--batch is required under tuning.protocol {PER_SETTING} and not allowed otherwise"
        )
    record = {**settings["tuning"], "dataset_sha256": _dataset_sha(args)}
    data = load_dataset(args.data)
    if per_setting:
        experiment, clients, epsilon = parse_batch(args.batch)
        scores = cross_validate_setting(settings, args.dataset, data, experiment, clients, epsilon)
        summary, selected = select_step_sizes(scores, settings["tuning"]["scope"], by="cell")
        # the batch's m (and epsilon) replace tuning.clients and tuning.epsilon, which per_setting
        # does not use
        record = {k: v for k, v in record.items() if k not in ("clients", "epsilon")} | {"batch": args.batch}
    else:
        scores = cross_validate(settings, args.dataset, data)
        summary, selected = select_step_sizes(scores, settings["tuning"]["scope"], run_epsilons(settings))
    csv_path, json_path = args.out
    write_text(csv_path, summary.to_csv(index=False, lineterminator="\n"))
    write_json(json_path, {"step_sizes": selected, "settings": record})
    log.info("%s: selected step sizes %s", args.dataset, selected)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    """``dpdl wddp run``."""
    from dpdl.io import read_json
    from dpdl.runs import write_run
    from dpdl.studies.wddp.run import load_dataset, run_batch
    from dpdl.studies.wddp.tune import read_optimum

    settings = settings_from_json(args.settings)
    if (args.experiment == "unevenness") != (args.epsilon is not None):
        raise ConfigError("--epsilon is required for --experiment unevenness and not allowed for epsilon")
    dataset_sha256 = _dataset_sha(args)
    results = run_batch(
        settings,
        args.dataset,
        args.experiment,
        args.clients,
        args.epsilon,
        data=load_dataset(args.data),
        dataset_sha256=dataset_sha256,
        tuning=read_json(args.tuning),
        optimum=read_optimum(args.optimum),
    )
    for path, result in results:
        write_run(path, result)
    log.info("wrote %d runs", len(results))
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    """``dpdl wddp aggregate``."""
    from dpdl.io import write_text
    from dpdl.studies.wddp.aggregate import tables

    optima = {Path(p).stem: p for p in args.optima}
    bands, seeds = tables(args.figure, args.runs, optima)
    write_text(args.out, bands.to_csv(index=False, lineterminator="\n"))
    write_text(args.seeds_out, seeds.to_csv(index=False, lineterminator="\n"))
    return 0


def _cmd_figure(args: argparse.Namespace) -> int:
    """``dpdl wddp figure``."""
    from dpdl.io import read_csv
    from dpdl.studies.wddp.figures import draw_figure

    draw_figure(args.figure, read_csv(args.aggregate), *args.out)
    return 0


def _cmd_table1(args: argparse.Namespace) -> int:
    """``dpdl wddp table1``."""
    from dpdl.io import read_json, write_table
    from dpdl.studies.wddp.tables import table1, table1_title

    settings = settings_from_json(args.settings)
    cards = sorted((read_json(p) for p in args.cards), key=lambda card: DATASETS.index(card["dataset"]))
    rows_train = {card["dataset"]: int(card["rows_train"]) for card in cards}
    write_table(table1(settings, rows_train), *args.out, title=table1_title(settings))
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    """``dpdl wddp claims``."""
    from dpdl.io import write_table

    card = judge(settings_from_json(args.settings), args.seeds, args.cards)
    write_table(card, *args.out, title=f"# {STUDY} claims (Kang, Liu & Wang)")
    return 0


def judge(settings: dict, seeds: list, cards: list):
    """The scorecard of the claims on the per-seed tables (``<figure>_seeds.csv``) and the dataset cards."""
    from dpdl import claims as claims_lib
    from dpdl.io import read_csv, read_json
    from dpdl.studies.wddp.aggregate import claim_tables
    from dpdl.studies.wddp.claims import CLAIMS, claims_scale

    frames = {Path(p).stem.removesuffix("_seeds"): read_csv(p) for p in seeds}
    cards = [read_json(p) for p in cards]
    return claims_lib.scorecard(
        CLAIMS,
        claim_tables(frames, cards),
        scale=claims_scale(settings),
        switches=switches(settings),
        shared_seeds=SHARED_SEEDS,
    )


def judge_snapshot(folder: Path, config: dict, cards: Path | None = None):
    """The scorecard judged from a published snapshot.

    It reads ``aggregates/`` and the dataset cards in ``cards`` (default ``folder/cards``; a reading's
    folder holds no cards: they are its study's).
    """
    from dpdl.studies.wddp.grid import seeds_targets

    settings = config[STUDY]
    seeds = [folder / "aggregates" / Path(p).name for p in seeds_targets(settings)]
    found = sorted((cards or folder / "cards").glob("*.json"))
    return judge(settings, [p for p in seeds if p.is_file()], found)
