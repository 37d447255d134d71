"""JSON texts given to dshkit outside a session log (issue 9): command-line files and option
values, adapter payloads. One bounded parser (``dshkit.reference.json.inputs``) reads them all;
each way a text can fail is one code, and each command turns it into its own structured error
(MEM-EXP-005, CMP-CLI-002, ADP-CLI-006, ADP-SEC-003), never a traceback or INTERNAL_ERROR."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from dshkit.adapters import REGISTRY, AdapterError
from dshkit.cli import main
from dshkit.cli.adapt import option_values
from dshkit.reference import limits
from dshkit.reference.json import inputs as json_input
from dshkit.reference.json.inputs import JsonInputError, parse_json, read_json


def _code(text: str | bytes, **options: Any) -> str:
    try:
        parse_json(text, **options)
    except JsonInputError as exc:
        assert exc.code in json_input.CODES
        return exc.code
    return "ok"


@pytest.mark.parametrize(("text", "code"), [
    ('{"a": [1, 2.5, "x", null, true]}', "ok"),
    (b'{"a": "\xc3\xa9"}', "ok"),
    ("[" * 8 + "]" * 8, "ok"),  # exactly the limit set below
    ("[" * 9 + "]" * 9, "JSON_TOO_DEEP"),
    ('{"a": "[[[[[[[[[[[["}', "ok"),  # brackets inside a string do not nest
    ("[" * 9, "JSON_TOO_DEEP"),  # refused before the parser sees the missing brackets
    ('{"a": }', "JSON_SYNTAX"),
    ("", "JSON_SYNTAX"),
    ('\ufeff{"a": 1}', "JSON_SYNTAX"),  # a byte order mark is not part of a JSON text
    (b'{"a": "\xe9"}', "JSON_INVALID_UTF8"),
    ("NaN", "JSON_NON_FINITE"),
    ("[-Infinity]", "JSON_NON_FINITE"),
    ("1e400", "JSON_NON_FINITE"),
    ("1" * 5000, "JSON_NUMBER_TOO_LONG"),
    ("1" * 400, "ok"),
])
def test_parse_json(text: str | bytes, code: str) -> None:
    with limits.override(max_json_depth=8):
        assert _code(text) == code


def test_non_finite_numbers_as_python_writes_them() -> None:
    value = parse_json('[NaN, Infinity, 1e400]', allow_non_finite=True)
    assert [v != v or abs(v) == float("inf") for v in value] == [True, True, True]


def test_syntax_errors_are_located() -> None:
    with pytest.raises(JsonInputError) as info:
        parse_json('{\n  "a": 1,\n}')
    assert (info.value.line, info.value.column) == (3, 1)
    assert info.value.describe().endswith("at line 3 column 1")


def test_depth_past_the_stack_is_still_structured() -> None:
    """A limit configured above what the interpreter can recurse still gives JSON_TOO_DEEP."""
    with limits.override(max_json_depth=1_000_000):
        assert _code("[" * 200_000 + "]" * 200_000) == "JSON_TOO_DEEP"


def test_read_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(JsonInputError) as info:
        read_json(str(tmp_path / "missing.json"))
    assert info.value.code == "INPUT_UNREADABLE"
    (tmp_path / "a.json").write_bytes(b'{"a": 1}')
    assert read_json(str(tmp_path / "a.json")) == {"a": 1}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"[1]")))
    assert read_json("-") == [1]
    monkeypatch.setattr("sys.stdin", io.StringIO("[2]"))
    assert read_json("-") == [2]


# -- the commands ------------------------------------------------------------------------------


@pytest.mark.requirement("MEM-CLI-001")
@pytest.mark.parametrize("content", [b"[" * 100_000, b"[1,", b"\xff[]", b"[NaN]",
                                     b"[" + b"1" * 5000 + b"]"])
@pytest.mark.parametrize("op", ["seed", "import"])
def test_memory_input_is_refused_before_the_store_is_opened(
        op: str, content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.json").write_bytes(content)
    db = tmp_path / "store" / "memory.db"
    code = main(["memory", "--db", str(db), "--json", "--yes", op, str(tmp_path / "in.json")])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 2 and error["code"] == "INVALID_INPUT"
    assert error["details"]["field"] == "/" and set(error["details"]) == {"field", "reason"}
    assert not (tmp_path / "store").exists()  # nothing created, nothing asked


@pytest.mark.requirement("CMP-CLI-002")
@pytest.mark.parametrize("content", [b"[" * 100_000, b'{"x": NaN}', b"{", b"\xff"])
def test_compact_config_is_a_usage_error(content: bytes, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_bytes(content)
    code = main(["compact", "plan", str(tmp_path / "log.jsonl"), "--config",
                 str(tmp_path / "config.json"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and out["error"]["code"] == "USAGE"
    assert str(tmp_path / "config.json") in out["error"]["message"]


@pytest.mark.requirement("ADP-CLI-006")
def test_option_values() -> None:
    values = option_values(["n=1700000000000", "flag=true", "word=hello world", "nan=NaN",
                             "big=1e400", "list=[1, 2]", "text=[unclosed"])
    assert values == {"n": 1700000000000, "flag": True, "word": "hello world", "nan": "NaN",
                      "big": "1e400", "list": [1, 2], "text": "[unclosed"}
    for raw, reason in (("x=" + "[" * 600, "JSON_TOO_DEEP"),
                        ("x=" + "1" * 5000, "JSON_NUMBER_TOO_LONG")):
        with pytest.raises(AdapterError) as info:
            option_values([raw])
        assert info.value.code == "ADAPTER_OPTION"
        assert info.value.details == {"key": "x", "reason": reason}


def test_adapter_payloads_are_bounded() -> None:
    deep = "[" * 600 + "]" * 600
    with pytest.raises(AdapterError) as info:
        REGISTRY.adapt("mem0", f'[{{"memory": "a", "metadata": {{"x": {deep}}}}}]', {})
    assert info.value.code == "ADAPTER_PAYLOAD"
    assert info.value.details["reason"] == "JSON_TOO_DEEP"
    entity = '{"type":"entity","name":"a","entityType":"t","observations":[]}'
    with pytest.raises(AdapterError) as info:
        REGISTRY.adapt("mcp-graph", f'{entity}\n{{"type": {deep}}}\n', {})
    assert info.value.code == "ADAPTER_PAYLOAD"
    assert info.value.details["line"] == 2 and info.value.details["reason"] == "JSON_TOO_DEEP"
