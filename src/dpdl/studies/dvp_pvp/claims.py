"""The claims of Zhang & Zhu checked here, each judged by :mod:`dpdl.verdicts` from a per-seed table.

``CLAIMS`` lists them (:class:`dpdl.claims.Claim`). Each claim's ``aggregate`` names one of the
per-seed tables the aggregate steps write (``results/dvp_pvp/aggregates/<figure>_seeds.csv``, one
row per run and metric, :data:`dpdl.studies.dvp_pvp.aggregate.SEED_METRICS`), or ``tradeoff``:
both trade-off tables together (:func:`~dpdl.studies.dvp_pvp.extract.claim_tables`). The extractors
(:mod:`dpdl.studies.dvp_pvp.extract`) turn a table into the form's input; they compute no verdict.

J = journal version (000_*), C = conference version (003_*); G# and section numbers refer to
``notes/zhang_zhu.md``. Each tolerance and margin cites the paper's text or the note; those set
after a paper-scale result was known (the PVP measured quantity, the trade-off fit tolerance, ...)
are in the post hoc register (``docs/post_hoc.md``) and flagged in each scorecard row.
"""

from __future__ import annotations

import pandas as pd

from dpdl.claims import (
    IMPLEMENTATION_CHECK,
    MECHANISM_PROPERTY,
    PAPER_NUMBER,
    PAPER_STATEMENT,
    Claim,
    majority_class_error,
)
from dpdl.studies.dvp_pvp.extract import (
    CONSTANT_NAMES,
    MEASURED_ERROR,
    PAPER_FIT,
    amplitudes,
    below,
    decreasing,
    fit_at_every_iteration,
    fitted,
    nonprivate_gap,
    optimal,
    oscillation_along_alpha,
    pvp_offset_against_settled_loss,
    rho_argmin,
    smallest_rho_minimises,
)
from dpdl.studies.dvp_pvp.grid import ALGORITHM_NAMES, PAPER_OPTIMAL_ALPHA, PAPER_RHO_EXPONENT, PRIVATE, STUDY
from dpdl.verdicts import Equivalence, Exact, Ordering, StatedNumber, Trend

# "for most values of alpha": more than half of the alpha cells (a strict majority up to 50 cells)
MOST = 0.51
RHO_TOLERANCE_DECADES = 0.5  # Table 1 prints rho in half decades (10^-2.5): its print resolution
FIT_TOLERANCE = 0.25  # relative: half a unit of the one significant figure of c4 = 0.2 and 20 (also c5)
OPTIMAL_ALPHA_TOLERANCE = 0.05  # |alpha* - note value|: the G17 grid spacing around 0.142 and 0.453
CENTRALIZED_GAP_TOLERANCE = 1e-3  # |relative objective gap| of the non-private run at t = T
FIGURE_SCALE = {"iterations": 100, "seeds": 10, "alphas": 16}  # the note's section 8 grid (G16-G18)
CONVERGENCE_SCALE = {"iterations": 100, "seeds": 10}  # the convergence figure's four alphas at T = 100
RHO_SCALE = {"iterations": 100, "rho_seeds": 2, "rho_grid": 21}  # G23: 21 half-decade rho values
TRADEOFF_FIGURES = {"dvp": "J Fig. 4a-b, C Fig. 5", "pvp": "J Fig. 4c-d, C Fig. 6"}
SETTLED = "t = 20..T (the paper's own settled window: PVP's c6 averages t = 20..100; T/2..T when T < 40)"
OSCILLATION = (
    "per run, the loss's variation beyond its net change over the iterations, per step (0 if monotone)"
)


# ------------------------------------------------------------------------------ the claims

_TREND = "Trend with the engine's default (no minimum change, tested within seeds): the paper gives no size"
# A misclassification rate is read beside the error of a constant classifier (the majority class;
# 0.248 on Adult)
MAJORITY = majority_class_error("dataset")
_MEASURED = (
    "PVP's error on its own f_p(t), as the note specifies (G21: 'MER of f_p'); the reading "
    "'released' measures it on V_p(t) = f_p(t) + noise, what PVP broadcasts (post hoc); DVP "
    "releases its f_p(t)"
)

CLAIMS = [
    *[
        Claim(
            id=f"dvp_pvp.table1_rho.{algorithm}",
            study=STUDY,
            where="C Table 1; J Section 5 text ('we select the value of rho that "
            "minimizes the empirical loss')",
            statement="log10 rho minimising the final training loss at alpha = 0.3: "
            f"{ALGORITHM_NAMES[algorithm]}",
            kind=PAPER_NUMBER,
            form=StatedNumber(PAPER_RHO_EXPONENT[algorithm], RHO_TOLERANCE_DECADES),
            justification="half a decade: the paper prints rho in half decades (10^-2.5), its "
            "print resolution; per seed the argmin over the G23 grid (not identifiable when the "
            "loss ties across rho)",
            aggregate="rho_selection",
            extract=rho_argmin(algorithm),
            needs=RHO_SCALE,
        )
        for algorithm in PRIVATE
    ],
    Claim(
        id="dvp_pvp.table1_rho.nonprivate",
        study=STUDY,
        where="C Table 1 (10^-10); zhang_zhu.md 5.2",
        statement="the non-private run's final training loss is minimal at the smallest rho of the grid",
        kind=IMPLEMENTATION_CHECK,
        form=Exact(),
        justification="holds by construction: without noise the training loss only grows with the "
        "ridge weight rho, so the argmin is the grid's smallest value (the note, 5.2); not a "
        "reproduction of Table 1",
        aggregate="rho_selection",
        extract=smallest_rho_minimises,
        needs=RHO_SCALE,
        paper_value="10^-10",
    ),
    *[
        Claim(
            id=f"dvp_pvp.tradeoff_fit.{algorithm}.{name}",
            study=STUDY,
            where=f"J Section 5 / C(30) with {TRADEOFF_FIGURES[algorithm]}",
            statement=f"{ALGORITHM_NAMES[algorithm]}: the {CONSTANT_NAMES[name]} of L_acc = c4 "
            "exp(-c5 alpha) + c6 fitted to the loss against alpha before the stop time (t = T)",
            kind=PAPER_NUMBER,
            form=StatedNumber(PAPER_FIT[algorithm][name], FIT_TOLERANCE, relative=True),
            justification="±25%: half a unit of the single significant figure the paper prints for "
            "c4 (0.2, 20), applied to c5 too (hand-picked round constants; the paper gives no fit "
            "error); per seed our own least-squares fit (G22 (i)). Depends on the unstated P, B_p, "
            "eta and loss unit (notes 5.3, G27)",
            aggregate=f"tradeoff_{algorithm}",
            extract=fitted(algorithm, name),
            needs=FIGURE_SCALE,
            **(
                {
                    "same_runs_as": "dvp_pvp.tradeoff_fit.dvp.all_iterations",
                    "same_runs_why": "its per-seed fitted constant at t = T is, divided by the "
                    "printed value, a cell of tradeoff_fit.dvp.all_iterations (which also reads t "
                    "= 2), so the derivation from bit-identical cells cannot see it",
                }
                if algorithm == "dvp"
                else {}
            ),
        )
        for algorithm in PRIVATE
        for name in ("a", "b")
    ],
    Claim(
        id="dvp_pvp.tradeoff_amplitude",
        study=STUDY,
        where="J Section 5 (c4 = 0.2 vs 20; 'the empirical loss of DVP is more robust to noise "
        "than the PVP'); J/C conclusion ('DVP is more robust to the noise than PVP')",
        statement="DVP's fitted trade-off amplitude c4 is below PVP's at every trade-off iteration t > 1",
        kind=IMPLEMENTATION_CHECK,
        form=Ordering(),
        justification="an implementation check, not a reproduction: it orders two printed "
        "constants (0.2 < 20) that are themselves not reproduced (dvp_pvp.tradeoff_fit.*), and the "
        "sentence it was read from ('the empirical loss of DVP is more robust to noise') is "
        "dvp_pvp.dvp_more_stable_most_alpha's; the ordering, unlike the values, does not depend on "
        "the unstated loss unit and B_p; every iteration t > 1",
        aggregate="tradeoff",
        extract=amplitudes,
        needs=FIGURE_SCALE,
    ),
    *[
        Claim(
            id=f"dvp_pvp.optimal_alpha.{algorithm}",
            study=STUDY,
            where="C (27)/(28) with J Fig. 4 constants; zhang_zhu.md 6.4 (derived, not printed)",
            statement="optimal alpha of the trade-off problem for "
            f"{ALGORITHM_NAMES[algorithm]} from our fit (t = T)",
            kind=IMPLEMENTATION_CHECK,
            form=StatedNumber(PAPER_OPTIMAL_ALPHA[algorithm], OPTIMAL_ALPHA_TOLERANCE),
            justification="note-derived: 0.142 / 0.453 follow from the paper's constants with the corrected "
            "first-order condition (zhang_zhu.md 6.4); the paper prints no optimal alpha. 0.05 is "
            "the G17 grid spacing around both values",
            aggregate=f"tradeoff_{algorithm}",
            extract=optimal(algorithm),
            needs=FIGURE_SCALE,
        )
        for algorithm in PRIVATE
    ],
    Claim(
        id="dvp_pvp.loss_decreasing",
        study=STUDY,
        where="J Fig. 5a / C Fig. 7; J/C Section 5 ('the accuracy of the algorithm increases as "
        "alpha becomes larger'); Assumption 6",
        statement="the final empirical risk (t = T + 1) decreases in alpha, for DVP and for PVP",
        kind=MECHANISM_PROPERTY,
        form=Trend("decreasing"),
        justification=f"{_TREND}; both mechanisms ('for both perturbations'); the final "
        "output is released by both",
        aggregate="final_risk",
        extract=decreasing("loss"),
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.error_decreasing",
        study=STUDY,
        where="J Fig. 5b / C Fig. 8; Section 5 ('the accuracy of the algorithm increases "
        "as alpha becomes larger')",
        statement="the misclassification rate at t = 100 decreases in alpha, DVP and PVP",
        kind=MECHANISM_PROPERTY,
        form=Trend("decreasing"),
        justification=f"{_TREND}; {_MEASURED}",
        aggregate="mer",
        extract=decreasing(MEASURED_ERROR),
        reference=MAJORITY,
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.dvp_error_below_pvp",
        study=STUDY,
        where="J Section 5 ('the dual perturbation yields a lower error rate for a large range of "
        "values of alpha'); C Figs 7-8 text ('better error rate for most of alpha'); J/C "
        "conclusion",
        statement="DVP's misclassification rate at t = 100 is below PVP's for most alpha",
        kind=PAPER_STATEMENT,
        form=Ordering(required_fraction=MOST),
        justification=f"'for most of alpha': more than half of the alpha cells, one hypothesis; {_MEASURED}",
        aggregate="mer",
        extract=below(MEASURED_ERROR, "dvp", "pvp"),
        reference=MAJORITY,
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.pvp_loss_slightly_better",
        study=STUDY,
        where="J Fig. 5a / C Fig. 7 text ('PVP performs slightly better than DVP with respect to "
        "the empirical loss'); C abstract and contributions; J contribution (iv)",
        statement="PVP's final empirical risk (t = T + 1) is below DVP's",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification="the paper says it of the whole curve without 'most', so every alpha cell; "
        "'slightly' sets no margin. Both release this final output",
        aggregate="final_risk",
        extract=below("loss", "pvp", "dvp"),
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.larger_alpha_converges_faster",
        study=STUDY,
        where="J Fig. 3 text ('a larger alpha leads to faster convergence'; 'Larger values of "
        "alpha yield better convergence for both perturbations') / C Fig. 4",
        statement="the loss along the iterations (mean over t = 1..T) decreases in "
        "alpha, for DVP and for PVP",
        kind=MECHANISM_PROPERTY,
        form=Trend("decreasing"),
        justification=f"{_TREND}. 'Faster/better convergence' read as a lower area under the loss-vs-t curve "
        "(C-bar(t) on f_p(t), the paper's definition): a level, not a speed, so a mechanism "
        "property (less noise, lower loss), not counted with the substantive claims; a speed "
        "(iterations to reach a level) needs every iteration's per-seed loss, which the aggregates "
        "do not store. On the main alpha grid (chosen when the trend was a pooled rank test that "
        "the figure's 4 alphas could not pass)",
        aggregate="final_risk",
        extract=decreasing("loss_mean"),
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.dvp_smaller_variance",
        study=STUDY,
        where="J Fig. 3 text ('the DVP has a smaller variance of empirical loss than the primal "
        "perturbation does'; 'DVP is slightly more robust to noise ... given the same value of "
        "alpha') / C Fig. 4",
        statement="at each alpha of the convergence figure, DVP's loss oscillates less over "
        "the iterations than PVP's",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification="every alpha of the figure ('given the same value of alpha'); "
        f"{OSCILLATION}, over {SETTLED}; C-bar(t) on f_p(t) as the paper defines it",
        aggregate="convergence",
        extract=below("oscillation", "dvp", "pvp"),
        needs=CONVERGENCE_SCALE,
    ),
    Claim(
        id="dvp_pvp.dvp_more_stable_most_alpha",
        study=STUDY,
        where="J Section 5 ('the empirical loss of DVP is more robust to noise than the PVP for "
        "most values of alpha') / C Figs 7-8 text ('the reaction of empirical loss of DVP is more "
        "stable ... for most values')",
        statement="DVP's loss oscillates less over the iterations than PVP's, for "
        "most alpha of the main grid",
        kind=PAPER_STATEMENT,
        form=Ordering(required_fraction=MOST),
        justification="'for most values of alpha': more than half of the alpha cells; "
        f"{OSCILLATION}, over {SETTLED}",
        aggregate="final_risk",
        extract=below("oscillation", "dvp", "pvp"),
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.pvp_oscillates_more",
        study=STUDY,
        where="J Section 5 ('L_acc ... for PVP experiences more oscillations than the DVP does'; J "
        "says Figure 3, C Figure 5: the trade-off figures J Fig. 4 / C Figs 5-6, G25)",
        statement="PVP's loss-vs-alpha points oscillate more than DVP's, at each trade-off iteration",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification="per seed, the variation of its loss-vs-alpha points beyond their net "
        "change, per step (0 for a monotone curve, so PVP's larger decay is not counted as "
        "oscillation); every panel (t = 2 and t = T)",
        aggregate="tradeoff",
        extract=oscillation_along_alpha,
        needs=FIGURE_SCALE,
    ),
    Claim(
        id="dvp_pvp.nonprivate_centralized",
        study=STUDY,
        where="zhang_zhu.md 8.3 item 7; Forero et al. Lemma 1 (G15)",
        statement="non-private network ADMM reaches the centralized optimum of the "
        "consensus objective (relative gap)",
        kind=IMPLEMENTATION_CHECK,
        form=StatedNumber(0.0, CENTRALIZED_GAP_TOLERANCE),
        justification="a sanity range, not a paper number: 0.1% of Z*, far below the private runs' "
        "excess loss; two-sided because a gap below 0 would mean our centralized optimum is wrong",
        aggregate="convergence",
        extract=nonprivate_gap,
        needs={"iterations": 100},
    ),
]


# ------------------------------------------------------------------------------ the remaining statements

# "Similar" in the C abstract: the one loss difference the paper sizes on its trade-off curves is DVP's
# whole privacy-induced excess, c4 = 0.2 (J Section 5): c4 exp(-c5 alpha) <= c4 at every alpha.
SIMILAR_MARGIN = PAPER_FIT["dvp"]["a"]


CLAIMS += [
    Claim(
        id="dvp_pvp.similar_tradeoff_management",
        study=STUDY,
        where="C abstract ('Our experiment shows that both algorithms performs similar in managing the "
        "privacy-accuracy tradeoff, and primal variable perturbation is slightly better than the dual case')",
        statement="DVP's and PVP's final empirical risk (t = T + 1) agree within the margin at every alpha",
        kind=PAPER_STATEMENT,
        form=Equivalence(SIMILAR_MARGIN),
        justification="the trade-off the abstract sums up is the final-output figure (C Fig. 7; "
        "its second clause, 'primal ... slightly better', is said of the empirical loss there and "
        "is dvp_pvp.pvp_loss_slightly_better); no 'most', so every alpha cell. The paper sizes no "
        f"'similar': the margin {SIMILAR_MARGIN:g} is DVP's c4 (J Section 5), the whole "
        "privacy-induced excess of DVP's fitted curve (c4 exp(-c5 alpha) <= c4), the only loss "
        "difference the paper quantifies on these curves; in the config's loss unit, like the "
        "fitted constants. The paper's own PVP fit (c4 = 20) puts PVP more than 0.2 above its "
        "offset for alpha < 0.23",
        aggregate="final_risk",
        extract=below("loss", "dvp", "pvp"),
        needs=FIGURE_SCALE,
        paper_value="similar (no number)",
    ),
    Claim(
        id="dvp_pvp.tradeoff_fit.dvp.all_iterations",
        study=STUDY,
        where="J Section 5 ('From the experimental results, we determine c4 = 0.2, c5 = 25, c6 = "
        "min_t{C-bar(t)}; these values are applicable at all iterations'); C Section 5 "
        "('applicable for all iterations')",
        statement="DVP's fitted c4 and c5 of L_acc = c4 exp(-c5 alpha) + c6 match the printed 0.2 "
        "and 25 at every trade-off iteration (t = 2 and t = T), each as a ratio to the printed "
        "value",
        kind=PAPER_STATEMENT,
        form=Equivalence(FIT_TOLERANCE),
        justification="'applicable at all iterations': the printed constants hold at each "
        "iteration the trade-off figure shows (J Fig. 4a-b), not only at t = T "
        "(dvp_pvp.tradeoff_fit.dvp.a/b); per seed our own fit, divided by the printed value, "
        f"within ±{FIT_TOLERANCE:g} of 1 in every (constant, iteration) cell (TOST, Holm): the "
        "same tolerance as the fitted-constant claims, half a unit of the single significant "
        "figure printed for c4. c6 = min_t C-bar(t) is one number over all t by its definition, so "
        "nothing to check",
        aggregate="tradeoff_dvp",
        extract=fit_at_every_iteration("dvp"),
        needs=FIGURE_SCALE,
        paper_value="c4 = 0.2, c5 = 25 at every t",
    ),
    Claim(
        id="dvp_pvp.tradeoff_fit.pvp.c6",
        study=STUDY,
        where="J Section 5 / C(30) with J Fig. 4c-d, C Fig. 6 ('For iteration t > 1, c4 = 20, c5 = 20, "
        "c6 = (1/81) sum_{t=20}^{100} C-bar(t)')",
        statement="PVP: the offset c6 of L_acc = c4 exp(-c5 alpha) + c6 fitted at t = T equals the "
        "loss averaged over t = 20..100 (per seed, relative difference)",
        kind=PAPER_STATEMENT,
        form=StatedNumber(0.0, FIT_TOLERANCE),
        justification="the paper prints c6 as a formula of the data, not a number: per seed our "
        f"fitted offset against that formula, (c - c6) / c6 within ±{FIT_TOLERANCE:g}, the "
        "relative tolerance of the other fitted constants (their print resolution; the paper gives "
        "no fit error). C-bar(t) read at the grid's largest alpha (alpha_U = 1, C (27)), where the "
        "paper's own c4 = c5 = 20 make L_acc equal c6 (20 e^-20); averaged over alpha (note G22 "
        "(ii), the figure's curve) the paper's own model would miss c6 by about 2.8 on the G17 "
        "grid. Needs the loss at every t = 20..T: not identifiable when the trade-off table stores "
        "fewer iterations",
        aggregate="tradeoff_pvp",
        extract=pvp_offset_against_settled_loss,
        needs=FIGURE_SCALE,
        paper_value="c6 = (1/81) sum_{t=20}^{100} C-bar(t)",
    ),
    Claim(
        id="dvp_pvp.dvp_outperforms_conclusion",
        study=STUDY,
        where="J conclusion ('The dual variable perturbation outperforms the primal case at balancing the "
        "privacy-accuracy tradeoff as well as learning performance'); C conclusion ('... as well as learning "
        "quality')",
        statement="DVP's misclassification rate at t = 100 is below PVP's at every alpha",
        kind=PAPER_STATEMENT,
        form=Ordering(),
        justification="J Section 5 ties the trade-off to the error rate: 'the dual perturbation "
        "yields a lower error rate ..., which implies a better management of tradeoff between "
        "privacy and accuracy'; the conclusion drops Section 5's 'for a large range of values of "
        "alpha' (dvp_pvp.dvp_error_below_pvp), so every alpha cell. 'Learning performance' is "
        "Section IV's analysis ('we care about the learning performance at all iterations'), which "
        f"no run checks; {_MEASURED}",
        aggregate="mer",
        extract=below(MEASURED_ERROR, "dvp", "pvp"),
        reference=MAJORITY,
        needs=FIGURE_SCALE,
    ),
]


# ------------------------------------------------------------------------------ the study's scorecard page


def scorecard_markdown(card: pd.DataFrame) -> str:
    """The study's scorecard as Markdown: verdict counts by kind, then one row per claim."""
    from dpdl.io import markdown_table

    counts = pd.crosstab(card["kind"], card["verdict"]).reset_index() if len(card) else pd.DataFrame()
    shown = ["id", "kind", "form", "paper_value", "our_value", "effect", "ci_low", "ci_high", "n_seeds"]
    shown += ["tolerance", "verdict", "seeds_to_decide", "test", "justification"]
    card = card.assign(
        **{
            c: card[c].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
            for c in ("effect", "ci_low", "ci_high")
        }
    )
    return (
        "# Zhang & Zhu (dvp_pvp): claims\n\n"
        "Implementation checks are not reproductions; the headline counts only paper numbers and "
        "statements.\n\n"
        + markdown_table(counts)
        + "\n"
        + markdown_table(card[shown])
        + "\nDetails per cell, switches and scale: the CSV beside this file.\n"
    )
