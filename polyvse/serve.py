"""``polyvse serve``: a search page for a trained model, in any of its languages, by text, voice or image.

One page (``polyvse/static/search.html``, no network access needed) and a small JSON API over the same
functions as ``polyvse query`` (:mod:`polyvse.query`): a sentence or a spoken query (wav) finds images of the
served collection; an image (an upload, or a result clicked on the page) finds captions, written or spoken, of
the model's test split, or with ``--images`` images of the folder. The collection is the model's test split or
a folder of the user's images, with ``polyvse query``'s caches, and a folder of
:data:`polyvse.query.INDEX_THRESHOLD` images or more is searched through its vector index.

What it guards:

- Files are served by their row in the collection (``/media/image/{row}``, ``/media/audio/{row}``), never by a
  path from the request, and only the files listed when the collection was made: each row keeps the real path
  and the inode it had then, and a file whose path now resolves elsewhere (a symlink re-pointed since) or to
  another file is not served (404).
- It answers only requests whose ``Host`` is a name of the address it listens on (a web page elsewhere cannot
  reach it by DNS rebinding); ``allowed_hosts`` (``--allow-host``) adds names, ``*`` any.
- A request's body is counted as it streams in, whatever its transfer encoding, and cut at
  :attr:`polyvse.limits.Limits.upload_mb` (413); uploads are spooled to disk, and at most ``uploads_at_once`` are
  decoded at a time, each within the image and wav limits (413 too).
- Every other bad input (an empty query, a language the model lacks, an unreadable upload, a field that is not
  a number) gets a JSON error naming the field and a 4xx status.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from polyvse import query as q
from polyvse.errors import InputError
from polyvse.limits import LimitError, Limits, shown

FIELD_BYTES = 64 * 2**10
"""The largest text field (a sentence, a language, a number) and the whole of a body that carries no file."""

MAX_RESULTS = 50
STATIC = Path(__file__).parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_NUMBER = re.compile(r"[0-9]{1,9}")  # ASCII digits only: int() also reads "٣", and "²" passes isdigit()
log = logging.getLogger("polyvse.serve")


@dataclass(frozen=True)
class Listed:
    """A file of the collection as it was when the collection was made: the real path and inode."""

    path: Path
    real: str
    device: int
    inode: int


def listed(path: str | Path) -> Listed | None:
    """``path`` as a :class:`Listed` file, or None where it is not a regular file now."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    return Listed(Path(path), real, st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def open_listed(item: Listed) -> tuple[int, int] | None:
    """An open descriptor of ``item`` and its size, or None where its path no longer leads to the file that
    was listed. The path is resolved again, and the file that opens is the listed inode (a swap between the
    check and the open opens another inode, refused)."""
    if os.path.realpath(item.path) != item.real:
        return None
    try:
        fd = os.open(item.real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (item.device, item.inode):
        os.close(fd)
        return None
    return fd, st.st_size


def served_hosts(host: str, allowed: Sequence[str] = ()) -> frozenset[str] | None:
    """The ``Host`` names a server listening on ``host`` answers: ``host`` itself, the loopback names where it
    listens on loopback, the machine's names where it listens on every address, and ``allowed``; None (any
    name) where ``allowed`` holds ``*``."""
    if "*" in allowed:
        return None
    names = {host.strip("[]").lower()}
    if names & set(LOOPBACK) or host in ("0.0.0.0", "::", ""):
        names |= set(LOOPBACK)
    if host in ("0.0.0.0", "::", ""):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names | {name.strip("[]").lower() for name in allowed})


def host_name(header: str) -> str:
    """The name of a ``Host`` header, without its port or a trailing dot: ``[::1]:8000`` → ``::1``."""
    header = header.strip().lower()
    name = (
        header[1:].split("]", 1)[0] if header.startswith("[") else header.rsplit(":", 1)[0] if ":" in header else header
    )
    return name.rstrip(".")


class RequestError(Exception):
    """A request the page can show the reason of: ``status`` is its HTTP status (4xx)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


_RANGE = re.compile(r"bytes=([0-9]{0,18})-([0-9]{0,18})")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The ``(first, last)`` bytes (inclusive) of a file of ``size`` bytes that a ``Range`` header asks for
    (one range: ``bytes=a-b``, ``bytes=a-``, ``bytes=-n``; the audio player seeks with them), None for the
    whole file (no header, or several ranges, which a server may answer whole); RequestError 416 where the
    range lies outside the file."""
    if header is None or "," in header:
        return None
    found = _RANGE.fullmatch(header.strip())
    if found is None or found.groups() == ("", ""):
        return None  # not a byte range this server reads: the whole file, as without one
    first, last = found.groups()
    if first == "":  # the last n bytes
        n = int(last)
        if n == 0 or size == 0:
            raise RequestError(416, f"range {header!r} is outside the file's {size} bytes")
        return max(0, size - n), size - 1
    start, end = int(first), min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        raise RequestError(416, f"range {header!r} is outside the file's {size} bytes")
    return start, end


class SearchService:
    """What the page asks of a model: its languages, and searches by text, audio, image file or served image."""

    def __init__(self, model_dir: str | Path, images: str | Path | None = None, limits: Limits = Limits()):
        self.limits = limits
        self.model = q.open_model(model_dir)
        self.folder = Path(images) if images is not None else None
        self.joint = isinstance(self.model, q.JointQueryModel)
        self.spoken = isinstance(self.model, q.SpokenModel) and not self.joint
        self.images = self._images()
        self.image_files = [listed(p) for p in self.images.paths]  # what /media/image serves, row by row
        self.captions: q.Index | None = None  # an image query's candidates, embedded on first use
        self.audio_files: list[Listed | None] = []
        self._caption_row: dict[str, int] = {}
        self._captions_made = threading.Lock()  # requests are answered in threads: embed them once
        self._uploads = threading.BoundedSemaphore(limits.uploads_at_once)  # each holds a decoded upload
        _, backbone = q.features_file(self.model)
        from polyvse.features.image import load_backbone

        self.backbone = load_backbone(backbone, device="cpu")

    def _images(self) -> q.ImageCollection:
        if self.folder is None:
            return q.ImageCollection.of(q.test_images(self.model))
        return q.folder_collection(self.model, self.folder, self.limits)

    def describe(self) -> dict[str, Any]:
        """The page's settings: what the model reads and hears, and what it searches."""
        text_langs = self.model.text_langs if self.joint else [] if self.spoken else self.model.langs
        speech_langs = self.model.langs if (self.joint or self.spoken) else []
        return {
            "model": str(self.model.directory),
            "kind": "joint" if self.joint else "speech" if self.spoken else "text",
            "text_langs": list(text_langs),
            "speech_langs": list(speech_langs),
            "collection": str(self.folder) if self.folder else "the test split",
            "images": len(self.images.names),
            "image_finds": "images" if self.folder else "captions",
        }

    def _image_hits(self, vector: torch.Tensor, k: int) -> list[dict[str, Any]]:
        return [
            {"rank": i + 1, "score": s, "id": self.images.names[r], "image": f"/media/image/{r}", "row": r}
            for i, (r, s) in enumerate(self.images.search(vector, k))
        ]

    def _candidate_captions(self) -> q.Index:
        with self._captions_made:
            if self.captions is None:
                captions = (
                    q.test_captions_of(self.model)
                    if self.joint
                    else q.test_utterances(self.model)
                    if self.spoken
                    else q.test_captions(self.model)
                )
                self._caption_row = {name: i for i, name in enumerate(captions.ids)}
                self.audio_files = [listed(a) if a else None for a in captions.audio]
                self.captions = captions
            return self.captions

    def _caption_hits(self, vector: torch.Tensor, k: int) -> list[dict[str, Any]]:
        captions = self._candidate_captions()
        out = []
        for h in q.top_k(vector, captions, k):
            row = self._caption_row[h.id]
            hit = {"rank": h.rank, "score": h.score, "id": h.id, "text": h.text}
            if h.audio:
                hit["audio"] = f"/media/audio/{row}"
            out.append(hit)
        return out

    def by_text(self, text: str, lang: str, k: int) -> dict[str, Any]:
        if self.spoken:
            raise InputError("text", "a grounded-speech model hears speech: give a wav")
        vector = q.embed_joint_text(self.model, text, lang) if self.joint else q.embed_text(self.model, text, lang)
        return {"query": f"“{text}” ({lang})", "results": self._image_hits(vector, k)}

    def by_audio(self, wav: Path, lang: str, k: int) -> dict[str, Any]:
        """``wav``: the upload's temporary copy, named in no message."""
        if not (self.spoken or self.joint) or not self.model.langs:
            raise InputError("audio", "this model reads text, it hears no speech")
        try:
            with self._uploads, _released():
                vector = q.embed_audio(self.model, wav, lang, self.limits)
        except InputError as err:
            raise _as_field(err, "audio", wav) from None
        return {"query": f"spoken ({lang})", "results": self._image_hits(vector, k)}

    def by_image_file(self, image: Path, k: int) -> dict[str, Any]:
        """``image``: the upload's temporary copy, named in no message."""
        try:
            with self._uploads, _released():
                feats = q.image_features([image], "", network=self.backbone, limits=self.limits)
        except InputError as err:
            raise _as_field(err, "image", image) from None
        vector = q.embed_image_features(self.model, torch.from_numpy(feats))[0]
        return self._by_image_vector(vector, "an uploaded image", k)

    def by_row(self, row: int, k: int) -> dict[str, Any]:
        if not 0 <= row < len(self.images.names):
            raise RequestError(404, f"no image {row} in the collection")
        return self._by_image_vector(self.images.embedding(row), self.images.names[row], k)

    def _by_image_vector(self, vector: torch.Tensor, shown: str, k: int) -> dict[str, Any]:
        results = self._image_hits(vector, k) if self.folder else self._caption_hits(vector, k)
        return {"query": shown, "results": results}

    def image_file(self, row: int) -> Listed:
        if not 0 <= row < len(self.image_files):
            raise RequestError(404, f"no image {row} in the collection")
        if self.image_files[row] is None:
            raise RequestError(404, f"the image file of row {row} is missing")
        return self.image_files[row]

    def audio_file(self, row: int) -> Listed:
        if not 0 <= row < len(self.audio_files) or self.audio_files[row] is None:
            raise RequestError(404, f"no spoken caption {row}")
        return self.audio_files[row]


@contextmanager
def _released() -> Iterator[None]:
    """Hand what an upload's decoding freed back to the system: glibc keeps a freed block in the arena of the
    thread that freed it, and requests run on many threads (a 40 MP image, 0.3 GB decoded, left that much
    in each thread's arena: 2.9 GB after 64 of them from 32 threads, measured)."""
    from polyvse.io import release_freed_memory

    try:
        yield
    finally:
        release_freed_memory()


def _as_field(err: InputError, field: str, upload: Path) -> InputError:
    """``err`` about the upload's temporary copy as an error of the page's field (its class kept: a limit's
    error answers 413)."""
    return type(err)(field, err.reason if err.where == str(upload) else str(err))


class _TooLarge(Exception):
    """A request body went past its cap while it streamed in."""


def create_app(service: SearchService, allowed_hosts: frozenset[str] | None = frozenset(LOOPBACK)):
    """The Starlette application of one :class:`SearchService`, answering the ``Host`` names ``allowed_hosts``
    (None: any)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, StreamingResponse
    from starlette.routing import Route

    class Answer(JSONResponse):
        """JSON in ASCII: a file name that is not UTF-8 (a lone surrogate) is escaped, not a 500."""

        def render(self, content: Any) -> bytes:
            import json

            return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")

    class HostGuard:
        """Refuses a request whose ``Host`` is not one of ``allowed_hosts`` (DNS rebinding)."""

        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and allowed_hosts is not None:
                header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
                if host_name(header) not in allowed_hosts:
                    reason = f"Host {header!r} is not served here (polyvse serve --allow-host NAME serves it)"
                    await Answer({"error": reason}, status_code=400)(scope, receive, send)
                    return
            await self.app(scope, receive, send)

    limits = service.limits

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse((STATIC / "search.html").read_text(encoding="utf-8"))

    async def model(request: Request) -> JSONResponse:
        return Answer(service.describe())

    async def form_of(request: Request) -> Any:
        """The request's form, its body counted as it streams in and cut at the cap (a file's part
        spooled to disk by the parser): a declared length or a chunked body over it answers 413."""
        multipart = request.headers.get("content-type", "").startswith("multipart/")
        cap = limits.upload_bytes + FIELD_BYTES if multipart else FIELD_BYTES
        seen, more = 0, True

        async def counted() -> dict:
            nonlocal seen, more
            message = await request.receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                more = bool(message.get("more_body", False))
                if seen > cap:
                    raise _TooLarge
            return message

        length = request.headers.get("content-length")
        try:
            if length is not None and (not _NUMBER.fullmatch(length) or int(length) > cap):
                raise _TooLarge
            return await Request(request.scope, counted).form(max_files=1, max_fields=8, max_part_size=FIELD_BYTES)
        except _TooLarge:
            # read a little more of what the client sends (kept nowhere) so that it gets the answer rather
            # than a reset connection, then stop reading whatever is left
            while more and seen <= 8 * cap:
                message = await request.receive()
                if message["type"] != "http.request":
                    break
                seen += len(message.get("body", b""))
                more = bool(message.get("more_body", False))
            raise RequestError(413, f"the upload is larger than {shown(limits.upload_mb)} MB (--limit upload_mb=N)")
        except Exception as err:  # multipart's parser raises several kinds for a malformed body
            detail = getattr(err, "detail", None) or err
            raise RequestError(400, f"a malformed form ({type(err).__name__}: {detail})") from None

    def number(form: Any, field: str, default: str = "") -> int:
        raw = str(form.get(field) or default)
        if not _NUMBER.fullmatch(raw):
            raise RequestError(400, f"{field}: expected a number of ASCII digits, got {raw[:40]!r}")
        return int(raw)

    def k_of(form: Any) -> int:
        k = number(form, "k", "12")
        if not 1 <= k <= MAX_RESULTS:
            raise RequestError(400, f"k: expected a number of results from 1 to {MAX_RESULTS}, got {k}")
        return k

    async def upload_of(form: Any, field: str, suffix: str) -> Path:
        upload = form.get(field)
        if upload is None or isinstance(upload, str):
            raise RequestError(400, f"{field}: no file was uploaded")
        if not upload.size:
            raise RequestError(400, f"{field}: the uploaded file is empty")
        handle = tempfile.NamedTemporaryFile(prefix="polyvse-serve-", suffix=suffix, delete=False)
        with handle:  # the spooled upload copied a block at a time, never whole in memory
            await run_in_threadpool(shutil.copyfileobj, upload.file, handle, 2**16)
        return Path(handle.name)

    async def search(request: Request) -> JSONResponse:
        form = await form_of(request)
        k = k_of(form)
        by = request.path_params["by"]
        if by == "text":
            text, lang = str(form.get("text") or ""), str(form.get("lang") or "")
            return Answer(await run_in_threadpool(service.by_text, text, lang, k))
        if by == "row":
            return Answer(await run_in_threadpool(service.by_row, number(form, "row"), k))
        if by in ("image", "audio"):
            path = await upload_of(form, by, ".wav" if by == "audio" else ".img")
            try:
                if by == "audio":
                    result = await run_in_threadpool(service.by_audio, path, str(form.get("lang") or ""), k)
                else:
                    result = await run_in_threadpool(service.by_image_file, path, k)
            finally:
                path.unlink(missing_ok=True)
            return Answer(result)
        raise RequestError(404, f"no search by {by!r}")

    def media(kind: str):
        async def serve_file(request: Request) -> StreamingResponse:
            raw = request.path_params["row"]
            if not _NUMBER.fullmatch(raw):
                raise RequestError(404, f"no {kind} {raw[:40]!r}")
            item = service.image_file(int(raw)) if kind == "image" else service.audio_file(int(raw))
            opened = open_listed(item)
            if opened is None:
                raise RequestError(404, f"the {kind} file of row {raw} is not the one listed at start-up")
            fd, size = opened
            try:
                wanted = byte_range(request.headers.get("range"), size)
            except RequestError:
                os.close(fd)
                raise
            first, last = wanted if wanted is not None else (0, size - 1)

            def blocks() -> Iterator[bytes]:
                with os.fdopen(fd, "rb") as f:
                    f.seek(first)
                    left = last - first + 1
                    while left > 0 and (block := f.read(min(2**16, left))):
                        left -= len(block)
                        yield block

            kind_of = mimetypes.guess_type(item.real)[0] or "application/octet-stream"
            headers = {"content-length": str(last - first + 1), "accept-ranges": "bytes"}
            if wanted is None:
                return StreamingResponse(blocks(), media_type=kind_of, headers=headers)
            headers["content-range"] = f"bytes {first}-{last}/{size}"
            return StreamingResponse(blocks(), status_code=206, media_type=kind_of, headers=headers)

        return serve_file

    async def request_error(request: Request, err: RequestError) -> JSONResponse:
        # after a 413 the connection is closed: uvicorn would otherwise read the rest of the body, to its end
        closing = {"connection": "close"} if err.status == 413 else None
        return Answer({"error": str(err)}, status_code=err.status, headers=closing)

    async def input_error(request: Request, err: InputError) -> JSONResponse:
        # the page's fields, not the command line's flags: "text: empty query", not "--text: …"
        status = 413 if isinstance(err, LimitError) else 400
        return Answer({"error": f"{err.where.lstrip('-')}: {err.reason}"}, status_code=status)

    async def http_error(request: Request, err: HTTPException) -> JSONResponse:
        return Answer({"error": str(err.detail)}, status_code=err.status_code)

    async def unexpected(request: Request, err: Exception) -> JSONResponse:
        log.exception("polyvse serve: %s %s failed", request.method, request.url.path)
        return Answer({"error": f"the server could not answer ({type(err).__name__})"}, status_code=500)

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/model", model),
            Route("/api/search/{by}", search, methods=["POST"]),
            Route("/media/image/{row}", media("image")),
            Route("/media/audio/{row}", media("audio")),
        ],
        middleware=[Middleware(HostGuard)],
        exception_handlers={
            RequestError: request_error,
            InputError: input_error,
            HTTPException: http_error,
            Exception: unexpected,
        },
    )


@contextmanager
def running(
    service: SearchService, host: str = "127.0.0.1", port: int = 0, allowed_hosts: Sequence[str] = ()
) -> Iterator[str]:
    """The app of ``service`` answering in a thread of this process (a notebook's, a test's) on ``host:port``
    (0: a free port); yields its base URL and stops it on leaving."""
    import time

    import uvicorn

    if port == 0:
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    app = create_app(service, served_hosts(host, allowed_hosts))
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"polyvse serve: the server on {host}:{port} did not start")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def serve(
    model_dir: str | Path,
    images: str | Path | None,
    host: str,
    port: int,
    limits: Limits = Limits(),
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Load the model and its collection, then answer on ``host:port`` until interrupted, to the ``Host``
    names of :func:`served_hosts`."""
    import uvicorn

    service = SearchService(model_dir, images, limits)
    names = served_hosts(host, allowed_hosts)
    print(f"polyvse serve: {service.describe()['images']} images of {service.describe()['collection']}")
    print(f"polyvse serve: open http://{host}:{port}/", flush=True)
    uvicorn.run(create_app(service, names), host=host, port=port, log_level="warning")
