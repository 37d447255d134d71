"""Write the DSH on-disk format (spec chapter ``session/jsonl``, SES-FILE-006/007/010).

The first write publishes a complete file atomically: the content goes to a private temp
file in the same directory, is fsynced, then hard-linked to the final name (which fails if
the name exists, so nothing is ever overwritten) and the directory is fsynced. Appends write
one batch (one zstd frame when compressed) and truncate back if the write fails, so a retry
can never duplicate seqs.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import zstandard

from ..json import codec as jsoncodec
from ..problems import ProblemError, fail
from .chunk_rows import pack_events

Compression = Literal["zstd", "none"]
Event = dict[str, Any]


def encode_batch(events: Iterable[Event], *, pack_chunks: bool = True) -> bytes:
    """One batch of records as JSONL bytes, each line terminated by a newline."""
    records = pack_events(events) if pack_chunks else events
    return b"".join(jsoncodec.dumps(r).encode("utf-8") + b"\n" for r in records)


def _frame(payload: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=True)
    return compressor.compress(payload)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_log(path: str | Path, header: dict[str, Any], events: Iterable[Event], *,
               compression: Compression = "none", pack_chunks: bool = True) -> None:
    """Publish a new log file atomically; refuses to replace an existing file."""
    target = Path(path)
    header_bytes = jsoncodec.dumps(header).encode("utf-8") + b"\n"
    body = encode_batch(events, pack_chunks=pack_chunks)
    if compression == "zstd":
        content = _frame(header_bytes) + (_frame(body) if body else b"")
    else:
        content = header_bytes + body
    _publish(target, content)


def _make_directories(directory: Path) -> None:
    """Create ``directory`` and each missing parent with mode 0700, whatever the umask
    (``Path.mkdir(parents=True, mode=...)`` gives the parents the umask's default mode).
    Directories that exist already keep their mode."""
    missing = [d for d in (directory, *directory.parents) if not os.path.lexists(d)]
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:  # created meanwhile by another writer: not ours to chmod
            continue
        os.chmod(path, 0o700)


def _publish(target: Path, content: bytes) -> None:
    directory = target.parent
    _make_directories(directory)
    temp = directory / f"{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.write(fd, content)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, target)
        except FileExistsError:
            raise fail("FILE_EXISTS", "SES-FILE-010",
                       f"{target} already exists; a first write never replaces a log") from None
        _fsync_dir(directory)
    finally:
        temp.unlink(missing_ok=True)


def append_events(path: str | Path, events: Iterable[Event], *, compressed: bool,
                  pack_chunks: bool = True) -> int:
    """Append one batch; returns the bytes written. On failure the file is cut back."""
    batch = encode_batch(events, pack_chunks=pack_chunks)
    if not batch:
        return 0
    data = _frame(batch) if compressed else batch
    target = Path(path)
    with open(target, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        try:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        except OSError as exc:
            handle.truncate(size)
            os.fsync(handle.fileno())
            raise fail("IO_ERROR", "SES-FILE-010",
                       f"appending to {target} failed ({exc}); the file was cut back") from None
    return len(data)


def truncate(path: str | Path, size: int) -> None:
    """Cut a torn tail off (repair truncates before it appends)."""
    with open(path, "r+b") as handle:
        handle.truncate(size)
        handle.flush()
        os.fsync(handle.fileno())


def atomic_replace_copy(source: str | Path, target: str | Path) -> None:
    """Copy ``source`` to a new file ``target`` atomically (used by ``--output`` writes)."""
    data = Path(source).read_bytes()
    _publish(Path(target), data)


__all__ = ["ProblemError", "append_events", "atomic_replace_copy", "create_log", "encode_batch",
           "truncate"]
