"""``CLAIMS``: Ryu & Kim's checkable statements (Section 4, Remark 3, A.9-A.11, abstract, conclusion).

Every claim is judged by :mod:`dpdl.verdicts` from per-seed values, never from the bands the
figures draw: the per-seed tables ``results/dp_iadmm/aggregates/<name>_seeds.csv`` (one value per
run, logged iteration and metric). Testing errors are in percent. Runs without noise are
deterministic, so a claim on them is an exact comparison. Tolerances and margins are fixed from
the paper's text and ``notes/iadmm.md`` (sections cited as "note 8.8" for section 8 item 8) and
justified once below; none was chosen after seeing a result unless its justification says post hoc.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from dpdl.claims import (
    IMPLEMENTATION_CHECK,
    MECHANISM_PROPERTY,
    PAPER_NUMBER,
    PAPER_STATEMENT,
    Claim,
    Premise,
    majority_class_error,
)
from dpdl.studies.dp_iadmm.extract import (
    AUTHORS_NOISE,
    AUTHORS_NOISE_TOLERANCE,
    CURVE,
    CV_EARLY,
    CV_ZERO,
    EXACT,
    FEMNIST,
    GAP_FRACTION,
    LONG,
    MAIN,
    TOLERANCE_PP,
    Extractor,
    a_cells,
    authors_noise,
    below,
    cv_checkpoints,
    cv_to_zero,
    epsilon_matters,
    equal_in_epsilon,
    error_at,
    faster,
    gap_at,
    near_reference,
    noise_above_outp,
    noise_rises,
    noiseless,
    nonprivate,
    objt_insensitive,
    outp_best_at_1,
    outp_noise_decays,
    pair_cells,
    penalty,
    rho_equal,
    same_privacy,
    spends_no_more_than_outp,
    trend_in_epsilon,
)
from dpdl.studies.dp_iadmm.grid import BASE_ALGORITHMS, STUDY, a_variant
from dpdl.studies.dp_iadmm.tune import PAPER_NONPRIVATE_PCT
from dpdl.verdicts import Equivalence, Exact, Ordering, Outcome, StatedNumber, Trend

TOLERANCE = (
    "note 8.8: exact percentages are secondary targets and '+-2 pp on MNIST, +-5 pp on FEMNIST is "
    "a reasonable tolerance given the 20/80 bands' (the absolute numbers depend on the unresolved "
    "switches of note 7.1 and 7.5b); the paper prints 0.01 pp, far below that"
)
GAP = (
    "a gap is a difference of two errors, so its tolerance is relative and symmetric: "
    f"{GAP_FRACTION:.0%}, the "
    "note's per-error tolerance in units of the paper's gaps (2/8.99 = 22% on MNIST, 5/18.65 = 27% "
    "on FEMNIST) as one fraction, so the gap, the note's primary target (8.8), gets no more room "
    "than one of its errors (the old rule summed two). Per seed: OutP's error minus ObjT's of the "
    "same seed index (independent runs). Fixed before any gap was judged under it; the spot "
    "check's gaps (docs/studies/dp_iadmm.md) were known"
)
DETERMINISTIC = "the run has no noise, so it is deterministic: one run is the exact value, compared exactly"
NONPRIVATE_REFERENCE = (
    "The paper does not name its 'nonprivate algorithm'; the switch nonprivate_algorithm defaults "
    "to ObjP without noise, decided from the text alone (Section 4: 'OutP and ObjP are equivalent "
    "in a nonprivate setting'; note 7.6), not post hoc: the spot check's ObjP without noise missed "
    "7.42% (11.01%). ObjT without noise, the default after the spot check saw it match (7.78%, "
    "docs/studies/dp_iadmm.md), is the post hoc reading nonprivate_objt"
)
CLOSE = "'close to' read as within the dataset's tolerance of one testing error (note 8.8), as a TOST margin"
ORDER = "one-sided t over seeds per cell; every cell, each at alpha (the paper states it without exception)"
FASTER = (
    "'converges faster' judged on the curves: per seed, the first logged t at which the testing "
    "error reaches a level both algorithms reach, the worse of their two mean errors at T plus the "
    "dataset's tolerance (note 8.8), so a final level inside the tolerance is not counted as "
    "speed; a seed that never reaches it counts one logging step past T. Fixed before any curve was judged"
)


# ----------------------------------------------------------------------------------------- claims

GAP_RUNS = (
    "the gap is OutP's error minus ObjT's, seed by seed: it re-reads the runs of the stated OutP "
    "number (and ObjT's) through a difference, whose values are not theirs, so the derivation from "
    "bit-identical cells cannot see it"
)
REFERENCE_RUN = (
    "it reads the one deterministic non-private run of the non-private claim (a constant, no "
    "per-seed cell, so the derivation cannot see it)"
)
EQUAL_PRIVACY = (
    "ObjT and ObjP spend no more privacy over the run than OutP at the same epsilon-bar (the "
    "abstract's 'the same level of data privacy'; issue 58 item 7, decided after the verdicts were "
    "seen: post hoc register)"
)


def _equal_privacy(aggregate: str) -> Premise:
    """The premise of every 'ours beat OutP at the same epsilon-bar' claim.

    It is checked on the claim's own table.
    """
    return Premise(EQUAL_PRIVACY, f"{aggregate}_seeds", spends_no_more_than_outp)


_EMPTY = {StatedNumber: np.array([]), Exact: Outcome(False, "", "a cell of this claim is not in this grid")}


def _claim(cid: str, *, aggregate: str, extract: Callable, **fields) -> Claim:
    """A claim of this study, judged from the per-seed table of ``aggregate``.

    A missing cell gives the empty input.
    """
    empty = _EMPTY.get(type(fields["form"]), [])
    return Claim(
        id=f"{STUDY}.{cid}",
        study=STUDY,
        aggregate=f"{aggregate}_seeds",
        extract=Extractor(extract, empty),
        **fields,
    )


def _number(
    cid: str,
    *,
    where: str,
    aggregate: str,
    dataset: str,
    variant: str,
    epsilon: float,
    paper: float,
    needs: Mapping[str, float],
) -> Claim:
    """A testing error the paper prints (ObjT's or OutP's at one epsilon-bar).

    It is judged within the dataset's tolerance.
    """
    name = {"objt": "ObjT", "outp": "OutP"}[variant]
    return _claim(
        cid,
        where=where,
        statement=f"{dataset.upper()}: {name}'s testing error at epsilon-bar {epsilon:g} is {paper:.2f}%",
        kind=PAPER_NUMBER,
        form=StatedNumber(paper, TOLERANCE_PP[dataset]),
        justification=f"{TOLERANCE}. Our 95% interval over seeds must lie inside it",
        aggregate=aggregate,
        extract=error_at(dataset, variant, epsilon),
        needs=needs,
        reference=majority_class_error(f"dataset_{dataset}", percent=True),
    )


def _gap_claim(
    cid: str,
    *,
    where: str,
    aggregate: str,
    dataset: str,
    epsilon: float,
    paper: float,
    needs: Mapping[str, float],
) -> Claim:
    """A gap the paper prints: by how much ObjT's testing error is below OutP's at one epsilon-bar."""
    return _claim(
        cid,
        where=where,
        statement=f"{dataset.upper()}: ObjT improves on OutP by {paper:.2f} pp at epsilon-bar {epsilon:g}",
        kind=PAPER_NUMBER,
        form=StatedNumber(paper, GAP_FRACTION, relative=True),
        justification=GAP,
        aggregate=aggregate,
        extract=gap_at(dataset, epsilon),
        needs=needs,
        # the gap re-reads the runs of the stated OutP (and ObjT) numbers: listed beside them, not
        # counted again
        same_runs_as=f"{STUDY}.{cid.replace('gap', 'outp')}",
        same_runs_why=GAP_RUNS,
        premise=_equal_privacy(aggregate),
    )


def _reference_claim(dataset: str, *, where: str) -> Claim:
    """The nonprivate algorithm's testing error the paper prints: one deterministic run, compared exactly."""
    paper = PAPER_NONPRIVATE_PCT[dataset]
    return _claim(
        f"{dataset}_nonprivate",
        where=where,
        statement=f"{dataset.upper()}: a nonprivate algorithm's testing error is {paper}%",
        kind=PAPER_NUMBER,
        form=Exact(),
        justification=f"{DETERMINISTIC}; tolerance: {TOLERANCE}. {NONPRIVATE_REFERENCE}",
        aggregate=FIG2[dataset],
        extract=nonprivate(dataset),
        needs=EXACT[dataset],
        paper_value=paper,
        reference=majority_class_error(f"dataset_{dataset}", percent=True),
    )


S4, R3, FIG2 = "Section 4", "Remark 3", {"mnist": "fig2a", "femnist": "fig2b"}
FIG2A, FIG2B = f"{S4}, MNIST results (Fig. 2a)", f"{S4}, FEMNIST results (Fig. 2b)"
CLAIMS: list[Claim] = [
    # ---- Section 4 and Remark 3: the printed numbers
    _reference_claim("mnist", where=FIG2A),
    _number(
        "mnist_objt_eps5",
        where=FIG2A,
        aggregate="fig2a",
        dataset="mnist",
        variant="objt",
        epsilon=5.0,
        paper=7.84,
        needs=MAIN,
    ),
    _number(
        "mnist_objt_eps0.05",
        where=FIG2A,
        aggregate="fig2a",
        dataset="mnist",
        variant="objt",
        epsilon=0.05,
        paper=12.80,
        needs=MAIN,
    ),
    _number(
        "mnist_outp_eps0.05",
        where=FIG2A,
        aggregate="fig2a",
        dataset="mnist",
        variant="outp",
        epsilon=0.05,
        paper=21.79,
        needs=MAIN,
    ),
    _gap_claim(
        "mnist_gap_eps0.05",
        where=FIG2A,
        aggregate="fig2a",
        dataset="mnist",
        epsilon=0.05,
        paper=8.99,
        needs=MAIN,
    ),
    _number(
        "mnist_long_objt_eps0.01",
        where=f"{R3} ('OutT' is ObjT, note 7.16)",
        aggregate="remark3",
        dataset="mnist",
        variant="objt",
        epsilon=0.01,
        paper=15.64,
        needs=LONG,
    ),
    _number(
        "mnist_long_outp_eps0.01",
        where=R3,
        aggregate="remark3",
        dataset="mnist",
        variant="outp",
        epsilon=0.01,
        paper=37.98,
        needs=LONG,
    ),
    _gap_claim(
        "mnist_long_gap_eps0.01",
        where=f"{R3} and abstract ('by at most 22%')",
        aggregate="remark3",
        dataset="mnist",
        epsilon=0.01,
        paper=22.34,
        needs=LONG,
    ),
    _reference_claim("femnist", where=FIG2B),
    _number(
        "femnist_objt_eps5",
        where=FIG2B,
        aggregate="fig2b",
        dataset="femnist",
        variant="objt",
        epsilon=5.0,
        paper=36.29,
        needs=FEMNIST,
    ),
    _number(
        "femnist_objt_eps0.05",
        where=FIG2B,
        aggregate="fig2b",
        dataset="femnist",
        variant="objt",
        epsilon=0.05,
        paper=72.40,
        needs=FEMNIST,
    ),
    _number(
        "femnist_outp_eps0.05",
        where=FIG2B,
        aggregate="fig2b",
        dataset="femnist",
        variant="outp",
        epsilon=0.05,
        paper=91.05,
        needs=FEMNIST,
    ),
    _gap_claim(
        "femnist_gap_eps0.05",
        where=FIG2B,
        aggregate="fig2b",
        dataset="femnist",
        epsilon=0.05,
        paper=18.65,
        needs=FEMNIST,
    ),
    # ---- Section 4: the statements
    *(
        _claim(
            f"nonprivate_equivalence_{d}",
            where=f"{S4}, Algorithms",
            statement=f"{d.upper()}: 'OutP and ObjP are equivalent in a nonprivate setting': "
            f"without noise their testing errors agree within {TOLERANCE_PP[d]:g} pp at 10%, 50% "
            "and 100% of T",
            kind=PAPER_STATEMENT,
            form=Exact(),
            justification=f"{DETERMINISTIC} (runs nonprivate_objp, nonprivate_outp); 'equivalent' "
            "means the same algorithm, so the margin is the tolerance at which we tell one testing "
            f"error from another ({TOLERANCE_PP[d]:g} pp, note 8.8), along the whole run (note 7.6 "
            "expects it to fail: different eta, gradient scaling and update order)",
            aggregate="noiseless",
            extract=noiseless(d),
            needs=EXACT[d],
        )
        for d in ("mnist", "femnist")
    ),
    _claim(
        "mnist_objt_eps5_near_nonprivate",
        where=FIG2A,
        statement="MNIST: ObjT at epsilon-bar 5 (7.84%) is close to the nonprivate algorithm (7.42%)",
        kind=PAPER_STATEMENT,
        form=Equivalence(TOLERANCE_PP["mnist"]),
        justification=f"{CLOSE}; the non-private run is deterministic and enters as a "
        f"constant. {NONPRIVATE_REFERENCE}",
        aggregate="fig2a",
        extract=near_reference("mnist", 5.0),
        needs=MAIN,
        same_runs_as=f"{STUDY}.mnist_nonprivate",
        same_runs_why=REFERENCE_RUN,
    ),
    _claim(
        "mnist_objt_eps1_accurate",
        where=f"{S4}, Fig. 1 text",
        statement="MNIST: 'ObjT provides an accurate solution even when epsilon-bar = 1' (the "
        "reason Fig. 1 leaves out 3 and 5): within the tolerance of the nonprivate error",
        kind=PAPER_STATEMENT,
        form=Equivalence(TOLERANCE_PP["mnist"]),
        justification=f"'accurate' read like 'close to' above: {CLOSE}. {NONPRIVATE_REFERENCE}",
        aggregate="fig2a",
        extract=near_reference("mnist", 1.0),
        needs=MAIN,
    ),
    _claim(
        "femnist_objt_eps5_near_nonprivate",
        where=FIG2B,
        statement="FEMNIST: ObjT at epsilon-bar 5 (36.29%) is close to the nonprivate algorithm (35.25%)",
        kind=PAPER_STATEMENT,
        form=Equivalence(TOLERANCE_PP["femnist"]),
        justification=f"{CLOSE}; the non-private run enters as a constant. {NONPRIVATE_REFERENCE}",
        aggregate="fig2b",
        extract=near_reference("femnist", 5.0),
        needs=FEMNIST,
        same_runs_as=f"{STUDY}.femnist_nonprivate",
        same_runs_why=REFERENCE_RUN,
    ),
    _claim(
        "fig1_noise_rises",
        where=f"{S4}, Fig. 1 top",
        statement="MNIST: the average noise magnitudes of all algorithms increase as epsilon-bar decreases",
        kind=MECHANISM_PROPERTY,
        form=Ordering(),
        justification="per seed the time average of Fig. 1's noise magnitude; each step down the "
        f"epsilon-bar grid is a cell ({ORDER}); three grid points are too few for Kendall's exact "
        "p",
        aggregate="fig1",
        extract=pair_cells(noise_rises),
        needs=MAIN,
    ),
    _claim(
        "fig1_noise_above_outp",
        where=f"{S4}, Fig. 1 top; conclusion ('our algorithm requires larger noises')",
        statement="MNIST: for fixed epsilon-bar, the noise magnitudes of ObjT and "
        "ObjP are greater than OutP's",
        kind=MECHANISM_PROPERTY,
        form=Ordering(),
        justification=f"time-averaged noise magnitude per seed; {ORDER}. A mechanism property, not "
        "counted as a reproduction: each noise is fixed by its calibration formula ((20) for "
        "ObjT/ObjP, OutP's sigma of [10]), so any calibrated implementation shows it (issue 59 "
        "item 2, post hoc)",
        aggregate="fig1",
        extract=pair_cells(noise_above_outp),
        needs=MAIN,
    ),
    _claim(
        "fig1_error_below_outp",
        where=f"{S4}, Fig. 1 bottom",
        statement="MNIST: the testing errors of ObjT and ObjP are less than OutP's",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"testing error at t = T per seed; {ORDER}",
        aggregate="fig1",
        extract=below("mnist", [("objp", "outp"), ("objt", "outp")]),
        needs=MAIN,
        premise=_equal_privacy("fig1"),
    ),
    _claim(
        "fig1_objt_least",
        where=f"{S4}, FEMNIST results ('similar to the result from Figure 1')",
        statement="MNIST: ObjT produces the least testing error",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"testing error at t = T; {ORDER}",
        aggregate="fig1",
        extract=below("mnist", [("objt", "objp"), ("objt", "outp")]),
        needs=MAIN,
        premise=_equal_privacy("fig1"),
    ),
    _claim(
        "fig1_converges_faster",
        where=f"{S4}, Fig. 1; abstract ('converges faster than the existing algorithm')",
        statement="MNIST: the solutions of ObjT and ObjP converge faster than OutP's",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"{FASTER}; {ORDER}",
        aggregate="fig1",
        extract=faster("mnist", [("objt", "outp"), ("objp", "outp")]),
        needs=MAIN,
        premise=_equal_privacy("fig1"),
    ),
    _claim(
        "fig2a_monotone",
        where=FIG2A,
        statement="MNIST: as epsilon-bar decreases the testing errors of all algorithms increase",
        kind=MECHANISM_PROPERTY,
        form=Trend("decreasing"),
        justification="error at T against the epsilon-bar grid per algorithm; the change needs no "
        "minimum (the engine's default: any increase within seeds)",
        aggregate="fig2a",
        extract=trend_in_epsilon("mnist", BASE_ALGORITHMS),
        needs=MAIN,
    ),
    _claim(
        "fig2b_monotone",
        where=FIG2B,
        statement="FEMNIST: as epsilon-bar decreases the testing errors of ObjT and OutP increase",
        kind=MECHANISM_PROPERTY,
        form=Trend("decreasing"),
        justification="as fig2a_monotone; ObjP is left out because the same section says its effect is not "
        "significant (fig2b_objp_flat)",
        aggregate="fig2b",
        extract=trend_in_epsilon("femnist", ("objt", "outp")),
        needs=FEMNIST,
    ),
    _claim(
        "fig2b_objp_flat",
        where=f"{S4}, FEMNIST results (Fig. 3 text, Fig. 2b blue line)",
        statement="FEMNIST: the effect of epsilon-bar on the testing error of ObjP is not significant",
        kind=PAPER_STATEMENT,
        form=Equivalence(TOLERANCE_PP["femnist"]),
        justification="each epsilon-bar against the largest; 'not significant' read as within the "
        "FEMNIST tolerance of one testing error (note 8.8), a TOST margin",
        aggregate="fig2b",
        extract=pair_cells(equal_in_epsilon),
        needs=FEMNIST,
    ),
    _claim(
        "remark3_ours_below_outp",
        where=R3,
        statement="MNIST, T = 1e6: 'the results demonstrate the outperformance of our algorithms': "
        "ObjT and ObjP below OutP",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="remark3",
        extract=below("mnist", [("objt", "outp"), ("objp", "outp")]),
        needs=LONG,
        premise=_equal_privacy("remark3"),
    ),
    _claim(
        "fig3_objt_least",
        where=f"{S4}, Fig. 3",
        statement="FEMNIST: ObjT produces the least testing error",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="fig3",
        extract=below("femnist", [("objt", "objp"), ("objt", "outp")]),
        needs=FEMNIST,
        premise=_equal_privacy("fig3"),
    ),
    _claim(
        "fig3_objt_fastest",
        where=f"{S4}, Fig. 3",
        statement="FEMNIST: ObjT converges fastest",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"{FASTER}; {ORDER}",
        aggregate="fig3",
        extract=faster("femnist", [("objt", "objp"), ("objt", "outp")]),
        needs=FEMNIST,
        premise=_equal_privacy("fig3"),
    ),
    _claim(
        "fig3_objp_vs_outp_eps1",
        where=f"{S4}, Fig. 3",
        statement="FEMNIST, epsilon-bar = 1: the testing error of ObjP is greater than that of OutP",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="fig3",
        extract=below("femnist", [("outp", "objp")], lambda table: [1.0]),
        needs=FEMNIST,
    ),
    # ---- Appendix A.9-A.11
    *(
        _claim(
            f"fig4_{d}_rho_insensitive",
            where="A.9, Fig. 4",
            statement=f"{d.upper()}: the performance of OutP is not greatly affected by the choice of rho",
            kind=PAPER_STATEMENT,
            form=Equivalence(TOLERANCE_PP[d]),
            justification="each rho setting against rho-hat at T; 'not greatly affected' read as within the "
            "dataset's tolerance of one testing error (note 8.8), a TOST margin",
            aggregate="fig4",
            extract=rho_equal(d),
            needs=FEMNIST if d == "femnist" else MAIN,
        )
        for d in ("mnist", "femnist")
    ),
    _claim(
        "fig4_outp_eps_sensitive",
        where="A.9, Fig. 4",
        statement="OutP's performance is affected by epsilon-bar: its error is lower at the "
        "largest epsilon-bar than at the smallest, for every rho",
        kind=MECHANISM_PROPERTY,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="fig4",
        extract=pair_cells(epsilon_matters),
        needs=FEMNIST,
    ),
    _claim(
        "fig5_cv_to_zero",
        where="A.10, Fig. 5; Remark 3 ('feasible')",
        statement="MNIST: the consensus violation of all algorithms goes down to zero",
        kind=MECHANISM_PROPERTY,
        form=Ordering(),
        justification=f"per seed the final CV over its peak must be below {CV_ZERO:.0%}: 'zero' on "
        "Fig. 5's log axis read as two decades below the peak (one-sided, fixed before any CV was "
        f"seen); {ORDER}",
        aggregate="fig5",
        extract=pair_cells(cv_to_zero),
        needs=LONG,
    ),
    _claim(
        "fig5_outp_cv_fastest",
        where="A.10, Fig. 5",
        statement="MNIST: the CV of OutP drops quickly compared with ours",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"OutP's CV below ObjP's and ObjT's at 1% and 10% of T ('quickly'); {ORDER}",
        aggregate="fig5",
        extract=cv_checkpoints([("outp", "objp"), ("outp", "objt")], CV_EARLY),
        needs=LONG,
    ),
    _claim(
        "fig5_outp_plus_cv_larger",
        where="A.10, Fig. 5 top",
        statement="MNIST: the CV of OutP+ is larger than that of ObjP and ObjT",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"CV at 10%, 50% and 100% of T; {ORDER}",
        aggregate="fig5",
        extract=cv_checkpoints([("objp", "outp_plus"), ("objt", "outp_plus")], CURVE),
        needs=LONG,
    ),
    _claim(
        "fig5_ours_beat_outp_plus",
        where="A.10, Fig. 5 bottom",
        statement="MNIST: our algorithms still outperform OutP+",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="fig5",
        extract=below("mnist", [("objp", "outp_plus"), ("objt", "outp_plus")]),
        needs=LONG,
        premise=_equal_privacy("fig5"),
    ),
    _claim(
        "fig6_outp_best_at_1",
        where="A.11, Fig. 6",
        statement="FEMNIST: OutP with a = 1 (as in [10]) produces the best performance",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"OutP at a = 1 below OutP at each other a, error at T; {ORDER}; not "
        "identifiable if OutP's error does not depend on a",
        aggregate="fig6",
        extract=outp_best_at_1,
        needs=FEMNIST,
    ),
    _claim(
        "fig6_objp_improves",
        where="A.11, Fig. 6",
        statement="FEMNIST: the testing errors of ObjP with a in {100, 1000} are less "
        "than those of OutP with a = 1",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"error at T; {ORDER}",
        aggregate="fig6",
        extract=pair_cells(a_cells(lambda a: (a_variant("objp", a), "outp"), lambda a: a >= 100)),
        needs=FEMNIST,
        premise=_equal_privacy("fig6"),
    ),
    _claim(
        "fig6_objp_beats_objt_some",
        where="A.11, Fig. 6",
        statement="FEMNIST: 'even for some cases, ObjP outperforms ObjT' (a in {100, 1000})",
        kind=PAPER_STATEMENT,
        form=Ordering(required_fraction=0.1),
        justification="'some cases' read as at least one (a, epsilon-bar) cell; 10% of the paper's "
        "6 cells rounds up to one; one-sided t",
        aggregate="fig6",
        extract=pair_cells(
            a_cells(lambda a: (a_variant("objp", a), a_variant("objt", a)), lambda a: a >= 100)
        ),
        needs=FEMNIST,
    ),
    _claim(
        "fig6_objt_insensitive",
        where="A.11, Fig. 6",
        statement="FEMNIST: the testing errors of ObjT vary less with a than those of ObjP",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification=f"per seed index the range over a of the error at T; ObjT's below ObjP's; {ORDER}",
        aggregate="fig6",
        extract=pair_cells(objt_insensitive),
        needs=FEMNIST,
    ),
    # ---- implementation checks: hold by construction or come from the note, never counted as reproductions
    _claim(
        "fig1_noise_scale",
        where="note 2.1 (the authors' log, not the paper)",
        statement="MNIST, ObjT at epsilon-bar 0.05: the noise magnitude at the first iteration is 0.157",
        kind=IMPLEMENTATION_CHECK,
        form=StatedNumber(AUTHORS_NOISE, AUTHORS_NOISE_TOLERANCE, relative=True),
        justification="the log prints 3 digits (+-0.3%) and the mean of |Laplace| over P J K = "
        "78,400 draws varies by 1/sqrt(78,400) = 0.36% per seed: 2% leaves room for both, about "
        "five such spreads; needs the paper's 10 instances, not its T",
        aggregate="fig1",
        extract=authors_noise,
        needs={"seeds": 10},
    ),
    _claim(
        "fig1_outp_noise_decays",
        where=f"{S4} ('Gaussian mechanism with decreasing variance as in [10]')",
        statement="MNIST: OutP's noise magnitude decreases over t",
        kind=IMPLEMENTATION_CHECK,
        form=Trend("decreasing"),
        justification="holds by construction (sigma is proportional to 1/(rho + 1/eta-hat), "
        "1/eta-hat grows like sqrt(t)); six points halving back from T, any fall within seeds",
        aggregate="fig1",
        extract=outp_noise_decays,
        needs=MAIN,
    ),
    _claim(
        "penalty_nondecreasing_bounded",
        where=f"{S4}, (21)",
        statement="rho-hat^t is nondecreasing and bounded above (1e9), as Assumption 1(ii) needs",
        kind=IMPLEMENTATION_CHECK,
        form=Exact(),
        justification="holds by construction of (21); checked exactly on every logged "
        "rho^t of Fig. 5's long runs",
        aggregate="fig5",
        extract=penalty,
        needs=LONG,
    ),
    _claim(
        "abstract_same_privacy",
        where="abstract ('while achieving the same level of data privacy')",
        statement="ObjT and OutP run at the same per-iteration epsilon-bar (OutP with delta-bar 1e-6)",
        kind=IMPLEMENTATION_CHECK,
        form=Exact(),
        justification="holds by construction (epsilon-bar is an input of both); the detail shows "
        "the composed epsilon of each, which the paper does not compare",
        aggregate="fig2a",
        extract=same_privacy,
        needs=MAIN,
    ),
]

# The seed pilot of the writers at hand (issue 62 item 2; docs/studies/dp_iadmm.md): the private FEMNIST jobs
# of Section 4 at 3 seeds, not the paper's 10, declared on 2026-11-30 before any of them had run
# (config/paper_femnist_at_hand_pilot.yaml, whose seeds a test holds to this). Three are the fewest whose
# spread a t-test can use (two leave one degree of freedom) and what the session's CPU allowed; at exactly
# these seeds the deviation's claims are judged at them (cli.waive_at_hand), and any other count below a
# claim's need leaves it "not run at this scale".
AT_HAND_PILOT_SEEDS = 3

# What a run on the writers at hand (tables.writers_at_hand: 114 of the paper's 195 writers) can decide
# of each FEMNIST claim, decided from the paper's setting before any paper-scale FEMNIST result
# (docs/studies/dp_iadmm.md, "FEMNIST on the writers at hand"; issue 62 item 1). The judge appends it
# to the deviation that opens each such claim's detail (cli.judge_tables).
AT_HAND_DECIDES = "it can decide this claim: its truth does not depend on the training set's size"
AT_HAND_ONE_WAY = (
    "it decides this claim one way only: a 'not reproduced' is weak evidence against it, since fewer "
    "agents averaged and fewer records weigh the noise more against the signal"
)
AT_HAND_WEAK = "weak evidence either way: a stated testing error depends on the training set's size"
AT_HAND_STANDING = {
    f"{STUDY}.{cid}": standing
    for standing, cids in (
        (
            AT_HAND_DECIDES,
            (
                "fig2b_monotone",
                "fig3_objt_least",
                "fig3_objt_fastest",
                "fig3_objp_vs_outp_eps1",
                "fig6_outp_best_at_1",
                "fig6_objp_improves",
                "fig6_objp_beats_objt_some",
                "fig6_objt_insensitive",
                "nonprivate_equivalence_femnist",
                "fig4_outp_eps_sensitive",
            ),
        ),
        (
            AT_HAND_ONE_WAY,
            ("femnist_objt_eps5_near_nonprivate", "fig2b_objp_flat", "fig4_femnist_rho_insensitive"),
        ),
        (
            AT_HAND_WEAK,
            (
                "femnist_nonprivate",
                "femnist_objt_eps5",
                "femnist_objt_eps0.05",
                "femnist_outp_eps0.05",
                "femnist_gap_eps0.05",
            ),
        ),
    )
    for cid in cids
}
