"""Fuzz targets: hypothesis strategies of hostile inputs and the code each one is fed to.

Each :class:`Target` names the structured errors that may escape it; anything else is a crash.
The CI tests (``tests/test_fuzz_targets.py``) run every target briefly and let hypothesis
shrink a crash; :func:`fuzz` runs one target for a given number of inputs and counts crashes
without stopping (the long run of ``nox -s hardening``).

Byte-level inputs start from valid logs (``dshkit.conformance.strategies.valid_logs``) and are
damaged by a seeded mutator: bit flips, cuts, duplicated, dropped and swapped lines, and
splices of the tokens hostile files contain (``-0``, ``1e400``, lone surrogates, NUL, BOM,
invalid UTF-8, deep brackets, CR, forged ``surfaceOp`` objects). The seed is a hypothesis
draw, so every input replays.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import random
import shutil
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dshkit.adapters import BUILTIN, AdapterError
from dshkit.adapters.registry import check_output
from dshkit.conformance.strategies import valid_logs
from dshkit.conformance.strategies_adapters import any_json, any_text, entries
from dshkit.reference.json import codec as jsoncodec
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.exchange import envelope_entries
from dshkit.reference.problems import ProblemError
from dshkit.reference.session.folding import fold_events, load_events
from dshkit.reference.session.levels import Level
from dshkit.reference.session.reader import LogReader, open_bytes
from dshkit.reference.session.validation import validate_events, validate_path
from dshkit.reference.session.writer import encode_batch

from . import samples

Event = dict[str, Any]

TOKENS: tuple[bytes, ...] = (
    b"-0", b"-0.0", b"1e400", b"-1e-400", b"NaN", b"Infinity", b'"\\ud800"', b"\\udc00",
    b"\x00", b"\\u0000", b"\xef\xbb\xbf", b"\xff", b"\xed\xa0\x80", b"\xc3", b"\r", b"\r\n",
    b"\n", b"[" * 600, b"{" * 50, b"]", b"}", b'"', b"\\", b",", b":", b"null", b"true",
    b"9007199254740993", b"1" * 30, b"-" + b"9" * 25, b"0.1e-7", b"1.0",
    b'{"op":"replace","start":0,"end":99}', b'"surfaceOp":{"op":"replace","start":1,"end":0}',
    b'"sourceEventSeqs":[0,0]', b'"ignorable":false', b'"type":"turn/end"',
    b'{"type":"text-chunks","seq0":0,"time0":0,"data":{}}', b'"__proto__"', "\u2028".encode(),
)


def log_bytes(events: list[Event], header: bool = True) -> bytes:
    body = encode_batch(events) if events else b""
    return (samples.header_line() if header else b"") + body


def mutate(data: bytes, seed: int, count: int) -> bytes:
    """``count`` random damages to ``data``, chosen by ``seed``."""
    rnd = random.Random(seed)
    out = bytearray(data)
    for _ in range(count):
        op = rnd.randrange(9)
        at = rnd.randrange(len(out) + 1)
        if op == 0 and out:  # flip one bit
            at = min(at, len(out) - 1)
            out[at] ^= 1 << rnd.randrange(8)
        elif op == 1:  # cut the end (a crash)
            del out[at:]
        elif op == 2:  # drop a span
            del out[at:at + rnd.randrange(1, 64)]
        elif op in (3, 4):  # splice a hostile token
            out[at:at] = rnd.choice(TOKENS)
        elif op == 5:  # replace a span by a token
            out[at:at + rnd.randrange(1, 8)] = rnd.choice(TOKENS)
        else:  # line-level: duplicate, drop or swap whole lines
            lines = bytes(out).split(b"\n")
            if len(lines) > 2:
                i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
                if op == 6:
                    lines.insert(j, lines[i])
                elif op == 7:
                    del lines[i]
                else:
                    lines[i], lines[j] = lines[j], lines[i]
                out = bytearray(b"\n".join(lines))
    return bytes(out)


_LOGS = valid_logs(max_turns=2, balanced=False)


@st.composite
def damaged_logs(draw: st.DrawFn) -> bytes:
    events = draw(_LOGS)
    data = log_bytes(events)
    return mutate(data, draw(st.integers(0, 2**32)), draw(st.integers(0, 6)))


@st.composite
def damaged_zstd(draw: st.DrawFn) -> bytes:
    events = draw(_LOGS)
    cut = draw(st.integers(0, len(events)))
    frames = [samples.zstd_frame(samples.header_line())]
    for batch in (events[:cut], events[cut:]):
        if batch:
            frames.append(samples.zstd_frame(encode_batch(batch)))
    rnd = random.Random(draw(st.integers(0, 2**32)))
    choice = rnd.randrange(6)
    if choice == 0 and len(frames) > 1:  # damage one frame's compressed bytes
        index = rnd.randrange(1, len(frames))
        frames[index] = mutate(frames[index], rnd.randrange(2**32), rnd.randint(1, 3))
    elif choice == 1 and len(frames) > 1:  # damage the text inside a frame
        index = rnd.randrange(1, len(frames))
        frames[index] = samples.zstd_frame(mutate(encode_batch(events), rnd.randrange(2**32),
                                                  rnd.randint(1, 3)))
    elif choice == 2:  # a small bomb or a frame without a final newline
        frames.append(samples.rle_bomb(rnd.randint(1, 1 << 20), rnd.choice((b" ", b"\n", b"x"))))
    elif choice == 3 and len(frames) > 1:  # duplicate or reorder frames
        frames.append(frames[rnd.randrange(1, len(frames))])
        rnd.shuffle(frames)
    data = b"".join(frames)
    if choice == 4:  # torn at any byte
        data = data[:rnd.randrange(len(data) + 1)]
    return data


def _value_mutations(events: list[Event], seed: int, count: int) -> list[Any]:
    rnd = random.Random(seed)
    out: list[Any] = copy.deepcopy(events)
    junk: list[Any] = [None, True, -1, 0, 2**53, 1.5, "", "x", [], {}, {"op": "replace"},
                       {"op": "replace", "start": 0, "end": 0}, [0, 0], "append",
                       "turn/end", {"kind": "tool", "callId": 7}, 10**30, -(2**63)]
    for _ in range(count):
        if not out:
            break
        i = rnd.randrange(len(out))
        op = rnd.randrange(6)
        if op == 0:
            out.insert(rnd.randrange(len(out) + 1), copy.deepcopy(out[i]))
        elif op == 1:
            del out[i]
        elif op == 2:
            j = rnd.randrange(len(out))
            out[i], out[j] = out[j], out[i]
        elif isinstance(out[i], dict):
            target: Any = out[i]
            path = [target]
            while isinstance(target, dict | list) and target and rnd.random() < 0.6:
                key = rnd.choice(list(target)) if isinstance(target, dict) else rnd.randrange(
                    len(target))
                target = target[key]
                path.append(target)
            parent = path[-2] if len(path) > 1 else path[0]
            if isinstance(parent, dict) and parent:
                key = rnd.choice([*parent, "surfaceOp", "sourceEventSeqs", "ignorable"])
                if op == 3:
                    parent.pop(key, None)
                else:
                    parent[key] = rnd.choice(junk)
            elif isinstance(parent, list) and parent:
                parent[rnd.randrange(len(parent))] = rnd.choice(junk)
        else:
            out[i] = rnd.choice(junk)
    return out


@st.composite
def damaged_events(draw: st.DrawFn) -> list[Any]:
    return _value_mutations(draw(_LOGS), draw(st.integers(0, 2**32)), draw(st.integers(0, 5)))


def _envelope(entries_: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [{"track": t, "scope": c, "used": 0, "limit": 4000} for t, c in (
        ("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
        ("agent", "workspace"))]
    full = [{"id": f"00000000-0000-4000-8000-{n:012d}", "track": e["track"], "scope": e["scope"],
             "workspaceKey": "", "agentKey": "", "text": e["text"], "source": "dshkit",
             "tags": e.get("tags", []), "version": 1, "createdAt": 0, "updatedAt": 0,
             "lastRecalled": None, "recallCount": 0, "sessionId": None}
            for n, e in enumerate(entries_)]
    return {"plugin": "dshkit", "schema": "memory-export-v1",
            "exportedAt": "2026-01-01T00:00:00.000Z", "budgets": rows, "entries": full}


# built once: a strategy built inside a draw is rebuilt (and re-described) for every input
_ANY_JSON = any_json()
_ENTRIES = entries(max_size=4)


@st.composite
def hostile_envelopes(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(_ANY_JSON)
    envelope = _envelope(draw(_ENTRIES))
    if kind == 1:
        return envelope
    text = mutate(json.dumps(envelope).encode(), draw(st.integers(0, 2**32)),
                  draw(st.integers(1, 4)))
    try:
        return json.loads(text.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return text.decode("utf-8", "replace")


# -- what the inputs are fed to ------------------------------------------------------------------


def read_log(data: bytes) -> None:
    try:
        for _ in LogReader("-", tolerate_torn_tail=True, stdin=open_bytes(data)):
            pass
    except ProblemError:
        pass
    for _ in LogReader("-", tolerate_torn_tail=False, stdin=open_bytes(data)):
        pass


def validate_log(data: bytes) -> None:
    for level in Level:
        validate_path("-", level, stdin=open_bytes(data), typed=level is Level.LOAD)


def fold_log(events: list[Any]) -> None:
    fold_events(events)
    fold_events(events, repair=False)
    load_events(events)
    validate_events(events, Level.INVARIANTS, typed=True)
    for event in events[:3]:
        with contextlib.suppress(ProblemError):
            jsoncodec.loads(jsoncodec.dumps(event))


def decode_zstd(data: bytes) -> None:
    validate_path("-", Level.LOAD, stdin=open_bytes(data))
    read_log(data)


@dataclass
class _Store:
    """A memory store reopened fresh every ``every`` imports, so the long run stays small."""

    every: int = 300
    used: int = 0
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(
        prefix="fuzz-mem-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None)))
    provider: Any = None

    stores: int = 0

    def get(self) -> Any:
        if self.provider is None or self.used >= self.every:
            if self.provider is not None:
                self.provider.close()
                shutil.rmtree(self.directory, ignore_errors=True)
            self.stores += 1
            path = self.directory / f"m{self.stores}.db"
            self.provider = open_provider(path, write_policy="auto", budgets=_GENEROUS)
            self.used = 0
            if self.stores == 1:
                atexit.register(shutil.rmtree, self.directory, True)
        self.used += 1
        return self.provider


_GENEROUS = {"user": {"userGlobal": 10**9, "workspace": 10**9},
             "agent": {"userGlobal": 10**9, "workspace": 10**9}}
_STORE = _Store()
_WRITE = {"agent": {"session": {"id": "fuzz", "header": {"cwd": "/ws/fuzz"}}}}


def import_envelope(envelope: Any) -> None:
    with contextlib.suppress(MemoryProtocolError):
        envelope_entries(envelope)
    _STORE.get().import_envelope(envelope, _WRITE)


def _adapter(fmt: str) -> Callable[[Any], None]:
    adapter = next(a for a in BUILTIN if a.id == fmt)

    def run(value: Any) -> None:
        payload, options, to_write = value
        with contextlib.suppress(AdapterError):
            check_output(adapter.adapt(payload, options=options), fmt)
        adapter.export(to_write, options=options if isinstance(options, dict) else None)

    return run


def _adapter_inputs(fmt: str) -> st.SearchStrategy[Any]:
    options = st.one_of(st.none(), st.just({"target": "memory"} if fmt == "hermes" else {}),
                        any_json())
    return st.tuples(st.one_of(any_text(), any_json()), options,
                     st.one_of(entries(max_size=4), any_json()))


#: Crashes already reported, each with the strict-xfail row that tracks it: a hit is counted
#: apart from new crashes (the signature is the exception type and the start of its text).
KNOWN: dict[tuple[str, str], str] = {}


def known(exc: BaseException) -> str | None:
    for (name, text), test in KNOWN.items():
        if type(exc).__name__ == name and str(exc).startswith(text):
            return test
    return None


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    what: str
    strategy: st.SearchStrategy[Any]
    run: Callable[[Any], None]
    allowed: tuple[type[BaseException], ...]


TARGETS: tuple[Target, ...] = (
    Target("session-reader", "LogReader over damaged JSONL logs (tolerant and strict)",
           damaged_logs(), read_log, (ProblemError,)),
    Target("session-validator", "validate_path at every level (+ typed at load)",
           damaged_logs(), validate_log, (ProblemError,)),
    Target("session-fold", "fold, load and validate damaged event lists", damaged_events(),
           fold_log, (ProblemError,)),
    Target("zstd-decoder", "damaged, torn, reordered and bomb zstd frames", damaged_zstd(),
           decode_zstd, (ProblemError,)),
    Target("export-import", "memory-export-v1 envelopes into a provider", hostile_envelopes(),
           import_envelope, (MemoryProtocolError,)),
    *(Target(f"adapter-{fmt}", f"{fmt} adapt and export", _adapter_inputs(fmt), _adapter(fmt),
             (AdapterError,)) for fmt in ("mem0", "hermes", "hermes-bullets", "claude-md", "mcp-graph",
                                   "dshkit")),
)


def target(name: str) -> Target:
    return next(t for t in TARGETS if t.name == name)


@dataclass
class FuzzResult:
    target: str
    inputs: int = 0
    rejected: int = 0
    crashes: int = 0
    known: int = 0
    examples: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "inputs": self.inputs, "rejected": self.rejected,
                "crashes": self.crashes, "known": self.known, "examples": self.examples[:5],
                "seconds": round(self.seconds, 1)}


def fuzz(item: Target, inputs: int, seed: int | None = None) -> FuzzResult:
    """Feed ``inputs`` generated inputs to ``item``; crashes are counted, not raised."""
    import time

    result = FuzzResult(item.name)
    started = time.monotonic()

    @settings(max_examples=inputs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(item.strategy)
    def one(value: Any) -> None:
        result.inputs += 1
        try:
            item.run(value)
        except item.allowed:
            result.rejected += 1
        except Exception as exc:
            if known(exc) is not None:
                result.known += 1
                return
            result.crashes += 1
            if len(result.examples) < 5:
                result.examples.append(f"{traceback.format_exc(limit=-3)}\ninput: "
                                       f"{repr(value)[:600]}")

    if seed is not None:
        one = hypothesis.seed(seed)(one)
    one()
    result.seconds = time.monotonic() - started
    return result
