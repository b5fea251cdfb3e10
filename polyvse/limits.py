"""The limits on what one query may cost, checked before the work: a small file must not cost gigabytes.

A wav's header may declare any rate (everything is resampled to 16 kHz, and resampling from 1 Hz costs
gigabytes), any number of channels and any length; a PNG of a few kilobytes may declare 12000 × 12000
pixels (a gigabyte decoded); a request may stream any body. Each limit has a name, which the command line's
``--limit NAME=VALUE`` sets and which the one-line error of an input over it names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from polyvse.errors import InputError


class LimitError(InputError):
    """An input over one of the :class:`Limits` (the page answers it with 413)."""


@dataclass(frozen=True)
class Limits:
    """What one query may bring. image_pixels: width × height of an image, checked from its header before it
    is decoded (24 MP cameras pass; PIL's own guard is 89 MP); audio_seconds: a spoken query's length;
    audio_min_rate / audio_max_rate: a wav's sample rate in Hz (below 8 kHz there is no speech to hear);
    audio_channels: a wav's channels; upload_mb: the body of one request to ``polyvse serve``, counted as
    it streams in, whatever its transfer encoding; uploads_at_once: uploads ``polyvse serve`` decodes and
    embeds at the same time (each holds its decoded image or signal)."""

    image_pixels: int = 40_000_000
    audio_seconds: float = 60.0
    audio_min_rate: int = 8000
    audio_max_rate: int = 192_000
    audio_channels: int = 8
    upload_mb: float = 10.0
    uploads_at_once: int = 2

    @property
    def upload_bytes(self) -> int:
        return int(self.upload_mb * 2**20)

    def exceeded(self, where: str | Path, what: str, name: str, side: str = "over") -> LimitError:
        """The error of ``where`` ``side`` (over, below) limit ``name``: ``what`` says by how much."""
        return LimitError(where, f"{what}, {side} the limit {name}={shown(getattr(self, name))} (--limit {name}=N)")

    def check_image(self, where: str | Path, width: int, height: int) -> None:
        if width * height > self.image_pixels:
            raise self.exceeded(where, f"{width} × {height} = {width * height} pixels", "image_pixels")

    def check_wav(self, where: str | Path, rate: int, channels: int, frames: int) -> None:
        if rate < self.audio_min_rate:
            raise self.exceeded(where, f"a sample rate of {rate} Hz", "audio_min_rate", "below")
        if rate > self.audio_max_rate:
            raise self.exceeded(where, f"a sample rate of {rate} Hz", "audio_max_rate")
        if channels > self.audio_channels:
            raise self.exceeded(where, f"{channels} channels", "audio_channels")
        if frames > self.audio_seconds * rate:
            raise self.exceeded(where, f"{frames / rate:.1f} s of audio", "audio_seconds")


def shown(value: float) -> str:
    """A limit's value as it is typed: 40000000, 60, 0.5."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_limits(settings: list[str] | None, base: Limits = Limits()) -> Limits:
    """``base`` with each ``NAME=VALUE`` of ``settings`` (``--limit``) applied; a bad one raises InputError."""
    kinds = {f.name: f.type for f in fields(Limits)}
    changed: dict[str, float | int] = {}
    for setting in settings or []:
        name, _, raw = setting.partition("=")
        if name not in kinds:
            raise InputError("--limit", f"unknown limit {name!r}; the limits are {', '.join(kinds)}")
        try:
            value = float(raw) if kinds[name] in (float, "float") else int(raw)
        except ValueError:
            raise InputError("--limit", f"{name}: expected a number, got {raw!r}") from None
        if not value > 0:
            raise InputError("--limit", f"{name}: expected a positive number, got {raw!r}")
        changed[name] = value
    return replace(base, **changed)
