"""The fast path of the checking loops: the common event shapes, checked inline.

Almost every event of a real log is one of a few shapes (chunks, steps, messages, tool calls
and results appended to the surface). :func:`absorber` gives a function that checks those with
straight-line code and applies them to the state machines of a :class:`~.state.CheckState`, without building a
problem, a pointer or a plan. Whenever an event is of another shape, or any check might fail,
it returns ``False`` before changing any state, and the caller runs the general path
(:meth:`~.pipeline.SessionChecker.push`), which is the reference: it finds, orders and reports problems.

So the fast path may only accept what the general path accepts, and must leave the same state
behind. It is deliberately stricter than the level needs (it always asks for a well-formed
envelope, a current message shape, a ``turn/end`` without legacy shape), which only sends more
events to the general path. ``tests/test_perf_fastpath.py`` runs both paths side by side on
every session vector and on generated and mutated logs and compares the states.

The fast path takes a run of events at a time and stops at the first one it declines. A few
counters (the next seq, the event count, the repair tracker's last seq and time) and the open
turn and step are kept in a cursor of its own while events stream through and written back by
``flush``; ``reload`` reads them again after the general path ran. The run loops in
:mod:`.pipeline` call ``flush`` before every general push and at the end, ``reload`` after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice
from operator import lt
from typing import Any, NamedTuple

from ..json.codec import MAX_SAFE_INTEGER
from .repair import Pending
from .state import CheckState
from .vocabulary import ENVELOPE_KEYS

_MAX = MAX_SAFE_INTEGER
_SIMPLE_END = ("completed", "blocked", "max-tokens", "interrupted")
_TURN_END_KEYS = frozenset({"turn", "reason"})
_KIND_KEY = frozenset({"kind"})
_ONLY_INT = frozenset({int})


class FastPath(NamedTuple):
    """The fast path of one run.

    ``absorb(events, start)`` absorbs ``events[start:]`` up to the first event it declines and
    returns that event's index (``len(events)`` when it took them all). ``flush()`` writes the
    counters back to the checker; ``reload()`` reads the checker's state again.
    """

    absorb: Callable[[Sequence[Any], int], int]
    flush: Callable[[], None]
    reload: Callable[[], None]


def _decline(events: Sequence[Any], start: int) -> int:
    return start


def _nothing() -> None:
    return None


class _Cursor:
    """What the fast path keeps between flushes: the next seq, the next seq at the last flush
    (the events absorbed since are the difference), the last time, and the enclosure trace's
    open turn and step."""

    __slots__ = ("flushed", "last_time", "next_seq", "open_step", "open_turn")

    def __init__(self, next_seq: int, last_time: Any, open_turn: Any, open_step: Any) -> None:
        self.next_seq = self.flushed = next_seq
        self.last_time = last_time
        self.open_turn = open_turn
        self.open_step = open_step


def absorber(checker: CheckState) -> FastPath:
    """The fast path over ``checker``'s state. Create it once the state is set up (observer,
    kept list) and use it for one run."""
    fold = checker.fold
    trace = checker.trace
    tracker = checker.tracker
    checks = checker.checks
    invariants = checks.invariants
    observer = checker.observer
    kept = checker.kept
    nodes = fold.nodes
    current = fold.by_seq
    pending = tracker.pending
    calls = trace.pending_calls
    envelope_keys = ENVELOPE_KEYS
    base = fold.base_seq
    if base < 0:  # not a log the fast path knows: every event takes the general path
        return FastPath(_decline, _nothing, _nothing)
    state = _Cursor(fold.next_seq, tracker.last_time, trace.open_turn, trace.open_step)

    def flush() -> None:
        next_seq, flushed = state.next_seq, state.flushed
        if next_seq != flushed:
            fold.advance_to(next_seq)
            checker.count += next_seq - flushed
            tracker.last_seq = next_seq - 1
            tracker.last_time = state.last_time
            state.flushed = next_seq

    def reload() -> None:
        state.next_seq = state.flushed = fold.next_seq
        state.open_turn = trace.open_turn
        state.open_step = trace.open_step

    def absorb(events: Sequence[Any], start: int) -> int:
        next_seq, open_turn, open_step = state.next_seq, state.open_turn, state.open_step
        if next_seq > _MAX - len(events):  # a seq past the safe range: the general path says so
            return start
        first = next_seq
        low, high = -_MAX, _MAX
        # In an open step, with the enclosure rules on: a chunk must name the open turn/step.
        scoped = invariants and open_step is not None and open_turn is not None
        watched = observer is not None or kept is not None
        type_, dict_, int_, bool_, len_ = type, dict, int, bool, len  # read once per event
        for event in (events if start == 0 else islice(events, start, None)):
            if type_(event) is not dict_:
                break
            try:  # a member that is missing ends the run (KeyError): the general path judges
                seq = event["seq"]
                time = event["time"]
                data = event["data"]
                if (seq != next_seq or type_(seq) is not int_ or type_(time) is not int_
                        or not low <= time <= high or type_(data) is not dict_):
                    break
                kind = event["type"]
                # Four members that include seq, time, data, type: the fixed envelope exactly.
                if len_(event) == 4:
                    if kind == "assistant/chunk":
                        if invariants and (not scoped or data["turn"] != open_turn
                                           or data["step"] != open_step
                                           or type_(data["turn"]) is bool_
                                           or type_(data["step"]) is bool_):
                            break
                    elif not _other(event, kind, data, seq, False, open_turn, open_step):
                        break
                    elif invariants:
                        open_turn, open_step = trace.open_turn, trace.open_step
                        scoped = open_step is not None and open_turn is not None
                elif (not event.keys() <= envelope_keys
                      or ("ignorable" in event and event["ignorable"] is not True)):
                    break
                elif kind == "assistant/chunk":
                    if ("surfaceOp" in event or "sourceEventSeqs" in event
                            or (invariants and (not scoped or data["turn"] != open_turn
                                                or data["step"] != open_step
                                                or type_(data["turn"]) is bool_
                                                or type_(data["step"]) is bool_))):
                        break
                elif not _other(event, kind, data, seq, True, open_turn, open_step):
                    break
                elif invariants:
                    open_turn, open_step = trace.open_turn, trace.open_step
                    scoped = open_step is not None and open_turn is not None
            except KeyError:
                break
            # Every check passed and the enclosure, repair and surface state moved on.
            next_seq += 1
            if watched:
                if observer is not None:
                    observer(event, seq)
                if kept is not None:
                    kept.append(event)
        index: int = start + next_seq - first
        if index > start:
            state.last_time = events[index - 1]["time"]
        state.next_seq, state.open_turn, state.open_step = next_seq, open_turn, open_step
        return index

    def _other(event: dict[str, Any], kind: Any, data: dict[str, Any], seq: int, extra: bool,
               open_turn: Any, open_step: Any) -> bool:
        """The checks and state changes of the less frequent common shapes. Every check comes
        before the first change of state; a member that is missing may raise KeyError, which
        declines the event."""
        if invariants and (type(data.get("turn")) is bool or type(data.get("step")) is bool):
            return False  # true == 1 in Python, never in DSH: the general path refuses it
        if kind == "assistant/message" or kind == "tool/result" or kind == "user/message":
            # The message shape (SES-MSG-001..008) of a well-formed message; it also settles
            # the legacy migration, which leaves a message with an id or a message member as
            # it is. Anything else takes the general path (``check_message_shape``).
            user = kind == "user/message"
            message = data if user else data["message"]
            if (type(message) is not dict or event["surfaceOp"] != "append"
                    or ("sourceEventSeqs" in event
                        and not _provenance(event["sourceEventSeqs"], seq, kind))):
                return False
            ident = message["id"]
            source = message["source"]
            content = message["content"]
            if (type(ident) is not str or not ident or type(source) is not dict
                    or type(content) is not list):
                return False
            source_kind = source["kind"]
            if user:
                if (message["role"] != "user" or type(source_kind) is not str
                        or not source_kind):
                    return False
            elif kind == "assistant/message":
                provider = source["provider"]
                model = source["model"]
                if (message["role"] != "assistant" or source_kind != "model"
                        or type(provider) is not str or not provider
                        or type(model) is not str or not model):
                    return False
                if invariants and (open_step is None or open_turn is None
                                   or data["turn"] != open_turn or data["step"] != open_step):
                    return False
                for block in content:
                    if type(block) is dict and block.get("type") == "tool-call":
                        call_id = block.get("id")
                        if isinstance(call_id, str):
                            pending[call_id] = Pending(step=data.get("step"))
            else:
                call_id = source["callId"]
                block = content[0] if len(content) == 1 else None
                if (message["role"] != "user" or source_kind != "tool"
                        or type(call_id) is not str or not call_id
                        or type(block) is not dict or block["type"] != "tool-result"
                        or type(block["content"]) is not list
                        or block["toolCallId"] != call_id):
                    return False
                if invariants:
                    if (open_step is None or open_turn is None
                            or data["turn"] != open_turn or data["step"] != open_step
                            or call_id not in calls):
                        return False
                    calls.discard(call_id)
                pending.pop(call_id, None)
            nodes.append(seq)
            current[seq] = event
            return True
        if extra and ("surfaceOp" in event or "sourceEventSeqs" in event):
            return False
        if kind == "step/end" or kind == "tool/call":
            if invariants and (open_step is None or open_turn is None
                               or data["turn"] != open_turn or data["step"] != open_step):
                return False
            if kind == "step/end":
                if invariants:
                    trace.open_step = None
                    calls.clear()
                pending.clear()
                tracker.open_step = None
            else:
                call_id = data.get("callId")
                if isinstance(call_id, str):
                    if invariants:
                        calls.add(call_id)
                    if call_id in pending:
                        pending[call_id].call_seq = seq
        elif kind == "step/start":
            if invariants:
                if (open_turn is None or data["turn"] != open_turn
                        or open_step is not None or data["step"] != trace.next_step):
                    return False
                trace.open_step = data["step"]
                trace.next_step += 1
                calls.clear()
            tracker.open_step = data.get("step")
        elif kind == "turn/start":
            if "trigger" in data:
                return False
            if invariants:
                if open_turn is not None or data["turn"] != trace.next_turn:
                    return False
                trace.open_turn = data["turn"]
                trace.next_turn += 1
                trace.next_step = 1
            tracker.open_turn = data.get("turn")
            tracker.open_step = None
            pending.clear()
        elif kind == "turn/end":
            if not _current_turn_end(data):
                return False
            if invariants:
                if open_turn is None or data["turn"] != open_turn or open_step is not None:
                    return False
                trace.open_turn = None
            tracker.open_turn = None
            tracker.open_step = None
            pending.clear()
        elif kind == "request/context":
            if invariants and open_turn is None:
                return False
        else:
            return False
        return True

    return FastPath(absorb, flush, reload)


def _provenance(sources: Any, seq: int, kind: str) -> bool:
    """SES-PROV-001..005 for an appended event (no shadowed nodes to cover): distinct
    integers from 0 to ``seq - 1``. Seqs in increasing order, as writers cite them, are checked
    without building a set."""
    if type(sources) is not list:
        return False
    if not sources:
        return kind == "assistant/message"
    if not _ONLY_INT.issuperset(map(type, sources)):
        return False
    if sources[0] >= 0 and sources[-1] < seq and all(map(lt, sources, islice(sources, 1, None))):
        return True
    return min(sources) >= 0 and max(sources) < seq and len(set(sources)) == len(sources)


def _current_turn_end(data: dict[str, Any]) -> bool:
    """A ``turn/end`` that the legacy migration leaves as it is (SES-LEG-003)."""
    turn = data.get("turn")
    reason = data.get("reason")
    return (type(turn) is int and 1 <= turn <= _MAX and data.keys() == _TURN_END_KEYS
            and type(reason) is dict and reason.get("kind") in _SIMPLE_END
            and reason.keys() == _KIND_KEY)
