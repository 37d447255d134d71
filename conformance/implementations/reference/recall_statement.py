"""What the memory-recall property states of any recall result, read with the reference's
labels of the drawn logs (:func:`recall_check`; spec ``memory/recall``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.memory.recall import LIMITS
from dshkit.reference.query import build_documents, compile_text_filter
from dshkit.reference.text import units

__all__ = ["recall_check"]

DAY = 86_400_000
ELLIPSIS = "\u2026"


def _limit(request: JsonObject, key: str) -> int:
    value = request.get(key)
    return int(LIMITS[key][0] if value is None else value)


def _surface(session: JsonObject) -> list[str]:
    return [d.text for d in build_documents(session["header"]["id"], session["events"])
            if d.surface == "current"]


def _snippet_problem(snippet: Any, texts: list[str], chars: int,
                     contains: Callable[[str], bool]) -> str:
    if not isinstance(snippet, str):
        return f"snippet {snippet!r} is not a string"
    if snippet in texts and contains(snippet) and units(snippet) <= chars:
        return ""
    kept = snippet[:-1]
    if snippet.endswith(ELLIPSIS) and units(kept) <= chars and any(
            t.startswith(kept) and units(t) > chars and contains(t) for t in texts):
        return ""
    return (f"snippet {snippet[:80]!r} is neither a current-surface text of its session that "
            f"contains the query, at most {chars} units, nor a cut of one (MEM-RCL-013, "
            "MEM-RCL-014)")


def _session_problem(item: Any, sessions: dict[str, JsonObject], request: JsonObject,
                     contains: Callable[[str], bool]) -> str:
    if not isinstance(item, dict) or item.get("sessionId") not in sessions:
        return f"history item {item!r} names no session of the case"
    session_id = item["sessionId"]
    header = sessions[session_id]["header"]
    now = int(request["now"])
    earliest = now - _limit(request, "windowDays") * DAY
    if header.get("cwd") != request["cwd"] or not earliest <= header["createdAt"] <= now \
            or session_id == request.get("sessionId"):
        return (f"session {session_id} (cwd {header.get('cwd')!r}, createdAt "
                f"{header['createdAt']}) is not a candidate: another project, outside the "
                "window or the current session (MEM-RCL-010)")
    snippets = item.get("snippets")
    cap = _limit(request, "snippetCap")
    if not isinstance(snippets, list) or not 1 <= len(snippets) <= cap \
            or len(snippets) != min(cap, int(item.get("matches", 0))):
        return (f"session {session_id}: {item.get('matches')} matches and "
                f"{len(snippets) if isinstance(snippets, list) else snippets} snippets for a "
                f"cap of {cap} (MEM-RCL-014)")
    texts = _surface(sessions[session_id])
    for snippet in snippets:
        problem = _snippet_problem(snippet, texts, _limit(request, "snippetChars"), contains)
        if problem:
            return f"session {session_id}: {problem}"
    return ""


def recall_check(drawn: JsonObject) -> Callable[[JsonObject], str]:
    """``drawn`` is ``{"sessions", "recall"}``; the result is that of the ``memory.calls``
    program whose second step is the recall."""
    request = drawn["recall"]
    sessions = {s["header"]["id"]: s for s in drawn["sessions"]}
    pattern = compile_text_filter(request["text"]).pattern

    def contains(text: str) -> bool:
        return pattern.search(text) is not None

    def check(result: JsonObject) -> str:
        steps = result.get("steps")
        step = steps[1] if isinstance(steps, list) and len(steps) > 1 else None
        if not isinstance(step, dict) or step.get("ok") is not True:
            return f"the recall step did not succeed: {step!r}"
        history = step["result"].get("history", {})
        items = history.get("sessions")
        if history.get("available") is not True or not isinstance(items, list):
            return "the history of a recall with an index is not available (MEM-RCL-015)"
        limit = _limit(request, "historyLimit")
        if len(items) > limit:
            return f"{len(items)} sessions for a historyLimit of {limit} (MEM-RCL-011)"
        for item in items:
            problem = _session_problem(item, sessions, request, contains)
            if problem:
                return problem
        return ""

    return check
