"""The Hybrid Embedding Model (HEM) and the Language-Agnostic (LA) baseline,
and SMALR = HEM + MCLM (Burns et al. ECCV 2020, §3.1–3.3, §4 "Comparative
Evaluation").

Word features in the 512-D universal space:

- the top-K most frequent words of each language (K = 5000 in the paper) keep
  a language-specific embedding: FastText reduced to 50-D by PCA (initial
  value; fine-tuned), through a language-specific FC into 512-D;
- every other word is mapped to its latent token (frozen assignment from the
  pretraining of :mod:`polyvse.models.latent_vocab`) and takes that token's
  latent embedding (initialised by pretraining; fine-tuned, §3.1 "we freeze
  the latent token assignments ... we allow the features themselves to be
  fine-tuned").

LA uses latent tokens only (K = 0: no language-specific parameters). Above the
universal embedding the model is MULE's (:mod:`polyvse.models.universal`).
SMALR adds the MCLM parts: a learned MASK feature and the two shared FC heads
(universal level and final level, :class:`polyvse.losses.mclm.MCLMHead`).

The frozen mappings are buffers (``latent_of_word``, ``specific_of_word``,
``(vocab_size,)`` long, −1 = none), so a checkpoint's ``state_dict`` restores
them; build a fresh model with :meth:`HEM.from_vocabulary`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from polyvse.losses.mclm import MCLMHead
from polyvse.models.embn import BranchSizes
from polyvse.models.latent_vocab import LatentAssignment
from polyvse.models.universal import UniversalEmbeddingModel

if TYPE_CHECKING:
    from polyvse.text.vocab import Vocabulary


@dataclass
class HEMConfig(BranchSizes):
    """n_latent: latent tokens kept after pretraining; n_specific: words with a
    language-specific embedding, over all languages (0 for LA)."""

    vocab_size: int
    image_dim: int
    n_langs: int
    n_latent: int
    n_specific: int = 0
    specific_dim: int = 50
    universal_dim: int = 512


def frequent_words(vocab: "Vocabulary", counts: Mapping[str, Mapping[str, int]], k: int) -> Tensor:
    """``(V,)`` bool: the ``k`` most frequent training words of each language
    (ties by token), i.e. HEM's language-specific words. Padding and ``<unk>``
    are never among them."""
    out = torch.zeros(len(vocab), dtype=torch.bool)
    for lang in vocab.langs:
        ranked = sorted(
            ((tok, c) for tok, c in counts.get(lang, {}).items() if (lang, tok) in vocab.stoi),
            key=lambda tc: (-tc[1], tc[0]),
        )
        for tok, _ in ranked[:k]:
            out[vocab.stoi[(lang, tok)]] = True
    return out


class HEM(UniversalEmbeddingModel):
    """HEM (SMALR §3.1) with MULE's multimodal model and language classifier."""

    family = "hem"
    with_mclm = False

    def __init__(
        self,
        config: HEMConfig,
        latent_of_word: Tensor | None = None,
        specific_of_word: Tensor | None = None,
        latent_vectors: Tensor | None = None,
        specific_vectors: Tensor | None = None,
    ):
        """latent_of_word / specific_of_word: ``(vocab_size,)`` long, a word's row
        in the latent / specific table or −1; latent_vectors ``(n_latent,
        universal_dim)``; specific_vectors ``(n_specific, specific_dim)``.
        Absent mappings are left at −1 (every word reads as padding) and absent
        vectors are random: that is the state a checkpoint's ``state_dict``
        overwrites; a fresh model comes from :meth:`from_vocabulary`."""
        super().__init__(
            config.universal_dim,
            config.n_langs,
            config.image_dim,
            config.gru_hidden,
            config.joint_dim,
            config.image_hidden,
            config.dropout,
            mask_token=self.with_mclm,
        )
        self.config = config
        v = config.vocab_size
        self.register_buffer("latent_of_word", self._mapping(latent_of_word, v, config.n_latent, "latent_of_word"))
        self.register_buffer(
            "specific_of_word", self._mapping(specific_of_word, v, config.n_specific, "specific_of_word")
        )
        # nn.Embedding tables: their gradients can be sparse rows (polyvse.optim.lazy_word_tables)
        self.latent_embeddings = self._table(latent_vectors, config.n_latent, config.universal_dim, "latent_vectors")
        if config.n_specific:
            self.specific_embeddings: nn.Embedding | None = self._table(
                specific_vectors, config.n_specific, config.specific_dim, "specific_vectors"
            )
            self.language_fc = nn.ModuleList(
                nn.Linear(config.specific_dim, config.universal_dim) for _ in range(config.n_langs)
            )
        else:
            self.specific_embeddings = None
            self.language_fc = nn.ModuleList()
        if self.with_mclm:
            self.mclm_universal = MCLMHead(config.universal_dim)
            self.mclm_final = MCLMHead(config.joint_dim)

    @staticmethod
    def _mapping(mapping: Tensor | None, vocab_size: int, rows: int, name: str) -> Tensor:
        if mapping is None:
            return torch.full((vocab_size,), -1, dtype=torch.long)
        mapping = mapping.detach().long().cpu().clone()
        bad_range = mapping.numel() > 0 and (int(mapping.max()) >= rows or int(mapping.min()) < -1)
        if mapping.shape != (vocab_size,) or bad_range:
            raise ValueError(
                f"HEM({name}): expected ({vocab_size},) ids in [-1, {rows}); got shape {tuple(mapping.shape)}"
            )
        return mapping

    @staticmethod
    def _table(vectors: Tensor | None, rows: int, dim: int, name: str) -> nn.Embedding:
        if vectors is None:
            return nn.Embedding.from_pretrained(torch.randn(rows, dim) / dim**0.5, freeze=False)
        if tuple(vectors.shape) != (rows, dim):
            raise ValueError(f"HEM({name}): shape {tuple(vectors.shape)}, expected ({rows}, {dim})")
        return nn.Embedding.from_pretrained(vectors.detach().float().clone(), freeze=False)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):  # type: ignore[no-untyped-def]
        # models saved before the tables were nn.Embedding hold them as bare parameters
        for name in ("latent_embeddings", "specific_embeddings"):
            if prefix + name in state_dict:
                state_dict[f"{prefix}{name}.weight"] = state_dict.pop(prefix + name)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @classmethod
    def from_vocabulary(
        cls,
        vocab: "Vocabulary",
        image_dim: int,
        assignment: LatentAssignment,
        specific: Tensor | None = None,
        specific_vectors: Tensor | None = None,
        **options,
    ) -> "HEM":
        """A fresh model from the pretraining output.

        specific: ``(V,)`` bool, the words that keep a language-specific
        embedding (:func:`frequent_words`; None or all False for LA);
        specific_vectors: ``(V, specific_dim)`` PCA-reduced FastText of the joint
        vocabulary (None: random). Every other word but padding must have a
        latent token in ``assignment`` (run ``compact`` with ``~specific``).
        """
        v = len(vocab)
        if specific is None:
            specific = torch.zeros(v, dtype=torch.bool)
        specific = specific.clone()
        specific[0] = False
        if assignment.word_to_token.shape != (v,):
            raise ValueError(f"assignment covers {assignment.word_to_token.shape[0]} words, vocabulary has {v}")
        needs_token = torch.ones(v, dtype=torch.bool)
        needs_token[0] = False
        needs_token &= ~specific
        missing = (needs_token & (assignment.word_to_token < 0)).nonzero(as_tuple=True)[0]
        if len(missing):
            lang, tok = vocab.itos[int(missing[0])]
            raise ValueError(
                f"{len(missing)} words have neither a latent token nor a specific embedding, e.g. ({lang}, {tok})"
            )
        latent_of_word = torch.where(
            needs_token, assignment.word_to_token, torch.full_like(specific, -1, dtype=torch.long)
        )
        rows = specific.nonzero(as_tuple=True)[0]
        specific_of_word = torch.full((v,), -1, dtype=torch.long)
        specific_of_word[rows] = torch.arange(len(rows))
        config = HEMConfig(
            vocab_size=v,
            image_dim=image_dim,
            n_langs=len(vocab.langs),
            n_latent=assignment.n_tokens,
            n_specific=len(rows),
            **options,
        )
        vectors = None
        if specific_vectors is not None and len(rows):
            if specific_vectors.shape[0] != v:
                raise ValueError(f"specific_vectors has {specific_vectors.shape[0]} rows, vocabulary has {v}")
            vectors = specific_vectors[rows]
        return cls(config, latent_of_word, specific_of_word, assignment.embeddings, vectors)

    def word_features(self, tokens: Tensor, langs: Tensor) -> Tensor:
        """``(S, T)``, ``(S,)`` → ``(S, T, universal_dim)``: latent embedding or
        language FC of the specific embedding; zero at padding."""
        latent = self.latent_of_word[tokens].reshape(-1)  # (S*T,)
        has_latent = latent >= 0
        n_langs = len(self.language_fc)
        if self.specific_embeddings is not None:
            slot = self.specific_of_word[tokens].reshape(-1)  # (S*T,)
            has_slot = slot >= 0
            word_lang = langs.unsqueeze(1).expand_as(tokens).reshape(-1)  # (S*T,)
            # specific words per language; ``n_langs`` counts the non-specific positions
            # (a count by scatter: bincount reads the largest index back to size its output)
            lang_of_slot = torch.where(has_slot, word_lang, n_langs)
            per_lang = torch.zeros(n_langs + 1, dtype=torch.long, device=tokens.device)
            per_lang = per_lang.scatter_add_(0, lang_of_slot, torch.ones_like(lang_of_slot))
            sizes = torch.cat([has_latent.sum().unsqueeze(0), per_lang[:n_langs]])
        else:
            sizes = has_latent.sum().unsqueeze(0)
        # every size the gathers below need, read back at once: on CUDA each read (a boolean
        # index, a nonzero, a count) makes the host wait for the device, and a SMALR(10) step
        # made 160 such waits with one per language and per index
        n_latent, *counts = sizes.tolist()
        seen = torch.nonzero_static(has_latent, size=n_latent).squeeze(1)  # no read-back: the size is known
        out = self.latent_embeddings.weight.new_zeros(latent.shape[0], self.config.universal_dim)
        out = out.index_copy(0, seen, self.latent_embeddings(latent[seen])).view(*tokens.shape, -1)
        if self.specific_embeddings is not None:
            at = torch.nonzero_static(has_slot, size=sum(counts)).squeeze(1)  # (N,)
            # one gather from the table for all languages: a gather per language back-propagated a
            # table-sized gradient per language (20 zero-filled copies of the table a SMALR(10) step;
            # with one gather its epoch on the default data took 2.70 s instead of 3.01)
            vectors = self.specific_embeddings(slot[at])  # (N, specific_dim)
            # the words grouped by language (in their order within each): each language's FC on its
            # rows, as one slice each
            order = torch.argsort(word_lang[at], stable=True)
            groups = vectors[order].split(counts)
            done = [self.language_fc[lang](rows) for lang, rows in enumerate(groups) if counts[lang]]
            if done:
                projected = torch.cat(done)  # bfloat16 under autocast
                flat = out.reshape(-1, out.shape[-1])
                out = flat.index_copy(0, at[order], projected.to(out.dtype)).view_as(out)
        return out

    def universal_parameters(self) -> list[nn.Parameter]:
        params = [self.latent_embeddings.weight]
        if self.specific_embeddings is not None:
            params += [self.specific_embeddings.weight, *self.language_fc.parameters()]
        return params


class LanguageAgnostic(HEM):
    """LA (SMALR §4): only latent tokens, no language-specific parameters."""

    family = "la"

    def __init__(
        self,
        config: HEMConfig,
        latent_of_word: Tensor | None = None,
        specific_of_word: Tensor | None = None,
        latent_vectors: Tensor | None = None,
        specific_vectors: Tensor | None = None,
    ):
        if config.n_specific:
            raise ValueError(f"LanguageAgnostic: n_specific must be 0, got {config.n_specific}")
        super().__init__(config, latent_of_word, specific_of_word, latent_vectors, specific_vectors)


class SMALR(HEM):
    """SMALR (§3): HEM + MCLM (MASK feature and the two shared FC heads)."""

    family = "smalr"
    with_mclm = True
