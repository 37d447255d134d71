"""Options and execution shared by ``dshkit conformance`` and ``dshkit-conformance``.

The property tests of the kit run by default after the cases (``--properties N`` examples
each, 0 disables them), with a seed that the header reports (``--seed`` repeats a run).

Exit status: 0 every applicable case and property test passed (or failed as the baseline
lists) and no baseline entry is stale; 1 otherwise; 2 usage or I/O problems (bad ``--impl``, a harness that cannot
start, an unreadable baseline, a report that cannot be written). Never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dshkit import __version__

from .baseline import BaselineError, load_baseline
from .coverage import coverage
from .kitdata import KIT_NAME, digests, manifest, requirements, spec_versions
from .registry import Registry, registry
from .report import build_report, console_lines, to_junit, to_markdown
from .runner import KitError, load_implementation, run_kit, select_cases
from .vectors import load_cases, load_files

__all__ = ["add_arguments", "build_parser", "execute", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
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


def _error(args: argparse.Namespace, code: str, message: str) -> int:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"code": code, "message": message}) + "\n")
    else:
        sys.stderr.write(f"dshkit conformance: {code}: {message}\n")
    return EXIT_USAGE


def _write(path: str, text: str) -> None:
    target = Path(path)
    if target.parent != Path(""):
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


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
        return int(exc.code) if isinstance(exc.code, int) else 2
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    try:
        return _execute(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback
        sys.stderr.write(f"dshkit conformance: INTERNAL_ERROR: {type(exc).__name__}: {exc}\n")
        return EXIT_INTERNAL


def _unknown_suites(unknown: Sequence[str], suites: Registry) -> str:
    message = f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(suites.suites)}"
    if suites.problems:
        broken = "; ".join(f"{module}: {problem}" for module, problem in suites.problems.items())
        message += f"; suite modules that failed to load: {broken}"
    return message


def _execute(args: argparse.Namespace) -> int:
    suites = registry()
    unknown = [s for s in args.suite if s not in suites.suites]
    if unknown:
        return _error(args, "SUITE_UNKNOWN", _unknown_suites(unknown, suites))
    try:
        baseline = load_baseline(args.baseline) if args.baseline else None
    except BaselineError as exc:
        return _error(args, "BASELINE_INVALID", str(exc))
    if args.properties > 0 and importlib.util.find_spec("hypothesis") is None:
        return _error(args, "PROPERTIES_UNAVAILABLE", "the property tests need hypothesis: "
                      "pip install 'dshkit[conformance]', or run with --properties 0")
    try:
        impl = load_implementation(args.impl, timeout=args.timeout)
    except KitError as exc:
        return _error(args, exc.code, exc.message)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    every = load_cases()
    chosen = select_cases(every, args.suite, args.case)
    try:
        run = run_kit(impl, chosen, baseline=baseline, suites=suites,
                      all_ids=[c.id for c in every],
                      retired=digests().get("tombstones", {}).keys())
        property_tests = _properties(args, impl, seed)
    finally:
        closer = getattr(impl, "close", None)
        if callable(closer):
            closer()
    if baseline is not None and property_tests is not None:
        from .properties import PROPERTIES

        run.stale += baseline.apply_properties(property_tests,
                                               known=[p.name for p in PROPERTIES])
    traced = coverage(every, requirements().get("requirements", []),
                      manifest().get("kitVerified", {}), manifest().get("toolVerified", {}))
    report = build_report(run, suites=suites, connector=args.impl, coverage=traced,
                          kit=_kit_block(), seed=seed, property_tests=property_tests)
    try:
        if args.report:
            _write(args.report, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        if args.junit:
            _write(args.junit, to_junit(report))
        if args.markdown:
            _write(args.markdown, to_markdown(report))
    except OSError as exc:
        return _error(args, "IO_ERROR", f"cannot write a report: {exc}")
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        for line in console_lines(report, verbose=args.verbose):
            print(line)
    return EXIT_OK if report["summary"]["ok"] else EXIT_FAILED
