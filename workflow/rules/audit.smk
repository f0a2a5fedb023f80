# The empirical privacy audit (dpdl.audit_report): each study's audited cells run many times on
# two neighbouring datasets (generated: the audit needs no download), and the scores give a 95%
# lower bound on epsilon that can refute the paper's privacy claim. `snakemake audit` builds it, and
# the papers' premises measured on their prepared data (which that needs).


# One study's audit: every cell of dpdl.studies.<study>.audit, `audit.runs` runs per side.
rule audit_study:
    output:
        csv=report(
            paths.audit_path("{study}", "csv"),
            caption="../report/summary/audit.rst",
            category=paths.report_category("summary"),
        ),
        md=paths.audit_path("{study}", "md"),
        json=paths.audit_path("{study}", "json"),
    log:
        "logs/audit/{study}.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        runs=config["audit"]["runs"],
        seed=config["audit"]["seed"],
    shell:
        "python -m dpdl audit --study {wildcards.study} --runs {params.runs} --seed {params.seed}"
        " --out {output.csv} {output.md} {output.json} > {log} 2>&1"


# One study's premises measured on every record of its prepared data (dpdl.audit.data_premises): each dataset
# of the study that can be built here; one that cannot gets a row saying why (the data report's line).
rule audit_data_premises:
    input:
        unpack(get_study_prepared_data),
    output:
        paths.data_premises_path("{study}"),
    log:
        "logs/audit/{study}_data_premises.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        skipped=get_study_skipped_data,
    shell:
        "python -m dpdl data-premises --study {wildcards.study} --data {input.arrays}"
        " --skipped {params.skipped:q} --out {output} > {log} 2>&1"


# Every enabled study's audit, and its premises measured on its data.
rule audit:
    input:
        get_all_audits,
