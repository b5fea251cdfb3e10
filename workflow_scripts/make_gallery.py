"""Rule gallery: a text table's best model answering test captions → results/gallery/{report}.png."""

from pathlib import Path

import pandas as pd

from polyvse.data.tables import read_captions
from polyvse.errors import InputError
from polyvse.logs import job_log
from polyvse.query import embed_text, open_model, test_images, top_k
from polyvse.report.gallery import GalleryHit, draw_gallery, gallery_queries, gallery_variant

with job_log(snakemake.log[0], "gallery") as log:
    candidates = snakemake.params.candidates
    evaluations = {
        v: pd.read_csv(p, sep="\t", keep_default_na=False)
        for v, p in zip(candidates, snakemake.input.evals, strict=True)
    }
    variant = gallery_variant(candidates, evaluations)
    model_dir = Path(snakemake.input.models[candidates.index(variant)]).parent
    tm = open_model(model_dir)
    images = test_images(tm, cache_beside_model=False)

    embedded = {}  # (text, lang) -> the query's embedding, computed once while choosing the queries

    def readable(text: str, lang: str) -> bool:
        try:
            embedded[text, lang] = embed_text(tm, text, lang)
        except InputError:  # no word of it in the model's vocabulary
            return False
        return True

    queries = gallery_queries(
        read_captions(tm.dataset_dir / "captions.parquet"),
        tm.langs,
        snakemake.params.langs,
        snakemake.params.per_lang,
        snakemake.params.seed,
        readable,
    )
    rows = [
        (
            q,
            [
                GalleryHit(h.rank, h.id, h.score, h.path)
                for h in top_k(embedded[q.text, q.lang], images, snakemake.params.top_k)
            ],
        )
        for q in queries
    ]
    heading = f"{snakemake.wildcards.report}: {variant}, {len(queries)} test captions"
    found = draw_gallery(snakemake.output[0], heading, rows, len(images.ids))
    log.info(
        "%s: %d queries, described image in the top %d for %d", variant, len(queries), snakemake.params.top_k, found
    )
