"""The frozen snapshot text (spec chapter ``memory/snapshot``, MEM-SNP-002)."""

from __future__ import annotations

from typing import Any

from .inputs import BUCKETS
from .text import one_line

HEADER = ("[Memory snapshot: frozen at session start. Changes made during this session do not "
          "update it; use the memory tool to read or change memory.]")
TITLES = {
    ("user", "user-global"): "User profile (global preferences, communication style, landmines)",
    ("user", "workspace"): "User preferences for this workspace",
    ("agent", "user-global"): "Environment facts and conventions (cross-workspace)",
    ("agent", "workspace"): "Workspace facts, conventions, and lessons",
}
#: MEM-PRO-009: dsh-memento's heading of the pending proposals, byte for byte.
PROPOSALS_TITLE = ("Pending memory proposals (reviewed by the user; approve or dismiss via the "
                   "/memory proposals command)")


def render(entries: list[dict[str, Any]], budgets: list[dict[str, Any]],
           proposals: list[dict[str, Any]] | None = None) -> str:
    """``proposals``: the pending proposals to show, visible and limited, in order."""
    usage = {(row["track"], row["scope"]): (row["used"], row["limit"]) for row in budgets}
    sections = []
    for bucket in BUCKETS:
        group = sorted((e for e in entries if (e["track"], e["scope"]) == bucket),
                       key=lambda e: (e["createdAt"], e["id"]))
        if not group:
            continue
        used, limit = usage[bucket]
        lines = [f"## {TITLES[bucket]} \u2014 {used}/{limit} units used"]
        lines.extend(f"- {one_line(e['text'])}" for e in group)
        sections.append("\n".join(lines))
    if proposals:
        lines = [f"## {PROPOSALS_TITLE}"]
        lines.extend(f"- [{p['id']}] {p['track']}/{p['scope']}: {one_line(p['text'])}"
                     for p in proposals)
        sections.append("\n".join(lines))
    if not sections:
        return ""
    return "\n\n".join([HEADER, *sections])
