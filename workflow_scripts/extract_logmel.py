"""Rule logmel: one language's utterances → results/{dataset}/logmel/{lang}.npz (frames + offsets)."""

from polyvse.logs import job_log
from polyvse.speech.store import extract_store, extraction_processes
from polyvse.data.tables import resolve_paths
from polyvse.speech.utterances import read_utterances

# the extraction workers (forkserver) import this file as a module: only the guarded part runs once
if __name__ == "__main__":
    with job_log(snakemake.log[0], "logmel") as log:
        lang = snakemake.wildcards.lang
        utterances = read_utterances(snakemake.input.utterances)
        sub = utterances[utterances["lang"] == lang]
        if sub.empty:
            raise ValueError(f"{snakemake.input.utterances}: no utterance in {lang!r}")
        processes = extraction_processes(len(sub), snakemake.threads)
        stats = extract_store(
            resolve_paths(sub["path"], snakemake.params.root),
            list(sub["image_id"]),
            snakemake.output[0],
            threads=processes,
            desc=f"log-Mel {lang}",
            meta={"dataset": snakemake.wildcards.dataset, "lang": lang},
        )
        log.info(
            "log-Mel %s: %d utterances (%.1f s of audio, %d frames) in %.2f s with %d process(es): %.1f utterances/s",
            lang,
            stats.n_utterances,
            stats.audio_seconds,
            stats.n_frames,
            stats.wall_seconds,
            stats.threads,
            stats.utterances_per_s,
        )
        log.info("throughput %s", stats.as_dict())
