"""The ``polyvse`` command: ``polyvse query`` searches a trained model (polyvse.query);
``polyvse migrate-config`` rewrites a config of the earlier dialect (polyvse.config_migration)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from polyvse.errors import InputError


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
            vector = q.embed_audio(tm, args.audio, args.lang)
            shown = f"spoken {args.audio} ({args.lang})"
        else:
            vector = q.embed_joint_text(tm, args.text, args.lang) if joint else q.embed_text(tm, args.text, args.lang)
            shown = f'"{args.text}" ({args.lang})'
        index = q.folder_images(tm, args.images) if args.images else q.test_images(tm)
    else:
        vector = q.embed_image_file(tm, args.image)
        if args.images:
            index = q.folder_images(tm, args.images)
        elif joint:
            index = q.test_captions_of(tm)
        else:
            index = q.test_utterances(tm) if spoken else q.test_captions(tm)
        shown = str(args.image)
    hits = q.top_k(vector, index, args.k)
    if args.json:
        print(
            json.dumps(
                {"model": str(args.model), "query": shown, "results": [h.__dict__ for h in hits]},
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        print(f"{shown} → top {len(hits)} of {len(index.ids)} in {args.images or 'the test split'}:")
        for h in hits:
            print(f"{h.rank:3d}  {h.score:+.3f}  {h.id}  {h.path or h.audio or h.text}")
    if args.sheet:
        from polyvse.report.sheet import query_sheet

        query_sheet(args.sheet, args.text if args.audio is None else shown, args.image, hits)
        print(f"sheet: {args.sheet}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return migrate_config(args) if args.command == "migrate-config" else query(args)
    except InputError as err:
        print(f"polyvse: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
