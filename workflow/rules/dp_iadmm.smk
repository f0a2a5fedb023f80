# dp_iadmm: Ryu & Kim, DP inexact ADMM on MNIST and FEMNIST. Runs (one job per dataset, variant
# and epsilon-bar, all seeds at once) -> per figure a per-seed table and its bands over seeds ->
# figures and the Remark 3 table (bands), claims (per-seed values). Each rule writes the paths its
# output names; the grids, settings and input functions live in dpdl.studies.dp_iadmm.grid.
import json
from functools import partial

from dpdl.studies.dp_iadmm import grid as dp_iadmm_grid


# Every seed of one (dataset, variant, epsilon-bar) at T = iterations (Figs 1-4 and 6).
rule dp_iadmm_run:
    input:
        data="data/processed/dp_iadmm/{dataset}.npz",
        card="data/processed/dp_iadmm/{dataset}.json",
    output:
        expand(
            "results/dp_iadmm/runs/main/{{dataset}}/{{variant}}/eps{{epsilon}}/seed{seed}.npz",
            seed=dp_iadmm_grid.seeds(config["dp_iadmm"], "main", "any"),
        ),
    log:
        "logs/dp_iadmm/run/main/{dataset}/{variant}/eps{epsilon}.log",
    benchmark:
        "benchmarks/dp_iadmm/run/main/{dataset}/{variant}/eps{epsilon}.tsv"
    wildcard_constraints:
        variant=dp_iadmm_grid.PRIVATE_VARIANT_REGEX,
        epsilon=dp_iadmm_grid.EPSILON_REGEX,
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=partial(dp_iadmm_grid.run_memory_input, config, "main"),
        runtime=partial(dp_iadmm_grid.run_minutes_input, config, "main"),
        gpu=partial(dp_iadmm_grid.run_gpus_input, config),
    params:
        settings=partial(dp_iadmm_grid.run_settings_param, config, "main"),
    shell:
        "python -m dpdl dp_iadmm run --horizon main --dataset {wildcards.dataset}"
        " --variant {wildcards.variant} --epsilon {wildcards.epsilon} --data {input.data}"
        " --card {input.card} --settings {params.settings:q} --out {output} > {log} 2>&1"


# The non-private reference (nonprivate_algorithm: ObjP, or ObjT, without noise; rho without c2 / epsilon-bar): one run.
rule dp_iadmm_run_nonprivate:
    input:
        data="data/processed/dp_iadmm/{dataset}.npz",
        card="data/processed/dp_iadmm/{dataset}.json",
    output:
        "results/dp_iadmm/runs/main/{dataset}/nonprivate/epsinf/seed0.npz",
    log:
        "logs/dp_iadmm/run/main/{dataset}/nonprivate/epsinf.log",
    benchmark:
        "benchmarks/dp_iadmm/run/main/{dataset}/nonprivate/epsinf.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=partial(dp_iadmm_grid.run_memory_input, config, "main"),
        runtime=partial(dp_iadmm_grid.run_minutes_input, config, "main"),
        gpu=partial(dp_iadmm_grid.run_gpus_input, config),
    params:
        settings=json.dumps(
            dp_iadmm_grid.run_settings(config, "main", dp_iadmm_grid.NONPRIVATE)
        ),
    shell:
        "python -m dpdl dp_iadmm run --horizon main --dataset {wildcards.dataset}"
        " --variant nonprivate --epsilon inf --data {input.data} --card {input.card}"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# ObjP and OutP without noise (Section 4: "OutP and ObjP are equivalent in a nonprivate setting"): one run each.
rule dp_iadmm_run_noiseless:
    input:
        data="data/processed/dp_iadmm/{dataset}.npz",
        card="data/processed/dp_iadmm/{dataset}.json",
    output:
        "results/dp_iadmm/runs/main/{dataset}/nonprivate_{algorithm}/epsinf/seed0.npz",
    log:
        "logs/dp_iadmm/run/main/{dataset}/nonprivate_{algorithm}/epsinf.log",
    benchmark:
        "benchmarks/dp_iadmm/run/main/{dataset}/nonprivate_{algorithm}/epsinf.tsv"
    wildcard_constraints:
        algorithm="objp|outp",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=partial(dp_iadmm_grid.run_memory_input, config, "main"),
        runtime=partial(dp_iadmm_grid.run_minutes_input, config, "main"),
        gpu=partial(dp_iadmm_grid.run_gpus_input, config),
    params:
        settings=partial(dp_iadmm_grid.nonprivate_settings_param, config),
    shell:
        "python -m dpdl dp_iadmm run --horizon main --dataset {wildcards.dataset}"
        " --variant nonprivate_{wildcards.algorithm} --epsilon inf --data {input.data} --card {input.card}"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# Every seed of one (dataset, variant, epsilon-bar) at T = long_iterations (Fig. 5, Remark 3);
# not needed when the config's long horizon equals the main one (the figures read main runs).
if dp_iadmm_grid.long_horizon_distinct(config):

    rule dp_iadmm_run_long:
        input:
            data="data/processed/dp_iadmm/{dataset}.npz",
            card="data/processed/dp_iadmm/{dataset}.json",
        output:
            expand(
                "results/dp_iadmm/runs/long/{{dataset}}/{{variant}}/eps{{epsilon}}/seed{seed}.npz",
                seed=dp_iadmm_grid.seeds(config["dp_iadmm"], "long", "any"),
            ),
        log:
            "logs/dp_iadmm/run/long/{dataset}/{variant}/eps{epsilon}.log",
        benchmark:
            "benchmarks/dp_iadmm/run/long/{dataset}/{variant}/eps{epsilon}.tsv"
        wildcard_constraints:
            variant=dp_iadmm_grid.PRIVATE_VARIANT_REGEX,
            epsilon=dp_iadmm_grid.EPSILON_REGEX,
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=partial(dp_iadmm_grid.run_memory_input, config, "long"),
            runtime=partial(dp_iadmm_grid.run_minutes_input, config, "long"),
            gpu=partial(dp_iadmm_grid.run_gpus_input, config),
        params:
            settings=partial(dp_iadmm_grid.run_settings_param, config, "long"),
        shell:
            "python -m dpdl dp_iadmm run --horizon long --dataset {wildcards.dataset}"
            " --variant {wildcards.variant} --epsilon {wildcards.epsilon} --data {input.data}"
            " --card {input.card} --settings {params.settings:q} --out {output} > {log} 2>&1"


# The per-seed values (for the claims) and the mean and 20/80 percentile bands over seeds (for the
# figures) of what one figure (or Remark 3, or the noiseless runs) shows, from the same runs.
rule dp_iadmm_aggregate:
    input:
        runs=partial(dp_iadmm_grid.figure_runs_input, config, get_availability),
    output:
        bands="results/dp_iadmm/aggregates/{figure}.csv",
        seeds="results/dp_iadmm/aggregates/{figure}_seeds.csv",
    log:
        "logs/dp_iadmm/aggregate/{figure}.log",
    wildcard_constraints:
        figure="|".join(dp_iadmm_grid.AGGREGATES),
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "python -m dpdl dp_iadmm aggregate {wildcards.figure} --runs {input.runs}"
        " --out {output.bands} --seeds-out {output.seeds} > {log} 2>&1"


# One rule per figure (each with its report caption), drawn from the figure's aggregate only; a note names
# the cells of its grid the config's cells leave out.
dp_iadmm_gaps = dp_iadmm_grid.grid_gaps(config["dp_iadmm"])
for dp_iadmm_figure in dp_iadmm_grid.FIGURES:

    rule:
        name:
            f"dp_iadmm_figure_{dp_iadmm_figure}"
        input:
            f"results/dp_iadmm/aggregates/{dp_iadmm_figure}.csv",
        output:
            png=report(
                f"figures/dp_iadmm/{dp_iadmm_figure}.png",
                caption=f"../report/dp_iadmm/{dp_iadmm_figure}.rst",
                category=paths.report_category("dp_iadmm"),
            ),
            pdf=f"figures/dp_iadmm/{dp_iadmm_figure}.pdf",
        log:
            f"logs/dp_iadmm/figure/{dp_iadmm_figure}.log",
        localrule: True
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            figure=dp_iadmm_figure,
            not_run=json.dumps(dp_iadmm_gaps.get(dp_iadmm_figure, [])),
        shell:
            "python -m dpdl dp_iadmm figure {params.figure} --aggregate {input}"
            " --not-run {params.not_run:q} --out {output.png} {output.pdf} > {log} 2>&1"


# Remark 3 (MNIST, long horizon, epsilon-bar 0.01): final testing errors beside the paper's.
rule dp_iadmm_remark3:
    input:
        "results/dp_iadmm/aggregates/remark3.csv",
    output:
        csv=report(
            "results/tables/dp_iadmm/remark3.csv",
            caption="../report/dp_iadmm/remark3.rst",
            category=paths.report_category("dp_iadmm"),
        ),
        md="results/tables/dp_iadmm/remark3.md",
    log:
        "logs/dp_iadmm/remark3.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "python -m dpdl dp_iadmm remark3 --aggregate {input} --out {output.csv} {output.md} > {log} 2>&1"


# The minimiser of (1) on each dataset that can be prepared here (what non-private runs approach).
rule dp_iadmm_optimum:
    input:
        partial(dp_iadmm_grid.optimum_data_input, get_availability),
    output:
        csv=report(
            "results/tables/dp_iadmm/optimum.csv",
            caption="../report/dp_iadmm/optimum.rst",
            category=paths.report_category("dp_iadmm"),
        ),
        md="results/tables/dp_iadmm/optimum.md",
    log:
        "logs/dp_iadmm/optimum.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        settings=json.dumps(dp_iadmm_grid.optimum_settings(config)),
    shell:
        "python -m dpdl dp_iadmm optimum --data {input} --settings {params.settings:q}"
        " --out {output.csv} {output.md} > {log} 2>&1"


# Table 1 (MNIST and FEMNIST) from the datasets' cards, ours beside the paper's: `dpdl tables table1`
# (grid.CARD_TABLES; its name, paths and command as when data.smk held it, so a build keeps its table).
rule data_table1:
    input:
        cards=partial(dp_iadmm_grid.cards_input, get_availability),
    output:
        csv=report(
            "results/tables/dp_iadmm_table1.csv",
            caption="../report/data/table1.rst",
            category=paths.report_category("data"),
        ),
        md="results/tables/dp_iadmm_table1.md",
    log:
        "logs/data/dp_iadmm_table1.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "python -m dpdl tables table1 --cards {input.cards} --out {output.csv} {output.md} > {log} 2>&1"


# The paper's claims judged by the verdict engine on the per-seed tables of the config's grid that can be
# built here (a claim whose cells the grid leaves out: not run at this scale).
rule dp_iadmm_claims:
    input:
        aggregates=partial(
            dp_iadmm_grid.claim_aggregates_input, config, get_availability
        ),
        cards=partial(dp_iadmm_grid.cards_input, get_availability),
    output:
        csv="results/claims/dp_iadmm.csv",
        md="results/claims/dp_iadmm.md",
    log:
        "logs/dp_iadmm/claims.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=json.dumps(dp_iadmm_grid.claim_settings(config)),
    shell:
        "python -m dpdl dp_iadmm claims --aggregates {input.aggregates}"
        " --cards {input.cards} --settings {params.settings:q}"
        " --out {output.csv} {output.md} > {log} 2>&1"
