"""The checkpoint message that a summary compaction puts on the surface (spec chapter
``compaction/events``, CMP-CKP requirements)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: dshkit's checkpoint preamble: one line of 300 UTF-16 code units, the same length as DSH's,
#: so that the framing costs the same number of estimated tokens (CMP-CKP-004). The wording is
#: dshkit's own; consumers recognise a checkpoint by its source, never by this text.
CHECKPOINT_PREAMBLE = (
    "This message is an automatic checkpoint written by context compaction. It stands in for "
    "earlier parts of this conversation that were condensed to save space. Treat it as "
    "settled background, do not answer or mention it, and go on with your current work from "
    "the point at which the conversation stands."
)
SUMMARY_OPEN_TAG = "<compacted-summary>"
SUMMARY_CLOSE_TAG = "</compacted-summary>"
CHECKPOINT_PLUGIN = "compact"


def checkpoint_source(compaction_id: str, source_command_id: str | None = None
                      ) -> dict[str, Any]:
    """CMP-CKP-002: ``{kind:"plugin", plugin:"compact", compactionId, sourceCommandId?}``."""
    source: dict[str, Any] = {"kind": "plugin", "plugin": CHECKPOINT_PLUGIN,
                              "compactionId": compaction_id}
    if source_command_id is not None:
        source["sourceCommandId"] = source_command_id
    return source


def is_checkpoint_source(source: Any) -> bool:
    """CMP-CKP-003: a checkpoint is recognised by ``kind`` and ``plugin`` alone."""
    return (isinstance(source, dict) and source.get("kind") == "plugin"
            and source.get("plugin") == CHECKPOINT_PLUGIN)


def frame_summary(summary: Sequence[dict[str, Any]], preamble: str = CHECKPOINT_PREAMBLE
                  ) -> list[dict[str, Any]]:
    """CMP-CKP-004: the preamble and opening tag, the summary blocks, the closing tag."""
    return [{"type": "text", "text": f"{preamble}\n\n{SUMMARY_OPEN_TAG}"},
            *[dict(block) for block in summary],
            {"type": "text", "text": SUMMARY_CLOSE_TAG}]


def checkpoint_message(message_id: str, summary: Sequence[dict[str, Any]], compaction_id: str,
                       source_command_id: str | None = None,
                       preamble: str = CHECKPOINT_PREAMBLE) -> dict[str, Any]:
    """CMP-CKP-001: the ``user/message`` data of a checkpoint."""
    return {"id": message_id, "role": "user", "content": frame_summary(summary, preamble),
            "source": checkpoint_source(compaction_id, source_command_id)}


__all__ = ["CHECKPOINT_PLUGIN", "CHECKPOINT_PREAMBLE", "SUMMARY_CLOSE_TAG", "SUMMARY_OPEN_TAG",
           "checkpoint_message", "checkpoint_source", "frame_summary", "is_checkpoint_source"]
