"""Hypothesis strategies for invalid session logs: valid ones broken on purpose.

:func:`broken_logs` draws a valid log (:func:`dshkit.conformance.strategies.valid_logs`),
applies one :data:`BREAKS` at a drawn event, then keeps only a drawn number of the events after
it; each event before the break may be dropped too (rarely when drawing, first when
shrinking), so that hypothesis shrinks a failure to the break and the few events it needs:

- ``drop``: the event is removed and the later seqs renumbered (references follow), so the
  log misses a turn boundary, a call, a compaction bracket...;
- ``gap``: the event is removed and nothing renumbered (a seq gap);
- ``duplicate``: the event is written twice (the copy renumbered);
- ``swap``: the event and the next one change places (seqs by position);
- ``seq``: the event's seq becomes another value (a neighbour's, negative, a string, null);
- ``dangle``: a surface operation at or after the event points at a node that is not on the
  surface (a replace range bound, or a provenance seq, that no current node has);
- ``field``: the event loses a member it must have, or gets an unknown type or a data
  member that is not an object;
- ``number``: a turn or step number of a loop event is off by one.

The break may leave the log valid (e.g. the last event dropped); the property keeps only the
draws that its expected implementation refuses.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Set
from typing import Any

from hypothesis import strategies as st

from .strategies import Event, valid_logs

__all__ = ["BREAKS", "break_log", "broken_logs"]

BREAKS = ("drop", "gap", "duplicate", "swap", "seq", "dangle", "field", "number")
_BAD_SEQS: tuple[Callable[[int], Any], ...] = (
    lambda s: s - 1, lambda s: s + 1, lambda s: -1, lambda s: str(s), lambda s: None,
    lambda s: s + 0.5)
_FIELDS = ("type", "seq", "time", "data")
_KEEP = st.integers(0, 255)


def _remap(event: Event, seqs: dict[int, int], removed: Set[int]) -> None:
    """Point the seq references of ``event`` through ``seqs``: list members that name a
    ``removed`` event go (an emptied provenance with them), other unknown seqs stay."""
    def one(value: Any) -> Any:
        return seqs.get(value, value) if type(value) is int else value

    def many(values: list[Any]) -> list[Any]:
        return [one(v) for v in values if not (type(v) is int and v in removed)]

    op = event.get("surfaceOp")
    if isinstance(op, dict):
        for key in ("start", "end"):
            if key in op:
                op[key] = one(op[key])
    if isinstance(event.get("sourceEventSeqs"), list):
        event["sourceEventSeqs"] = many(event["sourceEventSeqs"])
        if not event["sourceEventSeqs"]:
            del event["sourceEventSeqs"]
    data = event.get("data")
    if isinstance(data, dict):
        bounds = data.get("shadowedRange")
        if isinstance(bounds, dict):
            for key in ("start", "end"):
                if key in bounds:
                    bounds[key] = one(bounds[key])
        for key in ("shadowedSeqs", "messageSeqs"):
            if isinstance(data.get(key), list):
                data[key] = many(data[key])


def _renumber(events: list[Event], removed: Set[int] = frozenset()) -> list[Event]:
    """Seqs by position from the first event's seq, references following their events (an
    event copied in has no seq of its own yet: it keeps its original's references);
    references to the ``removed`` seqs are dropped from lists."""
    base = events[0]["seq"] if events else 0
    seqs: dict[int, int] = {}
    for position, event in enumerate(events):
        old = event["seq"]
        if type(old) is int and old not in seqs:
            seqs[old] = base + position
    for position, event in enumerate(events):
        _remap(event, seqs, removed)
        event["seq"] = base + position
    return events


def _dangle(events: list[Event], index: int, form: int) -> None:
    """Point a surface operation at or after ``index`` at a node that is not there: the end of
    the next replace after the log (form 0), its start at an earlier event that is no surface
    node (form 1), or the provenance of the next surface event at a later seq (form 2)."""
    later = max((e["seq"] for e in events if type(e.get("seq")) is int), default=0) + 7
    ops = [e for e in events[index:] if "surfaceOp" in e]
    replaces = [e for e in ops if isinstance(e["surfaceOp"], dict)]
    if form < 2 and replaces:
        op = replaces[0]["surfaceOp"]
        if form == 0:
            op["end"] = later
        else:
            op["start"] = next((e["seq"] for e in events[:index] if "surfaceOp" not in e), -1)
    elif ops:
        ops[0]["sourceEventSeqs"] = [later]
    else:
        events[index]["surfaceOp"] = {"op": "replace", "start": later, "end": later}


def _number(event: Event, delta: int) -> None:
    data = event.get("data")
    if isinstance(data, dict):
        key = "step" if "step" in data else "turn" if "turn" in data else None
        if key is not None and type(data[key]) is int:
            data[key] += delta
            return
    event["data"] = {"turn": delta}


def break_log(events: list[Event], kind: str, index: int, variant: int) -> list[Event]:
    """``events`` (a copy) with break ``kind`` at event ``index``; ``variant`` picks among the
    break's forms."""
    out = copy.deepcopy(events)
    event = out[index]
    if kind == "drop":
        del out[index]
        return _renumber(out, {event["seq"]})
    if kind == "gap":
        del out[index]
    elif kind == "duplicate":
        out.insert(index + 1, copy.deepcopy(event))
        return _renumber(out)
    elif kind == "swap" and index + 1 < len(out):
        out[index], out[index + 1] = out[index + 1], out[index]
        return _renumber(out)
    elif kind == "seq":
        event["seq"] = _BAD_SEQS[variant % len(_BAD_SEQS)](int(event["seq"]))
    elif kind == "dangle":
        _dangle(out, index, variant % 3)
    elif kind == "field":
        forms = len(_FIELDS) + 2
        form = variant % forms
        if form < len(_FIELDS):
            del event[_FIELDS[form]]
        elif form == len(_FIELDS):
            event["type"] = "x-unknown/event"
            event.pop("ignorable", None)
        else:
            event["data"] = [event.get("data")]
    elif kind == "number":
        _number(event, 1 if variant % 2 == 0 else -1)
    return out


@st.composite
def _dropped(draw: st.DrawFn, lo: int, hi: int) -> set[int]:
    """Positions in ``lo:hi`` to drop: all when the span's draw is 0 (rare when drawing, what
    the shrinker tries first), else those of each half. The spans nest, so the shrinker can
    drop a whole block of events at once and a counterexample keeps only what the failure
    needs."""
    if hi <= lo:
        return set()
    if draw(_KEEP) == 0:
        return set(range(lo, hi))
    if hi - lo == 1:
        return set()
    mid = (lo + hi) // 2
    return draw(_dropped(lo, mid)) | draw(_dropped(mid, hi))


@st.composite
def broken_logs(draw: st.DrawFn, max_turns: int = 3) -> list[Event]:
    """A valid log with one break, cut a drawn number of events after the break."""
    events = draw(valid_logs(min_turns=1, max_turns=max_turns))
    index = draw(st.integers(0, len(events) - 1))
    dropped = draw(_dropped(0, index))
    if dropped:
        kept = [e for i, e in enumerate(events) if i not in dropped]
        events = _renumber(copy.deepcopy(kept), {events[i]["seq"] for i in dropped})
        index -= len(dropped)
    kind = draw(st.sampled_from(BREAKS))
    variant = draw(st.integers(0, 11))
    broken = break_log(events, kind, index, variant)
    keep = draw(st.integers(0, max(0, len(broken) - index - 1)))
    return broken[: index + 1 + keep]
