"""``dshkit memory proposals list|approve ID|dismiss ID``: pending memory proposals (spec
``memory/proposals``).

An approval is a write: it asks the person at the terminal through the one approval prompt
(:mod:`.approval`), which shows the entry the approval would add with the proposal's keys. A
dismissal changes no entry and asks nothing; it is audited by the provider (MEM-PRO-005).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .approval import terminal_gate

ACTIONS = ("list", "approve", "dismiss")
STATUSES = ("pending", "approved", "dismissed", "all")
NOT_FOUND_HINT = ("; list them with dshkit memory proposals list, and decide one as a session "
                  "that sees it (--cwd and --agent-preset of its workspaceKey and agentKey)")


def configure(add_op: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``proposals`` with the ``add_op`` of ``dshkit memory`` (its shared options)."""
    parser = add_op("proposals", help="pending memory proposals: list, approve ID, dismiss ID")
    parser.add_argument("proposal_action", choices=ACTIONS, metavar="ACTION",
                        help="list (default status pending), approve ID (a gated write of "
                             "the entry), or dismiss ID")
    parser.add_argument("proposal_id", nargs="?", metavar="ID", help="the proposal id "
                        "(approve, dismiss)")
    parser.add_argument("--status", choices=STATUSES, help="list: only proposals of this "
                        "status (default pending; all: every status)")
    parser.add_argument("--limit", type=int, metavar="N", help="list: at most N proposals "
                        "(default 100)")
    parser.add_argument("--visible", action="store_true", help="list: only those the session "
                        "of --cwd and --agent-preset can see")


def check(args: argparse.Namespace) -> None:
    """Usage errors, before the store is opened."""
    from .report import usage

    action, proposal_id = args.proposal_action, args.proposal_id
    if action == "list":
        if proposal_id is not None:
            raise usage("proposals list takes no ID", "ID")
        return
    if proposal_id is None:
        raise usage(f"proposals {action} needs the ID of a pending proposal (ids: dshkit "
                    "memory proposals list)", "ID")
    given = [flag for flag, value in (("--status", args.status), ("--limit", args.limit),
                                      ("--visible", args.visible)) if value]
    if given:
        raise usage(f"{given[0]} applies to proposals list", given[0])


def run(provider: Any, args: argparse.Namespace, write: dict[str, Any]) -> Any:
    action = args.proposal_action
    if action == "list":
        status = args.status or "pending"
        filt: dict[str, Any] = {"status": None if status == "all" else status}
        if args.limit is not None:
            filt["limit"] = args.limit
        return provider.proposals(filt, write if args.visible else None)
    if action == "dismiss":
        return provider.dismiss_proposal({"id": args.proposal_id}, write)
    shown = [_entry_input(p) for p in provider.proposals({"status": "pending",
                                                          "limit": 1000})
             if p["id"] == args.proposal_id]
    provider.gate = terminal_gate(args.yes, shown or None)
    return provider.approve_proposal({"id": args.proposal_id}, write)


def _entry_input(proposal: dict[str, Any]) -> dict[str, Any]:
    """The entry input an approval adds, for the prompt (TOOL-CLI-013)."""
    return {key: proposal[key] for key in ("track", "scope", "text", "source", "workspaceKey",
                                           "agentKey")}


def human(result: Any) -> str:
    """The text of a result without ``--json``."""
    if isinstance(result, list):
        return "\n".join(_line(p) for p in result) or "no proposals"
    proposal = result["proposal"]
    if "entry" in result:
        entry, usage_row = result["entry"], result["usage"]
        return (f"approved {proposal['id']}: added {entry['id']} {entry['track']}/"
                f"{entry['scope']} ({usage_row['used']}/{usage_row['limit']} units)")
    return f"dismissed {proposal['id']}"


def _line(proposal: dict[str, Any]) -> str:
    text = " ".join(proposal["text"].split())
    return (f"{proposal['id']} [{proposal['status']}] {proposal['track']}/{proposal['scope']} "
            f"workspaceKey {proposal['workspaceKey']!r} agentKey {proposal['agentKey']!r} "
            f"{proposal['kind']}: {text}")
