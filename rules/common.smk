import re
import sys
from argparse import Namespace
from pathlib import Path

from polyvse.config import (
    described_queries_variant,
    JOINT_FAMILY,
    MLMME_FAMILY,
    PROTOCOLS,
    SPEECH_FAMILY,
    TRANSLATOR_FAMILY,
    WORD_LAYOUTS,
    ConfigError,
    family_variants,
    layout_reports,
    report_extensions,
    figure_sources,
    word_variants,
    pretrain_settings,
    needs_translations,
    human_langs,
    protocol_langs,
    report_datasets,
    report_evaluations,
    report_variants,
    variant_settings,
)
from polyvse.config_files import exit_with, located, read_schema
from polyvse.data.adapters import dataset_settings, raw_files
from polyvse.data.synthetic.corpus import english_share_for
from polyvse.needs import HOW_TO_TRANSLATE, mt_available
from polyvse.report.any_to_any import model_evaluations
from polyvse.plan import build_plan
from polyvse.report.findings import findings_plan, plan_files
from polyvse.report.gallery import gallery_candidates
from polyvse.report.learning import learning_figures, learning_inputs, learning_plan
from polyvse.translate.quality import mt_datasets
from polyvse.speech.settings import (
    speech_report_dataset,
    speech_report_variants,
    speech_variant_dataset,
    speech_variant_settings,
)
from polyvse.train.families import variant_needs
from polyvse.train.joint_settings import joint_variant_settings
from polyvse.train.mlmme_runs import run_settings as mlmme_run_settings, variant_runs
from polyvse.train.translator_runs import needs_source_model, translator_block

# The config: the schema (keys, types; it fills the defaults), then the cross-references
# and the paths names become (polyvse.config). An error is one line naming file, line,
# key and reason (polyvse.config_files), printed alone: not the whole schema and config
# snakemake would print, nor the frame that raised it.
_SCHEMA = read_schema(Path(workflow.basedir) / "config" / "schema.yaml")
try:
    PLAN = build_plan(config, _SCHEMA)
except ConfigError as _err:
    exit_with(located(_err, CONFIG_SOURCES, workflow.config_settings.config))

# Without machine translation (the offline dictionary backend and no dictionaries, on real
# data) the rows, figure points and Translator curve that need it were left out: said here,
# before any job starts (polyvse.needs).
if PLAN.left_out and workflow.is_main_process:
    print(
        "polyvse: no machine translation or dictionaries for this data; left out of this run:\n  "
        + "\n  ".join(PLAN.left_out)
        + f"\n  to run them: {HOW_TO_TRANSLATE}",
        file=sys.stderr,
    )

# Every row a claim of the seed papers compares (polyvse.report.findings), and every model an
# any_to_any report compares, is trained findings.seeds times: the replicas ({variant}-s{k}, seed + k)
# joined the config in build_plan. A variant and its replicas differ in the seed alone: one job trains
# them all, paying the start-up and the reading of the data once (rules train_seeds, speech_train_seeds).
FINDINGS_REPLICAS = PLAN.findings_replicas
SEED_GROUPS = PLAN.seed_groups
SEED_SUFFIXES = PLAN.seed_suffixes

R = config["results_dir"]
BACKBONE = config["image_features"]["backbone"]
FINDINGS_PLAN = findings_plan(PLAN, R)  # what the findings rule reads, once (rules/report.smk)
# every trained model a table or figure reads, seed replicas included (rule learning, rules/report.smk)
LEARNING_PLAN = learning_plan(PLAN, R)
LEARNING_FIGURES = learning_figures(LEARNING_PLAN, R)


def word_reports():
    """The reports of word models (rules/report.smk); each other layout is its family's
    (any_to_any: rules/joint.smk, speech: rules/speech.smk, mlmme, translator_curve)."""
    return layout_reports(config, *WORD_LAYOUTS)


def any_to_any_reports():
    return layout_reports(config, "any_to_any")


def speech_reports():
    return layout_reports(config, "speech")


def joint_variants():
    return family_variants(config, JOINT_FAMILY)


def singly_trained(names):
    """``names`` that train in a job of their own: not in a seed group (rules train, speech_train)."""
    grouped = {m for members in SEED_GROUPS.values() for m in members}
    return [n for n in names if n not in grouped]


def seed_trained(names):
    """``names`` that head a seed group (rules train_seeds, speech_train_seeds)."""
    return [n for n in names if n in SEED_GROUPS]


def per_seed(pattern):
    """``pattern``'s path for every training of a seed group: ``{seed}`` (after ``{variant}``) → "", "-s1", …"""
    return [pattern.replace("{seed}", suffix) for suffix in SEED_SUFFIXES]


def training_rule(family_rule, grouped):
    """The name of ``family_rule``'s training of one variant, or of a seed group (``_seeds``)."""
    return f"{family_rule}_seeds" if grouped else family_rule


def trainings(pattern, grouped):
    """``pattern``'s paths: every training of a seed group (:func:`per_seed`), or the one of a variant
    trained alone."""
    return per_seed(pattern) if grouped else pattern.replace("{seed}", "")


def trained_as(names, grouped):
    """``names`` that head a seed group, or that train alone."""
    return seed_trained(names) if grouped else singly_trained(names)


def group_size(grouped):
    """How many trainings a job of a seed group, or of a variant alone, runs."""
    return len(SEED_SUFFIXES) if grouped else 1


def each_training(name, grouped, what, groups=None):
    """``what(v)`` for every training of the seed group ``name`` heads (in ``groups``, SEED_GROUPS by
    default), or ``what(name)`` alone."""
    return [what(v) for v in (SEED_GROUPS if groups is None else groups)[name]] if grouped else what(name)


def names_regex(names):
    """A wildcard constraint matching exactly the configured ``names`` (nothing when there are none)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    dataset="[A-Za-z0-9_-]+",
    variant="[A-Za-z0-9_-]+",
    lang="[a-z]{2}",
    report=names_regex(word_reports()),
    protocol="|".join(PROTOCOLS),


def all_targets():
    return (
        [f"{R}/{name}.{ext}" for name, rep in config["reports"].items() for ext in report_extensions(rep["layout"])]
        + expand(f"{R}/{{figure}}.{{ext}}", figure=list(config["figures"]), ext=["tsv", "png"])
        + [f"{R}/data_stats.{ext}" for ext in ("tsv", "md") if text_datasets()]  # rules/data.smk
        + [f"{R}/findings.{ext}" for ext in ("tsv", "md") if FINDINGS_PLAN]  # rules/report.smk
        + ([f"{R}/learning.{ext}" for ext in ("tsv", "md")] if LEARNING_PLAN["models"] else [])  # rules/report.smk
        + list(LEARNING_FIGURES.values())  # rules/report.smk
        + [f"{R}/gallery/{report}.png" for report in gallery_reports()]  # rules/report.smk
        + [f"{R}/gallery/{report}.png" for report in speech_gallery_reports()]  # rules/speech.smk
        + [f"{R}/gallery/{report}.png" for report in any_to_any_reports() if config["gallery"]["langs"]]  # joint.smk
        + [f"{R}/described_queries.{ext}" for ext in ("tsv", "md") if described_queries_variant(config)]  # report.smk
    )


def data_targets():
    """What `snakemake data` builds: every file the word models' trainings and their evaluations read
    (captions, MT, vocabularies, FastText and PCA tables, latent-vocabulary pretrainings, image
    features, dictionaries, test and validation translations), what the speech and joint models
    read (utterances, log-Mel stores, human-caption FastText tables), the data statistics and the
    MT quality of every dataset whose tables use MT: the data stages without a training (the
    MLMME and Translator sweeps' own preparation, e.g. the Translator's alignment, is theirs)."""

    def paths(inputs):  # an input function's {name: path or list of paths}, flat
        return [f for value in inputs.values() for f in ([value] if isinstance(value, str) else value)]

    files = [f"{R}/data_stats.tsv"] if text_datasets() else []
    for v in word_variants(config):
        files += paths(train_inputs(Namespace(variant=v, dataset=config["variants"][v]["dataset"])))
    for report in word_reports():
        for v, protocol in report_evaluations(config, report):
            inputs = evaluation_inputs(
                Namespace(variant=v, dataset=config["variants"][v]["dataset"], protocol=protocol)
            )
            files += paths({name: f for name, f in inputs.items() if name != "model"})
    for v in family_variants(config, SPEECH_FAMILY):
        files += paths(speech_view_inputs(Namespace(variant=v, dataset=speech_variant_dataset(config, v))))
    for v in joint_variants():
        files += paths(joint_files(joint_variant_settings(config, v)))
    files += [f"{R}/{ds}/mt_quality.tsv" for report in word_reports() for ds in mt_datasets(config, report)]
    return sorted(set(files))


def gallery_variants(report):
    """The word models a text table's gallery chooses its model from (polyvse.report.gallery)."""
    return gallery_candidates(config["reports"][report]["rows"], config["variants"])


def speech_gallery_reports():
    """The speech tables that get a gallery: every one (gallery.langs 0 draws none)."""
    return speech_reports() if config["gallery"]["langs"] else []


def gallery_reports():
    """The text tables that get a gallery: every one with a row reading one word model directly."""
    if config["gallery"]["langs"] == 0:
        return []
    return [report for report in word_reports() if gallery_variants(report)]


def described_dataset():
    return config["variants"][described_queries_variant(config)]["dataset"]


def described_model_dir():
    return f"{R}/{described_dataset()}/models/{described_queries_variant(config)}"


# Scheduling: of the jobs ready to run, Snakemake starts those of highest priority first. What
# every training waits for (a dataset, its image features, the spoken captions and their log-Mel
# stores) comes first, then the rest of the data preparation (it unlocks the trainings); of the
# trainings, the long ones (a variant's seed group, a speech model: a minute or more each) start
# before the short ones, so that a run does not end on one long job beside an idle core. Measured
# on the default DAG, 2 cores, before priorities: a job ran alone for 266 s of the 48 minutes (the
# image features, and the speech branch's utterances and log-Mel stores, started late among them).
# ----------------------------------------------------------------------------- paths several rules read


def image_feature_files(dataset):
    """The run's image features of ``dataset`` (a name, or "{dataset}" in a rule's pattern) and their ids."""
    base = f"{R}/{dataset}/image_features/{BACKBONE}"
    return {"features": f"{base}.npy", "ids": f"{base}.ids.txt"}


def captions_file(dataset, origin):
    """The captions table of ``dataset`` that a model of ``origin`` reads: the human captions, or those with
    their machine translations (``augmented``)."""
    return f"{R}/{dataset}/{'captions_augmented' if origin == 'augmented' else 'captions'}.parquet"


PRIORITY = {"upstream": 4, "data": 3, "long_training": 2, "training": 1}


def training_resources(kind, threads=None, trainings=1):
    """The resources of every training rule, in one place: resources.<kind> (train or speech_train)
    of the config, and a GPU (profiles/slurm sets gpu: 1 for these rules on a cluster) with the job's
    threads as its CPUs; a job of several ``trainings`` (a seed group) gets the time of them all."""
    res = config["resources"][kind]
    return {
        "gpu": res["gpu"],
        "cpus_per_gpu": threads if threads is not None else res["threads"],
        "mem_mb": res["mem_mb"],
        "runtime": res["runtime"] * trainings,
    }


def variant_dataset(wildcards):
    return config["variants"][wildcards.variant]["dataset"]


def train_vocab_files(wildcards):
    v = config["variants"][wildcards.variant]
    return expand(
        f"{R}/{{dataset}}/vocab/{{origin}}/{{lang}}.tsv",
        dataset=v["dataset"],
        origin="augmented" if v["captions"] == "augmented" else "human",
        lang=v["train_langs"],
    )


def training_captions_file(wildcards):
    v = config["variants"][wildcards.variant]
    return captions_file(v["dataset"], v["captions"])


def report_eval_files(wildcards):
    return [
        f"{R}/{config['variants'][v]['dataset']}/eval/{v}.{p}.tsv"
        for v, p in report_evaluations(config, wildcards.report)
    ]


def figure_eval_files(wildcards):
    return [
        f"{R}/{config['variants'][v]['dataset']}/eval/{v}.{p}.tsv" for v, p in figure_sources(config, wildcards.figure)
    ]


def figure_params_files(wildcards):
    return [
        f"{R}/{config['variants'][v]['dataset']}/models/{v}/params.json"
        for v, _ in figure_sources(config, wildcards.figure)
    ]


def report_params_files(wildcards):
    return [
        f"{R}/{config['variants'][v]['dataset']}/models/{v}/params.json"
        for v in report_variants(config, wildcards.report)
    ]


# ----------------------------------------------------------------------------- rules/translate.smk: input functions


def dictionaries_dir(wildcards):
    """MUSE dictionaries: the config's directory, or the synthetic dataset's own."""
    configured = config["translate"]["dictionaries"]
    if configured:
        return configured
    return f"{R}/{wildcards.dataset}/dictionaries"


def translate_inputs(wildcards):
    """Captions; the offline backends' own dictionaries (synthetic data, unless configured);
    the transfer backend's plan realisations (synthetic data only: real data has no plans
    and gets its word-by-word fallback)."""
    inputs = {"captions": f"{R}/{wildcards.dataset}/captions.parquet"}
    backend = config["translate"]["backend"]
    if backend in ("transfer", "dictionary") and not config["translate"]["dictionaries"]:
        inputs["dictionaries"] = f"{R}/{wildcards.dataset}/dictionaries"
    if backend == "transfer" and config["datasets"][wildcards.dataset]["adapter"] == "synthetic":
        inputs["references"] = f"{R}/{wildcards.dataset}/references.parquet"
    return inputs


# ----------------------------------------------------------------------------- rules/text_features.smk: input functions


def fasttext_inputs(wildcards):
    """The vocabulary, and the user's pretrained file, or else the text-only corpus
    (synthetic datasets with corpus_sentences > 0), or else the training captions."""
    inputs = {"vocab": f"{R}/{wildcards.dataset}/vocab/{wildcards.origin}/{wildcards.lang}.tsv"}
    pretrained = config["fasttext"]["pretrained"].get(wildcards.lang)
    ds = config["datasets"][wildcards.dataset]
    if pretrained:
        inputs["pretrained"] = pretrained
    elif ds["adapter"] == "synthetic" and ds["synthetic"]["corpus_sentences"] > 0:
        inputs["corpus"] = f"{R}/{wildcards.dataset}/corpus/{wildcards.lang}.txt"
    else:
        inputs["captions"] = captions_file(wildcards.dataset, wildcards.origin)
    return inputs


def pca_dims():
    """Every PCA dimension a word table is reduced to: variants' pca_dim (word_vectors pca) and
    HEM's specific_dim, and the Translator's fasttext.pca_dim when it reads PCA vectors. One pca
    job per language reduces its FastText table to all of them (a PCA is a fraction of a
    second; a job's start-up is not)."""
    dims = {variant_needs(variant_settings(config, v)).pca_dim for v in word_variants(config)}
    if any(translator_block(config, v)["word_vectors"] == "pca" for v in family_variants(config, TRANSLATOR_FAMILY)):
        dims.add(config["fasttext"]["pca_dim"])
    return sorted(d for d in dims if d)


def fasttext_mem_mb(wildcards):
    # FastText holds (words + bucket) x dim float32s; a pretrained cc .bin holds 2M words + 2M buckets.
    ft = config["fasttext"]
    rows = 4_000_000 if ft["pretrained"].get(wildcards.lang) else ft["bucket"] + 100_000
    return 1000 + 2 * rows * ft["dim"] * 4 // 2**20


# ----------------------------------------------------------------------------- rules/pretrain.smk: input functions


def pretrain_inputs(wildcards):
    """Training captions, vocabularies and FastText tables of the pretraining's languages."""
    s = pretrain_settings(config, wildcards.name, wildcards.dataset)
    augmented = s["captions"] == "augmented"
    origin = "augmented" if augmented else "human"
    ds = wildcards.dataset
    return {
        "captions": captions_file(ds, origin),
        "vocab": expand(f"{R}/{ds}/vocab/{origin}/{{lang}}.tsv", lang=s["langs"]),
        "fasttext": expand(f"{R}/{ds}/fasttext/{origin}/{{lang}}.npy", lang=s["langs"]),
    }


# ----------------------------------------------------------------------------- rules/train.smk: input functions


def train_inputs(wildcards):
    """Captions, image features and vocabularies, plus what the variant's family
    reads (polyvse.train.families.variant_needs): FastText or PCA tables of its
    languages, a latent-vocabulary pretraining, MUSE dictionaries."""
    v = config["variants"][wildcards.variant]
    ds = v["dataset"]
    inputs = {
        "captions": training_captions_file(wildcards),
        **image_feature_files(ds),
        "vocab": train_vocab_files(wildcards),
    }
    needs = variant_needs(variant_settings(config, wildcards.variant))
    # Word vectors: one FastText table per language, its rows the vocabulary of the largest
    # training captions, human + MT, so that it serves every variant whatever its captions (its
    # vocabulary is a subset); without MT the human captions are the largest. FastText trains
    # on the synthetic dataset's text-only corpus (a stand-in for the papers' pretrained
    # cc.{lang}.300 vectors, trained on Wikipedia), or else on those captions.
    origin = "augmented" if mt_available(config, ds) else "human"
    if needs.fasttext_langs:
        inputs["fasttext"] = expand(f"{R}/{ds}/fasttext/{origin}/{{lang}}.npy", lang=needs.fasttext_langs)
        inputs["fasttext_vocab"] = expand(f"{R}/{ds}/vocab/{origin}/{{lang}}.tsv", lang=needs.fasttext_langs)
    if needs.pca_dim:
        inputs["pca"] = expand(f"{R}/{ds}/fasttext/{origin}/{{lang}}.pca{needs.pca_dim}.npy", lang=needs.pca_langs)
        inputs["fasttext_vocab"] = expand(f"{R}/{ds}/vocab/{origin}/{{lang}}.tsv", lang=needs.pca_langs)
    if needs.pretrain:
        inputs["pretrain"] = f"{R}/{ds}/pretrain/{needs.pretrain}.pt"
    if needs.dictionaries:
        inputs["dictionaries"] = dictionaries_dir(wildcards)
    # the job ends with the test split's direct evaluation (rule evaluate's inputs for that protocol)
    inputs["test_captions"] = evaluation_inputs(
        Namespace(dataset=wildcards.dataset, variant=wildcards.variant, protocol="direct")
    )["captions"]
    return inputs


# ----------------------------------------------------------------------------- rules/evaluate.smk: input functions


def evaluation_inputs(wildcards):
    dataset = wildcards.dataset
    augmented = needs_translations(config, wildcards.variant, wildcards.protocol)
    inputs = {
        "model": f"{R}/{dataset}/models/{wildcards.variant}/model.pt",
        "captions": captions_file(dataset, "augmented" if augmented else "human"),
        **image_feature_files(dataset),
    }
    if wildcards.protocol != "direct":
        inputs["translations"] = f"{R}/{dataset}/test_translations.parquet"
    if wildcards.protocol == "clc_c":
        inputs["val_translations"] = f"{R}/{dataset}/val_translations.parquet"
    return inputs


# ----------------------------------------------------------------------------- rules/speech.smk: input functions


def speech_dataset_langs(wildcards):
    return config["datasets"][wildcards.dataset]["langs"]


def utterances_inputs(wildcards):
    ds = config["datasets"][wildcards.dataset]
    if ds["adapter"] == "places_speech":
        return {"listed": ds["places_speech"]["utterances"]}
    return {"captions": f"{R}/{wildcards.dataset}/captions.parquet"}


def speech_view_inputs(wildcards):
    """What a speech model reads: utterances, every language's log-Mel store, image features."""
    dataset = speech_variant_dataset(config, wildcards.variant)
    if dataset != wildcards.dataset:
        raise ValueError(f"speech variant {wildcards.variant} trains on dataset {dataset}, not {wildcards.dataset}")
    return {
        "utterances": f"{R}/{dataset}/utterances.parquet",
        "logmel": expand(f"{R}/{dataset}/logmel/{{lang}}.npz", lang=config["datasets"][dataset]["langs"]),
        **image_feature_files(dataset),
    }


def speech_report_files(kind):
    def files(wildcards):
        variants = speech_report_variants(config, wildcards.speech_report)
        name = {"evals": "eval.tsv", "params": "params.json", "models": "model.pt"}[kind]
        return [f"{R}/{speech_variant_dataset(config, v)}/speech/{v}/{name}" for v in variants]

    return files


# ----------------------------------------------------------------------------- rules/joint.smk: input functions


def joint_inputs(wildcards):
    """What a joint model reads: captions and image features; for its written languages their
    vocabularies (human captions) and FastText tables; for its spoken ones utterances and log-Mel stores."""
    s = joint_variant_settings(config, wildcards.variant)
    if s["dataset"] != wildcards.dataset:
        raise ValueError(f"joint variant {wildcards.variant} trains on dataset {s['dataset']}, not {wildcards.dataset}")
    return joint_files(s)


def joint_files(s):
    """The files a joint variant of settings ``s`` (joint_variant_settings) reads."""
    ds = s["dataset"]
    inputs = {
        "captions": captions_file(ds, "human"),
        **image_feature_files(ds),
    }
    if s["text_langs"]:
        inputs["vocab"] = expand(f"{R}/{ds}/vocab/human/{{lang}}.tsv", lang=s["text_langs"])
        if s["model"]["text"]["word_vectors"] == "fasttext":
            inputs["fasttext"] = expand(f"{R}/{ds}/fasttext/human/{{lang}}.npy", lang=s["text_langs"])
            inputs["fasttext_vocab"] = inputs["vocab"]
    if s["speech_langs"]:
        inputs["utterances"] = f"{R}/{ds}/utterances.parquet"
        inputs["logmel"] = expand(f"{R}/{ds}/logmel/{{lang}}.npz", lang=s["speech_langs"])
    return inputs


def joint_gallery_inputs(wildcards):
    """The report's joint model (its first row) and what a query to it reads."""
    rep = config["reports"][wildcards.a2a_report]
    variant = rep["rows"][0]["variant"]
    inputs = joint_files(joint_variant_settings(config, variant))
    inputs["model"] = f"{R}/{rep['dataset']}/joint/{variant}/model.pt"
    inputs["images"] = f"{R}/{rep['dataset']}/images.parquet"
    return inputs


def any_to_any_eval_files(wildcards):
    return [path for model in model_evaluations(PLAN, wildcards.a2a_report, R) for path in model["evals"]]


# ----------------------------------------------------------------------------- rules/translator.smk: input functions

TRANSLATOR_DIR = f"{R}/{{dataset}}/translator/{{variant}}"


def translator_dir(wildcards):
    return TRANSLATOR_DIR.format(dataset=wildcards.dataset, variant=wildcards.variant)


def translator_lang(wildcards, role):
    """The variant's source or target language."""
    return translator_block(config, wildcards.variant)[role]


def translator_vectors(wildcards, role, origin):
    """The source's or target's word vectors: FastText, or their PCA (translator.word_vectors)."""
    base = f"{R}/{wildcards.dataset}/fasttext/{origin}/{translator_lang(wildcards, role)}"
    pca = translator_block(config, wildcards.variant)["word_vectors"] == "pca"
    return f"{base}.pca{config['fasttext']['pca_dim']}.npy" if pca else f"{base}.npy"


def translator_target_origin(wildcards):
    return "augmented" if translator_block(config, wildcards.variant)["target_captions"] == "augmented" else "human"


def translator_source_inputs(wildcards):
    """What the Translator's source model reads: image features, the human captions, the source language's
    vocabulary and word vectors."""
    return {
        **image_feature_files(wildcards.dataset),
        "captions": captions_file(wildcards.dataset, "human"),
        "vocab": f"{R}/{wildcards.dataset}/vocab/human/{translator_lang(wildcards, 'source')}.tsv",
        "vectors": translator_vectors(wildcards, "source", "human"),
    }


def translator_train_inputs(wildcards):
    origin = translator_target_origin(wildcards)
    inputs = {
        "captions": captions_file(wildcards.dataset, origin),
        **image_feature_files(wildcards.dataset),
        "vocab": f"{R}/{wildcards.dataset}/vocab/{origin}/{translator_lang(wildcards, 'target')}.tsv",
        "vectors": translator_vectors(wildcards, "target", origin),
    }
    base = translator_dir(wildcards)
    # T1/T2, and FS under image_branch: source
    if needs_source_model(config, wildcards.variant, wildcards.translator_protocol):
        inputs["source"] = f"{base}/source/model.pt"
    if wildcards.translator_protocol == "T2":
        inputs["matrix"] = f"{base}/align/translator.npy"
    return inputs


def translator_report_variant(wildcards):
    return config["reports"][wildcards.translator_report]["rows"][0]["variant"]


def translator_report_dir(wildcards):
    variant = translator_report_variant(wildcards)
    return TRANSLATOR_DIR.format(dataset=config["variants"][variant]["dataset"], variant=variant)


def translator_curve_evals(wildcards):
    block = translator_block(config, translator_report_variant(wildcards))
    return expand(
        f"{translator_report_dir(wildcards)}/{{protocol}}/n{{n}}/eval.tsv",
        protocol=block["protocols"],
        n=sorted(block["examples"]),
    )


# ----------------------------------------------------------------------------- rules/mlmme.smk: input functions


def mlmme_train_inputs(wildcards):
    """What an MLMME or VSE run reads: image features, the human captions and its languages' vocabularies."""
    langs = mlmme_run_settings(config, wildcards.variant, wildcards.mlmme_run)["langs"]
    return {
        **image_feature_files(wildcards.dataset),
        "captions": captions_file(wildcards.dataset, "human"),
        "vocab": expand(f"{R}/{wildcards.dataset}/vocab/human/{{lang}}.tsv", lang=langs),
    }


def mlmme_report_variant(wildcards):
    return config["reports"][wildcards.mlmme_report]["rows"][0]["variant"]


def mlmme_report_files(wildcards, name):
    """``name`` (eval.tsv, params.json) of every run of the report's variant, in column order."""
    variant = mlmme_report_variant(wildcards)
    ds = config["variants"][variant]["dataset"]
    return [f"{R}/{ds}/mlmme/{variant}/{run}/{name}" for run in variant_runs(config, variant)]


def text_datasets():
    """Datasets with caption text (a places_speech dataset has spoken captions only)."""
    return [name for name, ds in config["datasets"].items() if ds["adapter"] != "places_speech"]


def attribute_word_tables(dataset):
    """``{lang: (vectors, vocab)}``: the FastText table of each language of a synthetic ``dataset`` that the
    run builds anyway (data_targets; the MT-augmented captions' where both are), whose colour and shape
    words rule attribute_words measures. Empty for a dataset of real captions or without tables."""
    if config["datasets"][dataset]["adapter"] != "synthetic":
        return {}
    built = set(data_targets())
    tables = {}
    for lang in config["datasets"][dataset]["langs"]:
        for origin in ("augmented", "human"):
            vectors = f"{R}/{dataset}/fasttext/{origin}/{lang}.npy"
            if vectors in built:
                tables[lang] = (vectors, f"{R}/{dataset}/vocab/{origin}/{lang}.tsv")
                break
    return tables


def attribute_word_inputs(wildcards):
    """Rule attribute_words' FastText tables and their vocabularies, in the order of its ``langs``."""
    tables = attribute_word_tables(wildcards.dataset)
    return {"vectors": [v for v, _ in tables.values()], "vocab": [w for _, w in tables.values()]}


def attribute_word_reports():
    """Every dataset's attribute_words.tsv that the data statistics' report shows."""
    return [f"{R}/{ds}/attribute_words.tsv" for ds in text_datasets() if attribute_word_tables(ds)]


def report_mt_quality_files(wildcards):
    """mt_quality.tsv of each dataset whose rows in the report use MT (none: no MT footnote)."""
    return [f"{R}/{ds}/mt_quality.tsv" for ds in mt_datasets(config, wildcards.report)]


def mt_quality_inputs(wildcards):
    """Captions and translation inputs; references only where the data has them (synthetic)."""
    inputs = translate_inputs(wildcards)
    if config["datasets"][wildcards.dataset]["adapter"] == "synthetic":
        inputs["references"] = f"{R}/{wildcards.dataset}/references.parquet"
    return inputs
