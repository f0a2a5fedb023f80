# dvp_pvp: Zhang & Zhu, DVP and PVP for network ADMM on Adult. eta selection (non-private runs, or
# each algorithm's own with eta: tuned_per_algorithm) -> runs (one job per algorithm and alpha over
# the seeds; one rho-selection job per algorithm; one run artifact per run) -> one aggregate per
# figure -> figures, tables, claims. A run job's outputs come from dpdl.studies.dvp_pvp.grid, in the
# order of the command's --seeds/--etas/--rho-exponents (a test keeps the two in step); every other
# rule writes the paths its output names. Target lists and input functions live in the grid too.
from functools import partial

from dpdl.studies.dvp_pvp import grid as dvp_pvp_grid

DVP_PVP = dvp_pvp_grid.settings(config)
DVP_PVP_ARRAYS = "data/processed/dvp_pvp/adult.npz"
DVP_PVP_CARD = "data/processed/dvp_pvp/adult.json"


# The non-private runs of the eta grid (seed 0), for the eta selection (G14); one job.
rule dvp_pvp_eta_runs:
    input:
        arrays=DVP_PVP_ARRAYS,
        card=DVP_PVP_CARD,
    output:
        dvp_pvp_grid.eta_job_outputs(DVP_PVP),
    log:
        "logs/dvp_pvp/eta_runs.log",
    benchmark:
        "benchmarks/dvp_pvp/eta_runs.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=30,
    params:
        settings=dvp_pvp_grid.run_settings_json(config),
        grid=dvp_pvp_grid.job_arguments(DVP_PVP, "eta"),
    shell:
        "python -m dpdl dvp_pvp run --arrays {input.arrays} --card {input.card} --algorithm nonprivate"
        " --alpha inf {params.grid} --purpose eta_selection"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# The eta whose non-private run ends closest to the centralized optimum, and its table.
rule dvp_pvp_select_eta:
    input:
        runs=partial(dvp_pvp_grid.eta_runs_input, DVP_PVP),
    output:
        eta="results/dvp_pvp/eta.json",
        csv="results/tables/dvp_pvp/eta_selection.csv",
        md="results/tables/dvp_pvp/eta_selection.md",
    log:
        "logs/dvp_pvp/select_eta.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "python -m dpdl dvp_pvp select-eta --runs {input.runs} --out {output.eta}"
        " --table {output.csv} {output.md} > {log} 2>&1"


# eta tuned per algorithm (eta: tuned_per_algorithm): one algorithm's runs at every eta of the grid,
# at its own rho and C^R and the rho selection's alpha and seeds (C Section 5.3's rho protocol).
rule dvp_pvp_eta_runs_own:
    input:
        arrays=DVP_PVP_ARRAYS,
        card=DVP_PVP_CARD,
    output:
        dvp_pvp_grid.own_eta_job_outputs(DVP_PVP),
    log:
        "logs/dvp_pvp/eta_runs_own/{algorithm}.log",
    benchmark:
        "benchmarks/dvp_pvp/eta_runs_own/{algorithm}.tsv"
    wildcard_constraints:
        algorithm="nonprivate|dvp|pvp",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=120,
    params:
        settings=dvp_pvp_grid.run_settings_json(config),
        alpha=partial(dvp_pvp_grid.eta_alpha_param, DVP_PVP),
        grid=dvp_pvp_grid.job_arguments(DVP_PVP, "eta_own"),
    shell:
        "python -m dpdl dvp_pvp run --arrays {input.arrays} --card {input.card}"
        " --algorithm {wildcards.algorithm} --alpha {params.alpha} {params.grid} --purpose eta_selection"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# The eta with one algorithm's smallest mean final training loss, and its table.
rule dvp_pvp_select_eta_own:
    input:
        runs=partial(dvp_pvp_grid.own_eta_runs_input, DVP_PVP),
    output:
        eta="results/dvp_pvp/eta/{algorithm}.json",
        csv="results/tables/dvp_pvp/eta_selection_{algorithm}.csv",
        md="results/tables/dvp_pvp/eta_selection_{algorithm}.md",
    log:
        "logs/dvp_pvp/select_eta_own/{algorithm}.log",
    wildcard_constraints:
        algorithm="nonprivate|dvp|pvp",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    shell:
        "python -m dpdl dvp_pvp select-eta --criterion final_loss --runs {input.runs} --out {output.eta}"
        " --table {output.csv} {output.md} > {log} 2>&1"


# The runs of one algorithm at one per-iteration alpha ("inf": non-private), one per seed.
rule dvp_pvp_run:
    input:
        arrays=DVP_PVP_ARRAYS,
        card=DVP_PVP_CARD,
        eta=partial(dvp_pvp_grid.eta_file_input, DVP_PVP),
    output:
        dvp_pvp_grid.run_job_outputs(DVP_PVP),
    log:
        "logs/dvp_pvp/run/{algorithm}/eps{alpha}.log",
    benchmark:
        "benchmarks/dvp_pvp/run/{algorithm}/eps{alpha}.tsv"
    wildcard_constraints:
        algorithm="nonprivate|dvp|pvp",
        alpha="inf|[0-9.e+-]+",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=60,
    params:
        settings=dvp_pvp_grid.run_settings_json(config),
        eta=partial(dvp_pvp_grid.eta_option, DVP_PVP),
        grid=dvp_pvp_grid.job_arguments(DVP_PVP, "main"),
    shell:
        "python -m dpdl dvp_pvp run --arrays {input.arrays} --card {input.card}"
        " --algorithm {wildcards.algorithm} --alpha {wildcards.alpha} {params.grid} {params.eta}"
        " --settings {params.settings:q} --out {output} > {log} 2>&1"


# The rho selection of one algorithm (Table 1): every log10 rho and seed, at the selection's alpha.
rule dvp_pvp_rho_runs:
    input:
        arrays=DVP_PVP_ARRAYS,
        card=DVP_PVP_CARD,
        eta=partial(dvp_pvp_grid.eta_file_input, DVP_PVP),
    output:
        dvp_pvp_grid.rho_job_outputs(DVP_PVP),
    log:
        "logs/dvp_pvp/rho_runs/{algorithm}.log",
    benchmark:
        "benchmarks/dvp_pvp/rho_runs/{algorithm}.tsv"
    wildcard_constraints:
        algorithm="nonprivate|dvp|pvp",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=240,
    params:
        settings=dvp_pvp_grid.run_settings_json(config),
        eta=partial(dvp_pvp_grid.eta_option, DVP_PVP),
        alpha=partial(dvp_pvp_grid.rho_alpha_param, DVP_PVP),
        grid=dvp_pvp_grid.job_arguments(DVP_PVP, "rho"),
    shell:
        "python -m dpdl dvp_pvp run --arrays {input.arrays} --card {input.card}"
        " --algorithm {wildcards.algorithm} --alpha {params.alpha} {params.grid}"
        " --purpose rho_selection {params.eta} --settings {params.settings:q} --out {output} > {log} 2>&1"


# Mean and 20/80 percentile bands over seeds of what one figure shows, with its runs' privacy (for
# the figure), and the per-seed values of the same runs (for the claims).
rule dvp_pvp_aggregate:
    input:
        runs=partial(dvp_pvp_grid.figure_runs_input, DVP_PVP),
    output:
        bands="results/dvp_pvp/aggregates/{figure}.csv",
        seeds="results/dvp_pvp/aggregates/{figure}_seeds.csv",
    log:
        "logs/dvp_pvp/aggregate/{figure}.log",
    wildcard_constraints:
        figure="|".join(dvp_pvp_grid.FIGURES),
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        settings=dvp_pvp_grid.settings_json(config),
    shell:
        "python -m dpdl dvp_pvp aggregate {wildcards.figure} --runs {input.runs}"
        " --settings {params.settings:q} --out {output.bands} --seeds-out {output.seeds} > {log} 2>&1"


# One rule per figure (each with its report caption), drawn from the figure's aggregate only.
for dvp_pvp_figure in dvp_pvp_grid.FIGURES:

    rule:
        name:
            f"dvp_pvp_figure_{dvp_pvp_figure}"
        input:
            f"results/dvp_pvp/aggregates/{dvp_pvp_figure}.csv",
        output:
            png=report(
                f"figures/dvp_pvp/{dvp_pvp_figure}.png",
                caption=f"../report/dvp_pvp/{dvp_pvp_figure}.rst",
                category=paths.report_category("dvp_pvp"),
            ),
            pdf=f"figures/dvp_pvp/{dvp_pvp_figure}.pdf",
        log:
            f"logs/dvp_pvp/figure/{dvp_pvp_figure}.log",
        localrule: True
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            figure=dvp_pvp_figure,
        shell:
            "python -m dpdl dvp_pvp figure {params.figure} --aggregate {input}"
            " --out {output.png} {output.pdf} > {log} 2>&1"


# Tables 1-2, the optimal alpha, the calibration diagnostic and the privacy side table.
rule dvp_pvp_table:
    input:
        partial(dvp_pvp_grid.table_input, DVP_PVP),
    output:
        csv="results/tables/dvp_pvp/{table}.csv",
        md="results/tables/dvp_pvp/{table}.md",
    log:
        "logs/dvp_pvp/table/{table}.log",
    wildcard_constraints:
        table="table1_rho|table2_cr|optimal_alpha|calibration|privacy",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=dvp_pvp_grid.settings_json(config),
    shell:
        "python -m dpdl dvp_pvp table {wildcards.table} --inputs {input}"
        " --settings {params.settings:q} --out {output.csv} {output.md} > {log} 2>&1"


# The paper's claims judged by dpdl.verdicts on the per-seed tables (scale: iterations, seeds, grids).
rule dvp_pvp_claims:
    input:
        **dvp_pvp_grid.claim_inputs(),
        card=DVP_PVP_CARD,
    output:
        csv="results/claims/dvp_pvp.csv",
        md="results/claims/dvp_pvp.md",
    log:
        "logs/dvp_pvp/claims.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        settings=dvp_pvp_grid.settings_json(config),
        scale=dvp_pvp_grid.claim_scale_json(config),
        aggregates=dvp_pvp_grid.claims_aggregates_option(),
    shell:
        "python -m dpdl dvp_pvp claims --aggregates {params.aggregates} --settings {params.settings:q}"
        " --scale {params.scale:q} --card {input.card} --out {output.csv} {output.md} > {log} 2>&1"
