"""Pending memory proposals (spec memory/proposals, MEM-PRO-*): the reference provider, the
as-is import of another store's records, and ``dshkit memory proposals`` as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import dshkit
from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory import proposals as pro
from dshkit.reference.memory.provider import Provider
from dshkit.reference.memory.snapshot import HEADER

WS = "/home/ana/shop"


def _write(session: str = "s-7", cwd: str = WS, preset: str = "Coder") -> dict[str, Any]:
    return {"agent": {"session": {"id": session, "header": {"cwd": cwd, "agentPreset": preset}}}}


WRITE = _write()
PROPOSAL = {"kind": "compaction-summary", "track": "agent", "scope": "workspace",
            "text": "Run the tests with nox"}


class Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"00000000-0000-4000-8000-{self.n:012x}"


def _provider(path: Path, **kwargs: Any) -> Provider:
    clock = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    return open_provider(path, clock=lambda: next(clock), ids=Ids(), **kwargs)


def _code(call: Any) -> MemoryProtocolError:
    with pytest.raises(MemoryProtocolError) as info:
        call()
    return info.value


def _actions(provider: Provider) -> list[str]:
    return [row["action"] for row in reversed(provider.audit_list(1000))]


# -- propose --------------------------------------------------------------------------------------


def test_propose_is_idempotent_per_session_and_kind(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        first = provider.propose(PROPOSAL, WRITE)
        assert first["created"] is True
        proposal = first["proposal"]
        assert proposal == {
            "id": "00000000-0000-4000-8000-000000000001", "kind": "compaction-summary",
            "track": "agent", "scope": "workspace", "workspaceKey": WS, "agentKey": "coder",
            "text": "Run the tests with nox", "source": "dshkit", "sessionId": "s-7",
            "status": "pending", "createdAt": 1_700_000_000_000, "decidedAt": None,
            "entryId": None}
        again = provider.propose({**PROPOSAL, "text": "something else"}, WRITE)
        assert again == {"proposal": proposal, "created": False}
        other = provider.propose(PROPOSAL, _write(session="s-8"))
        assert other["created"] is True and other["proposal"]["id"] != proposal["id"]
        assert _actions(provider) == ["proposal", "proposal"]
        row = provider.audit_list(1000)[-1]
        assert (row["entryId"], row["outcome"], row["text"], row["entry"]) == (
            proposal["id"], "pending", "Run the tests with nox", None)
        assert provider.list_entries() == []  # a proposal is not an entry


@pytest.mark.parametrize(("change", "field"), [
    ({"text": "x" * 2001}, "/text"),
    ({"kind": "Compaction"}, "/kind"),
    ({"kind": ""}, "/kind"),
    ({"tags": ["a"]}, "/tags"),
    ({"track": "team"}, "/track"),
    ({"text": "   "}, "/text"),
])
def test_propose_refuses_bad_input_and_writes_nothing(change: dict[str, Any], field: str,
                                                      tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        error = _code(lambda: provider.propose({**PROPOSAL, **change}, WRITE))
        assert (error.code, error.details["field"]) == ("INVALID_INPUT", field)
        assert provider.audit_list() == [] and provider.proposals() == []


def test_propose_needs_an_agent_and_a_session_id(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        assert _code(lambda: provider.propose(PROPOSAL, {})).code == "WRITE_REQUIRES_AGENT"
        no_id = {"agent": {"session": {"header": {"cwd": WS}}}}
        error = _code(lambda: provider.propose(PROPOSAL, no_id))
        assert error.details["field"] == "/agent/session/id"
        assert provider.proposals() == []


def test_a_text_of_2000_units_is_accepted(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        text = "\U0001f600" * 1000  # 2000 UTF-16 code units
        assert provider.propose({**PROPOSAL, "text": text}, WRITE)["proposal"]["text"] == text
        error = _code(lambda: provider.propose({**PROPOSAL, "kind": "k2", "text": text + "x"},
                                               WRITE))
        assert error.details["field"] == "/text"


# -- approve ----------------------------------------------------------------------------------------


def test_approval_is_a_gated_add_in_one_transaction(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def gate(payload: dict[str, Any], write: Any) -> str:
        asked.append(payload)
        return "allowed-once"

    with _provider(tmp_path / "m.db", gate=gate) as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        approver = _write(session="s-9")
        result = provider.approve_proposal({"id": proposal["id"]}, approver)
        assert asked == [{"action": "add", "track": "agent", "scope": "workspace",
                          "text": "Run the tests with nox", "source": "dshkit",
                          "targets": []}]
        entry = result["entry"]
        assert (entry["workspaceKey"], entry["agentKey"], entry["sessionId"], entry["tags"]) == (
            WS, "coder", "s-9", [])
        assert result["proposal"] == {**proposal, "status": "approved",
                                      "decidedAt": entry["createdAt"], "entryId": entry["id"]}
        assert result["usage"] == {"track": "agent", "scope": "workspace", "used": 22,
                                   "limit": 4000}
        assert _actions(provider) == ["proposal", "add", "proposal-approved"]
        approved_row = provider.audit_list(1)[0]
        assert approved_row["entryIds"] == [entry["id"]]
        assert approved_row["ts"] == entry["createdAt"]
        assert replay(provider.audit_list(1000)) == provider.list_entries() == [entry]
        assert provider.proposals() == [result["proposal"]]
        again = _code(lambda: provider.approve_proposal({"id": proposal["id"]}, approver))
        assert (again.code, again.details) == ("PROPOSAL_NOT_FOUND", {"id": proposal["id"]})


def test_a_denied_approval_leaves_the_proposal_pending(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db", gate=lambda payload, write: "rejected") as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        error = _code(lambda: provider.approve_proposal({"id": proposal["id"]}, WRITE))
        assert error.code == "WRITE_DENIED"
        assert provider.proposals() == [proposal]
        assert provider.list_entries() == []
        assert _actions(provider) == ["proposal", "add-denied"]


def test_an_approval_decided_meanwhile_fails_at_commit(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with _provider(path, write_policy="auto") as other:
        proposal = other.propose(PROPOSAL, WRITE)["proposal"]

        def gate(payload: dict[str, Any], write: Any) -> str:
            other.dismiss_proposal({"id": proposal["id"]}, WRITE)
            return "allowed-once"

        with _provider(path, gate=gate) as provider:
            error = _code(lambda: provider.approve_proposal({"id": proposal["id"]}, WRITE))
            assert error.code == "PROPOSAL_NOT_FOUND"
            assert provider.list_entries() == []
            assert provider.proposals()[0]["status"] == "dismissed"
            assert _actions(provider) == ["proposal", "proposal-dismissed", "add-failed"]
            assert provider.audit_list(1)[0]["outcome"].endswith(
                "; not applied: PROPOSAL_NOT_FOUND")


def test_the_budget_is_checked_before_approval(tmp_path: Path) -> None:
    budgets = {"user": {"userGlobal": 10, "workspace": 10},
               "agent": {"userGlobal": 10, "workspace": 10}}
    with _provider(tmp_path / "m.db", budgets=budgets, write_policy="auto") as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        error = _code(lambda: provider.approve_proposal({"id": proposal["id"]}, WRITE))
        assert error.code == "BUDGET_EXCEEDED"
        assert _actions(provider) == ["proposal"]  # refused before approval: not audited
        assert provider.proposals()[0]["status"] == "pending"


# -- dismiss, visibility, listing ---------------------------------------------------------------


def test_dismissal_is_audited_and_not_gated(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db", write_policy="off") as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        result = provider.dismiss_proposal({"id": proposal["id"]}, WRITE)
        assert result == {"proposal": {**proposal, "status": "dismissed",
                                       "decidedAt": 1_700_000_001_000}}
        assert _actions(provider) == ["proposal", "proposal-dismissed"]
        row = provider.audit_list(1)[0]
        assert (row["entryId"], row["outcome"]) == (proposal["id"], "dismissed")
        assert _code(lambda: provider.dismiss_proposal({"id": proposal["id"]}, WRITE)).code \
            == "PROPOSAL_NOT_FOUND"


def test_other_sessions_cannot_see_or_decide_a_proposal(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db", write_policy="auto") as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        for other in (_write(cwd="/home/ana/blog"), _write(preset="reviewer")):
            for call in (provider.approve_proposal, provider.dismiss_proposal):
                error = _code(lambda c=call, w=other: c({"id": proposal["id"]}, w))
                assert error.code == "PROPOSAL_NOT_FOUND"
            assert provider.proposals(None, other) == []
        assert provider.proposals(None, WRITE) == [proposal]
        assert _actions(provider) == ["proposal"]


@pytest.mark.parametrize(("value", "field"), [
    ({"status": "open"}, "/status"), ({"limit": 0}, "/limit"), ({"limit": 1001}, "/limit"),
    ({"order": "id"}, "/order"), ([], "/"),
])
def test_listing_refuses_a_bad_filter(value: Any, field: str, tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        error = _code(lambda: provider.proposals(value))
        assert (error.code, error.details["field"]) == ("INVALID_INPUT", field)


def test_decision_input_is_checked(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        for bad, field in (({"id": ""}, "/id"), ({"id": 3}, "/id"), ("x", "/"),
                           ({"id": "a", "why": "b"}, "/why")):
            error = _code(lambda b=bad: provider.dismiss_proposal(b, WRITE))
            assert (error.code, error.details["field"]) == ("INVALID_INPUT", field)


# -- the snapshot ---------------------------------------------------------------------------------


def test_snapshot_shows_eight_visible_pending_proposals(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db", write_policy="auto") as provider:
        for n in range(3):  # older, of another workspace: filtered before the limit of 8
            provider.propose({**PROPOSAL, "text": f"blog {n}"},
                             _write(session=f"b{n}", cwd="/home/ana/blog"))
        made = [provider.propose({**PROPOSAL, "text": f"fact {n}\nline two"},
                                 _write(session=f"p{n}"))["proposal"] for n in range(10)]
        provider.dismiss_proposal({"id": made[0]["id"]}, WRITE)
        text = provider.snapshot(_write(session="snap"))
        lines = [f"- [{p['id']}] agent/workspace: {p['text'].replace(chr(10), ' ')}"
                 for p in made[1:9]]
        assert text == "\n\n".join([
            HEADER, "## Pending memory proposals (reviewed by the user; approve or dismiss "
            "via the /memory proposals command)\n" + "\n".join(lines)])
        assert provider.audit_list(1)[0]["text"] == text  # frozen with the section


def test_snapshot_section_follows_the_entries(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db", write_policy="auto") as provider:
        provider.add({"track": "user", "scope": "user-global", "text": "Prefers tea"}, WRITE)
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
        assert provider.snapshot(WRITE) == (
            f"{HEADER}\n\n## User profile (global preferences, communication style, landmines)"
            " \u2014 11/2000 units used\n- Prefers tea\n\n## Pending memory proposals (reviewed"
            " by the user; approve or dismiss via the /memory proposals command)\n"
            f"- [{proposal['id']}] agent/workspace: Run the tests with nox")


# -- the as-is import -----------------------------------------------------------------------------


RECORD = {"id": "9c1e4b7a-2d3f-4a5b-8c6d-7e8f9a0b1c2d", "kind": "compaction-summary",
          "track": "agent", "scope": "workspace", "workspaceKey": WS, "agentKey": "coder",
          "sessionId": "old-1", "text": "Imported fact", "status": "approved",
          "createdAt": 100, "decidedAt": 200}


def test_import_records_brings_proposals_across_as_they_are(tmp_path: Path) -> None:
    with _provider(tmp_path / "m.db") as provider:
        pending = {**RECORD, "id": "9c1e4b7a-2d3f-4a5b-8c6d-7e8f9a0b1c2e", "sessionId": "old-2",
                   "status": "pending", "decidedAt": None, "source": "compaction"}
        with provider.store.transaction():
            inserted = pro.import_records(provider.store, [RECORD, pending])
        assert [p["id"] for p in inserted] == [RECORD["id"], pending["id"]]
        stored = provider.proposals()
        assert stored[0] == {**RECORD, "source": "dsh-memento", "entryId": None}
        assert stored[1]["source"] == "compaction" and stored[1]["status"] == "pending"
        assert provider.audit_list() == []  # the importer audits its own import
        with provider.store.transaction():  # the same records again: skipped
            assert pro.import_records(provider.store, [RECORD]) == []
        with pytest.raises(MemoryProtocolError) as info, provider.store.transaction():
            pro.import_records(provider.store, [{**RECORD, "text": "other"}])
        assert info.value.code == "IMPORT_CONFLICT"
        with pytest.raises(MemoryProtocolError) as info, provider.store.transaction():
            pro.import_records(provider.store, [{**RECORD, "id": "other-id"}])  # same key
        assert info.value.code == "IMPORT_CONFLICT"
        with pytest.raises(MemoryProtocolError) as info, provider.store.transaction():
            pro.import_records(provider.store, [{**RECORD, "id": "x1", "sessionId": "n"},
                                                {**RECORD, "status": "open"}])
        assert (info.value.code, info.value.details["field"]) == ("INVALID_INPUT", "/1/status")
        assert len(provider.proposals()) == 2  # the failed transactions left nothing
        with pytest.raises(RuntimeError):
            pro.import_records(provider.store, [RECORD])  # outside a transaction


# -- the command line -----------------------------------------------------------------------------


def _cli(db: Path, *args: str) -> tuple[int, Any, str]:
    package_root = Path(dshkit.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(package_root), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("DSHKIT_MEMORY_DB", None)
    proc = subprocess.run(
        [sys.executable, "-m", "dshkit", "memory", "--db", str(db), "--json", *args],
        stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=60, check=False)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in out + err, err
    return proc.returncode, json.loads(out) if out.strip() else None, err


SESSION = ("--cwd", WS, "--agent-preset", "Coder")


@pytest.mark.requirement("MEM-CLI-007")
def test_cli_lists_approves_and_dismisses(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with _provider(db) as provider:
        first = provider.propose(PROPOSAL, WRITE)["proposal"]
        second = provider.propose(PROPOSAL, _write(session="s-8"))["proposal"]
    code, listed, _ = _cli(db, "proposals", "list")
    assert code == 0 and [p["id"] for p in listed] == [first["id"], second["id"]]
    code, done, _ = _cli(db, *SESSION, "--yes", "proposals", "approve", first["id"])
    assert code == 0 and done["proposal"]["status"] == "approved"
    assert done["entry"]["text"] == "Run the tests with nox"
    code, done, _ = _cli(db, *SESSION, "proposals", "dismiss", second["id"])
    assert code == 0 and done["proposal"]["status"] == "dismissed"
    code, listed, _ = _cli(db, "proposals", "list")
    assert code == 0 and listed == []
    code, listed, _ = _cli(db, "proposals", "list", "--status", "all")
    assert [p["status"] for p in listed] == ["approved", "dismissed"]


@pytest.mark.requirement("MEM-CLI-007")
def test_cli_denied_approval_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with _provider(db) as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
    code, refusal, _ = _cli(db, *SESSION, "proposals", "approve", proposal["id"])
    assert code == 1
    assert refusal["ok"] is False and refusal["command"] == "memory"
    assert refusal["error"]["code"] == "WRITE_DENIED"
    with open_provider(db) as provider:
        assert provider.proposals() == [proposal] and provider.list_entries() == []
        assert _actions(provider) == ["proposal", "add-denied"]


@pytest.mark.requirement("MEM-CLI-007")
def test_cli_refusals(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with _provider(db) as provider:
        proposal = provider.propose(PROPOSAL, WRITE)["proposal"]
    code, refusal, _ = _cli(db, "--yes", "proposals", "approve", proposal["id"])
    assert code == 1 and refusal["error"]["code"] == "PROPOSAL_NOT_FOUND"  # other workspace
    assert refusal["error"]["details"] == {"id": proposal["id"]}
    assert "--cwd and --agent-preset" in refusal["error"]["message"]
    code, refusal, _ = _cli(db, "proposals", "dismiss")
    assert code == 2 and refusal["error"]["code"] == "USAGE"
    code, refusal, _ = _cli(db, "proposals", "approve", proposal["id"], "--status", "all")
    assert code == 2 and refusal["error"]["code"] == "USAGE"
    code, refusal, _ = _cli(tmp_path / "missing.db", "proposals", "list")
    assert code == 2 and refusal["error"]["code"] == "STORE_MISSING"
    assert not (tmp_path / "missing.db").exists()
    with open_provider(db) as provider:
        assert provider.proposals() == [proposal]
