"""Deterministic generator of realistic session logs for the benchmarks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

Event = dict[str, Any]


def realistic_log(n_events: int, seed: int = 7) -> Iterator[Event]:
    """Turns of steps with streamed chunks, tool calls and results, until ``n_events``."""
    rng = random.Random(seed)
    seq = 0
    time = 1_700_000_000_000
    turn = 0

    def event(kind: str, data: Any, **extra: Any) -> Event:
        nonlocal seq, time
        time += rng.randint(0, 40)
        out: Event = {"type": kind, "seq": seq, "time": time, "data": data, **extra}
        seq += 1
        return out

    while seq < n_events:
        turn += 1
        yield event("turn/start", {"turn": turn})
        yield event("user/message", {"id": f"u{turn}", "role": "user",
                                     "content": [{"type": "text", "text": "please " * 20}],
                                     "source": {"kind": "user"}}, surfaceOp="append")
        for step in range(1, rng.randint(2, 4) + 1):
            yield event("step/start", {"turn": turn, "step": step})
            chunk_seqs = []
            for _ in range(rng.randint(5, 40)):
                chunk_seqs.append(seq)
                yield event("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                    "type": "text-delta", "index": 0, "text": "token "}})
            call = f"call-{turn}-{step}"
            message = {"id": f"a{turn}-{step}", "role": "assistant", "content": [
                {"type": "text", "text": "token " * len(chunk_seqs)},
                {"type": "tool-call", "id": call, "name": "bash", "arguments": "{\"cmd\":\"ls\"}"},
            ], "source": {"kind": "model", "provider": "mock", "model": "m"}}
            yield event("assistant/message", {"turn": turn, "step": step, "message": message},
                        surfaceOp="append", sourceEventSeqs=chunk_seqs)
            call_seq = seq
            yield event("tool/call", {"turn": turn, "step": step, "callId": call, "name": "bash",
                                      "arguments": "{\"cmd\":\"ls\"}"})
            output = "x" * rng.randint(100, 2000)
            yield event("tool/result", {"turn": turn, "step": step, "message": {
                "id": f"t{turn}-{step}", "role": "user", "content": [
                    {"type": "tool-result", "toolCallId": call,
                     "content": [{"type": "text", "text": output}], "isError": False}],
                "source": {"kind": "tool", "callId": call}}},
                surfaceOp="append", sourceEventSeqs=[call_seq])
            yield event("step/end", {"turn": turn, "step": step})
        yield event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
