"""Wav validation, log-Mel front end (thesis §2.4.2.1), the feature store, truncation and padding."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import soundfile as sf
import torch

from polyvse.errors import InputError
from polyvse.speech.audio import check_wav, read_wav
from polyvse.speech.batching import pad_batch, store_batch, truncate_lengths, truncation_length
from polyvse.speech.logmel import logmel, num_frames, preemphasis
from polyvse.speech.store import StoreWriter, extract_store, open_store, write_store

SR = 16000


def tone(freq: float, seconds: float, sr: int = SR) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def write_wav(path, signal, sr=SR, subtype="PCM_16"):
    sf.write(str(path), signal, sr, subtype=subtype)
    return path


# ----------------------------------------------------------------------------- wav validation


def test_missing_empty_and_non_wav_files_name_the_path(tmp_path):
    missing = tmp_path / "missing.wav"
    with pytest.raises(InputError, match="does not exist") as err:
        read_wav(missing)
    assert err.value.where == str(missing)
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty") as err:
        check_wav(empty)
    assert str(empty) in str(err.value)
    text = tmp_path / "caption.wav"
    text.write_text("a red circle above two blue squares, not audio at all")
    with pytest.raises(InputError, match="not a WAV file"):
        read_wav(text)


def test_truncated_wav_is_refused(tmp_path):
    path = write_wav(tmp_path / "cut.wav", tone(440, 1.0))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="truncated") as err:
        read_wav(path)
    assert err.value.where == str(path)
    header_only = tmp_path / "header.wav"
    header_only.write_bytes(data[:36])  # RIFF + fmt chunk, no data chunk
    with pytest.raises(InputError, match="no data chunk"):
        check_wav(header_only)


def test_wav_without_samples_is_refused(tmp_path):
    path = tmp_path / "silent.wav"
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, SR, 2 * SR, 2, 16)
    path.write_bytes(b"RIFF" + struct.pack("<I", 4 + len(fmt) + 8) + b"WAVE" + fmt + b"data" + struct.pack("<I", 0))
    with pytest.raises(InputError, match="no audio samples"):
        read_wav(path)


def test_read_wav_resamples_and_mixes_to_mono(tmp_path):
    stereo = np.stack([tone(300, 1.0, 22050), tone(300, 1.0, 22050)], axis=1)
    path = write_wav(tmp_path / "stereo.wav", stereo, sr=22050)
    info = check_wav(path)
    assert (info.sample_rate, info.channels, info.frames) == (22050, 2, 22050)
    signal = read_wav(path)
    assert signal.dtype == np.float32 and signal.ndim == 1
    assert abs(len(signal) - SR) <= 1
    assert 0.45 < np.abs(signal).max() < 0.55


# ----------------------------------------------------------------------------- log-Mel


@pytest.mark.parametrize("n", [16000, 16159, 16160, 400, 1])
def test_logmel_shape_and_frame_count(n):
    signal = np.random.default_rng(0).standard_normal(n).astype(np.float32) * 0.1
    feats = logmel(signal)
    # centred 10 ms frames: 1 + ⌊n / 160⌋
    assert feats.shape == (1 + n // 160, 40) == (num_frames(n), 40)
    assert feats.dtype == np.float32


def test_logmel_values_and_mel_axis():
    feats = logmel(tone(1000, 1.0))
    assert feats.shape == (101, 40)
    # dB relative to the utterance maximum with an 80 dB floor
    assert feats.max() == pytest.approx(0.0) and feats.min() >= -80.0
    # a 1 kHz tone peaks in the mel band whose centre is nearest 1 kHz
    import librosa

    centres = librosa.mel_frequencies(n_mels=42, fmin=20.0, fmax=8000.0)[1:-1]
    assert feats[5:-5].mean(axis=0).argmax() == np.abs(centres - 1000).argmin()
    # another sample rate is resampled to 16 kHz first: same frame count as 1 s at 16 kHz
    assert logmel(tone(1000, 1.0, 8000), sr=8000).shape == (101, 40)


def test_preemphasis():
    assert preemphasis(np.array([1.0, 1.0, 2.0], dtype=np.float32)).tolist() == pytest.approx([1.0, 0.03, 1.03])


# ----------------------------------------------------------------------------- store


def _feats(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((int(t), 40)).astype(np.float32) for t in rng.integers(1, 120, size=n)]


def test_store_round_trip_and_memory_map(tmp_path):
    feats = _feats(25)
    keys = [f"img{i:03d}" for i in range(25)]
    path = tmp_path / "logmel" / "en.npz"
    write_store(path, keys, feats, meta={"lang": "en"})
    store = open_store(path)
    assert store.memory_mapped and isinstance(store.frames, np.memmap)
    assert store.frames.offset % 64 == 0  # array data aligned inside the archive
    assert len(store) == 25 and store.lengths.tolist() == [len(f) for f in feats]
    assert all(np.array_equal(store[i], f) for i, f in enumerate(feats))
    assert np.array_equal(store[-1], feats[-1])
    assert store.row("img007") == 7 and list(store.keys) == keys
    assert store.meta["lang"] == "en" and store.meta["n_frames"] == sum(len(f) for f in feats)
    # still an ordinary npz
    with np.load(path) as z:
        assert np.array_equal(z["frames"], np.concatenate(feats))
        assert z["offsets"][-1] == sum(len(f) for f in feats)
    in_memory = open_store(path, mmap=False)
    assert not in_memory.memory_mapped and np.array_equal(in_memory[3], feats[3])
    assert not any(p.name.startswith(".") for p in path.parent.iterdir())  # no temporary left behind


def test_store_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        open_store(tmp_path / "none.npz")
    with pytest.raises(ValueError, match="duplicate"):
        write_store(tmp_path / "dup.npz", ["a", "a"], _feats(2))
    assert not (tmp_path / "dup.npz").exists()
    with pytest.raises(ValueError):
        with StoreWriter(tmp_path / "bad.npz") as w:
            w.add("a", np.zeros((3, 13), dtype=np.float32))
    assert list(tmp_path.iterdir()) == []
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(InputError, match="missing members"):
        open_store(tmp_path / "other.npz")


def test_extract_store_from_wavs(tmp_path):
    wavs = [write_wav(tmp_path / f"u{i}.wav", tone(200 + 100 * i, 0.3 + 0.1 * i)) for i in range(4)]
    stats = extract_store(wavs, [f"u{i}" for i in range(4)], tmp_path / "en.npz", progress=False)
    store = open_store(tmp_path / "en.npz")
    assert store.lengths.tolist() == [num_frames(int((0.3 + 0.1 * i) * SR)) for i in range(4)]
    assert np.allclose(store[2], logmel(read_wav(wavs[2])))
    assert stats.n_utterances == 4 and stats.utterances_per_s > 0
    assert stats.n_frames == int(store.lengths.sum())
    assert stats.audio_seconds == pytest.approx(sum(0.3 + 0.1 * i for i in range(4)), abs=1e-3)
    # two worker processes give the same store
    extract_store(wavs, [f"u{i}" for i in range(4)], tmp_path / "en2.npz", threads=2, progress=False)
    assert np.array_equal(np.asarray(open_store(tmp_path / "en2.npz").frames), np.asarray(store.frames))


def test_extract_store_names_a_bad_wav(tmp_path):
    good = write_wav(tmp_path / "good.wav", tone(300, 0.2))
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"")
    with pytest.raises(InputError) as err:
        extract_store([good, bad], ["g", "b"], tmp_path / "out.npz", progress=False)
    assert err.value.where == str(bad)
    assert not (tmp_path / "out.npz").exists()


# ----------------------------------------------------------------------------- truncation and padding


def test_truncation_rule():
    lengths = np.arange(1, 101)  # 100 utterances: the 5 longest (96..100) are cut to 95
    assert truncation_length(lengths) == 95
    cut = truncate_lengths(lengths)
    assert cut.max() == 95 and int((cut != lengths).sum()) == 5
    shuffled = np.random.default_rng(0).permutation(lengths)
    assert truncation_length(shuffled) == 95
    # fewer than 20 utterances: ⌊5 % · N⌋ = 0, nothing is cut
    assert truncation_length([5, 50, 7]) == 50
    # 40 utterances, 2 cut: the cap is the third longest
    assert truncation_length([10] * 37 + [500, 400, 300]) == 300


def test_pad_batch_pads_to_the_longest():
    a, b = np.ones((3, 40), np.float32), 2 * np.ones((5, 40), np.float32)
    x, lengths = pad_batch([a, b])
    assert x.shape == (2, 5, 40) and lengths.tolist() == [3, 5]
    assert torch.all(x[0, 3:] == 0) and torch.all(x[0, :3] == 1) and torch.all(x[1] == 2)
    x, lengths = pad_batch([a, b], max_frames=4)
    assert x.shape == (2, 4, 40) and lengths.tolist() == [3, 4]


def test_store_batch(tmp_path):
    feats = _feats(6, seed=3)
    write_store(tmp_path / "s.npz", [str(i) for i in range(6)], feats)
    store = open_store(tmp_path / "s.npz")
    x, lengths = store_batch(store, [4, 1], max_frames=30)
    assert lengths.tolist() == [min(30, len(feats[4])), min(30, len(feats[1]))]
    assert torch.equal(x[0, : lengths[0]], torch.from_numpy(feats[4][:30]))
