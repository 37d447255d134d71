"""The benchmark's report: the targets with their goals, and a table per log size, as Markdown
(printed, written to ``build/bench.md`` and into ``spec/performance.md``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"

LABELS = {
    "floor-json": "parse floor: stdlib `json.loads` per line",
    "floor-orjson": "parse floor: `orjson.loads` per line",
    "dshkit": "**dshkit** `validate --level load` + fold, one pass",
    "dshkit-session": "dshkit, same, DSH `session.jsonl` (packed chunks)",
    "dshkit-zstd": "dshkit, same, `session.jsonl.zstd`",
    "naive-typed": "naive per-event `jsonschema`, full typed schema",
    "dsh": "DSH `Session.create` + `deriveMessages` (Node)",
}


@dataclass
class Target:
    """One goal of the issue and the figure measured for it (a ratio)."""

    name: str
    goal: str
    figure: dict[str, float] | None
    check: Callable[[float], bool] | None
    missing: str = ""
    cpu: dict[str, float] | None = None  # the same ratio in processor time

    @property
    def met(self) -> bool | None:
        if self.figure is None or self.check is None:
            return None
        return self.check(self.figure["median"])

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "goal": self.goal, "figure": self.figure, "met": self.met,
                "cpuFigure": self.cpu, "missing": self.missing or None}


def _ratio(figure: dict[str, float]) -> str:
    return f"{figure['median']:.2f} ({figure['min']:.2f}-{figure['max']:.2f})"


def _seconds(figure: dict[str, float]) -> str:
    return f"{figure['median']:.3f} ({figure['min']:.3f}-{figure['max']:.3f})"


def _mib(value: int) -> str:
    return f"{value / 1024 / 1024:.0f}"


def markdown(report: dict[str, Any], goals: list[Target]) -> str:
    info = report["machine"]
    lines = [
        f"Measured {report['rounds']} time(s) each, in a fresh process per run; figures are the "
        "median with the minimum and maximum in brackets. Ratios are taken within each round.",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']}; "
        f"{info['platform']}. Python {info['python']} ({info['implementation']}), dshkit "
        f"{info['dshkit']}, orjson {info['orjson']}, jsonschema {info['jsonschema']}, "
        f"zstandard {info['zstandard']}; Node {info['node']}, @deepseek-ai/dsh-session "
        f"{info['dshSession']}.",
        "",
        "| Target | Goal | Measured (wall clock) | Met | Same ratio in CPU time |",
        "| --- | --- | --- | --- | --- |",
    ]
    for target in goals:
        if target.figure is None:
            lines.append(f"| {target.name} | {target.goal} | not measured: {target.missing} "
                         "| - | |")
        else:
            met = "yes" if target.met else "**no**"
            cpu = _ratio(target.cpu) if target.cpu else ""
            lines.append(f"| {target.name} | {target.goal} | {_ratio(target.figure)} | {met} "
                         f"| {cpu} |")
    for size, result in report["sizes"].items():
        sizes = result["bytes"]
        lines += [
            "",
            f"**{int(size):,} events**: JSONL {sizes['jsonl'] / 1e6:.1f} MB, DSH "
            f"`session.jsonl` {sizes['session'] / 1e6:.1f} MB, zstd {sizes['zstd'] / 1e6:.1f} "
            "MB.",
            "",
            "| Measurement | Seconds | x parse floor | CPU seconds | x floor (CPU) | Peak RSS (MiB) "
            "| Note |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in result["rows"]:
            label = LABELS.get(row["name"], row["name"])
            if "missing" in row:
                lines.append(f"| {label} | not measured: {row['missing']} | | | | | |")
                continue
            lines.append(
                f"| {label} | {_seconds(row['seconds'])} | {_ratio(row['toFloor'])} | "
                f"{_seconds(row['cpuSeconds'])} | {_ratio(row['cpuToFloor'])} | "
                f"{_mib(row['maxRssBytes'])} | {row['note']} |")
    for part in report.get("components", []):
        lines += ["", f"**{part['title']}**", ""]
        if part.get("missing"):
            lines.append(f"Not measured: {part['missing']}")
            continue
        lines += ["| Measurement | Median | Min | Max | Goal | Met |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for row in part["rows"]:
            unit = f" {row.get('unit', '')}".rstrip()
            met = ("yes" if row.get("ok") else "**no**") if row.get("goal") else ""
            lines.append(f"| {row['name']} | {row['median']:.3g}{unit} | {row['min']:.3g} | "
                         f"{row['max']:.3g} | {row.get('goal', '')} | {met} |")
    lines += ["", f"The whole run took {report['seconds']:.0f} s.", ""]
    return "\n".join(lines)


def update_spec(path: Path, text: str) -> None:
    """Replace the results section of the performance page (between the bench markers)."""
    page = path.read_text(encoding="utf-8")
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} section to fill")
    path.write_text(page[:start + len(BEGIN)] + "\n\n" + text + "\n" + page[end:],
                    encoding="utf-8")
