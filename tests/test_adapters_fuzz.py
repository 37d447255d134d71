"""Fuzzing every reader and writer (ADP-ERR-003): any text, any JSON value, any options give a
result or an ``AdapterError`` with a location (ADP-ERR-002), never another exception. The
adapters' own functions are called, not the registry, which would wrap a stray exception."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from dshkit.adapters import BUILTIN, AdapterError
from dshkit.adapters.errors import CODES, LOCATION_KEYS
from dshkit.adapters.registry import check_output
from dshkit.conformance.strategies_adapters import any_json, any_text

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ADAPTERS = {adapter.id: adapter for adapter in BUILTIN}


def _check_error(exc: AdapterError) -> None:
    assert exc.code in CODES
    assert any(key in exc.details for key in LOCATION_KEYS), exc.details
    assert exc.message


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
@SETTINGS
@given(payload=any_text())
def test_reading_any_text(fmt: str, payload: str) -> None:
    options: dict[str, Any] = {"target": "memory"} if fmt == "hermes" else {}
    try:
        result = ADAPTERS[fmt].adapt(payload, options=options)
    except AdapterError as exc:
        _check_error(exc)
        return
    check_output(result, fmt)


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
@SETTINGS
@given(payload=any_json())
def test_reading_any_json(fmt: str, payload: Any) -> None:
    try:
        result = ADAPTERS[fmt].adapt(payload, options=None)
    except AdapterError as exc:
        _check_error(exc)
        return
    check_output(result, fmt)


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
@SETTINGS
@given(entries=any_json(), options=any_json())
def test_writing_anything(fmt: str, entries: Any, options: Any) -> None:
    for opts in (None, options if isinstance(options, dict) else None):
        try:
            ADAPTERS[fmt].export(entries, options=opts)
        except AdapterError as exc:
            _check_error(exc)


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
@SETTINGS
@given(options=any_json())
def test_any_options(fmt: str, options: Any) -> None:
    try:
        ADAPTERS[fmt].adapt("", options=options)
    except AdapterError as exc:
        _check_error(exc)
