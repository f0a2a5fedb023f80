"""The deviations from the paper and what was not run, with what the runs not done would cost; the declared
data deviations' verdicts beside the default's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.article.snapshot import read_card
from dpdl.judgement import NOT_RUN
from dpdl.paths import published_deviation
from dpdl.studies import study_module


def deviations(card: pd.DataFrame, manifest: dict) -> list[Block]:
    not_run = card[card["verdict"].isin(NOT_RUN)]
    settings = dict.fromkeys(card["switches"][card["switches"] != ""])
    scales = dict.fromkeys(card["scale"][card["scale"] != ""])
    return [
        Block("heading", "Deviations from the paper, and what was not run", level=2),
        Block(
            "text", "Settings the paper leaves open, as the default reading sets them (scorecard, switches):"
        ),
        Block("list", items=tuple(settings)),
        Block("text", "The scale of the runs (scorecard, scale):"),
        Block("list", items=tuple(scales)),
        Block("text", "Claims not run, and why:"),
        Block(
            "list",
            items=tuple(f"{r.id} ({r.verdict}): {r.detail or r.justification}" for r in not_run.itertuples())
            or ("none",),
        ),
        *not_run_cost(not_run, manifest),
    ]


def not_run_cost(not_run: pd.DataFrame, manifest: dict) -> list[Block]:
    """What the runs not done would cost: the manifest's projection (``not_run_cost``) where it has one."""
    lead = "What the runs not done would cost: "
    if not len(not_run):
        return [Block("text", lead + "nothing: every claim was run.")]
    cost = manifest.get("not_run_cost")
    if cost is None:
        return [
            Block(
                "text",
                lead
                + "the snapshot records no estimate (published before `dpdl publish` projected it); the runs done "
                f"took {manifest['run_compute_seconds']} seconds of run time.",
            )
        ]
    rates = (
        ", ".join(f"{group} {ms} ms" for group, ms in cost["ms_per_run_iteration"].items()) or "none measured"
    )

    def unprojected(entry: dict) -> str:
        return ", ".join(f"{n} on {group}" for group, n in entry["runs_not_projected"].items()) or "none"

    every = cost["all"]
    table_of = {claim.id: claim.aggregate for claim in study_module(manifest["study"]).CLAIMS}
    # the projection is per table: claims judged from one table share its runs
    claims_of: dict[str, list[str]] = {}
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
            lead
            + f"the runs of `{cost['configfile']}`'s grid that the table a claim is judged from reads and this "
            "build did not make at the grid's iterations, one row per table (its claims share them), "
            "projected at the CPU time per run-iteration this build's CPU runs spent on the same data "
            f"({rates}); a run on data with no CPU run here is counted, not projected. All of them together "
            f"(tables share runs): {every['runs']} runs, {every['cpu_hours']} CPU-hours projected, "
            f"not projected: {unprojected(every)}. A table that reads no run of the grid (0 runs) "
            "needs data or a table this "
            "project does not build." + gpu_note,
        ),
        Block("table", table=pd.DataFrame(rows, columns=columns)),
    ]


def data_deviations(card: pd.DataFrame, folder: Path, manifest: dict) -> list[Block]:
    """Each declared data deviation published with the study: why, what built it, and its verdicts.

    Its verdicts stand beside the default's (``card``), never in the headline; each row's detail says
    what the deviation can decide of the claim. None published: no section.
    """
    published = manifest.get("deviations", {})
    if not published:
        return []
    declared = {deviation.name: deviation for deviation in study_module(manifest["study"]).DATA_DEVIATIONS}
    default = card.set_index("id")["verdict"]
    blocks = [
        Block("heading", "Declared data deviations", level=2),
        Block(
            "text",
            "Where the paper's data is not here but part of it is, claims are also judged on that part, as a "
            "deviation declared before its results. These verdicts stand beside the default's (the scorecard's "
            "readings column) and are never counted in the headline.",
        ),
    ]
    for name, record in published.items():
        ours = read_card(folder / published_deviation(name) / "claims.csv")
        judged = ours[~ours["verdict"].isin(NOT_RUN)]
        rows = [
            {
                "id": row.id,
                "default verdict": default.get(row.id, ""),
                f"verdict ({name})": row.verdict,
                "paper": row.paper_value,
                "ours": row.our_value,
                "detail": row.detail,
            }
            for row in judged.itertuples()
        ]
        blocks += [
            Block("heading", name, level=3),
            Block(
                "text",
                f"{declared[name].why}. Built from {record['configfile']} at {record['code']['commit'][:7]} "
                f"({record['run_compute_seconds']} s of run time); {len(judged)} of its {len(ours)} claims "
                "judged, the rest not run.",
            ),
            Block("table", table=pd.DataFrame(rows)),
        ]
        for table in study_module(manifest["study"]).CARD_TABLES:  # e.g. Table 1 with the data it ran on
            path = folder / published_deviation(name) / "tables" / f"{table}.csv"
            if path.is_file():
                blocks += [
                    Block("text", f"Its {table}, from its dataset cards:"),
                    Block("table", table=read_card(path)),
                ]
    return blocks
