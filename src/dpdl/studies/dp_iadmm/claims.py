"""``CLAIMS``: Ryu & Kim's checkable statements (Section 4, Remark 3, A.9-A.11, abstract, conclusion).

Every claim is judged by :mod:`dpdl.verdicts` from per-seed values, never from the bands the
figures draw: the per-seed tables ``results/dp_iadmm/aggregates/<name>_seeds.csv`` (one value per
run, logged iteration and metric). Testing errors are in percent. Runs without noise are
deterministic, so a claim on them is an exact comparison. Tolerances and margins are fixed from
the paper's text and ``notes/iadmm.md`` (sections cited as "note 8.8" for section 8 item 8) and
justified once below; none was chosen after seeing a result unless its justification says post hoc.
"""

from __future__ import annotations

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
from dpdl.studies.dp_iadmm.aggregate import (
    Extractor,
    pair_cells,
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
    "note 8.8: exact percentages are secondary targets and '+-2 pp on MNIST, +-5 pp on FEMNIST is a reasonable "
    "tolerance given the 20/80 bands' (the absolute numbers depend on the unresolved switches of note 7.1 and "
    "7.5b); the paper prints 0.01 pp, far below that"
)
GAP = (
    f"a gap is a difference of two errors, so its tolerance is relative and symmetric: {GAP_FRACTION:.0%}, the "
    "note's per-error tolerance in units of the paper's gaps (2/8.99 = 22% on MNIST, 5/18.65 = 27% on FEMNIST) "
    "as one fraction, so the gap, the note's primary target (8.8), gets no more room than one of its errors "
    "(the old rule summed two). Per seed: OutP's error minus ObjT's of the same seed index (independent runs). "
    "Fixed before any gap was judged under it; the spot check's gaps (docs/studies/dp_iadmm.md) were known"
)
DETERMINISTIC = "the run has no noise, so it is deterministic: one run is the exact value, compared exactly"
REFERENCE = (
    "The paper does not name its 'nonprivate algorithm'; the switch nonprivate_algorithm defaults to ObjP without "
    "noise, decided from the text alone (Section 4: 'OutP and ObjP are equivalent in a nonprivate setting'; note "
    "7.6), not post hoc: the spot check's ObjP without noise missed 7.42% (11.01%). ObjT without noise, the "
    "default after the spot check saw it match (7.78%, docs/studies/dp_iadmm.md), is the post hoc reading "
    "nonprivate_objt"
)
CLOSE = "'close to' read as within the dataset's tolerance of one testing error (note 8.8), as a TOST margin"
ORDER = "one-sided t over seeds per cell; every cell, each at alpha (the paper states it without exception)"
FASTER = (
    "'converges faster' judged on the curves: per seed, the first logged t at which the testing error reaches "
    "a level both algorithms reach, the worse of their two mean errors at T plus the dataset's tolerance "
    "(note 8.8), so a final level inside the tolerance is not counted as speed; a seed that never reaches it "
    "counts one logging step past T. Fixed before any curve was judged"
)


# ----------------------------------------------------------------------------------------- claims

GAP_RUNS = (
    "the gap is OutP's error minus ObjT's, seed by seed: it re-reads the runs of the stated OutP number (and ObjT's) "
    "through a difference, whose values are not theirs, so the derivation from bit-identical cells cannot see it"
)
REFERENCE_RUN = (
    "it reads the one deterministic non-private run of the non-private claim (a constant, no per-seed cell, so the "
    "derivation cannot see it)"
)
EQUAL_PRIVACY = (
    "ObjT and ObjP spend no more privacy over the run than OutP at the same epsilon-bar (the abstract's 'the same "
    "level of data privacy'; issue 58 item 7, decided after the verdicts were seen: post hoc register)"
)


def _equal_privacy(aggregate: str) -> Premise:
    """The premise of every 'ours beat OutP at the same epsilon-bar' claim, checked on the claim's own table."""
    return Premise(EQUAL_PRIVACY, f"{aggregate}_seeds", spends_no_more_than_outp)


_EMPTY = {StatedNumber: np.array([]), Exact: Outcome(False, "", "a cell of this claim is not in this grid")}


def _claim(cid, where, statement, kind, form, why, aggregate, strict, needs, paper_value=None, **extra) -> Claim:
    extract = Extractor(strict, _EMPTY.get(type(form), []))
    return Claim(f"{STUDY}.{cid}", STUDY, where, statement, kind, form, why, f"{aggregate}_seeds", extract, needs,
                 paper_value, **extra)  # fmt: skip


def _number(cid, where, aggregate, dataset, variant, epsilon, paper, needs) -> Claim:
    name = {"objt": "ObjT", "outp": "OutP"}[variant]
    statement = f"{dataset.upper()}: {name}'s testing error at epsilon-bar {epsilon:g} is {paper:.2f}%"
    form, why = (
        StatedNumber(paper, TOLERANCE_PP[dataset]),
        f"{TOLERANCE}. Our 95% interval over seeds must lie inside it",
    )
    return _claim(cid, where, statement, PAPER_NUMBER, form, why, aggregate, error_at(dataset, variant, epsilon), needs,
                  reference=majority_class_error(f"dataset_{dataset}", percent=True))  # fmt: skip


def _gap_claim(cid, where, aggregate, dataset, epsilon, paper, needs) -> Claim:
    statement = f"{dataset.upper()}: ObjT improves on OutP by {paper:.2f} pp at epsilon-bar {epsilon:g}"
    form = StatedNumber(paper, GAP_FRACTION, relative=True)
    # the gap re-reads the runs of the stated OutP (and ObjT) numbers: listed beside them, not counted again
    return _claim(cid, where, statement, PAPER_NUMBER, form, GAP, aggregate, gap_at(dataset, epsilon), needs,
                  same_runs_as=f"{STUDY}.{cid.replace('gap', 'outp')}", same_runs_why=GAP_RUNS,
                  premise=_equal_privacy(aggregate))  # fmt: skip


def _reference_claim(dataset: str, where: str) -> Claim:
    paper = PAPER_NONPRIVATE_PCT[dataset]
    statement = f"{dataset.upper()}: a nonprivate algorithm's testing error is {paper}%"
    why, aggregate = f"{DETERMINISTIC}; tolerance: {TOLERANCE}. {REFERENCE}", FIG2[dataset]
    majority = majority_class_error(f"dataset_{dataset}", percent=True)
    return _claim(f"{dataset}_nonprivate", where, statement, PAPER_NUMBER, Exact(), why, aggregate, nonprivate(dataset),
                  EXACT[dataset], paper, reference=majority)  # fmt: skip


S4, R3, FIG2 = "Section 4", "Remark 3", {"mnist": "fig2a", "femnist": "fig2b"}
FIG2A, FIG2B = f"{S4}, MNIST results (Fig. 2a)", f"{S4}, FEMNIST results (Fig. 2b)"
CLAIMS: list[Claim] = [
    # ---- Section 4 and Remark 3: the printed numbers
    _reference_claim("mnist", FIG2A),
    _number("mnist_objt_eps5", FIG2A, "fig2a", "mnist", "objt", 5.0, 7.84, MAIN),
    _number("mnist_objt_eps0.05", FIG2A, "fig2a", "mnist", "objt", 0.05, 12.80, MAIN),
    _number("mnist_outp_eps0.05", FIG2A, "fig2a", "mnist", "outp", 0.05, 21.79, MAIN),
    _gap_claim("mnist_gap_eps0.05", FIG2A, "fig2a", "mnist", 0.05, 8.99, MAIN),
    _number("mnist_long_objt_eps0.01", f"{R3} ('OutT' is ObjT, note 7.16)", "remark3", "mnist", "objt", 0.01, 15.64,
            LONG),
    _number("mnist_long_outp_eps0.01", R3, "remark3", "mnist", "outp", 0.01, 37.98, LONG),
    _gap_claim("mnist_long_gap_eps0.01", f"{R3} and abstract ('by at most 22%')", "remark3", "mnist", 0.01, 22.34,
               LONG),
    _reference_claim("femnist", FIG2B),
    _number("femnist_objt_eps5", FIG2B, "fig2b", "femnist", "objt", 5.0, 36.29, FEMNIST),
    _number("femnist_objt_eps0.05", FIG2B, "fig2b", "femnist", "objt", 0.05, 72.40, FEMNIST),
    _number("femnist_outp_eps0.05", FIG2B, "fig2b", "femnist", "outp", 0.05, 91.05, FEMNIST),
    _gap_claim("femnist_gap_eps0.05", FIG2B, "fig2b", "femnist", 0.05, 18.65, FEMNIST),
    # ---- Section 4: the statements
    *(_claim(f"nonprivate_equivalence_{d}", f"{S4}, Algorithms", f"{d.upper()}: 'OutP and ObjP are equivalent in a "
             f"nonprivate setting': without noise their testing errors agree within {TOLERANCE_PP[d]:g} pp at 10%, "
             "50% and 100% of T", PAPER_STATEMENT, Exact(), f"{DETERMINISTIC} (runs nonprivate_objp, nonprivate_outp)"
             f"; 'equivalent' means the same algorithm, so the margin is the tolerance at which we tell one testing "
             f"error from another ({TOLERANCE_PP[d]:g} pp, note 8.8), along the whole run (note 7.6 expects it to "
             "fail: different eta, gradient scaling and update order)", "noiseless", noiseless(d), EXACT[d])
      for d in ("mnist", "femnist")),
    _claim("mnist_objt_eps5_near_nonprivate", FIG2A, "MNIST: ObjT at epsilon-bar 5 (7.84%) is close to the "
           "nonprivate algorithm (7.42%)", PAPER_STATEMENT, Equivalence(TOLERANCE_PP["mnist"]),
           f"{CLOSE}; the non-private run is deterministic and enters as a constant. {REFERENCE}", "fig2a",
           near_reference("mnist", 5.0), MAIN, same_runs_as=f"{STUDY}.mnist_nonprivate",
           same_runs_why=REFERENCE_RUN),
    _claim("mnist_objt_eps1_accurate", f"{S4}, Fig. 1 text", "MNIST: 'ObjT provides an accurate solution even when "
           "epsilon-bar = 1' (the reason Fig. 1 leaves out 3 and 5): within the tolerance of the nonprivate error",
           PAPER_STATEMENT, Equivalence(TOLERANCE_PP["mnist"]), f"'accurate' read like 'close to' above: {CLOSE}. "
           f"{REFERENCE}", "fig2a", near_reference("mnist", 1.0), MAIN),
    _claim("femnist_objt_eps5_near_nonprivate", FIG2B, "FEMNIST: ObjT at epsilon-bar 5 (36.29%) is close to the "
           "nonprivate algorithm (35.25%)", PAPER_STATEMENT, Equivalence(TOLERANCE_PP["femnist"]),
           f"{CLOSE}; the non-private run enters as a constant. {REFERENCE}", "fig2b",
           near_reference("femnist", 5.0), FEMNIST, same_runs_as=f"{STUDY}.femnist_nonprivate",
           same_runs_why=REFERENCE_RUN),
    _claim("fig1_noise_rises", f"{S4}, Fig. 1 top", "MNIST: the average noise magnitudes of all algorithms increase "
           "as epsilon-bar decreases", MECHANISM_PROPERTY, Ordering(), f"per seed the time average of Fig. 1's noise "
           f"magnitude; each step down the epsilon-bar grid is a cell ({ORDER}); three grid points are too few for "
           "Kendall's exact p", "fig1", pair_cells(noise_rises), MAIN),
    _claim("fig1_noise_above_outp", f"{S4}, Fig. 1 top; conclusion ('our algorithm requires larger noises')",
           "MNIST: for fixed epsilon-bar, the noise magnitudes of ObjT and ObjP are greater than OutP's",
           MECHANISM_PROPERTY, Ordering(), f"time-averaged noise magnitude per seed; {ORDER}. A mechanism property, "
           "not counted as a reproduction: each noise is fixed by its calibration formula ((20) for ObjT/ObjP, "
           "OutP's sigma of [10]), so any calibrated implementation shows it (issue 59 item 2, post hoc)", "fig1",
           pair_cells(noise_above_outp), MAIN),
    _claim("fig1_error_below_outp", f"{S4}, Fig. 1 bottom", "MNIST: the testing errors of ObjT and ObjP are less "
           "than OutP's", PAPER_STATEMENT, Ordering(), f"testing error at t = T per seed; {ORDER}", "fig1",
           below("mnist", [("objp", "outp"), ("objt", "outp")]), MAIN, premise=_equal_privacy("fig1")),
    _claim("fig1_objt_least", f"{S4}, FEMNIST results ('similar to the result from Figure 1')", "MNIST: ObjT "
           "produces the least testing error", PAPER_STATEMENT, Ordering(), f"testing error at t = T; {ORDER}",
           "fig1", below("mnist", [("objt", "objp"), ("objt", "outp")]), MAIN, premise=_equal_privacy("fig1")),
    _claim("fig1_converges_faster", f"{S4}, Fig. 1; abstract ('converges faster than the existing algorithm')",
           "MNIST: the solutions of ObjT and ObjP converge faster than OutP's", PAPER_STATEMENT, Ordering(),
           f"{FASTER}; {ORDER}", "fig1", faster("mnist", [("objt", "outp"), ("objp", "outp")]), MAIN,
           premise=_equal_privacy("fig1")),
    _claim("fig2a_monotone", FIG2A, "MNIST: as epsilon-bar decreases the testing errors of all algorithms increase",
           MECHANISM_PROPERTY, Trend("decreasing"), "error at T against the epsilon-bar grid per algorithm; the change "
           "needs no minimum (the engine's default: any increase within seeds)", "fig2a",
           trend_in_epsilon("mnist", BASE_ALGORITHMS), MAIN),
    _claim("fig2b_monotone", FIG2B, "FEMNIST: as epsilon-bar decreases the testing errors of ObjT and OutP increase",
           MECHANISM_PROPERTY, Trend("decreasing"), "as fig2a_monotone; ObjP is left out because the same section says "
           "its effect is not significant (fig2b_objp_flat)", "fig2b", trend_in_epsilon("femnist", ("objt", "outp")),
           FEMNIST),
    _claim("fig2b_objp_flat", f"{S4}, FEMNIST results (Fig. 3 text, Fig. 2b blue line)", "FEMNIST: the effect of "
           "epsilon-bar on the testing error of ObjP is not significant", PAPER_STATEMENT,
           Equivalence(TOLERANCE_PP["femnist"]), "each epsilon-bar against the largest; 'not significant' read as "
           "within the FEMNIST tolerance of one testing error (note 8.8), a TOST margin", "fig2b",
           pair_cells(equal_in_epsilon), FEMNIST),
    _claim("remark3_ours_below_outp", R3, "MNIST, T = 1e6: 'the results demonstrate the outperformance of our "
           "algorithms': ObjT and ObjP below OutP", PAPER_STATEMENT, Ordering(), f"error at T; {ORDER}", "remark3",
           below("mnist", [("objt", "outp"), ("objp", "outp")]), LONG, premise=_equal_privacy("remark3")),
    _claim("fig3_objt_least", f"{S4}, Fig. 3", "FEMNIST: ObjT produces the least testing error", PAPER_STATEMENT,
           Ordering(), f"error at T; {ORDER}", "fig3", below("femnist", [("objt", "objp"), ("objt", "outp")]),
           FEMNIST, premise=_equal_privacy("fig3")),
    _claim("fig3_objt_fastest", f"{S4}, Fig. 3", "FEMNIST: ObjT converges fastest", PAPER_STATEMENT, Ordering(),
           f"{FASTER}; {ORDER}", "fig3", faster("femnist", [("objt", "objp"), ("objt", "outp")]), FEMNIST,
           premise=_equal_privacy("fig3")),
    _claim("fig3_objp_vs_outp_eps1", f"{S4}, Fig. 3", "FEMNIST, epsilon-bar = 1: the testing error of ObjP is "
           "greater than that of OutP", PAPER_STATEMENT, Ordering(), f"error at T; {ORDER}", "fig3",
           below("femnist", [("outp", "objp")], lambda table: [1.0]), FEMNIST),
    # ---- Appendix A.9-A.11
    *(_claim(f"fig4_{d}_rho_insensitive", "A.9, Fig. 4", f"{d.upper()}: the performance of OutP is not greatly "
             "affected by the choice of rho", PAPER_STATEMENT, Equivalence(TOLERANCE_PP[d]), "each rho setting "
             "against rho-hat at T; 'not greatly affected' read as within the dataset's tolerance of one testing "
             "error (note 8.8), a TOST margin", "fig4", rho_equal(d), FEMNIST if d == "femnist" else MAIN)
      for d in ("mnist", "femnist")),
    _claim("fig4_outp_eps_sensitive", "A.9, Fig. 4", "OutP's performance is affected by epsilon-bar: its error is "
           "lower at the largest epsilon-bar than at the smallest, for every rho", MECHANISM_PROPERTY, Ordering(),
           f"error at T; {ORDER}", "fig4", pair_cells(epsilon_matters), FEMNIST),
    _claim("fig5_cv_to_zero", "A.10, Fig. 5; Remark 3 ('feasible')", "MNIST: the consensus violation of all "
           "algorithms goes down to zero", MECHANISM_PROPERTY, Ordering(), f"per seed the final CV over its peak must "
           f"be below {CV_ZERO:.0%}: 'zero' on Fig. 5's log axis read as two decades below the peak (one-sided, "
           f"fixed before any CV was seen); {ORDER}", "fig5", pair_cells(cv_to_zero), LONG),
    _claim("fig5_outp_cv_fastest", "A.10, Fig. 5", "MNIST: the CV of OutP drops quickly compared with ours",
           PAPER_STATEMENT, Ordering(), f"OutP's CV below ObjP's and ObjT's at 1% and 10% of T ('quickly'); {ORDER}",
           "fig5", cv_checkpoints([("outp", "objp"), ("outp", "objt")], CV_EARLY), LONG),
    _claim("fig5_outp_plus_cv_larger", "A.10, Fig. 5 top", "MNIST: the CV of OutP+ is larger than that of ObjP and "
           "ObjT", PAPER_STATEMENT, Ordering(), f"CV at 10%, 50% and 100% of T; {ORDER}", "fig5",
           cv_checkpoints([("objp", "outp_plus"), ("objt", "outp_plus")], CURVE), LONG),
    _claim("fig5_ours_beat_outp_plus", "A.10, Fig. 5 bottom", "MNIST: our algorithms still outperform OutP+",
           PAPER_STATEMENT, Ordering(), f"error at T; {ORDER}", "fig5",
           below("mnist", [("objp", "outp_plus"), ("objt", "outp_plus")]), LONG, premise=_equal_privacy("fig5")),
    _claim("fig6_outp_best_at_1", "A.11, Fig. 6", "FEMNIST: OutP with a = 1 (as in [10]) produces the best "
           "performance", PAPER_STATEMENT, Ordering(), f"OutP at a = 1 below OutP at each other a, error at T; "
           f"{ORDER}; not identifiable if OutP's error does not depend on a", "fig6", outp_best_at_1, FEMNIST),
    _claim("fig6_objp_improves", "A.11, Fig. 6", "FEMNIST: the testing errors of ObjP with a in {100, 1000} are "
           "less than those of OutP with a = 1", PAPER_STATEMENT, Ordering(), f"error at T; {ORDER}", "fig6",
           pair_cells(a_cells(lambda a: (a_variant("objp", a), "outp"), lambda a: a >= 100)), FEMNIST,
           premise=_equal_privacy("fig6")),
    _claim("fig6_objp_beats_objt_some", "A.11, Fig. 6", "FEMNIST: 'even for some cases, ObjP outperforms ObjT' "
           "(a in {100, 1000})", PAPER_STATEMENT, Ordering(required_fraction=0.1), "'some cases' read as at least "
           "one (a, epsilon-bar) cell; 10% of the paper's 6 cells rounds up to one; one-sided t", "fig6",
           pair_cells(a_cells(lambda a: (a_variant("objp", a), a_variant("objt", a)), lambda a: a >= 100)),
           FEMNIST),
    _claim("fig6_objt_insensitive", "A.11, Fig. 6", "FEMNIST: the testing errors of ObjT vary less with a than "
           "those of ObjP", PAPER_STATEMENT, Ordering(), f"per seed index the range over a of the error at T; "
           f"ObjT's below ObjP's; {ORDER}", "fig6", pair_cells(objt_insensitive), FEMNIST),
    # ---- implementation checks: hold by construction or come from the note, never counted as reproductions
    _claim("fig1_noise_scale", "note 2.1 (the authors' log, not the paper)", "MNIST, ObjT at epsilon-bar 0.05: the "
           "noise magnitude at the first iteration is 0.157", IMPLEMENTATION_CHECK,
           StatedNumber(AUTHORS_NOISE, AUTHORS_NOISE_TOLERANCE, relative=True), "the log prints 3 digits (+-0.3%) "
           "and the mean of |Laplace| over P J K = 78,400 draws varies by 1/sqrt(78,400) = 0.36% per seed: 2% "
           "leaves room for both, about five such spreads; needs the paper's 10 instances, not its T", "fig1",
           authors_noise, {"seeds": 10}),
    _claim("fig1_outp_noise_decays", f"{S4} ('Gaussian mechanism with decreasing variance as in [10]')", "MNIST: "
           "OutP's noise magnitude decreases over t", IMPLEMENTATION_CHECK, Trend("decreasing"), "holds by "
           "construction (sigma is proportional to 1/(rho + 1/eta-hat), 1/eta-hat grows like sqrt(t)); six points "
           "halving back from T, any fall within seeds", "fig1", outp_noise_decays, MAIN),
    _claim("penalty_nondecreasing_bounded", f"{S4}, (21)", "rho-hat^t is nondecreasing and bounded above (1e9), "
           "as Assumption 1(ii) needs", IMPLEMENTATION_CHECK, Exact(), "holds by construction of (21); checked "
           "exactly on every logged rho^t of Fig. 5's long runs", "fig5", penalty, LONG),
    _claim("abstract_same_privacy", "abstract ('while achieving the same level of data privacy')", "ObjT and OutP "
           "run at the same per-iteration epsilon-bar (OutP with delta-bar 1e-6)", IMPLEMENTATION_CHECK, Exact(),
           "holds by construction (epsilon-bar is an input of both); the detail shows the composed epsilon of each, "
           "which the paper does not compare", "fig2a", same_privacy, MAIN),
]  # fmt: skip
