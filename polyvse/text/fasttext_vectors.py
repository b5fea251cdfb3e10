"""Monolingual FastText word vectors, one model per language.

SMALR §3.1 and MULE (§Approach, "we initialize our word embeddings from
300-dimensional monolingual FastText embeddings (Bojanowski et al. 2017)")
start every word from a FastText vector. Two sources:

* **trained here** (the default): a skip-gram FastText model
  (:func:`train_fasttext`) on the language's text-only corpus (synthetic
  datasets: :func:`polyvse.data.synthetic.corpus.text_corpus`, the stand-in for
  the papers' Wikipedia text; read by :func:`read_corpus`) or else its training
  captions, written one tokenised sentence a line with tokens joined by spaces,
  so that FastText sees the words our tokenizer produces (zh/ja characters, by
  default, are words);
* **pretrained**: a user's ``cc.{lang}.300.bin`` (a full FastText model, with
  subwords) or a ``.vec`` text file (header ``N D``, then ``word v1 … vD``; no
  subwords), named in config under ``fasttext.pretrained.{lang}``.

Out-of-vocabulary words get FastText's subword vectors (``get_word_vector``:
the average of the word's character n-gram vectors); a ``.vec`` file has no
subwords, so its out-of-vocabulary words get zeros. Both cases are counted by
:meth:`WordVectors.lookup` so that the caller can log them.

Reproducibility: ``fasttext.train_unsupervised`` takes no seed (it seeds its
generators with a fixed 0), and with several threads the order of the
asynchronous (Hogwild) updates changes from run to run; runs are identical
only with ``threads=1``. More threads trade that for speed.

A FastText bug makes even that false unless worked around: its random
initialisation writes only the first ``threads/10`` of the input matrix
(facebookresearch/fastText#1061: the block size is ``rows·dim/10`` whatever the
thread count), and the matrix's memory (``intgemm::AlignedVector``) is not
zeroed, so the other rows start from whatever the process freed earlier:
vectors change from run to run in one process, and garbage NaNs abort training
("Encountered NaN."). :func:`train_fasttext` therefore trains with glibc's
``M_PERTURB`` set so that fresh allocations are zero-filled (the rows then start
at zero, as in a fresh process); elsewhere than glibc it logs a warning.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gzip
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

import numpy as np

from polyvse.config import ConfigError, pretrained_key, pretrained_suffix
from polyvse.errors import InputError
from polyvse.text.tokenize import tokenize
from polyvse.text.muse import normalize_word

log = logging.getLogger(__name__)


class WordVectors(Protocol):
    """Anything that gives a vector to every word."""

    dim: int

    def lookup(self, tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """``(V, dim)`` float32 vectors of ``tokens`` and the tokens the model does not know."""
        ...

    def vectors_for(self, tokens: Sequence[str]) -> np.ndarray:
        """``(V, dim)`` float32 vectors, row i for ``tokens[i]``."""
        ...


class FastTextVectors:
    """A FastText model (trained here, or a pretrained ``.bin``).

    Words outside the model's vocabulary get the average of their character
    n-gram vectors (FastText's subword vectors).
    """

    def __init__(self, model, source: str = "trained") -> None:
        self.model = model
        self.source = source
        self.dim = int(model.get_dimension())

    def lookup(self, tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        unknown: list[str] = []
        for i, tok in enumerate(tokens):
            if self.model.get_word_id(tok) < 0:
                unknown.append(tok)
            out[i] = self.model.get_word_vector(tok)
        return out, unknown

    def vectors_for(self, tokens: Sequence[str]) -> np.ndarray:
        return self.lookup(tokens)[0]


def _open_text(path: Path) -> IO[str]:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="strict", newline="\n")
    return open(path, encoding="utf-8", errors="strict", newline="\n")


def _read_vec_header(line: str, path: Path) -> tuple[int, int]:
    fields = line.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise InputError(
            path, f"expected a .vec header 'N D' (word count, dimension), got {line.strip()[:80]!r}", line=1
        )
    return int(fields[0]), int(fields[1])


class VecFileVectors:
    """Word vectors of a ``.vec`` text file (FastText's text format, optionally gzipped).

    The file is read when vectors are asked for, keeping only the rows of the
    words asked for: a ``cc.{lang}.300.vec`` holds 2M words, far more than a
    vocabulary needs. A word matches its own row, or else the first row (the
    files are sorted by frequency) whose word normalises to it like the
    tokenizer's output (NFKC, lower case: "The" serves "the"). Unmatched words
    get zeros, since a ``.vec`` file has no subwords.
    """

    source = "vec"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(self.path, ".vec file not found")
        with _open_text(self.path) as f:
            self.n_words, self.dim = _read_vec_header(f.readline(), self.path)

    def _take(self, line: str, lineno: int, wanted: set[str], exact: dict, folded: dict) -> None:
        # Fields are separated by single spaces (the word may hold other whitespace,
        # e.g. U+00A0); only the rows of wanted words are parsed and checked.
        parts = line.rstrip("\n").rstrip(" ").split(" ")
        if len(parts) == 1 and not parts[0]:
            return
        word = parts[0]
        if word in wanted and word not in exact:
            table, key = exact, word
        else:
            key = normalize_word(word)
            if key not in wanted or key in folded or key == word:
                return
            table = folded
        if len(parts) != self.dim + 1:
            raise InputError(
                self.path, f"word {word[:40]!r} has {len(parts) - 1} values; the header says {self.dim}", line=lineno
            )
        try:
            table[key] = np.asarray(parts[1:], dtype=np.float32)
        except ValueError:
            raise InputError(self.path, f"word {word[:40]!r}: a value is not a number", line=lineno) from None

    def lookup(self, tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        wanted = set(tokens)
        exact: dict[str, np.ndarray] = {}
        folded: dict[str, np.ndarray] = {}
        lineno = 1
        with _open_text(self.path) as f:
            f.readline()
            try:
                for lineno, line in enumerate(f, start=2):
                    self._take(line, lineno, wanted, exact, folded)
            except UnicodeDecodeError as exc:
                # decoding runs ahead in blocks: the bad byte is at or after this line
                raise InputError(
                    self.path, f"not valid UTF-8 at or after this line ({exc.reason})", line=lineno + 1
                ) from None
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        unknown: list[str] = []
        for i, tok in enumerate(tokens):
            vec = exact.get(tok, folded.get(tok))
            if vec is None:
                unknown.append(tok)
            else:
                out[i] = vec
        return out, unknown

    def vectors_for(self, tokens: Sequence[str]) -> np.ndarray:
        return self.lookup(tokens)[0]


def load_pretrained(path: str | Path, key: str = "fasttext.pretrained") -> WordVectors:
    """A pretrained ``.bin`` FastText model or ``.vec``/``.vec.gz`` file; errors name ``key``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(key, f"pretrained FastText file {path} does not exist")
    kind = pretrained_suffix(path)
    if kind == ".bin":
        import fasttext

        try:
            return FastTextVectors(fasttext.load_model(str(path)), source="bin")
        except ValueError as exc:  # fasttext raises ValueError on a file that is not a model
            raise InputError(path, f"cannot load as a FastText .bin model ({exc}); config key {key}") from exc
    if kind in (".vec", ".vec.gz"):
        return VecFileVectors(path)
    raise ConfigError(key, f"{path}: expected a FastText .bin model or a .vec/.vec.gz text file")


_M_PERTURB = -6  # glibc mallopt parameter: fill allocations with perturb ^ 0xff, frees with perturb


@contextlib.contextmanager
def zero_filled_allocations() -> Iterator[bool]:
    """Within the block, memory from glibc's ``malloc`` is zero-filled (``M_PERTURB = 0xff``).

    Works around FastText's uninitialised input-matrix rows (module docstring).
    Yields whether it could (False off glibc). Afterwards the perturb byte is
    reset to ``MALLOC_PERTURB_`` from the environment (glibc's own source of it), or 0.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        yield False
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if mallopt(_M_PERTURB, 0xFF) != 1:
        yield False
        return
    try:
        yield True
    finally:
        try:
            restore = int(os.environ.get("MALLOC_PERTURB_", "0")) & 0xFF
        except ValueError:
            restore = 0
        mallopt(_M_PERTURB, restore)


def read_corpus(path: str | Path, lang: str, segmenter: str = "chars") -> list[list[str]]:
    """The tokenised lines of a text-only corpus file (one sentence a line, UTF-8).

    Tokenised as the captions are (:func:`polyvse.text.tokenize.tokenize`), so that
    the corpus words are the vocabulary's words. Empty lines give empty sentences
    (:func:`write_corpus` skips them).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "text corpus not found")
    with open(path, encoding="utf-8", newline="\n") as f:
        return [tokenize(line.rstrip("\n"), lang, segmenter) for line in f]


def write_corpus(sentences: Iterable[Sequence[str]], path: str | Path) -> int:
    """Write one tokenised sentence a line, tokens joined by single spaces.

    Empty sentences are skipped. Returns the number of lines written.
    """
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for tokens in sentences:
            if tokens:
                f.write(" ".join(tokens))
                f.write("\n")
                n += 1
    return n


def train_fasttext(
    sentences: Iterable[Sequence[str]],
    dim: int = 300,
    epochs: int = 5,
    min_count: int = 1,
    threads: int = 1,
    bucket: int = 2_000_000,
    lr: float = 0.05,
    window: int = 5,
    min_n: int = 3,
    max_n: int = 6,
    tmp_dir: str | Path | None = None,
) -> FastTextVectors:
    """Train a skip-gram FastText model on tokenised ``sentences``.

    The corpus goes through a temporary file (FastText reads only files),
    removed afterwards. ``threads=1`` makes the run reproducible (see the module
    docstring); ``bucket`` is the number of hashed n-gram rows, and the model
    holds ``(words + bucket) × dim`` float32s (2.4 GB at FastText's defaults).
    Raises :class:`ValueError` when no sentence has a token.
    """
    import fasttext

    fd, tmp = tempfile.mkstemp(prefix="polyvse-fasttext-", suffix=".txt", dir=tmp_dir)
    os.close(fd)
    try:
        n_lines = write_corpus(sentences, tmp)
        if n_lines == 0:
            raise ValueError("FastText: the training corpus has no tokens")
        with zero_filled_allocations() as zeroed:
            if not zeroed:
                log.warning(
                    "cannot make allocations zero-filled (no glibc mallopt): FastText starts part of "
                    "its input matrix from uninitialised memory, so vectors may differ run to run"
                )
            try:
                model = fasttext.train_unsupervised(
                    tmp,
                    model="skipgram",
                    dim=int(dim),
                    epoch=int(epochs),
                    minCount=int(min_count),
                    thread=int(threads),
                    bucket=int(bucket),
                    lr=float(lr),
                    ws=int(window),
                    minn=int(min_n),
                    maxn=int(max_n),
                    verbose=0,
                )
            except RuntimeError as exc:
                raise RuntimeError(
                    f"FastText training failed on {n_lines} sentences ({exc}): try a smaller learning rate than {lr}"
                ) from exc
    finally:
        os.unlink(tmp)
    return FastTextVectors(model, source="trained")


def vocabulary_vectors(
    tokens: Sequence[str],
    lang: str,
    settings: Mapping,
    sentences: Iterable[Sequence[str]] | None = None,
    threads: int = 1,
) -> tuple[np.ndarray, dict]:
    """``(V, dim)`` float32 vectors of a language's vocabulary ``tokens``, and a summary.

    ``settings`` is config's ``fasttext`` block. When it names a pretrained file
    for ``lang``, that file is used (its dimension must equal ``settings['dim']``);
    otherwise a model is trained on ``sentences`` with ``threads`` threads. The
    summary holds the source, the seconds spent training (or loading) and
    looking up, the number of tokens the model did not know, and how they were
    filled.
    """
    dim = int(settings.get("dim", 300))
    path = (settings.get("pretrained") or {}).get(lang)
    t0 = time.perf_counter()
    if path:
        key = pretrained_key(lang)
        model = load_pretrained(path, key)
        if model.dim != dim:
            raise ConfigError(
                key, f"{path} holds {model.dim}-D vectors but fasttext.dim is {dim}; set fasttext.dim: {model.dim}"
            )
    else:
        if sentences is None:
            raise ValueError(f"no pretrained vectors for {lang!r}: training sentences are needed")
        model = train_fasttext(
            sentences,
            dim=dim,
            epochs=settings.get("epochs", 5),
            min_count=settings.get("min_count", 1),
            threads=threads,
            bucket=settings.get("bucket", 2_000_000),
        )
    vectors, unknown = model.lookup(tokens)
    seconds = time.perf_counter() - t0  # a .vec file is read by the lookup
    summary = {
        "lang": lang,
        "source": model.source,
        "path": str(path) if path else None,
        "dim": model.dim,
        "words": len(tokens),
        "seconds": round(seconds, 3),
        "unknown": len(unknown),
        "unknown_examples": unknown[:10],
        "unknown_filled_with": "zeros" if model.source == "vec" else "subword vectors",
        "threads": threads if not path else None,
    }
    return vectors, summary
