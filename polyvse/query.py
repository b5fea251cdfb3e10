"""Searching a trained model: a sentence in any of a text model's languages, a spoken query (wav) in any of
a grounded-speech model's languages, or an image, against the test split of its dataset or a folder of
the user's own images.

A model directory is ``results/{dataset}/models/{variant}/`` (a text model, ``model.pt`` written by the
train rule), ``results/{dataset}/speech/{variant}/`` (a grounded-speech model, the speech_train rule) or
``results/{dataset}/joint/{variant}/`` (a joint text + speech + image model, the joint_train rule);
its dataset directory ``results/{dataset}/`` holds the images table, the image features of the run's
backbone and the captions (or, for speech, the utterances and their log-Mel stores). The test images'
embeddings are computed once and cached beside the model (``query/test_images.npz``); a folder's image
features are extracted with the same backbone and cached in the folder (``.polyvse/{backbone}.npz``,
keyed by file name, size and modification time), so a second query is fast. Every bad input raises :class:`~polyvse.errors.InputError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from torch import nn

from polyvse.data.tables import resolve_paths, select_captions, spoken_captions
from polyvse.errors import InputError
from polyvse.evaluate.embed import embed_images, embed_sentences
from polyvse.io import atomic_path, load_torch
from polyvse.limits import Limits
from polyvse.models.trained import LOADERS, load_model
from polyvse.text.encoded import encode_captions, padded_tokens
from polyvse.text.vocab import Vocabulary

if TYPE_CHECKING:
    from polyvse.data.synthetic.scene import Scene
    from polyvse.evaluate.described import Description
    from polyvse.features.image import ImageBackbone
    from polyvse.vector_index import IndexSettings, VectorIndex

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp")


@dataclass
class TrainedModel:
    """A trained model with what a query needs: its vocabulary, sentence length and dataset directory."""

    directory: Path
    model: nn.Module
    vocab: Vocabulary
    max_len: int
    dataset_dir: Path
    image_dim: int

    @property
    def langs(self) -> list[str]:
        return list(self.vocab.langs)


@dataclass
class SpokenModel:
    """A trained grounded-speech model (thesis §2.4) with what a query needs: the training's truncation
    cap per language (a query is cut as training cut its utterances), whether its retrieval scores
    are cosines, and its dataset directory."""

    directory: Path
    model: nn.Module
    max_frames: dict[str, int | None]
    normalize: bool
    dataset_dir: Path
    image_dim: int

    @property
    def langs(self) -> list[str]:
        return list(self.model.langs)


@dataclass
class JointQueryModel(SpokenModel):
    """A trained joint model (:mod:`polyvse.models.joint`): a spoken query in one of its spoken languages
    (``langs``, as a grounded-speech model) or a sentence in one of its written ones (``text_langs``)
    finds images; an image finds written and spoken captions."""

    vocab: Vocabulary | None = None
    max_len: int = 0
    cap_idx: int = 0

    @property
    def langs(self) -> list[str]:
        return list(self.model.speech_langs)

    @property
    def text_langs(self) -> list[str]:
        return list(self.model.text_langs)


SILENCE = 1e-4
"""A wav whose every sample is below this (about -80 dBFS) is silent: it says nothing to search with."""


@dataclass
class Index:
    """Searchable items: ``ids`` and ``paths`` (images), ``texts`` (captions) or ``audio`` (spoken captions'
    wav paths), embeddings ``(N, J)``."""

    ids: list[str]
    embeddings: torch.Tensor
    paths: list[str]
    texts: list[str]
    audio: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.audio = self.audio or [""] * len(self.ids)


@dataclass(frozen=True)
class Hit:
    rank: int
    id: str
    score: float
    path: str = ""
    text: str = ""
    audio: str = ""


def open_model(directory: str | Path) -> TrainedModel | SpokenModel:
    """Load ``directory/model.pt`` (weights only) and locate its dataset directory; a damaged or foreign
    ``model.pt`` raises InputError naming it."""
    directory = Path(directory)
    path = directory / "model.pt"
    if not path.is_file():
        raise InputError(
            directory,
            "not a trained model's directory (no model.pt; models are in results/{dataset}/models/{variant}/ "
            "and results/{dataset}/speech/{variant}/)",
        )
    saved = load_torch(path)  # a truncated or foreign file raises InputError naming it
    if not isinstance(saved, dict) or "family" not in saved:
        raise InputError(path, "a broken model file: not a model of the train or speech_train rule (no family)")
    if saved["family"] not in LOADERS:
        raise InputError(path, f"a broken model file: unknown family {saved['family']!r} (known: {', '.join(LOADERS)})")
    dataset_dir = directory.parent.parent
    if not (dataset_dir / "images.parquet").is_file():
        raise InputError(directory, f"its dataset directory {dataset_dir} has no images.parquet")
    try:
        if saved["family"] in ("grounded_speech", "joint"):
            return _spoken_model(directory, saved, dataset_dir)
        if "vocab" not in saved:
            raise InputError(
                path, "not a model of the train or speech_train rule (an MLMME model is not searchable here)"
            )
        model, vocab = load_model(saved)
        if not isinstance(vocab, Vocabulary):
            raise InputError(path, f"a {saved['family']} model reads characters, not words: not searchable here")
        model.eval()
        return TrainedModel(
            directory, model, vocab, int(saved["max_len"]), dataset_dir, int(saved["config"].get("image_dim", 0))
        )
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as err:
        # a missing entry, an unknown family, weights of another shape: torch and the loaders say it many ways
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise InputError(path, f"a broken model file ({type(err).__name__}: {reason[:200]})") from None


def _spoken_model(directory: Path, saved: dict, dataset_dir: Path) -> SpokenModel:
    if saved["family"] == "joint":
        model, vocab = load_model(saved)
        return JointQueryModel(
            directory,
            model,
            dict(saved.get("max_frames") or {}),
            bool(saved.get("normalize", False)),
            dataset_dir,
            int(saved["config"]["image_dim"]),
            vocab=vocab,
            max_len=int(saved["settings"]["text"]["max_len"]),
            cap_idx=int(saved["settings"]["cap_idx"]),
        )
    return SpokenModel(
        directory,
        load_model(saved)[0],
        dict(saved.get("max_frames") or {}),
        bool(saved.get("normalize", True)),
        dataset_dir,
        int(saved["config"]["image_dim"]),
    )


def embed_image_features(tm: TrainedModel | SpokenModel, features: torch.Tensor) -> torch.Tensor:
    """``(N, F)`` backbone features → ``(N, J)`` in the model's space (unit norm where it scores cosines)."""
    emb = embed_images(tm.model, features).cpu()
    return nn.functional.normalize(emb, dim=-1) if isinstance(tm, SpokenModel) and tm.normalize else emb


def features_file(tm: TrainedModel | SpokenModel) -> tuple[Path, str]:
    """The run's image features that fit the model (``image_features/{backbone}.npy``) and the backbone."""
    found = []
    for npy in sorted((tm.dataset_dir / "image_features").glob("*.npy")):
        if (npy.with_suffix(".ids.txt")).is_file() and np.load(npy, mmap_mode="r").shape[1] == tm.image_dim:
            found.append(npy)
    if not found:
        raise InputError(tm.dataset_dir / "image_features", f"no {tm.image_dim}-D image features for this model")
    return found[0], found[0].stem


def notice(message: str) -> None:
    """Say ``message`` on one line of stderr, once a process: a cache moved elsewhere, or rebuilt."""
    if message not in _NOTICED:
        _NOTICED.add(message)
        print(f"polyvse: {message}", file=sys.stderr, flush=True)


_NOTICED: set[str] = set()


def user_cache_root() -> Path:
    """Where a cache goes when its folder cannot take it: ``$XDG_CACHE_HOME/polyvse`` (``~/.cache/polyvse``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "polyvse"


def _own_dirs(root: Path, parts: Sequence[str]) -> str | None:
    """Make ``root/parts…`` as directories of their own (no symlink among them, which would take the cache
    elsewhere) that this process can write; None when done, else why not."""
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            return f"{path} is a symlink, not followed"
        try:
            path.mkdir(exist_ok=True)
        except OSError as err:
            return f"{path} cannot be made ({err.strerror or type(err).__name__})"
        if not path.is_dir():
            return f"{path} is not a directory"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{path} cannot be written"
    return None


def cache_dir(directory: str | Path, *parts: str) -> Path:
    """``directory/parts…`` (``.polyvse``, ``query``), made, where the directory can take a cache; else, said
    in one line, the same under :func:`user_cache_root`, in a folder named after ``directory``'s real path.
    Raises InputError when neither can."""
    directory = Path(directory)
    reason = _own_dirs(directory, parts)
    if reason is None:
        return directory.joinpath(*parts)
    real = directory.resolve()
    name = f"{real.name or 'root'}-{hashlib.sha256(os.fsencode(real)).hexdigest()[:16]}"
    root = user_cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(directory, f"cannot hold its cache ({reason}), nor can {root} ({err.strerror})") from None
    elsewhere = _own_dirs(root, ["dirs", name, *parts])
    if elsewhere is not None:
        raise InputError(directory, f"cannot hold its cache ({reason}), nor can {root} ({elsewhere})")
    moved = root.joinpath("dirs", name, *parts)
    notice(f"{reason}: the cache of {directory} is in {moved}")
    return moved


def _read_cache(path: Path, names: Sequence[str]) -> dict[str, np.ndarray] | None:
    """The arrays ``names`` of the ``.npz`` cache ``path``, or None when it is absent; one that cannot be
    read whole (truncated, a symlink, another layout) is said to be rebuilt and gives None."""
    if not path.is_file() and not path.is_symlink():
        return None
    try:
        if path.is_symlink():
            raise OSError("a symlink, not followed")
        with np.load(path, allow_pickle=False) as held:
            return {n: held[n] for n in names}
    except Exception as err:  # zipfile, numpy and the OS each raise their own for a damaged file
        notice(f"{path}: a damaged cache ({type(err).__name__}: {str(err)[:80]}); rebuilt")
        return None


@torch.no_grad()
def embedding_dim(tm: TrainedModel | SpokenModel) -> int:
    """The width of ``tm``'s image embeddings (what a cache or an index of them must hold)."""
    return int(embed_image_features(tm, torch.zeros(1, tm.image_dim)).shape[1])


@torch.no_grad()
def test_images(tm: TrainedModel | SpokenModel, cache_beside_model: bool = True) -> Index:
    """The test split's images, embedded once and cached in ``query/test_images.npz`` beside the model
    (ids, paths as ``images.parquet`` gives them and embeddings: a later query reads nothing else; where the
    model's directory cannot take it, :func:`cache_dir`); without ``cache_beside_model`` (a workflow job,
    which writes only its declared outputs) neither read nor written. A damaged cache is rebuilt."""
    cache = cache_dir(tm.directory, "query") / "test_images.npz" if cache_beside_model else None
    if cache is not None and cache.is_file() and cache.stat().st_mtime >= (tm.directory / "model.pt").stat().st_mtime:
        # A cache without "dataset_paths" held paths as one working directory saw them: made again.
        held = _read_cache(cache, ["ids", "embeddings", "dataset_paths"])
        if held is not None:
            emb, n = held["embeddings"], len(held["ids"])
            if emb.ndim == 2 and emb.shape == (n, embedding_dim(tm)) and len(held["dataset_paths"]) == n:
                ids = [str(i) for i in held["ids"]]
                paths = resolve_paths(held["dataset_paths"], tm.dataset_dir)
                return Index(ids=ids, embeddings=torch.from_numpy(emb), paths=paths, texts=[""] * n)
            notice(f"{cache}: a damaged cache ({emb.shape} embeddings of {n} images); rebuilt")
    features, _ = features_file(tm)
    images = pd.read_parquet(tm.dataset_dir / "images.parquet")
    test = images[images["split"] == "test"].reset_index(drop=True)
    row_of = {img: i for i, img in enumerate(features.with_suffix(".ids.txt").read_text().split())}
    missing = [i for i in test["image_id"] if i not in row_of]
    if missing:
        raise InputError(features, f"{len(missing)} test images have no features, e.g. {missing[0]}")
    feats = torch.from_numpy(
        np.asarray(np.load(features, mmap_mode="r")[[row_of[i] for i in test["image_id"]]], dtype=np.float32)
    )
    emb = embed_image_features(tm, feats)
    ids = list(test["image_id"])
    dataset_paths = [str(p) for p in test["path"]]
    if cache is not None:
        with atomic_path(cache) as tmp:
            np.savez(tmp, embeddings=emb.numpy(), ids=np.asarray(ids), dataset_paths=np.asarray(dataset_paths))
    return Index(ids=ids, embeddings=emb, paths=resolve_paths(dataset_paths, tm.dataset_dir), texts=[""] * len(ids))


def image_files(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a directory of images")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if not files:
        raise InputError(folder, f"no image files ({', '.join(IMAGE_SUFFIXES)})")
    return files


def check_image_file(path: Path, limits: Limits = Limits()) -> None:
    """Raise InputError unless ``path`` is an image within ``limits``: its size from the header, before
    a pixel is decoded, then its structure (PIL's ``verify``)."""
    from PIL import Image

    # limits.image_pixels is the guard; PIL's warning at its own 89 MP would be a second line
    warnings.simplefilter("ignore", Image.DecompressionBombWarning)
    try:
        with Image.open(path) as img:
            limits.check_image(path, *img.size)
            img.verify()
    except InputError:
        raise
    except Image.DecompressionBombError:
        raise limits.exceeded(path, f"more than {2 * Image.MAX_IMAGE_PIXELS} pixels", "image_pixels") from None
    except Exception as err:  # PIL raises many kinds for a file that is not an image
        raise InputError(path, f"not a readable image ({type(err).__name__})") from None


def image_features(
    paths: list[Path],
    backbone: str,
    cache_dir: Path | None = None,
    network: "ImageBackbone | None" = None,
    limits: Limits = Limits(),
    dim: int | None = None,
) -> np.ndarray:
    """Backbone features ``(N, F)`` of image files, from ``cache_dir/{backbone}.npz`` where it has them
    (a cache that is damaged, or not of ``dim``-D features, is rebuilt); ``network``: the backbone already
    loaded (a server's), else it is loaded by name. Each image is checked first (:func:`check_image_file`)."""
    from polyvse.features.image import extract_features, load_backbone

    keys = [file_key(p) for p in paths]
    cached: dict[str, np.ndarray] = {}
    cache = cache_dir / f"{backbone}.npz" if cache_dir is not None else None
    held = _read_cache(cache, ["keys", "features"]) if cache is not None else None
    if held is not None:
        feats = held["features"]
        if feats.ndim == 2 and len(feats) == len(held["keys"]) and (dim is None or feats.shape[1] == dim):
            cached = dict(zip((str(k) for k in held["keys"]), feats))
        else:
            notice(f"{cache}: a damaged cache ({feats.shape} features of {len(held['keys'])} files); rebuilt")
    todo = [p for p, k in zip(paths, keys) if k not in cached]
    if todo:
        for p in todo:
            check_image_file(p, limits)
        fresh = extract_features([str(p) for p in todo], network or load_backbone(backbone), progress=len(todo) >= 100)
        cached.update(zip((k for p, k in zip(paths, keys) if k not in cached), fresh))
        if cache is not None:
            with atomic_path(cache) as tmp:
                np.savez(tmp, keys=np.asarray(keys), features=np.stack([cached[k] for k in keys]))
    return np.stack([cached[k] for k in keys]).astype(np.float32)


INDEX_THRESHOLD = 50_000
"""A folder of this many images or more is searched through its vector index (:func:`index_folder`); a smaller
one is scored exactly, which at 50,000 128-D embeddings takes a few milliseconds."""


def file_key(path: Path) -> str:
    """What identifies an image file's content for the caches: its name, size and modification time."""
    stat = path.stat()
    return f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}"


def model_key(tm: TrainedModel | SpokenModel) -> str:
    """A folder's index belongs to one trained model: its dataset, variant and the hash of its model.pt."""
    digest = hashlib.sha256((tm.directory / "model.pt").read_bytes()).hexdigest()[:16]
    return f"{tm.dataset_dir.name}-{tm.directory.name}-{digest}"


def _read_keys(directory: Path) -> list[str] | None:
    """The file keys of an index's rows (``keys.jsonl``: one JSON string a line, so that any file name, one
    with a newline or bytes that are not UTF-8 too, is one line), or None where they cannot be read."""
    path = directory / "keys.jsonl"
    if not path.exists() and (directory / "keys.txt").is_file():  # an earlier polyvse's: one plain name a line
        return (directory / "keys.txt").read_text(encoding="utf-8").splitlines()
    try:
        if path.is_symlink():
            raise OSError("a symlink, not followed")
        keys = [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("a line that is not a file key")
        return keys
    except (OSError, ValueError) as err:
        notice(f"{path}: damaged ({type(err).__name__}: {str(err)[:80]}); the index is rebuilt")
        return None


@torch.no_grad()
def index_folder(
    tm: TrainedModel | SpokenModel,
    folder: str | Path,
    settings: "IndexSettings | None" = None,
    batch: int = 4096,
    progress: bool = True,
    limits: Limits = Limits(),
) -> tuple["VectorIndex", list[str]]:
    """The vector index of ``folder``'s images in ``tm``'s space (``folder/.polyvse/index/{model}/``, or where
    :func:`cache_dir` puts it) and the file names of its rows. Images added since the last call are embedded
    and added to it; an image removed or changed since (another size or modification time) rebuilds it, and
    so does an index that fails its checks (said in one line). Embeds ``batch`` images at a time (backbone
    features are not cached here: the index keeps the embeddings)."""
    from tqdm import tqdm

    from polyvse.io import write_text
    from polyvse.vector_index import IndexSettings, VectorIndex

    folder = Path(folder)
    files = image_files(folder)
    keys = [file_key(p) for p in files]
    directory = cache_dir(folder, ".polyvse", "index", model_key(tm))
    keys_path = directory / "keys.jsonl"
    index, known = None, []
    if any((directory / name).exists() for name in ("meta.json", "keys.jsonl", "keys.txt")):
        try:
            index = VectorIndex.open(directory)
            if index.dim != embedding_dim(tm):
                raise InputError(directory, f"an index of {index.dim}-D vectors, the model's are {embedding_dim(tm)}-D")
        except InputError as err:  # damaged, of another format, or its files out of step
            notice(f"{err}; the index is rebuilt")
            index = None
        known = (_read_keys(directory) or []) if index is not None else []
        if index is not None and (len(known) != len(index) or not set(known) <= set(keys)):
            index, known = None, []  # an image removed or changed, or a kill between the two writes: rebuild
    seen = set(known)
    todo = [(p, k) for p, k in zip(files, keys) if k not in seen]
    _, backbone = features_file(tm)
    for start in tqdm(range(0, len(todo), batch), desc=f"indexing {folder}", unit="batch", disable=not progress):
        part = todo[start : start + batch]
        feats = image_features([p for p, _ in part], backbone, limits=limits)
        emb = embed_image_features(tm, torch.from_numpy(feats)).numpy()
        if index is None:
            index = VectorIndex.build(emb, directory, settings or IndexSettings())
        else:
            index.add(emb)
        known += [k for _, k in part]
        write_text("".join(json.dumps(k) + "\n" for k in known), keys_path)
    if index is None:
        raise InputError(folder, "nothing to index")
    (directory / "keys.txt").unlink(missing_ok=True)  # an earlier polyvse's keys, one a line
    return index, [k.rsplit(":", 2)[0] for k in known]


@dataclass
class ImageCollection:
    """Images a query searches, by row: their embeddings in memory, scored exactly (``exact``), or a large
    folder's vector index (``indexed``, :mod:`polyvse.vector_index`)."""

    names: list[str]
    paths: list[str]
    exact: Index | None = None
    indexed: "VectorIndex | None" = None

    @classmethod
    def of(cls, index: Index) -> "ImageCollection":
        """The images of ``index``, scored exactly."""
        return cls(names=list(index.ids), paths=list(index.paths), exact=index)

    def search(self, query: torch.Tensor, k: int) -> list[tuple[int, float]]:
        """(row, score) of the ``k`` best images for ``query`` ``(J,)``, best first."""
        if self.exact is not None:
            best = torch.topk(self.exact.embeddings @ query, min(k, len(self.names)))
            return list(zip(best.indices.tolist(), best.values.tolist()))
        scores, rows = self.indexed.search(query.numpy()[None], k)
        return [(int(r), float(s)) for s, r in zip(scores[0], rows[0]) if r >= 0]

    def embedding(self, row: int) -> torch.Tensor:
        """The embedding ``(J,)`` of image ``row``."""
        if self.exact is not None:
            return self.exact.embeddings[row]
        return torch.from_numpy(self.indexed.vectors(np.array([row]))[0])


def folder_collection(tm: TrainedModel | SpokenModel, folder: str | Path, limits: Limits = Limits()) -> ImageCollection:
    """``folder``'s images in ``tm``'s space: scored exactly below :data:`INDEX_THRESHOLD` images, else through
    the folder's vector index (built or updated first)."""
    if len(image_files(folder)) < INDEX_THRESHOLD:
        return ImageCollection.of(folder_images(tm, folder, limits))
    indexed, names = index_folder(tm, folder, limits=limits)
    return ImageCollection(names=names, paths=[str(Path(folder) / n) for n in names], indexed=indexed)


def search_folder(
    tm: TrainedModel | SpokenModel, folder: str | Path, query: torch.Tensor, k: int, limits: Limits = Limits()
) -> tuple[list[Hit], int]:
    """The ``k`` best images of ``folder`` for ``query`` ``(J,)`` and how many were searched
    (:func:`folder_collection`)."""
    images = folder_collection(tm, folder, limits)
    hits = [
        Hit(rank=i + 1, id=images.names[r], score=s, path=images.paths[r])
        for i, (r, s) in enumerate(images.search(query, k))
    ]
    return hits, len(images.names)


@torch.no_grad()
def folder_images(tm: TrainedModel | SpokenModel, folder: str | Path, limits: Limits = Limits()) -> Index:
    """The images of ``folder``, features cached in ``folder/.polyvse/`` (or where :func:`cache_dir` puts them)."""
    files = image_files(folder)
    _, backbone = features_file(tm)
    feats = image_features(files, backbone, cache_dir(folder, ".polyvse"), limits=limits, dim=tm.image_dim)
    emb = embed_image_features(tm, torch.from_numpy(feats))
    return Index(ids=[p.name for p in files], embeddings=emb, paths=[str(p) for p in files], texts=[""] * len(files))


def _dataset_file(tm: TrainedModel | SpokenModel, name: str) -> Path:
    path = tm.dataset_dir / name
    if not path.is_file():
        raise InputError(path, "missing: an image query searches the dataset's test captions")
    return path


@torch.no_grad()
def test_captions(tm: TrainedModel) -> Index:
    """The human test captions in the model's languages (the candidates of an image query)."""
    captions = pd.read_parquet(_dataset_file(tm, "captions.parquet"))
    test = select_captions(captions, "test", tm.langs)
    index = {img: 0 for img in test["image_id"]}  # image rows are not used to embed sentences
    emb = embed_sentences(tm.model, encode_captions(test, tm.vocab, index, tm.max_len)).cpu()
    ids = [f"{i}#{l}{c}" for i, l, c in zip(test["image_id"], test["lang"], test["cap_idx"])]
    return Index(ids=ids, embeddings=emb, paths=[""] * len(ids), texts=list(test["text"]))


@torch.no_grad()
def test_utterances(sm: SpokenModel) -> Index:
    """The spoken test captions in the model's languages (the candidates of an image query), embedded
    from the dataset's log-Mel stores as evaluation embeds them."""
    from polyvse.speech.run import load_views
    from polyvse.evaluate.speech import embed_views

    features, _ = features_file(sm)
    utterances = sm.dataset_dir / "utterances.parquet"
    stores = [sm.dataset_dir / "logmel" / f"{lang}.npz" for lang in sm.langs]
    for path in [utterances, *stores]:
        if not path.is_file():
            raise InputError(path, "missing: the spoken dataset's utterances and log-Mel stores are searched")
    _, views = load_views(utterances, stores, features, features.with_suffix(".ids.txt"), sm.langs, splits=("test",))
    test = replace(views["test"], max_frames=sm.max_frames)  # cut as the training cut
    feats = torch.from_numpy(np.array(np.load(features, mmap_mode="r"), dtype=np.float32))
    emb = embed_views(sm.model, test, feats)
    wavs = pd.read_parquet(utterances).set_index(["image_id", "lang"])["path"]
    ids, paths, texts, vectors = [], [], [], []
    for lang in sm.langs:
        ids += [f"{i}#{lang}" for i in test.image_ids]
        paths += [str(sm.dataset_dir / wavs[(i, lang)]) for i in test.image_ids]
        texts += [f"spoken ({lang}): {wavs[(i, lang)]}" for i in test.image_ids]
        vectors.append(torch.from_numpy(emb[lang]))
    out = torch.cat(vectors)
    out = nn.functional.normalize(out, dim=-1) if sm.normalize else out
    return Index(ids=ids, embeddings=out, paths=[""] * len(ids), texts=texts, audio=paths)


@torch.no_grad()
def test_written_captions(jm: JointQueryModel) -> Index:
    """A joint model's written test captions (the caption each image's utterances say) in its written languages."""
    captions = pd.read_parquet(_dataset_file(jm, "captions.parquet"))
    test = spoken_captions(captions, "test", jm.text_langs, jm.cap_idx)
    vectors = []
    for lang in jm.text_langs:
        sub = test[test["lang"] == lang]
        vectors.append(_embed_sentences(jm, list(sub["text"]), lang))
    ids = [f"{i}#{l}{c}" for i, l, c in zip(test["image_id"], test["lang"], test["cap_idx"])]
    order = [i for lang in jm.text_langs for i in np.flatnonzero(test["lang"].to_numpy() == lang)]
    return Index(
        ids=[ids[i] for i in order],
        embeddings=torch.cat(vectors),
        paths=[""] * len(ids),
        texts=[str(test["text"].iloc[i]) for i in order],
    )


def _embed_sentences(jm: JointQueryModel, texts: list[str], lang: str) -> torch.Tensor:
    """Sentences of one written language → ``(S, D)`` (unit norm where the model scores cosines)."""
    assert jm.vocab is not None
    tokens, lengths = padded_tokens([jm.vocab.encode(t, lang, jm.max_len) for t in texts])
    out = jm.model.embed_text(lang, tokens, lengths)
    return nn.functional.normalize(out, dim=-1) if jm.normalize else out


@torch.no_grad()
def embed_joint_text(jm: JointQueryModel, text: str, lang: str) -> torch.Tensor:
    """One sentence in one of a joint model's written languages → ``(D,)``."""
    if not text.strip():
        raise InputError("--text", "empty query")
    if lang not in jm.text_langs:
        raise InputError("--lang", f"the model reads {', '.join(jm.text_langs) or 'no language'}, not {lang!r}")
    assert jm.vocab is not None
    unknown = jm.vocab.stoi[(lang, "<unk>")]
    if all(i == unknown for i in jm.vocab.encode(text, lang, jm.max_len)):
        raise InputError("--text", f"no word of the query is in the model's {lang} vocabulary")
    return _embed_sentences(jm, [text], lang)[0]


@torch.no_grad()
def embed_audio(sm: SpokenModel, path: str | Path, lang: str, limits: Limits = Limits()) -> torch.Tensor:
    """One spoken query → ``(J,)``: its log-Mel features (thesis §2.4.2.1) cut to the training's cap for
    ``lang``, through that language's audio encoder. Its rate, channels and length are checked against
    ``limits`` from the header, before a sample is decoded or resampled."""
    from polyvse.speech.audio import check_wav, read_wav
    from polyvse.speech.logmel import logmel

    if lang not in sm.langs:
        raise InputError("--lang", f"the model knows {', '.join(sm.langs)}, not {lang!r}")
    info = check_wav(path)  # a missing, empty, truncated or unreadable file raises with its path
    limits.check_wav(path, info.sample_rate, info.channels, info.frames)
    signal = read_wav(path, max_frames=info.frames)
    if float(np.abs(signal).max()) < SILENCE:
        raise InputError(path, "silent: no sample above -80 dBFS, nothing to search with")
    frames = logmel(signal)
    cap = sm.max_frames.get(lang)
    frames = frames[:cap] if cap else frames
    x = torch.from_numpy(np.ascontiguousarray(frames))[None]
    vector = sm.model.embed_speech(lang, x, torch.tensor([frames.shape[0]]))[0]
    return nn.functional.normalize(vector, dim=-1) if sm.normalize else vector


@torch.no_grad()
def embed_text(tm: TrainedModel, text: str, lang: str) -> torch.Tensor:
    """One sentence → ``(J,)``."""
    if not text.strip():
        raise InputError("--text", "empty query")
    if lang not in tm.langs:
        raise InputError("--lang", f"the model knows {', '.join(tm.langs)}, not {lang!r}")
    frame = pd.DataFrame({"image_id": ["query"], "lang": [lang], "text": [text]})
    enc = encode_captions(frame, tm.vocab, {"query": 0}, tm.max_len)
    unknown = tm.vocab.stoi[(lang, "<unk>")]
    if bool((enc.ids == unknown).all()):  # the query's ids, its only sentence
        raise InputError("--text", f"no word of the query is in the model's {lang} vocabulary")
    return embed_sentences(tm.model, enc)[0].cpu()


@torch.no_grad()
def embed_image_file(tm: TrainedModel | SpokenModel, path: str | Path, limits: Limits = Limits()) -> torch.Tensor:
    """One image file → ``(J,)``, its features extracted with the run's backbone."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such image file")
    _, backbone = features_file(tm)
    feats = image_features([path], backbone, limits=limits)
    return embed_image_features(tm, torch.from_numpy(feats))[0]


def top_k(query: torch.Tensor, index: Index, k: int) -> list[Hit]:
    """The ``k`` best items of ``index`` for ``query`` ``(J,)`` by the model's similarity (dot product)."""
    scores = index.embeddings @ query
    best = torch.topk(scores, min(k, len(index.ids)))
    return [
        Hit(rank=r + 1, id=index.ids[i], score=float(s), path=index.paths[i], text=index.texts[i], audio=index.audio[i])
        for r, (s, i) in enumerate(zip(best.values.tolist(), best.indices.tolist()))
    ]


def test_captions_of(jm: JointQueryModel) -> Index:
    """A joint model's written and spoken test captions in one index (the candidates of an image query)."""
    parts = ([test_written_captions(jm)] if jm.text_langs else []) + ([test_utterances(jm)] if jm.langs else [])
    return Index(
        ids=[i for p in parts for i in p.ids],
        embeddings=torch.cat([p.embeddings for p in parts]),
        paths=[x for p in parts for x in p.paths],
        texts=[x for p in parts for x in p.texts],
        audio=[x for p in parts for x in p.audio],
    )


def described_precision(
    tm: TrainedModel,
    scenes: Mapping[str, "Scene"],
    descriptions: Sequence["Description"],
    k: int = 5,
    index: Index | None = None,
) -> list[tuple["Description", int, float]]:
    """Each English description's (description, number of relevant images, precision at ``k``) when ``tm``
    searches ``index`` (default: its test images) for it (``scenes``: each indexed image's scene plan)."""
    from polyvse.evaluate.described import precision_at_k, relevant_images

    if index is None:
        index = test_images(tm, cache_beside_model=False)
    out = []
    for description in descriptions:
        relevant = relevant_images(description, scenes)
        hits = top_k(embed_text(tm, description.text, "en"), index, k)
        out.append((description, len(relevant), precision_at_k([h.id for h in hits], relevant, k)))
    return out
