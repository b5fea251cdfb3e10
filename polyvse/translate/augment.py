"""Machine-translated captions: training augmentation, test-time translations, CLC queries.

Pure functions on the canonical captions table (``image_id, split, lang,
cap_idx, text, origin``). Rows they add have ``origin = "mt"`` and say what
they translate: ``source_lang`` and ``source_cap_idx`` (missing on human rows).
Human rows are never modified or dropped: the output starts with the input
rows, unchanged and in their order, followed by the added rows.

Every function translates in bulk: the distinct texts of each (source, target)
pair go to the translator in one call (the translator batches and caches).

* :func:`augment_training` — SMALR §4 and MULE §Experiments ("Machine
  Translations"): every train/val image gets at least five sentences in every
  language.
* :func:`test_translations` — SMALR §4: "for languages with no human-generated
  sentences, we use machine translations at test time as well", translated from
  English (the ¹ columns of SMALR Tables 1–2).
* :func:`clc_translations` — SMALR §3.4: a query in language l_i is translated
  into every other language of L \\ {l_i} for the cross-lingual consistency
  module; its rows into English are also the queries of the "Trans. to En"
  baseline (SMALR Tables 1–2, MULE Table 4(b)).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

import pandas as pd

from polyvse.errors import InputError
from polyvse.translate.backend import Translator

CAPTION_COLUMNS = ["image_id", "split", "lang", "cap_idx", "text", "origin"]
MT_COLUMNS = ["source_lang", "source_cap_idx"]
CLC_COLUMNS = ["image_id", "lang", "cap_idx", "tgt_lang", "text"]


def _check_columns(captions: pd.DataFrame, where: str = "captions") -> None:
    missing = [c for c in CAPTION_COLUMNS if c not in captions.columns]
    if missing:
        raise InputError(where, f"captions table lacks columns {missing} (has {list(captions.columns)})")


def _translate_bulk(
    translator: Translator, requests: dict[tuple[str, str], Iterable[str]]
) -> dict[tuple[str, str], dict[str, str]]:
    """One translator call per (src, tgt) with its distinct texts → {(src, tgt): {text: translation}}."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for (src, tgt), texts in sorted(requests.items()):
        unique = list(dict.fromkeys(texts))
        out[(src, tgt)] = dict(zip(unique, translator.translate(unique, src, tgt)))
    return out


def _with_mt_columns(captions: pd.DataFrame) -> pd.DataFrame:
    out = captions.reset_index(drop=True)
    if "source_lang" not in out.columns:
        out = out.assign(source_lang=pd.Series([None] * len(out), dtype="str"))
    if "source_cap_idx" not in out.columns:
        out = out.assign(source_cap_idx=pd.Series([pd.NA] * len(out), dtype="Int64"))
    return out


def _append_rows(captions: pd.DataFrame, rows: list[dict[str, object]]) -> pd.DataFrame:
    """Input rows unchanged and in order, then ``rows`` sorted by (image_id, lang, cap_idx)."""
    base = _with_mt_columns(captions)
    if not rows:
        return base
    added = pd.DataFrame(rows, columns=[*CAPTION_COLUMNS, *MT_COLUMNS])
    added = added.sort_values(["image_id", "lang", "cap_idx"], kind="stable")
    added = added.astype(
        {
            "source_lang": "str",
            "source_cap_idx": "Int64",
            "cap_idx": base["cap_idx"].dtype,
            "image_id": base["image_id"].dtype,
        }
    )
    return pd.concat([base, added[base.columns.intersection(added.columns, sort=False)]], ignore_index=True)


def augment_training(
    captions: pd.DataFrame,
    langs: Sequence[str],
    source_order: Sequence[str],
    translator: Translator,
    min_per_lang: int = 5,
    splits: Sequence[str] = ("train", "val"),
) -> pd.DataFrame:
    """Fill every image of ``splits`` up to ``min_per_lang`` sentences in every language of ``langs``.

    For an image short of sentences in language ``t``, the sources are that
    image's human captions in the languages of ``source_order`` (excluding
    ``t``), taken language by language in that order and by ``cap_idx``
    within a language; the i-th missing sentence translates source ``i mod
    n_sources``, so translations are of different captions wherever the image
    has enough of them. ``cap_idx`` of added rows continues after the image's
    existing ones in ``t``. An image with no human caption in any source
    language raises :class:`InputError`.

    Returns the input rows (unchanged) followed by the added ``origin="mt"``
    rows, with ``source_lang`` / ``source_cap_idx`` columns (missing on input rows).
    """
    _check_columns(captions)
    if min_per_lang < 0:
        raise ValueError("min_per_lang must be ≥ 0")
    rows = captions[captions["split"].isin(list(splits))]
    human = rows[rows["origin"] == "human"].sort_values(["image_id", "lang", "cap_idx"], kind="stable")
    # image -> lang -> [(cap_idx, text)] of human captions
    human_by_image: dict[object, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    for image_id, lang, cap_idx, text in human[["image_id", "lang", "cap_idx", "text"]].itertuples(index=False):
        human_by_image[image_id][lang].append((int(cap_idx), text))
    # image -> lang -> (count of existing rows, highest cap_idx)
    existing = rows.groupby(["image_id", "lang"])["cap_idx"].agg(["size", "max"])
    existing_map = {k: (int(n), int(m)) for k, n, m in zip(existing.index, existing["size"], existing["max"])}
    split_of = dict(zip(rows["image_id"], rows["split"]))

    plan: list[tuple[object, str, int, str, int, str]] = []  # image, tgt, cap_idx, src, src_cap_idx, text
    for image_id in sorted(split_of, key=str):
        by_lang = human_by_image.get(image_id, {})
        for tgt in langs:
            count, top = existing_map.get((image_id, tgt), (0, -1))
            need = min_per_lang - count
            if need <= 0:
                continue
            sources = [(src, idx, text) for src in source_order if src != tgt for idx, text in by_lang.get(src, [])]
            if not sources:
                raise InputError(
                    "captions",
                    f"image {image_id!r} ({split_of[image_id]}) has no human caption in "
                    f"any source language {list(source_order)} to translate into {tgt!r}",
                )
            for i in range(need):
                src, src_idx, text = sources[i % len(sources)]
                plan.append((image_id, tgt, top + 1 + i, src, src_idx, text))

    requests: dict[tuple[str, str], list[str]] = defaultdict(list)
    for _, tgt, _, src, _, text in plan:
        requests[(src, tgt)].append(text)
    translated = _translate_bulk(translator, requests)
    added = [
        {
            "image_id": image_id,
            "split": split_of[image_id],
            "lang": tgt,
            "cap_idx": cap_idx,
            "text": translated[(src, tgt)][text],
            "origin": "mt",
            "source_lang": src,
            "source_cap_idx": src_idx,
        }
        for image_id, tgt, cap_idx, src, src_idx, text in plan
    ]
    return _append_rows(captions, added)


def test_translations(
    captions: pd.DataFrame, langs: Sequence[str], translator: Translator, pivot: str = "en", split: str = "test"
) -> pd.DataFrame:
    """Translate the ``pivot`` (English) captions of ``split`` into the languages that have none there.

    A language of ``langs`` gets translations when it has no human caption in
    ``split`` at all; a language with human test captions on some images is
    evaluated on those (human) images only and gets none, so no test set mixes
    human and translated queries. Languages that already have rows in ``split``
    are left alone, which makes the function idempotent. The translation of
    pivot caption ``k`` gets ``cap_idx = k`` (``source_cap_idx = k``).

    Returns the input rows (unchanged) followed by the added ``origin="mt"`` rows.
    """
    _check_columns(captions)
    rows = captions[captions["split"] == split]
    langs_present = set(rows["lang"])
    targets = [lang for lang in langs if lang != pivot and lang not in langs_present]
    sources = rows[(rows["lang"] == pivot) & (rows["origin"] == "human")].sort_values(
        ["image_id", "cap_idx"], kind="stable"
    )
    if sources.empty or not targets:
        return _append_rows(captions, [])
    texts = list(sources["text"])
    translated = _translate_bulk(translator, {(pivot, tgt): texts for tgt in targets})
    added = [
        {
            "image_id": image_id,
            "split": split,
            "lang": tgt,
            "cap_idx": int(cap_idx),
            "text": translated[(pivot, tgt)][text],
            "origin": "mt",
            "source_lang": pivot,
            "source_cap_idx": int(cap_idx),
        }
        for tgt in targets
        for image_id, cap_idx, text in sources[["image_id", "cap_idx", "text"]].itertuples(index=False)
    ]
    return _append_rows(captions, added)


def mt_test_languages(captions: pd.DataFrame, split: str = "test") -> list[str]:
    """Languages whose ``split`` captions are machine translations (to mark them in reports, e.g. with ¹)."""
    _check_columns(captions)
    rows = captions[captions["split"] == split]
    human_langs = set(rows.loc[rows["origin"] == "human", "lang"])
    return sorted(set(rows.loc[rows["origin"] == "mt", "lang"]) - human_langs)


def clc_translations(
    captions: pd.DataFrame,
    langs: Sequence[str],
    translator: Translator,
    split: str = "test",
    origins: Sequence[str] = ("human",),
) -> pd.DataFrame:
    """Every ``split`` caption of ``origins`` translated into every other language of ``langs``.

    A separate table keyed by the original caption: ``image_id, lang`` (the
    caption's language), ``cap_idx``, ``tgt_lang``, ``text`` (the translation),
    sorted by that key. Captions in languages outside ``langs`` are skipped. Pass
    ``origins=("human", "mt")`` to also translate the test-time translations of
    :func:`test_translations` (the queries of languages without human captions).
    """
    _check_columns(captions)
    rows = captions[
        (captions["split"] == split) & captions["origin"].isin(list(origins)) & captions["lang"].isin(list(langs))
    ]
    requests: dict[tuple[str, str], list[str]] = {}
    for src, group in rows.groupby("lang", sort=True):
        for tgt in langs:
            if tgt != src:
                requests[(str(src), tgt)] = list(group["text"])
    translated = _translate_bulk(translator, requests)
    out_rows = [
        (image_id, src, int(cap_idx), tgt, translated[(src, tgt)][text])
        for image_id, src, cap_idx, text in rows[["image_id", "lang", "cap_idx", "text"]].itertuples(index=False)
        for tgt in langs
        if tgt != src
    ]
    out = pd.DataFrame(out_rows, columns=CLC_COLUMNS)
    out = out.astype(
        {
            "image_id": captions["image_id"].dtype,
            "cap_idx": captions["cap_idx"].dtype,
            "lang": "str",
            "tgt_lang": "str",
            "text": "str",
        }
    )
    return out.sort_values(["image_id", "lang", "cap_idx", "tgt_lang"], kind="stable").reset_index(drop=True)


# Its name starts with "test": keep pytest from collecting it where tests import it.
test_translations.__test__ = False  # type: ignore[attr-defined]
