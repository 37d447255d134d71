"""The version of the dshkit specification and where its rendered pages live.

This is the one place the specification version is written. ``spec_index`` stamps it into
``requirements.json``, the MkDocs hook (``docs_overrides/hooks.py``) puts it on every rendered
page and substitutes it for ``{{ spec_version }}`` in the Markdown, and ``spec_changes`` reads
it to name the changelog section a change belongs to. The tool version (``dshkit.__version__``,
the distribution's version) is a separate number: see ``spec/compatibility.md``.
"""

from __future__ import annotations

from typing import Final

SPEC_VERSION: Final = "0.1.0"

#: The root URL of the rendered specification; ``site_url`` in ``mkdocs.yml`` must equal it
#: (the hook refuses to build otherwise) and every schema ``$id`` lives under it.
SITE_URL: Final = "https://dshkit.dev/"


def citation(requirement_id: str, version: str = SPEC_VERSION) -> str:
    """The one documented citation form: ``dshkit spec 0.1.0, SES-SURF-004``."""
    return f"dshkit spec {version}, {requirement_id}"


def page_path(source: str) -> str:
    """The rendered path (relative to :data:`SITE_URL`) of a Markdown source path, with
    MkDocs' directory URLs: ``session/surface.md`` -> ``session/surface/``,
    ``memory/index.md`` -> ``memory/``, ``index.md`` -> ``''``."""
    stem = source[:-3] if source.endswith(".md") else source
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def requirement_url(source: str, requirement_id: str, site_url: str = SITE_URL) -> str:
    """The absolute rendered URL of a requirement: ``https://dshkit.dev/session/surface/#SES-SURF-004``."""
    return f"{site_url}{page_path(source)}#{requirement_id}"
