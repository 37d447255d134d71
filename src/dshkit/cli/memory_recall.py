"""``dshkit memory recall``: a memory query plus snippets of earlier sessions of the same
project (spec ``memory/recall``, MEM-CLI-010).

``--sessions`` names session logs (a directory or a log file), indexed into a private
in-memory index so that nothing is written next to them, or an index file built by
``dshkit query index``, opened read-only. Registered as an operation of ``dshkit memory``,
which opens the store; this module only builds the request, the index and the text.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .options import integer
from .report import Refusal, Reporter, usage

#: What ``--sessions`` is taken to be a log file by (anything else is an index file).
LOG_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst", ".json")
_LIMIT_FLAGS = (("--memory-limit", "memoryLimit", "memory entries (default 10, at most 1000)"),
                ("--history-limit", "historyLimit", "sessions scanned (default 8, at most 100)"),
                ("--snippets", "snippetCap", "snippets per session (default 5, at most 50)"),
                ("--snippet-chars", "snippetChars", "UTF-16 units per snippet (default 300)"),
                ("--window-days", "windowDays", "how many days back a session may have been "
                 "created (default 30)"))


def _now(text: str) -> int:
    """``--now``: milliseconds since the epoch, or an ISO 8601 timestamp with an offset."""
    from ..reference.query.errors import SessionQueryError
    from ..reference.query.timestamps import parse_timestamp

    if text.isdigit():
        return int(text)
    try:
        return parse_timestamp("now", text).millisecond
    except SessionQueryError:
        raise argparse.ArgumentTypeError(f"invalid time {text!r}: give milliseconds since the "
                                         "epoch or an ISO 8601 timestamp such as "
                                         "2026-01-31T12:00:00Z") from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", metavar="TEXT", help="what to look for in memory and history")
    parser.add_argument("--sessions", metavar="DIR_OR_INDEX", help="session logs (a directory "
                        "or a log file, indexed in memory) or a session index file (dshkit "
                        "query index; opened read-only); without it the history is "
                        "unavailable")
    parser.add_argument("--agent-key", metavar="KEY", help="only memory entries of this agent "
                        "key and shared ones")
    parser.add_argument("--now", type=_now, metavar="ISO|MS", help="the current time (default: "
                        "now); the window ends here")
    for flag, _, what in _LIMIT_FLAGS:
        parser.add_argument(flag, type=integer(0), metavar="N", help=what)


def request(args: argparse.Namespace) -> dict[str, Any]:
    """The recall request of the command's options (the session is a recall only with
    ``--session-id``)."""
    out: dict[str, Any] = {"text": args.text,
                           "cwd": args.cwd if args.cwd is not None else os.getcwd()}
    for key, value in (("sessionId", args.session_id), ("agentKey", args.agent_key),
                       ("now", args.now)):
        if value is not None:
            out[key] = value
    for flag, key, _ in _LIMIT_FLAGS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            out[key] = value
    return out


def _missing(path: str) -> Refusal:
    return usage(f"--sessions {path}: no such file or directory; give a folder of session "
                 "logs or an index built by dshkit query index", "--sessions", path=path)


def index_source(args: argparse.Namespace, out: Reporter) -> Callable[[], Any] | None:
    """What the history half reads, checked before the store is touched."""
    from ..reference.memory.recall_index import index_logs, open_readonly

    given = args.sessions
    if given is None:
        return None
    path = Path(given)
    if not path.exists():
        raise _missing(given)
    if path.is_file() and not path.name.endswith(LOG_SUFFIXES):
        return lambda: open_readonly(path)

    def logs() -> Any:
        store, report = index_logs([path])
        for failed in report.failed:
            assert failed.error is not None
            out.note(f"{failed.path}: left out: {failed.error.code}: {failed.error.message}")
        return store

    return logs


def call(provider: Any, args: argparse.Namespace, source: Callable[[], Any] | None
         ) -> dict[str, Any]:
    from ..reference.memory.recall import recall

    return recall(provider, request(args), source)


def render(result: dict[str, Any]) -> str:
    memory, history = result["memory"], result["history"]
    lines = [f"memory: {len(memory['entries'])} of {memory['total']}"]
    lines += [f"  {e['id']} {e['track']}/{e['scope']}: {e['text']}" for e in memory["entries"]]
    if not history["available"]:
        error = history.get("error")
        lines.append("history: unavailable" + ("" if error is None else
                                                 f" ({error['code']}: {error['message']})"))
        return "\n".join(lines)
    count = len(history["sessions"])
    lines.append(f"history: {count} session{'' if count == 1 else 's'}")
    for item in history["sessions"]:
        lines.append(f"  session {item['sessionId']}: {item['matches']} match"
                     f"{'' if item['matches'] == 1 else 'es'}")
        lines += ["    " + " ".join(snippet.split()) for snippet in item["snippets"]]
    return "\n".join(lines)


__all__ = ["call", "configure", "index_source", "render", "request"]
