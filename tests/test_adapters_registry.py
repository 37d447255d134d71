"""The adapter registry, the hub format, conversions, budgets, purity and the result schemas
(spec chapter ``adapters/index``)."""

from __future__ import annotations

import builtins
import dataclasses
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.adapters import (
    BUILTIN,
    FORMATS,
    REGISTRY,
    AdapterError,
    AdaptResult,
    ExportResult,
    Registry,
    adapt,
    convert,
    default_registry,
    export,
)
from dshkit.adapters.budget import check_budgets, check_seed_size, usage_of
from dshkit.reference.memory import open_provider

MEM0 = BUILTIN[0]
ENTRY = {"track": "user", "scope": "user-global", "text": "Prefers pnpm", "tags": ["tooling"],
         "source": "mem0"}


def as_dict(value: object) -> dict[str, Any]:
    assert isinstance(value, dict)
    return value


def _adapter(**changes: Any) -> Any:
    return dataclasses.replace(MEM0, **{"id": "x-test", **changes})


# -- registry (ADP-REG-*) -----------------------------------------------------------------------


def test_builtin_formats() -> None:
    assert FORMATS == ("mem0", "hermes", "hermes-bullets", "claude-md", "mcp-graph", "dshkit")
    listed = REGISTRY.list()
    assert [d["id"] for d in listed] == sorted(FORMATS)
    for descriptor in listed:
        assert not schemas.errors("adapters/v1/adapter.json", descriptor)


@pytest.mark.parametrize(("changes", "key"), [
    ({"id": "a-"}, "id"), ({"id": "a--b"}, "id"), ({"id": "-a"}, "id"), ({"id": "A"}, "id"),
    ({"id": ""}, "id"), ({"name": " "}, "name"), ({"version": ""}, "version"),
    ({"description": 3}, "description"), ({"export_format": ""}, "export_format"),
    ({"import_formats": ()}, "import_formats"), ({"import_formats": ("",)}, "import_formats"),
    ({"adapt": None}, "adapt"), ({"export": "no"}, "export")])
def test_registration_is_checked(changes: dict[str, Any], key: str) -> None:
    with pytest.raises(AdapterError) as caught:
        Registry().register(_adapter(**changes))
    assert caught.value.code == "ADAPTER_INVALID"
    assert caught.value.details["key"] == key


def test_register_dispose_and_duplicates() -> None:
    registry = Registry()
    first = _adapter(id="a1-b2")
    dispose = registry.register(first)
    with pytest.raises(AdapterError) as caught:
        registry.register(_adapter(id="a1-b2"))
    assert caught.value.code == "ADAPTER_INVALID"
    dispose()
    dispose()  # idempotent
    second = _adapter(id="a1-b2")
    registry.register(second)
    dispose()  # removes only the same object
    assert registry.get("a1-b2") is second


def test_unknown_format() -> None:
    with pytest.raises(AdapterError) as caught:
        adapt("letta", "{}")
    assert caught.value.code == "ADAPTER_NOT_FOUND"
    assert caught.value.details["adapterId"] == "letta"
    assert caught.value.details["key"] == "format"
    assert not schemas.errors("adapters/v1/error.json", caught.value.to_json())


def test_adapt_output_is_checked() -> None:
    def bad_tags(payload: Any, *, options: Any = None) -> AdaptResult:
        return AdaptResult([{**ENTRY, "tags": [" padded"]}])

    def bad_shape(payload: Any, *, options: Any = None) -> Any:
        return {"entries": []}

    def extra_member(payload: Any, *, options: Any = None) -> AdaptResult:
        return AdaptResult([{**ENTRY, "workspaceKey": "/x", "colour": 1}])

    registry = Registry()
    registry.register(_adapter(id="bad-tags", adapt=bad_tags))
    registry.register(_adapter(id="bad-shape", adapt=bad_shape))
    registry.register(_adapter(id="extra", adapt=extra_member))
    for ident, pointer in (("bad-tags", "/entries/0/tags"), ("bad-shape", None),
                           ("extra", "/entries/0")):
        with pytest.raises(AdapterError) as caught:
            registry.adapt(ident, "")
        assert caught.value.code == "ADAPTER_OUTPUT", ident
        if pointer:
            assert caught.value.details["pointer"] == pointer


def test_foreign_exceptions_become_payload_errors() -> None:
    def broken(payload: Any, *, options: Any = None) -> AdaptResult:
        raise KeyError("memory")

    registry = Registry()
    registry.register(_adapter(id="broken", adapt=broken, export=broken))
    for call in (lambda: registry.adapt("broken", {}), lambda: registry.export("broken", [])):
        with pytest.raises(AdapterError) as caught:
            call()
        assert caught.value.code == "ADAPTER_PAYLOAD"
        assert caught.value.details["format"] == "broken"


def test_errors_of_builtin_adapters_name_their_format() -> None:
    with pytest.raises(AdapterError) as caught:
        adapt("mem0", "not json")
    assert caught.value.details["format"] == "mem0"
    assert caught.value.details["line"] == 1
    assert not schemas.errors("adapters/v1/error.json", caught.value.to_json())


def test_strict_refuses_losses_with_the_report() -> None:
    with pytest.raises(AdapterError) as caught:
        adapt("mem0", [{"memory": "a", "user_id": "u"}], {"strict": True})
    error = caught.value.to_json()
    assert error["code"] == "ADAPTER_LOSS"
    assert error["details"]["losses"][0]["field"] == "user_id"
    assert not schemas.errors("adapters/v1/error.json", error)
    with pytest.raises(AdapterError):
        export("hermes", [ENTRY], {"strict": True})
    with pytest.raises(AdapterError) as bad:
        adapt("mem0", [], {"strict": "yes"})
    assert bad.value.details["key"] == "strict"


# -- results and schemas --------------------------------------------------------------------------


def test_results_satisfy_their_schemas() -> None:
    read = adapt("claude-md", "# T\n- a @b.md\n- \u200bz")
    assert not schemas.errors("adapters/v1/adapt-result.json", read.to_json())
    for fmt in FORMATS:
        written = export(fmt, [ENTRY], {"now": 0} if fmt in ("mem0", "dshkit") else None)
        assert isinstance(written, ExportResult)
        assert not schemas.errors("adapters/v1/export-result.json", written.to_json()), fmt
        assert not schemas.errors("adapters/v1/loss-report.json",
                                  [x.to_json() for x in written.losses])


def test_schema_vocabularies_match_the_code() -> None:
    from dshkit.adapters import LOSS_KINDS
    from dshkit.adapters.errors import CODES

    assert schemas.load("adapters/v1/loss-report.json")["$defs"]["kind"]["enum"] == list(
        LOSS_KINDS)
    assert set(schemas.load("adapters/v1/error.json")["properties"]["code"]["enum"]) == set(
        CODES)


def test_mem0_fixtures_satisfy_the_format_schemas() -> None:
    output = as_dict(export("mem0", [ENTRY], {"now": 0}).output)
    assert not schemas.errors("adapters/v1/mem0-memories.json", output)
    assert not schemas.errors("adapters/v1/mem0-memories.json", output["results"])
    facts = export("mem0", [ENTRY], {"now": 0, "shape": "facts"}).output
    assert not schemas.errors("adapters/v1/mem0-facts.json", facts)
    assert schemas.errors("adapters/v1/mem0-memories.json",
                          {"messages": [{"role": "user", "content": "x"}]})
    assert schemas.errors("adapters/v1/mem0-memories.json", [{"role": "user", "content": "x"}])


def test_mcp_lines_satisfy_their_schema() -> None:
    text = export("mcp-graph", [ENTRY, {**ENTRY, "text": "a r b",
                                        "tags": ["relation:r", "from:a", "to:b"]}]).output
    assert isinstance(text, str)
    for line in text.split("\n"):
        assert not schemas.errors("adapters/v1/mcp-memory-line.json", json.loads(line))
    assert schemas.errors("adapters/v1/mcp-memory-line.json", {"type": "entity", "name": "a"})


# -- hub (ADP-HUB-*), conversion (ADP-GEN-007), budgets (ADP-GEN-008) ------------------------------


def test_hub_round_trip_is_lossless() -> None:
    entries = [ENTRY, {"track": "agent", "scope": "workspace", "text": "b\nc", "tags": [],
                       "source": "dshkit"}]
    envelope = export("dshkit", entries, {"now": 1700000000000}).output
    assert not schemas.errors("memory/v1/export-envelope.json#/$defs/dshkitExport", envelope)
    read = adapt("dshkit", json.dumps(envelope))
    assert read.entries == entries and read.losses == []


def test_hub_reads_store_exports_and_dsh_memento_envelopes(tmp_path: Path) -> None:
    provider = open_provider(tmp_path / "m.db", write_policy="auto")
    write = {"agent": {"session": {"id": "s", "header": {"cwd": "/w"}}}}
    provider.seed([ENTRY, {**ENTRY, "track": "agent", "scope": "workspace"}], write)
    envelope = provider.export()
    stored = provider.list_entries()
    provider.close()
    assert [e["text"] for e in adapt("dshkit", envelope).entries] == ["Prefers pnpm"] * 2
    again = as_dict(export("dshkit", stored, {"now": 0}).output)
    assert again["entries"] == stored
    legacy = dict(envelope, plugin="dsh-memento")
    legacy["entries"] = [{k: v for k, v in e.items() if k != "sessionId"}
                         for e in envelope["entries"]]
    assert len(adapt("dshkit", legacy).entries) == 2


def test_hub_empty_large_and_refused_envelopes() -> None:
    base = as_dict(export("dshkit", [], {"now": 0}).output)
    assert adapt("dshkit", base).entries == []
    many = [dict(ENTRY, text=f"m{i}") for i in range(1003)]
    big = as_dict(export("dshkit", many, {"now": 0, "budgets": {
        "user": {"userGlobal": 10**6, "workspace": 1}, "agent": {"userGlobal": 1,
                                                                 "workspace": 1}}}).output)
    assert len(adapt("dshkit", big).entries) == 1003
    big["entries"][1001]["text"] = " "
    with pytest.raises(AdapterError) as caught:
        adapt("dshkit", big)
    assert caught.value.details["pointer"] == "/entries/1001/text"
    with pytest.raises(AdapterError) as unknown:
        adapt("dshkit", {**base, "schema": "memory-export-v2"})
    assert unknown.value.details["pointer"] == "/schema"


def test_hub_export_refuses_over_budget() -> None:
    with pytest.raises(AdapterError) as caught:
        export("dshkit", [dict(ENTRY, text="x" * 2001)], {"now": 0})
    details = caught.value.details
    assert caught.value.code == "ADAPTER_BUDGET"
    assert (details["track"], details["scope"], details["used"], details["limit"],
            details["needed"], details["unit"]) == ("user", "user-global", 0, 2000, 2001,
                                                    "units")


def test_budget_helpers() -> None:
    usage = usage_of([dict(ENTRY, text="😀")])
    assert usage == {("user", "user-global"): 2}
    check_budgets(usage, {("user", "user-global"): 10}, {("user", "user-global"): 8})
    with pytest.raises(AdapterError):
        check_budgets(usage, {("user", "user-global"): 10}, {("user", "user-global"): 9})
    check_seed_size(1000)
    with pytest.raises(AdapterError) as caught:
        check_seed_size(1001)
    assert caught.value.details["unit"] == "entries"


def test_convert_through_the_hub() -> None:
    done = convert("mem0", "hermes", [{"memory": "Likes tea", "user_id": "ana"}])
    assert done.result.output == {"MEMORY.md": "", "USER.md": "Likes tea"}
    assert [x.field for x in done.read_losses] == ["user_id"]
    assert [x.kind for x in done.result.losses] == ["source-changed"]
    with pytest.raises(AdapterError) as caught:
        convert("mem0", "hermes", [{"memory": "Likes tea"}], strict=True)
    assert caught.value.details["format"] == "hermes"


# -- purity (ADP-GEN-001) ---------------------------------------------------------------------------


def test_adapters_are_pure(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an adapter touched a file or the network")

    samples = {"mem0": [{"memory": "a"}], "hermes": {"MEMORY.md": "a"},
               "hermes-bullets": "- a", "claude-md": "- a @b.md",
               "mcp-graph": '{"type":"relation","from":"a","to":"b","relationType":"r"}',
               "dshkit": export("dshkit", [ENTRY], {"now": 0}).output}
    registry = default_registry()
    monkeypatch.setattr(builtins, "open", forbidden)
    monkeypatch.setattr(socket, "socket", forbidden)
    for fmt, payload in samples.items():
        first = registry.adapt(fmt, payload, {"now": 0} if fmt == "mem0" else None)
        second = registry.adapt(fmt, payload, {"now": 0} if fmt == "mem0" else None)
        assert first.to_json() == second.to_json()
        options = {"now": 0} if fmt in ("mem0", "dshkit") else None
        assert (registry.export(fmt, first.entries, options).to_json()
                == registry.export(fmt, first.entries, options).to_json())
