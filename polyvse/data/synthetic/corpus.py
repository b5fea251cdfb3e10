"""A text-only corpus per synthetic language: the captions' grammar without images.

SMALR §3.1/§4 and MULE §Experiments initialise their word embeddings with FastText
vectors trained on large monolingual text (Wikipedia / Common Crawl), far more
text than the captions. The synthetic stand-in is the same grammar and lexicon
(:mod:`polyvse.data.synthetic.languages`, :mod:`polyvse.data.synthetic.lexicon`)
run on sampled scenes that are never rendered: plans drawn from scenes, realised
in one language. With ``lexicon="long_tail"`` it draws from the same Zipf-weighted
pools, so a larger corpus covers more of the captions' rare words (but, like
Wikipedia for Multi30K, not necessarily all).

Sentence ``i`` of language ``lang`` comes from the rng seeded by
``(seed, i, CORPUS_STREAM, language index)``: deterministic, independent of the
other sentences and languages, and a stream no caption of a dataset uses (so a
corpus does not repeat a dataset's captions of the same seed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from polyvse import LANGUAGES
from polyvse.data.stats import count_tokens
from polyvse.data.synthetic.languages import REALISERS, realise
from polyvse.data.synthetic.plan import caption_plan
from polyvse.data.synthetic.lexicon import LEXICONS
from polyvse.data.synthetic.scene import sample_scene
from polyvse.errors import InputError
from polyvse.io import write_text

CORPUS_STREAM = 99  # after the image streams of polyvse.data.synthetic (0-3)
# the synthetic languages written in Latin letters: English words inside their text share its script
LATIN_SCRIPT = ("en", "de", "fr", "cs", "af")


def english_share_for(lang: str, share: float) -> float:
    """The share of ``lang``'s corpus lines written in English: ``share`` for a language not written
    in Latin letters, 0 for one that is.

    Real web text of Arabic, Korean or Russian holds English passages, and FastText learns the
    Latin letters' n-grams from them; the MT of captions into those languages leaves English words
    untranslated (5.3 % of the Arabic MT's tokens at the scale config's sizes). Without English in
    the corpus those words' n-grams are never trained and their vectors are zero or nearly so
    (2,427 of the 20,121 Arabic types there), all alike: SMALR's latent assignment put them on one
    token. A Latin-script language's text trains those n-grams already."""
    return 0.0 if lang in LATIN_SCRIPT else float(share)


def text_corpus(
    lang: str,
    n_sentences: int,
    seed: int,
    lexicon: str = "closed",
    english_share: float = 0.0,
    typicality: float = 0.0,
) -> list[str]:
    """``n_sentences`` lines of text in ``lang``, each the realisation of one plan of a fresh scene;
    with ``english_share`` > 0 each line is, with that probability, the plan realised in English
    (call :func:`english_share_for` for the share a language gets). 0 draws nothing more: the corpus
    of every earlier run.

    ``typicality`` > 0 draws the scenes of the corpus's world (:mod:`polyvse.data.synthetic.world`:
    objects of a colour usually have its shapes and place), so that each colour, shape, size and count
    word gets contexts of its own, as in real text; 0 draws them as the images' scenes are drawn."""
    if lang not in REALISERS:
        raise InputError("lang", f"no synthetic grammar for {lang!r}; known: {', '.join(REALISERS)}")
    if lexicon not in LEXICONS:
        raise InputError("lexicon", f"unknown lexicon {lexicon!r}; expected one of {', '.join(LEXICONS)}")
    for key, value in (("n_sentences", n_sentences), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(key, f"expected an integer >= 0, got {value!r}")
    for key, value in (("english_share", english_share), ("typicality", typicality)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise InputError(key, f"expected a number in [0, 1], got {value!r}")
    sub = LANGUAGES.index(lang)
    out = []
    for i in range(int(n_sentences)):
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), i, CORPUS_STREAM, sub]))
        plan = caption_plan(sample_scene(rng, lexicon, typicality), rng, lexicon)
        in_english = english_share > 0 and rng.random() < english_share
        out.append(realise(plan, "en" if in_english else lang))
    return out


def write_text_corpus(
    path: str | Path,
    lang: str,
    n_sentences: int,
    seed: int,
    lexicon: str = "closed",
    english_share: float = 0.0,
    typicality: float = 0.0,
) -> dict[str, int]:
    """Write :func:`text_corpus` to ``path``, one sentence a line (UTF-8, atomically).

    The workflow's rule ``corpus`` (results/{dataset}/corpus/{lang}.txt), on which
    FastText is trained as SMALR §3.1/§4 and MULE §Experiments train theirs on
    Wikipedia. Returns ``lines``, ``tokens`` and ``types`` (lowercase ``\\w+`` runs,
    :func:`polyvse.data.stats.words`) for the log.
    """
    lines = text_corpus(lang, n_sentences, seed, lexicon, english_share, typicality)
    write_text("".join(line + "\n" for line in lines), Path(path))
    counts = count_tokens(lines)
    return {"lines": len(lines), "tokens": sum(counts.values()), "types": len(counts)}
