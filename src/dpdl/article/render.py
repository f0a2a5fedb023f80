"""An article's blocks as Markdown, as one self-contained HTML page, and its ReScience C ``metadata.yaml``."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd
import yaml

from dpdl.article.blocks import Block
from dpdl.article.front_matter import REPLICATION_TYPE, citation
from dpdl.io import markdown_table, markdown_text
from dpdl.studies import study_module


def markdown(blocks: list[Block]) -> str:
    """The article as Markdown; figures as links relative to the study folder."""
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"{'#' * block.level} {markdown_text(block.text)}\n")
        elif block.kind == "text":
            parts.append(markdown_text(block.text) + "\n")
        elif block.kind == "list":
            parts.append("".join(f"- {markdown_text(item)}\n" for item in block.items))
        elif block.kind == "table":
            parts.append(markdown_table(block.table) if len(block.table) else "none\n")
        else:
            parts.append(f"![{block.text}]({block.text})\n")
    return "\n".join(parts)


STYLE = (
    "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;"
    "padding:0 "
    "1em;color:#212529;line-height:1.5}table{border-collapse:collapse;font-size:0.85em;margin:1em "
    "0}th,td{border:1px solid #dee2e6;padding:0.3em "
    "0.5em;vertical-align:top}th{background:#f8f9fa}img{max-width:100%}h1,h2,h3{color:#343a40}"
)


def html_page(blocks: list[Block], folder: Path) -> str:
    """The article as one self-contained HTML page: figures inline as data URIs, no external URL."""
    parts = []
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif block.kind == "text":
            parts.append(f"<p>{html.escape(block.text)}</p>")
        elif block.kind == "list":
            parts.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in block.items) + "</ul>")
        elif block.kind == "table":
            parts.append(_html_table(block.table))
        else:
            data = base64.b64encode((folder / block.text).read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img alt="{html.escape(block.text)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(block.text)}</figcaption></figure>"
            )
    title_text = html.escape(blocks[0].text)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title_text}</title>'
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def _html_table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "<p>none</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def metadata(study: str, blocks: list[Block], manifest: dict) -> str:
    """ReScience C ``metadata.yaml``: the authors left for the user to fill in."""
    ref = study_module(study).REFERENCE
    data = {
        "title": blocks[0].text,
        "authors": [
            {
                "name": "(your name)",
                "orcid": "(your ORCID)",
                "email": "(your email)",
                "affiliations": "(your affiliation)",
            }
        ],
        "type": "Replication",
        "language": "Python",
        "domain": "Differential privacy; distributed machine learning",
        "replication": {"cite": citation(ref), "bib": ref.locator, "url": "", "doi": ""},
        "code": {"url": "", "commit": manifest["code"]["commit"]},
        "data": {"url": "", "doi": "", "path": f"published/{study}/"},
        "replication type": REPLICATION_TYPE,
    }
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
