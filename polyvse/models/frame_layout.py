"""Where each utterance's frames lie in the tensor an audio trunk convolves.

A batch of utterances of different lengths is laid out either *padded*, one utterance a row of
``(B, C, T)``, each from frame 0 and zeros after its end, or *packed*, all of them one after another
in a single row ``(1, C, T)`` with zero frames between them. A convolution of kernel ``2p + 1`` gives
an utterance's frames the same values in both layouts as long as ``p`` zero frames separate it from
the next one at every resolution the trunk convolves, and its start stays on the grid of the
strides still to come (so that a stride-2 convolution samples it at the same phase); the trunk zeroes
the frames outside the utterances after every layer, so the gaps stay zero.

Why packed: padded to the longest of a batch of 16 random utterances, the default data's log-Mel
batches hold 1.65–1.73 times the frames spoken, and the convolutions cost their frames; packed, the
frames computed are the spoken ones plus the gaps, 1.21–1.24 times (docs/architecture.md).

:class:`FrameLayout` holds ``rows``, ``offsets`` and ``lengths`` (``(B,)`` each) of one resolution;
:meth:`FrameLayout.conv` gives the next. Pure tensor bookkeeping: no parameters, no files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor


def conv_output_lengths(lengths: Tensor, kernel: int = 9, stride: int = 1, padding: int = 4) -> Tensor:
    """Frames out of a 1-D convolution: ``⌊(L + 2p - k) / s⌋ + 1``."""
    return torch.div(lengths + 2 * padding - kernel, stride, rounding_mode="floor") + 1


def bucketed_width(frames: int, align: int, octave_bits: int = 3) -> int:
    """``frames`` rounded up to a multiple of ``align`` and to one of ``2 ** octave_bits`` widths an
    octave (at most an eighth more frames).

    Why: oneDNN builds a convolution kernel for every input shape it meets and caches it, which
    costs more than the convolution; a packed batch's width is the sum of its lengths, new at
    almost every step, where the few widths of a bucket recur."""
    quantum = max(align, 1 << max(0, frames.bit_length() - 1 - octave_bits))
    return -(-frames // quantum) * quantum


@dataclass(frozen=True)
class Level:
    """One resolution a trunk convolves: the frames appended to each utterance on entering it
    (a sequence tag), then the convolutions that read it, as ``(kernel, stride, padding)``; the
    first of them maps to the next level."""

    convs: tuple[tuple[int, int, int], ...]
    tag_frames: int = 0


@dataclass(frozen=True)
class FrameLayout:
    """Utterance ``b``'s frames are ``x[rows[b], :, offsets[b] : offsets[b] + lengths[b]]`` of
    ``x (n_rows, C, width)``; every other frame is zero. ``padded_width`` is the width the padded
    layout of the same batch has at this resolution (what :meth:`unpack` returns)."""

    rows: Tensor
    offsets: Tensor
    lengths: Tensor
    n_rows: int
    width: int
    padded_width: int
    packed: bool

    @classmethod
    def padded(cls, lengths: Tensor, width: int) -> FrameLayout:
        """One utterance a row, each from frame 0: ``(B, C, width)``."""
        zeros = torch.zeros_like(lengths)
        rows = torch.arange(len(lengths), device=lengths.device)
        return cls(rows, zeros, lengths, len(lengths), width, width, packed=False)

    @classmethod
    def packed(cls, lengths: Tensor, width: int, levels: Sequence[Level]) -> FrameLayout:
        """All utterances in one row, in batch order, each starting on the grid of every stride of
        ``levels`` and separated from the next by the padding of every convolution that reads it.
        ``width`` is the padded layout's."""
        align = 1
        for level in levels:
            align *= level.convs[0][1]
        need = torch.zeros_like(lengths)  # frames (at the input's resolution) from one start to the next
        current, scale = lengths, 1
        for level in levels:
            current = current + level.tag_frames
            padding = max((p for _, _, p in level.convs), default=0)
            need = torch.maximum(need, scale * (current + padding))
            kernel, stride, padding0 = level.convs[0]
            current = conv_output_lengths(current, kernel, stride, padding0)
            scale *= stride
        need = torch.maximum(need, scale * current)
        steps = -torch.div(-need, align, rounding_mode="floor") * align  # rounded up to the grid
        ends = torch.cumsum(steps, 0)
        offsets = ends - steps
        rows = torch.zeros_like(lengths)
        return cls(rows, offsets, lengths, 1, bucketed_width(int(ends[-1]), align), width, packed=True)

    def owner(self) -> Tensor:
        """``(n_rows, width)`` long: ``b + 1`` on utterance ``b``'s frames, 0 between them."""
        delta = torch.zeros(self.n_rows, self.width + 1, dtype=torch.long, device=self.lengths.device)
        ids = torch.arange(1, len(self.lengths) + 1, device=self.lengths.device)
        delta.index_put_((self.rows, self.offsets), ids, accumulate=True)
        delta.index_put_((self.rows, self.offsets + self.lengths), -ids, accumulate=True)
        return delta.cumsum(1)[:, : self.width]

    def mask(self) -> Tensor:
        """``(n_rows, width)`` bool, True on the utterances' frames."""
        return self.owner() > 0

    def conv(self, kernel: int, stride: int, padding: int) -> FrameLayout:
        """The layout after a convolution of ``kernel``, ``stride`` and zero ``padding``."""
        if stride > 1 and bool((self.offsets % stride).any()):
            raise ValueError(f"utterance starts {self.offsets.tolist()} are off the grid of stride {stride}")

        def out(width: int) -> int:
            return (width + 2 * padding - kernel) // stride + 1

        lengths = conv_output_lengths(self.lengths, kernel, stride, padding)
        return FrameLayout(
            self.rows,
            self.offsets // stride,
            lengths,
            self.n_rows,
            out(self.width),
            out(self.padded_width),
            self.packed,
        )

    def grown(self, frames: int) -> FrameLayout:
        """Every utterance ``frames`` longer at its end (into the zeros after it); a padded layout
        widens to hold them, a packed one has them in its gaps."""
        width = self.width if self.packed else self.width + frames
        return FrameLayout(
            self.rows,
            self.offsets,
            self.lengths + frames,
            self.n_rows,
            width,
            self.padded_width + frames,
            self.packed,
        )

    def pack(self, x: Tensor) -> Tensor:
        """``(B, C, T)`` padded, utterance ``b`` at ``x[b, :, :lengths[b]]`` → this layout's
        ``(n_rows, C, width)``, frames-major (strides ``(width·C, 1, C)``)."""
        b, c, t = x.shape
        owner = self.owner()
        utterance = (owner - 1).clamp(min=0)
        position = torch.arange(self.width, device=x.device).unsqueeze(0) - self.offsets[utterance]
        source = (utterance * t + position.clamp(0, t - 1)).reshape(-1)
        frames = x.transpose(1, 2).reshape(b * t, c).index_select(0, source)
        frames = frames * (owner > 0).reshape(-1, 1).to(frames.dtype)
        return frames.view(self.n_rows, self.width, c).transpose(1, 2)

    def unpack(self, x: Tensor) -> Tensor:
        """This layout's ``(n_rows, C, width)`` → ``(B, C, padded_width)``, each utterance from frame
        0 and zeros after it."""
        r, c, w = x.shape
        t = torch.arange(self.padded_width, device=x.device).unsqueeze(0)
        valid = t < self.lengths.unsqueeze(1)  # (B, padded_width)
        source = ((self.rows * w + self.offsets).unsqueeze(1) + t).clamp(max=r * w - 1).reshape(-1)
        frames = x.transpose(1, 2).reshape(r * w, c).index_select(0, source)
        frames = frames * valid.reshape(-1, 1).to(frames.dtype)
        return frames.view(len(self.lengths), self.padded_width, c).transpose(1, 2)
