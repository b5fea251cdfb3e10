"""Synthetic speech with espeak-ng: 16 kHz mono 16-bit wav of plausible duration for en, hi, ja."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from polyvse.errors import InputError
from polyvse.speech.audio import check_wav
from polyvse.speech.tts import (
    SpeechRequest,
    Voice,
    VoicePool,
    espeak_available,
    item_rng,
    pick_voice,
    trim_trailing_silence,
    synthesize,
    synthesize_batch,
)

pytestmark = pytest.mark.skipif(
    not espeak_available(), reason="espeak-ng is not installed (apt-get install -y espeak-ng)"
)

CAPTIONS = {
    "en": "a small red circle is above two large blue squares",
    "hi": "दो बड़े नीले वर्गों के ऊपर एक छोटा लाल गोला है",
    "ja": "おおきな あおい しかく の うえ に ちいさな あかい まる が あります",
}


@pytest.mark.parametrize("lang", ["en", "hi", "ja"])
def test_synthesize_writes_16k_mono_pcm16(tmp_path, lang):
    out = tmp_path / f"{lang}.wav"
    result = synthesize(CAPTIONS[lang], lang, out, np.random.default_rng(0))
    info = sf.info(str(out))
    assert (info.samplerate, info.channels, info.subtype, info.format) == (16000, 1, "PCM_16", "WAV")
    assert check_wav(out).frames == info.frames
    # about a dozen words: between 1.5 and 8 seconds of speech, matching the result
    assert 1.5 < info.duration < 8.0
    assert result.duration_s == pytest.approx(info.duration, abs=1e-3)
    signal, _ = sf.read(str(out))
    assert np.abs(signal).max() > 0.05  # not silence
    # espeak-ng's closing silence (0.24-0.35 s of zeros) is cut to 50 ms, give or take the resampler's ringing
    tail = len(signal) - 1 - np.flatnonzero(np.abs(signal) > 1e-3)[-1]
    assert 0.02 * 16000 < tail < 0.1 * 16000
    assert result.voice.split("+")[0] in {
        "en-us",
        "en-gb",
        "en-gb-scotland",
        "en-gb-x-rp",
        "en-029",
        "en-us-nyc",
        "hi",
        "ja",
    }


def test_trim_trailing_silence_keeps_the_sound_and_a_short_pause():
    sound = np.r_[np.zeros(5), np.ones(10), 0.0, 1.0, np.zeros(1000)]
    trimmed = trim_trailing_silence(sound, 1000, keep_s=0.02)
    assert trimmed.tolist() == sound[: 17 + 20].tolist()  # leading zeros and inner pauses stay
    assert trim_trailing_silence(sound[:20], 1000, keep_s=0.02).tolist() == sound[:20].tolist()  # shorter tail
    assert trim_trailing_silence(np.zeros(7), 1000).tolist() == [0.0] * 7


def test_rate_changes_duration(tmp_path):
    slow = synthesize(CAPTIONS["en"], "en", tmp_path / "slow.wav", voice=Voice("en-us", 120, 50))
    fast = synthesize(CAPTIONS["en"], "en", tmp_path / "fast.wav", voice=Voice("en-us", 240, 50))
    assert slow.duration_s > 1.5 * fast.duration_s


def test_voices_vary_and_are_reproducible():
    voices = {pick_voice("en", item_rng(0, f"utt{i}")) for i in range(12)}
    assert len({v.name for v in voices}) > 3 and len({v.rate for v in voices}) > 3
    assert pick_voice("ja", item_rng(7, "x")) == pick_voice("ja", item_rng(7, "x"))
    v = pick_voice("hi", np.random.default_rng(1))
    assert 130 <= v.rate <= 190 and 30 <= v.pitch <= 70


def test_a_narrow_pool_draws_only_its_voices():
    pool = VoicePool.from_config(
        {"accents": {"en": ["en-gb"]}, "variants": ["f2"], "rate_wpm": [170, 175], "pitch": [40, 41]}
    )
    voices = [pick_voice("en", item_rng(3, f"utt{i}"), pool) for i in range(20)]
    assert {v.name for v in voices} == {"en-gb+f2"}
    assert {v.rate for v in voices} <= set(range(170, 176)) and len({v.rate for v in voices}) > 1
    assert {v.pitch for v in voices} <= {40, 41}
    # languages the pool does not name keep all their accents
    assert pick_voice("hi", item_rng(3, "x"), pool).name == "hi+f2"
    plain = pick_voice("ja", item_rng(3, "x"), VoicePool(variants=()))
    assert plain.name == "ja"  # no variant: the accent's own voice


def test_a_voice_espeak_lacks_fails_before_speaking(tmp_path):
    requests = [SpeechRequest(CAPTIONS["en"], "en", str(tmp_path / "a.wav"))]
    with pytest.raises(RuntimeError, match=r"no variant \['zz9'\].*speech.tts.variants"):
        synthesize_batch(requests, pool=VoicePool(variants=("m1", "zz9")), progress=False)
    with pytest.raises(RuntimeError, match=r"speech.tts.accents.en"):
        synthesize_batch(requests, pool=VoicePool(accents=(("en", ("en-xx",)),)), progress=False)
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="pitch"):
        VoicePool(pitch=(60, 20))


def test_japanese_must_be_kana(tmp_path):
    with pytest.raises(InputError, match="kana") as err:
        synthesize("赤い丸があります", "ja", tmp_path / "kanji.wav", np.random.default_rng(0))
    assert str(tmp_path / "kanji.wav") in str(err.value)
    with pytest.raises(InputError, match="empty"):
        synthesize("   ", "en", tmp_path / "empty.wav")
    assert not list(tmp_path.iterdir())


def test_batch_is_deterministic_and_timed(tmp_path):
    requests = [
        SpeechRequest(CAPTIONS[lang], lang, str(tmp_path / "a" / f"{lang}{i}.wav"))
        for i in range(2)
        for lang in ("en", "hi", "ja")
    ]
    first = synthesize_batch(requests, seed=3, progress=False)
    assert first.table["path"].tolist() == [r.path for r in requests]
    assert (first.table["synth_s"] > 0).all()
    summary = first.summary()
    assert summary["n_utterances"] == 6 and summary["utterances_per_s"] > 0
    # same seed and keys (file names) in another folder, other order: same voices, same audio
    again = [SpeechRequest(r.text, r.lang, r.path.replace("/a/", "/b/")) for r in reversed(requests)]
    second = synthesize_batch(again, seed=3, threads=2, progress=False)  # and over two processes
    assert second.table["voice"].tolist()[::-1] == first.table["voice"].tolist()
    assert (tmp_path / "a" / "ja1.wav").read_bytes() == (tmp_path / "b" / "ja1.wav").read_bytes()
    bad = requests[:1] + [SpeechRequest("漢字", "ja", str(tmp_path / "bad.wav"))]
    with pytest.raises(InputError) as err:
        synthesize_batch(bad, seed=3, progress=False)
    assert err.value.where == str(tmp_path / "bad.wav")
