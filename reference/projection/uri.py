"""The ``dsh-session:`` URI and the inline mention grammar (REF-URI-*, REF-MEN-*)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Final

from ..json import codec as jsoncodec
from ..text import LINE_TERMINATORS, WHITESPACE
from .errors import INVALID_REFERENCE, SessionReferenceError

SCHEME: Final = "dsh-session:"


_PAYLOAD = re.compile(r"[A-Za-z0-9_-]+")
_MENTION = re.compile(
    r"@\[((?:\\[^" + LINE_TERMINATORS + r"]|[^\\\]])*)\]\((dsh-session:[^" + WHITESPACE
    + r")]*)\)|(dsh-session:[A-Za-z0-9_-]+)")
_ESCAPE = re.compile(r"[\\\]]")
_UNESCAPE = re.compile(r"\\([^" + LINE_TERMINATORS + "])")


def encode_uri(session_id: str) -> str:
    """``dsh-session:`` + unpadded base64url of the UTF-8 JSON string literal of the id."""
    payload = base64.urlsafe_b64encode(jsoncodec.dumps(session_id).encode("utf-8"))
    return SCHEME + payload.decode("ascii").rstrip("=")


def _invalid(uri: str) -> SessionReferenceError:
    return SessionReferenceError(INVALID_REFERENCE,
                                 f"invalid session reference URI {jsoncodec.dumps(uri)}")


def decode_uri(uri: str) -> str:
    """The session id of a canonical URI; anything else is ``INVALID_REFERENCE``."""
    if not uri.startswith(SCHEME):
        raise _invalid(uri)
    payload = uri[len(SCHEME):]
    if not _PAYLOAD.fullmatch(payload):
        raise _invalid(uri)
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        raise _invalid(uri) from None
    if not isinstance(value, str) or encode_uri(value) != uri:
        raise _invalid(uri)
    return value


@dataclass(frozen=True, slots=True)
class ReferenceInput:
    """A source named by a caller: an id and an optional display label."""

    session_id: str
    label: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"sessionId": self.session_id}
        if self.label is not None:
            out["label"] = self.label
        return out


def format_mention(session_id: str, label: str | None = None) -> str:
    """``@[label](uri)`` with ``\\`` and ``]`` of the label escaped by a backslash."""
    shown = _ESCAPE.sub(lambda m: "\\" + m.group(), session_id if label is None else label)
    return f"@[{shown}]({encode_uri(session_id)})"


@dataclass(frozen=True, slots=True)
class ParsedText:
    text: str
    references: tuple[ReferenceInput, ...]


def parse_text(text: str) -> ParsedText:
    """Replace every mention and bare URI by ``@label`` and collect the references in order
    of appearance, duplicates included (REF-MEN-003..005)."""
    references: list[ReferenceInput] = []

    def replace(match: re.Match[str]) -> str:
        raw_label, markdown_uri, bare_uri = match.group(1), match.group(2), match.group(3)
        session_id = decode_uri(markdown_uri if markdown_uri is not None else bare_uri)
        label = session_id if raw_label is None else _UNESCAPE.sub(r"\1", raw_label)
        references.append(ReferenceInput(session_id, label))
        return "@" + label

    rendered = _MENTION.sub(replace, text)
    return ParsedText(rendered, tuple(references))
