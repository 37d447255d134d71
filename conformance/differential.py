"""Differential testing of two session-log implementations on generated logs.

:func:`samples` draws a log with hypothesis: a valid one (``strategies.valid_logs``, whole or
cut like a crash cuts it) or a near-valid one made from it by one mutation (an event dropped,
duplicated or moved, a surface operation broken, a field corrupted, and in the file text a
number respelled, a byte order mark, a non-finite literal or a torn tail). A :class:`Sample`
holds the events (when the mutation is one of events) and the file text (header line and
one record per event).

:func:`compare` asks both implementations (the ``session-log`` suite's operations) for:

- the verdict of the events at levels ``append`` and ``seed``, and the surface (``fold``
  without repair) when both accept them;
- the verdict of the file text at level ``load``, and the surface (``fold`` with repair)
  when both accept it;

and returns the :class:`Disagreement` s on acceptance or on the surface (nodes, shadowed seqs,
messages). Error codes are not compared: two readers may stop at different problems of a
broken log.

:func:`explain` decides whether a disagreement is a documented divergence: a **reading** of a
divergence class rewrites the input the way the other implementation reads it (``JSON.parse``
forgets how an integer was spelled, an unparsable line stays unparsable whatever made it so,
...); when the reference, given the rewritten input, gives the other implementation's answer,
the disagreement is that class. :data:`DSH_READINGS` are the readings of DSH's divergence
classes (``harnesses/dsh/baseline.json``); a class without a reading never explains anything.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from .strategies import Event, valid_logs

__all__ = ["DSH_READINGS", "Disagreement", "Runner", "Sample", "compare", "explain",
           "file_text", "samples"]

JsonObject = dict[str, Any]
#: (operation, input, params) -> result, as a suite's ``reference`` takes them
Runner = Callable[[str, JsonObject, JsonObject], JsonObject]
Reading = Callable[["Sample"], "Sample | None"]

_HEADER = {"type": "session", "version": 0, "id": "differential", "createdAt": 0,
           "delegationDepth": 0}
_SURFACE = ("user/message", "assistant/message", "tool/result")


@dataclass(frozen=True, slots=True)
class Sample:
    label: str  # "valid", "prefix" or the mutation
    events: list[Event] | None  # None when the mutation is of the file text only
    text: str  # the log as a file: header line, one record per event

    def describe(self) -> str:
        return f"{self.label}: {self.text!r}"


@dataclass(frozen=True, slots=True)
class Disagreement:
    check: str  # e.g. "validate[seed] events", "fold[repair] text"
    kind: str  # "verdict" or "surface"
    reference: JsonObject
    other: JsonObject
    sample: Sample

    def describe(self) -> str:
        return (f"{self.check}: {self.kind} differs\n  reference: {_brief(self.reference)}\n"
                f"  other:     {_brief(self.other)}\n  sample {self.sample.describe()}")


def _brief(result: JsonObject) -> str:
    if result.get("valid") is False:
        error = result.get("error") or {}
        return f"refused {error.get('code')} at seq {error.get('seq')}: {error.get('message')}"
    return json.dumps({k: v for k, v in result.items() if k != "valid"},
                      ensure_ascii=False)[:400]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def file_text(events: Sequence[Any]) -> str:
    """A log as a file: the header line and one JSON record per event."""
    return "".join(_dumps(line) + "\n" for line in [_HEADER, *events])


# -- mutations -----------------------------------------------------------------------------------

def _renumber(events: list[Event]) -> list[Event]:
    for index, event in enumerate(events):
        if isinstance(event, dict):
            event["seq"] = index
    return events


def _drop(events: list[Event], i: int, renumber: bool) -> list[Event]:
    out = events[:i] + events[i + 1:]
    return _renumber(out) if renumber else out


def _duplicate(events: list[Event], i: int, renumber: bool) -> list[Event]:
    out = [*events[:i + 1], copy.deepcopy(events[i]), *events[i + 1:]]
    return _renumber(out) if renumber else out


def _swap(events: list[Event], i: int, renumber: bool) -> list[Event]:
    j = min(i + 1, len(events) - 1)
    out = list(events)
    out[i], out[j] = out[j], out[i]
    return _renumber(out) if renumber else out


_CORRUPTIONS: tuple[tuple[str, Callable[[Event], None]], ...] = (
    ("seq-negative", lambda e: e.__setitem__("seq", -1)),
    ("seq-string", lambda e: e.__setitem__("seq", str(e.get("seq")))),
    ("seq-fraction", lambda e: e.__setitem__("seq", float(e.get("seq", 0)) + 0.5)),
    ("time-string", lambda e: e.__setitem__("time", "now")),
    ("time-missing", lambda e: e.pop("time", None)),
    ("type-unknown", lambda e: e.__setitem__("type", "x/unknown")),
    ("type-unknown-ignorable", lambda e: e.update(type="x/unknown", ignorable=True)),
    ("ignorable-string", lambda e: e.__setitem__("ignorable", "yes")),
    ("data-missing", lambda e: e.pop("data", None)),
    ("data-null", lambda e: e.__setitem__("data", None)),
    ("extra-key", lambda e: e.__setitem__("extra", 1)),
    ("negative-zero", lambda e: e.__setitem__("data", {**(e.get("data") or {}), "z": -0.0})
     if isinstance(e.get("data"), dict) else None),
)


def _message(event: Event) -> JsonObject | None:
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    inner = data.get("message", data)
    return inner if isinstance(inner, dict) else None


_MESSAGE_CORRUPTIONS: tuple[tuple[str, Callable[[JsonObject], None]], ...] = (
    ("message-id-missing", lambda m: m.pop("id", None)),
    ("message-role-wrong", lambda m: m.__setitem__("role", "system")),
    ("message-content-string", lambda m: m.__setitem__("content", "text")),
    ("message-block-unknown", lambda m: m.__setitem__(
        "content", [*(m.get("content") or []), {"type": "video"}])),
    ("message-source-missing", lambda m: m.pop("source", None)),
)


def _surface_break(event: Event, kind: int, earlier: int) -> str:
    """Break the surface metadata of one event in one of several ways; returns the label."""
    op = event.get("surfaceOp")
    if kind == 0:
        if "surfaceOp" in event:
            del event["surfaceOp"]
            return "surface-op-removed"
        event["surfaceOp"] = "append"
        return "surface-op-added"
    if kind == 1:
        event["surfaceOp"] = "prepend"
        return "surface-op-invalid"
    if isinstance(op, dict) and kind == 2:
        op["start"], op["end"] = op.get("end"), op.get("start")
        return "replace-reversed"
    if isinstance(op, dict) and kind == 3:
        op["end"] = int(event.get("seq", 0)) + 5
        return "replace-end-unknown"
    sources = event.get("sourceEventSeqs")
    if isinstance(sources, list) and sources and kind == 4:
        sources.pop()
        return "provenance-dropped"
    if isinstance(sources, list) and sources and kind == 5:
        sources.append(sources[0])
        return "provenance-duplicate"
    if kind == 6:
        event["sourceEventSeqs"] = [int(event.get("seq", 0)) + 1]
        return "provenance-later"
    event["sourceEventSeqs"] = [earlier]
    return "provenance-set"


def _second_block(event: Event) -> bool:
    """Add a block after the tool-result block of a tool-result rewrite (if it is one)."""
    message = _message(event)
    if (event.get("type") != "tool/result" or not isinstance(event.get("surfaceOp"), dict)
            or message is None or not isinstance(message.get("content"), list)):
        return False
    message["content"] = [*message["content"], {"type": "text", "text": "added"}]
    return True


@st.composite
def _event_mutation(draw: st.DrawFn, events: list[Event]) -> Sample:
    events = copy.deepcopy(events)
    i = draw(st.integers(0, len(events) - 1))
    renumber = draw(st.booleans())
    what = draw(st.sampled_from(("drop", "duplicate", "swap", "surface", "corrupt",
                                 "message", "tool-rewrite")))
    label = what
    if what == "drop":
        events = _drop(events, i, renumber)
        label += "-renumbered" if renumber else ""
    elif what == "duplicate":
        events = _duplicate(events, i, renumber)
        label += "-renumbered" if renumber else ""
    elif what == "swap":
        events = _swap(events, i, renumber)
        label += "-renumbered" if renumber else ""
    elif what == "surface":
        surface = [e for e in events if e.get("type") in _SURFACE] or events
        event = draw(st.sampled_from(surface))
        label = _surface_break(event, draw(st.integers(0, 7)),
                               draw(st.integers(0, max(0, int(event.get("seq", 0)) - 1))))
    elif what == "corrupt":
        label, corrupt = draw(st.sampled_from(_CORRUPTIONS))
        corrupt(events[i])
        if label == "negative-zero":
            # Only as file text: the reference does not yet check in-memory events for
            # lossless JSON (jsoncodec.check_lossless is never called), see
            # tests/test_dsh_differential.py::test_reference_refuses_negative_zero_in_memory.
            return Sample(label, None, file_text(events))
    elif what == "message":
        candidates = [m for m in (_message(e) for e in events if e.get("type") in _SURFACE)
                      if m is not None]
        if candidates:
            label, corrupt_message = draw(st.sampled_from(_MESSAGE_CORRUPTIONS))
            corrupt_message(draw(st.sampled_from(candidates)))
        else:
            label = "message-none"
    else:
        rewrites = [e for e in events if _second_block(copy.deepcopy(e))]
        if rewrites:
            _second_block(draw(st.sampled_from(rewrites)))
            label = "tool-rewrite-second-block"
        else:
            label = "tool-rewrite-none"
    return Sample(label, events, file_text(events))


_INTEGER_MEMBER = re.compile(r'"(seq|time|turn|step|start|end)":(-?\d+)')


@st.composite
def _text_mutation(draw: st.DrawFn, events: list[Event]) -> Sample:
    lines = file_text(events).splitlines(keepends=True)
    what = draw(st.sampled_from(("respell", "respell-source", "bom", "non-finite",
                                 "torn-tail", "negative-zero-text")))
    line = draw(st.integers(1, len(lines) - 1))
    if what in ("respell", "respell-source"):
        spelling = draw(st.sampled_from((".0", "e0", ".00", "E0")))
        pattern = _INTEGER_MEMBER if what == "respell" else re.compile(
            r'("sourceEventSeqs":\[)(\d+)')
        hits = [(n, m) for n, text in enumerate(lines) if n >= 1
                for m in pattern.finditer(text)]
        if not hits:
            return Sample("respell-none", None, "".join(lines))
        n, match = draw(st.sampled_from(hits))
        text = lines[n]
        lines[n] = text[:match.end(2)] + spelling + text[match.end(2):]
        label = f"respell{spelling}"
    elif what == "bom":
        line = draw(st.sampled_from((0, line)))
        lines[line] = "\ufeff" + lines[line]
        label = f"bom-line-{'header' if line == 0 else 'record'}"
    elif what == "non-finite":
        literal = draw(st.sampled_from(("NaN", "Infinity", "-Infinity")))
        lines[line] = lines[line].rstrip("\n")[:-1] + f',"nf":{literal}}}\n'
        label = f"non-finite-{literal}"
    elif what == "torn-tail":
        last = lines[-1].rstrip("\n")
        lines[-1] = last[: draw(st.integers(1, max(1, len(last) - 1)))]
        label = "torn-tail"
    else:
        lines[line] = lines[line].rstrip("\n")[:-1] + ',"nz":-0}\n'
        label = "negative-zero-text"
    return Sample(label, None, "".join(lines))


@st.composite
def samples(draw: st.DrawFn, *, max_turns: int = 3) -> Sample:
    """A valid log, a crash-cut prefix of one, or a near-valid log (one mutation)."""
    events = draw(valid_logs(min_turns=1, max_turns=max_turns))
    kind = draw(st.sampled_from(("valid", "prefix", "events", "events", "events", "text",
                                 "text")))
    if kind == "prefix" or not events:
        cut = copy.deepcopy(events[: draw(st.integers(0, len(events)))])
        return Sample("prefix", cut, file_text(cut))
    if kind == "valid":
        return Sample("valid", events, file_text(events))
    if kind == "events":
        return draw(_event_mutation(events))
    return draw(_text_mutation(events))


# -- comparing ------------------------------------------------------------------------------------

def _surface(result: JsonObject) -> JsonObject:
    return {k: result.get(k) for k in ("nodes", "shadowed", "messages")}


def _checks(sample: Sample) -> list[tuple[str, str, JsonObject, JsonObject, bool]]:
    """(label, operation, input, params, compare-surface) of every question for a sample."""
    out: list[tuple[str, str, JsonObject, JsonObject, bool]] = []
    if sample.events is not None:
        log: JsonObject = {"events": sample.events}
        out += [("validate[append] events", "validate", log, {"level": "append"}, False),
                ("validate[seed] events", "validate", log, {"level": "seed"}, False),
                ("fold events", "fold", log, {"repair": False}, True)]
    text: JsonObject = {"text": sample.text}
    out += [("validate[load] text", "validate", text, {"level": "load"}, False),
            ("fold[repair] text", "fold", text, {"repair": True}, True)]
    return out


def _differ(reference: JsonObject, other: JsonObject, surface: bool) -> str:
    if bool(reference.get("valid")) is not bool(other.get("valid")):
        return "verdict"
    if surface and reference.get("valid") and _surface(reference) != _surface(other):
        return "surface"
    return ""


def compare(reference: Runner, other: Runner, sample: Sample) -> list[Disagreement]:
    """Every disagreement between the two implementations on one sample."""
    found: list[Disagreement] = []
    for label, operation, log, params, surface in _checks(sample):
        ref = reference(operation, log, params)
        got = other(operation, log, params)
        kind = _differ(ref, got, surface)
        if kind:
            found.append(Disagreement(label, kind, ref, got, sample))
    return found


def explain(disagreement: Disagreement, reference: Runner,
            readings: Mapping[str, Reading]) -> str | None:
    """The divergence class that explains a disagreement, or None.

    A class explains it when its reading changes the sample and the reference, given the
    changed sample, answers as the other implementation did (same verdict, same surface)."""
    for cls, reading in readings.items():
        read = reading(disagreement.sample)
        if read is None:
            continue
        for label, operation, log, params, surface in _checks(read):
            if label != disagreement.check:
                continue
            again = reference(operation, log, params)
            if not _differ(again, disagreement.other, surface):
                return cls
    return None


# -- DSH's readings of its divergence classes ----------------------------------------------------

def _lines(text: str) -> list[str]:
    return text.split("\n")


def _integral(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return value if math.copysign(1.0, value) < 0 and value == 0 else int(value)
    if isinstance(value, list):
        return [_integral(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    return value


def _integer_spelling(sample: Sample) -> Sample | None:
    """``JSON.parse`` keeps no spelling: ``1.0`` and ``1e0`` are read as the integer 1."""
    out = []
    for line in _lines(sample.text):
        try:
            value = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        fixed = _dumps(_integral(value))
        out.append(fixed if fixed != _dumps(value) else line)
    text = "\n".join(out)
    return replace(sample, text=text) if text != sample.text else None


def _unparsable(pattern: str) -> Reading:
    """A line holding ``pattern`` does not parse for ``JSON.parse``: the reading makes the
    line unparsable for the reference too (without the special reason)."""
    token = re.compile(pattern)

    def read(sample: Sample) -> Sample | None:
        lines = _lines(sample.text)
        changed = [("\x01" + line) if token.search(line) else line for line in lines]
        return replace(sample, text="\n".join(changed)) if changed != lines else None

    return read


def _negative_zero(sample: Sample) -> Sample | None:
    """DSH's restore path skips the lossless check: a stored ``-0`` loads (as zero)."""
    text = re.sub(r"(?<=[:\[,])-0(?:\.0+)?(?=[,}\]])", "0", sample.text)
    return replace(sample, text=text) if text != sample.text else None


def _first_block(sample: Sample) -> Sample | None:
    """DSH's rewrite check compares only the first content block of a tool-result rewrite."""
    if sample.events is None:
        return None
    events = copy.deepcopy(sample.events)
    changed = False
    for event in events:
        message = _message(event) if isinstance(event, dict) else None
        if (isinstance(event, dict) and event.get("type") == "tool/result"
                and isinstance(event.get("surfaceOp"), dict) and message is not None
                and isinstance(message.get("content"), list) and len(message["content"]) > 1):
            message["content"] = message["content"][:1]
            changed = True
    return Sample(sample.label, events, file_text(events)) if changed else None


def _events_read(sample: Sample, change: Callable[[Any], Any]) -> Sample | None:
    if sample.events is None:
        return None
    events = [change(e) for e in sample.events]
    if events == sample.events:
        return None
    return Sample(sample.label, events, file_text(events))


def _data_absent(sample: Sample) -> Sample | None:
    """DSH's append is handed ``undefined`` for a record without ``data`` and refuses it: the
    record cannot be appended at all, as if it were not an event."""
    return _events_read(sample, lambda e: None if isinstance(e, dict) and "data" not in e else e)


_REPAIR_READS = ("turn/start", "step/start", "tool/call")


def _null_payload(sample: Sample) -> Sample | None:
    """DSH's repair throws on a ``turn/start``, ``step/start`` or ``tool/call`` whose ``data``
    is null: the log cannot be repaired, as if that record were not an event (or, in a file,
    not readable)."""
    def broken(event: Any) -> bool:
        return (isinstance(event, dict) and event.get("type") in _REPAIR_READS
                and "data" in event and event["data"] is None)

    read = _events_read(sample, lambda e: None if broken(e) else e)
    if read is not None:
        return read
    lines = _lines(sample.text)
    changed = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        changed.append("\x01" + line if broken(value) else line)
    return replace(sample, text="\n".join(changed)) if changed != lines else None


#: class of harnesses/dsh/baseline.json -> how DSH reads an input of that class
DSH_READINGS: dict[str, Reading] = {
    "integer-spelling": _integer_spelling,
    "non-finite-literal": _unparsable(r"[:\[,]-?(?:NaN|Infinity)[,}\]]"),
    "bom": _unparsable("\ufeff"),
    "negative-zero-on-load": _negative_zero,
    "tool-rewrite-first-block": _first_block,
    "append-data-absent": _data_absent,
    "repair-null-payload": _null_payload,
}
