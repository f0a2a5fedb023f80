# dpdl: regenerate the figures and tables of four papers on differentially private distributed
# learning. This file is a table of contents: config, validation, rule files, default target.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# Rules that compute for seconds (aggregates, figures, tables, claims, summaries) are local rules
# (`localrule: True`): under a cluster profile they run beside Snakemake instead of costing a
# queued job each. So are the readings' nested builds, which submit their own jobs (readings.smk).
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


# Every registered study's rule file, in the registry's order (dpdl.studies: ALL, study_files).
for study_rules in STUDY_RULES:

    include: study_rules


include: "workflow/rules/summary.smk"
include: "workflow/rules/readings.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/report.smk"


# Everything the config asks for whose raw data can be obtained here; skipped items are
# reported (with every source tried and how to provide the file) before the run starts.
rule all:
    default_target: True
    input:
        get_final_output,


# At the end, the data summary again: what was built, what was skipped and why.
onsuccess:
    end_replanning()
    print_build_summary("build finished")
    print_scorecard_summary()


onerror:
    end_replanning()
    print_build_summary("build failed (the failed jobs' logs are above)")
