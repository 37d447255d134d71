"""The reporter: one text form and one JSON form for every command, and the one refusal
envelope ``{"ok": false, "command", "error": {...}}`` of every ``--json`` refusal (schema
``cli/v1/refusal.json``)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from . import exits

#: What a terminal acts on or hides, escaped in text output (TOOL-CLI-012): C0 controls but
#: TAB and LF, DEL, C1 controls, bidi controls and lone surrogates (which cannot be encoded).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal could act on written as ``\\xNN`` or
    ``\\uNNNN``; line feeds and tabs stay."""
    return _UNSAFE.sub(_escape, text)


def json_text(obj: Any) -> str:
    """One JSON text; a lone surrogate (from a log's ``\\udXXX`` escape) is written as its JSON
    escape, which UTF-8 cannot encode raw."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                          json.dumps(obj, ensure_ascii=False))


#: Members of ``error`` that locate the problem, in the order the text form prints them.
_LOCATION = ("path", "line", "seq", "pointer", "flag")


class Refusal(Exception):
    """A command could not do what was asked: a stable ``code``, an actionable ``message``,
    ``details`` (a JSON object) and the exit code. ``report`` is the command's own report when
    it has one (a validation report, an index report), printed as the envelope's ``report``."""

    def __init__(self, code: str, message: str, *, exit_code: int = exits.INVALID,
                 details: Mapping[str, Any] | None = None, path: str | None = None,
                 line: int | None = None, requirement: str | None = None,
                 flag: str | None = None, report: Mapping[str, Any] | None = None,
                 notes: tuple[str, ...] = (), extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code
        self.details = dict(details or {})
        self.path, self.line, self.requirement, self.flag = path, line, requirement, flag
        self.report = dict(report) if report is not None else None
        self.notes = notes
        self.extra = dict(extra or {})

    def error(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.extra, "code": self.code, "message": self.message,
                               "details": self.details}
        for key, value in (("path", self.path), ("line", self.line),
                           ("requirement", self.requirement), ("flag", self.flag)):
            if value is not None:
                out[key] = value
        return out

    def envelope(self, command: str) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "command": command, "error": self.error()}
        if self.report is not None:
            out["report"] = self.report
        return out


def from_error(error: Mapping[str, Any], exit_code: int, *, path: str | None = None,
               flag: str | None = None, report: Mapping[str, Any] | None = None,
               notes: tuple[str, ...] = ()) -> Refusal:
    """The refusal of a chapter's own error object (``code``, ``message`` and its other
    members, kept as they are in ``error``; ``details`` is its ``details`` member, else its
    other members)."""
    rest = {k: v for k, v in error.items() if k not in ("code", "message")}
    details = rest.pop("details", None)
    requirement = rest.pop("requirement", None)
    line = rest.pop("line", None)
    return Refusal(str(error["code"]), str(error["message"]), exit_code=exit_code,
                   details=details if isinstance(details, dict) else rest, path=path,
                   line=line if isinstance(line, int) else None,
                   requirement=requirement if isinstance(requirement, str) else None,
                   flag=flag, report=report, notes=notes, extra=rest)


def usage(message: str, flag: str | None = None, **details: Any) -> Refusal:
    return Refusal("USAGE", message, exit_code=exits.USAGE, flag=flag, details=details)


def io_error(path: str, reason: str, flag: str | None = None) -> Refusal:
    return Refusal("IO_ERROR", f"{path}: {reason}", exit_code=exits.USAGE, path=path,
                   flag=flag, details={"path": path})


class OutputFailed(Exception):
    """Standard output could not be written (not a broken pipe: that ends quietly)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _out(text: str, stream: Any = None) -> None:
    try:
        (stream or sys.stdout).write(text)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputFailed(str(exc.strerror or exc)) from None


def flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputFailed(str(exc.strerror or exc)) from None


def write_json(obj: Any, stream: Any = None) -> None:
    _out(json_text(obj) + "\n", stream)


class Reporter:
    """Where a command's results and refusals go: JSON lines on stdout with ``--json``,
    text otherwise (results on stdout, refusals on stderr)."""

    def __init__(self, command: str, as_json: bool) -> None:
        self.command, self.json = command, as_json

    def emit(self, obj: Any) -> None:
        write_json(obj)

    def say(self, text: str) -> None:
        _out(terminal_safe(text) + "\n")

    def note(self, text: str) -> None:
        sys.stderr.write(terminal_safe(text) + "\n")

    def refuse(self, refusal: Refusal) -> int:
        if self.json:
            write_json(refusal.envelope(self.command))
        else:
            sys.stderr.write(terminal_safe(describe(refusal)) + "\n")
            for note in refusal.notes:
                sys.stderr.write(terminal_safe(f"  - {note}") + "\n")
        return refusal.exit_code


def describe(refusal: Refusal) -> str:
    error = refusal.error()
    where = [f"{key} {error[key]}" if key != "path" else str(error[key])
             for key in _LOCATION if key in error
             and not (key == "flag" and str(error[key]) in refusal.message)]
    where += [f"{key} {value}" for key, value in refusal.details.items()
              if key in _LOCATION and key not in error and not isinstance(value, dict | list)]
    if refusal.requirement:
        where.append(refusal.requirement)
    return f"{refusal.code}: {refusal.message}" + (f" ({', '.join(where)})" if where else "")
