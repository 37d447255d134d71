"""The one atomic file writer of the command line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .report import io_error


def write_atomic(path: Path, text: str, flag: str | None = None) -> None:
    """Write via a temporary file in the same directory, fsync, rename; keep the mode of a
    file it replaces. A failure is an IO_ERROR refusal naming ``flag``."""
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
        raise io_error(str(path), str(exc.strerror or exc), flag) from None
