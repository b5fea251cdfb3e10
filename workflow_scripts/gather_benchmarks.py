"""Rule benchmarks: the jobs' benchmark files → results/benchmarks.tsv, its per-rule sums (with
the start-up, CPU time and peak memory that the job logs record) and its CPU time per family."""

from pathlib import Path

from polyvse.io import write_tsv
from polyvse.logs import job_log
from polyvse.report.benchmarks import (
    benchmark_summary,
    cpu_by_family,
    cpu_by_rule,
    gather_benchmarks,
    peak_rss_by_rule,
    startup_by_rule,
)

with job_log(snakemake.log[0], "benchmarks") as log:
    jobs = gather_benchmarks(Path(snakemake.params.root))
    logs = Path(snakemake.params.logs)
    summary = benchmark_summary(jobs, startup_by_rule(logs), cpu_by_rule(logs), peak_rss_by_rule(logs))
    log.info(
        "%d jobs of %d rules, %.0f s of job time:\n%s",
        len(jobs),
        len(summary),
        jobs["seconds"].sum(),
        summary.to_string(index=False),
    )
    write_tsv(jobs, snakemake.output.jobs)
    write_tsv(summary, snakemake.output.summary)
    write_tsv(cpu_by_family(jobs, snakemake.params.variant_families, logs), snakemake.output.by_family)
