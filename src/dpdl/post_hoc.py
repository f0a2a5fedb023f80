"""The post hoc register: every choice that was set or changed after a result relevant to it was known.

A choice is *post hoc* when it was set or changed (its commit) after a paper-scale run, a spot check
or another measured result that bears on it had been seen (``known``, with the commit or published
file it came from). That covers claims (a claim registered, or moved out of the headline,
after its data were seen), claim forms (how a claim is tested), margins and tolerances, the
measured quantity, defaults of the papers' open settings, and readings. Post hoc does not mean
wrong: several entries went *against* the result they followed. It means the choice cannot be read
as a prediction, and each verdict it touches should be read with that in mind.

A claim listed under an entry is one the choice reaches. For a default or a reading, these are
the claims whose published verdict differs between the choice and the alternative reading (see
``published/readings.csv``), plus the claim that motivated it. :data:`REGISTER` is the register,
read from ``post_hoc.yaml`` beside this module (data, one entry per choice); :func:`flags` gives the
short text for one claim, and :func:`register_markdown` writes the table that ``docs/post_hoc.md``
holds. The module imports nothing from :mod:`dpdl`, so any part of the package can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

KINDS = ("claim", "form", "margin", "metric", "default", "reading")
SOURCE = Path(__file__).with_name("post_hoc.yaml")
EVERY = "every {study} claim at baseline"  # an entry's claims item that stands for a study's baseline claims


@dataclass(frozen=True)
class PostHoc:
    """One choice made after a relevant result was known.

    ``subject`` names the choice, ``kind`` is one of :data:`KINDS`, ``claims`` are the affected
    claim ids as registered, ``commit`` is the short hash where the choice was set or changed,
    ``known`` says which result was known then and where it came from, and ``what`` says what
    was set.
    """

    subject: str
    kind: str
    claims: tuple[str, ...]
    commit: str
    known: str
    what: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"post hoc entry {self.subject!r}: kind {self.kind!r} is not one of {KINDS}")
        if not isinstance(self.claims, tuple) or not self.claims:
            raise ValueError(
                f"post hoc entry {self.subject!r}: claims must be a non-empty tuple of claim ids"
            )
        if len(set(self.claims)) != len(self.claims):
            raise ValueError(f"post hoc entry {self.subject!r}: a claim id repeats")


def _load() -> tuple[str, dict[str, tuple[str, ...]], dict[str, str], tuple[PostHoc, ...]]:
    """The register file: the baseline commit and its claims, the claims renamed since, the entries.

    ``baseline_claims`` are every claim id each study registered at ``baseline`` (the commit the
    register was first written against), in order; a claim renamed or merged since is mapped to its
    id now by ``renamed``. An entry's claims item ``every <study> claim at baseline`` stands for
    that study's baseline claims under their ids now.
    """
    data = yaml.safe_load(SOURCE.read_text(encoding="utf-8"))
    baseline = {study: tuple(ids) for study, ids in data["baseline_claims"].items()}
    renamed = dict(data.get("renamed") or {})

    def now(ids) -> tuple[str, ...]:
        return tuple(dict.fromkeys(renamed.get(c, c) for c in ids))

    entries = []
    for entry in data["entries"]:
        claims = []
        for item in entry["claims"]:
            study = next((s for s in baseline if item == EVERY.format(study=s)), None)
            claims.extend(now(baseline[study]) if study else now([item]))
        entries.append(PostHoc(entry["subject"], entry["kind"], tuple(dict.fromkeys(claims)), str(entry["commit"]),
                               entry["known"], entry["what"]))  # fmt: skip
    return str(data["baseline"]), baseline, renamed, tuple(entries)


BASELINE, ALL_CLAIMS, RENAMED, REGISTER = _load()


def study_of(claim_id: str) -> str:
    """The study a claim id belongs to (its prefix)."""
    return claim_id.split(".", 1)[0]


def current_id(claim_id: str) -> str:
    """A baseline claim's id now (renamed or merged since the baseline, or unchanged)."""
    return RENAMED.get(claim_id, claim_id)


def entries_for(claim_id: str) -> tuple[PostHoc, ...]:
    """The register entries that list ``claim_id``."""
    return tuple(entry for entry in REGISTER if claim_id in entry.claims)


def flags(claim_id: str) -> str:
    """The register entries affecting a claim, short and semicolon-joined (empty if none)."""
    texts = [f"{entry.kind} set after results ({entry.commit})" for entry in entries_for(claim_id)]
    return "; ".join(dict.fromkeys(texts))


def _claims_cell(claims: tuple[str, ...]) -> str:
    parts = []
    # the studies in the register's own order (its baseline claims), the others after
    order = list(ALL_CLAIMS)
    for study in sorted(
        {study_of(c) for c in claims}, key=lambda s: order.index(s) if s in order else len(order)
    ):
        mine = [c for c in claims if study_of(c) == study]
        every = {current_id(c) for c in ALL_CLAIMS.get(study, ())}
        if every and set(mine) == every:
            parts.append(f"every {study} claim at {BASELINE} ({len(mine)})")
        else:
            parts.append(", ".join(f"`{c}`" for c in mine))
    return "; ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def register_markdown() -> str:
    """The whole register as a Markdown table, one row per entry in register order."""
    lines = [
        "| subject | kind | claims | commit | known at the time | what was set |",
        "|---|---|---|---|---|---|",
    ]
    for entry in REGISTER:
        cells = (
            entry.subject,
            entry.kind,
            _claims_cell(entry.claims),
            f"`{entry.commit}`",
            entry.known,
            entry.what,
        )
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
