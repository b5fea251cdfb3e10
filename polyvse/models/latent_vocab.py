"""SMALR's latent shared vocabulary and its pretraining (Burns et al. ECCV 2020, §3.1).

Every word (of any language) is hard-assigned to one language-agnostic latent
token by a scorer predicted from the word's FastText features; a sentence is
the mean of its words' latent embeddings; pretraining learns the latent
embeddings and the scorer with the sentence triplet loss of eq. (1) (cosine
distance, m = 0.05, top-10 most violated constraints, positives = sentences of
the same image in any language: :func:`polyvse.losses.triplet.neighbourhood_triplet`).

Scorer. "Sentence representations obtained by feeding FastText embeddings into
a fully connected layer" predict the mapping: a word's FastText vector goes
through one FC into a query space, and its score for latent token k is the dot
product with a learned key of token k (``scores = FC(x) · Kᵀ / τ``). Keys are
separate from the latent embeddings, so the scorer is a function of FastText
features alone and is dropped after pretraining.

Exploration (§3.1): "instead of deterministically mapping to the latent token
which achieves the best score, we randomly choose from the top M scoring
tokens with probability p" (p = 0.2, M = 20). This is drawn independently for
every word occurrence, during training only; evaluation and the final
assignment take the argmax.

How the scorer learns. The hard choice has no gradient. We use the
straight-through estimator (Bengio et al. 2013; the "straight-through" variant
of Jang et al. 2017): a word's feature is

    e_chosen + Σ_k (π_k − stopgrad(π_k)) e_k,   π = softmax(scores),

whose value is exactly the chosen latent embedding, whose gradient reaches
the chosen embedding only (as with a plain lookup), and whose gradient reaches
the scores as if the output were the soft attention Σ π_k e_k: a token's score
rises when its embedding points along the descent direction of the loss. The
alternative of scaling the chosen embedding by its probability only tells the
scorer whether to make the chosen token more or less confident, never which
other token would be better, so it was not used.

Output (:meth:`LatentVocabulary.compact`): the frozen word → token assignment
(argmax) for the words that need a latent token, and the latent embeddings of
the tokens that are used, renumbered; "not all latent tokens are used at the
end of pretraining; these are dropped when training the full model".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from polyvse.models.universal import masked_mean
from polyvse.text.encoded import valid_mask


STRAIGHT_THROUGH = ("softmax", "top_m")
SCORERS = ("dot", "cosine")


@dataclass
class LatentVocabularyConfig:
    """n_tokens: latent vocabulary size (40K in the paper); dim: latent
    embedding size = the universal embedding (512); explore_p, explore_m: p, M;
    straight_through: the soft attention the scorer's gradient follows, ``softmax``
    over all n_tokens, or ``top_m`` over each word's M best tokens only (memory
    ``words x M`` instead of ``words x n_tokens``: see :meth:`LatentVocabulary.forward`);
    scorer: ``dot``, ``FC(x) · K_k / τ`` (the FC with a bias, as the paper's "fully connected
    layer" reads), or ``cosine``, ``cos(FC(x), K_k) · cosine_scale / τ`` with an FC without bias.

    Why ``cosine`` exists: with ``dot`` both the scale of the scores and a per-token offset common
    to every word (the bias's component along a key) are free parameters, so the straight-through
    gradient, which pushes every word of a sentence along the same direction (a mean-pooled
    sentence gives each of its words the same gradient), can make one token the argmax of
    nearly every word: on the default data at the paper's settings (temperature 1, no usage term)
    one token ends up with 70 % of the words. Without the bias the queries of a language's
    centred vectors average to zero, so no token is preferred by every word; with unit queries
    and keys a key wins the words nearest to it, not the words of the largest norm."""

    vocab_size: int
    word_dim: int = 300
    n_tokens: int = 40000
    dim: int = 512
    scorer_dim: int = 300  # the FastText size: the scores are bilinear in x, a wider query space adds none
    explore_p: float = 0.2
    explore_m: int = 20
    temperature: float = 1.0
    straight_through: str = "softmax"
    scorer: str = "dot"
    cosine_scale: float = 30.0

    def __post_init__(self) -> None:
        if self.straight_through not in STRAIGHT_THROUGH:
            raise ValueError(f"straight_through must be one of {STRAIGHT_THROUGH}, got {self.straight_through!r}")
        if self.scorer not in SCORERS:
            raise ValueError(f"scorer must be one of {SCORERS}, got {self.scorer!r}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class LatentAssignment:
    """The result of pretraining that the full model starts from.

    word_to_token: ``(V,)`` long, the latent token of every word of the joint
    vocabulary, −1 where a word has none (padding, or words that keep a
    language-specific embedding in HEM). embeddings: ``(N_used, dim)`` initial
    latent embeddings, row i for token i. source_tokens: ``(N_used,)`` the
    token ids before unused tokens were dropped.
    """

    word_to_token: Tensor
    embeddings: Tensor
    source_tokens: Tensor

    @property
    def n_tokens(self) -> int:
        return int(self.embeddings.shape[0])

    def as_dict(self) -> dict:
        return {"word_to_token": self.word_to_token, "embeddings": self.embeddings, "source_tokens": self.source_tokens}

    @classmethod
    def from_dict(cls, saved: dict) -> "LatentAssignment":
        return cls(saved["word_to_token"].long(), saved["embeddings"].float(), saved["source_tokens"].long())


def explore_choice(
    scores: Tensor, p: float, m: int, rows: Tensor | None = None, generator: torch.Generator | None = None
) -> Tensor:
    """Hard assignment with exploration (SMALR §3.1).

    scores ``(W, N)``; rows ``(R,)`` the score row of each choice (default: one
    choice per row). Each choice is the argmax of its row, except that with
    probability ``p`` it is drawn uniformly from the row's top ``m`` tokens.
    Returns ``(R,)`` token ids.
    """
    if rows is None:
        rows = torch.arange(scores.shape[0], device=scores.device)
    choice = scores.argmax(dim=1)[rows]
    if p <= 0.0:
        return choice
    top = scores.topk(min(m, scores.shape[1]), dim=1).indices  # (W, M)
    draw_on = generator.device if generator is not None else scores.device
    explore = (torch.rand(rows.shape[0], device=draw_on, generator=generator) < p).to(scores.device)
    pick = torch.randint(top.shape[1], (rows.shape[0],), device=draw_on, generator=generator).to(scores.device)
    return torch.where(explore, top[rows, pick], choice)


class LatentVocabulary(nn.Module):
    """The pretraining model: words → latent tokens → sentence = mean of latent embeddings.

    ``word_vectors``: ``(vocab_size, word_dim)`` FastText features of the joint
    vocabulary, fixed inputs (a buffer); None draws random vectors (useful
    before FastText is available, and in tests).
    """

    def __init__(self, config: LatentVocabularyConfig, word_vectors: Tensor | None = None):
        super().__init__()
        self.config = config
        if word_vectors is None:
            word_vectors = torch.randn(config.vocab_size, config.word_dim)
        if tuple(word_vectors.shape) != (config.vocab_size, config.word_dim):
            raise ValueError(
                f"LatentVocabulary(word_vectors): shape {tuple(word_vectors.shape)}, expected "
                f"({config.vocab_size}, {config.word_dim})"
            )
        # neither copied nor in the state dict (checkpoints, the best epoch's copy): a fixed input
        # of 238 MB at Multi30K's size with MT (198K words x 300)
        self.register_buffer("word_vectors", word_vectors.detach().float(), persistent=False)
        self.query = nn.Linear(config.word_dim, config.scorer_dim, bias=config.scorer == "dot")
        self.keys = nn.Parameter(torch.randn(config.n_tokens, config.scorer_dim) / config.scorer_dim**0.5)
        self.embeddings = nn.Parameter(torch.randn(config.n_tokens, config.dim) / config.dim**0.5)
        self.generator: torch.Generator | None = None  # exploration draws; None → torch's global RNG

    def _queries(self, word_ids: Tensor) -> Tensor:
        """``(W,)`` word ids → ``(W, scorer_dim)`` queries (unit vectors for the cosine scorer)."""
        q = self.query(self.word_vectors[word_ids])
        return nn.functional.normalize(q, dim=-1) if self.config.scorer == "cosine" else q

    def _keys(self) -> Tensor:
        """``(n_tokens, scorer_dim)`` keys (unit vectors for the cosine scorer)."""
        return nn.functional.normalize(self.keys, dim=-1) if self.config.scorer == "cosine" else self.keys

    def _scaled(self, products: Tensor) -> Tensor:
        """Query · key products → scores: times cosine_scale (cosine), over the temperature."""
        if self.config.scorer == "cosine":
            products = products * self.config.cosine_scale
        return products / self.config.temperature

    def scores(self, word_ids: Tensor) -> Tensor:
        """``(W,)`` word ids → ``(W, n_tokens)`` assignment scores."""
        return self._scaled(self._queries(word_ids) @ self._keys().T)

    def forward(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        """``(S, T)`` token ids, ``(S,)`` lengths → ``(S, dim)`` sentence vectors.

        Each word occurrence is assigned (with exploration when training) and
        contributes its latent embedding; gradients reach the scorer through the
        straight-through estimator described in the module docstring.
        """
        return self._sentences(tokens, lengths, usage=False)[0]

    def sentences_and_usage(self, tokens: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """:meth:`forward`'s sentences ``(S, dim)`` and the batch's mean assignment distribution
        ``(n_tokens,)``: the mean over its distinct words of π (``softmax``: over every token;
        ``top_m``: over each word's M best, zero elsewhere), with its gradient — what a usage
        (load-balancing) term reads."""
        sentences, usage = self._sentences(tokens, lengths, usage=True)
        assert usage is not None
        return sentences, usage

    def _sentences(self, tokens: Tensor, lengths: Tensor, usage: bool) -> tuple[Tensor, Tensor | None]:
        lengths = lengths.to(tokens.device)
        valid = valid_mask(lengths, tokens.shape[1])
        words, occurrence = torch.unique(tokens[valid], return_inverse=True)  # score each word once
        p = self.config.explore_p if self.training else 0.0
        if self.config.straight_through == "top_m":
            chosen, straight_through, top, probs = self._top_m(words, occurrence, p)
            mean_usage = None
            if usage:  # the forward's own top-M attention: no second ranking against every token
                mean_usage = probs.new_zeros(self.config.n_tokens).index_add(0, top.reshape(-1), probs.reshape(-1))
                mean_usage = mean_usage / max(1, len(words))
        else:
            scores = self.scores(words)
            chosen = explore_choice(scores, p, self.config.explore_m, occurrence, self.generator)
            probs = torch.softmax(scores, dim=1)
            # zero in value; carries the soft-attention gradient to the scores only
            # (its gradient into the embeddings, (π − π)ᵀg, is exactly zero: not computed)
            straight_through = (probs - probs.detach()) @ self.embeddings.detach()  # (W, dim)
            # π̄ from a scoring of its own, as the usage term was first written: the same value as
            # probs.mean(0), but its gradient summed in another order, and the default config's
            # published pretraining (docs/default_run) rests on this one; at the default's 1,024
            # tokens the second scoring costs little (top_m, for 40K, reuses its top-M attention)
            mean_usage = torch.softmax(self.scores(words), dim=1).mean(dim=0) if usage else None
        features = self.embeddings[chosen] + straight_through[occurrence]
        x = features.new_zeros(*tokens.shape, self.config.dim)
        x[valid] = features
        return masked_mean(x, lengths), mean_usage

    def _top_m(
        self, words: Tensor, occurrence: Tensor, p: float, chunk: int = 512
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The ``top_m`` straight-through: each word's M best tokens are found without a graph, in
        chunks of words; the scores, the soft attention and its gradient live on those M only.
        The choice is the one ``softmax`` makes (argmax, or with probability p a uniform draw from
        the same top M, from the same random stream; up to float rounding in near-ties); the gradient is that of a softmax renormalised
        over the top M, which equals ``softmax``'s when M = n_tokens.

        Returns the chosen token of every occurrence ``(R,)``, the zero-valued gradient carrier
        ``(W, dim)``, and each word's M best tokens ``(W, M)`` with their soft attention ``(W, M)``.
        Chunks of 512 words (:func:`_chunk_products`): a 4,096-word chunk's scores against 40K
        tokens held 655 MB for no gain in speed."""
        m = min(self.config.explore_m, self.config.n_tokens)
        query, keys = self._queries(words), self._keys()  # (W, scorer_dim), (n_tokens, scorer_dim)
        with torch.no_grad():  # the ranking needs no scale (> 0): one matmul a chunk, then top M
            top = torch.cat([products.topk(m, dim=1).indices for products in _chunk_products(query, keys, chunk)])
        top_scores = self._scaled(_PairScores.apply(query, keys, top, chunk))  # (W, M), best first
        column = explore_choice(top_scores.detach(), p, m, occurrence, self.generator)
        chosen = top[occurrence, column]
        probs = torch.softmax(top_scores, dim=1)
        straight_through = _ZeroCarrier.apply(probs, self.embeddings.detach(), top, chunk)  # (W, dim)
        return chosen, straight_through, top, probs

    @torch.no_grad()
    def assign(self, word_ids: Tensor, chunk: int = 512) -> Tensor:
        """The final (argmax) token of each word: ``(W,) -> (W,)``."""
        out = []
        for products in _chunk_products(self._queries(word_ids), self._keys(), chunk):
            if self.config.scorer == "cosine":  # in place, the ops of _scaled: the same scores
                products.mul_(self.config.cosine_scale)
            out.append(products.div_(self.config.temperature).argmax(dim=1))
        return torch.cat(out) if out else word_ids.new_zeros(0)

    @torch.no_grad()
    def compact(self, words: Tensor | None = None) -> LatentAssignment:
        """Freeze the assignment of ``words`` (``(V,)`` bool; default every word
        but padding) and keep only the latent tokens they use.

        Returns a :class:`LatentAssignment` whose ``word_to_token`` indexes the
        kept tokens 0..N_used−1 and is −1 elsewhere.
        """
        vocab_size = self.config.vocab_size
        device = self.embeddings.device
        if words is None:
            words = torch.ones(vocab_size, dtype=torch.bool, device=device)
        words = words.to(device).clone()
        if words.shape != (vocab_size,):
            raise ValueError(f"compact(words): shape {tuple(words.shape)}, expected ({vocab_size},)")
        words[0] = False  # padding has no token
        ids = words.nonzero(as_tuple=True)[0]
        token = self.assign(ids)
        used, renumbered = torch.unique(token, return_inverse=True)
        word_to_token = torch.full((vocab_size,), -1, dtype=torch.long, device=device)
        word_to_token[ids] = renumbered
        return LatentAssignment(word_to_token.cpu(), self.embeddings[used].detach().cpu().clone(), used.cpu())


def _chunk_products(query: Tensor, keys: Tensor, chunk: int) -> Iterator[Tensor]:
    """``query @ keys.T`` ``(W, N)`` as ``(≤ chunk, N)`` blocks of one buffer, reused: a fresh
    ``(512, 40K)`` block a chunk (82 MB) is a fresh mmap, and its page faults cost a third of
    the pretraining step's time at 40K tokens. A block is valid until the next is yielded."""
    buffer = query.new_empty(min(chunk, len(query)), keys.shape[0])
    keys_t = keys.T
    for i in range(0, len(query), chunk):
        rows = query[i : i + chunk]
        yield torch.mm(rows, keys_t, out=buffer[: len(rows)])


class _PairScores(torch.autograd.Function):
    """``query`` ``(W, S)`` · ``keys`` ``(N, S)`` at each word's pairs ``top`` ``(W, M)`` → ``(W, M)``,
    forward and backward in chunks of words: the ``(W, M, S)`` gather of the keys (134 MB a step
    at the scale config, and as much again for its gradient) is never held whole."""

    @staticmethod
    def forward(ctx, query: Tensor, keys: Tensor, top: Tensor, chunk: int) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(query, keys, top)
        ctx.chunk = chunk
        parts = [
            torch.bmm(keys[top[i : i + chunk]], query[i : i + chunk].unsqueeze(-1)).squeeze(-1)
            for i in range(0, len(top), chunk)
        ]
        return torch.cat(parts) if parts else query.new_zeros(top.shape)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None, None]:  # type: ignore[override]
        query, keys, top = ctx.saved_tensors
        c = ctx.chunk
        grad_query = grad_keys = None
        if ctx.needs_input_grad[0]:  # Σ_m g_wm k_top(w,m)
            grad_query = query.new_zeros(query.shape)
            for i in range(0, len(top), c):
                grad_query[i : i + c] = torch.bmm(grad[i : i + c].unsqueeze(1), keys[top[i : i + c]]).squeeze(1)
        if ctx.needs_input_grad[1]:  # k_n gets Σ of g_wm q_w over the pairs (w, m) that rank n
            grad_keys = keys.new_zeros(keys.shape)
            for i in range(0, len(top), c):
                pairs = grad[i : i + c].unsqueeze(-1) * query[i : i + c].unsqueeze(1)  # (c, M, S)
                grad_keys.index_add_(0, top[i : i + c].reshape(-1), pairs.reshape(-1, query.shape[1]))
        return grad_query, grad_keys, None, None


class _ZeroCarrier(torch.autograd.Function):
    """The straight-through carrier ``Σ_m (π_wm − sg(π_wm)) e_top(w,m)`` of ``top_m``: zero in value
    ``(W, dim)``; its gradient with respect to π ``(W, M)`` is ``e_top(w,m) · g_w``, and with
    respect to the embeddings exactly zero (none is computed). In chunks of words: the
    ``(W, M, dim)`` gather of the embeddings (229 MB a step at the scale config) is never held
    whole, and none is made in the forward pass or in evaluation."""

    @staticmethod
    def forward(ctx, probs: Tensor, embeddings: Tensor, top: Tensor, chunk: int) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(embeddings, top)
        ctx.chunk = chunk
        return probs.new_zeros(probs.shape[0], embeddings.shape[1])

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None, None]:  # type: ignore[override]
        embeddings, top = ctx.saved_tensors
        c = ctx.chunk
        grad_probs = grad.new_zeros(top.shape)
        for i in range(0, len(top), c):
            grad_probs[i : i + c] = torch.bmm(embeddings[top[i : i + c]], grad[i : i + c].unsqueeze(-1)).squeeze(-1)
        return grad_probs, None, None, None
