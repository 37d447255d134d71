"""Opaque continuation cursors bound to one request and one corpus state (QRY-CUR-*)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..json import codec as jsoncodec
from .errors import INVALID_CURSOR, STALE_CURSOR, SessionQueryError
from .filters import RANGE_KINDS, Filter
from .request import EventSearch, SessionSearch

CURSOR_VERSION: Final = 1
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991


def _sort_key(value: Any) -> tuple[int, str]:
    return (0, "") if value is None else (1, str(value))


def canonical_filters(filters: Sequence[Filter]) -> list[Filter]:
    """List values sorted (null first, then code-point order), ranges spelled with explicit
    nulls, clauses sorted by their JSON text (QRY-CUR-002)."""
    out: list[Filter] = []
    for clause in filters:
        if clause["kind"] in RANGE_KINDS:
            out.append({"kind": clause["kind"], "from": clause.get("from"),
                        "to": clause.get("to")})
        elif "values" in clause:
            out.append({**clause, "values": sorted(clause["values"], key=_sort_key)})
        else:
            out.append(dict(clause))
    return sorted(out, key=jsoncodec.dumps)


def fingerprint(request: SessionSearch | EventSearch, match: str = "token") -> str:
    """The JSON identity of a normalized request; ``"match":"literal"`` is appended when the
    literal strategy answers it (QRY-CUR-002)."""
    body: dict[str, Any]
    if isinstance(request, EventSearch):
        body = {"scope": "events", "sessionId": request.session_id, "query": request.query,
                "filters": canonical_filters(request.filters), "limit": request.limit}
    else:
        body = {"scope": "sessions", "query": request.query,
                "sessionFilters": canonical_filters(request.session_filters),
                "eventFilters": canonical_filters(request.event_filters),
                "limit": request.limit}
    if match != "token":
        body["match"] = match
    return jsoncodec.dumps(body)


@dataclass(frozen=True, slots=True)
class CursorPayload:
    instance: str
    scope: str
    fingerprint: str
    generation: str
    offset: int

    def to_json(self) -> dict[str, Any]:
        return {"version": CURSOR_VERSION, "instance": self.instance, "scope": self.scope,
                "fingerprint": self.fingerprint, "generation": self.generation,
                "offset": self.offset}


def encode_cursor(payload: CursorPayload) -> str:
    raw = jsoncodec.dumps(payload.to_json()).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _invalid(detail: str) -> SessionQueryError:
    return SessionQueryError(INVALID_CURSOR, "session-search cursor is invalid", reason=detail)


def decode_cursor(cursor: str, *, instance: str, scope: str, fingerprint: str,
                  generation: str) -> int:
    """The offset a cursor continues from, or ``INVALID_CURSOR`` / ``STALE_CURSOR``."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        decoded = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        raise _invalid("not a cursor") from None
    if not isinstance(decoded, dict):
        raise _invalid("not a cursor")
    offset = decoded.get("offset")
    if (decoded.get("version") != CURSOR_VERSION or isinstance(decoded.get("version"), bool)
            or decoded.get("instance") != instance or decoded.get("scope") != scope
            or decoded.get("fingerprint") != fingerprint
            or isinstance(offset, bool) or not isinstance(offset, (int, float))
            or not float(offset).is_integer() or not 0 <= offset <= MAX_SAFE_INTEGER):
        raise _invalid("cursor does not belong to this normalized request")
    if decoded.get("generation") != generation:
        raise SessionQueryError(STALE_CURSOR,
                                "session-search cursor is stale because its relevant corpus "
                                "changed")
    return int(offset)
