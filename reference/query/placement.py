"""Where the index file lives, and making it there without following a symbolic link
(QRY-IDX-002, QRY-IDX-017, QRY-IDX-018).

The index path is taken as given, made absolute and normalized lexically
(``os.path.abspath``); symbolic links in it are not resolved. The *index directory* is that
path without its last component. The directories the implementation creates are the index
directory and its missing ancestors; the *anchor* is the nearest directory of that chain that
already exists (the index directory itself when it exists). Neither the anchor, nor a
directory the implementation creates, nor the index file, nor one of its sidecars may be a
symbolic link; the directories above the anchor belong to the environment and are followed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from typing import Final

from .errors import INDEX_FAILED, SessionQueryError

#: The files SQLite keeps next to a database (rollback journal, write-ahead log, shared memory).
SIDECARS: Final = ("-journal", "-wal", "-shm")

#: ``reason`` members of the refusals below (spec/query/store.md).
SYMLINK: Final = "symlink"
SYMLINKED_DIRECTORY: Final = "symlinked-directory"
NOT_A_FILE: Final = "not-a-file"
NOT_A_DIRECTORY: Final = "not-a-directory"
REPLACED: Final = "replaced"

Identity = tuple[int, int]  # (st_dev, st_ino)


@dataclass(frozen=True, slots=True)
class Placement:
    """A checked index file: its absolute path and the identities of the file and of its
    directory, to confirm before the first write that neither was swapped meanwhile."""

    path: str
    file: Identity
    directory: Identity


def refusal(path: str, detail: str, reason: str) -> SessionQueryError:
    return SessionQueryError(INDEX_FAILED, "session-search SQLite index failed to open: "
                             f"{path}: {detail}", path=path, reason=reason)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _identity(info: os.stat_result) -> Identity:
    return info.st_dev, info.st_ino


def _check_directory(index: str, directory: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise refusal(index, f"the index directory {directory} is a symbolic link",
                      SYMLINKED_DIRECTORY)
    if not stat.S_ISDIR(info.st_mode):
        raise refusal(index, f"{directory} is not a directory", NOT_A_DIRECTORY)


def _check_file(index: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise refusal(index, "the index path is a symbolic link", SYMLINK)
    if not stat.S_ISREG(info.st_mode):
        raise refusal(index, "the index path is not a regular file", NOT_A_FILE)


def _check_sidecars(index: str) -> None:
    for suffix in SIDECARS:
        info = _lstat(index + suffix)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise refusal(index, f"the index's {suffix[1:]} file is a symbolic link", SYMLINK)


def _directories(index: str) -> Identity:
    """Check the anchor, create the missing directories ``0700`` (QRY-IDX-002) and check each
    one after creating it (a link planted meanwhile is refused); the index directory's
    identity."""
    missing: list[str] = []
    current = os.path.dirname(index)
    while (info := _lstat(current)) is None:
        missing.append(current)
        current = os.path.dirname(current)
    _check_directory(index, current, info)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
            created = True
        except FileExistsError:  # another process made it meanwhile
            created = False
        info = os.lstat(directory)
        _check_directory(index, directory, info)
        if created:
            os.chmod(directory, 0o700)  # whatever the umask
    return _identity(info)


def place(path: str) -> Placement:
    """Check (and create as needed) the index file at ``path``: missing directories ``0700``,
    a missing file exclusively ``0600``, nothing followed through a link. Raises
    ``SESSION_QUERY_INDEX_FAILED`` with a ``reason``; ``OSError`` for other failures."""
    index = os.path.abspath(path)
    directory = _directories(index)
    info = _lstat(index)
    if info is None:
        # FileExistsError: made meanwhile, by another process or as a link (examined below)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(index, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o600))
        info = os.lstat(index)
    _check_file(index, info)
    _check_sidecars(index)
    return Placement(index, _identity(info), directory)


def confirm(placement: Placement) -> None:
    """Before the first write: the file and its directory are still the ones checked, and no
    sidecar is a link."""
    index = placement.path
    info = os.lstat(os.path.dirname(index))
    _check_directory(index, os.path.dirname(index), info)
    here = os.lstat(index)
    _check_file(index, here)
    if _identity(info) != placement.directory or _identity(here) != placement.file:
        raise refusal(index, "the index file was replaced while it was being opened", REPLACED)
    _check_sidecars(index)
