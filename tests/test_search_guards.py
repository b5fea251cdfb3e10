"""`polyvse query`, `index` and `serve` against hostile and broken input, on a tiny untrained model
(conftest.write_tiny_search_model): inputs over a limit are refused from their header, one line naming the
limit; the server serves only the files it listed and only to its own Host names, and its peak memory under a
burst of hostile requests stays bounded; a broken model, cache or index is named, and a damaged cache or
index is rebuilt; a folder that cannot be written is still searched."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
PEAK_RSS_BYTES = 1.5 * 2**30
"""The server's peak resident memory under the burst below and every hostile request of this module."""


# ----------------------------------------------------------------------------- inputs


def write_wav(path: Path, rate: int, channels: int = 1, frames: int = 4000) -> Path:
    """A 16-bit PCM wav whose header declares ``rate`` Hz (any rate: written by hand, as an attacker would)."""
    samples = (np.random.default_rng(0).normal(size=(frames, channels)) * 3000).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * 2, channels * 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """A 140 KB PNG of 12000 × 12000 pixels (1 GB once decoded)."""
    from PIL import Image

    path = tmp_path_factory.mktemp("bomb") / "bomb.png"
    Image.new("L", (12000, 12000)).save(path, optimize=True)
    return path


def copy_model(model: Path, root: Path) -> Path:
    """The tiny model's dataset copied under ``root`` (to break it): its model directory there."""
    dataset = model.parent.parent
    shutil.copytree(dataset, root / "results" / dataset.name)
    return root / "results" / dataset.name / model.relative_to(dataset)


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """``cli(*args)`` → (exit status, stdout, stderr) of ``polyvse ARGS`` in this process, with the user cache
    directory in the test's own folder."""
    from polyvse.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def one_line(code: int, err: str, *words: str) -> None:
    """Exit status 2 and one line of stderr holding ``words``, no traceback."""
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err


# ----------------------------------------------------------------------------- 1. limits, checked before the work


@pytest.mark.parametrize(
    "rate, channels, frames, limit",
    [(1, 1, 4000, "audio_min_rate"), (16000, 16, 1600, "audio_channels"), (16000, 1, 16000 * 61, "audio_seconds")],
)
def test_a_wav_over_a_limit_is_refused_from_its_header(cli, tiny_search_model, tmp_path, rate, channels, frames, limit):
    """A wav at 1 Hz took 19 s and 4.3 GB to resample; 16 channels or a minute of audio are refused as well."""
    wav = write_wav(tmp_path / "q.wav", rate, channels, frames)
    t0 = time.perf_counter()
    code, _, err = cli("query", tiny_search_model, "--audio", wav, "--lang", "en")
    one_line(code, err, str(wav), f"the limit {limit}=", f"--limit {limit}=N")
    assert time.perf_counter() - t0 < 5
    code, out, _ = cli("query", tiny_search_model, "--audio", write_wav(tmp_path / "ok.wav", 16000), "--lang", "en")
    assert code == 0 and "top 4 of 4" in out  # a wav within the limits is heard


def test_a_decompression_bomb_is_refused_before_it_is_decoded(cli, tiny_search_model, bomb, tmp_path):
    t0 = time.perf_counter()
    code, _, err = cli("query", tiny_search_model, "--image", bomb)
    one_line(code, err, str(bomb), "12000 × 12000", "image_pixels=40000000")
    assert time.perf_counter() - t0 < 5
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(bomb, folder / "bomb.png")
    code, _, err = cli("query", tiny_search_model, "--text", "a red circle", "--lang", "en", "--images", folder)
    one_line(code, err, "bomb.png", "image_pixels")


def test_limits_are_set_by_name_and_a_bad_setting_is_one_line(cli, tiny_search_model, tmp_path):
    wav = write_wav(tmp_path / "q.wav", 16000, frames=16000)
    code, _, err = cli("query", tiny_search_model, "--audio", wav, "--lang", "en", "--limit", "audio_seconds=0.5")
    one_line(code, err, "1.0 s of audio", "audio_seconds=0.5")
    for setting, reason in [("pixels=1", "unknown limit 'pixels'"), ("image_pixels=many", "expected a number")]:
        one_line(*cli("query", tiny_search_model, "--image", wav, "--limit", setting)[::2], "--limit", reason)


# ----------------------------------------------------------------------------- 3. one line for every bad input


def test_bad_command_line_values_are_one_line(cli, tiny_search_model, tmp_path):
    code, _, err = cli("query", tiny_search_model, "--text", "a \udcff red circle", "--lang", "en")
    one_line(code, err, "--text", "not UTF-8")
    code, _, err = cli("query", tiny_search_model, "--text", "a red circle", "--lang", "en", "--sheet", tmp_path)
    one_line(code, err, "--sheet", "is a directory")


@pytest.mark.parametrize("damage", ["truncated", "no state_dict", "unknown family", "wrong shapes"])
def test_a_broken_model_is_named_by_query_and_serve(cli, tiny_search_model, tmp_path, damage):
    import torch

    model = copy_model(tiny_search_model, tmp_path)
    path = model / "model.pt"
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    else:
        saved = torch.load(path, weights_only=True)
        if damage == "no state_dict":
            del saved["state_dict"]
        elif damage == "unknown family":
            saved["family"] = "transformer_xl"
        else:
            saved["config"]["widths"] = [4, 4, 4]
        torch.save(saved, path)
    for command in ("query", "serve"):
        args = ["--text", "a red circle", "--lang", "en"] if command == "query" else ["--port", "1"]
        code, _, err = cli(command, model, *args)
        one_line(code, err, str(path))
        assert ("broken model" in err) or ("damaged checkpoint" in err), err


# ----------------------------------------------------------------------------- 4. a folder that cannot be written


def test_a_folder_that_cannot_be_written_is_searched_with_its_cache_elsewhere(
    cli, tiny_search_model, tmp_path, monkeypatch
):
    folder = tmp_path / "photos"
    shutil.copytree(tiny_search_model.parent.parent / "images", folder)
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root may write anywhere: refuse as the kernel refuses a user
        real_mkdir = os.mkdir

        def mkdir(path, *args, **kwargs):
            if Path(path).parent == folder:
                raise PermissionError(13, "Permission denied", str(path))
            return real_mkdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "mkdir", mkdir)
    try:
        code, first, err = cli("query", tiny_search_model, "--text", "a red", "--lang", "en", "--images", folder)
        assert code == 0 and "top 4 of 4" in first, err
        assert len(err.strip().splitlines()) == 1 and "the cache of" in err and "user-cache" in err, err
        [cache] = (tmp_path / "user-cache" / "polyvse" / "dirs").glob("photos-*/.polyvse/efficientnet_lite0.npz")
        stamp = cache.stat().st_mtime_ns
        code, again, _ = cli("query", tiny_search_model, "--text", "a red", "--lang", "en", "--images", folder)
        assert code == 0 and again == first and cache.stat().st_mtime_ns == stamp  # read from there
        assert not (folder / ".polyvse").exists()
    finally:
        folder.chmod(0o755)


# ----------------------------------------------------------------------------- 2. caches stay in their folder


def test_a_cache_symlink_is_not_followed(cli, tiny_search_model, tmp_path):
    folder, elsewhere = tmp_path / "photos", tmp_path / "elsewhere"
    shutil.copytree(tiny_search_model.parent.parent / "images", folder)
    elsewhere.mkdir()
    (folder / ".polyvse").symlink_to(elsewhere)
    code, out, err = cli("query", tiny_search_model, "--text", "a red", "--lang", "en", "--images", folder)
    assert code == 0 and "top 4 of 4" in out and "is a symlink, not followed" in err, err
    assert list(elsewhere.iterdir()) == []
    assert list((tmp_path / "user-cache").rglob("efficientnet_lite0.npz"))


# ----------------------------------------------------------------------------- 5. damaged caches and indexes


def damage(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])
    else:  # arrays of another width, whole and readable
        held = dict(np.load(path))
        key = "embeddings" if "embeddings" in held else "features"
        held[key] = held[key][:, :3]
        with open(path, "wb") as f:
            np.savez(f, **held)


@pytest.mark.parametrize("how", ["truncated", "wrong dimension"])
def test_a_damaged_cache_is_rebuilt_and_said(cli, tiny_search_model, tmp_path, how):
    model = copy_model(tiny_search_model, tmp_path)
    folder = model.parent.parent / "images"
    query = ("query", model, "--text", "a red circle", "--lang", "en")
    code, split, _ = cli(*query)
    code, mine, _ = cli(*query, "--images", folder)
    assert code == 0
    for cache, args, expected in [
        (model / "query" / "test_images.npz", (), split),
        (folder / ".polyvse" / "efficientnet_lite0.npz", ("--images", folder), mine),
    ]:
        damage(cache, how)
        code, out, err = cli(*query, *args)
        assert code == 0 and out == expected, err
        assert len(err.strip().splitlines()) == 1 and str(cache) in err and "rebuilt" in err, err
        code, out, err = cli(*query, *args)
        assert code == 0 and out == expected and err == ""  # whole again


@pytest.mark.parametrize("broken", ["meta.json", "ivf_000.faiss", "chunk_000.npy", "keys.jsonl", "wrong dimension"])
def test_a_damaged_index_is_rebuilt_by_index_and_query(cli, tiny_search_model, tmp_path, monkeypatch, broken):
    import polyvse.query

    monkeypatch.setattr(polyvse.query, "INDEX_THRESHOLD", 2)
    folder = tmp_path / "photos"
    shutil.copytree(tiny_search_model.parent.parent / "images", folder)
    query = ("query", tiny_search_model, "--text", "a red circle", "--lang", "en", "--images", folder)
    code, out, err = cli("index", folder, "--model", tiny_search_model)
    assert code == 0 and "4 images indexed" in out, err
    _, expected, _ = cli(*query)
    [index] = (folder / ".polyvse" / "index").iterdir()
    if broken == "wrong dimension":
        chunk = index / "chunk_000.npy"
        np.save(chunk, np.load(chunk)[:, :3])
        meta = json.loads((index / "meta.json").read_text())
        (index / "meta.json").write_text(json.dumps({**meta, "dim": 3}))
    else:
        (index / broken).write_bytes((index / broken).read_bytes()[:7])
    code, out, err = cli("index", folder, "--model", tiny_search_model)
    assert code == 0 and "4 images indexed" in out, err
    assert "rebuilt" in err and "Traceback" not in err, err
    code, out, err = cli(*query)
    assert code == 0 and out == expected and "rebuilt" not in err, err


def test_a_file_name_with_a_newline_is_indexed_once(cli, tiny_search_model, tmp_path, monkeypatch):
    import polyvse.query

    monkeypatch.setattr(polyvse.query, "INDEX_THRESHOLD", 2)
    folder = tmp_path / "photos"
    shutil.copytree(tiny_search_model.parent.parent / "images", folder)
    (folder / "im0.png").rename(folder / "two\nlines.png")
    (folder / "im1.png").rename(folder / os.fsdecode(b"not-utf8-\xff.png"))
    assert cli("index", folder, "--model", tiny_search_model)[0] == 0
    [index] = (folder / ".polyvse" / "index").iterdir()
    stamp = (index / "meta.json").stat().st_mtime_ns
    code, out, err = cli("query", tiny_search_model, "--text", "a red", "--lang", "en", "--images", folder)
    assert code == 0 and "top 4 of 4" in out and "not-utf8-\\udcff.png" in out, (out, err)  # printed escaped
    assert (index / "meta.json").stat().st_mtime_ns == stamp  # searched as it was: not rebuilt
    assert cli("index", folder, "--model", tiny_search_model)[0] == 0
    assert (index / "meta.json").stat().st_mtime_ns == stamp


# ----------------------------------------------------------------------------- the server, as a user starts it


class Server:
    """``polyvse serve`` in a subprocess on a free port of 127.0.0.1."""

    def __init__(self, process: subprocess.Popen, port: int, folder: Path):
        self.process, self.port, self.folder = process, port, folder

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, dict | bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            raw = response.read()
            kind = response.getheader("Content-Type") or ""
            return response.status, json.loads(raw) if "json" in kind else raw
        finally:
            connection.close()

    def post(self, by: str, fields: dict | None = None, files: dict | None = None) -> tuple[int, dict | bytes]:
        boundary = uuid.uuid4().hex
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in (fields or {}).items()
        ]
        for name, (filename, content) in (files or {}).items():
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            parts.append(head.encode() + b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self.request("POST", f"/api/search/{by}", body, headers)

    def peak_rss(self) -> int:
        """The server's peak resident memory so far (VmHWM), in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


@pytest.fixture(scope="module")
def server(tiny_search_model, tmp_path_factory) -> Iterator[Server]:
    """The tiny model's page over a folder of its four images and a symlink to one of them (``swap.png``)."""
    folder = tmp_path_factory.mktemp("served") / "photos"
    shutil.copytree(tiny_search_model.parent.parent / "images", folder)
    (folder / "swap.png").symlink_to(folder / "im0.png")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(folder.parent / "user-cache")}
    process = subprocess.Popen(
        [sys.executable, "-m", "polyvse.cli", "serve", str(tiny_search_model), "--images", str(folder)]
        + ["--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    served = Server(process, port, folder)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "polyvse serve did not answer"
            try:
                if served.request("GET", "/api/model")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_server_serves_only_the_files_it_listed(server, tmp_path):
    status, about = server.request("GET", "/api/model")
    assert status == 200 and about["images"] == 5
    row = server.post("text", {"text": "a red", "lang": "en", "k": "5"})[1]
    rows = {hit["id"]: hit["row"] for hit in row["results"]}
    status, png = server.request("GET", f"/media/image/{rows['swap.png']}")
    assert status == 200 and png[:4] == b"\x89PNG"
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    swap = server.folder / "swap.png"
    swap.unlink()
    swap.symlink_to(secret)  # re-pointed after start: ln -sfn secret swap.png
    status, answer = server.request("GET", f"/media/image/{rows['swap.png']}")
    assert status == 404 and b"root:x" not in json.dumps(answer).encode(), answer
    assert server.request("GET", f"/media/image/{rows['im1.png']}")[0] == 200


def test_a_served_file_answers_a_byte_range(server):
    from polyvse.serve import RequestError, byte_range

    assert byte_range(None, 10) is None and byte_range("bytes=0-1,4-5", 10) is None
    assert byte_range("bytes=2-4", 10) == (2, 4) and byte_range("bytes=7-", 10) == (7, 9)
    assert byte_range("bytes=-3", 10) == (7, 9) and byte_range("bytes=8-99", 10) == (8, 9)
    for outside in ("bytes=10-", "bytes=5-2", "bytes=-0"):
        with pytest.raises(RequestError) as err:
            byte_range(outside, 10)
        assert err.value.status == 416
    whole = server.request("GET", "/media/image/0")[1]
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:  # the audio player seeks so: a part of the file, 206 and where it lies
        connection.request("GET", "/media/image/0", headers={"Range": "bytes=4-11"})
        response = connection.getresponse()
        assert response.status == 206 and response.read() == whole[4:12]
        assert response.getheader("Content-Range") == f"bytes 4-11/{len(whole)}"
    finally:
        connection.close()
    assert server.request("GET", "/media/image/0", headers={"Range": f"bytes={len(whole)}-"})[0] == 416


def test_the_server_answers_only_its_own_host_names():
    from polyvse.serve import host_name, served_hosts

    assert host_name("[::1]:8000") == "::1" and host_name("LocalHost.:8000") == "localhost"
    assert served_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert "photos.lan" in served_hosts("127.0.0.1", ["photos.lan"]) and served_hosts("::1", ["*"]) is None
    assert "192.168.1.5" in served_hosts("192.168.1.5") and "localhost" not in served_hosts("192.168.1.5")


def test_a_request_for_another_host_is_refused(server):
    for host in ("evil.example", "evil.example:%d" % server.port, ""):
        status, answer = server.request("GET", "/api/model", headers={"Host": host})
        assert status == 400 and "--allow-host" in answer["error"], (host, answer)
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}"):
        assert server.request("GET", "/api/model", headers={"Host": host})[0] == 200


@pytest.mark.parametrize("field, value", [("k", "²"), ("k", "١٢"), ("row", "²"), ("row", "1e3")])
def test_a_number_field_that_is_not_ascii_digits_is_400(server, field, value):
    fields = {"k": "3", "row": "0", field: value}
    status, answer = server.post("row", fields)
    assert status == 400 and answer["error"].startswith(f"{field}: expected a number"), answer
    assert server.request("GET", "/media/image/%C2%B2")[0] == 404  # ²


def test_uploads_over_a_limit_are_413_naming_it(server, bomb, tmp_path):
    status, answer = server.post("image", {"k": "3"}, {"image": ("b.png", bomb.read_bytes())})
    assert status == 413 and "image_pixels" in answer["error"] and "bomb" not in answer["error"], answer
    wav = write_wav(tmp_path / "q.wav", 1).read_bytes()
    status, answer = server.post("audio", {"k": "3", "lang": "en"}, {"audio": ("q.wav", wav)})
    assert status == 413 and answer["error"].startswith("audio: a sample rate of 1 Hz"), answer


def test_a_chunked_body_is_cut_at_the_cap(server):
    """A body without Content-Length (Transfer-Encoding: chunked) was read to its end before the 413: the
    server now answers while the client is still sending."""
    total, sent = 400 * 2**20, 0
    chunk = b"%x\r\n" % 2**16 + bytes(2**16) + b"\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(
            b"POST /api/search/image HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: multipart/form-data; boundary=x\r\n\r\n"
        )
        head = b'--x\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n'
        sock.sendall(b"%x\r\n" % len(head) + head + b"\r\n")  # a file part that never ends
        try:
            while sent < total:
                sock.sendall(chunk)
                sent += 2**16
        except OSError:  # the server answered and stopped reading: the send blocks or the connection closes
            pass
        reply = sock.recv(65536)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert sent < total / 2, f"the server read {sent / 2**20:.0f} MB before answering"


def test_the_servers_peak_memory_stays_bounded_under_a_hostile_burst(server, bomb, tmp_path):
    """Bounded: 240 requests from 12 threads, to 127.0.0.1 only, a few seconds. The old server decoded three
    parallel bombs at 1 GB each."""
    image = (server.folder / "im1.png").read_bytes()
    hostile = [
        lambda: server.post("image", {"k": "3"}, {"image": ("b.png", bomb.read_bytes())}),
        lambda: server.post(
            "audio", {"lang": "en"}, {"audio": ("q.wav", write_wav(tmp_path / "a.wav", 1).read_bytes())}
        ),
        lambda: server.post("image", {"k": "3"}, {"image": ("i.png", image)}),
        lambda: server.post("text", {"text": "a red circle", "lang": "en", "k": "5"}),
        lambda: server.request("GET", "/media/image/1"),
        lambda: server.request("GET", "/api/model", headers={"Host": "evil.example"}),
    ]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(lambda i: hostile[i % len(hostile)]()[0], range(240)))
    seconds = time.perf_counter() - t0
    assert sorted(set(statuses)) == [200, 400, 413], statuses
    assert server.process.poll() is None and server.request("GET", "/api/model")[0] == 200
    peak = server.peak_rss()
    assert peak < PEAK_RSS_BYTES, f"peak RSS {peak / 2**30:.2f} GB after {seconds:.1f} s"
