# Validation of the config and the helpers the rules share. Grid expansion and target lists
# live in the dpdl package (dpdl.targets, dpdl.data.prepared), where they are tested.
import functools
import json
import os
import shlex
import sys
import threading
from pathlib import Path

from dpdl import readings as dpdl_readings
from dpdl import paths, targets
from dpdl.paths import article_paths
from dpdl.studies import ALL as STUDIES
from dpdl.studies import prepared_datasets, study_files
from dpdl.config import validate_config
from dpdl.data.fetch import mirror_from
from dpdl.errors import ConfigError

# Jobs write the bytecode of what they import (pandas, scipy, dp_accounting, dpdl) at their first import,
# so later jobs start from it (a run job: 4.9 s instead of 11.8 s on 2 cores) even where
# PYTHONDONTWRITEBYTECODE is set, as the tests do (tests/conftest.py); uv compiles nothing at install
# (pyproject.toml, [tool.uv]).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# dpdl's check (the config files re-read for repeated keys, NaN and infinity, the schema, the
# relations between keys) fills the defaults; a problem stops here, before any job is planned,
# with one line (raising would add Snakemake's file and frame lines). The schema is the one the
# installed dpdl ships (src/dpdl/schemas/config.schema.yaml, found by dpdl.schemas), not a path of
# this folder, so the workflow and the `dpdl` command validate against the same file.
try:
    config.update(validate_config(config, files=workflow.configfiles))
    mirror_from(config["data"]["mirror"])  # a mirror that is set must be a folder
except ConfigError as err:
    sys.exit(f"ConfigError: {err}")


# Each registered study's rule file (dpdl.studies.study_files), included by the Snakefile in the registry's order.
STUDY_RULES = [study_files(study).rules for study in STUDIES]


wildcard_constraints:
    study="|".join(dict.fromkeys(d.study for d in prepared_datasets().values())),
    dataset="|".join(sorted({d.dataset for d in prepared_datasets().values()})),


@functools.cache
def get_availability():
    """Which prepared datasets can be built here (probed once per invocation)."""
    return targets.plan(config, sys.argv)


def get_final_output(wildcards):
    """The default target: buildable prepared datasets and tables; reports what it skips."""
    available = get_availability()
    # missing_shards: fail with a FEMNIST shard missing: one line, as a config error is (above)
    if stop := targets.missing_shards_stop(config, available):
        sys.exit(f"DataUnavailableError: {stop}")
    if available.report():
        print(available.report() + "\n", file=sys.stderr)
    return targets.default_targets(config, available)


def end_replanning():
    """Cancel Snakemake's replanning timers once the build is over (called by the end hooks).

    Snakemake re-plans on a `threading.Timer` every `max-jobs-per-timespan` span (5 s in the profile),
    a non-daemon thread that Python waits for at exit: every build that ran a job ended up to 5 s
    after its last line (tests/workflow/test_pipeline.py, 9 tests of small data builds: 68.9 s
    before, 27.6 s after). The hooks run after the scheduler has returned, so no timer has anything
    left to release."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


def print_build_summary(outcome):
    """At the end of a build that planned with the data: what it built and skipped, and why."""
    # Without a plan in this run (a named target that needs none) there is nothing to repeat.
    if get_availability.cache_info().currsize:
        available = get_availability()
        print(f"\ndpdl: {outcome}. {available.summary()}", file=sys.stderr)
        print(available.report(), file=sys.stderr)


def get_prepare_options(wildcards):
    """A prepared dataset's options as JSON: its config values and, for a FEMNIST built from
    the shards obtainable here, the files it is built without (a change reruns it)."""
    name = f"{wildcards.study}/{wildcards.dataset}"
    opts = targets.prepare_options(name, config, get_availability)
    return json.dumps(opts, sort_keys=True)


def get_mirror_option(wildcards):
    """``--mirror <folder>`` if the config names a mirror (DPDL_DATA_MIRROR still takes precedence)."""
    mirror = config["data"]["mirror"]
    return f"--mirror {shlex.quote(mirror)}" if mirror else ""


def get_available_cards(wildcards):
    """Cards of every prepared dataset of the config that can be built here."""
    return [targets.prepared_card(n) for n in get_availability().buildable]


def get_unavailable(wildcards):
    """Prepared datasets of the config whose raw files cannot be obtained here."""
    return " ".join(get_availability().skipped)


def get_study_scorecards(wildcards):
    """The per-study scorecards the config promises (a study without its data has none)."""
    return targets.study_scorecards(config, get_availability())


def get_study_scorecard_inputs(wildcards):
    """The per-study scorecards, the readings table when the config asks for readings, and the
    audit tables when it enables the audit."""
    inputs = {"claims": get_study_scorecards(wildcards)}
    if config["readings"]:
        inputs["readings"] = dpdl_readings.readings_path("csv")
    if config["audit"]["enabled"]:
        inputs["data_premises"] = targets.data_premise_tables(config)
    return {**inputs, **get_enabled_audits(wildcards)}


def get_enabled_audits(wildcards):
    """``{"audits": [...]}`` when the config enables the audit, else nothing (an optional input)."""
    return (
        {"audits": targets.audit_tables(config)} if config["audit"]["enabled"] else {}
    )


def get_privacy_inputs(wildcards):
    """The run artifacts of the privacy table, and the audit tables when the audit is enabled."""
    return {"runs": get_study_runs(wildcards), **get_enabled_audits(wildcards)}


def get_readings_option(wildcards, input):
    """The ``--readings`` option of a step given the readings table, or nothing."""
    return f"--readings {input.readings}" if "readings" in input.keys() else ""


def get_cards_option(wildcards, input):
    """``study/reading=path`` for each reading's scorecard among a step's inputs (``dpdl readings --cards``)."""
    return " ".join(f"{key}={path}" for key, path in input.items())


def get_audit_option(wildcards, input):
    """The ``--audits`` option of a step given the audit tables, or nothing."""
    return f"--audits {input.audits}" if "audits" in input.keys() else ""


def get_all_audits(wildcards):
    """Every enabled study's audit tables and premises measured on its data (``snakemake audit``, whatever
    ``audit.enabled`` says)."""
    return targets.audit_tables(
        config, ("csv", "md", "json")
    ) + targets.data_premise_tables(config)


def get_data_premises_option(wildcards, input):
    """The ``--data-premises`` option of the scorecard step given the data premise tables, or nothing."""
    return (
        f"--data-premises {input.data_premises}"
        if "data_premises" in input.keys()
        else ""
    )


def get_study_prepared_data(wildcards):
    """``{"arrays": [...], "cards": [...]}``: the study's prepared datasets that can be built here."""
    return targets.study_prepared_data(wildcards.study, get_availability())


def get_study_skipped_data(wildcards):
    """JSON: each prepared dataset of the study that cannot be built here -> the data report's line on it."""
    return json.dumps(
        targets.skipped_data(wildcards.study, get_availability(), config),
        sort_keys=True,
    )


def get_reading_scorecards(wildcards):
    """``<study>__<reading>`` -> the scorecard of every reading of every study with buildable data."""
    return targets.reading_scorecards(config, get_availability())


def get_reading_inputs(wildcards):
    """What a reading's nested build reads: the prepared datasets (built by this workflow first), and
    the main build's runs of its study, which it reuses where its switches do not reach them
    (dpdl.readings.seed_from_main_build); started before them, it would compute them again.
    """
    buildable = set(get_availability().buildable)
    names = [n for n, d in prepared_datasets().items() if d.study == wildcards.study]
    data = [
        f(name)
        for name in names
        if name in buildable
        for f in (targets.prepared_arrays, targets.prepared_card)
    ]
    return data + targets.study_runs(
        {**config, "studies": [wildcards.study]}, buildable
    )


def get_study_runs(wildcards):
    """Every run artifact of the enabled studies whose data can be built here."""
    return targets.study_runs(config, set(get_availability().buildable))


def get_buildable(wildcards):
    """The prepared datasets that can be built here, space-separated."""
    return " ".join(get_availability().buildable)


def print_scorecard_summary():
    """At the end of a build of the default target: where the scorecard is, what it decided at this
    scale and why not more, and where the paper-scale verdicts are (dpdl.summary.decided_lines).
    """
    scorecard = Path(paths.scorecard_path("csv"))
    if get_availability.cache_info().currsize and scorecard.is_file():
        # the statistics: only once the build is done
        from dpdl.summary import end_message

        named = paths.config_label(workflow.config_settings.configfiles)
        print(end_message(scorecard, named), file=sys.stderr)
