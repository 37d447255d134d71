"""The memory-recall property: recall over generated session sets against any
implementation with the capability ``memory.recall`` (suite ``memory``, a ``recall`` step of
operation ``memory.calls``).

:func:`dshkit.conformance.strategies_recall.recall_requests` draws sessions of two projects,
created around a fixed ``now``, whose text is on and off the surface, and a request. Each
draw is one case whose expectation is the exact answer of ``expected`` (default: the
reference); before that comparison the property checks what the specification states of any
recall, read with the reference's own labels of the logs
(:mod:`dshkit.conformance.implementations.reference.statements`):

- only sessions of the request's project, created within the window, other than the current
  session, at most ``historyLimit`` of them (MEM-RCL-010, MEM-RCL-011);
- at most ``snippetCap`` snippets per session, none longer than ``snippetChars`` UTF-16 units
  plus the ellipsis (MEM-RCL-014);
- every snippet is, or is a cut of, a text on the current surface of its session that
  contains the query (MEM-RCL-012, MEM-RCL-013).

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from pathlib import Path

from .interface import Implementation, JsonObject
from .propcheck import Probe, check_against, expected_case, statement_of
from .strategies_recall import NOW, recall_requests

__all__ = ["CAPABILITIES", "REQUIREMENTS", "memory_recall_check", "recall_case_input"]

REQUIREMENTS = ["MEM-RCL-010", "MEM-RCL-011", "MEM-RCL-012", "MEM-RCL-013", "MEM-RCL-014"]
CAPABILITIES = ("memory.protocol", "memory.recall")
PARAMS: JsonObject = {"clock": {"start": NOW, "step": 1000},
                      "ids": {"prefix": "00000000-0000-4000-8000-", "start": 1}}


def recall_case_input(request: JsonObject) -> JsonObject:
    """The ``memory.calls`` program of one drawn request: open a store, recall."""
    return {"steps": [{"open": {"writePolicy": "auto"}},
                      {"recall": request["recall"], "sessions": request["sessions"]}]}


def _probe(expected: Implementation, request: JsonObject) -> list[Probe]:
    case = expected_case(expected, "memory.calls", recall_case_input(request), PARAMS,
                         requirements=REQUIREMENTS, suite="memory", prefix="mem",
                         description="A generated set of sessions and a recall on which an "
                         "implementation broke the memory-recall property or disagreed with "
                         "the reference (shrunk by hypothesis).")
    return [Probe(case, statement_of(expected, "memory-recall", request))]


def memory_recall_check(impl: Implementation, *, max_examples: int = 50,
                        seed: int | None = None, counterexample_dir: str | Path | None = None,
                        expected: Implementation | None = None) -> JsonObject:
    """Draw session sets and requests, check the property's statements on ``impl``'s
    recalls and compare them with the reference."""
    return check_against(expected, lambda _: recall_requests(), _probe, impl,
                         name="memory-recall", capabilities=CAPABILITIES,
                         max_examples=max_examples, seed=seed,
                         counterexample_dir=counterexample_dir)
