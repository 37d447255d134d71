"""The compaction-boundary property: a compaction plan against any implementation (suite
``compaction``, operation ``compaction.plan``).

:func:`plan_requests` draws a compactable log (:func:`dshkit.conformance.
strategies_compaction.compactable_logs`), a trigger, a context window, a fixed summary text
and a pruning configuration (or none). Each draw is one ``compaction.plan`` case whose
expectation is the exact result of the implementation that gives the expected answers
(``expected``, default: the reference); before that comparison the property checks what the
specification states of every plan, whatever the implementation (read with the reference's
view of the log, see :mod:`dshkit.conformance.implementations.reference.statements`):

- never inside a structural unit (CMP-BND-005): each checkpoint replaces a span that starts
  and ends at balanced cuts of the surface it replaces;
- the result folds validly: the log with the plan's events appended is valid at level
  ``invariants`` (SES-LVL-003, the checkpoint provenance of CMP-CKP-006 included) and keeps
  the compaction bracket rules (CMP-CKP-005).

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from .interface import Implementation, JsonObject
from .propcheck import Probe, check_against, expected_case, statement_of
from .strategies_compaction import compactable_logs, summary_texts

__all__ = ["REQUIREMENTS", "compaction_boundary_check", "plan_requests"]

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


def _probe(expected: Implementation, request: JsonObject) -> list[Probe]:
    case = expected_case(expected, "compaction.plan", {"events": request["events"]},
                         request["params"], requirements=REQUIREMENTS, suite="compaction",
                         prefix="cmp", description="A generated log and trigger on which an "
                         "implementation's compaction plan broke the compaction-boundary "
                         "property or disagreed with the reference (shrunk by hypothesis).")
    return [Probe(case, statement_of(expected, "compaction-boundary", request))]


def compaction_boundary_check(impl: Implementation, *, max_examples: int = 50,
                              seed: int | None = None,
                              counterexample_dir: str | Path | None = None,
                              expected: Implementation | None = None) -> JsonObject:
    """Draw plan requests, check the property's statements on ``impl``'s plans and compare
    them with the reference; the shrunk failing case is returned (and written to
    ``counterexample_dir``) as a vector."""
    return check_against(expected, lambda _: plan_requests(), _probe, impl,
                         name="compaction-boundary", capabilities=("compaction",),
                         max_examples=max_examples, seed=seed,
                         counterexample_dir=counterexample_dir)
