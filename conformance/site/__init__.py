"""The compliance site: the kit's published reports (compliance/reports) rendered as static
HTML, one column per implementation, every cell tied to the requirement it checks and to the
note that explains an expected failure. ``dshkit compliance build`` is its command."""

from .build import Built, build_site, render_site, write_site
from .data import SiteError

__all__ = ["Built", "SiteError", "build_site", "render_site", "write_site"]
