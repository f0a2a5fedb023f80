"""The ``dpdl`` command's argument parser: every command, its arguments and its help, in plain text.

:func:`build_parser` registers the commands a command line can reach; the commands themselves are
in :mod:`dpdl.cli_commands`, each study's in its package's ``cli`` module (``add_commands``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from dpdl import __version__
from dpdl.cli_commands import (
    cmd_article,
    cmd_audit,
    cmd_availability,
    cmd_check,
    cmd_compare,
    cmd_config_reference,
    cmd_data_premises,
    cmd_fetch,
    cmd_prepare,
    cmd_privacy_table,
    cmd_publish,
    cmd_reading_build,
    cmd_readings,
    cmd_render_report,
    cmd_scorecard,
    cmd_status,
    cmd_tables,
    cmd_verify,
)

ABOUT = """``dpdl`` / ``python -m dpdl``: every pipeline step is also a command.

Errors in input (config, data, arguments) are printed as one clear message and exit code 1,
without a traceback.
"""  # the parser's description and epilog (:func:`plain_text`), as ``dpdl --help`` shows them


def plain_text(text: str) -> str:
    """``text`` written for Sphinx (reST roles and literals) as a terminal shows it: ``:func:`x```, ``x`` -> x."""
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", r"\1", text)


def build_parser(command_line: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of those ``command_line`` can reach (texts: :func:`plain_text`).

    A study's steps are registered by the study's ``cli`` module, which imports its grid: a command
    line that names a study (a workflow job, ``dpdl dp_iadmm run ...``) registers that study's steps
    alone, and one that names another command registers no study's, so a job imports no other
    study's modules. Without a command line, or with one that names no command (``--help``, a typo),
    every study's steps are registered, as ``--help`` and argparse's error list them.
    """
    from dpdl.studies import ALL

    word = next((item for item in command_line or () if not item.startswith("-")), None)
    if command_line is None or word is None:
        return _parser(ALL)[0]
    if word in ALL:
        return _parser((word,))[0]
    parser, commands = _parser((), ALL if word == "tables" else ())
    return parser if word in commands.choices else _parser(ALL)[0]


def _parser(
    studies: Sequence[str], tables_of: Sequence[str] | None = None
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The argument parser with every command but the studies', of which those of ``studies``; and its commands.

    ``dpdl tables`` offers the card tables of ``tables_of`` (by default ``studies``): finding them
    imports each study's grid, which a job of another command does not need.
    """
    from dpdl.studies import study_module

    summary, _, details = ABOUT.partition("\n\n")
    parser = argparse.ArgumentParser(
        prog="dpdl",
        description=plain_text(summary),
        epilog=plain_text(" ".join(details.split())) + " `dpdl COMMAND --help` describes a command.",
    )
    parser.add_argument("--version", action="version", version=f"dpdl {__version__}")
    commands = parser.add_subparsers(dest="command_name", required=True, metavar="COMMAND")
    _data_commands(commands, studies if tables_of is None else tables_of)
    for study in studies:
        study_module(study).add_commands(commands)
    _table_commands(commands)
    _build_commands(commands)
    _snapshot_commands(commands)
    _check_commands(commands)
    return parser, commands


def _command(
    commands: argparse._SubParsersAction,
    name: str,
    function: Callable[[argparse.Namespace], int],
    help_text: str,
) -> argparse.ArgumentParser:
    """Add command ``name``, run by ``function``, with ``help_text`` as its help and description."""
    sub = commands.add_parser(name, help=help_text, description=help_text)
    sub.set_defaults(command=function)
    return sub


def _data_locations(sub: argparse.ArgumentParser) -> None:
    """The raw-data cache and the mirror, options of every command that reads raw files."""
    sub.add_argument(
        "--raw-dir", type=Path, default=Path("data/raw"), help="raw-data cache (default data/raw)"
    )
    sub.add_argument("--mirror", type=Path, default=None, help="mirror folder (default: $DPDL_DATA_MIRROR)")


def _data_commands(commands: argparse._SubParsersAction, tables_of: Sequence[str]) -> None:
    """The data's commands: fetch, prepare, availability, and tables (of the studies ``tables_of``)."""
    from dpdl.studies import card_tables

    sub = _command(
        commands, "fetch", cmd_fetch, "Download and verify the raw files of prepared datasets into the cache."
    )
    sub.add_argument(
        "names", nargs="*", help="prepared datasets (e.g. wddp/kdd); default: all the config needs"
    )
    sub.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    _data_locations(sub)

    sub = _command(
        commands,
        "prepare",
        cmd_prepare,
        "Build one prepared dataset (.npz arrays and JSON card) from raw files.",
    )
    sub.add_argument("name", help="prepared dataset, e.g. dp_iadmm/mnist")
    sub.add_argument(
        "--options", default="{}", help="JSON object of the dataset's options (the rule's params)"
    )
    sub.add_argument("--out", type=Path, required=True, help="output .npz")
    sub.add_argument("--card", type=Path, required=True, help="output .json card")
    _data_locations(sub)

    sub = _command(
        commands,
        "availability",
        cmd_availability,
        "Say which prepared datasets can be built here, and why not.",
    )
    sub.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    sub.add_argument("--verbose", action="store_true", help="also every missing file with every source tried")
    _data_locations(sub)

    sub = _command(commands, "tables", cmd_tables, "Write a dataset table from dataset cards.")
    paper_tables = card_tables(tables_of)
    papers = "".join(
        f"; {name}: {study}'s table from its datasets' cards" for name, study in paper_tables.items()
    )
    sub.add_argument(
        "kind",
        choices=("datasets", *paper_tables, "provenance"),
        help=f"datasets: one row per prepared dataset; provenance: raw-file and dataset hashes, package versions"
        f"{papers}",
    )
    sub.add_argument("--cards", type=Path, nargs="*", default=[], help="cards of the prepared datasets")
    sub.add_argument("--unavailable", nargs="*", default=[], help="prepared datasets that could not be built")
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)


def _table_commands(commands: argparse._SubParsersAction) -> None:
    """The commands that write a build's tables: scorecard, audit, data-premises, privacy-table."""
    sub = _command(
        commands,
        "scorecard",
        cmd_scorecard,
        "Merge the studies' scorecards into one row per registered claim.",
    )
    sub.add_argument("--studies", nargs="*", default=[], help="the studies the config enables")
    sub.add_argument(
        "--claims",
        nargs="*",
        type=Path,
        default=[],
        help="judged study scorecards, results/claims/<study>.csv",
    )
    sub.add_argument(
        "--readings", type=Path, default=None, help="results/readings.csv, to add under which readings"
    )
    sub.add_argument(
        "--audits", nargs="*", type=Path, default=[], help="audit tables, results/audit/<study>.csv"
    )
    sub.add_argument(
        "--data-premises",
        nargs="*",
        type=Path,
        default=[],
        help="premises measured on the data, results/audit/<study>_data_premises.csv",
    )
    sub.add_argument(
        "--published",
        type=Path,
        default=None,
        help="the published snapshot (published): its verdict beside each claim this build did not run",
    )
    sub.add_argument("--out", type=Path, nargs=3, metavar=("CSV", "MD", "HTML"), required=True)

    sub = _command(
        commands,
        "audit",
        cmd_audit,
        "Audit a study's privacy claims: runs on neighbouring data -> eps lower bounds.",
    )
    sub.add_argument("--study", required=True, help="the study, e.g. dzoa")
    sub.add_argument(
        "--runs", type=int, required=True, help="runs per side per cell (20 to 100,000, as audit.runs)"
    )
    sub.add_argument("--seed", type=int, default=0, help="the audit's seed (default 0)")
    sub.add_argument("--out", type=Path, nargs=3, metavar=("CSV", "MD", "JSON"), required=True)

    sub = _command(
        commands,
        "data-premises",
        cmd_data_premises,
        "Measure a study's stated premises (record norms, label domains, gradient bounds) on its prepared data.",
    )
    sub.add_argument("--study", required=True, help="the study, e.g. dzoa")
    sub.add_argument(
        "--data", nargs="*", type=Path, default=[], help="its prepared datasets' .npz (card beside each)"
    )
    sub.add_argument(
        "--skipped",
        default="{}",
        help="JSON object: each dataset of the study that cannot be built here -> why",
    )
    sub.add_argument("--out", type=Path, required=True, help="results/audit/<study>_data_premises.csv")

    sub = _command(
        commands,
        "privacy-table",
        cmd_privacy_table,
        "Tabulate stated and composed privacy over every run of a config.",
    )
    sub.add_argument("--config", required=True, help="the workflow's validated config, as a JSON object")
    sub.add_argument("--buildable", nargs="*", default=[], help="prepared datasets that can be built here")
    sub.add_argument("--audits", nargs="*", type=Path, default=[], help="audit tables, for the eps_LB column")
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)


def _build_commands(commands: argparse._SubParsersAction) -> None:
    """The commands about a build: status, render-report, reading-build, readings."""
    sub = _command(
        commands,
        "status",
        cmd_status,
        "Summarize the runs a config needs: finished, left, and CPU time left.",
    )
    sub.add_argument("--configfile", type=Path, default=Path("config/config.yaml"))
    sub.add_argument("--groups", action="store_true", help="one row per run group instead of per study")

    sub = _command(
        commands,
        "render-report",
        cmd_render_report,
        "Render the HTML report in headless Chromium; list what it shows.",
    )
    sub.add_argument("report", type=Path, help="the report of `snakemake --report report.html`")
    sub.add_argument("--show", default=None, help="a result to open first, e.g. figures/dzoa/fig2.png")
    sub.add_argument("--screenshot", type=Path, default=None, help="save a PNG of the rendered page here")
    sub.add_argument(
        "--configfile", type=Path, default=None, help="also require every figure this config promises"
    )

    sub = _command(
        commands,
        "reading-build",
        cmd_reading_build,
        "Build one study's claims under one reading (a nested Snakemake run).",
    )
    sub.add_argument("--study", required=True, help="the study, e.g. dvp_pvp")
    sub.add_argument("--reading", required=True, help="one of the study's readings other than 'default'")
    sub.add_argument("--config", required=True, help="the workflow's validated config, as a JSON object")
    sub.add_argument("--snakefile", type=Path, default=Path("Snakefile"))
    sub.add_argument("--cores", type=int, default=1)

    sub = _command(
        commands, "readings", cmd_readings, "Tabulate every claim's verdict under every reading of its study."
    )
    sub.add_argument(
        "--cards", nargs="*", default=[], metavar="STUDY__READING=CSV", help="study scorecards per reading"
    )
    sub.add_argument("--out", type=Path, nargs=2, metavar=("CSV", "MD"), required=True)


def _snapshot_commands(commands: argparse._SubParsersAction) -> None:
    """The commands between builds and the snapshot: compare, publish, article."""
    sub = _command(
        commands,
        "compare",
        cmd_compare,
        "Compare two builds' artifacts (run arrays, provenance minus timing, tables, images).",
    )
    sub.add_argument("first", type=Path, help="a build folder (a checkout that ran snakemake)")
    sub.add_argument("second", type=Path, help="another build folder")
    sub.add_argument(
        "--under",
        nargs="+",
        default=None,
        help="folders or files to compare (default: results figures)",
    )

    sub = _command(
        commands,
        "publish",
        cmd_publish,
        "Copy a finished build's small outputs, stamped, into published; or judge a snapshot again (--rejudge).",
    )
    sub.add_argument(
        "--configfile", type=Path, default=None, help="the config the build ran, e.g. config/paper.yaml"
    )
    sub.add_argument(
        "--studies", nargs="+", default=None, help="the studies to publish (each must be finished)"
    )
    sub.add_argument(
        "--rejudge",
        action="store_true",
        help="judge every claim again from the snapshot alone (its per-seed tables and manifests), no build needed",
    )
    sub.add_argument(
        "--audit",
        action="store_true",
        help="publish only the studies' audits (results/audit/<study>.*, with <study>_data_premises.csv) into "
        "<study>/audit/",
    )
    sub.add_argument(
        "--data-premises",
        action="store_true",
        help="publish only the studies' premises measured on their data (results/audit/<study>_data_premises.csv) "
        "into <study>/audit/data_premises.csv",
    )
    sub.add_argument(
        "--compute",
        action="store_true",
        help="add the compute per table to published studies, measured by this build of their default grid, "
        "whose per-seed tables must equal the snapshot's",
    )
    sub.add_argument(
        "--deviation",
        default=None,
        metavar="NAME",
        help="add the study's declared data deviation NAME, built here from the config file it declares, into "
        "<study>/deviations/NAME/ beside its default verdicts (one study)",
    )
    sub.add_argument("--out", type=Path, default=Path("published"), help="the snapshot folder")
    sub.add_argument("--readme", type=Path, default=None, help="also rewrite this README's results block")

    sub = _command(
        commands,
        "article",
        cmd_article,
        "Write a study's replication article (ARTICLE.md, ARTICLE.html, metadata.yaml) from the published snapshot.",
    )
    sub.add_argument("study", nargs="?", default=None, help="the study (or --all)")
    sub.add_argument("--all", action="store_true", help="write the article of every published study")
    sub.add_argument("--published", type=Path, default=Path("published"), help="the snapshot folder")


def _check_commands(commands: argparse._SubParsersAction) -> None:
    """The commands that check or document: config-reference, check, verify."""
    sub = _command(
        commands,
        "config-reference",
        cmd_config_reference,
        "The configuration reference (config/README.md): every config key, from the schemas.",
    )
    sub.add_argument("--out", type=Path, default=None, help="write the Markdown here (default: print it)")

    sub = _command(
        commands, "check", cmd_check, "Validate artifacts: cards, runs, and every output a config promises."
    )
    sub.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="artifacts to validate (.json cards, .npz runs, a published snapshot)",
    )
    sub.add_argument(
        "--configfile", type=Path, default=None, help="also check every output this config promises"
    )

    sub = _command(
        commands,
        "verify",
        cmd_verify,
        "Rerun the jobs of some run files of this build and compare what they write with the build's, bit for bit.",
    )
    sub.add_argument(
        "paths", nargs="*", type=Path, help="run files to verify (.npz under results/<study>/runs/)"
    )
    sub.add_argument("--sample", type=int, default=None, help="verify N run files drawn at random instead")
    sub.add_argument("--seed", type=int, default=None, help="the sample's seed (default: drawn, and printed)")
    sub.add_argument(
        "--configfile", type=Path, default=None, help="draw the sample from the runs this config promises"
    )
    sub.add_argument(
        "--max-cpu-seconds",
        type=float,
        default=None,
        help="skip a job whose runs record more CPU time than this",
    )
