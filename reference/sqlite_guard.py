"""What an SQLite file is, decided before SQLite opens it for writing.

Opening a database runs SQLite's recovery: commits still in a ``-wal`` are copied into the
file when the last connection closes, and a hot rollback ``-journal`` is played back at the
first read; both then delete the sidecar. A file that is going to be refused must not get
that far, so the stores read its 100-byte header (https://sqlite.org/fileformat.html) and look
at its sidecars first, and read a file they do not recognise only through an ``immutable``
connection, which neither takes locks nor touches any file.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from dataclasses import dataclass

MAGIC = b"SQLite format 3\x00"
#: The first bytes of a rollback journal that holds a transaction to play back.
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
HEADER_BYTES = 100


@dataclass(frozen=True, slots=True)
class FileHeader:
    """The facts of an SQLite file's header, or why it is not one (``problem``)."""

    size: int
    problem: str = ""
    application_id: int = 0
    user_version: int = 0

    @property
    def empty(self) -> bool:
        return self.size == 0


def _page_size(raw: int) -> int:
    return 65536 if raw == 1 else raw


def read_header(path: str | os.PathLike[str]) -> FileHeader:
    """The header of the file at ``path`` (which exists). Raises ``OSError``."""
    with open(path, "rb") as handle:
        head = handle.read(HEADER_BYTES)
        size = os.fstat(handle.fileno()).st_size
    if size == 0:
        return FileHeader(0)
    if len(head) < HEADER_BYTES or not head.startswith(MAGIC):
        return FileHeader(size, "not an SQLite database file")
    page = _page_size(int.from_bytes(head[16:18], "big"))
    if page < 512 or page & (page - 1):
        return FileHeader(size, f"the header's page size {page} is not a power of two "
                                "from 512 to 65536")
    return FileHeader(size, "", int.from_bytes(head[68:72], "big"),
                      int.from_bytes(head[60:64], "big", signed=True))


def pending_recovery(path: str | os.PathLike[str]) -> str:
    """The sidecar SQLite would recover into the file when opening it (a ``-wal``, or a
    ``-journal`` that starts a transaction), as ``"-wal"``/``"-journal"``; ``""`` if none."""
    base = os.fspath(path)
    if os.path.lexists(base + "-wal"):
        return "-wal"
    try:
        with open(base + "-journal", "rb") as handle:
            if handle.read(len(JOURNAL_MAGIC)) == JOURNAL_MAGIC:
                return "-journal"
    except FileNotFoundError:
        pass
    return ""


def connect_read_only(path: str | os.PathLike[str], *, immutable: bool,
                      timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that reads ``path`` and can write nothing (``mode=ro``, ``query_only``).
    ``immutable`` also takes no locks and creates no ``-wal``/``-shm`` next to a WAL database,
    which a plain ``mode=ro`` open does; it sees the file alone, without its sidecars. Raises
    ``sqlite3.Error``."""
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    uri = "file:" + urllib.parse.quote(os.path.abspath(os.fspath(path))) + "?" + flags
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout,
                           check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def schema_size(path: str | os.PathLike[str]) -> int:
    """The number of schema objects in the file itself, its sidecars ignored, read without
    locking or writing anything. Raises ``sqlite3.Error``."""
    conn = connect_read_only(path, immutable=True)
    try:
        return int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
    finally:
        conn.close()
