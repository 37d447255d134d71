"""The JSON parser seam (reference/json/parse.py): orjson and the stdlib agree.

Every text gives the same value (same types, same float bits, same member order) or the same
error code through the fast parser (orjson behind the guard) as through the exact parser (the
stdlib with the lossless hooks), and a whole log reads the same with either backend.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.reference.json import parse as jsonparse
from dshkit.reference.problems import ProblemError
from dshkit.reference.session.folding import fold_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.reader import LogReader
from dshkit.reference.session.validation import validate_path

HAVE_ORJSON = jsonparse._ORJSON is not None
BACKENDS = ["json", "orjson"] if HAVE_ORJSON else ["json"]


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values read losslessly: same types, float bits, member order."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if x.hex() != y.hex():
                return False
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def outcome(parse: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "value", parse(raw)
    except ProblemError as exc:
        return "error", exc.problem.code


def assert_agree(raw: bytes) -> None:
    exact = outcome(jsonparse.exact_loads, raw)
    for name in BACKENDS:
        with jsonparse.using(name):
            got = outcome(jsonparse.loads_line, raw)
        assert got[0] == exact[0], (raw, name, got, exact)
        if got[0] == "value":
            assert same(got[1], exact[1]), (raw, name, got, exact)
        else:
            assert got[1] == exact[1], (raw, name, got, exact)


TRICKY = [
    b"0", b"-0", b"-0.0", b"-0e3", b"-0E+3", b"-0.0e-5", b"-0.000", b"[-0]", b"[0,-0]",
    b'{"a":-0}', b'{"a": -0}', b"[\t-0]", b"[\r-0.0]", b" -0 ", b"-1e-400", b"-1.5E-400",
    b"1e-400", b"-123e-330", b"-0.0000000000000000000000000000001",
    b"1e400", b"-1e400", b"1.7976931348623157e308", b"1.7976931348623159e308", b"1" + b"0" * 400,
    b"NaN", b"-NaN", b"Infinity", b"-Infinity", b'{"a":NaN}',
    b"9223372036854775807", b"9223372036854775808", b"18446744073709551615",
    b"18446744073709551616", b"-9223372036854775808", b"-9223372036854775809",
    b"100000000000000000000", b"-100000000000000000000", b"123456789012345678901234567890",
    b'{"seq":18446744073709551617}', b"[1234567890123456789,12345678901234567890]",
    b"0.1", b"1.0", b"1E2", b"2.2250738585072011e-308", b"4.9e-324", b"2.4703282292062327e-324",
    b"2.4703282292062328e-324", b"0.30000000000000004", b"123456789.123456789123456789",
    b'"\\ud800"', b'"\\udc00"', b'"a\\ud800b"', b'"\\ud83d\\ude00"', b'"\\ud800\\ud800"',
    b'"\\udc00\\ud800"', b'{"\\ud800":1}', b'"\xed\xa0\x80"', b'"\xff"', b'"\xc0\x80"',
    b'"\xe2\x82"', b"\xef\xbb\xbf{}", b"\xef\xbb\xbf", b'"\\u0000"', b'"a\x00"', b'"\x7f"',
    b'{"a":1,"a":2}', b'{"a":1,"b":2,"a":3}', b'{"a":{"x":1},"a":[2]}', b'{"__proto__":1}',
    b"", b" ", b"{}", b" {} ", b"{}\r", b"\t[]", b"1 2", b"[1,]", b"01", b"-", b"1.", b".5",
    b"+1", b"\x0c1", b"tru", b"nul", b'{"a"}', b'{"a":1,}', b'["x-0", "y: -0", ":,[-0"]',
    b'{"text":"call-0abc"}', b'{"t":"e-400","n":-5}', b'{"n":-12345678901234567890}',
    b"[" * 10 + b"]" * 10, b"[" * 511 + b"]" * 511, b"[" * 513 + b"]" * 513,
    b"[" * 1000 + b"]" * 1000, b"[" * 1100 + b"]" * 1100, b"[" * 5000, b'{"a":' * 600 + b"1" + b"}" * 600,
    b'"' + b"{" * 600 + b'"', b'"' + b"[" * 2000 + b'"',
]


@pytest.mark.parametrize("raw", TRICKY, ids=[repr(t[:30]) for t in TRICKY])
def test_fast_and_exact_parser_agree_on_tricky_text(raw: bytes) -> None:
    assert_agree(raw)


def test_known_lossless_verdicts() -> None:
    for raw, code in [(b"-0", "JSON_NEGATIVE_ZERO"), (b"-1e-400", "JSON_NEGATIVE_ZERO"),
                      (b"1e400", "JSON_NON_FINITE"), (b"NaN", "JSON_NON_FINITE"),
                      (b"\xef\xbb\xbf{}", "JSON_BOM"), (b'"\xff"', "JSON_INVALID_UTF8"),
                      (b"1 2", "JSON_SYNTAX"), (b"[" * 5000, "JSON_TOO_DEEP")]:
        for name in BACKENDS:
            with jsonparse.using(name), pytest.raises(ProblemError) as caught:
                jsonparse.loads_line(raw)
            assert caught.value.problem.code == code, (raw, name)
    for name in BACKENDS:
        with jsonparse.using(name):
            assert jsonparse.loads_line(b"18446744073709551617") == 18446744073709551617
            assert jsonparse.loads_line(b'"\\ud800"') == "\ud800"
            assert list(jsonparse.loads_line(b'{"b":1,"a":2,"b":3}').items()) == [("b", 3),
                                                                                 ("a", 2)]


def test_guard_finds_the_risky_spots() -> None:
    assert jsonparse.risky_offsets(b"-0") == [0]
    assert jsonparse.risky_offsets(b'{"a":-5}') == [5]
    assert jsonparse.risky_offsets(b'{"a": -1e-400}') == [6]
    assert jsonparse.risky_offsets(b'{"a":"call-0f"}') == []
    assert jsonparse.risky_offsets(b'{"a":12345678901234567890}') == [5]
    assert jsonparse.risky_offsets(b'{"a":1234567890123456789}') == []
    block = b'{"a":1}\n{"a":-1}\n{"b":2}\n[1,-0]\n'
    assert jsonparse.risky_lines(block) == {1, 3}
    assert not jsonparse.too_deep(b"[" * jsonparse.DEPTH_GUARD)
    assert jsonparse.too_deep(b"[" * (jsonparse.DEPTH_GUARD + 1))


def test_backend_selection() -> None:
    assert jsonparse.backend() == ("orjson" if HAVE_ORJSON else "json")
    with jsonparse.using("json"):
        assert jsonparse.fast_loads() is None
        assert jsonparse.loads_line(b'{"a":[1,2.5,null]}') == {"a": [1, 2.5, None]}
    with pytest.raises(ValueError):
        jsonparse.use("simdjson")


# -- generated texts ---------------------------------------------------------------------------

_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: "e" not in t),
    st.sampled_from(["-0", "-0.0", "-0e1", "1e400", "-1e-400", "1e-400", "-1.5", "2.5e-3",
                     "1E2", "-9223372036854775809", "18446744073709551616", "0", "-1",
                     "1.7976931348623157e308", "5e-324", "-5e-324", "123456789012345678901"]),
)
_STRINGS = st.one_of(
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.sampled_from(['"\\ud800"', '"\\udfff"', '"\\ud83d\\ude00"', '"x-0"', '": -0"',
                     '"\\u0041"', '"tab\\t"', '"\\/"']),
)
_SPACE = st.sampled_from(["", "", "", " ", "\t", "\r", "  "])


def _json_text(leaves: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        array = st.lists(st.tuples(_SPACE, children, _SPACE), max_size=4).map(
            lambda items: "[" + ",".join(a + c + b for a, c, b in items) + "]")
        members = st.lists(st.tuples(_STRINGS, _SPACE, children), max_size=4).map(
            lambda items: "{" + ",".join(k + s + ":" + v for k, s, v in items) + "}")
        return st.one_of(array, members)

    return st.recursive(leaves, extend, max_leaves=12)


_TEXTS = _json_text(st.one_of(_NUMBERS, _STRINGS, st.sampled_from(["true", "false", "null"])))


@settings(max_examples=300, deadline=None)
@given(_SPACE, _TEXTS, _SPACE)
def test_fast_and_exact_parser_agree_on_generated_text(before: str, text: str,
                                                       after: str) -> None:
    assert_agree((before + text + after).encode("utf-8", "surrogatepass"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(_TEXTS, st.sampled_from(["", "{", "-0", "\ufeff{}"])), max_size=8))
def test_a_log_reads_the_same_with_either_backend(tmp_path_factory: pytest.TempPathFactory,
                                                  lines: list[str]) -> None:
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    events = [f'{{"type":"plan/mode","seq":{i},"time":0,"data":{text}}}' if text.startswith(
        ("{", "[")) and len(text) > 2 else text for i, text in enumerate(lines)]
    path.write_bytes("\n".join(events).encode("utf-8", "surrogatepass") + b"\n")
    results = []
    for name in BACKENDS:
        with jsonparse.using(name):
            results.append((_read(path), validate_path(path, Level.LOAD),
                            validate_path(path, Level.APPEND), fold_path(path)))
    for other in results[1:]:
        assert _read_same(other[0], results[0][0])
        assert other[1:] == results[0][1:]


def _read(path: Path) -> tuple[str, Any]:
    reader = LogReader(path, tolerate_torn_tail=False)
    try:
        return "events", (list(reader.pairs()), reader.result)
    except ProblemError as exc:
        return "error", exc.problem


def _read_same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return bool(a[1] == b[1])
    pairs_a, result_a = a[1]
    pairs_b, result_b = b[1]
    return (len(pairs_a) == len(pairs_b) and result_a == result_b
            and all(la == lb and same(ea, eb)
                    for (la, ea), (lb, eb) in zip(pairs_a, pairs_b, strict=True)))


def test_floats_round_trip_identically() -> None:
    """orjson and Python's float() round every decimal to the same double."""
    import random

    rng = random.Random(5)
    for _ in range(2000):
        mantissa = rng.randint(1, 10**rng.randint(1, 20))
        exponent = rng.randint(-330, 310)
        text = f"{mantissa}e{exponent}".encode()
        exact = outcome(jsonparse.exact_loads, text)
        if exact[0] == "value":
            assert math.isfinite(exact[1])
        assert_agree(text)
