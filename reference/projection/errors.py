"""The one structured error of the session reference projection (spec chapter ``reference``)."""

from __future__ import annotations

from typing import Any, Final

from ..errors import DshkitError

INVALID_CONFIG: Final = "SESSION_REFERENCE_INVALID_CONFIG"
INVALID_REFERENCE: Final = "SESSION_REFERENCE_INVALID_REFERENCE"
SELF_REFERENCE: Final = "SESSION_REFERENCE_SELF_REFERENCE"
TOO_MANY: Final = "SESSION_REFERENCE_TOO_MANY"
READ_FAILED: Final = "SESSION_REFERENCE_READ_FAILED"
BUDGET_EXCEEDED: Final = "SESSION_REFERENCE_BUDGET_EXCEEDED"
CANCELLED: Final = "SESSION_REFERENCE_CANCELLED"

CODES: Final = (INVALID_CONFIG, INVALID_REFERENCE, SELF_REFERENCE, TOO_MANY, READ_FAILED,
                BUDGET_EXCEEDED, CANCELLED)

#: The requirement each code reports (REF-ERR-001 lists them all).
REQUIREMENT: Final = {
    INVALID_CONFIG: "REF-CFG-002",
    INVALID_REFERENCE: "REF-NRM-001",
    SELF_REFERENCE: "REF-NRM-002",
    TOO_MANY: "REF-NRM-004",
    READ_FAILED: "REF-RES-002",
    BUDGET_EXCEEDED: "REF-RET-009",
    CANCELLED: "REF-RES-004",
}


class SessionReferenceError(DshkitError):
    """A refused reference operation; ``code`` is one of :data:`CODES`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message, {"requirement": REQUIREMENT.get(code, "REF-ERR-001")})

    @property
    def requirement(self) -> str:
        return REQUIREMENT.get(self.code, "REF-ERR-001")

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "requirement": self.requirement}
