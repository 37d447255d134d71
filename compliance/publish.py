"""File one ``dshkit conformance`` JSON report under compliance/reports, with a sidecar.

    python compliance/publish.py build/dsh-0.1.1-report.json dsh-0.1.1 \
        [--note "..."] [--source URL-or-commit]

writes ``compliance/reports/<name>.json`` (the kit's report, unchanged) and
``compliance/reports/<name>.meta.json``: what the kit's report does not carry itself (the date
of the run, the environment, the exact source of the implementation) next to the figures it
does carry, so that a published result says what ran, where and when (``filedAtCommit`` is
the dshkit commit checked out when the report was filed). Both files are written atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPORTS = Path(__file__).resolve().parent / "reports"


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would not suit a published file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _node_version(report: dict[str, Any]) -> str | None:
    """The Node version the harness ran on, as its handshake diagnostics say ("on Node X")."""
    stderr = str((report.get("implementation") or {}).get("stderr") or "")
    marker = "on Node "
    if marker not in stderr:
        return None
    return stderr.split(marker, 1)[1].split()[0]


def _git_head() -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    done = subprocess.run([git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=REPORTS.parent, check=False)
    return done.stdout.strip() or None if done.returncode == 0 else None


def sidecar(report: dict[str, Any], name: str, note: str | None,
            source: str | None) -> dict[str, Any]:
    impl = report.get("implementation") or {}
    summary = report.get("summary") or {}
    kit = report.get("kit") or {}
    keys = ("cases", "passed", "failed", "errored", "skipped", "not_applicable",
            "expected_failures", "unexpected")
    return {
        "report": f"{name}.json",
        "kit": {"name": kit.get("name"), "version": kit.get("version"),
                "specVersions": kit.get("spec_versions"), "vectors": kit.get("vectors"),
                "filedAtCommit": _git_head()},
        "implementation": {"name": impl.get("name"), "version": impl.get("version"),
                           "source": source or impl.get("source"),
                           "capabilities": impl.get("capabilities"),
                           "connector": impl.get("connector")},
        "run": {"started": summary.get("started"), "durationS": summary.get("duration_s"),
                "hypothesisSeed": summary.get("hypothesis_seed"),
                "figures": {k: summary.get(k) for k in keys}, "ok": summary.get("ok")},
        "environment": {"python": platform.python_version(),
                        "node": _node_version(report),
                        "platform": f"{sys.platform}-{platform.machine()}",
                        "system": platform.platform()},
        "note": note,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="File a conformance report with a sidecar.")
    parser.add_argument("report", type=Path)
    parser.add_argument("name", help="the file name under compliance/reports, without .json")
    parser.add_argument("--note", help="one line on how the run was made")
    parser.add_argument("--source", help="the exact source of the implementation (a commit URL)")
    args = parser.parse_args(argv)
    try:
        text = args.report.read_text(encoding="utf-8")
        report = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"publish: {args.report}: cannot read the report: {exc}", file=sys.stderr)
        return 2
    if not isinstance(report, dict) or "cases" not in report:
        print(f"publish: {args.report}: not a dshkit conformance report", file=sys.stderr)
        return 2
    REPORTS.mkdir(parents=True, exist_ok=True)
    meta = sidecar(report, args.name, args.note, args.source)
    _write_atomic(REPORTS / f"{args.name}.json", text)
    _write_atomic(REPORTS / f"{args.name}.meta.json",
                  json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
    print(f"publish: {REPORTS / args.name}.json and .meta.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
