"""An article's files from the snapshot: assembled, written, and checked as ``dpdl check``.

They are assembled from the sections.
"""

from __future__ import annotations

from pathlib import Path

from dpdl.article.blocks import Block
from dpdl.article.deviations import data_deviations, deviations
from dpdl.article.exhibits import exhibit_sections
from dpdl.article.front_matter import front_matter
from dpdl.article.privacy_audit import privacy_audit
from dpdl.article.render import html_page, markdown, metadata
from dpdl.article.reproducibility_summary import reproducibility_summary
from dpdl.article.sensitivity import post_hoc_register, sensitivity
from dpdl.article.snapshot import read_card, snapshot_folder, study_folder
from dpdl.article.title import title
from dpdl.errors import DpdlError
from dpdl.io import read_json, write_text
from dpdl.paths import ARTICLE_FILES, PUBLISHED
from dpdl.publishing.layout import MANIFEST, published_studies


def article_blocks(study: str, out: Path = PUBLISHED) -> list[Block]:
    """The article of ``study`` as blocks, from ``out`` alone."""
    folder = study_folder(study, out)
    manifest = read_json(folder / MANIFEST)
    # the study's claims.csv and its privacy claims, audit-judged
    scorecard = read_card(out / "scorecard.csv")
    card = scorecard[scorecard["study"] == study]
    heading, substantive = title(study, card, out)
    return [
        Block("heading", heading, level=1),
        *front_matter(study, manifest),
        *reproducibility_summary(study, card, substantive, manifest, out),
        *exhibit_sections(card, folder, manifest.get("aggregate_compute")),
        *sensitivity(study, out, manifest),
        *post_hoc_register(study),
        *privacy_audit(card, folder),
        *deviations(card, manifest),
        *data_deviations(card, folder, manifest),
    ]


def article_files(study: str, out: Path = PUBLISHED) -> dict[str, str]:
    """The article's files of ``study`` (name inside ``out/<study>`` -> text), generated from ``out``."""
    folder = study_folder(study, out)
    blocks = article_blocks(study, out)
    texts = (
        markdown(blocks),
        html_page(blocks, folder),
        metadata(study, blocks, read_json(folder / MANIFEST)),
    )
    return dict(zip(ARTICLE_FILES, texts, strict=True))


def write_article(study: str, out: Path = PUBLISHED) -> None:
    """Write :func:`article_files` into ``out/<study>/``, each file atomically (all generated first)."""
    files = article_files(study, out)
    for name, text in files.items():
        write_text(out / study / name, text)


def write_articles(out: Path = PUBLISHED) -> list[str]:
    """Write the article of every study published in ``out``; return the studies written."""
    studies = list(published_studies(snapshot_folder(out)))
    if not studies:
        raise DpdlError(f"{out}: no published study (no <study>/{MANIFEST}); publish one with `dpdl publish`")
    for study in studies:
        write_article(study, out)
    return studies


def article_problems(out: Path = PUBLISHED) -> list[str]:
    """An article missing or not what regenerating it from ``out`` gives, one line each with the fix."""
    problems = []
    for study in published_studies(out):
        try:
            files = article_files(study, out)
        except (DpdlError, KeyError, OSError) as err:
            problems.append(f"{out / study}: the article cannot be generated ({err})")
            continue
        for name, text in files.items():
            path = out / study / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                problems.append(
                    f"{path}: missing or not what regenerating gives; rewrite it with `dpdl article --all`"
                )
    return problems
