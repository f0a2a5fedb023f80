# What holds across the four studies: the merged scorecard (the report's first page), the privacy
# of every run, the provenance of the data and software. Paths live in dpdl.paths.


# One row per registered claim of every study: paper value, ours, tolerance, verdict; beside each claim
# the build did not run, the published snapshot's verdict (marked as the snapshot's, with its commit).
rule summary_scorecard:
    input:
        unpack(get_study_scorecard_inputs),
        published=paths.published_verdict_inputs,
    output:
        csv=report(
            paths.scorecard_path("csv"),
            caption="../report/summary/scorecard.rst",
            category=paths.report_category("summary"),
        ),
        md=paths.scorecard_path("md"),
        html=paths.scorecard_path("html"),
    log:
        "logs/summary/scorecard.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        studies=" ".join(config["studies"]),
        readings=get_readings_option,
        audits=get_audit_option,
        data_premises=get_data_premises_option,
        published=paths.PUBLISHED,
    shell:
        "python -m dpdl scorecard --studies {params.studies} --claims {input.claims} {params.readings}"
        " {params.audits} {params.data_premises} --published {params.published}"
        " --out {output.csv} {output.md} {output.html} > {log} 2>&1"


# Privacy per iteration as each paper states it, and composed over every run (RDP, PLD).
rule summary_privacy:
    input:
        unpack(get_privacy_inputs),
    output:
        csv=report(
            paths.summary_table("privacy", "csv"),
            caption="../report/summary/privacy.rst",
            category=paths.report_category("summary"),
        ),
        md=paths.summary_table("privacy", "md"),
    log:
        "logs/summary/privacy.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        config=json.dumps(config, sort_keys=True),
        buildable=get_buildable,
        audits=get_audit_option,
    shell:
        "python -m dpdl privacy-table --config {params.config:q} --buildable {params.buildable}"
        " {params.audits} --out {output.csv} {output.md} > {log} 2>&1"


# The hashes of every raw file and prepared dataset, and the versions of the packages.
rule summary_provenance:
    input:
        cards=get_available_cards,
    output:
        csv=report(
            paths.summary_table("provenance", "csv"),
            caption="../report/summary/provenance.rst",
            category=paths.report_category("data"),
        ),
        md=paths.summary_table("provenance", "md"),
    log:
        "logs/summary/provenance.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "python -m dpdl tables provenance --cards {input.cards} --out {output.csv} {output.md} > {log} 2>&1"


# The replication article of every study (ARTICLE.md, ARTICLE.html, metadata.yaml), from published/ alone.
rule articles:
    input:
        manifests=expand("published/{study}/MANIFEST.json", study=STUDIES),
        merged="published/readings.csv",
    output:
        article_paths(),
    log:
        "logs/summary/articles.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "python -m dpdl article --all --published published > {log} 2>&1"
