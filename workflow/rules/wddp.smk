# Study wddp: Kang, Liu & Wang, weighted distributed DP-ERM (Figures 1-16, Table 1). Grids,
# paths, target lists and the input functions (bound to the config and to common.smk's
# get_availability) live in dpdl.studies.wddp.grid; every step is `python -m dpdl wddp <step>`.
from functools import partial

from dpdl.studies.wddp import grid as wddp_grid


# theta*, the non-private optimum of one dataset (trust-exact Newton, ||grad|| < 1e-8).
rule wddp_optimum:
    input:
        data="data/processed/wddp/{dataset}.npz",
        card="data/processed/wddp/{dataset}.json",
    output:
        "results/wddp/optimum/{dataset}.npz",
    log:
        "logs/wddp/optimum/{dataset}.log",
    benchmark:
        "benchmarks/wddp/optimum/{dataset}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp optimum --dataset {wildcards.dataset} --data {input.data} --card {input.card}"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# Each method's step size by K-fold cross-validation on the training set (never the test set).
rule wddp_tune:
    input:
        data="data/processed/wddp/{dataset}.npz",
        card="data/processed/wddp/{dataset}.json",
    output:
        scores="results/wddp/tuning/{dataset}.csv",
        selected="results/wddp/tuning/{dataset}.json",
    log:
        "logs/wddp/tune/{dataset}.log",
    benchmark:
        "benchmarks/wddp/tune/{dataset}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=120,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp tune --dataset {wildcards.dataset} --data {input.data} --card {input.card}"
        " --settings {params.settings:q} --out {output.scores} {output.selected} > {log} 2>&1"


# tuning.protocol per_setting (gap A16): the step sizes of one batch's settings, cross-validated on
# the training set with the batch's own partition rule at each of its epsilons (Experiment A) or u
# (Experiment B). Only requested when the config asks for per_setting.
rule wddp_tune_setting:
    input:
        data="data/processed/wddp/{dataset}.npz",
        card="data/processed/wddp/{dataset}.json",
    output:
        scores="results/wddp/tuning/{dataset}/{batch}.csv",
        selected="results/wddp/tuning/{dataset}/{batch}.json",
    log:
        "logs/wddp/tune/{dataset}/{batch}.log",
    benchmark:
        "benchmarks/wddp/tune/{dataset}/{batch}.tsv"
    wildcard_constraints:
        batch=r"epsilon_m\d+|unevenness_m\d+_eps[0-9.e+-]+",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=120,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp tune --dataset {wildcards.dataset} --batch {wildcards.batch} --data {input.data}"
        " --card {input.card} --settings {params.settings:q} --out {output.scores} {output.selected} > {log} 2>&1"


# Experiment A batch: every method, epsilon and seed at m clients of random sizes (Figs 1, 3-11).
rule wddp_run_epsilon:
    input:
        data="data/processed/wddp/{dataset}.npz",
        card="data/processed/wddp/{dataset}.json",
        tuning=wddp_grid.run_tuning_input(config["wddp"], "epsilon"),
        optimum=rules.wddp_optimum.output[0],
    output:
        expand(
            "results/wddp/runs/{{dataset}}/epsilon_m{{clients}}/{method}/{cell}/seed{seed}.npz",
            method=wddp_grid.PRIVATE_METHODS,
            cell=wddp_grid.batch_cells(config["wddp"], "epsilon"),
            seed=wddp_grid.seeds(config["wddp"]),
        ),
    log:
        "logs/wddp/run/{dataset}/epsilon_m{clients}.log",
    benchmark:
        "benchmarks/wddp/run/{dataset}/epsilon_m{clients}.tsv"
    wildcard_constraints:
        clients=r"\d+",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp run --experiment epsilon --dataset {wildcards.dataset} --clients {wildcards.clients}"
        " --data {input.data} --card {input.card} --tuning {input.tuning} --optimum {input.optimum}"
        " --settings {params.settings:q} > {log} 2>&1"


# Experiment B batch: every method, u and seed at one (m, epsilon) of Figs 2, 12-16. One rule per u grid:
# Breast Cancer and Credit Card run the u up to 5 only (Section 5), the others the whole grid.
for wddp_suffix, wddp_datasets, wddp_cells in wddp_grid.unevenness_rules(
    config["wddp"]
):

    rule:
        name:
            f"wddp_run_unevenness{wddp_suffix}"
        input:
            data="data/processed/wddp/{dataset}.npz",
            card="data/processed/wddp/{dataset}.json",
            tuning=wddp_grid.run_tuning_input(config["wddp"], "unevenness"),
            optimum=rules.wddp_optimum.output[0],
        output:
            expand(
                "results/wddp/runs/{{dataset}}/unevenness_m{{clients}}_eps{{epsilon}}/{method}/{cell}/seed{seed}.npz",
                method=wddp_grid.PRIVATE_METHODS,
                cell=wddp_cells,
                seed=wddp_grid.seeds(config["wddp"]),
            ),
        log:
            "logs/wddp/run/{dataset}/unevenness_m{clients}_eps{epsilon}.log",
        benchmark:
            "benchmarks/wddp/run/{dataset}/unevenness_m{clients}_eps{epsilon}.tsv"
        wildcard_constraints:
            dataset="|".join(wddp_datasets),
            clients=r"\d+",
            epsilon=r"[0-9.e+-]+",
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=6000,
            runtime=120,
        params:
            settings=wddp_grid.settings_json(config),
        shell:
            "python -m dpdl wddp run --experiment unevenness --dataset {wildcards.dataset} --clients {wildcards.clients}"
            " --epsilon {wildcards.epsilon} --data {input.data} --card {input.card} --tuning {input.tuning}"
            " --optimum {input.optimum} --settings {params.settings:q} > {log} 2>&1"


# One figure's two tables from one read of its runs: the tidy aggregate (mean and 20/80
# percentile band over seeds at round T, which the figure draws) and the per-seed values (which
# the claims are judged from).
rule wddp_aggregate:
    input:
        runs=partial(wddp_grid.figure_runs_input, config["wddp"], get_availability),
        optima=partial(wddp_grid.optima_input, get_availability),
    output:
        aggregate="results/wddp/aggregates/{figure}.csv",
        seeds="results/wddp/aggregates/{figure}_seeds.csv",
    log:
        "logs/wddp/aggregate/{figure}.log",
    wildcard_constraints:
        figure=r"fig\d\d",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m dpdl wddp aggregate {wildcards.figure} --runs {input.runs} --optima {input.optima}"
        " --out {output.aggregate} --seeds-out {output.seeds} > {log} 2>&1"


# One rule per figure (PNG + PDF, one panel per dataset), each with its own report caption.
for wddp_figure in wddp_grid.FIGURES:

    rule:
        name:
            f"wddp_figure_{wddp_figure}"
        input:
            f"results/wddp/aggregates/{wddp_figure}.csv",
        output:
            png=report(
                f"figures/wddp/{wddp_figure}.png",
                caption=f"../report/wddp/{wddp_figure}.rst",
                category=paths.report_category("wddp"),
            ),
            pdf=f"figures/wddp/{wddp_figure}.pdf",
        log:
            f"logs/wddp/figure/{wddp_figure}.log",
        localrule: True
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        params:
            figure=wddp_figure,
        shell:
            "python -m dpdl wddp figure {params.figure} --aggregate {input}"
            " --out {output.png} {output.pdf} > {log} 2>&1"


# Table 1: the paper's bounds as text and the sigma of every experiment cell.
rule wddp_table1:
    input:
        cards=partial(wddp_grid.cards_input, get_availability),
    output:
        csv="results/tables/wddp/table1.csv",
        md="results/tables/wddp/table1.md",
    log:
        "logs/wddp/table1.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp table1 --cards {input.cards} --settings {params.settings:q}"
        " --out {output.csv} {output.md} > {log} 2>&1"


# The claims scorecard, judged from the per-seed tables (and the dataset cards, for the sizes).
rule wddp_claims:
    input:
        seeds=wddp_grid.seeds_targets(config["wddp"]),
        cards=partial(wddp_grid.cards_input, get_availability),
    output:
        csv="results/claims/wddp.csv",
        md="results/claims/wddp.md",
    log:
        "logs/wddp/claims.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=wddp_grid.settings_json(config),
    shell:
        "python -m dpdl wddp claims --seeds {input.seeds} --cards {input.cards} --settings {params.settings:q}"
        " --out {output.csv} {output.md} > {log} 2>&1"
