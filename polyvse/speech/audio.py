"""Reading and validating wav files.

A missing, empty, truncated or non-wav file raises ``InputError(path, reason)``
before any feature is computed, so that a bad file of a user's real-data list
fails with its path rather than deep inside feature extraction.

Truncation needs its own check: libsndfile silently reads what is there when a
file is shorter than its header says, so we walk the RIFF chunks and compare the
``data`` chunk's declared size with the bytes actually present.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyvse.errors import InputError

SAMPLE_RATE = 16000
"""The rate of the whole speech branch (thesis §2.4.2.1)."""

# writers that stream to a pipe cannot know the size and write one of these
_UNKNOWN_SIZES = {0, 0xFFFFFFFF, 0x7FFFFFFF, 0x7FFFF000}


@dataclass(frozen=True)
class WavInfo:
    path: str
    sample_rate: int
    channels: int
    frames: int

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate


def _check_riff(path: Path, size: int) -> None:
    """Header and chunk walk; raises InputError for a non-wav or truncated file."""
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RF64") or head[8:12] != b"WAVE":
            raise InputError(path, "not a WAV file (no RIFF/WAVE header)")
        if head[:4] == b"RF64":
            return  # 64-bit sizes live in a ds64 chunk; libsndfile checks these itself
        pos, seen_fmt = 12, False
        while pos + 8 <= size:
            f.seek(pos)
            chunk_id, chunk_size = struct.unpack("<4sI", f.read(8))
            if chunk_id == b"fmt ":
                seen_fmt = True
            elif chunk_id == b"data":
                if not seen_fmt:
                    raise InputError(path, "not a valid WAV file (data chunk before fmt chunk)")
                available = size - pos - 8
                if chunk_size not in _UNKNOWN_SIZES and chunk_size > available:
                    raise InputError(
                        path,
                        f"truncated WAV file: header declares {chunk_size} bytes of audio, the file holds {available}",
                    )
                return
            pos += 8 + chunk_size + (chunk_size & 1)  # chunks are word-aligned
        raise InputError(path, "truncated or invalid WAV file: no data chunk")


def check_wav(path: str | Path) -> WavInfo:
    """Validate a wav file and return its sample rate, channels and frame count."""
    import soundfile as sf

    path = Path(path)
    if not path.exists():
        raise InputError(path, "audio file does not exist")
    if not path.is_file():
        raise InputError(path, "audio path is not a file")
    size = os.path.getsize(path)
    if size == 0:
        raise InputError(path, "audio file is empty")
    _check_riff(path, size)
    try:
        info = sf.info(str(path))
    except Exception as exc:  # libsndfile's error types differ across soundfile versions
        raise InputError(path, f"unreadable WAV file: {exc}") from exc
    if info.frames <= 0:
        raise InputError(path, "WAV file holds no audio samples")
    return WavInfo(str(path), int(info.samplerate), int(info.channels), int(info.frames))


def resample(signal: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Band-limited resampling of a 1-D float signal with soxr at "HQ" quality.

    This is what ``librosa.resample(res_type="soxr_hq")`` runs; soxr comes with
    librosa, and calling it directly skips librosa's ~1 s import in every worker.
    """
    if orig_sr == target_sr:
        return signal
    import soxr

    return soxr.resample(np.asarray(signal, dtype=np.float32), orig_sr, target_sr, quality="HQ")


def read_wav(path: str | Path, sample_rate: int = SAMPLE_RATE, max_frames: int | None = None) -> np.ndarray:
    """Validated mono float32 signal ``(n,)`` in [-1, 1] at ``sample_rate`` (channels averaged).

    Read a block at a time, so that memory holds the mono signal, not every channel of it; ``max_frames``
    stops the reading there whatever the header said."""
    import soundfile as sf

    check_wav(path)
    blocks = []
    try:
        with sf.SoundFile(str(path)) as f:
            sr, left = int(f.samplerate), max_frames
            while left is None or left > 0:
                block = f.read(65536 if left is None else min(65536, left), dtype="float32", always_2d=True)
                if not len(block):
                    break
                blocks.append(block.mean(axis=1) if block.shape[1] > 1 else block[:, 0])
                left = None if left is None else left - len(block)
    except Exception as exc:
        raise InputError(path, f"unreadable WAV file: {exc}") from exc
    if not blocks:
        raise InputError(path, "WAV file holds no audio samples")
    signal = np.concatenate(blocks)
    if not np.isfinite(signal).all():
        raise InputError(path, "WAV file holds non-finite samples")
    return np.ascontiguousarray(resample(signal, sr, sample_rate), dtype=np.float32)
