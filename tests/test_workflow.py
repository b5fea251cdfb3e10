"""End to end: the workflow on a tiny config, run by snakemake in a temporary
directory, as a user runs it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TINY = REPO / "tests" / "configs" / "tiny.yaml"
STOP_EPOCHS = 40  # embn_stop's ceiling

pytestmark = pytest.mark.workflow


def snakemake(workdir: Path, *args: str, timeout: int = 600, **kw) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", str(workdir / "config.yaml"), *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env, **kw)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("wf")
    config = yaml.safe_load(TINY.read_text())
    # variants no report uses, trained every epoch of a longer ceiling (no early stopping), for the
    # kill-and-resume tests
    config["variants"]["embn_resume"] = {
        "model": "embn",
        "dataset": "m30k",
        "train_langs": ["en", "de"],
        "training_options": {"epochs": 6, "patience": None},
    }
    # long enough that it cannot finish between its first epoch and the stop, on an idle machine too
    config["variants"]["embn_stop"] = {
        "model": "embn",
        "dataset": "m30k",
        "train_langs": ["en"],
        "training_options": {"epochs": STOP_EPOCHS, "patience": None},
    }
    (d / "config.yaml").write_text(yaml.safe_dump(config))
    return d


def test_tiny_workflow_writes_table2(workdir):
    run = snakemake(workdir, "--cores", "2")
    assert run.returncode == 0, run.stderr[-4000:]
    assert "polyvse: workflow finished in" in run.stdout + run.stderr
    table = pd.read_csv(workdir / "results" / "table2.tsv", sep="\t")
    assert list(table.columns) == [
        "model",
        "En",
        "De",
        "Fr",
        "Cs",
        "Cn",
        "Ja",
        "Ar",
        "Af",
        "Ko",
        "Ru",
        "HA",
        "A",
        "params_train",
        "params_test",
    ]
    assert list(table["model"]) == ["Trans. to En", "EmbN", "EmbN (shared)", "EmbN (10 languages) + MT"]
    to_en, per_lang, shared, all_mt = (table.iloc[i] for i in range(4))
    assert 0 < per_lang["En"] <= 100 and 0 < per_lang["De"] <= 100
    assert pd.isna(per_lang["Fr"]) and pd.isna(per_lang["Cn"])  # not evaluated by that row
    assert not pd.isna(shared["HA"])  # shared row covers en de fr cs
    # HA rounds the mean of unrounded cells; the cells are rounded too: up to 0.05 + 0.05 apart
    assert shared["HA"] == pytest.approx(shared[["En", "De", "Fr", "Cs"]].mean(), abs=0.101)
    assert pd.isna(shared["A"])  # not all ten languages
    assert not pd.isna(all_mt["A"]) and not pd.isna(all_mt["Ko"])  # ten languages, six on translations
    assert to_en["En"] == per_lang["En"]  # same English model, same queries
    assert not pd.isna(to_en["Cs"]) and pd.isna(to_en["Cn"])
    assert per_lang["params_train"] > shared["params_train"] / 2 > 0  # two models vs one
    md = (workdir / "results" / "table2.md").read_text()
    assert "| EmbN (shared) |" in md and "m30k" in md
    assert "Ko ¹" in md and "De ¹" not in md and "machine translations" in md
    # the gallery: the ten-language model (most languages) answering 8 test captions, 4 languages x 2
    log = (workdir / "logs" / "gallery_table2.log").read_text()
    assert "embn_all_mt: 8 queries" in log, log
    with Image.open(workdir / "results" / "gallery" / "table2.png") as gallery:
        assert gallery.format == "PNG" and gallery.size[0] > 1000 and gallery.size[1] > 8 * 192
    # the learning overview: every model a table reads, a figure of validation curves for the table
    learning = pd.read_csv(workdir / "results" / "learning.tsv", sep="\t", keep_default_na=False)
    assert sorted(learning["variant"]) == ["embn_all_mt", "embn_de", "embn_en", "embn_shared"]
    assert set(learning["tables"]) == {"table2"} and (learning["chance"] > 0).all()
    assert set(learning["stop_reason"]) == {"ceiling"}  # two epochs: never four without a new best
    assert (workdir / "results" / "learning.md").read_text().startswith("# Which models learned\n\n4 trained models")
    with Image.open(workdir / "results" / "learning" / "table2.png") as curves:
        assert curves.format == "PNG"
    # random word vectors, no FastText table: no attribute words to measure, and the report says nothing of them
    assert pd.read_csv(workdir / "results" / "attribute_words.tsv", sep="\t").empty
    assert "How far apart" not in (workdir / "results" / "data_stats.md").read_text()
    described = pd.read_csv(workdir / "results" / "described_queries.tsv", sep="\t")
    assert len(described) == 96 and described["precision"].between(0, 1).all()  # 48 colour x shape, any and 2
    assert (workdir / "results" / "described_queries.md").read_text().startswith("# Short queries on `embn_en`")
    # nothing left to do: the DAG is complete and outputs are up to date
    again = snakemake(workdir, "--cores", "2", "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def session_processes(session: int) -> dict[int, str]:
    """Process id → command line of the living (non-zombie) processes of ``session``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != session:
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ProcessLookupError):
            continue
    return found


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` (``T``: stopped), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def sigterm_pending(pid: int) -> bool:
    """Whether ``pid`` holds a SIGTERM not yet delivered (or is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return True
    pending = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd:", "ShdPnd:"))]
    return any(mask & (1 << (signal.SIGTERM - 1)) for mask in pending)


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"waited {timeout:.0f} s for {what}"
        time.sleep(0.05)


def training_processes(session: int) -> list[int]:
    """Processes of ``session`` running the train rule's script."""
    return [
        pid
        for pid, cmdline in session_processes(session).items()
        if "train.py" in cmdline and "snakemake " not in cmdline
    ]


def assert_epochs_kept(after: pd.DataFrame, before: pd.DataFrame) -> None:
    """The first rows of a resumed training's epochs.tsv are the ones it had when it stopped, value for value.
    Not dtype for dtype: a column whose every value so far was written as a whole number (a tiny run's
    validation seconds round to 0) reads back as integers until a later row is not."""
    pd.testing.assert_frame_equal(after.iloc[: len(before)], before, check_dtype=False)


def test_sigterm_stops_the_running_jobs_and_the_next_run_resumes(workdir):
    target = "results/m30k/models/embn_stop/model.pt"
    model_dir = workdir / "results/m30k/models/embn_stop"
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", "--cores", "1", target]
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    # The training runs in slices, frozen between them, until its first epoch is checkpointed; it stays
    # frozen until the stop has reached it, so that it cannot finish first however fast it trains and
    # however slowly this test is scheduled.
    deadline = time.time() + 300
    epochs_file = model_dir / "checkpoint" / "epochs.tsv"
    trainers: set[int] = set()

    def freeze() -> None:
        for pid in training_processes(proc.pid):
            trainers.add(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
            wait_for(lambda pid=pid: process_state(pid) in ("T", None), f"training {pid} to stop")

    while not (epochs_file.exists() and len(pd.read_csv(epochs_file, sep="\t")) >= 1):
        assert time.time() < deadline, "no epoch checkpointed in 300 s"
        assert proc.poll() is None, "the training finished or failed before it could be stopped"
        freeze()
        for pid in trainers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        time.sleep(0.05)
    freeze()
    assert trainers, "no training process found"
    os.kill(proc.pid, signal.SIGTERM)  # to snakemake alone, as `kill <pid>` or a scheduler's stop sends it
    for pid in trainers:
        wait_for(lambda pid=pid: sigterm_pending(pid), f"snakemake to send training {pid} SIGTERM")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    stopped = time.time()
    while time.time() - stopped < 10 and any(
        "polyvse" in c or "train.py" in c for c in session_processes(proc.pid).values()
    ):
        time.sleep(0.2)
    left = [c for c in session_processes(proc.pid).values() if "polyvse" in c or "train.py" in c]
    assert not left, f"still running 10 s after SIGTERM: {left}"
    assert proc.wait(timeout=60) != 0
    assert "SIGTERM received: stopping the running jobs" in proc.stderr.read()
    assert not (workdir / target).exists()
    assert not [p for p in model_dir.rglob(".*") if p.is_file()], "a temporary file was left behind"
    before = pd.read_csv(epochs_file, sep="\t")

    run = snakemake(workdir, "--cores", "1", target)
    assert run.returncode == 0, run.stderr[-4000:]
    log = (workdir / "logs/m30k/train_embn_stop.log").read_text()
    resumed = re.search(r"resumed from checkpoint \S+ after epoch (\d+)", log)
    assert resumed, log[-2000:]
    # last.pt is written before checkpoint/epochs.tsv: a stop between the two leaves the checkpoint one epoch ahead
    assert int(resumed.group(1)) in (len(before), len(before) + 1), (resumed.group(0), len(before))
    after = pd.read_csv(model_dir / "epochs.tsv", sep="\t")
    assert list(after["epoch"]) == list(range(1, STOP_EPOCHS + 1))
    assert_epochs_kept(after, before)  # the epochs before the stop are kept


def test_killed_run_resumes_from_its_checkpoint_with_the_same_command(workdir):
    target = "results/m30k/models/embn_resume/model.pt"
    ckpt = workdir / "results/m30k/models/embn_resume/checkpoint"
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", "config.yaml", "--cores", "1", target]
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.time() + 300
    epochs_file = ckpt / "epochs.tsv"
    while time.time() < deadline:
        if epochs_file.exists() and len(pd.read_csv(epochs_file, sep="\t")) >= 2:
            break
        assert proc.poll() is None, "the training finished or failed before it could be killed"
        time.sleep(0.2)
    # SIGKILL the whole run, snakemake with its training job (a killed terminal, a node failure):
    # snakemake's lock stays behind, and nobody runs --unlock
    assert training_processes(proc.pid), "no training process found"
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=120) != 0
    assert any((workdir / ".snakemake" / "locks").glob("*.lock")), "the kill left no lock to test with"
    before = pd.read_csv(epochs_file, sep="\t")
    assert 2 <= len(before) < 6 and not (workdir / target).exists()
    runs = pd.read_csv(workdir / "logs" / "runs.tsv", sep="\t", dtype=str)
    assert pd.isna(runs["finished"].iloc[-1])  # the killed invocation is counted, with no end

    run = snakemake(workdir, "--cores", "1", target)  # the same command, nothing else
    assert run.returncode == 0, run.stderr[-4000:]
    resumed = pd.read_csv(workdir / "logs" / "runs.tsv", sep="\t", dtype=str)
    assert len(resumed) == len(runs) + 1 and pd.isna(resumed["finished"].iloc[-2])
    assert pd.notna(resumed["finished"].iloc[-1])
    assert "cleared the lock of an earlier run that is gone" in run.stderr
    log = (workdir / "logs/m30k/train_embn_resume.log").read_text()
    last = str(ckpt / "last.pt").replace(str(workdir) + "/", "")
    # last.pt is written before checkpoint/epochs.tsv: a kill between the two leaves the checkpoint one epoch ahead
    assert any(f"resumed from checkpoint {last} after epoch {k}" in log for k in (len(before), len(before) + 1)), log[
        -2000:
    ]
    after = pd.read_csv(workdir / "results/m30k/models/embn_resume/epochs.tsv", sep="\t")
    assert list(after["epoch"]) == [1, 2, 3, 4, 5, 6]
    assert_epochs_kept(after, before)  # the epochs before the kill are kept


def test_bad_config_fails_before_any_job_naming_the_key(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["training"]["epoch"] = 3  # typo of epochs
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "--cores", "1")
    assert run.returncode != 0
    assert (
        "config.yaml:" in run.stderr and "config key training.epoch: unknown key; did you mean 'epochs'?" in run.stderr
    )
    assert not (tmp_path / "results").exists()

    config = yaml.safe_load(TINY.read_text())
    config["training"]["epochs"] = "many"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "--cores", "1")
    assert run.returncode != 0 and "'many' is not of type 'integer'" in run.stderr and "epochs" in run.stderr

    config = yaml.safe_load(TINY.read_text())
    config["reports"]["table2"]["rows"][1]["per_language"]["en"] = "no_such_variant"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(tmp_path, "--cores", "1")
    assert run.returncode != 0 and "config key reports.table2.rows[1]: unknown variant 'no_such_variant'" in run.stderr
    assert not (tmp_path / "results").exists()


def test_slurm_profile_dry_run_requests_gpus_for_training_only(tmp_path):
    shutil.copy(TINY, tmp_path / "config.yaml")
    run = snakemake(tmp_path, "-n", "--profile", str(REPO / "profiles" / "slurm"))
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout + run.stderr
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", out)[1:]  # one block a job
    train = [b for b in blocks if b.startswith("rule train:")]
    other = [b for b in blocks if not b.startswith("rule train:") and "resources:" in b]
    assert train and all("gpu=1" in b for b in train)
    assert other and not any("gpu=" in b for b in other)


def test_translation_rerun_sends_nothing_and_augments_every_language(workdir):
    """Depends on the tiny run above having filled the cache."""
    from polyvse.data.tables import read_captions

    aug_path = workdir / "results/m30k/captions_augmented.parquet"
    human = read_captions(workdir / "results/m30k/captions.parquet")
    aug = read_captions(aug_path)
    train = aug[aug["split"] == "train"]
    per = train.groupby(["image_id", "lang"]).size().unstack(fill_value=0)
    assert list(sorted(per.columns)) == sorted(["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"])
    assert (per >= 5).all().all()
    kept = aug[aug["origin"] == "human"][list(human.columns)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, human)  # human rows unchanged

    aug_path.unlink()
    (workdir / "results/m30k/test_translations.parquet").unlink()
    run = snakemake(
        workdir, "--cores", "1", "results/m30k/captions_augmented.parquet", "results/m30k/test_translations.parquet"
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for name in ("augment_captions", "query_translations_test"):
        log = (workdir / f"logs/m30k/{name}.log").read_text().splitlines()
        last = [l for l in log if "translation cache" in l][-1]
        assert "'sent': 0" in last and "'hits': 0" not in last, last


def test_googletrans_without_network_fails_in_bounded_time_leaving_nothing(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["translate"] = {
        "backend": "googletrans",
        "cache": "cache/tr.sqlite",
        "googletrans": {"retries": 1, "timeout": 3.0},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    t0 = time.time()
    run = snakemake(tmp_path, "--cores", "1", "results/m30k/captions_augmented.parquet", timeout=300)
    assert run.returncode != 0
    assert time.time() - t0 < 120
    log = (tmp_path / "logs/m30k/augment_captions.log").read_text()
    assert "googletrans" in log and ("ConnectError" in log or "network" in log.lower()), log[-2000:]
    leftovers = [p.name for p in (tmp_path / "results/m30k").iterdir() if "augmented" in p.name]
    assert leftovers == []


def polyvse_query(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cli = str(Path(sys.executable).with_name("polyvse"))
    return subprocess.run(
        [cli, "query", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def test_polyvse_query_searches_a_trained_model(workdir, tmp_path, capsys, monkeypatch):
    model = "results/m30k/models/embn_de"
    built = snakemake(workdir, "--cores", "2", f"{model}/model.pt")
    assert built.returncode == 0, built.stderr[-3000:]
    test_ids = set(pd.read_parquet(workdir / "results/m30k/images.parquet").query("split == 'test'")["image_id"])

    # the console script, as a user types it
    text = polyvse_query(
        workdir,
        model,
        "--text",
        "ein roter Kreis",
        "--lang",
        "de",
        "-k",
        "3",
        "--json",
        "--sheet",
        str(tmp_path / "sheet.png"),
    )
    assert text.returncode == 0, text.stderr
    found = json.loads(text.stdout)["results"]
    assert [h["rank"] for h in found] == [1, 2, 3] and {h["id"] for h in found} <= test_ids
    assert found[0]["score"] >= found[1]["score"] >= found[2]["score"]
    assert (workdir / model / "query" / "test_images.npz").is_file()  # cached beside the model
    from PIL import Image

    with Image.open(tmp_path / "sheet.png") as sheet:
        assert sheet.width > 3 * sheet.height > 0  # the query and three results side by side

    # the rest in this process (polyvse.cli.main is what the script runs)
    from polyvse.cli import main

    monkeypatch.chdir(workdir)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["query", *args])
        out, err = capsys.readouterr()
        return code, out, err

    # the cache, written above from workdir, serves a query from another folder with paths that exist
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(str(workdir / model), "--text", "ein roter Kreis", "--lang", "de", "-k", "3", "--json")
    assert code == 0 and all(Path(h["path"]).is_file() for h in json.loads(out)["results"])
    monkeypatch.chdir(workdir)

    code, out, _ = run(model, "--image", found[0]["path"], "-k", "2")
    assert code == 0 and len(out.strip().splitlines()) == 3 and "#de" in out  # an image retrieves captions

    folder = tmp_path / "mine"
    folder.mkdir()
    for h in found[:2]:
        shutil.copy(workdir / h["path"], folder / Path(h["path"]).name)
    code, first, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))
    assert code == 0 and "top 2 of 2" in first
    cache = folder / ".polyvse" / "efficientnet_lite0.npz"
    stamp = cache.stat().st_mtime_ns
    code, again, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))
    assert again == first and cache.stat().st_mtime_ns == stamp  # the folder's features come from the cache

    # from INDEX_THRESHOLD images on, a folder is searched through its vector index (here from 4)
    import polyvse.query

    images = pd.read_parquet(workdir / "results/m30k/images.parquet")
    test_paths = sorted(images.loc[images["split"] == "test", "path"])
    for path in test_paths[:6]:
        shutil.copy(workdir / "results/m30k" / path, folder / Path(path).name)
    exact = [
        line.split()[2]
        for line in run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))[1].splitlines()[1:]
    ]
    monkeypatch.setattr(polyvse.query, "INDEX_THRESHOLD", 4)
    assert main(["index", str(folder), "--model", model]) == 0
    indexed = capsys.readouterr().out
    assert "images indexed" in indexed
    [index_dir] = (folder / ".polyvse" / "index").iterdir()
    code, out, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))
    assert code == 0 and [line.split()[2] for line in out.splitlines()[1:]] == exact
    extra = folder / Path(test_paths[6]).name
    shutil.copy(workdir / "results/m30k" / test_paths[6], extra)
    code, out, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder), "-k", "20")
    meta = json.loads((index_dir / "meta.json").read_text())
    assert code == 0 and f"of {len(list(folder.glob('*.png')))} in" in out and len(meta["chunks"]) == 2  # added
    extra.unlink()
    code, out, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))
    meta = json.loads((index_dir / "meta.json").read_text())
    assert [line.split()[2] for line in out.splitlines()[1:]] == exact and len(meta["chunks"]) == 1  # rebuilt
    (index_dir / "meta.json").write_text(json.dumps({**meta, "format": 0}))  # an index of an older polyvse
    code, again, _ = run(model, "--text", "ein roter Kreis", "--lang", "de", "--images", str(folder))
    assert code == 0 and again == out and json.loads((index_dir / "meta.json").read_text())["format"] == meta["format"]
    monkeypatch.undo()
    monkeypatch.chdir(workdir)

    (tmp_path / "broken.png").write_bytes(b"not a picture")
    bad = {
        ("results/m30k", "--text", "x", "--lang", "de"): "not a trained model's directory",
        (model, "--text", "a red circle", "--lang", "en"): "the model knows de, not 'en'",
        (model, "--text", "  ", "--lang", "de"): "empty query",
        (model, "--text", "qqqx zzzy", "--lang", "de"): "no word of the query",
        (model, "--image", str(tmp_path / "broken.png")): "not a readable image",
        (model, "--audio", str(tmp_path / "broken.png"), "--lang", "de"): "a text model reads text",
    }
    for args, message in bad.items():
        code, out, err = run(*args)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (args, err)
