"""The toy's audit: none (no privacy claim is audited; the registry's audit stage asks these names)."""

from __future__ import annotations

PRIVACY_CLAIMS: tuple = ()
AUDIT_CELLS: tuple = ()
PREMISES: tuple = ()
DATA_PREMISES: tuple = ()


def mechanism(section: dict) -> dict:
    """The switch values a build releases with: the toy has none."""
    return {}


def audit_scores(cell, runs: int, seed: int):
    raise NotImplementedError("the toy audits no cell")


def premise_measures(cell) -> dict:
    raise NotImplementedError("the toy audits no cell")
