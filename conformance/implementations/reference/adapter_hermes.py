"""The dshkit reference bound to the kit's ``adapter_hermes`` suite (the shared adapter operations)."""

from __future__ import annotations

from ._adapters import run

__all__ = ["run"]
