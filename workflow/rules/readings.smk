# Readings: every claim judged under each reading of its study, the named sets of values for the
# settings a paper leaves open (dpdl.readings; each study's readings.READINGS). The default reading is
# the main build; each other reading is a nested Snakemake run in results/readings/<study>/<reading>/
# that shares data/ and keeps its own cache.


wildcard_constraints:
    reading="[a-z0-9_]+",


# One study's scorecard under one reading; the nested build uses every core this job holds. A local
# job: on a cluster the nested Snakemake submits its own jobs when SNAKEMAKE_PROFILE names the
# cluster profile (README: cluster use).
rule readings_build:
    input:
        get_reading_inputs,
    output:
        dpdl_readings.reading_scorecard("{study}", "{reading}"),
    log:
        "logs/readings/{study}/{reading}.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: workflow.cores
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        config=json.dumps(config, sort_keys=True),
        snakefile=workflow.main_snakefile,
    shell:
        "python -m dpdl reading-build --study {wildcards.study} --reading {wildcards.reading}"
        " --config {params.config:q} --snakefile {params.snakefile} --cores {threads} > {log} 2>&1"


# Every claim's verdict under every reading, and under how many readings it holds.
rule readings_table:
    input:
        unpack(get_reading_scorecards),
    output:
        csv=report(
            dpdl_readings.readings_path("csv"),
            caption="../report/summary/readings.rst",
            category=paths.report_category("summary"),
        ),
        md=dpdl_readings.readings_path("md"),
    log:
        "logs/summary/readings.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cards=get_cards_option,
    shell:
        "python -m dpdl readings --cards {params.cards} --out {output.csv} {output.md} > {log} 2>&1"


# `snakemake readings`: the readings table (and everything it needs), whatever the config's `readings`.
rule readings:
    input:
        dpdl_readings.readings_path("csv"),
        dpdl_readings.readings_path("md"),
