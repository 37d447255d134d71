"""Configuration of the session reference projection and its limits (REF-CFG-*)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .errors import INVALID_CONFIG, SessionReferenceError

MAX_REFERENCES: Final = 3
DEFAULT_MAX_REFERENCES: Final = 3
DEFAULT_CANDIDATE_LIMIT: Final = 50
DEFAULT_MAX_REFERENCE_BYTES: Final = 65_536
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991


def is_positive_safe_int(value: Any) -> bool:
    """A number that is an integer in ``1..2**53-1`` (a JSON ``1.0`` counts, ``true`` does not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return 1 <= value <= MAX_SAFE_INTEGER


@dataclass(frozen=True, slots=True)
class ReferenceConfig:
    """``max_references`` sources per message, ``candidate_limit`` discovery rows and
    ``max_reference_bytes`` serialized UTF-8 bytes per source."""

    max_references: int = DEFAULT_MAX_REFERENCES
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES

    def __post_init__(self) -> None:
        for name in ("max_references", "candidate_limit", "max_reference_bytes"):
            if not is_positive_safe_int(getattr(self, name)):
                raise SessionReferenceError(
                    INVALID_CONFIG, f"session-reference config: {name} must be a positive safe "
                    "integer")
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.max_references > MAX_REFERENCES:
            raise SessionReferenceError(
                INVALID_CONFIG, f"session-reference config: max_references must not exceed "
                f"{MAX_REFERENCES}")

    @classmethod
    def from_json(cls, value: Any) -> ReferenceConfig:
        """Build from the wire names (``maxReferences``, ``candidateLimit``,
        ``maxReferenceBytes``); absent keys take their defaults."""
        if not isinstance(value, dict):
            raise SessionReferenceError(INVALID_CONFIG, "session-reference config must be an object")
        names = {"maxReferences": "max_references", "candidateLimit": "candidate_limit",
                 "maxReferenceBytes": "max_reference_bytes"}
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise SessionReferenceError(
                INVALID_CONFIG, f"session-reference config: unknown key {unknown[0]!r}")
        kwargs = {names[k]: v for k, v in value.items()}
        return cls(**kwargs)
