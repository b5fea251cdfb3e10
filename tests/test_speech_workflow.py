"""End to end: the grounded-speech branch of the workflow on a tiny config, run by snakemake in a
temporary directory: spoken captions, log-Mel stores, every loss, pooling, framework and sharing
of the default speech variants (one epoch each on a handful of images) and the six thesis tables
with the default config's rows; the joint text + speech + image models and the any-to-any table."""

from __future__ import annotations


import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from polyvse.speech.tts import espeak_available

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TABLES = [
    "speech_table3_1",
    "speech_table3_2",
    "speech_table3_3",
    "speech_table3_4",
    "speech_table4_1",
    "speech_table5_1",
]
IMAGE_COLS = [f"{p}.R{k}" for k in (1, 5, 10) for p in ("E&I", "H&I", "J&I")]
CROSS_COLS = [f"{p}.R{k}" for k in (1, 5, 10) for p in ("H&E", "J&E", "J&H")]
ROWS = {
    "speech_table3_1": ["Unif. 1", "Unif. .875", "Unif. .75", "Unif. .5"],
    "speech_table3_2": ["Hyper", "Triplet", "InfoNCE", "MMS", "MMS_Sch.", "MMS_Adap.", "MMS_Sch. †"],
    "speech_table3_3": [
        "MH Attn. Lr.:001 D:.1",
        "MH Attn. Lr.:0001 D:.1",
        "MH Attn. Lr.:001 D:.3",
        "MH Attn. Lr.:001 D:.5",
        "Avg. Pool",
    ],
    "speech_table3_4": ["MH:No CLS", "MH:Internal", "Transformer", "Base MHSA", "Avg. Pool"],
    "speech_table4_1": ["Img. Anch.", "Avg.All", "Avg.Oth.", "Full-Graph"],
    "speech_table5_1": ["Basic", "Seq Tag", "Chann Tag", "Baseline"],
}

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(not espeak_available(), reason="espeak-ng is not installed (./setup.sh installs it)"),
]


# rows whose variants differ from another row's only in a number (λ_u, the margin schedule's span, the
# attention layer's learning rate or dropout) read that row's variant here: 16 trainings instead of 23
# keep the test fast
SAME_CODE_PATH = {
    "hyper_u1": "hyper_u075",
    "hyper_u0875": "hyper_u075",
    "hyper_u05": "hyper_u075",
    "mms_sched_span": "mms_sched",
    "mhsa_lr1e3_d1": "mhsa_lr1e4_d1",
    "mhsa_lr1e3_d3": "mhsa_lr1e4_d1",
    "mhsa_lr1e3_d5": "mhsa_lr1e4_d1",
}


def tiny_config() -> dict:
    """The default config's speech tables on 16 images, tiny encoders, one epoch."""
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    speech = default["speech"]
    speech["model"] = {"widths": [8, 8, 8], "kernel": 3, "convs_per_stage": 2, "ff_dim": 16}
    speech["training"] = {"epochs": 1, "batch_size": 4}
    families = ("speech", "joint")
    variants = {n: v for n, v in default["variants"].items() if v["model"] in families and n not in SAME_CODE_PATH}
    reports = {n: r for n, r in default["reports"].items() if r.get("layout") in ("speech", "any_to_any")}
    for report in reports.values():
        for row in report["rows"]:
            row["variant"] = SAME_CODE_PATH.get(row["variant"], row["variant"])
    return {
        "seed": 0,
        "datasets": {
            "spoken": {
                **default["datasets"]["spoken"],
                "synthetic": {
                    "profile": "all",
                    "lexicon": "closed",
                    "n_train": 8,
                    "n_val": 4,
                    "n_test": 4,
                    "captions_per_image": 1,
                    "image_size": 32,
                    "corpus_sentences": 200,
                },
            }
        },
        "findings": {"seeds": 0},  # the seed replicas are tested on the tiny SMALR run (tests/test_workflow_smalr.py)
        "speech": speech,
        # the thesis' tables and the joint family's any-to-any table, as the default config has them
        "variants": variants,
        "reports": reports,
        "models": {"joint": {"universal_dim": 8, "gru_hidden": 8}},
        "fasttext": {"bucket": 1000, "epochs": 1},
        "resources": {"features": {"threads": 1}, "speech_train": {"threads": 1}},
    }


def default_notes(report: str) -> list[str]:
    """The footnotes the default config gives a speech table (folded YAML: one line each)."""
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return [n.strip() for n in default["reports"][report].get("notes", [])]


# what the test reads: the six tables, the any-to-any table and two galleries; the other five speech tables'
# galleries run the same code on another variant (the default target draws them)
GALLERIES = ["speech_table3_2", "any_to_any"]
TARGETS = [
    *(f"results/{name}.{ext}" for name in [*TABLES, "any_to_any"] for ext in ("tsv", "md")),
    *(f"results/gallery/{name}.png" for name in GALLERIES),
]


def snakemake(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--configfile", str(workdir / "config.yaml"), *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def speech_run(tmp_path_factory) -> Path:
    """The tiny speech config run once for this file's tests (its working directory)."""
    workdir = tmp_path_factory.mktemp("speech")
    (workdir / "config.yaml").write_text(yaml.safe_dump(tiny_config(), allow_unicode=True))
    run = snakemake(workdir, "--cores", "2", *TARGETS)
    assert run.returncode == 0, run.stderr[-4000:]
    return workdir


def test_tiny_speech_workflow_writes_the_six_thesis_tables(speech_run, capsys):
    tmp_path = speech_run

    for name in TABLES:
        table = pd.read_csv(tmp_path / "results" / f"{name}.tsv", sep="\t")
        assert list(table.columns) == ["model", *IMAGE_COLS, *CROSS_COLS, "Ep", "params"], name
        assert list(table["model"]) == ROWS[name]
        recalls = table[IMAGE_COLS + CROSS_COLS].to_numpy()
        assert ((recalls >= 0) & (recalls <= 100)).all()
        for k in (1, 5):  # R@K grows with K
            for pair in ("E&I", "J&H"):
                assert (table[f"{pair}.R{k}"] <= table[f"{pair}.R{5 if k == 1 else 10}"]).all()
        assert (table[[f"{p}.R10" for p in ("E&I", "H&I", "J&I")]] == 100.0).all().all()  # 4 test datapoints
        assert (table["Ep"] == 1).all() and (table["params"] > 0).all()
        md = (tmp_path / "results" / f"{name}.md").read_text()
        assert "| Image Ret | E&I.R1 |" in md and "| Cross-Ling | H&E.R1 |" in md and "chance level" in md
        for note in default_notes(name):  # the report's footnotes, each its own paragraph
            assert f"\n\n{note}" in md, (name, note)
    # Table 3.2's Hyper row is Table 3.1's λ_u = .75 run (the thesis names no difference), footnoted
    t31, t32 = (
        pd.read_csv(tmp_path / "results" / f"{n}.tsv", sep="\t") for n in ("speech_table3_1", "speech_table3_2")
    )
    pd.testing.assert_series_equal(
        t31.iloc[2, 1:].reset_index(drop=True), t32.iloc[0, 1:].reset_index(drop=True), check_names=False
    )
    assert "Hyper is the run of Table 3.1's row Unif. .75" in (tmp_path / "results" / "speech_table3_2.md").read_text()
    # the shared baseline is one training, read by five tables
    t32, t41 = (
        pd.read_csv(tmp_path / "results" / f"{n}.tsv", sep="\t") for n in ("speech_table3_2", "speech_table4_1")
    )
    pd.testing.assert_series_equal(
        t32.iloc[2, 1:].reset_index(drop=True), t41.iloc[3, 1:].reset_index(drop=True), check_names=False
    )
    # one encoder for all languages has fewer parameters; its channel tag widens every stage
    basic, seq, chan, separate = pd.read_csv(tmp_path / "results" / "speech_table5_1.tsv", sep="\t")["params"]
    assert basic < seq < chan < separate

    from PIL import Image

    for name in GALLERIES[:1]:  # a speech table's gallery: spoken queries (4 test images: 4 of them), top images
        with Image.open(tmp_path / "results" / "gallery" / f"{name}.png") as gallery:
            assert gallery.width == 12 + 5 * (192 + 12) and gallery.height > 4 * 192
        assert ": 4 spoken queries, described image in the top" in (tmp_path / f"logs/gallery_{name}.log").read_text()
    utterances = pd.read_parquet(tmp_path / "results/spoken/utterances.parquet")
    assert len(utterances) == 16 * 3 and sorted(utterances["lang"].unique()) == ["en", "hi", "ja"]
    assert all((tmp_path / "results/spoken" / p).is_file() for p in utterances["path"])
    log = (tmp_path / "logs/spoken/logmel_ja.log").read_text()
    assert "utterances/s" in log
    evals = pd.read_csv(tmp_path / "results/spoken/speech/infonce/eval.tsv", sep="\t")
    assert list(evals["pair"]) == ["E&I", "H&I", "J&I", "H&E", "J&E", "J&H"]
    assert np.allclose(evals["r1"], (evals["r1_ab"] + evals["r1_ba"]) / 2)
    _any_to_any_table(tmp_path)
    again = snakemake(tmp_path, "--cores", "2", "-n", *TARGETS)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    _polyvse_query_searches_a_speech_model(tmp_path, utterances, capsys)
    _polyvse_query_searches_a_joint_model(tmp_path, utterances, capsys)


def _any_to_any_table(workdir: Path) -> None:
    """The joint model beside the text-only and the thesis' speech-only one: every ordered pair of the seven
    views (image, text-en/hi/ja, speech-en/hi/ja) for the joint model; the others have their own pairs only."""
    table = pd.read_csv(workdir / "results/any_to_any.tsv", sep="\t")
    views = ["image", "text-en", "text-hi", "text-ja", "speech-en", "speech-hi", "speech-ja"]
    assert list(zip(table["query"], table["target"])) == [(q, t) for q in views for t in views if q != t]
    assert table["Joint mR"].notna().all() and (table["Joint R@1"] <= table["Joint R@10"]).all()
    text = table["query"].str.startswith(("image", "text")) & table["target"].str.startswith(("image", "text"))
    speech = table["query"].str.startswith(("image", "speech")) & table["target"].str.startswith(("image", "speech"))
    assert table.loc[text, "Text only mR"].notna().all() and table.loc[~text, "Text only mR"].isna().all()
    assert table.loc[speech, "Speech only mR"].notna().all() and table.loc[~speech, "Speech only mR"].isna().all()
    assert np.allclose(
        table.loc[text, "Δ mR vs Text only"], table.loc[text, "Joint mR"] - table.loc[text, "Text only mR"]
    )
    md = (workdir / "results/any_to_any.md").read_text()
    assert "| text-hi | speech-hi |" in md and "Only Joint has 18 pairs (text↔speech)" in md
    epochs = pd.read_csv(workdir / "results/spoken/joint/joint/epochs.tsv", sep="\t")
    assert len(epochs) == 1 and "val_recall" in epochs.columns
    from PIL import Image

    # 4 test images: written queries of distinct images (2 en, 2 hi), then spoken ones (2 en, 2 hi)
    with Image.open(workdir / "results/gallery/any_to_any.png") as gallery:
        assert gallery.width == 12 + 5 * (192 + 12) and gallery.height > 8 * 192
    log = (workdir / "logs/gallery_any_to_any.log").read_text()
    assert "joint: 8 queries, described image in the top" in log


def in_process_query(capsys, *args: str) -> SimpleNamespace:
    """``polyvse query ARGS`` run by :func:`polyvse.cli.main` in this process (what the console script runs,
    without a second interpreter importing torch): its exit status, standard output and error."""
    from polyvse.cli import main

    capsys.readouterr()
    code = main(["query", *args])
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def _polyvse_query_searches_a_speech_model(workdir: Path, utterances: pd.DataFrame, capsys) -> None:
    """`polyvse query --audio` against the tiny run's InfoNCE model, and an image query's spoken
    captions; bad spoken input gives one line and exit status 2. The first query runs the console script, as a
    user types it; the rest run in this process."""
    import json

    import soundfile as sf
    from PIL import Image

    model = workdir / "results/spoken/speech/infonce"
    test = utterances[utterances["split"] == "test"]
    test_ids = set(test["image_id"])
    wav = workdir / "results/spoken" / test[test["lang"] == "hi"]["path"].iloc[0]

    def query(*args: str) -> SimpleNamespace:
        return in_process_query(capsys, str(model), *args)

    cli = str(Path(sys.executable).with_name("polyvse"))
    spoken = subprocess.run(
        [
            cli,
            "query",
            str(model),
            "--audio",
            str(wav),
            "--lang",
            "hi",
            "-k",
            "3",
            "--json",
            "--sheet",
            str(workdir / "sheet.png"),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert spoken.returncode == 0, spoken.stderr
    hits = json.loads(spoken.stdout)["results"]
    assert [h["rank"] for h in hits] == [1, 2, 3] and {h["id"] for h in hits} <= test_ids
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"] and all(Path(h["path"]).is_file() for h in hits)
    with Image.open(workdir / "sheet.png") as sheet:
        assert sheet.width > 3 * sheet.height > 0
    assert (model / "query" / "test_images.npz").is_file()

    image = workdir / "results/spoken" / pd.read_parquet(workdir / "results/spoken/images.parquet")["path"].iloc[-1]
    heard = query("--image", str(image), "-k", "12", "--json")  # every spoken test caption: 4 images x 3 languages
    assert heard.returncode == 0, heard.stderr
    found = json.loads(heard.stdout)["results"]
    assert {h["id"].split("#")[1] for h in found} == {"en", "hi", "ja"} and all(
        Path(h["audio"]).is_file() for h in found
    )

    sf.write(workdir / "silent.wav", np.zeros(16000, dtype=np.float32), 16000)
    (workdir / "noise.wav").write_bytes(b"RIFF not really")
    bad = {
        ("--audio", str(workdir / "silent.wav"), "--lang", "hi"): "silent",
        ("--audio", str(workdir / "noise.wav"), "--lang", "hi"): "noise.wav",
        ("--audio", str(wav), "--lang", "de"): "the model knows en, hi, ja, not 'de'",
        ("--audio", str(wav)): "needs its language",
        ("--text", "a red circle", "--lang", "en"): "hears speech",
    }
    for args, message in bad.items():
        run = query(*args)
        assert run.returncode == 2 and message in run.stderr and len(run.stderr.strip().splitlines()) == 1, (
            args,
            run.stderr,
        )


def _polyvse_query_searches_a_joint_model(workdir: Path, utterances: pd.DataFrame, capsys) -> None:
    """`polyvse query` against the tiny run's joint model: a written and a spoken query find test images, an image
    finds written and spoken captions; a language the model lacks, or speech to the text-only model, is one line
    and exit status 2."""
    import json

    test = utterances[utterances["split"] == "test"]
    captions = pd.read_parquet(workdir / "results/spoken/captions.parquet")
    sentence = captions[(captions["split"] == "test") & (captions["lang"] == "hi")]["text"].iloc[0]
    wav = workdir / "results/spoken" / test[test["lang"] == "ja"]["path"].iloc[0]
    image = workdir / "results/spoken" / pd.read_parquet(workdir / "results/spoken/images.parquet")["path"].iloc[-1]

    def query(model: str, *args: str) -> SimpleNamespace:
        return in_process_query(capsys, str(workdir / "results/spoken/joint" / model), *args)

    for args in (("--text", sentence, "--lang", "hi"), ("--audio", str(wav), "--lang", "ja")):
        run = query("joint", *args, "-k", "4", "--json")
        assert run.returncode == 0, run.stderr
        hits = json.loads(run.stdout)["results"]
        assert {h["id"] for h in hits} == set(test["image_id"]) and all(Path(h["path"]).is_file() for h in hits)
    heard = query("joint", "--image", str(image), "-k", "24", "--json")  # 4 test images x (3 written + 3 spoken)
    assert heard.returncode == 0, heard.stderr
    found = json.loads(heard.stdout)["results"]
    assert len(found) == 24 and sum(bool(h["audio"]) for h in found) == 12
    assert {h["text"] for h in found if not h["audio"]} <= set(captions["text"])
    bad = {
        ("joint", "--text", sentence, "--lang", "de"): "the model reads en, hi, ja, not 'de'",
        ("joint_text", "--audio", str(wav), "--lang", "ja"): "written captions only",
    }
    for (model, *args), message in bad.items():
        run = query(model, *args)
        assert run.returncode == 2 and message in run.stderr and len(run.stderr.strip().splitlines()) == 1, (
            args,
            run.stderr,
        )


# --- polyvse serve on the tiny run's joint model ------------------------------------------------------------


def http(url: str, fields: dict | None = None, files: dict | None = None, body: bytes | None = None, headers=None):
    """(status, decoded JSON or bytes) of a GET, or of a POST of a multipart form (``fields``, ``files``:
    name → (filename, bytes)) or of a raw ``body``."""
    import json
    import urllib.error
    import urllib.request
    import uuid

    data, headers = body, dict(headers or {})
    if fields is not None or files is not None:
        boundary = uuid.uuid4().hex
        parts = []
        for name, value in (fields or {}).items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        for name, (filename, content) in (files or {}).items():
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            parts.append(head.encode() + b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n")
        data = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, raw, kind = response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        status, raw, kind = err.code, err.read(), err.headers.get("Content-Type", "")
    return status, json.loads(raw) if "json" in kind else raw


def _try(call):
    """``call()``, or None where it cannot connect (yet)."""
    import urllib.error

    try:
        return call()
    except (urllib.error.URLError, ConnectionError):
        return None


def test_polyvse_serve_answers_text_speech_and_images_and_refuses_bad_requests(
    speech_run, served, tmp_path, monkeypatch
):
    """The joint model's page: a sentence in two of its languages and a wav find the test images, an image (an
    upload or a served image's row) finds written and spoken captions; twenty concurrent requests all get the
    answer a single one gets; bad requests get a 4xx and a reason, and the server keeps serving."""
    from concurrent.futures import ThreadPoolExecutor

    spoken = speech_run / "results/spoken"
    utterances = pd.read_parquet(spoken / "utterances.parquet")
    test = utterances[utterances["split"] == "test"]
    captions = pd.read_parquet(spoken / "captions.parquet")
    sentences = {
        lang: captions[(captions["split"] == "test") & (captions["lang"] == lang)]["text"].iloc[0]
        for lang in ("en", "hi")
    }
    wav = (spoken / test[test["lang"] == "ja"]["path"].iloc[0]).read_bytes()
    image = (spoken / pd.read_parquet(spoken / "images.parquet")["path"].iloc[-1]).read_bytes()
    with served(spoken / "joint/joint") as url:
        status, about = http(f"{url}/api/model")
        assert status == 200 and about["kind"] == "joint" and about["images"] == 4
        assert about["text_langs"] == ["en", "hi", "ja"] and about["speech_langs"] == ["en", "hi", "ja"]
        status, page = http(f"{url}/")
        assert status == 200 and b"<title>polyvse search</title>" in page
        assert b"http://" not in page and b"https://" not in page  # nothing from elsewhere: no CDN
        for lang, sentence in sentences.items():
            status, found = http(f"{url}/api/search/text", {"text": sentence, "lang": lang, "k": "4"})
            assert status == 200 and {h["id"] for h in found["results"]} == set(test["image_id"]), found
        status, heard = http(f"{url}/api/search/audio", {"lang": "ja", "k": "4"}, {"audio": ("q.wav", wav)})
        assert status == 200 and len(heard["results"]) == 4
        first = heard["results"][0]
        status, shown = http(f"{url}{first['image']}")
        assert status == 200 and shown[:8] == b"\x89PNG\r\n\x1a\n"
        status, by_file = http(f"{url}/api/search/image", {"k": "24"}, {"image": ("i.png", image)})
        assert status == 200 and len(by_file["results"]) == 24  # 4 test images x (3 written + 3 spoken captions)
        spoken_hits = [h for h in by_file["results"] if "audio" in h]
        assert len(spoken_hits) == 12 and http(f"{url}{spoken_hits[0]['audio']}")[1][:4] == b"RIFF"
        status, by_row = http(f"{url}/api/search/row", {"row": str(first["row"]), "k": "3"})
        assert status == 200 and len(by_row["results"]) == 3

        asked = {"text": sentences["en"], "lang": "en", "k": "4"}
        single = http(f"{url}/api/search/text", asked)
        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(lambda _: http(f"{url}/api/search/text", asked), range(20)))
        assert answers == [single] * 20

        bad = {
            "text: empty query": ("/api/search/text", {"text": " ", "lang": "en"}, None, 400),
            "lang: the model reads en, hi, ja, not 'de'": (
                "/api/search/text",
                {"text": sentences["en"], "lang": "de"},
                None,
                400,
            ),
            "not a readable image": ("/api/search/image", {}, {"image": ("x.png", b"not a picture")}, 400),
            "no file was uploaded": ("/api/search/image", {}, None, 400),
            "k: expected": ("/api/search/text", {"text": "a", "lang": "en", "k": "9999"}, None, 400),
            "no image 99": ("/api/search/row", {"row": "99"}, None, 404),
            "larger than 10 MB": ("/api/search/image", {}, {"image": ("big.png", bytes(11 * 2**20))}, 413),
        }
        for reason, (path, fields, files, code) in bad.items():
            status, answer = http(f"{url}{path}", fields, files)
            assert status == code and reason in answer["error"] and "Traceback" not in answer["error"], (reason, answer)
        truncated = b"--xyz\r\nContent-Disposition: form-data; name=image; filename=a\r\n\r\nno end"
        for kind, reason in (
            ("multipart/form-data; boundary=xyz", "no file was uploaded"),
            ("multipart/form-data", "malformed"),
        ):
            status, answer = http(f"{url}/api/search/image", body=truncated, headers={"Content-Type": kind})
            assert status == 400 and reason in answer["error"], (kind, answer)
        for climb in (
            "/media/image/../../../etc/passwd",
            "/media/image/%2e%2e%2fconfig.yaml",
            "/media/image/-1",
            "/media/audio/0/../../x",
        ):
            status, _ = http(f"{url}{climb}")
            assert status == 404, climb
        assert http(f"{url}/api/search/text", asked) == single  # still serving, the same answer

    # the console script, as a user starts it: it listens on 127.0.0.1 and stops on SIGTERM
    import signal
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = str(Path(sys.executable).with_name("polyvse"))
    server = subprocess.Popen(
        [script, "serve", str(spoken / "joint/joint"), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "polyvse serve: 4 images of the test split" in server.stdout.readline()
        assert f"open http://127.0.0.1:{port}/" in server.stdout.readline()
        deadline = time.monotonic() + 60
        while (answer := _try(lambda: http(f"http://127.0.0.1:{port}/api/model"))) is None:
            assert server.poll() is None and time.monotonic() < deadline, "polyvse serve did not answer"
            time.sleep(0.2)
        assert answer[0] == 200 and answer[1]["kind"] == "joint"
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) in (0, -signal.SIGTERM)  # uvicorn shuts down, then re-raises the signal
        assert "Traceback" not in server.stderr.read()
    bad_port = subprocess.run(
        [script, "serve", str(spoken / "joint/joint"), "--port", "70000"], capture_output=True, text=True
    )
    assert bad_port.returncode == 2 and "--port: expected a port from 1 to 65535" in bad_port.stderr

    folder = tmp_path / "mine"  # --images: a folder of the user's, where an image finds images
    folder.mkdir()
    for path in pd.read_parquet(spoken / "images.parquet")["path"].iloc[:3]:
        shutil.copy(spoken / path, folder / Path(path).name)
    with served(spoken / "joint/joint", folder) as url:
        status, about = http(f"{url}/api/model")
        assert status == 200 and about["images"] == 3 and about["image_finds"] == "images"
        status, found = http(f"{url}/api/search/text", {"text": sentences["en"], "lang": "en", "k": "3"})
        assert status == 200 and {h["id"] for h in found["results"]} == {p.name for p in folder.glob("*.png")}
        status, similar = http(f"{url}/api/search/row", {"row": "0", "k": "3"})
        assert status == 200 and {h["id"] for h in similar["results"]} == {p.name for p in folder.glob("*.png")}
        assert http(f"{url}/media/image/3")[0] == 404 and http(f"{url}/media/image/0")[0] == 200
    # from INDEX_THRESHOLD images on (here 2), the page searches the folder's vector index: the same answers
    import polyvse.query

    monkeypatch.setattr(polyvse.query, "INDEX_THRESHOLD", 2)
    with served(spoken / "joint/joint", folder) as url:
        for (status, indexed), exact in (
            (http(f"{url}/api/search/text", {"text": sentences["en"], "lang": "en", "k": "3"}), found),
            (http(f"{url}/api/search/row", {"row": "0", "k": "3"}), similar),
        ):
            assert status == 200 and [h["id"] for h in indexed["results"]] == [h["id"] for h in exact["results"]]
            assert [h["score"] for h in indexed["results"]] == pytest.approx([h["score"] for h in exact["results"]])
    assert (folder / ".polyvse" / "index").is_dir()


def test_polyvse_serve_in_a_real_browser(speech_run, served, chromium, tmp_path):
    """Headless Chromium loads the joint model's page, types a sentence in English and in Hindi, uploads an
    image and a wav, clicks a result, records from a (fake) microphone, and reads each grid of results; an empty
    query shows its error. The page
    with results is kept as a screenshot (in $POLYVSE_TEST_ARTIFACTS where set)."""
    import os
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    spoken = speech_run / "results/spoken"
    utterances = pd.read_parquet(spoken / "utterances.parquet")
    test = utterances[utterances["split"] == "test"]
    captions = pd.read_parquet(spoken / "captions.parquet")
    test_captions = captions[captions["split"] == "test"]
    wav = spoken / test[test["lang"] == "ja"]["path"].iloc[0]
    image = spoken / pd.read_parquet(spoken / "images.parquet")["path"].iloc[-1]
    browser = chromium
    with served(spoken / "joint/joint") as url:
        browser.get(url)
        wait = WebDriverWait(browser, 60)
        wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")

        def results(status: str) -> list:
            wait.until(lambda b: b.find_element(By.ID, "status").text == status)
            return browser.find_elements(By.CSS_SELECTOR, "#results .result")

        for lang in ("en", "hi"):
            sentence = test_captions[test_captions["lang"] == lang]["text"].iloc[0]
            Select(browser.find_element(By.ID, "lang")).select_by_value(lang)
            box = browser.find_element(By.ID, "text")
            box.clear()
            box.send_keys(sentence)
            browser.find_element(By.ID, "search-text").click()
            shown = results(f"“{sentence}” ({lang}): 4 results")
            assert {r.get_attribute("data-id") for r in shown} == set(test["image_id"])
            assert all(r.find_element(By.TAG_NAME, "img").get_property("naturalWidth") > 0 for r in shown)
        artifacts = Path(os.environ.get("POLYVSE_TEST_ARTIFACTS") or tmp_path)
        artifacts.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(artifacts / "serve_joint_text_query.png"))

        results_wanted = browser.find_element(By.ID, "k")
        results_wanted.clear()
        results_wanted.send_keys("24")  # every written and spoken caption of the 4 test images
        browser.find_element(By.ID, "image-file").send_keys(str(image.resolve()))
        browser.find_element(By.ID, "search-image").click()
        shown = results("an uploaded image: 24 results")
        texts = [r.find_element(By.CLASS_NAME, "caption").text for r in shown]
        assert set(texts) - {t for t in texts if t.startswith("spoken (")} <= set(captions["text"])
        assert any(r.find_elements(By.TAG_NAME, "audio") for r in shown)  # spoken captions have a player

        Select(browser.find_element(By.ID, "audio-lang")).select_by_value("ja")
        browser.find_element(By.ID, "audio-file").send_keys(str(wav.resolve()))
        browser.find_element(By.ID, "search-audio").click()
        shown = results("spoken (ja): 4 results")
        first = shown[0].get_attribute("data-id")
        shown[0].find_element(By.TAG_NAME, "img").click()  # a result image searches with it
        assert len(results(f"{first}: 24 results")) == 24

        record = browser.find_element(By.ID, "record")
        record.click()
        wait.until(lambda b: record.text == "Stop and search")
        time.sleep(1.5)  # a second and a half of the fake microphone's tone
        record.click()
        assert len(results("spoken (ja): 4 results")) == 4

        browser.find_element(By.ID, "text").clear()
        browser.find_element(By.ID, "search-text").click()
        wait.until(lambda b: "empty query" in b.find_element(By.ID, "error").text)
