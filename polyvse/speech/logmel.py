"""Log-Mel filterbank front end (thesis §2.4.2.1, as in DAVEnet / ResDAVEnet).

16 kHz audio → pre-emphasis (y[n] - 0.97·y[n-1]) → STFT with a 25 ms Hamming
window (400 samples, zero-padded to an FFT of 512) every 10 ms (160 samples),
frames centred on multiples of the hop → power spectrum → 40 mel bands
(20 Hz to 8 kHz) → log power in dB relative to the utterance's maximum (floor
-80 dB, so values lie in [-80, 0]).

Frame count: with centred frames, a signal of n samples gives
``T = 1 + ⌊n / 160⌋`` frames (:func:`num_frames`).
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from polyvse.speech.audio import SAMPLE_RATE, resample

N_MELS = 40
WIN_LENGTH = 400  # 25 ms at 16 kHz
HOP_LENGTH = 160  # 10 ms at 16 kHz
N_FFT = 512  # next power of two above the window
PREEMPHASIS = 0.97
FMIN = 20.0  # DAVEnet's lower mel edge
TOP_DB = 80.0


def num_frames(n_samples: int, hop_length: int = HOP_LENGTH) -> int:
    """Frames of :func:`logmel` for ``n_samples`` samples at 16 kHz: ``1 + ⌊n / hop⌋``."""
    if n_samples < 1:
        raise ValueError(f"need at least one sample, got {n_samples}")
    return 1 + n_samples // hop_length


@lru_cache(maxsize=4)
def _mel_basis(sr: int, n_fft: int, n_mels: int, fmin: float) -> np.ndarray:
    import librosa

    return librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin).astype(np.float32)


def preemphasis(signal: np.ndarray, coef: float = PREEMPHASIS) -> np.ndarray:
    """``y[0], y[n] - coef·y[n-1]`` (first sample kept)."""
    out = signal.astype(np.float32, copy=True)
    out[1:] -= coef * signal[:-1]
    return out


def logmel(
    signal: np.ndarray,
    sr: int = SAMPLE_RATE,
    *,
    n_mels: int = N_MELS,
    n_fft: int = N_FFT,
    win_length: int = WIN_LENGTH,
    hop_length: int = HOP_LENGTH,
    preemph: float = PREEMPHASIS,
    fmin: float = FMIN,
    top_db: float = TOP_DB,
) -> np.ndarray:
    """Log-Mel features ``(T, n_mels)`` float32 of a mono signal ``(n,)``; ``T = 1 + ⌊n' / hop⌋``
    with ``n'`` the length at 16 kHz (other rates are resampled to 16 kHz first)."""
    import librosa

    signal = np.asarray(signal, dtype=np.float32)
    if signal.ndim != 1:
        raise ValueError(f"expected a mono signal (n,), got shape {signal.shape}")
    if sr != SAMPLE_RATE:
        signal = resample(signal, sr, SAMPLE_RATE)
    if signal.size == 0:
        raise ValueError("cannot compute log-Mel features of an empty signal")
    y = preemphasis(signal, preemph)
    with warnings.catch_warnings():
        # centred framing pads n_fft/2 zeros on each side, so signals shorter
        # than n_fft are fine; librosa warns about them regardless
        warnings.filterwarnings("ignore", message="n_fft=.* is too large for input signal")
        stft = librosa.stft(
            y,
            n_fft=n_fft,
            hop_length=hop_length,
            win_length=win_length,
            window="hamming",
            center=True,
            pad_mode="constant",
        )
    power = np.abs(stft) ** 2
    mel = _mel_basis(SAMPLE_RATE, n_fft, n_mels, fmin) @ power  # (n_mels, T)
    log_mel = librosa.power_to_db(mel, ref=np.max, top_db=top_db)
    return np.ascontiguousarray(log_mel.T, dtype=np.float32)
