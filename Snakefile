# polyvse: multilingual, visually grounded embeddings of text and speech.
# The rules are thin: inputs, outputs, resources, a log and one script each;
# all logic lives in the polyvse library (tests/ covers it).

import os
import sys

from snakemake.utils import min_version, update_config

min_version("9.0")

# The library is imported from this workflow's own directory, here and in every job's script
# (which inherits PYTHONPATH, in a conda env of envs/polyvse.yaml too): no install of it needed
# beside its dependencies, and a clone runs its own code even where another is installed.
sys.path.insert(0, workflow.basedir)
os.environ.update(PYTHONPATH=os.pathsep.join(filter(None, [workflow.basedir, os.environ.get("PYTHONPATH")])))


from polyvse.config_files import (
    check_config_arguments,
    config_arguments,
    exit_with,
    load_config_file,
    typed_overrides,
)
from polyvse.errors import ConfigFileError

# The default config is the embedded synthetic data. A --configfile replaces it
# entirely (a paper config is complete); use --config key=value for small changes.
# The config files and the --config values are read again strictly before anything
# uses them: snakemake's reader keeps the last of two equal keys silently. A config
# error ends the run here in one line naming file, line and key (rules/common.smk
# checks the schema and the cross-references the same way).
CONFIG_SOURCES = [str(p) for p in workflow.overwrite_configfiles] or ["config/config.yaml"]
try:
    for _source in CONFIG_SOURCES:
        load_config_file(_source)
    if workflow.is_main_process:
        check_config_arguments(config_arguments(sys.argv[1:]))
except ConfigFileError as _err:
    exit_with(_err)

if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# --config training='{epochs: 30}' arrives with its nested values as text ('30');
# typed again as a config file would type them, they override the config's.
_overrides = typed_overrides(workflow.config_settings.config)
if _overrides:
    update_config(config, _overrides)


include: "rules/common.smk"
include: "rules/run.smk"
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
include: "rules/joint.smk"


# Trivial jobs run beside snakemake instead of costing a cluster submission each.
localrules:
    all,
    data,
    table,
    figure,
    vocab,
    mlmme_table,
    translator_curve,
    provenance,
    benchmarks,


rule all:
    default_target: True
    input:
        all_targets(),
        f"{R}/provenance/run.tsv",  # rules/report.smk: written last, from every result
        f"{R}/benchmarks.tsv",  # rules/report.smk: every job's time and memory


rule data:
    """The data stages alone (datasets, MT, corpora, FastText, PCA, vocabularies, the latent-vocabulary
    pretrainings, image features, log-Mel stores, data statistics, MT quality): every file a training
    or an evaluation reads, nothing trained. `snakemake --cores all data`, e.g. before the trainings
    on GPU nodes, or to measure the data stages of config/scale/m30k.yaml."""
    input:
        data_targets(),
