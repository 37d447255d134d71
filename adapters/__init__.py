"""Adapters between other tools' memory formats and protocol entries (``dshkit.adapters``).

Pure data conversion: no model calls, no network, no writes. Every conversion returns, beside
its result, a loss report; whatever cannot be represented is refused with an
:class:`AdapterError` that carries a stable code and a location (spec chapter ``adapters``).
"""

from .errors import AdapterError
from .model import LOSS_KINDS, AdaptResult, ExportResult, Loss
from .registry import (
    BUILTIN,
    FORMATS,
    REGISTRY,
    Adapter,
    Conversion,
    Registry,
    adapt,
    convert,
    default_registry,
    export,
)

__all__ = [
    "BUILTIN",
    "FORMATS",
    "LOSS_KINDS",
    "REGISTRY",
    "AdaptResult",
    "Adapter",
    "AdapterError",
    "Conversion",
    "ExportResult",
    "Loss",
    "Registry",
    "adapt",
    "convert",
    "default_registry",
    "export",
]
