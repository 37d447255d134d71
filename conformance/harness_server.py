"""The harness side of the JSON-lines protocol, for Python implementations.

``serve(impl)`` reads kit requests from stdin and answers on stdout (chapter
``conformance/harness``). Any object with the kit's :class:`~dshkit.conformance.interface.
Implementation` interface can be served, so a Python implementation can also be tested over
the subprocess path::

    python -m dshkit.conformance.harness_server py:mypackage.kit:create

The approver of memory cases is a proxy: each gate call becomes an ``approve`` message, the
kit may send ``call`` requests (run on the second handle) and then sends the ``answer``.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

from .interface import ApproverFailure, Concurrent, Implementation, JsonObject, NotSupported
from .runner import KitError, load_implementation

__all__ = ["PROTOCOL_VERSION", "main", "serve"]

PROTOCOL_VERSION = 1


class _Channel:
    def __init__(self, inbound: IO[str], outbound: IO[str]) -> None:
        self.inbound = inbound
        self.outbound = outbound

    def send(self, message: JsonObject) -> None:
        # ASCII escapes keep lone surrogates (valid in the vectors' JSON) transportable.
        self.outbound.write(json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n")
        self.outbound.flush()

    def receive(self) -> JsonObject | None:
        line = self.inbound.readline()
        if not line:
            return None
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("a request must be a JSON object")
        return message


def _approver(channel: _Channel, seq: int) -> Callable[[int, JsonObject, Any, Concurrent], Any]:
    def approve(step: int, payload: JsonObject, write: Any, concurrent: Concurrent) -> Any:
        channel.send({"seq": seq, "approve": {"step": step, "payload": payload,
                                              "write": write}})
        while True:
            message = channel.receive()
            if message is None:
                raise ApproverFailure("the kit closed the channel during an approval")
            if message.get("cmd") == "call":
                channel.send({"seq": seq, "response": concurrent(message["call"])})
            elif message.get("cmd") == "answer":
                if "raise" in message:
                    raise ApproverFailure(str(message["raise"]))
                return message.get("outcome")
            else:
                raise ValueError(f"unexpected request during an approval: {message.get('cmd')}")

    return approve


def _run(impl: Implementation, channel: _Channel, message: JsonObject) -> None:
    seq = message.get("seq")
    case = message.get("case") or {}
    approver = _approver(channel, int(seq or 0))
    by_request: Callable[[JsonObject, Any], JsonObject] | None = getattr(impl, "run_request",
                                                                          None)
    try:
        if by_request is not None:  # implementations that want the case id
            result = by_request(case, approver)
        else:
            result = impl.run(case["operation"], case.get("input", {}),
                              case.get("params", {}), approver)
    except NotSupported as exc:
        channel.send({"seq": seq, "skipped": True, "message": str(exc) or "not supported"})
        return
    except Exception as exc:  # caught: reported as an errored case
        channel.send({"seq": seq, "errored": True, "context": {
            "message": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}})
        return
    channel.send({"seq": seq, "result": result})


def hello(impl: Implementation, language: str = "python") -> JsonObject:
    implementation: JsonObject = {
        "name": impl.name, "version": impl.version,
        "language": str(getattr(impl, "language", language)),
        "capabilities": list(impl.capabilities)}
    for key in ("homepage", "issues", "source"):
        value = getattr(impl, key, None)
        if isinstance(value, str):
            implementation[key] = value
    return {"version": PROTOCOL_VERSION, "implementation": implementation}


def serve(impl: Implementation, inbound: IO[str] | None = None,
          outbound: IO[str] | None = None) -> int:
    """Answer kit requests until ``stop`` or the end of input; returns the exit status."""
    channel = _Channel(inbound or sys.stdin, outbound or sys.stdout)
    while True:
        message = channel.receive()
        if message is None:
            return 0
        command = message.get("cmd")
        if command == "start":
            if message.get("version") != PROTOCOL_VERSION:
                sys.stderr.write(f"unsupported kit protocol version {message.get('version')}\n")
                return 2
            channel.send(hello(impl))
        elif command == "run":
            _run(impl, channel, message)
        elif command == "stop":
            return 0
        else:
            sys.stderr.write(f"unknown command {command!r}\n")
            return 2


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = args[0] if args else "reference"
    try:
        impl = load_implementation(spec)
    except KitError as exc:
        sys.stderr.write(f"{exc.code}: {exc.message}\n")
        return 2
    return serve(impl)


if __name__ == "__main__":
    sys.exit(main())
