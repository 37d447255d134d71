"""The checks of a harness's handshake reply (CNF-HAR-002), in plain words.

The schema (``harness-response.json``) says what a reply may hold; its messages name JSON
Schema keywords. :func:`hello_problem` names the rule instead ("implementation.version must be
a released version or a commit, not a branch name such as main") and refuses capability names
the kit does not know, with the closest known ones, so that a misspelled capability does not
silently make its cases not applicable.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["BRANCH_NAMES", "SEMVER", "hello_problem", "spec_version_warning",
           "unknown_capabilities"]

RULE = "CNF-HAR-002"
#: Version strings that name a branch, not something released (the schema's list).
BRANCH_NAMES = frozenset({"main", "master", "trunk", "HEAD", "latest", "dev"})
_CAPABILITY = re.compile(r"^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*$")
_MEMBERS = ("name", "version", "language", "capabilities", "homepage", "issues", "source",
            "specVersion")
#: Semantic versioning 2.0.0 (the schema's pattern of ``implementation.specVersion``).
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def unknown_capabilities(declared: Iterable[str], known: Iterable[str]) -> str:
    """What is wrong with capability names the kit does not know ("" when all are known)."""
    names = sorted(set(known))
    problems = []
    for name in declared:
        if name in names:
            continue
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"{name!r}{hint}")
    if not problems:
        return ""
    return (f"implementation.capabilities names capabilities the kit does not know: "
            f"{'; '.join(problems)}. Known capabilities: {', '.join(names)} ({RULE})")


def _text(identity: Mapping[str, Any], member: str) -> str:
    value = identity.get(member)
    if not isinstance(value, str) or not value:
        return f"implementation.{member} must be a non-empty string ({RULE})"
    return ""


def _capabilities(value: object, known: Iterable[str] | None) -> str:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        return f"implementation.capabilities must be a list of capability names ({RULE})"
    bad = [c for c in value if not _CAPABILITY.match(c)]
    if bad:
        return (f"implementation.capabilities: {', '.join(repr(c) for c in bad)} is not a "
                "capability name (lower-case words joined by '-', parts by '.', e.g. "
                f"session-log.core) ({RULE})")
    twice = sorted({c for c in value if value.count(c) > 1})
    if twice:
        return (f"implementation.capabilities lists {', '.join(repr(c) for c in twice)} more "
                f"than once ({RULE})")
    return unknown_capabilities(value, known) if known is not None else ""


def hello_problem(reply: object, known: Iterable[str] | None = None) -> str:
    """The first thing wrong with a handshake reply, as a sentence naming the rule, or ""
    (``known``: the capability names of the kit; ``None`` skips that check)."""
    if not isinstance(reply, dict):
        return ('the handshake reply must be a JSON object {"version": 1, "implementation": '
                f'{{...}}}} ({RULE})')
    extra = sorted(set(reply) - {"version", "implementation"})
    if extra:
        return (f"the handshake reply holds {', '.join(repr(k) for k in extra)}; it has only "
                f'"version" and "implementation" ({RULE})')
    if not isinstance(reply.get("version"), int) or isinstance(reply.get("version"), bool):
        return f"the handshake reply must give the protocol version as an integer ({RULE})"
    identity = reply.get("implementation")
    if not isinstance(identity, dict):
        return ('the handshake reply must describe the implementation: "implementation": '
                f'{{"name", "version", "language", "capabilities"}} ({RULE})')
    extra = sorted(set(identity) - set(_MEMBERS))
    if extra:
        return (f"implementation holds unknown member(s) {', '.join(repr(k) for k in extra)}; "
                f"allowed: {', '.join(_MEMBERS)} ({RULE})")
    for member in ("name", "version", "language"):
        problem = _text(identity, member)
        if problem:
            return problem
    if identity["version"] in BRANCH_NAMES:
        return (f"implementation.version must be a released version or a commit, not a branch "
                f"name such as {identity['version']} ({RULE})")
    for member in ("homepage", "issues", "source"):
        value = identity.get(member)
        if value is not None and not (isinstance(value, str) and _URI.match(value)):
            return f"implementation.{member} must be a URI, e.g. https://... ({RULE})"
    spec = identity.get("specVersion")
    if spec is not None and not (isinstance(spec, str) and SEMVER.match(spec)):
        return (f"implementation.specVersion must be a semantic version of the dshkit spec the "
                f"implementation targets, such as 0.1.0, not {spec!r} ({RULE})")
    return _capabilities(identity.get("capabilities"), known)


def spec_version_warning(declared: str | None, kit_spec: str | None) -> str:
    """A warning when the spec version an implementation targets is of another major version
    than the kit's ("" when none is declared or the majors agree): not a refusal, since the
    cases of the other version may still mostly apply."""
    if not declared or not kit_spec or not SEMVER.match(declared) or not SEMVER.match(kit_spec):
        return ""
    if declared.split(".", 1)[0] == kit_spec.split(".", 1)[0]:
        return ""
    return (f"WARNING: the implementation targets spec {declared}; this kit checks spec "
            f"{kit_spec} (another major version): read the results against that ({RULE})")
