"""Turning references into one context message (REF-NRM-*, REF-RES-*).

The resolver reads sources only through the ``read_surface`` callable its caller passes in:
it never finds, lists or opens a session on its own, so which sessions may be referenced is
decided entirely by the host (REF-RES-001).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..json import codec as jsoncodec
from .config import ReferenceConfig
from .errors import (
    BUDGET_EXCEEDED,
    CANCELLED,
    INVALID_REFERENCE,
    READ_FAILED,
    SELF_REFERENCE,
    TOO_MANY,
    SessionReferenceError,
)
from .projection import RetainedSession, retain
from .prompt import message_source, reference_entry, render_prompt
from .snapshot import SurfaceSnapshot
from .uri import ReferenceInput


class Cancellation(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class NormalizedReference:
    session_id: str
    label: str
    input_index: int

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "label": self.label,
                "inputIndex": self.input_index}


def _fields(reference: Any) -> tuple[Any, Any, bool]:
    if isinstance(reference, ReferenceInput):
        return reference.session_id, reference.label, reference.label is not None
    if not isinstance(reference, dict):
        raise SessionReferenceError(INVALID_REFERENCE, "session reference must be an object")
    return reference.get("sessionId"), reference.get("label"), "label" in reference


def normalize_references(target_id: str, references: Sequence[Any], max_references: int
                         ) -> list[NormalizedReference]:
    """Validate in order, refuse the target itself, keep the first of each id, then cap
    (REF-NRM-001..004)."""
    seen: set[str] = set()
    out: list[NormalizedReference] = []
    for reference in references:
        session_id, label, has_label = _fields(reference)
        if not isinstance(session_id, str) or (has_label and not isinstance(label, str)):
            raise SessionReferenceError(
                INVALID_REFERENCE,
                "session reference must contain a string sessionId and optional string label")
        if session_id == target_id:
            raise SessionReferenceError(
                SELF_REFERENCE, f"session {jsoncodec.dumps(target_id)} cannot reference itself")
        if session_id in seen:
            continue
        seen.add(session_id)
        out.append(NormalizedReference(session_id, label if has_label else session_id,
                                       len(out)))
    if len(out) > max_references:
        raise SessionReferenceError(
            TOO_MANY, f"a message may reference at most {max_references} sessions")
    return out


@dataclass(frozen=True, slots=True)
class RenderedSource:
    reference: NormalizedReference
    retained: RetainedSession

    def entry(self) -> dict[str, Any]:
        return reference_entry(self.retained.data, self.retained.stats.to_json(),
                               self.reference.input_index)


@dataclass(frozen=True, slots=True)
class Prepared:
    """The accepted content (a detached copy) and, when there were references, the one
    context message that carries every source."""

    content: list[Any]
    additional_context: dict[str, Any] | None = None
    sources: tuple[RenderedSource, ...] = field(default=())

    @property
    def prompt(self) -> str | None:
        if self.additional_context is None:
            return None
        text: str = self.additional_context["content"][0]["text"]
        return text


ReadSurface = Callable[[str], SurfaceSnapshot]


def _check_cancel(cancel: Cancellation | None) -> None:
    if cancel is not None and cancel.is_set():
        raise SessionReferenceError(CANCELLED, "session reference preparation was cancelled")


def prepare(target_id: str, content: Sequence[Any], references: Sequence[Any],
            read_surface: ReadSurface, config: ReferenceConfig | None = None, *,
            cancel: Cancellation | None = None,
            new_id: Callable[[], str] = lambda: str(uuid.uuid4())) -> Prepared:
    """Resolve ``references`` for a message of session ``target_id`` (REF-RES-001..006)."""
    config = config or ReferenceConfig()
    accepted = copy.deepcopy(list(content))
    inputs = normalize_references(target_id, references, config.max_references)
    if not inputs:
        return Prepared(content=accepted)
    _check_cancel(cancel)
    snapshots: list[SurfaceSnapshot] = []
    for reference in inputs:
        try:
            snapshots.append(read_surface(reference.session_id))
        except Exception as exc:
            _check_cancel(cancel)
            message = exc.message if isinstance(exc, SessionReferenceError) else str(exc)
            raise SessionReferenceError(
                READ_FAILED, f"failed to read referenced session: {message}") from exc
    _check_cancel(cancel)
    rendered: list[RenderedSource] = []
    for reference, snapshot in zip(inputs, snapshots, strict=True):
        retained = retain(snapshot, reference.label, config.max_reference_bytes)
        if retained is None:
            raise SessionReferenceError(
                BUDGET_EXCEEDED,
                "referenced session snapshot cannot fit the configured byte budget")
        rendered.append(RenderedSource(reference, retained))
    prompt = render_prompt([source.retained.data for source in rendered])
    context = {"id": new_id(), "role": "user",
               "content": [{"type": "text", "text": prompt}],
               "source": message_source([source.entry() for source in rendered])}
    return Prepared(content=accepted, additional_context=context, sources=tuple(rendered))


def snapshots_resolver(snapshots: dict[str, SurfaceSnapshot]) -> ReadSurface:
    """A resolver over exactly the given snapshots: any other id fails to read."""

    def read(session_id: str) -> SurfaceSnapshot:
        try:
            return snapshots[session_id]
        except KeyError:
            raise LookupError(f'session "{session_id}" not found') from None

    return read
