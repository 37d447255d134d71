"""Issue 15 class 5: ``-o`` replaces only regular files (TOOL-CLI-010).

Onto a FIFO, a character device or a ``/proc/self/fd/N`` link the atomic writer used to put a
regular file in its place; now it refuses with ``IO_ERROR`` naming the path and the kind of
file, and leaves the node as it was. A symbolic link to a regular file is written through: the
link stays, its target is replaced atomically.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dshkit.cli.atomic import write_atomic
from dshkit.cli.report import Refusal


def _refused(path: Path) -> Refusal:
    with pytest.raises(Refusal) as caught:
        write_atomic(path, "text\n", "--output")
    return caught.value


@pytest.mark.requirement("TOOL-CLI-010")
def test_fifo_is_refused_and_kept(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refusal = _refused(fifo)
    assert refusal.code == "IO_ERROR" and refusal.flag == "--output"
    assert refusal.details == {"path": str(fifo), "kind": "FIFO"}
    assert "not a regular file" in refusal.message
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_character_device_is_refused(tmp_path: Path) -> None:
    # a node of our own: a test must never risk replacing the machine's /dev/null
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    refusal = _refused(node)
    assert refusal.code == "IO_ERROR"
    assert refusal.details["kind"] == "character device"
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_directory_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path).details["kind"] == "directory"


def test_link_to_a_regular_file_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new\n", "--output")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new\n"


def test_link_to_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    assert _refused(link).details["kind"] == "FIFO"
    assert link.is_symlink()


@pytest.mark.requirement("TOOL-CLI-010")
def test_cli_export_onto_proc_self_fd_is_refused(tmp_path: Path) -> None:
    """``-o /proc/self/fd/1`` with standard output a pipe: refused, exit 2, nothing replaced."""
    from dshkit.reference.memory import open_provider

    open_provider(tmp_path / "m.db").close()
    done = subprocess.run(
        [sys.executable, "-m", "dshkit", "memory", "--db", str(tmp_path / "m.db"), "--json",
         "export", "--format", "mem0", "-o", "/proc/self/fd/1"],
        capture_output=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert b"Traceback" not in done.stderr
    error = json.loads(done.stdout.decode().splitlines()[-1])["error"]
    assert error["code"] == "IO_ERROR" and error["details"]["kind"] == "FIFO"
