"""Command-line start-up (issue 13): ``dshkit validate`` on a one-line log against
``python -c "import json"``, both in fresh processes of the same interpreter (TOOL-CLI-009).

Each round runs the floor and then the command, so every ratio compares runs taken moments
apart; the ratio is given in wall-clock time (the goal: at most 4) and in processor time
(user + system of the child, steadier on a busy machine). The command runs as
``python -m dshkit``, the same code the ``dshkit`` console script calls.

Both run with their bytecode cached, as an installed package's is (pip compiles it when it
installs): the children write and read it under a private ``PYTHONPYCACHEPREFIX``, the warm-up
round fills it, and ``PYTHONDONTWRITEBYTECODE`` is dropped for them. Without that, a run from a
source checkout where bytecode is never written (``PYTHONDONTWRITEBYTECODE=1``) compiles every
dshkit module on every start while the floor's ``json`` comes precompiled with the standard
library, and measures the compiler instead of the start-up.

Call ``main()`` (rows, plus a Markdown table on stdout) or run ``python bench/startup_bench.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from figures import Row, markdown, row

GOAL_RATIO = 4.0
HEADER = '{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\n'


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and processor seconds of one child process."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, env=env)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace').strip()}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system)
    return wall, cpu


def main(*, repeat: int = 20, quiet: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="dshkit-startup-") as tmp:
        log = Path(tmp) / "one.jsonl"
        log.write_text(HEADER, encoding="utf-8")
        floor_argv = [sys.executable, "-c", "import json"]
        command_argv = [sys.executable, "-m", "dshkit", "validate", str(log)]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "bytecode")
        _run(floor_argv, env)  # warm the file cache and write the bytecode
        _run(command_argv, env)
        floors: list[tuple[float, float]] = []
        runs: list[tuple[float, float]] = []
        for _ in range(repeat):
            floors.append(_run(floor_argv, env))
            runs.append(_run(command_argv, env))
    rows = [row('python -c "import json"', [w for w, _ in floors], unit="s"),
            row("dshkit validate (one-line log)", [w for w, _ in runs], unit="s"),
            row("dshkit validate / import json", [w / f for (w, _), (f, _) in
                                                  zip(runs, floors, strict=True)],
                unit="x", below=GOAL_RATIO),
            row("dshkit validate / import json, processor time",
                [c / f if f > 0 else float("inf") for (_, c), (_, f) in
                 zip(runs, floors, strict=True)], unit="x")]
    if not quiet:
        print(markdown(rows, f"Command-line start-up (medians of {repeat} rounds)"))
    return rows


def _cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="rounds (default 20)")
    main(repeat=parser.parse_args().repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(_cli())
