"""Run the vectors against an implementation (``dshkit conformance``, ``dshkit-conformance``).

:func:`run_case` runs one case; :func:`run_kit` runs a selection and applies a baseline;
:func:`load_implementation` turns ``--impl`` into an implementation:

- ``py:package.module:factory`` (the factory is called with no arguments);
- ``cmd:<command line>`` (a subprocess harness, chapter ``conformance/harness``);
- ``reference`` (the default) and ``model`` (the memory model) as shorthands.
"""

from __future__ import annotations

import fnmatch
import importlib
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from typing import Any, cast

from .baseline import Baseline
from .handshake import unknown_capabilities
from .harness_client import SubprocessImplementation
from .interface import (
    Approver,
    Implementation,
    JsonObject,
    NotSupported,
    SessionLogImplementation,
)
from .outcomes import REFERENCE_UNAVAILABLE, STATUSES, CaseOutcome, KitError, RunResult
from .registry import Registry, Suite, covers, registry, result_of
from .vectors import Case, load_cases

__all__ = ["REFERENCE", "STATUSES", "CaseOutcome", "KitError", "RunResult", "command_line",
           "load_implementation", "run_case", "run_kit", "select_cases"]

#: The default implementation: the dshkit reference, bound to the kit by the only part of the
#: kit that imports it (imported by name, so the rest of the kit runs without it).
REFERENCE = "py:dshkit.conformance.implementations.reference:create"
MODEL = "py:dshkit.conformance.model_impl:create"

# -- implementations ----------------------------------------------------------------------------

class _LegacySessionLog:
    """Adapts the first interface (four session-log methods) to :class:`Implementation`."""

    def __init__(self, impl: SessionLogImplementation) -> None:
        self._impl = impl
        self.name = impl.name
        self.version = str(getattr(impl, "version", "unknown"))
        self.language = str(getattr(impl, "language", "python"))
        self.capabilities: tuple[str, ...] = ("session-log",)

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        session_id = params.get("sessionId")
        if operation == "validate":
            return self._impl.validate(input, params.get("level", "load"), session_id)
        if operation == "fold":
            return self._impl.fold(input, params.get("repair", True), session_id)
        if operation == "repair":
            return self._impl.repair(input, session_id)
        if operation == "load":
            return self._impl.load(input, session_id)
        raise NotSupported(f"{operation} is not a session-log operation")


def _reference_unavailable(exc: ImportError) -> KitError:
    try:
        needs = [r.split(";")[0].strip() for r in metadata.requires("dshkit") or []
                 if "extra ==" not in r]
    except metadata.PackageNotFoundError:
        needs = []
    hint = (f"pip install {' '.join(repr(n) for n in needs)}" if needs
            else "reinstall dshkit with its dependencies")
    return KitError(REFERENCE_UNAVAILABLE,
                    f"the default implementation, the dshkit reference, cannot be imported "
                    f"({type(exc).__name__}: {exc}); install what it needs ({hint}), or run "
                    "another implementation with --impl cmd:<command line> or "
                    "--impl py:module:factory")


def command_line(text: str) -> list[str]:
    """The argv of ``cmd:<command line>``, split as a POSIX shell would; a command quoted as
    a whole (``cmd:'node harness.mjs'``, as a shell passes it on when the quotes are inside
    the --impl value) loses that one level of quotes."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise KitError("IMPL_INVALID", f"cannot split the command line {text!r}: {exc}; "
                       "quote it as a shell would, e.g. --impl 'cmd:node harness.mjs'") from None
    if len(argv) == 1 and text.strip()[:1] in "'\"" and not shutil.which(argv[0]):
        argv = command_line(argv[0])
    if not argv:
        raise KitError("IMPL_INVALID", "cmd: needs a command line, e.g. cmd:node harness.mjs")
    return argv


def load_implementation(spec: str, *, timeout: float = 30.0) -> Implementation:
    """``py:module:factory``, ``cmd:command line``, ``reference`` or ``model``."""
    if spec in ("reference", "ref"):
        spec = REFERENCE
    elif spec == "model":
        spec = MODEL
    if spec.startswith("py:"):
        module_name, _, factory = spec[3:].partition(":")
        try:
            module = importlib.import_module(module_name)
            impl = getattr(module, factory or "create")()
        except ImportError as exc:
            if spec == REFERENCE:
                raise _reference_unavailable(exc) from exc
            raise KitError("IMPL_UNAVAILABLE",
                           f"cannot create {spec}: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise KitError("IMPL_UNAVAILABLE",
                           f"cannot create {spec}: {type(exc).__name__}: {exc}") from exc
        if isinstance(impl, Implementation):
            known = registry().declarable()
            problem = unknown_capabilities(impl.capabilities, known) if known else ""
            if problem:
                raise KitError("IMPL_INVALID", f"{spec}: {problem}")
            return impl
        if isinstance(impl, SessionLogImplementation):
            return cast(Implementation, _LegacySessionLog(impl))
        raise KitError("IMPL_INVALID", f"{spec} provides neither run() with name, version and "
                       "capabilities nor the session-log methods")
    if spec.startswith("cmd:"):
        argv = command_line(spec[4:])
        return SubprocessImplementation(argv, timeout=timeout)
    raise KitError("IMPL_INVALID", f"unsupported --impl {spec!r}; use py:module:factory, "
                   "cmd:<command line>, reference or model")


# -- running ------------------------------------------------------------------------------------

def _call(impl: Implementation, case: Case, approver: Approver | None) -> Any:
    runner: Callable[..., Any] | None = getattr(impl, "run_request", None)
    if runner is not None:  # transports that want the case id (subprocess harnesses)
        return runner(case.request(), approver)
    if approver is None:
        return impl.run(case.operation, case.input, case.params)
    return impl.run(case.operation, case.input, case.params, approver)


def _stderr(impl: Implementation) -> str:
    """What a subprocess harness wrote to stderr during the last case."""
    take: Callable[[], str] | None = getattr(impl, "take_stderr", None)
    return take() if take is not None else ""


def run_case(impl: Implementation, case: Case, suites: Registry | None = None,
             declared: Iterable[str] | None = None,
             check: Callable[[JsonObject], str] | None = None) -> CaseOutcome:
    """Run one case and compare its result; never raises for an implementation's fault.
    ``check`` (used by the property tests) looks at the result before the comparison: a
    non-empty answer fails the case with that detail."""
    known = suites if suites is not None else registry()
    suite: Suite | None = known.suites.get(case.suite)
    if suite is None:
        return CaseOutcome(case, "errored", f"no suite module for suite {case.suite!r}")
    needed = suite.requires(case)
    capabilities = tuple(impl.capabilities if declared is None else declared)
    if not all(covers(capabilities, c) for c in needed):
        missing = [c for c in needed if not covers(capabilities, c)]
        return CaseOutcome(case, "not_applicable", f"needs {', '.join(missing)}",
                           capabilities=needed)
    make = getattr(suite.module, "make_approver", None)
    approver = make(case.to_json()) if make is not None else None
    start = time.perf_counter()
    try:
        raw = _call(impl, case, approver)
    except NotSupported as exc:
        return CaseOutcome(case, "skipped", str(exc) or "not supported",
                           time.perf_counter() - start, needed)
    except Exception as exc:  # a crash marks the case, never the run
        detail = getattr(exc, "detail", None) or f"{type(exc).__name__}: {exc}"
        return CaseOutcome(case, "errored", str(detail), time.perf_counter() - start, needed,
                           stderr=_stderr(impl))
    duration = time.perf_counter() - start
    stderr = _stderr(impl)
    result = result_of(raw)
    attach = getattr(suite.module, "attach", None)
    if approver is not None and attach is not None:
        result = attach(result, approver)
    try:
        mismatch = (check(result) if check is not None else "") or \
            suite.compare(case.expect, result, capabilities)
    except Exception as exc:
        return CaseOutcome(case, "failed", f"result not comparable: {type(exc).__name__}: {exc}",
                           duration, needed, stderr)
    if mismatch:
        return CaseOutcome(case, "failed", mismatch, duration, needed, stderr)
    return CaseOutcome(case, "passed", "", duration, needed, stderr)


def select_cases(cases: Sequence[Case], suites: Sequence[str] | None = None,
                 patterns: Sequence[str] | None = None) -> list[Case]:
    chosen = [c for c in cases if not suites or c.suite in suites]
    if patterns:
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    return chosen


def run_kit(impl: Implementation, cases: Sequence[Case] | None = None, *,
            baseline: Baseline | None = None, suites: Registry | None = None,
            progress: Callable[[CaseOutcome], None] | None = None,
            all_ids: Iterable[str] | None = None, retired: Iterable[str] = ()) -> RunResult:
    """Run cases (default: every case of the kit) and apply the baseline."""
    known = suites if suites is not None else registry()
    selected = list(cases) if cases is not None else load_cases()
    started = time.time()
    clock = time.perf_counter()
    outcomes: list[CaseOutcome] = []
    for case in selected:
        outcome = run_case(impl, case, known)
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    stale: list[dict[str, str]] = []
    if baseline is not None:
        kit_ids = set(all_ids) if all_ids is not None else {c.id for c in load_cases()}
        stale = baseline.apply(outcomes, kit_ids=kit_ids, retired=set(retired))
    return RunResult(impl, outcomes, stale, dict(known.problems), started,
                     time.perf_counter() - clock)
