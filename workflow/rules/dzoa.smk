# dzoa: Gratton et al., D-ZOA against DP-ADMM on distributed lasso. Centralized solution ->
# calibration (privacy, step constants) -> DP-ADMM tuning -> runs (D-ZOA one job per trial with
# the whole privacy grid, DP-ADMM one job) -> one aggregate per figure and D-ZOA's perturbation
# table -> figures, claims. Each rule writes the paths its output names; the grid points, trials and
# target lists come from dpdl.studies.dzoa.grid; each rule calls one `dpdl dzoa <step>`.
from dpdl.studies.dzoa import grid as dzoa_grid


# The centralized lasso solution (33) of every trial, with its duality-gap certificate.
rule dzoa_centralized:
    input:
        data="data/processed/dzoa/lasso.npz",
        card="data/processed/dzoa/lasso.json",
    output:
        "results/dzoa/centralized.npz",
    log:
        "logs/dzoa/centralized.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=dzoa_grid.settings_json(config),
    shell:
        "python -m dpdl dzoa centralized --settings {params.settings:q} --data {input.data}"
        " --card {input.card} --out {output} > {log} 2>&1"


# Privacy per grid point ((27), (29), RDP and PLD totals) and D-ZOA's step constants alpha0 R.
rule dzoa_calibrate:
    input:
        data="data/processed/dzoa/lasso.npz",
        card="data/processed/dzoa/lasso.json",
        centralized=rules.dzoa_centralized.output[0],
    output:
        json="results/dzoa/calibration.json",
        npz="results/dzoa/calibration.npz",
        table="results/dzoa/aggregates/privacy.csv",
    log:
        "logs/dzoa/calibrate.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=dzoa_grid.settings_json(config),
    shell:
        "python -m dpdl dzoa calibrate --settings {params.settings:q} --data {input.data}"
        " --card {input.card} --centralized {input.centralized}"
        " --out {output.json} {output.npz} {output.table} > {log} 2>&1"


# DP-ADMM's (rho, eta0) per grid point, chosen on the tuning trials only.
rule dzoa_tune:
    input:
        data="data/processed/dzoa/lasso.npz",
        card="data/processed/dzoa/lasso.json",
        centralized=rules.dzoa_centralized.output[0],
        calibration=rules.dzoa_calibrate.output.json,
    output:
        json="results/dzoa/dpadmm_tuning.json",
        table="results/dzoa/aggregates/dpadmm_tuning.csv",
    log:
        "logs/dzoa/tune.log",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        settings=dzoa_grid.settings_json(config),
        trials=" ".join(map(str, dzoa_grid.tuning_trials(config))),
    shell:
        "python -m dpdl dzoa tune --settings {params.settings:q} --data {input.data}"
        " --card {input.card} --centralized {input.centralized} --calibration {input.calibration}"
        " --trials {params.trials} --out {output.json} {output.table} > {log} 2>&1"


# D-ZOA on one evaluation trial, every grid point at once (shared zeroth-order directions).
rule dzoa_run_dzoa:
    input:
        data="data/processed/dzoa/lasso.npz",
        card="data/processed/dzoa/lasso.json",
        centralized=rules.dzoa_centralized.output[0],
        calibration=rules.dzoa_calibrate.output.json,
        steps=rules.dzoa_calibrate.output.npz,
    output:
        expand(
            "results/dzoa/runs/dzoa/{point}/trial{{trial}}.npz",
            point=dzoa_grid.point_labels(config),
        ),
    log:
        "logs/dzoa/run/dzoa/trial{trial}.log",
    benchmark:
        "benchmarks/dzoa/run/dzoa/trial{trial}.tsv"
    wildcard_constraints:
        trial=r"\d{3}",
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        settings=dzoa_grid.settings_json(config),
        trace=dzoa_grid.DZOA_TRACE,  # not passed on: a change reruns runs cached without these columns
    shell:
        "python -m dpdl dzoa run --algorithm dzoa --trials {wildcards.trial} --settings {params.settings:q}"
        " --data {input.data} --card {input.card} --centralized {input.centralized}"
        " --calibration {input.calibration} --calibration-arrays {input.steps} > {log} 2>&1"


# DP-ADMM with the tuned hyperparameters on every evaluation trial and grid point.
rule dzoa_run_dpadmm:
    input:
        data="data/processed/dzoa/lasso.npz",
        card="data/processed/dzoa/lasso.json",
        centralized=rules.dzoa_centralized.output[0],
        calibration=rules.dzoa_calibrate.output.json,
        tuning=rules.dzoa_tune.output.json,
    output:
        expand(
            "results/dzoa/runs/dpadmm/{point}/trial{trial:03d}.npz",
            point=dzoa_grid.point_labels(config),
            trial=dzoa_grid.evaluation_trials(config),
        ),
    log:
        "logs/dzoa/run/dpadmm.log",
    benchmark:
        "benchmarks/dzoa/run/dpadmm.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        settings=dzoa_grid.settings_json(config),
        trials=" ".join(map(str, dzoa_grid.evaluation_trials(config))),
    shell:
        "python -m dpdl dzoa run --algorithm dpadmm --trials {params.trials} --settings {params.settings:q}"
        " --data {input.data} --card {input.card} --centralized {input.centralized}"
        " --calibration {input.calibration} --tuning {input.tuning} > {log} 2>&1"


# Per figure: mean and 20/80 percentile bands over evaluation trials (the figure draws them) and,
# from the same read of the runs, the per-seed table the claims are judged from (fig1: the
# graph's edges only). The command is given the trials, not the run list (227 KB of paths for the
# paper grid's fig3a).
for dzoa_figure in dzoa_grid.FIGURES:

    rule:
        name:
            f"dzoa_aggregate_{dzoa_figure}"
        input:
            runs=dzoa_grid.figure_run_paths(
                dzoa_grid.settings(config),
                dzoa_grid.evaluation_trials(config),
                dzoa_figure,
            ),
        output:
            f"results/dzoa/aggregates/{dzoa_figure}.csv",
            # and, for a figure whose claims are judged on it, the per-seed table
            (
                [f"results/dzoa/aggregates/{dzoa_figure}_seeds.csv"]
                if dzoa_figure in dzoa_grid.SEED_FIGURES
                else []
            ),
        log:
            f"logs/dzoa/aggregate/{dzoa_figure}.log",
        localrule: True
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            figure=dzoa_figure,
            settings=dzoa_grid.settings_json(config),
            agents=config["data"]["lasso"]["agents"],
            trials=" ".join(map(str, dzoa_grid.evaluation_trials(config))),
        shell:
            "python -m dpdl dzoa aggregate {params.figure} --settings {params.settings:q}"
            " --agents {params.agents} --trials {params.trials} --out {output} > {log} 2>&1"


# D-ZOA's realised zeroth-order perturbation (the runs' trace columns) against the sigma_k of (25)
# that each grid point's epsilon assumes, one row per run and agent.
rule dzoa_perturbation:
    input:
        runs=dzoa_grid.evaluation_run_paths(
            dzoa_grid.settings(config), dzoa_grid.evaluation_trials(config)
        ),
    output:
        "results/dzoa/aggregates/perturbation.csv",
    log:
        "logs/dzoa/aggregate/perturbation.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=dzoa_grid.settings_json(config),
        trials=" ".join(map(str, dzoa_grid.evaluation_trials(config))),
    shell:
        "python -m dpdl dzoa perturbation --settings {params.settings:q} --trials {params.trials}"
        " --out {output} > {log} 2>&1"


# One rule per figure (each with its report caption), drawn from the figure's aggregate only.
for dzoa_figure in dzoa_grid.FIGURES:

    rule:
        name:
            f"dzoa_figure_{dzoa_figure}"
        input:
            f"results/dzoa/aggregates/{dzoa_figure}.csv",
        output:
            png=report(
                f"figures/dzoa/{dzoa_figure}.png",
                caption=f"../report/dzoa/{dzoa_figure}.rst",
                category=paths.report_category("dzoa"),
            ),
            pdf=f"figures/dzoa/{dzoa_figure}.pdf",
        log:
            f"logs/dzoa/figure/{dzoa_figure}.log",
        localrule: True
        conda:
            "../../environment.yml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            figure=dzoa_figure,
        shell:
            "python -m dpdl dzoa figure {params.figure} --aggregate {input}"
            " --out {output.png} {output.pdf} > {log} 2>&1"


# The paper's claims judged on the per-seed tables, the privacy table and the perturbation table by
# the one verdict engine (scale: evaluation trials, iterations, grids).
rule dzoa_claims:
    input:
        fig2_seeds="results/dzoa/aggregates/fig2_seeds.csv",
        fig3a_seeds="results/dzoa/aggregates/fig3a_seeds.csv",
        fig3b_seeds="results/dzoa/aggregates/fig3b_seeds.csv",
        privacy=rules.dzoa_calibrate.output.table,
        perturbation=rules.dzoa_perturbation.output[0],
    output:
        csv="results/claims/dzoa.csv",
        md="results/claims/dzoa.md",
    log:
        "logs/dzoa/claims.log",
    localrule: True
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=dzoa_grid.settings_json(config),
        trials=len(dzoa_grid.evaluation_trials(config)),
    shell:
        "python -m dpdl dzoa claims --settings {params.settings:q} --trials {params.trials}"
        " --aggregates fig2_seeds={input.fig2_seeds} fig3a_seeds={input.fig3a_seeds}"
        " fig3b_seeds={input.fig3b_seeds} privacy={input.privacy} perturbation={input.perturbation}"
        " --out {output.csv} {output.md} > {log} 2>&1"
