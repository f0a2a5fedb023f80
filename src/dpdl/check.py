"""``dpdl check``: validate cards, runs and every output a configuration promises."""

from __future__ import annotations

import logging
from pathlib import Path

from dpdl import chain
from dpdl.article.write import article_problems
from dpdl.data.prepared import card_problems, check_arrays
from dpdl.errors import ArtifactError
from dpdl.io import load_npz, read_json
from dpdl.lock import lock_differences
from dpdl.paths import PROCESSED, run_files, scorecard_path
from dpdl.publishing.problems import published_problems
from dpdl.runs import checked_run, load_schema, schema_errors, trace_arrays, validate_run
from dpdl.studies import prepared_datasets
from dpdl.summary import scorecard_problems

log = logging.getLogger("dpdl")


def check_card(path: Path, config: dict | None = None) -> list[str]:
    """Problems with a prepared dataset's card and its arrays.

    Checked: the schema, the name against its path and, with the build's ``config``, the options
    against the config's (:func:`dpdl.data.prepared.card_problems`); the hash, a pickle-free load.
    """
    try:
        card = read_json(path)
    except ArtifactError as err:
        return [str(err)]
    problems = [f"{path}: {e}" for e in schema_errors(card, load_schema("card"))]
    # the schema says a name; the registry says which
    if not problems and card["name"] not in prepared_datasets():
        known = ", ".join(prepared_datasets())
        problems.append(f"{path}: name: {card['name']!r} is not a registered prepared dataset ({known})")
    problems = problems or card_problems(card, Path(path), prepared_datasets().get(card["name"]), config)
    arrays_path = Path(path).with_suffix(".npz")
    if problems:
        return problems
    if not arrays_path.is_file():
        return [f"{path}: its arrays {arrays_path} are missing"]
    try:
        check_arrays(arrays_path, card, path)
    except ArtifactError as err:
        problems.append(str(err))
    try:
        arrays = load_npz(arrays_path)
    except ArtifactError as err:
        return problems + [str(err)]
    for name, meta in card.get("arrays", {}).items():
        if name not in arrays or list(arrays[name].shape) != meta["shape"]:
            problems.append(f"{arrays_path}: array {name!r} missing or not of shape {meta['shape']}")
    return problems


def check_artifacts(paths: list[Path]) -> list[str]:
    """Problems with each given artifact: ``.json`` cards, ``.npz`` runs, a published snapshot folder."""
    problems = []
    for path in map(Path, paths):
        if path.is_dir():
            problems += published_problems(path) + article_problems(path)
        elif not path.is_file():
            problems.append(f"{path}: not found")
        elif path.suffix == ".json":
            problems += check_card(path)
        elif path.suffix == ".npz":
            problems += validate_run(path) or _unregistered_study(path) or _run_chain(path)
        else:
            problems.append(f"{path}: not a dpdl artifact (.json card or .npz run)")
    return problems


def _unregistered_study(path: Path) -> list[str]:
    """A valid run of a study the registry does not know.

    The run schema says a name; the registry says which.
    """
    from dpdl.studies import ALL

    study = checked_run(path)[0].provenance["study"]
    return [] if study in ALL else [f"{path}: study: {study!r} is not a registered study ({', '.join(ALL)})"]


def _run_chain(path: Path) -> list[str]:
    """A valid run's link of the hash chain: its arrays and the inputs it read, as they are now."""
    result = checked_run(path)[0]
    link = chain.run_link(path, result.provenance, trace_arrays(result.trace))
    if link is None:
        log.warning("%s: no hash-chain record (%s)", path, chain.NO_RECORD)
        return []
    return chain.breaks([link])


def claim_problems(config: dict | None = None) -> list[str]:
    """Problems across the registered claims and, with the build's ``config``, their verdicts.

    An id registered twice (each claim checks its own kind, form, tolerance or margin and reason
    when it is made: :class:`dpdl.claims.Claim`); with the build's ``config``, each verdict of its
    scorecards (``results/claims/<study>.csv`` and its built readings') that is not what the
    per-seed tables here give, judged again (:func:`dpdl.verdict_check.build_problems`).
    """
    from dpdl.studies import ALL, study_module

    problems, seen = [], set()
    for study in ALL:
        for claim in study_module(study).CLAIMS:
            if claim.id in seen:
                problems.append(f"claim {claim.id} ({study}): its id is registered twice")
            seen.add(claim.id)
    if config is not None:
        from dpdl.publishing.layout import built_readings, narrowed_readings
        from dpdl.targets import plan
        from dpdl.verdict_check import build_problems

        buildable = plan(config).buildable
        builds = {s: (built_readings(s), narrowed_readings(s, config, buildable)) for s in config["studies"]}
        problems += build_problems(builds, config)
    return problems


def run_problems(runs: list[Path], links: list[chain.Record] | None = None) -> tuple[list[str], list[str]]:
    """Problems with each run, from one read of it, and how their package versions differ from the lock.

    A run fails :func:`dpdl.runs.checked_run` (its schema; a copied or swapped file: held under
    another path than it was written to, so a second copy of one cell and seed) or was made from a
    prepared dataset other than the one its card now describes. The differences
    (``lock_differences``) are warnings, not problems. Each run's link of the hash chain
    (:func:`dpdl.chain.run_link`) is added to ``links``, judged with the others'.
    """
    problems, differences, card_hashes = [], set(), {}
    for run in runs:
        result, found = checked_run(run)
        problems += found
        if result is None:
            continue
        provenance = result.provenance
        link = chain.run_link(run, provenance, trace_arrays(result.trace))
        if links is not None and link is not None:
            links.append(link)
        differences.update(lock_differences(provenance.get("versions", {})))
        card = PROCESSED / f"{provenance.get('dataset')}.json"
        if card not in card_hashes:
            card_hashes[card] = str(read_json(card).get("npz_sha256")) if card.is_file() else None
        made_from = str(provenance.get("dataset_sha256"))
        if card_hashes[card] is not None and made_from != card_hashes[card]:
            problems.append(
                f"{run}: made from {provenance.get('dataset')} with sha256 {made_from[:12]}, not the "
                f"{card_hashes[card][:12]} its card {card} now describes; delete it and rerun"
            )
    return problems, sorted(differences)


def chain_problems(run_links: list[chain.Record], root: Path = Path()) -> list[str]:
    """The first broken link of each chain of the build in ``root`` (:func:`dpdl.chain.breaks`).

    The chains are made from its runs' links and the records beside its other outputs; the files
    without a record (built before the hash chain) are said in one warning, not counted as problems.
    """
    records, problems = chain.sidecar_records(root)
    records += run_links
    note = chain.no_record_note(chain.unrecorded(root, records))
    if note:
        log.warning(note)
    return problems + chain.breaks(records, root)


def leftover_problems(folders: tuple[str, ...] = ("data", "results", "figures")) -> list[str]:
    """The temporary files an interrupted write left (:func:`dpdl.io.atomic_path` names them ``*.part-*``)."""
    return [
        f"{path}: left by an interrupted write; delete it (the build writes the file again)"
        for folder in folders
        for path in sorted(Path(folder).rglob("*.part-*"))
    ]


def check_config_outputs(config: dict) -> tuple[list[str], int]:
    """Problems with the outputs ``config`` promises: each exists and is non-empty, cards and runs valid.

    Prepared datasets whose raw files cannot be obtained here are not promised (they are listed
    as skipped by the workflow); everything else is.
    """
    from dpdl.targets import default_targets, plan

    targets = [Path(t) for t in default_targets(config, plan(config))]
    problems = []
    for target in targets:
        if not target.is_file():
            problems.append(f"{target}: promised by the config but missing")
        elif target.stat().st_size == 0:
            problems.append(f"{target}: empty")
        elif target.suffix == ".json" and target.parts[:2] == ("data", "processed"):
            problems += check_card(target, config)
    scorecard = Path(scorecard_path("csv"))
    if scorecard in targets and scorecard.is_file():
        problems += scorecard_problems(scorecard)
    runs = sorted(run_files())
    links: list[chain.Record] = []
    found, differences = run_problems(runs, links)
    problems += found
    problems += chain_problems(links)
    problems += leftover_problems()
    for difference in differences:
        log.warning("runs were made with %s: not the tested environment", difference)
    return problems, len(targets) + len(runs)
