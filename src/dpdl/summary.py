"""What holds across the four studies: the replication scorecard, the privacy table, provenance, status.

- :func:`merge_scorecards`: one row per registered claim of every study (``results/claims.*``);
  a study whose data could not be built, or that the config leaves out, still lists its claims,
  with the verdict saying why they were not judged. :func:`with_published_verdicts` adds, beside each
  claim the build did not run, the published paper-scale snapshot's verdict (marked as the snapshot's);
  :func:`decided_lines` says what the build decided (the end of the main job prints it).
- :func:`privacy_table`: per study, algorithm and privacy level, the privacy per iteration the
  paper states and the privacy composed over the run (RDP and PLD), read from the run artifacts.
- :func:`provenance_table`: the hashes of every raw file and prepared dataset, and the versions
  of the packages that determine the numbers.
- :func:`status`: runs finished and left for a config, with the CPU time left estimated from the
  measured time per run.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from dpdl.audit_report import premise_claim_ids, premise_claim_rows, privacy_claim_rows
from dpdl.chain import note_read
from dpdl.claims import (
    HEADLINE_KINDS,
    IMPLEMENTATION_CHECK,
    MECHANISM_PROPERTY,
    PREMISE_CLAIM,
    PRIVACY_CLAIM,
    SCORECARD_COLUMNS,
    SUBSTANTIVE_KINDS,
    scorecard,
)
from dpdl.errors import ArtifactError
from dpdl.io import markdown_table, read_json, read_text_table
from dpdl.judgement import (
    CODE_REFUTED,
    NOT_PUBLISHED,
    NOT_REFUTED,
    NOT_RUN,
    NOT_TESTABLE,
    PREMISE_BROKEN,
    PREMISE_HOLDS,
    REFUTED,
    REFUTED_OUTSIDE,
)
from dpdl.runs import package_versions, read_card, read_run, run_charge
from dpdl.studies import ALL, audit_module, study_module
from dpdl.studies.common import DEFAULT
from dpdl.verdicts import (
    BOUND_FAILS,
    INCONCLUSIVE,
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    PREMISE_FAILS,
    REPRODUCED,
    UNAVAILABLE,
    VERDICTS,
)

NO_READINGS = "not built (set readings: true or run `snakemake readings`)"
NOT_ENABLED = "study not in this config's `studies`; no run was made"
SCORECARD_SHOWN = [
    "id",
    "where",
    "statement",
    "paper_value",
    "our_value",
    "effect (95% CI)",
    "n_seeds",
    "tolerance",
    "verdict",
    "cells for/against",
    "deciding cell",
    "premise",
    "post_hoc",
    "readings",
    "seeds_to_decide",
    "test",
]
SCORECARD_LANDING = [
    "id",
    "kind",
    "paper_value",
    "our_value",
    "effect (95% CI)",
    "verdict",
    "readings",
]  # the report's first page
VERDICT_COLOURS = {
    REPRODUCED: "#d7f0d2",
    NOT_REPRODUCED: "#f7d4d0",
    INCONCLUSIVE: "#fff3bf",
    NOT_IDENTIFIABLE: "#e3dcf2",
    BOUND_FAILS: "#f4c7a8",
    PREMISE_FAILS: "#f2dcc0",
    NOT_AT_SCALE: "#e8e8e8",
    UNAVAILABLE: "#fbe9c6",
    REFUTED: "#e8a39a",
    REFUTED_OUTSIDE: "#f0c8c2",
    CODE_REFUTED: "#f3d6cf",
    NOT_REFUTED: "#e6eef5",
    NOT_TESTABLE: "#eeeeee",
    PREMISE_HOLDS: "#dcefe6",
    PREMISE_BROKEN: "#f1cfa8",
}
PRIVACY_KEYS = ["study", "dataset", "algorithm", "epsilon", "delta", "eps_per_iteration", "iterations"]
PRIVACY_COLUMNS = [*PRIVACY_KEYS, "runs", "eps_composed_rdp", "eps_composed_pld", "accountant"]


def registered_claim_ids() -> list[str]:
    """Every registered claim in scorecard order.

    That is each study's claims, its privacy claims, then its premise claims.
    """
    return [
        claim_id
        for study in ALL
        for claim_id in (
            *(claim.id for claim in (*study_module(study).CLAIMS, *audit_module(study).PRIVACY_CLAIMS)),
            *premise_claim_ids(study),
        )
    ]


def merge_scorecards(
    enabled: Iterable[str],
    study_scorecards: Mapping[str, str | Path],
    readings: str | Path | None = None,
    audits: Mapping[str, pd.DataFrame] | None = None,
    data_premises: Mapping[str, pd.DataFrame] | None = None,
    derived: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]] | None = None,
) -> pd.DataFrame:
    """One row per registered claim of every study, in study order.

    Each study's privacy claims and then its premise claims come last.

    ``study_scorecards`` maps a study to its judged scorecard CSV; an enabled study without one
    could not build its data (verdict ``data unavailable``), a study the config leaves out gets
    ``not run at this scale``. ``readings`` (``results/readings.csv``) adds, per claim, under how
    many of its study's readings it holds. ``audits`` maps a study to its audit table, which
    judges its privacy claims (:func:`dpdl.audit_report.privacy_claim_rows`; not built without one);
    ``data_premises`` maps a study to its data premise table, which judges its premise claims
    (:func:`dpdl.audit_report.premise_claim_rows`; not measured without one). ``derived`` maps a study
    to its premise ledger and canary losses where the caller has them already (else each is computed).
    """
    audits, data_premises, derived = audits or {}, data_premises or {}, derived or {}
    enabled = set(enabled)
    frames = []
    for study in ALL:
        claims = study_module(study).CLAIMS
        if study in study_scorecards:
            frame = _read_scorecard(study_scorecards[study], claims)
        else:
            frame = scorecard(claims, {}, scale={}, switches={}, shared_seeds=False).astype(object)
            if study not in enabled:
                frame["verdict"], frame["detail"] = NOT_AT_SCALE, NOT_ENABLED
        frames.append(frame)
        not_enabled = [] if study in enabled else [NOT_ENABLED]
        ledger, reach = derived.get(study, (None, None))
        frames.append(privacy_claim_rows(study, audits.get(study), *not_enabled, ledger=ledger, reach=reach))
        frames.append(premise_claim_rows(study, data_premises.get(study), *not_enabled))
    card = pd.concat(frames, ignore_index=True)
    card["readings"] = NO_READINGS
    if readings is not None:
        found = pd.read_csv(readings, dtype=str, keep_default_na=False).drop_duplicates("id").set_index("id")
        note_read(readings)
        card["readings"] = card["id"].map(found["readings"]).fillna(NO_READINGS)
    card.loc[card["kind"].isin((PRIVACY_CLAIM, PREMISE_CLAIM)), "readings"] = ""  # not judged under readings
    return card


PUBLISHED_VERDICT = "published_verdict"  # the snapshot's verdict of a claim this build did not run
PUBLISHED_SNAPSHOT = "published_snapshot"  # which snapshot gave it: published/<study> and its code commit
PUBLISHED_SHOWN = "paper-scale verdict (published snapshot, not this build)"
UNDECIDED = (*NOT_RUN, INCONCLUSIVE, NOT_PUBLISHED)  # what a verdict of the build's own runs is not


def published_verdicts(published: str | Path) -> dict[str, tuple[str, str]]:
    """Claim id -> (verdict, snapshot) of every study published in ``published`` (``dpdl publish``'s folder).

    The verdicts are those of the snapshot's merged scorecard (``scorecard.csv``: each study's ``claims.csv``
    under its default reading, and its privacy claims as its audit judged them), for the studies with a
    ``MANIFEST.json``; the snapshot is named ``published/<study> at <commit>``, the code that built it (and,
    if another, the code that last judged it). No folder, or no scorecard in it: no published verdicts.
    """
    published = Path(published)
    merged = published / "scorecard.csv"
    if not merged.is_file():
        return {}
    try:
        card = pd.read_csv(merged, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ArtifactError(f"{merged}: cannot read the published scorecard ({err})") from None
    if not {"id", "study", "verdict"} <= set(card.columns):
        raise ArtifactError(f"{merged}: not a published scorecard (no id, study and verdict columns)")
    stamps = {}
    for study in sorted(set(card["study"])):
        manifest_path = published / study / "MANIFEST.json"
        if manifest_path.is_file():
            stamps[study] = _snapshot_stamp(published / study, read_json(manifest_path))
    return {
        row["id"]: (row["verdict"], stamps[row["study"]])
        for row in card.to_dict("records")
        if row["study"] in stamps
    }


def _snapshot_stamp(folder: Path, manifest: object) -> str:
    """``published/<study> at <commit>`` from a study's manifest.

    The commit is that of the code that built it, and that judged it.
    """
    try:
        code = manifest["code"]
        built = code["commit"][:10] + (" (modified)" if code["modified_files"] else "")
        judged = (manifest.get("judged") or {}).get("commit", "")[:10]
    except (TypeError, KeyError, AttributeError):
        raise ArtifactError(
            f"{folder / 'MANIFEST.json'}: no code.commit (not written by dpdl publish)"
        ) from None
    stamp = f"{folder.parent.name}/{folder.name} at {built}"
    return stamp + (f", judged at {judged}" if judged and not built.startswith(judged) else "")


def with_published_verdicts(card: pd.DataFrame, published: str | Path) -> pd.DataFrame:
    """The merged scorecard with two more columns: the published verdict and its snapshot.

    They are filled for each claim this build did not run (``not run at this scale``, ``data
    unavailable``): the published snapshot's verdict and the snapshot that gave it; empty for every
    claim the build ran, whose verdict is the build's own. Nothing else changes.
    """
    snapshot = published_verdicts(published)
    card = card.copy()
    shown = [
        snapshot.get(claim, ("", "")) if verdict in NOT_RUN else ("", "")
        for claim, verdict in zip(card["id"], card["verdict"], strict=True)
    ]
    card[PUBLISHED_VERDICT] = [verdict for verdict, _ in shown]
    card[PUBLISHED_SNAPSHOT] = [stamp for _, stamp in shown]
    return card


def decided_lines(card: pd.DataFrame, scale: str = "this config's", where: bool = True) -> list[str]:
    """What the build decided, in a few lines.

    With ``where``: where the scorecard is; then how many of the papers' claims (each independent
    set of runs once) it decided at ``scale``, why the others are not decided here, and where the
    paper-scale verdicts are.
    """
    claims = counted(card, (*HEADLINE_KINDS, PRIVACY_CLAIM))
    verdicts = claims["verdict"]
    decided = int((~verdicts.isin(UNDECIDED)).sum())
    not_at_scale, unavailable = int((verdicts == NOT_AT_SCALE).sum()), int((verdicts == UNAVAILABLE).sum())
    lines = ["The scorecard: results/claims.md (every column: results/claims.csv)."] if where else []
    lines.append(
        f"At {scale} scale this build decided {decided} of the papers' {len(claims)} claims "
        f"({int((verdicts == INCONCLUSIVE).sum())} inconclusive, {not_at_scale} not run at this scale, "
        f"{unavailable} without their data)."
    )
    if not_at_scale:
        lines.append(
            "'Not run at this scale' is expected below the papers' scale: those claims need the papers' "
            "iterations, seeds or trials (each claim's `scale` column); no claim's rule is loosened to "
            "decide it."
        )
    published = PUBLISHED_VERDICT in card.columns and (card[PUBLISHED_VERDICT] != "").any()
    lines.append(
        "The paper-scale verdicts: published/scorecard.md (README, 'Published paper-scale results')"
        + (
            "; results/claims.md shows each beside the claims not run here, "
            "marked as the snapshot's, with its commit."
            if published
            else "."
        )
    )
    return lines


def end_message(scorecard: str | Path, config: str) -> str:
    """The end of the main job's output.

    It is :func:`decided_lines` of the build's scorecard at ``config``'s scale.
    """
    card = pd.read_csv(scorecard, dtype=str, keep_default_na=False)
    return "dpdl: " + "\n  ".join(decided_lines(card, scale=f"{config}'s"))


def _read_scorecard(path: str | Path, claims: list) -> pd.DataFrame:
    """A study's scorecard as written by its claims step (or published), one row per registered claim.

    A claim registered after the file was written gets a row "not yet published" (its claims step or
    ``dpdl publish --rejudge`` judges it), so that adding a claim needs no rebuild first. A row whose claim
    is no longer registered, rows out of order or unknown verdicts are errors.
    """
    frame = read_text_table(path)
    note_read(path)
    ids = [claim.id for claim in claims]
    written = list(frame["id"]) if "id" in frame.columns else None
    if list(frame.columns) != SCORECARD_COLUMNS or written != [i for i in ids if i in set(written)]:
        raise ArtifactError(
            f"{path}: not the scorecard of the registered claims ({', '.join(ids)}); rebuild it with "
            f"`snakemake --cores 1 --forcerun {Path(path).stem}_claims {path}`"
        )
    unknown = sorted(set(frame["verdict"]) - set(VERDICTS))
    if unknown:
        raise ArtifactError(f"{path}: unknown verdicts {unknown}; expected one of {VERDICTS}")
    new = [claim for claim in claims if claim.id not in set(written)]
    if not new:
        return frame
    rows = scorecard(new, {}, scale={}, switches={}, shared_seeds=False).astype(object)
    rows["verdict"] = NOT_PUBLISHED
    rows["detail"] = (
        f"registered after {path} was written; rebuild the study's claims step or `dpdl publish --rejudge`"
    )
    merged = pd.concat([frame, rows], ignore_index=True)
    return merged.set_index("id").loc[ids].reset_index()[SCORECARD_COLUMNS]


def scorecard_problems(path: Path) -> list[str]:
    """Problems with the merged scorecard: a row for every registered claim, in order, each with a verdict."""
    card = read_text_table(path)
    registered = registered_claim_ids()
    problems = []
    if list(card.get("id", [])) != registered:
        missing = sorted(set(registered) - set(card.get("id", [])))
        problems.append(
            f"{path}: not one row per registered claim "
            f"(missing: {missing or 'none'}; {len(card)} rows for {len(registered)} claims)"
        )
    missing_columns = [column for column in SCORECARD_COLUMNS if column not in card.columns]
    if missing_columns:
        problems.append(f"{path}: columns {missing_columns} are missing; rebuild it with snakemake")
    bad = sorted(set(card.get("verdict", ["(no verdict column)"])) - set(VERDICTS))
    if bad:
        problems.append(f"{path}: verdicts {bad} are not among {VERDICTS}")
    return problems


def headline(card: pd.DataFrame) -> pd.DataFrame:
    """The paper's own claims (numbers it prints, statements it makes, mechanism properties it states)."""
    return card[card["kind"].isin(HEADLINE_KINDS)]


def counted(card: pd.DataFrame, kinds=SUBSTANTIVE_KINDS) -> pd.DataFrame:
    """The claims of ``kinds`` that a headline count counts: each independent set of runs once.

    A claim that only re-reads another claim's runs (``same_runs_as``) is listed beside it and not
    counted again.
    """
    no_same_runs = pd.Series("", index=card.index)
    same = card["same_runs_as"].fillna("") if "same_runs_as" in card.columns else no_same_runs
    return card[card["kind"].isin(kinds) & (same == "")]


def verdict_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Claims per study and verdict, with a total row.

    The total is of the rows given: pass :func:`headline` for the headline.
    """
    counts = pd.crosstab(card["study"], pd.Categorical(card["verdict"], categories=VERDICTS), dropna=False)
    counts = counts.reindex([s for s in ALL if s in counts.index], fill_value=0)
    counts.loc["all studies"] = counts.sum()
    counts.columns = list(VERDICTS)
    counts = counts.loc[:, (counts != 0).any(axis=0) | counts.columns.isin([REPRODUCED, NOT_REPRODUCED])]
    return counts.rename_axis("study").reset_index()


def _shown(card: pd.DataFrame) -> pd.DataFrame:
    """The scorecard with effect and interval in one column, as the Markdown and HTML show it."""

    def effect(row: pd.Series) -> str:
        if _text(row["effect"]) == "":
            return ""
        interval = (
            "" if _text(row["ci_low"]) == "" else f" [{_number(row['ci_low'])}, {_number(row['ci_high'])}]"
        )
        return f"{_number(row['effect'])}{interval}"

    def cells(row: pd.Series) -> str:
        if _text(row.get("cells_for")) == "":
            return ""
        return f"{_number(row['cells_for'])}/{_number(row['cells_against'])}"

    shown = card.copy()
    shown["effect (95% CI)"] = [effect(row) for _, row in card.iterrows()] if len(card) else []
    shown["cells for/against"] = [cells(row) for _, row in card.iterrows()] if len(card) else []
    shown["deciding cell"] = card["deciding_cell"] if "deciding_cell" in card.columns else ""
    return shown


def _number(value: object) -> str:
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return str(value)


COUNTS_NOTE = (
    "Each independent set of runs is counted once: a claim whose per-seed cells are the same as, or among,\n"
    "another counted claim's of its count (derived from the cells each judged, or declared with a reason)\n"
    "names it (`same_runs_as`, why in `same_runs_why`) and is listed but not counted. The verdict rules are\n"
    'in the README ("How a verdict is reached"); the choices made after a result was seen are in\n'
    "docs/post_hoc.md and the `post_hoc` column.\n\n"
)


def headline_counts(card: pd.DataFrame) -> str:
    """The headline as Markdown: the substantive claims' verdicts, then the mechanism properties' apart."""
    return (
        "Substantive claims (numbers the papers print, comparisons between methods):\n\n"
        + markdown_table(verdict_counts(counted(card)))
        + "\nMechanism properties (statements any working calibrated mechanism satisfies: "
        "the error falls as\n"
        "the budget grows, the iterates converge), counted apart:\n\n"
        + markdown_table(verdict_counts(counted(card, (MECHANISM_PROPERTY,))))
        + "\nPrivacy claims (each paper's (epsilon, delta)-DP guarantee), "
        "tested by the empirical audit, which can\n"
        "refute a claim but never prove one (`results/audit/`):\n\n"
        + markdown_table(verdict_counts(counted(card, (PRIVACY_CLAIM,))))
        + "\n"
        + privacy_headline(card)
        + "\n\nPremises (each paper's stated assumptions behind its privacy guarantees, "
        "measured on every record of the data it uses), counted apart from everything above:\n\n"
        + markdown_table(verdict_counts(counted(card, (PREMISE_CLAIM,))))
        + "\n"
    )


def privacy_headline(card: pd.DataFrame) -> str:
    """The privacy verdicts in one sentence, counted by the premise rules of :mod:`dpdl.audit_report`.

    Following issue 58: refuted only by a cell within every premise the paper states; refutations
    outside a premise, and of someone's code, counted apart.
    """
    privacy = counted(card, (PRIVACY_CLAIM,))
    verdicts = privacy["verdict"]
    code = privacy[verdicts == CODE_REFUTED]
    guarantees = privacy[verdicts != CODE_REFUTED] if len(code) else privacy
    count = {
        verdict: int((guarantees["verdict"] == verdict).sum())
        for verdict in (REFUTED, REFUTED_OUTSIDE, NOT_REFUTED, NOT_TESTABLE)
    }
    sentence = (
        f"Of the papers' {len(guarantees)} audited privacy guarantees, {count[REFUTED]} are "
        f"refuted by a cell within every premise its paper states, {count[REFUTED_OUTSIDE]} only "
        f"by cells outside one (named in each verdict's detail), {count[NOT_REFUTED]} are not refuted"
        + (
            f", {count[NOT_TESTABLE]} are not testable by this audit (at the declared noise no "
            "cell's canary can reach the claimed epsilon)"
            if count[NOT_TESTABLE]
            else ""
        )
    )
    undecided = len(guarantees) - sum(count.values())
    sentence += f" and {undecided} have no audit verdict" if undecided else ""
    if len(code):
        sentence += (
            f"; apart, {len(code)} audit of someone's code refutes the code's guarantee (an "
            "implementation finding: " + ", ".join(code["id"]) + ")"
        )
    return sentence + "."


def scorecard_markdown(card: pd.DataFrame) -> str:
    """The scorecard as Markdown: the headline counts, the paper's claims, then the implementation checks.

    A build's scorecard (with :func:`with_published_verdicts`' columns) opens on what the build decided and
    shows, beside each claim it did not run, the published snapshot's verdict, named as the snapshot's.
    """
    shown, columns, lead = _shown(card), SCORECARD_SHOWN, ""
    if PUBLISHED_VERDICT in card.columns:
        shown[PUBLISHED_SHOWN] = [
            f"{verdict} ({stamp})" if verdict else ""
            for verdict, stamp in zip(card[PUBLISHED_VERDICT], card[PUBLISHED_SNAPSHOT], strict=True)
        ]
        at = SCORECARD_SHOWN.index("verdict") + 1
        columns = [*SCORECARD_SHOWN[:at], PUBLISHED_SHOWN, *SCORECARD_SHOWN[at:]]
        lead = "".join(f"- {line}\n" for line in decided_lines(card, where=False)) + "\n"
    checks = shown[shown["kind"] == IMPLEMENTATION_CHECK]
    return (
        "# Replication scorecard\n\n"
        + lead
        + COUNTS_NOTE
        + headline_counts(card)
        + "\n## The papers' claims\n\n"
        + markdown_table(headline(shown)[columns])
        + "\n## The papers' privacy claims, tested by the audit\n\n"
        + markdown_table(shown[shown["kind"] == PRIVACY_CLAIM][columns])
        + "\n## The papers' premises, tested on their own data\n\n"
        + markdown_table(shown[shown["kind"] == PREMISE_CLAIM][columns])
        + "\n## Implementation checks (not reproductions, not counted above)\n\n"
        + markdown_table(checks[columns])
        + "\nSwitch settings, scale and the detail of each row: `results/claims.csv`.\n"
    )


def scorecard_html(card: pd.DataFrame) -> str:
    """The scorecard as a self-contained HTML fragment (the report's first page), verdicts coloured.

    The page is narrow, so it shows the counts and one short row per claim; the statement,
    tolerance and detail are in ``results/claims.csv`` (category 1 of the report).
    """

    def table(frame: pd.DataFrame, verdict_column: str | None) -> str:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
        rows = []
        for record in frame.to_dict("records"):
            style = ""
            if verdict_column is not None:
                style = f' style="background:{VERDICT_COLOURS[record[verdict_column]]}"'
            cells = "".join(f"<td>{html.escape(_text(v))}</td>" for v in record.values())
            rows.append(f"<tr{style}>{cells}</tr>")
        return (
            f'<table class="dpdl-scorecard"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    style = (
        "<style>.dpdl-scorecard{border-collapse:collapse;font-size:0.8rem;margin:0.5rem 0 1rem}"
        ".dpdl-scorecard th,.dpdl-scorecard td"
        "{border:1px solid #bbb;padding:2px 6px;vertical-align:top;text-align:left}"
        ".dpdl-scorecard th{background:#f0f0f0}"
        # Snakemake's landing page centres a narrow column; let the scorecard start at the top, full width
        ".overflow-auto:has(#dpdl-scorecard){align-items:flex-start}"
        ".max-w-lg:has(#dpdl-scorecard){max-width:none}</style>"
    )
    legend = " ".join(
        f'<span style="background:{colour};padding:1px 6px">{html.escape(verdict)}</span>'
        for verdict, colour in VERDICT_COLOURS.items()
    )
    return (
        f'<div id="dpdl-scorecard">{style}<h2>Replication scorecard</h2>'
        f"<p>{len(counted(card))} substantive claims of four papers counted, and "
        f"{len(counted(card, (MECHANISM_PROPERTY,)))} mechanism properties and "
        f"{len(counted(card, (PRIVACY_CLAIM,)))} privacy claims and "
        f"{len(counted(card, (PREMISE_CLAIM,)))} premises tested on the papers' data apart "
        f"({int((card['kind'] == IMPLEMENTATION_CHECK).sum())} implementation checks and "
        f"{len(headline(card)) - len(counted(card, HEADLINE_KINDS))} claims re-reading "
        f"another's runs are listed, not counted). Verdicts: {legend}</p>"
        + table(verdict_counts(counted(card)), None)
        + table(_shown(card)[SCORECARD_LANDING], "verdict")
        + "</div>\n"
    )


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def privacy_table(run_paths: Iterable[str | Path]) -> pd.DataFrame:
    """Per study, dataset, algorithm and privacy level: stated and composed privacy of the runs.

    ``eps_per_iteration`` is the per-iteration privacy as the paper states it; the composed values
    are the largest over the group's runs (they differ only where a run's noise depends on its
    data split). Non-private runs are left out.
    """
    rows = []
    for path in run_paths:
        prov = read_run(path).provenance
        if prov["eps_composed_rdp"] is None and prov["eps_composed_pld"] is None:
            continue
        rows.append(
            {
                **{key: prov[key] for key in PRIVACY_KEYS if key != "iterations"},
                "iterations": prov["timing"]["iterations"],
                "eps_composed_rdp": prov["eps_composed_rdp"],
                "eps_composed_pld": prov["eps_composed_pld"],
                "accountant": f"{prov['accountant']['name']} {prov['accountant']['version']}",
            }
        )
    if not rows:
        return pd.DataFrame(columns=PRIVACY_COLUMNS)
    frame = pd.DataFrame(rows).fillna({"eps_per_iteration": math.nan})
    grouped = frame.groupby(PRIVACY_KEYS, sort=False, dropna=False).agg(
        runs=("eps_composed_rdp", "size"),
        eps_composed_rdp=("eps_composed_rdp", "max"),
        eps_composed_pld=("eps_composed_pld", "max"),
        accountant=("accountant", "first"),
    )
    order = {study: i for i, study in enumerate(ALL)}
    table = grouped.reset_index()
    table = table.sort_values(
        ["study", "dataset", "algorithm", "epsilon", "delta", "iterations"],
        key=lambda c: c.map(order) if c.name == "study" else c,
    )
    return table[PRIVACY_COLUMNS].reset_index(drop=True)


def provenance_table(cards: Iterable[str | Path]) -> pd.DataFrame:
    """The raw files and prepared datasets behind the results (with hashes), and package versions."""
    rows = []
    for path in cards:
        card = read_card(path)
        for raw in card["raw_inputs"]:
            rows.append(
                {
                    "kind": "raw file",
                    "name": f"{card['study']}/{card['dataset']}: {raw['path']}",
                    "value": raw["digest"],
                    "detail": raw["algorithm"]
                    + ("" if raw.get("pinned", True) else " of the copy used (no pin)"),
                }
            )
        rows.append(
            {
                "kind": "prepared dataset",
                "name": str(Path(path).with_suffix(".npz")),
                "value": card["npz_sha256"],
                "detail": "sha256",
            }
        )
    for name, version in package_versions().items():
        rows.append({"kind": "package", "name": name, "value": version, "detail": ""})
    return pd.DataFrame(rows, columns=["kind", "name", "value", "detail"])


STATUS_COLUMNS = [
    "study",
    "reading",
    "group",
    "runs",
    "present",
    "left",
    "seconds_per_run",
    "cpu_seconds_left",
]


def status(
    config: dict, buildable: Iterable[str], snakefile: str | Path = "Snakefile"
) -> tuple[pd.DataFrame, list[str]]:
    """Runs present and left per study, reading and run group, and the readings not started.

    Each with measured and estimated CPU seconds.

    A run group is the folder two levels above a run (e.g. ``results/dzoa/runs/dzoa``: one
    algorithm's grid). The default reading's runs are the config's; with ``readings: true``, each
    started reading adds the runs it makes of its own (:func:`dpdl.readings.reading_plan`: what
    Snakemake reruns there), and a reading with no folder yet is listed as not started. Seconds left
    = runs left x the group's mean measured CPU seconds per run (each run's share of its job's CPU
    time; its wall time for a run made before CPU time was recorded), or the study's mean where the
    group has no finished run yet; NaN where the study has none. A run made on a GPU measures no CPU
    time (:func:`dpdl.runs.run_charge`): it counts as present, not in the rate.
    """
    from dpdl.readings import reading_folder, reading_plan, study_readings

    buildable = set(buildable)
    rows, not_started = [], []
    for study in (s for s in ALL if s in config["studies"]):
        for path in map(Path, study_module(study).runs(config, buildable)):
            rows.append(_status_row(study, DEFAULT, path, path))
        for reading in study_readings(study)[1:] if config.get("readings") else ():
            plan = reading_plan(study, reading.name, snakefile)
            if plan is None:
                not_started.append(f"{study}/{reading.name}")
                continue
            folder = reading_folder(study, reading.name)
            for path, left in zip(map(Path, plan["path"]), plan["left"], strict=True):
                rows.append(_status_row(study, reading.name, path, None if left else folder / path))
    if not rows:
        return pd.DataFrame(columns=STATUS_COLUMNS), not_started
    runs = pd.DataFrame(rows)
    study_rate = runs.groupby("study", sort=False)["seconds"].mean()
    group_rate = runs.groupby(["study", "group"], sort=False)["seconds"].mean()
    table = (
        runs.groupby(["study", "reading", "group"], sort=False)
        .agg(runs=("present", "size"), present=("present", "sum"))
        .reset_index()
    )
    table["seconds_per_run"] = [group_rate[key] for key in zip(table["study"], table["group"], strict=True)]
    table["left"] = table["runs"] - table["present"]
    rate = table["seconds_per_run"].fillna(table["study"].map(study_rate))
    table["cpu_seconds_left"] = (table["left"] * rate).where(table["left"] > 0, 0.0)
    return table[STATUS_COLUMNS], not_started


def _status_row(study: str, reading: str, path: Path, made: Path | None) -> dict:
    """A run of ``study`` under ``reading`` at ``path``; present if ``made`` is a file."""
    present = made is not None and made.is_file()
    seconds = _cpu(made) if present else math.nan
    return {
        "study": study,
        "reading": reading,
        "group": str(path.parent.parent),
        "present": present,
        "seconds": seconds,
    }


def _cpu(path: Path) -> float:
    """The CPU seconds a finished run at ``path`` measured; NaN for one not there or made on a GPU."""
    if not path.is_file():
        return math.nan
    unit, seconds = run_charge(read_run(path).provenance)
    return seconds if unit == "cpu_seconds" else math.nan


SAVED_COLUMNS = ["job", "saved_after_iteration", "cpu_minutes_so_far"]


def saved_runs(root: Path = Path("results")) -> pd.DataFrame:
    """The run jobs under ``root`` that a rerun would resume.

    Each from its ``dpdl.checkpoint`` state: the job's folder, the iteration the state ends and the
    CPU minutes its attempts had spent by then.
    """
    import zipfile

    import numpy as np

    from dpdl.studies.dp_iadmm.run import CHECKPOINT_NAME

    rows = []
    for path in sorted(root.glob(f"**/{CHECKPOINT_NAME}")):
        try:
            with np.load(path, allow_pickle=False) as saved:
                iteration, cpu_s = int(saved["iteration"]), float(saved["elapsed_s"][1])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            continue  # unreadable: its job starts afresh
        rows.append(
            {"job": str(path.parent), "saved_after_iteration": iteration, "cpu_minutes_so_far": cpu_s / 60}
        )
    return pd.DataFrame(rows, columns=SAVED_COLUMNS).round({"cpu_minutes_so_far": 1})
