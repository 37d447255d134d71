"""MkDocs hooks of the dshkit specification site (``hooks:`` in ``mkdocs.yml``).

The logic lives in ``dshkit.spec_site`` and ``dshkit.spec_version``; this file only wires it to
MkDocs' events: the spec version into ``extra`` and the Markdown, permalinks on requirement
ids, boosted search documents per requirement, and every schema copied to its ``$id`` path.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from dshkit.spec_site import (
    SiteError,
    add_requirement_permalinks,
    add_search_docs,
    embed_changelog,
    publish_schemas,
    requirement_search_docs,
    substitute_version,
)
from dshkit.spec_version import SITE_URL, SPEC_VERSION

ROOT = Path(__file__).resolve().parents[1]


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if config.site_url != SITE_URL:
        raise PluginError(f"mkdocs.yml site_url is {config.site_url!r}; it must be {SITE_URL!r} "
                          "(dshkit.spec_version.SITE_URL, where the schema $ids live)")
    config.extra["spec_version"] = SPEC_VERSION
    return config


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return substitute_version(embed_changelog(markdown, changelog))


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return add_requirement_permalinks(html, page.url, str(config.site_url))


def on_post_build(config: MkDocsConfig) -> None:
    site_dir = Path(config.site_dir)
    index_path = site_dir / "search" / "search_index.json"
    requirements = json.loads((ROOT / "spec" / "requirements.json").read_text(encoding="utf-8"))
    if index_path.is_file():
        index = json.loads(index_path.read_text(encoding="utf-8"))
        extra = requirement_search_docs(requirements["requirements"])
        index_path.write_text(json.dumps(add_search_docs(index, extra), ensure_ascii=False),
                              encoding="utf-8")
    try:
        publish_schemas(ROOT / "schemas", site_dir, str(config.site_url))
    except SiteError as error:
        raise PluginError(str(error)) from error
