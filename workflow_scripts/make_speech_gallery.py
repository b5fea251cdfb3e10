"""Rule speech_gallery: a grounded-speech table's best model hearing spoken test captions →
results/gallery/{speech_report}.png."""

from dataclasses import replace
from pathlib import Path

import pandas as pd

from polyvse.data.tables import read_captions
from polyvse.logs import job_log
from polyvse.query import embed_audio, open_model, test_images, top_k
from polyvse.report.gallery import GalleryHit, draw_gallery, speech_gallery_variant, spoken_queries
from polyvse.speech.utterances import read_utterances

with job_log(snakemake.log[0], "speech_gallery") as log:
    variants = snakemake.params.variants
    evaluations = {v: pd.read_csv(p, sep="\t") for v, p in zip(variants, snakemake.input.evals, strict=True)}
    variant = speech_gallery_variant(evaluations)
    sm = open_model(Path(snakemake.input.models[variants.index(variant)]).parent)
    images = test_images(sm, cache_beside_model=False)
    queries = spoken_queries(
        read_utterances(snakemake.input.utterances),
        read_captions(snakemake.input.captions),
        sm.langs,
        snakemake.params.per_lang,
        snakemake.params.seed,
        snakemake.params.cap_idx,
    )
    rows = []
    for query, wav in queries:
        hits = top_k(embed_audio(sm, sm.dataset_dir / wav, query.lang), images, snakemake.params.top_k)
        shown = replace(query, text=f"(spoken) {query.text}")
        rows.append((shown, [GalleryHit(h.rank, h.id, h.score, h.path) for h in hits]))
    heading = f"{snakemake.wildcards.speech_report}: {variant}, {len(rows)} spoken test captions"
    found = draw_gallery(snakemake.output[0], heading, rows, len(images.ids))
    log.info(
        "%s: %d spoken queries, described image in the top %d for %d", variant, len(rows), snakemake.params.top_k, found
    )
