"""The option groups shared by commands: ``--json``, ``--db`` and the write context of a
memory write (``--yes``, ``--policy``, ``--session-id``, ``--cwd``, ``--agent-preset``,
``--durability``). ``suppress`` builds the copy an operation's parser inherits, so an option
may be given before or after the operation name."""

from __future__ import annotations

import argparse
import os
from typing import Any

JSON_HELP = ("print JSON: one object per result, and a refusal as the envelope "
             '{"ok": false, "command", "error"} (exit code unchanged)')
DEFAULT_SESSION_ID = "dshkit-cli"


def _default(value: Any, suppress: bool) -> Any:
    return argparse.SUPPRESS if suppress else value


def add_json(parser: argparse.ArgumentParser, suppress: bool = False) -> None:
    parser.add_argument("--json", action="store_true", default=_default(False, suppress),
                        help=JSON_HELP)


def add_db(parser: argparse.ArgumentParser, what: str, *, required: bool = False,
           suppress: bool = False, aliases: tuple[str, ...] = ()) -> None:
    """``--db PATH``; ``aliases`` are old spellings kept working but left out of --help."""
    parser.add_argument("--db", required=required, metavar="PATH",
                        default=_default(None, suppress), help=what)
    for alias in aliases:
        parser.add_argument(alias, dest="db", metavar="PATH", default=_default(None, suppress),
                            help=argparse.SUPPRESS)


def add_write_context(parser: argparse.ArgumentParser, suppress: bool = False, *,
                      gated: bool = True, writes: bool = True) -> None:
    """The write context: ``gated`` adds the approval options (``--yes``, ``--policy``),
    ``writes`` the session id and the commit durability; the reader (``--cwd``,
    ``--agent-preset``) is always there."""
    def default(value: Any) -> Any:
        return _default(value, suppress)

    if gated:
        parser.add_argument("--yes", action="store_true", default=default(False),
                            help="approve the write without asking (without a terminal and "
                            "without --yes, a write is refused: fail closed)")
        parser.add_argument("--policy", choices=["ask", "auto", "off"], default=default("ask"),
                            help="writePolicy of the store: ask (default) asks the approver, "
                            "auto approves, off refuses every write")
    if writes:
        parser.add_argument("--session-id", default=default(DEFAULT_SESSION_ID), metavar="ID",
                            help=f"session id recorded with the write (default "
                            f"{DEFAULT_SESSION_ID})")
    parser.add_argument("--cwd", default=default(None), metavar="DIR",
                        help="workspace directory of workspace-scoped entries (default: "
                        "the current directory)")
    parser.add_argument("--agent-preset", default=default(None), metavar="NAME",
                        help="agentPreset of the writing session (default: none)")
    if writes:
        parser.add_argument("--durability", choices=["normal", "full"],
                            default=default("normal"),
                            help="commit durability (MEM-STO-001): normal (default) survives a "
                            "crash of the process, full also a power loss, at one fsync per "
                            "write")


def write_context(args: argparse.Namespace) -> dict[str, Any]:
    """The ``write`` argument of a provider call, from the write-context options."""
    header: dict[str, Any] = {"cwd": args.cwd if args.cwd is not None else os.getcwd()}
    if args.agent_preset is not None:
        header["agentPreset"] = args.agent_preset
    return {"agent": {"session": {"id": args.session_id, "header": header}}}


#: The largest integer an option takes: what SQLite and JSON consumers hold exactly.
MAX_INTEGER = 2**63 - 1


def integer(low: int) -> Any:
    """An ``argparse`` type: a decimal integer from ``low`` to :data:`MAX_INTEGER`, so that a
    value no store or counter can hold is a usage error, not a crash (TOOL-CLI-011)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
        if not low <= value <= MAX_INTEGER:
            raise argparse.ArgumentTypeError(f"{text} is out of range: give an integer from "
                                             f"{low} to {MAX_INTEGER}")
        return value

    parse.__name__ = "integer"
    return parse


def output_path(text: str) -> str:
    """An ``argparse`` type for ``-o/--output``: a non-empty path."""
    if text == "":
        raise argparse.ArgumentTypeError("the output path is empty: name a file")
    return text
