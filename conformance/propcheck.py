"""How the kit runs one property test against an implementation (spec ``conformance/kit``,
"Property tests").

A property draws values with hypothesis and turns each into one or more kit cases whose
expectation the kit computes (with the executable model or the reference) and, optionally, a
check of the implementation's result against the property's own statement. Every case goes
through :func:`dshkit.conformance.runner.run_case`, so a property runs over any
implementation the kit can run, subprocess harnesses included. The outcome of a property:

- ``passed``: every drawn example passed;
- ``failed`` / ``errored``: an example failed (or errored); hypothesis shrinks it and the
  shrunk case is returned, and written when asked, as a ready-to-commit vector file;
- ``not_applicable``: the implementation does not declare the property's capabilities, or
  declines its operation (the cases of that operation already count the skip against it).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from dshkit.spec_version import SPEC_VERSION as _SPEC_VERSION

from .interface import Implementation, JsonObject
from .outcomes import KitError
from .registry import covers
from .runner import load_implementation, run_case
from .vectors import Case, case_from_json, format_json

__all__ = ["PROPERTY_STATUSES", "SPEC_VERSION", "Probe", "case_id", "check",
           "check_against", "counterexample_file", "expected_case", "generated_case",
           "not_applicable", "statement_of"]

SPEC_VERSION = _SPEC_VERSION
PROPERTY_STATUSES = ("passed", "failed", "errored", "not_applicable")
Check = Callable[[JsonObject], str]


@dataclass(frozen=True, slots=True)
class Probe:
    """One case of a drawn example, and what the property says of the implementation's
    result beyond the case's expectation (``""`` when it holds)."""

    case: Case
    check: Check | None = None


def case_id(prefix: str, meaning: JsonObject) -> str:
    digest = hashlib.sha256(json.dumps(meaning, sort_keys=True, ensure_ascii=True)
                            .encode("ascii")).hexdigest()
    return f"{prefix}-prop-{digest[:12]}"


def generated_case(raw: JsonObject, *, suite: str, prefix: str, description: str) -> Case:
    """A drawn case (``operation``, ``input``, ``params``, ``expect``, ``requirements``) with
    an id from the digest of its meaning, the description and the counterexample tags."""
    meaning: JsonObject = {k: raw.get(k) for k in
                           ("operation", "input", "params", "expect", "approver") if k in raw}
    full = {"id": case_id(prefix, meaning), "description": description, **raw,
            "tags": ["generated", "counterexample"]}
    return case_from_json(full, suite=suite, file="generated")


def expected_case(expected: Implementation, operation: str, data: JsonObject,
                  params: JsonObject, *, requirements: Sequence[str], suite: str, prefix: str,
                  description: str) -> Case:
    """:func:`generated_case` for one operation, expecting exactly what ``expected`` (the
    implementation that gives the property its expected answers) answers."""
    raw = {"operation": operation, "input": data, "params": params,
           "expect": expected.run(operation, data, params), "requirements": list(requirements)}
    return generated_case(raw, suite=suite, prefix=prefix, description=description)


def statement_of(expected: Implementation, property: str, request: JsonObject) -> Check | None:
    """What ``property`` states of any result for ``request``, when ``expected`` can say it
    (the reference does: ``statement(property, request)``); ``None`` otherwise."""
    state: Callable[[str, JsonObject], Check | None] | None = getattr(
        expected, "statement", None)
    return state(property, request) if state is not None else None


def counterexample_file(case: Case, detail: str) -> str:
    """A complete vector file (format and house style of ``conformance/vectors``)."""
    document = {"suite": case.suite, "specVersion": SPEC_VERSION,
                "description": f"Counterexample found by a kit property: {detail}",
                "cases": [case.to_json()]}
    return format_json(document)


def _base(name: str, capabilities: Sequence[str], max_examples: int,
          seed: int | None) -> JsonObject:
    return {"property": name, "status": "passed", "ok": True, "examples": max_examples,
            "examples_run": 0, "seed": seed, "capabilities": list(capabilities)}


def not_applicable(name: str, capabilities: Sequence[str], max_examples: int, seed: int | None,
                   detail: str) -> JsonObject:
    return {**_base(name, capabilities, max_examples, seed), "status": "not_applicable",
            "detail": detail, "duration_s": 0.0}


def errored(name: str, capabilities: Sequence[str], max_examples: int, seed: int | None,
            detail: str) -> JsonObject:
    return {**_base(name, capabilities, max_examples, seed), "status": "errored", "ok": False,
            "detail": detail, "duration_s": 0.0}


def _probes(items: Iterable[Case | Probe]) -> list[Probe]:
    return [item if isinstance(item, Probe) else Probe(item) for item in items]


def check(draw: st.SearchStrategy[Any], build: Callable[[Any], Iterable[Case | Probe]],
          impl: Implementation, *, name: str, capabilities: Sequence[str] = (),
          max_examples: int, seed: int | None,
          counterexample_dir: str | Path | None) -> JsonObject:
    """Run one property; the result is ``{"property", "status", "ok", "examples",
    "examples_run", "seed", "capabilities", "duration_s", "detail"?, "case"?,
    "counterexample"?}``, where ``case`` is the shrunk failing case in the vector format."""
    missing = [c for c in capabilities if not covers(impl.capabilities, c)]
    if missing:
        return not_applicable(name, capabilities, max_examples, seed,
                              f"needs {', '.join(missing)}")
    failures: list[tuple[Case, str, str]] = []
    declined: list[str] = []
    examples = [0]
    started = time.perf_counter()

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(draw)
    def prop(value: Any) -> None:
        if declined:
            return
        examples[0] += 1
        for probe in _probes(build(value)):
            outcome = run_case(impl, probe.case, check=probe.check)
            if outcome.status in ("skipped", "not_applicable"):
                declined.append(f"the implementation declines {probe.case.operation}: "
                                f"{outcome.detail}")
                return
            if outcome.status != "passed":
                failures.append((probe.case, outcome.status,
                                 f"{outcome.status}: {outcome.detail}"))
                raise AssertionError(outcome.detail)

    test = hypothesis_seed(seed)(prop) if seed is not None else prop
    result = _base(name, capabilities, max_examples, seed)
    try:
        test()
    except Exception as exc:  # the last recorded failure is the shrunk one
        if not failures:
            result.update(status="errored", ok=False,
                          detail=f"the property could not run: {type(exc).__name__}: {exc}")
        else:
            case, status, detail = failures[-1]
            result.update(status=status, ok=False, detail=detail, case=case.to_json())
            if counterexample_dir is not None:
                target = Path(counterexample_dir)
                target.mkdir(parents=True, exist_ok=True)
                path = target / f"{case.id}.json"
                path.write_text(counterexample_file(case, detail), encoding="utf-8")
                result["counterexample"] = str(path)
    if declined and result["status"] == "passed":
        result.update(status="not_applicable", detail=declined[0])
    result["examples_run"] = examples[0]
    result["duration_s"] = round(time.perf_counter() - started, 3)
    return result


def check_against(expected: Implementation | None,
                  draw: Callable[[Implementation], st.SearchStrategy[Any]],
                  build: Callable[[Implementation, Any], Iterable[Case | Probe]],
                  impl: Implementation, *, name: str, capabilities: Sequence[str] = (),
                  max_examples: int, seed: int | None,
                  counterexample_dir: str | Path | None) -> JsonObject:
    """:func:`check` for a property whose expected answers come from an implementation:
    ``expected``, or by default the dshkit reference (imported only now). When the reference
    cannot be imported the property is ``errored`` with the reason and what to install."""
    missing = [c for c in capabilities if not covers(impl.capabilities, c)]
    if missing:
        return not_applicable(name, capabilities, max_examples, seed,
                              f"needs {', '.join(missing)}")
    try:
        oracle = expected if expected is not None else load_implementation("reference")
    except KitError as exc:
        return errored(name, capabilities, max_examples, seed,
                       f"{exc.code}: the property's expected answers come from the "
                       f"reference: {exc.message}")
    return check(draw(oracle), lambda value: build(oracle, value), impl, name=name,
                 capabilities=capabilities, max_examples=max_examples, seed=seed,
                 counterexample_dir=counterexample_dir)
