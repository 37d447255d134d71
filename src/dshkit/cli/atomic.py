"""The one atomic file writer of the command line (TOOL-CLI-010)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from . import exits
from .report import Refusal, io_error

_KINDS = ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"),
          (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
          (stat.S_ISSOCK, "socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "special file")


def regular_target(path: Path, flag: str | None = None) -> Path:
    """The file to replace for ``path``: ``path`` itself, or the file a symbolic link names.
    Anything that exists and is not a regular file (a FIFO, a device, ``/proc/self/fd/1``, a
    directory) is refused: replacing it would swap a special node for a regular file."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(path).st_mode  # follows links, /proc/self/fd/N's included
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise io_error(str(path), str(exc.strerror or exc), flag) from None
    if stat.S_ISREG(mode):
        return target
    kind = _kind(mode)
    raise Refusal("IO_ERROR", f"{path}: not a regular file (a {kind}); the output is written "
                  "to a new file that replaces a regular one atomically, so name a file, or "
                  "leave the option out and redirect standard output",
                  exit_code=exits.USAGE, path=str(path), flag=flag,
                  details={"path": str(path), "kind": kind})


def write_atomic(path: Path, text: str, flag: str | None = None) -> None:
    """Write via a temporary file in the same directory, fsync, rename; keep the mode of a
    file it replaces. A failure is an IO_ERROR refusal naming ``flag``."""
    target = regular_target(path, flag)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        mode = target.stat().st_mode & 0o7777 if target.exists() else None
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise io_error(str(path), str(exc.strerror or exc), flag) from None
    except UnicodeEncodeError as exc:
        raise Refusal("IO_ERROR", f"{path}: the output holds a lone surrogate at character "
                      f"{exc.start} and cannot be written as UTF-8", exit_code=exits.USAGE,
                      path=str(path), flag=flag, details={"path": str(path)}) from None
