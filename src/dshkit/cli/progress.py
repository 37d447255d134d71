"""Progress on a terminal for work that can take more than a moment: a spinner with the task
and the elapsed time on standard error, drawn by rich and erased when the work ends.

It is off when standard error is not a terminal, with ``--json`` (whose output is for
programs), and when ``DSHKIT_NO_PROGRESS`` is set; rich is imported only when it is on, so
commands that show nothing pay nothing at start-up."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .report import Reporter


def enabled(out: Reporter) -> bool:
    if out.json or os.environ.get("DSHKIT_NO_PROGRESS"):
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def names(paths: Sequence[str], limit: int = 3) -> str:
    """The file names of ``paths`` for a task line (a terminal line is short)."""
    shown = [_file_name(p) or p for p in paths[:limit]]
    more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
    return ", ".join(shown) + more


def _file_name(path: str) -> str:
    """``PurePath(path).name``; where paths are POSIX ones, without importing pathlib (which
    costs ``dshkit validate`` a noticeable part of its start-up)."""
    if os.name != "posix":
        from pathlib import PurePath

        return PurePath(path).name
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return parts[-1] if parts else ""


@contextmanager
def working(out: Reporter, task: str) -> Iterator[None]:
    """Show ``task`` (e.g. ``folding session.jsonl``) while the block runs."""
    if not enabled(out):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        bar.add_task(task, total=None)
        yield


__all__ = ["enabled", "names", "working"]
