"""What each ``dpdl`` command does: one ``cmd_<name>`` function per command, given its parsed arguments.

:mod:`dpdl.cli_parser` declares the commands' arguments and :func:`dpdl.cli.main` runs one of them. Each
function imports what it needs when it runs, so a command loads only its own modules.
"""

from __future__ import annotations

import argparse
import logging
import shlex
from pathlib import Path

from dpdl.errors import ArtifactError, ConfigError

log = logging.getLogger("dpdl")


def _mirror(args: argparse.Namespace) -> Path | None:
    from dpdl.data.fetch import mirror_from

    return mirror_from(args.mirror, "--mirror")


def cmd_fetch(args: argparse.Namespace) -> int:
    """Fetch the raw files of the named (or all configured) prepared datasets."""
    from dpdl.config import load_config
    from dpdl.data.fetch import fetch
    from dpdl.data.prepared import options, raw_files
    from dpdl.studies import prepared_dataset, prepared_names

    config = load_config(args.configfile)
    names = args.names or prepared_names(config)
    for name in names:
        record = prepared_dataset(name)
        for remote in raw_files(record, options(record, config)):
            log.info("%s: %s", name, fetch(remote, args.raw_dir, _mirror(args)))
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    """Build one prepared dataset."""
    from dpdl.data.prepared import prepare
    from dpdl.io import save_npz, sha256_file, write_json
    from dpdl.studies import prepared_dataset
    from dpdl.validation import parse_json_object

    opts = parse_json_object(args.options, "--options")
    _check_prepare_options(args.name, opts)
    arrays, card = prepare(prepared_dataset(args.name), opts, cache=args.raw_dir, mirror=_mirror(args))
    save_npz(args.out, arrays)
    write_json(args.card, {**card, "npz_sha256": sha256_file(args.out)})
    log.info(
        "%s: %d training rows, %d features -> %s", args.name, card["rows_train"], card["features"], args.out
    )
    return 0


def _check_prepare_options(name: str, opts: dict) -> None:
    """``--options`` checked as the config values they come from (their schema, the relations between keys).

    A value the config would refuse never reaches the preparation.
    """
    from dpdl.config import validate_config
    from dpdl.data.prepared import check_options
    from dpdl.studies import ALL, prepared_dataset
    from dpdl.validation import set_dotted

    record = prepared_dataset(name)
    check_options(record, opts)
    config: dict = {"studies": [record.study], "data": {}, **{study: {} for study in ALL}}
    for key, dotted in record.options.items():
        set_dotted(config, dotted, opts[key])
    try:
        validate_config(config, study_relations=False)
    except ConfigError as err:
        raise ConfigError(f"--options of {name}, read as the config keys they come from: {err}") from None


def cmd_availability(args: argparse.Namespace) -> int:
    """Print one line per prepared dataset (``--verbose``: then every missing file); exit 1 if one cannot be built."""
    from dpdl.config import load_config
    from dpdl.data.availability import BUILD, availability
    from dpdl.studies import prepared_dataset, prepared_names

    config = load_config(args.configfile)
    datasets = [prepared_dataset(name) for name in prepared_names(config)]
    plan = availability(config, args.raw_dir, _mirror(args), datasets)
    if args.configfile != Path("config/config.yaml"):
        plan.build = f"{BUILD} --configfile {shlex.quote(str(args.configfile))}"
    print(plan.details(verbose=args.verbose))
    return 1 if plan.skipped or plan.corrupt else 0


def cmd_tables(args: argparse.Namespace) -> int:
    """Write the dataset table, or a study's card table (``CARD_TABLES``), from cards."""
    from dpdl.data import tables
    from dpdl.io import write_table
    from dpdl.runs import read_card
    from dpdl.studies import card_table, card_tables, study_module

    if args.kind == "provenance":
        from dpdl.summary import provenance_table

        write_table(
            provenance_table(args.cards), *args.out, title="# Provenance: data hashes and package versions"
        )
        return 0
    cards = [read_card(path) for path in args.cards]
    if args.kind == "datasets":
        write_table(tables.datasets_table(cards, args.unavailable), *args.out, title="# Prepared datasets")
    else:
        study = card_tables()[args.kind]
        by_dataset = {card["dataset"]: card for card in cards if card["study"] == study}
        title = study_module(study).CARD_TABLES[args.kind]
        write_table(card_table(args.kind)(by_dataset), *args.out, title=title)
    return 0


def cmd_scorecard(args: argparse.Namespace) -> int:
    """Write the merged scorecard (CSV, Markdown, HTML)."""
    from dpdl.io import write_text
    from dpdl.studies import ALL
    from dpdl.summary import merge_scorecards, scorecard_html, scorecard_markdown, with_published_verdicts

    scorecards = {path.stem: path for path in args.claims}
    unknown = sorted((set(scorecards) | set(args.studies)) - set(ALL))
    if unknown:
        raise ConfigError(
            f"unknown studies {unknown} (scorecards are named results/claims/<study>.csv); expected {ALL}"
        )
    card = merge_scorecards(
        args.studies,
        scorecards,
        readings=args.readings,
        audits=_audits(args.audits),
        data_premises=_data_premises(args.data_premises),
    )
    if args.published is not None:
        card = with_published_verdicts(card, args.published)
    write_text(args.out[0], card.to_csv(index=False, lineterminator="\n"))
    write_text(args.out[1], scorecard_markdown(card))
    write_text(args.out[2], scorecard_html(card))
    log.info("scorecard: %d claims, %s", len(card), card["verdict"].value_counts().to_dict())
    return 0


def _audits(paths: list[Path]) -> dict:
    """``results/audit/<study>.csv`` paths -> study -> audit table (a clear error for a wrong name)."""
    from dpdl.audit_report import read_audit
    from dpdl.studies import ALL

    unknown = sorted({path.stem for path in paths} - set(ALL))
    if unknown:
        raise ConfigError(f"--audits: unknown studies {unknown} (audit tables are results/audit/<study>.csv)")
    return {path.stem: read_audit(path) for path in paths}


def _data_premises(paths: list[Path]) -> dict:
    """``results/audit/<study>_data_premises.csv`` paths -> study -> data premise table."""
    from dpdl.audit.data_premises import read_data_premises
    from dpdl.studies import ALL

    suffix = "_data_premises"
    studies = {path: path.stem.removesuffix(suffix) for path in paths}
    unknown = sorted(
        str(path) for path, study in studies.items() if study not in ALL or not path.stem.endswith(suffix)
    )
    if unknown:
        raise ConfigError(
            f"--data-premises: {unknown} are not results/audit/<study>_data_premises.csv of {ALL}"
        )
    return {study: read_data_premises(path) for path, study in studies.items()}


def cmd_data_premises(args: argparse.Namespace) -> int:
    """Write one study's premises measured on every record of its prepared datasets (a CSV)."""
    import sys

    from dpdl.audit_report import study_data_premises
    from dpdl.data.prepared import verified_card
    from dpdl.io import load_npz, write_text
    from dpdl.studies import prepared_datasets
    from dpdl.validation import parse_json_object

    study_datasets = {record.study: set() for record in prepared_datasets().values()}
    for record in prepared_datasets().values():
        study_datasets[record.study].add(record.dataset)
    if args.study not in study_datasets:
        raise ConfigError(f"--study: unknown {args.study!r}; expected one of {sorted(study_datasets)}")
    datasets = study_datasets[args.study]
    skipped = parse_json_object(args.skipped, "--skipped")
    prepared, notes = {}, {}
    for npz in args.data:
        if npz.stem not in datasets:
            raise ConfigError(f"--data {npz}: not a prepared dataset of {args.study} ({sorted(datasets)})")
        card = verified_card(npz.with_suffix(".json"), npz)
        prepared[npz.stem] = load_npz(npz)
        if missing := card.get("missing_files"):
            notes[npz.stem] = (
                f"built without {len(missing)} of its selected raw files (missing_files in its card)"
            )
    for dataset, why in skipped.items():
        if dataset not in datasets or dataset in prepared:
            raise ConfigError(f"--skipped {dataset!r}: not a dataset of {args.study} left out here")
        print(f"SKIPPING {why}", file=sys.stderr)  # the line the build's data report gives
    table = study_data_premises(args.study, prepared, {d: str(why) for d, why in skipped.items()})
    for dataset, note in notes.items():
        table.loc[table["dataset"] == dataset, "note"] = note
    write_text(args.out, table.to_csv(index=False, lineterminator="\n"))
    broken = table[table["holds"].astype(str) == "False"]
    log.info("data premises %s: %d measured, %d fail (%s)", args.study, int((table["records"] > 0).sum()),
             len(broken), ", ".join(f"{r.dataset}/{r.premise}" for r in broken.itertuples()) or "none")  # fmt: skip
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """Write one study's audit table (CSV, Markdown) and its provenance (JSON)."""
    from dpdl.audit_report import audit_markdown, audit_study, study_ledger
    from dpdl.config import check_key
    from dpdl.io import write_json, write_text
    from dpdl.studies import ALL

    if args.study not in ALL:
        raise ConfigError(f"--study: unknown {args.study!r}; expected one of {ALL}")
    check_key("audit.runs", args.runs, "--runs")  # the config's bounds (issue 61 item 7)
    check_key("audit.seed", args.seed, "--seed")
    # fails before any run when a cell's declared premises contradict its canary pair
    study_ledger(args.study)
    table, provenance = audit_study(args.study, args.runs, args.seed)
    write_text(args.out[0], table.to_csv(index=False, lineterminator="\n"))
    write_text(args.out[1], audit_markdown(args.study, table))
    write_json(args.out[2], provenance)
    log.info(
        "audit %s: %d cells x scores, %d refute a claim", args.study, len(table), int(table["refutes"].sum())
    )
    return 0


def cmd_reading_build(args: argparse.Namespace) -> int:
    """Build one reading of one study in its own folder."""
    from dpdl.readings import build_reading, reading_config
    from dpdl.validation import parse_json_object

    config = parse_json_object(args.config, "--config")
    if not args.snakefile.is_file():
        raise ConfigError(f"--snakefile {args.snakefile} not found; run dpdl from the project root")
    build_reading(
        args.study, args.reading, reading_config(config, args.study, args.reading), args.snakefile, args.cores
    )
    return 0


def cmd_readings(args: argparse.Namespace) -> int:
    """Write the readings table: every claim's verdict under every reading, and under how many it holds."""
    from dpdl.io import write_text
    from dpdl.readings import READING_SEPARATOR, judged_readings, readings_markdown, study_readings
    from dpdl.studies import ALL
    from dpdl.studies.common import parse_named_paths

    cards = {}
    for key, path in parse_named_paths(args.cards, "--cards").items():
        study, separator, name = key.partition(READING_SEPARATOR)
        if not (separator and study in ALL and name):
            raise ConfigError(
                f"--cards keys are <study>{READING_SEPARATOR}<reading>, a study one of {ALL}; got {key!r}"
            )
        cards[(study, name)] = path
    table, summary, csv = judged_readings(cards)
    write_text(args.out[0], csv)
    write_text(
        args.out[1], readings_markdown(table, summary, {study: study_readings(study) for study, _ in cards})
    )
    return 0


def _config_option(text: str) -> dict:
    """``--config``: the JSON of a whole config (a rule passes the validated one), validated like a config file."""
    from dpdl.config import validate_config
    from dpdl.validation import parse_json_object

    config = parse_json_object(text, "--config")
    try:
        return validate_config(config)
    except ConfigError as err:
        raise ConfigError(f"--config: {err}") from None


def cmd_privacy_table(args: argparse.Namespace) -> int:
    """Write the privacy table of every run of the config."""
    from dpdl.audit_report import privacy_with_audit
    from dpdl.io import write_table
    from dpdl.summary import privacy_table
    from dpdl.targets import study_runs

    runs = study_runs(_config_option(args.config), set(args.buildable))
    title = (
        "# Privacy: per iteration as the paper states it, composed over the run (RDP, PLD) at delta, and the\n"
        "audit's 95% lower bound eps_LB for the audited iterations (`audit_cells`, results/audit/)"
    )
    write_table(privacy_with_audit(privacy_table(runs), _audits(args.audits)), *args.out, title=title)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Print runs finished / total and the estimated CPU time left, per study and run group."""
    import pandas as pd

    from dpdl.config import load_config
    from dpdl.io import markdown_table
    from dpdl.paths import scorecard_path
    from dpdl.readings import narrowing_notes
    from dpdl.summary import headline_counts, saved_runs, status
    from dpdl.targets import plan

    config = load_config(args.configfile)
    table, not_started = status(config, plan(config).buildable)
    if table.empty:
        print(f"{args.configfile}: no runs (no study enabled, or no study's data can be obtained here)")
        return 0
    if not args.groups:
        table = (
            table.groupby(["study", "reading"], sort=False)
            .agg(
                runs=("runs", "sum"),
                present=("present", "sum"),
                left=("left", "sum"),
                cpu_seconds_left=("cpu_seconds_left", lambda s: s.sum(min_count=len(s))),
            )
            .reset_index()
        )
    shown = table.assign(cpu_minutes_left=(table["cpu_seconds_left"] / 60).round(1)).drop(
        columns="cpu_seconds_left"
    )
    print(markdown_table(shown.round(2)), end="")
    unmeasured = sorted(table.loc[table["cpu_seconds_left"].isna(), "study"].unique())
    line = (
        f"\n{int(table['present'].sum())} of {int(table['runs'].sum())} runs finished; CPU time left: about "
    )
    line += f"{table['cpu_seconds_left'].sum() / 3600:.2f} CPU-hours"
    if unmeasured:
        line += f", plus {', '.join(unmeasured)} (no finished run to measure yet)"
    print(line)
    if not_started:
        print(
            f"Readings not started (their runs are counted once a build seeds them): {', '.join(not_started)}"
        )
    for note in narrowing_notes(config) if config.get("readings") else ():
        print(f"Reading {note}")
    saved = saved_runs()
    if not saved.empty:
        print("\nRun jobs a rerun resumes from their saved state (not counted above as done):\n")
        print(markdown_table(saved), end="")
    scorecard = Path(scorecard_path("csv"))
    if scorecard.is_file():
        card = pd.read_csv(scorecard, dtype=str, keep_default_na=False)
        print(f"\nVerdicts of the papers' own claims in {scorecard} (implementation checks not counted):\n")
        print(headline_counts(card), end="")
    return 0


def cmd_render_report(args: argparse.Namespace) -> int:
    """Render the report; print its categories and results, and what the rendered page shows."""
    from dpdl.report import SCORECARD_MARKER, render, report_contents

    contents = report_contents(args.report)
    dom = render(args.report, show=args.show, screenshot=args.screenshot)
    for category, subcategories in sorted(contents["categories"].items()):
        print(f"{category}: {sum(map(len, subcategories.values()))} result(s)")
    problems = (
        []
        if args.show or SCORECARD_MARKER in dom
        else ["the rendered landing page does not show the scorecard"]
    )
    if args.configfile is not None:
        from dpdl.config import load_config
        from dpdl.targets import default_targets, plan

        config = load_config(args.configfile)
        figures = [path for path in default_targets(config, plan(config)) if path.endswith(".png")]
        missing = [
            f
            for f in figures
            if not contents["results"].get(f, {}).get("data_uri", "").startswith("data:image/png")
        ]
        problems += [f"figure {f} is not in the report" for f in missing]
        print(
            f"{len(figures) - len(missing)} of the {len(figures)} figures {args.configfile} promises are in the report"
        )
    if args.screenshot is not None:
        print(f"screenshot: {args.screenshot}")
    if problems:
        raise ArtifactError(f"{args.report}: " + "; ".join(problems))
    print(f"{args.report}: rendered ({len(dom)} characters), scorecard shown")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Print every artifact that differs between two builds; exit 1 if any does."""
    from dpdl.compare import compare_builds

    for folder in (args.first, args.second):
        if not folder.is_dir():
            raise ConfigError(
                f"{folder} is not a folder; pass two build folders (checkouts that ran snakemake)"
            )
    if args.under is not None:
        missing = [
            part for part in args.under if not ((args.first / part).exists() or (args.second / part).exists())
        ]
        if missing:
            raise ConfigError(
                f"--under {' '.join(missing)}: in neither build; give paths inside the build folders"
            )
    compared, differences = compare_builds(args.first, args.second, args.under or ["results", "figures"])
    for difference in differences:
        print(f"{difference.path}: {difference.reason}")
    print(f"{compared} file(s) in both builds, {len(differences)} difference(s)")
    return 1 if differences else 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Publish studies of the finished build here into a snapshot folder."""
    from dpdl.publishing.snapshot import (
        publish,
        publish_audits,
        publish_compute,
        publish_data_premises,
        publish_deviation,
        rejudge,
    )
    from dpdl.studies import ALL

    if sum((args.audit, args.compute, args.data_premises, args.deviation is not None)) > 1:
        raise ConfigError(
            "--audit, --data-premises, --compute and --deviation each add one thing to a snapshot: give one of them"
        )
    if args.rejudge:
        if (
            args.configfile is not None
            or args.studies is not None
            or args.audit
            or args.compute
            or args.data_premises
            or args.deviation is not None
        ):
            raise ConfigError(
                "--rejudge judges the snapshot in --out as it stands: leave out --configfile and --studies"
            )
        for line in rejudge(args.out, args.readme):
            print(line)
        _write_articles(args.out)
        return 0
    if args.configfile is None or args.studies is None:
        raise ConfigError(
            "publish needs --configfile and --studies (or --rejudge to judge the snapshot again)"
        )
    unknown = sorted(set(args.studies) - set(ALL))
    if unknown:
        raise ConfigError(f"--studies: unknown {unknown}; expected some of {ALL}")
    if args.audit:
        publish_audits(args.studies, args.configfile, args.out, args.readme)
    elif args.data_premises:
        publish_data_premises(args.studies, args.configfile, args.out, args.readme)
    elif args.compute:
        publish_compute(args.studies, args.configfile, args.out)
    elif args.deviation is not None:
        if len(args.studies) != 1:
            raise ConfigError(
                f"--deviation {args.deviation}: name its one study in --studies, not {args.studies}"
            )
        publish_deviation(args.studies[0], args.deviation, args.configfile, args.out, args.readme)
    else:
        publish(args.studies, args.configfile, args.out, args.readme)
    _write_articles(args.out)  # an article reads the merged files, so every study's is written again
    added = " (audits)" if args.audit else " (compute)" if args.compute else ""
    added = " (data premises)" if args.data_premises else added
    added = f" (data deviation {args.deviation})" if args.deviation is not None else added
    log.info("published %s%s into %s", ", ".join(args.studies), added, args.out)
    return 0


def _write_articles(out: Path) -> None:
    """Every published study's article, after a publish; out of disk space, one line (each file is whole)."""
    from dpdl.article.write import write_articles
    from dpdl.publishing.staging import disk_error

    try:
        write_articles(out)
    except OSError as err:
        left = (
            "the snapshot is published, each article whole (old or new); write them with `dpdl article --all`"
        )
        raise disk_error(out, err, left) from None


def cmd_article(args: argparse.Namespace) -> int:
    """Write one study's article, or every published study's (--all)."""
    from dpdl.article.write import write_article, write_articles

    if args.all == (args.study is not None):
        raise ConfigError("article needs one study or --all (not both)")
    studies = write_articles(args.published) if args.all else [args.study]
    if not args.all:
        write_article(args.study, args.published)
    for study in studies:
        print(f"{args.published / study}/ARTICLE.md, ARTICLE.html, metadata.yaml written")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate artifacts; print every problem; exit 1 if there is any."""
    from dpdl.check import check_artifacts, check_config_outputs, claim_problems

    if not args.paths and args.configfile is None:
        raise ConfigError(
            "nothing to check: name artifacts (.json cards, .npz runs, a published snapshot folder) or --configfile"
        )
    from dpdl.config import load_config

    config = load_config(args.configfile) if args.configfile is not None else None
    problems = claim_problems(config) + check_artifacts(args.paths)
    checked = len(args.paths)
    if config is not None:
        config_problems, n = check_config_outputs(config)
        problems += config_problems
        checked += n
    for problem in problems:
        print(problem)
    if problems:
        raise ArtifactError(
            f"{len(problems)} problem(s) in {checked} artifact(s), listed above; the first: {problems[0]}"
        )
    print(f"dpdl check: {checked} artifact(s) OK")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Rerun run jobs and compare their files with the build's; exit 1 if any differs or fails."""
    from dpdl.verify import verify

    problems = verify(
        args.paths,
        sample=args.sample,
        seed=args.seed,
        configfile=args.configfile,
        max_cpu_seconds=args.max_cpu_seconds,
    )
    if problems:
        raise ArtifactError(f"{len(problems)} problem(s), listed above; the first: {problems[0]}")
    return 0


def cmd_config_reference(args: argparse.Namespace) -> int:
    """Print or write the configuration reference generated from the packaged schemas (src/dpdl/schemas/)."""
    from dpdl.config_reference import config_reference
    from dpdl.io import write_text

    text = config_reference()
    if args.out is None:
        print(text, end="")
    else:
        try:
            write_text(args.out, text)
        except OSError as err:
            raise ConfigError(f"--out {args.out}: cannot write it ({err.strerror or err})") from None
    return 0
