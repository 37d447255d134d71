"""The one command registry. A command's module is imported only when that command runs (or
its ``--help`` is asked for), so ``dshkit validate`` loads the validator and nothing else."""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):  # not a dataclass: making one costs start-up time
    name: str
    help: str
    module: str  #: relative to this package; it defines ``configure`` and ``run`` (or prefixed)
    prefix: str = ""  #: ``configure_<prefix>`` / ``run_<prefix>`` when a module has several


COMMANDS: tuple[Command, ...] = (
    Command("validate", "check logs against a conformance level", ".session", "validate"),
    Command("fold", "print the surface a model would see", ".session", "fold"),
    Command("repair", "close an unclosed turn", ".session", "repair"),
    Command("memory", "manage a dshkit memory store", ".memory"),
    Command("reference", "render the cross-session reference snapshot of session logs",
            ".reference"),
    Command("query", "index, search and read session logs", ".query"),
    Command("compact", "plan or apply a compaction of a session log", ".compact"),
    Command("goal", "print the goal state a session log folds to", ".goal"),
    Command("adapt", "convert memory files of other tools (mem0, Hermes, CLAUDE.md, MCP "
            "memory graph) to and from protocol entries", ".adapt"),
    Command("convert", "convert a memory file between formats (the same as dshkit adapt "
            "convert)", ".adapt", "convert"),
    Command("conformance", "run the conformance kit against an implementation",
            ".conformance"),
    Command("compliance", "build the compliance site from the kit's reports of several "
            "implementations", ".compliance"),
    Command("schemas", "export the packaged JSON Schemas for offline validation", ".schemas"),
)

BY_NAME = {command.name: command for command in COMMANDS}
