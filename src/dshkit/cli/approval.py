"""The one approval prompt: the approver of a memory write made from the command line is the
person at the terminal. Without a terminal the answer is ``unavailable`` (fail closed) unless
``--yes`` was given."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

Gate = Callable[[dict[str, Any], dict[str, Any]], str]


def _title(payload: dict[str, Any]) -> str:
    title = f"memory {payload.get('action', 'write')}"
    if payload.get("track") and payload.get("scope"):
        title += f" {payload['track']}/{payload['scope']}"
    if payload.get("count") is not None:
        title += f" of {payload['count']} entries"
    return title


def terminal_gate(auto_yes: bool) -> Gate:
    def gate(payload: dict[str, Any], write: dict[str, Any]) -> str:
        if auto_yes:
            return "allowed-once"
        if not sys.stdin.isatty():
            return "unavailable"
        sys.stderr.write(f"{_title(payload)}:\n{payload.get('text', '')}\nApprove? [y/N] ")
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        return "allowed-once" if answer in ("y", "yes") else "rejected"

    return gate
