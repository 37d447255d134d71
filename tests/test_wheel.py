"""The wheel is self-contained: built, installed in a fresh venv, it validates a log and finds
its schemas and vectors without the source tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LOG = (
    '{"type":"session","version":0,"id":"w","createdAt":1,"delegationDepth":0}\n'
    '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
    '{"type":"user/message","seq":1,"time":2,"data":{"id":"u1","role":"user",'
    '"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n'
    '{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(dist), str(ROOT)],
        check=True,
        env={**_clean_env(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    wheel = next(dist.glob("dshkit-*.whl"))
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
                   check=True, env=_clean_env())
    return python


def _clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH, so only the installed wheel can be imported."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], capture_output=True, text=True, cwd=cwd,
                          check=False, env=_clean_env())


def test_installed_wheel_validates_a_log(installed: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text(LOG, encoding="utf-8")
    result = _run(installed, "-m", "dshkit", "validate", "--json", str(log), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True
    assert report["events"] == 3


def test_installed_wheel_imports_from_site_packages(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import dshkit, dshkit.reference, dshkit.conformance.vectors as v;"
        "print(dshkit.__file__);"
        "print(len(v.load_cases()))"
    )
    result = _run(installed, "-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    location, cases = result.stdout.split()
    assert "site-packages" in location
    assert not location.startswith(str(ROOT))
    assert int(cases) >= 1


def test_no_bare_top_level_modules(installed: Path, tmp_path: Path) -> None:
    probe = "import importlib.util as u; print(u.find_spec('reference'), u.find_spec('adapters'))"
    result = _run(installed, "-c", probe, cwd=tmp_path)
    assert result.stdout.split() == ["None", "None"]
