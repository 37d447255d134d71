"""``dshkit goal``: fold a session log's goal state (spec chapter ``goal/fold``)."""

from __future__ import annotations

import argparse
from typing import Any

from . import exits
from .options import add_json
from .problems import refusal
from .report import Reporter, from_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="session log, or - for stdin")
    add_json(parser)


def _print_state(out: Reporter, path: str, state: dict[str, Any]) -> None:
    goal = state.get("goal")
    if goal is None:
        cleared = state.get("lastRef")
        suffix = (f" (last: {cleared['id']} revision {cleared['revision']}, cleared)"
                  if cleared else "")
        out.say(f"{path}: no current goal{suffix}")
        return
    out.say(f"{path}: goal {goal['id']} revision {goal['revision']}: {goal['phase']}")
    out.say(f"  objective: {goal['objective']}")
    out.say(f"  rounds: {state['roundsStarted']} of {goal['maxGoalRounds']}")
    reason = goal.get("blockedReason")
    if reason:
        out.say(f"  blocked: {reason['code']}: {reason['message']}")
    out.say(f"  created {state['createdAt']}, updated {state['updatedAt']} (epoch ms)")


def run(args: argparse.Namespace, out: Reporter) -> int:
    from ..reference.goal import GoalError, fold_goal
    from ..reference.session.folding import load_path

    report = load_path(args.path)
    if not report.valid:
        refused = refusal(report.errors[0], args.path)
        refused.message += ("; dshkit goal reads the log at level load before it folds the goal "
                            "(spec/goal/errors.md#GOAL-CLI-001)")
        raise refused
    try:
        state = fold_goal(report.events).to_json()
    except GoalError as exc:
        raise from_error(exc.to_json(), exits.INVALID, path=args.path) from None
    if out.json:
        out.emit({"path": args.path, "valid": True, "state": state})
    else:
        _print_state(out, args.path, state)
    return exits.OK
