"""``dpdl toy <step>``: release, figure, claims (rules.smk)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpdl.studies.common import study_steps
from toy.grid import SHARED_SEEDS, STUDY


def add_commands(commands: argparse._SubParsersAction) -> None:
    step = study_steps(commands, STUDY, "The toy study: a Laplace-noised mean.")
    sub = step(
        "release",
        _cmd_release,
        "Release the mean at every epsilon and seed; write the per-seed and band tables.",
    )
    sub.add_argument("--settings", required=True)
    sub.add_argument("--data", required=True)
    sub.add_argument("--card", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("SEEDS", "BANDS"))
    sub = step("figure", _cmd_figure, "Draw the figure from its band table.")
    sub.add_argument("--aggregate", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("PNG", "PDF"))
    sub = step("claims", _cmd_claims, "Judge the claims and write the scorecard.")
    sub.add_argument("--settings", required=True)
    sub.add_argument("--aggregate", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("CSV", "MD"))


def _cmd_release(args: argparse.Namespace) -> int:
    import pandas as pd

    from dpdl.data.prepared import verified_card
    from dpdl.io import load_npz, write_text
    from toy.aggregate import bands
    from toy.run import release_errors

    values = json.loads(args.settings)
    verified_card(Path(args.card), Path(args.data))
    seeds = pd.DataFrame(release_errors(load_npz(args.data)["X"][:, 0], values["epsilons"], values["seeds"]))
    write_text(args.out[0], seeds.to_csv(index=False, lineterminator="\n"))
    write_text(args.out[1], bands(seeds).to_csv(index=False, lineterminator="\n"))
    return 0


def _cmd_figure(args: argparse.Namespace) -> int:
    from dpdl.io import read_csv
    from toy.figures import draw_figure

    draw_figure(read_csv(args.aggregate), *args.out)
    return 0


def judge(values: dict, table: Path):
    from dpdl.claims import scorecard
    from dpdl.io import read_table_as
    from toy.claims import CLAIM_TABLE_COLUMNS, CLAIMS

    frames = {"error_seeds": read_table_as(table, "error_seeds", CLAIM_TABLE_COLUMNS["error_seeds"])}
    return scorecard(CLAIMS, frames, scale={"seeds": values["seeds"]}, switches={}, shared_seeds=SHARED_SEEDS)


def _cmd_claims(args: argparse.Namespace) -> int:
    from dpdl.io import write_table

    card = judge(json.loads(args.settings), Path(args.aggregate))
    write_table(card, *args.out, title="# toy claims: a Laplace-noised mean")
    return 0


def judge_snapshot(folder: Path, config: dict, cards: Path | None = None):
    """The scorecard from a published folder's ``aggregates/`` alone (generated data: no card is read)."""
    return judge(config[STUDY], folder / "aggregates" / "error_seeds.csv")
