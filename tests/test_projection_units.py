"""Unit tests of the session reference projection beyond the vectors."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from builders import user_message

from dshkit.reference.projection import (
    PROMPT_PREFIX,
    PROMPT_SUFFIX,
    ReferenceConfig,
    SessionReferenceError,
    SurfaceSnapshot,
    head_tail,
    list_candidates,
    prepare,
    snapshots_resolver,
    tag_safe,
    utf8_len,
)

SNAP = SurfaceSnapshot({"id": "one"}, 0, (user_message(0, "hello"),))


def test_resolver_is_the_only_way_to_a_source() -> None:
    asked: list[str] = []

    def read(session_id: str) -> SurfaceSnapshot:
        asked.append(session_id)
        if session_id != "one":
            raise LookupError(f'session "{session_id}" is not available to this user')
        return SNAP

    with pytest.raises(SessionReferenceError) as info:
        prepare("t", [], [{"sessionId": "one"}, {"sessionId": "secret"}], read)
    assert info.value.code == "SESSION_REFERENCE_READ_FAILED"
    assert info.value.message == ("failed to read referenced session: session \"secret\" is "
                                  "not available to this user")
    assert asked == ["one", "secret"]


def test_no_reference_reads_nothing_and_detaches_content() -> None:
    content = [{"type": "text", "text": "x"}]

    def read(session_id: str) -> SurfaceSnapshot:
        raise AssertionError("must not be called")

    prepared = prepare("t", content, [], read)
    assert prepared.additional_context is None
    assert prepared.content == content and prepared.content is not content
    prepared.content[0]["text"] = "changed"
    assert content[0]["text"] == "x"


def test_cancellation_wins_over_read_failure() -> None:
    cancel = threading.Event()

    def read(session_id: str) -> SurfaceSnapshot:
        cancel.set()
        raise OSError("interrupted")

    with pytest.raises(SessionReferenceError) as info:
        prepare("t", [], [{"sessionId": "one"}], read, cancel=cancel)
    assert info.value.code == "SESSION_REFERENCE_CANCELLED"
    cancel2 = threading.Event()
    cancel2.set()
    with pytest.raises(SessionReferenceError) as info:
        prepare("t", [], [{"sessionId": "one"}], snapshots_resolver({"one": SNAP}),
                cancel=cancel2)
    assert info.value.code == "SESSION_REFERENCE_CANCELLED"


def test_one_context_message_for_all_sources() -> None:
    snaps = {"one": SNAP, "two": SurfaceSnapshot({"id": "two", "cwd": "/w"}, 3,
                                                 (user_message(0, "<b>bold</b>"),))}
    prepared = prepare("t", [], [{"sessionId": "two", "label": "Two"}, {"sessionId": "one"}],
                       snapshots_resolver(snaps), new_id=lambda: "ctx")
    context = prepared.additional_context
    assert context is not None and context["id"] == "ctx" and context["role"] == "user"
    text = context["content"][0]["text"]
    assert text.startswith(PROMPT_PREFIX) and text.endswith(PROMPT_SUFFIX)
    assert text.count("<referenced-sessions>") == 1 and "<b>" not in text
    refs = context["source"]["references"]
    assert [(r["sessionId"], r["inputIndex"]) for r in refs] == [("two", 0), ("one", 1)]
    assert list(refs[0]) == ["sessionId", "label", "capturedThroughSeq", "compacted",
                             "originalMessages", "retainedMessages", "omittedMessages",
                             "omittedBytes", "truncated", "inputIndex"]


def test_budget_failure_of_one_source_fails_all() -> None:
    big = SurfaceSnapshot({"id": "big-" + "x" * 100}, 0, (user_message(0, "y"),))
    with pytest.raises(SessionReferenceError) as info:
        prepare("t", [], [{"sessionId": "one"}, {"sessionId": "big"}],
                snapshots_resolver({"one": SNAP, "big": big}),
                ReferenceConfig(max_reference_bytes=100))
    assert info.value.code == "SESSION_REFERENCE_BUDGET_EXCEEDED"


@pytest.mark.parametrize("kwargs", [{"max_references": 0}, {"max_references": 4},
                                    {"candidate_limit": -1}, {"max_reference_bytes": 2 ** 53},
                                    {"max_reference_bytes": 1.5}])
def test_invalid_config(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SessionReferenceError) as info:
        ReferenceConfig(**kwargs)
    assert info.value.code == "SESSION_REFERENCE_INVALID_CONFIG"


def test_lone_surrogates_are_measured_as_replacement_characters() -> None:
    assert utf8_len("a\ud800b") == 5
    assert tag_safe("\ud800") == '"\\ud800"'
    assert head_tail("a\ud800bcdef", 4, 0).text == "a\ufffd"


def test_failed_title_read_falls_back_to_the_id() -> None:
    def title(session_id: str) -> str | None:
        raise OSError("title store down")

    found = list_candidates([{"id": "a", "createdAt": 1}], {"id": "t"}, title_of=title)
    assert [c.label for c in found] == ["a"]
