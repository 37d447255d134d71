"""An in-memory selection index over the ``entries`` table (chapters ``memory/query``,
``matching``, ``visibility`` and ``budgets``).

A query, a match or a budget check needs, of every entry, only its id, bucket, keys, folded text,
length in units and ranking keys. The mirror keeps exactly that, grouped by *layer* (track,
scope, agent key, workspace key), so that a selection visits only the layers a session can see
and never decodes a row it does not return. Which entries are selected is decided here; what is
returned is always read from the database.

The mirror knows nothing about coherence: :class:`~.store.Store` keeps it equal to the table
(it applies its own writes to both, drops the mirror when a transaction rolls back, and rebuilds
it when another connection has committed).
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterable
from itertools import compress, repeat
from operator import attrgetter, contains
from typing import Any, NamedTuple

from .text import fold, units

Layer = tuple[str, str, str, str]  # (track, scope, agentKey, workspaceKey)
Bucket = tuple[str, str]

LOAD_SQL = ("SELECT id, track, scope, workspace_key, agent_key, text, recall_count, updated_at, "
            "created_at FROM entries")
BY_RANK = attrgetter("rank")
BY_CREATION = attrgetter("created")


class Row(NamedTuple):
    """What a selection needs of one entry."""

    id: str
    layer: Layer
    folded: str  # fold(text), MEM-MAT-001
    units: int  # MEM-BUD-001
    recalls: int
    rank: tuple[int, int, str]  # MEM-QRY-003: (-recallCount, -updatedAt, id)
    created: tuple[int, str]  # (createdAt, id): resolution samples, snapshots


def make_row(entry_id: str, track: str, scope: str, workspace: str, agent: str, text: str,
             recalls: int, updated: int, created: int) -> Row:
    return Row(entry_id, (track, scope, agent, workspace), fold(text), units(text), recalls,
               (-recalls, -updated, entry_id), (created, entry_id))


def row_of(entry: dict[str, Any]) -> Row:
    """The row of an entry object (the 14 members of MEM-ENT-001)."""
    return make_row(entry["id"], entry["track"], entry["scope"], entry["workspaceKey"],
                    entry["agentKey"], entry["text"], entry["recallCount"], entry["updatedAt"],
                    entry["createdAt"])


def visible_layer(layer: Layer, keys: tuple[str, str]) -> bool:
    """MEM-KEY-004 for every entry of ``layer``, seen by a session with keys (workspace, agent)."""
    _, scope, agent, workspace = layer
    return (agent == "" or agent == keys[1]) and (scope == "user-global" or workspace == keys[0])


class _Rows:
    """The rows of one layer as two parallel lists (rows, folded texts), in no particular
    order, which a substring test runs over in C; ``index`` maps an id to its position."""

    __slots__ = ("index", "rows", "texts")

    def __init__(self) -> None:
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


class Mirror:
    """The rows of every entry, by layer, and the units of every bucket."""

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        self.layers: dict[Layer, _Rows] = {}
        self.layer_of: dict[str, Layer] = {}
        self.usage: dict[Bucket, int] = {}
        for row in rows:
            self.put(row)

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> Mirror:
        return cls(make_row(*record) for record in conn.execute(LOAD_SQL))

    def __len__(self) -> int:
        return len(self.layer_of)

    def put(self, row: Row) -> None:
        """Add ``row``, or replace the row with its id."""
        layer = self.layer_of.get(row.id)
        if layer is not None and layer != row.layer:
            self.remove(row.id)
        rows = self.layers.get(row.layer)
        if rows is None:
            rows = self.layers[row.layer] = _Rows()
        old = rows.put(row)
        self.layer_of[row.id] = row.layer
        bucket = row.layer[:2]
        self.usage[bucket] = self.usage.get(bucket, 0) + row.units - (old.units if old else 0)

    def remove(self, entry_id: str) -> None:
        layer = self.layer_of.pop(entry_id, None)
        if layer is None:
            return
        rows = self.layers[layer]
        row = rows.remove(entry_id)
        if not rows.rows:
            del self.layers[layer]
        self.usage[layer[:2]] -= row.units

    def recall(self, entry_ids: Iterable[str]) -> None:
        """One more recall for each id (MEM-QRY-005); ``updatedAt`` does not change."""
        for entry_id in entry_ids:
            layer = self.layer_of.get(entry_id)
            if layer is None:
                continue
            rows = self.layers[layer]
            old = rows.rows[rows.index[entry_id]]
            recalls = old.recalls + 1
            rows.put(old._replace(recalls=recalls, rank=(-recalls, old.rank[1], old.id)))

    def select(self, *, track: str | None = None, scope: str | None = None,
               keys: tuple[str, str] | None = None, needle: str | None = None) -> list[Row]:
        """The rows of the bucket filters, visible with ``keys`` (workspace, agent) when given,
        whose folded text contains the folded ``needle`` when it is not empty."""
        folded = fold(needle) if needle else None
        out: list[Row] = []
        for layer, rows in self.layers.items():
            if (track is not None and layer[0] != track) \
                    or (scope is not None and layer[1] != scope) \
                    or (keys is not None and not visible_layer(layer, keys)):
                continue
            if folded is None:
                out.extend(rows.rows)
            else:
                out.extend(compress(rows.rows, map(contains, rows.texts, repeat(folded))))
        return out


def first(rows: list[Row], limit: int | None, key: Any) -> list[Row]:
    """The first ``limit`` rows (all when None) in ``key`` order."""
    if limit is None or limit * 4 >= len(rows):
        return sorted(rows, key=key)[:limit]
    return heapq.nsmallest(limit, rows, key=key)
