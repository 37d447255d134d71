"""Cancelling a pending write (MEM-PKG-002): a token checked before approval and before commit."""

from __future__ import annotations

import threading


class CancelToken:
    """Set from any thread (a user dismissing the request, a turn being cancelled); the write
    that carries it is denied with outcome ``cancelled`` if it has not committed yet."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()
