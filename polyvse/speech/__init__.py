"""Visually grounded multilingual speech (the grounded-speech thesis, 2021): the front end.

Modules, in DAG order:

* ``utterances`` — the canonical utterances table: synthetic (TTS) or a user's list (Places audio,
  read as a table by :mod:`polyvse.data.places_speech`);
* ``tts``        — synthetic spoken captions with espeak-ng (16 kHz mono wav);
* ``audio``      — wav validation and reading (bad files raise InputError with the path);
* ``logmel``     — the log-Mel front end of §2.4.2.1;
* ``store``      — per-language memory-mappable feature stores and parallel extraction;
* ``batching``   — the truncation rule and batch padding of §2.4.2.1;
* ``data``       — datapoints of a split: an image and one utterance per language, batched;
* ``run``        — loading a dataset's workflow outputs into view sets;
* ``settings``   — a speech variant's settings (``speech.model`` and ``speech.training`` with its overrides).

The rest of the family lives in the layers of what it is (docs/architecture.md, "The library, by layer"):
audio encoders and the model in :mod:`polyvse.models.speech_encoders` and
:mod:`polyvse.models.grounded_speech` (§2.4, §5); the six losses and the multiview frameworks in
:mod:`polyvse.losses.speech_objectives` and :mod:`polyvse.losses.multiview` (§3.1.4.1, §2.3, §4); the
training and its schedule in :mod:`polyvse.train.speech` and :mod:`polyvse.train.speech_schedule` (§3.1.2);
retrieval between views in :mod:`polyvse.evaluate.speech` (§3.1.3); Tables 3.1–3.4, 4.1, 5.1 in
:mod:`polyvse.report.speech`.
"""
