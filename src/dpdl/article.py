"""``dpdl article``: a ReScience C style replication article per study, from the published snapshot alone.

:func:`write_article` writes ``published/<study>/ARTICLE.md``, ``ARTICLE.html`` (the same text, figures
inline as data URIs, so it opens offline) and ``metadata.yaml``. Every number in an article is a string
copied from a snapshot file (``scorecard.csv``, the study rows of which are its ``claims.csv`` and its
audit-judged privacy claims, ``MANIFEST.json``, the cards, ``readings.csv``, the audit,
``RESULTS.md``); the only prose taken from the code is the claims' statements (in ``claims.csv``), the
readings' descriptions (each study's ``READINGS``), the post hoc register (:mod:`dpdl.post_hoc`) and the
original papers' references (:data:`REFERENCES`). :func:`article_problems` is what ``dpdl check published``
runs: an article missing, or not what regenerating gives.
"""

from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from dpdl.audit.premises import ledger_shown
from dpdl.claims import MECHANISM_PROPERTY, PREMISE_CLAIM, PRIVACY_CLAIM
from dpdl.errors import DpdlError
from dpdl.io import markdown_table, read_json, write_text
from dpdl.judgement import NOT_REPRODUCED, NOT_RUN, REPRODUCED, fmt
from dpdl.paths import ARTICLE_FILES, PUBLISHED
from dpdl.post_hoc import REGISTER, study_of
from dpdl.publishing.layout import AUDIT_TABLE, MANIFEST, published_studies
from dpdl.readings import DEFAULT, READING_KEY, narrowed_cells, study_readings
from dpdl.studies import ALL, study_module
from dpdl.summary import counted, headline, verdict_counts

REPLICATION_TYPE = "computational: the paper's algorithms and experiments reimplemented from its text"
CODE_REFERENCE = "dpdl (this repository), commit {commit}"
DECISIVE = (REPRODUCED, NOT_REPRODUCED)
TITLE_RULE = (
    "The title is [Re] only when, under the default reading and under every reading not marked post hoc that "
    "the snapshot holds, both hold: (1) coverage: the substantive claims as the headline counts them (numbers "
    "the paper prints and comparisons between methods, each independent set of runs once) that received a "
    "decisive verdict (reproduced or not reproduced) are at least half of all of them; (2) outcome: of those "
    "decisive claims, strictly more than half are reproduced. Otherwise it is [¬Re]. ReScience C's template "
    "prescribes [Re] for a successful replication and [¬Re] for a failed one and sets no threshold for a "
    "partial one; the coverage threshold (half) and the requirement that every non-post-hoc reading agree are "
    "this project's choice, made after the results were seen (post hoc register). The title names its scope "
    "from the scorecard and the claims' registry: the tables of the counted claims that were run, at the "
    "scale their claims need, and those of the claims not run at this scale or whose data are unavailable, "
    "with the scale they would need beyond what was run."
)
EXHIBIT = re.compile(r"\b([JC] )?(Fig(?:ure|s|\.)?|Table)\s*(\d+(?:[a-z]|\([a-z]\))?)")  # J, C: Zhang & Zhu's versions
CLAIM_COLUMNS = ["id", "where", "statement", "paper_value", "our_value", "verdict", "interval", "test", "tolerance"]


@dataclass(frozen=True)
class Reference:
    """The original paper: its authors, title, where it appeared and how to find it (text, not a result)."""

    authors: str
    title: str
    venue: str
    locator: str


REFERENCES = {
    "dvp_pvp": Reference(
        "T. Zhang and Q. Zhu",
        "Dynamic Differential Privacy for Distributed Machine Learning over Networks",
        "journal version; conference version: Dynamic Privacy For Distributed Machine Learning Over Network",
        "",
    ),
    "wddp": Reference(
        "Y. Kang, Y. Liu and W. Wang",
        "Weighted Distributed Differential Privacy ERM: Convex and Non-convex",
        "arXiv preprint",
        "arXiv:1910.10308v2",
    ),
    "dp_iadmm": Reference(
        "M. Ryu and K. Kim",
        "Differentially Private Federated Learning via Inexact ADMM",
        "arXiv preprint",
        "arXiv:2106.06127",
    ),
    "dzoa": Reference(
        "C. Gratton, N. K. D. Venkategowda, R. Arablouei and S. Werner",
        "Privacy-Preserved Distributed Learning With Zeroth-Order Optimization",
        "IEEE Transactions on Information Forensics and Security",
        "doi:10.1109/TIFS.2021.3139267",
    ),
}


@dataclass(frozen=True)
class Block:
    """One piece of an article: a heading (``level`` > 0), a paragraph, a bullet list, a table or a figure."""

    kind: str  # "heading", "text", "list", "table", "figure"
    text: str = ""
    level: int = 0
    items: tuple[str, ...] = ()
    table: pd.DataFrame | None = None


def _read_card(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def study_folder(study: str, out: Path = PUBLISHED) -> Path:
    """``out/<study>``, checked: a known study with a published manifest."""
    if study not in ALL:
        raise DpdlError(f"unknown study {study!r}; expected one of {', '.join(ALL)}")
    folder = _snapshot(out) / study
    if not (folder / MANIFEST).is_file():
        raise DpdlError(f"{folder / MANIFEST}: not found; {study} is not published in {out}")
    return folder


def _snapshot(out: Path) -> Path:
    if not out.is_dir():
        raise DpdlError(f"{out}: no such snapshot folder; publish one with `dpdl publish` or pass --published")
    return out


def _claims_registry(study: str) -> dict:
    """The study's registered claims by id (their ``aggregate`` and ``needs``: code, not a result)."""
    return {claim.id: claim for claim in study_module(study).CLAIMS}


def _table_name(aggregate: str) -> str:
    return aggregate.removesuffix("_seeds")


def _scale_words(needs: dict) -> str:
    def number(value) -> str:
        return f"{int(value):,}" if float(value).is_integer() else fmt(value)

    return ", ".join(f"{key} = {number(value)}" for key, value in sorted(needs.items()))


def scope(study: str, card: pd.DataFrame) -> str:
    """What was tested, from the counted substantive claims: the tables of those run and the scale their
    claims need; the tables of those not run (per verdict), each with the scale it needs beyond that."""
    registry = _claims_registry(study)
    substantive = counted(card)
    run = substantive[~substantive["verdict"].isin(NOT_RUN)]
    run_needs: dict = {}
    for cid in run["id"]:
        for key, value in registry[cid].needs.items() if cid in registry else ():
            run_needs[key] = max(run_needs.get(key, 0), value)
    tables = list(dict.fromkeys(_table_name(registry[c].aggregate) for c in run["id"] if c in registry))
    parts = [
        ("tested: " + ", ".join(tables) + (f" at {_scale_words(run_needs)}" if run_needs else ""))
        if tables
        else "nothing tested"
    ]
    for verdict in NOT_RUN:
        rows = substantive[substantive["verdict"] == verdict]
        groups: dict[str, list[str]] = {}
        for cid in rows["id"]:
            claim = registry.get(cid)
            if claim is None:
                continue
            beyond = {k: v for k, v in claim.needs.items() if k not in run_needs or v > run_needs[k]}
            table = _table_name(claim.aggregate)
            group = groups.setdefault(_scale_words(beyond), [])
            if table not in group:
                group.append(table)
        if groups:
            parts.append(
                f"{verdict}: "
                + "; ".join(", ".join(t) + (f" ({words})" if words else "") for words, t in groups.items())
            )
    return "; ".join(parts)


def mark(card: pd.DataFrame) -> tuple[str, str]:
    """[Re] or [¬Re] for one reading's claims by coverage and outcome (:data:`TITLE_RULE`), and why."""
    substantive = counted(card)
    decisive = substantive[substantive["verdict"].isin(DECISIVE)]
    reproduced = int((decisive["verdict"] == REPRODUCED).sum())
    covered = 2 * len(decisive) >= len(substantive) and len(decisive) > 0
    majority = 2 * reproduced > len(decisive)
    why = (
        f"{len(decisive)} of {len(substantive)} counted substantive claims decided "
        f"({'enough' if covered else 'fewer than half'}), {reproduced} of {len(decisive)} reproduced"
    )
    return ("[Re]" if covered and majority else "[¬Re]"), why


def reading_cards(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> dict[str, pd.DataFrame]:
    """The default's claims and each built reading not marked post hoc (``<study>/readings/<name>.csv``)."""
    cards = {DEFAULT: card}
    for reading in study_readings(study):
        path = out / study / "readings" / f"{reading.name}.csv"
        if reading.name != DEFAULT and not reading.post_hoc and path.is_file():
            cards[reading.name] = _read_card(path)
    return cards


def title_marks(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> dict[str, tuple[str, str]]:
    """The mark each non-post-hoc reading (and the default) would give, with why."""
    return {name: mark(frame) for name, frame in reading_cards(study, card, out).items()}


def title(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> tuple[str, pd.DataFrame]:
    """The article's title by :data:`TITLE_RULE`, and the substantive claims it was decided over."""
    marks = title_marks(study, card, out)
    robust = all(m == "[Re]" for m, _ in marks.values())
    heading = f"{'[Re]' if robust else '[¬Re]'} {REFERENCES[study].title} ({scope(study, card)})"
    return heading, counted(card)


def article_blocks(study: str, out: Path = PUBLISHED) -> list[Block]:
    """The article of ``study`` as blocks, from ``out`` alone."""
    folder = study_folder(study, out)
    manifest = read_json(folder / MANIFEST)
    scorecard = _read_card(out / "scorecard.csv")  # the study's claims.csv and its privacy claims, audit-judged
    card = scorecard[scorecard["study"] == study]
    heading, substantive = title(study, card, out)
    return [
        Block("heading", heading, level=1),
        *_front_matter(study, manifest),
        *_summary(study, card, substantive, manifest, out),
        *_sections(card, folder, manifest.get("aggregate_compute")),
        *_sensitivity(study, out, manifest),
        *_post_hoc(study),
        *_audit(card, folder),
        *_deviations(card, manifest),
    ]


def _front_matter(study: str, manifest: dict) -> list[Block]:
    ref = REFERENCES[study]
    return [
        Block("text", "Authors: (to be filled in by the authors of this replication; see metadata.yaml)."),
        Block("text", f"Original article: {_citation(ref)}"),
        Block(
            "text",
            f"Code: {CODE_REFERENCE.format(commit=manifest['code']['commit'])}; data: the published "
            f"snapshot published/{study}/ (MANIFEST.json lists every file with its sha256).",
        ),
        Block(
            "text",
            f"Replication type: {REPLICATION_TYPE} (the deviations are listed at the end).",
        ),
    ]


def _citation(ref: Reference) -> str:
    return "; ".join(part for part in (ref.authors, f'"{ref.title}"', ref.venue, ref.locator) if part) + "."


def _ids(rows: pd.DataFrame, with_verdict: bool = False) -> str:
    """The claims' ids, comma-separated (each with its verdict when asked), or "none"."""
    ids = [f"{r.id} ({r.verdict})" if with_verdict else r.id for r in rows.itertuples()]
    return ", ".join(ids) or "none"


def _own_mechanism(privacy: pd.DataFrame, out: Path) -> str:
    """A sentence for each privacy claim whose verdict on the mechanism this study's runs use (the default reading's,
    ``readings.csv``) is another than its verdict over every audited cell, or nothing."""
    path = out / "readings.csv"
    if not path.is_file():
        return ""
    readings = _read_card(path)
    own = readings[(readings["reading"] == DEFAULT) & readings["id"].isin(privacy["id"])].set_index("id")
    differ = [
        f"{row.id} is '{own.at[row.id, 'verdict']}' on the mechanism this study's own runs use (the default reading)"
        for row in privacy.itertuples()
        if row.id in own.index and own.at[row.id, "verdict"] != row.verdict
    ]
    return (" Beside that, " + "; ".join(differ) + ".") if differ else ""


def _summary(study: str, card: pd.DataFrame, substantive: pd.DataFrame, manifest: dict, out: Path) -> list[Block]:
    """The reproducibility summary: the outcome in one paragraph, then scope, methodology, results, what was
    easy and difficult, communication with the authors."""
    decisive = substantive[substantive["verdict"].isin(DECISIVE)]
    reproduced = decisive[decisive["verdict"] == REPRODUCED]
    mechanism = counted(card, (MECHANISM_PROPERTY,))
    mechanism_decisive = mechanism[mechanism["verdict"].isin(DECISIVE)]
    privacy = card[card["kind"] == PRIVACY_CLAIM]
    outcome = (
        f"Of the paper's substantive claims that received a decisive verdict, {len(reproduced)} of "
        f"{len(decisive)} are reproduced ({len(substantive) - len(decisive)} more have no decisive verdict); "
        f"of its mechanism properties with a decisive verdict, {(mechanism_decisive['verdict'] == REPRODUCED).sum()} "
        f"of {len(mechanism_decisive)} are reproduced ({len(mechanism) - len(mechanism_decisive)} more have none); "
        "its privacy claims under the audit: " + _ids(privacy, with_verdict=True) + "." + _own_mechanism(privacy, out)
    )
    return [
        Block("heading", "Reproducibility summary", level=2),
        Block("text", outcome),
        *_scope(card),
        *_methodology(study, card, manifest, out),
        Block("heading", "Results", level=3),
        Block("text", TITLE_RULE),
        Block(
            "text",
            "The title under the default reading and under each built reading not marked post hoc: "
            + "; ".join(f"{name}: {m} ({why})" for name, (m, why) in title_marks(study, card, out).items())
            + ".",
        ),
        Block(
            "text",
            f"Decisive substantive claims: {len(decisive)}, of which {len(reproduced)} reproduced. Left out of the "
            f"denominator: {_ids(substantive[~substantive['verdict'].isin(DECISIVE)], with_verdict=True)}.",
        ),
        Block("table", table=verdict_counts(substantive).query("study == @study")),
        *_easy_and_difficult(study, card, out),
        Block("heading", "Communication with the original authors", level=3),
        Block("text", "None took place."),
    ]


def _scope(card: pd.DataFrame) -> list[Block]:
    tested = card[~card["verdict"].isin(NOT_RUN)]
    untested = card[card["verdict"].isin(NOT_RUN)]
    table = tested.rename(columns={"statement": "claim"})[["claim", "id", "kind", "verdict"]]
    return [
        Block("heading", "Scope", level=3),
        Block("text", f"{len(tested)} claims were tested (every claim of the scorecard whose runs were done):"),
        Block("table", table=table),
        Block(
            "text",
            f"{len(untested)} were not tested: "
            + "; ".join(f"{verdict} ({count})" for verdict, count in untested["verdict"].value_counts().items())
            + (f" ({_ids(untested)})." if len(untested) else "none."),
        ),
    ]


def _methodology(study: str, card: pd.DataFrame, manifest: dict, out: Path) -> list[Block]:
    cards = sorted((out / study / "cards").glob("*.json"))
    data = [f"{card['name']}: npz sha256 {card['npz_sha256']}" for card in map(read_json, cards)]
    machine = manifest["machine"]
    audit = manifest.get("audit")
    return [
        Block("heading", "Methodology", level=3),
        Block(
            "text",
            f"Code commit {manifest['code']['commit']}; config {manifest['configfile']}; machine "
            f"{machine['processor']}, {machine['cores']} cores, {machine['memory_gib']} GiB; "
            f"Python {machine['python']}.",
        ),
        Block(
            "text",
            "Data: "
            + ("; ".join(data) or "the snapshot holds no dataset card for this study (its data are generated)")
            + ".",
        ),
        Block(
            "text",
            f"Compute: the study's runs took {manifest['run_compute_seconds']} seconds in all (MANIFEST.json, "
            "run_compute_seconds: each run's share of its job's wall time, summed)"
            + "".join(
                f"; {g['runs']} of the runs were made on an {gpu}, in {g['wall_seconds']} seconds of its time "
                "(run_gpus)"
                for gpu, g in manifest.get("run_gpus", {}).items()
            )
            + (f"; its privacy audit took {audit['cpu_seconds']} CPU-seconds" if audit else "")
            + ".",
        ),
        *_compute_per_claim(study, card, manifest.get("aggregate_compute"), manifest.get("stacked_table_compute", {})),
        *_compute_measured(manifest.get("compute_measured")),
    ]


def _compute_measured(measured: dict | None) -> list[Block]:
    """Where compute per claim was measured by a rebuild after the snapshot (``dpdl publish --compute``), say so."""
    if measured is None:
        return []
    differences = measured["largest_relative_difference"]
    same = (
        f"{measured['tables_same_bytes']} of its {measured['tables']} per-seed tables are the snapshot's byte for byte"
    )
    if differences:
        listed = ", ".join(f"{column} by at most {value:g}" for column, value in differences.items())
        same += f", the others differ only in {listed} relative (within {measured['tolerance']:g})"
    return [
        Block(
            "text",
            "This compute per claim was measured after the snapshot, by a rebuild of its default grid on "
            f"{measured['machine']['cores']} cores ({measured['runs']} runs; `dpdl publish --compute` at commit "
            f"{measured['code']['commit'][:10]}; MANIFEST.json, compute_measured): {same}. It is CPU time; the "
            "total above is the snapshot's own runs' wall time.",
        )
    ]


def _compute_per_claim(study: str, card: pd.DataFrame, compute: dict | None, stacked: dict) -> list[Block]:
    """Compute per claim, as the snapshot records it: the runs behind the table each claim is judged from (its
    registered ``aggregate``), where that table is one of the manifest's ``aggregate_compute`` or, for a stack of
    several tables, its ``stacked_table_compute``."""
    if compute is None:
        return [
            Block(
                "text",
                "This snapshot was published before compute per table was recorded (MANIFEST.json has no "
                "aggregate_compute), so compute per claim is not available; publishing again from a build adds it.",
            )
        ]
    tables, compute = {}, dict(compute)
    for claim in study_module(study).CLAIMS:
        if claim.aggregate in stacked:  # a stack of several tables: the grid's runs of it
            tables[claim.id] = f"{claim.aggregate} (a stack of the figures' tables)"
            compute[tables[claim.id]] = stacked[claim.aggregate]
        else:
            tables[claim.id] = f"aggregates/{claim.aggregate}.csv"
    gpu = any("gpu_seconds" in entry for entry in compute.values())  # a column only where some run was on a GPU
    rows = [
        (claim, tables[claim], compute[tables[claim]]["runs"], compute[tables[claim]]["cpu_seconds"])
        + ((compute[tables[claim]].get("gpu_seconds", 0.0),) if gpu else ())
        for claim in card["id"]
        if tables.get(claim) in compute
    ]
    others = [claim for claim in card["id"] if tables.get(claim) not in compute]
    return [
        Block(
            "text",
            "Compute per claim: the runs behind the table each claim is judged from, and their compute "
            "(MANIFEST.json, aggregate_compute: the inputs Snakemake recorded for the table's job, followed down "
            "to the run files; each run's CPU time, user + system, or its wall time where the run predates that "
            "record"
            + (
                "; a run made on a GPU counts its share of its batch's wall time as GPU time, not CPU time"
                if gpu
                else ""
            )
            + ")"
            + (
                "; for a table stacked from several figures' tables, the runs the study's grid says it reads "
                "(stacked_table_compute)"
                if stacked
                else ""
            )
            + ". Claims judged from the same table share its runs, so the rows do not add up to the total; "
            "steps that are not runs (tuning, calibration, drawing) are not counted."
            + (
                f" Not listed: {', '.join(others)} (judged by the privacy audit, whose compute is above, or from a "
                "table the manifest does not record, such as one made of several; their figure's section gives "
                "the compute behind the figure)."
                if others
                else ""
            ),
        ),
        Block(
            "table",
            table=pd.DataFrame(rows, columns=["id", "table", "runs", "CPU-seconds", *(["GPU-seconds"] if gpu else [])]),
        ),
    ]


def _outcome(row) -> str:
    """One claim as a reader meets it: the paper's sentence, its id, ours against the paper's value."""
    ours = row.our_value
    if row.ci_low != "" and row.form == "stated number":  # its effect and interval are ours - paper's value
        bounds = f"[{fmt(float(row.ci_low))}, {fmt(float(row.ci_high))}]"
        ours = f"{row.our_value} (ours - paper {fmt(float(row.effect))} {bounds}; tolerance {_reach(row)})"
    elif row.ci_low != "":  # the interval is the effect's (ours against the other method's, or the change's)
        interval = f"interval {_interval(row)}"
        effect = "" if row.our_value.startswith("effect") else f"effect {fmt(float(row.effect))}, "
        ours = f"{row.our_value} ({effect}{interval})"
    paper = f"; the paper: {row.paper_value}" if row.paper_value != "" else ""
    return f"{row.statement} (`{row.id}`): ours {ours}{paper}"


def _undecided(row) -> str:
    """Why a claim has no decisive verdict, from its row. An inconclusive claim over several cells names the
    weakest of the cells it needs (``deciding_cell``): its effect shown is the median cell's, not that one's."""
    if row.verdict == "inconclusive" and row.seeds_to_decide != "":
        seeds = fmt(float(row.seeds_to_decide))
        cell = getattr(row, "deciding_cell", "")
        weakest = f"; the weakest of the cells it needs: {cell}" if cell else ""
        return f"{_outcome(row)}; inconclusive: about {seeds} seeds per cell would decide it{weakest}"
    return f"{row.statement} (`{row.id}`): {row.verdict}"


def _easy_and_difficult(study: str, card: pd.DataFrame, out: Path) -> list[Block]:
    """The paper's own claims (not the implementation checks) by how they fared, each with its numbers and reason."""
    own = headline(card)
    readings = _readings_table(study, out).merge(own[["id", "statement"]], on="id")
    post_hoc = own.assign(choice=own["post_hoc"].str.split("; ")).explode("choice")
    post_hoc = post_hoc[post_hoc["choice"].fillna("") != ""]
    by_choice = post_hoc.groupby("choice", sort=True)["id"].apply(lambda ids: ", ".join(f"`{i}`" for i in ids))
    return [
        Block("heading", "What was easy", level=3),
        Block("text", "The paper's claims reproduced under the default reading:"),
        Block("list", items=tuple(_outcome(r) for r in own[own["verdict"] == REPRODUCED].itertuples()) or ("none",)),
        Block("heading", "What was difficult", level=3),
        Block(
            "text",
            "Not reproduced (our value; where the claim's test has one, its effect and the effect's interval; the "
            "paper's value):",
        ),
        Block(
            "list", items=tuple(_outcome(r) for r in own[own["verdict"] == NOT_REPRODUCED].itertuples()) or ("none",)
        ),
        Block("text", "Without a decisive verdict, and why:"),
        Block(
            "list", items=tuple(_undecided(r) for r in own[~own["verdict"].isin(DECISIVE)].itertuples()) or ("none",)
        ),
        Block("text", "Verdicts that a setting the paper leaves open moves (the readings, below):"),
        Block(
            "list",
            items=tuple(
                f"{r.statement} (`{r.id}`): {r.default_verdict} by default, {r.verdict} under {r.reading}"
                for r in readings.itertuples()
            )
            or ("none",),
        ),
        Block(
            "text", "Choices made after a result was seen (the post hoc register, below), with the claims they touch:"
        ),
        Block("list", items=tuple(f"{choice}: {ids}" for choice, ids in by_choice.items()) or ("none",)),
    ]


def _exhibit(where: str) -> str:
    """The first figure or table of the paper a claim's ``where`` names ("J Fig. 4a", "Table 1"), or ""."""
    found = EXHIBIT.search(where)
    if found is None:
        return ""
    version, kind, number = found.groups()
    return f"{version or ''}{'Table' if kind == 'Table' else 'Fig.'} {number.replace('(', '').replace(')', '')}"


def _figure_exhibit(name: str) -> str:
    """The exhibit label of one of our figures named for the paper's (``fig02.png`` -> "Fig. 2"), or ""."""
    found = re.fullmatch(r"fig0*(\d+[a-z]?)", Path(name).stem)
    return f"Fig. {found.group(1)}" if found else ""


def _sections(card: pd.DataFrame, folder: Path, compute: dict | None) -> list[Block]:
    """One section per figure or table of the paper (the first its claims' ``where`` names), beside our figure
    named for it and the compute behind the figure's table (``compute``: the manifest's ``aggregate_compute``,
    None in a snapshot published before it was recorded); the claims that name none, and our figures no
    section shows, last."""
    listed = set(read_json(folder / MANIFEST)["files"])  # only what the manifest vouches for, never a link
    figures = sorted(
        name
        for p in (folder / "figures").glob("*.png")
        if not p.is_symlink() and (name := p.relative_to(folder).as_posix()) in listed
    )
    paper = card[~card["kind"].isin((PRIVACY_CLAIM, PREMISE_CLAIM))]
    exhibits = paper["where"].map(_exhibit)
    order = [e for e in dict.fromkeys(exhibits) if e] + ([""] if (exhibits == "").any() else [])
    blocks = [
        Block("heading", "Claims by figure and table of the paper", level=2),
        Block(
            "text",
            "Each section sets the values the paper states for one of its figures or tables beside ours, with "
            "the verdict, the interval and the test, then our figure. The paper's own figures are not shown: "
            "this project holds the papers as text, so their plotted curves are compared through the values "
            "and orderings the text states, not by eye.",
        ),
    ]
    placed = set()
    for exhibit in order:
        rows = paper[exhibits == exhibit]
        blocks += [
            Block("heading", exhibit or "Claims that name no figure or table", level=3),
            Block("table", table=_claims_table(rows)),
        ]
        label = exhibit.removeprefix("J ").removeprefix("C ")
        for name in (n for n in figures if exhibit and _figure_exhibit(n) == label and n not in placed):
            blocks += [Block("figure", name), *_figure_compute(name, compute)]
            placed.add(name)
    others = [name for name in figures if name not in placed]
    if others:
        blocks += [Block("heading", "Our other figures", level=3), *(Block("figure", n) for n in others)]
    return blocks


def _figure_compute(figure: str, compute: dict | None) -> list[Block]:
    """The runs behind our ``figure``'s table (``figures/fig2.png`` -> ``aggregates/fig2.csv``) and their CPU time."""
    table = f"aggregates/{Path(figure).stem}.csv"
    if not compute or table not in compute:
        return []
    runs, seconds = compute[table]["runs"], compute[table]["cpu_seconds"]
    gpu = f", {compute[table]['gpu_seconds']} GPU-seconds" if "gpu_seconds" in compute[table] else ""
    return [
        Block(
            "text",
            f"Compute behind this figure: {runs} runs, {seconds} CPU-seconds{gpu} (the runs its table {table} was "
            "made from; MANIFEST.json, aggregate_compute).",
        )
    ]


def _interval(row) -> str:
    """The effect's interval, labelled "ours - paper" where it is that (a stated number's)."""
    if row.ci_low == "":
        return ""
    label = "ours - paper " if row.form == "stated number" else ""
    return f"{label}[{fmt(float(row.ci_low))}, {fmt(float(row.ci_high))}]"


def _reach(row) -> str:
    """How far a stated number's verdict can be pushed, beside its declared tolerance (issue 59)."""
    reproduced, refuted = (getattr(row, name, "") for name in ("tolerance_reproduced", "tolerance_not_reproduced"))
    if reproduced == "":
        return row.tolerance
    refuted = "no tolerance" if refuted == "" else f"below ±{fmt(float(refuted))}"
    return f"{row.tolerance}; reproduced from ±{fmt(float(reproduced))}, not reproduced {refuted}"


def _claims_table(rows: pd.DataFrame) -> pd.DataFrame:
    shown = [(_interval(r), _reach(r)) for r in rows.itertuples()]
    return rows.assign(interval=[i for i, _ in shown], tolerance=[r for _, r in shown])[CLAIM_COLUMNS]


def _readings_table(study: str, out: Path) -> pd.DataFrame:
    """The claims of ``study`` whose verdict differs from the default's under another built reading."""
    table = _read_card(out / "readings.csv")
    table = table[(table["study"] == study) & (table["reading"] != DEFAULT)]
    differs = table[(table["unchanged"] != "yes") & (table["verdict"] != table["default_verdict"])]
    return differs[["id", "reading", "engine", "default_verdict", "verdict"]]


def _narrowed(manifest: dict) -> list[Block]:
    """The readings built on some of the config's cells (``reading_cells``), and the cells each leaves out."""
    lines = [
        f"{key.partition(READING_KEY)[2]} on {len(cells)} cells of the grid: " + ", ".join(f"`{c}`" for c in cells)
        if left_out is None
        else f"{key.partition(READING_KEY)[2]} on {len(cells)} of the config's {len(cells) + len(left_out)} cells, "
        "leaving out " + ", ".join(f"`{c}`" for c in left_out)
        for key, (cells, left_out) in narrowed_cells(manifest["config"]).items()
    ]
    if not lines:
        return []
    text = (
        "Built on the cells it had finished (the config's `reading_cells`), so its claims on the cells left out "
        "are not run at this scale: "
    )
    return [Block("text", text + "; ".join(lines) + ".")]


def _sensitivity(study: str, out: Path, manifest: dict) -> list[Block]:
    readings = study_readings(study)
    described = pd.DataFrame(
        [
            {
                "reading": r.name,
                "post hoc": "yes" if r.post_hoc else "",
                "switches": json.dumps(dict(r.switches)),
                "why": r.why,
            }
            for r in readings
        ]
    )
    return [
        Block("heading", "Readings: a sensitivity analysis", level=2),
        Block(
            "text",
            "Each reading sets the values the paper leaves open; the default gives the title and the "
            "counts above. The readings declared:",
        ),
        Block("table", table=described),
        *_narrowed(manifest),
        Block(
            "text", "Claims whose verdict differs from the default's under a built reading (published/readings.csv):"
        ),
        Block("table", table=_readings_table(study, out)),
    ]


def _post_hoc(study: str) -> list[Block]:
    entries = [e for e in REGISTER if any(study_of(c) == study for c in e.claims)]
    table = pd.DataFrame(
        [
            {
                "subject": e.subject,
                "kind": e.kind,
                "commit": e.commit,
                "claims": ", ".join(e.claims),
                "known": e.known,
                "what": e.what,
            }
            for e in entries
        ],
        columns=["subject", "kind", "commit", "claims", "known", "what"],
    )
    return [
        Block("heading", "Post hoc register", level=2),
        Block(
            "text", "Choices made after a relevant result was known (src/dpdl/post_hoc.yaml), for this study's claims:"
        ),
        Block("table", table=table),
    ]


def _audit(card: pd.DataFrame, folder: Path) -> list[Block]:
    privacy = card[card["kind"] == PRIVACY_CLAIM]
    blocks = [
        Block("heading", "Privacy audit", level=2),
        Block(
            "text",
            "The paper's privacy claims, tested by an empirical audit (runs on neighbouring datasets; "
            "eps_lb is a lower bound on epsilon; an audit can refute a claim, never prove it). The verdict is the "
            "paper's guarantee over every audited cell; `readings` gives it under each reading, judged on the cells "
            "that ran that reading's mechanism (the default reading's first: the mechanism this study's runs use):",
        ),
        Block(
            "table",
            table=privacy[["id", "paper_value", "our_value", "verdict", "deciding_cell", "readings", "detail"]],
        ),
    ]
    ledger_path = folder / "audit" / "premises.csv"
    if ledger_path.is_file():
        ledger = pd.read_csv(ledger_path)
        deciding = {cell.split(" (")[0] for cell in privacy["deciding_cell"] if cell}
        blocks += [
            Block(
                "text",
                "The deciding cells' premises (audit/premises.csv: each of the paper's stated assumptions, "
                "declared within or outside and measured on the cell's canary pair; a refutation counts against "
                "the paper only from a cell within every one):",
            ),
            Block("table", table=ledger_shown(ledger, deciding)),
        ]
    premises = card[card["kind"] == PREMISE_CLAIM]
    if len(premises):
        blocks += [
            Block(
                "text",
                "The paper's premises tested on its own data (audit/data_premises.csv: every record of each dataset "
                "as the study prepares it, against the bound the guarantee assumes):",
            ),
            Block("table", table=premises[["id", "paper_value", "our_value", "verdict", "detail"]]),
        ]
    if (folder / AUDIT_TABLE).is_file():
        audit = _read_card(folder / AUDIT_TABLE)
        shown = ["claim", "cell", "algorithm", "score", "runs", "claimed_epsilon", "delta", "eps_lb", "refutes"]
        blocks += [Block("text", "The audit's tests (audit/audit.csv):"), Block("table", table=audit[shown])]
    else:
        blocks.append(Block("text", "The snapshot holds no audit for this study."))
    return blocks


def _deviations(card: pd.DataFrame, manifest: dict) -> list[Block]:
    not_run = card[card["verdict"].isin(NOT_RUN)]
    settings = dict.fromkeys(card["switches"][card["switches"] != ""])
    scales = dict.fromkeys(card["scale"][card["scale"] != ""])
    return [
        Block("heading", "Deviations from the paper, and what was not run", level=2),
        Block("text", "Settings the paper leaves open, as the default reading sets them (scorecard, switches):"),
        Block("list", items=tuple(settings)),
        Block("text", "The scale of the runs (scorecard, scale):"),
        Block("list", items=tuple(scales)),
        Block("text", "Claims not run, and why:"),
        Block(
            "list",
            items=tuple(f"{r.id} ({r.verdict}): {r.detail or r.justification}" for r in not_run.itertuples())
            or ("none",),
        ),
        *_not_run_cost(not_run, manifest),
    ]


def _not_run_cost(not_run: pd.DataFrame, manifest: dict) -> list[Block]:
    """What the runs not done would cost: the manifest's projection (``not_run_cost``) where it has one."""
    lead = "What the runs not done would cost: "
    if not len(not_run):
        return [Block("text", lead + "nothing: every claim was run.")]
    cost = manifest.get("not_run_cost")
    if cost is None:
        return [
            Block(
                "text",
                lead + "the snapshot records no estimate (published before `dpdl publish` projected it); the runs done "
                f"took {manifest['run_compute_seconds']} seconds of run time.",
            )
        ]
    rates = ", ".join(f"{group} {ms} ms" for group, ms in cost["ms_per_run_iteration"].items()) or "none measured"

    def unprojected(entry: dict) -> str:
        return ", ".join(f"{n} on {group}" for group, n in entry["runs_not_projected"].items()) or "none"

    every = cost["all"]
    table_of = {claim.id: claim.aggregate for claim in study_module(manifest["study"]).CLAIMS}
    claims_of: dict[str, list[str]] = {}  # the projection is per table: claims judged from one table share its runs
    for claim in not_run["id"]:
        if claim in cost["claims"]:  # a claim registered after the snapshot has none
            claims_of.setdefault(table_of[claim], []).append(claim)
    gpu = "gpu_ms_per_run_iteration" in cost  # the build has runs made on a GPU: their rate projects GPU time
    rows = []
    for table, claims in claims_of.items():
        entry = cost["claims"][claims[0]]
        hours = (entry["cpu_hours"], *([entry["gpu_hours"]] if gpu else []))
        rows.append((table, ", ".join(claims), entry["runs"], *hours, unprojected(entry)))
    columns = [
        "table",
        "claims not run",
        "runs not done",
        "projected CPU-hours",
        *(["projected GPU-hours"] if gpu else []),
        "runs not projected on CPU (no CPU run on their data)",
    ]
    gpu_note = (
        " Where this build's runs of the same data were made on a GPU, their GPU time per run-iteration ("
        + ", ".join(f"{group} {ms} ms" for group, ms in cost["gpu_ms_per_run_iteration"].items())
        + f") projects GPU-hours too: {every['gpu_hours']} for all of them."
        if gpu
        else ""
    )
    return [
        Block(
            "text",
            lead + f"the runs of `{cost['configfile']}`'s grid that the table a claim is judged from reads and this "
            "build did not make at the grid's iterations, one row per table (its claims share them), "
            "projected at the CPU time per run-iteration this build's CPU runs spent on the same data "
            f"({rates}); a run on data with no CPU run here is counted, not projected. All of them together "
            f"(tables share runs): {every['runs']} runs, {every['cpu_hours']} CPU-hours projected, not projected: "
            f"{unprojected(every)}. A table that reads no run of the grid (0 runs) needs data or a table this "
            "project does not build." + gpu_note,
        ),
        Block("table", table=pd.DataFrame(rows, columns=columns)),
    ]


def markdown(blocks: list[Block]) -> str:
    """The article as Markdown; figures as links relative to the study folder."""
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"{'#' * block.level} {block.text}\n")
        elif block.kind == "text":
            parts.append(block.text + "\n")
        elif block.kind == "list":
            parts.append("".join(f"- {item}\n" for item in block.items))
        elif block.kind == "table":
            parts.append(markdown_table(block.table) if len(block.table) else "none\n")
        else:
            parts.append(f"![{block.text}]({block.text})\n")
    return "\n".join(parts)


STYLE = (
    "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;"
    "padding:0 1em;color:#212529;line-height:1.5}table{border-collapse:collapse;font-size:0.85em;margin:1em 0}"
    "th,td{border:1px solid #dee2e6;padding:0.3em 0.5em;vertical-align:top}th{background:#f8f9fa}"
    "img{max-width:100%}h1,h2,h3{color:#343a40}"
)


def html_page(blocks: list[Block], folder: Path) -> str:
    """The article as one self-contained HTML page: figures inline as data URIs, no external URL."""
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif block.kind == "text":
            parts.append(f"<p>{html.escape(block.text)}</p>")
        elif block.kind == "list":
            parts.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in block.items) + "</ul>")
        elif block.kind == "table":
            parts.append(_html_table(block.table))
        else:
            data = base64.b64encode((folder / block.text).read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img alt="{html.escape(block.text)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(block.text)}</figcaption></figure>"
            )
    title_text = html.escape(blocks[0].text)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title_text}</title>'
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def _html_table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "<p>none</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def metadata(study: str, blocks: list[Block], manifest: dict) -> str:
    """ReScience C ``metadata.yaml``: the authors left for the user to fill in."""
    ref = REFERENCES[study]
    data = {
        "title": blocks[0].text,
        "authors": [
            {
                "name": "(your name)",
                "orcid": "(your ORCID)",
                "email": "(your email)",
                "affiliations": "(your affiliation)",
            }
        ],
        "type": "Replication",
        "language": "Python",
        "domain": "Differential privacy; distributed machine learning",
        "replication": {"cite": _citation(ref), "bib": ref.locator, "url": "", "doi": ""},
        "code": {"url": "", "commit": manifest["code"]["commit"]},
        "data": {"url": "", "doi": "", "path": f"published/{study}/"},
        "replication type": REPLICATION_TYPE,
    }
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def article_files(study: str, out: Path = PUBLISHED) -> dict[str, str]:
    """The article's files of ``study`` (name inside ``out/<study>`` -> text), generated from ``out``."""
    folder = study_folder(study, out)
    blocks = article_blocks(study, out)
    texts = (markdown(blocks), html_page(blocks, folder), metadata(study, blocks, read_json(folder / MANIFEST)))
    return dict(zip(ARTICLE_FILES, texts, strict=True))


def write_article(study: str, out: Path = PUBLISHED) -> None:
    """Write :func:`article_files` into ``out/<study>/``, each file atomically (all generated first)."""
    files = article_files(study, out)
    for name, text in files.items():
        write_text(out / study / name, text)


def write_articles(out: Path = PUBLISHED) -> list[str]:
    """Write the article of every study published in ``out``; return the studies written."""
    studies = list(published_studies(_snapshot(out)))
    if not studies:
        raise DpdlError(f"{out}: no published study (no <study>/{MANIFEST}); publish one with `dpdl publish`")
    for study in studies:
        write_article(study, out)
    return studies


def article_problems(out: Path = PUBLISHED) -> list[str]:
    """An article missing or not what regenerating it from ``out`` gives, one line each with the fix."""
    problems = []
    for study in published_studies(out):
        try:
            files = article_files(study, out)
        except (DpdlError, KeyError, OSError) as err:
            problems.append(f"{out / study}: the article cannot be generated ({err})")
            continue
        for name, text in files.items():
            path = out / study / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                problems.append(f"{path}: missing or not what regenerating gives; rewrite it with `dpdl article --all`")
    return problems
