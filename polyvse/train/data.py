"""The image-grouped (optionally language-balanced) batch sampler, and batches of
encoded captions (:mod:`polyvse.text.encoded`) with their images."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

import numpy as np
import torch
from torch import Tensor

from polyvse.text.encoded import EncodedCaptions, encode_captions
from polyvse.train.neighbours import ImageNeighbours, neighbour_count

__all__ = [
    "EncodedCaptions",
    "encode_captions",
    "EveryLanguageBatches",
    "ImageGroupedBatches",
    "batch_sampler",
    "collate",
    "language_shares",
    "row_quotas",
]


T = TypeVar("T")

LANGUAGE_BALANCES = ("balanced", "natural")
"""The named values of ``training.language_balance``; a mapping language → share is the third form."""

DEFAULT_LANGUAGE_BALANCE = "balanced"
"""``training.language_balance`` where a settings mapping lacks it (config/schema.yaml's default)."""


def language_shares(
    balance: str | Mapping[str, float], langs: Sequence[str], key: str = "training.language_balance"
) -> np.ndarray | None:
    """Target share of caption rows of each language of ``langs`` in a batch.

    ``balance``: ``natural`` (None: no target, images drawn uniformly),
    ``balanced`` (equal shares) or a mapping language → positive weight, read
    for ``langs`` and normalised to sum 1 (weights of other languages are
    ignored, so one mapping serves variants on subsets of its languages).
    Returns ``(len(langs),)`` float or None. Raises ValueError naming ``key``.
    """
    if isinstance(balance, str):
        if balance not in LANGUAGE_BALANCES:
            raise ValueError(
                f"{key}: {balance!r} is neither {' nor '.join(LANGUAGE_BALANCES)} nor a mapping language -> share"
            )
        if balance == "natural":
            return None
        return np.full(len(langs), 1.0 / max(1, len(langs)))
    if not isinstance(balance, Mapping):
        raise ValueError(
            f"{key}: expected balanced, natural or a mapping language -> share, got {type(balance).__name__}"
        )
    missing = [l for l in langs if l not in balance]
    if missing:
        raise ValueError(
            f"{key}: no share for training language(s) {', '.join(missing)} "
            f"(the mapping names {', '.join(map(str, balance)) or 'none'})"
        )
    weights = []
    for l in langs:
        w = balance[l]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not np.isfinite(w) or w <= 0:
            raise ValueError(f"{key}.{l}: a share must be a positive number, got {w!r}")
        weights.append(float(w))
    weights_a = np.asarray(weights)
    return weights_a / weights_a.sum()


def caption_shares(
    captions: EncodedCaptions, balance: str | Mapping[str, float], key: str = "training.language_balance"
) -> np.ndarray | None:
    """:func:`language_shares` over the languages the rows of ``captions`` hold, as
    ``(len(captions.langs),)`` (0 for a language without rows), or None (``natural``)."""
    present = sorted(set(captions.lang.tolist()))
    shares = language_shares(balance, [captions.langs[i] for i in present], key)
    if shares is None:
        return None
    full = np.zeros(len(captions.langs))
    full[present] = shares
    return full


def row_quotas(shares: np.ndarray, total: int) -> np.ndarray:
    """``total`` rows split by ``shares`` with the largest-remainder rounding
    (ties to the lower index): ``(L,)`` int summing to ``total``."""
    exact = shares * total
    quotas = np.floor(exact).astype(np.int64)
    left = total - int(quotas.sum())
    order = np.argsort(-(exact - quotas), kind="stable")
    quotas[order[:left]] += 1
    return quotas


class ImageGroupedBatches:
    """Batches of ``images_per_batch`` distinct images × ``captions_per_image`` sentences,
    optionally in given language shares.

    MULE's public code builds batches of 450 images × 2 captions: every batch
    then holds sentence pairs of the same image, which the neighbourhood
    constraints need. An epoch covers every caption about once: it has
    ``ceil(S / (images_per_batch * captions_per_image))`` batches.

    ``shares`` (``(L,)``, one per language index of ``lang``, summing to 1;
    see :func:`language_shares`) balances the languages: each batch's
    ``R = images_per_batch × captions_per_image`` caption rows hold language l
    in the share ``shares[l]`` (quotas by :func:`row_quotas`). MULE's and
    SMALR's multilingual losses compare languages inside a batch (MULE eq. 1
    and 3, SMALR eq. 3, the language classifiers), and MULE's public code feeds
    every language the same number of sentences a batch; drawing images
    uniformly instead lets the languages of few images (MSCOCO's ja ×5 on ~20 %
    and zh ×1 on ~15 % of the images) rarely meet. The images are stratified
    by language: each language has its own shuffled pool of the images
    captioned in it, reshuffled when used up. The batch is filled one image at
    a time: the language furthest below its quota draws its next image not yet
    in the batch; the image's first caption is in that language, each further
    one (up to ``captions_per_image``) in the image's language furthest below
    its quota, so same-image pairs, across languages too, survive. An image
    with no caption left in a language below quota gives fewer captions, so
    every language meets its quota exactly and the batch may hold a few more
    than ``images_per_batch`` images (MSCOCO-like, 2 per image: about one in
    nine images comes alone). A language stops drawing when its whole pool is
    in the batch. Where every image has every language (Multi30K-like) the
    batches keep ``images_per_batch`` images × ``captions_per_image``.
    ``shares=None`` is the natural, uniform draw of images.
    """

    def __init__(
        self,
        image_row: Tensor,
        images_per_batch: int,
        captions_per_image: int = 2,
        lang: Tensor | None = None,
        shares: np.ndarray | None = None,
    ):
        self.images_per_batch = images_per_batch
        self.captions_per_image = captions_per_image
        rows = image_row.numpy()
        order = np.argsort(rows, kind="stable")
        uniq, starts = np.unique(rows[order], return_index=True)
        self.images = uniq
        self.caption_rows: list[np.ndarray] = np.split(order, starts[1:])
        self.n_captions = len(rows)
        self.shares = None if shares is None else np.asarray(shares, dtype=np.float64)
        if self.shares is not None:
            if lang is None or len(lang) != len(rows):
                raise ValueError("language balancing needs the language of every caption row")
            if np.any(self.shares < 0) or not np.isclose(self.shares.sum(), 1.0):
                raise ValueError(f"language shares must be non-negative and sum to 1, got {self.shares.tolist()}")
            lang_np = lang.numpy()
            n_langs = len(self.shares)
            if len(lang_np) and int(lang_np.max()) >= n_langs:
                raise ValueError(f"caption language index {int(lang_np.max())} has no share ({n_langs} shares given)")
            # per image, its caption rows of each language; per language, the images it captions
            self.rows_by_lang: list[dict[int, np.ndarray]] = [
                {l: caps[lang_np[caps] == l] for l in np.unique(lang_np[caps]).tolist()} for caps in self.caption_rows
            ]
            self.pools = [
                np.array([i for i, by in enumerate(self.rows_by_lang) if l in by], dtype=np.int64)
                for l in range(n_langs)
            ]

    @classmethod
    def for_captions(
        cls,
        captions: EncodedCaptions,
        images_per_batch: int,
        captions_per_image: int = 2,
        balance: str | Mapping[str, float] = DEFAULT_LANGUAGE_BALANCE,
        key: str = "training.language_balance",
    ) -> "ImageGroupedBatches":
        """The sampler of an encoded caption set with ``balance`` (config
        ``training.language_balance``) over the languages its rows hold."""
        shares = caption_shares(captions, balance, key)
        return cls(captions.image_row, images_per_batch, captions_per_image, captions.lang, shares)

    def __len__(self) -> int:
        per_batch = self.images_per_batch * self.captions_per_image
        return max(1, -(-self.n_captions // per_batch))

    def epoch(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Yield caption row indices, one array per batch."""
        if self.shares is not None:
            yield from self._balanced_epoch(rng)
            return
        n_img = len(self.images)
        perm = rng.permutation(n_img)
        cursor = 0
        for _ in range(len(self)):
            if cursor + self.images_per_batch > n_img:
                perm, cursor = rng.permutation(n_img), 0
            chosen = perm[cursor : cursor + self.images_per_batch]
            cursor += self.images_per_batch
            batch = []
            for img in chosen:
                caps = self.caption_rows[img]
                k = min(self.captions_per_image, len(caps))
                batch.append(rng.choice(caps, size=k, replace=False))
            yield np.concatenate(batch)

    def _balanced_epoch(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        assert self.shares is not None
        # Python ints and lists in the loop: numpy scalars cost ~10x more per comparison, and at
        # ten languages x 450 images a batch the loop's bookkeeping was half of its 18 ms (the
        # random draws, which must stay as they are for the batches to stay the same, the rest)
        quotas = row_quotas(self.shares, self.images_per_batch * self.captions_per_image).tolist()
        active = [l for l in range(len(self.shares)) if self.shares[l] > 0 and len(self.pools[l])]
        perms = {l: rng.permutation(self.pools[l]).tolist() for l in active}
        cursors = dict.fromkeys(active, 0)
        by_lang = [list(rows.items()) for rows in self.rows_by_lang]

        def next_image(l: int, taken: set[int]) -> int | None:
            # two passes over the pool cover one whole permutation whatever the cursor
            for _ in range(2 * len(perms[l])):
                if cursors[l] == len(perms[l]):
                    perms[l], cursors[l] = rng.permutation(self.pools[l]).tolist(), 0
                img = perms[l][cursors[l]]
                cursors[l] += 1
                if img not in taken:
                    return img
            return None

        total = sum(quotas)
        for _ in range(len(self)):
            counts = [0] * len(quotas)
            taken: set[int] = set()
            open_langs = [l for l in active if quotas[l] > 0]
            batch: list[int] = []
            while len(batch) < total and open_langs:
                lang = max(open_langs, key=lambda l: (quotas[l] - counts[l], -l))
                if counts[lang] >= quotas[lang]:
                    break  # every language that can still draw has its quota
                img = next_image(lang, taken)
                if img is None:
                    open_langs.remove(lang)
                    continue
                taken.add(img)
                left = {l: rng.permutation(r).tolist() for l, r in by_lang[img]}
                pick = lang
                for _ in range(self.captions_per_image):
                    batch.append(left[pick].pop())
                    counts[pick] += 1
                    # the image's next caption: its language furthest below quota, if any is
                    wanting = [l for l in left if left[l] and counts[l] < quotas[l]]
                    if not wanting:
                        break
                    pick = max(wanting, key=lambda l: (quotas[l] - counts[l], -l))
            yield np.asarray(batch, dtype=np.int64)


class EveryLanguageBatches:
    """Batches of ``images_per_batch`` distinct images, each with one caption in every training
    language it is captioned in (and more of its captions, its languages in turn, until it gives
    ``captions_per_image``).

    With many languages a batch of :class:`ImageGroupedBatches` splits its rows between them: at
    ten languages, 16 images × 2 captions give each language 3–4 rows, so MULE's same-language
    triplet (MULE eq. 3) ranks an anchor against 2–3 negatives. MULE's public code instead feeds
    every language the same number of sentences of a batch of 450 images. Here every language
    of an image speaks of it, so each language's sub-batch holds every image of the batch
    captioned in that language: at ten languages ×16 images, 16 positives and 15 negatives a
    language, and the neighbourhood constraints (MULE eq. 1) get ten sentences of an image.

    ``shares`` (``(L,)`` or None, :func:`language_shares`) picks the images: the language
    furthest below its share of the batch's rows so far draws the next image from its own
    shuffled pool (MULE §"Experiments": images of the rarer languages, MSCOCO's ja and zh, are
    drawn as often as the English-only ones); None draws images uniformly. An epoch has
    ``ceil(I / images_per_batch)`` batches, I the number of captioned images.

    ``neighbours`` with ``neighbour_share`` > 0 (:mod:`polyvse.train.neighbours`): after a batch's
    first image, :func:`~polyvse.train.neighbours.neighbour_count` of its images are each the image
    most like the first among those the drawing language's pool has not yet given in its pass, the
    rest drawn as before; every image still comes once a pass. 0 draws exactly as without.
    """

    def __init__(
        self,
        image_row: Tensor,
        lang: Tensor,
        images_per_batch: int,
        captions_per_image: int = 2,
        shares: np.ndarray | None = None,
        neighbours: ImageNeighbours | None = None,
        neighbour_share: float = 0.0,
    ):
        if len(lang) != len(image_row):
            raise ValueError(f"{len(lang)} caption languages for {len(image_row)} caption rows")
        neighbour_count(neighbour_share, images_per_batch)  # a share outside [0, 1] fails here
        if neighbour_share > 0 and neighbours is None:
            raise ValueError("training.neighbour_share > 0 needs the images' features (neighbours)")
        self.neighbours = neighbours if neighbour_share > 0 else None
        self.neighbour_share = float(neighbour_share)
        self.images_per_batch = images_per_batch
        self.captions_per_image = captions_per_image
        rows, lang_np = image_row.numpy(), lang.numpy()
        order = np.argsort(rows, kind="stable")
        uniq, starts = np.unique(rows[order], return_index=True)
        self.images = uniq
        n_langs = int(lang_np.max()) + 1 if len(lang_np) else 0
        self.shares = None if shares is None else np.asarray(shares, dtype=np.float64)
        if self.shares is not None:
            if np.any(self.shares < 0) or not np.isclose(self.shares.sum(), 1.0):
                raise ValueError(f"language shares must be non-negative and sum to 1, got {self.shares.tolist()}")
            if n_langs > len(self.shares):
                raise ValueError(f"caption language index {n_langs - 1} has no share ({len(self.shares)} shares given)")
        self.lang = lang_np.tolist()
        # per image (an index into self.images), its caption rows of each of its languages
        by_image = np.split(order, starts[1:])
        self.rows_by_lang = [[caps[lang_np[caps] == l] for l in np.unique(lang_np[caps])] for caps in by_image]
        # per language, the images captioned in it
        self.pools = [
            np.array([i for i, caps in enumerate(by_image) if np.any(lang_np[caps] == l)], dtype=np.int64)
            for l in range(n_langs)
        ]

    @classmethod
    def for_captions(
        cls,
        captions: EncodedCaptions,
        images_per_batch: int,
        captions_per_image: int = 2,
        balance: str | Mapping[str, float] = DEFAULT_LANGUAGE_BALANCE,
        key: str = "training.language_balance",
        neighbours: ImageNeighbours | None = None,
        neighbour_share: float = 0.0,
    ) -> "EveryLanguageBatches":
        """The sampler of an encoded caption set, its images drawn by ``balance``."""
        shares = caption_shares(captions, balance, key)
        return cls(
            captions.image_row, captions.lang, images_per_batch, captions_per_image, shares, neighbours, neighbour_share
        )

    def __len__(self) -> int:
        return max(1, -(-len(self.images) // self.images_per_batch))

    def image_captions(self, image: int, rng: np.random.Generator) -> list[int]:
        """Caption rows of ``image`` (an index into ``images``): one in each of its languages, then
        more, its languages in turn, until ``captions_per_image`` or none is left."""
        pools = [rng.permutation(r).tolist() for r in self.rows_by_lang[image]]
        out = [caps.pop() for caps in pools]
        while len(out) < self.captions_per_image and any(pools):
            for caps in pools:
                if caps and len(out) < self.captions_per_image:
                    out.append(caps.pop())
        return out

    def epoch(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """Yield caption row indices, one array per batch."""
        if self.neighbours is not None:
            yield from self._neighbour_epoch(rng)
            return
        n_img = len(self.images)
        per_batch = min(self.images_per_batch, n_img)
        if self.shares is None:
            perm, cursor = rng.permutation(n_img), 0
            for _ in range(len(self)):
                if cursor + per_batch > n_img:
                    perm, cursor = rng.permutation(n_img), 0
                chosen = perm[cursor : cursor + per_batch].tolist()
                cursor += per_batch
                yield np.asarray([r for img in chosen for r in self.image_captions(img, rng)], dtype=np.int64)
            return
        active = [l for l in range(len(self.pools)) if self.shares[l] > 0 and len(self.pools[l])]
        perms = {l: rng.permutation(self.pools[l]).tolist() for l in active}
        cursors = dict.fromkeys(active, 0)

        def next_image(l: int, taken: set[int]) -> int | None:
            # two passes over the pool cover one whole permutation whatever the cursor
            for _ in range(2 * len(perms[l])):
                if cursors[l] == len(perms[l]):
                    perms[l], cursors[l] = rng.permutation(self.pools[l]).tolist(), 0
                img = perms[l][cursors[l]]
                cursors[l] += 1
                if img not in taken:
                    return img
            return None

        for _ in range(len(self)):
            counts = [0] * len(self.shares)
            taken: set[int] = set()
            open_langs = list(active)
            batch: list[int] = []
            while len(taken) < per_batch and open_langs:
                # the language furthest below its share of the batch's rows so far draws the next image
                total = max(1, len(batch))
                lang = min(open_langs, key=lambda l: (counts[l] / total - self.shares[l], l))
                img = next_image(lang, taken)
                if img is None:
                    open_langs.remove(lang)  # every image of its pool is in the batch
                    continue
                taken.add(img)
                rows = self.image_captions(img, rng)
                batch += rows
                for r in rows:
                    counts[self.lang[r]] += 1
            yield np.asarray(batch, dtype=np.int64)

    def _neighbour_epoch(self, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """:meth:`epoch` with neighbours: the batch's first image drawn as there, its next
        ``neighbour_count`` images the nearest to it in the drawing language's pass, the rest as there.
        Without shares every image is one pool drawn in turn."""
        assert self.neighbours is not None
        n_img = len(self.images)
        per_batch = min(self.images_per_batch, n_img)
        n_near = neighbour_count(self.neighbour_share, per_batch)
        balanced = self.shares is not None
        shares = self.shares if balanced else np.ones(1)
        pools = self.pools if balanced else [np.arange(n_img, dtype=np.int64)]
        active = [l for l in range(len(pools)) if shares[l] > 0 and len(pools[l])]
        order = {l: rng.permutation(pools[l]) for l in active}
        cursor = dict.fromkeys(active, 0)

        def draw(l: int, taken: set[int], seed: int | None) -> int | None:
            """The next image of pool ``l``'s pass not in ``taken`` (the one most like ``seed``, when
            given), moved to the pass's cursor; a fresh pass when this one has none left."""
            for _ in range(2):
                rest = order[l][cursor[l] :]
                free = np.flatnonzero(~np.isin(rest, list(taken))) if taken else np.arange(len(rest))
                if len(free):
                    j = (
                        free[0]
                        if seed is None
                        else free[self.neighbours.nearest(self.images[seed], self.images[rest[free]], 1)[0]]
                    )
                    at = cursor[l]
                    order[l][[at, at + j]] = order[l][[at + j, at]]
                    cursor[l] += 1
                    return int(order[l][at])
                order[l], cursor[l] = rng.permutation(pools[l]), 0
            return None

        for _ in range(len(self)):
            counts = [0] * len(shares)
            taken: set[int] = set()
            open_langs = list(active)
            batch: list[int] = []
            first: int | None = None
            while len(taken) < per_batch and open_langs:
                total = max(1, len(batch))
                lang = min(open_langs, key=lambda l: (counts[l] / total - shares[l], l))
                near = first is not None and len(taken) <= n_near
                img = draw(lang, taken, first if near else None)
                if img is None:
                    open_langs.remove(lang)  # every image of its pool is in the batch
                    continue
                first = img if first is None else first
                taken.add(img)
                rows = self.image_captions(img, rng)
                batch += rows
                for r in rows:
                    counts[self.lang[r] if balanced else 0] += 1
            yield np.asarray(batch, dtype=np.int64)


def batch_sampler(
    captions: EncodedCaptions,
    images_per_batch: int,
    captions_per_image: int,
    balance: str | Mapping[str, float] = DEFAULT_LANGUAGE_BALANCE,
    image_captions: str = "quota",
    neighbours: ImageNeighbours | None = None,
    neighbour_share: float = 0.0,
) -> "ImageGroupedBatches | EveryLanguageBatches":
    """The training sampler of ``training.image_captions``: ``quota`` (:class:`ImageGroupedBatches`,
    a batch's rows split between the languages by their shares) or ``every_language``
    (:class:`EveryLanguageBatches`, each image with a caption in every language it has), the latter
    with ``neighbour_share`` of a batch's images the neighbours of its first
    (:mod:`polyvse.train.neighbours`)."""
    if image_captions == "quota":
        if neighbour_share > 0:
            raise ValueError("training.neighbour_share > 0 needs training.image_captions: every_language")
        return ImageGroupedBatches.for_captions(captions, images_per_batch, captions_per_image, balance)
    if image_captions == "every_language":
        return EveryLanguageBatches.for_captions(
            captions,
            images_per_batch,
            captions_per_image,
            balance,
            neighbours=neighbours,
            neighbour_share=neighbour_share,
        )
    raise ValueError(f"training.image_captions: {image_captions!r} is neither quota nor every_language")


def collate(encoded: EncodedCaptions, rows: np.ndarray, features: Tensor, device: torch.device) -> dict[str, Tensor]:
    """A training batch: unique image features, sentences, and who describes what.

    Returns images ``(B, F)``, tokens ``(S, T)``, lengths ``(S,)``, lang ``(S,)``,
    image_of_sentence ``(S,)`` indexing the batch's images. ``features`` may already be on
    ``device`` (the training puts them there once); lengths stay on the host, where packing
    the GRU's input reads them. :func:`host_batch` then :func:`batch_on_device`.
    """
    return batch_on_device(host_batch(encoded, rows), features, device)


def host_batch(encoded: EncodedCaptions, rows: np.ndarray) -> dict[str, Tensor]:
    """The host's part of a batch, everything but the image features: tokens ``(S, T)``,
    lengths ``(S,)``, lang ``(S,)``, image_of_sentence ``(S,)`` and image_rows ``(B,)``, the
    feature rows of the batch's images. It reads only ``encoded``: a loader process can make it."""
    rows_t = torch.as_tensor(rows, dtype=torch.long)
    tokens, lengths = encoded.take(rows_t)
    uniq, inverse = torch.unique(encoded.image_row[rows_t], return_inverse=True)
    return {
        "tokens": tokens,
        "lengths": lengths,
        "lang": encoded.lang[rows_t],
        "image_of_sentence": inverse,
        "image_rows": uniq,
    }


def batch_on_device(host: Mapping[str, Tensor], features: Tensor, device: torch.device) -> dict[str, Tensor]:
    """A :func:`host_batch` as the objectives take it: its images' features gathered from
    ``features`` (on the host or already on ``device``), the rest on ``device``."""
    return {
        # from the host without waiting: a blocking copy would wait for the device's queue
        "images": to_device(features[host["image_rows"].to(features.device, non_blocking=True)], device),
        "tokens": to_device(host["tokens"], device),
        "lengths": host["lengths"],
        "lang": to_device(host["lang"], device),
        "image_of_sentence": to_device(host["image_of_sentence"], device),
    }


def device_batches(
    sampler: ImageGroupedBatches,
    encoded: EncodedCaptions,
    features: Tensor,
    device: torch.device,
    rng: np.random.Generator,
    n_batches: int,
    workers: int = 0,
) -> Iterator[dict[str, Tensor]]:
    """One epoch's first ``n_batches`` batches of ``sampler`` drawn with ``rng``, their host part made
    by ``workers`` loader processes (:func:`in_background`), each put on ``device`` as the
    objectives take it (:func:`batch_on_device`; ``features`` on the host or already on ``device``)."""

    def drawn() -> Iterator[dict[str, Tensor]]:
        for i, rows in enumerate(sampler.epoch(rng)):
            if i >= n_batches:
                return
            yield host_batch(encoded, rows)

    for host in in_background(drawn, workers):
        yield batch_on_device(host, features, device)


def in_background(make: Callable[[], Iterator[T]], workers: int) -> Iterator[T]:
    """The items of ``make()``, made by ``workers`` loader processes ahead of their use (a
    torch DataLoader over them, its results in pinned memory), or here when ``workers`` is 0.

    With 1 worker the items and their order are the same as here: the process forks with the
    caller's state, random generators included, and runs ``make()`` as this process would.
    On a GPU the sampler and the padding of a batch (tens of ms of Python a multilingual batch)
    then run beside the steps instead of between them. More workers would split ``make()``'s
    items between copies of the same state: only 0 and 1 keep the order.
    """
    if workers == 0:
        yield from make()
        return
    if workers != 1:
        raise ValueError(f"in_background: 0 or 1 loader workers keep the batches' order, got {workers}")
    loader = torch.utils.data.DataLoader(
        _Items(make),
        batch_size=None,
        num_workers=1,
        pin_memory=torch.cuda.is_available(),
        prefetch_factor=4,
        multiprocessing_context="fork",  # the worker inherits make's state; nothing is pickled
    )
    yield from loader


class _Items(torch.utils.data.IterableDataset):
    def __init__(self, make: Callable[[], Iterator[object]]):
        self.make = make

    def __iter__(self) -> Iterator[object]:
        return iter(self.make())


def to_device(tensor: Tensor, device: torch.device) -> Tensor:
    """``tensor`` on ``device``; a host tensor bound for CUDA goes through pinned memory and
    an asynchronous copy, so the host does not wait for the transfer."""
    if device.type != "cuda" or tensor.device.type == "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)
