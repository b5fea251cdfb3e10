"""Visually grounded multilingual speech (the grounded-speech thesis, 2021).

Modules, in DAG order:

* ``utterances`` — the canonical utterances table: synthetic (TTS) or a user's list (Places audio);
* ``tts``        — synthetic spoken captions with espeak-ng (16 kHz mono wav);
* ``audio``      — wav validation and reading (bad files raise InputError with the path);
* ``logmel``     — the log-Mel front end of §2.4.2.1;
* ``store``      — per-language memory-mappable feature stores and parallel extraction;
* ``batching``   — the truncation rule and batch padding of §2.4.2.1;
* ``encoders``   — audio CNN, poolings, shared encoders and image encoder (§2.4, §5);
* ``objectives`` — the six losses of §3.1.4.1 by name (implemented in ``polyvse.losses``);
* ``multiview``  — full-graph and anchor frameworks (§2.3, §4);
* ``schedule``   — Adam and the warm-up / step-decay schedule of §3.1.2;
* ``data``       — datapoints of a split: an image and one utterance per language, batched;
* ``model``      — image encoder + audio encoders embedding every view into one space;
* ``train``      — one variant's training (§3.1.2) on the shared resumable epoch loop;
* ``evaluate``   — retrieval between every pair of views, both directions averaged (§3.1.3);
* ``report``     — Tables 3.1–3.4, 4.1, 5.1 in the thesis' layout;
* ``run``        — loading a dataset's workflow outputs into view sets.
"""
