"""Which trained models learned: results/learning.{tsv,md} and one figure of validation curves per table.

A table of ours says nothing when its rows sit at chance, and a model at chance looks like any other
row of numbers. This overview puts every trained model of the config's tables and figures (a word
variant and its seed replicas ``{variant}-s{k}``, every speech, joint and MLMME run, the
Translator's source and target models) beside the score random rankings would get on the same test
set, and says whether the training converged (stopped on patience) or hit its epochs ceiling.

A model's *score* is the one number its tables are read by: a word model's mean test mR over the
languages it is evaluated on (``eval/{variant}.direct.tsv``); a speech model's mean image R@10 over
the image pairs (``E&I``, ``H&I``, ``J&I``: each the mean of the two directions, as the thesis'
"Image Ret" block); a joint model's mean R@10 over the ordered pairs with the image (image → x and
x → image); an MLMME run's mean over its languages of the sentence↔image mR; a Translator target
model's test mR (the curve's six recalls, averaged); the Translator's source model has no test
evaluation, and its best validation mR stands in (said in its ``split`` column). Its *chance* is
what that score is for random rankings on the same sizes (:func:`mr_chance`,
:func:`image_recall_chance`), and a model *learned* when its score is at least
:data:`LEARNED_RATIO` times chance, a word model in every language it reports too (its *worst
language*, :func:`worst_language`). :data:`EXCEPTIONS` names the models expected degraded (the papers
show them so, or an ablation is made to show it): they are listed with their reason, and counted apart.

A figure per table (``results/learning/{table}.png``) draws each model's validation score per
epoch (``epochs.tsv``), one panel a model and one line a seed, its best epoch marked, a training
that hit its ceiling dashed, and the validation set's chance level (:func:`validation_chance`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.config import (
    JOINT_FAMILY,
    SPEECH_FAMILY,
    WORD_FAMILIES,
    WORD_LAYOUTS,
    figure_sources,
    report_row_variants,
    report_variants,
    variant_settings,
)
from polyvse.evaluate.retrieval import KS
from polyvse.report.exceptions import EXCEPTIONS
from polyvse.report.findings import active_claims, claim_trainings, replica
from polyvse.run_plan import Plan
from polyvse.speech.settings import speech_variant_settings
from polyvse.train.joint_settings import joint_variant_settings
from polyvse.train.mlmme_runs import replica_offset, run_settings, variant_runs
from polyvse.train.translator_runs import needs_source_model, translator_block

LEARNED_RATIO: dict[str, float] = {
    "word": 5.0,
    "speech": 3.0,
    "joint": 3.0,
    "mlmme": 3.0,
    "translator": 3.0,
}
"""How many times chance a model's score must reach to count as learned, by kind of model. The word
tables (SMALR Tables 1–2, MULE Tables 2–4, SMALR Figures 1(b) and 3) print mR, whose chance on 200
test images is 2.7: 5× is 13.3 mR, below every row the papers print and far above the 3–4 mR of a
model that moved off chance by noise. Speech, joint, MLMME and Translator scores are recalls on
fewer test items (128 spoken images: R@10's chance 7.8 %), where 5× would be out of reach of a
model that plainly learned something (39 %): 3× there."""

COLUMNS: tuple[str, ...] = (
    "tables",
    "family",
    "dataset",
    "variant",
    "run",
    "metric",
    "split",
    "score",
    "chance",
    "ratio",
    "worst_lang",
    "worst_score",
    "worst_ratio",
    "threshold",
    "learned",
    "exception",
    "best_epoch",
    "epochs_run",
    "stop_reason",
    "val_score",
    "val_chance",
)
"""The columns of results/learning.tsv, one row a trained model."""

Reader = Callable[[str], object]  # path → DataFrame (.tsv, .parquet) or dict (.json)


# --- chance levels, one function a metric -----------------------------------------------------------


def t2i_chance(n_images: int, k: int) -> float:
    """R@``k`` of a sentence query (text → image) under a random ranking of ``n_images`` images, one
    of them its own: ``min(k, N) / N`` (a fraction). ``n_images`` 200, ``k`` 10: 0.05."""
    if n_images < 1:
        raise ValueError(f"no images to rank ({n_images})")
    return min(k, n_images) / n_images


def i2t_chance(n_images: int, n_sentences: int, k: int) -> float:
    """R@``k`` of an image query (image → text) under a random ranking of the ``n_sentences`` test
    sentences, ``c = n_sentences / n_images`` of them its own; a hit when any of its own is in the
    top ``k``: ``1 − C(S − c, k) / C(S, k) = 1 − ∏_{j<k} (S − c − j) / (S − j)`` (a fraction). The
    product form holds for a fractional mean ``c`` too (languages whose images have different
    numbers of captions); with ``c = 1`` it is ``k / N``, as :func:`t2i_chance`."""
    if n_images < 1 or n_sentences < n_images:
        raise ValueError(f"{n_sentences} sentences cannot describe {n_images} images, one at least each")
    if k >= n_sentences:
        return 1.0
    c = n_sentences / n_images
    miss = 1.0
    for j in range(k):
        miss *= max(0.0, n_sentences - c - j) / (n_sentences - j)
    return 1.0 - miss


def mr_chance(n_images: int, n_sentences: int, ks: Sequence[int] = KS) -> float:
    """mR (in percent) of random rankings of one language's test set: the mean of R@K over ``ks`` and
    both directions (:func:`t2i_chance`, :func:`i2t_chance`), as SMALR and MULE average mR. 200
    images with one sentence each: 2.67; with five each: 2.64."""
    values = [t2i_chance(n_images, k) for k in ks] + [i2t_chance(n_images, n_sentences, k) for k in ks]
    return 100.0 * float(np.mean(values))


def image_recall_chance(n: int, k: int = 10) -> float:
    """R@``k`` (in percent) of a pair of views of ``n`` datapoints each, one truth a query, under random
    rankings, either direction: ``100 · min(k, n) / n``. The thesis' test set of 1,000: R@10 1.00 %;
    the default's 128 spoken images: 7.81 %."""
    if n < 1:
        raise ValueError(f"no datapoints to rank ({n})")
    return 100.0 * min(k, n) / n


def pair_recall_chance(n: int, ks: Sequence[int] = KS) -> float:
    """The mean over ``ks`` of :func:`image_recall_chance`: what the speech and joint models' validation
    score (``val_recall``, the mean R@K over every view pair and K) is for random rankings of ``n``."""
    return float(np.mean([image_recall_chance(n, k) for k in ks]))


# --- which models, and what each reads ---------------------------------------------------------------


def _word_model(config: Mapping, variant: str, base: str, results: str) -> dict:
    s = variant_settings(config, variant)
    ds = config["variants"][variant]["dataset"]
    where = f"{results}/{ds}/models/{variant}"
    return {
        "key": where,
        "family": s["model"],
        "dataset": ds,
        "variant": variant,
        "run": "",
        "base": base,
        "params": f"{where}/params.json",
        "epochs": f"{where}/epochs.tsv",
        "eval": f"{results}/{ds}/eval/{variant}.direct.tsv",
        "score": "val_mR",
        "patience": s["training"].get("patience"),
        # training validates on each training language's human val captions (polyvse.train.run)
        "validation": {"captions": f"{results}/{ds}/captions.parquet", "langs": list(s["train_langs"])},
    }


def _speech_model(config: Mapping, variant: str, base: str, results: str) -> dict:
    s = speech_variant_settings(config, variant)
    ds = s["dataset"]
    where = f"{results}/{ds}/speech/{variant}"
    return {
        "key": where,
        "family": SPEECH_FAMILY,
        "dataset": ds,
        "variant": variant,
        "run": "",
        "base": base,
        "params": f"{where}/params.json",
        "epochs": f"{where}/epochs.tsv",
        "eval": f"{where}/eval.tsv",
        "score": "val_recall",
        "patience": s["training"].get("patience"),
        "validation": {"utterances": f"{results}/{ds}/utterances.parquet", "speech_langs": list(s["langs"])},
    }


def _joint_model(config: Mapping, variant: str, base: str, results: str) -> dict:
    s = joint_variant_settings(config, variant)
    ds = s["dataset"]
    where = f"{results}/{ds}/joint/{variant}"
    validation: dict = {"speech_langs": list(s["speech_langs"]), "text_langs": list(s["text_langs"])}
    if s["speech_langs"]:
        validation["utterances"] = f"{results}/{ds}/utterances.parquet"
    if s["text_langs"]:
        validation["captions"] = f"{results}/{ds}/captions.parquet"
    return {
        "key": where,
        "family": JOINT_FAMILY,
        "dataset": ds,
        "variant": variant,
        "run": "",
        "base": base,
        "params": f"{where}/params.json",
        "epochs": f"{where}/epochs.tsv",
        "eval": f"{where}/eval.tsv",
        "score": "val_recall",
        "patience": s["training"].get("patience"),
        "validation": validation,
    }


def _mlmme_replica_runs(config: Mapping, variant: str) -> list[str]:
    """The seed replicas of ``variant``'s runs that the findings train (``{run}-s{k}``)."""
    seeds = int(config.get("findings", {}).get("seeds", 0))
    runs: list[str] = []
    for claim in active_claims(config):
        if claim.family == "mlmme" and config["reports"][claim.table]["rows"][0]["variant"] == variant:
            runs += [replica(run, k) for k in range(1, seeds) for run in claim_trainings(config, claim)]
    return list(dict.fromkeys(runs))


def _mlmme_models(config: Mapping, variant: str, results: str) -> list[dict]:
    ds = config["variants"][variant]["dataset"]
    replicas = _mlmme_replica_runs(config, variant)
    # Table 1's column order, a run's seed replicas after it
    runs = [
        r for run in variant_runs(config, variant) for r in [run, *(x for x in replicas if replica_offset(x)[0] == run)]
    ]
    models = []
    for run in runs:
        s = run_settings(config, variant, run)
        where = f"{results}/{ds}/mlmme/{variant}/{run}"
        models.append(
            {
                "key": where,
                "family": "mlmme",
                "dataset": ds,
                "variant": variant,
                "run": run,
                "base": replica_offset(run)[0],
                "params": f"{where}/params.json",
                "epochs": f"{where}/epochs.tsv",
                "eval": f"{where}/eval.tsv",
                "score": "val_mR",
                "patience": s["training"].get("patience"),
                "validation": {"captions": f"{results}/{ds}/captions.parquet", "langs": list(s["langs"])},
            }
        )
    return models


def _translator_models(config: Mapping, variant: str, results: str) -> list[dict]:
    block = translator_block(config, variant)
    ds = block["dataset"]
    where = f"{results}/{ds}/translator/{variant}"
    captions = f"{results}/{ds}/captions.parquet"
    common = {"family": "translator", "dataset": ds, "variant": variant, "score": "val_mR"}
    models = []
    if any(needs_source_model(config, variant, p) for p in block["protocols"]):
        models.append(
            {
                **common,
                "key": f"{where}/source",
                "run": "source",
                "base": "source",
                # the source model has no test evaluation: its params.json's best validation mR stands in
                "params": f"{where}/source/params.json",
                "epochs": f"{where}/source/epochs.tsv",
                "eval": None,
                "patience": block["source_training"].get("patience"),
                "validation": {"captions": captions, "langs": [block["source"]]},
            }
        )
    for protocol in block["protocols"]:
        for n in sorted(block["examples"]):
            run = f"{protocol}/n{n}"
            models.append(
                {
                    **common,
                    "key": f"{where}/{run}",
                    "run": run,
                    "base": run,
                    "params": None,  # a target run writes its best epoch into eval.tsv, and no params.json
                    "epochs": f"{where}/{run}/epochs.tsv",
                    "eval": f"{where}/{run}/eval.tsv",
                    "patience": block["target_training"].get("patience"),
                    "validation": {"captions": captions, "langs": [block["target"]]},
                }
            )
    return models


def report_models(plan: Plan, name: str, results: str) -> list[dict]:
    """The trained models a report of the run's plan reads, seed replicas beside their variant."""
    config = plan.config
    rep = config["reports"][name]
    layout = rep.get("layout", "smalr")
    variants = config.get("variants") or {}
    models: list[dict] = []
    if layout in WORD_LAYOUTS:
        for v in report_variants(config, name):
            models += [_word_model(config, m, v, results) for m in plan.seed_members(v)]
    elif layout in ("speech", "any_to_any"):
        for v in report_row_variants(config, name):
            make = _joint_model if variants[v]["model"] == JOINT_FAMILY else _speech_model
            models += [make(config, m, v, results) for m in plan.seed_members(v)]
    elif layout == "mlmme":
        models += _mlmme_models(config, rep["rows"][0]["variant"], results)
    elif layout == "translator_curve":
        models += _translator_models(config, rep["rows"][0]["variant"], results)
    return models


def learning_plan(plan: Plan, results: str) -> dict:
    """What the learning rule reads (plain data: a rule's params): ``tables`` (every report and figure
    of the config that reads a trained model, name → caption) and ``models``, one entry a trained
    model, in the order the tables first name them: its family, dataset, variant, run, the seed
    group's ``base``, the ``tables`` that read it, its files (params.json, epochs.tsv, test
    evaluation), the name of its validation score, its patience, what its validation set is made of,
    and its :data:`EXCEPTIONS` reason ("" where none). Models that no table reads are not trained by
    the workflow's target and are left out."""
    config = plan.config
    per_table: dict[str, list[dict]] = {}
    captions: dict[str, str] = {}
    for name, rep in (config.get("reports") or {}).items():
        per_table[name] = report_models(plan, name, results)
        captions[name] = str(rep.get("caption") or name)
    for name, fig in (config.get("figures") or {}).items():
        found = [
            _word_model(config, m, v, results) for v, _ in figure_sources(config, name) for m in plan.seed_members(v)
        ]
        per_table.setdefault(name, [])
        per_table[name] += found
        captions.setdefault(name, str(fig.get("caption") or name))
    models: dict[str, dict] = {}
    for table, found in per_table.items():
        for model in found:
            entry = models.setdefault(model["key"], {**model, "tables": []})
            if table not in entry["tables"]:
                entry["tables"].append(table)
    for entry in models.values():
        key = entry["base"] if entry["run"] == "" else f"{entry['variant']} · {entry['run']}"
        reason = EXCEPTIONS.get(key, "")
        entry["exception"] = reason
    tables = {name: captions[name] for name, found in per_table.items() if found}
    return {"tables": tables, "models": list(models.values())}


def learning_inputs(plan: Mapping) -> list[str]:
    """Every file the plan reads, without repeats (the learning rule's input)."""
    out: list[str] = []
    for model in plan["models"]:
        out += [p for p in (model["params"], model["epochs"], model["eval"]) if p]
        out += [p for key, p in model["validation"].items() if key in ("captions", "utterances")]
    return list(dict.fromkeys(out))


def learning_figures(plan: Mapping, results: str) -> dict[str, str]:
    """Table → its figure of validation curves, ``results/learning/{table}.png``."""
    return {table: f"{results}/learning/{table}.png" for table in plan["tables"]}


# --- scores ------------------------------------------------------------------------------------------


def _count(value: object) -> int:
    """A count of an evaluation table: a TSV may hold it as ``1000.00`` (a float column where other
    rows leave it empty)."""
    return int(float(value))  # type: ignore[arg-type]


def kind_of(family: str) -> str:
    """The kind of model a family is, as :data:`LEARNED_RATIO` names it."""
    return "word" if family in WORD_FAMILIES else family


def word_score(ev: pd.DataFrame) -> tuple[float, float]:
    """(mean test mR over the evaluated languages, its chance): a direct evaluation, one row a language
    with ``mR``, ``n_images`` and ``n_sentences``."""
    chance = [mr_chance(_count(r["n_images"]), _count(r["n_sentences"])) for _, r in ev.iterrows()]
    return float(ev["mR"].astype(float).mean()), float(np.mean(chance))


def worst_language(ev: pd.DataFrame) -> tuple[str, float, float]:
    """(language, its test mR, that mR over its chance) of the language of a direct evaluation whose mR
    is the fewest times its chance: a word model learned only if every language it reports did."""
    ratios = [
        (float(r["mR"]) / mr_chance(_count(r["n_images"]), _count(r["n_sentences"])), str(r["lang"]), float(r["mR"]))
        for _, r in ev.iterrows()
    ]
    ratio, lang, score = min(ratios)
    return lang, score, ratio


def speech_score(ev: pd.DataFrame) -> tuple[float, float]:
    """(mean R@10 over the image pairs, its chance): a speech evaluation (``kind``, ``r10``, ``n``)."""
    image = ev[ev["kind"] == "image"]
    if image.empty:
        raise ValueError("a speech evaluation without image pairs")
    chance = [image_recall_chance(_count(n)) for n in image["n"]]
    return float(image["r10"].astype(float).mean()), float(np.mean(chance))


def joint_score(ev: pd.DataFrame) -> tuple[float, float]:
    """(mean R@10 over the ordered pairs with the image, its chance): a joint evaluation (``query``,
    ``target``, ``r10``, ``n``)."""
    image = ev[(ev["query"] == "image") | (ev["target"] == "image")]
    if image.empty:
        raise ValueError("a joint evaluation without the image view")
    chance = [image_recall_chance(_count(n)) for n in image["n"]]
    return float(image["r10"].astype(float).mean()), float(np.mean(chance))


def mlmme_score(ev: pd.DataFrame) -> tuple[float, float]:
    """(mean over the languages of the sentence↔image mR, its chance): an MLMME evaluation (long form:
    ``task``, ``query``, ``target``, ``r1 r5 r10``, ``n_queries``; sentence → image rows have the
    sentences as queries, image → sentence rows the images)."""
    pairs = ev[ev["task"] == "image_sentence"]
    langs = [q for q in dict.fromkeys(pairs["query"]) if q != "image"]
    if not langs:
        raise ValueError("an MLMME evaluation without sentence–image rows")
    scores, chances = [], []
    for lang in langs:
        t2i = pairs[(pairs["query"] == lang) & (pairs["target"] == "image")].iloc[0]
        i2t = pairs[(pairs["query"] == "image") & (pairs["target"] == lang)].iloc[0]
        scores.append(float(np.mean([float(r[f"r{k}"]) for r in (t2i, i2t) for k in KS])))
        chances.append(mr_chance(_count(i2t["n_queries"]), _count(t2i["n_queries"])))
    return float(np.mean(scores)), float(np.mean(chances))


def validation_chance(validation: Mapping, read: Reader) -> float:
    """The chance level of a model's validation score, from its validation set's sizes.

    Word, MLMME and Translator models validate on the human ``val`` captions of each of their
    ``langs`` (a language without any is skipped, as training skips it): the mean of
    :func:`mr_chance` over them. Speech and joint models on the ``val`` images that have every view
    (an utterance in each of ``speech_langs``, a human caption in each of ``text_langs``):
    :func:`pair_recall_chance`. NaN where the set is empty."""
    if "langs" in validation:
        caps = read(validation["captions"])
        assert isinstance(caps, pd.DataFrame)
        val = caps[(caps["split"] == "val") & (caps["origin"] == "human")]
        chances = []
        for lang in validation["langs"]:
            sub = val[val["lang"] == lang]
            if len(sub):
                chances.append(mr_chance(int(sub["image_id"].nunique()), len(sub)))
        return float(np.mean(chances)) if chances else math.nan
    images: set | None = None
    if validation.get("speech_langs"):
        utt = read(validation["utterances"])
        assert isinstance(utt, pd.DataFrame)
        sub = utt[(utt["split"] == "val") & utt["lang"].isin(validation["speech_langs"])]
        per_image = sub.groupby("image_id")["lang"].nunique()
        images = set(per_image.index[per_image == len(set(validation["speech_langs"]))])
    for lang in validation.get("text_langs") or []:
        caps = read(validation["captions"])
        assert isinstance(caps, pd.DataFrame)
        has = set(caps.loc[(caps["split"] == "val") & (caps["origin"] == "human") & (caps["lang"] == lang), "image_id"])
        images = has if images is None else images & has
    return pair_recall_chance(len(images)) if images else math.nan


def stop_reason(recorded: object, best_epoch: int, epochs_run: int, patience: int | None) -> str:
    """Why a training ended: its params.json's ``stop_reason`` where it records one; otherwise (the
    Translator's runs write none) the epoch loop's own rule (:func:`polyvse.train.loop.run_epochs`):
    ``patience`` where the last ``patience`` epochs did not beat the best, ``ceiling`` else."""
    if isinstance(recorded, str) and recorded:
        return recorded
    if patience is not None and epochs_run - best_epoch >= int(patience):
        return "patience"
    return "ceiling"


def _score(
    model: Mapping, ev: pd.DataFrame | None, params: Mapping, val_chance: float
) -> tuple[str, str, float, float]:
    """(metric, split, score, chance) of one model."""
    family = model["family"]
    if kind_of(family) == "word":
        return ("mean test mR", "test", *word_score(ev))
    if family == SPEECH_FAMILY:
        return ("mean image R@10", "test", *speech_score(ev))
    if family == JOINT_FAMILY:
        return ("mean image R@10", "test", *joint_score(ev))
    if family == "mlmme":
        return ("mean test mR", "test", *mlmme_score(ev))
    if ev is None:  # the Translator's source model
        return ("best val mR", "val", float(params["val_mR"]), val_chance)
    row = ev.iloc[0]
    return ("test mR", "test", float(row["mR"]), mr_chance(_count(row["n_images"]), _count(row["n_sentences"])))


def model_row(model: Mapping, read: Reader) -> dict:
    """One row of results/learning.tsv (:data:`COLUMNS`) for one entry of :func:`learning_plan`."""
    params = read(model["params"]) if model["params"] else {}
    assert isinstance(params, Mapping)
    ev = read(model["eval"]) if model["eval"] else None
    epochs = read(model["epochs"])
    assert isinstance(epochs, pd.DataFrame)
    val_chance = validation_chance(model["validation"], read)
    metric, split, score, chance = _score(model, ev, params, val_chance)
    curve = epochs[model["score"]].astype(float) if model["score"] in epochs.columns else pd.Series(dtype=float)
    if "best_epoch" in params:
        best = int(params["best_epoch"])
    elif ev is not None and "best_epoch" in ev.columns:
        best = _count(ev["best_epoch"].iloc[0])
    else:
        best = int(epochs["epoch"].iloc[int(curve.to_numpy().argmax())]) if len(curve) else 0
    run = int(params.get("epochs_run", len(epochs)))
    threshold = LEARNED_RATIO[kind_of(model["family"])]
    ratio = score / chance if chance > 0 else math.nan
    worst_lang, worst_score, worst_ratio = (
        worst_language(ev) if kind_of(model["family"]) == "word" else ("", math.nan, math.nan)
    )
    learned = ratio >= threshold and (math.isnan(worst_ratio) or worst_ratio >= threshold)
    return {
        "tables": " ".join(model["tables"]),
        "family": model["family"],
        "dataset": model["dataset"],
        "variant": model["variant"],
        "run": model["run"],
        "metric": metric,
        "split": split,
        "score": round(score, 2),
        "chance": round(chance, 2),
        "ratio": round(ratio, 2),
        "worst_lang": worst_lang,
        "worst_score": round(worst_score, 2),
        "worst_ratio": round(worst_ratio, 2),
        "threshold": threshold,
        "learned": "yes" if learned else "no",
        "exception": model.get("exception", ""),
        "best_epoch": best,
        "epochs_run": run,
        "stop_reason": stop_reason(params.get("stop_reason"), best, run, model["patience"]),
        "val_score": round(float(curve.max()), 2) if len(curve) else math.nan,
        "val_chance": round(val_chance, 2),
    }


def learning_table(plan: Mapping, read: Reader) -> pd.DataFrame:
    """One row a trained model of the plan (:data:`COLUMNS`), in plan order."""
    return pd.DataFrame([model_row(m, read) for m in plan["models"]], columns=list(COLUMNS))


# --- the report ----------------------------------------------------------------------------------------


def _label(row: Mapping) -> str:
    return f"{row['variant']} · {row['run']}" if row["run"] else str(row["variant"])


def _base_label(row: Mapping, bases: Mapping[str, str]) -> str:
    """A model's name without its seed suffix: the variant (word, speech, joint), the run (MLMME, Translator)."""
    if not row["run"]:
        return bases.get(str(row["variant"]), str(row["variant"]))
    return f"{row['variant']} · {replica_offset(str(row['run']))[0]}"


def _seed_bases(plan: Mapping) -> dict[str, str]:
    return {m["variant"]: m["base"] for m in plan["models"] if not m["run"]}


def _counted(labels: Sequence[str], totals: Mapping[str, int]) -> str:
    """``a, b (2 of 3 seeds)``: the labels with how many of their seeds each is."""
    counts = pd.Series(list(labels)).value_counts(sort=False) if labels else pd.Series(dtype=int)
    out = []
    for label, n in counts.items():
        total = totals.get(str(label), 1)
        out.append(str(label) if total == 1 else f"{label} ({n} of {total} seeds)")
    return ", ".join(out)


def _stopped(reason: str) -> str:
    named = {"patience": "patience (converged)", "ceiling": "**ceiling**", "schedule": "schedule (rate at 0)"}
    return named.get(reason, reason or "–")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def learning_markdown(plan: Mapping, table: pd.DataFrame) -> str:
    """results/learning.md: a paragraph of counts (models, learned, converged against ceiling, which did
    not learn), how the scores and chances are computed, a table per report or figure, the exceptions."""
    bases = _seed_bases(plan)
    rows = [r for _, r in table.iterrows()]
    base_of = [_base_label(r, bases) for r in rows]
    totals = pd.Series(base_of).value_counts().to_dict() if rows else {}
    failed = [(b, r) for b, r in zip(base_of, rows) if r["learned"] != "yes"]
    unexpected = [b for b, r in failed if not r["exception"]]
    expected = [b for b, r in failed if r["exception"]]
    learned = len(rows) - len(failed)
    converged = sum(r["stop_reason"] == "patience" for r in rows)
    ceiling = sum(r["stop_reason"] == "ceiling" for r in rows)
    scheduled = sum(r["stop_reason"] == "schedule" for r in rows)
    kinds = pd.Series([kind_of(str(r["family"])) for r in rows]).value_counts(sort=False).to_dict() if rows else {}
    summary = (
        f"{_plural(len(rows), 'trained model')} ("
        + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        + f"): {learned} learned, {len(failed)} did not (a test score below "
        + f"{LEARNED_RATIO['word']:g}× chance for a word model, in its mean or in any language it reports, "
        + f"{LEARNED_RATIO['speech']:g}× for the others). "
        + f"{converged} converged (stopped on patience), "
        + (f"{scheduled} ran their learning-rate schedule to its end, " if scheduled else "")
        + f"{ceiling} hit their epochs ceiling."
    )
    if unexpected:
        summary += f" Did not learn: {_counted(unexpected, totals)}."
    if expected:
        summary += f" Expected not to (shown degraded by a paper or an ablation, Exceptions below): {_counted(expected, totals)}."
    lines = [
        "# Which models learned",
        "",
        summary,
        "",
        "Score: a word model's mean test mR over its evaluated languages; a speech model's mean image R@10 "
        "(E&I, H&I, J&I, each the mean of both directions); a joint model's mean R@10 of the pairs with the "
        "image; an MLMME run's mean sentence↔image mR over its languages; a Translator target model's test mR, "
        "its source model's best validation mR (no test evaluation). Chance: the same score for random "
        "rankings of the same test set (R@K of N images K/N; an image query with c of the S sentences its own "
        "1 − C(S−c, K)/C(S, K); mR their mean over K = 1, 5, 10 and both directions). *worst language*: a word "
        "model's language with the lowest mR for its chance, and that mR. *best / run*: the best "
        "epoch by validation score and the epochs run; *stopped*: patience (the validation score had not risen "
        "for `patience` epochs: converged), schedule (the training ran its learning-rate schedule to its end, "
        "the rate decayed to zero at the ceiling: `training.lr_schedule` cosine) or ceiling (the training ran "
        "its ceiling of epochs at a rate that could have gone on moving it). Validation "
        "curves: `results/learning/{table}.png` (polyvse/report/learning.py).",
        "",
    ]
    for name, caption in plan["tables"].items():
        mine = [(b, r) for b, r in zip(base_of, rows) if name in str(r["tables"]).split()]
        if not mine:
            continue
        ok = sum(r["learned"] == "yes" for _, r in mine)
        lines += [
            f"## {name}",
            "",
            f"{caption}: {ok} of {len(mine)} learned.",
            "",
            "| model | family | dataset | score | chance | × chance | worst language | learned | best / run | stopped |",
            "|---|---|---|--:|--:|--:|--:|---|---|---|",
        ]
        for _, r in mine:
            verdict = "yes" if r["learned"] == "yes" else ("no (expected)" if r["exception"] else "**no**")
            score = f"{r['score']:.2f}" + (" (val)" if r["split"] == "val" else "")
            worst = f"{r['worst_lang']} {r['worst_score']:.1f}" if r["worst_lang"] else "–"
            lines.append(
                f"| {_label(r)} | {r['family']} | {r['dataset']} | {score} | {r['chance']:.2f} | "
                f"{r['ratio']:.1f} | {worst} | {verdict} | {int(r['best_epoch'])}/{int(r['epochs_run'])} | "
                f"{_stopped(str(r['stop_reason']))} |"
            )
        lines.append("")
    listed = {str(r["variant"]): str(r["exception"]) for r in rows if r["exception"]}
    if listed:
        lines += ["## Exceptions", "", "| model | reason |", "|---|---|"]
        lines += [f"| {name} | {reason} |" for name, reason in listed.items()]
        lines.append("")
    return "\n".join(lines)


# --- validation curves -----------------------------------------------------------------------------------


def curve_panels(plan: Mapping, table: pd.DataFrame, curves: Sequence[pd.DataFrame], name: str) -> list[dict]:
    """The panels of table ``name``'s figure: one a model (its seeds together), each with ``title``,
    ``ratio`` (the mean test score / chance over its seeds), ``learned`` (every seed), ``exception``,
    ``chance`` (the validation score's), ``score`` (its name) and ``lines``: per seed its ``label``,
    ``epoch`` and ``value`` lists, ``best_epoch`` and ``ceiling`` (it hit its epochs ceiling).
    ``curves``: each model's epochs.tsv, in plan order."""
    bases = _seed_bases(plan)
    panels: dict[str, dict] = {}
    for model, (_, row), epochs in zip(plan["models"], table.iterrows(), curves):
        if name not in model["tables"]:
            continue
        title = _base_label(row, bases)
        panel = panels.setdefault(
            title,
            {
                "title": title,
                "score": model["score"],
                "chance": float(row["val_chance"]),
                "exception": str(row["exception"]),
                "ratios": [],
                "learned": True,
                "lines": [],
            },
        )
        panel["ratios"].append(float(row["ratio"]))
        panel["learned"] = panel["learned"] and row["learned"] == "yes"
        column = model["score"] if model["score"] in epochs.columns else None
        panel["lines"].append(
            {
                "label": _label(row),
                "epoch": [int(e) for e in epochs["epoch"]] if column else [],
                "value": [float(v) for v in epochs[column]] if column else [],
                "best_epoch": int(row["best_epoch"]),
                "ceiling": row["stop_reason"] == "ceiling",
            }
        )
    out = []
    for panel in panels.values():
        ratios = [r for r in panel.pop("ratios") if not math.isnan(r)]
        panel["ratio"] = float(np.mean(ratios)) if ratios else math.nan
        out.append(panel)
    return out


def _finite(x: float) -> float:
    """``x``, NaN ranked lowest (a model without a validation chance level)."""
    return -math.inf if math.isnan(x) else x


def plot_curves(panels: Sequence[Mapping], title: str, path: str | Path, columns: int = 5) -> None:
    """One panel a model: its validation score per epoch (a line a seed; dashed where the training hit
    its epochs ceiling), its best epoch marked, the validation chance level a grey dotted line; the
    panel's title red where a seed did not learn (orange where that is an exception)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from polyvse.io import atomic_path

    n = max(1, len(panels))
    cols = min(columns, n)
    rows = math.ceil(n / cols)
    # at least wide enough for the legend's one line under the panels
    fig, axes = plt.subplots(rows, cols, figsize=(max(3.1 * cols, 9.0), 2.4 * rows + 0.9), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, panel in zip(axes.flat, panels):
        for i, line in enumerate(panel["lines"]):
            colour = colours[i % len(colours)]
            style = "--" if line["ceiling"] else "-"
            ax.plot(line["epoch"], line["value"], style, color=colour, linewidth=1.3)
            if line["best_epoch"] in line["epoch"]:
                at = line["epoch"].index(line["best_epoch"])
                ax.plot([line["best_epoch"]], [line["value"][at]], "o", color=colour, markersize=4.5)
        if not math.isnan(panel["chance"]):
            ax.axhline(panel["chance"], color="gray", linestyle=":", linewidth=1.2)
        colour = "black" if panel["learned"] else ("darkorange" if panel["exception"] else "tab:red")
        ratio = "–" if math.isnan(panel["ratio"]) else f"{panel['ratio']:.1f}"
        ax.set_title(f"{panel['title']}\n{ratio}× chance (test)", fontsize=8, color=colour)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(panel["score"], fontsize=7)
        ax.grid(alpha=0.3)
        # from zero, so that a curve's height against chance reads at a glance; room above for the best marker
        top = max([v for line in panel["lines"] for v in line["value"]] + [panel["chance"], 0.0], key=_finite)
        ax.set_ylim(0, 1.1 * top if top > 0 else 1.0)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    legend = [
        Line2D([], [], color="black", linestyle="-", label="stopped on patience (converged)"),
        Line2D([], [], color="black", linestyle="--", label="hit its epochs ceiling"),
        Line2D([], [], color="black", marker="o", linestyle="", label="best epoch"),
        Line2D([], [], color="gray", linestyle=":", label="chance (validation)"),
    ]
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(f"{title}: validation score per epoch, a line a seed (red title: did not learn)", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)
