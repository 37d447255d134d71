"""Reference provider of the dshkit memory protocol (``dshkit.reference.memory``)."""

from .errors import MemoryProtocolError
from .provider import Provider, open_provider

__all__ = ["MemoryProtocolError", "Provider", "open_provider"]
