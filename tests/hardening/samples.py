"""Small well-formed building blocks the hardening inputs are made from."""

from __future__ import annotations

import json
import struct
from typing import Any

import zstandard

Event = dict[str, Any]

HEADER: Event = {"type": "session", "version": 0, "id": "s", "createdAt": 1,
                 "delegationDepth": 0}


def line(value: Any) -> bytes:
    """One compact JSON line with its line feed."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def header_line(**changes: Any) -> bytes:
    return line({**HEADER, **changes})


def user(seq: int, text: str = "hello") -> Event:
    return {"type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
            "data": {"id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                     "content": [{"type": "text", "text": text}]}}


def turn(seq: int, number: int = 1) -> list[Event]:
    """A closed turn of four events starting at ``seq``: turn/start, user message, turn/end
    is not enough for invariants, so: turn/start, step/start, step/end, turn/end."""
    return [
        {"type": "turn/start", "seq": seq, "time": seq, "data": {"turn": number}},
        {"type": "step/start", "seq": seq + 1, "time": seq, "data": {"turn": number, "step": 1}},
        {"type": "step/end", "seq": seq + 2, "time": seq, "data": {"turn": number, "step": 1}},
        {"type": "turn/end", "seq": seq + 3, "time": seq,
         "data": {"turn": number, "reason": {"kind": "completed"}}},
    ]


def turn_end(seq: int, number: int = 1) -> Event:
    return {"type": "turn/end", "seq": seq, "time": seq,
            "data": {"turn": number, "reason": {"kind": "completed"}}}


def log(events: list[Event], **header: Any) -> bytes:
    """A plain DSH session file: header line and one line per event."""
    return header_line(**header) + b"".join(line(e) for e in events)


def zstd_frame(payload: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_checksum=True,
                                    write_content_size=True).compress(payload)


def zstd_log(events: list[Event]) -> bytes:
    """A compressed session file: the header frame and one frame of events."""
    body = b"".join(line(e) for e in events)
    return zstd_frame(header_line()) + (zstd_frame(body) if body else b"")


def rle_bomb(size: int, byte: bytes = b" ") -> bytes:
    """A zstd frame of RLE blocks that decompresses to ``size`` copies of ``byte``, built by hand
    (about 4 bytes per 128 KiB of output, no content size, no checksum): a decompression bomb
    that costs nothing to make."""
    block = 128 * 1024
    out = [b"\x28\xb5\x2f\xfd", b"\x00", bytes([7 << 3])]  # magic, no FCS, window 128 KiB
    remaining = size
    while remaining > 0:
        count = min(block, remaining)
        remaining -= count
        last = 1 if remaining == 0 else 0
        header = (count << 3) | (1 << 1) | last
        out.append(struct.pack("<I", header)[:3] + byte)
    return b"".join(out)


def nested(depth: int) -> bytes:
    """A JSON array nested ``depth`` levels deep."""
    return b"[" * depth + b"]" * depth


def ignorable(seq: int, data: bytes) -> bytes:
    """An ignorable unknown event line whose ``data`` is the raw JSON text ``data``."""
    return (b'{"type":"x/hardening","ignorable":true,"seq":' + str(seq).encode()
            + b',"time":0,"data":' + data + b"}\n")


def compactable_log(turns: int = 29) -> bytes:
    """A plain log of ``turns`` closed turns, each with a long user message: enough for a
    manual compaction to have something to compact."""
    events: list[Event] = []
    for number in range(1, turns + 1):
        seq = len(events)
        turn_events = turn(seq, number)
        message = user(seq + 2, "text " * 200)
        turn_events.insert(2, message)
        for k, event in enumerate(turn_events):
            event["seq"] = seq + k
        events.extend(turn_events)
    return log(events)
