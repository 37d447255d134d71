"""The invalid-log property: logs broken on purpose are refused with the expected problem
(suite ``session-log``, operation ``validate``).

:func:`invalid_logs` draws a valid log, breaks it (:func:`dshkit.conformance.
strategies_invalid.broken_logs`: an event dropped, duplicated or moved, a seq broken, a surface
operation pointed at a missing node, a member removed, a turn or step misnumbered) and keeps it
when the implementation that gives the expected answers (``expected``, default: the reference)
refuses it at level ``load``. Each draw is two ``validate`` cases, at levels ``invariants`` and
``load``, expecting exactly the expected implementation's answer: valid or not, and the
problem's code, seq and line. Each case's requirements are the requirement the expected
problem names, so a shrunk counterexample cites the rule the implementation got wrong.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from .interface import Implementation, JsonObject
from .propcheck import Probe, check_against, generated_case
from .strategies_invalid import broken_logs

__all__ = ["CAPABILITIES", "LEVEL_REQUIREMENTS", "invalid_log_check", "invalid_logs"]

CAPABILITIES = ("session-log.core", "session-log.invariants", "session-log.load")
LEVELS = ("invariants", "load")
#: what a case names when the expected answer is "valid" at its level
LEVEL_REQUIREMENTS = {"invariants": "SES-LVL-003", "load": "SES-LVL-004"}
_PROBLEM_KEYS = ("code", "seq", "line")


def _validate(expected: Implementation, events: list[Any], level: str) -> JsonObject:
    return expected.run("validate", {"events": events}, {"level": level})


def invalid_logs(expected: Implementation) -> st.SearchStrategy[list[Any]]:
    """Broken logs that ``expected`` refuses at level ``load``."""
    def refused(events: list[Any]) -> list[Any]:
        assume(not _validate(expected, events, "load").get("valid"))
        return events

    return broken_logs().map(refused)


def _expectation(answer: JsonObject) -> tuple[JsonObject, list[str]]:
    """The case's expectation (the problem record without message) and its requirements."""
    if answer.get("valid"):
        return {"valid": True}, []
    error = answer.get("error") or {}
    problem = {k: error[k] for k in _PROBLEM_KEYS if error.get(k) is not None}
    requirement = error.get("requirement")
    return {"valid": False, "error": problem}, [requirement] if requirement else []


def _probe(expected: Implementation, events: list[Any]) -> list[Probe]:
    probes = []
    for level in LEVELS:
        expect, requirements = _expectation(_validate(expected, events, level))
        raw: JsonObject = {"operation": "validate", "input": {"events": events},
                           "params": {"level": level}, "expect": expect,
                           "requirements": requirements or [LEVEL_REQUIREMENTS[level]]}
        probes.append(Probe(generated_case(
            raw, suite="session-log", prefix="ses",
            description=f"A log broken on purpose that an implementation validated at level "
                        f"{level} differently from the reference (shrunk by hypothesis).")))
    return probes


def invalid_log_check(impl: Implementation, *, max_examples: int = 50, seed: int | None = None,
                      counterexample_dir: str | Path | None = None,
                      expected: Implementation | None = None) -> JsonObject:
    """Draw broken logs and compare ``impl``'s validation at levels invariants and load with
    ``expected``'s (default: the reference); the shrunk failing case is returned (and written
    to ``counterexample_dir``) as a vector naming the violated requirement."""
    return check_against(expected, invalid_logs, _probe, impl, name="session-invalid",
                         capabilities=CAPABILITIES, max_examples=max_examples, seed=seed,
                         counterexample_dir=counterexample_dir)
