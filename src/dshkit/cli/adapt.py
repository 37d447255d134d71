"""``dshkit adapt`` (``list``, ``import``, ``export``, ``convert``) and ``dshkit convert``:
other tools' memory files to protocol entries and back (spec chapter ``adapters/index``).

One grammar for every command that reads or writes a format: ``--format FMT`` (import,
export, and ``memory import|export``), ``--from FMT --to FMT`` (convert), ``--db PATH`` for
the store, ``-o/--output PATH``, ``--read-option``/``--write-option KEY=VALUE`` and named
flags for the options a message may ask to change. The adapters never touch files: this module
reads the input and writes outputs atomically."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adapters import FORMATS, REGISTRY, AdapterError, Loss, convert
from ..adapters.claude_imports import is_managed_policy
from ..adapters.files import import_loader, read_hermes_home, read_text
from ..adapters.hermes import FILES as HERMES_FILES
from ..adapters.model import ExportResult
from ..reference.inputs import InputError
from ..reference.json import inputs as json_input
from ..reference.json.inputs import JsonInputError, parse_json
from ..reference.memory import MemoryProtocolError
from . import exits, store_guard
from .atomic import write_atomic
from .options import add_db, add_json, add_write_context, output_path, write_context
from .report import Refusal, Reporter, from_error, io_error, usage

_USAGE_CODES = {"ADAPTER_OPTION", "ADAPTER_NOT_FOUND", "IO_ERROR"}
_STORE_CODES = {"STORE_CORRUPT", "STORE_UNSUPPORTED_VERSION", "STORE_BUSY"}
FORMAT_LIST = ", ".join(FORMATS)


@dataclass(frozen=True)
class Flag:
    """A named flag for one adapter option (``key``); ``side`` is read or write."""

    flag: str
    key: str
    side: str
    help: str
    kind: str = "text"  # text, int, bool or a choice list joined by |
    choices: tuple[str, ...] = ()


FLAGS: tuple[Flag, ...] = (
    Flag("--track", "track", "read", "track of entries the file does not place (default: the "
         "format's)", choices=("user", "agent")),
    Flag("--scope", "scope", "read", "scope of entries the file does not place (default: the "
         "format's)", choices=("user-global", "workspace")),
    Flag("--source", "source", "read", "source recorded on the entries (default: the format "
         "name)"),
    Flag("--target", "target", "both", "hermes: which single file this is or is to be "
         "written (memory for MEMORY.md, user for USER.md; default: from the file name)",
         choices=("memory", "user")),
    Flag("--expand-imports", "expand", "read", "claude-md: read @path imports into entries",
         kind="bool"),
    Flag("--max-depth", "max_depth", "read", "claude-md: import hops (default 5)", kind="int"),
    Flag("--root", "root", "read", "claude-md: imports may not leave this directory "
         "(default: the file's directory)"),
    Flag("--memory-char-limit", "memory_char_limit", "write", "hermes: the character limit "
         "of MEMORY.md (default 2200)", kind="int"),
    Flag("--user-char-limit", "user_char_limit", "write", "hermes: the character limit of "
         "USER.md (default 1375)", kind="int"),
)
#: Options that only the command line sets, and their flags.
CLI_KEYS = {"update": "--update", "path": "-o/--output"}
FLAG_OF_KEY = {**{flag.key: flag.flag for flag in FLAGS}, **CLI_KEYS}


def _dest(flag: Flag) -> str:
    return "opt_" + flag.key


def add_flags(parser: argparse.ArgumentParser, sides: tuple[str, ...]) -> None:
    for flag in FLAGS:
        if flag.side not in sides and flag.side != "both":
            continue
        if flag.kind == "bool":
            parser.add_argument(flag.flag, dest=_dest(flag), action="store_true",
                                default=None, help=flag.help)
        else:
            parser.add_argument(flag.flag, dest=_dest(flag), default=None, help=flag.help,
                                type=int if flag.kind == "int" else str,
                                choices=flag.choices or None,
                                metavar="N" if flag.kind == "int" else None)


def add_option_lists(parser: argparse.ArgumentParser, sides: tuple[str, ...],
                     old_alias: bool = False) -> None:
    for side in sides:
        names = [f"--{side}-option"] + (["--option"] if old_alias else [])
        parser.add_argument(names[0], action="append", default=[], dest=f"{side}_options",
                            metavar="KEY=VALUE", help=f"any {side} option of the adapter "
                            "(repeatable; VALUE is read as JSON when it parses, else as text; "
                            "the adapters chapter lists them)")
        for alias in names[1:]:
            parser.add_argument(alias, action="append", dest=f"{side}_options",
                                help=argparse.SUPPRESS)


def add_strict(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="refuse any loss (ADAPTER_LOSS) instead of reporting it")


def add_output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-o", "--output", metavar="PATH", type=output_path, help=what)


def configure(adapt: argparse.ArgumentParser) -> None:
    adapt.description = (f"Formats: {FORMAT_LIST}. Exit codes: 0 done, 1 refused (a loss "
                         "under --strict, an unrepresentable item, a budget, a denied write), "
                         "2 usage or I/O.")
    ops = adapt.add_subparsers(dest="adapt_op", required=True, metavar="OPERATION")
    listing = ops.add_parser("list", help="the adapters and their formats")
    add_json(listing)
    configure_import(ops.add_parser("import", help="print the entries a file converts to, "
                                    "with the loss report; --db seeds them into a store"))
    configure_export(ops.add_parser("export", help="write a store's entries in a format"))
    configure_convert(ops.add_parser("convert", help="convert a file from one format to "
                                     "another"))


def _format_operands(parser: argparse.ArgumentParser, with_path: bool) -> None:
    parser.add_argument("--format", metavar="FMT", choices=FORMATS,
                        help=f"the file format: {FORMAT_LIST}")
    if with_path:
        parser.add_argument("operands", nargs="+", metavar="PATH",
                            help="file, directory (hermes), or - for stdin (the older "
                            "spelling FORMAT PATH is still read)")
    else:
        parser.add_argument("operands", nargs="*", metavar="FORMAT", help=argparse.SUPPRESS)


def configure_import(imp: argparse.ArgumentParser) -> None:
    _format_operands(imp, with_path=True)
    add_flags(imp, ("read",))
    add_option_lists(imp, ("read",), old_alias=True)
    add_strict(imp)
    add_output(imp, "write the entries and the loss report (JSON) here instead of stdout")
    add_db(imp, "seed the entries into this memory store (one approval)",
           aliases=("--into-db",))
    add_write_context(imp)
    add_json(imp)


def configure_export(exp: argparse.ArgumentParser) -> None:
    _format_operands(exp, with_path=False)
    add_db(exp, "the memory store to read", required=True)
    add_output(exp, "write here instead of stdout (a directory for hermes, unless the name "
               "is MEMORY.md or USER.md or --target is given)")
    exp.add_argument("--update", metavar="EXISTING", help="claude-md: replace dshkit's "
                     "region of this file, leaving the rest untouched")
    add_flags(exp, ("write",))
    add_option_lists(exp, ("write",), old_alias=True)
    add_strict(exp)
    add_json(exp)


def configure_convert(conv: argparse.ArgumentParser) -> None:
    conv.description = f"Convert a memory file between formats ({FORMAT_LIST})."
    conv.add_argument("--from", dest="source", required=True, choices=FORMATS, metavar="FMT",
                      help=f"format of INPUT: {FORMAT_LIST}")
    conv.add_argument("--to", dest="target_format", required=True, choices=FORMATS,
                      metavar="FMT", help=f"format to write: {FORMAT_LIST}")
    conv.add_argument("path", metavar="INPUT", help="file, directory (hermes), or - for stdin")
    add_output(conv, "write here instead of stdout (hermes: one file when the name is "
               "MEMORY.md or USER.md or --target is given, else a directory)")
    add_flags(conv, ("write",))
    add_option_lists(conv, ("read", "write"))
    add_strict(conv)
    add_json(conv)


# -- options ------------------------------------------------------------------------------------

#: A value that fails as JSON for one of these reasons is taken as text (ADP-CLI-006).
_TEXT_VALUES = frozenset({json_input.SYNTAX, json_input.NON_FINITE})


def option_values(raw: list[str], flag: str = "--read-option") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AdapterError("ADAPTER_OPTION", f"{flag} needs KEY=VALUE, got "
                               f"{json.dumps(item, ensure_ascii=False)}", key=item)
        try:
            out[key] = parse_json(value)
        except JsonInputError as exc:
            if exc.code not in _TEXT_VALUES:
                raise AdapterError("ADAPTER_OPTION", f"{flag} {key}: the value is JSON that "
                                   f"cannot be used: {exc.message}", key=key,
                                   reason=exc.code) from None
            out[key] = value  # not JSON: the value is the text itself
    return out


def side_options(args: argparse.Namespace, side: str, strict: bool = True) -> dict[str, Any]:
    options = option_values(getattr(args, f"{side}_options", []) or [], f"--{side}-option")
    for flag in FLAGS:
        value = getattr(args, _dest(flag), None)
        if value is not None and flag.side in (side, "both"):
            options[flag.key] = Path(value).as_posix() if flag.key == "root" else value
    if strict and getattr(args, "strict", False):
        options["strict"] = True
    return options


def _fmt(args: argparse.Namespace, with_path: bool) -> tuple[str, str | None]:
    """The format and path of ``import``/``export``: ``--format`` or the older leading
    FORMAT operand."""
    operands = list(args.operands)
    fmt = args.format
    if fmt is None and operands and operands[0] in FORMATS and len(operands) > int(with_path):
        fmt = operands.pop(0)
    if fmt is None:
        raise usage(f"name the format with --format FMT (one of {FORMAT_LIST})", "--format")
    if len(operands) != int(with_path):
        raise usage(f"expected {'one PATH' if with_path else 'no operand'}, got "
                    f"{len(operands)}: {' '.join(operands)}", "--format")
    return fmt, operands[0] if with_path else None


# -- reading and writing files -----------------------------------------------------------------


def _read_text(path: str) -> str:
    """A regular file of at most ``max_input_bytes`` (or standard input), as UTF-8 text."""
    try:
        return read_text(path)
    except InputError as exc:
        raise io_error(path, f"{exc.message} ({exc.code})") from None


def _payload(fmt: str, path: str, options: dict[str, Any]) -> Any:
    """The adapter payload of PATH, and the options only the CLI knows (paths, loader)."""
    if fmt == "hermes" and path != "-":
        target = Path(path)
        if target.is_dir():
            try:
                return read_hermes_home(target)
            except InputError as exc:  # a file linked out of the directory, a FIFO, too large
                raise io_error(exc.path, f"{exc.message} ({exc.code})") from None
        if target.name in HERMES_FILES and "target" not in options:
            return {target.name: _read_text(path)}
    if fmt == "claude-md" and path != "-":
        name = Path(path).as_posix()
        options.setdefault("path", name)
        root = str(options.get("root") or (os.path.dirname(name) or "."))
        options["root"] = root
        home = os.environ.get("HOME") or os.path.expanduser("~")
        if home and home != "~":
            options.setdefault("home", Path(home).as_posix())
        if options.get("expand"):
            options["loader"] = import_loader(root)
    return _read_text(path)


def _check_writable(path: str) -> None:
    if is_managed_policy(Path(path).as_posix()) or is_managed_policy(
            Path(path).resolve().as_posix()):
        raise AdapterError("ADAPTER_READ_ONLY", f"{path} is a managed-policy file: dshkit reads "
                           "it but never writes it", key="path", path=path)


def _hermes_target(fmt: str, destination: str | None, options: dict[str, Any]) -> None:
    """``-o MEMORY.md`` or ``-o USER.md`` writes that one Hermes file."""
    if fmt != "hermes" or destination is None or "target" in options:
        return
    for name, (target, _track, _limit) in HERMES_FILES.items():
        if Path(destination).name == name:
            options["target"] = target


# -- reporting ----------------------------------------------------------------------------------


def describe_loss(loss: Mapping[str, Any]) -> str:
    where = [str(loss[k]) if k != "line" else f"line {loss[k]}"
             for k in ("path", "line", "pointer") if k in loss]
    entry = f" (entry {loss['entry']})" if loss.get("entry") is not None else ""
    return f"{loss['kind']}{entry}{' at ' + ' '.join(where) if where else ''}: {loss['message']}"


def _report(losses: list[Loss], say: Callable[[str], None],
            renewed: tuple[str, ...] = ()) -> None:
    if not losses:
        say("loss report: nothing lost" + (" but the renewed members below" if renewed else ""))
    else:
        say(f"loss report: {len(losses)} item(s)")
    for loss in losses:
        say(f"  - {describe_loss(loss.to_json())}")
    if renewed:
        say(f"  - renewed, not kept: mem0 {', '.join(renewed)} (each entry gets its own id and "
            "times, as any import gives them; ADP-MEM-005)")


def _renewed(fmt: str, payload: Any) -> tuple[str, ...]:
    """What a read in ``fmt`` does not keep and the loss report does not list."""
    if fmt != "mem0":
        return ()
    from ..adapters.mem0 import renewed

    return renewed(payload)


def _one_line(text: str) -> str:
    flat = " ".join(text.split("\n"))
    return flat if len(flat) <= 100 else flat[:97] + "..."


def refusal_of(error: AdapterError | MemoryProtocolError,
               option_flag: str | None = None) -> Refusal:
    """An adapter or store error as a refusal, naming the flag that changes the option
    (``option_flag``: the flag of the command's other adapter options)."""
    details = dict(error.details)
    key = details.get("key")
    flag = FLAG_OF_KEY.get(key) if isinstance(key, str) else None
    if flag is None and isinstance(key, str) and key.startswith("budgets/"):
        flag = "--write-option budgets=..."
    elif flag is None and error.code == "ADAPTER_OPTION" and option_flag and isinstance(key, str) \
            and not any(name in error.message for name in option_flag.split(" or ")):
        flag = f"{option_flag} {key}=VALUE"
    message = error.message + (f" (set with {flag})" if flag and flag not in error.message
                               else "")
    usage_error = error.code in _USAGE_CODES or error.code in _STORE_CODES
    notes = tuple(describe_loss(loss) for loss in details.get("losses", [])
                  if isinstance(loss, dict))
    return from_error({"code": error.code, "message": message, "details": details},
                      exits.USAGE if usage_error else exits.INVALID, flag=flag, notes=notes,
                      path=details.get("path") if isinstance(details.get("path"), str)
                      else None)


# -- operations ---------------------------------------------------------------------------------


def run(args: argparse.Namespace, out: Reporter) -> int:
    handlers: dict[str, Callable[[argparse.Namespace, Reporter], int]] = {
        "list": _cmd_list, "import": _cmd_import, "export": _cmd_export,
        "convert": run_convert}
    sides = {"import": "--read-option", "export": "--write-option",
             "convert": "--read-option or --write-option"}
    try:
        return handlers[args.adapt_op](args, out)
    except (AdapterError, MemoryProtocolError) as exc:
        raise refusal_of(exc, sides.get(args.adapt_op)) from None


def _cmd_list(args: argparse.Namespace, out: Reporter) -> int:
    adapters = REGISTRY.list()
    if out.json:
        out.emit({"adapters": adapters})
    else:
        for item in adapters:
            out.say(f"{item['id']}: {item['name']} (reads {', '.join(item['importFormats'])}; "
                    f"writes {item['exportFormat']})")
    return exits.OK


@dataclass(frozen=True)
class Seed:
    """Where and how an import seeds its entries (``--db`` and the write context)."""

    db: str
    args: argparse.Namespace  # the write-context options


def _cmd_import(args: argparse.Namespace, out: Reporter) -> int:
    fmt, path = _fmt(args, with_path=True)
    assert path is not None
    seed = Seed(args.db, args) if args.db else None
    if seed is not None:
        store_guard.guard_write(args, Path(seed.db))
    return import_file(out, fmt, path, side_options(args, "read"), seed, args.output)


def import_file(out: Reporter, fmt: str, path: str, options: dict[str, Any],
                seed: Seed | None = None, output: str | None = None) -> int:
    """Read PATH in ``fmt``; print the entries, or seed them into a store."""
    try:
        payload = _payload(fmt, path, options)
        result = REGISTRY.adapt(fmt, payload, options)
        renewed = _renewed(fmt, payload)
        if seed is not None:
            return _seed(out, fmt, seed, result.entries, result.losses, renewed)
    except (AdapterError, MemoryProtocolError) as exc:
        raise refusal_of(exc, "--read-option") from None
    body = {"format": fmt, **result.to_json(), **({"renewed": list(renewed)} if renewed else {})}
    if output is not None:
        write_atomic(Path(output), json.dumps(body, ensure_ascii=False, indent=2) + "\n",
                     "--output")
        out.note(f"wrote {output}")
    if out.json:
        out.emit(body if output is None else {"format": fmt, "written": [output],
                                              "losses": body["losses"],
                                              **({"renewed": list(renewed)} if renewed else {})})
    elif output is None:
        for entry in result.entries:
            tags = f" [{', '.join(entry['tags'])}]" if entry["tags"] else ""
            out.say(f"{entry['track']}/{entry['scope']}{tags}: {_one_line(entry['text'])}")
        out.say(f"{len(result.entries)} entries")
        _report(result.losses, out.say, renewed)
    else:
        _report(result.losses, out.note, renewed)
    return exits.OK


def _seed(out: Reporter, fmt: str, seed: Seed, entries: list[dict[str, Any]],
          losses: list[Loss], renewed: tuple[str, ...] = ()) -> int:
    """ADP-CLI-002: sizes and budgets checked before the approval, then one seed."""
    from ..adapters.budget import check_budgets, check_seed_size, usage_of
    from ..reference.memory import open_provider
    from .approval import terminal_gate
    from .new_store import write_target

    if not entries:
        if out.json:
            out.emit({"format": fmt, "added": 0, "entries": [],
                      "losses": [x.to_json() for x in losses]})
        else:
            out.say("nothing to import: the input holds no entries")
            _report(losses, out.say)
        return exits.OK
    check_seed_size(len(entries))
    args = seed.args
    with write_target(Path(seed.db), create=True) as target:
        provider = open_provider(target.open_path, gate=terminal_gate(args.yes, entries),
                                 write_policy=args.policy, durability=args.durability)
        try:
            rows = provider.budgets()
            limits = {(r["track"], r["scope"]): r["limit"] for r in rows}
            used = {(r["track"], r["scope"]): r["used"] for r in rows}
            check_budgets(usage_of(entries), limits, used)
            result = provider.seed(entries, write_context(args))
        finally:
            provider.close()
    if out.json:
        out.emit({"format": fmt, "added": result["added"], "entries": result["entries"],
                  "losses": [x.to_json() for x in losses],
                  **({"renewed": list(renewed)} if renewed else {})})
    else:
        out.say(f"seeded {result['added']} entries into {seed.db}")
        _report(losses, out.say, renewed)
    return exits.OK


def _store_entries(db: str) -> list[dict[str, Any]]:
    from ..reference.memory import open_provider

    store_guard.require_store(Path(db))
    provider = open_provider(db)
    try:
        return provider.list_entries()
    finally:
        provider.close()


def _cmd_export(args: argparse.Namespace, out: Reporter) -> int:
    fmt, _ = _fmt(args, with_path=False)
    options = side_options(args, "write")
    return export_store(out, fmt, args.db, options, args.output, args.update)


def export_store(out: Reporter, fmt: str, db: str, options: dict[str, Any],
                 output: str | None = None, update: str | None = None) -> int:
    """Write the entries of the store ``db`` in ``fmt``, to ``output`` or stdout."""
    try:
        destination = output or update
        if destination:
            _check_writable(destination)
        if update:
            if fmt != "claude-md":
                raise AdapterError("ADAPTER_OPTION", "--update applies to --format claude-md "
                                   "only", key="update")
            options["update"] = _read_text(update)
        if fmt == "claude-md" and destination:
            options["path"] = Path(destination).as_posix()
        _hermes_target(fmt, output, options)
        entries = _store_entries(db)
        result = REGISTRY.export(fmt, entries, options)
        return _deliver(out, result, destination, {"format": fmt})
    except (AdapterError, MemoryProtocolError) as exc:
        raise refusal_of(exc, "--write-option") from None


def _deliver(out: Reporter, result: ExportResult, destination: str | None,
             head: dict[str, Any], extra_losses: list[Loss] | None = None,
             renewed: tuple[str, ...] = ()) -> int:
    written: list[str] = []
    if destination:
        written = _write_output(result, Path(destination))
    report_losses = (extra_losses or []) + result.losses
    if out.json:
        body = {**head, "kind": result.kind, "written": written,
                "losses": [x.to_json() for x in result.losses]}
        if extra_losses is not None:
            body["readLosses"] = [x.to_json() for x in extra_losses]
        if renewed:
            body["renewed"] = list(renewed)
        if not destination:
            body["output"] = result.output
        out.emit(body)
        return exits.OK
    if not destination:
        if result.kind == "files":
            assert isinstance(result.output, dict)
            for name, text in result.output.items():
                sys.stdout.write(f"==> {name} <==\n{text}\n")
        elif result.kind == "json":
            out.say(json.dumps(result.output, ensure_ascii=False, indent=2))
        else:
            assert isinstance(result.output, str)
            sys.stdout.write(result.output)
    else:
        for path in written:
            out.note(f"wrote {path}")
    _report(report_losses, out.note, renewed)
    return exits.OK


def _write_output(result: ExportResult, destination: Path) -> list[str]:
    if result.kind == "files":
        assert isinstance(result.output, dict)
        try:
            destination.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise io_error(str(destination), str(exc.strerror or exc), "--output") from None
        paths = []
        for name, text in result.output.items():
            _check_writable(str(destination / name))
            write_atomic(destination / name, text, "--output")
            paths.append(str(destination / name))
        return paths
    if result.kind == "json":
        text = json.dumps(result.output, ensure_ascii=False, indent=2) + "\n"
    else:
        assert isinstance(result.output, str)
        text = result.output
    write_atomic(destination, text, "--output")
    return [str(destination)]


def run_convert(args: argparse.Namespace, out: Reporter) -> int:
    try:
        read_options = option_values(args.read_options, "--read-option")
        write_options = side_options(args, "write", strict=False)
        payload = _payload(args.source, args.path, read_options)
        if args.output:
            _check_writable(args.output)
            if args.target_format == "claude-md":
                write_options.setdefault("path", Path(args.output).as_posix())
        _hermes_target(args.target_format, args.output, write_options)
        done = convert(args.source, args.target_format, payload, read_options=read_options,
                       write_options=write_options, strict=args.strict)
        return _deliver(out, done.result, args.output,
                        {"from": args.source, "to": args.target_format,
                         "entries": len(done.entries)}, done.read_losses,
                        _renewed(args.source, payload))
    except (AdapterError, MemoryProtocolError) as exc:
        raise refusal_of(exc, "--read-option or --write-option") from None
