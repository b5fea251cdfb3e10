"""Rule utterances: spoken captions → utterances.parquet (synthetic: espeak-ng wavs; places_speech: the user's list)."""

from pathlib import Path

from polyvse.data.tables import read_captions
from polyvse.io import write_parquet
from polyvse.logs import job_log
from polyvse.speech.tts import VoicePool
from polyvse.speech.utterances import read_utterance_list, synthesize_utterances

# the TTS workers (forkserver) import this file as a module: only the guarded part runs once
if __name__ == "__main__":
    with job_log(snakemake.log[0], "utterances") as log:
        ds, tts = snakemake.params.dataset, snakemake.params.tts
        if ds["adapter"] == "synthetic":
            table, summary = synthesize_utterances(
                read_captions(snakemake.input.captions),
                ds["langs"],
                Path(snakemake.params.out_dir),
                cap_idx=tts["cap_idx"],
                seed=tts["seed"],
                threads=snakemake.threads,
                pool=VoicePool.from_config(tts),
            )
            log.info("espeak-ng: %s", summary)
        else:
            p = ds["places_speech"]
            table, _, counts = read_utterance_list(p["utterances"], ds["langs"], p.get("images_dir"))
            log.info("utterance list %s: %s", p["utterances"], counts)
        log.info(
            "utterances per split and language:\n%s",
            table.groupby(["split", "lang"]).size().unstack(fill_value=0).to_string(),
        )
        write_parquet(table, snakemake.output[0])
