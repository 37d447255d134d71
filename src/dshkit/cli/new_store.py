"""MEM-CLI-002: the first write to a store that does not exist yet runs on a new store in a
private temporary folder, and only a committed write puts that store at its path. A write the
person at the terminal denies, or any other refused write, leaves nothing behind: no file, no
folder, not even the ``add-denied`` row of a store nobody asked for.

The store at the path is published with ``link(2)``, which fails when something appeared there
meanwhile; an empty file (which is no store, MEM-CLI-002) is replaced.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import exits
from .report import Refusal
from .store_guard import existing


class Target:
    """Where a command opens its store: the store itself, or a new store staged for it."""

    def __init__(self, path: Path, new: NewStore | None) -> None:
        self.path = path
        self._new = new

    @property
    def open_path(self) -> Path:
        return self._new.staged if self._new is not None else self.path

    def real_path(self, value: Any) -> Any:
        """A path in an error's details, told as the store's own path."""
        return self._new.real_path(value) if self._new is not None else value


@contextmanager
def write_target(path: Path, *, create: bool) -> Iterator[Target]:
    """The store a write opens: when ``create`` and there is no store at ``path`` yet, a new one
    staged in a private folder, published at ``path`` when the block ends without an error
    (close the provider inside the block) and discarded in every case."""
    new = NewStore(path) if create and not existing(path) else None
    try:
        yield Target(path, new)
        if new is not None:
            new.publish()
    finally:
        if new is not None:
            new.discard()


class NewStore:
    """A store being created for one write: open :attr:`staged`, then :meth:`publish` after
    the write committed; :meth:`discard` in every case."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._folder = Path(tempfile.mkdtemp(prefix="dshkit-new-store-"))
        self.staged = self._folder / (path.name or "memory.db")

    def real_path(self, value: Any) -> Any:
        """A path in an error's details, told as the store's own path."""
        if isinstance(value, str) and value.startswith(str(self.staged)):
            return str(self.path) + value[len(str(self.staged)):]
        return value

    def publish(self) -> None:
        """Put the committed store at its path: all of it, or nothing."""
        from ..reference.memory.store import prepare_directories

        _checkpoint(self.staged)
        data = self.staged.read_bytes()
        try:
            prepare_directories(self.path)
            fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".new",
                                             dir=self.path.parent)
        except OSError as exc:
            raise _io_error(self.path, exc) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o600)
            if _empty_file(self.path):
                os.replace(temporary, self.path)
            else:
                os.link(temporary, self.path)
        except FileExistsError:
            raise Refusal(
                "STORE_BUSY", f"a memory store appeared at {self.path} while this write waited "
                "for its approval; nothing was written, run the command again",
                exit_code=exits.USAGE, details={"path": str(self.path)},
                path=str(self.path), flag="--db") from None
        except OSError as exc:
            raise _io_error(self.path, exc) from None
        finally:
            if os.path.lexists(temporary):
                os.unlink(temporary)
        _sync_folder(self.path.parent)

    def discard(self) -> None:
        import shutil

        shutil.rmtree(self._folder, ignore_errors=True)


def _checkpoint(store: Path) -> None:
    """Fold a write-ahead log left behind into the store file, so that one file is the store."""
    wal = Path(f"{store}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        conn = sqlite3.connect(store)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()


def _empty_file(path: Path) -> bool:
    try:
        return (path.is_file() and not path.is_symlink() and path.stat().st_size == 0
                and not os.path.lexists(f"{path}-wal"))
    except OSError:
        return False


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        return  # a folder that cannot be synced (some file systems) is still written
    finally:
        os.close(fd)


def _io_error(path: Path, exc: OSError) -> Refusal:
    return Refusal("IO_ERROR", f"cannot create the memory store {path}: "
                   f"{exc.strerror or exc}; nothing was written", exit_code=exits.USAGE,
                   details={"path": str(path)}, path=str(path), flag="--db")
