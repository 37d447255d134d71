"""``dshkit goal``: fold a session log's goal state (spec chapter ``goal/fold``). Exit codes:
0 folded, 1 the log does not load or the goal stream is refused, 2 usage or I/O error."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .reference.goal import GoalError, fold_goal
from .reference.session.folding import load_path

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def add_parser(sub: Any) -> None:
    goal = sub.add_parser("goal", help="print the goal state a session log folds to")
    goal.add_argument("path", metavar="PATH", help="session log, or - for stdin")
    goal.add_argument("--json", action="store_true", help="print one JSON object")


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _print_state(path: str, state: dict[str, Any]) -> None:
    goal = state.get("goal")
    if goal is None:
        cleared = state.get("lastRef")
        suffix = (f" (last: {cleared['id']} revision {cleared['revision']}, cleared)"
                  if cleared else "")
        print(f"{path}: no current goal{suffix}")
        return
    print(f"{path}: goal {goal['id']} revision {goal['revision']}: {goal['phase']}")
    print(f"  objective: {goal['objective']}")
    print(f"  rounds: {state['roundsStarted']} of {goal['maxGoalRounds']}")
    reason = goal.get("blockedReason")
    if reason:
        print(f"  blocked: {reason['code']}: {reason['message']}")
    print(f"  created {state['createdAt']}, updated {state['updatedAt']} (epoch ms)")


def run(args: argparse.Namespace) -> int:
    report = load_path(args.path)
    if not report.valid:
        problem = report.errors[0]
        code = EXIT_USAGE if problem.code == "IO_ERROR" else EXIT_REFUSED
        if args.json:
            _emit({"path": args.path, "valid": False, "error": problem.to_json()})
        else:
            print(f"{args.path}: cannot load: {problem.code} [{problem.requirement}]: "
                  f"{problem.message}", file=sys.stderr)
        return code
    try:
        state = fold_goal(report.events).to_json()
    except GoalError as exc:
        if args.json:
            _emit({"path": args.path, "valid": False, "error": exc.to_json()})
        else:
            print(f"{args.path}: {exc.code} [{exc.requirement}]: {exc.message}",
                  file=sys.stderr)
        return EXIT_REFUSED
    if args.json:
        _emit({"path": args.path, "valid": True, "state": state})
    else:
        _print_state(args.path, state)
    return EXIT_OK


__all__ = ["add_parser", "run"]
