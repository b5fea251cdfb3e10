"""The packed frame layout (polyvse.models.frame_layout): an audio trunk computes the same function
packed as padded, and the layout keeps every utterance on its strides' grid, apart from the next."""

from __future__ import annotations

import pytest
import torch

from polyvse.models.frame_layout import FrameLayout, Level, bucketed_width
from polyvse.models.speech_encoders import build_audio_encoder

SMALL = (8, 8, 16, 16, 32)
LENGTHS = torch.tensor([400, 1, 37, 7, 120, 20, 2, 65])  # padding-heavy: packed is fewer frames, tags and all
WIDTH = 410

ENCODERS = {
    "avg": {"pooling": "avg"},
    "mhsa": {"pooling": "mhsa"},
    "transformer": {"pooling": "transformer", "ff_dim": 64},
    "sequence tag": {"pooling": "avg", "lang_tag": "sequence", "n_langs": 3},
    "channel tag": {"pooling": "avg", "lang_tag": "channel", "n_langs": 3},
    "internal attention": {"pooling": "mhsa", "internal_attention": True},
    "thesis lengths": {"pooling": "avg", "length_rule": "thesis"},
}


def _outputs(kwargs: dict, mode: str, packed: bool) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
    """One encoder's output, input gradient and parameter gradients for a fixed batch, in float64: the two
    layouts sum the same terms in other orders, and float32's rounding of a sum over thousands of frames
    would set the tolerance by the CPU's kernels rather than by the function."""
    torch.manual_seed(1)
    encoder = build_audio_encoder(widths=SMALL, **kwargs).double()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():  # every batch norm's scale away from its start (a residual branch starts at 0)
        for m in encoder.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.weight.uniform_(0.5, 1.5, generator=g)
    encoder.cnn.packed = packed
    # the trunk packs only where that is fewer frames: this batch must be such a batch
    assert FrameLayout.packed(LENGTHS, WIDTH, encoder.cnn.levels()).width < len(LENGTHS) * WIDTH
    getattr(encoder, mode)()
    x = torch.randn(len(LENGTHS), WIDTH, 40, generator=g, dtype=torch.float64).requires_grad_()
    lang = torch.arange(len(LENGTHS)) % 3 if "lang_tag" in kwargs else None
    torch.manual_seed(5)  # the same dropout masks
    y = encoder(x, LENGTHS, lang)
    (y * torch.arange(y.numel()).view_as(y).sin()).sum().backward()
    grads = {name: p.grad.clone() for name, p in encoder.named_parameters() if p.grad is not None}
    return y.detach(), x.grad.clone(), grads


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", list(ENCODERS))
def test_a_packed_trunk_computes_what_a_padded_one_does(name: str, mode: str):
    """Values and gradients agree up to the order of float sums (batch-norm statistics over other
    frame orders): in float64, to 1e-10 of their size."""
    y_pad, dx_pad, grads_pad = _outputs(ENCODERS[name], mode, packed=False)
    y_pack, dx_pack, grads_pack = _outputs(ENCODERS[name], mode, packed=True)
    assert y_pack.shape == y_pad.shape
    assert torch.allclose(y_pack, y_pad, atol=1e-10, rtol=1e-10)
    assert torch.allclose(dx_pack, dx_pad, atol=1e-10, rtol=1e-10)
    assert grads_pack.keys() == grads_pad.keys()
    for key in grads_pad:
        assert torch.allclose(grads_pack[key], grads_pad[key], atol=1e-10, rtol=1e-10), key


def test_the_gaps_hold_the_padding_of_every_convolution_at_every_resolution():
    levels = [Level(((1, 1, 0),)), Level(((9, 2, 4), (1, 2, 0)), tag_frames=8), Level(((9, 1, 4),))] * 2
    frames = FrameLayout.packed(LENGTHS, WIDTH, levels)
    assert frames.n_rows == 1 and frames.packed
    assert bool((frames.offsets % 4 == 0).all())  # the grid of both strides
    assert frames.width >= int((frames.offsets + frames.lengths).max())
    for level in levels:
        frames = frames.grown(level.tag_frames)
        starts, ends = frames.offsets, frames.offsets + frames.lengths
        padding = max(p for _, _, p in level.convs)
        assert bool((starts[1:] - ends[:-1] >= padding).all()), level
        assert int(ends[-1]) <= frames.width
        frames = frames.conv(*level.convs[0])


def test_pack_and_unpack_are_inverse_and_zero_outside_the_utterances():
    frames = FrameLayout.packed(LENGTHS, WIDTH, [Level(((9, 2, 4),)), Level(((9, 1, 4),))])
    x = torch.randn(len(LENGTHS), 3, WIDTH)
    packed = frames.pack(x)
    assert packed.shape == (1, 3, frames.width)
    assert bool((packed.transpose(1, 2)[~frames.mask()] == 0).all())
    valid = torch.arange(WIDTH) < LENGTHS.unsqueeze(1)
    assert torch.equal(frames.unpack(packed), x * valid.unsqueeze(1))


def test_the_trunk_keeps_the_padded_layout_where_packing_would_convolve_more_frames(monkeypatch):
    """A length-sorted batch (evaluation's) has little padding, and packing's gaps would add frames."""
    encoder = build_audio_encoder(widths=SMALL).eval()
    chosen = []
    conv = FrameLayout.conv
    monkeypatch.setattr(FrameLayout, "conv", lambda self, *a: chosen.append(self.packed) or conv(self, *a))
    encoder(torch.randn(4, 100, 40), torch.tensor([100, 99, 98, 97]))
    assert chosen and not any(chosen)
    chosen.clear()
    encoder(torch.randn(len(LENGTHS), WIDTH, 40), LENGTHS)
    assert chosen and all(chosen)


def test_an_off_grid_start_is_refused():
    frames = FrameLayout(torch.zeros(2, dtype=torch.long), torch.tensor([0, 3]), torch.tensor([2, 2]), 1, 8, 4, True)
    with pytest.raises(ValueError, match="off the grid of stride 2"):
        frames.conv(9, 2, 4)


@pytest.mark.parametrize("frames", [1, 15, 100, 1000, 7001, 8192, 8193, 123457])
def test_bucketed_widths_stay_on_the_grid_within_an_eighth(frames: int):
    width = bucketed_width(frames, 16)
    assert width % 16 == 0 and frames <= width <= max(frames * 9 // 8 + 1, 16)
