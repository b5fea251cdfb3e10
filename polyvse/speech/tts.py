"""Synthetic spoken captions with Debian's ``espeak-ng``.

Each utterance gets its own voice, drawn from a :class:`VoicePool`: an accent
(English has several), a voice variant (``+m1`` … ``+m7``, ``+f1`` … ``+f5``), a
speaking rate (words per minute) and a pitch (espeak's 0–99 scale). The full
pool (every installed accent and variant, 130–190 wpm, pitch 30–70) is the
default; a narrower pool makes an easier dataset (``speech.tts`` in the config).
The generator of a batch item is seeded from the batch seed and the item's key,
so an utterance sounds the same whatever the order or the number of processes.

espeak-ng writes 22050 Hz mono 16-bit wav and ends every utterance with 0.24–0.35 s of
digital silence (exact zeros), 7 % of the default data's frames, which every audio encoder would
convolve: we keep :data:`TRAILING_SILENCE_S` of it (:func:`trim_trailing_silence`), resample to
16 kHz (soxr) and write 16-bit PCM mono atomically. Text reaches espeak on stdin (never as an argument,
so a caption starting with "-" is not read as an option). Japanese must be kana:
espeak-ng reads kanji as "Chinese letter", so kanji are refused.

Install: ``apt-get install -y espeak-ng``.
"""

from __future__ import annotations

import multiprocessing
import re
import shutil
import subprocess
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from polyvse.errors import InputError
from polyvse.io import atomic_path

SAMPLE_RATE = 16000
RATE_WPM = (130, 190)
PITCH = (30, 70)
# accents first: the voice names espeak-ng 1.51 ships for these languages
LANGUAGE_VOICES: dict[str, tuple[str, ...]] = {
    "en": ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc"),
    "hi": ("hi",),
    "ja": ("ja",),
}
VARIANTS: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5", "m6", "m7", "f1", "f2", "f3", "f4", "f5")
_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class VoicePool:
    """What an utterance's voice is drawn from.

    accents: per language, the espeak-ng voice names to draw from (a language
    missing here draws from all of :data:`LANGUAGE_VOICES`); variants: the
    ``+variant`` names (empty: the voice's own); rate_wpm, pitch: inclusive ranges.
    """

    accents: tuple[tuple[str, tuple[str, ...]], ...] = ()
    variants: tuple[str, ...] = VARIANTS
    rate_wpm: tuple[int, int] = RATE_WPM
    pitch: tuple[int, int] = PITCH

    def __post_init__(self) -> None:
        for name, (lo, hi) in (("rate_wpm", self.rate_wpm), ("pitch", self.pitch)):
            if not lo <= hi:
                raise ValueError(f"{name} range [{lo}, {hi}] is empty")
        if not (80 <= self.rate_wpm[0] and self.rate_wpm[1] <= 450):
            raise ValueError(f"rate_wpm {list(self.rate_wpm)} outside espeak-ng's 80-450 words per minute")
        if not (0 <= self.pitch[0] and self.pitch[1] <= 99):
            raise ValueError(f"pitch {list(self.pitch)} outside espeak-ng's 0-99")

    @classmethod
    def from_config(cls, tts: Mapping[str, Any]) -> "VoicePool":
        """From the ``speech.tts`` settings (``accents``, ``variants``, ``rate_wpm``, ``pitch``; all optional)."""
        accents = tts.get("accents") or {}
        return cls(
            accents=tuple((lang, tuple(names)) for lang, names in sorted(accents.items())),
            variants=tuple(tts.get("variants", VARIANTS)),
            rate_wpm=tuple(tts.get("rate_wpm", RATE_WPM)),  # type: ignore[arg-type]
            pitch=tuple(tts.get("pitch", PITCH)),
        )  # type: ignore[arg-type]

    def accents_for(self, lang: str) -> tuple[str, ...]:
        return dict(self.accents).get(lang, LANGUAGE_VOICES.get(lang, ()))


DEFAULT_POOL = VoicePool()


class EspeakNotFound(RuntimeError):
    """espeak-ng is not installed."""

    def __init__(self) -> None:
        super().__init__("espeak-ng not found on PATH: install it with `apt-get install -y espeak-ng`")


@dataclass(frozen=True)
class Voice:
    """One utterance's voice: espeak name (``en-gb+f3``), rate (wpm) and pitch (0–99)."""

    name: str
    rate: int
    pitch: int


@dataclass(frozen=True)
class SpeechRequest:
    """One caption to speak into ``path``; ``key`` seeds its voice (defaults to the file name)."""

    text: str
    lang: str
    path: str
    key: str | None = None


@dataclass(frozen=True)
class SynthesisResult:
    path: str
    lang: str
    voice: str
    rate: int
    pitch: int
    duration_s: float
    synth_s: float


def espeak_binary() -> str:
    """Path of espeak-ng; raises :class:`EspeakNotFound`."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise EspeakNotFound()
    return exe


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


@lru_cache(maxsize=1)
def installed_voices() -> tuple[frozenset[str], frozenset[str]]:
    """(language voice names, variant names) that this espeak-ng has."""
    exe = espeak_binary()

    def listing(arg: str) -> list[list[str]]:
        out = subprocess.run([exe, arg], capture_output=True, text=True, check=True).stdout
        return [line.split() for line in out.splitlines()[1:] if line.strip()]

    languages = frozenset(row[1] for row in listing("--voices") if len(row) >= 2)
    variants = frozenset(row[4].split("/")[-1] for row in listing("--voices=variant") if len(row) >= 5)
    return languages, variants


def voices_for(lang: str, pool: VoicePool = DEFAULT_POOL) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(accent voices, variants) of ``pool`` for ``lang``, checked against what espeak-ng has installed.

    The full default pool keeps what is installed; a voice or variant that a
    narrower pool names and espeak-ng lacks is an error (it would change the data).
    """
    if lang not in LANGUAGE_VOICES:
        raise ValueError(f"no espeak-ng voice configured for language {lang!r}; have {sorted(LANGUAGE_VOICES)}")
    languages, variants = installed_voices()
    wanted_accents, explicit_accents = pool.accents_for(lang), lang in dict(pool.accents)
    accents = tuple(v for v in wanted_accents if v in languages)
    if explicit_accents and len(accents) < len(wanted_accents):
        raise RuntimeError(
            f"espeak-ng has no voice {sorted(set(wanted_accents) - set(accents))} "
            f"(speech.tts.accents.{lang}); installed: {sorted(languages)}"
        )
    if not accents:
        raise RuntimeError(f"espeak-ng has no voice for {lang!r} (looked for {wanted_accents})")
    chosen = tuple(v for v in pool.variants if v in variants)
    if pool.variants != VARIANTS and len(chosen) < len(pool.variants):
        raise RuntimeError(
            f"espeak-ng has no variant {sorted(set(pool.variants) - set(chosen))} "
            f"(speech.tts.variants); installed: {sorted(variants)}"
        )
    return accents, chosen


def pick_voice(lang: str, rng: np.random.Generator, pool: VoicePool = DEFAULT_POOL) -> Voice:
    """Draw an accent, a variant, a rate and a pitch for one utterance from ``pool``."""
    accents, variants = voices_for(lang, pool)
    name = accents[int(rng.integers(len(accents)))]
    if variants:
        name = f"{name}+{variants[int(rng.integers(len(variants)))]}"
    (r_lo, r_hi), (p_lo, p_hi) = pool.rate_wpm, pool.pitch
    return Voice(name, int(rng.integers(r_lo, r_hi + 1)), int(rng.integers(p_lo, p_hi + 1)))


def check_text(text: str, lang: str, where: str) -> None:
    if not text.strip():
        raise InputError(where, "empty caption: nothing to speak")
    if lang == "ja" and _KANJI.search(text):
        raise InputError(where, "Japanese text must be kana: espeak-ng reads kanji as 'Chinese letter'")


TRAILING_SILENCE_S = 0.05
"""Seconds of espeak-ng's closing digital silence an utterance keeps: a speech-like pause."""


def trim_trailing_silence(signal: np.ndarray, sample_rate: int, keep_s: float = TRAILING_SILENCE_S) -> np.ndarray:
    """``signal`` ``(N,)`` without its closing run of exact zeros beyond ``keep_s`` seconds of it
    (a signal of zeros alone is returned as it is)."""
    sounding = np.flatnonzero(signal)
    if sounding.size == 0:
        return signal
    return signal[: int(sounding[-1]) + 1 + int(round(keep_s * sample_rate))]  # a shorter tail stays whole


def synthesize(
    text: str,
    lang: str,
    out_path: str | Path,
    rng: np.random.Generator | None = None,
    voice: Voice | None = None,
    sample_rate: int = SAMPLE_RATE,
    pool: VoicePool = DEFAULT_POOL,
) -> SynthesisResult:
    """Speak ``text`` in ``lang`` into a mono 16-bit wav at ``sample_rate`` (written atomically).

    The voice is ``voice`` or drawn from ``pool`` with ``rng`` (:func:`pick_voice`).
    """
    import soundfile as sf

    from polyvse.speech.audio import resample

    start = time.perf_counter()
    out_path = Path(out_path)
    check_text(text, lang, str(out_path))
    if voice is None:
        voice = pick_voice(lang, rng if rng is not None else np.random.default_rng(), pool)
    exe = espeak_binary()
    with tempfile.TemporaryDirectory(prefix="espeak-") as tmp:
        raw = Path(tmp) / "raw.wav"
        proc = subprocess.run(
            [
                exe,
                "--stdin",
                "-b",
                "1",
                "-v",
                voice.name,
                "-s",
                str(voice.rate),
                "-p",
                str(voice.pitch),
                "-w",
                str(raw),
            ],
            input=text.encode("utf-8"),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0 or not raw.exists() or raw.stat().st_size <= 44:
            raise RuntimeError(
                f"espeak-ng failed for {out_path} (voice {voice.name}): "
                f"{proc.stderr.decode('utf-8', 'replace').strip() or 'no audio written'}"
            )
        data, sr = sf.read(str(raw), dtype="float32", always_2d=True)
    signal = resample(trim_trailing_silence(data.mean(axis=1), int(sr)), int(sr), sample_rate)
    # libsndfile does not clip float → PCM_16; resampling may overshoot ±1 slightly
    signal = np.clip(signal, -1.0, 1.0 - 1.0 / 32768)
    with atomic_path(out_path) as tmp_path:
        sf.write(str(tmp_path), signal, sample_rate, subtype="PCM_16", format="WAV")
    return SynthesisResult(
        str(out_path), lang, voice.name, voice.rate, voice.pitch, len(signal) / sample_rate, time.perf_counter() - start
    )


def item_rng(seed: int, key: str) -> np.random.Generator:
    """The generator of one batch item: from the batch seed and a CRC of its key."""
    return np.random.default_rng([int(seed), zlib.crc32(key.encode("utf-8"))])


def _synthesize_request(args: tuple[SpeechRequest, int, VoicePool]) -> tuple[str, object, object]:
    """Worker: ``("ok", result, None)`` or ``("error", where, reason)`` (InputError does not pickle)."""
    request, seed, pool = args
    key = request.key if request.key is not None else Path(request.path).name
    try:
        return "ok", synthesize(request.text, request.lang, request.path, item_rng(seed, key), pool=pool), None
    except InputError as exc:
        return "error", exc.where, exc.reason


@dataclass(frozen=True)
class BatchSynthesis:
    """Per-utterance results (a row per request, in order) and the batch wall time."""

    table: pd.DataFrame
    wall_s: float
    threads: int

    def summary(self) -> dict[str, float | int]:
        n = len(self.table)
        return {
            "n_utterances": n,
            "threads": self.threads,
            "wall_s": round(self.wall_s, 3),
            "utterances_per_s": round(n / self.wall_s, 3) if self.wall_s > 0 else float("inf"),
            "mean_synth_s_per_utterance": round(float(self.table["synth_s"].mean()), 4) if n else 0.0,
            "audio_s": round(float(self.table["duration_s"].sum()), 3) if n else 0.0,
        }


def synthesize_batch(
    requests: Sequence[SpeechRequest] | Iterable[SpeechRequest],
    seed: int = 0,
    threads: int = 1,
    progress: bool = True,
    desc: str = "TTS",
    pool: VoicePool = DEFAULT_POOL,
) -> BatchSynthesis:
    """Speak every request over ``threads`` processes, voices drawn from ``pool``; a bad caption
    raises InputError naming its file, a voice or variant espeak-ng lacks a RuntimeError."""
    from tqdm import tqdm

    requests = list(requests)
    espeak_binary()  # fail before starting workers
    for lang in sorted({r.lang for r in requests}):
        voices_for(lang, pool)
    threads = max(1, int(threads))
    start = time.perf_counter()
    jobs = [(r, seed, pool) for r in requests]
    rows: list[dict[str, object]] = []
    pool = None
    try:
        if threads == 1 or len(jobs) < 2:
            results: Iterable[tuple[str, object, object]] = map(_synthesize_request, jobs)
        else:
            ctx = multiprocessing.get_context("forkserver")  # no inherited threads in the children
            pool = ctx.Pool(threads)
            results = pool.imap(_synthesize_request, jobs, chunksize=max(1, min(16, len(jobs) // (threads * 8))))
        for status, a, b in tqdm(results, total=len(jobs), desc=desc, unit="utt", disable=not progress):
            if status == "error":
                raise InputError(str(a), str(b))
            rows.append(asdict(a))  # type: ignore[call-overload]
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    columns = ["path", "lang", "voice", "rate", "pitch", "duration_s", "synth_s"]
    return BatchSynthesis(pd.DataFrame(rows, columns=columns), time.perf_counter() - start, threads)
