"""An in-memory copy of the ``entries`` table that answers selections (chapters
``memory/query``, ``matching``, ``visibility`` and ``budgets``).

A query, a match or a budget check needs, of every entry, its id, bucket, keys, folded text,
length in units and ranking keys; a result needs the stored columns of the entries it returns.
The mirror keeps both, grouped by *layer* (track, scope, agent key, workspace key), so that a
selection visits only the layers a session can see, tests only their texts, and builds entry
objects only for the page it returns.

The mirror knows nothing about coherence: :class:`~.store.Store` keeps it equal to the table
(it applies its own writes to both, drops the mirror when a transaction rolls back or rows
change behind it, and loads it again when another connection has committed).
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterable
from itertools import compress, count, repeat
from operator import attrgetter, contains
from typing import Any, NamedTuple

from ..text import units
from .text import fold
from .words import Words

Layer = tuple[str, str, str, str]  # (track, scope, agentKey, workspaceKey)
Bucket = tuple[str, str]
#: The stored columns of one entry, in the order of ``store.ENTRY_COLUMNS``: id, track, scope,
#: workspace_key, agent_key, text, source, tags (JSON text), created_at, updated_at,
#: session_id, version, recall_count, last_recalled.
Record = tuple[Any, ...]

BY_RANK = attrgetter("rank")
BY_CREATION = attrgetter("created")
BY_FOLDED = attrgetter("folded")
#: SQLite integers are 64-bit: shifted by 2**63 they fit 20 decimal digits, so fixed-width
#: digit strings sort like the numbers (see ``Row.rank``).
_SHIFT = 1 << 63
#: Selections over fewer rows than this test every text: the scan is a few microseconds, and a
#: small store never pays for building the word index.
INDEX_FROM = 256


def _up(value: int) -> str:
    if not -_SHIFT <= value < _SHIFT:
        raise ValueError(f"{value} is not a 64-bit integer")
    return f"{value + _SHIFT:020d}"


def _down(value: int) -> str:
    if not -_SHIFT <= value < _SHIFT:
        raise ValueError(f"{value} is not a 64-bit integer")
    return f"{_SHIFT - 1 - value:020d}"


class Row(NamedTuple):
    """What a selection needs of one entry, and its stored columns."""

    id: str
    layer: Layer
    folded: str  # fold(text), MEM-MAT-001
    units: int  # MEM-BUD-001
    rank: str  # MEM-QRY-003: recallCount desc, updatedAt desc, id asc, as one sortable string
    created: str  # createdAt asc, id asc (resolution samples, snapshots)
    record: Record


def make_row(record: Record) -> Row:
    """The row of an entry from its stored columns.

    The two order keys are strings: fixed-width digits of each number (shifted, and
    complemented for a descending order) followed by the id, so that comparing two keys
    compares the numbers first and then the ids in string order, exactly like the tuples
    ``(-recallCount, -updatedAt, id)`` and ``(createdAt, id)``, and sorting them is a plain
    string sort.
    """
    entry_id, track, scope, workspace, agent, text = record[:6]
    created, updated, recalls = record[8], record[9], record[12]
    return Row(entry_id, (track, scope, agent, workspace), fold(text), units(text),
               f"{_down(recalls)}{_down(updated)}{entry_id}", f"{_up(created)}{entry_id}",
               record)


def row_of(entry: dict[str, Any]) -> Row:
    """The row of an entry object (the members of MEM-ENT-001; ``tags`` as JSON text is not
    needed for a selection and may be missing)."""
    record = (entry["id"], entry["track"], entry["scope"], entry["workspaceKey"],
              entry["agentKey"], entry["text"], entry.get("source"), entry.get("tags"),
              entry["createdAt"], entry["updatedAt"], entry.get("sessionId"),
              entry.get("version"), entry["recallCount"], entry.get("lastRecalled"))
    return make_row(record)


def visible_layer(layer: Layer, keys: tuple[str, str]) -> bool:
    """MEM-KEY-004 for every entry of ``layer``, seen by a session with keys (workspace, agent)."""
    _, scope, agent, workspace = layer
    return (agent == "" or agent == keys[1]) and (scope == "user-global" or workspace == keys[0])


class _Rows:
    """The rows of one layer as two parallel lists (rows, folded texts), in no particular
    order, which a substring test runs over in C; ``index`` maps an id to its position;
    ``number`` tells the layer from the other layers of its mirror."""

    __slots__ = ("index", "number", "rows", "texts")

    def __init__(self, number: int) -> None:
        self.number = number
        self.index: dict[str, int] = {}
        self.rows: list[Row] = []
        self.texts: list[str] = []

    def put(self, row: Row) -> Row | None:
        """Add ``row`` or replace the row with its id; returns the replaced row."""
        position = self.index.get(row.id)
        if position is None:
            self.index[row.id] = len(self.rows)
            self.rows.append(row)
            self.texts.append(row.folded)
            return None
        old = self.rows[position]
        self.rows[position] = row
        self.texts[position] = row.folded
        return old

    def remove(self, entry_id: str) -> Row:
        """Remove a row (the last row takes its place)."""
        position = self.index.pop(entry_id)
        row = self.rows[position]
        last, last_text = self.rows.pop(), self.texts.pop()
        if position < len(self.rows):
            self.rows[position] = last
            self.texts[position] = last_text
            self.index[last.id] = position
        return row

    def matching(self, needle: str, out: list[Row]) -> None:
        """Append the rows whose folded text contains the folded ``needle``."""
        out.extend(compress(self.rows, map(contains, self.texts, repeat(needle))))


class Mirror:
    """The rows of every entry, by layer and by id, the units of every bucket, and (built
    when a selection first needs it) a word index of the folded texts."""

    def __init__(self, rows: Iterable[Row] = (), *, index_from: int = INDEX_FROM) -> None:
        self.index_from = index_from
        self.layers: dict[Layer, _Rows] = {}
        self.by_id: dict[str, Row] = {}
        self.number_of: dict[str, int] = {}  # id -> number of the entry's layer
        self._numbers = count()
        self.usage: dict[Bucket, int] = {}
        self._words: Words | None = None
        # The layers each selection (track, scope, keys) visits, and their numbers; valid
        # while no layer is created or emptied.
        self._chosen: dict[tuple[str | None, str | None, tuple[str, str] | None],
                           tuple[list[_Rows], frozenset[int]]] = {}
        for row in rows:
            self.put(row)

    @classmethod
    def load(cls, conn: sqlite3.Connection, select_sql: str) -> Mirror:
        """Every row of ``select_sql``, which selects the stored columns (``Record``)."""
        return cls(map(make_row, conn.execute(select_sql)))

    def __len__(self) -> int:
        return len(self.by_id)

    def put(self, row: Row) -> None:
        """Add ``row``, or replace the row with its id."""
        old = self.by_id.get(row.id)
        if old is not None and old.layer != row.layer:
            self.remove(row.id)
            old = None
        rows = self.layers.get(row.layer)
        if rows is None:
            rows = self.layers[row.layer] = _Rows(next(self._numbers))
            self._chosen.clear()
        rows.put(row)
        self.by_id[row.id] = row
        self.number_of[row.id] = rows.number
        bucket = row.layer[:2]
        self.usage[bucket] = self.usage.get(bucket, 0) + row.units - (old.units if old else 0)
        words = self._words
        if words is not None:
            if old is None:
                words.add(row.id, row.folded)
            elif old.folded != row.folded:
                words.replace(row.id, old.folded, row.folded)

    def remove(self, entry_id: str) -> None:
        row = self.by_id.pop(entry_id, None)
        if row is None:
            return
        del self.number_of[entry_id]
        rows = self.layers[row.layer]
        rows.remove(entry_id)
        if not rows.rows:
            del self.layers[row.layer]
            self._chosen.clear()
        self.usage[row.layer[:2]] -= row.units
        if self._words is not None:
            self._words.remove(entry_id, row.folded)

    def recall(self, entry_ids: Iterable[str], now: int) -> None:
        """One more recall and ``lastRecalled`` = ``now`` for each id (MEM-QRY-005);
        ``updatedAt`` does not change."""
        for entry_id in entry_ids:
            old = self.by_id.get(entry_id)
            if old is not None:
                self.put(make_row((*old.record[:12], old.record[12] + 1, now)))

    def select(self, *, track: str | None = None, scope: str | None = None,
               keys: tuple[str, str] | None = None, needle: str | None = None) -> list[Row]:
        """The rows of the bucket filters, visible with ``keys`` (workspace, agent) when given,
        whose folded text contains the folded ``needle`` when it is not empty."""
        chosen = self._chosen.get((track, scope, keys))
        if chosen is None:
            if len(self._chosen) >= 256:
                self._chosen.clear()
            layers = [rows for layer, rows in self.layers.items()
                      if (track is None or layer[0] == track)
                      and (scope is None or layer[1] == scope)
                      and (keys is None or visible_layer(layer, keys))]
            chosen = self._chosen[(track, scope, keys)] = (
                layers, frozenset(rows.number for rows in layers))
        out: list[Row] = []
        if not needle:
            for rows in chosen[0]:
                out.extend(rows.rows)
            return out
        folded = fold(needle)
        found = self._indexed(folded, *chosen)
        if found is not None:
            return found
        for rows in chosen[0]:
            rows.matching(folded, out)
        return out

    def _indexed(self, folded: str, chosen: list[_Rows], numbers: frozenset[int],
                 ) -> list[Row] | None:
        """The rows of the ``chosen`` layers whose text contains ``folded``, found through
        the word index; None when a scan of their texts costs no more (a needle of
        separators only, or one that common words contain)."""
        size = sum(len(rows.rows) for rows in chosen)
        pieces = folded.split()
        if not pieces or size < self.index_from:
            return None
        piece = max(pieces, key=len)
        if self._words is None:
            self._words = Words()
            for row in self.by_id.values():
                self._words.add(row.id, row.folded)
        ids = self._words.search(piece, size)
        if ids is None:
            return None
        if len(chosen) < len(self.layers):
            found = list(map(self.by_id.__getitem__, compress(
                ids, map(numbers.__contains__, map(self.number_of.__getitem__, ids)))))
        else:
            found = list(map(self.by_id.__getitem__, ids))
        if piece != folded:  # the needle spans words: each candidate is tested
            found = list(compress(found, map(contains, map(BY_FOLDED, found), repeat(folded))))
        return found


def first(rows: list[Row], limit: int | None, key: Any) -> list[Row]:
    """The first ``limit`` rows (all when None) in ``key`` order. The keys are strings, which
    a full sort compares quickly in C; a heap pays off only for a few rows out of many."""
    if limit is None or len(rows) <= max(limit * 64, 2048):
        return sorted(rows, key=key)[:limit]
    return heapq.nsmallest(limit, rows, key=key)
