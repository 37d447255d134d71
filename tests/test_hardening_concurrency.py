"""Several processes on one memory store and one query index (short CI version of the
concurrency section of ``nox -s hardening``): mixed writers, importers and readers; indexers
and searchers while the corpus grows. Nothing lost, nothing doubled, no bare "database is
locked", ledger replay equals the store (details in ``tests/hardening/concurrency.py``)."""

from __future__ import annotations

from pathlib import Path

from hardening.concurrency import run_index, run_memory


def test_mixed_operations_on_one_memory_store(tmp_path: Path) -> None:
    result = run_memory(tmp_path, processes=6, operations=40)
    assert result["ok"], result["problems"]
    assert result["processes"] == 6 and result["operations"] >= 6 * 10


def test_indexers_and_searchers_on_one_index(tmp_path: Path) -> None:
    result = run_index(tmp_path, processes=3, rounds=2)
    assert result["ok"], result["problems"]
