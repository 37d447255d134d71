"""Discovery of sessions a user may reference (REF-CAN-*).

Only session metadata (id, cwd, title) is matched; message bodies are never searched. The
host passes the sessions it is willing to offer: nothing else is listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .config import DEFAULT_CANDIDATE_LIMIT, is_positive_safe_int
from .errors import INVALID_REFERENCE, SessionReferenceError
from .uri import format_mention


@dataclass(frozen=True, slots=True)
class Candidate:
    session_id: str
    label: str
    cwd: str | None
    created_at: int

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "label": self.label}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        out["createdAt"] = self.created_at
        out["mention"] = format_mention(self.session_id, self.label)
        return out


def _rank(candidate_cwd: str | None, target_cwd: str | None) -> int:
    if candidate_cwd is not None and target_cwd is not None and candidate_cwd == target_cwd:
        return 0
    return 1 if candidate_cwd is None else 2


def list_candidates(headers: Sequence[dict[str, Any]], target: dict[str, Any], query: str = "",
                    limit: int = DEFAULT_CANDIDATE_LIMIT,
                    title_of: Callable[[str], str | None] = lambda _id: None) -> list[Candidate]:
    """Candidates for a message of session ``target``: the target itself excluded, same-cwd
    sessions first, then sessions without a cwd, then the rest; newest first inside each
    rank (``createdAt`` descending, then id in code-point order)."""
    if not is_positive_safe_int(limit):
        raise SessionReferenceError(INVALID_REFERENCE, "candidate limit must be a positive "
                                    "safe integer")
    needle = query.lower()
    listing = sorted((h for h in headers if h.get("id") != target.get("id")),
                     key=lambda h: (-int(h.get("createdAt", 0)), str(h.get("id"))))
    target_cwd = target.get("cwd") if isinstance(target.get("cwd"), str) else None
    ranked = sorted(enumerate(listing), key=lambda pair: (
        _rank(pair[1].get("cwd"), target_cwd), pair[0]))
    if not needle:
        ranked = ranked[:int(limit)]
    out: list[Candidate] = []
    for _index, header in ranked:
        session_id = str(header.get("id"))
        try:
            title = title_of(session_id)
        except Exception:  # a failed title read falls back to the id (REF-CAN-003)
            title = None
        label = title if title is not None else session_id
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        matches = (needle in session_id.lower() or needle in label.lower()
                   or (cwd is not None and needle in cwd.lower()))
        if needle and not matches:
            continue
        out.append(Candidate(session_id, label, cwd, int(header.get("createdAt", 0))))
    return out[:int(limit)]
