"""Paths of the build: cross-study artifacts, a study's build layout, the report's sections.

Where the build writes its cross-study artifacts, the layout of a study's build that the top level
reads, and the report's sections they go to.

The rule files, the planner (:mod:`dpdl.targets`) and the steps take these paths from here;
publishing, the readings and the checks find a study's runs, per-seed tables and dataset cards here
(:data:`RUNS`, :data:`AGGREGATES`, :data:`PROCESSED`). The module is light on purpose: the Snakefile
imports it whenever Snakemake parses the workflow (every build, dry run and ``dpdl status``), so it
must not pull in the statistics. A study's own outputs are named in its rule file and its ``grid``
(inside this layout); its scorecard path in :func:`dpdl.studies.common.claims_path`.
"""

from __future__ import annotations

from pathlib import Path

from dpdl.studies import ALL, study_module

RUNS = "results/{study}/runs"  # a study's run files (.npz), in folders of the study's own below it
AGGREGATES = "results/{study}/aggregates"  # a study's per-seed tables and their bands (.csv)
PROCESSED = Path("data/processed")  # prepared datasets: <study>/<dataset>.npz and its card, <dataset>.json
PUBLISHED = Path("published")  # the published snapshot (dpdl publish writes it, dpdl check verifies it)
ARTICLE_FILES = (
    "ARTICLE.md",
    "ARTICLE.html",
    "metadata.yaml",
)  # dpdl.article.write writes them, check regenerates
# Inside a published study folder (published/<study>/): its per-seed tables, and each built
# reading's scorecard (readings/<reading>.csv) and per-seed tables (readings/<reading>/aggregates/)
PUBLISHED_AGGREGATES = "aggregates"
PUBLISHED_READINGS = "readings"
PUBLISHED_DEVIATIONS = "deviations"

# The report's sections, in reading order (Snakemake lists categories by name): the scorecard, one per study,
# the data.
REPORT_CATEGORIES = {
    "summary": "1. Scorecard and privacy",
    **{name: f"{number}. {name}: {study_module(name).TITLE}" for number, name in enumerate(ALL, start=2)},
    "data": f"{len(ALL) + 2}. Datasets and provenance",
}


def run_files(study: str = "*", root: Path = Path()) -> list[Path]:
    """The run files of ``study`` (of every study: ``*``) in the build at ``root``.

    ``root`` is here, or a reading's folder; the files come in the order the file system lists them.
    """
    return list(root.glob(f"{RUNS.format(study=study)}/**/*.npz"))


def is_run_file(path: str, study: str) -> bool:
    """Whether ``path``, as the build names it, is a run file of ``study``.

    The build names a run file ``results/<study>/runs/.../seed0.npz``.
    """
    return path.startswith(f"{RUNS.format(study=study)}/") and path.endswith(".npz")


def aggregates_folder(study: str, root: Path = Path()) -> Path:
    """The folder of ``study``'s per-seed tables in the build at ``root`` (here, or a reading's folder)."""
    return root / AGGREGATES.format(study=study)


def tables_folder(study: str) -> Path:
    """The folder of ``study``'s tables (``results/tables/<study>``; its figures' are ``figures/<study>``)."""
    return Path("results", "tables", study)


def published_reading(reading: str) -> str:
    """A built reading's folder inside a published study folder: ``readings/<reading>``.

    Its scorecard is that name with ``.csv``.
    """
    return f"{PUBLISHED_READINGS}/{reading}"


def published_deviation(name: str) -> str:
    """A declared data deviation's folder inside a published study folder: ``deviations/<name>``.

    It is laid out as the study folder is (``claims.csv``, ``aggregates/``, ``cards/``, ``tables/``,
    ``figures/``), from the deviation's own build.
    """
    return f"{PUBLISHED_DEVIATIONS}/{name}"


def published_aggregate(table: str, reading: str | None = None) -> str:
    """The name inside a published study folder of the per-seed table ``table`` (its file name).

    The main build's is ``aggregates/<table>``; a built ``reading``'s,
    ``readings/<reading>/aggregates/<table>``.
    """
    folder = (
        PUBLISHED_AGGREGATES if reading is None else f"{published_reading(reading)}/{PUBLISHED_AGGREGATES}"
    )
    return f"{folder}/{table}"


def cards_folder(study: str) -> Path:
    """The folder of ``study``'s prepared datasets and their cards."""
    return PROCESSED / study


def published_verdict_inputs(wildcards: object = None) -> list[str]:
    """The published snapshot's files the build's scorecard reads its verdicts from, those present.

    The files are ``scorecard.csv`` and each study's ``MANIFEST.json``: none in a copy of the
    workflow without ``published/``.
    """
    found = [PUBLISHED / "scorecard.csv", *(PUBLISHED / study / "MANIFEST.json" for study in ALL)]
    return [path.as_posix() for path in found if path.is_file()]


def config_label(configfiles: list) -> str:
    """The config a Snakemake invocation names.

    Its last ``--configfile`` (relative to the working directory where it lies inside), else the
    Snakefile's default, ``config/config.yaml``.
    """
    config = Path(configfiles[-1]).absolute() if configfiles else Path("config/config.yaml").absolute()
    return (config.relative_to(Path.cwd()) if config.is_relative_to(Path.cwd()) else config).as_posix()


def report_category(section: str) -> str:
    """The report category of a section (``summary``, a study id, ``data``)."""
    return REPORT_CATEGORIES[section]


def scorecard_path(ext: str) -> str:
    """Path of the merged scorecard: ``csv``, ``md`` or ``html`` (the report's first page)."""
    return f"results/claims.{ext}"


def summary_table(name: str, ext: str) -> str:
    """Path of a cross-study table (``privacy``, ``provenance``)."""
    return f"results/tables/{name}.{ext}"


def audit_path(study: str, ext: str) -> str:
    """Path of one study's audit table (``csv`` or ``md``), or of its provenance (``json``).

    The provenance gives the runs, the seed and the CPU time.
    """
    return f"results/audit/{study}.{ext}"


def data_premises_path(study: str) -> str:
    """Path of one study's premises measured on its prepared data (:mod:`dpdl.audit.data_premises`)."""
    return f"results/audit/{study}_data_premises.csv"


def article_paths(out: Path = PUBLISHED) -> list[str]:
    """Every article file of every study (whether published or not): the Snakemake target ``articles``."""
    return [(out / study / name).as_posix() for study in ALL for name in ARTICLE_FILES]
