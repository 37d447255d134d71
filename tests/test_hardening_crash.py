"""kill -9 at random points (short CI version; ``nox -s hardening`` runs 200 kills per
target): a session log, the memory store, the query index and output files read back
consistent after every kill (see ``tests/hardening/crash.py`` for what each target checks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardening.crash import TARGETS, run_target

KILLS = 3


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_kill_minus_nine(name: str, tmp_path: Path) -> None:
    result = run_target(name, KILLS, tmp_path, seed=1)
    assert result.kills == KILLS
    assert result.lost == 0, result.notes
    assert result.consistent == KILLS, result.notes
