# `snakemake --report report.html` packs the files at the paths of this config's jobs, whichever config
# wrote them (every config writes to results/ and figures/). So it refuses, in one line and before any
# warning, while a job of the config it names is out of date or not built: the report is always of that
# config's finished build. `--report-after-run` builds first, then reports.
import snakemake.report as snakemake_report

from dpdl.report import report_refusal


def report_of_this_config(make_report):
    """Snakemake's report step, preceded by the check that every job of the DAG is finished."""

    async def auto_report(dag, *args, **kwargs):
        stale = list(dag.needrun_jobs())
        if stale:
            rules = [job.rule.name for job in stale]
            sys.exit(report_refusal(rules, workflow.config_settings.configfiles))
        return await make_report(dag, *args, **kwargs)

    return auto_report


snakemake_report.auto_report = report_of_this_config(snakemake_report.auto_report)
