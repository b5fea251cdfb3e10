"""The embedded default dataset: rendered scenes with "human" captions in eleven languages.

docs/architecture.md, The embedded default data. Every image is a scene graph
(:mod:`polyvse.data.synthetic.scene`) rendered with PIL; its captions come from
per-language grammars (:mod:`polyvse.data.synthetic.languages`). Which languages have
"human" captions mirrors the real datasets (profiles):

* ``m30k`` (Multi30K, MULE §Experiments "Datasets"; SMALR §4): en ×5 and de ×5
  independent captions per image; fr ×1 and cs ×1 that translate English caption 1
  (the plan of en caption 0, realised in fr/cs).
* ``coco`` (MSCOCO with YJ Japanese and COCO-CN Chinese, MULE §Experiments): en ×5
  on every image; ja ×5 on ~20 % and zh ×1 on ~15 % of the training images; val
  and test images have all three, as MULE's test/val split is drawn from images
  captioned in every language.
* ``all``: every requested language ×``captions_per_image`` (the speech branch: en, hi, ja).

Determinism: everything about image ``i`` comes from rngs seeded by
``(seed, i, stream[, language])``, so the same seed gives byte-identical tables and
images whatever the order of generation, and adding a language or a profile
does not change the captions of another language.

Lexicon: ``closed`` is the small hand-written grammar (these functions' default);
``long_tail`` (:mod:`polyvse.data.synthetic.lexicon`; the workflow's
default, config/schema.yaml ``datasets.<ds>.synthetic.lexicon``) adds shades,
synonyms, evaluations and Zipf-weighted generated names for a Multi30K-like long
tail. The text-only corpus of the same grammar, on which the workflow trains
FastText (SMALR §3.1, MULE §Experiments), is
:func:`polyvse.data.synthetic.corpus.text_corpus`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from polyvse import LANGUAGES
from polyvse.data.synthetic.languages import REALISERS, caption, glossary, realise
from polyvse.data.synthetic.plan import TEMPLATES, CaptionPlan, Mention, caption_plan
from polyvse.data.synthetic.lexicon import LEXICONS
from polyvse.data.synthetic.scene import ObjectGroup, Scene, render_scene, sample_scene
from polyvse.errors import InputError
from polyvse.io import atomic_path, write_text

__all__ = [
    "PROFILES",
    "PROFILE_LANGS",
    "SyntheticDataset",
    "build_dataset",
    "write_dataset",
    "write_dictionaries",
    "render_scene",
    "sample_scene",
    "make_scene",
    "render_image",
    "caption",
    "caption_plan",
    "realise",
    "glossary",
    "reference_captions",
    "plan_realisations",
    "Scene",
    "ObjectGroup",
    "CaptionPlan",
    "Mention",
    "TEMPLATES",
    "image_rng",
]

PROFILES: tuple[str, ...] = ("m30k", "coco", "all")
PROFILE_LANGS: dict[str, tuple[str, ...]] = {"m30k": ("en", "de", "fr", "cs"), "coco": ("en", "ja", "zh")}
COCO_JA_P = 0.20  # share of training images with Japanese captions (~26K of 123K in MSCOCO)
COCO_ZH_P = 0.15  # share with one Chinese caption (~20K of 123K, COCO-CN)
# ... but at least this many training images: COCO-CN's share of a 1,000-image miniature is 146
# captions, too few for any model to learn Chinese from (docs/learning.md), where COCO-CN's 20K are plenty.
COCO_ZH_MIN_IMAGES = 1000
MAX_TRIES = 40  # draws of a plan whose caption differs from the image's other captions

# rng streams of one image
_SCENE, _CAPTIONS, _RENDER, _AVAILABILITY = 0, 1, 2, 3


def image_rng(seed: int, index: int, stream: int, sub: int = 0) -> np.random.Generator:
    """The rng of image ``index``'s ``stream`` (scene, captions of language ``sub``, render, availability)."""
    return np.random.default_rng(np.random.SeedSequence([seed, index, stream, sub]))


def make_scene(seed: int, index: int, lexicon: str = "closed") -> Scene:
    """The scene of image ``index`` under ``seed`` (``long_tail``: with shades)."""
    return sample_scene(image_rng(seed, index, _SCENE), lexicon)


def render_image(seed: int, index: int, scene: Scene, image_size: int = 224) -> Image.Image:
    """Image ``index`` under ``seed``, showing ``scene`` (its ``make_scene``): its jitter comes from the
    image's own rng, so its pixels depend only on (seed, index, scene, image_size)."""
    return render_scene(scene, image_size, image_rng(seed, index, _RENDER))


def image_id(index: int) -> str:
    return f"syn-{index:06d}"


def image_path(index: int) -> str:
    return f"images/{index:05d}.png"


@dataclass(frozen=True)
class SyntheticDataset:
    """Scenes and canonical tables of one generated dataset.

    ``captions``: image_id, split, lang, cap_idx, text, origin ("human");
    ``images``: image_id, split, path (relative to the dataset directory), one row
    per scene in the order of ``scenes``; ``plans`` maps (image_id, lang, cap_idx)
    to the plan each caption realises.
    """

    profile: str
    seed: int
    scenes: tuple[Scene, ...]
    captions: pd.DataFrame
    images: pd.DataFrame
    plans: Mapping[tuple[str, str, int], CaptionPlan] = field(repr=False)


def _split(index: int, n_train: int, n_val: int) -> str:
    return "train" if index < n_train else ("val" if index < n_train + n_val else "test")


def _distinct_captions(
    scene: Scene, lang: str, k: int, rng: np.random.Generator, lexicon: str = "closed"
) -> list[tuple[CaptionPlan, str]]:
    """``k`` captions of ``scene`` in ``lang`` whose texts differ (where the scene allows it)."""
    out: list[tuple[CaptionPlan, str]] = []
    texts: set[str] = set()
    for _ in range(k):
        for _ in range(MAX_TRIES):
            plan = caption_plan(scene, rng, lexicon)
            text = realise(plan, lang)
            if text not in texts:
                break
        texts.add(text)
        out.append((plan, text))
    return out


def _languages(profile: str, langs: Sequence[str] | None) -> tuple[str, ...]:
    if profile not in PROFILES:
        raise InputError("profile", f"unknown synthetic profile {profile!r}; expected one of {', '.join(PROFILES)}")
    allowed = PROFILE_LANGS.get(profile, tuple(REALISERS))
    if langs is None:
        return allowed
    if isinstance(langs, str):
        raise InputError("langs", f"expected a list of language codes, got the string {langs!r}")
    chosen = tuple(dict.fromkeys(langs))
    bad = [l for l in chosen if l not in allowed]
    if bad:
        what = (
            f"profile {profile!r} has human captions in {', '.join(allowed)} only"
            if profile != "all"
            else f"known languages: {', '.join(allowed)}"
        )
        raise InputError("langs", f"language(s) {', '.join(map(repr, bad))} not available: {what}")
    if not chosen:
        raise InputError("langs", "no language requested")
    if profile != "all":  # keep the profile's order: en first
        chosen = tuple(l for l in allowed if l in chosen)
    return chosen


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(name, f"expected an integer >= {minimum}, got {value!r}")
    return int(value)


def build_dataset(
    profile: str,
    n_train: int,
    n_val: int,
    n_test: int,
    seed: int,
    captions_per_image: int = 5,
    langs: Sequence[str] | None = None,
    lexicon: str = "closed",
    zh_min_images: int = COCO_ZH_MIN_IMAGES,
) -> SyntheticDataset:
    """Generate scenes and captions: images 0..n_train-1 are train, then val, then test.

    ``captions_per_image`` is the number of captions of a fully captioned language
    (en, de in m30k; en, ja in coco; every language in all); fr, cs (m30k) and zh
    (coco) have one; in coco, Japanese is on ``COCO_JA_P`` of the training images and
    Chinese on ``COCO_ZH_P`` of them, but on at least ``zh_min_images``. ``langs``
    restricts the profile's languages (m30k, coco) or names them (all; default: every
    language). ``lexicon``: ``closed`` (the small grammars) or ``long_tail`` (:mod:`polyvse.data.synthetic.lexicon`:
    shades, synonyms, evaluations, names; SMALR §1). Images are not rendered
    here (:func:`write_dataset`), so captions alone are cheap.
    """
    if lexicon not in LEXICONS:
        raise InputError("lexicon", f"unknown lexicon {lexicon!r}; expected one of {', '.join(LEXICONS)}")
    n_train, n_val, n_test = (
        _check_int(k, v, 0) for k, v in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test))
    )
    seed = _check_int("seed", seed, 0)
    k = _check_int("captions_per_image", captions_per_image, 1)
    zh_min = _check_int("zh_min_images", zh_min_images, 0)
    zh_share = max(COCO_ZH_P, min(1.0, zh_min / max(n_train, 1)))  # of the coco profile's training images
    languages = _languages(profile, langs)
    lang_index = {l: LANGUAGES.index(l) for l in REALISERS}

    scenes: list[Scene] = []
    rows: dict[str, list] = {c: [] for c in ("image_id", "split", "lang", "cap_idx", "text")}
    image_rows: dict[str, list] = {"image_id": [], "split": [], "path": []}
    plans: dict[tuple[str, str, int], CaptionPlan] = {}

    for index in range(n_train + n_val + n_test):
        scene = make_scene(seed, index, lexicon)
        iid, split = image_id(index), _split(index, n_train, n_val)
        scenes.append(scene)
        image_rows["image_id"].append(iid)
        image_rows["split"].append(split)
        image_rows["path"].append(image_path(index))

        counts = {l: k for l in languages}
        derived: dict[str, CaptionPlan] = {}
        if profile == "m30k":
            for l in ("fr", "cs"):
                counts.pop(l, None)
            if "fr" in languages or "cs" in languages:  # translations of English caption 1
                en_plan = _distinct_captions(
                    scene, "en", 1, image_rng(seed, index, _CAPTIONS, lang_index["en"]), lexicon
                )[0][0]
                derived = {l: en_plan for l in ("fr", "cs") if l in languages}
        elif profile == "coco":
            u_ja, u_zh = image_rng(seed, index, _AVAILABILITY).random(2)
            complete = split != "train"
            if "ja" in counts and not (complete or u_ja < COCO_JA_P):
                del counts["ja"]
            if "zh" in counts:
                if complete or u_zh < zh_share:
                    counts["zh"] = 1
                else:
                    del counts["zh"]

        for lang in languages:
            if lang in derived:
                made = [(derived[lang], realise(derived[lang], lang))]
            elif lang in counts:
                made = _distinct_captions(
                    scene, lang, counts[lang], image_rng(seed, index, _CAPTIONS, lang_index[lang]), lexicon
                )
            else:
                continue
            for cap_idx, (plan, text) in enumerate(made):
                rows["image_id"].append(iid)
                rows["split"].append(split)
                rows["lang"].append(lang)
                rows["cap_idx"].append(cap_idx)
                rows["text"].append(text)
                plans[iid, lang, cap_idx] = plan

    captions = pd.DataFrame(
        {
            "image_id": pd.Series(rows["image_id"], dtype="str"),
            "split": pd.Series(rows["split"], dtype="str"),
            "lang": pd.Series(rows["lang"], dtype="str"),
            "cap_idx": np.asarray(rows["cap_idx"], dtype=np.int64),
            "text": pd.Series(rows["text"], dtype="str"),
            "origin": pd.Series(["human"] * len(rows["text"]), dtype="str"),
        }
    )
    images = pd.DataFrame({c: pd.Series(v, dtype="str") for c, v in image_rows.items()})
    return SyntheticDataset(
        profile=profile, seed=seed, scenes=tuple(scenes), captions=captions, images=images, plans=plans
    )


def reference_captions(ds: SyntheticDataset, langs: Sequence[str], split: str = "test") -> pd.DataFrame:
    """The English ``split`` captions' plans realised in every language of ``langs``.

    These are the "human" references of the same plan against which machine
    translations of the English captions (and back-translations into English)
    are scored (results/{dataset}/mt_quality.tsv). Columns image_id, split,
    cap_idx (of the English caption), lang, text; the ``en`` rows are the English
    captions themselves. Sorted by image_id, cap_idx, then ``langs`` order.
    """
    unknown = [l for l in langs if l not in REALISERS]
    if unknown:
        raise InputError(
            "langs", f"no synthetic grammar for {', '.join(map(repr, unknown))}; known: {', '.join(REALISERS)}"
        )
    en = ds.captions[(ds.captions["split"] == split) & (ds.captions["lang"] == "en")]
    if en.empty:
        raise InputError("captions", f"synthetic dataset has no English {split} captions to realise references of")
    rows = [
        (iid, split, int(idx), lang, realise(ds.plans[iid, "en", int(idx)], lang))
        for iid, idx in en[["image_id", "cap_idx"]].itertuples(index=False)
        for lang in dict.fromkeys(["en", *langs])
    ]
    out = pd.DataFrame(rows, columns=["image_id", "split", "cap_idx", "lang", "text"])
    return out.astype({"image_id": "str", "split": "str", "cap_idx": np.int64, "lang": "str", "text": "str"})


def plan_realisations(ds: SyntheticDataset, langs: Sequence[str]) -> pd.DataFrame:
    """Every human caption's plan realised in every language of ``langs``: what a transfer MT knows.

    One row per (caption, language): image_id, split, src_lang (the human
    caption's language), cap_idx (its index), lang, text; the rows with
    ``lang == src_lang`` are the captions themselves. In caption order, then
    ``langs`` order (``src_lang`` first). The ``transfer`` translation backend
    (:mod:`polyvse.translate.transfer`) looks a sentence up here to find its plan;
    the ``src_lang == "en"`` test rows are :func:`reference_captions`' (MT quality).
    """
    unknown = [l for l in langs if l not in REALISERS]
    if unknown:
        raise InputError(
            "langs", f"no synthetic grammar for {', '.join(map(repr, unknown))}; known: {', '.join(REALISERS)}"
        )
    rows = []
    for iid, split, src, idx, text in ds.captions[["image_id", "split", "lang", "cap_idx", "text"]].itertuples(
        index=False
    ):
        plan = ds.plans[iid, src, int(idx)]
        for lang in dict.fromkeys([src, *langs]):
            rows.append((iid, split, src, int(idx), lang, text if lang == src else realise(plan, lang)))
    out = pd.DataFrame(rows, columns=["image_id", "split", "src_lang", "cap_idx", "lang", "text"])
    return out.astype(
        {"image_id": "str", "split": "str", "src_lang": "str", "cap_idx": np.int64, "lang": "str", "text": "str"}
    )


def write_dataset(ds: SyntheticDataset, out_dir: Path, image_size: int = 224) -> None:
    """Render every scene of ``ds`` to ``out_dir/<path>`` (PNG, RGB, ``image_size`` px square).

    Each file is written atomically; nothing else is written (the caller writes
    the tables). Rendering jitter comes from the image's own rng, so a file's
    bytes depend only on (seed, index, scene, image_size).
    """
    image_size = _check_int("image_size", image_size, 8)
    out_dir = Path(out_dir)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    for index, (scene, path) in enumerate(zip(ds.scenes, ds.images["path"], strict=True)):
        img = render_image(ds.seed, index, scene, image_size)
        with atomic_path(out_dir / path) as tmp:
            img.save(tmp, format="PNG")


def write_dictionaries(out_dir: Path, langs: Sequence[str], lexicon: str = "closed") -> list[Path]:
    """Write MUSE-format ``en-xx.txt`` and ``xx-en.txt`` for every ``xx`` in ``langs`` but en.

    ``lexicon`` must be the captions' (``long_tail`` adds the generated names: ~30K pairs).
    One ``source target`` pair a line, UTF-8, words as the tokenizer writes them
    (lower case; zh/ja whole words). A source word's lines are consecutive, its
    preferred translation first. Returns the paths written.
    """
    if isinstance(langs, str):
        raise InputError("langs", f"expected a list of language codes, got the string {langs!r}")
    unknown = [l for l in langs if l not in REALISERS]
    if unknown:
        raise InputError(
            "langs", f"no synthetic grammar for {', '.join(map(repr, unknown))}; known: {', '.join(REALISERS)}"
        )
    if lexicon not in LEXICONS:
        raise InputError("lexicon", f"unknown lexicon {lexicon!r}; expected one of {', '.join(LEXICONS)}")
    out_dir = Path(out_dir)
    written: list[Path] = []
    for lang in dict.fromkeys(langs):
        if lang == "en":
            continue
        pairs = glossary(lang, lexicon)
        for src, tgt, flip in (("en", lang, False), (lang, "en", True)):
            grouped: dict[str, list[str]] = {}
            for en, word in pairs:
                s, t = (word, en) if flip else (en, word)
                grouped.setdefault(s, []).append(t)
            path = out_dir / f"{src}-{tgt}.txt"
            write_text("".join(f"{s} {t}\n" for s, ts in grouped.items() for t in ts), path)
            written.append(path)
    return written
