# The grounded-speech branch (speech_grounding_thesis_2021; docs/architecture.md, The DAG):
# spoken captions → log-Mel stores → one training per speech variant → retrieval
# between every view pair → the thesis' Tables 3.1-3.4, 4.1, 5.1.


rule utterances:
    """Spoken captions → utterances.parquet (image_id, split, lang, path): synthetic datasets
    speak one caption per image and language with espeak-ng into wav/{lang}/; places_speech
    checks every wav of the user's list (a bad file fails with its path)."""
    input:
        unpack(utterances_inputs),
    output:
        f"{R}/{{dataset}}/utterances.parquet",
    log:
        "logs/{dataset}/utterances.log",
    benchmark:
        "benchmarks/utterances/{dataset}.tsv"
    priority: PRIORITY["upstream"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["features"]["threads"]
    resources:
        mem_mb=config["resources"]["features"]["mem_mb"],
        runtime=config["resources"]["features"]["runtime"],
    params:
        dataset=lambda wc: config["datasets"][wc.dataset],
        tts=config["speech"]["tts"],
        out_dir=lambda wc: f"{R}/{wc.dataset}",
    script:
        "../workflow_scripts/make_utterances.py"


rule logmel:
    """One language's utterances → a memory-mappable log-Mel store (40 bins, 25 ms / 10 ms, thesis §2.4.2.1);
    the log reports the throughput in utterances per second."""
    input:
        utterances=f"{R}/{{dataset}}/utterances.parquet",
    output:
        f"{R}/{{dataset}}/logmel/{{lang}}.npz",
    log:
        "logs/{dataset}/logmel_{lang}.log",
    benchmark:
        "benchmarks/logmel/{dataset}/{lang}.tsv"
    priority: PRIORITY["upstream"]
    conda:
        "../envs/polyvse.yaml"
    threads: config["resources"]["features"]["threads"]
    resources:
        mem_mb=config["resources"]["features"]["mem_mb"],
        runtime=config["resources"]["features"]["runtime"],
    params:
        root=lambda wc: f"{R}/{wc.dataset}",
    script:
        "../workflow_scripts/extract_logmel.py"


# One definition for a variant trained alone (rule speech_train) and a seed group (speech_train_seeds):
# see rules/train.smk.
for grouped in (False, True):

    rule:
        """Each grounded-speech training of the group (thesis §3.1.2): checkpoints every epoch,
        resumes after a kill, keeps the best epoch by validation recall, then measures test retrieval
        between every pair of views (§3.1.3: R@1/5/10 per direction and averaged over both, median
        ranks, the best epoch). Requests a GPU on a cluster; CPU otherwise."""
        name:
            training_rule("speech_train", grouped)
        input:
            unpack(speech_view_inputs),
        output:
            model=trainings(f"{R}/{{dataset}}/speech/{{variant}}{{seed}}/model.pt", grouped),
            epochs=trainings(f"{R}/{{dataset}}/speech/{{variant}}{{seed}}/epochs.tsv", grouped),
            params=trainings(f"{R}/{{dataset}}/speech/{{variant}}{{seed}}/params.json", grouped),
            evaluation=trainings(f"{R}/{{dataset}}/speech/{{variant}}{{seed}}/eval.tsv", grouped),
        log:
            f"logs/{{dataset}}/{training_rule('speech_train', grouped)}_{{variant}}.log",
        benchmark:
            f"benchmarks/{training_rule('speech_train', grouped)}/{{dataset}}/{{variant}}.tsv"
        wildcard_constraints:
            variant=names_regex(trained_as(family_variants(config, SPEECH_FAMILY), grouped)),
        priority: PRIORITY["long_training"]
        conda:
            "../envs/polyvse.yaml"
        threads: config["resources"]["speech_train"]["threads"]
        resources:
            **training_resources("speech_train", trainings=group_size(grouped)),
        params:
            settings=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: speech_variant_settings(config, v)
            ),
            checkpoint_dir=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: f"{R}/{wc.dataset}/speech/{v}/checkpoint"
            ),
        script:
            "../workflow_scripts/speech_train.py"


rule speech_table:
    """A thesis table: a row per variant, R@1/5/10 of the image and cross-lingual view pairs, the best epoch."""
    input:
        evals=speech_report_files("evals"),
        params=speech_report_files("params"),
    output:
        tsv=report(f"{R}/{{speech_report}}.tsv", category="Speech tables", caption="../report/speech_table.rst"),
        md=report(f"{R}/{{speech_report}}.md", category="Speech tables", caption="../report/speech_table.rst"),
    log:
        "logs/report_{speech_report}.log",
    wildcard_constraints:
        speech_report=names_regex(speech_reports()),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        report=lambda wc: config["reports"][wc.speech_report],
        variants=lambda wc: speech_report_variants(config, wc.speech_report),
        dataset=lambda wc: speech_report_dataset(config, wc.speech_report),
        langs=lambda wc: config["datasets"][speech_report_dataset(config, wc.speech_report)]["langs"],
    script:
        "../workflow_scripts/make_speech_table.py"


# a table is a few lines of pandas: no cluster submission for it
localrules:
    speech_table,


rule speech_gallery:
    """A thesis table's model with the best image retrieval hearing spoken test captions, gallery.per_lang
    in each language: each query (its transcript) beside its top gallery.top_k test images, the image it
    describes outlined (polyvse.report.gallery)."""
    input:
        unpack(lambda wc: image_feature_files(speech_report_dataset(config, wc.speech_report))),
        evals=speech_report_files("evals"),
        models=speech_report_files("models"),
        utterances=lambda wc: f"{R}/{speech_report_dataset(config, wc.speech_report)}/utterances.parquet",
        captions=lambda wc: f"{R}/{speech_report_dataset(config, wc.speech_report)}/captions.parquet",
        images=lambda wc: f"{R}/{speech_report_dataset(config, wc.speech_report)}/images.parquet",
    output:
        report(f"{R}/gallery/{{speech_report}}.png", category="Gallery", caption="../report/gallery.rst"),
    log:
        "logs/gallery_{speech_report}.log",
    benchmark:
        "benchmarks/speech_gallery/{speech_report}.tsv"
    wildcard_constraints:
        speech_report=names_regex(speech_reports()),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        variants=lambda wc: speech_report_variants(config, wc.speech_report),
        per_lang=config["gallery"]["per_lang"],
        top_k=config["gallery"]["top_k"],
        cap_idx=config["speech"]["tts"]["cap_idx"],
        seed=config["seed"],
    script:
        "../workflow_scripts/make_speech_gallery.py"
