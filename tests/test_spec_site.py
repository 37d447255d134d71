"""The rendered specification site: the version on every page, permalinks on every
requirement, schemas at their ``$id``, requirement search documents, and nothing fetched from
the network at page load. Builds the site once (needs mkdocs and mkdocs-material, as the
``docs`` nox session installs them)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dshkit.spec_site import (
    REQUIREMENT_BOOST,
    SiteError,
    add_requirement_permalinks,
    add_search_docs,
    embed_changelog,
    requirement_search_docs,
    schema_site_path,
    substitute_version,
)
from dshkit.spec_version import SITE_URL, SPEC_VERSION, citation, page_path, requirement_url

REPO = Path(__file__).resolve().parents[1]
REQUIREMENTS = json.loads((REPO / "spec" / "requirements.json").read_text(encoding="utf-8"))

# Elements whose URL the browser fetches while loading a page; <a> and rel=canonical or
# alternate links are navigation, not loads.
_FETCHED_LINK_RELS = {"stylesheet", "icon", "shortcut", "preload", "modulepreload",
                      "prefetch", "preconnect", "dns-prefetch", "manifest", "apple-touch-icon"}
_EXTERNAL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
_CSS_EXTERNAL = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])(?:https?:)?//""", re.IGNORECASE)


class _Loads(HTMLParser):
    """The URLs a page makes the browser fetch, plus its spec-version meta tag."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.version: str | None = None
        self.inline_styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if tag == "meta" and attr.get("name") == "dshkit-spec-version":
            self.version = attr.get("content")
        if tag in {"script", "img", "iframe", "source", "audio", "video", "embed", "input"}:
            self.loads += [attr[k] for k in ("src", "srcset") if k in attr]
        if tag == "link" and set(attr.get("rel", "").lower().split()) & _FETCHED_LINK_RELS:
            self.loads.append(attr.get("href", ""))
        if tag == "object" and "data" in attr:
            self.loads.append(attr["data"])
        if "style" in attr:
            self.inline_styles.append(attr["style"])
        self._in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.inline_styles.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-4000:]
    yield out
    shutil.rmtree(out, ignore_errors=True)


def _pages(site: Path) -> list[Path]:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 50
    return pages


def test_every_page_carries_the_spec_version(site: Path) -> None:
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        parser = _Loads()
        parser.feed(text)
        assert parser.version == SPEC_VERSION, page
        assert f"dshkit specification <strong>{SPEC_VERSION}</strong>" in text, page


def test_no_page_loads_anything_from_the_network(site: Path) -> None:
    for page in _pages(site):
        parser = _Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        external = [url for url in parser.loads if _EXTERNAL.match(url.strip())]
        assert external == [], (page, external)
        assert not any(_CSS_EXTERNAL.search(style) for style in parser.inline_styles), page
    for sheet in site.rglob("*.css"):
        assert _CSS_EXTERNAL.search(sheet.read_text(encoding="utf-8")) is None, sheet


def test_canonical_urls_and_sitemap(site: Path) -> None:
    surface = (site / "session" / "surface" / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{SITE_URL}session/surface/"' in surface
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert sitemap.count("<loc>") == len(_pages(site)) - 1  # all but 404.html
    assert f"<loc>{SITE_URL}session/surface/</loc>" in sitemap


def test_every_requirement_has_a_permalink_and_a_citation(site: Path) -> None:
    pages: dict[str, str] = {}
    for req in REQUIREMENTS["requirements"]:
        assert req["url"] == requirement_url(req["file"], req["id"])
        path = site / page_path(req["file"]) / "index.html"
        text = pages.setdefault(req["file"], path.read_text(encoding="utf-8"))
        assert f'id="{req["id"]}">{req["id"]}</strong><a class="dshkit-req-link" ' \
               f'href="#{req["id"]}"' in text, req["id"]
        assert f'data-cite="{citation(req["id"])} ({req["url"]})"' in text, req["id"]


def test_the_citation_script_ships_with_the_site(site: Path) -> None:
    script = (site / "assets" / "dshkit" / "cite.js").read_text(encoding="utf-8")
    assert "clipboard" in script and "http" not in script
    page = (site / "cite" / "index.html").read_text(encoding="utf-8")
    assert 'src="../assets/dshkit/cite.js"' in page
    assert f"dshkit spec {SPEC_VERSION}, SES-SURF-004" in page


def test_schemas_are_served_at_their_ids(site: Path) -> None:
    ids = 0
    for path in (REPO / "schemas").rglob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and isinstance(document.get("$id"), str):
            served = site / schema_site_path(document["$id"], SITE_URL)
            assert json.loads(served.read_text(encoding="utf-8")) == document, path
            ids += 1
    assert ids > 100


def test_search_puts_the_requirement_first(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = {doc["location"]: doc for doc in index["docs"]}
    surf = docs["session/surface/#SES-SURF-004"]
    assert surf["title"].startswith("SES-SURF-004 ") and surf["boost"] == REQUIREMENT_BOOST
    others = [d for d in index["docs"] if "SES-SURF-004" in d.get("title", "")
              and d is not surf]
    assert all(d.get("boost", 1) < REQUIREMENT_BOOST for d in others)


def test_the_changes_page_embeds_the_changelog(site: Path) -> None:
    page = (site / "changes" / "index.html").read_text(encoding="utf-8")
    assert "{{ changelog }}" not in page and "[0.1.0]" in page


# Pure functions, without a build.

def test_page_paths_follow_directory_urls() -> None:
    assert page_path("index.md") == ""
    assert page_path("memory/index.md") == "memory/"
    assert page_path("session/surface.md") == "session/surface/"
    assert requirement_url("session/surface.md", "SES-SURF-004") == \
        "https://dshkit.dev/session/surface/#SES-SURF-004"


def test_version_substitution() -> None:
    assert substitute_version("v{{ spec_version }}.", "9.8.7") == "v9.8.7."


def test_permalinks_wrap_only_requirement_anchors() -> None:
    html = ('<p><strong id="SES-ENV-004">SES-ENV-004</strong> <em>T.</em></p>'
            '<p><strong class="tool" id="ADP-CLI-001">ADP-CLI-001</strong></p>'
            '<p><strong id="other">other</strong></p>')
    out = add_requirement_permalinks(html, "session/envelope/", SITE_URL, "1.2.3")
    assert out.count("dshkit-req-link") == 2
    assert 'data-cite="dshkit spec 1.2.3, SES-ENV-004 ' \
           '(https://dshkit.dev/session/envelope/#SES-ENV-004)"' in out
    assert '<strong id="other">other</strong>' in out


def test_search_docs_are_idempotent() -> None:
    extra = requirement_search_docs([{"id": "SES-ENV-004", "title": "Seq", "level": "MUST",
                                      "file": "session/envelope.md"}])
    index = {"config": {}, "docs": [{"location": "", "title": "I", "text": ""},
                                    {"location": "session/envelope/", "title": "E", "text": ""},
                                    {"location": "session/envelope/#x", "title": "X", "text": ""}]}
    once = add_search_docs(index, extra)
    assert add_search_docs(once, extra) == once
    assert [d["location"] for d in once["docs"]] == [
        "", "session/envelope/", "session/envelope/#SES-ENV-004", "session/envelope/#x"]
    with pytest.raises(SiteError, match="no page"):
        add_search_docs({"docs": []}, extra)


def test_schema_ids_outside_the_site_are_refused() -> None:
    with pytest.raises(SiteError, match="not under site_url"):
        schema_site_path("https://example.org/s.json", SITE_URL)
    with pytest.raises(SiteError, match="names no file"):
        schema_site_path(SITE_URL + "a/../../b.json", SITE_URL)


def test_changelog_embedding_demotes_headings() -> None:
    out = embed_changelog("# P\n\n{{ changelog }}\n",
                          "# Changelog\n\nintro [x](spec/index.md)\n\n## [1.0.0]\n\n### Tool\n")
    assert out == "# P\n\n### [1.0.0]\n\n#### Tool\n"
