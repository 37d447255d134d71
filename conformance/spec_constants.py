"""Values the specification fixes and the kit needs without the reference: the closed sets
of refusal codes its comparisons check and the character classes its strategies use.

They are the reference's values, written down here so that the kit runs against another
implementation when the reference cannot be imported; ``tests/test_kit_constants.py`` checks
that they still equal the reference's.
"""

from __future__ import annotations

__all__ = ["ES_WHITESPACE", "QUERY_ERROR_CODES", "REFERENCE_ERROR_CODES"]

#: QRY-ERR: the refusal codes of the session-query API.
QUERY_ERROR_CODES: tuple[str, ...] = (
    "SESSION_QUERY_ABORTED",
    "SESSION_QUERY_CORRUPT_SESSION",
    "SESSION_QUERY_EVENT_NOT_FOUND",
    "SESSION_QUERY_INDEX_FAILED",
    "SESSION_QUERY_INVALID_CONFIG",
    "SESSION_QUERY_INVALID_CURSOR",
    "SESSION_QUERY_INVALID_FILTER",
    "SESSION_QUERY_INVALID_LIMIT",
    "SESSION_QUERY_INVALID_QUERY",
    "SESSION_QUERY_INVALID_LINEAGE",
    "SESSION_QUERY_INVALID_SURFACE",
    "SESSION_QUERY_INVALID_WINDOW",
    "SESSION_QUERY_PERSISTENCE_FAILED",
    "SESSION_QUERY_SEARCH_DISABLED",
    "SESSION_QUERY_SESSION_NOT_FOUND",
    "SESSION_QUERY_STALE_CURSOR",
    "SESSION_QUERY_SOURCE_CONFLICT",
)

#: REF-ERR-001: the refusal codes of session references.
REFERENCE_ERROR_CODES: tuple[str, ...] = (
    "SESSION_REFERENCE_INVALID_CONFIG",
    "SESSION_REFERENCE_INVALID_REFERENCE",
    "SESSION_REFERENCE_SELF_REFERENCE",
    "SESSION_REFERENCE_TOO_MANY",
    "SESSION_REFERENCE_READ_FAILED",
    "SESSION_REFERENCE_BUDGET_EXCEEDED",
    "SESSION_REFERENCE_CANCELLED",
)

#: ECMAScript WhiteSpace and LineTerminator (what ``String.prototype.trim`` removes).
ES_WHITESPACE = (
    " \t\n\x0b\x0c\r\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

