"""What changed between two snapshots of the requirement index, and whether the changelog
says so.

A snapshot is a ``requirements.json`` (``spec/requirements.json`` now, and one per release
under ``spec/releases/<version>/requirements.json``). Between two snapshots an id is *added*
(only in the newer), *withdrawn* (only in the older), *changed* (in both, with a different
``digest``: its normalised text changed) or *retitled* (same digest, different title). An id
that disappears while its exact text reappears under a new id was *renumbered*; an id that was
withdrawn in one release and is present again later was *reused*. Both break the promise of
``spec/index.md`` and are always problems.

``CHANGELOG.md`` has one ``## [<version>]`` section per release (and ``## [Unreleased]``), each
with a ``### Specification`` part whose ``#### Added``, ``#### Changed`` and ``#### Withdrawn``
lists name requirement ids (the first id of each bullet). :func:`check` compares them with the
snapshots, both ways: a change the changelog does not list, or an id it lists that did not
change that way, is a problem.

``python -m dshkit.spec_changes OLD.json NEW.json`` prints the differences (``--markdown`` as a
changelog stanza); ``python -m dshkit.spec_changes --check`` checks the changelog against the
recorded releases and the current specification. Exit status: 0 fine, 1 problems found, 2 the
inputs could not be read.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshkit.spec_index import SpecIndexError, build_index, index_document
from dshkit.spec_version import SPEC_VERSION

UNRELEASED = "Unreleased"
KINDS: tuple[str, ...] = ("added", "changed", "withdrawn")

_ID = re.compile(r"\b[A-Z]{2,4}-[A-Z]{2,5}-\d{3}\b")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_SECTION = re.compile(r"^## \[(?P<label>[^\]]+)\]")
_PART = re.compile(r"^### (?P<name>.+?)\s*$")
_KIND = re.compile(r"^#### (?P<name>.+?)\s*$")


@dataclass(frozen=True, slots=True)
class Problem:
    """One way the changelog or the snapshots break the rules, with a stable code."""

    code: str
    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.code}: {self.message}"


class SnapshotError(ValueError):
    """A snapshot or changelog cannot be read."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: str
    requirements: Mapping[str, Mapping[str, Any]]
    source: str


@dataclass(slots=True)
class Changes:
    """The differences from one snapshot to the next, ids sorted."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    retitled: list[str] = field(default_factory=list)
    renumbered: list[tuple[str, str]] = field(default_factory=list)

    def of(self, kind: str) -> list[str]:
        ids: list[str] = getattr(self, kind)
        return ids

    def empty(self) -> bool:
        return not (self.added or self.changed or self.withdrawn or self.retitled)


def version_key(version: str) -> tuple[int, int, int]:
    match = _VERSION.match(version)
    if match is None:
        raise SnapshotError(f"{version!r} is not a MAJOR.MINOR.PATCH version")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def snapshot_from(document: Any, source: str) -> Snapshot:
    """A snapshot from a parsed ``requirements.json``; every entry needs an id and a digest."""
    if not isinstance(document, dict) or not isinstance(document.get("requirements"), list):
        raise SnapshotError(f"{source}: not a requirement index (no 'requirements' list)")
    version = document.get("specVersion")
    if not isinstance(version, str):
        raise SnapshotError(f"{source}: 'specVersion' is missing")
    entries: dict[str, Mapping[str, Any]] = {}
    for position, entry in enumerate(document["requirements"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise SnapshotError(f"{source}: requirements[{position}] has no id")
        if not isinstance(entry.get("digest"), str):
            raise SnapshotError(f"{source}: requirement {entry['id']} has no digest; "
                                "regenerate it with python -m dshkit.spec_index")
        entries[entry["id"]] = entry
    return Snapshot(version=version, requirements=entries, source=source)


def load_snapshot(path: Path) -> Snapshot:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SnapshotError(f"{path}: cannot read ({error})") from error
    return snapshot_from(document, str(path))


def diff(old: Snapshot, new: Snapshot) -> Changes:
    """What changed from ``old`` to ``new``."""
    changes = Changes()
    for req_id in sorted(set(old.requirements) | set(new.requirements)):
        before, after = old.requirements.get(req_id), new.requirements.get(req_id)
        if before is None:
            changes.added.append(req_id)
        elif after is None:
            changes.withdrawn.append(req_id)
        elif before["digest"] != after["digest"]:
            changes.changed.append(req_id)
        elif before.get("title") != after.get("title"):
            changes.retitled.append(req_id)
    added_by_digest = {new.requirements[i]["digest"]: i for i in changes.added}
    for req_id in changes.withdrawn:
        moved_to = added_by_digest.get(old.requirements[req_id]["digest"])
        if moved_to is not None:
            changes.renumbered.append((req_id, moved_to))
    return changes


@dataclass(slots=True)
class ChangelogSection:
    label: str
    line: int
    ids: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> id -> line


def parse_changelog(text: str) -> dict[str, ChangelogSection]:
    """The ``## [label]`` sections of a changelog with the ids of their specification lists."""
    sections: dict[str, ChangelogSection] = {}
    current: ChangelogSection | None = None
    in_spec = False
    kind: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if (section := _SECTION.match(line)) is not None:
            label = section.group("label")
            if label in sections:
                raise SnapshotError(f"CHANGELOG.md:{number}: a second section [{label}]")
            current = ChangelogSection(label, number)
            sections[label] = current
            in_spec, kind = False, None
        elif line.startswith("## "):
            current, in_spec, kind = None, False, None
        elif (part := _PART.match(line)) is not None:
            in_spec = part.group("name").lower().startswith("specification")
            kind = None
        elif (heading := _KIND.match(line)) is not None:
            name = heading.group("name").lower()
            kind = name if name in KINDS else None
            if in_spec and current is not None and kind is None:
                raise SnapshotError(f"CHANGELOG.md:{number}: unknown list '{heading.group('name')}'"
                                    f"; a specification part has {', '.join(KINDS)}")
        elif (current is not None and in_spec and kind is not None
              and line.lstrip().startswith(("- ", "* "))):
            found = _ID.search(line)
            if found is not None:
                current.ids.setdefault(kind, {})[found.group(0)] = number
    return sections


def _compare(changes: Changes, section: ChangelogSection | None, label: str,
             between: str) -> list[Problem]:
    problems: list[Problem] = []
    for old_id, new_id in changes.renumbered:
        problems.append(Problem("SPEC_ID_RENUMBERED", between,
                                f"{old_id} was renumbered to {new_id} (same text); ids are never "
                                f"renumbered: keep {old_id}"))
    if section is None:
        if not changes.empty() or label != UNRELEASED:
            problems.append(Problem("CHANGELOG_SECTION_MISSING", "CHANGELOG.md",
                                    f"no section ## [{label}] for the changes {between}"))
        return problems
    where = f"CHANGELOG.md:{section.line}"
    for kind in KINDS:
        actual = set(changes.of(kind))
        listed = section.ids.get(kind, {})
        for req_id in sorted(actual - set(listed)):
            problems.append(Problem(f"CHANGELOG_{kind.upper()}_MISSING", where,
                                    f"{req_id} was {kind} {between}, and section [{label}] does "
                                    f"not list it under '#### {kind.capitalize()}'"))
        for req_id in sorted(set(listed) - actual):
            problems.append(Problem(f"CHANGELOG_{kind.upper()}_FALSE", f"CHANGELOG.md:{listed[req_id]}",
                                    f"section [{label}] lists {req_id} as {kind}, but it was not "
                                    f"{kind} {between}"))
    return problems


def _reuse(history: Sequence[Snapshot]) -> list[Problem]:
    problems: list[Problem] = []
    gone: dict[str, str] = {}
    seen: set[str] = set()
    for snapshot in history:
        ids = set(snapshot.requirements)
        for req_id in sorted(ids & set(gone)):
            problems.append(Problem("SPEC_ID_REUSED", snapshot.source,
                                    f"{req_id} was withdrawn in {gone[req_id]} and is used again; "
                                    "ids are never reused: choose a new id"))
        for req_id in seen - ids:
            gone.setdefault(req_id, snapshot.version)
        seen |= ids
    return problems


def releases(releases_dir: Path) -> list[Snapshot]:
    """The recorded release snapshots, oldest first; each must be stamped with its folder's
    version."""
    found: list[Snapshot] = []
    if not releases_dir.is_dir():
        return found
    for folder in releases_dir.iterdir():
        if folder.is_dir():
            version_key(folder.name)
            snapshot = load_snapshot(folder / "requirements.json")
            if snapshot.version != folder.name:
                raise SnapshotError(f"{snapshot.source}: specVersion {snapshot.version} in the "
                                    f"folder of release {folder.name}")
            found.append(snapshot)
    return sorted(found, key=lambda s: version_key(s.version))


def check(history: Sequence[Snapshot], current: Snapshot, changelog: str) -> list[Problem]:
    """Every problem of the changelog against the recorded releases (oldest first) and the
    current specification."""
    sections = parse_changelog(changelog)
    problems: list[Problem] = []
    for earlier, later in itertools.pairwise(history):
        problems += _compare(diff(earlier, later), sections.get(later.version), later.version,
                             f"from {earlier.version} to {later.version}")
    if history:
        if history[0].version not in sections:
            problems.append(Problem("CHANGELOG_SECTION_MISSING", "CHANGELOG.md",
                                    f"no section ## [{history[0].version}] for the first "
                                    "recorded release"))
        last = history[-1]
        if version_key(current.version) < version_key(last.version):
            problems.append(Problem("SPEC_VERSION_OLDER", current.source,
                                    f"specVersion {current.version} is older than the last "
                                    f"release {last.version}"))
        label = current.version if current.version != last.version else UNRELEASED
        problems += _compare(diff(last, current), sections.get(label), label,
                             f"since {last.version}")
    problems += _reuse([*history, current])
    return problems


def changelog_stanza(changes: Changes) -> str:
    """The ``### Specification`` part that records ``changes``, to paste into CHANGELOG.md."""
    lines = ["### Specification", ""]
    for kind in KINDS:
        ids = changes.of(kind)
        if ids:
            lines += [f"#### {kind.capitalize()}", "", *(f"- {i}" for i in ids), ""]
    return "\n".join(lines)


def _print_changes(changes: Changes, old: Snapshot, new: Snapshot) -> None:
    print(f"requirements {old.version} ({old.source}) -> {new.version} ({new.source})")
    for kind in (*KINDS, "retitled"):
        ids = changes.of(kind)
        print(f"{kind}: {len(ids)}" + (f" ({', '.join(ids)})" if ids else ""))
    for old_id, new_id in changes.renumbered:
        print(f"renumbered: {old_id} -> {new_id}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dshkit.spec_changes",
        description="Diff two requirements.json snapshots, or check CHANGELOG.md against the "
                    "recorded releases.")
    parser.add_argument("old", nargs="?", type=Path, help="older requirements.json")
    parser.add_argument("new", nargs="?", type=Path, help="newer requirements.json")
    parser.add_argument("--markdown", action="store_true",
                        help="print the differences as a CHANGELOG.md stanza")
    parser.add_argument("--check", action="store_true",
                        help="check CHANGELOG.md against spec/releases/ and spec/")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="source tree with spec/ and CHANGELOG.md (default: .)")
    args = parser.parse_args(argv)
    try:
        if args.check:
            root: Path = args.root
            current = snapshot_from(index_document(build_index(root / "spec")), "spec/")
            problems = check(releases(root / "spec" / "releases"), current,
                             (root / "CHANGELOG.md").read_text(encoding="utf-8"))
            for problem in problems:
                print(f"spec_changes: {problem}", file=sys.stderr)
            if not problems:
                print(f"spec_changes: CHANGELOG.md records every requirement change "
                      f"(spec {SPEC_VERSION})")
            return 1 if problems else 0
        if args.old is None or args.new is None:
            parser.print_usage(sys.stderr)
            print("spec_changes: give OLD.json NEW.json, or --check", file=sys.stderr)
            return 2
        old, new = load_snapshot(args.old), load_snapshot(args.new)
    except (SnapshotError, SpecIndexError, OSError) as error:
        print(f"spec_changes: {error}", file=sys.stderr)
        return 2
    changes = diff(old, new)
    if args.markdown:
        print(changelog_stanza(changes))
    else:
        _print_changes(changes, old, new)
    for old_id, new_id in changes.renumbered:
        print(f"spec_changes: SPEC_ID_RENUMBERED: {old_id} -> {new_id}", file=sys.stderr)
    return 1 if changes.renumbered else 0


if __name__ == "__main__":
    sys.exit(main())
