"""Image features: backbones load offline, preprocessing, ten-crop, extraction, precomputed files."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.utils.model_zoo
from PIL import Image

from polyvse.errors import InputError
from polyvse.features import image as imf
from polyvse.features.resnet import resnet152


@pytest.fixture(scope="module")
def effnet() -> imf.ImageBackbone:
    return imf.load_backbone("efficientnet_lite0", device="cpu")


def _png(path: Path, rgb: np.ndarray) -> Path:
    Image.fromarray(rgb.astype(np.uint8)).save(path)
    return path


def _sample_photo(name: str) -> Path:
    """Real photos shipped inside installed packages (matplotlib, scikit-learn)."""
    if name == "grace_hopper.jpg":
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "sample_data" / name
    else:
        import sklearn

        path = Path(sklearn.__file__).parent / "datasets" / "images" / name
    if not path.is_file():
        pytest.skip(f"sample photo {path} not installed")
    return path


# ---------------------------------------------------------------- efficientnet_lite0


def test_efficientnet_loads_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", no_network)
    monkeypatch.setattr(torch.hub, "download_url_to_file", no_network)
    monkeypatch.setattr(torch.utils.model_zoo, "load_url", no_network)
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    backbone = imf.load_backbone("efficientnet_lite0", device="cpu")
    assert backbone.dim == 1280
    with torch.inference_mode():
        feats = backbone.forward(torch.zeros(2, 3, 224, 224))
    assert feats.shape == (2, 1280)


def test_efficientnet_weights_are_pretrained_not_random(effnet):
    from efficientnet_lite_pytorch import EfficientNet

    fresh = EfficientNet.from_name("efficientnet-lite0").state_dict()
    loaded = effnet.trunk.net.state_dict()
    # A fresh BatchNorm has running statistics (0, 1); trained ones have moved away.
    assert torch.all(fresh["_bn0.running_var"] == 1)
    assert not torch.allclose(loaded["_bn0.running_var"], torch.ones(32))
    assert loaded["_bn0.running_mean"].abs().max() > 0.1

    # Trained stem filters are spatially smooth: neighbouring taps correlate, random ones do not.
    def neighbour_corr(w: torch.Tensor) -> float:
        a, b = w[..., :, :-1].flatten(), w[..., :, 1:].flatten()
        return float(torch.corrcoef(torch.stack([a, b]))[0, 1])

    assert neighbour_corr(loaded["_conv_stem.weight"]) > 0.3
    assert abs(neighbour_corr(fresh["_conv_stem.weight"])) < 0.2


@pytest.mark.parametrize("photo, top1", [("china.jpg", 698), ("flower.jpg", 985)])  # palace, daisy
def test_efficientnet_classifies_real_photos(effnet, photo, top1):
    x = effnet.preprocess(imf.load_image(_sample_photo(photo)))
    with torch.inference_mode():
        probs = effnet.logits(x).softmax(-1)[0]
    assert int(probs.argmax()) == top1
    assert float(probs[top1]) > 0.2  # a random net would give ~1/1000


def test_efficientnet_grace_hopper_wears_a_uniform(effnet):
    x = effnet.preprocess(imf.load_image(_sample_photo("grace_hopper.jpg")))
    with torch.inference_mode():
        top5 = effnet.logits(x)[0].topk(5).indices.tolist()
    assert 652 in top5  # "military uniform"


def test_efficientnet_normalisation_is_mean127_std128(effnet):
    # (127 - 127) / 128 = 0 and (255 - 127) / 128 = 1, whatever the crop and resize do.
    grey = effnet.preprocess(Image.new("RGB", (300, 260), (127, 127, 127)))
    white = effnet.preprocess(Image.new("RGB", (260, 300), (255, 255, 255)))
    assert grey.shape == white.shape == (1, 3, 224, 224)
    assert torch.allclose(grey, torch.zeros_like(grey), atol=1e-6)
    assert torch.allclose(white, torch.ones_like(white), atol=1e-6)


def test_efficientnet_eval_crop_takes_centre_224_of_256():
    # 512x400: crop int(224/256*400) = 350 centred, then resized to 224.
    arr = np.zeros((400, 512, 3), np.uint8)
    arr[:, 81:431] = 255  # exactly the 350 centre columns ((512-350+1)//2 = 81)
    out = np.asarray(imf.efficientnet_eval_crop(Image.fromarray(arr)))
    assert out.shape == (224, 224, 3)
    assert out.min() >= 250  # nothing of the black margins got in


def test_extract_features_efficientnet(effnet, tmp_path):
    rng = np.random.default_rng(0)
    red = _png(tmp_path / "red.png", np.tile([200, 30, 30], (120, 160, 1)))
    noise = _png(tmp_path / "noise.png", rng.integers(0, 256, (90, 70, 3)))
    grey = Image.fromarray(rng.integers(0, 256, (100, 100), dtype=np.uint8), mode="L")
    grey.save(tmp_path / "grey.jpg")
    paths = [red, noise, tmp_path / "grey.jpg", red]
    feats = imf.extract_features(paths, effnet, batch_size=3, progress=False)
    assert feats.shape == (4, 1280) and feats.dtype == np.float32
    # ReLU6 before the pooling bounds every feature to [0, 6].
    assert feats.min() >= 0 and feats.max() <= 6
    np.testing.assert_allclose(feats[0], feats[3], atol=1e-6)
    assert np.abs(feats[0] - feats[1]).max() > 0.1
    # Batching does not change the result; the result is the pooled conv map of preprocess().
    single = imf.extract_features(paths[1:2], effnet, batch_size=1, progress=False)
    np.testing.assert_allclose(single[0], feats[1], atol=1e-4)
    with torch.inference_mode():
        manual = effnet.feature_map(effnet.preprocess(imf.load_image(noise))).mean(dim=(2, 3))
    np.testing.assert_allclose(manual[0].numpy(), feats[1], atol=1e-4)
    # Spatial maps average back to the pooled features.
    maps = imf.extract_features(paths[:2], effnet, spatial=True, progress=False)
    assert maps.shape == (2, 1280, 7, 7)
    np.testing.assert_allclose(maps.mean(axis=(2, 3)), feats[:2], atol=1e-4)


def test_extract_features_bad_images(effnet, tmp_path):
    missing = tmp_path / "nope.png"
    with pytest.raises(InputError, match="nope.png.*not found"):
        imf.extract_features([missing], effnet, progress=False)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n this is not a png")
    with pytest.raises(InputError, match="broken.png.*cannot read"):
        imf.extract_features([broken], effnet, progress=False)
    assert imf.extract_features([], effnet, progress=False).shape == (0, 1280)


def test_extract_features_restores_thread_count(effnet, tmp_path):
    before = torch.get_num_threads()
    path = _png(tmp_path / "a.png", np.full((40, 40, 3), 90))
    imf.extract_features([path], effnet, num_threads=1, progress=False)
    assert torch.get_num_threads() == before


# ---------------------------------------------------------------- resnet152


def test_resnet152_matches_torchvision_layout():
    net = resnet152()
    # torchvision documents ResNet152_Weights.IMAGENET1K_V1 with 60,192,808 parameters.
    assert sum(p.numel() for p in net.parameters()) == 60_192_808
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    assert shapes["conv1.weight"] == (64, 3, 7, 7)
    assert shapes["layer1.0.downsample.0.weight"] == (256, 64, 1, 1)
    assert shapes["layer1.0.downsample.1.running_var"] == (256,)
    assert shapes["layer2.0.conv2.weight"] == (128, 128, 3, 3)  # stride on the 3x3 (v1.5)
    assert net.layer2[0].conv2.stride == (2, 2) and net.layer2[0].conv1.stride == (1, 1)
    assert shapes["layer3.35.conv3.weight"] == (1024, 256, 1, 1)
    assert "layer3.36.conv1.weight" not in shapes
    assert shapes["layer4.2.bn3.num_batches_tracked"] == ()
    assert shapes["fc.weight"] == (1000, 2048)


def test_resnet152_weights_round_trip(tmp_path):
    torch.manual_seed(0)
    src = resnet152()
    path = tmp_path / "resnet152-random.pth"
    torch.save(src.state_dict(), path)
    backbone = imf.load_backbone("resnet152", weights_path=path, device="cpu")
    assert backbone.dim == 2048 and backbone.n_views == 10
    loaded = backbone.trunk.net.state_dict()
    for key in ("conv1.weight", "layer3.17.bn2.running_mean", "layer4.2.conv3.weight", "fc.bias"):
        assert torch.equal(loaded[key], src.state_dict()[key])


def test_bad_weights_files_are_refused_by_name(tmp_path):
    path = tmp_path / "partial.pth"
    # A checkpoint wrapper and DataParallel's "module." prefix are unwrapped: only absent keys remain.
    torch.save({"state_dict": {"module.fc.weight": torch.zeros(1000, 2048)}}, path)
    with pytest.raises(InputError, match=r"partial\.pth: not resnet152 weights: 931 missing keys \(first: bn1") as err:
        imf.load_backbone("resnet152", weights_path=path, device="cpu")
    assert "unexpected" not in str(err.value)
    # Same names, a wrong shape: the offending parameter is named.
    state = torch.load(imf.packaged_efficientnet_lite0_weights(), weights_only=True)
    state["_fc.weight"] = torch.zeros(10, 1280)
    torch.save(state, path)
    with pytest.raises(InputError, match=r"size mismatch for _fc\.weight"):
        imf.load_backbone("efficientnet_lite0", weights_path=path, device="cpu")
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match=r"partial\.pth: cannot read efficientnet_lite0 weights"):
        imf.load_backbone("efficientnet_lite0", weights_path=path, device="cpu")


def test_resnet152_missing_weights_names_config_key(tmp_path):
    with pytest.raises(InputError, match=r"image_features\.weights_path.*resnet152"):
        imf.load_backbone("resnet152", weights_path=None)
    with pytest.raises(InputError, match=r"image_features\.weights_path.*absent\.pth.*torchvision"):
        imf.load_backbone("resnet152", weights_path=tmp_path / "absent.pth")


def test_ten_crop_positions_and_flips():
    # Pixel (y, x) encodes its coordinates: R = x % 256, G = x // 256, B = y % 256.
    h, w = 600, 512
    yy, xx = np.mgrid[0:h, 0:w]
    img = Image.fromarray(np.stack([xx % 256, xx // 256, yy % 256], -1).astype(np.uint8))
    crops = imf.ten_crop(imf.resize_shorter_side(img, 512), 448)
    assert len(crops) == 10 and all(c.size == (448, 448) for c in crops)

    def origin(c: Image.Image) -> tuple[int, int]:
        r, g, b = np.asarray(c)[0, 0]
        return int(r) + 256 * int(g), int(b)

    # top-left, top-right, bottom-left, bottom-right, centre: (x, y) of the first pixel.
    assert [origin(c) for c in crops[:5]] == [(0, 0), (64, 0), (0, 152 % 256), (64, 152 % 256), (32, 76)]
    # The flipped top-left crop is the mirror of the top-right corner of the original.
    np.testing.assert_array_equal(np.asarray(crops[5]), np.asarray(crops[1])[:, ::-1])
    np.testing.assert_array_equal(np.asarray(crops[9]), np.asarray(crops[4])[:, ::-1])


def test_resnet_views_are_ten_normalised_448_crops():
    torch.manual_seed(0)
    backbone = imf.resnet_backbone(resnet152(), device="cpu")
    views = backbone.preprocess(Image.new("RGB", (640, 480), (124, 116, 104)))
    assert views.shape == (10, 3, 448, 448)
    expected = (torch.tensor([124, 116, 104]) / 255 - torch.tensor(imf.IMAGENET_MEAN)) / torch.tensor(imf.IMAGENET_STD)
    assert torch.allclose(views.mean(dim=(0, 2, 3)), expected, atol=1e-5)
    assert expected.abs().max() < 0.01  # the colour is ImageNet's mean, so all ~0


def test_resnet_extract_features_averages_ten_crops(tmp_path):
    torch.manual_seed(0)
    # Real ResNet-152 architecture with random weights, on small crops to stay fast.
    backbone = imf.resnet_backbone(resnet152(), resize_to=72, crop_size=64, device="cpu")
    rng = np.random.default_rng(1)
    paths = [_png(tmp_path / f"{i}.png", rng.integers(0, 256, (80 + 10 * i, 96, 3))) for i in range(3)]
    feats = imf.extract_features(paths, backbone, batch_size=20, progress=False)
    assert feats.shape == (3, 2048) and feats.dtype == np.float32 and np.isfinite(feats).all()
    with torch.inference_mode():
        views = backbone.preprocess(imf.load_image(paths[2]))
        per_crop = backbone.forward(views)
    assert views.shape == (10, 3, 64, 64)
    # float32 through 152 layers of random weights (activations ~1e6): batched and one-crop convolutions
    # sum in different orders (and thread counts), so agree to ~2e-4 relative, not bit for bit
    np.testing.assert_allclose(feats[2], per_crop.mean(0).numpy(), rtol=1e-3)
    assert not np.allclose(feats[2], per_crop[4].numpy(), rtol=1e-3)  # not just the centre crop
    maps = imf.extract_features(paths[:1], backbone, spatial=True, progress=False)
    assert maps.shape == (1, 2048, 2, 2)


def test_load_backbone_unknown_name():
    with pytest.raises(InputError, match=r"image_features\.backbone.*vgg16"):
        imf.load_backbone("vgg16")
    with pytest.raises(InputError, match="load_precomputed"):
        imf.load_backbone("precomputed")


# ---------------------------------------------------------------- precomputed features & ids files


def test_load_precomputed_reorders_to_images_order(tmp_path):
    feats = np.arange(12, dtype=np.float64).reshape(4, 3)  # row r = [3r, 3r+1, 3r+2]
    np.save(tmp_path / "f.npy", feats)
    imf.write_ids(["d", "b", "a", "c"], tmp_path / "ids.txt")
    out = imf.load_precomputed(tmp_path / "f.npy", tmp_path / "ids.txt", ["a", "b", "c"])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[6, 7, 8], [3, 4, 5], [9, 10, 11]])  # extra id "d" dropped


def test_load_precomputed_names_missing_ids(tmp_path):
    np.save(tmp_path / "f.npy", np.zeros((2, 4), np.float32))
    (tmp_path / "ids.txt").write_text("x1\nx2\n")
    with pytest.raises(InputError, match=r"ids\.txt: 2 of 3 image_ids .*first: y1, y2"):
        imf.load_precomputed(tmp_path / "f.npy", tmp_path / "ids.txt", ["x1", "y1", "y2"])


@pytest.mark.parametrize(
    "ids_text, array, message",
    [
        ("a\nb\nc\n", np.zeros((2, 4)), "3 ids but .* has 2 rows"),
        ("a\na\n", np.zeros((2, 4)), r"ids\.txt:2: duplicate image id 'a' \(first on line 1\)"),
        ("a\n\nb\n", np.zeros((3, 4)), r"ids\.txt:2: empty line"),
        ("a\nb\n", np.zeros((2, 4, 1)), r"f\.npy: expected a 2-D"),
        ("a\nb\n", np.array([[1.0, np.nan], [0.0, 0.0]]), r"non-finite values in row 0 \(image_id a\)"),
    ],
)
def test_load_precomputed_rejects_bad_files(tmp_path, ids_text, array, message):
    np.save(tmp_path / "f.npy", array)
    (tmp_path / "ids.txt").write_text(ids_text)
    with pytest.raises(InputError, match=message):
        imf.load_precomputed(tmp_path / "f.npy", tmp_path / "ids.txt", ["a", "b"])


def test_load_precomputed_missing_files_name_config_key(tmp_path):
    (tmp_path / "ids.txt").write_text("a\n")
    with pytest.raises(InputError, match=r"f\.npy: .*image_features\.precomputed_npy"):
        imf.load_precomputed(tmp_path / "f.npy", tmp_path / "ids.txt", ["a"])


def test_ids_round_trip(tmp_path):
    imf.write_ids(["img 1", "b/2", "3"], tmp_path / "ids.txt")
    assert imf.read_ids(tmp_path / "ids.txt") == ["img 1", "b/2", "3"]
    with pytest.raises(ValueError):
        imf.write_ids(["ok", "bad\nid"], tmp_path / "x.txt")
