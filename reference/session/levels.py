"""Conformance levels (spec chapter ``session/levels``) and which checks each one runs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    APPEND = "append"
    SEED = "seed"
    INVARIANTS = "invariants"
    LOAD = "load"

    @property
    def rank(self) -> int:
        return list(Level).index(self)


@dataclass(frozen=True, slots=True)
class Checks:
    """The switches a :class:`~.pipeline.SessionChecker` runs with."""

    envelope_and_shapes: bool
    invariants: bool
    storage: bool  # torn-tail tolerance, legacy migration, unknown-type refusal, version gate
    repair: bool = False

    @classmethod
    def for_level(cls, level: Level) -> Checks:
        return cls(
            envelope_and_shapes=level.rank >= Level.SEED.rank,
            invariants=level.rank >= Level.INVARIANTS.rank,
            storage=level is Level.LOAD,
        )


# The lowest level whose checks can report each problem code. Reading problems ("decode"
# problems: the input cannot be read at all) fail every level, so they count as append.
_CODE_LEVEL_PREFIXES: tuple[tuple[str, Level], ...] = (
    ("JSON_", Level.APPEND),
    ("ENVELOPE_NOT_OBJECT", Level.APPEND),
    ("CHUNK_ROW_", Level.APPEND),
    ("ZSTD_", Level.APPEND),
    ("FILE_LINE_TOO_LONG", Level.APPEND),
    ("IO_ERROR", Level.APPEND),
    ("INPUT_FORMAT_", Level.APPEND),
    ("LOG_EMPTY", Level.APPEND),
    ("FILE_HEADER_MISSING", Level.APPEND),
    ("FILE_HEADER_NOT_", Level.APPEND),
    ("LEGACY_REQUEST_HEADER", Level.APPEND),
    ("SEQ_", Level.APPEND),
    ("SURFACE_", Level.APPEND),
    ("PROVENANCE_", Level.APPEND),
    ("TOOL_REWRITE_", Level.APPEND),
    ("ENVELOPE_", Level.SEED),
    ("MESSAGE_", Level.SEED),
    ("REQUEST_HEADER_", Level.SEED),
    ("INVARIANT_", Level.INVARIANTS),
)


def level_of(code: str) -> Level:
    for prefix, level in _CODE_LEVEL_PREFIXES:
        if code.startswith(prefix):
            return level
    return Level.LOAD
