# toy: release the Laplace-noised mean at every epsilon and seed (one job), draw its figure, judge its
# claims. Each rule calls one `dpdl toy <step>`; paths come from toy.grid.
from toy import grid as toy_grid


# Every release of the grid, its per-seed table and the figure's band table.
rule toy_release:
    input:
        data="data/processed/toy/synthetic.npz",
        card="data/processed/toy/synthetic.json",
    output:
        seeds=toy_grid.SEEDS_TABLE,
        bands=toy_grid.BANDS_TABLE,
    log:
        "logs/toy/release.log",
    localrule: True
    threads: 1
    params:
        settings=toy_grid.settings_json(config),
    shell:
        "python -m dpdl toy release --settings {params.settings:q} --data {input.data} --card {input.card}"
        " --out {output.seeds} {output.bands} > {log} 2>&1"


# The figure, from its band table.
rule toy_figure:
    input:
        rules.toy_release.output.bands,
    output:
        png=toy_grid.figure_paths("error")[0],
        pdf=toy_grid.figure_paths("error")[1],
    log:
        "logs/toy/figure.log",
    localrule: True
    threads: 1
    shell:
        "python -m dpdl toy figure --aggregate {input} --out {output.png} {output.pdf} > {log} 2>&1"


# The claims, judged on the per-seed table.
rule toy_claims:
    input:
        rules.toy_release.output.seeds,
    output:
        csv="results/claims/toy.csv",
        md="results/claims/toy.md",
    log:
        "logs/toy/claims.log",
    localrule: True
    threads: 1
    params:
        settings=toy_grid.settings_json(config),
    shell:
        "python -m dpdl toy claims --settings {params.settings:q} --aggregate {input}"
        " --out {output.csv} {output.md} > {log} 2>&1"
