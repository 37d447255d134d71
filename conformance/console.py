"""Options and execution shared by ``dshkit conformance`` and ``dshkit-conformance``.

The property tests of the kit run by default after the cases (``--properties N`` examples
each, 0 disables them), with a seed that the header reports (``--seed`` repeats a run).

Exit status (the one table of the command line, :mod:`dshkit.cli.exits`): 0 every applicable
case and property test passed (or failed as the baseline lists) and no baseline entry is stale;
1 otherwise; 2 usage or I/O problems (bad ``--impl``, a harness that cannot start, an
unreadable baseline, a report that cannot be written); 3 a kit bug, 130 interrupted. Never a
traceback; with ``--json`` a refusal is the command line's envelope (``cli/v1/refusal.json``).
A run that stops midway still writes its reports (atomically) with the cases run so far and
the reason under ``kit.problems.run``.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from dshkit import __version__
from dshkit.cli import exits
from dshkit.cli.atomic import write_atomic
from dshkit.cli.report import Refusal, Reporter

from .baseline import Baseline, BaselineError, load_baseline
from .coverage import Coverage, coverage
from .interface import Implementation, NotSupported
from .kitdata import KIT_NAME, digests, manifest, requirements, spec_versions
from .outcomes import CaseOutcome, RunResult
from .printable import json_text, visible
from .registry import Registry, registry
from .report import build_report, console_lines, to_junit, to_markdown
from .runner import KitError, load_implementation, run_kit, select_cases
from .vectors import Case, load_cases, load_files

__all__ = ["add_arguments", "build_parser", "execute", "main"]

COMMAND = "conformance"
#: Examples per property test in a default run: enough to exercise every generator, small
#: enough that the whole kit stays within seconds against the reference.
DEFAULT_PROPERTY_EXAMPLES = 50
COUNTEREXAMPLES = "dshkit-counterexamples"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--impl", default="reference", metavar="IMPL",
                        help="implementation under test: py:module:factory, 'cmd:<command "
                             "line>' (a JSON-lines harness), reference (default) or model")
    parser.add_argument("--suite", action="append", default=[], metavar="SUITE",
                        help="only this suite (repeatable), e.g. session-log, memory")
    parser.add_argument("--case", action="append", default=[], metavar="GLOB",
                        help="only case ids matching this glob (repeatable)")
    parser.add_argument("--baseline", metavar="PATH", help="expected failures (JSON)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="S",
                        help="per-case timeout for subprocess harnesses (default 30)")
    parser.add_argument("--report", metavar="PATH", help="write the JSON report")
    parser.add_argument("--junit", metavar="PATH", help="write JUnit XML")
    parser.add_argument("--markdown", metavar="PATH", help="write a Markdown summary")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="hypothesis seed of the property tests (default: random, "
                             "reported)")
    parser.add_argument("--properties", type=int, default=DEFAULT_PROPERTY_EXAMPLES,
                        metavar="N",
                        help="examples per property test (default "
                             f"{DEFAULT_PROPERTY_EXAMPLES}; 0: run no property test)")
    parser.add_argument("--counterexamples", metavar="DIR", default=COUNTEREXAMPLES,
                        help="where a failing property test writes its shrunk case as a "
                             f"vector file (default {COUNTEREXAMPLES}, created only then)")
    parser.add_argument("--json", action="store_true",
                        help="print the JSON report instead of the console summary")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every case")


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Run the dshkit conformance kit "
                                     "against an implementation and report.")
    add_arguments(parser)
    return parser


def _refusal(code: str, message: str, flag: str | None = None) -> Refusal:
    return Refusal(code, visible(message), exit_code=exits.USAGE, flag=flag)


def _kit_block() -> dict[str, Any]:
    files = load_files()
    return {"name": KIT_NAME, "version": __version__, "spec_versions": spec_versions(),
            "vectors": {"files": len(files),
                        "cases": sum(len(f.document.get("cases", [])) for f in files)}}


def _properties(args: argparse.Namespace, impl: Any, seed: int) -> dict[str, Any] | None:
    """Every property test of the kit, or those of the ``--suite`` selection
    (``not_applicable`` when ``impl`` does not declare what it needs); ``None`` with
    ``--properties 0`` or when no property belongs to the selected suites."""
    if args.properties <= 0:
        return None
    from .properties import run_properties

    return run_properties(impl, max_examples=args.properties, seed=seed,
                          counterexample_dir=args.counterexamples, suites=args.suite) or None


def main(argv: Sequence[str] | None = None) -> int:
    """The ``dshkit-conformance`` console script (same options as ``dshkit conformance``)."""
    parser = build_parser("dshkit-conformance")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else exits.USAGE
    return execute(args)


def _tolerant_streams() -> None:
    """A terminal that cannot show a character gets its escape, not an exception."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure: Callable[..., None] | None = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def execute(args: argparse.Namespace) -> int:
    out = Reporter(COMMAND, bool(getattr(args, "json", False)))
    _tolerant_streams()
    try:
        return _execute(args, out)
    except Refusal as refusal:
        return out.refuse(refusal)
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except Exception as exc:  # never a traceback
        return out.refuse(Refusal(
            "INTERNAL_ERROR", visible(f"{type(exc).__name__}: {exc}; this is a dshkit bug, "
                                      "please report it"), exit_code=exits.INTERNAL))


def _unknown_suites(unknown: Sequence[str], suites: Registry) -> str:
    message = f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(suites.suites)}"
    if suites.problems:
        broken = "; ".join(f"{module}: {problem}" for module, problem in suites.problems.items())
        message += f"; suite modules that failed to load: {broken}"
    return message


def _prepare(args: argparse.Namespace) -> tuple[Registry, Baseline | None, Implementation]:
    """What a run needs, or the refusal that stops it before any case runs."""
    suites = registry()
    unknown = [s for s in args.suite if s not in suites.suites]
    if unknown:
        raise _refusal("SUITE_UNKNOWN", _unknown_suites(unknown, suites), "--suite")
    try:
        baseline = load_baseline(args.baseline) if args.baseline else None
    except BaselineError as exc:
        raise _refusal("BASELINE_INVALID", str(exc), "--baseline") from None
    for flag, value in (("--properties", args.properties), ("--timeout", args.timeout)):
        if value < 0:
            raise _refusal("USAGE", f"{flag} must be 0 or more, got {value}", flag)
    if args.properties > 0 and importlib.util.find_spec("hypothesis") is None:
        raise _refusal("PROPERTIES_UNAVAILABLE", "the property tests need hypothesis, a "
                       "dependency of dshkit: reinstall it (pip install dshkit), or run with "
                       "--properties 0", "--properties")
    try:
        impl = load_implementation(args.impl, timeout=args.timeout)
    except KitError as exc:
        raise _refusal(exc.code, exc.message, "--impl") from None
    return suites, baseline, impl


class _NotStarted:
    """The implementation of a run refused before it started: only its ``--impl`` is known."""

    name, version, language = "(not started)", "(unknown)", "(unknown)"
    capabilities: tuple[str, ...] = ()

    def run(self, operation: str, input: dict[str, Any], params: dict[str, Any],
            approver: Any = None) -> dict[str, Any]:
        raise NotSupported("the run did not start")


def _report_refusal(args: argparse.Namespace, refusal: Refusal) -> None:
    """Leave a report saying why no case ran, so that no stale report of an earlier run is
    taken for this one; a report that cannot be written changes nothing of the refusal."""
    if not (args.report or args.junit or args.markdown):
        return
    now = time.time()
    run = RunResult(cast(Implementation, _NotStarted()), [], [], {}, now, 0.0)
    report = build_report(run, suites=registry(), connector=args.impl,
                          coverage=_coverage(load_cases()), kit=_kit_block(), seed=args.seed)
    report["kit"]["problems"] = {"run": f"{refusal.code}: {refusal.message} (no case ran)"}
    report["summary"]["ok"] = False
    _write_reports(args, report)


def _coverage(every: Sequence[Case]) -> Coverage:
    return coverage(every, requirements().get("requirements", []),
                    manifest().get("kitVerified", {}), manifest().get("toolVerified", {}))


def _execute(args: argparse.Namespace, out: Reporter) -> int:
    try:
        suites, baseline, impl = _prepare(args)
    except Refusal as refusal:
        _report_refusal(args, refusal)
        raise
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    every = load_cases()
    chosen = select_cases(every, args.suite, args.case)
    done: list[CaseOutcome] = []
    run: RunResult | None = None
    property_tests: dict[str, Any] | None = None
    stopped: tuple[str, str, int] | None = None  # code, message, exit status
    started, clock = time.time(), time.perf_counter()
    try:
        run = run_kit(impl, chosen, baseline=baseline, suites=suites, progress=done.append,
                      all_ids=[c.id for c in every],
                      retired=digests().get("tombstones", {}).keys())
        property_tests = _properties(args, impl, seed)
    except KeyboardInterrupt:
        stopped = ("INTERRUPTED", "interrupted", exits.INTERRUPTED)
    except Exception as exc:  # a kit bug: report what ran before it
        stopped = ("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}; this is a dshkit bug, "
                   "please report it", exits.INTERNAL)
    finally:
        closer = getattr(impl, "close", None)
        if callable(closer):
            closer()
    if run is None:
        run = RunResult(impl, done, [], dict(suites.problems), started,
                        time.perf_counter() - clock)
    if baseline is not None and property_tests is not None:
        from .properties import PROPERTIES

        run.stale += baseline.apply_properties(property_tests,
                                               known=[p.name for p in PROPERTIES])
    report = build_report(run, suites=suites, connector=args.impl, coverage=_coverage(every),
                          kit=_kit_block(), seed=seed, property_tests=property_tests)
    if stopped is not None:
        report["kit"].setdefault("problems", {})["run"] = (
            f"{stopped[0]}: {stopped[1]} (the run stopped after {len(run.outcomes)} of "
            f"{len(chosen)} cases; the report holds those)")
        report["summary"]["ok"] = False
    unwritten = _write_reports(args, report)
    if args.json and unwritten is not None:
        unwritten.report = report  # one JSON document: the envelope, the report inside
    elif args.json:
        sys.stdout.write(json_text(report) + "\n")
    else:
        for line in console_lines(report, verbose=args.verbose):
            out.say(line)
    if unwritten is not None:
        return out.refuse(unwritten)
    if stopped is not None:
        out.note(f"dshkit conformance: {stopped[0]}: {visible(stopped[1])}")
        return stopped[2]
    return exits.OK if report["summary"]["ok"] else exits.INVALID


def _write_reports(args: argparse.Namespace, report: dict[str, Any]) -> Refusal | None:
    """Write every report asked for (each atomically); the first that could not be written."""
    writers: list[tuple[str | None, str, Callable[[dict[str, Any]], str]]] = [
        (args.report, "--report", lambda r: json_text(r, indent=2) + "\n"),
        (args.junit, "--junit", to_junit),
        (args.markdown, "--markdown", to_markdown)]
    first: Refusal | None = None
    for path, flag, render in writers:
        if not path:
            continue
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, render(report), flag)
        except OSError as exc:
            first = first or Refusal("IO_ERROR", f"cannot write {path}: {exc.strerror or exc}",
                                     exit_code=exits.USAGE, path=path, flag=flag)
        except Refusal as refusal:
            first = first or refusal
    return first
