"""Verdicts re-derived, never copied: a scorecard must be what its per-seed tables give.

The tables are judged again in memory.

``dpdl publish --rejudge`` (:func:`dpdl.publishing.snapshot.rejudge`) rewrites a snapshot's
scorecards from its per-seed tables: :func:`judging_plan` says which scorecards it judges and with
which config, :func:`judged_card` judges one. The same two, judged in memory and compared with the
scorecards as they stand, are what ``dpdl check published`` (:func:`snapshot_problems`), ``dpdl
publish`` (:func:`refuse_misjudged`, on the build's tables, before anything is written) and ``dpdl
check --configfile`` on a build (:func:`build_problems`) report, so that a verdict edited by hand,
its manifest's hashes and the merged files made to agree, is still found. Every column the judge
writes is compared (each was reproduced bit for bit on the committed snapshot); numbers within
:data:`NUMBERS_RTOL`.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from dpdl.errors import DpdlError
from dpdl.paths import (
    PUBLISHED_AGGREGATES,
    aggregates_folder,
    cards_folder,
    published_aggregate,
    published_deviation,
    published_reading,
)
from dpdl.readings import CURRENT_ENGINE, DEFAULT, reading_config, reading_folder, study_readings
from dpdl.studies import ALL, study_module
from dpdl.studies.common import claims_path

# How far a re-derived number may be from the scorecard's and still be its number (relative):
# another machine's floating point, as publish's SAME_NUMBERS_RTOL for tables; a verdict and every
# text column must be equal.
NUMBERS_RTOL = 1e-9
SHOWN = 3  # columns named per differing claim; the rest counted
CLIP = 60  # characters shown of a value


def judging_plan(
    study: str, manifest: Mapping, folder: Path
) -> tuple[dict[str, tuple[Path, dict]], dict[str, str]]:
    """What :func:`dpdl.publishing.snapshot.rejudge` judges of ``study`` published in ``folder``.

    ``manifest``: its MANIFEST.json. Each scorecard it can judge, the default's and each declared
    reading's, by reading, with the folder whose ``aggregates/`` it is judged from and the config;
    and the reading engines, where a built reading it can judge neither way is marked retired (it
    keeps the scorecard its build gave it).
    """
    config = snapshot_config(study, manifest["config"])
    claims_step = set(study_module(study).CLAIMS_STEP_KEYS)
    engines = dict(manifest.get("reading_engines", {}))
    judged = {DEFAULT: (folder, config)}
    for reading in study_readings(study)[1:]:
        own = folder / published_reading(reading.name)
        if (own / PUBLISHED_AGGREGATES).is_dir():
            judged[reading.name] = (own, reading_config(config, study, reading.name))
        elif set(reading.switches) <= claims_step:
            judged[reading.name] = (folder, reading_config(config, study, reading.name))
        elif reading.name in manifest["readings"] and reading.name not in engines:
            engines[reading.name] = f"retired ({manifest['code']['commit'][:7]})"
    return judged, engines


def snapshot_config(study: str, recorded: Mapping) -> dict:
    """The config a manifest records (its data and study sections), the other studies' at their defaults."""
    from dpdl.config import validate_config

    sections = {other: {} for other in ALL}  # the other studies' sections: their schema defaults
    return validate_config({**sections, **recorded, "studies": [study]})


def deviation_plan(study: str, manifest: Mapping, folder: Path) -> dict[str, tuple[Path, dict]]:
    """Each data deviation published with ``study`` in ``folder``: its folder and the config it was built with.

    Its folder (``deviations/<name>/``) holds its scorecard, per-seed tables and cards, as a study folder
    does (:func:`dpdl.publishing.snapshot.publish_deviation`).
    """
    return {
        name: (folder / published_deviation(name), snapshot_config(study, record["config"]))
        for name, record in manifest.get("deviations", {}).items()
    }


def scorecard_name(reading: str) -> str:
    """A reading's scorecard inside a study folder of a snapshot."""
    return "claims.csv" if reading == DEFAULT else f"{published_reading(reading)}.csv"


def judged_card(study: str, source: Path, config: dict, folder: Path) -> pd.DataFrame:
    """The scorecard of ``study`` judged from ``source/aggregates/`` with ``config``.

    It uses the dataset cards of its study folder ``folder`` (a reading's folder holds no cards:
    they are its study's).
    """
    return study_module(study).judge_snapshot(source, config, folder / "cards")


def card_text(card: pd.DataFrame) -> str:
    """A scorecard as its CSV file holds it."""
    return card.to_csv(index=False, lineterminator="\n")


@dataclass(frozen=True)
class Rejudged:
    """One scorecard of a study folder to judge again.

    The reading, the folder whose ``aggregates/`` it is judged from, its config, and how a problem
    line names it.
    """

    study: str
    reading: str
    source: Path
    config: dict
    folder: Path
    where: Path
    what: str = ""  # how a problem line names it (default: the study and reading)


_REDERIVED: dict[tuple, str] = {}  # judged text by study, config and the bytes judged (one process)
# a table the judge cannot read: a problem line, not a traceback
FAILED = (DpdlError, OSError, KeyError, ValueError)


def rederived(jobs: list[Rejudged]) -> list[str | Exception]:
    """:func:`judged_card` of each of ``jobs`` as text (or the error that stopped it).

    Judged in processes of their own where there are cores, and once per process for the same study,
    config and bytes of the tables and cards it reads (a copy of a snapshot is judged again only
    where a file differs).
    """
    keys: list[tuple | Exception] = []
    for job in jobs:
        try:
            tables, cards = job.source / PUBLISHED_AGGREGATES, job.folder / "cards"
            files = [*sorted(tables.glob("*")), *sorted(cards.glob("*"))]
            digests = tuple(
                (p.parent.name, p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files
            )
            keys.append((job.study, json.dumps(job.config, sort_keys=True, default=str), digests))
        except OSError as err:
            keys.append(err)
    todo = {
        key: job
        for key, job in zip(keys, jobs, strict=True)
        if isinstance(key, tuple) and key not in _REDERIVED
    }
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(len(todo), cores) if "fork" in multiprocessing.get_all_start_methods() else 1
    if workers > 1:  # forked: the judge's modules are imported already
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {key: pool.submit(_judged_text, job) for key, job in todo.items()}
            done = {key: _outcome(future.result) for key, future in futures.items()}
    else:
        done = {key: _outcome(partial(_judged_text, job)) for key, job in todo.items()}
    _REDERIVED.update((key, text) for key, text in done.items() if isinstance(text, str))
    return [
        key if isinstance(key, Exception) else _REDERIVED[key] if key in _REDERIVED else done[key]
        for key in keys
    ]


def _judged_text(job: Rejudged) -> str:
    return card_text(judged_card(job.study, job.source, job.config, job.folder))


def _outcome(call: Callable[[], str]) -> str | Exception:
    try:
        return call()
    except FAILED as err:
        return err


def snapshot_problems(out: Path, manifests: Mapping[str, Mapping]) -> list[str]:
    """One line per published claim whose scorecard row is not what the snapshot's per-seed tables give.

    Every study of ``manifests`` (``published_studies(out)``), under each published reading
    :func:`judging_plan` judges (a reading of a retired engine keeps its build's scorecard).
    """
    fix = "judge the snapshot again (`dpdl publish --rejudge`) or publish it again"
    return study_problems([(out / study, manifest, {}) for study, manifest in manifests.items()], fix)


def study_problems(studies: Iterable[tuple[Path, Mapping, Mapping[str, Path]]], fix: str) -> list[str]:
    """:func:`snapshot_problems` of study folders; ``fix`` ends each line.

    Each folder comes with its manifest and, by reading, how the lines name its scorecard (default:
    its path in the folder).
    """
    problems, jobs = [], []
    for folder, manifest, shown in studies:
        study = folder.name
        try:
            judged, _ = judging_plan(study, manifest, folder)
            deviations = deviation_plan(study, manifest, folder)
        except FAILED as err:
            problems.append(
                f"{folder}: its claims cannot be judged again ({type(err).__name__}: {err}); {fix}"
            )
            continue
        for name in (name for name in manifest["readings"] if name in judged):
            where = shown.get(name, folder / scorecard_name(name))
            jobs.append(Rejudged(study, name, *judged[name], folder, where))
        for name, (source, config) in deviations.items():
            what = f"{study}, data deviation {name}"
            jobs.append(
                Rejudged(study, DEFAULT, source, config, source, source / scorecard_name(DEFAULT), what)
            )
    for job, text in zip(jobs, rederived(jobs), strict=True):
        what = job.what or f"{job.study}, reading {job.reading}"
        if isinstance(text, Exception):
            said = f"cannot be judged again from its per-seed tables ({type(text).__name__}: {text})"
            problems.append(f"{job.where}: {said} ({what}); {fix}")
        else:
            problems += card_differences(job.folder / scorecard_name(job.reading), text, what, job.where, fix)
    return problems


def card_differences(path: Path, text: str, what: str, where: Path, fix: str) -> list[str]:
    """One line per claim where the scorecard ``path`` differs from ``text`` (the judge's, :func:`card_text`).

    A verdict or other text column not equal, a number beyond :data:`NUMBERS_RTOL`, a claim only in
    one.
    """
    try:
        if path.read_text(encoding="utf-8") == text:
            return []
        stored = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return [f"{where}: cannot be read to compare with what its per-seed tables give ({err}); {fix}"]
    derived = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if "id" not in stored.columns or stored["id"].duplicated().any():
        return [f"{where}: not a scorecard of one row per claim id ({what}); {fix}"]
    problems = []
    missing = [column for column in derived.columns if column not in stored.columns]
    if missing:
        problems.append(
            f"{where}: no column {missing[0]} ({len(missing)} missing) of the judge's ({what}); {fix}"
        )
    columns = ["verdict", *(c for c in derived.columns if c != "verdict" and c in stored.columns)]
    ours = stored.set_index("id")
    for row in derived.to_dict("records"):
        claim = row["id"]
        if claim not in ours.index:
            said = f"verdict {_clip(row['verdict'])} from its per-seed tables, but not in the scorecard"
            problems.append(f"{where}: claim {claim} ({what}): {said}; {fix}")
            continue
        found = [
            f"{column} {_clip(ours.at[claim, column])} here, {_clip(row[column])} from its per-seed tables"
            for column in columns
            if column in ours.columns and not _same(ours.at[claim, column], row[column])
        ]
        if found:
            more = f"; and {len(found) - SHOWN} more columns" if len(found) > SHOWN else ""
            problems.append(f"{where}: claim {claim} ({what}): {'; '.join(found[:SHOWN])}{more}; {fix}")
    for claim in sorted(set(ours.index) - set(derived["id"])):
        problems.append(
            f"{where}: claim {claim} ({what}): in the scorecard, but its per-seed tables judge no such claim; {fix}"
        )
    if not problems and list(stored["id"]) != list(derived["id"]):
        problems.append(f"{where}: claims not in the order the judge writes them ({what}); {fix}")
    return problems


def _same(stored: str, derived: str) -> bool:
    """The same text, or numbers within :data:`NUMBERS_RTOL` (NaN where the other is NaN)."""
    if stored == derived:
        return True
    try:
        a, b = float(stored), float(derived)
    except ValueError:
        return False
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=NUMBERS_RTOL, abs_tol=0.0)


def _clip(value: str) -> str:
    return repr(value if len(value) <= CLIP else value[: CLIP - 3] + "...")


def build_problems(builds: Mapping[str, tuple[Mapping[str, Path], Mapping]], config: dict) -> list[str]:
    """:func:`snapshot_problems` of the build here.

    Each study of ``builds`` whose scorecard (``results/claims/<study>.csv``) and per-seed tables
    (``results/<study>/aggregates/``) are present, judged from the tables and cards ``dpdl publish``
    would copy, default and each built reading. ``builds``: each study's built readings' scorecards
    and the readings ``reading_cells`` narrows (:func:`dpdl.publishing.layout.built_readings`,
    :func:`dpdl.publishing.layout.narrowed_readings`); ``config``: the build's.
    """
    fix = "delete it and build it again with snakemake (its claims step)"
    present = [s for s in builds if Path(claims_path(s, "csv")).is_file() and aggregates_folder(s).is_dir()]
    with tempfile.TemporaryDirectory(prefix="dpdl-verdicts-") as staging:
        folders = {s: Path(staging) / s for s in present}
        staged = [(folders[s], *_stage_build(s, *builds[s], config, folders[s])) for s in present]
        return study_problems(staged, fix)


def refuse_misjudged(builds: Mapping[str, tuple[Mapping[str, Path], Mapping]], config: dict) -> None:
    """Stop ``dpdl publish`` before it writes anything where a built scorecard is wrong; name the first claim.

    Wrong: a scorecard of the studies of ``builds`` that is not what the per-seed tables it would
    publish give (:func:`build_problems`).
    """
    problems = build_problems(builds, config)
    if problems:
        count = f" ({len(problems)} differences; the first)" if len(problems) > 1 else ""
        raise DpdlError(
            f"nothing published: a built verdict is not what its per-seed tables give{count}: {problems[0]}"
        )


def _stage_build(
    study: str, built: Mapping[str, Path], narrowed: Mapping, config: dict, folder: Path
) -> tuple[dict, Mapping[str, Path]]:
    """Lay out in ``folder``, as links, what ``dpdl publish`` copies of ``study`` to judge it from.

    Scorecards of the ``built`` readings, per-seed tables but those of cells a ``narrowed`` reading
    leaves out, dataset cards (:func:`dpdl.publishing.snapshot.publish_study`). Return the
    manifest's part that :func:`judging_plan` reads and each reading's scorecard in the build.
    """

    def link(name: str, source: Path) -> None:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source.resolve(), folder / name)

    for table in sorted(aggregates_folder(study).glob("*.csv")):
        link(published_aggregate(table.name), table)
    for card in sorted(cards_folder(study).glob("*.json")):
        link(f"cards/{card.name}", card)
    for name, path in built.items():
        link(scorecard_name(name), path)
        tables = aggregates_folder(study, reading_folder(study, name)).glob("*.csv")
        for table in sorted(tables) if name != DEFAULT else []:
            if name not in narrowed or table.name in narrowed[name]["tables"]:
                link(published_aggregate(table.name, name), table)
    section = {key: config[key] for key in ("data", study)}
    reading_cells = config.get("reading_cells", {})
    cells = {key: value for key, value in reading_cells.items() if key.startswith(f"{study}/")}
    manifest = {
        "config": section | ({"reading_cells": cells} if cells else {}),
        "readings": sorted(built, key=[r.name for r in study_readings(study)].index),
        "reading_engines": dict.fromkeys(built, CURRENT_ENGINE),
        "code": {"commit": "the build"},
    }
    return manifest, built
