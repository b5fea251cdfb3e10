"""Rule any_to_any: per-seed any-to-any evaluations of the joint and separate models → results/any_to_any.{tsv,md}."""

import pandas as pd

from polyvse.io import write_text, write_tsv
from polyvse.logs import job_log
from polyvse.report.any_to_any import any_to_any_findings, any_to_any_markdown, any_to_any_table
from polyvse.evaluate.views import ordered_from_view_pairs

with job_log(snakemake.log[0], "any_to_any") as log:
    langs = list(snakemake.params.langs)
    # params.models names its evaluations by the same path strings as input.evals
    frames = {str(p): pd.read_csv(p, sep="\t") for p in snakemake.input.evals}
    # a thesis model's evaluation has a row per unordered view pair, both directions in it
    speech_views = {"image": "image", **{lang: f"speech-{lang}" for lang in langs}}
    for m in snakemake.params.models:
        if m["kind"] == "speech":
            for p in m["evals"]:
                frames[str(p)] = ordered_from_view_pairs(frames[str(p)], speech_views)
    models = [(m["name"], [frames[str(p)] for p in m["evals"]]) for m in snakemake.params.models]
    labels = [label for label, _ in models]
    table = any_to_any_table(models, langs)
    n_test = int(next(iter(frames.values()))["n"].iloc[0])
    notes = [
        f"Dataset {snakemake.params.dataset}: {n_test} test images; chance R@10 = {100 * 10 / n_test:.1f} %.",
        *snakemake.params.notes,
    ]
    findings = any_to_any_findings(table, labels)
    write_tsv(table, snakemake.output.tsv, float_format="%.2f")
    write_text(any_to_any_markdown(table, labels, snakemake.params.caption, notes, findings), snakemake.output.md)
    log.info("\n%s", table.to_string(index=False))
    for line in findings:
        log.info("%s", line)
