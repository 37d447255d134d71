"""pytest plug-in of the conformance kit (entry point ``pytest11``: ``dshkit-conformance``).

It does nothing unless ``--dshkit-impl`` is given. With it, every selected case of the kit
becomes a pytest item next to the project's own tests::

    pytest --dshkit-impl "cmd:node harness.mjs" --dshkit-suite memory \\
           --dshkit-baseline known-failures.json --dshkit-report conformance.json

Outcomes: a passing case passes; a failing, erroring or skipped case fails (its detail is the
failure message, no traceback); a case outside the declared capabilities is skipped as not
applicable; a case listed in the baseline is an expected failure (xfail), and a listed case
that passes fails as a stale baseline entry. Without installing the entry point, load it
with ``-p dshkit.conformance.pytest_plugin``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli.atomic import write_atomic

from .baseline import Baseline, BaselineError, load_baseline
from .interface import Implementation
from .printable import DETAIL_LIMIT, json_text, visible
from .runner import CaseOutcome, KitError, RunResult, load_implementation, run_case, select_cases
from .vectors import Case, load_cases

__all__ = ["ConformanceItem", "pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dshkit", "dshkit conformance kit")
    group.addoption("--dshkit-impl", default=None, metavar="IMPL",
                    help="run the dshkit conformance kit against IMPL (py:module:factory, "
                         "'cmd:<command line>', reference or model); off when not given")
    group.addoption("--dshkit-suite", action="append", default=[], metavar="SUITE",
                    help="only this suite of the kit (repeatable)")
    group.addoption("--dshkit-case", action="append", default=[], metavar="GLOB",
                    help="only kit cases whose id matches GLOB (repeatable)")
    group.addoption("--dshkit-baseline", default=None, metavar="PATH",
                    help="expected failures of the implementation (JSON)")
    group.addoption("--dshkit-timeout", type=float, default=30.0, metavar="S",
                    help="per-case timeout for subprocess harnesses")
    group.addoption("--dshkit-report", default=None, metavar="PATH",
                    help="also write the kit's JSON report")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requirement(*ids): the tool-scoped requirements of the "
                            "dshkit specification that this test checks (CNF-SCO-002)")
    if config.getoption("dshkit_impl", default=None):
        config.addinivalue_line("markers", "dshkit(label): a case of the dshkit conformance "
                                "kit (its suite, then its tags)")
        config.pluginmanager.register(KitSession(config), "dshkit-conformance-session")


class ConformanceFailure(Exception):
    """A case that did not pass (reported without a traceback)."""


class KitSession:
    """Holds the implementation and the outcomes for one pytest session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.spec = str(config.getoption("dshkit_impl"))
        self.timeout = float(config.getoption("dshkit_timeout"))
        self._impl: Implementation | None = None
        self.outcomes: list[CaseOutcome] = []
        self.started = time.time()
        path = config.getoption("dshkit_baseline")
        try:
            self.baseline: Baseline | None = load_baseline(path) if path else None
        except BaselineError as exc:
            raise pytest.UsageError(str(exc)) from exc

    @property
    def impl(self) -> Implementation:
        if self._impl is None:
            try:
                self._impl = load_implementation(self.spec, timeout=self.timeout)
            except KitError as exc:
                raise pytest.UsageError(f"--dshkit-impl: {exc.code}: {exc.message}") from exc
        return self._impl

    def cases(self) -> list[Case]:
        return select_cases(load_cases(), self.config.getoption("dshkit_suite"),
                            self.config.getoption("dshkit_case"))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        self.impl  # noqa: B018 (a bad --dshkit-impl stops the session before any test runs)
        collector = KitCollector.from_parent(session, name="dshkit-conformance", kit=self)
        items.extend(collector.collect())

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self._impl is None:
            return
        report_path = self.config.getoption("dshkit_report")
        if report_path:
            self._write_report(str(report_path))
        closer = getattr(self._impl, "close", None)
        if callable(closer):
            closer()

    def _write_report(self, path: str) -> None:
        from .console import _kit_block
        from .coverage import coverage
        from .kitdata import manifest, requirements
        from .registry import registry
        from .report import build_report

        assert self._impl is not None
        run = RunResult(self._impl, list(self.outcomes), started=self.started,
                        duration=time.time() - self.started)
        if self.baseline is not None:
            run.stale = self.baseline.apply(run.outcomes, kit_ids={c.id for c in load_cases()},
                                            retired=set())
        traced = coverage(load_cases(), requirements().get("requirements", []),
                          manifest().get("kitVerified", {}), manifest().get("toolVerified", {}))
        report = build_report(run, suites=registry(), connector=self.spec, coverage=traced,
                              kit=_kit_block(), seed=random.SystemRandom().randrange(2**32))
        write_atomic(Path(path), json_text(report, indent=2) + "\n", "--dshkit-report")


class KitCollector(pytest.Collector):
    def __init__(self, *, kit: KitSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kit = kit

    def collect(self) -> list[pytest.Item]:
        return [ConformanceItem.from_parent(self, name=case.id, case=case, kit=self.kit)
                for case in self.kit.cases()]


class ConformanceItem(pytest.Item):
    """One case of the kit."""

    def __init__(self, *, case: Case, kit: KitSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.kit = kit
        for tag in (case.suite, *case.tags):
            self.add_marker(pytest.mark.dshkit(tag))

    def runtest(self) -> None:
        outcome = run_case(self.kit.impl, self.case)
        self.kit.outcomes.append(outcome)
        detail = visible(outcome.detail, DETAIL_LIMIT, layout=True)
        entry = self.kit.baseline.entries.get(self.case.id) if self.kit.baseline else None
        if outcome.status == "not_applicable":
            if entry is not None:
                raise ConformanceFailure(f"stale baseline entry: {self.case.id} is not "
                                         "applicable to the declared capabilities")
            pytest.skip(f"not applicable: {detail}")
        if outcome.status == "passed":
            if entry is not None:
                raise ConformanceFailure(f"stale baseline entry: {self.case.id} is listed as "
                                         f"failing ({entry.reason}) but passed")
            return
        if entry is not None and (entry.status is None or entry.status == outcome.status):
            pytest.xfail(f"{entry.reason}: {outcome.status}: {detail}")
        raise ConformanceFailure(f"{outcome.status}: {detail}\n"
                                 f"requirements: {', '.join(self.case.requirements)}\n"
                                 f"vector file: {self.case.file}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (f"dshkit/{self.case.file}", None, f"{self.case.suite}: {self.case.id}")


def iter_items(items: list[pytest.Item]) -> Iterator[ConformanceItem]:
    """The kit's items among collected items."""
    return (item for item in items if isinstance(item, ConformanceItem))
