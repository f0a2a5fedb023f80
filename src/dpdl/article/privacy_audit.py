"""The privacy audit section: the paper's privacy claims, the deciding cells' premises, the audit's tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.article.snapshot import read_card
from dpdl.audit.premises import ledger_shown
from dpdl.claims import PREMISE_CLAIM, PRIVACY_CLAIM
from dpdl.publishing.layout import AUDIT_TABLE


def privacy_audit(card: pd.DataFrame, folder: Path) -> list[Block]:
    privacy = card[card["kind"] == PRIVACY_CLAIM]
    blocks = [
        Block("heading", "Privacy audit", level=2),
        Block(
            "text",
            "The paper's privacy claims, tested by an empirical audit (runs on neighbouring datasets; "
            "eps_lb is a lower bound on epsilon; an audit can refute a claim, never prove it). The "
            "verdict is the paper's guarantee over every audited cell; `readings` gives it under "
            "each reading, judged on the cells that ran that reading's mechanism (the default "
            "reading's first: the mechanism this study's runs use):",
        ),
        Block(
            "table",
            table=privacy[
                ["id", "paper_value", "our_value", "verdict", "deciding_cell", "readings", "detail"]
            ],
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
                "declared within or outside and measured on the cell's canary pair; a refutation "
                "counts against the paper only from a cell within every one):",
            ),
            Block("table", table=ledger_shown(ledger, deciding)),
        ]
    premises = card[card["kind"] == PREMISE_CLAIM]
    if len(premises):
        blocks += [
            Block(
                "text",
                "The paper's premises tested on its own data (audit/data_premises.csv: every "
                "record of each dataset as the study prepares it, against the bound the guarantee assumes):",
            ),
            Block("table", table=premises[["id", "paper_value", "our_value", "verdict", "detail"]]),
        ]
    if (folder / AUDIT_TABLE).is_file():
        audit = read_card(folder / AUDIT_TABLE)
        shown = [
            "claim",
            "cell",
            "algorithm",
            "score",
            "runs",
            "claimed_epsilon",
            "delta",
            "eps_lb",
            "refutes",
        ]
        blocks += [Block("text", "The audit's tests (audit/audit.csv):"), Block("table", table=audit[shown])]
    else:
        blocks.append(Block("text", "The snapshot holds no audit for this study."))
    return blocks
