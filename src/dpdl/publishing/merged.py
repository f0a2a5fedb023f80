"""The snapshot's merged files, written from its study folders.

They are the scorecard of every published study (``scorecard.csv``, ``scorecard.md``), the
readings table (``readings.csv``), ``RESULTS.md`` (the README's results section:
:func:`splice_readme` copies it in; a test fails when the two disagree) and each audited study's
premise ledger (``<study>/audit/premises.csv``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.audit.data_premises import read_data_premises
from dpdl.audit_report import cell_reach, read_audit, reading_privacy_rows, study_ledger
from dpdl.claims import MECHANISM_PROPERTY, PREMISE_CLAIM, PRIVACY_CLAIM, SUBSTANTIVE_KINDS
from dpdl.errors import DpdlError
from dpdl.io import markdown_table, read_json, read_text_table, sha256_file, write_json, write_text
from dpdl.judgement import NOT_RUN
from dpdl.paths import PUBLISHED, published_deviation
from dpdl.publishing.layout import AUDIT_TABLE, DATA_PREMISES, LEDGER, MANIFEST, RESULTS, published_studies
from dpdl.publishing.staging import disk_error, fault_point, study_transaction
from dpdl.readings import CURRENT_ENGINE, DEFAULT, judged_readings, reading_mechanisms, study_readings
from dpdl.studies import ALL
from dpdl.summary import (
    counted,
    headline,
    merge_scorecards,
    privacy_headline,
    scorecard_markdown,
    verdict_counts,
)

README_BEGIN = (
    "<!-- results: begin (written by `dpdl publish --readme README.md` from published; do not edit) -->"
)
README_END = "<!-- results: end -->"
PREMISE_SHOWN = ["id", "verdict", "paper_value", "our_value", "detail"]
PRIVACY_SHOWN = ["id", "verdict", "paper_value", "our_value", "deciding_cell", "detail", "post_hoc"]


def merged_files(out: Path = PUBLISHED) -> dict[str, str]:
    """The snapshot's merged files, from its study folders: scorecard, readings table, ``RESULTS.md``."""
    manifests = published_studies(out)
    cards = {
        (study, name): out / study / ("claims.csv" if name == DEFAULT else f"readings/{name}.csv")
        for study, manifest in manifests.items()
        for name in manifest["readings"]
    }
    baselines = {
        (study, name): out / study / "readings" / "default.csv"
        for study, manifest in manifests.items()
        for name, engine in manifest.get("reading_engines", {}).items()
        if engine != CURRENT_ENGINE
    }
    engines = {
        (study, name): engine
        for study, m in manifests.items()
        for name, engine in m.get("reading_engines", {}).items()
    }
    audits = {
        study: read_audit(out / study / AUDIT_TABLE)
        for study in manifests
        if (out / study / AUDIT_TABLE).is_file()
    }
    # each audited study's premise ledger and canary losses: functions of the code alone, each computed once
    derived = {study: (study_ledger(study), cell_reach(study)) for study in audits}
    privacy = [
        reading_privacy_rows(
            study, audit, reading_mechanisms(study, manifests[study]["config"]), *derived[study]
        )
        for study, audit in audits.items()
    ]
    table, summary, readings_csv = judged_readings(cards, baselines, engines, privacy)
    data_premises = {
        study: read_data_premises(out / study / DATA_PREMISES)
        for study in manifests
        if (out / study / DATA_PREMISES).is_file()
    }
    scorecards = {study: out / study / "claims.csv" for study in manifests}
    card = merge_scorecards(
        manifests, scorecards, audits=audits, data_premises=data_premises, derived=derived
    )
    card["readings"] = card["id"].map(summary.set_index("id")["readings"]).fillna(card["readings"])
    shown = deviation_verdicts(out, manifests)
    beside = [shown.get(claim, "") for claim in card["id"]]
    card["readings"] = [
        "; ".join(part for part in pair if part) for pair in zip(card["readings"], beside, strict=True)
    ]
    return {
        **{f"{study}/{LEDGER}": ledger_text(study, derived[study][0]) for study in audits},
        "readings.csv": readings_csv,
        "scorecard.csv": card.to_csv(index=False, lineterminator="\n"),
        "scorecard.md": scorecard_markdown(card),
        RESULTS: results_markdown(card, table, manifests),
    }


def deviation_verdicts(out: Path, manifests: dict[str, dict]) -> dict[str, str]:
    """By claim id, its verdict under each published data deviation that judged it, for the readings column.

    Shown beside the default's verdict and never counted with it (issue 62); a claim the deviation's runs
    do not reach ("not run") is left out.
    """
    shown: dict[str, list[str]] = {}
    for study, manifest in manifests.items():
        for name in manifest.get("deviations", {}):
            card = read_text_table(out / study / published_deviation(name) / "claims.csv")
            for claim, verdict in zip(card["id"], card["verdict"], strict=True):
                if verdict not in NOT_RUN:
                    shown.setdefault(claim, []).append(f"{name}: {verdict}")
    return {claim: "data deviation " + ", ".join(verdicts) for claim, verdicts in shown.items()}


def write_merged(out: Path = PUBLISHED) -> None:
    """Write :func:`merged_files` into ``out``, each file whole.

    Each file is written beside it, then renamed into place; a study's premise ledger enters its
    folder with its manifest in one swap (:func:`write_ledger`). Out of disk space: one line, and
    each file is the old or the new.
    """
    merged = merged_files(out)
    try:
        for name, text in merged.items():
            study, _, inner = name.partition("/")
            if inner == LEDGER:
                write_ledger(out, study, text)
        for count, (name, text) in enumerate((n, t) for n, t in merged.items() if "/" not in n):
            if count == 1:
                fault_point("merged")
            write_text(out / name, text)
    except OSError as err:
        if isinstance(err, DpdlError):
            raise
        raise disk_error(
            out, err, "each merged file is whole, the old or the new; run the command again"
        ) from None


def ledger_text(study: str, ledger: pd.DataFrame | None = None) -> str:
    """A study's premise ledger (``ledger``, else computed) as its snapshot holds it.

    The ledger, ``audit/premises.csv``, is a function of the code alone.
    """
    return (study_ledger(study) if ledger is None else ledger).to_csv(index=False, lineterminator="\n")


def write_ledger(out: Path, study: str, text: str) -> None:
    """Put the premise ledger ``text`` in ``out/<study>`` and its manifest, unless they hold it already."""
    folder = out / study
    manifest = read_json(folder / MANIFEST)
    path = folder / LEDGER
    if (
        path.is_file()
        and path.read_text(encoding="utf-8") == text
        and manifest["files"].get(LEDGER) == sha256_file(path)
    ):
        return
    with study_transaction(out, study, keep=True) as staged:
        write_text(staged / LEDGER, text)
        manifest["files"] = dict(sorted({**manifest["files"], LEDGER: sha256_file(staged / LEDGER)}.items()))
        write_json(staged / MANIFEST, manifest)


def splice_readme(readme: Path, results: str) -> None:
    """Replace the README's results block (between :data:`README_BEGIN` and :data:`README_END`)."""
    text = readme.read_text(encoding="utf-8")
    before, begin, rest = text.partition(README_BEGIN + "\n")
    _, end, after = rest.partition(README_END)
    if not (begin and end):
        raise DpdlError(
            f"{readme}: no results block; add the lines {README_BEGIN!r} and {README_END!r} where it goes"
        )
    try:
        write_text(readme, before + begin + results + end + after)
    except OSError as err:
        raise disk_error(readme, err, "it is left as it was") from None


def readme_results(readme: Path) -> str:
    """The README's results block as it stands."""
    text = readme.read_text(encoding="utf-8")
    return text.partition(README_BEGIN + "\n")[2].partition(README_END)[0]


def results_markdown(card: pd.DataFrame, table: pd.DataFrame, manifests: dict[str, dict]) -> str:
    """The README's results section: what was published, the verdicts per kind, what the reading changes."""
    provenance = pd.DataFrame(
        [
            {
                "study": study,
                "config": m["configfile"],
                "code": m["code"]["commit"][:10] + (" (modified)" if m["code"]["modified_files"] else ""),
                "readings built": f"{len(m['readings'])} of {len(study_readings(study))}"
                + (
                    f" ({len(narrowed)} on some cells)"
                    if (narrowed := m["config"].get("reading_cells"))
                    else ""
                ),
                "runs' wall time (h)": f"{m['run_compute_seconds'] / 3600:.2f}",
                "machine": f"{m['machine']['processor']}, {m['machine']['cores']} cores"
                + "".join(f"; {g['runs']} runs on an {gpu}" for gpu, g in m.get("run_gpus", {}).items()),
            }
            for study, m in manifests.items()
        ],
        columns=["study", "config", "code", "readings built", "runs' wall time (h)", "machine"],
    )
    published = card[card["study"].isin(list(manifests))]
    groups = {
        "substantive": SUBSTANTIVE_KINDS,
        "mechanism property": (MECHANISM_PROPERTY,),
        "privacy claim": (PRIVACY_CLAIM,),
        "premise": (PREMISE_CLAIM,),
    }
    counts = [verdict_counts(counted(published, kinds)).assign(kind=name) for name, kinds in groups.items()]
    by_kind = pd.concat(counts, ignore_index=True).fillna(0)
    verdicts = [c for c in by_kind.columns if c not in ("study", "kind")]
    by_kind = by_kind[by_kind["study"] != "all studies"][["study", "kind", *verdicts]].astype(
        {v: int for v in verdicts}
    )
    return (
        f"Published: {', '.join(manifests) or 'none'}; not published: "
        f"{', '.join(s for s in ALL if s not in manifests) or 'none'}. "
        "Each study's `MANIFEST.json` holds its config, the machine, the code that built it "
        "and the code that last judged it, and the sha256 of every file.\n\n"
        + markdown_table(provenance)
        + "\nVerdicts of the papers' own claims under each study's default reading: "
        "the substantive claims (numbers the papers print, comparisons between methods) and, apart, "
        "the mechanism properties (what any working calibrated mechanism does). "
        "Claims judged on the same or nested per-seed cells count once (`same_runs_as`, "
        "derived from the cells each claim judged, or declared with a reason: `same_runs_why`); choices made "
        "after a result was seen are flagged per claim (`post_hoc`, docs/post_hoc.md).\n\n"
        + markdown_table(by_kind.sort_values(["study", "kind"], key=_study_order))
        + "\nThe papers' privacy claims, tested by the empirical audit "
        "(runs on neighbouring datasets; eps_LB is a 95% lower bound on epsilon; "
        "an audit can refute a claim, never prove it; `<study>/audit/`):\n\n"
        + markdown_table(published[published["kind"] == PRIVACY_CLAIM][PRIVACY_SHOWN])
        + "\n"
        + privacy_headline(published)
        + " Each audited cell's premises, measured on its canary pair: `<study>/audit/premises.csv`.\n"
        + "\nThe papers' premises tested on their own data (every record of each dataset as prepared; "
        "`<study>/audit/data_premises.csv`), counted apart:\n\n"
        + markdown_table(published[published["kind"] == PREMISE_CLAIM][PREMISE_SHOWN])
        + "\nHeadline claims whose verdict differs under another reading "
        "(a sensitivity analysis: the default gives the headline; "
        "n/a where the reading left the claim unchanged; * post hoc reading):\n\n"
        + _reading_dependent(table, set(headline(published)["id"]))
    )


def _study_order(column: pd.Series) -> pd.Series:
    return column.map({study: i for i, study in enumerate(ALL)}) if column.name == "study" else column


def _reading_dependent(table: pd.DataFrame, ids: set[str]) -> str:
    """Per study, one row per claim of ``ids`` whose verdict differs from the default's.

    A row is a claim whose verdict under a built reading differs from the default's (judged by the
    same engine), with one column per reading the study declares; where readings were judged by the
    retired engine, the default as that engine judged it is a column of its own.
    """
    table = table[table["id"].isin(ids)]
    other = table[table["reading"] != DEFAULT]
    differs = set(
        other.loc[(other["unchanged"] != "yes") & (other["verdict"] != other["default_verdict"]), "id"]
    )
    if not differs:
        return "none\n"
    parts = []
    for study, rows in table[table["id"].isin(differs)].groupby("study", sort=False):
        built = set(rows["reading"])
        retired = rows[rows["engine"] != CURRENT_ENGINE]
        rows = rows.assign(cell=["n/a" if r.unchanged == "yes" else r.verdict for r in rows.itertuples()])
        wide = rows.pivot_table(index="id", columns="reading", values="cell", aggfunc="first", sort=False)
        declared = study_readings(study)
        names = {r.name: r.name + ("*" if r.post_hoc else "") for r in declared}
        for name in names:
            if name not in wide.columns:
                wide[name] = "(not built)" if name not in built else None
        wide = wide[list(names)].astype(object).fillna("(not in that build)")
        old = set(retired["reading"])
        labels = {n: label + (" (retired engine)" if n in old else "") for n, label in names.items()}
        wide = wide.rename(columns=labels)
        if old:
            wide.insert(1, "default (retired engine)", retired.groupby("id")["default_verdict"].first())
        parts.append(f"{study}:\n\n" + markdown_table(wide.fillna("").reset_index()))
    return "\n".join(parts)
