"""Measured quality of the configured MT: BLEU and chrF against references of the same plan.

SMALR (§4, Tables 1–2, the "Trans. to En" rows and the ¹ columns) and MULE
(§Experiments "Machine Translations", Table 4) report results obtained with
Google-Translate output without saying how good it was; a reader of our tables
needs to know how good the stand-in MT is. For the synthetic datasets every
English test caption's plan can be said in every language
(:func:`polyvse.data.synthetic.reference_captions`), which gives references:

* ``forward`` (en→xx): the MT of each English test caption against its plan
  realised in xx;
* ``back`` (xx→en): the MT of that realisation into English against the English
  caption (the direction of the translate-to-English baseline).

Scores are corpus BLEU and chrF (sacrebleu) on the text as the models see it:
both sides are tokenised by :func:`polyvse.text.tokenize.tokenize` (lower case,
no punctuation), since the offline backends (transfer, dictionary) write lower-case, unpunctuated
output by construction. BLEU's tokenizer is picked per language
(:func:`bleu_tokenizer`): ``zh`` for Chinese, ``char`` for Japanese (its MeCab
tokenizer needs packages the workflow does not install), ``13a`` otherwise.

Real-data adapters have no references: their rows say ``unmeasured``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from polyvse.errors import InputError
from polyvse.text.tokenize import UNSEGMENTED, tokenize
from polyvse.translate.backend import Translator
from polyvse.translate.errors import ErrorRates

QUALITY_COLUMNS = ["src", "tgt", "direction", "n", "bleu", "chrf", "backend"]
UNMEASURED = "unmeasured"
REFERENCE_COLUMNS = ["image_id", "split", "cap_idx", "lang", "text"]


def bleu_tokenizer(lang: str) -> str:
    """sacrebleu's tokenizer for a target language: 'zh', 'char' (ja) or '13a'."""
    return {"zh": "zh", "ja": "char"}.get(lang, "13a")


def normalise(text: str, lang: str) -> str:
    """``text`` as the models see it: tokenised, re-joined (no spaces in zh/ja)."""
    tokens = tokenize(text, lang, segmenter="spaces")
    return ("" if lang in UNSEGMENTED else " ").join(tokens)


def score(hypotheses: Sequence[str], references: Sequence[str], lang: str) -> tuple[float, float]:
    """(corpus BLEU, corpus chrF) of ``hypotheses`` against one reference each, both in ``lang``."""
    import sacrebleu  # imported here: only the mt_quality rule needs it

    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(f"score: {len(hypotheses)} hypotheses for {len(references)} references")
    hyp = [normalise(t, lang) for t in hypotheses]
    ref = [[normalise(t, lang) for t in references]]
    bleu = sacrebleu.corpus_bleu(hyp, ref, tokenize=bleu_tokenizer(lang)).score
    chrf = sacrebleu.corpus_chrf(hyp, ref).score
    return round(float(bleu), 2), round(float(chrf), 2)


def describe_backend(settings: Mapping) -> str:
    """The configured backend in a few words: ``transfer[ws=0.06,...,seed=0]``,
    ``dictionary[no errors]``, or the name of a backend without an error model."""
    name = str(settings["backend"])
    if name not in ("transfer", "dictionary"):
        return name
    errors = dict(settings.get("errors") or {})
    rates = ErrorRates.from_mapping(errors)
    if not rates.active:
        return f"{name}[no errors]"
    return f"{name}[{rates.key()},seed={int(errors.get('seed', 0))}]"


def english_test_references(table: pd.DataFrame, split: str = "test") -> pd.DataFrame:
    """The references of the English ``split`` captions: :data:`REFERENCE_COLUMNS`.

    ``table`` is either already that (:func:`polyvse.data.synthetic.reference_captions`)
    or a table of every caption's plan realisations with a ``src_lang`` column
    (:func:`polyvse.data.synthetic.plan_realisations`), whose ``src_lang == "en"``
    rows of ``split`` are kept.
    """
    if "src_lang" not in table.columns:
        return table
    rows = table[(table["src_lang"] == "en") & (table["split"] == split)]
    return rows[[c for c in REFERENCE_COLUMNS if c in rows.columns]].reset_index(drop=True)


def check_references(references: pd.DataFrame, captions: pd.DataFrame, where: str = "references") -> None:
    """The references' English rows must be the dataset's English captions (same config, same generator)."""
    missing = [c for c in REFERENCE_COLUMNS if c not in references.columns]
    if missing:
        raise InputError(where, f"references table lacks columns {missing} (has {list(references.columns)})")
    ref_en = references[references["lang"] == "en"].set_index(["image_id", "cap_idx"])["text"]
    cap = captions[(captions["lang"] == "en") & (captions["split"].isin(set(references["split"])))]
    cap = cap.set_index(["image_id", "cap_idx"])["text"]
    joined = ref_en.to_frame("ref").join(cap.to_frame("cap"), how="left")
    bad = joined[joined["ref"] != joined["cap"]]
    if len(bad):
        (iid, idx), row = next(iter(bad.iterrows()))
        raise InputError(
            where,
            f"{len(bad)} English references differ from the dataset's captions, e.g. "
            f"{iid} #{idx}: {row['ref']!r} vs {row['cap']!r}: the dataset was built with other "
            "settings; rebuild both",
        )


def mt_quality(references: pd.DataFrame, translator: Translator, backend: str) -> pd.DataFrame:
    """Forward (en→xx) and back (xx→en) BLEU/chrF of ``translator`` for every xx of ``references``.

    ``references``: :data:`REFERENCE_COLUMNS`, one row per (English caption, language).
    Returns :data:`QUALITY_COLUMNS`, one row per (src, tgt), forward rows first.
    """
    missing = [c for c in REFERENCE_COLUMNS if c not in references.columns]
    if missing:
        raise InputError("references", f"lacks columns {missing} (has {list(references.columns)})")
    wide = references.pivot_table(index=["image_id", "cap_idx"], columns="lang", values="text", aggfunc="first")
    if "en" not in wide.columns:
        raise InputError("references", "no English rows: references are realisations of English captions' plans")
    langs = [l for l in dict.fromkeys(references["lang"]) if l != "en"]
    rows: list[dict[str, object]] = []
    for direction, pairs in (("forward", [("en", l) for l in langs]), ("back", [(l, "en") for l in langs])):
        for src, tgt in pairs:
            both = wide[[src, tgt]].dropna()
            sources, refs = list(both[src]), list(both[tgt])
            bleu, chrf = score(translator.translate(sources, src, tgt), refs, tgt)
            rows.append(
                {
                    "src": src,
                    "tgt": tgt,
                    "direction": direction,
                    "n": len(both),
                    "bleu": bleu,
                    "chrf": chrf,
                    "backend": backend,
                }
            )
    return pd.DataFrame(rows, columns=QUALITY_COLUMNS)


def unmeasured_quality(langs: Sequence[str], backend: str) -> pd.DataFrame:
    """Rows for a dataset without references (real data): every en↔xx pair, scores ``unmeasured``."""
    others = [l for l in dict.fromkeys(langs) if l != "en"]
    rows = [
        {"src": s, "tgt": t, "direction": d, "n": 0, "bleu": UNMEASURED, "chrf": UNMEASURED, "backend": backend}
        for d, pairs in (("forward", [("en", l) for l in others]), ("back", [(l, "en") for l in others]))
        for s, t in pairs
    ]
    return pd.DataFrame(rows, columns=QUALITY_COLUMNS)


def read_mt_quality(path: str) -> pd.DataFrame:
    """Read an mt_quality.tsv, checking its columns (scores stay text: numbers or ``unmeasured``)."""
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    missing = [c for c in QUALITY_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(path, f"MT quality table lacks columns {missing} (has {list(table.columns)})")
    return table


def _bleu(table: pd.DataFrame, src: str, tgt: str) -> str:
    hit = table[(table["src"] == src) & (table["tgt"] == tgt)]
    if hit.empty:
        return UNMEASURED
    value = str(hit["bleu"].iloc[0])
    try:
        return f"{float(value):.1f}"
    except ValueError:
        return UNMEASURED


def mt_footnote(qualities: Mapping[str, pd.DataFrame]) -> str:
    """The footnote of a table with MT rows: the backend and its BLEU per language, per dataset.

    ``qualities``: dataset → its mt_quality table. Example: "MT: backend
    dictionary[...] (m30k); BLEU en→xx / xx→en: De 21.7 / 39.6, Fr 7.4 / 12.9."
    """
    parts = []
    for ds, table in qualities.items():
        backends = ", ".join(dict.fromkeys(table["backend"])) or UNMEASURED
        langs = [l for l in dict.fromkeys(list(table["src"]) + list(table["tgt"])) if l != "en"]
        scores = ", ".join(f"{l} {_bleu(table, 'en', l)} / {_bleu(table, l, 'en')}" for l in langs)
        parts.append(f"`{ds}`: backend {backends}; BLEU en→xx / xx→en: {scores or UNMEASURED}")
    return (
        "MT (training augmentation, test-time and CLC translations), measured against references of the same "
        "caption plan (results/{dataset}/mt_quality.tsv): " + "; ".join(parts) + "."
    )


def mt_datasets(config: Mapping, report: str) -> list[str]:
    """Datasets of a report whose rows train or test on machine translations (they get the MT footnote)."""
    from polyvse.config import needs_translations, report_evaluations

    out: list[str] = []
    for variant, protocol in report_evaluations(config, report):
        ds = config["variants"][variant]["dataset"]
        if ds not in out and needs_translations(config, variant, protocol):
            out.append(ds)
    return out
