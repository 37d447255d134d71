"""MEM-CLI-002, shared by ``dshkit memory`` and ``dshkit adapt``: only an approved write
creates a memory store; a read of a missing store is refused and creates nothing."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import exits
from .report import Refusal


def store_missing(path: Path, reason: str) -> Refusal:
    return Refusal("STORE_MISSING", f"no memory store at {path}: {reason}; check --db (an "
                   "approved add, seed, import or migrate --from-memento creates the store)",
                   exit_code=exits.USAGE, details={"path": str(path), "reason": reason}, path=str(path), flag="--db")


def existing(path: Path) -> bool:
    """Is there a store (or something to refuse) at ``path``? An empty file is no store: only
    a write may turn it into one. A path that cannot name a file at all (below a regular file,
    a name too long) is left to the store's open, which says why (IO_ERROR)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        empty = path.is_file() and not path.is_symlink() and path.stat().st_size == 0
    except OSError:
        return True  # let the store's own open say what is wrong
    return not (empty and not os.path.lexists(f"{path}-wal"))


def require_store(path: Path) -> None:
    """A read: refuse STORE_MISSING unless a store (or something to refuse) is there."""
    if not existing(path):
        reason = "the file is empty" if os.path.lexists(path) else "the file does not exist"
        raise store_missing(path, reason)


def denied_before_open(args: argparse.Namespace) -> str | None:
    """The outcome of a write that is sure to be denied without asking anyone, or None."""
    if args.policy == "off":
        return "rejected"
    if args.yes or args.policy == "auto" or sys.stdin.isatty():
        return None
    return "unavailable"


def guard_write(args: argparse.Namespace, path: Path) -> None:
    """A write that would create the store: refused before anything is created when it is
    sure to be denied."""
    if existing(path):
        return
    outcome = denied_before_open(args)
    if outcome is not None:
        raise Refusal("WRITE_DENIED", denial(outcome) + f" (no store was created at {path})",
                      details={"outcome": outcome})


def denial(outcome: str) -> str:
    head = f"the memory write was not approved (outcome {outcome})"
    if outcome == "rejected":
        return f"{head}: --policy off refuses every write; nothing was changed"
    return (f"{head}: there is no terminal to ask; pass --yes to approve it, or --policy auto "
            "to approve every write without asking; nothing was changed")
