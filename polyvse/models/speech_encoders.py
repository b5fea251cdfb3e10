"""Audio and image encoders of the grounded-speech thesis (§2.4, §5).

Audio (§2.4.2.2, the ResDAVEnet of Harwath et al. 2019): log-Mel input
``(B, T, 40)`` → a 1-D convolution of 128 filters spanning the 40 bins (kernel 1
in time) + batch norm + ReLU → 4 residual stages of 4 convolutions each (kernel
9; the first of each stage with stride 2; batch norm after each) → ``(B, T', D)``
with D the last width (paper widths 128, 128, 256, 512, 1024). As in the
ResDAVEnet code the thesis ran, a stage is two residual units of two
convolutions each (``convs_per_residual=4`` gives one residual per stage, as
§2.4.2.2's prose reads), and the shortcut is a 1×1 convolution + batch norm
wherever the unit changes width or stride.

Deviation, on purpose: §2.4.2.2 says "no padding", but a residual sum needs
equal lengths on both paths; like the ResDAVEnet code we pad each kernel-9
convolution by 4, so a stage maps L frames to ``⌊(L - 1) / 2⌋ + 1 = ⌈L / 2⌉``
and the trunk to ``⌈L / 16⌉``.

Padding never leaks into an utterance's frames: every layer zeroes the frames
outside the utterances and batch norm takes its statistics over valid frames
only (:class:`MaskedBatchNorm1d`), so an utterance gets exactly the frames it
would get alone (in eval mode; in train mode the other utterances of the batch
still shape the statistics, as with any batch norm). The trunk convolves a
batch packed, its utterances one after another with zero frames between them
(``polyvse.models.frame_layout``), and hands the poolings ``(B, T', D)`` padded.

Pooling (§2.4.3), ``(B, T', D), lengths -> (B, D)``:

* ``avg``: the mean over an utterance's valid output frames (the avg_pool_len
  rule, §2.4.3.1). Valid output lengths follow from the strides
  (``length_rule="strides"``, exact); ``"thesis"`` uses the printed formula
  ``⌊len / round(max_sl / max_sl_out)⌋`` instead;
* ``mhsa``: a learned CLS token prepended, sinusoidal positional encoding,
  dropout, 8-head self-attention with a key-padding mask; the output at the
  CLS position (or at the first frame with ``use_cls=False``) (§2.4.3.2);
* ``transformer``: the same around a full Transformer encoder block with a
  feed-forward width of 2048 (§2.4.3.3).

Shared encoders (§5.1): one audio encoder for all languages — ``basic``; or with
a learned 8-D language embedding appended to the input features (per frame)
and again before every residual stage, along the channel axis (``channel``
tag: 8 extra channels per frame) or the sequence axis (``sequence`` tag: 8
extra frames right after the utterance's last valid frame, frame k holding
component k of the embedding in every channel, as in the thesis code).

Image (§2.4.1): the thesis fine-tunes a ResNet-50 and projects its 7×7 map with
a 1×1 convolution; here the CNN features are precomputed, so the encoder is a
Linear layer on feature vectors ``(B, C)`` or a 1×1 convolution on feature maps
``(B, C, H, W)`` followed by the pooling (spatial average by default).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from polyvse.models.frame_layout import FrameLayout, Level, conv_output_lengths

PAPER_WIDTHS: tuple[int, ...] = (128, 128, 256, 512, 1024)
"""First convolution, then the four residual stages (§2.4.2.2)."""
POOLINGS: tuple[str, ...] = ("avg", "mhsa", "transformer")
LANG_TAGS: tuple[str, ...] = ("none", "sequence", "channel")
SHARINGS: tuple[str, ...] = ("none", "basic", "sequence", "channel")
LENGTH_RULES: tuple[str, ...] = ("strides", "thesis")


# ----------------------------------------------------------------------------- lengths


def length_mask(lengths: Tensor, max_len: int) -> Tensor:
    """``(B,)`` lengths → ``(B, max_len)`` bool, True on valid frames."""
    return torch.arange(max_len, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)


def frames_major(x: Tensor) -> Tensor:
    """``(B, C, T)`` laid out frame by frame in memory (strides ``(T·C, 1, C)``), the layout the
    trunk's convolutions run fastest in (:func:`frame_conv`); a view when it already is."""
    return x if x.stride(1) == 1 else x.transpose(1, 2).contiguous().transpose(1, 2)


def frame_conv(conv: nn.Conv1d, x: Tensor) -> Tensor:
    """``conv(x)`` on ``(B, C, T)`` as a 2-D convolution over ``(B, C, 1, T)`` in channels-last
    layout: ``(B, C_in, T) -> (B, C_out, T')``, frames-major in and out (:func:`frames_major`).

    Why: on a CPU, oneDNN's 1-D convolution takes ``(B, C, T)`` contiguous and reorders it to
    its blocked layout and back in every call, forward and backward; its channels-last 2-D
    convolution reads frames-major tensors as they are. A default-width audio encoder's forward +
    backward over 32 utterances: 71.2 ms with ``nn.Conv1d``, 56.6 ms so, with the norm's written-out
    backward (``bench/bench_speech_trunk.py``). Same arithmetic, up to the order of float sums."""
    if conv.padding_mode != "zeros" or conv.groups != 1 or conv.dilation != (1,):
        raise ValueError("frame_conv takes a plain zero-padded, ungrouped, undilated Conv1d")
    (stride,), (padding,) = conv.stride, conv.padding
    if conv.kernel_size == (1,) and padding == 0:
        # a 1×1 convolution is a linear map of every stride-th frame; as a channels-last conv2d with a
        # stride it takes torch's slow path, whose backward wrote past its buffer on a long row (torch 2.13)
        frames = frames_major(x)[..., ::stride].transpose(1, 2)  # (B, T', C_in)
        return F.linear(frames, conv.weight[:, :, 0], conv.bias).transpose(1, 2)
    out = F.conv2d(frames_major(x).unsqueeze(2), conv.weight.unsqueeze(2), conv.bias, (1, stride), (0, padding))
    return out.squeeze(2)


def thesis_avg_pool_len(lengths: Tensor, max_sl: int, max_sl_out: int) -> Tensor:
    """§2.4.3.1: ``⌊len / round(max_sl / max_sl_out)⌋``, kept within ``[1, max_sl_out]``."""
    ratio = max(1, round(max_sl / max_sl_out))
    return torch.div(lengths, ratio, rounding_mode="floor").clamp(min=1, max=max_sl_out)


# ----------------------------------------------------------------------------- building blocks


class MaskedBatchNorm1d(nn.BatchNorm1d):
    """Batch norm over ``(B, C, T)`` whose statistics count valid frames only.

    With ``mask`` ``(B, T)`` (True = valid) the training statistics (and the
    running estimates) come from the valid frames, and the output is zero on the
    padded ones. Without a mask it is ``nn.BatchNorm1d``.
    """

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:  # type: ignore[override]
        if mask is None:
            return super().forward(x)
        if not self.training:
            return super().forward(x) * mask.unsqueeze(1).to(x.dtype)
        # statistics in float32: under autocast x may be half precision, and a sum
        # over B·T frames overflows float16
        out_dtype = x.dtype
        if x.dtype not in (torch.float32, torch.float64):
            x = x.float()
        m = mask.unsqueeze(1).to(x.dtype)
        n = m.sum().clamp(min=1.0)
        out, mean, var = _MaskedNorm.apply(x, m, n, self.weight, self.bias, self.eps)
        if self.track_running_stats and self.running_mean is not None and self.running_var is not None:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                momentum = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
                unbiased = var * n / (n - 1.0).clamp(min=1.0)
                self.running_mean.mul_(1.0 - momentum).add_(momentum * mean)
                self.running_var.mul_(1.0 - momentum).add_(momentum * unbiased)
        return out.to(out_dtype)


class _MaskedNorm(torch.autograd.Function):
    """Training-mode batch norm of ``(B, C, T)`` over the valid frames, with its gradient written out.

    ``x (B, C, T), m (B, 1, T)`` (1 on valid frames, else 0), ``n`` = valid frames, ``weight,
    bias (C,) | None`` → ``y = ((x − μ) · rstd · γ + β) · m`` and the statistics ``μ, σ² (C,)``
    (no gradient). Forward: one pass for the sums of x and x², the affine map folded into one
    scale and shift per channel. Backward, with ``g = ∂L/∂y · m`` and ``x̂ = (x − μ) · rstd``:
    ``∂β = Σg``, ``∂γ = Σ g·x̂ = rstd · (Σ g·x − μ · Σg)``, and on valid frames
    ``∂x = γ·rstd · (g − ∂β/n − x̂ · ∂γ/n)``, zero on padded ones: three elementwise passes,
    where autograd through the forward's operations took about twice as many (a default-width
    audio encoder's step spent a quarter of its time in them)."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, x: Tensor, m: Tensor, n: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float
    ) -> tuple[Tensor, Tensor, Tensor]:
        xm = x * m
        mean = xm.sum(dim=(0, 2)) / n
        var = ((xm * x).sum(dim=(0, 2)) / n - mean * mean).clamp(min=0.0)
        rstd = torch.rsqrt(var + eps)
        scale = rstd if weight is None else rstd * weight
        shift = -mean * scale
        if bias is not None:
            shift = shift + bias
        out = torch.addcmul(shift[None, :, None], x, scale[None, :, None]) * m
        ctx.save_for_backward(x, m, n, mean, rstd, weight)
        ctx.mark_non_differentiable(mean, var)
        return out, mean, var

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_out: Tensor, _mean: Tensor, _var: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        x, m, n, mean, rstd, weight = ctx.saved_tensors
        g = grad_out * m
        sum_g = g.sum(dim=(0, 2))
        d_gamma = rstd * ((g * x).sum(dim=(0, 2)) - mean * sum_g)
        grad_x = None
        if ctx.needs_input_grad[0]:
            a = rstd if weight is None else rstd * weight
            c = -a * rstd * d_gamma / n  # the coefficient of x
            b = -a * sum_g / n - c * mean
            grad_x = torch.addcmul(torch.addcmul(b[None, :, None], x, c[None, :, None]) * m, g, a[None, :, None])
        grad_weight = d_gamma if weight is not None and ctx.needs_input_grad[3] else None
        grad_bias = sum_g if ctx.needs_input_grad[4] else None
        return grad_x, None, None, grad_weight, grad_bias, None


class ResidualUnit(nn.Module):
    """``n_convs`` kernel-``k`` convolutions (the first with ``stride``), batch norm after
    each, ReLU between; the shortcut (identity, or 1×1 convolution + batch norm when
    width or stride changes) is added before the last ReLU. ``(B, C_in, T) -> (B, C_out, T')``.

    The last batch norm's scale γ starts at zero ("zero-γ" residual initialisation: Goyal et al.
    2017 §5.1, He et al. 2019 "Bag of Tricks"; torchvision's ``zero_init_residual``), so a unit
    starts as its shortcut and the trunk as a shallow network whose residual branches grow with
    training. Why: the thesis scores view pairs by the dot product (§3.1.3) of post-ReLU averages,
    all in one cone, so the initial logits between two audio views are set by the embeddings'
    norms, not by what was said. With every γ = 1 a default-width encoder's embeddings have a norm
    of ~6.7 (mean pairwise cosine 0.93) and the logits between two languages a spread of ~6.5:
    InfoNCE starts at 2.7× its chance value (18.7 against 2 ln 32 = 6.9) and a 64-step training
    spends its steps shrinking the norms, not learning (``docs/speech_learning.md``). Zero-γ halves
    the norms, the spread falls to ~1.2 and the loss starts at chance; the forward function, its
    parameters and the state dict are those of ResDAVEnet's unit (§2.4.2.2), only the start differs.
    """

    def __init__(self, in_channels: int, out_channels: int, n_convs: int = 2, kernel: int = 9, stride: int = 1) -> None:
        super().__init__()
        if n_convs < 1:
            raise ValueError(f"n_convs must be >= 1, got {n_convs}")
        self.kernel, self.stride, self.padding = kernel, stride, kernel // 2
        self.convs = nn.ModuleList(
            nn.Conv1d(
                in_channels if i == 0 else out_channels,
                out_channels,
                kernel,
                stride=stride if i == 0 else 1,
                padding=self.padding,
                bias=False,
            )
            for i in range(n_convs)
        )
        self.norms = nn.ModuleList(MaskedBatchNorm1d(out_channels) for _ in range(n_convs))
        nn.init.zeros_(self.norms[-1].weight)  # zero-γ: the unit starts as its shortcut (see above)
        if stride != 1 or in_channels != out_channels:
            self.shortcut_conv: nn.Conv1d | None = nn.Conv1d(in_channels, out_channels, 1, stride=stride, bias=False)
            self.shortcut_norm: MaskedBatchNorm1d | None = MaskedBatchNorm1d(out_channels)
        else:
            self.shortcut_conv = self.shortcut_norm = None

    def output_lengths(self, lengths: Tensor) -> Tensor:
        return conv_output_lengths(lengths, self.kernel, self.stride, self.padding)

    def levels(self) -> list[Level]:
        """The resolutions this unit convolves, for :meth:`FrameLayout.packed`."""
        rest = [(self.kernel, 1, self.padding)] * (len(self.convs) - 1)
        # the unit's input, read by its first convolution and the shortcut; then its output's resolution,
        # read by the other convolutions (none for a one-convolution unit: a level that reads nothing)
        return [
            Level(((self.kernel, self.stride, self.padding), (1, self.stride, 0))),
            Level(tuple(rest) or ((1, 1, 0),)),
        ]

    def forward(self, x: Tensor, frames: FrameLayout) -> tuple[Tensor, FrameLayout]:
        """``x (R, C_in, W)`` in ``frames``' layout → ``(R, C_out, W')`` and the layout after."""
        out_frames = frames.conv(self.kernel, self.stride, self.padding)
        mask = out_frames.mask()
        h = x
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            h = norm(frame_conv(conv, h), mask)
            if i < len(self.convs) - 1:
                h = F.relu(h)
        if self.shortcut_conv is not None and self.shortcut_norm is not None:
            shortcut = self.shortcut_norm(frame_conv(self.shortcut_conv, x), mask)
        else:
            shortcut = x
        return F.relu(h + shortcut), out_frames


class LanguageTag(nn.Module):
    """A learned language embedding appended along the channel or the sequence axis.

    ``(B, C, T), lengths (B,), lang (B,) -> (B, C', T'), lengths'``:
    channel: ``C' = C + dim`` (the embedding on every valid frame);
    sequence: ``T' = T + dim`` and lengths grow by ``dim`` (frames ``len .. len+dim-1``
    hold the embedding's components, each repeated over the C channels).
    """

    def __init__(self, n_langs: int, dim: int = 8, axis: str = "channel") -> None:
        super().__init__()
        if axis not in ("channel", "sequence"):
            raise ValueError(f"axis must be 'channel' or 'sequence', got {axis!r}")
        self.axis, self.dim = axis, dim
        self.embedding = nn.Embedding(n_langs, dim)

    def forward(self, x: Tensor, frames: FrameLayout, lang: Tensor) -> tuple[Tensor, FrameLayout]:
        """``x (R, C, W)`` in ``frames``' layout, ``lang (B,)`` → the tagged ``x`` and its layout."""
        e = self.embedding(lang)  # (B, dim)
        if self.axis == "channel":
            owner = frames.owner()  # (R, W): utterance + 1, 0 between utterances
            per_frame = torch.cat([e.new_zeros(1, self.dim), e])[owner]  # (R, W, dim)
            return torch.cat([x, per_frame.transpose(1, 2)], dim=1), frames
        grown = frames.grown(self.dim)
        x = F.pad(x, (0, grown.width - frames.width))  # frames past each length are zero: the tag lands on zeros
        positions = (frames.offsets + frames.lengths).unsqueeze(1) + torch.arange(self.dim, device=x.device)
        rows = frames.rows.unsqueeze(1).expand_as(positions)
        x = x.transpose(1, 2).index_put((rows, positions), e.unsqueeze(-1).expand(*positions.shape, x.shape[1]))
        return x.transpose(1, 2), grown


class SinusoidalPositionalEncoding(nn.Module):
    """Adds Vaswani et al.'s sinusoidal encoding to ``(B, T, D)``; any T (the table grows on demand)."""

    def __init__(self, dim: int, max_len: int = 512) -> None:
        super().__init__()
        self.dim = dim
        self.register_buffer("table", self._table(max_len, dim), persistent=False)

    @staticmethod
    def _table(max_len: int, dim: int) -> Tensor:
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
        table = torch.zeros(max_len, dim)
        table[:, 0::2] = torch.sin(position * freq)
        table[:, 1::2] = torch.cos(position * freq)[:, : dim // 2]
        return table

    def forward(self, x: Tensor) -> Tensor:
        t = x.shape[1]
        if t > self.table.shape[0]:
            self.table = self._table(max(t, 2 * self.table.shape[0]), self.dim).to(self.table.device)
        return x + self.table[:t].to(x.dtype)


# ----------------------------------------------------------------------------- pooling


class AvgPoolLen(nn.Module):
    """Mean over the first ``lengths[b]`` frames of each ``(T, D)`` sequence: ``(B, T, D) -> (B, D)``."""

    def forward(self, h: Tensor, lengths: Tensor) -> Tensor:
        mask = length_mask(lengths, h.shape[1]).unsqueeze(-1).to(h.dtype)
        return (h * mask).sum(dim=1) / lengths.clamp(min=1).unsqueeze(-1).to(h.dtype)


class _AttentionPoolBase(nn.Module):
    """CLS token + positional encoding + dropout; subclasses attend. ``(B, T, D), lengths -> (B, D)``."""

    def __init__(self, dim: int, dropout: float = 0.1, use_cls: bool = True) -> None:
        super().__init__()
        self.use_cls = use_cls
        self.cls = nn.Parameter(torch.randn(dim) * 0.02) if use_cls else None
        self.positional = SinusoidalPositionalEncoding(dim)
        self.dropout = nn.Dropout(dropout)

    def _prepare(self, h: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        padding = ~length_mask(lengths.clamp(min=1), h.shape[1])  # True = ignore
        if self.cls is not None:
            h = torch.cat([self.cls.expand(h.shape[0], 1, -1).to(h.dtype), h], dim=1)
            padding = F.pad(padding, (1, 0), value=False)
        return self.dropout(self.positional(h)), padding

    def attend(self, h: Tensor, padding: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, h: Tensor, lengths: Tensor) -> Tensor:
        x, padding = self._prepare(h, lengths)
        return self.attend(x, padding)[:, 0]


class MHSAPool(_AttentionPoolBase):
    """Multi-head self-attention pooling (§2.4.3.2): 8 heads, the output at the CLS position."""

    def __init__(self, dim: int, heads: int = 8, dropout: float = 0.1, use_cls: bool = True) -> None:
        super().__init__(dim, dropout, use_cls)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)

    def attend(self, h: Tensor, padding: Tensor) -> Tensor:
        return self.attention(h, h, h, key_padding_mask=padding, need_weights=False)[0]


class TransformerPool(_AttentionPoolBase):
    """Transformer-block pooling (§2.4.3.3): 8 heads, feed-forward 2048, the output at the CLS position.

    The block (PyTorch's, post-norm) ends with a layer norm, so its output's norm is ``√D · γ``
    whatever the input: with the gain γ at PyTorch's 1, a dot product (§3.1.3) between two views
    starts as ``D · cos`` (±64 at the default width 64, ±1024 at the thesis' 1024), InfoNCE starts
    saturated (12 against its chance value 6.9 at the default width) and, at the attention layers'
    rate of Table 3.4 (1e-4), 64 steps move γ by under 1 %. The gain starts at ``1/√D`` instead:
    every embedding starts on the unit sphere, the logits are cosines, and the scale is learned
    from there (a default training: validation recall 7.2 → 15.5, ``docs/speech_learning.md``).
    Same block, same parameters; only their starting value differs.
    """

    def __init__(
        self, dim: int, heads: int = 8, ff_dim: int = 2048, dropout: float = 0.1, use_cls: bool = True
    ) -> None:
        super().__init__(dim, dropout, use_cls)
        self.block = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=ff_dim, dropout=dropout, batch_first=True)
        nn.init.constant_(self.block.norm2.weight, dim**-0.5)  # unit-norm output at the start (see above)

    def attend(self, h: Tensor, padding: Tensor) -> Tensor:
        return self.block(h, src_key_padding_mask=padding)


def build_pooling(
    kind: str, dim: int, heads: int = 8, dropout: float = 0.1, use_cls: bool = True, ff_dim: int = 2048
) -> nn.Module:
    """``avg`` | ``mhsa`` | ``transformer`` over ``(B, T, dim)``."""
    if kind == "avg":
        return AvgPoolLen()
    if kind == "mhsa":
        return MHSAPool(dim, heads, dropout, use_cls)
    if kind == "transformer":
        return TransformerPool(dim, heads, ff_dim, dropout, use_cls)
    raise ValueError(f"unknown pooling {kind!r}; expected one of {POOLINGS}")


class InternalSelfAttention(nn.Module):
    """Self-attention inside the CNN (Table 3.4 "MH: Internal"): ``(B, C, T) -> (B, C, T)``,
    positional encoding + dropout + masked multi-head attention, no CLS; padded frames stay zero."""

    def __init__(self, dim: int, heads: int = 8, dropout: float = 0.1) -> None:
        super().__init__()
        self.positional = SinusoidalPositionalEncoding(dim)
        self.dropout = nn.Dropout(dropout)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x: Tensor, frames: FrameLayout) -> Tensor:
        """``x (R, C, W)`` in ``frames``' layout → the same; each utterance attends over its own frames."""
        padded = frames.unpack(x)  # (B, C, T)
        valid = length_mask(frames.lengths, padded.shape[-1])
        h = self.dropout(self.positional(padded.transpose(1, 2)))
        out = self.attention(h, h, h, key_padding_mask=~valid, need_weights=False)[0]
        out = (out * valid.unsqueeze(-1).to(out.dtype)).transpose(1, 2)
        return frames.pack(out) if frames.packed else out


# ----------------------------------------------------------------------------- audio encoder


class AudioCNN(nn.Module):
    """The ResDAVEnet-style trunk: ``(B, T, n_mels), lengths (B,)[, lang (B,)] -> (B, T', D), lengths' (B,)``.

    widths: the first convolution's width, then one width per residual stage
    (paper: 128, 128, 256, 512, 1024). lang_tag: ``none`` | ``sequence`` | ``channel`` (§5).
    internal_attention: self-attention between the last two stages (Table 3.4).
    packed: the batch's utterances convolved one after another in one row, zero frames between them
    (:class:`~polyvse.models.frame_layout.FrameLayout`), where that is fewer frames than each padded
    to the longest (a random training batch; not a length-sorted evaluation batch): the same function
    up to the order of float sums, over the frames spoken and the gaps only.
    """

    def __init__(
        self,
        n_mels: int = 40,
        widths: Sequence[int] = PAPER_WIDTHS,
        kernel: int = 9,
        convs_per_stage: int = 4,
        convs_per_residual: int = 2,
        lang_tag: str = "none",
        n_langs: int = 0,
        lang_dim: int = 8,
        internal_attention: bool = False,
        heads: int = 8,
        dropout: float = 0.1,
        packed: bool = True,
    ) -> None:
        super().__init__()
        widths = tuple(int(w) for w in widths)
        if len(widths) < 2:
            raise ValueError(f"widths needs the first convolution and at least one stage, got {widths}")
        if convs_per_stage % convs_per_residual:
            raise ValueError(
                f"convs_per_stage ({convs_per_stage}) must be a multiple of convs_per_residual ({convs_per_residual})"
            )
        if lang_tag not in LANG_TAGS:
            raise ValueError(f"unknown lang_tag {lang_tag!r}; expected one of {LANG_TAGS}")
        if lang_tag != "none" and n_langs < 1:
            raise ValueError("a language tag needs n_langs >= 1")
        self.n_mels, self.widths, self.lang_tag = n_mels, widths, lang_tag
        tagged = lang_tag != "none"
        channel_extra = lang_dim if lang_tag == "channel" else 0
        # §5.1: both tagged variants append the embedding to the input features
        self.input_tag = LanguageTag(n_langs, lang_dim, "channel") if tagged else None
        self.input_conv = nn.Conv1d(n_mels + (lang_dim if tagged else 0), widths[0], 1, bias=False)
        self.input_norm = MaskedBatchNorm1d(widths[0])
        self.stage_tags = (
            nn.ModuleList(LanguageTag(n_langs, lang_dim, lang_tag) for _ in widths[1:]) if tagged else None
        )
        self.stages = nn.ModuleList()
        in_ch = widths[0]
        units = convs_per_stage // convs_per_residual
        for width in widths[1:]:
            stage = nn.ModuleList()
            for u in range(units):
                stage.append(
                    ResidualUnit(
                        (in_ch + channel_extra) if u == 0 else width,
                        width,
                        convs_per_residual,
                        kernel,
                        stride=2 if u == 0 else 1,
                    )
                )
            self.stages.append(stage)
            in_ch = width
        self.internal_attention = (
            InternalSelfAttention(widths[-2], heads, dropout) if internal_attention and len(widths) >= 3 else None
        )
        if internal_attention and self.internal_attention is None:
            raise ValueError("internal_attention needs at least two residual stages")
        self.tag_frames = lang_dim if lang_tag == "sequence" else 0
        self.packed = packed

    @property
    def out_dim(self) -> int:
        return self.widths[-1]

    def output_lengths(self, lengths: Tensor) -> Tensor:
        """Valid output frames per utterance, from the strides (and the sequence tags)."""
        for stage in self.stages:
            lengths = lengths + self.tag_frames
            for unit in stage:
                lengths = unit.output_lengths(lengths)
        return lengths

    def levels(self) -> list[Level]:
        """Every resolution the trunk convolves, in order, with the frames its sequence tags add."""
        levels = [Level(((1, 1, 0),))]  # the input convolution
        for stage in self.stages:
            for u, unit in enumerate(stage):
                first, *rest = unit.levels()
                if u == 0:
                    first = Level(first.convs, self.tag_frames)
                levels += [first, *rest]
        return levels

    def forward(self, feats: Tensor, lengths: Tensor, lang: Tensor | int | None = None) -> tuple[Tensor, Tensor]:
        if feats.dim() != 3 or feats.shape[-1] != self.n_mels:
            raise ValueError(f"expected (B, T, {self.n_mels}) features, got {tuple(feats.shape)}")
        if lengths.shape != (feats.shape[0],) or bool((lengths < 1).any()) or bool((lengths > feats.shape[1]).any()):
            raise ValueError(
                f"lengths must be (B,) = ({feats.shape[0]},) within [1, {feats.shape[1]}], got {lengths.tolist()}"
            )
        if self.lang_tag != "none" and lang is None:
            raise ValueError(f"lang_tag={self.lang_tag!r} needs the language ids `lang` (B,)")
        lengths = lengths.to(feats.device).long()
        frames = FrameLayout.padded(lengths, feats.shape[1])
        if self.packed:  # whichever layout convolves fewer frames: a length-sorted batch has little padding
            packed = FrameLayout.packed(lengths, feats.shape[1], self.levels())
            frames = packed if packed.width < frames.n_rows * frames.width else frames
        # whatever the caller padded with counts as zero: packing copies the utterances' frames only
        x = frames.pack(feats.transpose(1, 2))  # (R, n_mels, W)
        if self.input_tag is not None:
            x, frames = self.input_tag(x, frames, self._lang_tensor(lang, feats))
        x = F.relu(self.input_norm(frame_conv(self.input_conv, x), frames.mask()))
        n_stages = len(self.stages)
        for s, stage in enumerate(self.stages):
            if self.internal_attention is not None and s == n_stages - 1:
                x = self.internal_attention(x, frames)
            if self.stage_tags is not None:
                x, frames = self.stage_tags[s](x, frames, self._lang_tensor(lang, feats))
            for unit in stage:
                x, frames = unit(x, frames)
        return frames.unpack(x).transpose(1, 2), frames.lengths

    @staticmethod
    def _lang_tensor(lang: Tensor | int | None, like: Tensor) -> Tensor:
        assert lang is not None
        lang_t = torch.as_tensor(lang, dtype=torch.long, device=like.device)
        return lang_t.expand(like.shape[0]) if lang_t.dim() == 0 else lang_t


class AudioEncoder(nn.Module):
    """Trunk + pooling: ``(B, T, n_mels), lengths (B,)[, lang] -> (B, D)``."""

    def __init__(self, cnn: AudioCNN, pooling: nn.Module, length_rule: str = "strides") -> None:
        super().__init__()
        if length_rule not in LENGTH_RULES:
            raise ValueError(f"unknown length_rule {length_rule!r}; expected one of {LENGTH_RULES}")
        self.cnn, self.pooling, self.length_rule = cnn, pooling, length_rule

    @property
    def out_dim(self) -> int:
        return self.cnn.out_dim

    def forward(self, feats: Tensor, lengths: Tensor, lang: Tensor | int | None = None) -> Tensor:
        h, out_lengths = self.cnn(feats, lengths, lang)
        if self.length_rule == "thesis":
            out_lengths = thesis_avg_pool_len(lengths.to(h.device).long(), feats.shape[1], h.shape[1])
        return self.pooling(h, out_lengths)


def build_audio_encoder(
    pooling: str = "avg",
    *,
    n_mels: int = 40,
    widths: Sequence[int] = PAPER_WIDTHS,
    kernel: int = 9,
    convs_per_stage: int = 4,
    convs_per_residual: int = 2,
    lang_tag: str = "none",
    n_langs: int = 0,
    lang_dim: int = 8,
    heads: int = 8,
    dropout: float = 0.1,
    use_cls: bool = True,
    ff_dim: int = 2048,
    internal_attention: bool = False,
    length_rule: str = "strides",
) -> AudioEncoder:
    """One audio encoder; the keyword names are the config keys of a variant."""
    cnn = AudioCNN(
        n_mels,
        widths,
        kernel,
        convs_per_stage,
        convs_per_residual,
        lang_tag,
        n_langs,
        lang_dim,
        internal_attention,
        heads,
        dropout,
    )
    return AudioEncoder(cnn, build_pooling(pooling, cnn.out_dim, heads, dropout, use_cls, ff_dim), length_rule)


class SpeechEncoders(nn.Module):
    """The audio encoders of all language views (§5).

    sharing ``none``: one encoder per language (the baseline); ``basic``: one shared
    encoder, no language information; ``sequence`` / ``channel``: one shared encoder
    with the language tag on that axis. ``encoder_kwargs`` go to :func:`build_audio_encoder`.
    ``forward(lang, feats (B, T, n_mels), lengths (B,)) -> (B, D)``; :meth:`embed_all` embeds a
    training batch's languages together.
    """

    def __init__(self, langs: Sequence[str], sharing: str = "none", **encoder_kwargs: object) -> None:
        super().__init__()
        if sharing not in SHARINGS:
            raise ValueError(f"unknown sharing {sharing!r}; expected one of {SHARINGS}")
        if len(set(langs)) != len(langs) or not langs:
            raise ValueError(f"langs must be distinct and non-empty, got {list(langs)}")
        self.langs, self.sharing = tuple(langs), sharing
        self.lang_index = {lang: i for i, lang in enumerate(self.langs)}
        if sharing == "none":
            self.per_language = nn.ModuleDict({lang: build_audio_encoder(**encoder_kwargs) for lang in self.langs})  # type: ignore[arg-type]
            self.shared = None
        else:
            tag = "none" if sharing == "basic" else sharing
            self.per_language = None
            self.shared = build_audio_encoder(lang_tag=tag, n_langs=len(self.langs), **encoder_kwargs)  # type: ignore[arg-type]

    @property
    def out_dim(self) -> int:
        return self.encoder_for(self.langs[0]).out_dim

    def encoder_for(self, lang: str) -> AudioEncoder:
        if lang not in self.lang_index:
            raise KeyError(f"no encoder for language {lang!r}; have {list(self.langs)}")
        if self.per_language is not None:
            return self.per_language[lang]  # type: ignore[return-value]
        assert self.shared is not None
        return self.shared

    def forward(self, lang: str, feats: Tensor, lengths: Tensor) -> Tensor:
        encoder = self.encoder_for(lang)
        lang_id = self.lang_index[lang] if self.sharing in ("sequence", "channel") else None
        return encoder(feats, lengths, lang_id)

    def embed_all(self, batches: Mapping[str, tuple[Tensor, Tensor]]) -> dict[str, Tensor]:
        """Every language's utterances ``{lang: ((B_l, T_l, n_mels), lengths (B_l,))}`` →
        ``{lang: (B_l, D)}``, the languages in the mapping's order.

        A shared encoder embeds all languages in one pass (padded to the longest utterance of
        any), so that in training mode its batch norms normalise every language with the same
        statistics, those of all of them, as evaluation mode's running statistics do. One pass a
        language normalised each language with its own batch statistics in training and with the
        pooled ones in evaluation: the encoder was scored as another function than it was trained
        as, most of all with the channel tag, a per-language constant that per-language
        normalisation subtracts in training and pooled normalisation does not (a default
        shared_chan model: validation recall 10.4 with pooled statistics, 32.5 with per-language
        ones; ``docs/speech_learning.md``). Per-language encoders embed each language alone, as
        :meth:`forward` does."""
        if self.shared is None:
            return {lang: self(lang, x, lengths) for lang, (x, lengths) in batches.items()}
        langs = list(batches)
        frames = max(batches[lang][0].shape[1] for lang in langs)
        feats = torch.cat([F.pad(batches[lang][0], (0, 0, 0, frames - batches[lang][0].shape[1])) for lang in langs])
        lengths = torch.cat([batches[lang][1] for lang in langs])
        ids = None
        if self.sharing in ("sequence", "channel"):
            ids = torch.cat(
                [torch.full_like(batches[lang][1], self.lang_index[lang], dtype=torch.long) for lang in langs]
            )
        out = self.shared(feats, lengths, ids)
        return dict(zip(langs, out.split([len(batches[lang][1]) for lang in langs])))


# ----------------------------------------------------------------------------- image encoder


class ImageEncoder(nn.Module):
    """Projects precomputed CNN features into the joint space (§2.4.1).

    input_kind ``vector``: ``(B, in_dim) -> Linear -> (B, D)``;
    ``map``: ``(B, in_dim, H, W) -> 1×1 conv -> (B, H·W, D) -> pooling -> (B, D)``
    (spatial average unless another pooling module is given).
    """

    def __init__(
        self, in_dim: int, embed_dim: int, input_kind: str = "vector", pooling: nn.Module | None = None
    ) -> None:
        super().__init__()
        if input_kind not in ("vector", "map"):
            raise ValueError(f"input_kind must be 'vector' or 'map', got {input_kind!r}")
        self.input_kind, self.in_dim, self.out_dim = input_kind, in_dim, embed_dim
        if input_kind == "vector":
            if pooling is not None:
                raise ValueError("pooling applies to feature maps only")
            self.project: nn.Module = nn.Linear(in_dim, embed_dim)
            self.pooling = None
        else:
            self.project = nn.Conv2d(in_dim, embed_dim, kernel_size=1)
            self.pooling = pooling if pooling is not None else AvgPoolLen()

    def forward(self, feats: Tensor) -> Tensor:
        if self.input_kind == "vector":
            if feats.dim() != 2 or feats.shape[1] != self.in_dim:
                raise ValueError(f"expected (B, {self.in_dim}) image vectors, got {tuple(feats.shape)}")
            return self.project(feats)
        if feats.dim() != 4 or feats.shape[1] != self.in_dim:
            raise ValueError(f"expected (B, {self.in_dim}, H, W) feature maps, got {tuple(feats.shape)}")
        h = self.project(feats).flatten(2).transpose(1, 2)  # (B, H·W, D)
        lengths = torch.full((h.shape[0],), h.shape[1], dtype=torch.long, device=h.device)
        assert self.pooling is not None
        return self.pooling(h, lengths)
