"""Rule joint_gallery: an any_to_any report's joint model answering written and spoken test captions →
results/gallery/{a2a_report}.png."""

from dataclasses import replace
from pathlib import Path

from polyvse.data.tables import read_captions
from polyvse.logs import job_log
from polyvse.query import embed_audio, embed_joint_text, open_model, test_images, top_k
from polyvse.report.gallery import GalleryHit, draw_gallery, gallery_queries, spoken_queries
from polyvse.speech.utterances import read_utterances

with job_log(snakemake.log[0], "joint_gallery") as log:
    jm = open_model(Path(snakemake.input.model).parent)
    images = test_images(jm, cache_beside_model=False)
    captions = read_captions(snakemake.input.captions)
    per_lang, seed, k = snakemake.params.per_lang, snakemake.params.seed, snakemake.params.top_k
    rows = []
    for query in gallery_queries(captions, jm.text_langs, len(jm.text_langs), per_lang, seed):
        hits = top_k(embed_joint_text(jm, query.text, query.lang), images, k)
        rows.append((replace(query, text=f"(written) {query.text}"), hits))
    if jm.langs:  # seed + 1: other test images than the written queries' where the split allows
        heard = spoken_queries(
            read_utterances(snakemake.input.utterances), captions, jm.langs, per_lang, seed + 1, jm.cap_idx
        )
        for query, wav in heard:
            hits = top_k(embed_audio(jm, jm.dataset_dir / wav, query.lang), images, k)
            rows.append((replace(query, text=f"(spoken) {query.text}"), hits))
    rows = [(q, [GalleryHit(h.rank, h.id, h.score, h.path) for h in hits]) for q, hits in rows]
    variant = Path(snakemake.input.model).parent.name
    heading = f"{snakemake.wildcards.a2a_report}: {variant}, {len(rows)} written and spoken test captions"
    found = draw_gallery(snakemake.output[0], heading, rows, len(images.ids))
    log.info("%s: %d queries, described image in the top %d for %d", variant, len(rows), k, found)
