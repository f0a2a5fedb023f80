# Data: verified raw files -> prepared arrays per dataset -> the datasets table (a paper's own tables from its
# datasets' cards, its CARD_TABLES, are rules of its rule file).


# Fetch (cache, mirror, sources; verified) and prepare one dataset: arrays and JSON card.
rule data_prepare:
    output:
        arrays="data/processed/{study}/{dataset}.npz",
        card="data/processed/{study}/{dataset}.json",
    log:
        "logs/data/prepare/{study}/{dataset}.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    params:
        options=get_prepare_options,
        mirror=get_mirror_option,
    shell:
        "python -m dpdl prepare {wildcards.study}/{wildcards.dataset} --options {params.options:q}"
        " --out {output.arrays} --card {output.card} {params.mirror} > {log} 2>&1"


# One row per prepared dataset (rows, features, classes, agents, samples per agent).
rule data_datasets_table:
    input:
        cards=get_available_cards,
    output:
        csv=report(
            "results/tables/datasets.csv",
            caption="../report/data/datasets.rst",
            category=paths.report_category("data"),
        ),
        md="results/tables/datasets.md",
    log:
        "logs/data/datasets_table.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        unavailable=get_unavailable,
    shell:
        "python -m dpdl tables datasets --cards {input.cards} --unavailable {params.unavailable}"
        " --out {output.csv} {output.md} > {log} 2>&1"
