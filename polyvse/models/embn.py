"""The two-branch Embedding Network (EmbN) of Wang et al. (TPAMI 2019), as MULE
and SMALR use it: MULE "Image-Language Matching", SMALR §4 "Visual Features".

Image branch: CNN feature → FC → BN → ReLU → dropout → FC → L2 norm.
Text branch: word embeddings → GRU, last valid step → FC → L2 norm (MULE uses
the last hidden state of a recurrent net for the multimodal sentence vector).

Word embeddings start from FastText (300-D) or from FastText reduced by PCA;
a PCA-reduced table (``input_dim`` ≠ 0) reaches the GRU's ``word_dim`` inputs
through one fully connected layer, as SMALR §3.1 feeds its PCA-50 vectors
through an FC into the embedding space.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from polyvse.models import gru_recurrence


@dataclass(kw_only=True)
class BranchSizes:
    """The sizes every EmbN-style family shares (MULE §"Model", SMALR §4): the sentence GRU's
    hidden size, the image branch's hidden layer, the joint space, dropout. Keyword-only, so
    that a family's config lists its own required fields first."""

    gru_hidden: int = 512
    joint_dim: int = 512
    image_hidden: int = 2048
    dropout: float = 0.2

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class EmbNConfig(BranchSizes):
    vocab_size: int
    image_dim: int
    word_dim: int = 300
    input_dim: int = 0  # size of the word table when it is not word_dim (PCA-reduced); 0: word_dim


def l2_normalize(x: Tensor) -> Tensor:
    return nn.functional.normalize(x, dim=-1)


class ImageBranch(nn.Module):
    """``(B, image_dim) -> (B, joint_dim)``, unit norm."""

    def __init__(self, image_dim: int, hidden: int, joint_dim: int, dropout: float):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(image_dim, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, joint_dim),
        )

    def forward(self, features: Tensor) -> Tensor:
        return l2_normalize(self.net(features))


def final_state(gru: nn.GRU, inputs: Tensor, lengths: Tensor) -> Tensor:
    """A one-layer, one-direction GRU's state after each sequence's last valid step:
    ``(S, T, D)`` inputs, ``(S,)`` host lengths → ``(S, H)``, in the input's order.

    On a CPU the GRU runs over the padded batch and the output at each sequence's last valid step
    is read (:func:`last_valid_output`): a GRU is causal, so that output is the packed run's final
    state, and the padded run computes the input projection of every step in one matrix product,
    where a packed one multiplies step by step (a step of the default's ten-language SMALR or of
    LIWE's characters several times faster). On an accelerator the packed run (cuDNN) is kept:
    ``pack_padded_sequence(enforce_sorted=False)`` would copy the order to the device with a
    blocking copy, so the batch is sorted here and the final state read from the packed run's
    state, without unpadding its output."""
    if inputs.device.type == "cpu":
        return last_valid_output(gru, inputs, lengths)
    sorted_lengths, order = torch.sort(lengths.cpu(), descending=True)
    order = order.to(inputs.device, non_blocking=True)
    packed = nn.utils.rnn.pack_padded_sequence(inputs.index_select(0, order), sorted_lengths, batch_first=True)
    # with its sorting order, the GRU returns the final states in the input's order
    _, state = gru(nn.utils.rnn.PackedSequence(packed.data, packed.batch_sizes, order))
    return state[-1]


def last_valid_output(gru: nn.GRU, inputs: Tensor, lengths: Tensor) -> Tensor:
    """A one-direction GRU over the padded ``(S, T, D)`` inputs, its output at each sequence's last
    valid step (``(S,)`` lengths ≥ 1): ``(S, H)``. Padding after a sequence never reaches it."""
    if gru_recurrence.takes_recurrence(gru, inputs):
        return gru_recurrence.gru_final_state(gru, inputs, lengths)
    out, _ = gru(inputs)
    rows = torch.arange(inputs.shape[0], device=inputs.device)
    return out[rows, lengths.to(inputs.device) - 1]


def reversed_within_lengths(inputs: Tensor, lengths: Tensor) -> Tensor:
    """Each sequence of ``(S, T, D)`` read backwards over its own ``lengths[s]`` valid steps, its
    padding left after it: what a backward-reading GRU takes as a forward one."""
    steps = torch.arange(inputs.shape[1], device=inputs.device)
    index = (lengths.to(inputs.device).unsqueeze(1) - 1 - steps).clamp(min=0)  # (S, T)
    return inputs.gather(1, index.unsqueeze(-1).expand(-1, -1, inputs.shape[2]))


class GRUSentenceEncoder(nn.Module):
    """``(S, T)`` token ids with ``(S,)`` lengths → ``(S, joint_dim)``, unit norm."""

    def __init__(self, word_dim: int, hidden: int, joint_dim: int, dropout: float):
        super().__init__()
        self.gru = nn.GRU(word_dim, hidden, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden, joint_dim)

    def forward(self, words: Tensor, lengths: Tensor) -> Tensor:
        """words: ``(S, T, word_dim)`` embedded tokens."""
        return l2_normalize(self.fc(self.dropout(final_state(self.gru, words, lengths))))


class EmbN(nn.Module):
    """EmbN with one word-embedding table over the (language, token) vocabulary."""

    family = "embn"

    def __init__(self, config: EmbNConfig):
        super().__init__()
        self.config = config
        table_dim = config.input_dim or config.word_dim
        self.word_embeddings = nn.Embedding(config.vocab_size, table_dim, padding_idx=0)
        # SMALR §3.1: PCA-reduced vectors go through an FC into the word space
        self.input_fc = nn.Linear(table_dim, config.word_dim) if config.input_dim else None
        self.text = GRUSentenceEncoder(config.word_dim, config.gru_hidden, config.joint_dim, config.dropout)
        self.image = ImageBranch(config.image_dim, config.image_hidden, config.joint_dim, config.dropout)

    def embed_images(self, features: Tensor) -> Tensor:
        return self.image(features)

    def embed_sentences(self, tokens: Tensor, lengths: Tensor, langs: Tensor | None = None) -> Tensor:
        """tokens ``(S, T)``, lengths ``(S,)``; ``langs`` is unused (one branch for all)."""
        if self.input_fc is None:
            return self.text(self.word_embeddings(tokens), lengths)
        # the FC runs once per distinct word of the batch, not once per position
        words, where = torch.unique(tokens, return_inverse=True)
        return self.text(self.input_fc(self.word_embeddings(words))[where], lengths)

    def parameter_counts(self) -> tuple[int, int]:
        """(train-time, test-time) parameters.

        Test time counts as SMALR §5 does: word representations are precomputed,
        so the embedding table (and the FC on a PCA-reduced table) is a lookup,
        not parameters of the model.
        """
        train = sum(p.numel() for p in self.parameters() if p.requires_grad)
        lookup = self.word_embeddings.weight.numel()
        if self.input_fc is not None:
            lookup += sum(p.numel() for p in self.input_fc.parameters())
        return train, train - lookup
