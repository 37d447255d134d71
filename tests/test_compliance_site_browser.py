"""The compliance site in a real browser (slow): headless Chromium loads the matrix, which must
show all four implementations, follows a requirement's link to its anchor in the spec site
built beside it, and saves screenshots under build/ (desktop 1280 px and phone 390 px).

The combined site is ``$DSHKIT_SITE`` when set (``nox -s docs`` builds it: the spec in
build/site, the compliance site in build/site/compliance); otherwise this test builds both
into a temporary folder, which needs MkDocs. Skipped, saying why, where Chromium is absent."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin

import pytest

from dshkit.cli import main

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "build"
FOUR = ("dshkit-reference 0.1.0", "dsh 0.1.0-rc.8", "dsh 0.1.1-rc.2", "dsh-memento 0.4.4")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium here (Debian: apt-get install -y chromium); the browser test of "
                "the compliance site is skipped")


def _site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("DSHKIT_SITE")
    if given:
        root = Path(given)
        assert (root / "compliance" / "index.html").is_file(), \
            f"$DSHKIT_SITE={given} has no compliance/index.html: run nox -s docs"
        return root
    pytest.importorskip("mkdocs", reason="MkDocs is needed to build the spec site beside the "
                        "compliance site (or set DSHKIT_SITE to a built one)")
    pytest.importorskip("material")
    root = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(root)], cwd=REPO, capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert main(["compliance", "build", "--out", str(root / "compliance"), "--reports",
                 str(REPO / "compliance" / "reports"), "--spec", str(REPO / "spec"),
                 "--spec-site", ".."]) == 0
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _chromium()  # skip before building anything
    root = _site(tmp_path_factory)
    handler = functools.partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _browse(*args: str) -> str:
    done = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--disable-extensions", *args],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_matrix_shows_the_four_implementations(served: str) -> None:
    dom = _browse("--dump-dom", served + "compliance/index.html")
    for title in FOUR:
        assert f">{title}</a>" in dom, title
    assert dom.count('class="cell ') >= 4 * 28


def test_a_requirement_link_reaches_its_spec_anchor(served: str) -> None:
    page = served + "compliance/req/MEM-KEY-003.html"
    dom = _browse("--dump-dom", page)
    match = re.search(r'<a class="spec" href="([^"]+)">', dom)
    assert match, "the requirement page has no link into the specification"
    target = urljoin(page, match[1])
    assert target == served + "memory/visibility/#MEM-KEY-003"
    spec = _browse("--dump-dom", target)
    assert 'id="MEM-KEY-003"' in spec
    assert "Divergence (G1)" in spec


def test_screenshots_at_desktop_and_phone_widths(served: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    for name, size, path in (("compliance-matrix.png", "1280,1000", "compliance/index.html"),
                             ("compliance-memento-phone.png", "390,844",
                              "compliance/impl/dsh-memento.html")):
        shot = SHOTS / name
        shot.unlink(missing_ok=True)
        _browse(f"--window-size={size}", f"--screenshot={shot}", served + path)
        assert shot.is_file() and shot.stat().st_size > 10_000, name
