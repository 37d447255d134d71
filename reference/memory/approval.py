"""The approval gate inside the service (spec chapter ``memory/approval``)."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import invalid
from .inputs import Context
from .text import excerpt

POLICIES = ("ask", "auto", "off")
APPROVED = "allowed-once"
GATE_ERROR = "gate-error"
OUTCOMES = ("allowed-once", "rejected", "cancelled", "unavailable", GATE_ERROR)
#: MEM-GATE-010: the error type reported when a gate answers with no outcome string.
INVALID_ANSWER = "InvalidGateAnswer"
CAUSE_UNITS = 200
#: off is stricter than ask, ask than auto; on a tie the first key found decides.
_STRICTNESS = {"auto": 0, "ask": 1, "off": 2}
_KEY = re.compile(r"^(?:(?:user|agent)/(?:user-global|workspace)|source:[a-z0-9-]+)$")

Gate = Callable[[dict[str, Any], dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class Policy:
    """``writePolicy`` plus the ``writePolicies`` overrides (MEM-GATE-001)."""

    default: str = "ask"
    overrides: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, default: str, overrides: dict[str, str] | None) -> Policy:
        if default not in POLICIES:
            raise invalid("/writePolicy", f"writePolicy must be one of {', '.join(POLICIES)}")
        table = dict(overrides or {})
        for key, value in table.items():
            if not isinstance(key, str) or not _KEY.match(key):
                raise invalid(f"/writePolicies/{key}",
                              "keys are <track>/<scope> or source:<lowercase-id>")
            if value not in POLICIES:
                raise invalid(f"/writePolicies/{key}",
                              f"values must be one of {', '.join(POLICIES)}")
        return cls(default, table)

    def resolve(self, source: str | None, buckets: str | Iterable[str] | None) -> tuple[str, str]:
        """(policy, the key that decided) per MEM-GATE-002.

        Each bucket the write touches takes the strictest of its own override and the source
        override, or the global policy when neither is configured; the write takes the
        strictest over its buckets. A caller-supplied source can therefore tighten a bucket but
        never loosen one that the configuration set (and a batch cannot hide a bucket).
        """
        keys: list[str | None] = ([buckets] if isinstance(buckets, str)
                                  else [*sorted(set(buckets or ()))] or [None])
        source_key = f"source:{source}" if source is not None else None
        by_source = source_key if source_key in self.overrides else None
        chosen: tuple[str, str] | None = None
        for key in keys:
            candidates = [k for k in (by_source, key) if k is not None and k in self.overrides]
            found = [(self.overrides[k], k) for k in candidates] or [(self.default, "global")]
            for pair in found:
                if chosen is None or _STRICTNESS[pair[0]] > _STRICTNESS[chosen[0]]:
                    chosen = pair
        assert chosen is not None
        return chosen


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: str
    label: str
    #: for ``gate-error``: the gate's error type and its message, cut (MEM-GATE-010)
    error_type: str | None = None
    cause: str | None = None

    @property
    def approved(self) -> bool:
        return self.outcome == APPROVED

    def details(self) -> dict[str, Any]:
        """The ``details`` of the ``WRITE_DENIED`` this decision raises (MEM-GATE-006)."""
        if self.error_type is None:
            return {"outcome": self.outcome}
        return {"outcome": self.outcome, "errorType": self.error_type, "cause": self.cause}


CANCELLED = Decision("cancelled", "cancelled (via cancel token)")


def decide(policy: Policy, gate: Gate | None, ctx: Context, payload: dict[str, Any],
           write: dict[str, Any], lookup_source: str | None,
           lookup_bucket: str | Iterable[str] | None) -> Decision:
    """Run the gate for one write: session never, then the policy, then the approver."""
    if ctx.approval_policy == "never":
        return Decision("rejected", "rejected (via session never)")
    chosen, key = policy.resolve(lookup_source, lookup_bucket)
    if chosen == "off":
        return Decision("rejected", f"rejected (via writePolicy off from {key})")
    if chosen == "auto":
        return Decision(APPROVED, f"{APPROVED} (via writePolicy auto from {key})")
    if gate is None:  # fail closed (MEM-GATE-004), and say so in the ledger
        return Decision("unavailable", f"unavailable (via no gate, writePolicy ask from {key})")
    decider = f"gate, writePolicy ask from {key}"
    try:
        answer = gate(dict(payload), write)
        if inspect.isawaitable(answer):
            answer = _settle(answer)
    except Exception as exc:  # a failing approver denies, with its cause (MEM-GATE-010)
        return _gate_error(decider, type(exc).__name__, str(exc) or type(exc).__name__)
    if not isinstance(answer, str) or not answer:
        return _gate_error(decider, INVALID_ANSWER,
                           "the gate's answer is not a non-empty string")
    return Decision(answer, f"{answer} (via {decider})")


def _gate_error(decider: str, error_type: str, message: str) -> Decision:
    cause = excerpt(message, CAUSE_UNITS)
    return Decision(GATE_ERROR, f"{GATE_ERROR} (via {decider}): {error_type}: {cause}",
                    error_type, cause)


def _settle(answer: Awaitable[Any]) -> Any:
    """MEM-PKG-001: an awaitable answer is awaited on a private event loop. Inside a running
    loop the provider cannot block for it, so that is a gate error (and the coroutine is
    closed, not left "never awaited")."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_wait(answer))
    close = getattr(answer, "close", None)
    if callable(close):
        close()
    raise RuntimeError("an async gate cannot be awaited from inside a running event loop; "
                       "call the provider from a worker thread (asyncio.to_thread)")


async def _wait(answer: Awaitable[Any]) -> Any:
    return await answer


def payload(action: str, track: str, scope: str, text: str, *, source: str | None,
            targets: list[dict[str, Any]], count: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"action": action, "track": track, "scope": scope, "text": text}
    if source is not None:
        out["source"] = source
    if count is not None:
        out["count"] = count
    out["targets"] = targets
    return out


def replace_text(old: str, new: str) -> str:
    return f"from:\n{old}\n\nto:\n{new}"


def consolidate_text(matches: list[str], targets: list[str], new: str) -> str:
    parts = [f"remove: {m}\n{excerpt(t, 300)}" for m, t in zip(matches, targets, strict=True)]
    parts.append(f"new text: {new}")
    return "\n".join(parts)


def seed_text(lines: list[tuple[str, str, str]]) -> str:
    return "\n".join(f"{track}/{scope}: {text}" for track, scope, text in lines)


def seed_payload(items: list[tuple[str, str, str, str]], targets: list[dict[str, Any]],
                 ) -> tuple[dict[str, Any], str | None, set[tuple[str, str]]]:
    """The approval payload of a batch of ``(track, scope, text, source)`` entries (MEM-GATE-005:
    one bucket or ``batch``, the one source when there is one), that source, and the buckets."""
    buckets = {(track, scope) for track, scope, _, _ in items}
    sources = {source for _, _, _, source in items}
    track, scope = next(iter(buckets)) if len(buckets) == 1 else ("batch", "batch")
    common_source = next(iter(sources)) if len(sources) == 1 else None
    out = payload("seed", track, scope, seed_text([(t, s, text) for t, s, text, _ in items]),
                  source=common_source, targets=targets, count=len(items))
    return out, common_source, buckets
