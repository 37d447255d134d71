"""``dshkit schemas export DIR``: the packaged JSON Schemas as files at the paths their ``$id``
names, plus the catalog, so that a validator in any language resolves every ``$ref`` from
DIR without fetching the ``$id`` host."""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlsplit

from . import exits
from .atomic import write_atomic
from .options import add_json
from .report import Refusal, Reporter, io_error

CATALOG = "catalog.json"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Work with the JSON Schemas (draft 2020-12) the installed dshkit "
                          "ships.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = sub.add_parser(
        "export", help="write every schema and the catalog to a folder",
        description="Write every schema of schemas/catalog.json into DIR at the path its $id "
        "names (https://dshkit.dev/schemas/session/v0/envelope.json becomes "
        "DIR/schemas/session/v0/envelope.json), and the catalog as DIR/schemas/catalog.json, "
        "so that a validator resolves each $ref from DIR, offline.")
    export.add_argument("dir", type=Path, metavar="DIR", help="the folder to write to (made "
                        "if missing; must be empty unless --force)")
    export.add_argument("--force", action="store_true", help="write into a folder that is "
                        "not empty (files of the same names are replaced, nothing is removed)")
    add_json(export)


def _files() -> list[tuple[str, str]]:
    """(path under DIR, text) of every catalogued schema, then of the catalog."""
    from .. import schemas

    root = files(schemas.__name__)
    out = [(urlsplit(entry["$id"]).path.lstrip("/"),
            root.joinpath(entry["path"]).read_text(encoding="utf-8"))
           for entry in schemas.catalog()]
    base = urlsplit(schemas.SCHEMA_BASE).path.strip("/")
    out.append((f"{base}/{CATALOG}", root.joinpath(CATALOG).read_text(encoding="utf-8")))
    return out


def _check_dir(target: Path, force: bool) -> None:
    if target.exists() and not target.is_dir():
        raise io_error(str(target), "not a directory; name a folder to export into")
    if target.is_dir() and not force and any(target.iterdir()):
        raise Refusal("USAGE", f"{target}: the folder is not empty; name an empty or new "
                      "folder, or pass --force to write into it (files of the same names are "
                      "replaced)", exit_code=exits.USAGE, path=str(target), flag="--force",
                      details={"dir": str(target)})


def run(args: argparse.Namespace, out: Reporter) -> int:
    target: Path = args.dir
    _check_dir(target, args.force)
    written = 0
    for relative, text in _files():
        path = target / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise io_error(str(path.parent), str(exc.strerror or exc)) from None
        write_atomic(path, text)
        written += 1
    if out.json:
        out.emit({"ok": True, "written": written, "dir": str(target)})
    else:
        out.say(f"{target}: wrote {written} files ({written - 1} schemas and the catalog); "
                f"resolve https://dshkit.dev/<path> to {target}/<path>")
    return exits.OK
