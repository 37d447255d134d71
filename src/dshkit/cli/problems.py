"""Session problems (``dshkit.reference.problems.Problem``) in the command line's two forms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..reference.problems import Problem
from . import exits
from .report import Refusal

_IO_CODES = frozenset({"IO_ERROR"})


def describe(problem: Problem) -> str:
    where = []
    if problem.line is not None:
        where.append(f"line {problem.line}")
    if problem.seq is not None:
        where.append(f"seq {problem.seq}")
    if problem.pointer:
        where.append(problem.pointer)
    location = f" ({', '.join(where)})" if where else ""
    return f"{problem.code} [{problem.requirement}]{location}: {problem.message}"


def exit_for(errors: Sequence[Problem]) -> int:
    if not errors:
        return exits.OK
    return exits.USAGE if any(p.code in _IO_CODES for p in errors) else exits.INVALID


def refusal(problem: Problem, path: str, report: Mapping[str, Any] | None = None,
            exit_code: int | None = None) -> Refusal:
    """The refusal of the first problem of a report (``report``, printed beside it)."""
    details: dict[str, Any] = dict(problem.detail)
    if problem.seq is not None:
        details["seq"] = problem.seq
    if problem.pointer:
        details["pointer"] = problem.pointer
    return Refusal(problem.code, problem.message,
                   exit_code=exit_for([problem]) if exit_code is None else exit_code,
                   details=details, path=path, line=problem.line,
                   requirement=problem.requirement, report=report)
