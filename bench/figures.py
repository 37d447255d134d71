"""Summary rows shared by the component benchmarks (memory_bench, query_bench).

A row is ``{"name", "median", "min", "max", "goal", "ok", "unit"}``: the median, minimum and
maximum of several runs, the goal as text (``"< 5 ms"``, ``"> 2000 writes/s"``), and whether
the median meets it. The harness may ignore ``unit``; the name says what was measured.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

Row = dict[str, Any]


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def row(name: str, runs: Sequence[float], *, unit: str, below: float | None = None,
        above: float | None = None, exact: bool = True) -> Row:
    """One figure from per-run values; ``below``/``above`` is the goal for the median."""
    median = statistics.median(runs)
    if below is not None:
        goal, ok = f"< {below:g} {unit}", median < below
    elif above is not None:
        goal, ok = f"> {above:g} {unit}", median > above
    else:
        goal, ok = "", True
    return {"name": name, "median": median, "min": min(runs), "max": max(runs), "goal": goal,
            "ok": bool(ok and exact), "unit": unit}


def markdown(rows: Sequence[Row], title: str) -> str:
    lines = [f"**{title}**", "", "| measurement | median | min | max | goal | ok |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        unit = r["unit"]
        lines.append(f"| {r['name']} | {_num(r['median'])} {unit} | {_num(r['min'])} | "
                     f"{_num(r['max'])} | {r['goal']} | {'yes' if r['ok'] else 'NO'} |")
    return "\n".join(lines)


def _num(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
