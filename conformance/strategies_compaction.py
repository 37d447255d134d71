"""Hypothesis strategies for compaction (``dshkit.conformance.strategies_compaction``).

:func:`compactable_logs` draws loop-shaped session logs (turns, steps, tool calls answered or
not, injected messages, earlier compactions and prunes; see
:mod:`dshkit.conformance.strategies`) whose texts are long enough for a summary to pay off,
so that planners actually compact. :func:`priced_surfaces` draws abstract surfaces for region
selection, :func:`prune_contents` tool-result content lists for the pruner, and
:func:`summary_texts` summary texts. Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from .spec_constants import ES_WHITESPACE
from .strategies import valid_logs

Event = dict[str, Any]

__all__ = ["compactable_logs", "pad", "priced_surfaces", "prune_contents", "summary_texts",
           "with_header"]


def _pad_blocks(blocks: Any, factor: int) -> None:
    if not isinstance(blocks, list):
        return
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(
                block.get("text"), str):
            block["text"] = (block["text"] or "x") * factor
        elif isinstance(block, dict) and block.get("type") == "tool-result":
            _pad_blocks(block.get("content"), factor)


def pad(events: list[Event], factor: int) -> list[Event]:
    """A copy of ``events`` with every message text repeated ``factor`` times. Validity is
    kept: texts are free, and a tool-result rewrite may differ from its original only in the
    padded inner content."""
    out = copy.deepcopy(events)
    for event in out:
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        kind = event.get("type")
        if kind == "user/message":
            _pad_blocks(data.get("content"), factor)
        elif kind in ("assistant/message", "tool/result") and isinstance(data.get("message"),
                                                                         dict):
            _pad_blocks(data["message"].get("content"), factor)
    return out


def _shift(events: list[Event], at: int) -> list[Event]:
    """Renumber every seq reference >= ``at`` by one (to make room for an inserted event)."""

    def move(seq: Any) -> Any:
        return seq + 1 if isinstance(seq, int) and not isinstance(seq, bool) and seq >= at \
            else seq

    out = copy.deepcopy(events)
    for event in out:
        event["seq"] = move(event["seq"])
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            op["start"], op["end"] = move(op["start"]), move(op["end"])
        if isinstance(event.get("sourceEventSeqs"), list):
            event["sourceEventSeqs"] = [move(s) for s in event["sourceEventSeqs"]]
        data = event.get("data")
        if event.get("type") in ("compaction/summary", "compaction/prune") and isinstance(
                data, dict):
            span = data["shadowedRange"]
            span["start"], span["end"] = move(span["start"]), move(span["end"])
            data["shadowedSeqs"] = [move(s) for s in data["shadowedSeqs"]]
    return out


def with_header(events: list[Event], provider: str = "mock", model: str = "m") -> list[Event]:
    """Give a log a request header right after its first ``turn/start`` when it has none, so
    that the automatic triggers have a target."""
    if any(e.get("type") == "request/header" for e in events):
        return events
    first = next((i for i, e in enumerate(events) if e.get("type") == "turn/start"), None)
    if first is None:
        return events
    at = first + 1
    out = _shift(events, at)
    out.insert(at, {"type": "request/header", "seq": at, "time": events[first]["time"],
                    "data": {"header": {"config": {"provider": provider, "model": model}},
                             "reason": "initial"}})
    return out


@st.composite
def compactable_logs(draw: st.DrawFn, *, min_turns: int = 1, max_turns: int = 4,
                     balanced: bool = False) -> list[Event]:
    """A valid log (level ``invariants``, bracket rules kept) with padded texts and a request
    header. Unless ``balanced``, it ends between turns or, as often, anywhere inside its last
    turn, where a crash or a running agent leaves it (prunes need an open turn)."""
    events = with_header(draw(valid_logs(min_turns=min_turns, max_turns=max_turns)))
    if not balanced and draw(st.booleans()):
        starts = [i for i, e in enumerate(events) if e.get("type") == "turn/start"]
        headers = [i for i, e in enumerate(events) if e.get("type") == "request/header"]
        if starts:
            low = max(starts[-1], headers[0] if headers else 0) + 1
            events = events[:draw(st.integers(low, len(events)))]
    return pad(events, draw(st.integers(1, 60)))


@st.composite
def priced_surfaces(draw: st.DrawFn, max_nodes: int = 12) -> list[tuple[int, int, int]]:
    """``(seq, delta, tokens)`` nodes in surface order whose running balance never goes below
    zero: user nodes (0), assistant nodes with 0 to 2 calls, and results for open calls."""
    nodes: list[tuple[int, int, int]] = []
    open_calls = 0
    for seq in range(draw(st.integers(0, max_nodes))):
        choices = ["user", "assistant"] + (["result"] if open_calls else [])
        kind = draw(st.sampled_from(choices))
        tokens = draw(st.integers(0, 300))
        if kind == "assistant":
            calls = draw(st.integers(0, 2))
            open_calls += calls
            nodes.append((seq * 2, calls, tokens))
        elif kind == "result":
            open_calls -= 1
            nodes.append((seq * 2, -1, tokens))
        else:
            nodes.append((seq * 2, 0, tokens))
    return nodes


_TEXT = st.text(st.characters(codec="utf-8"), max_size=120)


@st.composite
def prune_contents(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Tool-result content: text blocks (astral characters included) mixed with other blocks."""
    blocks: list[dict[str, Any]] = []
    for index in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(("text", "text", "text", "reasoning", "tool-call")))
        if kind == "text":
            blocks.append({"type": "text", "text": draw(_TEXT) * draw(st.integers(1, 4))})
        elif kind == "reasoning":
            blocks.append({"type": "reasoning", "text": draw(_TEXT)})
        else:
            blocks.append({"type": "tool-call", "id": f"c{index}", "name": "n",
                           "arguments": "{}"})
    return blocks


def summary_texts() -> st.SearchStrategy[str]:
    """Summary texts with visible content, short enough to shrink a padded span."""
    return st.text(st.characters(codec="utf-8"),
                   min_size=1, max_size=80).filter(lambda s: s.strip(ES_WHITESPACE) != "")
