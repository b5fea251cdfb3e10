"""Audio/image encoders (thesis §2.4, §5): shapes, lengths, padding, language tags."""

from __future__ import annotations

import math

import pytest
import torch

from polyvse.losses.margin_softmax import info_nce_loss
from polyvse.train.batch_norm import recalibrate_batch_norm
from polyvse.models.frame_layout import FrameLayout
from polyvse.models.speech_encoders import (
    AudioCNN,
    AvgPoolLen,
    ImageEncoder,
    MaskedBatchNorm1d,
    ResidualUnit,
    SpeechEncoders,
    TransformerPool,
    build_audio_encoder,
    frame_conv,
    frames_major,
    length_mask,
    thesis_avg_pool_len,
)

SMALL = (8, 8, 16, 16, 32)  # first conv + 4 stages; the paper's is (128, 128, 256, 512, 1024)


def small_encoder(pooling: str = "avg", **kw: object):
    torch.manual_seed(0)
    return as_if_trained(build_audio_encoder(pooling, widths=SMALL, ff_dim=64, **kw))  # type: ignore[arg-type]


def as_if_trained(module: torch.nn.Module) -> torch.nn.Module:
    """Every batch norm's scale drawn away from its initial value: a residual branch starts with a
    zero scale (ResidualUnit), and a test of what the branches compute needs them to contribute."""
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, MaskedBatchNorm1d):
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=g))
    return module


def n_params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_output_lengths_follow_the_strides():
    cnn = AudioCNN(widths=SMALL)
    lengths = torch.tensor([1, 15, 16, 17, 100, 1024])
    # four stride-2 stages with "same" padding: ⌈L / 16⌉
    assert cnn.output_lengths(lengths).tolist() == [math.ceil(n / 16) for n in lengths.tolist()]
    feats = torch.randn(6, 1024, 40)
    h, out_lengths = cnn(feats, lengths)
    assert h.shape == (6, 64, 32)
    assert out_lengths.tolist() == cnn.output_lengths(lengths).tolist()


def test_paper_sizes():
    enc = build_audio_encoder("avg")
    assert enc.out_dim == 1024
    convs = [m for m in enc.cnn.modules() if isinstance(m, torch.nn.Conv1d) and m.kernel_size == (9,)]
    assert len(convs) == 16 and sum(c.stride == (2,) for c in convs) == 4
    assert enc.cnn.input_conv.in_channels == 40 and enc.cnn.input_conv.out_channels == 128
    # §2.4.3: MHSA adds about 4 M parameters, a Transformer block about 8 M
    base = n_params(enc)
    assert 3.9e6 < n_params(build_audio_encoder("mhsa")) - base < 4.5e6
    assert 8.0e6 < n_params(build_audio_encoder("transformer")) - base < 8.8e6
    # §5.1: the channel tag has about 150 k more parameters than the sequence tag
    diff = n_params(build_audio_encoder(lang_tag="channel", n_langs=3)) - n_params(
        build_audio_encoder(lang_tag="sequence", n_langs=3)
    )
    assert 1.3e5 < diff < 1.7e5


@pytest.mark.parametrize("pooling", ["avg", "mhsa", "transformer"])
def test_shapes(pooling):
    enc = small_encoder(pooling)
    out = enc(torch.randn(3, 50, 40), torch.tensor([50, 20, 7]))
    assert out.shape == (3, 32)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("pooling", ["avg", "mhsa", "transformer"])
@pytest.mark.parametrize("tag", ["none", "sequence", "channel"])
def test_padding_is_ignored_in_eval_mode(pooling, tag):
    enc = small_encoder(pooling, lang_tag=tag, n_langs=3).eval()
    g = torch.Generator().manual_seed(1)
    utt = torch.randn(1, 37, 40, generator=g)
    alone = enc(utt, torch.tensor([37]), 1)
    # the same utterance padded to twice its length (with junk, which must not matter)
    padded = torch.cat([utt, 5 * torch.randn(1, 37, 40, generator=g)], dim=1)
    assert torch.allclose(enc(padded, torch.tensor([37]), 1), alone, atol=1e-5)
    # and inside a batch beside a longer utterance
    batch = torch.randn(2, 74, 40, generator=g)
    batch[0, :37] = utt[0]
    assert torch.allclose(enc(batch, torch.tensor([37, 74]), torch.tensor([1, 2]))[:1], alone, atol=1e-5)


def test_padding_is_ignored_in_train_mode_with_masked_batch_norm():
    enc = small_encoder("avg").train()
    g = torch.Generator().manual_seed(2)
    utts = torch.randn(2, 30, 40, generator=g)
    lengths = torch.tensor([30, 21])
    a = enc(utts, lengths)
    b = enc(torch.cat([utts, torch.randn(2, 30, 40, generator=g)], dim=1), lengths)
    assert torch.allclose(a, b, atol=1e-4)  # float noise only: batch-norm statistics of tiny batches


def test_residual_units_start_as_their_shortcut():
    """Zero-γ initialisation: a fresh unit's branch ends in a batch norm of scale 0, so the unit is
    ReLU(shortcut): the identity, or the 1×1 projection and its batch norm."""
    torch.manual_seed(0)
    lengths = torch.tensor([20, 15, 9])
    for unit in (ResidualUnit(8, 16, stride=2), ResidualUnit(16, 16)):
        c_in = unit.convs[0].in_channels
        x = torch.relu(torch.randn(3, c_in, 20)) * length_mask(lengths, 20).unsqueeze(1)
        out, out_frames = unit.train()(x, FrameLayout.padded(lengths, 20))
        mask = length_mask(out_frames.lengths, out.shape[-1])
        if unit.shortcut_conv is None:
            shortcut = x
        else:
            shortcut = unit.shortcut_norm(frame_conv(unit.shortcut_conv, x), mask)
        assert torch.allclose(out, torch.relu(shortcut)), unit
        assert all(n.weight.abs().sum() > 0 for n in unit.norms[:-1]) and unit.norms[-1].weight.abs().sum() == 0


def _dot_product_infonce_at_init(pooling: str, batch: int = 32) -> float:
    """InfoNCE (§2.2.2, dot product as §3.1.3) between two fresh default-width audio encoders on
    log-Mel frames of the default data's level and spread (dB: mean -40, sd 19)."""
    torch.manual_seed(0)
    encoders = [build_audio_encoder(pooling, widths=(16, 16, 32, 32, 64), ff_dim=256).train() for _ in range(2)]
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(150, 400, (batch,), generator=g)
    lengths[0] = 400
    with torch.no_grad():
        a, b = (e(-40 + 19 * torch.randn(batch, 400, 40, generator=g), lengths) for e in encoders)
        return float(info_nce_loss(a @ b.T))


@pytest.mark.parametrize("pooling", ["avg", "transformer"])
def test_dot_product_logits_between_two_audio_views_start_near_chance(pooling):
    """At initialisation the loss between two languages' encoders is near its chance value 2 ln B:
    the logits are O(1), not set by the embeddings' norms. With every batch-norm scale at 1 the
    post-ReLU averages gave 16.0 here (2.3× chance; 18.7 on the default data) and the Transformer
    block's unit-gain layer norm 12 on the default data: the first tens of steps went into
    shrinking the norms (docs/speech_learning.md)."""
    chance = 2 * math.log(32)
    assert _dot_product_infonce_at_init(pooling) < 1.3 * chance


def test_transformer_pooling_starts_on_the_unit_sphere():
    """The block's final layer norm starts at gain 1/√D: every pooled embedding has norm 1."""
    torch.manual_seed(0)
    pool = TransformerPool(64, heads=8, ff_dim=128, dropout=0.0).eval()
    out = pool(torch.randn(5, 12, 64), torch.tensor([12, 9, 5, 3, 1]))
    assert torch.allclose(out.norm(dim=1), torch.ones(5), atol=1e-3)


def test_masked_batch_norm_matches_batch_norm_on_full_mask():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 10)
    ours, ref = MaskedBatchNorm1d(3), torch.nn.BatchNorm1d(3)
    out = ours(x, torch.ones(4, 10, dtype=torch.bool))
    assert torch.allclose(out, ref(x), atol=1e-5)
    assert torch.allclose(ours.running_mean, ref.running_mean, atol=1e-6)
    assert torch.allclose(ours.running_var, ref.running_var, atol=1e-6)
    # with a mask, the statistics are those of the valid frames only
    mask = torch.zeros(4, 10, dtype=torch.bool)
    mask[:, :4] = True
    out = MaskedBatchNorm1d(3, affine=False)(x, mask)
    assert out[:, :, 4:].abs().max() == 0
    valid = out[:, :, :4]
    assert valid.mean(dim=(0, 2)).abs().max() < 1e-5
    assert torch.allclose(valid.var(dim=(0, 2), unbiased=False), torch.ones(3), atol=1e-3)


@pytest.mark.parametrize("kernel, stride", [(9, 1), (9, 2), (1, 1), (1, 2), (3, 2)])
@pytest.mark.parametrize("layout", ["contiguous", "frames_major"])
def test_frame_conv_is_the_1d_convolution(kernel: int, stride: int, layout: str):
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(5, 7, kernel, stride=stride, padding=kernel // 2, bias=False)
    x = torch.randn(3, 5, 23)
    if layout == "frames_major":
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
    out = frame_conv(conv, x)
    assert out.shape == conv(x).shape
    assert torch.allclose(out, conv(x), atol=1e-5)
    assert out.stride(1) == 1  # frames-major out: the next convolution reads it without a reorder
    assert frames_major(out) is out


@pytest.mark.parametrize("bias", [False, True])
def test_a_strided_one_by_one_frame_conv_over_a_long_row_has_the_1d_gradient(bias: bool):
    """A packed batch is one long row; torch's channels-last 1×1 strided conv2d crashed in its backward on
    one of 3,584 frames (the tiny speech workflow's), so frame_conv runs it as a linear map of the frames."""
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(8, 8, 1, stride=2, bias=bias)
    x = torch.randn(1, 3584, 8).transpose(1, 2).requires_grad_()
    g = torch.randn(1, 8, 1792)
    (frame_conv(conv, x) * g).sum().backward()
    ours = x.grad.clone(), conv.weight.grad.clone()
    x.grad = conv.weight.grad = None
    (conv(x.contiguous()) * g).sum().backward()
    assert torch.allclose(ours[0], x.grad, atol=1e-5) and torch.allclose(ours[1], conv.weight.grad, atol=1e-4)


def test_masked_batch_norm_gradient_is_that_of_its_forward():
    # the backward is written out (_MaskedNorm): check it against finite differences, padded frames included
    torch.manual_seed(0)
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[0, 5:] = False
    mask[2, 2:] = False
    for affine in (True, False):
        norm = MaskedBatchNorm1d(4, affine=affine).double()
        if affine:
            torch.nn.init.normal_(norm.weight)
            torch.nn.init.normal_(norm.bias)
        x = torch.randn(3, 4, 7, dtype=torch.float64, requires_grad=True)
        params = [x] + list(norm.parameters())
        assert torch.autograd.gradcheck(lambda x, *p: norm(x, mask), params)
        out = norm(x, mask)
        out.sum().backward()
        assert x.grad[~mask.unsqueeze(1).expand_as(x)].abs().max() == 0  # padded frames get no gradient


def test_avg_pool_len_averages_valid_frames_only():
    h = torch.tensor([[[1.0], [3.0], [100.0]], [[2.0], [4.0], [6.0]]])
    assert AvgPoolLen()(h, torch.tensor([2, 3])).tolist() == [[2.0], [4.0]]


def test_thesis_avg_pool_len_formula():
    # ⌊len / round(max_sl / max_sl_out)⌋: round(1024 / 64) = 16
    assert thesis_avg_pool_len(torch.tensor([100, 1024, 3]), 1024, 64).tolist() == [6, 64, 1]
    enc = small_encoder("avg", length_rule="thesis").eval()
    assert enc(torch.randn(2, 64, 40), torch.tensor([64, 40])).shape == (2, 32)


def test_sequence_tag_adds_frames_and_channel_tag_adds_channels():
    seq = AudioCNN(widths=SMALL, lang_tag="sequence", n_langs=3)
    # 8 tag frames before each stage: L -> ⌈(L + 8) / 2⌉ four times
    length = 20
    for _ in range(4):
        length = math.ceil((length + 8) / 2)
    assert seq.output_lengths(torch.tensor([20])).item() == length
    h, out_lengths = seq(torch.randn(1, 20, 40), torch.tensor([20]), torch.tensor([0]))
    assert out_lengths.item() == length == h.shape[1]
    chan = AudioCNN(widths=SMALL, lang_tag="channel", n_langs=3)
    assert chan.input_conv.in_channels == 48  # 40 bins + 8-D language embedding
    assert chan.stages[1][0].convs[0].in_channels == SMALL[1] + 8
    with pytest.raises(ValueError, match="needs the language ids"):
        chan(torch.randn(1, 20, 40), torch.tensor([20]))


def test_shared_encoders():
    kw = dict(widths=SMALL, ff_dim=64)
    separate = SpeechEncoders(["en", "hi", "ja"], "none", **kw)
    basic = SpeechEncoders(["en", "hi", "ja"], "basic", **kw)
    assert separate.encoder_for("en") is not separate.encoder_for("hi")
    assert basic.encoder_for("en") is basic.encoder_for("ja")
    assert n_params(separate) == 3 * n_params(basic)
    x, lengths = torch.randn(2, 40, 40), torch.tensor([40, 33])
    basic.eval()
    assert torch.equal(basic("en", x, lengths), basic("hi", x, lengths))
    tagged = SpeechEncoders(["en", "hi", "ja"], "channel", **kw).eval()
    assert not torch.allclose(tagged("en", x, lengths), tagged("hi", x, lengths))
    assert tagged("ja", x, lengths).shape == (2, 32)
    with pytest.raises(KeyError):
        tagged.encoder_for("de")


def test_internal_attention_variant():
    enc = small_encoder("avg", internal_attention=True).eval()
    utt = torch.randn(1, 40, 40)
    alone = enc(utt, torch.tensor([40]))
    padded = enc(torch.cat([utt, torch.randn(1, 40, 40)], dim=1), torch.tensor([40]))
    assert torch.allclose(alone, padded, atol=1e-5)


def test_image_encoder_vectors_and_maps():
    torch.manual_seed(0)
    vec = ImageEncoder(1280, 32, "vector")
    assert vec(torch.randn(5, 1280)).shape == (5, 32)
    maps = ImageEncoder(64, 32, "map")
    x = torch.randn(2, 64, 7, 7)
    out = maps(x)
    assert out.shape == (2, 32)
    # 1×1 convolution then spatial average
    assert torch.allclose(out, maps.project(x).mean(dim=(2, 3)), atol=1e-5)
    with pytest.raises(ValueError):
        vec(torch.randn(5, 64))


@pytest.mark.parametrize("sharing", ["basic", "sequence", "channel", "none"])
def test_a_training_batch_embeds_alike_in_training_mode_and_recalibrated_evaluation(sharing):
    """Languages whose log-Mel levels differ: in training mode a batch's embeddings equal its
    evaluation-mode embeddings once the batch norms hold that batch's statistics. A shared encoder
    normalises every language with the statistics of all of them in both modes (embed_all); when it
    embedded one language at a time, training normalised each with its own and evaluation with the
    pooled ones (shared_chan: validation recall 10.4 against 32.5, docs/speech_learning.md)."""
    torch.manual_seed(0)
    enc = as_if_trained(SpeechEncoders(("en", "hi", "ja"), sharing, widths=SMALL, ff_dim=64))
    g = torch.Generator().manual_seed(4)
    batches = {
        lang: (torch.randn(12, 400, 40, generator=g) * (1 + k) + 3 * k, torch.randint(300, 401, (12,), generator=g))
        for k, lang in enumerate(("en", "hi", "ja"))
    }
    trained = enc.train().embed_all(batches)
    recalibrate_batch_norm(enc, [batches], enc.embed_all)
    enc.eval()
    for lang, (x, lengths) in batches.items():
        # the running variances are unbiased, the batch's not: a few per cent apart at the deep stages;
        # one language at a time a shared encoder was 100-1700 % apart
        gap = (enc(lang, x, lengths) - trained[lang]).abs().max() / trained[lang].abs().max()
        assert gap < 0.05, (lang, float(gap))


def test_gradients_flow_through_encoder():
    enc = small_encoder("mhsa").train()
    out = enc(torch.randn(3, 45, 40), torch.tensor([45, 30, 12]))
    out.pow(2).mean().backward()
    grads = [p.grad for p in enc.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert enc.cnn.input_conv.weight.grad.abs().sum() > 0
