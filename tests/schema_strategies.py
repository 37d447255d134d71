"""Hypothesis strategies for the leaves of an inlined JSON Schema (draft 2020-12).

Covers the keywords that the session schemas and the pydantic models' own JSON schemas use
at their leaves: ``type`` (one or a list), ``const``, ``enum``, ``minimum``/``maximum`` (and
the exclusive forms), ``minLength``/``maxLength``, ``pattern``, open objects
(``properties``, ``required``, ``additionalProperties``) and arrays (``items``,
``minItems``/``maxItems``). A keyword it does not know only narrows the result: every draw is
filtered by a real validator of the whole schema, so a draw that does not fit is never
returned. Strings never hold U+0000 or lone surrogates (they are not portable JSON text).
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

Schema = dict[str, Any]

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
#: Generated containers get at most this many members beyond what the schema requires.
EXTRA_MEMBERS = 2

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
_cache: dict[str, st.SearchStrategy[Any]] = {}


def from_schema(schema: Schema | bool) -> st.SearchStrategy[Any]:
    """Instances of ``schema`` (a self-contained schema: no ``$ref``)."""
    key = json.dumps(schema, sort_keys=True)
    if key not in _cache:
        _cache[key] = _build(schema)
    return _cache[key]


def _build(schema: Schema | bool) -> st.SearchStrategy[Any]:
    if schema is False:
        return st.nothing()
    if schema is True:
        return json_values()
    if "const" in schema:
        base: st.SearchStrategy[Any] = st.just(schema["const"])
    elif "enum" in schema:
        base = st.sampled_from(schema["enum"])
    else:
        declared = schema.get("type", list(JSON_TYPES))
        kinds = [declared] if isinstance(declared, str) else list(declared)
        if "integer" in kinds and "number" in kinds:
            kinds.remove("integer")
        base = st.one_of([_of_type(kind, schema) for kind in kinds])
    return base.filter(Draft202012Validator(schema).is_valid)


def _of_type(kind: str, schema: Schema) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return _integers(schema)
    if kind == "number":
        return st.one_of(_integers(schema), _floats(schema))
    if kind == "string":
        return _strings(schema)
    if kind == "array":
        return _arrays(schema)
    if kind == "object":
        return _objects(schema)
    return st.nothing()


def _bound(schema: Schema, inclusive: str, exclusive: str, step: int) -> int | None:
    value = schema.get(inclusive)
    if isinstance(schema.get(exclusive), int | float):
        value = schema[exclusive] + step if value is None else value
    return None if value is None else (math.ceil(value) if step > 0 else math.floor(value))


def _integers(schema: Schema) -> st.SearchStrategy[int]:
    low = _bound(schema, "minimum", "exclusiveMinimum", 1)
    high = _bound(schema, "maximum", "exclusiveMaximum", -1)
    return st.integers(min_value=low, max_value=high)


def _floats(schema: Schema) -> st.SearchStrategy[float]:
    low, high = schema.get("minimum"), schema.get("maximum")
    return st.floats(min_value=low, max_value=high, allow_nan=False,
                     allow_infinity=False).map(lambda n: n if n != 0 else 0.0)


def _strings(schema: Schema) -> st.SearchStrategy[str]:
    low = int(schema.get("minLength", 0))
    high = int(schema.get("maxLength", low + 12))
    if "pattern" in schema:
        pattern: str = schema["pattern"]
        return st.from_regex(pattern).filter(
            lambda s: "\x00" not in s and low <= len(s) <= high)
    return st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
                   min_size=low, max_size=high)


def _arrays(schema: Schema) -> st.SearchStrategy[list[Any]]:
    low = int(schema.get("minItems", 0))
    high = min(int(schema.get("maxItems", low + EXTRA_MEMBERS)), low + EXTRA_MEMBERS)
    items = schema.get("items", True)
    if items is False:
        return st.just([]) if low == 0 else st.nothing()
    return st.lists(from_schema(items), min_size=low, max_size=high)


def _objects(schema: Schema) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Schema | bool] = schema.get("properties", {})
    required = set(schema.get("required", []))
    fixed = st.fixed_dictionaries(
        {name: from_schema(sub) for name, sub in properties.items() if name in required},
        optional={name: from_schema(sub) for name, sub in properties.items()
                  if name not in required and sub is not False},
    )
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return fixed
    others = st.dictionaries(_TEXT.filter(lambda k: k not in properties), from_schema(extra),
                             max_size=EXTRA_MEMBERS)
    return st.tuples(fixed, others).map(lambda pair: {**pair[1], **pair[0]})


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value, small."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(),
        st.floats(allow_nan=False, allow_infinity=False).map(lambda n: n if n != 0 else 0.0),
        _TEXT,
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=EXTRA_MEMBERS),
                                st.dictionaries(_TEXT, inner, max_size=EXTRA_MEMBERS)),
        max_leaves=6,
    )
