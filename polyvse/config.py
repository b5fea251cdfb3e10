"""Checks of a configuration beyond its schema, and per-variant settings.

The schema (config/schema.yaml) checks keys and types; this module checks what
a schema cannot: that names refer to things that exist. Errors name the key.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any


class ConfigError(ValueError):
    """A configuration error; the message starts with the offending key."""

    def __init__(self, key: str, reason: str):
        self.key = key
        super().__init__(f"config key {key}: {reason}")


PROTOCOLS = ("direct", "to_en", "clc_a", "clc_c")
"""Evaluation protocols: queries in their own language; translated into English
(Trans. to En); or each query with its translations into every language of the
model, the scores averaged (CLC-A) or aggregated by the MLP fitted on validation
(CLC-C), SMALR §3.4."""

CLC_PROTOCOLS = ("clc_a", "clc_c")

LATENT_FAMILIES = ("la", "hem", "smalr")
"""Families that start from a latent-vocabulary pretraining (SMALR §3.1)."""

NAME_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
"""Names that become file names under results_dir (reports, figures, pretrainings):
letters, digits, ``_``, ``-`` and ``.``, not starting with a dot (config/schema.yaml
``$defs/name``; a test keeps the two equal)."""

WILDCARD_NAME_PATTERN = r"^[A-Za-z0-9_-]+$"
"""Names that become directories and the ``{dataset}`` / ``{variant}`` wildcards (their
constraint in rules/common.smk has no dot); schema ``$defs/wildcard_name``."""

_NAME_RULES = {
    NAME_PATTERN: "letters, digits, _, - and ., and does not start with a dot",
    WILDCARD_NAME_PATTERN: "letters, digits, _ and - only",
}

NAMED_SECTIONS = {
    "datasets": WILDCARD_NAME_PATTERN,
    "variants": WILDCARD_NAME_PATTERN,
    "pretrain": NAME_PATTERN,
    "reports": NAME_PATTERN,
    "figures": NAME_PATTERN,
}
"""Config sections whose keys are names that become paths, and the pattern of each."""

_PROFILE_HUMAN = {"m30k": ["en", "de", "fr", "cs"], "coco": ["en", "zh", "ja"]}


def dataset_langs(config: Mapping, dataset: str) -> list[str]:
    return list(config["datasets"][dataset].get("langs") or [])


def human_langs(config: Mapping, dataset: str) -> list[str]:
    """Languages with human captions, known from the dataset's adapter and profile."""
    ds = config["datasets"][dataset]
    langs = dataset_langs(config, dataset)
    if ds["adapter"] == "synthetic":
        profile = ds["synthetic"]["profile"]
        human = _PROFILE_HUMAN.get(profile, langs)
    elif ds["adapter"] == "coco":
        human = _PROFILE_HUMAN["coco"]
    else:  # multi30k
        human = _PROFILE_HUMAN["m30k"]
    return [l for l in langs if l in human]


def protocol_langs(config: Mapping, variant: str, protocol: str) -> list[str]:
    """Languages an evaluation covers: the variant's; (to_en) every human language;
    (CLC) the variant's languages with human test captions (SMALR Tables 1-2)."""
    human = human_langs(config, config["variants"][variant]["dataset"])
    if protocol == "to_en":
        return human
    if protocol in CLC_PROTOCOLS:
        return [l for l in variant_eval_langs(config, variant) if l in human]
    return variant_eval_langs(config, variant)


def needs_translations(config: Mapping, variant: str, protocol: str = "direct") -> bool:
    """Whether training or testing this variant needs the translation stage."""
    v = config["variants"][variant]
    human = human_langs(config, v["dataset"])
    return (
        v.get("captions") == "augmented"
        or protocol != "direct"
        or any(l not in human for l in protocol_langs(config, variant, protocol))
    )


def variant_eval_langs(config: Mapping, variant: str) -> list[str]:
    v = config["variants"][variant]
    return list(v.get("eval_langs") or v["train_langs"] or [])


def variant_seed(config: Mapping, variant: Mapping) -> int:
    """A variant's own ``seed`` (a seed replica's, polyvse.report.findings), else the config's."""
    seed = variant.get("seed")
    return int(config.get("seed", 0) if seed is None else seed)


def variant_settings(config: Mapping, variant: str) -> dict[str, Any]:
    """Everything one training run depends on: family defaults and training
    settings merged with the variant's overrides."""
    v = config["variants"][variant]
    model = copy.deepcopy(config.get("models", {}).get(v["model"], {}))
    model.update(v.get("model_options") or {})
    training = copy.deepcopy(config.get("training", {}))
    # the family's own ceiling of epochs and settings, then the variant's
    ceilings = training.pop("epochs_by_family", None) or {}
    if v["model"] in ceilings:
        training["epochs"] = ceilings[v["model"]]
    training.update(copy.deepcopy((training.pop("by_family", None) or {}).get(v["model"], {})))
    training.update(v.get("training_options") or {})
    return {
        "model": v["model"],
        "model_options": model,
        "training": training,
        "train_langs": list(v["train_langs"]),
        "eval_langs": variant_eval_langs(config, variant),
        "captions": v.get("captions", "human"),
        "text": dict(config.get("text", {})),
        "vocabulary": dict(v.get("vocabulary") or {}),
        "seed": variant_seed(config, v),
    }


def pretrain_settings(config: Mapping, name: str, dataset: str) -> dict[str, Any]:
    """One latent-vocabulary pretraining (``pretrain.<name>``) on ``dataset``: its
    settings with ``langs`` resolved (null: every language of the dataset)."""
    settings = copy.deepcopy(dict(config["pretrain"][name]))
    settings["langs"] = list(settings.get("langs") or dataset_langs(config, dataset))
    settings.setdefault("device", config.get("training", {}).get("device", "auto"))
    return settings


WORD_FAMILIES = ("embn", "parallel_embn", "mule", "la", "hem", "smalr", "liwe")
"""The text families of SMALR and MULE (polyvse.models): trained by rules/train.smk, tested by
rules/evaluate.smk, shown by reports of layout smalr, mule and mule_mt."""

JOINT_FAMILY = "joint"
"""Written and spoken captions and images in one space (polyvse.models.joint): rules/joint.smk."""

SPEECH_FAMILY = "speech"
"""The grounded-speech thesis' audio encoders (polyvse.speech): rules/speech.smk."""

MLMME_FAMILY = "mlmme"
"""Calixto et al. 2017's sweep, VSE per language and MLMME per β (polyvse.train.mlmme_runs): rules/mlmme.smk."""

TRANSLATOR_FAMILY = "translator"
"""The Translator poster's curve (polyvse.train.translator_runs): rules/translator.smk."""

WORD_LAYOUTS = ("smalr", "mule", "mule_mt")
"""Report layouts of word models (polyvse.report.tables); every other layout belongs to one family."""

LAYOUT_FAMILIES = {
    "any_to_any": (JOINT_FAMILY, SPEECH_FAMILY),
    "speech": (SPEECH_FAMILY,),
    "mlmme": (MLMME_FAMILY,),
    "translator_curve": (TRANSLATOR_FAMILY,),
    **{layout: WORD_FAMILIES for layout in WORD_LAYOUTS},
}
"""The families whose variants a report of each layout reads."""


def report_extensions(layout: str) -> tuple[str, ...]:
    """The files a report of ``layout`` writes as results/{name}.{ext}: a table and its rendering."""
    return ("tsv", "png") if layout == "translator_curve" else ("tsv", "md")


def family_variants(config: Mapping, *families: str) -> list[str]:
    """The variants of ``families``, in config order."""
    return [name for name, v in (config.get("variants") or {}).items() if v["model"] in families]


def word_variants(config: Mapping) -> list[str]:
    """The variants of the text (word and character) families."""
    return family_variants(config, *WORD_FAMILIES)


def layout_reports(config: Mapping, *layouts: str) -> list[str]:
    """The reports of ``layouts``, in config order."""
    return [name for name, rep in (config.get("reports") or {}).items() if rep.get("layout", "smalr") in layouts]


def report_row_variants(config: Mapping, report: str) -> list[str]:
    """The variants named by a report's rows through ``variant`` (speech, mlmme, translator_curve,
    any_to_any rows), in row order, without repeats."""
    return list(dict.fromkeys(row["variant"] for row in config["reports"][report]["rows"] if row.get("variant")))


def figure_sources(config: Mapping, figure: str) -> list[tuple[str, str]]:
    """(variant, protocol) evaluations a figure reads, without repeats."""
    fig = config["figures"][figure]
    out: list[tuple[str, str]] = []
    for point in fig["points"]:
        refs = list(point.get("variants") or []) + list((point.get("per_dataset") or {}).values())
        for ref in refs:
            if (ref, "direct") not in out:
                out.append((ref, "direct"))
    return out


def row_sources(row: Mapping) -> list[tuple[str, str]]:
    """(variant, protocol) pairs one table row reads."""
    if row.get("per_dataset"):
        return [(c["variant"], c.get("protocol", "direct")) for c in row["per_dataset"].values()]
    protocol = row.get("protocol", "direct")
    if row.get("variant"):
        return [(row["variant"], protocol)]
    return [(v, protocol) for v in row.get("per_language", {}).values()]


def report_evaluations(config: Mapping, report: str) -> list[tuple[str, str]]:
    """(variant, protocol) evaluations a report reads, in row order, without repeats."""
    out: list[tuple[str, str]] = []
    for row in config["reports"][report]["rows"]:
        for pair in row_sources(row):
            if pair not in out:
                out.append(pair)
    return out


def report_variants(config: Mapping, report: str) -> list[str]:
    """Variants a report reads, in row order, without repeats."""
    return list(dict.fromkeys(v for v, _ in report_evaluations(config, report)))


def report_datasets(config: Mapping, report: str) -> list[str]:
    """The datasets of a report's columns: mule_mt's list, a speech, mlmme or translator_curve
    report's variants' (one, checked by their families), else its ``dataset``."""
    rep = config["reports"][report]
    layout = rep.get("layout", "smalr")
    if layout == "mule_mt":
        return list(rep["datasets"])
    if layout in ("speech", "mlmme", "translator_curve"):
        variants = config.get("variants") or {}
        names = [v for v in report_row_variants(config, report) if v in variants]
        return list(dict.fromkeys(variants[v]["dataset"] for v in names))
    return [rep["dataset"]]


def _section(config: Mapping, dotted: str) -> Mapping:
    node: Any = config
    for part in dotted.split("."):
        node = (node or {}).get(part) or {}
    return node


def check_results_dir(results_dir: object) -> str:
    """``results_dir`` if it is a sane output root, else :class:`ConfigError`: a non-empty
    path without ``..`` (it would climb out of where it points), not the working directory
    or ``/`` itself (outputs would mix with the workflow's own files), and without ``{}``
    (snakemake would read them as wildcards) or control characters."""
    key = "results_dir"
    if not isinstance(results_dir, str) or not results_dir.strip():
        raise ConfigError(key, f"{results_dir!r} is not a directory name")
    if any(c in results_dir for c in "{}") or any(ord(c) < 32 for c in results_dir):
        raise ConfigError(key, f"{results_dir!r} holds braces or control characters")
    parts = PurePath(results_dir).parts
    if ".." in parts:
        raise ConfigError(key, f"{results_dir!r} climbs with '..'; give the directory itself")
    if os.path.normpath(results_dir) in (".", os.sep) or PurePath(results_dir).anchor == results_dir:
        raise ConfigError(
            key,
            f"{results_dir!r} is the working directory or a filesystem root; "
            "give a directory of its own (default: results)",
        )
    return results_dir


def output_paths(config: Mapping) -> dict[str, str]:
    """Config key → the path under results_dir its name becomes (a report's table, a
    variant's model directory, ...): what :func:`check_output_paths` keeps inside."""
    r = config.get("results_dir", "results")
    out: dict[str, str] = {}
    for name in config.get("datasets") or {}:
        out[f"datasets.{name}"] = f"{r}/{name}"
    family_dirs = {SPEECH_FAMILY: "speech", MLMME_FAMILY: "mlmme", TRANSLATOR_FAMILY: "translator"}
    for name, v in (config.get("variants") or {}).items():
        out[f"variants.{name}"] = f"{r}/{v.get('dataset', '')}/{family_dirs.get(v.get('model'), 'models')}/{name}"
    for name in config.get("pretrain") or {}:
        out[f"pretrain.{name}"] = f"{r}/dataset/pretrain/{name}.pt"
    for section in ("reports", "figures"):
        for name in _section(config, section):
            out[f"{section}.{name}"] = f"{r}/{name}.tsv"
    return out


def check_output_paths(config: Mapping) -> None:
    """Raise :class:`ConfigError` naming the key whose name would write outside results_dir.

    The schema's name patterns already refuse ``/`` and ``..``; this holds whatever the
    schema says, for every path a name becomes."""
    root = os.path.normpath(check_results_dir(config.get("results_dir", "results")))
    for section, pattern in NAMED_SECTIONS.items():
        for name in _section(config, section):
            if not isinstance(name, str) or not re.match(pattern, name):
                raise ConfigError(
                    f"{section}.{name}",
                    f"bad name {name!r}; a name that becomes a path under results_dir takes {_NAME_RULES[pattern]}",
                )
    for key, path in output_paths(config).items():
        if os.path.commonpath([root, os.path.normpath(path)]) != root or os.path.normpath(path) == root:
            raise ConfigError(key, f"its output {path} is not inside results_dir {root}")


def _check_result_names(config: Mapping) -> None:
    """Tables and figures share results_dir's top level: two of one name would overwrite each other."""
    tables: dict[str, str] = {}
    for section in ("reports", "figures"):
        for name in _section(config, section):
            if name in tables:
                raise ConfigError(
                    f"{section}.{name}", f"{tables[name]}.{name} of the same name writes results/{name}.tsv too"
                )
            tables[name] = section


def _adapter_path(name: str, ds: Mapping, key: str, what: str, exists: Any, kind: str) -> None:
    """A dataset's ``{adapter}.{key}`` path is given and ``exists`` (Path.is_dir or Path.is_file)."""
    adapter = ds["adapter"]
    path = (ds.get(adapter) or {}).get(key)
    if not path:
        raise ConfigError(f"datasets.{name}.{adapter}.{key}", f"adapter {adapter} needs {what}")
    if not exists(Path(path)):
        raise ConfigError(f"datasets.{name}.{adapter}.{key}", f"{kind} {path} does not exist")


PRETRAINED_SUFFIXES = (".bin", ".vec", ".vec.gz")
"""File kinds :func:`polyvse.text.fasttext_vectors.load_pretrained` reads (a ``.bin.gz`` download must be unpacked first)."""


def pretrained_key(lang: str) -> str:
    """The config key naming ``lang``'s pretrained vector file."""
    return f"fasttext.pretrained.{lang}"


def pretrained_suffix(path: Path) -> str:
    """The kind of a pretrained vector file: its suffix among PRETRAINED_SUFFIXES (else its last)."""
    name = path.name.lower()
    return next((s for s in sorted(PRETRAINED_SUFFIXES, key=len, reverse=True) if name.endswith(s)), path.suffix)


def check_pretrained_paths(config: Mapping) -> None:
    """Raise :class:`ConfigError` when a pretrained vector file named in config is
    missing or of a kind that cannot be read. Called at DAG build by
    :func:`check_config`, so nothing trains before the error."""
    pretrained = (config.get("fasttext") or {}).get("pretrained") or {}
    for lang, path in pretrained.items():
        key = pretrained_key(lang)
        if not path:
            raise ConfigError(key, "empty path; name a cc.{lang}.300.bin or .vec file, or remove the key")
        p = Path(path)
        if not p.is_file():
            raise ConfigError(
                key, f"pretrained FastText file {path} does not exist" if not p.exists() else f"{path} is not a file"
            )
        if pretrained_suffix(p) not in PRETRAINED_SUFFIXES:
            hint = " (unpack it with gunzip first)" if p.name.lower().endswith(".bin.gz") else ""
            raise ConfigError(key, f"{path}: expected a FastText .bin model or a .vec/.vec.gz text file{hint}")


def described_queries_variant(config: Mapping) -> str:
    """The word model rule described_queries scores: ``described_queries.variant`` where the config still has
    it and its dataset is synthetic (only the generator's scene plans say which images a query describes);
    else "" (no queries this run)."""
    name = config.get("described_queries", {}).get("variant", "")
    variant = config.get("variants", {}).get(name)
    if not name or variant is None:
        return ""
    return name if config["datasets"][variant["dataset"]]["adapter"] == "synthetic" else ""


def check_described_queries(config: Mapping) -> None:
    """``described_queries.variant`` ("" for none) names a word model that reads words and trains on English.
    On real data the queries are left out (:func:`described_queries_variant`), not refused: a user who
    points the default config's datasets at Multi30K keeps every table."""
    name = config.get("described_queries", {}).get("variant", "")
    if not name:
        return
    key = "described_queries.variant"
    variant = config.get("variants", {}).get(name)
    if variant is None:
        raise ConfigError(key, f"unknown variant {name!r}")
    if variant["model"] not in WORD_FAMILIES or variant["model"] == "liwe":
        raise ConfigError(key, f"{name} is a {variant['model']} model; the queries need a word model (not liwe)")
    if "en" not in (variant.get("train_langs") or []):
        raise ConfigError(key, f"{name} does not train on English, the queries' language")


def check_config(config: Mapping) -> None:
    """Raise :class:`ConfigError` on the first reference to something missing, or the
    first name that would write outside results_dir (:func:`check_output_paths`).

    Checked here is what every family shares: datasets and their files, image features, each variant's
    dataset and languages, each report's datasets and the family of its rows, figures and result names.
    Each family's own check (``polyvse.families``: :func:`check_word_config` for the word families)
    runs next and checks its settings and its tables' rows."""
    check_output_paths(config)
    datasets = config.get("datasets", {})
    if not datasets:
        raise ConfigError("datasets", "no dataset is configured")
    for name, ds in datasets.items():
        if ds["adapter"] == "multi30k":
            _adapter_path(name, ds, "root", "the checkout's path", Path.is_dir, "directory")
        if ds["adapter"] == "places_speech":
            _adapter_path(name, ds, "utterances", "the list", Path.is_file, "file")
        if ds["adapter"] == "coco":
            coco = ds.get("coco") or {}
            needed = {
                "captions_json": True,
                "ja_json": "ja" in ds.get("langs", []),
                "zh_captions": "zh" in ds.get("langs", []),
            }
            for key, required in needed.items():
                path = coco.get(key)
                if required and not path:
                    raise ConfigError(
                        f"datasets.{name}.coco.{key}",
                        "adapter coco needs this file"
                        + ("" if key == "captions_json" else f" for language {key[:2]} in langs"),
                    )
                if path and not Path(path).is_file():
                    raise ConfigError(f"datasets.{name}.coco.{key}", f"file {path} does not exist")
            if "en" not in ds.get("langs", []):
                raise ConfigError(f"datasets.{name}.langs", "adapter coco needs en (the Karpathy JSON's captions)")
    check_pretrained_paths(config)
    feats = config.get("image_features", {})
    if feats.get("backbone") == "precomputed":
        for key in ("precomputed_features", "precomputed_ids"):
            if not feats.get(key):
                raise ConfigError(f"image_features.{key}", "backbone precomputed needs this file")
            if not Path(feats[key]).is_file():
                raise ConfigError(f"image_features.{key}", f"file {feats[key]} does not exist")
    if feats.get("backbone") == "resnet152":
        path = feats.get("weights_path")
        if not path or not Path(path).is_file():
            raise ConfigError(
                "image_features.weights_path",
                f"backbone resnet152 needs local ImageNet weights (torchvision's resnet152 .pth); "
                f"{path!r} is not a file",
            )
    for name, v in config.get("variants", {}).items():
        if v["dataset"] not in datasets:
            raise ConfigError(f"variants.{name}.dataset", f"unknown dataset {v['dataset']!r}")
        langs = dataset_langs(config, v["dataset"])
        listed = list(v.get("train_langs") or []) + list(v.get("eval_langs") or []) + list(v.get("speech_langs") or [])
        for lang in listed:
            if lang not in langs:
                raise ConfigError(f"variants.{name}", f"language {lang!r} is not in datasets.{v['dataset']}.langs")
        if v["model"] == SPEECH_FAMILY:
            if v.get("train_langs"):
                raise ConfigError(
                    f"variants.{name}.train_langs",
                    "a speech variant trains on every language of its dataset; leave train_langs out",
                )
            continue  # its family checks it (polyvse.speech.settings)
        if not v.get("train_langs"):
            raise ConfigError(f"variants.{name}.train_langs", f"model {v['model']} needs its training languages")
    check_described_queries(config)
    for name, rep in config.get("reports", {}).items():
        layout = rep.get("layout", "smalr")
        for ds in report_datasets(config, name):
            if ds not in datasets:
                raise ConfigError(
                    f"reports.{name}.{'datasets' if layout == 'mule_mt' else 'dataset'}", f"unknown dataset {ds!r}"
                )
        if layout not in WORD_LAYOUTS:
            _check_family_rows(config, name)
    _check_figures(config)
    _check_result_names(config)


def _check_by_family(config: Mapping, schema: Mapping | None) -> None:
    """Each value of ``training.by_family`` checked against the schema of the same key of ``training``."""
    if schema is None:
        return
    import jsonschema

    properties = schema["properties"]["training"]["properties"]
    for family, settings in (config.get("training", {}).get("by_family") or {}).items():
        for key, value in settings.items():
            try:
                jsonschema.validate(value, properties[key])
            except jsonschema.ValidationError as exc:
                raise ConfigError(f"training.by_family.{family}.{key}", exc.message) from None


def check_word_config(config: Mapping, schema: Mapping | None = None) -> None:
    """The word families' variants and the reports of their layouts (smalr, mule, mule_mt): settings that
    exist and go together, and rows that read variants of these families with protocols they can run.
    Runs after :func:`check_config` (``polyvse.families`` lists every family's check)."""
    _check_by_family(config, schema)
    for name in word_variants(config):
        v = config["variants"][name]
        if v.get("speech_langs"):
            raise ConfigError(f"variants.{name}.speech_langs", f"model {v['model']} reads no speech; only joint does")
        family = config.get("models", {}).get(v["model"], {})
        for key in v.get("model_options") or {}:
            if key not in family:
                raise ConfigError(f"variants.{name}.model_options.{key}", f"not a setting of model {v['model']}")
        for key in v.get("training_options") or {}:
            if key not in config.get("training", {}):
                raise ConfigError(f"variants.{name}.training_options.{key}", "not a training setting")
        training = variant_settings(config, name)["training"]
        if training.get("neighbour_share", 0) > 0 and training.get("image_captions", "quota") != "every_language":
            raise ConfigError(
                f"variants.{name}",
                "training.neighbour_share > 0 (batches of neighbours) needs training.image_captions: every_language",
            )
        if training.get("weight_decay") and training.get("lazy_word_updates"):
            raise ConfigError(
                f"variants.{name}",
                "weight_decay > 0 with lazy_word_updates: a decay moves every word-table row every step; "
                "set training.lazy_word_updates: false",
            )
    _check_families(config)
    for name in layout_reports(config, *WORD_LAYOUTS):
        rep = config["reports"][name]
        layout = rep.get("layout", "smalr")
        for i, row in enumerate(rep["rows"]):
            key = f"reports.{name}.rows[{i}]"
            given = [k for k in ("variant", "per_language", "per_dataset") if row.get(k)]
            if layout == "mule_mt" and given != ["per_dataset"]:
                raise ConfigError(key, "a mule_mt row gives per_dataset (dataset → variant, protocol)")
            if layout in ("smalr", "mule") and (len(given) != 1 or given == ["per_dataset"]):
                raise ConfigError(key, "give exactly one of variant or per_language")
            for ds in row.get("per_dataset") or {}:
                if ds not in report_datasets(config, name):
                    raise ConfigError(key, f"dataset {ds!r} is not one of reports.{name}.datasets")
            for ref, protocol in row_sources(row):
                if ref not in config.get("variants", {}):
                    raise ConfigError(key, f"unknown variant {ref!r}")
                family = config["variants"][ref]["model"]
                if family not in WORD_FAMILIES:
                    raise ConfigError(key, f"variant {ref!r} is a {family} model; {_layouts_of(family)} reads it")
                v_ds = config["variants"][ref]["dataset"]
                if layout in ("smalr", "mule") and v_ds != rep["dataset"]:
                    raise ConfigError(key, f"variant {ref!r} is trained on another dataset than {rep['dataset']!r}")
                if protocol == "to_en" and "en" not in config["variants"][ref]["train_langs"]:
                    raise ConfigError(key, f"protocol to_en needs a variant trained on English; {ref!r} is not")
                if protocol in CLC_PROTOCOLS and len(config["variants"][ref]["train_langs"]) < 2:
                    raise ConfigError(
                        key,
                        f"protocol {protocol} ensembles a query's translations into the "
                        f"model's languages; {ref!r} has one language",
                    )
            for ds, cell in (row.get("per_dataset") or {}).items():
                if config["variants"][cell["variant"]]["dataset"] != ds:
                    raise ConfigError(key, f"variant {cell['variant']!r} is not trained on dataset {ds!r}")
            for lang, ref in (row.get("per_language") or {}).items():
                if lang not in variant_eval_langs(config, ref):
                    raise ConfigError(key, f"variant {ref!r} is not evaluated on {lang!r}")


def _layouts_of(family: str) -> str:
    layouts = [layout for layout, families in LAYOUT_FAMILIES.items() if family in families]
    return "a report of layout " + " or ".join(layouts)


def _check_family_rows(config: Mapping, report: str) -> None:
    """A report of a family's own layout: every row names one variant of that family (its module checks the rest)."""
    rep = config["reports"][report]
    layout = rep["layout"]
    families = LAYOUT_FAMILIES[layout]
    variants = config.get("variants") or {}
    if not rep["rows"]:
        raise ConfigError(f"reports.{report}.rows", "a report needs a row")
    if layout in ("mlmme", "translator_curve") and len(rep["rows"]) != 1:
        raise ConfigError(f"reports.{report}.rows", f"a {layout} report shows one variant: give one row")
    for i, row in enumerate(rep["rows"]):
        key = f"reports.{report}.rows[{i}]"
        extra = [k for k in ("per_language", "per_dataset") if row.get(k)]
        if extra or not row.get("variant"):
            raise ConfigError(key, f"a {layout} row names one variant (variant), not {', '.join(extra) or 'none'}")
        if row.get("protocol", "direct") != "direct":
            raise ConfigError(f"{key}.protocol", f"a {layout} row takes no protocol")
        ref = row["variant"]
        if ref not in variants:
            raise ConfigError(key, f"unknown variant {ref!r}")
        if variants[ref]["model"] not in families:
            raise ConfigError(
                key,
                f"variant {ref!r} is a {variants[ref]['model']} model; a {layout} report reads {' or '.join(families)}",
            )


def _check_families(config: Mapping) -> None:
    """Variant settings that only make sense together: FastText sizes, latent
    pretrainings, dictionary mapping."""
    ft_dim = (config.get("fasttext") or {}).get("dim", 300)
    pretrain = config.get("pretrain") or {}
    for name in word_variants(config):
        v = config["variants"][name]
        key = f"variants.{name}"
        options = variant_settings(config, name)["model_options"]
        kind = options.get("word_vectors")
        if kind == "fasttext" and "word_dim" in options and int(options["word_dim"]) != int(ft_dim):
            raise ConfigError(
                f"{key}.model_options.word_dim",
                f"word_vectors fasttext needs word_dim = fasttext.dim ({ft_dim}), got "
                f"{options['word_dim']}; or set word_vectors random",
            )
        if kind == "pca" and v["model"] not in ("embn", "mule"):
            raise ConfigError(f"{key}.model_options.word_vectors", f"model {v['model']} takes random or fasttext")
        if kind == "pca" and not options.get("pca_dim"):
            raise ConfigError(f"{key}.model_options.pca_dim", "word_vectors pca needs a PCA dimension")
        if v["model"] in LATENT_FAMILIES:
            ref = options.get("pretrain")
            if ref not in pretrain:
                raise ConfigError(
                    f"{key}.model_options.pretrain",
                    f"unknown latent-vocabulary pretraining {ref!r} (defined: {', '.join(pretrain) or 'none'})",
                )
            if int(pretrain[ref].get("dim", 0)) != int(options.get("universal_dim", 0)):
                raise ConfigError(
                    f"pretrain.{ref}.dim",
                    f"latent embeddings must have the universal_dim of variant {name} ({options.get('universal_dim')})",
                )
            p_langs = pretrain[ref].get("langs") or dataset_langs(config, v["dataset"])
            missing = [l for l in v["train_langs"] if l not in p_langs]
            if missing:
                raise ConfigError(
                    f"pretrain.{ref}.langs", f"variant {name} trains on {missing}, which the pretraining does not cover"
                )
        reduce = v.get("vocabulary") or {}
        if reduce.get("dictionary_threshold") and "en" not in v["train_langs"]:
            raise ConfigError(
                f"{key}.vocabulary.dictionary_threshold",
                "dictionary mapping maps rare words to English: train on English too",
            )


def _check_figures(config: Mapping) -> None:
    variants = config.get("variants", {})
    for name, fig in (config.get("figures") or {}).items():
        key = f"figures.{name}"
        if name in (config.get("reports") or {}):
            raise ConfigError(key, "a report of the same name writes results/{name}.tsv")
        kind = fig.get("kind", "languages")
        for i, point in enumerate(fig["points"]):
            where = f"{key}.points[{i}]"
            if kind == "vocab_reduction":
                if not point.get("per_dataset"):
                    raise ConfigError(where, "a vocab_reduction point gives per_dataset (dataset → variant)")
                for ds in point["per_dataset"]:
                    if ds not in fig["datasets"]:
                        raise ConfigError(where, f"dataset {ds!r} is not one of {key}.datasets")
            elif not point.get("variants"):
                raise ConfigError(where, "a languages point names its variants")
            for ref in list(point.get("variants") or []) + list((point.get("per_dataset") or {}).values()):
                if ref not in variants:
                    raise ConfigError(where, f"unknown variant {ref!r}")
                if variants[ref]["model"] not in WORD_FAMILIES:
                    raise ConfigError(
                        where, f"variant {ref!r} is a {variants[ref]['model']} model; figures plot word models"
                    )
            for ds, ref in (point.get("per_dataset") or {}).items():
                if variants[ref]["dataset"] != ds:
                    raise ConfigError(where, f"variant {ref!r} is not trained on dataset {ds!r}")
