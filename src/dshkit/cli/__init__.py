"""The ``dshkit`` command line: one registry of commands (imported lazily), one exit-code
table (:mod:`.exits`), one reporter and refusal envelope (:mod:`.report`)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn

from .. import __version__
from . import exits
from .registry import BY_NAME, COMMANDS, Command
from .report import Refusal, Reporter, usage

__all__ = ["main"]


class ArgumentError(Exception):
    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


class Parser(argparse.ArgumentParser):
    """Reports a usage error to :func:`main` instead of exiting, so ``--json`` gets the
    envelope."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(self, message)


def _module(command: Command) -> ModuleType:
    return importlib.import_module(command.module, __name__)


def _hook(command: Command, verb: str) -> Callable[..., Any]:
    name = f"{verb}_{command.prefix}" if command.prefix else verb
    hook: Callable[..., Any] = getattr(_module(command), name)
    return hook


def _chosen(argv: Sequence[str]) -> Command | None:
    for token in argv:
        if not token.startswith("-"):
            return BY_NAME.get(token)
    return None


def build_parser(chosen: Command | None = None, every: bool = False) -> argparse.ArgumentParser:
    """The parser; only the ``chosen`` command's options are added (all with ``every``)."""
    parser = Parser(prog="dshkit", description="Validate, fold and repair DeepSeek Harness "
                    "session logs; manage memory stores; convert other tools' memory files.",
                    epilog="Exit codes: 0 valid or done, 1 invalid or refused, 2 usage or "
                    "I/O error, 3 internal error. With --json a refusal prints "
                    '{"ok": false, "command", "error": {"code", "message", "details"}}.')
    parser.add_argument("--version", action="version", version=f"dshkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        if every or command is chosen:
            _hook(command, "configure")(child)
    return parser


def _usage_refusal(error: ArgumentError) -> Refusal:
    words = error.message.replace(",", " ").replace("/", " ").replace(":", " ").split()
    flag = next((word for word in words if word.startswith("-")), None)
    return usage(error.message, flag=flag, usage=error.parser.format_usage().strip())


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    chosen = _chosen(args_list)
    as_json = "--json" in args_list
    name = chosen.name if chosen else "dshkit"
    try:
        parser = build_parser(chosen)
        args = parser.parse_args(args_list)
    except ArgumentError as exc:
        if as_json:
            return Reporter(name, True).refuse(_usage_refusal(exc))
        exc.parser.print_usage(sys.stderr)
        sys.stderr.write(f"{exc.parser.prog}: error: {exc.message}\n")
        return exits.USAGE
    except SystemExit as exc:  # --help, --version
        return int(exc.code) if isinstance(exc.code, int) else exits.USAGE
    command = BY_NAME[args.command]
    reporter = Reporter(command.name, bool(getattr(args, "json", False)))
    try:
        code: int = _hook(command, "run")(args, reporter)
        return code
    except Refusal as refusal:
        return reporter.refuse(refusal)
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except BrokenPipeError:
        return exits.OK
    except Exception as exc:  # the CLI never shows a traceback
        return reporter.refuse(Refusal(
            "INTERNAL_ERROR", f"{type(exc).__name__}: {exc}; this is a dshkit bug, please "
            "report it with the input", exit_code=exits.INTERNAL))
