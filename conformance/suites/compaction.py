"""The ``compaction`` conformance suite: boundaries, token estimate, configuration, region
selection, brackets and lock, the pruner, the planner, the manual verb, the overflow retry
decision and appending a plan to a stored log (spec part ``compaction``). Runs the dshkit
reference through its public API.

Two operations carry more than one value:

- ``compaction.brackets.offer``: the input log is replayed through the bracket companion, then
  each event of ``params.offers`` is checked live and appended only when it is accepted.
  Result ``{"valid": true, "offers": [null | {"code"}...], "openTurn", "bracket": null |
  {"compactionId", "sourceCommandId"?, "startSeq", "turn", "summarized"}}``.
- ``compaction.apply``: the input is a stored log (``{"text"}`` or ``{"base64"}``), the params
  are those of ``compaction.plan`` plus ``mode`` (``write``: append in place; ``output``:
  publish a new file; ``none``: plan only) and ``existingOutput`` (a file already at the
  output name) and ``duringPlan`` (another writer changes the stored log while the plan is
  being made, after the log was read: ``{"append": text}`` adds text at its end, ``{"touch":
  ms}`` moves its modification time by ``ms`` milliseconds). Result ``{"valid": true,
  "outcome", "source", "output"}`` or a refusal with ``source`` and ``output``: the stored
  texts afterwards (``null``: no such file).
"""

from __future__ import annotations

import json
from typing import Any

SUITE = "compaction"
CAPABILITY = "compaction"
OPERATIONS: tuple[str, ...] = (
    "compaction.boundaries",
    "compaction.select",
    "compaction.estimate",
    "compaction.config",
    "compaction.brackets",
    "compaction.lock",
    "compaction.prune-content",
    "compaction.plan",
    "compaction.manual",
    "compaction.overflow-retry",
    "compaction.brackets.offer",
    "compaction.apply",
)

JsonObject = dict[str, Any]



def _file_state(key: str, want: Any, got: Any) -> str:
    """A stored file after ``compaction.apply``: ``want`` is the exact text (``null``: no
    file), or ``{"startsWith": text, "then": [record...]}``: the text kept unchanged at the
    start, followed by one line per record (compared as JSON values)."""
    if not (isinstance(want, dict) and "startsWith" in want):
        if got != want:
            return f"{key}: expected {json.dumps(want)[:200]}, got {json.dumps(got)[:200]}"
        return ""
    if not isinstance(got, str) or not got.startswith(want["startsWith"]):
        return f"{key}: the stored text is not kept unchanged at the start of the file"
    rest = got[len(want["startsWith"]):]
    if rest and not rest.endswith("\n"):
        return f"{key}: the appended batch does not end with a line feed"
    try:
        records = [json.loads(line) for line in rest.split("\n")[:-1]]
    except ValueError:
        return f"{key}: an appended line is not one JSON text"
    if json.dumps(records, sort_keys=True) != json.dumps(want["then"], sort_keys=True):
        return f"{key}: appended {json.dumps(records)[:300]}, expected {json.dumps(want['then'])[:300]}"
    return ""


FILE_STATES = ("source", "output")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` meets ``expect``: the same validity; for a refusal the same
    ``code`` (and ``seq`` / a ``messageContains`` substring when given); otherwise every
    member of ``expect`` equal, as JSON, to the same member of ``result``. The stored files of
    ``compaction.apply`` (``source``, ``output``) are compared as :func:`_file_state` says, for
    a refusal too."""
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got)}"
    for key in FILE_STATES:
        if key in expect:
            problem = _file_state(key, expect[key], result.get(key))
            if problem:
                return problem
    if not expect["valid"]:
        want, error = expect.get("error", {}), result.get("error") or {}
        for key in ("code", "seq"):
            if key in want and error.get(key) != want[key]:
                return (f"expected error {key} {want[key]!r}, got {error.get(key)!r} "
                        f"({error.get('message', '')})")
        if "messageContains" in want and want["messageContains"] not in error.get("message", ""):
            return f"error message {error.get('message')!r} lacks {want['messageContains']!r}"
        return ""
    for key, value in expect.items():
        if key == "valid" or key in FILE_STATES:
            continue
        if key not in result:
            return f"{key}: missing from the result"
        if json.dumps(result[key], sort_keys=True) != json.dumps(value, sort_keys=True):
            return f"{key}: expected {json.dumps(value)}, got {json.dumps(result[key])}"
    return ""


__all__ = ["CAPABILITY", "OPERATIONS", "SUITE", "compare"]
