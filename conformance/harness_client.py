"""The kit side of the JSON-lines harness protocol (``--impl cmd:...``).

The kit starts the harness command, performs the versioned handshake, then sends one ``run``
request per case and reads the answer, serving ``approve`` callbacks of memory cases in
between. A case that does not finish within the timeout, a harness that exits, writes a line
that is not JSON or breaks the protocol schema: the case is errored, the process is killed,
and the next case starts a fresh process (the run goes on), unless the harness broke the
protocol in ``max_protocol_restarts`` cases in a row: then it is given up and the later cases
are errored at once. The harness's stderr is captured per case and for the whole run, each
bounded to its last bytes; a stdout line is bounded by ``max_message_bytes``. The harness runs
in a process group of its own, killed whole on every restart and at the end.
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
#: What the run keeps of the harness's stderr (the last bytes), and what one case keeps.
STDERR_LIMIT = 64 * 1024
CASE_STDERR_LIMIT = 64 * 1024
#: The longest line the kit reads from a harness's stdout; a longer one errors the case.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: After this many cases in a row lost to protocol errors the harness is not restarted again.
MAX_PROTOCOL_RESTARTS = 3
MESSAGE_TOO_LARGE = "HARNESS_MESSAGE_TOO_LARGE"
_EOF = object()
_READ = 64 * 1024


class HarnessCaseError(Exception):
    """One case could not be completed by the harness (errored, not failed)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Oversize:
    """Put on the line queue instead of a line longer than the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit


class _Ring:
    """The last ``limit`` bytes written to it, and how many earlier bytes were dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        extra = len(self.data) - self.limit
        if extra > 0:
            del self.data[:extra]
            self.dropped += extra

    def merge(self, other: _Ring) -> None:
        self.dropped += other.dropped
        self.add(bytes(other.data))

    def text(self) -> str:
        text = self.data.decode("utf-8", "replace")
        if self.dropped:
            text = f"[{self.dropped} earlier bytes of stderr dropped]\n{text}"
        return text


def _validator(name: str) -> Any:
    from dshkit import schemas

    return schemas.validator(f"conformance/v1/{name}")


class _Process:
    """One running harness process, in a process group of its own, with reader threads for
    stdout (lines of at most ``max_message`` bytes) and stderr (the last ``stderr_limit``
    bytes). The threads never raise: a read that fails ends the stream."""

    def __init__(self, argv: Sequence[str], cwd: str | None, env: dict[str, str] | None, *,
                 max_message: int = MAX_MESSAGE_BYTES,
                 stderr_limit: int = CASE_STDERR_LIMIT) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True)
        self.group = self.proc.pid  # a session leader's pid is its group id
        self.max_message = max_message
        self.lines: queue.Queue[object] = queue.Queue()
        self.stderr = _Ring(stderr_limit)
        self.lock = threading.Lock()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        try:
            while True:
                raw = stream.readline(self.max_message + 1)
                if not raw:
                    break
                if len(raw) > self.max_message:
                    self.lines.put(_Oversize(self.max_message))
                    break  # the case is abandoned and the process killed: stop reading
                self.lines.put(raw)
        except Exception:  # a failed read is the end of the stream
            pass
        finally:
            with contextlib.suppress(Exception):
                stream.close()
        self.lines.put(_EOF)

    def _drain(self, stream: IO[bytes]) -> None:
        read = getattr(stream, "read1", stream.read)
        try:
            while True:
                chunk = read(_READ)
                if not chunk:
                    return
                with self.lock:
                    self.stderr.add(chunk)
        except Exception:  # a failed read is the end of the stream
            return
        finally:
            with contextlib.suppress(Exception):
                stream.close()

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

    def take_stderr(self) -> _Ring:
        """What was kept of stderr since the last call (the process starts a new ring)."""
        self._settle_stderr()
        with self.lock:
            kept, self.stderr = self.stderr, _Ring(self.stderr.limit)
        return kept

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
        """Kill the whole process group, even when the harness itself has already exited (its
        background children would outlive it), then close the pipes."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.group, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        # stdout and stderr are closed by their reader threads when they end: closing them
        # here could wait forever on a reader blocked by a child that escaped the group

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
                 max_message_bytes: int = MAX_MESSAGE_BYTES,
                 case_stderr_limit: int = CASE_STDERR_LIMIT,
                 stderr_limit: int = STDERR_LIMIT,
                 max_protocol_restarts: int = MAX_PROTOCOL_RESTARTS,
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
        self.max_message_bytes = max_message_bytes
        self.case_stderr_limit = case_stderr_limit
        self.max_protocol_restarts = max_protocol_restarts
        self.restarts = 0
        self.protocol_errors = 0
        #: Cases lost to protocol errors in a row; at ``max_protocol_restarts`` the harness is
        #: given up (``halted``) and every later case is errored without a restart.
        self.consecutive_protocol_errors = 0
        self.halted: str | None = None
        self._stderr_log = _Ring(stderr_limit)
        self._case = _Ring(case_stderr_limit)
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
        spec = self._identity.get("specVersion")
        self.spec_version: str | None = spec if isinstance(spec, str) else None

    # -- process management -----------------------------------------------------------------

    def _start(self) -> None:
        try:
            process = _Process(self.argv, self.cwd, self.env,
                               max_message=self.max_message_bytes,
                               stderr_limit=self.case_stderr_limit)
        except OSError as exc:
            raise KitError("HARNESS_UNAVAILABLE",
                           f"cannot start {' '.join(self.argv)}: {exc}") from exc
        process.send({"cmd": "start", "version": PROTOCOL_VERSION,
                      "kit": {"name": "dshkit-conformance", "version": __version__}})
        line = process.receive(time.monotonic() + self.handshake_timeout)
        kept = process.take_stderr()
        self._stderr_log.merge(kept)
        stderr = kept.text()
        if isinstance(line, _Oversize):
            process.kill()
            raise KitError(MESSAGE_TOO_LARGE, f"the handshake reply is longer than "
                           f"{line.limit} bytes; stderr: {stderr.strip()[-2000:] or '(empty)'}")
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

    def _abandon(self, reason: str) -> HarnessCaseError:
        """Kill the process after a broken case; the next case restarts it."""
        process = self._process
        self._process = None
        if process is not None:
            process.kill()
            time.sleep(0.01)
            self._case.merge(process.take_stderr())
        tail = self._case.text().strip()[-1500:]
        detail = f"{reason}; stderr: {tail}" if tail else reason
        return HarnessCaseError(detail)

    # -- the Implementation interface ---------------------------------------------------------

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        return self.run_request({"id": "", "suite": "", "operation": operation, "input": input,
                                 "params": params}, approver)

    def run_request(self, request: JsonObject, approver: Approver | None = None) -> JsonObject:
        self._case_stderr = ""
        self._case = _Ring(self.case_stderr_limit)
        if self.halted is not None:
            raise HarnessCaseError(f"not run: {self.halted}")
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
                    raise self._protocol("protocol: a call response outside an approval")
                self.consecutive_protocol_errors = 0
                return self._finish(message)
        except OSError as exc:  # broken pipe: the harness died while we wrote
            raise self._abandon(f"the harness closed its input ({exc})") from exc
        finally:
            if self._process is not None:
                self._case.merge(self._process.take_stderr())
            self._case_stderr = self._case.text()
            self._stderr_log.merge(self._case)

    def _protocol(self, reason: str) -> HarnessCaseError:
        """Abandon the case for a protocol error; after ``max_protocol_restarts`` in a row,
        give the harness up with a hint (a harness printing debug lines on stdout would
        otherwise be restarted for every case)."""
        self.protocol_errors += 1
        self.consecutive_protocol_errors += 1
        if self.consecutive_protocol_errors >= self.max_protocol_restarts:
            self.halted = (f"the harness broke the protocol in {self.consecutive_protocol_errors}"
                           " cases in a row and is not restarted again; the last: "
                           f"{reason[:300]}. A harness writes only protocol messages to "
                           "stdout: send debug output to stderr")
            return self._abandon(f"{reason}; {self.halted}")
        return self._abandon(reason)

    def _next(self, process: _Process, seq: int, deadline: float) -> JsonObject:
        line = process.receive(deadline)
        if line is None:
            raise self._abandon(f"timeout: no answer within {self.timeout:g} s")
        if isinstance(line, _Oversize):
            raise self._protocol(f"protocol ({MESSAGE_TOO_LARGE}): a line longer than the "
                                 f"limit of {line.limit} bytes")
        if line is _EOF or not isinstance(line, bytes):
            time.sleep(0.05)
            code = process.proc.poll()
            raise self._abandon(f"the harness exited (status {code}) before answering")
        try:
            message = json.loads(line)
        except ValueError:
            shown = line[:200].decode("utf-8", "replace")
            raise self._protocol(f"protocol: a line that is not JSON: {shown!r}") from None
        problem = self._problem(message)
        if problem or not isinstance(message, dict) or "version" in message:
            raise self._protocol(f"protocol: {problem or 'unexpected message'}")
        if message.get("seq") != seq:
            raise self._protocol(f"protocol: answer for seq {message.get('seq')}, "
                                 f"expected {seq}")
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
                raise self._protocol("protocol: expected the response to a concurrent call")
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
        """The last ``stderr_limit`` bytes the harness wrote to stderr in the run (with a note
        of how much was dropped before them)."""
        return self._stderr_log.text()

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._stderr_log.merge(self._process.take_stderr())
            self._process = None
