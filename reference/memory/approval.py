"""The approval gate inside the service (spec chapter ``memory/approval``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import invalid
from .inputs import Context
from .text import excerpt

POLICIES = ("ask", "auto", "off")
APPROVED = "allowed-once"
OUTCOMES = ("allowed-once", "rejected", "cancelled", "unavailable")
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

    @property
    def approved(self) -> bool:
        return self.outcome == APPROVED


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
    outcome = "unavailable"
    if gate is not None:
        try:
            answer = gate(dict(payload), write)
        except Exception:  # an approver that fails denies: fail closed (MEM-GATE-004)
            answer = "unavailable"
        outcome = answer if isinstance(answer, str) and answer else "unavailable"
    return Decision(outcome, f"{outcome} (via gate, writePolicy ask from {key})")


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
