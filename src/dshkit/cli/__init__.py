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
from .report import OutputFailed, Refusal, Reporter, flush_stdout, usage

__all__ = ["main"]


class ArgumentError(Exception):
    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, measuring the terminal when it formats text rather than
    when it is made: argparse makes one for every option it adds (to check its ``nargs``), and
    measuring imports shutil (with lzma and bz2), which ``dshkit validate`` need not load."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width=width or 80)
        self._asked = (indent_increment, max_help_position, width)

    def format_help(self) -> str:
        indent, position, width = self._asked
        measured = argparse.HelpFormatter(self._prog, indent, position, width)
        self._width, self._max_help_position = measured._width, measured._max_help_position
        return super().format_help()


class Parser(argparse.ArgumentParser):
    """Reports a usage error to :func:`main` instead of exiting, so ``--json`` gets the
    envelope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

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
    # prog given, as argparse would compute it: computing it builds a help formatter, which
    # imports shutil (and lzma, bz2) to measure the terminal, on every start.
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                prog=parser.prog)
    for command in COMMANDS:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        if every or command is chosen:
            _hook(command, "configure")(child)
    return parser


#: Options whose value names a file: any bytes the system allows. Every other value is text
#: that dshkit stores, compares or prints, and must be UTF-8 (TOOL-CLI-011).
_FILE_OPTIONS = frozenset((
    "path", "paths", "db", "output", "operands", "opt_root", "session", "baseline", "config",
    "counterexamples", "junit", "markdown", "report", "summary_file", "prune_config", "impl",
    "read_options", "write_options"))


def _undecodable(args: argparse.Namespace) -> Refusal | None:
    """A text option whose bytes were not UTF-8 (Python decodes them to lone surrogates)."""
    for dest, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if dest in _FILE_OPTIONS or not any(
                isinstance(v, str) and not v.isascii() and _has_surrogate(v) for v in values):
            continue
        flag = "--" + dest.replace("_", "-")
        return usage(f"the value of {flag} is not valid UTF-8 text; give it as UTF-8",
                     flag=flag)
    return None


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


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
        code = _run(command, args, reporter)
        flush_stdout()
        return code
    except BrokenPipeError:
        return exits.OK
    except OutputFailed as failed:
        return _output_failed(failed)


def _run(command: Command, args: argparse.Namespace, reporter: Reporter) -> int:
    try:
        bad = _undecodable(args)
        if bad is not None:
            raise bad
        code: int = _hook(command, "run")(args, reporter)
        return code
    except Refusal as refusal:
        return reporter.refuse(refusal)
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except (BrokenPipeError, OutputFailed):
        raise
    except OSError as exc:  # a file or directory the command could not use: not a dshkit bug
        where = exc.filename
        reason = exc.strerror or str(exc)
        return reporter.refuse(Refusal(
            "IO_ERROR", f"{where}: {reason}" if where is not None else reason,
            exit_code=exits.USAGE, path=str(where) if where is not None else None,
            details={"path": str(where)} if where is not None else {}))
    except Exception as exc:  # the CLI never shows a traceback
        return reporter.refuse(Refusal(
            "INTERNAL_ERROR", f"{type(exc).__name__}: {exc}; this is a dshkit bug, please "
            "report it with the input", exit_code=exits.INTERNAL))


def _output_failed(failed: OutputFailed) -> int:
    """Standard output could not be written (a full disk, an I/O error): say so on standard
    error and exit 2; point the descriptor at the null device so that the interpreter's own
    flush at exit cannot fail again (TOOL-CLI-011)."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    with contextlib.suppress(OSError):
        sys.stderr.write(f"IO_ERROR: cannot write standard output: {failed.reason}\n")
    return exits.USAGE
