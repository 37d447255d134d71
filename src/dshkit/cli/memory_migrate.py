"""``dshkit memory migrate --from-memento SRC``: bring a dsh-memento store into the store of
``--db`` (spec chapter ``memory/migrate-memento``, MEM-CLI-011) and print the loss report."""

from __future__ import annotations

import argparse
from typing import Any


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from-memento", metavar="SRC", help="import the dsh-memento store "
                        "(memory.db, schema version 1 to 4) at SRC into --db, under one "
                        "approval; SRC is only read")


def read_source(args: argparse.Namespace) -> Any:
    """The source's image, read before the destination is opened, so that a source that
    cannot be imported leaves everything as it was (exit 2, flag ``--from-memento``)."""
    from ..reference.memory import MemoryProtocolError
    from ..reference.memory.memento_store import read_memento_store
    from . import exits
    from .report import from_error

    try:
        return read_memento_store(args.from_memento)
    except MemoryProtocolError as exc:
        raise from_error(exc.to_json(), exits.USAGE, flag="--from-memento",
                         path=str(exc.details.get("path", args.from_memento))) from None


def run(provider: Any, image: Any, write: dict[str, Any]) -> dict[str, Any]:
    from ..reference.memory.migrate import migrate_memento, plan, to_write
    from .approval import show_stored

    # The prompt shows the entries as they will be stored, each with its own keys.
    show_stored(provider.gate, to_write(provider.store, plan(image)))
    result: dict[str, Any] = migrate_memento(provider, image, write)
    return result


def _bare(name: Any) -> str:
    """A name read from the source, escaped like a text but without the quotes."""
    from ..reference.memory.text import visible

    return visible(str(name))[1:-1]


def describe(loss: dict[str, Any]) -> str:
    """One line of the loss report; a source id is shown escaped, as the prompt shows texts
    (it is whatever the source row holds)."""
    from ..reference.memory.text import visible

    kind = loss["kind"]
    if kind in ("entry", "proposal"):
        return f"{kind} {visible(str(loss['id']))} not carried: {loss['field']}: " \
               f"{_bare(loss['reason'])}"
    if kind == "unknown-column":
        return f"column {_bare(loss['table'])}.{_bare(loss['column'])} not read: {loss['reason']}"
    if kind == "unknown-table":
        return f"table {_bare(loss['table'])} not read: {loss['reason']}"
    if kind == "meta":
        return f"meta key {_bare(loss['key'])} not carried: {loss['reason']}"
    if kind == "audit-action":
        return f"{loss['rows']} audit rows of action {_bare(loss['action'])} not carried: " \
               f"{loss['reason']}"
    if kind == "ledger":
        return f"{loss['rows']} audit rows not carried: {loss['reason']}"
    if kind == "proposals":
        return f"{len(loss['ids'])} proposals not carried: {loss['reason']}"
    return f"{kind}: {loss.get('reason', '')}"


def human(result: dict[str, Any]) -> str:
    lines = [f"migrated dsh-memento store {result['source']} (schema version "
             f"{result['sourceVersion']}): added {result['added']} entries, skipped "
             f"{len(result['skipped'])} (already stored with the same content), carried "
             f"{result['ledgerRows']} audit rows and {result['proposals']['carried']} of "
             f"{result['proposals']['read']} proposals"]
    losses = result["losses"]
    lines.append(f"loss report: {len(losses)} item(s)" if losses else "loss report: nothing lost")
    lines += [f"  - {describe(loss)}" for loss in losses]
    return "\n".join(lines)
