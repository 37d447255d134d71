"""The compaction-boundary property: a compaction plan against any implementation (suite
``compaction``, operation ``compaction.plan``).

:func:`plan_requests` draws a compactable log (:func:`dshkit.conformance.
strategies_compaction.compactable_logs`), a trigger, a context window, a fixed summary text
and a pruning configuration (or none). Each draw is one ``compaction.plan`` case whose
expectation is the reference's exact result; before that comparison the property checks what
the specification states of every plan, whatever the implementation:

- never inside a structural unit (CMP-BND-005): each checkpoint replaces a span that starts
  and ends at balanced cuts of the surface it replaces;
- the result folds validly: the log with the plan's events appended is valid at level
  ``invariants`` (SES-LVL-003, the checkpoint provenance of CMP-CKP-006 included) and keeps
  the compaction bracket rules (CMP-CKP-005).

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from dshkit.reference.compaction import CompactionError, LogView, is_checkpoint_event
from dshkit.reference.problems import ProblemError

from .interface import Implementation, JsonObject
from .propcheck import Probe, check, reference_case
from .strategies_compaction import compactable_logs, summary_texts

__all__ = ["REQUIREMENTS", "compaction_boundary_check", "plan_check", "plan_requests"]

REQUIREMENTS = ["CMP-BND-005", "CMP-CKP-005", "CMP-CKP-006", "SES-LVL-003"]
TRIGGERS = ("pressure", "context-overflow", "manual")
PRUNE = {"thresholdChars": 200, "headChars": 80, "tailChars": 40}


@st.composite
def plan_requests(draw: st.DrawFn) -> JsonObject:
    """``{"events", "params"}``: one ``compaction.plan`` request."""
    events = draw(compactable_logs())
    params: JsonObject = {
        "contextWindow": draw(st.integers(200, 8_000)),
        "trigger": draw(st.sampled_from(TRIGGERS)),
        "summarizer": {"kind": "fixed", "text": draw(summary_texts())},
        "prune": dict(PRUNE) if draw(st.booleans()) else False,
        "time": 7,
    }
    return {"events": events, "params": params}


def _cuts(view: LogView, event: JsonObject) -> str:
    """``""`` when the span ``event`` replaces starts and ends at balanced cuts."""
    op = event.get("surfaceOp")
    if not isinstance(op, dict):
        return f"the checkpoint at seq {event.get('seq')} has no replacement surfaceOp"
    bounds = view.boundaries()
    try:
        first, last = bounds.index(op["start"]), bounds.index(op["end"])
    except (CompactionError, KeyError):
        return (f"the checkpoint at seq {event.get('seq')} replaces {op.get('start')!r}.."
                f"{op.get('end')!r}, which are not both on the current surface")
    if not (bounds.cuts[first] and bounds.cuts[last + 1]):
        return (f"the checkpoint at seq {event.get('seq')} replaces {op['start']}..{op['end']}"
                ", which cuts inside a structural unit")
    return ""


def _folds(events: list[Any], appended: list[Any]) -> str:
    from .suites import compaction, session_log

    combined = [*events, *appended]
    verdict = session_log.reference("validate", {"events": combined}, {"level": "invariants"})
    if verdict.get("valid") is not True:
        error = verdict.get("error") or {}
        return (f"the log with the plan appended is not valid at level invariants: "
                f"{error.get('code')} at seq {error.get('seq')}: {error.get('message')}")
    brackets = compaction.reference("compaction.brackets", {"events": combined}, {})
    if brackets.get("valid") is not True:
        error = brackets.get("error") or {}
        return (f"the log with the plan appended breaks the compaction brackets: "
                f"{error.get('code')}: {error.get('message')}")
    return ""


def plan_check(events: list[Any]) -> Any:
    """What the specification states of any plan for ``events``: a function of the
    implementation's result giving ``""`` or the broken statement."""

    def statement(result: JsonObject) -> str:
        if result.get("valid") is not True:
            return ""  # a refusal is compared with the expectation
        appended = result.get("events")
        if not isinstance(appended, list):
            return "the plan has no list of events"
        view = LogView.of(events)
        for event in appended:
            if not isinstance(event, dict):
                return "an event of the plan is not an object"
            if is_checkpoint_event(event):
                problem = _cuts(view, event)
                if problem:
                    return problem
            try:
                view.push(event)
            except (CompactionError, ProblemError) as exc:
                return f"the plan's event at seq {event.get('seq')} does not fold: {exc}"
        return _folds(events, appended)

    return statement


def _probe(request: JsonObject) -> list[Probe]:
    from .suites.compaction import reference

    case = reference_case(reference, "compaction.plan", {"events": request["events"]},
                          request["params"], requirements=REQUIREMENTS, suite="compaction",
                          prefix="cmp", description="A generated log and trigger on which an "
                          "implementation's compaction plan broke the compaction-boundary "
                          "property or disagreed with the reference (shrunk by hypothesis).")
    return [Probe(case, plan_check(request["events"]))]


def compaction_boundary_check(impl: Implementation, *, max_examples: int = 50,
                              seed: int | None = None,
                              counterexample_dir: str | Path | None = None) -> JsonObject:
    """Draw plan requests, check the property's statements on ``impl``'s plans and compare
    them with the reference; the shrunk failing case is returned (and written to
    ``counterexample_dir``) as a vector."""
    return check(plan_requests(), _probe, impl, name="compaction-boundary",
                 capabilities=("compaction",), max_examples=max_examples, seed=seed,
                 counterexample_dir=counterexample_dir)
