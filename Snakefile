# polyvse: multilingual, visually grounded embeddings of text and speech.
# The rules are thin: inputs, outputs, resources, a log and one script each;
# all logic lives in the polyvse library (tests/ covers it).

from snakemake.utils import min_version

min_version("9.0")


# The default config is the embedded synthetic data. A --configfile replaces it
# entirely (a paper config is complete); use --config key=value for small changes.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/translate.smk"
include: "rules/image_features.smk"
include: "rules/text_features.smk"
include: "rules/pretrain.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"
include: "rules/report.smk"
include: "rules/speech.smk"
include: "rules/mlmme.smk"
include: "rules/translator.smk"


# Trivial jobs run beside snakemake instead of costing a cluster submission each.
localrules: all, table, figure, vocab, mlmme_table, translator_curve


rule all:
    input:
        all_targets(),
    default_target: True
