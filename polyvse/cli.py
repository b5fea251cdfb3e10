"""The ``polyvse`` command: ``polyvse query`` searches a trained model (polyvse.query); ``polyvse index`` builds
or updates a folder's vector index for it (polyvse.vector_index); ``polyvse serve`` shows a search page for
it (polyvse.serve); ``polyvse migrate-config`` rewrites a config
of the earlier dialect (polyvse.config_migration)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from polyvse.errors import InputError
from polyvse.limits import Limits, parse_limits, shown


def _limit_option(command: argparse.ArgumentParser) -> None:
    defaults = ", ".join(f"{name}={shown(value)}" for name, value in vars(Limits()).items())
    command.add_argument(
        "--limit",
        action="append",
        metavar="NAME=VALUE",
        help=f"raise or lower one of the limits on an input, checked before the work (again for another; {defaults})",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polyvse", description="Multilingual, visually grounded embeddings.")
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser(
        "query",
        help="search a trained model with a sentence, a spoken query or an image",
        description="Search a trained text model (results/{dataset}/models/{variant}/), grounded-speech "
        "model (results/{dataset}/speech/{variant}/) or joint model (results/{dataset}/joint/{variant}/): a "
        "sentence or a spoken query retrieves images, an image retrieves captions, written or spoken (or, with "
        "--images, images).",
    )
    q.add_argument(
        "model",
        type=Path,
        help="the model's directory, results/{dataset}/models/{variant}, .../speech/{variant} or .../joint/{variant}",
    )
    what = q.add_mutually_exclusive_group(required=True)
    what.add_argument("--text", help="a sentence in one of the model's languages (give --lang)")
    what.add_argument("--image", type=Path, help="an image file")
    what.add_argument("--audio", type=Path, help="a spoken query (wav; give --lang)")
    q.add_argument("--lang", help="the language of --text or --audio")
    q.add_argument("--images", type=Path, help="search this folder of images instead of the test split")
    q.add_argument("-k", type=int, default=5, help="how many results (default 5)")
    q.add_argument("--json", action="store_true", help="print the results as JSON")
    q.add_argument("--sheet", type=Path, help="draw the query and its results into this PNG")
    _limit_option(q)
    ix = sub.add_parser(
        "index",
        help="embed a folder of images once and build (or update) its vector index for a model",
        description="Embed the images of a folder with a trained model and build an approximate nearest-neighbour "
        "index of them in FOLDER/.polyvse/index/; run again after adding images and only the new ones are embedded "
        "and added. `polyvse query --images FOLDER` searches through it from "
        "50,000 images on, and scores a smaller folder exactly.",
    )
    ix.add_argument("folder", type=Path, help="the folder of images")
    ix.add_argument("--model", type=Path, required=True, help="the model's directory, as for polyvse query")
    _limit_option(ix)
    sv = sub.add_parser(
        "serve",
        help="a search page for a trained model, in a browser: by text, voice or image",
        description="Serve a page that searches a trained model (as polyvse query does) on http://HOST:PORT/: "
        "a sentence or a wav in one of its languages finds images, an image (uploaded or clicked) finds captions, "
        "or with --images images of the folder.",
    )
    sv.add_argument("model", type=Path, help="the model's directory, as for polyvse query")
    sv.add_argument("--images", type=Path, help="search this folder of images instead of the test split")
    sv.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine)")
    sv.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    sv.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (again for another; '*': any). By default only the names "
        "of --host are answered, so that no web page elsewhere reaches the server through DNS rebinding",
    )
    _limit_option(sv)
    m = sub.add_parser(
        "migrate-config",
        help="rewrite a config of the earlier dialect (speech.variants, extra_reports, ...) into the present one",
        description="Print (or write) the config in the present dialect: speech, MLMME and Translator models as "
        "variants: entries, their tables as reports: entries. YAML comments are not kept.",
    )
    m.add_argument("config", type=Path, help="the config file")
    m.add_argument("-o", "--output", type=Path, help="write here instead of printing (may be the input file)")
    return parser


def migrate_config(args: argparse.Namespace) -> int:
    import yaml

    from polyvse.config_migration import migrate

    try:
        config = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise InputError(str(args.config), f"cannot read it as YAML ({err})") from None
    if not isinstance(config, dict):
        raise InputError(str(args.config), "the top level is not a mapping of keys")
    text = yaml.safe_dump(migrate(config), sort_keys=False, allow_unicode=True, width=110)
    if args.output:
        from polyvse.io import write_text

        write_text(text, args.output)
    else:
        sys.stdout.write(text)
    return 0


def query(args: argparse.Namespace) -> int:
    from polyvse import query as q

    if args.k < 1:
        raise InputError("-k", f"expected a positive number of results, got {args.k}")
    for flag in ("text", "lang"):
        _utf8(f"--{flag}", getattr(args, flag))
    if args.sheet is not None and args.sheet.is_dir():
        raise InputError("--sheet", f"{args.sheet} is a directory, not a PNG file to write")
    limits = parse_limits(args.limit)
    tm = q.open_model(args.model)
    joint = isinstance(tm, q.JointQueryModel)
    spoken = isinstance(tm, q.SpokenModel) and not joint
    if args.text is not None or args.audio is not None:
        if not args.lang:
            raise InputError("--lang", f"a --{'text' if args.text is not None else 'audio'} query needs its language")
        if args.text is not None and spoken:
            raise InputError("--text", "a grounded-speech model hears speech: give --audio FILE.wav")
        if args.audio is not None and not (spoken or joint):
            raise InputError("--audio", "a text model reads text: give --text, or a model of results/{dataset}/speech/")
        if args.audio is not None and joint and not tm.langs:
            raise InputError("--audio", "this joint model was trained on written captions only: give --text")
        if args.audio is not None:
            vector = q.embed_audio(tm, args.audio, args.lang, limits)
            shown = f"spoken {args.audio} ({args.lang})"
        else:
            vector = q.embed_joint_text(tm, args.text, args.lang) if joint else q.embed_text(tm, args.text, args.lang)
            shown = f'"{args.text}" ({args.lang})'
        if args.images:
            hits, searched = q.search_folder(tm, args.images, vector, args.k, limits)
        else:
            index = q.test_images(tm)
            hits, searched = q.top_k(vector, index, args.k), len(index.ids)
    else:
        vector = q.embed_image_file(tm, args.image, limits)
        if args.images:
            hits, searched = q.search_folder(tm, args.images, vector, args.k, limits)
        else:
            index = q.test_captions_of(tm) if joint else q.test_utterances(tm) if spoken else q.test_captions(tm)
            hits, searched = q.top_k(vector, index, args.k), len(index.ids)
        shown = str(args.image)
    if args.json:
        print(
            json.dumps(
                {"model": str(args.model), "query": shown, "results": [h.__dict__ for h in hits]},
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        print(f"{shown} → top {len(hits)} of {searched} in {args.images or 'the test split'}:")
        for h in hits:
            print(f"{h.rank:3d}  {h.score:+.3f}  {h.id}  {h.path or h.audio or h.text}")
    if args.sheet:
        from polyvse.report.sheet import query_sheet

        try:
            query_sheet(args.sheet, args.text if args.audio is None else shown, args.image, hits)
        except OSError as err:
            raise InputError("--sheet", f"cannot write {args.sheet} ({err.strerror or err})") from None
        print(f"sheet: {args.sheet}", file=sys.stderr)
    return 0


def index(args: argparse.Namespace) -> int:
    from polyvse import query as q

    limits = parse_limits(args.limit)
    vectors, names = q.index_folder(q.open_model(args.model), args.folder, limits=limits)
    print(f"{args.folder}: {len(names)} images indexed in {vectors.directory}")
    return 0


def serve(args: argparse.Namespace) -> int:
    from polyvse.serve import serve as run_server

    if not 0 < args.port < 65536:
        raise InputError("--port", f"expected a port from 1 to 65535, got {args.port}")
    limits = parse_limits(args.limit)
    run_server(args.model, args.images, args.host, args.port, limits, args.allow_host)
    return 0


def _utf8(flag: str, value: str | None) -> None:
    """A command-line value whose bytes are not UTF-8 reaches Python as lone surrogates: refused by name."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise InputError(
                flag, f"not UTF-8 text (bytes {os.fsencode(err.object[err.start : err.end])!r} at {err.start})"
            ) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # a result's file name that is not UTF-8 is printed escaped, not a UnicodeEncodeError
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    commands = {"query": query, "index": index, "serve": serve, "migrate-config": migrate_config}
    try:
        return commands[args.command](args)
    except InputError as err:
        print(f"polyvse: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
