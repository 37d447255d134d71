"""``dshkit adapt``: read other tools' memory files into protocol entries and write them back.

``import FORMAT PATH`` prints the entry inputs and the loss report (``--into-db`` seeds them into
a store, one approval); ``export FORMAT --db DB`` writes a store's entries in a format
(``--update`` changes only dshkit's region of an existing CLAUDE.md); ``convert`` goes from one
format to another through the entries. The adapters themselves never touch files: this module
reads the input and writes outputs atomically. Exit codes: 0 done, 1 refused (a loss under
``--strict``, an unrepresentable item, a budget, a denied write), 2 usage or I/O.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .adapters import FORMATS, REGISTRY, AdapterError, Loss, convert
from .adapters.budget import check_budgets, check_seed_size, usage_of
from .adapters.claude_imports import inside, is_managed_policy
from .adapters.hermes import FILES as HERMES_FILES
from .adapters.model import ExportResult
from .reference.json import inputs as json_input
from .reference.json.inputs import JsonInputError, parse_json
from .reference.memory import MemoryProtocolError, open_provider

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
_USAGE_CODES = {"ADAPTER_OPTION", "ADAPTER_NOT_FOUND", "IO_ERROR"}
_STORE_CODES = {"STORE_CORRUPT", "STORE_UNSUPPORTED_VERSION", "STORE_BUSY"}


class _IOFailure(Exception):
    """A file could not be read or written (exit 2, code IO_ERROR)."""


def _options(parser: argparse.ArgumentParser, flag: str = "--option",
             dest: str = "options") -> None:
    parser.add_argument(flag, action="append", default=[], dest=dest, metavar="KEY=VALUE",
                        help="adapter option (VALUE is read as JSON when it parses, else text)")


def add_parser(sub: Any) -> None:
    adapt = sub.add_parser("adapt", help="convert memory files of other tools (mem0, Hermes, "
                           "CLAUDE.md, MCP memory graph) to and from protocol entries")
    ops = adapt.add_subparsers(dest="adapt_op", required=True, metavar="OPERATION")

    listing = ops.add_parser("list", help="the adapters and their formats")
    listing.add_argument("--json", action="store_true")

    imp = ops.add_parser("import", help="print the entries a file converts to, with the loss "
                         "report; --into-db seeds them into a store")
    imp.add_argument("format", choices=FORMATS, metavar="FORMAT",
                     help=f"one of {', '.join(FORMATS)}")
    imp.add_argument("path", metavar="PATH", help="file, directory (hermes), or - for stdin")
    _common(imp)
    imp.add_argument("--target", choices=["memory", "user"],
                     help="hermes: which file a single PATH is (default: from its name)")
    imp.add_argument("--expand-imports", action="store_true",
                     help="claude-md: read @path imports into entries")
    imp.add_argument("--max-depth", type=int, help="claude-md: import hops (default 5)")
    imp.add_argument("--root", help="claude-md: imports may not leave this directory "
                     "(default: the file's directory)")
    imp.add_argument("--into-db", metavar="DB", help="seed the entries into this store")
    imp.add_argument("--yes", action="store_true", help="approve the seed without asking")
    imp.add_argument("--policy", choices=["ask", "auto", "off"], default="ask")
    imp.add_argument("--durability", choices=["normal", "full"], default="normal",
                     help="with --into-db: commit durability of the store (MEM-STO-001)")
    imp.add_argument("--session-id", default="dshkit-cli")
    imp.add_argument("--cwd", help="workspace directory of the seed (default: current)")
    imp.add_argument("--agent-preset")

    exp = ops.add_parser("export", help="write a store's entries in a format")
    exp.add_argument("format", choices=FORMATS, metavar="FORMAT",
                     help=f"one of {', '.join(FORMATS)}")
    exp.add_argument("--db", required=True, metavar="DB", help="the store to read")
    exp.add_argument("--output", metavar="PATH", help="write here (a directory for hermes "
                     "without --target) instead of stdout")
    exp.add_argument("--update", metavar="EXISTING", help="claude-md: replace dshkit's "
                     "region of this file, leaving the rest untouched")
    exp.add_argument("--target", choices=["memory", "user"], help="hermes: one file only")
    _common(exp)

    conv = ops.add_parser("convert", help="convert a file from one format to another")
    _convert_arguments(conv)
    _options(conv, "--read-option", "read_options")
    _options(conv, "--write-option", "write_options")


def _convert_arguments(conv: argparse.ArgumentParser) -> None:
    """The arguments ``dshkit adapt convert`` and its alias ``dshkit convert`` share."""
    conv.add_argument("--from", dest="source", required=True, choices=FORMATS, metavar="FMT")
    conv.add_argument("--to", dest="target_format", required=True, choices=FORMATS,
                      metavar="FMT")
    conv.add_argument("path", metavar="INPUT")
    conv.add_argument("-o", "--output", metavar="OUTPUT")
    conv.add_argument("--json", action="store_true")
    conv.add_argument("--strict", action="store_true", help="refuse any loss")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--strict", action="store_true", help="refuse any loss")
    parser.add_argument("--track", choices=["user", "agent"])
    parser.add_argument("--scope", choices=["user-global", "workspace"])
    parser.add_argument("--source")
    _options(parser)


# -- reading and writing files ----------------------------------------------------------------


def _read_text(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _IOFailure(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise _IOFailure(f"{path}: {exc.strerror or exc}") from None


def _payload(fmt: str, path: str, options: dict[str, Any]) -> Any:
    """The adapter payload of PATH, and the options only the CLI knows (paths, loader)."""
    if fmt == "hermes" and path != "-":
        target = Path(path)
        if target.is_dir():
            return {name: _read_text(str(target / name)) if (target / name).exists() else None
                    for name in HERMES_FILES}
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
            options["loader"] = _loader(root)
    return _read_text(path)


def _loader(root: str) -> Callable[[str], str | None]:
    """Reads an import; a path whose real location (symlinks resolved) leaves ``root`` is
    refused (ADP-CLI-005)."""
    real_root = os.path.realpath(root)

    def load(path: str) -> str | None:
        if not os.path.exists(path):
            return None
        if not inside(os.path.realpath(path), real_root):
            raise PermissionError(f"{path} resolves outside {root}")
        if not os.path.isfile(path):
            return None
        return Path(path).read_bytes().decode("utf-8")

    return load


def _write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory, fsync, rename; keep the mode of a
    file it replaces."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise _IOFailure(f"{path}: {exc.strerror or exc}") from None


#: A value that fails as JSON for one of these reasons is taken as text (ADP-CLI-006).
_TEXT_VALUES = frozenset({json_input.SYNTAX, json_input.NON_FINITE})


def _option_values(raw: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AdapterError("ADAPTER_OPTION", f"--option needs KEY=VALUE, got {item!r}",
                               key=item)
        try:
            out[key] = parse_json(value)
        except JsonInputError as exc:
            if exc.code not in _TEXT_VALUES:
                raise AdapterError("ADAPTER_OPTION", f"--option {key}: the value is JSON that "
                                   f"cannot be used: {exc.message}", key=key,
                                   reason=exc.code) from None
            out[key] = value  # not JSON: the value is the text itself
    return out


def _flag_options(args: argparse.Namespace) -> dict[str, Any]:
    options = _option_values(args.options)
    for flag in ("track", "scope", "source", "target"):
        value = getattr(args, flag, None)
        if value is not None:
            options[flag] = value
    if getattr(args, "expand_imports", False):
        options["expand"] = True
    if getattr(args, "max_depth", None) is not None:
        options["max_depth"] = args.max_depth
    if getattr(args, "root", None) is not None:
        options["root"] = Path(args.root).as_posix()
    if args.strict:
        options["strict"] = True
    return options


# -- reporting --------------------------------------------------------------------------------


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _describe(loss: dict[str, Any]) -> str:
    where = [str(loss[k]) if k != "line" else f"line {loss[k]}"
             for k in ("path", "line", "pointer") if k in loss]
    entry = f" (entry {loss['entry']})" if loss.get("entry") is not None else ""
    return f"{loss['kind']}{entry}{' at ' + ' '.join(where) if where else ''}: {loss['message']}"


def _report(losses: list[Loss], stream: Any) -> None:
    if not losses:
        stream.write("loss report: nothing lost\n")
        return
    stream.write(f"loss report: {len(losses)} item(s)\n")
    for loss in losses:
        stream.write(f"  - {_describe(loss.to_json())}\n")


def _one_line(text: str) -> str:
    flat = " ".join(text.split("\n"))
    return flat if len(flat) <= 100 else flat[:97] + "..."


def _fail(code: str, message: str, details: dict[str, Any], as_json: bool) -> int:
    if as_json:
        _emit({"code": code, "message": message, "details": details})
    else:
        where = " ".join(f"{k} {details[k]}" for k in ("path", "line", "pointer", "key")
                         if k in details)
        sys.stderr.write(f"{code}: {message}{f' ({where})' if where else ''}\n")
        for loss in details.get("losses", []):
            sys.stderr.write(f"  - {_describe(loss)}\n")
    if code in _USAGE_CODES or code in _STORE_CODES:
        return EXIT_USAGE
    return EXIT_REFUSED


# -- operations -------------------------------------------------------------------------------


def _cmd_list(args: argparse.Namespace) -> int:
    adapters = REGISTRY.list()
    if args.json:
        _emit({"adapters": adapters})
    else:
        for item in adapters:
            print(f"{item['id']}: {item['name']} (reads {', '.join(item['importFormats'])}; "
                  f"writes {item['exportFormat']})")
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    options = _flag_options(args)
    payload = _payload(args.format, args.path, options)
    result = REGISTRY.adapt(args.format, payload, options)
    if args.into_db:
        return _seed(args, result.entries, result.losses)
    if args.json:
        out = {"format": args.format, **result.to_json()}
        _emit(out)
    else:
        for entry in result.entries:
            tags = f" [{', '.join(entry['tags'])}]" if entry["tags"] else ""
            print(f"{entry['track']}/{entry['scope']}{tags}: {_one_line(entry['text'])}")
        print(f"{len(result.entries)} entries")
        _report(result.losses, sys.stdout)
    return EXIT_OK


def _gate(auto_yes: bool) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    def gate(payload: dict[str, Any], write: dict[str, Any]) -> str:
        if auto_yes:
            return "allowed-once"
        if not sys.stdin.isatty():
            return "unavailable"
        sys.stderr.write(f"memory seed of {payload.get('count')} entries:\n{payload['text']}\n"
                         "Approve? [y/N] ")
        sys.stderr.flush()
        return "allowed-once" if sys.stdin.readline().strip().lower() in ("y", "yes") \
            else "rejected"

    return gate


def _seed(args: argparse.Namespace, entries: list[dict[str, Any]], losses: list[Loss]) -> int:
    """ADP-CLI-002: sizes and budgets checked before the approval, then one seed."""
    if not entries:
        message = "nothing to import: the input holds no entries"
        if args.json:
            _emit({"format": args.format, "added": 0, "entries": [],
                   "losses": [x.to_json() for x in losses]})
        else:
            print(message)
            _report(losses, sys.stdout)
        return EXIT_OK
    check_seed_size(len(entries))
    header: dict[str, Any] = {"cwd": args.cwd if args.cwd is not None else os.getcwd()}
    if args.agent_preset is not None:
        header["agentPreset"] = args.agent_preset
    write = {"agent": {"session": {"id": args.session_id, "header": header}}}
    provider = open_provider(args.into_db, gate=_gate(args.yes), write_policy=args.policy,
                             durability=args.durability)
    try:
        rows = provider.budgets()
        limits = {(r["track"], r["scope"]): r["limit"] for r in rows}
        used = {(r["track"], r["scope"]): r["used"] for r in rows}
        check_budgets(usage_of(entries), limits, used)
        result = provider.seed(entries, write)
    finally:
        provider.close()
    if args.json:
        _emit({"format": args.format, "added": result["added"], "entries": result["entries"],
               "losses": [x.to_json() for x in losses]})
    else:
        print(f"seeded {result['added']} entries into {args.into_db}")
        _report(losses, sys.stdout)
    return EXIT_OK


def _store_entries(db: str) -> list[dict[str, Any]]:
    if not Path(db).is_file():
        raise _IOFailure(f"{db}: no memory store here")
    provider = open_provider(db)
    try:
        return provider.list_entries()
    finally:
        provider.close()


def _check_writable(path: str) -> None:
    if is_managed_policy(Path(path).as_posix()) or is_managed_policy(
            Path(path).resolve().as_posix()):
        raise AdapterError("ADAPTER_READ_ONLY", f"{path} is a managed-policy file: dshkit reads "
                           "it but never writes it", key="path", path=path)


def _cmd_export(args: argparse.Namespace) -> int:
    options = _flag_options(args)
    destination = args.output or args.update
    if destination:
        _check_writable(destination)
    if args.update:
        if args.format != "claude-md":
            raise AdapterError("ADAPTER_OPTION", "--update applies to claude-md only",
                               key="update")
        options["update"] = _read_text(args.update)
    if args.format == "claude-md" and destination:
        options["path"] = Path(destination).as_posix()
    entries = _store_entries(args.db)
    result = REGISTRY.export(args.format, entries, options)
    return _deliver(result, destination, args.json, {"format": args.format})


def _deliver(result: ExportResult, destination: str | None, as_json: bool,
             head: dict[str, Any], extra_losses: list[Loss] | None = None) -> int:
    written: list[str] = []
    if destination:
        written = _write_output(result, Path(destination))
    report_losses = (extra_losses or []) + result.losses
    if as_json:
        out = {**head, "kind": result.kind, "written": written,
               "losses": [x.to_json() for x in result.losses]}
        if extra_losses is not None:
            out["readLosses"] = [x.to_json() for x in extra_losses]
        if not destination:
            out["output"] = result.output
        _emit(out)
        return EXIT_OK
    if not destination:
        if result.kind == "files":
            assert isinstance(result.output, dict)
            for name, text in result.output.items():
                sys.stdout.write(f"==> {name} <==\n{text}\n")
        elif result.kind == "json":
            sys.stdout.write(json.dumps(result.output, ensure_ascii=False, indent=2) + "\n")
        else:
            assert isinstance(result.output, str)
            sys.stdout.write(result.output)
    else:
        for path in written:
            sys.stderr.write(f"wrote {path}\n")
    _report(report_losses, sys.stderr)
    return EXIT_OK


def _write_output(result: ExportResult, destination: Path) -> list[str]:
    if result.kind == "files":
        assert isinstance(result.output, dict)
        try:
            destination.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _IOFailure(f"{destination}: {exc.strerror or exc}") from None
        paths = []
        for name, text in result.output.items():
            _check_writable(str(destination / name))
            _write_atomic(destination / name, text)
            paths.append(str(destination / name))
        return paths
    if result.kind == "json":
        text = json.dumps(result.output, ensure_ascii=False, indent=2) + "\n"
    else:
        assert isinstance(result.output, str)
        text = result.output
    _write_atomic(destination, text)
    return [str(destination)]


def _cmd_convert(args: argparse.Namespace) -> int:
    read_options = _option_values(args.read_options)
    write_options = _option_values(args.write_options)
    payload = _payload(args.source, args.path, read_options)
    if args.output:
        _check_writable(args.output)
        if args.target_format == "claude-md":
            write_options.setdefault("path", Path(args.output).as_posix())
    done = convert(args.source, args.target_format, payload, read_options=read_options,
                   write_options=write_options, strict=args.strict)
    return _deliver(done.result, args.output, args.json,
                    {"from": args.source, "to": args.target_format,
                     "entries": len(done.entries)}, done.read_losses)


def run(args: argparse.Namespace) -> int:
    handlers = {"list": _cmd_list, "import": _cmd_import, "export": _cmd_export,
                "convert": _cmd_convert}
    as_json = bool(getattr(args, "json", False))
    try:
        return handlers[args.adapt_op](args)
    except AdapterError as exc:
        return _fail(exc.code, exc.message, exc.details, as_json)
    except MemoryProtocolError as exc:
        return _fail(exc.code, exc.message, exc.details, as_json)
    except _IOFailure as exc:
        return _fail("IO_ERROR", str(exc), {"key": "path"}, as_json)


def delegate(argv: list[str]) -> int:
    """Run ``dshkit adapt ARGV...``: the entry behind the issue-level spellings
    ``dshkit convert`` and ``dshkit memory import|export --adapter``."""
    parser = argparse.ArgumentParser(prog="dshkit")
    add_parser(parser.add_subparsers(dest="command", required=True))
    try:
        args = parser.parse_args(["adapt", *argv])
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    return run(args)


def add_convert_alias(sub: Any) -> None:
    """``dshkit convert --from FMT --to FMT INPUT`` (the same as ``dshkit adapt convert``)."""
    conv = sub.add_parser("convert", help="convert a memory file between formats (mem0, hermes, "
                          "hermes-bullets, claude-md, mcp-graph, dshkit)")
    _convert_arguments(conv)


def run_convert_alias(args: argparse.Namespace) -> int:
    argv = ["convert", "--from", args.source, "--to", args.target_format, args.path]
    if args.output:
        argv += ["--output", args.output]
    argv += [flag for flag, on in (("--json", args.json), ("--strict", args.strict)) if on]
    return delegate(argv)
