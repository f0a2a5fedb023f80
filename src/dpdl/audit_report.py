"""The audit stage: every study's audited cells, their epsilon lower bounds, and the privacy claims' verdicts.

A study declares its privacy claims and audited cells in ``dpdl.studies.<study>.audit``
(:mod:`dpdl.audit.cells`). :func:`audit_study` runs each cell ``runs`` times per side, scores what
the paper's threat model releases, and turns the scores into a lower bound eps_LB
(:mod:`dpdl.audit.bounds`). A claim tested by m (cell, score) pairs is refuted when one of them
gives eps_LB above the claimed epsilon, each bound at confidence 1 - 0.05 / m (Bonferroni), so the
claim is wrongly refuted with probability at most 5%. Otherwise the audit reports eps_LB beside
the claimed and the accountant's epsilon, as a measure of how tight the claim could be: an audit
can refute a privacy claim, never prove one.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.audit.bounds import epsilon_lower_bound, gaussian_dp_fit, laplace_dp_fit
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX
from dpdl.audit.data_premises import data_premise_table
from dpdl.audit.premises import (
    TOLERANCE,
    cells_within,
    check_ledger,
    left_premises,
    premise_ledger,
    project_premises,
)
from dpdl.audit.reach import REACH_COLUMNS, detects_noise_divisor, reachable_epsilon, study_reach
from dpdl.chain import note_read
from dpdl.claims import PREMISE_CLAIM, PRIVACY_CLAIM, SCORECARD_COLUMNS
from dpdl.errors import ArtifactError
from dpdl.io import markdown_table
from dpdl.judgement import (
    CODE_REFUTED,
    NOT_AT_SCALE,
    NOT_REFUTED,
    NOT_TESTABLE,
    PREMISE_BROKEN,
    PREMISE_HOLDS,
    REFUTED,
    REFUTED_OUTSIDE,
    UNAVAILABLE,
)
from dpdl.post_hoc import flags
from dpdl.studies import audit_module

CONFIDENCE = 0.95  # the and the field's level (Jagielski et al. 2020 report 95% bounds)
NOT_BUILT = "audit not built (set audit.enabled: true, or run `snakemake audit`)"
PREMISES_NOT_BUILT = "not measured (set audit.enabled: true, or run `snakemake audit`)"
AUDIT_COLUMNS = [
    "claim",
    "cell",
    "algorithm",
    "switches",
    "score",
    "iterations",
    "runs",
    "claimed_epsilon",
    "delta",
    "accountant_epsilon",
    "eps_lb",
    "ceiling",
    "confidence",
    "threshold",
    "tpr",
    "fpr",
    "refutes",
    "above_accountant",
    "gdp_mu",
    "eps_gdp",
    "eps_gdp_low",
    "released",
    "canary",
    "score_reads",
]
AUDIT_SHOWN = [
    "claim",
    "cell",
    "score",
    "runs",
    "claimed_epsilon",
    "accountant_epsilon",
    "eps_lb",
    "ceiling",
    "tpr",
    "fpr",
    "refutes",
    "eps_gdp",
]


def _fit(cell, kind: str, samples) -> tuple[float, float, float]:
    """(gdp_mu, eps_gdp, eps_gdp_low): the estimate beside Clopper-Pearson, where the score's law is known.

    A Gaussian release: the Gaussian-DP fit to the white-box log-likelihood ratio (Gaussian on both
    sides). A release with norm-exponential noise (density proportional to exp(-zeta ||eps||),
    dvp_pvp): the Laplace fit to the black-box coordinate along the shift (exactly Laplace in one
    dimension; in two, the coordinate's tails are heavier than Laplace and the fit is conservative:
    0.75 at a true 1 in simulation); gdp_mu is NaN. Laplace noise inside an objective (dp_iadmm's
    ObjP / ObjT) does not make the release Laplace: no fit.
    """
    if kind == WHITE_BOX and cell.noise == "gaussian":
        fit = gaussian_dp_fit(samples, cell.delta, CONFIDENCE)
        return fit.mu, fit.epsilon, fit.epsilon_low
    if kind == BLACK_BOX and cell.noise == "norm_exponential":
        fit = laplace_dp_fit(samples, CONFIDENCE)
        return math.nan, fit.epsilon, fit.epsilon_low
    return math.nan, math.nan, math.nan


def _cell_seed(seed: int, index: int) -> int:
    """One independent seed per cell, derived from the audit's seed (a run is a function of both)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def audit_study(study: str, runs: int, seed: int) -> tuple[pd.DataFrame, dict]:
    """One row per (cell, score) of ``study``: eps_LB at the claim's Bonferroni level, and its basis.

    The table says what each eps_LB rests on. The audit's provenance comes with it, with the CPU
    seconds of each cell under ``timing`` (kept out of the table, which is a function of the code,
    ``runs`` and ``seed`` alone).
    """
    module = audit_module(study)
    measured, seconds = [], {}
    for index, cell in enumerate(module.AUDIT_CELLS):
        start = time.process_time()
        scores = module.audit_scores(cell, runs * cell.runs_scale, _cell_seed(seed, index))
        seconds[cell.name] = round(time.process_time() - start, 3)
        measured.extend((cell, kind, samples) for kind, samples in scores.items())
    tests = {
        claim.id: sum(1 for cell, *_ in measured if cell.claim == claim.id) for claim in module.PRIVACY_CLAIMS
    }
    rows = []
    for cell, kind, samples in measured:
        confidence = 1 - (1 - CONFIDENCE) / tests[cell.claim]
        bound = epsilon_lower_bound(samples, cell.delta, confidence)
        mu, eps_fit, eps_fit_low = _fit(cell, kind, samples)
        accountant = math.nan if cell.accountant_epsilon is None else cell.accountant_epsilon
        rows.append(
            {
                "claim": cell.claim,
                "cell": cell.name,
                "algorithm": cell.algorithm,
                "switches": json.dumps(dict(cell.switches), sort_keys=True),
                "score": kind,
                "iterations": cell.iterations,
                "runs": runs * cell.runs_scale,
                "claimed_epsilon": cell.claimed_epsilon,
                "delta": cell.delta,
                "accountant_epsilon": accountant,
                "eps_lb": bound.epsilon,
                "ceiling": bound.ceiling,
                "confidence": confidence,
                "threshold": bound.threshold,
                "tpr": bound.tpr,
                "fpr": bound.fpr,
                "refutes": bool(bound.epsilon > cell.claimed_epsilon),
                "above_accountant": bool(bound.epsilon > accountant),
                "gdp_mu": mu,
                "eps_gdp": eps_fit,
                "eps_gdp_low": eps_fit_low,
                "released": cell.released,
                "canary": cell.canary,
                "score_reads": samples.what,
            }
        )
    provenance = {
        "study": study,
        "runs": runs,
        "seed": seed,
        "timing": {"cpu_seconds": round(sum(seconds.values()), 1), "cells": seconds},
    }
    return pd.DataFrame(rows, columns=AUDIT_COLUMNS), provenance


def read_audit(path: str | Path) -> pd.DataFrame:
    """An audit table written by :func:`audit_study`, checked for its columns."""
    try:
        frame = pd.read_csv(path)
    except (OSError, pd.errors.ParserError) as err:
        raise ArtifactError(f"{path}: cannot read the audit table ({err})") from err
    note_read(path)
    if list(frame.columns) != AUDIT_COLUMNS:
        raise ArtifactError(f"{path}: not an audit table (columns differ); rebuild it with `snakemake audit`")
    return frame


def audit_markdown(study: str, table: pd.DataFrame) -> str:
    """The audit table as Markdown, with how to read it."""
    return (
        f"# Privacy audit: {study}\n\n"
        "Each cell ran `runs` times on each of two neighbouring datasets; the threshold was chosen on the\n"
        "first half of the runs and the rates counted on the second. `eps_lb` is the Clopper-Pearson lower\n"
        "bound on epsilon at `confidence` (Bonferroni over the claim's cells and scores); `ceiling` is the\n"
        "largest bound these runs could give. `refutes`: eps_lb above the claimed epsilon. `eps_gdp` is a\n"
        "Gaussian-DP fit to the white-box scores of a Gaussian release, or a Laplace fit to the "
        "black-box score\nof a norm-exponential one (an estimate, not a bound; `eps_gdp_low` in "
        "the CSV: its 95% lower bound).\n\n"
        + markdown_table(table[AUDIT_SHOWN].map(lambda v: f"{v:.3g}" if isinstance(v, float) else v))
        + "\nWhat each cell releases, its canary and what each score reads: the CSV beside this file.\n"
    )


def _number(value: float) -> str:
    return f"{value:.3g}"


def _accountant(value: float) -> str:
    return "n/a (pure DP)" if math.isnan(value) else _number(value)


def study_ledger(study: str) -> pd.DataFrame:
    """The study's premise ledger (:mod:`dpdl.audit.premises`), checked: a function of the code alone."""
    return check_ledger(premise_ledger(audit_module(study)))


def cell_reach(study: str) -> pd.DataFrame:
    """Each audited cell's canary loss (:mod:`dpdl.audit.reach`).

    It comes from the code and generated canary data alone.
    """
    return study_reach(audit_module(study))


def with_reach(own: pd.DataFrame, reach: pd.DataFrame | None) -> pd.DataFrame:
    """``own`` audit rows with ``reachable`` and ``detects_noise_divisor``.

    ``reachable`` is the smaller of each row's ceiling and its cell's canary loss;
    ``detects_noise_divisor`` is the smallest k >= 1 such that noise divided by k would let the row
    exceed its claimed epsilon (:func:`dpdl.audit.reach.detects_noise_divisor`; NaN where the loss
    has no exact form).
    """
    known = pd.DataFrame(columns=REACH_COLUMNS) if reach is None else reach
    # NaN: not derived
    by_cell = known.set_index("cell").reindex(index=own["cell"], columns=REACH_COLUMNS[1:])
    rows = own.copy()
    rows["canary_loss"] = by_cell["canary_loss"].astype(float).to_numpy()
    rows["loss_how"] = by_cell["loss_how"].fillna("not derived").to_numpy()
    ceilings = rows["ceiling"] if "ceiling" in rows else [math.inf] * len(rows)
    rows["reachable"] = [
        reachable_epsilon(c, lo) for c, lo in zip(ceilings, rows["canary_loss"], strict=True)
    ]
    divisors = by_cell["loss_divisor"].astype(float)
    rows["detects_noise_divisor"] = [
        detects_noise_divisor(c, claimed, k)
        for c, claimed, k in zip(ceilings, rows["claimed_epsilon"], divisors, strict=True)
    ]
    return rows


def _detects(divisor: float) -> str:
    """The smallest planted noise error a cell detects, in words (:func:`with_reach`)."""
    if math.isnan(divisor):
        return "the smallest noise error it detects: not derived (no exact canary loss)"
    if math.isinf(divisor):
        return "it detects no noise error (its runs cannot reach the claimed epsilon)"
    return f"it detects the noise divided by {_number(divisor)} or more"


def _strongest(rows: pd.DataFrame) -> pd.Series:
    return rows.loc[(rows["eps_lb"] - rows["claimed_epsilon"]).idxmax()]


def privacy_verdict(
    claim, own: pd.DataFrame, ledger: pd.DataFrame, reach: pd.DataFrame | None = None
) -> tuple[str, pd.Series, str]:
    """(verdict, deciding row, what it rests on) of one privacy claim.

    Judged from its audit rows and the premise ledger.

    An audit of someone's code (``claim.code``) refuted by any cell: "the code's guarantee refuted".
    Else "privacy claim refuted by experiment" only when a cell within every stated premise refutes
    it, decided by the strongest such cell; refuting cells all outside a premise: "refuted only
    outside the paper's premises", decided by the strongest of them. Otherwise not refuted, decided
    by the strongest cell within the premises (any cell where none is within them); "not testable by
    this audit" when none of those cells could reach its claimed epsilon at all (``reachable``,
    :func:`with_reach` from ``reach``: the smaller of the run-count ceiling and the canary's own
    privacy loss, :mod:`dpdl.audit.reach`).
    """
    own = with_reach(own, reach)
    missing = sorted(set(own["cell"]) - set(ledger["cell"]))
    if missing:
        raise ArtifactError(
            f"{claim.id}: audited cells {missing} have no premise ledger (dpdl.audit.premises)"
        )
    within = own[own["cell"].isin(cells_within(ledger))]
    refuting = own[own["refutes"]]
    if claim.code and len(refuting):
        deciding = _strongest(refuting)
        return (
            CODE_REFUTED,
            deciding,
            f"an implementation finding on {claim.code}, not a guarantee the paper states",
        )
    if len(within[within["refutes"]]):
        return REFUTED, _strongest(within[within["refutes"]]), "within every premise the paper states"
    if len(refuting):
        deciding = _strongest(refuting)
        left = "; ".join(left_premises(ledger, deciding["cell"]))
        strongest = (
            f"; within the premises the strongest cell, {_strongest(within)['cell']}, gives eps_LB "
            f"{_number(_strongest(within)['eps_lb'])}"
            if len(within)
            else "; no audited cell stays within them"
        )
        return REFUTED_OUTSIDE, deciding, f"its canary leaves {left}{strongest}"
    pool = within if len(within) else own
    deciding = _strongest(pool)
    rests = (
        "within every premise the paper states"
        if len(within)
        else "outside " + "; ".join(left_premises(ledger, deciding["cell"]))
    )
    if (pool["reachable"] < pool["claimed_epsilon"]).all():
        reach_best = pool.loc[(pool["reachable"] - pool["claimed_epsilon"]).idxmax()]
        return (
            NOT_TESTABLE,
            deciding,
            f"{rests}; at the declared noise no such cell can reach its claimed epsilon (less "
            "noise than declared can still be caught: see the noise error it detects): the most, "
            f"{reach_best['cell']}, reaches {_number(reach_best['reachable'])} against "
            f"{_number(reach_best['claimed_epsilon'])} ({reach_best['loss_how']}; run-count "
            f"ceiling {_number(reach_best['ceiling'])})",
        )
    return NOT_REFUTED, deciding, rests


def privacy_claim_rows(
    study: str,
    table: pd.DataFrame | None,
    detail: str = NOT_BUILT,
    ledger: pd.DataFrame | None = None,
    reach: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The scorecard rows of ``study``'s privacy claims, judged from its audit table and premise ledger.

    Without those tables the claims are not built. ``ledger`` defaults to the study's, computed from
    the code (:func:`study_ledger`).
    """
    rows = []
    if table is not None and ledger is None:
        ledger = study_ledger(study)
    if table is not None and reach is None:
        reach = cell_reach(study)
    for claim in audit_module(study).PRIVACY_CLAIMS:
        own = None if table is None else table[table["claim"] == claim.id]
        row = dict.fromkeys(SCORECARD_COLUMNS, "")
        row.update(
            id=claim.id,
            study=study,
            kind=PRIVACY_CLAIM,
            form="audit",
            where=claim.where,
            statement=claim.statement,
            tolerance="refuted when eps_LB > the claimed epsilon in a cell within every premise the paper states "
            "(an audit cannot prove a claim)",
            justification="DP bounds every test's TPR by e^eps FPR + delta (Kairouz et al. 2015), for the "
            "neighbouring datasets its premises allow",
            verdict=NOT_AT_SCALE,
            post_hoc=flags(claim.id),
            detail=detail,
        )
        if own is not None and len(own):
            verdict, deciding, rests = privacy_verdict(claim, own, ledger, reach)
            refuting = own[own["refutes"]]
            project = "; ".join(project_premises(ledger, deciding["cell"]))
            row.update(
                paper_value=", ".join(sorted({f"eps {_number(e)}" for e in own["claimed_epsilon"]})),
                our_value=f"eps_LB {_number(deciding['eps_lb'])} (ceiling {_number(deciding['ceiling'])}, "
                f"reachable at the declared noise {_number(deciding['reachable'])})",
                effect=_number(deciding["eps_lb"]),
                ci_low=_number(deciding["eps_lb"]),
                test=f"Clopper-Pearson eps_LB at {deciding['confidence']:.4g} (Bonferroni over {len(own)})",
                n_seeds=int(own["runs"].max()),
                verdict=verdict,
                cells_for=len(refuting),
                cells_against=len(own) - len(refuting),
                deciding_cell=f"{deciding['cell']} ({deciding['score']})",
                detail=f"claimed eps {_number(deciding['claimed_epsilon'])} at delta {deciding['delta']:g}, "
                f"accountant {_accountant(deciding['accountant_epsilon'])}, "
                f"TPR {deciding['tpr']:.3f}, FPR {deciding['fpr']:.3f}, {int(deciding['runs'])} "
                f"runs per side; {_detects(deciding['detects_noise_divisor'])}; premises: {rests}"
                + (f"; the project's own choices: {project}" if project else ""),
                switches=deciding["switches"],
                scale=json.dumps({"audit_runs": int(own["runs"].max())}),
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)


ACCOUNTANT_REFUTED = "not an upper bound: the audit refutes the per-release epsilon"
ACCOUNTANT_STANDS = "not refuted by the audit"


def privacy_with_audit(privacy: pd.DataFrame, audits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The privacy table with each row's eps_LB and ``accountant_bound``.

    A row's eps_LB is the largest over the audited cells of its study and algorithm whose claimed
    epsilon is the row's per-iteration epsilon (or its total where none) at the row's delta (any
    delta for a pure-DP cell). ``accountant_bound`` says whether the row's accountant values can be
    read as upper bounds (issue 58 item 7: not when that eps_LB is above the claimed epsilon). Cells
    of an audit of someone's code (a claim with ``code``) audit a mechanism the build does not run
    by default, so they are left out.
    """
    table = privacy.copy()
    lower, cells, bounds = [], [], []
    for _, row in table.iterrows():
        audit = audits.get(row["study"])
        claimed = row["eps_per_iteration"] if pd.notna(row["eps_per_iteration"]) else row["epsilon"]
        match = (
            None
            if audit is None
            else audit[
                (audit["algorithm"] == row["algorithm"])
                & ~audit["claim"].isin(_code_claims(row["study"]))
                & np.isclose(audit["claimed_epsilon"], claimed)
                & ((audit["delta"] == 0) | np.isclose(audit["delta"], row["delta"], rtol=1e-6, atol=0))
            ]
        )
        found = match is not None and len(match) > 0
        lower.append(match["eps_lb"].max() if found else math.nan)
        cells.append(";".join(sorted(set(match["cell"]))) if found else "")
        refuted = found and bool((match["eps_lb"] > match["claimed_epsilon"]).any())
        bounds.append((ACCOUNTANT_REFUTED if refuted else ACCOUNTANT_STANDS) if found else "")
    table["audit_eps_lb"] = lower
    table["audit_cells"] = cells
    table["accountant_bound"] = bounds
    return table


def _code_claims(study: str) -> list[str]:
    """The ids of ``study``'s privacy claims that audit someone's code rather than the paper's mechanism."""
    return [claim.id for claim in audit_module(study).PRIVACY_CLAIMS if claim.code]


def reading_privacy_rows(
    study: str,
    audit: pd.DataFrame,
    mechanisms: Mapping[str, tuple[Mapping[str, object], bool]],
    ledger: pd.DataFrame | None = None,
    reach: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each privacy claim of ``study`` under each reading, as rows of the readings table.

    Each is judged on the cells that ran that reading's mechanism (issue 58 item 6); the columns are
    ``dpdl.readings.READINGS_COLUMNS``.

    ``mechanisms`` maps a reading (the default first) to the switch values its build releases with,
    as the cells record them (:func:`dpdl.readings.reading_mechanisms`), and whether it is post hoc.
    A claim is judged on its audited cells, and those of the audits of someone's code for the same
    algorithm (the same guarantee under that code's mechanism), whose switches agree with those
    values (a cell that does not record a switch agrees with every value): under the default, the
    build's own mechanism, which may be narrower than the scorecard's verdict (that one is the
    paper's guarantee over every audited cell). An audit of someone's code keeps its own cells under
    every reading. No such cell: not run, naming the values. ``unchanged`` is "yes" where a reading
    selects the same cells as the default.
    """
    module = audit_module(study)
    ledger = study_ledger(study) if ledger is None else ledger
    reach = cell_reach(study) if reach is None else reach
    switches = audit["switches"].map(json.loads)
    code = audit["claim"].isin([claim.id for claim in module.PRIVACY_CLAIMS if claim.code])
    rows, default_cells, judged = [], {}, {}
    for name, (values, post_hoc) in mechanisms.items():
        for claim in module.PRIVACY_CLAIMS:
            own = audit[audit["claim"] == claim.id]
            # an audit of someone's code tests the same guarantee under that code's mechanism: a reading that
            # runs the mechanism judges the paper's claim of the same algorithm on those cells too
            same_algorithm_code = code & audit["algorithm"].isin(set(own["algorithm"]))
            pool = own if claim.code else audit[(audit["claim"] == claim.id) | same_algorithm_code]
            runs_it = [
                all(str(switches[i].get(k, v)) == str(v) for k, v in values.items()) for i in pool.index
            ]
            chosen = (own if claim.code else pool[runs_it]).assign(claim=claim.id)
            cells = frozenset(chosen["cell"])
            default_cells.setdefault(claim.id, cells)
            wanted = ", ".join(f"{k}: {v}" for k, v in values.items())
            # judged once per set of audit rows: most readings run the default's mechanism (no rows: the detail
            # names the reading's switches)
            key = (claim.id, tuple(chosen.index) or wanted)
            if key not in judged:
                card = privacy_claim_rows(study, chosen, f"no audited cell ran with {wanted}", ledger, reach)
                judged[key] = card[card["id"] == claim.id].iloc[0]
            row = judged[key]
            rows.append(
                {
                    **{
                        column: row[column]
                        for column in ("id", "study", "kind", "verdict", "our_value", "effect")
                    },
                    "reading": name,
                    "post_hoc": "yes" if post_hoc else "no",
                    "engine": "current",
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                    "_cells": cells,
                }
            )
    table = pd.DataFrame(rows)
    is_default = table["reading"] == next(iter(mechanisms))
    table["default_verdict"] = table["id"].map(table[is_default].set_index("id")["verdict"])
    same = [cells == default_cells[claim] for claim, cells in zip(table["id"], table["_cells"], strict=True)]
    table["unchanged"] = ["" if d else ("yes" if s else "no") for d, s in zip(is_default, same, strict=True)]
    return table.drop(columns="_cells")


def study_data_premises(
    study: str, prepared: Mapping[str, Mapping], skipped: Mapping[str, str]
) -> pd.DataFrame:
    """``study``'s premises measured on its prepared data.

    By :func:`dpdl.audit.data_premises.data_premise_table`: ``prepared`` maps a dataset to its
    arrays, ``skipped`` a dataset that cannot be built here to why.
    """
    return data_premise_table(audit_module(study), study, prepared, skipped)


def premise_claim_ids(study: str) -> list[str]:
    """The registered premise claims of ``study``: one per premise it measures on its data."""
    return [
        f"{study}.premise.{p}" for p in dict.fromkeys(d.premise for d in audit_module(study).DATA_PREMISES)
    ]


def _holds(row) -> bool:
    """Whether a measured row of a data premise table holds, recomputed from its largest value and bound.

    A ``holds`` column that says otherwise is an error (the table does not follow from its own
    numbers).
    """
    holds = bool(float(row.largest) <= float(row.bound) * (1 + TOLERANCE))
    above = int(row.above)
    if str(row.holds) != str(holds) or (above == 0) != holds or above > int(row.records):
        raise ArtifactError(
            f"{row.study}/{row.dataset} {row.premise}: holds {row.holds}, {above} of {row.records} "
            f"records above, but largest {row.largest} against bound {row.bound} gives holds {holds}"
        )
    return holds


def _measured_text(study: str, row) -> str:
    """One dataset's measurement as the scorecard shows it.

    That is the largest value and the share above the bound.
    """
    share = f"{int(row.above):,} of {int(row.records):,} records ({float(row.share_above):.1%})"
    if float(row.bound) == 0:  # a count of what lies outside a domain
        return f"{study}/{row.dataset}: {share} outside"
    return f"{study}/{row.dataset}: largest {float(row.largest):.4g}, {share} above {float(row.bound):g}"


def premise_claim_rows(
    study: str, table: pd.DataFrame | None, detail: str = PREMISES_NOT_BUILT
) -> pd.DataFrame:
    """The scorecard rows of ``study``'s premise claims (kind ``premise``), or not measured.

    They are judged from its data premise table (``results/audit/<study>_data_premises.csv``,
    :mod:`dpdl.audit.data_premises`) alone.

    "premise holds on the paper's data" when every record of every dataset measured keeps the bound;
    "premise fails on the paper's data" when some record breaks it, the detail then saying that the
    privacy guarantees resting on it (the table's ``claims``) do not cover the runs built on that
    data; "data unavailable" when no dataset of it could be built here."""
    module = audit_module(study)
    premises = {premise.id: premise for premise in module.PREMISES}
    rows = []
    for claim_id in premise_claim_ids(study):
        premise = premises[claim_id.rsplit(".", 1)[1]]
        data = [d for d in module.DATA_PREMISES if d.premise == premise.id]
        datasets = list(dict.fromkeys(dataset for d in data for dataset in d.datasets))
        row = dict.fromkeys(SCORECARD_COLUMNS, "")
        row.update(
            id=claim_id,
            study=study,
            kind=PREMISE_CLAIM,
            form="exact",
            where=premise.where,
            statement=f"{premise.assumption}, on every record of the data the paper uses "
            f"({', '.join(f'{study}/{d}' for d in datasets)}): {premise.paper_says}",
            paper_value=" / ".join(
                "no record outside the domain" if d.bound == 0 else f"every record <= {d.bound:g}"
                for d in data
            ),
            tolerance=f"holds when the largest value is at most the bound (relative tolerance {TOLERANCE:g})",
            justification="an exact computation on every record of the prepared data (no sampling, no seeds); a "
            "premise the data break leaves the guarantees that rest on it without their stated assumption",
            test="; ".join(d.measure for d in data),
            verdict=NOT_AT_SCALE,
            post_hoc=flags(claim_id),
            detail=detail,
        )
        own = None if table is None else table[table["premise"] == premise.id]
        if own is not None and len(own):
            done, skipped = own[own["records"] > 0], own[own["records"] == 0]
            claims = ", ".join(dict.fromkeys(c for cs in own["claims"] for c in str(cs).split(";") if c))
            not_measured = "".join(
                f"; not measured on {study}/{r.dataset}: {r.note}" for r in skipped.itertuples()
            )
            if not len(done):
                row.update(verdict=UNAVAILABLE, detail=f"premise of {claims}" + not_measured)
                rows.append(row)
                continue
            failing = [r for r in done.itertuples() if not _holds(r)]
            row.update(
                our_value="; ".join(_measured_text(study, r) for r in done.itertuples()),
                effect=_number(float(done["largest"].max())),
                n_seeds="",
                verdict=PREMISE_BROKEN if failing else PREMISE_HOLDS,
                deciding_cell="; ".join(f"{study}/{r.dataset}" for r in failing),
                detail=f"premise of {claims}"
                + (
                    "; it fails, so their privacy guarantee does not cover "
                    + "; ".join(f"{r.runs} on {study}/{r.dataset}" for r in failing)
                    if failing
                    else ""
                )
                + not_measured,
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)
