"""``dpdl`` / ``python -m dpdl``: every pipeline step is also a command.

Errors in input (config, data, arguments) are printed as one clear message and exit code 1,
without a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from dpdl import __version__
from dpdl.errors import ArtifactError, ConfigError, DpdlError

log = logging.getLogger("dpdl")


def main(argv: list[str] | None = None) -> int:
    """Run one ``dpdl`` command; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return args.command(args) or 0
    except DpdlError as err:
        print(f"dpdl {args.command_name}: error: {err}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="dpdl", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"dpdl {__version__}")
    commands = parser.add_subparsers(dest="command_name", required=True, metavar="COMMAND")

    def command(name: str, function, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(command=function)
        return sub

    def data_locations(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--raw-dir", type=Path, default=Path("data/raw"), help="raw-data cache (default data/raw)")
        sub.add_argument("--mirror", type=Path, default=None, help="mirror folder (default: $DPDL_DATA_MIRROR)")

    sub = command("fetch", cmd_fetch, "Download and verify the raw files of prepared datasets into the cache.")
    sub.add_argument("names", nargs="*", help="prepared datasets (e.g. wddp/kdd); default: all the config needs")
    sub.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    data_locations(sub)

    sub = command("prepare", cmd_prepare, "Build one prepared dataset (.npz arrays and JSON card) from raw files.")
    sub.add_argument("name", help="prepared dataset, e.g. dp_iadmm/mnist")
    sub.add_argument("--options", default="{}", help="JSON object of the dataset's options (the rule's params)")
    sub.add_argument("--out", type=Path, required=True, help="output .npz")
    sub.add_argument("--card", type=Path, required=True, help="output .json card")
    data_locations(sub)

    sub = command("availability", cmd_availability, "Say which prepared datasets can be built here, and why not.")
    sub.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    data_locations(sub)

    sub = command("tables", cmd_tables, "Write a dataset table from dataset cards.")
    sub.add_argument("kind", choices=("datasets", "table1"), help="datasets: one row per prepared dataset; table1: Ryu & Kim's Table 1")
    sub.add_argument("--cards", type=Path, nargs="*", default=[], help="cards of the prepared datasets")
    sub.add_argument("--unavailable", nargs="*", default=[], help="prepared datasets that could not be built")
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)

    from dpdl.studies import IMPLEMENTED, study_module

    for study in IMPLEMENTED:
        study_module(study).add_commands(commands)

    sub = command("check", cmd_check, "Validate artifacts: cards, runs, and every output a config promises.")
    sub.add_argument("paths", nargs="*", type=Path, help="artifacts to validate (.json cards, .npz runs)")
    sub.add_argument("--configfile", type=Path, default=None, help="also check every output this config promises")
    return parser


def _mirror(args: argparse.Namespace) -> Path | None:
    from dpdl.data.fetch import mirror_from

    return mirror_from(args.mirror)


def cmd_fetch(args: argparse.Namespace) -> int:
    """Fetch the raw files of the named (or all configured) prepared datasets."""
    from dpdl.config import load_config
    from dpdl.data.fetch import fetch
    from dpdl.data.prepared import PREPARED, options, prepared_names, raw_files

    config = load_config(args.configfile)
    names = args.names or prepared_names(config)
    for name in names:
        if name not in PREPARED:
            raise ConfigError(f"unknown prepared dataset {name!r}; expected one of {', '.join(PREPARED)}")
        for remote in raw_files(name, options(name, config)):
            log.info("%s: %s", name, fetch(remote, args.raw_dir, _mirror(args)))
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    """Build one prepared dataset."""
    from dpdl.config import parse_json_object
    from dpdl.data.prepared import prepare
    from dpdl.io import save_npz, sha256_file, write_json

    arrays, card = prepare(args.name, parse_json_object(args.options, "--options"), cache=args.raw_dir, mirror=_mirror(args))
    save_npz(args.out, arrays)
    write_json(args.card, {**card, "npz_sha256": sha256_file(args.out)})
    log.info("%s: %d training rows, %d features -> %s", args.name, card["rows_train"], card["features"], args.out)
    return 0


def cmd_availability(args: argparse.Namespace) -> int:
    """Print which prepared datasets can be built here; exit 1 if any cannot."""
    from dpdl.config import load_config
    from dpdl.data.prepared import availability

    plan = availability(load_config(args.configfile), args.raw_dir, _mirror(args))
    for name in plan.buildable:
        print(f"available   {name}")
    if plan.skipped or plan.notes:
        print("\n" + plan.report())
    return 1 if plan.skipped else 0


def cmd_tables(args: argparse.Namespace) -> int:
    """Write the dataset table or Table 1 from cards."""
    from dpdl.data import tables
    from dpdl.io import read_json, write_table

    cards = [read_json(path) for path in args.cards]
    if args.kind == "datasets":
        write_table(tables.datasets_table(cards, args.unavailable), *args.out, title="# Prepared datasets")
    else:
        by_dataset = {card["dataset"]: card for card in cards if card["study"] == "dp_iadmm"}
        title = "# Ryu & Kim, Table 1: ours (I, J, K, P, mean, stdev) beside the paper's (paper_*)"
        write_table(tables.table1(by_dataset), *args.out, title=title)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate artifacts; print every problem; exit 1 if there is any."""
    from dpdl.check import check_artifacts, check_config_outputs

    problems = check_artifacts(args.paths)
    checked = len(args.paths)
    if args.configfile is not None:
        from dpdl.config import load_config

        config_problems, n = check_config_outputs(load_config(args.configfile))
        problems += config_problems
        checked += n
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        raise ArtifactError(f"{len(problems)} problem(s) in {checked} artifact(s)")
    print(f"dpdl check: {checked} artifact(s) OK")
    return 0
