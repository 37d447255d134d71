"""Structured problems: the one error shape every dshkit component reports.

A problem is a value. Validators return them; code paths that must stop raise
:class:`ProblemError`, which carries exactly one problem and never a bare message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import DshkitError


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input, with enough context for a person to act on it.

    ``code`` is stable and machine-readable; ``requirement`` is the spec requirement id
    (for example ``SES-ENV-004``) the input violates; ``seq`` is the event's position in
    the log, ``line`` the 1-based physical line in the file it was read from, ``pointer``
    an RFC 6901 JSON pointer inside the event (or the record) that names the offending value.
    """

    code: str
    message: str
    requirement: str
    seq: int | None = None
    line: int | None = None
    pointer: str = ""
    detail: dict[str, Any] = field(default_factory=dict, compare=False)

    def located(self, *, seq: int | None = None, line: int | None = None) -> Problem:
        """Return a copy with location filled in where it is still unknown."""
        return Problem(
            code=self.code,
            message=self.message,
            requirement=self.requirement,
            seq=self.seq if self.seq is not None else seq,
            line=self.line if self.line is not None else line,
            pointer=self.pointer,
            detail=self.detail,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "seq": self.seq,
            "line": self.line,
            "pointer": self.pointer,
            "requirement": self.requirement,
            "message": self.message,
        }


class ProblemError(DshkitError):
    """Raised where a problem must stop the current operation."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.code, problem.message,
                         {"requirement": problem.requirement, "seq": problem.seq,
                          "line": problem.line, "pointer": problem.pointer})
        self.problem = problem

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), (self.problem,)

    def to_json(self) -> dict[str, Any]:
        return self.problem.to_json()


def fail(code: str, requirement: str, message: str, *, pointer: str = "", seq: int | None = None,
         line: int | None = None, **detail: Any) -> ProblemError:
    """Build a :class:`ProblemError` (to be raised by the caller)."""
    return ProblemError(
        Problem(code=code, message=message, requirement=requirement, seq=seq, line=line,
                pointer=pointer, detail=detail)
    )


def pointer(*parts: str | int) -> str:
    """An RFC 6901 JSON pointer built from path segments."""
    out = []
    for part in parts:
        text = str(part).replace("~", "~0").replace("/", "~1")
        out.append("/" + text)
    return "".join(out)
