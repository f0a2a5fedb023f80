"""``dpdl dzoa <step>``, the commands rules/dzoa.smk calls.

The steps are centralized, calibrate, tune, run, aggregate, perturbation, figure and claims.

A command imports the modules it calls when it runs: a run job never loads the claims or the figures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dpdl.errors import ConfigError
from dpdl.studies.common import parse_named_paths, parse_settings, study_steps
from dpdl.studies.dzoa.grid import (
    ALGORITHMS,
    FIGURES,
    SEED_FIGURES,
    SETTINGS_KEYS,
    SETTINGS_MADE_BY,
    SHARED_SEEDS,
    STUDY,
    claim_scale,
    evaluation_run_paths,
    figure_run_paths,
    switches,
)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``dpdl dzoa <step>``.

    The steps are centralized, calibrate, tune, run, aggregate, perturbation, figure and claims.
    """
    step = study_steps(commands, STUDY, "Gratton et al.'s D-ZOA study: one pipeline step per subcommand.")

    sub = _with_data(
        step("centralized", _cmd_centralized, "Solve the centralized lasso (33) of every trial.")
    )
    sub.add_argument("--out", required=True)
    sub = _with_data(
        step("calibrate", _cmd_calibrate, "Privacy per grid point; D-ZOA step constants from (27).")
    )
    sub.add_argument("--centralized", required=True)
    sub.add_argument("--out", nargs=3, required=True, metavar=("JSON", "NPZ", "CSV"))
    sub = _with_data(
        step("tune", _cmd_tune, "Tune DP-ADMM's (rho, eta0) per grid point on the tuning trials.")
    )
    sub.add_argument("--centralized", required=True)
    sub.add_argument("--calibration", required=True)
    sub.add_argument("--trials", type=int, nargs="+", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("JSON", "CSV"))
    sub = _with_data(step("run", _cmd_run, "Run one algorithm on evaluation trials for every grid point."))
    sub.add_argument("--algorithm", choices=ALGORITHMS, required=True)
    sub.add_argument("--trials", type=int, nargs="+", required=True)
    sub.add_argument("--centralized", required=True)
    sub.add_argument("--calibration", required=True)
    sub.add_argument("--calibration-arrays", default=None, help="calibration .npz (D-ZOA)")
    sub.add_argument("--tuning", default=None, help="tuning .json (DP-ADMM)")
    sub = _with_settings(step("aggregate", _cmd_aggregate, "Write a figure's tidy aggregate from its runs."))
    sub.add_argument("figure", choices=FIGURES)
    sub.add_argument(
        "--trials", type=int, nargs="*", default=[], help="evaluation trials whose runs are read"
    )
    sub.add_argument("--agents", type=int, default=None, help="K (fig1)")
    sub.add_argument(
        "--out",
        nargs="+",
        required=True,
        metavar="CSV",
        help="the banded table, then the per-seed table (not fig1)",
    )
    sub = _with_settings(
        step(
            "perturbation",
            _cmd_perturbation,
            "Tabulate D-ZOA's realised perturbation against sigma_k of (25).",
        )
    )
    sub.add_argument(
        "--trials", type=int, nargs="+", required=True, help="evaluation trials whose runs are read"
    )
    sub.add_argument("--out", required=True, metavar="CSV")
    sub = step("figure", _cmd_figure, "Draw a figure from its aggregate.")
    sub.add_argument("figure", choices=FIGURES)
    sub.add_argument("--aggregate", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("PNG", "PDF"))
    sub = _with_settings(step("claims", _cmd_claims, "Judge the claims and write the scorecard."))
    sub.add_argument("--aggregates", nargs="+", required=True, metavar="NAME=CSV")
    sub.add_argument("--trials", type=int, required=True, help="number of evaluation trials (>= 1)")
    sub.add_argument("--out", nargs=2, required=True, metavar=("CSV", "MD"))


def _with_settings(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub.add_argument("--settings", required=True, help="JSON of the dzoa config section (the rule's params)")
    return sub


def _with_data(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
    _with_settings(sub)
    sub.add_argument("--data", required=True, help="data/processed/dzoa/lasso.npz")
    sub.add_argument("--card", required=True, help="data/processed/dzoa/lasso.json")
    return sub


def _values(args: argparse.Namespace) -> dict:
    return parse_settings(args.settings, SETTINGS_KEYS, STUDY, SETTINGS_MADE_BY)


def _data_values(args: argparse.Namespace) -> dict:
    """The settings of a step that reads the prepared data, once ``--data`` is checked against ``--card``."""
    from dpdl.data.prepared import verified_card

    values = _values(args)
    verified_card(args.card, args.data)
    return values


def _cmd_centralized(args: argparse.Namespace) -> int:
    from dpdl.studies.dzoa.tune import centralized

    centralized(_data_values(args), args.data, args.card, args.out)
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from dpdl.studies.dzoa.tune import calibrate

    calibrate(_data_values(args), args.data, args.card, args.centralized, *args.out)
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from dpdl.studies.dzoa.tune import tune

    tune(_data_values(args), args.trials, args.data, args.card, args.centralized, args.calibration, *args.out)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from dpdl.studies.dzoa.run import run

    run(
        _data_values(args),
        args.algorithm,
        args.trials,
        data_path=args.data,
        card_path=args.card,
        centralized_path=args.centralized,
        calibration_path=args.calibration,
        calibration_arrays=args.calibration_arrays,
        tuning_path=args.tuning,
    )
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from dpdl.io import write_text
    from dpdl.studies.dzoa.aggregate import tables

    expected = 2 if args.figure in SEED_FIGURES else 1
    if len(args.out) != expected:
        what = "the banded table and the per-seed table" if expected == 2 else "one table"
        raise ConfigError(
            f"dzoa aggregate {args.figure} writes {what}: give --out {expected} paths, got {args.out}"
        )
    values = _values(args)
    written = tables(values, args.figure, figure_run_paths(values, args.trials, args.figure), args.agents)
    for path, table in zip(args.out, written[:expected], strict=True):
        write_text(path, table.to_csv(index=False, lineterminator="\n"))
    return 0


def _cmd_perturbation(args: argparse.Namespace) -> int:
    from dpdl.io import write_text
    from dpdl.studies.dzoa.aggregate import perturbation_table

    table = perturbation_table(evaluation_run_paths(_values(args), args.trials))
    write_text(args.out, table.to_csv(index=False, lineterminator="\n"))
    return 0


def _cmd_figure(args: argparse.Namespace) -> int:
    from dpdl.io import read_csv
    from dpdl.studies.dzoa.figures import draw_figure

    draw_figure(args.figure, read_csv(args.aggregate), *args.out)
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    if args.trials < 1:
        raise ConfigError(
            f"--trials is the number of evaluation trials the tables hold (>= 1); got {args.trials}"
        )
    write_claims(_values(args), args.trials, parse_named_paths(args.aggregates), *args.out)
    return 0


def judge(values: dict, n_trials: int, aggregates: dict[str, str | Path]):
    """The scorecard of :data:`CLAIMS` on the per-seed, privacy and perturbation tables.

    A table whose file is missing is passed as None (data unavailable).
    """
    from dpdl.claims import scorecard
    from dpdl.io import read_table_as
    from dpdl.studies.dzoa.claims import CLAIM_TABLE_COLUMNS, CLAIMS

    unknown = sorted(set(aggregates) - set(CLAIM_TABLE_COLUMNS))
    if unknown:
        raise ConfigError(
            f"--aggregates: no claim reads {', '.join(unknown)}; the names are "
            f"{', '.join(CLAIM_TABLE_COLUMNS)}"
        )
    frames = {
        name: read_table_as(path, name, CLAIM_TABLE_COLUMNS[name]) if Path(path).is_file() else None
        for name, path in aggregates.items()
    }
    return scorecard(
        CLAIMS,
        frames,
        scale=claim_scale(values, n_trials),
        switches=switches(values),
        shared_seeds=SHARED_SEEDS,
    )


def write_claims(values: dict, n_trials: int, aggregates: dict[str, str], out_csv: str, out_md: str) -> None:
    """Judge :data:`CLAIMS` on the per-seed and privacy tables and write the scorecard."""
    from dpdl.io import write_table

    card = judge(values, n_trials, aggregates)
    write_table(
        card,
        out_csv,
        out_md,
        title="# dzoa claims (Gratton et al.): the paper's statements beside our values",
    )


def judge_snapshot(folder: Path, config: dict, cards: Path | None = None):
    """The scorecard judged from a published snapshot's ``aggregates/``.

    These are the same tables the claims step reads; dzoa's generated data has no card, so ``cards`` is
    not read.
    """
    from dpdl.studies.dzoa.claims import CLAIM_TABLE_COLUMNS
    from dpdl.studies.dzoa.grid import evaluation_trials, settings

    tables = {name: folder / "aggregates" / f"{name}.csv" for name in CLAIM_TABLE_COLUMNS}
    return judge(settings(config), len(evaluation_trials(config)), tables)
