"""Visually grounded multilingual speech (the grounded-speech thesis, 2021).

Modules, in DAG order:

* ``tts``        — synthetic spoken captions with espeak-ng (16 kHz mono wav);
* ``audio``      — wav validation and reading (bad files raise InputError with the path);
* ``logmel``     — the log-Mel front end of §2.4.2.1;
* ``store``      — per-language memory-mappable feature stores and parallel extraction;
* ``batching``   — the truncation rule and batch padding of §2.4.2.1;
* ``encoders``   — audio CNN, poolings, shared encoders and image encoder (§2.4, §5);
* ``objectives`` — the six losses of §3.1.4.1 by name (implemented in ``polyvse.losses``);
* ``multiview``  — full-graph and anchor frameworks (§2.3, §4);
* ``schedule``   — Adam and the warm-up / step-decay schedule of §3.1.2.
"""
