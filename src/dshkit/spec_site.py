"""What the rendered specification site adds to MkDocs' output, as pure functions.

The MkDocs hook ``docs_overrides/hooks.py`` calls these; they take and return strings and
paths only, so they are tested without MkDocs:

- :func:`substitute_version` puts the one spec version into the Markdown (``{{ spec_version }}``);
- :func:`add_requirement_permalinks` gives every requirement id a permalink and a citation
  button (the button is enabled by ``assets/dshkit/cite.js``; without script the link remains);
- :func:`requirement_search_docs` makes one search document per requirement, boosted, so the
  site search ranks a requirement first when its id is typed;
- :func:`publish_schemas` copies every schema to the path its ``$id`` names under the site root.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dshkit.spec_version import SPEC_VERSION, citation, page_path

VERSION_PLACEHOLDER = "{{ spec_version }}"
CHANGELOG_PLACEHOLDER = "{{ changelog }}"
#: The search boost of a requirement's own document (Material for MkDocs reads ``boost``).
REQUIREMENT_BOOST = 100

_ID = r"[A-Z]{2,4}-[A-Z]{2,5}-\d{3}"
# attr_list puts the anchor on the bold id: <strong id="SES-ENV-004">SES-ENV-004</strong>,
# or <strong class="tool" id="ADP-CLI-001">ADP-CLI-001</strong> for a tool-scoped one.
_STRONG_ID = re.compile(rf'<strong (?:class="tool" )?id="(?P<id>{_ID})">(?P=id)</strong>')


class SiteError(ValueError):
    """The site configuration or its inputs break a rule of the rendered specification."""


def substitute_version(markdown: str, version: str = SPEC_VERSION) -> str:
    """The Markdown with every ``{{ spec_version }}`` replaced by ``version``."""
    return markdown.replace(VERSION_PLACEHOLDER, version)


def embed_changelog(markdown: str, changelog: str) -> str:
    """The Markdown with ``{{ changelog }}`` replaced by the changelog's release sections,
    one heading level down (``## [0.1.0]`` becomes ``### [0.1.0]``) and its links made
    relative to the site (``spec/x.md`` becomes ``x.md``)."""
    if CHANGELOG_PLACEHOLDER not in markdown:
        return markdown
    lines = changelog.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    body = "\n".join("#" + line if line.startswith("#") else line for line in lines[start:])
    body = re.sub(r"\]\(spec/([^)]*)\)", r"](\1)", body)
    return markdown.replace(CHANGELOG_PLACEHOLDER, body)


def add_requirement_permalinks(page_html: str, page_url: str, site_url: str,
                               version: str = SPEC_VERSION) -> str:
    """Append a permalink and a (hidden until scripted) citation button to every requirement
    id anchor of a rendered page. ``page_url`` is the page's path relative to ``site_url``."""

    def mark(match: re.Match[str]) -> str:
        req_id = match.group("id")
        absolute = html.escape(f"{site_url}{page_url}#{req_id}", quote=True)
        cite = html.escape(f"{citation(req_id, version)} ({site_url}{page_url}#{req_id})",
                           quote=True)
        return (
            f'<span class="dshkit-req" data-req="{req_id}">{match.group(0)}'
            f'<a class="dshkit-req-link" href="#{req_id}" title="Permalink to {req_id}: '
            f'{absolute}" aria-label="Permalink to {req_id}">¶</a>'
            f'<button type="button" class="dshkit-req-cite" data-cite="{cite}" hidden '
            f'title="Copy the citation: {html.escape(citation(req_id, version), quote=True)}"'
            f'>cite</button></span>'
        )

    return _STRONG_ID.sub(mark, page_html)


def requirement_search_docs(requirements: Iterable[dict[str, Any]], version: str = SPEC_VERSION,
                            ) -> list[dict[str, Any]]:
    """One search document per requirement of ``requirements.json``, located at its rendered
    anchor, titled by its id and title, boosted above every page section."""
    docs: list[dict[str, Any]] = []
    for req in requirements:
        docs.append({
            "location": f"{page_path(req['file'])}#{req['id']}",
            "title": f"{req['id']} {req['title']}",
            "text": f"{req['id']} ({req['level']}): {req['title']}. "
                    f"Cite as {citation(req['id'], version)}.",
            "boost": REQUIREMENT_BOOST,
        })
    return docs


def add_search_docs(search_index: dict[str, Any], extra: list[dict[str, Any]]) -> dict[str, Any]:
    """The search index with each ``extra`` document placed right after the document of its
    page (Material's search attaches a section to the page document read before it; a section
    whose page is not in the index is dropped). Stale extra documents from an earlier call are
    removed first, so the function is idempotent."""
    locations = {doc["location"] for doc in extra}
    kept = [doc for doc in search_index.get("docs", []) if not (
        doc.get("location") in locations and doc.get("boost") == REQUIREMENT_BOOST)]
    by_page: dict[str, list[dict[str, Any]]] = {}
    for doc in extra:
        by_page.setdefault(doc["location"].split("#", 1)[0], []).append(doc)
    docs: list[dict[str, Any]] = []
    for doc in kept:
        docs.append(doc)
        docs += by_page.pop(doc.get("location", ""), [])
    if by_page:
        missing = ", ".join(sorted(by_page))
        raise SiteError(f"the search index has no page for requirement(s) on: {missing}")
    return {**search_index, "docs": docs}


def schema_site_path(schema_id: str, site_url: str) -> str:
    """The path under the site root at which a schema with this ``$id`` must be served."""
    if not schema_id.startswith(site_url):
        raise SiteError(f"schema $id {schema_id} is not under site_url {site_url}; "
                        "the site cannot serve it at its $id")
    path = schema_id[len(site_url):]
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise SiteError(f"schema $id {schema_id} names no file under {site_url}")
    return path


def publish_schemas(schema_root: Path, site_dir: Path, site_url: str) -> list[str]:
    """Copy every ``*.json`` under ``schema_root`` that has an ``$id`` to the site path the
    ``$id`` names; returns those paths, sorted. Two schemas with one ``$id`` is an error."""
    published: dict[str, Path] = {}
    for path in sorted(schema_root.rglob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise SiteError(f"{path}: not readable JSON ({error})") from error
        schema_id = document.get("$id") if isinstance(document, dict) else None
        if not isinstance(schema_id, str):
            continue
        target = schema_site_path(schema_id, site_url)
        if target in published:
            raise SiteError(f"{path}: $id {schema_id} is also the $id of {published[target]}")
        published[target] = path
        destination = site_dir / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
    return sorted(published)
