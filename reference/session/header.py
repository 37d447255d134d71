"""The JSONL session header line (SES-FILE-001..003) and the format-version gate (SES-VER-*)."""

from __future__ import annotations

from typing import Any

from ..problems import ProblemError, fail
from .checks import is_nonneg_safe_int
from .vocabulary import FORMAT_VERSION

HEADER_KEY_ORDER = ("type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength",
                    "origin", "delegationDepth", "agentPreset")


def is_header_candidate(value: Any) -> bool:
    """Whether a first line claims to be a DSH session header."""
    return isinstance(value, dict) and value.get("type") == "session"


def refuse_foreign_version(value: Any) -> ProblemError | None:
    """SES-VER-002/003/004: read the version from the raw header before checking its shape."""
    if not isinstance(value, dict):
        return None
    version = value.get("version")
    if isinstance(version, bool) or not isinstance(version, (int, float)):
        return None
    if version == FORMAT_VERSION:
        return None
    session = _js_string(value["id"]) if "id" in value else "undefined"
    shown = int(version) if float(version).is_integer() else version
    if version > FORMAT_VERSION:
        return fail("FORMAT_VERSION_NEWER", "SES-VER-002",
                    f'session "{session}" uses log format v{shown}, but this reader reads only '
                    f"v{FORMAT_VERSION}: the log was written by a newer harness; upgrade the "
                    "reader to open it", pointer="/version")
    return fail("FORMAT_VERSION_OLDER", "SES-VER-003",
                f'session "{session}" uses log format v{shown}, older than the supported '
                f"v{FORMAT_VERSION}, and no upgrade path exists for it", pointer="/version")


def check_header(value: dict[str, Any]) -> ProblemError | None:
    """SES-FILE-002/003: the header's fields (after the version gate)."""

    def bad(key: str, why: str) -> ProblemError:
        return fail("FILE_HEADER_INVALID", "SES-FILE-002", f"session header {key} {why}",
                    pointer=f"/{key}")

    if not isinstance(value.get("version"), (int, float)) or isinstance(value.get("version"), bool):
        return bad("version", "must be a number")
    if not isinstance(value.get("id"), str):
        return bad("id", "must be a string")
    if not is_nonneg_safe_int(value.get("createdAt")):
        return bad("createdAt", "must be a non-negative safe integer")
    if not is_nonneg_safe_int(value.get("delegationDepth")):
        return bad("delegationDepth", "must be a non-negative safe integer (and is required)")
    if "origin" in value and value["origin"] != "subagent":
        return bad("origin", 'must be "subagent" when present')
    if "agentPreset" in value and not isinstance(value["agentPreset"], str):
        return bad("agentPreset", "must be a string")
    if "sandboxMode" in value or "approvalPolicy" in value:
        return fail("FILE_HEADER_RETIRED_FIELDS", "SES-FILE-003",
                    "session header uses retired policy baseline fields "
                    "(sandboxMode/approvalPolicy)", pointer="/sandboxMode"
                    if "sandboxMode" in value else "/approvalPolicy")
    if "cwd" in value:
        cwd = value["cwd"]
        if not isinstance(cwd, str):
            return bad("cwd", "must be a string")
        if not _is_absolute(cwd):
            return bad("cwd", f'must be an absolute path, got "{cwd}"')
    if "parentSession" in value and not isinstance(value["parentSession"], str):
        return bad("parentSession", "must be a string")
    if "seedLength" in value and not is_nonneg_safe_int(value["seedLength"]):
        return bad("seedLength", "must be a non-negative safe integer")
    return None


def header_line(*, session_id: str, created_at: int, cwd: str | None = None,
                parent_session: str | None = None, seed_length: int | None = None,
                origin: str | None = None, delegation_depth: int = 0,
                agent_preset: str | None = None) -> dict[str, Any]:
    """A header record in the key order DSH writes (SES-FILE-002)."""
    fields: dict[str, Any] = {
        "type": "session", "version": FORMAT_VERSION, "id": session_id, "createdAt": created_at,
        "cwd": cwd, "parentSession": parent_session, "seedLength": seed_length, "origin": origin,
        "delegationDepth": delegation_depth, "agentPreset": agent_preset,
    }
    return {key: fields[key] for key in HEADER_KEY_ORDER if fields[key] is not None}


def _is_absolute(path: str) -> bool:
    # DSH checks with node:path's isAbsolute on POSIX hosts, where only a leading "/" counts.
    return path.startswith("/")


def _js_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
