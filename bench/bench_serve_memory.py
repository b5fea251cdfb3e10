"""The peak resident memory of `polyvse serve` under hostile and largest-allowed input, sent to 127.0.0.1 only.

    .venv/bin/python bench/bench_serve_memory.py [MODEL] [--requests N] [--threads T]

Starts `polyvse serve MODEL --images FOLDER` in a subprocess (MODEL: by default the untrained tiny joint model
of the tests, tests/conftest.py, written to a temporary folder: the server's memory is torch, the image
backbone and what a request makes it decode, not the weights of a small model), then sends N requests from T
threads, a mix of: the largest image the limits let through (6324 × 6324 pixels, just under image_pixels),
decompression bombs (12000 × 12000), wavs at 1 Hz and at 192 kHz filling the upload cap, chunked and declared
bodies of 200 MB, 9 MB uploads, text queries, served images and requests for another Host. Prints the
server's peak RSS (VmHWM from /proc) and the answers by status. The target, that tests/test_search_guards.py
asserts on a smaller burst: under 1.5 GB.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from conftest import write_tiny_search_model  # noqa: E402
from test_search_guards import write_wav  # noqa: E402

TARGET_BYTES = 1.5 * 2**30


def multipart(fields: dict, files: dict) -> tuple[bytes, dict]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()
    ]
    for name, (filename, content) in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n\r\n'
        parts.append(head.encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), {
        "Content-Type": f"multipart/form-data; boundary={boundary}"
    }


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError:
        return 0  # the server closed a connection over the cap before the client finished sending
    finally:
        connection.close()


def streamed(port: int, declared: bool, total: int = 200 * 2**20) -> int:
    """A multipart body of ``total`` bytes, chunked or with its length declared, sent until the server answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        framing = f"Content-Length: {total}" if declared else "Transfer-Encoding: chunked"
        sock.sendall(
            f"POST /api/search/image HTTP/1.1\r\nHost: 127.0.0.1\r\n{framing}\r\n"
            "Content-Type: multipart/form-data; boundary=x\r\n\r\n".encode()
        )
        head = b'--x\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n'
        block = bytes(2**16)
        try:
            sock.sendall(head if declared else b"%x\r\n" % len(head) + head + b"\r\n")
            for _ in range(total // len(block)):
                sock.sendall(block if declared else b"%x\r\n" % len(block) + block + b"\r\n")
        except OSError:
            pass
        try:
            reply = sock.recv(64)
        except OSError:
            return 0
        return int(reply.split()[1]) if reply.startswith(b"HTTP/1.1") else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--only", action="append", help="send only the inputs of this name (again for another)")
    args = parser.parse_args()
    from PIL import Image

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    try:
        model = args.model or write_tiny_search_model(work)
        folder = work / "photos"
        folder.mkdir()
        for i in range(4):
            Image.new("RGB", (32, 32), (60 * i, 128, 200)).save(folder / f"im{i}.png")
        Image.new("L", (12000, 12000)).save(work / "bomb.png", optimize=True)
        Image.new("RGB", (6324, 6324), (10, 200, 30)).save(work / "largest.png", optimize=True)
        inputs = {
            "largest image": ("image", {"k": "3"}, {"image": ("l.png", (work / "largest.png").read_bytes())}),
            "bomb": ("image", {"k": "3"}, {"image": ("b.png", (work / "bomb.png").read_bytes())}),
            "1 Hz wav": ("audio", {"lang": "en"}, {"audio": ("a.wav", write_wav(work / "1.wav", 1).read_bytes())}),
            "192 kHz wav of 9 MB": (
                "audio",
                {"lang": "en"},
                {"audio": ("b.wav", write_wav(work / "b.wav", 192000, 1, 24 * 192000).read_bytes())},
            ),
            "9 MB of noise": ("image", {"k": "3"}, {"image": ("n.png", os.urandom(9 * 2**20))}),
            "text": ("text", {"text": "a red circle", "lang": "en", "k": "5"}, {}),
        }
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(work / "cache")}
        server = subprocess.Popen(
            [sys.executable, "-m", "polyvse.cli", "serve", str(model), "--images", str(folder), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            env=env,
        )
        try:
            while request(port, "GET", "/api/model") != 200:
                assert server.poll() is None, "polyvse serve stopped"
                time.sleep(0.2)
            baseline = vm_hwm(server.pid)
            senders = [
                *(
                    (
                        lambda by=by, fields=fields, files=files: request(
                            port, "POST", f"/api/search/{by}", *multipart(fields, files)
                        )
                    )
                    for by, fields, files in inputs.values()
                ),
                lambda: streamed(port, declared=False),
                lambda: streamed(port, declared=True),
                lambda: request(port, "GET", "/media/image/1"),
                lambda: request(port, "GET", "/api/model", headers={"Host": "evil.example"}),
            ]
            names = [*inputs, "chunked 200 MB", "declared 200 MB", "served image", "another Host"]
            if args.only:
                senders = [s for s, n in zip(senders, names) if n in args.only]
                names = [n for n in names if n in args.only]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.threads) as pool:
                statuses = list(
                    pool.map(lambda i: (names[i % len(names)], senders[i % len(senders)]()), range(args.requests))
                )
            seconds = time.perf_counter() - t0
            peak = vm_hwm(server.pid)
            alive = server.poll() is None and request(port, "GET", "/api/model") == 200
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    answers = collections.defaultdict(collections.Counter)
    for name, status in statuses:
        answers[name][status] += 1
    for name in names:
        print(f"{name:>22}: " + ", ".join(f"{status or 'closed'} × {n}" for status, n in sorted(answers[name].items())))
    print(
        f"{args.requests} requests from {args.threads} threads in {seconds:.1f} s; server still answering: {alive}; "
        f"peak RSS {peak / 2**30:.2f} GB (after start-up {baseline / 2**30:.2f} GB; target < {TARGET_BYTES / 2**30:.1f} GB)"
    )


def vm_hwm(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


if __name__ == "__main__":
    main()
