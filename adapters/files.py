"""Reading adapter inputs from disk, through the bounded opener of
:mod:`dshkit.reference.inputs`: a regular file of at most ``max_input_bytes``, never a FIFO or
a device, and never a link out of the directory being imported (spec chapter ``hardening``,
"Inputs"). Every refusal is an :class:`~dshkit.reference.inputs.InputError`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from dshkit.reference import inputs
from dshkit.reference.inputs import InputError

from .hermes import FILES as HERMES_FILES


def decode(data: bytes, name: str) -> str:
    """UTF-8 text, or ``INPUT_UNREADABLE`` saying where it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(inputs.UNREADABLE, f"{name} is not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})", path=name) from None


def read_text(path: str) -> str:
    """The text of the file ``path``, or of standard input when ``path`` is ``-``."""
    if path == "-":
        return decode(inputs.read_stream(sys.stdin.buffer), path)
    return decode(inputs.read_input(path), path)


def read_hermes_home(directory: str | os.PathLike[str]) -> dict[str, str | None]:
    """The Hermes payload of a directory: ``{"MEMORY.md": text | None, "USER.md": ...}``. A
    file that is a link resolving outside the directory is refused (``INPUT_OUTSIDE_ROOT``),
    so a ``USER.md`` pointing at another file (or ``/dev/zero``) is never read."""
    found = inputs.read_in_directory(directory, HERMES_FILES)
    return {name: None if data is None else decode(data, os.path.join(directory, name))
            for name, data in found.items()}


def import_loader(root: str) -> Callable[[str], str | None]:
    """The ``loader`` option of the ``claude-md`` adapter for imports under ``root``: None for a
    missing file; an import whose real location (links resolved) leaves ``root``, or that is
    not a regular file, raises :class:`InputError`, which the adapter reports as the loss
    ``import-unreadable`` (ADP-CLI-005)."""

    def load(path: str) -> str | None:
        if not os.path.lexists(path):
            return None
        return decode(inputs.read_input(path, root=root), path)

    return load


__all__ = ["decode", "import_loader", "read_hermes_home", "read_text"]
