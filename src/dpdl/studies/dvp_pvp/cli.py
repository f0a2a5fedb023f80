"""``dpdl dvp_pvp <step>``: the commands ``workflow/rules/dvp_pvp.smk`` calls.

1. ``run`` (eta selection, G14): one non-private run per eta of ``eta_grid``; ``select-eta``
   keeps the eta whose node average ends closest to the centralized optimum (``eta.json``). With
   ``eta: tuned_per_algorithm``, every algorithm runs the grid and ``select-eta --criterion
   final_loss`` keeps its own eta (``eta/<algorithm>.json``);
2. ``run``: one job per (algorithm, alpha) over the seeds, and one rho-selection job per
   algorithm (Table 1, G23); each run writes its own artifact, on the card's partition and the
   seeded connected graph (one job amortises the imports and the centralized optima);
3. ``aggregate``: one tidy CSV per figure (mean and 20/80 percentile bands over seeds, the
   composed privacy of the plotted runs; the trade-off fits of C(30)) and beside it the figure's
   per-seed table (one value per run and metric) that the claims are judged on;
4. ``figure``, ``table``, ``claims``: the figures O1, O3-O5, O7, O8; the tables O1, O2, O6, O9,
   the privacy side table and the eta selection; the scorecard (``dpdl.verdicts`` on the per-seed
   tables).

Each command parses its options, calls the study's modules and writes the result. A command imports
the modules it calls when it runs: a run job never loads the claims or the figures.
"""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.common import parse_named_paths, study_steps
from dpdl.studies.dvp_pvp import grid
from dpdl.validation import parse_json_object

log = logging.getLogger(__name__)


def _finite_float(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name} must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be finite; got {text!r}")
    return value


def _positive_float(text: str, name: str) -> float:
    value = _finite_float(text, name)
    if not value > 0:
        raise ConfigError(f"{name} must be in (0, inf); got {text!r}")
    return value


def _cmd_run(args: argparse.Namespace) -> int:
    from dpdl.data.prepared import verified_card
    from dpdl.io import load_npz
    from dpdl.runs import write_run
    from dpdl.studies.dvp_pvp import run, tune

    values = grid.parse_run_settings(args.settings)
    alpha = None if args.alpha == "inf" else _positive_float(args.alpha, "--alpha")
    etas = [_positive_float(text, "--etas") for text in args.etas] if args.etas else None
    exponents = (
        [_finite_float(text, "--rho-exponents") for text in args.rho_exponents]
        if args.rho_exponents
        else None
    )
    runs = run.job_runs(tune.run_etas(values, etas, args.eta_file), exponents, args.seeds)
    if len(args.out) != len(runs):
        raise ConfigError(
            f"--out names {len(args.out)} files but the job has {len(runs)} runs "
            "(etas x rho exponents x seeds, in that order)"
        )
    card = verified_card(args.card, args.arrays)
    context = run.run_context(load_npz(args.arrays), card, values)
    data = context.data
    degrees = context.adjacency.sum(axis=1).tolist()
    log.info(
        "P = %d nodes, B_p = %s, degrees %s, %d run(s)", data.n_nodes, data.sizes.tolist(), degrees, len(runs)
    )
    optima: dict = {}
    for out, (eta, source, rho, seed) in zip(args.out, runs, strict=True):
        result = run.execute_run(
            context,
            algorithm=args.algorithm,
            alpha=alpha,
            seed=seed,
            eta=eta,
            eta_source=source,
            rho=rho,
            purpose=args.purpose,
            optima=optima,
        )
        write_run(out, result)
        final, wall = result.trace.iloc[-1], result.provenance["timing"]["wall_time_s"]
        log.info("wrote %s: final loss %.4g, error rate %.4g, %.1f s", out, final["loss"], final["mer"], wall)
    return 0


def _cmd_select_eta(args: argparse.Namespace) -> int:
    from dpdl.io import write_json, write_table
    from dpdl.studies.dvp_pvp import tables, tune

    if args.criterion not in tune.CRITERIA:
        raise ConfigError(f"--criterion must be one of {', '.join(tune.CRITERIA)}; got {args.criterion!r}")
    if args.criterion == "final_loss":
        eta, table = tune.select_eta_by_loss(args.runs)
    else:
        eta, table = tune.select_eta(args.runs)
    record = tune.selection_record(eta, table, args.criterion)
    write_json(args.out, record)
    write_table(tables.rounded(table), *args.table, title=tune.selection_title(record))
    log.info("selected eta %g from %s", eta, record["grid"])
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from dpdl.io import write_text
    from dpdl.studies.dvp_pvp import aggregate

    values = grid.parse_section_settings(args.settings)
    frame, provenances = aggregate.load_runs(args.runs)
    table = aggregate.figure_aggregate(args.figure, frame, provenances, values)
    write_text(args.out, table.to_csv(index=False, lineterminator="\n"))
    log.info("wrote %s (%d rows from %d runs)", args.out, len(table), len(args.runs))
    if args.seeds_out:
        seeds = aggregate.figure_seeds(args.figure, frame, values)
        write_text(args.seeds_out, seeds.to_csv(index=False, lineterminator="\n"))
        log.info("wrote %s (%d per-seed rows)", args.seeds_out, len(seeds))
    return 0


def _cmd_figure(args: argparse.Namespace) -> int:
    from dpdl.io import read_csv
    from dpdl.plotting import save_figure
    from dpdl.studies.dvp_pvp import figures

    frame = read_csv(args.aggregate)
    if frame.empty:
        raise ArtifactError(f"{args.aggregate} has no rows; rebuild the aggregate")
    save_figure(figures.draw(args.figure, frame), *args.out)
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from dpdl.io import write_table
    from dpdl.studies.dvp_pvp import tables

    values = grid.parse_section_settings(args.settings)
    table, title = tables.build_table(args.table, args.inputs, values)
    write_table(tables.rounded(table), *args.out, title=title)
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    from dpdl.io import write_text
    from dpdl.studies.dvp_pvp import claims

    values = grid.parse_section_settings(args.settings)
    scale = parse_json_object(args.scale, "--scale")
    card = judge(values, scale, parse_named_paths(args.aggregates), args.card)
    write_text(args.out[0], card.to_csv(index=False, lineterminator="\n"))
    write_text(args.out[1], claims.scorecard_markdown(card))
    for row in card.itertuples():
        log.info("%s: %s (ours %s, paper %s)", row.id, row.verdict, row.our_value, row.paper_value)
    return 0


def judge(values: dict, scale: dict, aggregates: dict[str, str | Path], card: str | Path | None = None):
    """The scorecard of the claims on the per-seed tables by name (a missing file: None) and Adult's card."""
    from dpdl.claims import scorecard
    from dpdl.io import read_csv, read_json
    from dpdl.studies.dvp_pvp import claims, extract

    read = {name: read_csv(path) if Path(path).is_file() else None for name, path in aggregates.items()}
    found = read_json(card) if card is not None and Path(card).is_file() else None
    tables = extract.claim_tables(read, values["pvp_error_of"], found)
    return scorecard(
        claims.CLAIMS, tables, scale=scale, switches=grid.switches(values), shared_seeds=grid.SHARED_SEEDS
    )


def judge_snapshot(folder: Path, config: dict, cards: Path | None = None):
    """The scorecard judged from a published snapshot.

    It reads the snapshot's ``aggregates/`` (the same tables the claims step reads) and its dataset card
    in ``cards`` (default ``folder/cards``; a reading's folder holds no cards).
    """
    tables = {name: folder / "aggregates" / Path(path).name for name, path in grid.claim_inputs().items()}
    return judge(
        grid.settings(config), grid.claim_scale(config), tables, (cards or folder / "cards") / "adult.json"
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``dpdl dvp_pvp <step>``: run, select-eta, aggregate, figure, table, claims."""
    step = study_steps(commands, grid.STUDY, "Zhang & Zhu's DVP/PVP study: one pipeline step per subcommand.")
    settings_help = "JSON of the dvp_pvp config section (dpdl.studies.dvp_pvp.grid.settings_json)"

    sub = step(
        "run", _cmd_run, "Run network ADMM for one algorithm and alpha over seeds (and rho or eta grids)."
    )
    sub.add_argument("--arrays", required=True, help="data/processed/dvp_pvp/adult.npz")
    sub.add_argument("--card", required=True, help="data/processed/dvp_pvp/adult.json")
    sub.add_argument("--algorithm", choices=grid.ALGORITHMS, required=True)
    sub.add_argument(
        "--alpha", required=True, help="per-iteration alpha, or 'inf' for the non-private algorithm"
    )
    sub.add_argument("--seeds", type=int, nargs="+", required=True)
    sub.add_argument(
        "--settings", required=True, help="JSON of dpdl.studies.dvp_pvp.grid.run_settings(config)"
    )
    sub.add_argument(
        "--etas", nargs="+", default=None, help="ADMM penalties (eta selection; overrides the settings)"
    )
    sub.add_argument("--eta-file", default=None, help="results/dvp_pvp/eta.json when eta is tuned")
    sub.add_argument("--rho-exponents", nargs="+", default=None, help="log10 rho values (rho selection)")
    sub.add_argument("--purpose", choices=("main", "rho_selection", "eta_selection"), default="main")
    sub.add_argument(
        "--out", nargs="+", required=True, help="one run file per (eta, rho, seed), in that order"
    )

    sub = step("select-eta", _cmd_select_eta, "Pick eta from the eta-selection runs (G14).")
    sub.add_argument("--runs", nargs="+", required=True)
    sub.add_argument(
        "--criterion",
        default="objective_gap",
        help="objective_gap: the non-private run closest to the centralized optimum (eta: tuned); "
        "final_loss: one algorithm's smallest mean final training loss (eta: tuned_per_algorithm)",
    )
    sub.add_argument("--out", required=True, help="eta.json")
    sub.add_argument("--table", nargs=2, required=True, metavar=("CSV", "MD"))

    sub = step(
        "aggregate", _cmd_aggregate, "Write a figure's tidy aggregate (and its per-seed table) from its runs."
    )
    sub.add_argument("figure", choices=grid.FIGURES)
    sub.add_argument("--runs", nargs="+", required=True)
    sub.add_argument("--settings", required=True, help=settings_help)
    sub.add_argument("--out", required=True, help="the aggregate: seed bands, for the figure")
    sub.add_argument(
        "--seeds-out", default=None, help="the per-seed table, for the claims (<figure>_seeds.csv)"
    )

    sub = step("figure", _cmd_figure, "Draw a figure from its aggregate.")
    sub.add_argument("figure", choices=grid.FIGURES)
    sub.add_argument("--aggregate", required=True)
    sub.add_argument("--out", nargs=2, required=True, metavar=("PNG", "PDF"))

    sub = step("table", _cmd_table, "Write a table (CSV and Markdown).")
    sub.add_argument("table", choices=[name for name in grid.TABLES if name != "eta_selection"])
    sub.add_argument("--inputs", nargs="+", required=True)
    sub.add_argument("--settings", required=True, help=settings_help)
    sub.add_argument("--out", nargs=2, required=True, metavar=("CSV", "MD"))

    sub = step("claims", _cmd_claims, "Judge the claims on the per-seed tables and write the scorecard.")
    sub.add_argument("--aggregates", nargs="+", required=True, metavar="NAME=CSV", help="the per-seed tables")
    sub.add_argument("--settings", required=True, help=settings_help)
    sub.add_argument("--scale", required=True, help="JSON of dpdl.studies.dvp_pvp.grid.claim_scale(config)")
    sub.add_argument(
        "--card", default=None, help="the prepared Adult's card (its class balance, shown beside errors)"
    )
    sub.add_argument("--out", nargs=2, required=True, metavar=("CSV", "MD"))
