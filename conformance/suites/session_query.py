"""The session-query conformance suite, including a real SQLite FTS5 index in a temporary
directory for the ``query.search*`` and ``query.open`` operations (the reference's binding:
:mod:`dshkit.conformance.implementations.reference.session_query`).

``query.search.detached`` (QRY-FLT-008) runs a paged search as a caller that keeps changing
its own request: the request of ``input.request`` is passed to the first search; then every
change of ``input.changes`` (``{"path": [member or index...], "value"}``) is made to the
caller's objects in place (each container on the path keeps its identity; a list at the end
of the path keeps its identity and gets the new items); only then are the first page's hits
and cursor read, and the later pages are asked for with a fresh copy of the original request
and the cursor. Result ``{"valid": true, "pages": [[ids or seqs]...]}``, which must be the
pages of the original request.

``compare`` checks every member of ``expect`` for deep equality with the result; members the
vector does not name are not compared. For refusals, every member of ``expect.error`` (the
code, and for ``query.open`` the refusal ``reason``) must match.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..spec_constants import QUERY_ERROR_CODES

#: The operations on a stored index and its files (run in a temporary directory).
STORE_OPERATIONS = ("query.source", "query.config", "query.engine", "query.schema",
                    "query.files")

SUITE = "session-query"
CAPABILITY = "session-query"
OPERATIONS: tuple[str, ...] = (
    "query.classify",
    "query.documents",
    "query.extract",
    "query.trace",
    "query.read",
    "query.filter-sessions",
    "query.filter-events",
    "query.text-filter",
    "query.sql-where",
    "query.normalize",
    "query.quote",
    "query.cursor",
    "query.cursor.decode",
    "query.snippet",
    "query.search",
    "query.search.pages",
    "query.search.resume",
    "query.search.detached",
    "query.open",
    "query.disabled",
    "query.tool.translate",
    "query.tool.format",
    *STORE_OPERATIONS,
)

JsonObject = dict[str, Any]


#: QRY-ERR-001: the closed set of refusal codes (the tool surface adds ``INVALID_ARGS``).
CLOSED_CODES = frozenset(QUERY_ERROR_CODES) | {"INVALID_ARGS"}


def _refusal_codes(result: JsonObject) -> Iterator[Any]:
    """The refusal codes of a result: its ``error``, and those of the steps of
    ``query.files`` and ``query.engine``."""
    if result.get("valid") is False:
        error = result.get("error")
        yield error.get("code") if isinstance(error, dict) else error
    steps = result.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            if isinstance(step.get("error"), str):
                yield step["error"]
            failed = step.get("failed")
            for item in failed if isinstance(failed, list) else []:
                yield item.get("code") if isinstance(item, dict) else item
    for key in ("create", "search"):
        if isinstance(result.get(key), dict):
            yield result[key].get("code")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` satisfies ``expect``, else a one-line difference. Any refusal
    code in the result must belong to the closed set of QRY-ERR-001; a ``messageStartsWith``
    member of an expected refusal compares the start of the message."""
    strange = sorted({str(c) for c in _refusal_codes(result) if c not in CLOSED_CODES})
    if strange:
        return f"refusal codes outside the closed set of QRY-ERR-001: {', '.join(strange)}"
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got, ensure_ascii=False)}"
    if expect.get("valid") is False:
        want, got = expect.get("error", {}), result.get("error") or {}
        for key, value in want.items():
            if key == "messageStartsWith":
                if not str(got.get("message", "")).startswith(value):
                    return f"error message {got.get('message')!r} does not start with {value!r}"
                continue
            if got.get(key) != value:
                return f"error {key}: expected {value!r}, got {got.get(key)!r} " \
                       f"({got.get('message', '')})"
        return ""
    for key, value in expect.items():
        if key in STEP_OUTCOMES and isinstance(value, dict):
            problem = _outcome(key, value, result.get(key))
            if problem:
                return problem
            continue
        if key != "valid" and (key not in result or not _equal(result[key], value)):
            return (f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got "
                    f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}")
    return ""


#: ``query.engine`` members holding a refusal (or ``null``), compared member by member, with
#: ``messageStartsWith`` comparing the start of the message.
STEP_OUTCOMES = ("create", "search")


def _outcome(key: str, want: JsonObject, got: Any) -> str:
    if not isinstance(got, dict):
        return f"{key}: expected a refusal {json.dumps(want)}, got {json.dumps(got)}"
    for member, value in want.items():
        if member == "messageStartsWith":
            if not str(got.get("message", "")).startswith(value):
                return f"{key}: message {got.get('message')!r} does not start with {value!r}"
        elif got.get(member) != value:
            return f"{key}.{member}: expected {value!r}, got {got.get(member)!r}"
    return ""


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
