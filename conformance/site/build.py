"""Build the compliance site: read the reports, the notes and the vectors, render every page
and badge, and write them under ``out``.

The site's own folders (``impl/``, ``req/``, ``case/``, ``badges/``) are each written to a
fresh temporary folder and renamed into place, its top files each written and renamed, so a
reader never sees half a site and a spec site built into the same folder (its
``compliance/dsh/`` pages) is left alone."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..kitdata import requirements as kit_requirements
from ..vectors import load_cases
from .badges import badge, summary_of
from .data import SiteError, load_reports
from .escape import esc
from .layout import CSS
from .links import SpecLinks
from .notes import load_notes
from .pages import (
    Site,
    case_file,
    case_page,
    implementation_page,
    index_page,
    requirement_page,
    requirements_page,
)

__all__ = ["Built", "build_site", "render_site", "write_site"]

_OWN_DIRS = ("impl", "req", "case", "badges")


@dataclass(frozen=True, slots=True)
class Built:
    out: Path
    implementations: tuple[str, ...]
    pages: int
    badges: int


def render_site(reports: Path, spec: Path | None = None,
                spec_site: str | None = None) -> tuple[Site, dict[str, str]]:
    """Every file of the site, by its path relative to the site's root."""
    notes = load_notes(spec)
    impls, comparisons = load_reports(reports, notes)
    index = kit_requirements()
    links = SpecLinks.of(index.get("requirements", []), spec_site)
    vectors = {case.id: case for case in load_cases()}
    kit = impls[0].report.get("kit") or {}
    footer = (f"Built by dshkit compliance build from {len(impls)} reports of "
              f"{esc(kit.get('name'))} {esc(kit.get('version'))}; specification "
              f"{esc(index.get('specVersion'))}.")
    site = Site.of(impls, comparisons, notes, links, vectors, footer)
    files: dict[str, str] = {"index.html": index_page(site), "style.css": CSS}
    for impl in impls:
        files[f"impl/{impl.slug}.html"] = implementation_page(site, impl)
        value, tone = summary_of(impl.tally())
        files[f"badges/{impl.slug}.svg"] = badge(impl.title, value, tone)
        for capability in site.capabilities():
            value, tone = summary_of(impl.tally(impl.in_capability(capability)))
            files[f"badges/{impl.slug}/{capability}.svg"] = badge(
                f"{impl.name} {capability}", value, tone)
    requirement_ids = [str(e["id"]) for e in index.get("requirements", [])]
    requirement_ids += sorted(set(site.by_requirement) - set(requirement_ids))
    files["req/index.html"] = requirements_page(site, requirement_ids)
    for requirement in requirement_ids:
        files[f"req/{requirement}.html"] = requirement_page(site, requirement)
    for case_id in site.case_ids():
        files[case_file(case_id)] = case_page(site, case_id)
    return site, files


def _write_file(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_site(out: Path, files: Mapping[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for folder in _OWN_DIRS:
        fresh = Path(tempfile.mkdtemp(prefix=f".{folder}.", dir=out))
        try:
            for rel, text in files.items():
                if rel.startswith(folder + "/"):
                    target = fresh / rel[len(folder) + 1:]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text, encoding="utf-8", newline="\n")
            fresh.chmod(0o755)
            old = out / folder
            if old.exists():
                retired = Path(tempfile.mkdtemp(prefix=f".{folder}.old.", dir=out))
                os.replace(old, retired / folder)
                os.replace(fresh, old)
                shutil.rmtree(retired)
            else:
                os.replace(fresh, old)
        except BaseException:
            shutil.rmtree(fresh, ignore_errors=True)
            raise
    for rel, text in files.items():
        if "/" not in rel:
            _write_file(out / rel, text)


def build_site(out: Path, reports: Path, spec: Path | None = None,
               spec_site: str | None = None) -> Built:
    """Render and write the site; :class:`SiteError` when the reports cannot be used, OSError
    when ``out`` cannot be written."""
    site, files = render_site(reports, spec, spec_site)
    write_site(out, files)
    return Built(out, tuple(i.slug for i in site.impls), sum(f.endswith(".html") for f in files),
                 sum(f.endswith(".svg") for f in files))


__all__ += ["SiteError"]
