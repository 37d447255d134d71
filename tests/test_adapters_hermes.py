"""Hermes adapter against an independent model of Hermes's own reader (spec chapter
``adapters/hermes``): what dshkit reads is what Hermes reads, and what dshkit writes Hermes
reads back as the same entries."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.adapters import adapt, export
from dshkit.conformance.strategies_adapters import representable

SETTINGS = settings(max_examples=40, deadline=None)


def hermes_reads(text: str) -> list[str]:
    """hermes-agent's reader as documented: split on the delimiter, strip, drop empty parts and
    later duplicates (files are opened in Python text mode: CR LF and CR become LF)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[str] = []
    for part in text.split("\n§\n"):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


pieces = st.lists(st.sampled_from(("a", "b", "§", "\n", "\r\n", " ", "x y", "§ 1", "😀")),
                  max_size=14).map("".join)


@SETTINGS
@given(text=pieces)
def test_reads_what_hermes_reads(text: str) -> None:
    read = adapt("hermes", text, {"target": "memory"})
    assert [e["text"] for e in read.entries] == hermes_reads(text)
    kinds = {x.kind for x in read.losses}
    assert ("line-endings" in kinds) == ("\r" in text)


@SETTINGS
@given(items=representable("hermes"))
def test_hermes_reads_the_export_back(items: list[dict[str, Any]]) -> None:
    files = export("hermes", items).output
    assert isinstance(files, dict)
    for name, track in (("MEMORY.md", "agent"), ("USER.md", "user")):
        assert hermes_reads(files[name]) == [e["text"] for e in items if e["track"] == track]


def test_spec_example_and_limits() -> None:
    text = ("User's project is a Rust web service at ~/code/api (Axum + SQLx)\n§\nThis machine "
            "runs Ubuntu 22.04; Docker and Podman are installed\n§\nDeploys go through "
            "`make release`;\nnever push tags by hand")
    read = adapt("hermes", {"MEMORY.md": text})
    assert len(read.entries) == 3 and read.losses == []
    assert read.entries[2]["text"].endswith("`make release`;\nnever push tags by hand")
    assert export("hermes", read.entries).output == {"MEMORY.md": text, "USER.md": ""}
    # Hermes counts the joined text, delimiters included, in code points.
    exact = [{"track": "agent", "scope": "user-global", "text": "x" * 2198, "source": "hermes"}]
    files = export("hermes", exact).output
    assert isinstance(files, dict) and len(files["MEMORY.md"]) == 2198
