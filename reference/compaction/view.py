"""A session log as compaction reads it: the surface fold, the priced surface, the latest
request header and context, the open turn and the compaction lock markers.

The view is built from a list of events and can be extended event by event, which is how the
planner simulates the appends it proposes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..problems import ProblemError
from ..session.surface import SurfaceFold, derive_message
from .errors import CompactionError
from .pairing import Boundaries, node_delta
from .pairing import boundaries as _boundaries
from .tokens import estimate_header, estimate_message

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PricedNode:
    seq: int
    tokens: int

    def to_json(self) -> dict[str, int]:
        return {"seq": self.seq, "tokens": self.tokens}


@dataclass(frozen=True, slots=True)
class Measurement:
    """CMP-TOK-005 / CMP-TOK-006: the priced surface and the pressure estimate."""

    nodes: tuple[PricedNode, ...]
    surface_tokens: int
    header_tokens: int
    total_tokens: int
    baseline: str  # "none" | "estimated" | "provided"

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "headerTokens": self.header_tokens,
                "surfaceTokens": self.surface_tokens, "totalTokens": self.total_tokens,
                "nodes": [n.to_json() for n in self.nodes]}


def canonical_header(header: Any) -> dict[str, Any] | None:
    """The canonical form of a request header (SES-RQH-006)."""
    if not isinstance(header, dict):
        return None
    out: dict[str, Any] = {"config": header.get("config")}
    defaults = header.get("adapterDefaults")
    if isinstance(defaults, dict) and any(v is True for v in defaults.values()):
        out["adapterDefaults"] = defaults
    system = header.get("system")
    if isinstance(system, str) and system != "":
        out["system"] = system
    tools = header.get("tools")
    if isinstance(tools, list) and tools:
        out["tools"] = tools
    return out


@dataclass
class LogView:
    """Incremental compaction-relevant state of one log."""

    events: list[Event] = field(default_factory=list)
    fold: SurfaceFold = field(default_factory=SurfaceFold)
    header: dict[str, Any] | None = None
    context_window: int | None = None
    open_turn: int | None = None
    unmatched_start: Event | None = None
    latest_end_seed: int | None = None
    pressure_offset: int | None = None  # CMP-PLN-008: provider figure minus the heuristic
    _prices: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Iterable[Event]) -> LogView:
        view = cls()
        for event in events:
            view.push(event)
        return view

    @property
    def next_seq(self) -> int:
        return len(self.events)

    @property
    def last_time(self) -> int:
        for event in reversed(self.events):
            time = event.get("time")
            if type(time) is int:
                return time
        return 0

    def push(self, event: Event) -> None:
        """Fold one event; a surface refusal is reported as ``CMP_LOG_INVALID``."""
        if not isinstance(event, dict):
            raise CompactionError("CMP_LOG_INVALID", "CMP-PLN-002",
                                  f"event at position {len(self.events)} is not an object")
        try:
            self.fold.push(event)
        except ProblemError as exc:
            problem = exc.problem
            raise CompactionError(
                "CMP_LOG_INVALID", "CMP-PLN-002",
                f"the log does not fold at seq {event.get('seq')}: {problem.code}: "
                f"{problem.message}", seq=event.get("seq"), session=problem.code) from None
        self.events.append(event)
        self._observe(event)

    def _observe(self, event: Event) -> None:
        kind = event.get("type")
        data = event.get("data")
        if kind == "request/header" and isinstance(data, dict):
            self.header = canonical_header(data.get("header"))
        elif kind == "request/context":
            window = data.get("contextWindow") if isinstance(data, dict) else None
            self.context_window = window if type(window) is int and window > 0 else None
        elif kind == "turn/start" and isinstance(data, dict):
            turn = data.get("turn")
            self.open_turn = turn if type(turn) is int else None
        elif kind == "turn/end":
            self.open_turn = None
        elif kind == "compaction/start":
            self.unmatched_start = event
        elif kind == "compaction/end":
            self.unmatched_start = None
        elif kind == "session/end-seed":
            self.latest_end_seed = event["seq"]

    # -- the surface ----------------------------------------------------------------------

    @property
    def nodes(self) -> list[int]:
        return self.fold.nodes

    @property
    def replace_generation(self) -> int:
        return self.fold.replace_generation

    def event(self, seq: int) -> Event:
        return self.events[seq]

    def price(self, seq: int) -> int:
        """CMP-TOK-005: the price of a node is that of its derived message, 0 without one."""
        cached = self._prices.get(seq)
        if cached is None:
            message = derive_message(self.events[seq])
            cached = 0 if message is None else estimate_message(message)
            self._prices[seq] = cached
        return cached

    def measure(self) -> Measurement:
        nodes = tuple(PricedNode(seq, self.price(seq)) for seq in self.fold.nodes)
        surface = sum(n.tokens for n in nodes)
        header = estimate_header(self.header)
        if self.pressure_offset is not None:
            return Measurement(nodes=nodes, surface_tokens=surface, header_tokens=header,
                               total_tokens=max(0, header + surface + self.pressure_offset),
                               baseline="provided")
        baseline = "none" if self.header is None and surface == 0 else "estimated"
        return Measurement(nodes=nodes, surface_tokens=surface, header_tokens=header,
                           total_tokens=header + surface, baseline=baseline)

    def provide_pressure(self, tokens: int) -> None:
        """CMP-PLN-008: anchor the estimate on a figure the caller measured."""
        heuristic = estimate_header(self.header) + sum(self.price(s) for s in self.fold.nodes)
        self.pressure_offset = tokens - heuristic

    def boundaries(self) -> Boundaries:
        return _boundaries([(seq, node_delta(self.events[seq])) for seq in self.fold.nodes])

    def messages(self) -> list[dict[str, Any]]:
        """SES-DER-001: the derived messages of the current surface."""
        return self.messages_of(self.fold.nodes)

    def messages_of(self, seqs: Iterable[int]) -> list[dict[str, Any]]:
        out = []
        for seq in seqs:
            message = derive_message(self.events[seq])
            if message is not None:
                out.append(message)
        return out

    # -- the lock ---------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """CMP-LCK-002: a live unmatched ``compaction/start`` (no newer end-seed) holds the lock."""
        start = self.unmatched_start
        if start is None:
            return False
        return not (self.latest_end_seed is not None and self.latest_end_seed > start["seq"])

    def target(self) -> tuple[str, str] | None:
        """The provider and model of the latest request header, if both are non-empty."""
        config = self.header.get("config") if self.header else None
        if not isinstance(config, dict):
            return None
        provider, model = config.get("provider"), config.get("model")
        if isinstance(provider, str) and provider and isinstance(model, str) and model:
            return provider, model
        return None


__all__ = ["LogView", "Measurement", "PricedNode", "canonical_header"]
