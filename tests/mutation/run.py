"""The mutation run behind ``nox -s mutation``.

    python -m tests.mutation.run [--mutants 160] [--seed 14] [--timeout S] [--spec PATH]

Finds every mutant of the session core's files (:data:`FILES`, operators of
:mod:`.operators`), samples ``--mutants`` of them with ``--seed``, and runs the kit's
``session-log`` and ``session-ops`` suites (no property tests) against each, one after the
other, each in a child process that imports the mutated module instead of the file
(:mod:`.child`). A mutant is killed when the run fails, errors or times out, and survives when
it passes. Mutants listed in ``equivalent.json`` (by id, each with its reason) are equivalent:
they count neither way, and the score is killed / (sampled - equivalent).

The report goes to ``build/mutation/report.json`` and ``report.md``; ``--spec PATH`` writes
the Markdown to PATH too (``spec/conformance/mutation.md`` is the committed copy).
``--rescore REPORT.json`` runs nothing: it scores an earlier report's outcomes again with the
current ``equivalent.json`` (after judging its survivors). Exit
status 1 when the unmutated run does not pass or the score is below ``--min-score``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .operators import OPERATORS, Mutant, mutants

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "mutation"
EQUIVALENT = Path(__file__).with_name("equivalent.json")
SESSION = "reference/session"
FILES = tuple(f"{SESSION}/{name}.py" for name in (
    "surface", "folding", "checks", "invariants", "repair", "state", "fastpath", "pipeline"))
KIT_ARGS = ("--suite", "session-log", "--suite", "session-ops", "--properties", "0")
SEED, COUNT = 14, 160


@dataclass(frozen=True, slots=True)
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout | equivalent
    seconds: float
    detail: str  # the kit's last line, or why the mutant is equivalent


def module_of(path: str) -> str:
    return "dshkit." + path.removesuffix(".py").replace("/", ".")


def all_mutants(files: tuple[str, ...] = FILES) -> list[Mutant]:
    found: list[Mutant] = []
    for path in files:
        found.extend(mutants((ROOT / path).read_text(encoding="utf-8"), file=path,
                             module=module_of(path)))
    return found


def sample(found: list[Mutant], count: int, seed: int) -> list[Mutant]:
    """``count`` mutants drawn with ``seed``, in file and source order."""
    order = {path: i for i, path in enumerate(FILES)}
    chosen = random.Random(seed).sample(found, min(count, len(found)))
    return sorted(chosen, key=lambda m: (order.get(m.file, len(order)), m.start, m.id))


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    """Equivalent mutants by id, with the one-line reason each."""
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))["equivalent"]
    return {str(e["id"]): str(e["reason"]) for e in entries}


def _child(spec: dict[str, Any], timeout: float) -> tuple[int | None, str, float]:
    """Run the kit in a child process; ``(exit status or None on timeout, stdout, seconds)``."""
    with tempfile.TemporaryDirectory(prefix="dshkit-mutant-") as scratch:
        spec_path = Path(scratch) / "mutant.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        started = time.perf_counter()
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run(
                [sys.executable, "-m", "tests.mutation.child", str(spec_path), *KIT_ARGS],
                cwd=ROOT, capture_output=True, text=True,
                timeout=timeout, env=env, check=False)
        except subprocess.TimeoutExpired:
            return None, "", time.perf_counter() - started
        return done.returncode, done.stdout, time.perf_counter() - started


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def baseline(files: tuple[str, ...]) -> tuple[float, list[str]]:
    """The unmutated run: its duration and the target modules it imports (or exit 1)."""
    modules = [module_of(f) for f in files]
    status, out, seconds = _child({"module": None, "probe": modules}, timeout=600)
    if status != 0:
        sys.stderr.write(f"the unmutated kit run does not pass (exit {status}):\n{out}\n")
        raise SystemExit(1)
    imported: list[str] = json.loads(_last_line(out))["imported"]
    return seconds, imported


def run_mutant(mutant: Mutant, timeout: float) -> Outcome:
    status, out, seconds = _child({"module": mutant.module, "path": str(ROOT / mutant.file),
                                   "source": mutant.mutated_source}, timeout)
    if status is None:
        return Outcome(mutant, "timeout", seconds, f"no answer within {timeout:.0f} s")
    lines = [line for line in out.splitlines() if line.strip()]
    detail = lines[-1] if lines else f"exit status {status}"
    return Outcome(mutant, "survived" if status == 0 else "killed", seconds,
                   detail if status != 2 else f"exit status 2: {detail}")


def rescore(earlier: dict[str, Any], by_id: dict[str, Mutant],
            equivalent: dict[str, str]) -> list[Outcome]:
    """The outcomes of an earlier report, the mutants now listed as equivalent marked so
    (a mutant of the report that no longer exists is an error: the sources changed)."""
    outcomes = []
    for row in earlier["mutants"]:
        if row["id"] not in by_id:
            raise SystemExit(f"{row['id']} is no mutant of the current sources: run again")
        if row["id"] in equivalent:
            outcomes.append(Outcome(by_id[row["id"]], "equivalent", 0.0,
                                    equivalent[row["id"]]))
        elif row["status"] == "equivalent":
            raise SystemExit(f"{row['id']} was not run (equivalent then): run again")
        else:
            outcomes.append(Outcome(by_id[row["id"]], row["status"], row["seconds"],
                                    row["detail"]))
    return outcomes


# -- the report ---------------------------------------------------------------------------------

def _score(killed: int, total: int, equivalent: int) -> float | None:
    scored = total - equivalent
    return round(100.0 * killed / scored, 1) if scored else None


def _tally(outcomes: list[Outcome]) -> dict[str, Any]:
    counts = Counter(o.status for o in outcomes)
    killed = counts["killed"] + counts["timeout"]
    return {"mutants": len(outcomes), "killed": killed, "timeouts": counts["timeout"],
            "survived": counts["survived"], "equivalent": counts["equivalent"],
            "score": _score(killed, len(outcomes), counts["equivalent"])}


def report(outcomes: list[Outcome], *, seed: int, population: dict[str, int],
           imported: list[str], baseline_s: float, total_s: float,
           stale: list[str]) -> dict[str, Any]:
    files = {path: {"population": population.get(path, 0),
                    "imported": module_of(path) in imported,
                    **_tally([o for o in outcomes if o.mutant.file == path])}
             for path in population}
    operators = {op: _tally([o for o in outcomes if o.mutant.operator == op])
                 for op in OPERATORS if any(o.mutant.operator == op for o in outcomes)}
    return {
        "seed": seed, "kit": " ".join(KIT_ARGS), "baseline_s": round(baseline_s, 2),
        "duration_s": round(total_s, 1), "overall": _tally(outcomes), "files": files,
        "operators": operators, "stale_equivalent": stale,
        "mutants": [{"id": o.mutant.id, "file": o.mutant.file, "line": o.mutant.line,
                     "operator": o.mutant.operator, "status": o.status,
                     "seconds": round(o.seconds, 2), "detail": o.detail,
                     **({"diff": o.mutant.diff()} if o.status in ("survived", "equivalent")
                        else {})}
                    for o in outcomes],
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} %"


def markdown(data: dict[str, Any]) -> str:
    overall = data["overall"]
    out = [
        "# Mutation score of the session core",
        "",
        "<!-- Generated by `nox -s mutation` (python -m tests.mutation.run --spec "
        "spec/conformance/mutation.md); do not edit by hand. -->",
        "",
        f"How many small faults planted in the session core the conformance kit's "
        f"`session-log` and `session-ops` suites catch (`dshkit conformance {data['kit']}`). "
        f"{overall['mutants']} mutants sampled with seed {data['seed']} from "
        f"{sum(f['population'] for f in data['files'].values())}; each run in its own process "
        f"with the mutated module imported in place of the file. A mutant is killed when the "
        f"run fails, errors or times out. Mutants judged equivalent "
        f"(`tests/mutation/equivalent.json`, each with its reason) are left out of the score: "
        f"killed / (sampled - equivalent). Unmutated run: {data['baseline_s']} s; whole run: "
        f"{data['duration_s']} s.",
        "",
        "| File | Mutants (of all) | Killed | Survived | Equivalent | Score |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for path, row in data["files"].items():
        note = "" if row["imported"] else " (not imported by the kit run)"
        out.append(f"| `{path}`{note} | {row['mutants']} ({row['population']}) | "
                   f"{row['killed']} | {row['survived']} | {row['equivalent']} | "
                   f"{_pct(row['score'])} |")
    out.append(f"| **all** | {overall['mutants']} | {overall['killed']} | "
               f"{overall['survived']} | {overall['equivalent']} | "
               f"**{_pct(overall['score'])}** |")
    out += ["", "| Operator | Mutants | Killed | Survived | Equivalent | Score |",
            "| --- | --- | --- | --- | --- | --- |"]
    for op, row in data["operators"].items():
        out.append(f"| `{op}` | {row['mutants']} | {row['killed']} | {row['survived']} | "
                   f"{row['equivalent']} | {_pct(row['score'])} |")
    if data["stale_equivalent"]:
        out += ["", "Stale entries of `equivalent.json` (no such mutant any more): "
                + ", ".join(f"`{s}`" for s in data["stale_equivalent"]) + "."]
    for title, status in (("Surviving mutants", "survived"), ("Equivalent mutants", "equivalent")):
        rows = [m for m in data["mutants"] if m["status"] == status]
        out += ["", f"## {title}", ""]
        if not rows:
            out.append("None.")
        for m in rows:
            out += [f"### `{m['id']}`", ""]
            if status == "equivalent":
                out += [f"Equivalent: {m['detail']}", ""]
            out += ["```diff", m["diff"].rstrip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation.run")
    parser.add_argument("--mutants", type=int, default=COUNT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per mutant (default: 10 times the unmutated run, "
                             "at least 30)")
    parser.add_argument("--spec", type=Path, default=None,
                        help="also write the Markdown report here")
    parser.add_argument("--min-score", type=float, default=None)
    parser.add_argument("--rescore", type=Path, default=None,
                        help="run nothing: score the outcomes of this earlier report.json "
                             "again with the current equivalent.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    found = all_mutants()
    population = Counter(m.file for m in found)
    equivalent = load_equivalent()
    known = {m.id for m in found}
    stale = sorted(i for i in equivalent if i not in known)
    if args.rescore is not None:
        earlier = json.loads(args.rescore.read_text(encoding="utf-8"))
        seed, base_s, total_s = earlier["seed"], earlier["baseline_s"], earlier["duration_s"]
        imported = [module_of(p) for p, row in earlier["files"].items() if row["imported"]]
        outcomes = rescore(earlier, {m.id: m for m in found}, equivalent)
    else:
        seed = args.seed
        chosen = sample(found, args.mutants, seed)
        base_s, imported = baseline(FILES)
        timeout = args.timeout if args.timeout is not None else max(30.0, 10 * base_s)
        print(f"{len(chosen)} of {len(found)} mutants (seed {seed}); unmutated run "
              f"{base_s:.1f} s, timeout {timeout:.0f} s", flush=True)
        outcomes = []
        for index, mutant in enumerate(chosen, 1):
            if mutant.id in equivalent:
                outcome = Outcome(mutant, "equivalent", 0.0, equivalent[mutant.id])
            else:
                outcome = run_mutant(mutant, timeout)
            outcomes.append(outcome)
            print(f"[{index}/{len(chosen)}] {outcome.status:<10} {mutant.id}", flush=True)
        total_s = time.perf_counter() - started
    data = report(outcomes, seed=seed, population={p: population[p] for p in FILES},
                  imported=imported, baseline_s=base_s, total_s=total_s, stale=stale)
    text = markdown(data)
    _write(BUILD / "report.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    _write(BUILD / "report.md", text)
    if args.spec is not None:
        _write(args.spec, text)
    overall = data["overall"]
    print(f"score {_pct(overall['score'])}: {overall['killed']} killed, "
          f"{overall['survived']} survived, {overall['equivalent']} equivalent "
          f"of {overall['mutants']}; report: {BUILD / 'report.md'}")
    if args.min_score is not None and (overall["score"] or 0.0) < args.min_score:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
