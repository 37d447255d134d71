"""The values the kit keeps of its own so that it runs without the reference
(:mod:`dshkit.conformance.spec_constants`, the memory model's buckets and tag rules) still
equal the reference's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dshkit.conformance import memory_model, spec_constants
from dshkit.reference.memory.inputs import BUCKETS, normalise_tags
from dshkit.reference.projection.errors import CODES as REFERENCE_CODES
from dshkit.reference.query import CODES as QUERY_CODES
from dshkit.reference.text import WHITESPACE as ES_WHITESPACE
from dshkit.reference.text import js_trim


def test_closed_code_sets_equal_the_references() -> None:
    assert tuple(QUERY_CODES) == spec_constants.QUERY_ERROR_CODES
    assert tuple(REFERENCE_CODES) == spec_constants.REFERENCE_ERROR_CODES


def test_whitespace_equals_the_references() -> None:
    assert sorted(spec_constants.ES_WHITESPACE) == sorted(ES_WHITESPACE)  # the same set


def test_memory_buckets_equal_the_references() -> None:
    assert tuple(memory_model.BUCKETS) == tuple(BUCKETS)


_TAG_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x2FF,
                           blacklist_characters="\x7f\xa0")


@given(st.text(st.characters(codec="utf-8")))
def test_trim_equals_the_references(text: str) -> None:
    assert memory_model.js_trim(text) == js_trim(text)


@given(st.lists(st.text(_TAG_CHARS, min_size=1, max_size=12), max_size=8, unique=True))
def test_tag_normalisation_equals_the_references_on_what_the_strategies_draw(
        tags: list[str]) -> None:
    assert memory_model.normalise_tags(tags, "/tags") == normalise_tags(tags, "/tags")
