"""Readings: the papers' unstated settings as named sets of switch values, and which make each claim hold.

A paper leaves settings open (a penalty, a tuning protocol, a loss unit, which algorithm is
"non-private"). Each study declares its *readings* in ``dpdl.studies.<study>.readings.READINGS``
(its package exports them): one per reasonable choice, each with the sentence of the paper (or the
reason) behind it, the default first. The default reading is the config itself; every other reading
is the config with the reading's switches set, built in a folder of its own
(``results/readings/<study>/<reading>/``, a nested Snakemake run that shares ``data/`` and reuses
the main build's jobs the reading does not change).

The readings are a sensitivity analysis, not a vote: the default reading gives the headline
verdict, and :func:`readings_table` says, for every claim and reading, its verdict beside the
default's (judged by the same engine), and whether the reading left the claim unchanged ("n/a":
its scorecard row equals the default's in every computed field, so the reading's switches did not
reach the claim's result). :func:`sensitivity` sums that up per claim; post hoc readings (and post
hoc defaults) are marked. There is no count of the readings under which a claim holds.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from dpdl.claim_kinds import PRIVACY_CLAIM
from dpdl.errors import ConfigError
from dpdl.io import read_text_table
from dpdl.paths import is_run_file
from dpdl.studies import audit_module, study_module
from dpdl.studies.common import DEFAULT as DEFAULT  # re-exported: the readings API in one place
from dpdl.studies.common import READING_SEPARATOR as READING_SEPARATOR
from dpdl.studies.common import Reading as Reading
from dpdl.studies.common import claims_path

READINGS_DIR = Path("results/readings")
READING_KEY = "/"  # joins a study and a reading in reading_cells
READINGS_COLUMNS = [
    "id",
    "study",
    "kind",
    "reading",
    "post_hoc",
    "engine",
    "default_verdict",
    "verdict",
    "unchanged",
    "our_value",
    "effect",
    "ci_low",
    "ci_high",
]
CURRENT_ENGINE = "current"
# What a reading's row must equal in the default's (same engine) for the reading to leave the claim unchanged.
COMPARED = ["verdict", "our_value", "effect", "ci_low", "ci_high", "n_seeds", "test", "detail"]


def study_readings(study: str) -> tuple[Reading, ...]:
    """The readings a study declares, the default first."""
    readings = tuple(study_module(study).READINGS)
    if not readings or readings[0].name != DEFAULT or readings[0].switches:
        raise ValueError(
            f"{study}: the first reading must be {DEFAULT!r} with no switches (the config as given)"
        )
    names = [reading.name for reading in readings]
    if len(set(names)) != len(names):
        raise ValueError(f"{study}: reading names repeat: {names}")
    return readings


def reading(study: str, name: str) -> Reading:
    """One reading of a study, with an error naming the declared ones."""
    found = {r.name: r for r in study_readings(study)}
    if name not in found:
        raise ConfigError(f"{study} has no reading {name!r}; declared: {', '.join(found)}")
    return found[name]


def reading_mechanisms(study: str, config: Mapping) -> dict[str, tuple[dict, bool]]:
    """Each declared reading (the default first): the switch values its build releases with.

    The values are those the study's audited cells record (``mechanism`` of its audit module, on the
    config's section with the reading's switches set), with whether the reading is post hoc. What
    :func:`dpdl.audit_report.reading_privacy_rows` judges each reading by.
    """
    mechanism = audit_module(study).mechanism
    return {r.name: (mechanism({**config[study], **r.switches}), r.post_hoc) for r in study_readings(study)}


def reading_config(config: dict, study: str, name: str) -> dict:
    """``config`` with only ``study`` enabled and its section set to the reading's switches.

    The section also takes the cells ``reading_cells`` gives the reading, if any; readings and the
    audit are off (the audit's cells fix their own switches, so a reading would only repeat it).
    """
    chosen = reading(study, name)
    unknown = sorted(set(chosen.switches) - set(config[study]))
    if unknown:
        raise ConfigError(
            f"reading {study}/{name} sets {unknown}, which are not keys of the {study} config section"
        )
    result = copy.deepcopy(config)
    result["studies"] = [study]
    result["readings"] = False
    if "audit" in result:
        result["audit"] = {**result["audit"], "enabled": False}
    _merge(result[study], chosen.switches)
    narrowed = result.pop("reading_cells", {}).get(f"{study}{READING_KEY}{name}")
    if narrowed is not None:
        result[study]["cells"] = list(narrowed)
    if "reading_cells" in config:
        result["reading_cells"] = {}
    return result


def check_reading_cells(config: dict) -> None:
    """Check that ``reading_cells`` narrows declared readings to some of the config's cells.

    It names declared readings other than the default, of studies with a ``cells`` key (a reading
    never builds a cell the default does not).
    """
    for key, cells in config.get("reading_cells", {}).items():
        study, _, name = key.partition(READING_KEY)
        where = f"reading_cells[{key!r}]"
        if study not in config or not isinstance(config[study], dict) or "cells" not in config[study]:
            raise ConfigError(
                f"{where}: {study!r} is not a study with a `cells` key; name one as <study>/<reading>"
            )
        if name == DEFAULT:
            raise ConfigError(
                f"{where}: the default reading is the config itself; narrow {study}.cells instead"
            )
        reading(study, name)
        allowed = config[study]["cells"]
        outside = [cell for cell in cells if allowed is not None and cell not in allowed]
        if outside:
            raise ConfigError(
                f"{where}: {outside} are not in {study}.cells; a reading builds some of the config's cells, "
                "never others (add them to the config's cells, or drop them here)"
            )
        # e.g. each cell is a job of the grid
        study_module(study).check_config(reading_config(config, study, name))


def _merge(section: dict, switches: Mapping[str, object]) -> None:
    """Set ``switches`` in ``section``; a nested mapping sets only its keys.

    For example ``{"tuning": {"scope": ...}}`` sets ``tuning.scope`` and keeps the rest of ``tuning``.
    """
    for key, value in switches.items():
        if isinstance(value, Mapping) and isinstance(section.get(key), dict):
            _merge(section[key], value)
        else:
            section[key] = copy.deepcopy(value)


def narrowed_cells(config: dict) -> dict[str, tuple[list[str], list[str] | None]]:
    """Each reading ``reading_cells`` narrows: its cells, and the config's cells it leaves out.

    Readings are named ``<study>/<reading>``; the cells left out are None where the config's
    ``cells`` are the whole grid.
    """
    found = {}
    for key, cells in config.get("reading_cells", {}).items():
        every = config[key.partition(READING_KEY)[0]].get("cells")
        found[key] = (list(cells), None if every is None else [cell for cell in every if cell not in cells])
    return found


def narrowing_notes(config: dict) -> list[str]:
    """One line per reading ``reading_cells`` narrows: how many cells it builds.

    A count of what is left (``dpdl status``) then says which cells it does not count.
    """
    notes = []
    for key, (cells, left_out) in narrowed_cells(config).items():
        if left_out is None:
            notes.append(f"{key}: built on {len(cells)} cells of the grid (reading_cells)")
        else:
            scope = f"{len(cells)} of the config's {len(cells) + len(left_out)} cells"
            notes.append(
                f"{key}: built on {scope} (reading_cells); the runs of the other {len(left_out)} are not counted"
            )
    return notes


def reading_folder(study: str, name: str) -> Path:
    """Where a non-default reading of a study is built (a Snakemake working directory)."""
    return READINGS_DIR / study / name


def reading_scorecard(study: str, name: str) -> str:
    """The study scorecard a reading's build writes."""
    return str(reading_folder(study, name) / claims_path(study, "csv"))


def readings_path(ext: str) -> str:
    """The table of every claim's verdict under every reading: ``csv``, ``md`` or ``html``."""
    return f"results/readings.{ext}"


def readings_table(
    cards: Mapping[tuple[str, str], str | Path],
    baselines: Mapping[tuple[str, str], str | Path] | None = None,
    engines: Mapping[tuple[str, str], str] | None = None,
) -> pd.DataFrame:
    """One row per (claim, reading) from each reading's study scorecard (``(study, reading) -> CSV``).

    Each reading is compared with the default's scorecard judged by the same engine: ``baselines``
    names it where that is not the study's default card (a reading the snapshot could not judge
    again, beside the default as the same retired engine judged it); ``engines`` labels each
    reading's engine (``current`` unless given). ``unchanged`` is "yes" where every computed field
    (:data:`COMPARED`) equals the default's.
    """
    baselines, engines = dict(baselines or {}), dict(engines or {})
    frames = []
    for (study, name), path in cards.items():
        frame = _scorecard(path)
        base_path = baselines.get((study, name), cards.get((study, DEFAULT)))
        base = _scorecard(base_path).set_index("id") if base_path is not None else None
        post_hoc = {r.name: r.post_hoc for r in study_readings(study)}.get(name, False)
        frame["reading"] = name
        frame["post_hoc"] = "yes" if post_hoc else "no"
        frame["engine"] = engines.get((study, name), CURRENT_ENGINE)
        if base is None:
            frame["default_verdict"], frame["unchanged"] = "", ""
        else:
            frame["default_verdict"] = frame["id"].map(base["verdict"]).fillna("")
            same = [
                claim in base.index
                and all(row[c] == base.at[claim, c] for c in COMPARED if c in frame.columns)
                for claim, (_, row) in zip(frame["id"], frame.iterrows(), strict=True)
            ]
            frame["unchanged"] = ["" if name == DEFAULT else ("yes" if s else "no") for s in same]
        frames.append(frame[READINGS_COLUMNS])
    if not frames:
        return pd.DataFrame(columns=READINGS_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def _scorecard(path: str | Path) -> pd.DataFrame:
    from dpdl.chain import note_read

    note_read(path)
    return read_text_table(path)


def sensitivity(table: pd.DataFrame, declared: Mapping[str, Sequence[Reading]]) -> pd.DataFrame:
    """Per claim: its default verdict and what each other reading does to it, as one line.

    ``differs`` lists the readings under which the verdict is another (with that verdict), ``same``
    those with the default's verdict, ``n/a`` those that left the claim unchanged, ``not built``
    the declared readings without a scorecard; ``*`` marks a post hoc reading, ``(retired engine)``
    one judged by the engine that preceded this one (compared with the default judged alike), and a
    post hoc default opens the line. ``declared`` maps a study to its readings, the default first.
    """
    rows = []
    for (study, claim), part in table.groupby(["study", "id"], sort=False):
        by_name = {row["reading"]: row for _, row in part.iterrows()}
        readings = list(declared.get(study, ()))
        groups: dict[str, list[str]] = {"differs": [], "same": [], "n/a": [], "not built": []}
        for reading in readings[1:]:
            row = by_name.get(reading.name)
            label = reading.name + ("*" if reading.post_hoc else "")
            if row is None:
                groups["not built"].append(label)
                continue
            if row["engine"] != CURRENT_ENGINE:
                label += " (retired engine)"
            if row["unchanged"] == "yes":
                groups["n/a"].append(label)
            elif row["verdict"] != row["default_verdict"]:
                groups["differs"].append(f"{label}: {row['verdict']}")
            else:
                groups["same"].append(label)
        parts = [f"{key}: {', '.join(names)}" for key, names in groups.items() if names]
        default = by_name.get(DEFAULT)
        if default is not None and default["kind"] == PRIVACY_CLAIM:  # its scorecard verdict spans every cell
            parts.insert(0, f"default reading's mechanism: {default['verdict']}")
        if readings and readings[0].post_hoc:
            parts.insert(0, "default post hoc")
        rows.append(
            {
                "id": claim,
                "study": study,
                "default_verdict": "" if default is None else default["verdict"],
                "readings": "; ".join(parts) + ("; * post hoc" if any("*" in p for p in parts) else ""),
            }
        )
    return pd.DataFrame(rows, columns=["id", "study", "default_verdict", "readings"])


def build_reading(study: str, name: str, config: dict, snakefile: str | Path, cores: int) -> None:
    """Build one non-default reading's study scorecard: a nested Snakemake run in its own folder.

    The folder gets the reading's full config (``config.yaml``) and a link to this project's
    ``data/`` (prepared datasets are shared, never rebuilt per reading), is seeded with the main
    build's finished outputs (:func:`seed_from_main_build`), and keeps its own Snakemake cache: the
    build runs only the jobs the reading changes, and a later call only what is left.
    """
    import subprocess

    import yaml

    from dpdl.errors import DpdlError
    from dpdl.io import write_text

    if name == DEFAULT:
        raise ConfigError(
            f"the {DEFAULT!r} reading is the main build itself; build {claims_path(study, 'csv')}"
        )
    folder = reading_folder(study, name).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if config["data"].get("mirror"):
        mirror = str(Path(config["data"]["mirror"]).resolve())
        config = {**config, "data": {**config["data"], "mirror": mirror}}
    write_text(folder / "config.yaml", yaml.safe_dump(config, sort_keys=True))
    data = folder / "data"
    if not data.is_symlink():
        data.symlink_to(Path("data").resolve(), target_is_directory=True)
    seeded = seed_from_main_build(study, folder)
    print(
        f"{study}/{name}: {seeded} outputs of the main build linked in; Snakemake reruns what the reading changes"
    )
    command, env = _nested_snakemake(folder, snakefile, "--cores", str(cores), "--rerun-incomplete")
    result = subprocess.run([*command, claims_path(study, "csv")], check=False, env=env)
    if result.returncode != 0:
        raise DpdlError(
            f"the build of reading {study}/{name} failed (exit {result.returncode}); "
            f"its jobs' logs are in {folder / 'logs'} and Snakemake's in {folder / '.snakemake' / 'log'}"
        )


def snakemake_command() -> list[str]:
    """How dpdl starts Snakemake itself (a reading's nested build, the inputs ``dpdl publish`` records).

    With the interpreter the workflow's rules run: ``python`` on ``PATH``, as each rule's shell command
    (``python -m dpdl``) finds it; this one where none is there.
    """
    import shutil
    import sys

    return [shutil.which("python") or sys.executable, "-m", "snakemake"]


def _nested_snakemake(folder: Path, snakefile: str | Path, *options: str) -> tuple[list[str], dict[str, str]]:
    """The command running Snakemake on a reading's ``folder``, and its environment.

    The folder has its own config and cache.
    """
    import os

    from dpdl.data.fetch import MIRROR_ENV

    folder = Path(folder).resolve()
    # the nested build runs in its own folder: a relative mirror must name the same folder
    env = dict(os.environ)
    if env.get(MIRROR_ENV):
        env[MIRROR_ENV] = str(Path(env[MIRROR_ENV]).resolve())
    command = [
        *snakemake_command(),
        *("--snakefile", str(Path(snakefile).resolve())),
        *("--directory", str(folder), "--configfile", str(folder / "config.yaml"), *options),
    ]
    return command, env


def reading_plan(study: str, name: str, snakefile: str | Path) -> pd.DataFrame | None:
    """What is left of a started reading build: each run the reading has or will make of its own.

    Snakemake decides, as for the build (``snakemake --summary`` in the reading's folder): a run is
    *left* when its plan is "update pending" (missing, or made under other params, as the main
    build's runs linked in before the reading changed them are), and *made* when it is up to date
    and is not the main build's file (a hard link to it is a run the reading shares). Returns one
    row per such run (``path`` relative to the folder, ``left``), or None for a reading whose
    folder has no config yet (not started: what it will rerun is known once it is seeded).
    """
    import subprocess

    from dpdl.errors import DpdlError

    folder = reading_folder(study, name)
    if not (folder / "config.yaml").is_file():
        return None
    command, env = _nested_snakemake(folder, snakefile, "--cores", "1", "--nolock", "--summary")
    result = subprocess.run([*command, claims_path(study, "csv")], capture_output=True, text=True, env=env)
    lines = result.stdout.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("output_file\t")), None)
    if result.returncode != 0 or header is None:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise DpdlError(f"snakemake --summary in {folder} failed (exit {result.returncode}): {last}")
    summary = [line.split("\t") for line in lines[header + 1 :] if line.count("\t") >= 5]
    rows = []
    for output, *_, plan in summary:
        if not is_run_file(output, study):
            continue
        left = plan == "update pending"
        shared = not left and Path(output).is_file() and (folder / output).samefile(output)
        if not shared:
            rows.append({"path": output, "left": left})
    return pd.DataFrame(rows, columns=["path", "left"])


# The main build's outputs a reading can reuse: a study's results, its tables, and the benchmarks
# Snakemake keeps beside them (a benchmark is a job output; without it the job reruns).
SEEDED_ROOTS = ("results/{study}/", "results/tables/{study}/", "benchmarks/{study}/")
SNAKEMAKE_RECORDS = Path(".snakemake")


def seed_from_main_build(study: str, folder: Path) -> int:
    """Link the main build's finished outputs of ``study`` into a reading's ``folder``.

    Their Snakemake records (``.snakemake/metadata``) are linked with them; return how many were
    linked.

    The nested build then reruns exactly the jobs whose params, input files or rule code the reading
    changes, and everything downstream of them: Snakemake's rerun triggers decide, as they do for an
    incremental main build, so a reading shares every run its switches do not reach (dvp_pvp's
    loss_log10 reuses all runs; dp_iadmm's nonprivate_objt all private runs). Outputs are hard links
    (a copy across file systems): jobs write by rename, so a rerun replaces the reading's link and
    never the main build's file. An output without a record, or marked incomplete in the main build
    or the reading (a job killed or still running there: its rerun resumes its own state), is not
    linked, nor is one the reading already has.
    """
    import shutil
    from base64 import urlsafe_b64decode

    from dpdl.chain import record_path

    roots = tuple(root.format(study=study) for root in SEEDED_ROOTS)
    records = SNAKEMAKE_RECORDS / "metadata"
    # With records but no "incomplete" folder, Snakemake would walk every record to "migrate" it.
    (folder / SNAKEMAKE_RECORDS / "incomplete").mkdir(parents=True, exist_ok=True)
    linked = 0
    for record in sorted(path for path in records.rglob("*") if path.is_file()):
        encoded = record.relative_to(records).parts  # Snakemake splits a long name into "@"-prefixed folders
        try:
            output = urlsafe_b64decode("".join(part.removeprefix("@") for part in encoded)).decode()
        except (ValueError, UnicodeDecodeError):
            continue  # not a record of an output path
        source, target = Path(output), folder / output
        if not output.startswith(roots) or not source.is_file() or target.exists():
            continue
        marker = Path("incomplete") / record.relative_to(records)
        if (SNAKEMAKE_RECORDS / marker).exists() or (folder / SNAKEMAKE_RECORDS / marker).exists():
            continue  # the main build's job, or the reading's own, was left incomplete (or is running)
        target.parent.mkdir(parents=True, exist_ok=True)
        # with its hash chain
        for origin, link in ((source, target), (record_path(source), record_path(target))):
            if origin.is_file() and not link.exists():
                try:
                    link.hardlink_to(origin)
                except OSError:
                    shutil.copy2(origin, link)
        target_record = folder / record
        target_record.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(record, target_record)
        linked += 1
    return linked


def judged_readings(
    cards: Mapping[tuple[str, str], str | Path],
    baselines: Mapping[tuple[str, str], str | Path] | None = None,
    engines: Mapping[tuple[str, str], str] | None = None,
    privacy: Sequence[pd.DataFrame] = (),
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Every claim under every built reading: the table, the sensitivity lines and the joined CSV.

    The sensitivity line of each claim is against each study's declared readings; the CSV is
    ``results/readings.csv``, ``published/readings.csv``. ``privacy`` adds the privacy claims' rows
    per reading (:func:`dpdl.audit_report.reading_privacy_rows`).
    """
    every_row = pd.concat([readings_table(cards, baselines, engines), *privacy], ignore_index=True)
    table = every_row[READINGS_COLUMNS]
    studies = dict.fromkeys(study for study, _ in cards)
    summary = sensitivity(table, {study: study_readings(study) for study in studies})
    csv = table.merge(summary[["id", "readings"]], on="id").to_csv(index=False, lineterminator="\n")
    return table, summary, csv


def readings_markdown(
    table: pd.DataFrame, summary: pd.DataFrame, declared: Mapping[str, Sequence[Reading]]
) -> str:
    """The readings page: each study's readings with their reasons, then every claim's verdict per reading.

    A verdict is "n/a" where the reading left it unchanged; "(retired engine)" where the engine that
    preceded this one judged it.
    """
    from dpdl.io import markdown_table

    shown = table.assign(
        cell=[
            "n/a"
            if row.unchanged == "yes"
            else row.verdict + ("" if row.engine == CURRENT_ENGINE else " (retired engine)")
            for row in table.itertuples()
        ]
    )
    wide = shown.pivot_table(
        index=["study", "id"], columns="reading", values="cell", aggfunc="first", sort=False
    )
    wide = wide.reset_index().merge(summary[["id", "readings"]], on="id", how="left")
    described = pd.DataFrame(
        [
            {"study": study, "reading": r.name, "switches": dict(r.switches) or "(the config)", "why": r.why}
            | {"chosen after a verdict was seen": "yes (post hoc)" if r.post_hoc else "no"}
            for study, found in declared.items()
            for r in found
        ]
    )
    return (
        "# Readings: the papers' open settings, as a sensitivity analysis\n\n"
        "A reading is a named set of values for settings a paper leaves open; `default` is the "
        "config and gives\nthe headline verdict. Each other reading's verdict is shown beside it, "
        "not counted: n/a where the\nreading left the claim's result unchanged (the same value, "
        "interval and detail as the default).\n\n"
        + markdown_table(described)
        + "\n## Verdict of every claim under every reading\n\n"
        + markdown_table(wide.fillna(""))
    )
