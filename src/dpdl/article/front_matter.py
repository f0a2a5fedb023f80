"""The article's front matter: the original paper's citation, the code, the data.

The citation is the study's ``REFERENCE``.
"""

from __future__ import annotations

from dpdl.article.blocks import Block
from dpdl.studies import study_module
from dpdl.studies.common import PaperReference

REPLICATION_TYPE = "computational: the paper's algorithms and experiments reimplemented from its text"
CODE_REFERENCE = "dpdl (this repository), commit {commit}"


def front_matter(study: str, manifest: dict) -> list[Block]:
    """The authors (left to fill in), the original paper, the code and data, the replication type."""
    ref = study_module(study).REFERENCE
    return [
        Block("text", "Authors: (to be filled in by the authors of this replication; see metadata.yaml)."),
        Block("text", f"Original article: {citation(ref)}"),
        Block(
            "text",
            f"Code: {CODE_REFERENCE.format(commit=manifest['code']['commit'])}; data: the published "
            f"snapshot published/{study}/ (MANIFEST.json lists every file with its sha256).",
        ),
        Block(
            "text",
            f"Replication type: {REPLICATION_TYPE} (the deviations are listed at the end).",
        ),
    ]


def citation(ref: PaperReference) -> str:
    """The original paper as one sentence: its parts, title quoted.

    The front matter and ``metadata.yaml`` both use it.
    """
    return "; ".join(part for part in (ref.authors, f'"{ref.title}"', ref.venue, ref.locator) if part) + "."
