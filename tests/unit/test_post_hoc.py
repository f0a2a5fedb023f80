"""The post hoc register: its claim ids are registered claims, its table is the docs page, and it stays light."""

from __future__ import annotations

import ast
import re
from importlib import import_module
from pathlib import Path

import pytest

from dpdl import post_hoc
from dpdl.audit_report import premise_claim_ids
from dpdl.post_hoc import ALL_CLAIMS, KINDS, REGISTER, PostHoc, current_id, flags, register_markdown, study_of

ROOT = Path(__file__).resolve().parents[2]


def _registered(study: str) -> list[str]:
    claims = (
        *import_module(f"dpdl.studies.{study}.claims").CLAIMS,
        *import_module(f"dpdl.studies.{study}.audit").PRIVACY_CLAIMS,
    )
    return [claim.id for claim in claims] + premise_claim_ids(study)


@pytest.mark.parametrize("study", sorted(ALL_CLAIMS))
def test_the_baseline_claims_are_still_registered_in_their_order(study: str) -> None:
    """Under their ids now: a claim renamed or merged since the baseline is registered under its new id."""
    registered = _registered(study)
    now = list(dict.fromkeys(current_id(claim) for claim in ALL_CLAIMS[study]))
    assert [claim for claim in registered if claim in now] == now


def test_every_claim_in_the_register_is_a_registered_claim_of_its_study() -> None:
    registered = {study: set(_registered(study)) for study in ALL_CLAIMS}
    for entry in REGISTER:
        for claim in entry.claims:
            assert claim in registered.get(study_of(claim), set()), (entry.subject, claim)


def test_entries_are_well_formed() -> None:
    assert REGISTER
    for entry in REGISTER:
        assert entry.kind in KINDS, entry.subject
        assert re.fullmatch(r"[0-9a-f]{7,40}", entry.commit), (entry.subject, entry.commit)
        assert entry.subject.strip() and entry.known.strip() and entry.what.strip()
    assert len({entry.subject for entry in REGISTER}) == len(REGISTER)
    with pytest.raises(ValueError, match="kind"):
        PostHoc("x", "hunch", ("wddp.dataset_sizes",), "5001091", "k", "w")
    with pytest.raises(ValueError, match="tuple"):
        PostHoc("x", "margin", [], "5001091", "k", "w")


def test_flags_name_each_entry_once_and_nothing_for_an_untouched_claim() -> None:
    text = flags("wddp.equal_at_u1_accuracy")
    assert "margin set after results (5001091)" in text
    assert "reading set after results (5001091)" in text
    assert text.count("reading set after results (5001091)") == 1
    assert (
        flags("dp_iadmm.fig6_objt_insensitive") == "form set after results (cf51cb3)"
    )  # the engine revision only
    assert flags("no.such.claim") == ""


def test_the_docs_page_holds_the_register_table_verbatim() -> None:
    table = register_markdown()
    assert table.startswith("| subject | kind | claims |")
    assert len(table.splitlines()) == len(REGISTER) + 2
    assert table in (ROOT / "docs" / "post_hoc.md").read_text(encoding="utf-8")


def test_the_module_imports_nothing_from_dpdl() -> None:
    tree = ast.parse(Path(post_hoc.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("dpdl"), node.module
        elif isinstance(node, ast.Import):
            assert not any(alias.name.startswith("dpdl") for alias in node.names)


def test_the_wddp_accuracy_margin_says_what_it_is() -> None:
    from dpdl.studies.wddp.claims import MARGIN_ACCURACY

    assert "post hoc" in MARGIN_ACCURACY
    assert "print resolution" not in MARGIN_ACCURACY and "before any result" not in MARGIN_ACCURACY
    assert any(entry.subject == "wddp accuracy margin 0.01" for entry in REGISTER)
