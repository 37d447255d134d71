"""The divergence list of an implementation, from its baseline and the vectors:
``python -m dshkit.conformance.divergences BASELINE [--spec DIR] [--check PAGE | --output PAGE]``.

A baseline entry with status ``failed`` whose reason reads

    <Name> divergence [<class>]: <what the implementation does> (divergence note at <REQ-ID>)

is a documented divergence: the implementation differs from the specification on purpose or
by its nature, the class groups the cases that differ for one reason, and the specification
carries a ``> **Divergence.**`` note at (after) requirement ``<REQ-ID>`` saying why it asks
for something else. :func:`collect` pairs every such entry with its case and that note;
:func:`render` writes the Markdown page (``spec/divergences.md`` for DSH). Without
``--check`` or ``--output`` the page goes to standard output; ``--check`` exits 1 when the
page on disk differs from what the baseline and the vectors give.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .vectors import Case, load_cases

__all__ = ["REASON", "Divergence", "DivergenceError", "classes_of", "collect", "main",
           "parse_reason", "render"]

#: ``<Name> divergence [<class>]: <behaviour> (divergence note at <REQ-ID>)``
REASON = re.compile(r"^(?P<name>\S+) divergence \[(?P<cls>[a-z0-9][a-z0-9-]*)\]: "
                    r"(?P<behaviour>.+) \(divergence note at (?P<note>[A-Z]{2,4}-[A-Z]{2,5}-\d{3})\)$",
                    re.DOTALL)
_ANCHOR = "{{#{}}}"
_REQUIREMENT_START = re.compile(r"^\*\*[A-Z]{2,4}-[A-Z]{2,5}-\d{3}\*\*\{#")
_NOTE_START = "> **Divergence.**"
_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|/)(?P<target>[^)\s]*)\)")


class DivergenceError(ValueError):
    """The baseline, a case or a divergence note is missing or malformed (code ``DIVERGENCE``)."""

    code = "DIVERGENCE"


@dataclass(frozen=True, slots=True)
class Reason:
    implementation: str
    cls: str
    behaviour: str
    note: str


@dataclass(frozen=True, slots=True)
class Divergence:
    case: Case
    reason: Reason
    note_file: str  # the chapter of the note, relative to the spec root (POSIX)
    note: str  # the note's text, its links relative to the spec root

    @property
    def cls(self) -> str:
        return self.reason.cls


def parse_reason(reason: str) -> Reason | None:
    """The parts of a divergence reason, or None when the text is not one."""
    match = REASON.match(reason.strip())
    if match is None:
        return None
    return Reason(match["name"], match["cls"], match["behaviour"].strip(), match["note"])


def _requirement_files(spec: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(spec.rglob("*.md")):
        for anchor in re.findall(r"\{#([A-Z]{2,4}-[A-Z]{2,5}-\d{3})\}", path.read_text("utf-8")):
            found.setdefault(anchor, path)
    return found


def _rebase(text: str, chapter: PurePosixPath) -> str:
    """Links of a note written in ``chapter``, made relative to the spec root."""
    folder = chapter.parent

    def fix(match: re.Match[str]) -> str:
        target = match["target"]
        if target.startswith("#"):
            return f"]({chapter.as_posix()}{target})"
        parts: list[str] = list(folder.parts)
        for piece in target.split("/"):
            if piece == "..":
                if parts:
                    parts.pop()
            elif piece != ".":
                parts.append(piece)
        return "](" + "/".join(parts) + ")"

    return _LINK.sub(fix, text)


def _note(path: Path, requirement: str, spec: Path) -> str:
    """The first Divergence note after ``requirement`` in its chapter, as one paragraph."""
    lines = path.read_text("utf-8").splitlines()
    anchor = _ANCHOR.format(requirement)
    start = next((i for i, line in enumerate(lines) if anchor in line), None)
    if start is None:
        raise DivergenceError(f"{requirement} is not defined in {path}")
    collected: list[str] = []
    for line in lines[start + 1:]:
        if collected:
            if not line.startswith(">"):
                break
            collected.append(line[1:].strip())
        elif line.startswith(_NOTE_START):
            collected.append(line[len(_NOTE_START):].strip())
    if not collected:
        raise DivergenceError(f"no Divergence note follows {requirement} in {path}")
    chapter = PurePosixPath(path.relative_to(spec).as_posix())
    return _rebase(" ".join(part for part in collected if part), chapter)


def _entries(baseline: Any) -> list[dict[str, Any]]:
    if not isinstance(baseline, dict) or not isinstance(baseline.get("expectedFailures"), list):
        raise DivergenceError("the baseline has no expectedFailures list")
    return [e for e in baseline["expectedFailures"] if isinstance(e, dict)]


def collect(baseline: Any, spec: Path, cases: Iterable[Case] | None = None) -> list[Divergence]:
    """Every documented divergence of a baseline document, in baseline order."""
    by_id = {c.id: c for c in (cases if cases is not None else load_cases())}
    files = _requirement_files(spec)
    out: list[Divergence] = []
    for entry in _entries(baseline):
        if entry.get("status") != "failed" or "property" in entry:
            continue  # a property's failure names its class in its reason, but has no case
        reason = parse_reason(str(entry.get("reason", "")))
        if reason is None:
            raise DivergenceError(f"{entry.get('id')}: the reason is not a divergence reason")
        case = by_id.get(str(entry.get("id")))
        if case is None:
            raise DivergenceError(f"{entry.get('id')}: no case of the kit has this id")
        path = files.get(reason.note)
        if path is None:
            raise DivergenceError(f"{case.id}: requirement {reason.note} is not in {spec}")
        out.append(Divergence(case, reason, path.relative_to(spec).as_posix(),
                              _note(path, reason.note, spec)))
    return out


def classes_of(divergences: Iterable[Divergence]) -> dict[str, list[Divergence]]:
    """Divergences grouped by class, classes in order of first appearance."""
    grouped: dict[str, list[Divergence]] = {}
    for divergence in divergences:
        grouped.setdefault(divergence.cls, []).append(divergence)
    return grouped


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _expected(case: Case) -> str:
    expect = case.expect
    if expect.get("valid") is False:
        code = (expect.get("error") or {}).get("code")
        return f"refused, `{code}`" if code else "refused"
    return "accepted"


def render(divergences: Sequence[Divergence], *, implementation: str = "DSH",
           source: str = "harnesses/dsh/baseline.json") -> str:
    """The Markdown page listing ``divergences`` by class."""
    grouped = classes_of(divergences)
    lines = [
        f"# Divergences from {implementation}",
        "",
        f"Every case of the conformance kit on which {implementation} and this specification "
        "differ, grouped by the reason they differ. For each class: what "
        f"{implementation} does, the requirement it differs from, and the specification's "
        "reason for asking otherwise (its `Divergence` note). Each case is tagged "
        f"`{implementation.lower()}-divergence` in the vectors and listed as an expected "
        f"failure in `{source}`.",
        "",
        f"This page is generated from that baseline and the vectors by "
        f"`python -m dshkit.conformance.divergences {source}`; a test checks that it is up "
        "to date. Do not edit it by hand.",
        "",
        f"{len(divergences)} cases in {len(grouped)} classes:",
        "",
        "| Class | Cases | Requirements |",
        "| --- | ---: | --- |",
    ]
    for cls, members in grouped.items():
        notes = sorted({d.reason.note for d in members})
        links = ", ".join(f"[{n}]({next(d.note_file for d in members if d.reason.note == n)}"
                          f"#{n})" for n in notes)
        lines.append(f"| [`{cls}`](#{cls}) | {len(members)} | {links} |")
    for cls, members in grouped.items():
        lines += ["", f"## `{cls}` {{#{cls}}}", ""]
        seen_notes: list[tuple[str, str, str]] = []
        for d in members:
            key = (d.reason.note, d.note_file, d.note)
            if key not in seen_notes:
                seen_notes.append(key)
        for note, chapter, text in seen_notes:
            lines += [f"Why the specification differs ([{note}]({chapter}#{note})): {text}", ""]
        lines += [f"| Case | Specification | What {implementation} does |", "| --- | --- | --- |"]
        for d in members:
            lines.append(f"| `{d.case.id}`: {_cell(d.case.description)} | {_expected(d.case)} "
                         f"| {_cell(d.reason.behaviour)} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dshkit.conformance.divergences",
                                     description="Render the divergence list of a baseline.")
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--spec", type=Path, default=Path("spec"))
    parser.add_argument("--implementation", default="DSH")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", type=Path, metavar="PAGE")
    group.add_argument("--output", type=Path, metavar="PAGE")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        document = json.loads(args.baseline.read_text(encoding="utf-8"))
        page = render(collect(document, args.spec), implementation=args.implementation,
                      source=args.baseline.as_posix())
        if args.check is not None:
            if args.check.read_text(encoding="utf-8") != page:
                print(f"{args.check} is out of date: run python -m dshkit.conformance."
                      f"divergences {args.baseline} --output {args.check}", file=sys.stderr)
                return 1
            return 0
        if args.output is not None:
            args.output.write_text(page, encoding="utf-8")
        else:
            sys.stdout.write(page)
    except (OSError, ValueError) as exc:
        code = getattr(exc, "code", "IO")
        print(f"error [{code}]: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
