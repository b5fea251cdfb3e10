"""Fixtures shared by test modules."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY_SMALR = REPO / "tests" / "configs" / "tiny_smalr.yaml"


# Every test but tests/test_slurm.py runs snakemake locally, and every snakemake start imports the
# SLURM executor plugin, which runs `scontrol show config`. On a machine with a SLURM client whose
# controller is down (as after tests/slurm/local_cluster.sh has torn its cluster down) that call
# waits ~9 s for its timeout; with an empty config it fails at once. tests/test_slurm.py takes this
# variable out of the environment of what it runs (`cluster_env`).
os.environ["SLURM_CONF"] = os.devnull

# Three workers share two cores with the jobs of the end-to-end runs: one thread each, or torch's OpenMP
# and numpy's OpenBLAS start a thread per core in every worker, and their threads spin while they wait
# for cores that other processes hold. Set here, before any test module imports them; a test that means
# to run several threads asks for them (torch.set_num_threads, a job's `threads`).
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")


def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist (`-n 3 --dist loadfile`, pyproject.toml) each test file runs in one worker, in
    file order (module fixtures, tests that read an earlier test's run); the files are handed out
    longest first: the SLURM cluster test (it mostly waits for the cluster's status checks, so it runs
    beside everything else), then the end-to-end runs (marked `workflow`), then the rest."""

    def rank(item) -> int:
        if Path(str(item.fspath)).name == "test_slurm.py":
            return 0
        return 1 if item.get_closest_marker("workflow") else 2

    items.sort(key=rank)  # stable: file order kept within a rank


@pytest.fixture(scope="session")
def smalr_run(tmp_path_factory) -> Path:
    """One uninterrupted run of the workflow on tests/configs/tiny_smalr.yaml (every text stage:
    dataset, MT, FastText, PCA, pretraining, training, evaluation, tables, figures)."""
    d = tmp_path_factory.mktemp("wf_smalr")
    (d / "config.yaml").write_text(TINY_SMALR.read_text())
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", str(d / "config.yaml"), "--cores", "2"]
    done = subprocess.run(
        cmd, cwd=d, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return d


# --- polyvse serve in tests: the app in a thread, and a headless browser --------------------------------------


@pytest.fixture
def served():
    """``with served(model_dir[, images]) as url``: ``polyvse serve``'s app for the model, in a thread of the
    test's process, on a free port of 127.0.0.1."""
    from polyvse.serve import SearchService, running

    @contextmanager
    def serving(model_dir: Path, images: Path | None = None) -> Iterator[str]:
        with running(SearchService(model_dir, images)) as url:
            yield url

    return serving


@pytest.fixture
def chromium() -> Iterator:
    """A headless Chromium driven by Selenium (the distribution's chromium and chromium-driver), or a skip
    that says what is missing."""
    import shutil

    binary, driver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not (binary and driver):
        pytest.skip("no headless browser: apt-get install chromium chromium-driver (.ci/run installs them)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed: .venv/bin/pip install -e '.[dev]'")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    flags = ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000")
    # a microphone that plays a tone, allowed without asking: the page's recorder is tested too
    for flag in (*flags, "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield browser
    finally:
        browser.quit()


def default_run_test_scenes(model: Path) -> dict:
    """After `snakemake --cores all` here: the scene plans of the default run's Multi30K-like test images (the
    relevance of a short query); skips when ``model`` (a default run's model directory) is not trained here."""
    import pandas as pd
    import yaml
    from snakemake.utils import validate

    from polyvse.evaluate.described import scene_plans

    if not (model / "model.pt").is_file():
        pytest.skip(f"no default run in results/: {model.relative_to(REPO)} is not trained here")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    validate(config, str(REPO / "config" / "schema.yaml"))  # the schema's defaults: the dataset's seed, lexicon
    synthetic = config["datasets"]["m30k"]["synthetic"]
    images = pd.read_parquet(REPO / "results" / "m30k" / "images.parquet")
    return scene_plans(images.loc[images["split"] == "test", "image_id"], synthetic["seed"], synthetic["lexicon"])


# --- a searchable model in a second: polyvse query, index and serve without a workflow run --------------------


def write_tiny_search_model(root: Path) -> Path:
    """A joint model (written and spoken English, images of efficientnet_lite0's 1280-D features) with untrained
    weights, in ``root/results/tiny/joint/joint/``, and its dataset: four 32 × 32 test images with their features.
    What ``polyvse query``, ``index`` and ``serve`` read of a trained model, written in a second; returns the
    model's directory."""
    import numpy as np
    import pandas as pd
    import torch
    from PIL import Image

    from polyvse.io import save_torch
    from polyvse.models.joint import build_joint_model
    from polyvse.text.vocab import Vocabulary

    dataset = root / "results" / "tiny"
    (dataset / "images").mkdir(parents=True)
    (dataset / "image_features").mkdir()
    ids = [f"im{i}" for i in range(4)]
    for i, image_id in enumerate(ids):
        Image.new("RGB", (32, 32), ((60 * i) % 256, 128, 255 - 60 * i)).save(dataset / "images" / f"{image_id}.png")
    pd.DataFrame({"image_id": ids, "split": "test", "path": [f"images/{i}.png" for i in ids]}).to_parquet(
        dataset / "images.parquet", index=False
    )
    captions = [(i, "en", 0, f"a {c} {s}") for i, (c, s) in zip(ids, [("red", "circle"), ("blue", "square")] * 2)]
    pd.DataFrame(captions, columns=["image_id", "lang", "cap_idx", "text"]).assign(
        split="test", origin="human"
    ).to_parquet(dataset / "captions.parquet", index=False)
    rng = np.random.default_rng(0)
    np.save(dataset / "image_features" / "efficientnet_lite0.npy", rng.normal(size=(4, 1280)).astype(np.float32))
    (dataset / "image_features" / "efficientnet_lite0.ids.txt").write_text("".join(f"{i}\n" for i in ids))
    vocab = Vocabulary(["en"], {"en": ["a", "red", "blue", "circle", "square"]})
    torch.manual_seed(0)
    encoder = {"widths": [8, 8, 8], "kernel": 3, "convs_per_stage": 2, "convs_per_residual": 2, "pooling": "avg"}
    text = {"word_dim": 6, "universal_dim": 8, "gru_hidden": 8, "dropout": 0.0}
    model = build_joint_model({**encoder, "text": text}, ["en"], ["en"], image_dim=1280, vocab_size=len(vocab))
    directory = dataset / "joint" / "joint"
    directory.mkdir(parents=True)
    save_torch(
        {
            "family": "joint",
            "config": model.config,
            "state_dict": model.state_dict(),
            "vocab": vocab.state_dict(),
            "normalize": True,
            "settings": {"text": {"max_len": 8}, "cap_idx": 0},
            "max_frames": {"en": None},
        },
        directory / "model.pt",
    )
    return directory


@pytest.fixture(scope="session")
def tiny_search_model(tmp_path_factory) -> Path:
    """:func:`write_tiny_search_model` once a session (read it, do not change it: copy it to break it)."""
    return write_tiny_search_model(tmp_path_factory.mktemp("tiny_search"))
