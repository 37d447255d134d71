"""The dshkit JSON Schemas (draft 2020-12) and an offline loader for them.

The schema files ship inside this package (``session/v0/**.json`` plus ``catalog.json``) and
are read with :func:`importlib.resources.files`, so the loader works the same from a source
checkout and from an installed wheel. Every schema has an absolute ``$id`` under
:data:`SCHEMA_BASE`; cross-file ``$ref`` s use those URIs (relative refs resolve against the
``$id``). :func:`registry` holds all of them and never touches the network: a reference to
any other URI fails with :class:`SchemaNotFoundError`.

Names accepted by :func:`load` and :func:`validator`: an absolute URI
(``https://dshkit.dev/schemas/session/v0/envelope.json``, optionally with a JSON-pointer
fragment such as ``#/$defs/data``) or a path relative to :data:`SCHEMA_BASE`
(``session/v0/envelope.json``, ``session/v0/events/turn-start.json#/$defs/data``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, cast
from urllib.parse import urldefrag

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.protocols import Validator

__all__ = [
    "SCHEMA_BASE",
    "SchemaNotFoundError",
    "catalog",
    "errors",
    "load",
    "registry",
    "schema_uris",
    "validator",
]

#: Every dshkit schema ``$id`` starts with this prefix; relative names are resolved against it.
SCHEMA_BASE = "https://dshkit.dev/schemas/"

_CATALOG = "catalog.json"


class SchemaNotFoundError(LookupError):
    """A schema name or URI that is not one of the packaged schemas (nothing is fetched)."""


def _root() -> Traversable:
    return files(__package__ or __name__)


def _walk(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            if not child.name.startswith(("_", ".")):
                yield from _walk(child, rel + "/")
        elif child.name.endswith(".json") and rel != _CATALOG:
            yield rel, child


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """Every packaged schema file, keyed by its ``$id`` (checked to match its location)."""
    documents: dict[str, dict[str, Any]] = {}
    for rel, entry in _walk(_root(), ""):
        contents = json.loads(entry.read_text(encoding="utf-8"))
        if not isinstance(contents, dict):
            raise ValueError(f"schema file {rel} is not a JSON object")
        expected = SCHEMA_BASE + rel
        if contents.get("$id") != expected:
            raise ValueError(
                f"schema file {rel} has $id {contents.get('$id')!r}, expected {expected!r}"
            )
        documents[expected] = contents
    return documents


def _absolute(uri_or_relpath: str) -> str:
    if "://" in uri_or_relpath or uri_or_relpath.startswith("urn:"):
        return uri_or_relpath
    return SCHEMA_BASE + uri_or_relpath.lstrip("/")


def schema_uris() -> list[str]:
    """The ``$id`` of every packaged schema file, sorted."""
    return sorted(_documents())


def load(uri_or_relpath: str) -> dict[str, Any]:
    """Return the contents of one schema file (a fresh deep copy; a fragment is ignored)."""
    uri, _fragment = urldefrag(_absolute(uri_or_relpath))
    try:
        document = _documents()[uri]
    except KeyError:
        raise SchemaNotFoundError(f"no packaged dshkit schema with URI {uri!r}") from None
    return cast(dict[str, Any], json.loads(json.dumps(document)))


def _retrieve(uri: str) -> referencing.Resource[Any]:
    raise SchemaNotFoundError(
        f"schema {uri!r} is not packaged with dshkit; network retrieval is disabled"
    )


@cache
def registry() -> referencing.Registry[Any]:
    """A registry of every packaged schema (draft 2020-12), crawled; unknown URIs raise."""
    spec = referencing.jsonschema.DRAFT202012
    resources = [(uri, spec.create_resource(doc)) for uri, doc in _documents().items()]
    # Registry is an attrs class whose ``retrieve`` alias mypy's attrs support does not see
    make = cast("Callable[..., referencing.Registry[Any]]", referencing.Registry)
    empty = make(retrieve=_retrieve)
    return empty.with_resources(resources).crawl()


@cache
def _validator(uri: str) -> Validator:
    base, fragment = urldefrag(uri)
    if base not in _documents():
        raise SchemaNotFoundError(f"no packaged dshkit schema with URI {base!r}")
    schema: dict[str, Any] = _documents()[base] if not fragment else {"$ref": uri}
    if fragment:
        try:
            registry().resolver().lookup(uri)
        except referencing.exceptions.Unresolvable as exc:
            raise SchemaNotFoundError(f"cannot resolve {uri!r} in the packaged schemas") from exc
    return cast(
        Validator,
        Draft202012Validator(
            schema,
            registry=registry(),
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        ),
    )


def validator(uri_or_relpath: str) -> Validator:
    """A cached Draft 2020-12 validator for a packaged schema (or a fragment of one).

    It resolves references only through :func:`registry` and checks ``format``.
    """
    return _validator(_absolute(uri_or_relpath))


def errors(uri_or_relpath: str, instance: Any) -> list[ValidationError]:
    """Every validation error of ``instance`` (an empty list when it is valid).

    Errors are returned as values, sorted by instance path then message; only an unknown
    schema name raises (:class:`SchemaNotFoundError`).
    """
    found = validator(uri_or_relpath).iter_errors(instance)
    return sorted(found, key=lambda e: (list(map(str, e.absolute_path)), e.message))


def catalog() -> list[dict[str, Any]]:
    """The entries of ``catalog.json``: ``{"$id", "path", "title", "layer"}`` per schema."""
    contents = json.loads(_root().joinpath(_CATALOG).read_text(encoding="utf-8"))
    return cast(list[dict[str, Any]], contents["schemas"])
