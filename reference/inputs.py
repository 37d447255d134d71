"""One bounded opener for every file dshkit reads (spec chapter ``hardening``, "Inputs").

A path given to dshkit may name a FIFO that never ends, a device such as ``/dev/zero``, a
symbolic link out of the directory being imported, or a file of gigabytes. Every input goes
through here:

* :func:`open_input` opens a path without blocking (``O_NONBLOCK``, so a FIFO with no writer
  cannot hang the open) and checks the opened descriptor with ``fstat``: anything but a regular
  file is refused before one byte is read. With ``root``, a path whose real location (links
  resolved) leaves ``root`` is refused, and the opened file must be the one that was checked.
* :func:`read_input` reads a whole file up to ``max_input_bytes`` (of :mod:`.limits`, or an
  explicit bound), refusing a larger file from its size before reading it.
* :func:`read_stream` reads standard input (or any stream) with the same bound.
* :func:`read_in_directory` reads named files of one directory, never following a link out.

Every refusal is an :class:`InputError`: a stable code, the path and an actionable message.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable
from typing import BinaryIO, Final

from . import limits
from .errors import DshkitError

NOT_REGULAR: Final = "INPUT_NOT_REGULAR"
TOO_LARGE: Final = "INPUT_TOO_LARGE"
OUTSIDE_ROOT: Final = "INPUT_OUTSIDE_ROOT"
UNREADABLE: Final = "INPUT_UNREADABLE"
CODES: Final = (NOT_REGULAR, TOO_LARGE, OUTSIDE_ROOT, UNREADABLE)

_CHUNK: Final = 1 << 20
_KINDS: Final = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"))


class InputError(DshkitError):
    """An input refused before (or while) it was read; ``details`` holds ``path``."""

    def __init__(self, code: str, message: str, *, path: str, **extra: object) -> None:
        super().__init__(code, message, {"path": path, **extra})
        self.path = path


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def open_input(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
               ) -> io.BufferedReader:
    """A blocking binary stream over the regular file ``path``; raises :class:`InputError`
    (``INPUT_NOT_REGULAR``, ``INPUT_OUTSIDE_ROOT``, ``INPUT_UNREADABLE``)."""
    name = os.fspath(path)
    real: str | None = None
    if root is not None:
        real_root = os.path.realpath(root)
        real = os.path.realpath(name)
        if not _inside(real, real_root):
            raise InputError(OUTSIDE_ROOT, f"{name} resolves to {real}, outside {os.fspath(root)}; "
                             "copy the file into the directory to import it", path=name,
                             resolved=real)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise InputError(UNREADABLE, f"cannot read {name}: {exc.strerror or exc}",
                         path=name) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(NOT_REGULAR, f"{name} is {_kind(info.st_mode)}, not a regular "
                             "file; dshkit reads regular files only", path=name)
        if real is not None:
            checked = os.stat(real)
            if (checked.st_dev, checked.st_ino) != (info.st_dev, info.st_ino):
                raise InputError(OUTSIDE_ROOT, f"{name} changed while it was opened; not read",
                                 path=name)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _too_large(name: str, size: int, limit: int) -> InputError:
    return InputError(TOO_LARGE, f"{name} holds at least {size} bytes, more than the limit of "
                      f"{limit} bytes (max_input_bytes)", path=name, size=size, limit=limit)


def read_stream(stream: BinaryIO, *, limit: int | None = None, name: str = "-") -> bytes:
    """The rest of ``stream``, refused (``INPUT_TOO_LARGE``) once it passes ``limit``
    (default ``max_input_bytes``); never holds more than ``limit`` plus one chunk."""
    bound = limits.current().max_input_bytes if limit is None else limit
    parts: list[bytes] = []
    size = 0
    while True:
        try:
            data = stream.read(min(_CHUNK, bound + 1 - size))
        except OSError as exc:
            raise InputError(UNREADABLE, f"cannot read {name}: {exc.strerror or exc}",
                             path=name) from None
        if not data:
            return b"".join(parts)
        parts.append(data)
        size += len(data)
        if size > bound:
            raise _too_large(name, size, bound)


def read_input(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None,
               limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`open_input`), at most ``limit``
    (default ``max_input_bytes``); a larger file is refused from its size, unread."""
    name = os.fspath(path)
    bound = limits.current().max_input_bytes if limit is None else limit
    with open_input(name, root=root) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > bound:
            raise _too_large(name, size, bound)
        return read_stream(stream, limit=bound, name=name)


def read_in_directory(directory: str | os.PathLike[str], names: Iterable[str], *,
                      limit: int | None = None) -> dict[str, bytes | None]:
    """The named files of ``directory`` (None for a name that does not exist); a name that is
    a link resolving outside the directory is refused (``INPUT_OUTSIDE_ROOT``)."""
    found: dict[str, bytes | None] = {}
    for name in names:
        path = os.path.join(directory, name)
        found[name] = (read_input(path, root=directory, limit=limit)
                       if os.path.lexists(path) else None)
    return found


__all__ = ["CODES", "NOT_REGULAR", "OUTSIDE_ROOT", "TOO_LARGE", "UNREADABLE", "InputError",
           "open_input", "read_in_directory", "read_input", "read_stream"]
