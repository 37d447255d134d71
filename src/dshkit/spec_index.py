"""Extract the requirement index from the Markdown specification under ``spec/``.

A requirement is one Markdown paragraph that starts with its id in bold, followed by an
``attr_list`` anchor of the same name and a short title in italics::

    **SES-ENV-004**{#SES-ENV-004} *Sequence number type.* The `seq` member MUST be ...

The level of a requirement is the first of ``MUST NOT``, ``MUST``, ``SHALL``, ``SHOULD NOT``,
``SHOULD``, ``MAY`` that appears in its paragraph (outside inline code). A paragraph with no
such keyword, or an id defined twice, is an error.

A requirement about the ``dshkit`` tool itself (its command line or its Python distribution)
rather than about what an implementation of the formats does has the **scope** ``tool``: its
id group is ``CLI`` or ``PKG`` and its anchor carries the class ``.tool``::

    **QRY-CLI-001**{#QRY-CLI-001 .tool} *Exit status.* `dshkit query` MUST exit ...

Every other requirement has the scope ``implementation``. A ``.tool`` class on another group,
a ``CLI``/``PKG`` id without it, or any other class is an error.

Every entry of the index carries the rendered ``url`` of the requirement (beside its source
``anchor``) and a ``digest``: the sha256 of its normalised text (:func:`text_digest`), so that a
change of meaning between two snapshots is visible to ``python -m dshkit.spec_changes``.

Run ``python -m dshkit.spec_index [--check] [spec_dir] [out_json]`` to write
``spec/requirements.json``, or with ``--check`` to fail (exit status 1) when it is stale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshkit.spec_version import SPEC_VERSION, requirement_url

__all__ = [
    "LEVELS",
    "SCOPES",
    "SPEC_VERSION",
    "TOOL_GROUPS",
    "Requirement",
    "SpecIndexError",
    "build_index",
    "index_document",
    "main",
    "parse_requirements",
    "render",
    "text_digest",
]

#: Requirement levels, in the order in which a longer keyword wins at the same position.
LEVELS: tuple[str, ...] = ("MUST NOT", "MUST", "SHALL", "SHOULD NOT", "SHOULD", "MAY")

_ID = r"[A-Z]{2,4}-[A-Z]{2,5}-\d{3}"
_START = re.compile(rf"^\*\*(?P<id>{_ID})\*\*\{{#")
_DEFINITION = re.compile(
    rf"^\*\*(?P<id>{_ID})\*\*\{{#(?P<anchor>[^}}\s]+)(?P<classes>(?:[ \t]+\.[a-z][a-z-]*)*)"
    r"[ \t]*\}[ \t]+\*(?P<title>[^*\n]+?)\*(?P<dot>\.?)[ \t]*(?P<text>.*)\Z",
    re.DOTALL,
)
#: Requirement scopes: ``implementation`` (the default: what an implementation of the formats
#: and behaviours must do, checked by the conformance kit) and ``tool`` (the ``dshkit``
#: command line and Python distribution themselves, checked by dshkit's own test suite),
#: marked by the class ``.tool`` on the anchor: ``**ADP-CLI-001**{#ADP-CLI-001 .tool}``.
SCOPES: tuple[str, ...] = ("implementation", "tool")
#: The id groups that name the tool: ``CLI`` (a ``dshkit`` command) and ``PKG`` (packaging).
#: A requirement is tool-scoped exactly when its group is one of these (CNF-SCO-001).
TOOL_GROUPS: tuple[str, ...] = ("CLI", "PKG")
_KEYWORD = re.compile(r"\b(MUST\s+NOT|MUST|SHALL|SHOULD\s+NOT|SHOULD|MAY)\b")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(?P<text>.*?)[ \t]*#*[ \t]*$")
_HEADING_ATTRS = re.compile(r"[ \t]*\{[^}]*\}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
_WHITESPACE = re.compile(r"\s+")


class SpecIndexError(ValueError):
    """The specification text breaks the requirement markup rules."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One normative statement of the specification."""

    id: str
    title: str
    level: str
    section: str
    file: str
    text: str
    scope: str = "implementation"

    @property
    def anchor(self) -> str:
        """The link target of the requirement, relative to the specification root."""
        return f"{self.file}#{self.id}"

    @property
    def url(self) -> str:
        """The absolute URL of the requirement on the rendered site."""
        return requirement_url(self.file, self.id)

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the normalised requirement text (see :func:`text_digest`)."""
        return text_digest(self.text)


def text_digest(text: str) -> str:
    """``sha256:<hex>`` of a requirement text after Unicode NFC normalisation and collapsing
    every run of whitespace to one space: re-wrapping a paragraph keeps its digest, changing
    a word does not."""
    normalised = _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()
    return "sha256:" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Block:
    kind: str  # "heading" or "paragraph"
    text: str
    line: int


def _blocks(markdown_text: str) -> Iterator[_Block]:
    """Headings and paragraphs of a Markdown text, skipping fenced code blocks."""
    fence: str | None = None
    paragraph: list[str] = []
    start = 0

    def flush() -> Iterator[_Block]:
        if paragraph:
            yield _Block("paragraph", "\n".join(paragraph), start)
            paragraph.clear()

    for number, line in enumerate(markdown_text.splitlines(), start=1):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) <= {fence[0]}:
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            yield from flush()
            fence = opening.group("fence")
            continue
        heading = _HEADING.match(line)
        if heading is not None:
            yield from flush()
            text = _HEADING_ATTRS.sub("", heading.group("text")).strip()
            yield _Block("heading", text, number)
            continue
        if not line.strip():
            yield from flush()
            continue
        if not paragraph:
            start = number
        paragraph.append(line)
    yield from flush()


def _level(paragraph: str) -> str | None:
    match = _KEYWORD.search(_CODE_SPAN.sub("", paragraph))
    if match is None:
        return None
    return _WHITESPACE.sub(" ", match.group(1))


def _scope(req_id: str, classes: str, where: str) -> str:
    """The scope given by the anchor's classes; only ``.tool`` is known, and it goes with the
    tool id groups and only with them."""
    names = [c.lstrip(".") for c in classes.split()]
    unknown = [n for n in names if n != "tool"]
    if unknown:
        raise SpecIndexError(f"{where}: requirement {req_id} has unknown class(es) "
                             f"{', '.join('.' + n for n in unknown)}; the only class is .tool")
    tool = "tool" in names
    group = req_id.split("-")[1]
    if tool and group not in TOOL_GROUPS:
        raise SpecIndexError(f"{where}: requirement {req_id} is marked .tool, but only the id "
                             f"groups {', '.join(TOOL_GROUPS)} name the dshkit tool")
    if group in TOOL_GROUPS and not tool:
        raise SpecIndexError(f"{where}: requirement {req_id} names the dshkit tool (group "
                             f"{group}) and needs the class .tool: {{#{req_id} .tool}}")
    return "tool" if tool else "implementation"


def parse_requirements(markdown_text: str, source: str) -> list[Requirement]:
    """Parse the requirement paragraphs of one Markdown document, in document order.

    ``source`` names the document (its path relative to the specification root) and becomes
    the ``file`` of every requirement. Raises :class:`SpecIndexError` for a malformed
    requirement paragraph, a paragraph without an RFC 2119 keyword, or an id defined twice.
    """
    requirements: list[Requirement] = []
    seen: dict[str, int] = {}
    section = ""
    for block in _blocks(markdown_text):
        if block.kind == "heading":
            section = block.text
            continue
        if _START.match(block.text) is None:
            continue
        match = _DEFINITION.match(block.text)
        where = f"{source}:{block.line}"
        if match is None:
            raise SpecIndexError(
                f"{where}: malformed requirement paragraph; expected "
                "'**ID**{#ID} *Title.* text'"
            )
        req_id = match.group("id")
        if match.group("anchor") != req_id:
            raise SpecIndexError(
                f"{where}: requirement {req_id} has anchor #{match.group('anchor')}; "
                f"the anchor must be #{req_id}"
            )
        if req_id in seen:
            raise SpecIndexError(
                f"{where}: duplicate requirement id {req_id} (first defined on line "
                f"{seen[req_id]})"
            )
        title = match.group("title").strip().rstrip(".").strip()
        if not title:
            raise SpecIndexError(f"{where}: requirement {req_id} has an empty title")
        level = _level(block.text)
        if level is None:
            raise SpecIndexError(
                f"{where}: requirement {req_id} has no RFC 2119 keyword "
                f"({', '.join(LEVELS)})"
            )
        seen[req_id] = block.line
        text = _WHITESPACE.sub(" ", match.group("text")).strip()
        requirements.append(
            Requirement(id=req_id, title=title, level=level, section=section, file=source,
                        text=text, scope=_scope(req_id, match.group("classes"), where))
        )
    return requirements


def _merge(parts: Iterable[list[Requirement]]) -> list[Requirement]:
    merged: list[Requirement] = []
    where: dict[str, str] = {}
    for requirements in parts:
        for requirement in requirements:
            if requirement.id in where:
                raise SpecIndexError(
                    f"duplicate requirement id {requirement.id}: defined in "
                    f"{where[requirement.id]} and {requirement.file}"
                )
            where[requirement.id] = requirement.file
            merged.append(requirement)
    return merged


def build_index(spec_dir: Path) -> list[Requirement]:
    """All requirements of every ``*.md`` under ``spec_dir``, files sorted by path.

    Requirements keep their document order within each file. Raises
    :class:`SpecIndexError` if an id is defined more than once anywhere.
    """
    root = Path(spec_dir)
    files = sorted(root.rglob("*.md"), key=lambda path: path.relative_to(root).as_posix())
    return _merge(
        parse_requirements(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
        for path in files
    )


def index_document(reqs: Sequence[Requirement]) -> dict[str, Any]:
    """The JSON document written to ``requirements.json``."""
    return {
        "specVersion": SPEC_VERSION,
        "requirements": [
            {
                "id": req.id,
                "title": req.title,
                "level": req.level,
                "section": req.section,
                "file": req.file,
                "anchor": req.anchor,
                "url": req.url,
                "scope": req.scope,
                "digest": req.digest,
            }
            for req in reqs
        ],
    }


def render(document: dict[str, Any]) -> str:
    """Pretty JSON with a two-space indent and a trailing newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m dshkit.spec_index",
        description="Build (or check) the requirement index of the dshkit specification.",
    )
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the index file is missing or stale")
    parser.add_argument("spec_dir", nargs="?", default="spec", type=Path,
                        help="specification directory (default: spec)")
    parser.add_argument("out_json", nargs="?", default=None, type=Path,
                        help="index file (default: <spec_dir>/requirements.json)")
    args = parser.parse_args(argv)
    spec_dir: Path = args.spec_dir
    out_json: Path = args.out_json if args.out_json is not None else spec_dir / "requirements.json"

    if not spec_dir.is_dir():
        print(f"spec_index: {spec_dir} is not a directory", file=sys.stderr)
        return 2
    try:
        requirements = build_index(spec_dir)
    except SpecIndexError as error:
        print(f"spec_index: {error}", file=sys.stderr)
        return 2
    text = render(index_document(requirements))

    if args.check:
        try:
            current = out_json.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"spec_index: {out_json} is stale; run python -m dshkit.spec_index "
                  f"{spec_dir} {out_json}", file=sys.stderr)
            return 1
        print(f"spec_index: {out_json} is up to date ({len(requirements)} requirements)")
        return 0

    out_json.write_text(text, encoding="utf-8")
    print(f"spec_index: wrote {len(requirements)} requirements to {out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
