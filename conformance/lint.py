"""Self-lint of the vectors: ``python -m dshkit.conformance.lint [--write] [--record] [--retire ID]``.

Checks (each problem is one line; an empty list means the vectors are sound):

- every vector file follows ``conformance/v1/vector-file.json``;
- case ids are unique across the kit, well formed and carry their area's prefix;
- every requirement id a case names exists in the specification;
- every case has a recorded digest and its meaning still has that digest (an edited case must
  get a new id; the old id is retired with a tombstone); no recorded id disappears without a
  tombstone, and no tombstoned id is used again;
- the manifest lists exactly the vector files, with their suites and case counts, the kit
  version and the specification version;
- no case names a tool-scoped requirement (CNF-SCO-002: those are proven by dshkit's own
  tests), and the manifest's ``toolVerified`` names only tool-scoped requirements.

``--record`` adds the digests of new cases (it never overwrites a recorded digest);
``--retire ID --reason TEXT [--replaced-by ID]`` moves a recorded digest to the tombstones;
``--write`` regenerates the manifest; with ``--tests DIR`` (default: the ``tests`` folder next
to ``--spec``) it also rescans the tests that name tool-scoped requirements
(:mod:`dshkit.conformance.tooltests`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dshkit import __version__

from .kitdata import DIGEST_ALGORITHM, KIT_NAME, case_digest, digests, manifest, requirements
from .vectors import Case, VectorFile, case_from_json, load_files

__all__ = ["PREFIXES", "build_manifest", "lint", "main"]

CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
#: suite -> case id prefix (kit-contract)
PREFIXES = {"session-log": "ses-", "memory": "mem-", "compaction": "cmp-",
            "session-reference": "ref-", "session-query": "qry-", "goal": "goal-",
            "session-ops": "ses-"}
ADAPTER_PREFIX = "adp-"


def _prefix(suite: str) -> str | None:
    if suite.startswith("adapter-"):
        return ADAPTER_PREFIX
    return PREFIXES.get(suite)


def _cases(files: Sequence[VectorFile]) -> list[Case]:
    return [case_from_json(raw, suite=f.suite, file=f.path) for f in files
            for raw in f.document.get("cases", []) if isinstance(raw, dict) and "id" in raw]


def lint_schema(files: Sequence[VectorFile]) -> list[str]:
    from dshkit import schemas

    problems = []
    for vector_file in files:
        for error in schemas.errors("conformance/v1/vector-file.json", vector_file.document)[:3]:
            where = "/" + "/".join(str(p) for p in error.absolute_path)
            problems.append(f"{vector_file.path}{where}: {error.message[:200]}")
    return problems


def lint_ids(cases: Sequence[Case], known_requirements: set[str] | None,
             tool_requirements: set[str] | None = None) -> list[str]:
    problems = []
    tool = tool_requirements or set()
    counts = Counter(c.id for c in cases)
    problems += [f"{i}: used by {n} cases" for i, n in sorted(counts.items()) if n > 1]
    for case in cases:
        if not CASE_ID.match(case.id):
            problems.append(f"{case.file}: {case.id!r} is not a well-formed case id")
        prefix = _prefix(case.suite)
        if prefix is not None and not case.id.startswith(prefix):
            problems.append(f"{case.file}: {case.id} does not start with {prefix}")
        if not case.requirements:
            problems.append(f"{case.file}: {case.id} names no requirement")
        if known_requirements is not None:
            problems += [f"{case.file}: {case.id} names unknown requirement {r}"
                         for r in case.requirements if r not in known_requirements]
        problems += [f"{case.file}: {case.id} names {r}, a requirement on the dshkit tool; "
                     "tool requirements are checked by dshkit's own tests, not by vectors"
                     for r in case.requirements if r in tool]
    return problems


def lint_digests(cases: Sequence[Case], recorded: dict[str, Any]) -> list[str]:
    problems = []
    by_id = recorded.get("cases", {})
    tombstones = recorded.get("tombstones", {})
    present = {c.id for c in cases}
    for case in cases:
        if case.id in tombstones:
            problems.append(f"{case.file}: {case.id} is a retired id (tombstoned); ids are "
                            "never reused")
            continue
        digest = case_digest(case)
        if case.id not in by_id:
            problems.append(f"{case.file}: {case.id} has no recorded digest; record new cases "
                            "with `python -m dshkit.conformance.lint --record`")
        elif by_id[case.id] != digest:
            problems.append(f"{case.file}: {case.id} changed meaning (digest {digest[:12]}, "
                            f"recorded {by_id[case.id][:12]}); give the changed case a new id "
                            "and retire this one (--retire)")
    for case_id in sorted(set(by_id) - present):
        problems.append(f"{case_id}: recorded, but no case has this id; retire it with "
                        "`python -m dshkit.conformance.lint --retire ID --reason ...`")
    problems += [f"{i}: both recorded and tombstoned" for i in sorted(set(by_id) & set(tombstones))]
    return problems


def build_manifest(files: Sequence[VectorFile], previous: dict[str, Any],
                   tool_verified: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The manifest of ``files``; ``kitVerified`` is kept from ``previous``, and so is
    ``toolVerified`` unless a fresh scan is given."""
    spec = requirements().get("specVersion") or __version__
    versions = dict(previous.get("specVersions", {}))
    versions["dshkit-spec"] = spec
    return {
        "manifestVersion": 1,
        "kit": {"name": KIT_NAME, "version": __version__},
        "specVersions": versions,
        "files": [{"path": f.path, "suite": f.suite,
                   "specVersion": str(f.document.get("specVersion", "")),
                   "cases": len(f.document.get("cases", []))} for f in files],
        "kitVerified": dict(previous.get("kitVerified", {})),
        "toolVerified": dict(tool_verified if tool_verified is not None
                             else previous.get("toolVerified", {})),
    }


def lint_manifest(files: Sequence[VectorFile], current: dict[str, Any],
                  known_requirements: set[str] | None = None,
                  tool_requirements: set[str] | None = None) -> list[str]:
    from dshkit import schemas

    problems = [f"manifest.json: {e.message[:200]}"
                for e in schemas.errors("conformance/v1/manifest.json", current)[:3]]
    expected = build_manifest(files, current)
    if current.get("kit") != expected["kit"]:
        problems.append(f"manifest.json: kit is {current.get('kit')}, expected {expected['kit']}")
    if current.get("files") != expected["files"]:
        problems.append("manifest.json: the file list is stale; regenerate it with "
                        "`python -m dshkit.conformance.lint --write`")
    spec = requirements().get("specVersion")
    if spec and current.get("specVersions", {}).get("dshkit-spec") != spec:
        problems.append(f"manifest.json: specVersions.dshkit-spec is not {spec}")
    problems += [f"{f.path}: specVersion {f.document.get('specVersion')} is not {spec}"
                 for f in files if spec and f.document.get("specVersion") != spec]
    if known_requirements is not None:
        problems += [f"manifest.json: kitVerified names unknown requirement {r}"
                     for r in current.get("kitVerified", {}) if r not in known_requirements]
    if tool_requirements is not None:
        problems += [f"manifest.json: toolVerified names {r}, which is not a tool-scoped "
                     "requirement" for r in current.get("toolVerified", {})
                     if r not in tool_requirements]
    return problems


def lint(files: Sequence[VectorFile] | None = None,
         known_requirements: Iterable[str] | None = None,
         recorded: dict[str, Any] | None = None,
         current_manifest: dict[str, Any] | None = None,
         tool_requirements: Iterable[str] | None = None) -> list[str]:
    """Every problem of the vectors (empty when sound). ``known_requirements`` and
    ``tool_requirements`` default to the kit's requirement index."""
    vector_files = list(files) if files is not None else load_files()
    cases = _cases(vector_files)
    index = requirements().get("requirements", [])
    if known_requirements is None:
        known = {r["id"] for r in index} if index else None
    else:
        known = set(known_requirements)
    if tool_requirements is None:
        tool = {r["id"] for r in index if r.get("scope") == "tool"} if index else None
    else:
        tool = set(tool_requirements)
    return (lint_schema(vector_files) + lint_ids(cases, known, tool)
            + lint_digests(cases, recorded if recorded is not None else digests())
            + lint_manifest(vector_files,
                            current_manifest if current_manifest is not None else manifest(),
                            known, tool))


# -- maintenance commands -----------------------------------------------------------------------

def _dump(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def record(cases: Sequence[Case], recorded: dict[str, Any]) -> list[str]:
    """Add digests of cases without one; return their ids."""
    table = recorded.setdefault("cases", {})
    tombstones = recorded.get("tombstones", {})
    added = [c.id for c in cases if c.id not in table and c.id not in tombstones]
    for case in cases:
        if case.id in added:
            table[case.id] = case_digest(case)
    recorded["cases"] = dict(sorted(table.items()))
    return added


def retire(recorded: dict[str, Any], case_id: str, reason: str,
           replaced_by: Sequence[str] = ()) -> None:
    table = recorded.get("cases", {})
    if case_id not in table:
        raise KeyError(f"{case_id} has no recorded digest")
    entry: dict[str, Any] = {"retired": __version__, "reason": reason,
                             "digest": table.pop(case_id)}
    if replaced_by:
        entry["replacedBy"] = list(replaced_by)
    tombstones = recorded.setdefault("tombstones", {})
    tombstones[case_id] = entry
    recorded["tombstones"] = dict(sorted(tombstones.items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dshkit.conformance.lint",
                                     description="Self-lint of the conformance vectors.")
    parser.add_argument("--vectors", type=Path, help="vectors directory (default: the kit's)")
    parser.add_argument("--write", action="store_true", help="regenerate manifest.json")
    parser.add_argument("--record", action="store_true", help="record digests of new cases")
    parser.add_argument("--retire", metavar="ID", help="tombstone a recorded case id")
    parser.add_argument("--reason", help="why the id is retired (with --retire)")
    parser.add_argument("--replaced-by", action="append", default=[], metavar="ID")
    parser.add_argument("--spec", type=Path, metavar="DIR",
                        help="check requirement ids against this spec/ tree (default: the "
                             "kit's requirements.json)")
    parser.add_argument("--tests", type=Path, metavar="DIR",
                        help="with --write: rescan this test folder for tests marked "
                             "@pytest.mark.requirement (default: tests/ next to --spec)")
    args = parser.parse_args(argv)
    from .vectors import vector_root

    root = args.vectors or Path(str(vector_root()))
    files = load_files(root)
    recorded = digests(root)
    recorded.setdefault("digestVersion", 1)
    recorded.setdefault("algorithm", DIGEST_ALGORITHM)
    recorded.setdefault("tombstones", {})
    changed = False
    if args.retire:
        if not args.reason:
            print("--retire needs --reason", file=sys.stderr)
            return 2
        try:
            retire(recorded, args.retire, args.reason, args.replaced_by)
        except KeyError as exc:
            print(exc.args[0], file=sys.stderr)
            return 1
        changed = True
    if args.record:
        added = record(_cases(files), recorded)
        print(f"recorded {len(added)} new case digest(s)")
        changed = True
    if changed:
        _dump(root / "digests.json", recorded)
    known: set[str] | None = None
    tool: set[str] | None = None
    if args.spec is not None:
        from dshkit.spec_index import build_index

        index = build_index(args.spec)
        known = {r.id for r in index}
        tool = {r.id for r in index if r.scope == "tool"}
    current = manifest(root)
    if args.write:
        tests = args.tests
        if tests is None and args.spec is not None and (args.spec.parent / "tests").is_dir():
            tests = args.spec.parent / "tests"
        scanned = None
        if tests is not None:
            from .tooltests import scan

            found = scan(tests)
            scanned = {k: v for k, v in found.items() if tool is None or k in tool}
        current = build_manifest(files, current, scanned)
        _dump(root / "manifest.json", current)
    problems = lint(files, known_requirements=known, recorded=recorded, current_manifest=current,
                    tool_requirements=tool)
    for problem in problems:
        print(problem)
    cases = _cases(files)
    print(f"{len(files)} files, {len(cases)} cases, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
