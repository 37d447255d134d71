"""The projection-budget property: a session reference's retention against any implementation
(suite ``session-reference``, operation ``reference.retain``).

:func:`retention_requests` draws a surface snapshot (:func:`dshkit.conformance.
strategies_projection.surface_snapshots`), a label and a byte budget from 1 to a little more
than the snapshot needs untouched. Each draw is one ``reference.retain`` case whose
expectation is the exact result of the implementation that gives the expected answers
(``expected``, default: the reference); before that comparison the property checks what the
specification states of every retained source, whatever the implementation (REF-RET-001,
-003, -008, -010; read with the reference's projection of the snapshot, see
:mod:`dshkit.conformance.implementations.reference.statements`):

- never over: ``size`` is at most the budget and is the byte length of the tag-safe
  rendering of ``data``;
- checkpoints kept: the conversation is the projected units minus the oldest ones that are
  neither a checkpoint nor the newest unit, in order, each whole, cut with its omission
  notice, or empty when not even the notice fits;
- omissions exact: each notice counts exactly the bytes its cut left out, and the statistics
  add up (``omittedBytes`` is the dropped bytes plus the notices', the message counts match).

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from .interface import Implementation, JsonObject
from .propcheck import Probe, check_against, expected_case, statement_of
from .strategies_projection import surface_snapshots

__all__ = ["REQUIREMENTS", "projection_budget_check", "retention_requests"]

REQUIREMENTS = ["REF-RET-001", "REF-RET-003", "REF-RET-008", "REF-RET-010"]
LABELS = ("L", "main", "会话 <1>", 'say "hi"')
UNBOUNDED = 10**12  # bytes: more than any drawn snapshot needs


def _full_size(expected: Implementation, snapshot: JsonObject, label: str) -> int:
    """The size of the retained source when the budget cuts nothing (the expected answer)."""
    untouched = expected.run("reference.retain", {"snapshot": snapshot, "label": label},
                             {"maxBytes": UNBOUNDED})
    return int(untouched["size"])


@st.composite
def retention_requests(draw: st.DrawFn, expected: Implementation) -> JsonObject:
    """``{"snapshot", "label", "maxBytes"}``: one ``reference.retain`` request (its budgets
    scaled on the untouched size that ``expected`` gives)."""
    snapshot = draw(surface_snapshots())
    label = draw(st.sampled_from(LABELS))
    full = _full_size(expected, snapshot, label)
    # half the budgets fall in the top third, where retention cuts a message mid-text more
    # often than it drops whole ones (about 9 % of requests instead of 3 %)
    budget = draw(st.one_of(st.integers(1, full + 20),
                            st.integers(max(1, full * 2 // 3), max(1, full))))
    return {"snapshot": snapshot, "label": label, "maxBytes": budget}


def _probe(expected: Implementation, request: JsonObject) -> list[Probe]:
    data = {"snapshot": request["snapshot"], "label": request["label"]}
    case = expected_case(expected, "reference.retain", data,
                         {"maxBytes": request["maxBytes"]}, requirements=REQUIREMENTS,
                         suite="session-reference", prefix="ref",
                         description="A generated snapshot and budget on which an "
                         "implementation's retention broke the projection-budget property "
                         "or disagreed with the reference (shrunk by hypothesis).")
    return [Probe(case, statement_of(expected, "projection-budget", request))]


def projection_budget_check(impl: Implementation, *, max_examples: int = 50,
                            seed: int | None = None,
                            counterexample_dir: str | Path | None = None,
                            expected: Implementation | None = None) -> JsonObject:
    """Draw retention requests, check the property's statements on ``impl``'s results and
    compare them with the reference; the shrunk failing case is returned (and written to
    ``counterexample_dir``) as a vector."""
    return check_against(expected, retention_requests, _probe, impl, name="projection-budget",
                         capabilities=("session-reference",), max_examples=max_examples,
                         seed=seed, counterexample_dir=counterexample_dir)
