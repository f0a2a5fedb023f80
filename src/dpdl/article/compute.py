"""The compute the snapshot records: per claim, per figure, and measured again by a rebuild."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.paths import published_aggregate
from dpdl.studies import study_module


def compute_measured(measured: dict | None) -> list[Block]:
    """Say so where compute per claim was measured by a rebuild after the snapshot.

    The rebuild is ``dpdl publish --compute``.
    """
    if measured is None:
        return []
    differences = measured["largest_relative_difference"]
    same = (
        f"{measured['tables_same_bytes']} of its {measured['tables']} per-seed tables"
        " are the snapshot's byte for byte"
    )
    if differences:
        listed = ", ".join(f"{column} by at most {value:g}" for column, value in differences.items())
        same += f", the others differ only in {listed} relative (within {measured['tolerance']:g})"
    return [
        Block(
            "text",
            "This compute per claim was measured after the snapshot, by a rebuild of its default grid on "
            f"{measured['machine']['cores']} cores ({measured['runs']} runs; `dpdl publish "
            f"--compute` at commit {measured['code']['commit'][:10]}; MANIFEST.json, "
            f"compute_measured): {same}. It is CPU time; the "
            "total above is the snapshot's own runs' wall time.",
        )
    ]


def compute_per_claim(study: str, card: pd.DataFrame, compute: dict | None, stacked: dict) -> list[Block]:
    """Compute per claim, as the snapshot records it: the runs behind the table each claim is judged from.

    That table is the claim's registered ``aggregate``, where it is one of the manifest's
    ``aggregate_compute`` or, for a stack of several tables, its ``stacked_table_compute``.
    """
    if compute is None:
        return [
            Block(
                "text",
                "This snapshot was published before compute per table was recorded (MANIFEST.json has no "
                "aggregate_compute), so compute per claim is not available; publishing again from "
                "a build adds it.",
            )
        ]
    tables, compute = {}, dict(compute)
    for claim in study_module(study).CLAIMS:
        if claim.aggregate in stacked:  # a stack of several tables: the grid's runs of it
            tables[claim.id] = f"{claim.aggregate} (a stack of the figures' tables)"
            compute[tables[claim.id]] = stacked[claim.aggregate]
        else:
            tables[claim.id] = published_aggregate(f"{claim.aggregate}.csv")
    # a column only where some run was on a GPU
    gpu = any("gpu_seconds" in entry for entry in compute.values())
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
            "(MANIFEST.json, aggregate_compute: the inputs Snakemake recorded for the table's job, "
            "followed down to the run files; each run's CPU time, user + system, or its wall time "
            "where the run predates that record"
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
                f" Not listed: {', '.join(others)} (judged by the privacy audit, whose compute is "
                "above, or from a table the manifest does not record, such as one made of several; "
                "their figure's section gives the compute behind the figure)."
                if others
                else ""
            ),
        ),
        Block(
            "table",
            table=pd.DataFrame(
                rows, columns=["id", "table", "runs", "CPU-seconds", *(["GPU-seconds"] if gpu else [])]
            ),
        ),
    ]


def figure_compute(figure: str, compute: dict | None) -> list[Block]:
    """The runs behind our ``figure``'s table and their CPU time.

    The table is the figure's aggregate: ``figures/fig2.png`` -> ``aggregates/fig2.csv``.
    """
    table = published_aggregate(f"{Path(figure).stem}.csv")
    if not compute or table not in compute:
        return []
    runs, seconds = compute[table]["runs"], compute[table]["cpu_seconds"]
    gpu = f", {compute[table]['gpu_seconds']} GPU-seconds" if "gpu_seconds" in compute[table] else ""
    return [
        Block(
            "text",
            f"Compute behind this figure: {runs} runs, {seconds} CPU-seconds{gpu} (the runs its "
            f"table {table} was made from; MANIFEST.json, aggregate_compute).",
        )
    ]
