"""Hypothesis strategies for the memory adapters (``dshkit.conformance.strategies_adapters``).

- :func:`entries`: lists of valid entry inputs of every shape (any bucket, tags, source, texts
  with line breaks, ``§`` lines, surrounding whitespace, CR, emoji, Markdown syntax), the input
  of round-trip properties: whatever an export writes, reading it back gives what its loss
  report predicts.
- :func:`representable`: entries a given format holds exactly (its export reports nothing),
  so that round trips hit the lossless case often.
- :func:`markdown_texts`, :func:`any_text`, :func:`any_json`: inputs for reader fuzzing and for
  the CLAUDE.md update property.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from .memory_model import BUCKETS, js_trim, normalise_tags

__all__ = ["any_json", "any_text", "entries", "entry", "markdown_texts", "representable",
           "tags", "texts"]

_PIECES = ("Use pnpm", "never npm", "§", "# heading", "- item", "* star", "1. one", "```",
           "~~~", "@docs/a.md", "`code @x`", "---", "<!-- dshkit:end -->", "name: value",
           "  indented", "\t tab", "café", "日本語", "😀", "§ 4.2", "a", "b", " ", "", "|a|b|",
           "entity:x", "> quote", "[link](u)", "\u00a0nbsp", "\r", "\u2028")
_WORDS = ("tooling", "Project conventions", "ci", "entity:alice", "type:person",
          "relation:knows", "from:a", "to:b", "agent/workspace", "user/user-global", "Deploy",
          "café", "😀", "x" * 32, "h1", "h2", "h3")
_SOURCES = ("dshkit", "mem0", "hermes", "hermes-bullets", "claude-md", "mcp-graph", "import")


def _valid_text(text: str) -> bool:
    if js_trim(text) == "":
        return False
    return not any((ord(c) < 0x20 and c not in "\t\n\r") or ord(c) == 0x7F for c in text)


def texts() -> st.SearchStrategy[str]:
    """Valid entry texts (MEM-ENT-003), biased towards what Markdown and Hermes care about."""
    line = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map(" ".join)
    joined = st.lists(line, min_size=1, max_size=4).flatmap(
        lambda lines: st.sampled_from(("\n", "\n\n", "\r\n")).map(lambda sep: sep.join(lines)))
    free = st.text(st.characters(codec="utf-8", blacklist_characters="\x00"), min_size=1,
                   max_size=30)
    return st.one_of(joined, joined, free).filter(_valid_text)


def tags() -> st.SearchStrategy[list[str]]:
    """Normalised tag lists (MEM-ENT-004)."""
    word = st.one_of(st.sampled_from(_WORDS),
                     st.text(st.characters(min_codepoint=0x21, max_codepoint=0x2FF,
                                           blacklist_characters="\x7f\xa0"),
                             min_size=1, max_size=12))
    return st.lists(word, max_size=8, unique=True).map(lambda ts: normalise_tags(ts, "/tags"))


def entry(*, text: st.SearchStrategy[str] | None = None,
          tag_lists: st.SearchStrategy[list[str]] | None = None,
          buckets: tuple[tuple[str, str], ...] = BUCKETS,
          sources: tuple[str, ...] = _SOURCES) -> st.SearchStrategy[dict[str, Any]]:
    """One entry input with every member present."""
    return st.builds(
        lambda bucket, body, tag_list, source: {"track": bucket[0], "scope": bucket[1],
                                                "text": body, "tags": tag_list,
                                                "source": source},
        st.sampled_from(buckets), text if text is not None else texts(),
        tag_lists if tag_lists is not None else tags(), st.sampled_from(sources))


def entries(max_size: int = 6) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(entry(), max_size=max_size)


def _clean_line() -> st.SearchStrategy[str]:
    word = st.sampled_from(("Use pnpm", "§ 4.2", "café", "日本語", "😀", "a:b", "run `make`",
                            "x", "@docs/a.md", "- nested", "# not a heading", "1. step"))
    return st.lists(word, min_size=1, max_size=3).map(" ".join)


def _clean_text() -> st.SearchStrategy[str]:
    """Texts every Markdown format and Hermes keep as they are: no surrounding whitespace, no
    CR, no blank line at the end, first line a word."""
    first = st.sampled_from(("Use pnpm", "Tests", "café 😀", "Deploys"))
    rest = st.lists(st.one_of(_clean_line(), st.just("")), max_size=3)
    return st.builds(lambda a, b: "\n".join([a, *b]).rstrip("\n"), first, rest)


def representable(fmt: str, max_size: int = 5) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Entries that format ``fmt`` holds exactly, with its default options."""
    if fmt in ("mem0", "dshkit"):
        return entries(max_size)
    if fmt == "hermes":
        item = entry(text=_clean_text(), tag_lists=st.just([]),
                     buckets=(("user", "user-global"), ("agent", "user-global")),
                     sources=("hermes",))
        return st.lists(item, max_size=max_size, unique_by=lambda e: (e["track"], e["text"]))
    if fmt == "hermes-bullets":
        section = st.sampled_from(("Tools", "About the user", "café")).map(lambda t: [t])
        return st.lists(entry(text=_clean_text(), tag_lists=st.one_of(st.just([]), section),
                              sources=("hermes-bullets",)), max_size=max_size)
    if fmt == "claude-md":
        path = st.lists(st.sampled_from(("Project", "Architecture", "Ops", "日本語")),
                        max_size=3, unique=True)
        return st.lists(entry(text=_clean_text(), tag_lists=path,
                              buckets=(("agent", "workspace"),), sources=("claude-md",)),
                        max_size=max_size)
    if fmt == "mcp-graph":
        return _graph_entries(max_size)
    raise ValueError(fmt)


def _graph_entries(max_size: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    name = st.sampled_from(("alice", "api-service", "bob", "张伟"))
    kinds = {"alice": "person", "api-service": "repo", "bob": "", "张伟": "人"}

    def observation(n: str, o: str) -> dict[str, Any]:
        tag_list = [f"entity:{n}"] + ([f"type:{kinds[n]}"] if kinds[n] else [])
        return {"track": "user", "scope": "user-global", "text": f"{n}: {o}", "tags": tag_list,
                "source": "mcp-graph"}

    def relation(a: str, r: str, b: str) -> dict[str, Any]:
        return {"track": "user", "scope": "user-global", "text": f"{a} {r} {b}",
                "tags": [f"relation:{r}", f"from:{a}", f"to:{b}"], "source": "mcp-graph"}

    item = st.one_of(
        st.builds(observation, name, st.sampled_from(("Prefers pnpm", "Rust, Axum", "", "a: b"))),
        st.builds(relation, name, st.sampled_from(("knows", "maintains")), name))
    return st.lists(item, max_size=max_size)


def markdown_texts() -> st.SearchStrategy[str]:
    """Markdown-like documents of random lines (for the reader and the update property)."""
    line = st.one_of(st.sampled_from((*_PIECES, "", "## Section", "```sh", "  - nested",
                                      "<!-- dshkit:begin -->", "\ufeff")),
                     st.text(max_size=12))
    return st.lists(line, max_size=12).flatmap(
        lambda lines: st.sampled_from(("\n", "\r\n")).map(lambda sep: sep.join(lines)))


def any_text() -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=60), markdown_texts(),
                     any_json().map(json.dumps))


def any_json() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                        st.text(max_size=10), st.sampled_from(("memory", "results", "facts",
                                                               "entity", "relation")))
    keys = st.sampled_from(("memory", "results", "facts", "messages", "metadata", "tags",
                            "type", "name", "entityType", "observations", "from", "to",
                            "relationType", "role", "content", "categories", "track", "scope",
                            "source", "text", "MEMORY.md", "USER.md", "x"))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=20)
