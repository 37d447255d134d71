"""The kit side of the JSON-lines harness protocol (``--impl cmd:...``).

The kit starts the harness command, performs the versioned handshake, then sends one ``run``
request per case and reads the answer, serving ``approve`` callbacks of memory cases in
between. A case that does not finish within the timeout, a harness that exits, writes a line
that is not JSON or breaks the protocol schema: the case is errored, the process is killed,
and the next case starts a fresh process (the run goes on). Everything the harness writes to
stderr is captured, per case and for the whole run.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from typing import IO, Any

from dshkit import __version__

from .handshake import hello_problem
from .interface import Approver, ApproverFailure, JsonObject, NotSupported
from .outcomes import KitError
from .registry import registry

__all__ = ["HarnessCaseError", "SubprocessImplementation"]

PROTOCOL_VERSION = 1
STDERR_LIMIT = 64 * 1024
_EOF = object()


class HarnessCaseError(Exception):
    """One case could not be completed by the harness (errored, not failed)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _validator(name: str) -> Any:
    from dshkit import schemas

    return schemas.validator(f"conformance/v1/{name}")


class _Process:
    """One running harness process with reader threads for stdout and stderr."""

    def __init__(self, argv: Sequence[str], cwd: str | None, env: dict[str, str] | None) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True)
        self.lines: queue.Queue[object] = queue.Queue()
        self.stderr: list[str] = []
        self.lock = threading.Lock()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self.lines.put(raw)
        self.lines.put(_EOF)

    def _drain(self, stream: IO[bytes]) -> None:
        for raw in stream:
            with self.lock:
                self.stderr.append(raw.decode("utf-8", "replace"))

    def send(self, message: JsonObject) -> None:
        assert self.proc.stdin is not None
        data = json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n"
        # a harness that has exited is noticed by the next receive (end of its output), so
        # that the case is reported as errored, not the run as crashed
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.proc.stdin.write(data.encode("ascii"))
            self.proc.stdin.flush()

    def receive(self, deadline: float) -> object:
        """The next line (bytes), ``_EOF``, or ``None`` at the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            return self.lines.get(timeout=remaining)
        except queue.Empty:
            return None

    def take_stderr(self) -> str:
        self._settle_stderr()
        with self.lock:
            text = "".join(self.stderr)
            self.stderr.clear()
        return text

    def _settle_stderr(self, limit: float = 0.05) -> None:
        """Let the reader thread catch up with what the harness wrote to stderr before its
        answer: a harness writes its case's noise first, but the thread may not have read it
        yet when the answer arrives on stdout (a busy machine)."""
        assert self.proc.stderr is not None
        stop = time.monotonic() + limit
        with contextlib.suppress(OSError, ValueError):  # closed pipe: nothing left to wait for
            while (select.select([self.proc.stderr], [], [], 0)[0]
                   and time.monotonic() < stop):
                time.sleep(0.001)
        time.sleep(0.001)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stop(self, grace: float = 2.0) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self.send({"cmd": "stop"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
        self.kill()


class SubprocessImplementation:
    """An implementation behind a harness command speaking the kit's JSON-lines protocol."""

    name: str
    version: str
    language: str
    capabilities: tuple[str, ...]

    def __init__(self, argv: Sequence[str], *, timeout: float = 30.0,
                 handshake_timeout: float = 30.0, cwd: str | None = None,
                 env: dict[str, str] | None = None, validate: bool = True,
                 known_capabilities: Iterable[str] | None = None) -> None:
        """``known_capabilities``: the names a handshake may declare (default: every
        capability of the installed kit's suites)."""
        self.argv = list(argv)
        self.known_capabilities = (tuple(known_capabilities) if known_capabilities is not None
                                   else registry().declarable())
        self.timeout = timeout
        self.handshake_timeout = handshake_timeout
        self.cwd = cwd
        self.env = env
        self.validate = validate
        self.restarts = 0
        self.protocol_errors = 0
        self._stderr_log: list[str] = []
        self._case_stderr = ""
        self._seq = 0
        self._process: _Process | None = None
        self._identity: JsonObject | None = None
        self._responses = _validator("harness-response.json") if validate else None
        self._start()
        assert self._identity is not None
        self.name = str(self._identity["name"])
        self.version = str(self._identity["version"])
        self.language = str(self._identity["language"])
        self.capabilities = tuple(self._identity["capabilities"])
        self.homepage = self._identity.get("homepage")

    # -- process management -----------------------------------------------------------------

    def _start(self) -> None:
        try:
            process = _Process(self.argv, self.cwd, self.env)
        except OSError as exc:
            raise KitError("HARNESS_UNAVAILABLE",
                           f"cannot start {' '.join(self.argv)}: {exc}") from exc
        process.send({"cmd": "start", "version": PROTOCOL_VERSION,
                      "kit": {"name": "dshkit-conformance", "version": __version__}})
        line = process.receive(time.monotonic() + self.handshake_timeout)
        stderr = process.take_stderr()
        self._log(stderr)
        if not isinstance(line, bytes):
            process.kill()
            why = "timed out" if line is None else "exited"
            raise KitError("HARNESS_HANDSHAKE", f"the harness {why} before its handshake "
                           f"reply; stderr: {stderr.strip()[-2000:] or '(empty)'}")
        try:
            reply = json.loads(line)
        except ValueError as exc:
            process.kill()
            raise KitError("HARNESS_HANDSHAKE",
                           f"handshake reply is not JSON: {exc} (CNF-HAR-001)") from exc
        problem = self._hello_problem(reply)
        if problem or "implementation" not in reply:
            process.kill()
            raise KitError("HARNESS_HANDSHAKE",
                           f"invalid handshake reply: {problem or 'no implementation'}")
        if reply.get("version") != PROTOCOL_VERSION:
            process.kill()
            raise KitError("HARNESS_HANDSHAKE",
                           f"the harness speaks protocol version {reply.get('version')}, "
                           f"the kit {PROTOCOL_VERSION} (CNF-HAR-002)")
        identity = reply["implementation"]
        if self._identity is not None and (identity["name"], identity["version"]) != (
                self._identity["name"], self._identity["version"]):
            process.kill()
            raise KitError("HARNESS_HANDSHAKE", "a restarted harness reported another "
                           f"implementation: {identity['name']} {identity['version']} "
                           "(CNF-HAR-002)")
        self._identity = identity
        self._process = process

    def _hello_problem(self, reply: object) -> str:
        """What is wrong with a handshake reply in plain words, then by the schema."""
        if not self.validate:
            return ""
        plain = hello_problem(reply, self.known_capabilities)
        if plain:
            return plain
        schema = self._problem(reply)
        return f"{schema} (CNF-HAR-002)" if schema else ""

    def _problem(self, message: object) -> str:
        if self._responses is None:
            return ""
        error = next(iter(self._responses.iter_errors(message)), None)
        if error is None:
            return ""
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        return f"{error.message} at {where}"

    def _log(self, text: str) -> None:
        if text:
            self._stderr_log.append(text)

    def _abandon(self, reason: str) -> HarnessCaseError:
        """Kill the process after a broken case; the next case restarts it."""
        process = self._process
        self._process = None
        if process is not None:
            process.kill()
            time.sleep(0.01)
            self._case_stderr += process.take_stderr()
        tail = self._case_stderr.strip()[-1500:]
        detail = f"{reason}; stderr: {tail}" if tail else reason
        return HarnessCaseError(detail)

    # -- the Implementation interface ---------------------------------------------------------

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        return self.run_request({"id": "", "suite": "", "operation": operation, "input": input,
                                 "params": params}, approver)

    def run_request(self, request: JsonObject, approver: Approver | None = None) -> JsonObject:
        self._case_stderr = ""
        if self._process is None:
            self.restarts += 1
            try:
                self._start()
            except KitError as exc:
                raise HarnessCaseError(f"restart failed: {exc.message}") from exc
        process = self._process
        assert process is not None
        self._seq += 1
        seq = self._seq
        deadline = time.monotonic() + self.timeout
        try:
            process.send({"cmd": "run", "seq": seq, "case": request})
            while True:
                message = self._next(process, seq, deadline)
                if "approve" in message:
                    self._approve(process, seq, message["approve"], approver, deadline)
                    continue
                if "response" in message:
                    raise self._abandon("protocol: a call response outside an approval")
                return self._finish(message)
        except OSError as exc:  # broken pipe: the harness died while we wrote
            raise self._abandon(f"the harness closed its input ({exc})") from exc
        finally:
            if self._process is not None:
                self._case_stderr += self._process.take_stderr()
            self._log(self._case_stderr)

    def _next(self, process: _Process, seq: int, deadline: float) -> JsonObject:
        line = process.receive(deadline)
        if line is None:
            raise self._abandon(f"timeout: no answer within {self.timeout:g} s")
        if line is _EOF or not isinstance(line, bytes):
            time.sleep(0.05)
            code = process.proc.poll()
            raise self._abandon(f"the harness exited (status {code}) before answering")
        try:
            message = json.loads(line)
        except ValueError:
            self.protocol_errors += 1
            shown = line[:200].decode("utf-8", "replace")
            raise self._abandon(f"protocol: a line that is not JSON: {shown!r}") from None
        problem = self._problem(message)
        if problem or not isinstance(message, dict) or "version" in message:
            self.protocol_errors += 1
            raise self._abandon(f"protocol: {problem or 'unexpected message'}")
        if message.get("seq") != seq:
            self.protocol_errors += 1
            raise self._abandon(f"protocol: answer for seq {message.get('seq')}, expected {seq}")
        return message

    def _approve(self, process: _Process, seq: int, request: JsonObject,
                 approver: Approver | None, deadline: float) -> None:
        if approver is None:
            process.send({"cmd": "answer", "seq": seq, "outcome": "allowed-once"})
            return

        def concurrent(call: JsonObject) -> JsonObject:
            process.send({"cmd": "call", "seq": seq, "call": call})
            message = self._next(process, seq, deadline)
            if "response" not in message:
                raise self._abandon("protocol: expected the response to a concurrent call")
            return dict(message["response"])

        try:
            outcome = approver(int(request["step"]), dict(request["payload"]),
                               request.get("write"), concurrent)
        except ApproverFailure as exc:
            process.send({"cmd": "answer", "seq": seq, "raise": str(exc)})
            return
        process.send({"cmd": "answer", "seq": seq, "outcome": outcome})

    def _finish(self, message: JsonObject) -> JsonObject:
        if message.get("skipped"):
            issue = message.get("issue")
            text = str(message.get("message") or "skipped by the harness")
            raise NotSupported(f"{text} ({issue})" if issue else text)
        if message.get("errored"):
            context = message.get("context") or {}
            raise HarnessCaseError(f"the harness reported an error: "
                                   f"{context.get('message', '(no message)')}")
        result = message.get("result")
        return result if isinstance(result, dict) else {"valid": None, "value": result}

    def take_stderr(self) -> str:
        text, self._case_stderr = self._case_stderr, ""
        return text

    def stderr_text(self) -> str:
        text = "".join(self._stderr_log)
        return text if len(text) <= STDERR_LIMIT else text[-STDERR_LIMIT:]

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._log(self._process.take_stderr())
            self._process = None
