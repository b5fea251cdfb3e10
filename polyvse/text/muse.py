"""MUSE-format bilingual dictionaries.

The format of MUSE's ground-truth dictionaries (Conneau et al., 2018, "Word
translation without parallel data", cited by SMALR and MULE): one ``src tgt``
pair a line, the two words separated by a space or a tab, files named
``{src}-{tgt}.txt`` (MUSE's split files ``en-de.0-5000.txt`` follow the same
rule). A source word may have several lines; for machine translation the first
listed target wins, the full list is kept for dictionary-based alignment.

Every malformed input fails with :class:`polyvse.errors.InputError` naming the
file, the line and the reason.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterable

from polyvse.errors import InputError

_FIELD_SEP = re.compile(r"[ \t]+")
# src-tgt, optionally followed by MUSE's split suffix (".0-5000"), then ".txt".
_PAIR_NAME = re.compile(r"^(?P<src>[A-Za-z]{2,3})-(?P<tgt>[A-Za-z]{2,3})(?P<suffix>\.[^/]*)?\.txt$")


def normalize_word(word: str) -> str:
    """The form a word takes after :func:`polyvse.text.tokenize.tokenize` (NFKC, lower case)."""
    return unicodedata.normalize("NFKC", word).lower()


def read_muse(path: str | Path) -> list[tuple[str, str]]:
    """Read the ``(source, target)`` pairs of a MUSE dictionary, in file order, as written.

    Blank lines are skipped; a line with one field or more than two, a file that
    is not UTF-8, a missing or empty file raise :class:`InputError`.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "dictionary file not found") from None
    except OSError as e:
        raise InputError(path, f"cannot read dictionary file: {e.strerror or e}") from None
    pairs: list[tuple[str, str]] = []
    offset = 0
    for lineno, raw in enumerate(data.splitlines(keepends=True), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(
                path,
                f"not valid UTF-8: byte 0x{raw[e.start]:02x} at byte offset {offset + e.start} of the file",
                line=lineno,
            ) from None
        offset += len(raw)
        if lineno == 1:
            line = line.removeprefix("\ufeff")  # a BOM written by some editors
        line = line.strip(" \t\r\n")
        if not line:
            continue
        fields = _FIELD_SEP.split(line)
        if len(fields) != 2:
            what = "one field" if len(fields) == 1 else f"{len(fields)} fields"
            raise InputError(
                path, f"expected 'source target' separated by a space or a tab, got {what}: {line[:80]!r}", line=lineno
            )
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise InputError(path, "dictionary has no entries")
    return pairs


def parse_pair_name(path: str | Path, languages: Collection[str]) -> tuple[str, str]:
    """The ``(src, tgt)`` language codes of a dictionary named ``{src}-{tgt}.txt``.

    Both codes must be in ``languages`` (the configured languages).
    """
    path = Path(path)
    m = _PAIR_NAME.match(path.name)
    if m is None:
        raise InputError(
            path, "cannot read the language pair from the file name: expected '{src}-{tgt}.txt', e.g. 'en-de.txt'"
        )
    src, tgt = m["src"], m["tgt"]
    for code in (src, tgt):
        if code not in languages:
            raise InputError(
                path,
                f"language code {code!r} in the file name is not a configured language "
                f"(configured: {', '.join(sorted(languages))})",
            )
    if src == tgt:
        raise InputError(path, f"source and target language are both {src!r}")
    return src, tgt


def discover_dictionaries(directory: str | Path, languages: Collection[str]) -> dict[tuple[str, str], Path]:
    """Map ``(src, tgt)`` to the file ``{src}-{tgt}.txt`` in ``directory`` for configured languages.

    Files of other languages are ignored, since MUSE's download holds over a
    hundred of them; MUSE's split files (``en-de.0-5000.txt``) are ignored too,
    the full dictionary being the one to translate with. To have every file
    checked, pass the files explicitly to :func:`parse_pair_name`.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(directory, "dictionary directory not found")
    found: dict[tuple[str, str], Path] = {}
    for path in sorted(directory.glob("*.txt")):
        m = _PAIR_NAME.match(path.name)
        if m is None or m["suffix"] or m["src"] == m["tgt"]:
            continue
        if m["src"] in languages and m["tgt"] in languages:
            found[(m["src"], m["tgt"])] = path
    return found


@dataclass
class MuseDictionary:
    """A bilingual dictionary ``src``→``tgt``; source words normalised like the tokenizer's output.

    ``entries`` maps a source word to its targets in file order (duplicates dropped).
    """

    src: str
    tgt: str
    entries: dict[str, list[str]]
    path: Path | None = None
    max_source_chars: int = field(init=False)

    def __post_init__(self) -> None:
        self.max_source_chars = max((len(w) for w in self.entries), default=0)

    @classmethod
    def from_pairs(
        cls, pairs: Iterable[tuple[str, str]], src: str, tgt: str, path: Path | None = None
    ) -> "MuseDictionary":
        entries: dict[str, list[str]] = {}
        for s, t in pairs:
            targets = entries.setdefault(normalize_word(s), [])
            if t not in targets:
                targets.append(t)
        return cls(src=src, tgt=tgt, entries=entries, path=path)

    @classmethod
    def from_file(cls, path: str | Path, languages: Collection[str]) -> "MuseDictionary":
        """Load ``{src}-{tgt}.txt``; the pair comes from the name and must be configured."""
        path = Path(path)
        src, tgt = parse_pair_name(path, languages)
        return cls.from_pairs(read_muse(path), src, tgt, path=path)

    def first(self, word: str) -> str | None:
        """The first listed translation of ``word`` (already normalised), or None."""
        targets = self.entries.get(word)
        return targets[0] if targets else None

    def __contains__(self, word: object) -> bool:
        return word in self.entries

    def __len__(self) -> int:
        return len(self.entries)
