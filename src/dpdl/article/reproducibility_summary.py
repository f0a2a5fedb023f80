"""The reproducibility summary: the outcome, scope, methodology, results, what was easy and difficult."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.article.claim_text import claim_outcome, claim_undecided
from dpdl.article.compute import compute_measured, compute_per_claim
from dpdl.article.snapshot import read_card, readings_table
from dpdl.article.title import DECISIVE, TITLE_RULE, title_marks
from dpdl.claims import MECHANISM_PROPERTY, PRIVACY_CLAIM
from dpdl.io import read_json
from dpdl.judgement import NOT_REPRODUCED, NOT_RUN, REPRODUCED
from dpdl.readings import DEFAULT
from dpdl.summary import counted, headline, verdict_counts


def _ids(rows: pd.DataFrame, with_verdict: bool = False) -> str:
    """The claims' ids, comma-separated (each with its verdict when asked), or "none"."""
    ids = [f"{r.id} ({r.verdict})" if with_verdict else r.id for r in rows.itertuples()]
    return ", ".join(ids) or "none"


def _own_mechanism(privacy: pd.DataFrame, out: Path) -> str:
    """A sentence for each privacy claim whose verdict on this study's own mechanism differs, or nothing.

    The verdict on the mechanism this study's runs use is the default reading's (``readings.csv``); it is
    compared with the claim's verdict over every audited cell.
    """
    path = out / "readings.csv"
    if not path.is_file():
        return ""
    readings = read_card(path)
    own = readings[(readings["reading"] == DEFAULT) & readings["id"].isin(privacy["id"])].set_index("id")
    differ = [
        f"{row.id} is '{own.at[row.id, 'verdict']}' on the mechanism this study's own runs use (the default reading)"
        for row in privacy.itertuples()
        if row.id in own.index and own.at[row.id, "verdict"] != row.verdict
    ]
    return (" Beside that, " + "; ".join(differ) + ".") if differ else ""


def reproducibility_summary(
    study: str, card: pd.DataFrame, substantive: pd.DataFrame, manifest: dict, out: Path
) -> list[Block]:
    """The reproducibility summary, ReScience C's sections in its order.

    They are the outcome in one paragraph, then scope, methodology, results, what was easy and difficult, and
    communication with the authors.
    """
    decisive = substantive[substantive["verdict"].isin(DECISIVE)]
    reproduced = decisive[decisive["verdict"] == REPRODUCED]
    mechanism = counted(card, (MECHANISM_PROPERTY,))
    mechanism_decisive = mechanism[mechanism["verdict"].isin(DECISIVE)]
    privacy = card[card["kind"] == PRIVACY_CLAIM]
    outcome = (
        f"Of the paper's substantive claims that received a decisive verdict, {len(reproduced)} of "
        f"{len(decisive)} are reproduced ({len(substantive) - len(decisive)} more have no decisive verdict); "
        "of its mechanism properties with a decisive verdict, "
        f"{(mechanism_decisive['verdict'] == REPRODUCED).sum()} of {len(mechanism_decisive)} are "
        f"reproduced ({len(mechanism) - len(mechanism_decisive)} more have none); "
        "its privacy claims under the audit: "
        + _ids(privacy, with_verdict=True)
        + "."
        + _own_mechanism(privacy, out)
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
            f"Decisive substantive claims: {len(decisive)}, of which {len(reproduced)} reproduced. "
            "Left out of the denominator: "
            f"{_ids(substantive[~substantive['verdict'].isin(DECISIVE)], with_verdict=True)}.",
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
        Block(
            "text", f"{len(tested)} claims were tested (every claim of the scorecard whose runs were done):"
        ),
        Block("table", table=table),
        Block(
            "text",
            f"{len(untested)} were not tested: "
            + "; ".join(
                f"{verdict} ({count})" for verdict, count in untested["verdict"].value_counts().items()
            )
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
            + (
                "; ".join(data)
                or "the snapshot holds no dataset card for this study (its data are generated)"
            )
            + ".",
        ),
        Block(
            "text",
            f"Compute: the study's runs took {manifest['run_compute_seconds']} seconds in all "
            "(MANIFEST.json, run_compute_seconds: each run's share of its job's wall time, summed)"
            + "".join(
                f"; {g['runs']} of the runs were made on an {gpu}, in {g['wall_seconds']} seconds "
                "of its time (run_gpus)"
                for gpu, g in manifest.get("run_gpus", {}).items()
            )
            + (f"; its privacy audit took {audit['cpu_seconds']} CPU-seconds" if audit else "")
            + ".",
        ),
        *compute_per_claim(
            study, card, manifest.get("aggregate_compute"), manifest.get("stacked_table_compute", {})
        ),
        *compute_measured(manifest.get("compute_measured")),
    ]


def _easy_and_difficult(study: str, card: pd.DataFrame, out: Path) -> list[Block]:
    """The paper's own claims by how they fared, each with its numbers and reason.

    The implementation checks are left out.
    """
    own = headline(card)
    readings = readings_table(study, out).merge(own[["id", "statement"]], on="id")
    post_hoc = own.assign(choice=own["post_hoc"].str.split("; ")).explode("choice")
    post_hoc = post_hoc[post_hoc["choice"].fillna("") != ""]
    by_choice = post_hoc.groupby("choice", sort=True)["id"].apply(
        lambda ids: ", ".join(f"`{i}`" for i in ids)
    )
    return [
        Block("heading", "What was easy", level=3),
        Block("text", "The paper's claims reproduced under the default reading:"),
        Block(
            "list",
            items=tuple(claim_outcome(r) for r in own[own["verdict"] == REPRODUCED].itertuples())
            or ("none",),
        ),
        Block("heading", "What was difficult", level=3),
        Block(
            "text",
            "Not reproduced (our value; where the claim's test has one, its effect and the "
            "effect's interval; the paper's value):",
        ),
        Block(
            "list",
            items=tuple(claim_outcome(r) for r in own[own["verdict"] == NOT_REPRODUCED].itertuples())
            or ("none",),
        ),
        Block("text", "Without a decisive verdict, and why:"),
        Block(
            "list",
            items=tuple(claim_undecided(r) for r in own[~own["verdict"].isin(DECISIVE)].itertuples())
            or ("none",),
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
            "text",
            "Choices made after a result was seen (the post hoc register, below), with the claims they touch:",
        ),
        Block("list", items=tuple(f"{choice}: {ids}" for choice, ids in by_choice.items()) or ("none",)),
    ]
