"""``polyvse serve``: a search page for a trained model, in any of its languages, by text, voice or image.

One page (``polyvse/static/search.html``, no network access needed) and a small JSON API over the same
functions as ``polyvse query`` (:mod:`polyvse.query`): a sentence or a spoken query (wav) finds images of the
served collection; an image (an upload, or a result clicked on the page) finds captions, written or spoken, of
the model's test split, or with ``--images`` images of the folder. The collection is the model's test split or
a folder of the user's images, with ``polyvse query``'s caches, and a folder of
:data:`polyvse.query.INDEX_THRESHOLD` images or more is searched through its vector index.

Files are served by their row in the collection (``/media/image/{row}``, ``/media/audio/{row}``), never by a
path from the request, so no request can read a file outside the served collection. Bad input (an empty
query, a language the model lacks, an unreadable or oversize upload) gets a JSON error and a 4xx status.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from polyvse import query as q
from polyvse.errors import InputError

MAX_UPLOAD_BYTES = 10 * 2**20
"""The largest upload (image or wav) a request may carry."""

MAX_RESULTS = 50
STATIC = Path(__file__).parent / "static"
log = logging.getLogger("polyvse.serve")


class RequestError(Exception):
    """A request the page can show the reason of: ``status`` is its HTTP status (4xx)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class SearchService:
    """What the page asks of a model: its languages, and searches by text, audio, image file or served image."""

    def __init__(self, model_dir: str | Path, images: str | Path | None = None):
        self.model = q.open_model(model_dir)
        self.folder = Path(images) if images is not None else None
        self.joint = isinstance(self.model, q.JointQueryModel)
        self.spoken = isinstance(self.model, q.SpokenModel) and not self.joint
        self.images = self._images()
        self.captions: q.Index | None = None  # an image query's candidates, embedded on first use
        self._caption_row: dict[str, int] = {}
        self._captions_made = threading.Lock()  # requests are answered in threads: embed them once
        _, backbone = q.features_file(self.model)
        from polyvse.features.image import load_backbone

        self.backbone = load_backbone(backbone, device="cpu")

    def _images(self) -> q.ImageCollection:
        if self.folder is None:
            return q.ImageCollection.of(q.test_images(self.model))
        return q.folder_collection(self.model, self.folder)

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
            vector = q.embed_audio(self.model, wav, lang)
        except InputError as err:
            raise InputError("audio", err.reason if err.where == str(wav) else str(err)) from None
        return {"query": f"spoken ({lang})", "results": self._image_hits(vector, k)}

    def by_image_file(self, image: Path, k: int) -> dict[str, Any]:
        """``image``: the upload's temporary copy, named in no message."""
        try:
            feats = q.image_features([image], "", network=self.backbone)
        except InputError as err:
            raise InputError("image", err.reason if err.where == str(image) else str(err)) from None
        vector = q.embed_image_features(self.model, torch.from_numpy(feats))[0]
        return self._by_image_vector(vector, "an uploaded image", k)

    def by_row(self, row: int, k: int) -> dict[str, Any]:
        if not 0 <= row < len(self.images.names):
            raise RequestError(404, f"no image {row} in the collection")
        return self._by_image_vector(self.images.embedding(row), self.images.names[row], k)

    def _by_image_vector(self, vector: torch.Tensor, shown: str, k: int) -> dict[str, Any]:
        results = self._image_hits(vector, k) if self.folder else self._caption_hits(vector, k)
        return {"query": shown, "results": results}

    def image_file(self, row: int) -> Path:
        if not 0 <= row < len(self.images.paths):
            raise RequestError(404, f"no image {row} in the collection")
        return Path(self.images.paths[row])

    def audio_file(self, row: int) -> Path:
        if self.captions is None or not 0 <= row < len(self.captions.audio) or not self.captions.audio[row]:
            raise RequestError(404, f"no spoken caption {row}")
        return Path(self.captions.audio[row])


def create_app(service: SearchService):
    """The Starlette application of one :class:`SearchService`."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse
    from starlette.routing import Route

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse((STATIC / "search.html").read_text(encoding="utf-8"))

    async def model(request: Request) -> JSONResponse:
        return JSONResponse(service.describe())

    async def form_of(request: Request) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_UPLOAD_BYTES + 65536):
            # read what the client sends (kept nowhere) so that it gets the answer, not a reset connection
            drained = 0
            async for chunk in request.stream():
                drained += len(chunk)
                if drained > 8 * MAX_UPLOAD_BYTES:
                    break
            raise RequestError(413, f"the upload is larger than {MAX_UPLOAD_BYTES // 2**20} MB")
        try:
            return await request.form(max_files=1, max_fields=8, max_part_size=MAX_UPLOAD_BYTES)
        except Exception as err:  # multipart's parser raises several kinds for a malformed body
            raise RequestError(400, f"a malformed form ({type(err).__name__}: {err})") from None

    def k_of(form: Any) -> int:
        raw = str(form.get("k") or 12)
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_RESULTS:
            raise RequestError(400, f"k: expected a number of results from 1 to {MAX_RESULTS}, got {raw!r}")
        return int(raw)

    async def upload_of(form: Any, field: str, suffix: str) -> Path:
        upload = form.get(field)
        if upload is None or isinstance(upload, str):
            raise RequestError(400, f"{field}: no file was uploaded")
        data = await upload.read()
        if not data:
            raise RequestError(400, f"{field}: the uploaded file is empty")
        if len(data) > MAX_UPLOAD_BYTES:
            raise RequestError(413, f"the upload is larger than {MAX_UPLOAD_BYTES // 2**20} MB")
        handle = tempfile.NamedTemporaryFile(prefix="polyvse-serve-", suffix=suffix, delete=False)
        with handle:
            handle.write(data)
        return Path(handle.name)

    async def search(request: Request) -> JSONResponse:
        form = await form_of(request)
        k = k_of(form)
        by = request.path_params["by"]
        if by == "text":
            text, lang = str(form.get("text") or ""), str(form.get("lang") or "")
            return JSONResponse(await run_in_threadpool(service.by_text, text, lang, k))
        if by == "row":
            raw = str(form.get("row") or "")
            if not raw.isdigit():
                raise RequestError(400, f"row: expected an image's number, got {raw!r}")
            return JSONResponse(await run_in_threadpool(service.by_row, int(raw), k))
        if by in ("image", "audio"):
            path = await upload_of(form, by, ".wav" if by == "audio" else ".img")
            try:
                if by == "audio":
                    result = await run_in_threadpool(service.by_audio, path, str(form.get("lang") or ""), k)
                else:
                    result = await run_in_threadpool(service.by_image_file, path, k)
            finally:
                path.unlink(missing_ok=True)
            return JSONResponse(result)
        raise RequestError(404, f"no search by {by!r}")

    def media(kind: str):
        async def serve_file(request: Request) -> FileResponse:
            raw = request.path_params["row"]
            if not raw.isdigit():
                raise RequestError(404, f"no {kind} {raw!r}")
            path = service.image_file(int(raw)) if kind == "image" else service.audio_file(int(raw))
            if not path.is_file():
                raise RequestError(404, f"the {kind} file of row {raw} is missing")
            return FileResponse(path)

        return serve_file

    async def request_error(request: Request, err: RequestError) -> JSONResponse:
        return JSONResponse({"error": str(err)}, status_code=err.status)

    async def input_error(request: Request, err: InputError) -> JSONResponse:
        # the page's fields, not the command line's flags: "text: empty query", not "--text: …"
        return JSONResponse({"error": f"{err.where.lstrip('-')}: {err.reason}"}, status_code=400)

    async def http_error(request: Request, err: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(err.detail)}, status_code=err.status_code)

    async def unexpected(request: Request, err: Exception) -> JSONResponse:
        log.exception("polyvse serve: %s %s failed", request.method, request.url.path)
        return JSONResponse({"error": f"the server could not answer ({type(err).__name__})"}, status_code=500)

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/model", model),
            Route("/api/search/{by}", search, methods=["POST"]),
            Route("/media/image/{row}", media("image")),
            Route("/media/audio/{row}", media("audio")),
        ],
        exception_handlers={
            RequestError: request_error,
            InputError: input_error,
            HTTPException: http_error,
            Exception: unexpected,
        },
    )


@contextmanager
def running(service: SearchService, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """The app of ``service`` answering in a thread of this process (a notebook's, a test's) on ``host:port``
    (0: a free port); yields its base URL and stops it on leaving."""
    import socket
    import time

    import uvicorn

    if port == 0:
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(service), host=host, port=port, log_level="warning"))
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


def serve(model_dir: str | Path, images: str | Path | None, host: str, port: int) -> None:
    """Load the model and its collection, then answer on ``host:port`` until interrupted."""
    import uvicorn

    service = SearchService(model_dir, images)
    print(f"polyvse serve: {service.describe()['images']} images of {service.describe()['collection']}")
    print(f"polyvse serve: open http://{host}:{port}/", flush=True)
    uvicorn.run(create_app(service), host=host, port=port, log_level="warning")
